/*
 * fuzz_parse.c - libFuzzer target: the whole loading path from a memory
 * buffer (reader, line loop or parallel parser, record decoder, model,
 * index), then every accessor, the bulk columns, the reverse references
 * and every tally key on the result.
 *
 * The input is the dump itself.  Its LAST byte also picks the options of
 * the later loads (it stays part of the dump, so seeds remain plain dump
 * lines; a seed ending in '\n' gets VALUES and a 256-byte line limit):
 *
 *   0x01 NO_GZIP          0x02 VALUES           0x04 max_references = 2
 *   0x08|0x20 max_line_bytes: none, 256, 40, 4096 (bit 0x08 is the low bit)
 *   0x10 inject allocation failures (load D; from the call number given
 *        by the second-to-last byte)
 *   0x40 max_objects = 3  0x80 tallies sorted by memsize, top 2
 *
 * Loads, each checked with fz_walk() (fuzz_check.c), all through the
 * counting allocator of fuzz_check.c (a block left behind is a leak):
 *   A  default options (threads: the library's choice; parallel for gzip)
 *   B  the selected options, lenient, 1 thread
 *   C  the selected options + HSCOPE_LOAD_STRICT, 1 thread
 *   E, F  (with a line limit) B and C again with 3 parser threads: the
 *      line limit is also the chunk size, so the input is cut into many
 *      chunks, parsed out of order and merged
 *   G  (with a line limit) the streaming fold, hscope_tally_file(), with 1
 *      and 3 threads, lenient and strict: same outcome, error place, rows
 *   D  (0x10) like B with an allocator that fails from the Nth call on
 *      (1 or 2 threads, from the same byte)
 * and across loads: C succeeds => B succeeds with the same counts and
 * nothing skipped; B clean (no skip, not truncated) => C succeeds; the
 * limits only ever remove records (B vs A); E gives exactly B's heap and F
 * fails (or not) exactly as C, at the same line and offset; D either
 * matches B or fails with HSCOPE_ERR_NOMEM (or B's own error), leaking
 * nothing.
 *
 * SPDX-License-Identifier: MIT
 */
#include <unistd.h>

#include "fuzz_check.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
one_input(const uint8_t *data, size_t size)
{
    uint8_t sel = size ? data[size - 1] : 0;
    hscope_load_options o;
    fz_options(sel, &o);
    o.threads = 1;
    int values = (o.flags & HSCOPE_LOAD_VALUES) != 0;
    int gzip_magic = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    int limits = o.max_line_bytes || o.max_references || o.max_objects;

    /* A: default options; only the allocator hooks are set (to count
     * blocks and recycle the big buffers, see fuzz_check.c) */
    fz_alloc aa;
    fz_alloc_init(&aa, 0);
    fz_result a;
    fz_load(&a, data, size, NULL, &aa);
    if (a.heap) {
        fz_walk(a.heap, &a, 0, sel >> 7, &aa);
        FZ_CHECK(a.stats.input_bytes == size, "A: input_bytes != input size");
        FZ_CHECK(a.stats.gzip == (uint32_t)gzip_magic, "A: gzip detection");
        if (!gzip_magic)
            FZ_CHECK(a.stats.bytes == size, "A: bytes != input size (plain)");
    }
    FZ_CHECK(a.st == HSCOPE_OK || a.st == HSCOPE_ERR_NOT_A_DUMP ||
                 (gzip_magic && (a.st == HSCOPE_ERR_GZIP)),
             "A: a lenient load failed for another reason than no records");

    /* B: selected options, lenient */
    fz_alloc ab;
    fz_alloc_init(&ab, 0);
    fz_result b;
    fz_load(&b, data, size, &o, &ab);
    if (b.heap)
        fz_walk(b.heap, &b, values, sel >> 7, &ab);

    /* C: selected options, strict */
    hscope_load_options os = o;
    os.flags |= HSCOPE_LOAD_STRICT;
    fz_alloc ac;
    fz_alloc_init(&ac, 0);
    fz_result c;
    fz_load(&c, data, size, &os, &ac);
    if (c.heap) {
        fz_walk(c.heap, &c, values, sel >> 7, &ac);
        FZ_CHECK(c.stats.skipped_lines == 0, "C: strict load skipped lines");
        FZ_CHECK(b.heap != NULL, "C: strict load succeeded where lenient failed");
        fz_same_stats(&b.stats, &c.stats, "B/C: strict and lenient loads differ");
    } else {
        FZ_CHECK(c.st != HSCOPE_ERR_NOMEM, "C: NOMEM without injected failures");
    }
    if (b.heap && b.stats.skipped_lines == 0 && !b.stats.truncated)
        FZ_CHECK(c.heap != NULL, "C: strict load failed on an input lenient found clean");

    /* B against A: the limits only remove records, never lines (also from
     * a truncated gzip stream: corpus/fuzz_parse/crash-gzip-drain.gz) */
    if (a.heap && b.heap) {
        int same_gzip = !gzip_magic || !(o.flags & HSCOPE_LOAD_NO_GZIP);
        if (same_gzip) {
            FZ_CHECK(b.stats.bytes == a.stats.bytes, "A/B: different bytes parsed");
            FZ_CHECK(b.stats.lines == a.stats.lines, "A/B: different line counts");
            FZ_CHECK(b.stats.objects <= a.stats.objects, "A/B: limits added objects");
            FZ_CHECK(b.stats.skipped_lines >= a.stats.skipped_lines,
                     "A/B: limits skipped fewer lines");
            if (!limits) {
                fz_same_stats(&a.stats, &b.stats, "A/B: VALUES changed the counts");
                fz_same_skips(a.heap, b.heap, "A/B: VALUES changed the skips");
            }
        }
    }
    if (b.heap && o.max_objects)
        FZ_CHECK(b.stats.objects <= o.max_objects, "B: more objects than max_objects");

    /* E, F: the parallel parser on small chunks must match B and C */
    if (o.max_line_bytes) {
        hscope_load_options op = o;
        op.threads = 3;
        fz_alloc ae;
        fz_alloc_init(&ae, 0);
        fz_result e;
        fz_load(&e, data, size, &op, &ae);
        fz_same_failure(&b, &e, "B/E: 1 and 3 threads disagree on the outcome");
        if (e.heap) {
            fz_walk(e.heap, &e, values, sel >> 7, &ae);
            fz_same_heap(b.heap, e.heap, "B/E: 1 and 3 threads give different heaps");
        }
        fz_release(&e, &ae);

        op.flags |= HSCOPE_LOAD_STRICT;
        fz_alloc af;
        fz_alloc_init(&af, 0);
        fz_result f;
        fz_load(&f, data, size, &op, &af);
        fz_same_failure(&c, &f, "C/F: 1 and 3 threads disagree on the strict outcome");
        if (f.heap)
            fz_same_heap(c.heap, f.heap, "C/F: 1 and 3 threads give different heaps");
        fz_release(&f, &af);
    }

    /* G: the streaming fold (hscope_tally_file) on 1 and on 3 parser
     * threads (small chunks, handed to the sink in order by the merging
     * thread) must agree on the outcome and on every row */
    if (o.max_line_bytes) {
        char path[64];
        snprintf(path, sizeof(path), "/tmp/hscope-fuzz-parse-%d.json", (int)getpid());
        FILE *fp = fopen(path, "wb");
        if (fp) {
            size_t wrote = fwrite(data, 1, size, fp);
            int ok = fclose(fp) == 0 && wrote == size;
            for (int strict = 0; ok && strict < 2; strict++) {
                hscope_load_options og = o;
                og.allocator = NULL;
                if (strict)
                    og.flags |= HSCOPE_LOAD_STRICT;
                hscope_tally_t *t[2] = { NULL, NULL };
                hscope_error ge[2] = { HSCOPE_ERROR_INIT, HSCOPE_ERROR_INIT };
                hscope_status gs[2];
                for (int k = 0; k < 2; k++) {
                    og.threads = k ? 3 : 1;
                    gs[k] = hscope_tally_file(&t[k], path, "file:line:class", &og, NULL, &ge[k]);
                }
                FZ_CHECK(gs[0] == gs[1], "G: 1 and 3 threads disagree on the fold's outcome");
                if (gs[0] != HSCOPE_OK && gs[0] == gs[1])
                    FZ_CHECK(ge[0].line == ge[1].line && ge[0].offset == ge[1].offset,
                             "G: 1 and 3 threads report the fold's error at different places");
                if (t[0] && t[1]) {
                    uint64_t nr = hscope_tally_row_count(t[0]);
                    FZ_CHECK(hscope_tally_row_count(t[1]) == nr, "G: fold row counts differ");
                    for (uint64_t r = 0; r < nr && r < hscope_tally_row_count(t[1]); r++) {
                        FZ_CHECK(strcmp(hscope_tally_row_key(t[0], r), hscope_tally_row_key(t[1], r)) == 0 &&
                                     hscope_tally_row_count_of(t[0], r) == hscope_tally_row_count_of(t[1], r) &&
                                     hscope_tally_row_memsize(t[0], r) == hscope_tally_row_memsize(t[1], r),
                                 "G: fold rows differ between 1 and 3 threads");
                    }
                }
                hscope_tally_free(t[0]);
                hscope_tally_free(t[1]);
            }
        }
        unlink(path);
    }

    /* D: allocation failure injection */
    if ((sel & 0x10) && b.st != HSCOPE_ERR_NOMEM) {
        uint64_t nth = size >= 2 ? (uint64_t)data[size - 2] + 1 : 1;
        hscope_load_options od = o;
        od.threads = (nth & 1) ? 1 : 2;
        fz_alloc ad;
        fz_alloc_init(&ad, nth);
        fz_result d;
        fz_load(&d, data, size, &od, &ad);
        if (d.heap) {
            FZ_CHECK(b.heap != NULL, "D: succeeded where B failed");
            fz_same_stats(&b.stats, &d.stats, "B/D: counts differ");
            fz_walk(d.heap, &d, values, sel >> 7, &ad);
            fz_release(&d, &ad);
        } else {
            FZ_CHECK(d.st == HSCOPE_ERR_NOMEM || d.st == b.st,
                     "D: failed with another error than NOMEM or B's");
        }
        FZ_CHECK(ad.live == 0, "D: leaked");
    }

    fz_release(&c, &ac);
    fz_release(&b, &ab);
    fz_release(&a, &aa);
    return 0;
}

/* Under the watchdog (tests/watchdog.h): an input still running after 20 s
 * (libFuzzer's -timeout in scripts/fuzz.sh is 25 s) prints every thread's
 * stack, not only the main thread's, and aborts. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wd_arm(20, "fuzz_parse: an input of %zu bytes", size);
    int r = one_input(data, size);
    wd_disarm();
    return r;
}
