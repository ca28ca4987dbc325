/*
 * writer.h - the report layer's building blocks: buffered output to a
 * caller's write function, a streaming JSON writer, text tables and number
 * formats.  Every writer of the library (text, JSON, CSV, DOT, SVG, HTML)
 * is built on these, so that the CLI, the Ruby gem and FFI callers get
 * the same bytes.
 *
 * Layering: report may use everything below it (core ... analysis) and
 * the public accessors; nothing below it includes this header.
 */
#ifndef HSCOPE_REPORT_WRITER_H
#define HSCOPE_REPORT_WRITER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "../analysis/analysis.h"

/* ------------------------------------------------------------------ */
/* Buffered output                                                     */
/* ------------------------------------------------------------------ */

/*
 * Output to a hscope_write_fn through a fixed buffer.  Errors are sticky:
 * after the first failed write nothing more is written and
 * hscope__out_finish() returns HSCOPE_ERR_IO (first error wins), so writers
 * need not check every call.
 */
typedef struct hscope__out {
    hscope_write_fn write;
    void *user_data;
    hscope_error *err;
    hscope_status status;
    size_t len;
    uint64_t total;          /* bytes passed to write so far */
    char buf[8192];
} hscope__out;

void hscope__out_init(hscope__out *o, hscope_write_fn write, void *user_data,
                      hscope_error *err);
void hscope__out_write(hscope__out *o, const void *p, size_t n);
void hscope__out_puts(hscope__out *o, const char *s);
void hscope__out_putc(hscope__out *o, int c);
void hscope__out_printf(hscope__out *o, const char *fmt, ...) HS_PRINTF(2, 3);
void hscope__out_vprintf(hscope__out *o, const char *fmt, va_list ap);
/* n copies of byte c. */
void hscope__out_fill(hscope__out *o, int c, size_t n);
/* Flush; HSCOPE_OK or the first error. */
hscope_status hscope__out_finish(hscope__out *o);

/* The decimal digits of v written backwards so that they end just before
 * `end` (at most 20 bytes); returns the first digit. */
char *hscope__u64_digits(char *end, uint64_t v);

/* A write function that appends to a growable buffer (for writers that
 * embed another writer's output, e.g. an SVG chart in the HTML report). */
typedef struct hscope__membuf {
    hscope__mem *mem;
    char *data;
    size_t len, cap;
    int failed;
} hscope__membuf;
int32_t hscope__membuf_write(void *user_data, const char *data, uint64_t len);
void hscope__membuf_free(hscope__membuf *b);

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

/* A caller's report options, checked and completed with the defaults. */
typedef struct hscope__ropts {
    int32_t format;          /* HSCOPE_FORMAT_*, never 0 */
    uint32_t flags;
    uint32_t width;
    uint64_t top;            /* UINT64_MAX: all */
    uint32_t depth;
    uint32_t max_paths;
    const char *const *dump_names;
    uint64_t dump_name_count;
} hscope__ropts;

/* Check a caller's options (NULL: defaults) against the formats a writer
 * supports (bit 1 << format). */
hscope_status hscope__ropts_read(const hscope_report_options *in,
                                 uint32_t formats, hscope__ropts *out,
                                 hscope_error *err);
#define HSCOPE__FMT(f) (1u << (f))

/* Name of dump i (as given in the options), or NULL. */
const char *hscope__ropts_dump_name(const hscope__ropts *o, uint64_t i);

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

/*
 * Streaming JSON writer.  Strings are escaped for '"', '\\' and control
 * bytes; other bytes pass through unchanged (dumps hold non-UTF-8 file
 * names; readers that decode with surrogateescape see the dump's bytes).
 * With `script_safe`, the output may sit inside an HTML <script>: '<', '>',
 * '&', '\'' and U+2028/2029 are \u-escaped and invalid UTF-8 becomes
 * \ufffd.
 */
typedef struct hscope__json {
    hscope__out *o;
    int depth;
    int pretty;
    int script_safe;
    int after_key;
    unsigned char first[64];  /* per level: no element written yet */
} hscope__json;

void hscope__json_init(hscope__json *w, hscope__out *o, int pretty);
void hscope__json_obj(hscope__json *w);
void hscope__json_end_obj(hscope__json *w);
void hscope__json_arr(hscope__json *w);
void hscope__json_end_arr(hscope__json *w);
void hscope__json_key(hscope__json *w, const char *k);
void hscope__json_str(hscope__json *w, const char *s);        /* NULL: null */
void hscope__json_strn(hscope__json *w, const char *s, size_t n);
void hscope__json_u64(hscope__json *w, uint64_t v);
void hscope__json_i64(hscope__json *w, int64_t v);
void hscope__json_f64(hscope__json *w, double v, int decimals); /* NaN: null */
void hscope__json_bool(hscope__json *w, int v);
void hscope__json_null(hscope__json *w);
void hscope__json_addr(hscope__json *w, uint64_t a);          /* "0x..." */
/* A raw, already valid JSON value (e.g. a record from the dump). */
void hscope__json_raw(hscope__json *w, const char *s, size_t n);
void hscope__json_done(hscope__json *w);                      /* newline */

/* Shorthands: key + value. */
void hscope__json_kstr(hscope__json *w, const char *k, const char *s);
void hscope__json_ku64(hscope__json *w, const char *k, uint64_t v);
/* "key": {"count": n, "memsize": m} */
void hscope__json_kcm(hscope__json *w, const char *k, uint64_t count,
                      uint64_t memsize);

/* The head every JSON document starts with: {"kind": kind,
 * "heapscope_version": "..." (the object stays open). */
void hscope__json_begin_doc(hscope__json *w, const char *kind);

/* ------------------------------------------------------------------ */
/* Text                                                                */
/* ------------------------------------------------------------------ */

/* 100 * part / whole; 0 when whole is 0 */
double hscope__pct(uint64_t part, uint64_t whole);
/* 12,345 */
void hscope__fmt_count(uint64_t v, char *buf, size_t n);
/* "1.5 MB" (binary units, 1 KB = 1024 B); negative values with '-'. */
void hscope__fmt_bytes(double b, char *buf, size_t n);
/* "1 object", "2 objects" ("%s %s" of the grouped count and the word). */
void hscope__fmt_plural(uint64_t v, const char *one, const char *many,
                        char *buf, size_t n);

/*
 * Text tables.  Every table has one key column (left-aligned, first) and
 * numeric columns of fixed width (right-aligned).  The key column is as
 * wide as the widest key (at least its title), but the whole line does not
 * exceed the writer's width: a longer key is cut (hscope__key_fit) so that
 * rows stay apart and the class stays whole.  A key that is no path (a
 * class, a type, a method) is never cut: the column grows for it.
 */
#define HSCOPE__TABLE_MAX_COLS 12

#define HSCOPE__TABLE_MAX_LEADS 3

typedef struct hscope__table {
    hscope__out *o;
    const char *key_title;
    size_t key_width;        /* display columns of the key column */
    int ncols;
    const char *titles[HSCOPE__TABLE_MAX_COLS];
    int widths[HSCOPE__TABLE_MAX_COLS];
    int nleads;              /* left-aligned columns before the key */
    const char *lead_titles[HSCOPE__TABLE_MAX_LEADS];
    int lead_widths[HSCOPE__TABLE_MAX_LEADS];
    size_t width;            /* the whole line, in columns */
    int ascii;
    int indent;              /* spaces before every row (header: 0) */
    int fitted;
    const char *tail_title;  /* a last, unaligned column (NULL: none) */
    int tail_width;          /* columns it may take */
    size_t key_min;          /* columns no key can be cut below */
    const char *prefix;      /* the rows' common directory (elided when a key is cut) */
    size_t prefix_len;       /* bytes, ending with '/'; 0: none */
    uint64_t nkeys;
    const char *const *keys; /* the rows' keys, or key_of(ctx, i); both NULL: unknown */
    const char *(*key_of)(const void *ctx, uint64_t i);
    const void *ctx;
} hscope__table;

/* Start a table: `keys[0..nkeys)` are the keys of the rows to come, used
 * only to size the key column (NULL: the title's width, cut to fit). */
void hscope__table_init(hscope__table *t, hscope__out *o,
                        const hscope__ropts *ro, const char *key_title,
                        const char *const *keys, size_t nkeys);
/* Sizing from a function (key of row i), for results with accessors. */
void hscope__table_init_fn(hscope__table *t, hscope__out *o,
                           const hscope__ropts *ro, const char *key_title,
                           const char *(*key_of)(const void *ctx, uint64_t i),
                           const void *ctx, uint64_t nkeys);
/* Add a numeric column (before the header is written). */
void hscope__table_col(hscope__table *t, const char *title, int width);
/* Add a left-aligned column of fixed width before the key (an address,
 * a type name); a longer cell is cut in the middle. */
void hscope__table_lead(hscope__table *t, const char *title, int width);
/* Fit the key column to the width (the header does it; a table without
 * a header calls this before its first row). */
void hscope__table_fit(hscope__table *t);
void hscope__table_header(hscope__table *t);
/* One row: the key, then ncols cells, already formatted. */
void hscope__table_row(hscope__table *t, const char *key,
                       const char *const *cells);
/* One row with nleads lead cells first. */
void hscope__table_row_lead(hscope__table *t, const char *const *leads,
                            const char *key, const char *const *cells);
/* A last column of free text (a trend, a bar), left-aligned after two
 * spaces, reserved `width` display columns when the table is sized
 * (before the header is written). */
void hscope__table_tail(hscope__table *t, const char *title, int width);
/* A row with a mark in its indent (" * " for a growing group; the indent
 * must be wider than the mark + 1; NULL: none), its lead cells (NULL:
 * none) and the tail text (NULL: none). */
void hscope__table_row_ex(hscope__table *t, const char *mark, const char *const *leads,
                          const char *key, const char *const *cells, const char *tail);
/* Write `s` cut in the middle to at most `cols` display columns, padded
 * with spaces to exactly `cols` when pad. */
/* Write a group key in `cols` columns (padded when pad), cut only where
 * a cut keeps rows apart: a key that is no path (class, type, method) is
 * never cut; a path key keeps its file name, line and class whole, drops
 * `prefix` (the rows' common directory, prefix_len bytes; 0: none) first,
 * then the middle of its directories, keeping their end. */
void hscope__key_fit(hscope__out *o, const char *s, size_t cols, int pad, int ascii,
                     const char *prefix, size_t prefix_len);
/* Columns a key cannot be cut below (its whole width when it is no path). */
size_t hscope__key_min_cols(const char *s, int ascii);
void hscope__text_fit(hscope__out *o, const char *s, size_t cols, int pad,
                      int ascii);

/* ------------------------------------------------------------------ */
/* Shared pieces (common.c)                                            */
/* ------------------------------------------------------------------ */

/* One CSV field (RFC 4180): quoted when needed, invalid UTF-8 replaced by
 * U+FFFD; NULL writes an empty, unquoted field (NULL for COPY). */
void hscope__csv_field(hscope__out *o, const char *s);

/* "dumps": [{"path": name 0 or null, "objects": N}] for a result of one
 * heap (h may be NULL: `objects` is used). */
void hscope__json_dumps_of_heap(hscope__json *w, const hscope__ropts *ro,
                                const hscope_heap_t *h, uint64_t objects);
/* One {"path", "objects"} element of "dumps". */
void hscope__json_dump(hscope__json *w, const char *name, uint64_t objects);

/*
 * Warnings of a result, gathered once and written the same way in text
 * ("warning: MESSAGE" lines) and JSON ("warnings": [{"code", "message"}]).
 * Codes (docs/JSON.md): skipped_lines, truncated, no_tracing, partial,
 * compaction, different_process, repeated, backwards.
 */
#define HSCOPE__MAX_WARNINGS 24
typedef struct hscope__warning {
    const char *code;
    char message[480];
} hscope__warning;
typedef struct hscope__warnings {
    int n;
    hscope__warning w[HSCOPE__MAX_WARNINGS];
} hscope__warnings;

void hscope__warn(hscope__warnings *ws, const char *code, const char *fmt, ...)
    HS_PRINTF(3, 4);
/* A damaged dump (load statistics and skip counts): skipped lines, cut
 * short.  `name` (may be NULL) starts each message. */
void hscope__warn_damage(hscope__warnings *ws, const char *name,
                         const hscope_load_stats *s,
                         const uint64_t skipped[HSCOPE_SKIP__COUNT]);
/* The messages of hscope__warn_damage() as lines of text into buf (n
 * bytes, as snprintf); the whole text's length (hscope_load_warnings_text). */
uint64_t hscope__load_warnings_text(const char *name, const hscope_load_stats *s,
                                    const uint64_t skipped[HSCOPE_SKIP__COUNT], char *buf,
                                    size_t n);
void hscope__warn_heap(hscope__warnings *ws, const char *name, const hscope_heap_t *h);
void hscope__warn_tally(hscope__warnings *ws, const char *name, const hscope_tally_t *t);
/* Every line of a diff's warning text, with its code. */
void hscope__warn_diff(hscope__warnings *ws, const hscope_diff_t *d);
/* Every line of a warning text, each with the code of its
 * HSCOPE_DIFF_WARN_* bit code_of(ctx, line) ("warning" for 0). */
void hscope__warn_coded(hscope__warnings *ws, const char *text,
                        uint32_t (*code_of)(const void *ctx, uint32_t line), const void *ctx);
/* "warnings": [...] */
void hscope__json_warnings(hscope__json *w, const hscope__warnings *ws);
/* "warning: MESSAGE" lines (none with HSCOPE_REPORT_NO_WARNINGS). */
void hscope__text_warnings(hscope__out *o, const hscope__ropts *ro,
                           const hscope__warnings *ws);
/* "left out: N objects allocated by the dumper itself" (nothing for 0). */
void hscope__text_excluded(hscope__out *o, uint64_t n);
/* "left out: the allocation tracer (…), N objects, SIZE" (nothing for 0). */
void hscope__text_excluded_tracer(hscope__out *o, uint64_t n, uint64_t memsize);

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

/* Name of a root category, "(roots)" for the super-root (-1). */
const char *hscope__root_name(const hscope_heap_t *h, int32_t cat);
/* The type name of an object ("STRING"). */
const char *hscope__type_name(const hscope_heap_t *h, hscope_id id);
/* "TYPE label" of an object, as text prints it ("CLASS PostsController"). */
void hscope__obj_text(const hscope_heap_t *h, hscope_id id, char *buf, size_t n);
/* The members of an object reference, in an open JSON object: "address",
 * "type", "class" (the class label), "label" (the object's own name). */
void hscope__json_objref_fields(hscope__json *w, const hscope_heap_t *h, hscope_id id);
/* {"address", "type", "class", "label"} */
void hscope__json_objref(hscope__json *w, const hscope_heap_t *h, hscope_id id);
/* [objref, ...] of ids[0..n) */
void hscope__json_objrefs(hscope__json *w, const hscope_heap_t *h, const hscope_id *ids,
                          uint64_t n);
/* 1 if s[0..n) is one JSON value (syntax only; nesting up to 64). */
int hscope__json_valid(const char *s, size_t n);

/* ------------------------------------------------------------------ */
/* Writers (one w_<result>.c each)                                     */
/* ------------------------------------------------------------------ */

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
/* Children of an object (id) or of a root category / the super-root (id
 * HSCOPE_ID_NONE, cat), largest retained first, ties by address; *out
 * from the heap's allocator (hscope__free it). */
hscope_status hscope__dom_sorted_kids(hscope_domtree_t *t, hscope_id id, int32_t cat,
                                      hscope_id **out, uint64_t *n, hscope_error *err);
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

/* ------------------------------------------------------------------ */
/* SVG charts (svg.c)                                                  */
/* ------------------------------------------------------------------ */

/* XML character data: escapes & < > " ', and replaces bytes that are not
 * valid UTF-8 or not XML characters with U+FFFD (NULL: nothing). */
void hscope__xml_escape(hscope__out *o, const char *s);

typedef struct hscope__svg_line {
    const char *label;   /* group key */
    const double *y;     /* npoints values */
    int highlight;       /* growing: coloured and thick; else grey */
    const char *note;    /* shown after the label in the legend, or NULL */
} hscope__svg_line;

typedef struct hscope__svg_lines_chart {
    hscope__mem *mem;          /* for the chart's scratch */
    const char *title;
    const char *subtitle;
    const char *y_label;       /* e.g. "memsize" or "objects" */
    int y_bytes;               /* format the value axis as B/KB/MB/GB */
    size_t npoints;
    const double *x;           /* epoch seconds per point, or NULL: steps */
    const char *const *point_names; /* per point (tooltips), or NULL */
    const hscope__svg_line *lines;
    size_t nlines;
    size_t more;               /* groups not plotted (noted in legend) */
} hscope__svg_lines_chart;

typedef struct hscope__svg_bar {
    const char *label;
    uint64_t memsize;
    uint64_t count;
} hscope__svg_bar;

typedef struct hscope__svg_bars_chart {
    const char *title;
    const char *subtitle;
    const hscope__svg_bar *bars;
    size_t nbars;
    uint64_t total_memsize;    /* for the % column; 0: not shown */
    uint64_t total_count;
} hscope__svg_bars_chart;

/* A self-contained SVG document (1120 px wide). */
void hscope__svg_lines(hscope__out *o, const hscope__svg_lines_chart *c);
void hscope__svg_bars(hscope__out *o, const hscope__svg_bars_chart *c);

/* ------------------------------------------------------------------ */
/* Export (export.c)                                                   */
/* ------------------------------------------------------------------ */

typedef struct hscope__ex_dump {
    char *path;                 /* as given (a copy) */
    uint64_t id;                /* dump_id */
    int has_time;
    double time;
    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
} hscope__ex_dump;

#define HSCOPE__PATH_MAX 4096

struct hscope_export {
    hscope__mem mem;
    int32_t format;             /* HSCOPE_FORMAT_CSV or _JSONL */
    uint64_t first_id;
    char *dir;                  /* as given */
    char absdir[HSCOPE__PATH_MAX];
    hscope__order order;
    hscope__ex_dump *d;         /* time order */
    uint64_t nd;
    uint64_t objects, references;
};

hscope_status hscope__export_files(hscope_export_t **out, const char *const *paths,
                                   uint64_t n, const char *dir,
                                   const hscope_load_options *lo,
                                   const hscope_export_options *o, hscope_error *err);
void hscope__export_free(hscope_export_t *ex);
hscope_status hscope__export_write(const hscope_export_t *ex, const hscope__ropts *ro,
                                   hscope__out *o);

/* ------------------------------------------------------------------ */
/* Redaction (redact.c): a copy of a dump safe to share                 */
/* ------------------------------------------------------------------ */

struct hscope_redaction {
    hscope__mem mem;
    uint64_t lines, values, kept;
    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
};

/* The bodies of hscope_redact_write() and hscope_redact() (options
 * checked). */
hscope_status hscope__redact_to(hscope_redact_t **out, const char *in,
                                const hscope_load_options *lo, const hscope_redact_options *ro,
                                hscope_write_fn write, void *ud, hscope_error *err);
hscope_status hscope__redact_file(hscope_redact_t **out, const char *in, const char *path,
                                  const hscope_load_options *lo,
                                  const hscope_redact_options *ro, hscope_error *err);
void hscope__redact_free(hscope_redact_t *rr);

#endif
