/*
 * w_generations.c - live objects per allocation generation, each with its
 * top allocation sites (kind "generations"): text and JSON.
 */
#include <stdio.h>
#include <string.h>

#include "../model/model.h"
#include "../analysis/generations.h"
#include "../analysis/tally.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "table.h"
#include "writers.h"

#define SITE_KEY "file:line:class"

/* Text: "generation count memsize  " before the sites. */
#define LEFT 34

static void
text_sites(hscope__out *o, const hscope__ropts *ro, const hscope_tally_t *t)
{
    size_t room = ro->width > LEFT + 12 ? ro->width - LEFT : 12;
    int ascii = (ro->flags & HSCOPE_REPORT_ASCII) != 0;
    for (uint64_t r = 0; r < hscope__tally_row_count(t); r++) {
        char c[32], key[64];
        hscope__fmt_count(hscope__tally_row_count_of(t, r), c, sizeof(c));
        if (r)
            hscope__out_fill(o, ' ', LEFT);
        snprintf(key, sizeof(key), " (%s)", c);
        size_t kl = strlen(key);
        hscope__text_fit(o, hscope__tally_row_key(t, r), room > kl + 8 ? room - kl : 8, 0, ascii);
        hscope__out_printf(o, "%s\n", key);
    }
    if (!hscope__tally_row_count(t))
        hscope__out_putc(o, '\n');
}

static void
text_generation(hscope__out *o, const hscope__ropts *ro, uint32_t g, const hscope_tally_t *t)
{
    uint64_t n, m;
    char a[32], b[32];
    hscope__tally_totals(t, &n, &m);
    hscope__fmt_count(n, a, sizeof(a));
    hscope__fmt_bytes((double)m, b, sizeof(b));
    hscope__out_printf(o, "%10u %10s %10s  ", g, a, b);
    text_sites(o, ro, t);
}

static void
json_generation(hscope__json *w, uint32_t g, const hscope_tally_t *t)
{
    uint64_t n, m;
    hscope__tally_totals(t, &n, &m);
    hscope__json_obj(w);
    hscope__json_ku64(w, "generation", g);
    hscope__json_ku64(w, "count", n);
    hscope__json_ku64(w, "memsize", m);
    hscope__json_groups_of_tally(w, t, 0);
    hscope__json_end_obj(w);
}

static void
head(hscope__out *o, hscope__json *w, const hscope__ropts *ro, hscope_heap_t *h,
     const hscope__gens *gs, const hscope__warnings *ws)
{
    if (ro->format == HSCOPE_FORMAT_JSON) {
        hscope__json_begin_doc(w, "generations");
        hscope__json_dumps_of_heap(w, ro, h, 0);
        hscope__json_kstr(w, "by", SITE_KEY);
        hscope__json_kcm(w, "untraced", gs->untraced, gs->untraced_memsize);
        hscope__json_ku64(w, "excluded_dumper_objects", gs->excluded);
        hscope__json_ku64(w, "generation_count", gs->ngens);
        hscope__json_key(w, "generations");
        hscope__json_arr(w);
        return;
    }
    char a[64], b[32];
    const char *name = hscope__ropts_dump_name(ro, 0);
    hscope__text_warnings(o, ro, ws);
    hscope__fmt_plural(gs->untraced, "object", "objects", a, sizeof(a));
    hscope__fmt_bytes((double)gs->untraced_memsize, b, sizeof(b));
    hscope__out_printf(o, "%s%s%s without allocation info (%s)\n", name ? name : "",
                       name ? ": " : "", a, b);
    hscope__text_excluded(o, gs->excluded);
    if (gs->ngens)
        hscope__out_printf(o, "\n%10s %10s %10s  top sites (%s)\n", "generation", "count",
                           "memsize", SITE_KEY);
}

hscope_status
hscope__generations_write(hscope_heap_t *h, const hscope__ropts *ro, hscope__out *o,
                          hscope_error *err)
{
    hscope__gens gs;
    hscope_status st = hscope__gens_compute(&gs, h, (ro->flags & HSCOPE_REPORT_KEEP_DUMPER) != 0, err);
    if (st != HSCOPE_OK)
        return st;
    hscope__warnings ws;
    ws.n = 0;
    hscope__warn_heap(&ws, hscope__ropts_dump_name(ro, 0), h);
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    head(o, &w, ro, h, &gs, &ws);
    hscope_tally_options to;
    hscope__tally_options_init(&to);
    to.top = ro->top == HSCOPE_TOP_ALL ? 0 : ro->top;
    for (size_t k = 0; k < gs.ngens && st == HSCOPE_OK; k++) {
        hscope_tally_t *t = NULL;
        st = hscope__tally_subset(&t, h, SITE_KEY, gs.ids + gs.start[k],
                                 gs.start[k + 1] - gs.start[k], &to, err);
        if (st != HSCOPE_OK)
            break;
        if (ro->format == HSCOPE_FORMAT_JSON)
            json_generation(&w, gs.value[k], t);
        else
            text_generation(o, ro, gs.value[k], t);
        hscope__tally_free(t);
    }
    if (st == HSCOPE_OK && ro->format == HSCOPE_FORMAT_JSON) {
        hscope__json_end_arr(&w);
        hscope__json_warnings(&w, &ws);
        hscope__json_end_obj(&w);
        hscope__json_done(&w);
    }
    hscope__gens_free(&gs);
    return st;
}
