/*
 * cmd_waste.c - heapscope waste: what the heap could shrink by (duplicate
 * strings, empty collections, oversized buffers), by place to change.
 * Options in, library out: hscope_waste_file() and hscope_waste_write().
 */
#include <stdio.h>
#include <string.h>

#include "opts.h"

static const char usage[] =
    "usage: heapscope waste [--values] [--top N] [--json] [--by file:line|gem]\n"
    "                       [--ratio N] [--min-slack BYTES] [--keep-dumper]\n"
    "                       [--keep-tracer] [load options] DUMP\n"
    "\n"
    "What the heap could shrink by, as a list of places to change (allocation\n"
    "site file:line, or gem), biggest saving first, each with a suggested fix:\n"
    "  duplicate strings   STRING objects with the same value (compared byte for\n"
    "                      byte); keeping one copy (the largest) frees the others\n"
    "  empty collections   Arrays and Hashes with no element, Strings with no\n"
    "                      byte; allocated lazily they would not exist\n"
    "  oversized buffers   a String's capacity, an Array's or Hash's buffer (its\n"
    "                      memsize beyond the slot) at least N times what the\n"
    "                      content needs (8 bytes per element, 64 per entry)\n"
    "and the total: bytes recoverable and their share of the heap.  Strings\n"
    "sharing a buffer, strings the dump has no value for (non-ASCII) and cut\n"
    "values are counted apart.  Values are never printed without --values: a\n"
    "value shows as its length and a hash (#1a2b3c4d), the same in every\n"
    "report, so two reports can be compared.  The dump is streamed, never\n"
    "loaded whole; the lines of a few repeated values may be read a second\n"
    "time, so DUMP must be a file, not a pipe.\n"
    "\n"
    "  --values            print the duplicated values themselves\n"
    "  --top N             places and values to list (default 20; 0 = all)\n"
    "  --json              {\"kind\": \"waste\", \"total\", \"recoverable\", \"findings\",\n"
    "                      \"groups\": [{\"key\", \"finding\", \"type\", \"count\",\n"
    "                      \"memsize\", \"fix\", ...}], \"values\", \"warnings\"}\n"
    "                      (docs/JSON.md)\n"
    "  --by KEY            file:line (default) or gem\n"
    "  --ratio N           oversized from N times the content (default 4)\n"
    "  --min-slack BYTES   oversized only when a buffer wastes this much\n"
    "                      (default 256; suffixes K M G)\n"
    "  --keep-dumper       keep the objects the dumper itself allocated\n"
    "  --keep-tracer       keep Ruby's allocation tracer (the table of\n"
    "                      trace_object_allocations; default: left out of the\n"
    "                      heap's total and counted)\n"
    "\n"
    "--no-index and -v have no effect: waste always reads the dump (an index\n"
    "keeps no string values).\n";


/* Warnings on stderr (the JSON has them too). */
static void
warn(const char *path, const hscope_waste_t *w)
{
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    hscope_waste_totals t = HSCOPE_WASTE_TOTALS_INIT;
    uint64_t sk[HSCOPE_SKIP__COUNT];
    if (hscope_waste_stats(w, &s) == HSCOPE_OK) {
        for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
            sk[r] = hscope_waste_skipped(w, r);
        hscope_cli_warn_damage(path, &s, sk);
    }
    hscope_waste_totals_get(w, &t);
    if (t.warnings & HSCOPE_WASTE_WARN_NO_TRACING)
        hscope_cli_warn_text("no finding has an allocation site: trace allocations "
                             "(ObjectSpace.trace_object_allocations_start) to see where "
                             "they come from");
    if (t.warnings & HSCOPE_WASTE_WARN_NO_VALUES)
        hscope_cli_warn_text("no string has a value in this dump: duplicate strings could "
                             "not be searched");
    if (t.warnings & HSCOPE_WASTE_WARN_COLLISIONS)
        hscope_cli_warn_text("some strings have the hash and length of another value but "
                             "other bytes: they are not grouped");
    if (t.warnings & HSCOPE_WASTE_WARN_CHANGED)
        hscope_cli_warn_text("the dump changed while it was read: some copies are not "
                             "counted");
}

typedef struct args {
    hscope_cli_opts o;
    hscope_waste_options wo;
    int values;
    const char *path;
} args;

/* Options of waste itself at argv[*i]: 1 consumed, 0 not ours, or the
 * exit status of a usage error (said). */
static int
option(void *ctx, int argc, char **argv, int *i)
{
    args *a = ctx;
    const char *arg = argv[*i];
    uint64_t v;
    if (strcmp(arg, "--values") == 0) {
        a->values = 1;
    } else if (strcmp(arg, "--keep-dumper") == 0) {
        a->wo.flags |= HSCOPE_WASTE_KEEP_DUMPER;
    } else if (strcmp(arg, "--keep-tracer") == 0) {
        a->wo.flags |= HSCOPE_WASTE_KEEP_TRACER;
    } else if (strcmp(arg, "--by") == 0) {
        if (*i + 1 >= argc)
            return hscope_cli_usage_error(usage, "--by needs file:line or gem%s", "");
        const char *by = argv[++*i];
        if (strcmp(by, "file:line") == 0)
            a->wo.by = HSCOPE_WASTE_BY_SITE;
        else if (strcmp(by, "gem") == 0)
            a->wo.by = HSCOPE_WASTE_BY_GEM;
        else
            return hscope_cli_usage_error(usage, "--by: expected file:line or gem, not '%s'", by);
    } else if (strcmp(arg, "--ratio") == 0) {
        if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &v) != 0 || v < 2 || v > 1000000)
            return hscope_cli_usage_error(usage, "--ratio needs a number from 2 to 1000000%s",
                                          "");
        a->wo.ratio = (uint32_t)v;
    } else if (strcmp(arg, "--min-slack") == 0) {
        if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &v) != 0 || v == 0)
            return hscope_cli_usage_error(usage, "--min-slack needs a size in bytes%s", "");
        a->wo.min_slack = v;
    } else {
        return 0;
    }
    return 1;
}

int
hscope_cli_waste(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "waste", usage, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 20);
    hscope_waste_options_init(&a.wo);
    hscope_cli_args ca = { option, &a, &a.path, 0, 1, "waste takes one DUMP ('%s' is extra)" };
    int rc = hscope_cli_parse_args(&a.o, &ca, argc, argv);
    if (rc)
        return rc;
    if (!a.path)
        return hscope_cli_usage_error(usage, "no DUMP given%s", "");
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_waste_t *w = NULL;
    hscope_cli_progress_start(&a.o, a.path);
    hscope_status st = hscope_waste_file(&w, a.path, &a.o.lo, &a.wo, &err);
    hscope_cli_progress_done(&a.o);
    if (st == HSCOPE_OK) {
        warn(a.path, w);
        hscope_report_options ro;
        hscope_cli_report_options(&a.o, &ro, &a.path, 1);
        if (a.values)
            ro.flags |= HSCOPE_REPORT_VALUES;
        st = hscope_waste_write(w, &ro, hscope_cli_write_stdout, NULL, &err);
    }
    if (st != HSCOPE_OK)
        rc = hscope_cli_fail(a.path, &err);
    hscope_waste_free(w);
    return rc;
}
