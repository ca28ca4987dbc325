/*
 * timeline.c - what grows over time: fold every dump into group totals
 * (hscope__tally_file(), on a pool of threads), merge them into one series
 * per group, fit a least-squares line to each series (core/fit.c), give
 * the "growing" verdict and rank the groups.  docs/TIMELINE.md has the
 * rules: the dump order (order.c), the verdict, the ranking.
 *
 * Memory: the groups times the dumps (two u64 per cell) plus one fold in
 * flight per thread; each dump's tally is merged and freed as soon as it
 * is folded.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../core/core.h"
#include "order.h"
#include "series.h"
#include "tally.h"
#include "timeline.h"

/* ------------------------------------------------------------------ */
/* folding the dumps                                                   */
/* ------------------------------------------------------------------ */

typedef struct fold_job fold_job;

typedef struct fold_ctx {
    hscope_timeline_t *tl;
    hscope_load_options lo;          /* per fold: threads, progress wrapper */
    const hscope_load_options *user; /* the caller's (progress callback) */
    hscope_tally_options to;
    pthread_mutex_t mu;
    fold_job *jobs;
    hscope_tally_t *const *pre;      /* tallies made already, by given index */
    size_t *idx;                     /* group positions + 1, open addressing */
    size_t icap;
} fold_ctx;

struct fold_job {
    fold_ctx *c;
    uint64_t i;                      /* the dump, in time order */
    hscope_status st;
    hscope_error err;
    hscope_fingerprint_t *fp;
    uint64_t done, total;            /* progress, input bytes */
};

static hscope_status
index_grow(fold_ctx *c, hscope_error *err)
{
    hscope_timeline_t *tl = c->tl;
    size_t cap = c->icap ? c->icap * 2 : 1024;
    size_t *idx = hscope__calloc(&tl->mem, cap, sizeof(size_t));
    if (!idx)
        return hscope__nomem(err, cap * sizeof(size_t));
    for (size_t i = 0; i < tl->ng; i++) {
        const char *k = tl->g[i].key;
        size_t p = (size_t)XXH3_64bits(k, strlen(k)) & (cap - 1);
        while (idx[p])
            p = (p + 1) & (cap - 1);
        idx[p] = i + 1;
    }
    hscope__free(&tl->mem, c->idx);
    c->idx = idx;
    c->icap = cap;
    return HSCOPE_OK;
}

/* The group of `key`, made on first sight; NULL when out of memory (err
 * filled).  Called with the lock held. */
static hscope__tl_group *
group_of(fold_ctx *c, const char *key, hscope_error *err)
{
    hscope_timeline_t *tl = c->tl;
    if ((tl->ng + 1) * 2 > c->icap && index_grow(c, err) != HSCOPE_OK)
        return NULL;
    size_t len = strlen(key);
    size_t p = (size_t)XXH3_64bits(key, len) & (c->icap - 1);
    while (c->idx[p]) {
        hscope__tl_group *g = &tl->g[c->idx[p] - 1];
        if (strcmp(g->key, key) == 0)
            return g;
        p = (p + 1) & (c->icap - 1);
    }
    if (hscope__grow(&tl->mem, (void **)&tl->g, &tl->gcap, tl->ng + 1, sizeof(*tl->g),
                     err) != HSCOPE_OK)
        return NULL;
    hscope__tl_group *g = &tl->g[tl->ng];
    memset(g, 0, sizeof(*g));
    g->key = hscope__strndup(&tl->mem, key, len);
    g->count = hscope__calloc(&tl->mem, (size_t)tl->nd * 2, sizeof(uint64_t));
    if (!g->key || !g->count) {
        hscope__free(&tl->mem, g->key);
        hscope__free(&tl->mem, g->count);
        hscope__nomem(err, (size_t)tl->nd * 16);
        return NULL;
    }
    g->memsize = g->count + tl->nd;
    c->idx[p] = ++tl->ng;
    return g;
}

/* What a fold leaves behind: the dump's totals, damage counts and
 * fingerprint, and its rows merged into the groups.  Lock held. */
static hscope_status
merge(fold_ctx *c, fold_job *j, const hscope_tally_t *t)
{
    hscope_timeline_t *tl = c->tl;
    hscope__tl_dump *d = &tl->d[j->i];
    d->stats.size = sizeof(d->stats);
    hscope__tally_stats(t, &d->stats);
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        d->skipped[r] = hscope__tally_skipped(t, r);
    d->excluded = hscope__tally_excluded(t);
    hscope__tally_tracer(t, &d->tracer, &d->tracer_mem);
    hscope__tally_totals(t, &d->count, &d->memsize);
    uint64_t rows = hscope__tally_row_count(t);
    for (uint64_t r = 0; r < rows; r++) {
        hscope__tl_group *g = group_of(c, hscope__tally_row_key(t, r), &j->err);
        if (!g)
            return j->err.status;
        g->count[j->i] += hscope__tally_row_count_of(t, r);
        g->memsize[j->i] += hscope__tally_row_memsize(t, r);
    }
    return HSCOPE_OK;
}

/* The caller's progress callback sees the bytes of every dump, from one
 * thread at a time. */
static int32_t
fold_progress(void *ud, uint64_t done, uint64_t total)
{
    fold_job *j = ud;
    fold_ctx *c = j->c;
    pthread_mutex_lock(&c->mu);
    j->done = done;
    if (total)
        j->total = total;
    uint64_t sd = 0, stot = 0;
    for (uint64_t i = 0; i < c->tl->nd; i++) {
        sd += c->jobs[i].done;
        stot += c->jobs[i].total;
    }
    int32_t rc = c->user->progress(c->user->progress_user_data, sd, stot);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static int
fold_one(void *ctx, uint64_t i)
{
    fold_ctx *c = ctx;
    fold_job *j = &c->jobs[i];
    hscope_load_options lo = c->lo;
    if (lo.progress)
        lo.progress_user_data = j;
    hscope_tally_t *t = NULL;
    hscope__error_init(&j->err);
    hscope_tally_t *pre = c->pre ? c->pre[c->tl->d[i].given] : NULL;
    if (pre)
        t = pre;
    else
        j->st = hscope__tally_file(&t, c->tl->d[i].path, c->tl->by, &lo, &c->to, &j->err);
    if (j->st == HSCOPE_OK)
        j->st = hscope__fingerprint_copy(&j->fp, hscope__tally_fingerprint(t), &j->err);
    pthread_mutex_lock(&c->mu);
    if (j->st == HSCOPE_OK)
        j->st = merge(c, j, t);
    j->done = j->total;
    pthread_mutex_unlock(&c->mu);
    if (!pre)
        hscope__tally_free(t);
    return j->st != HSCOPE_OK;
}

void
hscope__timeline_tally_options(uint32_t flags, hscope_tally_options *to)
{
    hscope__tally_options_init(to);
    to->flags = HSCOPE_TALLY_FINGERPRINT; /* for the series checks */
    if (!(flags & HSCOPE_TIMELINE_KEEP_DUMPER))
        to->flags |= HSCOPE_TALLY_SKIP_DUMPER;
    if (!(flags & HSCOPE_TIMELINE_KEEP_TRACER))
        to->flags |= HSCOPE_TALLY_SKIP_TRACER;
}

static void
fold_setup(fold_ctx *c, const hscope_load_options *lo, uint32_t threads)
{
    c->lo = *lo;
    c->user = lo;
    uint32_t cores = hscope__cores();
    /* dumps folded at once share the cores: each fold's parser gets its
     * part (all of them for a single dump) */
    if (!c->lo.threads)
        c->lo.threads = threads < cores ? cores / threads : 1;
    if (lo->progress)
        c->lo.progress = fold_progress;
    hscope__timeline_tally_options(c->tl->flags, &c->to);
    for (uint64_t i = 0; i < c->tl->nd; i++) {
        struct stat st;
        c->jobs[i].c = c;
        c->jobs[i].i = i;
        c->jobs[i].total = stat(c->tl->d[i].path, &st) == 0 ? (uint64_t)st.st_size : 0;
    }
}

/* ------------------------------------------------------------------ */
/* warnings                                                            */
/* ------------------------------------------------------------------ */

static hscope_status HS_PRINTF(4, 5)
add_warning(hscope_timeline_t *tl, uint32_t bit, const char *code, const char *fmt, ...)
{
    hscope_error err;
    hscope__error_init(&err);
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    hscope_status st = hscope__grow(&tl->mem, (void **)&tl->w, &tl->wcap, tl->nw + 1,
                                    sizeof(*tl->w), &err);
    char *m = st == HSCOPE_OK ? hscope__strndup(&tl->mem, msg, strlen(msg)) : NULL;
    if (!m)
        return HSCOPE_ERR_NOMEM;
    tl->w[tl->nw].code = code;
    tl->w[tl->nw].message = m;
    tl->nw++;
    tl->warn |= bit;
    return HSCOPE_OK;
}

/* The series checks, pair by pair so that each finding keeps its code. */
static hscope_status
series_warnings(hscope_timeline_t *tl, fold_job *jobs)
{
    for (uint64_t i = 1; i < tl->nd; i++) {
        const hscope_fingerprint_t *fps[2] = { jobs[i - 1].fp, jobs[i].fp };
        const char *names[2] = { tl->d[i - 1].path, tl->d[i].path };
        char text[1024];
        uint32_t w = hscope__series_check(fps, names, 2, text, sizeof(text));
        if (!w)
            continue;
        const char *code = (w & HSCOPE_DIFF_WARN_REPEATED) ? "repeated"
                         : (w & HSCOPE_DIFF_WARN_DIFFERENT_PROCESS) ? "different_process"
                         : "backwards";
        if (add_warning(tl, w, code, "%s", text) != HSCOPE_OK)
            return HSCOPE_ERR_NOMEM;
    }
    return HSCOPE_OK;
}

static hscope_status
join_warnings(hscope_timeline_t *tl, hscope_error *err)
{
    size_t len = 1;
    for (size_t i = 0; i < tl->nw; i++)
        len += strlen(tl->w[i].message) + 1;
    tl->warn_text = hscope__malloc(&tl->mem, len);
    if (!tl->warn_text)
        return hscope__nomem(err, len);
    char *p = tl->warn_text;
    for (size_t i = 0; i < tl->nw; i++) {
        size_t l = strlen(tl->w[i].message);
        if (i)
            *p++ = '\n';
        memcpy(p, tl->w[i].message, l);
        p += l;
    }
    *p = '\0';
    return HSCOPE_OK;
}

/* The series checks as warnings; a damaged dump (its load statistics are
 * kept per dump; the writers say it) sets HSCOPE_DIFF_WARN_SKIPPED. */
static hscope_status
warnings(hscope_timeline_t *tl, fold_job *jobs, hscope_error *err)
{
    for (uint64_t i = 0; i < tl->nd; i++)
        if (tl->d[i].stats.skipped_lines || tl->d[i].stats.truncated)
            tl->warn |= HSCOPE_DIFF_WARN_SKIPPED;
    if (series_warnings(tl, jobs) != HSCOPE_OK)
        return hscope__nomem(err, 1024);
    return join_warnings(tl, err);
}

/* ------------------------------------------------------------------ */
/* the fit, the verdict and the ranking                                */
/* ------------------------------------------------------------------ */

/* One series judged by the growing rule (docs/TIMELINE.md): a sustained
 * rise (slope > 0, R^2), the last value above the first, and a fitted
 * rise that matters (an absolute floor and a share of the mean). */
static int
series_grows(const hscope__fit *f, double first, double last, uint64_t n, double floor_abs)
{
    double rise = f->slope * (double)(n - 1);
    double need = HSCOPE__GROW_MIN_RISE_FRACTION * f->mean;
    if (need < floor_abs)
        need = floor_abs;
    return n >= 2 && f->slope > 0 && f->r2 >= HSCOPE__GROW_MIN_R2 && rise >= need && last > first;
}

/* The "growing" verdict, whatever the metric: enough dumps and the
 * object count or the memsize growing.  Both series are judged so that
 * the metric a table is ranked by never hides a leak: 18 more objects of
 * 40 bytes per dump are 720 bytes, under the memsize floor, but a steady
 * rise of objects.  xs: the step indices; ys: scratch of n values. */
int
hscope__grow_verdict(const hscope__tl_group *g, uint64_t n, uint32_t min_dumps, const double *xs,
                     double *ys)
{
    if (n < min_dumps || n < 2)
        return 0;
    for (int m = 0; m < 2; m++) {
        const uint64_t *v = m ? g->memsize : g->count;
        for (uint64_t i = 0; i < n; i++)
            ys[i] = (double)v[i];
        hscope__fit f;
        hscope__fit_line(xs, ys, n, &f);
        if (series_grows(&f, ys[0], ys[n - 1], n,
                         m ? HSCOPE__GROW_MIN_RISE_BYTES : HSCOPE__GROW_MIN_RISE_COUNT))
            return 1;
    }
    return 0;
}

/* The rule in words, for the writers (text, HTML, SVG). */
void
hscope__grow_rule_text(uint32_t min_dumps, char *buf, size_t n)
{
    snprintf(buf, n, "a group is growing when, over %u+ dumps, its object count or its memsize "
                     "rises: slope > 0, R2 >= %.1f, last > first, fitted rise >= max(%.0f objects "
                     "or %.0f KB, %.0f%% of the mean)",
             min_dumps, HSCOPE__GROW_MIN_R2, HSCOPE__GROW_MIN_RISE_COUNT,
             HSCOPE__GROW_MIN_RISE_BYTES / 1024, HSCOPE__GROW_MIN_RISE_FRACTION * 100);
}

/* xs, ys, hs: scratch of nd values each. */
static void
group_fit(hscope_timeline_t *tl, hscope__tl_group *g, double *xs, double *ys, double *hs)
{
    uint64_t n = tl->nd;
    int times = tl->order.times_known;
    for (uint64_t i = 0; i < n; i++) {
        xs[i] = (double)i;
        ys[i] = (double)hscope__tl_value(tl, g, i);
        if (times)
            hs[i] = (tl->d[i].time - tl->d[0].time) / 3600.0;
    }
    hscope__fit f;
    hscope__fit_line(xs, ys, n, &f);
    g->mean = f.mean;
    g->last = ys[n - 1];
    g->slope = n >= 2 ? f.slope : 0;
    g->r2 = n >= 2 ? f.r2 : 0;
    g->rise = g->slope * (double)(n - 1);
    g->has_slope_h = 0;
    if (times && n >= 2) {
        hscope__fit fh;
        hscope__fit_line(hs, ys, n, &fh);
        g->slope_h = fh.slope;
        g->has_slope_h = fh.ok;
    }
    g->growing = hscope__grow_verdict(g, n, tl->min_dumps, xs, ys);
    g->score = g->slope * g->r2;
}

static int
cmp_growth(const void *a, const void *b)
{
    const hscope__tl_group *x = a, *y = b;
    if (x->growing != y->growing)
        return y->growing - x->growing;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->last != y->last)
        return x->last > y->last ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* The "grew" view: the change from the first dump to the last (score). */
static int
cmp_change(const void *a, const void *b)
{
    const hscope__tl_group *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return strcmp(x->key, y->key);
}

static hscope_status
rank(hscope_timeline_t *tl, hscope_error *err)
{
    size_t n = (size_t)tl->nd;
    double *s = hscope__calloc(&tl->mem, n * 3, sizeof(double));
    if (!s)
        return hscope__nomem(err, n * 3 * sizeof(double));
    int grew = (tl->flags & HSCOPE_TIMELINE_GREW) != 0;
    tl->growing = 0;
    for (size_t i = 0; i < tl->ng; i++) {
        hscope__tl_group *g = &tl->g[i];
        group_fit(tl, g, s, s + n, s + 2 * n);
        if (grew)
            g->score = (double)hscope__tl_value(tl, g, n - 1) -
                       (double)hscope__tl_value(tl, g, 0);
        tl->growing += (size_t)g->growing;
    }
    hscope__free(&tl->mem, s);
    if (tl->ng)
        qsort(tl->g, tl->ng, sizeof(*tl->g), grew ? cmp_change : cmp_growth);
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* the handle                                                          */
/* ------------------------------------------------------------------ */

void
hscope__timeline_free(hscope_timeline_t *tl)
{
    if (!tl)
        return;
    hscope__mem m = tl->mem;
    for (size_t i = 0; i < tl->ng; i++) {
        hscope__free(&m, tl->g[i].key);
        hscope__free(&m, tl->g[i].count);
    }
    for (uint64_t i = 0; tl->d && i < tl->nd; i++)
        hscope__free(&m, tl->d[i].path);
    for (size_t i = 0; i < tl->nw; i++)
        hscope__free(&m, tl->w[i].message);
    hscope__free(&m, tl->w);
    hscope__free(&m, tl->warn_text);
    hscope__free(&m, tl->g);
    hscope__free(&m, tl->d);
    hscope__free(&m, tl);
}

uint64_t
hscope__timeline_memory(const hscope_timeline_t *tl)
{
    if (!tl)
        return 0;
    uint64_t n = 0;
    for (size_t i = 0; i < tl->ng; i++) {
        const void *b[] = { tl->g[i].key, tl->g[i].count };
        n += hscope__msize_sum(b, 2);
    }
    for (uint64_t i = 0; tl->d && i < tl->nd; i++)
        n += hscope__msize_sum((const void *const *)&tl->d[i].path, 1);
    for (size_t i = 0; i < tl->nw; i++)
        n += hscope__msize_sum((const void *const *)&tl->w[i].message, 1);
    const void *b[] = { tl->w, tl->warn_text, tl->g, tl->d, tl };
    return n + hscope__msize_sum(b, sizeof(b) / sizeof(b[0]));
}

/* The dumps in time order, with copies of their paths. */
static hscope_status
set_dumps(hscope_timeline_t *tl, const char *const *paths, int32_t order, hscope_error *err)
{
    size_t n = (size_t)tl->nd;
    hscope__dump_time *dt = hscope__calloc(&tl->mem, n, sizeof(*dt));
    tl->d = hscope__calloc(&tl->mem, n, sizeof(*tl->d));
    if (!dt || !tl->d) {
        hscope__free(&tl->mem, dt);
        return hscope__nomem(err, n * (sizeof(*dt) + sizeof(*tl->d)));
    }
    hscope_status st = hscope__order_dumps(paths, tl->nd, order, dt, &tl->order, err);
    for (size_t i = 0; st == HSCOPE_OK && i < n; i++) {
        hscope__tl_dump *d = &tl->d[i];
        const char *p = paths[dt[i].given];
        d->given = dt[i].given;
        d->has_time = dt[i].has_time;
        d->time = dt[i].time;
        if (!(d->path = hscope__strndup(&tl->mem, p, strlen(p))))
            st = hscope__nomem(err, strlen(p) + 1);
    }
    hscope__free(&tl->mem, dt);
    return st;
}

/* The first dump (in time order) that failed: its error, naming it. */
static hscope_status
fold_error(const hscope_timeline_t *tl, const fold_ctx *c, hscope_error *err)
{
    for (uint64_t i = 0; i < tl->nd; i++) {
        const fold_job *j = &c->jobs[i];
        if (j->st == HSCOPE_OK)
            continue;
        return hscope__fail_for_file(err, &j->err, tl->d[i].path);
    }
    return HSCOPE_OK;
}

static hscope_status
fold_all(hscope_timeline_t *tl, const hscope_load_options *lo, uint32_t threads,
         hscope_tally_t *const *pre, hscope_error *err)
{
    fold_ctx c;
    memset(&c, 0, sizeof(c));
    c.tl = tl;
    c.pre = pre;
    pthread_mutex_init(&c.mu, NULL);
    c.jobs = hscope__calloc(&tl->mem, (size_t)tl->nd, sizeof(*c.jobs));
    hscope_status st = HSCOPE_OK;
    if (!c.jobs) {
        st = hscope__nomem(err, (size_t)tl->nd * sizeof(*c.jobs));
        goto done;
    }
    if (!threads)
        threads = hscope__cores();
    if (threads > tl->nd)
        threads = (uint32_t)tl->nd;
    if (lo->line_fn)
        threads = 1; /* the caller's line callback is called on one thread */
    fold_setup(&c, lo, threads);
    hscope__pool_run(tl->nd, threads, fold_one, &c);
    if ((st = fold_error(tl, &c, err)) == HSCOPE_OK && (st = warnings(tl, c.jobs, err)) == HSCOPE_OK)
        st = rank(tl, err);
done:
    for (uint64_t i = 0; c.jobs && i < tl->nd; i++)
        hscope__fingerprint_free(c.jobs[i].fp);
    hscope__free(&tl->mem, c.jobs);
    hscope__free(&tl->mem, c.idx);
    pthread_mutex_destroy(&c.mu);
    return st;
}

const char *
hscope__timeline_key(const hscope_timeline_options *o)
{
    return hscope__tally_key_name(o->by ? o->by : "file:line:class");
}

hscope_status
hscope__timeline_compute(hscope_timeline_t **out, const char *const *paths, uint64_t n,
                         const hscope_load_options *lo, const hscope_timeline_options *o,
                         hscope_error *err)
{
    return hscope__timeline_compute_pre(out, paths, n, lo, o, NULL, err);
}

hscope_status
hscope__timeline_compute_pre(hscope_timeline_t **out, const char *const *paths, uint64_t n,
                             const hscope_load_options *lo, const hscope_timeline_options *o,
                             hscope_tally_t *const *pre, hscope_error *err)
{
    hscope__mem m;
    hscope__mem_init(&m, lo->allocator, 0);
    hscope_timeline_t *tl = hscope__calloc(&m, 1, sizeof(*tl));
    if (!tl)
        return hscope__nomem(err, sizeof(*tl));
    tl->mem = m;
    atomic_store(&tl->mem.used, atomic_load(&m.used));
    tl->flags = o->flags;
    tl->metric = o->metric ? o->metric : HSCOPE_METRIC_MEMSIZE;
    tl->min_dumps = o->min_dumps ? o->min_dumps : HSCOPE__GROW_MIN_DUMPS;
    tl->by = hscope__timeline_key(o);
    tl->nd = n;
    int32_t order = (o->flags & HSCOPE_TIMELINE_GREW) ? HSCOPE_ORDER_GIVEN : o->order;
    hscope_status st = set_dumps(tl, paths, order, err);
    if (st == HSCOPE_OK)
        st = fold_all(tl, lo, o->threads, pre, err);
    if (st != HSCOPE_OK) {
        hscope__timeline_free(tl);
        return st;
    }
    *out = tl;
    return HSCOPE_OK;
}
