/*
 * test_memory.c - hscope_*_memory(): what each result says it holds,
 * against what its allocator hands back when it is freed.
 *
 * Every result is made with a counting allocator (hscope_allocator): it
 * sums the bytes of the blocks it has handed out and not yet taken back,
 * independently of the library's own bookkeeping.  Freeing a result must
 * give back exactly the bytes its _memory() call reported, and those must
 * at least hold the result's per-object columns (4 bytes an id, 8 a size)
 * computed from the object counts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

/* ------------------------------------------------------------------ */
/* The counting allocator                                               */
/* ------------------------------------------------------------------ */

typedef struct counter {
    uint64_t bytes; /* handed out and not taken back */
} counter;

/* our own header before each block: its size, to count its free */
#define OWN 16

static void *
c_malloc(void *ud, size_t n)
{
    unsigned char *p = malloc(n + OWN);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof(n));
    __atomic_add_fetch(&((counter *)ud)->bytes, n, __ATOMIC_SEQ_CST);
    return p + OWN;
}

static void *
c_realloc(void *ud, void *q, size_t n)
{
    if (!q)
        return c_malloc(ud, n);
    size_t old;
    memcpy(&old, (unsigned char *)q - OWN, sizeof(old));
    unsigned char *p = realloc((unsigned char *)q - OWN, n + OWN);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof(n));
    __atomic_add_fetch(&((counter *)ud)->bytes, n, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&((counter *)ud)->bytes, old, __ATOMIC_SEQ_CST);
    return p + OWN;
}

static void
c_free(void *ud, void *q)
{
    if (!q)
        return;
    size_t old;
    memcpy(&old, (unsigned char *)q - OWN, sizeof(old));
    __atomic_sub_fetch(&((counter *)ud)->bytes, old, __ATOMIC_SEQ_CST);
    free((unsigned char *)q - OWN);
}

static uint64_t
live(counter *c)
{
    return __atomic_load_n(&c->bytes, __ATOMIC_SEQ_CST);
}

/* ------------------------------------------------------------------ */
/* Inputs: three dumps of a growing set (objects 0..n-1 of each)        */
/* ------------------------------------------------------------------ */

static char paths[3][64];

static void
write_dump(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x100\", \"0x1000\"]}\n");
    fprintf(f, "{\"address\":\"0x100\", \"type\":\"CLASS\", \"name\":\"Foo\", \"memsize\":500}\n");
    for (int i = 0; i < n; i++)
        fprintf(f,
                "{\"address\":\"0x%x\", \"type\":\"STRING\", \"class\":\"0x100\", "
                "\"bytesize\":3, \"value\":\"v%d\", \"references\":[\"0x%x\"], "
                "\"file\":\"/srv/app/f%d.rb\", \"line\":%d, \"generation\":%d, "
                "\"memsize\":40}\n",
                0x1000 + 16 * i, i % 7, 0x1000 + 16 * (i + 1), i % 5, i % 13, 1 + i / 100);
    fclose(f);
}

static int
setup(void **state)
{
    (void)state;
    for (int k = 0; k < 3; k++) {
        snprintf(paths[k], sizeof(paths[k]), "/tmp/hscope-memory-%d-%d.json", (int)getpid(), k);
        write_dump(paths[k], 1000 * (k + 1));
    }
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    for (int k = 0; k < 3; k++)
        unlink(paths[k]);
    return 0;
}

static hscope_load_options
counted(counter *c, hscope_allocator *al)
{
    hscope_allocator a = { sizeof(a), 0, c_malloc, c_realloc, c_free, c };
    *al = a;
    hscope_load_options o = HSCOPE_LOAD_OPTIONS_INIT;
    o.allocator = al;
    o.flags = HSCOPE_LOAD_VALUES;
    return o;
}

static hscope_heap_t *
load(int k, const hscope_load_options *o)
{
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_heap_open_file(&h, paths[k], o, &err);
    if (st != HSCOPE_OK)
        fail_msg("load %s: %s", paths[k], err.message);
    return h;
}

/* Free `x` with `free_fn`; what the allocator got back must be `said`. */
#define FREED_EXACTLY(c, x, free_fn, said)                                       \
    do {                                                                         \
        uint64_t before_ = live(c);                                              \
        free_fn(x);                                                              \
        assert_int_equal(before_ - live(c), (said));                             \
    } while (0)

/* ------------------------------------------------------------------ */
/* Tests                                                                */
/* ------------------------------------------------------------------ */

static void
test_null(void **state)
{
    (void)state;
    assert_int_equal(hscope_tally_memory(NULL), 0);
    assert_int_equal(hscope_diff_memory(NULL), 0);
    assert_int_equal(hscope_domtree_memory(NULL), 0);
    assert_int_equal(hscope_paths_memory(NULL), 0);
    assert_int_equal(hscope_holders_memory(NULL), 0);
    assert_int_equal(hscope_suspects_memory(NULL), 0);
    assert_int_equal(hscope_waste_memory(NULL), 0);
    assert_int_equal(hscope_timeline_memory(NULL), 0);
}

/* Results of one loaded heap: tally, dominator tree (before and after its
 * children are built), paths, holders, waste. */
static void
test_heap_results(void **state)
{
    (void)state;
    counter c = { 0 };
    hscope_allocator al;
    hscope_load_options o = counted(&c, &al);
    hscope_heap_t *h = load(2, &o);
    uint64_t n = hscope_heap_object_count(h);
    assert_true(n >= 3000);

    hscope_tally_t *t = NULL;
    assert_int_equal(hscope_tally_compute(&t, h, "file:line:class", NULL, NULL), HSCOPE_OK);
    uint64_t tm = hscope_tally_memory(t);
    assert_true(tm >= hscope_tally_row_count(t) * 16); /* a count and a memsize a row */
    FREED_EXACTLY(&c, t, hscope_tally_free, tm);

    hscope_domtree_t *d = NULL;
    assert_int_equal(hscope_domtree_compute(&d, h, NULL, NULL), HSCOPE_OK);
    uint64_t dm = hscope_domtree_memory(d);
    assert_true(dm >= n * (4 + 4 + 4)); /* idom, retained count, retained size */
    const hscope_id *kids;
    uint64_t nk;
    assert_int_equal(hscope_domtree_children(d, HSCOPE_ID_NONE, -1, &kids, &nk, NULL),
                     HSCOPE_OK);
    uint64_t dm2 = hscope_domtree_memory(d);
    assert_true(dm2 >= dm + n * 4); /* and a child list over every object */

    hscope_id ids[64];
    for (hscope_id i = 0; i < 64; i++)
        ids[i] = i;
    hscope_holders_t *hs = NULL;
    assert_int_equal(hscope_holders_compute(&hs, d, ids, 64, NULL), HSCOPE_OK);
    uint64_t hm = hscope_holders_memory(hs);
    assert_true(hm > 0);
    FREED_EXACTLY(&c, hs, hscope_holders_free, hm);
    FREED_EXACTLY(&c, d, hscope_domtree_free, dm2);

    hscope_paths_t *p = NULL;
    assert_int_equal(hscope_paths_compute(&p, h, NULL, NULL), HSCOPE_OK);
    uint64_t pm = hscope_paths_memory(p);
    assert_true(pm >= n * 4); /* a parent an object */
    FREED_EXACTLY(&c, p, hscope_paths_free, pm);

    hscope_waste_t *w = NULL;
    assert_int_equal(hscope_waste_compute(&w, h, NULL, NULL), HSCOPE_OK);
    uint64_t wm = hscope_waste_memory(w);
    assert_true(wm > 0);
    FREED_EXACTLY(&c, w, hscope_waste_free, wm);

    hscope_heap_free(h);
    assert_int_equal(live(&c), 0);
}

/* A diff, its tally and its suspects. */
static void
test_diff_results(void **state)
{
    (void)state;
    counter c = { 0 };
    hscope_allocator al;
    hscope_load_options o = counted(&c, &al);
    hscope_heap_t *a = load(0, &o), *b = load(1, &o), *cc = load(2, &o);
    hscope_diff_t *df = NULL;
    assert_int_equal(hscope_diff_compute(&df, a, b, cc, NULL, NULL), HSCOPE_OK);
    uint64_t leaked = hscope_diff_count(df);
    assert_int_equal(leaked, 1000); /* objects 1000..1999: new in b, still in c */
    uint64_t fm = hscope_diff_memory(df);
    assert_true(fm >= leaked * 4);

    hscope_tally_t *t = NULL;
    assert_int_equal(hscope_diff_tally(&t, df, "file:line:class", NULL, NULL), HSCOPE_OK);
    uint64_t tm = hscope_tally_memory(t);
    assert_true(tm >= leaked * 4); /* every member's id */
    FREED_EXACTLY(&c, t, hscope_tally_free, tm);

    hscope_suspects_t *s = NULL;
    assert_int_equal(hscope_suspects_compute(&s, df, NULL, NULL), HSCOPE_OK);
    uint64_t sm = hscope_suspects_memory(s);
    /* its own dominator tree and paths over the target heap (a byte per
     * object when they are compact) */
    assert_true(sm >= hscope_heap_object_count(cc) * (4 + 4 + 4 + 1));
    FREED_EXACTLY(&c, s, hscope_suspects_free, sm);

    FREED_EXACTLY(&c, df, hscope_diff_free, fm);
    hscope_heap_free(a);
    hscope_heap_free(b);
    hscope_heap_free(cc);
    assert_int_equal(live(&c), 0);
}

/* Results of dump files read as streams, with the load's allocator. */
static void
test_stream_results(void **state)
{
    (void)state;
    counter c = { 0 };
    hscope_allocator al;
    hscope_load_options o = counted(&c, &al);

    hscope_tally_t *t = NULL;
    assert_int_equal(hscope_tally_file(&t, paths[2], "file:line:class", &o, NULL, NULL),
                     HSCOPE_OK);
    uint64_t tm = hscope_tally_memory(t);
    assert_true(tm >= hscope_tally_row_count(t) * 16);
    FREED_EXACTLY(&c, t, hscope_tally_free, tm);

    hscope_waste_t *w = NULL;
    assert_int_equal(hscope_waste_file(&w, paths[2], &o, NULL, NULL), HSCOPE_OK);
    uint64_t wm = hscope_waste_memory(w);
    assert_true(wm > 0);
    FREED_EXACTLY(&c, w, hscope_waste_free, wm);

    const char *p3[3] = { paths[0], paths[1], paths[2] };
    hscope_timeline_t *tl = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_timeline_compute(&tl, p3, 3, &o, NULL, &err);
    if (st != HSCOPE_OK)
        fail_msg("timeline: %s", err.message);
    uint64_t lm = hscope_timeline_memory(tl);
    /* a count and a memsize per group and dump */
    assert_true(lm >= hscope_timeline_group_count(tl) * 3 * 16);
    FREED_EXACTLY(&c, tl, hscope_timeline_free, lm);
    assert_int_equal(live(&c), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null),
        cmocka_unit_test(test_heap_results),
        cmocka_unit_test(test_diff_results),
        cmocka_unit_test(test_stream_results),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
