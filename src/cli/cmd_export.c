/*
 * cmd_export.c - heapscope export: the dumps as tables for PostgreSQL and
 * DuckDB (hscope_export_files()); what was written on stderr, or as JSON
 * on stdout.  --format heapsnapshot: one dump as a V8 heap snapshot for
 * Chrome DevTools and memlab (hscope_heap_write_export()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opts.h"

static const char *prog = "heapscope";

static const char usage_export[] =
    "usage: heapscope export --format csv|jsonl --out DIR [--first-id N]\n"
    "                        [--order auto|name|mtime|given] [--json]\n"
    "                        [load options] DUMP...\n"
    "       heapscope export --format heapsnapshot [--out FILE] [load options] DUMP\n"
    "\n"
    "Write the dumps as tables for PostgreSQL or DuckDB, one dump id per DUMP\n"
    "(in time order, see 'heapscope timeline --help'):\n"
    "  dumps     dump_id, seq, path, name, taken_at, order_source, objects,\n"
    "            refs, memsize, bytes, input_bytes, gzip, skipped_lines\n"
    "  objects   dump_id, address, type, class, class_address, memsize, size,\n"
    "            file, line, method, generation, flags, detail\n"
    "  refs      dump_id, from_address, to_address (object references, in\n"
    "            dump order, with duplicates)\n"
    "  roots     dump_id, category, address\n"
    "and DIR/schema.sql: CREATE TABLE and \\copy lines, so that\n"
    "'psql -f DIR/schema.sql' loads everything; DIR/schema.duckdb.sql does the\n"
    "same for 'duckdb FILE.db < DIR/schema.duckdb.sql'.  String values are\n"
    "never exported.\n"
    "\n"
    "--format heapsnapshot writes one DUMP as a V8 heap snapshot, to open in\n"
    "Chrome DevTools (Memory panel, Load profile) or memlab: every object a\n"
    "node (its class label, memsize, an odd id from its address, its\n"
    "allocation site as the allocation stack), every reference an edge, each\n"
    "root category a node \"(vm)\", ... under the root (docs/HEAPSNAPSHOT.md).\n"
    "\n"
    "  --format F      csv (RFC 4180, header line), jsonl (one object a line)\n"
    "                  or heapsnapshot\n"
    "  --out DIR       output directory (created if missing; files replaced);\n"
    "                  heapsnapshot: the FILE (default: standard output, but\n"
    "                  not a terminal)\n"
    "  --first-id N    dump_id of the first dump (default 1), to add more\n"
    "                  dumps to a database later\n"
    "  --order HOW     auto (default), name, mtime or given\n"
    "  --json          what was written, on stdout: {\"kind\": \"export\", \"dumps\",\n"
    "                  \"files\", \"warnings\", ...} (default: one line on stderr)\n"
    "  --no-index      accepted; no effect (the dumps are parsed, not indexed);\n"
    "                  heapsnapshot: ignore DUMP.hsx\n"
    "  -v, --verbose   accepted; no effect; heapsnapshot: say whether DUMP.hsx\n"
    "                  was used\n";

typedef struct ex_args {
    hscope_cli_opts o;
    hscope_export_options eo;
    const char *out;
    char **paths;
} ex_args;

/* The command's own option at argv[*i]: 1 taken, 0 not ours, or a usage
 * error (said). */
static int
option(void *ctx, int argc, char **argv, int *i)
{
    ex_args *a = ctx;
    const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    int r = hscope_cli_by_order_option(argc, argv, i, usage_export, NULL, &a->eo.order);
    if (r || (strcmp(o, "--format") && strcmp(o, "--out") && strcmp(o, "--first-id")))
        return r;
    if (!v)
        return hscope_cli_usage_error(usage_export, "%s needs a value", o);
    ++*i;
    if (strcmp(o, "--format") == 0) {
        if (strcmp(v, "csv") && strcmp(v, "jsonl") && strcmp(v, "heapsnapshot"))
            return hscope_cli_usage_error(usage_export,
                                          "--format: expected csv, jsonl or heapsnapshot, not '%s'", v);
        a->eo.format = v[0] == 'c' ? HSCOPE_FORMAT_CSV
                       : v[0] == 'j' ? HSCOPE_FORMAT_JSONL : HSCOPE_FORMAT_HEAPSNAPSHOT;
    } else if (strcmp(o, "--out") == 0) {
        a->out = v;
    } else {
        if (hscope_cli_parse_size(v, &a->eo.first_id) != 0 || a->eo.first_id == 0 ||
            a->eo.first_id > 1000000000u)
            return hscope_cli_usage_error(usage_export, "--first-id needs a number from 1 to 10^9%s", "");
    }
    return 1;
}

static int
parse(ex_args *a, int argc, char **argv, int *np)
{
    hscope_cli_args ca = { option, a, (const char **)a->paths, 0, 0, NULL };
    int rc = hscope_cli_parse_args(&a->o, &ca, argc, argv);
    if (rc)
        return rc;
    *np = ca.n;
    if (!a->eo.format)
        return hscope_cli_usage_error(usage_export, "--format csv|jsonl|heapsnapshot is required%s", "");
    if (a->eo.format == HSCOPE_FORMAT_HEAPSNAPSHOT) {
        if (a->o.json || a->eo.first_id || a->eo.order)
            return hscope_cli_usage_error(usage_export, "--format heapsnapshot takes no %s",
                                          a->o.json ? "--json" : a->eo.first_id ? "--first-id" : "--order");
        if (*np != 1)
            return hscope_cli_usage_error(usage_export,
                                          "--format heapsnapshot takes one DUMP%s", "");
        return 0;
    }
    if (!a->out)
        return hscope_cli_usage_error(usage_export, "--out DIR is required%s", "");
    if (*np == 0)
        return hscope_cli_usage_error(usage_export, "no DUMP given%s", "");
    return 0;
}

/* Each damaged dump on stderr, as every command says it. */
static void
warn_damage(const hscope_export_t *ex)
{
    for (uint64_t i = 0; i < hscope_export_dump_count(ex); i++) {
        hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
        uint64_t sk[HSCOPE_SKIP__COUNT];
        if (hscope_export_dump_stats(ex, i, &s) != HSCOPE_OK)
            continue;
        for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
            sk[r] = hscope_export_dump_skipped(ex, i, r);
        hscope_cli_warn_damage(hscope_export_dump_path(ex, i), &s, sk);
    }
}

/* One dump as a V8 heap snapshot, to --out FILE or standard output. */
static int
heapsnapshot(ex_args *a)
{
    if (!a->out && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "%s: a heap snapshot is not for a terminal: give --out FILE or "
                        "redirect standard output\n", prog);
        return HSCOPE_CLI_EXIT_USAGE;
    }
    hscope_heap_t *h = hscope_cli_load(&a->o, a->paths[0]);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    int rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    FILE *f = hscope_cli_open_out(a->out);
    if (f) {
        hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
        ro.format = HSCOPE_FORMAT_HEAPSNAPSHOT;
        hscope_error err = HSCOPE_ERROR_INIT;
        hscope_status st = hscope_heap_write_export(h, &ro, hscope_cli_write_file, f, &err);
        rc = hscope_cli_close_out(f, a->out, st, &err);
    }
    hscope_heap_free(h);
    return rc;
}

int
hscope_cli_export(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage_export))
        return 0;
    ex_args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "export", usage_export, HSCOPE_CLI_JSON, 0);
    hscope_export_options_init(&a.eo);
    a.paths = calloc((size_t)argc, sizeof(char *));
    if (!a.paths) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    int np = 0;
    int rc = parse(&a, argc, argv, &np);
    if (!rc && a.eo.format == HSCOPE_FORMAT_HEAPSNAPSHOT) {
        rc = heapsnapshot(&a);
        free(a.paths);
        return rc;
    }
    hscope_export_t *ex = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = rc ? HSCOPE_OK
                          : hscope_export_files(&ex, (const char *const *)a.paths, (uint64_t)np,
                                                a.out, &a.o.lo, &a.eo, &err);
    if (rc) {
        /* a usage error, said */
    } else if (st == HSCOPE_ERR_INVALID_ARG && a.eo.order) {
        rc = hscope_cli_usage_error(usage_export, "--%s", err.message);
    } else if (st != HSCOPE_OK) {
        rc = hscope_cli_fail(NULL, &err);
    } else {
        warn_damage(ex);
        hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
        ro.format = a.o.json ? HSCOPE_FORMAT_JSON : HSCOPE_FORMAT_TEXT;
        FILE *f = a.o.json ? stdout : stderr;
        if (!a.o.json)
            fprintf(f, "%s: ", prog);
        st = hscope_export_write(ex, &ro, hscope_cli_write_file, f, &err);
        rc = hscope_cli_close_out(f, NULL, st, &err);
    }
    hscope_export_free(ex);
    free(a.paths);
    return rc;
}
