/*
 * cmd_summary.c - heapscope summary: what a heap dump holds.
 */
#include "opts.h"

static const char usage[] =
    "usage: heapscope summary [--json] [--top N] [load options] DUMP\n"
    "\n"
    "Print what a heap dump holds: objects and references, ROOT categories,\n"
    "count and memsize per type, the top classes, dangling references\n"
    "(references to addresses that are not in the dump), lines that were\n"
    "skipped and why, fields this version does not know (a newer Ruby's keys,\n"
    "flags or types: counted by name, never an error), and how long the load\n"
    "took.\n"
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
    return hscope_cli_heap_command(&o, argc, argv, hscope_heap_write_summary, HSCOPE_REPORT_PRETTY, 1);
}
