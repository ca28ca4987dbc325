/*
 * api_sink.h - an in-memory hscope_write_fn for the API tests (test_html.c,
 * test_report.c, test_timeline.c, test_waste.c): what a writer writes, in
 * one growing NUL-terminated buffer, with a count of the calls and an
 * optional failing call.
 */
#ifndef HSCOPE_TESTS_API_SINK_H
#define HSCOPE_TESTS_API_SINK_H

#include <stddef.h>
#include <stdint.h>

typedef struct sink {
    char *p;               /* what was written, NUL-terminated; free() it */
    size_t len, cap;
    int calls, fail_after; /* fail_after > 0: the n-th call fails */
} sink;

/* hscope_write_fn: appends to the sink (user data), or returns -1 from the
 * fail_after-th call on, without writing.  Every call is counted. */
int32_t collect(void *ud, const char *data, uint64_t len);

#endif
