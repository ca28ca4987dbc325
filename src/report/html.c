/*
 * html.c - the HTML report's handle: the analyses a page needs, by the
 * number of dumps (see html.h), and the page in section order.
 *
 *   1 dump     the heap, its dominator tree
 *   2-3 dumps  the diff and its suspects (whose dominator tree the one-dump
 *              sections use), and the timeline from the same reads: its
 *              folds of the earlier dumps ride the diff's passes over them,
 *              the last dump's tally is the diff's loaded heap's, so each
 *              dump is read once
 *   4+ dumps   the timeline (time order); the last dump in time loaded
 *   always     the waste of the last dump (one streamed pass over its
 *              file, hscope_waste_file(), before the loads so that their
 *              peaks do not add up), unless HSCOPE_HTML_NO_WASTE
 */
#include <stdio.h>
#include <string.h>

#include "html.h"
#include "../model/model.h"
#include "../analysis/diff.h"
#include "../analysis/dominators.h"
#include "../analysis/order.h"
#include "../analysis/series.h"
#include "../analysis/suspects.h"
#include "../analysis/tally.h"
#include "../analysis/timeline.h"
#include "../analysis/waste.h"
#include "out.h"

/* The error of one step (src) as the report's, its message prefixed with
 * the step's name. */
static hscope_status
step_failed(hscope_error *err, const hscope_error *src, const char *what)
{
    hscope_status st = hscope__fail(err, src->status, "%s: %s", what, src->message);
    if (err && err->status == src->status) {
        err->sys_errno = src->sys_errno;
        err->line = src->line;
        err->offset = src->offset;
    }
    return st;
}

static hscope_status
copy_paths(hscope_html_report_t *r, const char *const *paths, uint64_t n, hscope_error *err)
{
    r->paths = hscope__calloc(&r->mem, (size_t)n, sizeof(char *));
    if (!r->paths)
        return hscope__nomem(err, (size_t)n * sizeof(char *));
    r->np = n;
    for (uint64_t i = 0; i < n; i++) {
        size_t len = strlen(paths[i]) + 1;
        r->paths[i] = hscope__malloc(&r->mem, len);
        if (!r->paths[i])
            return hscope__nomem(err, len);
        memcpy(r->paths[i], paths[i], len);
    }
    return HSCOPE_OK;
}

static void
timeline_options(const hscope__html_cfg *cfg, hscope_timeline_options *to)
{
    *to = (hscope_timeline_options)HSCOPE_TIMELINE_OPTIONS_INIT;
    to->by = cfg->by;
    to->order = cfg->order;
    /* the library's default metric, as timeline and diff --grew */
    to->flags = cfg->flags & HSCOPE_HTML_KEEP_DUMPER ? HSCOPE_TIMELINE_KEEP_DUMPER : 0;
    if (cfg->flags & HSCOPE_HTML_KEEP_TRACER)
        to->flags |= HSCOPE_TIMELINE_KEEP_TRACER;
}

/* 4+ dumps: the timeline folds each dump. */
static hscope_status
compute_timeline(hscope_html_report_t *r, const hscope_load_options *lo,
                 const hscope__html_cfg *cfg, hscope_error *err)
{
    hscope_timeline_options to;
    timeline_options(cfg, &to);
    hscope_load_options tlo = *lo;
    tlo.flags &= ~(uint32_t)HSCOPE_LOAD_USE_INDEX; /* folds read the dumps */
    return hscope__timeline_compute(&r->tl, (const char *const *)r->paths, r->np, &tlo, &to,
                                    err);
}

/* The timeline's fold of one of the diff's streamed dumps. */
typedef struct ride {
    hscope__fold *fold;
    hscope_tally_t *tally;
    const char *path;
} ride;

static hscope_status
ride_sink(void *ud, hscope__builder *b, const hscope__objrec *o, hscope_error *err)
{
    return hscope__fold_sink(((ride *)ud)->fold, b, o, err);
}

static hscope_status
ride_done(void *ud, const hscope__builder *b, uint64_t in_bytes, int gz, uint64_t ns,
          hscope_error *err)
{
    ride *rd = ud;
    return hscope__fold_finish(rd->fold, b, rd->path, in_bytes, gz, ns, &rd->tally, err);
}

/* An error of the diff's passes: the dump's own errors (cannot open it,
 * not a dump) as a load's, naming it; the rest as the diff's. */
static hscope_status
diff_failed(const hscope_html_report_t *r, hscope_error *err, const hscope_error *e)
{
    for (uint64_t i = 0; i < r->np; i++)
        if (strstr(e->message, r->paths[i]))
            return hscope__fail_for_file(err, e, r->paths[i]);
    return step_failed(err, e, "diff");
}

/* The diff, with the timeline's folds of the dumps before the last riding
 * its passes over them; nb: those dumps (1 or 2). */
static hscope_status
diff_riding(hscope_html_report_t *r, const hscope_load_options *lo, ride *rd, uint64_t nb,
            hscope_error *e)
{
    hscope_diff_options dopt = HSCOPE_DIFF_OPTIONS_INIT;
    if (r->flags & HSCOPE_HTML_KEEP_DUMPER)
        dopt.flags |= HSCOPE_DIFF_KEEP_DUMPER;
    if (r->flags & HSCOPE_HTML_KEEP_TRACER)
        dopt.flags |= HSCOPE_DIFF_KEEP_TRACER;
    hscope__diff_base rb[2];
    memset(rb, 0, sizeof(rb));
    for (uint64_t i = 0; i < nb; i++) {
        rb[i].rider = ride_sink;
        rb[i].rider_done = ride_done;
        rb[i].rider_ud = &rd[i];
    }
    return hscope__diff_files_riding(&r->diff, r->paths[0], r->paths[1],
                                     r->np == 3 ? r->paths[2] : NULL, lo, &dopt, &rb[0],
                                     nb > 1 ? &rb[1] : NULL, e);
}

/* 2-3 dumps: the diff and the timeline from the same reads, then the
 * suspects. */
static hscope_status
compute_diff(hscope_html_report_t *r, const hscope_load_options *lo,
             const hscope__html_cfg *cfg, const hscope_dom_options *dop, hscope_error *err)
{
    hscope_timeline_options to;
    timeline_options(cfg, &to);
    hscope_tally_options tao;
    hscope__timeline_tally_options(to.flags, &tao);
    const char *key = hscope__timeline_key(&to);
    uint64_t nb = r->np - 1;
    ride rd[2];
    hscope_tally_t *pre[3] = { NULL, NULL, NULL };
    memset(rd, 0, sizeof(rd));
    hscope_error e;
    hscope__error_init(&e);
    hscope_status st = HSCOPE_OK;
    for (uint64_t i = 0; i < nb && st == HSCOPE_OK; i++) {
        rd[i].path = r->paths[i];
        st = hscope__fold_new(&rd[i].fold, lo->allocator, key, &tao, &e);
    }
    if (st == HSCOPE_OK && (st = diff_riding(r, lo, rd, nb, &e)) != HSCOPE_OK)
        st = diff_failed(r, err, &e);
    else if (st != HSCOPE_OK)
        st = step_failed(err, &e, "timeline");
    for (uint64_t i = 0; i < nb; i++) {
        hscope__fold_free(rd[i].fold);
        pre[i] = rd[i].tally;
    }
    if (st == HSCOPE_OK) {
        /* the last dump's tally and fingerprint from the diff's heap */
        hscope_heap_t *h = hscope__diff_heap(r->diff);
        hscope_fingerprint_t *fp = NULL;
        r->heap = hscope__heap_ref(h);
        if ((st = hscope__tally_compute(&pre[nb], h, key, &tao, &e)) == HSCOPE_OK &&
            (st = hscope__heap_fingerprint(&fp, h, r->paths[nb], &e)) == HSCOPE_OK)
            hscope__tally_set_fingerprint(pre[nb], fp);
        if (st == HSCOPE_OK)
            st = hscope__timeline_compute_pre(&r->tl, (const char *const *)r->paths, r->np, lo,
                                              &to, pre, &e);
        if (st != HSCOPE_OK)
            st = step_failed(err, &e, "timeline");
    }
    for (uint64_t i = 0; i <= nb; i++)
        hscope__tally_free(pre[i]);
    if (st == HSCOPE_OK && hscope__suspects_compute(&r->sus, r->diff, dop, &e) != HSCOPE_OK)
        st = step_failed(err, &e, "suspects");
    return st;
}

/* 1 or 4+ dumps: the last one loaded, its dominator tree. */
static hscope_status
compute_heap(hscope_html_report_t *r, const hscope_load_options *lo,
             const hscope_dom_options *dop, hscope_error *err)
{
    hscope_error e;
    hscope__error_init(&e);
    if (hscope__heap_open_file(&r->heap, r->main_path, lo, &e) != HSCOPE_OK)
        return hscope__fail_for_file(err, &e, r->main_path);
    if (hscope__domtree_compute(&r->tree, r->heap, dop, &e) != HSCOPE_OK)
        return step_failed(err, &e, "dominators");
    return HSCOPE_OK;
}

/* The waste of the last dump; a dump that cannot be read twice (not a
 * regular file) gets a note instead. */
static hscope_status
compute_waste(hscope_html_report_t *r, const hscope_load_options *lo, hscope_error *err)
{
    if (r->flags & HSCOPE_HTML_NO_WASTE)
        return HSCOPE_OK;
    hscope_waste_options wo = HSCOPE_WASTE_OPTIONS_INIT;
    if (r->flags & HSCOPE_HTML_KEEP_DUMPER)
        wo.flags |= HSCOPE_WASTE_KEEP_DUMPER;
    if (r->flags & HSCOPE_HTML_KEEP_TRACER)
        wo.flags |= HSCOPE_WASTE_KEEP_TRACER;
    hscope_load_options wlo = *lo;
    wlo.flags &= ~(uint32_t)HSCOPE_LOAD_USE_INDEX;
    hscope_error werr;
    hscope__error_init(&werr);
    hscope__wcfg cfg;
    hscope_status st = hscope__wcfg_read(&wo, &cfg, &werr);
    if (st == HSCOPE_OK)
        st = hscope__waste_file(&r->waste, r->main_path, &wlo, &cfg, &werr);
    if (st == HSCOPE_ERR_UNSUPPORTED) {
        snprintf(r->waste_note, sizeof(r->waste_note), "%s", werr.message);
        return HSCOPE_OK;
    }
    if (st != HSCOPE_OK) /* the dump's own errors (cannot open it) as a load's */
        return strstr(werr.message, r->main_path) ? hscope__fail_for_file(err, &werr, r->main_path)
                                                  : step_failed(err, &werr, "waste");
    return HSCOPE_OK;
}

static hscope_status
compute_all(hscope_html_report_t *r, const hscope_load_options *lo,
            const hscope__html_cfg *cfg, hscope_error *err)
{
    hscope_dom_options dop = HSCOPE_DOM_OPTIONS_INIT;
    if (cfg->flags & HSCOPE_HTML_NO_CLASS_EDGES)
        dop.flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    r->main_path = r->paths[r->np - 1];
    hscope_status st = HSCOPE_OK;
    if (r->np > 3) {
        st = compute_timeline(r, lo, cfg, err);
        if (st == HSCOPE_OK)
            r->main_path = r->tl->d[r->np - 1].path;
    }
    /* the waste pass before the loads: its working memory (the value
     * table, the ring) is gone by the time the heap and its dominator
     * tree are built, so the peak is the larger of the two, not their sum */
    if (st == HSCOPE_OK)
        st = compute_waste(r, lo, err);
    if (st == HSCOPE_OK)
        st = r->np == 2 || r->np == 3 ? compute_diff(r, lo, cfg, &dop, err)
                                      : compute_heap(r, lo, &dop, err);
    return st;
}

hscope_status
hscope__html_compute(hscope_html_report_t **out, const char *const *paths, uint64_t n,
                     const hscope_load_options *lo, const hscope__html_cfg *cfg,
                     hscope_error *err)
{
    hscope__mem m;
    hscope__mem_init(&m, lo->allocator, 0);
    hscope_html_report_t *r = hscope__calloc(&m, 1, sizeof(*r));
    if (!r)
        return hscope__nomem(err, sizeof(*r));
    r->mem = m;
    r->flags = cfg->flags;
    hscope_status st = copy_paths(r, paths, n, err);
    if (st == HSCOPE_OK && cfg->title) {
        size_t len = strlen(cfg->title) + 1;
        r->title = hscope__malloc(&r->mem, len);
        if (r->title)
            memcpy(r->title, cfg->title, len);
        else
            st = hscope__nomem(err, len);
    }
    if (st == HSCOPE_OK)
        st = compute_all(r, lo, cfg, err);
    if (st != HSCOPE_OK) {
        hscope__html_free(r);
        return st;
    }
    *out = r;
    return HSCOPE_OK;
}

void
hscope__html_free(hscope_html_report_t *r)
{
    if (!r)
        return;
    hscope__waste_free(r->waste);
    hscope__domtree_free(r->tree);
    hscope__suspects_free(r->sus);
    hscope__heap_release(r->heap);
    hscope__diff_free(r->diff);
    hscope__timeline_free(r->tl);
    for (uint64_t i = 0; r->paths && i < r->np; i++)
        hscope__free(&r->mem, r->paths[i]);
    hscope__free(&r->mem, r->paths);
    hscope__free(&r->mem, r->title);
    hscope__mem m = r->mem;
    hscope__free(&m, r);
}

hscope_status
hscope__html_write(const hscope_html_report_t *r, const hscope__ropts *ro, hscope__out *o,
                   hscope_error *err)
{
    hscope__html x = { r, o, ro->top, err };
    hscope__html_head(&x);
    hscope_status st = hscope__html_summary(&x);
    if (st == HSCOPE_OK && r->diff)
        st = hscope__html_diff(&x);
    if (st == HSCOPE_OK && r->diff)
        st = hscope__html_suspects(&x);
    if (st == HSCOPE_OK && r->tl)
        st = hscope__html_timeline(&x);
    if (st == HSCOPE_OK)
        st = hscope__html_histograms(&x);
    if (st == HSCOPE_OK)
        st = hscope__html_sites(&x);
    if (st == HSCOPE_OK)
        st = hscope__html_retainers(&x);
    if (st == HSCOPE_OK)
        st = hscope__html_domtree(&x);
    if (st == HSCOPE_OK)
        hscope__html_waste(&x);
    if (st == HSCOPE_OK)
        hscope__html_foot(&x);
    return st;
}
