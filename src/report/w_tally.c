/*
 * w_tally.c - writers of a tally (group-by): text table, JSON, CSV.
 */
#include <stdio.h>
#include <string.h>

#include "writer.h"

#define BAR_MAX 20

static const char *
row_key(const void *ctx, uint64_t i)
{
    return hscope__tally_row_key(ctx, i);
}

/* Up to `max` member addresses of row i, indented below the row and
 * wrapped to the width, then "…" if there are more. */
static void
member_addresses(const hscope_tally_t *t, uint64_t i, uint64_t max, const hscope__ropts *ro,
                 hscope__out *o)
{
    const hscope_id *ids;
    uint64_t cnt;
    if (hscope__tally_row_objects(t, i, &ids, &cnt) != HSCOPE_OK || cnt == 0)
        return;
    const hscope_heap_t *h = hscope__tally_heap(t);
    const size_t indent = 6;
    size_t col = 0;
    for (uint64_t k = 0; k < cnt && k < max; k++) {
        char a[24];
        int n = snprintf(a, sizeof(a), "0x%llx",
                         (unsigned long long)hscope__heap_object_address(h, ids[k]));
        if (col && col + 1 + (size_t)n > ro->width) {
            hscope__out_putc(o, '\n');
            col = 0;
        }
        if (!col) {
            hscope__out_fill(o, ' ', indent);
            col = indent;
        } else {
            hscope__out_putc(o, ' ');
            col++;
        }
        hscope__out_write(o, a, (size_t)n);
        col += (size_t)n;
    }
    if (cnt > max)
        hscope__out_puts(o, (ro->flags & HSCOPE_REPORT_ASCII) ? " ..." : " \xe2\x80\xa6");
    hscope__out_putc(o, '\n');
}

void
hscope__tally_text(const hscope_tally_t *t, const hscope__ropts *ro, hscope__out *o,
                   const char *title, uint64_t total_count, uint64_t total_mem,
                   uint64_t samples)
{
    uint64_t rows = hscope__tally_row_count(t);
    int with_pct = total_count || total_mem;
    int bars = (ro->flags & HSCOPE_REPORT_BARS) != 0;
    int by_mem = hscope__tally_sort(t) == HSCOPE_SORT_MEMSIZE;
    uint64_t top_value = 0;
    for (uint64_t i = 0; bars && i < rows; i++) {
        uint64_t v = by_mem ? hscope__tally_row_memsize(t, i) : hscope__tally_row_count_of(t, i);
        top_value = v > top_value ? v : top_value;
    }
    int members = samples && rows && hscope__tally_row_objects(t, 0, &(const hscope_id *){ NULL },
                                                              &(uint64_t){ 0 }) == HSCOPE_OK;
    hscope__table tb;
    hscope__table_init_fn(&tb, o, ro, title, row_key, t, rows);
    hscope__table_col(&tb, "count", 10);
    if (with_pct)
        hscope__table_col(&tb, "%", 6);
    hscope__table_col(&tb, "memsize", 10);
    if (with_pct)
        hscope__table_col(&tb, "%", 6);
    if (bars)
        hscope__table_tail(&tb, by_mem ? "memsize" : "count", BAR_MAX);
    hscope__table_header(&tb);
    for (uint64_t i = 0; i < rows; i++) {
        uint64_t n = hscope__tally_row_count_of(t, i), m = hscope__tally_row_memsize(t, i);
        char c[32], cp[16], b[32], bp[16];
        hscope__fmt_count(n, c, sizeof(c));
        hscope__fmt_bytes((double)m, b, sizeof(b));
        snprintf(cp, sizeof(cp), "%.1f%%", hscope__pct(n, total_count));
        snprintf(bp, sizeof(bp), "%.1f%%", hscope__pct(m, total_mem));
        const char *cells[4];
        int k = 0;
        cells[k++] = c;
        if (with_pct)
            cells[k++] = cp;
        cells[k++] = b;
        if (with_pct)
            cells[k++] = bp;
        char bar[BAR_MAX + 1] = "";
        if (bars && top_value) {
            uint64_t v = by_mem ? m : n;
            size_t len = (size_t)((double)v / (double)top_value * BAR_MAX + 0.5);
            memset(bar, '#', len);
            bar[len] = '\0';
        }
        hscope__table_row_ex(&tb, NULL, NULL, hscope__tally_row_key(t, i), cells, bar);
        if (members)
            member_addresses(t, i, samples, ro, o);
    }
    uint64_t groups = hscope__tally_group_count(t);
    if (groups > rows) {
        char g[64];
        hscope__fmt_plural(groups - rows, "more group", "more groups", g, sizeof(g));
        hscope__out_printf(o, "  %s %s\n", tb.ascii ? "..." : "\xe2\x80\xa6", g);
    }
}

void
hscope__json_groups_of_tally(hscope__json *w, const hscope_tally_t *t, int addresses)
{
    const hscope_heap_t *h = hscope__tally_heap(t);
    hscope__json_ku64(w, "group_count", hscope__tally_group_count(t));
    hscope__json_key(w, "groups");
    hscope__json_arr(w);
    for (uint64_t i = 0; i < hscope__tally_row_count(t); i++) {
        hscope__json_obj(w);
        hscope__json_kstr(w, "key", hscope__tally_row_key(t, i));
        hscope__json_ku64(w, "count", hscope__tally_row_count_of(t, i));
        hscope__json_ku64(w, "memsize", hscope__tally_row_memsize(t, i));
        const hscope_id *ids;
        uint64_t n;
        if (addresses && h && hscope__tally_row_objects(t, i, &ids, &n) == HSCOPE_OK) {
            hscope__json_key(w, "addresses");
            hscope__json_arr(w);
            for (uint64_t k = 0; k < n; k++)
                hscope__json_addr(w, hscope__heap_object_address(h, ids[k]));
            hscope__json_end_arr(w);
        }
        hscope__json_end_obj(w);
    }
    hscope__json_end_arr(w);
}

/* The histogram: bars of memsize and count per row. */
static void
tally_svg(const hscope_tally_t *t, const hscope__ropts *ro, hscope__out *o)
{
    uint64_t rows = hscope__tally_row_count(t), groups = hscope__tally_group_count(t), tn, tm;
    hscope__tally_totals(t, &tn, &tm);
    hscope__mem *m = hscope__tally_mem(t);
    hscope__svg_bar *bars = hscope__calloc(m, rows ? (size_t)rows : 1, sizeof(*bars));
    if (!bars) {
        if (o->status == HSCOPE_OK)
            o->status = hscope__nomem(o->err, (size_t)rows * sizeof(*bars));
        return;
    }
    for (uint64_t i = 0; i < rows; i++)
        bars[i] = (hscope__svg_bar){ hscope__tally_row_key(t, i), hscope__tally_row_memsize(t, i),
                                     hscope__tally_row_count_of(t, i) };
    const char *by = hscope__tally_by(t), *name = hscope__ropts_dump_name(ro, 0);
    char title[128], sub[512], a[32], b[32];
    snprintf(title, sizeof(title), "heapscope histogram: memsize and objects by %s",
             by ? by : "key");
    hscope__fmt_count(tn, a, sizeof(a));
    hscope__fmt_bytes((double)tm, b, sizeof(b));
    snprintf(sub, sizeof(sub), "%s%s%s objects, %s; %s%llu of %llu groups, largest %s first",
             name ? hscope__basename(name) : "", name ? ": " : "", a, b,
             rows < groups ? "top " : "", (unsigned long long)rows, (unsigned long long)groups,
             hscope__tally_sort(t) == HSCOPE_SORT_MEMSIZE ? "memsize" : "count");
    hscope__svg_bars_chart ch = { title, sub, bars, (size_t)rows, tm, tn };
    hscope__svg_bars(o, &ch);
    hscope__free(m, bars);
}

/* Objects of the tally's dump (its load statistics). */
static uint64_t
dump_objects(const hscope_tally_t *t)
{
    hscope_load_stats s;
    hscope__load_stats_init(&s);
    return hscope__tally_stats(t, &s) == HSCOPE_OK ? s.objects : 0;
}

static void
tally_json(const hscope_tally_t *t, const hscope__ropts *ro, const hscope__warnings *ws,
           hscope__out *o)
{
    hscope__json w;
    uint64_t n, m;
    int retained = hscope__tally_is_retained(t);
    hscope__tally_totals(t, &n, &m);
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    hscope__json_begin_doc(&w, retained ? "retained" : "tally");
    hscope__json_key(&w, "dumps");
    hscope__json_arr(&w);
    hscope__json_dump(&w, hscope__ropts_dump_name(ro, 0), dump_objects(t));
    hscope__json_end_arr(&w);
    hscope__json_kstr(&w, "by", hscope__tally_by(t));
    if (!retained)
        hscope__json_kcm(&w, "total", n, m);
    hscope__json_groups_of_tally(&w, t, (ro->flags & HSCOPE_REPORT_ADDRESSES) != 0);
    if (!retained)
        hscope__json_ku64(&w, "excluded_dumper_objects", hscope__tally_excluded(t));
    uint64_t tn, tm;
    hscope__tally_tracer(t, &tn, &tm);
    hscope__json_kcm(&w, "excluded_tracer", tn, tm);
    hscope__json_warnings(&w, ws);
    hscope__json_end_obj(&w);
    hscope__json_done(&w);
}

static void
tally_csv(const hscope_tally_t *t, hscope__out *o)
{
    const char *by = hscope__tally_by(t);
    hscope__csv_field(o, by ? by : "key");
    hscope__out_puts(o, ",count,memsize\n");
    for (uint64_t i = 0; i < hscope__tally_row_count(t); i++) {
        hscope__csv_field(o, hscope__tally_row_key(t, i));
        hscope__out_printf(o, ",%llu,%llu\n",
                           (unsigned long long)hscope__tally_row_count_of(t, i),
                           (unsigned long long)hscope__tally_row_memsize(t, i));
    }
}

/* Retained sizes per group: the bytes and objects each group keeps alive. */
static void
retained_text(const hscope_tally_t *t, const hscope__ropts *ro, hscope__out *o)
{
    uint64_t rows = hscope__tally_row_count(t);
    const char *by = hscope__tally_by(t);
    char title[64];
    snprintf(title, sizeof(title), "retained by %s", by ? by : "key");
    hscope__table tb;
    hscope__table_init_fn(&tb, o, ro, title, row_key, t, rows);
    hscope__table_col(&tb, "retained", 10);
    hscope__table_col(&tb, "objects", 10);
    hscope__table_header(&tb);
    for (uint64_t i = 0; i < rows; i++) {
        char b[32], c[32];
        hscope__fmt_bytes((double)hscope__tally_row_memsize(t, i), b, sizeof(b));
        hscope__fmt_count(hscope__tally_row_count_of(t, i), c, sizeof(c));
        const char *cells[2] = { b, c };
        hscope__table_row(&tb, hscope__tally_row_key(t, i), cells);
    }
    uint64_t groups = hscope__tally_group_count(t);
    if (groups > rows) {
        char g[64];
        hscope__fmt_plural(groups - rows, "more group", "more groups", g, sizeof(g));
        hscope__out_printf(o, "  %s %s\n", tb.ascii ? "..." : "\xe2\x80\xa6", g);
    }
    if (groups > 1)
        hscope__out_puts(o, "note: the rows overlap: a group's retained size includes the objects "
                            "of other groups\nit keeps alive (an Array and the Strings in it are "
                            "in both rows), so they do not add up\n");
}

hscope_status
hscope__tally_write(const hscope_tally_t *t, const hscope__ropts *ro, hscope__out *o)
{
    hscope__warnings ws;
    ws.n = 0;
    hscope__warn_tally(&ws, hscope__ropts_dump_name(ro, 0), t);
    switch (ro->format) {
    case HSCOPE_FORMAT_JSON:
        tally_json(t, ro, &ws, o);
        break;
    case HSCOPE_FORMAT_CSV:
        tally_csv(t, o);
        break;
    case HSCOPE_FORMAT_SVG:
        tally_svg(t, ro, o);
        break;
    default: {
        hscope__text_warnings(o, ro, &ws);
        uint64_t tn, tm;
        hscope__tally_tracer(t, &tn, &tm);
        if (hscope__tally_is_retained(t)) {
            retained_text(t, ro, o);
            if (tn) {
                hscope__out_putc(o, '\n');
                hscope__text_excluded_tracer(o, tn, tm);
            }
            break;
        }
        uint64_t n, m;
        hscope__tally_totals(t, &n, &m);
        const char *by = hscope__tally_by(t);
        char title[64];
        snprintf(title, sizeof(title), "by %s", by ? by : "key");
        hscope__tally_text(t, ro, o, title, n, m,
                           (ro->flags & HSCOPE_REPORT_ADDRESSES) ? UINT64_MAX : 0);
        if (hscope__tally_excluded(t)) {
            hscope__out_putc(o, '\n');
            hscope__text_excluded(o, hscope__tally_excluded(t));
        }
        if (tn) {
            if (!hscope__tally_excluded(t))
                hscope__out_putc(o, '\n');
            hscope__text_excluded_tracer(o, tn, tm);
        }
        break;
    }
    }
    return HSCOPE_OK;
}
