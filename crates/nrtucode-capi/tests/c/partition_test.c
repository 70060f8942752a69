/*
 * Exercises the partition handle API of nrtucode.h: every open refusal with its code and
 * message, the two resolvers over a handle against the library's own embedded answers (codes,
 * lengths, bytes, the place of every boundary cursor), hostile handles, the last error, and
 * many threads on one handle while others open and close their own.
 *
 * Built and run by tests/partition_c.rs (plain, under ASan + UBSan, under TSan) with the
 * directory of partitions it packed from the fixtures:
 *   partition_test DIR full|front
 * The second argument is the class the library embeds: the partitions of that class are
 * compared with the library's embedded answers.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrtucode.h"

static int passed, failed;
static const char *dir;
/* DIR/front.part, for the opener threads (path_of's buffer is the main thread's). */
static char front_path[4096];

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

static char *path_of(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

/* The whole file `name` in DIR, malloc'ed; its length in *len. */
static unsigned char *slurp(const char *name, size_t *len)
{
    FILE *f = fopen(path_of(name), "rb");
    unsigned char *buf;
    long n;
    if (!f) {
        printf("cannot open %s\n", path_of(name));
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        exit(2);
    }
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static unsigned char *pem, *raw;
static size_t pem_len, raw_len;

/* Opens file `name` with the PEM key; checks the code, and that the message holds `part`. */
static nrtucode_partition *open_expect(const char *name, unsigned min, int class, int code,
                                       const char *part, int line)
{
    nrtucode_partition *h = (nrtucode_partition *)(uintptr_t)0x77;
    char message[512];
    int rc = nrtucode_partition_open_file(path_of(name), pem, pem_len, min, class, &h);
    int last = nrtucode_partition_last_error(message, sizeof message);
    check(rc == code, name, line);
    check(last == code, "last_error code", line);
    if (code != NRTUCODE_PARTITION_OK) {
        check(h == NULL, "handle NULL on refusal", line);
        check(strstr(message, part) != NULL, part, line);
        printf("refused %s: %d %s\n", name, rc, message);
    } else {
        check(h != NULL, "handle set", line);
        check(message[0] == 0, "no message after success", line);
    }
    return h;
}

static const int FLAVORS[] = {-1, 0, 1, 2, 3, 4, 16, 17, 18, 19, 20, 256};
#define NFLAVORS (sizeof FLAVORS / sizeof FLAVORS[0])

/* Where a zero-length region's pointer lies among its image's other regions: one bit per
 * (region, start|end) it equals. */
static unsigned place(const void *const p[4], const size_t n[4], const int rc[4], int r)
{
    unsigned bits = 0;
    int s;
    for (s = 0; s < 4; s++) {
        if (s == r || rc[s] != 0 || n[s] == 0) {
            continue;
        }
        if (p[r] == p[s]) {
            bits |= 1u << (2 * s);
        }
        if ((const unsigned char *)p[r] == (const unsigned char *)p[s] + n[s]) {
            bits |= 2u << (2 * s);
        }
    }
    return bits;
}

/* Every answer of `h` against the embedded library's: returns the number of successes. */
static int compare_with_embedded(const nrtucode_partition *h, int line)
{
    unsigned idx;
    size_t f;
    int region, kind, ok = 0;
    for (idx = 0; idx <= 40; idx++) {
        for (f = 0; f < NFLAVORS; f++) {
            const void *ep[4], *pp[4];
            size_t en[4], pn[4];
            int erc[4], prc[4];
            for (region = -1; region <= 4; region++) {
                const void *e = NULL, *p = NULL;
                size_t m = 7, n = 7;
                int a = nrtucode_get_memory_image(idx, region, FLAVORS[f], &e, &m);
                int b = nrtucode_partition_get_memory_image(h, idx, region, FLAVORS[f], &p, &n);
                check(a == b, "image code", line);
                if (a == 0 && b == 0) {
                    ok++;
                    check(m == n && memcmp(e, p, m) == 0, "image bytes", line);
                    check(n == 0 || (uintptr_t)p % NRTUCODE_BLOB_ALIGN == 0, "aligned", line);
                } else {
                    check(n == 7 && p == NULL, "untouched on failure", line);
                }
                if (region >= 0 && region < 4) {
                    ep[region] = e, en[region] = m, erc[region] = a;
                    pp[region] = p, pn[region] = n, prc[region] = b;
                }
            }
            for (region = 0; region < 4; region++) {
                if (erc[region] == 0 && en[region] == 0) {
                    check(place(ep, en, erc, region) == place(pp, pn, prc, region),
                          "cursor place", line);
                }
            }
        }
        for (kind = -1; kind <= 2; kind++) {
            const void *e = NULL, *p = NULL;
            size_t m = 7, n = 7;
            int a = nrtucode_get_hwdecode_table(idx, kind, &e, &m);
            int b = nrtucode_partition_get_hwdecode_table(h, idx, kind, &p, &n);
            check(a == b, "table code", line);
            if (a == 0 && b == 0) {
                ok++;
                check(m == n && memcmp(e, p, m) == 0, "table bytes", line);
            }
        }
    }
    return ok;
}

/* ---- threads ---- */

struct shared {
    const nrtucode_partition *h;
    const void *p7; /* CAYMAN NX ACT PERF IRAM, from the main thread */
    size_t n7;
};

static void *resolver_thread(void *arg)
{
    struct shared *s = arg;
    int i, bad = 0;
    for (i = 0; i < 2000; i++) {
        const void *p;
        size_t n;
        unsigned idx = (unsigned)(i % 38);
        if (nrtucode_partition_get_memory_image(s->h, 7, 0, 1, &p, &n) != 0 || p != s->p7 ||
            n != s->n7) {
            bad++;
        }
        /* Touch the bytes: a race on them is TSan's to see. */
        if (n > 0 && ((const volatile unsigned char *)p)[n - 1] !=
                         ((const unsigned char *)s->p7)[n - 1]) {
            bad++;
        }
        (void)nrtucode_partition_get_hwdecode_table(s->h, idx, i % 2, &p, &n);
    }
    return (void *)(intptr_t)bad;
}

static void *opener_thread(void *arg)
{
    int i, bad = 0;
    (void)arg;
    for (i = 0; i < 3; i++) {
        nrtucode_partition *h = NULL;
        const void *p;
        size_t n;
        if (nrtucode_partition_open_file(front_path, raw, raw_len, 0,
                                         NRTUCODE_TABLES_FRONT, &h) != 0 ||
            nrtucode_partition_get_memory_image(h, 7, 0, 1, &p, &n) != 0 ||
            nrtucode_partition_close(h) != 0 ||
            nrtucode_partition_close(h) != NRTUCODE_PARTITION_E_HANDLE) {
            bad++;
        }
    }
    return (void *)(intptr_t)bad;
}

int main(int argc, char **argv)
{
    nrtucode_partition *h, *full, *deflate, *front;
    const void *p;
    size_t n, len;
    char message[512], tiny[8];
    unsigned char *bytes;
    int rc, front_build, i;

    if (argc != 3) {
        printf("usage: partition_test DIR full|front\n");
        return 2;
    }
    dir = argv[1];
    front_build = strcmp(argv[2], "front") == 0;
    snprintf(front_path, sizeof front_path, "%s/front.part", dir);
    pem = slurp("key.pub.pem", &pem_len);
    raw = slurp("key.raw", &raw_len);
    CHECK(raw_len == 32);
    CHECK(nrtucode_partition_last_error(NULL, 0) == NRTUCODE_PARTITION_OK);

    /* ---- refusals: code and the message naming why ---- */
    open_expect("missing.part", 0, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_IO, "missing.part",
                __LINE__);
    open_expect(".", 0, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_IO, "directory", __LINE__);
    open_expect("unsigned.part", 0, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_UNSIGNED,
                "unsigned", __LINE__);
    open_expect("other-key.part", 0, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_UNKNOWN_KEY,
                "unknown key", __LINE__);
    open_expect("bad-signature.part", 0, NRTUCODE_TABLES_FULL,
                NRTUCODE_PARTITION_E_BAD_SIGNATURE, "bad signature", __LINE__);
    open_expect("full.part", 4, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_ROLLBACK,
                "security counter 3 is below the minimum 4", __LINE__);
    open_expect("full.part", 0, NRTUCODE_TABLES_FRONT, NRTUCODE_PARTITION_E_WRONG_CLASS,
                "wrong table class", __LINE__);
    open_expect("damaged-blob.part", 0, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_DIGEST,
                "first used by", __LINE__);
    open_expect("damaged-stream.part", 0, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_DIGEST,
                "compressed bytes", __LINE__);
    open_expect("short-stream.part", 0, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_DECODE,
                "decodes to less than its decoded length", __LINE__);
    open_expect("truncated.part", 0, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_FORMAT,
                "truncated", __LINE__);
    open_expect("key.pub.pem", 0, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_FORMAT,
                "not an nrtucode partition", __LINE__);
    open_expect("full.part", 0, 0, NRTUCODE_PARTITION_E_ARGUMENT, "table class 0", __LINE__);

    /* Arguments and keys. */
    h = (nrtucode_partition *)(uintptr_t)0x77;
    CHECK(nrtucode_partition_open_file(NULL, raw, 32, 0, NRTUCODE_TABLES_FULL, &h) ==
          NRTUCODE_PARTITION_E_ARGUMENT);
    CHECK(h == NULL);
    CHECK(nrtucode_partition_open_file(path_of("full.part"), raw, 32, 0, NRTUCODE_TABLES_FULL,
                                       NULL) == NRTUCODE_PARTITION_E_ARGUMENT);
    CHECK(nrtucode_partition_open_file(path_of("full.part"), NULL, 32, 0, NRTUCODE_TABLES_FULL,
                                       &h) == NRTUCODE_PARTITION_E_ARGUMENT);
    CHECK(nrtucode_partition_open_file(path_of("full.part"), raw, 31, 0, NRTUCODE_TABLES_FULL,
                                       &h) == NRTUCODE_PARTITION_E_KEY);
    CHECK(nrtucode_partition_last_error(message, sizeof message) == NRTUCODE_PARTITION_E_KEY);
    CHECK(strstr(message, "SPKI PEM") != NULL);
    CHECK(nrtucode_partition_open_memory(NULL, 10, raw, 32, 0, NRTUCODE_TABLES_FULL, &h) ==
          NRTUCODE_PARTITION_E_ARGUMENT);
    /* Empty inputs: no bytes is a truncated partition, no key bytes no key. */
    CHECK(nrtucode_partition_open_memory(raw, 0, raw, 32, 0, NRTUCODE_TABLES_FULL, &h) ==
          NRTUCODE_PARTITION_E_FORMAT);
    CHECK(nrtucode_partition_open_file(path_of("full.part"), raw, 0, 0, NRTUCODE_TABLES_FULL,
                                       &h) == NRTUCODE_PARTITION_E_KEY);
    CHECK(h == NULL);
    bytes = slurp("test-ed25519.pem", &len);
    CHECK(nrtucode_partition_open_file(path_of("full.part"), bytes, len, 0,
                                       NRTUCODE_TABLES_FULL, &h) == NRTUCODE_PARTITION_E_KEY);
    nrtucode_partition_last_error(message, sizeof message);
    CHECK(strstr(message, "private key") != NULL);
    free(bytes);

    /* The message cut to the buffer, NUL-terminated; a NULL buffer gets the code alone. */
    open_expect("missing.part", 0, NRTUCODE_TABLES_FULL, NRTUCODE_PARTITION_E_IO, "missing",
                __LINE__);
    memset(tiny, 'x', sizeof tiny);
    CHECK(nrtucode_partition_last_error(tiny, sizeof tiny) == NRTUCODE_PARTITION_E_IO);
    CHECK(tiny[7] == 0 && strlen(tiny) == 7);
    CHECK(nrtucode_partition_last_error(tiny, 1) == NRTUCODE_PARTITION_E_IO && tiny[0] == 0);
    CHECK(nrtucode_partition_last_error(NULL, 100) == NRTUCODE_PARTITION_E_IO);

    /* ---- opened: stored (PEM key), deflate (raw key), from memory freed at once ---- */
    full = open_expect("full.part", 3, NRTUCODE_TABLES_FULL, 0, "", __LINE__);
    CHECK(nrtucode_partition_open_file(path_of("full-deflate.part"), raw, raw_len, 3,
                                       NRTUCODE_TABLES_FULL, &deflate) == 0);
    bytes = slurp("front.part", &len);
    CHECK(nrtucode_partition_open_memory(bytes, len, pem, pem_len, 0, NRTUCODE_TABLES_FRONT,
                                         &front) == 0);
    memset(bytes, 0, len); /* the handle owns a copy */
    free(bytes);
    CHECK(full != deflate && deflate != front);

    if (front_build) {
        CHECK(compare_with_embedded(front, __LINE__) > 100);
    } else {
        CHECK(compare_with_embedded(full, __LINE__) > 100);
        CHECK(compare_with_embedded(deflate, __LINE__) > 100);
    }
    /* The front partition has no MAVERICK and no DEBUG; the full one has both. */
    CHECK(nrtucode_partition_get_memory_image(front, 7, 0, NRTUCODE_FLAVOR_DEBUG, &p, &n) ==
          NRTUCODE_E_NOT_BUILT);
    CHECK(nrtucode_partition_get_memory_image(full, 7, 0, NRTUCODE_FLAVOR_DEBUG, &p, &n) ==
          NRTUCODE_OK);
    CHECK(nrtucode_partition_get_memory_image(full, 7, 0, 1, NULL, &n) == NRTUCODE_E_NULL_OUT);
    CHECK(nrtucode_partition_get_memory_image(full, 99, 0, 1, NULL, NULL) == NRTUCODE_E_INDEX);

    /* ---- many threads on one handle, others opening and closing their own ---- */
    {
        pthread_t t[10];
        struct shared s;
        void *bad;
        s.h = deflate;
        CHECK(nrtucode_partition_get_memory_image(deflate, 7, 0, 1, &s.p7, &s.n7) == 0);
        for (i = 0; i < 10; i++) {
            CHECK(pthread_create(&t[i], NULL, i < 8 ? resolver_thread : opener_thread, &s) == 0);
        }
        for (i = 0; i < 10; i++) {
            CHECK(pthread_join(t[i], &bad) == 0);
            CHECK(bad == NULL);
        }
    }

    /* ---- hostile handles ---- */
    CHECK(nrtucode_partition_get_memory_image(NULL, 7, 0, 1, &p, &n) == NRTUCODE_E_BAD_HANDLE);
    CHECK(nrtucode_partition_get_hwdecode_table(NULL, 7, 0, &p, &n) == NRTUCODE_E_BAD_HANDLE);
    CHECK(nrtucode_partition_close(NULL) == NRTUCODE_PARTITION_E_HANDLE);
    CHECK(nrtucode_partition_last_error(message, sizeof message) == NRTUCODE_PARTITION_E_HANDLE);
    CHECK(strstr(message, "NULL handle") != NULL);
    CHECK(nrtucode_partition_close(deflate) == NRTUCODE_PARTITION_OK);
    CHECK(nrtucode_partition_close(deflate) == NRTUCODE_PARTITION_E_HANDLE);
    p = NULL, n = 7;
    CHECK(nrtucode_partition_get_memory_image(deflate, 7, 0, 1, &p, &n) == NRTUCODE_E_BAD_HANDLE);
    CHECK(p == NULL && n == 7);
    CHECK(nrtucode_partition_get_memory_image((nrtucode_partition *)(uintptr_t)0xdead0000u, 7, 0,
                                              1, &p, &n) == NRTUCODE_E_BAD_HANDLE);
    nrtucode_partition_last_error(message, sizeof message);
    CHECK(strstr(message, "closed or was never opened") != NULL);
    /* The others still answer. */
    CHECK(nrtucode_partition_get_memory_image(full, 7, 0, 1, &p, &n) == NRTUCODE_OK);
    CHECK(nrtucode_partition_close(full) == 0 && nrtucode_partition_close(front) == 0);
    rc = nrtucode_partition_close(full);
    CHECK(rc == NRTUCODE_PARTITION_E_HANDLE);

    free(pem);
    free(raw);
    printf("partition_c: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
