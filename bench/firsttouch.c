/*
 * firsttouch.c - what this machine charges for memory a process touches
 * for the first time, against memory it touches again.
 *
 *   firsttouch [MIB] [ROUNDS]      (default 64 MiB, 3 rounds)
 *
 * Each round maps MIB MiB of anonymous memory the way the library maps its
 * big blocks (on a 2 MiB boundary, marked MADV_HUGEPAGE), writes every
 * byte (first touch: the kernel finds and zeroes the pages), writes every
 * byte again (a plain memory write), and unmaps it; then maps a block of
 * the same size again at once and writes it (fresh to the process, but
 * pages the kernel was just given back).  One JSON object per round:
 *
 *   first_ms_per_mib     first touch of the first block, ms per MiB
 *   again_ms_per_mib     the second write of the same block
 *   remapped_ms_per_mib  first touch of the block mapped after it
 *
 * On bare metal the first touch costs about the zeroing, a few times the
 * plain write.  On the development VMs a first touch can cost 15-20x the
 * remapped one: the guest hands memory it does not use back to the host
 * (free page reporting), and touching it again makes the host fault it
 * in.  Which is the case varies from run to run, and it is the part of a
 * load's kernel time that moves with the machine (bench/README.md, "Where
 * the kernel time goes").  Nothing here uses the library.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define HUGE_SZ ((size_t)2 << 20)

static double
now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* len bytes on a 2 MiB boundary (raw, rawlen: what to unmap), or NULL. */
static unsigned char *
map_block(size_t len, void **raw, size_t *rawlen)
{
    *rawlen = len + HUGE_SZ;
    unsigned char *r = mmap(NULL, *rawlen, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return NULL;
    *raw = r;
    unsigned char *b =
        (unsigned char *)(((uintptr_t)r + HUGE_SZ - 1) & ~(uintptr_t)(HUGE_SZ - 1));
#ifdef MADV_HUGEPAGE
    (void)madvise(b, len, MADV_HUGEPAGE);
#endif
    return b;
}

/* Seconds to write every byte of b (len bytes) with value v. */
static double
touch(unsigned char *b, size_t len, int v)
{
    double t0 = now();
    memset(b, v, len);
    /* keep the store: read one byte back through a volatile */
    volatile unsigned char sink = b[len - 1];
    (void)sink;
    return now() - t0;
}

int
main(int argc, char **argv)
{
    long mib = argc > 1 ? strtol(argv[1], NULL, 10) : 64;
    long rounds = argc > 2 ? strtol(argv[2], NULL, 10) : 3;
    if (argc > 3 || mib < 2 || mib > 65536 || rounds < 1 || rounds > 100) {
        fprintf(stderr, "usage: firsttouch [MIB (2-65536)] [ROUNDS (1-100)]\n");
        return 2;
    }
    size_t len = (size_t)mib << 20;
    for (long r = 0; r < rounds; r++) {
        void *raw;
        size_t rawlen;
        unsigned char *b = map_block(len, &raw, &rawlen);
        if (!b) {
            fprintf(stderr, "firsttouch: cannot map %ld MiB\n", mib);
            return 1;
        }
        double first = touch(b, len, 1);
        double again = touch(b, len, 2);
        munmap(raw, rawlen);
        if (!(b = map_block(len, &raw, &rawlen))) {
            fprintf(stderr, "firsttouch: cannot map %ld MiB\n", mib);
            return 1;
        }
        double remapped = touch(b, len, 3);
        munmap(raw, rawlen);
        printf("{\"round\": %ld, \"mib\": %ld, \"first_ms_per_mib\": %.3f, "
               "\"again_ms_per_mib\": %.3f, \"remapped_ms_per_mib\": %.3f}\n",
               r + 1, mib, first * 1e3 / (double)mib, again * 1e3 / (double)mib,
               remapped * 1e3 / (double)mib);
    }
    return 0;
}
