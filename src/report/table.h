/*
 * table.h - text tables that fit a width, middle cuts and number
 * formats (table.c).
 */
#ifndef HSCOPE_REPORT_TABLE_H
#define HSCOPE_REPORT_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"

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

#endif
