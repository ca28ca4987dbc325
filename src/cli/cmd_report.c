/*
 * cmd_report.c - heapscope report: one self-contained HTML page about the
 * dumps.  Options in, hscope_html_report_compute(), the warnings to
 * stderr, hscope_html_report_write() into memory, then the file (no
 * half-written file on failure).  The page is the library's
 * (src/report/html*.c); docs/REPORT.md describes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

static const char *prog = "heapscope";

static const char usage_report[] =
    "usage: heapscope report [--out FILE] [--top N] [--by KEY] [--order RULE]\n"
    "                        [--no-class-edges] [--no-index] [--keep-dumper]\n"
    "                        [--keep-tracer] [--no-waste] [load options]\n"
    "                        DUMP [DUMP...]\n"
    "\n"
    "Write one self-contained HTML page (no external assets; opens from disk in\n"
    "any browser) about the dumps:\n"
    "  1 dump     summary, type and class histograms, top allocation sites\n"
    "             (file:line:class), top retainers and an interactive dominator\n"
    "             tree (click to zoom)\n"
    "  2-3 dumps  also the diff (objects new in B since A and still alive in C)\n"
    "             and the leak suspects with their paths from the roots\n"
    "  2+ dumps   also the timeline plot and the growth ranking\n"
    "  always     the waste of the last dump (as heapscope waste: duplicate\n"
    "             strings, empty collections, oversized buffers by site; values\n"
    "             shown as length and hash only)\n"
    "The single-dump sections describe the last dump (the command-line order\n"
    "for 2 or 3 dumps, the time order otherwise).  Warnings (damaged dumps;\n"
    "dumps that cannot be one process's series: repeated, of different\n"
    "processes, out of order) go to stderr and onto the page.\n"
    "\n"
    "Options:\n"
    "  -o, --out FILE    where to write (default report.html; - for stdout)\n"
    "  --top N           rows per table (default 30; 0 = all)\n"
    "  --by KEY          timeline grouping: type, class (default), file,\n"
    "                    file:line, file:line:class, method, generation, gem\n"
    "  --order RULE      timeline order: auto (default), name, mtime, given\n"
    "  --no-class-edges  dominator tree without the object -> class edges\n"
    "  --no-index        parse the dump even if a fresh DUMP.hsx exists\n"
    "  --keep-dumper     keep the objects the dumper itself allocated in the\n"
    "                    histograms, allocation sites, diff, timeline and waste\n"
    "                    (default: left out and counted)\n"
    "  --keep-tracer     keep Ruby's allocation tracer (trace_object_allocations'\n"
    "                    table) in the histograms, sites, retainers, diff,\n"
    "                    timeline and waste (default: left out and said;\n"
    "                    labelled <allocation tracer>)\n"
    "  --no-waste        no waste section (saves one pass over the last dump)\n"
    "  --threads N       parser threads, 1-64 (default: one per core, at most 8;\n"
    "                    1 for files under 32 MiB, 2 MiB gzip)\n"
    "  -v, --verbose     accepted for symmetry with the other commands; no effect\n";

typedef struct report_args {
    hscope_cli_opts o;
    hscope_html_options ho;
    const char *out;
    char **paths;
    uint64_t np;
} report_args;

/* The command's own option at argv[*i]: 1 taken, 0 not ours, or a usage
 * error (said). */
static int
option(void *ctx, int argc, char **argv, int *i)
{
    report_args *a = ctx;
    const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    static const struct { const char *name; uint32_t flag; } flags[] = {
        { "--no-class-edges", HSCOPE_HTML_NO_CLASS_EDGES },
        { "--keep-dumper", HSCOPE_HTML_KEEP_DUMPER },
        { "--keep-tracer", HSCOPE_HTML_KEEP_TRACER },
        { "--no-waste", HSCOPE_HTML_NO_WASTE },
    };
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
        if (strcmp(o, flags[k].name) == 0) {
            a->ho.flags |= flags[k].flag;
            return 1;
        }
    int r = hscope_cli_by_order_option(argc, argv, i, usage_report, &a->ho.by, &a->ho.order);
    if (r || (strcmp(o, "--out") && strcmp(o, "-o")))
        return r;
    if (!v)
        return hscope_cli_usage_error(usage_report, "%s needs a value", o);
    ++*i;
    a->out = v;
    return 1;
}

/* The shared options (hscope_cli_opts_parse), the command's own, "--",
 * the dumps. */
static int
parse(report_args *a, int argc, char **argv)
{
    hscope_cli_args ca = { option, a, (const char **)a->paths, 0, 0, NULL, 1 };
    int rc = hscope_cli_parse_args(&a->o, &ca, argc, argv);
    if (rc)
        return rc;
    a->np = (uint64_t)ca.n;
    if (a->np == 0)
        return hscope_cli_usage_error(usage_report, "no DUMP given%s", "");
    return 0;
}

/* Damage of the dumps and the series checks, said once on stderr. */
static void
warn(const hscope_html_report_t *r, const report_args *a)
{
    if (a->np == 2 || a->np == 3)
        hscope_cli_warn_text(hscope_diff_warning_text(hscope_html_report_diff(r)));
    else if (a->np > 3)
        hscope_cli_warn_timeline(hscope_html_report_timeline(r));
    else
        hscope_cli_warn_heap_damage(a->paths[0], hscope_html_report_heap(r));
}

/* The page into memory, then to the file (or stdout). */
static int
write_out(const hscope_html_report_t *r, const report_args *a)
{
    char *html = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&html, &len);
    if (!m) {
        fprintf(stderr, "%s: report: out of memory\n", prog);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = HSCOPE_FORMAT_HTML;
    ro.top = a->o.top;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_html_report_write(r, &ro, hscope_cli_write_file, m, &err);
    if (fclose(m) != 0 || st != HSCOPE_OK) {
        fprintf(stderr, "%s: report: %s\n", prog, st != HSCOPE_OK ? err.message : "out of memory");
        free(html);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    int to_stdout = strcmp(a->out, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(a->out, "wb");
    if (!f) {
        fprintf(stderr, "%s: report: cannot write %s: %s\n", prog, a->out, strerror(errno));
        free(html);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    int bad = fwrite(html, 1, len, f) != len || ferror(f);
    bad |= (to_stdout ? fflush(f) : fclose(f)) != 0;
    free(html);
    if (bad) {
        fprintf(stderr, "%s: report: write error on %s\n", prog, a->out);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    if (!to_stdout) {
        char b[32];
        hscope_cli_human_bytes((double)len, b, sizeof(b));
        fprintf(stderr, "%s: wrote %s (%s)\n", prog, a->out, b);
    }
    return 0;
}

int
hscope_cli_report(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage_report))
        return 0;
    report_args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "report", usage_report, HSCOPE_CLI_TOP, 30);
    hscope_html_options_init(&a.ho);
    a.out = "report.html";
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
    if (!a.o.no_index)
        a.o.lo.flags |= HSCOPE_LOAD_USE_INDEX;
    hscope_html_report_t *r = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_html_report_compute(&r, (const char *const *)a.paths, a.np,
                                                  &a.o.lo, &a.ho, &err);
    if (st == HSCOPE_ERR_INVALID_ARG && a.ho.order) {
        fprintf(stderr, "%s: report: --%s\n", prog, err.message);
        rc = HSCOPE_CLI_EXIT_USAGE;
    } else if (st != HSCOPE_OK) {
        fprintf(stderr, "%s: report: %s\n", prog, err.message);
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    } else {
        warn(r, &a);
        rc = write_out(r, &a);
    }
    hscope_html_report_free(r);
    free(a.paths);
    return rc;
}
