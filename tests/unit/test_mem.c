/*
 * test_mem.c - white-box tests of the allocator wrapper (src/core/core.c).
 *
 * With the default allocator, blocks of 256 KiB and more are mapped by the
 * library itself: they grow with mremap (no copy, whatever malloc's
 * dynamic mmap threshold did after an earlier free), and from 2 MiB they
 * start on a 2 MiB boundary marked for transparent huge pages, so a large
 * column faults in 2 MiB at a time.  These tests check the contents
 * through every kind of resize, the accounting, that a caller's allocator
 * is never bypassed, and the page faults that writing large columns costs
 * (counted by the kernel: getrusage's ru_minflt).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "../../src/core/core.h"

#define MiB ((size_t)1 << 20)

static long
minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

/* Transparent huge pages for madvise'd memory, and not under valgrind or a
 * sanitizer (valgrind's own allocator and page handling, and the
 * sanitizers' shadow memory that every write checks, make the fault counts
 * their own). */
static int
thp_usable(void)
{
#ifdef UNDER_SANITIZER
    return 0;
#endif
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "vgpreload"))
        return 0;
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (!f)
        return 0;
    if (!fgets(line, sizeof(line), f))
        line[0] = 0;
    fclose(f);
    return strstr(line, "[always]") || strstr(line, "[madvise]");
}

static void
fill(unsigned char *p, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        p[i] = (unsigned char)(i * 131 + (i >> 12));
}

static void
check(const unsigned char *p, size_t to)
{
    for (size_t i = 0; i < to; i += 997)
        if (p[i] != (unsigned char)(i * 131 + (i >> 12)))
            fail_msg("byte %zu lost: %u", i, p[i]);
}

/* Contents survive every path: small -> big, big growing (in place or
 * moved to a 2 MiB boundary), big shrinking, and the accounting follows
 * the sizes asked for. */
static void
test_resize_keeps_contents(void **state)
{
    (void)state;
    hscope__mem m;
    hscope__mem_init(&m, NULL, 0);
    size_t n = 1000;
    unsigned char *p = hscope__malloc(&m, n);
    assert_non_null(p);
    fill(p, 0, n);
    while (n < 40 * MiB) {
        size_t nn = n * 3 / 2 + 4097;
        unsigned char *q = hscope__realloc(&m, p, nn);
        assert_non_null(q);
        p = q;
        check(p, n);
        fill(p, n, nn);
        n = nn;
        assert_int_equal(hscope__msize(p), n);
        assert_int_equal(atomic_load(&m.used), n);
        if (n >= 4 * MiB) /* big and huge: the block's header on a 2 MiB boundary */
            assert_int_equal(((uintptr_t)p - 16) % (2 * MiB), 0);
    }
    check(p, n);
    size_t cut = 3 * MiB + 123; /* an array cut to fit */
    p = hscope__realloc(&m, p, cut);
    assert_non_null(p);
    check(p, cut);
    assert_int_equal(atomic_load(&m.used), cut);
    p = hscope__realloc(&m, p, 100); /* back to small */
    assert_non_null(p);
    check(p, 100);
    hscope__free(&m, p);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* calloc of a big block is zero, also where an earlier block of the same
 * process was written and freed. */
static void
test_calloc_zero(void **state)
{
    (void)state;
    hscope__mem m;
    hscope__mem_init(&m, NULL, 0);
    for (int round = 0; round < 3; round++) {
        unsigned char *p = hscope__calloc(&m, 5 * MiB + 17, 1);
        assert_non_null(p);
        for (size_t i = 0; i < 5 * MiB + 17; i += 511)
            assert_int_equal(p[i], 0);
        memset(p, 0xab, 5 * MiB + 17);
        hscope__free(&m, p);
    }
    assert_int_equal(atomic_load(&m.used), 0);
}

/* max_memory still counts a big block's size. */
static void
test_limit(void **state)
{
    (void)state;
    hscope__mem m;
    hscope__mem_init(&m, NULL, 8 * MiB);
    void *p = hscope__malloc(&m, 6 * MiB);
    assert_non_null(p);
    assert_null(hscope__malloc(&m, 3 * MiB));
    assert_null(hscope__realloc(&m, p, 9 * MiB));
    assert_int_equal(hscope__msize(p), 6 * MiB);
    void *q = hscope__realloc(&m, p, 7 * MiB);
    assert_non_null(q);
    hscope__free(&m, q);
    assert_int_equal(atomic_load(&m.used), 0);
}

static size_t seen_max;
static void *
my_malloc(void *ud, size_t n)
{
    (void)ud;
    if (n > seen_max)
        seen_max = n;
    return malloc(n);
}
static void *
my_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    if (n > seen_max)
        seen_max = n;
    return realloc(p, n);
}
static void
my_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

/* A caller's allocator gets every block, big ones too. */
static void
test_caller_allocator(void **state)
{
    (void)state;
    hscope_allocator a = { sizeof(a), 0, my_malloc, my_realloc, my_free, NULL };
    hscope__mem m;
    hscope__mem_init(&m, &a, 0);
    seen_max = 0;
    unsigned char *p = hscope__malloc(&m, 3 * MiB);
    assert_non_null(p);
    assert_true(seen_max >= 3 * MiB);
    fill(p, 0, 3 * MiB);
    p = hscope__realloc(&m, p, 9 * MiB);
    assert_non_null(p);
    assert_true(seen_max >= 9 * MiB);
    check(p, 3 * MiB);
    hscope__free(&m, p);
}

/*
 * Writing columns that grow to 64 MiB, as a load does, the second time in
 * the same process (after the first set was freed, which is when malloc
 * used to serve them from its heap and copy them on every growth): with
 * huge pages, a few hundred faults, where 4 KiB pages take 16k per 64 MiB.
 */
static void
test_faults(void **state)
{
    (void)state;
    if (!thp_usable())
        skip();
    hscope__mem m;
    hscope__mem_init(&m, NULL, 0);
    for (int round = 0; round < 2; round++) {
        unsigned char *col[4];
        size_t cap = 4 * MiB, n = 0;
        for (int c = 0; c < 4; c++)
            assert_non_null(col[c] = hscope__malloc(&m, cap));
        long f0 = minflt();
        while (n < 64 * MiB) {
            if (n == cap) {
                cap *= 2;
                for (int c = 0; c < 4; c++)
                    assert_non_null(col[c] = hscope__realloc(&m, col[c], cap));
            }
            size_t to = n + MiB;
            for (int c = 0; c < 4; c++)
                memset(col[c] + n, c + 1, to - n);
            n = to;
        }
        long faults = minflt() - f0;
        for (int c = 0; c < 4; c++) {
            assert_int_equal(col[c][0], c + 1);
            assert_int_equal(col[c][n - 1], c + 1);
            hscope__free(&m, col[c]);
        }
        /* 4 x 64 MiB: 65536 faults in 4 KiB pages, 128 in 2 MiB ones */
        if (faults > 2048)
            fail_msg("round %d: %ld minor faults for 256 MiB of columns", round, faults);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_keeps_contents),
        cmocka_unit_test(test_calloc_zero),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_caller_allocator),
        cmocka_unit_test(test_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
