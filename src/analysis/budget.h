/*
 * budget.h - budgets and checks (budget.c: the budget file; check.c:
 * dumps against a budget).
 */
#ifndef HSCOPE_ANALYSIS_BUDGET_H
#define HSCOPE_ANALYSIS_BUDGET_H

#include "../core/core.h"

typedef struct hscope__brule {
    int32_t scope;              /* HSCOPE_BUDGET_TOTAL ... _SITE */
    int32_t metric;             /* HSCOPE_BUDGET_OBJECTS ... _RETAINED */
    char *key;                  /* the group, NULL for total and leaked */
    uint64_t line;
    uint64_t limit;
} hscope__brule;

struct hscope_budget {
    hscope__mem mem;
    char *name;                 /* as given ("budget" by default) */
    hscope__brule *rules;       /* in the file's order */
    size_t n, cap;
    uint64_t leaked_line;       /* line of [leaked] when it has rules, else 0 */
};

/* A scope's and a metric's name as the budget spells them ("class",
 * "memsize"); the tally key of a group scope ("file:line:class"). */
const char *hscope__budget_scope_name(int32_t scope);
const char *hscope__budget_metric_name(int32_t metric);
const char *hscope__budget_scope_key(int32_t scope);
hscope_status hscope__budget_parse(hscope_budget_t **out, const char *text, size_t len,
                                   const char *name, hscope_error *err);
void hscope__budget_free(hscope_budget_t *b);

typedef struct hscope__crule {
    hscope__brule r;            /* the budget's rule (key copied) */
    char *name;                 /* as the budget spells it: class."String".memsize */
    uint64_t actual;
    int found;
    char *closest;              /* not found: the dump's nearest names, ", "-joined */
} hscope__crule;

struct hscope_check {
    hscope__mem mem;
    char *budget;               /* the budget's name */
    hscope__crule *rules;
    size_t n;
    uint64_t over;              /* rules over budget */
    char **paths;               /* the dumps as given */
    uint64_t npaths;
    uint64_t objects[3];        /* objects of each dump, where known */
    uint64_t count, memsize;    /* the last dump's live objects */
    uint64_t excluded;          /* the dumper's left out of them */
    uint64_t tracer, tracer_mem; /* Ruby's allocation tracer left out of them */
    int has_leaked, has_retained;
    uint64_t leaked_count, leaked_memsize;
    uint64_t retained_count, retained_memsize; /* reachable from the roots */
    int has_stats;              /* damage of the last dump (no diff) */
    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
    uint32_t warn;              /* HSCOPE_DIFF_WARN_* bits */
    char *warn_text;            /* every message, one a line */
    uint32_t *warn_codes;       /* HSCOPE_DIFF_WARN_* bit per line (0: other) */
    uint32_t nwarn;
    char *no_verdict;           /* why the dumps cannot give a verdict, or NULL */
};

hscope_status hscope__check_compute(hscope_check_t **out, const hscope_budget_t *b,
                                    const char *const *paths, uint64_t n,
                                    const hscope_load_options *lo, uint32_t flags,
                                    hscope_error *err);
void hscope__check_free(hscope_check_t *c);

#endif
