/*
 * cmd_timeline.c - heapscope timeline: what grows over time.  Options in,
 * hscope_timeline_compute(), warnings to stderr, hscope_timeline_write()
 * to stdout (and to the --svg file).  docs/TIMELINE.md has the rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

static const char *prog = "heapscope";

static const char usage_timeline[] =
    "usage: heapscope timeline [--by KEY] [--metric memsize|count] [--top N]\n"
    "                          [--svg FILE] [--csv | --json] [--threads N]\n"
    "                          [--order auto|name|mtime|given] [--keep-dumper]\n"
    "                          [--keep-tracer] [load options] DUMP...\n"
    "\n"
    "What grows over time.  Each dump is folded into totals per group without\n"
    "building the object graph (memory bounded by the number of groups; dumps\n"
    "are read in parallel), the dumps are put in time order, and a least-\n"
    "squares line is fitted to each group's series.  A group is growing when\n"
    "there are at least 3 dumps, the slope is positive, R^2 >= 0.8, the last\n"
    "value is above the first, and the fitted rise over the series (slope x\n"
    "(dumps - 1)) is at least max(10 objects or 4 KB of memsize, 2% of the\n"
    "group's mean).  Growing groups come first, then by slope x R^2.\n"
    "\n"
    "  --by KEY        file:line:class (default), type, class, file, file:line,\n"
    "                  gem, method or generation\n"
    "  --metric WHAT   memsize (default) or count: the series that is fitted\n"
    "  --top N         groups to show (default 20; 0 = all)\n"
    "  --svg FILE      also write an SVG plot of the first groups (at most 12)\n"
    "  --csv           CSV, one row per group and dump:\n"
    "                  rank,key,step,dump,time,count,memsize,growing\n"
    "  --json          {\"kind\": \"timeline\", \"dumps\", \"groups\": [{\"key\", \"count\",\n"
    "                  \"memsize\", \"slope_per_step\", \"slope_per_hour\", \"r2\",\n"
    "                  \"growing\"}], \"warnings\"} (docs/JSON.md)\n"
    "  --keep-dumper   keep the objects the dumper itself allocated (default: left\n"
    "                  out of every dump and counted)\n"
    "  --keep-tracer   keep Ruby's allocation tracer (the table of\n"
    "                  trace_object_allocations, labelled <allocation tracer>;\n"
    "                  default: left out of every dump and counted)\n"
    "  --threads N     dumps folded at once, 1-64 (default: the number of cores;\n"
    "                  the cores are shared among their parsers)\n"
    "  --order HOW     auto (default), name, mtime or given\n"
    "  --no-index      accepted; no effect (the dumps are streamed, not indexed)\n"
    "  -v, --verbose   accepted; no effect\n"
    "  --              the arguments after it are dumps\n"
    "\n"
    "Dump order (auto), the first rule that gives every dump a distinct value:\n"
    "  name-time  a date-time (2024-05-01T12:00:00, 20240501-120000) or an\n"
    "             epoch (9-11 digits: seconds, 12-14 digits: milliseconds) in\n"
    "             every file name; else the last number in every name\n"
    "             (step_03.json -> 3, heapscope.PID.N.json.gz -> N)\n"
    "  mtime      the files' modification times\n"
    "  given      the order on the command line\n"
    "Slopes per hour are given when times are known (date-time, epoch, mtime).\n"
    "Consecutive dumps are checked as a series (stderr, JSON \"warnings\"): the\n"
    "same dump twice, dumps of different processes (< 5% of objects shared) and\n"
    "an order that runs backwards (newest generation or mtime going down).\n";

typedef struct tl_args {
    hscope_cli_opts o;
    hscope_timeline_options to;
    const char *svg;
    int csv;
    char **paths;
    size_t np;
} tl_args;

/* The command's own option at argv[*i]: 1 taken, 0 not ours, or a usage
 * error (said). */
static int
option(void *ctx, int argc, char **argv, int *i)
{
    tl_args *a = ctx;
    const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (strcmp(o, "--csv") == 0) {
        a->csv = 1;
        return 1;
    }
    if (strcmp(o, "--keep-dumper") == 0) {
        a->to.flags |= HSCOPE_TIMELINE_KEEP_DUMPER;
        return 1;
    }
    if (strcmp(o, "--keep-tracer") == 0) {
        a->to.flags |= HSCOPE_TIMELINE_KEEP_TRACER;
        return 1;
    }
    int r = hscope_cli_by_order_option(argc, argv, i, usage_timeline, &a->to.by, &a->to.order);
    if (r || (strcmp(o, "--metric") && strcmp(o, "--svg")))
        return r;
    if (!v)
        return hscope_cli_usage_error(usage_timeline, "%s needs a value", o);
    ++*i;
    if (strcmp(o, "--metric") == 0) {
        if (strcmp(v, "memsize") && strcmp(v, "count"))
            return hscope_cli_usage_error(usage_timeline,
                                          "--metric: expected memsize or count, not '%s'", v);
        a->to.metric = v[0] == 'c' ? HSCOPE_METRIC_COUNT : HSCOPE_METRIC_MEMSIZE;
    } else {
        a->svg = v;
    }
    return 1;
}

/* The shared options (hscope_cli_opts_parse), the command's own, "--",
 * the dumps. */
static int
parse(tl_args *a, int argc, char **argv)
{
    hscope_cli_args ca = { option, a, (const char **)a->paths, 0, 0, NULL, 1 };
    int rc = hscope_cli_parse_args(&a->o, &ca, argc, argv);
    if (rc)
        return rc;
    a->np = (size_t)ca.n;
    if (a->o.json && a->csv)
        return hscope_cli_usage_error(usage_timeline, "--json and --csv exclude each other%s", "");
    if (a->np == 0)
        return hscope_cli_usage_error(usage_timeline, "no DUMP given%s", "");
    /* --threads: dumps folded at once; each fold gets its share of the cores */
    a->to.threads = a->o.lo.threads;
    a->o.lo.threads = 0;
    return 0;
}

static hscope_status
timeline_writer(const void *tl, const hscope_report_options *ro, hscope_write_fn write,
                void *user_data, hscope_error *err)
{
    return hscope_timeline_write(tl, ro, write, user_data, err);
}

/* The timeline to stdout (the format asked for) and to the SVG file. */
static int
write_out(const hscope_timeline_t *tl, const tl_args *a)
{
    hscope_report_options ro;
    hscope_cli_report_options(&a->o, &ro, NULL, 0);
    hscope_cli_ascii(&ro);
    if (a->csv)
        ro.format = HSCOPE_FORMAT_CSV;
    return hscope_cli_write_result(timeline_writer, tl, &ro, a->svg);
}

int
hscope_cli_timeline(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage_timeline))
        return 0;
    tl_args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "timeline", usage_timeline, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 20);
    hscope_timeline_options_init(&a.to);
    a.paths = calloc((size_t)argc, sizeof(char *));
    if (!a.paths) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    int rc = parse(&a, argc, argv);
    if (rc) {
        free(a.paths);
        return rc;
    }
    hscope_timeline_t *tl = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_timeline_compute(&tl, (const char *const *)a.paths, a.np, &a.o.lo,
                                               &a.to, &err);
    if (st == HSCOPE_ERR_INVALID_ARG && a.to.order) {
        rc = hscope_cli_usage_error(usage_timeline, "--%s", err.message);
    } else if (st != HSCOPE_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    } else {
        /* said once, in time order: the damaged dumps, then the series checks */
        hscope_cli_warn_timeline(tl);
        rc = write_out(tl, &a);
    }
    hscope_timeline_free(tl);
    free(a.paths);
    return rc;
}
