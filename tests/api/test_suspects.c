/*
 * test_suspects.c - what the suspects say of each holder, through the
 * public header only: the allocation sites of the leaked objects it holds
 * (the line that put them in it first), the class it hangs from, and the
 * Ruby VM's own tables ranked after every application holder, labelled.
 *
 *   api_suspects                      hand-built dumps; every expected
 *                                     number is computed in the comments
 *   api_suspects A B C HOLDER=SITES...  our leak workload against its
 *                                     truth (tests/api/suspects_truth.py
 *                                     passes each planted holder's address
 *                                     and its planted file:line:class
 *                                     sites, comma-separated): the holder
 *                                     is a suspect, an application one,
 *                                     and one of its first 5 sites is a
 *                                     planted one, with objects put in it
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

#include "api_sink.h"

static hscope_heap_t *
load_text(const char *text)
{
    hscope_heap_t *h = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    int st = hscope_heap_open_memory(&h, text, strlen(text), NULL, &err);
    if (st != HSCOPE_OK)
        fprintf(stderr, "load: %s\n", err.message);
    assert_int_equal(st, HSCOPE_OK);
    return h;
}

#define assert_has(s, needle)                                                      \
    do {                                                                           \
        if (!strstr((s)->p ? (s)->p : "", (needle)))                               \
            fail_msg("missing:\n%s\n--- in:\n%s", (needle), (s)->p ? (s)->p : ""); \
    } while (0)

/*
 * A Rails-like leak on Ruby 4.0.  PostsController (0x1000, from root vm)
 * keeps a Hash (0x3000).  Between A and B, a request subscribed two
 * Listeners (0x5000, 0x5100: posts_controller.rb:12, method subscribe, 40
 * B each) into the Hash, each keeping a String payload (0x5800, 0x5900:
 * event.rb:4, method payload, 200 B each).  Meanwhile Ruby replaced its
 * frozen-string table (VM/concurrent_set, root vm: 0x9000 in A, 0x9800 of
 * 262,144 B in B) and its symbol table (the concurrent_set that root
 * global_symbols marks: 0x9100 in A, 0x9900 of 100,000 B in B), and the
 * object-id table (0x9200, in A already) took a String (0xa000, 5,000 B).
 *
 * Holders by leaked memory: root vm 262,144 (the new fstring table),
 * root global_symbols 100,000 (the new symbol table), 0x9200 5,000 (the
 * object-id table), 0x3000 480 (2 x 40 + 2 x 200).  The suspects put the
 * application's Hash first, then the three VM tables in that order.
 */
#define CLASSES                                                                              \
    "{\"address\":\"0x2000\",\"type\":\"CLASS\",\"name\":\"Class\",\"memsize\":100}\n"      \
    "{\"address\":\"0x1000\",\"type\":\"CLASS\",\"class\":\"0x2000\","                      \
    "\"name\":\"PostsController\",\"references\":[\"0x3000\"],\"memsize\":500}\n"           \
    "{\"address\":\"0x4000\",\"type\":\"CLASS\",\"name\":\"Hash\",\"memsize\":100}\n"       \
    "{\"address\":\"0x6000\",\"type\":\"CLASS\",\"name\":\"String\",\"memsize\":100}\n"     \
    "{\"address\":\"0x7000\",\"type\":\"CLASS\",\"name\":\"Listener\",\"memsize\":100}\n"
#define LISTENERS                                                                            \
    "{\"address\":\"0x5000\",\"type\":\"OBJECT\",\"class\":\"0x7000\",\"references\":"      \
    "[\"0x5800\"],\"file\":\"app/controllers/posts_controller.rb\",\"line\":12,"            \
    "\"method\":\"subscribe\",\"generation\":5,\"memsize\":40}\n"                           \
    "{\"address\":\"0x5100\",\"type\":\"OBJECT\",\"class\":\"0x7000\",\"references\":"      \
    "[\"0x5900\"],\"file\":\"app/controllers/posts_controller.rb\",\"line\":12,"            \
    "\"method\":\"subscribe\",\"generation\":5,\"memsize\":40}\n"                           \
    "{\"address\":\"0x5800\",\"type\":\"STRING\",\"class\":\"0x6000\",\"file\":"            \
    "\"app/models/event.rb\",\"line\":4,\"method\":\"payload\",\"generation\":5,"           \
    "\"memsize\":200}\n"                                                                     \
    "{\"address\":\"0x5900\",\"type\":\"STRING\",\"class\":\"0x6000\",\"file\":"            \
    "\"app/models/event.rb\",\"line\":4,\"method\":\"payload\",\"generation\":5,"           \
    "\"memsize\":200}\n"
#define VM_TABLES_B                                                                          \
    "{\"address\":\"0x9800\",\"type\":\"DATA\",\"struct\":\"VM/concurrent_set\","           \
    "\"memsize\":262144}\n"                                                                  \
    "{\"address\":\"0x9900\",\"type\":\"DATA\",\"struct\":\"VM/concurrent_set\","           \
    "\"memsize\":100000}\n"                                                                  \
    "{\"address\":\"0x9200\",\"type\":\"DATA\",\"struct\":\"VM/_id2ref_table\","            \
    "\"references\":[\"0xa000\"],\"memsize\":64}\n"                                          \
    "{\"address\":\"0xa000\",\"type\":\"STRING\",\"class\":\"0x6000\",\"file\":\"lib/x.rb\"," \
    "\"line\":1,\"generation\":5,\"memsize\":5000}\n"

static const char dump_a[] =
    "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x1000\",\"0x9000\",\"0x9200\"]}\n"
    "{\"type\":\"ROOT\",\"root\":\"global_symbols\",\"references\":[\"0x9100\"]}\n" CLASSES
    "{\"address\":\"0x3000\",\"type\":\"HASH\",\"class\":\"0x4000\",\"memsize\":160}\n"
    "{\"address\":\"0x9000\",\"type\":\"DATA\",\"struct\":\"VM/concurrent_set\",\"memsize\":1000}\n"
    "{\"address\":\"0x9100\",\"type\":\"DATA\",\"struct\":\"VM/concurrent_set\",\"memsize\":500}\n"
    "{\"address\":\"0x9200\",\"type\":\"DATA\",\"struct\":\"VM/_id2ref_table\",\"memsize\":64}\n";
static const char dump_b[] =
    "{\"type\":\"ROOT\",\"root\":\"vm\",\"references\":[\"0x1000\",\"0x9800\",\"0x9200\"]}\n"
    "{\"type\":\"ROOT\",\"root\":\"global_symbols\",\"references\":[\"0x9900\"]}\n" CLASSES
    "{\"address\":\"0x3000\",\"type\":\"HASH\",\"class\":\"0x4000\",\"references\":"
    "[\"0x5000\",\"0x5100\"],\"memsize\":160}\n" LISTENERS VM_TABLES_B;

static hscope_suspects_t *
suspects_of(const char *a, const char *b, const char *c)
{
    hscope_heap_t *ha = load_text(a), *hb = load_text(b), *hc = c ? load_text(c) : NULL;
    hscope_diff_t *d = NULL;
    assert_int_equal(hscope_diff_compute(&d, ha, hb, hc, NULL, NULL), HSCOPE_OK);
    hscope_suspects_t *s = NULL;
    assert_int_equal(hscope_suspects_compute(&s, d, NULL, NULL), HSCOPE_OK);
    hscope_diff_free(d);
    hscope_heap_free(ha);
    hscope_heap_free(hb);
    hscope_heap_free(hc);
    return s;
}

static uint64_t
addr(const hscope_suspects_t *s, hscope_id id)
{
    return hscope_heap_object_address(hscope_diff_heap(hscope_suspects_diff(s)), id);
}

/* The application's Hash first, its sites and its class; the VM tables
 * after it, each labelled. */
static void
test_sites_owner_vm_tables(void **state)
{
    (void)state;
    hscope_suspects_t *s = suspects_of(dump_a, dump_b, NULL);
    assert_int_equal(hscope_holders_count(hscope_suspects_holders(s)), 4);
    hscope_suspect x = { .size = sizeof(x) };

    /* 1: the Hash, held by PostsController one step up, from root vm */
    assert_int_equal(hscope_suspects_get(s, 0, &x), HSCOPE_OK);
    assert_int_equal(addr(s, x.holder), 0x3000);
    assert_int_equal(x.count, 4);
    assert_int_equal(x.memsize, 480);
    assert_int_equal(x.entries, 2); /* the two Listeners */
    assert_int_equal(x.vm_table, HSCOPE_VM_TABLE_NONE);
    assert_null(x.vm_table_name);
    assert_int_equal(addr(s, x.owner), 0x1000);
    assert_string_equal(x.owner_name, "PostsController");
    assert_int_equal(x.owner_steps, 1);
    assert_string_equal(hscope_heap_root_category_name(hscope_diff_heap(hscope_suspects_diff(s)),
                                                       (uint32_t)x.root_category),
                        "vm");
    assert_int_equal(x.site_count, 2);
    /* the line that subscribed them first (it keeps 4 objects, 480 B),
     * although the payloads' own memsize (400 B) is larger */
    hscope_suspect_site t = { .size = sizeof(t) };
    assert_int_equal(hscope_suspects_site_get(s, 0, 0, &t), HSCOPE_OK);
    assert_string_equal(t.file, "app/controllers/posts_controller.rb");
    assert_int_equal(t.line, 12);
    assert_string_equal(t.class_label, "Listener");
    assert_string_equal(t.method, "subscribe");
    assert_int_equal(t.count, 2);
    assert_int_equal(t.memsize, 80);
    assert_int_equal(t.entries, 2);
    assert_int_equal(t.kept_count, 4);
    assert_int_equal(t.kept_memsize, 480);
    assert_int_equal(hscope_suspects_site_get(s, 0, 1, &t), HSCOPE_OK);
    assert_string_equal(t.file, "app/models/event.rb");
    assert_int_equal(t.line, 4);
    assert_string_equal(t.class_label, "String");
    assert_string_equal(t.method, "payload");
    assert_int_equal(t.count, 2);
    assert_int_equal(t.memsize, 400);
    assert_int_equal(t.entries, 0);
    assert_int_equal(t.kept_count, 0);
    assert_int_equal(hscope_suspects_site_get(s, 0, 2, &t), HSCOPE_ERR_NOT_FOUND);

    /* 2: root vm holds the new frozen-string table itself */
    assert_int_equal(hscope_suspects_get(s, 1, &x), HSCOPE_OK);
    assert_int_equal(x.holder, HSCOPE_ID_NONE);
    assert_int_equal(x.memsize, 262144);
    assert_int_equal(x.vm_table, HSCOPE_VM_TABLE_FSTRING);
    assert_int_equal(x.vm_table_leaked, 1);
    assert_int_equal(addr(s, x.vm_table_object), 0x9800);
    assert_string_equal(x.vm_table_name, "frozen-string table");
    assert_non_null(strstr(x.vm_table_reason, "interned string"));
    /* 3: the symbol table, the one root global_symbols marks */
    assert_int_equal(hscope_suspects_get(s, 2, &x), HSCOPE_OK);
    assert_int_equal(x.memsize, 100000);
    assert_int_equal(x.vm_table, HSCOPE_VM_TABLE_SYMBOL);
    assert_int_equal(addr(s, x.vm_table_object), 0x9900);
    /* 4: the object-id table holds a leaked String: the holder is it */
    assert_int_equal(hscope_suspects_get(s, 3, &x), HSCOPE_OK);
    assert_int_equal(addr(s, x.holder), 0x9200);
    assert_int_equal(x.memsize, 5000);
    assert_int_equal(x.vm_table, HSCOPE_VM_TABLE_OBJECT_ID);
    assert_int_equal(x.vm_table_leaked, 0);
    assert_int_equal(hscope_suspects_get(s, 4, &x), HSCOPE_ERR_NOT_FOUND);
    /* the holders handle and the paths are in the same order */
    hscope_id id;
    uint64_t mem = 0;
    assert_int_equal(hscope_holders_get(hscope_suspects_holders(s), 3, &id, NULL, NULL, &mem),
                     HSCOPE_OK);
    assert_int_equal(addr(s, id), 0x9200);
    hscope_id path[4];
    assert_int_equal(hscope_suspects_path(s, 0, path, 4, NULL), 2);
    assert_int_equal(addr(s, path[0]), 0x1000);
    assert_int_equal(addr(s, path[1]), 0x3000);

    /* a size too small for anything is refused; a short one is honoured */
    hscope_suspect_site small = { .size = 4 };
    assert_int_equal(hscope_suspects_site_get(s, 0, 0, &small), HSCOPE_ERR_INVALID_ARG);
    struct {
        uint32_t size, line;
        const char *file;
    } head = { sizeof(head), 0, NULL };
    assert_int_equal(hscope_suspects_site_get(s, 0, 0, (hscope_suspect_site *)(void *)&head),
                     HSCOPE_OK);
    assert_int_equal(head.size, sizeof(head));
    assert_int_equal(head.line, 12);
    hscope_suspects_free(s);
}

/* The same in text and JSON: the application's holder first, with its
 * site and class, the VM tables after it, labelled. */
static void
test_written(void **state)
{
    (void)state;
    hscope_suspects_t *s = suspects_of(dump_a, dump_b, NULL);
    sink w = { 0 };
    hscope_report_options o = HSCOPE_REPORT_OPTIONS_INIT;
    o.format = HSCOPE_FORMAT_TEXT;
    assert_int_equal(hscope_suspects_write(s, &o, collect, &w, NULL), HSCOPE_OK);
    assert_has(&w, "what holds them, most leaked memory first (the Ruby VM's own tables last):\n\n"
                   "1. 0x3000 HASH Hash holds 4 leaked objects (480 B)\n"
                   "   held by: PostsController (CLASS) -> Hash, from root vm\n"
                   "   leaked objects allocated at (what put them in it first):\n"
                   "     app/controllers/posts_controller.rb:12:Listener (method subscribe): "
                   "2 objects, 80 B; 2 put in it, keeping 4 objects (480 B)\n"
                   "     app/models/event.rb:4:String (method payload): 2 objects, 400 B\n"
                   "   path from root vm: 0x1000 CLASS PostsController -> 0x3000 HASH Hash\n\n"
                   "2. root vm directly holds 1 leaked object (256.0 KB)\n"
                   "   Ruby VM table: frozen-string table (0x9800 DATA VM/concurrent_set, itself "
                   "among the leaked objects), not the application's: Ruby keeps one copy");
    assert_has(&w, "\n3. root global_symbols directly holds 1 leaked object (97.7 KB)\n"
                   "   Ruby VM table: symbol table (0x9900 DATA VM/concurrent_set, itself among "
                   "the leaked objects)");
    assert_has(&w, "\n4. 0x9200 DATA <hidden> holds 1 leaked object (4.9 KB)\n"
                   "   Ruby VM table: object-id table (0x9200 DATA VM/_id2ref_table), not the "
                   "application's");
    free(w.p);
    memset(&w, 0, sizeof(w));
    o.format = HSCOPE_FORMAT_JSON;
    assert_int_equal(hscope_suspects_write(s, &o, collect, &w, NULL), HSCOPE_OK);
    assert_has(&w, "\"held_by\":{\"owner\":{\"address\":\"0x1000\",\"type\":\"CLASS\","
                   "\"class\":\"Class\",\"label\":\"PostsController\"},\"steps\":1},"
                   "\"vm_table\":null,\"entries\":2,\"site_count\":2,\"sites\":[{\"file\":"
                   "\"app/controllers/posts_controller.rb\",\"line\":12,\"class\":\"Listener\","
                   "\"method\":\"subscribe\",\"count\":2,\"memsize\":80,\"entries\":2,"
                   "\"kept\":{\"count\":4,\"memsize\":480}},{\"file\":\"app/models/event.rb\","
                   "\"line\":4,\"class\":\"String\",\"method\":\"payload\",\"count\":2,"
                   "\"memsize\":400,\"entries\":0,\"kept\":{\"count\":0,\"memsize\":0}}]}");
    assert_has(&w, "\"vm_table\":{\"kind\":\"frozen-string table\",\"address\":\"0x9800\","
                   "\"type\":\"DATA\",\"detail\":\"VM/concurrent_set\",\"leaked\":true,"
                   "\"reason\":\"Ruby keeps one copy");
    /* rank 1 is the Hash */
    assert_has(&w, "\"suspects\":[{\"rank\":1,\"address\":\"0x3000\",");
    free(w.p);
    hscope_suspects_free(s);
}

/* NULL and out-of-range arguments. */
static void
test_bad_args(void **state)
{
    (void)state;
    hscope_suspect x = { .size = sizeof(x) };
    hscope_suspect_site t = { .size = sizeof(t) };
    assert_int_equal(hscope_suspects_get(NULL, 0, &x), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_suspects_site_get(NULL, 0, 0, &t), HSCOPE_ERR_INVALID_ARG);
    hscope_suspects_t *s = suspects_of(dump_a, dump_b, NULL);
    assert_int_equal(hscope_suspects_get(s, 0, NULL), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_suspects_get(s, 99, &x), HSCOPE_ERR_NOT_FOUND);
    assert_int_equal(hscope_suspects_site_get(s, 99, 0, &t), HSCOPE_ERR_NOT_FOUND);
    hscope_suspects_free(s);
}

/* ------------------------------------------------------------------ */
/* our leak workload against its truth                                */
/* ------------------------------------------------------------------ */

static int
truth_main(int argc, char **argv)
{
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_heap_t *h[3] = { 0 };
    for (int k = 0; k < 3; k++)
        if (hscope_heap_open_file(&h[k], argv[1 + k], NULL, &err) != HSCOPE_OK) {
            fprintf(stderr, "%s: %s\n", argv[1 + k], err.message);
            return 1;
        }
    hscope_diff_t *d = NULL;
    hscope_suspects_t *s = NULL;
    if (hscope_diff_compute(&d, h[0], h[1], h[2], NULL, &err) != HSCOPE_OK ||
        hscope_suspects_compute(&s, d, NULL, &err) != HSCOPE_OK) {
        fprintf(stderr, "suspects: %s\n", err.message);
        return 1;
    }
    const hscope_heap_t *heap = hscope_diff_heap(d);
    uint64_t nh = hscope_holders_count(hscope_suspects_holders(s));
    int bad = 0;
    for (int a = 4; a < argc; a++) {
        char *eq = strchr(argv[a], '=');
        if (!eq)
            return 2;
        *eq = 0;
        uint64_t want = strtoull(argv[a], NULL, 16);
        const char *sites = eq + 1;
        uint64_t i;
        hscope_suspect x = { .size = sizeof(x) };
        for (i = 0; i < nh; i++)
            if (hscope_suspects_get(s, i, &x) == HSCOPE_OK && x.holder != HSCOPE_ID_NONE &&
                hscope_heap_object_address(heap, x.holder) == want)
                break;
        if (i == nh) {
            printf("not ok: holder 0x%llx is no suspect\n", (unsigned long long)want);
            bad++;
            continue;
        }
        int found = 0;
        char key[4096];
        for (uint64_t j = 0; j < x.site_count && j < 5 && !found; j++) {
            hscope_suspect_site t = { .size = sizeof(t) };
            if (hscope_suspects_site_get(s, i, j, &t) != HSCOPE_OK || !t.file || !t.entries)
                continue;
            snprintf(key, sizeof(key), "%s:%u:%s", t.file, t.line, t.class_label);
            for (const char *p = sites; *p;) {
                const char *c = strchr(p, ',');
                size_t n = c ? (size_t)(c - p) : strlen(p);
                if (n == strlen(key) && !memcmp(p, key, n))
                    found = 1;
                p += n + (c != NULL);
            }
        }
        int app = x.vm_table == HSCOPE_VM_TABLE_NONE;
        printf("%s: holder 0x%llx (rank %llu, %s): %s among its first sites that put objects "
               "in it\n", found && app ? "ok" : "not ok", (unsigned long long)want,
               (unsigned long long)i + 1, app ? "application" : "VM table",
               found ? "a planted site" : "no planted site");
        bad += !(found && app);
    }
    hscope_suspects_free(s);
    hscope_diff_free(d);
    for (int k = 0; k < 3; k++)
        hscope_heap_free(h[k]);
    return bad ? 1 : 0;
}

int
main(int argc, char **argv)
{
    if (argc > 4)
        return truth_main(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sites_owner_vm_tables),
        cmocka_unit_test(test_written),
        cmocka_unit_test(test_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
