/*
 * fuzz_check.c - shared by fuzz_parse and fuzz_gzip: loading through the
 * public API with a counting (optionally failing) allocator, a full walk
 * of a loaded heap through every accessor, bulk column and tally key, the
 * comparison of two loads, and the invariants that must hold for any
 * input.  A violated invariant calls
 * abort() (after printing what broke), so libFuzzer reports it as a crash
 * and the replay test fails.
 *
 * Not compiled on its own: fuzz_parse.c and fuzz_gzip.c #include it, so
 * everything here is static and each target stays one translation unit.
 * Public header only: these targets see the library as a user does.
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapscope/heapscope.h"
#include "../watchdog.h"

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

#if defined(__GNUC__)
#define FZ_UNUSED __attribute__((unused))
#define FZ_NORETURN __attribute__((noreturn))
#else
#define FZ_UNUSED
#define FZ_NORETURN
#endif

#define FZ_CHECK(cond, what)                                  \
    do {                                                      \
        if (!(cond))                                          \
            fz_fail(__FILE__, __LINE__, what);                \
    } while (0)

/* Allocator hooks that count live blocks (a load or a free that leaves
 * any behind is a leak, caught even without LeakSanitizer), can fail
 * every call from the fail_at-th on, and recycle big blocks (below).
 * Thread-safe: the parallel parser calls them from its workers (so with
 * threads the calls that fail vary from run to run). */
typedef struct fz_alloc {
    hscope_allocator hooks;
    _Atomic uint64_t calls;   /* malloc + realloc calls */
    _Atomic uint64_t live;    /* blocks not yet freed */
    uint64_t fail_at;         /* 0: never fail */
    _Atomic uint64_t failed;  /* calls refused */
} fz_alloc;

/* One load: status, error, stats and the heap (NULL on failure). */
typedef struct fz_result {
    hscope_status st;
    hscope_error err;
    hscope_load_stats stats;
    hscope_heap_t *heap;
} fz_result;

/* ------------------------------------------------------------------ */
/* Invariant failures                                                  */
/* ------------------------------------------------------------------ */

static FZ_NORETURN void
fz_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "fuzz invariant violated at %s:%d: %s\n", file, line, what);
    fflush(stderr);
    abort();
}

/* ------------------------------------------------------------------ */
/* Counting / failing allocator                                        */
/* ------------------------------------------------------------------ */

/*
 * Big-block cache.  Every load allocates a 4 MiB line buffer (less with a
 * small max_line_bytes) and a 256 KiB input buffer, and clears the first;
 * under ASan each such block is a fresh mmap, so a load of a 30-byte
 * input costs a thousand page faults and fuzzing crawls.  Freed blocks of
 * FZ_BIG bytes or more are kept (exact size, a few of them) and handed out
 * again; while cached they are poisoned, so ASan still reports any use
 * after free.  Every block carries a 16-byte header with its size.
 */
#define FZ_HDR 16u
#define FZ_BIG ((size_t)128 << 10)
#define FZ_CACHE 16

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FZ_ASAN 1
#endif
#ifdef FZ_ASAN
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#define FZ_POISON(p, n) __asan_poison_memory_region((p), (n))
#define FZ_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define FZ_POISON(p, n) ((void)(p), (void)(n))
#define FZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

static unsigned char *fz_cache[FZ_CACHE]; /* header pointers */
static pthread_mutex_t fz_cache_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t
fz_size(const unsigned char *b)
{
    size_t n;
    memcpy(&n, b, sizeof(n));
    return n;
}

static void *
fz_raw_alloc(size_t n)
{
    if (n > SIZE_MAX - FZ_HDR)
        return NULL;
    if (n >= FZ_BIG) {
        unsigned char *hit = NULL;
        pthread_mutex_lock(&fz_cache_mu);
        for (int i = 0; i < FZ_CACHE && !hit; i++) {
            unsigned char *b = fz_cache[i];
            if (!b)
                continue;
            FZ_UNPOISON(b, FZ_HDR);
            if (fz_size(b) == n) {
                fz_cache[i] = NULL;
                hit = b;
            } else {
                FZ_POISON(b, FZ_HDR);
            }
        }
        pthread_mutex_unlock(&fz_cache_mu);
        if (hit) {
            FZ_UNPOISON(hit + FZ_HDR, n);
            memset(hit + FZ_HDR, 0xbe, 64); /* no stale contents at the start */
            return hit + FZ_HDR;
        }
    }
    unsigned char *b = malloc(n + FZ_HDR);
    if (!b)
        return NULL;
    memcpy(b, &n, sizeof(n));
    return b + FZ_HDR;
}

static void
fz_raw_free(void *p)
{
    unsigned char *b = (unsigned char *)p - FZ_HDR;
    size_t n = fz_size(b);
    if (n >= FZ_BIG) {
        unsigned char *evict = NULL;
        FZ_POISON(b, FZ_HDR + n);
        pthread_mutex_lock(&fz_cache_mu);
        int slot = -1;
        for (int i = 0; i < FZ_CACHE && slot < 0; i++)
            if (!fz_cache[i])
                slot = i;
        if (slot < 0) { /* full: evict one, keep the newest */
            slot = (int)(n % FZ_CACHE);
            evict = fz_cache[slot];
        }
        fz_cache[slot] = b;
        pthread_mutex_unlock(&fz_cache_mu);
        if (evict) {
            FZ_UNPOISON(evict, FZ_HDR);
            FZ_UNPOISON(evict, FZ_HDR + fz_size(evict));
            free(evict);
        }
        return;
    }
    free(b);
}

static void *
fz_raw_realloc(void *p, size_t n)
{
    unsigned char *b = (unsigned char *)p - FZ_HDR;
    size_t old = fz_size(b);
    if (n > SIZE_MAX - FZ_HDR)
        return NULL;
    if (old < FZ_BIG && n < FZ_BIG) {
        unsigned char *q = realloc(b, n + FZ_HDR);
        if (!q)
            return NULL;
        memcpy(q, &n, sizeof(n));
        return q + FZ_HDR;
    }
    void *q = fz_raw_alloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    fz_raw_free(p);
    return q;
}

static int
fz_refuse(fz_alloc *a)
{
    uint64_t nth = atomic_fetch_add(&a->calls, 1) + 1;
    if (a->fail_at && nth >= a->fail_at) {
        atomic_fetch_add(&a->failed, 1);
        return 1;
    }
    return 0;
}

static void *
fz_malloc(void *ud, size_t n)
{
    fz_alloc *a = ud;
    if (fz_refuse(a))
        return NULL;
    void *p = fz_raw_alloc(n);
    if (p)
        atomic_fetch_add(&a->live, 1);
    return p;
}

static void *
fz_realloc(void *ud, void *p, size_t n)
{
    fz_alloc *a = ud;
    if (!p)
        return fz_malloc(ud, n);
    if (fz_refuse(a))
        return NULL;
    return fz_raw_realloc(p, n);
}

static void
fz_free(void *ud, void *p)
{
    fz_alloc *a = ud;
    if (!p)
        return;
    FZ_CHECK(atomic_fetch_sub(&a->live, 1) > 0, "free of a block the allocator does not own");
    fz_raw_free(p);
}

static FZ_UNUSED void
fz_alloc_init(fz_alloc *a, uint64_t fail_at)
{
    memset(&a->hooks, 0, sizeof(a->hooks));
    atomic_init(&a->calls, 0);
    atomic_init(&a->live, 0);
    atomic_init(&a->failed, 0);
    a->fail_at = fail_at;
    a->hooks.size = sizeof(a->hooks);
    a->hooks.malloc_fn = fz_malloc;
    a->hooks.realloc_fn = fz_realloc;
    a->hooks.free_fn = fz_free;
    a->hooks.user_data = a;
}

/* ------------------------------------------------------------------ */
/* Options from a selector byte                                        */
/* ------------------------------------------------------------------ */

static FZ_UNUSED void
fz_options(uint8_t sel, hscope_load_options *o)
{
    static const uint64_t max_line[4] = { 0, 256, 40, 4096 };
    hscope_load_options_init(o);
    if (sel & 0x01)
        o->flags |= HSCOPE_LOAD_NO_GZIP;
    if (sel & 0x02)
        o->flags |= HSCOPE_LOAD_VALUES;
    if (sel & 0x04)
        o->max_references = 2;
    o->max_line_bytes = max_line[((sel >> 3) & 1) | ((sel >> 4) & 2)];
    if (sel & 0x40)
        o->max_objects = 3;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

static void
check_error(const hscope_error *err, hscope_status st)
{
    FZ_CHECK(err->status == st, "error.status differs from the returned status");
    FZ_CHECK(memchr(err->message, '\0', sizeof(err->message)) != NULL,
             "error message is not NUL-terminated");
    FZ_CHECK(err->message[0] != '\0', "failed call left an empty error message");
    FZ_CHECK(err->sys_errno == 0, "sys_errno set for a memory input");
    FZ_CHECK(st != HSCOPE_ERR_INTERNAL, "HSCOPE_ERR_INTERNAL (a library bug)");
    FZ_CHECK(st != HSCOPE_ERR_INVALID_ARG && st != HSCOPE_ERR_UNSUPPORTED &&
             st != HSCOPE_ERR_IO && st != HSCOPE_ERR_CANCELLED,
             "unexpected status for a valid call on a memory input");
}

static FZ_UNUSED void
fz_load(fz_result *r, const void *data, size_t len,
        const hscope_load_options *opts, fz_alloc *alloc)
{
    hscope_load_options o;
    const hscope_load_options *use = opts;
    memset(r, 0, sizeof(*r));
    hscope_error_init(&r->err);
    hscope_load_stats_init(&r->stats);
    if (alloc) {
        if (opts)
            o = *opts;
        else
            hscope_load_options_init(&o);
        o.allocator = &alloc->hooks;
        use = &o;
    }
    hscope_heap_t *h = (hscope_heap_t *)(uintptr_t)1; /* must become NULL */
    r->st = hscope_heap_open_memory(&h, data, len, use, &r->err);
    if (r->st != HSCOPE_OK) {
        FZ_CHECK(h == NULL, "*out not NULL after a failed load");
        check_error(&r->err, r->st);
        if (alloc)
            FZ_CHECK(alloc->live == 0, "a failed load leaked memory");
        if (r->st == HSCOPE_ERR_NOMEM)
            FZ_CHECK(alloc && alloc->failed, "HSCOPE_ERR_NOMEM without an allocation failure");
        return;
    }
    FZ_CHECK(h != NULL, "load returned OK but no heap");
    FZ_CHECK(hscope_heap_stats(h, &r->stats) == HSCOPE_OK, "hscope_heap_stats failed");
    r->heap = h;
}

static FZ_UNUSED void
fz_release(fz_result *r, fz_alloc *alloc)
{
    hscope_heap_free(r->heap);
    r->heap = NULL;
    if (alloc)
        FZ_CHECK(alloc->live == 0, "memory still allocated after hscope_heap_free");
}

/* ------------------------------------------------------------------ */
/* The walk                                                            */
/* ------------------------------------------------------------------ */

static volatile size_t fz_sink; /* keeps the reads alive */

/* memsize sums saturate at 2^64-1 in the library (hostile values) */
static uint64_t
fz_sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int
fz_streq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void
touch(const char *s)
{
    if (s)
        fz_sink += strlen(s);
}

static void
check_tally(hscope_heap_t *h, const char *key, const hscope_load_stats *s,
            uint32_t sort, uint64_t top, int may_fail)
{
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    to.sort = sort;
    to.top = top;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_tally_t *t = NULL;
    hscope_status st = hscope_tally_compute(&t, h, key, &to, &err);
    if (st != HSCOPE_OK) {
        /* only injected allocation failures are acceptable */
        FZ_CHECK(may_fail && st == HSCOPE_ERR_NOMEM,
                 "hscope_tally_compute failed on a loaded heap");
        FZ_CHECK(t == NULL, "tally: *out not NULL after a failure");
        check_error(&err, st);
        return;
    }
    uint64_t rows = hscope_tally_row_count(t), groups = hscope_tally_group_count(t);
    uint64_t tot_n = 0, tot_m = 0;
    hscope_tally_totals(t, &tot_n, &tot_m);
    FZ_CHECK(tot_n == s->objects, "tally totals: count != objects");
    FZ_CHECK(tot_m == s->total_memsize, "tally totals: memsize != total_memsize");
    FZ_CHECK(rows == (top && top < groups ? top : groups), "tally row count vs top");
    FZ_CHECK(groups <= s->objects, "more tally groups than objects");
    FZ_CHECK(s->objects == 0 || groups > 0, "no tally groups for a non-empty heap");
    uint64_t cnt = 0, mem = 0;
    const char *prev = NULL;
    uint64_t prev_val = 0;
    for (uint64_t i = 0; i < rows; i++) {
        const char *k = hscope_tally_row_key(t, i);
        uint64_t c = hscope_tally_row_count_of(t, i);
        uint64_t m = hscope_tally_row_memsize(t, i);
        FZ_CHECK(k != NULL, "tally row without a key");
        FZ_CHECK(c > 0, "tally row with a zero count");
        touch(k);
        uint64_t v = sort == HSCOPE_SORT_MEMSIZE ? m : c;
        if (i > 0) {
            FZ_CHECK(v <= prev_val, "tally rows not sorted (descending)");
            /* Keys may hold NUL bytes (decoded \u0000), so equal prefixes
             * are possible; the order is by C string. */
            if (v == prev_val)
                FZ_CHECK(strcmp(prev, k) <= 0, "tally ties not sorted by key");
        }
        prev = k;
        prev_val = v;
        cnt += c;
        mem = fz_sat_add(mem, m);
    }
    FZ_CHECK(hscope_tally_row_key(t, rows) == NULL, "tally row key past the end");
    FZ_CHECK(hscope_tally_row_count_of(t, rows) == 0, "tally row count past the end");
    if (rows == groups) {
        FZ_CHECK(cnt == s->objects, "tally counts do not sum to the object count");
        FZ_CHECK(mem == s->total_memsize, "tally memsize does not sum to total_memsize");
    }
    hscope_tally_free(t);
}

/*
 * Walk every object of a loaded heap through the accessors, check the
 * invariants, and tally by every key.  `alloc` is the allocator the heap
 * was loaded with (NULL for the default one); if it injects failures,
 * the lazily built structures (reverse references, tallies) may fail with
 * HSCOPE_ERR_NOMEM, and nothing else.
 */
static FZ_UNUSED void
fz_walk(hscope_heap_t *h, const fz_result *r, int values_loaded,
        uint8_t tally_sel, const fz_alloc *alloc)
{
    int may_fail = alloc && alloc->fail_at;
    const hscope_load_stats *s = &r->stats;
    uint64_t n = hscope_heap_object_count(h);
    uint64_t nref = hscope_heap_reference_count(h);

    /* --- counters --------------------------------------------------- */
    FZ_CHECK(s->objects == n, "stats.objects != hscope_heap_object_count");
    FZ_CHECK(s->references == nref, "stats.references != hscope_heap_reference_count");
    uint64_t skipped = 0;
    for (int32_t i = 0; i < HSCOPE_SKIP__COUNT; i++) {
        skipped += hscope_heap_skipped(h, i);
        FZ_CHECK(strcmp(hscope_skip_reason_name(i), "?") != 0, "skip reason without a name");
    }
    FZ_CHECK(hscope_heap_skipped(h, HSCOPE_SKIP__COUNT) == 0, "skip count for an unknown reason");
    FZ_CHECK(hscope_heap_skipped(h, -1) == 0, "skip count for reason -1");
    FZ_CHECK(s->skipped_lines == skipped, "skipped_lines != sum of hscope_heap_skipped");
    FZ_CHECK(s->lines == s->objects + s->root_records + s->shapes + s->free_slots +
                             s->skipped_lines,
             "lines != objects + root_records + shapes + free_slots + skipped_lines");
    FZ_CHECK(s->objects + s->root_records + s->shapes + s->free_slots > 0,
             "a loaded heap without any record");
    FZ_CHECK(s->dangling_references == hscope_heap_dangling_count(h),
             "stats.dangling_references != hscope_heap_dangling_count");
    FZ_CHECK(s->dangling_addresses <= s->dangling_references,
             "more dangling addresses than dangling references");
    FZ_CHECK((s->dangling_addresses == 0) == (s->dangling_references == 0),
             "dangling_addresses and dangling_references disagree on zero");
    FZ_CHECK(s->duplicate_addresses < (n ? n : 1), "duplicate_addresses >= objects");
    FZ_CHECK(s->unknown_types <= n, "unknown_types > objects");
    FZ_CHECK(s->truncated <= 1, "truncated is not 0 or 1");

    /* skipped line examples: the first 16, ascending, valid reasons */
    uint64_t nex = skipped < 16 ? skipped : 16, prev_line = 0;
    for (uint32_t i = 0; i < nex; i++) {
        int32_t why = -1;
        uint64_t ln = hscope_heap_skipped_line(h, i, &why);
        FZ_CHECK(ln > prev_line && ln <= s->lines, "skipped line numbers not ascending/in range");
        FZ_CHECK(why >= 0 && why < HSCOPE_SKIP__COUNT, "skipped line with a bad reason");
        FZ_CHECK(hscope_heap_skipped(h, why) > 0, "example reason with a zero count");
        prev_line = ln;
    }
    FZ_CHECK(hscope_heap_skipped_line(h, (uint32_t)nex, NULL) == 0, "skipped line past the end");

    /* --- objects ------------------------------------------------------ */
    uint64_t sum_refs = 0, dup = 0, total_mem = 0;
    uint32_t *indeg = n ? calloc((size_t)n, sizeof(uint32_t)) : NULL;
    FZ_CHECK(n == 0 || indeg != NULL, "out of memory in the harness");
    for (hscope_id id = 0; id < n; id++) {
        uint64_t addr = hscope_heap_object_address(h, id);
        int32_t type = hscope_heap_object_type(h, id);
        FZ_CHECK(type >= 1 && type <= 255, "object type out of range");
        const char *tn = hscope_heap_type_name(h, type);
        /* Known issue: a type spelled "" gets a per-heap code whose name is
         * empty, and hscope_heap_type_name() answers "?" (as for an unused
         * code).  Tolerated for per-heap codes until fixed; then drop the
         * `type >= 32` escape. */
        FZ_CHECK(tn && (strcmp(tn, "?") != 0 || type >= 32), "object type without a name");
        touch(tn);
        (void)hscope_heap_object_flags(h, id);
        total_mem = fz_sat_add(total_mem, hscope_heap_object_memsize(h, id));
        (void)hscope_heap_object_size(h, id);
        FZ_CHECK(hscope_heap_object_generation(h, id) >= -1, "generation below -1");
        touch(hscope_heap_object_file(h, id));
        (void)hscope_heap_object_line(h, id);
        touch(hscope_heap_object_method(h, id));
        touch(hscope_heap_object_detail(h, id));
        const char *label = hscope_heap_object_class_label(h, id);
        FZ_CHECK(label != NULL, "object without a class label");
        touch(label);

        hscope_id cls = hscope_heap_object_class(h, id);
        uint64_t caddr = hscope_heap_object_class_address(h, id);
        if (cls != HSCOPE_ID_NONE) {
            FZ_CHECK(cls < n, "class id out of range");
            int32_t ct = hscope_heap_object_type(h, cls);
            FZ_CHECK(ct == HSCOPE_TYPE_CLASS || ct == HSCOPE_TYPE_MODULE ||
                         ct == HSCOPE_TYPE_ICLASS,
                     "class id is not a CLASS/MODULE/ICLASS");
            FZ_CHECK(caddr == hscope_heap_object_address(h, cls),
                     "class_address differs from the class record's address");
        }

        hscope_id found = HSCOPE_ID_NONE;
        FZ_CHECK(hscope_heap_find(h, addr, &found) == HSCOPE_OK, "own address not found");
        FZ_CHECK(found < n && found >= id && hscope_heap_object_address(h, found) == addr,
                 "find(address) is not the last record with that address");
        if (found != id)
            dup++;

        const hscope_id *tg = NULL;
        uint64_t cnt = 0;
        FZ_CHECK(hscope_heap_object_references(h, id, &tg, &cnt) == HSCOPE_OK,
                 "hscope_heap_object_references failed");
        FZ_CHECK(cnt == 0 || tg != NULL, "references: NULL targets");
        for (uint64_t k = 0; k < cnt; k++) {
            FZ_CHECK(tg[k] < n, "reference target id >= object count");
            indeg[tg[k]]++;
        }
        sum_refs += cnt;

        const char *v = NULL;
        uint64_t vl = 0;
        hscope_status vs = hscope_heap_object_value(h, id, &v, &vl);
        if (vs == HSCOPE_OK) {
            FZ_CHECK(values_loaded, "a value without HSCOPE_LOAD_VALUES");
            FZ_CHECK(v != NULL && v[vl] == '\0', "value not NUL-terminated");
            if (vl)
                fz_sink += (unsigned char)v[vl - 1];
        } else {
            FZ_CHECK(vs == HSCOPE_ERR_NOT_FOUND, "hscope_heap_object_value: bad status");
        }
    }
    FZ_CHECK(sum_refs == nref, "sum of per-object references != hscope_heap_reference_count");
    FZ_CHECK(dup == s->duplicate_addresses, "duplicate_addresses miscounted");
    FZ_CHECK(total_mem == s->total_memsize, "total_memsize != sum of object memsize");

    /* bulk columns agree with the accessors */
    {
        static const struct { int32_t col, elem; } cols[] = {
            { HSCOPE_COL_ADDRESS, HSCOPE_ELEM_U64 }, { HSCOPE_COL_TYPE, HSCOPE_ELEM_U8 },
            { HSCOPE_COL_FLAGS, HSCOPE_ELEM_U16 }, { HSCOPE_COL_CLASS, HSCOPE_ELEM_U32 },
            { HSCOPE_COL_MEMSIZE, HSCOPE_ELEM_U32 }, { HSCOPE_COL_SIZE, HSCOPE_ELEM_U32 },
            { HSCOPE_COL_GENERATION, HSCOPE_ELEM_U32 }, { HSCOPE_COL_SITE, HSCOPE_ELEM_U32 },
            { HSCOPE_COL_DETAIL, HSCOPE_ELEM_U32 }, { HSCOPE_COL_REF_START, HSCOPE_ELEM_U32 },
            { HSCOPE_COL_REFS, HSCOPE_ELEM_U32 },
        };
        for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
            const void *d = NULL;
            uint64_t len = 0;
            int32_t et = 0;
            FZ_CHECK(hscope_heap_column(h, cols[c].col, &d, &len, &et) == HSCOPE_OK,
                     "hscope_heap_column failed");
            FZ_CHECK(et == cols[c].elem, "column element type");
            uint64_t want = cols[c].col == HSCOPE_COL_REF_START ? n + 1
                          : cols[c].col == HSCOPE_COL_REFS ? nref : n;
            FZ_CHECK(len == want, "column length");
            FZ_CHECK(len == 0 || d != NULL, "column without data");
            for (uint64_t i = 0; i < len; i++) {
                hscope_id id = (hscope_id)i;
                switch (cols[c].col) {
                case HSCOPE_COL_ADDRESS:
                    FZ_CHECK(((const uint64_t *)d)[i] == hscope_heap_object_address(h, id),
                             "address column vs accessor");
                    break;
                case HSCOPE_COL_TYPE:
                    FZ_CHECK(((const uint8_t *)d)[i] == hscope_heap_object_type(h, id),
                             "type column vs accessor");
                    break;
                case HSCOPE_COL_FLAGS:
                    FZ_CHECK(((const uint16_t *)d)[i] == hscope_heap_object_flags(h, id),
                             "flags column vs accessor");
                    break;
                case HSCOPE_COL_CLASS: {
                    uint32_t v = ((const uint32_t *)d)[i];
                    hscope_id cls = hscope_heap_object_class(h, id);
                    FZ_CHECK(cls == HSCOPE_ID_NONE ? v >= 0xFFFFFFFEu : v == cls,
                             "class column vs accessor");
                    break;
                }
                case HSCOPE_COL_SITE: {
                    uint32_t file = 0, line = 0, method = 0;
                    FZ_CHECK(hscope_heap_site(h, ((const uint32_t *)d)[i], &file, &line,
                                              &method) == HSCOPE_OK,
                             "hscope_heap_site failed for a site of the column");
                    FZ_CHECK(fz_streq(hscope_heap_string(h, file), hscope_heap_object_file(h, id)) &&
                                 fz_streq(hscope_heap_string(h, method),
                                          hscope_heap_object_method(h, id)) &&
                                 line == hscope_heap_object_line(h, id),
                             "site column vs accessors");
                    break;
                }
                case HSCOPE_COL_DETAIL:
                    FZ_CHECK(fz_streq(hscope_heap_string(h, ((const uint32_t *)d)[i]),
                                      hscope_heap_object_detail(h, id)),
                             "detail column vs accessor");
                    break;
                case HSCOPE_COL_REFS:
                    FZ_CHECK(((const uint32_t *)d)[i] < n, "refs column: id out of range");
                    break;
                default:
                    break;
                }
            }
        }
    }

    /* out-of-range ids */
    FZ_CHECK(hscope_heap_object_address(h, (hscope_id)n) == 0, "address past the end");
    FZ_CHECK(hscope_heap_object_class_label(h, (hscope_id)n) == NULL, "label past the end");
    FZ_CHECK(hscope_heap_object_class(h, (hscope_id)n) == HSCOPE_ID_NONE, "class past the end");
    {
        const hscope_id *tg;
        uint64_t cnt;
        FZ_CHECK(hscope_heap_object_references(h, (hscope_id)n, &tg, &cnt) ==
                     HSCOPE_ERR_NOT_FOUND, "references past the end");
    }

    /* reverse references: counts must mirror the forward edges */
    uint64_t sum_rev = 0;
    for (hscope_id id = 0; id < n; id++) {
        const hscope_id *src = NULL;
        uint64_t cnt = 0;
        hscope_error err = HSCOPE_ERROR_INIT;
        hscope_status st = hscope_heap_object_referrers(h, id, &src, &cnt, &err);
        if (st != HSCOPE_OK && may_fail && st == HSCOPE_ERR_NOMEM) {
            check_error(&err, st);
            sum_rev = nref; /* not built: nothing to compare */
            break;
        }
        FZ_CHECK(st == HSCOPE_OK, "hscope_heap_object_referrers failed");
        FZ_CHECK(cnt == indeg[id], "referrer count != number of edges into the object");
        for (uint64_t k = 0; k < cnt; k++)
            FZ_CHECK(src[k] < n, "referrer id >= object count");
        sum_rev += cnt;
    }
    FZ_CHECK(sum_rev == nref, "sum of referrers != reference count");
    free(indeg);

    /* --- addresses that are not in the dump --------------------------- */
    /* near every object's address (the address index must say "absent"
     * exactly when no object has it: checked against a sorted copy) */
    if (n && n <= 4096) {
        uint64_t *sorted = malloc((size_t)n * sizeof(uint64_t));
        FZ_CHECK(sorted != NULL, "out of memory in the harness");
        for (hscope_id id = 0; id < n; id++)
            sorted[id] = hscope_heap_object_address(h, id);
        qsort(sorted, (size_t)n, sizeof(uint64_t), cmp_u64);
        static const int64_t near[] = { 1, -1, 8, -8, 20, 40, -40, 4096, 16384, -16384 };
        for (hscope_id id = 0; id < n; id++)
            for (size_t k = 0; k < sizeof(near) / sizeof(near[0]); k++) {
                uint64_t p = sorted[id] + (uint64_t)near[k];
                int present = bsearch(&p, sorted, (size_t)n, sizeof(uint64_t), cmp_u64) != NULL;
                hscope_id got = HSCOPE_ID_NONE;
                hscope_status fs = hscope_heap_find(h, p, &got);
                FZ_CHECK(present ? fs == HSCOPE_OK && hscope_heap_object_address(h, got) == p
                                 : fs == HSCOPE_ERR_NOT_FOUND,
                         "find(address) wrong for an address near an object's");
            }
        free(sorted);
    }

    /* --- dangling references and roots ------------------------------ */
    uint64_t nd = hscope_heap_dangling_count(h), from_roots = 0;
    for (uint64_t i = 0; i < nd; i++) {
        hscope_id from = 0;
        uint64_t a = 0;
        hscope_id f2;
        FZ_CHECK(hscope_heap_dangling(h, i, &from, &a) == HSCOPE_OK, "hscope_heap_dangling failed");
        FZ_CHECK(from == HSCOPE_ID_NONE || from < n, "dangling from out of range");
        FZ_CHECK(hscope_heap_find(h, a, &f2) == HSCOPE_ERR_NOT_FOUND,
                 "a dangling address resolves to an object");
        from_roots += from == HSCOPE_ID_NONE;
    }
    FZ_CHECK(hscope_heap_dangling(h, nd, NULL, NULL) == HSCOPE_ERR_NOT_FOUND,
             "dangling past the end");

    uint32_t ncat = hscope_heap_root_category_count(h);
    uint64_t recs = 0, rtargets = 0, rdang = 0;
    for (uint32_t c = 0; c < ncat; c++) {
        const char *name = hscope_heap_root_category_name(h, c);
        FZ_CHECK(name != NULL, "root category without a name");
        touch(name);
        uint64_t cr = hscope_heap_root_category_records(h, c);
        FZ_CHECK(cr > 0, "root category without records");
        recs += cr;
        const hscope_id *tg = NULL;
        uint64_t cnt = 0, dang = 0;
        FZ_CHECK(hscope_heap_root_targets(h, c, &tg, &cnt, &dang) == HSCOPE_OK,
                 "hscope_heap_root_targets failed");
        for (uint64_t k = 0; k < cnt; k++)
            FZ_CHECK(tg[k] < n, "root target id >= object count");
        const uint64_t *da = NULL;
        uint64_t dn = 0;
        FZ_CHECK(hscope_heap_root_dangling(h, c, &da, &dn) == HSCOPE_OK,
                 "hscope_heap_root_dangling failed");
        FZ_CHECK(dn == dang, "root_dangling count != root_targets dangling count");
        for (uint64_t k = 0; k < dn; k++) {
            hscope_id f2;
            FZ_CHECK(hscope_heap_find(h, da[k], &f2) == HSCOPE_ERR_NOT_FOUND,
                     "a dangling root address resolves to an object");
        }
        rtargets += cnt;
        rdang += dn;
    }
    FZ_CHECK(hscope_heap_root_category_name(h, ncat) == NULL, "root category past the end");
    FZ_CHECK(recs == s->root_records, "root category records != stats.root_records");
    FZ_CHECK(rtargets == s->root_references, "root targets != stats.root_references");
    FZ_CHECK(rdang == from_roots, "dangling root references disagree");

    /* --- tallies -------------------------------------------------------- */
    static const char *const keys[] = {
        "type", "class", "file", "file:line", "file:line:class", "method",
        "generation", "gem",
    };
    uint32_t sort = (tally_sel & 1) ? HSCOPE_SORT_MEMSIZE : HSCOPE_SORT_COUNT;
    uint64_t top = (tally_sel & 2) ? 2 : 0;
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        check_tally(h, keys[k], s, sort, top, may_fail);
    {
        hscope_tally_t *t = NULL;
        hscope_error err = HSCOPE_ERROR_INIT;
        FZ_CHECK(hscope_tally_compute(&t, h, "nope", NULL, &err) == HSCOPE_ERR_UNSUPPORTED &&
                     t == NULL,
                 "unknown tally key accepted");
    }
}

/* Fields that must agree between two loads of the same records. */
static FZ_UNUSED void
fz_same_stats(const hscope_load_stats *a, const hscope_load_stats *b, const char *what)
{
    if (a->bytes != b->bytes || a->lines != b->lines || a->objects != b->objects ||
        a->references != b->references || a->root_records != b->root_records ||
        a->root_references != b->root_references || a->shapes != b->shapes ||
        a->free_slots != b->free_slots ||
        a->dangling_references != b->dangling_references ||
        a->dangling_addresses != b->dangling_addresses ||
        a->duplicate_addresses != b->duplicate_addresses ||
        a->skipped_lines != b->skipped_lines || a->unknown_keys != b->unknown_keys ||
        a->unknown_types != b->unknown_types || a->truncated != b->truncated ||
        a->total_memsize != b->total_memsize)
        fz_fail(__FILE__, __LINE__, what);
}

static FZ_UNUSED void
fz_same_skips(hscope_heap_t *a, hscope_heap_t *b, const char *what)
{
    for (int32_t i = 0; i < HSCOPE_SKIP__COUNT; i++)
        if (hscope_heap_skipped(a, i) != hscope_heap_skipped(b, i))
            fz_fail(__FILE__, __LINE__, what);
}

/*
 * Two loads of the same input with the same options except the number of
 * parser threads must give the same model: same objects in the same order
 * with the same fields, references, roots, dangling references and skip
 * examples (the parallel parser merges chunks in order and remaps ids).
 */
static FZ_UNUSED void
fz_same_heap(hscope_heap_t *a, hscope_heap_t *b, const char *what)
{
    hscope_load_stats sa = HSCOPE_LOAD_STATS_INIT, sb = HSCOPE_LOAD_STATS_INIT;
    FZ_CHECK(hscope_heap_stats(a, &sa) == HSCOPE_OK && hscope_heap_stats(b, &sb) == HSCOPE_OK,
             "hscope_heap_stats failed");
    fz_same_stats(&sa, &sb, what);
    fz_same_skips(a, b, what);
    for (uint32_t i = 0; i < 16; i++) {
        int32_t ra = -1, rb = -1;
        if (hscope_heap_skipped_line(a, i, &ra) != hscope_heap_skipped_line(b, i, &rb) || ra != rb)
            fz_fail(__FILE__, __LINE__, what);
    }
    uint64_t n = hscope_heap_object_count(a);
    for (hscope_id id = 0; id < n; id++) {
        int32_t ta = hscope_heap_object_type(a, id), tb = hscope_heap_object_type(b, id);
        const hscope_id *ra, *rb;
        uint64_t na, nb;
        if (hscope_heap_object_address(a, id) != hscope_heap_object_address(b, id) ||
            ta != tb || !fz_streq(hscope_heap_type_name(a, ta), hscope_heap_type_name(b, tb)) ||
            hscope_heap_object_flags(a, id) != hscope_heap_object_flags(b, id) ||
            hscope_heap_object_memsize(a, id) != hscope_heap_object_memsize(b, id) ||
            hscope_heap_object_size(a, id) != hscope_heap_object_size(b, id) ||
            hscope_heap_object_generation(a, id) != hscope_heap_object_generation(b, id) ||
            hscope_heap_object_line(a, id) != hscope_heap_object_line(b, id) ||
            !fz_streq(hscope_heap_object_file(a, id), hscope_heap_object_file(b, id)) ||
            !fz_streq(hscope_heap_object_method(a, id), hscope_heap_object_method(b, id)) ||
            !fz_streq(hscope_heap_object_detail(a, id), hscope_heap_object_detail(b, id)) ||
            !fz_streq(hscope_heap_object_class_label(a, id), hscope_heap_object_class_label(b, id)) ||
            hscope_heap_object_class(a, id) != hscope_heap_object_class(b, id) ||
            hscope_heap_object_class_address(a, id) != hscope_heap_object_class_address(b, id))
            fz_fail(__FILE__, __LINE__, what);
        FZ_CHECK(hscope_heap_object_references(a, id, &ra, &na) == HSCOPE_OK &&
                     hscope_heap_object_references(b, id, &rb, &nb) == HSCOPE_OK,
                 "hscope_heap_object_references failed");
        if (na != nb || (na && memcmp(ra, rb, na * sizeof(*ra)) != 0))
            fz_fail(__FILE__, __LINE__, what);
        const char *va = NULL, *vb = NULL;
        uint64_t la = 0, lb = 0;
        hscope_status xa = hscope_heap_object_value(a, id, &va, &la);
        hscope_status xb = hscope_heap_object_value(b, id, &vb, &lb);
        if (xa != xb || (xa == HSCOPE_OK && (la != lb || memcmp(va, vb, la) != 0)))
            fz_fail(__FILE__, __LINE__, what);
    }
    uint32_t nc = hscope_heap_root_category_count(a);
    if (nc != hscope_heap_root_category_count(b))
        fz_fail(__FILE__, __LINE__, what);
    for (uint32_t c = 0; c < nc; c++) {
        const hscope_id *ta, *tb;
        uint64_t na, nb, da, db;
        if (!fz_streq(hscope_heap_root_category_name(a, c), hscope_heap_root_category_name(b, c)) ||
            hscope_heap_root_category_records(a, c) != hscope_heap_root_category_records(b, c) ||
            hscope_heap_root_targets(a, c, &ta, &na, &da) != HSCOPE_OK ||
            hscope_heap_root_targets(b, c, &tb, &nb, &db) != HSCOPE_OK || na != nb || da != db ||
            (na && memcmp(ta, tb, na * sizeof(*ta)) != 0))
            fz_fail(__FILE__, __LINE__, what);
    }
    uint64_t nd = hscope_heap_dangling_count(a);
    for (uint64_t i = 0; i < nd; i++) {
        hscope_id fa, fb;
        uint64_t aa, ab;
        if (hscope_heap_dangling(a, i, &fa, &aa) != HSCOPE_OK ||
            hscope_heap_dangling(b, i, &fb, &ab) != HSCOPE_OK || fa != fb || aa != ab)
            fz_fail(__FILE__, __LINE__, what);
    }
}

/* Same outcome for a failed load: status, and where (line, offset). */
static FZ_UNUSED void
fz_same_failure(const fz_result *a, const fz_result *b, const char *what)
{
    if (a->st == b->st &&
        (a->st == HSCOPE_OK || a->st == HSCOPE_ERR_NOMEM ||
         (a->err.line == b->err.line && a->err.offset == b->err.offset)))
        return;
    fprintf(stderr, "  first:  %s line %llu offset %llu: %s\n  second: %s line %llu offset %llu: %s\n",
            hscope_status_name(a->st), (unsigned long long)a->err.line,
            (unsigned long long)a->err.offset, a->err.message, hscope_status_name(b->st),
            (unsigned long long)b->err.line, (unsigned long long)b->err.offset,
            b->err.message);
    fz_fail(__FILE__, __LINE__, what);
}
