/*
 * main.c - the heapscope command: dispatch to the commands (one file
 * each, cmd_<name>.c; timeline, histogram, export and report in their own
 * files) and the top-level help.
 *
 * Exit codes: 0 success, 1 bad input (unreadable, not a dump, strict-mode
 * parse error, limit), 2 usage error.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "opts.h"

static const char *prog = "heapscope";

static const char usage_main[] =
    "usage: heapscope COMMAND [OPTIONS] DUMP...\n"
    "\n"
    "Analyse Ruby heap dumps written by ObjectSpace.dump_all (Ruby 2.1-4.0,\n"
    "plain or gzip).\n"
    "\n"
    "Commands:\n"
    "  summary   what is on the heap: counts, memsize by type and class, roots,\n"
    "            dangling references, skipped lines, load speed\n"
    "  tally     group live objects by type, class, file, file:line,\n"
    "            file:line:class (bleak_house style), method, generation or gem\n"
    "  diff      objects born between dumps A and B and still alive in C\n"
    "  timeline  what grows over time: per type/class/file:line series over many\n"
    "            dumps, slopes and a growing verdict; text, JSON, CSV, SVG plot\n"
    "  histogram memsize and objects per type or class of one dump (text, JSON, SVG)\n"
    "  export    dumps, objects and references as CSV/JSON lines for PostgreSQL\n"
    "            and DuckDB, with schema.sql; a V8 heap snapshot for Chrome\n"
    "            DevTools and memlab (--format heapsnapshot)\n"
    "  report    one self-contained HTML page: summary, histograms, sites,\n"
    "            retainers, dominator tree; leak suspects and timeline for 2+ dumps\n"
    "  show      one object: all its fields, what it references, what references it\n"
    "  generations  objects per allocation generation and each one's top sites\n"
    "  retained  the objects that keep the most memory alive (retained size)\n"
    "  root      paths from the GC roots to objects (text, JSON or DOT)\n"
    "  suspects  rank what holds the objects leaked between three dumps\n"
    "  redact    copy a dump with every string value replaced by length + hash\n"
    "  index     parse once, save DUMP.hsx: later commands open it instantly\n"
    "  dominators  the dominator tree: top, or the chain and subtree of ADDR\n"
    "  waste     what the heap could shrink by: duplicate strings, empty and\n"
    "            oversized collections, by place to change, with fixes\n"
    "  check     dumps against a memory budget (--budget FILE), for CI: exit 0\n"
    "            within budget, 1 over it, 2 no verdict\n"
    "  serve     explore the heap in a browser: a local, token-protected web\n"
    "            server with every view linked (dominator tree, objects, leaks)\n"
    "\n"
    "Run 'heapscope COMMAND --help' for the options of a command.\n"
    "Options for every command:\n"
    "  -h, --help       show help and exit\n"
    "  -V, --version    print the version and exit\n"
    "\n"
    "Exit status: 0 success, 1 bad input, 2 usage error (check: 0 within budget,\n"
    "1 over budget, 2 no verdict).\n";


int
main(int argc, char **argv)
{
#ifdef M_MMAP_THRESHOLD
    /* Big arrays (model columns, parser buffers, dominator arrays) come
     * and go during one command; with a fixed threshold glibc maps each on
     * its own and unmaps it when freed, so the resident set follows what is
     * in use instead of keeping freed arrays in the heap (glibc's default
     * raises the threshold after the first big free). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    if (argc < 2) {
        fputs(usage_main, stderr);
        return HSCOPE_CLI_EXIT_USAGE;
    }
    hscope_cli_guard_terminal();
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_main, stdout);
        return 0;
    }
    /* -V/--version works anywhere before "--", like -h/--help */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-V") == 0 || strcmp(argv[i], "--version") == 0) {
            printf("heapscope %s (library %s)\n", HSCOPE_VERSION_STRING, hscope_version_string());
            return 0;
        }
    }
    if (strcmp(cmd, "summary") == 0)
        return hscope_cli_summary(argc, argv);
    if (strcmp(cmd, "tally") == 0)
        return hscope_cli_tally(argc, argv);
    if (strcmp(cmd, "diff") == 0)
        return hscope_cli_diff(argc, argv);
    if (strcmp(cmd, "show") == 0)
        return hscope_cli_show(argc, argv);
    if (strcmp(cmd, "generations") == 0)
        return hscope_cli_generations(argc, argv);
    if (strcmp(cmd, "dominators") == 0)
        return hscope_cli_dominators(argc, argv);
    if (strcmp(cmd, "retained") == 0)
        return hscope_cli_retained(argc, argv);
    if (strcmp(cmd, "root") == 0)
        return hscope_cli_root(argc, argv);
    if (strcmp(cmd, "suspects") == 0)
        return hscope_cli_suspects(argc, argv);
    if (strcmp(cmd, "redact") == 0)
        return hscope_cli_redact(argc, argv);
    if (strcmp(cmd, "index") == 0)
        return hscope_cli_index(argc, argv);
    if (strcmp(cmd, "timeline") == 0)
        return hscope_cli_timeline(argc, argv);
    if (strcmp(cmd, "histogram") == 0)
        return hscope_cli_histogram(argc, argv);
    if (strcmp(cmd, "export") == 0)
        return hscope_cli_export(argc, argv);
    if (strcmp(cmd, "report") == 0)
        return hscope_cli_report(argc, argv);
    if (strcmp(cmd, "waste") == 0)
        return hscope_cli_waste(argc, argv);
    if (strcmp(cmd, "check") == 0)
        return hscope_cli_check(argc, argv);
    if (strcmp(cmd, "serve") == 0)
        return hscope_cli_serve(argc, argv);
    fprintf(stderr, "%s: unknown command '%s'\n\n%s", prog, cmd, usage_main);
    return HSCOPE_CLI_EXIT_USAGE;
}
