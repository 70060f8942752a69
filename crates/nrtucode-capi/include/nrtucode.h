/*
 * nrtucode.h - C ABI of nrtucode, a drop-in for the vendor's firmware-image resolvers.
 *
 * Install with `scripts/install-c.sh --prefix DIR` (libnrtucode.so.0, libnrtucode.a, this
 * header in include/nrtucode/, nrtucode.pc) and build with
 * `cc app.c $(pkg-config --cflags --libs nrtucode)`, or `pkg-config --static` for the archive
 * (it adds the system libraries a Rust static library needs, on linux-gnu
 * -lutil -lrt -lpthread -lm -ldl -lc: rustc's list without the shared unwinder -lgcc_s, which
 * the compiler driver links itself, libgcc_eh with -static). Both functions answer exactly like the vendor's
 * libnrtucode_internal.so (default build) or its reduced front library libnrtucode.so (nrtucode-capi built with
 * `--no-default-features --features front`): same arguments, same return codes, same
 * environment variables. Blobs are embedded in the library; returned pointers stay valid for
 * the life of the process and must not be written through or freed.
 *
 * Thread safety: both functions are reentrant. nrtucode_get_memory_image reads the process
 * environment (like getenv), so it must not race with setenv/putenv/unsetenv in another thread.
 */
#ifndef NRTUCODE_H
#define NRTUCODE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- return codes (the vendor's, plus one of ours) ---- */

/** Success: *out_ptr and *out_len were written. */
#define NRTUCODE_OK 0
/** idx is above 37. */
#define NRTUCODE_E_INDEX 1
/** Not found: empty slot (idx 36), no descriptor for the flavor, region above 3, profiler kind
 *  not 0/1, or no profiler table in the slot. */
#define NRTUCODE_E_NOT_FOUND 2
/** The image exists in the vendor's table but is not in this build (a NULL getter; only a
 *  reduced build such as the front selection answers this). */
#define NRTUCODE_E_NOT_BUILT 3
/** NRTUCODE_MPLUS_ON_MARIANA is set to exactly "1", a removed flag. One line is printed to
 *  stderr; no image is resolved. */
#define NRTUCODE_E_REMOVED_FLAG 8
/** Not a vendor code: the call would succeed but out_ptr or out_len is NULL (the vendor would
 *  crash). Nothing is written. Calls that fail for another reason return that code instead. */
#define NRTUCODE_E_NULL_OUT 22

/* ---- arguments ---- */

/* region */
#define NRTUCODE_REGION_IRAM 0
#define NRTUCODE_REGION_DRAM 1
#define NRTUCODE_REGION_SRAM 2
#define NRTUCODE_REGION_EXTRAM 3

/* flavor: 0 reads NEURON_UCODE_FLAVOR ("debug"/"DEBUG" -> 2, "test"/"TEST" -> 3, anything else
 * or unset -> 1, compared byte for byte); 17..19 exist only for the Q7 POOL slots and are never
 * chosen by the environment. */
#define NRTUCODE_FLAVOR_AUTO 0
#define NRTUCODE_FLAVOR_PERF 1 /* RELEASE in SUNDA */
#define NRTUCODE_FLAVOR_DEBUG 2
#define NRTUCODE_FLAVOR_TEST 3
#define NRTUCODE_FLAVOR_DKL_PERF 17
#define NRTUCODE_FLAVOR_DKL_DEBUG 18
#define NRTUCODE_FLAVOR_DKL_TEST 19

/* Every non-empty blob returned (*out_len > 0) starts at an address that is a multiple of
 * NRTUCODE_BLOB_ALIGN bytes, enough for DMA engines that need 16-byte aligned sources
 * (nrtucode::catalog::BLOB_ALIGN in Rust). */
#define NRTUCODE_BLOB_ALIGN 16

/* kind of nrtucode_get_hwdecode_table */
#define NRTUCODE_PROF_CAM 0   /* 0x400 bytes: 64 x {u32 opcode, mask, enable, reserved} */
#define NRTUCODE_PROF_TABLE 1 /* 0x2000 bytes: 64 x 128-byte records */

/* idx is the flat (generation, engine) index 0..37, per generation in the order NX ACT, DVE,
 * POOL, PE, SP, SP, then Q7 POOL: SUNDA 0..6, CAYMAN 7..14, MARIANA 15..22, MARIANA_PLUS
 * 23..30, MAVERICK 31..37 (no NX ACT: 31 DVE, 32 POOL, 33 PE, 34/35 SP, 36 empty, 37 Q7 POOL).
 * The two NX SP slots of a generation return the same pointers. */

/**
 * Resolves a firmware image region.
 *
 * Order of checks (as the vendor): idx > 37 -> 1; NRTUCODE_MPLUS_ON_MARIANA == "1" -> 8;
 * flavor 0 resolved from NEURON_UCODE_FLAVOR; empty slot or no descriptor with that flavor -> 2;
 * region outside 0..3 -> 2; image not in this build -> 3; else 0 with *out_ptr / *out_len set.
 * A boundary cursor ("present but empty") succeeds with *out_len == 0 and a real, non-NULL
 * *out_ptr at the vendor's address: one past the end of the same image's DRAM blob (most
 * cursors), one past the end of its SRAM blob, or the start of its DRAM blob, exactly where the
 * vendor's cursor points (e.g. CAYMAN NX ACT PERF SRAM == DRAM pointer + DRAM length). It is
 * never a placeholder: memcpy(dst, p, 0) and p - dram_ptr are well defined.
 * On any code but 0 nothing is written.
 */
int nrtucode_get_memory_image(unsigned idx, int region, int flavor,
                              const void **out_ptr, size_t *out_len);

/**
 * Resolves a HW instruction-decode profiler table (PROF_CAM or PROF_TABLE).
 *
 * idx > 37 -> 1; kind not 0/1 -> 2; no profiler in the slot (SUNDA, NX SP, Q7 POOL, idx 36;
 * MAVERICK in the front build) -> 2; else 0. No flavor, no environment, never 3 or 8.
 * On any code but 0 nothing is written.
 */
int nrtucode_get_hwdecode_table(unsigned idx, int kind,
                                const void **out_ptr, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif /* NRTUCODE_H */
