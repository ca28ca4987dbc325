/*
 * w_domtree.c - the dominator tree (kind "dominators"): its top below
 * each root category, or the chain and subtree of one object; text and
 * JSON.  The tree is walked with an explicit stack (no recursion, however
 * deep `depth` goes); children are listed largest retained size first,
 * ties by address, so the output is the same on every run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "../analysis/dominators.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "rowcur.h"
#include "table.h"
#include "writers.h"

hscope_status
hscope__dom_sorted_kids(hscope_domtree_t *t, hscope_id id, int32_t cat, uint64_t keep,
                        hscope_id **out, uint64_t *n, hscope_error *err)
{
    const hscope_id *k;
    hscope_heap_t *h = hscope__domtree_heap(t);
    *out = NULL;
    *n = 0;
    hscope_status st = hscope__domtree_children(t, id, cat, &k, n, err);
    if (st != HSCOPE_OK)
        return st;
    size_t m = (size_t)(keep < *n ? keep : *n);
    if (!m) /* a leaf, most of a tree: nothing to allocate */
        return HSCOPE_OK;
    if (!(*out = hscope__malloc(&h->mem, (m + 1) * sizeof(hscope_id))))
        return hscope__nomem(err, m * sizeof(hscope_id));
    hscope__domtree_top_of(t, k, *n, *out, m);
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* The walk                                                            */
/* ------------------------------------------------------------------ */

typedef struct walk walk;
struct walk {
    hscope_domtree_t *t;
    const hscope__ropts *ro;
    hscope__out *o;
    hscope__json *w;
    uint32_t level0;       /* level of the first node (indent 2 in text) */
    /* `expanded`: its children follow (then leave() gets their count) */
    void (*enter)(walk *wk, hscope_id id, uint32_t level, int expanded, uint64_t nkids);
    void (*leave)(walk *wk, uint32_t level, int expanded, uint64_t nkids, uint64_t shown);
};

typedef struct frame {
    hscope_id *kids;
    uint64_t n, next, shown;
    uint32_t level;
    int expanded;
} frame;

static hscope_status
push(walk *wk, frame **stk, size_t *cap, size_t *sp, hscope_id id, uint32_t level,
     hscope_error *err)
{
    hscope__mem *m = &hscope__domtree_heap(wk->t)->mem;
    hscope_status st = hscope__grow(m, (void **)stk, cap, *sp + 1, sizeof(frame), err);
    if (st != HSCOPE_OK)
        return st;
    frame *f = &(*stk)[(*sp)++];
    memset(f, 0, sizeof(*f));
    f->level = level;
    f->expanded = level < wk->ro->depth;
    if (f->expanded &&
        (st = hscope__dom_sorted_kids(wk->t, id, -1, wk->ro->top, &f->kids, &f->n, err)) !=
            HSCOPE_OK)
        return st;
    f->shown = f->n < wk->ro->top ? f->n : wk->ro->top;
    /* the children are written next, at ids far apart: asked for now */
    for (uint64_t i = 0; i < f->shown && i < 8; i++) {
        hscope__heap_prefetch(hscope__domtree_heap(wk->t), f->kids[i], 0);
        hscope__domtree_prefetch(wk->t, f->kids[i]);
    }
    wk->enter(wk, id, level, f->expanded, f->n);
    return HSCOPE_OK;
}

static hscope_status
walk_tree(walk *wk, hscope_id root, uint32_t level, hscope_error *err)
{
    hscope__mem *m = &hscope__domtree_heap(wk->t)->mem;
    frame *stk = NULL;
    size_t cap = 0, sp = 0;
    hscope_status st = push(wk, &stk, &cap, &sp, root, level, err);
    while (st == HSCOPE_OK && sp) {
        frame *f = &stk[sp - 1];
        if (f->next < f->shown) {
            hscope_id c = f->kids[f->next++];
            st = push(wk, &stk, &cap, &sp, c, f->level + 1, err);
            continue;
        }
        wk->leave(wk, f->level, f->expanded, f->n, f->shown);
        hscope__free(m, f->kids);
        sp--;
    }
    while (sp)
        hscope__free(m, stk[--sp].kids);
    hscope__free(m, stk);
    return st;
}

/* ------------------------------------------------------------------ */
/* Text                                                                */
/* ------------------------------------------------------------------ */

static const char *
ellipsis(const hscope__ropts *ro)
{
    return (ro->flags & HSCOPE_REPORT_ASCII) ? "..." : "\xe2\x80\xa6";
}

/* "0x... TYPE label  (where)<tail>" at `indent`: the label and the tail
 * whole, `where` (a file:line) cut in the middle to what is left of the
 * width (at least 24 columns). */
void
hscope__text_obj_line(hscope__out *o, const hscope__ropts *ro, const hscope_heap_t *h,
                      hscope_id id, size_t indent, const char *where, const char *tail)
{
    char a[24], lb[512];
    char *ae = hscope__put_addr(a, hscope__heap_object_address(h, id));
    *ae++ = ' ';
    int an = (int)(ae - a);
    hscope__obj_text(h, id, lb, sizeof(lb));
    hscope__out_fill(o, ' ', indent);
    hscope__out_write(o, a, (size_t)an);
    hscope__out_puts(o, lb);
    if (where) {
        size_t used = indent + (size_t)an + hscope__utf8_columns(lb, strlen(lb)) +
                      hscope__utf8_columns(tail, strlen(tail)) + 4;
        size_t room = ro->width > used + 24 ? ro->width - used : 24;
        hscope__out_puts(o, "  (");
        hscope__text_fit(o, where, room, 0, (ro->flags & HSCOPE_REPORT_ASCII) != 0);
        hscope__out_putc(o, ')');
    }
    hscope__out_puts(o, tail);
    hscope__out_putc(o, '\n');
}

static size_t
text_indent(const walk *wk, uint32_t level)
{
    uint32_t d = level - wk->level0;
    return 2 + 2 * (size_t)(d < 40 ? d : 40);
}

static void
text_enter(walk *wk, hscope_id id, uint32_t level, int expanded, uint64_t nkids)
{
    (void)expanded;
    (void)nkids;
    const hscope_heap_t *h = hscope__domtree_heap(wk->t);
    char r[32], c[64], m[32], tail[160];
    hscope__fmt_bytes((double)hscope__domtree_retained(wk->t, id), r, sizeof(r));
    hscope__fmt_plural(hscope__domtree_retained_count(wk->t, id), "object", "objects", c, sizeof(c));
    hscope__fmt_bytes((double)hscope__heap_object_memsize(h, id), m, sizeof(m));
    snprintf(tail, sizeof(tail), "  retained %s (%s), self %s", r, c, m);
    hscope__text_obj_line(wk->o, wk->ro, h, id, text_indent(wk, level), NULL, tail);
}

static void
text_leave(walk *wk, uint32_t level, int expanded, uint64_t nkids, uint64_t shown)
{
    if (expanded && nkids > shown) {
        char c[32];
        hscope__fmt_count(nkids - shown, c, sizeof(c));
        hscope__out_fill(wk->o, ' ', text_indent(wk, level) + 2);
        hscope__out_printf(wk->o, "%s %s more\n", ellipsis(wk->ro), c);
    }
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

static void
json_enter(walk *wk, hscope_id id, uint32_t level, int expanded, uint64_t nkids)
{
    (void)level;
    const hscope_heap_t *h = hscope__domtree_heap(wk->t);
    hscope__json *w = wk->w;
    hscope__json_obj(w);
    hscope__json_objref_fields(w, h, id);
    hscope__json_kstr(w, "file", hscope__heap_object_file(h, id));
    hscope__json_ku64(w, "line", hscope__heap_object_line(h, id));
    hscope__json_ku64(w, "memsize", hscope__heap_object_memsize(h, id));
    hscope__json_kcm(w, "retained", hscope__domtree_retained_count(wk->t, id),
                     hscope__domtree_retained(wk->t, id));
    if (expanded) {
        hscope__json_ku64(w, "children_total", nkids);
        hscope__json_key(w, "children");
        hscope__json_arr(w);
    }
}

static void
json_leave(walk *wk, uint32_t level, int expanded, uint64_t nkids, uint64_t shown)
{
    (void)level;
    (void)nkids;
    (void)shown;
    if (expanded)
        hscope__json_end_arr(wk->w);
    hscope__json_end_obj(wk->w);
}

/* Every reachable object's immediate dominator and retained size (the
 * loops stop when the output failed: a caller's write function that
 * returned non-zero, e.g. on Ctrl-C, need not wait for the whole heap). */
static void
json_full(hscope__json *w, hscope_domtree_t *t)
{
    const hscope_heap_t *h = hscope__domtree_heap(t);
    uint64_t n = hscope__heap_object_count(h);
    char ab[32], nb[160];
    hscope__json_key(w, "idom");
    hscope__json_obj(w);
    for (hscope_id i = 0; i < n && w->o->status == HSCOPE_OK; i++) {
        hscope_id d;
        int32_t cat;
        /* the dominators' addresses are far apart: one asked for ahead */
        if (i + 16 < n && hscope__domtree_idom(t, i + 16, &d, &cat) == HSCOPE_OK &&
            d != HSCOPE_ID_NONE)
            hscope__heap_prefetch(h, d, 1);
        if (hscope__domtree_idom(t, i, &d, &cat) != HSCOPE_OK)
            continue;
        *hscope__put_addr(ab, hscope__heap_object_address(h, i)) = 0;
        hscope__json_key(w, ab);
        if (d != HSCOPE_ID_NONE) {
            hscope__json_addr(w, hscope__heap_object_address(h, d));
        } else if (cat >= 0) {
            snprintf(nb, sizeof(nb), "(root:%s)", hscope__root_name(h, cat));
            hscope__json_str(w, nb);
        } else {
            hscope__json_str(w, hscope__root_name(h, -1));
        }
    }
    hscope__json_end_obj(w);
    hscope__json_key(w, "retained");
    hscope__json_obj(w);
    for (hscope_id i = 0; i < n && w->o->status == HSCOPE_OK; i++) {
        if (!hscope__domtree_reachable(t, i))
            continue;
        *hscope__put_addr(ab, hscope__heap_object_address(h, i)) = 0;
        hscope__json_kcm(w, ab, hscope__domtree_retained_count(t, i), hscope__domtree_retained(t, i));
    }
    hscope__json_end_obj(w);
}

/* ------------------------------------------------------------------ */
/* Top of the tree, or the chain and subtree of one object             */
/* ------------------------------------------------------------------ */

static hscope_status
top_of_tree(walk *wk, int json, hscope_error *err)
{
    hscope_heap_t *h = hscope__domtree_heap(wk->t);
    uint32_t ncat = hscope__heap_root_category_count(h);
    hscope_status st = HSCOPE_OK;
    if (json) {
        hscope__json_key(wk->w, "top");
        hscope__json_arr(wk->w);
    }
    for (uint32_t ci = 0; ci <= ncat && st == HSCOPE_OK; ci++) {
        int32_t cat = ci < ncat ? (int32_t)ci : -1;
        hscope_id *kids;
        uint64_t n;
        if ((st = hscope__dom_sorted_kids(wk->t, HSCOPE_ID_NONE, cat, wk->ro->top, &kids, &n,
                                          err)) != HSCOPE_OK)
            break;
        uint64_t shown = n < wk->ro->top ? n : wk->ro->top;
        if (json) {
            hscope__json_obj(wk->w);
            hscope__json_kstr(wk->w, "root", hscope__root_name(h, cat));
            hscope__json_ku64(wk->w, "children_total", n);
            hscope__json_key(wk->w, "children");
            hscope__json_arr(wk->w);
        } else if (n) {
            char c[64];
            hscope__fmt_plural(n, "object", "objects", c, sizeof(c));
            hscope__out_printf(wk->o, "\nroot %s (%s directly below)\n", hscope__root_name(h, cat), c);
        }
        for (uint64_t k = 0; k < shown && st == HSCOPE_OK; k++)
            st = walk_tree(wk, kids[k], 1, err);
        if (json) {
            hscope__json_end_arr(wk->w);
            hscope__json_end_obj(wk->w);
        } else if (n > shown) {
            char c[32];
            hscope__fmt_count(n - shown, c, sizeof(c));
            hscope__out_printf(wk->o, "  %s %s more\n", ellipsis(wk->ro), c);
        }
        hscope__free(&h->mem, kids);
    }
    if (json)
        hscope__json_end_arr(wk->w);
    return st;
}

static void
text_chain(walk *wk, const hscope_id *chain, uint64_t len, int32_t cat)
{
    const hscope_heap_t *h = hscope__domtree_heap(wk->t);
    hscope__out_printf(wk->o, "\ndominator chain:\n  root: %s\n", hscope__root_name(h, cat));
    for (uint64_t k = 0; k + 1 < len; k++) {
        char r[32], tail[64];
        hscope__fmt_bytes((double)hscope__domtree_retained(wk->t, chain[k]), r, sizeof(r));
        snprintf(tail, sizeof(tail), "  retained %s", r);
        hscope__text_obj_line(wk->o, wk->ro, h, chain[k], 2 + (size_t)(k < 20 ? k : 20), NULL, tail);
    }
    hscope__out_puts(wk->o, "\nsubtree:\n");
}

static hscope_status
focus_on(walk *wk, hscope_id focus, int json, hscope_error *err)
{
    hscope_heap_t *h = hscope__domtree_heap(wk->t);
    int32_t cat = -1;
    uint64_t len = hscope__domtree_chain(wk->t, focus, NULL, 0, &cat);
    hscope_id *chain = hscope__malloc(&h->mem, (size_t)(len + 1) * sizeof(hscope_id));
    if (!chain)
        return hscope__nomem(err, (size_t)len * sizeof(hscope_id));
    hscope__domtree_chain(wk->t, focus, chain, len, &cat);
    hscope_status st = HSCOPE_OK;
    wk->level0 = 0;
    if (json) {
        hscope__json_key(wk->w, "focus");
        hscope__json_addr(wk->w, hscope__heap_object_address(h, focus));
        hscope__json_kstr(wk->w, "root", len ? hscope__root_name(h, cat) : NULL);
        hscope__json_key(wk->w, "chain");
        hscope__json_objrefs(wk->w, h, chain, len);
        hscope__json_key(wk->w, "tree");
        if (len)
            st = walk_tree(wk, focus, 0, err);
        else
            hscope__json_null(wk->w);
    } else if (!len) {
        hscope__out_printf(wk->o, "0x%llx is not reachable from any root\n",
                           (unsigned long long)hscope__heap_object_address(h, focus));
    } else {
        text_chain(wk, chain, len, cat);
        st = walk_tree(wk, focus, 0, err);
    }
    hscope__free(&h->mem, chain);
    return st;
}

static void
text_head(hscope__out *o, const hscope__ropts *ro, hscope_domtree_t *t)
{
    uint64_t rn, rm, un, um;
    char a[64], b[64], c[32];
    hscope__domtree_totals(t, &rn, &rm, &un, &um);
    const char *name = hscope__ropts_dump_name(ro, 0);
    hscope__fmt_plural(rn, "reachable object", "reachable objects", a, sizeof(a));
    hscope__fmt_count(un, b, sizeof(b));
    hscope__fmt_bytes((double)um, c, sizeof(c));
    hscope__out_printf(o, "%s%s%s; %s unreachable (%s)%s\n", name ? name : "", name ? ": " : "",
                       a, b, c, hscope__domtree_class_edges(t) ? "" : "; class edges off");
}

/* The members every dominators and retained document starts with. */
void
hscope__json_domtree_head(hscope__json *w, const char *kind, const hscope_domtree_t *t,
                          const hscope__ropts *ro)
{
    uint64_t rn, rm, un, um;
    hscope__domtree_totals(t, &rn, &rm, &un, &um);
    hscope__json_begin_doc(w, kind);
    hscope__json_dumps_of_heap(w, ro, hscope__domtree_heap(t), 0);
    hscope__json_key(w, "class_edges");
    hscope__json_bool(w, hscope__domtree_class_edges(t));
    hscope__json_kcm(w, "reachable", rn, rm);
    hscope__json_kcm(w, "unreachable", un, um);
}

hscope_status
hscope__domtree_write(hscope_domtree_t *t, hscope_id focus, const hscope__ropts *ro,
                      hscope__out *o, hscope_error *err)
{
    hscope_heap_t *h = hscope__domtree_heap(t);
    if (focus != HSCOPE_ID_NONE && focus >= hscope__heap_object_count(h))
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "focus %u is not an object id", focus);
    if (ro->format == HSCOPE_FORMAT_FOLDED)
        return hscope__folded_write(t, ro, o, err);
    int json = ro->format == HSCOPE_FORMAT_JSON;
    hscope__warnings ws;
    ws.n = 0;
    hscope__warn_heap(&ws, hscope__ropts_dump_name(ro, 0), h);
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    walk wk = { t, ro, o, &w, 1, json ? json_enter : text_enter, json ? json_leave : text_leave };
    if (json) {
        hscope__json_domtree_head(&w, "dominators", t, ro);
        hscope__json_ku64(&w, "depth", ro->depth);
        if (ro->flags & HSCOPE_REPORT_ADDRESSES)
            json_full(&w, t);
    } else {
        hscope__text_warnings(o, ro, &ws);
        text_head(o, ro, t);
    }
    hscope_status st = focus != HSCOPE_ID_NONE ? focus_on(&wk, focus, json, err)
                                               : top_of_tree(&wk, json, err);
    if (json && st == HSCOPE_OK) {
        hscope__json_warnings(&w, &ws);
        hscope__json_end_obj(&w);
        hscope__json_done(&w);
    }
    return st;
}
