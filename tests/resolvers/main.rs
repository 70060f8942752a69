//! The resolvers' answers, one test binary (each binary links the whole blob set, so the
//! groups share one link): return codes, the profiler lane, `MapEnv`, the single copy of a
//! blob, const evaluation and the front selection. Each module is the file of the same name.

mod const_eval;
mod front;
mod map_env;
mod prof;
mod return_codes;
mod single_copy;
