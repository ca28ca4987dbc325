/*
 * report.h - `heapscope report`: one self-contained HTML page (no external
 * assets) answering the DESIGN.md §1 questions for one dump, a 3-dump leak
 * hunt (diff + suspects) or a series of dumps (timeline + growth ranking).
 *
 *   heapscope report [--out FILE] [--top N] [--by KEY] [load options] DUMP...
 *
 * Takes the whole argv (argv[1] == "report"); returns the exit status:
 * 0 success, 1 bad input, 2 usage error.  See docs/REPORT.md.
 */
#ifndef HSCOPE_CLI_REPORT_H
#define HSCOPE_CLI_REPORT_H

int hscope_cli_report(int argc, char **argv);

#endif
