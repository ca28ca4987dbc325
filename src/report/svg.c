/*
 * svg.c - self-contained SVG charts: the timeline line plot (values over
 * time, and change since the first dump) and the bars of a tally (the
 * histogram).  No external assets, no scripts; text is XML-escaped and
 * forced to valid UTF-8 (core/utf8.c), so the output always parses as XML.
 * The HTML report embeds the same charts.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../core/core.h"
#include "out.h"
#include "svg.h"
#include "table.h"

#define FONT "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"

static const char *const palette[] = {
    "#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#bcbd22",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))
#define GREY "#a0a0a0"

/* ------------------------------------------------------------------ */
/* text                                                               */
/* ------------------------------------------------------------------ */

void
hscope__xml_escape(hscope__out *f, const char *s)
{
    if (!s)
        return;
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    while (p < end) {
        uint32_t cp;
        int l = hscope__utf8_seq(p, (size_t)(end - p), &cp);
        if (l == 0) {
            hscope__out_puts(f, "\xef\xbf\xbd"); /* U+FFFD */
            p++;
            continue;
        }
        if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE ||
            cp == 0xFFFF) {
            hscope__out_puts(f, "\xef\xbf\xbd");
        } else if (cp == '&') {
            hscope__out_puts(f, "&amp;");
        } else if (cp == '<') {
            hscope__out_puts(f, "&lt;");
        } else if (cp == '>') {
            hscope__out_puts(f, "&gt;");
        } else if (cp == '"') {
            hscope__out_puts(f, "&quot;");
        } else if (cp == '\'') {
            hscope__out_puts(f, "&#39;");
        } else {
            hscope__out_write(f, p, (size_t)l);
        }
        p += l;
    }
}

/* At most `max` characters of s; longer text keeps its tail after an
 * ellipsis (file paths and class names say the most at their end). */
static void
text_tail(hscope__out *f, const char *s, size_t max)
{
    size_t len = strlen(s), n = hscope__utf8_columns(s, len);
    if (n <= max) {
        hscope__xml_escape(f, s);
        return;
    }
    size_t skip = hscope__utf8_skip_columns(s, len, n - (max - 1));
    hscope__out_puts(f, "\xe2\x80\xa6"); /* … */
    hscope__xml_escape(f, s + skip);
}

/* The start of a chart: the XML declaration, the <svg> element, the title
 * (as <title> and as text) and the subtitle, at x = 20. */
static void
doc_head(hscope__out *f, double W, double H, const char *title, const char *subtitle)
{
    hscope__out_puts(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    hscope__out_printf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                          "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"%s\">\n",
                       W, H, W, H, FONT);
    hscope__out_puts(f, "<title>");
    hscope__xml_escape(f, title);
    hscope__out_puts(f, "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    hscope__out_puts(f, "<text x=\"20\" y=\"32\" font-size=\"19\" font-weight=\"bold\" "
                        "fill=\"#111\">");
    hscope__xml_escape(f, title);
    hscope__out_puts(f, "</text>\n<text x=\"20\" y=\"54\" font-size=\"12.5\" fill=\"#555\">");
    text_tail(f, subtitle ? subtitle : "", 150);
    hscope__out_puts(f, "</text>\n");
}

/* ------------------------------------------------------------------ */
/* numbers and axes                                                   */
/* ------------------------------------------------------------------ */

static double
nice_step(double range, int ticks)
{
    if (!(range > 0))
        return 1;
    double raw = range / ticks;
    double mag = pow(10, floor(log10(raw)));
    double norm = raw / mag;
    double m = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
    return m * mag;
}

/* Trim "2.50" -> "2.5", "3.0" -> "3". */
static void
trim_num(char *s)
{
    if (!strchr(s, '.'))
        return;
    size_t l = strlen(s);
    while (l && s[l - 1] == '0')
        s[--l] = '\0';
    if (l && s[l - 1] == '.')
        s[--l] = '\0';
}

/* Value-axis unit: bytes in binary units, counts with k / M / G. */
typedef struct vunit {
    double div;
    const char *name;
} vunit;

static vunit
pick_unit(double maxabs, int bytes)
{
    vunit u = { 1, bytes ? "B" : "" };
    if (bytes) {
        if (maxabs >= 1024.0 * 1024 * 1024)
            u = (vunit){ 1024.0 * 1024 * 1024, "GB" };
        else if (maxabs >= 1024.0 * 1024)
            u = (vunit){ 1024.0 * 1024, "MB" };
        else if (maxabs >= 1024.0)
            u = (vunit){ 1024.0, "KB" };
    } else {
        if (maxabs >= 1e9)
            u = (vunit){ 1e9, "G" };
        else if (maxabs >= 1e6)
            u = (vunit){ 1e6, "M" };
        else if (maxabs >= 1e4)
            u = (vunit){ 1e3, "k" };
    }
    return u;
}

static void
fmt_tick(double v, vunit u, int bytes, int sign, char *buf, size_t n)
{
    char num[40];
    double x = v / u.div;
    snprintf(num, sizeof(num), "%.3f", fabs(x));
    trim_num(num);
    const char *sg = x < -1e-12 ? "-" : (sign && x > 1e-12 ? "+" : "");
    if (strcmp(num, "0") == 0) {
        snprintf(buf, n, "0");
        return;
    }
    snprintf(buf, n, "%s%s%s%s", sg, num, bytes && *u.name ? " " : "", u.name);
}

/* A value for tooltips: "1.5 MB" or "12,345". */
static void
fmt_value(double v, int bytes, char *buf, size_t n)
{
    if (bytes) {
        hscope__fmt_bytes(v, buf, n);
    } else {
        char tmp[32];
        hscope__fmt_count((uint64_t)fabs(v), tmp, sizeof(tmp));
        snprintf(buf, n, "%s%s", v < 0 ? "-" : "", tmp);
    }
}

/* ------------------------------------------------------------------ */
/* line chart                                                         */
/* ------------------------------------------------------------------ */

typedef struct panel {
    double x0, y0, w, h;     /* pixel box */
    double lo, hi;           /* value range */
} panel;

static double
py(const panel *p, double v)
{
    double r = p->hi - p->lo;
    return p->y0 + p->h - (r > 0 ? (v - p->lo) / r : 0.5) * p->h;
}

/* Value axis: grid lines and labels. */
static void
value_axis(hscope__out *f, const panel *p, int bytes, int sign, const char *label)
{
    vunit u = pick_unit(fmax(fabs(p->hi), fabs(p->lo)), bytes);
    double step = nice_step((p->hi - p->lo) / u.div, 5) * u.div;
    double first = ceil(p->lo / step - 1e-9) * step;
    hscope__out_printf(f, "<g font-size=\"11\" fill=\"#444\" text-anchor=\"end\">\n");
    for (double v = first; v <= p->hi + step * 1e-6; v += step) {
        double y = py(p, v);
        int zero = fabs(v) < step * 1e-6;
        hscope__out_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"1\"/>\n",
                p->x0, y, p->x0 + p->w, y, zero ? "#888" : "#e4e4e4");
        char t[64];
        fmt_tick(zero ? 0 : v, u, bytes, sign, t, sizeof(t));
        hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", p->x0 - 6, y + 4, t);
    }
    hscope__out_printf(f, "</g>\n");
    hscope__out_printf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" font-size=\"12\" "
               "fill=\"#333\" text-anchor=\"middle\">",
            p->x0 - 78, p->y0 + p->h / 2);
    hscope__xml_escape(f, label);
    hscope__out_printf(f, "</text>\n");
}

typedef struct xaxis {
    size_t n;
    double *pos;        /* pixel x of each point */
    const double *t;    /* times, or NULL */
    double t0, tdiv;    /* time axis: origin and unit (seconds) */
    const char *tunit;  /* "minutes", "hours", "days" */
} xaxis;

static void
x_ticks(hscope__out *f, const panel *p, const xaxis *xa, double span)
{
    hscope__out_printf(f, "<g font-size=\"11\" fill=\"#444\" text-anchor=\"middle\">\n");
    if (xa->t) {
        double range = span / xa->tdiv;
        double step = nice_step(range, 8);
        for (double v = 0; v <= range + step * 1e-6; v += step) {
            double x = p->x0 + (range > 0 ? v / range : 0.5) * p->w;
            char t[32];
            snprintf(t, sizeof(t), "%.3f", v);
            trim_num(t);
            hscope__out_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#f0f0f0\"/>\n",
                    x, p->y0, x, p->y0 + p->h);
            hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x, p->y0 + p->h + 16, t);
        }
    } else {
        double step = xa->n <= 16 ? 1 : nice_step((double)(xa->n - 1), 10);
        if (step < 1)
            step = 1;
        for (double v = 0; v < (double)xa->n - 1e-9; v += step) {
            size_t k = (size_t)(v + 0.5);
            hscope__out_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#f0f0f0\"/>\n",
                    xa->pos[k], p->y0, xa->pos[k], p->y0 + p->h);
            hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\">%zu</text>\n", xa->pos[k],
                    p->y0 + p->h + 16, k + 1);
        }
    }
    hscope__out_printf(f, "</g>\n");
}

/* One series as a polyline (+ points with tooltips). */
static void
draw_line(hscope__out *f, const panel *p, const xaxis *xa, const hscope__svg_line *ln,
          const char *color, double width, int delta, int bytes,
          const char *const *names)
{
    size_t n = xa->n;
    double base = delta ? ln->y[0] : 0;
    hscope__out_printf(f, "<g><title>");
    hscope__xml_escape(f, ln->label);
    if (ln->note) {
        hscope__out_puts(f, " (");
        hscope__xml_escape(f, ln->note);
        hscope__out_puts(f, ")");
    }
    hscope__out_printf(f, "</title>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" "
               "stroke-linejoin=\"round\" stroke-linecap=\"round\"%s points=\"",
            color, width, ln->highlight ? "" : " stroke-opacity=\"0.85\"");
    for (size_t k = 0; k < n; k++)
        hscope__out_printf(f, "%s%.1f,%.1f", k ? " " : "", xa->pos[k], py(p, ln->y[k] - base));
    hscope__out_printf(f, "\"/>\n");
    if (n <= 60) {
        for (size_t k = 0; k < n; k++) {
            char v[48];
            fmt_value(ln->y[k] - base, bytes, v, sizeof(v));
            hscope__out_printf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"><title>",
                    xa->pos[k], py(p, ln->y[k] - base), ln->highlight ? 3.5 : 2.0, color);
            hscope__xml_escape(f, ln->label);
            hscope__out_printf(f, ", dump %zu", k + 1);
            if (names && names[k]) {
                hscope__out_puts(f, " (");
                hscope__xml_escape(f, names[k]);
                hscope__out_puts(f, ")");
            }
            hscope__out_printf(f, ": %s%s</title></circle>\n", delta && ln->y[k] - base > 0 ? "+" : "", v);
        }
    }
    hscope__out_printf(f, "</g>\n");
}

static void
panel_frame(hscope__out *f, const panel *p, const char *title)
{
    hscope__out_printf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fcfcfc\" "
               "stroke=\"#bbb\"/>\n", p->x0, p->y0, p->w, p->h);
    hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\" fill=\"#333\">",
            p->x0, p->y0 - 8);
    hscope__xml_escape(f, title);
    hscope__out_printf(f, "</text>\n");
}

#define LINES_W 1120.0
#define LINES_H 736.0
#define LINES_LEFT 104.0
#define LINES_PLOT_W 632.0

/* The value ranges of the two panels, rounded to nice steps in the unit
 * each axis shows: the values (from 0) and the change since dump 1. */
static void
value_ranges(const hscope__svg_lines_chart *c, panel *top, panel *bot)
{
    double maxv = 0, mind = 0, maxd = 0;
    for (size_t i = 0; i < c->nlines; i++)
        for (size_t k = 0; k < c->npoints; k++) {
            double v = c->lines[i].y[k], d = v - c->lines[i].y[0];
            maxv = v > maxv ? v : maxv;
            mind = d < mind ? d : mind;
            maxd = d > maxd ? d : maxd;
        }
    vunit ut = pick_unit(maxv, c->y_bytes);
    double st = nice_step((maxv > 0 ? maxv : 1) / ut.div, 5) * ut.div;
    top->hi = ceil(maxv / st) * st;
    if (top->hi <= 0)
        top->hi = 1;
    if (maxd - mind <= 0) {
        bot->lo = -1;
        bot->hi = 1;
    } else {
        vunit ub = pick_unit(fmax(maxd, -mind), c->y_bytes);
        double sd = nice_step((maxd - mind) / ub.div, 5) * ub.div;
        bot->lo = floor(mind / sd) * sd;
        bot->hi = ceil(maxd / sd) * sd;
    }
}

/* The x axis: the points at their times (minutes, hours or days since
 * the first) when known and not all equal, else evenly spaced; returns
 * the time span. */
static double
x_positions(const hscope__svg_lines_chart *c, xaxis *xa)
{
    size_t n = c->npoints;
    double span = 0;
    if (c->x && n > 1) {
        double t0 = c->x[0], t1 = c->x[0];
        for (size_t k = 0; k < n; k++) {
            t0 = c->x[k] < t0 ? c->x[k] : t0;
            t1 = c->x[k] > t1 ? c->x[k] : t1;
        }
        span = t1 - t0;
        if (span > 0) {
            xa->t = c->x;
            xa->t0 = t0;
            xa->tdiv = span < 2 * 3600.0 ? 60 : span < 72 * 3600.0 ? 3600 : 86400;
            xa->tunit = span < 2 * 3600.0 ? "minutes" : span < 72 * 3600.0 ? "hours" : "days";
        }
    }
    for (size_t k = 0; k < n; k++) {
        double fr = xa->t ? (c->x[k] - xa->t0) / span : n > 1 ? (double)k / (double)(n - 1) : 0.5;
        xa->pos[k] = LINES_LEFT + 8 + fr * (LINES_PLOT_W - 16);
    }
    return span;
}

/* The two panels, their axes, and the x axis label. */
static void
panels(hscope__out *f, const hscope__svg_lines_chart *c, const panel *top, const panel *bot,
       const xaxis *xa, double span)
{
    /* the time axis spans the same inset as the points */
    panel tx = *top, bx = *bot;
    tx.x0 += 8;
    tx.w -= 16;
    bx.x0 += 8;
    bx.w -= 16;
    char t1[96], xl[160];
    snprintf(t1, sizeof(t1), "%s per dump", c->y_label);
    panel_frame(f, top, t1);
    panel_frame(f, bot, "change since the first dump");
    value_axis(f, top, c->y_bytes, 0, c->y_label);
    value_axis(f, bot, c->y_bytes, 1, "change");
    x_ticks(f, &tx, xa, span);
    x_ticks(f, &bx, xa, span);
    if (xa->t) {
        char when[64];
        time_t s0 = (time_t)floor(xa->t0);
        struct tm tm;
        gmtime_r(&s0, &tm);
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
        snprintf(xl, sizeof(xl), "%s since the first dump (%s)", xa->tunit, when);
    } else {
        snprintf(xl, sizeof(xl), "dump, in time order (1 = first)");
    }
    hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#333\" "
                          "text-anchor=\"middle\">",
                       LINES_LEFT + LINES_PLOT_W / 2, bot->y0 + bot->h + 38);
    hscope__xml_escape(f, xl);
    hscope__out_puts(f, "</text>\n");
}

/* Colour of line i: growing lines take the palette in order, the others
 * are grey. */
static const char *
line_color(const hscope__svg_lines_chart *c, size_t i)
{
    size_t gi = 0;
    for (size_t k = 0; k <= i; k++)
        gi += c->lines[k].highlight != 0;
    return c->lines[i].highlight ? palette[(gi - 1) % NPALETTE] : GREY;
}

/* One legend entry: the line's colour, its label and its note. */
static double
legend_entry(hscope__out *f, const hscope__svg_line *ln, const char *color, double x, double y)
{
    hscope__out_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                          "stroke-width=\"%s\" stroke-linecap=\"round\"/>\n",
                       x, y - 4, x + 22, y - 4, color, ln->highlight ? "4" : "2");
    hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\"%s><title>", x + 30, y,
                       ln->highlight ? "#111" : "#444",
                       ln->highlight ? " font-weight=\"bold\"" : "");
    hscope__xml_escape(f, ln->label);
    hscope__out_puts(f, "</title>");
    text_tail(f, ln->label, 38);
    hscope__out_puts(f, "</text>\n");
    y += 15;
    if (ln->note) {
        hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#666\">",
                           x + 30, y);
        text_tail(f, ln->note, 44);
        hscope__out_puts(f, "</text>\n");
        y += 4;
    }
    return y + 14;
}

/* The legend: GROWING, then NOT GROWING, then how many were not plotted. */
static void
legend(hscope__out *f, const hscope__svg_lines_chart *c, double x, double y)
{
    size_t growing = 0;
    for (size_t i = 0; i < c->nlines; i++)
        growing += c->lines[i].highlight != 0;
    hscope__out_puts(f, "<g font-size=\"12.5\">\n");
    for (int pass = 0; pass < 2; pass++) {
        size_t cnt = pass == 0 ? growing : c->nlines - growing;
        if (!cnt && pass == 1)
            continue;
        hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\" "
                              "fill=\"%s\" letter-spacing=\"0.5\">%s</text>\n",
                           x, y, pass == 0 ? "#b01c1c" : "#666",
                           pass == 0 ? (cnt ? "GROWING" : "GROWING: none")
                                     : (growing ? "NOT GROWING" : "NOT GROWING (all plotted groups)"));
        y += 20;
        for (size_t i = 0; i < c->nlines; i++)
            if ((c->lines[i].highlight != 0) == (pass == 0))
                y = legend_entry(f, &c->lines[i], line_color(c, i), x, y);
        y += 8;
    }
    if (c->more)
        hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#666\">"
                              "+%zu more group%s not plotted</text>\n",
                           x, y, c->more, c->more == 1 ? "" : "s");
    hscope__out_puts(f, "</g>\n");
}

void
hscope__svg_lines(hscope__out *f, const hscope__svg_lines_chart *c)
{
    size_t n = c->npoints;
    double *pos = hscope__calloc(c->mem, n ? n : 1, sizeof(double));
    if (!pos) {
        if (f->status == HSCOPE_OK)
            f->status = hscope__nomem(f->err, (n ? n : 1) * sizeof(double));
        return;
    }
    panel top = { LINES_LEFT, 92, LINES_PLOT_W, 300, 0, 1 };
    panel bot = { LINES_LEFT, 456, LINES_PLOT_W, 210, 0, 1 };
    value_ranges(c, &top, &bot);
    xaxis xa = { n, pos, NULL, 0, 3600, "hours" };
    double span = x_positions(c, &xa);
    doc_head(f, LINES_W, LINES_H, c->title, c->subtitle);
    panels(f, c, &top, &bot, &xa, span);
    /* lines: grey first, coloured on top */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->nlines; i++) {
            const hscope__svg_line *ln = &c->lines[i];
            if ((pass == 0) != !ln->highlight)
                continue;
            double w = ln->highlight ? 3.0 : 1.5;
            draw_line(f, &top, &xa, ln, line_color(c, i), w, 0, c->y_bytes, c->point_names);
            draw_line(f, &bot, &xa, ln, line_color(c, i), w, 1, c->y_bytes, c->point_names);
        }
    legend(f, c, LINES_LEFT + LINES_PLOT_W + 36, top.y0 + 4);
    hscope__out_printf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"10.5\" fill=\"#888\">growing: "
                          "count or memsize, slope &gt; 0, R\xc2\xb2 \xe2\x89\xa5 0.8, rise "
                          "\xe2\x89\xa5 max(10 objects or 4 KB, 2%% of mean); hover a line or "
                          "point for its values</text>\n",
                       20.0, LINES_H - 14);
    hscope__out_puts(f, "</svg>\n");
    hscope__free(c->mem, pos);
}

/* ------------------------------------------------------------------ */
/* bar chart                                                          */
/* ------------------------------------------------------------------ */

static void
pct(char *buf, size_t n, uint64_t part, uint64_t total)
{
    double p = hscope__pct(part, total);
    if (part && p < 0.05)
        snprintf(buf, n, " (&lt;0.1%%)");
    else
        snprintf(buf, n, " (%.1f%%)", p);
}

void
hscope__svg_bars(hscope__out *f, const hscope__svg_bars_chart *c)
{
    const double W = 1120, row = 24, top = 104;
    const double label_x = 20, mem_x = 330, cnt_x = 740, bar_max = 240;
    size_t n = c->nbars;
    double H = top + (double)(n ? n : 1) * row + 44;
    uint64_t maxm = 0, maxc = 0;
    for (size_t i = 0; i < n; i++) {
        if (c->bars[i].memsize > maxm)
            maxm = c->bars[i].memsize;
        if (c->bars[i].count > maxc)
            maxc = c->bars[i].count;
    }
    doc_head(f, W, H, c->title, c->subtitle);
    hscope__out_printf(f, "<g font-size=\"13\" font-weight=\"bold\" fill=\"#333\">\n"
               "<text x=\"%.0f\" y=\"%.0f\">group</text>\n"
               "<text x=\"%.0f\" y=\"%.0f\">memsize</text>\n"
               "<text x=\"%.0f\" y=\"%.0f\">objects</text>\n</g>\n",
            label_x, top - 14, mem_x, top - 14, cnt_x, top - 14);
    if (!n)
        hscope__out_printf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\" fill=\"#666\">no objects</text>\n",
                label_x, top + 16);
    hscope__out_printf(f, "<g font-size=\"12\">\n");
    for (size_t i = 0; i < n; i++) {
        const hscope__svg_bar *b = &c->bars[i];
        double y = top + (double)i * row;
        if (i % 2 == 0)
            hscope__out_printf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" fill=\"#f4f4f6\"/>\n",
                    label_x - 8, y, W - 2 * (label_x - 8) - 8, row);
        hscope__out_printf(f, "<g><title>");
        hscope__xml_escape(f, b->label);
        char m[32], cn[32];
        hscope__fmt_bytes((double)b->memsize, m, sizeof(m));
        hscope__fmt_count(b->count, cn, sizeof(cn));
        hscope__out_printf(f, ": %s, %s objects</title>\n", m, cn);
        hscope__out_printf(f, "<text x=\"%.0f\" y=\"%.1f\" fill=\"#222\">", label_x, y + 16.5);
        text_tail(f, b->label, 40);
        hscope__out_printf(f, "</text>\n");
        double wm = maxm ? (double)b->memsize / (double)maxm * bar_max : 0;
        double wc = maxc ? (double)b->count / (double)maxc * bar_max : 0;
        hscope__out_printf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"#4e79a7\"/>\n",
                mem_x, y + 5, wm < 1 && b->memsize ? 1 : wm, row - 10);
        char pm[32] = "", pc[32] = "";
        if (c->total_memsize)
            pct(pm, sizeof(pm), b->memsize, c->total_memsize);
        if (c->total_count)
            pct(pc, sizeof(pc), b->count, c->total_count);
        hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#333\">%s%s</text>\n",
                mem_x + wm + 6, y + 16.5, m, pm);
        hscope__out_printf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" fill=\"#f28e2b\"/>\n",
                cnt_x, y + 5, wc < 1 && b->count ? 1 : wc, row - 10);
        hscope__out_printf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#333\">%s%s</text>\n</g>\n",
                cnt_x + wc + 6, y + 16.5, cn, pc);
    }
    hscope__out_printf(f, "</g>\n");
    hscope__out_printf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"10.5\" fill=\"#888\">memsize: the dump's "
               "memsize field summed per group (bytes, 1 KB = 1024 B); objects: records other "
               "than ROOT, SHAPE and NONE</text>\n", label_x, H - 14);
    hscope__out_printf(f, "</svg>\n");
}
