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
    return hscope_tally_row_key(ctx, i);
}

static double
pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Up to `max` member addresses of row i, space-separated, "…" if more. */
static void
sample_addresses(const hscope_tally_t *t, uint64_t i, uint64_t max, char *buf,
                 size_t n, int ascii)
{
    const hscope_id *ids;
    uint64_t cnt;
    buf[0] = '\0';
    if (hscope_tally_row_objects(t, i, &ids, &cnt) != HSCOPE_OK)
        return;
    const hscope_heap_t *h = hscope__tally_heap(t);
    size_t o = 0;
    for (uint64_t k = 0; k < cnt && k < max && o + 24 < n; k++)
        o += (size_t)snprintf(buf + o, n - o, "%s0x%llx", k ? " " : "",
                              (unsigned long long)hscope_heap_object_address(h, ids[k]));
    if (cnt > max && o + 5 < n)
        snprintf(buf + o, n - o, " %s", ascii ? "..." : "\xe2\x80\xa6");
}

void
hscope__tally_text(const hscope_tally_t *t, const hscope__ropts *ro, hscope__out *o,
                   const char *title, uint64_t total_count, uint64_t total_mem,
                   uint64_t samples)
{
    uint64_t rows = hscope_tally_row_count(t);
    int with_pct = total_count || total_mem;
    int bars = (ro->flags & HSCOPE_REPORT_BARS) != 0;
    int by_mem = hscope__tally_sort(t) == HSCOPE_SORT_MEMSIZE;
    uint64_t top_value = 0;
    for (uint64_t i = 0; bars && i < rows; i++) {
        uint64_t v = by_mem ? hscope_tally_row_memsize(t, i) : hscope_tally_row_count_of(t, i);
        top_value = v > top_value ? v : top_value;
    }
    int members = samples && rows && hscope_tally_row_objects(t, 0, &(const hscope_id *){ NULL },
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
        uint64_t n = hscope_tally_row_count_of(t, i), m = hscope_tally_row_memsize(t, i);
        char c[32], cp[16], b[32], bp[16];
        hscope__fmt_count(n, c, sizeof(c));
        hscope__fmt_bytes((double)m, b, sizeof(b));
        snprintf(cp, sizeof(cp), "%.1f%%", pct(n, total_count));
        snprintf(bp, sizeof(bp), "%.1f%%", pct(m, total_mem));
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
        hscope__table_row_ex(&tb, NULL, hscope_tally_row_key(t, i), cells, bar);
        if (members) {
            char addrs[1024];
            sample_addresses(t, i, samples, addrs, sizeof(addrs), tb.ascii);
            if (addrs[0])
                hscope__out_printf(o, "      %s\n", addrs);
        }
    }
    uint64_t groups = hscope_tally_group_count(t);
    if (groups > rows) {
        char g[64];
        hscope__fmt_plural(groups - rows, "more group", "more groups", g, sizeof(g));
        hscope__out_printf(o, "  %s %s\n", tb.ascii ? "..." : "\xe2\x80\xa6", g);
    }
    uint64_t excluded = hscope_tally_excluded(t);
    if (excluded)
        hscope__out_printf(o, "left out: %llu object%s allocated by the dumper itself\n",
                           (unsigned long long)excluded, excluded == 1 ? "" : "s");
}

void
hscope__json_groups_of_tally(hscope__json *w, const hscope_tally_t *t, int addresses)
{
    const hscope_heap_t *h = hscope__tally_heap(t);
    hscope__json_ku64(w, "group_count", hscope_tally_group_count(t));
    hscope__json_key(w, "groups");
    hscope__json_arr(w);
    for (uint64_t i = 0; i < hscope_tally_row_count(t); i++) {
        hscope__json_obj(w);
        hscope__json_kstr(w, "key", hscope_tally_row_key(t, i));
        hscope__json_ku64(w, "count", hscope_tally_row_count_of(t, i));
        hscope__json_ku64(w, "memsize", hscope_tally_row_memsize(t, i));
        const hscope_id *ids;
        uint64_t n;
        if (addresses && h && hscope_tally_row_objects(t, i, &ids, &n) == HSCOPE_OK) {
            hscope__json_key(w, "addresses");
            hscope__json_arr(w);
            for (uint64_t k = 0; k < n; k++)
                hscope__json_addr(w, hscope_heap_object_address(h, ids[k]));
            hscope__json_end_arr(w);
        }
        hscope__json_end_obj(w);
    }
    hscope__json_end_arr(w);
}

/* "dumps": [{"path", "objects", "excluded_dumper_objects"}]: the objects
 * of the heap, or those the fold of a file saw. */
static void
tally_dumps(hscope__json *w, const hscope_tally_t *t, const hscope__ropts *ro, uint64_t n)
{
    const hscope_heap_t *h = hscope__tally_heap(t);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    if (!h && hscope_tally_stats(t, &s) == HSCOPE_OK && s.objects)
        n = s.objects;
    hscope__json_key(w, "dumps");
    hscope__json_arr(w);
    hscope__json_obj(w);
    hscope__json_kstr(w, "path", hscope__ropts_dump_name(ro, 0));
    hscope__json_ku64(w, "objects", h ? hscope_heap_object_count(h) : n);
    hscope__json_ku64(w, "excluded_dumper_objects", hscope_tally_excluded(t));
    hscope__json_end_obj(w);
    hscope__json_end_arr(w);
}

/* The heap's warnings, or the damage the fold of a file found. */
static void
tally_warnings(hscope__json *w, const hscope_tally_t *t, const hscope__ropts *ro)
{
    const hscope_heap_t *h = hscope__tally_heap(t);
    if (h) {
        hscope__json_heap_warnings(w, h);
        return;
    }
    hscope__json_key(w, "warnings");
    hscope__json_arr(w);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    uint64_t sk[HSCOPE_SKIP__COUNT];
    char text[1024] = "";
    if (hscope_tally_stats(t, &s) == HSCOPE_OK) {
        for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
            sk[r] = hscope_tally_skipped(t, r);
        const char *name = hscope__ropts_dump_name(ro, 0);
        hscope__damage_text(text, sizeof(text), name ? name : "the dump", &s, sk);
    }
    if (text[0])
        hscope__json_warning(w, s.skipped_lines ? "skipped_lines" : "truncated", "%s", text);
    hscope__json_end_arr(w);
}

/* The histogram: bars of memsize and count per row. */
static void
tally_svg(const hscope_tally_t *t, const hscope__ropts *ro, hscope__out *o)
{
    uint64_t rows = hscope_tally_row_count(t), groups = hscope_tally_group_count(t), tn, tm;
    hscope_tally_totals(t, &tn, &tm);
    hscope__mem *m = hscope__tally_mem(t);
    hscope__svg_bar *bars = hscope__calloc(m, rows ? (size_t)rows : 1, sizeof(*bars));
    if (!bars) {
        if (o->status == HSCOPE_OK)
            o->status = hscope__nomem(o->err, (size_t)rows * sizeof(*bars));
        return;
    }
    for (uint64_t i = 0; i < rows; i++)
        bars[i] = (hscope__svg_bar){ hscope_tally_row_key(t, i), hscope_tally_row_memsize(t, i),
                                     hscope_tally_row_count_of(t, i) };
    const char *by = hscope_tally_by(t), *name = hscope__ropts_dump_name(ro, 0);
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

static void
tally_json(const hscope_tally_t *t, const hscope__ropts *ro, hscope__out *o)
{
    hscope__json w;
    uint64_t n, m;
    hscope_tally_totals(t, &n, &m);
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    hscope__json_begin_doc(&w, "tally");
    tally_dumps(&w, t, ro, n);
    hscope__json_kstr(&w, "by", hscope_tally_by(t));
    hscope__json_kcm(&w, "total", n, m);
    hscope__json_groups_of_tally(&w, t, (ro->flags & HSCOPE_REPORT_ADDRESSES) != 0);
    tally_warnings(&w, t, ro);
    hscope__json_end_obj(&w);
    hscope__json_done(&w);
}

static void
tally_csv(const hscope_tally_t *t, hscope__out *o)
{
    const char *by = hscope_tally_by(t);
    hscope__csv_field(o, by ? by : "key");
    hscope__out_puts(o, ",count,memsize\n");
    for (uint64_t i = 0; i < hscope_tally_row_count(t); i++) {
        hscope__csv_field(o, hscope_tally_row_key(t, i));
        hscope__out_printf(o, ",%llu,%llu\n",
                           (unsigned long long)hscope_tally_row_count_of(t, i),
                           (unsigned long long)hscope_tally_row_memsize(t, i));
    }
}

hscope_status
hscope__tally_write(const hscope_tally_t *t, const hscope__ropts *ro, hscope__out *o)
{
    switch (ro->format) {
    case HSCOPE_FORMAT_JSON:
        tally_json(t, ro, o);
        break;
    case HSCOPE_FORMAT_CSV:
        tally_csv(t, o);
        break;
    case HSCOPE_FORMAT_SVG:
        tally_svg(t, ro, o);
        break;
    default: {
        uint64_t n, m;
        hscope_tally_totals(t, &n, &m);
        const char *by = hscope_tally_by(t);
        char title[64];
        snprintf(title, sizeof(title), "by %s", by ? by : "key");
        hscope__tally_text(t, ro, o, title, n, m,
                           (ro->flags & HSCOPE_REPORT_ADDRESSES) ? UINT64_MAX : 0);
        break;
    }
    }
    return HSCOPE_OK;
}
