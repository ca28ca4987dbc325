/*
 * cmd_histogram.c - heapscope histogram: memsize and object count per
 * type or class of one dump, as bars (text and SVG).  A tally folded from
 * the file (hscope_tally_file()), written by hscope_tally_write().
 */
#include <stdio.h>
#include <string.h>

#include "opts.h"

static const char usage_histogram[] =
    "usage: heapscope histogram [--by type|class] [--top N] [--sort memsize|count]\n"
    "                           [--svg FILE] [--json] [--keep-dumper] [--keep-tracer]\n"
    "                           [load options] DUMP\n"
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
    "                  [{\"key\", \"count\", \"memsize\"}], \"excluded_dumper_objects\",\n"
    "                  \"excluded_tracer\", \"warnings\"} (docs/JSON.md)\n"
    "  --keep-dumper   keep the objects the dumper itself allocated (default: left\n"
    "                  out and counted)\n"
    "  --keep-tracer   keep Ruby's allocation tracer (the table of\n"
    "                  trace_object_allocations, labelled <allocation tracer>;\n"
    "                  default: left out and counted)\n"
    "  --no-index      accepted; no effect (the dump is streamed, not indexed)\n"
    "  -v, --verbose   accepted; no effect\n";

typedef struct hist_args {
    hscope_cli_opts o;
    hscope_tally_options to;
    const char *by, *svg, *path;
} hist_args;

/* The command's own option at argv[*i]: 1 taken, 0 not ours, or a usage
 * error (said). */
static int
option(void *ctx, int argc, char **argv, int *i)
{
    hist_args *a = ctx;
    const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (strcmp(o, "--keep-dumper") == 0) {
        a->to.flags &= ~HSCOPE_TALLY_SKIP_DUMPER;
        return 1;
    }
    if (strcmp(o, "--keep-tracer") == 0) {
        a->to.flags &= ~HSCOPE_TALLY_SKIP_TRACER;
        return 1;
    }
    int r = hscope_cli_by_order_option(argc, argv, i, usage_histogram, &a->by, NULL);
    if (r || (strcmp(o, "--sort") && strcmp(o, "--svg")))
        return r;
    if (!v)
        return hscope_cli_usage_error(usage_histogram, "%s needs a value", o);
    ++*i;
    if (strcmp(o, "--sort") == 0) {
        if (strcmp(v, "memsize") && strcmp(v, "count"))
            return hscope_cli_usage_error(usage_histogram,
                                          "--sort: expected memsize or count, not '%s'", v);
        a->to.sort = v[0] == 'm' ? HSCOPE_SORT_MEMSIZE : HSCOPE_SORT_COUNT;
    } else {
        a->svg = v;
    }
    return 1;
}

static hscope_status
tally_writer(const void *t, const hscope_report_options *ro, hscope_write_fn write,
             void *user_data, hscope_error *err)
{
    return hscope_tally_write(t, ro, write, user_data, err);
}

/* The tally to stdout, and its bars to the SVG file. */
static int
write_out(const hscope_tally_t *t, const hist_args *a)
{
    hscope_report_options ro;
    hscope_cli_report_options(&a->o, &ro, &a->path, 1);
    hscope_cli_ascii(&ro);
    ro.flags |= HSCOPE_REPORT_BARS;
    return hscope_cli_write_result(tally_writer, t, &ro, a->svg);
}

int
hscope_cli_histogram(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage_histogram))
        return 0;
    hist_args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "histogram", usage_histogram, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 20);
    hscope_tally_options_init(&a.to);
    a.to.sort = HSCOPE_SORT_MEMSIZE;
    a.to.flags = HSCOPE_TALLY_SKIP_DUMPER | HSCOPE_TALLY_SKIP_TRACER;
    a.by = "type";
    hscope_cli_args ca = { option, &a, &a.path, 0, 1,
                           "histogram takes one DUMP ('%s' is extra)" };
    int rc = hscope_cli_parse_args(&a.o, &ca, argc, argv);
    if (rc)
        return rc;
    if (!a.path)
        return hscope_cli_usage_error(usage_histogram, "no DUMP given%s", "");
    a.to.top = a.o.top == HSCOPE_TOP_ALL ? 0 : a.o.top;
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_tally_file(&t, a.path, a.by, &a.o.lo, &a.to, &err) != HSCOPE_OK)
        return hscope_cli_fail(a.path, &err);
    hscope_cli_warn_tally_damage(a.path, t);
    rc = write_out(t, &a);
    hscope_tally_free(t);
    return rc;
}
