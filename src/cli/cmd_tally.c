/*
 * cmd_tally.c - heapscope tally: group live objects by a key.
 */
#include <stdio.h>
#include <string.h>

#include "opts.h"

static const char usage[] =
    "usage: heapscope tally [--by KEY] [--top N] [--sort count|memsize] [--stream]\n"
    "                       [--keep-dumper] [--keep-tracer] [--fields-with-owner]\n"
    "                       [--json]\n"
    "                       [load options] DUMP\n"
    "\n"
    "Group live objects by KEY and print count and memsize per group, largest\n"
    "first (ties by key).  KEY is one of:\n"
    "  type, class, file, file:line, file:line:class (default; bleak_house's\n"
    "  key, untraced objects under (none):0), method, generation, gem\n"
    "\n"
    "  --by KEY      the grouping (default file:line:class)\n"
    "  --top N       rows to print (default 20; 0 = all)\n"
    "  --sort WHAT   count (default) or memsize\n"
    "  --stream      fold the dump without building the object graph: memory\n"
    "                bounded by the number of groups (same results; --no-index\n"
    "                and -v have no effect)\n"
    "  --keep-dumper keep the objects the dumper itself allocated (default: left\n"
    "                out and counted: ObjectSpace.dump_all's, the heapscope gem's\n"
    "                snapshot code's)\n"
    "  --keep-tracer keep Ruby's allocation tracer (the table of\n"
    "                trace_object_allocations, labelled <allocation tracer>;\n"
    "                default: left out and counted)\n"
    "  --fields-with-owner\n"
    "                Ruby 4.0+: count each IMEMO fields object (the instance\n"
    "                variables of a String, Array, class or typed Data) in its\n"
    "                owner's row, under the owner's key (default: a row\n"
    "                <imemo:fields> of its own, as ObjectSpace counts); not\n"
    "                with --stream\n"
    "  --json        {\"kind\": \"tally\", \"dumps\", \"by\", \"total\", \"group_count\",\n"
    "                \"groups\": [{\"key\", \"count\", \"memsize\"}], \"excluded_dumper_objects\",\n"
    "                \"warnings\"} (docs/JSON.md)\n"
    "\n"
    "--by gem: the gem of each object's allocation file: NAME-VERSION for\n"
    "gems (RubyGems, bundler, Debian's rubygems-integration), NAME below\n"
    "vendor_ruby or site_ruby, (stdlib) for Ruby's own library directories,\n"
    "(ruby) for <internal:...> files, (app) for every other file, (none)\n"
    "without allocation info.\n";

typedef struct args {
    hscope_cli_opts o;
    hscope_tally_options to;
    const char *by, *path;
    int stream;
} args;

static int
option(void *ctx, int argc, char **argv, int *i)
{
    args *a = ctx;
    const char *arg = argv[*i];
    if (strcmp(arg, "--keep-tracer") == 0) {
        a->to.flags &= ~HSCOPE_TALLY_SKIP_TRACER;
        return 1;
    }
    if (strcmp(arg, "--keep-dumper") == 0) {
        a->to.flags &= ~HSCOPE_TALLY_SKIP_DUMPER;
    } else if (strcmp(arg, "--stream") == 0) {
        a->stream = 1;
    } else if (strcmp(arg, "--fields-with-owner") == 0) {
        a->to.flags |= HSCOPE_TALLY_FIELDS_WITH_OWNER;
    } else if (strcmp(arg, "--by") == 0) {
        if (*i + 1 >= argc)
            return hscope_cli_usage_error(usage, "--by needs a KEY%s", "");
        a->by = argv[++*i];
    } else if (strcmp(arg, "--sort") == 0) {
        if (*i + 1 >= argc)
            return hscope_cli_usage_error(usage, "--sort needs count or memsize%s", "");
        arg = argv[++*i];
        if (strcmp(arg, "count") == 0)
            a->to.sort = HSCOPE_SORT_COUNT;
        else if (strcmp(arg, "memsize") == 0)
            a->to.sort = HSCOPE_SORT_MEMSIZE;
        else
            return hscope_cli_usage_error(usage, "--sort: expected count or memsize, not '%s'", arg);
    } else {
        return 0;
    }
    return 1;
}

static int
parse(args *a, int argc, char **argv)
{
    hscope_cli_args ca = { option, a, &a->path, 0, 1, "tally takes one DUMP ('%s' is extra)" };
    int rc = hscope_cli_parse_args(&a->o, &ca, argc, argv);
    if (rc)
        return rc;
    if (!a->path)
        return hscope_cli_usage_error(usage, "no DUMP given%s", "");
    if (!hscope_cli_valid_key(a->by))
        return hscope_cli_usage_error(usage, "unknown --by key '%s'", a->by);
    return 0;
}

int
hscope_cli_tally(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    args a;
    memset(&a, 0, sizeof(a));
    hscope_cli_opts_init(&a.o, "tally", usage, HSCOPE_CLI_JSON | HSCOPE_CLI_TOP, 20);
    hscope_tally_options_init(&a.to);
    a.to.flags = HSCOPE_TALLY_SKIP_DUMPER | HSCOPE_TALLY_SKIP_TRACER;
    a.by = "file:line:class";
    int rc = parse(&a, argc, argv);
    if (rc)
        return rc;
    a.to.top = a.o.top == HSCOPE_TOP_ALL ? 0 : a.o.top;
    hscope_heap_t *h = NULL;
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st;
    if (a.stream) {
        hscope_cli_progress_start(&a.o, a.path);
        st = hscope_tally_file(&t, a.path, a.by, &a.o.lo, &a.to, &err);
        hscope_cli_progress_done(&a.o);
        if (st == HSCOPE_OK)
            hscope_cli_warn_tally_damage(a.path, t);
    } else {
        if (!(h = hscope_cli_load(&a.o, a.path)))
            return HSCOPE_CLI_EXIT_BAD_INPUT;
        st = hscope_tally_compute(&t, h, a.by, &a.to, &err);
    }
    if (st == HSCOPE_OK) {
        hscope_report_options ro;
        hscope_cli_report_options(&a.o, &ro, &a.path, 1);
        st = hscope_tally_write(t, &ro, hscope_cli_write_stdout, NULL, &err);
    }
    if (st != HSCOPE_OK)
        rc = hscope_cli_fail(a.path, &err);
    hscope_tally_free(t);
    hscope_heap_free(h);
    return rc;
}
