/*
 * origin.h - where an allocation comes from (origin.c): the gem key
 * and the dumper's own objects, one rule for every analysis.
 */
#ifndef HSCOPE_ANALYSIS_ORIGIN_H
#define HSCOPE_ANALYSIS_ORIGIN_H

#include "../core/core.h"
#include "../core/intern.h"

/* origin.c: the gem of an allocation file (a pointer into `file` or a
 * static label, and its length), and whether an allocation site is the
 * dumper's own (ObjectSpace.dump_all, the heapscope gem's snapshot code). */
void hscope__gem_of(const char *file, const char **gem, size_t *len);
int hscope__is_dumper(const char *file, const char *method);
/* The dumper rule per allocation site, judged once per site id: judged[site]
 * is 0 (not yet), 1 (no) or 2 (the dumper's); the array grows as sites
 * come.  Sites are (site_file, site_method) string ids of `strings`. */
hscope_status hscope__judge_site(hscope__mem *m, uint8_t **judged, size_t *cap,
                                 const hscope__intern *strings, const uint32_t *site_file,
                                 const uint32_t *site_method, uint32_t site,
                                 hscope_error *err);
static inline hscope_status
hscope__dumper_site(hscope__mem *m, uint8_t **judged, size_t *cap,
                    const hscope__intern *strings, const uint32_t *site_file,
                    const uint32_t *site_method, uint32_t site, int *dumper,
                    hscope_error *err)
{
    if (HS_UNLIKELY(site >= *cap || !(*judged)[site])) {
        hscope_status st = hscope__judge_site(m, judged, cap, strings, site_file,
                                              site_method, site, err);
        if (st != HSCOPE_OK)
            return st;
    }
    *dumper = (*judged)[site] == 2;
    return HSCOPE_OK;
}

#endif
