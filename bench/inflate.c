/*
 * inflate.c - zlib or ISA-L for gzip dumps?  A faster inflater goes
 * behind the same reader interface only if it is a Debian package and
 * measurably better: this measures it before it is added.
 *
 * Usage: build/bench/inflate FILE.gz [RUNS]
 *
 * Inflates FILE.gz with each library the way src/io/reader.c does (reads of
 * 256 KiB of compressed input, 1 MiB of output at a time, members one after
 * the other), RUNS times each, interleaved, and prints the best time of
 * each, the speed over the uncompressed bytes and the ratio.  A first,
 * untimed round checks that the outputs are the same bytes (length and
 * CRC-32); if not, it exits 1.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <isa-l/igzip_lib.h>
#include <zlib.h>

#define IN_BYTES (256u << 10)
#define OUT_BYTES (1u << 20)

typedef struct result {
    uint64_t bytes;
    uLong crc;
    double secs;
} result;

static double
now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
die(const char *what)
{
    fprintf(stderr, "inflate: %s\n", what);
    exit(2);
}

static int checking; /* the untimed first round: CRC the output */

static void
take(result *r, const unsigned char *out, size_t n)
{
    r->bytes += n;
    if (checking)
        r->crc = crc32(r->crc, out, (uInt)n);
}

static result
with_zlib(int fd, unsigned char *in, unsigned char *out)
{
    result r = { 0, crc32(0, NULL, 0), 0 };
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        die("inflateInit2 failed");
    ssize_t n;
    while ((n = read(fd, in, IN_BYTES)) > 0) {
        z.next_in = in;
        z.avail_in = (uInt)n;
        while (z.avail_in > 0) {
            z.next_out = out;
            z.avail_out = OUT_BYTES;
            int zr = inflate(&z, Z_NO_FLUSH);
            take(&r, out, OUT_BYTES - z.avail_out);
            if (zr == Z_STREAM_END)
                inflateReset(&z); /* the next member, if any */
            else if (zr != Z_OK && zr != Z_BUF_ERROR)
                die("zlib: corrupt data");
            else if (z.avail_out != 0)
                break; /* all of this input used */
        }
    }
    for (;;) { /* output that did not fit the last buffer */
        z.next_in = in;
        z.avail_in = 0;
        z.next_out = out;
        z.avail_out = OUT_BYTES;
        int zr = inflate(&z, Z_NO_FLUSH);
        take(&r, out, OUT_BYTES - z.avail_out);
        if (zr != Z_OK || z.avail_out != 0)
            break;
    }
    inflateEnd(&z);
    return r;
}

static result
with_isal(int fd, unsigned char *in, unsigned char *out)
{
    result r = { 0, crc32(0, NULL, 0), 0 };
    struct inflate_state *s = malloc(sizeof(*s));
    if (!s)
        die("out of memory");
    isal_inflate_init(s);
    s->crc_flag = ISAL_GZIP;
    ssize_t n;
    int done = 0;
    while ((n = read(fd, in, IN_BYTES)) > 0) {
        s->next_in = in;
        s->avail_in = (uint32_t)n;
        while (s->avail_in > 0) {
            if (done) { /* the next member */
                isal_inflate_reset(s);
                s->crc_flag = ISAL_GZIP;
                done = 0;
            }
            s->next_out = out;
            s->avail_out = OUT_BYTES;
            if (isal_inflate(s) < 0)
                die("ISA-L: corrupt data");
            take(&r, out, OUT_BYTES - s->avail_out);
            done = s->block_state == ISAL_BLOCK_FINISH;
        }
    }
    while (!done) { /* output still held inside */
        s->next_in = in;
        s->avail_in = 0;
        s->next_out = out;
        s->avail_out = OUT_BYTES;
        if (isal_inflate(s) < 0)
            die("ISA-L: corrupt data");
        take(&r, out, OUT_BYTES - s->avail_out);
        done = s->block_state == ISAL_BLOCK_FINISH;
        if (s->avail_out == OUT_BYTES)
            break; /* truncated */
    }
    free(s);
    return r;
}

int
main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: inflate FILE.gz [RUNS]\n");
        return 2;
    }
    int runs = argc == 3 ? atoi(argv[2]) : 3;
    if (runs < 1)
        runs = 1;
    unsigned char *in = malloc(IN_BYTES), *out = malloc(OUT_BYTES);
    if (!in || !out)
        die("out of memory");
    result check[2], best[2] = { { 0, 0, 1e30 }, { 0, 0, 1e30 } };
    for (int i = -1; i < runs; i++) {
        checking = i < 0;
        for (int k = 0; k < 2; k++) {
            int fd = open(argv[1], O_RDONLY);
            if (fd < 0)
                die("cannot open the file");
            double t0 = now();
            result r = k == 0 ? with_zlib(fd, in, out) : with_isal(fd, in, out);
            r.secs = now() - t0;
            close(fd);
            if (checking)
                check[k] = r;
            else if (r.bytes != check[k].bytes)
                die("runs of one library differ");
            else if (r.secs < best[k].secs)
                best[k] = r;
        }
    }
    const char *name[2] = { "zlib", "ISA-L" };
    for (int k = 0; k < 2; k++)
        printf("%-6s %.3f s  %7.0f MB/s  %llu bytes, crc32 %08lx\n", name[k], best[k].secs,
               (double)best[k].bytes / 1e6 / best[k].secs,
               (unsigned long long)check[k].bytes, (unsigned long)check[k].crc);
    int same = check[0].bytes == check[1].bytes && check[0].crc == check[1].crc;
    printf("ISA-L / zlib time: %.2f; outputs %s\n", best[1].secs / best[0].secs,
           same ? "identical" : "DIFFER");
    free(in);
    free(out);
    return same ? 0 : 1;
}
