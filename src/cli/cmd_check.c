/*
 * cmd_check.c - heapscope check --budget FILE: dumps against a memory
 * budget, for CI.  Options in, library out: hscope_budget_load_file(),
 * hscope_check_compute() and hscope_check_write().
 *
 * Exit status (unlike the other commands, whose 1 is bad input): 0 within
 * budget, 1 over budget, 2 no verdict: a usage error, a budget file that
 * is not valid, a dump that cannot be read.  So a CI job fails on 1 and
 * 2 alike, and a script can tell "over budget" from "could not check".
 */
#include <stdio.h>
#include <string.h>

#include "opts.h"

#define EXIT_OVER 1
#define EXIT_NO_VERDICT 2

static const char usage[] =
    "usage: heapscope check --budget FILE [--json] [--keep-dumper] [--keep-tracer]\n"
    "                       [--strict-names] [load options] DUMP | A B C\n"
    "\n"
    "Check dumps against a memory budget, for CI: limits on the live objects\n"
    "and memsize of the last dump (in all, per class, gem or file:line:class\n"
    "site), on what the roots keep alive (retained, from the dominator tree),\n"
    "and on the objects leaked over three dumps A B C (born between A and B,\n"
    "alive in C; the budget's [leaked] section needs them).  The budget file\n"
    "is a small subset of TOML (docs/BUDGET.md):\n"
    "\n"
    "  [total]\n"
    "  memsize = \"200 MB\"        # B, KB, MB, GB, TB: 1024-based\n"
    "  objects = 1_500_000\n"
    "  retained = \"150 MB\"\n"
    "  [leaked]\n"
    "  objects = 0\n"
    "  [class.\"String\"]\n"
    "  memsize = \"50 MB\"\n"
    "  [gem.\"activerecord\"]\n"
    "  objects = 100_000\n"
    "  [site.\"app/models/user.rb:12:String\"]\n"
    "  objects = 1000\n"
    "\n"
    "Prints each rule over budget and by how much it exceeds its limit, then\n"
    "the rules within budget, and the verdict.  Only what the budget asks for\n"
    "is computed.  The objects the dumper allocated and Ruby's allocation\n"
    "tracer are left out (a class.\"<allocation tracer>\" rule still measures\n"
    "the tracer).\n"
    "\n"
    "  --budget FILE   the budget (required)\n"
    "  --json          {\"kind\": \"check\", \"within_budget\", \"rules\": [{\"rule\",\n"
    "                  \"section\", \"key\", \"metric\", \"line\", \"limit\", \"actual\",\n"
    "                  \"over\", \"excess\", \"found\"}], \"verdict\", \"no_verdict\",\n"
    "                  \"total\", \"warnings\", ...}\n"
    "                  (docs/JSON.md)\n"
    "  --keep-dumper   keep the objects the dumper itself allocated\n"
    "  --keep-tracer   keep Ruby's allocation tracer (the table of\n"
    "                  trace_object_allocations, labelled <allocation tracer>;\n"
    "                  default: left out and counted)\n"
    "  --strict-names  a rule naming a class, gem or site the dump does not have\n"
    "                  is no verdict (exit 2); by default it measures 0 and a\n"
    "                  warning names the dump's closest names\n"
    "\n"
    "Exit status: 0 within budget, 1 over budget, 2 no verdict (a usage\n"
    "error, a budget file that is not valid, a dump that cannot be read, or\n"
    "a [leaked] rule on dumps that cannot answer it: the same dump twice,\n"
    "dumps of different processes, dumps out of time order; said first and\n"
    "last).\n"
    "--no-index and -v have no effect: check reads the dumps themselves.\n";

typedef struct args {
    hscope_cli_opts o;
    hscope_check_options co;
    const char *budget;
    const char **paths;
} args;

static int
option(void *ctx, int argc, char **argv, int *i)
{
    args *a = ctx;
    const char *arg = argv[*i];
    if (strcmp(arg, "--keep-dumper") == 0) {
        a->co.flags |= HSCOPE_CHECK_KEEP_DUMPER;
    } else if (strcmp(arg, "--keep-tracer") == 0) {
        a->co.flags |= HSCOPE_CHECK_KEEP_TRACER;
    } else if (strcmp(arg, "--strict-names") == 0) {
        a->co.flags |= HSCOPE_CHECK_STRICT_NAMES;
    } else if (strcmp(arg, "--budget") == 0) {
        if (*i + 1 >= argc)
            return hscope_cli_usage_error(usage, "--budget needs a FILE%s", "");
        a->budget = argv[++*i];
    } else {
        return 0;
    }
    return 1;
}

/* The budget, or NULL after saying why (the message names FILE:LINE). */
static hscope_budget_t *
load_budget(const char *path)
{
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_budget_t *b = NULL;
    if (hscope_budget_load_file(&b, path, &err) != HSCOPE_OK) {
        if (err.status == HSCOPE_ERR_IO)
            fprintf(stderr, "heapscope: --budget %s\n", err.message);
        else
            fprintf(stderr, "heapscope: %s\n", err.message);
        return NULL;
    }
    return b;
}

/* Warnings on stderr (the JSON has them too): a damaged last dump, then
 * the diff's and the series checks'. */
static void
warn(const char *last, const hscope_check_t *c)
{
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    uint64_t sk[HSCOPE_SKIP__COUNT];
    if (hscope_check_stats(c, &s) == HSCOPE_OK) {
        for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
            sk[r] = hscope_check_skipped(c, r);
        hscope_cli_warn_damage(last, &s, sk);
    }
    hscope_cli_warn_text(hscope_check_warning_text(c));
}

static int
run(args *a, int n, const hscope_budget_t *b)
{
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_check_t *c = NULL;
    hscope_cli_progress_start(&a->o, a->paths[n - 1]);
    hscope_status st = hscope_check_compute(&c, b, a->paths, (uint64_t)n, &a->o.lo, &a->co,
                                            &err);
    hscope_cli_progress_done(&a->o);
    if (st != HSCOPE_OK) {
        fprintf(stderr, "heapscope: check: %s\n", err.message);
        return EXIT_NO_VERDICT;
    }
    warn(a->paths[n - 1], c);
    hscope_report_options ro;
    hscope_cli_report_options(&a->o, &ro, a->paths, (uint64_t)n);
    int rc = hscope_check_no_verdict(c) ? EXIT_NO_VERDICT : hscope_check_over_count(c) ? EXIT_OVER : 0;
    st = hscope_check_write(c, &ro, hscope_cli_write_stdout, NULL, &err);
    if (st != HSCOPE_OK) {
        fprintf(stderr, "heapscope: check: %s\n", err.message);
        rc = EXIT_NO_VERDICT;
    }
    hscope_check_free(c);
    return rc;
}

int
hscope_cli_check(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "check", usage, HSCOPE_CLI_JSON, 0);
    hscope_check_options_init(&a.co);
    const char *paths[4];
    a.paths = paths;
    hscope_cli_args ca = { option, &a, paths, 0, 3, "check takes one dump or three ('%s' is "
                           "extra)" };
    int rc = hscope_cli_parse_args(&a.o, &ca, argc, argv);
    if (rc)
        return EXIT_NO_VERDICT;
    if (!a.budget)
        return hscope_cli_usage_error(usage, "check needs --budget FILE%s", "");
    if (ca.n != 1 && ca.n != 3)
        return hscope_cli_usage_error(usage, "check takes one DUMP, or three (A B C) for a "
                                      "budget with [leaked]%s", "");
    hscope_budget_t *b = load_budget(a.budget);
    if (!b)
        return EXIT_NO_VERDICT;
    rc = run(&a, ca.n, b);
    hscope_budget_free(b);
    return rc;
}
