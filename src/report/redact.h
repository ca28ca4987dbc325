/*
 * redact.h - redaction (redact.c): a copy of a dump safe to share.
 */
#ifndef HSCOPE_REPORT_REDACT_H
#define HSCOPE_REPORT_REDACT_H

#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"

struct hscope_redaction {
    hscope__mem mem;
    uint64_t lines, values, kept;
    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
};

/* The bodies of hscope_redact_write() and hscope_redact() (options
 * checked). */
hscope_status hscope__redact_to(hscope_redact_t **out, const char *in,
                                const hscope_load_options *lo, const hscope_redact_options *ro,
                                hscope_write_fn write, void *ud, hscope_error *err);
hscope_status hscope__redact_file(hscope_redact_t **out, const char *in, const char *path,
                                  const hscope_load_options *lo,
                                  const hscope_redact_options *ro, hscope_error *err);
void hscope__redact_free(hscope_redact_t *rr);

#endif
