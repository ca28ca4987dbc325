/*
 * cmd_export.c - heapscope export: the dumps as tables for PostgreSQL and
 * DuckDB (hscope_export_files()); what was written on stderr, or as JSON
 * on stdout.  --format heapsnapshot: one dump as a V8 heap snapshot for
 * Chrome DevTools and memlab; --format pprof: one dump as a gzipped pprof
 * profile for continuous profilers and go tool pprof (both
 * hscope_heap_write_export()).
 */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>
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
    "       heapscope export --format pprof [--out FILE] [--time T] [load options] DUMP\n"
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
    "--format pprof writes one DUMP as a gzipped pprof profile (profile.proto)\n"
    "for go tool pprof and continuous profilers (Pyroscope, Parca, ...): sample\n"
    "types inuse_objects and inuse_space, one sample per allocation site and\n"
    "class, labels class, type, gem and generation; the dumper's objects left\n"
    "out (docs/FLEET.md).\n"
    "\n"
    "  --format F      csv (RFC 4180, header line), jsonl (one object a line),\n"
    "                  heapsnapshot or pprof\n"
    "  --out DIR       output directory (created if missing; files replaced);\n"
    "                  heapsnapshot, pprof: the FILE (default: standard\n"
    "                  output, but not a terminal)\n"
    "  --time T        pprof: when the dump was taken, epoch seconds (\"1714564800.25\")\n"
    "                  or UTC \"2024-05-01T12:00:00Z\" (default: the file's mtime)\n"
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
    const char *time;
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
    if (r || (strcmp(o, "--format") && strcmp(o, "--out") && strcmp(o, "--first-id") &&
              strcmp(o, "--time")))
        return r;
    if (!v)
        return hscope_cli_usage_error(usage_export, "%s needs a value", o);
    ++*i;
    if (strcmp(o, "--format") == 0) {
        if (strcmp(v, "csv") && strcmp(v, "jsonl") && strcmp(v, "heapsnapshot") &&
            strcmp(v, "pprof"))
            return hscope_cli_usage_error(usage_export,
                                          "--format: expected csv, jsonl, heapsnapshot or pprof, not '%s'", v);
        a->eo.format = v[0] == 'c' ? HSCOPE_FORMAT_CSV
                       : v[0] == 'j' ? HSCOPE_FORMAT_JSONL
                       : v[0] == 'p' ? HSCOPE_FORMAT_PPROF : HSCOPE_FORMAT_HEAPSNAPSHOT;
    } else if (strcmp(o, "--out") == 0) {
        a->out = v;
    } else if (strcmp(o, "--time") == 0) {
        a->time = v;
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
        return hscope_cli_usage_error(usage_export, "--format csv|jsonl|heapsnapshot|pprof is required%s", "");
    if (a->time && a->eo.format != HSCOPE_FORMAT_PPROF)
        return hscope_cli_usage_error(usage_export, "--time is for --format pprof%s", "");
    if (a->eo.format == HSCOPE_FORMAT_HEAPSNAPSHOT || a->eo.format == HSCOPE_FORMAT_PPROF) {
        int pp = a->eo.format == HSCOPE_FORMAT_PPROF;
        if (a->o.json || a->eo.first_id || a->eo.order)
            return hscope_cli_usage_error(usage_export, pp ? "--format pprof takes no %s"
                                                           : "--format heapsnapshot takes no %s",
                                          a->o.json ? "--json" : a->eo.first_id ? "--first-id" : "--order");
        if (*np != 1)
            return hscope_cli_usage_error(usage_export, "--format %s takes one DUMP",
                                          pp ? "pprof" : "heapsnapshot");
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

/* --time T: epoch seconds (fractions allowed) or "YYYY-MM-DDTHH:MM:SS[.fff]Z";
 * 0 when T is bad. */
static int64_t
parse_time(const char *t)
{
    char *end;
    errno = 0;
    double sec = strtod(t, &end);
    if (end != t && !*end && !errno && isfinite(sec) && sec > 0 && sec < 9.2e9)
        return (int64_t)llround(sec * 1e9);
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    int n = 0;
    double frac = 0;
    if (sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &n) != 6)
        return 0;
    const char *p = t + n;
    if (*p == '.') {
        frac = strtod(p, &end);
        p = end;
    }
    if (strcmp(p, "Z") != 0 || tm.tm_year < 1970 || tm.tm_mon < 1 || tm.tm_mon > 12)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t s = timegm(&tm);
    return s > 0 ? (int64_t)s * 1000000000 + (int64_t)llround(frac * 1e9) : 0;
}

/* The dump's time for pprof: --time, else the file's mtime; 0 unknown. */
static int
dump_time(const ex_args *a, int64_t *ns)
{
    *ns = 0;
    if (a->time) {
        if (!(*ns = parse_time(a->time)))
            return hscope_cli_usage_error(usage_export,
                                          "--time: expected epoch seconds or "
                                          "YYYY-MM-DDTHH:MM:SSZ, not '%s'", a->time);
        return 0;
    }
    struct stat sb;
    if (stat(a->paths[0], &sb) == 0)
        *ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    return 0;
}

/* One dump as a V8 heap snapshot or a pprof profile, to --out FILE or
 * standard output. */
static int
heapsnapshot(ex_args *a)
{
    if (!a->out && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "%s: a %s is not for a terminal: give --out FILE or "
                        "redirect standard output\n", prog,
                a->eo.format == HSCOPE_FORMAT_PPROF ? "pprof profile" : "heap snapshot");
        return HSCOPE_CLI_EXIT_USAGE;
    }
    int64_t tns = 0;
    int urc = dump_time(a, &tns);
    if (urc)
        return urc;
    hscope_heap_t *h = hscope_cli_load(&a->o, a->paths[0]);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    int rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    FILE *f = hscope_cli_open_out(a->out);
    if (f) {
        hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
        ro.format = a->eo.format;
        const char *name = a->paths[0];
        ro.dump_names = &name;
        ro.dump_name_count = 1;
        hscope_error err = HSCOPE_ERROR_INIT;
        hscope_status st = a->eo.format == HSCOPE_FORMAT_PPROF
                               ? hscope_heap_write_pprof(h, tns, &ro, hscope_cli_write_file, f, &err)
                               : hscope_heap_write_export(h, &ro, hscope_cli_write_file, f, &err);
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
    if (!rc && (a.eo.format == HSCOPE_FORMAT_HEAPSNAPSHOT || a.eo.format == HSCOPE_FORMAT_PPROF)) {
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
