/*
 * series.h - dump fingerprints and the series checks (series.c):
 * repeated dumps, other processes, backwards; the bodies of the exported
 * fingerprint and series functions (api/series_api.c exports them).
 */
#ifndef HSCOPE_ANALYSIS_SERIES_H
#define HSCOPE_ANALYSIS_SERIES_H

#include "../model/model.h"

hscope_status hscope__heap_fingerprint(hscope_fingerprint_t **out,
                                       const hscope_heap_t *heap,
                                       const char *path, hscope_error *uerr);
hscope_status hscope__fingerprint_copy(hscope_fingerprint_t **out,
                                       const hscope_fingerprint_t *fp,
                                       hscope_error *uerr);
void hscope__fingerprint_free(hscope_fingerprint_t *fp);
uint64_t hscope__fingerprint_memory(const hscope_fingerprint_t *fp);
uint32_t hscope__series_check(const hscope_fingerprint_t *const *fps,
                              const char *const *names, uint64_t count,
                              char *text, uint64_t text_size);

/* Fingerprints for the series checks (series.c). */
typedef struct hscope__fp_item {
    uint64_t addr;
    uint32_t type;     /* HSCOPE_TYPE_* below 32, else HSCOPE_TYPE_OTHER */
} hscope__fp_item;

struct hscope_fingerprint {
    hscope__mem own;            /* the allocator hooks it was made with */
    uint64_t objects, content;  /* count; sum of a hash per object */
    uint32_t newest;            /* newest generation + 1; 0: nothing traced
                                   (HSCOPE__GEN_NONE + 1 wraps to 0) */
    int sorted, has_file;
    int partial;                /* no ROOT records: a since: dump, whose objects are
                                   only the newer ones (not another process) */
    uint64_t limit;             /* sampled: objects whose address hash <= limit */
    hscope__fp_item *items;
    size_t n;
    uint64_t dev, ino, mtime_ns;
};

/* The sampling hash of an address: a multiplicative (Fibonacci) hash,
 * whose high bits, the ones the sample's threshold looks at, depend on
 * every bit of the address; one multiply on the streaming paths. */
static inline uint64_t
hscope__fp_hash(uint64_t addr)
{
    return addr * 0x9E3779B97F4A7C15ull;
}

void hscope__fp_sample(hscope_fingerprint_t *fp, uint64_t addr, uint64_t h, int type);

/* One object of the dump (type: the builder's code; gen HSCOPE__GEN_NONE
 * when untraced).  On the streaming paths for every record, so kept to two
 * multiplies: the content hash sums the address hash mixed with the
 * generation and type (two dumps of equal count and content sum are "the
 * same"), and the sample is rarely touched (1 object in 2^k once full). */
static inline void
hscope__fp_add(hscope_fingerprint_t *fp, uint64_t addr, int type, uint32_t gen)
{
    uint64_t h = hscope__fp_hash(addr);
    int ty = type < 32 ? type : HSCOPE_TYPE_OTHER;
    uint32_t g1 = gen + 1;
    fp->objects++;
    uint64_t x = h ^ ((uint64_t)g1 << 8 | (uint64_t)ty);
    x ^= x >> 31; /* not linear in the address: a sum of such cannot be */
    x *= 0xBF58476D1CE4E5B9ull; /* kept by moving objects around */
    fp->content += x ^ (x >> 29);
    if (g1 > fp->newest)
        fp->newest = g1;
    if (HS_UNLIKELY(h <= fp->limit))
        hscope__fp_sample(fp, addr, h, ty);
}

hscope_status hscope__fp_new(hscope_fingerprint_t **out, const hscope__mem *like,
                             hscope_error *err);
void hscope__fp_add_heap(hscope_fingerprint_t *fp, const hscope_heap_t *h);
void hscope__fp_merge(hscope_fingerprint_t *dst, const hscope_fingerprint_t *src);
/* Sort the sample and note the file's identity and mtime (path may be NULL). */
void hscope__fp_finish(hscope_fingerprint_t *fp, const char *path);
/* hscope__series_check() with each finding passed to fn as one line and its
 * HSCOPE_DIFF_WARN_* bit. */
uint32_t hscope__series_check_lines(const hscope_fingerprint_t *const *fps,
                                    const char *const *names, uint64_t count,
                                    void (*fn)(void *ud, uint32_t bit, const char *line),
                                    void *ud);

#endif
