/*
 * cmd_serve.c - heapscope serve: the heap explorer in the browser.  This
 * file parses the command line and loads the dumps as every command does
 * (a saved index when there is one); the server is src/serve/ (built with
 * libmicrohttpd; without it the command says so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "../serve/serve.h"

static const char usage[] =
    "usage: heapscope serve [--port N] [--host ADDR] [--values] [load options] DUMP...\n"
    "\n"
    "Explore the heap in a browser: a local web server over the loaded dump(s).\n"
    "Its URL, with an access token in it, is the first line of standard output;\n"
    "it serves until interrupted (Ctrl-C, SIGTERM).  One dump: overview,\n"
    "classes, sites and gems, dominator tree, objects with their references,\n"
    "referrers, paths from the roots and dominator chain, search.  Three dumps\n"
    "A B C (as suspects reads them): the leak views too, on C.  Two dumps or\n"
    "more: the timeline too (with more than three only the last is loaded).\n"
    "Every request needs the token (a cookie after the first visit) and the\n"
    "served address as its Host; the server is read-only (docs/SERVE.md).\n"
    "\n"
    "  --port N      TCP port (default 0: a free port, said in the URL)\n"
    "  --host ADDR   numeric address to listen on (default 127.0.0.1); one that\n"
    "                is not a loopback address lets other machines in: a\n"
    "                warning says so\n"
    "  --values      show STRING/SYMBOL values (off by default: dumps hold\n"
    "                secrets in plain text); reads the dumps, not their index\n";

typedef struct serve_args {
    const char *host;
    uint32_t port;
    int values;
} serve_args;

static int
option(void *ctx, int argc, char **argv, int *i)
{
    serve_args *a = ctx;
    const char *o = argv[*i];
    if (strcmp(o, "--values") == 0) {
        a->values = 1;
        return 1;
    }
    if (strcmp(o, "--port") != 0 && strcmp(o, "--host") != 0)
        return 0;
    if (*i + 1 >= argc)
        return hscope_cli_usage_error(usage, "%s needs a value", o);
    const char *v = argv[++*i];
    if (strcmp(o, "--host") == 0) {
        a->host = v;
        return 1;
    }
    char *end = NULL;
    unsigned long p = strtoul(v, &end, 10);
    if (!*v || *end || p > 65535 || v[0] == '-')
        return hscope_cli_usage_error(usage, "--port: not a port number (0-65535): '%s'", v);
    a->port = (uint32_t)p;
    return 1;
}

int
hscope_cli_serve(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    hscope_cli_opts o;
    hscope_cli_opts_init(&o, "serve", usage, 0, 20);
    serve_args sa = { NULL, 0, 0 };
    const char **paths = calloc((size_t)argc + 1, sizeof(char *));
    if (!paths)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_cli_args a = { option, &sa, paths, 0, 0, NULL, 0 };
    int rc = hscope_cli_parse_args(&o, &a, argc, argv);
    if (!rc && a.n < 1)
        rc = hscope_cli_usage_error(usage, "need at least one DUMP%s", "");
#ifndef HSCOPE_HAVE_SERVE
    if (!rc) {
        fprintf(stderr, "heapscope: serve: this heapscope was built without libmicrohttpd "
                        "(Debian: libmicrohttpd-dev; meson -Dserve=enabled)\n");
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    }
#endif
    hscope_heap_t **heaps = rc ? NULL : calloc((size_t)a.n, sizeof(*heaps));
    if (!rc && !heaps)
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    if (!rc && sa.values) { /* values come from the parse: an index does not keep them */
        o.no_index = 1;
        o.lo.flags |= HSCOPE_LOAD_VALUES;
    }
    /* with more than three dumps only the last is loaded: the timeline
     * folds the files */
    for (int i = a.n > 3 ? a.n - 1 : 0; !rc && i < a.n; i++)
        if (!(heaps[i] = hscope_cli_load(&o, paths[i])))
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
#ifdef HSCOPE_HAVE_SERVE
    if (!rc) {
        hscope_srv_config cfg = { heaps, paths, (uint32_t)a.n, sa.host, sa.port, sa.values, o.lo };
        rc = hscope_srv_run(&cfg);
    }
#endif
    for (int i = 0; heaps && i < a.n; i++)
        hscope_heap_free(heaps[i]);
    free(heaps);
    free(paths);
    return rc;
}
