/*
 * dominators_api.c - the exported dominator tree, paths from the roots
 * and holders (analysis/dominators.c).
 */
#include "../model/model.h"
#include "../analysis/dominators.h"

HSCOPE_API void
hscope_dom_options_init(hscope_dom_options *o)
{
    hscope__dom_options_init(o);
}

HSCOPE_API hscope_status
hscope_domtree_compute(hscope_domtree_t **out, hscope_heap_t *heap,
                       const hscope_dom_options *uopts, hscope_error *uerr)
{
    return hscope__domtree_compute(out, heap, uopts, uerr);
}

HSCOPE_API void
hscope_domtree_free(hscope_domtree_t *t)
{
    hscope__domtree_free(t);
}

HSCOPE_API hscope_heap_t *
hscope_domtree_heap(const hscope_domtree_t *t)
{
    return hscope__domtree_heap(t);
}

HSCOPE_API hscope_status
hscope_domtree_idom(const hscope_domtree_t *t, hscope_id id, hscope_id *idom,
                    int32_t *root_category)
{
    return hscope__domtree_idom(t, id, idom, root_category);
}

HSCOPE_API uint64_t
hscope_domtree_retained(const hscope_domtree_t *t, hscope_id id)
{
    return hscope__domtree_retained(t, id);
}

HSCOPE_API uint64_t
hscope_domtree_retained_count(const hscope_domtree_t *t, hscope_id id)
{
    return hscope__domtree_retained_count(t, id);
}

HSCOPE_API int32_t
hscope_domtree_reachable(const hscope_domtree_t *t, hscope_id id)
{
    return hscope__domtree_reachable(t, id);
}

HSCOPE_API void
hscope_domtree_totals(const hscope_domtree_t *t, uint64_t *reachable,
                      uint64_t *reachable_memsize, uint64_t *unreachable,
                      uint64_t *unreachable_memsize)
{
    hscope__domtree_totals(t, reachable, reachable_memsize, unreachable, unreachable_memsize);
}

HSCOPE_API hscope_status
hscope_domtree_children(hscope_domtree_t *t, hscope_id id, int32_t root_category,
                        const hscope_id **kids, uint64_t *count,
                        hscope_error *uerr)
{
    return hscope__domtree_children(t, id, root_category, kids, count, uerr);
}

HSCOPE_API hscope_status
hscope_domtree_unreachable(hscope_domtree_t *t, const hscope_id **ids,
                           uint64_t *count, hscope_error *uerr)
{
    return hscope__domtree_unreachable(t, ids, count, uerr);
}

HSCOPE_API uint64_t
hscope_domtree_chain(const hscope_domtree_t *t, hscope_id id, hscope_id *out,
                     uint64_t max, int32_t *root_category)
{
    return hscope__domtree_chain(t, id, out, max, root_category);
}

HSCOPE_API uint64_t
hscope_domtree_top(const hscope_domtree_t *t, hscope_id *out, uint64_t max)
{
    return hscope__domtree_top(t, out, max);
}

HSCOPE_API hscope_status
hscope_paths_compute(hscope_paths_t **out, hscope_heap_t *heap,
                     const hscope_dom_options *uopts, hscope_error *uerr)
{
    return hscope__paths_compute(out, heap, uopts, uerr);
}

HSCOPE_API void
hscope_paths_free(hscope_paths_t *p)
{
    hscope__paths_free(p);
}

HSCOPE_API uint64_t
hscope_paths_get(const hscope_paths_t *p, hscope_id target, hscope_id *out,
                 uint64_t max, int32_t *root_category)
{
    return hscope__paths_get(p, target, out, max, root_category);
}

HSCOPE_API hscope_status
hscope_holders_compute(hscope_holders_t **out, hscope_domtree_t *t,
                       const hscope_id *ids, uint64_t n, hscope_error *uerr)
{
    return hscope__holders_compute(out, t, ids, n, uerr);
}

HSCOPE_API void
hscope_holders_free(hscope_holders_t *hs)
{
    hscope__holders_free(hs);
}

HSCOPE_API uint64_t
hscope_holders_count(const hscope_holders_t *hs)
{
    return hscope__holders_count(hs);
}

HSCOPE_API hscope_status
hscope_holders_get(const hscope_holders_t *hs, uint64_t i, hscope_id *holder_id,
                   int32_t *root_category, uint64_t *count, uint64_t *memsize)
{
    return hscope__holders_get(hs, i, holder_id, root_category, count, memsize);
}
