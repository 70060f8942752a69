//! Why a library that carve could not read is not the vendor's: a one-line diagnosis from what
//! the file holds instead (no `image_list`, no getters, no exported resolver; or nrtucode's own
//! C library, which exports the resolvers over none of the vendor's tables), so the carve error
//! says that first and keeps the carve's own details for `-v`.

use std::path::Path;

use nrtucode_carve::{CarveError, FileError};
use object::{Object, ObjectSection, ObjectSymbol};

/// What a library holds, as far as telling the vendor's from another matters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Holds {
    /// A symbol named `image_list` (the unstripped vendor library).
    pub image_list: bool,
    /// Symbols named like the vendor's getters (`CAYMAN_NX_ACT_PERF_IRAM_get`).
    pub getters: usize,
    /// A defined, exported `nrtucode_get_memory_image` (both vendor libraries, and ours).
    pub exports_resolver: bool,
    /// Built by rustc (its line in `.comment`): the vendor's libraries are C.
    pub rustc: bool,
}

impl Holds {
    /// Reads the symbols and `.comment` of the ELF file `data`; `None` if it is no ELF file
    /// `object` reads (the carve's own error says why).
    pub(crate) fn of(data: &[u8]) -> Option<Holds> {
        let file = object::File::parse(data).ok()?;
        let vendor: std::collections::HashSet<&str> =
            nrtucode_facts::getters().iter().map(|g| g.symbol).collect();
        let mut holds = Holds::default();
        for symbol in file.symbols().chain(file.dynamic_symbols()) {
            let Ok(name) = symbol.name() else { continue };
            holds.image_list |= name == "image_list";
            holds.getters += usize::from(vendor.contains(name));
            holds.exports_resolver |= name == "nrtucode_get_memory_image" && !symbol.is_undefined();
        }
        holds.rustc = file
            .section_by_name(".comment")
            .and_then(|s| s.data().ok())
            .is_some_and(|d| d.windows(14).any(|w| w == b"rustc version "));
        Some(holds)
    }

    /// One line saying why this is not the vendor's library, or `None` when it may be (it has
    /// the vendor's tables or getters, or exports the resolver from C: a vendor library carve
    /// could not read, whose own error is the message).
    pub(crate) fn not_the_vendors(&self) -> Option<String> {
        if self.image_list || self.getters > 0 {
            return None;
        }
        if self.exports_resolver && self.rustc {
            return Some(
                "this looks like nrtucode's own C library: built by rustc, it exports \
                 nrtucode_get_memory_image but holds no image_list and no getters"
                    .to_owned(),
            );
        }
        if self.exports_resolver {
            return None;
        }
        Some(
            "no image_list, no getters (such as CAYMAN_NX_ACT_PERF_IRAM_get) and no exported \
             nrtucode_get_memory_image"
                .to_owned(),
        )
    }
}

/// For a carve of a library that failed on what the library holds (not on its ELF form): the
/// library, why it is not the vendor's (one line), and what carve tried (its error). `carve`,
/// `pack` and the readers of `sbom` and `diff` say it the same way.
pub(crate) fn not_the_vendors(e: &FileError) -> Option<(&Path, String, &CarveError)> {
    let FileError::Carve { path, error, data } = e else {
        return None;
    };
    if matches!(
        **error,
        CarveError::Empty
            | CarveError::NotElf { .. }
            | CarveError::WrongClass { .. }
            | CarveError::WrongEndian { .. }
            | CarveError::WrongMachine { .. }
            | CarveError::NotSharedObject { .. }
            | CarveError::Truncated { .. }
            | CarveError::Malformed { .. }
    ) {
        return None; // already one line about the file's form
    }
    // The bytes the carve read: the file is not opened again.
    let what = Holds::of(data)?.not_the_vendors()?;
    Some((path, what, &**error))
}

/// A library the tool reads (`pack`, `sbom`, `diff`) refused by the carve: when it is not the
/// vendor's, `path: not the vendor's library: why; hint`, else the carve's own message.
pub(crate) fn library_refusal(e: &FileError) -> String {
    match not_the_vendors(e) {
        Some((path, what, _)) => format!(
            "{}: not the vendor's library: {what}; the vendor's libnrtucode_internal.so or \
             libnrtucode.so (or a blob directory carve wrote) is read",
            path.display()
        ),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_library_without_the_vendors_tables_is_called_not_the_vendors() {
        let ours = Holds {
            exports_resolver: true,
            rustc: true,
            ..Holds::default()
        };
        assert!(
            ours.not_the_vendors()
                .unwrap()
                .contains("nrtucode's own C library")
        );
        let other = Holds::default();
        assert!(
            other
                .not_the_vendors()
                .unwrap()
                .starts_with("no image_list, no getters")
        );
        // A stripped vendor library (C, exports the resolver) or one with its tables: the
        // carve's error stands.
        let stripped = Holds {
            exports_resolver: true,
            ..Holds::default()
        };
        assert_eq!(stripped.not_the_vendors(), None);
        for vendorish in [
            Holds {
                image_list: true,
                ..ours.clone()
            },
            Holds {
                getters: 3,
                ..other.clone()
            },
        ] {
            assert_eq!(vendorish.not_the_vendors(), None, "{vendorish:?}");
        }
    }
}
