/*
 * reader.h - byte source for the parser: a file path, a file descriptor or
 * a memory buffer, each optionally gzip (detected by the magic bytes
 * 1f 8b and inflated in a stream: never whole in memory).  64-bit offsets
 * throughout, so inputs over 4 GiB work.
 *
 * Inflation is zlib's, or where the build has ISA-L (HSCOPE_HAVE_ISAL) and
 * the compressed input can be read again (a regular file or memory),
 * ISA-L's, about 3 times as fast; see reader.c for how the two agree.
 */
#ifndef HSCOPE_READER_H
#define HSCOPE_READER_H

#include <zlib.h>

#include "../core/core.h"

#define HSCOPE__READER_IBUF (1u << 18) /* compressed/raw input chunk */

typedef struct hscope__reader {
    hscope__mem *mem;
    int fd;                     /* -1 for memory input */
    int own_fd;                 /* close on hscope__reader_close */
    const unsigned char *mdata; /* memory input */
    uint64_t mlen, mpos;
    unsigned char *ibuf;        /* raw input staging (gzip, sniffing) */
    size_t ipos, ilen;          /* unread part of ibuf: [ipos, ilen) */
    int gzip;                   /* input is gzip */
    int zinit;                  /* z is initialised */
    int zend;                   /* last member ended cleanly */
    int eof;                    /* raw input exhausted */
    int truncated;              /* gzip stream ended before its trailer */
    z_stream z;
    struct inflate_state *isal; /* ISA-L inflater, or NULL: zlib's */
    uint64_t member_in;         /* ISA-L: raw offset of the current member */
    uint64_t member_out;        /* ISA-L: bytes inflated from that member */
    unsigned char *tail;        /* bytes zlib recovered after ISA-L's */
    size_t tail_pos, tail_len;  /*   (truncated stream): unread part */
    uint64_t in_bytes;          /* raw bytes consumed from the source */
    uint64_t total;             /* raw size if known (regular file, memory), else 0;
                                   if known, hscope__reader_pread works */
    uint64_t origin;            /* regular file: offset of its first byte */
} hscope__reader;

hscope_status hscope__reader_open_path(hscope__reader *r, hscope__mem *m,
                                       const char *path, int no_gzip,
                                       hscope_error *err);
hscope_status hscope__reader_open_fd(hscope__reader *r, hscope__mem *m,
                                     int fd, int no_gzip, hscope_error *err);
hscope_status hscope__reader_open_memory(hscope__reader *r, hscope__mem *m,
                                         const void *data, size_t len,
                                         int no_gzip, hscope_error *err);
/*
 * Read up to `cap` uncompressed bytes into `buf`.  *got == 0 means end of
 * input (check r->truncated for a gzip stream that stopped early).
 */
hscope_status hscope__reader_read(hscope__reader *r, void *buf, size_t cap,
                                  size_t *got, hscope_error *err);
/*
 * Read up to `cap` raw bytes at `off` bytes from the start of the input
 * (which for a descriptor is where it stood when opened), independently of
 * hscope__reader_read and from any thread: a positioned read(2) or a copy.
 * Only for inputs of known size (r->total != 0).  *got < cap only at the end of the input.
 */
hscope_status hscope__reader_pread(const hscope__reader *r, void *buf, size_t cap,
                                   uint64_t off, size_t *got, hscope_error *err);
void hscope__reader_close(hscope__reader *r);

#endif
