/*
 * w_retained.c - the objects that keep the most memory alive, largest
 * retained size first (kind "retained"): text and JSON.
 */
#include <stdio.h>
#include <string.h>

#include "../model/model.h"
#include "../analysis/dominators.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "rowcur.h"
#include "table.h"
#include "writers.h"
#include "../analysis/retained.h"

typedef struct rows {
    const hscope_heap_t *h;
    const hscope_id *ids;
    uint64_t n;
    char buf[512];      /* the key of the row being sized */
} rows;

/* Rows follow retained size, not memory: the columns a row reads are
 * asked for this many rows ahead, so that their cache misses overlap. */
#define AHEAD 16

static const char *
obj_key(const void *ctx, uint64_t i)
{
    rows *r = (rows *)ctx; /* the caller's own, writable context */
    if (i + AHEAD < r->n)
        hscope__heap_prefetch(r->h, r->ids[i + AHEAD], 0);
    hscope__obj_text(r->h, r->ids[i], r->buf, sizeof(r->buf));
    return r->buf;
}

static void
retained_text(const hscope_domtree_t *t, const hscope_id *ids, uint64_t n,
              const hscope__ropts *ro, hscope__out *o)
{
    const hscope_heap_t *h = hscope__domtree_heap(t);
    uint64_t rn, rm, un, um;
    char a[32], b[32], c[64];
    hscope__domtree_totals(t, &rn, &rm, &un, &um);
    const char *name = hscope__ropts_dump_name(ro, 0);
    hscope__fmt_bytes((double)rm, a, sizeof(a));
    hscope__fmt_bytes((double)um, b, sizeof(b));
    hscope__fmt_plural(un, "object", "objects", c, sizeof(c));
    hscope__out_printf(o, "%s%sreachable %s, unreachable %s (%s)\n\n", name ? name : "",
                       name ? ": " : "", a, b, c);
    rows ctx = { h, ids, n, "" };
    hscope__table tb;
    hscope__table_init_fn(&tb, o, ro, "object", obj_key, &ctx, n);
    hscope__table_lead(&tb, "address", 16);
    hscope__table_col(&tb, "retained", 10);
    hscope__table_col(&tb, "objects", 10);
    hscope__table_col(&tb, "self", 10);
    hscope__table_header(&tb);
    for (uint64_t i = 0; i < n; i++) {
        char ad[24], lb[512], r[32], k[32], s[32];
        if (i + AHEAD < n) {
            hscope__heap_prefetch(h, ids[i + AHEAD], 0);
            hscope__domtree_prefetch(t, ids[i + AHEAD]);
        }
        *hscope__put_addr(ad, hscope__heap_object_address(h, ids[i])) = 0;
        hscope__obj_text(h, ids[i], lb, sizeof(lb));
        hscope__fmt_bytes((double)hscope__domtree_retained(t, ids[i]), r, sizeof(r));
        hscope__fmt_count(hscope__domtree_retained_count(t, ids[i]), k, sizeof(k));
        hscope__fmt_bytes((double)hscope__heap_object_memsize(h, ids[i]), s, sizeof(s));
        const char *leads[1] = { ad }, *cells[3] = { r, k, s };
        hscope__table_row_lead(&tb, leads, lb, cells);
    }
}

static void
retained_json(const hscope_domtree_t *t, const hscope_id *ids, uint64_t n, uint64_t tracer,
              const hscope__ropts *ro, const hscope__warnings *ws, hscope__out *o)
{
    const hscope_heap_t *h = hscope__domtree_heap(t);
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    hscope__json_domtree_head(&w, "retained", t, ro);
    hscope__json_key(&w, "objects");
    hscope__json_arr(&w);
    for (uint64_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            hscope__heap_prefetch(h, ids[i + AHEAD], 0);
            hscope__domtree_prefetch(t, ids[i + AHEAD]);
        }
        hscope__json_obj(&w);
        hscope__json_objref_fields(&w, h, ids[i]);
        /* where it was allocated, as show and suspects say it */
        hscope__json_kstr(&w, "file", hscope__heap_object_file(h, ids[i]));
        hscope__json_ku64(&w, "line", hscope__heap_object_line(h, ids[i]));
        hscope__json_ku64(&w, "memsize", hscope__heap_object_memsize(h, ids[i]));
        hscope__json_kcm(&w, "retained", hscope__domtree_retained_count(t, ids[i]),
                         hscope__domtree_retained(t, ids[i]));
        hscope__json_end_obj(&w);
    }
    hscope__json_end_arr(&w);
    hscope__json_kcm(&w, "excluded_tracer", tracer ? hscope__domtree_retained_count(t, tracer - 1) : 0,
                     tracer ? hscope__domtree_retained(t, tracer - 1) : 0);
    hscope__json_warnings(&w, ws);
    hscope__json_end_obj(&w);
    hscope__json_done(&w);
}

hscope_status
hscope__retained_write(const hscope_domtree_t *t, const hscope__ropts *ro, hscope__out *o,
                       hscope_error *err)
{
    hscope_heap_t *h = hscope__domtree_heap(t);
    uint64_t nobj = hscope__heap_object_count(h);
    uint64_t max = ro->top < nobj ? ro->top : nobj;
    hscope_id *ids = hscope__malloc(&h->mem, (size_t)(max + 2) * sizeof(hscope_id));
    if (!ids)
        return hscope__nomem(err, (size_t)max * sizeof(hscope_id));
    /* Ruby's allocation tracer left out if asked; tracer is its id + 1,
     * else 0 */
    hscope_id tid = ro->flags & HSCOPE_REPORT_SKIP_TRACER ? hscope__domtree_tracer(t)
                                                          : HSCOPE_ID_NONE;
    uint64_t tracer = tid == HSCOPE_ID_NONE ? 0 : (uint64_t)tid + 1;
    uint64_t n = hscope__domtree_top_app(t, ids, max, tid);
    hscope__warnings ws;
    ws.n = 0;
    hscope__warn_heap(&ws, hscope__ropts_dump_name(ro, 0), h);
    if (ro->format == HSCOPE_FORMAT_JSON) {
        retained_json(t, ids, n, tracer, ro, &ws, o);
    } else {
        hscope__text_warnings(o, ro, &ws);
        retained_text(t, ids, n, ro, o);
        if (tracer) {
            hscope__out_putc(o, '\n');
            hscope__text_excluded_tracer(o, hscope__domtree_retained_count(t, tracer - 1),
                                         hscope__domtree_retained(t, tracer - 1));
        }
    }
    hscope__free(&h->mem, ids);
    return HSCOPE_OK;
}
