/*
 * cli_util.c - helpers the commands share: usage errors and --help, the
 * load options, the library's number formats for the commands' own
 * messages (index, "report: wrote FILE (SIZE)"), damage (in the library's
 * words) on stderr, and the output helpers of timeline, histogram, export,
 * diff --grew and report.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char *prog = "heapscope";

int
hscope_cli_usage_error(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n%s", usage);
    return HSCOPE_CLI_EXIT_USAGE;
}

int
hscope_cli_parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    uint64_t mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1ull << 10; end++; break;
    case 'm': case 'M': mul = 1ull << 20; end++; break;
    case 'g': case 'G': mul = 1ull << 30; end++; break;
    default: break;
    }
    if (*end || (v && mul > UINT64_MAX / v))
        return -1;
    *out = v * mul;
    return 0;
}

int
hscope_cli_load_option(hscope_load_options *lo, int argc, char **argv, int *i,
                       const char *usage)
{
    const char *a = argv[*i];
    if (strcmp(a, "--strict") == 0) {
        lo->flags |= HSCOPE_LOAD_STRICT;
        return 1;
    }
    if (strcmp(a, "--no-progress") == 0)
        return 1;
    uint64_t *dst = NULL;
    if (strcmp(a, "--max-line") == 0)
        dst = &lo->max_line_bytes;
    else if (strcmp(a, "--max-memory") == 0)
        dst = &lo->max_memory;
    if (!dst)
        return 0;
    if (*i + 1 >= argc) {
        hscope_cli_usage_error(usage, "%s needs a value", a);
        return -1;
    }
    if (hscope_cli_parse_size(argv[++*i], dst) != 0 || *dst == 0) {
        hscope_cli_usage_error(usage, "bad size '%s'", argv[*i]);
        return -1;
    }
    return 1;
}

void
hscope_cli_human_bytes(double b, char *buf, size_t n)
{
    /* whole bytes: a fractional slope rounds to the byte first */
    hscope_format_bytes(b >= 9.2e18 ? INT64_MAX : b <= -9.2e18 ? INT64_MIN : llround(b), buf, n);
}

void
hscope_cli_grouped(uint64_t v, char *buf, size_t n)
{
    hscope_format_count(v, buf, n);
}

/* The library is asked, so that no list of its keys is kept here to drift
 * from it. */
int
hscope_cli_valid_key(const char *by)
{
    return hscope_tally_key_valid(by);
}

int
hscope_cli_parse_address(const char *s, uint64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !isxdigit((unsigned char)s[2]))
        return -1;
    s += 2;
    uint64_t v = 0;
    int digits = 0;
    for (; isxdigit((unsigned char)*s); s++, digits++) {
        if (digits == 16)
            return -1;
        int c = (unsigned char)*s;
        v = v << 4 | (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s)
        return -1;
    *out = v;
    return 0;
}

int
hscope_cli_bad_address(const char *usage, const char *arg)
{
    return hscope_cli_usage_error(usage, "'%s' is not an address: addresses are hex with "
                                         "0x, as in the dump (0x7f2a3c4d5e60)", arg);
}

void
hscope_cli_warn_text(const char *text)
{
    while (text && *text) {
        const char *nl = strchr(text, '\n');
        int n = nl ? (int)(nl - text) : (int)strlen(text);
        fprintf(stderr, "%s: warning: %.*s\n", prog, n, text);
        text += n + (nl != NULL);
    }
}

void
hscope_cli_warn_damage(const char *path, const hscope_load_stats *s,
                       const uint64_t skipped[HSCOPE_SKIP__COUNT])
{
    char text[1024]; /* two messages of the library's at most */
    hscope_load_warnings_text(path, s, skipped, HSCOPE_SKIP__COUNT, text, sizeof(text));
    hscope_cli_warn_text(text);
}

void
hscope_cli_warn_tally_damage(const char *path, const hscope_tally_t *t)
{
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    uint64_t sk[HSCOPE_SKIP__COUNT];
    if (hscope_tally_stats(t, &s) != HSCOPE_OK)
        return;
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        sk[r] = hscope_tally_skipped(t, r);
    hscope_cli_warn_damage(path, &s, sk);
}

void
hscope_cli_warn_heap_damage(const char *path, const hscope_heap_t *h)
{
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    uint64_t sk[HSCOPE_SKIP__COUNT];
    if (hscope_heap_stats(h, &s) != HSCOPE_OK)
        return;
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        sk[r] = hscope_heap_skipped(h, r);
    hscope_cli_warn_damage(path, &s, sk);
}

/* ------------------------------------------------------------------ */
/* memory over time: timeline, histogram, export, diff --grew          */
/* ------------------------------------------------------------------ */

int32_t
hscope_cli_write_file(void *user_data, const char *data, uint64_t len)
{
    return fwrite(data, 1, (size_t)len, user_data) == len ? 0 : -1;
}

void
hscope_cli_ascii(hscope_report_options *ro)
{
    const char *v = getenv("LC_ALL");
    if (!v || !*v)
        v = getenv("LC_CTYPE");
    if (!v || !*v)
        v = getenv("LANG");
    if (!(v && (strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "UTF8") ||
                strstr(v, "utf8"))))
        ro->flags |= HSCOPE_REPORT_ASCII;
}

/*
 * An earlier output file is replaced, not truncated: on ext4 the close of a
 * file truncated to nothing and written again flushes it to disk
 * (auto_da_alloc; 0.08 s for the 160 MB heap snapshot of a 1 GB dump).  So
 * a plain file of ours with one link is renamed aside (.NAME.old beside
 * it), OUT is created anew with its permission bits, and the old file is
 * unlinked on a thread while OUT is written (freeing its pages and blocks
 * takes about as long as that flush); hscope_cli_close_out waits for it.  A
 * symbolic link, a file with other links, a FIFO or device, a file of
 * another user, or a failing step: fopen "w", written through as before.
 * (The library's export replaces its tables the same way.)
 */
static struct {
    char *path; /* the file set aside, while its thread unlinks it */
    pthread_t th;
} aside_job;

static void *
unlink_aside(void *arg)
{
    (void)unlink(arg);
    return NULL;
}

static void
aside_wait(void)
{
    if (aside_job.path) {
        pthread_join(aside_job.th, NULL);
        free(aside_job.path);
        aside_job.path = NULL;
    }
}

static FILE *
open_fresh(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
        st.st_uid != geteuid())
        return NULL;
    aside_wait();
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    size_t len = strlen(path) + 6;
    char *aside = malloc(len);
    if (!aside)
        return NULL;
    snprintf(aside, len, "%.*s.%s.old", (int)dl, path, path + dl);
    FILE *f = NULL;
    int gone = 1; /* the aside is not there (any more) */
    if (rename(path, aside) == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
        if (fd >= 0) {
            (void)fchmod(fd, st.st_mode & 07777); /* as it was, whatever the umask */
            if (!(f = fdopen(fd, "w")))
                close(fd);
        }
        /* no new file: the old one back (truncated by the caller's fopen) */
        gone = fd < 0 && rename(aside, path) == 0;
    }
    if (!gone && pthread_create(&aside_job.th, NULL, unlink_aside, aside) == 0) {
        aside_job.path = aside;
        return f;
    }
    if (!gone)
        (void)unlink(aside);
    free(aside);
    return f;
}

FILE *
hscope_cli_open_out(const char *path)
{
    if (!path)
        return stdout;
    FILE *f = open_fresh(path);
    if (!f)
        f = fopen(path, "w");
    if (!f) {
        int e = errno;
        aside_wait();
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(e));
    }
    return f;
}

int
hscope_cli_close_out(FILE *f, const char *path, hscope_status st, const hscope_error *err)
{
    int bad = st != HSCOPE_OK;
    if (bad && st != HSCOPE_ERR_IO)
        fprintf(stderr, "%s: %s\n", prog, err->message);
    bad |= ferror(f) != 0;
    bad |= (path ? fclose(f) : fflush(f)) != 0;
    aside_wait();
    if (bad && (st == HSCOPE_OK || st == HSCOPE_ERR_IO))
        fprintf(stderr, "%s: write error on %s\n", prog, path ? path : "standard output");
    return bad ? HSCOPE_CLI_EXIT_BAD_INPUT : 0;
}

int
hscope_cli_write_result(hscope_cli_writer fn, const void *result, hscope_report_options *ro,
                        const char *svg_path)
{
    hscope_error err = HSCOPE_ERROR_INIT;
    int rc = hscope_cli_close_out(stdout, NULL,
                                  fn(result, ro, hscope_cli_write_file, stdout, &err), &err);
    if (svg_path) {
        FILE *f = hscope_cli_open_out(svg_path);
        if (!f)
            return HSCOPE_CLI_EXIT_BAD_INPUT;
        ro->format = HSCOPE_FORMAT_SVG;
        rc |= hscope_cli_close_out(f, svg_path,
                                   fn(result, ro, hscope_cli_write_file, f, &err), &err);
    }
    return rc;
}

void
hscope_cli_warn_timeline(const hscope_timeline_t *tl)
{
    for (uint64_t i = 0; i < hscope_timeline_dump_count(tl); i++) {
        hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
        uint64_t sk[HSCOPE_SKIP__COUNT];
        if (hscope_timeline_dump_stats(tl, i, &s) != HSCOPE_OK)
            continue;
        for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
            sk[r] = hscope_timeline_dump_skipped(tl, i, r);
        hscope_cli_warn_damage(hscope_timeline_dump_path(tl, i), &s, sk);
    }
    hscope_cli_warn_text(hscope_timeline_warning_text(tl));
}
