/*
 * test_redact.c - redaction through the public API only: a hand-made dump
 * whose expected copy is worked out here from its lines (every byte but
 * the values kept, each value replaced by its length and hash, computed by
 * the test with xxHash itself), the file and write-function outputs
 * (plain and gzip) agreeing, a damaged line copied and counted, and the
 * errors: OUT = IN, bad options, a failing write.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cmocka.h>

#include <heapscope/heapscope.h>

#include "api_sink.h"

static char dir[256], in_path[512];

/* The lines of the dump: values with escapes, spacing, a SYMBOL and a
 * FLOAT, a ROOT line, a line the parser skips as damaged (a raw control
 * byte in a string), and a line without any value. */
static const char *const lines[] = {
    "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x10\"]}",
    "{\"address\":\"0x10\", \"type\":\"STRING\", \"bytesize\":6, \"value\":\"secret\", "
    "\"memsize\":40}",
    "{\"address\":\"0x18\", \"type\":\"STRING\", \"bytesize\":4, \"value\" : \"a\\\"b\\n\", "
    "\"memsize\":40}",
    "{\"address\":\"0x20\", \"type\":\"SYMBOL\", \"value\":\"token\", \"memsize\":40}",
    "{\"address\":\"0x28\", \"type\":\"FLOAT\", \"value\":\"1.5\", \"memsize\":40}",
    "{\"address\":\"0x30\", \"type\":\"STRING\", \"value\":\"bad\x01\", \"memsize\":40}",
    "{\"address\":\"0x38\", \"type\":\"ARRAY\", \"length\":0, \"memsize\":40}",
    "{\"address\":\"0x40\", \"type\":\"STRING\", \"bytesize\":3, \"value\":\"x\\ty\", "
    "\"file\":\"a.rb\", \"line\":1, \"memsize\":40}",
    "{\"address\":\"0x48\", \"type\":\"STRING\", \"bytesize\":3, \"value\":\"x\\ty\", "
    "\"file\":\"a.rb\", \"line\":1, \"memsize\":40}",
};
/* Each line's value as JSON decodes it (worked out by hand): the
 * placeholder holds its length and the XXH3-64 of its bytes, what the
 * waste analysis compares; the damaged line's value is read by nobody
 * and keeps the text as written. */
static const char *const decoded[] = {
    NULL, "secret", "a\"b\n", "token", "1.5", "bad\x01", NULL, "x\ty", "x\ty",
};
#define NLINES (sizeof(lines) / sizeof(lines[0]))

/* The raw text between the quotes of a line's value (no nested values in
 * these lines): [*b, *e). */
static int
value_at(const char *line, const char **b, const char **e)
{
    const char *k = strstr(line, "\"value\"");
    if (!k)
        return 0;
    *b = strchr(k + 7, '"') + 1;
    const char *q = *b;
    while (*q != '"')
        q += *q == '\\' ? 2 : 1;
    *e = q;
    return 1;
}

/* The expected copy of the dump, built from the lines. */
static char *
expected(void)
{
    size_t cap = 8192, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    for (size_t i = 0; i < NLINES; i++) {
        const char *b, *e, *l = lines[i];
        if (value_at(l, &b, &e))
            len += (size_t)snprintf(out + len, cap - len,
                                    "%.*s[redacted %zu bytes xxh3:%016llx]%s\n",
                                    (int)(b - l), l, strlen(decoded[i]),
                                    (unsigned long long)XXH3_64bits(decoded[i],
                                                                    strlen(decoded[i])),
                                    e);
        else
            len += (size_t)snprintf(out + len, cap - len, "%s\n", l);
    }
    return out;
}

static char *
slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *p = malloc(1 << 16);
    assert_non_null(p);
    *n = fread(p, 1, (1 << 16) - 1, f);
    p[*n] = '\0';
    fclose(f);
    return p;
}

static char *
gunzip(const char *data, size_t n, size_t *outn)
{
    char *out = malloc(1 << 16);
    assert_non_null(out);
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (unsigned char *)(uintptr_t)data;
    z.avail_in = (uInt)n;
    z.next_out = (unsigned char *)out;
    z.avail_out = (1 << 16) - 1;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    *outn = z.total_out;
    out[*outn] = '\0';
    inflateEnd(&z);
    return out;
}

static int
setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/hscope-redact-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(in_path, sizeof(in_path), "%s/in.json", dir);
    FILE *f = fopen(in_path, "wb");
    if (!f)
        return -1;
    for (size_t i = 0; i < NLINES; i++)
        fprintf(f, "%s\n", lines[i]);
    return fclose(f);
}

static int
teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void
test_file(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof(out), "%s/out.json", dir);
    hscope_redact_t *r = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    assert_int_equal(hscope_redact(&r, in_path, out, NULL, NULL, &err), HSCOPE_OK);
    size_t n;
    char *got = slurp(out, &n), *want = expected();
    assert_string_equal(got, want);
    uint64_t nl, nv, kept;
    hscope_redact_totals(r, &nl, &nv, &kept);
    assert_int_equal(nl, NLINES);
    assert_int_equal(nv, 7); /* 5 STRING, SYMBOL, FLOAT; the damaged line's too */
    assert_int_equal(kept, 0);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    assert_int_equal(hscope_redact_stats(r, &s), HSCOPE_OK);
    assert_int_equal(s.lines, NLINES);
    assert_int_equal(s.skipped_lines, 1);
    assert_int_equal(hscope_redact_skipped(r, HSCOPE_SKIP_BAD_JSON), 1);
    hscope_redact_free(r);

    /* gzip by the name, and to a write function: the same copy */
    char gz[600];
    snprintf(gz, sizeof(gz), "%s/out.json.gz", dir);
    assert_int_equal(hscope_redact(NULL, in_path, gz, NULL, NULL, &err), HSCOPE_OK);
    size_t zn, un;
    char *z = slurp(gz, &zn);
    char *u = gunzip(z, zn, &un);
    assert_string_equal(u, want);
    sink k = { 0 };
    hscope_redact_options o = HSCOPE_REDACT_OPTIONS_INIT;
    assert_int_equal(hscope_redact_write(NULL, in_path, NULL, &o, collect, &k, &err), HSCOPE_OK);
    assert_string_equal(k.p, want);
    sink kz = { 0 };
    o.flags = HSCOPE_REDACT_GZIP;
    o.gzip_level = 9;
    assert_int_equal(hscope_redact_write(NULL, in_path, NULL, &o, collect, &kz, &err), HSCOPE_OK);
    free(u);
    u = gunzip(kz.p, kz.len, &un);
    assert_string_equal(u, want);
    free(u), free(z), free(k.p), free(kz.p), free(got), free(want);
}

static void
test_errors(void **state)
{
    (void)state;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_redact_t *r = (hscope_redact_t *)1;
    char same[600], out[600];
    snprintf(same, sizeof(same), "%s/./in.json", dir);
    snprintf(out, sizeof(out), "%s/keep.json", dir);
    size_t n0, n1;
    char *before = slurp(in_path, &n0);
    assert_int_equal(hscope_redact(&r, in_path, same, NULL, NULL, &err), HSCOPE_ERR_INVALID_ARG);
    assert_null(r);
    assert_non_null(strstr(err.message, "same file"));
    char *after = slurp(in_path, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    /* a failed run leaves an existing OUT as it was */
    FILE *f = fopen(out, "wb");
    assert_non_null(f);
    fputs("keep", f);
    fclose(f);
    char missing[600];
    snprintf(missing, sizeof(missing), "%s/missing.json", dir);
    assert_int_equal(hscope_redact(NULL, missing, out, NULL, NULL, &err), HSCOPE_ERR_IO);
    char *k = slurp(out, &n1);
    assert_string_equal(k, "keep");
    hscope_redact_options o = HSCOPE_REDACT_OPTIONS_INIT;
    o.flags = 0x80;
    assert_int_equal(hscope_redact(NULL, in_path, out, NULL, &o, &err), HSCOPE_ERR_UNSUPPORTED);
    o.flags = 0;
    o.gzip_level = 10;
    assert_int_equal(hscope_redact(NULL, in_path, out, NULL, &o, &err), HSCOPE_ERR_INVALID_ARG);
    o.gzip_level = 0;
    o.size = 2;
    assert_int_equal(hscope_redact(NULL, in_path, out, NULL, &o, &err), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_redact(NULL, NULL, out, NULL, NULL, &err), HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(hscope_redact_write(NULL, in_path, NULL, NULL, NULL, NULL, &err),
                     HSCOPE_ERR_INVALID_ARG);
    /* a failing write stops the pass, and says so */
    sink s = { 0 };
    s.fail_after = 1;
    assert_int_equal(hscope_redact_write(NULL, in_path, NULL, NULL, collect, &s, &err),
                     HSCOPE_ERR_IO);
    assert_int_equal(s.calls, 1);
    free(before), free(after), free(k), free(s.p);
    hscope_redact_totals(NULL, NULL, NULL, NULL);
    assert_int_equal(hscope_redact_skipped(NULL, 0), 0);
}

/* The waste analysis finds the same duplicates in the copy (the same
 * length, hash and sites), and redacting the copy changes nothing. */
static void
test_promise(void **state)
{
    (void)state;
    char r1[600], r2[600];
    snprintf(r1, sizeof(r1), "%s/r1.json", dir);
    snprintf(r2, sizeof(r2), "%s/r2.json", dir);
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_redact_t *r = NULL;
    assert_int_equal(hscope_redact(NULL, in_path, r1, NULL, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_redact(&r, r1, r2, NULL, NULL, &err), HSCOPE_OK);
    uint64_t nv, kept;
    hscope_redact_totals(r, NULL, &nv, &kept);
    assert_int_equal(nv, 0);
    assert_int_equal(kept, 7);
    hscope_redact_free(r);
    size_t n1, n2;
    char *a = slurp(r1, &n1), *b = slurp(r2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    free(a), free(b);
    hscope_waste_t *w0 = NULL, *w1 = NULL;
    assert_int_equal(hscope_waste_file(&w0, in_path, NULL, NULL, &err), HSCOPE_OK);
    assert_int_equal(hscope_waste_file(&w1, r1, NULL, NULL, &err), HSCOPE_OK);
    hscope_waste_value v0 = { sizeof(v0) }, v1 = { sizeof(v1) };
    assert_int_equal(hscope_waste_value_get(w0, 0, &v0), HSCOPE_OK);
    assert_int_equal(hscope_waste_value_get(w1, 0, &v1), HSCOPE_OK);
    assert_int_equal(v0.length, 3);
    assert_int_equal(v0.hash, XXH3_64bits("x\ty", 3));
    assert_int_equal(v1.length, v0.length);
    assert_int_equal(v1.hash, v0.hash);
    assert_int_equal(v1.copies, 2);
    assert_int_equal(v1.saving, v0.saving);
    assert_int_equal(v1.sites, v0.sites);
    assert_null(v1.data); /* the copy has no bytes to give */
    assert_int_equal(hscope_waste_value_get(w1, 1, &v1), HSCOPE_ERR_NOT_FOUND);
    hscope_waste_free(w0);
    hscope_waste_free(w1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_promise),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
