/*
 * svg.h - the SVG charts (svg.c): timeline lines, tally bars, and XML
 * escaping.
 */
#ifndef HSCOPE_REPORT_SVG_H
#define HSCOPE_REPORT_SVG_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"

/* XML character data: escapes & < > " ', and replaces bytes that are not
 * valid UTF-8 or not XML characters with U+FFFD (NULL: nothing). */
void hscope__xml_escape(hscope__out *o, const char *s);

typedef struct hscope__svg_line {
    const char *label;   /* group key */
    const double *y;     /* npoints values */
    int highlight;       /* growing: coloured and thick; else grey */
    const char *note;    /* shown after the label in the legend, or NULL */
} hscope__svg_line;

typedef struct hscope__svg_lines_chart {
    hscope__mem *mem;          /* for the chart's scratch */
    const char *title;
    const char *subtitle;
    const char *y_label;       /* e.g. "memsize" or "objects" */
    int y_bytes;               /* format the value axis as B/KB/MB/GB */
    size_t npoints;
    const double *x;           /* epoch seconds per point, or NULL: steps */
    const char *const *point_names; /* per point (tooltips), or NULL */
    const hscope__svg_line *lines;
    size_t nlines;
    size_t more;               /* groups not plotted (noted in legend) */
} hscope__svg_lines_chart;

typedef struct hscope__svg_bar {
    const char *label;
    uint64_t memsize;
    uint64_t count;
} hscope__svg_bar;

typedef struct hscope__svg_bars_chart {
    const char *title;
    const char *subtitle;
    const hscope__svg_bar *bars;
    size_t nbars;
    uint64_t total_memsize;    /* for the % column; 0: not shown */
    uint64_t total_count;
} hscope__svg_bars_chart;

/* A self-contained SVG document (1120 px wide). */
void hscope__svg_lines(hscope__out *o, const hscope__svg_lines_chart *c);
void hscope__svg_bars(hscope__out *o, const hscope__svg_bars_chart *c);

#endif
