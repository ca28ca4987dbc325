/*
 * cmd_retained.c - heapscope retained: what keeps the most memory alive.
 */
#include <string.h>

#include "opts.h"

static const char usage[] =
    "usage: heapscope retained [--top N] [--by KEY] [--folded] [--json]\n"
    "                          [--no-class-edges] [--keep-tracer] [load options]\n"
    "                          DUMP\n"
    "\n"
    "The objects that keep the most memory alive (retained size: the memsize\n"
    "of everything they dominate), like Eclipse MAT's dominator view.\n"
    "\n"
    "  --top N          rows (default 20; 0 = all)\n"
    "  --by KEY         \"du for the heap\": retained size per class, file:line,\n"
    "                   gem... (any tally key), counting each object once under\n"
    "                   its topmost dominator of that key\n"
    "  --folded         the dominator tree as folded stacks (frame;frame bytes),\n"
    "                   for flamegraph.pl or speedscope\n"
    "  --json           {\"kind\": \"retained\", \"objects\": [{\"address\", \"type\",\n"
    "                   \"class\", \"label\", \"memsize\", \"retained\": {\"count\",\n"
    "                   \"memsize\"}}], ...}; with --by: {\"by\", \"groups\": [{\"key\",\n"
    "                   \"count\", \"memsize\"}], ...} (docs/JSON.md)\n"
    "  --no-class-edges leave out the object -> class edges\n"
    "  --keep-tracer    keep Ruby's allocation tracer (the table of\n"
    "                   trace_object_allocations, labelled <allocation tracer>;\n"
    "                   default: left out with what it alone retains, and\n"
    "                   counted)\n";

typedef struct args {
    hscope_cli_opts o;
    int nce, folded, keep_tracer;
    const char *path, *by;
} args;

static int
option(void *ctx, int argc, char **argv, int *i)
{
    args *a = ctx;
    if (strcmp(argv[*i], "--folded") == 0) {
        a->folded = 1;
    } else if (strcmp(argv[*i], "--keep-tracer") == 0) {
        a->keep_tracer = 1;
    } else if (strcmp(argv[*i], "--no-class-edges") == 0) {
        a->nce = 1;
    } else if (strcmp(argv[*i], "--by") == 0) {
        if (*i + 1 >= argc)
            return hscope_cli_usage_error(usage, "--by needs a KEY%s", "");
        a->by = argv[++*i];
        if (!hscope_cli_valid_key(a->by))
            return hscope_cli_usage_error(usage, "unknown --by key '%s'", a->by);
    } else {
        return 0;
    }
    return 1;
}

static int
parse(args *a, int argc, char **argv)
{
    hscope_cli_args ca = { option, a, &a->path, 0, 1, "one DUMP only ('%s' is extra)" };
    int rc = hscope_cli_parse_args(&a->o, &ca, argc, argv);
    if (rc)
        return rc;
    if (!a->path)
        return hscope_cli_usage_error(usage, "no DUMP given%s", "");
    return 0;
}

/* The output of one form: folded stacks, per group, or per object. */
static hscope_status
write_out(const args *a, hscope_domtree_t *t, hscope_report_options *ro, hscope_error *err)
{
    if (a->folded) {
        ro->format = HSCOPE_FORMAT_FOLDED;
        return hscope_domtree_write(t, HSCOPE_ID_NONE, ro, hscope_cli_write_stdout, NULL, err);
    }
    if (!a->by) {
        if (!a->keep_tracer)
            ro->flags |= HSCOPE_REPORT_SKIP_TRACER;
        return hscope_domtree_write_retained(t, ro, hscope_cli_write_stdout, NULL, err);
    }
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    if (!a->keep_tracer)
        to.flags |= HSCOPE_TALLY_SKIP_TRACER;
    to.sort = HSCOPE_SORT_MEMSIZE;
    to.top = a->o.top == HSCOPE_TOP_ALL ? 0 : a->o.top;
    hscope_tally_t *tl = NULL;
    hscope_status st = hscope_domtree_tally(&tl, t, a->by, &to, err);
    if (st == HSCOPE_OK)
        st = hscope_tally_write(tl, ro, hscope_cli_write_stdout, NULL, err);
    hscope_tally_free(tl);
    return st;
}

int
hscope_cli_retained(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "retained", usage, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 20);
    int rc = parse(&a, argc, argv);
    if (rc)
        return rc;
    hscope_heap_t *h = hscope_cli_load(&a.o, a.path);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_domtree_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_dom_options dopt = HSCOPE_DOM_OPTIONS_INIT;
    if (a.nce)
        dopt.flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    if (hscope_domtree_compute(&t, h, &dopt, &err) != HSCOPE_OK) {
        rc = hscope_cli_fail("dominators", &err);
    } else {
        hscope_report_options ro;
        hscope_cli_report_options(&a.o, &ro, &a.path, 1);
        if (write_out(&a, t, &ro, &err) != HSCOPE_OK)
            rc = hscope_cli_fail(a.path, &err);
    }
    hscope_domtree_free(t);
    hscope_heap_free(h);
    return rc;
}
