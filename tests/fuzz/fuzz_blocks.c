/*
 * fuzz_blocks.c - white-box libFuzzer target for the parallel parser's
 * block mode (src/parse/parallel.c): each worker reads the lines that
 * start in its own block of the input, so every way a line can fall on,
 * before, across or after block boundaries must give the result of reading
 * in order.
 *
 * The first three bytes choose the options, the rest is the input:
 *   byte 0: bit 0x01 strict; bits 0x06 max_line_bytes: default, 2 blocks,
 *           2 blocks + 37, 64 KiB (at least 2 blocks); bit 0x08 3 threads
 *           instead of 2
 *   bytes 1-2: block size 1 + (little-endian value % 4096), raised so that
 *           no run has more than 300 blocks
 * The input is parsed from memory by hscope__parse_stream (one thread, in
 * order: the reference) and by hscope__parse_parallel in blocks; the
 * outcome (status, error line, byte, message) and, on success, the whole
 * builder as text (tests/builder_text.h) must be equal, and the parallel
 * run must have used block mode.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/io/reader.h"
#include "src/parse/parse.h"
#include "tests/builder_text.h"
#include "tests/watchdog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fail(const char *what, const text *a, const text *b)
{
    fprintf(stderr, "fuzz_blocks invariant violated: %s\n", what);
    if (a && b) {
        size_t i = 0;
        while (i < a->len && i < b->len && a->p[i] == b->p[i])
            i++;
        size_t from = i > 80 ? i - 80 : 0;
        fprintf(stderr, "in order: ...%.200s\nblocks:   ...%.200s\n", a->p + from,
                b->p + from);
    }
    fflush(stderr);
    abort();
}

typedef struct result {
    hscope_status st;
    hscope_error err;
    uint64_t blocks;
    text out;
} result;

static void
parse(result *R, const uint8_t *in, size_t len, unsigned threads, uint64_t block, int strict,
      uint64_t max_line)
{
    memset(R, 0, sizeof(*R));
    hscope_error_init(&R->err);
    hscope__mem mem;
    hscope__mem_init(&mem, NULL, 0);
    hscope__builder b;
    hscope__reader r;
    if ((R->st = hscope__builder_init(&b, &mem, 1, 0, &R->err)) != HSCOPE_OK)
        fail("builder_init", NULL, NULL);
    if ((R->st = hscope__reader_open_memory(&r, &mem, in, len, 1, &R->err)) != HSCOPE_OK)
        fail("reader_open_memory", NULL, NULL);
    hscope__parse_opts o;
    memset(&o, 0, sizeof(o));
    o.strict = strict;
    o.max_line = max_line;
    o.block_bytes = block;
    R->st = threads ? hscope__parse_parallel(&r, &b, &o, threads, &R->err)
                    : hscope__parse_stream(&r, &b, &o, &R->err);
    R->blocks = b.blocks;
    if (R->st == HSCOPE_OK)
        describe(&R->out, &b);
    hscope__reader_close(&r);
    hscope__builder_free(&b);
    if (mem.used != 0)
        fail("memory left allocated", NULL, NULL);
}

static int
one_input(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    uint8_t sel = data[0];
    uint64_t block = 1 + ((uint64_t)data[1] | (uint64_t)data[2] << 8) % 4096;
    const uint8_t *in = data + 3;
    size_t len = size - 3;
    if (len / block > 300)
        block = len / 300 + 1;
    int strict = sel & 1;
    uint64_t limits[4] = { 0, 2 * block, 2 * block + 37, 65536 };
    uint64_t max_line = limits[(sel >> 1) & 3];
    if (max_line && max_line < 2 * block)
        max_line = 2 * block;
    unsigned threads = sel & 8 ? 3 : 2;

    result a, b;
    parse(&a, in, len, 0, 0, strict, max_line);
    parse(&b, in, len, threads, block, strict, max_line);
    if (len && b.st == HSCOPE_OK && b.blocks != len / block + (len % block != 0))
        fail("block mode not used, or a block not merged", NULL, NULL);
    if (a.st != b.st || a.err.status != b.err.status || a.err.line != b.err.line ||
        a.err.offset != b.err.offset || strcmp(a.err.message, b.err.message) != 0) {
        fprintf(stderr, "in order: %d line %llu byte %llu '%s'\nblocks:   %d line %llu byte %llu '%s'\n",
                a.st, (unsigned long long)a.err.line, (unsigned long long)a.err.offset,
                a.err.message, b.st, (unsigned long long)b.err.line,
                (unsigned long long)b.err.offset, b.err.message);
        fail("different outcome", NULL, NULL);
    }
    if (a.out.len != b.out.len || (a.out.len && memcmp(a.out.p, b.out.p, a.out.len) != 0))
        fail("different results", &a.out, &b.out);
    free(a.out.p);
    free(b.out.p);
    return 0;
}

/* Under the watchdog (tests/watchdog.h): an input still running after 20 s
 * (libFuzzer's -timeout in scripts/fuzz.sh is 25 s) prints every thread's
 * stack, not only the main thread's, and aborts. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wd_arm(20, "fuzz_blocks: an input of %zu bytes", size);
    int r = one_input(data, size);
    wd_disarm();
    return r;
}
