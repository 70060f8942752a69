//! The one description of the two vendor tables' shape, read from the fact tables: which slot
//! holds which engine, which descriptors (flavor key and image) it scans in which order, and
//! which profiler image it carries.
//!
//! Two writers use it and nothing else: the code generator (`crates/nrtucode-codegen`, which
//! writes the core's committed `src/catalog/generated.rs`) and the partition writer
//! (`nrtucode-pack`). Each fills the images named here with what it embeds (the build's blob
//! statics, the partition's blob offsets), so the const tables and a partition cannot
//! disagree about the shape.

use crate::facts::{getters, hwdecode_slots, image_slots, variant_for_key};

/// One descriptor of an `image_list` slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescriptorShape {
    /// The flavor key the vendor's scan compares.
    pub key: u32,
    /// The variant the key selects (`PERF`, `RELEASE`, `DKL_DEBUG`, …).
    pub variant: &'static str,
    /// The image whose four region getters the descriptor holds (`<GEN>_<CLASS>_<ENGINE>_<VARIANT>`).
    pub image: String,
}

/// One slot of the two tables (they share the flat index space).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotShape {
    /// Flat index 0..=37.
    pub idx: u32,
    /// Generation, class and engine; `None` for the empty slot.
    pub id: Option<(&'static str, &'static str, &'static str)>,
    /// The descriptors in the vendor's scan order (empty for the empty slot).
    pub descriptors: Vec<DescriptorShape>,
    /// The profiler image of the `hwdecode_table_list` slot (`<GEN>_<CLASS>_<ENGINE>_PROF`),
    /// `None` where both getters are NULL.
    pub profiler: Option<String>,
}

/// Every slot of `image_list` and `hwdecode_table_list`, in index order, or what in the fact
/// tables does not fit together.
pub fn slots() -> Result<Vec<SlotShape>, String> {
    let facts = getters();
    let images = image_slots();
    let profs = hwdecode_slots();
    if images.len() != profs.len() {
        return Err(format!(
            "image_list.tsv has {} slots, hwdecode_list.tsv {}",
            images.len(),
            profs.len()
        ));
    }
    let mut out = Vec::with_capacity(images.len());
    for (slot, prof) in images.iter().zip(&profs) {
        if slot.idx != prof.idx || slot.idx as usize != out.len() {
            return Err(format!("slot {}: the tables' indices disagree", slot.idx));
        }
        let id = match (slot.gen_name, slot.class, slot.engine) {
            (Some(g), Some(c), Some(e)) => Some((g, c, e)),
            (None, None, None) => None,
            _ => return Err(format!("slot {}: a partial identity", slot.idx)),
        };
        let mut descriptors = Vec::with_capacity(slot.flavor_keys.len());
        for &key in &slot.flavor_keys {
            let (g, c, e) =
                id.ok_or_else(|| format!("slot {}: keys without an engine", slot.idx))?;
            let variant = variant_for_key(g, key)
                .ok_or_else(|| format!("slot {}: unknown key {key}", slot.idx))?;
            let image = format!("{g}_{c}_{e}_{variant}");
            if !facts.iter().any(|f| f.id.image_name() == image) {
                return Err(format!("slot {}: {image} has no getters", slot.idx));
            }
            descriptors.push(DescriptorShape {
                key,
                variant,
                image,
            });
        }
        let mut profiler = None;
        for symbol in [prof.cam, prof.table].into_iter().flatten() {
            let getter = facts
                .iter()
                .find(|f| f.symbol == symbol)
                .ok_or_else(|| format!("slot {}: {symbol} is not in getters.tsv", slot.idx))?;
            let image = getter.id.image_name();
            if profiler.get_or_insert_with(|| image.clone()) != &image {
                return Err(format!(
                    "slot {}: PROF_CAM and PROF_TABLE of two images",
                    slot.idx
                ));
            }
        }
        out.push(SlotShape {
            idx: slot.idx,
            id,
            descriptors,
            profiler,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_facts_describe_38_slots_102_descriptors_and_15_profilers() {
        let slots = slots().unwrap();
        assert_eq!(slots.len(), 38);
        let descriptors: usize = slots.iter().map(|s| s.descriptors.len()).sum();
        assert_eq!(descriptors, 102);
        assert_eq!(slots.iter().filter(|s| s.profiler.is_some()).count(), 15);
        assert!(slots[36].id.is_none() && slots[36].descriptors.is_empty());
        assert_eq!(slots[0].descriptors[0].image, "SUNDA_NX_ACT_RELEASE");
        assert_eq!(slots[7].profiler.as_deref(), Some("CAYMAN_NX_ACT_PROF"));
        let q7: Vec<u32> = slots[13].descriptors.iter().map(|d| d.key).collect();
        assert_eq!(q7, [1, 17, 18, 19, 2, 3]);
    }
}
