/*
 * cli.h - declarations shared by the CLI's commands: the "memory over
 * time" commands (cmd_timeline.c, cmd_histogram.c, cmd_export.c,
 * cmd_grew.c), the HTML report (report.c) and the main dispatcher
 * (heapscope.c); the helpers are in cli_util.c.
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
/* Shared helpers (cli_util.c)                                        */
/* ------------------------------------------------------------------ */

/* Print "heapscope: <fmt with arg>" and the usage text on stderr; returns
 * HSCOPE_CLI_EXIT_USAGE. */
int hscope_cli_usage_error(const char *usage, const char *fmt, const char *arg);


/* "123", "64K", "2M", "1G" -> bytes; -1 when malformed. */
int hscope_cli_parse_size(const char *s, uint64_t *out);

/* Parse the common load options (--strict, --max-line, --max-memory,
 * --no-progress) at argv[*i]: 1 consumed, 0 not a load option, -1 usage
 * error (already reported). */
int hscope_cli_load_option(hscope_load_options *lo, int argc, char **argv,
                           int *i, const char *usage);

/* "1.5 MB"-style text for a byte count (binary units: 1 KB = 1024 B):
 * the library's hscope_format_bytes. */
void hscope_cli_human_bytes(double b, char *buf, size_t n);

/* 12,345: the library's hscope_format_count. */
void hscope_cli_grouped(uint64_t v, char *buf, size_t n);

/* An address argument: hex with 0x (0x7f2a...), surrounding whitespace
 * allowed; 0, or -1 when it is anything else (a decimal number, no 0x). */
int hscope_cli_parse_address(const char *s, uint64_t *out);
/* The usage error for an argument that is not an address; returns 2. */
int hscope_cli_bad_address(const char *usage, const char *arg);

/* Each line of a warning text as "heapscope: warning: LINE" on stderr. */
void hscope_cli_warn_text(const char *text);
/* The library's damage warnings (hscope_load_warnings_text) on stderr,
 * "heapscope: warning: PATH: N of M lines skipped (reason count, ...)" and
 * "heapscope: warning: PATH: the dump is truncated (...)", once, when a
 * dump was damaged or partly skipped (from its load statistics, whether
 * parsed, streamed or opened from a saved index); nothing otherwise. */
void hscope_cli_warn_damage(const char *path, const hscope_load_stats *s,
                            const uint64_t skipped[HSCOPE_SKIP__COUNT]);
void hscope_cli_warn_heap_damage(const char *path, const hscope_heap_t *h);
void hscope_cli_warn_tally_damage(const char *path, const hscope_tally_t *t);

/* 1 when `by` is a tally key, as the library decides (hscope_tally_compute
 * refuses any other with HSCOPE_ERR_UNSUPPORTED); else 0. */
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
/* Memory over time: timeline, histogram, export (cli_util.c)         */
/* ------------------------------------------------------------------ */

/* hscope_write_fn into a FILE * (user_data). */
int32_t hscope_cli_write_file(void *user_data, const char *data, uint64_t len);

/* HSCOPE_REPORT_ASCII when the locale (LC_ALL, LC_CTYPE, LANG) is not
 * UTF-8: "..." for a cut key, ASCII sparklines. */
void hscope_cli_ascii(hscope_report_options *ro);

/* Open `path` for writing (NULL: stdout); NULL after saying why. */
FILE *hscope_cli_open_out(const char *path);
/* Close what hscope_cli_open_out() opened after a writer returned `st`
 * (its error in err): 0, or 1 after saying what went wrong. */
int hscope_cli_close_out(FILE *f, const char *path, hscope_status st,
                         const hscope_error *err);

/* A library writer on an untyped result (a two-line adapter per type). */
typedef hscope_status (*hscope_cli_writer)(const void *result, const hscope_report_options *ro,
                                           hscope_write_fn write, void *user_data,
                                           hscope_error *err);
/* Write `result` to stdout with `ro`, then, when svg_path is not NULL, as
 * SVG to that file: 0, or 1 after saying what went wrong. */
int hscope_cli_write_result(hscope_cli_writer fn, const void *result, hscope_report_options *ro,
                            const char *svg_path);

/* A timeline's warnings on stderr: each damaged dump (as every command
 * says it), then the series checks. */
void hscope_cli_warn_timeline(const hscope_timeline_t *tl);

#endif
