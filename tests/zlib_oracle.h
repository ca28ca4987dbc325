/*
 * zlib_oracle.h - zlib on its own, for the tests: what it inflates from a
 * gzip stream of one or more members, cut anywhere (the independent oracle
 * that the reader's truncated-stream tests compare with:
 * tests/unit/test_reader.c, tests/api/test_hostile.c), and one gzip member
 * of some bytes (gzip_bytes).  Needs <cmocka.h> (and what it needs) first.
 */
#ifndef HSCOPE_TEST_ZLIB_ORACLE_H
#define HSCOPE_TEST_ZLIB_ORACLE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The bytes zlib inflates from z[0, zlen), with Z_SYNC_FLUSH (all it can):
 * malloc'd, *len of them, never NULL. */
static inline unsigned char *
zlib_oracle(const unsigned char *z, size_t zlen, size_t *len)
{
    z_stream s;
    memset(&s, 0, sizeof(s));
    assert_int_equal(inflateInit2(&s, 15 + 32), Z_OK);
    size_t cap = 65536;
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    *len = 0;
    s.next_in = (Bytef *)(uintptr_t)z;
    s.avail_in = (uInt)zlen;
    for (;;) {
        if (cap - *len < 8192) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        s.next_out = out + *len;
        s.avail_out = (uInt)(cap - *len);
        uInt room = s.avail_out;
        int r = inflate(&s, Z_SYNC_FLUSH);
        *len += room - s.avail_out;
        if (r == Z_STREAM_END && s.avail_in > 0) { /* the next member */
            assert_int_equal(inflateReset(&s), Z_OK);
            continue;
        }
        if (r == Z_STREAM_END || (r == Z_BUF_ERROR && s.avail_out == room))
            break;
        assert_true(r == Z_OK || r == Z_BUF_ERROR);
    }
    inflateEnd(&s);
    return out;
}

/* One gzip member of data[0, len) (malloc'd, *out_len bytes). */
static inline unsigned char *
gzip_bytes(const void *data, size_t len, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)len) + 64;
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

#endif
