/*
 * A C program built against the installed library (`tests/install_c.rs`), with only what
 * `pkg-config --cflags --libs nrtucode` (or `--static`) gives it. Prints the length of CAYMAN
 * NX ACT's PERF IRAM image; exits non-zero when an answer is not the one the header documents.
 */
#include <nrtucode.h>
#include <stdio.h>

int main(void) {
    const void *ptr = NULL;
    size_t len = 0;
    int rc = nrtucode_get_memory_image(7, NRTUCODE_REGION_IRAM, NRTUCODE_FLAVOR_PERF, &ptr, &len);
    if (rc != NRTUCODE_OK || ptr == NULL || len == 0) {
        fprintf(stderr, "CAYMAN NX ACT PERF IRAM: code %d\n", rc);
        return 1;
    }
    if (((size_t)ptr) % NRTUCODE_BLOB_ALIGN != 0) {
        fprintf(stderr, "image not aligned to NRTUCODE_BLOB_ALIGN\n");
        return 1;
    }
    rc = nrtucode_get_memory_image(38, NRTUCODE_REGION_IRAM, NRTUCODE_FLAVOR_PERF, &ptr, &len);
    if (rc != NRTUCODE_E_INDEX) {
        fprintf(stderr, "index 38: code %d, expected NRTUCODE_E_INDEX\n", rc);
        return 1;
    }
    rc = nrtucode_get_hwdecode_table(7, NRTUCODE_PROF_CAM, &ptr, &len);
    if (rc != NRTUCODE_OK || len != 0x400) {
        fprintf(stderr, "PROF_CAM of slot 7: code %d, %zu bytes\n", rc, len);
        return 1;
    }
    rc = nrtucode_get_memory_image(7, NRTUCODE_REGION_IRAM, NRTUCODE_FLAVOR_PERF, &ptr, &len);
    printf("%zu\n", len);
    return rc;
}
