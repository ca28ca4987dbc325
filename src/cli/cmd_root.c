/*
 * cmd_root.c - heapscope root: paths from the GC roots to objects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

static const char *prog = "heapscope";

static const char usage[] =
    "usage: heapscope root [--dot|--json] [--max-paths N] [--no-class-edges]\n"
    "                      [load options] DUMP ADDR...\n"
    "\n"
    "What keeps these objects alive: a shortest path from a GC root (ROOT\n"
    "category) to each ADDR, through the objects that reference it; from\n"
    "machine_context (the conservative stack scan) only when no other root\n"
    "reaches the object.  With\n"
    "--max-paths N, up to N paths per object, one through each of its\n"
    "referrers.  --dot writes a Graphviz graph like heapleak's (each object\n"
    "and edge once, the given objects highlighted; render with dot -Tsvg).\n"
    "ADDR is hex with 0x, as in the dump; an ADDR that is not an object of\n"
    "the dump is reported on stderr, after the paths of the others, and the\n"
    "exit status is 1.\n"
    "\n"
    "  --dot              a Graphviz graph of the paths\n"
    "  --json             {\"kind\": \"paths\", \"paths\": [{\"target\", \"root\",\n"
    "                     \"path\": [{\"address\", \"type\", \"class\", \"label\"},\n"
    "                     ...]}], ...} (path: from the first object after the\n"
    "                     root to the target; docs/JSON.md)\n"
    "  --max-paths N      paths per object (default 1)\n"
    "  --no-class-edges   leave out the object -> class edges\n";

typedef struct args {
    hscope_cli_opts o;
    int dot, nce, na;
    uint64_t maxp;
    uint64_t *addrs;
    const char *path;
} args;

static int
option(void *ctx, int argc, char **argv, int *i)
{
    args *a = ctx;
    if (strcmp(argv[*i], "--dot") == 0) {
        a->dot = 1;
    } else if (strcmp(argv[*i], "--no-class-edges") == 0) {
        a->nce = 1;
    } else if (strcmp(argv[*i], "--max-paths") == 0) {
        if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &a->maxp) != 0 || !a->maxp ||
            a->maxp > UINT32_MAX)
            return hscope_cli_usage_error(usage, "--max-paths needs a number >= 1%s", "");
    } else {
        return 0;
    }
    return 1;
}

static int
parse(args *a, const char **ops, int argc, char **argv)
{
    hscope_cli_args ca = { option, a, ops, 0, 0, NULL };
    int rc = hscope_cli_parse_args(&a->o, &ca, argc, argv);
    if (rc)
        return rc;
    if (ca.n < 2)
        return hscope_cli_usage_error(usage, "need a DUMP and at least one ADDR%s", "");
    a->path = ops[0];
    for (int i = 1; i < ca.n; i++)
        if (hscope_cli_parse_address(ops[i], &a->addrs[a->na++]) != 0)
            return hscope_cli_bad_address(usage, ops[i]);
    return 0;
}

/* The ids of the addresses that are objects; the others said on stderr
 * (after the output, as show does) by the caller. */
static uint64_t
find_all(hscope_heap_t *h, const args *a, hscope_id *ids)
{
    uint64_t n = 0;
    for (int i = 0; i < a->na; i++)
        if (hscope_heap_find(h, a->addrs[i], &ids[n]) == HSCOPE_OK)
            n++;
    return n;
}

static int
run_root(args *a)
{
    hscope_heap_t *h = hscope_cli_load(&a->o, a->path);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_dom_options dopt = HSCOPE_DOM_OPTIONS_INIT;
    if (a->nce)
        dopt.flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    hscope_paths_t *ps = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_id *ids = malloc((size_t)a->na * sizeof(hscope_id));
    int rc = 0;
    if (!ids) {
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    } else if (hscope_paths_compute(&ps, h, &dopt, &err) != HSCOPE_OK) {
        rc = hscope_cli_fail("root", &err);
    } else {
        hscope_report_options ro;
        hscope_cli_report_options(&a->o, &ro, &a->path, 1);
        if (a->dot && !a->o.json) /* --json takes precedence */
            ro.format = HSCOPE_FORMAT_DOT;
        ro.max_paths = (uint32_t)a->maxp;
        if (hscope_paths_write(ps, ids, find_all(h, a, ids), &ro, hscope_cli_write_stdout, NULL,
                               &err) != HSCOPE_OK)
            rc = hscope_cli_fail(a->path, &err);
        fflush(stdout);
        hscope_id id;
        for (int i = 0; i < a->na; i++)
            if (hscope_heap_find(h, a->addrs[i], &id) != HSCOPE_OK) {
                fprintf(stderr, "%s: 0x%llx is not an object of %s\n", prog,
                        (unsigned long long)a->addrs[i], a->path);
                rc = HSCOPE_CLI_EXIT_BAD_INPUT;
            }
    }
    free(ids);
    hscope_paths_free(ps);
    hscope_heap_free(h);
    return rc;
}

int
hscope_cli_root(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "root", usage, HSCOPE_CLI_JSON, 0);
    a.maxp = 1;
    a.addrs = calloc((size_t)argc, sizeof(uint64_t));
    const char **ops = calloc((size_t)argc, sizeof(char *));
    int rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    if (a.addrs && ops && !(rc = parse(&a, ops, argc, argv)))
        rc = run_root(&a);
    free(ops);
    free(a.addrs);
    return rc;
}
