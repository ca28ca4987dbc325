/*
 * cmd_waste.c - heapscope waste: what the heap could shrink by (duplicate
 * strings, empty collections, oversized buffers), by place to change.
 * Options in, library out: hscope_waste_file() and hscope_waste_write().
 */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

static const char usage_waste[] =
    "usage: heapscope waste [--values] [--top N] [--json] [--by file:line|gem]\n"
    "                       [--ratio N] [--min-slack BYTES] [--keep-dumper]\n"
    "                       [load options] DUMP\n"
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
    "  --json              {\"kind\": \"waste\", \"heap\", \"recoverable\", \"findings\",\n"
    "                      \"groups\": [{\"key\", \"finding\", \"type\", \"count\",\n"
    "                      \"memsize\", \"fix\", ...}], \"values\", \"warnings\"}\n"
    "  --by KEY            file:line (default) or gem\n"
    "  --ratio N           oversized from N times the content (default 4)\n"
    "  --min-slack BYTES   oversized only when a buffer wastes this much\n"
    "                      (default 256; suffixes K M G)\n"
    "  --keep-dumper       keep the objects the dumper itself allocated\n"
    "  --threads N         parser threads, 1-64 (default: one per core, at most\n"
    "                      8; 1 for files under 32 MiB, 2 MiB gzip)\n"
    "  --no-index          accepted; waste always reads the dump (an index keeps\n"
    "                      no string values)\n"
    "  -v, --verbose       accepted; there is no index to report on\n";

/* Columns of the terminal on standard output, else 100. */
static uint32_t
out_width(void)
{
    struct winsize ws;
    if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
        return ws.ws_col;
    return 100;
}

static int32_t
to_stdout(void *ud, const char *data, uint64_t len)
{
    return fwrite(data, 1, (size_t)len, ud) == len ? 0 : -1;
}

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

/* Options of waste itself at argv[*i]: 1 consumed, 0 not ours, 2 usage
 * error (reported). */
static int
waste_option(int argc, char **argv, int *i, hscope_waste_options *wo,
             hscope_report_options *ro, hscope_load_options *lo)
{
    const char *a = argv[*i];
    uint64_t v;
    if (strcmp(a, "--values") == 0) {
        ro->flags |= HSCOPE_REPORT_VALUES;
    } else if (strcmp(a, "--json") == 0) {
        ro->format = HSCOPE_FORMAT_JSON;
    } else if (strcmp(a, "--keep-dumper") == 0) {
        wo->flags |= HSCOPE_WASTE_KEEP_DUMPER;
    } else if (strcmp(a, "--no-index") == 0 || strcmp(a, "-v") == 0 ||
               strcmp(a, "--verbose") == 0) {
        return 1;
    } else if (strcmp(a, "--top") == 0) {
        if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &v) != 0)
            return hscope_cli_usage_error(usage_waste, "--top needs a number%s", "");
        ro->top = v ? v : HSCOPE_TOP_ALL;
    } else if (strcmp(a, "--by") == 0) {
        if (*i + 1 >= argc)
            return hscope_cli_usage_error(usage_waste, "--by needs file:line or gem%s", "");
        const char *by = argv[++*i];
        if (strcmp(by, "file:line") == 0)
            wo->by = HSCOPE_WASTE_BY_SITE;
        else if (strcmp(by, "gem") == 0)
            wo->by = HSCOPE_WASTE_BY_GEM;
        else
            return hscope_cli_usage_error(usage_waste, "--by: expected file:line or gem, not '%s'",
                                          by);
    } else if (strcmp(a, "--ratio") == 0) {
        if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &v) != 0 || v < 2 || v > 1000000)
            return hscope_cli_usage_error(usage_waste, "--ratio needs a number from 2 to "
                                                       "1000000%s", "");
        wo->ratio = (uint32_t)v;
    } else if (strcmp(a, "--min-slack") == 0) {
        if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &v) != 0 || v == 0)
            return hscope_cli_usage_error(usage_waste, "--min-slack needs a size in bytes%s", "");
        wo->min_slack = v;
    } else if (strcmp(a, "--threads") == 0) {
        if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &v) != 0 || v == 0 || v > 64)
            return hscope_cli_usage_error(usage_waste, "--threads needs a number from 1 to 64%s",
                                          "");
        lo->threads = (uint32_t)v;
    } else {
        return 0;
    }
    return 1;
}

int
hscope_cli_waste(int argc, char **argv)
{
    if (hscope_cli_want_help(argc, argv, usage_waste))
        return 0;
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    hscope_waste_options wo = HSCOPE_WASTE_OPTIONS_INIT;
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    const char *path = NULL;
    for (int i = 2; i < argc; i++) {
        int r = hscope_cli_load_option(&lo, argc, argv, &i, usage_waste);
        if (r < 0)
            return HSCOPE_CLI_EXIT_USAGE;
        if (r == 0)
            r = waste_option(argc, argv, &i, &wo, &ro, &lo);
        if (r == HSCOPE_CLI_EXIT_USAGE)
            return r;
        if (r)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return hscope_cli_usage_error(usage_waste, "unknown option '%s'", argv[i]);
        if (path)
            return hscope_cli_usage_error(usage_waste, "waste takes one DUMP ('%s' is extra)",
                                          argv[i]);
        path = argv[i];
    }
    if (!path)
        return hscope_cli_usage_error(usage_waste, "no DUMP given%s", "");
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_waste_t *w = NULL;
    if (hscope_waste_file(&w, path, &lo, &wo, &err) != HSCOPE_OK) {
        fprintf(stderr, "heapscope: %s: %s\n", path, err.message);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    warn(path, w);
    ro.width = out_width();
    ro.dump_names = &path;
    ro.dump_name_count = 1;
    int rc = 0;
    if (hscope_waste_write(w, &ro, to_stdout, stdout, &err) != HSCOPE_OK || fflush(stdout) != 0) {
        fprintf(stderr, "heapscope: cannot write the report: %s\n", err.message);
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    hscope_waste_free(w);
    return rc;
}
