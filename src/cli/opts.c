/*
 * opts.c - the options every command shares, and loading a dump with
 * its saved index and a progress bar (see opts.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opts.h"

static const char *prog = "heapscope";

static const char shared_help[] =
    "Load options (every command that reads a dump):\n"
    "  --strict             stop at the first malformed line (default: skip\n"
    "                       and count malformed lines, reported in summary)\n"
    "  --max-line BYTES     longest accepted line (default 1 GiB; suffixes K M G)\n"
    "  --max-memory BYTES   fail instead of allocating more than this\n"
    "                       (suffixes K M G)\n"
    "  --threads N          parser threads, 1-64 (default: one per core, at\n"
    "                       most 8; 1 for files under 32 MiB, 2 MiB gzip)\n"
    "  --no-index           ignore DUMP.hsx (see heapscope index)\n"
    "  -v, --verbose        say whether an index was used, or rebuilt\n"
    "  --no-progress        no progress bar (shown on a terminal for long loads)\n";

void
hscope_cli_opts_init(hscope_cli_opts *o, const char *cmd, const char *usage,
                     uint32_t accepts, uint64_t default_top)
{
    memset(o, 0, sizeof(*o));
    o->cmd = cmd;
    o->usage = usage;
    o->accepts = accepts;
    hscope_load_options_init(&o->lo);
    o->progress = 1;
    o->top = default_top;
}

static int
top_option(hscope_cli_opts *o, int argc, char **argv, int *i)
{
    if (!(o->accepts & HSCOPE_CLI_TOP)) {
        hscope_cli_usage_error(o->usage, "%s has no --top option", o->cmd);
        return -1;
    }
    uint64_t v;
    if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &v) != 0) {
        hscope_cli_usage_error(o->usage, "--top needs a number (0 = all)%s", "");
        return -1;
    }
    o->top = v ? v : HSCOPE_TOP_ALL;
    o->top_given = 1;
    return 1;
}

int
hscope_cli_opts_parse(hscope_cli_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (strcmp(a, "--no-progress") == 0) {
        o->progress = 0;
        return 1;
    }
    if (strcmp(a, "--no-index") == 0) {
        o->no_index = 1;
        return 1;
    }
    if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
        o->verbose = 1;
        return 1;
    }
    if (strcmp(a, "--json") == 0) {
        if (!(o->accepts & HSCOPE_CLI_JSON)) {
            hscope_cli_usage_error(o->usage, "%s has no --json output", o->cmd);
            return -1;
        }
        o->json = 1;
        return 1;
    }
    if (strcmp(a, "--top") == 0)
        return top_option(o, argc, argv, i);
    if (strcmp(a, "--threads") == 0) {
        uint64_t t;
        if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &t) != 0 || t == 0 || t > 64) {
            hscope_cli_usage_error(o->usage, "--threads needs a number from 1 to 64%s", "");
            return -1;
        }
        o->lo.threads = (uint32_t)t;
        return 1;
    }
    return hscope_cli_load_option(&o->lo, argc, argv, i, o->usage);
}

int
hscope_cli_parse_args(hscope_cli_opts *o, hscope_cli_args *a, int argc, char **argv)
{
    a->n = 0;
    int end_opts = 0;
    for (int i = 2; i < argc; i++) {
        if (a->dashdash && !end_opts && strcmp(argv[i], "--") == 0) {
            end_opts = 1;
            continue;
        }
        if (end_opts) {
            if (a->max && a->n == a->max)
                return hscope_cli_usage_error(o->usage, a->extra, argv[i]);
            a->operands[a->n++] = argv[i];
            continue;
        }
        int r = hscope_cli_opts_parse(o, argc, argv, &i);
        if (r < 0)
            return HSCOPE_CLI_EXIT_USAGE;
        if (r == 0 && a->option)
            r = a->option(a->ctx, argc, argv, &i);
        if (r > 1)
            return r;
        if (r == 1)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return hscope_cli_usage_error(o->usage, "unknown option '%s'", argv[i]);
        if (a->max && a->n == a->max)
            return hscope_cli_usage_error(o->usage, a->extra, argv[i]);
        a->operands[a->n++] = argv[i];
    }
    return 0;
}

int
hscope_cli_parse_order(const char *v, int32_t *order)
{
    static const char *const names[] = { "auto", "name", "mtime", "given" };
    for (int32_t k = 0; k < 4; k++)
        if (strcmp(v, names[k]) == 0) {
            *order = k; /* HSCOPE_ORDER_AUTO .. _GIVEN */
            return 0;
        }
    return -1;
}

int
hscope_cli_by_order_option(int argc, char **argv, int *i, const char *usage,
                           const char **by, int32_t *order)
{
    const char *o = argv[*i];
    int is_by = by && strcmp(o, "--by") == 0;
    if (!is_by && !(order && strcmp(o, "--order") == 0))
        return 0;
    if (*i + 1 >= argc)
        return hscope_cli_usage_error(usage, "%s needs a value", o);
    const char *v = argv[++*i];
    if (is_by) {
        if (!hscope_cli_valid_key(v))
            return hscope_cli_usage_error(usage, "unknown --by key '%s'", v);
        *by = v;
    } else if (hscope_cli_parse_order(v, order) != 0) {
        return hscope_cli_usage_error(usage, "--order: expected auto, name, mtime or given, "
                                             "not '%s'", v);
    }
    return 1;
}

int
hscope_cli_help(int argc, char **argv, const char *usage)
{
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage, stdout);
            fputs("\n", stdout);
            fputs(shared_help, stdout);
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Progress bar on stderr: only on a terminal and only after 1 s.     */
/* ------------------------------------------------------------------ */

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int32_t
progress_cb(void *ud, uint64_t done, uint64_t total)
{
    hscope_cli_progress *p = ud;
    double t = now_s() - p->t0;
    if (t < 1.0)
        return 0;
    p->shown = 1;
    double mb = (double)done / 1048576.0;
    if (total) {
        int pct = (int)(100.0 * (double)done / (double)total);
        int bars = pct / 4;
        char bar[26];
        memset(bar, '#', (size_t)bars);
        memset(bar + bars, '.', (size_t)(25 - bars));
        bar[25] = '\0';
        fprintf(stderr, "\r%s: loading [%s] %3d%% %.0f MB/s ", prog, bar, pct, mb / t);
    } else {
        fprintf(stderr, "\r%s: loading %.0f MB read, %.0f MB/s ", prog, mb, mb / t);
    }
    fflush(stderr);
    return 0;
}

void
hscope_cli_progress_start(hscope_cli_opts *o, const char *name)
{
    if (!o->progress || !isatty(2))
        return;
    o->pr.t0 = now_s();
    o->pr.name = name;
    o->lo.progress = progress_cb;
    o->lo.progress_user_data = &o->pr;
}

void
hscope_cli_progress_done(hscope_cli_opts *o)
{
    if (o->pr.shown)
        fprintf(stderr, "\r\033[K");
    o->pr.shown = 0;
}

/* ------------------------------------------------------------------ */
/* Loading a dump                                                     */
/* ------------------------------------------------------------------ */

/* The saved index DUMP.hsx when it is fresh; NULL otherwise (a stale or
 * damaged one is said, and *rebuild set). */
static hscope_heap_t *
open_index(hscope_cli_opts *o, const char *path, const char *ix, int *rebuild)
{
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_heap_t *h = NULL;
    hscope_status st = hscope_heap_open_saved(&h, ix, path, &o->lo, &err);
    if (st == HSCOPE_OK) {
        if (o->verbose)
            fprintf(stderr, "%s: using the index %s\n", prog, ix);
        o->from_index = 1;
        hscope_cli_warn_heap_damage(path, h); /* the index keeps the counts */
        return h;
    }
    if (st == HSCOPE_ERR_STALE) {
        if (o->verbose)
            fprintf(stderr, "%s: %s; rebuilding it\n", prog, err.message);
    } else {
        fprintf(stderr, "%s: warning: %s: %s; reading the dump instead\n", prog, ix,
                err.message);
    }
    *rebuild = 1;
    return NULL;
}

hscope_heap_t *
hscope_cli_load(hscope_cli_opts *o, const char *path)
{
    char ix[4096];
    int have_ix = !o->no_index && (size_t)snprintf(ix, sizeof(ix), "%s.hsx", path) < sizeof(ix) &&
                  access(ix, R_OK) == 0;
    int rebuild = 0;
    hscope_heap_t *h = NULL;
    if (have_ix && (h = open_index(o, path, ix, &rebuild)) != NULL)
        return h;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_cli_progress_start(o, path);
    hscope_status st = hscope_heap_open_file(&h, path, &o->lo, &err);
    hscope_cli_progress_done(o);
    if (st != HSCOPE_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, err.message);
        return NULL;
    }
    hscope_cli_warn_heap_damage(path, h);
    if (rebuild) {
        hscope_error e2 = HSCOPE_ERROR_INIT;
        if (hscope_heap_save(h, ix, path, &e2) != HSCOPE_OK)
            fprintf(stderr, "%s: warning: cannot rebuild %s: %s\n", prog, ix, e2.message);
        else if (o->verbose)
            fprintf(stderr, "%s: rebuilt the index %s\n", prog, ix);
    }
    return h;
}

void
hscope_cli_report_options(const hscope_cli_opts *o, hscope_report_options *ro,
                          const char *const *names, uint64_t nnames)
{
    hscope_report_options_init(ro);
    ro->format = o->json ? HSCOPE_FORMAT_JSON : HSCOPE_FORMAT_TEXT;
    ro->width = hscope_cli_width();
    ro->top = o->top;
    ro->dump_names = names;
    ro->dump_name_count = nnames;
    if (!o->json)
        ro->flags |= HSCOPE_REPORT_NO_WARNINGS; /* said on stderr */
}

int
hscope_cli_heap_command(hscope_cli_opts *o, int argc, char **argv, hscope_cli_heap_writer fn,
                        uint32_t json_flags, int json_all)
{
    char extra[64];
    snprintf(extra, sizeof(extra), "%s takes one DUMP ('%%s' is extra)", o->cmd);
    const char *path = NULL;
    hscope_cli_args a = { NULL, NULL, &path, 0, 1, extra };
    int rc = hscope_cli_parse_args(o, &a, argc, argv);
    if (rc)
        return rc;
    if (!path)
        return hscope_cli_usage_error(o->usage, "no DUMP given%s", "");
    if (o->json && json_all && !o->top_given)
        o->top = HSCOPE_TOP_ALL;
    hscope_heap_t *h = hscope_cli_load(o, path);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_report_options ro;
    hscope_cli_report_options(o, &ro, &path, 1);
    if (o->json)
        ro.flags |= json_flags;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (fn(h, &ro, hscope_cli_write_stdout, NULL, &err) != HSCOPE_OK)
        rc = hscope_cli_fail(path, &err);
    hscope_heap_free(h);
    return rc;
}

int
hscope_cli_fail(const char *what, const hscope_error *err)
{
    if (what)
        fprintf(stderr, "%s: %s: %s\n", prog, what, err->message);
    else
        fprintf(stderr, "%s: %s\n", prog, err->message);
    return HSCOPE_CLI_EXIT_BAD_INPUT;
}
