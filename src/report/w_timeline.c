/*
 * w_timeline.c - writers of a timeline: text (a table with a sparkline
 * per group), JSON (kind "timeline"), CSV (one row per group and dump),
 * SVG (the lines chart); and its "grew" view (diff --grew: the value in
 * each dump and the deltas), text and JSON (kind "grew").
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../core/core.h"
#include "../analysis/order.h"
#include "../analysis/timeline.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "svg.h"
#include "table.h"
#include "writers.h"

#define SVG_MAX_LINES 12
#define TREND_MAX 24

static uint64_t
shown_groups(const hscope_timeline_t *tl, const hscope__ropts *ro)
{
    return ro->top < tl->ng ? ro->top : tl->ng;
}

/* Name of dump i (time order): the caller's name for it, else its path. */
static const char *
dump_name(const hscope_timeline_t *tl, const hscope__ropts *ro, uint64_t i)
{
    const char *n = hscope__ropts_dump_name(ro, tl->d[i].given);
    return n ? n : tl->d[i].path;
}

static void
iso_time(double t, char *buf, size_t n)
{
    time_t s = (time_t)floor(t);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A value of the metric: "1.5 MB" or "12,345"; with `sign`, "+" before a
 * positive one; a count that is not whole as "12.5". */
static void
fmt_value(double v, int memsize, int sign, char *buf, size_t n)
{
    size_t o = 0;
    if (memsize) {
        if (sign && v > 0)
            buf[o++] = '+';
        hscope__fmt_bytes(v, buf + o, n - o);
    } else if (fabs(v - floor(v)) < 1e-9 && fabs(v) < 1e15) {
        if (v < 0)
            buf[o++] = '-';
        else if (sign && v > 0)
            buf[o++] = '+';
        hscope__fmt_count((uint64_t)fabs(v), buf + o, n - o);
    } else {
        snprintf(buf, n, sign ? "%+.1f" : "%.1f", v);
    }
}

/* A slope per step or hour: bytes or objects, signed; "0" when flat. */
static void
fmt_slope(double v, int memsize, char *buf, size_t n)
{
    if (memsize)
        fmt_value(v, 1, 1, buf, n);
    else
        snprintf(buf, n, "%+.1f", v);
    if (strcmp(buf, "+0.0") == 0 || strcmp(buf, "0 B") == 0 || strcmp(buf, "-0.0") == 0)
        snprintf(buf, n, "0");
}

/* A trend of at most TREND_MAX characters, scaled to the series' own range. */
static void
sparkline(const hscope_timeline_t *tl, const hscope__tl_group *g, int ascii, char *buf,
          size_t cap)
{
    static const char *const blocks[] = { "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
        "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88" };
    static const char levels[] = "_.-~=+*#";
    size_t n = (size_t)tl->nd, w = n < TREND_MAX ? n : TREND_MAX;
    double vals[TREND_MAX], lo = 0, hi = 0;
    for (size_t k = 0; k < w; k++) {
        size_t a = k * n / w, b = (k + 1) * n / w;
        double s = 0;
        for (size_t i = a; i < b; i++)
            s += (double)hscope__tl_value(tl, g, i);
        vals[k] = b > a ? s / (double)(b - a) : 0;
        if (k == 0 || vals[k] < lo)
            lo = vals[k];
        if (k == 0 || vals[k] > hi)
            hi = vals[k];
    }
    size_t o = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < w; k++) {
        int level = hi > lo ? (int)((vals[k] - lo) / (hi - lo) * 7.0 + 0.5) : 3;
        char one[2] = { levels[level], 0 };
        const char *s = ascii ? one : blocks[level];
        size_t l = strlen(s);
        if (o + l + 1 >= cap)
            break;
        memcpy(buf + o, s, l);
        o += l;
        buf[o] = '\0';
    }
}

/* ------------------------------------------------------------------ */
/* text                                                                */
/* ------------------------------------------------------------------ */

enum { C_FIRST, C_LAST, C_CHANGE, C_STEP, C_HOUR, C_R2, C_N };

/* The cells of group g's row. */
static void
row_cells(const hscope_timeline_t *tl, const hscope__tl_group *g, char cells[C_N][40])
{
    int mem = tl->metric != HSCOPE_METRIC_COUNT;
    uint64_t n = tl->nd;
    double first = (double)hscope__tl_value(tl, g, 0), last = g->last;
    fmt_value(first, mem, 0, cells[C_FIRST], sizeof(cells[0]));
    fmt_value(last, mem, 0, cells[C_LAST], sizeof(cells[0]));
    fmt_value(last - first, mem, 1, cells[C_CHANGE], sizeof(cells[0]));
    fmt_slope(g->slope, mem, cells[C_STEP], sizeof(cells[0]));
    if (g->has_slope_h)
        fmt_slope(g->slope_h, mem, cells[C_HOUR], sizeof(cells[0]));
    else
        snprintf(cells[C_HOUR], sizeof(cells[0]), "-");
    snprintf(cells[C_R2], sizeof(cells[0]), "%.2f", g->r2);
    if (n < 2) {
        snprintf(cells[C_STEP], sizeof(cells[0]), "-");
        snprintf(cells[C_R2], sizeof(cells[0]), "-");
    }
}

static const char *
group_key(const void *ctx, uint64_t i)
{
    return ((const hscope_timeline_t *)ctx)->g[i].key;
}

/* The dumper's objects left out, in the words of a tally of one dump: the
 * last dump's count (what `tally` of it says), then the series' total. */
static void
excluded_text(hscope__out *o, const hscope_timeline_t *tl, uint64_t total)
{
    if (!total)
        return;
    uint64_t n = tl->nd, last = tl->d[n - 1].excluded;
    if (n == 1) {
        hscope__text_excluded(o, last);
        return;
    }
    char a[64], b[32], c[32];
    hscope__fmt_plural(last, "object", "objects", a, sizeof(a));
    hscope__fmt_count(total, b, sizeof(b));
    hscope__fmt_count(n, c, sizeof(c));
    hscope__out_printf(o, "left out: %s allocated by the dumper itself in the last dump "
                          "(%s in all %s dumps)\n", a, b, c);
}

/* Ruby's allocation tracer left out, the last dump's (the tracer lives as
 * long as the tracing: one object whose table grows with every traced
 * allocation, so the last dump's size is the one to say). */
static void
excluded_tracer_text(hscope__out *o, const hscope_timeline_t *tl)
{
    const hscope__tl_dump *d = &tl->d[tl->nd - 1];
    if (tl->nd == 1 || !d->tracer) {
        hscope__text_excluded_tracer(o, d->tracer, d->tracer_mem);
        return;
    }
    char c[64], b[32];
    hscope__fmt_plural(d->tracer, "object", "objects", c, sizeof(c));
    hscope__fmt_bytes((double)d->tracer_mem, b, sizeof(b));
    hscope__out_printf(o, "left out: the allocation tracer (trace_object_allocations), %s, %s "
                          "in the last dump\n", c, b);
}

static void
text_head(const hscope_timeline_t *tl, const hscope__ropts *ro, hscope__out *o)
{
    uint64_t n = tl->nd;
    hscope__out_printf(o, "timeline: %llu dump%s by %s, metric %s; order %s (%s)\n",
                       (unsigned long long)n, n == 1 ? "" : "s", tl->by,
                       tl->metric == HSCOPE_METRIC_COUNT ? "count" : "memsize", tl->order.name,
                       hscope__order_source_text(tl->order.source));
    int ascii = (ro->flags & HSCOPE_REPORT_ASCII) != 0;
    uint64_t excluded = 0;
    for (uint64_t i = 0; i < n; i++) {
        excluded += tl->d[i].excluded;
        if (n > 12 && i == 5) {
            char more[32];
            hscope__fmt_count(n - 10, more, sizeof(more));
            hscope__out_printf(o, "  %s %s more %s\n", ascii ? "..." : "\xe2\x80\xa6", more,
                               ascii ? "..." : "\xe2\x80\xa6");
            i = n - 6;
            continue;
        }
        char tb[32] = "";
        if (tl->d[i].has_time)
            iso_time(tl->d[i].time, tb, sizeof(tb));
        size_t room = ro->width > 30 ? ro->width - 7 - (tb[0] ? 22 : 0) : 20;
        hscope__out_printf(o, "  %3llu  ", (unsigned long long)i + 1);
        hscope__text_fit(o, dump_name(tl, ro, i), room, 0, ascii);
        hscope__out_printf(o, "%s%s\n", tb[0] ? "  " : "", tb);
    }
    excluded_text(o, tl, excluded);
    excluded_tracer_text(o, tl);
    char g[64], gr[32];
    hscope__fmt_plural(tl->ng, "group", "groups", g, sizeof(g));
    hscope__fmt_count(tl->growing, gr, sizeof(gr));
    hscope__out_printf(o, "%s, %s growing\n", g, gr);
    if (n < tl->min_dumps && !(tl->flags & HSCOPE_TIMELINE_GREW))
        hscope__out_printf(o, "growth is not ranked: %llu dump%s, and a trend needs %u or more "
                              "(any two points\nfit a line); the rows are ordered by their "
                              "change and none is marked growing\n",
                           (unsigned long long)n, n == 1 ? "" : "s", tl->min_dumps);
    hscope__out_putc(o, '\n');
}

static void
timeline_text(const hscope_timeline_t *tl, const hscope__ropts *ro, hscope__out *o)
{
    static const char *const titles[C_N] = { "first", "last", "change", "per step",
                                             "per hour", "R2" };
    uint64_t shown = shown_groups(tl, ro);
    int ascii = (ro->flags & HSCOPE_REPORT_ASCII) != 0;
    int hours = tl->order.times_known;
    text_head(tl, ro, o);
    int widths[C_N] = { 0 };
    char cells[C_N][40];
    for (uint64_t i = 0; i < shown; i++) {
        row_cells(tl, &tl->g[i], cells);
        for (int c = 0; c < C_N; c++) {
            int l = (int)strlen(cells[c]);
            widths[c] = l > widths[c] ? l : widths[c];
        }
    }
    hscope__table tb;
    hscope__table_init_fn(&tb, o, ro, "key", group_key, tl, shown);
    tb.indent = 3;
    for (int c = 0; c < C_N; c++)
        if (c != C_HOUR || hours)
            hscope__table_col(&tb, titles[c], widths[c]);
    size_t trend = tl->nd < TREND_MAX ? (size_t)tl->nd : TREND_MAX;
    hscope__table_tail(&tb, "trend", (int)trend + (tl->growing ? 9 : 0));
    hscope__table_header(&tb);
    for (uint64_t i = 0; i < shown; i++) {
        const hscope__tl_group *g = &tl->g[i];
        row_cells(tl, g, cells);
        const char *row[C_N];
        int k = 0;
        for (int c = 0; c < C_N; c++)
            if (c != C_HOUR || hours)
                row[k++] = cells[c];
        char sp[4 * TREND_MAX + 16];
        sparkline(tl, g, ascii, sp, sizeof(sp) - 10);
        if (g->growing)
            strcat(sp, "  growing");
        hscope__table_row_ex(&tb, g->growing ? "*" : NULL, NULL, g->key, row, sp);
    }
    if (shown < tl->ng) {
        char more[64];
        hscope__fmt_plural(tl->ng - shown, "more group", "more groups", more, sizeof(more));
        hscope__out_printf(o, "   %s %s\n", ascii ? "..." : "\xe2\x80\xa6", more);
    }
    if (!tl->growing) {
        char rule[320];
        hscope__grow_rule_text(tl->min_dumps, rule, sizeof(rule));
        hscope__out_printf(o, "\nno group is growing; %s\n", rule);
    }
}

/* ------------------------------------------------------------------ */
/* the grew view: the value in each dump, and the deltas               */
/* ------------------------------------------------------------------ */

/* Column label of dump i: A, B, C ... (then 27, 28 ...). */
static void
dump_label(uint64_t i, char *buf, size_t n)
{
    if (i < 26)
        snprintf(buf, n, "%c", (char)('A' + i));
    else
        snprintf(buf, n, "%llu", (unsigned long long)i + 1);
}

static void
grew_text(const hscope_timeline_t *tl, const hscope__ropts *ro, hscope__out *o)
{
    uint64_t n = tl->nd, shown = shown_groups(tl, ro);
    int mem = tl->metric != HSCOPE_METRIC_COUNT, ascii = (ro->flags & HSCOPE_REPORT_ASCII) != 0;
    /* every dump and every step fit in the table up to 6 dumps; beyond,
     * the first, the last and the change */
    int all = n <= (HSCOPE__TABLE_MAX_COLS + 1) / 2;
    char labels[HSCOPE__TABLE_MAX_COLS][48];
    hscope__out_printf(o, "grew: %llu dumps by %s, metric %s\n", (unsigned long long)n, tl->by,
                       mem ? "memsize" : "count");
    for (uint64_t i = 0; i < n; i++) {
        char l[24];
        dump_label(i, l, sizeof(l));
        hscope__out_printf(o, "  %2s  ", l);
        hscope__text_fit(o, dump_name(tl, ro, i), ro->width > 30 ? ro->width - 6 : 24, 0, ascii);
        hscope__out_putc(o, '\n');
    }
    hscope__out_putc(o, '\n');
    char title[64];
    snprintf(title, sizeof(title), "by %s", tl->by);
    hscope__table tb;
    hscope__table_init_fn(&tb, o, ro, title, group_key, tl, shown);
    int nc = 0;
    for (uint64_t i = 0; i < n; i++)
        if (all || i == 0 || i == n - 1) {
            dump_label(i, labels[nc], sizeof(labels[0]));
            hscope__table_col(&tb, labels[nc++], mem ? 10 : 9);
        }
    for (uint64_t i = 1; i < n; i++)
        if (all || i == n - 1) {
            char a[24], b[24];
            dump_label(all ? i - 1 : 0, a, sizeof(a));
            dump_label(i, b, sizeof(b));
            snprintf(labels[nc], sizeof(labels[0]), "%s-%s", b, a);
            hscope__table_col(&tb, labels[nc++], mem ? 10 : 7);
        }
    hscope__table_header(&tb);
    for (uint64_t r = 0; r < shown; r++) {
        const hscope__tl_group *g = &tl->g[r];
        char cells[HSCOPE__TABLE_MAX_COLS][40];
        const char *row[HSCOPE__TABLE_MAX_COLS];
        int k = 0;
        for (uint64_t i = 0; i < n; i++)
            if (all || i == 0 || i == n - 1)
                fmt_value((double)hscope__tl_value(tl, g, i), mem, 0, cells[k++], 40);
        for (uint64_t i = 1; i < n; i++)
            if (all || i == n - 1) {
                double d = (double)hscope__tl_value(tl, g, i) -
                           (double)hscope__tl_value(tl, g, all ? i - 1 : 0);
                fmt_value(d, mem, 1, cells[k++], 40);
            }
        for (int c = 0; c < k; c++)
            row[c] = cells[c];
        hscope__table_row(&tb, g->key, row);
    }
    if (shown < tl->ng) {
        char more[64];
        hscope__fmt_plural(tl->ng - shown, "more group", "more groups", more, sizeof(more));
        hscope__out_printf(o, "  %s %s\n", ascii ? "..." : "\xe2\x80\xa6", more);
    }
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

static void
json_series(hscope__json *w, const char *k, const uint64_t *v, uint64_t n)
{
    hscope__json_key(w, k);
    hscope__json_arr(w);
    for (uint64_t i = 0; i < n; i++)
        hscope__json_u64(w, v[i]);
    hscope__json_end_arr(w);
}

static void
json_num(hscope__json *w, const char *k, double v, int ok, int decimals)
{
    hscope__json_key(w, k);
    if (ok)
        hscope__json_f64(w, v, decimals);
    else
        hscope__json_null(w);
}

/* "dumps": [{"path", "objects", "total", "excluded_dumper_objects",
 * "excluded_tracer", "time"}] */
static void
json_dumps(hscope__json *w, const hscope_timeline_t *tl, const hscope__ropts *ro)
{
    hscope__json_key(w, "dumps");
    hscope__json_arr(w);
    for (uint64_t i = 0; i < tl->nd; i++) {
        const hscope__tl_dump *d = &tl->d[i];
        hscope__json_obj(w);
        hscope__json_kstr(w, "path", dump_name(tl, ro, i));
        hscope__json_ku64(w, "objects", d->stats.objects);
        hscope__json_kcm(w, "total", d->count, d->memsize);
        hscope__json_ku64(w, "excluded_dumper_objects", d->excluded);
        hscope__json_kcm(w, "excluded_tracer", d->tracer, d->tracer_mem);
        json_num(w, "time", d->time, d->has_time, 3);
        hscope__json_end_obj(w);
    }
    hscope__json_end_arr(w);
}

/* One warning to a JSON array (w) or as a "warning: ..." line (o). */
static void
emit_warning(hscope__json *w, hscope__out *o, const char *code, const char *message)
{
    if (!w) {
        hscope__out_printf(o, "warning: %s\n", message);
        return;
    }
    hscope__json_obj(w);
    hscope__json_kstr(w, "code", code);
    hscope__json_kstr(w, "message", message);
    hscope__json_end_obj(w);
}

/* Every warning, in order: the damaged dumps (time order, one at a time,
 * so that no number of dumps overflows a table), then the series checks. */
static void
each_warning(const hscope_timeline_t *tl, const hscope__ropts *ro, hscope__json *w,
             hscope__out *o)
{
    hscope__warnings ws;
    for (uint64_t i = 0; i < tl->nd; i++) {
        ws.n = 0;
        hscope__warn_damage(&ws, dump_name(tl, ro, i), &tl->d[i].stats, tl->d[i].skipped);
        for (int k = 0; k < ws.n; k++)
            emit_warning(w, o, ws.w[k].code, ws.w[k].message);
    }
    for (size_t k = 0; k < tl->nw; k++)
        emit_warning(w, o, tl->w[k].code, tl->w[k].message);
}

static void
json_warnings(hscope__json *w, const hscope_timeline_t *tl, const hscope__ropts *ro)
{
    hscope__json_key(w, "warnings");
    hscope__json_arr(w);
    each_warning(tl, ro, w, NULL);
    hscope__json_end_arr(w);
}

static void
json_head(hscope__json *w, const hscope_timeline_t *tl, const hscope__ropts *ro,
          const char *kind)
{
    hscope__json_begin_doc(w, kind);
    json_dumps(w, tl, ro);
    hscope__json_kstr(w, "by", tl->by);
    hscope__json_kstr(w, "metric", tl->metric == HSCOPE_METRIC_COUNT ? "count" : "memsize");
    hscope__json_kstr(w, "order", tl->order.name);
    hscope__json_kstr(w, "order_source", tl->order.source);
    hscope__json_key(w, "times_known");
    hscope__json_bool(w, tl->order.times_known);
    /* the top level's name means what it means in every document: the
     * objects left out of the result, all dumps together */
    uint64_t excluded = 0, tn = 0, tm = 0;
    for (uint64_t i = 0; i < tl->nd; i++) {
        excluded += tl->d[i].excluded;
        tn += tl->d[i].tracer;
        tm = hscope__sat_add(tm, tl->d[i].tracer_mem);
    }
    hscope__json_ku64(w, "excluded_dumper_objects", excluded);
    hscope__json_kcm(w, "excluded_tracer", tn, tm);
}

static void
json_group(hscope__json *w, const hscope_timeline_t *tl, const hscope__tl_group *g)
{
    int fit = tl->nd >= 2;
    hscope__json_obj(w);
    hscope__json_kstr(w, "key", g->key);
    json_series(w, "count", g->count, tl->nd);
    json_series(w, "memsize", g->memsize, tl->nd);
    json_num(w, "slope_per_step", g->slope, fit, 3);
    json_num(w, "slope_per_hour", g->slope_h, g->has_slope_h, 3);
    json_num(w, "r2", g->r2, fit, 4);
    json_num(w, "mean", g->mean, 1, 3);
    json_num(w, "rise", g->rise, 1, 3);
    hscope__json_key(w, "growing");
    hscope__json_bool(w, g->growing);
    hscope__json_end_obj(w);
}

static void
timeline_json(const hscope_timeline_t *tl, const hscope__ropts *ro, hscope__out *o)
{
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    json_head(&w, tl, ro, "timeline");
    hscope__json_key(&w, "rule");
    hscope__json_obj(&w);
    hscope__json_ku64(&w, "min_dumps", tl->min_dumps);
    json_num(&w, "min_r2", HSCOPE__GROW_MIN_R2, 1, 2);
    json_num(&w, "min_rise", tl->metric == HSCOPE_METRIC_COUNT ? HSCOPE__GROW_MIN_RISE_COUNT
                                                               : HSCOPE__GROW_MIN_RISE_BYTES, 1, 0);
    json_num(&w, "min_rise_fraction_of_mean", HSCOPE__GROW_MIN_RISE_FRACTION, 1, 2);
    json_num(&w, "min_rise_count", HSCOPE__GROW_MIN_RISE_COUNT, 1, 0);
    json_num(&w, "min_rise_memsize", HSCOPE__GROW_MIN_RISE_BYTES, 1, 0);
    hscope__json_end_obj(&w);
    hscope__json_ku64(&w, "group_count", tl->ng);
    hscope__json_ku64(&w, "growing_count", tl->growing);
    hscope__json_key(&w, "groups");
    hscope__json_arr(&w);
    for (uint64_t i = 0; i < shown_groups(tl, ro); i++)
        json_group(&w, tl, &tl->g[i]);
    hscope__json_end_arr(&w);
    json_warnings(&w, tl, ro);
    hscope__json_end_obj(&w);
    hscope__json_done(&w);
}

static void
grew_json(const hscope_timeline_t *tl, const hscope__ropts *ro, hscope__out *o)
{
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    json_head(&w, tl, ro, "grew");
    hscope__json_ku64(&w, "group_count", tl->ng);
    hscope__json_key(&w, "groups");
    hscope__json_arr(&w);
    for (uint64_t r = 0; r < shown_groups(tl, ro); r++) {
        const hscope__tl_group *g = &tl->g[r];
        hscope__json_obj(&w);
        hscope__json_kstr(&w, "key", g->key);
        json_series(&w, "count", g->count, tl->nd);
        json_series(&w, "memsize", g->memsize, tl->nd);
        hscope__json_key(&w, "change");
        hscope__json_i64(&w, (int64_t)(hscope__tl_value(tl, g, tl->nd - 1) -
                                       hscope__tl_value(tl, g, 0)));
        hscope__json_key(&w, "deltas");
        hscope__json_arr(&w);
        for (uint64_t i = 1; i < tl->nd; i++)
            hscope__json_i64(&w, (int64_t)(hscope__tl_value(tl, g, i) -
                                           hscope__tl_value(tl, g, i - 1)));
        hscope__json_end_arr(&w);
        hscope__json_end_obj(&w);
    }
    hscope__json_end_arr(&w);
    json_warnings(&w, tl, ro);
    hscope__json_end_obj(&w);
    hscope__json_done(&w);
}

/* ------------------------------------------------------------------ */
/* CSV and SVG                                                         */
/* ------------------------------------------------------------------ */

static void
timeline_csv(const hscope_timeline_t *tl, const hscope__ropts *ro, hscope__out *o)
{
    hscope__out_puts(o, "rank,key,step,dump,time,count,memsize,growing\n");
    for (uint64_t r = 0; r < shown_groups(tl, ro); r++) {
        const hscope__tl_group *g = &tl->g[r];
        for (uint64_t k = 0; k < tl->nd; k++) {
            char tb[32] = "";
            if (tl->d[k].has_time)
                iso_time(tl->d[k].time, tb, sizeof(tb));
            hscope__out_printf(o, "%llu,", (unsigned long long)r + 1);
            hscope__csv_field(o, g->key);
            hscope__out_printf(o, ",%llu,", (unsigned long long)k + 1);
            hscope__csv_field(o, dump_name(tl, ro, k));
            hscope__out_printf(o, ",%s,%llu,%llu,%s\n", tb, (unsigned long long)g->count[k],
                               (unsigned long long)g->memsize[k],
                               g->growing ? "true" : "false");
        }
    }
}

/* Legend note of a plotted group: its slope and R^2. */
static void
svg_note(const hscope_timeline_t *tl, const hscope__tl_group *g, char *buf, size_t n)
{
    char sl[40];
    double slope = g->has_slope_h ? g->slope_h : g->slope;
    if (tl->metric != HSCOPE_METRIC_COUNT)
        fmt_value(slope, 1, 1, sl, sizeof(sl));
    else
        snprintf(sl, sizeof(sl), "%+.1f", slope);
    if (tl->nd < 2)
        snprintf(buf, n, "one dump");
    else if (g->slope == 0)
        snprintf(buf, n, "flat");
    else
        snprintf(buf, n, "%s/%s, R\xc2\xb2 %.2f", sl, g->has_slope_h ? "hour" : "step", g->r2);
}

static void
svg_subtitle(const hscope_timeline_t *tl, const char *first, const char *last, char *buf,
             size_t n)
{
    char g[64];
    hscope__fmt_plural(tl->ng, "group", "groups", g, sizeof(g));
    if (tl->nd == 1)
        snprintf(buf, n, "1 dump, %s (a trend needs %u or more); %s", first, tl->min_dumps, g);
    else
        snprintf(buf, n, "%llu dumps, %s to %s, ordered by %s; %zu of %s growing",
                 (unsigned long long)tl->nd, first, last,
                 hscope__order_source_text(tl->order.source), tl->growing, g);
}

static void
timeline_svg(const hscope_timeline_t *tl, const hscope__ropts *ro, hscope__out *o)
{
    hscope__mem *m = &((hscope_timeline_t *)tl)->mem;
    size_t n = (size_t)tl->nd, shown = (size_t)shown_groups(tl, ro);
    size_t nl = shown < SVG_MAX_LINES ? shown : SVG_MAX_LINES;
    double *vals = hscope__calloc(m, (nl ? nl : 1) * n + n, sizeof(double));
    const char **names = hscope__calloc(m, n, sizeof(char *));
    hscope__svg_line lines[SVG_MAX_LINES];
    char notes[SVG_MAX_LINES][64];
    if (!vals || !names) {
        if (o->status == HSCOPE_OK)
            o->status = hscope__nomem(o->err, n * (nl + 2) * sizeof(double));
        goto done;
    }
    double *xs = vals + nl * n;
    for (size_t k = 0; k < n; k++) {
        xs[k] = tl->d[k].time;
        names[k] = hscope__basename(dump_name(tl, ro, k));
    }
    for (size_t i = 0; i < nl; i++) {
        const hscope__tl_group *g = &tl->g[i];
        for (size_t k = 0; k < n; k++)
            vals[i * n + k] = (double)hscope__tl_value(tl, g, k);
        svg_note(tl, g, notes[i], sizeof(notes[i]));
        lines[i] = (hscope__svg_line){ g->key, vals + i * n, g->growing, notes[i] };
    }
    int mem = tl->metric != HSCOPE_METRIC_COUNT;
    char title[256], sub[512];
    snprintf(title, sizeof(title), "heapscope timeline: %s by %s",
             mem ? "memsize" : "object count", tl->by);
    svg_subtitle(tl, names[0], names[n - 1], sub, sizeof(sub));
    hscope__svg_lines_chart ch = { m, title, sub, mem ? "memsize" : "objects", mem, n,
                                   tl->order.times_known ? xs : NULL, names, lines, nl,
                                   tl->ng - nl };
    hscope__svg_lines(o, &ch);
done:
    hscope__free(m, vals);
    hscope__free(m, names);
}

hscope_status
hscope__timeline_write(const hscope_timeline_t *tl, const hscope__ropts *ro, hscope__out *o)
{
    int grew = (tl->flags & HSCOPE_TIMELINE_GREW) != 0;
    switch (ro->format) {
    case HSCOPE_FORMAT_JSON:
        (grew ? grew_json : timeline_json)(tl, ro, o);
        break;
    case HSCOPE_FORMAT_CSV:
        timeline_csv(tl, ro, o);
        break;
    case HSCOPE_FORMAT_SVG:
        timeline_svg(tl, ro, o);
        break;
    default:
        if (!(ro->flags & HSCOPE_REPORT_NO_WARNINGS))
            each_warning(tl, ro, NULL, o);
        (grew ? grew_text : timeline_text)(tl, ro, o);
        break;
    }
    return o->status;
}
