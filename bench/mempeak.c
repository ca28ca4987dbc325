/*
 * mempeak.c - exactly how much memory the library holds while it loads a
 * dump and computes the dominator tree, counted through the allocator
 * hooks (so the figures are the library's own bytes, not the C library's
 * arena slack or the process's other pages that peak RSS also counts).
 *
 *   mempeak [--threads N] [--no-class-edges] DUMP
 *
 * Prints one JSON object:
 *   objects              objects in the dump
 *   load_peak            most bytes held at once while loading
 *   loaded               bytes held once loaded (model + address index)
 *   dom_peak_extra       most bytes held during hscope_domtree_compute,
 *                        minus `loaded`
 *   dom_kept             bytes the dominator tree keeps (held after it,
 *                        minus `loaded`)
 *   *_per_object         the same divided by `objects`
 *
 * bench/run.py runs it on each plain dump (the "dominators B/obj" columns).
 * Built with the library (bench/mempeak in the build directory); it uses
 * the public API only.
 */
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <heapscope/heapscope.h>

static _Atomic uint64_t live, peak;

static void
note(int64_t delta)
{
    uint64_t now = atomic_fetch_add(&live, (uint64_t)delta) + (uint64_t)delta;
    uint64_t p = atomic_load(&peak);
    while (now > p && !atomic_compare_exchange_weak(&peak, &p, now)) {
    }
}

static void *
c_malloc(void *ud, size_t n)
{
    (void)ud;
    void *p = malloc(n);
    if (p)
        note((int64_t)malloc_usable_size(p));
    return p;
}

static void *
c_realloc(void *ud, void *old, size_t n)
{
    (void)ud;
    size_t before = old ? malloc_usable_size(old) : 0;
    void *p = realloc(old, n);
    if (p)
        note((int64_t)malloc_usable_size(p) - (int64_t)before);
    return p;
}

static void
c_free(void *ud, void *p)
{
    (void)ud;
    if (p)
        note(-(int64_t)malloc_usable_size(p));
    free(p);
}

int
main(int argc, char **argv)
{
    const char *path = NULL;
    unsigned threads = 0;
    int no_class = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--no-class-edges") == 0)
            no_class = 1;
        else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "usage: mempeak [--threads N] [--no-class-edges] DUMP\n");
            return 2;
        } else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: mempeak [--threads N] [--no-class-edges] DUMP\n");
        return 2;
    }
    hscope_allocator a = { sizeof(a), 0, c_malloc, c_realloc, c_free, NULL };
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    lo.allocator = &a;
    lo.threads = threads;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_heap_t *h = NULL;
    if (hscope_heap_open_file(&h, path, &lo, &err) != HSCOPE_OK) {
        fprintf(stderr, "mempeak: %s: %s\n", path, err.message);
        return 1;
    }
    uint64_t load_peak = atomic_load(&peak), loaded = atomic_load(&live);
    atomic_store(&peak, loaded);
    hscope_dom_options o;
    hscope_dom_options_init(&o);
    if (no_class)
        o.flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    hscope_domtree_t *t = NULL;
    if (hscope_domtree_compute(&t, h, &o, &err) != HSCOPE_OK) {
        fprintf(stderr, "mempeak: dominators: %s\n", err.message);
        hscope_heap_free(h);
        return 1;
    }
    uint64_t dom_peak = atomic_load(&peak), after = atomic_load(&live);
    uint64_t n = hscope_heap_object_count(h);
    double d = n ? (double)n : 1.0;
    printf("{\"objects\": %llu, \"load_peak\": %llu, \"loaded\": %llu, "
           "\"dom_peak_extra\": %llu, \"dom_kept\": %llu, "
           "\"loaded_per_object\": %.1f, \"dom_peak_extra_per_object\": %.1f, "
           "\"dom_kept_per_object\": %.1f}\n",
           (unsigned long long)n, (unsigned long long)load_peak, (unsigned long long)loaded,
           (unsigned long long)(dom_peak - loaded), (unsigned long long)(after - loaded),
           (double)loaded / d, (double)(dom_peak - loaded) / d, (double)(after - loaded) / d);
    hscope_domtree_free(t);
    hscope_heap_free(h);
    return atomic_load(&live) == 0 ? 0 : 3; /* everything given back */
}
