/*
 * html_sections.c - the sections of the HTML report about one dump
 * (summary, histograms, allocation sites, retainers), a diff (what leaked,
 * what holds it) and a series (what grows over time).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "html.h"
#include "../model/model.h"
#include "../analysis/diff.h"
#include "../analysis/dominators.h"
#include "../analysis/suspects.h"
#include "../analysis/tally.h"
#include "../analysis/timeline.h"
#include "out.h"
#include "svg.h"
#include "table.h"
#include "../analysis/retained.h"

#define MAX_PATH_SHOWN 12

static hscope_domtree_t *
tree_of(const hscope_html_report_t *r)
{
    return r->sus ? hscope__suspects_domtree(r->sus) : r->tree;
}

static void
summary_warnings(hscope__out *o, const hscope_load_stats *s)
{
    if (!(s->skipped_lines || s->dangling_references || s->truncated || s->duplicate_addresses))
        return;
    hscope__out_puts(o, "<p class=\"warn\">");
    char c[32];
    if (s->skipped_lines) {
        hscope__fmt_count(s->skipped_lines, c, sizeof(c));
        hscope__out_printf(o, "%s malformed lines skipped. ", c);
    }
    if (s->dangling_references) {
        hscope__fmt_count(s->dangling_references, c, sizeof(c));
        hscope__out_printf(o, "%s references to addresses not in the dump. ", c);
    }
    if (s->duplicate_addresses) {
        hscope__fmt_count(s->duplicate_addresses, c, sizeof(c));
        hscope__out_printf(o, "%s duplicate addresses. ", c);
    }
    if (s->truncated)
        hscope__out_puts(o, "The dump is truncated. ");
    hscope__out_puts(o, "</p>\n");
}

static void
summary_roots(hscope__out *o, const hscope_heap_t *h)
{
    uint32_t nc = hscope__heap_root_category_count(h);
    if (!nc)
        return;
    hscope__out_puts(o, "<details><summary>ROOT categories</summary>\n<table class=\"sortable\">"
                        "<thead><tr><th>category</th><th>records</th><th>targets</th></tr>"
                        "</thead><tbody>\n");
    for (uint32_t c = 0; c < nc; c++) {
        const hscope_id *tg;
        uint64_t n = 0, nd = 0;
        hscope__heap_root_targets(h, c, &tg, &n, &nd);
        hscope__out_puts(o, "<tr>");
        hscope__html_td_text(o, hscope__heap_root_category_name(h, c), NULL);
        hscope__html_td_count(o, hscope__heap_root_category_records(h, c));
        hscope__html_td_count(o, n);
        hscope__out_puts(o, "</tr>\n");
    }
    hscope__out_puts(o, "</tbody></table></details>\n");
}

hscope_status
hscope__html_summary(hscope__html *x)
{
    hscope__out *o = x->o;
    hscope_heap_t *h = x->r->heap;
    hscope_domtree_t *t = tree_of(x->r);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    hscope__heap_stats(h, &s);
    uint64_t rn = 0, rm = 0, un = 0, um = 0;
    hscope__domtree_totals(t, &rn, &rm, &un, &um);
    hscope__out_puts(o, "<section id=\"summary\"><h2>Summary</h2>\n<p class=\"muted\">Dump <code>");
    hscope__xml_escape(o, x->r->main_path);
    hscope__out_puts(o, "</code>");
    if (s.from_index)
        hscope__out_puts(o, " (opened from its saved index)");
    hscope__out_puts(o, "</p>\n<div class=\"cards\">\n");
    hscope__html_card_count(o, "sum-objects", "objects", s.objects);
    hscope__html_card_bytes(o, "sum-memsize", "total memsize", s.total_memsize);
    hscope__html_card_count(o, "sum-references", "references", s.references);
    hscope__html_card_bytes(o, NULL, "input size", s.input_bytes);
    hscope__html_card_bytes(o, "sum-reachable", "reachable from roots", rm);
    char b[64], c[32];
    hscope__fmt_bytes((double)um, b, sizeof(b));
    hscope__fmt_count(un, c, sizeof(c));
    size_t l = strlen(b);
    snprintf(b + l, sizeof(b) - l, " (%s obj)", c);
    hscope__html_card(o, "sum-unreachable", "unreachable (garbage)", b, un);
    hscope__html_card_count(o, NULL, "root categories", hscope__heap_root_category_count(h));
    if (s.shapes)
        hscope__html_card_count(o, NULL, "shapes", s.shapes);
    if (s.free_slots)
        hscope__html_card_count(o, NULL, "free slots", s.free_slots);
    hscope__out_puts(o, "</div>\n");
    summary_warnings(o, &s);
    summary_roots(o, h);
    hscope__out_puts(o, "</section>\n");
    return HSCOPE_OK;
}

/* Ruby's allocation tracer left out of a section, said there. */
static void
tracer_note(hscope__out *o, const hscope_tally_t *t)
{
    uint64_t n, m;
    hscope__tally_tracer(t, &n, &m);
    hscope__html_tracer_note(o, n, m);
}

static hscope_status
tally_of(hscope__html *x, hscope_tally_t **out, const char *key, uint64_t top)
{
    hscope_tally_options o = HSCOPE_TALLY_OPTIONS_INIT;
    o.sort = HSCOPE_SORT_MEMSIZE;
    o.top = top;
    o.flags = x->r->flags & HSCOPE_HTML_KEEP_DUMPER ? 0 : HSCOPE_TALLY_SKIP_DUMPER;
    if (!(x->r->flags & HSCOPE_HTML_KEEP_TRACER))
        o.flags |= HSCOPE_TALLY_SKIP_TRACER;
    hscope_error e;
    hscope__error_init(&e);
    if (hscope__tally_compute(out, x->r->heap, key, &o, &e) != HSCOPE_OK)
        return hscope__fail(x->err, e.status, "tally by %s: %s", key, e.message);
    return HSCOPE_OK;
}

hscope_status
hscope__html_histograms(hscope__html *x)
{
    hscope_tally_t *ty = NULL, *cl = NULL;
    hscope_status st = tally_of(x, &ty, "type", 0);
    if (st == HSCOPE_OK)
        st = tally_of(x, &cl, "class", x->top < 25 ? x->top : 25);
    if (st == HSCOPE_OK) {
        hscope__out_puts(x->o, "<section id=\"histograms\"><h2>What is on the heap</h2>\n");
        hscope__html_dumper_note(x->o, hscope__tally_excluded(ty));
        tracer_note(x->o, ty);
        st = hscope__html_chart(x, ty, NULL);
    }
    if (st == HSCOPE_OK)
        st = hscope__html_chart(x, cl, NULL);
    if (st == HSCOPE_OK)
        hscope__out_puts(x->o, "</section>\n");
    hscope__tally_free(ty);
    hscope__tally_free(cl);
    return st;
}

static void
tally_table(hscope__out *o, const hscope_tally_t *t, const char *keyname, const char *id)
{
    uint64_t tc = 0, tm = 0;
    hscope__tally_totals(t, &tc, &tm);
    hscope__out_printf(o, "<table class=\"sortable\" id=\"%s\"><thead><tr><th>#</th><th>", id);
    hscope__xml_escape(o, keyname);
    hscope__out_puts(o, "</th><th>objects</th><th>% objects</th><th>memsize</th><th>% memsize</th>"
                        "</tr></thead><tbody>\n");
    for (uint64_t i = 0; i < hscope__tally_row_count(t); i++) {
        hscope__out_puts(o, "<tr>");
        hscope__html_td_rank(o, i);
        hscope__html_td_text(o, hscope__tally_row_key(t, i), "key mono");
        hscope__html_td_count(o, hscope__tally_row_count_of(t, i));
        hscope__html_td_pct(o, hscope__tally_row_count_of(t, i), tc);
        hscope__html_td_bytes(o, hscope__tally_row_memsize(t, i));
        hscope__html_td_pct(o, hscope__tally_row_memsize(t, i), tm);
        hscope__out_puts(o, "</tr>\n");
    }
    hscope__out_puts(o, "</tbody></table>\n");
}

hscope_status
hscope__html_sites(hscope__html *x)
{
    hscope_tally_t *t = NULL;
    hscope_status st = tally_of(x, &t, "file:line:class", x->top);
    if (st != HSCOPE_OK)
        return st;
    hscope__out_printf(x->o, "<section id=\"sites\"><h2>Where it was allocated</h2>\n"
                             "<p class=\"muted\">Live objects by allocation site <code>file:line:"
                             "class</code> (bleak_house style), top %llu of %llu sites by memsize. "
                             "Objects without allocation tracing show as <code>(none):0</code>."
                             "</p>\n",
                       (unsigned long long)hscope__tally_row_count(t),
                       (unsigned long long)hscope__tally_group_count(t));
    hscope__html_dumper_note(x->o, hscope__tally_excluded(t));
    tracer_note(x->o, t);
    tally_table(x->o, t, "file:line:class", "sites-table");
    hscope__out_puts(x->o, "</section>\n");
    hscope__tally_free(t);
    return HSCOPE_OK;
}

hscope_status
hscope__html_retainers(hscope__html *x)
{
    hscope__out *o = x->o;
    const hscope_heap_t *h = x->r->heap;
    hscope_domtree_t *t = tree_of(x->r);
    uint64_t rn = 0, rm = 0, un = 0, um = 0, top = x->top ? x->top : 1;
    hscope__domtree_totals(t, &rn, &rm, &un, &um);
    uint64_t cap = top < hscope__heap_object_count(h) ? top : hscope__heap_object_count(h);
    hscope_id *ids = hscope__malloc((hscope__mem *)&x->r->mem, (size_t)(cap + 2) *
                                                                   sizeof(hscope_id));
    if (!ids)
        return hscope__nomem(x->err, (size_t)(cap + 2) * sizeof(hscope_id));
    hscope_id tracer = x->r->flags & HSCOPE_HTML_KEEP_TRACER ? HSCOPE_ID_NONE
                                                             : hscope__domtree_tracer(t);
    uint64_t n = hscope__domtree_top_app(t, ids, cap, tracer);
    hscope__out_puts(o, "<section id=\"retainers\"><h2>What keeps memory alive</h2>\n"
                        "<p class=\"muted\">Objects with the largest retained size (what would be "
                        "freed if the object went away), from the dominator tree. Nested retainers "
                        "both appear: a retainer's size includes what it dominates.</p>\n"
                        "<table class=\"sortable\" id=\"retainers-table\"><thead><tr><th>#</th>"
                        "<th>address</th><th>object</th><th>allocated at</th><th>self</th>"
                        "<th>retained</th><th>% reachable</th><th>retained objects</th></tr></thead>"
                        "<tbody>\n");
    if (tracer != HSCOPE_ID_NONE)
        hscope__html_tracer_note(o, hscope__domtree_retained_count(t, tracer),
                                 hscope__domtree_retained(t, tracer));
    char lb[512], sb[1024];
    for (uint64_t i = 0; i < n; i++) {
        hscope_id id = ids[i];
        hscope__out_puts(o, "<tr>");
        hscope__html_td_rank(o, i);
        hscope__html_td_addr(o, hscope__heap_object_address(h, id));
        hscope__html_td_text(o, hscope__html_obj_label(h, id, lb, sizeof(lb)), "key");
        hscope__html_td_text(o, hscope__html_obj_site(h, id, sb, sizeof(sb)), "key mono");
        hscope__html_td_bytes(o, hscope__heap_object_memsize(h, id));
        hscope__html_td_bytes(o, hscope__domtree_retained(t, id));
        hscope__html_td_pct(o, hscope__domtree_retained(t, id), rm);
        hscope__html_td_count(o, hscope__domtree_retained_count(t, id));
        hscope__out_puts(o, "</tr>\n");
    }
    hscope__out_puts(o, "</tbody></table>\n</section>\n");
    hscope__free((hscope__mem *)&x->r->mem, ids);
    return HSCOPE_OK;
}

/* --- diff and suspects --------------------------------------------- */

static void
diff_dumps(hscope__html *x, const hscope_diff_t *d)
{
    hscope__out *o = x->o;
    /* two dumps cannot tell a leak from memory still in use (docs/DESIGN.md,
     * "Leaked"): what they show is new since A */
    hscope__out_puts(o, x->r->np == 3 ? "<section id=\"diff\"><h2>What leaked</h2>\n<p class=\"muted\">"
                                      : "<section id=\"diff\"><h2>What is new since A</h2>\n"
                                        "<p class=\"muted\">");
    if (x->r->np == 3)
        hscope__out_puts(o, "Objects born between dump A and dump B and still alive in dump C "
                            "(3-snapshot diff; an address reused by a new object is not a "
                            "survivor).");
    else
        hscope__out_puts(o, "Objects present in dump B and absent from dump A (2-snapshot diff: "
                            "includes short-lived objects; give three dumps for a leak hunt).");
    hscope__out_puts(o, "</p>\n<table><thead><tr><th>dump</th><th>file</th><th>objects</th></tr>"
                        "</thead><tbody>\n");
    for (uint64_t i = 0; i < x->r->np; i++) {
        hscope__out_printf(o, "<tr><td>%c</td>", (char)('A' + i));
        hscope__html_td_text(o, x->r->paths[i], "key mono");
        hscope__html_td_count(o, hscope__diff_snapshot_objects(d, (uint32_t)i));
        hscope__out_puts(o, "</tr>\n");
    }
    hscope__out_puts(o, "</tbody></table>\n");
}

hscope_status
hscope__html_diff(hscope__html *x)
{
    const hscope_diff_t *d = x->r->diff;
    hscope__out *o = x->o;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    to.sort = HSCOPE_SORT_MEMSIZE;
    to.top = x->top;
    hscope_tally_t *t = NULL;
    hscope_error e;
    hscope__error_init(&e);
    if (hscope__diff_tally(&t, d, "file:line:class", &to, &e) != HSCOPE_OK)
        return hscope__fail(x->err, e.status, "diff: %s", e.message);
    diff_dumps(x, d);
    hscope__out_puts(o, "<div class=\"cards\">\n");
    int three = x->r->np == 3;
    hscope__html_card_count(o, "leaked-count", three ? "leaked objects" : "objects new since A",
                            hscope__diff_count(d));
    hscope__html_card_bytes(o, "leaked-memsize", three ? "leaked memsize" : "memsize new since A",
                            hscope__diff_memsize(d));
    hscope__html_card_count(o, NULL, three ? "leak groups (file:line:class)"
                                           : "groups new since A (file:line:class)",
                            hscope__tally_group_count(t));
    hscope__html_card_count(o, NULL, "reused addresses", hscope__diff_reused_addresses(d));
    hscope__html_card_count(o, NULL, "dumper's own objects (left out)", hscope__diff_excluded(d));
    hscope__out_puts(o, "</div>\n");
    hscope__html_warn_block(o, hscope__diff_warning_text(d));
    uint64_t tn, tm;
    hscope__diff_tracer(d, &tn, &tm);
    hscope__html_tracer_note(o, tn, tm);
    char top[32], all[32];
    hscope__fmt_count(hscope__tally_row_count(t), top, sizeof(top));
    hscope__fmt_count(hscope__tally_group_count(t), all, sizeof(all));
    hscope__out_printf(o, "<h3>%s by allocation site (top %s of %s)</h3>\n",
                       three ? "Leaked objects" : "Objects new since A", top, all);
    tally_table(o, t, "file:line:class", "diff-table");
    hscope__out_puts(o, "</section>\n");
    hscope__tally_free(t);
    return HSCOPE_OK;
}

static void
path_list(hscope__out *o, const hscope_heap_t *h, const char *root, const hscope_id *p,
          uint64_t len)
{
    hscope__out_puts(o, "<ol class=\"path\"><li class=\"muted\">root ");
    hscope__xml_escape(o, root ? root : "(unreachable)");
    hscope__out_puts(o, "</li>");
    char lb[512], sb[1024];
    for (uint64_t k = 0; k < len; k++) {
        if (len > MAX_PATH_SHOWN && k == 4) {
            hscope__out_printf(o, "<li class=\"muted\">&hellip; %llu more steps &hellip;</li>",
                               (unsigned long long)(len - MAX_PATH_SHOWN + 1));
            k = len - (MAX_PATH_SHOWN - 5);
        }
        hscope__out_printf(o, "<li><span class=\"mono\">0x%llx</span> ",
                           (unsigned long long)hscope__heap_object_address(h, p[k]));
        hscope__xml_escape(o, hscope__html_obj_label(h, p[k], lb, sizeof(lb)));
        hscope__html_obj_site(h, p[k], sb, sizeof(sb));
        if (*sb) {
            hscope__out_puts(o, " <span class=\"muted mono\">");
            hscope__xml_escape(o, sb);
            hscope__out_puts(o, "</span>");
        }
        hscope__out_puts(o, "</li>");
    }
    hscope__out_puts(o, "</ol>");
}

/* Allocation sites shown per holder (as heapscope suspects). */
#define SUSPECT_SITES_SHOWN 5

/* A holder's cell of what put the leak there: the class it hangs from,
 * the VM table it is, the allocation sites of what it holds (those that
 * put objects in it first). */
static void
suspect_cause(hscope__out *o, const hscope_suspects_t *s, const hscope_heap_t *h, uint64_t i)
{
    hscope_suspect in = { .size = sizeof(in) };
    hscope__out_puts(o, "<td class=\"cause\">");
    if (hscope__suspects_get(s, i, &in) != HSCOPE_OK) {
        hscope__out_puts(o, "</td>");
        return;
    }
    char b[1024];
    if (in.vm_table) {
        snprintf(b, sizeof(b), "Ruby VM table: %s%s. %s.", in.vm_table_name,
                 in.vm_table_leaked ? " (itself among the leaked objects)" : "", in.vm_table_reason);
        hscope__out_puts(o, "<p class=\"vm-table\">");
        hscope__xml_escape(o, b);
        hscope__out_puts(o, "</p></td>");
        return;
    }
    if (in.owner != HSCOPE_ID_NONE) {
        snprintf(b, sizeof(b), "held by %s (%s), %llu step%s from it", in.owner_name,
                 hscope__heap_type_name(h, hscope__heap_object_type(h, in.owner)),
                 (unsigned long long)in.owner_steps, in.owner_steps == 1 ? "" : "s");
        hscope__out_puts(o, "<p class=\"held-by\">");
        hscope__xml_escape(o, b);
        hscope__out_puts(o, "</p>");
    }
    hscope__out_puts(o, "<ul class=\"sites\">");
    for (uint64_t j = 0; j < in.site_count && j < SUSPECT_SITES_SHOWN; j++) {
        hscope_suspect_site t = { .size = sizeof(t) };
        hscope__suspects_site_get(s, i, j, &t);
        char c[32], m[32], k[32], km[32];
        hscope__fmt_count(t.count, c, sizeof(c));
        hscope__fmt_bytes((double)t.memsize, m, sizeof(m));
        if (t.file)
            snprintf(b, sizeof(b), "%s:%u:%s", t.file, t.line, t.class_label);
        else
            snprintf(b, sizeof(b), "(no allocation info):%s", t.class_label);
        hscope__out_puts(o, "<li><span class=\"mono\">");
        hscope__xml_escape(o, b);
        hscope__out_puts(o, "</span>");
        if (t.method) {
            hscope__out_puts(o, " <span class=\"muted\">(method ");
            hscope__xml_escape(o, t.method);
            hscope__out_puts(o, ")</span>");
        }
        hscope__out_printf(o, ": %s objects, %s", c, m);
        if (t.entries) {
            hscope__fmt_count(t.kept_count, k, sizeof(k));
            hscope__fmt_bytes((double)t.kept_memsize, km, sizeof(km));
            hscope__fmt_count(t.entries, c, sizeof(c));
            hscope__out_printf(o, "; <b>%s put in it</b>, keeping %s objects (%s)", c, k, km);
        }
        hscope__out_puts(o, "</li>");
    }
    if (in.site_count > SUSPECT_SITES_SHOWN)
        hscope__out_printf(o, "<li class=\"muted\">&hellip; %llu more sites</li>",
                           (unsigned long long)(in.site_count - SUSPECT_SITES_SHOWN));
    hscope__out_puts(o, "</ul></td>");
}

/* One holder's row: the holder, what it holds of the leak, its path. */
static void
suspect_row(hscope__html *x, uint64_t i, hscope_id *buf, uint64_t max)
{
    hscope__out *o = x->o;
    const hscope_suspects_t *s = x->r->sus;
    const hscope_heap_t *h = x->r->heap;
    hscope_id hid;
    int32_t hcat = -1, pcat = -1;
    uint64_t cnt = 0, mem = 0;
    hscope__holders_get(hscope__suspects_holders(s), i, &hid, &hcat, &cnt, &mem);
    uint64_t len = hid != HSCOPE_ID_NONE ? hscope__suspects_path(s, i, buf, max, &pcat) : 0;
    const char *rootname = hid == HSCOPE_ID_NONE
        ? (hcat >= 0 ? hscope__heap_root_category_name(h, (uint32_t)hcat) : "(several roots)")
        : len ? (pcat >= 0 ? hscope__heap_root_category_name(h, (uint32_t)pcat) : "(roots)") : NULL;
    hscope__out_printf(o, "<tr id=\"suspect-%llu\"", (unsigned long long)i + 1);
    if (hid != HSCOPE_ID_NONE)
        hscope__out_printf(o, " data-addr=\"0x%llx\"",
                           (unsigned long long)hscope__heap_object_address(h, hid));
    hscope__out_puts(o, ">");
    hscope__html_td_rank(o, i);
    char lb[512], sb[1024];
    if (hid != HSCOPE_ID_NONE) {
        hscope__html_td_addr(o, hscope__heap_object_address(h, hid));
        hscope__html_td_text(o, hscope__html_obj_label(h, hid, lb, sizeof(lb)), "key");
        hscope__html_td_text(o, hscope__html_obj_site(h, hid, sb, sizeof(sb)), "key mono");
    } else {
        hscope__out_puts(o, "<td class=\"mono\">ROOT</td>");
        snprintf(lb, sizeof(lb), "root %s holds them directly", rootname);
        hscope__html_td_text(o, lb, "key");
        hscope__html_td_text(o, "", NULL);
    }
    hscope__html_td_count(o, cnt);
    hscope__html_td_bytes(o, mem);
    suspect_cause(o, s, h, i);
    if (hid != HSCOPE_ID_NONE)
        hscope__html_td_bytes(o, hscope__domtree_retained(hscope__suspects_domtree(s), hid));
    else
        hscope__out_puts(o, "<td class=\"n\" data-v=\"0\"></td>");
    hscope__out_puts(o, "<td>");
    if (hid != HSCOPE_ID_NONE)
        path_list(o, h, rootname, buf, len);
    hscope__out_puts(o, "</td></tr>\n");
}

hscope_status
hscope__html_suspects(hscope__html *x)
{
    hscope__out *o = x->o;
    hscope__mem *m = (hscope__mem *)&x->r->mem;
    uint64_t n = hscope__heap_object_count(x->r->heap);
    hscope_id *buf = hscope__malloc(m, (size_t)(n + 1) * sizeof(hscope_id));
    if (!buf)
        return hscope__nomem(x->err, (size_t)(n + 1) * sizeof(hscope_id));
    uint64_t nh = hscope__holders_count(hscope__suspects_holders(x->r->sus));
    uint64_t shown = x->top && x->top < nh ? x->top : nh;
    hscope__out_printf(o, "<section id=\"suspects\"><h2>What holds the leak</h2>\n"
                          "<p class=\"muted\">Leak suspects (as <code>heapscope suspects</code>): "
                          "for each leaked object, the first object up its dominator chain that "
                          "did not leak itself; holders ranked by the leaked memory they hold, the "
                          "Ruby VM's own tables after the application's holders; for each, the "
                          "allocation sites of what it holds, those that put objects in it first. "
                          "Showing %llu of %llu holders, each with a shortest path from a GC "
                          "root.</p>\n<table class=\"sortable\" id=\"suspects-table\"><thead><tr>"
                          "<th>#</th><th>holder</th><th>object</th><th>allocated at</th>"
                          "<th>leaked objects</th><th>leaked memsize</th><th>what put them there</th>"
                          "<th>retained</th>"
                          "<th>path from root</th></tr></thead><tbody>\n",
                       (unsigned long long)shown, (unsigned long long)nh);
    for (uint64_t i = 0; i < shown; i++)
        suspect_row(x, i, buf, n);
    hscope__out_puts(o, "</tbody></table>\n");
    if (nh > shown)
        hscope__out_printf(o, "<p class=\"muted\">%llu more holders not shown (<code>heapscope "
                              "suspects --top 0</code> lists all).</p>\n",
                           (unsigned long long)(nh - shown));
    hscope__out_puts(o, "</section>\n");
    hscope__free(m, buf);
    return HSCOPE_OK;
}

/* --- timeline ------------------------------------------------------ */

/* x * scale rounded, then scaled back: the value the timeline's
 * fixed-point accessors give (hscope_timeline_group_fit()). */
static double
rounded(double x, double scale)
{
    return x != x ? 0.0 : (double)llround(x * scale) / scale;
}

static void
growth_row(hscope__out *o, const hscope_timeline_t *tl, uint64_t i, uint64_t nd)
{
    const hscope__tl_group *g = &tl->g[i];
    const uint64_t *mem = g->memsize, *cnt = g->count;
    int growing = g->growing;
    double slope = nd < 2 ? 0 : rounded(g->slope, 1e3), r2 = nd < 2 ? 0 : rounded(g->r2, 1e6);
    hscope__out_printf(o, "<tr%s>", growing ? " class=\"growing\"" : "");
    hscope__html_td_rank(o, i);
    hscope__html_td_text(o, g->key, "key mono");
    hscope__out_printf(o, "<td data-v=\"%d\"%s>%s</td>", growing, growing ? " class=\"bad\"" : "",
                       growing ? "yes" : "no");
    hscope__html_td_bytes(o, mem[0]);
    hscope__html_td_bytes(o, mem[nd - 1]);
    char b[32];
    double ch = (double)mem[nd - 1] - (double)mem[0];
    hscope__fmt_bytes(ch, b, sizeof(b));
    hscope__out_printf(o, "<td class=\"n\" data-v=\"%.0f\">%s%s</td>", ch, ch > 0 ? "+" : "", b);
    hscope__fmt_bytes(slope, b, sizeof(b));
    hscope__out_printf(o, "<td class=\"n\" data-v=\"%.3f\">%s%s</td>", slope, slope > 0 ? "+" : "",
                       b);
    hscope__out_printf(o, "<td class=\"n\" data-v=\"%.4f\">%.2f</td>", r2, r2);
    hscope__html_td_count(o, cnt[0]);
    hscope__html_td_count(o, cnt[nd - 1]);
    hscope__out_puts(o, "</tr>\n");
}

static void
timeline_dumps(hscope__out *o, const hscope_timeline_t *tl, uint64_t nd)
{
    hscope__out_puts(o, "<details><summary>dumps</summary><table><thead><tr><th>#</th><th>file"
                        "</th></tr></thead><tbody>\n");
    for (uint64_t i = 0; i < nd; i++) {
        hscope__out_printf(o, "<tr><td class=\"n\">%llu</td>", (unsigned long long)i + 1);
        hscope__html_td_text(o, tl->d[i].path, "key mono");
        hscope__out_puts(o, "</tr>\n");
    }
    hscope__out_puts(o, "</tbody></table></details>\n");
}

/* The growth ranking of the timeline (the same fit, verdict and order as
 * `heapscope timeline`); a series of 4+ dumps also says its warnings
 * (damage, series checks) here, a 2-3 dump report with its diff. */
hscope_status
hscope__html_timeline(hscope__html *x)
{
    hscope__out *o = x->o;
    const hscope_timeline_t *tl = x->r->tl;
    uint64_t nd = tl->nd, ng = tl->ng;
    const char *by = tl->by;
    uint64_t excluded = 0;
    for (uint64_t i = 0; i < nd; i++)
        excluded += tl->d[i].excluded;
    hscope__out_puts(o, "<section id=\"timeline\"><h2>What grows over time</h2>\n");
    char rule[320];
    hscope__grow_rule_text(tl->min_dumps, rule, sizeof(rule));
    hscope__out_printf(o, "<p class=\"muted\">%llu dumps, in time order (%s, %s). ",
                       (unsigned long long)nd, tl->order.name, tl->order.source);
    hscope__xml_escape(o, rule);
    hscope__out_puts(o, " (as <code>heapscope timeline</code>).</p>\n");
    timeline_dumps(o, tl, nd);
    if (x->r->np > 3)
        hscope__html_warn_block(o, tl->warn_text ? tl->warn_text : "");
    hscope__html_dumper_note(o, excluded);
    /* the tracer lives as long as the tracing: the last dump's size */
    hscope__html_tracer_note(o, tl->d[nd - 1].tracer, tl->d[nd - 1].tracer_mem);
    hscope_status st = hscope__html_chart(x, NULL, tl);
    if (st != HSCOPE_OK)
        return st;
    uint64_t shown = x->top && x->top < ng ? x->top : ng;
    char top[32], all[32];
    hscope__fmt_count(shown, top, sizeof(top));
    hscope__fmt_count(ng, all, sizeof(all));
    hscope__out_printf(o, "<h3>Growth ranking (top %s of %s groups by %s)</h3>\n", top, all, by);
    hscope__out_puts(o, "<table class=\"sortable\" id=\"growth-table\"><thead><tr><th>#</th><th>");
    hscope__xml_escape(o, by);
    hscope__out_puts(o, "</th><th>growing</th><th>first</th><th>last</th><th>change</th>"
                        "<th>slope / dump</th><th>R&sup2;</th><th>objects first</th>"
                        "<th>objects last</th></tr></thead><tbody>\n");
    for (uint64_t i = 0; i < shown; i++)
        growth_row(o, tl, i, nd);
    hscope__out_puts(o, "</tbody></table>\n</section>\n");
    return HSCOPE_OK;
}
