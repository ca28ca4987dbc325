/*
 * w_paths.c - paths from the GC roots to objects (kind "paths"): text,
 * JSON, and a Graphviz graph (DOT) with each object, root and edge once.
 */
#include <stdio.h>
#include <string.h>

#include "../model/model.h"
#include "../analysis/dominators.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "table.h"
#include "writers.h"

/* A set of edges (64-bit keys; 0 never used), open addressing. */
typedef struct edgeset {
    hscope__mem *m;
    uint64_t *k;
    size_t cap, n;
} edgeset;

static uint64_t
mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return x ^ (x >> 33);
}

/* 1 if key was added, 0 if it was there, -1 on allocation failure. */
static int
edge_add(edgeset *s, uint64_t key)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        uint64_t *nk = hscope__calloc(s->m, ncap, sizeof(uint64_t));
        if (!nk)
            return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->k[i])
                for (size_t j = mix(s->k[i]) & (ncap - 1);; j = (j + 1) & (ncap - 1))
                    if (!nk[j]) {
                        nk[j] = s->k[i];
                        break;
                    }
        hscope__free(s->m, s->k);
        s->k = nk;
        s->cap = ncap;
    }
    for (size_t j = mix(key) & (s->cap - 1);; j = (j + 1) & (s->cap - 1)) {
        if (s->k[j] == key)
            return 0;
        if (!s->k[j]) {
            s->k[j] = key;
            s->n++;
            return 1;
        }
    }
}

typedef struct pw {
    const hscope_paths_t *p;
    const hscope_heap_t *h;
    const hscope__ropts *ro;
    hscope__out *o;
    hscope__json *w;
    uint64_t nth;              /* paths of the current target so far */
    /* DOT: per object 1 = written, 2 = a given object (highlighted); then
     * per root category + super-root: written */
    uint8_t *seen;
    edgeset edges;
    int failed;
} pw;

static void
on_json(void *ud, hscope_id target, const hscope_id *path, uint64_t len, int32_t cat)
{
    pw *x = ud;
    hscope__json_obj(x->w);
    hscope__json_key(x->w, "target");
    hscope__json_addr(x->w, hscope__heap_object_address(x->h, target));
    hscope__json_kstr(x->w, "root", len ? hscope__root_name(x->h, cat) : NULL);
    hscope__json_key(x->w, "path");
    hscope__json_objrefs(x->w, x->h, path, len);
    hscope__json_end_obj(x->w);
}

static void
on_text(void *ud, hscope_id target, const hscope_id *path, uint64_t len, int32_t cat)
{
    pw *x = ud;
    unsigned long long a = (unsigned long long)hscope__heap_object_address(x->h, target);
    if (!len) {
        hscope__out_printf(x->o, "0x%llx: not reachable from any root (garbage the dump caught)\n\n",
                           a);
        return;
    }
    char steps[64];
    hscope__fmt_plural(len, "step", "steps", steps, sizeof(steps));
    hscope__out_printf(x->o, "0x%llx: path %llu from root %s (%s)\n", a,
                       (unsigned long long)++x->nth, hscope__root_name(x->h, cat), steps);
    for (uint64_t k = 0; k < len; k++) {
        const char *f = hscope__heap_object_file(x->h, path[k]);
        char where[4096];
        if (f)
            snprintf(where, sizeof(where), "%s:%u", f, hscope__heap_object_line(x->h, path[k]));
        hscope__text_obj_line(x->o, x->ro, x->h, path[k], 2 + (size_t)(k < 30 ? k : 30),
                              f ? where : NULL, "");
    }
    hscope__out_putc(x->o, '\n');
}

/* ------------------------------------------------------------------ */
/* DOT                                                                 */
/* ------------------------------------------------------------------ */

static void
dot_escape(hscope__out *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            hscope__out_putc(o, '\\');
        if (*s == '\n' || *s == '\r')
            hscope__out_puts(o, "\\n");
        else
            hscope__out_putc(o, *s);
    }
}

static void
dot_node(pw *x, hscope_id id)
{
    char lb[512];
    hscope__obj_text(x->h, id, lb, sizeof(lb));
    hscope__out_printf(x->o, "  n%u [label=\"", id);
    dot_escape(x->o, lb);
    hscope__out_printf(x->o, "\\n0x%llx", (unsigned long long)hscope__heap_object_address(x->h, id));
    const char *f = hscope__heap_object_file(x->h, id);
    if (f) {
        const char *base = strrchr(f, '/');
        hscope__out_puts(x->o, "\\n");
        dot_escape(x->o, base ? base + 1 : f);
        hscope__out_printf(x->o, ":%u", hscope__heap_object_line(x->h, id));
    }
    hscope__out_printf(x->o, "\"%s];\n",
                       (x->seen[id] & 2) ? ", style=filled, fillcolor=\"#f4a6a6\"" : "");
}

/* Index of `to` among `from`'s references (the "field"), or -1. */
static long
ref_index(const hscope_heap_t *h, hscope_id from, hscope_id to)
{
    const hscope_id *r;
    uint64_t n;
    if (hscope__heap_object_references(h, from, &r, &n) != HSCOPE_OK)
        return -1;
    for (uint64_t i = 0; i < n; i++)
        if (r[i] == to)
            return (long)i;
    return -1;
}

static void
dot_edge(pw *x, hscope_id from, hscope_id to)
{
    int r = edge_add(&x->edges, (uint64_t)from << 32 | to | 1ull << 63);
    if (r < 0)
        x->failed = 1;
    if (r <= 0)
        return;
    long fi = ref_index(x->h, from, to);
    if (fi >= 0)
        hscope__out_printf(x->o, "  n%u -> n%u [label=\"[%ld]\", fontsize=8];\n", from, to, fi);
    else
        hscope__out_printf(x->o, "  n%u -> n%u [label=\"class\", fontsize=8, style=dashed];\n",
                           from, to);
}

static void
on_dot(void *ud, hscope_id target, const hscope_id *path, uint64_t len, int32_t cat)
{
    (void)target;
    pw *x = ud;
    if (!len)
        return;
    uint64_t n = hscope__heap_object_count(x->h);
    const char *root = hscope__root_name(x->h, cat);
    uint64_t rslot = n + (uint64_t)(cat + 1); /* the super-root first */
    if (!x->seen[rslot]) {
        x->seen[rslot] = 1;
        hscope__out_puts(x->o, "  \"root:");
        dot_escape(x->o, root);
        hscope__out_puts(x->o, "\" [shape=ellipse, style=filled, fillcolor=\"#cfe2f3\"];\n");
    }
    for (uint64_t k = 0; k < len; k++)
        if (!(x->seen[path[k]] & 1)) {
            x->seen[path[k]] |= 1;
            dot_node(x, path[k]);
        }
    int r = edge_add(&x->edges, 1ull << 62 | (uint64_t)(uint32_t)(cat + 1) << 32 | path[0]);
    if (r < 0)
        x->failed = 1;
    if (r > 0) {
        hscope__out_puts(x->o, "  \"root:");
        dot_escape(x->o, root);
        hscope__out_printf(x->o, "\" -> n%u;\n", path[0]);
    }
    for (uint64_t k = 1; k < len; k++)
        dot_edge(x, path[k - 1], path[k]);
}

/* ------------------------------------------------------------------ */

static hscope_status
each_target(pw *x, const hscope_id *ids, uint64_t n, hscope__path_fn fn, hscope_error *err)
{
    hscope_status st = HSCOPE_OK;
    for (uint64_t i = 0; i < n && st == HSCOPE_OK; i++) {
        x->nth = 0;
        st = hscope__paths_each(x->p, ids[i], x->ro->max_paths, fn, x, err);
    }
    if (st == HSCOPE_OK && x->failed)
        st = hscope__nomem(err, x->edges.cap * 16);
    return st;
}

hscope_status
hscope__paths_write(const hscope_paths_t *p, const hscope_id *ids, uint64_t n,
                    const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    hscope_heap_t *h = hscope__paths_heap(p);
    uint64_t nobj = hscope__heap_object_count(h);
    for (uint64_t i = 0; i < n; i++)
        if (ids[i] >= nobj)
            return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "ids[%llu] = %u is not an object id",
                                (unsigned long long)i, ids[i]);
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    pw x = { p, h, ro, o, &w, 0, NULL, { &h->mem, NULL, 0, 0 }, 0 };
    hscope__warnings ws;
    ws.n = 0;
    hscope__warn_heap(&ws, hscope__ropts_dump_name(ro, 0), h);
    hscope_status st;
    if (ro->format == HSCOPE_FORMAT_JSON) {
        hscope__json_begin_doc(&w, "paths");
        hscope__json_dumps_of_heap(&w, ro, h, 0);
        hscope__json_key(&w, "class_edges");
        hscope__json_bool(&w, hscope__paths_class_edges(p));
        hscope__json_ku64(&w, "max_paths", ro->max_paths);
        hscope__json_key(&w, "paths");
        hscope__json_arr(&w);
        if ((st = each_target(&x, ids, n, on_json, err)) == HSCOPE_OK) {
            hscope__json_end_arr(&w);
            hscope__json_warnings(&w, &ws);
            hscope__json_end_obj(&w);
            hscope__json_done(&w);
        }
    } else if (ro->format == HSCOPE_FORMAT_DOT) {
        x.seen = hscope__calloc(&h->mem, (size_t)nobj + hscope__heap_root_category_count(h) + 1, 1);
        if (!x.seen)
            return hscope__nomem(err, (size_t)nobj);
        for (uint64_t i = 0; i < n; i++)
            x.seen[ids[i]] |= 2; /* every given object is highlighted */
        hscope__out_puts(o, "digraph heapscope {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n");
        if ((st = each_target(&x, ids, n, on_dot, err)) == HSCOPE_OK)
            hscope__out_puts(o, "}\n");
        hscope__free(&h->mem, x.seen);
        hscope__free(&h->mem, x.edges.k);
    } else {
        hscope__text_warnings(o, ro, &ws);
        st = each_target(&x, ids, n, on_text, err);
    }
    return st;
}
