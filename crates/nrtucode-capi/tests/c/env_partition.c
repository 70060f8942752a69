/*
 * A host program of the vendor's two functions, built against the installed partition-backed
 * library (tests/install_c.rs): it does not know where the firmware comes from.
 *
 * Eight threads make the first call at once (the partition named by NRTUCODE_PARTITION is
 * opened then, once); then every answer of a grid is printed, one line each:
 *   image IDX REGION FLAVOR CODE LEN HASH    or    table IDX KIND CODE LEN HASH
 * (HASH: FNV-1a 64 of the bytes, "-" when the code is not 0), then
 *   threads CODE SAME   the first calls' code, and 1 when all eight got the same answer
 *   last_error CODE     nrtucode_partition_last_error() on the main thread (not with
 *                       -DNRTUCODE_VENDOR_ONLY, for a build against the vendor's library).
 */
#define _POSIX_C_SOURCE 200809L

#include <nrtucode.h>
#include <pthread.h>
#include <stdio.h>

static pthread_barrier_t start;
static const void *first_ptr[8];
static size_t first_len[8];
static int first_rc[8];

static void *first_call(void *arg)
{
    int i = (int)(size_t)arg;
    pthread_barrier_wait(&start);
    first_rc[i] = nrtucode_get_memory_image(7, NRTUCODE_REGION_IRAM, NRTUCODE_FLAVOR_PERF,
                                            &first_ptr[i], &first_len[i]);
    return NULL;
}

static void print_answer(int rc, const void *p, size_t n)
{
    unsigned long long h = 14695981039346656037ULL;
    size_t i;
    if (rc != NRTUCODE_OK) {
        printf(" %d - -\n", rc);
        return;
    }
    for (i = 0; i < n; i++) {
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ULL;
    }
    printf(" %d %zu %016llx\n", rc, n, h);
}

int main(void)
{
    static const int flavors[] = {0, 1, 2, 3, 17, 18, 19, 5};
    pthread_t t[8];
    int i, same = 1;
    unsigned idx;
    int region, kind;
    size_t f;

    pthread_barrier_init(&start, NULL, 8);
    for (i = 0; i < 8; i++) {
        pthread_create(&t[i], NULL, first_call, (void *)(size_t)i);
    }
    for (i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        same &= first_rc[i] == first_rc[0] && first_ptr[i] == first_ptr[0] &&
                first_len[i] == first_len[0];
    }
    for (idx = 0; idx <= 39; idx++) {
        for (region = -1; region <= 4; region++) {
            for (f = 0; f < sizeof flavors / sizeof flavors[0]; f++) {
                const void *p = NULL;
                size_t n = 0;
                int rc = nrtucode_get_memory_image(idx, region, flavors[f], &p, &n);
                printf("image %u %d %d", idx, region, flavors[f]);
                print_answer(rc, p, n);
            }
        }
        for (kind = -1; kind <= 2; kind++) {
            const void *p = NULL;
            size_t n = 0;
            int rc = nrtucode_get_hwdecode_table(idx, kind, &p, &n);
            printf("table %u %d", idx, kind);
            print_answer(rc, p, n);
        }
    }
    printf("threads %d %d\n", first_rc[0], same);
#ifndef NRTUCODE_VENDOR_ONLY
    printf("last_error %d\n", nrtucode_partition_last_error(NULL, 0));
#endif
    return 0;
}
