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

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#define HS_BIGMAP 1
#endif

/* ThreadSanitizer does not see mremap: a range a moving mremap gives back
 * keeps its old accesses in TSan's shadow, and a later mapping of another
 * thread at that address reads as a race with them.  Under TSan a mapped
 * block moves by copy and munmap (which TSan sees); nothing else differs. */
#if defined(__SANITIZE_THREAD__)
#define HS_NO_MREMAP_MOVE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HS_NO_MREMAP_MOVE 1
#endif
#endif

/* Every block starts with a 16-byte header (keeps the user pointer 16-byte
 * aligned): the size asked for, then 0 for a block of the allocator
 * functions, or the length of the mapping | 1 for a block mapped here. */
#define HDR 16u

/*
 * Big blocks.  With the default allocator, a block of BIG_MIN bytes or
 * more is mapped here rather than taken from malloc, for three reasons
 * measured on loads of large dumps:
 *
 *  - malloc's mmap threshold is dynamic: once a mapped block is freed
 *    (the first dump of a series), blocks up to its size (capped at
 *    32 MiB) come from the brk heap, where realloc copies them on every
 *    growth and a free trims the heap, so the next dump faults the same
 *    pages in again; a 3-dump diff then spent more time in the kernel
 *    than parsing.  A mapped block grows with mremap: no copy, ever.
 *  - A block of HUGE bytes or more starts on a 2 MiB boundary and is
 *    marked MADV_HUGEPAGE, so its pages fault in 2 MiB at a time where
 *    transparent huge pages are enabled for madvise (most distributions):
 *    the model's columns took one minor fault per 4 KiB before.
 *  - When such a block grows and cannot grow in place, its pages move to
 *    a new 2 MiB-aligned range (mremap to a fixed address moves whole huge
 *    pages without splitting or copying them).
 *
 * The mapping is the block's size rounded up to the page, so the memory a
 * block touches is what it touched before.  A caller's allocator is never
 * bypassed: its blocks all come from its functions.
 */
#define BIG_MIN ((size_t)256 << 10)
#define HUGE_SZ ((size_t)2 << 20)

static size_t
header_tag(const void *p)
{
    size_t t;
    memcpy(&t, (const unsigned char *)p - HDR + sizeof(size_t), sizeof(t));
    return t;
}

static void *
set_header(unsigned char *b, size_t n, size_t tag)
{
    memcpy(b, &n, sizeof(n));
    memcpy(b + sizeof(size_t), &tag, sizeof(tag));
    return b + HDR;
}

#ifdef HS_BIGMAP
static size_t
page_round(size_t n)
{
    static size_t pg;
    if (!pg) {
        long v = sysconf(_SC_PAGESIZE);
        pg = v > 0 ? (size_t)v : 4096;
    }
    return n > SIZE_MAX - pg ? 0 : (n + pg - 1) & ~(pg - 1);
}

/* A fresh zeroed anonymous range of len bytes (a page multiple), on a
 * 2 MiB boundary and marked for huge pages if len >= HUGE_SZ; NULL if the
 * system has no room. */
static unsigned char *
map_range(size_t len)
{
    if (len < HUGE_SZ) {
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    if (len > SIZE_MAX - HUGE_SZ)
        return NULL;
    unsigned char *r = mmap(NULL, len + HUGE_SZ, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return NULL;
    uintptr_t a = ((uintptr_t)r + HUGE_SZ - 1) & ~(uintptr_t)(HUGE_SZ - 1);
    unsigned char *b = (unsigned char *)a;
    if (b > r)
        munmap(r, (size_t)(b - r));
    if (r + len + HUGE_SZ > b + len)
        munmap(b + len, (size_t)(r + len + HUGE_SZ - (b + len)));
#ifdef MADV_HUGEPAGE
    (void)madvise(b, len, MADV_HUGEPAGE);
#endif
    return b;
}

/* The length to map for tot bytes: whole pages, and whole 2 MiB pages for
 * a huge block (a partial one at its end would stay in 4 KiB pages, and so
 * would the rest of that 2 MiB once the block grows over it). */
static size_t
map_len(size_t tot)
{
    size_t len = page_round(tot);
    if (len >= HUGE_SZ)
        len = len > SIZE_MAX - HUGE_SZ ? 0 : (len + HUGE_SZ - 1) & ~(HUGE_SZ - 1);
    return len;
}

static void *
big_alloc(size_t tot, size_t n)
{
    size_t len = map_len(tot);
    unsigned char *b = len ? map_range(len) : NULL;
    return b ? set_header(b, n, len | 1) : NULL;
}

/* Resize a mapped block (user pointer p) to tot bytes with header size n. */
static void *
big_resize(void *p, size_t tot, size_t n)
{
    unsigned char *b = (unsigned char *)p - HDR;
    size_t old = header_tag(p) & ~(size_t)1, len = map_len(tot);
    if (!len)
        return NULL;
    if (len <= old) {
        /* shrinking (an array cut to fit): give back every page past it */
        len = page_round(tot);
        if (len < old)
            munmap(b + len, old - len);
        return set_header(b, n, (len < old ? len : old) | 1);
    }
    /* in place, unless a block turns huge: it moves to a 2 MiB boundary */
    int aligned = ((uintptr_t)b & (HUGE_SZ - 1)) == 0;
    void *q = len < HUGE_SZ || (aligned && old >= HUGE_SZ) ? mremap(b, old, len, 0) : MAP_FAILED;
    if (q == MAP_FAILED) {
        unsigned char *nb = len >= HUGE_SZ ? map_range(len) : NULL;
        if (nb) {
            /* move the pages into the aligned range (its rest stays fresh) */
#ifdef HS_NO_MREMAP_MOVE
            q = MAP_FAILED;
#else
            q = mremap(b, old, old, MREMAP_MAYMOVE | MREMAP_FIXED, nb);
#endif
            if (q == MAP_FAILED) {
                /* a kernel that cannot move it: copy */
                memcpy(nb, b, HDR + hscope__msize(p));
                munmap(b, old);
                q = nb;
            }
#ifdef MADV_HUGEPAGE
            (void)madvise(nb, len, MADV_HUGEPAGE);
#endif
        } else {
#ifdef HS_NO_MREMAP_MOVE
            q = map_range(len);
            if (!q)
                return NULL;
            memcpy(q, b, HDR + hscope__msize(p));
            munmap(b, old);
#else
            if ((q = mremap(b, old, len, MREMAP_MAYMOVE)) == MAP_FAILED)
                return NULL;
#endif
        }
    }
    return set_header(q, n, len | 1);
}
#endif

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
 * (the C library's calloc and a fresh mapping know fresh pages are already
 * zero: big tables; a caller's allocator has no calloc, so its blocks are
 * cleared here). */
static void *
block(hscope__mem *m, size_t n, int zero)
{
    size_t tot;
    if (!hscope__add_ok(n, HDR, &tot) || !account(m, n, 0))
        return NULL;
    int deflt = m->malloc_fn == def_malloc;
    void *u = NULL;
#ifdef HS_BIGMAP
    if (deflt && tot >= BIG_MIN && (u = big_alloc(tot, n)) != NULL)
        return u;
#endif
    int libc_zero = zero && deflt;
    unsigned char *b = libc_zero ? calloc(1, tot) : m->malloc_fn(m->ud, tot);
    if (!b) {
        atomic_fetch_sub(&m->used, (uint64_t)n);
        return NULL;
    }
    if (zero && !libc_zero)
        memset(b + HDR, 0, n);
    u = set_header(b, n, 0);
    return u;
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

uint64_t
hscope__msize_sum(const void *const *blocks, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        if (blocks[i])
            s += hscope__msize(blocks[i]) + HDR;
    return s;
}

/* The resized block (header set), or NULL with p unchanged. */
static void *
resize(hscope__mem *m, void *p, size_t old, size_t tot, size_t n)
{
#ifdef HS_BIGMAP
    if (header_tag(p))
        return big_resize(p, tot, n);
    if (m->malloc_fn == def_malloc && tot >= BIG_MIN) {
        /* a malloc'd block becomes big: map it once, grow it in place after */
        void *q = big_alloc(tot, n);
        if (q) {
            memcpy(q, p, old < n ? old : n);
            m->free_fn(m->ud, (unsigned char *)p - HDR);
            return q;
        }
    }
#else
    (void)old;
#endif
    unsigned char *b = m->realloc_fn(m->ud, (unsigned char *)p - HDR, tot);
    return b ? set_header(b, n, 0) : NULL;
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
    void *q = resize(m, p, old, tot, n);
    if (!q) {
        if (n > old)
            atomic_fetch_sub(&m->used, (uint64_t)(n - old));
        return NULL;
    }
    if (n <= old)
        atomic_fetch_sub(&m->used, (uint64_t)(old - n));
    return q;
}

void
hscope__free(hscope__mem *m, void *p)
{
    if (!p)
        return;
    atomic_fetch_sub(&m->used, (uint64_t)hscope__msize(p));
#ifdef HS_BIGMAP
    size_t tag = header_tag(p);
    if (tag) {
        munmap((unsigned char *)p - HDR, tag & ~(size_t)1);
        return;
    }
#endif
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
