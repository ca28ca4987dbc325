/*
 * test_reader.c - white-box tests of the byte sources (src/io/reader.c):
 * memory, path and fd, plain and gzip (made here with zlib's deflate,
 * windowBits 31 = gzip wrapper), concatenated members, truncated and
 * corrupt streams, and I/O errors.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "../../src/io/reader.h"
#include "../zlib_oracle.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

typedef struct buf {
    unsigned char *p;
    size_t len, cap;
} buf;

static void
buf_add(buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->len + n)
            nc *= 2;
        b->p = realloc(b->p, nc);
        assert_non_null(b->p);
        b->cap = nc;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* Deterministic text that looks like a dump (compresses like one). */
static buf
make_text(size_t approx)
{
    buf b = { 0 };
    char line[160];
    for (unsigned i = 0; b.len < approx; i++) {
        int n = snprintf(line, sizeof(line),
                         "{\"address\":\"0x7f%010x\", \"type\":\"STRING\", "
                         "\"bytesize\":%u, \"memsize\":40}\n",
                         i * 40u, i % 97);
        buf_add(&b, line, (size_t)n);
    }
    return b;
}

/* Incompressible bytes (xorshift), every byte value included. */
static buf
make_random(size_t n, uint32_t seed)
{
    buf b = { 0 };
    b.p = malloc(n ? n : 1);
    assert_non_null(b.p);
    b.len = b.cap = n;
    uint32_t x = seed ? seed : 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b.p[i] = (unsigned char)x;
    }
    return b;
}

/* One gzip member of data (deflate with windowBits 31). */
static buf
gz(const void *data, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    buf out = { 0 };
    out.cap = deflateBound(&z, (uLong)len) + 64;
    out.p = malloc(out.cap);
    assert_non_null(out.p);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = out.p;
    z.avail_out = (uInt)out.cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    out.len = out.cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

/* Read everything with reads of at most `chunk` bytes. */
static hscope_status
read_all(hscope__reader *r, size_t chunk, buf *out, hscope_error *err)
{
    unsigned char *tmp = malloc(chunk);
    assert_non_null(tmp);
    hscope_status st;
    for (;;) {
        size_t got = 12345;
        st = hscope__reader_read(r, tmp, chunk, &got, err);
        if (st != HSCOPE_OK)
            break;
        assert_true(got <= chunk);
        if (got == 0)
            break;
        buf_add(out, tmp, got);
    }
    free(tmp);
    return st;
}

typedef struct fx {
    hscope__mem mem;
    hscope_error err;
    hscope__reader r;
} fx;

static int
setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    hscope__mem_init(&f->mem, NULL, 0);
    hscope_error_init(&f->err);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    fx *f = *state;
    hscope__reader_close(&f->r);
    /* the reader's buffers went through the accounted allocator */
    assert_int_equal(atomic_load(&f->mem.used), 0);
    free(f);
    return 0;
}

/* Open data from memory, read it all in `chunk`s, expect `want`. */
static void
check_memory(fx *f, const buf *data, int no_gzip, size_t chunk,
             const void *want, size_t want_len, int is_gzip)
{
    hscope_error_init(&f->err);
    assert_int_equal(hscope__reader_open_memory(&f->r, &f->mem, data->p, data->len,
                                                no_gzip, &f->err), HSCOPE_OK);
    assert_int_equal(f->r.gzip, is_gzip);
    assert_int_equal(f->r.total, data->len);
    buf out = { 0 };
    assert_int_equal(read_all(&f->r, chunk, &out, &f->err), HSCOPE_OK);
    assert_int_equal(out.len, want_len);
    if (want_len)
        assert_memory_equal(out.p, want, want_len);
    assert_int_equal(f->r.truncated, 0);
    assert_int_equal(f->r.in_bytes, data->len);
    /* reading past the end keeps returning 0 */
    unsigned char one;
    size_t got = 9;
    assert_int_equal(hscope__reader_read(&f->r, &one, 1, &got, &f->err), HSCOPE_OK);
    assert_int_equal(got, 0);
    hscope__reader_close(&f->r);
    assert_int_equal(atomic_load(&f->mem.used), 0);
    free(out.p);
}

static char *
temp_file(const void *data, size_t len)
{
    const char *dir = getenv("TMPDIR");
    char *path = NULL;
    assert_true(asprintf(&path, "%s/hscope-reader-XXXXXX", dir ? dir : "/tmp") > 0);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const unsigned char *p = data;
    size_t left = len;
    while (left) {
        ssize_t n = write(fd, p, left);
        assert_true(n > 0);
        p += n;
        left -= (size_t)n;
    }
    close(fd);
    return path;
}

/* ------------------------------------------------------------------ */
/* Memory source                                                        */
/* ------------------------------------------------------------------ */

/* Plain bytes come back exactly, for any read size; the input is larger
 * than the reader's 256 KiB staging buffer. */
static void
test_plain_memory(void **state)
{
    fx *f = *state;
    buf data = make_random(HSCOPE__READER_IBUF * 4 + 7, 42);
    data.p[0] = '{'; /* not the gzip magic */
    static const size_t chunks[] = { 7, 4096, 1 << 20, 4 << 20 };
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
        check_memory(f, &data, 0, chunks[i], data.p, data.len, 0);
    /* byte-by-byte on a smaller input */
    buf small = make_random(70000, 7);
    small.p[0] = 'x';
    check_memory(f, &small, 0, 1, small.p, small.len, 0);
    free(small.p);
    free(data.p);
}

/* Inputs that only look a little like gzip stay plain. */
static void
test_plain_not_gzip(void **state)
{
    fx *f = *state;
    buf one = { (unsigned char *)"\x1f", 1, 1 };
    check_memory(f, &one, 0, 16, "\x1f", 1, 0);
    buf half = { (unsigned char *)"\x1f\x8a rest", 7, 7 };
    check_memory(f, &half, 0, 3, "\x1f\x8a rest", 7, 0);
    buf other = { (unsigned char *)"\x8b\x1f", 2, 2 };
    check_memory(f, &other, 0, 1, "\x8b\x1f", 2, 0);
}

static void
test_empty_memory(void **state)
{
    fx *f = *state;
    buf empty2 = { (unsigned char *)"x", 0, 0 };
    check_memory(f, &empty2, 0, 64, "", 0, 0);
    /* NULL with a length is refused */
    hscope_error_init(&f->err);
    assert_int_equal(hscope__reader_open_memory(&f->r, &f->mem, NULL, 5, 0, &f->err),
                     HSCOPE_ERR_INVALID_ARG);
    assert_int_equal(f->err.status, HSCOPE_ERR_INVALID_ARG);
}

/* A zero-byte read request is not the end of input. */
/*
 * Regression test (found while writing this suite, now fixed): a NULL buffer with length 0 is accepted (only
 * NULL with a length is refused), but the first read then does
 * memcpy(ibuf, NULL + 0, 0) in fill_raw() (src/io/reader.c), which is
 * undefined behaviour: UBSan reports "null pointer passed as argument 2",
 * and with halt_on_error=1 (scripts/test.sh) the process stops.  Kept as
 * the last test of the suite so that it cannot hide the others.
 */
static void
test_bug_null_empty_memory(void **state)
{
    fx *f = *state;
    buf empty = { NULL, 0, 0 };
    check_memory(f, &empty, 0, 64, "", 0, 0);
}

static void
test_zero_cap_read(void **state)
{
    fx *f = *state;
    static const char text[] = "{}\n";
    assert_int_equal(hscope__reader_open_memory(&f->r, &f->mem, text, 3, 0, &f->err),
                     HSCOPE_OK);
    size_t got = 99;
    char b[8];
    assert_int_equal(hscope__reader_read(&f->r, b, 0, &got, &f->err), HSCOPE_OK);
    assert_int_equal(got, 0);
    assert_int_equal(hscope__reader_read(&f->r, b, sizeof(b), &got, &f->err), HSCOPE_OK);
    assert_int_equal(got, 3);
    assert_memory_equal(b, text, 3);
}

/* ------------------------------------------------------------------ */
/* gzip                                                                 */
/* ------------------------------------------------------------------ */

static void
test_gzip_small_reads(void **state)
{
    fx *f = *state;
    buf text = make_text(600 * 1024);
    buf z = gz(text.p, text.len);
    assert_true(z.len < text.len / 3);
    static const size_t chunks[] = { 1, 3, 100, 4096, 65536, 8 << 20 };
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
        check_memory(f, &z, 0, chunks[i], text.p, text.len, 1);
    /* incompressible content (stored blocks) too */
    buf rnd = make_random(300 * 1024, 99);
    buf zr = gz(rnd.p, rnd.len);
    check_memory(f, &zr, 0, 777, rnd.p, rnd.len, 1);
    free(zr.p);
    free(rnd.p);
    free(z.p);
    free(text.p);
}

/* gzip -c a > x; gzip -c b >> x: the members are inflated one after the
 * other, including an empty member between them. */
static void
test_gzip_members(void **state)
{
    fx *f = *state;
    buf a = make_text(200 * 1024);
    buf b = make_random(50 * 1024, 3);
    buf za = gz(a.p, a.len), zb = gz(b.p, b.len), ze = gz("", 0);
    buf cat = { 0 }, want = { 0 };
    buf_add(&cat, za.p, za.len);
    buf_add(&cat, ze.p, ze.len);
    buf_add(&cat, zb.p, zb.len);
    buf_add(&cat, za.p, za.len);
    buf_add(&want, a.p, a.len);
    buf_add(&want, b.p, b.len);
    buf_add(&want, a.p, a.len);
    check_memory(f, &cat, 0, 1000, want.p, want.len, 1);
    check_memory(f, &cat, 0, 1 << 20, want.p, want.len, 1);
    free(want.p);
    free(cat.p);
    free(ze.p);
    free(zb.p);
    free(za.p);
    free(b.p);
    free(a.p);
}

/* A stream that stops early gives the bytes inflated so far, then 0 with
 * r->truncated set (not an error). */
static void
check_truncated(fx *f, const buf *text, const buf *z, size_t cut,
                size_t chunk, size_t min_out)
{
    hscope_error_init(&f->err);
    assert_int_equal(hscope__reader_open_memory(&f->r, &f->mem, z->p, cut, 0, &f->err),
                     HSCOPE_OK);
    assert_int_equal(f->r.gzip, 1);
    buf out = { 0 };
    assert_int_equal(read_all(&f->r, chunk, &out, &f->err), HSCOPE_OK);
    assert_int_equal(f->r.truncated, 1);
    assert_true(out.len >= min_out);
    assert_true(out.len <= text->len);
    if (out.len)
        assert_memory_equal(out.p, text->p, out.len);
    assert_int_equal(f->err.status, HSCOPE_OK);
    hscope__reader_close(&f->r);
    free(out.p);
}

static void
test_gzip_truncated(void **state)
{
    fx *f = *state;
    buf text = make_text(400 * 1024);
    buf z = gz(text.p, text.len);
    /* half the compressed stream: some data, not all */
    check_truncated(f, &text, &z, z.len / 2, 4096, 1);
    /* only the 8-byte trailer (CRC, size) missing: all data, truncated */
    check_truncated(f, &text, &z, z.len - 8, 65536, text.len);
    check_truncated(f, &text, &z, z.len - 1, 65536, text.len);
    /* just the 10-byte header, or part of it */
    check_truncated(f, &text, &z, 10, 100, 0);
    check_truncated(f, &text, &z, 5, 100, 0);
    /* a truncated second member */
    buf two = { 0 };
    buf_add(&two, z.p, z.len);
    buf_add(&two, z.p, z.len / 3);
    hscope_error_init(&f->err);
    assert_int_equal(hscope__reader_open_memory(&f->r, &f->mem, two.p, two.len, 0,
                                                &f->err), HSCOPE_OK);
    buf out = { 0 };
    assert_int_equal(read_all(&f->r, 8192, &out, &f->err), HSCOPE_OK);
    assert_int_equal(f->r.truncated, 1);
    assert_true(out.len > text.len && out.len < 2 * text.len);
    assert_memory_equal(out.p, text.p, text.len);
    assert_memory_equal(out.p + text.len, text.p, out.len - text.len);
    free(out.p);
    free(two.p);
    free(z.p);
    free(text.p);
}

/* Read z cut to `cut` bytes, from memory or (fd) from a file. */
static buf
read_cut(fx *f, const buf *z, size_t cut, int fd, size_t chunk, int truncated)
{
    hscope_error_init(&f->err);
    if (fd >= 0) { /* the stream after 7 other bytes: the reader starts
                    * where the descriptor stands, and re-reads from there */
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(pwrite(fd, "garbage", 7, 0), 7);
        assert_int_equal(pwrite(fd, z->p, cut, 7), (ssize_t)cut);
        assert_int_equal(lseek(fd, 7, SEEK_SET), 7);
        assert_int_equal(hscope__reader_open_fd(&f->r, &f->mem, fd, 0, &f->err), HSCOPE_OK);
    } else {
        assert_int_equal(hscope__reader_open_memory(&f->r, &f->mem, z->p, cut, 0, &f->err),
                         HSCOPE_OK);
    }
    buf out = { 0 };
    assert_int_equal(read_all(&f->r, chunk, &out, &f->err), HSCOPE_OK);
    assert_int_equal(f->err.status, HSCOPE_OK);
    assert_int_equal(f->r.truncated, truncated);
    return out;
}

/*
 * A stream cut anywhere gives exactly what zlib inflates from the cut
 * stream.  With ISA-L this is the case that needs zlib's help: ISA-L stops
 * up to a few bytes short at some cuts (reader.c), so at least one cut
 * must have taken the recovery path - or this test proves nothing.
 */
static void
test_gzip_cut_everywhere(void **state)
{
    fx *f = *state;
    buf a = make_text(200 * 1024), b = make_random(3000, 5);
    buf za = gz(a.p, a.len), zb = gz(b.p, b.len);
    buf z = { 0 };
    buf_add(&z, za.p, za.len);
    buf_add(&z, zb.p, zb.len);
    buf_add(&z, za.p, za.len);
    char path[] = "/tmp/hscope-reader-cut-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    int recovered = 0, cuts = 0;
    for (size_t cut = 2; cut <= z.len; cut++) { /* 2: the magic, else plain */
        /* every cut near the members' edges, every 37th elsewhere */
        size_t in = cut % za.len;
        if (!(in < 48 || in > za.len - 48 || cut > z.len - 48) && cut % 37)
            continue;
        buf want = { 0 };
        want.p = zlib_oracle(z.p, cut, &want.len);
        /* a cut between members leaves a complete stream */
        int whole = cut == za.len || cut == za.len + zb.len || cut == z.len;
        buf got = read_cut(f, &z, cut, cut % 3 ? -1 : fd, cut % 2 ? 4096 : 1000, !whole);
        assert_int_equal(got.len, want.len);
        if (want.len)
            assert_memory_equal(got.p, want.p, want.len);
        recovered += f->r.tail_len > 0;
        cuts++;
        hscope__reader_close(&f->r);
        free(got.p);
        free(want.p);
    }
    print_message("%d cuts, %d recovered by zlib\n", cuts, recovered);
#ifdef HSCOPE_HAVE_ISAL
    assert_true(recovered > 0);
#else
    assert_int_equal(recovered, 0);
#endif
    close(fd);
    free(z.p);
    free(zb.p);
    free(za.p);
    free(b.p);
    free(a.p);
}

/* The load fails with HSCOPE_ERR_GZIP, and the message names the damage:
 * it contains each of the (up to two) given words. */
static void
expect_gzip_error(fx *f, const buf *z, const char *says, const char *and_says)
{
    hscope_error_init(&f->err);
    assert_int_equal(hscope__reader_open_memory(&f->r, &f->mem, z->p, z->len, 0,
                                                &f->err), HSCOPE_OK);
    buf out = { 0 };
    assert_int_equal(read_all(&f->r, 4096, &out, &f->err), HSCOPE_ERR_GZIP);
    assert_int_equal(f->err.status, HSCOPE_ERR_GZIP);
    print_message("%s\n", f->err.message);
    assert_non_null(strstr(f->err.message, says));
    if (and_says)
        assert_non_null(strstr(f->err.message, and_says));
    hscope__reader_close(&f->r);
    assert_int_equal(atomic_load(&f->mem.used), 0);
    free(out.p);
}

static void
test_gzip_corrupt(void **state)
{
    fx *f = *state;
    buf text = make_text(100 * 1024);
    buf z = gz(text.p, text.len);
    buf bad = { 0 };
    /* first deflate block header: BFINAL=1, BTYPE=11 (reserved) */
    buf_add(&bad, z.p, z.len);
    bad.p[10] = 0x07;
    expect_gzip_error(f, &bad, "corrupt gzip data at compressed byte", "invalid block type");
    /* wrong CRC in the trailer */
    bad.len = 0;
    buf_add(&bad, z.p, z.len);
    bad.p[z.len - 8] ^= 0x55;
    expect_gzip_error(f, &bad, "incorrect data check", NULL);
    /* wrong ISIZE in the trailer */
    bad.len = 0;
    buf_add(&bad, z.p, z.len);
    bad.p[z.len - 1] ^= 0x01; /* zlib: "length check"; ISA-L: "(CRC-32 or length)" */
    expect_gzip_error(f, &bad, "incorrect ", "length");
    /* garbage after a complete member */
    bad.len = 0;
    buf_add(&bad, z.p, z.len);
    buf_add(&bad, "garbage", 7);
    expect_gzip_error(f, &bad, "unexpected data after gzip member at compressed byte", NULL);
    /* bad header: unknown compression method */
    bad.len = 0;
    buf_add(&bad, z.p, z.len);
    bad.p[2] = 9;
    expect_gzip_error(f, &bad, "unknown compression method", NULL);
    free(bad.p);
    free(z.p);
    free(text.p);
}

/* no_gzip: compressed input is returned as it is. */
static void
test_no_gzip(void **state)
{
    fx *f = *state;
    buf text = make_text(50 * 1024);
    buf z = gz(text.p, text.len);
    check_memory(f, &z, 1, 1000, z.p, z.len, 0);
    free(z.p);
    free(text.p);
}

/* ------------------------------------------------------------------ */
/* Path and fd sources                                                  */
/* ------------------------------------------------------------------ */

static void
check_path(fx *f, const char *path, const buf *want, int is_gzip, uint64_t size)
{
    hscope_error_init(&f->err);
    assert_int_equal(hscope__reader_open_path(&f->r, &f->mem, path, 0, &f->err),
                     HSCOPE_OK);
    assert_int_equal(f->r.gzip, is_gzip);
    assert_int_equal(f->r.total, size);
    buf out = { 0 };
    assert_int_equal(read_all(&f->r, 10000, &out, &f->err), HSCOPE_OK);
    assert_int_equal(out.len, want->len);
    assert_memory_equal(out.p, want->p, want->len);
    assert_int_equal(f->r.in_bytes, size);
    assert_int_equal(f->r.truncated, 0);
    hscope__reader_close(&f->r);
    free(out.p);
}

static void
test_path(void **state)
{
    fx *f = *state;
    buf text = make_text(700 * 1024);
    buf z = gz(text.p, text.len);
    char *plain = temp_file(text.p, text.len);
    char *zipped = temp_file(z.p, z.len);
    check_path(f, plain, &text, 0, text.len);
    check_path(f, zipped, &text, 1, z.len);
    unlink(plain);
    unlink(zipped);
    free(plain);
    free(zipped);
    free(z.p);
    free(text.p);
}

/* An fd is read from its current position to EOF, and not closed. */
static void
test_fd(void **state)
{
    fx *f = *state;
    buf text = make_text(300 * 1024);
    char *path = temp_file(text.p, text.len);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(lseek(fd, 100, SEEK_SET), 100);
    assert_int_equal(hscope__reader_open_fd(&f->r, &f->mem, fd, 0, &f->err), HSCOPE_OK);
    assert_int_equal(f->r.total, text.len - 100);
    buf out = { 0 };
    assert_int_equal(read_all(&f->r, 5000, &out, &f->err), HSCOPE_OK);
    assert_int_equal(out.len, text.len - 100);
    assert_memory_equal(out.p, text.p + 100, out.len);
    hscope__reader_close(&f->r);
    assert_true(fcntl(fd, F_GETFD) != -1); /* still open */
    close(fd);
    /* a gzip file through an fd */
    buf z = gz(text.p, text.len);
    char *zpath = temp_file(z.p, z.len);
    fd = open(zpath, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(hscope__reader_open_fd(&f->r, &f->mem, fd, 0, &f->err), HSCOPE_OK);
    assert_int_equal(f->r.gzip, 1);
    out.len = 0;
    assert_int_equal(read_all(&f->r, 5000, &out, &f->err), HSCOPE_OK);
    assert_int_equal(out.len, text.len);
    assert_memory_equal(out.p, text.p, text.len);
    hscope__reader_close(&f->r);
    assert_true(fcntl(fd, F_GETFD) != -1);
    close(fd);
    unlink(path);
    unlink(zpath);
    free(path);
    free(zpath);
    free(out.p);
    free(z.p);
    free(text.p);
}

typedef struct writer {
    int fd;
    const buf *data;
} writer;

/* Writes the first byte alone, pauses, then the rest: the reader must
 * top up a one-byte first read before it sniffs the gzip magic. */
static void *
slow_writer(void *arg)
{
    writer *w = arg;
    const unsigned char *p = w->data->p;
    size_t left = w->data->len;
    if (write(w->fd, p, 1) != 1)
        return NULL;
    p++;
    left--;
    usleep(50 * 1000);
    while (left) {
        ssize_t n = write(w->fd, p, left > 1000 ? 1000 : left);
        if (n <= 0)
            break;
        p += n;
        left -= (size_t)n;
    }
    close(w->fd);
    return NULL;
}

static void
test_pipe_gzip(void **state)
{
    fx *f = *state;
    buf text = make_text(200 * 1024);
    buf z = gz(text.p, text.len);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    writer w = { pfd[1], &z };
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, slow_writer, &w), 0);
    assert_int_equal(hscope__reader_open_fd(&f->r, &f->mem, pfd[0], 0, &f->err), HSCOPE_OK);
    assert_int_equal(f->r.gzip, 1);
    assert_int_equal(f->r.total, 0); /* unknown for a pipe */
    buf out = { 0 };
    assert_int_equal(read_all(&f->r, 3000, &out, &f->err), HSCOPE_OK);
    pthread_join(th, NULL);
    assert_int_equal(out.len, text.len);
    assert_memory_equal(out.p, text.p, text.len);
    assert_int_equal(f->r.in_bytes, z.len);
    hscope__reader_close(&f->r);
    close(pfd[0]);
    free(out.p);
    free(z.p);
    free(text.p);
}

static void
test_nonexistent_path(void **state)
{
    fx *f = *state;
    const char *path = "/nonexistent-heapscope-dir/heap.json";
    assert_int_equal(hscope__reader_open_path(&f->r, &f->mem, path, 0, &f->err),
                     HSCOPE_ERR_IO);
    assert_int_equal(f->err.status, HSCOPE_ERR_IO);
    assert_int_equal(f->err.sys_errno, ENOENT);
    assert_non_null(strstr(f->err.message, path));
    hscope__reader_close(&f->r);
    hscope_error_init(&f->err);
    assert_int_equal(hscope__reader_open_path(&f->r, &f->mem, NULL, 0, &f->err),
                     HSCOPE_ERR_INVALID_ARG);
}

static void
test_directory(void **state)
{
    fx *f = *state;
    assert_int_equal(hscope__reader_open_path(&f->r, &f->mem, "/", 0, &f->err),
                     HSCOPE_ERR_IO);
    assert_int_equal(f->err.status, HSCOPE_ERR_IO);
    hscope__reader_close(&f->r);
    int fd = open("/", O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    hscope_error_init(&f->err);
    assert_int_equal(hscope__reader_open_fd(&f->r, &f->mem, fd, 0, &f->err), HSCOPE_ERR_IO);
    hscope__reader_close(&f->r);
    close(fd);
}

static void
test_bad_fd(void **state)
{
    fx *f = *state;
    assert_int_equal(hscope__reader_open_fd(&f->r, &f->mem, -1, 0, &f->err),
                     HSCOPE_ERR_INVALID_ARG);
    hscope__reader_close(&f->r);
    /* a descriptor number that is not open: the read fails with EBADF */
    int fd = open("/dev/null", O_RDONLY);
    assert_true(fd >= 0);
    close(fd);
    hscope_error_init(&f->err);
    assert_int_equal(hscope__reader_open_fd(&f->r, &f->mem, fd, 0, &f->err), HSCOPE_ERR_IO);
    assert_int_equal(f->err.sys_errno, EBADF);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_plain_memory),
        T(test_plain_not_gzip),
        T(test_empty_memory),
        T(test_zero_cap_read),
        T(test_gzip_small_reads),
        T(test_gzip_members),
        T(test_gzip_truncated),
        T(test_gzip_cut_everywhere),
        T(test_gzip_corrupt),
        T(test_no_gzip),
        T(test_path),
        T(test_fd),
        T(test_pipe_gzip),
        T(test_nonexistent_path),
        T(test_directory),
        T(test_bad_fd),
        T(test_bug_null_empty_memory), /* last: see the comment */
    };
#undef T
    return cmocka_run_group_tests_name("reader", tests, NULL, NULL);
}
