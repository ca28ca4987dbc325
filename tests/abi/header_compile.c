/*
 * header_compile.c - the public header compiles cleanly as C99, C11 and
 * (through header_compile.cpp) C++11/17, with -Wall -Wextra -Wpedantic
 * -Werror, and what it declares links against the shared library.
 *
 * Also pins the layout of the public structs that FFI callers spell out by
 * hand (examples/ffi/): existing fields never move (docs/ABI.md); a struct
 * may only grow at its end.  The checks are C89-style negative-size arrays
 * so they work in every language mode we test.
 */
#include <heapscope/heapscope.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define HSCOPE_TEST_ASSERT(name, cond) typedef char hscope_test_##name[(cond) ? 1 : -1]

/* hscope_error: examples/ffi declare exactly this layout. */
HSCOPE_TEST_ASSERT(error_size_off, offsetof(hscope_error, size) == 0);
HSCOPE_TEST_ASSERT(error_status_off, offsetof(hscope_error, status) == 4);
HSCOPE_TEST_ASSERT(error_errno_off, offsetof(hscope_error, sys_errno) == 8);
HSCOPE_TEST_ASSERT(error_reserved_off, offsetof(hscope_error, reserved) == 12);
HSCOPE_TEST_ASSERT(error_line_off, offsetof(hscope_error, line) == 16);
HSCOPE_TEST_ASSERT(error_offset_off, offsetof(hscope_error, offset) == 24);
HSCOPE_TEST_ASSERT(error_message_off, offsetof(hscope_error, message) == 32);
HSCOPE_TEST_ASSERT(error_message_size, sizeof(((hscope_error *)0)->message) == 256);
HSCOPE_TEST_ASSERT(error_min_size, sizeof(hscope_error) >= 288);

HSCOPE_TEST_ASSERT(tally_size_off, offsetof(hscope_tally_options, size) == 0);
HSCOPE_TEST_ASSERT(tally_sort_off, offsetof(hscope_tally_options, sort) == 4);
HSCOPE_TEST_ASSERT(tally_top_off, offsetof(hscope_tally_options, top) == 8);
HSCOPE_TEST_ASSERT(tally_min_size, sizeof(hscope_tally_options) >= 16);

HSCOPE_TEST_ASSERT(diff_flags_off, offsetof(hscope_diff_options, flags) == 4);
HSCOPE_TEST_ASSERT(dom_flags_off, offsetof(hscope_dom_options, flags) == 4);
HSCOPE_TEST_ASSERT(stats_gzip_off, offsetof(hscope_load_stats, gzip) == 4);
HSCOPE_TEST_ASSERT(stats_input_off, offsetof(hscope_load_stats, input_bytes) == 8);
HSCOPE_TEST_ASSERT(stats_memsize_off, offsetof(hscope_load_stats, total_memsize) == 160);
HSCOPE_TEST_ASSERT(load_flags_off, offsetof(hscope_load_options, flags) == 4);
HSCOPE_TEST_ASSERT(id_size, sizeof(hscope_id) == 4);
HSCOPE_TEST_ASSERT(status_size, sizeof(hscope_status) == 4);

/* Every public struct starts with its size. */
HSCOPE_TEST_ASSERT(alloc_size_off, offsetof(hscope_allocator, size) == 0);
HSCOPE_TEST_ASSERT(load_size_off, offsetof(hscope_load_options, size) == 0);
HSCOPE_TEST_ASSERT(stats_size_off, offsetof(hscope_load_stats, size) == 0);
HSCOPE_TEST_ASSERT(diff_size_off, offsetof(hscope_diff_options, size) == 0);
HSCOPE_TEST_ASSERT(dom_size_off, offsetof(hscope_dom_options, size) == 0);

/* A few constants FFI callers hard-code. */
HSCOPE_TEST_ASSERT(ok_zero, HSCOPE_OK == 0);
HSCOPE_TEST_ASSERT(col_type, HSCOPE_COL_TYPE == 2 && HSCOPE_COL_MEMSIZE == 5);
HSCOPE_TEST_ASSERT(elem_u32, HSCOPE_ELEM_U8 == 1 && HSCOPE_ELEM_U32 == 3);
HSCOPE_TEST_ASSERT(id_none, HSCOPE_ID_NONE == 0xFFFFFFFFu);
HSCOPE_TEST_ASSERT(version_number, HSCOPE_VERSION_NUMBER == HSCOPE_VERSION_MAJOR * 10000 +
                                       HSCOPE_VERSION_MINOR * 100 + HSCOPE_VERSION_PATCH);

static int failures;

static void
check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

int
main(void)
{
    /* The _INIT macros and their function twins agree. */
    hscope_error e1 = HSCOPE_ERROR_INIT;
    hscope_error e2;
    memset(&e2, 0xAB, sizeof(e2));
    hscope_error_init(&e2);
    check(e1.size == sizeof(hscope_error) && e2.size == e1.size && e2.status == 0 &&
              e2.message[0] == 0, "hscope_error_init == HSCOPE_ERROR_INIT");

    hscope_load_options l1 = HSCOPE_LOAD_OPTIONS_INIT;
    hscope_load_options l2;
    hscope_load_options_init(&l2);
    check(l1.size == sizeof(l1) && l2.size == l1.size && l2.flags == 0 &&
              l2.allocator == NULL && l2.max_memory == 0,
          "hscope_load_options_init == HSCOPE_LOAD_OPTIONS_INIT");

    hscope_load_stats s1 = HSCOPE_LOAD_STATS_INIT;
    hscope_load_stats s2;
    hscope_load_stats_init(&s2);
    check(s1.size == sizeof(s1) && s2.size == s1.size && s2.objects == 0,
          "hscope_load_stats_init == HSCOPE_LOAD_STATS_INIT");

    hscope_tally_options t1 = HSCOPE_TALLY_OPTIONS_INIT;
    hscope_tally_options t2;
    hscope_tally_options_init(&t2);
    check(t1.size == sizeof(t1) && t2.size == t1.size && t2.top == 0,
          "hscope_tally_options_init == HSCOPE_TALLY_OPTIONS_INIT");

    hscope_diff_options d1 = HSCOPE_DIFF_OPTIONS_INIT;
    hscope_diff_options d2;
    hscope_diff_options_init(&d2);
    check(d1.size == sizeof(d1) && d2.size == d1.size && d2.flags == 0,
          "hscope_diff_options_init == HSCOPE_DIFF_OPTIONS_INIT");

    hscope_dom_options m1 = HSCOPE_DOM_OPTIONS_INIT;
    hscope_dom_options m2;
    hscope_dom_options_init(&m2);
    check(m1.size == sizeof(m1) && m2.size == m1.size && m2.flags == 0,
          "hscope_dom_options_init == HSCOPE_DOM_OPTIONS_INIT");

    /* Compile-time and run-time versions agree. */
    check(hscope_version_number() == (uint32_t)HSCOPE_VERSION_NUMBER, "version number");
    check(strcmp(hscope_version_string(), HSCOPE_VERSION_STRING) == 0, "version string");
    check(strcmp(hscope_status_name(HSCOPE_ERR_PARSE), "HSCOPE_ERR_PARSE") == 0,
          "hscope_status_name");

    /* One real call through the whole stack. */
    static const char dump[] =
        "{\"address\":\"0x1\", \"type\":\"STRING\", \"memsize\":40}\n";
    hscope_heap_t *heap = NULL;
    hscope_status st = hscope_heap_open_memory(&heap, dump, sizeof(dump) - 1, NULL, &e1);
    check(st == HSCOPE_OK && heap != NULL, "hscope_heap_open_memory");
    if (heap) {
        check(hscope_heap_object_count(heap) == 1, "object count");
        check(hscope_heap_object_type(heap, 0) == HSCOPE_TYPE_STRING, "object type");
        check(hscope_heap_object_memsize(heap, 0) == 40, "object memsize");
        check(hscope_heap_object_class(heap, 0) == HSCOPE_ID_NONE, "no class");
    }
    hscope_heap_free(heap);
    hscope_heap_free(NULL);

    if (failures)
        return 1;
#ifdef __cplusplus
    printf("ok: C++ %ld\n", (long)__cplusplus);
#else
    printf("ok: C %ld\n", (long)__STDC_VERSION__);
#endif
    return 0;
}
