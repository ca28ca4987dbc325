/*
 * writers.h - the writers' entry points, one w_<result>.c each, and the
 * pieces they share with each other.
 */
#ifndef HSCOPE_REPORT_WRITERS_H
#define HSCOPE_REPORT_WRITERS_H

#include <stddef.h>
#include <stdint.h>

#include "jsonw.h"
#include "out.h"

/* Tally rows as a text table titled `title`; percentages of the totals
 * when either is non-zero; with `samples`, up to that many member
 * addresses under each row (tallies with members). */
void hscope__tally_text(const hscope_tally_t *t, const hscope__ropts *ro,
                        hscope__out *o, const char *title, uint64_t total_count,
                        uint64_t total_mem, uint64_t samples);
/* "group_count": N, "groups": [{"key", "count", "memsize"[, "addresses"]}] */
void hscope__json_groups_of_tally(hscope__json *w, const hscope_tally_t *t,
                                  int addresses);
hscope_status hscope__tally_write(const hscope_tally_t *t, const hscope__ropts *ro,
                                  hscope__out *o);
/* Writers of one dump's results and of a diff: each checks nothing (api/ did), writes
 * the result in ro->format and returns the first error of its analysis. */
hscope_status hscope__summary_write(hscope_heap_t *h, const hscope__ropts *ro,
                                    hscope__out *o, hscope_error *err);
hscope_status hscope__diff_write(const hscope_diff_t *d, const hscope_tally_t *groups,
                                 const hscope__ropts *ro, hscope__out *o, hscope_error *err);
hscope_status hscope__objects_write(hscope_heap_t *h, const uint64_t *addrs, uint64_t n,
                                    const char *const *records, const hscope__ropts *ro,
                                    hscope__out *o, hscope_error *err);
hscope_status hscope__generations_write(hscope_heap_t *h, const hscope__ropts *ro,
                                        hscope__out *o, hscope_error *err);
hscope_status hscope__domtree_write(hscope_domtree_t *t, hscope_id focus,
                                    const hscope__ropts *ro, hscope__out *o, hscope_error *err);
hscope_status hscope__folded_write(hscope_domtree_t *t, const hscope__ropts *ro,
                                   hscope__out *o, hscope_error *err);
hscope_status hscope__retained_write(const hscope_domtree_t *t, const hscope__ropts *ro,
                                     hscope__out *o, hscope_error *err);
hscope_status hscope__paths_write(const hscope_paths_t *p, const hscope_id *ids, uint64_t n,
                                  const hscope__ropts *ro, hscope__out *o, hscope_error *err);
hscope_status hscope__suspects_write(const hscope_suspects_t *s, const hscope__ropts *ro,
                                     hscope__out *o, hscope_error *err);
/* The heap as a pprof profile, gzipped (w_pprof.c). */
hscope_status hscope__pprof_write(const hscope_heap_t *h, int64_t time_ns,
                                  const hscope__ropts *ro, hscope__out *o, hscope_error *err);
/* The heap as a V8 heap snapshot (w_heapsnapshot.c). */
hscope_status hscope__heapsnapshot_write(const hscope_heap_t *h, hscope__out *o,
                                         hscope_error *err);
/* The first `keep` children (all when there are fewer) of an object (id)
 * or of a root category / the super-root (id HSCOPE_ID_NONE, cat),
 * largest retained first, ties by address; *n gets how many children
 * there are in all; *out from the heap's allocator (hscope__free it;
 * NULL when none is kept). */
hscope_status hscope__dom_sorted_kids(hscope_domtree_t *t, hscope_id id, int32_t cat,
                                      uint64_t keep, hscope_id **out, uint64_t *n,
                                      hscope_error *err);
/* "0x... TYPE label  (where)<tail>" at `indent`: the label (a class name)
 * and the tail are never cut; `where` (a file:line, NULL: none) is cut in
 * the middle to fit the width. */
void hscope__text_obj_line(hscope__out *o, const hscope__ropts *ro, const hscope_heap_t *h,
                           hscope_id id, size_t indent, const char *where, const char *tail);
/* kind, dumps, class_edges, reachable, unreachable */
void hscope__json_domtree_head(hscope__json *w, const char *kind, const hscope_domtree_t *t,
                               const hscope__ropts *ro);
/* The dumps and leaked totals of a diff (diff and suspects documents). */
void hscope__json_diff_head(hscope__json *w, const hscope_diff_t *d, const hscope__ropts *ro);
void hscope__text_diff_head(hscope__out *o, const hscope_diff_t *d, const hscope__ropts *ro);
/* A check against a budget: text or JSON (w_check.c). */
void hscope__check_write(const hscope_check_t *c, const hscope__ropts *ro, hscope__out *o);
/* A waste analysis: text or JSON (w_waste.c). */
void hscope__waste_write(const hscope_waste_t *w, const hscope__ropts *ro, hscope__out *o);
/* A value as its length and the first 8 hex digits of its hash ("12 B
 * #1a2b3c4d"): how every report shows a value without HSCOPE_REPORT_VALUES. */
void hscope__waste_short_value(uint64_t length, uint64_t hash, char *buf, size_t n);
/* "duplicate", "empty", "oversized"; "STRING", "ARRAY", "HASH". */
const char *hscope__waste_kind_name(int kind);
const char *hscope__waste_type_name(int type);

/* w_timeline.c: every format; the "grew" view for HSCOPE_TIMELINE_GREW. */
hscope_status hscope__timeline_write(const hscope_timeline_t *tl, const hscope__ropts *ro,
                                     hscope__out *o);

#endif
