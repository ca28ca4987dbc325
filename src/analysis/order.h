/*
 * order.h - dumps in time order (order.c): the name, mtime and given
 * rules.
 */
#ifndef HSCOPE_ANALYSIS_ORDER_H
#define HSCOPE_ANALYSIS_ORDER_H

#include "heapscope/heapscope.h"

/* The error `src` of the work on file `path`, into err (first error
 * wins), naming the file when the message does not. */
hscope_status hscope__fail_for_file(hscope_error *err, const hscope_error *src,
                                    const char *path);
/* Basename of a path (a pointer into it). */
const char *hscope__basename(const char *path);

/* A dump's place in time: its index among the paths as given, and its
 * time (epoch seconds, UTC) when the rule that ordered it knows one. */
typedef struct hscope__dump_time {
    uint64_t given;
    int has_time;
    double time;
    uint64_t seq;     /* the sort key of a sequence number */
} hscope__dump_time;

/* The rule that put the dumps in order (docs/TIMELINE.md). */
typedef struct hscope__order {
    int32_t rule;        /* HSCOPE_ORDER_NAME, _MTIME or _GIVEN */
    const char *name;    /* "name-time", "mtime" or "given" (static) */
    const char *source;  /* "datetime", "epoch", "epoch-ms", "sequence",
                            "mtime" or "given" (static) */
    int times_known;
} hscope__order;

/* Put paths[0..n) in time order by `rule` (HSCOPE_ORDER_*): d[0..n) gets
 * the dumps in that order.  HSCOPE_ERR_INVALID_ARG when a forced rule
 * (name, mtime) cannot order them. */
hscope_status hscope__order_dumps(const char *const *paths, uint64_t n, int32_t rule,
                                  hscope__dump_time *d, hscope__order *ord,
                                  hscope_error *err);
/* "the sequence number in each file name", ... for an order source. */
const char *hscope__order_source_text(const char *source);

#endif
