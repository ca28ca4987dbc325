/*
 * cmd_generations.c - heapscope generations: objects per allocation
 * generation and each one's top sites.
 */
#include "opts.h"

static const char usage[] =
    "usage: heapscope generations [--top N] [--json] [load options] DUMP\n"
    "\n"
    "heapy's generation view: live objects per allocation generation (GC\n"
    "count at allocation; needs trace_object_allocations), and for each\n"
    "generation the top file:line:class sites.  Old generations that keep\n"
    "growing between dumps point at a leak.\n"
    "\n"
    "  --top N       sites per generation (default 5; 0 = all)\n"
    "  --json        {\"kind\": \"generations\", \"untraced\": {\"count\", \"memsize\"},\n"
    "                \"generations\": [{\"generation\", \"count\", \"memsize\",\n"
    "                \"group_count\", \"groups\": [{\"key\", \"count\", \"memsize\"}]}],\n"
    "                ...} (docs/JSON.md)\n";

int
hscope_cli_generations(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    hscope_cli_opts o;
    hscope_cli_opts_init(&o, "generations", usage, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 5);
    return hscope_cli_heap_command(&o, argc, argv, hscope_heap_write_generations, 0, 0);
}
