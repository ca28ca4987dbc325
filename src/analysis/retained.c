/*
 * retained.c - "du for the heap": retained size per group of a tally key.
 *
 * Each reachable object is counted once, under its topmost dominator of
 * the same group, so nested objects of one group (a Hash inside a Hash)
 * are not counted twice.  A depth-first walk of the dominator tree keeps,
 * per group, how many objects of that group are on the current path: the
 * first one entering adds its retained size and count to its group.  The
 * walk uses an explicit stack (no recursion).
 */
#include <string.h>

#include "../model/model.h"
#include "dominators.h"
#include "retained.h"
#include "tally.h"

typedef struct rgroup {
    uint64_t retained, count;
} rgroup;

/* An object on the current path, and its children still to walk. */
typedef struct wframe {
    const hscope_id *next, *end;
    hscope_id id;
} wframe;

typedef struct du {
    hscope_domtree_t *t;
    hscope__mem *m;
    uint32_t *grp;        /* group of each object */
    uint32_t *active;     /* per group: its objects on the current path */
    rgroup *rows;
    wframe *stk;          /* the path (grown as deep as the tree goes) */
    size_t cap;
    const hscope_id *kids; /* the tree's children: vertex v's are */
    uint32_t *kstart;     /* kids[kstart[v] .. kstart[v + 1]) */
    const hscope_heap_t *h;
    int skip_tracer;      /* leave out Ruby's allocation tracer and what it retains */
    uint64_t tracer, tracer_mem;
} du;

/* Whether v is the allocation tracer, left out: its retained objects and
 * bytes are counted aside and its subtree is not walked. */
static int
left_out(du *d, hscope_id v)
{
    if (!d->skip_tracer || !hscope__is_tracer(d->h, v))
        return 0;
    d->tracer += hscope__domtree_retained_count(d->t, v);
    d->tracer_mem = hscope__sat_add(d->tracer_mem, hscope__domtree_retained(d->t, v));
    return 1;
}

static void
open_node(du *d, hscope_id v)
{
    uint32_t g = d->grp[v];
    if (d->active[g]++ == 0) {
        d->rows[g].retained += hscope__domtree_retained(d->t, v);
        d->rows[g].count += hscope__domtree_retained_count(d->t, v);
    }
}

/* Enter v: count it if it is the first of its group on the path; its
 * children are next on the path. */
static hscope_status
enter(du *d, size_t sp, hscope_id v, hscope_error *err)
{
    hscope_status st = hscope__grow(d->m, (void **)&d->stk, &d->cap, sp + 1, sizeof(wframe), err);
    if (st != HSCOPE_OK)
        return st;
    open_node(d, v);
    d->stk[sp] = (wframe){ d->kids + d->kstart[v], d->kids + d->kstart[v + 1], v };
    return HSCOPE_OK;
}

static hscope_status
walk(du *d, hscope_id top, hscope_error *err)
{
    if (left_out(d, top))
        return HSCOPE_OK;
    size_t sp = 0;
    hscope_status st = enter(d, sp, top, err);
    while (st == HSCOPE_OK) {
        wframe *f = &d->stk[sp];
        if (f->next < f->end) {
            hscope_id c = *f->next++;
            if (!left_out(d, c))
                st = enter(d, ++sp, c, err);
            continue;
        }
        d->active[d->grp[f->id]]--;
        if (sp == 0)
            break;
        sp--;
    }
    return st;
}

/* The group of every object: a tally of all objects by key, with members. */
static hscope_status
groups_of(du *d, hscope_heap_t *h, const char *key, hscope_tally_t **tl, hscope_error *err)
{
    hscope_tally_options to;
    hscope__tally_options_init(&to);
    hscope_status st = hscope__tally_run(tl, h, key, &to, NULL, 0, 1, err);
    if (st != HSCOPE_OK)
        return st;
    for (uint64_t r = 0; r < hscope__tally_row_count(*tl); r++) {
        const hscope_id *ids;
        uint64_t k;
        hscope__tally_row_objects(*tl, r, &ids, &k);
        for (uint64_t j = 0; j < k; j++)
            d->grp[ids[j]] = (uint32_t)r;
    }
    /* the rows' keys are all that is read of them from here on: their
     * member lists (4 bytes per object) go before the walk's own */
    hscope__tally_drop_members(*tl);
    return HSCOPE_OK;
}

static hscope_status
compute(du *d, hscope_heap_t *h, const char *key, hscope_tally_t **tl, hscope_error *err)
{
    uint32_t n = h->n;
    d->grp = hscope__calloc(d->m, (size_t)n + 1, sizeof(uint32_t));
    if (!d->grp)
        return hscope__nomem(err, (size_t)n * 4);
    hscope_status st = groups_of(d, h, key, tl, err);
    if (st != HSCOPE_OK)
        return st;
    uint64_t ng = hscope__tally_row_count(*tl);
    d->rows = hscope__calloc(d->m, (size_t)ng + 1, sizeof(rgroup));
    d->active = hscope__calloc(d->m, (size_t)ng + 1, sizeof(uint32_t));
    if (!d->rows || !d->active)
        return hscope__nomem(err, (size_t)ng * 20);
    if ((st = hscope__domtree_child_starts(d->t, &d->kids, &d->kstart, err)) != HSCOPE_OK)
        return st;
    for (uint32_t ci = 0; ci <= h->ncat && st == HSCOPE_OK; ci++) {
        int32_t cat = ci < h->ncat ? (int32_t)ci : -1;
        const hscope_id *tops;
        uint64_t ntop;
        st = hscope__domtree_children(d->t, HSCOPE_ID_NONE, cat, &tops, &ntop, err);
        for (uint64_t q = 0; q < ntop && st == HSCOPE_OK; q++)
            st = walk(d, tops[q], err);
    }
    return st;
}

/* The rows that retain something, into a standalone tally. */
static hscope_status
to_tally(const du *d, hscope_heap_t *h, const hscope_tally_t *tl, const char *key,
         const hscope_tally_options *opts, hscope_tally_t **out, hscope_error *err)
{
    hscope_allocator a = { sizeof(a), 0, h->mem.malloc_fn, h->mem.realloc_fn, h->mem.free_fn,
                           h->mem.ud };
    hscope_status st = hscope__tally_new(out, &a, err);
    for (uint64_t r = 0; st == HSCOPE_OK && r < hscope__tally_row_count(tl); r++) {
        if (!d->rows[r].retained && !d->rows[r].count)
            continue;
        const char *k = hscope__tally_row_key(tl, r);
        st = hscope__tally_add(*out, k, strlen(k), d->rows[r].count, d->rows[r].retained, err);
    }
    if (st != HSCOPE_OK)
        return st;
    hscope__tally_finish(*out, opts->sort, opts->top);
    hscope__tally_set_by(*out, key);
    hscope__tally_set_retained(*out);
    uint64_t sk[HSCOPE_SKIP__COUNT];
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        sk[r] = hscope__heap_skipped(h, r);
    hscope__tally_set_source(*out, &h->stats, sk, NULL, 0);
    hscope__tally_set_tracer(*out, d->tracer, d->tracer_mem);
    return HSCOPE_OK;
}

hscope_status
hscope__domtree_tally(hscope_tally_t **out, hscope_domtree_t *t, const char *key,
                      const hscope_tally_options *opts, hscope_error *err)
{
    hscope_heap_t *h = hscope__domtree_heap(t);
    du d;
    memset(&d, 0, sizeof(d));
    d.t = t;
    d.m = &h->mem;
    d.h = h;
    d.skip_tracer = (opts->flags & HSCOPE_TALLY_SKIP_TRACER) != 0;
    hscope_tally_t *tl = NULL;
    *out = NULL;
    hscope_status st = compute(&d, h, key, &tl, err);
    if (st == HSCOPE_OK)
        st = to_tally(&d, h, tl, key, opts, out, err);
    if (st != HSCOPE_OK) {
        hscope__tally_free(*out);
        *out = NULL;
    }
    hscope__tally_free(tl);
    hscope__free(d.m, d.grp);
    hscope__free(d.m, d.stk);
    hscope__free(d.m, d.kstart);
    hscope__free(d.m, d.rows);
    hscope__free(d.m, d.active);
    return st;
}

hscope_id
hscope__domtree_tracer(const hscope_domtree_t *t)
{
    const hscope_heap_t *h = hscope__domtree_heap((hscope_domtree_t *)t);
    if (!h || !h->str_tracer)
        return HSCOPE_ID_NONE;
    for (uint32_t i = 0; i < h->n; i++)
        if (hscope__is_tracer(h, i))
            return i;
    return HSCOPE_ID_NONE;
}

uint64_t
hscope__domtree_top_app(const hscope_domtree_t *t, hscope_id *out, uint64_t max,
                        hscope_id tracer)
{
    if (!max)
        return 0;
    uint64_t n = hscope__domtree_top(t, out, tracer == HSCOPE_ID_NONE ? max : max + 1), k = 0;
    for (uint64_t i = 0; i < n; i++)
        if (out[i] != tracer)
            out[k++] = out[i];
    return k < max ? k : max;
}
