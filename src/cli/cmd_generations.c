/*
 * cmd_generations.c - heapscope generations: objects per allocation
 * generation and each one's top sites.
 */
#include <string.h>

#include "opts.h"

static const char usage[] =
    "usage: heapscope generations [--top N] [--json] [--keep-dumper] [load options] DUMP\n"
    "\n"
    "heapy's generation view: live objects per allocation generation (GC\n"
    "count at allocation; needs trace_object_allocations), and for each\n"
    "generation the top file:line:class sites.  Old generations that keep\n"
    "growing between dumps point at a leak.\n"
    "\n"
    "  --top N       sites per generation (default 5; 0 = all)\n"
    "  --keep-dumper keep the objects the dumper itself allocated (default: left\n"
    "                out and counted: ObjectSpace.dump_all's, the heapscope gem's\n"
    "                snapshot code's)\n"
    "  --json        {\"kind\": \"generations\", \"untraced\": {\"count\", \"memsize\"},\n"
    "                \"excluded_dumper_objects\",\n"
    "                \"generations\": [{\"generation\", \"count\", \"memsize\",\n"
    "                \"group_count\", \"groups\": [{\"key\", \"count\", \"memsize\"}]}],\n"
    "                ...} (docs/JSON.md)\n";

static int
option(void *ctx, int argc, char **argv, int *i)
{
    (void)argc;
    if (strcmp(argv[*i], "--keep-dumper") != 0)
        return 0;
    *(int *)ctx = 1;
    return 1;
}

int
hscope_cli_generations(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    hscope_cli_opts o;
    hscope_cli_opts_init(&o, "generations", usage, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 5);
    const char *path = NULL;
    int keep = 0;
    hscope_cli_args a = { option, &keep, &path, 0, 1,
                          "generations takes one DUMP ('%s' is extra)" };
    int rc = hscope_cli_parse_args(&o, &a, argc, argv);
    if (rc)
        return rc;
    if (!path)
        return hscope_cli_usage_error(usage, "no DUMP given%s", "");
    hscope_heap_t *h = hscope_cli_load(&o, path);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_report_options ro;
    hscope_cli_report_options(&o, &ro, &path, 1);
    if (keep)
        ro.flags |= HSCOPE_REPORT_KEEP_DUMPER;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_heap_write_generations(h, &ro, hscope_cli_write_stdout, NULL, &err) != HSCOPE_OK)
        rc = hscope_cli_fail(path, &err);
    hscope_heap_free(h);
    return rc;
}
