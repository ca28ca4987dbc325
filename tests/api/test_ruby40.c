/*
 * test_ruby40.c - what Ruby 4.0 and later put in a dump, and fields no Ruby
 * writes yet, through the public API on hand-made dumps (the expectations
 * are worked out by hand from the dump text below):
 *
 *  - flags that are not true ("age":3), "shareable", "object_id";
 *  - IMEMO fields objects: their owner, tally with
 *    HSCOPE_TALLY_FIELDS_WITH_OWNER, root paths through them;
 *  - machine_context is conservative: paths prefer the other roots;
 *  - unknown keys, flags and types: kept, counted by name, saved and
 *    reopened with the index;
 *  - the diff's identity by object_id: a moved object survives, a reused
 *    address does not; loaded, streamed on one and on four threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

/* ' for " (readable C), one record per line */
static char *
dump(const char *const *lines, size_t n, size_t *len)
{
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += strlen(lines[i]) + 1;
    char *d = malloc(total), *p = d;
    assert_non_null(d);
    for (size_t i = 0; i < n; i++) {
        for (const char *s = lines[i]; *s; s++)
            *p++ = *s == '\'' ? '"' : *s;
        *p++ = '\n';
    }
    *p = '\0';
    *len = (size_t)(p - d);
    return d;
}

static hscope_heap_t *
load_lines(const char *const *lines, size_t n)
{
    size_t len;
    char *text = dump(lines, n, &len);
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_heap_open_memory(&h, text, len, NULL, &err);
    if (st != HSCOPE_OK)
        fail_msg("load: %s", err.message);
    free(text);
    return h;
}

static hscope_id
find(const hscope_heap_t *h, uint64_t addr)
{
    hscope_id id = HSCOPE_ID_NONE;
    assert_int_equal(hscope_heap_find(h, addr, &id), HSCOPE_OK);
    return id;
}

/* A class Foo with a class-level ivar (fields 0x2000 -> Hash 0x2100), a
 * String 0x3000 with an ivar (fields 0x2200 -> the same Hash), the Hash's
 * object_id 8, an object of a type no Ruby has, an unknown key and flag. */
static const char *const ruby40[] = {
    "{'type':'ROOT', 'root':'vm', 'references':['0x1000', '0x1200', '0x1300']}",
    "{'type':'ROOT', 'root':'machine_context', 'references':['0x3000', '0x2100']}",
    "{'address':'0x9000', 'type':'SHAPE', 'id':0, 'depth':1, 'shape_type':'ROOT', 'edges':2, 'memsize':100}",
    "{'address':'0x9040', 'type':'SHAPE', 'id':1, 'parent_id':0, 'depth':2, 'shape_type':'OBJ_ID', 'edges':0, 'memsize':50}",
    "{'address':'0x1000', 'type':'CLASS', 'shape_id':0, 'slot_size':96, 'class':'0x1100', 'name':'Foo', "
    "'references':['0x2000'], 'memsize':100, 'flags':{'wb_protected':true, 'age':3, 'old':true, "
    "'uncollectible':true, 'marked':true}}",
    "{'address':'0x1100', 'type':'CLASS', 'shape_id':0, 'slot_size':96, 'real_class_name':'Class', "
    "'singleton':true, 'memsize':90, 'flags':{'wb_protected':true, 'age':3, 'old':true}}",
    "{'address':'0x2000', 'type':'IMEMO', 'shape_id':3, 'slot_size':24, 'class':'0x1000', "
    "'imemo_type':'fields', 'references':['0x2100'], 'memsize':24, 'flags':{'wb_protected':true, 'age':1}}",
    "{'address':'0x2100', 'type':'HASH', 'shape_id':0, 'slot_size':40, 'class':'0x1200', 'size':0, "
    "'memsize':40, 'flags':{'wb_protected':true, 'age':0, 'object_id':8, 'shareable':true}}",
    "{'address':'0x1200', 'type':'CLASS', 'slot_size':96, 'name':'Hash', 'memsize':80, 'flags':{'age':3}}",
    "{'address':'0x1300', 'type':'CLASS', 'slot_size':96, 'name':'String', 'memsize':80, 'flags':{'age':3}}",
    "{'address':'0x3000', 'type':'STRING', 'shape_id':2, 'slot_size':40, 'class':'0x1300', 'bytesize':1, "
    "'value':'x', 'references':['0x2200'], 'memsize':40, 'flags':{'age':2, 'sparkle':0.5}}",
    "{'address':'0x2200', 'type':'IMEMO', 'slot_size':24, 'class':'0x3000', 'imemo_type':'fields', "
    "'references':['0x2100'], 'memsize':24, 'flags':{'age':2}}",
    "{'address':'0x4000', 'type':'FUTURE', 'class':'0x1200', 'x_new':[1, {'a':2}], 'memsize':8, "
    "'flags':{'age':0, 'sparkle':true}}",
};

static void
test_flags_and_object_id(void **state)
{
    (void)state;
    hscope_heap_t *h = load_lines(ruby40, sizeof(ruby40) / sizeof(ruby40[0]));
    hscope_id hash = find(h, 0x2100), foo = find(h, 0x1000);
    uint64_t oid = 0;
    assert_int_equal(hscope_heap_object_oid(h, hash, &oid), 1);
    assert_int_equal(oid, 8);
    assert_int_equal(hscope_heap_object_oid(h, hash, NULL), 1);
    assert_int_equal(hscope_heap_object_oid(h, foo, &oid), 0);
    assert_int_equal(hscope_heap_object_oid(h, 999, &oid), 0);
    assert_true(hscope_heap_object_flags(h, hash) & HSCOPE_FLAG_SHAREABLE);
    assert_false(hscope_heap_object_flags(h, foo) & HSCOPE_FLAG_SHAREABLE);
    /* "age":3 is read, not stored: the other flags are as written */
    assert_int_equal(hscope_heap_object_flags(h, foo),
                     HSCOPE_FLAG_WB_PROTECTED | HSCOPE_FLAG_OLD | HSCOPE_FLAG_UNCOLLECTIBLE |
                         HSCOPE_FLAG_MARKED);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_heap_stats(h, &s), HSCOPE_OK);
    assert_int_equal(s.objects, 9);
    assert_int_equal(s.shapes, 2);
    assert_int_equal(s.object_ids, 1);
    assert_int_equal(s.skipped_lines, 0);
    hscope_heap_free(h);
}

static void
test_fields_owner(void **state)
{
    (void)state;
    hscope_heap_t *h = load_lines(ruby40, sizeof(ruby40) / sizeof(ruby40[0]));
    assert_int_equal(hscope_heap_object_owner(h, find(h, 0x2000)), find(h, 0x1000));
    assert_int_equal(hscope_heap_object_owner(h, find(h, 0x2200)), find(h, 0x3000));
    assert_int_equal(hscope_heap_object_owner(h, find(h, 0x2100)), HSCOPE_ID_NONE);
    assert_int_equal(hscope_heap_object_owner(h, find(h, 0x1000)), HSCOPE_ID_NONE);
    assert_int_equal(hscope_heap_object_owner(h, 12345), HSCOPE_ID_NONE);
    assert_string_equal(hscope_heap_object_class_label(h, find(h, 0x2000)), "<imemo:fields>");

    /* by class: as the dump says, then with the owners */
    hscope_tally_options o = HSCOPE_TALLY_OPTIONS_INIT;
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_tally_compute(&t, h, "class", &o, &err), HSCOPE_OK);
    /* by default the two fields objects are a row of their own */
    int found = 0;
    for (uint64_t i = 0; i < hscope_tally_row_count(t); i++)
        if (strcmp(hscope_tally_row_key(t, i), "<imemo:fields>") == 0) {
            assert_int_equal(hscope_tally_row_count_of(t, i), 2);
            assert_int_equal(hscope_tally_row_memsize(t, i), 48);
            found = 1;
        }
    assert_true(found);
    hscope_tally_free(t);
    o.flags = HSCOPE_TALLY_FIELDS_WITH_OWNER;
    assert_int_equal(hscope_tally_compute(&t, h, "class", &o, &err), HSCOPE_OK);
    /* Foo's fields go to Foo's row ("Class": its class 0x1100 is a
     * singleton whose real_class_name is Class), the String's to String */
    uint64_t cls_n = 0, cls_m = 0, str_n = 0, str_m = 0;
    for (uint64_t i = 0; i < hscope_tally_row_count(t); i++) {
        const char *k = hscope_tally_row_key(t, i);
        assert_string_not_equal(k, "<imemo:fields>");
        if (strcmp(k, "Class") == 0) {
            cls_n = hscope_tally_row_count_of(t, i);
            cls_m = hscope_tally_row_memsize(t, i);
        } else if (strcmp(k, "String") == 0) {
            str_n = hscope_tally_row_count_of(t, i);
            str_m = hscope_tally_row_memsize(t, i);
        }
    }
    assert_int_equal(cls_n, 2);   /* Foo + its fields */
    assert_int_equal(cls_m, 124);
    assert_int_equal(str_n, 2);   /* the String + its fields */
    assert_int_equal(str_m, 64);
    uint64_t n, m;
    hscope_tally_totals(t, &n, &m);
    assert_int_equal(n, 9);
    hscope_tally_free(t);
    /* the streamed fold cannot: an owner may come after its fields */
    char path[] = "/tmp/hscope_r40_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len;
    char *text = dump(ruby40, sizeof(ruby40) / sizeof(ruby40[0]), &len);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    free(text);
    assert_int_equal(hscope_tally_file(&t, path, "class", NULL, &o, &err), HSCOPE_ERR_UNSUPPORTED);
    assert_null(t);
    unlink(path);
    hscope_heap_free(h);
}

static void
test_conservative_roots(void **state)
{
    (void)state;
    hscope_heap_t *h = load_lines(ruby40, sizeof(ruby40) / sizeof(ruby40[0]));
    int vm = -1, mc = -1;
    for (uint32_t c = 0; c < hscope_heap_root_category_count(h); c++) {
        if (strcmp(hscope_heap_root_category_name(h, c), "vm") == 0)
            vm = (int)c;
        if (strcmp(hscope_heap_root_category_name(h, c), "machine_context") == 0)
            mc = (int)c;
    }
    assert_true(vm >= 0 && mc >= 0);
    assert_int_equal(hscope_heap_root_category_conservative(h, (uint32_t)vm), 0);
    assert_int_equal(hscope_heap_root_category_conservative(h, (uint32_t)mc), 1);
    assert_int_equal(hscope_heap_root_category_conservative(h, 99), 0);
    assert_int_equal(hscope_heap_root_category_conservative(NULL, 0), 0);
    hscope_paths_t *p = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_paths_compute(&p, h, NULL, &err), HSCOPE_OK);
    /* machine_context references the Hash itself, but vm reaches it:
     * vm -> Foo -> fields -> Hash, the owner -> fields -> value path */
    hscope_id path[8];
    int32_t cat = -1;
    assert_int_equal(hscope_paths_get(p, find(h, 0x2100), path, 8, &cat), 3);
    assert_int_equal(cat, vm);
    assert_int_equal(path[0], find(h, 0x1000));
    assert_int_equal(path[1], find(h, 0x2000));
    assert_int_equal(path[2], find(h, 0x2100));
    /* the String: only machine_context holds it */
    assert_int_equal(hscope_paths_get(p, find(h, 0x3000), path, 8, &cat), 1);
    assert_int_equal(cat, mc);
    assert_int_equal(hscope_paths_get(p, find(h, 0x2200), path, 8, &cat), 2);
    assert_int_equal(cat, mc);
    hscope_paths_free(p);
    hscope_heap_free(h);
}

static void
check_unknown(const hscope_heap_t *h)
{
    static const struct { int32_t kind; const char *name; uint64_t count; } want[] = {
        { HSCOPE_UNKNOWN_FLAG, "sparkle", 2 },
        { HSCOPE_UNKNOWN_KEY, "x_new", 1 },
        { HSCOPE_UNKNOWN_TYPE, "FUTURE", 1 },
    };
    assert_int_equal(hscope_heap_unknown_count(h), 3);
    for (uint32_t i = 0; i < 3; i++) {
        int32_t kind = 0;
        const char *name = NULL;
        uint64_t count = 0;
        assert_int_equal(hscope_heap_unknown_get(h, i, &kind, &name, &count), HSCOPE_OK);
        assert_int_equal(kind, want[i].kind);
        assert_string_equal(name, want[i].name);
        assert_int_equal(count, want[i].count);
    }
    assert_int_equal(hscope_heap_unknown_get(h, 3, NULL, NULL, NULL), HSCOPE_ERR_NOT_FOUND);
    assert_int_equal(hscope_heap_unknown_get(NULL, 0, NULL, NULL, NULL), HSCOPE_ERR_INVALID_ARG);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_heap_stats(h, &s), HSCOPE_OK);
    assert_int_equal(s.unknown_keys, 3);  /* the flag twice, the key once */
    assert_int_equal(s.unknown_types, 1);
    assert_int_equal(s.object_ids, 1);
    hscope_id f = HSCOPE_ID_NONE;
    assert_int_equal(hscope_heap_find(h, 0x4000, &f), HSCOPE_OK);
    assert_string_equal(hscope_heap_type_name(h, hscope_heap_object_type(h, f)), "FUTURE");
}

static void
test_unknown_fields_and_saved_index(void **state)
{
    (void)state;
    hscope_heap_t *h = load_lines(ruby40, sizeof(ruby40) / sizeof(ruby40[0]));
    check_unknown(h);
    char path[] = "/tmp/hscope_r40_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_heap_save(h, path, NULL, &err), HSCOPE_OK);
    hscope_heap_t *g = NULL;
    assert_int_equal(hscope_heap_open_saved(&g, path, NULL, NULL, &err), HSCOPE_OK);
    check_unknown(g);
    uint64_t oid = 0;
    assert_int_equal(hscope_heap_object_oid(g, find(g, 0x2100), &oid), 1);
    assert_int_equal(oid, 8);
    assert_int_equal(hscope_heap_object_owner(g, find(g, 0x2200)), find(g, 0x3000));
    hscope_heap_free(g);
    unlink(path);
    /* more names than the table holds: the rest together */
    char *many[80];
    size_t k = 0;
    many[k++] = strdup("{'type':'ROOT', 'root':'vm', 'references':['0x10']}");
    for (int i = 0; i < 40; i++) {
        char line[128];
        snprintf(line, sizeof(line), "{'address':'0x%x', 'type':'STRING', 'k%02d':1, 'memsize':40}",
                 0x10 + 0x28 * i, i);
        many[k++] = strdup(line);
    }
    hscope_heap_t *x = load_lines((const char *const *)many, k);
    assert_int_equal(hscope_heap_unknown_count(x), 33);
    int32_t kind;
    const char *name;
    uint64_t count;
    assert_int_equal(hscope_heap_unknown_get(x, 31, &kind, &name, &count), HSCOPE_OK);
    assert_string_equal(name, "k31");
    assert_int_equal(hscope_heap_unknown_get(x, 32, &kind, &name, &count), HSCOPE_OK);
    assert_int_equal(kind, HSCOPE_UNKNOWN_OTHER);
    assert_string_equal(name, "(other)");
    assert_int_equal(count, 8);
    hscope_heap_free(x);
    for (size_t i = 0; i < k; i++)
        free(many[i]);
    hscope_heap_free(h);
}

/* --------------------------------------------------------------- diff */

#define ROOT "{'type':'ROOT', 'root':'vm', 'references':['0x10']}"
#define CLS "{'address':'0x10', 'type':'CLASS', 'name':'Obj', 'memsize':100}"
/* an OBJECT at address A, allocated in generation G at app.rb:L, object_id ID */
#define OBJ(a, g, l, id) "{'address':'" a "', 'type':'OBJECT', 'class':'0x10', 'file':'app.rb', " \
    "'line':" #l ", 'generation':" #g ", 'memsize':40, 'flags':{'age':1, 'object_id':" #id "}}"
#define OBJ0(a, g, l) "{'address':'" a "', 'type':'OBJECT', 'class':'0x10', 'file':'app.rb', " \
    "'line':" #l ", 'generation':" #g ", 'memsize':40, 'flags':{'age':1}}"

/* X (id 11) lives through all three dumps, moved in C; Z (id 12) is born
 * between A and B and moves in C: the leak; W (id 13) is born with Z and
 * freed, and V (id 14), allocated at the same site in the same generation,
 * reuses W's address in C: by address it would pass for W; Y has no id. */
static const char *const dump_a[] = { ROOT, CLS, OBJ("0x500", 1, 5, 11), OBJ0("0x600", 1, 6) };
static const char *const dump_b[] = { ROOT, CLS, OBJ("0x500", 1, 5, 11), OBJ0("0x600", 1, 6),
                                      OBJ("0x700", 2, 7, 12), OBJ("0x800", 2, 8, 13) };
static const char *const dump_c[] = { ROOT, CLS, OBJ("0x900", 1, 5, 11), OBJ0("0x600", 1, 6),
                                      OBJ("0xa00", 2, 7, 12), OBJ("0x800", 2, 8, 14) };

static void
leaked_of(hscope_diff_t *d, char *out, size_t n)
{
    hscope_heap_t *t = hscope_diff_heap(d);
    out[0] = '\0';
    for (uint64_t i = 0; i < hscope_diff_count(d); i++) {
        char one[32];
        snprintf(one, sizeof(one), "%s%llx", i ? "," : "",
                 (unsigned long long)hscope_heap_object_address(t, hscope_diff_objects(d)[i]));
        strncat(out, one, n - strlen(out) - 1);
    }
}

static void
test_diff_object_id(void **state)
{
    (void)state;
    hscope_heap_t *a = load_lines(dump_a, 4), *b = load_lines(dump_b, 6), *c = load_lines(dump_c, 6);
    hscope_diff_t *d = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    char got[128];
    assert_int_equal(hscope_diff_compute(&d, a, b, c, NULL, &err), HSCOPE_OK);
    leaked_of(d, got, sizeof(got));
    assert_string_equal(got, "a00");
    /* C's X and Z were matched to B by their ids, both at new addresses */
    assert_int_equal(hscope_diff_object_id_matches(d), 2);
    assert_int_equal(hscope_diff_moved_objects(d), 2);
    assert_non_null(strstr(hscope_diff_note_text(d), "identity by object_id"));
    assert_int_equal(hscope_diff_warnings(d), 0);
    hscope_diff_free(d);
    /* address only: V passes for W, Z and X look new (X moved away from A) */
    hscope_diff_options o = HSCOPE_DIFF_OPTIONS_INIT;
    o.flags = HSCOPE_DIFF_ADDRESS_ONLY;
    assert_int_equal(hscope_diff_compute(&d, a, b, c, &o, &err), HSCOPE_OK);
    leaked_of(d, got, sizeof(got));
    assert_string_equal(got, "800");
    assert_int_equal(hscope_diff_object_id_matches(d), 0);
    assert_non_null(strstr(hscope_diff_note_text(d), "not used"));
    hscope_diff_free(d);
    /* two dumps: B against A; X matched by its id at the same address */
    assert_int_equal(hscope_diff_compute(&d, a, b, NULL, NULL, &err), HSCOPE_OK);
    leaked_of(d, got, sizeof(got));
    assert_string_equal(got, "700,800");
    assert_int_equal(hscope_diff_object_id_matches(d), 1);
    assert_int_equal(hscope_diff_moved_objects(d), 0);
    hscope_diff_free(d);
    /* without ids nothing changes: the old dumps' diff */
    assert_int_equal(hscope_diff_object_id_matches(NULL), 0);
    assert_string_equal(hscope_diff_note_text(NULL), "");
    hscope_heap_free(a);
    hscope_heap_free(b);
    hscope_heap_free(c);
}

static void
write_file(char *path, const char *const *lines, size_t n)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len;
    char *text = dump(lines, n, &len);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    free(text);
}

/* The streamed bases (one thread, and the parallel parser's hand-over to
 * the sink) carry the object ids too. */
static void
test_diff_object_id_files(void **state)
{
    (void)state;
    char pa[] = "/tmp/hscope_r40a_XXXXXX", pb[] = "/tmp/hscope_r40b_XXXXXX", pc[] = "/tmp/hscope_r40c_XXXXXX";
    write_file(pa, dump_a, 4);
    write_file(pb, dump_b, 6);
    write_file(pc, dump_c, 6);
    for (uint32_t threads = 1; threads <= 4; threads += 3) {
        hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
        lo.threads = threads;
        hscope_diff_t *d = NULL;
        hscope_error err = HSCOPE_ERROR_INIT;
        assert_int_equal(hscope_diff_files(&d, pa, pb, pc, &lo, NULL, &err), HSCOPE_OK);
        char got[128];
        leaked_of(d, got, sizeof(got));
        assert_string_equal(got, "a00");
        assert_int_equal(hscope_diff_object_id_matches(d), 2);
        assert_int_equal(hscope_diff_moved_objects(d), 2);
        hscope_diff_free(d);
    }
    unlink(pa);
    unlink(pb);
    unlink(pc);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags_and_object_id),
        cmocka_unit_test(test_fields_owner),
        cmocka_unit_test(test_conservative_roots),
        cmocka_unit_test(test_unknown_fields_and_saved_index),
        cmocka_unit_test(test_diff_object_id),
        cmocka_unit_test(test_diff_object_id_files),
    };
    return cmocka_run_group_tests_name("ruby40", tests, NULL, NULL);
}
