/*
 * cmd_index.c - heapscope index: parse once, save DUMP.hsx.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "opts.h"

static const char usage[] =
    "usage: heapscope index [--out FILE] [load options] DUMP...\n"
    "\n"
    "Parse each DUMP once and save its model as DUMP.hsx (or FILE): every\n"
    "later command on DUMP maps the index in milliseconds instead of parsing\n"
    "(-v says so).  An index records the dump's size, mtime and a hash of its\n"
    "ends: if the dump changes, the index is stale and rebuilt by the next\n"
    "command; a damaged index is detected (checksums, bounds), reported, and\n"
    "rebuilt from the dump.  index always parses (--no-index has no effect).\n"
    "\n"
    "  --out FILE    where to save (one DUMP only; default DUMP.hsx)\n";

/* Parse one dump and save its index; 0 or an exit status. */
static int
index_one(hscope_cli_opts *o, const char *path, const char *outp)
{
    char ix[4096];
    snprintf(ix, sizeof(ix), "%s.hsx", path);
    hscope_heap_t *h = hscope_cli_load(o, path);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_error err = HSCOPE_ERROR_INIT;
    const char *dst = outp ? outp : ix;
    int rc = 0;
    if (hscope_heap_save(h, dst, path, &err) != HSCOPE_OK) {
        rc = hscope_cli_fail(NULL, &err);
    } else {
        struct stat sb;
        hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
        hscope_heap_stats(h, &s);
        char a[32], n[32];
        hscope_cli_human_bytes(stat(dst, &sb) == 0 ? (double)sb.st_size : 0.0, a, sizeof(a));
        hscope_cli_grouped(s.objects, n, sizeof(n));
        printf("%s: %s object%s, %s, parsed in %.2f s\n", dst, n, s.objects == 1 ? "" : "s", a,
               (double)s.load_ns / 1e9);
    }
    hscope_heap_free(h);
    return rc;
}

static int
option(void *ctx, int argc, char **argv, int *i)
{
    if (strcmp(argv[*i], "--out") != 0)
        return 0;
    if (*i + 1 >= argc)
        return hscope_cli_usage_error(usage, "--out needs a FILE%s", "");
    *(const char **)ctx = argv[++*i];
    return 1;
}

int
hscope_cli_index(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    hscope_cli_opts o;
    hscope_cli_opts_init(&o, "index", usage, 0, 0);
    const char *outp = NULL;
    const char **paths = calloc((size_t)argc, sizeof(char *));
    if (!paths)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_cli_args ca = { option, &outp, paths, 0, 0, NULL };
    int rc = hscope_cli_parse_args(&o, &ca, argc, argv), np = ca.n;
    if (!rc && (!np || (outp && np > 1)))
        rc = hscope_cli_usage_error(usage, np ? "--out takes one DUMP only%s" : "no DUMP given%s",
                                    "");
    o.no_index = 1; /* always parse the dump itself */
    for (int i = 0; i < np && rc != HSCOPE_CLI_EXIT_USAGE; i++)
        if (index_one(&o, paths[i], outp) != 0)
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    free(paths);
    return rc;
}
