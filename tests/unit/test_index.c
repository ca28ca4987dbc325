/*
 * test_index.c - white-box tests of the address index (src/index/index.c).
 *
 * A load picks the run index when the dump's addresses, cut wherever they
 * stop rising or cross a 16 KiB boundary, form disjoint runs (Ruby's
 * page-by-page layout), and the hash table otherwise.  Each case writes a
 * small dump with a chosen address layout, loads it, checks which index
 * was chosen, and checks every lookup against a brute-force answer worked
 * out here: every address of the dump (the last record wins when one
 * repeats), and addresses that are not in it (the gaps between slots, one
 * byte off, before the first and after the last, far away).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/model/model.h"
#include "../../src/index/index.h"

enum { WANT_RUNS, WANT_HASH };

/* The dump: one STRING record per address, in the given order. */
static hscope_heap_t *
load(const uint64_t *addr, size_t n)
{
    size_t cap = n * 64 + 1, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "{\"address\":\"0x%llx\", \"type\":\"STRING\"}\n",
                                (unsigned long long)addr[i]);
    hscope_heap_t *h = NULL;
    hscope_error err;
    hscope_error_init(&err);
    hscope_load_options o;
    hscope_load_options_init(&o);
    o.threads = 1;
    assert_int_equal(hscope_heap_open_memory(&h, text, len, &o, &err), HSCOPE_OK);
    free(text);
    assert_int_equal(h->n, n);
    return h;
}

/* The id a lookup of a must give: the last i with addr[i] == a. */
static uint32_t
brute(const uint64_t *addr, size_t n, uint64_t a)
{
    uint32_t id = HSCOPE_ID_NONE;
    for (size_t i = 0; i < n; i++)
        if (addr[i] == a)
            id = (uint32_t)i;
    return id;
}

static void
probe(const hscope_heap_t *h, const uint64_t *addr, size_t n, uint64_t a)
{
    uint32_t want = brute(addr, n, a), got = hscope__index_find(h, a), batch;
    if (got != want)
        fail_msg("lookup of 0x%llx: id %u, expected %u", (unsigned long long)a, got, want);
    hscope__index_find_batch(h, &a, &batch, 1);
    assert_int_equal(batch, want);
}

static void
check(const uint64_t *addr, size_t n, int want_index, uint64_t step)
{
    hscope_heap_t *h = load(addr, n);
    if (want_index == WANT_RUNS) {
        assert_non_null(h->runs);
        assert_null(h->index);
        assert_int_equal(h->duplicates, 0);
    } else {
        assert_null(h->runs);
        assert_non_null(h->index);
    }
    uint64_t dups = 0;
    for (size_t i = 0; i < n; i++)
        dups += brute(addr, n, addr[i]) != i;
    assert_int_equal(h->duplicates, dups);
    for (size_t i = 0; i < n; i++) {
        probe(h, addr, n, addr[i]);
        probe(h, addr, n, addr[i] + 1);
        probe(h, addr, n, addr[i] - 1);
        probe(h, addr, n, addr[i] + step);     /* the next slot: a gap or not */
        probe(h, addr, n, addr[i] - step);
        probe(h, addr, n, addr[i] + step / 2);
    }
    probe(h, addr, n, 0);
    probe(h, addr, n, 8);
    probe(h, addr, n, UINT64_MAX);
    probe(h, addr, n, UINT64_MAX - 7);
    probe(h, addr, n, addr[0] ^ ((uint64_t)1 << 40));
    hscope_heap_free(h);
}

/* Slots of `size` bytes in the 16 KiB page at `page`, starting `first`
 * bytes in, every one kept unless (i % gap_every) == gap_every - 1. */
static size_t
page(uint64_t *out, uint64_t page, uint64_t first, uint64_t size, size_t slots,
     size_t gap_every)
{
    size_t k = 0;
    for (size_t i = 0; i < slots; i++)
        if (!gap_every || i % gap_every != gap_every - 1)
            out[k++] = page + first + i * size;
    return k;
}

/* Ruby 3.1: 16 KiB pages of 40-byte slots, dumped in falling page order
 * (as in the generated 1 GB corpus dump), slots freed here and there. */
static void
test_ruby31_pages(void **state)
{
    (void)state;
    uint64_t a[2048];
    size_t n = 0;
    const uint64_t base = 0x7f30df1c0000ull;
    n += page(a + n, base + 0x8000, 0x10, 40, 409, 7);
    n += page(a + n, base + 0x4000, 0x10, 40, 409, 0);
    n += page(a + n, base + 0x0000, 0x28, 40, 408, 3);
    check(a, n, WANT_RUNS, 40);
}

/* Ruby 3.2+: 64 KiB pages (cut into four 16 KiB runs), size pools of
 * 40..640 byte slots, pages of different pools interleaved. */
static void
test_size_pools(void **state)
{
    (void)state;
    static uint64_t a[8192];
    size_t n = 0;
    const uint64_t base = 0x55d0a0000000ull;
    const uint64_t sizes[] = { 40, 80, 160, 320, 640 };
    for (int p = 0; p < 5; p++) {
        uint64_t pg = base + (uint64_t)(4 - p) * 0x10000, sz = sizes[p];
        n += page(a + n, pg, 0x18, sz, (size_t)((0x10000 - 0x18) / sz), p + 2);
    }
    assert_true(n < 8192);
    check(a, n, WANT_RUNS, 40);
}

/* Steps that are not multiples of the smallest one: that run is searched
 * instead of bitmapped; and single-object runs. */
static void
test_uneven_steps(void **state)
{
    (void)state;
    uint64_t a[] = { 0x10000, 0x10028, 0x10050, 0x1008c, 0x100b4, 0x100dc, /* 40, 40, 60 */
                     0x20000,                                               /* alone */
                     0x30008, 0x30010, 0x30018,
                     0x40000 };
    check(a, sizeof(a) / sizeof(a[0]), WANT_RUNS, 8);
    /* an uneven run (steps 40, 80, then 60) whose bitmap was begun, then
     * a bitmapped run with a gap at a slot the uneven one had set (0x30018):
     * a left-over bit would make that gap an object */
    uint64_t b[] = { 0x10000, 0x10028, 0x10078, 0x100b4,
                     0x30000, 0x30008, 0x30010, 0x30020 };
    check(b, sizeof(b) / sizeof(b[0]), WANT_RUNS, 8);
}

/* Two clusters far apart: the directory's buckets grow wide. */
static void
test_far_apart(void **state)
{
    (void)state;
    uint64_t a[600];
    size_t n = 0;
    n += page(a + n, 0x1000000, 0, 40, 300, 5);
    n += page(a + n, 0x7ffff0000000ull, 0x10, 40, 300, 0);
    check(a, n, WANT_RUNS, 40);
}

/* Objects of two pages interleaved: runs overlap, so the hash table. */
static void
test_interleaved_is_hashed(void **state)
{
    (void)state;
    uint64_t a[200];
    for (size_t i = 0; i < 100; i++) {
        a[2 * i] = 0x100000 + i * 40;
        a[2 * i + 1] = 0x100000 + 0x2000 + i * 40;
    }
    check(a, 200, WANT_HASH, 40);
}

/* A repeated address (corrupt dump): the hash table, the last one wins. */
static void
test_repeat_is_hashed(void **state)
{
    (void)state;
    uint64_t a[] = { 0x5000, 0x5028, 0x5050, 0x5028, 0x9000 };
    check(a, sizeof(a) / sizeof(a[0]), WANT_HASH, 40);
}

/* Random addresses: far too many runs for the run index. */
static void
test_scattered_is_hashed(void **state)
{
    (void)state;
    enum { N = 3000 };
    static uint64_t a[N];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a[i] = (x & 0x0000fffffffffff8ull) | 0x1000;
    }
    check(a, N, WANT_HASH, 8);
}

/* Random page layouts: page order, slot size, first offset and gaps. */
static void
test_random_layouts(void **state)
{
    (void)state;
    static uint64_t a[40 * 410];
    uint64_t x = 42;
    for (int round = 0; round < 20; round++) {
        size_t n = 0;
        int pages = 1 + round * 2;
        for (int p = 0; p < pages; p++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t sz = (uint64_t)40 << ((x >> 33) % 5);
            uint64_t first = ((x >> 40) % 8) * 8;
            size_t slots = (size_t)((0x4000 - first) / sz);
            size_t gaps = (size_t)((x >> 50) % 9); /* 0: none */
            /* pages scattered over 1 GiB, each 16 KiB aligned, in the
             * order drawn (rising, falling or mixed) */
            uint64_t pg = 0x7f0000000000ull + (((x >> 20) % 65536) << 14);
            int dup = 0;
            for (size_t i = 0; i < n && !dup; i++)
                dup = (a[i] >> 14) == (pg >> 14);
            if (dup)
                continue;
            n += page(a + n, pg, first, sz, slots, gaps);
        }
        check(a, n, WANT_RUNS, 40);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ruby31_pages),
        cmocka_unit_test(test_size_pools),
        cmocka_unit_test(test_uneven_steps),
        cmocka_unit_test(test_far_apart),
        cmocka_unit_test(test_interleaved_is_hashed),
        cmocka_unit_test(test_repeat_is_hashed),
        cmocka_unit_test(test_scattered_is_hashed),
        cmocka_unit_test(test_random_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
