//! Naming a getter by its table position, in the vendor's symbol scheme.
//!
//! `image_list` slot `idx` fixes (generation, class, engine) — taken from the facts'
//! `image_list` facts — the descriptor's flavor key fixes the variant and the getter's place in
//! the descriptor fixes the region. The name is the facts' symbol of that cell, or, for a cell
//! the facts lack, `<GEN>_<CLS>_<ENGINE>_<VARIANT>_<REGION>_get` built the vendor's way
//! (`DKL_*` spelled `DYNAMIC_KERNEL_LOAD_*`). So a stripped and an unstripped build of the
//! same library get the same names.

use std::collections::HashMap;

use nrtucode::{ProfKind, Region};
use nrtucode_facts::facts::variant_for_key;
use nrtucode_facts::{
    Getter, HwDecodeSlotFact, ImageSlotFact, getters, hwdecode_slots, image_slots,
};

use crate::error::CarveError;

/// The identity of one getter (the facts' one identity type, with owned strings).
pub type GetterName = nrtucode_facts::GetterId<String>;

/// The vendor's spelling of a variant inside a symbol.
pub(crate) fn symbol_variant(variant: &str) -> String {
    match variant.strip_prefix("DKL_") {
        Some(rest) => format!("DYNAMIC_KERNEL_LOAD_{rest}"),
        None => variant.to_owned(),
    }
}

/// The facts' getters, indexed for naming.
pub struct Names {
    image: Vec<ImageSlotFact>,
    hw: Vec<HwDecodeSlotFact>,
    getters: Vec<Getter>,
    by_cell: HashMap<(String, String, String, String, String), usize>,
    by_symbol: HashMap<String, usize>,
}

impl Default for Names {
    fn default() -> Self {
        Self::new()
    }
}

impl Names {
    /// Loads the facts.
    pub fn new() -> Self {
        let all = getters();
        let mut by_cell = HashMap::new();
        let mut by_symbol = HashMap::new();
        for (i, g) in all.iter().enumerate() {
            let cell = (g.gen_name, g.class, g.engine, g.variant, g.region);
            by_cell.insert(
                (
                    cell.0.to_owned(),
                    cell.1.to_owned(),
                    cell.2.to_owned(),
                    cell.3.to_owned(),
                    cell.4.to_owned(),
                ),
                i,
            );
            by_symbol.insert(g.symbol.to_owned(), i);
        }
        Self {
            image: image_slots(),
            hw: hwdecode_slots(),
            getters: all,
            by_cell,
            by_symbol,
        }
    }

    /// The facts' getter with this symbol.
    pub fn getter(&self, symbol: &str) -> Option<&Getter> {
        self.by_symbol.get(symbol).map(|i| &self.getters[*i])
    }

    fn cell(
        &self,
        gen_name: &str,
        class: &str,
        engine: &str,
        variant: &str,
        region: &str,
    ) -> GetterName {
        let key = (
            gen_name.to_owned(),
            class.to_owned(),
            engine.to_owned(),
            variant.to_owned(),
            region.to_owned(),
        );
        match self.by_cell.get(&key) {
            Some(i) => GetterName::from(&self.getters[*i]),
            None => GetterName {
                symbol: format!(
                    "{gen_name}_{class}_{engine}_{}_{region}_get",
                    symbol_variant(variant)
                ),
                gen_name: key.0,
                class: key.1,
                engine: key.2,
                variant: key.3,
                region: key.4,
            },
        }
    }

    /// The name of region `region` of the descriptor with flavor `key` in
    /// `image_list[slot]`.
    pub fn image(
        &self,
        slot: usize,
        desc_va: u64,
        key: u64,
        region: Region,
    ) -> Result<GetterName, CarveError> {
        let fact = self.image.get(slot);
        let (Some(g), Some(c), Some(e)) = (
            fact.and_then(|f| f.gen_name),
            fact.and_then(|f| f.class),
            fact.and_then(|f| f.engine),
        ) else {
            return Err(CarveError::BadTable {
                table: "image_list",
                va: desc_va,
                reason: format!(
                    "slot {slot} has descriptors, but the facts have no engine at that slot"
                ),
            });
        };
        let variant = u32::try_from(key)
            .ok()
            .and_then(|k| variant_for_key(g, k))
            .ok_or(CarveError::UnknownFlavorKey {
                slot,
                va: desc_va,
                key,
            })?;
        Ok(self.cell(g, c, e, variant, region.name()))
    }

    /// The name of the PROF_CAM or PROF_TABLE getter of
    /// `hwdecode_table_list[slot]`.
    pub fn prof(
        &self,
        slot: usize,
        entry_va: u64,
        kind: ProfKind,
    ) -> Result<GetterName, CarveError> {
        let hw = self.hw.get(slot);
        let class = self.image.get(slot).and_then(|f| f.class);
        let (Some(g), Some(e), Some(c)) = (
            hw.and_then(|h| h.gen_name),
            hw.and_then(|h| h.engine),
            class,
        ) else {
            return Err(CarveError::BadTable {
                table: "hwdecode_table_list",
                va: entry_va,
                reason: format!(
                    "slot {slot} has a getter, but the facts have no engine at that slot"
                ),
            });
        };
        Ok(self.cell(g, c, e, "PROF", kind.name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_give_vendor_symbols() {
        let n = Names::new();
        assert_eq!(
            n.image(7, 0, 1, Region::Iram).unwrap().symbol,
            "CAYMAN_NX_ACT_PERF_IRAM_get"
        );
        assert_eq!(
            n.image(0, 0, 1, Region::Extram).unwrap().symbol,
            "SUNDA_NX_ACT_RELEASE_EXTRAM_get"
        );
        assert_eq!(
            n.image(13, 0, 18, Region::Dram).unwrap().symbol,
            "CAYMAN_Q7_POOL_DYNAMIC_KERNEL_LOAD_DEBUG_DRAM_get"
        );
        assert_eq!(
            n.image(12, 0, 2, Region::Sram).unwrap(),
            n.image(11, 0, 2, Region::Sram).unwrap()
        );
        assert_eq!(
            n.prof(10, 0, ProfKind::Cam).unwrap().symbol,
            "CAYMAN_NX_PE_PROF_CAM_get"
        );
        assert!(matches!(
            n.image(36, 0, 1, Region::Iram),
            Err(CarveError::BadTable { .. })
        ));
        assert!(matches!(
            n.image(7, 0, 5, Region::Iram),
            Err(CarveError::UnknownFlavorKey { key: 5, .. })
        ));
    }

    #[test]
    fn cells_missing_from_the_facts_are_built_the_vendor_way() {
        let n = Names::new();
        // MAVERICK NX_POOL has keys 1,3 only: key 2 (DEBUG) is not in the facts.
        let name = n.image(32, 0, 2, Region::Iram).unwrap();
        assert_eq!(name.symbol, "MAVERICK_NX_POOL_DEBUG_IRAM_get");
        assert_eq!(symbol_variant("DKL_TEST"), "DYNAMIC_KERNEL_LOAD_TEST");
    }
}
