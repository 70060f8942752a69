//! [`NoEnv`]: the environment with nothing set.

use super::Env;

/// An environment with nothing set: no removed flag, auto flavor PERF.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoEnv;

impl Env for NoEnv {
    #[inline]
    fn visit_var(&self, _name: &str, visit: &mut dyn FnMut(Option<&[u8]>)) {
        visit(None);
    }
}
