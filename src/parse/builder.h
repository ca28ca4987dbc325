/*
 * builder.h - growable columns filled by the parser, one record at a time.
 * The model (src/model) takes them over and resolves addresses to ids.
 */
#ifndef HSCOPE_BUILDER_H
#define HSCOPE_BUILDER_H

#include "../core/core.h"
#include "../core/intern.h"

#define HSCOPE__MAX_SKIP_EXAMPLES 16
#define HSCOPE__GEN_NONE UINT32_MAX
#define HSCOPE__U32_BIG UINT32_MAX /* value stored in a side table */

/* Names of fields a dump has and this version does not know (keys, GC
 * flags, type names: HSCOPE_UNKNOWN_*), counted per name: the first
 * HSCOPE__MAX_UNKNOWN distinct names, the rest in `other`.  Names longer
 * than the entry are cut (their first bytes are kept). */
#define HSCOPE__MAX_UNKNOWN 32
#define HSCOPE__UNKNOWN_NAME 48
typedef struct hscope__unknown {
    uint64_t count;
    int32_t kind;
    char name[HSCOPE__UNKNOWN_NAME];
} hscope__unknown;

typedef struct hscope__unknowns {
    hscope__unknown e[HSCOPE__MAX_UNKNOWN];
    uint32_t n;
    uint64_t other;           /* occurrences of names beyond the table */
} hscope__unknowns;

/* (id, value) pairs for column values that do not fit 32 bits. */
typedef struct hscope__bigvals {
    uint32_t *id;
    uint64_t *val;
    size_t len, cap_id, cap_val;
} hscope__bigvals;

struct hscope__builder;

/* One object record as decoded, for streaming consumers (sink mode):
 * strings are ids in the builder's interner. */
typedef struct hscope__objrec {
    uint64_t addr, class_addr, memsize, size, nrefs;
    uint32_t detail, file, line, method, site, gen; /* gen: GEN_NONE if absent */
    uint16_t flags;
    uint8_t type, has_class;
    /* Only from the line parser of a builder with sink_details set (the
     * waste analysis), else zero: the STRING/SYMBOL value decoded (valid
     * during the call), "capacity" and "slot_size" when the record has
     * them as plain integers, and the offset of the record's line in the
     * (uncompressed) input. */
    uint8_t has_value, has_capacity;
    uint32_t slot_size;
    uint64_t value_len, capacity, offset;
    const char *value;
} hscope__objrec;

typedef hscope_status (*hscope__sink_fn)(void *ud, struct hscope__builder *b,
                                         const hscope__objrec *o,
                                         hscope_error *err);
/* Ruby's object_id (4.0+) of the record the sink was just given: called
 * right after the sink, for the few records that have one. */
typedef hscope_status (*hscope__sink_oid_fn)(void *ud, struct hscope__builder *b,
                                             uint64_t oid, hscope_error *err);

typedef struct hscope__builder {
    hscope__mem *mem;
    hscope__intern strings;

    /* object columns, n entries (edge_start has n + 1) */
    size_t n, cap;
    uint64_t *addr;
    uint8_t *type;
    uint16_t *flags;
    uint32_t *class_ix;     /* the class address's index in cls_addr (0: no
                               class field); resolved by the model */
    uint32_t *detail;       /* string id: name / imemo_type / struct ... */
    uint32_t *site;         /* site id: (file, line, method) */
    uint32_t *gen;          /* HSCOPE__GEN_NONE: absent */
    uint32_t *memsize;      /* HSCOPE__U32_BIG: see big_memsize */
    uint32_t *size;         /* HSCOPE__U32_BIG: see big_size */
    uint32_t *edge_start;   /* index into edges of the first reference */
    size_t edge_cap_start;
    hscope__bigvals big_memsize, big_size;
    /* (id, object_id) of the objects whose record has one (Ruby 4.0+):
     * a side table, nothing per object for dumps without */
    hscope__bigvals oids;

    /* the distinct class addresses (cls_addr[0] = 0: none), by index: a
     * dump has few classes, so a 4-byte index per object instead of the
     * 8-byte address (11 MB less at the load's peak for 2.7 M objects);
     * cls_tab: open addressing, index or 0; cls_last: the last one found */
    uint64_t *cls_addr;
    size_t ncls, cls_cap;
    uint32_t *cls_tab;
    size_t cls_mask;
    uint32_t cls_last;

    /* references as raw addresses until the model resolves them */
    uint64_t *edges;
    size_t nedges, edge_cap;

    /* sites: (file, line, method) interned as a triple */
    uint32_t *site_file, *site_line, *site_method;
    size_t nsites, site_cap;
    uint32_t *site_table;   /* open addressing, site id or 0 */
    size_t site_mask;
    uint32_t last_site;     /* cache: last site returned */

    /* roots: category string id per raw reference */
    uint32_t *root_cat;     /* category per root reference */
    uint64_t *root_addr;
    size_t nroot, root_cap;
    uint32_t *cat_name;     /* distinct categories: string id */
    uint64_t *cat_records;  /* ROOT lines per category */
    size_t ncat, cat_cap;

    /* type names beyond the fixed ones (index = code) */
    char type_names[256][24];
    int ntypes;             /* next dynamic code */

    /* optional string values */
    int keep_values;
    uint32_t *val_id;
    uint64_t *val_off;
    uint32_t *val_len;
    size_t nval, val_cap;
    char *val_arena;
    size_t val_arena_len, val_arena_cap;

    /* fields this version does not know, by name; NULL until one is met */
    hscope__unknowns *unknown;

    /* counters */
    uint64_t lines, bytes, shapes, shape_memsize, free_slots, unknown_keys;
    uint64_t unknown_types, truncated, root_records;
    uint64_t blocks;        /* parallel block mode: chunks merged (0: read in order) */
    uint64_t skipped[HSCOPE_SKIP__COUNT];
    uint64_t skip_line[HSCOPE__MAX_SKIP_EXAMPLES];
    int32_t skip_reason[HSCOPE__MAX_SKIP_EXAMPLES];
    uint32_t nskip_examples;
    uint64_t max_objects;

    /* sink mode: objects go to sink() instead of the columns */
    hscope__sink_fn sink;
    hscope__sink_oid_fn sink_oid;   /* optional */
    void *sink_ud;
    int sink_details;       /* fill the objrec's value, capacity, slot size
                               and line offset (see hscope__objrec) */
    uint64_t streamed;      /* objects handed to the sink */
    /* optional, for the parallel parser: a sink whose records may be taken
     * in any order, run on the workers (see hscope__slot_sink) */
    const struct hscope__slot_sink *slot_sink;
} hscope__builder;

/*
 * A sink that folds records into order-independent totals can run on the
 * parallel parser's workers instead of on the merging thread.  slot_new
 * makes one state per worker slot (`seq` points at the number of the chunk
 * the slot is parsing: records of later chunks come later in the dump);
 * slot_sink is then that slot's sink, called on a worker with the slot
 * builder's string ids; after the last chunk, slot_merge folds a slot's
 * state into the final sink's (ud), given the maps from the slot's string
 * ids (smap, nsmap entries) and type codes (tmap, 256 entries) to the final
 * builder's; slot_free releases a slot's state.  chunk_done (may be NULL)
 * is called on the merging thread after each chunk a slot parsed, in dump
 * order, with the slot's string map as it stands: a sink can leave work
 * that needs the dump's order, or one thread, to it.
 */
typedef struct hscope__slot_sink {
    void *(*slot_new)(void *ud, const uint64_t *seq);
    hscope__sink_fn slot_sink;
    hscope_status (*slot_merge)(void *ud, void *slot_ud, const uint32_t *smap,
                                size_t nsmap, const int *tmap, hscope_error *err);
    void (*slot_free)(void *slot_ud);
    hscope_status (*chunk_done)(void *ud, void *slot_ud, const uint32_t *smap,
                                size_t nsmap, hscope_error *err);
} hscope__slot_sink;

hscope_status hscope__builder_init(hscope__builder *b, hscope__mem *m,
                                   int keep_values, uint64_t max_objects,
                                   hscope_error *err);
void hscope__builder_free(hscope__builder *b);
/* Count a skipped line (reason HSCOPE_SKIP_*) and keep its number among
 * the first HSCOPE__MAX_SKIP_EXAMPLES examples. */
void hscope__builder_note_skip(hscope__builder *b, int reason, uint64_t lineno);

/* The index of class address addr in b->cls_addr, added if new (0 for
 * address 0): the last one found is tried here, inline (most objects on
 * the parser's path), the table in hscope__builder_class_find(). */
hscope_status hscope__builder_class_find(hscope__builder *b, uint64_t addr, uint32_t *ix,
                                        hscope_error *err);
static inline hscope_status
hscope__builder_class(hscope__builder *b, uint64_t addr, uint32_t *ix, hscope_error *err)
{
    if (b->cls_last && b->cls_addr[b->cls_last] == addr) {
        *ix = b->cls_last;
        return HSCOPE_OK;
    }
    return hscope__builder_class_find(b, addr, ix, err);
}

/* Interned (file, line, method) -> site id (0 when all three are absent). */
hscope_status hscope__builder_site(hscope__builder *b, uint32_t file,
                                   uint32_t line, uint32_t method,
                                   uint32_t *out, hscope_error *err);
/* Type name -> code (fixed codes first, then per-heap dynamic codes). */
int hscope__type_code(hscope__builder *b, const char *s, size_t n);
/* Static name of a fixed type code, or NULL. */
const char *hscope__fixed_type_name(int code);

/* Append (id, v) to a side table. */
hscope_status hscope__bigvals_push(hscope__mem *m, hscope__bigvals *bv, uint32_t id,
                                   uint64_t v, hscope_error *err);

/* Count `count` occurrences of an unknown field (HSCOPE_UNKNOWN_* kind,
 * name bytes) in *u, allocated (with m) on the first. */
hscope_status hscope__unknown_note(hscope__mem *m, hscope__unknowns **u, int32_t kind,
                                   const char *name, size_t n, uint64_t count,
                                   hscope_error *err);

/* Object `i`'s value in a side table, scanning forward from *cursor (ids
 * asked in rising order, *cursor 0 at first): 1 and *v, or 0 if none. */
static inline int
hscope__bigvals_next(const hscope__bigvals *bv, size_t i, size_t *cursor, uint64_t *v)
{
    while (*cursor < bv->len && bv->id[*cursor] < i)
        (*cursor)++;
    if (*cursor < bv->len && bv->id[*cursor] == i) {
        *v = bv->val[*cursor];
        return 1;
    }
    return 0;
}

/*
 * The parallel parser's hand-over of what a chunk's builder keeps beside
 * the columns, once b's objects were appended to out's (or handed to out's
 * sink): object ids and unknown field names; b's are then emptied.  One
 * call per merged chunk, so that such side tables need no more of the
 * parallel parser's attention.
 */
hscope_status hscope__builder_merge_side(hscope__builder *out, hscope__builder *b,
                                         hscope_error *err);

#endif
