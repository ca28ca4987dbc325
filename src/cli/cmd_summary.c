/*
 * cmd_summary.c - heapscope summary: what a heap dump holds.
 */
#include <string.h>

#include "opts.h"

static const char usage[] =
    "usage: heapscope summary [--json] [--top N] [load options] DUMP\n"
    "\n"
    "Print what a heap dump holds: objects and references, ROOT categories,\n"
    "count and memsize per type, the top classes, dangling references\n"
    "(references to addresses that are not in the dump), lines that were\n"
    "skipped and why, and how long the load took.\n"
    "\n"
    "  --json        machine-readable output (kind \"summary\", docs/JSON.md;\n"
    "                all classes unless --top is given)\n"
    "  --top N       classes to list (default 20; 0 = all)\n";

int
hscope_cli_summary(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    hscope_cli_opts o;
    hscope_cli_opts_init(&o, "summary", usage, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 20);
    const char *path = NULL;
    for (int i = 2; i < argc; i++) {
        int r = hscope_cli_opts_parse(&o, argc, argv, &i);
        if (r < 0)
            return HSCOPE_CLI_EXIT_USAGE;
        if (r > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return hscope_cli_usage_error(usage, "unknown option '%s'", argv[i]);
        if (path)
            return hscope_cli_usage_error(usage, "summary takes one DUMP ('%s' is extra)", argv[i]);
        path = argv[i];
    }
    if (!path)
        return hscope_cli_usage_error(usage, "no DUMP given%s", "");
    if (o.json && !o.top_given)
        o.top = HSCOPE_TOP_ALL;
    hscope_heap_t *h = hscope_cli_load(&o, path);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_report_options ro;
    hscope_cli_report_options(&o, &ro, &path, 1);
    if (o.json)
        ro.flags |= HSCOPE_REPORT_PRETTY;
    hscope_error err = HSCOPE_ERROR_INIT;
    int rc = 0;
    if (hscope_heap_write_summary(h, &ro, hscope_cli_write_stdout, NULL, &err) != HSCOPE_OK)
        rc = hscope_cli_fail(path, &err);
    hscope_heap_free(h);
    return rc;
}
