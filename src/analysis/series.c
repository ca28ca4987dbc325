/*
 * series.c - fingerprints of dumps and the series checks: can these dumps
 * be one process's, in time order?  (docs/heapscope.1, "SERIES CHECKS")
 *
 * A fingerprint is made in the pass that reads a dump anyway (a load, a
 * streamed diff base, a streamed tally): per object a multiplicative hash
 * of the address, one mix of it with the generation and type added to a
 * content hash, and a compare.  The
 * sample keeps the objects whose address hash is at most `limit`; when it
 * holds FP_CAP objects, `limit` halves and the sample is thinned, so a
 * sample is always "every object whose hash is <= limit" (a distinct-
 * sampling sketch).  Two dumps are compared on the objects below the lower
 * of their two limits: the same addresses are sampled in both.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"

#define FP_CAP 4096
/* Consecutive dumps of one process share far more (47-99.9% measured:
 * heavy churn, GC.compact, a fork's child); two processes share none
 * (0.0%: address space randomisation). */
#define FP_MIN_SHARED 0.05

static int
cmp_item(const void *a, const void *b)
{
    uint64_t x = ((const hscope__fp_item *)a)->addr, y = ((const hscope__fp_item *)b)->addr;
    return x < y ? -1 : x > y;
}

hscope_status
hscope__fp_new(hscope_fingerprint_t **out, const hscope__mem *like, hscope_error *err)
{
    hscope__mem m;
    hscope_allocator a = { sizeof(a), 0, like->malloc_fn, like->realloc_fn, like->free_fn,
                           like->ud };
    hscope__mem_init(&m, &a, 0);
    hscope_fingerprint_t *fp = hscope__calloc(&m, 1, sizeof(*fp));
    hscope__fp_item *items = fp ? hscope__malloc(&m, FP_CAP * sizeof(*items)) : NULL;
    if (!items) {
        hscope__free(&m, fp);
        return hscope__nomem(err, FP_CAP * sizeof(*items));
    }
    fp->own = m;
    atomic_store(&fp->own.used, atomic_load(&m.used));
    fp->items = items;
    fp->limit = UINT64_MAX;
    *out = fp;
    return HSCOPE_OK;
}

/* Keep only the sampled objects whose hash is <= limit. */
static void
thin(hscope_fingerprint_t *fp, uint64_t limit)
{
    size_t k = 0;
    for (size_t i = 0; i < fp->n; i++)
        if (hscope__fp_hash(fp->items[i].addr) <= limit)
            fp->items[k++] = fp->items[i];
    fp->n = k;
    fp->limit = limit;
}

void
hscope__fp_sample(hscope_fingerprint_t *fp, uint64_t addr, uint64_t h, int type)
{
    while (fp->n == FP_CAP) {
        thin(fp, fp->limit >> 1);
        if (h > fp->limit)
            return;
    }
    fp->items[fp->n].addr = addr;
    fp->items[fp->n].type = (uint32_t)type;
    fp->n++;
    fp->sorted = 0;
}

void
hscope__fp_merge(hscope_fingerprint_t *dst, const hscope_fingerprint_t *src)
{
    dst->objects += src->objects;
    dst->content += src->content;
    if (src->newest > dst->newest)
        dst->newest = src->newest;
    if (src->limit < dst->limit)
        thin(dst, src->limit);
    for (size_t i = 0; i < src->n; i++) {
        uint64_t h = hscope__fp_hash(src->items[i].addr);
        if (h <= dst->limit)
            hscope__fp_sample(dst, src->items[i].addr, h, (int)src->items[i].type);
    }
}

void
hscope__fp_finish(hscope_fingerprint_t *fp, const char *path)
{
    if (!fp->sorted) {
        qsort(fp->items, fp->n, sizeof(*fp->items), cmp_item);
        fp->sorted = 1;
    }
    struct stat sb;
    if (path && stat(path, &sb) == 0) {
        fp->has_file = 1;
        fp->dev = (uint64_t)sb.st_dev;
        fp->ino = (uint64_t)sb.st_ino;
        fp->mtime_ns = (uint64_t)sb.st_mtim.tv_sec * 1000000000u + (uint64_t)sb.st_mtim.tv_nsec;
    }
}

void
hscope__fp_add_heap(hscope_fingerprint_t *fp, const hscope_heap_t *h)
{
    for (uint32_t i = 0; i < h->n; i++)
        hscope__fp_add(fp, h->addr[i], h->type[i], h->gen[i]);
    fp->partial = h->n && h->stats.root_records == 0;
}

hscope_status
hscope__heap_fingerprint(hscope_fingerprint_t **out, const hscope_heap_t *heap,
                         const char *path, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st;
    if (!out || !heap) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out and heap are required");
    } else {
        *out = NULL;
        st = hscope__fp_new(out, &heap->mem, &err);
        if (st == HSCOPE_OK) {
            hscope__fp_add_heap(*out, heap);
            hscope__fp_finish(*out, path);
        }
    }
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

hscope_status
hscope__fingerprint_copy(hscope_fingerprint_t **out, const hscope_fingerprint_t *fp,
                         hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st;
    if (!out || !fp) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out and fp are required");
    } else {
        *out = NULL;
        if ((st = hscope__fp_new(out, &fp->own, &err)) == HSCOPE_OK) {
            hscope_fingerprint_t *c = *out;
            hscope__mem own = c->own; /* the copy's own accounting */
            hscope__fp_item *items = c->items;
            *c = *fp;
            c->own = own;
            c->items = items;
            memcpy(items, fp->items, fp->n * sizeof(*items));
        }
    }
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

void
hscope__fingerprint_free(hscope_fingerprint_t *fp)
{
    if (!fp)
        return;
    hscope__mem m = fp->own;
    hscope__free(&m, fp->items);
    hscope__free(&m, fp);
}

uint64_t
hscope__fingerprint_memory(const hscope_fingerprint_t *fp)
{
    const void *b[] = { fp ? fp->items : NULL, fp };
    return hscope__msize_sum(b, 2);
}

/* Share of the smaller sample whose address (and type) the other sample
 * has, over the objects both sampled (hash <= the lower limit); -1 when
 * either sample is empty. */
static double
shared(const hscope_fingerprint_t *a, const hscope_fingerprint_t *b)
{
    uint64_t lim = a->limit < b->limit ? a->limit : b->limit;
    size_t i = 0, j = 0, na = 0, nb = 0, both = 0;
    for (size_t k = 0; k < a->n; k++)
        na += hscope__fp_hash(a->items[k].addr) <= lim;
    for (size_t k = 0; k < b->n; k++)
        nb += hscope__fp_hash(b->items[k].addr) <= lim;
    while (i < a->n && j < b->n) {
        const hscope__fp_item *x = &a->items[i], *y = &b->items[j];
        if (x->addr < y->addr) {
            i++;
        } else if (x->addr > y->addr) {
            j++;
        } else {
            both += x->type == y->type && hscope__fp_hash(x->addr) <= lim;
            i++;
            j++;
        }
    }
    size_t small = na < nb ? na : nb;
    return small ? (double)both / (double)small : -1.0;
}

/* Where the findings go: one line each, with its warning bit. */
typedef struct textbuf {
    void (*fn)(void *ud, uint32_t bit, const char *line);
    void *ud;
} textbuf;

static void HS_PRINTF(3, 4)
line(textbuf *t, uint32_t bit, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    t->fn(t->ud, bit, buf);
}

/* Lines joined by '\n' into a caller's buffer, cut to fit. */
typedef struct joined {
    char *p;
    size_t cap, len;
} joined;

static void
join_line(void *ud, uint32_t bit, const char *text)
{
    (void)bit;
    joined *t = ud;
    if (!t->p || t->len + 2 >= t->cap)
        return;
    if (t->len)
        t->p[t->len++] = '\n';
    size_t n = strlen(text), room = t->cap - t->len - 1;
    if (n > room)
        n = room;
    memcpy(t->p + t->len, text, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static const char *
name_of(const char *const *names, uint64_t i, char *buf, size_t n)
{
    if (names && names[i])
        return names[i];
    snprintf(buf, n, "dump %llu", (unsigned long long)i + 1);
    return buf;
}

/* One pair: `a` is the earlier dump, `b` the later. */
static uint32_t
check_pair(const hscope_fingerprint_t *a, const hscope_fingerprint_t *b, const char *na,
           const char *nb, textbuf *t)
{
    if (a->has_file && b->has_file && a->dev == b->dev && a->ino == b->ino) {
        line(t, HSCOPE_DIFF_WARN_REPEATED, "%s and %s are the same file: one dump given twice, so nothing can "
                "have changed between them", na, nb);
        return HSCOPE_DIFF_WARN_REPEATED;
    }
    if (a == b) {
        line(t, HSCOPE_DIFF_WARN_REPEATED, "%s and %s are the same dump given twice: nothing can have changed "
                "between them", na, nb);
        return HSCOPE_DIFF_WARN_REPEATED;
    }
    if (a->objects == b->objects && a->content == b->content && a->objects) {
        line(t, HSCOPE_DIFF_WARN_REPEATED, "%s and %s have the same content (%llu objects, the same addresses, "
                "types and generations): one dump given twice?", na, nb,
             (unsigned long long)a->objects);
        return HSCOPE_DIFF_WARN_REPEATED;
    }
    uint32_t w = 0;
    /* a since: dump holds only the newer objects: sharing few says nothing */
    double s = a->partial || b->partial ? -1.0 : shared(a, b);
    if (s >= 0 && s < FP_MIN_SHARED) {
        line(t, HSCOPE_DIFF_WARN_DIFFERENT_PROCESS, "%s and %s share only %.1f%% of their objects (the same address and type; "
                "consecutive dumps of one process share most): they look like dumps of "
                "different processes, and comparing them is meaningless", na, nb, 100.0 * s);
        w |= HSCOPE_DIFF_WARN_DIFFERENT_PROCESS;
    }
    if (w) {
        /* the generations and times of two processes say nothing of order */
    } else if (a->newest && b->newest && b->newest < a->newest) {
        line(t, HSCOPE_DIFF_WARN_BACKWARDS, "%s comes after %s, but its newest object is older (generation %u, "
                "before %u): the dumps are out of order", nb, na, b->newest - 1, a->newest - 1);
        w |= HSCOPE_DIFF_WARN_BACKWARDS;
    } else if (!a->newest && !b->newest && a->has_file && b->has_file &&
               b->mtime_ns < a->mtime_ns) {
        /* file times only where the dumps carry no order of their own (a
         * copy, scp or kubectl cp, gives new times in any order) */
        line(t, HSCOPE_DIFF_WARN_BACKWARDS, "%s comes after %s, but it was written %.0f s earlier (file mtime): the "
                "dumps are out of order", nb, na, (double)(a->mtime_ns - b->mtime_ns) / 1e9);
        w |= HSCOPE_DIFF_WARN_BACKWARDS;
    }
    return w;
}

/* Where the dumps' own generations put them (each dump's newest
 * generation, oldest first; equal ones as given): said when the order
 * given is backwards.  Nothing when a dump has no generations. */
static void
right_order(const hscope_fingerprint_t *const *fps, const char *const *names, uint64_t count,
            textbuf *t)
{
    enum { MAX = 16 };
    uint64_t idx[MAX], n = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (!fps[i])
            continue;
        if (!fps[i]->newest || n == MAX)
            return;
        uint64_t k = n++;
        while (k > 0 && fps[idx[k - 1]]->newest > fps[i]->newest) {
            idx[k] = idx[k - 1];
            k--;
        }
        idx[k] = i;
    }
    char buf[900];
    size_t len = 0;
    for (uint64_t k = 0; k < n && len + 4 < sizeof(buf); k++) {
        char b[32];
        int w = snprintf(buf + len, sizeof(buf) - len, "%s%s", k ? " " : "",
                         name_of(names, idx[k], b, sizeof(b)));
        len += w > 0 ? (size_t)w : 0;
    }
    if (len >= sizeof(buf))
        len = sizeof(buf) - 1;
    buf[len] = '\0';
    line(t, HSCOPE_DIFF_WARN_BACKWARDS, "by their generations the right order is: %s", buf);
}

uint32_t
hscope__series_check(const hscope_fingerprint_t *const *fps, const char *const *names,
                     uint64_t count, char *text, uint64_t text_size)
{
    joined j = { text, text ? (size_t)text_size : 0, 0 };
    if (text && text_size)
        text[0] = '\0';
    return hscope__series_check_lines(fps, names, count, join_line, &j);
}

uint32_t
hscope__series_check_lines(const hscope_fingerprint_t *const *fps,
                           const char *const *names, uint64_t count,
                           void (*fn)(void *ud, uint32_t bit, const char *line),
                           void *ud)
{
    textbuf tb = { fn, ud }, *t = &tb;
    uint32_t w = 0;
    const hscope_fingerprint_t *prev = NULL;
    uint64_t pi = 0;
    for (uint64_t i = 0; fps && i < count; i++) {
        if (!fps[i])
            continue;
        if (prev) {
            char b1[32], b2[32];
            w |= check_pair(prev, fps[i], name_of(names, pi, b1, sizeof(b1)),
                            name_of(names, i, b2, sizeof(b2)), t);
        }
        prev = fps[i];
        pi = i;
    }
    if ((w & HSCOPE_DIFF_WARN_BACKWARDS) && !(w & ~HSCOPE_DIFF_WARN_BACKWARDS))
        right_order(fps, names, count, t);
    return w;
}
