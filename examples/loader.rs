//! A bare-metal-style loader: walks one generation's engines for one flavor and places each
//! engine's IRAM / DRAM / SRAM / EXTRAM image into a simulated device memory map.
//!
//! The loading itself (`load_engine`) uses only `core`: fixed windows, slices, no allocation.
//!
//! ```text
//! cargo run --example loader                   # CAYMAN, PERF
//! cargo run --example loader -- MAVERICK test  # any generation, perf|debug|test|dkl-perf|…
//! ```

use nrtucode::{Failure, Flavor, Generation, ImageIndex, NoEnv, Region, Request, SlotId};

/// Bytes reserved per (engine slot, region) window in the simulated device.
const WINDOW: usize = 0x4_0000;
/// Device address of the first window.
const DEVICE_BASE: u32 = 0x1000_0000;

/// What happened to one region of one engine.
enum Placement {
    Loaded { address: u32, len: usize },
    Empty,
    TooLarge(usize),
    Absent(Failure),
}

/// Copies the four regions of `idx` into `memory` (a 4-window slice for this engine).
fn load_engine(idx: ImageIndex, flavor: Flavor, memory: &mut [u8], base: u32) -> [Placement; 4] {
    Region::ALL.map(|region| {
        let offset = region as usize * WINDOW;
        match Request::typed_image(idx, region, flavor).resolve(&NoEnv) {
            Ok([]) => Placement::Empty,
            Ok(image) => match memory.get_mut(offset..offset + image.len()) {
                Some(window) if image.len() <= WINDOW => {
                    window.copy_from_slice(image);
                    Placement::Loaded {
                        address: base + offset as u32,
                        len: image.len(),
                    }
                }
                _ => Placement::TooLarge(image.len()),
            },
            Err(failure) => Placement::Absent(failure),
        }
    })
}

fn parse_args() -> Result<(Generation, Flavor), nrtucode::ParseError> {
    let mut args = std::env::args().skip(1);
    let generation = match args.next() {
        None => Generation::Cayman,
        Some(name) => name.parse()?,
    };
    let flavor = match args.next() {
        None => Flavor::Perf,
        Some(name) => name.parse()?,
    };
    Ok((generation, flavor))
}

fn main() -> std::process::ExitCode {
    let (generation, flavor) = match parse_args() {
        Ok(choice) => choice,
        Err(message) => {
            eprintln!("loader: {message}");
            return std::process::ExitCode::from(64); // EX_USAGE
        }
    };
    let slots: Vec<(ImageIndex, SlotId)> = generation
        .slots()
        .iter()
        .filter_map(|idx| idx.slot().map(|id| (*idx, id)))
        .collect();
    let mut device = vec![0u8; slots.len() * 4 * WINDOW];
    println!(
        "{} {} images into a {} KiB device map at {DEVICE_BASE:#x}",
        generation.name(),
        flavor.variant_name(generation),
        device.len() / 1024
    );
    println!(
        "{:>3}  {:<8} {:<6} {:>8}  {:<10}  first bytes",
        "idx", "engine", "region", "size", "address"
    );
    let mut loaded = 0usize;
    for (n, (idx, id)) in slots.iter().enumerate() {
        let window = &mut device[n * 4 * WINDOW..(n + 1) * 4 * WINDOW];
        let base = DEVICE_BASE + (n * 4 * WINDOW) as u32;
        let placements = load_engine(*idx, flavor, window, base);
        let engine = format!("{} {}", id.class.name(), id.engine.name());
        for (region, placement) in Region::ALL.into_iter().zip(placements) {
            let (size, address, preview) = match placement {
                Placement::Loaded { address, len } => {
                    loaded += len;
                    let at = (address - base) as usize;
                    let first = &window[at..at + len.min(24)];
                    (
                        len.to_string(),
                        format!("{address:#010x}"),
                        preview_of(first),
                    )
                }
                Placement::Empty => ("0".into(), "-".into(), "(boundary cursor)".into()),
                Placement::TooLarge(len) => (
                    len.to_string(),
                    "-".into(),
                    format!("larger than the {WINDOW:#x}-byte window: not placed"),
                ),
                Placement::Absent(failure) => ("-".into(), "-".into(), failure.to_string()),
            };
            println!(
                "{:>3}  {engine:<8} {:<6} {size:>8}  {address:<10}  {preview}",
                idx.raw(),
                region.name()
            );
        }
    }
    println!("{loaded} bytes placed");
    std::process::ExitCode::SUCCESS
}

/// Printable ASCII as is, other bytes as `.`, plus the hex of the first eight.
fn preview_of(bytes: &[u8]) -> String {
    let hex: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let text: String = bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        })
        .collect();
    format!("{} |{text}|", hex.join(" "))
}
