/*
 * Exercises every return code of the nrtucode C ABI through the public header.
 * Built by tests/c_program.rs against libnrtucode_capi.a and libnrtucode_capi.so.
 * Define NRTUCODE_EXPECT_FRONT=1 when the library was built with the front feature selection.
 */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nrtucode.h"

#ifdef NRTUCODE_EXPECT_BLOB_ALIGN
_Static_assert(NRTUCODE_BLOB_ALIGN == NRTUCODE_EXPECT_BLOB_ALIGN,
               "nrtucode.h's NRTUCODE_BLOB_ALIGN differs from nrtucode::catalog::BLOB_ALIGN");
#endif

#ifndef NRTUCODE_EXPECT_FRONT
#define NRTUCODE_EXPECT_FRONT 0
#endif

static int passed, failed;
static const void *const SENTINEL_PTR = (const void *)(uintptr_t)0x5a5a;
static const size_t SENTINEL_LEN = 7;

static void check(int ok, const char *what, int line)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL line %d: %s\n", line, what);
    }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

/* Calls the image resolver with sentinel out-values; returns the code. */
static int image(unsigned idx, int region, int flavor, const void **p, size_t *n)
{
    *p = SENTINEL_PTR;
    *n = SENTINEL_LEN;
    return nrtucode_get_memory_image(idx, region, flavor, p, n);
}

static int table(unsigned idx, int kind, const void **p, size_t *n)
{
    *p = SENTINEL_PTR;
    *n = SENTINEL_LEN;
    return nrtucode_get_hwdecode_table(idx, kind, p, n);
}

#define UNTOUCHED (p == SENTINEL_PTR && n == SENTINEL_LEN)

int main(void)
{
    const void *p, *q;
    size_t n, m;

    unsetenv("NRTUCODE_MPLUS_ON_MARIANA");
    unsetenv("NEURON_UCODE_FLAVOR");

    /* 0: CAYMAN NX ACT PERF IRAM, present in every build. */
    CHECK(image(7, NRTUCODE_REGION_IRAM, NRTUCODE_FLAVOR_PERF, &p, &n) == NRTUCODE_OK);
    CHECK(n == 0x13dc0 && p != NULL && p != SENTINEL_PTR);
    /* 0 with length 0: a boundary cursor ("present but empty"). */
    CHECK(image(7, NRTUCODE_REGION_SRAM, NRTUCODE_FLAVOR_PERF, &p, &n) == NRTUCODE_OK);
    CHECK(n == 0 && p != SENTINEL_PTR && p != NULL);
    /* ...at the vendor's address: one past the end of the same image's DRAM blob. */
    CHECK(image(7, NRTUCODE_REGION_DRAM, NRTUCODE_FLAVOR_PERF, &q, &m) == NRTUCODE_OK);
    CHECK(m > 0 && p == (const void *)((const unsigned char *)q + m));
    /* The two NX SP slots alias the same images. */
    CHECK(image(11, NRTUCODE_REGION_IRAM, NRTUCODE_FLAVOR_PERF, &p, &n) == NRTUCODE_OK);
    CHECK(image(12, NRTUCODE_REGION_IRAM, NRTUCODE_FLAVOR_PERF, &q, &m) == NRTUCODE_OK);
    CHECK(p == q && n == m && n > 0);
    /* DKL flavors are argument-only, Q7 POOL only. */
    CHECK(image(13, NRTUCODE_REGION_IRAM, NRTUCODE_FLAVOR_DKL_PERF, &p, &n) == NRTUCODE_OK);
    CHECK(image(7, NRTUCODE_REGION_IRAM, NRTUCODE_FLAVOR_DKL_PERF, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);

    /* 1: index out of range. */
    CHECK(image(38, 0, 1, &p, &n) == NRTUCODE_E_INDEX && UNTOUCHED);
    CHECK(image(UINT_MAX, 0, 1, &p, &n) == NRTUCODE_E_INDEX && UNTOUCHED);
    CHECK(table(38, 0, &p, &n) == NRTUCODE_E_INDEX && UNTOUCHED);

    /* 2: empty slot, bad region, unknown flavor, bad kind, no profiler. */
    CHECK(image(36, 0, 1, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);
    CHECK(image(7, 4, 1, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);
    CHECK(image(7, -1, 1, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);
    CHECK(image(7, 0, 4, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);
    CHECK(image(7, 0, INT_MIN, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);
    CHECK(table(7, 2, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);
    CHECK(table(7, -1, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);
    CHECK(table(0, NRTUCODE_PROF_CAM, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);
    CHECK(table(36, NRTUCODE_PROF_TABLE, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);

    /* Profiler tables. */
    CHECK(table(7, NRTUCODE_PROF_CAM, &p, &n) == NRTUCODE_OK && n == 0x400);
    CHECK(table(7, NRTUCODE_PROF_TABLE, &p, &n) == NRTUCODE_OK && n == 0x2000);

    /* 3 (front build) or 0 (full build): DEBUG images and MAVERICK. */
    if (NRTUCODE_EXPECT_FRONT) {
        CHECK(image(7, 0, NRTUCODE_FLAVOR_DEBUG, &p, &n) == NRTUCODE_E_NOT_BUILT && UNTOUCHED);
        CHECK(image(34, NRTUCODE_REGION_SRAM, 1, &p, &n) == NRTUCODE_E_NOT_BUILT && UNTOUCHED);
        CHECK(image(13, 0, NRTUCODE_FLAVOR_DKL_TEST, &p, &n) == NRTUCODE_E_NOT_BUILT && UNTOUCHED);
        CHECK(table(31, NRTUCODE_PROF_CAM, &p, &n) == NRTUCODE_E_NOT_FOUND && UNTOUCHED);
    } else {
        CHECK(image(7, 0, NRTUCODE_FLAVOR_DEBUG, &p, &n) == NRTUCODE_OK && n == 0x191e0);
        CHECK(image(34, NRTUCODE_REGION_SRAM, 1, &p, &n) == NRTUCODE_OK && n > 0);
        CHECK(image(13, 0, NRTUCODE_FLAVOR_DKL_TEST, &p, &n) == NRTUCODE_OK);
        CHECK(table(31, NRTUCODE_PROF_CAM, &p, &n) == NRTUCODE_OK && n == 0x400);
    }

    /* Flavor 0 reads NEURON_UCODE_FLAVOR, byte for byte. */
    setenv("NEURON_UCODE_FLAVOR", "DEBUG", 1);
    if (NRTUCODE_EXPECT_FRONT) {
        CHECK(image(7, 0, NRTUCODE_FLAVOR_AUTO, &p, &n) == NRTUCODE_E_NOT_BUILT && UNTOUCHED);
    } else {
        CHECK(image(7, 0, NRTUCODE_FLAVOR_AUTO, &p, &n) == NRTUCODE_OK);
        CHECK(image(7, 0, NRTUCODE_FLAVOR_DEBUG, &q, &m) == NRTUCODE_OK);
        CHECK(p == q && n == m);
    }
    setenv("NEURON_UCODE_FLAVOR", "Debug", 1);
    CHECK(image(7, 0, NRTUCODE_FLAVOR_AUTO, &p, &n) == NRTUCODE_OK && n == 0x13dc0);
    unsetenv("NEURON_UCODE_FLAVOR");

    /* 8: the removed flag, exactly "1"; one line on stderr; the profiler lane ignores it. */
    setenv("NRTUCODE_MPLUS_ON_MARIANA", "1", 1);
    CHECK(image(7, 0, 1, &p, &n) == NRTUCODE_E_REMOVED_FLAG && UNTOUCHED);
    CHECK(image(38, 0, 1, &p, &n) == NRTUCODE_E_INDEX && UNTOUCHED); /* index first, no notice */
    CHECK(table(7, 0, &p, &n) == NRTUCODE_OK);
    setenv("NRTUCODE_MPLUS_ON_MARIANA", "11", 1);
    CHECK(image(7, 0, 1, &p, &n) == NRTUCODE_OK);
    setenv("NRTUCODE_MPLUS_ON_MARIANA", "", 1);
    CHECK(image(7, 0, 1, &p, &n) == NRTUCODE_OK);
    unsetenv("NRTUCODE_MPLUS_ON_MARIANA");

    /* 22: NULL out-pointers on a call that would succeed; nothing written. */
    p = SENTINEL_PTR;
    n = SENTINEL_LEN;
    CHECK(nrtucode_get_memory_image(7, 0, 1, NULL, &n) == NRTUCODE_E_NULL_OUT && n == SENTINEL_LEN);
    CHECK(nrtucode_get_memory_image(7, 0, 1, &p, NULL) == NRTUCODE_E_NULL_OUT && p == SENTINEL_PTR);
    CHECK(nrtucode_get_hwdecode_table(7, 1, NULL, NULL) == NRTUCODE_E_NULL_OUT);
    /* ... while calls the vendor survives keep the vendor's code. */
    CHECK(nrtucode_get_memory_image(99, 0, 1, NULL, NULL) == NRTUCODE_E_INDEX);
    CHECK(nrtucode_get_hwdecode_table(0, 0, NULL, NULL) == NRTUCODE_E_NOT_FOUND);

    /* NRTUCODE_BLOB_ALIGN: every blob of every answer, both resolvers. */
    {
        static const int flavors[] = {1, 2, 3, 17, 18, 19};
        int blobs = 0, aligned = 0;
        for (unsigned i = 0; i < 38; i++) {
            for (int r = 0; r < 4; r++) {
                for (size_t f = 0; f < sizeof flavors / sizeof flavors[0]; f++) {
                    if (image(i, r, flavors[f], &p, &n) == NRTUCODE_OK && n > 0) {
                        blobs++;
                        aligned += (uintptr_t)p % NRTUCODE_BLOB_ALIGN == 0;
                    }
                }
            }
            for (int k = 0; k < 2; k++) {
                if (table(i, k, &p, &n) == NRTUCODE_OK && n > 0) {
                    blobs++;
                    aligned += (uintptr_t)p % NRTUCODE_BLOB_ALIGN == 0;
                }
            }
        }
        CHECK(blobs > 0 && aligned == blobs);
    }

    printf("c_abi: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
