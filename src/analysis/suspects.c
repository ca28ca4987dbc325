/*
 * suspects.c - leak suspects: a diff's leaked objects, the dominator tree
 * of its heap, their holders ranked by the leaked memory each keeps alive,
 * and shortest paths from the roots to the holders.
 */
#include <stdatomic.h>
#include <string.h>

#include "analysis.h"

struct hscope_suspects {
    hscope_diff_t *diff;        /* a reference (hscope__diff_ref) */
    hscope_domtree_t *tree;
    hscope_paths_t *paths;
    hscope_holders_t *holders;
};

void
hscope__suspects_free(hscope_suspects_t *s)
{
    if (!s)
        return;
    hscope_heap_t *h = hscope__diff_heap(s->diff);
    hscope_heap_t *keep = hscope__heap_ref(h); /* s itself lives in h's memory */
    hscope__holders_free(s->holders);
    hscope__paths_free(s->paths);
    hscope__domtree_free(s->tree);
    hscope__diff_free(s->diff);
    hscope__free(&keep->mem, s);
    hscope__heap_release(keep);
}

uint64_t
hscope__suspects_memory(const hscope_suspects_t *s)
{
    if (!s)
        return 0;
    const void *b[] = { s };
    return hscope__msize_sum(b, 1) + hscope__domtree_memory(s->tree) +
           hscope__paths_memory(s->paths) + hscope__holders_memory(s->holders);
}

hscope_status
hscope__suspects_compute(hscope_suspects_t **out, hscope_diff_t *diff,
                         const hscope_dom_options *opts, hscope_error *err)
{
    hscope_heap_t *h = hscope__diff_heap(diff);
    hscope_suspects_t *s = hscope__calloc(&h->mem, 1, sizeof(*s));
    if (!s)
        return hscope__nomem(err, sizeof(*s));
    s->diff = hscope__diff_ref(diff);
    hscope_status st = hscope__domtree_compute(&s->tree, h, opts, err);
    if (st == HSCOPE_OK)
        st = hscope__paths_compute(&s->paths, h, opts, err);
    if (st == HSCOPE_OK)
        st = hscope__holders_compute(&s->holders, s->tree, hscope__diff_objects(diff),
                                    hscope__diff_count(diff), err);
    if (st != HSCOPE_OK) {
        hscope__suspects_free(s);
        return st;
    }
    *out = s;
    return HSCOPE_OK;
}

hscope_diff_t *
hscope__suspects_diff(const hscope_suspects_t *s)
{
    return s->diff;
}

hscope_domtree_t *
hscope__suspects_domtree(const hscope_suspects_t *s)
{
    return s->tree;
}

const hscope_holders_t *
hscope__suspects_holders(const hscope_suspects_t *s)
{
    return s->holders;
}

const hscope_paths_t *
hscope__suspects_paths(const hscope_suspects_t *s)
{
    return s->paths;
}

uint64_t
hscope__suspects_path(const hscope_suspects_t *s, uint64_t i, hscope_id *out, uint64_t max,
                      int32_t *root_category)
{
    hscope_id holder;
    int32_t cat = -1;
    uint64_t c, m;
    if (hscope__holders_get(s->holders, i, &holder, &cat, &c, &m) != HSCOPE_OK) {
        if (root_category)
            *root_category = -1;
        return 0;
    }
    if (holder == HSCOPE_ID_NONE) {
        if (root_category)
            *root_category = cat;
        return 0;
    }
    return hscope__paths_get(s->paths, holder, out, max, root_category);
}
