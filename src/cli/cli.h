/*
 * cli.h - declarations shared by the CLI's "memory over time" commands
 * (timeline.c, export.c, svg.c) and the main dispatcher (heapscope.c).
 *
 *   heapscope timeline  [--by KEY] [--metric memsize|count] ... DUMP...
 *   heapscope histogram [--by type|class] [--top N] [--svg FILE] DUMP
 *   heapscope export    --format csv|jsonl --out DIR DUMP...
 *
 * Every hscope_cli_* command takes the whole argv (argv[1] is the command
 * name, options start at argv[2]) and returns the process exit status:
 * 0 success, 1 bad input, 2 usage error.
 */
#ifndef HSCOPE_CLI_CLI_H
#define HSCOPE_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heapscope/heapscope.h"

#define HSCOPE_CLI_EXIT_BAD_INPUT 1
#define HSCOPE_CLI_EXIT_USAGE 2

/* Commands (the dispatcher calls these). */
int hscope_cli_timeline(int argc, char **argv);
int hscope_cli_histogram(int argc, char **argv);
int hscope_cli_export(int argc, char **argv);

/* ------------------------------------------------------------------ */
/* Shared helpers (defined in timeline.c)                             */
/* ------------------------------------------------------------------ */

/* Print "heapscope: <fmt with arg>" and the usage text on stderr; returns
 * HSCOPE_CLI_EXIT_USAGE. */
int hscope_cli_usage_error(const char *usage, const char *fmt, const char *arg);

/* Print usage (and the load options) on stdout if argv has -h/--help. */
int hscope_cli_want_help(int argc, char **argv, const char *usage);

/* "123", "64K", "2M", "1G" -> bytes; -1 when malformed. */
int hscope_cli_parse_size(const char *s, uint64_t *out);

/* Parse the common load options (--strict, --max-line, --max-memory,
 * --no-progress) at argv[*i]: 1 consumed, 0 not a load option, -1 usage
 * error (already reported). */
int hscope_cli_load_option(hscope_load_options *lo, int argc, char **argv,
                           int *i, const char *usage);

/* "1.5 MB"-style text for a byte count (binary units: 1 KB = 1024 B). */
void hscope_cli_human_bytes(double b, char *buf, size_t n);

/* 12,345 */
void hscope_cli_grouped(uint64_t v, char *buf, size_t n);

/* An address argument: hex with 0x (0x7f2a...), surrounding whitespace
 * allowed; 0, or -1 when it is anything else (a decimal number, no 0x). */
int hscope_cli_parse_address(const char *s, uint64_t *out);
/* The usage error for an argument that is not an address; returns 2. */
int hscope_cli_bad_address(const char *usage, const char *arg);

/* Each line of a warning text as "heapscope: warning: LINE" on stderr. */
void hscope_cli_warn_text(const char *text);
/* "heapscope: warning: PATH: N of M lines skipped (reason count, ...); the
 * dump is truncated" on stderr, once, when a dump was damaged or partly
 * skipped (from its load statistics, whether parsed, streamed or opened
 * from a saved index); nothing otherwise. */
void hscope_cli_warn_damage(const char *path, const hscope_load_stats *s,
                            const uint64_t skipped[HSCOPE_SKIP__COUNT]);
void hscope_cli_warn_heap_damage(const char *path, const hscope_heap_t *h);
void hscope_cli_warn_tally_damage(const char *path, const hscope_tally_t *t);
/* "left out: N objects allocated by the dumper itself" (nothing for 0). */
void hscope_cli_dumper_note(FILE *f, uint64_t n);

/* The tally keys timeline/histogram/export accept. */
int hscope_cli_valid_key(const char *by);

/* hscope_write_fn to standard output. */
int32_t hscope_cli_write_stdout(void *user_data, const char *data, uint64_t len);

/* Columns for text output: the terminal's width when standard output is
 * one, else $COLUMNS, else 100. */
uint32_t hscope_cli_width(void);

/* When standard output is a terminal, route it through a filter that
 * prints control bytes (C0 but '\n' and '\t', DEL, C1) as \xHH, so that
 * strings from a dump cannot send escape sequences (tty.c). */
void hscope_cli_guard_terminal(void);

/* ------------------------------------------------------------------ */
/* Ordering dumps in time (defined in timeline.c)                     */
/* ------------------------------------------------------------------ */

/*
 * The rules (docs/TIMELINE.md, "How dumps are ordered"), in this order:
 *  1. name-time, time source "datetime": every basename holds a date and
 *     time, YYYY-MM-DD[T_ -.]HH[:-.]MM[:-.]SS or YYYYMMDD[T_-.]HHMMSS
 *     (or a date alone, meaning midnight), years 2000-2099, read as UTC;
 *  2. name-time, "epoch": every basename holds a run of 9-11 digits that is
 *     a plausible epoch in seconds, or 12-14 digits that is one in
 *     milliseconds (both between 2000-01-01 and 2100-01-01); the last such
 *     run of a name counts;
 *  3. name-time, "sequence": every basename ends in a number (the last run
 *     of digits: step_03.json -> 3, heapscope.4242.7.json.gz -> 7,
 *     heap.json.12 -> 12);
 *  4. mtime: the files' modification times;
 *  5. given: the command-line order.
 * A rule applies only if it yields pairwise distinct values for all dumps.
 * Times are known (slopes per hour) for datetime, epoch and mtime.
 */
#define HSCOPE_CLI_ORDER_NAME_TIME 0
#define HSCOPE_CLI_ORDER_MTIME 1
#define HSCOPE_CLI_ORDER_GIVEN 2

typedef struct hscope_cli_dump {
    const char *path;  /* as given on the command line */
    int given;         /* position on the command line, 0-based */
    int has_time;      /* time is known (epoch seconds, UTC) */
    double time;
    uint64_t seq;      /* the sort key actually used */
} hscope_cli_dump;

typedef struct hscope_cli_order {
    int order;          /* HSCOPE_CLI_ORDER_* */
    const char *name;   /* "name-time", "mtime" or "given" */
    const char *source; /* "datetime", "epoch", "epoch-ms", "sequence",
                           "mtime" or "given" */
    int times_known;
} hscope_cli_order;

/*
 * Sort dumps[0..n) in time order.  `force` is NULL or "auto" (the rules
 * above), "name" (rules 1-3 only), "mtime" or "given".  Returns 0, or -1
 * with a message in errbuf when a forced rule cannot be applied.
 */
int hscope_cli_order_dumps(hscope_cli_dump *dumps, size_t n, const char *force,
                           hscope_cli_order *out, char *errbuf, size_t errlen);

/* Basename of a path (pointer into it). */
const char *hscope_cli_basename(const char *path);

/* ------------------------------------------------------------------ */
/* SVG charts (defined in svg.c)                                      */
/* ------------------------------------------------------------------ */

typedef struct hscope_svg_line {
    const char *label;   /* group key */
    const double *y;     /* npoints values */
    int highlight;       /* growing: coloured and thick; else grey */
    const char *note;    /* shown after the label in the legend, or NULL */
} hscope_svg_line;

typedef struct hscope_svg_lines_chart {
    const char *title;
    const char *subtitle;
    const char *y_label;       /* e.g. "memsize" or "objects" */
    int y_bytes;               /* format the value axis as B/KB/MB/GB */
    size_t npoints;
    const double *x;           /* epoch seconds per point, or NULL: steps */
    const char *const *point_names; /* per point (tooltips), or NULL */
    const hscope_svg_line *lines;
    size_t nlines;
    size_t more;               /* groups not plotted (noted in legend) */
} hscope_svg_lines_chart;

typedef struct hscope_svg_bar {
    const char *label;
    uint64_t memsize;
    uint64_t count;
} hscope_svg_bar;

typedef struct hscope_svg_bars_chart {
    const char *title;
    const char *subtitle;
    const hscope_svg_bar *bars;
    size_t nbars;
    uint64_t total_memsize;    /* for the % column; 0: not shown */
    uint64_t total_count;
} hscope_svg_bars_chart;

/* Write a self-contained SVG document; 0 on success, -1 on write error. */
int hscope_svg_write_lines(FILE *f, const hscope_svg_lines_chart *c);
int hscope_svg_write_bars(FILE *f, const hscope_svg_bars_chart *c);

/* Copy s to f as XML character data: escapes & < > " ', replaces bytes
 * that are not valid UTF-8 or not XML characters with U+FFFD. */
void hscope_svg_escape(FILE *f, const char *s);

#endif
