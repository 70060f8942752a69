//! [`MapEnv`]: a fixed-capacity environment (an array, no allocation), for hosts without an OS
//! environment.

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
#[derive(Clone)]
pub struct MapEnv<'a, const N: usize> {
    /// The variables set are `vars[..len]`, each name once; the rest is unused.
    vars: [(&'a str, &'a [u8]); N],
    len: usize,
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
            vars: [("", &[]); N],
            len: 0,
        }
    }

    /// Sets `name` to `value`, replacing an earlier value.
    pub fn set(&mut self, name: &'a str, value: &'a [u8]) -> Result<(), CapacityError> {
        if let Some(slot) = self.set_vars_mut().iter_mut().find(|(n, _)| *n == name) {
            slot.1 = value;
            return Ok(());
        }
        let free = self.vars.get_mut(self.len).ok_or(CapacityError)?;
        *free = (name, value);
        self.len += 1;
        Ok(())
    }

    /// Unsets `name`; returns its value if it was set.
    pub fn remove(&mut self, name: &str) -> Option<&'a [u8]> {
        let vars = self.set_vars_mut();
        let at = vars.iter().position(|(n, _)| *n == name)?;
        // The last variable takes the removed one's place (names are unique: order is free).
        let (&mut last, _) = vars.split_last_mut()?;
        let (_, removed) = core::mem::replace(vars.get_mut(at)?, last);
        self.len -= 1;
        Some(removed)
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&'a [u8]> {
        self.set_vars()
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    /// Number of variables set.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when nothing is set.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The variables set.
    fn set_vars(&self) -> &[(&'a str, &'a [u8])] {
        self.vars.get(..self.len).unwrap_or_default()
    }

    /// The variables set, to change in place.
    fn set_vars_mut(&mut self) -> &mut [(&'a str, &'a [u8])] {
        self.vars.get_mut(..self.len).unwrap_or_default()
    }
}

impl<const N: usize> Default for MapEnv<'_, N> {
    fn default() -> Self {
        Self::new()
    }
}

/// Lists the variables set, like a `Vec` of `(name, value)` pairs.
impl<const N: usize> core::fmt::Debug for MapEnv<'_, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MapEnv")
            .field("vars", &self.set_vars())
            .finish()
    }
}

impl<const N: usize> Env for MapEnv<'_, N> {
    fn visit_var(&self, name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        visit(self.get(name));
    }
}
