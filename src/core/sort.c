/*
 * sort.c - a sort of four-word keys (hscope__key4), for the orderings of
 * the result tables (the waste analysis: values by saving, a row's values,
 * a value's sites).  The C library's qsort calls its comparison through a
 * pointer and moves elements with a generic copy: sorting the 67 k values
 * of the 1 GB benchmark dump took it 22 ms, a tenth of the waste pass's
 * work after the parse.  A merge sort with the comparison inlined does the
 * same in a fraction of that (bench/README.md has the figures).
 *
 * Bottom-up: runs of RUN keys sorted by insertion, then merged in passes
 * between the array and the scratch array.  Stable (a tie takes the left
 * run's key first), though the callers make every key distinct (the last
 * word holds an index), so the order is total and the result the same as
 * any other correct sort's.
 */
#include <string.h>

#include "core.h"

#define RUN 16

static inline int
key4_lt(const hscope__key4 *a, const hscope__key4 *b)
{
    if (a->k[0] != b->k[0])
        return a->k[0] < b->k[0];
    if (a->k[1] != b->k[1])
        return a->k[1] < b->k[1];
    if (a->k[2] != b->k[2])
        return a->k[2] < b->k[2];
    return a->k[3] < b->k[3];
}

static void
insertion(hscope__key4 *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        hscope__key4 x = a[i];
        size_t j = i;
        while (j > 0 && key4_lt(&x, &a[j - 1])) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* out[0 .. na + nb) = the merge of a[0 .. na) and b[0 .. nb). */
static void
merge(const hscope__key4 *a, size_t na, const hscope__key4 *b, size_t nb, hscope__key4 *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        out[k++] = key4_lt(&b[j], &a[i]) ? b[j++] : a[i++];
    if (i < na)
        memcpy(out + k, a + i, (na - i) * sizeof(*a));
    if (j < nb)
        memcpy(out + k, b + j, (nb - j) * sizeof(*b));
}

void
hscope__key4_sort(hscope__key4 *a, size_t n, hscope__key4 *tmp)
{
    for (size_t i = 0; i < n; i += RUN)
        insertion(a + i, n - i < RUN ? n - i : RUN);
    hscope__key4 *from = a, *to = tmp;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t i = 0; i < n; i += 2 * w) {
            size_t na = n - i < w ? n - i : w;
            size_t nb = n - i - na < w ? n - i - na : w;
            merge(from + i, na, from + i + na, nb, to + i);
        }
        hscope__key4 *x = from;
        from = to;
        to = x;
    }
    if (from != a)
        memcpy(a, from, n * sizeof(*a));
}
