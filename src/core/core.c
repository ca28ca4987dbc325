/*
 * core.c - allocation with accounting, error filling, helpers.
 */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HDR 16u /* keeps 16-byte alignment of the user pointer */

static void *
def_malloc(void *ud, size_t n)
{
    (void)ud;
    return malloc(n);
}

static void *
def_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    return realloc(p, n);
}

static void
def_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

void
hscope__mem_init(hscope__mem *m, const hscope_allocator *a, uint64_t limit)
{
    memset(m, 0, sizeof(*m));
    if (a && a->malloc_fn && a->realloc_fn && a->free_fn) {
        m->malloc_fn = a->malloc_fn;
        m->realloc_fn = a->realloc_fn;
        m->free_fn = a->free_fn;
        m->ud = a->user_data;
    } else {
        m->malloc_fn = def_malloc;
        m->realloc_fn = def_realloc;
        m->free_fn = def_free;
    }
    m->limit = limit;
    atomic_init(&m->used, 0);
    atomic_init(&m->peak, 0);
}

/* Reserve `n` more bytes against the limit; false if it would exceed it. */
static bool
account(hscope__mem *m, size_t add, size_t sub)
{
    uint64_t now = atomic_fetch_add(&m->used, (uint64_t)add) + add;
    if (m->limit && add > sub && now - sub > m->limit) {
        atomic_fetch_sub(&m->used, (uint64_t)add);
        return false;
    }
    atomic_fetch_sub(&m->used, (uint64_t)sub);
    now -= sub;
    uint64_t pk = atomic_load(&m->peak);
    while (now > pk && !atomic_compare_exchange_weak(&m->peak, &pk, now)) {
    }
    return true;
}

/* A block of n bytes after the size header, accounted; zeroed if `zero`
 * (the C library's calloc knows fresh pages are already zero: big tables;
 * a caller's allocator has no calloc, so its blocks are cleared here). */
static void *
block(hscope__mem *m, size_t n, int zero)
{
    size_t tot;
    if (!hscope__add_ok(n, HDR, &tot) || !account(m, n, 0))
        return NULL;
    int libc_zero = zero && m->malloc_fn == def_malloc;
    unsigned char *b = libc_zero ? calloc(1, tot) : m->malloc_fn(m->ud, tot);
    if (!b) {
        atomic_fetch_sub(&m->used, (uint64_t)n);
        return NULL;
    }
    if (zero && !libc_zero)
        memset(b + HDR, 0, n);
    memcpy(b, &n, sizeof(n));
    return b + HDR;
}

void *
hscope__malloc(hscope__mem *m, size_t n)
{
    return block(m, n, 0);
}

void *
hscope__calloc(hscope__mem *m, size_t count, size_t size)
{
    size_t n;
    return hscope__mul_ok(count, size, &n) ? block(m, n, 1) : NULL;
}

size_t
hscope__msize(const void *p)
{
    size_t n = 0;
    if (p)
        memcpy(&n, (const unsigned char *)p - HDR, sizeof(n));
    return n;
}

void *
hscope__realloc(hscope__mem *m, void *p, size_t n)
{
    if (!p)
        return hscope__malloc(m, n);
    size_t old = hscope__msize(p), tot;
    if (!hscope__add_ok(n, HDR, &tot))
        return NULL;
    if (n > old && !account(m, n, old))
        return NULL;
    unsigned char *b = m->realloc_fn(m->ud, (unsigned char *)p - HDR, tot);
    if (!b) {
        if (n > old)
            atomic_fetch_sub(&m->used, (uint64_t)(n - old));
        return NULL;
    }
    if (n <= old)
        atomic_fetch_sub(&m->used, (uint64_t)(old - n));
    memcpy(b, &n, sizeof(n));
    return b + HDR;
}

void
hscope__free(hscope__mem *m, void *p)
{
    if (!p)
        return;
    atomic_fetch_sub(&m->used, (uint64_t)hscope__msize(p));
    m->free_fn(m->ud, (unsigned char *)p - HDR);
}

hscope_status
hscope__grow(hscope__mem *m, void **p, size_t *cap, size_t need, size_t elem,
             hscope_error *err)
{
    if (need <= *cap)
        return HSCOPE_OK;
    size_t nc = *cap ? *cap + *cap / 2 : 64, bytes;
    if (*cap < (1u << 20))
        nc = *cap ? *cap * 2 : 64;
    if (nc < need)
        nc = need;
    if (!hscope__mul_ok(nc, elem, &bytes))
        return hscope__fail(err, HSCOPE_ERR_LIMIT,
                            "array of %zu elements overflows size_t", nc);
    void *q = hscope__realloc(m, *p, bytes);
    if (!q)
        return hscope__nomem(err, bytes);
    *p = q;
    *cap = nc;
    return HSCOPE_OK;
}

static hscope_status
vfail(hscope_error *err, hscope_status st, uint64_t line, uint64_t off,
      int errnum, const char *fmt, va_list ap)
{
    if (!err || err->status != HSCOPE_OK)
        return st;
    err->status = st;
    err->line = line;
    err->offset = off;
    err->sys_errno = errnum;
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    return st;
}

hscope_status
hscope__fail(hscope_error *err, hscope_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, st, 0, 0, 0, fmt, ap);
    va_end(ap);
    return st;
}

static hscope_status HS_PRINTF(3, 4)
hscope__fail_at_errno(hscope_error *err, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, HSCOPE_ERR_IO, 0, 0, errnum, fmt, ap);
    va_end(ap);
    return HSCOPE_ERR_IO;
}

hscope_status
hscope__fail_at(hscope_error *err, hscope_status st, uint64_t line,
                uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, st, line, offset, 0, fmt, ap);
    va_end(ap);
    return st;
}

hscope_status
hscope__fail_errno(hscope_error *err, int errnum, const char *fmt, ...)
{
    char buf[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return hscope__fail_at_errno(err, errnum, "%s: %s", buf, strerror(errnum));
}

void
hscope__error_init(hscope_error *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof(*err));
    err->size = sizeof(*err);
}

const char *
hscope__status_name(hscope_status st)
{
    static const char *const names[] = {
        "HSCOPE_OK", "HSCOPE_ERR_INVALID_ARG", "HSCOPE_ERR_NOMEM",
        "HSCOPE_ERR_IO", "HSCOPE_ERR_PARSE", "HSCOPE_ERR_NOT_A_DUMP",
        "HSCOPE_ERR_GZIP", "HSCOPE_ERR_LIMIT", "HSCOPE_ERR_CANCELLED",
        "HSCOPE_ERR_NOT_FOUND", "HSCOPE_ERR_UNSUPPORTED",
        "HSCOPE_ERR_TRUNCATED", "HSCOPE_ERR_INTERNAL", "HSCOPE_ERR_CORRUPT",
        "HSCOPE_ERR_STALE",
    };
    if (st < 0 || (size_t)st >= sizeof(names) / sizeof(names[0]))
        return "HSCOPE_ERR_UNKNOWN";
    return names[st];
}

const char *
hscope__skip_reason_name(int32_t r)
{
    static const char *const names[HSCOPE_SKIP__COUNT] = {
        "bad_json", "not_object", "no_type", "no_address", "bad_value",
        "number_range", "too_long", "empty", "truncated", "too_deep",
        "too_many_references",
    };
    return r >= 0 && r < HSCOPE_SKIP__COUNT ? names[r] : "?";
}

void
hscope__load_options_init(hscope_load_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
}

void
hscope__load_stats_init(hscope_load_stats *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof(*s));
    s->size = sizeof(*s);
}

hscope_status
hscope__nomem(hscope_error *err, size_t n)
{
    return hscope__fail(err, HSCOPE_ERR_NOMEM,
                        "out of memory (allocating %zu bytes)", n);
}

void
hscope__error_copy_out(hscope_error *dst, const hscope_error *src)
{
    if (!dst || dst->size < offsetof(hscope_error, status) + sizeof(int32_t))
        return;
    size_t n = dst->size < sizeof(*src) ? dst->size : sizeof(*src);
    uint32_t keep = dst->size;
    memcpy(dst, src, n);
    dst->size = keep;
    if (n == sizeof(*src))
        dst->message[sizeof(dst->message) - 1] = '\0';
}

uint64_t
hscope__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
hscope__stats_copy_out(hscope_load_stats *dst, const hscope_load_stats *src)
{
    uint32_t keep = dst->size;
    memcpy(dst, src, keep < sizeof(*dst) ? keep : sizeof(*dst));
    dst->size = keep;
}

void
hscope__strlcpy(char *dst, const char *src, size_t n)
{
    if (!n)
        return;
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

char *
hscope__strndup(hscope__mem *m, const char *s, size_t n)
{
    char *p = n < SIZE_MAX ? hscope__malloc(m, n + 1) : NULL;
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* Check a caller's options struct: known size, zero unknown tail. */
hscope_status
hscope__read_load_options(const hscope_load_options *in,
                          hscope_load_options *out, hscope_error *err)
{
    memset(out, 0, sizeof(*out));
    out->size = sizeof(*out);
    if (!in)
        return HSCOPE_OK;
    if (in->size < offsetof(hscope_load_options, flags) + sizeof(uint32_t))
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                            "hscope_load_options.size is %u; initialise the struct",
                            in->size);
    size_t n = in->size < sizeof(*out) ? in->size : sizeof(*out);
    if (!hscope__tail_is_zero(in, in->size, sizeof(*out)))
            return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                                "hscope_load_options has unknown non-zero fields "
                                "(newer header than library?)");
    memcpy(out, in, n);
    out->size = sizeof(*out);
    if (out->flags & ~(uint32_t)(HSCOPE_LOAD_STRICT | HSCOPE_LOAD_VALUES | HSCOPE_LOAD_NO_GZIP |
                                 HSCOPE_LOAD_USE_INDEX))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "unknown load flags 0x%x", out->flags);
    if (out->allocator &&
        (out->allocator->size < sizeof(hscope_allocator) ||
         !out->allocator->malloc_fn || !out->allocator->realloc_fn ||
         !out->allocator->free_fn))
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                            "hscope_allocator needs size and all three functions");
    return HSCOPE_OK;
}


int
hscope__tail_is_zero(const void *opts, uint32_t size, size_t known)
{
    for (size_t i = known; i < size; i++)
        if (((const unsigned char *)opts)[i])
            return 0;
    return 1;
}

void
hscope__run_pair(void *(*fn)(void *), void *a, void *b, int both)
{
    pthread_t th;
    int helper = both && pthread_create(&th, NULL, fn, b) == 0;
    fn(a);
    if (helper)
        pthread_join(th, NULL);
    else if (both)
        fn(b);
}

hscope_status
hscope__check_paths(const char *const *paths, uint64_t n, hscope_error *err)
{
    if (!paths || n == 0)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "no dump paths given");
    if (n > ((uint64_t)1 << 32))
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "%llu dumps: too many",
                            (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++)
        if (!paths[i])
            return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "path %llu is NULL",
                                (unsigned long long)i);
    return HSCOPE_OK;
}

int
hscope__redacted_parse(const char *v, size_t n, uint64_t *len, uint64_t *hash, int *legacy)
{
    static const char pre[] = "[redacted ", mid[] = " bytes xxh";
    size_t i = sizeof(pre) - 1;
    if (n < HSCOPE__REDACTED_MIN || memcmp(v, pre, i) != 0)
        return 0;
    uint64_t x = 0;
    size_t d = 0;
    for (; i < n && v[i] >= '0' && v[i] <= '9' && d < 19; i++, d++)
        x = x * 10 + (uint64_t)(v[i] - '0');
    if (!d || (d > 1 && v[i - d] == '0') || n - i < sizeof(mid) - 1 + 2 + 16 + 1 ||
        memcmp(v + i, mid, sizeof(mid) - 1) != 0)
        return 0;
    i += sizeof(mid) - 1;
    int old;
    if (v[i] == '3' && v[i + 1] == ':')
        old = 0, i += 2;
    else if (n - i >= 4 && memcmp(v + i, "64:", 3) == 0)
        old = 1, i += 3;
    else
        return 0;
    if (n - i != 17 || v[n - 1] != ']')
        return 0;
    uint64_t h = 0;
    for (size_t k = 0; k < 16; k++) {
        char c = v[i + k];
        if (c >= '0' && c <= '9')
            h = h << 4 | (uint64_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            h = h << 4 | (uint64_t)(c - 'a' + 10);
        else
            return 0;
    }
    *len = x;
    *hash = h;
    *legacy = old;
    return 1;
}
