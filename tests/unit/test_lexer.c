/*
 * test_lexer.c - white-box tests of the record decoder (src/parse/parse.c).
 *
 * Every case feeds one line to hscope__lp_line() with a fresh builder and
 * checks what landed in the builder's columns, or why the line was
 * skipped.  The expected values are worked out by hand from the input
 * line and FORMAT-NOTES.md (sections 1, 2, 5, 8, 12).
 *
 * The decoder needs the line to end at '\n' with 16 readable bytes after
 * it; feed() copies the text into a buffer with '\n' and 64 zero bytes of
 * padding.  To keep the JSON readable in C source, feed() turns every
 * single quote into a double quote; feed_raw() takes the bytes as they
 * are (for raw quotes, NUL bytes and other binary input).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/parse/parse.h"

#define PAD 64

typedef struct fx {
    hscope__mem mem;
    hscope__builder b;
    hscope__parse_opts o;
    hscope__lp lp;
    hscope_error err;
    uint8_t *buf;
} fx;

/* The class address the builder keeps for object i (its columns hold an
 * index into the distinct addresses; 0: none). */
static uint64_t
class_addr_of(const hscope__builder *b, size_t i)
{
    return b->cls_addr ? b->cls_addr[b->class_ix[i]] : 0;
}

static int
setup_common(void **state, int keep_values)
{
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    hscope__mem_init(&f->mem, NULL, 0);
    hscope_error_init(&f->err);
    if (hscope__builder_init(&f->b, &f->mem, keep_values, 0, &f->err) != HSCOPE_OK)
        return -1;
    hscope__lp_init(&f->lp, &f->b, &f->o, &f->err);
    *state = f;
    return 0;
}

static int
setup(void **state)
{
    return setup_common(state, 0);
}

static int
setup_values(void **state)
{
    return setup_common(state, 1);
}

static int
teardown(void **state)
{
    fx *f = *state;
    hscope__lp_free(&f->lp);
    hscope__builder_free(&f->b);
    free(f->buf);
    /* Everything the decoder allocated went through the accounted
     * allocator, so after freeing the builder nothing may remain. */
    assert_int_equal(atomic_load(&f->mem.used), 0);
    free(f);
    return 0;
}

/* Copy n bytes into a padded buffer ending in '\n' and parse them. */
static int
feed_raw(fx *f, const char *text, size_t n)
{
    free(f->buf);
    f->buf = malloc(n + 1 + PAD);
    assert_non_null(f->buf);
    memcpy(f->buf, text, n);
    f->buf[n] = '\n';
    memset(f->buf + n + 1, 0, PAD);
    return hscope__lp_line(&f->lp, f->buf, f->buf + n);
}

/* Parse a line written with ' for " (see the file comment). */
static int
feed(fx *f, const char *text)
{
    size_t n = strlen(text);
    char *t = malloc(n + 1);
    assert_non_null(t);
    for (size_t i = 0; i <= n; i++)
        t[i] = text[i] == '\'' ? '"' : text[i];
    int rc = feed_raw(f, t, n);
    free(t);
    return rc;
}

/* The line must be skipped for `reason` and leave the builder unchanged. */
static void
expect_skip(fx *f, const char *text, int reason)
{
    size_t n0 = f->b.n, e0 = f->b.nedges, r0 = f->b.nroot;
    uint64_t s0 = f->b.shapes, fs0 = f->b.free_slots, uk0 = f->b.unknown_keys;
    int rc = feed(f, text);
    if (rc != 0 || f->lp.reason != reason)
        fail_msg("line %s: rc %d reason %d (%s), expected skip reason %d", text,
                 rc, f->lp.reason, f->lp.why ? f->lp.why : "-", reason);
    assert_non_null(f->lp.why);
    assert_int_equal(f->lp.fatal, HSCOPE_OK);
    assert_int_equal(f->b.n, n0);
    assert_int_equal(f->b.nedges, e0);
    assert_int_equal(f->b.nroot, r0);
    assert_int_equal(f->b.shapes, s0);
    assert_int_equal(f->b.free_slots, fs0);
    assert_int_equal(f->b.unknown_keys, uk0);
}

static void
expect_skip_raw(fx *f, const char *text, size_t n, int reason)
{
    size_t n0 = f->b.n;
    int rc = feed_raw(f, text, n);
    if (rc != 0 || f->lp.reason != reason)
        fail_msg("raw line of %zu bytes: rc %d reason %d (%s), expected %d", n,
                 rc, f->lp.reason, f->lp.why ? f->lp.why : "-", reason);
    assert_int_equal(f->lp.fatal, HSCOPE_OK);
    assert_int_equal(f->b.n, n0);
}

static void
expect_ok(fx *f, const char *text)
{
    int rc = feed(f, text);
    if (rc != 1)
        fail_msg("line %s: rc %d reason %d (%s), expected it stored", text, rc,
                 f->lp.reason, f->lp.why ? f->lp.why : "-");
}

/* Interned string of the builder, checked for exact bytes. */
static void
assert_istr(const fx *f, uint32_t id, const char *want, size_t n)
{
    assert_true(id != 0);
    assert_int_equal(hscope__intern_len(&f->b.strings, id), n);
    assert_memory_equal(hscope__intern_str(&f->b.strings, id), want, n);
}
#define ASSERT_ISTR(f, id, lit) assert_istr((f), (id), (lit), sizeof(lit) - 1)

static uint32_t
site_file(const fx *f, size_t i)
{
    return f->b.site_file[f->b.site[i]];
}

static uint32_t
site_line(const fx *f, size_t i)
{
    return f->b.site_line[f->b.site[i]];
}

static uint32_t
site_method(const fx *f, size_t i)
{
    return f->b.site_method[f->b.site[i]];
}

/* ------------------------------------------------------------------ */
/* Records that are stored                                              */
/* ------------------------------------------------------------------ */

/* A STRING record exactly as Ruby 3.1 writes it (FORMAT-NOTES 10.5). */
static void
test_string_31(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x7fbc9afdeb08', 'type':'STRING', "
                 "'class':'0x7fbc9e4ba458', 'frozen':true, 'embedded':true, "
                 "'bytesize':16, 'value':'ctrl:\\u0001\\u001b\\u007f\\t\\n\\'\\\\ end', "
                 "'encoding':'UTF-8', 'file':'gen.rb', 'line':7, 'method':'dup', "
                 "'generation':9, 'memsize':40, 'flags':{'wb_protected':true, "
                 "'old':true, 'uncollectible':true, 'marked':true}}");
    hscope__builder *b = &f->b;
    assert_int_equal(b->n, 1);
    assert_int_equal(b->addr[0], 0x7fbc9afdeb08ull);
    assert_int_equal(b->type[0], HSCOPE_TYPE_STRING);
    assert_int_equal(class_addr_of(b, 0), 0x7fbc9e4ba458ull);
    assert_int_equal(b->flags[0],
                     HSCOPE_FLAG_FROZEN | HSCOPE_FLAG_EMBEDDED |
                         HSCOPE_FLAG_WB_PROTECTED | HSCOPE_FLAG_OLD |
                         HSCOPE_FLAG_UNCOLLECTIBLE | HSCOPE_FLAG_MARKED);
    assert_int_equal(b->memsize[0], 40);
    assert_int_equal(b->size[0], 16);
    assert_int_equal(b->gen[0], 9);
    assert_int_equal(b->detail[0], 0);
    assert_int_equal(b->edge_start[0], 0);
    assert_int_equal(b->nedges, 0);
    assert_true(b->site[0] != 0);
    ASSERT_ISTR(f, site_file(f, 0), "gen.rb");
    assert_int_equal(site_line(f, 0), 7);
    ASSERT_ISTR(f, site_method(f, 0), "dup");
    /* encoding is a documented key we do not store: not unknown */
    assert_int_equal(b->unknown_keys, 0);
    assert_int_equal(b->unknown_types, 0);
    /* values are off by default */
    assert_int_equal(b->nval, 0);
    /* the same site again is interned once */
    expect_ok(f, "{'address':'0x10', 'type':'STRING', 'file':'gen.rb', "
                 "'line':7, 'method':'dup', 'generation':9}");
    assert_int_equal(b->site[1], b->site[0]);
    expect_ok(f, "{'address':'0x18', 'type':'STRING', 'file':'gen.rb', "
                 "'line':8, 'method':'dup'}");
    assert_true(b->site[2] != b->site[0]);
    assert_int_equal(b->site_file[b->site[2]], site_file(f, 0));
}

/* With keep_values the decoded value is kept: 16 bytes, = bytesize. */
static void
test_string_value_kept(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x1', 'type':'STRING', 'bytesize':5, 'value':'plain'}");
    expect_ok(f, "{'address':'0x2', 'type':'STRING', 'bytesize':0}");
    expect_ok(f, "{'address':'0x3', 'type':'STRING', 'bytesize':16, "
                 "'value':'ctrl:\\u0001\\u001b\\u007f\\t\\n\\'\\\\ end'}");
    static const char want[] = "ctrl:\x01\x1b\x7f\t\n\"\\ end";
    hscope__builder *b = &f->b;
    assert_int_equal(b->nval, 2);
    assert_int_equal(b->val_id[0], 0);
    assert_int_equal(b->val_len[0], 5);
    assert_memory_equal(b->val_arena + b->val_off[0], "plain", 5);
    assert_int_equal(b->val_id[1], 2);
    assert_int_equal(b->val_len[1], sizeof(want) - 1);
    assert_int_equal(b->val_len[1], 16);
    assert_memory_equal(b->val_arena + b->val_off[1], want, 16);
}

static void
test_root(void **state)
{
    fx *f = *state;
    hscope__builder *b = &f->b;
    expect_ok(f, "{'type':'ROOT', 'root':'vm', 'references':['0x7fbc9e4e3ce0', "
                 "'0x7fbc9e4b7fc8', '0x7fbc9e4b7fc8']}");
    expect_ok(f, "{'type':'ROOT', 'root':'machine_context', 'references':['0x10']}");
    /* a category seen again (escaped here) is the same category */
    expect_ok(f, "{'type':'ROOT', 'root':'v\\u006d', 'references':['0x20']}");
    assert_int_equal(b->n, 0);
    assert_int_equal(b->root_records, 3);
    assert_int_equal(b->ncat, 2);
    ASSERT_ISTR(f, b->cat_name[0], "vm");
    ASSERT_ISTR(f, b->cat_name[1], "machine_context");
    assert_int_equal(b->cat_records[0], 2);
    assert_int_equal(b->cat_records[1], 1);
    assert_int_equal(b->nroot, 5);
    static const uint64_t addr[] = { 0x7fbc9e4e3ce0ull, 0x7fbc9e4b7fc8ull,
                                     0x7fbc9e4b7fc8ull, 0x10, 0x20 };
    static const uint32_t cat[] = { 0, 0, 0, 1, 0 };
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(b->root_addr[i], addr[i]);
        assert_int_equal(b->root_cat[i], cat[i]);
    }
    /* ROOT records are not objects: no edges were added */
    assert_int_equal(b->nedges, 0);
}

static void
test_shape(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x104dd0000', 'type':'SHAPE', 'id':0, 'depth':1, "
                 "'shape_type':'ROOT', 'edges':6, 'memsize':184}");
    expect_ok(f, "{'address':'0x104dd0020', 'type':'SHAPE', 'id':1, 'parent_id':0, "
                 "'depth':2, 'shape_type':'INITIAL_CAPACITY', 'capacity':8, "
                 "'edges':3, 'memsize':120}");
    /* 3.2+ IVAR shapes write ,"edge_name": without a space */
    expect_ok(f, "{'address':'0x104fe1a00', 'type':'SHAPE', 'id':208, "
                 "'parent_id':207, 'depth':3, 'shape_type':'IVAR','edge_name':'@foo', "
                 "'edges':1, 'memsize':120}");
    assert_int_equal(f->b.shapes, 3);
    assert_int_equal(f->b.shape_memsize, 184 + 120 + 120);
    assert_int_equal(f->b.n, 0);
    assert_int_equal(f->b.unknown_keys, 0);
}

static void
test_none(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x7fbc9e506600', 'type':'NONE', 'class':'0x7fbc9e506538'}");
    expect_ok(f, "{'address':'0x7fbc9e506628', 'type':'NONE', 'shape_id':0, 'slot_size':40}");
    assert_int_equal(f->b.free_slots, 2);
    assert_int_equal(f->b.n, 0);
    assert_int_equal(f->b.nedges, 0);
}

/* Keys in any order, whitespace anywhere JSON allows it. */
static void
test_key_order_whitespace(void **state)
{
    fx *f = *state;
    expect_ok(f, "  {  'memsize' : 80 ,'type':'ARRAY'\t,  'length':3,"
                 "'references' : [ '0x30' ,'0x40'\t] , 'address' : '0x10'  }  \t");
    hscope__builder *b = &f->b;
    assert_int_equal(b->n, 1);
    assert_int_equal(b->addr[0], 0x10);
    assert_int_equal(b->type[0], HSCOPE_TYPE_ARRAY);
    assert_int_equal(b->memsize[0], 80);
    assert_int_equal(b->size[0], 3);
    assert_int_equal(b->nedges, 2);
    assert_int_equal(b->edges[0], 0x30);
    assert_int_equal(b->edges[1], 0x40);
    assert_int_equal(b->gen[0], HSCOPE__GEN_NONE);
    assert_int_equal(b->site[0], 0);
    /* flags nested object with spaces, and the empty object */
    expect_ok(f, "{ 'address':'0x20','type':'HASH','size':0,'flags': { 'old' : true } }");
    assert_int_equal(b->flags[1], HSCOPE_FLAG_OLD);
    expect_ok(f, "{'address':'0x28', 'type':'HASH', 'flags':{}}");
    assert_int_equal(b->flags[2], 0);
    /* escaped key names mean the same key */
    expect_ok(f, "{'addr\\u0065ss':'0x38', 't\\u0079pe':'STRING'}");
    assert_int_equal(b->addr[3], 0x38);
    assert_int_equal(b->type[3], HSCOPE_TYPE_STRING);
}

/* Unknown keys (top level and inside flags) are skipped and counted. */
static void
test_unknown_keys(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x10', 'type':'OBJECT', 'zzz':1, "
                 "'flags':{'wb_protected':true, 'newflag':true}, "
                 "'yyy':[1, 2, {'a':null, 'b':[true, false]}], 'ivars':3}");
    assert_int_equal(f->b.unknown_keys, 3);
    assert_int_equal(f->b.flags[0], HSCOPE_FLAG_WB_PROTECTED);
    /* every JSON value type in an unknown key */
    expect_ok(f, "{'address':'0x18', 'type':'OBJECT', 'u1':true, 'u2':false, "
                 "'u3':null, 'u4':-1.5e-3, 'u5':{'a':[1,{'b':'c'}]}, 'u6':'s', "
                 "'u7':123456789012345678901234567890, 'u8':[], 'u9':{}}");
    assert_int_equal(f->b.unknown_keys, 3 + 9);
    /* 4.0 flags with integer values: known, no bit for age/object_id */
    expect_ok(f, "{'address':'0x20', 'type':'OBJECT', 'flags':{'wb_protected':true, "
                 "'age':3, 'old':true, 'object_id':8}}");
    assert_int_equal(f->b.flags[2], HSCOPE_FLAG_WB_PROTECTED | HSCOPE_FLAG_OLD);
    assert_int_equal(f->b.unknown_keys, 12);
    /* a skipped line does not count its unknown keys */
    expect_skip(f, "{'address':'0x28', 'type':'OBJECT', 'qqq':1, 'memsize':'x'}",
                HSCOPE_SKIP_BAD_VALUE);
    assert_int_equal(f->b.unknown_keys, 12);
}

/* Duplicate keys: the last one wins (like Python's json). */
static void
test_duplicate_keys(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x10', 'type':'STRING', 'memsize':1, 'memsize':2, "
                 "'references':['0x1', '0x2'], 'frozen':true, 'references':['0x3'], "
                 "'type':'ARRAY', 'frozen':false, 'file':'a.rb', 'file':'b.rb', "
                 "'address':'0x20'}");
    hscope__builder *b = &f->b;
    assert_int_equal(b->n, 1);
    assert_int_equal(b->addr[0], 0x20);
    assert_int_equal(b->type[0], HSCOPE_TYPE_ARRAY);
    assert_int_equal(b->memsize[0], 2);
    assert_int_equal(b->flags[0], 0);
    assert_int_equal(b->nedges, 1);
    assert_int_equal(b->edges[0], 0x3);
    ASSERT_ISTR(f, site_file(f, 0), "b.rb");
    /* a later "references" that is empty replaces the earlier list too */
    expect_ok(f, "{'address':'0x30', 'type':'ARRAY', 'references':['0x1'], "
                 "'references':[]}");
    assert_int_equal(b->nedges, 1);
    assert_int_equal(b->edge_start[1], 1);
    /* class null after a class: no class */
    expect_ok(f, "{'address':'0x40', 'type':'ARRAY', 'class':'0x99', 'class':null}");
    assert_int_equal(class_addr_of(b, 2), 0);
}

/* Every JSON escape, \u to UTF-8, surrogate pairs and lone surrogates. */
static void
test_escapes(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x10', 'type':'STRING', 'method':'"
                 "a\\'b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\\u00e9|\\ud83d\\ude00|"
                 "\\ud83d|\\ude00|\\u0000|\\u00FF|\\ud83d\\u0041'}");
    static const char want[] =
        "a\"b\\c/d\be\ff\ng\rh\ti\xc3\xa9|" /* simple escapes, U+00E9 */
        "\xf0\x9f\x98\x80|"                 /* U+1F600 from the pair */
        "\xed\xa0\xbd|"                     /* lone high surrogate */
        "\xed\xb8\x80|"                     /* lone low surrogate */
        "\0|"                               /* \u0000: a real NUL */
        "\xc3\xbf|"                         /* uppercase hex digits */
        "\xed\xa0\xbd" "A";                 /* high surrogate, then 'A' */
    ASSERT_ISTR(f, site_method(f, 0), want);
    /* bytes >= 0x80 and DEL pass raw, without UTF-8 validation */
    static const char raw[] = "{\"address\":\"0x18\", \"type\":\"STRING\", "
                              "\"file\":\"caf\xc3\xa9\xff\xfe\x7f.rb\"}";
    assert_int_equal(feed_raw(f, raw, sizeof(raw) - 1), 1);
    ASSERT_ISTR(f, site_file(f, 1), "caf\xc3\xa9\xff\xfe\x7f.rb");
}

static void
test_bad_escapes(void **state)
{
    fx *f = *state;
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'method':'a\\xb'}",
                HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'method':'a\\p'}",
                HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'method':'\\u12g4'}",
                HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'method':'\\u12'}",
                HSCOPE_SKIP_BAD_JSON);
    /* a backslash right before the line end */
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'method':'ab\\",
                HSCOPE_SKIP_BAD_JSON);
}

/* Raw control bytes (including NUL, bug B3) make the line invalid. */
static void
test_raw_control_chars(void **state)
{
    fx *f = *state;
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'method':'a\tb'}",
                HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'method':'a\x01'}",
                HSCOPE_SKIP_BAD_JSON);
    /* FORMAT-NOTES 8.1 B3: "caf\u00ff<NUL>":tru..." in a 3.1 method */
    static const char b3[] = "{\"address\":\"0x10\", \"type\":\"STRING\", "
                             "\"method\":\"caf\\u00ff\0\":tru\\u00ff\0ked\":\", "
                             "\"generation\":9}";
    expect_skip_raw(f, b3, sizeof(b3) - 1, HSCOPE_SKIP_BAD_JSON);
    /* a NUL byte outside strings is not JSON either */
    static const char nul[] = "{\"address\":\"0x10\",\0\"type\":\"STRING\"}";
    expect_skip_raw(f, nul, sizeof(nul) - 1, HSCOPE_SKIP_BAD_JSON);
    /* a NUL anywhere in a long string (past the first 16-byte block) */
    char big[300];
    int n = snprintf(big, sizeof(big), "{\"address\":\"0x10\", \"type\":\"STRING\", "
                                       "\"method\":\"%0200d\"}", 0);
    big[150] = '\0';
    expect_skip_raw(f, big, (size_t)n, HSCOPE_SKIP_BAD_JSON);
}

static void
test_unterminated_string(void **state)
{
    fx *f = *state;
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'method':'abc",
                HSCOPE_SKIP_BAD_JSON);
    assert_string_equal(f->lp.why, "unterminated string");
    expect_skip(f, "{'address':'0x10', 'type':'STR", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'addr", HSCOPE_SKIP_BAD_JSON);
}

/* Ruby writes "file" raw: a quote in the path breaks the JSON. */
static void
test_raw_quote_in_file(void **state)
{
    fx *f = *state;
    static const char line[] = "{\"address\":\"0x7f9527f6ae28\", \"type\":\"STRING\", "
                               "\"value\":\"abcdef\", \"file\":\"we\"ird.rb\", \"line\":7}";
    expect_skip_raw(f, line, sizeof(line) - 1, HSCOPE_SKIP_BAD_JSON);
    /* the error is detected at the byte after the premature closing quote */
    assert_ptr_equal(f->lp.fail_at, f->buf + (strstr(line, "ird.rb") - line));
    static const char bs[] = "{\"address\":\"0x7f9527f6ae28\", \"type\":\"STRING\", "
                             "\"file\":\"we\"ird\\path.rb\", \"line\":7}";
    expect_skip_raw(f, bs, sizeof(bs) - 1, HSCOPE_SKIP_BAD_JSON);
}

static void
test_trailing_garbage(void **state)
{
    fx *f = *state;
    expect_skip(f, "{'address':'0x10', 'type':'STRING'} x", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING'}}", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING'}{'address':'0x20', 'type':'STRING'}",
                HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING'}nil", HSCOPE_SKIP_BAD_JSON);
    /* structural errors inside the object */
    expect_skip(f, "{'address':'0x10' 'type':'STRING'}", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING',}", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING'", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address' '0x10', 'type':'STRING'}", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{address:'0x10', 'type':'STRING'}", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'x':[1, 2}",
                HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'x':{'a' 1}}",
                HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'x':{1:2}}",
                HSCOPE_SKIP_BAD_JSON);
    /* trailing whitespace is fine */
    expect_ok(f, "{'address':'0x10', 'type':'STRING'}   \t ");
    assert_int_equal(f->b.n, 1);
}

/* Bad literals and numbers in an unknown key are still invalid JSON. */
static void
test_bad_literals(void **state)
{
    fx *f = *state;
    static const char *const bad[] = { "tru", "nul", "fals", "+1", ".5", "1.",
                                       "-", "1e", "01", "infinity", "nan",
                                       "'a'b", "[1,]", "[,1]", "{'a':}" };
    char line[128];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(line, sizeof(line), "{'address':'0x10', 'type':'STRING', 'u':%s}", bad[i]);
        expect_skip(f, line, HSCOPE_SKIP_BAD_JSON);
    }
    /* a leading zero in a known key: "01" is not a JSON number */
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'memsize':01}",
                HSCOPE_SKIP_BAD_JSON);
}

/* An optional '\r' before '\n' (Windows text mode) is accepted. */
static void
test_crlf(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x10', 'type':'STRING', 'file':'a.rb'}\r");
    assert_int_equal(f->b.n, 1);
    ASSERT_ISTR(f, site_file(f, 0), "a.rb");
    expect_skip(f, "\r", HSCOPE_SKIP_EMPTY);
}

static void
test_empty_line(void **state)
{
    fx *f = *state;
    expect_skip(f, "", HSCOPE_SKIP_EMPTY);
    expect_skip(f, "   \t ", HSCOPE_SKIP_EMPTY);
}

/* Valid JSON that is not an object; and Ruby's stray "nil" output. */
static void
test_not_object(void **state)
{
    fx *f = *state;
    expect_skip(f, "[1, 2, {'a':3}]", HSCOPE_SKIP_NOT_OBJECT);
    expect_skip(f, "'a string'", HSCOPE_SKIP_NOT_OBJECT);
    expect_skip(f, "42", HSCOPE_SKIP_NOT_OBJECT);
    expect_skip(f, "null", HSCOPE_SKIP_NOT_OBJECT);
    expect_skip(f, "  true  ", HSCOPE_SKIP_NOT_OBJECT);
    expect_skip(f, "[]", HSCOPE_SKIP_NOT_OBJECT);
    expect_skip(f, "nil", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "[1, 2] x", HSCOPE_SKIP_BAD_JSON);
    expect_skip(f, "Hello from the app", HSCOPE_SKIP_BAD_JSON);
}

static void
test_missing_type_or_address(void **state)
{
    fx *f = *state;
    expect_skip(f, "{'address':'0x10', 'memsize':40}", HSCOPE_SKIP_NO_TYPE);
    expect_skip(f, "{}", HSCOPE_SKIP_NO_TYPE);
    expect_skip(f, "{ }", HSCOPE_SKIP_NO_TYPE);
    expect_skip(f, "{'address':'0x10', 'type':null}", HSCOPE_SKIP_NO_TYPE);
    expect_skip(f, "{'type':'STRING', 'memsize':40}", HSCOPE_SKIP_NO_ADDRESS);
    expect_skip(f, "{'type':'STRING', 'address':null}", HSCOPE_SKIP_NO_ADDRESS);
    /* ROOT, SHAPE and NONE records do not need an address */
    expect_ok(f, "{'type':'ROOT', 'root':'vm', 'references':['0x1']}");
    expect_ok(f, "{'type':'SHAPE', 'id':0}");
    expect_ok(f, "{'type':'NONE'}");
}

/* Known keys with values of the wrong JSON type. */
static void
test_bad_values(void **state)
{
    fx *f = *state;
    static const char *const bad[] = {
        "'memsize':'40'", "'memsize':1.5", "'memsize':-1", "'memsize':4e1",
        "'memsize':true", "'line':-1", "'generation':'9'", "'bytesize':[]",
        "'class':42", "'class':'Foo'", "'class':'0x'", "'class':''",
        "'references':'0x1'", "'references':['0x1', 2]", "'references':{}",
        "'flags':true", "'flags':[]", "'frozen':'yes'", "'frozen':1",
        "'file':7", "'method':['x']", "'name':{}", "'address':'0x1', 'address':4096",
    };
    char line[160];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(line, sizeof(line), "{'address':'0x10', 'type':'CLASS', %s}", bad[i]);
        expect_skip(f, line, HSCOPE_SKIP_BAD_VALUE);
    }
    expect_skip(f, "{'address':'zz', 'type':'STRING'}", HSCOPE_SKIP_BAD_VALUE);
    expect_skip(f, "{'address':'0x10g', 'type':'STRING'}", HSCOPE_SKIP_BAD_VALUE);
    /* 17 significant hex digits do not fit 64 bits */
    expect_skip(f, "{'address':'0x1ffffffffffffffff', 'type':'STRING'}",
                HSCOPE_SKIP_BAD_VALUE);
    /* a type that is not a string is a bad value, not a missing type */
    expect_skip(f, "{'address':'0x10', 'type':6}", HSCOPE_SKIP_BAD_VALUE);
}

static void
test_number_range(void **state)
{
    fx *f = *state;
    hscope__builder *b = &f->b;
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'memsize':18446744073709551616}",
                HSCOPE_SKIP_NUMBER_RANGE);
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'line':99999999999999999999}",
                HSCOPE_SKIP_NUMBER_RANGE);
    expect_skip(f, "{'address':'0x10', 'type':'STRING', 'bytesize':184467440737095516150}",
                HSCOPE_SKIP_NUMBER_RANGE);
    /* UINT64_MAX itself fits; beyond 32 bits goes to the side table */
    expect_ok(f, "{'address':'0x10', 'type':'STRING', 'memsize':18446744073709551615}");
    assert_int_equal(b->memsize[0], HSCOPE__U32_BIG);
    assert_int_equal(b->big_memsize.len, 1);
    assert_int_equal(b->big_memsize.id[0], 0);
    assert_int_equal(b->big_memsize.val[0], UINT64_MAX);
    /* 2^32 - 2 still fits the column; 2^32 - 1 is the marker, so it and
     * everything above go to the side table */
    expect_ok(f, "{'address':'0x18', 'type':'STRING', 'memsize':4294967294, "
                 "'bytesize':4294967295}");
    assert_int_equal(b->memsize[1], 4294967294u);
    assert_int_equal(b->size[1], HSCOPE__U32_BIG);
    assert_int_equal(b->big_size.len, 1);
    assert_int_equal(b->big_size.id[0], 1);
    assert_int_equal(b->big_size.val[0], 4294967295u);
    expect_ok(f, "{'address':'0x20', 'type':'ARRAY', 'length':4294967296, "
                 "'memsize':4294967296}");
    assert_int_equal(b->big_size.len, 2);
    assert_int_equal(b->big_size.id[1], 2);
    assert_int_equal(b->big_size.val[1], 4294967296ull);
    assert_int_equal(b->big_memsize.len, 2);
    assert_int_equal(b->big_memsize.val[1], 4294967296ull);
    /* big integers in unknown or ignored keys are fine (Python accepts) */
    expect_ok(f, "{'address':'0x28', 'type':'STRING', 'capacity':1234567890123456789012}");
    /* the decoder's short-integer path stops at 19 digits: 19 and 20
     * digit values on both sides of it, with the value worked out by hand */
    expect_ok(f, "{'address':'0x30', 'type':'STRING', 'memsize':9999999999999999999, "
                 "'bytesize':10000000000000000000}");
    assert_int_equal(b->big_memsize.len, 3);
    assert_int_equal(b->big_memsize.id[2], 4);
    assert_int_equal(b->big_memsize.val[2], 9999999999999999999ull);
    assert_int_equal(b->big_size.len, 3);
    assert_int_equal(b->big_size.val[2], 10000000000000000000ull);
    expect_ok(f, "{'address':'0x38', 'type':'STRING', 'memsize':1000000000000000000, "
                 "'line':7, 'generation':0}");
    assert_int_equal(b->big_memsize.val[3], 1000000000000000000ull);
    assert_int_equal(b->gen[5], 0);
    /* a fraction or exponent right after 19 digits is still not an integer */
    expect_skip(f, "{'address':'0x40', 'type':'STRING', 'memsize':1234567890123456789.0}",
                HSCOPE_SKIP_BAD_VALUE);
    expect_skip(f, "{'address':'0x40', 'type':'STRING', 'memsize':1234567890123456789e0}",
                HSCOPE_SKIP_BAD_VALUE);
    expect_skip(f, "{'address':'0x40', 'type':'STRING', 'memsize':12E3}",
                HSCOPE_SKIP_BAD_VALUE);
}

/* "fd":-1 (closed IO) and NaN/Infinity in unknown keys are accepted. */
static void
test_negative_and_nonfinite(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x7f9527f6a608', 'type':'FILE', 'class':'0x7f952bbeaee8', "
                 "'fd':-1, 'references':['0x7f9527f6a608', '0x7f9527f6a540'], "
                 "'memsize':24}");
    assert_int_equal(f->b.type[0], HSCOPE_TYPE_FILE);
    assert_int_equal(f->b.unknown_keys, 0);
    assert_int_equal(f->b.nedges, 2);
    assert_int_equal(f->b.edges[0], 0x7f9527f6a608ull); /* self reference */
    expect_ok(f, "{'address':'0x10', 'type':'OBJECT', 'x':NaN, 'y':Infinity, "
                 "'z':-Infinity, 'w':[NaN, -Infinity, -0, -1.5E+3]}");
    assert_int_equal(f->b.unknown_keys, 4);
    /* variation_count is a signed int */
    expect_ok(f, "{'address':'0x18', 'type':'CLASS', 'variation_count':-2, 'name':'A'}");
    /* but not as the value of a number field */
    expect_skip(f, "{'address':'0x20', 'type':'OBJECT', 'memsize':NaN}",
                HSCOPE_SKIP_BAD_VALUE);
}

/* Nesting deeper than the supported depth is refused, without a crash. */
static void
test_too_deep(void **state)
{
    fx *f = *state;
    const size_t depth = 2000;
    const char *pre = "{\"address\":\"0x10\", \"type\":\"STRING\", \"x\":";
    const char *fpre = "{\"address\":\"0x10\", \"type\":\"STRING\", \"flags\":{\"x\":";
    size_t np = strlen(pre), nf = strlen(fpre), k;
    static char line[8 * 2000 + 256];
    /* [[[...]]] as the value of an unknown key */
    memcpy(line, pre, np);
    memset(line + np, '[', depth);
    memset(line + np + depth, ']', depth);
    line[np + 2 * depth] = '}';
    expect_skip_raw(f, line, np + 2 * depth + 1, HSCOPE_SKIP_TOO_DEEP);
    /* the same with objects: {"a":{"a":...1...}} */
    memcpy(line, pre, np);
    k = np;
    for (size_t i = 0; i < depth; i++) {
        memcpy(line + k, "{\"a\":", 5);
        k += 5;
    }
    line[k++] = '1';
    memset(line + k, '}', depth + 1);
    k += depth + 1;
    expect_skip_raw(f, line, k, HSCOPE_SKIP_TOO_DEEP);
    /* deep nesting inside "flags" too */
    memcpy(line, fpre, nf);
    memset(line + nf, '[', depth);
    memset(line + nf + depth, ']', depth);
    memcpy(line + nf + 2 * depth, "}}", 2);
    expect_skip_raw(f, line, nf + 2 * depth + 2, HSCOPE_SKIP_TOO_DEEP);
    /* moderate nesting (100 levels) is fine */
    memcpy(line, pre, np);
    memset(line + np, '[', 100);
    memset(line + np + 100, ']', 100);
    line[np + 200] = '}';
    assert_int_equal(feed_raw(f, line, np + 201), 1);
    assert_int_equal(f->b.n, 1);
    assert_int_equal(f->b.unknown_keys, 1);
}

/* Addresses: 0x or 0X or no prefix, any case, leading zeros. */
static void
test_address_forms(void **state)
{
    fx *f = *state;
    hscope__builder *b = &f->b;
    expect_ok(f, "{'address':'0X7FBC9AFDEB08', 'type':'STRING', 'class':'00007FBC9E4BA458', "
                 "'references':['0x7FbC9aFdEb08', '7fbc9afdeb08', '0x0000000000000000000010']}");
    assert_int_equal(b->addr[0], 0x7fbc9afdeb08ull);
    assert_int_equal(class_addr_of(b, 0), 0x7fbc9e4ba458ull);
    assert_int_equal(b->nedges, 3);
    assert_int_equal(b->edges[0], 0x7fbc9afdeb08ull);
    assert_int_equal(b->edges[1], 0x7fbc9afdeb08ull);
    assert_int_equal(b->edges[2], 0x10);
    /* all 64 bits */
    expect_ok(f, "{'address':'0xffffffffffffffff', 'type':'STRING'}");
    assert_int_equal(b->addr[1], UINT64_MAX);
    expect_ok(f, "{'address':'FFFFFFFFFFFFFFFF', 'type':'STRING'}");
    assert_int_equal(b->addr[2], UINT64_MAX);
}

/* "class":null means no class, like an absent key (hidden object). */
static void
test_class_null(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x10', 'type':'DATA', 'class':null, 'struct':'VM'}");
    expect_ok(f, "{'address':'0x18', 'type':'DATA'}");
    assert_int_equal(class_addr_of(&f->b, 0), 0);
    assert_int_equal(class_addr_of(&f->b, 1), 0);
    ASSERT_ISTR(f, f->b.detail[0], "VM");
    assert_int_equal(f->b.detail[1], 0);
}

static void
test_max_refs(void **state)
{
    fx *f = *state;
    f->o.max_refs = 2;
    expect_ok(f, "{'address':'0x10', 'type':'ARRAY', 'references':['0x1', '0x2']}");
    assert_int_equal(f->b.nedges, 2);
    expect_skip(f, "{'address':'0x18', 'type':'ARRAY', 'references':['0x1', '0x2', '0x3']}",
                HSCOPE_SKIP_TOO_MANY_REFS);
    expect_skip(f, "{'type':'ROOT', 'root':'vm', 'references':['0x1', '0x2', '0x3']}",
                HSCOPE_SKIP_TOO_MANY_REFS);
    /* the limit counts the final list, not the sum of repeated keys */
    expect_ok(f, "{'address':'0x20', 'type':'ARRAY', 'references':['0x1', '0x2'], "
                 "'references':['0x3']}");
    assert_int_equal(f->b.nedges, 3);
}

/* Type details: class names, imemo_type, struct, node_type. */
static void
test_details(void **state)
{
    fx *f = *state;
    hscope__builder *b = &f->b;
    expect_ok(f, "{'address':'0x10', 'type':'CLASS', 'name':'Foo', 'real_class_name':'Bar'}");
    expect_ok(f, "{'address':'0x18', 'type':'CLASS', 'real_class_name':'Class', 'singleton':true}");
    expect_ok(f, "{'address':'0x20', 'type':'MODULE', 'name':'', 'real_class_name':'M'}");
    expect_ok(f, "{'address':'0x28', 'type':'IMEMO', 'class':'0x8', 'imemo_type':'ment'}");
    expect_ok(f, "{'address':'0x30', 'type':'NODE', 'node_type':'NODE_SCOPE'}");
    expect_ok(f, "{'address':'0x38', 'type':'STRING', 'name':'ignored'}");
    expect_ok(f, "{'address':'0x40', 'type':'CLASS'}");
    ASSERT_ISTR(f, b->detail[0], "Foo");
    ASSERT_ISTR(f, b->detail[1], "Class");
    assert_int_equal(b->flags[1], HSCOPE_FLAG_SINGLETON);
    ASSERT_ISTR(f, b->detail[2], "M"); /* empty name counts as none */
    ASSERT_ISTR(f, b->detail[3], "ment");
    assert_int_equal(class_addr_of(b, 3), 0x8);
    ASSERT_ISTR(f, b->detail[4], "NODE_SCOPE");
    assert_int_equal(b->detail[5], 0);
    assert_int_equal(b->detail[6], 0);
}

/* Type names beyond the fixed ones get per-heap codes 32..254, then 255. */
static void
test_unknown_types(void **state)
{
    fx *f = *state;
    hscope__builder *b = &f->b;
    char line[128];
    for (int i = 0; i < 230; i++) {
        snprintf(line, sizeof(line), "{'address':'0x%x', 'type':'T%d'}", 16 * (i + 1), i);
        expect_ok(f, line);
        int want = i < 223 ? 32 + i : HSCOPE_TYPE_OTHER;
        assert_int_equal(b->type[i], want);
    }
    assert_string_equal(b->type_names[32], "T0");
    assert_string_equal(b->type_names[254], "T222");
    expect_ok(f, "{'address':'0x1', 'type':'T5'}");
    assert_int_equal(b->type[230], 37);
    /* too long for the name table, or with a NUL: "(other)" */
    expect_ok(f, "{'address':'0x2', 'type':'ABCDEFGHIJKLMNOPQRSTUVWXYZ'}");
    assert_int_equal(b->type[231], HSCOPE_TYPE_OTHER);
    assert_int_equal(b->unknown_types, 232);
    /* the literal UNKNOWN is a fixed type */
    expect_ok(f, "{'address':'0x3', 'type':'UNKNOWN'}");
    assert_int_equal(b->type[232], HSCOPE_TYPE_UNKNOWN);
    assert_int_equal(b->unknown_types, 232);
}

static void
test_unknown_type_fresh(void **state)
{
    fx *f = *state;
    expect_ok(f, "{'address':'0x10', 'type':'WIDGET'}");
    assert_int_equal(f->b.type[0], 32);
    assert_string_equal(f->b.type_names[32], "WIDGET");
    expect_ok(f, "{'address':'0x18', 'type':'A\\u0000B'}");
    assert_int_equal(f->b.type[1], HSCOPE_TYPE_OTHER);
    assert_int_equal(f->b.unknown_types, 2);
}

/* Generation, line and allocation info edge values. */
static void
test_generation_and_site(void **state)
{
    fx *f = *state;
    hscope__builder *b = &f->b;
    expect_ok(f, "{'address':'0x10', 'type':'STRING', 'generation':0}");
    assert_int_equal(b->gen[0], 0);
    assert_int_equal(b->site[0], 0);
    expect_ok(f, "{'address':'0x18', 'type':'STRING', 'generation':null, 'line':null}");
    assert_int_equal(b->gen[1], HSCOPE__GEN_NONE);
    assert_int_equal(b->site[1], 0);
    /* a site with only a method */
    expect_ok(f, "{'address':'0x20', 'type':'STRING', 'method':'m'}");
    assert_true(b->site[2] != 0);
    assert_int_equal(site_file(f, 2), 0);
    assert_int_equal(site_line(f, 2), 0);
    ASSERT_ISTR(f, site_method(f, 2), "m");
    /* empty file name is a file (distinct from absent) */
    expect_ok(f, "{'address':'0x28', 'type':'STRING', 'file':'', 'line':3}");
    ASSERT_ISTR(f, site_file(f, 3), "");
    assert_int_equal(site_line(f, 3), 3);
}

/* Many distinct sites force the site table to rehash. */
static void
test_many_sites(void **state)
{
    fx *f = *state;
    char line[128];
    for (int i = 0; i < 3000; i++) {
        snprintf(line, sizeof(line), "{'address':'0x%x', 'type':'STRING', "
                                     "'file':'f%d.rb', 'line':%d}", i + 1, i % 7, i);
        expect_ok(f, line);
    }
    for (int i = 0; i < 3000; i++) {
        char want[16];
        int n = snprintf(want, sizeof(want), "f%d.rb", i % 7);
        assert_istr(f, site_file(f, (size_t)i), want, (size_t)n);
        assert_int_equal(site_line(f, (size_t)i), i);
    }
    assert_int_equal(f->b.nsites, 3001);
    /* the same sites again are found, not added */
    expect_ok(f, "{'address':'0x1', 'type':'STRING', 'file':'f2.rb', 'line':1234}");
    assert_int_equal(f->b.site[3000], f->b.site[1234]);
    assert_int_equal(f->b.nsites, 3001);
}

/* The flags value Ruby writes for old marked objects is matched whole;
 * values that differ from it anywhere (in each 16-byte piece of the
 * compare and in the short tail) still go through the key loop. */
static void
test_flags_whole_value(void **state)
{
    fx *f = *state;
    hscope__builder *b = &f->b;
    const uint16_t all = HSCOPE_FLAG_WB_PROTECTED | HSCOPE_FLAG_OLD |
                         HSCOPE_FLAG_UNCOLLECTIBLE | HSCOPE_FLAG_MARKED;
    expect_ok(f, "{'address':'0x10', 'type':'STRING', 'flags':{'wb_protected':true, "
                 "'old':true, 'uncollectible':true, 'marked':true}}");
    assert_int_equal(b->flags[0], all);
    /* last piece differs */
    expect_ok(f, "{'address':'0x18', 'type':'STRING', 'flags':{'wb_protected':true, "
                 "'old':true, 'uncollectible':true, 'marked':false}}");
    assert_int_equal(b->flags[1], all & ~HSCOPE_FLAG_MARKED);
    /* one more flag after the usual four */
    expect_ok(f, "{'address':'0x20', 'type':'STRING', 'flags':{'wb_protected':true, "
                 "'old':true, 'uncollectible':true, 'marked':true, 'pinned':true}}");
    assert_int_equal(b->flags[2], all | HSCOPE_FLAG_PINNED);
    /* first piece differs (space after the brace) */
    expect_ok(f, "{'address':'0x28', 'type':'STRING', 'flags':{ 'wb_protected':true, "
                 "'old':true, 'uncollectible':true, 'marked':true}}");
    assert_int_equal(b->flags[3], all);
    /* a middle piece differs */
    expect_ok(f, "{'address':'0x30', 'type':'STRING', 'flags':{'wb_protected':true, "
                 "'old':false, 'uncollectible':true, 'marked':true}}");
    assert_int_equal(b->flags[4], all & ~HSCOPE_FLAG_OLD);
    /* the line ends inside the value: not a record */
    expect_skip(f, "{'address':'0x38', 'type':'STRING', 'flags':{'wb_protected':true, "
                   "'old':true, 'uncollectible':true, 'marked':true",
                HSCOPE_SKIP_BAD_JSON);
    assert_int_equal(b->n, 5);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_string_31),
        T(test_flags_whole_value),
        cmocka_unit_test_setup_teardown(test_string_value_kept, setup_values, teardown),
        T(test_root),
        T(test_shape),
        T(test_none),
        T(test_key_order_whitespace),
        T(test_unknown_keys),
        T(test_duplicate_keys),
        T(test_escapes),
        T(test_bad_escapes),
        T(test_raw_control_chars),
        T(test_unterminated_string),
        T(test_raw_quote_in_file),
        T(test_trailing_garbage),
        T(test_bad_literals),
        T(test_crlf),
        T(test_empty_line),
        T(test_not_object),
        T(test_missing_type_or_address),
        T(test_bad_values),
        T(test_number_range),
        T(test_negative_and_nonfinite),
        T(test_too_deep),
        T(test_address_forms),
        T(test_class_null),
        T(test_max_refs),
        T(test_details),
        T(test_unknown_types),
        T(test_unknown_type_fresh),
        T(test_generation_and_site),
        T(test_many_sites),
    };
#undef T
    return cmocka_run_group_tests_name("lexer", tests, NULL, NULL);
}
