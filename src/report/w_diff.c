/*
 * w_diff.c - a diff (kind "diff"): text, JSON, CSV.  Also the head that
 * the suspects writer shares: the dumps and the leaked totals.
 */
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "../analysis/diff.h"
#include "../analysis/tally.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "table.h"
#include "writers.h"

/* The series checks that leave a diff without an answer: the same dump
 * twice, dumps of two processes, dumps out of time order. */
#define NO_VERDICT_WARNINGS \
    (HSCOPE_DIFF_WARN_REPEATED | HSCOPE_DIFF_WARN_DIFFERENT_PROCESS | HSCOPE_DIFF_WARN_BACKWARDS)

/* "these dumps cannot tell what leaked: " and the series checks' lines
 * (joined by "; ") into buf; 0 when the series is sound. */
static int
no_verdict(const hscope_diff_t *d, char *buf, size_t n)
{
    if (!(hscope__diff_warnings(d) & NO_VERDICT_WARNINGS))
        return 0;
    size_t len = (size_t)snprintf(buf, n, "these dumps cannot tell what %s",
                                  hscope__diff_dumps(d) == 3 ? "leaked" : "is new");
    const char *p = hscope__diff_warning_text(d);
    int first = 1;
    for (uint32_t i = 0; *p; i++) {
        size_t l = strcspn(p, "\n");
        if ((hscope__diff_warning_code(d, i) & NO_VERDICT_WARNINGS) && len + 4 < n) {
            int w = snprintf(buf + len, n - len, "%s%.*s", first ? ": " : "; ", (int)l, p);
            len += w > 0 ? (size_t)w : 0;
            first = 0;
        }
        p += l + (p[l] == '\n');
    }
    return 1;
}

void
hscope__json_diff_head(hscope__json *w, const hscope_diff_t *d, const hscope__ropts *ro)
{
    char nv[2048];
    hscope__json_kstr(w, "no_verdict", no_verdict(d, nv, sizeof(nv)) ? nv : NULL);
    hscope__json_key(w, "dumps");
    hscope__json_arr(w);
    for (uint32_t i = 0; i < hscope__diff_dumps(d); i++)
        hscope__json_dump(w, hscope__ropts_dump_name(ro, i), hscope__diff_snapshot_objects(d, i));
    hscope__json_end_arr(w);
    hscope__json_kcm(w, "leaked", hscope__diff_count(d), hscope__diff_memsize(d));
    hscope__json_ku64(w, "excluded_dumper_objects", hscope__diff_excluded(d));
    uint64_t tn, tm;
    hscope__diff_tracer(d, &tn, &tm);
    hscope__json_kcm(w, "excluded_tracer", tn, tm);
    hscope__json_ku64(w, "reused_addresses", hscope__diff_reused_addresses(d));
    /* identity by Ruby 4.0+'s object ids: how many, and the note */
    hscope__json_ku64(w, "object_id_matches", hscope__diff_object_id_matches(d));
    hscope__json_ku64(w, "moved_objects", hscope__diff_moved_objects(d));
    hscope__json_key(w, "notes");
    hscope__json_arr(w);
    if (*hscope__diff_note_text(d))
        hscope__json_str(w, hscope__diff_note_text(d));
    hscope__json_end_arr(w);
}

void
hscope__text_diff_head(hscope__out *o, const hscope_diff_t *d, const hscope__ropts *ro)
{
    uint32_t nd = hscope__diff_dumps(d);
    char a[64], b[32], nv[2048];
    /* first, whatever the warnings' destination: the counts below mean
     * nothing on such a series */
    if (no_verdict(d, nv, sizeof(nv)))
        hscope__out_printf(o, "NO VERDICT: %s\n\n", nv);
    for (uint32_t i = 0; i < nd; i++) {
        const char *name = hscope__ropts_dump_name(ro, i);
        hscope__fmt_plural(hscope__diff_snapshot_objects(d, i), "object", "objects", a, sizeof(a));
        if (name)
            hscope__out_printf(o, "%c: %s (%s)\n", 'A' + (int)i, name, a);
        else
            hscope__out_printf(o, "%c: %s\n", 'A' + (int)i, a);
    }
    hscope__fmt_plural(hscope__diff_count(d), "object", "objects", a, sizeof(a));
    hscope__fmt_bytes((double)hscope__diff_memsize(d), b, sizeof(b));
    if (nd == 3)
        hscope__out_printf(o, "\nleaked: %s, %s (new in B since A, still alive in C)\n", a, b);
    else
        hscope__out_printf(o, "\nnew in B: %s, %s (absent from A)\n", a, b);
    hscope__text_excluded(o, hscope__diff_excluded(d));
    uint64_t tn, tm;
    hscope__diff_tracer(d, &tn, &tm);
    hscope__text_excluded_tracer(o, tn, tm);
    if (*hscope__diff_note_text(d))
        hscope__out_printf(o, "note: %s\n", hscope__diff_note_text(d));
}

static void
diff_json(const hscope_diff_t *d, const hscope_tally_t *t, const hscope__ropts *ro,
          const hscope__warnings *ws, hscope__out *o)
{
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    hscope__json_begin_doc(&w, "diff");
    hscope__json_diff_head(&w, d, ro);
    hscope__json_kstr(&w, "by", hscope__tally_by(t));
    hscope__json_groups_of_tally(&w, t, (ro->flags & HSCOPE_REPORT_ADDRESSES) != 0);
    hscope__json_warnings(&w, ws);
    hscope__json_end_obj(&w);
    hscope__json_done(&w);
}

static void
diff_text(const hscope_diff_t *d, const hscope_tally_t *t, const hscope__ropts *ro,
          const hscope__warnings *ws, hscope__out *o)
{
    hscope__text_warnings(o, ro, ws);
    hscope__text_diff_head(o, d, ro);
    if (!hscope__tally_row_count(t))
        return;
    const char *by = hscope__tally_by(t);
    char title[64];
    snprintf(title, sizeof(title), "by %s", by ? by : "key");
    hscope__out_putc(o, '\n');
    hscope__tally_text(t, ro, o, title, 0, 0,
                       (ro->flags & HSCOPE_REPORT_ADDRESSES) ? UINT64_MAX : 3);
}

hscope_status
hscope__diff_write(const hscope_diff_t *d, const hscope_tally_t *groups,
                   const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    hscope_tally_t *own = NULL;
    if (!groups) {
        hscope_tally_options to;
        hscope__tally_options_init(&to);
        to.top = ro->top == HSCOPE_TOP_ALL ? 0 : ro->top;
        hscope_status st = hscope__diff_tally(&own, d, "file:line:class", &to, err);
        if (st != HSCOPE_OK)
            return st;
        groups = own;
    } else if (hscope__tally_heap(groups) != hscope__diff_heap(d)) {
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                            "groups: not a tally of this diff (hscope__diff_tally())");
    }
    hscope__warnings ws;
    ws.n = 0;
    hscope__warn_diff(&ws, d);
    if (ro->format == HSCOPE_FORMAT_JSON) {
        diff_json(d, groups, ro, &ws, o);
    } else if (ro->format == HSCOPE_FORMAT_CSV) {
        hscope__tally_write(groups, ro, o);
    } else {
        diff_text(d, groups, ro, &ws, o);
    }
    hscope__tally_free(own);
    return HSCOPE_OK;
}
