/*
 * html.h - the HTML report (`heapscope report`, hscope_html_report_*):
 * one self-contained page about one dump, a 2-3 dump leak hunt (diff +
 * suspects) or a series (timeline), with the waste of the last dump.
 *
 *   html.c           the handle: which analyses run for how many dumps
 *   html_page.c      the page frame (head, header, nav, script) and the
 *                    cell and card helpers every section uses
 *   html_sections.c  summary, histograms, sites, retainers, diff,
 *                    suspects, timeline
 *   html_domtree.c   the dominator-tree icicle (its JSON blob)
 *   html_waste.c     the waste section
 *
 * Text from dumps is escaped in one place, hscope__xml_escape() (svg.c);
 * the icicle's data by the JSON writer in its script-safe mode.  Numbers
 * use table.c's formats.  String values are never written.
 */
#ifndef HSCOPE_REPORT_HTML_H
#define HSCOPE_REPORT_HTML_H

#include "writer.h"

struct hscope_html_report {
    hscope__mem mem;
    char **paths;               /* copies, as given */
    uint64_t np;
    const char *main_path;      /* the dump the one-dump sections describe */
    uint32_t flags;             /* HSCOPE_HTML_* */
    char *title;                /* NULL: the default */
    hscope_timeline_t *tl;      /* 2+ dumps */
    hscope_diff_t *diff;        /* 2-3 dumps */
    hscope_suspects_t *sus;     /* 2-3 dumps: holds the dominator tree */
    hscope_heap_t *heap;        /* the last dump (a reference) */
    hscope_domtree_t *tree;     /* owned when there are no suspects */
    hscope_waste_t *waste;      /* NULL: HSCOPE_HTML_NO_WASTE or not possible */
    char waste_note[256];       /* why there is no waste, or "" */
};

/* hscope_html_options checked and completed. */
typedef struct hscope__html_cfg {
    uint32_t flags;
    const char *by;             /* never NULL */
    int32_t order;
    const char *title;
} hscope__html_cfg;

hscope_status hscope__html_compute(hscope_html_report_t **out, const char *const *paths,
                                   uint64_t n, const hscope_load_options *lo,
                                   const hscope__html_cfg *cfg, hscope_error *err);
void hscope__html_free(hscope_html_report_t *r);
/* The whole page (ro->top rows per table). */
hscope_status hscope__html_write(const hscope_html_report_t *r, const hscope__ropts *ro,
                                 hscope__out *o, hscope_error *err);

/* One section writer's context. */
typedef struct hscope__html {
    const hscope_html_report_t *r;
    hscope__out *o;
    uint64_t top;
    hscope_error *err;
} hscope__html;

/* html_page.c: cells, cards, notes */
void hscope__html_td_bytes(hscope__out *o, uint64_t v);
void hscope__html_td_count(hscope__out *o, uint64_t v);
void hscope__html_td_pct(hscope__out *o, uint64_t v, uint64_t total);
void hscope__html_td_text(hscope__out *o, const char *s, const char *cls);
void hscope__html_td_addr(hscope__out *o, uint64_t a);
void hscope__html_td_rank(hscope__out *o, uint64_t i);
void hscope__html_card(hscope__out *o, const char *id, const char *k, const char *v,
                       uint64_t raw);
void hscope__html_card_count(hscope__out *o, const char *id, const char *k, uint64_t v);
void hscope__html_card_bytes(hscope__out *o, const char *id, const char *k, uint64_t v);
/* Each line of a warning text as a visible warning of the page. */
void hscope__html_warn_block(hscope__out *o, const char *text);
/* Ruby's allocation tracer a section left out, said on the page. */
void hscope__html_tracer_note(hscope__out *o, uint64_t n, uint64_t memsize);
/* The dumper's objects a section's tallies left out, said on the page. */
void hscope__html_dumper_note(hscope__out *o, uint64_t n);
/* "TYPE Class" and "file:line" ("" without a site) of an object. */
const char *hscope__html_obj_label(const hscope_heap_t *h, hscope_id id, char *buf, size_t n);
const char *hscope__html_obj_site(const hscope_heap_t *h, hscope_id id, char *buf, size_t n);
/* The SVG of a tally (its bars) or of a timeline, into the page. */
hscope_status hscope__html_chart(hscope__html *x, const hscope_tally_t *t,
                                 const hscope_timeline_t *tl);
/* Page parts around the sections. */
void hscope__html_head(hscope__html *x);
void hscope__html_foot(hscope__html *x);

/* html_sections.c */
hscope_status hscope__html_summary(hscope__html *x);
hscope_status hscope__html_histograms(hscope__html *x);
hscope_status hscope__html_sites(hscope__html *x);
hscope_status hscope__html_retainers(hscope__html *x);
hscope_status hscope__html_diff(hscope__html *x);
hscope_status hscope__html_suspects(hscope__html *x);
hscope_status hscope__html_timeline(hscope__html *x);
/* html_domtree.c */
hscope_status hscope__html_domtree(hscope__html *x);
/* html_waste.c */
void hscope__html_waste(hscope__html *x);

#endif
