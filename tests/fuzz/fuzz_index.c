/*
 * fuzz_index.c - the saved-index reader.  The input is an index file
 * image; its checksums are recomputed first (where the header allows) so
 * that mutations reach the bounds and range checks instead of stopping at
 * a checksum.  Whatever the bytes, hscope_heap_open_saved() must fail
 * cleanly or return a heap whose every accessor, tally and dominator tree
 * stays in bounds (ASan) and terminates.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapscope/heapscope.h"
#include "src/model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/hscope-fuzz-index-%d.hsx", (int)getpid());
    unsigned char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    hscope__saved_index_fix_checksums(buf, size);
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(buf);
        return 0;
    }
    fwrite(buf, 1, size, f);
    fclose(f);
    free(buf);
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_heap_open_saved(&h, path, NULL, NULL, &err) == HSCOPE_OK) {
        uint64_t n = hscope_heap_object_count(h);
        for (hscope_id i = 0; i < n; i++) {
            const hscope_id *r;
            uint64_t k;
            hscope_heap_object_references(h, i, &r, &k);
            for (uint64_t j = 0; j < k; j++)
                if (r[j] >= n)
                    abort();
            (void)hscope_heap_object_class_label(h, i);
            (void)hscope_heap_object_file(h, i);
            (void)hscope_heap_object_method(h, i);
            (void)hscope_heap_object_detail(h, i);
            (void)hscope_heap_object_memsize(h, i);
            (void)hscope_heap_object_class_address(h, i);
            (void)hscope_heap_type_name(h, hscope_heap_object_type(h, i));
            hscope_id id;
            hscope_heap_find(h, hscope_heap_object_address(h, i), &id);
            const char *v;
            uint64_t vl;
            hscope_heap_object_value(h, i, &v, &vl);
        }
        hscope_heap_find(h, 0x1234, &(hscope_id){ 0 });
        for (uint32_t c = 0; c < hscope_heap_root_category_count(h); c++) {
            const hscope_id *t;
            uint64_t k, d;
            hscope_heap_root_targets(h, c, &t, &k, &d);
            (void)hscope_heap_root_category_name(h, c);
        }
        static const char *const keys[] = { "type", "class", "file", "file:line",
                                             "file:line:class", "method", "generation", "gem" };
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            hscope_tally_t *t = NULL;
            if (hscope_tally_compute(&t, h, keys[k], NULL, &err) == HSCOPE_OK)
                hscope_tally_free(t);
        }
        hscope_domtree_t *d = NULL;
        if (hscope_domtree_compute(&d, h, NULL, &err) == HSCOPE_OK)
            hscope_domtree_free(d);
        const hscope_id *s;
        uint64_t k;
        if (n)
            hscope_heap_object_referrers(h, 0, &s, &k, &err);
        hscope_heap_free(h);
    }
    unlink(path);
    return 0;
}
