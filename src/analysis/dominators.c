/*
 * dominators.c - dominator tree and retained sizes (Eclipse MAT's question
 * "what would be freed if this went away?").
 *
 * Graph: a synthetic super-root -> one node per ROOT category -> its
 * targets; object -> object references; and, unless switched off, object
 * -> its class (the dump does not list that edge, but an object keeps its
 * class alive).  Vertices: objects 0..n-1, categories n..n+k-1, super-root
 * n+k.
 *
 * Algorithm: semi-NCA (Georgiadis & Tarjan's simplification of
 * Lengauer-Tarjan), iterative throughout: an explicit DFS stack for the
 * preorder, path compression with an explicit stack, so the call depth
 * never grows with the heap (a 10^6-long chain is fine).  Near-linear time.
 *
 * Memory: while it runs, 16 bytes per vertex plus 4 per reached edge that
 * is not a DFS tree edge (preorder numbering, a reverse CSR of the reached
 * graph in preorder numbers, the semi-dominator arrays, each freed as soon
 * as the next phase does without it); persistent 12 bytes per object
 * (immediate dominator u32, retained count u32, retained size u32, the
 * rare size of 4 GiB or more in a table).  The paths from the roots
 * (paths.c) walk the same graph (graph.h).
 *
 * compute() is long on purpose: the phases share their arrays, and their
 * reuse (ancestor -> idom, predecessor starts -> semi) and early frees are
 * what keep memory low; each phase is marked.
 */
#include <stdlib.h>
#include <string.h>

#include "../index/index.h"
#include "../model/model.h"
#include "dominators.h"
#include "graph.h"

#define NONE HSCOPE__NO_VERTEX

/*
 * Look-ahead distances of the software prefetches.  Every phase is a
 * stream of random reads (a vertex's number, its successors' range, a
 * dominator's sums) driven by an array read in order (the references, the
 * preorder); the prefetch names the random line a few steps before it is
 * needed (bench/README.md has what each saved).
 */
#define PF_DFS 4
#define PF_PREDS 16
#define PF_SIZES 8

struct hscope_domtree {
    hscope_heap_t *heap;
    uint32_t n, ncat;
    uint32_t *idom;        /* per object: vertex id (object, category, root) or NONE */
    uint32_t *rcount;      /* retained count (objects) */
    uint32_t *rsize;       /* retained size (memsize sum); RS_BIG: in big[] */
    uint32_t *big_id;      /* retained sizes of 4 GiB or more: an open-addressing */
    uint64_t *big_val;     /* table by id + 1 (0: empty slot), big_cap a power of 2 */
    uint32_t big_cap, big_n;
    uint64_t reachable, reach_memsize;
    uint64_t unreach, unreach_memsize;
    int class_edges;
    /* children, built on first use: the reachable objects sorted by
     * idom vertex (then id), found by binary search on idom (no per-vertex
     * start array: 4 bytes per vertex less for as long as the tree lives) */
    pthread_mutex_t lock;
    _Atomic int kids_ready;
    uint32_t *kids;
    uint32_t *unreach_ids;
};

typedef hscope__graph graph;

/*
 * The predecessor counts, per target's preorder number, in two halves by
 * the source's vertex id: ca for the sources below `split` (chosen where
 * the references and class edges before and after are about equal), cb
 * for the rest.  The first DFS fills them; build_preds() fills each list
 * from both halves at once.
 */
typedef struct pcounts {
    uint32_t *ca, *cb;
    uint32_t split;
} pcounts;

static uint32_t
preds_split(const graph *g)
{
    const uint32_t *es = g->h->edge_start;
    uint64_t half = ((uint64_t)es[g->n] + g->n) / 2;
    uint32_t lo = 0, hi = g->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((uint64_t)es[mid] + mid < half)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One half of the fill: the sources [from, to) by vertex id, each put at
 * pr[cur[q]++] for its target q, except on an edge to its DFS tree child
 * (the tree edge, and any repeat of it). */
typedef struct pwork {
    const graph *g;
    const uint32_t *num, *parent;
    uint32_t *cur, *pr;
    uint32_t from, to;
} pwork;

static void *
preds_part(void *arg)
{
    const pwork *W = arg;
    const graph *g = W->g;
    const uint32_t *num = W->num, *parent = W->parent, *edges = g->h->edges;
    uint32_t *cur = W->cur, *pr = W->pr;
    uint32_t nobj_edges = g->h->edge_start[g->n];
    for (uint32_t v = W->from; v < W->to; v++) {
        uint32_t p = num[v];
        if (p == NONE)
            continue;
        hscope__succs sc;
        hscope__succs_of(g, v, &sc);
        if (v < g->n) {
            /* the objects' references are one array, read in order: the
             * number of a target PF_PREDS ahead, and then what the fill
             * reads of it (both may be past this object's own) */
            for (uint32_t k = sc.pos; k < sc.end; k++) {
                if (k + PF_PREDS < nobj_edges)
                    __builtin_prefetch(&num[edges[k + PF_PREDS]]);
                if (k + PF_PREDS / 2 < nobj_edges) {
                    uint32_t q = num[edges[k + PF_PREDS / 2]];
                    if (q != NONE) {
                        __builtin_prefetch(&parent[q]);
                        __builtin_prefetch(&cur[q], 1);
                    }
                }
            }
        }
        for (uint32_t w; (w = hscope__succs_next(g, &sc)) != NONE;) {
            uint32_t q = num[w]; /* a reached vertex's successors are reached */
            if (parent[q] != p)
                pr[cur[q]++] = p;
        }
    }
    return NULL;
}

/*
 * Reverse CSR of the reached part of the augmented graph, in preorder
 * numbers: *pstart (cnt + 1 entries: pc->ca's block), *preds (an edge's
 * source as a preorder number, grouped by its target's).  DFS tree edges
 * are left out: the semi-dominator search starts from the parent instead.
 * Each list gets the first half's sources, then the second half's, each
 * half filled on its own thread (large graphs, two cores) with its own
 * cursors: every list holds its sources in vertex id order, as one pass
 * would make it, and the halves never write the same word.
 */
static hscope_status
build_preds(const graph *g, hscope__mem *m, const uint32_t *num, const uint32_t *parent,
            uint32_t cnt, const pcounts *pc, uint32_t **pstart, uint32_t **preds,
            hscope_error *err)
{
    uint32_t *ca = pc->ca, *cb = pc->cb;
    uint64_t ne = 0;
    for (uint32_t q = 0; q < cnt; q++) {
        uint64_t na = ca[q], nb = cb[q];
        ca[q] = (uint32_t)ne;
        cb[q] = (uint32_t)(ne + na);
        ne += na + nb;
        if (ne >= UINT32_MAX)
            return hscope__fail(err, HSCOPE_ERR_LIMIT, "graph too large for dominators");
    }
    uint32_t *pr = hscope__malloc(m, (size_t)(ne + 1) * sizeof(uint32_t));
    if (!pr)
        return hscope__nomem(err, (size_t)ne * 4);
    pwork W[2] = { { g, num, parent, ca, pr, 0, pc->split },
                   { g, num, parent, cb, pr, pc->split, g->nv } };
    if (hscope__cores() > 1 && g->nv >= ((uint32_t)1 << 16)) {
        hscope__run_pair(preds_part, &W[0], &W[1], 1);
    } else {
        preds_part(&W[0]);
        preds_part(&W[1]);
    }
    /* the second half's cursors ended where each list ends */
    for (uint32_t q = cnt; q > 0; q--)
        ca[q] = cb[q - 1];
    ca[0] = 0;
    *pstart = ca;
    *preds = pr;
    return HSCOPE_OK;
}

/* The path-compression stack: as deep as the longest path compressed,
 * which is short in practice; grown on demand. */
typedef struct cstack {
    hscope__mem *m;
    uint32_t *s;
    size_t cap;
    int failed;
} cstack;

/*
 * eval(v) while w is processed: the minimum semi-dominator value on the
 * compressed path from v up to (not including) the root of its linked
 * tree.  The vertices numbered after w are the linked ones (anc[], the
 * forest, and label[], semi values, are read only for them); one numbered
 * w or lower is a root, its own label.  Path compression is iterative:
 * the path is collected on the stack and compressed from the top down, as
 * the recursive version would.  If the stack cannot grow, the path is
 * left uncompressed (still correct) and the failure is noted.
 */
static uint32_t
eval(uint32_t v, uint32_t w, uint32_t *anc, uint32_t *label, cstack *cs)
{
    if (v <= w)
        return v;
    size_t sp = 0;
    uint32_t u = v;
    while (anc[u] > w) {
        if (sp == cs->cap) {
            hscope_error e;
            hscope__error_init(&e);
            if (hscope__grow(cs->m, (void **)&cs->s, &cs->cap, sp + 1, 4, &e) != HSCOPE_OK) {
                cs->failed = 1;
                return 0;
            }
        }
        cs->s[sp++] = u;
        u = anc[u];
    }
    while (sp > 0) {
        uint32_t x = cs->s[--sp];
        uint32_t a = anc[x];
        if (label[a] < label[x])
            label[x] = label[a];
        anc[x] = anc[a];
    }
    return label[v];
}

void
hscope__dom_options_init(hscope_dom_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
}

/*
 * Iterative DFS from the super-root, successors in order: num[] gets each
 * reached vertex's preorder number (NONE before: the visited marks),
 * parent[] (by number) its DFS tree parent's, *pcnt their count.  Every
 * edge out of a reached vertex is examined once: one to a vertex already
 * numbered that is not the DFS tree edge to it (nor a repeat of that
 * edge) counts in pc's half of its source, at the target's number:
 * build_preds()'s sizes.  The stack holds each open vertex's successor
 * range (hscope__succs, 16 bytes) and grows only as deep as the DFS goes.
 */
static hscope_status
dfs(const graph *g, hscope__mem *m, uint32_t *num, uint32_t *parent, const pcounts *pc,
    uint32_t *pcnt, hscope_error *err)
{
    hscope__succs *stack = NULL;
    size_t scap = 0, sp = 0;
    hscope_status st;
    st = hscope__grow(m, (void **)&stack, &scap, 512, sizeof(hscope__succs), err);
    if (st != HSCOPE_OK)
        return st;
    uint32_t cnt = 0, r = g->root;
    num[r] = cnt;
    parent[cnt] = NONE;
    cnt++;
    hscope__succs_of(g, r, &stack[0]);
    sp = 1;
    while (sp > 0) {
        hscope__succs *f = &stack[sp - 1];
        if (f->v < g->n && f->pos + 1 < f->end) {
            /* a later successor of this object (PF_DFS on, or its last,
             * as most objects have few): its number, and the columns
             * read if it is new; half as far on, where the references of
             * that successor start (its row prefetched a step before) */
            uint32_t j = f->pos + PF_DFS < f->end ? f->pos + PF_DFS : f->end - 1;
            uint32_t a = g->h->edges[j];
            __builtin_prefetch(&num[a]);
            __builtin_prefetch(&g->h->edge_start[a]);
            __builtin_prefetch(&g->h->cls[a]);
            uint32_t j2 = f->pos + PF_DFS / 2 < f->end ? f->pos + PF_DFS / 2 : f->end - 1;
            uint32_t a2 = g->h->edges[j2];
            __builtin_prefetch(&g->h->edges[g->h->edge_start[a2]]);
        }
        uint32_t w = hscope__succs_next(g, f);
        if (w == NONE) {
            sp--;
            continue;
        }
        uint32_t q = num[w];
        if (q != NONE) {
            if (parent[q] != num[f->v])
                (f->v < pc->split ? pc->ca : pc->cb)[q]++;
            continue;
        }
        num[w] = cnt;
        parent[cnt] = num[f->v];
        cnt++;
        if (sp == scap &&
            (st = hscope__grow(m, (void **)&stack, &scap, scap + 1, sizeof(hscope__succs), err)) !=
                HSCOPE_OK) {
            hscope__free(m, stack);
            return st;
        }
        hscope__succs_of(g, w, &stack[sp++]);
    }
    hscope__free(m, stack);
    *pcnt = cnt;
    return HSCOPE_OK;
}

/* A semi-dominator below its vertex's parent: the parent is kept for the
 * NCA step (see semi_dominators()). */
#define SEMI_BELOW 0x80000000u

/*
 * Phase 3 of compute(): semi-dominators, in reverse preorder.  pa[] is
 * the DFS tree parents and also the forest of linked vertices (anc): w is
 * linked to its parent once processed, which is where its entry already
 * points, and path compression then changes only processed entries.
 * semi(w) is kept in pstart[w + 1], which only w itself reads (as the end
 * of its list) and has read by then.  Where it is below the parent, the
 * parent is lost to compression but needed by the NCA step: it is flagged
 * (SEMI_BELOW), and the parent goes to the end of preds, whose lists are
 * read from the end: such a vertex has at least one predecessor, so the
 * parents never overtake what is still unread.  *nbelow gets their count
 * (at preds[npreds - *nbelow] on, in preorder).
 */
static hscope_status
semi_dominators(hscope__mem *m, uint32_t cnt, uint32_t *pa, uint32_t *pstart, uint32_t *preds,
                uint32_t *nbelow, hscope_error *err)
{
    cstack cs = { m, NULL, 0, 0 };
    uint32_t *label = hscope__malloc(m, (size_t)cnt * 4);
    if (!label)
        return hscope__nomem(err, (size_t)cnt * 4);
    hscope_status st = HSCOPE_OK;
    uint32_t top = pstart[cnt], nb = 0;
    for (uint32_t w = cnt - 1; w > 0; w--) {
        /* the parent (tree edge, not in preds) is a candidate: unlinked,
         * eval(parent) is parent itself */
        uint32_t p = pa[w], s = p, end = pstart[w + 1];
        for (uint32_t k = pstart[w]; k < end; k++) {
            uint32_t x = eval(preds[k], w, pa, label, &cs);
            if (x < s)
                s = x;
        }
        if (cs.failed) {
            st = hscope__nomem(err, cs.cap * 8);
            break;
        }
        label[w] = s;
        if (s < p) {
            preds[top - ++nb] = p;
            s |= SEMI_BELOW;
        }
        pstart[w + 1] = s;
    }
    hscope__free(m, label);
    hscope__free(m, cs.s);
    *nbelow = nb;
    return st;
}

/* Phase 5 of compute(): the immediate dominators (idom, by preorder
 * number) as object ids in t->idom (order: number -> vertex). */
static hscope_status
idom_ids(hscope_domtree_t *t, const graph *g, const uint32_t *order, const uint32_t *idom,
         uint32_t cnt, hscope_error *err)
{
    t->idom = hscope__malloc(&t->heap->mem, ((size_t)g->n + 1) * sizeof(uint32_t));
    if (!t->idom)
        return hscope__nomem(err, (size_t)g->n * 4);
    memset(t->idom, 0xFF, ((size_t)g->n + 1) * sizeof(uint32_t));
    for (uint32_t w = 1; w < cnt; w++)
        if (order[w] < g->n)
            t->idom[order[w]] = order[idom[w]];
    return HSCOPE_OK;
}

#define RS_BIG 0xFFFFFFFFu

/* The slot of id in the table of big retained sizes (its own, or the empty
 * one where it goes). */
static uint32_t
big_slot(const hscope_domtree_t *t, uint32_t id)
{
    uint32_t mask = t->big_cap - 1, k = (id * 2654435761u) & mask;
    while (t->big_id[k] && t->big_id[k] != id + 1)
        k = (k + 1) & mask;
    return k;
}

static uint64_t
rs_get(const hscope_domtree_t *t, uint32_t id)
{
    uint32_t x = t->rsize[id];
    return x != RS_BIG ? x : t->big_val[big_slot(t, id)];
}

/* Retained sizes are 4 bytes per object: the rare one of 4 GiB or more (a
 * heap's biggest holders at most) goes to the table. */
static hscope_status
rs_set(hscope_domtree_t *t, uint32_t id, uint64_t v, hscope_error *err)
{
    if (v < RS_BIG) {
        t->rsize[id] = (uint32_t)v;
        return HSCOPE_OK;
    }
    if (t->rsize[id] != RS_BIG && (t->big_n + 1) * 2 > t->big_cap) {
        hscope__mem *m = &t->heap->mem;
        uint32_t cap = t->big_cap ? t->big_cap * 2 : 64;
        uint32_t *ids = hscope__calloc(m, cap, sizeof(uint32_t));
        uint64_t *vals = hscope__malloc(m, (size_t)cap * sizeof(uint64_t));
        if (!ids || !vals) {
            hscope__free(m, ids);
            hscope__free(m, vals);
            return hscope__nomem(err, (size_t)cap * 12);
        }
        uint32_t *old_id = t->big_id, old_cap = t->big_cap;
        uint64_t *old_val = t->big_val;
        t->big_id = ids;
        t->big_val = vals;
        t->big_cap = cap;
        for (uint32_t k = 0; k < old_cap; k++)
            if (old_id[k]) {
                uint32_t j = big_slot(t, old_id[k] - 1);
                t->big_id[j] = old_id[k];
                t->big_val[j] = old_val[k];
            }
        hscope__free(m, old_id);
        hscope__free(m, old_val);
    }
    uint32_t k = big_slot(t, id);
    if (!t->big_id[k]) {
        t->big_id[k] = id + 1;
        t->big_n++;
    }
    t->big_val[k] = v;
    t->rsize[id] = RS_BIG;
    return HSCOPE_OK;
}

/* Then the retained sizes: children before parents (reverse preorder;
 * idom[w] < w), straight into the output arrays. */
static hscope_status
retained_sizes(hscope_domtree_t *t, const graph *g, const uint32_t *order, uint32_t cnt,
               hscope_error *err)
{
    hscope__mem *m = &t->heap->mem;
    t->rcount = hscope__calloc(m, (size_t)g->n + 1, sizeof(uint32_t));
    t->rsize = hscope__calloc(m, (size_t)g->n + 1, sizeof(uint32_t));
    if (!t->rcount || !t->rsize)
        return hscope__nomem(err, (size_t)g->n * 8);
    hscope_status st;
    for (uint32_t w = cnt - 1; w > 0; w--) {
        if (w > 2 * PF_SIZES) {
            /* the vertex 2 * PF_SIZES on: its own entries; PF_SIZES on:
             * its dominator's, which it adds to */
            uint32_t a = order[w - 2 * PF_SIZES], b = order[w - PF_SIZES];
            if (a < g->n) {
                __builtin_prefetch(&t->idom[a]);
                __builtin_prefetch(&g->h->memsize[a]);
                __builtin_prefetch(&t->rsize[a], 1);
                __builtin_prefetch(&t->rcount[a], 1);
            }
            if (b < g->n && t->idom[b] < g->n) {
                __builtin_prefetch(&t->rsize[t->idom[b]], 1);
                __builtin_prefetch(&t->rcount[t->idom[b]], 1);
            }
        }
        uint32_t v = order[w];
        if (v >= g->n)
            continue;
        uint32_t d = t->idom[v];
        uint64_t ms = hscope__memsize(g->h, v);
        uint64_t r = hscope__sat_add(rs_get(t, v), ms);
        if ((st = rs_set(t, v, r, err)) != HSCOPE_OK)
            return st;
        t->rcount[v] += 1;
        if (d < g->n) {
            if ((st = rs_set(t, d, hscope__sat_add(rs_get(t, d), r), err)) != HSCOPE_OK)
                return st;
            t->rcount[d] += t->rcount[v];
        }
        t->reachable++;
        t->reach_memsize = hscope__sat_add(t->reach_memsize, ms);
    }
    return HSCOPE_OK;
}

/*
 * Memory, per vertex (v) and per reached edge that is not a DFS tree edge
 * (e; tree edges are not stored): the phases free what they no longer
 * need before the next allocates, so the peak is 16 v + 4 e (building the
 * predecessors: numbers, parents, two count halves; then the
 * semi-dominators: parents as the forest, list starts as semi values, the
 * labels, the preorder), or 16 v when the results are written, of which
 * 12 bytes per object (idom, retained count and size) stay.  The preorder
 * costs no fifth array because the forest shares the parents' (see
 * semi_dominators()) and it takes the spent cursors' block.
 */
static hscope_status
compute(hscope_domtree_t *t, const graph *g, hscope_error *err)
{
    hscope__mem *m = &t->heap->mem;
    hscope_status st;
    uint32_t nv = g->nv;
    if (nv >= SEMI_BELOW) /* a semi value and its flag in one word */
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "graph too large for dominators");
    uint32_t *num = NULL, *order = NULL, *parent = NULL, *pstart = NULL, *preds = NULL;

    /* Phase 1: preorder numbers (num: vertex -> number), DFS tree parents
     * (by number) and the predecessor counts in two halves. */
    pcounts pc = { NULL, NULL, preds_split(g) };
    num = hscope__malloc(m, (size_t)nv * 4);
    parent = hscope__malloc(m, (size_t)nv * 4);
    pc.ca = hscope__calloc(m, (size_t)nv + 1, sizeof(uint32_t));
    pc.cb = hscope__calloc(m, (size_t)nv + 1, sizeof(uint32_t));
    if (!num || !parent || !pc.ca || !pc.cb) {
        st = hscope__nomem(err, (size_t)nv * 16);
        goto out;
    }
    memset(num, 0xFF, (size_t)nv * 4);
    uint32_t cnt = 0;
    if ((st = dfs(g, m, num, parent, &pc, &cnt, err)) != HSCOPE_OK)
        goto out;

    /* Phase 2: predecessors in preorder numbers (pstart: pc.ca's block,
     * preds).  Then the second half's cursors are spent, and their block
     * gets the vertices in preorder (order: number -> vertex), the
     * numbering inverted, which is no longer needed. */
    if ((st = build_preds(g, m, num, parent, cnt, &pc, &pstart, &preds, err)) != HSCOPE_OK)
        goto out;
    pc.ca = NULL;
    order = pc.cb;
    pc.cb = NULL;
    for (uint32_t v = 0; v < nv; v++)
        if (num[v] != NONE)
            order[num[v]] = v;
    hscope__free(m, num);
    num = NULL;

    /* Phase 3: semi-dominators (semi(w) in pstart[w + 1], flagged when
     * below the parent, whose parent is then in preds' tail). */
    uint32_t nbelow = 0, npreds = pstart[cnt];
    if ((st = semi_dominators(m, cnt, parent, pstart, preds, &nbelow, err)) != HSCOPE_OK)
        goto out;
    uint32_t *semi = pstart + 1;

    /* Phase 4: NCA step: idom = parent, then climb while above semi.
     * The parent is the semi value itself unless flagged, else the next
     * one in preds' tail.  The idom array (preorder numbers) takes the
     * forest's block, which is no longer read. */
    uint32_t *idom = parent;
    idom[0] = 0;
    for (uint32_t w = 1, k = npreds - nbelow; w < cnt; w++) {
        uint32_t sw = semi[w], d = sw;
        if (sw & SEMI_BELOW) {
            sw &= ~SEMI_BELOW;
            for (d = preds[k++]; d > sw;)
                d = idom[d];
        }
        idom[w] = d;
    }
    hscope__free(m, pstart);
    hscope__free(m, preds);
    pstart = preds = NULL;

    /* Phase 5: the results, per object: idom goes to vertex ids, then
     * retained sizes accumulate children before parents (reverse
     * preorder; idom[w] < w) straight into the output arrays. */
    if ((st = idom_ids(t, g, order, idom, cnt, err)) != HSCOPE_OK)
        goto out;
    hscope__free(m, parent);
    parent = idom = NULL;
    if ((st = retained_sizes(t, g, order, cnt, err)) != HSCOPE_OK)
        goto out;
    t->unreach = g->n - t->reachable;
    st = HSCOPE_OK;
out:
    hscope__free(m, pc.ca); /* NULL once it became pstart */
    hscope__free(m, pc.cb);
    hscope__free(m, num);
    hscope__free(m, order);
    hscope__free(m, parent);
    hscope__free(m, pstart);
    hscope__free(m, preds);
    return st;
}

hscope_status
hscope__domtree_compute(hscope_domtree_t **out, hscope_heap_t *heap,
                        const hscope_dom_options *uopts, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st;
    hscope_domtree_t *t = NULL;
    hscope_dom_options o;
    hscope__dom_options_init(&o);
    if (!out || !heap) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out and heap are required");
        goto done;
    }
    *out = NULL;
    if (uopts) {
        if (uopts->size < 2 * sizeof(uint32_t)) {
            st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "dominator options size not set");
            goto done;
        }
        if (!hscope__tail_is_zero(uopts, uopts->size, sizeof(o))) {
            st = hscope__fail(&err, HSCOPE_ERR_UNSUPPORTED,
                              "hscope_dom_options has unknown non-zero fields");
            goto done;
        }
        memcpy(&o, uopts, uopts->size < sizeof(o) ? uopts->size : sizeof(o));
        if (o.flags & ~(uint32_t)HSCOPE_DOM_NO_CLASS_EDGES) {
            st = hscope__fail(&err, HSCOPE_ERR_UNSUPPORTED, "unknown dominator flags 0x%x", o.flags);
            goto done;
        }
    }
    if ((uint64_t)heap->n + heap->ncat + 1 >= NONE) {
        st = hscope__fail(&err, HSCOPE_ERR_LIMIT, "too many objects for the dominator tree");
        goto done;
    }
    t = hscope__calloc(&heap->mem, 1, sizeof(*t));
    if (!t) {
        st = hscope__nomem(&err, sizeof(*t));
        goto done;
    }
    t->heap = heap;
    hscope__heap_retain(heap);
    pthread_mutex_init(&t->lock, NULL);
    t->n = heap->n;
    t->ncat = heap->ncat;
    t->class_edges = !(o.flags & HSCOPE_DOM_NO_CLASS_EDGES);
    graph g = { heap, heap->n, heap->ncat, heap->n + heap->ncat,
                heap->n + heap->ncat + 1, t->class_edges };
    if ((st = compute(t, &g, &err)) != HSCOPE_OK)
        goto done;
    for (uint32_t i = 0; i < heap->n; i++)
        if (t->idom[i] == NONE)
            t->unreach_memsize = hscope__sat_add(t->unreach_memsize, hscope__memsize(heap, i));
done:
    if (st != HSCOPE_OK) {
        hscope__domtree_free(t);
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    *out = t;
    return HSCOPE_OK;
}

void
hscope__domtree_free(hscope_domtree_t *t)
{
    if (!t)
        return;
    hscope_heap_t *h = t->heap;
    hscope__mem *m = &h->mem;
    hscope__free(m, t->idom);
    hscope__free(m, t->rcount);
    hscope__free(m, t->rsize);
    hscope__free(m, t->big_id);
    hscope__free(m, t->big_val);
    hscope__free(m, t->kids);
    hscope__free(m, t->unreach_ids);
    pthread_mutex_destroy(&t->lock);
    hscope__free(m, t);
    hscope__heap_release(h);
}

uint64_t
hscope__domtree_memory(const hscope_domtree_t *t)
{
    if (!t)
        return 0;
    /* the children, built on first use, counted once they are there */
    int kids = atomic_load(&((hscope_domtree_t *)t)->kids_ready);
    const void *b[] = { t->idom, t->rcount, t->rsize, t->big_id, t->big_val,
                        kids ? t->kids : NULL, t->unreach_ids, t };
    return hscope__msize_sum(b, sizeof(b) / sizeof(b[0]));
}

hscope_heap_t *
hscope__domtree_heap(const hscope_domtree_t *t)
{
    return t ? t->heap : NULL;
}

int
hscope__domtree_class_edges(const hscope_domtree_t *t)
{
    return t->class_edges;
}


hscope_status
hscope__domtree_idom(const hscope_domtree_t *t, hscope_id id, hscope_id *idom,
                     int32_t *root_category)
{
    if (!t || !idom)
        return HSCOPE_ERR_INVALID_ARG;
    if (id >= t->n || t->idom[id] == NONE)
        return HSCOPE_ERR_NOT_FOUND;
    uint32_t d = t->idom[id];
    if (d < t->n) {
        *idom = d;
        if (root_category)
            *root_category = -1;
    } else {
        *idom = HSCOPE_ID_NONE;
        if (root_category)
            *root_category = d < t->n + t->ncat ? (int32_t)(d - t->n) : -1;
    }
    return HSCOPE_OK;
}

uint64_t
hscope__domtree_retained(const hscope_domtree_t *t, hscope_id id)
{
    return t && id < t->n ? rs_get(t, id) : 0;
}

uint64_t
hscope__domtree_retained_count(const hscope_domtree_t *t, hscope_id id)
{
    return t && id < t->n ? t->rcount[id] : 0;
}

void
hscope__domtree_prefetch(const hscope_domtree_t *t, hscope_id id)
{
    if (t && id < t->n) {
        __builtin_prefetch(&t->rcount[id]);
        __builtin_prefetch(&t->rsize[id]);
    }
}

int32_t
hscope__domtree_reachable(const hscope_domtree_t *t, hscope_id id)
{
    return t && id < t->n && t->idom[id] != NONE;
}

void
hscope__domtree_totals(const hscope_domtree_t *t, uint64_t *reachable,
                       uint64_t *reachable_memsize, uint64_t *unreachable,
                       uint64_t *unreachable_memsize)
{
    if (reachable) *reachable = t ? t->reachable : 0;
    if (reachable_memsize) *reachable_memsize = t ? t->reach_memsize : 0;
    if (unreachable) *unreachable = t ? t->unreach : 0;
    if (unreachable_memsize) *unreachable_memsize = t ? t->unreach_memsize : 0;
}

/* Where each vertex's children start in the children CSR: start (nv + 1
 * zeros) gets the counts by idom vertex, then their prefix sums. */
static void
kid_starts(const hscope_domtree_t *t, uint32_t nv, uint32_t *start)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->idom[i] != NONE)
            start[t->idom[i] + 1]++;
    for (uint32_t v = 0; v < nv; v++)
        start[v + 1] += start[v];
}

/* Children CSR over all vertices (objects, categories, super-root). */
static hscope_status
build_kids(hscope_domtree_t *t, hscope_error *err)
{
    if (atomic_load_explicit(&t->kids_ready, memory_order_acquire))
        return HSCOPE_OK;
    hscope_status st = HSCOPE_OK;
    pthread_mutex_lock(&t->lock);
    if (!t->kids_ready) {
        hscope__mem *m = &t->heap->mem;
        uint32_t nv = t->n + t->ncat + 1;
        uint32_t *start = hscope__calloc(m, (size_t)nv + 1, 4);
        uint32_t *kids = hscope__malloc(m, ((size_t)t->reachable + 1) * 4);
        uint32_t *un = hscope__malloc(m, ((size_t)t->unreach + 1) * 4);
        if (!start || !kids || !un) {
            hscope__free(m, start);
            hscope__free(m, kids);
            hscope__free(m, un);
            st = hscope__nomem(err, (size_t)nv * 4);
        } else {
            uint64_t nu = 0;
            kid_starts(t, nv, start);
            for (uint32_t i = 0; i < t->n; i++) {
                if (t->idom[i] != NONE)
                    kids[start[t->idom[i]]++] = i;
                else
                    un[nu++] = i;
            }
            hscope__free(m, start);
            t->kids = kids;
            t->unreach_ids = un;
            atomic_store_explicit(&t->kids_ready, 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

/* The first index of t->kids whose idom vertex is v or above. */
static uint64_t
kids_from(const hscope_domtree_t *t, uint32_t v)
{
    uint64_t lo = 0, hi = t->reachable;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->idom[t->kids[mid]] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

hscope_status
hscope__domtree_children(hscope_domtree_t *t, hscope_id id, int32_t root_category,
                         const hscope_id **kids, uint64_t *count,
                         hscope_error *uerr)
{
    if (!t || !kids || !count)
        return HSCOPE_ERR_INVALID_ARG;
    uint32_t v;
    if (id != HSCOPE_ID_NONE) {
        if (id >= t->n)
            return HSCOPE_ERR_NOT_FOUND;
        v = id;
    } else if (root_category >= 0) {
        if ((uint32_t)root_category >= t->ncat)
            return HSCOPE_ERR_NOT_FOUND;
        v = t->n + (uint32_t)root_category;
    } else {
        v = t->n + t->ncat; /* the super-root */
    }
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st = build_kids(t, &err);
    if (st != HSCOPE_OK) {
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    /* the run's end by walking it (its entries are what the caller reads
     * next) rather than by a second search */
    uint64_t lo = kids_from(t, v), hi = lo;
    while (hi < t->reachable && t->idom[t->kids[hi]] == v)
        hi++;
    *kids = t->kids + lo;
    *count = hi - lo;
    return HSCOPE_OK;
}

hscope_status
hscope__domtree_child_starts(hscope_domtree_t *t, const hscope_id **kids, uint32_t **start,
                             hscope_error *err)
{
    hscope_status st = build_kids(t, err);
    if (st != HSCOPE_OK)
        return st;
    uint32_t nv = t->n + t->ncat + 1;
    uint32_t *s = hscope__calloc(&t->heap->mem, (size_t)nv + 1, sizeof(uint32_t));
    if (!s)
        return hscope__nomem(err, (size_t)nv * 4);
    kid_starts(t, nv, s); /* build_kids' own, so the kids' order */
    *kids = t->kids;
    *start = s;
    return HSCOPE_OK;
}

hscope_status
hscope__domtree_unreachable(hscope_domtree_t *t, const hscope_id **ids,
                            uint64_t *count, hscope_error *uerr)
{
    if (!t || !ids || !count)
        return HSCOPE_ERR_INVALID_ARG;
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st = build_kids(t, &err);
    if (st != HSCOPE_OK) {
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    *ids = t->unreach_ids;
    *count = t->unreach;
    return HSCOPE_OK;
}

uint64_t
hscope__chain_up(hscope__up_fn up, const void *ctx, uint32_t n, uint32_t ncat, hscope_id id,
                 hscope_id *out, uint64_t max, int32_t *root_category)
{
    if (id >= n || up(ctx, id) == NONE)
        return 0;
    uint64_t len = 0;
    uint32_t v = id;
    while (v < n) {
        len++;
        v = up(ctx, v);
    }
    if (root_category)
        *root_category = v < n + ncat ? (int32_t)(v - n) : -1;
    if (out) {
        uint64_t k = len;
        for (v = id; v < n; v = up(ctx, v))
            if (--k < max)
                out[k] = v;
    }
    return len;
}

static uint32_t
idom_up(const void *t, uint32_t v)
{
    return ((const hscope_domtree_t *)t)->idom[v];
}

uint64_t
hscope__domtree_chain(const hscope_domtree_t *t, hscope_id id, hscope_id *out,
                      uint64_t max, int32_t *root_category)
{
    return t ? hscope__chain_up(idom_up, t, t->n, t->ncat, id, out, max, root_category) : 0;
}

/* Top-N by retained size (ties: lower address first): a bounded min-heap
 * over the candidates. */
static int
less_r(const hscope_domtree_t *t, uint32_t a, uint32_t b)
{
    uint64_t ra = rs_get(t, a), rb = rs_get(t, b);
    if (ra != rb)
        return ra < rb;
    return t->heap->addr[a] > t->heap->addr[b];
}

static void
sift_down(const hscope_domtree_t *t, hscope_id *hp, uint64_t n, uint64_t i)
{
    for (;;) {
        uint64_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < n && less_r(t, hp[l], hp[s]))
            s = l;
        if (r < n && less_r(t, hp[r], hp[s]))
            s = r;
        if (s == i)
            return;
        hscope_id x = hp[i];
        hp[i] = hp[s];
        hp[s] = x;
        i = s;
    }
}

/*
 * Every reachable object in order (retained size down, then address up),
 * when `max` holds them all and the heap has the run index (a dump laid
 * out as Ruby writes it: disjoint runs of rising addresses, sorted by
 * address).  The runs give the objects in address order in one pass, and
 * a stable radix sort on the retained size (11 bits a pass, from the low
 * end, only as many passes as the largest size needs) keeps that order
 * among equal sizes.  The heap sort below reads two objects' sizes and
 * addresses, far apart in memory, per comparison: on a 2.7 M-object heap
 * it took longer than the tree.  Costs a second id array for the sort;
 * returns UINT64_MAX (nothing decided) without the run index, when max is
 * too small, or when that array cannot be had.
 */
#define RADIX_BITS 11
static uint64_t
top_all_sorted(const hscope_domtree_t *t, hscope_id *out, uint64_t max)
{
    const hscope_heap_t *h = t->heap;
    if (!h->runs)
        return UINT64_MAX;
    uint64_t n = 0, top = 0;
    for (uint32_t k = 0; k < h->nruns; k++) {
        const hscope__run *run = &h->runs[k];
        for (uint32_t i = run->start; i < run->end; i++) {
            if (t->idom[i] == NONE)
                continue;
            if (n == max)
                return UINT64_MAX;
            out[n++] = i;
            uint64_t r = rs_get(t, i);
            top = r > top ? r : top;
        }
    }
    if (n < 2 || !top)
        return n;
    hscope__mem *m = (hscope__mem *)&h->mem;
    hscope_id *tmp = hscope__malloc(m, (size_t)n * sizeof(hscope_id));
    size_t *cnt = hscope__malloc(m, ((size_t)1 << RADIX_BITS) * sizeof(size_t));
    if (!tmp || !cnt) {
        hscope__free(m, tmp);
        hscope__free(m, cnt);
        return UINT64_MAX;
    }
    const uint64_t mask = ((uint64_t)1 << RADIX_BITS) - 1;
    hscope_id *from = out, *to = tmp;
    for (unsigned sh = 0; sh < 64 && (top >> sh) != 0; sh += RADIX_BITS) {
        /* by the digit's complement: larger sizes first, ties in order */
        memset(cnt, 0, ((size_t)1 << RADIX_BITS) * sizeof(size_t));
        for (uint64_t j = 0; j < n; j++)
            cnt[mask - ((rs_get(t, from[j]) >> sh) & mask)]++;
        size_t at = 0;
        for (uint64_t d = 0; d <= mask; d++) {
            size_t c = cnt[d];
            cnt[d] = at;
            at += c;
        }
        for (uint64_t j = 0; j < n; j++)
            to[cnt[mask - ((rs_get(t, from[j]) >> sh) & mask)]++] = from[j];
        hscope_id *x = from;
        from = to;
        to = x;
    }
    if (from != out)
        memcpy(out, from, (size_t)n * sizeof(hscope_id));
    hscope__free(m, tmp);
    hscope__free(m, cnt);
    return n;
}

uint64_t
hscope__domtree_top_of(const hscope_domtree_t *t, const hscope_id *ids, uint64_t nids,
                       hscope_id *out, uint64_t max)
{
    if (!t || !out || !max)
        return 0;
    if (!ids && max >= t->reachable) {
        uint64_t got = top_all_sorted(t, out, max);
        if (got != UINT64_MAX)
            return got;
    }
    uint64_t n = 0, all = ids ? nids : t->n;
    for (uint64_t j = 0; j < all; j++) {
        uint32_t i = ids ? ids[j] : (uint32_t)j;
        if (t->idom[i] == NONE)
            continue;
        if (n < max) {
            out[n++] = i;
            if (n == max)
                for (uint64_t k = n / 2 + 1; k-- > 0;)
                    sift_down(t, out, n, k);
        } else if (less_r(t, out[0], i)) {
            out[0] = i;
            sift_down(t, out, n, 0);
        }
    }
    if (n < max)
        for (uint64_t k = n / 2 + 1; k-- > 0;)
            sift_down(t, out, n, k);
    /* heap sort: largest first */
    for (uint64_t e = n; e > 1; e--) {
        hscope_id x = out[0];
        out[0] = out[e - 1];
        out[e - 1] = x;
        sift_down(t, out, e - 1, 0);
    }
    return n;
}

uint64_t
hscope__domtree_top(const hscope_domtree_t *t, hscope_id *out, uint64_t max)
{
    return hscope__domtree_top_of(t, NULL, 0, out, max);
}

/* ------------------------------------------------------------------ */
/* holders of a set of objects                                        */
/* ------------------------------------------------------------------ */

typedef struct holder {
    uint32_t vertex;        /* object, category or super-root vertex */
    uint64_t count, memsize;
} holder;

struct hscope_holders {
    /* the heap (retained) and the tree's sizes: not the tree itself, which
     * its owner may free first (a garbage collector frees in any order) */
    hscope_heap_t *heap;
    uint32_t nobj, ncat;
    holder *h;
    size_t n;
};

static int
cmp_holder(const void *a, const void *b)
{
    const holder *x = a, *y = b;
    if (x->memsize != y->memsize)
        return x->memsize > y->memsize ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->vertex < y->vertex ? -1 : x->vertex > y->vertex;
}

/*
 * For each member x of the set, climb the dominator tree while the
 * dominator is itself a member; the first dominator outside the set is
 * the object that holds x's part of the structure.  Members are grouped by
 * that holder.  Results are memoised per object so shared chains are
 * walked once.
 */
hscope_status
hscope__holders_compute(hscope_holders_t **out, hscope_domtree_t *t,
                        const hscope_id *ids, uint64_t n, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st = HSCOPE_OK;
    hscope_holders_t *hs = NULL;
    uint64_t *inset = NULL;
    uint32_t *memo = NULL, *stk = NULL, *slot = NULL;
    if (!out || !t || (!ids && n)) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "NULL argument");
        goto done;
    }
    *out = NULL;
    hscope__mem *m = &t->heap->mem;
    uint32_t nv = t->n + t->ncat + 1;
    hs = hscope__calloc(m, 1, sizeof(*hs));
    inset = hscope__calloc(m, (size_t)t->n / 64 + 1, 8);
    memo = hscope__malloc(m, ((size_t)t->n + 1) * 4);
    stk = hscope__malloc(m, ((size_t)t->n + 1) * 4);
    slot = hscope__malloc(m, (size_t)nv * 4);
    if (!hs || !inset || !memo || !stk || !slot) {
        st = hscope__nomem(&err, (size_t)nv * 4);
        goto done;
    }
    memset(memo, 0xFF, ((size_t)t->n + 1) * 4);
    memset(slot, 0xFF, (size_t)nv * 4);
    for (uint64_t i = 0; i < n; i++) {
        if (ids[i] >= t->n) {
            st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "id %u out of range", ids[i]);
            goto done;
        }
        inset[ids[i] / 64] |= (uint64_t)1 << (ids[i] % 64);
    }
#define IN(x) ((x) < t->n && (inset[(x) / 64] >> ((x) % 64) & 1))
    size_t cap = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t x = ids[i];
        if (t->idom[x] == NONE)
            continue; /* unreachable: held by nothing */
        uint32_t sp = 0, v = x, hv;
        while (memo[v] == NONE) {
            stk[sp++] = v;
            uint32_t d = t->idom[v];
            if (!IN(d)) {
                hv = d;
                goto found;
            }
            v = d;
        }
        hv = memo[v];
    found:
        while (sp > 0)
            memo[stk[--sp]] = hv;
        if (slot[hv] == NONE) {
            if ((st = hscope__grow(m, (void **)&hs->h, &cap, hs->n + 1, sizeof(holder),
                                   &err)) != HSCOPE_OK)
                goto done;
            slot[hv] = (uint32_t)hs->n;
            hs->h[hs->n++] = (holder){ hv, 0, 0 };
        }
        holder *hd = &hs->h[slot[hv]];
        hd->count++;
        hd->memsize = hscope__sat_add(hd->memsize, hscope__memsize(t->heap, x));
    }
#undef IN
    if (hs->n)
        qsort(hs->h, hs->n, sizeof(holder), cmp_holder);
    hs->heap = t->heap;
    hs->nobj = t->n;
    hs->ncat = t->ncat;
done:
    if (t) {
        hscope__mem *m2 = &t->heap->mem;
        hscope__free(m2, inset);
        hscope__free(m2, memo);
        hscope__free(m2, stk);
        hscope__free(m2, slot);
        if (st != HSCOPE_OK && hs) {
            hscope__free(m2, hs->h);
            hscope__free(m2, hs);
        }
    }
    if (st != HSCOPE_OK) {
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    hscope__heap_retain(t->heap);
    *out = hs;
    return HSCOPE_OK;
}

void
hscope__holders_free(hscope_holders_t *hs)
{
    if (!hs)
        return;
    hscope_heap_t *h = hs->heap;
    hscope__free(&h->mem, hs->h);
    hscope__free(&h->mem, hs);
    hscope__heap_release(h);
}

hscope_status
hscope__holders_reorder(hscope_holders_t *hs, const uint32_t *order, hscope_error *err)
{
    if (hs->n < 2)
        return HSCOPE_OK;
    holder *tmp = hscope__malloc(&hs->heap->mem, hs->n * sizeof(holder));
    if (!tmp)
        return hscope__nomem(err, hs->n * sizeof(holder));
    for (size_t k = 0; k < hs->n; k++)
        tmp[k] = hs->h[order[k]];
    memcpy(hs->h, tmp, hs->n * sizeof(holder));
    hscope__free(&hs->heap->mem, tmp);
    return HSCOPE_OK;
}

uint64_t
hscope__holders_memory(const hscope_holders_t *hs)
{
    const void *b[] = { hs ? hs->h : NULL, hs };
    return hscope__msize_sum(b, 2);
}

uint64_t
hscope__holders_count(const hscope_holders_t *hs)
{
    return hs ? hs->n : 0;
}

hscope_status
hscope__holders_get(const hscope_holders_t *hs, uint64_t i, hscope_id *holder_id,
                    int32_t *root_category, uint64_t *count, uint64_t *memsize)
{
    if (!hs)
        return HSCOPE_ERR_INVALID_ARG;
    if (i >= hs->n)
        return HSCOPE_ERR_NOT_FOUND;
    const holder *h = &hs->h[i];
    if (holder_id)
        *holder_id = h->vertex < hs->nobj ? h->vertex : HSCOPE_ID_NONE;
    if (root_category)
        *root_category = h->vertex >= hs->nobj && h->vertex < hs->nobj + hs->ncat
                             ? (int32_t)(h->vertex - hs->nobj) : -1;
    if (count)
        *count = h->count;
    if (memsize)
        *memsize = h->memsize;
    return HSCOPE_OK;
}
