/*
 * table.c - number formats and text tables that fit the width.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "out.h"
#include "table.h"

double
hscope__pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void
hscope__fmt_count(uint64_t v, char *buf, size_t n)
{
    char tmp[32];
    snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
    size_t len = strlen(tmp), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
}

void
hscope__fmt_bytes(double b, char *buf, size_t n)
{
    static const char *const u[] = { "B", "KB", "MB", "GB", "TB" };
    const char *sign = b < 0 ? "-" : "";
    double v = fabs(b);
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, n, "%s%.0f B", sign, v);
    else
        snprintf(buf, n, "%s%.1f %s", sign, v, u[i]);
}

void
hscope__fmt_plural(uint64_t v, const char *one, const char *many, char *buf,
                   size_t n)
{
    char c[32];
    hscope__fmt_count(v, c, sizeof(c));
    snprintf(buf, n, "%s %s", c, v == 1 ? one : many);
}

/*
 * Where to cut a key that is too long: keep `head` columns of its start
 * and `tail` of its end around the marker.  The end matters most (the file
 * name, line and class of a site key), so it gets the last path component
 * whole when that fits beside a short head; the head keeps the start of
 * the path (a gem's or app's directory).
 */
static void
split_cut(const char *s, size_t len, size_t total_cols, size_t avail,
          size_t *head, size_t *tail)
{
    size_t room = avail - 1; /* columns around the one-column marker */
    const char *slash = NULL;
    for (size_t i = len; i > 0; i--)
        if (s[i - 1] == '/') {
            slash = s + i - 1;
            break;
        }
    size_t last = slash ? hscope__utf8_columns(slash, len - (size_t)(slash - s)) : 0;
    size_t min_head = room >= 16 ? 8 : room / 2;
    if (slash && last + min_head <= room)
        *tail = last + (room - last - min_head) / 2;
    else
        *tail = room - min_head;
    if (*tail > total_cols)
        *tail = total_cols;
    *head = room - *tail;
}

void
hscope__text_fit(hscope__out *o, const char *s, size_t cols, int pad, int ascii)
{
    if (!s)
        s = "";
    size_t len = strlen(s), have = hscope__utf8_columns(s, len);
    if (have <= cols) {
        hscope__out_write(o, s, len);
        if (pad)
            hscope__out_fill(o, ' ', cols - have);
        return;
    }
    const char *marker = ascii ? "..." : "\xe2\x80\xa6";
    size_t mcols = ascii ? 3 : 1;
    if (cols <= mcols + 1) {
        hscope__out_write(o, s, hscope__utf8_skip_columns(s, len, cols));
        return;
    }
    size_t head, tail;
    split_cut(s, len, have, cols - mcols + 1, &head, &tail);
    hscope__out_write(o, s, hscope__utf8_skip_columns(s, len, head));
    hscope__out_puts(o, marker);
    size_t from = hscope__utf8_skip_columns(s, len, have - tail);
    hscope__out_write(o, s + from, len - from);
}

/* ":LINE..." after a file name (the line and class of a site key), else
 * the end of the string. */
static const char *
site_part(const char *base)
{
    for (const char *p = base; *p; p++)
        if (p[0] == ':' && p[1] >= '0' && p[1] <= '9')
            return p;
    return base + strlen(base);
}

/* Where a key's file name starts (after its directories; the key itself
 * for "app.rb:5:Class"); NULL when the key is no path nor site: a class, a
 * type, a method, a gem. */
static const char *
key_tail(const char *s)
{
    const char *slash = strrchr(s, '/');
    if (slash)
        return slash + 1;
    return *site_part(s) ? s : NULL;
}

size_t
hscope__key_min_cols(const char *s, int ascii)
{
    if (!s)
        return 0;
    const char *tail = key_tail(s);
    if (!tail)
        return hscope__utf8_columns(s, strlen(s));
    const char *site = site_part(tail);
    return (ascii ? 3 : 1) + hscope__utf8_columns(site, strlen(site));
}

/* A key as displayed: up to 6 pieces (text and markers) and its columns. */
typedef struct key_disp {
    const char *p[6];
    size_t l[6];
    int n;
    size_t cols;
} key_disp;

static void
piece(key_disp *d, const char *p, size_t l)
{
    d->p[d->n] = p;
    d->l[d->n++] = l;
}

/* Key s cut to `cols` columns (see hscope__key_fit). */
static void
key_cut(const char *s, size_t cols, int ascii, const char *prefix, size_t prefix_len,
        key_disp *d)
{
    size_t len = strlen(s), have = hscope__utf8_columns(s, len);
    const char *tail = key_tail(s);
    d->n = 0;
    if (have <= cols || !tail) { /* fits, or no path: never cut */
        piece(d, s, len);
        d->cols = have;
        return;
    }
    const char *marker = ascii ? "..." : "\xe2\x80\xa6";
    size_t mk = ascii ? 3 : 1, ml = strlen(marker), tl = strlen(tail);
    size_t tcols = hscope__utf8_columns(tail, tl);
    const char *hs = s;
    size_t hlen = (size_t)(tail - s);
    int elide = prefix_len && prefix_len < hlen && memcmp(s, prefix, prefix_len) == 0;
    if (elide) {
        hs += prefix_len;
        hlen -= prefix_len;
        piece(d, marker, ml);
    }
    size_t hcols = hscope__utf8_columns(hs, hlen), fixed = tcols + (elide ? mk : 0);
    if (fixed + hcols <= cols) { /* leaving out the common directory was enough */
        piece(d, hs, hlen);
        piece(d, tail, tl);
        d->cols = fixed + hcols;
    } else if (fixed + mk + 4 <= cols) { /* the directories' middle */
        size_t room = cols - fixed - mk, head = room / 3 < 8 ? room / 3 : 8, end = room - head;
        size_t from = hscope__utf8_skip_columns(hs, hlen, hcols - end);
        piece(d, hs, hscope__utf8_skip_columns(hs, hlen, head));
        piece(d, marker, ml);
        piece(d, hs + from, hlen - from);
        piece(d, tail, tl);
        d->cols = cols;
    } else { /* no room for directories: the file name's end, then the site */
        const char *site = site_part(tail);
        size_t scols = hscope__utf8_columns(site, strlen(site)), bcols = tcols - scols;
        size_t keep = cols > mk + scols ? cols - mk - scols : 0;
        if (keep > bcols)
            keep = bcols;
        size_t from = hscope__utf8_skip_columns(tail, (size_t)(site - tail), bcols - keep);
        d->n = 0;
        piece(d, marker, ml);
        piece(d, tail + from, tl - from);
        d->cols = mk + keep + scols;
    }
}

void
hscope__key_fit(hscope__out *o, const char *s, size_t cols, int pad, int ascii,
                const char *prefix, size_t prefix_len)
{
    key_disp d;
    key_cut(s ? s : "", cols, ascii, prefix, prefix_len, &d);
    for (int i = 0; i < d.n; i++)
        hscope__out_write(o, d.p[i], d.l[i]);
    if (pad && d.cols < cols)
        hscope__out_fill(o, ' ', cols - d.cols);
}

/* Byte k of a displayed key (-1 past its end). */
static int
disp_byte(const key_disp *d, size_t k)
{
    for (int i = 0; i < d->n; i++) {
        if (k < d->l[i])
            return (unsigned char)d->p[i][k];
        k -= d->l[i];
    }
    return -1;
}

static int
disp_equal(const key_disp *a, const key_disp *b)
{
    for (size_t k = 0;; k++) {
        int x = disp_byte(a, k), y = disp_byte(b, k);
        if (x != y)
            return 0;
        if (x < 0)
            return 1;
    }
}

#define DISTINCT_ROWS 64

/* Whether the first rows' keys, cut to the key column, are all distinct. */
static int
rows_distinct(const hscope__table *t)
{
    key_disp d[DISTINCT_ROWS];
    const char *k[DISTINCT_ROWS];
    uint64_t n = t->nkeys < DISTINCT_ROWS ? t->nkeys : DISTINCT_ROWS;
    for (uint64_t i = 0; i < n; i++) {
        k[i] = t->keys ? t->keys[i] : t->key_of(t->ctx, i);
        key_cut(k[i] ? k[i] : "", t->key_width, t->ascii, t->prefix, t->prefix_len, &d[i]);
    }
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = i + 1; j < n; j++)
            if (k[i] && k[j] && strcmp(k[i], k[j]) != 0 && disp_equal(&d[i], &d[j]))
                return 0;
    return 1;
}

static void
table_start(hscope__table *t, hscope__out *o, const hscope__ropts *ro,
            const char *key_title)
{
    memset(t, 0, sizeof(*t));
    t->o = o;
    t->key_title = key_title;
    t->ascii = (ro->flags & HSCOPE_REPORT_ASCII) != 0;
    t->indent = 2;
    t->key_width = hscope__utf8_columns(key_title, strlen(key_title));
    t->width = ro->width; /* applied once the columns are known */
}

/* Size the key column for key k and narrow the rows' common directory. */
static void
widen(hscope__table *t, const char *k)
{
    if (!k)
        return;
    size_t c = hscope__utf8_columns(k, strlen(k));
    if (c > t->key_width)
        t->key_width = c;
    size_t m = hscope__key_min_cols(k, t->ascii);
    if (m > t->key_min)
        t->key_min = m;
    const char *tail = key_tail(k);
    size_t dir = tail ? (size_t)(tail - k) : 0;
    if (t->nkeys++ == 0) {
        t->prefix = k;
        t->prefix_len = dir;
        return;
    }
    size_t n = 0;
    while (n < t->prefix_len && n < dir && t->prefix[n] == k[n])
        n++;
    while (n > 0 && t->prefix[n - 1] != '/')
        n--;
    t->prefix_len = n;
}

void
hscope__table_init(hscope__table *t, hscope__out *o, const hscope__ropts *ro,
                   const char *key_title, const char *const *keys, size_t nkeys)
{
    table_start(t, o, ro, key_title);
    t->keys = keys;
    for (size_t i = 0; keys && i < nkeys; i++)
        widen(t, keys[i]);
}

void
hscope__table_init_fn(hscope__table *t, hscope__out *o, const hscope__ropts *ro,
                      const char *key_title,
                      const char *(*key_of)(const void *ctx, uint64_t i),
                      const void *ctx, uint64_t nkeys)
{
    table_start(t, o, ro, key_title);
    t->key_of = key_of;
    t->ctx = ctx;
    for (uint64_t i = 0; i < nkeys; i++)
        widen(t, key_of(ctx, i));
}

/* Add a column to titles/widths[0..*n) (up to max): at least as wide as
 * its title. */
static void
add_col(const char **titles, int *widths, int *n, int max, const char *title, int width)
{
    if (*n >= max)
        return;
    int w = (int)strlen(title);
    titles[*n] = title;
    widths[*n] = width > w ? width : w;
    (*n)++;
}

void
hscope__table_col(hscope__table *t, const char *title, int width)
{
    add_col(t->titles, t->widths, &t->ncols, HSCOPE__TABLE_MAX_COLS, title, width);
}

void
hscope__table_lead(hscope__table *t, const char *title, int width)
{
    add_col(t->lead_titles, t->lead_widths, &t->nleads, HSCOPE__TABLE_MAX_LEADS, title, width);
}

void
hscope__table_fit(hscope__table *t)
{
    if (t->fitted)
        return;
    t->fitted = 1;
    size_t fixed = (size_t)t->indent;
    for (int i = 0; i < t->ncols; i++)
        fixed += 1 + (size_t)t->widths[i];
    for (int i = 0; i < t->nleads; i++)
        fixed += 1 + (size_t)t->lead_widths[i];
    if (t->tail_title)
        fixed += 2 + (size_t)t->tail_width;
    size_t room = t->width > fixed + 12 ? t->width - fixed : 12;
    if (room < t->key_min) /* a class is never cut: the line grows */
        room = t->key_min;
    size_t widest = t->key_width;
    if (t->key_width > room)
        t->key_width = room;
    if (t->nkeys < 2) /* one row: nothing in common to leave out */
        t->prefix_len = 0;
    /* rows that the cut would make look alike: a wider key column, even
     * past the width, rather than two rows that read the same */
    while (t->key_width < widest && (t->keys || t->key_of) && !rows_distinct(t))
        t->key_width = t->key_width + 4 < widest ? t->key_width + 4 : widest;
}

void
hscope__table_tail(hscope__table *t, const char *title, int width)
{
    int w = (int)hscope__utf8_columns(title, strlen(title));
    t->tail_title = title;
    t->tail_width = width > w ? width : w;
}

void
hscope__table_header(hscope__table *t)
{
    hscope__table_fit(t);
    /* the first title starts at column 0, the cells at the indent */
    size_t first = t->nleads ? (size_t)t->lead_widths[0] : t->key_width;
    hscope__text_fit(t->o, t->nleads ? t->lead_titles[0] : t->key_title,
                     first + (size_t)t->indent, 1, t->ascii);
    for (int i = 1; i < t->nleads; i++) {
        hscope__out_putc(t->o, ' ');
        hscope__text_fit(t->o, t->lead_titles[i], (size_t)t->lead_widths[i], 1, t->ascii);
    }
    if (t->nleads) {
        hscope__out_putc(t->o, ' ');
        hscope__text_fit(t->o, t->key_title, t->key_width, t->ncols > 0, t->ascii);
    }
    for (int i = 0; i < t->ncols; i++)
        hscope__out_printf(t->o, " %*s", t->widths[i], t->titles[i]);
    if (t->tail_title)
        hscope__out_printf(t->o, "  %s", t->tail_title);
    hscope__out_putc(t->o, '\n');
}

void
hscope__table_row_ex(hscope__table *t, const char *mark, const char *const *leads,
                     const char *key, const char *const *cells, const char *tail)
{
    hscope__table_fit(t);
    size_t ml = mark ? strlen(mark) : 0;
    if (ml && ml + 1 < (size_t)t->indent) {
        hscope__out_putc(t->o, ' ');
        hscope__out_puts(t->o, mark);
        hscope__out_fill(t->o, ' ', (size_t)t->indent - 1 - ml);
    } else {
        hscope__out_fill(t->o, ' ', (size_t)t->indent);
    }
    for (int i = 0; i < t->nleads; i++) {
        hscope__text_fit(t->o, leads ? leads[i] : "", (size_t)t->lead_widths[i], 1, t->ascii);
        hscope__out_putc(t->o, ' ');
    }
    hscope__key_fit(t->o, key, t->key_width, t->ncols > 0 || tail, t->ascii, t->prefix,
                    t->prefix_len);
    for (int i = 0; i < t->ncols; i++)
        hscope__out_printf(t->o, " %*s", t->widths[i], cells[i] ? cells[i] : "");
    if (tail && *tail)
        hscope__out_printf(t->o, "  %s", tail);
    hscope__out_putc(t->o, '\n');
}

void
hscope__table_row_lead(hscope__table *t, const char *const *leads, const char *key,
                       const char *const *cells)
{
    hscope__table_row_ex(t, NULL, leads, key, cells, NULL);
}

void
hscope__table_row(hscope__table *t, const char *key, const char *const *cells)
{
    hscope__table_row_lead(t, NULL, key, cells);
}
