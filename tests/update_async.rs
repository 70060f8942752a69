//! Features `async`, `update` and `mem-flash`: the async updater (`Slots::new(Async(flash), ..)`)
//! over an `embedded-storage-async` flash that suspends before every read, erase and write (its
//! future is pending once, then ready), run by a small executor that polls only when woken.
//! The same script runs on the blocking updater over the same bytes: a boot, a full install, a
//! trial boot, a confirmation, a delta package cut halfway and resumed, its trial boot; after
//! every step both flashes hold the same bytes and journaled the same operations, and the async
//! one was suspended at each of them.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use embedded_storage::nor_flash::NorFlash as _;
use nrtucode::partition::TableClass;
use nrtucode::update::mem_flash::{MemFlash, MemFlashError};
use nrtucode::update::package::HEADER_LEN;
use nrtucode::update::{Async, AsyncMappedFlash, MappedFlash, Slot, Slots, State};
use nrtucode_pack::{Blobs, PackOptions, SigningKey, pack, update_package};

mod partitions;
use partitions::{rewrite, two_slots};

type Qspi = MemFlash<1, 4, 4096>;

// ---------------------------------------------------------------------------------------------
// An executor and an async flash.

/// Sets its flag when woken.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Runs `future` to its end: polls it, then polls again only once it woke its waker (a future
/// pending without a wake would hang the test: never the case here). The number of times it
/// was pending, and its output.
fn run<T>(future: impl Future<Output = T>) -> (usize, T) {
    let flag = Arc::new(Flag(AtomicBool::new(true)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    let mut pending = 0;
    loop {
        assert!(
            flag.0.swap(false, Ordering::SeqCst),
            "polled without a wake"
        );
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return (pending, out),
            Poll::Pending => pending += 1,
        }
    }
}

/// Pending once (after waking its waker), then ready: a driver waiting for its hardware.
struct Suspend(bool);

impl Future for Suspend {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// The in-memory NOR flash behind an async driver that suspends before each operation.
struct AsyncMem(Qspi);

impl embedded_storage_async::nor_flash::ErrorType for AsyncMem {
    type Error = MemFlashError;
}

impl embedded_storage_async::nor_flash::ReadNorFlash for AsyncMem {
    const READ_SIZE: usize = 1;

    async fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MemFlashError> {
        Suspend(false).await;
        embedded_storage::nor_flash::ReadNorFlash::read(&mut self.0, offset, bytes)
    }

    fn capacity(&self) -> usize {
        embedded_storage::nor_flash::ReadNorFlash::capacity(&self.0)
    }
}

impl embedded_storage_async::nor_flash::NorFlash for AsyncMem {
    const WRITE_SIZE: usize = 4;
    const ERASE_SIZE: usize = 4096;

    async fn erase(&mut self, from: u32, to: u32) -> Result<(), MemFlashError> {
        Suspend(false).await;
        self.0.erase(from, to)
    }

    async fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MemFlashError> {
        Suspend(false).await;
        self.0.write(offset, bytes)
    }
}

impl AsyncMappedFlash for AsyncMem {
    fn mapped(&self) -> &[u8] {
        MappedFlash::mapped(&self.0)
    }
}

// ---------------------------------------------------------------------------------------------
// The script, on both.

/// Front partitions of blobs an eighth of the fixtures' (distinct by their entry number): the
/// factory one (counter 1), a full update (counter 2), and the same with three blobs changed
/// (counter 3), delivered as a delta package from the second.
fn partitions() -> (Vec<u8>, Vec<u8>, Vec<u8>, SigningKey) {
    let key = SigningKey::from_pem(include_str!("../keys/test-ed25519.pem")).unwrap();
    let options = PackOptions {
        security_counter: 1,
        key: Some(&key),
    };
    let fixtures = pack(&Blobs::fixtures(TableClass::Front), &options).unwrap();
    let part = |counter: u32, changed: &[usize]| {
        rewrite(&fixtures, counter, &key, |n, bytes| {
            let mut b = bytes[..(bytes.len() / 8).max(1)].to_vec();
            b.extend((n as u16).to_le_bytes());
            if changed.contains(&n) {
                b[0] ^= 0xa5;
            }
            b
        })
    };
    (part(1, &[]), part(2, &[]), part(3, &[10, 20, 30]), key)
}

#[test]
fn the_async_updater_does_what_the_blocking_one_does_awaiting_every_flash_operation() {
    let (p1, p2, p3, key) = partitions();
    let package = update_package(&p2, &p3).unwrap();
    let slot_len = p1.len().max(p2.len()).max(p3.len()).next_multiple_of(4096);
    let public = nrtucode::partition::PublicKey::from_bytes(*key.public_key().as_bytes());
    let config = two_slots(slot_len, public, TableClass::Front);
    let mut factory = Qspi::erased(2 * slot_len + 2 * 4096);
    let mut image = p1.clone();
    image.resize(p1.len().next_multiple_of(4), 0xff);
    factory.write(0, &image).unwrap();
    let mut blocking = Slots::new(Qspi::new(factory.bytes().to_vec()), config).unwrap();
    let mut suspending =
        Slots::new(Async(AsyncMem(Qspi::new(factory.bytes().to_vec()))), config).unwrap();

    // Each step on both; the blocking one's outcome (slot and state, as text) must be the
    // async one's, and so must the flash's bytes and journal.
    let mut suspended = 0;
    let mut same = |step: &str,
                    b: String,
                    (pending, a): (usize, String),
                    blocking: &Slots<Qspi>,
                    suspending: &Slots<Async<AsyncMem>>| {
        assert_eq!(b, a, "{step}");
        let (bf, af) = (blocking.flash(), &suspending.flash().0.0);
        assert!(bf.bytes() == af.bytes(), "{step}: the flashes differ");
        assert_eq!(bf.journal(), af.journal(), "{step}: other operations");
        suspended += pending;
        println!("{step}: {b} (the async driver suspended {pending} times)");
    };

    let b = blocking.boot().map(|b| (b.slot, b.state));
    let a = run(async { suspending.boot().await.map(|b| (b.slot, b.state)) });
    same(
        "boot",
        format!("{b:?}"),
        (a.0, format!("{:?}", a.1)),
        &blocking,
        &suspending,
    );

    let b = install_blocking(&mut blocking, &p2);
    let a = run(install_async(&mut suspending, &p2));
    same(
        "install",
        format!("{b:?}"),
        (a.0, format!("{:?}", a.1)),
        &blocking,
        &suspending,
    );

    let b = blocking.boot().map(|b| (b.slot, b.state));
    let a = run(async { suspending.boot().await.map(|b| (b.slot, b.state)) });
    assert_eq!(
        b.as_ref().map(|(s, st)| (*s, st.is_trial())),
        Ok((Slot::B, true))
    );
    same(
        "trial boot",
        format!("{b:?}"),
        (a.0, format!("{:?}", a.1)),
        &blocking,
        &suspending,
    );

    let b = blocking.confirm(Slot::B);
    let a = run(async { suspending.confirm(Slot::B).await });
    same(
        "confirm",
        format!("{b:?}"),
        (a.0, format!("{:?}", a.1)),
        &blocking,
        &suspending,
    );

    // The package, to halfway through what follows its signed prefix, then the link drops; a
    // resume takes the rest.
    let prefix = nrtucode::update::package::PackageHeader::parse(&package)
        .unwrap()
        .prefix_len as usize;
    let half = (HEADER_LEN + prefix + package.len()) / 2;
    let b = {
        let mut install = blocking.install_package().unwrap();
        install.write(&package[..half]).map(|()| install.offset())
    };
    let a = run(async {
        let mut install = suspending.install_package().await.unwrap();
        install
            .write(&package[..half])
            .await
            .map(|()| install.offset())
    });
    same(
        "half a package",
        format!("{b:?}"),
        (a.0, format!("{:?}", a.1)),
        &blocking,
        &suspending,
    );

    let b = resume_blocking(&mut blocking, &package);
    let a = run(resume_async(&mut suspending, &package));
    assert!(
        b.as_ref()
            .is_ok_and(|(from, _)| *from as usize > HEADER_LEN),
        "{b:?}"
    );
    same(
        "resumed package",
        format!("{b:?}"),
        (a.0, format!("{:?}", a.1)),
        &blocking,
        &suspending,
    );

    let b = blocking
        .boot()
        .map(|b| (b.slot, b.partition.partition().bytes() == &p3[..]));
    let a = run(async {
        let booted = suspending.boot().await;
        booted.map(|b| (b.slot, b.partition.partition().bytes() == &p3[..]))
    });
    assert_eq!(b, Ok((Slot::A, true)));
    same(
        "the package's trial boot",
        format!("{b:?}"),
        (a.0, format!("{:?}", a.1)),
        &blocking,
        &suspending,
    );
    assert!(
        suspended >= blocking.flash().journal().len(),
        "{suspended} suspensions"
    );
}

fn install_blocking(slots: &mut Slots<Qspi>, bytes: &[u8]) -> Result<State, String> {
    let mut install = slots.install().map_err(|e| e.to_string())?;
    for chunk in bytes.chunks(777) {
        install.write(chunk).map_err(|e| e.to_string())?;
    }
    install.finish().map_err(|e| e.to_string())
}

async fn install_async(slots: &mut Slots<Async<AsyncMem>>, bytes: &[u8]) -> Result<State, String> {
    let mut install = slots.install().await.map_err(|e| e.to_string())?;
    for chunk in bytes.chunks(777) {
        install.write(chunk).await.map_err(|e| e.to_string())?;
    }
    install.finish().await.map_err(|e| e.to_string())
}

fn resume_blocking(slots: &mut Slots<Qspi>, package: &[u8]) -> Result<(u64, State), String> {
    let mut install = (slots.resume_package(&package[..HEADER_LEN])).map_err(|e| e.to_string())?;
    let from = install.offset();
    for chunk in package[from as usize..].chunks(999) {
        install.write(chunk).map_err(|e| e.to_string())?;
    }
    install
        .finish()
        .map(|s| (from, s))
        .map_err(|e| e.to_string())
}

async fn resume_async(
    slots: &mut Slots<Async<AsyncMem>>,
    package: &[u8],
) -> Result<(u64, State), String> {
    let mut install =
        (slots.resume_package(&package[..HEADER_LEN]).await).map_err(|e| e.to_string())?;
    let from = install.offset();
    for chunk in package[from as usize..].chunks(999) {
        install.write(chunk).await.map_err(|e| e.to_string())?;
    }
    install
        .finish()
        .await
        .map(|s| (from, s))
        .map_err(|e| e.to_string())
}
