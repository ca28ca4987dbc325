/*
 * test_blocks.c - the parallel parser's block mode (src/parse/parallel.c)
 * against reading in order on one thread.
 *
 * In block mode each worker reads the lines that start in its own block of
 * the input.  Every input here is parsed once by hscope__parse_stream (one
 * thread, reading in order: the reference) and then by
 * hscope__parse_parallel with blocks of 1 byte up to the default, from
 * memory and from a file (opened at an offset, so the blocks must be
 * counted from where the descriptor stood).  The whole builder (objects,
 * strings, sites, references, roots, values, counters, skip examples,
 * byte count) is written out as text, and the texts must be equal.
 *
 * Inputs: the fixture dumps of the tests and the corpus, the hostile
 * files, and generated ones with lines from 1 byte to several blocks long,
 * empty lines, CRLF, bad lines, a last line with no newline or cut short,
 * and lines over max_line_bytes (lenient: counted as skipped; strict: the
 * same error, line and byte offset as reading in order).  Also: every
 * allocation failing in turn, a file cut short after it was opened, and
 * the descriptor left at the end of the input as reading in order leaves it.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/io/reader.h"
#include "../../src/parse/parse.h"
#include "../builder_text.h"

/* ------------------------------------------------------------------ */
/* parsing one input one way                                          */
/* ------------------------------------------------------------------ */

enum { FROM_MEMORY, FROM_FILE };

/* >= 0: the file is cut to this many bytes (after the junk) once the
 * reader has opened it, as if another process truncated it */
static long cut_after_open = -1;

typedef struct run {
    hscope_status st;
    hscope_error err;
    uint64_t blocks; /* chunks of block mode; 0: read in order */
    uint64_t in_bytes;
    text out;
} run;

/* Failure injection: with `chaos` set, the fail_at-th allocation call
 * (counted over all threads) fails. */
static int chaos;
static _Atomic long chaos_calls, chaos_fail_at;

static void *
ch_malloc(void *ud, size_t n)
{
    (void)ud;
    long c = ++chaos_calls;
    return chaos_fail_at && c == chaos_fail_at ? NULL : malloc(n);
}

static void *
ch_realloc(void *ud, void *q, size_t n)
{
    (void)ud;
    long c = ++chaos_calls;
    return chaos_fail_at && c == chaos_fail_at ? NULL : realloc(q, n);
}

static void
ch_free(void *ud, void *q)
{
    (void)ud;
    free(q);
}

static const char *
tmpdir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

/*
 * threads 0: hscope__parse_stream.  Otherwise hscope__parse_parallel with
 * blocks of `block` bytes.  From a file, `junk` bytes come first and the
 * descriptor is opened positioned after them.
 */
static void
parse(run *R, const uint8_t *data, size_t len, unsigned threads, uint64_t block, int how,
      size_t junk, int strict, uint64_t max_line)
{
    memset(R, 0, sizeof(*R));
    hscope__mem mem;
    hscope_allocator al = { sizeof(al), 0, ch_malloc, ch_realloc, ch_free, NULL };
    hscope__mem_init(&mem, chaos ? &al : NULL, 0);
    hscope__builder b;
    hscope_error_init(&R->err);
    if ((R->st = hscope__builder_init(&b, &mem, 1, 0, &R->err)) != HSCOPE_OK) {
        assert_true(chaos);
        assert_int_equal(R->st, HSCOPE_ERR_NOMEM);
        hscope__builder_free(&b);
        assert_int_equal(mem.used, 0);
        return;
    }
    hscope__parse_opts o;
    memset(&o, 0, sizeof(o));
    o.strict = strict;
    o.max_line = max_line;
    o.block_bytes = block;
    hscope__reader r;
    int fd = -1;
    char path[4096];
    if (how == FROM_FILE) {
        snprintf(path, sizeof(path), "%s/hscope_blocks_%ld.json", tmpdir(), (long)getpid());
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        unlink(path);
        for (size_t i = 0; i < junk; i++)
            assert_int_equal(write(fd, "\n", 1), 1);
        size_t done = 0;
        while (done < len) {
            ssize_t n = write(fd, data + done, len - done);
            assert_true(n > 0);
            done += (size_t)n;
        }
        assert_int_equal(lseek(fd, (off_t)junk, SEEK_SET), (off_t)junk);
        assert_int_equal(hscope__reader_open_fd(&r, &mem, fd, 0, &R->err), HSCOPE_OK);
        if (cut_after_open >= 0)
            assert_int_equal(ftruncate(fd, (off_t)junk + (off_t)cut_after_open), 0);
    } else if ((R->st = hscope__reader_open_memory(&r, &mem, data, len, 0, &R->err)) !=
               HSCOPE_OK) {
        assert_true(chaos);
        assert_int_equal(R->st, HSCOPE_ERR_NOMEM);
        hscope__reader_close(&r);
        hscope__builder_free(&b);
        assert_int_equal(mem.used, 0);
        return;
    }
    if (threads == 0)
        R->st = hscope__parse_stream(&r, &b, &o, &R->err);
    else
        R->st = hscope__parse_parallel(&r, &b, &o, threads, &R->err);
    R->blocks = b.blocks;
    R->in_bytes = r.in_bytes;
    if (fd >= 0 && R->st == HSCOPE_OK) /* the descriptor is left at the end */
        assert_int_equal(lseek(fd, 0, SEEK_CUR),
                         (off_t)junk + (cut_after_open >= 0 ? cut_after_open : (off_t)len));
    if (R->st == HSCOPE_OK)
        describe(&R->out, &b);
    hscope__reader_close(&r);
    if (fd >= 0)
        close(fd);
    hscope__builder_free(&b);
    assert_int_equal(mem.used, 0);
}

/* Parse `data` every way and check each against reading in order. */
static void
check_input(const char *what, const uint8_t *data, size_t len, int strict, uint64_t max_line)
{
    static const uint64_t blocks[] = { 1, 3, 64, 257, 4096, 0 };
    run ref;
    parse(&ref, data, len, 0, 0, FROM_MEMORY, 0, strict, max_line);
    for (size_t bi = 0; bi < sizeof(blocks) / sizeof(blocks[0]); bi++) {
        uint64_t block = blocks[bi], bsz = block ? block : (uint64_t)1 << 20;
        if (max_line && max_line / 2 < bsz)
            continue; /* too small a max_line for blocks: read in order */
        if (len / bsz > 3000)
            continue; /* a long run of tiny blocks proves nothing more */
        for (unsigned threads = 2; threads <= 3; threads++) {
            for (int how = FROM_MEMORY; how <= FROM_FILE; how++) {
                run R;
                parse(&R, data, len, threads, block, how, how == FROM_FILE ? 5 : 0, strict,
                      max_line);
                uint64_t want_blocks = len / bsz + (len % bsz != 0);
                if (R.st == HSCOPE_OK && R.blocks != want_blocks)
                    fail_msg("%s, block %llu: %llu chunks in block mode, expected %llu", what,
                             (unsigned long long)block, (unsigned long long)R.blocks,
                             (unsigned long long)want_blocks);
                if (R.st != ref.st || R.err.status != ref.err.status ||
                    R.err.line != ref.err.line || R.err.offset != ref.err.offset ||
                    strcmp(R.err.message, ref.err.message) != 0)
                    fail_msg("%s, block %llu, %u threads, %s: status %d line %llu byte %llu "
                             "'%s'; in order: %d line %llu byte %llu '%s'",
                             what, (unsigned long long)block, threads,
                             how == FROM_FILE ? "file" : "memory", R.st,
                             (unsigned long long)R.err.line, (unsigned long long)R.err.offset,
                             R.err.message, ref.st, (unsigned long long)ref.err.line,
                             (unsigned long long)ref.err.offset, ref.err.message);
                if (R.st == HSCOPE_OK) {
                    if (R.out.len != ref.out.len || memcmp(R.out.p, ref.out.p, R.out.len) != 0) {
                        size_t i = 0;
                        while (i < R.out.len && i < ref.out.len && R.out.p[i] == ref.out.p[i])
                            i++;
                        size_t from = i > 80 ? i - 80 : 0;
                        fail_msg("%s, block %llu, %u threads, %s: differs at %zu:\n"
                                 "block mode: ...%.160s\nin order:   ...%.160s",
                                 what, (unsigned long long)block, threads,
                                 how == FROM_FILE ? "file" : "memory", i, R.out.p + from,
                                 ref.out.p + from);
                    }
                    assert_int_equal(R.in_bytes, len);
                }
                free(R.out.p);
            }
        }
    }
    free(ref.out.p);
}

static uint8_t *
slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    text t = { 0 };
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        put(&t, buf, n);
    fclose(f);
    *len = t.len;
    if (!t.p)
        t.p = calloc(1, 1);
    return (uint8_t *)t.p;
}

/* ------------------------------------------------------------------ */
/* tests                                                              */
/* ------------------------------------------------------------------ */

/* The fixture dumps and hostile files, lenient and strict. */
static void
test_fixture_files(void **state)
{
    (void)state;
    const char *data = getenv("HEAPSCOPE_TEST_DATA");
    const char *corpus = getenv("HEAPSCOPE_CORPUS");
    static const char *const names[] = {
        "%s/ruby31-sample.jsonl",
        "%s/../hostile/big_numbers.json",
        "%s/../hostile/billions_claimed.json",
        "%s/../hostile/crlf.json",
        "%s/../hostile/cut_mid_line.json",
        "%s/../hostile/dup_address.json",
        "%s/../hostile/empty.json",
        "%s/../hostile/invalid_utf8.json",
        "%s/../hostile/missing_address.json",
        "%s/../hostile/not_a_dump.rb",
        "%s/../hostile/nul_byte.json",
        "%s/../hostile/self_and_missing_refs.json",
    };
    assert_non_null(data);
    int checked = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[4096];
        snprintf(path, sizeof(path), names[i], data);
        size_t len;
        uint8_t *p = slurp(path, &len);
        if (!p)
            fail_msg("cannot read %s", path);
        check_input(path, p, len, 0, 0);
        check_input(path, p, len, 1, 0);
        free(p);
        checked++;
    }
    /* a real dump from another Ruby (83 KB) */
    if (corpus) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/external/hp_test_fixtures_diffed-heap_retained.heap",
                 corpus);
        size_t len;
        uint8_t *p = slurp(path, &len);
        if (p) {
            check_input(path, p, len, 0, 0);
            free(p);
            checked++;
        } else {
            printf("note: %s not found (no shared corpus): that dump of another Ruby is not checked\n",
                   path);
        }
    }
    assert_true(checked >= 12);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t
next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* A record whose line is about `want` bytes long (a string value pads it). */
static void
record(text *t, uint64_t addr, size_t want)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "{\"address\":\"0x%llx\", \"type\":\"STRING\", \"class\":\"0x1000\", "
                     "\"references\":[\"0x%llx\"], \"file\":\"a%u.rb\", \"line\":%u, "
                     "\"value\":\"",
                     (unsigned long long)addr, (unsigned long long)(addr + 40),
                     next_rand() % 3, next_rand() % 50);
    put(t, head, (size_t)n);
    for (size_t i = (size_t)n + 2; i < want; i++)
        put(t, "x", 1);
    put(t, "\"}", 2);
}

/* Lines of every length around the block sizes, and odd lines between. */
static void
test_generated_lines(void **state)
{
    (void)state;
    for (int variant = 0; variant < 6; variant++) {
        text t = { 0 };
        uint64_t addr = 0x7f0000001000;
        for (int i = 0; i < 120; i++) {
            uint32_t r = next_rand() % 100;
            size_t want = r < 60 ? 130 + next_rand() % 200
                        : r < 85 ? 250 + next_rand() % 4000
                                 : 5000 + next_rand() % 20000;
            if (r == 99)
                put(&t, "\n", 1); /* an empty line */
            else if (r == 98)
                put(&t, "{\"address\":\"0x10\", \"type\":}\n", 28); /* bad JSON */
            else if (r == 97) {
                record(&t, addr, want);
                put(&t, "\r\n", 2);
            } else {
                record(&t, addr, want);
                put(&t, "\n", 1);
            }
            addr += 40;
        }
        put(&t, "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x7f0000001000\"]}\n", 63);
        if (variant == 1)
            record(&t, addr, 400); /* the last line has no newline */
        if (variant == 2)
            put(&t, "{\"address\":\"0x9999\", \"type\":\"STR", 32); /* cut short */
        if (variant == 3) {
            /* a last line longer than many blocks, then the end */
            record(&t, addr, 30000);
        }
        char what[64];
        snprintf(what, sizeof(what), "generated variant %d", variant);
        check_input(what, (const uint8_t *)t.p, t.len, 0, 0);
        check_input(what, (const uint8_t *)t.p, t.len, 1, 0);
        if (variant >= 4) {
            /* lines over max_line_bytes: skipped (lenient), the first one
             * is the error (strict), at any block size up to max / 2 */
            check_input(what, (const uint8_t *)t.p, t.len, 0, 6000);
            check_input(what, (const uint8_t *)t.p, t.len, 1, 6000);
            check_input(what, (const uint8_t *)t.p, t.len, 0, 600);
            check_input(what, (const uint8_t *)t.p, t.len, 1, 600);
        }
        free(t.p);
    }
}

/* A too-long line as the last one, with and without its newline, and a
 * line exactly at the limit (kept) and one byte over (skipped). */
static void
test_line_limit_at_the_end(void **state)
{
    (void)state;
    for (int nl = 0; nl <= 1; nl++) {
        for (size_t extra = 0; extra <= 2; extra++) {
            text t = { 0 };
            record(&t, 0x10, 200);
            put(&t, "\n", 1);
            size_t at = t.len;
            record(&t, 0x20, 1000 - 1 + extra); /* 999, 1000, 1001 bytes */
            assert_int_equal(t.len - at, 999 + extra);
            if (nl)
                put(&t, "\n", 1);
            char what[64];
            snprintf(what, sizeof(what), "line of %zu bytes, newline %d", 999 + extra, nl);
            check_input(what, (const uint8_t *)t.p, t.len, 0, 1000);
            check_input(what, (const uint8_t *)t.p, t.len, 1, 1000);
            free(t.p);
        }
    }
}

/* The chunks really are blocks: a default-size run over 3.5 MiB of input
 * parses in 4 chunks, and a max_line below two blocks reads in order. */
static void
test_block_mode_is_used(void **state)
{
    (void)state;
    text t = { 0 };
    uint64_t addr = 0x7f0000001000;
    while (t.len < ((size_t)7 << 19)) {
        record(&t, addr, 300);
        put(&t, "\n", 1);
        addr += 40;
    }
    run R;
    parse(&R, (const uint8_t *)t.p, t.len, 2, 0, FROM_FILE, 0, 0, 0);
    assert_int_equal(R.st, HSCOPE_OK);
    assert_int_equal(R.blocks, 4);
    free(R.out.p);
    parse(&R, (const uint8_t *)t.p, t.len, 2, 0, FROM_MEMORY, 0, 0, (uint64_t)3 << 19);
    assert_int_equal(R.st, HSCOPE_OK);
    assert_int_equal(R.blocks, 0);
    free(R.out.p);
    check_input("3.5 MiB", (const uint8_t *)t.p, t.len, 0, 0);
    free(t.p);
}

/* Every allocation of a block-mode parse may fail: the parse then fails
 * with NOMEM and frees everything, or (a failure the parse recovers
 * from) gives the same result. */
static void
test_allocation_failures(void **state)
{
    (void)state;
    text t = { 0 };
    uint64_t addr = 0x7f0000001000;
    for (int i = 0; i < 40; i++) {
        record(&t, addr, i % 10 == 5 ? 20000 : 150 + (size_t)i * 37);
        put(&t, "\n", 1);
        addr += 40;
    }
    run ref, R;
    parse(&ref, (const uint8_t *)t.p, t.len, 0, 0, FROM_MEMORY, 0, 0, 0);
    assert_int_equal(ref.st, HSCOPE_OK);
    chaos = 1;
    chaos_calls = chaos_fail_at = 0;
    parse(&R, (const uint8_t *)t.p, t.len, 2, 512, FROM_MEMORY, 0, 0, 0);
    assert_int_equal(R.st, HSCOPE_OK);
    assert_true(R.blocks > 20);
    free(R.out.p);
    long total = chaos_calls, failed = 0;
    for (long k = 1; k <= total + 10; k++) {
        chaos_calls = 0;
        chaos_fail_at = k;
        parse(&R, (const uint8_t *)t.p, t.len, 2, 512, FROM_MEMORY, 0, 0, 0);
        if (R.st == HSCOPE_OK) {
            assert_int_equal(R.out.len, ref.out.len);
            assert_memory_equal(R.out.p, ref.out.p, R.out.len);
        } else {
            assert_int_equal(R.st, HSCOPE_ERR_NOMEM);
            assert_int_equal(R.err.status, HSCOPE_ERR_NOMEM);
            failed++;
        }
        free(R.out.p);
    }
    chaos = 0;
    assert_true(failed > total / 2);
    print_message("%ld allocation calls, %ld failures injected\n", total, failed);
    free(ref.out.p);
    free(t.p);
}

/* A file cut short after it was opened: block mode finds the end where its
 * reads do, and the result is that of the shorter file read in order (the
 * last line, if cut, is counted as truncated). */
static void
test_file_cut_while_read(void **state)
{
    (void)state;
    text t = { 0 };
    uint64_t addr = 0x7f0000001000;
    for (int i = 0; i < 60; i++) {
        record(&t, addr, 200 + (size_t)(i % 7) * 50);
        put(&t, "\n", 1);
        addr += 40;
    }
    size_t cuts[] = { 0, 1, 250, 999, 1000, t.len / 2, t.len - 1 };
    for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
        for (uint64_t block = 64; block <= 4096; block *= 8) {
            run ref, R;
            parse(&ref, (const uint8_t *)t.p, cuts[c], 0, 0, FROM_MEMORY, 0, 0, 0);
            cut_after_open = (long)cuts[c];
            parse(&R, (const uint8_t *)t.p, t.len, 2, block, FROM_FILE, 3, 0, 0);
            cut_after_open = -1;
            if (ref.st != R.st)
                fail_msg("cut at %zu, block %llu: status %d, in order %d", cuts[c],
                         (unsigned long long)block, R.st, ref.st);
            if (ref.st == HSCOPE_OK) {
                assert_int_equal(R.out.len, ref.out.len);
                assert_memory_equal(R.out.p, ref.out.p, R.out.len);
                assert_int_equal(R.in_bytes, cuts[c]);
            }
            free(ref.out.p);
            free(R.out.p);
        }
    }
    free(t.p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_files),
        cmocka_unit_test(test_generated_lines),
        cmocka_unit_test(test_line_limit_at_the_end),
        cmocka_unit_test(test_block_mode_is_used),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_file_cut_while_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
