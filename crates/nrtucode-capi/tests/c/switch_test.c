/*
 * One C program, two libraries: prints what the two resolvers answer for every index, region,
 * flavor and kind around the valid ranges, under several environments, as text that holds no
 * pointer (code, length, a hash of the bytes, and whether twin slots share their bytes).
 *
 * Built once by tests/c_program.rs against libnrtucode_capi.so, then run against that library
 * and against the vendor look-alike installed under the same SONAME: the outputs must be
 * identical byte for byte. Plain C89 plus POSIX setenv/unsetenv.
 */
#define _POSIX_C_SOURCE 200112L

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "nrtucode.h"
/* NRTUCODE_TEST_TWIN_SLOTS: written by tests/c_program.rs from nrtucode::ImageIndex::TWINS. */
#include "twin_slots.h"

/* FNV-1a over the bytes: identical bytes give identical hashes in both libraries. */
static unsigned long fnv1a(const unsigned char *bytes, size_t len)
{
    unsigned long hash = 2166136261UL;
    size_t i;
    for (i = 0; i < len; i++) {
        hash ^= bytes[i];
        hash = (hash * 16777619UL) & 0xffffffffUL;
    }
    return hash;
}

static void print_answer(int code, const void *p, size_t n)
{
    if (code == NRTUCODE_OK) {
        printf(" 0 %lu %08lx\n", (unsigned long)n, fnv1a((const unsigned char *)p, n));
    } else {
        printf(" %d\n", code);
    }
}

static void images(const char *label)
{
    static const int flavors[] = {-1, 0, 1, 2, 3, 4, 16, 17, 18, 19, 20};
    unsigned idx;
    int region;
    size_t f;
    for (idx = 0; idx <= 39; idx++) {
        for (region = -1; region <= 4; region++) {
            for (f = 0; f < sizeof flavors / sizeof flavors[0]; f++) {
                const void *p = NULL;
                size_t n = 0;
                int code = nrtucode_get_memory_image(idx, region, flavors[f], &p, &n);
                printf("%s image %u %d %d", label, idx, region, flavors[f]);
                print_answer(code, p, n);
            }
        }
    }
    {
        const void *p = NULL;
        size_t n = 0;
        int code = nrtucode_get_memory_image(UINT_MAX, 0, 1, &p, &n);
        printf("%s image %u 0 1", label, UINT_MAX);
        print_answer(code, p, n);
    }
}

static void tables(void)
{
    unsigned idx;
    int kind;
    for (idx = 0; idx <= 39; idx++) {
        for (kind = -1; kind <= 2; kind++) {
            const void *p = NULL;
            size_t n = 0;
            int code = nrtucode_get_hwdecode_table(idx, kind, &p, &n);
            printf("table %u %d", idx, kind);
            print_answer(code, p, n);
        }
    }
}

/* The two NX SP slots of a generation return the same pointer in both libraries. */
static void twins(void)
{
    static const unsigned pairs[][2] = NRTUCODE_TEST_TWIN_SLOTS;
    size_t i;
    for (i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const void *p = NULL, *q = NULL;
        size_t n = 0, m = 0;
        int a = nrtucode_get_memory_image(pairs[i][0], 0, 1, &p, &n);
        int b = nrtucode_get_memory_image(pairs[i][1], 0, 1, &q, &m);
        printf("twin %u %u %d %d %d\n", pairs[i][0], pairs[i][1], a, b, a == 0 && p == q);
    }
}

int main(void)
{
    static const char *const flavor_values[] = {"debug", "DEBUG", "test", "TEST", "Debug", ""};
    size_t v;

    unsetenv("NRTUCODE_MPLUS_ON_MARIANA");
    unsetenv("NEURON_UCODE_FLAVOR");
    images("unset");
    tables();
    twins();
    for (v = 0; v < sizeof flavor_values / sizeof flavor_values[0]; v++) {
        int code;
        setenv("NEURON_UCODE_FLAVOR", flavor_values[v], 1);
        for (code = 0; code < 38; code++) {
            const void *q = NULL;
            size_t m = 0;
            int answer = nrtucode_get_memory_image((unsigned)code, 0, 0, &q, &m);
            printf("auto '%s' %d", flavor_values[v], code);
            print_answer(answer, q, m);
        }
    }
    unsetenv("NEURON_UCODE_FLAVOR");
    setenv("NRTUCODE_MPLUS_ON_MARIANA", "1", 1);
    {
        const void *p = NULL;
        size_t n = 0;
        int code = nrtucode_get_memory_image(7, 0, 1, &p, &n);
        printf("removed-flag image 7 0 1");
        print_answer(code, p, n);
        code = nrtucode_get_hwdecode_table(7, 0, &p, &n);
        printf("removed-flag table 7 0");
        print_answer(code, p, n);
    }
    unsetenv("NRTUCODE_MPLUS_ON_MARIANA");
    return 0;
}
