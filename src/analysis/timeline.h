/*
 * timeline.h - the timeline handle (timeline.c): dumps folded on the
 * pool, series, fit, growing verdict, ranking, series warnings.
 */
#ifndef HSCOPE_ANALYSIS_TIMELINE_H
#define HSCOPE_ANALYSIS_TIMELINE_H

#include "../core/core.h"
#include "order.h"

/* One dump of a timeline, in time order. */
typedef struct hscope__tl_dump {
    char *path;                 /* as given (a copy) */
    uint64_t given;             /* index among the paths given */
    int has_time;
    double time;
    uint64_t count, memsize;    /* totals over every group */
    uint64_t excluded;          /* the dumper's objects left out */
    uint64_t tracer, tracer_mem; /* the allocation tracer left out */
    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
} hscope__tl_dump;

/* One group of a timeline: its series and fit. */
typedef struct hscope__tl_group {
    char *key;
    uint64_t *count, *memsize;  /* per dump, in time order */
    double slope, slope_h, r2, mean, rise, score, last;
    int has_slope_h, growing;
} hscope__tl_group;

typedef struct hscope__tl_warning {
    const char *code;           /* static: "repeated", "different_process", "backwards" */
    char *message;
} hscope__tl_warning;

/* The "growing" verdict's constants (docs/TIMELINE.md): each applies to
 * both series of a group, the count against the objects floor and the
 * memsize against the bytes floor. */
#define HSCOPE__GROW_MIN_DUMPS 3
#define HSCOPE__GROW_MIN_R2 0.8
#define HSCOPE__GROW_MIN_RISE_FRACTION 0.02  /* of the group's mean */
#define HSCOPE__GROW_MIN_RISE_COUNT 10.0     /* objects */
#define HSCOPE__GROW_MIN_RISE_BYTES 4096.0   /* bytes of memsize */

struct hscope_timeline {
    hscope__mem mem;
    uint32_t flags;             /* HSCOPE_TIMELINE_* */
    int32_t metric;             /* HSCOPE_METRIC_MEMSIZE or _COUNT */
    uint32_t min_dumps;
    const char *by;             /* static key name */
    hscope__order order;
    hscope__tl_dump *d;
    uint64_t nd;
    hscope__tl_group *g;        /* ranked */
    size_t ng, gcap;
    size_t growing;
    hscope__tl_warning *w;
    size_t nw, wcap;
    uint32_t warn;              /* HSCOPE_DIFF_WARN_* bits */
    char *warn_text;            /* every message, one a line */
};

hscope_status hscope__timeline_compute(hscope_timeline_t **out, const char *const *paths,
                                       uint64_t n, const hscope_load_options *lo,
                                       const hscope_timeline_options *o, hscope_error *err);
/* The same with some dumps' tallies made already (the report's, from the
 * diff's passes and its loaded heap): pre[i] (NULL: fold the dump) is
 * paths[i]'s, by the timeline's key and dumper and tracer flags, with a
 * fingerprint; it stays the caller's. */
hscope_status hscope__timeline_compute_pre(hscope_timeline_t **out, const char *const *paths,
                                           uint64_t n, const hscope_load_options *lo,
                                           const hscope_timeline_options *o,
                                           hscope_tally_t *const *pre, hscope_error *err);
/* The tally a timeline makes of each dump: its key (o->by or the
 * default) and, for its flags (HSCOPE_TIMELINE_*), the tally's options. */
const char *hscope__timeline_key(const hscope_timeline_options *o);
void hscope__timeline_tally_options(uint32_t flags, hscope_tally_options *to);
void hscope__timeline_free(hscope_timeline_t *tl);
/* The memory the handle holds (hscope_timeline_memory()). */
uint64_t hscope__timeline_memory(const hscope_timeline_t *tl);
/* The one "growing" rule (docs/TIMELINE.md), on group g's count and
 * memsize series of n dumps: xs the step indices 0..n-1, ys scratch. */
int hscope__grow_verdict(const hscope__tl_group *g, uint64_t n, uint32_t min_dumps,
                         const double *xs, double *ys);
/* The rule in one line of words. */
void hscope__grow_rule_text(uint32_t min_dumps, char *buf, size_t n);

/* The value of group g in dump i by the timeline's metric. */
static inline uint64_t
hscope__tl_value(const hscope_timeline_t *tl, const hscope__tl_group *g, uint64_t i)
{
    return tl->metric == HSCOPE_METRIC_COUNT ? g->count[i] : g->memsize[i];
}

#endif
