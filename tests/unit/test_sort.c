/*
 * test_sort.c - white-box tests of the four-word key sort (src/core/sort.c)
 * against the C library's qsort with a plain lexicographic comparison: the
 * same keys must come out in the same order, whatever the size (below,
 * at and above the insertion runs, and over many merge passes), the ties
 * (few distinct values per word, so later words decide; keys equal in
 * every word) and the input order (random, sorted, reversed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/core/core.h"

/* the reference: a key and its input position (qsort's order of equal
 * keys does not matter: they are the same bytes) */
typedef struct ref {
    hscope__key4 key;
    size_t pos;
} ref;

static int
cmp_ref(const void *x, const void *y)
{
    const ref *a = x, *b = y;
    for (int i = 0; i < 4; i++)
        if (a->key.k[i] != b->key.k[i])
            return a->key.k[i] < b->key.k[i] ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t
next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

enum order { RANDOM, SORTED, REVERSED };

/* n keys whose words take `spread` values each (1: all equal) */
static void
check(size_t n, uint64_t spread, enum order ord)
{
    hscope__key4 *a = malloc((n ? n : 1) * sizeof(*a));
    hscope__key4 *tmp = malloc((n ? n : 1) * sizeof(*tmp));
    ref *r = malloc((n ? n : 1) * sizeof(*r));
    assert_non_null(a);
    assert_non_null(tmp);
    assert_non_null(r);
    for (size_t i = 0; i < n; i++) {
        for (int w = 0; w < 4; w++)
            r[i].key.k[w] = next() % spread;
        /* the extremes of a word, where ~x and sign mistakes would show */
        if (i % 97 == 1)
            r[i].key.k[i % 4] = UINT64_MAX;
        r[i].pos = i;
    }
    if (ord != RANDOM) {
        qsort(r, n, sizeof(*r), cmp_ref);
        for (size_t i = 0; i < n; i++)
            r[i].pos = i;
        if (ord == REVERSED)
            for (size_t i = 0; i < n / 2; i++) {
                ref x = r[i];
                r[i] = r[n - 1 - i];
                r[n - 1 - i] = x;
            }
        for (size_t i = 0; i < n; i++)
            r[i].pos = i;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = r[i].key;
    hscope__key4_sort(a, n, tmp);
    qsort(r, n, sizeof(*r), cmp_ref);
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&a[i], &r[i].key, sizeof(a[i])) != 0)
            fail_msg("n %zu spread %llu order %d: key %zu differs", n,
                     (unsigned long long)spread, (int)ord, i);
    }
    free(a);
    free(tmp);
    free(r);
}

static void
test_sizes(void **state)
{
    (void)state;
    const size_t sizes[] = { 0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 100, 1000, 4096, 4097, 66721 };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int o = RANDOM; o <= REVERSED; o++) {
            check(sizes[i], UINT64_MAX, (enum order)o);
            check(sizes[i], 3, (enum order)o);
        }
}

static void
test_ties(void **state)
{
    (void)state;
    /* all equal; two values a word (the last word decides most pairs) */
    for (uint64_t spread = 1; spread <= 2; spread++)
        for (int o = RANDOM; o <= REVERSED; o++)
            check(5000, spread, (enum order)o);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_ties),
    };
    return cmocka_run_group_tests_name("sort", tests, NULL, NULL);
}
