/*
 * stream.c - the line loop: reads the source in bounded chunks into one
 * buffer, hands every complete line to the record decoder, and keeps the
 * partial last line for the next read.  The buffer grows only to hold a
 * single long line (up to max_line); the input never sits in memory whole.
 */
#include <string.h>
#include <unistd.h>

#include "parse.h"

#define CHUNK ((size_t)4 << 20) /* initial buffer: 4 MiB */
#define PAD 64 /* readable bytes after the data (>= HSCOPE__LINE_PAD + 1) */
#define PROGRESS_EVERY ((uint64_t)16 << 20)

typedef struct loop {
    hscope__reader *r;
    hscope__builder *b;
    const hscope__parse_opts *o;
    hscope__lp lp;
    hscope_error *err;
    uint8_t *buf;
    size_t cap;           /* usable bytes (PAD more are allocated) */
    uint64_t base;        /* stream offset of buf[0] */
    uint64_t next_progress;
} loop;

/* The decoder's verdict rc on line `lineno` starting at s. */
static hscope_status
line_result(loop *L, int rc, const uint8_t *s, uint64_t lineno, int at_eof)
{
    hscope__builder *b = L->b;
    if (rc > 0)
        return HSCOPE_OK;
    if (rc < 0)
        return L->lp.fatal ? L->lp.fatal : HSCOPE_ERR_INTERNAL;
    int reason = L->lp.reason;
    uint64_t off = L->base + (uint64_t)(L->lp.fail_at - L->buf);
    uint64_t col = (uint64_t)(L->lp.fail_at - s) + 1;
    /* A last line without newline that is not even valid JSON was most
     * likely cut off; one that parses but is not a record keeps its own
     * reason. */
    if (at_eof && reason == HSCOPE_SKIP_BAD_JSON) {
        b->truncated = 1;
        if (L->o->strict)
            return hscope__fail_at(L->err, HSCOPE_ERR_TRUNCATED, lineno, off,
                "line %llu, byte %llu: input ends in the middle of a record (%s)",
                (unsigned long long)lineno, (unsigned long long)off, L->lp.why);
        reason = HSCOPE_SKIP_TRUNCATED;
    }
    if (L->o->strict)
        return hscope__fail_at(L->err, HSCOPE_ERR_PARSE, lineno, off,
            "line %llu, column %llu (byte %llu): %s",
            (unsigned long long)lineno, (unsigned long long)col,
            (unsigned long long)off, L->lp.why ? L->lp.why : "invalid record");
    hscope__builder_note_skip(b, reason, lineno);
    return HSCOPE_OK;
}

/* Handle one complete line [s, e) (e at '\n' or the EOF sentinel). */
static hscope_status
one_line(loop *L, const uint8_t *s, const uint8_t *e, int at_eof)
{
    uint64_t lineno = ++L->b->lines;
    if (L->o->line_fn &&
        L->o->line_fn(L->o->line_ud, (const char *)s, (uint64_t)(e - s), lineno))
        return hscope__fail_at(L->err, HSCOPE_ERR_CANCELLED, lineno,
                               L->base + (uint64_t)(s - L->buf),
                               "load cancelled by the line callback");
    return line_result(L, hscope__lp_line(&L->lp, s, e), s, lineno, at_eof);
}

/* Handle the line at s, which ends at its first '\n' (at or before lim,
 * itself a '\n'); *nl is set to that newline.  Without a line callback the
 * decoder finds the end itself (one pass over the line, not two). */
static hscope_status
next_line(loop *L, const uint8_t *s, const uint8_t *lim, const uint8_t **nl)
{
    if (L->o->line_fn) {
        const uint8_t *e = memchr(s, '\n', (size_t)(lim - s) + 1);
        *nl = e;
        return one_line(L, s, e, 0);
    }
    uint64_t lineno = ++L->b->lines;
    return line_result(L, hscope__lp_next(&L->lp, s, lim, nl), s, lineno, 0);
}

static hscope_status
progress(loop *L)
{
    if (!L->o->progress || L->r->in_bytes < L->next_progress)
        return HSCOPE_OK;
    L->next_progress = L->r->in_bytes + (L->o->progress_bytes ? L->o->progress_bytes
                                                               : PROGRESS_EVERY);
    if (L->o->progress(L->o->progress_ud, L->r->in_bytes, L->r->total))
        return hscope__fail(L->err, HSCOPE_ERR_CANCELLED, "load cancelled");
    return HSCOPE_OK;
}

/* Make room: the line starting at buf[0] fills the whole buffer. */
static hscope_status
grow_buffer(loop *L)
{
    uint64_t max = L->o->max_line ? L->o->max_line : HSCOPE_DEFAULT_MAX_LINE_BYTES;
    if (L->cap >= max)
        return HSCOPE_ERR_LIMIT; /* caller handles: too long */
    size_t nc = L->cap * 2 > max ? (size_t)max : L->cap * 2;
    uint8_t *nb = hscope__realloc(L->b->mem, L->buf, nc + PAD);
    if (!nb)
        return hscope__nomem(L->err, nc + PAD);
    memset(nb + L->cap + PAD, 0, nc - L->cap); /* defined bytes for SIMD */
    L->buf = nb;
    L->cap = nc;
    return HSCOPE_OK;
}

static hscope_status
run(loop *L)
{
    hscope_status st;
    size_t len = 0;      /* bytes in buf */
    size_t scanned = 0;  /* bytes of the current partial line searched */
    int discard = 0;     /* inside a line that was too long */
    for (;;) {
        if (len == L->cap) {
            if (!discard && (st = grow_buffer(L)) != HSCOPE_OK) {
                if (st != HSCOPE_ERR_LIMIT)
                    return st;
                uint64_t lineno = L->b->lines + 1;
                if (L->o->strict)
                    return hscope__fail_at(L->err, HSCOPE_ERR_LIMIT, lineno, L->base,
                        "line %llu (byte %llu) is longer than max_line_bytes (%llu)",
                        (unsigned long long)lineno, (unsigned long long)L->base,
                        (unsigned long long)L->cap);
                discard = 1;
            }
            if (discard) { /* drop the buffered part of the long line */
                L->base += len;
                len = scanned = 0;
            }
        }
        size_t got;
        if ((st = hscope__reader_read(L->r, L->buf + len, L->cap - len, &got,
                                      L->err)) != HSCOPE_OK)
            return st;
        if ((st = progress(L)) != HSCOPE_OK)
            return st;
        if (got == 0)
            break;
        L->b->bytes += got;
        len += got;
        L->buf[len] = '\n'; /* sentinel for the scanners */
        size_t beg = 0;
        if (discard) {
            uint8_t *nl = memchr(L->buf + scanned, '\n', len - scanned);
            if (nl) { /* the end of the too-long line */
                discard = 0;
                hscope__builder_note_skip(L->b, HSCOPE_SKIP_TOO_LONG, ++L->b->lines);
                beg = scanned = (size_t)(nl - L->buf) + 1;
            }
        }
        if (!discard) {
            /* the last newline of the data: every line before it is
             * complete ([scanned, len) is all that can hold a new one) */
            size_t last = len;
            while (last > scanned && L->buf[last - 1] != '\n')
                last--;
            if (last > scanned) {
                const uint8_t *lim = L->buf + last - 1;
                const uint8_t *p = L->buf + beg, *nl;
                hscope__lp_at(&L->lp, L->buf, L->base);
                while (p <= lim) {
                    if ((st = next_line(L, p, lim, &nl)) != HSCOPE_OK)
                        return st;
                    p = nl + 1;
                }
                beg = scanned = last;
            }
        }
        if (beg > 0) {
            memmove(L->buf, L->buf + beg, len - beg);
            L->base += beg;
            len -= beg;
        }
        scanned = len;
    }
    if (L->r->truncated) {
        L->b->truncated = 1;
        if (L->o->strict)
            return hscope__fail_at(L->err, HSCOPE_ERR_TRUNCATED, L->b->lines + 1,
                                   L->base + len,
                                   "gzip stream is truncated (ends before its trailer)");
    }
    if (discard) {
        /* a too-long last line is counted as too long, whether or not it
         * was complete (nobody read its end) */
        hscope__builder_note_skip(L->b, HSCOPE_SKIP_TOO_LONG, ++L->b->lines);
    } else if (len > 0) {
        L->buf[len] = '\n';
        hscope__lp_at(&L->lp, L->buf, L->base);
        if ((st = one_line(L, L->buf, L->buf + len, 1)) != HSCOPE_OK)
            return st;
    }
    return HSCOPE_OK;
}

hscope_status
hscope__parse_stream(hscope__reader *r, hscope__builder *b,
                     const hscope__parse_opts *o, hscope_error *err)
{
    loop L;
    memset(&L, 0, sizeof(L));
    L.r = r;
    L.b = b;
    L.o = o;
    L.err = err;
    uint64_t max = o->max_line ? o->max_line : HSCOPE_DEFAULT_MAX_LINE_BYTES;
    L.cap = max < CHUNK ? (size_t)(max < 64 ? 64 : max) : CHUNK;
    /* a plain input of known size needs no more (it grows for long lines) */
    if (r->total && !r->gzip && r->total < L.cap)
        L.cap = r->total < 64 ? 64 : (size_t)r->total;
    L.buf = hscope__calloc(b->mem, 1, L.cap + PAD);
    if (!L.buf)
        return hscope__nomem(err, L.cap + PAD);
    hscope__lp_init(&L.lp, b, o, err);
    hscope_status st = run(&L);
    hscope__lp_free(&L.lp);
    hscope__free(b->mem, L.buf);
    return st;
}

unsigned
hscope__parse_threads(unsigned requested, const hscope__reader *r)
{
    unsigned threads = requested;
    if (threads == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        threads = nc > 1 ? (unsigned)(nc > 8 ? 8 : nc) : 1;
        /* small input (gzip compresses dumps ~17x): not worth the threads */
        if (r->total && r->total < (r->gzip ? (uint64_t)2 << 20 : (uint64_t)32 << 20))
            threads = 1;
    }
    return threads > 64 ? 64 : threads;
}

hscope_status
hscope__parse_path(const char *path, int no_gzip, unsigned threads,
                   hscope__builder *b, const hscope__parse_opts *o,
                   uint64_t *input_bytes, int *gzip, hscope_error *err)
{
    hscope__reader r;
    hscope_status st = hscope__reader_open_path(&r, b->mem, path, no_gzip, err);
    if (st == HSCOPE_OK) {
        threads = hscope__parse_threads(threads, &r);
        if (threads > 1 && !o->line_fn)
            st = hscope__parse_parallel(&r, b, o, threads, err);
        else
            st = hscope__parse_stream(&r, b, o, err);
    }
    if (input_bytes)
        *input_bytes = r.in_bytes;
    if (gzip)
        *gzip = r.gzip;
    hscope__reader_close(&r);
    if (st == HSCOPE_OK && b->n == 0 && b->streamed == 0 && b->root_records == 0 &&
        b->shapes == 0 && b->free_slots == 0)
        st = hscope__fail(err, HSCOPE_ERR_NOT_A_DUMP,
                          b->lines ? "%s: not a heap dump: none of %llu lines is a "
                                     "heap dump record (first problem: line %llu, %s)"
                                   : "%s: not a heap dump: the input is empty",
                          path, (unsigned long long)b->lines,
                          (unsigned long long)(b->nskip_examples ? b->skip_line[0] : 0),
                          b->nskip_examples ? hscope__skip_reason_name(b->skip_reason[0]) : "");
    return st;
}

_Static_assert(PAD >= HSCOPE__LINE_PAD + 1, "line buffers need HSCOPE__LINE_PAD");
