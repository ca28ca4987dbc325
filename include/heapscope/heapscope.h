/*
 * heapscope.h - the public API of libheapscope.
 *
 * libheapscope reads Ruby heap dumps (ObjectSpace.dump_all, Ruby 2.1 to 4.0,
 * plain or gzip) into a compact, immutable, columnar model and answers
 * questions about it: what is on the heap, where it was allocated, what grew.
 *
 * Conventions (docs/DESIGN.md has the definitions):
 *  - Every call that can fail returns an hscope_status; details go into a
 *    caller-owned hscope_error (may be NULL).  On failure *out stays NULL and
 *    nothing leaks.
 *  - Handles ending in _t are opaque and freed with the matching *_free(),
 *    which accepts NULL.
 *  - Option structs carry their own size; zero in any field means "default".
 *    Initialise them with the *_INIT macro or its *_init() function twin.
 *  - Strings returned by accessors are NUL-terminated UTF-8 (or raw bytes as
 *    the dump had them), borrowed, and valid until the owning handle is freed.
 *  - A loaded heap is immutable: any number of threads may call any function
 *    on it at once, except hscope_heap_free().  Lazily built structures
 *    (reverse references) are built once under an internal lock.
 *
 * Glossary (each word means one thing here and in docs/):
 *  - dump: the file ObjectSpace.dump_all wrote (JSON lines, plain or gzip).
 *  - heap: a dump loaded into the library's model (hscope_heap_t).
 *  - address index: the in-memory map from an object's address to its id,
 *    and the reverse references built from it (stats.index_bytes).
 *  - saved index: a heap written to disk (`heapscope index`, .hsx,
 *    hscope_heap_save()) and opened again in milliseconds; "from_index",
 *    HSCOPE_LOAD_USE_INDEX and the CLI's --no-index name this one
 *    (HSCOPE_LOAD_USE_SAVED_INDEX is the clear name of the flag).
 *  - writer: the code that writes an analysis as text, JSON, CSV, DOT, SVG
 *    (the hscope_*_write() calls).  Their options struct is named
 *    hscope_report_options in 0.1; hscope_write_options is its clear name.
 *  - report: the one HTML page with every analysis (hscope_html_report_*,
 *    `heapscope report`), nothing else.
 *  - domtree: the dominator tree; hscope_dom_options (0.1) is also
 *    hscope_domtree_options.
 *  - leaked: allocated between dumps A and B and still alive in C (three
 *    dumps); with two dumps only "new since A" can be said.
 *  - the dumper's objects, the allocation tracer: objects the act of dumping
 *    or of tracing allocations adds; left out of totals unless asked.
 *
 * Naming, for every symbol from 0.3 on: a handle's scalar fact is
 * hscope_<handle>_<field>(h, i) returning it; a fact that fills a struct is
 * hscope_<handle>_<noun>(h, ..., struct *out) returning hscope_status (no
 * _get suffix; hscope_waste_totals_get, hscope_waste_row_get,
 * hscope_paths_get, hscope_holders_get and hscope_check_rule_get keep
 * theirs); the dominator tree is always "domtree", never "dom".
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef HEAPSCOPE_H
#define HEAPSCOPE_H

#include <stddef.h>
#include <stdint.h>

#include "heapscope/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HSCOPE_BUILDING_LIBRARY) && defined(__GNUC__)
#define HSCOPE_API __attribute__((visibility("default")))
#else
#define HSCOPE_API
#endif

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Result of every fallible call: one of enum hscope_status_code.  Values
 * are fixed and append-only: a new release may add codes, never renumber
 * them.  Carried as a plain int32_t so that FFI callers need no enum ABI.
 */
typedef int32_t hscope_status;

enum hscope_status_code {
    HSCOPE_OK               = 0,  /* success */
    HSCOPE_ERR_INVALID_ARG  = 1,  /* NULL or out-of-range argument */
    HSCOPE_ERR_NOMEM        = 2,  /* allocation failed (or max_memory) */
    HSCOPE_ERR_IO           = 3,  /* read error; errno in hscope_error */
    HSCOPE_ERR_PARSE        = 4,  /* malformed line (strict mode) */
    HSCOPE_ERR_NOT_A_DUMP   = 5,  /* no heap dump record in the input */
    HSCOPE_ERR_GZIP         = 6,  /* corrupt gzip stream */
    HSCOPE_ERR_LIMIT        = 7,  /* a configured or built-in limit hit */
    HSCOPE_ERR_CANCELLED    = 8,  /* progress callback asked to stop */
    HSCOPE_ERR_NOT_FOUND    = 9,  /* no such address, key or value */
    HSCOPE_ERR_UNSUPPORTED  = 10, /* option or key not known */
    HSCOPE_ERR_TRUNCATED    = 11, /* input ends mid-line (strict mode) */
    HSCOPE_ERR_INTERNAL     = 12, /* a bug: please report it */
    HSCOPE_ERR_CORRUPT      = 13, /* saved index fails a checksum or bound */
    HSCOPE_ERR_STALE        = 14  /* saved index is of another dump/format */
};

/** Size of the message buffer inside hscope_error. */
#define HSCOPE_ERROR_MESSAGE_SIZE 256

/**
 * Caller-owned error details.  Set `size` to sizeof(hscope_error) (or call
 * hscope_error_init()) before passing it in.  The library never allocates
 * for an error and keeps no thread-local state: the first error detected
 * during a call is recorded here.
 */
typedef struct hscope_error {
    uint32_t size;       /* sizeof(hscope_error), set by the caller */
    hscope_status status;/* same value the failed call returned */
    int32_t sys_errno;   /* errno for HSCOPE_ERR_IO, else 0 */
    uint32_t reserved;   /* zero */
    uint64_t line;       /* 1-based input line, 0 when not applicable */
    uint64_t offset;     /* byte offset in the (uncompressed) input */
    char message[HSCOPE_ERROR_MESSAGE_SIZE]; /* NUL-terminated, English */
} hscope_error;

#define HSCOPE_ERROR_INIT { sizeof(hscope_error), 0, 0, 0, 0, 0, { 0 } }

/** Initialise an error struct (function twin of HSCOPE_ERROR_INIT). */
HSCOPE_API void hscope_error_init(hscope_error *err);

/** Static name of a status code, e.g. "HSCOPE_ERR_PARSE"; never NULL. */
HSCOPE_API const char *hscope_status_name(hscope_status status);

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

/** Run-time version as MAJOR*10000 + MINOR*100 + PATCH. */
HSCOPE_API uint32_t hscope_version_number(void);
/** Run-time version string, e.g. "0.1.0". */
HSCOPE_API const char *hscope_version_string(void);

/* ------------------------------------------------------------------------ */
/* Allocation hooks and progress                                             */
/* ------------------------------------------------------------------------ */

/**
 * Custom allocator for one handle and everything derived from it.  All three
 * functions must be set.  `realloc_fn(ud, NULL, n)` must behave like malloc
 * and `free_fn(ud, NULL)` must be a no-op.  Called from any thread that works
 * on the handle, so it must be thread-safe if the handle is shared.
 */
typedef struct hscope_allocator {
    uint32_t size;       /* sizeof(hscope_allocator) */
    uint32_t reserved;   /* zero */
    void *(*malloc_fn)(void *user_data, size_t n);
    void *(*realloc_fn)(void *user_data, void *ptr, size_t n);
    void (*free_fn)(void *user_data, void *ptr);
    void *user_data;
} hscope_allocator;

/**
 * Progress callback: `done` and `total` are input bytes (compressed bytes for
 * gzip; `total` is 0 when unknown, e.g. for a pipe).  Return 0 to go on, any
 * other value to cancel: the call then fails with HSCOPE_ERR_CANCELLED.
 * Called from the loading thread, at most every few megabytes.
 *
 * Cancelling.  The callback runs on the thread that called the load (never
 * on a parser thread): once when reading starts, then after every 16 MiB
 * or so of input.  To stop a load from elsewhere (another thread, a signal
 * handler), set a flag there and return it from the callback; the Ruby
 * binding does this from its unblock function, so Ctrl-C, Thread#raise and
 * Timeout stop a load.  After a non-zero return the load reads no more,
 * lets each parser thread finish the chunk it holds (a few MiB, or one
 * line of at most max_line_bytes), joins them, frees everything and fails
 * with HSCOPE_ERR_CANCELLED; it keeps nothing.  So a cancel takes effect
 * within about 16 MiB of input plus one chunk.  Not interrupted: a read
 * from a pipe or socket that delivers nothing (the load waits for data or
 * the end), and the model and index built after the last input byte.
 */
typedef int32_t (*hscope_progress_fn)(void *user_data, uint64_t done,
                                      uint64_t total);

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */
/* ------------------------------------------------------------------------ */

/** Stop at the first malformed line instead of skipping and counting it. */
#define HSCOPE_LOAD_STRICT       0x1u
/** Keep STRING/SYMBOL `value` text (off by default: memory, and secrets). */
#define HSCOPE_LOAD_VALUES       0x2u
/** Treat the input as plain text even if it starts with the gzip magic. */
#define HSCOPE_LOAD_NO_GZIP      0x4u
/** hscope_heap_open_file(): use PATH.hsx (hscope_heap_save()) when it was
 * made from this very file; otherwise parse PATH as usual. */
#define HSCOPE_LOAD_USE_INDEX    0x8u
#define HSCOPE_LOAD_USE_SAVED_INDEX HSCOPE_LOAD_USE_INDEX /* the clear name */

/** Default for hscope_load_options.max_line_bytes: 1 GiB. */
#define HSCOPE_DEFAULT_MAX_LINE_BYTES ((uint64_t)1 << 30)

/**
 * Line callback: called for every input line before it is parsed, with its
 * bytes (no newline; not NUL-terminated; valid during the call only) and
 * its 1-based number.  Return 0 to go on, non-zero to cancel the load.
 */
typedef int32_t (*hscope_line_fn)(void *user_data, const char *line,
                                  uint64_t len, uint64_t lineno);

/**
 * Options for hscope_heap_open_*().  Zero in every field means the default.
 * Pass NULL for all defaults.
 */
typedef struct hscope_load_options {
    uint32_t size;                 /* sizeof(hscope_load_options) */
    uint32_t flags;                /* HSCOPE_LOAD_* bits */
    const hscope_allocator *allocator; /* NULL: malloc/realloc/free */
    hscope_progress_fn progress;   /* NULL: no progress reports */
    void *progress_user_data;
    uint64_t max_line_bytes;       /* longest accepted line; 0: 1 GiB */
    uint64_t max_memory;           /* bytes the load may allocate; 0: no cap */
    uint64_t max_objects;          /* 0: no cap below the 2^32-2 hard limit */
    uint64_t max_references;       /* per object; 0: no cap */
    uint32_t threads;              /* parser threads; 0: one per core (max 8),
                                      1: parse on the calling thread */
    uint32_t reserved;             /* zero */
    hscope_line_fn line_fn;        /* NULL: none */
    void *line_user_data;
} hscope_load_options;

#define HSCOPE_LOAD_OPTIONS_INIT { sizeof(hscope_load_options), 0, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL }

/** Function twin of HSCOPE_LOAD_OPTIONS_INIT. */
HSCOPE_API void hscope_load_options_init(hscope_load_options *opts);

/** An immutable, loaded heap dump.  Free with hscope_heap_free(). */
typedef struct hscope_heap hscope_heap_t;

/** Object ids are dense, 0..n-1 in dump order. */
typedef uint32_t hscope_id;
#define HSCOPE_ID_NONE ((hscope_id)0xFFFFFFFFu)

/**
 * Load a heap dump from a file path ("-" is not special).  gzip input is
 * detected by its magic bytes.  It is inflated by ISA-L where the library
 * was built with it, else by zlib; the result is the same.  With ISA-L, a
 * stream cut short costs a second pass, by zlib, over its last member.
 * Files larger than 4 GiB are supported.
 * A plain file that grows while it loads may be read only up to the size
 * it had when the load started (parallel parsing splits it by that size).
 */
HSCOPE_API hscope_status hscope_heap_open_file(hscope_heap_t **out,
                                               const char *path,
                                               const hscope_load_options *opts,
                                               hscope_error *err);

/** Load from an open file descriptor (read to EOF; not closed). */
HSCOPE_API hscope_status hscope_heap_open_fd(hscope_heap_t **out, int fd,
                                             const hscope_load_options *opts,
                                             hscope_error *err);

/** Load from a memory buffer (not retained after the call returns). */
HSCOPE_API hscope_status hscope_heap_open_memory(hscope_heap_t **out,
                                                 const void *data, size_t len,
                                                 const hscope_load_options *opts,
                                                 hscope_error *err);

/**
 * Save the loaded model as an index file (docs/FORMAT.md) that
 * hscope_heap_open_saved() maps back in milliseconds.  `source` (may be
 * NULL) is the dump it was read from: its size, mtime and a hash of its
 * ends are recorded so a stale index is recognised.  Written to a
 * temporary name and renamed, so readers never see a partial file.
 */
HSCOPE_API hscope_status hscope_heap_save(const hscope_heap_t *heap,
                                          const char *path, const char *source,
                                          hscope_error *err);

/**
 * Open a saved index read-only with mmap (shareable between processes; no
 * parsing).  With `source`, the index must have been made from that file
 * as it is now, else HSCOPE_ERR_STALE.  Every section is checksummed and
 * every stored offset and id bounds-checked: a damaged or forged file
 * gives HSCOPE_ERR_CORRUPT, never a crash.  Load options: the allocator
 * and max_memory apply; parse options are ignored.
 */
HSCOPE_API hscope_status hscope_heap_open_saved(hscope_heap_t **out,
                                                const char *path,
                                                const char *source,
                                                const hscope_load_options *opts,
                                                hscope_error *err);

/**
 * Take another reference to a heap (for bindings whose objects share it);
 * each reference is released with hscope_heap_free().  Returns `heap`.
 */
HSCOPE_API hscope_heap_t *hscope_heap_ref(hscope_heap_t *heap);

/** Free a heap.  Derived handles keep it alive until they are freed too. */
HSCOPE_API void hscope_heap_free(hscope_heap_t *heap);

/* ------------------------------------------------------------------------ */
/* Load statistics                                                           */
/* ------------------------------------------------------------------------ */

/** Why a line was skipped (lenient mode).  Fixed values, append-only. */
#define HSCOPE_SKIP_BAD_JSON        0 /* not valid JSON (raw quote, NUL...) */
#define HSCOPE_SKIP_NOT_OBJECT      1 /* valid JSON but not an object */
#define HSCOPE_SKIP_NO_TYPE         2 /* record without "type" */
#define HSCOPE_SKIP_NO_ADDRESS      3 /* object record without "address" */
#define HSCOPE_SKIP_BAD_VALUE       4 /* known key with a wrong-typed value */
#define HSCOPE_SKIP_NUMBER_RANGE    5 /* integer beyond 64 bits */
#define HSCOPE_SKIP_TOO_LONG        6 /* longer than max_line_bytes */
#define HSCOPE_SKIP_EMPTY           7 /* blank line */
#define HSCOPE_SKIP_TRUNCATED       8 /* last line cut off (no newline) */
#define HSCOPE_SKIP_TOO_DEEP        9 /* nesting beyond the supported depth */
#define HSCOPE_SKIP_TOO_MANY_REFS  10 /* more references than max_references */
#define HSCOPE_SKIP__COUNT         11

/** Static name of a skip reason, e.g. "bad_json"; "?" if unknown. */
HSCOPE_API const char *hscope_skip_reason_name(int32_t reason);

/**
 * Counters gathered while loading.  Caller-owned; set `size` before the
 * call (fields beyond the caller's size are not written).
 */
typedef struct hscope_load_stats {
    uint32_t size;                 /* sizeof(hscope_load_stats) */
    uint32_t gzip;                 /* 1 if the input was gzip */
    uint64_t input_bytes;          /* bytes read from the source */
    uint64_t bytes;                /* uncompressed bytes parsed */
    uint64_t lines;                /* lines seen (incl. skipped) */
    uint64_t objects;              /* object records */
    uint64_t references;           /* resolved object->object edges */
    uint64_t root_records;         /* ROOT lines */
    uint64_t root_references;      /* resolved root->object edges */
    uint64_t shapes;               /* SHAPE records */
    uint64_t free_slots;           /* NONE records (full: true) */
    uint64_t dangling_references;  /* edges to addresses not in the dump */
    uint64_t dangling_addresses;   /* distinct such addresses */
    uint64_t duplicate_addresses;  /* objects whose address repeats */
    uint64_t skipped_lines;        /* sum over all skip reasons */
    uint64_t unknown_keys;         /* key occurrences not understood */
    uint64_t unknown_types;        /* objects of a type name not known */
    uint64_t truncated;            /* 1 if the input ended mid-line/stream */
    uint64_t load_ns;              /* wall time of the load */
    uint64_t model_bytes;          /* memory held by the model */
    uint64_t index_bytes;          /* memory held by the address index */
    uint64_t total_memsize;        /* sum of object memsize */
    uint64_t from_index;           /* 1 if opened from a saved index */
    uint64_t object_ids;           /* objects whose record has Ruby's
                                      object_id (4.0+; since 0.2) */
} hscope_load_stats;

#define HSCOPE_LOAD_STATS_INIT { sizeof(hscope_load_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/** Function twin of HSCOPE_LOAD_STATS_INIT. */
HSCOPE_API void hscope_load_stats_init(hscope_load_stats *stats);

/** Copy the heap's load statistics into *stats. */
HSCOPE_API hscope_status hscope_heap_stats(const hscope_heap_t *heap,
                                           hscope_load_stats *stats);

/** Number of lines skipped for `reason` (HSCOPE_SKIP_*). */
HSCOPE_API uint64_t hscope_heap_skipped(const hscope_heap_t *heap,
                                        int32_t reason);

/**
 * Line number of the i-th skipped line (first 16 are kept), or 0 when there
 * is no such entry.  *reason (may be NULL) receives its HSCOPE_SKIP_* code.
 */
HSCOPE_API uint64_t hscope_heap_skipped_line(const hscope_heap_t *heap,
                                             uint32_t i, int32_t *reason);

/* ------------------------------------------------------------------------ */
/* Objects                                                                   */
/* ------------------------------------------------------------------------ */

/** Object types.  Codes 1..31 are fixed; 32..254 are type names this
 * version does not know, numbered per heap (see hscope_heap_type_name()). */
#define HSCOPE_TYPE_OBJECT    1
#define HSCOPE_TYPE_CLASS     2
#define HSCOPE_TYPE_MODULE    3
#define HSCOPE_TYPE_ICLASS    4
#define HSCOPE_TYPE_FLOAT     5
#define HSCOPE_TYPE_STRING    6
#define HSCOPE_TYPE_REGEXP    7
#define HSCOPE_TYPE_ARRAY     8
#define HSCOPE_TYPE_HASH      9
#define HSCOPE_TYPE_STRUCT   10
#define HSCOPE_TYPE_BIGNUM   11
#define HSCOPE_TYPE_FILE     12
#define HSCOPE_TYPE_DATA     13
#define HSCOPE_TYPE_MATCH    14
#define HSCOPE_TYPE_SYMBOL   15
#define HSCOPE_TYPE_RATIONAL 16
#define HSCOPE_TYPE_COMPLEX  17
#define HSCOPE_TYPE_IMEMO    18
#define HSCOPE_TYPE_NODE     19
#define HSCOPE_TYPE_ZOMBIE   20
#define HSCOPE_TYPE_NIL      21
#define HSCOPE_TYPE_TRUE     22
#define HSCOPE_TYPE_FALSE    23
#define HSCOPE_TYPE_FIXNUM   24
#define HSCOPE_TYPE_UNDEF    25
#define HSCOPE_TYPE_MOVED    26
#define HSCOPE_TYPE_UNKNOWN  27  /* the literal type name "UNKNOWN" */
#define HSCOPE_TYPE_OTHER   255  /* more than 223 unknown type names */

/** Object flag bits (hscope_heap_object_flags()). */
#define HSCOPE_FLAG_FROZEN        0x0001u
#define HSCOPE_FLAG_EMBEDDED      0x0002u
#define HSCOPE_FLAG_SHARED        0x0004u
#define HSCOPE_FLAG_FSTRING       0x0008u
#define HSCOPE_FLAG_OLD           0x0010u
#define HSCOPE_FLAG_MARKED        0x0020u
#define HSCOPE_FLAG_UNCOLLECTIBLE 0x0040u
#define HSCOPE_FLAG_WB_PROTECTED  0x0080u
#define HSCOPE_FLAG_PINNED        0x0100u
#define HSCOPE_FLAG_BROKEN        0x0200u
#define HSCOPE_FLAG_MARKING       0x0400u
#define HSCOPE_FLAG_REMEMBERED    0x0800u
#define HSCOPE_FLAG_SINGLETON     0x1000u
#define HSCOPE_FLAG_CHILLED       0x2000u
/** Ractor-shareable (Ruby 4.0+ "flags": {"shareable": true}).  Since 0.2. */
#define HSCOPE_FLAG_SHAREABLE     0x4000u

/** Number of objects (records other than ROOT, SHAPE and NONE). */
HSCOPE_API uint64_t hscope_heap_object_count(const hscope_heap_t *heap);

/** Number of resolved object->object references (CSR edges). */
HSCOPE_API uint64_t hscope_heap_reference_count(const hscope_heap_t *heap);

/** Name of a type code as the dump spelled it ("STRING"); "?" if unused. */
HSCOPE_API const char *hscope_heap_type_name(const hscope_heap_t *heap,
                                             int32_t type);

/** Look up an object by address.  HSCOPE_ERR_NOT_FOUND if absent; when an
 * address repeats in a (corrupt) dump, the last record wins. */
HSCOPE_API hscope_status hscope_heap_find(const hscope_heap_t *heap,
                                          uint64_t address, hscope_id *out);

/* Accessors for one object.  `id` must be < hscope_heap_object_count();
 * out-of-range ids return 0 / NULL / HSCOPE_ID_NONE. */
HSCOPE_API uint64_t hscope_heap_object_address(const hscope_heap_t *heap, hscope_id id);
HSCOPE_API int32_t hscope_heap_object_type(const hscope_heap_t *heap, hscope_id id);
HSCOPE_API uint32_t hscope_heap_object_flags(const hscope_heap_t *heap, hscope_id id);
/** memsize field, 0 when absent. */
HSCOPE_API uint64_t hscope_heap_object_memsize(const hscope_heap_t *heap, hscope_id id);
/** bytesize (STRING, SYMBOL), length (ARRAY) or size (HASH); 0 if absent. */
HSCOPE_API uint64_t hscope_heap_object_size(const hscope_heap_t *heap, hscope_id id);
/** Allocation generation, or -1 when the object was not traced. */
HSCOPE_API int64_t hscope_heap_object_generation(const hscope_heap_t *heap, hscope_id id);
/** Allocation file, or NULL when absent. */
HSCOPE_API const char *hscope_heap_object_file(const hscope_heap_t *heap, hscope_id id);
/** Allocation line, 0 when absent. */
HSCOPE_API uint32_t hscope_heap_object_line(const hscope_heap_t *heap, hscope_id id);
/** Allocating method, or NULL when absent. */
HSCOPE_API const char *hscope_heap_object_method(const hscope_heap_t *heap, hscope_id id);
/** Type detail: CLASS/MODULE name (else real_class_name), IMEMO imemo_type,
 * DATA struct, NODE node_type; NULL when absent. */
HSCOPE_API const char *hscope_heap_object_detail(const hscope_heap_t *heap, hscope_id id);
/** Id of the object's class record, or HSCOPE_ID_NONE when it has no
 * class, or the class address is not a CLASS/MODULE/ICLASS of the dump. */
HSCOPE_API hscope_id hscope_heap_object_class(const hscope_heap_t *heap, hscope_id id);
/** The raw "class" address as written in the dump, 0 when absent. */
HSCOPE_API uint64_t hscope_heap_object_class_address(const hscope_heap_t *heap, hscope_id id);
/**
 * Class label, as defined in docs/DESIGN.md: "<imemo:TYPE>" for IMEMO,
 * "<hidden>" without a class, "<unknown>" when the class address is not a
 * class record of the dump, else the class record's name, else its
 * real_class_name, else "<anonymous>".
 */
HSCOPE_API const char *hscope_heap_object_class_label(const hscope_heap_t *heap, hscope_id id);

/**
 * The name an object goes by in every output (since 0.2): a CLASS or
 * MODULE is labelled by its own name (else "<anonymous>"), every other
 * object by its class label (hscope_heap_object_class_label()).  So the
 * class Object is "Object", not "Class", and PostsController is
 * "PostsController".  Grouping keys (tally "class") keep the class label.
 * Borrowed; NULL for an id out of range.
 */
HSCOPE_API const char *hscope_heap_object_label(const hscope_heap_t *heap, hscope_id id);

/**
 * Outgoing references of an object, in dump order, with duplicates; only
 * those that resolve to an object of the dump (see
 * hscope_heap_dangling_count()).  *targets is borrowed.
 */
HSCOPE_API hscope_status hscope_heap_object_references(const hscope_heap_t *heap,
                                                       hscope_id id,
                                                       const hscope_id **targets,
                                                       uint64_t *count);

/**
 * Objects that reference `id` (reverse edges, one entry per edge).  The
 * reverse index is built on first use (thread-safe); that may fail with
 * HSCOPE_ERR_NOMEM.  *sources is borrowed.
 */
HSCOPE_API hscope_status hscope_heap_object_referrers(hscope_heap_t *heap,
                                                      hscope_id id,
                                                      const hscope_id **sources,
                                                      uint64_t *count,
                                                      hscope_error *err);

/**
 * STRING/SYMBOL value text (decoded from JSON escapes), only when loaded
 * with HSCOPE_LOAD_VALUES and the dump had a value.  Else NOT_FOUND.
 */
HSCOPE_API hscope_status hscope_heap_object_value(const hscope_heap_t *heap,
                                                  hscope_id id,
                                                  const char **data,
                                                  uint64_t *len);

/* ------------------------------------------------------------------------ */
/* Bulk column access (FFI)                                                  */
/* ------------------------------------------------------------------------ */

/** Columns of the model.  Fixed values. */
#define HSCOPE_COL_ADDRESS     1  /* u64 per object */
#define HSCOPE_COL_TYPE        2  /* u8 per object: HSCOPE_TYPE_* */
#define HSCOPE_COL_FLAGS       3  /* u16 per object: HSCOPE_FLAG_* */
#define HSCOPE_COL_CLASS       4  /* u32: class object id; 0xFFFFFFFF no class,
                                     0xFFFFFFFE class not a class record */
#define HSCOPE_COL_MEMSIZE     5  /* u32; 0xFFFFFFFF: larger, use
                                     hscope_heap_object_memsize() */
#define HSCOPE_COL_SIZE        6  /* u32; 0xFFFFFFFF: larger, see _size() */
#define HSCOPE_COL_GENERATION  7  /* u32; 0xFFFFFFFF: not traced */
#define HSCOPE_COL_SITE        8  /* u32 site id, see hscope_heap_site() */
#define HSCOPE_COL_DETAIL      9  /* u32 string id, see hscope_heap_string() */
#define HSCOPE_COL_REF_START  10  /* u32, count + 1 entries: CSR offsets */
#define HSCOPE_COL_REFS       11  /* u32 target ids (CSR) */

/** Element types of a column. */
#define HSCOPE_ELEM_U8  1
#define HSCOPE_ELEM_U16 2
#define HSCOPE_ELEM_U32 3
#define HSCOPE_ELEM_U64 4

/**
 * Read-only view of a whole column: *data points at *length elements of
 * *elem_type, borrowed and valid until the heap is freed.  Lets FFI
 * callers process millions of objects without a call per object.
 */
HSCOPE_API hscope_status hscope_heap_column(const hscope_heap_t *heap,
                                            int32_t column, const void **data,
                                            uint64_t *length,
                                            int32_t *elem_type);

/** Interned string by id (HSCOPE_COL_DETAIL, sites); NULL for id 0. */
HSCOPE_API const char *hscope_heap_string(const hscope_heap_t *heap, uint32_t id);

/** Site `site` (HSCOPE_COL_SITE): file and method string ids and line. */
HSCOPE_API hscope_status hscope_heap_site(const hscope_heap_t *heap,
                                          uint32_t site, uint32_t *file,
                                          uint32_t *line, uint32_t *method);

/* ------------------------------------------------------------------------ */
/* Roots and dangling references                                             */
/* ------------------------------------------------------------------------ */

/** Number of distinct ROOT categories ("vm", "machine_context", ...). */
HSCOPE_API uint32_t hscope_heap_root_category_count(const hscope_heap_t *heap);
/** Name of root category i, NULL if out of range. */
HSCOPE_API const char *hscope_heap_root_category_name(const hscope_heap_t *heap, uint32_t i);
/** ROOT records (lines) of category i. */
HSCOPE_API uint64_t hscope_heap_root_category_records(const hscope_heap_t *heap, uint32_t i);
/**
 * Resolved targets of category i, in dump order with duplicates.
 * `*dangling` (may be NULL) gets the number of references of the category
 * to addresses that are not objects of the dump.
 */
HSCOPE_API hscope_status hscope_heap_root_targets(const hscope_heap_t *heap,
                                                  uint32_t i,
                                                  const hscope_id **targets,
                                                  uint64_t *count,
                                                  uint64_t *dangling);

/** Addresses referenced by root category i that are not objects of the
 * dump, in dump order.  *addresses is borrowed. */
HSCOPE_API hscope_status hscope_heap_root_dangling(const hscope_heap_t *heap,
                                                   uint32_t i,
                                                   const uint64_t **addresses,
                                                   uint64_t *count);

/**
 * Number of dangling references (to addresses not in the dump), from
 * objects and roots.  Each is kept: see hscope_heap_dangling().
 */
HSCOPE_API uint64_t hscope_heap_dangling_count(const hscope_heap_t *heap);

/**
 * The i-th dangling reference: the referring object (HSCOPE_ID_NONE for a
 * root reference) and the missing address.
 */
HSCOPE_API hscope_status hscope_heap_dangling(const hscope_heap_t *heap,
                                              uint64_t i, hscope_id *from,
                                              uint64_t *address);

/* ------------------------------------------------------------------------ */
/* Tally (group-by)                                                          */
/* ------------------------------------------------------------------------ */

/** Group live objects by a key: one of "type", "class", "file",
 * "file:line", "file:line:class", "method", "generation", "gem". */
typedef struct hscope_tally hscope_tally_t;

#define HSCOPE_SORT_COUNT   0
#define HSCOPE_SORT_MEMSIZE 1

/**
 * hscope_tally_options.flags: leave out the dumper's own objects, by the
 * rule hscope_diff_compute() uses (allocated by ObjectSpace.dump_all,
 * i.e. method dump_all or file objspace.rb, or by the heapscope gem's
 * snapshot code, lib/heapscope/snapshot.rb and lib/heapscope/auto.rb);
 * hscope_tally_excluded() counts them.  Since 0.2.
 */
#define HSCOPE_TALLY_SKIP_DUMPER 0x1u
/**
 * hscope_tally_options.flags, hscope_tally_file() only: also make the
 * dump's fingerprint in the same pass (hscope_tally_fingerprint(), for
 * hscope_series_check(); two multiplies per object).  Since 0.2.
 */
#define HSCOPE_TALLY_FINGERPRINT 0x2u
/**
 * hscope_tally_options.flags, loaded heaps only: count each IMEMO fields
 * object (Ruby 4.0+ keeps the instance variables of Strings, Arrays,
 * classes and typed Data in one) in its owner's row, under the owner's key
 * for every key, with its own memsize (hscope_heap_object_owner()).  Off
 * by default: rows then count objects as the dump and
 * ObjectSpace.count_objects do, with "<imemo:fields>" a row of its own.
 * hscope_tally_file() refuses it (HSCOPE_ERR_UNSUPPORTED: the owner can
 * come later in the stream).  Since 0.2.
 */
#define HSCOPE_TALLY_FIELDS_WITH_OWNER 0x4u
/**
 * hscope_tally_options.flags: leave out Ruby's allocation tracer, the DATA
 * object (struct ObjectTracing/allocation_info_tracer) in which
 * ObjectSpace.trace_object_allocations keeps its table: instrumentation,
 * not the application's memory, and on a traced heap often its largest
 * object; hscope_tally_excluded_tracer() counts it.  Independent of
 * HSCOPE_TALLY_SKIP_DUMPER (the CLI sets both by default).  Wherever it is
 * kept its class label is "<allocation tracer>" (docs/DESIGN.md).  Also
 * taken by hscope_domtree_tally().  Since 0.3.
 */
#define HSCOPE_TALLY_SKIP_TRACER 0x8u

typedef struct hscope_tally_options {
    uint32_t size;      /* sizeof(hscope_tally_options) */
    uint32_t sort;      /* HSCOPE_SORT_*; ties by key, ascending */
    uint64_t top;       /* keep the first N rows; 0: all */
    uint32_t flags;     /* HSCOPE_TALLY_* (since 0.2) */
    uint32_t reserved;  /* zero */
} hscope_tally_options;

#define HSCOPE_TALLY_OPTIONS_INIT { sizeof(hscope_tally_options), 0, 0, 0, 0 }
HSCOPE_API void hscope_tally_options_init(hscope_tally_options *opts);

/**
 * Whether `key` is a tally key: 1 if hscope_tally_compute() and every other
 * call that takes one (hscope_diff_tally(), the timeline, the HTML report,
 * hscope_domtree_tally()) accept it, 0 if not or NULL.  Front ends ask this
 * rather than keep a list of their own.  Since 0.2.
 */
HSCOPE_API int hscope_tally_key_valid(const char *key);

/**
 * Compute a tally of `heap` by `key`.  The tally holds a reference on the
 * heap.  HSCOPE_ERR_UNSUPPORTED for an unknown key.
 */
HSCOPE_API hscope_status hscope_tally_compute(hscope_tally_t **out,
                                              hscope_heap_t *heap,
                                              const char *key,
                                              const hscope_tally_options *opts,
                                              hscope_error *err);
/**
 * Tally a subset of the heap's objects (ids ascending, e.g. one generation
 * or objects a caller selected from the bulk columns).  Rows also list
 * their members (hscope_tally_row_objects()).  `ids` is copied from.
 */
HSCOPE_API hscope_status hscope_tally_subset(hscope_tally_t **out,
                                             hscope_heap_t *heap,
                                             const char *key,
                                             const hscope_id *ids,
                                             uint64_t count,
                                             const hscope_tally_options *opts,
                                             hscope_error *err);

/**
 * Fold a dump file straight into a tally, without building the model:
 * memory grows with the number of groups and distinct strings (plus the
 * parser's chunk buffers), not with the dump, so any number of dumps of any
 * size can be aggregated (each call is independent: run them on several
 * threads at once).  The load options' `threads` apply as for a load (0:
 * one parser thread per core for a large file); when folding several dumps
 * at once, give each call its share of the cores.  Same keys, labels and
 * results as hscope_tally_compute() on the loaded heap, whatever the number
 * of threads.
 */
HSCOPE_API hscope_status hscope_tally_file(hscope_tally_t **out,
                                           const char *path, const char *key,
                                           const hscope_load_options *load,
                                           const hscope_tally_options *opts,
                                           hscope_error *err);

HSCOPE_API void hscope_tally_free(hscope_tally_t *tally);
/** Number of rows (after `top`). */
HSCOPE_API uint64_t hscope_tally_row_count(const hscope_tally_t *tally);
/** Number of distinct groups before `top` was applied. */
HSCOPE_API uint64_t hscope_tally_group_count(const hscope_tally_t *tally);
/** Object count and memsize summed over all groups (before `top`). */
HSCOPE_API void hscope_tally_totals(const hscope_tally_t *tally,
                                    uint64_t *count, uint64_t *memsize);
/** Row i: key text, object count, memsize sum.  NULL/0 if out of range. */
HSCOPE_API const char *hscope_tally_row_key(const hscope_tally_t *tally, uint64_t i);
HSCOPE_API uint64_t hscope_tally_row_count_of(const hscope_tally_t *tally, uint64_t i);
HSCOPE_API uint64_t hscope_tally_row_memsize(const hscope_tally_t *tally, uint64_t i);
/** Objects left out as the dumper's own (HSCOPE_TALLY_SKIP_DUMPER); they
 * are in no row and not in the totals.  Since 0.2. */
HSCOPE_API uint64_t hscope_tally_excluded(const hscope_tally_t *tally);
/** Objects and memsize of Ruby's allocation tracer left out
 * (HSCOPE_TALLY_SKIP_TRACER; for hscope_domtree_tally() what it retains); in no row
 * and not in the totals.  Either pointer may be NULL.  Since 0.3. */
HSCOPE_API void hscope_tally_excluded_tracer(const hscope_tally_t *tally, uint64_t *objects,
                                             uint64_t *memsize);
/**
 * The load statistics of the dump a tally was made from (since 0.2): for
 * hscope_tally_file() those of the pass over the file (lines, objects,
 * skipped lines, truncated; no model or index figures), else the heap's
 * (hscope_heap_stats()).  So a front end can say that a streamed dump was
 * damaged.  Fields beyond stats->size are not written.
 */
HSCOPE_API hscope_status hscope_tally_stats(const hscope_tally_t *tally,
                                            hscope_load_stats *stats);
/** Lines skipped for `reason` (HSCOPE_SKIP_*) in the tally's dump, as
 * hscope_heap_skipped() (since 0.2). */
HSCOPE_API uint64_t hscope_tally_skipped(const hscope_tally_t *tally, int32_t reason);

/* ------------------------------------------------------------------------ */
/* Diff: objects born between snapshots and still alive                     */
/* ------------------------------------------------------------------------ */

/**
 * The heapleak/heapy 3-snapshot diff: objects present in B, absent from A
 * and still present in C (or, with two snapshots, present in B and absent
 * from A).  Object identity (docs/DESIGN.md): two records are the same object
 * only if address and type agree and, when the dumps traced allocations,
 * generation and allocation file:line agree too; without generations the
 * class address must agree.  An address reused by a new object is not a
 * survivor.  Objects that the dumper itself allocated (method dump_all,
 * file objspace.rb, or the heapscope gem's lib/heapscope/snapshot.rb and
 * lib/heapscope/auto.rb; before 0.2 also any method named "dump") are left
 * out and counted.  The dumps are checked as a series
 * (hscope_series_check()): the HSCOPE_DIFF_WARN_DIFFERENT_PROCESS,
 * _REPEATED and _BACKWARDS warnings say when they cannot be one process's
 * dumps in time order.
 */
typedef struct hscope_diff hscope_diff_t;

/** Diff-quality warnings (hscope_diff_warnings()).  Fixed values. */
#define HSCOPE_DIFF_WARN_NO_TRACING   0x1u /* few objects have a generation */
#define HSCOPE_DIFF_WARN_PARTIAL      0x2u /* a dump has no ROOT records (since:) */
#define HSCOPE_DIFF_WARN_COMPACTION   0x4u /* pinned flags: objects may have moved */
#define HSCOPE_DIFF_WARN_SKIPPED      0x8u /* a dump had skipped lines */
/* Series checks on consecutive dumps (since 0.2; hscope_series_check()): */
#define HSCOPE_DIFF_WARN_DIFFERENT_PROCESS 0x10u /* they share < 5% of their
                                                    objects: not one process */
#define HSCOPE_DIFF_WARN_REPEATED     0x20u /* the same file, or identical
                                               content, twice */
#define HSCOPE_DIFF_WARN_BACKWARDS    0x40u /* newest generation (GC count)
                                               or file mtime goes down */

/** Compare addresses only (classic heapleak; reused addresses count). */
#define HSCOPE_DIFF_ADDRESS_ONLY 0x1u
/** Keep objects the dumper allocated (default: left out and counted). */
#define HSCOPE_DIFF_KEEP_DUMPER  0x2u
/**
 * Keep Ruby's allocation tracer (the DATA object
 * ObjectTracing/allocation_info_tracer of trace_object_allocations) among
 * the leaked objects.  By default, since 0.3, it is left out and counted
 * (hscope_diff_excluded_tracer()), as HSCOPE_TALLY_SKIP_TRACER does: it is
 * instrumentation, new in the last dump when tracing began after the first.
 * A 0.2 caller that wants the figures of 0.2 sets this bit.
 */
#define HSCOPE_DIFF_KEEP_TRACER  0x4u

typedef struct hscope_diff_options {
    uint32_t size;      /* sizeof(hscope_diff_options) */
    uint32_t flags;     /* HSCOPE_DIFF_* */
} hscope_diff_options;

#define HSCOPE_DIFF_OPTIONS_INIT { sizeof(hscope_diff_options), 0 }
HSCOPE_API void hscope_diff_options_init(hscope_diff_options *opts);

/**
 * Diff loaded heaps.  `c` may be NULL for the 2-snapshot form (new in b
 * versus a).  The result refers to objects of c (or b) and holds a
 * reference on that heap only.
 */
HSCOPE_API hscope_status hscope_diff_compute(hscope_diff_t **out,
                                             hscope_heap_t *a, hscope_heap_t *b,
                                             hscope_heap_t *c,
                                             const hscope_diff_options *opts,
                                             hscope_error *err);

/**
 * Diff dump files with bounded memory: only the last dump (c, or b when
 * path_c is NULL) is loaded as a heap; the others are streamed against
 * it.  `load` applies to all three.  The loaded heap is available through
 * hscope_diff_heap().
 */
HSCOPE_API hscope_status hscope_diff_files(hscope_diff_t **out,
                                           const char *path_a,
                                           const char *path_b,
                                           const char *path_c,
                                           const hscope_load_options *load,
                                           const hscope_diff_options *opts,
                                           hscope_error *err);

HSCOPE_API void hscope_diff_free(hscope_diff_t *diff);

/** The heap the result's object ids refer to (borrowed). */
HSCOPE_API hscope_heap_t *hscope_diff_heap(const hscope_diff_t *diff);
/** Number of leaked (surviving new) objects and their memsize sum. */
HSCOPE_API uint64_t hscope_diff_count(const hscope_diff_t *diff);
HSCOPE_API uint64_t hscope_diff_memsize(const hscope_diff_t *diff);
/** Leaked object ids in hscope_diff_heap(), ascending; borrowed. */
HSCOPE_API const hscope_id *hscope_diff_objects(const hscope_diff_t *diff);
/** Objects left out as the dumper's own allocations. */
HSCOPE_API uint64_t hscope_diff_excluded(const hscope_diff_t *diff);
/** Objects and memsize of Ruby's allocation tracer left out of the leaked
 * objects (unless HSCOPE_DIFF_KEEP_TRACER).  Either pointer may be NULL.
 * Since 0.3. */
HSCOPE_API void hscope_diff_excluded_tracer(const hscope_diff_t *diff, uint64_t *objects,
                                            uint64_t *memsize);
/** Objects of the first dump (index 0), second (1) and third (2). */
HSCOPE_API uint64_t hscope_diff_snapshot_objects(const hscope_diff_t *diff, uint32_t i);
/** Objects whose address was in A but with another identity (reuse). */
HSCOPE_API uint64_t hscope_diff_reused_addresses(const hscope_diff_t *diff);
/** HSCOPE_DIFF_WARN_* bits, and a human explanation ("" if none). */
HSCOPE_API uint32_t hscope_diff_warnings(const hscope_diff_t *diff);
HSCOPE_API const char *hscope_diff_warning_text(const hscope_diff_t *diff);

/**
 * Group the leaked objects by a tally key (see hscope_tally_compute()).
 * Rows of such a tally also list their members:
 * hscope_tally_row_objects().
 */
HSCOPE_API hscope_status hscope_diff_tally(hscope_tally_t **out,
                                           const hscope_diff_t *diff,
                                           const char *key,
                                           const hscope_tally_options *opts,
                                           hscope_error *err);

/**
 * Objects of row i of a tally made by hscope_diff_tally() or
 * hscope_tally_subset() (ids ascending, borrowed).  HSCOPE_ERR_NOT_FOUND
 * for other tallies.
 */
HSCOPE_API hscope_status hscope_tally_row_objects(const hscope_tally_t *tally,
                                                  uint64_t i,
                                                  const hscope_id **ids,
                                                  uint64_t *count);

/* ------------------------------------------------------------------------ */
/* Series checks: can these dumps be one process's, in time order?           */
/* ------------------------------------------------------------------------ */

/**
 * A compact summary of one dump for hscope_series_check() (since 0.2):
 * its object count, a hash of its content (every object's address, type
 * and generation), its newest generation (the GC count of its latest
 * traced allocation), the identity and mtime of its file, and a sample of
 * at most 4096 objects (address and type) chosen by a hash of the address,
 * so that two dumps sample the same addresses.  About 64 KB.
 */
typedef struct hscope_fingerprint hscope_fingerprint_t;

/**
 * The fingerprint of a loaded heap (one pass over its columns).  `path`
 * (may be NULL) is the file it was read from: its identity (device, inode)
 * and mtime join the checks.  Free with hscope_fingerprint_free().
 */
HSCOPE_API hscope_status hscope_heap_fingerprint(hscope_fingerprint_t **out,
                                                 const hscope_heap_t *heap,
                                                 const char *path,
                                                 hscope_error *err);

/**
 * The fingerprint of the dump a hscope_tally_file() tally folded with
 * HSCOPE_TALLY_FINGERPRINT (made during the same pass, at no extra read),
 * with its file's identity; borrowed, valid until hscope_tally_free().
 * NULL for other tallies.
 */
HSCOPE_API const hscope_fingerprint_t *hscope_tally_fingerprint(const hscope_tally_t *tally);

/** A copy of a fingerprint, e.g. to keep a tally's after freeing the
 * tally (a timeline over many dumps).  Free with hscope_fingerprint_free(). */
HSCOPE_API hscope_status hscope_fingerprint_copy(hscope_fingerprint_t **out,
                                                 const hscope_fingerprint_t *fp,
                                                 hscope_error *err);

HSCOPE_API void hscope_fingerprint_free(hscope_fingerprint_t *fp);

/**
 * Check dumps that are meant to be one process's, in time order
 * (fps[0] the oldest), pair by pair (i-1, i), and return the warnings as
 * HSCOPE_DIFF_WARN_* bits (0: none):
 *  - HSCOPE_DIFF_WARN_REPEATED: the same file (device and inode), or the
 *    same content (object count and the hash of every object's address,
 *    type and generation);
 *  - HSCOPE_DIFF_WARN_DIFFERENT_PROCESS: otherwise, fewer than 5% of the
 *    smaller dump's (sampled) objects have an object of the same address
 *    and type in the other dump: with address space randomisation two
 *    processes share none (measured: 0.0%), while consecutive dumps of one
 *    process share 47-99.9% (heavy churn, GC.compact, a fork's child);
 *  - HSCOPE_DIFF_WARN_BACKWARDS: the newest generation goes down (both
 *    dumps traced allocations), or the later dump's file is older (mtime,
 *    both files).
 * `names` (may be NULL; entries may be NULL) name the dumps in the text,
 * which gets one line per finding ("" when none), cut to fit `text_size`
 * bytes (text may be NULL).  NULL entries in `fps` are skipped.
 */
HSCOPE_API uint32_t hscope_series_check(const hscope_fingerprint_t *const *fps,
                                        const char *const *names,
                                        uint64_t count, char *text,
                                        uint64_t text_size);

/* ------------------------------------------------------------------------ */
/* Dominator tree and retained sizes                                         */
/* ------------------------------------------------------------------------ */

/**
 * The dominator tree of the heap graph: a synthetic super-root points at
 * one node per ROOT category, each category at its targets; objects point
 * at what they reference and (unless HSCOPE_DOM_NO_CLASS_EDGES) at their
 * class, which they keep alive although the dump lists no such edge.
 * X dominates Y when every path from the super-root to Y passes through X;
 * the retained size of X is the memsize sum of everything X dominates
 * (including X): what would be freed if X went away.  Objects not
 * reachable from any root are reported, not ignored.
 *
 * Semi-NCA, iterative (no recursion), near-linear time; 12 bytes per
 * object kept (4 more once children are asked for), about 22 at the peak
 * while computing (21.1 measured on a 2.7 M-object heap).  Ranking every
 * object (hscope_domtree_top() with max at least the reachable count)
 * takes 4 bytes an object more while it runs.  On a heap of 2^16 objects
 * or more, with two cores, the predecessor lists are filled on a second
 * thread beside the calling one (started and joined within the call).
 * HSCOPE_ERR_LIMIT for a graph of 2^31 vertices (objects, root categories
 * and the super-root) or more, or of 2^32 - 1 edges or more outside the
 * DFS tree.  Holds a heap reference.
 */
typedef struct hscope_domtree hscope_domtree_t;

/** Leave out the object -> class edges. */
#define HSCOPE_DOM_NO_CLASS_EDGES 0x1u

typedef struct hscope_dom_options {
    uint32_t size;     /* sizeof(hscope_dom_options) */
    uint32_t flags;    /* HSCOPE_DOM_* */
} hscope_dom_options;

#define HSCOPE_DOM_OPTIONS_INIT { sizeof(hscope_dom_options), 0 }
/* The clear name (see the glossary at the top): the same type, initialised
 * with HSCOPE_DOM_OPTIONS_INIT or hscope_dom_options_init(). */
typedef hscope_dom_options hscope_domtree_options;
HSCOPE_API void hscope_dom_options_init(hscope_dom_options *opts);

HSCOPE_API hscope_status hscope_domtree_compute(hscope_domtree_t **out,
                                                hscope_heap_t *heap,
                                                const hscope_dom_options *opts,
                                                hscope_error *err);
HSCOPE_API void hscope_domtree_free(hscope_domtree_t *tree);
/** The heap the tree belongs to (borrowed). */
HSCOPE_API hscope_heap_t *hscope_domtree_heap(const hscope_domtree_t *tree);

/**
 * Immediate dominator of object `id`: *idom is an object id, or
 * HSCOPE_ID_NONE when it is a root category (*root_category >= 0) or the
 * super-root (*root_category == -1).  HSCOPE_ERR_NOT_FOUND when `id` is
 * unreachable from the roots.
 */
HSCOPE_API hscope_status hscope_domtree_idom(const hscope_domtree_t *tree,
                                             hscope_id id, hscope_id *idom,
                                             int32_t *root_category);
/** Retained size (bytes) and retained object count; 0 if unreachable. */
HSCOPE_API uint64_t hscope_domtree_retained(const hscope_domtree_t *tree, hscope_id id);
HSCOPE_API uint64_t hscope_domtree_retained_count(const hscope_domtree_t *tree, hscope_id id);
/** 1 if the object is reachable from a root, else 0. */
HSCOPE_API int32_t hscope_domtree_reachable(const hscope_domtree_t *tree, hscope_id id);
/** Reachable / unreachable object counts and memsize sums. */
HSCOPE_API void hscope_domtree_totals(const hscope_domtree_t *tree,
                                      uint64_t *reachable,
                                      uint64_t *reachable_memsize,
                                      uint64_t *unreachable,
                                      uint64_t *unreachable_memsize);
/**
 * Objects immediately dominated by object `id`; with id == HSCOPE_ID_NONE,
 * those dominated by root category `root_category` (>= 0) or by the
 * super-root (-1).  Built on first use (thread-safe); borrowed.
 */
HSCOPE_API hscope_status hscope_domtree_children(hscope_domtree_t *tree,
                                                 hscope_id id,
                                                 int32_t root_category,
                                                 const hscope_id **children,
                                                 uint64_t *count,
                                                 hscope_error *err);
/** Objects unreachable from any root (ascending ids; borrowed). */
HSCOPE_API hscope_status hscope_domtree_unreachable(hscope_domtree_t *tree,
                                                    const hscope_id **ids,
                                                    uint64_t *count,
                                                    hscope_error *err);
/**
 * Dominator chain from the top (the object just below a root category or
 * the super-root) down to `id` inclusive.  Returns its length (0 if
 * unreachable); writes up to `max` ids into `out` (may be NULL).
 * *root_category (may be NULL) gets the category above the chain, or -1.
 */
HSCOPE_API uint64_t hscope_domtree_chain(const hscope_domtree_t *tree,
                                         hscope_id id, hscope_id *out,
                                         uint64_t max, int32_t *root_category);
/** The `max` objects with the largest retained size, largest first (ties
 * by address); returns how many were written. */
HSCOPE_API uint64_t hscope_domtree_top(const hscope_domtree_t *tree,
                                       hscope_id *out, uint64_t max);

/* ------------------------------------------------------------------------ */
/* Paths from the roots, and holders of a set of objects                     */
/* ------------------------------------------------------------------------ */

/** Shortest paths from the GC roots (a BFS tree over the dominator graph;
 * options as for the dominator tree), from the precise roots first: a path
 * starts at a conservative root (hscope_heap_root_category_conservative(),
 * machine_context) only when no other root reaches the object (since 0.2;
 * before, whichever was shorter).  Holds a heap reference. */
typedef struct hscope_paths hscope_paths_t;

HSCOPE_API hscope_status hscope_paths_compute(hscope_paths_t **out,
                                              hscope_heap_t *heap,
                                              const hscope_dom_options *opts,
                                              hscope_error *err);
HSCOPE_API void hscope_paths_free(hscope_paths_t *paths);
/**
 * A shortest path from a root to `target`: the objects from the first one
 * after the root category to `target` inclusive.  Returns its length (0
 * if unreachable) and writes up to `max` ids to `out` (may be NULL);
 * *root_category gets the category the path starts from.
 */
HSCOPE_API uint64_t hscope_paths_get(const hscope_paths_t *paths,
                                     hscope_id target, hscope_id *out,
                                     uint64_t max, int32_t *root_category);

/**
 * Holders of a set of objects (a diff's leaked set, or addresses a user
 * pastes): for each member, the first object up its dominator chain that
 * is not itself a member, i.e. the object through which that part of the
 * set is kept alive.  Members are grouped by holder; holders are sorted by
 * the memsize they hold, largest first.  A holder may be a root category
 * or the super-root (holder id HSCOPE_ID_NONE).
 */
typedef struct hscope_holders hscope_holders_t;

HSCOPE_API hscope_status hscope_holders_compute(hscope_holders_t **out,
                                                hscope_domtree_t *tree,
                                                const hscope_id *ids,
                                                uint64_t count,
                                                hscope_error *err);
HSCOPE_API void hscope_holders_free(hscope_holders_t *holders);
HSCOPE_API uint64_t hscope_holders_count(const hscope_holders_t *holders);
/** Holder i: object id (or HSCOPE_ID_NONE with *root_category >= 0 for a
 * root category, -1 for the super-root), members held and their memsize. */
HSCOPE_API hscope_status hscope_holders_get(const hscope_holders_t *holders,
                                            uint64_t i, hscope_id *holder,
                                            int32_t *root_category,
                                            uint64_t *count, uint64_t *memsize);

/* ------------------------------------------------------------------------ */
/* Waste: duplicate strings, empty collections, oversized buffers            */
/* ------------------------------------------------------------------------ */

/**
 * What a heap could shrink by (since 0.2), grouped by the place to change:
 * the allocation site (file:line) or the gem of the objects.
 *
 *  - Duplicate strings: STRING objects with the same value (the dump's
 *    `value`, compared byte for byte).  Keeping one copy of each value
 *    would free the others: the saving is the memsize of all copies but
 *    one, the largest (so at least that much).  Strings sharing another's
 *    buffer (`shared`), strings the dump gives no value for (non-ASCII,
 *    binary; empty strings from Ruby 3.2 on) and values whose length is
 *    not their `bytesize` (a cut or rewritten dump) are not compared:
 *    they are counted apart.
 *  - Empty collections: ARRAY of length 0, HASH of size 0, STRING of
 *    bytesize 0 (not shared).  The saving is their whole memsize (lazy
 *    allocation, or one shared frozen instance).
 *  - Oversized buffers: a STRING whose `capacity` is at least `ratio`
 *    times its bytesize; an ARRAY (not embedded, not shared) whose buffer
 *    (memsize beyond its slot: `slot_size`, else 40 bytes) holds at least
 *    `ratio` times its length in 8-byte references; a HASH whose table
 *    (likewise) takes at least `ratio` times 64 bytes per entry.  The
 *    saving is the buffer beyond the content (beyond 64 bytes per entry
 *    for a HASH), and must be at least `min_slack` bytes per object.
 *
 * Every object counts in one finding at most: empty first, then
 * oversized, then duplicate.  The objects the dumper allocated (the rule
 * of HSCOPE_TALLY_SKIP_DUMPER) are left out and counted unless
 * HSCOPE_WASTE_KEEP_DUMPER.  The result owns copies of everything it
 * reports (keys, values): it holds no reference to a heap.
 */
typedef struct hscope_waste hscope_waste_t;

/** Finding kinds (hscope_waste_row.kind).  Fixed values. */
#define HSCOPE_WASTE_DUPLICATE 1
#define HSCOPE_WASTE_EMPTY     2
#define HSCOPE_WASTE_OVERSIZED 3

/**
 * Kinds of fix (hscope_waste_row.fix_kind, since 0.3), decided from the
 * row's site (the rule of the tally's "gem" key) and what the dump says
 * of its objects.  Fixed values.  For code the application does not own,
 * the fix says whose code it is instead of a change to make.
 */
#define HSCOPE_WASTE_FIX_UNTRACED 1 /* no allocation info: no code to name;
                                       start trace_object_allocations earlier */
#define HSCOPE_WASTE_FIX_RUBY     2 /* Ruby's own code (<internal:...>) */
#define HSCOPE_WASTE_FIX_STDLIB   3 /* Ruby's standard library */
#define HSCOPE_WASTE_FIX_GEM      4 /* a gem's code: report it upstream, or
                                       cache the result in the application */
#define HSCOPE_WASTE_FIX_LITERAL  5 /* duplicate string literals (every copy
                                       chilled, Ruby 3.4+):
                                       # frozen_string_literal: true */
#define HSCOPE_WASTE_FIX_INTERN   6 /* duplicates that are no literals (frozen,
                                       or not chilled in a dump that marks
                                       literals): -str (String#-@) or a cache */
#define HSCOPE_WASTE_FIX_INTERN_OR_LITERAL 7 /* duplicates the dump cannot tell
                                       literal from built (before Ruby 3.4, or
                                       some copies chilled): -str or a cache;
                                       the magic comment only for literals */
#define HSCOPE_WASTE_FIX_LAZY     8 /* empty: allocate lazily or share one */
#define HSCOPE_WASTE_FIX_RESIZE   9 /* oversized: size the buffer to the data */

/** Grouping (hscope_waste_options.by).  Fixed values. */
#define HSCOPE_WASTE_BY_SITE 0  /* "file:line" ("(none):0" untraced) */
#define HSCOPE_WASTE_BY_GEM  1  /* the tally's "gem" key */

/** hscope_waste_options.flags: keep the dumper's own objects. */
#define HSCOPE_WASTE_KEEP_DUMPER 0x1u
/** hscope_waste_options.flags: keep Ruby's allocation tracer (the DATA
 * object ObjectTracing/allocation_info_tracer of trace_object_allocations)
 * among the objects considered.  By default, since 0.3, it is left out of
 * them (and so of the heap's memsize the savings are shares of) and counted
 * (hscope_waste_excluded_tracer()), as HSCOPE_TALLY_SKIP_TRACER does.
 * A 0.2 caller that wants the figures of 0.2 sets this bit. */
#define HSCOPE_WASTE_KEEP_TRACER 0x2u

/** Warnings (hscope_waste_totals.warnings).  Fixed values. */
#define HSCOPE_WASTE_WARN_SKIPPED    0x1u  /* the dump had skipped lines or
                                              was cut short */
#define HSCOPE_WASTE_WARN_NO_TRACING 0x2u  /* no finding has an allocation
                                              site (no allocation tracing) */
#define HSCOPE_WASTE_WARN_NO_VALUES  0x4u  /* strings but no values (a heap
                                              loaded without HSCOPE_LOAD_VALUES,
                                              a dump redacted by heapscope
                                              before 0.3): duplicates
                                              could not be searched */
#define HSCOPE_WASTE_WARN_COLLISIONS 0x8u  /* values of equal hash and length
                                              but different bytes: not grouped */
#define HSCOPE_WASTE_WARN_CHANGED    0x10u /* the dump file changed between the
                                              two reads of hscope_waste_file() */

typedef struct hscope_waste_options {
    uint32_t size;          /* sizeof(hscope_waste_options) */
    uint32_t flags;         /* HSCOPE_WASTE_KEEP_DUMPER, _KEEP_TRACER */
    uint32_t by;            /* HSCOPE_WASTE_BY_*; 0: file:line */
    uint32_t ratio;         /* oversized from ratio x the content; 0: 4 */
    uint64_t min_slack;     /* bytes an oversized buffer wastes at least;
                               0: 256 */
} hscope_waste_options;

#define HSCOPE_WASTE_OPTIONS_INIT { sizeof(hscope_waste_options), 0, 0, 0, 0 }
/** Function twin of HSCOPE_WASTE_OPTIONS_INIT. */
HSCOPE_API void hscope_waste_options_init(hscope_waste_options *opts);

/**
 * Waste of a dump file, streamed: the analysis reads the dump once
 * (parsing on the load options' threads, without building the model),
 * hashing every string value (XXH3), and keeps per distinct value its
 * hash, length, count and where its first copy is, plus one copy of the
 * bytes of each value seen twice, against which later copies are
 * compared.  A first copy is compared when its value's second copy
 * comes, from a 16 MiB ring of recent first copies; the few no longer
 * there are read back from their lines after the pass (a positioned read
 * of a plain file, a second inflation of a gzip one).  Memory: about 90
 * bytes per distinct string value, the bytes of the repeated ones and the
 * ring, never every value.  `path` must be a regular file (it may be read
 * twice): a pipe gives HSCOPE_ERR_UNSUPPORTED.  Load options apply as for
 * a load (the allocator, max_memory, strict, max_line_bytes, threads,
 * progress); HSCOPE_LOAD_VALUES is implied.  The result is the same
 * whatever the number of threads.
 */
HSCOPE_API hscope_status hscope_waste_file(hscope_waste_t **out,
                                           const char *path,
                                           const hscope_load_options *load,
                                           const hscope_waste_options *opts,
                                           hscope_error *err);

/**
 * Waste of a loaded heap.  Duplicates need the values: load with
 * HSCOPE_LOAD_VALUES (otherwise HSCOPE_WASTE_WARN_NO_VALUES and no
 * duplicates).  The model keeps no `capacity` nor `slot_size`: a string's
 * capacity is taken as its memsize less a 40-byte slot and a 1-byte
 * terminator, and buffers of arrays and hashes as memsize less 40 bytes,
 * which is what Ruby up to 3.1 writes for ASCII and UTF-8 strings; for
 * other dumps hscope_waste_file() is exact.  The heap is only read (any
 * number of analyses may run on it at once); the working memory counts
 * against its max_memory, and the result uses its allocator.
 */
HSCOPE_API hscope_status hscope_waste_compute(hscope_waste_t **out,
                                              const hscope_heap_t *heap,
                                              const hscope_waste_options *opts,
                                              hscope_error *err);

HSCOPE_API void hscope_waste_free(hscope_waste_t *waste);

/** Totals of a waste analysis.  Caller-owned; set `size` first (fields
 * beyond it are not written). */
typedef struct hscope_waste_totals {
    uint32_t size;              /* sizeof(hscope_waste_totals) */
    uint32_t warnings;          /* HSCOPE_WASTE_WARN_* */
    uint64_t objects;           /* objects considered (dumper's left out) */
    uint64_t memsize;           /* their memsize: the heap */
    uint64_t count;             /* objects of every finding */
    uint64_t saving;            /* bytes recoverable, all findings */
    uint64_t duplicate_count;   /* copies that would go */
    uint64_t duplicate_saving;
    uint64_t duplicate_values;  /* distinct values with 2+ copies */
    uint64_t duplicate_copies;  /* all their copies */
    uint64_t empty_count;       /* empty objects */
    uint64_t empty_saving;
    uint64_t oversized_count;   /* oversized objects */
    uint64_t oversized_saving;
    uint64_t shared_count;      /* not compared: share another's buffer */
    uint64_t shared_memsize;
    uint64_t no_value_count;    /* not compared: the dump has no value */
    uint64_t no_value_memsize;
    uint64_t truncated_count;   /* not compared: value length is not bytesize */
    uint64_t truncated_memsize;
    uint64_t collision_count;   /* copies not grouped (WARN_COLLISIONS) */
    uint64_t excluded;          /* the dumper's objects left out */
    uint64_t untraced;          /* objects of findings without a site */
    uint64_t group_count;       /* rows (places to change) */
    uint64_t dump_objects;      /* objects of the dump, all of them */
} hscope_waste_totals;

#define HSCOPE_WASTE_TOTALS_INIT { sizeof(hscope_waste_totals), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
/** Function twin of HSCOPE_WASTE_TOTALS_INIT. */
HSCOPE_API void hscope_waste_totals_init(hscope_waste_totals *totals);

HSCOPE_API hscope_status hscope_waste_totals_get(const hscope_waste_t *waste,
                                                 hscope_waste_totals *totals);
/** Objects and memsize of Ruby's allocation tracer left out of the
 * objects considered (hscope_waste_totals.objects and .memsize) unless
 * HSCOPE_WASTE_KEEP_TRACER.  Either pointer may be NULL.  A function of
 * its own rather than new hscope_waste_totals members:
 * hscope_waste_totals_init() writes the library's whole struct, which a
 * longer struct would make overrun a caller's 0.2 one.  Since 0.3. */
HSCOPE_API void hscope_waste_excluded_tracer(const hscope_waste_t *waste, uint64_t *objects,
                                             uint64_t *memsize);

/**
 * One place to change: a finding kind at a site (or gem), with what
 * fixing it saves.  Strings are borrowed, valid until hscope_waste_free().
 */
typedef struct hscope_waste_row {
    uint32_t size;          /* sizeof(hscope_waste_row), set by the caller */
    int32_t kind;           /* HSCOPE_WASTE_DUPLICATE, _EMPTY, _OVERSIZED */
    int32_t type;           /* HSCOPE_TYPE_STRING, _ARRAY or _HASH */
    uint32_t reserved;
    const char *key;        /* "file:line" or the gem */
    const char *fix;        /* the fix, one English sentence (fix_kind) */
    uint64_t count;         /* objects: copies that would go, empty or
                               oversized objects */
    uint64_t saving;        /* bytes recoverable */
    uint64_t memsize;       /* memsize of the objects (all copies) */
    uint64_t copies;        /* duplicate: copies made here (one may stay) */
    uint64_t frozen;        /* duplicate: copies that are frozen */
    uint64_t fstring;       /* duplicate: copies that are fstrings */
    uint64_t values;        /* duplicate: distinct values; see
                               hscope_waste_row_value() */
    uint64_t buffer;        /* oversized: buffer bytes */
    uint64_t used;          /* oversized: bytes of content */
    int32_t fix_kind;       /* HSCOPE_WASTE_FIX_* (since 0.3) */
    uint32_t reserved2;
    uint64_t chilled;       /* duplicate: copies that are chilled string
                               literals (Ruby 3.4+; since 0.3) */
} hscope_waste_row;

/** Rows, biggest saving first (ties by key, then kind and type). */
HSCOPE_API uint64_t hscope_waste_row_count(const hscope_waste_t *waste);
/** Row i into *row (fields beyond row->size are not written);
 * HSCOPE_ERR_NOT_FOUND when i is out of range. */
HSCOPE_API hscope_status hscope_waste_row_get(const hscope_waste_t *waste,
                                              uint64_t i,
                                              hscope_waste_row *row);
/**
 * Value j of duplicate row i (its values by saving here, largest first;
 * j < row.values): *value is an index for hscope_waste_value_get(), and
 * *copies and *saving what the row's site holds of it.
 */
HSCOPE_API hscope_status hscope_waste_row_value(const hscope_waste_t *waste,
                                                uint64_t i, uint64_t j,
                                                uint64_t *value,
                                                uint64_t *copies,
                                                uint64_t *saving);

/** A duplicated value.  `data` is the value's bytes (not NUL-terminated,
 * may hold NUL); front ends print it only when asked (HSCOPE_REPORT_VALUES). */
typedef struct hscope_waste_value {
    uint32_t size;          /* sizeof(hscope_waste_value) */
    uint32_t reserved;
    uint64_t hash;          /* XXH3-64 of the bytes */
    uint64_t length;        /* bytes */
    const char *data;       /* borrowed; NULL in a redacted dump,
                               which holds placeholders, not bytes */
    uint64_t copies;        /* objects holding it */
    uint64_t memsize;       /* their memsize */
    uint64_t saving;        /* memsize of all copies but the largest */
    uint64_t frozen;        /* copies that are frozen */
    uint64_t fstring;       /* copies that are fstrings */
    uint64_t sites;         /* distinct sites (or gems) of the copies */
} hscope_waste_value;

/** Duplicated values, biggest saving first (ties by copies, then hash). */
HSCOPE_API uint64_t hscope_waste_value_count(const hscope_waste_t *waste);
HSCOPE_API hscope_status hscope_waste_value_get(const hscope_waste_t *waste,
                                                uint64_t i,
                                                hscope_waste_value *value);
/** Site j of value i (most copies first, j < value.sites): key, copies
 * made there and the saving attributed to it (the largest copy is kept
 * at the site holding it). */
HSCOPE_API hscope_status hscope_waste_value_site(const hscope_waste_t *waste,
                                                 uint64_t i, uint64_t j,
                                                 const char **key,
                                                 uint64_t *copies,
                                                 uint64_t *saving);

/** The load statistics of the dump (as hscope_tally_stats()). */
HSCOPE_API hscope_status hscope_waste_stats(const hscope_waste_t *waste,
                                            hscope_load_stats *stats);
/** Lines skipped for `reason` (HSCOPE_SKIP_*) in the dump. */
HSCOPE_API uint64_t hscope_waste_skipped(const hscope_waste_t *waste,
                                         int32_t reason);

/* ------------------------------------------------------------------------ */
/* Reports: every result written as text, JSON, CSV, DOT, SVG or HTML        */
/* ------------------------------------------------------------------------ */

/**
 * Output sink of every writer: called with consecutive pieces of the
 * output (not NUL-terminated; `len` may be large).  Return 0 to go on; any
 * other value stops the writer, which then returns HSCOPE_ERR_IO.  Called
 * on the writer's thread only.
 */
typedef int32_t (*hscope_write_fn)(void *user_data, const char *data, uint64_t len);

/** Output formats.  Fixed values; 0 in hscope_report_options means text. */
#define HSCOPE_FORMAT_TEXT   1  /* tables for people (UTF-8) */
#define HSCOPE_FORMAT_JSON   2  /* one document, schema in docs/JSON.md */
#define HSCOPE_FORMAT_CSV    3  /* RFC 4180, header line, LF line ends */
#define HSCOPE_FORMAT_DOT    4  /* Graphviz */
#define HSCOPE_FORMAT_SVG    5  /* a self-contained SVG document */
#define HSCOPE_FORMAT_FOLDED 6  /* flame-graph folded stacks */
#define HSCOPE_FORMAT_HTML   7  /* a self-contained HTML page */
#define HSCOPE_FORMAT_JSONL  8  /* one JSON document per line */
/** A V8 heap snapshot (.heapsnapshot: Chrome DevTools, memlab); since 0.2,
 * see hscope_heap_write_export() and docs/HEAPSNAPSHOT.md. */
#define HSCOPE_FORMAT_HEAPSNAPSHOT 9
/** A pprof profile (profile.proto, gzipped: `go tool pprof`, Pyroscope,
 * Parca, Cloud Profiler, Datadog); since 0.3, see hscope_heap_write_export()
 * and docs/FLEET.md.  A library older than 0.3 answers this value with
 * HSCOPE_ERR_UNSUPPORTED, as any format it has no writer for. */
#define HSCOPE_FORMAT_PPROF 10

/** Report flags (hscope_report_options.flags).  Fixed values. */
#define HSCOPE_REPORT_ADDRESSES 0x1u /* list every member's address */
#define HSCOPE_REPORT_PRETTY    0x2u /* JSON indented by two spaces */
#define HSCOPE_REPORT_VALUES    0x4u /* string values (never without it) */
#define HSCOPE_REPORT_ASCII     0x8u /* text: ASCII only ("..." not U+2026) */
/* text: leave out the "warning: ..." lines, for a caller that shows the
 * warnings elsewhere (the CLI: on stderr); JSON always has them. */
#define HSCOPE_REPORT_NO_WARNINGS 0x10u
#define HSCOPE_REPORT_BARS     0x20u /* text: a bar of '#' per tally row, scaled
                                        to the largest (the histogram) */
/* hscope_domtree_write_retained(): leave Ruby's allocation tracer out of
 * the objects and say what it retains (HSCOPE_TALLY_SKIP_TRACER).  Since
 * 0.3. */
#define HSCOPE_REPORT_SKIP_TRACER 0x40u
/* hscope_heap_write_generations(): keep the objects the dumper allocated
 * (default: left out and counted in excluded_dumper_objects, the rule of
 * HSCOPE_TALLY_SKIP_DUMPER).  Since 0.3. */
#define HSCOPE_REPORT_KEEP_DUMPER 0x80u
/* hscope_heap_write_objects(), JSON: the references and referrers lists
 * hold their first `top` objects only (as text shows them), and
 * "references_count" and "referrers_count" say how many there are: an
 * answer of bounded size for an object referenced by millions (a class, a
 * big Hash).  Since 0.3. */
#define HSCOPE_REPORT_LISTS_TOP 0x100u

/** `top` value meaning every row. */
#define HSCOPE_TOP_ALL UINT64_MAX

/**
 * How to write a result.  Zero in every field means the default.
 */
typedef struct hscope_report_options {
    uint32_t size;        /* sizeof(hscope_report_options) */
    int32_t format;       /* HSCOPE_FORMAT_*; 0: text */
    uint32_t flags;       /* HSCOPE_REPORT_* */
    uint32_t width;       /* text: columns per line; 0: 100 (at least 40) */
    uint64_t top;         /* rows where the writer chooses them (children,
                             retainers, holders, references, timeline
                             groups); 0: 20; HSCOPE_TOP_ALL: all.  Rows of a
                             tally are those the tally kept. */
    uint32_t depth;       /* dominator tree levels; 0: 3 */
    uint32_t max_paths;   /* root paths per object; 0: 1 */
    const char *const *dump_names; /* names of the dumps, in the result's
                                      order (paths as given), or NULL */
    uint64_t dump_name_count;
} hscope_report_options;

#define HSCOPE_REPORT_OPTIONS_INIT { sizeof(hscope_report_options), 0, 0, 0, 0, 0, 0, NULL, 0 }
/* The clear name (see the glossary at the top): the same type, initialised
 * with HSCOPE_REPORT_OPTIONS_INIT or hscope_report_options_init(). */
typedef hscope_report_options hscope_write_options;
HSCOPE_API void hscope_report_options_init(hscope_report_options *opts);

/** A byte count as the text writers print it (since 0.2): binary units,
 * one decimal ("512 B", "1.5 KB", "3.2 MB"), "-" before a negative value
 * (a change).  Written into buf (n bytes, cut and NUL-terminated as
 * snprintf; 32 bytes hold any value). */
HSCOPE_API void hscope_format_bytes(int64_t bytes, char *buf, uint64_t n);

/** A count with thousands separators as the text writers print it (since
 * 0.2): "1,234,567".  Written as hscope_format_bytes() writes. */
HSCOPE_API void hscope_format_count(uint64_t count, char *buf, uint64_t n);

/**
 * The warnings of a damaged load in the writers' words (since 0.2; the
 * messages of their "skipped_lines" and "truncated" warnings): "N of M
 * lines skipped (REASON COUNT, ...)" and "the dump is truncated (...)",
 * one line each ending in a newline, each after "NAME: " when name is not
 * NULL; "" for an undamaged load.  stats: the load's statistics
 * (hscope_heap_stats() and the like); skipped: nskipped counts by reason
 * (HSCOPE_SKIP_*, as hscope_heap_skipped() gives them; missing ones are
 * 0).  Written into buf (n bytes, cut and NUL-terminated as snprintf);
 * returns the length of the whole text, 0 for a NULL or unsized stats.
 */
HSCOPE_API uint64_t hscope_load_warnings_text(const char *name, const hscope_load_stats *stats,
                                              const uint64_t *skipped, uint32_t nskipped,
                                              char *buf, uint64_t n);

/** The key a tally groups by ("file:line:class", ...), or NULL when the
 * tally was not made by key. Borrowed; valid until the tally is freed. */
HSCOPE_API const char *hscope_tally_by(const hscope_tally_t *tally);

/**
 * Write a tally: text (a table; with HSCOPE_REPORT_BARS a bar per row, by
 * the tally's sort), JSON (kind "tally"; kind "retained" for a tally of
 * hscope_domtree_tally()), CSV (key, count, memsize), SVG (bars of memsize
 * and count per row: the histogram).  Rows are those the tally kept (its
 * `top`); rows of a subset or diff tally list their members' addresses
 * with HSCOPE_REPORT_ADDRESSES.  Warnings: lines the tally's dump had
 * skipped, a dump cut short; the dumper's objects left out are counted
 * (text: a "left out:" line).
 */
HSCOPE_API hscope_status hscope_tally_write(const hscope_tally_t *tally,
                                            const hscope_report_options *opts,
                                            hscope_write_fn write,
                                            void *user_data,
                                            hscope_error *err);

/* ---- Writers of one dump's results and of a diff ---- */
/*
 * Every writer below checks its arguments and options (a `format` it has
 * no writer for: HSCOPE_ERR_UNSUPPORTED), writes the whole result through
 * `write` and returns HSCOPE_OK, or the first error (a write function that
 * returned non-zero: HSCOPE_ERR_IO).  Output that was written stays
 * written.  JSON documents follow docs/JSON.md (schemas: docs/schema/).
 * Text: tables fit `width`, long keys cut in the middle; warnings as
 * "warning: ..." lines first (unless HSCOPE_REPORT_NO_WARNINGS).  A writer
 * may be called from any thread; it only reads the result.  Since 0.2.
 */

/**
 * What a heap holds (kind "summary"): objects and memsize, references,
 * ROOT categories, dangling references, skipped lines and why, counts and
 * memsize per type and the `top` classes, load figures.  Text or JSON.
 */
HSCOPE_API hscope_status hscope_heap_write_summary(hscope_heap_t *heap,
                                                   const hscope_report_options *opts,
                                                   hscope_write_fn write,
                                                   void *user_data,
                                                   hscope_error *err);

/**
 * Everything about some objects (kind "objects"): type, class and label,
 * memsize, allocation site, flags, what each references and what
 * references it (text: the first `top` of each; JSON: all).  `addresses`
 * are looked up in the heap; one that is not an object of the heap is
 * written as not found (text: nothing; JSON: "found": false) and the call
 * still succeeds.  `records` (may be NULL; entries may be NULL) are the
 * dump's record lines of the objects, NUL-terminated, e.g. caught with a
 * load option line_fn: the heap does not keep them.  String values (the
 * heap's, and "value" in the records) are written only with
 * HSCOPE_REPORT_VALUES.  Text or JSON.
 */
HSCOPE_API hscope_status hscope_heap_write_objects(hscope_heap_t *heap,
                                                   const uint64_t *addresses,
                                                   uint64_t count,
                                                   const char *const *records,
                                                   const hscope_report_options *opts,
                                                   hscope_write_fn write,
                                                   void *user_data,
                                                   hscope_error *err);

/**
 * The whole heap in an interchange format (opts->format; anything else is
 * HSCOPE_ERR_UNSUPPORTED): HSCOPE_FORMAT_PPROF (since 0.3), a gzipped pprof
 * profile as hscope_heap_write_pprof() writes it without a time, or
 * HSCOPE_FORMAT_HEAPSNAPSHOT, a V8 heap snapshot
 * that Chrome DevTools' Memory panel and memlab open.  Every object is a
 * node (name: its label, self size: memsize, id: odd, from the address),
 * every reference an edge, each ROOT category a synthetic node under the
 * snapshot's root, the object -> class edges "internal" edges named
 * "class", allocation sites as the snapshot's allocation traces; the
 * mapping is in docs/HEAPSNAPSHOT.md.  Streamed from the loaded heap:
 * nothing is allocated per object (two counters per allocation site and
 * the snapshot's few names of its own).  String values
 * are never written.  HSCOPE_ERR_UNSUPPORTED as well for a heap of more
 * objects than the format's 32-bit node offsets hold (613 million).
 * Since 0.2.
 */
HSCOPE_API hscope_status hscope_heap_write_export(const hscope_heap_t *heap,
                                                  const hscope_report_options *opts,
                                                  hscope_write_fn write,
                                                  void *user_data,
                                                  hscope_error *err);

/**
 * The heap as a pprof profile (profile.proto, gzipped) taken at `time_ns`
 * (nanoseconds since the epoch, UTC; 0 or less: not known, no time_nanos),
 * so that a profiler lines up a series (since 0.3).  The same as
 * hscope_heap_write_export() with HSCOPE_FORMAT_PPROF, which writes no
 * time; opts->format must be 0 or HSCOPE_FORMAT_PPROF.  Sample types
 * inuse_objects/count and inuse_space/bytes (the default), one sample per
 * allocation site, class label and type, one location per file:line and
 * method (a line that allocates in two methods is two locations, the same
 * in every dump), its function named by the method where the dump has one
 * (else "file:line"),
 * objects without allocation info under one "(no allocation info)"
 * location; string labels class, type, gem, generation (the most common
 * GC generation of the sample's objects, ties the oldest) and generations
 * (how many distinct ones).  Totals are those of a tally that leaves the
 * dumper's objects out (HSCOPE_TALLY_SKIP_DUMPER); the profile's comments
 * say how many were left out.  The name of the dump (opts->dump_names[0])
 * goes into a comment.  Memory: one entry per distinct (site, class, type,
 * generation), nothing per object.  docs/FLEET.md.
 */
HSCOPE_API hscope_status hscope_heap_write_pprof(const hscope_heap_t *heap, int64_t time_ns,
                                                 const hscope_report_options *opts,
                                                 hscope_write_fn write,
                                                 void *user_data,
                                                 hscope_error *err);

/**
 * heapy's generation view (kind "generations"): live objects per
 * allocation generation, each with its `top` file:line:class groups, and
 * the objects without allocation info.  The objects the dumper allocated
 * are left out and counted (since 0.3; HSCOPE_REPORT_KEEP_DUMPER keeps
 * them).  Text or JSON.
 */
HSCOPE_API hscope_status hscope_heap_write_generations(hscope_heap_t *heap,
                                                       const hscope_report_options *opts,
                                                       hscope_write_fn write,
                                                       void *user_data,
                                                       hscope_error *err);

/**
 * A diff (kind "diff"): the dumps, the leaked objects' count and memsize,
 * the objects left out, reused addresses, warnings, and the groups of
 * `groups`, a tally made by hscope_diff_tally() on this diff (rows as it
 * kept them; their addresses with HSCOPE_REPORT_ADDRESSES, text: three per
 * group without).  `groups` NULL: grouped by file:line:class, the first
 * `top` groups.  Text, JSON or CSV (the groups).
 */
HSCOPE_API hscope_status hscope_diff_write(const hscope_diff_t *diff,
                                           const hscope_tally_t *groups,
                                           const hscope_report_options *opts,
                                           hscope_write_fn write,
                                           void *user_data,
                                           hscope_error *err);

/**
 * The dominator tree (kind "dominators").  With `focus` HSCOPE_ID_NONE:
 * below each ROOT category and the super-root "(roots)", the `top`
 * children by retained size, `depth` levels deep.  With an object id: its
 * dominator chain from the root down and its subtree, `depth` levels.
 * HSCOPE_REPORT_ADDRESSES (JSON): also every reachable object's immediate
 * dominator and retained size.  Text, JSON, or FOLDED: one line per
 * object, "frame;frame;... self-memsize" from the root category down
 * (every reachable object whose memsize is not 0; flamegraph.pl,
 * speedscope).
 */
HSCOPE_API hscope_status hscope_domtree_write(hscope_domtree_t *tree,
                                              hscope_id focus,
                                              const hscope_report_options *opts,
                                              hscope_write_fn write,
                                              void *user_data,
                                              hscope_error *err);

/**
 * The `top` objects with the largest retained size, largest first (kind
 * "retained"), with reachable and unreachable totals.  Text or JSON.
 */
HSCOPE_API hscope_status hscope_domtree_write_retained(const hscope_domtree_t *tree,
                                                       const hscope_report_options *opts,
                                                       hscope_write_fn write,
                                                       void *user_data,
                                                       hscope_error *err);

/**
 * "du for the heap": what each group of a tally key (see
 * hscope_tally_compute()) keeps alive.  Each reachable object is counted
 * once, under its topmost dominator of the same group, so a row's count
 * and memsize are the objects and bytes its group retains (nested objects
 * of one group are not counted twice).  Rows sorted by `opts->sort`
 * (HSCOPE_SORT_MEMSIZE: retained bytes; HSCOPE_SORT_COUNT: retained
 * objects; ties by key) and cut to `top`; groups that retain nothing are
 * left out.  With HSCOPE_TALLY_SKIP_TRACER (since 0.3) Ruby's allocation
 * tracer and what it alone retains are left out and counted
 * (hscope_tally_excluded_tracer()); other tally flags are refused
 * (HSCOPE_ERR_UNSUPPORTED).  Written by
 * hscope_tally_write() as kind "retained".  The tally is independent of
 * the tree and the heap once made (no row lists objects).
 */
HSCOPE_API hscope_status hscope_domtree_tally(hscope_tally_t **out,
                                              hscope_domtree_t *tree,
                                              const char *key,
                                              const hscope_tally_options *opts,
                                              hscope_error *err);

/**
 * Paths from the GC roots to objects (kind "paths"): for each of
 * ids[0..count), up to `max_paths` shortest paths, the first being
 * hscope_paths_get()'s, the others through the object's other referrers
 * (shortest first).  Text, JSON, or DOT: a Graphviz graph of all paths,
 * each object and edge once, the given objects highlighted, an edge
 * labelled by the index of the reference ("[3]") or "class".
 */
HSCOPE_API hscope_status hscope_paths_write(const hscope_paths_t *paths,
                                            const hscope_id *ids,
                                            uint64_t count,
                                            const hscope_report_options *opts,
                                            hscope_write_fn write,
                                            void *user_data,
                                            hscope_error *err);

/**
 * Leak suspects: a diff's leaked objects, the dominator tree of its heap,
 * their holders (hscope_holders_compute()) ranked by the leaked memory
 * each keeps alive, and a shortest path from a root to each holder: the
 * one-screen answer to "what holds my leak".  Holds a reference on the
 * diff (freed last whatever the order) and on its heap.
 */
typedef struct hscope_suspects hscope_suspects_t;

/** Compute the suspects of a diff; `opts` as for the dominator tree. */
HSCOPE_API hscope_status hscope_suspects_compute(hscope_suspects_t **out,
                                                 hscope_diff_t *diff,
                                                 const hscope_dom_options *opts,
                                                 hscope_error *err);
HSCOPE_API void hscope_suspects_free(hscope_suspects_t *suspects);
/** The diff, dominator tree, holders and paths it holds (borrowed; valid
 * until hscope_suspects_free()). */
HSCOPE_API hscope_diff_t *hscope_suspects_diff(const hscope_suspects_t *suspects);
HSCOPE_API hscope_domtree_t *hscope_suspects_domtree(const hscope_suspects_t *suspects);
HSCOPE_API const hscope_holders_t *hscope_suspects_holders(const hscope_suspects_t *suspects);
HSCOPE_API const hscope_paths_t *hscope_suspects_paths(const hscope_suspects_t *suspects);
/**
 * The path from a root to holder i (hscope_holders_get()): as
 * hscope_paths_get(); 0 for a holder that is a root category or the
 * super-root (*root_category says which: >= 0, or -1), or that no root
 * reaches.
 */
HSCOPE_API uint64_t hscope_suspects_path(const hscope_suspects_t *suspects,
                                         uint64_t i, hscope_id *out,
                                         uint64_t max, int32_t *root_category);
/**
 * What the suspects say of each holder beyond hscope_holders_get() (since
 * 0.3): where the leaked objects it holds were allocated, what names it on
 * its path from a root, and whether it is one of the Ruby VM's own tables.
 *
 * Order: holder i of hscope_suspects_holders(), hscope_suspects_path() and
 * hscope_suspects_get() is the same holder.  The suspects rank holders by
 * the leaked memory they hold, as hscope_holders_compute(), except that a
 * Ruby VM table (vm_table != HSCOPE_VM_TABLE_NONE) comes after every
 * application holder, whatever it holds: such a table grows because of a
 * leak (the strings the leak interns, the allocations the tracer records),
 * it is not where the leak is.
 */
#define HSCOPE_VM_TABLE_NONE           0 /* an application holder */
#define HSCOPE_VM_TABLE_FSTRING        1 /* frozen-string table (DATA VM/concurrent_set) */
#define HSCOPE_VM_TABLE_SYMBOL         2 /* symbol table (VM/concurrent_set under root global_symbols) */
#define HSCOPE_VM_TABLE_OBJECT_ID      3 /* object-id table (DATA VM/_id2ref_table) */
#define HSCOPE_VM_TABLE_SHAPES         4 /* shape tree (DATA VM/shape_tree) */
#define HSCOPE_VM_TABLE_TRACER         5 /* allocation tracer (DATA ObjectTracing/allocation_info_tracer) */
#define HSCOPE_VM_TABLE_METHOD_CACHE   6 /* method caches (DATA VM/cc_table, IMEMO callcache, callinfo) */
#define HSCOPE_VM_TABLE_CONSTANT_CACHE 7 /* constant caches (IMEMO constcache) */

typedef struct hscope_suspect {
    uint32_t size;          /* sizeof(hscope_suspect), set by the caller */
    int32_t root_category;  /* the category its path starts from, or that
                               holds the leaked objects directly; -1: none
                               or several (the super-root) */
    hscope_id holder;       /* the holder (HSCOPE_ID_NONE: a root category
                               or the super-root), as hscope_holders_get() */
    hscope_id owner;        /* what names it: the nearest CLASS or MODULE on
                               its path from the root, the holder itself
                               included (it hangs from a constant, class
                               variable or class-level instance variable of
                               that class: the dump does not say which);
                               HSCOPE_ID_NONE when the path has none */
    const char *owner_name; /* the owner's name ("<anonymous>"), or NULL */
    uint64_t owner_steps;   /* references from the owner to the holder (0:
                               the holder is the class); 0 without owner */
    uint64_t count;         /* leaked objects held */
    uint64_t memsize;       /* and their memsize */
    uint64_t entries;       /* of them, those directly under the holder in
                               the dominator tree: what the program put
                               into it */
    uint64_t site_count;    /* allocation sites of the leaked objects held
                               (hscope_suspects_site_get()) */
    int32_t vm_table;       /* HSCOPE_VM_TABLE_*: the holder is a VM table,
                               or every leaked object it holds directly is
                               one (the table itself was reallocated: root
                               vm holding Ruby's new frozen-string table) */
    int32_t vm_table_leaked;/* 1: the table is among the leaked objects
                               (vm_table_object), 0: the holder is it */
    hscope_id vm_table_object; /* the table object (largest if several) */
    const char *vm_table_name;   /* "frozen-string table" ..., NULL for none */
    const char *vm_table_reason; /* why it holds leaked objects: one
                                    English sentence, NULL for none */
} hscope_suspect;

/** Holder i of the suspects (as hscope_holders_get()) into *out (fields
 * beyond out->size are not written; strings borrowed until
 * hscope_suspects_free()); HSCOPE_ERR_NOT_FOUND when i is out of range.
 * Since 0.3. */
HSCOPE_API hscope_status hscope_suspects_get(const hscope_suspects_t *suspects,
                                             uint64_t i, hscope_suspect *out);

/**
 * An allocation site of the leaked objects a holder holds: file, line and
 * method as the dump has them (objects allocated while
 * ObjectSpace.trace_object_allocations was on) and the objects' class
 * label (docs/DESIGN.md), i.e. the file:line:class key of the tally.
 */
typedef struct hscope_suspect_site {
    uint32_t size;          /* sizeof(hscope_suspect_site), set by the caller */
    uint32_t line;          /* 0 without allocation info */
    const char *file;       /* NULL without allocation info */
    const char *method;     /* NULL where the dump has none */
    const char *class_label;
    uint64_t count;         /* leaked objects allocated here that it holds */
    uint64_t memsize;       /* their memsize */
    uint64_t entries;       /* of them, directly under the holder */
    uint64_t kept_count;    /* leaked objects kept through those entries
                               (below them in the dominator tree, the
                               entries included) */
    uint64_t kept_memsize;  /* and their memsize */
} hscope_suspect_site;

/**
 * Site j (< hscope_suspect.site_count) of holder i into *out.  Sites that
 * put leaked objects directly into the holder come first, by the leaked
 * memory kept through them (kept_memsize): the line to change; then the
 * others; ties by memsize, count, then file, line, class and method.
 * Since 0.3.
 */
HSCOPE_API hscope_status hscope_suspects_site_get(const hscope_suspects_t *suspects,
                                                  uint64_t i, uint64_t j,
                                                  hscope_suspect_site *out);
/**
 * Write the suspects (kind "suspects"): the dumps and the leaked totals
 * as for the diff, then the `top` holders, best first, each with what it
 * keeps of the leak, its retained size and its path from a root (every
 * step labelled).  Text or JSON.
 */
HSCOPE_API hscope_status hscope_suspects_write(const hscope_suspects_t *suspects,
                                               const hscope_report_options *opts,
                                               hscope_write_fn write,
                                               void *user_data,
                                               hscope_error *err);
/* ---- end of the writers of one dump's results and of a diff ---- */
/* ------------------------------------------------------------------------ */
/* Ruby 4.0 and later; fields this version does not know (since 0.2)         */
/* ------------------------------------------------------------------------ */

/**
 * Ruby's object_id of an object, recorded by Ruby 4.0+ (flags "object_id")
 * for objects whose id was asked for.  Returns 1 and sets *object_id (may
 * be NULL) when the dump has it, else 0.  Since 0.2.
 */
HSCOPE_API int32_t hscope_heap_object_oid(const hscope_heap_t *heap, hscope_id id,
                                          uint64_t *object_id);

/**
 * The owner of an IMEMO fields object (Ruby 4.0+: the instance variables of
 * a String, Array, class or typed Data live in one; its "class" field is
 * the owner, which references it): the owner's id, or HSCOPE_ID_NONE when
 * `id` is not a fields object or its owner is not in the dump.  Since 0.2.
 */
HSCOPE_API hscope_id hscope_heap_object_owner(const hscope_heap_t *heap, hscope_id id);

/**
 * 1 if root category i is conservative: "machine_context", the GC's scan of
 * the C stack and registers (on WASI, of the shadow stack and the spilled
 * locals), which keeps alive whatever a stale slot happens to point at; 0
 * otherwise.  hscope_paths_compute() prefers the other roots.  Since 0.2.
 */
HSCOPE_API int32_t hscope_heap_root_category_conservative(const hscope_heap_t *heap,
                                                          uint32_t i);

/** Kinds of fields a dump has that this version does not know. */
#define HSCOPE_UNKNOWN_KEY   1 /* a record key; counted per record */
#define HSCOPE_UNKNOWN_FLAG  2 /* a name inside "flags"; counted per record */
#define HSCOPE_UNKNOWN_TYPE  3 /* an object "type"; counted per object (the
                                  objects are kept, under that type name) */
#define HSCOPE_UNKNOWN_OTHER 4 /* names beyond the first 32, together */

/**
 * Fields of the dump this version does not know (a newer Ruby's): never an
 * error, the record is kept and the field counted by name.  Entries: keys and
 * flags in the order first met (cut to their first 47 bytes), then types;
 * the unknown_keys and unknown_types load statistics are their totals.
 * Since 0.2.
 */
HSCOPE_API uint32_t hscope_heap_unknown_count(const hscope_heap_t *heap);
/** Entry i: kind (HSCOPE_UNKNOWN_*), name (borrowed; "(other)" for
 * HSCOPE_UNKNOWN_OTHER) and count.  HSCOPE_ERR_NOT_FOUND past the end. */
HSCOPE_API hscope_status hscope_heap_unknown_get(const hscope_heap_t *heap, uint32_t i,
                                                 int32_t *kind, const char **name,
                                                 uint64_t *count);

/**
 * Objects of the diff's last dump matched by Ruby's object_id (Ruby 4.0+
 * records it for objects whose id was asked for): when both records of an
 * object have one, the ids decide identity, wherever the object lies (so
 * an object moved by compaction is still a survivor, and an address reused
 * by another object is not).  Since 0.2.
 */
HSCOPE_API uint64_t hscope_diff_object_id_matches(const hscope_diff_t *diff);
/** Of those, the objects found at another address than in an earlier
 * dump (moved by GC compaction).  Since 0.2. */
HSCOPE_API uint64_t hscope_diff_moved_objects(const hscope_diff_t *diff);
/** Notes on how the diff decided identity (e.g. by object_id), one per
 * line; "" if none.  Not warnings: nothing is wrong.  Since 0.2. */
HSCOPE_API const char *hscope_diff_note_text(const hscope_diff_t *diff);

/**
 * Write a waste analysis: text (the totals, the places to change with
 * their fixes, the duplicated values) or JSON (kind "waste", docs/JSON.md).
 * `top` rows of each list (0: 20).  A value is shown as its length and
 * the first 8 hex digits of its hash (JSON: "length" and all 16), so two
 * reports can be compared; the value itself only with
 * HSCOPE_REPORT_VALUES.
 */
HSCOPE_API hscope_status hscope_waste_write(const hscope_waste_t *waste,
                                            const hscope_report_options *opts,
                                            hscope_write_fn write,
                                            void *user_data,
                                            hscope_error *err);

/* ------------------------------------------------------------------------ */
/* Memory over time: timeline (and diff --grew), export (since 0.2)          */
/* ------------------------------------------------------------------------ */

/** How dumps are put in time order (docs/TIMELINE.md).  Fixed values. */
#define HSCOPE_ORDER_AUTO  0  /* the first of the rules below that applies */
#define HSCOPE_ORDER_NAME  1  /* a date-time, an epoch or a sequence number
                                 in every file name */
#define HSCOPE_ORDER_MTIME 2  /* the files' modification times */
#define HSCOPE_ORDER_GIVEN 3  /* the order of the paths */

/** The series a timeline fits and ranks.  Fixed values; 0 means memsize. */
#define HSCOPE_METRIC_MEMSIZE 1  /* the sum of the objects' memsize */
#define HSCOPE_METRIC_COUNT   2  /* the number of objects */

/** hscope_timeline_options.flags: keep the objects the dumper allocated
 * (default: left out of every dump and counted, as HSCOPE_TALLY_SKIP_DUMPER). */
#define HSCOPE_TIMELINE_KEEP_DUMPER 0x1u
/**
 * hscope_timeline_options.flags: the "grew" view (heapy's, `heapscope diff
 * --grew`): the dumps in the order given (whatever `order` says), groups
 * ranked by the change of the metric from the first dump to the last,
 * largest first (ties by key); the writers write it as kind "grew".
 */
#define HSCOPE_TIMELINE_GREW        0x2u
/**
 * hscope_timeline_options.flags: keep Ruby's allocation tracer (the DATA
 * object ObjectTracing/allocation_info_tracer of
 * ObjectSpace.trace_object_allocations, labelled "<allocation tracer>").
 * By default, since 0.3, it is left out of every dump's groups and totals
 * and counted (hscope_timeline_dump_excluded_tracer()), as
 * HSCOPE_TALLY_SKIP_TRACER does: it is instrumentation whose table grows
 * with every traced allocation, so it ranked as a growing group of its own.
 * A 0.2 caller that wants the figures of 0.2 sets this bit.
 */
#define HSCOPE_TIMELINE_KEEP_TRACER 0x4u

/**
 * Options for hscope_timeline_compute().  Zero in every field means the
 * default; NULL for all defaults.
 */
typedef struct hscope_timeline_options {
    uint32_t size;        /* sizeof(hscope_timeline_options) */
    uint32_t flags;       /* HSCOPE_TIMELINE_* */
    const char *by;       /* a tally key; NULL: "file:line:class" */
    int32_t metric;       /* HSCOPE_METRIC_*; 0: memsize */
    int32_t order;        /* HSCOPE_ORDER_*; 0: auto */
    uint32_t threads;     /* dumps folded at once; 0: one per core */
    uint32_t min_dumps;   /* dumps a growing group needs; 0: 3 (at least 2) */
} hscope_timeline_options;

#define HSCOPE_TIMELINE_OPTIONS_INIT { sizeof(hscope_timeline_options), 0, NULL, 0, 0, 0, 0 }
HSCOPE_API void hscope_timeline_options_init(hscope_timeline_options *opts);

/**
 * What grows over time: each dump folded into totals per group (as
 * hscope_tally_file(): no object graph, memory bounded by the number of
 * groups; several dumps at once), the dumps put in time order, and per
 * group its series (count and memsize in every dump, 0 where absent), a
 * least-squares line against the step (and against the time in hours when
 * the times are known), R^2 and the "growing" verdict: at least
 * `min_dumps` dumps, slope > 0, R^2 >= 0.8, the last value above the
 * first, and a fitted rise (slope x (dumps - 1)) of at least max(10
 * objects or 4096 bytes, 2% of the group's mean).  Groups are ranked
 * growing first, then by slope x R^2, the last value, the key.
 * Consecutive dumps are checked as a series (hscope_series_check()); a
 * damaged dump is a warning (of the writers), not an error.  Free with hscope_timeline_free().
 */
typedef struct hscope_timeline hscope_timeline_t;

/**
 * Compute a timeline of the dump files paths[0..n) (n >= 1).  `load`
 * applies to each dump (its max_memory caps each fold; `threads` 0 gives
 * each fold its share of the cores).  The progress callback, if any, is
 * called with the bytes of all dumps (never by two threads at once); a
 * line callback makes the dumps fold one at a time.  On failure the error
 * names the dump; HSCOPE_ERR_INVALID_ARG when a forced order (NAME, MTIME)
 * cannot order the dumps.  Thread-safe: any number of timelines at once.
 */
HSCOPE_API hscope_status hscope_timeline_compute(hscope_timeline_t **out,
                                                 const char *const *paths,
                                                 uint64_t n,
                                                 const hscope_load_options *load,
                                                 const hscope_timeline_options *opts,
                                                 hscope_error *err);
HSCOPE_API void hscope_timeline_free(hscope_timeline_t *tl);

/** The key the groups are made by ("file:line:class", ...). Static. */
HSCOPE_API const char *hscope_timeline_by(const hscope_timeline_t *tl);
/** HSCOPE_METRIC_MEMSIZE or HSCOPE_METRIC_COUNT: what was fitted. */
HSCOPE_API int32_t hscope_timeline_metric(const hscope_timeline_t *tl);
/** The rule that ordered the dumps: "name-time", "mtime" or "given", and
 * what it read: "datetime", "epoch", "epoch-ms", "sequence", "mtime" or
 * "given" (docs/TIMELINE.md).  Static strings. */
HSCOPE_API const char *hscope_timeline_order(const hscope_timeline_t *tl);
HSCOPE_API const char *hscope_timeline_order_source(const hscope_timeline_t *tl);
/** 1 when the dumps' times are known (slopes per hour), else 0. */
HSCOPE_API int32_t hscope_timeline_times_known(const hscope_timeline_t *tl);

/** Number of dumps.  Dump i is the i-th in time order. */
HSCOPE_API uint64_t hscope_timeline_dump_count(const hscope_timeline_t *tl);
/** Its path as given (borrowed), and its index among the paths given. */
HSCOPE_API const char *hscope_timeline_dump_path(const hscope_timeline_t *tl, uint64_t i);
HSCOPE_API uint64_t hscope_timeline_dump_given(const hscope_timeline_t *tl, uint64_t i);
/** "No value" of the int64_t accessors below (the ABI has no floating
 * point: times and fits are fixed-point integers). */
#define HSCOPE_NO_VALUE (-9223372036854775807LL - 1)

/** Its time in milliseconds since the epoch (UTC), or HSCOPE_NO_VALUE when
 * the times are not known. */
HSCOPE_API int64_t hscope_timeline_dump_time_ms(const hscope_timeline_t *tl, uint64_t i);
/** Its objects and their memsize (the dumper's left out unless kept). */
HSCOPE_API hscope_status hscope_timeline_dump_totals(const hscope_timeline_t *tl,
                                                     uint64_t i, uint64_t *count,
                                                     uint64_t *memsize);
/** Objects of dump i left out as the dumper's own. */
HSCOPE_API uint64_t hscope_timeline_dump_excluded(const hscope_timeline_t *tl, uint64_t i);
/** Objects and memsize of Ruby's allocation tracer left out of dump i
 * (unless HSCOPE_TIMELINE_KEEP_TRACER); 0 and 0 out of range.  Either
 * pointer may be NULL.  Since 0.3. */
HSCOPE_API void hscope_timeline_dump_excluded_tracer(const hscope_timeline_t *tl, uint64_t i,
                                                     uint64_t *objects, uint64_t *memsize);
/** The load statistics of the pass over dump i (as hscope_tally_stats()),
 * and its lines skipped for `reason`: so a front end can say that a dump
 * was damaged.  Fields beyond stats->size are not written. */
HSCOPE_API hscope_status hscope_timeline_dump_stats(const hscope_timeline_t *tl,
                                                    uint64_t i,
                                                    hscope_load_stats *stats);
HSCOPE_API uint64_t hscope_timeline_dump_skipped(const hscope_timeline_t *tl,
                                                 uint64_t i, int32_t reason);

/** Number of groups (all of them, ranked), and of growing ones (the
 * first hscope_timeline_growing_count() groups). */
HSCOPE_API uint64_t hscope_timeline_group_count(const hscope_timeline_t *tl);
HSCOPE_API uint64_t hscope_timeline_growing_count(const hscope_timeline_t *tl);
/** Key of group g (borrowed), NULL when out of range. */
HSCOPE_API const char *hscope_timeline_group_key(const hscope_timeline_t *tl, uint64_t g);
/** Series of group g by `metric` (HSCOPE_METRIC_*): one value per dump,
 * in time order (borrowed); NULL when out of range. */
HSCOPE_API const uint64_t *hscope_timeline_group_series(const hscope_timeline_t *tl,
                                                        uint64_t g, int32_t metric);
/**
 * Fit of group g's series (the timeline's metric) in fixed point; each
 * out-pointer may be NULL.  In thousandths of the metric's unit (bytes or
 * objects), rounded: the slope per step (HSCOPE_NO_VALUE with one dump),
 * the slope per hour (HSCOPE_NO_VALUE when the times are not known), the
 * mean and the fitted rise; R^2 in millionths, 0 to 1000000
 * (HSCOPE_NO_VALUE with one dump).  HSCOPE_ERR_NOT_FOUND when g is out of
 * range.
 */
HSCOPE_API hscope_status hscope_timeline_group_fit(const hscope_timeline_t *tl, uint64_t g,
                                                   int64_t *slope_per_step_milli,
                                                   int64_t *slope_per_hour_milli,
                                                   int64_t *r2_micro, int64_t *mean_milli,
                                                   int64_t *rise_milli);
/** 1 when group g is growing, else 0. */
HSCOPE_API int32_t hscope_timeline_group_growing(const hscope_timeline_t *tl, uint64_t g);

/** Warnings as HSCOPE_DIFF_WARN_* bits: _SKIPPED (a damaged dump: see
 * hscope_timeline_dump_stats()), and the series checks' _REPEATED,
 * _DIFFERENT_PROCESS, _BACKWARDS. */
HSCOPE_API uint32_t hscope_timeline_warnings(const hscope_timeline_t *tl);
/** The series checks' findings, one a line ("" when none).  Borrowed.
 * (The writers also say the damaged dumps.) */
HSCOPE_API const char *hscope_timeline_warning_text(const hscope_timeline_t *tl);
/** Number of series checks' findings; finding i's code ("repeated",
 * "different_process", "backwards") and message (borrowed). */
HSCOPE_API uint64_t hscope_timeline_warning_count(const hscope_timeline_t *tl);
HSCOPE_API hscope_status hscope_timeline_warning(const hscope_timeline_t *tl, uint64_t i,
                                                 const char **code, const char **message);

/**
 * Write a timeline: text (a table with a trend sparkline per group),
 * JSON (kind "timeline", or "grew" for HSCOPE_TIMELINE_GREW), CSV (one
 * row per group and dump: rank,key,step,dump,time,count,memsize,growing)
 * or SVG (the series of the first min(top, 12) groups, and their change
 * since the first dump).  `top` groups (0: 20; HSCOPE_TOP_ALL: all).
 * The dumps are named by their paths, or by opts->dump_names in the order
 * the paths were given.  Warnings (JSON "warnings"; text: "warning: ..."
 * lines first, unless HSCOPE_REPORT_NO_WARNINGS): each damaged dump, then
 * the series checks.
 */
HSCOPE_API hscope_status hscope_timeline_write(const hscope_timeline_t *tl,
                                               const hscope_report_options *opts,
                                               hscope_write_fn write, void *user_data,
                                               hscope_error *err);

/**
 * Export: write dump files as tables for PostgreSQL and DuckDB
 * (docs/TIMELINE.md, "heapscope export"): DIR/dumps, objects, refs, roots
 * (.csv or .jsonl) and DIR/schema.sql, DIR/schema.duckdb.sql.  One dump is
 * loaded at a time; string values are never loaded, so never exported;
 * text is written as valid UTF-8.  The result says what was written.
 */
typedef struct hscope_export hscope_export_t;

typedef struct hscope_export_options {
    uint32_t size;        /* sizeof(hscope_export_options) */
    int32_t format;       /* HSCOPE_FORMAT_CSV (0) or HSCOPE_FORMAT_JSONL */
    int32_t order;        /* HSCOPE_ORDER_*: the dump ids' order; 0: auto */
    uint32_t reserved;    /* zero */
    uint64_t first_id;    /* dump_id of the first dump; 0: 1 (at most 10^9) */
} hscope_export_options;

#define HSCOPE_EXPORT_OPTIONS_INIT { sizeof(hscope_export_options), 0, 0, 0, 0 }
HSCOPE_API void hscope_export_options_init(hscope_export_options *opts);

/**
 * Export paths[0..n) into the directory `dir` (created if missing; files
 * replaced).  `out` (may be NULL) gets what was written.  `load` applies to
 * each dump (HSCOPE_LOAD_VALUES is ignored: values are never exported);
 * unless its `threads` is 1, a dump's objects and references tables are
 * formatted on two threads, in chunks written in order (the same bytes).
 * On failure the error names
 * the dump or file.
 */
HSCOPE_API hscope_status hscope_export_files(hscope_export_t **out,
                                             const char *const *paths, uint64_t n,
                                             const char *dir,
                                             const hscope_load_options *load,
                                             const hscope_export_options *opts,
                                             hscope_error *err);
HSCOPE_API void hscope_export_free(hscope_export_t *ex);
/** Number of dumps written, and dump i's path (time order; borrowed). */
HSCOPE_API uint64_t hscope_export_dump_count(const hscope_export_t *ex);
HSCOPE_API const char *hscope_export_dump_path(const hscope_export_t *ex, uint64_t i);
/** Objects and references written, over all dumps. */
HSCOPE_API void hscope_export_totals(const hscope_export_t *ex, uint64_t *objects,
                                     uint64_t *references);
/** The load statistics of dump i (time order) and its lines skipped for
 * `reason`, as hscope_timeline_dump_stats(): to say a damaged dump. */
HSCOPE_API hscope_status hscope_export_dump_stats(const hscope_export_t *ex, uint64_t i,
                                                  hscope_load_stats *stats);
HSCOPE_API uint64_t hscope_export_dump_skipped(const hscope_export_t *ex, uint64_t i,
                                               int32_t reason);
/** Write what was exported: text (one line) or JSON (kind "export": the
 * dumps with their ids, the files, the damaged dumps as warnings). */
HSCOPE_API hscope_status hscope_export_write(const hscope_export_t *ex,
                                             const hscope_report_options *opts,
                                             hscope_write_fn write, void *user_data,
                                             hscope_error *err);

/* ------------------------------------------------------------------------ */
/* Redaction: a copy of a dump that is safe to share (since 0.3)             */
/* ------------------------------------------------------------------------ */

/**
 * Redaction writes a copy of a dump in which the "value" of every STRING,
 * SYMBOL and FLOAT record (tokens, passwords, personal data) is replaced by
 * a placeholder holding its length and a hash, and every other byte is the
 * same, so that heapscope's answers on the copy equal those on the
 * original (docs/WASTE.md, "Privacy"; `heapscope redact`).  Every line is
 * copied, whatever its length (max_line_bytes does not apply; max_memory
 * does); a damaged line is copied too, its values replaced as text.  One
 * pass on the calling thread.  The result says what was done.
 */
typedef struct hscope_redaction hscope_redact_t;

/** hscope_redact_options.flags.  Fixed values. */
#define HSCOPE_REDACT_GZIP 0x1u /* write gzip (hscope_redact(): also when
                                   the path ends in ".gz") */

typedef struct hscope_redact_options {
    uint32_t size;        /* sizeof(hscope_redact_options) */
    uint32_t flags;       /* HSCOPE_REDACT_* */
    int32_t gzip_level;   /* 1-9; 0: 6 */
    uint32_t reserved;    /* zero */
} hscope_redact_options;

#define HSCOPE_REDACT_OPTIONS_INIT { sizeof(hscope_redact_options), 0, 0, 0 }
HSCOPE_API void hscope_redact_options_init(hscope_redact_options *opts);

/**
 * Redact the dump at `in` (plain or gzip) into the file `out_path`.  A
 * regular (or new) file is written beside itself as OUT.tmp.XXXXXX and
 * renamed when complete, so an existing file is replaced only by a whole
 * copy and is left as it was on failure; anything else (a pipe,
 * /dev/stdout) is written to directly.  `out_path` naming `in` under any
 * name is HSCOPE_ERR_INVALID_ARG, before anything is opened.  `out` (may
 * be NULL) gets what was done.
 */
HSCOPE_API hscope_status hscope_redact(hscope_redact_t **out, const char *in,
                                       const char *out_path,
                                       const hscope_load_options *load,
                                       const hscope_redact_options *opts,
                                       hscope_error *err);
/** Redact the dump at `in` to write(user_data, ...); a failed write
 * stops the pass (HSCOPE_ERR_IO). */
HSCOPE_API hscope_status hscope_redact_write(hscope_redact_t **out, const char *in,
                                             const hscope_load_options *load,
                                             const hscope_redact_options *opts,
                                             hscope_write_fn write, void *user_data,
                                             hscope_error *err);
HSCOPE_API void hscope_redact_free(hscope_redact_t *r);
/** Lines copied, values replaced, and values left as they were because
 * they are placeholders already (a redacted dump redacted again). */
HSCOPE_API void hscope_redact_totals(const hscope_redact_t *r, uint64_t *lines,
                                     uint64_t *values, uint64_t *kept);
/** What the pass read, as a load's statistics, and its lines skipped as
 * damaged for `reason` (copied all the same): to say a damaged dump. */
HSCOPE_API hscope_status hscope_redact_stats(const hscope_redact_t *r,
                                             hscope_load_stats *stats);
HSCOPE_API uint64_t hscope_redact_skipped(const hscope_redact_t *r, int32_t reason);

/* ------------------------------------------------------------------------ */
/* The HTML report (since 0.2)                                              */
/* ------------------------------------------------------------------------ */

/** hscope_html_options.flags.  Fixed values. */
#define HSCOPE_HTML_NO_CLASS_EDGES 0x1u /* dominator tree without the
                                           object -> class edges */
#define HSCOPE_HTML_KEEP_DUMPER    0x2u /* keep the objects the dumper
                                           allocated (default: left out of
                                           histograms, sites, diff,
                                           timeline and waste, and counted) */
#define HSCOPE_HTML_NO_WASTE       0x4u /* no waste section (saves its pass
                                           over the last dump) */
#define HSCOPE_HTML_KEEP_TRACER    0x8u /* keep Ruby's allocation tracer
                                           (default: left out of histograms,
                                           sites, retainers, timeline, diff
                                           and waste, and said;
                                           labelled "<allocation tracer>"
                                           where it shows).  Since 0.3. */

/**
 * What an HTML report holds.  Zero in every field means the default; NULL
 * for all defaults.
 */
typedef struct hscope_html_options {
    uint32_t size;        /* sizeof(hscope_html_options) */
    uint32_t flags;       /* HSCOPE_HTML_* */
    const char *by;       /* timeline grouping (a tally key); NULL: "class" */
    int32_t order;        /* timeline order (HSCOPE_ORDER_*); 0: auto.  The
                             diff of 2-3 dumps is in the order given */
    uint32_t reserved;    /* zero */
    const char *title;    /* the page's <title>; NULL: "heapscope report:
                             NAME (+N)", NAME the last path's file name */
} hscope_html_options;

#define HSCOPE_HTML_OPTIONS_INIT { sizeof(hscope_html_options), 0, NULL, 0, 0, NULL }
/** Function twin of HSCOPE_HTML_OPTIONS_INIT. */
HSCOPE_API void hscope_html_options_init(hscope_html_options *opts);

/**
 * `heapscope report`: one self-contained HTML page (inline CSS, script and
 * SVG; no external assets) about dump files paths[0..n):
 *  - 1 dump: summary, type and class histograms, top allocation sites
 *    (file:line:class), top retainers and an icicle of the dominator tree;
 *  - 2-3 dumps: also the diff (new in B since A, still alive in C) by
 *    file:line:class and the leak suspects with their paths from a root
 *    (hscope_suspects_compute());
 *  - 2+ dumps: also the timeline plot and growth ranking (by `by`);
 *  - the waste of the last dump (hscope_waste_file(), one more streamed
 *    pass over its file): totals, the places to change, the duplicated
 *    values as length and hash (never the values).
 * The one-dump sections describe the last dump: the last path for 1-3
 * dumps, the last in time order for more.  Text from the dumps is
 * escaped (invalid UTF-8 as U+FFFD); string values are never loaded into
 * the page.
 *
 * A report is computed once (every dump loaded or folded, every
 * analysis run; all errors come here) and written any number of times.
 * Use the two steps when a front end wants the warnings (from the diff,
 * the timeline or the heap) before writing; hscope_report_html() does it
 * in one call.  The handle holds the last dump's heap, its dominator tree
 * and, for 2-3 dumps, the diff and suspects.
 */
typedef struct hscope_html_report hscope_html_report_t;

/**
 * Compute a report.  `load` applies to every dump (HSCOPE_LOAD_USE_INDEX:
 * the dumps loaded whole may open from a saved index; the timeline and
 * waste read the dump files).  Errors name their step ("diff: ...",
 * "dominators: ...", "waste: ..."); HSCOPE_ERR_INVALID_ARG when a forced
 * order (NAME, MTIME) cannot order the dumps.  A last dump that cannot be
 * read twice (a pipe) gets a note instead of its waste section.
 */
HSCOPE_API hscope_status hscope_html_report_compute(hscope_html_report_t **out,
                                                    const char *const *paths,
                                                    uint64_t n,
                                                    const hscope_load_options *load,
                                                    const hscope_html_options *opts,
                                                    hscope_error *err);
HSCOPE_API void hscope_html_report_free(hscope_html_report_t *report);
/** What the report holds (borrowed; valid until hscope_html_report_free()):
 * the heap of the one-dump sections; the diff (2-3 dumps, else NULL); the
 * timeline (2+ dumps, else NULL); the waste (NULL with HSCOPE_HTML_NO_WASTE
 * or when it could not be computed). */
HSCOPE_API hscope_heap_t *hscope_html_report_heap(const hscope_html_report_t *report);
HSCOPE_API hscope_diff_t *hscope_html_report_diff(const hscope_html_report_t *report);
HSCOPE_API const hscope_timeline_t *hscope_html_report_timeline(const hscope_html_report_t *report);
HSCOPE_API const hscope_waste_t *hscope_html_report_waste(const hscope_html_report_t *report);

/**
 * Write the page.  `opts`: format 0 or HSCOPE_FORMAT_HTML (others:
 * HSCOPE_ERR_UNSUPPORTED); `top` rows per table (0: 20; HSCOPE_TOP_ALL:
 * all); other fields unused.  As every writer: HSCOPE_ERR_IO when `write`
 * returns non-zero (what was written stays written); only reads the report.
 */
HSCOPE_API hscope_status hscope_html_report_write(const hscope_html_report_t *report,
                                                  const hscope_report_options *opts,
                                                  hscope_write_fn write,
                                                  void *user_data,
                                                  hscope_error *err);

/**
 * Compute and write an HTML report in one call (hscope_html_report_compute()
 * then hscope_html_report_write()); nothing is written when computing fails.
 */
HSCOPE_API hscope_status hscope_report_html(const char *const *paths, uint64_t n,
                                            const hscope_load_options *load,
                                            const hscope_html_options *html,
                                            const hscope_report_options *opts,
                                            hscope_write_fn write, void *user_data,
                                            hscope_error *err);

/* ------------------------------------------------------------------------ */
/* Budgets: limits a CI job checks dumps against (since 0.2)                 */
/* ------------------------------------------------------------------------ */

/**
 * A memory budget (docs/BUDGET.md): limits on the live objects and memsize
 * of the last dump (in all, per class, per gem, per file:line:class site),
 * on what the roots keep alive (retained, from the dominator tree), and on
 * the objects leaked over a 3-dump series (hscope_diff_files()).  Written
 * in a small subset of TOML:
 *
 *     [total]
 *     memsize = "200 MB"        # KB, MB, GB, TB: 1024-based
 *     objects = 1_500_000
 *     [leaked]                  # needs three dumps A B C
 *     objects = 0
 *     [class."String"]
 *     memsize = "50 MB"
 *
 * Immutable once parsed: any number of threads may check against it.
 * Free with hscope_budget_free().
 */
typedef struct hscope_budget hscope_budget_t;

/** What a rule limits (hscope_check_rule.scope).  Fixed values. */
#define HSCOPE_BUDGET_TOTAL  1  /* [total]: every live object of the last dump */
#define HSCOPE_BUDGET_LEAKED 2  /* [leaked]: born between dumps 1 and 2, alive in 3 */
#define HSCOPE_BUDGET_CLASS  3  /* [class."NAME"]: the tally key "class" */
#define HSCOPE_BUDGET_GEM    4  /* [gem."NAME"]: the tally key "gem"; a NAME
                                   without version: NAME-VERSION, NAME-SHA too */
#define HSCOPE_BUDGET_SITE   5  /* [site."FILE:LINE:CLASS"]: "file:line:class";
                                   FILE may be the end of the path after a '/' */
/* Since 0.3: [leaked] per group, the leaked objects (as HSCOPE_BUDGET_LEAKED)
 * of one class or one site (matched as HSCOPE_BUDGET_CLASS and _SITE);
 * objects and memsize.  A rule of an older library never has these. */
#define HSCOPE_BUDGET_LEAKED_CLASS 6  /* [leaked.class."NAME"] */
#define HSCOPE_BUDGET_LEAKED_SITE  7  /* [leaked.site."FILE:LINE:CLASS"] */

/** The measure a rule limits (hscope_check_rule.metric).  Fixed values. */
#define HSCOPE_BUDGET_OBJECTS  1  /* objects */
#define HSCOPE_BUDGET_MEMSIZE  2  /* bytes: the objects' memsize summed */
#define HSCOPE_BUDGET_RETAINED 3  /* bytes kept alive from the roots (the
                                     dominator tree: the reachable memsize
                                     in all; per group as hscope_domtree_tally()) */

/**
 * Parse a budget from text[0..len).  `name` (may be NULL: "budget") names
 * it in errors and reports.  A budget that is not valid fails with
 * HSCOPE_ERR_PARSE and a message "NAME:LINE: KEY: what is wrong" (err->line
 * is the line): an unknown section or key, a value that is not a whole
 * number (objects) or a size ("1.5 GB", or a whole number of bytes), a
 * negative or too large number, a key or section given twice, a key
 * outside a section, no rule at all.
 */
HSCOPE_API hscope_status hscope_budget_parse(hscope_budget_t **out, const char *text,
                                             uint64_t len, const char *name,
                                             hscope_error *err);
/** Read and parse a budget file (named by its path in errors); at most
 * 16 MiB (HSCOPE_ERR_LIMIT beyond). */
HSCOPE_API hscope_status hscope_budget_load_file(hscope_budget_t **out, const char *path,
                                                 hscope_error *err);
HSCOPE_API void hscope_budget_free(hscope_budget_t *budget);
/** Number of rules (one per KEY = VALUE line). */
HSCOPE_API uint64_t hscope_budget_rule_count(const hscope_budget_t *budget);
/** Dumps a check needs: 3 when the budget has [leaked] rules, else 1. */
HSCOPE_API uint32_t hscope_budget_dumps_needed(const hscope_budget_t *budget);

/** The result of checking dumps against a budget.  Owns copies of
 * everything it reports; holds no heap.  Free with hscope_check_free(). */
typedef struct hscope_check hscope_check_t;

/** hscope_check_options.flags: keep the objects the dumper allocated in
 * the live and leaked figures (default: left out and counted, as
 * HSCOPE_TALLY_SKIP_DUMPER and hscope_diff_compute() do). */
#define HSCOPE_CHECK_KEEP_DUMPER 0x1u
/** hscope_check_options.flags: a rule naming a class, gem or site the dump
 * does not have leaves the check without a verdict
 * (hscope_check_no_verdict() names the rule and the dump's closest names);
 * by default such a rule measures 0 and the writers warn, naming the
 * closest names (hscope_check_rule.closest).  Since 0.3. */
#define HSCOPE_CHECK_STRICT_NAMES 0x2u
/** hscope_check_options.flags: keep Ruby's allocation tracer (the DATA
 * object ObjectTracing/allocation_info_tracer of trace_object_allocations)
 * in the live, retained and leaked figures.  By default, since 0.3, it is
 * left out of them and counted (hscope_check_excluded_tracer()), as
 * HSCOPE_TALLY_SKIP_TRACER does (retained: with what it alone retains); a
 * class rule that names it, class."<allocation tracer>" (or
 * leaked.class."<allocation tracer>"), still measures it.  A 0.2 caller
 * that wants the figures of 0.2 sets this bit.  Since 0.3. */
#define HSCOPE_CHECK_KEEP_TRACER 0x4u

typedef struct hscope_check_options {
    uint32_t size;      /* sizeof(hscope_check_options) */
    uint32_t flags;     /* HSCOPE_CHECK_* */
} hscope_check_options;

#define HSCOPE_CHECK_OPTIONS_INIT { sizeof(hscope_check_options), 0 }
/** Function twin of HSCOPE_CHECK_OPTIONS_INIT. */
HSCOPE_API void hscope_check_options_init(hscope_check_options *opts);

/**
 * Check dump files against a budget: paths[0..n) is one dump, or three
 * (A B C, in time order) when the budget has [leaked] rules (else
 * HSCOPE_ERR_INVALID_ARG, "NAME:LINE: leaked: ..."); with three dumps and
 * no [leaked] rule only the last is read (a warning says so).  Total,
 * class, gem and site rules apply to the last dump.  Only what the budget
 * asks for is computed: a streamed tally (hscope_tally_file()) when one
 * grouping key is enough; the last dump loaded once for several keys;
 * the dominator tree only for retained rules; the 3-dump diff only for
 * [leaked] (its warnings, e.g. the series checks, are the check's).  A
 * group the dump does not have counts 0 (found = 0).  `load` applies to
 * every dump; its allocator also serves the result, so it must outlive
 * it.  On failure the error names the dump.  Thread-safe: any number of
 * checks at once, on one budget.
 */
HSCOPE_API hscope_status hscope_check_compute(hscope_check_t **out,
                                              const hscope_budget_t *budget,
                                              const char *const *paths, uint64_t n,
                                              const hscope_load_options *load,
                                              const hscope_check_options *opts,
                                              hscope_error *err);
HSCOPE_API void hscope_check_free(hscope_check_t *check);

/** One rule of a check.  Caller-owned; set `size` first (fields beyond it
 * are not written).  Strings are borrowed, valid until hscope_check_free(). */
typedef struct hscope_check_rule {
    uint32_t size;        /* sizeof(hscope_check_rule), set by the caller */
    int32_t scope;        /* HSCOPE_BUDGET_TOTAL ... _LEAKED_SITE */
    int32_t metric;       /* HSCOPE_BUDGET_OBJECTS, _MEMSIZE, _RETAINED */
    int32_t over;         /* 1: actual > limit (over budget), else 0 */
    int32_t found;        /* 0: a group the dump does not have (actual 0);
                             1 otherwise */
    uint32_t reserved;
    const char *key;      /* the group (class, gem, site, leaked class or
                             site); NULL for total and leaked */
    uint64_t line;        /* its line in the budget */
    uint64_t limit;       /* objects or bytes */
    uint64_t actual;      /* measured, same unit */
    const char *closest;  /* found 0: up to three of the dump's names nearest
                             to key (edit distance), ", "-joined; NULL if
                             none is near.  Since 0.3 */
} hscope_check_rule;

#define HSCOPE_CHECK_RULE_INIT { sizeof(hscope_check_rule), 0, 0, 0, 0, 0, NULL, 0, 0, 0, NULL }
/** Function twin of HSCOPE_CHECK_RULE_INIT. */
HSCOPE_API void hscope_check_rule_init(hscope_check_rule *rule);

/** Number of rules (the budget's, in its order), and of those over budget
 * (0: the dumps are within budget). */
HSCOPE_API uint64_t hscope_check_rule_count(const hscope_check_t *check);
HSCOPE_API uint64_t hscope_check_over_count(const hscope_check_t *check);
/**
 * Why the check has no verdict, or NULL when it has one (since 0.3): a
 * budget with a [leaked] rule given the same dump more than once, dumps of
 * different processes, or dumps out of time order (the series checks of
 * hscope_series_check(): HSCOPE_DIFF_WARN_REPEATED, _DIFFERENT_PROCESS,
 * _BACKWARDS).  A leak count over such dumps means nothing, so neither
 * "within" nor "over budget" holds; the CLI exits 2, as for a budget
 * that is not valid.  Borrowed, valid until hscope_check_free().
 */
HSCOPE_API const char *hscope_check_no_verdict(const hscope_check_t *check);
/** Rule i.  HSCOPE_ERR_NOT_FOUND past the end. */
HSCOPE_API hscope_status hscope_check_rule_get(const hscope_check_t *check, uint64_t i,
                                               hscope_check_rule *rule);
/** The last dump's live objects and memsize (the dumper's left out unless
 * kept), and the objects left out as the dumper's. */
HSCOPE_API void hscope_check_totals(const hscope_check_t *check, uint64_t *count,
                                    uint64_t *memsize, uint64_t *excluded);
/** Objects and memsize of Ruby's allocation tracer left out of the last
 * dump's live totals and groups (unless HSCOPE_CHECK_KEEP_TRACER).  Either
 * pointer may be NULL.  Since 0.3. */
HSCOPE_API void hscope_check_excluded_tracer(const hscope_check_t *check, uint64_t *objects,
                                             uint64_t *memsize);
/** Warnings as HSCOPE_DIFF_WARN_* bits (a damaged dump, the diff's and the
 * series checks'), and the text of the diff's and the series checks' (or
 * that the first two of three dumps were not read), one a line ("" if
 * none; borrowed). */
HSCOPE_API uint32_t hscope_check_warnings(const hscope_check_t *check);
HSCOPE_API const char *hscope_check_warning_text(const hscope_check_t *check);
/** Without [leaked] rules: the load statistics of the pass over the (last)
 * dump, and its lines skipped for `reason`, so a front end can say that it
 * was damaged (as hscope_tally_stats()).  With [leaked] rules the diff's
 * warnings say it: HSCOPE_ERR_NOT_FOUND, and 0. */
HSCOPE_API hscope_status hscope_check_stats(const hscope_check_t *check,
                                            hscope_load_stats *stats);
HSCOPE_API uint64_t hscope_check_skipped(const hscope_check_t *check, int32_t reason);

/**
 * Write a check: text (the rules over budget first, each with how much it
 * exceeds its limit by, then those within; a last line with the verdict)
 * or JSON (kind "check", docs/JSON.md).  Every rule is written (`top` does
 * not apply).  The dumps are named by opts->dump_names, else their paths.
 */
HSCOPE_API hscope_status hscope_check_write(const hscope_check_t *check,
                                            const hscope_report_options *opts,
                                            hscope_write_fn write, void *user_data,
                                            hscope_error *err);

/* ------------------------------------------------------------------ */
/* Memory a handle holds (since 0.3)                                   */
/* ------------------------------------------------------------------ */

/**
 * The bytes a result holds, as its allocator sees them: every block it
 * owns (the size asked for and the library's per-block header), so that
 * freeing the result gives exactly this much back to the allocator of its
 * heap (hscope_load_options.allocator) or of its own load.  A garbage
 * collected host reports it to its collector (the Ruby gem does, through
 * rb_gc_adjust_memory_usage and ObjectSpace.memsize_of).  0 for NULL.
 *
 * A tally, diff, dominator tree, paths, holders or suspects result of a
 * loaded heap is allocated with the heap's allocator, and is not counted
 * in hscope_load_stats.model_bytes; a dominator tree counts its children
 * once a call has built them.  A suspects result counts its own dominator
 * tree, paths and holders, not the diff it refers to.  Thread-safe on a
 * result no call is modifying.
 */
HSCOPE_API uint64_t hscope_tally_memory(const hscope_tally_t *tally);
HSCOPE_API uint64_t hscope_diff_memory(const hscope_diff_t *diff);
HSCOPE_API uint64_t hscope_domtree_memory(const hscope_domtree_t *tree);
HSCOPE_API uint64_t hscope_paths_memory(const hscope_paths_t *paths);
HSCOPE_API uint64_t hscope_holders_memory(const hscope_holders_t *holders);
HSCOPE_API uint64_t hscope_suspects_memory(const hscope_suspects_t *suspects);
HSCOPE_API uint64_t hscope_waste_memory(const hscope_waste_t *waste);
HSCOPE_API uint64_t hscope_timeline_memory(const hscope_timeline_t *timeline);

#ifdef __cplusplus
}
#endif

#endif /* HEAPSCOPE_H */
