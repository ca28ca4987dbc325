/*
 * cmd_dominators.c - heapscope dominators: the dominator tree, its top or
 * the chain and subtree of one object.
 */
#include <stdio.h>
#include <string.h>

#include "opts.h"

static const char *prog = "heapscope";

static const char usage[] =
    "usage: heapscope dominators [--depth N] [--top N] [--json] [--full]\n"
    "                            [--no-class-edges] [load options] DUMP [ADDR]\n"
    "\n"
    "The dominator tree: X dominates Y when every path from the GC roots to Y\n"
    "passes through X; X's retained size is what would be freed without X.\n"
    "Without ADDR, prints the top of the tree (below each ROOT category, and\n"
    "below \"(roots)\" what only the roots together keep alive); with ADDR (hex\n"
    "with 0x, as in the dump), the dominator chain from a root down to the\n"
    "object and the subtree below it; an ADDR that is not an object of the\n"
    "dump exits 1.  Objects keep their class alive: object -> class edges are\n"
    "part of the graph unless --no-class-edges.\n"
    "\n"
    "  --depth N        levels of the subtree to print (default 2; 0 is taken\n"
    "                   as 1)\n"
    "  --top N          children per node, largest retained first (default 10;\n"
    "                   0 = all)\n"
    "  --json           machine-readable output (kind \"dominators\",\n"
    "                   docs/JSON.md)\n"
    "  --full           with --json: the immediate dominator and retained size\n"
    "                   of every reachable object\n"
    "  --no-class-edges leave out the object -> class edges\n";

typedef struct args {
    hscope_cli_opts o;
    uint64_t depth, addr;
    int full, nce, have_addr;
    const char *path;
} args;

static int
option(void *ctx, int argc, char **argv, int *i)
{
    args *a = ctx;
    if (strcmp(argv[*i], "--full") == 0) {
        a->full = 1;
    } else if (strcmp(argv[*i], "--no-class-edges") == 0) {
        a->nce = 1;
    } else if (strcmp(argv[*i], "--depth") == 0) {
        if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &a->depth) != 0 ||
            a->depth > UINT32_MAX)
            return hscope_cli_usage_error(usage, "--depth needs a number%s", "");
    } else {
        return 0;
    }
    return 1;
}

static int
parse(args *a, int argc, char **argv)
{
    const char *ops[2];
    hscope_cli_args ca = { option, a, ops, 0, 2, "one ADDR at most ('%s' is extra)" };
    int rc = hscope_cli_parse_args(&a->o, &ca, argc, argv);
    if (rc)
        return rc;
    if (!ca.n)
        return hscope_cli_usage_error(usage, "no DUMP given%s", "");
    a->path = ops[0];
    if (ca.n == 2 && hscope_cli_parse_address(ops[1], &a->addr) != 0)
        return hscope_cli_bad_address(usage, ops[1]);
    a->have_addr = ca.n == 2;
    return 0;
}

int
hscope_cli_dominators(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "dominators", usage, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 10);
    a.depth = 2;
    int rc = parse(&a, argc, argv);
    if (rc)
        return rc;
    hscope_heap_t *h = hscope_cli_load(&a.o, a.path);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_id focus = HSCOPE_ID_NONE;
    hscope_domtree_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_dom_options dopt = HSCOPE_DOM_OPTIONS_INIT;
    if (a.nce)
        dopt.flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    if (a.have_addr && hscope_heap_find(h, a.addr, &focus) != HSCOPE_OK) {
        fprintf(stderr, "%s: 0x%llx is not an object of %s\n", prog, (unsigned long long)a.addr,
                a.path);
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    } else if (hscope_domtree_compute(&t, h, &dopt, &err) != HSCOPE_OK) {
        rc = hscope_cli_fail("dominators", &err);
    } else {
        hscope_report_options ro;
        hscope_cli_report_options(&a.o, &ro, &a.path, 1);
        ro.depth = a.depth ? (uint32_t)a.depth : 1;
        if (a.full)
            ro.flags |= HSCOPE_REPORT_ADDRESSES;
        if (hscope_domtree_write(t, focus, &ro, hscope_cli_write_stdout, NULL, &err) != HSCOPE_OK)
            rc = hscope_cli_fail(a.path, &err);
    }
    hscope_domtree_free(t);
    hscope_heap_free(h);
    return rc;
}
