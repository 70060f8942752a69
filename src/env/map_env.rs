//! [`MapEnv`]: a fixed-capacity environment on `heapless`, for hosts without an OS environment.

use super::Env;

/// A fixed-capacity environment of up to `N` variables, for hosts without an OS environment.
///
/// ```
/// use nrtucode::MapEnv;
/// let mut env: MapEnv<'_, 2> = MapEnv::new();
/// env.set("NEURON_UCODE_FLAVOR", b"test")?;
/// assert_eq!(env.get("NEURON_UCODE_FLAVOR"), Some(b"test".as_slice()));
/// # Ok::<(), nrtucode::CapacityError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct MapEnv<'a, const N: usize> {
    vars: heapless::Vec<(&'a str, &'a [u8]), N>,
}

/// [`MapEnv::set`] found no room for a new variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CapacityError;

impl core::fmt::Display for CapacityError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("environment capacity exhausted")
    }
}

impl core::error::Error for CapacityError {}

impl<'a, const N: usize> MapEnv<'a, N> {
    /// An empty environment.
    pub const fn new() -> Self {
        Self {
            vars: heapless::Vec::new(),
        }
    }

    /// Sets `name` to `value`, replacing an earlier value.
    pub fn set(&mut self, name: &'a str, value: &'a [u8]) -> Result<(), CapacityError> {
        if let Some(slot) = self.vars.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = value;
            return Ok(());
        }
        self.vars.push((name, value)).map_err(|_| CapacityError)
    }

    /// Unsets `name`; returns its value if it was set.
    pub fn remove(&mut self, name: &str) -> Option<&'a [u8]> {
        let at = self.vars.iter().position(|(n, _)| *n == name)?;
        Some(self.vars.swap_remove(at).1)
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&'a [u8]> {
        self.vars.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    /// Number of variables set.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// `true` when nothing is set.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
}

impl<const N: usize> Env for MapEnv<'_, N> {
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        visit(self.get(name));
    }
}

// Small enough to return by value on a microcontroller (at most four words on a 32-bit
// target; CI's no_std cross build compiles this for thumbv7em).
static_assertions::const_assert!(core::mem::size_of::<CapacityError>() <= 16);
