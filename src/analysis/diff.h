/*
 * diff.h - objects new in a later dump (diff.c): the bodies of the
 * exported diff functions (api/diff_api.c exports them) and the diff's
 * bases.
 */
#ifndef HSCOPE_ANALYSIS_DIFF_H
#define HSCOPE_ANALYSIS_DIFF_H

#include "../model/model.h"

void hscope__diff_options_init(hscope_diff_options *o);
hscope_status hscope__diff_files(hscope_diff_t **out, const char *path_a,
                                 const char *path_b, const char *path_c,
                                 const hscope_load_options *load,
                                 const hscope_diff_options *opts,
                                 hscope_error *uerr);
hscope_status hscope__diff_compute(hscope_diff_t **out, hscope_heap_t *a,
                                   hscope_heap_t *b, hscope_heap_t *c,
                                   const hscope_diff_options *opts,
                                   hscope_error *uerr);
void hscope__diff_free(hscope_diff_t *d);
/* The memory the handle holds (hscope_diff_memory()). */
uint64_t hscope__diff_memory(const hscope_diff_t *d);
hscope_heap_t *hscope__diff_heap(const hscope_diff_t *d);
uint64_t hscope__diff_count(const hscope_diff_t *d);
uint64_t hscope__diff_memsize(const hscope_diff_t *d);
const hscope_id *hscope__diff_objects(const hscope_diff_t *d);
uint64_t hscope__diff_excluded(const hscope_diff_t *d);
/* Ruby's allocation tracer left out of the leaked objects. */
void hscope__diff_tracer(const hscope_diff_t *d, uint64_t *objects, uint64_t *memsize);
uint64_t hscope__diff_snapshot_objects(const hscope_diff_t *d, uint32_t i);
uint64_t hscope__diff_reused_addresses(const hscope_diff_t *d);
uint32_t hscope__diff_warnings(const hscope_diff_t *d);
const char *hscope__diff_warning_text(const hscope_diff_t *d);
uint64_t hscope__diff_object_id_matches(const hscope_diff_t *d);
uint64_t hscope__diff_moved_objects(const hscope_diff_t *d);
const char *hscope__diff_note_text(const hscope_diff_t *d);
hscope_status hscope__diff_tally(hscope_tally_t **out, const hscope_diff_t *d,
                                 const char *key,
                                 const hscope_tally_options *opts,
                                 hscope_error *err);

/* After a streamed base's pass, while its builder b still holds the
 * strings: input bytes, gzip or not, the pass's time. */
typedef hscope_status (*hscope__rider_done_fn)(void *ud, const hscope__builder *b,
                                               uint64_t in_bytes, int gz, uint64_t ns,
                                               hscope_error *err);

/* A diff base: a loaded heap, or a dump path streamed with `load`.  A
 * streamed base can carry a rider, another consumer of the same pass:
 * rider(rider_ud, ...) takes each record after the diff (dump order, the
 * pass builder's ids), rider_done once the pass is over.  The report's
 * timeline rides the diff's passes instead of reading the dumps again. */
typedef struct hscope__diff_base {
    hscope_heap_t *heap;
    const char *path;
    const hscope_load_options *load;
    hscope__sink_fn rider;
    hscope__rider_done_fn rider_done;
    void *rider_ud;
} hscope__diff_base;

/* hscope__diff_files() with riders on the streamed dumps: ra on A's pass,
 * rb on B's (three dumps only); each NULL or a base whose rider fields
 * are used. */
hscope_status hscope__diff_files_riding(hscope_diff_t **out, const char *path_a,
                                        const char *path_b, const char *path_c,
                                        const hscope_load_options *load,
                                        const hscope_diff_options *opts,
                                        const hscope__diff_base *ra,
                                        const hscope__diff_base *rb, hscope_error *uerr);

/* Warning lines a diff records a code for (more lines get code 0). */
#define HSCOPE__DIFF_MAX_WARNINGS 32
/* Another reference to a diff (released by hscope__diff_free()). */
hscope_diff_t *hscope__diff_ref(hscope_diff_t *d);
/* Dumps the diff compared: 2 or 3. */
uint32_t hscope__diff_dumps(const hscope_diff_t *d);
/* The HSCOPE_DIFF_WARN_* bit of line `line` of hscope__diff_warning_text(). */
uint32_t hscope__diff_warning_code(const hscope_diff_t *d, uint32_t line);

hscope_status hscope__diff_run(hscope_diff_t **out, hscope_heap_t *target,
                               const char *target_path,
                               const hscope__diff_base *ba,
                               const hscope__diff_base *bb,
                               const char *const names[3],
                               const hscope_diff_options *opts,
                               hscope_error *err);

#endif
