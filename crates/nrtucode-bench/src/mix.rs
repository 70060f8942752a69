//! The fixed input mix: valid hits over every generation, region and flavor family (including
//! the longest descriptor scan), and every error class the full build can produce.

/// `(idx, region, flavor)` for the explicit-flavor paths: 18 hits, 8 errors.
pub const IMAGE_MIX: [(u32, i32, i32); 26] = [
    // Hits.
    (0, 0, 1),   // SUNDA NX ACT IRAM, RELEASE (one descriptor)
    (5, 1, 1),   // SUNDA NX SP (twin slot) DRAM
    (6, 3, 1),   // SUNDA Q7 POOL EXTRAM
    (7, 0, 1),   // CAYMAN NX ACT IRAM PERF (first descriptor)
    (7, 1, 2),   // CAYMAN NX ACT DRAM DEBUG
    (8, 2, 3),   // CAYMAN NX DVE SRAM TEST
    (13, 0, 17), // CAYMAN Q7 POOL DKL_PERF
    (13, 1, 18), // DKL_DEBUG
    (13, 3, 19), // DKL_TEST
    (13, 0, 3),  // TEST: the last of six descriptors, the longest scan
    (14, 0, 2),  // CAYMAN Q7 POOL twin, DEBUG
    (17, 0, 2),  // MARIANA NX POOL DEBUG
    (21, 2, 19), // MARIANA Q7 POOL DKL_TEST
    (23, 0, 1),  // MARIANA_PLUS NX ACT PERF
    (29, 0, 3),  // MARIANA_PLUS Q7 POOL TEST
    (31, 0, 3),  // MAVERICK NX DVE TEST
    (34, 2, 1),  // MAVERICK NX SP SRAM PERF
    (37, 0, 2),  // MAVERICK Q7 POOL DEBUG
    // Errors.
    (38, 0, 1),       // code 1: index out of range
    (u32::MAX, 0, 1), // code 1
    (36, 0, 1),       // code 2: empty slot (MAVERICK's gap)
    (32, 0, 2),       // code 2: flavor not found (MAVERICK NX POOL ships no DEBUG)
    (7, 0, 17),       // code 2: DKL key on an NX slot
    (7, 0, -1),       // code 2: no such key
    (7, 4, 1),        // code 2: region out of range
    (7, -1, 1),       // code 2: negative region
];

/// `(idx, region)` for the auto path (flavor 0): the same tuples, flavor left to the environment.
/// With `NEURON_UCODE_FLAVOR` unset every one resolves as PERF; the error classes left are the
/// index bound, the empty slot and the region bound.
pub const AUTO_MIX: [(u32, i32, i32); 26] = {
    let mut mix = IMAGE_MIX;
    let mut i = 0;
    while i < mix.len() {
        mix[i].2 = 0;
        i += 1;
    }
    mix
};

/// `(idx, kind)` for the profiler resolver: 4 hits, 5 errors.
pub const HWDECODE_MIX: [(u32, i32); 9] = [
    (7, 0),  // CAYMAN NX ACT PROF_CAM
    (7, 1),  // PROF_TABLE
    (18, 1), // MARIANA NX PE PROF_TABLE
    (33, 0), // MAVERICK NX PE PROF_CAM
    (0, 0),  // code 2: SUNDA, no profiler
    (11, 1), // code 2: NX SP, no profiler
    (7, 2),  // code 2: kind out of range
    (7, -1), // code 2
    (38, 0), // code 1
];
