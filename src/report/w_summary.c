/*
 * w_summary.c - what a heap holds (kind "summary"): text and JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "../analysis/tally.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "table.h"
#include "writers.h"

typedef struct summary {
    hscope_heap_t *h;
    hscope_load_stats s;
    hscope_tally_t *by_type, *by_class;
    hscope__warnings ws;
} summary;

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Distinct addresses a root category references (targets and dangling). */
static uint64_t
root_unique(hscope_heap_t *h, uint32_t c)
{
    const hscope_id *t;
    const uint64_t *d;
    uint64_t n, nd;
    hscope__heap_root_targets(h, c, &t, &n, NULL);
    hscope__heap_root_dangling(h, c, &d, &nd);
    if (n + nd == 0)
        return 0;
    hscope__mem *m = &h->mem;
    uint64_t *a = hscope__malloc(m, (size_t)(n + nd) * sizeof(uint64_t));
    if (!a)
        return 0;
    for (uint64_t i = 0; i < n; i++)
        a[i] = hscope__heap_object_address(h, t[i]);
    memcpy(a + n, d, (size_t)nd * sizeof(uint64_t));
    qsort(a, (size_t)(n + nd), sizeof(uint64_t), cmp_u64);
    uint64_t u = 1;
    for (uint64_t i = 1; i < n + nd; i++)
        u += a[i] != a[i - 1];
    hscope__free(m, a);
    return u;
}

static double
bytes_per_object(const hscope_load_stats *s)
{
    return s->objects ? (double)(s->model_bytes - 4 * s->references) / (double)s->objects : 0.0;
}

static double
mb_per_s(const hscope_load_stats *s)
{
    double sec = (double)s->load_ns / 1e9;
    return sec > 0 ? (double)s->bytes / 1048576.0 / sec : 0.0;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

static void
json_roots(hscope__json *w, hscope_heap_t *h)
{
    hscope__json_key(w, "roots");
    hscope__json_arr(w);
    for (uint32_t c = 0; c < hscope__heap_root_category_count(h); c++) {
        const hscope_id *t;
        uint64_t n, nd;
        hscope__heap_root_targets(h, c, &t, &n, &nd);
        hscope__json_obj(w);
        hscope__json_kstr(w, "root", hscope__heap_root_category_name(h, c));
        hscope__json_ku64(w, "records", hscope__heap_root_category_records(h, c));
        hscope__json_ku64(w, "references", n + nd);
        hscope__json_ku64(w, "unique", root_unique(h, c));
        hscope__json_ku64(w, "dangling", nd);
        hscope__json_end_obj(w);
    }
    hscope__json_end_arr(w);
}

static void
json_skipped(hscope__json *w, const summary *sm)
{
    hscope__json_ku64(w, "skipped_lines", sm->s.skipped_lines);
    hscope__json_key(w, "skipped");
    hscope__json_obj(w);
    for (int32_t r = 0; r < HSCOPE_SKIP__COUNT; r++) {
        uint64_t k = hscope__heap_skipped(sm->h, r);
        if (k)
            hscope__json_ku64(w, hscope__skip_reason_name(r), k);
    }
    hscope__json_end_obj(w);
    hscope__json_key(w, "skipped_examples");
    hscope__json_arr(w);
    int32_t reason;
    uint64_t ln;
    for (uint32_t i = 0; (ln = hscope__heap_skipped_line(sm->h, i, &reason)) != 0; i++) {
        hscope__json_obj(w);
        hscope__json_ku64(w, "line", ln);
        hscope__json_kstr(w, "reason", hscope__skip_reason_name(reason));
        hscope__json_end_obj(w);
    }
    hscope__json_end_arr(w);
}

/* The word for an unknown field's kind (hscope__heap_unknown_get()). */
static const char *
unknown_kind(int32_t kind)
{
    return kind == HSCOPE_UNKNOWN_KEY ? "key" : kind == HSCOPE_UNKNOWN_FLAG ? "flag"
         : kind == HSCOPE_UNKNOWN_TYPE ? "type" : "more";
}

/* Fields a newer Ruby wrote: [{"kind", "name", "count"}] */
static void
json_unknown(hscope__json *w, hscope_heap_t *h)
{
    hscope__json_key(w, "unknown");
    hscope__json_arr(w);
    for (uint32_t i = 0; i < hscope__heap_unknown_count(h); i++) {
        int32_t kind;
        const char *name;
        uint64_t count;
        hscope__heap_unknown_get(h, i, &kind, &name, &count);
        hscope__json_obj(w);
        hscope__json_kstr(w, "kind", unknown_kind(kind));
        hscope__json_kstr(w, "name", name);
        hscope__json_ku64(w, "count", count);
        hscope__json_end_obj(w);
    }
    hscope__json_end_arr(w);
}

static void
json_groups(hscope__json *w, const char *k, const hscope_tally_t *t)
{
    hscope__json_key(w, k);
    hscope__json_obj(w);
    hscope__json_kstr(w, "by", hscope__tally_by(t));
    hscope__json_groups_of_tally(w, t, 0);
    hscope__json_end_obj(w);
}

static void
json_load(hscope__json *w, const hscope_load_stats *s)
{
    hscope__json_key(w, "load");
    hscope__json_obj(w);
    hscope__json_key(w, "seconds");
    hscope__json_f64(w, (double)s->load_ns / 1e9, 4);
    hscope__json_key(w, "mb_per_s");
    hscope__json_f64(w, mb_per_s(s), 1);
    hscope__json_ku64(w, "model_bytes", s->model_bytes);
    hscope__json_ku64(w, "index_bytes", s->index_bytes);
    hscope__json_key(w, "bytes_per_object");
    hscope__json_f64(w, bytes_per_object(s), 2);
    hscope__json_key(w, "from_index");
    hscope__json_bool(w, s->from_index != 0);
    hscope__json_end_obj(w);
}

static void
summary_json(const summary *sm, const hscope__ropts *ro, hscope__out *o)
{
    const hscope_load_stats *s = &sm->s;
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    hscope__json_begin_doc(&w, "summary");
    hscope__json_key(&w, "dumps");
    hscope__json_arr(&w);
    hscope__json_obj(&w);
    hscope__json_kstr(&w, "path", hscope__ropts_dump_name(ro, 0));
    hscope__json_ku64(&w, "objects", s->objects);
    hscope__json_key(&w, "gzip");
    hscope__json_bool(&w, s->gzip != 0);
    hscope__json_ku64(&w, "input_bytes", s->input_bytes);
    hscope__json_ku64(&w, "bytes", s->bytes);
    hscope__json_ku64(&w, "lines", s->lines);
    hscope__json_end_obj(&w);
    hscope__json_end_arr(&w);
    hscope__json_kcm(&w, "total", s->objects, s->total_memsize);
    hscope__json_ku64(&w, "references", s->references);
    hscope__json_ku64(&w, "shapes", s->shapes);
    hscope__json_ku64(&w, "free_slots", s->free_slots);
    json_roots(&w, sm->h);
    hscope__json_key(&w, "dangling");
    hscope__json_obj(&w);
    hscope__json_ku64(&w, "references", s->dangling_references);
    hscope__json_ku64(&w, "addresses", s->dangling_addresses);
    hscope__json_end_obj(&w);
    hscope__json_ku64(&w, "duplicate_addresses", s->duplicate_addresses);
    hscope__json_ku64(&w, "unknown_keys", s->unknown_keys);
    hscope__json_ku64(&w, "unknown_types", s->unknown_types);
    json_unknown(&w, sm->h);
    hscope__json_ku64(&w, "object_ids", s->object_ids);
    hscope__json_key(&w, "truncated");
    hscope__json_bool(&w, s->truncated != 0);
    json_skipped(&w, sm);
    json_groups(&w, "by_type", sm->by_type);
    json_groups(&w, "by_class", sm->by_class);
    json_load(&w, s);
    hscope__json_warnings(&w, &sm->ws);
    hscope__json_end_obj(&w);
    hscope__json_done(&w);
}

/* ------------------------------------------------------------------ */
/* Text                                                                */
/* ------------------------------------------------------------------ */

static void
text_roots(hscope__out *o, hscope_heap_t *h)
{
    uint32_t nc = hscope__heap_root_category_count(h);
    hscope__out_puts(o, "  roots        ");
    for (uint32_t i = 0; i < nc; i++) {
        const hscope_id *t;
        uint64_t n, nd;
        char c[32];
        hscope__heap_root_targets(h, i, &t, &n, &nd);
        hscope__fmt_count(n + nd, c, sizeof(c));
        hscope__out_printf(o, " %s %s%s", hscope__heap_root_category_name(h, i), c,
                           i + 1 < nc ? "," : "");
    }
    hscope__out_printf(o, "%s\n", nc ? "" : " none (a since: dump?)");
}

static void
text_skipped(hscope__out *o, const summary *sm)
{
    char c[32];
    hscope__fmt_count(sm->s.skipped_lines, c, sizeof(c));
    hscope__out_printf(o, "  skipped lines %s:", c);
    for (int32_t r = 0; r < HSCOPE_SKIP__COUNT; r++)
        if (hscope__heap_skipped(sm->h, r))
        {
            char k[32];
            hscope__fmt_count(hscope__heap_skipped(sm->h, r), k, sizeof(k));
            hscope__out_printf(o, " %s %s", hscope__skip_reason_name(r), k);
        }
    hscope__out_puts(o, " (lines");
    int32_t reason;
    uint64_t ln;
    for (uint32_t i = 0; i < 5 && (ln = hscope__heap_skipped_line(sm->h, i, &reason)); i++)
        hscope__out_printf(o, "%s %llu", i ? "," : "", (unsigned long long)ln);
    hscope__out_printf(o, "%s)\n", sm->s.skipped_lines > 5 ? ", ..." : "");
}

static void
text_counts(hscope__out *o, const hscope_load_stats *s)
{
    char a[64], b[64], c[64];
    hscope__fmt_count(s->objects, a, sizeof(a));
    hscope__fmt_bytes((double)s->total_memsize, b, sizeof(b));
    hscope__out_printf(o, "  objects       %s, memsize %s\n", a, b);
    hscope__fmt_count(s->references, a, sizeof(a));
    hscope__fmt_count(s->dangling_references, b, sizeof(b));
    hscope__fmt_plural(s->dangling_addresses, "missing address", "missing addresses", c,
                       sizeof(c));
    if (s->dangling_references)
        hscope__out_printf(o, "  references    %s (dangling: %s to %s)\n", a, b, c);
    else
        hscope__out_printf(o, "  references    %s (none dangling)\n", a);
}

static void
summary_text(const summary *sm, const hscope__ropts *ro, hscope__out *o)
{
    const hscope_load_stats *s = &sm->s;
    char a[64], b[64];
    hscope__text_warnings(o, ro, &sm->ws);
    const char *name = hscope__ropts_dump_name(ro, 0);
    hscope__fmt_bytes((double)s->bytes, a, sizeof(a));
    hscope__out_printf(o, "%s: %s%s\n", name ? name : "dump", a, s->gzip ? " (gzip)" : "");
    text_counts(o, s);
    text_roots(o, sm->h);
    if (s->shapes || s->free_slots) {
        hscope__fmt_count(s->shapes, a, sizeof(a));
        hscope__fmt_count(s->free_slots, b, sizeof(b));
        hscope__out_printf(o, "  shapes        %s; free slots %s\n", a, b);
    }
    if (s->skipped_lines)
        text_skipped(o, sm);
    if (hscope__heap_unknown_count(sm->h)) {
        /* a newer Ruby's fields: kept, counted by name */
        hscope__out_puts(o, "  fields this version does not know:");
        for (uint32_t i = 0; i < hscope__heap_unknown_count(sm->h); i++) {
            int32_t kind;
            const char *field;
            uint64_t count;
            hscope__heap_unknown_get(sm->h, i, &kind, &field, &count);
            hscope__fmt_count(count, a, sizeof(a));
            hscope__out_printf(o, "%s %s %s (%s)", i ? "," : "", unknown_kind(kind), field, a);
        }
        hscope__out_putc(o, '\n');
    }
    if (s->duplicate_addresses) {
        hscope__fmt_plural(s->duplicate_addresses, "object repeats", "objects repeat", a,
                           sizeof(a));
        hscope__out_printf(o, "  duplicates    %s an earlier address\n", a);
    }
    hscope__fmt_bytes((double)(s->model_bytes + s->index_bytes), a, sizeof(a));
    hscope__out_printf(o, "  load          %.2f s, %.0f MB/s%s; model %s (%.1f bytes/object + "
                       "4/reference)\n", (double)s->load_ns / 1e9, mb_per_s(s),
                       s->from_index ? " (saved index)" : "", a, bytes_per_object(s));
    hscope__out_putc(o, '\n');
    hscope__tally_text(sm->by_type, ro, o, "by type", s->objects, s->total_memsize, 0);
    hscope__out_putc(o, '\n');
    hscope__tally_text(sm->by_class, ro, o, "top classes", s->objects, s->total_memsize, 0);
}

hscope_status
hscope__summary_write(hscope_heap_t *h, const hscope__ropts *ro, hscope__out *o,
                      hscope_error *err)
{
    summary sm;
    memset(&sm, 0, sizeof(sm));
    sm.h = h;
    hscope__load_stats_init(&sm.s);
    hscope__heap_stats(h, &sm.s);
    hscope__warn_heap(&sm.ws, hscope__ropts_dump_name(ro, 0), h);
    hscope_tally_options to;
    hscope__tally_options_init(&to);
    hscope_status st = hscope__tally_compute(&sm.by_type, h, "type", &to, err);
    to.top = ro->top == HSCOPE_TOP_ALL ? 0 : ro->top;
    if (st == HSCOPE_OK)
        st = hscope__tally_compute(&sm.by_class, h, "class", &to, err);
    if (st == HSCOPE_OK) {
        if (ro->format == HSCOPE_FORMAT_JSON)
            summary_json(&sm, ro, o);
        else
            summary_text(&sm, ro, o);
    }
    hscope__tally_free(sm.by_type);
    hscope__tally_free(sm.by_class);
    return st;
}
