/*
 * parse.h - the dump parser: splits the byte stream into lines and decodes
 * each record into the builder.
 */
#ifndef HSCOPE_PARSE_H
#define HSCOPE_PARSE_H

#include "../io/reader.h"
#include "builder.h"

/* Readable bytes a line buffer must have after the line's newline. */
#define HSCOPE__LINE_PAD 32

typedef struct hscope__parse_opts {
    int strict;
    uint64_t max_line;        /* bytes; 0: default */
    uint64_t max_refs;        /* per record; 0: no cap */
    hscope_progress_fn progress;
    void *progress_ud;
    hscope_line_fn line_fn;   /* raw line hook, may be NULL */
    void *line_ud;
    uint64_t block_bytes;     /* parallel block size; 0: default (tests set it) */
    uint64_t progress_bytes;  /* input between progress calls; 0: 16 MiB (tests set it) */
} hscope__parse_opts;

/* The parser's options from a caller's (checked) load options. */
static inline hscope__parse_opts
hscope__parse_opts_of(const hscope_load_options *o)
{
    hscope__parse_opts po = {
        .strict = (o->flags & HSCOPE_LOAD_STRICT) != 0,
        .max_line = o->max_line_bytes,
        .max_refs = o->max_references,
        .progress = o->progress,
        .progress_ud = o->progress_user_data,
        .line_fn = o->line_fn,
        .line_ud = o->line_user_data,
    };
    return po;
}

/* Line parser: the builder it fills plus reusable scratch space, so that
 * the hot path allocates nothing per line. */
typedef struct hscope__lp {
    hscope__builder *b;
    const hscope__parse_opts *o;
    uint64_t *refs;          /* addresses of the current record */
    size_t nrefs, refs_cap;
    char *tmp;               /* unescaped string bytes */
    size_t tmp_cap;
    /* result of the last line */
    const char *why;         /* static text: what was wrong */
    const uint8_t *fail_at;  /* where it was detected */
    int reason;              /* HSCOPE_SKIP_* */
    hscope_status fatal;     /* memory or limit failure */
    hscope_error *err;
    /* the last file and method strings interned (ids in b->strings):
     * consecutive records mostly repeat them */
    uint32_t last_file, last_method;
    /* where the current line starts, and the input offset of buf0 (set by
     * the line loops), for hscope__objrec.offset */
    const uint8_t *line;
    const uint8_t *buf0;
    uint64_t base;
    /* What few records have, for the current record (the record's rare
     * bits, HSCOPE__RARE_*, say which; a record without pays one test):
     * Ruby's object_id, and the names of the fields this version does not
     * know (the first 8) */
    uint64_t oid;
    struct {
        int32_t kind;
        uint32_t len;
        char name[HSCOPE__UNKNOWN_NAME];
    } unk[8];
    uint32_t nunk;
} hscope__lp;

#define HSCOPE__RARE_OID 0x1u
#define HSCOPE__RARE_UNK 0x2u

void hscope__lp_init(hscope__lp *lp, hscope__builder *b,
                     const hscope__parse_opts *o, hscope_error *err);
/* The lines to come are in a buffer whose first byte, buf0, is at input
 * offset `base` (for hscope__objrec.offset). */
static inline void
hscope__lp_at(hscope__lp *lp, const uint8_t *buf0, uint64_t base)
{
    lp->buf0 = buf0;
    lp->base = base;
}
void hscope__lp_free(hscope__lp *lp);

/*
 * Parse one line [s, e): *e must be '\n' and HSCOPE__LINE_PAD readable
 * bytes must follow e (the scanner uses the newline as a sentinel; the
 * SIMD scans and literal key matches read up to 20 bytes past it).  Returns 1 if the record
 * was stored, 0 if the line was skipped (lp->reason, lp->why, lp->fail_at),
 * -1 on a fatal error (lp->fatal, details in the error).
 */
int hscope__lp_line(hscope__lp *lp, const uint8_t *s, const uint8_t *e);

/*
 * The same for a line whose end is not known yet: the line is s up to its
 * first '\n', which must come at or before `lim` (*lim == '\n', padded as
 * above).  *nl is set to that newline, found by the parse itself on the
 * common path, so the caller does not scan the line twice.
 */
int hscope__lp_next(hscope__lp *lp, const uint8_t *s, const uint8_t *lim,
                    const uint8_t **nl);

/* Parse the whole stream into b.  Fatal errors (I/O, memory, strict-mode
 * parse errors, cancellation) are returned; skipped lines are counted. */
hscope_status hscope__parse_stream(hscope__reader *r, hscope__builder *b,
                                   const hscope__parse_opts *o,
                                   hscope_error *err);

/* Parse with `threads` worker threads (>= 1) plus the calling thread,
 * which merges (and reads, unless the input is plain and of known size: then
 * each worker reads its own blocks); same result as hscope__parse_stream.  In sink
 * mode the sink is called on the calling thread, in dump order.  Not for
 * a line hook (it needs the raw lines in order on one thread). */
hscope_status hscope__parse_parallel(hscope__reader *r, hscope__builder *b,
                                     const hscope__parse_opts *o,
                                     unsigned threads, hscope_error *err);

#ifdef HSCOPE_TEST_HOOKS
/*
 * Test builds only (the internal library of the white-box tests, built
 * with -DHSCOPE_TEST_HOOKS; the shipped library has none of this): the
 * parallel parser calls hscope__parallel_hook, when set, at each point
 * where work passes between its threads, so a test can perturb the
 * schedule there (yield, sleep), lose wakeups on purpose, and fill the
 * unused bytes of a slot buffer with garbage.  The hook runs on the
 * parser's threads, concurrently; it must be thread-safe.
 */
enum {
    HSCOPE__HOOK_TAKE_SLOT,  /* reading in order: got a free slot, before filling it */
    HSCOPE__HOOK_QUEUE,      /* a filled slot is about to be handed to the workers */
    HSCOPE__HOOK_QUEUED,     /* ... and was */
    HSCOPE__HOOK_TAKEN,      /* a worker took a slot, before reading or parsing it */
    HSCOPE__HOOK_PARSED,     /* a worker parsed a slot, before marking it done */
    HSCOPE__HOOK_MERGE,      /* the merging thread looks for the next chunk */
    HSCOPE__HOOK_MERGED,     /* ... merged it, before freeing its slot */
    HSCOPE__HOOK_WAKE,       /* waiters are about to be woken (mutex held): a non-zero
                                return drops the wakeup, as a faulty C library could */
    HSCOPE__HOOK_TIMEOUT,    /* a bounded wait ran out (mutex held) */
    HSCOPE__HOOK_POISON,     /* [p, p + n) of a slot buffer holds nothing the parse
                                may depend on: the test may overwrite it */
};
typedef int (*hscope__parallel_hook_fn)(int point, uint8_t *p, size_t n);
extern hscope__parallel_hook_fn hscope__parallel_hook;
/* The bound of every wait in the parallel parser, in ms (default 100). */
extern unsigned hscope__parallel_wait_ms;
#endif

/* Parser threads for a load option value: `requested`, or for 0 one per
 * core (at most 8) unless the input is small; at most 64. */
unsigned hscope__parse_threads(unsigned requested, const hscope__reader *r);

/* Open `path` and parse it all into b (which may be in sink mode), with
 * hscope__parse_threads(threads) threads (a line hook forces one).  Fails
 * with HSCOPE_ERR_NOT_A_DUMP when no line is a dump record. */
hscope_status hscope__parse_path(const char *path, int no_gzip, unsigned threads,
                                 hscope__builder *b,
                                 const hscope__parse_opts *o,
                                 uint64_t *input_bytes, int *gzip,
                                 hscope_error *err);

#endif
