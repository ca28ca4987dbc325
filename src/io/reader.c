/*
 * reader.c - plain and gzip byte sources.
 *
 * gzip: zlib inflate with automatic header detection (windowBits 15+32),
 * concatenated members supported (as gzip(1) writes with -c a >> b).  A
 * stream that ends without its trailer is "truncated": the bytes inflated
 * so far are returned and the parser decides (lenient: count and warn;
 * strict: error).  Corrupt data is always an error.
 *
 * With ISA-L (HSCOPE_HAVE_ISAL), a gzip input that can be read again (a
 * regular file or memory) is inflated by ISA-L instead: the same stream,
 * the same member handling, the same errors (its codes worded as zlib's
 * messages), about 3 times the speed.  The one difference is at a cut:
 * ISA-L decodes a symbol only with enough input bits after it, so from a
 * truncated stream it can stop a byte or two short of what zlib recovers.
 * When a stream turns out truncated, zlib therefore inflates the current
 * member again from its start, re-read, and the bytes it gets past ISA-L's
 * are handed out before the end: the result is zlib's, byte for byte.  That
 * costs a second inflation of one member, on a broken input only.  Pipes
 * cannot be read again, so they always use zlib.
 */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include "reader.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HSCOPE_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

/* read(2) that also waits on a non-blocking descriptor (Ruby's pipes and
 * sockets are O_NONBLOCK) instead of failing with EAGAIN. */
static ssize_t
read_some(int fd, void *buf, size_t n)
{
    for (;;) {
        ssize_t got = read(fd, buf, n);
        if (got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            return got; /* callers retry EINTR themselves */
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll(&p, 1, -1) < 0 && errno != EINTR)
            return -1;
    }
}

static hscope_status
fill_raw(hscope__reader *r, hscope_error *err)
{
    /* Refill ibuf (which must be fully consumed) from the source. */
    r->ipos = r->ilen = 0;
    if (r->eof)
        return HSCOPE_OK;
    if (r->fd < 0) {
        uint64_t left = r->mlen - r->mpos;
        size_t n = left < HSCOPE__READER_IBUF ? (size_t)left : HSCOPE__READER_IBUF;
        if (n)
            memcpy(r->ibuf, r->mdata + r->mpos, n);
        r->mpos += n;
        r->ilen = n;
        r->in_bytes += n;
        if (n == 0)
            r->eof = 1;
        return HSCOPE_OK;
    }
    for (;;) {
        ssize_t n = read_some(r->fd, r->ibuf, HSCOPE__READER_IBUF);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return hscope__fail_errno(err, errno, "read failed at byte %llu",
                                      (unsigned long long)r->in_bytes);
        if (n == 0)
            r->eof = 1;
        r->ilen = (size_t)n;
        r->in_bytes += (uint64_t)n;
        return HSCOPE_OK;
    }
}

static voidpf
z_alloc(voidpf ud, uInt items, uInt size)
{
    return hscope__calloc((hscope__mem *)ud, items, size);
}

static void
z_free(voidpf ud, voidpf p)
{
    hscope__free((hscope__mem *)ud, p);
}

/* A zlib inflater for gzip or zlib streams, allocating through r->mem. */
static hscope_status
zlib_start(hscope__reader *r, hscope_error *err)
{
    memset(&r->z, 0, sizeof(r->z));
    r->z.zalloc = z_alloc;
    r->z.zfree = z_free;
    r->z.opaque = r->mem;
    if (inflateInit2(&r->z, 15 + 32) != Z_OK)
        return hscope__fail(err, HSCOPE_ERR_NOMEM, "zlib inflateInit2 failed");
    r->zinit = 1;
    return HSCOPE_OK;
}

static hscope_status
start(hscope__reader *r, hscope__mem *m, int no_gzip, hscope_error *err)
{
    r->mem = m;
    r->ibuf = hscope__malloc(m, HSCOPE__READER_IBUF);
    if (!r->ibuf)
        return hscope__nomem(err, HSCOPE__READER_IBUF);
    hscope_status st = fill_raw(r, err);
    if (st != HSCOPE_OK)
        return st;
    /* A short first read (pipe) may hold one byte only: top it up. */
    while (r->ilen < 2 && !r->eof) {
        ssize_t n = r->fd >= 0 ? read_some(r->fd, r->ibuf + r->ilen, HSCOPE__READER_IBUF - r->ilen) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return hscope__fail_errno(err, errno, "read failed");
        if (n == 0)
            r->eof = 1;
        r->ilen += (size_t)n;
        r->in_bytes += (uint64_t)n;
    }
    if (!no_gzip && r->ilen >= 2 && r->ibuf[0] == 0x1f && r->ibuf[1] == 0x8b) {
        r->gzip = 1;
#ifdef HSCOPE_HAVE_ISAL
        if (r->fd < 0 || r->total != 0) { /* can be read again: see above */
            r->isal = hscope__malloc(m, sizeof(*r->isal));
            if (!r->isal)
                return hscope__nomem(err, sizeof(*r->isal));
            isal_inflate_init(r->isal);
            r->isal->crc_flag = ISAL_GZIP;
            return HSCOPE_OK;
        }
#endif
        return zlib_start(r, err);
    }
    return HSCOPE_OK;
}

static void
reset(hscope__reader *r)
{
    memset(r, 0, sizeof(*r));
    r->fd = -1;
}

hscope_status
hscope__reader_open_fd(hscope__reader *r, hscope__mem *m, int fd, int no_gzip,
                       hscope_error *err)
{
    reset(r);
    if (fd < 0)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "invalid file descriptor %d", fd);
    r->fd = fd;
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        off_t pos = lseek(fd, 0, SEEK_CUR);
        r->origin = pos > 0 ? (uint64_t)pos : 0;
        if (pos >= 0 && (uint64_t)sb.st_size > r->origin)
            r->total = (uint64_t)sb.st_size - r->origin;
#ifdef POSIX_FADV_SEQUENTIAL
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    } else if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        return hscope__fail(err, HSCOPE_ERR_IO, "is a directory");
    }
    return start(r, m, no_gzip, err);
}

hscope_status
hscope__reader_open_path(hscope__reader *r, hscope__mem *m, const char *path,
                         int no_gzip, hscope_error *err)
{
    reset(r);
    if (!path)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "path is NULL");
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return hscope__fail_errno(err, errno, "cannot open %s", path);
    hscope_status st = hscope__reader_open_fd(r, m, fd, no_gzip, err);
    r->own_fd = 1;
    r->fd = fd;
    if (st != HSCOPE_OK && err && err->status == HSCOPE_ERR_IO &&
        strncmp(err->message, "is a directory", 14) == 0)
        snprintf(err->message, sizeof(err->message), "cannot read %s: is a directory", path);
    return st;
}

hscope_status
hscope__reader_open_memory(hscope__reader *r, hscope__mem *m, const void *data,
                           size_t len, int no_gzip, hscope_error *err)
{
    reset(r);
    if (!data && len)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "data is NULL");
    r->mdata = data;
    r->mlen = len;
    r->total = len;
    return start(r, m, no_gzip, err);
}

hscope_status
hscope__reader_pread(const hscope__reader *r, void *buf, size_t cap, uint64_t off,
                     size_t *got, hscope_error *err)
{
    *got = 0;
    if (r->fd < 0) {
        if (off < r->mlen) {
            uint64_t left = r->mlen - off;
            *got = left < cap ? (size_t)left : cap;
            memcpy(buf, r->mdata + off, *got);
        }
        return HSCOPE_OK;
    }
    while (*got < cap) {
        uint64_t at = r->origin + off + *got;
        if (at > (uint64_t)INT64_MAX)
            break;
        ssize_t n = pread(r->fd, (unsigned char *)buf + *got, cap - *got, (off_t)at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return hscope__fail_errno(err, errno, "read failed at byte %llu",
                                      (unsigned long long)(off + *got));
        if (n == 0)
            break;
        *got += (size_t)n;
    }
    return HSCOPE_OK;
}

static hscope_status
read_plain(hscope__reader *r, unsigned char *buf, size_t cap, size_t *got,
           hscope_error *err)
{
    if (r->ipos < r->ilen) {
        size_t n = r->ilen - r->ipos < cap ? r->ilen - r->ipos : cap;
        memcpy(buf, r->ibuf + r->ipos, n);
        r->ipos += n;
        *got = n;
        return HSCOPE_OK;
    }
    if (r->eof) {
        *got = 0;
        return HSCOPE_OK;
    }
    if (r->fd < 0) {
        uint64_t left = r->mlen - r->mpos;
        size_t n = left < cap ? (size_t)left : cap;
        memcpy(buf, r->mdata + r->mpos, n);
        r->mpos += n;
        r->in_bytes += n;
        if (!n)
            r->eof = 1;
        *got = n;
        return HSCOPE_OK;
    }
    for (;;) {
        ssize_t n = read_some(r->fd, buf, cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return hscope__fail_errno(err, errno, "read failed at byte %llu",
                                      (unsigned long long)r->in_bytes);
        if (!n)
            r->eof = 1;
        r->in_bytes += (uint64_t)n;
        *got = (size_t)n;
        return HSCOPE_OK;
    }
}

/* Raw offset of the next unread input byte. */
static uint64_t
raw_pos(const hscope__reader *r)
{
    return r->in_bytes - (r->ilen - r->ipos);
}

/* More input after a member that ended cleanly: it must be another member. */
static hscope_status
next_member(hscope__reader *r, hscope_error *err)
{
    if (r->ibuf[r->ipos] != 0x1f)
        return hscope__fail(err, HSCOPE_ERR_GZIP,
                            "unexpected data after gzip member at compressed byte %llu",
                            (unsigned long long)raw_pos(r));
    r->zend = 0;
    return HSCOPE_OK;
}

static hscope_status
read_gzip(hscope__reader *r, unsigned char *buf, size_t cap, size_t *got,
          hscope_error *err)
{
    hscope_status st;
    r->z.next_out = buf;
    r->z.avail_out = cap > UINT32_MAX ? UINT32_MAX : (uInt)cap;
    while (r->z.avail_out > 0) {
        if (r->ipos == r->ilen && !r->eof) {
            if ((st = fill_raw(r, err)) != HSCOPE_OK)
                return st;
        }
        if (r->ipos == r->ilen && r->eof) {
            /* Input used up: inflate may still hold decoded bytes that did
             * not fit the last output buffer.  Drain them, then stop. */
            if (r->zend)
                break;
            uInt before = r->z.avail_out;
            r->z.next_in = NULL;
            r->z.avail_in = 0;
            int zr = inflate(&r->z, Z_NO_FLUSH);
            if (zr == Z_STREAM_END)
                r->zend = 1;
            else if (zr != Z_OK && zr != Z_BUF_ERROR)
                return hscope__fail(err, HSCOPE_ERR_GZIP, "corrupt gzip data at the end: %s",
                                    r->z.msg ? r->z.msg : "inflate error");
            if (r->z.avail_out == before)
                break; /* nothing more: truncated (or done) */
            continue;
        }
        if (r->zend) {
            if ((st = next_member(r, err)) != HSCOPE_OK)
                return st;
            inflateReset(&r->z);
        }
        r->z.next_in = r->ibuf + r->ipos;
        r->z.avail_in = (uInt)(r->ilen - r->ipos);
        int zr = inflate(&r->z, Z_NO_FLUSH);
        r->ipos = r->ilen - r->z.avail_in;
        if (zr == Z_STREAM_END) {
            r->zend = 1;
            continue;
        }
        if (zr == Z_BUF_ERROR)
            continue; /* needs more input */
        if (zr != Z_OK) {
            return hscope__fail(err, HSCOPE_ERR_GZIP,
                "corrupt gzip data at compressed byte %llu: %s",
                (unsigned long long)raw_pos(r), r->z.msg ? r->z.msg : "inflate error");
        }
    }
    *got = cap - r->z.avail_out;
    if (*got == 0 && r->eof && r->ipos == r->ilen && !r->zend)
        r->truncated = 1;
    return HSCOPE_OK;
}

#ifdef HSCOPE_HAVE_ISAL
/* ISA-L's error codes in zlib's words (what read_gzip reports). */
static const char *
isal_msg(int code)
{
    switch (code) {
    case ISAL_INVALID_BLOCK: return "invalid block type";
    case ISAL_INVALID_SYMBOL: return "invalid code";
    case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER: return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check (CRC-32 or length)";
    default: return "inflate error";
    }
}

/*
 * The stream ended inside the member that starts at raw offset r->member_in,
 * of which ISA-L gave r->member_out bytes.  Inflate that member again with
 * zlib, from its start up to the end of the input, and keep what zlib
 * gives past those bytes in r->tail.
 */
static hscope_status
recover_tail(hscope__reader *r, hscope_error *err)
{
    hscope_status st = HSCOPE_OK;
    unsigned char out[16384];
    uint64_t off = r->member_in, skip = r->member_out;
    size_t cap = 0;
    if ((st = zlib_start(r, err)) != HSCOPE_OK)
        return st;
    while (off < r->in_bytes) {
        size_t want = HSCOPE__READER_IBUF, n;
        if (r->in_bytes - off < want)
            want = (size_t)(r->in_bytes - off);
        if ((st = hscope__reader_pread(r, r->ibuf, want, off, &n, err)) != HSCOPE_OK)
            return st;
        if (n == 0)
            break; /* the file shrank since: keep what there is */
        off += n;
        r->z.next_in = r->ibuf;
        r->z.avail_in = (uInt)n;
        do {
            r->z.next_out = out;
            r->z.avail_out = skip && skip < sizeof(out) ? (uInt)skip : (uInt)sizeof(out);
            int zr = inflate(&r->z, Z_SYNC_FLUSH);
            size_t k = (size_t)(r->z.next_out - out);
            if (zr != Z_OK && zr != Z_BUF_ERROR && zr != Z_STREAM_END)
                return hscope__fail(err, HSCOPE_ERR_GZIP,
                                    "corrupt gzip data at the end: %s",
                                    r->z.msg ? r->z.msg : "inflate error");
            size_t use = skip >= k ? 0 : k - (size_t)skip;
            skip = skip >= k ? skip - k : 0;
            if (use) {
                if ((st = hscope__grow(r->mem, (void **)&r->tail, &cap, r->tail_len + use,
                                       1, err)) != HSCOPE_OK)
                    return st;
                memcpy(r->tail + r->tail_len, out + k - use, use);
                r->tail_len += use;
            }
            if (zr == Z_STREAM_END) /* never seen: say so rather than guess */
                return hscope__fail(err, HSCOPE_ERR_INTERNAL,
                                    "gzip: ISA-L and zlib disagree on where member "
                                    "at compressed byte %llu ends",
                                    (unsigned long long)r->member_in);
            if (k == 0 && (zr == Z_BUF_ERROR || r->z.avail_in == 0))
                break;
        } while (r->z.avail_in > 0 || r->z.avail_out == 0);
    }
    return HSCOPE_OK;
}

/* Up to `room` unread bytes of r->tail into dst; how many. */
static size_t
tail_out(hscope__reader *r, unsigned char *dst, size_t room)
{
    size_t n = r->tail_len - r->tail_pos < room ? r->tail_len - r->tail_pos : room;
    if (n)
        memcpy(dst, r->tail + r->tail_pos, n);
    r->tail_pos += n;
    return n;
}

static hscope_status
read_isal(hscope__reader *r, unsigned char *buf, size_t cap, size_t *got,
          hscope_error *err)
{
    hscope_status st;
    struct inflate_state *s = r->isal;
    if (r->truncated) { /* the rest of zlib's bytes, then the end */
        *got = tail_out(r, buf, cap);
        return HSCOPE_OK;
    }
    s->next_out = buf;
    s->avail_out = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
    while (s->avail_out > 0) {
        if (r->ipos == r->ilen && !r->eof) {
            if ((st = fill_raw(r, err)) != HSCOPE_OK)
                return st;
        }
        uint32_t before = s->avail_out;
        if (r->ipos == r->ilen && r->eof) {
            /* Input used up: flush what ISA-L still holds, then stop. */
            if (r->zend)
                break;
            s->next_in = r->ibuf;
            s->avail_in = 0;
            int ir = isal_inflate(s);
            r->member_out += before - s->avail_out;
            if (ir < 0)
                return hscope__fail(err, HSCOPE_ERR_GZIP, "corrupt gzip data at the end: %s",
                                    isal_msg(ir));
            if (s->block_state == ISAL_BLOCK_FINISH) {
                r->zend = 1;
                continue;
            }
            if (s->avail_out == before) {
                /* truncated: zlib's bytes past ISA-L's, then the end */
                if ((st = recover_tail(r, err)) != HSCOPE_OK)
                    return st;
                r->truncated = 1;
                s->avail_out -= (uint32_t)tail_out(r, s->next_out, s->avail_out);
                break;
            }
            continue;
        }
        if (r->zend) {
            if ((st = next_member(r, err)) != HSCOPE_OK)
                return st;
            isal_inflate_reset(s);
            s->crc_flag = ISAL_GZIP;
            r->member_in = raw_pos(r);
            r->member_out = 0;
        }
        s->next_in = r->ibuf + r->ipos;
        s->avail_in = (uint32_t)(r->ilen - r->ipos);
        int ir = isal_inflate(s);
        r->ipos = r->ilen - s->avail_in;
        r->member_out += before - s->avail_out;
        if (ir < 0)
            return hscope__fail(err, HSCOPE_ERR_GZIP,
                "corrupt gzip data at compressed byte %llu: %s",
                (unsigned long long)raw_pos(r), isal_msg(ir));
        if (s->block_state == ISAL_BLOCK_FINISH)
            r->zend = 1;
    }
    *got = cap - s->avail_out;
    return HSCOPE_OK;
}
#endif

hscope_status
hscope__reader_read(hscope__reader *r, void *buf, size_t cap, size_t *got,
                    hscope_error *err)
{
    *got = 0;
    if (!cap)
        return HSCOPE_OK;
#ifdef HSCOPE_HAVE_ISAL
    if (r->isal)
        return read_isal(r, buf, cap, got, err);
#endif
    return r->gzip ? read_gzip(r, buf, cap, got, err)
                   : read_plain(r, buf, cap, got, err);
}

void
hscope__reader_close(hscope__reader *r)
{
    if (r->zinit)
        inflateEnd(&r->z);
    if (r->own_fd && r->fd >= 0)
        close(r->fd);
    if (r->mem) {
        hscope__free(r->mem, r->ibuf);
        hscope__free(r->mem, r->isal);
        hscope__free(r->mem, r->tail);
    }
    reset(r);
}
