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

typedef struct hscope__builder {
    hscope__mem *mem;
    hscope__intern strings;

    /* object columns, n entries (edge_start has n + 1) */
    size_t n, cap;
    uint64_t *addr;
    uint8_t *type;
    uint16_t *flags;
    uint64_t *class_addr;   /* 0: no class field; resolved by the model */
    uint32_t *detail;       /* string id: name / imemo_type / struct ... */
    uint32_t *site;         /* site id: (file, line, method) */
    uint32_t *gen;          /* HSCOPE__GEN_NONE: absent */
    uint32_t *memsize;      /* HSCOPE__U32_BIG: see big_memsize */
    uint32_t *size;         /* HSCOPE__U32_BIG: see big_size */
    uint32_t *edge_start;   /* index into edges of the first reference */
    size_t edge_cap_start;
    hscope__bigvals big_memsize, big_size;

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

/* Interned (file, line, method) -> site id (0 when all three are absent). */
hscope_status hscope__builder_site(hscope__builder *b, uint32_t file,
                                   uint32_t line, uint32_t method,
                                   uint32_t *out, hscope_error *err);
/* Type name -> code (fixed codes first, then per-heap dynamic codes). */
int hscope__type_code(hscope__builder *b, const char *s, size_t n);
/* Static name of a fixed type code, or NULL. */
const char *hscope__fixed_type_name(int code);

#endif
