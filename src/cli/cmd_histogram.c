/*
 * cmd_histogram.c - heapscope histogram: memsize and object count per
 * type or class of one dump, as bars (text and SVG).  A tally folded from
 * the file (hscope_tally_file()), written by hscope_tally_write().
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *prog = "heapscope";

static const char usage_histogram[] =
    "usage: heapscope histogram [--by type|class] [--top N] [--sort memsize|count]\n"
    "                           [--svg FILE] [--json] [--keep-dumper] [load options]\n"
    "                           DUMP\n"
    "\n"
    "Memsize and object count per type (default) or class of one dump, as\n"
    "bars, largest first.  The dump is folded without building the object\n"
    "graph.  --by also takes the other tally keys (file, file:line, gem...).\n"
    "\n"
    "  --by KEY        type (default), class, or another tally key\n"
    "  --top N         rows (default 20; 0 = all)\n"
    "  --sort WHAT     memsize (default) or count\n"
    "  --svg FILE      also write the bars as an SVG chart\n"
    "  --json          the tally document: {\"kind\": \"tally\", \"dumps\", \"by\",\n"
    "                  \"total\": {\"count\", \"memsize\"}, \"group_count\", \"groups\":\n"
    "                  [{\"key\", \"count\", \"memsize\"}], \"warnings\"}\n"
    "  --keep-dumper   keep the objects the dumper itself allocated (default: left\n"
    "                  out and counted)\n"
    "  --threads N     parser threads, 1-64 (default: one per core, at most 8)\n"
    "  --no-index      accepted; no effect (the dump is streamed, not indexed)\n"
    "  -v, --verbose   accepted; no effect\n";

typedef struct hist_args {
    hscope_load_options lo;
    hscope_tally_options to;
    const char *by, *svg, *path;
    int json;
} hist_args;

/* One option at argv[*i] (not a load option); 0 or a usage error. */
static int
option(hist_args *a, int argc, char **argv, int *i)
{
    const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (strcmp(o, "--json") == 0) {
        a->json = 1;
        return 0;
    }
    if (strcmp(o, "--keep-dumper") == 0) {
        a->to.flags &= ~HSCOPE_TALLY_SKIP_DUMPER;
        return 0;
    }
    if (strcmp(o, "--by") && strcmp(o, "--top") && strcmp(o, "--sort") && strcmp(o, "--svg"))
        return hscope_cli_usage_error(usage_histogram, "unknown option '%s'", o);
    if (!v)
        return hscope_cli_usage_error(usage_histogram, "%s needs a value", o);
    ++*i;
    if (strcmp(o, "--by") == 0) {
        if (!hscope_cli_valid_key(v))
            return hscope_cli_usage_error(usage_histogram, "unknown --by key '%s'", v);
        a->by = v;
    } else if (strcmp(o, "--top") == 0) {
        if (hscope_cli_parse_size(v, &a->to.top) != 0)
            return hscope_cli_usage_error(usage_histogram, "--top needs a number, not '%s'", v);
    } else if (strcmp(o, "--sort") == 0) {
        if (strcmp(v, "memsize") && strcmp(v, "count"))
            return hscope_cli_usage_error(usage_histogram,
                                          "--sort: expected memsize or count, not '%s'", v);
        a->to.sort = v[0] == 'm' ? HSCOPE_SORT_MEMSIZE : HSCOPE_SORT_COUNT;
    } else {
        a->svg = v;
    }
    return 0;
}

static int
parse(hist_args *a, int argc, char **argv)
{
    uint32_t threads = 0;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        if (o[0] != '-' || !o[1]) {
            if (a->path)
                return hscope_cli_usage_error(usage_histogram,
                                              "histogram takes one DUMP ('%s' is extra)", o);
            a->path = o;
            continue;
        }
        int r = hscope_cli_stream_option(&a->lo, &threads, 64, argc, argv, &i, usage_histogram);
        if (r < 0)
            return HSCOPE_CLI_EXIT_USAGE;
        if (r == 0 && (r = option(a, argc, argv, &i)) != 0)
            return r;
    }
    a->lo.threads = threads;
    if (!a->path)
        return hscope_cli_usage_error(usage_histogram, "no DUMP given%s", "");
    return 0;
}

int
hscope_cli_histogram(int argc, char **argv)
{
    if (hscope_cli_want_help(argc, argv, usage_histogram))
        return 0;
    hist_args a;
    memset(&a, 0, sizeof(a));
    hscope_load_options_init(&a.lo);
    hscope_tally_options_init(&a.to);
    a.to.top = 20;
    a.to.sort = HSCOPE_SORT_MEMSIZE;
    a.to.flags = HSCOPE_TALLY_SKIP_DUMPER;
    a.by = "type";
    int rc = parse(&a, argc, argv);
    if (rc)
        return rc;
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_tally_file(&t, a.path, a.by, &a.lo, &a.to, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, a.path, err.message);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    hscope_cli_warn_tally_damage(a.path, t);
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    const char *names[1] = { a.path };
    ro.format = a.json ? HSCOPE_FORMAT_JSON : HSCOPE_FORMAT_TEXT;
    ro.flags = HSCOPE_REPORT_BARS;
    ro.dump_names = names;
    ro.dump_name_count = 1;
    hscope_cli_text_options(&ro);
    hscope_status st = hscope_tally_write(t, &ro, hscope_cli_write_file, stdout, &err);
    rc = hscope_cli_close_out(stdout, NULL, st, &err);
    if (a.svg) {
        FILE *f = hscope_cli_open_out(a.svg);
        if (!f) {
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
        } else {
            ro.format = HSCOPE_FORMAT_SVG;
            st = hscope_tally_write(t, &ro, hscope_cli_write_file, f, &err);
            rc |= hscope_cli_close_out(f, a.svg, st, &err);
        }
    }
    hscope_tally_free(t);
    return rc;
}
