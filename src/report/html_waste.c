/*
 * html_waste.c - the waste section of the HTML report: what
 * the last dump could shrink, as `heapscope waste` finds it (duplicate
 * strings, empty collections, oversized buffers) by allocation site,
 * biggest saving first.  Values are never written: a value is its length
 * and the first 8 hex digits of its hash, as the waste writer shows it.
 */
#include <stdio.h>

#include "html.h"
#include "../core/intern.h"
#include "../analysis/waste.h"
#include "out.h"
#include "svg.h"
#include "table.h"
#include "writers.h"

static void
waste_cards(hscope__out *o, const hscope_waste_t *w)
{
    const hscope_waste_totals *t = &w->tot;
    hscope__out_puts(o, "<div class=\"cards\">\n");
    hscope__html_card_bytes(o, "waste-saving", "recoverable", t->saving);
    char b[32];
    double pct = hscope__pct(t->saving, t->memsize);
    snprintf(b, sizeof(b), "%.1f%%", pct);
    hscope__html_card(o, NULL, "of the heap's memsize", b, 0);
    hscope__html_card_bytes(o, "waste-duplicate", "duplicate strings", t->duplicate_saving);
    hscope__html_card_bytes(o, "waste-empty", "empty collections", t->empty_saving);
    hscope__html_card_bytes(o, "waste-oversized", "oversized buffers", t->oversized_saving);
    hscope__out_puts(o, "</div>\n");
    if (t->warnings & HSCOPE_WASTE_WARN_NO_TRACING)
        hscope__out_puts(o, "<p class=\"warn\">No finding has an allocation site: the dump was "
                            "written without allocation tracing.</p>\n");
    if (t->warnings & HSCOPE_WASTE_WARN_SKIPPED)
        hscope__out_puts(o, "<p class=\"warn\">The dump had skipped lines or was cut short: "
                            "the findings may be incomplete.</p>\n");
    hscope__html_dumper_note(o, t->excluded);
    hscope__html_tracer_note(o, w->tracer, w->tracer_mem);
}

static void
waste_places(hscope__out *o, const hscope_waste_t *w, uint64_t top)
{
    uint64_t n = w->nrows, shown = top < n ? top : n;
    if (!n) {
        hscope__out_puts(o, "<p class=\"muted\">Nothing to shrink was found.</p>\n");
        return;
    }
    hscope__out_printf(o, "<h3>Places to change (top %llu of %llu)</h3>\n"
                          "<table class=\"sortable\" id=\"waste-table\"><thead><tr><th>#</th>"
                          "<th>file:line</th><th>finding</th><th>objects</th><th>saving</th>"
                          "<th>memsize of the objects</th><th>fix</th></tr></thead><tbody>\n",
                       (unsigned long long)shown, (unsigned long long)n);
    for (uint64_t i = 0; i < shown; i++) {
        const hscope__wrow *r = &w->rows[i];
        char f[64];
        snprintf(f, sizeof(f), "%s %s", hscope__waste_kind_name(r->kind),
                 hscope__waste_type_name(r->type));
        hscope__out_puts(o, "<tr>");
        hscope__html_td_rank(o, i);
        hscope__html_td_text(o, hscope__intern_str(&w->keys, r->key), "key mono");
        hscope__html_td_text(o, f, NULL);
        hscope__html_td_count(o, r->count);
        hscope__html_td_bytes(o, r->saving);
        hscope__html_td_bytes(o, r->memsize);
        hscope__html_td_text(o, hscope__intern_str(&w->fixes, r->fix), NULL);
        hscope__out_puts(o, "</tr>\n");
    }
    hscope__out_puts(o, "</tbody></table>\n");
}

static void
waste_values(hscope__out *o, const hscope_waste_t *w, uint64_t top)
{
    uint64_t n = w->nvals, shown = top < n ? top : n;
    if (!n)
        return;
    hscope__out_printf(o, "<h3>Duplicated values (top %llu of %llu)</h3>\n"
                          "<table class=\"sortable\" id=\"waste-values\"><thead><tr><th>#</th>"
                          "<th>value</th><th>copies</th><th>saving</th><th>frozen</th>"
                          "<th>sites</th><th>most copies at</th></tr></thead><tbody>\n",
                       (unsigned long long)shown, (unsigned long long)n);
    for (uint64_t i = 0; i < shown; i++) {
        const hscope__wval *v = &w->vals[i];
        const char *key = v->nsites
            ? hscope__intern_str(&w->keys, (uint32_t)w->srefs[v->sfirst].idx) : NULL;
        char vb[64];
        hscope__waste_short_value(v->length, v->hash, vb, sizeof(vb));
        hscope__out_printf(o, "<tr data-hash=\"%016llx\">", (unsigned long long)v->hash);
        hscope__html_td_rank(o, i);
        hscope__html_td_text(o, vb, "mono");
        hscope__html_td_count(o, v->copies);
        hscope__html_td_bytes(o, v->saving);
        hscope__html_td_count(o, v->frozen);
        hscope__html_td_count(o, v->nsites);
        hscope__html_td_text(o, key, "key mono");
        hscope__out_puts(o, "</tr>\n");
    }
    hscope__out_puts(o, "</tbody></table>\n");
}

void
hscope__html_waste(hscope__html *x)
{
    const hscope_html_report_t *r = x->r;
    hscope__out *o = x->o;
    if (r->flags & HSCOPE_HTML_NO_WASTE)
        return;
    hscope__out_puts(o, "<section id=\"waste\"><h2>What could shrink</h2>\n<p class=\"muted\">"
                        "Waste in <code>");
    hscope__xml_escape(o, r->main_path);
    hscope__out_puts(o, "</code> (as <code>heapscope waste</code>): duplicate strings, empty "
                        "collections and oversized buffers by allocation site, biggest saving "
                        "first. Values are not shown: each is its length and the first 8 hex "
                        "digits of its hash.</p>\n");
    if (!r->waste) {
        hscope__out_puts(o, "<p class=\"warn\">Not computed: ");
        hscope__xml_escape(o, r->waste_note);
        hscope__out_puts(o, "</p>\n</section>\n");
        return;
    }
    waste_cards(o, r->waste);
    waste_places(o, r->waste, x->top);
    waste_values(o, r->waste, x->top);
    hscope__out_puts(o, "</section>\n");
}
