/*
 * fuzz_gzip.c - libFuzzer target for the gzip reader: the input is a dump,
 * compressed here (zlib deflate with a gzip header, windowBits 31), then
 * optionally damaged, then loaded like fuzz_parse does.
 *
 * The LAST byte of the input (it stays part of the compressed dump) picks
 * what happens to the compressed stream; the second-to-last byte with the
 * low nibble of the last one gives a position P in 0..4095 (scaled to the
 * stream length), the third-to-last byte the XOR mask of a flip:
 *
 *   bits 4-5  0: intact   1: truncated at P   2: byte at P flipped
 *             3: two gzip members, the dump split at P (scaled to the dump)
 *   bits 6-7  deflate level 6, 1, 9, 0 (0 = stored blocks: a flip then
 *             lands in the dump text itself)
 *
 * A seed ending in '\n' is compressed intact at level 6, one ending in ']'
 * is truncated, '"' flipped, '}' split into two members.
 *
 * Loads: the plain dump (NO_GZIP, 1 thread) for reference; the gzip
 * stream with default options (the library picks the threads: parallel
 * for gzip on a multi-core machine), strict, and with VALUES, a 256-byte
 * line limit and 3 threads (small reads, many inflate calls, many chunks)
 * against the plain dump with the same options on 1 thread.
 *
 * Checked: intact or two-member streams give exactly the plain dump's heap;
 * a truncated stream gives a prefix of it and strict mode refuses it;
 * whatever the damage, the bytes and lines recovered do not depend on the
 * line limit (the size of the reads); any stream that loads passes
 * fz_walk().
 *
 * SPDX-License-Identifier: MIT
 */
#include <zlib.h>

#include "fuzz_check.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { INTACT, TRUNCATE, FLIP, TWO_MEMBERS };

/* Append a gzip member of src to *out (grown with realloc). */
static int
gz_member(const uint8_t *src, size_t n, int level, uint8_t **out, size_t *len)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    size_t bound = deflateBound(&z, (uLong)n) + 32;
    uint8_t *p = realloc(*out, *len + bound);
    if (!p) {
        deflateEnd(&z);
        return -1;
    }
    *out = p;
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = p + *len;
    z.avail_out = (uInt)bound;
    int zr = deflate(&z, Z_FINISH);
    *len += bound - z.avail_out;
    deflateEnd(&z);
    return zr == Z_STREAM_END ? 0 : -1;
}

static int
one_input(const uint8_t *data, size_t size)
{
    static const int levels[4] = { 6, 1, 9, 0 };
    if (size > ((size_t)1 << 20))
        return 0; /* keep deflate cheap; -max_len is far below anyway */
    uint8_t sel = size ? data[size - 1] : 0;
    int mode = (sel >> 4) & 3, level = levels[sel >> 6];
    uint32_t pos12 = ((size >= 2 ? (uint32_t)data[size - 2] : 0) << 4) | (sel & 0x0f);
    uint8_t mask = size >= 3 ? (uint8_t)(data[size - 3] | 1) : 0xff;

    uint8_t *gz = NULL;
    size_t glen = 0;
    if (mode == TWO_MEMBERS) {
        size_t split = (size_t)((uint64_t)pos12 * size / 4096);
        FZ_CHECK(gz_member(data, split, level, &gz, &glen) == 0 &&
                     gz_member(data + split, size - split, level, &gz, &glen) == 0,
                 "harness: deflate failed");
    } else {
        FZ_CHECK(gz_member(data, size, level, &gz, &glen) == 0, "harness: deflate failed");
    }
    size_t full = glen;
    size_t at = (size_t)((uint64_t)pos12 * glen / 4096); /* < glen */
    if (mode == TRUNCATE)
        glen = at;
    else if (mode == FLIP)
        gz[at] ^= mask;

    /* P: the plain dump, for reference */
    hscope_load_options po;
    hscope_load_options_init(&po);
    po.flags = HSCOPE_LOAD_NO_GZIP;
    po.threads = 1;
    fz_alloc ap;
    fz_alloc_init(&ap, 0);
    fz_result p;
    fz_load(&p, data, size, &po, &ap);
    if (p.heap)
        fz_walk(p.heap, &p, 0, 0, &ap);

    /* Z: the gzip stream, default options, counting allocator */
    fz_alloc az;
    fz_alloc_init(&az, 0);
    fz_result z;
    fz_load(&z, gz, glen, NULL, &az);
    if (z.heap) {
        fz_walk(z.heap, &z, 0, sel >> 6, &az);
        FZ_CHECK(z.stats.input_bytes == glen, "Z: input_bytes != compressed size");
    }

    /* S: strict */
    hscope_load_options so;
    hscope_load_options_init(&so);
    so.flags = HSCOPE_LOAD_STRICT;
    fz_alloc as;
    fz_alloc_init(&as, 0);
    fz_result s;
    fz_load(&s, gz, glen, &so, &as);
    if (s.heap) {
        fz_walk(s.heap, &s, 0, 0, &as);
        FZ_CHECK(z.heap != NULL, "S: strict load succeeded where lenient failed");
        fz_same_stats(&z.stats, &s.stats, "Z/S: strict and lenient loads differ");
    }

    /* V / PV: VALUES and a 256-byte line limit, gzip and plain */
    hscope_load_options vo;
    hscope_load_options_init(&vo);
    vo.flags = HSCOPE_LOAD_VALUES;
    vo.max_line_bytes = 256;
    vo.threads = 3; /* the line limit is also the chunk size: many chunks */
    fz_alloc av;
    fz_alloc_init(&av, 0);
    fz_result v;
    fz_load(&v, gz, glen, &vo, &av);
    if (v.heap)
        fz_walk(v.heap, &v, 1, 0, &av);
    vo.flags |= HSCOPE_LOAD_NO_GZIP;
    vo.threads = 1;
    fz_alloc apv;
    fz_alloc_init(&apv, 0);
    fz_result pv;
    fz_load(&pv, data, size, &vo, &apv);
    if (pv.heap)
        fz_walk(pv.heap, &pv, 1, 0, &apv);

    /* Whatever the damage, the bytes recovered from the stream must not
     * depend on the reads' sizes (default: a 4 MiB line buffer; V: 256),
     * a truncated stream included (corpus/fuzz_gzip/crash-gzip-drain.json). */
    FZ_CHECK((z.st == HSCOPE_ERR_GZIP) == (v.st == HSCOPE_ERR_GZIP),
             "Z/V: corrupt gzip detected with one line limit only");
    if (z.heap && v.heap) {
        FZ_CHECK(z.stats.bytes == v.stats.bytes, "Z/V: bytes inflated depend on the line limit");
        FZ_CHECK(z.stats.lines == v.stats.lines, "Z/V: lines depend on the line limit");
        /* a last line too long to read (V's 256-byte limit) cannot be
         * judged complete or cut, so only compare when V read every line */
        if (hscope_heap_skipped(v.heap, HSCOPE_SKIP_TOO_LONG) == 0)
            FZ_CHECK(z.stats.truncated == v.stats.truncated, "Z/V: truncation verdicts differ");
    }

    if (mode == INTACT || mode == TWO_MEMBERS) {
        FZ_CHECK(z.st == p.st, "Z/P: gzip and plain loads disagree on success");
        FZ_CHECK(v.st == pv.st, "V/PV: gzip and plain loads disagree on success");
        if (z.heap) {
            FZ_CHECK(z.stats.gzip == 1, "Z: gzip not detected");
            fz_same_heap(p.heap, z.heap, "Z/P: gzip and plain give different heaps");
        }
        if (v.heap)
            fz_same_heap(pv.heap, v.heap, "V/PV: gzip (3 threads) and plain give different heaps");
    } else if (mode == TRUNCATE && glen < full) {
        FZ_CHECK(s.heap == NULL, "S: strict load accepted a truncated gzip stream");
        if (z.heap && z.stats.gzip) {
            FZ_CHECK(z.stats.truncated == 1, "Z: truncated stream not reported");
            if (p.heap) {
                FZ_CHECK(z.stats.bytes <= p.stats.bytes, "Z: more bytes than the dump");
                FZ_CHECK(z.stats.lines <= p.stats.lines, "Z: more lines than the dump");
                /* the cut last line may parse on its own where the whole
                 * line did not (a record followed by junk: the cut drops
                 * the junk), so one object more is possible */
                FZ_CHECK(z.stats.objects <= p.stats.objects + 1, "Z: more objects than the dump");
            }
        }
    }

    fz_release(&pv, &apv);
    fz_release(&v, &av);
    fz_release(&s, &as);
    fz_release(&z, &az);
    fz_release(&p, &ap);
    free(gz);
    return 0;
}

/* Under the watchdog (tests/watchdog.h): an input still running after 20 s
 * (libFuzzer's -timeout in scripts/fuzz.sh is 25 s) prints every thread's
 * stack, not only the main thread's, and aborts. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wd_arm(20, "fuzz_gzip: an input of %zu bytes", size);
    int r = one_input(data, size);
    wd_disarm();
    return r;
}
