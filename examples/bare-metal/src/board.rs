//! What differs between the real board and QEMU: the defmt transport and what happens when the
//! loader is done. The program and its memory windows are the same.
//!
//! - Board (default): defmt over RTT (read by a debug probe), then the core sleeps.
//! - Feature `qemu`: defmt over semihosting (QEMU writes the frames to a file or its stdout, and
//!   `defmt-print` decodes them), then the emulator exits with status 0 if every image loaded
//!   and 1 otherwise (feature `update`: 4 when an update was refused and the previous partition
//!   runs). A fault exits with status 3 instead of spinning, so CI never hangs.

#[cfg(not(feature = "qemu"))]
use defmt_rtt as _; // the global defmt logger

#[cfg(feature = "qemu")]
use defmt_semihosting as _; // the global defmt logger

/// How the loader ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every image of the engine was copied and verified.
    Loaded,
    /// At least one image was not.
    Failed,
    /// Feature `update`: an update was offered and refused; the previous partition still boots
    /// and every image of it loaded.
    #[cfg(feature = "update")]
    Kept,
}

/// Ends the program: on a board the core sleeps (the engine is started from here, or the host
/// is told); under QEMU the emulator exits with the outcome as its status.
pub fn finish(outcome: Outcome) -> ! {
    #[cfg(feature = "qemu")]
    semihosting::process::exit(match outcome {
        Outcome::Loaded => 0,
        Outcome::Failed => 1,
        #[cfg(feature = "update")]
        Outcome::Kept => 4,
    });
    #[cfg(not(feature = "qemu"))]
    {
        let _ = outcome;
        loop {
            cortex_m::asm::wfi();
        }
    }
}

/// A system reset (`SYSRESETREQ`): the program starts again from the reset vector. QEMU keeps
/// the RAM's contents across it (it writes again what `-kernel` and `-device loader` loaded:
/// the program, slot A and the download area, none of which the update cases change), so the
/// emulated flash of feature `update` survives it as a board's flash does.
#[cfg(feature = "update")]
pub fn reset() -> ! {
    cortex_m::peripheral::SCB::sys_reset()
}

/// The panic handler: no formatting machinery. On a board, a fault the debugger shows at the
/// panicking frame; under QEMU, exit status 2.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    #[cfg(feature = "qemu")]
    semihosting::process::exit(2);
    #[cfg(not(feature = "qemu"))]
    cortex_m::asm::udf()
}

/// Under QEMU a hard fault ends the run with status 3 rather than cortex-m-rt's endless loop.
/// `unsafe fn` because cortex-m-rt's `#[exception]` requires that signature for `HardFault`
/// (only the runtime calls it, on a fault); the body does nothing unsafe.
#[cfg(feature = "qemu")]
#[cortex_m_rt::exception]
unsafe fn HardFault(_: &cortex_m_rt::ExceptionFrame) -> ! {
    semihosting::process::exit(3)
}
