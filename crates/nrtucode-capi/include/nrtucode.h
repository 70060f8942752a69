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
 * The drop-in without firmware (nrtucode-capi built with `--no-default-features --features
 * partition`, `scripts/install-c.sh --partition`) embeds no blob: the two functions answer from
 * the signed partition file named at run time by NRTUCODE_PARTITION (an absolute path), opened
 * and fully verified once, at the first call, with the public key fixed at build time. When it
 * cannot be opened (unset, missing, unsigned, another key, rollback, damaged...), every
 * nrtucode_get_memory_image call returns NRTUCODE_E_NOT_BUILT (3) and every
 * nrtucode_get_hwdecode_table call NRTUCODE_E_NOT_FOUND (2), the reason is printed once on
 * stderr and nrtucode_partition_last_error() gives it. Returned pointers stay valid for the life
 * of the process.
 *
 * Every build also has the partition handle API below (nrtucode_partition_open_file ...).
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
/** Not a vendor code (EBADF): a partition handle that is NULL, closed or was never opened
 *  (nrtucode_partition_get_*). Nothing is written. */
#define NRTUCODE_E_BAD_HANDLE 9
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

/* ---- a signed partition through a handle ----
 *
 * A partition (`nrtucode pack`) carries the vendor's tables and every blob, signed with
 * ed25519; it is updated apart from the program. Open it with the public key it must verify
 * with; the handle then answers the two resolvers exactly like the vendor's library (same
 * arguments, codes, environment reads), with pointers into memory the handle owns.
 *
 * Open verifies everything once, in this order: the structure, the key ID and signature, the
 * minimum security counter, the table class, then every blob's SHA-256 against the signed table
 * of contents (a compressed blob: its stream's digest, then it is decoded, once, into memory
 * the handle owns, and the decoded digest checked). No byte that was not checked is ever
 * handed out, and a resolver never fails for the data's sake.
 *
 * Pointers a handle's resolvers return stay valid until the handle is closed. A handle is safe
 * to use from many threads at once; close it once, when no thread uses it any more (close waits
 * for calls in flight). A handle is a number, never an address: a NULL, closed or made-up
 * handle gets NRTUCODE_E_BAD_HANDLE / NRTUCODE_PARTITION_E_HANDLE, never a crash. */

/** The opaque handle of an opened partition. */
typedef struct nrtucode_partition nrtucode_partition;

/* table_class of the open functions: which vendor table set the partition must follow */
#define NRTUCODE_TABLES_FULL 1  /* libnrtucode_internal.so: every generation and flavor */
#define NRTUCODE_TABLES_FRONT 2 /* libnrtucode.so: PERF/RELEASE and DKL_PERF, no MAVERICK */

/* Refusal codes of the open functions and nrtucode_partition_last_error(); each with a message
 * that names what was refused (the file, the blob and its first use, both counters...). */
#define NRTUCODE_PARTITION_OK 0
#define NRTUCODE_PARTITION_E_ARGUMENT 1      /* NULL path/bytes/key/out, unknown table_class */
#define NRTUCODE_PARTITION_E_KEY 2           /* not 32 raw bytes nor an ed25519 SPKI PEM public key */
#define NRTUCODE_PARTITION_E_IO 3            /* cannot open or read the file, not a regular file */
#define NRTUCODE_PARTITION_E_FORMAT 4        /* not a partition of this format: truncated, bad magic, ... */
#define NRTUCODE_PARTITION_E_UNSIGNED 5      /* the partition is unsigned */
#define NRTUCODE_PARTITION_E_UNKNOWN_KEY 6   /* signed by another key (both key IDs in the message) */
#define NRTUCODE_PARTITION_E_BAD_SIGNATURE 7 /* the signature does not verify: signed bytes changed */
#define NRTUCODE_PARTITION_E_ROLLBACK 8      /* security counter below the minimum (both in the message) */
#define NRTUCODE_PARTITION_E_WRONG_CLASS 9   /* follows the other table class */
#define NRTUCODE_PARTITION_E_DIGEST 10       /* a blob does not hash to its signed digest (named) */
#define NRTUCODE_PARTITION_E_DECODE 11       /* a compressed blob does not decode to its bytes (named) */
#define NRTUCODE_PARTITION_E_HANDLE 12       /* a NULL, closed or unknown handle (close) */
#define NRTUCODE_PARTITION_E_NOT_CONFIGURED 13 /* NRTUCODE_PARTITION unset or not absolute */
#define NRTUCODE_PARTITION_E_MEMORY 14       /* the partition or its decoded blobs cannot be allocated */

/**
 * Opens the partition file at path (read whole into memory the handle owns). key is the public
 * key its signature must verify with: key_len == 32 for the raw ed25519 key, else key_len bytes
 * of SPKI PEM text (`nrtucode key public` writes it; a terminating NUL may be counted).
 * min_security_counter is the lowest counter accepted; table_class NRTUCODE_TABLES_FULL or
 * NRTUCODE_TABLES_FRONT. Returns NRTUCODE_PARTITION_OK and sets *out to the handle, or a
 * NRTUCODE_PARTITION_E_* code and sets *out to NULL (when out is not NULL).
 */
int nrtucode_partition_open_file(const char *path, const void *key, size_t key_len,
                                 unsigned min_security_counter, int table_class,
                                 nrtucode_partition **out);

/**
 * Opens the partition in the len bytes at bytes, copied first: the caller may free or reuse its
 * buffer as soon as this returns. Otherwise as nrtucode_partition_open_file.
 */
int nrtucode_partition_open_memory(const void *bytes, size_t len, const void *key,
                                   size_t key_len, unsigned min_security_counter,
                                   int table_class, nrtucode_partition **out);

/**
 * Closes handle: frees its memory; every pointer its resolvers returned becomes invalid.
 * NRTUCODE_PARTITION_OK, or NRTUCODE_PARTITION_E_HANDLE for NULL, a handle already closed, or
 * one never opened (nothing is done).
 */
int nrtucode_partition_close(nrtucode_partition *handle);

/**
 * nrtucode_get_memory_image over the handle's partition: the same arguments, order of checks,
 * environment reads and codes (0, 1, 2, 3, 8, 22), plus NRTUCODE_E_BAD_HANDLE. A boundary
 * cursor points at the same boundary of the same blob, in the handle's memory.
 */
int nrtucode_partition_get_memory_image(const nrtucode_partition *handle, unsigned idx,
                                        int region, int flavor, const void **out_ptr,
                                        size_t *out_len);

/** nrtucode_get_hwdecode_table over the handle's partition (0, 1, 2, 22, NRTUCODE_E_BAD_HANDLE). */
int nrtucode_partition_get_hwdecode_table(const nrtucode_partition *handle, unsigned idx,
                                          int kind, const void **out_ptr, size_t *out_len);

/**
 * The calling thread's last refusal: returns its code (NRTUCODE_PARTITION_OK after a
 * successful open, or before any refusal) and, when message is not NULL and size > 0, copies
 * its one-line message there, cut to size - 1 bytes and NUL-terminated. Set by a failed open, a
 * bad handle, and, in the partition-backed build, by each vendor call that the unopenable
 * partition answered with 3 or 2.
 */
int nrtucode_partition_last_error(char *message, size_t size);

/**
 * What this library trusts and answers from, in one line: in the partition-backed build, the key
 * built into this library (its ID; the repository's test key named as such), the partition
 * NRTUCODE_PARTITION names and the verdict of its open (opened now if it was not yet), with the
 * reason of a refusal; in a build with embedded blobs, where they came from. Returns
 * NRTUCODE_PARTITION_OK when the library answers, else the open's refusal code; when message is
 * not NULL and size > 0, copies the line there, cut to size - 1 bytes and NUL-terminated.
 */
int nrtucode_library_report(char *message, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* NRTUCODE_H */
