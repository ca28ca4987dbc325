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

void
hscope__json_diff_head(hscope__json *w, const hscope_diff_t *d, const hscope__ropts *ro)
{
    hscope__json_key(w, "dumps");
    hscope__json_arr(w);
    for (uint32_t i = 0; i < hscope__diff_dumps(d); i++)
        hscope__json_dump(w, hscope__ropts_dump_name(ro, i), hscope__diff_snapshot_objects(d, i));
    hscope__json_end_arr(w);
    hscope__json_kcm(w, "leaked", hscope__diff_count(d), hscope__diff_memsize(d));
    hscope__json_ku64(w, "excluded_dumper_objects", hscope__diff_excluded(d));
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
    char a[64], b[32];
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
