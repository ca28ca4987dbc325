/*
 * html_domtree.c - the dominator-tree icicle of the HTML report: the top
 * of the tree embedded as a JSON blob the page script draws.  Nodes: the
 * super-root, the root categories and the objects whose retained size is
 * at least 0.1% of the reachable memsize (and, so that zooming in shows
 * something, children holding 1% or more of their parent down to 1/64 of
 * that threshold), largest first, at most MAX_TREE_NODES objects.
 */
#include <stdio.h>
#include <string.h>

#include "html.h"
#include "../model/model.h"
#include "../analysis/dominators.h"
#include "../analysis/suspects.h"
#include "jsonw.h"
#include "out.h"
#include "table.h"

#define MAX_TREE_NODES 3000

typedef struct tnode {
    int32_t parent;
    int32_t cat;      /* -2 object, -1 all roots, >= 0 root category */
    hscope_id id;
    uint64_t ret, cnt;
} tnode;

typedef struct cand {
    uint64_t ret;
    hscope_id id;
    int32_t parent;
} cand;

/* A max-heap of candidates: largest retained first, ties by lower id. */
typedef struct pq {
    hscope__mem *mem;
    cand *a;
    size_t n, cap;
} pq;

typedef struct itree {
    hscope_domtree_t *t;
    tnode *nodes;
    size_t nn, maxn;
    uint64_t thr;
    int truncated;
    pq q;
} itree;

static int
pq_less(const cand *x, const cand *y)
{
    if (x->ret != y->ret)
        return x->ret < y->ret;
    return x->id > y->id;
}

static void
pq_swap(cand *a, size_t i, size_t j)
{
    cand t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static hscope_status
pq_push(pq *q, cand c, hscope_error *err)
{
    if (q->n == q->cap &&
        hscope__grow(q->mem, (void **)&q->a, &q->cap, q->n + 1, sizeof(cand), err) != HSCOPE_OK)
        return err->status;
    size_t i = q->n++;
    q->a[i] = c;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!pq_less(&q->a[p], &q->a[i]))
            break;
        pq_swap(q->a, p, i);
        i = p;
    }
    return HSCOPE_OK;
}

static cand
pq_pop(pq *q)
{
    cand top = q->a[0];
    q->a[0] = q->a[--q->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && pq_less(&q->a[m], &q->a[l]))
            m = l;
        if (r < q->n && pq_less(&q->a[m], &q->a[r]))
            m = r;
        if (m == i)
            break;
        pq_swap(q->a, m, i);
        i = m;
    }
    return top;
}

/* The root categories holding at least the threshold, and the children of
 * each (and of the super-root) as candidates. */
static hscope_status
seed_roots(itree *it, const hscope_heap_t *h, hscope_error *err)
{
    uint32_t nc = hscope__heap_root_category_count(h);
    for (uint32_t ci = 0; ci <= nc; ci++) {
        int32_t cat = ci < nc ? (int32_t)ci : -1;
        const hscope_id *k = NULL;
        uint64_t nk = 0;
        hscope_error e;
        hscope__error_init(&e);
        if (hscope__domtree_children(it->t, HSCOPE_ID_NONE, cat, &k, &nk, &e) != HSCOPE_OK)
            continue;
        int32_t parent = 0;
        if (cat >= 0) {
            uint64_t sr = 0, sc = 0;
            for (uint64_t i = 0; i < nk; i++) {
                sr += hscope__domtree_retained(it->t, k[i]);
                sc += hscope__domtree_retained_count(it->t, k[i]);
            }
            if (sr < it->thr)
                continue;
            parent = (int32_t)it->nn;
            it->nodes[it->nn++] = (tnode){ 0, cat, HSCOPE_ID_NONE, sr, sc };
        }
        for (uint64_t i = 0; i < nk; i++) {
            uint64_t r = hscope__domtree_retained(it->t, k[i]);
            if (r >= it->thr && pq_push(&it->q, (cand){ r, k[i], parent }, err) != HSCOPE_OK)
                return err->status;
        }
    }
    return HSCOPE_OK;
}

/* Take the largest candidates as nodes, their large children as new
 * candidates, until none is left or the node budget is spent. */
static hscope_status
grow_tree(itree *it, hscope_error *err)
{
    while (it->q.n) {
        if (it->nn >= it->maxn) {
            it->truncated = 1;
            break;
        }
        cand c = pq_pop(&it->q);
        size_t me = it->nn;
        it->nodes[it->nn++] =
            (tnode){ c.parent, -2, c.id, c.ret, hscope__domtree_retained_count(it->t, c.id) };
        const hscope_id *k = NULL;
        uint64_t nk = 0;
        hscope_error e;
        hscope__error_init(&e);
        if (hscope__domtree_children(it->t, c.id, -1, &k, &nk, &e) != HSCOPE_OK)
            continue;
        for (uint64_t i = 0; i < nk; i++) {
            uint64_t r = hscope__domtree_retained(it->t, k[i]);
            if ((r >= it->thr || (r >= c.ret / 100 && r >= it->thr / 64 && r > 0)) &&
                pq_push(&it->q, (cand){ r, k[i], (int32_t)me }, err) != HSCOPE_OK)
                return err->status;
        }
    }
    return HSCOPE_OK;
}

/* One node as [parent, retained, count, self, "label", "address", "site"]. */
static void
node_json(hscope__out *o, const hscope_heap_t *h, const tnode *n, int first)
{
    char lb[512], sb[1024], ab[32];
    const char *label, *site = "";
    ab[0] = '\0';
    uint64_t self = 0;
    if (n->cat == -1) {
        label = "all roots";
    } else if (n->cat >= 0) {
        snprintf(lb, sizeof(lb), "root %s", hscope__heap_root_category_name(h, (uint32_t)n->cat));
        label = lb;
    } else {
        label = hscope__html_obj_label(h, n->id, lb, sizeof(lb));
        site = hscope__html_obj_site(h, n->id, sb, sizeof(sb));
        snprintf(ab, sizeof(ab), "0x%llx", (unsigned long long)hscope__heap_object_address(h, n->id));
        self = hscope__heap_object_memsize(h, n->id);
    }
    if (!first)
        hscope__out_puts(o, ",\n");
    hscope__json w;
    hscope__json_init(&w, o, 0);
    w.script_safe = 1;
    hscope__json_arr(&w);
    hscope__json_i64(&w, n->parent);
    hscope__json_u64(&w, n->ret);
    hscope__json_u64(&w, n->cnt);
    hscope__json_u64(&w, self);
    hscope__json_str(&w, label);
    hscope__json_str(&w, ab);
    hscope__json_str(&w, site);
    hscope__json_end_arr(&w);
}

static void
write_icicle(hscope__out *o, const hscope_heap_t *h, const itree *it, uint64_t rm)
{
    char hb[32], tb[32];
    hscope__fmt_bytes((double)rm, hb, sizeof(hb));
    hscope__fmt_bytes((double)it->thr, tb, sizeof(tb));
    hscope__out_printf(o, "<section id=\"dominators\"><h2>Dominator tree</h2>\n"
                          "<p class=\"muted\">Icicle of the dominator tree: each bar's width is "
                          "its retained size; the bars below it are the objects it alone keeps "
                          "alive. Click a bar to zoom in, click the top bar (or the path) to zoom "
                          "out. Shown: %llu nodes: those retaining at least %s (0.1%% of the %s "
                          "reachable), and below them children holding 1%% or more of their "
                          "parent; the gaps are the node's own size and smaller children.</p>\n",
                       (unsigned long long)it->nn, tb, hb);
    if (it->truncated)
        hscope__out_printf(o, "<p class=\"warn\">The tree was cut at the %d largest nodes.</p>\n",
                           MAX_TREE_NODES);
    hscope__out_puts(o, "<div id=\"icicle-info\"></div>\n"
                        "<svg id=\"icicle\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
                        "1200 24\" font-family=\"system-ui, 'DejaVu Sans', sans-serif\" "
                        "role=\"img\" aria-label=\"dominator tree icicle\"></svg>\n"
                        "<script type=\"application/json\" id=\"domtree-data\">{\"total\":");
    hscope__out_printf(o, "%llu,\"threshold\":%llu,\"nodes\":[", (unsigned long long)rm,
                       (unsigned long long)it->thr);
    for (size_t i = 0; i < it->nn; i++)
        node_json(o, h, &it->nodes[i], i == 0);
    hscope__out_puts(o, "]}</script>\n</section>\n");
}

hscope_status
hscope__html_domtree(hscope__html *x)
{
    const hscope_heap_t *h = x->r->heap;
    hscope__mem *m = (hscope__mem *)&x->r->mem;
    itree it;
    memset(&it, 0, sizeof(it));
    it.t = x->r->sus ? hscope__suspects_domtree(x->r->sus) : x->r->tree;
    it.q.mem = m;
    uint64_t rn = 0, rm = 0, un = 0, um = 0;
    hscope__domtree_totals(it.t, &rn, &rm, &un, &um);
    it.thr = rm / 1000 ? rm / 1000 : 1;
    uint32_t nc = hscope__heap_root_category_count(h);
    it.maxn = MAX_TREE_NODES + (size_t)nc + 1;
    it.nodes = hscope__calloc(m, it.maxn + 1, sizeof(tnode));
    if (!it.nodes)
        return hscope__nomem(x->err, (it.maxn + 1) * sizeof(tnode));
    it.nodes[it.nn++] = (tnode){ -1, -1, HSCOPE_ID_NONE, rm, rn };
    hscope_status st = seed_roots(&it, h, x->err);
    if (st == HSCOPE_OK)
        st = grow_tree(&it, x->err);
    if (st == HSCOPE_OK)
        write_icicle(x->o, h, &it, rm);
    hscope__free(m, it.q.a);
    hscope__free(m, it.nodes);
    return st;
}
