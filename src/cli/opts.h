/*
 * opts.h - the one parser of the options every heapscope command shares,
 * the loading of a dump (saved index, progress bar), and the commands of
 * one file each (cmd_<name>.c).
 *
 * Shared options, accepted by every command that loads a dump:
 *   load options  --strict, --max-line BYTES, --max-memory BYTES
 *   --threads N   parser threads (1-64)
 *   --no-index    ignore DUMP.hsx
 *   -v, --verbose say whether an index was used
 *   --no-progress no progress bar
 *   --json        (commands that declare HSCOPE_CLI_JSON)
 *   --top N       (commands that declare HSCOPE_CLI_TOP)
 * A command on which one of them has no effect accepts it and says so in
 * its --help; --json and --top given to a command without them are usage
 * errors that say what the command has instead.
 *
 * Usage from a command:
 *
 *     hscope_cli_opts o;
 *     hscope_cli_opts_init(&o, "tally", usage_tally, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 20);
 *     for (int i = 2; i < argc; i++) {
 *         int r = hscope_cli_opts_parse(&o, argc, argv, &i);
 *         if (r < 0) return HSCOPE_CLI_EXIT_USAGE;
 *         if (r > 0) continue;
 *         ... the command's own options and operands ...
 *     }
 */
#ifndef HSCOPE_CLI_OPTS_H
#define HSCOPE_CLI_OPTS_H

#include <stdint.h>

#include "cli.h"

/* Options a command declares beyond the load options. */
#define HSCOPE_CLI_JSON 0x1u /* --json */
#define HSCOPE_CLI_TOP  0x2u /* --top N (0 = all) */

typedef struct hscope_cli_progress {
    double t0;
    int shown;
    const char *name;
} hscope_cli_progress;

typedef struct hscope_cli_opts {
    const char *cmd;         /* command name, for messages */
    const char *usage;       /* its --help text (usage errors repeat it) */
    uint32_t accepts;        /* HSCOPE_CLI_* */
    hscope_load_options lo;  /* --strict, --max-line, --max-memory, --threads */
    int progress;            /* 0 after --no-progress */
    int no_index, verbose;
    int json;                /* --json given */
    int top_given;
    uint64_t top;            /* --top N; HSCOPE_TOP_ALL for 0 */
    int from_index;          /* hscope_cli_load(): the model came from DUMP.hsx */
    hscope_cli_progress pr;
} hscope_cli_opts;

/* Defaults: load options as the library's, progress on, --top default_top. */
void hscope_cli_opts_init(hscope_cli_opts *o, const char *cmd, const char *usage,
                          uint32_t accepts, uint64_t default_top);

/* Parse a shared option at argv[*i] (advancing *i past its value): 1 if
 * consumed, 0 if it is not a shared option, -1 on a usage error (already
 * reported on stderr with the usage text). */
int hscope_cli_opts_parse(hscope_cli_opts *o, int argc, char **argv, int *i);

/*
 * The whole command line of a command: argv[2..] through
 * hscope_cli_opts_parse(), then the command's own `option` (may be NULL),
 * called with *i at an argument: 1 if it took it (advancing *i past a
 * value), 0 if it is not the command's, or HSCOPE_CLI_EXIT_USAGE after
 * saying why.  Any other argument starting with '-' (but "-") is an
 * unknown option; the rest are operands, collected in operands[0..n)
 * (the caller gives room for argc entries), at most `max` of them (0: any
 * number; one more is a usage error naming it with `extra`, a format with
 * one %s).  Returns 0 or the exit status of a usage error (said).
 */
typedef struct hscope_cli_args {
    int (*option)(void *ctx, int argc, char **argv, int *i);
    void *ctx;
    const char **operands;
    int n, max;
    const char *extra;
    int dashdash;            /* 1: "--" ends the options (the rest are operands) */
} hscope_cli_args;

int hscope_cli_parse_args(hscope_cli_opts *o, hscope_cli_args *a, int argc, char **argv);

/* --order RULE: "auto", "name", "mtime", "given" -> HSCOPE_ORDER_*; -1 for
 * anything else. */
int hscope_cli_parse_order(const char *v, int32_t *order);

/*
 * --by KEY (a tally key, hscope_cli_valid_key()) and --order RULE
 * (hscope_cli_parse_order()), the options of the commands over one or
 * more dumps, at argv[*i]: 1 taken (the value in *by or *order, *i past
 * it), 0 not one of them or one the command has not (`by` or `order`
 * NULL), or HSCOPE_CLI_EXIT_USAGE after saying why with `usage`.
 * Every command says the same of a bad value.
 */
int hscope_cli_by_order_option(int argc, char **argv, int *i, const char *usage,
                               const char **by, int32_t *order);

/* Print the usage text and the shared options on stdout if argv has -h or
 * --help before "--"; returns 1 then. */
int hscope_cli_help(int argc, char **argv, const char *usage);

/* Show the progress bar while loading `name` (stderr is a terminal and
 * --no-progress was not given); hscope_cli_progress_done() clears it. */
void hscope_cli_progress_start(hscope_cli_opts *o, const char *name);
void hscope_cli_progress_done(hscope_cli_opts *o);

/* Load a dump: a fresh DUMP.hsx is mapped instead (unless --no-index), a
 * stale or damaged one rebuilt after the parse; damage of the dump is said
 * on stderr.  NULL on failure (said on stderr). */
hscope_heap_t *hscope_cli_load(hscope_cli_opts *o, const char *path);

/* Report options for text or JSON on standard output: the terminal's
 * width, the dump names, warnings left to stderr in text (the CLI says
 * them there, as the load's damage). */
void hscope_cli_report_options(const hscope_cli_opts *o, hscope_report_options *ro,
                               const char *const *names, uint64_t nnames);

/*
 * The whole of a command that writes one loaded DUMP with a heap writer
 * (summary, generations): the arguments (DUMP the only operand), the
 * load, the output.  `json_flags` are added to the report flags with
 * --json; `json_all`: --json without --top writes every row.
 */
typedef hscope_status (*hscope_cli_heap_writer)(hscope_heap_t *heap,
                                                const hscope_report_options *opts,
                                                hscope_write_fn write, void *user_data,
                                                hscope_error *err);
int hscope_cli_heap_command(hscope_cli_opts *o, int argc, char **argv,
                            hscope_cli_heap_writer fn, uint32_t json_flags, int json_all);

/* Print "heapscope: [what: ]message" for a failed call; returns 1. */
int hscope_cli_fail(const char *what, const hscope_error *err);

/* Commands of one file each. */
int hscope_cli_summary(int argc, char **argv);
int hscope_cli_tally(int argc, char **argv);
int hscope_cli_diff(int argc, char **argv);
int hscope_cli_show(int argc, char **argv);
int hscope_cli_generations(int argc, char **argv);
int hscope_cli_dominators(int argc, char **argv);
int hscope_cli_retained(int argc, char **argv);
int hscope_cli_root(int argc, char **argv);
int hscope_cli_suspects(int argc, char **argv);
int hscope_cli_redact(int argc, char **argv);
int hscope_cli_index(int argc, char **argv);
int hscope_cli_waste(int argc, char **argv);
/* The HTML report (cmd_report.c; the page is the library's). */
int hscope_cli_report(int argc, char **argv);
int hscope_cli_check(int argc, char **argv);
/* The heap explorer in the browser (cmd_serve.c; the server is src/serve/). */
int hscope_cli_serve(int argc, char **argv);

/* Memory over time (cmd_grew.c): diff --grew, a
 * timeline of the dumps in the order given, in its "grew" view; `keep`:
 * HSCOPE_TIMELINE_KEEP_DUMPER and/or _KEEP_TRACER. */
int hscope_cli_diff_grew(const hscope_cli_opts *o, char **paths, int np, const char *by,
                         int32_t metric, uint32_t keep);

#endif
