#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The vendor's getter shape: write the blob pointer and its size. */
typedef void img_get(void **out_ptr, size_t *out_len);

/* image_list descriptor, stride 0x28. */
struct image_desc {
    uint64_t flavor_key;
    img_get *iram;
    img_get *dram;
    img_get *sram;
    img_get *extram;
};

/* image_list entry, 16 bytes. */
struct image_list_ent {
    uint64_t count;
    struct image_desc *table;
};

/* hwdecode_table_list entry, 16 bytes. */
struct hwdecode_ent {
    img_get *prof_cam;
    img_get *prof_table;
};

/* Separate, never inlined, never folded: each compiles to the 4-instruction stub. */
#define NRT_GETTER static __attribute__((noipa, used)) void

