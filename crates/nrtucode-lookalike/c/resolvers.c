/* ---- the two resolvers (the seed's pseudocode) ---- */

static const char removed_flag_message[] = LOOKALIKE_REMOVAL_MESSAGE;

__attribute__((visibility("default")))
int LOOKALIKE_MEMORY_IMAGE_SYMBOL(unsigned idx, int region, int flavor, void *out_ptr, void *out_len)
{
    if (idx > 37)
        return 1;

    /* The removed flag: NRTUCODE_MPLUS_ON_MARIANA trips exactly on "1". */
    const char *mp = getenv("NRTUCODE_MPLUS_ON_MARIANA");
    if (mp) {
        int c = (unsigned char)mp[0] - '1';
        if (mp[0] == '1')
            c = (unsigned char)mp[1];
        if (-c == 0)
            goto removed_flag;
    }

    const struct image_list_ent *e = &image_list[idx];

    if (flavor == 0) {
        const char *fv = getenv("NEURON_UCODE_FLAVOR");
        if (!fv)
            flavor = 1;
        else if (!strcmp(fv, "debug") || !strcmp(fv, "DEBUG"))
            flavor = 2;
        else if (!strcmp(fv, "test"))
            flavor = 3;
        else
            flavor = (strcmp(fv, "TEST") == 0) ? 3 : 1;
    }

    uint64_t n = e->count;
    if (n == 0)
        return 2;
    const struct image_desc *d = e->table;
    /* 32-bit compare, like the vendor's cmp (%rdi),%r15d. */
    for (; (uint32_t)flavor != (uint32_t)d->flavor_key; d++) {
        if (--n == 0)
            return 2;
    }

    if ((unsigned)region > 3)
        return 2;
    img_get *g;
    switch (region) {
    case 0: g = d->iram; break;
    case 1: g = d->dram; break;
    case 2: g = d->sram; break;
    default: g = d->extram; break;
    }
    if (g == NULL)
        return 3;
    g((void **)out_ptr, (size_t *)out_len);
    return 0;

removed_flag:
    fwrite(removed_flag_message, sizeof removed_flag_message - 1, 1, stderr);
    return 8;
}

__attribute__((visibility("default")))
int LOOKALIKE_HWDECODE_TABLE_SYMBOL(unsigned idx, int kind, void *out_ptr, void *out_len)
{
    if (idx > 37)
        return 1;
    const struct hwdecode_ent *e = &hwdecode_table_list[idx];
    img_get *g;
    if (kind == 0)
        g = e->prof_cam;
    else if (kind == 1)
        g = e->prof_table;
    else
        return 2;
    if (g == NULL)
        return 2;
    g((void **)out_ptr, (size_t *)out_len);
    return 0;
}
