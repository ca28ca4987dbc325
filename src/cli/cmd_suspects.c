/*
 * cmd_suspects.c - heapscope suspects: what holds the objects leaked
 * between three dumps.
 */
#include <string.h>

#include "opts.h"

static const char usage[] =
    "usage: heapscope suspects [--top N] [--json] [--no-class-edges]\n"
    "                          [load options] A B C\n"
    "\n"
    "The one-screen answer to \"where is my leak\": diff the three dumps\n"
    "(see heapscope diff), then rank the objects that hold the leaked objects\n"
    "(for each leaked object, the first object up its dominator chain that is\n"
    "not itself leaked) by how much leaked memory each keeps alive, with a\n"
    "path from a GC root to each holder.  The dumps are always read\n"
    "themselves (--no-index and -v have no effect).  Warnings go to stderr (and\n"
    "into the JSON), as for diff.\n"
    "\n"
    "  --top N            suspects to list (default 10; 0 = all)\n"
    "  --json             {\"kind\": \"suspects\", \"dumps\", \"leaked\": {\"count\",\n"
    "                     \"memsize\"}, \"warnings\", \"suspects\": [{\"rank\",\n"
    "                     \"address\", \"type\", \"class\", \"label\", \"leaked\",\n"
    "                     \"retained\", \"root\", \"path\": [...]}], ...}, best first\n"
    "                     (docs/JSON.md)\n"
    "  --no-class-edges   leave out the object -> class edges\n";

static int
option(void *ctx, int argc, char **argv, int *i)
{
    (void)argc;
    if (strcmp(argv[*i], "--no-class-edges") != 0)
        return 0;
    ((hscope_dom_options *)ctx)->flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    return 1;
}

int
hscope_cli_suspects(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    hscope_cli_opts o;
    hscope_cli_opts_init(&o, "suspects", usage, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 10);
    hscope_dom_options dopt = HSCOPE_DOM_OPTIONS_INIT;
    const char *paths[3];
    hscope_cli_args a = { option, &dopt, paths, 0, 3, "suspects takes three dumps ('%s' is extra)" };
    int rc = hscope_cli_parse_args(&o, &a, argc, argv);
    if (rc)
        return rc;
    if (a.n != 3)
        return hscope_cli_usage_error(usage, "need three dumps A B C%s", "");
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_diff_t *d = NULL;
    hscope_suspects_t *s = NULL;
    hscope_cli_progress_start(&o, paths[2]);
    hscope_status st = hscope_diff_files(&d, paths[0], paths[1], paths[2], &o.lo, NULL, &err);
    hscope_cli_progress_done(&o);
    if (st == HSCOPE_OK)
        st = hscope_suspects_compute(&s, d, &dopt, &err);
    if (st == HSCOPE_OK) {
        hscope_cli_warn_text(hscope_diff_warning_text(d));
        hscope_report_options ro;
        hscope_cli_report_options(&o, &ro, paths, 3);
        st = hscope_suspects_write(s, &ro, hscope_cli_write_stdout, NULL, &err);
    }
    rc = st == HSCOPE_OK ? 0 : hscope_cli_fail("suspects", &err);
    hscope_suspects_free(s);
    hscope_diff_free(d);
    return rc;
}
