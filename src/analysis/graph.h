/*
 * graph.h - the graph the dominator tree (dominators.c) and the shortest
 * paths from the roots (paths.c) walk: objects 0..n-1, one vertex per ROOT
 * category n..n+ncat-1, the super-root n+ncat; object -> object references
 * and, unless switched off, object -> its class.
 */
#ifndef HSCOPE_ANALYSIS_GRAPH_H
#define HSCOPE_ANALYSIS_GRAPH_H

#include "../model/model.h"

#define HSCOPE__NO_VERTEX 0xFFFFFFFFu

typedef struct hscope__graph {
    const hscope_heap_t *h;
    uint32_t n, ncat, root, nv;
    int class_edges;
} hscope__graph;

/* The k-th successor of vertex v, or HSCOPE__NO_VERTEX past the last one. */
static inline uint32_t
hscope__succ_at(const hscope__graph *g, uint32_t v, uint32_t k)
{
    const hscope_heap_t *h = g->h;
    if (v < g->n) {
        uint32_t deg = h->edge_start[v + 1] - h->edge_start[v];
        if (k < deg)
            return h->edges[h->edge_start[v] + k];
        if (k == deg && g->class_edges && h->cls[v] < HSCOPE__CLS_UNKNOWN)
            return h->cls[v];
        return HSCOPE__NO_VERTEX;
    }
    if (v < g->n + g->ncat) {
        uint32_t c = v - g->n;
        uint64_t i = h->cat_start[c] + k;
        return i < h->cat_start[c + 1] ? h->root_targets[i] : HSCOPE__NO_VERTEX;
    }
    return k < g->ncat ? g->n + k : HSCOPE__NO_VERTEX;
}

/* The chain from id up a tree (up(ctx, v): the dominator tree's idom or
 * the shortest-path tree's predecessor, HSCOPE__NO_VERTEX when unreached)
 * to the vertex above the n objects: a root category (n..n+ncat-1) or the
 * super-root.  Returns its length; fills out[0..max) root end first;
 * *root_category is the category or -1. */
typedef uint32_t (*hscope__up_fn)(const void *ctx, uint32_t v);
uint64_t hscope__chain_up(hscope__up_fn up, const void *ctx, uint32_t n, uint32_t ncat,
                          hscope_id id, hscope_id *out, uint64_t max, int32_t *root_category);

#endif
