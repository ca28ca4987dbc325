/*
 * test_intern.c - white-box tests of the string interner (src/core/intern.c).
 *
 * The interner names every distinct byte string by a dense id from 1 (0 is
 * "absent"); strings may contain NUL bytes and may be empty.  The table
 * starts at 1024 slots and doubles at load factor 1/2, so 100k strings go
 * through many rehashes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/core/intern.h"

typedef struct fx {
    hscope__mem mem;
    hscope__intern in;
    hscope_error err;
} fx;

static int
setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    hscope__mem_init(&f->mem, NULL, 0);
    hscope_error_init(&f->err);
    if (hscope__intern_init(&f->in, &f->mem, &f->err) != HSCOPE_OK)
        return -1;
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    fx *f = *state;
    hscope__intern_free(&f->in);
    assert_int_equal(atomic_load(&f->mem.used), 0);
    free(f);
    return 0;
}

static uint32_t
add(fx *f, const char *s, size_t n)
{
    uint32_t id = 0;
    assert_int_equal(hscope__intern_add(&f->in, s, n, &id, &f->err), HSCOPE_OK);
    assert_true(id != 0);
    return id;
}
#define ADD(f, lit) add((f), (lit), sizeof(lit) - 1)

static void
test_dense_ids(void **state)
{
    fx *f = *state;
    assert_int_equal(f->in.count, 1); /* id 0 reserved */
    assert_int_equal(ADD(f, "alpha"), 1);
    assert_int_equal(ADD(f, "beta"), 2);
    assert_int_equal(ADD(f, "gamma"), 3);
    assert_int_equal(f->in.count, 4);
    assert_string_equal(hscope__intern_str(&f->in, 1), "alpha");
    assert_string_equal(hscope__intern_str(&f->in, 2), "beta");
    assert_string_equal(hscope__intern_str(&f->in, 3), "gamma");
    assert_int_equal(hscope__intern_len(&f->in, 3), 5);
    /* ids not in use read as absent */
    assert_null(hscope__intern_str(&f->in, 0));
    assert_null(hscope__intern_str(&f->in, 4));
    assert_int_equal(hscope__intern_len(&f->in, 0), 0);
    assert_int_equal(hscope__intern_len(&f->in, 99), 0);
}

static void
test_same_string_same_id(void **state)
{
    fx *f = *state;
    uint32_t a = ADD(f, "Foo");
    uint32_t b = ADD(f, "Bar");
    /* a different buffer with the same bytes */
    char buf[8];
    memcpy(buf, "Foo", 3);
    assert_int_equal(add(f, buf, 3), a);
    assert_int_equal(ADD(f, "Bar"), b);
    assert_int_equal(f->in.count, 3);
    /* prefixes and case differences are different strings */
    assert_true(ADD(f, "Fo") != a);
    assert_true(ADD(f, "foo") != a);
    assert_true(ADD(f, "Foo ") != a);
    assert_int_equal(f->in.count, 6);
}

/* Decoded values may contain NUL: length and bytes, not C strings. */
static void
test_embedded_nul(void **state)
{
    fx *f = *state;
    uint32_t a = ADD(f, "a");
    uint32_t anb = ADD(f, "a\0b");
    uint32_t anc = ADD(f, "a\0c");
    uint32_t an = ADD(f, "a\0");
    assert_true(a != anb && anb != anc && an != a && an != anb);
    assert_int_equal(hscope__intern_len(&f->in, anb), 3);
    assert_memory_equal(hscope__intern_str(&f->in, anb), "a\0b", 3);
    assert_int_equal(hscope__intern_len(&f->in, an), 2);
    /* every stored string is followed by a NUL terminator */
    assert_int_equal(hscope__intern_str(&f->in, anb)[3], '\0');
    assert_int_equal(ADD(f, "a\0b"), anb);
    assert_int_equal(hscope__intern_find(&f->in, "a\0c", 3), anc);
    assert_int_equal(hscope__intern_find(&f->in, "a\0d", 3), 0);
}

/* The empty string is a string (id >= 1), not "absent" (id 0). */
static void
test_empty_string(void **state)
{
    fx *f = *state;
    assert_int_equal(hscope__intern_find(&f->in, "", 0), 0);
    uint32_t e = add(f, "", 0);
    assert_int_equal(e, 1);
    const char *s = hscope__intern_str(&f->in, e);
    assert_non_null(s);
    assert_string_equal(s, "");
    assert_int_equal(hscope__intern_len(&f->in, e), 0);
    assert_int_equal(add(f, "", 0), e);
    assert_int_equal(hscope__intern_find(&f->in, "", 0), e);
    uint32_t x = ADD(f, "x");
    assert_int_equal(x, 2);
    assert_null(hscope__intern_str(&f->in, 0));
}

/* 100k distinct strings: ids stay dense and every one survives rehash. */
static void
test_many_strings(void **state)
{
    fx *f = *state;
    enum { N = 100000 };
    char buf[32];
    for (uint32_t i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof(buf), "/app/lib/file_%u.rb", i);
        assert_int_equal(add(f, buf, (size_t)n), i + 1);
    }
    assert_int_equal(f->in.count, N + 1);
    /* load factor <= 1/2 */
    assert_true((f->in.tmask + 1) >= 2 * f->in.count);
    for (uint32_t i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof(buf), "/app/lib/file_%u.rb", i);
        assert_int_equal(hscope__intern_find(&f->in, buf, (size_t)n), i + 1);
        assert_int_equal(hscope__intern_len(&f->in, i + 1), (uint32_t)n);
        assert_memory_equal(hscope__intern_str(&f->in, i + 1), buf, (size_t)n);
    }
    /* adding them again changes nothing */
    for (uint32_t i = 0; i < N; i += 997) {
        int n = snprintf(buf, sizeof(buf), "/app/lib/file_%u.rb", i);
        assert_int_equal(add(f, buf, (size_t)n), i + 1);
    }
    assert_int_equal(f->in.count, N + 1);
    assert_true(hscope__intern_bytes(&f->in) > (size_t)N * 18);
}

static void
test_find_does_not_add(void **state)
{
    fx *f = *state;
    assert_int_equal(hscope__intern_find(&f->in, "vm", 2), 0);
    assert_int_equal(f->in.count, 1);
    uint32_t vm = ADD(f, "vm");
    uint32_t mc = ADD(f, "machine_context");
    assert_int_equal(hscope__intern_find(&f->in, "vm", 2), vm);
    assert_int_equal(hscope__intern_find(&f->in, "machine_context", 15), mc);
    /* a prefix of a stored string is not found */
    assert_int_equal(hscope__intern_find(&f->in, "machine", 7), 0);
    assert_int_equal(hscope__intern_find(&f->in, "v", 1), 0);
    assert_int_equal(f->in.count, 3);
}

/* Long strings (beyond the arena's first growth) are kept whole. */
static void
test_long_string(void **state)
{
    fx *f = *state;
    size_t n = 1 << 20;
    char *s = malloc(n);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = (char)('a' + i % 26);
    uint32_t a = ADD(f, "short");
    uint32_t id = add(f, s, n);
    assert_int_equal(hscope__intern_len(&f->in, id), n);
    assert_memory_equal(hscope__intern_str(&f->in, id), s, n);
    /* earlier strings are still right after the arena moved */
    assert_string_equal(hscope__intern_str(&f->in, a), "short");
    assert_int_equal(hscope__intern_find(&f->in, s, n), id);
    free(s);
}

/* Out of memory (a max_memory cap) fails cleanly; earlier strings stay
 * valid and everything is freed. */
static void
test_nomem(void **state)
{
    (void)state;
    hscope__mem mem;
    hscope__mem_init(&mem, NULL, 64 * 1024);
    hscope__intern in;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope__intern_init(&in, &mem, &err), HSCOPE_OK);
    char buf[32];
    uint32_t i, id = 0;
    hscope_status st = HSCOPE_OK;
    for (i = 0; i < 100000; i++) {
        int n = snprintf(buf, sizeof(buf), "string-%u", i);
        st = hscope__intern_add(&in, buf, (size_t)n, &id, &err);
        if (st != HSCOPE_OK)
            break;
    }
    assert_int_equal(st, HSCOPE_ERR_NOMEM);
    assert_int_equal(err.status, HSCOPE_ERR_NOMEM);
    assert_true(err.message[0] != '\0');
    assert_true(i > 10);
    assert_true(atomic_load(&mem.used) <= 64 * 1024);
    /* strings added before the failure are intact */
    for (uint32_t j = 0; j < i; j++) {
        int n = snprintf(buf, sizeof(buf), "string-%u", j);
        assert_int_equal(hscope__intern_find(&in, buf, (size_t)n), j + 1);
    }
    hscope__intern_free(&in);
    assert_int_equal(atomic_load(&mem.used), 0);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_dense_ids),
        T(test_same_string_same_id),
        T(test_embedded_nul),
        T(test_empty_string),
        T(test_many_strings),
        T(test_find_does_not_add),
        T(test_long_string),
        cmocka_unit_test(test_nomem),
    };
#undef T
    return cmocka_run_group_tests_name("intern", tests, NULL, NULL);
}
