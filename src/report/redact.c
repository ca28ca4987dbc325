/*
 * redact.c - a copy of a dump that is safe to share (hscope_redact): the
 * "value" of every STRING, SYMBOL and FLOAT record (tokens, passwords,
 * personal data) is replaced by a placeholder holding its length and a
 * hash, and every other byte is copied as it is, so that heapscope's
 * answers on the copy equal those on the original.
 *
 * The dump is read through the parser in sink mode on one thread: the line
 * hook keeps a copy of each line, the parser's record of the same line
 * (when it has one) comes next, and the line is written out once it is
 * known what the parser made of it.  Output is plain or gzip, to a
 * caller's write function or to a file written beside itself and renamed
 * when complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../model/model.h"
#include "out.h"
#include "redact.h"

#define ZBUF ((size_t)64 << 10)

typedef struct rd {
    hscope__mem *mem;
    hscope_error *err;
    hscope_status st;          /* first error of the hooks */
    hscope_line_fn user_fn;    /* the caller's line hook, chained */
    void *user_ud;
    char *line;                /* the pending line's copy */
    size_t len, cap;
    int pending;
    int gz;
    z_stream z;
    unsigned char *zbuf;
    hscope__out out;
    uint64_t lines, values, kept;
} rd;

/* Bytes of the copy: deflated first for gzip. */
static void
put(rd *r, const char *p, size_t n)
{
    if (!n || r->out.status != HSCOPE_OK)
        return;
    if (!r->gz) {
        hscope__out_write(&r->out, p, n);
        return;
    }
    r->z.next_in = (unsigned char *)(uintptr_t)p;
    r->z.avail_in = (uInt)n;
    while (r->z.avail_in && r->out.status == HSCOPE_OK) {
        if (deflate(&r->z, Z_NO_FLUSH) == Z_STREAM_ERROR) {
            r->out.status = hscope__fail(r->err, HSCOPE_ERR_IO, "gzip: deflate failed");
            return;
        }
        if (r->z.avail_out == 0) {
            hscope__out_write(&r->out, r->zbuf, ZBUF);
            r->z.next_out = r->zbuf;
            r->z.avail_out = (uInt)ZBUF;
        }
    }
}

/* Past JSON whitespace (the line's '\n' is not in [q, end)). */
static const char *
skip_blanks(const char *q, const char *end)
{
    while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
        q++;
    return q;
}

/* The value [b, e) as written in the line: its placeholder, from the
 * decoded bytes when the parser gave them (dec), else from the text (the
 * same bytes when it has no escape).  A placeholder already is left as
 * it is, so that redacting a copy again changes nothing. */
static void
put_value(rd *r, const char *b, const char *e, const char *dec, size_t dlen)
{
    uint64_t n, h;
    int legacy;
    if (hscope__redacted_parse(b, (size_t)(e - b), &n, &h, &legacy)) {
        put(r, b, (size_t)(e - b));
        r->kept++;
        return;
    }
    if (!dec) {
        dec = b;
        dlen = (size_t)(e - b);
    }
    char rep[96];
    int k = snprintf(rep, sizeof(rep), "[redacted %llu bytes xxh3:%016llx]",
                     (unsigned long long)dlen, (unsigned long long)XXH3_64bits(dec, dlen));
    put(r, rep, (size_t)k);
    r->values++;
}

/* The next string value of [from, end): its text [*b, *e), or 0. */
static int
next_value(const char *from, const char *end, const char **b, const char **e)
{
    static const char key[] = "\"value\"";
    const char *v;
    /* "value", optional whitespace, ':', optional whitespace, '"': Ruby
     * writes "value":"...", but any JSON spacing must be redacted too.
     * Inside a JSON string every quote is escaped, so the key cannot
     * match there. */
    while ((v = memmem(from, (size_t)(end - from), key, sizeof(key) - 1)) != NULL) {
        const char *q = skip_blanks(v + sizeof(key) - 1, end);
        if (q >= end || *q != ':' || (q = skip_blanks(q + 1, end)) >= end || *q != '"') {
            from = v + 1; /* not the key of a string value: search on */
            continue;
        }
        *b = q = q + 1;
        while (q < end && *q != '"')
            q += (*q == '\\' && q + 1 < end) ? 2 : 1;
        if (q >= end)
            return 0; /* unterminated (cut line): left as is */
        *e = q;
        return 1;
    }
    return 0;
}

/* The pending line, each string value replaced, and its newline.  dec:
 * the value the parser decoded from the line (NULL: none), which is its
 * last "value" key's. */
static void
flush_line(rd *r, const char *dec, size_t dlen)
{
    if (!r->pending)
        return;
    r->pending = 0;
    const char *p = r->line, *end = r->line + r->len, *b, *e, *last = NULL, *lb, *le;
    for (const char *from = p; next_value(from, end, &lb, &le); from = le)
        last = lb;
    while (next_value(p, end, &b, &e)) {
        put(r, p, (size_t)(b - p)); /* up to the opening quote */
        if (b == last && dec)
            put_value(r, b, e, dec, dlen);
        else
            put_value(r, b, e, NULL, 0);
        p = e; /* the closing quote is copied with the rest */
    }
    put(r, p, (size_t)(end - p));
    put(r, "\n", 1);
}

static int32_t
line_hook(void *ud, const char *line, uint64_t len, uint64_t lineno)
{
    rd *r = ud;
    flush_line(r, NULL, 0);
    if (r->out.status != HSCOPE_OK)
        return 1;
    if (r->user_fn && r->user_fn(r->user_ud, line, len, lineno))
        return 1;
    if (len >= SIZE_MAX ||
        (r->st = hscope__grow(r->mem, (void **)&r->line, &r->cap, (size_t)len + 1, 1,
                              r->err)) != HSCOPE_OK)
        return 1;
    memcpy(r->line, line, (size_t)len);
    r->len = (size_t)len;
    r->pending = 1;
    r->lines++;
    return 0;
}

static hscope_status
record_sink(void *ud, hscope__builder *b, const hscope__objrec *o, hscope_error *err)
{
    (void)b, (void)err;
    rd *r = ud;
    /* the line is written now that the parser's reading of its value is
     * known: the placeholder's length and hash are those of the decoded
     * value, the bytes heapscope compares (waste) */
    flush_line(r, o->has_value ? o->value : NULL, o->has_value ? (size_t)o->value_len : 0);
    return HSCOPE_OK;
}

/* What the pass saw, as a load's statistics. */
static void
pass_stats(hscope_redact_t *rr, const hscope__builder *b, uint64_t in_bytes, int gz,
           uint64_t ns)
{
    hscope__stream_stats(b, in_bytes, gz, ns, &rr->stats);
    for (int k = 0; k < HSCOPE_SKIP__COUNT; k++)
        rr->skipped[k] = b->skipped[k];
}

/* Read `in` through the hooks into r's output; the output is finished
 * (gzip trailer, buffer flushed) here. */
static hscope_status
pass(hscope_redact_t *rr, rd *r, const char *in, const hscope_load_options *lo,
     hscope_error *err)
{
    hscope_load_options o = *lo;
    /* every line is copied, whatever its length: a line the parser skips
     * as too long is copied too (max_memory still bounds the memory) */
    o.max_line_bytes = UINT64_MAX;
    o.threads = 1;
    o.flags &= ~(uint32_t)(HSCOPE_LOAD_VALUES | HSCOPE_LOAD_USE_INDEX);
    r->user_fn = lo->line_fn;
    r->user_ud = lo->line_user_data;
    o.line_fn = line_hook;
    o.line_user_data = r;
    hscope__builder b;
    uint64_t in_bytes = 0, t0 = hscope__now_ns();
    int gz = 0;
    hscope__stream_sinks ss = { record_sink, NULL, NULL, r, 1 };
    hscope_status st = hscope__heap_stream(&b, r->mem, in, &o, &ss, &in_bytes, &gz, err);
    if (st == HSCOPE_OK)
        flush_line(r, NULL, 0);
    pass_stats(rr, &b, in_bytes, gz, hscope__now_ns() - t0);
    hscope__heap_stream_end(&b);
    if (r->st != HSCOPE_OK)
        st = r->st; /* the hook's own error, not "cancelled" */
    if (st == HSCOPE_OK && r->gz) {
        int zs;
        do {
            zs = deflate(&r->z, Z_FINISH);
            hscope__out_write(&r->out, r->zbuf, ZBUF - r->z.avail_out);
            r->z.next_out = r->zbuf;
            r->z.avail_out = (uInt)ZBUF;
        } while (zs == Z_OK && r->out.status == HSCOPE_OK);
        if (zs != Z_STREAM_END && r->out.status == HSCOPE_OK)
            r->out.status = hscope__fail(err, HSCOPE_ERR_IO, "gzip: deflate failed");
    }
    hscope_status ost = hscope__out_finish(&r->out);
    if (st == HSCOPE_OK || (st == HSCOPE_ERR_CANCELLED && ost != HSCOPE_OK))
        st = ost; /* a failed write cancels the pass: say the write */
    rr->lines = r->lines;
    rr->values = r->values;
    rr->kept = r->kept;
    return st;
}

void
hscope__redact_free(hscope_redact_t *rr)
{
    if (!rr)
        return;
    hscope__mem m = rr->mem;
    hscope__free(&m, rr);
}

hscope_status
hscope__redact_to(hscope_redact_t **out, const char *in, const hscope_load_options *lo,
                  const hscope_redact_options *ro, hscope_write_fn write, void *ud,
                  hscope_error *err)
{
    hscope__mem m;
    hscope__mem_init(&m, lo->allocator, lo->max_memory);
    hscope_redact_t *rr = hscope__calloc(&m, 1, sizeof(*rr));
    if (!rr)
        return hscope__nomem(err, sizeof(*rr));
    rd r;
    memset(&r, 0, sizeof(r));
    r.mem = &rr->mem;
    rr->mem = m;
    r.err = err;
    r.gz = (ro->flags & HSCOPE_REDACT_GZIP) != 0;
    hscope__out_init(&r.out, write, ud, err);
    hscope_status st = HSCOPE_OK;
    if (r.gz) {
        if (!(r.zbuf = hscope__malloc(r.mem, ZBUF)))
            st = hscope__nomem(err, ZBUF);
        else if (deflateInit2(&r.z, ro->gzip_level ? ro->gzip_level : 6, Z_DEFLATED, 15 + 16,
                              8, Z_DEFAULT_STRATEGY) != Z_OK)
            st = hscope__nomem(err, 256 << 10);
        r.z.next_out = r.zbuf;
        r.z.avail_out = (uInt)ZBUF;
    }
    if (st == HSCOPE_OK)
        st = pass(rr, &r, in, lo, err);
    if (r.gz && r.zbuf)
        deflateEnd(&r.z);
    hscope__free(r.mem, r.zbuf);
    hscope__free(r.mem, r.line);
    if (st != HSCOPE_OK || !out) {
        hscope__redact_free(rr);
        return st;
    }
    *out = rr;
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* to a file                                                           */
/* ------------------------------------------------------------------ */

static int32_t
fd_write(void *ud, const char *data, uint64_t len)
{
    int fd = *(int *)ud;
    while (len) {
        ssize_t w = write(fd, data, (size_t)len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        data += w;
        len -= (uint64_t)w;
    }
    return 0;
}

/* OUT opened for writing: a regular OUT as a temporary file beside it
 * (*tmp, renamed at the end, so an existing OUT is replaced only by a
 * complete copy); anything else (/dev/stdout, a pipe) directly. */
static hscope_status
open_out(hscope__mem *m, const char *path, int exists, const struct stat *so, char **tmp,
         int *fd, hscope_error *err)
{
    *tmp = NULL;
    if (exists && !S_ISREG(so->st_mode)) {
        if ((*fd = open(path, O_WRONLY)) < 0)
            return hscope__fail_errno(err, errno, "cannot open %s", path);
        return HSCOPE_OK;
    }
    size_t ol = strlen(path);
    if (!(*tmp = hscope__malloc(m, ol + 16)))
        return hscope__nomem(err, ol + 16);
    snprintf(*tmp, ol + 16, "%s.tmp.XXXXXX", path);
    if ((*fd = mkstemp(*tmp)) < 0) {
        hscope_status st = hscope__fail_errno(err, errno, "cannot create %s", *tmp);
        hscope__free(m, *tmp);
        *tmp = NULL;
        return st;
    }
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(*fd, 0666 & ~um); /* mkstemp makes 0600; OUT is for sharing */
    return HSCOPE_OK;
}

hscope_status
hscope__redact_file(hscope_redact_t **out, const char *in, const char *path,
                    const hscope_load_options *lo, const hscope_redact_options *ro,
                    hscope_error *err)
{
    /* the same file under another name (./IN, a link) must not be
     * truncated by opening OUT: compare the files, not the names */
    struct stat si, so;
    int exists = stat(path, &so) == 0;
    if (strcmp(in, path) == 0 ||
        (exists && stat(in, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino))
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "OUT is the same file as IN (%s)",
                            path);
    hscope__mem m;
    hscope__mem_init(&m, lo->allocator, 0);
    char *tmp;
    int fd;
    hscope_status st = open_out(&m, path, exists, &so, &tmp, &fd, err);
    if (st != HSCOPE_OK)
        return st;
    hscope_redact_options o = *ro;
    size_t ol = strlen(path);
    if (ol > 3 && strcmp(path + ol - 3, ".gz") == 0)
        o.flags |= HSCOPE_REDACT_GZIP;
    hscope_redact_t *rr = NULL;
    st = hscope__redact_to(&rr, in, lo, &o, fd_write, &fd, err);
    if (close(fd) != 0 && st == HSCOPE_OK)
        st = hscope__fail_errno(err, errno, "cannot write %s", path);
    if (st == HSCOPE_OK && tmp && rename(tmp, path) != 0)
        st = hscope__fail_errno(err, errno, "cannot create %s", path);
    if (st != HSCOPE_OK && tmp)
        unlink(tmp); /* OUT itself is untouched */
    hscope__free(&m, tmp);
    if (st != HSCOPE_OK || !out) {
        hscope__redact_free(rr);
        return st;
    }
    *out = rr;
    return HSCOPE_OK;
}
