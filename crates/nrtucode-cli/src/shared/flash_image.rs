//! The flash image of an update region (`provision` writes one, `inspect --layout` reads one):
//! where the slots and the state are ([`FlashMap`], from a layout file or flags), checked and
//! read by the core's own code for a geometry given at run time
//! ([`nrtucode::update::image::FlashImage`] over the image's bytes, the state records by
//! [`nrtucode::update::record`]), so that every byte of the state is the device's by
//! construction, not a second encoder's.
//!
//! The image is the flash from the layout's lowest region to the end of its highest one: a
//! programmer writes it at that flash offset (the layout's [`FlashMap::image_offset`]), and
//! nothing below it is touched. Inside the image, the core works on the layout rebased to the
//! image's start: every offset is a multiple of `ERASE_SIZE`, a partition reads itself through
//! offsets relative to its own start, and a state record holds no address, so the bytes are
//! the same as at the real offsets. The tests compare its images with an install over a flash
//! of the device's exact sizes.

use std::path::{Path, PathBuf};

use clap::Args;
use nrtucode::update::image::FlashImage;
use nrtucode::update::record::Geometry;
use nrtucode::update::{Layout, Slot, UpdateError};

use crate::shared::error::Error;
use crate::shared::exit::Exit;
use crate::shared::input;

/// The largest image handled: 1 GiB, as the largest partition file read (the bound the input
/// reader reads an image up to).
pub(crate) const MAX_IMAGE_BYTES: u64 = input::FLASH_IMAGE.max;

/// The supported `ERASE_SIZE`s: powers of two from 64 B to 256 KiB.
const ERASE_SIZES: std::ops::RangeInclusive<u32> = 64..=256 * 1024;

/// `--layout FILE`, or the layout as flags.
#[derive(Clone, Debug, Default, Args)]
pub(crate) struct LayoutArgs {
    /// The update region's layout file: lines KEY = VALUE (slot_a, slot_b, slot_len, state,
    /// erase_size, write_size; optional read_size, state_len, erased, flash_base), offsets from
    /// the start of the NorFlash the firmware hands to Slots::new, in decimal, 0x hex, or with
    /// a K or M suffix; # starts a comment (docs/update.md, "Provisioning").
    #[arg(long, value_name = "FILE", help_heading = "Layout")]
    pub layout: Option<PathBuf>,
    /// Offset of slot A in the flash (instead of --layout).
    #[arg(long, value_name = "OFFSET", value_parser = parse_number, conflicts_with = "layout", help_heading = "Layout")]
    pub slot_a_offset: Option<u64>,
    /// Offset of slot B.
    #[arg(long, value_name = "OFFSET", value_parser = parse_number, conflicts_with = "layout", help_heading = "Layout")]
    pub slot_b_offset: Option<u64>,
    /// Bytes of each slot.
    #[arg(long, value_name = "BYTES", value_parser = parse_number, conflicts_with = "layout", help_heading = "Layout")]
    pub slot_len: Option<u64>,
    /// Offset of the state's two erase sectors.
    #[arg(long, value_name = "OFFSET", value_parser = parse_number, conflicts_with = "layout", help_heading = "Layout")]
    pub state_offset: Option<u64>,
    /// The flash's ERASE_SIZE (a power of two, 64 B to 256 KiB).
    #[arg(long, value_name = "BYTES", value_parser = parse_number, conflicts_with = "layout", help_heading = "Layout")]
    pub erase_size: Option<u64>,
    /// The flash's WRITE_SIZE (1, 2, 4, 8, 16 or 32).
    #[arg(long, value_name = "BYTES", value_parser = parse_number, conflicts_with = "layout", help_heading = "Layout")]
    pub write_size: Option<u64>,
    /// The flash's READ_SIZE (1, 2, 4, 8, 16 or 32; default 1).
    #[arg(long, value_name = "BYTES", value_parser = parse_number, conflicts_with = "layout", help_heading = "Layout")]
    pub read_size: Option<u64>,
}

impl LayoutArgs {
    /// Whether any layout option was given (`inspect` then reads a flash image).
    pub(crate) fn given(&self) -> bool {
        self.layout.is_some()
            || [
                self.slot_a_offset,
                self.slot_b_offset,
                self.slot_len,
                self.state_offset,
                self.erase_size,
                self.write_size,
                self.read_size,
            ]
            .iter()
            .any(Option::is_some)
    }

    /// The layout these options give, checked ([`FlashMap::check`]). A layout file's faults
    /// are bad data (65), the flags' bad arguments (64).
    pub(crate) fn load(&self) -> Result<FlashMap, Error> {
        self.load_with(FlashMap::check)
    }

    /// The layout these options give, checked by `check` (a layout file's faults are bad data,
    /// 65; the flags' bad arguments, 64).
    pub(crate) fn load_with(
        &self,
        check: impl FnOnce(RawMap) -> Result<FlashMap, String>,
    ) -> Result<FlashMap, Error> {
        let Some(path) = &self.layout else {
            let mut keys = Keys::default();
            let flags = [
                ("slot_a", self.slot_a_offset, "--slot-a-offset"),
                ("slot_b", self.slot_b_offset, "--slot-b-offset"),
                ("slot_len", self.slot_len, "--slot-len"),
                ("state", self.state_offset, "--state-offset"),
                ("erase_size", self.erase_size, "--erase-size"),
                ("write_size", self.write_size, "--write-size"),
                ("read_size", self.read_size, "--read-size"),
            ];
            let missing: Vec<&str> = flags
                .iter()
                .filter(|(key, value, _)| value.is_none() && *key != "read_size")
                .map(|(_, _, flag)| *flag)
                .collect();
            if !missing.is_empty() {
                return Err(Error::new(
                    Exit::Usage,
                    format_args!(
                        "the layout needs {} too (or --layout FILE)",
                        missing.join(", ")
                    ),
                ));
            }
            for (key, value, _) in flags {
                if let Some(value) = value {
                    keys.set(key, value);
                }
            }
            return keys.map().and_then(check).map_err(|e| self.fault(e));
        };
        let text = read_layout_file(path)?;
        parse_layout(&text)
            .and_then(check)
            .map_err(|e| self.fault(e))
    }

    /// A fault of the layout these options give: in a layout file, bad data (65); in the
    /// flags, a bad argument (64).
    pub(crate) fn fault(&self, e: String) -> Error {
        match &self.layout {
            Some(path) => Error::new(Exit::DataErr, format_args!("{}: {e}", path.display())),
            None => Error::new(Exit::Usage, format_args!("layout: {e}")),
        }
    }
}

/// A number as a layout takes it: decimal or `0x` hex, `_` between digits, an optional `K`
/// (KiB) or `M` (MiB) suffix.
pub(crate) fn parse_number(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, scale) = match t.as_bytes().last() {
        Some(b'K' | b'k') => (&t[..t.len() - 1], 1024u64),
        Some(b'M' | b'm') => (&t[..t.len() - 1], 1024 * 1024),
        _ => (t, 1),
    };
    let digits = digits.replace('_', "");
    let value = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => digits.parse::<u64>(),
    }
    .map_err(|_| format!("{text:?} is not a number (decimal, 0x hex, K or M suffix)"))?;
    value
        .checked_mul(scale)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// Reads the layout file at `path`: at most 16 KiB of UTF-8 ([`input::LAYOUT`]), noted as an
/// input (no output may overwrite it).
fn read_layout_file(path: &Path) -> Result<String, Error> {
    input::read_text(path, input::LAYOUT)
}

/// The keys of a layout, as given.
#[derive(Clone, Debug, Default)]
struct Keys(Vec<(&'static str, u64)>);

/// Every key a layout file may hold, the required ones first.
const KEYS: [&str; 10] = [
    "slot_a",
    "slot_b",
    "slot_len",
    "state",
    "erase_size",
    "write_size",
    "read_size",
    "state_len",
    "erased",
    "flash_base",
];
const REQUIRED: usize = 6;

impl Keys {
    fn set(&mut self, key: &'static str, value: u64) {
        self.0.push((key, value));
    }

    fn get(&self, key: &str) -> Option<u64> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The map these keys give, before its checks.
    fn map(&self) -> Result<RawMap, String> {
        let missing: Vec<&str> = KEYS[..REQUIRED]
            .iter()
            .copied()
            .filter(|k| self.get(k).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(format!("missing {}", missing.join(", ")));
        }
        let get = |k: &str| self.get(k).unwrap_or(0);
        Ok(RawMap {
            slot_a: get("slot_a"),
            slot_b: get("slot_b"),
            slot_len: get("slot_len"),
            state: get("state"),
            erase_size: get("erase_size"),
            write_size: get("write_size"),
            read_size: self.get("read_size").unwrap_or(1),
            state_len: self.get("state_len"),
            erased: self.get("erased"),
            flash_base: self.get("flash_base"),
        })
    }
}

/// A layout file's text, parsed (not yet checked).
pub(crate) fn parse_layout(text: &str) -> Result<RawMap, String> {
    let mut keys = Keys::default();
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {line_no}: {line:?} is not KEY = VALUE"));
        };
        let (key, value) = (key.trim(), value.trim());
        let Some(known) = KEYS.iter().copied().find(|k| *k == key) else {
            return Err(format!(
                "line {line_no}: unknown key {key:?} (the keys: {})",
                KEYS.join(", ")
            ));
        };
        if keys.get(known).is_some() {
            return Err(format!("line {line_no}: {key} is given twice"));
        }
        let value = parse_number(value).map_err(|e| format!("line {line_no}: {key}: {e}"))?;
        keys.set(known, value);
    }
    keys.map()
}

/// A layout as given, every number still a `u64`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawMap {
    slot_a: u64,
    slot_b: u64,
    slot_len: u64,
    state: u64,
    erase_size: u64,
    write_size: u64,
    read_size: u64,
    state_len: Option<u64>,
    erased: Option<u64>,
    flash_base: Option<u64>,
}

/// The update region's layout and the flash's geometry, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FlashMap {
    /// The offsets in the flash the firmware hands to `Slots::new`.
    pub layout: Layout,
    /// `ERASE_SIZE`.
    pub erase_size: u32,
    /// `WRITE_SIZE`.
    pub write_size: u32,
    /// `READ_SIZE`.
    pub read_size: u32,
    /// The CPU address of flash offset 0, if given (for the programmer's hint).
    pub flash_base: Option<u64>,
}

impl FlashMap {
    /// The checks the core cannot make on a layout of `u64`s ([`shape`](Self::shape)), then the
    /// core's own ([`check_layout`](Self::check_layout)). Nothing is allocated.
    pub(crate) fn check(raw: RawMap) -> Result<FlashMap, String> {
        let map = Self::shape(raw)?;
        map.check_layout()?;
        Ok(map)
    }

    /// The checks the core cannot make on a layout of `u64`s: sizes, offsets below 4 GiB, a
    /// span of at most [`MAX_IMAGE_BYTES`], alignment. Nothing is allocated.
    pub(crate) fn shape(raw: RawMap) -> Result<FlashMap, String> {
        let pow2 = |what: &str, v: u64, range: std::ops::RangeInclusive<u32>| {
            let ok = u32::try_from(v)
                .ok()
                .filter(|v| v.is_power_of_two() && range.contains(v));
            ok.ok_or_else(|| {
                format!(
                    "{what} {v} is not supported: a power of two from {} to {}",
                    range.start(),
                    range.end()
                )
            })
        };
        let erase_size = pow2("erase_size", raw.erase_size, ERASE_SIZES)?;
        let write_size = pow2("write_size", raw.write_size, 1..=32)?;
        let read_size = pow2("read_size", raw.read_size, 1..=32)?;
        if let Some(erased) = raw.erased.filter(|e| *e != 0xff) {
            return Err(format!(
                "erased = {erased:#x}: the update format needs a NOR flash whose erased bytes read 0xff"
            ));
        }
        let state_len = u64::from(erase_size) * 2;
        if let Some(given) = raw.state_len.filter(|l| *l != state_len) {
            return Err(format!(
                "state_len = {given:#x}: the state is two erase sectors, {state_len:#x} bytes"
            ));
        }
        let offset = |what: &str, v: u64| {
            u32::try_from(v).map_err(|_| format!("{what} {v:#x} is beyond a 32-bit flash offset"))
        };
        let layout = Layout {
            slot_a: offset("slot_a", raw.slot_a)?,
            slot_b: offset("slot_b", raw.slot_b)?,
            slot_len: offset("slot_len", raw.slot_len)?,
            state: offset("state", raw.state)?,
        };
        let map = FlashMap {
            layout,
            erase_size,
            write_size,
            read_size,
            flash_base: raw.flash_base,
        };
        let (start, end) = map.span();
        if end.saturating_sub(start) > MAX_IMAGE_BYTES {
            return Err(format!(
                "the region spans {:#x} bytes, more than the {MAX_IMAGE_BYTES:#x} an image may have",
                end.saturating_sub(start)
            ));
        }
        // Alignment first, with the offending value named (the core's rule says which rule,
        // not which value).
        for (what, v) in [
            ("slot_a", layout.slot_a),
            ("slot_b", layout.slot_b),
            ("slot_len", layout.slot_len),
            ("state", layout.state),
        ] {
            if !v.is_multiple_of(erase_size) {
                return Err(format!(
                    "{what} {v:#x} is not a multiple of erase_size {erase_size:#x}"
                ));
            }
        }
        Ok(map)
    }

    /// The core's own check of this layout, `Slots::new`'s ([`Layout::check`]) for a flash of
    /// this geometry as large as the image, whose rule is quoted.
    pub(crate) fn check_layout(&self) -> Result<(), String> {
        let layout = self.layout;
        let rebased = self.rebased().ok_or("the layout's offsets do not add up")?;
        let len = usize::try_from(self.image_len()).map_err(|_| "the image is too large")?;
        rebased
            .check(self.geometry(), len)
            .map(|_| ())
            .map_err(|rule| format!("{rule} (slot_a {:#x}, slot_b {:#x}, slot_len {:#x}, state {:#x} and {:#x} bytes of state)", layout.slot_a, layout.slot_b, layout.slot_len, layout.state, self.state_len()))
    }

    /// The flash's geometry, as the core takes it.
    pub(crate) fn geometry(&self) -> Geometry {
        Geometry {
            read_size: self.read_size as usize,
            write_size: self.write_size as usize,
            erase_size: self.erase_size as usize,
        }
    }

    /// Bytes of the state: two erase sectors.
    pub(crate) fn state_len(&self) -> u64 {
        u64::from(self.erase_size) * 2
    }

    /// The flash offsets the image covers: from the lowest region's start to the highest
    /// region's end.
    pub(crate) fn span(&self) -> (u64, u64) {
        let l = self.layout;
        let regions = [
            (u64::from(l.slot_a), u64::from(l.slot_len)),
            (u64::from(l.slot_b), u64::from(l.slot_len)),
            (u64::from(l.state), self.state_len()),
        ];
        let start = regions.iter().map(|(s, _)| *s).min().unwrap_or(0);
        let end = regions.iter().map(|(s, n)| s + n).max().unwrap_or(0);
        (start, end)
    }

    /// The flash offset the image starts at.
    pub(crate) fn image_offset(&self) -> u64 {
        self.span().0
    }

    /// Bytes of the image.
    pub(crate) fn image_len(&self) -> u64 {
        let (start, end) = self.span();
        end - start
    }

    /// The layout rebased to the image's start.
    pub(crate) fn rebased(&self) -> Option<Layout> {
        let start = u32::try_from(self.image_offset()).ok()?;
        let l = self.layout;
        Some(Layout {
            slot_a: l.slot_a.checked_sub(start)?,
            slot_b: l.slot_b.checked_sub(start)?,
            slot_len: l.slot_len,
            state: l.state.checked_sub(start)?,
        })
    }
}

/// `e`, the error of a boot over `image`, with each slot's reason when neither verifies (the
/// core's error names no reason: it stays four words on the device).
pub(crate) fn boot_error(
    image: &FlashImage<'_>,
    e: &UpdateError<std::convert::Infallible>,
) -> String {
    match e {
        UpdateError::NoBootableSlot => {
            let min = image.state().min_security_counter;
            let why = |slot| {
                (image.check_slot(slot, min))
                    .err()
                    .map_or_else(|| "checks".to_owned(), |r| r.to_string())
            };
            format!("{e}: A: {}; B: {}", why(Slot::A), why(Slot::B))
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QSPI: &str = "\
# QSPI NOR, 4 KiB sectors
slot_a     = 0x000000
slot_b     = 0x100000   # 1 MiB
slot_len   = 1M
state      = 0x200000
erase_size = 4K
write_size = 4
";

    #[test]
    fn a_layout_file_parses_and_is_checked() {
        let map = parse_layout(QSPI).and_then(FlashMap::check).unwrap();
        assert_eq!(
            map.layout,
            Layout {
                slot_a: 0,
                slot_b: 0x10_0000,
                slot_len: 0x10_0000,
                state: 0x20_0000
            }
        );
        assert_eq!(
            (map.erase_size, map.write_size, map.read_size),
            (4096, 4, 1)
        );
        assert_eq!(map.span(), (0, 0x20_2000));
    }

    #[test]
    fn a_layout_above_offset_0_is_rebased() {
        let text = QSPI.replace("0x000000", "0x300000");
        let map = parse_layout(&text).and_then(FlashMap::check).unwrap();
        assert_eq!(map.span(), (0x10_0000, 0x40_0000));
        assert_eq!(
            map.rebased(),
            Some(Layout {
                slot_a: 0x20_0000,
                slot_b: 0,
                slot_len: 0x10_0000,
                state: 0x10_0000
            })
        );
    }

    #[test]
    fn every_bad_layout_is_refused_with_its_reason() {
        for (change, want) in [
            (
                ("slot_len   = 1M", "slot_len = 0x100800"),
                "slot_len 0x100800 is not a multiple of erase_size 0x1000",
            ),
            (
                ("slot_b     = 0x100000", "slot_b = 0x80000"),
                "must not overlap",
            ),
            (
                ("state      = 0x200000", "state = 0x1ff000"),
                "must not overlap",
            ),
            (
                ("erase_size = 4K", "erase_size = 3000"),
                "erase_size 3000 is not supported",
            ),
            (
                ("write_size = 4", "write_size = 64"),
                "write_size 64 is not supported",
            ),
            (
                ("write_size = 4", "write_size = 4\nwrite_size = 8"),
                "line 8: write_size is given twice",
            ),
            (
                ("write_size = 4", "write_size = 4\nerased = 0"),
                "erased = 0x0",
            ),
            (
                ("write_size = 4", "write_size = 4\nstate_len = 4K"),
                "the state is two erase sectors",
            ),
            (
                ("write_size = 4", "write_size = 4\nslot_c = 0"),
                "unknown key \"slot_c\"",
            ),
            (("write_size = 4", "write_size four"), "is not KEY = VALUE"),
            (
                ("write_size = 4", "write_size = four"),
                "\"four\" is not a number",
            ),
            (("write_size = 4", ""), "missing write_size"),
            (
                ("slot_b     = 0x100000", "slot_b = 0x100000000"),
                "beyond a 32-bit flash offset",
            ),
        ] {
            let text = QSPI.replace(change.0, change.1);
            let e = parse_layout(&text)
                .and_then(FlashMap::check)
                .expect_err(change.1);
            assert!(e.contains(want), "{change:?}: {e}");
        }
    }

    #[test]
    fn numbers_take_hex_suffixes_and_underscores() {
        assert_eq!(parse_number("0x10_0000"), Ok(0x10_0000));
        assert_eq!(parse_number("64K"), Ok(65536));
        assert_eq!(parse_number("2M"), Ok(2 << 20));
        assert_eq!(parse_number(" 12 "), Ok(12));
        assert!(parse_number("0x").is_err());
        assert!(parse_number("-1").is_err());
        assert!(parse_number("18446744073709551615K").is_err());
    }
}
