//! Which vendor library a look-alike mirrors ([`LibraryBuild`]) and what to generate ([`Options`]).

use nrtucode_facts::Getter;

/// Which vendor library the look-alike mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LibraryBuild {
    /// `libnrtucode_internal.so`: every base, DKL and profiler getter of all five generations.
    Full,
    /// `libnrtucode.so`: only PERF/RELEASE (key 1) and DKL_PERF (key 17) getters and the
    /// profiler getters, no MAVERICK getter at all; the table shapes stay complete and the
    /// missing getters are NULL.
    Front,
}

impl LibraryBuild {
    /// Both builds, full first.
    pub const ALL: [LibraryBuild; 2] = [LibraryBuild::Full, LibraryBuild::Front];

    /// `"full"` or `"front"`.
    pub fn name(self) -> &'static str {
        match self {
            LibraryBuild::Full => "full",
            LibraryBuild::Front => "front",
        }
    }

    /// Parses `"full"` or `"front"`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The file name of the vendor library this library mirrors.
    pub fn library_name(self) -> &'static str {
        match self {
            LibraryBuild::Full => "libnrtucode_internal.so",
            LibraryBuild::Front => "libnrtucode.so",
        }
    }

    /// `true` if this library links `getter` (has its stub and its blob).
    pub fn links(self, getter: &Getter) -> bool {
        if !getter.is_resolver_reachable() {
            return false;
        }
        match self {
            LibraryBuild::Full => true,
            LibraryBuild::Front => nrtucode_facts::facts::in_front_library(getter),
        }
    }
}

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    library: LibraryBuild,
    prefix: String,
}

impl Options {
    /// The vendor's exported names (`nrtucode_get_memory_image`, `nrtucode_get_hwdecode_table`).
    pub fn new(library: LibraryBuild) -> Self {
        Self {
            library,
            prefix: "nrtucode_".to_owned(),
        }
    }

    /// Exports the resolvers as `<prefix>get_memory_image` and `<prefix>get_hwdecode_table`
    /// (e.g. prefix `lookalike_full_`). Fails unless `prefix` is a C identifier.
    pub fn with_prefix(mut self, prefix: &str) -> Result<Self, String> {
        let mut chars = prefix.chars();
        let ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(format!("symbol prefix {prefix:?} is not a C identifier"));
        }
        self.prefix = prefix.to_owned();
        Ok(self)
    }

    /// Which vendor library this build mirrors.
    pub fn library(&self) -> LibraryBuild {
        self.library
    }

    /// The exported name of the memory-image resolver.
    pub fn memory_image_symbol(&self) -> String {
        format!("{}get_memory_image", self.prefix)
    }

    /// The exported name of the profiler-table resolver.
    pub fn hwdecode_table_symbol(&self) -> String {
        format!("{}get_hwdecode_table", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_must_be_an_identifier() {
        assert!(
            Options::new(LibraryBuild::Full)
                .with_prefix("lookalike_full_")
                .is_ok()
        );
        assert!(Options::new(LibraryBuild::Full).with_prefix("1x").is_err());
        assert!(Options::new(LibraryBuild::Full).with_prefix("a-b").is_err());
        assert!(Options::new(LibraryBuild::Full).with_prefix("").is_err());
        let o = Options::new(LibraryBuild::Front)
            .with_prefix("lf_")
            .unwrap();
        assert_eq!(o.memory_image_symbol(), "lf_get_memory_image");
        assert_eq!(o.hwdecode_table_symbol(), "lf_get_hwdecode_table");
    }
}
