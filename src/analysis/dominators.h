/*
 * dominators.h - the dominator tree, holders (dominators.c) and paths
 * from the roots (paths.c): the bodies of the exported functions
 * (api/dominators_api.c exports them).
 */
#ifndef HSCOPE_ANALYSIS_DOMINATORS_H
#define HSCOPE_ANALYSIS_DOMINATORS_H

#include "../model/model.h"

void hscope__dom_options_init(hscope_dom_options *o);
hscope_status hscope__domtree_compute(hscope_domtree_t **out,
                                      hscope_heap_t *heap,
                                      const hscope_dom_options *uopts,
                                      hscope_error *uerr);
void hscope__domtree_free(hscope_domtree_t *t);
/* The memory the handle holds (hscope_domtree_memory()). */
uint64_t hscope__domtree_memory(const hscope_domtree_t *t);
hscope_heap_t *hscope__domtree_heap(const hscope_domtree_t *t);
hscope_status hscope__domtree_idom(const hscope_domtree_t *t, hscope_id id,
                                   hscope_id *idom, int32_t *root_category);
uint64_t hscope__domtree_retained(const hscope_domtree_t *t, hscope_id id);
uint64_t hscope__domtree_retained_count(const hscope_domtree_t *t,
                                        hscope_id id);
/* Bring in object id's retained count and size (see
 * hscope__heap_prefetch). */
void hscope__domtree_prefetch(const hscope_domtree_t *t, hscope_id id);
int32_t hscope__domtree_reachable(const hscope_domtree_t *t, hscope_id id);
void hscope__domtree_totals(const hscope_domtree_t *t, uint64_t *reachable,
                            uint64_t *reachable_memsize, uint64_t *unreachable,
                            uint64_t *unreachable_memsize);
hscope_status hscope__domtree_children(hscope_domtree_t *t, hscope_id id,
                                       int32_t root_category,
                                       const hscope_id **kids, uint64_t *count,
                                       hscope_error *uerr);
/* Every vertex's children at once, for walks of the whole tree: *kids
 * (the tree's own, as hscope__domtree_children gives them) and a fresh
 * *start of n + ncat + 2 entries (hscope__free it; 4 bytes per vertex):
 * vertex v's children are kids[start[v] .. start[v + 1]). */
hscope_status hscope__domtree_child_starts(hscope_domtree_t *t, const hscope_id **kids,
                                           uint32_t **start, hscope_error *err);
hscope_status hscope__domtree_unreachable(hscope_domtree_t *t,
                                          const hscope_id **ids,
                                          uint64_t *count, hscope_error *uerr);
uint64_t hscope__domtree_chain(const hscope_domtree_t *t, hscope_id id,
                               hscope_id *out, uint64_t max,
                               int32_t *root_category);
uint64_t hscope__domtree_top(const hscope_domtree_t *t, hscope_id *out,
                             uint64_t max);
/* The same over the reachable objects of ids[0..nids) (NULL: every
 * object): at most max into out, largest retained size first, ties by
 * address; returns how many. */
uint64_t hscope__domtree_top_of(const hscope_domtree_t *t, const hscope_id *ids,
                                uint64_t nids, hscope_id *out, uint64_t max);
hscope_status hscope__paths_compute(hscope_paths_t **out, hscope_heap_t *heap,
                                    const hscope_dom_options *uopts,
                                    hscope_error *uerr);
void hscope__paths_free(hscope_paths_t *p);
/* The memory the handle holds (hscope_paths_memory()). */
uint64_t hscope__paths_memory(const hscope_paths_t *p);
uint64_t hscope__paths_get(const hscope_paths_t *p, hscope_id target,
                           hscope_id *out, uint64_t max,
                           int32_t *root_category);
hscope_status hscope__holders_compute(hscope_holders_t **out,
                                      hscope_domtree_t *t, const hscope_id *ids,
                                      uint64_t n, hscope_error *uerr);
void hscope__holders_free(hscope_holders_t *hs);
/* The memory the handle holds (hscope_holders_memory()). */
uint64_t hscope__holders_memory(const hscope_holders_t *hs);
uint64_t hscope__holders_count(const hscope_holders_t *hs);
hscope_status hscope__holders_get(const hscope_holders_t *hs, uint64_t i,
                                  hscope_id *holder_id, int32_t *root_category,
                                  uint64_t *count, uint64_t *memsize);

/* Whether object -> class edges are in the graph of a tree or paths. */
int hscope__domtree_class_edges(const hscope_domtree_t *t);
int hscope__paths_class_edges(const hscope_paths_t *p);
/* The heap of a paths result. */
hscope_heap_t *hscope__paths_heap(const hscope_paths_t *p);

/* paths.c: up to max_paths paths from the roots to target (the shortest
 * first, then through other referrers); fn gets each, objects from the
 * first after the root category `cat` (-1: the super-root) to target
 * inclusive; len 0 once when no root reaches target. */
typedef void (*hscope__path_fn)(void *ud, hscope_id target, const hscope_id *path,
                                uint64_t len, int32_t cat);
hscope_status hscope__paths_each(const hscope_paths_t *p, hscope_id target,
                                 uint64_t max_paths, hscope__path_fn fn, void *ud,
                                 hscope_error *err);

/* dominators.c: put the holders in the order `order` gives (order[k]: the
 * old index of the new k-th holder, a permutation of 0..count-1). */
hscope_status hscope__holders_reorder(hscope_holders_t *hs, const uint32_t *order,
                                      hscope_error *err);

#endif
