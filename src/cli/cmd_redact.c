/*
 * cmd_redact.c - heapscope redact: a copy of a dump with every string
 * value replaced by its length and a hash, safe to share.
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

#include "opts.h"

static const char *prog = "heapscope";

static const char usage[] =
    "usage: heapscope redact [load options] IN OUT\n"
    "\n"
    "Write a copy of a dump that is safe to share: every string value (the\n"
    "\"value\" of STRING, SYMBOL and FLOAT records: tokens, passwords, personal\n"
    "data) is replaced by its length and an xxHash64 of its bytes, e.g.\n"
    "  \"value\":\"[redacted 22 bytes xxh64:5b1f0c...]\"\n"
    "and every other byte stays the same, so heapscope's answers on the copy\n"
    "equal those on the original (but for the dump's size).  IN may be gzip;\n"
    "OUT is gzip if\n"
    "its name ends in .gz.  Equal strings keep equal hashes (duplicates stay\n"
    "visible).  Length and hash are those of the text as the dump writes it\n"
    "(JSON escapes included).  Every line is copied, whatever its length\n"
    "(--max-line has no effect; --max-memory bounds the memory).  A regular\n"
    "OUT is written beside itself as OUT.tmp.XXXXXX and renamed when\n"
    "complete, so an existing OUT is replaced only by a whole copy; others\n"
    "(/dev/stdout, a pipe) are written to directly.  OUT must not be IN\n"
    "under any name.  One pass on one thread: --threads, --no-index and -v\n"
    "have no effect.\n";

typedef struct redactor {
    gzFile gz;
    FILE *f;
    uint64_t values, lines;
    int failed;
} redactor;

static void
rd_write(redactor *r, const char *p, size_t n)
{
    if (!n || r->failed)
        return;
    if (r->gz ? gzwrite(r->gz, p, (unsigned)n) != (int)n : fwrite(p, 1, n, r->f) != n)
        r->failed = 1;
}

/* Past JSON whitespace (the line's '\n' is not in [q, end)). */
static const char *
skip_blanks(const char *q, const char *end)
{
    while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
        q++;
    return q;
}

static int32_t
redact_line(void *ud, const char *line, uint64_t len, uint64_t lineno)
{
    (void)lineno;
    redactor *r = ud;
    const char *p = line, *end = line + len, *v;
    static const char key[] = "\"value\"";
    r->lines++;
    /* "value", optional whitespace, ':', optional whitespace, '"': Ruby
     * writes "value":"...", but any JSON spacing must be redacted too.
     * Inside a JSON string every quote is escaped, so the key cannot
     * match there. */
    const char *from = p;
    while ((v = memmem(from, (size_t)(end - from), key, sizeof(key) - 1)) != NULL) {
        const char *q = skip_blanks(v + sizeof(key) - 1, end);
        if (q >= end || *q != ':' || (q = skip_blanks(q + 1, end)) >= end || *q != '"') {
            from = v + 1; /* not the key of a string value: search on */
            continue;
        }
        const char *b = q + 1;
        q = b;
        while (q < end && *q != '"')
            q += (*q == '\\' && q + 1 < end) ? 2 : 1;
        if (q >= end)
            break; /* unterminated (cut line): leave as is */
        char rep[96];
        int n = snprintf(rep, sizeof(rep), "[redacted %llu bytes xxh64:%016llx]",
                         (unsigned long long)(q - b),
                         (unsigned long long)XXH64(b, (size_t)(q - b), 0));
        rd_write(r, p, (size_t)(b - p)); /* up to the opening quote */
        rd_write(r, rep, (size_t)n);
        r->values++;
        p = from = q; /* the closing quote is copied with the rest */
    }
    rd_write(r, p, (size_t)(end - p));
    rd_write(r, "\n", 1);
    return r->failed;
}


/* OUT opened for writing: a regular OUT as a temporary file beside it
 * (*tmp, renamed at the end, so an existing OUT is replaced only by a
 * complete copy); anything else (/dev/stdout, a pipe) directly.  -1 on
 * failure (said). */
static int
open_out(const char *out, int out_exists, const struct stat *so, char **tmp)
{
    *tmp = NULL;
    if (out_exists && !S_ISREG(so->st_mode)) {
        int fd = open(out, O_WRONLY);
        if (fd < 0)
            fprintf(stderr, "%s: cannot open %s: %s\n", prog, out, strerror(errno));
        return fd;
    }
    size_t ol = strlen(out);
    if (!(*tmp = malloc(ol + 16))) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return -1;
    }
    snprintf(*tmp, ol + 16, "%s.tmp.XXXXXX", out);
    int fd = mkstemp(*tmp);
    if (fd < 0) {
        fprintf(stderr, "%s: cannot create %s: %s\n", prog, *tmp, strerror(errno));
        free(*tmp);
        *tmp = NULL;
        return -1;
    }
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(fd, 0666 & ~um); /* mkstemp makes 0600; OUT is for sharing */
    return fd;
}

/* Copy IN through the line hook into rd; 0 or an exit status. */
static int
copy(hscope_cli_opts *o, const char *in, const char *out, redactor *rd)
{
    /* every line is copied, whatever its length: a line the loader skips
     * as too long would never reach the hook and be lost from the copy
     * (--max-memory still bounds the memory) */
    o->lo.max_line_bytes = UINT64_MAX;
    o->lo.line_fn = redact_line;
    o->lo.line_user_data = rd;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    /* a streaming fold reads every line through the hook with bounded memory */
    hscope_status st = hscope_tally_file(&t, in, "type", &o->lo, &to, &err);
    if (st == HSCOPE_OK)
        hscope_cli_warn_tally_damage(in, t); /* damaged lines are still copied, redacted as text */
    hscope_tally_free(t);
    int closed = rd->gz ? gzclose(rd->gz) == Z_OK : fclose(rd->f) == 0;
    if (st != HSCOPE_OK || rd->failed || !closed) {
        fprintf(stderr, "%s: redact: %s\n", prog, st != HSCOPE_OK ? err.message : "write error");
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    (void)out;
    return 0;
}

static int
redact(hscope_cli_opts *o, const char *in, const char *out)
{
    /* the same file under another name (./IN, a link) must not be
     * truncated by opening OUT: compare the files, not the names */
    struct stat si, so;
    int out_exists = stat(out, &so) == 0;
    if (strcmp(in, out) == 0 ||
        (out_exists && stat(in, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino))
        return hscope_cli_usage_error(usage, "OUT is the same file as IN (%s)", out);
    size_t ol = strlen(out);
    char *tmp;
    int fd = open_out(out, out_exists, &so, &tmp);
    if (fd < 0)
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    int rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    redactor rd = { NULL, NULL, 0, 0, 0 };
    if (ol > 3 && strcmp(out + ol - 3, ".gz") == 0)
        rd.gz = gzdopen(fd, "wb6");
    else
        rd.f = fdopen(fd, "wb");
    if (!rd.gz && !rd.f) {
        fprintf(stderr, "%s: cannot create %s: %s\n", prog, out, strerror(errno));
        close(fd);
    } else if ((rc = copy(o, in, out, &rd)) == 0) {
        if (tmp && rename(tmp, out) != 0) {
            fprintf(stderr, "%s: cannot create %s: %s\n", prog, out, strerror(errno));
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
        } else {
            fprintf(stderr, "%s: %s: %llu lines, %llu string values redacted\n", prog, out,
                    (unsigned long long)rd.lines, (unsigned long long)rd.values);
        }
    }
    if (rc && tmp)
        unlink(tmp); /* OUT itself is untouched */
    free(tmp);
    return rc;
}

int
hscope_cli_redact(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    hscope_cli_opts o;
    hscope_cli_opts_init(&o, "redact", usage, 0, 0);
    const char *io[2];
    hscope_cli_args a = { NULL, NULL, io, 0, 2, "IN and OUT only ('%s' is extra)" };
    int rc = hscope_cli_parse_args(&o, &a, argc, argv);
    if (rc)
        return rc;
    if (a.n != 2)
        return hscope_cli_usage_error(usage, "need IN and OUT%s", "");
    return redact(&o, io[0], io[1]);
}
