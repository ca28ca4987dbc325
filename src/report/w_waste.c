/*
 * w_waste.c - writers of a waste analysis: text (totals, the places to
 * change with their fixes, the duplicated values) and JSON (kind
 * "waste").  A value is printed only with HSCOPE_REPORT_VALUES; otherwise
 * as its length and hash, which two reports share for the same value.
 */
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "../core/intern.h"
#include "../analysis/waste.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "table.h"
#include "writers.h"

const char *
hscope__waste_kind_name(int kind)
{
    switch (kind) {
    case HSCOPE_WASTE_DUPLICATE: return "duplicate";
    case HSCOPE_WASTE_EMPTY: return "empty";
    default: return "oversized";
    }
}

const char *
hscope__waste_type_name(int type)
{
    return type == HSCOPE_TYPE_ARRAY ? "ARRAY" : type == HSCOPE_TYPE_HASH ? "HASH" : "STRING";
}

static uint64_t
top_of(const hscope__ropts *ro, uint64_t n)
{
    return ro->top < n ? ro->top : n;
}

static const char *
key_text(const hscope_waste_t *w, uint64_t id)
{
    return hscope__intern_str(&w->keys, (uint32_t)id);
}

void
hscope__waste_short_value(uint64_t length, uint64_t hash, char *buf, size_t n)
{
    char len[32];
    hscope__fmt_bytes((double)length, len, sizeof(len));
    snprintf(buf, n, "%s #%08llx", len, (unsigned long long)(hash >> 32));
}

/* The value as text people read: its bytes quoted and escaped (at most
 * about 200 of them) with HSCOPE_REPORT_VALUES, else its length and the
 * first 8 hex digits of its hash. */
static void
value_text(const hscope_waste_t *w, const hscope__wval *v, uint32_t flags, char *buf, size_t n)
{
    char len[32];
    hscope__fmt_bytes((double)v->length, len, sizeof(len));
    if (!(flags & HSCOPE_REPORT_VALUES) || v->redacted) { /* a redacted dump has no bytes */
        hscope__waste_short_value(v->length, v->hash, buf, n);
        return;
    }
    const unsigned char *p = (const unsigned char *)w->varena + v->data;
    size_t o = 0, i = 0;
    buf[o++] = '"';
    while (i < v->len && o + 16 < n && o < 200) {
        uint32_t cp;
        int l = hscope__utf8_seq(p + i, (size_t)(v->len - i), &cp);
        if (l > 1 || (l == 1 && p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\')) {
            memcpy(buf + o, p + i, (size_t)l);
            o += (size_t)l;
            i += (size_t)l;
            continue;
        }
        const char *esc = p[i] == '"' ? "\\\"" : p[i] == '\\' ? "\\\\" : p[i] == '\n' ? "\\n"
                        : p[i] == '\t' ? "\\t" : p[i] == '\r' ? "\\r" : NULL;
        o += esc ? (size_t)snprintf(buf + o, n - o, "%s", esc)
                 : (size_t)snprintf(buf + o, n - o, "\\x%02x", p[i]);
        i++;
    }
    snprintf(buf + o, n - o, "%s\" (%s)", i < v->len ? "..." : "", len);
}

/* ------------------------------------------------------------------ */
/* text                                                                */
/* ------------------------------------------------------------------ */

static void wrap(hscope__out *o, const hscope__ropts *ro, const char *s, size_t first);

static void
text_totals(const hscope_waste_t *w, const hscope__ropts *ro, hscope__out *o)
{
    const hscope_waste_totals *t = &w->tot;
    char a[32], b[32], c[32], d[64], e[32];
    hscope__fmt_bytes((double)t->saving, a, sizeof(a));
    hscope__fmt_bytes((double)t->memsize, b, sizeof(b));
    hscope__fmt_plural(t->objects, "object", "objects", d, sizeof(d));
    const char *name = hscope__ropts_dump_name(ro, 0);
    hscope__out_printf(o, "Waste%s%s: %s recoverable, %.1f%% of %s (%s)\n", name ? " in " : "",
                       name ? name : "", a, hscope__pct(t->saving, t->memsize), b, d);
    hscope__fmt_bytes((double)t->duplicate_saving, a, sizeof(a));
    hscope__fmt_count(t->duplicate_count, c, sizeof(c));
    hscope__fmt_plural(t->duplicate_values, "value", "values", d, sizeof(d));
    hscope__fmt_count(t->duplicate_copies, e, sizeof(e));
    hscope__out_printf(o, "  duplicate strings  %10s  %s %s would go (%s copies of %s)\n", a, c,
                       t->duplicate_count == 1 ? "copy" : "copies", e, d);
    hscope__fmt_bytes((double)t->empty_saving, a, sizeof(a));
    hscope__fmt_plural(t->empty_count, "object", "objects", d, sizeof(d));
    hscope__out_printf(o, "  empty collections  %10s  %s\n", a, d);
    hscope__fmt_bytes((double)t->oversized_saving, a, sizeof(a));
    hscope__fmt_plural(t->oversized_count, "object", "objects", d, sizeof(d));
    hscope__out_printf(o, "  oversized buffers  %10s  %s\n", a, d);
    uint64_t nc = t->shared_count + t->no_value_count + t->truncated_count + t->collision_count;
    if (nc) {
        hscope__fmt_count(t->shared_count, a, sizeof(a));
        hscope__fmt_count(t->no_value_count, b, sizeof(b));
        hscope__fmt_count(t->truncated_count + t->collision_count, c, sizeof(c));
        char line[512];
        snprintf(line, sizeof(line), "strings not compared: %s sharing a buffer, %s without a "
                 "value in the dump, %s with a cut value or a hash collision", a, b, c);
        wrap(o, ro, line, 2);
    }
    if (t->excluded) {
        hscope__fmt_plural(t->excluded, "object", "objects", d, sizeof(d));
        hscope__out_printf(o, "  left out: %s allocated by the dumper itself\n", d);
    }
    if (w->tracer) {
        hscope__out_puts(o, "  ");
        hscope__text_excluded_tracer(o, w->tracer, w->tracer_mem);
    }
}

static const char *
row_key(const void *ctx, uint64_t i)
{
    const hscope_waste_t *w = ctx;
    return key_text(w, w->rows[i].key);
}

/* Display columns of the next word of s (up to a space or the end) and
 * its length in bytes. */
static size_t
word_at(const char *s, size_t *bytes)
{
    size_t n = strcspn(s, " ");
    *bytes = n;
    return hscope__utf8_columns(s, n);
}

/* Text indented by `first`, wrapped at spaces to the width (continuation
 * lines indented 2 more); a word longer than a line is split. */
static void
wrap(hscope__out *o, const hscope__ropts *ro, const char *s, size_t first)
{
    size_t width = ro->width, indent = first, col = 0;
    hscope__out_fill(o, ' ', indent);
    while (*s) {
        size_t nb, wc = word_at(s, &nb), room = width > indent + 8 ? width - indent : 8;
        if (col && col + 1 + wc > room) {
            hscope__out_putc(o, '\n');
            indent = first + 2;
            hscope__out_fill(o, ' ', indent);
            room = width > indent + 8 ? width - indent : 8;
            col = 0;
        } else if (col) {
            hscope__out_putc(o, ' ');
            col++;
        }
        while (wc > room - col) { /* split a word longer than the line */
            size_t cols = room - col;
            size_t take = hscope__utf8_skip_columns(s, nb, cols);
            hscope__out_write(o, s, take);
            hscope__out_putc(o, '\n');
            indent = first + 2;
            hscope__out_fill(o, ' ', indent);
            room = width > indent + 8 ? width - indent : 8;
            s += take;
            nb -= take;
            wc -= cols;
            col = 0;
        }
        hscope__out_write(o, s, nb);
        col += wc;
        s += nb;
        while (*s == ' ')
            s++;
    }
    hscope__out_putc(o, '\n');
}

static void
detail(hscope__out *o, const hscope__ropts *ro, const char *s)
{
    wrap(o, ro, s, 6);
}

static void
row_details(const hscope_waste_t *w, const hscope__ropts *ro, hscope__out *o,
            const hscope__wrow *r)
{
    char line[1024], a[32], b[32], v[320];
    if (r->kind == HSCOPE_WASTE_DUPLICATE) {
        hscope__fmt_count(r->copies, a, sizeof(a));
        char fz[32], fs[32];
        hscope__fmt_count(r->frozen, fz, sizeof(fz));
        hscope__fmt_count(r->fstring, fs, sizeof(fs));
        size_t n = (size_t)snprintf(line, sizeof(line), "%s %s of %llu %s (%s frozen, %s "
                                    "fstrings):", a, r->copies == 1 ? "copy" : "copies",
                                    (unsigned long long)r->values,
                                    r->values == 1 ? "value" : "values", fz, fs);
        for (uint64_t j = 0; j < r->values && j < 3 && n < sizeof(line); j++) {
            const hscope__wref *x = &w->vrefs[r->vfirst + j];
            value_text(w, &w->vals[x->idx], ro->flags, v, sizeof(v));
            hscope__fmt_count(x->copies, a, sizeof(a));
            n += (size_t)snprintf(line + n, sizeof(line) - n, "%s %s x%s", j ? "," : "", v, a);
        }
        if (r->values > 3 && n < sizeof(line))
            snprintf(line + n, sizeof(line) - n, ", ...");
        detail(o, ro, line);
    } else if (r->kind == HSCOPE_WASTE_OVERSIZED) {
        hscope__fmt_bytes((double)r->buffer, a, sizeof(a));
        hscope__fmt_bytes((double)r->used, b, sizeof(b));
        snprintf(line, sizeof(line), "buffers of %s for %s of content", a, b);
        detail(o, ro, line);
    }
    snprintf(line, sizeof(line), "fix: %s", hscope__intern_str(&w->fixes, r->fix));
    detail(o, ro, line);
}

static void
text_rows(const hscope_waste_t *w, const hscope__ropts *ro, hscope__out *o)
{
    uint64_t n = top_of(ro, w->nrows);
    if (!w->nrows) {
        hscope__out_puts(o, "\nNo waste found.\n");
        return;
    }
    hscope__out_printf(o, "\nPlaces to change, biggest saving first (by %s):\n",
                       w->by == HSCOPE_WASTE_BY_GEM ? "gem" : "file:line");
    hscope__table tb;
    hscope__table_init_fn(&tb, o, ro, w->by == HSCOPE_WASTE_BY_GEM ? "gem" : "site", row_key, w,
                          n);
    hscope__table_col(&tb, "finding", 16);
    hscope__table_col(&tb, "count", 10);
    hscope__table_col(&tb, "saving", 10);
    hscope__table_header(&tb);
    for (uint64_t i = 0; i < n; i++) {
        const hscope__wrow *r = &w->rows[i];
        char f[32], c[32], s[32];
        snprintf(f, sizeof(f), "%s %s", hscope__waste_kind_name(r->kind),
                 hscope__waste_type_name(r->type));
        hscope__fmt_count(r->count, c, sizeof(c));
        hscope__fmt_bytes((double)r->saving, s, sizeof(s));
        const char *cells[] = { f, c, s };
        hscope__table_row(&tb, key_text(w, r->key), cells);
        row_details(w, ro, o, r);
    }
    if (w->nrows > n) {
        char g[64];
        hscope__fmt_plural(w->nrows - n, "more place", "more places", g, sizeof(g));
        hscope__out_printf(o, "  %s %s\n", tb.ascii ? "..." : "\xe2\x80\xa6", g);
    }
}

typedef struct vctx {
    const hscope_waste_t *w;
    uint32_t flags;
    char buf[320];
} vctx;

static const char *
val_key(const void *ctx, uint64_t i)
{
    vctx *c = (vctx *)ctx;
    value_text(c->w, &c->w->vals[i], c->flags, c->buf, sizeof(c->buf));
    return c->buf;
}

static void
text_values(const hscope_waste_t *w, const hscope__ropts *ro, hscope__out *o)
{
    uint64_t n = top_of(ro, w->nvals);
    if (!n)
        return;
    hscope__out_puts(o, "\nDuplicated values, biggest saving first:\n");
    vctx c = { .w = w, .flags = ro->flags };
    hscope__table tb;
    hscope__table_init_fn(&tb, o, ro, "value", val_key, &c, n);
    hscope__table_col(&tb, "copies", 10);
    hscope__table_col(&tb, "saving", 10);
    hscope__table_col(&tb, "frozen", 8);
    hscope__table_header(&tb);
    for (uint64_t i = 0; i < n; i++) {
        const hscope__wval *v = &w->vals[i];
        char a[32], b[32], f[32], line[1024];
        hscope__fmt_count(v->copies, a, sizeof(a));
        hscope__fmt_bytes((double)v->saving, b, sizeof(b));
        hscope__fmt_count(v->frozen, f, sizeof(f));
        const char *cells[] = { a, b, f };
        hscope__table_row(&tb, val_key(&c, i), cells);
        size_t len = 0;
        for (uint64_t j = 0; j < v->nsites && j < 3 && len < sizeof(line); j++) {
            const hscope__wref *x = &w->srefs[v->sfirst + j];
            hscope__fmt_count(x->copies, a, sizeof(a));
            len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s x%s", j ? ", " : "",
                                    key_text(w, x->idx), a);
        }
        if (v->nsites > 3 && len < sizeof(line))
            snprintf(line + len, sizeof(line) - len, ", ... (%llu sites)",
                     (unsigned long long)v->nsites);
        detail(o, ro, line);
    }
    if (w->nvals > n) {
        char g[64];
        hscope__fmt_plural(w->nvals - n, "more value", "more values", g, sizeof(g));
        hscope__out_printf(o, "  %s %s\n", tb.ascii ? "..." : "\xe2\x80\xa6", g);
    }
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

static void
json_value_id(hscope__json *j, const hscope_waste_t *w, const hscope__wval *v, uint32_t flags)
{
    char h[24];
    snprintf(h, sizeof(h), "%016llx", (unsigned long long)v->hash);
    hscope__json_ku64(j, "length", v->length);
    hscope__json_kstr(j, "hash", h);
    if ((flags & HSCOPE_REPORT_VALUES) && !v->redacted) {
        hscope__json_key(j, "value");
        hscope__json_strn(j, w->varena + v->data, (size_t)v->len);
    }
}

static void
json_row(hscope__json *j, const hscope_waste_t *w, const hscope__ropts *ro,
         const hscope__wrow *r)
{
    hscope__json_obj(j);
    hscope__json_kstr(j, "key", key_text(w, r->key));
    hscope__json_kstr(j, "finding", hscope__waste_kind_name(r->kind));
    hscope__json_kstr(j, "type", hscope__waste_type_name(r->type));
    hscope__json_ku64(j, "count", r->count);
    hscope__json_ku64(j, "memsize", r->saving);
    hscope__json_ku64(j, "saving", r->saving);
    hscope__json_ku64(j, "objects", r->kind == HSCOPE_WASTE_DUPLICATE ? r->copies : r->count);
    hscope__json_ku64(j, "objects_memsize", r->memsize);
    if (r->kind == HSCOPE_WASTE_DUPLICATE) {
        hscope__json_ku64(j, "copies", r->copies);
        hscope__json_ku64(j, "frozen", r->frozen);
        hscope__json_ku64(j, "fstring", r->fstring);
        hscope__json_ku64(j, "chilled", r->chilled);
        hscope__json_ku64(j, "value_count", r->values);
        hscope__json_key(j, "values");
        hscope__json_arr(j);
        for (uint64_t k = 0; k < top_of(ro, r->values); k++) {
            const hscope__wref *x = &w->vrefs[r->vfirst + k];
            hscope__json_obj(j);
            json_value_id(j, w, &w->vals[x->idx], ro->flags);
            hscope__json_ku64(j, "count", x->copies);
            hscope__json_ku64(j, "memsize", x->saving);
            hscope__json_ku64(j, "copies", x->copies);
            hscope__json_ku64(j, "saving", x->saving);
            hscope__json_end_obj(j);
        }
        hscope__json_end_arr(j);
    } else if (r->kind == HSCOPE_WASTE_OVERSIZED) {
        hscope__json_ku64(j, "buffer", r->buffer);
        hscope__json_ku64(j, "used", r->used);
    }
    hscope__json_kstr(j, "fix", hscope__intern_str(&w->fixes, r->fix));
    hscope__json_kstr(j, "fix_kind", hscope__waste_fix_kind_name(r->fix_kind));
    hscope__json_end_obj(j);
}

static void
json_value(hscope__json *j, const hscope_waste_t *w, const hscope__ropts *ro,
           const hscope__wval *v)
{
    hscope__json_obj(j);
    json_value_id(j, w, v, ro->flags);
    hscope__json_ku64(j, "count", v->copies);
    hscope__json_ku64(j, "memsize", v->saving);
    hscope__json_ku64(j, "copies", v->copies);
    hscope__json_ku64(j, "saving", v->saving);
    hscope__json_ku64(j, "objects_memsize", v->memsize);
    hscope__json_ku64(j, "frozen", v->frozen);
    hscope__json_ku64(j, "fstring", v->fstring);
    hscope__json_ku64(j, "site_count", v->nsites);
    hscope__json_key(j, "sites");
    hscope__json_arr(j);
    for (uint64_t k = 0; k < top_of(ro, v->nsites); k++) {
        const hscope__wref *x = &w->srefs[v->sfirst + k];
        hscope__json_obj(j);
        hscope__json_kstr(j, "key", key_text(w, x->idx));
        hscope__json_ku64(j, "count", x->copies);
        hscope__json_ku64(j, "memsize", x->saving);
        hscope__json_ku64(j, "copies", x->copies);
        hscope__json_ku64(j, "saving", x->saving);
        hscope__json_end_obj(j);
    }
    hscope__json_end_arr(j);
    hscope__json_end_obj(j);
}

/* The warnings of a result, the same in text and JSON. */
static void
gather_warnings(const hscope_waste_t *w, const hscope__ropts *ro, hscope__warnings *ws)
{
    const hscope_waste_totals *t = &w->tot;
    ws->n = 0;
    hscope__warn_damage(ws, hscope__ropts_dump_name(ro, 0), &w->stats, w->skipped);
    if (t->warnings & HSCOPE_WASTE_WARN_NO_TRACING)
        hscope__warn(ws, "no_tracing", "no finding has an allocation site: trace "
                     "allocations (ObjectSpace.trace_object_allocations_start) to see "
                     "where they come from");
    if (t->warnings & HSCOPE_WASTE_WARN_NO_VALUES)
        hscope__warn(ws, "no_values", "no string has a value: duplicate strings could "
                     "not be searched (a heap loaded without values, or a redacted dump)");
    if (t->warnings & HSCOPE_WASTE_WARN_COLLISIONS)
        hscope__warn(ws, "hash_collisions", "%llu strings have the hash and length of "
                     "another value but other bytes: they are not grouped",
                     (unsigned long long)t->collision_count);
    if (t->warnings & HSCOPE_WASTE_WARN_CHANGED)
        hscope__warn(ws, "dump_changed", "the dump changed while it was read: some "
                     "first copies could not be read back and are not counted");
}

/* An empty or oversized finding's total: count and memsize (the saving,
 * as since 0.2), and saving under its own name. */
static void
json_finding(hscope__json *j, const char *name, uint64_t count, uint64_t saving)
{
    hscope__json_key(j, name);
    hscope__json_obj(j);
    hscope__json_ku64(j, "count", count);
    hscope__json_ku64(j, "memsize", saving);
    hscope__json_ku64(j, "saving", saving);
    hscope__json_end_obj(j);
}

static void
waste_json(const hscope_waste_t *w, const hscope__ropts *ro, const hscope__warnings *ws,
           hscope__out *o)
{
    const hscope_waste_totals *t = &w->tot;
    hscope__json j;
    hscope__json_init(&j, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    hscope__json_begin_doc(&j, "waste");
    hscope__json_dumps_of_heap(&j, ro, NULL, t->dump_objects);
    hscope__json_kstr(&j, "by", w->by == HSCOPE_WASTE_BY_GEM ? "gem" : "file:line");
    hscope__json_kcm(&j, "total", t->objects, t->memsize);
    hscope__json_key(&j, "recoverable");
    hscope__json_obj(&j);
    hscope__json_ku64(&j, "count", t->count);
    hscope__json_ku64(&j, "memsize", t->saving);
    hscope__json_ku64(&j, "saving", t->saving);
    hscope__json_key(&j, "share");
    hscope__json_f64(&j, t->memsize ? (double)t->saving / (double)t->memsize : 0.0, 6);
    hscope__json_end_obj(&j);
    hscope__json_key(&j, "findings");
    hscope__json_obj(&j);
    hscope__json_key(&j, "duplicate");
    hscope__json_obj(&j);
    hscope__json_ku64(&j, "count", t->duplicate_count);
    hscope__json_ku64(&j, "memsize", t->duplicate_saving);
    hscope__json_ku64(&j, "saving", t->duplicate_saving);
    hscope__json_ku64(&j, "copies", t->duplicate_copies);
    hscope__json_ku64(&j, "value_count", t->duplicate_values);
    hscope__json_end_obj(&j);
    json_finding(&j, "empty", t->empty_count, t->empty_saving);
    json_finding(&j, "oversized", t->oversized_count, t->oversized_saving);
    hscope__json_end_obj(&j);
    hscope__json_key(&j, "not_compared");
    hscope__json_obj(&j);
    hscope__json_kcm(&j, "shared", t->shared_count, t->shared_memsize);
    hscope__json_kcm(&j, "no_value", t->no_value_count, t->no_value_memsize);
    hscope__json_kcm(&j, "truncated", t->truncated_count, t->truncated_memsize);
    hscope__json_ku64(&j, "collisions", t->collision_count);
    hscope__json_end_obj(&j);
    hscope__json_ku64(&j, "excluded_dumper_objects", t->excluded);
    hscope__json_kcm(&j, "excluded_tracer", w->tracer, w->tracer_mem);
    hscope__json_ku64(&j, "group_count", w->nrows);
    hscope__json_key(&j, "groups");
    hscope__json_arr(&j);
    for (uint64_t i = 0; i < top_of(ro, w->nrows); i++)
        json_row(&j, w, ro, &w->rows[i]);
    hscope__json_end_arr(&j);
    hscope__json_ku64(&j, "value_count", w->nvals);
    hscope__json_key(&j, "values");
    hscope__json_arr(&j);
    for (uint64_t i = 0; i < top_of(ro, w->nvals); i++)
        json_value(&j, w, ro, &w->vals[i]);
    hscope__json_end_arr(&j);
    hscope__json_warnings(&j, ws);
    hscope__json_end_obj(&j);
    hscope__json_done(&j);
}

void
hscope__waste_write(const hscope_waste_t *w, const hscope__ropts *ro, hscope__out *o)
{
    hscope__warnings ws;
    gather_warnings(w, ro, &ws);
    if (ro->format == HSCOPE_FORMAT_JSON) {
        waste_json(w, ro, &ws, o);
        return;
    }
    hscope__text_warnings(o, ro, &ws);
    text_totals(w, ro, o);
    text_rows(w, ro, o);
    text_values(w, ro, o);
}
