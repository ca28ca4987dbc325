/*
 * paths.c - the shortest paths from the roots (a BFS over the graph of
 * graph.h, the dominator tree's), and several paths from the roots to one
 * object: its shortest path first, then one through each of its other
 * referrers (the referrer's own shortest path, then the object), shortest
 * referrers' paths in referrer order, leaving out a referrer already on
 * the shortest path and paths that pass through the object itself before
 * the end.
 */
#include <string.h>

#include "../model/model.h"
#include "dominators.h"
#include "graph.h"

#define NONE HSCOPE__NO_VERTEX

/*
 * The predecessor of each object on its shortest path: a vertex per object
 * (4 bytes), or, when the heap's reverse references are built already (a
 * server that shows referrers builds them at start), compact: per object
 * the predecessor's place among the object's referrers (1 byte; almost
 * every predecessor is one of the first 254), and the few others (a root
 * category, an instance through its class edge, a place past 253) in a
 * table sorted by id.  Same paths, a quarter of the memory.
 */
#define PK_EXC 254u   /* in the exception table */
#define PK_NONE 255u  /* unreached */

struct hscope_paths {
    hscope_heap_t *heap;
    uint32_t n, ncat;
    uint32_t *parent;   /* per object: predecessor vertex, NONE = unreached;
                           NULL when compact: */
    uint8_t *pk;        /* per object: the predecessor's place in its referrers */
    uint32_t *exc_id, *exc_par; /* the others: ids ascending, their predecessors */
    uint64_t nexc;
    int class_edges;
};

static uint32_t
paths_parent(const void *arg, uint32_t v)
{
    const hscope_paths_t *p = arg;
    if (p->parent)
        return p->parent[v];
    uint32_t k = p->pk[v];
    if (k == PK_NONE)
        return NONE;
    if (k == PK_EXC)
        return p->exc_par[hscope__id_find(p->exc_id, (size_t)p->nexc, v)];
    return p->heap->rev_src[p->heap->rev_start[v] + k];
}

/* The place of v among w's referrers, or PK_EXC. */
static uint32_t
place_of(const hscope_heap_t *h, uint32_t w, uint32_t v)
{
    uint32_t lo = h->rev_start[w], hi = h->rev_start[w + 1];
    for (uint32_t i = lo; i < hi && i - lo < PK_EXC; i++)
        if (h->rev_src[i] == v)
            return i - lo;
    return PK_EXC;
}

/* Make p compact from the full array par (freed on success). */
static hscope_status
paths_compact(hscope_paths_t *p, uint32_t *par, hscope_error *err)
{
    hscope_heap_t *h = p->heap;
    hscope__mem *m = &h->mem;
    uint8_t *pk = hscope__malloc(m, (size_t)p->n + 1);
    if (!pk)
        return hscope__nomem(err, (size_t)p->n);
    uint64_t nexc = 0;
    for (uint32_t w = 0; w < p->n; w++) {
        uint32_t v = par[w];
        pk[w] = (uint8_t)(v == NONE ? PK_NONE : v < p->n ? place_of(h, w, v) : PK_EXC);
        nexc += pk[w] == PK_EXC;
    }
    uint32_t *ei = hscope__malloc(m, (size_t)(nexc + 1) * 4);
    uint32_t *ep = hscope__malloc(m, (size_t)(nexc + 1) * 4);
    if (!ei || !ep) {
        hscope__free(m, pk);
        hscope__free(m, ei);
        hscope__free(m, ep);
        return hscope__nomem(err, (size_t)nexc * 8);
    }
    uint64_t k = 0;
    for (uint32_t w = 0; w < p->n; w++)
        if (pk[w] == PK_EXC) {
            ei[k] = w;
            ep[k++] = par[w];
        }
    hscope__free(m, par);
    p->parent = NULL;
    p->pk = pk;
    p->exc_id = ei;
    p->exc_par = ep;
    p->nexc = nexc;
    return HSCOPE_OK;
}

hscope_heap_t *
hscope__paths_heap(const hscope_paths_t *p)
{
    return p->heap;
}

int
hscope__paths_class_edges(const hscope_paths_t *p)
{
    return p->class_edges;
}

hscope_status
hscope__paths_compute(hscope_paths_t **out, hscope_heap_t *heap,
                      const hscope_dom_options *uopts, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st = HSCOPE_OK;
    hscope_paths_t *p = NULL;
    uint32_t *queue = NULL, *par = NULL;
    if (!out || !heap) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out and heap are required");
        goto done;
    }
    *out = NULL;
    uint32_t flags = 0;
    if (uopts) {
        if (uopts->size < 2 * sizeof(uint32_t)) {
            st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "options size not set");
            goto done;
        }
        if (!hscope__tail_is_zero(uopts, uopts->size, sizeof(hscope_dom_options))) {
            st = hscope__fail(&err, HSCOPE_ERR_UNSUPPORTED,
                              "hscope_dom_options has unknown non-zero fields");
            goto done;
        }
        flags = uopts->flags;
    }
    hscope__graph g = { heap, heap->n, heap->ncat, heap->n + heap->ncat,
                heap->n + heap->ncat + 1, !(flags & HSCOPE_DOM_NO_CLASS_EDGES) };
    hscope__mem *m = &heap->mem;
    p = hscope__calloc(m, 1, sizeof(*p));
    par = hscope__malloc(m, (size_t)g.nv * 4);
    queue = hscope__malloc(m, (size_t)g.nv * 4);
    if (!p || !par || !queue) {
        st = hscope__nomem(&err, (size_t)g.nv * 8);
        goto done;
    }
    memset(par, 0xFF, (size_t)g.nv * 4);
    size_t qh = 0, qt = 0;
    par[g.root] = g.root;
    /* Breadth first from the precise root categories, then from the
     * conservative ones (machine_context) for what is left: a path runs
     * through a stale stack slot only when nothing else holds the object. */
    for (int conservative = 0; conservative < 2; conservative++) {
        for (uint32_t c = 0; c < g.ncat; c++)
            if (hscope__cat_conservative(heap, c) == conservative) {
                par[g.n + c] = g.root;
                queue[qt++] = g.n + c;
            }
        while (qh < qt) {
            uint32_t v = queue[qh++];
            hscope__succs sc;
            hscope__succs_of(&g, v, &sc);
            for (uint32_t w; (w = hscope__succs_next(&g, &sc)) != NONE;) {
                if (par[w] == NONE) {
                    par[w] = v;
                    queue[qt++] = w;
                }
            }
        }
    }
    p->heap = heap;
    hscope__heap_retain(heap);
    p->n = heap->n;
    p->ncat = heap->ncat;
    p->parent = par;
    p->class_edges = g.class_edges;
    par = NULL;
    hscope__free(m, queue);
    queue = NULL;
    if (atomic_load_explicit(&heap->rev_ready, memory_order_acquire) &&
        paths_compact(p, p->parent, &err) != HSCOPE_OK)
        hscope__error_init(&err); /* no room for the compact form: the full array stays */
done:
    if (queue)
        hscope__free(&heap->mem, queue);
    if (st != HSCOPE_OK) {
        if (heap) {
            hscope__free(&heap->mem, par);
            hscope__free(&heap->mem, p);
        }
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    *out = p;
    return HSCOPE_OK;
}

void
hscope__paths_free(hscope_paths_t *p)
{
    if (!p)
        return;
    hscope_heap_t *h = p->heap;
    hscope__free(&h->mem, p->parent);
    hscope__free(&h->mem, p->pk);
    hscope__free(&h->mem, p->exc_id);
    hscope__free(&h->mem, p->exc_par);
    hscope__free(&h->mem, p);
    hscope__heap_release(h);
}

uint64_t
hscope__paths_memory(const hscope_paths_t *p)
{
    const void *b[] = { p ? p->parent : NULL, p ? p->pk : NULL, p ? p->exc_id : NULL,
                        p ? p->exc_par : NULL, p };
    return hscope__msize_sum(b, 5);
}

uint64_t
hscope__paths_get(const hscope_paths_t *p, hscope_id target, hscope_id *out,
                  uint64_t max, int32_t *root_category)
{
    return p ? hscope__chain_up(paths_parent, p, p->n, p->ncat, target, out, max, root_category)
             : 0;
}


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
