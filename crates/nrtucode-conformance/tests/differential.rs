//! The differential oracle: our resolvers against the C look-alike of the vendor library.
//!
//! Builds the look-alike (full or front per this crate's features) with gcc into a temp dir, loads it,
//! and for every input compares the look-alike's C resolvers with
//!
//! * the raw API `nrtucode::get_memory_image` / `get_hwdecode_table` (environment given as a
//!   slice of the same bytes),
//! * the typed API `nrtucode::resolve_image` / `resolve_hwdecode` (when the integers parse),
//! * the C ABI `nrtucode_capi::nrtucode_get_*` called in-process (live environment, `StdEnv`),
//! * `nrtucode::EnvSnapshot::capture()` of the same process environment,
//!
//! * a signed partition (`nrtucode-pack`) packed from the carve of the same look-alike, read
//!   in place through `nrtucode::partition` (its code, length, bytes, cursor places and
//!   pointer aliasing against the look-alike's and ours),
//! * the same packed with `--compress deflate` (blobs kept as raw deflate where that saves
//!   space), answered into a buffer through the resolvers' `Blob::load_into`
//!   (decode-check for a deflate blob, copy-check for a stored one): its code, length and
//!   bytes against ours,
//!
//! * the C ABI of the partition-backed library, `nrtucode_capi`'s partition handles
//!   (`nrtucode_partition_open_memory` then `nrtucode_partition_get_*`) over the stored and the
//!   deflate partition, and the partition the vendor symbols of the drop-in without firmware
//!   answer from (`nrtucode_capi::from_env::EnvPartition`, the file named by
//!   `NRTUCODE_PARTITION`, the deflate one): code, length, bytes against the look-alike's,
//!   untouched out-parameters, pointer aliasing and the place of every cursor in the handle's
//!   own memory,
//!
//! on return code, success, length, bytes, untouched out-parameters on failure, the place of
//! every boundary cursor among its image's regions (the start or end of which), pointer aliasing
//! (the two NX SP slots of a generation; any two calls the look-alike answers with one pointer),
//! over the grid and the 98-cell environment matrix, plus 1,078,000 seeded random tuples.
//!
//! `harness = false`: one thread owns the process environment, and the removal notices that
//! the ~200k tripped calls print go to /dev/null instead of the test harness's capture.
#![allow(unsafe_code)] // calls into the dlopen-ed C look-alike and sets the C environment

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, c_int, c_uint, c_void};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use nrtucode::partition::{
    Blob, BlobId, CheckedPartition, Codec, LoadError, Loader, Partition, Policy, TableClass,
};
use nrtucode::{EnvSnapshot, Flavor, ImageIndex, ProfKind, Region, ResolveErr};
use nrtucode::{FLAVOR_VAR, REMOVED_FLAG_VAR};
use nrtucode_capi::from_env::{UNAVAILABLE_IMAGE_CODE, UNAVAILABLE_TABLE_CODE};
use nrtucode_conformance::{
    EnvCase, KIND_VALUES, LIBRARY, LOOKALIKE_PREFIX, SplitMix64, Tally, build_matches_library,
    env_matrix, flavor_values, idx_values, region_values,
};
use nrtucode_lookalike::{OptLevel, Options, REMOVAL_MESSAGE, build_shared_object, write_sources};

type ImageFn = unsafe extern "C" fn(c_uint, c_int, c_int, *mut *const c_void, *mut usize) -> c_int;
type HwFn = unsafe extern "C" fn(c_uint, c_int, *mut *const c_void, *mut usize) -> c_int;

const SENTINEL_PTR: *const c_void = 0x5a5a as *const c_void;
const SENTINEL_LEN: usize = 7;
/// Random tuples per environment cell: 98 × 11,000 = 1,078,000.
const RANDOM_PER_CELL: u32 = 11_000;

/// One resolver answer: code and out-parameters (sentinels when untouched).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Answer {
    rc: c_int,
    ptr: *const c_void,
    len: usize,
}

impl Answer {
    fn of(result: Result<&'static [u8], ResolveErr>) -> Self {
        match result {
            Ok(bytes) => Answer {
                rc: 0,
                ptr: bytes.as_ptr().cast(),
                len: bytes.len(),
            },
            Err(e) => Answer {
                rc: e.code(),
                ptr: SENTINEL_PTR,
                len: SENTINEL_LEN,
            },
        }
    }
}

impl Answer {
    /// An answer of the partition-backed C ABI's Rust side: bytes, or a code.
    fn of_code(result: Result<&[u8], c_int>) -> Self {
        match result {
            Ok(bytes) => Answer {
                rc: 0,
                ptr: bytes.as_ptr().cast(),
                len: bytes.len(),
            },
            Err(rc) => Answer {
                rc,
                ptr: SENTINEL_PTR,
                len: SENTINEL_LEN,
            },
        }
    }
}

fn call_image(f: ImageFn, idx: u32, region: i32, flavor: i32) -> Answer {
    let (mut ptr, mut len) = (SENTINEL_PTR, SENTINEL_LEN);
    // SAFETY: `f` has the vendor's signature (the look-alike's resolver or our C ABI); both
    // out-pointers point at live locals.
    let rc = unsafe { f(idx, region, flavor, &mut ptr, &mut len) };
    Answer { rc, ptr, len }
}

fn call_hw(f: HwFn, idx: u32, kind: i32) -> Answer {
    let (mut ptr, mut len) = (SENTINEL_PTR, SENTINEL_LEN);
    // SAFETY: as in `call_image`.
    let rc = unsafe { f(idx, kind, &mut ptr, &mut len) };
    Answer { rc, ptr, len }
}

/// Where a partition-backed C ABI answer comes from.
enum CSource {
    /// A handle of `nrtucode_partition_open_memory`.
    Handle(*mut nrtucode_capi::handle::NrtucodePartition),
    /// The partition the drop-in's vendor symbols answer from.
    Env(&'static nrtucode_capi::from_env::EnvPartition),
}

/// One partition-backed C ABI under comparison, and what it has been compared on.
struct CPartition {
    name: &'static str,
    source: CSource,
    answers: u64,
    cursors: u64,
    /// (look-alike pointer, ours, length) whose bytes were already compared.
    verified: HashSet<(usize, usize, usize)>,
    /// Look-alike (pointer, length) -> ours.
    alias: HashMap<(usize, usize), usize>,
}

impl CPartition {
    fn new(name: &'static str, source: CSource) -> Self {
        CPartition {
            name,
            source,
            answers: 0,
            cursors: 0,
            verified: HashSet::new(),
            alias: HashMap::new(),
        }
    }

    fn image(&self, idx: u32, region: i32, flavor: i32) -> Answer {
        match self.source {
            CSource::Handle(h) => {
                let (mut ptr, mut len) = (SENTINEL_PTR, SENTINEL_LEN);
                // SAFETY: `h` is a handle (open until the end of the run, or a number the call
                // refuses); both out-pointers point at live locals.
                let rc = unsafe {
                    nrtucode_capi::handle::nrtucode_partition_get_memory_image(
                        h, idx, region, flavor, &mut ptr, &mut len,
                    )
                };
                Answer { rc, ptr, len }
            }
            CSource::Env(p) => Answer::of_code(p.answer(UNAVAILABLE_IMAGE_CODE, |p| {
                p.get_memory_image(idx, region, flavor, &nrtucode::StdEnv)
            })),
        }
    }

    fn hwdecode(&self, idx: u32, kind: i32) -> Answer {
        match self.source {
            CSource::Handle(h) => {
                let (mut ptr, mut len) = (SENTINEL_PTR, SENTINEL_LEN);
                // SAFETY: as in `image`.
                let rc = unsafe {
                    nrtucode_capi::handle::nrtucode_partition_get_hwdecode_table(
                        h, idx, kind, &mut ptr, &mut len,
                    )
                };
                Answer { rc, ptr, len }
            }
            CSource::Env(p) => Answer::of_code(
                p.answer(UNAVAILABLE_TABLE_CODE, |p| p.get_hwdecode_table(idx, kind)),
            ),
        }
    }
}

/// A resolver into a buffer over the compressed partition: the bytes it wrote, or why not.
type IntoFn<'a> = dyn Fn(&mut [u8], &mut Loader) -> Result<Vec<u8>, LoadError> + 'a;

/// Where a cursor lies among its image's regions: each `(region, "start" | "end")` it equals.
type Place = Vec<(i32, &'static str)>;

struct Oracle {
    c_image: ImageFn,
    c_hw: HwFn,
    tally: Tally,
    tuples: u64,
    /// `EnvSnapshot::capture()` of the process environment of the current cell.
    snapshot: EnvSnapshot,
    /// Cursor answers whose place in their image was compared.
    cursor_answers: u64,
    /// (C pointer, our pointer, length) triples whose bytes were already compared.
    verified: HashSet<(usize, usize, usize)>,
    /// C (pointer, length) -> our pointer: equal C answers must be equal answers of ours.
    alias: HashMap<(usize, usize), usize>,
    /// The signed partition packed from the carve of the look-alike, when it takes part.
    partition: Option<CheckedPartition<'static>>,
    /// Answers compared over the partition.
    partition_answers: u64,
    /// C (pointer, length) -> the partition's pointer.
    partition_alias: HashMap<(usize, usize), usize>,
    /// (our pointer, partition pointer, length) whose bytes were already compared.
    partition_verified: HashSet<(usize, usize, usize)>,
    /// The same look-alike packed with deflate compression, when it takes part.
    compressed: Option<CheckedPartition<'static>>,
    /// Answers compared over the compressed partition.
    compressed_answers: u64,
    /// Blobs of the compressed partition already resolved into a buffer and byte-compared
    /// (table-of-contents entry -> our pointer).
    compressed_verified: HashMap<BlobId, usize>,
    /// Of those, how many were deflate.
    compressed_decoded: u64,
    /// The compressed partition's loader (SHA-256 and inflater state, held for the run, as
    /// firmware would).
    loader: Box<Loader>,
    /// The partition-backed C ABIs.
    c_partitions: Vec<CPartition>,
}

impl Oracle {
    /// An oracle over the look-alike's two resolvers, with nothing counted yet.
    fn new(c_image: ImageFn, c_hw: HwFn) -> Self {
        Oracle {
            c_image,
            c_hw,
            tally: Tally::default(),
            tuples: 0,
            snapshot: EnvSnapshot::EMPTY,
            cursor_answers: 0,
            verified: HashSet::new(),
            alias: HashMap::new(),
            partition: None,
            partition_answers: 0,
            partition_alias: HashMap::new(),
            partition_verified: HashSet::new(),
            compressed: None,
            compressed_answers: 0,
            compressed_verified: HashMap::new(),
            compressed_decoded: 0,
            loader: Box::new(Loader::new()),
            c_partitions: Vec::new(),
        }
    }

    /// Partition-backed C ABI `i`'s answer `a` against the look-alike's `c`: code, length,
    /// untouched out-parameters, bytes, alignment, pointer aliasing, and the cursor's place.
    fn c_partition_answer(
        &mut self,
        i: usize,
        what: &dyn Fn() -> String,
        c: Answer,
        a: Answer,
        place_of: Option<(Place, Place)>,
    ) {
        let (tally, run) = (&mut self.tally, &mut self.c_partitions[i]);
        let name = run.name;
        run.answers += 1;
        tally.check(
            a.rc == c.rc
                && (c.rc != 0 || a.len == c.len)
                && (a.rc == 0 || (a.ptr, a.len) == (SENTINEL_PTR, SENTINEL_LEN)),
            || format!("{}: {name} {a:?}, look-alike {c:?}", what()),
        );
        if a.rc != 0 || c.rc != 0 || a.len != c.len {
            return;
        }
        if a.len > 0 {
            let key = (c.ptr as usize, a.ptr as usize, a.len);
            if !run.verified.contains(&key) {
                // SAFETY: both answered 0: `c.ptr` points at `c.len` bytes of the loaded
                // look-alike, `a.ptr` at as many in memory the partition owns (open for the
                // whole run).
                let same = unsafe {
                    std::slice::from_raw_parts(c.ptr.cast::<u8>(), c.len)
                        == std::slice::from_raw_parts(a.ptr.cast::<u8>(), a.len)
                };
                tally.check(same, || format!("{}: {name} bytes differ", what()));
                if same {
                    run.verified.insert(key);
                }
            }
            tally.check((a.ptr as usize).is_multiple_of(16), || {
                format!("{}: {name} blob not 16-byte aligned", what())
            });
            let seen = *run
                .alias
                .entry((c.ptr as usize, c.len))
                .or_insert(a.ptr as usize);
            tally.check(seen == a.ptr as usize, || {
                format!("{}: look-alike reuses a pointer {name} does not", what())
            });
        }
        if let Some((mine, theirs)) = place_of {
            run.cursors += 1;
            tally.check(!theirs.is_empty() && theirs == mine, || {
                format!(
                    "{}: cursor is {mine:?} of its image in {name}, {theirs:?} in the look-alike",
                    what()
                )
            });
        }
    }

    /// The compressed partition's answer compared with ours: code; for a blob, the first time
    /// it is reached, the bytes `into` writes (through `Blob::load_into`), then its
    /// recorded length.
    fn compressed_answer(
        &mut self,
        what: &dyn Fn() -> String,
        ours: Result<&'static [u8], ResolveErr>,
        getter: Result<Blob<'static>, ResolveErr>,
        into: &IntoFn<'_>,
    ) {
        let Some(p) = self.compressed else { return };
        self.compressed_answers += 1;
        let getter = match (ours, getter) {
            (Err(a), Err(b)) => {
                self.tally.check(a == b, || {
                    format!("{}: compressed partition {b:?}, embedded {a:?}", what())
                });
                return;
            }
            (Ok(bytes), Ok(g)) => (bytes, g),
            (a, b) => {
                self.tally.check(false, || {
                    format!(
                        "{}: compressed partition {:?}, embedded {:?}",
                        what(),
                        b.map(|_| "a blob"),
                        a.map(<[u8]>::len)
                    )
                });
                return;
            }
        };
        let (bytes, blob) = getter;
        let n = blob.id();
        let Some(entry) = p.tables().toc_entry(n) else {
            self.tally
                .check(false, || format!("{}: no entry {n}", what()));
            return;
        };
        let is_blob = blob.cursor().is_none();
        self.tally.check(blob.len() == bytes.len(), || {
            format!("{}: compressed handle length {}", what(), blob.len())
        });
        let expected_len = if is_blob {
            entry.decoded_len as usize
        } else {
            0
        };
        self.tally.check(expected_len == bytes.len(), || {
            format!(
                "{}: compressed partition length {expected_len}, embedded {}",
                what(),
                bytes.len()
            )
        });
        if is_blob && !self.compressed_verified.contains_key(&n) {
            let mut out = vec![0xa5u8; bytes.len() + 16];
            let got = into(&mut out, &mut self.loader);
            let same = got.as_deref() == Ok(bytes);
            self.tally.check(same, || {
                format!(
                    "{}: compressed partition into: {:?}",
                    what(),
                    got.map(|b| b.len())
                )
            });
            self.tally
                .check(out[bytes.len()..].iter().all(|&b| b == 0xa5), || {
                    format!("{}: written past the blob", what())
                });
            if same {
                self.compressed_verified.insert(n, bytes.as_ptr() as usize);
                self.compressed_decoded += u64::from(entry.codec == Codec::Deflate);
            }
        } else if is_blob {
            let seen = self.compressed_verified[&n];
            self.tally.check(seen == bytes.as_ptr() as usize, || {
                format!("{}: one compressed blob, two embedded blobs", what())
            });
        }
    }

    /// The partition's answer compared with ours (code, length, bytes) and the look-alike's
    /// (pointer aliasing); `region_of` resolves the same image's other regions over the
    /// partition, for the place of a cursor.
    fn partition_answer(
        &mut self,
        what: &dyn Fn() -> String,
        c: Answer,
        ours: Result<&'static [u8], ResolveErr>,
        part: Result<&'static [u8], ResolveErr>,
        place_of: Option<(Place, Place)>,
    ) {
        self.partition_answers += 1;
        let same = match (ours, part) {
            (Err(a), Err(b)) => a == b,
            (Ok(a), Ok(b)) => a.len() == b.len(),
            _ => false,
        };
        self.tally.check(same, || {
            format!(
                "{}: partition {:?}, embedded {:?}",
                what(),
                part.map(<[u8]>::len),
                ours.map(<[u8]>::len)
            )
        });
        let (Ok(a), Ok(b)) = (ours, part) else { return };
        if a.len() != b.len() {
            return;
        }
        if !b.is_empty() {
            let key = (a.as_ptr() as usize, b.as_ptr() as usize, a.len());
            if !self.partition_verified.contains(&key) {
                let same = a == b;
                self.tally
                    .check(same, || format!("{}: partition bytes differ", what()));
                if same {
                    self.partition_verified.insert(key);
                }
            }
            self.tally
                .check((b.as_ptr() as usize).is_multiple_of(16), || {
                    format!("{}: partition blob not 16-byte aligned", what())
                });
            if c.rc == 0 {
                let seen = *self
                    .partition_alias
                    .entry((c.ptr as usize, c.len))
                    .or_insert(b.as_ptr() as usize);
                self.tally.check(seen == b.as_ptr() as usize, || {
                    format!(
                        "{}: look-alike reuses a pointer the partition does not",
                        what()
                    )
                });
            }
        }
        if let Some((mine, theirs)) = place_of {
            self.tally.check(!theirs.is_empty() && theirs == mine, || {
                format!(
                    "{}: cursor is {mine:?} of its image in the partition, {theirs:?} embedded",
                    what()
                )
            });
        }
    }

    /// Compares the success payloads of the look-alike and ours.
    fn payload(&mut self, what: &dyn Fn() -> String, c: Answer, ours: &'static [u8]) {
        if c.rc != 0 || c.len != ours.len() {
            return; // already counted as a mismatch by the caller
        }
        if c.len > 0 {
            let key = (c.ptr as usize, ours.as_ptr() as usize, c.len);
            if !self.verified.contains(&key) {
                // SAFETY: the look-alike answered 0, so `c.ptr` points at `c.len` bytes of a
                // static array of the loaded library, which stays loaded for the whole test.
                let theirs = unsafe { std::slice::from_raw_parts(c.ptr.cast::<u8>(), c.len) };
                let same = theirs == ours;
                self.tally
                    .check(same, || format!("{}: bytes differ", what()));
                if same {
                    self.verified.insert(key);
                }
            }
            let ours_ptr = ours.as_ptr() as usize;
            let seen = *self
                .alias
                .entry((c.ptr as usize, c.len))
                .or_insert(ours_ptr);
            self.tally.check(seen == ours_ptr, || {
                format!("{}: look-alike reuses a pointer we do not", what())
            });
        }
    }

    /// The checks both lanes share: the look-alike and our raw resolver agree on the code (and
    /// the length on success), the look-alike leaves its out-parameters alone on failure, and
    /// the C ABI answers exactly like the raw resolver.
    fn codes_agree(&mut self, what: &dyn Fn() -> String, c: Answer, ours: Answer, abi: Answer) {
        self.tally
            .check(c.rc == ours.rc && (c.rc != 0 || c.len == ours.len), || {
                format!("{}: look-alike {c:?}, raw {ours:?}", what())
            });
        self.tally.check(
            c.rc == 0 || (c.ptr, c.len) == (SENTINEL_PTR, SENTINEL_LEN),
            || format!("{}: look-alike wrote out-params on failure", what()),
        );
        self.tally.check(abi == ours, || {
            format!("{}: C ABI {abi:?}, raw {ours:?}", what())
        });
    }

    fn image(&mut self, env: &[(&str, &[u8])], idx: u32, region: i32, flavor: i32) {
        self.tuples += 1;
        let what = || format!("image({idx}, {region}, {flavor})");
        let c = call_image(self.c_image, idx, region, flavor);
        let raw = nrtucode::get_memory_image(idx, region, flavor, env);
        let ours = Answer::of(raw);
        let abi = call_image(
            nrtucode_capi::nrtucode_get_memory_image,
            idx,
            region,
            flavor,
        );
        self.codes_agree(&what, c, ours, abi);
        let snapshot = Answer::of(nrtucode::get_memory_image(
            idx,
            region,
            flavor,
            &self.snapshot,
        ));
        self.tally.check(snapshot == ours, || {
            format!("{}: snapshot {snapshot:?}, raw {ours:?}", what())
        });
        if let (Some(i), Some(r), Some(f)) = (
            ImageIndex::from_raw(idx),
            Region::from_raw(region),
            Flavor::from_raw(flavor),
        ) {
            let typed = nrtucode::resolve_image(i, r, f, env);
            self.tally
                .check(typed == raw, || format!("{}: typed {typed:?}", what()));
        }
        if let Ok(bytes) = raw {
            self.payload(&what, c, bytes);
            if bytes.is_empty() && c.rc == 0 {
                self.cursor_place(&what, env, idx, flavor, c, bytes);
            }
        }
        if let Some(p) = self.partition {
            // In place: `signed_partition_of` checked every blob's digest once (`check_blobs`),
            // so a stored blob's bytes are the signed ones.
            let in_place = |region: i32| {
                p.get_memory_image(idx, region, flavor, env)
                    .and_then(|b| b.bytes().ok_or(ResolveErr::NullGetter))
            };
            let part = in_place(region);
            let place_of = match (raw, part) {
                (Ok([]), Ok(b @ [])) => Some((
                    place(b.as_ptr() as usize, |r| {
                        in_place(r).ok().map(|b| (b.as_ptr() as usize, b.len()))
                    }),
                    place(raw.map_or(0, |b| b.as_ptr() as usize), |r| {
                        nrtucode::get_memory_image(idx, r, flavor, env)
                            .ok()
                            .map(|b| (b.as_ptr() as usize, b.len()))
                    }),
                )),
                _ => None,
            };
            self.partition_answer(&what, c, raw, part, place_of);
        }
        if let Some(q) = self.compressed {
            let blob = q.get_memory_image(idx, region, flavor, env);
            self.compressed_answer(&what, raw, blob, &|out, loader| match blob {
                Ok(b) => b.load_into(out, loader).map(<[u8]>::to_vec),
                Err(_) => Ok(Vec::new()),
            });
        }
        for i in 0..self.c_partitions.len() {
            let run = &self.c_partitions[i];
            let a = run.image(idx, region, flavor);
            let place_of = (c.rc == 0 && c.len == 0 && a.rc == 0 && a.len == 0).then(|| {
                let mine = place(a.ptr as usize, |r| {
                    let x = run.image(idx, r, flavor);
                    (x.rc == 0).then_some((x.ptr as usize, x.len))
                });
                let theirs = place(c.ptr as usize, |r| {
                    let x = call_image(self.c_image, idx, r, flavor);
                    (x.rc == 0).then_some((x.ptr as usize, x.len))
                });
                (mine, theirs)
            });
            self.c_partition_answer(i, &what, c, a, place_of);
        }
        if let Some(twin) = twin_of(idx) {
            let c_twin = call_image(self.c_image, twin, region, flavor);
            let ours_twin = Answer::of(nrtucode::get_memory_image(twin, region, flavor, env));
            self.tally.check(c_twin == c && ours_twin == ours, || {
                format!(
                    "{}: NX SP twin {twin} differs: look-alike {c:?}/{c_twin:?}, ours {ours:?}/{ours_twin:?}",
                    what()
                )
            });
        }
    }

    /// A boundary cursor points at the same place relative to its image's other regions (the
    /// start or the end of which of them) in the look-alike and in ours.
    fn cursor_place(
        &mut self,
        what: &dyn Fn() -> String,
        env: &[(&str, &[u8])],
        idx: u32,
        flavor: i32,
        c: Answer,
        ours: &'static [u8],
    ) {
        let theirs = place(c.ptr as usize, |region| {
            let a = call_image(self.c_image, idx, region, flavor);
            (a.rc == 0).then_some((a.ptr as usize, a.len))
        });
        let mine = place(ours.as_ptr() as usize, |region| {
            nrtucode::get_memory_image(idx, region, flavor, env)
                .ok()
                .map(|b| (b.as_ptr() as usize, b.len()))
        });
        self.cursor_answers += 1;
        // A non-empty place also rules out a placeholder such as `NonNull::dangling()`.
        self.tally.check(!theirs.is_empty() && theirs == mine, || {
            format!(
                "{}: cursor is {theirs:?} of its image in the look-alike, {mine:?} in ours",
                what()
            )
        });
    }

    fn hwdecode(&mut self, idx: u32, kind: i32) {
        self.tuples += 1;
        let what = || format!("hwdecode({idx}, {kind})");
        let c = call_hw(self.c_hw, idx, kind);
        let raw = nrtucode::get_hwdecode_table(idx, kind);
        let ours = Answer::of(raw);
        let abi = call_hw(nrtucode_capi::nrtucode_get_hwdecode_table, idx, kind);
        self.codes_agree(&what, c, ours, abi);
        if let (Some(i), Some(k)) = (ImageIndex::from_raw(idx), ProfKind::from_raw(kind)) {
            let typed = nrtucode::resolve_hwdecode(i, k);
            self.tally
                .check(typed == raw, || format!("{}: typed {typed:?}", what()));
        }
        if let Ok(bytes) = raw {
            self.payload(&what, c, bytes);
        }
        if let Some(p) = self.partition {
            let part = p
                .get_hwdecode_table(idx, kind)
                .and_then(|b| b.bytes().ok_or(ResolveErr::NullGetter));
            self.partition_answer(&what, c, raw, part, None);
        }
        if let Some(q) = self.compressed {
            let blob = q.get_hwdecode_table(idx, kind);
            self.compressed_answer(&what, raw, blob, &|out, loader| match blob {
                Ok(b) => b.load_into(out, loader).map(<[u8]>::to_vec),
                Err(_) => Ok(Vec::new()),
            });
        }
        for i in 0..self.c_partitions.len() {
            let a = self.c_partitions[i].hwdecode(idx, kind);
            self.c_partition_answer(i, &what, c, a, None);
        }
    }
}

/// Carves the look-alike at `so`, packs it into a partition signed with the committed test
/// key and verifies it: the partition the oracle answers from too (held for the whole run).
fn signed_partition_of(
    so: &Path,
    compression: nrtucode_pack::Compression,
) -> Result<(&'static [u8], CheckedPartition<'static>), String> {
    let key = nrtucode_pack::SigningKey::from_pem(include_str!("../../../keys/test-ed25519.pem"))
        .map_err(|e| e.to_string())?;
    let blobs = nrtucode_pack::Blobs::from_library(so).map_err(|e| e.to_string())?;
    let expected = match LIBRARY {
        nrtucode_lookalike::LibraryBuild::Full => TableClass::Full,
        nrtucode_lookalike::LibraryBuild::Front => TableClass::Front,
    };
    let options = nrtucode_pack::PackOptions {
        security_counter: 1,
        key: Some(&key),
    };
    let bytes: &'static [u8] = Box::leak(
        nrtucode_pack::pack_with(&blobs, &options, compression)
            .map_err(|e| e.to_string())?
            .0
            .into_boxed_slice(),
    );
    let policy = Policy {
        min_security_counter: 1,
        expected_class: expected,
    };
    let partition = Partition::parse(bytes)
        .map_err(|e| e.to_string())?
        .verify(&key.public_key(), &policy)
        .map_err(|e| e.to_string())?;
    let partition = partition
        .check_blobs(&mut nrtucode::digest::SoftSha256::new())
        .map_err(|e| e.to_string())?;
    Ok((bytes, partition))
}

/// The table class of the look-alike under comparison, as the C API names it.
fn c_table_class() -> c_int {
    match LIBRARY {
        nrtucode_lookalike::LibraryBuild::Full => nrtucode_capi::handle::NRTUCODE_TABLES_FULL,
        nrtucode_lookalike::LibraryBuild::Front => nrtucode_capi::handle::NRTUCODE_TABLES_FRONT,
    }
}

/// A handle over `bytes` through the C API, with the test key's PEM text.
fn c_handle(bytes: &[u8]) -> Result<*mut nrtucode_capi::handle::NrtucodePartition, String> {
    let pem = include_str!("../../../keys/test-ed25519.pub.pem");
    let mut handle = std::ptr::null_mut();
    // SAFETY: every pointer points at live data of the given length; `handle` is a local.
    let rc = unsafe {
        nrtucode_capi::handle::nrtucode_partition_open_memory(
            bytes.as_ptr().cast(),
            bytes.len(),
            pem.as_ptr().cast(),
            pem.len(),
            1,
            c_table_class(),
            &mut handle,
        )
    };
    if rc != 0 {
        let mut message = [0u8; 512];
        // SAFETY: `message` is valid for writes of its length.
        unsafe {
            nrtucode_capi::handle::nrtucode_partition_last_error(
                message.as_mut_ptr().cast(),
                message.len(),
            )
        };
        let text = String::from_utf8_lossy(&message);
        return Err(format!("open: {rc} {}", text.trim_end_matches('\0')));
    }
    Ok(handle)
}

/// Where a cursor pointer lies relative to the non-empty regions `region_of` resolves for the
/// same image: each `(region, "start" | "end")` it equals.
fn place(
    cursor: usize,
    region_of: impl Fn(i32) -> Option<(usize, usize)>,
) -> Vec<(i32, &'static str)> {
    let mut out = Vec::new();
    for region in 0..4 {
        if let Some((ptr, len)) = region_of(region).filter(|(_, len)| *len > 0) {
            if cursor == ptr {
                out.push((region, "start"));
            }
            if cursor == ptr + len {
                out.push((region, "end"));
            }
        }
    }
    out
}

/// Sets the two variables in the real process environment.
fn set_process_env(case: &EnvCase) {
    for (name, value) in [
        (FLAVOR_VAR, case.flavor.as_deref()),
        (REMOVED_FLAG_VAR, case.removed_flag),
    ] {
        // SAFETY: this test binary has a single thread (harness = false) and nothing else in
        // it reads the environment concurrently.
        unsafe {
            match value {
                Some(v) => std::env::set_var(name, OsStr::from_bytes(v)),
                None => std::env::remove_var(name),
            }
        }
    }
}

/// Points file descriptor 2 at `target` until dropped.
struct StderrRedirect {
    saved: c_int,
}

impl StderrRedirect {
    fn to(target: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(target)?;
        // SAFETY: plain descriptor calls on fd 2 and a file we own; `saved` is restored on drop.
        let saved = unsafe { libc::dup(2) };
        if saved < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: as above; `file` stays open for the call.
        if unsafe { libc::dup2(file.as_raw_fd(), 2) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Self { saved })
    }
}

impl Drop for StderrRedirect {
    fn drop(&mut self) {
        // SAFETY: `saved` is the descriptor `dup` returned; restore fd 2 and release it.
        unsafe {
            libc::dup2(self.saved, 2);
            libc::close(self.saved);
        }
    }
}

/// The removed flag prints exactly one line per tripped call, on both sides.
fn check_removal_notices(oracle: &mut Oracle, dir: &Path) {
    let log = dir.join("stderr.log");
    set_process_env(&EnvCase {
        flavor: None,
        removed_flag: Some(b"1"),
    });
    {
        let _redirect = StderrRedirect::to(&log).expect("redirect stderr");
        call_image(oracle.c_image, 7, 0, 1);
        call_image(nrtucode_capi::nrtucode_get_memory_image, 7, 0, 1);
        call_image(oracle.c_image, 38, 0, 1); // index first: no notice
        call_image(nrtucode_capi::nrtucode_get_memory_image, 38, 0, 1);
    }
    let text = std::fs::read_to_string(&log).expect("stderr log");
    let lines: Vec<&str> = text.lines().collect();
    oracle.tally.check(lines.len() == 2, || {
        format!("removal notices: expected 2 lines, got {text:?}")
    });
    oracle.tally.check(
        lines.first().map(|l| format!("{l}\n")).as_deref() == Some(REMOVAL_MESSAGE),
        || format!("look-alike notice {:?}", lines.first()),
    );
    oracle.tally.check(
        lines.get(1).is_some_and(|l| l.contains(REMOVED_FLAG_VAR)),
        || format!("C ABI notice {:?}", lines.get(1)),
    );
    if lines.len() == 2 && lines[0] != lines[1] {
        println!("note: the look-alike's and the core's removal notices differ in wording");
    }
}

/// Builds a look-alike with three deliberate bugs and checks that the oracle reports each one:
/// the comparison must be able to fail.
fn mutants_are_caught(dir: &Path, opts: &Options) -> Result<(), String> {
    let source = nrtucode_lookalike::generate_c(opts);
    let mutated = source
        .replacen("\"NRTUCODE FIXTURE ", "\"MRTUCODE FIXTURE ", 1)
        .replacen("if (-c == 0)", "if (-c == 0 && 0)", 1)
        .replacen("strcmp(fv, \"test\")", "strcmp(fv, \"Test\")", 1);
    if mutated.len() != source.len() + 5 || mutated.matches("&& 0)").count() != 1 {
        return Err("a mutation did not apply".to_owned());
    }
    let c_path = dir.join("mutant.c");
    std::fs::write(&c_path, mutated).map_err(|e| e.to_string())?;
    let so = dir.join("mutant.so");
    build_shared_object(&c_path, &so, OptLevel::O2, false)?;
    // SAFETY: our generated (mutated) look-alike; its initialisers do nothing.
    let lib = unsafe { libloading::Library::new(&so) }.map_err(|e| e.to_string())?;
    // SAFETY: the symbols have exactly these signatures in the generated C.
    let (c_image, c_hw) = unsafe {
        let image: libloading::Symbol<ImageFn> = lib
            .get(opts.memory_image_symbol().as_bytes())
            .map_err(|e| e.to_string())?;
        let hw: libloading::Symbol<HwFn> = lib
            .get(opts.hwdecode_table_symbol().as_bytes())
            .map_err(|e| e.to_string())?;
        (*image, *hw)
    };
    let cases: [(&str, EnvCase, u32, i32); 3] = [
        (
            "blob bytes",
            EnvCase {
                flavor: None,
                removed_flag: None,
            },
            0,
            1,
        ),
        (
            "removed flag",
            EnvCase {
                flavor: None,
                removed_flag: Some(b"1"),
            },
            7,
            1,
        ),
        (
            "auto flavor",
            EnvCase {
                flavor: Some(b"test".to_vec()),
                removed_flag: None,
            },
            7,
            0,
        ),
    ];
    let _quiet = StderrRedirect::to(Path::new("/dev/null")).map_err(|e| e.to_string())?;
    for (name, case, idx, flavor) in cases {
        let mut oracle = Oracle::new(c_image, c_hw);
        set_process_env(&case);
        oracle.snapshot = EnvSnapshot::capture();
        let pairs = case.pairs();
        oracle.image(&pairs, idx, 0, flavor);
        if oracle.tally.mismatches == 0 {
            return Err(format!("the oracle missed the {name} mutant"));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let start = Instant::now();
    if let Err(e) = build_matches_library() {
        eprintln!("differential: {e}");
        return ExitCode::FAILURE;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = Options::new(LIBRARY)
        .with_prefix(LOOKALIKE_PREFIX)
        .expect("prefix");
    let written = write_sources(dir.path(), &opts).expect("write look-alike");
    let so = dir.path().join(LIBRARY.library_name());
    if let Err(e) = build_shared_object(&written.c_source, &so, OptLevel::O2, false) {
        eprintln!("differential: {e}");
        return ExitCode::FAILURE;
    }
    let built = start.elapsed();

    // SAFETY: the library is our generated look-alike; its initialisers do nothing.
    let lib = unsafe { libloading::Library::new(&so) }.expect("dlopen look-alike");
    // SAFETY: the symbols have exactly these signatures in the generated C.
    let (c_image, c_hw) = unsafe {
        let image: libloading::Symbol<ImageFn> = lib
            .get(opts.memory_image_symbol().as_bytes())
            .expect("image resolver");
        let hw: libloading::Symbol<HwFn> = lib
            .get(opts.hwdecode_table_symbol().as_bytes())
            .expect("hwdecode resolver");
        (*image, *hw)
    };
    let mut oracle = Oracle::new(c_image, c_hw);
    let stored = match signed_partition_of(&so, nrtucode_pack::Compression::Stored) {
        Ok((bytes, p)) => {
            oracle.partition = Some(p);
            bytes
        }
        Err(e) => {
            eprintln!("differential: packing the look-alike: {e}");
            return ExitCode::FAILURE;
        }
    };
    let deflate = match signed_partition_of(&so, nrtucode_pack::Compression::Deflate) {
        Ok((bytes, p)) => {
            oracle.compressed = Some(p);
            bytes
        }
        Err(e) => {
            eprintln!("differential: packing the look-alike with deflate: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The partition-backed C ABI: a handle over each packing, and the drop-in's partition
    // (the deflate one, named by NRTUCODE_PARTITION, opened at its first call).
    for (name, bytes) in [
        ("C ABI handle (stored)", stored),
        ("C ABI handle (deflate)", deflate),
    ] {
        match c_handle(bytes) {
            Ok(h) => oracle
                .c_partitions
                .push(CPartition::new(name, CSource::Handle(h))),
            Err(e) => {
                eprintln!("differential: {name}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let env_file = dir.path().join("deflate.part");
    std::fs::write(&env_file, deflate).expect("write the partition");
    // SAFETY: this test binary has a single thread (harness = false).
    unsafe { std::env::set_var(nrtucode_capi::from_env::PARTITION_VAR, &env_file) };
    let env_partition: &'static nrtucode_capi::from_env::EnvPartition =
        Box::leak(Box::new(nrtucode_capi::from_env::EnvPartition::new(
            nrtucode_pack::SigningKey::from_pem(include_str!("../../../keys/test-ed25519.pem"))
                .expect("test key")
                .public_key(),
            Policy {
                min_security_counter: 1,
                expected_class: match LIBRARY {
                    nrtucode_lookalike::LibraryBuild::Full => TableClass::Full,
                    nrtucode_lookalike::LibraryBuild::Front => TableClass::Front,
                },
            },
        )));
    if let Err(refusal) = env_partition.get() {
        eprintln!("differential: NRTUCODE_PARTITION: {}", refusal.message);
        return ExitCode::FAILURE;
    }
    oracle.c_partitions.push(CPartition::new(
        "the drop-in's NRTUCODE_PARTITION (deflate)",
        CSource::Env(env_partition),
    ));

    check_removal_notices(&mut oracle, dir.path());
    if let Err(e) = mutants_are_caught(dir.path(), &opts) {
        eprintln!("differential: {e}");
        return ExitCode::FAILURE;
    }
    println!("differential: all three planted look-alike mutants were caught");

    let (idxs, regions, flavors) = (idx_values(), region_values(), flavor_values());
    let matrix = env_matrix();
    let mut rng = SplitMix64::new(0x6e72_7475_636f_6465); // "nrtucode"
    let (mut grid_tuples, mut random_tuples) = (0u64, 0u64);
    {
        // ~200k tripped calls print a removal notice each: keep them out of the log.
        let _quiet = StderrRedirect::to(Path::new("/dev/null")).expect("silence stderr");
        for case in &matrix {
            set_process_env(case);
            oracle.snapshot = EnvSnapshot::capture();
            let pairs = case.pairs();
            let env = pairs.as_slice();
            let before = oracle.tuples;
            for &idx in &idxs {
                for &region in &regions {
                    for &flavor in &flavors {
                        oracle.image(env, idx, region, flavor);
                    }
                }
                for kind in KIND_VALUES {
                    oracle.hwdecode(idx, kind);
                }
            }
            grid_tuples += oracle.tuples - before;
            let before = oracle.tuples;
            for _ in 0..RANDOM_PER_CELL {
                let (idx, region, flavor) = (rng.idx(), rng.region(), rng.flavor());
                oracle.image(env, idx, region, flavor);
            }
            random_tuples += oracle.tuples - before;
        }
        for _ in 0..200_000 {
            let (idx, kind) = (rng.idx(), rng.kind());
            oracle.hwdecode(idx, kind);
            random_tuples += 1;
        }
    }
    set_process_env(&EnvCase {
        flavor: None,
        removed_flag: None,
    });

    let t = &oracle.tally;
    println!(
        "differential ({} vs {}): {} tuples ({} grid over {} env cells, {} random), {} comparisons, {} mismatches; {} distinct blobs byte-compared; gcc {:.1?}, total {:.1?}",
        LIBRARY.library_name(),
        if LIBRARY == nrtucode_lookalike::LibraryBuild::Front {
            "front features"
        } else {
            "default features"
        },
        oracle.tuples,
        grid_tuples,
        matrix.len(),
        random_tuples,
        t.comparisons,
        t.mismatches,
        oracle.verified.len(),
        built,
        start.elapsed()
    );
    println!(
        "differential: {} cursor answers placed like the look-alike's (start/end of which region)",
        oracle.cursor_answers
    );
    println!(
        "differential: {} answers also from a signed partition packed from the carved look-alike ({} distinct blobs byte-compared)",
        oracle.partition_answers,
        oracle.partition_verified.len()
    );
    println!(
        "differential: {} answers also from that partition packed with deflate ({} distinct blobs resolved into a buffer and byte-compared, {} of them decoded)",
        oracle.compressed_answers,
        oracle.compressed_verified.len(),
        oracle.compressed_decoded
    );
    for run in &oracle.c_partitions {
        println!(
            "differential: {} answers also through the partition-backed C ABI, {} ({} distinct blobs byte-compared, {} cursors placed like the look-alike's)",
            run.answers,
            run.name,
            run.verified.len(),
            run.cursors
        );
    }
    for sample in &t.samples {
        println!("  mismatch: {sample}");
    }
    if t.mismatches == 0
        && random_tuples >= 1_000_000
        && oracle.partition_answers >= oracle.tuples
        && oracle.compressed_answers >= oracle.tuples
        && oracle.compressed_decoded > 0
        && oracle.c_partitions.len() == 3
        && oracle
            .c_partitions
            .iter()
            .all(|run| run.answers >= oracle.tuples && run.cursors > 0)
    {
        println!("differential: 1 passed, 0 failed");
        ExitCode::SUCCESS
    } else {
        println!("differential: 0 passed, 1 failed");
        ExitCode::FAILURE
    }
}

/// The twin of a first NX SP slot (`ImageIndex::TWINS`), which must answer with the same
/// pointers.
fn twin_of(idx: u32) -> Option<u32> {
    nrtucode::ImageIndex::TWINS
        .iter()
        .find(|(first, _)| first.raw() == idx)
        .map(|(_, twin)| twin.raw())
}
