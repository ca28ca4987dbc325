/*
 * table.c - number formats and text tables that fit the width.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "writer.h"

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

static void
widen(hscope__table *t, const char *k)
{
    if (!k)
        return;
    size_t c = hscope__utf8_columns(k, strlen(k));
    if (c > t->key_width)
        t->key_width = c;
}

void
hscope__table_init(hscope__table *t, hscope__out *o, const hscope__ropts *ro,
                   const char *key_title, const char *const *keys, size_t nkeys)
{
    table_start(t, o, ro, key_title);
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
    if (t->key_width > room)
        t->key_width = room;
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
    hscope__text_fit(t->o, key, t->key_width, t->ncols > 0 || tail, t->ascii);
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
