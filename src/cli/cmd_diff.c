/*
 * cmd_diff.c - heapscope diff: objects born between dumps and still alive.
 *
 * diff --grew (per group: the count in each dump) is still computed and
 * written here; it moves onto the library's timeline (issue 20, part B).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "opts.h"

static const char *prog = "heapscope";

static const char usage[] =
    "usage: heapscope diff [--by KEY] [--top N] [--addresses] [--json] [--grew]\n"
    "                      [--address-only] [--keep-dumper] [load options] A B [C]\n"
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
    "  --grew          instead: per group, the count in each dump and the\n"
    "                  deltas, largest growth first (dumps streamed in parallel)\n"
    "  --address-only  classic heapleak: compare addresses only\n"
    "  --keep-dumper   keep the objects the dumper itself allocated\n"
    "                  (ObjectSpace.dump_all's, the heapscope gem's snapshot code's)\n";

typedef struct foldjob {
    const char *path, *by;
    uint32_t tflags;
    const hscope_load_options *lo;
    hscope_tally_t *t;
    hscope_error err;
    hscope_status st;
} foldjob;

static void *
fold_thread(void *arg)
{
    foldjob *j = arg;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    to.flags = j->tflags | HSCOPE_TALLY_FINGERPRINT; /* for the series checks */
    hscope_error_init(&j->err);
    j->st = hscope_tally_file(&j->t, j->path, j->by, j->lo, &to, &j->err);
    return NULL;
}

typedef struct growrow {
    const char *key;
    uint64_t n[3], m[3];
    int64_t delta;
} growrow;

static int
cmp_grow(const void *a, const void *b)
{
    const growrow *x = a, *y = b;
    if (x->delta != y->delta)
        return x->delta > y->delta ? -1 : 1;
    return strcmp(x->key, y->key);
}

static int
cmp_key(const void *a, const void *b)
{
    return strcmp(((const growrow *)a)->key, ((const growrow *)b)->key);
}

/* Per group: count in each dump and the deltas (heapy's "grew" view). */
static int
diff_grew(char **paths, int np, const char *by, uint64_t top, int json,
          const hscope_load_options *lo, uint32_t tflags)
{
    foldjob jobs[3];
    pthread_t th[3];
    hscope_load_options quiet = *lo;
    quiet.progress = NULL;
    if (!quiet.threads)
        quiet.threads = 1; /* the three dumps are folded at once */
    for (int i = 0; i < np; i++) {
        jobs[i] = (foldjob){ paths[i], by, tflags, &quiet, NULL, HSCOPE_ERROR_INIT, 0 };
        if (pthread_create(&th[i], NULL, fold_thread, &jobs[i]) != 0)
            fold_thread(&jobs[i]), th[i] = 0;
    }
    for (int i = 0; i < np; i++)
        if (th[i])
            pthread_join(th[i], NULL);
    int rc = 0;
    for (int i = 0; i < np; i++)
        if (jobs[i].st != HSCOPE_OK) {
            fprintf(stderr, "%s: %s: %s\n", prog, paths[i], jobs[i].err.message);
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
        }
    char wtext[2048] = "";
    if (!rc) {
        const hscope_fingerprint_t *fps[3];
        for (int i = 0; i < np; i++) {
            hscope_cli_warn_tally_damage(paths[i], jobs[i].t);
            fps[i] = hscope_tally_fingerprint(jobs[i].t);
        }
        hscope_series_check(fps, (const char *const *)paths, (uint64_t)np, wtext, sizeof(wtext));
        hscope_cli_warn_text(wtext);
    }
    size_t cap = 0, n = 0;
    growrow *rows = NULL;
    for (int i = 0; i < np && !rc; i++) {
        hscope_tally_t *t = jobs[i].t;
        cap += hscope_tally_row_count(t);
    }
    rows = calloc(cap + 1, sizeof(growrow));
    if (!rows && !rc)
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    /* union of keys: collect, sort by key, merge */
    for (int i = 0; i < np && !rc; i++) {
        hscope_tally_t *t = jobs[i].t;
        for (uint64_t r = 0; r < hscope_tally_row_count(t); r++) {
            growrow *g = &rows[n++];
            g->key = hscope_tally_row_key(t, r);
            g->n[i] = hscope_tally_row_count_of(t, r);
            g->m[i] = hscope_tally_row_memsize(t, r);
        }
    }
    if (!rc) {
        qsort(rows, n, sizeof(growrow), cmp_key);
        size_t u = 0;
        for (size_t i = 0; i < n; i++) {
            if (u && strcmp(rows[u - 1].key, rows[i].key) == 0) {
                for (int k = 0; k < 3; k++) {
                    rows[u - 1].n[k] += rows[i].n[k];
                    rows[u - 1].m[k] += rows[i].m[k];
                }
            } else {
                rows[u++] = rows[i];
            }
        }
        n = u;
        for (size_t i = 0; i < n; i++)
            rows[i].delta = (int64_t)rows[i].n[np - 1] - (int64_t)rows[i].n[0];
        qsort(rows, n, sizeof(growrow), cmp_grow);
        size_t shown = top && top < n ? (size_t)top : n;
        if (json) {
            jw w;
            jw_init(&w, stdout, 0);
            jw_obj(&w);
            jw_key(&w, "dumps"); jw_arr(&w);
            for (int i = 0; i < np; i++) jw_str(&w, paths[i]);
            jw_end_arr(&w);
            jw_key(&w, "by"); jw_str(&w, by);
            jw_key(&w, "warnings"); jw_lines(&w, wtext);
            jw_key(&w, "grew"); jw_arr(&w);
            for (size_t i = 0; i < shown; i++) {
                jw_obj(&w);
                jw_key(&w, "key"); jw_str(&w, rows[i].key);
                jw_key(&w, "counts"); jw_arr(&w);
                for (int k = 0; k < np; k++) jw_u64(&w, rows[i].n[k]);
                jw_end_arr(&w);
                jw_key(&w, "memsize"); jw_arr(&w);
                for (int k = 0; k < np; k++) jw_u64(&w, rows[i].m[k]);
                jw_end_arr(&w);
                jw_key(&w, "deltas"); jw_arr(&w);
                for (int k = 1; k < np; k++)
                    jw_i64(&w, (int64_t)rows[i].n[k] - (int64_t)rows[i].n[k - 1]);
                jw_end_arr(&w);
                jw_end_obj(&w);
            }
            jw_end_arr(&w);
            jw_end_obj(&w);
            jw_done(&w);
        } else {
            printf("%-50s", by);
            for (int k = 0; k < np; k++)
                printf(" %10c", 'A' + k);
            for (int k = 1; k < np; k++)
                printf("   %c-%c", 'A' + k, 'A' + k - 1);
            printf("\n");
            for (size_t i = 0; i < shown; i++) {
                printf("  %-48s", rows[i].key);
                for (int k = 0; k < np; k++)
                    printf(" %10llu", (unsigned long long)rows[i].n[k]);
                for (int k = 1; k < np; k++)
                    printf(" %+6lld", (long long)rows[i].n[k] - (long long)rows[i].n[k - 1]);
                printf("\n");
            }
            if (shown < n)
                printf("  ... %zu more groups (--top 0 shows all)\n", n - shown);
        }
    }
    free(rows);
    for (int i = 0; i < np; i++)
        hscope_tally_free(jobs[i].t);
    return rc;
}


typedef struct args {
    hscope_cli_opts o;
    hscope_diff_options dopt;
    int addresses, grew, np;
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
    } else if (strcmp(arg, "--address-only") == 0) {
        a->dopt.flags |= HSCOPE_DIFF_ADDRESS_ONLY;
    } else if (strcmp(arg, "--keep-dumper") == 0) {
        a->dopt.flags |= HSCOPE_DIFF_KEEP_DUMPER;
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
        return diff_grew(a.paths, a.np, a.by, top, a.o.json, &a.o.lo,
                         (a.dopt.flags & HSCOPE_DIFF_KEEP_DUMPER) ? 0 : HSCOPE_TALLY_SKIP_DUMPER);
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
