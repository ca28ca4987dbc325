/*
 * cmd_show.c - heapscope show: everything about some objects.
 *
 * The heap does not keep the dump's record lines, so they are caught here
 * with a line hook during the load and handed to the writer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

static const char *prog = "heapscope";

static const char usage[] =
    "usage: heapscope show [--json] [--values] [--top N] [load options] DUMP ADDR...\n"
    "\n"
    "Everything about one or more objects: type, class, memsize, allocation\n"
    "site, flags, the dump record itself, what the object references and what\n"
    "references it.  ADDR is hex with 0x, as in the dump (0x7f...); spaces\n"
    "around it are ignored.  An ADDR that is not an object of the dump is\n"
    "reported on stderr, after the others, and the exit status is 1.  A saved\n"
    "index (DUMP.hsx) keeps neither the records nor the values: with one, the\n"
    "record is left out (--no-index shows it), and --values reads the dump\n"
    "itself.  show reads a dump on one thread (--threads has no effect).\n"
    "\n"
    "  --json        machine-readable output (kind \"objects\", docs/JSON.md;\n"
    "                complete: every reference and referrer, the whole record)\n"
    "  --top N       references and referrers to list in the text output\n"
    "                (default 20; 0 = all); the record line is cut to 2,000 bytes\n"
    "                (label and note included), saying how many were left out\n"
    "  --values      also print STRING/SYMBOL/FLOAT values (off by default:\n"
    "                dumps hold secrets in plain text; text output: the first\n"
    "                200 bytes)\n";

typedef struct wanted {
    int n;
    uint64_t *addrs;
    char (*prefix)[48];
    size_t *plen;
    char **records;    /* the record line of each, when seen */
} wanted;

/* The line hook: keep the last record of each wanted address (as the
 * heap does when an address repeats). */
static int32_t
grab_lines(void *ud, const char *line, uint64_t len, uint64_t lineno)
{
    (void)lineno;
    wanted *wl = ud;
    if (len < 16 || line[0] != '{')
        return 0;
    for (int i = 0; i < wl->n; i++) {
        if (len <= wl->plen[i] || memcmp(line, wl->prefix[i], wl->plen[i]) != 0)
            continue;
        char *r = malloc(len + 1);
        if (!r)
            return 0; /* the record is then not shown; the object is */
        memcpy(r, line, len);
        r[len] = '\0';
        free(wl->records[i]);
        wl->records[i] = r;
    }
    return 0;
}

static int
add_address(wanted *wl, const char *arg)
{
    int i = wl->n;
    if (hscope_cli_parse_address(arg, &wl->addrs[i]) != 0)
        return hscope_cli_bad_address(usage, arg);
    snprintf(wl->prefix[i], sizeof(wl->prefix[i]), "{\"address\":\"0x%llx\"",
             (unsigned long long)wl->addrs[i]);
    wl->plen[i] = strlen(wl->prefix[i]);
    wl->n++;
    return 0;
}

static int
option(void *ctx, int argc, char **argv, int *i)
{
    (void)argc;
    if (strcmp(argv[*i], "--values") != 0)
        return 0;
    *(int *)ctx = 1;
    return 1;
}

static int
parse(hscope_cli_opts *o, wanted *wl, int *values, const char **path, int argc, char **argv)
{
    const char **ops = calloc((size_t)argc, sizeof(char *));
    if (!ops)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_cli_args ca = { option, values, ops, 0, 0, NULL };
    int rc = hscope_cli_parse_args(o, &ca, argc, argv);
    if (!rc && ca.n < 2)
        rc = hscope_cli_usage_error(usage, "need a DUMP and at least one ADDR%s", "");
    *path = ops[0];
    for (int i = 1; i < ca.n && !rc; i++)
        rc = add_address(wl, ops[i]);
    free(ops);
    return rc;
}

static int
show(hscope_cli_opts *o, wanted *wl, int values, const char *path)
{
    /* values come from the parse: an index does not keep them */
    if (values) {
        o->no_index = 1;
        o->lo.flags |= HSCOPE_LOAD_VALUES;
    }
    o->lo.line_fn = grab_lines;
    o->lo.line_user_data = wl;
    o->lo.threads = 1; /* the line hook sees the lines in order */
    hscope_heap_t *h = hscope_cli_load(o, path);
    if (!h)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    hscope_report_options ro;
    hscope_cli_report_options(o, &ro, &path, 1);
    if (o->json)
        ro.flags |= HSCOPE_REPORT_PRETTY;
    if (values)
        ro.flags |= HSCOPE_REPORT_VALUES;
    hscope_error err = HSCOPE_ERROR_INIT;
    int rc = 0;
    if (hscope_heap_write_objects(h, wl->addrs, (uint64_t)wl->n,
                                  (const char *const *)wl->records, &ro,
                                  hscope_cli_write_stdout, NULL, &err) != HSCOPE_OK)
        rc = hscope_cli_fail(path, &err);
    /* what was found is printed; then what was not, as root does */
    fflush(stdout);
    for (int i = 0; i < wl->n; i++) {
        hscope_id id;
        if (hscope_heap_find(h, wl->addrs[i], &id) != HSCOPE_OK) {
            fprintf(stderr, "%s: 0x%llx is not an object of %s\n", prog,
                    (unsigned long long)wl->addrs[i], path);
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
        }
    }
    hscope_heap_free(h);
    return rc;
}

int
hscope_cli_show(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    hscope_cli_opts o;
    hscope_cli_opts_init(&o, "show", usage, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 20);
    size_t cap = (size_t)argc;
    wanted wl = { 0, calloc(cap, sizeof(uint64_t)), calloc(cap, 48), calloc(cap, sizeof(size_t)),
                  calloc(cap, sizeof(char *)) };
    int values = 0, rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    const char *path = NULL;
    if (wl.addrs && wl.prefix && wl.plen && wl.records) {
        rc = parse(&o, &wl, &values, &path, argc, argv);
        if (!rc)
            rc = show(&o, &wl, values, path);
    }
    for (int i = 0; i < wl.n; i++)
        free(wl.records[i]);
    free(wl.addrs);
    free(wl.prefix);
    free(wl.plen);
    free(wl.records);
    return rc;
}
