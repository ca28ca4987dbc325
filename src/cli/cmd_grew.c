/*
 * cmd_grew.c - heapscope diff --grew: per group, the value in each dump
 * and the deltas (heapy's "grew" view).  A timeline of the dumps in the
 * order given (hscope_timeline_compute() with HSCOPE_TIMELINE_GREW),
 * ranked by the change of the metric from the first dump to the last; the
 * metric is the library's default (memsize, as timeline and the report)
 * unless --metric says.
 */
#include <stdio.h>

#include "opts.h"

int
hscope_cli_diff_grew(const hscope_cli_opts *o, char **paths, int np, const char *by,
                     int32_t metric, uint32_t keep)
{
    hscope_timeline_options to = HSCOPE_TIMELINE_OPTIONS_INIT;
    to.flags = HSCOPE_TIMELINE_GREW | keep;
    to.by = by;
    to.metric = metric;
    hscope_timeline_t *tl = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_timeline_compute(&tl, (const char *const *)paths, (uint64_t)np, &o->lo, &to,
                                &err) != HSCOPE_OK)
        return hscope_cli_fail(NULL, &err);
    hscope_cli_warn_timeline(tl);
    hscope_report_options ro;
    hscope_cli_report_options(o, &ro, NULL, 0);
    hscope_cli_ascii(&ro);
    int rc = hscope_cli_close_out(
        stdout, NULL, hscope_timeline_write(tl, &ro, hscope_cli_write_file, stdout, &err), &err);
    hscope_timeline_free(tl);
    return rc;
}
