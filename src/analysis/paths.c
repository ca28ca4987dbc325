/*
 * paths.c - several paths from the roots to one object: its shortest path
 * first, then one through each of its other referrers (the referrer's own
 * shortest path, then the object), shortest referrers' paths in referrer
 * order, leaving out a referrer already on the shortest path and paths
 * that pass through the object itself before the end.
 */
#include "../model/model.h"
#include "dominators.h"

/* The shortest path to v into a new buffer with room for one more id. */
static hscope_status
path_to(const hscope_paths_t *p, hscope__mem *m, hscope_id v, hscope_id **buf, uint64_t *len,
        int32_t *cat, hscope_error *err)
{
    *len = hscope__paths_get(p, v, NULL, 0, cat);
    *buf = hscope__malloc(m, (size_t)(*len + 2) * sizeof(hscope_id));
    if (!*buf)
        return hscope__nomem(err, (size_t)*len * sizeof(hscope_id));
    hscope__paths_get(p, v, *buf, *len, cat);
    return HSCOPE_OK;
}

/* One more path through referrer src, or none (*len 0). */
static hscope_status
via(const hscope_paths_t *p, hscope__mem *m, hscope_id target, hscope_id src, hscope_id before,
    hscope_id **buf, uint64_t *len, int32_t *cat, hscope_error *err)
{
    *buf = NULL;
    *len = 0;
    if (src == target || src == before)
        return HSCOPE_OK;
    uint64_t n;
    hscope_status st = path_to(p, m, src, buf, &n, cat, err);
    if (st != HSCOPE_OK || n == 0)
        return st;
    for (uint64_t k = 0; k < n; k++)
        if ((*buf)[k] == target)
            return HSCOPE_OK; /* through the target itself: a cycle */
    (*buf)[n] = target;
    *len = n + 1;
    return HSCOPE_OK;
}

hscope_status
hscope__paths_each(const hscope_paths_t *p, hscope_id target, uint64_t max_paths,
                   hscope__path_fn fn, void *ud, hscope_error *err)
{
    hscope_heap_t *h = hscope__paths_heap(p);
    hscope__mem *m = &h->mem;
    hscope_id *buf;
    uint64_t len;
    int32_t cat = -1;
    hscope_status st = path_to(p, m, target, &buf, &len, &cat, err);
    if (st != HSCOPE_OK)
        return st;
    hscope_id before = len >= 2 ? buf[len - 2] : HSCOPE_ID_NONE;
    fn(ud, target, buf, len, cat);  /* len 0: no root reaches it */
    hscope__free(m, buf);
    if (len == 0 || max_paths <= 1)
        return HSCOPE_OK;
    const hscope_id *srcs;
    uint64_t nsrc, emitted = 1;
    if ((st = hscope__heap_object_referrers(h, target, &srcs, &nsrc, err)) != HSCOPE_OK)
        return st;
    for (uint64_t s = 0; s < nsrc && emitted < max_paths && st == HSCOPE_OK; s++) {
        if (s > 0 && srcs[s] == srcs[s - 1])
            continue;
        if ((st = via(p, m, target, srcs[s], before, &buf, &len, &cat, err)) == HSCOPE_OK && len) {
            fn(ud, target, buf, len, cat);
            emitted++;
        }
        hscope__free(m, buf);
    }
    return st;
}
