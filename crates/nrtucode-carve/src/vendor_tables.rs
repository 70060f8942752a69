//! Decoding `image_list`, its flavor descriptors and `hwdecode_table_list`.
//!
//! ```text
//! image_list[38]          { u64 count; image_desc *table; }            16 bytes
//! image_desc[count]       { u64 flavor_key; img_get *get[4]; }         40 bytes
//! hwdecode_table_list[38] { img_get *prof_cam; img_get *prof_table; }  16 bytes
//! ```
//!
//! Counts and flavor keys are file bytes; every pointer goes through [`RelocMap::pointer`].

use crate::elf::Elf;
use crate::error::CarveError;
use crate::reloc::{Ptr, RelocMap};

/// Slots in each table: the core's slot count.
pub(crate) const SLOTS: usize = nrtucode::ImageIndex::COUNT;
/// Bytes of one table entry.
pub(crate) const ENTRY_SIZE: u64 = 16;
/// Bytes of one flavor descriptor.
pub(crate) const DESC_SIZE: u64 = 40;
/// Largest plausible descriptor count of one slot (the vendor's largest is 6).
pub(crate) const MAX_COUNT: u64 = 64;
/// Bytes of a whole table.
pub(crate) const TABLE_SIZE: u64 = SLOTS as u64 * ENTRY_SIZE;

/// One flavor descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Descriptor {
    /// Its address.
    pub va: u64,
    /// The flavor key (1/2/3, 17/18/19).
    pub key: u64,
    /// The IRAM, DRAM, SRAM and EXTRAM getters.
    pub getters: [Ptr; 4],
}

/// One `image_list` slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ImageSlot {
    /// Flat index.
    pub idx: usize,
    /// Address of the entry.
    pub entry_va: u64,
    /// The descriptor array (NULL for an empty slot).
    pub table: Ptr,
    /// The descriptors, `count` of them.
    pub descriptors: Vec<Descriptor>,
}

/// One `hwdecode_table_list` slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HwSlot {
    /// Flat index.
    pub idx: usize,
    /// Address of the entry.
    pub entry_va: u64,
    /// PROF_CAM getter (kind 0).
    pub cam: Ptr,
    /// PROF_TABLE getter (kind 1).
    pub table: Ptr,
}

/// Checks that a whole table of [`TABLE_SIZE`] bytes at `va` lies in one writable section.
pub(crate) fn check_table_shape(
    elf: &Elf<'_>,
    table: &'static str,
    va: u64,
) -> Result<(), CarveError> {
    let sec = elf.section_at(va);
    if let Some(sec) = sec
        && !sec.is_writable()
    {
        return Err(CarveError::BadTable {
            table,
            va,
            reason: format!(
                "lies in {}, expected a writable or RELRO data section",
                sec.name
            ),
        });
    }
    elf.offset_of(va, TABLE_SIZE, &format!("{table} (38 x 16 bytes)"))?;
    Ok(())
}

/// Reads the 38 `image_list` slots at `va` and their descriptors.
pub(crate) fn read_image_list(
    elf: &Elf<'_>,
    relocs: &RelocMap,
    va: u64,
) -> Result<Vec<ImageSlot>, CarveError> {
    check_table_shape(elf, "image_list", va)?;
    let mut slots = Vec::with_capacity(SLOTS);
    for idx in 0..SLOTS {
        let entry_va = va + idx as u64 * ENTRY_SIZE;
        let count = elf.u64_at(entry_va, &format!("image_list[{idx}].count"))?;
        if count > MAX_COUNT {
            return Err(CarveError::AbsurdCount {
                slot: idx,
                va: entry_va,
                count,
                max: MAX_COUNT,
            });
        }
        let what = format!("image_list[{idx}].table");
        let table = relocs.pointer(elf, entry_va + 8, &what)?;
        let mut descriptors = Vec::new();
        if count > 0 {
            let base = table.va().ok_or_else(|| CarveError::BadTable {
                table: "image_list",
                va: entry_va,
                reason: format!("slot {idx} has count {count} but a NULL descriptor table"),
            })?;
            elf.offset_of(
                base,
                count * DESC_SIZE,
                &format!("{what} ({count} descriptors)"),
            )?;
            for i in 0..count {
                let dva = base + i * DESC_SIZE;
                let key = elf.u64_at(dva, &format!("image_list[{idx}] descriptor {i} key"))?;
                let mut getters = [Ptr::Null; 4];
                for (r, g) in getters.iter_mut().enumerate() {
                    let what = format!("image_list[{idx}] descriptor {i} getter {r}");
                    *g = relocs.pointer(elf, dva + 8 + 8 * r as u64, &what)?;
                }
                descriptors.push(Descriptor {
                    va: dva,
                    key,
                    getters,
                });
            }
        }
        slots.push(ImageSlot {
            idx,
            entry_va,
            table,
            descriptors,
        });
    }
    Ok(slots)
}

/// Reads the 38 `hwdecode_table_list` slots at `va`.
pub(crate) fn read_hwdecode_list(
    elf: &Elf<'_>,
    relocs: &RelocMap,
    va: u64,
) -> Result<Vec<HwSlot>, CarveError> {
    check_table_shape(elf, "hwdecode_table_list", va)?;
    (0..SLOTS)
        .map(|idx| {
            let entry_va = va + idx as u64 * ENTRY_SIZE;
            Ok(HwSlot {
                idx,
                entry_va,
                cam: relocs.pointer(elf, entry_va, &format!("hwdecode_table_list[{idx}].cam"))?,
                table: relocs.pointer(
                    elf,
                    entry_va + 8,
                    &format!("hwdecode_table_list[{idx}].table"),
                )?,
            })
        })
        .collect()
}
