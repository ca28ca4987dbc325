/*
 * api_sink.c - the API tests' in-memory write function (api_sink.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_sink.h"

int32_t
collect(void *ud, const char *data, uint64_t len)
{
    sink *s = ud;
    s->calls++;
    if (s->fail_after && s->calls >= s->fail_after)
        return -1;
    if (s->len + len + 1 > s->cap) {
        s->cap = (s->len + (size_t)len + 1) * 2;
        s->p = realloc(s->p, s->cap);
        assert_non_null(s->p);
    }
    memcpy(s->p + s->len, data, (size_t)len);
    s->len += (size_t)len;
    s->p[s->len] = '\0';
    return 0;
}
