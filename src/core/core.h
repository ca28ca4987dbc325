/*
 * core.h - internal foundation shared by every module: allocation through
 * the handle's allocator (with accounting for max_memory), error filling,
 * checked arithmetic and growable arrays.
 *
 * Layering: core <- io <- parse <- model <- index <- analyses <- api.
 */
#ifndef HSCOPE_CORE_H
#define HSCOPE_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapscope/heapscope.h"

/*
 * HS_PREFETCH_FN marks a helper whose only effect is __builtin_prefetch:
 * GCC counts a prefetch as no side effect, finds such a helper pure and
 * deletes its calls, prefetches and all (GCC 12 at -O2).  Inlined before
 * that analysis runs, the prefetches stay where they are called.
 */
#if defined(__GNUC__)
#define HS_LIKELY(x) __builtin_expect(!!(x), 1)
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define HS_PREFETCH_FN static inline __attribute__((always_inline))
#else
#define HS_LIKELY(x) (x)
#define HS_UNLIKELY(x) (x)
#define HS_PRINTF(a, b)
#define HS_PREFETCH_FN static inline
#endif

/*
 * Memory context: one per heap (and shared by everything derived from it).
 * Every block carries a 16-byte header holding its size, so that the bytes
 * in use can be tracked for max_memory and reported as model size.
 */
typedef struct hscope__mem {
    void *(*malloc_fn)(void *, size_t);
    void *(*realloc_fn)(void *, void *, size_t);
    void (*free_fn)(void *, void *);
    void *ud;
    uint64_t limit;           /* 0: none */
    _Atomic uint64_t used;    /* bytes currently allocated */
    _Atomic uint64_t peak;
} hscope__mem;

void hscope__mem_init(hscope__mem *m, const hscope_allocator *a,
                      uint64_t limit);
void *hscope__malloc(hscope__mem *m, size_t n);
void *hscope__calloc(hscope__mem *m, size_t count, size_t size);
void *hscope__realloc(hscope__mem *m, void *p, size_t n);
void hscope__free(hscope__mem *m, void *p);
/* Size of a block from hscope__malloc (0 for NULL). */
size_t hscope__msize(const void *p);
/* The memory n blocks (NULL ones skipped) hold: their sizes and the size
 * header of each, as the allocator sees them. */
uint64_t hscope__msize_sum(const void *const *blocks, size_t n);

/* Errors: "first error wins".  Internal code always passes a non-NULL
 * hscope_error; the API layer copies it out to the caller's struct. */
hscope_status hscope__fail(hscope_error *err, hscope_status st,
                           const char *fmt, ...) HS_PRINTF(3, 4);
hscope_status hscope__fail_at(hscope_error *err, hscope_status st,
                              uint64_t line, uint64_t offset,
                              const char *fmt, ...) HS_PRINTF(5, 6);
hscope_status hscope__fail_errno(hscope_error *err, int errnum,
                                 const char *fmt, ...) HS_PRINTF(3, 4);
hscope_status hscope__nomem(hscope_error *err, size_t n);
void hscope__error_copy_out(hscope_error *dst, const hscope_error *src);

/* The bodies of the exported helpers of the same names without the
 * second underscore (hscope__error_init() ...): every layer may call these;
 * api/core_api.c exports them. */
void hscope__error_init(hscope_error *err);
const char *hscope__status_name(hscope_status st);
const char *hscope__skip_reason_name(int32_t reason);
void hscope__load_options_init(hscope_load_options *o);
void hscope__load_stats_init(hscope_load_stats *s);

/* Checked arithmetic: return false on overflow. */
static inline bool
hscope__mul_ok(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool
hscope__add_ok(size_t a, size_t b, size_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* Sums of values from the input saturate instead of wrapping (a hostile
 * dump can claim memsizes near 2^64). */
static inline uint64_t
hscope__sat_add(uint64_t a, uint64_t b)
{
    uint64_t s;
    return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

/* Hash of three 32-bit words for the small open-addressing tables (sites,
 * tally groups), in registers: hashing a 12-byte array on the stack with
 * XXH3 reads it back with 8-byte loads that straddle the 4-byte stores, a
 * store-forwarding stall on every call (measured: the largest cost of the
 * parser's site lookup).  Multiply-xorshift mixing (splitmix64's finaliser);
 * the tables use the low bits. */
static inline uint64_t
hscope__hash3(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t x = (((uint64_t)a << 32) | b) * 0x9E3779B97F4A7C15ull;
    x ^= (uint64_t)c * 0xC2B2AE3D27D4EB4Full + (x >> 31);
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/*
 * Ensure an array `*p` of `*cap` elements of `elem` bytes can hold `need`
 * elements; grows by 1.5x-2x.  Returns HSCOPE_OK or fills err.
 */
hscope_status hscope__grow(hscope__mem *m, void **p, size_t *cap,
                           size_t need, size_t elem, hscope_error *err);

/* Validate a caller's load options (size-versioned, zero unknown tail,
 * known flags, complete allocator) into a full-size copy; NULL = defaults. */
hscope_status hscope__read_load_options(const hscope_load_options *in,
                                        hscope_load_options *out,
                                        hscope_error *err);

/* 1 if bytes [known, size) of a caller's options struct are all zero (a
 * newer caller's fields this library does not know must be unused). */
int hscope__tail_is_zero(const void *opts, uint32_t size, size_t known);

/* Copy load statistics into a caller's struct: its first dst->size bytes,
 * keeping dst->size (a smaller, older struct gets the fields it knows). */
void hscope__stats_copy_out(hscope_load_stats *dst, const hscope_load_stats *src);

/* A caller's list of dump paths (timeline, export, HTML report): at
 * least one, none NULL, at most 2^32. */
hscope_status hscope__check_paths(const char *const *paths, uint64_t n, hscope_error *err);

/* Monotonic clock in nanoseconds. */
uint64_t hscope__now_ns(void);

/* A redacted value (report/redact.c writes it, the waste analysis reads
 * it): "[redacted N bytes xxh3:H]", N the decoded value's length and H the
 * XXH3-64 of its bytes in 16 hex digits.  1 and *len, *hash when [v, v+n)
 * is one exactly; legacy (the "xxh64:" of older copies, made from the text
 * as written): 1 for that form too, without a usable identity. */
int hscope__redacted_parse(const char *v, size_t n, uint64_t *len, uint64_t *hash, int *legacy);
#define HSCOPE__REDACTED_MIN 40 /* the shortest placeholder: N of one digit */

/* snprintf into a fixed buffer, always terminated. */
void hscope__strlcpy(char *dst, const char *src, size_t n);
/* A copy of s[0..n) and a NUL, allocated with m; NULL when out of memory. */
char *hscope__strndup(hscope__mem *m, const char *s, size_t n);

/* Length (1-4) of the valid UTF-8 sequence at s[0..avail) and its code
 * point in *cp; 0 if the bytes are not valid UTF-8 (overlong, surrogate,
 * above U+10FFFF, cut short).  The library's only UTF-8 decoder. */
int hscope__utf8_seq(const unsigned char *s, size_t avail, uint32_t *cp);
/* Display columns of s[0..len): one per code point, one per invalid byte. */
size_t hscope__utf8_columns(const char *s, size_t len);
/* Bytes of s[0..len) that make up its first `cols` display columns (each
 * code point one column, an invalid byte one), as hscope__utf8_columns
 * counts them. */
size_t hscope__utf8_skip_columns(const char *s, size_t len, size_t cols);

/* Run fn(a), and fn(b) too when `both`: b on a second thread while a runs
 * on this one (on this one after a if no thread can be started). */
void hscope__run_pair(void *(*fn)(void *), void *a, void *b, int both);

/* A sort key: four words compared in order (sort.c).  Sort a[0 .. n)
 * ascending and stably, with tmp room for n keys (the merges' scratch). */
typedef struct hscope__key4 {
    uint64_t k[4];
} hscope__key4;
void hscope__key4_sort(hscope__key4 *a, size_t n, hscope__key4 *tmp);

/* ------------------------------------------------------------------ */
/* Thread pool and least squares (pool.c, fit.c)                      */
/* ------------------------------------------------------------------ */

/* Online cores (at least 1). */
uint32_t hscope__cores(void);

/* A job of hscope__pool_run(): job i of n; return non-zero to stop the
 * hand-out of the jobs not started yet (those running finish). */
typedef int (*hscope__job_fn)(void *ctx, uint64_t i);
#define HSCOPE__POOL_MAX 256
/*
 * Run fn(ctx, i) for i in [0, n), each once, on up to `threads` threads
 * (0: one per core; never more than n or HSCOPE__POOL_MAX), the calling
 * thread included; jobs are handed out in order of i.  Runs everything on
 * the calling thread when no thread can be started.  Returns 1 when a job
 * stopped the hand-out, else 0.
 */
int hscope__pool_run(uint64_t n, uint32_t threads, hscope__job_fn fn, void *ctx);

/* A least-squares line y = a + slope x. */
typedef struct hscope__fit {
    double slope;    /* 0 when every x is the same */
    double r2;       /* square of the correlation; 0 when x or y is constant */
    double mean;     /* of y */
    int ok;          /* 1 when the x values are not all the same */
} hscope__fit;
void hscope__fit_line(const double *x, const double *y, size_t n, hscope__fit *out);

#endif
