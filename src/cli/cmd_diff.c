/*
 * cmd_diff.c - heapscope diff: objects born between dumps and still alive.
 * diff --grew (per group: the value in each dump) is a timeline of the
 * dumps in the order given: cmd_grew.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"


static const char usage[] =
    "usage: heapscope diff [--by KEY] [--top N] [--addresses] [--json] [--grew]\n"
    "                      [--metric memsize|count] [--address-only] [--keep-dumper]\n"
    "                      [--keep-tracer] [load options] A B [C]\n"
    "\n"
    "The heapleak recipe: objects present in B, absent from A and still present\n"
    "in C (with two dumps: new in B).  Take A, B and C from one process, e.g.\n"
    "after warm-up, after the suspect work, and after more work; run with\n"
    "ObjectSpace.trace_object_allocations_start so that identity is exact.\n"
    "\n"
    "An address reused by a new object is not a survivor: records are the same\n"
    "object only if address and type agree and, when traced, generation and\n"
    "file:line agree too (without tracing: the class address); where both\n"
    "records have Ruby's object_id (4.0+), the ids decide, wherever the object\n"
    "lies (a note says how many).  Objects the\n"
    "dumper itself allocated are left out and counted.  Only the last dump is\n"
    "held in memory; the others are streamed against it.  The dumps are always\n"
    "read themselves (--no-index and -v have no effect).  Warnings go to stderr\n"
    "(and into the JSON): damaged dumps, no allocation tracing, and dumps that\n"
    "cannot be one process's series (the same dump twice, dumps of different\n"
    "processes, an order that runs backwards).\n"
    "\n"
    "  --by KEY        group by type, class, file, file:line, file:line:class\n"
    "                  (default), method, generation or gem\n"
    "  --top N         groups to print (default 20; 0 = all)\n"
    "  --addresses     list every leaked address per group (text: 3 samples)\n"
    "  --json          {\"kind\": \"diff\", \"dumps\", \"leaked\": {\"count\", \"memsize\"},\n"
    "                  \"by\", \"group_count\", \"groups\", \"warnings\", ...} (docs/JSON.md)\n"
    "  --grew          instead: per group, the memsize (or count) in each dump\n"
    "                  and the deltas, largest growth first (a timeline of the\n"
    "                  dumps in the order given, streamed in parallel; JSON kind\n"
    "                  grew)\n"
    "  --metric WHAT   with --grew: memsize (default, as timeline and report)\n"
    "                  or count\n"
    "  --address-only  classic heapleak: compare addresses only\n"
    "  --keep-dumper   keep the objects the dumper itself allocated\n"
    "                  (ObjectSpace.dump_all's, the heapscope gem's snapshot code's)\n"
    "  --keep-tracer   keep Ruby's allocation tracer (the table of\n"
    "                  trace_object_allocations, labelled <allocation tracer>;\n"
    "                  default: left out and counted)\n";

typedef struct args {
    hscope_cli_opts o;
    hscope_diff_options dopt;
    int addresses, grew, np;
    int32_t metric;             /* --grew: HSCOPE_METRIC_*, 0 the library's default */
    const char *by;
    char *paths[3];
} args;

static int
option(void *ctx, int argc, char **argv, int *i)
{
    args *a = ctx;
    const char *arg = argv[*i];
    if (strcmp(arg, "--addresses") == 0) {
        a->addresses = 1;
    } else if (strcmp(arg, "--grew") == 0) {
        a->grew = 1;
    } else if (strcmp(arg, "--metric") == 0) {
        const char *v = *i + 1 < argc ? argv[++*i] : "";
        if (strcmp(v, "memsize") && strcmp(v, "count"))
            return hscope_cli_usage_error(usage, "--metric: expected memsize or count, not '%s'",
                                          v);
        a->metric = v[0] == 'c' ? HSCOPE_METRIC_COUNT : HSCOPE_METRIC_MEMSIZE;
    } else if (strcmp(arg, "--address-only") == 0) {
        a->dopt.flags |= HSCOPE_DIFF_ADDRESS_ONLY;
    } else if (strcmp(arg, "--keep-dumper") == 0) {
        a->dopt.flags |= HSCOPE_DIFF_KEEP_DUMPER;
    } else if (strcmp(arg, "--keep-tracer") == 0) {
        a->dopt.flags |= HSCOPE_DIFF_KEEP_TRACER;
    } else if (strcmp(arg, "--by") == 0) {
        if (*i + 1 >= argc)
            return hscope_cli_usage_error(usage, "--by needs a KEY%s", "");
        a->by = argv[++*i];
    } else {
        return 0;
    }
    return 1;
}

static int
parse(args *a, int argc, char **argv)
{
    hscope_cli_args ca = { option, a, (const char **)a->paths, 0, 3,
                           "diff takes two or three dumps ('%s' is extra)" };
    int rc = hscope_cli_parse_args(&a->o, &ca, argc, argv);
    if (rc)
        return rc;
    a->np = ca.n;
    if (a->np < 2)
        return hscope_cli_usage_error(usage, "diff needs dumps A B [C]%s", "");
    if (a->metric && !a->grew)
        return hscope_cli_usage_error(usage, "--metric needs --grew%s", "");
    if (!hscope_cli_valid_key(a->by))
        return hscope_cli_usage_error(usage, "unknown --by key '%s'", a->by);
    return 0;
}

int
hscope_cli_diff(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "diff", usage, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 20);
    hscope_diff_options_init(&a.dopt);
    a.by = "file:line:class";
    int rc = parse(&a, argc, argv);
    if (rc)
        return rc;
    uint64_t top = a.o.top == HSCOPE_TOP_ALL ? 0 : a.o.top;
    if (a.grew)
        return hscope_cli_diff_grew(
            &a.o, a.paths, a.np, a.by, a.metric,
            (a.dopt.flags & HSCOPE_DIFF_KEEP_DUMPER ? HSCOPE_TIMELINE_KEEP_DUMPER : 0u) |
                (a.dopt.flags & HSCOPE_DIFF_KEEP_TRACER ? HSCOPE_TIMELINE_KEEP_TRACER : 0u));
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_diff_t *d = NULL;
    hscope_tally_t *t = NULL;
    hscope_cli_progress_start(&a.o, a.paths[a.np - 1]);
    hscope_status st = hscope_diff_files(&d, a.paths[0], a.paths[1],
                                         a.np == 3 ? a.paths[2] : NULL, &a.o.lo, &a.dopt, &err);
    hscope_cli_progress_done(&a.o);
    hscope_tally_options to;
    hscope_tally_options_init(&to);
    to.top = top;
    if (st == HSCOPE_OK)
        st = hscope_diff_tally(&t, d, a.by, &to, &err);
    if (st == HSCOPE_OK) {
        /* warnings on stderr (and in the JSON): the dumps cannot support an
         * exact answer, or do not look like one process's series */
        hscope_cli_warn_text(hscope_diff_warning_text(d));
        hscope_report_options ro;
        hscope_cli_report_options(&a.o, &ro, (const char *const *)a.paths, (uint64_t)a.np);
        if (a.addresses)
            ro.flags |= HSCOPE_REPORT_ADDRESSES;
        st = hscope_diff_write(d, t, &ro, hscope_cli_write_stdout, NULL, &err);
    }
    if (st != HSCOPE_OK)
        rc = hscope_cli_fail("diff", &err);
    hscope_tally_free(t);
    hscope_diff_free(d);
    return rc;
}
