/*
 * cmd_grew.c - heapscope diff --grew: per group, the count in each dump
 * and the deltas (heapy's "grew" view).  A timeline of the dumps in the
 * order given (hscope_timeline_compute() with HSCOPE_TIMELINE_GREW),
 * ranked by the change of the count from the first dump to the last.
 */
#include <stdio.h>

#include "cli.h"

int
hscope_cli_diff_grew(char **paths, int np, const char *by, uint64_t top, int json,
                     const hscope_load_options *lo, int keep_dumper)
{
    hscope_timeline_options to = HSCOPE_TIMELINE_OPTIONS_INIT;
    to.flags = HSCOPE_TIMELINE_GREW | (keep_dumper ? HSCOPE_TIMELINE_KEEP_DUMPER : 0);
    to.by = by;
    to.metric = HSCOPE_METRIC_COUNT;
    hscope_load_options quiet = *lo;
    quiet.progress = NULL;
    hscope_timeline_t *tl = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_timeline_compute(&tl, (const char *const *)paths, (uint64_t)np, &quiet, &to,
                                &err) != HSCOPE_OK) {
        fprintf(stderr, "heapscope: %s\n", err.message);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    hscope_cli_warn_text(hscope_timeline_warning_text(tl));
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = json ? HSCOPE_FORMAT_JSON : HSCOPE_FORMAT_TEXT;
    ro.top = top ? top : HSCOPE_TOP_ALL;
    hscope_cli_text_options(&ro);
    hscope_status st = hscope_timeline_write(tl, &ro, hscope_cli_write_file, stdout, &err);
    int rc = hscope_cli_close_out(stdout, NULL, st, &err);
    hscope_timeline_free(tl);
    return rc;
}
