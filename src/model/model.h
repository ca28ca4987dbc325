/*
 * model.h - the columnar heap: immutable once built.
 *
 * Per object (id 0..n-1 in dump order): address u64, type u8, flags u16,
 * class u32, detail u32, site u32, generation u32, memsize u32, size u32,
 * edge_start u32 = 39 bytes, + 4 bytes per reference (CSR).  Values that do
 * not fit 32 bits go to sorted side tables.  Strings are interned once.
 */
#ifndef HSCOPE_MODEL_H
#define HSCOPE_MODEL_H

#include <pthread.h>

#include "../core/core.h"
#include "../core/intern.h"
#include "../parse/builder.h"

#define HSCOPE__CLS_HIDDEN  0xFFFFFFFFu /* no class field */
#define HSCOPE__CLS_UNKNOWN 0xFFFFFFFEu /* class address not a class record */

struct hscope_heap {
    hscope__mem mem;
    _Atomic int32_t refs;           /* handle + derived handles */

    uint32_t n;
    uint64_t *addr;
    uint8_t *type;
    uint16_t *flags;
    uint32_t *cls;                  /* class object id or HSCOPE__CLS_* */
    uint32_t *detail;
    uint32_t *site;
    uint32_t *gen;
    uint32_t *memsize;
    uint32_t *size;
    uint32_t *edge_start;           /* n + 1 entries */
    uint32_t *edges;
    uint64_t nedges;
    hscope__bigvals big_memsize, big_size;

    /* Ruby's object_id of the objects whose record has one (4.0+),
     * sorted by id: a side table, nothing per object without */
    hscope__bigvals oids;
    /* fields of the dump this version does not know, by name; NULL when
     * it has none */
    hscope__unknowns *unknown;

    /* raw class address of objects whose class did not resolve (sorted
     * by id), so nothing the dump said is lost */
    uint32_t *ucls_id;
    uint64_t *ucls_addr;
    size_t nucls;

    hscope__intern strings;
    uint32_t *site_file, *site_line, *site_method;
    size_t nsites;
    uint32_t lbl_hidden, lbl_unknown, lbl_anon, lbl_imemo_none;
    /* Ruby's allocation tracer (docs/DESIGN.md, "The allocation tracer"):
     * the string id of its DATA struct name and of its class label; both 0
     * when the dump has no tracer */
    uint32_t str_tracer, lbl_tracer;
    uint32_t *imemo_detail, *imemo_label; /* "<imemo:X>" per imemo_type */
    size_t nimemo;
    char type_names[256][24];

    /* roots, CSR by category */
    uint32_t ncat;
    uint32_t *cat_name;
    uint64_t *cat_records;
    uint64_t *cat_start;            /* ncat + 1 */
    uint64_t *cat_dangling;         /* ncat + 1: CSR offsets into root_dang */
    uint64_t *root_dang;            /* dangling root addresses by category */
    uint32_t *root_targets;

    /* dangling references: from (HSCOPE_ID_NONE for roots), address */
    uint32_t *dang_from;
    uint64_t *dang_addr;
    uint64_t ndang, ndang_unique;

    /* string values (optional) */
    uint32_t *val_id;
    uint64_t *val_off;
    uint32_t *val_len;
    size_t nval;
    char *val_arena;

    /* address index: open addressing over ids (+1), 0 = empty; NULL when
     * the run index below answers lookups */
    uint32_t *index;
    size_t index_mask;
    uint64_t duplicates;
    /* run index (src/index/index.c): the dump's addresses as disjoint
     * increasing runs within 16 KiB blocks (Ruby's heap pages), found by
     * a directory over the address span and a presence bitmap per run */
    struct hscope__run *runs;
    uint32_t nruns;
    unsigned rshift;
    uint64_t rmin;
    uint32_t *rdir;
    size_t nrdir;
    uint64_t *rbits;
    uint32_t *rrank;

    /* reverse references, built lazily */
    pthread_mutex_t rev_lock;
    _Atomic int rev_ready;
    uint32_t *rev_start;
    uint32_t *rev_src;

    /* a heap opened from a saved index: columns point into this mapping */
    void *map;
    size_t map_len;

    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
    uint64_t skip_line[HSCOPE__MAX_SKIP_EXAMPLES];
    int32_t skip_reason[HSCOPE__MAX_SKIP_EXAMPLES];
    uint32_t nskip;
};

/* Take over the builder's columns and resolve addresses (index, classes,
 * references, roots).  The builder is left empty. */
/* threads > 1: resolve references and classes on two threads (large
 * dumps only; the result is the same). */
hscope_status hscope__model_build(hscope_heap_t *h, hscope__builder *b,
                                  unsigned threads, hscope_error *err);
void hscope__model_free(hscope_heap_t *h);

/* Saved indexes (persist.c). */
hscope_status hscope__model_open_saved(hscope_heap_t *h, const char *path,
                                       const char *source, hscope_error *err);
int hscope__model_is_mapped(const hscope_heap_t *h, const void *p);
void hscope__saved_index_fix_checksums(unsigned char *buf, size_t len);
void hscope__model_unmap(hscope_heap_t *h);
hscope_status hscope__source_identity(const char *path, uint64_t *size,
                                      uint64_t *mtime_ns, uint64_t *hash,
                                      hscope_error *err);

uint64_t hscope__big_get(const hscope__bigvals *bv, uint32_t id);
/* Index of id in a sorted id array of n entries, or n if absent. */
size_t hscope__id_find(const uint32_t *ids, size_t n, uint32_t id);
/* The raw "class" address of object id as the dump wrote it, 0 if none. */
uint64_t hscope__class_addr(const hscope_heap_t *h, uint32_t id);
static inline uint64_t
hscope__memsize(const hscope_heap_t *h, uint32_t id)
{
    uint32_t v = h->memsize[id];
    return v == HSCOPE__U32_BIG ? hscope__big_get(&h->big_memsize, id) : v;
}
/* Bring in the columns a row about object id reads (address, type,
 * class, detail, site, memsize; with addr_only the address alone):
 * writers that list objects in an order of their own (by retained size)
 * call it some rows ahead, so that the misses of several rows overlap. */
HS_PREFETCH_FN void
hscope__heap_prefetch(const hscope_heap_t *h, uint32_t id, int addr_only)
{
    if (id >= h->n)
        return;
    __builtin_prefetch(&h->addr[id]);
    if (addr_only)
        return;
    __builtin_prefetch(&h->type[id]);
    __builtin_prefetch(&h->cls[id]);
    __builtin_prefetch(&h->detail[id]);
    __builtin_prefetch(&h->site[id]);
    __builtin_prefetch(&h->memsize[id]);
}
/* Ruby 4.0+ IMEMO fields objects: the string id of "fields" in h's
 * interner (0: no such object), and the owner of object id given that id
 * (its "class" field, resolved; HSCOPE_ID_NONE if id is no fields object
 * or the owner is not in the dump). */
uint32_t hscope__fields_str(const hscope_heap_t *h);
uint32_t hscope__fields_owner(const hscope_heap_t *h, uint32_t id, uint32_t fields_str);
/* Ruby's object_id of object id (side table); 0 if it has none. */
int hscope__oid(const hscope_heap_t *h, uint32_t id, uint64_t *oid);
/* The same for ids asked in rising order, scanning forward from *cursor
 * (0 at first). */
static inline int
hscope__oid_next(const hscope_heap_t *h, uint32_t id, size_t *cursor, uint64_t *oid)
{
    return hscope__bigvals_next(&h->oids, id, cursor, oid);
}
/* Is root category c conservative (machine_context)? */
int hscope__cat_conservative(const hscope_heap_t *h, uint32_t c);

/* Class label string id of an object (docs/DESIGN.md, "Class label"). */
uint32_t hscope__label(const hscope_heap_t *h, uint32_t id);
/* The struct name of Ruby's allocation tracer (the DATA object that
 * ObjectSpace.trace_object_allocations keeps its table in) and its label. */
#define HSCOPE__TRACER_STRUCT "ObjectTracing/allocation_info_tracer"
#define HSCOPE__TRACER_LABEL "<allocation tracer>"
/* Whether object id is Ruby's allocation tracer. */
static inline int
hscope__is_tracer(const hscope_heap_t *h, uint32_t id)
{
    return h->str_tracer && h->detail[id] == h->str_tracer && h->type[id] == HSCOPE_TYPE_DATA;
}
/* Finds the tracer's strings of a loaded heap (h->str_tracer, lbl_tracer);
 * adds the label when the tracer is there and `add`. */
hscope_status hscope__tracer_labels(hscope_heap_t *h, int add, hscope_error *err);
/* Display label of an object: a CLASS/MODULE's own name (else
 * "<anonymous>"), any other object's class label. */
uint32_t hscope__object_label(const hscope_heap_t *h, uint32_t id);

/* ------------------------------------------------------------------ */
/* A dump's records without a heap (records.c): the parser in sink mode */
/* ------------------------------------------------------------------ */

/* Where a streamed dump's records go: sink(ud, b, record) for each object
 * record; sink_oid (or NULL) right after it for a record with Ruby's
 * object_id; with `slots` (or NULL), the parallel parser's workers fold
 * records into per-slot states instead.  details: fill the record's
 * value, capacity, slot size and input offset (b->sink_details). */
typedef struct hscope__stream_sinks {
    hscope__sink_fn sink;
    hscope__sink_oid_fn sink_oid;
    const hscope__slot_sink *slots;
    void *ud;
    int details;
} hscope__stream_sinks;

/*
 * Read the dump at `path` with `lo` (NULL: defaults) through `s` without
 * building a heap.  b is set up here, with mem, and holds the strings,
 * sites and counts of what was read afterwards, success or not: release it
 * with hscope__heap_stream_end().  input_bytes and gzip may be NULL.
 */
hscope_status hscope__heap_stream(hscope__builder *b, hscope__mem *mem, const char *path,
                                  const hscope_load_options *lo,
                                  const hscope__stream_sinks *s, uint64_t *input_bytes,
                                  int *gzip, hscope_error *err);
void hscope__heap_stream_end(hscope__builder *b);
/* What a streamed pass saw (b after hscope__heap_stream), as a load's
 * statistics: *s is initialised and filled; load_ns the pass's time. */
void hscope__stream_stats(const hscope__builder *b, uint64_t input_bytes, int gzip,
                          uint64_t load_ns, hscope_load_stats *s);
/* Input offset of the i-th line to read back (rising with i). */
typedef uint64_t (*hscope__offset_fn)(void *ud, size_t i);
/* Line i read back: its object record, or NULL when the line holds none
 * (any more: the file changed, or the line is too long now). */
typedef hscope_status (*hscope__reread_fn)(void *ud, size_t i, const hscope__objrec *rec,
                                           hscope_error *err);
/*
 * Read back n lines of the dump at `path`, at input offsets offset(ud, i)
 * (a record's hscope__objrec.offset), with b: the builder of an earlier
 * hscope__heap_stream() of the same dump with `details`, whose string ids
 * the records keep using.  A plain file is read with positioned reads of
 * each line, a gzip stream inflated again up to each.  at(ud, i, ...) once
 * per line; b's sinks are replaced.
 */
hscope_status hscope__heap_stream_at(hscope__builder *b, const char *path,
                                     const hscope_load_options *lo, size_t n,
                                     hscope__offset_fn offset, hscope__reread_fn at, void *ud,
                                     hscope_error *err);
/* Name of a type code of a streamed dump's records ("STRING"), or NULL. */
const char *hscope__stream_type_name(const hscope__builder *b, uint64_t code);

/* Save the heap as DUMP.hsx (persist.c; hscope_heap_save). */
hscope_status hscope__heap_save(const hscope_heap_t *h, const char *path,
                                const char *source, hscope_error *uerr);
/* Reference count of a heap: the last release frees it (hscope_heap_free). */
void hscope__heap_retain(hscope_heap_t *h);
void hscope__heap_release(hscope_heap_t *h);

/* Opening a heap (load.c), reading it (access.c): the bodies of the
 * exported hscope_heap_* functions of the same names with one underscore
 * (api/heap_api.c), with their argument checks.  The layers above the
 * model call these. */
hscope_status hscope__heap_open_saved(hscope_heap_t **out, const char *path,
                                      const char *source,
                                      const hscope_load_options *uopts,
                                      hscope_error *uerr);
hscope_status hscope__heap_open_file(hscope_heap_t **out, const char *path,
                                     const hscope_load_options *opts,
                                     hscope_error *err);
hscope_status hscope__heap_open_fd(hscope_heap_t **out, int fd,
                                   const hscope_load_options *opts,
                                   hscope_error *err);
hscope_status hscope__heap_open_memory(hscope_heap_t **out, const void *data,
                                       size_t len,
                                       const hscope_load_options *opts,
                                       hscope_error *err);
hscope_heap_t *hscope__heap_ref(hscope_heap_t *h);
hscope_status hscope__heap_stats(const hscope_heap_t *h, hscope_load_stats *s);
uint64_t hscope__heap_skipped(const hscope_heap_t *h, int32_t reason);
uint64_t hscope__heap_skipped_line(const hscope_heap_t *h, uint32_t i,
                                   int32_t *reason);
uint64_t hscope__heap_object_count(const hscope_heap_t *h);
uint64_t hscope__heap_reference_count(const hscope_heap_t *h);
const char *hscope__heap_type_name(const hscope_heap_t *h, int32_t type);
hscope_status hscope__heap_find(const hscope_heap_t *h, uint64_t address,
                                hscope_id *out);
uint64_t hscope__heap_object_address(const hscope_heap_t *h, hscope_id id);
int32_t hscope__heap_object_type(const hscope_heap_t *h, hscope_id id);
uint32_t hscope__heap_object_flags(const hscope_heap_t *h, hscope_id id);
uint64_t hscope__heap_object_memsize(const hscope_heap_t *h, hscope_id id);
uint64_t hscope__heap_object_size(const hscope_heap_t *h, hscope_id id);
int64_t hscope__heap_object_generation(const hscope_heap_t *h, hscope_id id);
const char *hscope__heap_object_file(const hscope_heap_t *h, hscope_id id);
uint32_t hscope__heap_object_line(const hscope_heap_t *h, hscope_id id);
const char *hscope__heap_object_method(const hscope_heap_t *h, hscope_id id);
const char *hscope__heap_object_detail(const hscope_heap_t *h, hscope_id id);
hscope_id hscope__heap_object_class(const hscope_heap_t *h, hscope_id id);
uint64_t hscope__heap_object_class_address(const hscope_heap_t *h,
                                           hscope_id id);
int32_t hscope__heap_object_oid(const hscope_heap_t *h, hscope_id id, uint64_t *object_id);
hscope_id hscope__heap_object_owner(const hscope_heap_t *h, hscope_id id);
int32_t hscope__heap_root_category_conservative(const hscope_heap_t *h, uint32_t i);
uint32_t hscope__heap_unknown_count(const hscope_heap_t *h);
hscope_status hscope__heap_unknown_get(const hscope_heap_t *h, uint32_t i, int32_t *kind,
                                       const char **name, uint64_t *count);
const char *hscope__heap_object_class_label(const hscope_heap_t *h,
                                             hscope_id id);
const char *hscope__heap_object_label(const hscope_heap_t *h, hscope_id id);
hscope_status hscope__heap_object_references(const hscope_heap_t *h,
                                             hscope_id id,
                                             const hscope_id **targets,
                                             uint64_t *count);
hscope_status hscope__heap_object_referrers(hscope_heap_t *h, hscope_id id,
                                            const hscope_id **sources,
                                            uint64_t *count,
                                            hscope_error *uerr);
hscope_status hscope__heap_object_value(const hscope_heap_t *h, hscope_id id,
                                        const char **data, uint64_t *len);
hscope_status hscope__heap_column(const hscope_heap_t *h, int32_t column,
                                  const void **data, uint64_t *length,
                                  int32_t *elem);
const char *hscope__heap_string(const hscope_heap_t *h, uint32_t id);
hscope_status hscope__heap_site(const hscope_heap_t *h, uint32_t site,
                                uint32_t *file, uint32_t *line,
                                uint32_t *method);
uint32_t hscope__heap_root_category_count(const hscope_heap_t *h);
const char *hscope__heap_root_category_name(const hscope_heap_t *h,
                                             uint32_t i);
uint64_t hscope__heap_root_category_records(const hscope_heap_t *h, uint32_t i);
hscope_status hscope__heap_root_targets(const hscope_heap_t *h, uint32_t i,
                                        const hscope_id **targets,
                                        uint64_t *count, uint64_t *dangling);
hscope_status hscope__heap_root_dangling(const hscope_heap_t *h, uint32_t i,
                                         const uint64_t **addresses,
                                         uint64_t *count);
uint64_t hscope__heap_dangling_count(const hscope_heap_t *h);
hscope_status hscope__heap_dangling(const hscope_heap_t *h, uint64_t i,
                                    hscope_id *from, uint64_t *address);

#endif
