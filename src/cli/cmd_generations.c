/*
 * cmd_generations.c - heapscope generations: objects per allocation
 * generation and each one's top sites.
 */
#include <string.h>

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
            return hscope_cli_usage_error(usage, "one DUMP only ('%s' is extra)", argv[i]);
        path = argv[i];
    }
    if (!path)
        return hscope_cli_usage_error(usage, "no DUMP given%s", "");
    hscope_heap_t *h = hscope_cli_load(&o, path);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_report_options ro;
    hscope_cli_report_options(&o, &ro, &path, 1);
    hscope_error err = HSCOPE_ERROR_INIT;
    int rc = 0;
    if (hscope_heap_write_generations(h, &ro, hscope_cli_write_stdout, NULL, &err) != HSCOPE_OK)
        rc = hscope_cli_fail(path, &err);
    hscope_heap_free(h);
    return rc;
}
