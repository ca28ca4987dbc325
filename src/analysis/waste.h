/*
 * waste.h - waste (waste.c the accumulator, waste_scan.c its two
 * sources, waste_build.c the result): what the other layers and files
 * see.  The accumulator's insides are in waste_acc.h.
 */
#ifndef HSCOPE_ANALYSIS_WASTE_H
#define HSCOPE_ANALYSIS_WASTE_H

#include "../model/model.h"

/* Options, checked and completed with the defaults. */
typedef struct hscope__wcfg {
    int by;                 /* HSCOPE_WASTE_BY_* */
    int keep_dumper;
    int keep_tracer;
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
/* Ruby's allocation tracer left out by the caller: objects, memsize. */
void hscope__wacc_note_tracer(hscope__wacc *a, uint64_t objects, uint64_t memsize);
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
    uint64_t chilled;             /* duplicate: copies that are chilled */
    uint32_t fix;                 /* its fix: string id in fixes */
    int32_t fix_kind;             /* HSCOPE_WASTE_FIX_* */
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
    uint64_t chilled;             /* chilled strings in the dump: Ruby 3.4+
                                     marks its literals */
    hscope__intern fixes;         /* the rows' fix sentences */
    hscope_waste_totals tot;
    uint64_t tracer, tracer_mem;  /* Ruby's allocation tracer left out */
    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
};

/* The fix of every row (waste_fix.c): its kind and sentence, decided
 * from the row's site (no allocation info, Ruby's own code, its library,
 * a gem, the application) and what the dump says of its objects. */
hscope_status hscope__waste_fixes(hscope_waste_t *w, hscope_error *err);
/* The name of a HSCOPE_WASTE_FIX_* kind ("literal", "gem", ...). */
const char *hscope__waste_fix_kind_name(int fix_kind);

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

#endif
