/*
 * analysis.h - internal entry points shared by the analyses.
 */
#ifndef HSCOPE_ANALYSIS_H
#define HSCOPE_ANALYSIS_H

#include "../model/model.h"

/* Bodies of the exported analyses (tally.c, fold.c, diff.c, dominators.c,
 * series.c), with their argument checks, under the exported names with a
 * second underscore; api/<area>_api.c exports them.  The report layer
 * calls these. */
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
/* The memory the handle holds (hscope_tally_memory()). */
uint64_t hscope__tally_memory(const hscope_tally_t *t);
uint64_t hscope__tally_excluded(const hscope_tally_t *t);
/* Ruby's allocation tracer of a tree's heap (the first, if several), or
 * HSCOPE_ID_NONE; the tree's top objects by retained size without it
 * (`out` holds max + 1; tracer HSCOPE_ID_NONE: all of them). */
hscope_id hscope__domtree_tracer(const hscope_domtree_t *t);
uint64_t hscope__domtree_top_app(const hscope_domtree_t *t, hscope_id *out, uint64_t max,
                                 hscope_id tracer);
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
void hscope__dom_options_init(hscope_dom_options *o);
hscope_status hscope__domtree_compute(hscope_domtree_t **out,
                                      hscope_heap_t *heap,
                                      const hscope_dom_options *uopts,
                                      hscope_error *uerr);
void hscope__domtree_free(hscope_domtree_t *t);
/* The memory the handle holds (hscope_domtree_memory()). */
uint64_t hscope__domtree_memory(const hscope_domtree_t *t);
hscope_heap_t *hscope__domtree_heap(const hscope_domtree_t *t);
hscope_status hscope__domtree_idom(const hscope_domtree_t *t, hscope_id id,
                                   hscope_id *idom, int32_t *root_category);
uint64_t hscope__domtree_retained(const hscope_domtree_t *t, hscope_id id);
uint64_t hscope__domtree_retained_count(const hscope_domtree_t *t,
                                        hscope_id id);
int32_t hscope__domtree_reachable(const hscope_domtree_t *t, hscope_id id);
void hscope__domtree_totals(const hscope_domtree_t *t, uint64_t *reachable,
                            uint64_t *reachable_memsize, uint64_t *unreachable,
                            uint64_t *unreachable_memsize);
hscope_status hscope__domtree_children(hscope_domtree_t *t, hscope_id id,
                                       int32_t root_category,
                                       const hscope_id **kids, uint64_t *count,
                                       hscope_error *uerr);
hscope_status hscope__domtree_unreachable(hscope_domtree_t *t,
                                          const hscope_id **ids,
                                          uint64_t *count, hscope_error *uerr);
uint64_t hscope__domtree_chain(const hscope_domtree_t *t, hscope_id id,
                               hscope_id *out, uint64_t max,
                               int32_t *root_category);
uint64_t hscope__domtree_top(const hscope_domtree_t *t, hscope_id *out,
                             uint64_t max);
hscope_status hscope__paths_compute(hscope_paths_t **out, hscope_heap_t *heap,
                                    const hscope_dom_options *uopts,
                                    hscope_error *uerr);
void hscope__paths_free(hscope_paths_t *p);
/* The memory the handle holds (hscope_paths_memory()). */
uint64_t hscope__paths_memory(const hscope_paths_t *p);
uint64_t hscope__paths_get(const hscope_paths_t *p, hscope_id target,
                           hscope_id *out, uint64_t max,
                           int32_t *root_category);
hscope_status hscope__holders_compute(hscope_holders_t **out,
                                      hscope_domtree_t *t, const hscope_id *ids,
                                      uint64_t n, hscope_error *uerr);
void hscope__holders_free(hscope_holders_t *hs);
/* The memory the handle holds (hscope_holders_memory()). */
uint64_t hscope__holders_memory(const hscope_holders_t *hs);
uint64_t hscope__holders_count(const hscope_holders_t *hs);
hscope_status hscope__holders_get(const hscope_holders_t *hs, uint64_t i,
                                  hscope_id *holder_id, int32_t *root_category,
                                  uint64_t *count, uint64_t *memsize);
hscope_status hscope__heap_fingerprint(hscope_fingerprint_t **out,
                                       const hscope_heap_t *heap,
                                       const char *path, hscope_error *uerr);
hscope_status hscope__fingerprint_copy(hscope_fingerprint_t **out,
                                       const hscope_fingerprint_t *fp,
                                       hscope_error *uerr);
void hscope__fingerprint_free(hscope_fingerprint_t *fp);
uint64_t hscope__fingerprint_memory(const hscope_fingerprint_t *fp);
uint32_t hscope__series_check(const hscope_fingerprint_t *const *fps,
                              const char *const *names, uint64_t count,
                              char *text, uint64_t text_size);

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
/* origin.c: the gem of an allocation file (a pointer into `file` or a
 * static label, and its length), and whether an allocation site is the
 * dumper's own (ObjectSpace.dump_all, the heapscope gem's snapshot code). */
void hscope__gem_of(const char *file, const char **gem, size_t *len);
int hscope__is_dumper(const char *file, const char *method);
/* The dumper rule per allocation site, judged once per site id: judged[site]
 * is 0 (not yet), 1 (no) or 2 (the dumper's); the array grows as sites
 * come.  Sites are (site_file, site_method) string ids of `strings`. */
hscope_status hscope__judge_site(hscope__mem *m, uint8_t **judged, size_t *cap,
                                 const hscope__intern *strings, const uint32_t *site_file,
                                 const uint32_t *site_method, uint32_t site,
                                 hscope_error *err);
static inline hscope_status
hscope__dumper_site(hscope__mem *m, uint8_t **judged, size_t *cap,
                    const hscope__intern *strings, const uint32_t *site_file,
                    const uint32_t *site_method, uint32_t site, int *dumper,
                    hscope_error *err)
{
    if (HS_UNLIKELY(site >= *cap || !(*judged)[site])) {
        hscope_status st = hscope__judge_site(m, judged, cap, strings, site_file,
                                              site_method, site, err);
        if (st != HSCOPE_OK)
            return st;
    }
    *dumper = (*judged)[site] == 2;
    return HSCOPE_OK;
}

/* Fingerprints for the series checks (series.c). */
typedef struct hscope__fp_item {
    uint64_t addr;
    uint32_t type;     /* HSCOPE_TYPE_* below 32, else HSCOPE_TYPE_OTHER */
} hscope__fp_item;

struct hscope_fingerprint {
    hscope__mem own;            /* the allocator hooks it was made with */
    uint64_t objects, content;  /* count; sum of a hash per object */
    uint32_t newest;            /* newest generation + 1; 0: nothing traced
                                   (HSCOPE__GEN_NONE + 1 wraps to 0) */
    int sorted, has_file;
    int partial;                /* no ROOT records: a since: dump, whose objects are
                                   only the newer ones (not another process) */
    uint64_t limit;             /* sampled: objects whose address hash <= limit */
    hscope__fp_item *items;
    size_t n;
    uint64_t dev, ino, mtime_ns;
};

/* The sampling hash of an address: a multiplicative (Fibonacci) hash,
 * whose high bits, the ones the sample's threshold looks at, depend on
 * every bit of the address; one multiply on the streaming paths. */
static inline uint64_t
hscope__fp_hash(uint64_t addr)
{
    return addr * 0x9E3779B97F4A7C15ull;
}

void hscope__fp_sample(hscope_fingerprint_t *fp, uint64_t addr, uint64_t h, int type);

/* One object of the dump (type: the builder's code; gen HSCOPE__GEN_NONE
 * when untraced).  On the streaming paths for every record, so kept to two
 * multiplies: the content hash sums the address hash mixed with the
 * generation and type (two dumps of equal count and content sum are "the
 * same"), and the sample is rarely touched (1 object in 2^k once full). */
static inline void
hscope__fp_add(hscope_fingerprint_t *fp, uint64_t addr, int type, uint32_t gen)
{
    uint64_t h = hscope__fp_hash(addr);
    int ty = type < 32 ? type : HSCOPE_TYPE_OTHER;
    uint32_t g1 = gen + 1;
    fp->objects++;
    uint64_t x = h ^ ((uint64_t)g1 << 8 | (uint64_t)ty);
    x ^= x >> 31; /* not linear in the address: a sum of such cannot be */
    x *= 0xBF58476D1CE4E5B9ull; /* kept by moving objects around */
    fp->content += x ^ (x >> 29);
    if (g1 > fp->newest)
        fp->newest = g1;
    if (HS_UNLIKELY(h <= fp->limit))
        hscope__fp_sample(fp, addr, h, ty);
}

hscope_status hscope__fp_new(hscope_fingerprint_t **out, const hscope__mem *like,
                             hscope_error *err);
void hscope__fp_add_heap(hscope_fingerprint_t *fp, const hscope_heap_t *h);
void hscope__fp_merge(hscope_fingerprint_t *dst, const hscope_fingerprint_t *src);
/* Sort the sample and note the file's identity and mtime (path may be NULL). */
void hscope__fp_finish(hscope_fingerprint_t *fp, const char *path);
/* hscope__series_check() with each finding passed to fn as one line and its
 * HSCOPE_DIFF_WARN_* bit. */
uint32_t hscope__series_check_lines(const hscope_fingerprint_t *const *fps,
                                    const char *const *names, uint64_t count,
                                    void (*fn)(void *ud, uint32_t bit, const char *line),
                                    void *ud);

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

/* Objects by allocation generation (generations.c): generation value[k]
 * holds ids[start[k]..start[k+1]) (ascending); untraced objects apart. */
typedef struct hscope__gens {
    hscope__mem *mem;
    uint32_t *ids;
    uint64_t *start;
    uint32_t *value;
    size_t ngens;
    uint64_t untraced, untraced_memsize;
} hscope__gens;
hscope_status hscope__gens_compute(hscope__gens *g, hscope_heap_t *h, hscope_error *err);
void hscope__gens_free(hscope__gens *g);

/* Whether object -> class edges are in the graph of a tree or paths. */
int hscope__domtree_class_edges(const hscope_domtree_t *t);
int hscope__paths_class_edges(const hscope_paths_t *p);
/* The heap of a paths result. */
hscope_heap_t *hscope__paths_heap(const hscope_paths_t *p);

/* paths.c: up to max_paths paths from the roots to target (the shortest
 * first, then through other referrers); fn gets each, objects from the
 * first after the root category `cat` (-1: the super-root) to target
 * inclusive; len 0 once when no root reaches target. */
typedef void (*hscope__path_fn)(void *ud, hscope_id target, const hscope_id *path,
                                uint64_t len, int32_t cat);
hscope_status hscope__paths_each(const hscope_paths_t *p, hscope_id target,
                                 uint64_t max_paths, hscope__path_fn fn, void *ud,
                                 hscope_error *err);

/* retained.c: retained size per group (hscope_domtree_tally()); opts
 * checked by the caller. */
hscope_status hscope__domtree_tally(hscope_tally_t **out, hscope_domtree_t *t,
                                    const char *key, const hscope_tally_options *opts,
                                    hscope_error *err);

/* suspects.c: the suspects handle (exported through api/analysis_api.c). */
hscope_status hscope__suspects_compute(hscope_suspects_t **out, hscope_diff_t *diff,
                                       const hscope_dom_options *opts, hscope_error *err);
void hscope__suspects_free(hscope_suspects_t *s);
/* The memory the handle holds (hscope_suspects_memory()). */
uint64_t hscope__suspects_memory(const hscope_suspects_t *s);
hscope_diff_t *hscope__suspects_diff(const hscope_suspects_t *s);
hscope_domtree_t *hscope__suspects_domtree(const hscope_suspects_t *s);
const hscope_holders_t *hscope__suspects_holders(const hscope_suspects_t *s);
const hscope_paths_t *hscope__suspects_paths(const hscope_suspects_t *s);
uint64_t hscope__suspects_path(const hscope_suspects_t *s, uint64_t i, hscope_id *out,
                               uint64_t max, int32_t *root_category);
/* Holder i of the suspects and its allocation sites (the bodies of
 * hscope_suspects_get() and hscope_suspects_site_get(), without the size
 * checks: every field of *out is written). */
hscope_status hscope__suspects_get(const hscope_suspects_t *s, uint64_t i, hscope_suspect *out);
hscope_status hscope__suspects_site_get(const hscope_suspects_t *s, uint64_t i, uint64_t j,
                                        hscope_suspect_site *out);
/* A Ruby VM table (HSCOPE_VM_TABLE_*) or HSCOPE_VM_TABLE_NONE, and its
 * name and reason ("" for none). */
int32_t hscope__vm_table_kind(const hscope_heap_t *h, hscope_id id);
const char *hscope__vm_table_name(int32_t kind);
const char *hscope__vm_table_reason(int32_t kind);

/* dominators.c: put the holders in the order `order` gives (order[k]: the
 * old index of the new k-th holder, a permutation of 0..count-1). */
hscope_status hscope__holders_reorder(hscope_holders_t *hs, const uint32_t *order,
                                      hscope_error *err);

/* A diff base: a loaded heap, or a dump path streamed with `load`. */
typedef struct hscope__diff_base {
    hscope_heap_t *heap;
    const char *path;
    const hscope_load_options *load;
} hscope__diff_base;

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

/* ------------------------------------------------------------------ */
/* Waste (waste.c, waste_build.c; waste_scan.c: its two sources)     */
/* ------------------------------------------------------------------ */

/* Options, checked and completed with the defaults. */
typedef struct hscope__wcfg {
    int by;                 /* HSCOPE_WASTE_BY_* */
    int keep_dumper;
    uint64_t ratio;
    uint64_t min_slack;
} hscope__wcfg;

/* One object as the analysis sees it, from a streamed record or from a
 * loaded heap's columns.  file: a string id of the source's interner. */
typedef struct hscope__wobj {
    uint64_t memsize, size;     /* size: bytesize, length or size */
    uint64_t capacity;          /* STRING, when has_capacity */
    uint64_t ref;               /* streamed: line offset; heap: object id */
    const char *value;          /* when has_value; valid during the call */
    uint64_t value_len;
    uint32_t file, line, slot;  /* slot: slot_size, 0 when unknown */
    uint16_t flags;
    uint8_t type, has_value, has_capacity;
} hscope__wobj;

typedef struct hscope__wacc hscope__wacc;
typedef struct hscope__wsrc hscope__wsrc;

/* The accumulator (waste.c), used on one thread.  With `resolve`, the
 * first copy of a value is fetched when its second copy is seen (a loaded
 * heap: ref is an object id); without, it comes from a ring of recent
 * first copies, or is read back at the end (hscope__wacc_pending,
 * hscope__wacc_confirm: ref is a line offset). */
typedef hscope_status (*hscope__wresolve_fn)(void *ud, uint64_t ref,
                                             hscope__wobj *out,
                                             hscope_error *err);
hscope_status hscope__wacc_new(hscope__wacc **out, hscope__mem *mem,
                               const hscope__wcfg *cfg,
                               hscope__wresolve_fn resolve, void *resolve_ud,
                               hscope_error *err);
void hscope__wacc_free(hscope__wacc *a);
/* Room for about n distinct values from the start (a hint). */
hscope_status hscope__wacc_reserve(hscope__wacc *a, uint64_t n, hscope_error *err);
/* Objects left out (the dumper's) and warnings found by the caller. */
void hscope__wacc_note(hscope__wacc *a, uint64_t excluded, uint32_t warnings);
/* A source of objects, owned by the accumulator.  hscope__wsrc_add runs
 * on the source's own thread (a parser slot's worker) with the file ids
 * of its interner; the source hands its strings over in
 * hscope__wsrc_flush / _done, on the accumulator's thread, in the dump's
 * order, with smap mapping its file ids to the accumulator's (NULL: the
 * same).  An `own` source is on the accumulator's thread (and its ids
 * the accumulator's): it hands over as it goes. */
hscope_status hscope__wsrc_new(hscope__wsrc **out, hscope__wacc *a, int own,
                               hscope_error *err);
hscope_status hscope__wsrc_add(hscope__wsrc *s, const hscope__wobj *o,
                               hscope_error *err);
hscope_status hscope__wsrc_flush(hscope__wsrc *s, const uint32_t *smap,
                                 size_t nsmap, hscope_error *err);
/* No more objects from s: hand over the rest, and its counts. */
hscope_status hscope__wsrc_done(hscope__wsrc *s, const uint32_t *smap,
                                size_t nsmap, hscope_error *err);
/* First copies still to be compared (*n of them, ascending refs), and
 * the ref of the i-th. */
hscope_status hscope__wacc_pending(hscope__wacc *a, size_t *n, hscope_error *err);
uint64_t hscope__wacc_pending_ref(const hscope__wacc *a, size_t i);
/* The record read back for pending copy i (file ids the accumulator's):
 * counted when it is the value expected there; else the dump changed (a
 * warning). */
hscope_status hscope__wacc_confirm(hscope__wacc *a, size_t i, const hscope__wobj *o,
                                   hscope_error *err);
/* Pending copy i could not be read back (the dump changed). */
void hscope__wacc_unconfirmed(hscope__wacc *a, size_t i);

/* The result (waste_build.c), built from the accumulator once every
 * source is done; file ids are strings of `strings`. */
hscope_status hscope__waste_finish(hscope_waste_t **out, hscope__wacc *a,
                                   const hscope__intern *strings,
                                   const hscope_allocator *alloc,
                                   const hscope_load_stats *stats,
                                   const uint64_t skipped[HSCOPE_SKIP__COUNT],
                                   hscope_error *err);

/* The result (read by api/waste_api.c and report/w_waste.c). */
typedef struct hscope__wrow {
    uint32_t key;                 /* string id in keys */
    uint8_t kind, type;
    uint64_t count, saving, memsize;
    uint64_t copies, frozen, fstring, values;
    uint64_t buffer, used;
    uint64_t vfirst;              /* its values: vrefs[vfirst..+values) */
} hscope__wrow;

typedef struct hscope__wval {
    uint64_t hash, len, data;     /* data: offset in varena of len bytes */
    uint64_t length;              /* the value's length: len, or for a
                                     placeholder of redact, the length of
                                     the value it stands for */
    int redacted;                 /* varena holds the placeholder */
    uint64_t copies, memsize, saving, frozen, fstring;
    uint64_t sfirst, nsites;      /* its sites: srefs[sfirst..+nsites) */
} hscope__wval;

typedef struct hscope__wref {
    uint64_t idx;                 /* a value index, or a key id */
    uint64_t copies, saving;
} hscope__wref;

struct hscope_waste {
    hscope__mem mem;
    hscope__intern keys;
    char *varena;
    hscope__wrow *rows;
    size_t nrows;
    hscope__wval *vals;
    size_t nvals;
    hscope__wref *vrefs, *srefs;  /* row -> values, value -> sites */
    int by;
    hscope_waste_totals tot;
    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
};

/* The suggested fix of a finding (a static sentence). */
const char *hscope__waste_fix(int kind, int type, uint64_t copies, uint64_t frozen);

/* hscope_waste_options_init, hscope_waste_totals_init, hscope_waste_free
 * (waste_build.c). */
void hscope__waste_options_init(hscope_waste_options *opts);
void hscope__waste_totals_init(hscope_waste_totals *totals);
void hscope__waste_free(hscope_waste_t *w);
/* The memory the handle holds (hscope_waste_memory()). */
uint64_t hscope__waste_memory(const hscope_waste_t *w);
/* Check a caller's options (NULL: defaults). */
hscope_status hscope__wcfg_read(const hscope_waste_options *in, hscope__wcfg *out,
                                hscope_error *err);
/* The two sources (waste_scan.c). */
hscope_status hscope__waste_file(hscope_waste_t **out, const char *path,
                                 const hscope_load_options *load,
                                 const hscope__wcfg *cfg, hscope_error *err);
hscope_status hscope__waste_heap(hscope_waste_t **out, const hscope_heap_t *heap,
                                 const hscope__wcfg *cfg, hscope_error *err);

/* ------------------------------------------------------------------ */
/* Memory over time (order.c, timeline.c)                             */
/* ------------------------------------------------------------------ */

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

/* One dump of a timeline, in time order. */
typedef struct hscope__tl_dump {
    char *path;                 /* as given (a copy) */
    uint64_t given;             /* index among the paths given */
    int has_time;
    double time;
    uint64_t count, memsize;    /* totals over every group */
    uint64_t excluded;          /* the dumper's objects left out */
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

/* ------------------------------------------------------------------ */
/* Budgets and checks (budget.c: the budget file; check.c: the check)  */
/* ------------------------------------------------------------------ */

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
