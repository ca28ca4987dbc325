/*
 * lazy.c - what `heapscope serve` computes once, on first use, on a
 * thread of its own (see serve.h): no request waits for it; until it is
 * done the endpoints that need it answer 202 and the page shows it being
 * computed.  The dominator tree and the paths from the roots of three
 * dumps are the suspects' own (one of each, not two).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static void *
compute_suspects(hscope_srv *s, const char *key, hscope_error *err)
{
    (void)key;
    if (s->cfg.n != 3) {
        snprintf(err->message, sizeof(err->message),
                 "the leak views need three dumps A B C (%u given)", s->cfg.n);
        return NULL;
    }
    hscope_srv_leaks *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    if (hscope_diff_compute(&l->diff, s->cfg.heaps[0], s->cfg.heaps[1], s->cfg.heaps[2], NULL,
                            err) != HSCOPE_OK ||
        hscope_suspects_compute(&l->suspects, l->diff, NULL, err) != HSCOPE_OK) {
        hscope_diff_free(l->diff);
        free(l);
        return NULL;
    }
    return l;
}

static void
release_leaks(void *p)
{
    hscope_srv_leaks *l = p;
    hscope_suspects_free(l->suspects);
    hscope_diff_free(l->diff);
    free(l);
}

static void *
compute_domtree(hscope_srv *s, const char *key, hscope_error *err)
{
    (void)key;
    hscope_domtree_t *t = NULL;
    if (s->cfg.n == 3) { /* the suspects' tree is of the last dump: share it */
        int st = 0;
        double sec = 0;
        hscope_srv_leaks *l = hscope_srv_job_get(s, HSCOPE_SRV_SUSPECTS, NULL, 1, &st, &sec, err);
        if (!l)
            return NULL;
        t = hscope_suspects_domtree(l->suspects);
        if (hscope_domtree_heap(t) == s->heap)
            return t;
        t = NULL;
    }
    if (hscope_domtree_compute(&t, s->heap, NULL, err) != HSCOPE_OK)
        return NULL;
    return t;
}

static void
release_domtree(void *p)
{
    (void)p; /* freed below, unless it is the suspects' (see state_free) */
}

/* With three dumps the suspects hold the paths of the last one: shared
 * (one array per object, not two), as the dominator tree is.  NULL when
 * they are not of the served heap. */
static void *
shared_paths(hscope_srv *s, hscope_error *err)
{
    int st = 0;
    double sec = 0;
    hscope_srv_leaks *l = hscope_srv_job_get(s, HSCOPE_SRV_SUSPECTS, NULL, 1, &st, &sec, err);
    if (!l)
        return NULL;
    const hscope_paths_t *p = hscope_suspects_paths(l->suspects);
    hscope_domtree_t *t = hscope_suspects_domtree(l->suspects);
    return p && hscope_domtree_heap(t) == s->heap ? (void *)p : NULL;
}

static void *
compute_paths(hscope_srv *s, const char *key, hscope_error *err)
{
    (void)key;
    hscope_paths_t *p = NULL;
    if (s->cfg.n == 3 && (p = shared_paths(s, err)) != NULL)
        return p;
    if (hscope_paths_compute(&p, s->heap, NULL, err) != HSCOPE_OK)
        return NULL;
    return p;
}

static void
release_paths(void *p)
{
    (void)p; /* freed in state_free, unless it is the suspects' */
}

static void *
compute_timeline(hscope_srv *s, const char *key, hscope_error *err)
{
    hscope_timeline_options to;
    hscope_timeline_options_init(&to);
    to.by = key;
    hscope_load_options lo = s->cfg.lo;
    lo.flags &= ~(uint32_t)HSCOPE_LOAD_VALUES;
    hscope_timeline_t *tl = NULL;
    if (hscope_timeline_compute(&tl, s->cfg.paths, s->cfg.n, &lo, &to, err) != HSCOPE_OK)
        return NULL;
    return tl;
}

static void
release_timeline(void *p)
{
    hscope_timeline_free(p);
}

/* The objects of one row of a tally (key "BY\nROW": a class's objects, a
 * site's), the heap taken a slice at a time: only the row's list is kept,
 * and the grouping of a slice is all that is held meanwhile, not the
 * whole heap's rows with every member. */
#define DRILL_SLICE 65536

static int
drill_slice(hscope_srv *s, const char *by, const char *row, hscope_id *ids, uint64_t cnt,
            hscope_srv_members *m, uint64_t *cap, hscope_error *err)
{
    hscope_tally_options to;
    hscope_tally_options_init(&to);
    hscope_tally_t *t = NULL;
    if (hscope_tally_subset(&t, s->heap, by, ids, cnt, &to, err) != HSCOPE_OK)
        return -1;
    uint64_t rows = hscope_tally_row_count(t), i = 0;
    while (i < rows && strcmp(hscope_tally_row_key(t, i), row) != 0)
        i++;
    const hscope_id *in = NULL;
    uint64_t n = 0;
    int rc = 0;
    if (i < rows && hscope_tally_row_objects(t, i, &in, &n) == HSCOPE_OK && n) {
        if (m->n + n > *cap) {
            uint64_t c = (m->n + n) * 2;
            hscope_id *p = realloc(m->ids, c * sizeof(*p));
            if (!p)
                rc = -1;
            else
                m->ids = p, *cap = c;
        }
        if (rc == 0) {
            memcpy(m->ids + m->n, in, n * sizeof(*in));
            m->n += n;
            m->memsize += hscope_tally_row_memsize(t, i);
        }
    }
    hscope_tally_free(t);
    return rc;
}

static void *
compute_drill(hscope_srv *s, const char *key, hscope_error *err)
{
    const char *nl = strchr(key, '\n');
    char by[32];
    if (!nl || nl - key >= (ptrdiff_t)sizeof(by)) {
        snprintf(err->message, sizeof(err->message), "bad drill job key");
        return NULL;
    }
    memcpy(by, key, (size_t)(nl - key));
    by[nl - key] = 0;
    uint64_t total = hscope_heap_object_count(s->heap), cap = 0;
    hscope_srv_members *m = calloc(1, sizeof(*m));
    hscope_id *ids = malloc(DRILL_SLICE * sizeof(*ids));
    int rc = m && ids ? 0 : -1;
    for (uint64_t at = 0; at < total && rc == 0; at += DRILL_SLICE) {
        uint64_t cnt = total - at < DRILL_SLICE ? total - at : DRILL_SLICE;
        for (uint64_t i = 0; i < cnt; i++)
            ids[i] = (hscope_id)(at + i);
        rc = drill_slice(s, by, nl + 1, ids, cnt, m, &cap, err);
    }
    free(ids);
    if (rc != 0) {
        if (m)
            free(m->ids);
        free(m);
        return NULL;
    }
    hscope_id *fit = m->n ? realloc(m->ids, m->n * sizeof(*fit)) : NULL;
    if (fit) /* kept as long as the server runs: no room to spare */
        m->ids = fit;
    return m;
}

static void
release_members(void *p)
{
    hscope_srv_members *m = p;
    free(m->ids);
    free(m);
}

static void
release_tally(void *p)
{
    hscope_tally_free(p);
}

static void *
compute_waste(hscope_srv *s, const char *key, hscope_error *err)
{
    (void)key;
    hscope_waste_t *w = NULL;
    if (hscope_waste_compute(&w, s->heap, NULL, err) != HSCOPE_OK)
        return NULL;
    return w;
}

static void
release_waste(void *p)
{
    hscope_waste_free(p);
}

/* A tally of the heap as /api/tally asks it: key "BY|SORT|TOP". */
static void *
compute_tally(hscope_srv *s, const char *key, hscope_error *err)
{
    char by[32];
    unsigned sort = 0;
    unsigned long long top = 0;
    if (sscanf(key, "%31[^|]|%u|%llu", by, &sort, &top) != 3) {
        snprintf(err->message, sizeof(err->message), "bad tally job key");
        return NULL;
    }
    hscope_tally_options to;
    hscope_tally_options_init(&to);
    to.sort = sort;
    to.top = top;
    to.flags = HSCOPE_TALLY_SKIP_DUMPER | HSCOPE_TALLY_SKIP_TRACER;
    hscope_tally_t *t = NULL;
    if (hscope_tally_compute(&t, s->heap, by, &to, err) != HSCOPE_OK)
        return NULL;
    return t;
}

/* The reverse references are built on first use, for the whole heap: at
 * start, so that the first object shown does not wait for them. */
static void *
compute_warm(hscope_srv *s, const char *key, hscope_error *err)
{
    (void)key;
    const hscope_id *src = NULL;
    uint64_t n = 0;
    if (hscope_heap_object_count(s->heap) > 0 &&
        hscope_heap_object_referrers(s->heap, 0, &src, &n, err) != HSCOPE_OK)
        return NULL;
    return s->heap;
}

/* The summary (a class tally of the whole heap and more) written once into
 * a buffer; key: its `top`. */
static void *
compute_summary(hscope_srv *s, const char *key, hscope_error *err)
{
    hscope_srv_buf *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    hscope_report_options ro;
    hscope_report_options_init(&ro);
    ro.format = HSCOPE_FORMAT_JSON;
    ro.top = strtoull(key, NULL, 10);
    ro.dump_names = s->cfg.paths + s->cfg.n - 1;
    ro.dump_name_count = 1;
    if (hscope_heap_write_summary(s->heap, &ro, hscope_srv_buf_write, b, err) != HSCOPE_OK ||
        b->failed) {
        free(b->data);
        free(b);
        return NULL;
    }
    return b;
}

/* The three tallies search reads (every row, by memsize), one after the
 * other on one thread: the transient memory of one tally at a time. */
static void *
compute_search(hscope_srv *s, const char *key, hscope_error *err)
{
    (void)key;
    static const char *keys[HSCOPE_SRV_SEARCH_KEYS] = { "class", "file:line:class", "gem" };
    hscope_srv_search *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    hscope_tally_options to;
    hscope_tally_options_init(&to);
    to.sort = HSCOPE_SORT_MEMSIZE;
    to.flags = HSCOPE_TALLY_SKIP_DUMPER | HSCOPE_TALLY_SKIP_TRACER;
    for (int k = 0; k < HSCOPE_SRV_SEARCH_KEYS; k++) {
        r->keys[k] = keys[k];
        if (hscope_tally_compute(&r->t[k], s->heap, keys[k], &to, err) != HSCOPE_OK) {
            for (int j = 0; j < k; j++)
                hscope_tally_free(r->t[j]);
            free(r);
            return NULL;
        }
    }
    return r;
}

static void
release_search(void *p)
{
    hscope_srv_search *r = p;
    for (int k = 0; k < HSCOPE_SRV_SEARCH_KEYS; k++)
        hscope_tally_free(r->t[k]);
    free(r);
}

static void
release_buf(void *p)
{
    hscope_srv_buf *b = p;
    free(b->data);
    free(b);
}

static void
release_nothing(void *p)
{
    (void)p;
}

static void *(*const computes[HSCOPE_SRV_KINDS])(hscope_srv *, const char *, hscope_error *) = {
    compute_domtree, compute_paths, compute_suspects, compute_timeline, compute_drill,
    compute_waste, compute_tally, compute_warm, compute_summary, compute_search,
};
static void (*const releases[HSCOPE_SRV_KINDS])(void *) = {
    release_domtree, release_paths, release_leaks, release_timeline, release_members,
    release_waste, release_tally, release_nothing, release_buf, release_search,
};

void *
hscope_srv_compute(hscope_srv *s, int kind, const char *key, hscope_error *err)
{
    void *r = computes[kind](s, key, err);
    if (!r && !err->message[0])
        snprintf(err->message, sizeof(err->message), "out of memory");
    return r;
}

void
hscope_srv_release(int kind, void *result)
{
    if (result)
        releases[kind](result);
}

void
hscope_srv_state_init(hscope_srv *s)
{
    pthread_mutex_init(&s->mu, NULL);
    for (int k = 0; k < HSCOPE_SRV_KINDS; k++)
        for (int i = 0; i < HSCOPE_SRV_KEYS; i++) {
            hscope_srv_job *j = &s->jobs[k][i];
            pthread_mutex_init(&j->mu, NULL);
            pthread_cond_init(&j->done, NULL);
            j->compute = computes[k];
            j->release = releases[k];
            j->srv = s;
        }
}

/* Jobs still running are waited for: they use the heaps. */
void
hscope_srv_state_free(hscope_srv *s)
{
    for (int k = 0; k < HSCOPE_SRV_KINDS; k++)
        for (int i = 0; i < HSCOPE_SRV_KEYS; i++) {
            hscope_srv_job *j = &s->jobs[k][i];
            pthread_mutex_lock(&j->mu);
            while (j->state == 1)
                pthread_cond_wait(&j->done, &j->mu);
            pthread_mutex_unlock(&j->mu);
        }
    hscope_srv_job *dt = &s->jobs[HSCOPE_SRV_DOMTREE][0];
    hscope_srv_job *sj = &s->jobs[HSCOPE_SRV_SUSPECTS][0];
    int shared = sj->state == 2 && dt->state == 2 &&
                 hscope_suspects_domtree(((hscope_srv_leaks *)sj->result)->suspects) == dt->result;
    if (dt->state == 2 && !shared)
        hscope_domtree_free(dt->result);
    hscope_srv_job *pj = &s->jobs[HSCOPE_SRV_PATHS][0];
    if (pj->state == 2 &&
        !(sj->state == 2 &&
          hscope_suspects_paths(((hscope_srv_leaks *)sj->result)->suspects) == pj->result))
        hscope_paths_free(pj->result);
    for (int k = 0; k < HSCOPE_SRV_KINDS; k++)
        for (int i = 0; i < HSCOPE_SRV_KEYS; i++) {
            hscope_srv_job *j = &s->jobs[k][i];
            if (j->state == 2)
                j->release(j->result);
            j->state = 0;
        }
}

static void *
run_job(void *arg)
{
    hscope_srv_job *j = arg;
    hscope_error err = HSCOPE_ERROR_INIT;
    void *r = j->compute(j->srv, j->key[0] ? j->key : NULL, &err);
    pthread_mutex_lock(&j->mu);
    j->result = r;
    j->err = err;
    j->state = r ? 2 : 3;
    if (!r && !j->err.message[0])
        snprintf(j->err.message, sizeof(j->err.message), "out of memory");
    j->seconds = hscope_srv_now() - j->started;
    pthread_cond_broadcast(&j->done);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

static hscope_srv_job *
find_job(hscope_srv *s, int kind, const char *key)
{
    if (!key)
        return &s->jobs[kind][0];
    pthread_mutex_lock(&s->mu);
    hscope_srv_job *found = NULL;
    for (int i = 0; i < HSCOPE_SRV_KEYS && !found; i++) {
        hscope_srv_job *j = &s->jobs[kind][i];
        if (strcmp(j->key, key) == 0)
            found = j;
        else if (!j->key[0] && strlen(key) < sizeof(j->key)) {
            snprintf(j->key, sizeof(j->key), "%s", key);
            found = j;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return found;
}

void *
hscope_srv_job_get(hscope_srv *s, int kind, const char *key, int wait, int *state,
                   double *seconds, hscope_error *err)
{
    hscope_srv_job *j = find_job(s, kind, key);
    if (!j) { /* every slot taken: the caller computes it itself */
        *state = 4;
        snprintf(err->message, sizeof(err->message), "too many keys");
        return NULL;
    }
    pthread_mutex_lock(&j->mu);
    if (j->state == 0) {
        pthread_t th;
        j->state = 1;
        j->started = hscope_srv_now();
        if (pthread_create(&th, NULL, run_job, j) != 0) {
            j->state = 3;
            snprintf(j->err.message, sizeof(j->err.message), "cannot start a thread");
        } else {
            pthread_detach(th);
        }
    }
    while (wait && j->state == 1)
        pthread_cond_wait(&j->done, &j->mu);
    *state = j->state;
    *seconds = j->state == 1 ? hscope_srv_now() - j->started : j->seconds;
    void *r = j->state == 2 ? j->result : NULL;
    if (j->state == 3)
        *err = j->err;
    pthread_mutex_unlock(&j->mu);
    return r;
}
