/*
 * tally.h - the group-by (tally.c) and its streamed fold over a dump
 * file (fold.c): the bodies of the exported tally functions, with their
 * argument checks, under the exported names with a second underscore
 * (api/tally_api.c exports them), standalone tallies, and the tally keys.
 */
#ifndef HSCOPE_ANALYSIS_TALLY_H
#define HSCOPE_ANALYSIS_TALLY_H

#include "../model/model.h"

void hscope__tally_options_init(hscope_tally_options *o);
hscope_status hscope__tally_compute(hscope_tally_t **out, hscope_heap_t *heap,
                                    const char *key,
                                    const hscope_tally_options *opts,
                                    hscope_error *err);
hscope_status hscope__tally_subset(hscope_tally_t **out, hscope_heap_t *heap,
                                   const char *key, const hscope_id *ids,
                                   uint64_t count,
                                   const hscope_tally_options *opts,
                                   hscope_error *err);
hscope_status hscope__tally_row_objects(const hscope_tally_t *t, uint64_t i,
                                        const hscope_id **ids, uint64_t *count);
void hscope__tally_free(hscope_tally_t *t);
/* Free the rows' member lists (hscope__tally_run with members) once they
 * have been read; the rows stay. */
void hscope__tally_drop_members(hscope_tally_t *t);
/* The memory the handle holds (hscope_tally_memory()). */
uint64_t hscope__tally_memory(const hscope_tally_t *t);
uint64_t hscope__tally_excluded(const hscope_tally_t *t);
/* Ruby's allocation tracer left out of a tally: objects and memsize. */
void hscope__tally_tracer(const hscope_tally_t *t, uint64_t *objects, uint64_t *memsize);
void hscope__tally_set_tracer(hscope_tally_t *t, uint64_t objects, uint64_t memsize);
hscope_status hscope__tally_stats(const hscope_tally_t *t,
                                  hscope_load_stats *stats);
uint64_t hscope__tally_skipped(const hscope_tally_t *t, int32_t reason);
const hscope_fingerprint_t *hscope__tally_fingerprint(const hscope_tally_t *t);
uint64_t hscope__tally_row_count(const hscope_tally_t *t);
uint64_t hscope__tally_group_count(const hscope_tally_t *t);
void hscope__tally_totals(const hscope_tally_t *t, uint64_t *count,
                          uint64_t *memsize);
const char *hscope__tally_row_key(const hscope_tally_t *t, uint64_t i);
uint64_t hscope__tally_row_count_of(const hscope_tally_t *t, uint64_t i);
uint64_t hscope__tally_row_memsize(const hscope_tally_t *t, uint64_t i);
const char *hscope__tally_by(const hscope_tally_t *t);
hscope_status hscope__tally_file(hscope_tally_t **out, const char *path,
                                 const char *key, const hscope_load_options *lo,
                                 const hscope_tally_options *uopts,
                                 hscope_error *uerr);
/* The same fold riding another pass over a dump (the diff's streamed
 * dumps feed the report's timeline): hscope__fold_sink(fold, b, record)
 * takes the pass's records in dump order with the ids of its builder b;
 * hscope__fold_finish() makes the tally while b still holds the strings
 * (path names the dump in the fingerprint; in_bytes, gz and ns are the
 * pass's input, compression and time for the tally's statistics).  o:
 * sort, top and the flags hscope__tally_file() takes. */
typedef struct hscope__fold hscope__fold;
hscope_status hscope__fold_new(hscope__fold **out, const hscope_allocator *a, const char *key,
                               const hscope_tally_options *o, hscope_error *err);
hscope_status hscope__fold_sink(void *fold, hscope__builder *b, const hscope__objrec *o,
                                hscope_error *err);
hscope_status hscope__fold_finish(hscope__fold *f, const hscope__builder *b, const char *path,
                                  uint64_t in_bytes, int gz, uint64_t ns,
                                  hscope_tally_t **out, hscope_error *err);
void hscope__fold_free(hscope__fold *f);
/* Give tally t (of a loaded heap) the fingerprint fp, which it then owns. */
void hscope__tally_set_fingerprint(hscope_tally_t *t, hscope_fingerprint_t *fp);

/* The group-by over the whole heap (subset NULL) or over subset[0..nsub)
 * (ascending ids; nsub may be 0, an empty tally, with subset non-NULL).
 * A NULL subset never means "all" by accident: callers with a possibly
 * empty id list pass HSCOPE__NO_IDS rather than a NULL array. */
hscope_status hscope__tally_run(hscope_tally_t **out, hscope_heap_t *heap,
                                const char *key,
                                const hscope_tally_options *opts,
                                const uint32_t *subset, size_t nsub,
                                int members, hscope_error *err);
extern const uint32_t hscope__no_ids[1];
#define HSCOPE__NO_IDS hscope__no_ids
/* The id list of a subset: ids, or HSCOPE__NO_IDS when it is empty (ids
 * may then be NULL). */
static inline const uint32_t *
hscope__ids_or_none(const uint32_t *ids, size_t n)
{
    return n && ids ? ids : HSCOPE__NO_IDS;
}

/* Tally keys (order of the enum in tally.c). */
enum { HSCOPE__TK_TYPE, HSCOPE__TK_CLASS, HSCOPE__TK_FILE, HSCOPE__TK_FILE_LINE,
       HSCOPE__TK_SITE, HSCOPE__TK_METHOD, HSCOPE__TK_GENERATION, HSCOPE__TK_GEM };
int hscope__tally_key(const char *key);

/* Standalone tallies: rows added by text, then sorted. */
hscope_status hscope__tally_new(hscope_tally_t **out, const hscope_allocator *a,
                                hscope_error *err);
hscope_status hscope__tally_add(hscope_tally_t *t, const char *key, size_t len,
                                uint64_t count, uint64_t memsize,
                                hscope_error *err);
void hscope__tally_finish(hscope_tally_t *t, uint32_t sort, uint64_t top);
void hscope__tally_set_source(hscope_tally_t *t, const hscope_load_stats *stats,
                              const uint64_t skipped[HSCOPE_SKIP__COUNT],
                              hscope_fingerprint_t *fp, uint64_t excluded);
/* Record the key a standalone tally was made by (a known key name). */
void hscope__tally_set_by(hscope_tally_t *t, const char *key);
/* Mark a standalone tally as retained sizes per group (written as kind
 * "retained"). */
void hscope__tally_set_retained(hscope_tally_t *t);
int hscope__tally_is_retained(const hscope_tally_t *t);
/* The static name of a tally key ("file:line:class"), or NULL. */
const char *hscope__tally_key_name(const char *key);
/* HSCOPE_SORT_* of a tally's rows. */
uint32_t hscope__tally_sort(const hscope_tally_t *t);
/* The allocator a tally allocates with (for its writers' scratch). */
hscope__mem *hscope__tally_mem(const hscope_tally_t *t);
/* The heap a tally was computed on, or NULL (folded from a stream). */
const hscope_heap_t *hscope__tally_heap(const hscope_tally_t *t);

#endif
