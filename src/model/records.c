/*
 * records.c - a dump's records without a heap: the parser in sink mode,
 * each record handed to the caller's sink (the streamed tally, the diff's
 * bases, the waste analysis), and chosen lines read back by their input
 * offsets (the waste analysis's second pass).  analysis/ reaches the
 * parser only through here.
 */
#include <string.h>

#include "../parse/parse.h"
#include "model.h"

#define WINDOW ((size_t)1 << 20)
#define POS_READ ((size_t)1 << 10)
#define PAD 64 /* >= HSCOPE__LINE_PAD + 1 */

hscope_status
hscope__heap_stream(hscope__builder *b, hscope__mem *mem, const char *path,
                    const hscope_load_options *lo, const hscope__stream_sinks *s,
                    uint64_t *input_bytes, int *gzip, hscope_error *err)
{
    hscope_load_options o;
    hscope_status st = hscope__read_load_options(lo, &o, err);
    memset(b, 0, sizeof(*b));
    if (st != HSCOPE_OK || (st = hscope__builder_init(b, mem, 0, 0, err)) != HSCOPE_OK)
        return st;
    b->sink = s->sink;
    b->sink_oid = s->sink_oid;
    b->slot_sink = s->slots;
    b->sink_ud = s->ud;
    b->sink_details = s->details;
    hscope__parse_opts po = hscope__parse_opts_of(&o);
    return hscope__parse_path(path, (o.flags & HSCOPE_LOAD_NO_GZIP) != 0, o.threads, b, &po,
                              input_bytes, gzip, err);
}

void
hscope__heap_stream_end(hscope__builder *b)
{
    hscope__builder_free(b);
}

const char *
hscope__stream_type_name(const hscope__builder *b, uint64_t code)
{
    return code < 32 ? hscope__fixed_type_name((int)code) : b->type_names[code & 255];
}

/* ------------------------------------------------------------------ */
/* lines read back by offset                                           */
/* ------------------------------------------------------------------ */

typedef struct fetch {
    hscope__reader *r;
    hscope__mem *mem;
    int positioned;           /* pread (plain file); else read on (gzip) */
    uint8_t *buf;
    size_t cap, len;          /* buf holds input bytes [base, base + len) */
    uint64_t base;
    uint64_t max_line;
} fetch;

/* Append up to `want` input bytes at buf[len] (growing buf if need be);
 * *got == 0 at the end of the input. */
static hscope_status
more(fetch *F, size_t want, size_t *got, hscope_error *err)
{
    hscope_status st;
    *got = 0;
    if (F->cap - F->len < want) {
        size_t nc = F->cap;
        while (nc - F->len < want)
            nc *= 2;
        uint8_t *nb = hscope__realloc(F->mem, F->buf, nc + PAD);
        if (!nb)
            return hscope__nomem(err, nc + PAD);
        memset(nb + F->cap + PAD, 0, nc - F->cap);
        F->buf = nb;
        F->cap = nc;
    }
    if (F->positioned)
        st = hscope__reader_pread(F->r, F->buf + F->len, want, F->base + F->len, got, err);
    else
        st = hscope__reader_read(F->r, F->buf + F->len, want, got, err);
    if (st != HSCOPE_OK)
        return st;
    F->len += *got;
    return HSCOPE_OK;
}

/*
 * The line at input offset `off` (offsets come in ascending order):
 * [*s, *e) with *e a '\n' followed by readable padding; *s NULL when the
 * input has no such line (it changed, or the line is too long).
 *
 * A plain file is read line by line with positioned reads, 1 KiB first
 * and doubling while the line is longer: the lines read back are
 * kilobytes apart, so a window would copy the whole dump again.  A
 * stream (gzip) is read on, what comes before each line dropped.
 */
static hscope_status
fetch_line(fetch *F, uint64_t off, const uint8_t **s, const uint8_t **e, hscope_error *err)
{
    hscope_status st;
    size_t got;
    *s = NULL;
    if (off < F->base)
        return HSCOPE_OK;
    if (F->positioned) {
        F->base = off;
        F->len = 0;
    }
    while (off > F->base + F->len) { /* a stream: read and drop up to off */
        F->base += F->len;
        F->len = 0;
        if ((st = more(F, F->cap, &got, err)) != HSCOPE_OK)
            return st;
        if (!got)
            return HSCOPE_OK;
    }
    size_t from = (size_t)(off - F->base), scan = from;
    for (;;) {
        const uint8_t *nl = memchr(F->buf + scan, '\n', F->len - scan);
        if (nl) {
            *s = F->buf + from;
            *e = nl;
            return HSCOPE_OK;
        }
        scan = F->len;
        if ((uint64_t)(F->len - from) > F->max_line)
            return HSCOPE_OK;
        if (from && F->len == F->cap) { /* make room: drop what is before the line */
            memmove(F->buf, F->buf + from, F->len - from);
            F->base += from;
            F->len -= from;
            scan -= from;
            from = 0;
        }
        /* a stream fills the buffer (doubled when the line fills it) */
        size_t want = F->len < F->cap ? F->cap - F->len : F->cap;
        if (F->positioned)
            want = F->len - from > POS_READ ? F->len - from : POS_READ;
        if ((st = more(F, want, &got, err)) != HSCOPE_OK)
            return st;
        if (!got) {
            if (F->len == from)
                return HSCOPE_OK;
            F->buf[F->len] = '\n'; /* the last line, without its newline */
            *s = F->buf + from;
            *e = F->buf + F->len;
            return HSCOPE_OK;
        }
    }
}

/* The record handed back for line i (at() sees it, or NULL after the line
 * when it held none). */
typedef struct reread {
    hscope__reread_fn at;
    void *ud;
    size_t i;
    int seen;
} reread;

static hscope_status
reread_sink(void *ud, hscope__builder *b, const hscope__objrec *o, hscope_error *err)
{
    reread *R = ud;
    (void)b;
    R->seen = 1;
    return R->at(R->ud, R->i, o, err);
}

hscope_status
hscope__heap_stream_at(hscope__builder *b, const char *path, const hscope_load_options *lo,
                       size_t n, hscope__offset_fn offset, hscope__reread_fn at, void *ud,
                       hscope_error *err)
{
    hscope_load_options o;
    hscope_status st = hscope__read_load_options(lo, &o, err);
    if (st != HSCOPE_OK)
        return st;
    hscope__parse_opts po = hscope__parse_opts_of(&o);
    hscope__reader r;
    hscope__lp lp;
    fetch F;
    memset(&F, 0, sizeof(F));
    if ((st = hscope__reader_open_path(&r, b->mem, path, (o.flags & HSCOPE_LOAD_NO_GZIP) != 0,
                                       err)) != HSCOPE_OK) {
        hscope__reader_close(&r);
        return st;
    }
    F.r = &r;
    F.mem = b->mem;
    F.positioned = r.total && !r.gzip;
    F.cap = WINDOW;
    F.max_line = o.max_line_bytes ? o.max_line_bytes : HSCOPE_DEFAULT_MAX_LINE_BYTES;
    if (!(F.buf = hscope__calloc(b->mem, 1, F.cap + PAD))) {
        hscope__reader_close(&r);
        return hscope__nomem(err, F.cap + PAD);
    }
    reread R = { at, ud, 0, 0 };
    b->sink = reread_sink;
    b->sink_oid = NULL;
    b->sink_ud = &R;
    b->slot_sink = NULL;
    b->sink_details = 1;
    hscope__lp_init(&lp, b, &po, err);
    for (size_t i = 0; i < n && st == HSCOPE_OK; i++) {
        const uint8_t *s, *e;
        uint64_t ref = offset(ud, i);
        if ((st = fetch_line(&F, ref, &s, &e, err)) != HSCOPE_OK)
            break;
        R.i = i;
        R.seen = 0;
        int rc = 0;
        if (s) {
            hscope__lp_at(&lp, s, ref);
            rc = hscope__lp_line(&lp, s, e);
        }
        if (rc < 0)
            st = lp.fatal ? lp.fatal : HSCOPE_ERR_INTERNAL;
        else if (!R.seen)
            st = at(ud, i, NULL, err);
    }
    hscope__lp_free(&lp);
    hscope__free(b->mem, F.buf);
    hscope__reader_close(&r);
    return st;
}

void
hscope__stream_stats(const hscope__builder *b, uint64_t input_bytes, int gzip,
                     uint64_t load_ns, hscope_load_stats *s)
{
    hscope__load_stats_init(s);
    s->gzip = (uint32_t)gzip;
    s->input_bytes = input_bytes;
    s->bytes = b->bytes;
    s->lines = b->lines;
    s->objects = b->streamed;
    s->root_records = b->root_records;
    s->shapes = b->shapes;
    s->free_slots = b->free_slots;
    s->unknown_keys = b->unknown_keys;
    s->unknown_types = b->unknown_types;
    s->truncated = b->truncated;
    s->load_ns = load_ns;
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        s->skipped_lines += b->skipped[r];
}
