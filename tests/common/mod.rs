//! An independent model of the vendor resolvers, written from the fact TSVs (through
//! `nrtucode-facts`) and the seed's pseudocode, sharing no code with the crate under test.
#![allow(dead_code)] // each test binary uses part of it

use nrtucode_facts::facts::{REGIONS, variant_for_key};
use nrtucode_facts::{Getter, getters, hwdecode_slots, image_slots};

/// What a resolver call should answer: a blob described by its getter row, or a vendor code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Code 0 with the blob of this getter (`None` symbol never happens).
    Blob(Getter),
    /// A non-zero vendor code.
    Code(i32),
}

/// Whether cargo features embed this getter in the crate under test.
// With every feature on, each arm is `true` and clippy would fold the matches away.
#[allow(clippy::match_like_matches_macro)]
pub fn embedded(getter: &Getter) -> bool {
    let generation = match getter.gen_name {
        "SUNDA" => cfg!(feature = "gen-sunda"),
        "CAYMAN" => cfg!(feature = "gen-cayman"),
        "MARIANA" => cfg!(feature = "gen-mariana"),
        "MARIANA_PLUS" => cfg!(feature = "gen-mariana-plus"),
        "MAVERICK" => cfg!(feature = "gen-maverick"),
        _ => false,
    };
    let flavor = match getter.variant {
        "PROF" => true,
        "RELEASE" | "PERF" => cfg!(feature = "flavor-perf"),
        "DEBUG" => cfg!(feature = "flavor-debug"),
        "TEST" => cfg!(feature = "flavor-test"),
        "DKL_PERF" => cfg!(feature = "flavor-dkl-perf"),
        "DKL_DEBUG" => cfg!(feature = "flavor-dkl-debug"),
        "DKL_TEST" => cfg!(feature = "flavor-dkl-test"),
        _ => false,
    };
    generation && flavor
}

/// The naive model of the facts, built once per call site.
pub struct Model {
    getters: Vec<Getter>,
    slots: Vec<nrtucode_facts::ImageSlotFact>,
    prof: Vec<nrtucode_facts::HwDecodeSlotFact>,
}

impl Default for Model {
    fn default() -> Self {
        Self::new()
    }
}

/// The model, read once per test binary.
pub fn model() -> &'static Model {
    static MODEL: std::sync::OnceLock<Model> = std::sync::OnceLock::new();
    MODEL.get_or_init(Model::new)
}

impl Model {
    /// Reads the TSVs.
    pub fn new() -> Self {
        Self {
            getters: getters(),
            slots: image_slots(),
            prof: hwdecode_slots(),
        }
    }

    fn getter(&self, symbol: &str) -> &Getter {
        self.getters
            .iter()
            .find(|g| g.symbol == symbol)
            .unwrap_or_else(|| panic!("{symbol} not in the facts"))
    }

    /// The getter a descriptor's region slot names: the facts row with the slot's
    /// generation, class and engine, the key's variant and the region.
    pub fn image_getter(&self, idx: usize, key: u32, region: usize) -> &Getter {
        let slot = &self.slots[idx];
        let generation = slot.gen_name.expect("populated slot");
        let variant = variant_for_key(generation, key).expect("known key");
        self.getters
            .iter()
            .find(|g| {
                Some(g.gen_name) == slot.gen_name
                    && Some(g.class) == slot.class
                    && Some(g.engine) == slot.engine
                    && g.variant == variant
                    && g.region == REGIONS[region]
            })
            .unwrap_or_else(|| panic!("slot {idx} key {key} region {region} not in the facts"))
    }

    /// The vendor's answer to `get_memory_image(idx, region, flavor)` with the two variables'
    /// values, written from the seed's pseudocode.
    pub fn memory_image(
        &self,
        idx: u32,
        region: i32,
        flavor: i32,
        removed_flag: Option<&[u8]>,
        flavor_var: Option<&[u8]>,
    ) -> Expected {
        if idx > 37 {
            return Expected::Code(1);
        }
        // Values are C strings: getenv's caller sees the bytes before the first NUL.
        let c_string = |v: &'_ [u8]| v.split(|b| *b == 0).next().unwrap_or(&[]).to_vec();
        let removed_flag = removed_flag.map(c_string);
        let flavor_var = flavor_var.map(c_string);
        let flavor_var = flavor_var.as_deref();
        if let Some(value) = removed_flag {
            // c = first byte - '1'; if first byte is '1', c = second byte; trip when c == 0.
            let first = value.first().copied().unwrap_or(0);
            let c = if first == b'1' {
                i32::from(value.get(1).copied().unwrap_or(0))
            } else {
                i32::from(first) - i32::from(b'1')
            };
            if c == 0 {
                return Expected::Code(8);
            }
        }
        let flavor = if flavor == 0 {
            match flavor_var {
                None => 1,
                Some(v) if v == b"debug" || v == b"DEBUG" => 2,
                Some(v) if v == b"test" => 3,
                // The seed: `flavor = strcmp(fv, "TEST") == 0 ? 3 : 1`.
                Some(v) if v == b"TEST" => 3,
                Some(_) => 1,
            }
        } else {
            flavor
        };
        let slot = &self.slots[idx as usize];
        if slot.flavor_keys.is_empty() {
            return Expected::Code(2);
        }
        let Some(key) = slot
            .flavor_keys
            .iter()
            .copied()
            .find(|k| i64::from(*k) == i64::from(flavor))
        else {
            return Expected::Code(2);
        };
        if !(0..=3).contains(&region) {
            return Expected::Code(2);
        }
        let getter = self.image_getter(idx as usize, key, region as usize);
        if embedded(getter) {
            Expected::Blob(getter.clone())
        } else {
            Expected::Code(3)
        }
    }

    /// The vendor's answer to `get_hwdecode_table(idx, kind)`.
    pub fn prof_table(&self, idx: u32, kind: i32) -> Expected {
        if idx > 37 {
            return Expected::Code(1);
        }
        let slot = &self.prof[idx as usize];
        let symbol = match kind {
            0 => slot.cam,
            1 => slot.table,
            _ => return Expected::Code(2),
        };
        match symbol.map(|s| self.getter(s)) {
            Some(getter) if embedded(getter) => Expected::Blob(getter.clone()),
            _ => Expected::Code(2),
        }
    }
}

/// Checks a resolver's answer against the model: code, length, and (for the fixture build)
/// the fixture header naming the getter (full bytes are compared once per getter in
/// `tests/catalog_vs_facts.rs`).
pub fn check(actual: Result<&'static [u8], nrtucode::ResolveErr>, expected: &Expected) {
    match (actual, expected) {
        (Ok(bytes), Expected::Blob(getter)) => {
            assert_eq!(bytes.len(), getter.size, "{}", getter.symbol);
            if cfg!(nrtucode_fixtures) && !getter.is_prof() && getter.size > 0 {
                let header = nrtucode_facts::fixture::header(getter.stem());
                assert!(bytes.starts_with(header.as_bytes()), "{}", getter.symbol);
            }
        }
        (Err(e), Expected::Code(code)) => assert_eq!(e.code(), *code, "{e}"),
        (actual, expected) => panic!("got {actual:?}, expected {expected:?}"),
    }
}
