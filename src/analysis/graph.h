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

/* A vertex's successors as a range, for walks that visit every one (the
 * dominator tree's DFS and predecessor lists, the shortest paths' BFS):
 * [pos, end) of its references (an object's edges, a category's root
 * targets, the super-root's categories n + pos), then `cls`, an object's
 * class edge (NONE: none, or taken).  The order of hscope__succ_at(), read
 * straight from the columns instead of looked up again for each k. */
typedef struct hscope__succs {
    uint32_t v, pos, end, cls;
} hscope__succs;

static inline void
hscope__succs_of(const hscope__graph *g, uint32_t v, hscope__succs *s)
{
    const hscope_heap_t *h = g->h;
    s->v = v;
    s->cls = HSCOPE__NO_VERTEX;
    if (v < g->n) {
        s->pos = h->edge_start[v];
        s->end = h->edge_start[v + 1];
        if (g->class_edges && h->cls[v] < HSCOPE__CLS_UNKNOWN)
            s->cls = h->cls[v];
    } else if (v < g->n + g->ncat) {
        s->pos = (uint32_t)h->cat_start[v - g->n];
        s->end = (uint32_t)h->cat_start[v - g->n + 1];
    } else {
        s->pos = 0;
        s->end = g->ncat;
    }
}

/* The next successor of s, or HSCOPE__NO_VERTEX after the last. */
static inline uint32_t
hscope__succs_next(const hscope__graph *g, hscope__succs *s)
{
    if (s->pos < s->end) {
        uint32_t k = s->pos++;
        return s->v < g->n ? g->h->edges[k]
               : s->v < g->n + g->ncat ? g->h->root_targets[k] : g->n + k;
    }
    uint32_t w = s->cls;
    s->cls = HSCOPE__NO_VERTEX;
    return w;
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
