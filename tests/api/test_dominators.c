/*
 * test_dominators.c - the dominator tree against an independent, simple
 * implementation (Cooper, Harvey & Kennedy's iterative algorithm, written
 * here from the paper) on generated graphs with tricky shapes: cycles,
 * diamonds, self-loops, unreachable parts, several roots, duplicate edges,
 * random graphs, and a 10^6-long chain (no recursion may blow the stack).
 * Also retained sizes (recomputed here from the reference tree), paths
 * from roots and holders.
 *
 * Graphs are written as heap dumps (objects without classes, so the
 * object -> class edges add nothing) and read back through the public API.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

/* ---- dump text builder ---- */

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void
put(text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        /* no pointer arithmetic on the NULL of an empty text (UB) */
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->cap - t->len, fmt, ap);
        va_end(ap);
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap = t->cap ? t->cap * 2 : 1 << 16;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
}

/* Allocation sites of the graphs' objects (g.rb:1 .. g.rb:NSITES). */
#define NSITES 5

/* Graph: n nodes (addresses 0x1000 + 8*i unless addr is set),
 * adjacency lists, roots. */
typedef struct graph {
    int n;
    int **adj;
    int *deg;
    int nroots;
    int *roots;
    unsigned long *addr;
} graph;

static unsigned long
addr_of(const graph *g, int i)
{
    return g->addr ? g->addr[i] : 0x1000ul + 8ul * (unsigned long)i;
}

static graph *
graph_new(int n)
{
    graph *g = calloc(1, sizeof(*g));
    g->n = n;
    g->adj = calloc((size_t)n, sizeof(int *));
    g->deg = calloc((size_t)n, sizeof(int));
    g->roots = calloc((size_t)n + 1, sizeof(int));
    return g;
}

static void
edge(graph *g, int a, int b)
{
    g->adj[a] = realloc(g->adj[a], (size_t)(g->deg[a] + 1) * sizeof(int));
    g->adj[a][g->deg[a]++] = b;
}

static void
graph_free(graph *g)
{
    for (int i = 0; i < g->n; i++)
        free(g->adj[i]);
    free(g->adj);
    free(g->deg);
    free(g->roots);
    free(g->addr);
    free(g);
}

static hscope_heap_t *
graph_heap(const graph *g)
{
    text t = { 0 };
    put(&t, "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[");
    for (int r = 0; r < g->nroots; r++)
        put(&t, "%s\"0x%lx\"", r ? ", " : "", addr_of(g, g->roots[r]));
    put(&t, "]}\n");
    for (int i = 0; i < g->n; i++) {
        /* five allocation sites, for the retained size per site */
        put(&t, "{\"address\":\"0x%lx\", \"type\":\"OBJECT\", \"file\":\"g.rb\", "
                "\"line\":%d", addr_of(g, i), i % NSITES + 1);
        if (g->deg[i]) {
            put(&t, ", \"references\":[");
            for (int k = 0; k < g->deg[i]; k++)
                put(&t, "%s\"0x%lx\"", k ? ", " : "", addr_of(g, g->adj[i][k]));
            put(&t, "]");
        }
        put(&t, ", \"memsize\":%d}\n", 10 + i % 7);
    }
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_heap_open_memory(&h, t.s, t.len, NULL, &err), HSCOPE_OK);
    free(t.s);
    assert_int_equal(hscope_heap_object_count(h), g->n);
    return h;
}

/* ---- the independent reference: Cooper-Harvey-Kennedy ---- */
/* Node n is the super-root; it points at every root. */

static int
intersect(const int *idom, const int *po, int a, int b)
{
    while (a != b) {
        while (po[a] < po[b])
            a = idom[a];
        while (po[b] < po[a])
            b = idom[b];
    }
    return a;
}

/* Fills idom[] (super-root = n; -1 = unreachable) and post[] (the DFS
 * postorder, *npost entries: a dominator always comes after the nodes it
 * dominates).  Iterative DFS. */
static void
chk(const graph *g, int *idom, int *post, int *npost)
{
    int n = g->n, N = n + 1;
    int *po = malloc((size_t)N * sizeof(int)), *order = malloc((size_t)N * sizeof(int));
    int *stk = malloc((size_t)N * sizeof(int)), *pos = calloc((size_t)N, sizeof(int));
    char *seen = calloc((size_t)N, 1);
    int cnt = 0, sp = 0;
    stk[sp++] = n;
    seen[n] = 1;
    while (sp) {
        int v = stk[sp - 1];
        int deg = v == n ? g->nroots : g->deg[v];
        if (pos[v] < deg) {
            int w = v == n ? g->roots[pos[v]] : g->adj[v][pos[v]];
            pos[v]++;
            if (!seen[w]) {
                seen[w] = 1;
                stk[sp++] = w;
            }
        } else {
            po[v] = cnt;
            order[cnt++] = v;
            sp--;
        }
    }
    /* predecessors: counted, then filled */
    int **pred = calloc((size_t)N, sizeof(int *)), *np = calloc((size_t)N, sizeof(int));
    for (int pass = 0; pass < 2; pass++) {
        for (int v = 0; v <= n; v++) {
            if (!seen[v])
                continue;
            int deg = v == n ? g->nroots : g->deg[v];
            for (int k = 0; k < deg; k++) {
                int w = v == n ? g->roots[k] : g->adj[v][k];
                if (pass)
                    pred[w][np[w]++] = v;
                else
                    np[w]++;
            }
        }
        for (int v = 0; !pass && v <= n; v++) {
            pred[v] = malloc((size_t)(np[v] ? np[v] : 1) * sizeof(int));
            np[v] = 0;
        }
    }
    for (int v = 0; v <= n; v++)
        idom[v] = -1;
    idom[n] = n;
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int k = cnt - 2; k >= 0; k--) { /* reverse postorder, skip root */
            int b = order[k], nd = -1;
            for (int j = 0; j < np[b]; j++) {
                int p = pred[b][j];
                if (idom[p] == -1)
                    continue;
                nd = nd == -1 ? p : intersect(idom, po, p, nd);
            }
            if (idom[b] != nd) {
                idom[b] = nd;
                changed = 1;
            }
        }
    }
    memcpy(post, order, (size_t)cnt * sizeof(int));
    *npost = cnt;
    for (int v = 0; v <= n; v++)
        free(pred[v]);
    free(pred);
    free(np);
    free(po);
    free(order);
    free(stk);
    free(pos);
    free(seen);
}

/* The largest holders, as hscope_domtree_top() ranks them: every
 * reachable object by retained size down, then address up (ret and idom
 * from the reference), sorted here with qsort; asked for all of them (a
 * radix sort over the run index, where the layout gives one) and for the
 * first few (a bounded heap): the same order. */
static const uint64_t *top_ret;
static const graph *top_g;

static int
cmp_top(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    if (top_ret[a] != top_ret[b])
        return top_ret[a] > top_ret[b] ? -1 : 1;
    unsigned long p = addr_of(top_g, a), q = addr_of(top_g, b);
    return p < q ? -1 : p > q;
}

static void
check_top(const graph *g, const hscope_domtree_t *t, const int *idom, const uint64_t *ret,
          uint64_t reach)
{
    int *want = malloc((size_t)g->n * sizeof(int));
    hscope_id *got = malloc(((size_t)g->n + 1) * sizeof(hscope_id));
    size_t nw = 0;
    for (int v = 0; v < g->n; v++)
        if (idom[v] != -1)
            want[nw++] = v;
    assert_int_equal(nw, reach);
    top_ret = ret;
    top_g = g;
    qsort(want, nw, sizeof(int), cmp_top);
    const uint64_t asks[] = { (uint64_t)g->n + 1, (uint64_t)g->n, reach, 1, 7, reach / 2 };
    for (size_t a = 0; a < sizeof(asks) / sizeof(asks[0]); a++) {
        uint64_t max = asks[a], k = hscope_domtree_top(t, got, max);
        assert_int_equal(k, max < reach ? max : reach);
        for (uint64_t i = 0; i < k; i++)
            if (got[i] != (hscope_id)want[i])
                fail_msg("top %llu of %llu: place %llu is object %u, want %d",
                         (unsigned long long)max, (unsigned long long)reach,
                         (unsigned long long)i, got[i], want[i]);
    }
    free(want);
    free(got);
}

/* Compare heapscope's tree of h, the heap of g, with the reference,
 * including retained sizes. */
static void
check_heap(const graph *g, hscope_heap_t *h)
{
    hscope_domtree_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_domtree_compute(&t, h, NULL, &err), HSCOPE_OK);
    int *idom = malloc((size_t)(g->n + 1) * sizeof(int));
    int *post = malloc((size_t)(g->n + 1) * sizeof(int)), npost = 0;
    chk(g, idom, post, &npost);
    /* reference retained sizes: in postorder every node comes after all
     * the nodes it dominates, so one pass accumulates subtree sums */
    uint64_t *ret = calloc((size_t)g->n + 1, sizeof(uint64_t));
    for (int k = 0; k < npost; k++) {
        int v = post[k];
        if (v == g->n)
            continue;
        ret[v] += (uint64_t)(10 + v % 7);
        ret[idom[v]] += ret[v];
    }
    uint64_t reach = 0;
    for (int v = 0; v < g->n; v++) {
        hscope_id d;
        int32_t cat;
        hscope_status st = hscope_domtree_idom(t, (hscope_id)v, &d, &cat);
        if (idom[v] == -1) {
            assert_int_equal(st, HSCOPE_ERR_NOT_FOUND);
            assert_int_equal(hscope_domtree_reachable(t, (hscope_id)v), 0);
            continue;
        }
        reach++;
        assert_int_equal(st, HSCOPE_OK);
        if (idom[v] == g->n) /* the root category node stands for the super-root */
            assert_true(d == HSCOPE_ID_NONE && cat == 0);
        else
            assert_int_equal(d, (hscope_id)idom[v]);
        assert_int_equal(hscope_domtree_retained(t, (hscope_id)v), ret[v]);
    }
    uint64_t r;
    hscope_domtree_totals(t, &r, NULL, NULL, NULL);
    assert_int_equal(r, reach);
    check_top(g, t, idom, ret, reach);
    /* children: the nodes whose reference idom is v, ascending (the root
     * category stands for the super-root) */
    int *next = calloc((size_t)g->n + 1, sizeof(int)); /* per parent: next child to see */
    for (int w = 0; w < g->n; w++) {
        if (idom[w] == -1)
            continue;
        int v = idom[w];
        const hscope_id *k = NULL;
        uint64_t nk = 0;
        assert_int_equal(hscope_domtree_children(t, v == g->n ? HSCOPE_ID_NONE : (hscope_id)v,
                                                 v == g->n ? 0 : -1, &k, &nk, &err), HSCOPE_OK);
        assert_true((uint64_t)next[v] < nk);
        assert_int_equal(k[next[v]++], (hscope_id)w);
    }
    for (int v = -1; v < g->n; v++) {
        const hscope_id *k = NULL;
        uint64_t nk = 0;
        assert_int_equal(hscope_domtree_children(t, v < 0 ? HSCOPE_ID_NONE : (hscope_id)v,
                                                 v < 0 ? 0 : -1, &k, &nk, &err), HSCOPE_OK);
        assert_int_equal(nk, (uint64_t)next[v < 0 ? g->n : v]);
    }
    free(next);
    /* retained per site, each object under its topmost dominator of the
     * same site: that is, per site, the objects with the site on their
     * dominator chain (themselves included).  Parents before children
     * (reverse postorder): a mask of the sites on each chain. */
    unsigned *mask = calloc((size_t)g->n + 1, sizeof(unsigned));
    uint64_t site_n[NSITES] = { 0 }, site_m[NSITES] = { 0 };
    for (int k = npost - 1; k >= 0; k--) {
        int v = post[k];
        if (v == g->n)
            continue;
        mask[v] = (idom[v] == g->n ? 0u : mask[idom[v]]) | 1u << (v % NSITES);
        for (int j = 0; j < NSITES; j++)
            if (mask[v] >> j & 1) {
                site_n[j]++;
                site_m[j] += (uint64_t)(10 + v % 7);
            }
    }
    hscope_tally_t *tl = NULL;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    assert_int_equal(hscope_domtree_tally(&tl, t, "file:line", &to, &err), HSCOPE_OK);
    uint64_t rows = 0;
    for (int j = 0; j < NSITES; j++) {
        if (!site_n[j])
            continue;
        char key[32];
        snprintf(key, sizeof(key), "g.rb:%d", j + 1);
        uint64_t row = 0;
        while (row < hscope_tally_row_count(tl) && strcmp(hscope_tally_row_key(tl, row), key) != 0)
            row++;
        assert_true(row < hscope_tally_row_count(tl));
        assert_int_equal(hscope_tally_row_count_of(tl, row), site_n[j]);
        assert_int_equal(hscope_tally_row_memsize(tl, row), site_m[j]);
        rows++;
    }
    assert_int_equal(hscope_tally_row_count(tl), rows);
    hscope_tally_free(tl);
    free(mask);
    free(post);
    free(ret);
    free(idom);
    hscope_domtree_free(t);
}

static void
check(const graph *g)
{
    hscope_heap_t *h = graph_heap(g);
    check_heap(g, h);
    hscope_heap_free(h);
}

static void
test_diamond_and_cycle(void **state)
{
    (void)state;
    /* 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 (diamond), 3 -> 4 -> 5 -> 3 (cycle),
     * 5 -> 5 (self-loop), 6 isolated, 7 -> 6 (unreachable part) */
    graph *g = graph_new(8);
    g->roots[g->nroots++] = 0;
    edge(g, 0, 1); edge(g, 0, 2); edge(g, 1, 3); edge(g, 2, 3);
    edge(g, 3, 4); edge(g, 4, 5); edge(g, 5, 3); edge(g, 5, 5);
    edge(g, 7, 6); edge(g, 1, 3); /* duplicate edge */
    check(g);
    graph_free(g);
}

static void
test_several_roots(void **state)
{
    (void)state;
    /* two roots reach 2: only the super-root dominates it */
    graph *g = graph_new(5);
    g->roots[g->nroots++] = 0;
    g->roots[g->nroots++] = 1;
    g->roots[g->nroots++] = 0; /* duplicate root reference */
    edge(g, 0, 2); edge(g, 1, 2); edge(g, 2, 3); edge(g, 3, 4); edge(g, 4, 2);
    check(g);
    graph_free(g);
}

static void
test_irreducible(void **state)
{
    (void)state;
    /* the classic irreducible loop: 0 -> 1, 0 -> 2, 1 <-> 2, then a ladder */
    graph *g = graph_new(12);
    g->roots[g->nroots++] = 0;
    edge(g, 0, 1); edge(g, 0, 2); edge(g, 1, 2); edge(g, 2, 1);
    for (int i = 1; i < 10; i++) {
        edge(g, i, i + 2);
        edge(g, i + 1, i + 2);
    }
    check(g);
    graph_free(g);
}

static unsigned long rng = 12345;
static int
rnd(int n)
{
    rng = rng * 6364136223846793005ul + 1442695040888963407ul;
    return (int)((rng >> 33) % (unsigned long)n);
}

static void
test_random_graphs(void **state)
{
    (void)state;
    for (int round = 0; round < 40; round++) {
        int n = 20 + rnd(400);
        graph *g = graph_new(n);
        int nr = 1 + rnd(3);
        for (int r = 0; r < nr; r++)
            g->roots[g->nroots++] = rnd(n);
        int m = n + rnd(3 * n);
        for (int e = 0; e < m; e++) {
            int a = rnd(n);
            /* mostly forward edges (tree-like heaps), some back edges */
            int b = rnd(10) < 7 ? a + 1 + rnd(5) : rnd(n);
            if (b < n)
                edge(g, a, b);
        }
        check(g);
        graph_free(g);
    }
}

/* Graphs of 2^16 vertices and more: the predecessor lists are filled in
 * two halves of the sources (on two threads where there are two cores),
 * each into its own part of every list; lists of many predecessors from
 * both halves (targets referenced from everywhere, like classes) and of
 * repeated edges from either must come out whole. */
/* The ranking of hscope_domtree_top() (check_top) where address order is
 * not id order: objects in 16 KiB pages written in a shuffled page order,
 * as Ruby writes them (the run index), and objects at shuffled addresses
 * (the hash index).  Sizes repeat every 7 objects: many ties. */
static void
test_top_order(void **state)
{
    (void)state;
    for (int round = 0; round < 24; round++) {
        int n = 300 + rnd(3000), per = 409; /* 40-byte slots in a 16 KiB page */
        graph *g = graph_new(n);
        g->addr = malloc((size_t)n * sizeof(unsigned long));
        int np = (n + per - 1) / per, *perm = malloc((size_t)(np > n ? np : n) * sizeof(int));
        int pages = round % 2 == 0, m = pages ? np : n;
        for (int i = 0; i < m; i++)
            perm[i] = i;
        for (int i = m - 1; i > 0; i--) {
            int j = rnd(i + 1), x = perm[i];
            perm[i] = perm[j];
            perm[j] = x;
        }
        for (int i = 0; i < n; i++)
            g->addr[i] = pages ? 0x7f0000100000ul + (unsigned long)perm[i / per] * 16384ul +
                                     (unsigned long)(i % per) * 40ul
                               : 0x7f0000100000ul + (unsigned long)perm[i] * 40ul;
        free(perm);
        int nr = 1 + rnd(3);
        for (int r = 0; r < nr; r++)
            g->roots[g->nroots++] = rnd(n);
        for (int e = 0; e < 2 * n; e++) {
            int a = rnd(n), b = rnd(10) < 8 ? a + 1 + rnd(9) : rnd(n);
            if (b < n)
                edge(g, a, b);
        }
        check(g);
        graph_free(g);
    }
}

static void
test_large_graphs(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        int n = 70000 + rnd(30000);
        graph *g = graph_new(n);
        for (int r = 0; r < 2 + round; r++)
            g->roots[g->nroots++] = rnd(n);
        int hubs = 1 + rnd(20);
        for (int a = 0; a < n; a++) {
            /* a chain of mostly short forward edges keeps most of it
             * reachable; then hubs, back edges and repeats */
            int b = a + 1 + rnd(3);
            if (a + 1 < n && rnd(10))
                edge(g, a, b < n ? b : a + 1);
            if (rnd(3) == 0)
                edge(g, a, rnd(hubs));
            if (rnd(5) == 0)
                edge(g, a, rnd(n));
            if (rnd(20) == 0 && g->deg[a])
                edge(g, a, g->adj[a][0]);
        }
        for (int h = 0; h < hubs; h++)
            edge(g, h, rnd(n));
        check(g);
        graph_free(g);
    }
}

/* Repeated references (the DFS tree edge listed again, before and after
 * the first), self references and references back to a root: the
 * predecessor lists are sized while the DFS runs, so each kind of edge
 * must be counted exactly as the lists are filled. */
static void
test_repeated_edges(void **state)
{
    (void)state;
    graph *g = graph_new(6);
    g->roots[g->nroots++] = 0;
    g->roots[g->nroots++] = 0;
    edge(g, 0, 1);
    edge(g, 0, 1);
    edge(g, 0, 0);
    edge(g, 1, 1);
    edge(g, 1, 2);
    edge(g, 1, 3);
    edge(g, 1, 2);
    edge(g, 2, 0);
    edge(g, 2, 4);
    edge(g, 3, 4);
    edge(g, 3, 4);
    edge(g, 4, 5);
    edge(g, 4, 1);
    edge(g, 5, 5);
    edge(g, 5, 4);
    check(g);
    graph_free(g);
    for (int round = 0; round < 20; round++) {
        int n = 10 + rnd(200);
        g = graph_new(n);
        g->roots[g->nroots++] = rnd(n);
        for (int e = 0; e < 3 * n; e++) {
            int a = rnd(n), b = rnd(4) ? (a + 1 + rnd(3)) % n : rnd(n);
            for (int k = 1 + rnd(3); k > 0; k--) /* one to three copies */
                edge(g, a, rnd(5) ? b : a);
        }
        check(g);
        graph_free(g);
    }
}

static void
test_deep_chain(void **state)
{
    (void)state;
    /* 10^6 objects in one chain, plus a back edge to the middle: any
     * recursive DFS or path compression would overflow the stack */
    int n = 1000000;
    graph *g = graph_new(n);
    g->roots[g->nroots++] = 0;
    for (int i = 0; i + 1 < n; i++)
        edge(g, i, i + 1);
    edge(g, n - 1, n / 2);
    hscope_heap_t *h = graph_heap(g);
    check_heap(g, h);
    /* the chain of the last object is the whole list; the path from the
     * root is as long */
    hscope_domtree_t *t = NULL;
    hscope_paths_t *p = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_domtree_compute(&t, h, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_domtree_chain(t, (hscope_id)(n - 1), NULL, 0, NULL), (uint64_t)n);
    /* idom, retained count and size: 12 bytes per object (and the handle) */
    assert_true(hscope_domtree_memory(t) < 13 * (uint64_t)n);
    assert_int_equal(hscope_paths_compute(&p, h, NULL, &err), HSCOPE_OK);
    int32_t cat = -2;
    assert_int_equal(hscope_paths_get(p, (hscope_id)(n - 1), NULL, 0, &cat), (uint64_t)n);
    assert_int_equal(cat, 0);
    hscope_paths_free(p);
    hscope_domtree_free(t);
    hscope_heap_free(h);
    graph_free(g);
}

/* Retained sizes of 4 GiB and more (kept apart from the 4-byte ones): a
 * chain of 3 GB objects retains their sums exactly, and orders the top. */
static void
test_big_retained(void **state)
{
    (void)state;
    /* 300 chains root -> A_k (3e9) -> B_k (3e9 + k) -> C_k (3e9), and a
     * 100-byte D_k under each A_k: more big sizes than the table's first
     * size holds */
    text t = { 0 };
    int n = 300;
    put(&t, "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[");
    for (int k = 0; k < n; k++)
        put(&t, "%s\"0x%x\"", k ? ", " : "", 0x100000 + 0x100 * k);
    put(&t, "]}\n");
    for (int k = 0; k < n; k++) {
        int a = 0x100000 + 0x100 * k;
        put(&t, "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"references\":[\"0x%x\", \"0x%x\"], "
                "\"memsize\":3000000000}\n", a, a + 0x10, a + 0x30);
        put(&t, "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"references\":[\"0x%x\"], "
                "\"memsize\":%llu}\n", a + 0x10, a + 0x20, 3000000000ull + (unsigned long long)k);
        put(&t, "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"memsize\":3000000000}\n", a + 0x20);
        put(&t, "{\"address\":\"0x%x\", \"type\":\"OBJECT\", \"memsize\":100}\n", a + 0x30);
    }
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_heap_open_memory(&h, t.s, t.len, NULL, &err), HSCOPE_OK);
    free(t.s);
    hscope_domtree_t *tr = NULL;
    assert_int_equal(hscope_domtree_compute(&tr, h, NULL, &err), HSCOPE_OK);
    for (int k = 0; k < n; k++) {
        uint64_t a = 0x100000 + 0x100 * (uint64_t)k, ka = 3000000000ull + (uint64_t)k;
        hscope_id ia, ib, ic, id;
        assert_int_equal(hscope_heap_find(h, a, &ia), HSCOPE_OK);
        assert_int_equal(hscope_heap_find(h, a + 0x10, &ib), HSCOPE_OK);
        assert_int_equal(hscope_heap_find(h, a + 0x20, &ic), HSCOPE_OK);
        assert_int_equal(hscope_heap_find(h, a + 0x30, &id), HSCOPE_OK);
        assert_int_equal(hscope_domtree_retained(tr, ic), 3000000000ull);
        assert_int_equal(hscope_domtree_retained(tr, ib), ka + 3000000000ull);
        assert_int_equal(hscope_domtree_retained(tr, ia), ka + 6000000100ull);
        assert_int_equal(hscope_domtree_retained(tr, id), 100);
    }
    hscope_id top[2];
    assert_int_equal(hscope_domtree_top(tr, top, 2), 2);
    assert_int_equal(hscope_heap_object_address(h, top[0]), 0x100000 + 0x100 * (n - 1));
    assert_int_equal(hscope_heap_object_address(h, top[1]), 0x100000 + 0x100 * (n - 2));
    hscope_domtree_free(tr);
    hscope_heap_free(h);
}

/* Reference BFS distances from the roots (objects on the path, the root
 * target counting 1; 0 unreached). */
static int *
bfs_dist(const graph *g)
{
    int *d = calloc((size_t)g->n, sizeof(int)), *q = malloc((size_t)g->n * sizeof(int));
    int qh = 0, qt = 0;
    for (int r = 0; r < g->nroots; r++)
        if (!d[g->roots[r]]) {
            d[g->roots[r]] = 1;
            q[qt++] = g->roots[r];
        }
    while (qh < qt) {
        int v = q[qh++];
        for (int k = 0; k < g->deg[v]; k++)
            if (!d[g->adj[v][k]]) {
                d[g->adj[v][k]] = d[v] + 1;
                q[qt++] = g->adj[v][k];
            }
    }
    free(q);
    return d;
}

static int
has_edge(const graph *g, int a, int b)
{
    for (int k = 0; k < g->deg[a]; k++)
        if (g->adj[a][k] == b)
            return 1;
    return 0;
}

/* Paths from the roots of a heap whose reverse references are built
 * (kept compact, by the predecessor's place among the referrers) are the
 * paths of a heap without them, shortest and made of edges, in less
 * memory. */
static void
check_paths_compact(const graph *g)
{
    hscope_heap_t *h1 = graph_heap(g), *h2 = graph_heap(g);
    hscope_error err = HSCOPE_ERROR_INIT;
    const hscope_id *src;
    uint64_t nsrc;
    assert_int_equal(hscope_heap_object_referrers(h2, 0, &src, &nsrc, &err), HSCOPE_OK);
    hscope_paths_t *p1 = NULL, *p2 = NULL;
    assert_int_equal(hscope_paths_compute(&p1, h1, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_paths_compute(&p2, h2, NULL, &err), HSCOPE_OK);
    assert_true(hscope_paths_memory(p2) < hscope_paths_memory(p1));
    int *d = bfs_dist(g);
    hscope_id *a = malloc((size_t)g->n * sizeof(hscope_id)), *b = malloc((size_t)g->n * sizeof(hscope_id));
    for (int v = 0; v < g->n; v++) {
        int32_t c1 = -2, c2 = -2;
        uint64_t l1 = hscope_paths_get(p1, (hscope_id)v, a, (uint64_t)g->n, &c1);
        uint64_t l2 = hscope_paths_get(p2, (hscope_id)v, b, (uint64_t)g->n, &c2);
        assert_int_equal(l1, (uint64_t)d[v]);
        assert_int_equal(l2, (uint64_t)d[v]);
        if (!l2)
            continue;
        assert_int_equal(c2, c1);
        assert_memory_equal(a, b, (size_t)l2 * sizeof(hscope_id));
        assert_int_equal(b[l2 - 1], (hscope_id)v);
        assert_int_equal(d[b[0]], 1);
        for (uint64_t k = 1; k < l2; k++)
            assert_true(has_edge(g, (int)b[k - 1], (int)b[k]));
    }
    free(a);
    free(b);
    free(d);
    hscope_paths_free(p1);
    hscope_paths_free(p2);
    hscope_heap_free(h1);
    hscope_heap_free(h2);
}

static void
test_paths_compact(void **state)
{
    (void)state;
    /* a hub referenced by 700 objects, reached first through its last
     * referrer (a place past what one byte holds), a root target reached
     * from a root only, and random graphs */
    int n = 2000, hub = 1999;
    graph *g = graph_new(n);
    g->roots[g->nroots++] = 0;
    g->roots[g->nroots++] = 700;
    for (int i = 0; i + 1 < 700; i++)
        edge(g, i, i + 1);
    for (int i = 1; i <= 700; i++)
        edge(g, i, hub);
    for (int i = 701; i < hub; i++)
        edge(g, i - 1 == 700 ? hub : i - 1, i);
    check_paths_compact(g);
    graph_free(g);
    for (int round = 0; round < 10; round++) {
        n = 300 + rnd(2000);
        g = graph_new(n);
        for (int r = 0; r < 1 + rnd(3); r++)
            g->roots[g->nroots++] = rnd(n);
        for (int e = 0, m = 2 * n + rnd(3 * n); e < m; e++) {
            int x = rnd(n), y = rnd(10) < 7 ? x + 1 + rnd(5) : rnd(n);
            if (y < n)
                edge(g, x, y);
        }
        check_paths_compact(g);
        graph_free(g);
    }
}

/* holders: members grouped by the first non-member dominator */
static void
test_holders(void **state)
{
    (void)state;
    /* root -> 0 (holder A) -> 2,3 (leaked, 3 -> 4 leaked);
     *         1 (holder B) -> 5 (leaked); 6 leaked, referenced by 0 and 1 */
    graph *g = graph_new(7);
    g->roots[g->nroots++] = 0;
    g->roots[g->nroots++] = 1;
    edge(g, 0, 2); edge(g, 0, 3); edge(g, 3, 4); edge(g, 1, 5);
    edge(g, 0, 6); edge(g, 1, 6);
    hscope_heap_t *h = graph_heap(g);
    hscope_domtree_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_domtree_compute(&t, h, NULL, &err), HSCOPE_OK);
    hscope_id set[] = { 2, 3, 4, 5, 6 };
    hscope_holders_t *hs = NULL;
    assert_int_equal(hscope_holders_compute(&hs, t, set, 5, &err), HSCOPE_OK);
    assert_int_equal(hscope_holders_count(hs), 3);
    hscope_id hid;
    int32_t cat;
    uint64_t cnt, mem;
    /* 0 holds 2, 3, 4: memsize 12 + 13 + 14 */
    assert_int_equal(hscope_holders_get(hs, 0, &hid, &cat, &cnt, &mem), HSCOPE_OK);
    assert_int_equal(hid, 0);
    assert_int_equal(cnt, 3);
    assert_int_equal(mem, 12 + 13 + 14);
    /* 6 (memsize 16) is held only by the roots together */
    assert_int_equal(hscope_holders_get(hs, 1, &hid, &cat, &cnt, &mem), HSCOPE_OK);
    assert_int_equal(hid, HSCOPE_ID_NONE);
    assert_int_equal(cat, 0);
    assert_int_equal(cnt, 1);
    assert_int_equal(mem, 16);
    assert_int_equal(hscope_holders_get(hs, 2, &hid, &cat, &cnt, &mem), HSCOPE_OK);
    assert_int_equal(hid, 1);
    assert_int_equal(mem, 15);
    hscope_holders_free(hs);
    hscope_domtree_free(t);
    hscope_heap_free(h);
    graph_free(g);
}

/* Holders keep their heap, not the tree: freed in any order (a garbage
 * collector does), they still answer.  Under valgrind and ASan (CI), a
 * holders handle that still reached into the freed tree fails here. */
static void
test_holders_outlive_tree(void **state)
{
    (void)state;
    graph *g = graph_new(4);
    g->roots[g->nroots++] = 0;
    edge(g, 0, 1); edge(g, 1, 2); edge(g, 1, 3);
    hscope_heap_t *h = graph_heap(g);
    hscope_domtree_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_domtree_compute(&t, h, NULL, &err), HSCOPE_OK);
    hscope_id set[] = { 2, 3 };
    hscope_holders_t *hs = NULL;
    assert_int_equal(hscope_holders_compute(&hs, t, set, 2, &err), HSCOPE_OK);
    hscope_domtree_free(t);
    hscope_heap_free(h);
    assert_int_equal(hscope_holders_count(hs), 1);
    hscope_id hid;
    int32_t cat;
    uint64_t cnt, mem;
    /* 1 holds 2 and 3: memsize 12 + 13 */
    assert_int_equal(hscope_holders_get(hs, 0, &hid, &cat, &cnt, &mem), HSCOPE_OK);
    assert_int_equal(hid, 1);
    assert_int_equal(cat, -1);
    assert_int_equal(cnt, 2);
    assert_int_equal(mem, 12 + 13);
    hscope_holders_free(hs);
    graph_free(g);
}

int
main(int argc, char **argv)
{
    /* a test name (or a glob) runs that one alone: scripts/test.sh runs
     * test_large_graphs, whose predecessor lists are filled on two
     * threads, under ThreadSanitizer */
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diamond_and_cycle),
        cmocka_unit_test(test_several_roots),
        cmocka_unit_test(test_irreducible),
        cmocka_unit_test(test_random_graphs),
        cmocka_unit_test(test_top_order),
        cmocka_unit_test(test_large_graphs),
        cmocka_unit_test(test_holders),
        cmocka_unit_test(test_holders_outlive_tree),
        cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_paths_compact),
        cmocka_unit_test(test_big_retained),
        cmocka_unit_test(test_repeated_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
