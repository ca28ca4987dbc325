/*
 * test_pb.c - the protobuf encoder of the pprof export (src/report/pb.c)
 * against bytes worked out by hand from the protobuf encoding rules
 * (varints of 7 bits, low group first, high bit "more"; keys
 * field << 3 | wire type; length-delimited fields as length + bytes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "src/report/pb.h"

static hscope__mem mem;

static void
expect_bytes(const hscope__pb *b, const uint8_t *want, size_t n)
{
    assert_false(b->failed);
    assert_int_equal(b->len, n);
    assert_memory_equal(b->p, want, n);
}

static void
test_varints(void **state)
{
    (void)state;
    hscope__pb b;
    hscope__pb_init(&b, &mem);
    hscope__pb_varint(&b, 0);
    hscope__pb_varint(&b, 1);
    hscope__pb_varint(&b, 127);
    hscope__pb_varint(&b, 128);   /* 1 0000000: 80 01 */
    hscope__pb_varint(&b, 300);   /* 10 0101100: ac 02 */
    hscope__pb_varint(&b, 16384); /* 1 0000000 0000000: 80 80 01 */
    static const uint8_t want[] = { 0x00, 0x01, 0x7f, 0x80, 0x01, 0xac, 0x02, 0x80, 0x80, 0x01 };
    expect_bytes(&b, want, sizeof(want));
    b.len = 0;
    hscope__pb_varint(&b, UINT64_MAX); /* 64 ones: nine ff and 01 */
    static const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
    expect_bytes(&b, max, sizeof(max));
    assert_int_equal(hscope__pb_varint_size(0), 1);
    assert_int_equal(hscope__pb_varint_size(127), 1);
    assert_int_equal(hscope__pb_varint_size(128), 2);
    assert_int_equal(hscope__pb_varint_size(16383), 2);
    assert_int_equal(hscope__pb_varint_size(16384), 3);
    assert_int_equal(hscope__pb_varint_size(UINT64_MAX), 10);
    hscope__pb_free(&b);
}

/* profile.proto's ValueType{type: 1, unit: 2}; a zero field left out; an
 * int64 -1 as ten bytes. */
static void
test_fields(void **state)
{
    (void)state;
    hscope__pb b;
    hscope__pb_init(&b, &mem);
    hscope__pb_u64(&b, 1, 1);
    hscope__pb_u64(&b, 2, 2);
    hscope__pb_u64(&b, 3, 0);
    static const uint8_t vt[] = { 0x08, 0x01, 0x10, 0x02 };
    expect_bytes(&b, vt, sizeof(vt));
    b.len = 0;
    hscope__pb_i64(&b, 9, -1); /* key 9 << 3 = 0x48 */
    static const uint8_t neg[] = { 0x48, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
    expect_bytes(&b, neg, sizeof(neg));
    b.len = 0;
    hscope__pb_u64(&b, 16, 5); /* key 128: two bytes 80 01 */
    static const uint8_t big[] = { 0x80, 0x01, 0x05 };
    expect_bytes(&b, big, sizeof(big));
    hscope__pb_free(&b);
}

/* string_table entries "" and "ab" (field 6: key 0x32), then a Sample
 * {location_id: [1], value: [3, 150]} as field 2 of the profile. */
static void
test_nested(void **state)
{
    (void)state;
    hscope__pb top, sub;
    hscope__pb_init(&top, &mem);
    hscope__pb_init(&sub, &mem);
    hscope__pb_bytes(&top, 6, "", 0);
    hscope__pb_bytes(&top, 6, "ab", 2);
    uint64_t loc[1] = { 1 }, val[2] = { 3, 150 };
    hscope__pb_packed(&sub, 1, loc, 1);
    hscope__pb_packed(&sub, 2, val, 2);
    hscope__pb_packed(&sub, 3, val, 0); /* nothing */
    static const uint8_t s[] = { 0x0a, 0x01, 0x01, 0x12, 0x03, 0x03, 0x96, 0x01 };
    expect_bytes(&sub, s, sizeof(s));
    hscope__pb_msg(&top, 2, &sub);
    static const uint8_t want[] = { 0x32, 0x00, 0x32, 0x02, 'a', 'b',
                                    0x12, 0x08, 0x0a, 0x01, 0x01, 0x12, 0x03, 0x03, 0x96, 0x01 };
    expect_bytes(&top, want, sizeof(want));
    hscope__pb_free(&top);
    hscope__pb_free(&sub);
}

/* A long field: its length takes two bytes; the buffer grows. */
static void
test_long(void **state)
{
    (void)state;
    hscope__pb b;
    hscope__pb_init(&b, &mem);
    char data[200];
    memset(data, 'x', sizeof(data));
    hscope__pb_bytes(&b, 1, data, sizeof(data));
    assert_false(b.failed);
    assert_int_equal(b.len, 3 + 200);
    assert_int_equal(b.p[0], 0x0a);
    assert_int_equal(b.p[1], 0xc8); /* 200 = 1 1001000 */
    assert_int_equal(b.p[2], 0x01);
    assert_memory_equal(b.p + 3, data, 200);
    hscope__pb_free(&b);
}

static void *
no_malloc(void *ud, size_t n)
{
    (void)ud;
    (void)n;
    return NULL;
}
static void *
no_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    (void)p;
    (void)n;
    return NULL;
}
static void
no_free(void *ud, void *p)
{
    (void)ud;
    (void)p;
}

/* Out of memory: `failed` is set, later calls do nothing, and a parent
 * of a failed message fails too. */
static void
test_nomem(void **state)
{
    (void)state;
    hscope_allocator a = { sizeof(a), 0, no_malloc, no_realloc, no_free, NULL };
    hscope__mem m;
    hscope__mem_init(&m, &a, 0);
    hscope__pb b, top;
    hscope__pb_init(&b, &m);
    hscope__pb_u64(&b, 1, 1);
    assert_true(b.failed);
    assert_int_equal(b.len, 0);
    hscope__pb_init(&top, &mem);
    hscope__pb_msg(&top, 2, &b);
    assert_true(top.failed);
    hscope__pb_free(&b);
    hscope__pb_free(&top);
}

int
main(void)
{
    hscope__mem_init(&mem, NULL, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varints), cmocka_unit_test(test_fields),
        cmocka_unit_test(test_nested), cmocka_unit_test(test_long),
        cmocka_unit_test(test_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
