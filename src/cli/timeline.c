/*
 * timeline.c - "memory over time": heapscope timeline and heapscope
 * histogram, plus the helpers the other cli.h commands share (option
 * parsing, ordering dumps in time).
 *
 * timeline folds every dump with hscope_tally_file() (streaming, memory
 * bounded by the number of groups) on a pool of threads, merges the group
 * totals into one series per group, fits a least-squares line to each
 * series and ranks the groups: growing ones first, steepest first.
 *
 * See docs/TIMELINE.md for the rules (dump order, the "growing" verdict).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "json_out.h"

static const char *prog = "heapscope";

/* The "growing" verdict (documented in docs/TIMELINE.md and --help). */
#define GROW_MIN_DUMPS 3
#define GROW_MIN_R2 0.8
#define GROW_MIN_RISE_FRACTION 0.02   /* of the group's mean */
#define GROW_MIN_RISE_COUNT 10.0      /* objects */
#define GROW_MIN_RISE_BYTES 4096.0    /* bytes of memsize */

/* Lines in the SVG plot at most. */
#define SVG_MAX_LINES 12

static const char load_opts_help[] =
    "Load options:\n"
    "  --strict             stop at the first malformed line (default: skip\n"
    "                       and count malformed lines)\n"
    "  --max-line BYTES     longest accepted line (default 1 GiB; suffixes K M G)\n"
    "  --max-memory BYTES   fail instead of allocating more than this (per dump;\n"
    "                       suffixes K M G)\n"
    "  --no-progress        accepted for symmetry with the other commands\n";

static const char usage_timeline[] =
    "usage: heapscope timeline [--by KEY] [--metric memsize|count] [--top N]\n"
    "                          [--svg FILE] [--csv | --json] [--threads N]\n"
    "                          [--order auto|name|mtime|given] [--keep-dumper]\n"
    "                          [load options] DUMP...\n"
    "\n"
    "What grows over time.  Each dump is folded into totals per group without\n"
    "building the object graph (memory bounded by the number of groups; dumps\n"
    "are read in parallel), the dumps are put in time order, and a least-\n"
    "squares line is fitted to each group's series.  A group is growing when\n"
    "there are at least 3 dumps, the slope is positive, R^2 >= 0.8, the last\n"
    "value is above the first, and the fitted rise over the series (slope x\n"
    "(dumps - 1)) is at least max(10 objects or 4 KB of memsize, 2% of the\n"
    "group's mean).  Growing groups come first, then by slope x R^2.\n"
    "\n"
    "  --by KEY        type (default), class, file, file:line, file:line:class,\n"
    "                  gem, method or generation\n"
    "  --metric WHAT   memsize (default) or count: the series that is fitted\n"
    "  --top N         groups to show (default 20; 0 = all)\n"
    "  --svg FILE      also write an SVG plot of the first groups (at most 12)\n"
    "  --csv           CSV, one row per group and dump:\n"
    "                  rank,key,step,dump,time,count,memsize,growing\n"
    "  --json          {\"order\", \"dumps\", \"warnings\", \"excluded_dumper_objects\",\n"
    "                  \"groups\": [{\"key\", \"series\", \"slope_per_step\",\n"
    "                  \"slope_per_hour\", \"r2\", \"growing\"}]}\n"
    "  --keep-dumper   keep the objects the dumper itself allocated (default: left\n"
    "                  out of every dump and counted)\n"
    "  --threads N     dumps folded at once (default: the number of cores)\n"
    "  --order HOW     auto (default), name, mtime or given\n"
    "\n"
    "Dump order (auto), the first rule that gives every dump a distinct value:\n"
    "  name-time  a date-time (2024-05-01T12:00:00, 20240501-120000) or an\n"
    "             epoch (9-11 digits: seconds, 12-14 digits: milliseconds) in\n"
    "             every file name; else the last number in every name\n"
    "             (step_03.json -> 3, heapscope.PID.N.json.gz -> N)\n"
    "  mtime      the files' modification times\n"
    "  given      the order on the command line\n"
    "Slopes per hour are given when times are known (date-time, epoch, mtime).\n"
    "Consecutive dumps are checked as a series (stderr, JSON \"warnings\"): the\n"
    "same dump twice, dumps of different processes (< 5% of objects shared) and\n"
    "an order that runs backwards (newest generation or mtime going down).\n";

static const char usage_histogram[] =
    "usage: heapscope histogram [--by type|class] [--top N] [--sort memsize|count]\n"
    "                           [--svg FILE] [--json] [--keep-dumper] [load options]\n"
    "                           DUMP\n"
    "\n"
    "Memsize and object count per type (default) or class of one dump, as\n"
    "bars, largest first.  The dump is folded without building the object\n"
    "graph.  --by also takes the other tally keys (file, file:line, gem...).\n"
    "\n"
    "  --by KEY       type (default), class, or another tally key\n"
    "  --top N        rows (default 20; 0 = all)\n"
    "  --sort WHAT    memsize (default) or count\n"
    "  --svg FILE     also write the bars as an SVG chart\n"
    "  --json         {\"dump\", \"by\", \"total_count\", \"total_memsize\",\n"
    "                 \"excluded_dumper_objects\", \"rows\": [{\"key\", \"count\",\n"
    "                 \"memsize\"}]}\n"
    "  --keep-dumper  keep the objects the dumper itself allocated (default: left\n"
    "                 out and counted)\n";

/* ------------------------------------------------------------------ */
/* shared helpers                                                     */
/* ------------------------------------------------------------------ */

int
hscope_cli_usage_error(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n%s", usage);
    return HSCOPE_CLI_EXIT_USAGE;
}

int
hscope_cli_want_help(int argc, char **argv, const char *usage)
{
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage, stdout);
            fputs("\n", stdout);
            fputs(load_opts_help, stdout);
            return 1;
        }
    }
    return 0;
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
    static const char *const u[] = { "B", "KB", "MB", "GB", "TB" };
    const char *sign = b < 0 ? "-" : "";
    double v = fabs(b);
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, n, "%s%.0f B", sign, v);
    else
        snprintf(buf, n, "%s%.1f %s", sign, v, u[i]);
}

void
hscope_cli_grouped(uint64_t v, char *buf, size_t n)
{
    char tmp[32];
    snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
    size_t len = strlen(tmp), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
}

int
hscope_cli_valid_key(const char *by)
{
    static const char *const keys[] = { "type", "class", "file", "file:line",
        "file:line:class", "method", "generation", "gem" };
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        if (strcmp(keys[k], by) == 0)
            return 1;
    return 0;
}

const char *
hscope_cli_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
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
    if (!s->skipped_lines && !s->truncated)
        return;
    char why[256] = "";
    size_t len = 0;
    for (int r = 0; r < HSCOPE_SKIP__COUNT && len < sizeof(why); r++)
        if (skipped[r])
            len += (size_t)snprintf(why + len, sizeof(why) - len, "%s%s %llu", len ? ", " : "",
                                    hscope_skip_reason_name(r), (unsigned long long)skipped[r]);
    fprintf(stderr, "%s: warning: %s: ", prog, path);
    if (s->skipped_lines)
        fprintf(stderr, "%llu of %llu lines skipped (%s)%s", (unsigned long long)s->skipped_lines,
                (unsigned long long)s->lines, why, s->truncated ? "; " : "");
    if (s->truncated)
        fputs("the dump is truncated (it ends in the middle of a record or gzip stream)", stderr);
    if (s->skipped_lines * 2 > s->lines)
        fputs("; most lines could not be read: is this really a heap dump?", stderr);
    fputs("\n", stderr);
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

void
hscope_cli_dumper_note(FILE *f, uint64_t n)
{
    if (n)
        fprintf(f, "left out: %llu object%s allocated by the dumper itself (--keep-dumper "
                   "keeps them)\n", (unsigned long long)n, n == 1 ? "" : "s");
}

/* ------------------------------------------------------------------ */
/* ordering dumps in time                                             */
/* ------------------------------------------------------------------ */

/* n decimal digits at s -> *v; 0 if not all digits. */
static int
digits(const char *s, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 1;
}

/* A date and time in a file name (see cli.h); the last one counts. */
static int
name_datetime(const char *name, double *out)
{
    size_t len = strlen(name);
    int found = 0;
    for (size_t p = 0; p + 8 <= len; p++) {
        if (!isdigit((unsigned char)name[p]) ||
            (p > 0 && isdigit((unsigned char)name[p - 1])))
            continue;
        const char *s = name + p;
        int Y, M, D, h = 0, mi = 0, sec = 0;
        size_t q = 4;
        int dashed = 0;
        if (!digits(s, 4, &Y) || Y < 2000 || Y > 2099)
            continue;
        if (s[q] == '-') {
            dashed = 1;
            q++;
        }
        if (!digits(s + q, 2, &M))
            continue;
        q += 2;
        if (dashed) {
            if (s[q] != '-')
                continue;
            q++;
        }
        if (!digits(s + q, 2, &D))
            continue;
        q += 2;
        if (M < 1 || M > 12 || D < 1 || D > 31)
            continue;
        /* optional time part */
        size_t r = q;
        int have_time = 0;
        int sep_ok = 0;
        if (s[r] == 'T' || s[r] == '_' || s[r] == '-' || s[r] == ' ' || s[r] == '.') {
            r++;
            sep_ok = 1;
        } else if (!dashed && isdigit((unsigned char)s[r])) {
            sep_ok = 1; /* YYYYMMDDHHMMSS */
        }
        if (sep_ok && digits(s + r, 2, &h)) {
            size_t u = r + 2;
            char ts = 0;
            if (s[u] == ':' || s[u] == '-' || s[u] == '.') {
                ts = s[u];
                u++;
            }
            if (digits(s + u, 2, &mi)) {
                u += 2;
                int ok = 1;
                if (ts) {
                    if (s[u] == ts)
                        u++;
                    else
                        ok = 0;
                }
                if (ok && digits(s + u, 2, &sec)) {
                    u += 2;
                    if (!isdigit((unsigned char)s[u]) && h < 24 && mi < 60 && sec <= 60) {
                        have_time = 1;
                        q = u;
                    }
                }
            }
        }
        if (!have_time) {
            h = mi = sec = 0;
            if (isdigit((unsigned char)s[q]))
                continue; /* a longer number, not a date */
        }
        struct tm tm;
        memset(&tm, 0, sizeof(tm));
        tm.tm_year = Y - 1900;
        tm.tm_mon = M - 1;
        tm.tm_mday = D;
        tm.tm_hour = h;
        tm.tm_min = mi;
        tm.tm_sec = sec;
        time_t t = timegm(&tm);
        if (t == (time_t)-1)
            continue;
        *out = (double)t;
        found = 1;
        p += q - 1;
    }
    return found;
}

/* An epoch in seconds or milliseconds in a file name (see cli.h); the last
 * such run of digits counts. */
static int
name_epoch(const char *name, double *out, int *ms)
{
    int found = 0;
    for (const char *p = name; *p;) {
        if (!isdigit((unsigned char)*p)) {
            p++;
            continue;
        }
        const char *s = p;
        while (isdigit((unsigned char)*p))
            p++;
        size_t n = (size_t)(p - s);
        if (n < 9 || n > 14)
            continue;
        double v = 0;
        for (const char *c = s; c < p; c++)
            v = v * 10 + (*c - '0');
        if (n <= 11 && v >= 946684800.0 && v < 4102444800.0) {
            *out = v;
            *ms = 0;
            found = 1;
        } else if (n >= 12 && v >= 946684800000.0 && v < 4102444800000.0) {
            *out = v / 1000.0;
            *ms = 1;
            found = 1;
        }
    }
    return found;
}

/* The last run of digits of a name. */
static int
name_sequence(const char *name, uint64_t *out)
{
    const char *end = NULL, *start = NULL;
    for (const char *p = name; *p; p++)
        if (isdigit((unsigned char)*p)) {
            if (!end || p != end)
                start = p;
            end = p + 1;
        }
    if (!start)
        return 0;
    while (start < end - 1 && *start == '0')
        start++;
    if (end - start > 19)
        return 0;
    uint64_t v = 0;
    for (const char *c = start; c < end; c++)
        v = v * 10 + (uint64_t)(*c - '0');
    *out = v;
    return 1;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int
cmp_u64v(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int
distinct_doubles(const double *v, size_t n)
{
    double *c = malloc((n ? n : 1) * sizeof(double));
    if (!c)
        return 0;
    memcpy(c, v, n * sizeof(double));
    qsort(c, n, sizeof(double), cmp_double);
    int ok = 1;
    for (size_t i = 1; i < n; i++)
        if (c[i] == c[i - 1])
            ok = 0;
    free(c);
    return ok;
}

static int
distinct_u64(const uint64_t *v, size_t n)
{
    uint64_t *c = malloc((n ? n : 1) * sizeof(uint64_t));
    if (!c)
        return 0;
    memcpy(c, v, n * sizeof(uint64_t));
    qsort(c, n, sizeof(uint64_t), cmp_u64v);
    int ok = 1;
    for (size_t i = 1; i < n; i++)
        if (c[i] == c[i - 1])
            ok = 0;
    free(c);
    return ok;
}

static int
cmp_dump(const void *a, const void *b)
{
    const hscope_cli_dump *x = a, *y = b;
    if (x->has_time && y->has_time && x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->given - y->given;
}

int
hscope_cli_order_dumps(hscope_cli_dump *d, size_t n, const char *force,
                       hscope_cli_order *out, char *errbuf, size_t errlen)
{
    int want_name = 1, want_mtime = 1;
    if (force && strcmp(force, "auto") != 0) {
        want_name = strcmp(force, "name") == 0;
        want_mtime = strcmp(force, "mtime") == 0;
    }
    double *t = calloc(n ? n : 1, sizeof(double));
    uint64_t *s = calloc(n ? n : 1, sizeof(uint64_t));
    if (!t || !s) {
        free(t);
        free(s);
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        d[i].given = (int)i;
        d[i].has_time = 0;
        d[i].time = 0;
        d[i].seq = i;
    }
    const char *source = NULL;
    int order = HSCOPE_CLI_ORDER_GIVEN, times = 0;
    if (want_name) {
        /* 1. date-time */
        size_t k = 0;
        for (; k < n; k++)
            if (!name_datetime(hscope_cli_basename(d[k].path), &t[k]))
                break;
        if (k == n && distinct_doubles(t, n)) {
            source = "datetime";
        } else {
            /* 2. epoch seconds / milliseconds */
            int any_ms = 0, ms = 0;
            for (k = 0; k < n; k++) {
                if (!name_epoch(hscope_cli_basename(d[k].path), &t[k], &ms))
                    break;
                any_ms |= ms;
            }
            if (k == n && distinct_doubles(t, n))
                source = any_ms ? "epoch-ms" : "epoch";
        }
        if (source) {
            times = 1;
        } else {
            /* 3. sequence number */
            for (k = 0; k < n; k++)
                if (!name_sequence(hscope_cli_basename(d[k].path), &s[k]))
                    break;
            if (k == n && distinct_u64(s, n))
                source = "sequence";
        }
        if (source)
            order = HSCOPE_CLI_ORDER_NAME_TIME;
    }
    if (!source && want_mtime) {
        size_t k = 0;
        for (; k < n; k++) {
            struct stat st;
            if (stat(d[k].path, &st) != 0)
                break;
            t[k] = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
        }
        if (k == n && distinct_doubles(t, n)) {
            source = "mtime";
            order = HSCOPE_CLI_ORDER_MTIME;
            times = 1;
        }
    }
    if (!source && force && strcmp(force, "given") != 0 && strcmp(force, "auto") != 0) {
        snprintf(errbuf, errlen, "--order %s: %s", force,
                 want_name ? "not every file name holds a distinct date-time, "
                             "epoch or sequence number"
                           : "the files' modification times are not distinct");
        free(t);
        free(s);
        return -1;
    }
    if (!source)
        source = "given";
    for (size_t i = 0; i < n; i++) {
        if (times) {
            d[i].has_time = 1;
            d[i].time = t[i];
        } else if (strcmp(source, "sequence") == 0) {
            d[i].seq = s[i];
        }
    }
    qsort(d, n, sizeof(*d), cmp_dump);
    out->order = order;
    out->name = order == HSCOPE_CLI_ORDER_NAME_TIME ? "name-time"
              : order == HSCOPE_CLI_ORDER_MTIME ? "mtime" : "given";
    out->source = source;
    out->times_known = times;
    free(t);
    free(s);
    return 0;
}

static const char *
source_text(const char *source)
{
    if (strcmp(source, "datetime") == 0)
        return "the date and time in each file name";
    if (strcmp(source, "epoch") == 0)
        return "the epoch seconds in each file name";
    if (strcmp(source, "epoch-ms") == 0)
        return "the epoch milliseconds in each file name";
    if (strcmp(source, "sequence") == 0)
        return "the sequence number in each file name";
    if (strcmp(source, "mtime") == 0)
        return "the files' modification times";
    return "the command-line order";
}

static void
iso_time(double t, char *buf, size_t n)
{
    time_t s = (time_t)floor(t);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ------------------------------------------------------------------ */
/* timeline: folding and merging                                      */
/* ------------------------------------------------------------------ */

typedef struct tl_group {
    char *key;
    uint64_t *count;     /* per dump, in time order */
    uint64_t *memsize;
    double slope, slope_h, r2, mean, rise, score, last;
    int has_slope_h;
    int growing;
} tl_group;

typedef struct tl_ctx {
    const hscope_cli_dump *dumps;
    size_t nd;
    const char *by;
    const hscope_load_options *lo;
    pthread_mutex_t mu;
    size_t next;
    int stop;
    int nomem;
    hscope_status *st;        /* per dump */
    hscope_error *err;        /* per dump */
    uint32_t tally_flags;     /* HSCOPE_TALLY_SKIP_DUMPER unless --keep-dumper */
    /* per dump, kept from its tally: for the series checks, the damage
     * warnings and the dumper's objects left out */
    hscope_fingerprint_t **fp;
    hscope_load_stats *stats;
    uint64_t (*skipped)[HSCOPE_SKIP__COUNT];
    uint64_t *excluded;
    char warnings[4096];
    /* groups: array + open-addressing index of positions (+1) */
    tl_group *g;
    size_t ng, gcap;
    size_t *idx;
    size_t icap;
} tl_ctx;

static uint64_t
hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static int
index_grow(tl_ctx *c)
{
    size_t cap = c->icap ? c->icap * 2 : 1024;
    size_t *idx = calloc(cap, sizeof(size_t));
    if (!idx)
        return -1;
    for (size_t i = 0; i < c->ng; i++) {
        size_t p = (size_t)hash_str(c->g[i].key) & (cap - 1);
        while (idx[p])
            p = (p + 1) & (cap - 1);
        idx[p] = i + 1;
    }
    free(c->idx);
    c->idx = idx;
    c->icap = cap;
    return 0;
}

/* Group of `key`, created on first sight; NULL when out of memory.
 * Called with the lock held. */
static tl_group *
group_of(tl_ctx *c, const char *key)
{
    if ((c->ng + 1) * 2 > c->icap && index_grow(c) != 0)
        return NULL;
    size_t p = (size_t)hash_str(key) & (c->icap - 1);
    while (c->idx[p]) {
        tl_group *g = &c->g[c->idx[p] - 1];
        if (strcmp(g->key, key) == 0)
            return g;
        p = (p + 1) & (c->icap - 1);
    }
    if (c->ng == c->gcap) {
        size_t cap = c->gcap ? c->gcap * 2 : 256;
        tl_group *ng = realloc(c->g, cap * sizeof(tl_group));
        if (!ng)
            return NULL;
        c->g = ng;
        c->gcap = cap;
    }
    tl_group *g = &c->g[c->ng];
    memset(g, 0, sizeof(*g));
    g->key = strdup(key);
    g->count = calloc(c->nd, sizeof(uint64_t));
    g->memsize = calloc(c->nd, sizeof(uint64_t));
    if (!g->key || !g->count || !g->memsize) {
        free(g->key);
        free(g->count);
        free(g->memsize);
        return NULL;
    }
    c->idx[p] = ++c->ng;
    return g;
}

static void *
tl_worker(void *arg)
{
    tl_ctx *c = arg;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    to.flags = c->tally_flags | HSCOPE_TALLY_FINGERPRINT; /* for the series checks */
    for (;;) {
        pthread_mutex_lock(&c->mu);
        if (c->stop || c->next >= c->nd) {
            pthread_mutex_unlock(&c->mu);
            return NULL;
        }
        size_t i = c->next++;
        pthread_mutex_unlock(&c->mu);

        hscope_tally_t *t = NULL;
        hscope_error err = HSCOPE_ERROR_INIT;
        hscope_status st = hscope_tally_file(&t, c->dumps[i].path, c->by, c->lo,
                                             &to, &err);
        pthread_mutex_lock(&c->mu);
        c->st[i] = st;
        c->err[i] = err;
        if (st == HSCOPE_OK) {
            /* what the checks need outlives the tally (a few KB) */
            c->stats[i].size = sizeof(c->stats[i]);
            hscope_tally_stats(t, &c->stats[i]);
            for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
                c->skipped[i][r] = hscope_tally_skipped(t, r);
            c->excluded[i] = hscope_tally_excluded(t);
            if (hscope_fingerprint_copy(&c->fp[i], hscope_tally_fingerprint(t), &err) != HSCOPE_OK)
                c->nomem = 1;
        }
        if (st != HSCOPE_OK) {
            c->stop = 1;
        } else {
            uint64_t rows = hscope_tally_row_count(t);
            for (uint64_t r = 0; r < rows; r++) {
                tl_group *g = group_of(c, hscope_tally_row_key(t, r));
                if (!g) {
                    c->nomem = 1;
                    c->stop = 1;
                    break;
                }
                g->count[i] += hscope_tally_row_count_of(t, r);
                g->memsize[i] += hscope_tally_row_memsize(t, r);
            }
        }
        pthread_mutex_unlock(&c->mu);
        hscope_tally_free(t);
    }
}

/* Least squares of y on x: slope and R^2 (0 when y is constant). */
static void
fit(const double *x, const double *y, size_t n, double *slope, double *r2,
    int *ok)
{
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - mx, dy = y[i] - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    *ok = sxx > 0;
    *slope = sxx > 0 ? sxy / sxx : 0;
    *r2 = sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : 0;
    if (*r2 > 1)
        *r2 = 1;
}

static void
group_stats(tl_group *g, const hscope_cli_dump *d, size_t n, int memsize,
            int times, double *xs, double *ys, double *hs)
{
    const uint64_t *v = memsize ? g->memsize : g->count;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        xs[i] = (double)i;
        ys[i] = (double)v[i];
        sum += ys[i];
        if (times)
            hs[i] = (d[i].time - d[0].time) / 3600.0;
    }
    g->mean = n ? sum / (double)n : 0;
    g->last = n ? ys[n - 1] : 0;
    int ok = 0;
    if (n >= 2) {
        fit(xs, ys, n, &g->slope, &g->r2, &ok);
    } else {
        g->slope = 0;
        g->r2 = 0;
    }
    g->rise = g->slope * (double)(n ? n - 1 : 0);
    g->has_slope_h = 0;
    if (times && n >= 2) {
        double r2h;
        fit(hs, ys, n, &g->slope_h, &r2h, &ok);
        g->has_slope_h = ok;
    }
    double floor_abs = memsize ? GROW_MIN_RISE_BYTES : GROW_MIN_RISE_COUNT;
    double need = GROW_MIN_RISE_FRACTION * g->mean;
    if (need < floor_abs)
        need = floor_abs;
    g->growing = n >= GROW_MIN_DUMPS && g->slope > 0 && g->r2 >= GROW_MIN_R2 &&
                 g->rise >= need && ys[n - 1] > ys[0];
    g->score = g->slope * g->r2;
}

static int
cmp_group(const void *a, const void *b)
{
    const tl_group *x = a, *y = b;
    if (x->growing != y->growing)
        return y->growing - x->growing;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->last != y->last)
        return x->last > y->last ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* ------------------------------------------------------------------ */
/* timeline: output                                                   */
/* ------------------------------------------------------------------ */

static int
utf8_locale(void)
{
    const char *v = getenv("LC_ALL");
    if (!v || !*v)
        v = getenv("LC_CTYPE");
    if (!v || !*v)
        v = getenv("LANG");
    return v && (strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "UTF8") ||
                 strstr(v, "utf8"));
}

/* A trend of at most 24 characters, scaled to the series' own range. */
static void
sparkline(const uint64_t *v, size_t n, int utf8, char *buf, size_t cap)
{
    static const char *const blocks[] = { "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
        "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88" };
    static const char ascii[] = "_.-~=+*#";
    size_t w = n < 24 ? n : 24;
    double vals[24];
    double lo = 0, hi = 0;
    for (size_t k = 0; k < w; k++) {
        size_t a = k * n / w, b = (k + 1) * n / w;
        double s = 0;
        for (size_t i = a; i < b; i++)
            s += (double)v[i];
        vals[k] = b > a ? s / (double)(b - a) : 0;
        if (k == 0 || vals[k] < lo)
            lo = vals[k];
        if (k == 0 || vals[k] > hi)
            hi = vals[k];
    }
    size_t o = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < w; k++) {
        int level = hi > lo ? (int)((vals[k] - lo) / (hi - lo) * 7.0 + 0.5) : 3;
        const char *s = utf8 ? blocks[level] : (char[2]){ ascii[level], 0 };
        size_t l = strlen(s);
        if (o + l + 1 >= cap)
            break;
        memcpy(buf + o, s, l);
        o += l;
        buf[o] = '\0';
    }
}

static void
fmt_value(double v, int memsize, int sign, char *buf, size_t n)
{
    size_t o = 0;
    if (n < 4)
        return;
    if (memsize) {
        if (sign && v > 0)
            buf[o++] = '+';
        hscope_cli_human_bytes(v, buf + o, n - o);
    } else if (fabs(v - floor(v)) < 1e-9 && fabs(v) < 1e15) {
        if (v < 0)
            buf[o++] = '-';
        else if (sign && v > 0)
            buf[o++] = '+';
        hscope_cli_grouped((uint64_t)fabs(v), buf + o, n - o);
    } else {
        snprintf(buf, n, sign ? "%+.1f" : "%.1f", v);
    }
}

/* Characters of a UTF-8 string (each invalid byte counts one). */
static size_t
u8_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* Print a key in `w` columns (characters), keeping its tail when longer. */
static void
print_key(const char *k, int w)
{
    size_t len = strlen(k), chars = u8_chars(k, len);
    const char *s = k;
    if (chars > (size_t)w) {
        size_t skip = chars - (size_t)(w - 3);
        while (*s && skip) {
            s++;
            while (*s && ((unsigned char)*s & 0xC0) == 0x80)
                s++;
            skip--;
        }
        fputs("...", stdout);
        chars = 3 + u8_chars(s, strlen(s));
    }
    fputs(s, stdout);
    for (size_t pad = chars; pad < (size_t)w; pad++)
        putchar(' ');
}

static void
tl_text(const tl_ctx *c, const hscope_cli_order *ord, int memsize, size_t shown)
{
    const hscope_cli_dump *d = c->dumps;
    size_t n = c->nd;
    int utf8 = utf8_locale();
    printf("timeline: %zu dump%s by %s, metric %s; order %s (%s)\n", n, n == 1 ? "" : "s",
           c->by, memsize ? "memsize" : "count", ord->name, source_text(ord->source));
    for (size_t i = 0; i < n; i++) {
        if (n > 12 && i == 5) {
            printf("  ... %zu more ...\n", n - 10);
            i = n - 5;
        }
        char tb[32] = "";
        if (d[i].has_time)
            iso_time(d[i].time, tb, sizeof(tb));
        printf("  %3zu  %s%s%s\n", i + 1, d[i].path, *tb ? "  " : "", tb);
    }
    uint64_t excluded = 0;
    for (size_t i = 0; i < n; i++)
        excluded += c->excluded[i];
    hscope_cli_dumper_note(stdout, excluded);
    size_t growing = 0;
    for (size_t i = 0; i < c->ng; i++)
        growing += (size_t)c->g[i].growing;
    printf("%zu group%s, %zu growing\n\n", c->ng, c->ng == 1 ? "" : "s", growing);
    int kw = 8;
    for (size_t i = 0; i < shown; i++) {
        int l = (int)u8_chars(c->g[i].key, strlen(c->g[i].key));
        if (l > kw)
            kw = l;
    }
    if (kw > 44)
        kw = 44;
    int th = ord->times_known;
    printf("   %-*s %10s %10s %11s %10s", kw, "key", "first", "last", "change", "per step");
    if (th)
        printf(" %10s", "per hour");
    printf(" %5s  %s\n", "R2", "trend");
    for (size_t i = 0; i < shown; i++) {
        const tl_group *g = &c->g[i];
        const uint64_t *v = memsize ? g->memsize : g->count;
        char a[32], b[32], ch[32], ps[32], ph[32], sp[128];
        fmt_value((double)v[0], memsize, 0, a, sizeof(a));
        fmt_value((double)v[n - 1], memsize, 0, b, sizeof(b));
        fmt_value((double)v[n - 1] - (double)v[0], memsize, 1, ch, sizeof(ch));
        if (memsize) {
            fmt_value(g->slope, 1, 1, ps, sizeof(ps));
            if (g->has_slope_h)
                fmt_value(g->slope_h, 1, 1, ph, sizeof(ph));
            else
                snprintf(ph, sizeof(ph), "-");
        } else {
            snprintf(ps, sizeof(ps), "%+.1f", g->slope);
            if (g->has_slope_h)
                snprintf(ph, sizeof(ph), "%+.1f", g->slope_h);
            else
                snprintf(ph, sizeof(ph), "-");
        }
        if (strcmp(ps, "+0.0") == 0 || strcmp(ps, "0 B") == 0)
            snprintf(ps, sizeof(ps), "0");
        sparkline(v, n, utf8, sp, sizeof(sp));
        char r2[16];
        if (n >= 2)
            snprintf(r2, sizeof(r2), "%.2f", g->r2);
        else
            snprintf(ps, sizeof(ps), "-"), snprintf(r2, sizeof(r2), "-");
        printf(" %c ", g->growing ? '*' : ' ');
        print_key(g->key, kw);
        printf(" %10s %10s %11s %10s", a, b, ch, ps);
        if (th)
            printf(" %10s", ph);
        printf(" %5s  %s%s\n", r2, sp, g->growing ? "  growing" : "");
    }
    if (shown < c->ng)
        printf("   ... %zu more group%s (--top 0 shows all)\n", c->ng - shown,
               c->ng - shown == 1 ? "" : "s");
    if (!growing)
        printf("\nno group is growing (rule: slope > 0, R2 >= %.1f, rise >= max(%s, %.0f%% of "
               "the mean), %d+ dumps)\n", GROW_MIN_R2,
               memsize ? "4 KB" : "10 objects", GROW_MIN_RISE_FRACTION * 100, GROW_MIN_DUMPS);
}

static void
tl_json(const tl_ctx *c, const hscope_cli_order *ord, int memsize, size_t shown)
{
    const hscope_cli_dump *d = c->dumps;
    size_t n = c->nd;
    jw w;
    jw_init(&w, stdout, 0);
    jw_obj(&w);
    jw_key(&w, "by"); jw_str(&w, c->by);
    jw_key(&w, "metric"); jw_str(&w, memsize ? "memsize" : "count");
    jw_key(&w, "order"); jw_str(&w, ord->name);
    jw_key(&w, "order_source"); jw_str(&w, ord->source);
    jw_key(&w, "times_known"); jw_bool(&w, ord->times_known);
    jw_key(&w, "dumps");
    jw_arr(&w);
    for (size_t i = 0; i < n; i++)
        jw_str(&w, d[i].path);
    jw_end_arr(&w);
    jw_key(&w, "warnings"); jw_lines(&w, c->warnings);
    jw_key(&w, "excluded_dumper_objects");
    jw_arr(&w);
    for (size_t i = 0; i < n; i++)
        jw_u64(&w, c->excluded[i]);
    jw_end_arr(&w);
    jw_key(&w, "times");
    if (ord->times_known) {
        jw_arr(&w);
        for (size_t i = 0; i < n; i++)
            jw_f64(&w, d[i].time, 3);
        jw_end_arr(&w);
    } else {
        jw_null(&w);
    }
    jw_key(&w, "rule");
    jw_obj(&w);
    jw_key(&w, "min_dumps"); jw_u64(&w, GROW_MIN_DUMPS);
    jw_key(&w, "min_r2"); jw_f64(&w, GROW_MIN_R2, 2);
    jw_key(&w, "min_rise"); jw_f64(&w, memsize ? GROW_MIN_RISE_BYTES : GROW_MIN_RISE_COUNT, 0);
    jw_key(&w, "min_rise_fraction_of_mean"); jw_f64(&w, GROW_MIN_RISE_FRACTION, 2);
    jw_end_obj(&w);
    jw_key(&w, "group_count"); jw_u64(&w, c->ng);
    size_t growing = 0;
    for (size_t i = 0; i < c->ng; i++)
        growing += (size_t)c->g[i].growing;
    jw_key(&w, "growing_count"); jw_u64(&w, growing);
    jw_key(&w, "groups");
    jw_arr(&w);
    for (size_t i = 0; i < shown; i++) {
        const tl_group *g = &c->g[i];
        jw_obj(&w);
        jw_key(&w, "key"); jw_str(&w, g->key);
        jw_key(&w, "series");
        jw_arr(&w);
        for (size_t k = 0; k < n; k++)
            jw_u64(&w, memsize ? g->memsize[k] : g->count[k]);
        jw_end_arr(&w);
        jw_key(&w, "count");
        jw_arr(&w);
        for (size_t k = 0; k < n; k++)
            jw_u64(&w, g->count[k]);
        jw_end_arr(&w);
        jw_key(&w, "memsize");
        jw_arr(&w);
        for (size_t k = 0; k < n; k++)
            jw_u64(&w, g->memsize[k]);
        jw_end_arr(&w);
        jw_key(&w, "slope_per_step");
        if (n >= 2)
            jw_f64(&w, g->slope, 3);
        else
            jw_null(&w);
        jw_key(&w, "slope_per_hour");
        if (g->has_slope_h)
            jw_f64(&w, g->slope_h, 3);
        else
            jw_null(&w);
        jw_key(&w, "r2");
        if (n >= 2)
            jw_f64(&w, g->r2, 4);
        else
            jw_null(&w);
        jw_key(&w, "mean"); jw_f64(&w, g->mean, 3);
        jw_key(&w, "rise"); jw_f64(&w, g->rise, 3);
        jw_key(&w, "growing"); jw_bool(&w, g->growing);
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_end_obj(&w);
    jw_done(&w);
}

/* RFC 4180 field. */
static void
csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n") && *s != ' ' && *s) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void
tl_csv(const tl_ctx *c, size_t shown)
{
    const hscope_cli_dump *d = c->dumps;
    printf("rank,key,step,dump,time,count,memsize,growing\n");
    for (size_t i = 0; i < shown; i++) {
        const tl_group *g = &c->g[i];
        for (size_t k = 0; k < c->nd; k++) {
            char tb[32] = "";
            if (d[k].has_time)
                iso_time(d[k].time, tb, sizeof(tb));
            printf("%zu,", i + 1);
            csv_field(stdout, g->key);
            printf(",%zu,", k + 1);
            csv_field(stdout, d[k].path);
            printf(",%s,%llu,%llu,%s\n", tb, (unsigned long long)g->count[k],
                   (unsigned long long)g->memsize[k], g->growing ? "true" : "false");
        }
    }
}

static int
tl_svg(const tl_ctx *c, const hscope_cli_order *ord, int memsize, size_t shown,
       const char *path)
{
    size_t n = c->nd, nl = shown < SVG_MAX_LINES ? shown : SVG_MAX_LINES;
    double *vals = calloc((nl ? nl : 1) * (n ? n : 1), sizeof(double));
    double *xs = calloc(n ? n : 1, sizeof(double));
    const char **names = calloc(n ? n : 1, sizeof(char *));
    hscope_svg_line *lines = calloc(nl ? nl : 1, sizeof(hscope_svg_line));
    char (*notes)[64] = calloc(nl ? nl : 1, sizeof(*notes));
    int rc = -1;
    FILE *f = NULL;
    if (!vals || !xs || !names || !lines || !notes) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto out;
    }
    size_t growing = 0;
    for (size_t i = 0; i < c->ng; i++)
        growing += (size_t)c->g[i].growing;
    for (size_t k = 0; k < n; k++) {
        xs[k] = c->dumps[k].time;
        names[k] = hscope_cli_basename(c->dumps[k].path);
    }
    for (size_t i = 0; i < nl; i++) {
        const tl_group *g = &c->g[i];
        for (size_t k = 0; k < n; k++)
            vals[i * n + k] = (double)(memsize ? g->memsize[k] : g->count[k]);
        lines[i].label = g->key;
        lines[i].y = vals + i * n;
        lines[i].highlight = g->growing;
        char sl[32];
        double slope = g->has_slope_h ? g->slope_h : g->slope;
        if (memsize)
            fmt_value(slope, 1, 1, sl, sizeof(sl));
        else
            snprintf(sl, sizeof(sl), "%+.1f", slope);
        if (n < 2)
            snprintf(notes[i], sizeof(notes[i]), "one dump");
        else if (g->slope == 0)
            snprintf(notes[i], sizeof(notes[i]), "flat");
        else
            snprintf(notes[i], sizeof(notes[i]), "%s/%s, R\xc2\xb2 %.2f", sl,
                     g->has_slope_h ? "hour" : "step", g->r2);
        lines[i].note = notes[i];
    }
    char title[256], sub[512];
    snprintf(title, sizeof(title), "heapscope timeline: %s by %s",
             memsize ? "memsize" : "object count", c->by);
    if (n == 1)
        snprintf(sub, sizeof(sub), "1 dump, %s (a trend needs 3 or more); %zu group%s", names[0],
                 c->ng, c->ng == 1 ? "" : "s");
    else if (n)
        snprintf(sub, sizeof(sub), "%zu dumps, %s to %s, ordered by %s; %zu of %zu group%s growing",
                 n, names[0], names[n - 1], source_text(ord->source), growing, c->ng,
                 c->ng == 1 ? "" : "s");
    else
        snprintf(sub, sizeof(sub), "no dumps");
    hscope_svg_lines_chart ch = {
        .title = title,
        .subtitle = sub,
        .y_label = memsize ? "memsize" : "objects",
        .y_bytes = memsize,
        .npoints = n,
        .x = ord->times_known ? xs : NULL,
        .point_names = names,
        .lines = lines,
        .nlines = nl,
        .more = c->ng - nl,
    };
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        goto out;
    }
    rc = hscope_svg_write_lines(f, &ch);
    if (fclose(f) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "%s: %s: write error\n", prog, path);
out:
    free(vals);
    free(xs);
    free(names);
    free(lines);
    free(notes);
    return rc;
}

static long
cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

int
hscope_cli_timeline(int argc, char **argv)
{
    if (hscope_cli_want_help(argc, argv, usage_timeline))
        return 0;
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    const char *by = "type", *svg = NULL, *order = "auto";
    int memsize = 1, json = 0, csv = 0, keep_dumper = 0;
    uint64_t top = 20, threads = 0;
    char **paths = calloc((size_t)argc, sizeof(char *));
    size_t np = 0;
    if (!paths) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    int rc = 0, end_opts = 0;
    for (int i = 2; i < argc && !rc; i++) {
        const char *a = argv[i];
        if (!end_opts && a[0] == '-' && a[1]) {
            int r = hscope_cli_load_option(&lo, argc, argv, &i, usage_timeline);
            if (r < 0) {
                rc = HSCOPE_CLI_EXIT_USAGE;
                break;
            }
            if (r > 0)
                continue;
        }
        if (end_opts || a[0] != '-' || !a[1]) {
            paths[np++] = argv[i];
        } else if (strcmp(a, "--") == 0) {
            end_opts = 1;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--csv") == 0) {
            csv = 1;
        } else if (strcmp(a, "--keep-dumper") == 0) {
            keep_dumper = 1;
        } else if (strcmp(a, "--by") == 0) {
            if (i + 1 >= argc)
                rc = hscope_cli_usage_error(usage_timeline, "--by needs a KEY%s", "");
            else
                by = argv[++i];
        } else if (strcmp(a, "--metric") == 0) {
            if (i + 1 >= argc) {
                rc = hscope_cli_usage_error(usage_timeline, "--metric needs memsize or count%s", "");
            } else {
                i++;
                if (strcmp(argv[i], "memsize") == 0)
                    memsize = 1;
                else if (strcmp(argv[i], "count") == 0)
                    memsize = 0;
                else
                    rc = hscope_cli_usage_error(usage_timeline,
                                                "--metric: expected memsize or count, not '%s'",
                                                argv[i]);
            }
        } else if (strcmp(a, "--top") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &top) != 0)
                rc = hscope_cli_usage_error(usage_timeline, "--top needs a number%s", "");
        } else if (strcmp(a, "--threads") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &threads) != 0 ||
                threads == 0 || threads > 1024)
                rc = hscope_cli_usage_error(usage_timeline,
                                            "--threads needs a number from 1 to 1024%s", "");
        } else if (strcmp(a, "--svg") == 0) {
            if (i + 1 >= argc)
                rc = hscope_cli_usage_error(usage_timeline, "--svg needs a FILE%s", "");
            else
                svg = argv[++i];
        } else if (strcmp(a, "--order") == 0) {
            if (i + 1 >= argc) {
                rc = hscope_cli_usage_error(usage_timeline, "--order needs auto, name, mtime or given%s", "");
            } else {
                order = argv[++i];
                if (strcmp(order, "auto") && strcmp(order, "name") && strcmp(order, "mtime") &&
                    strcmp(order, "given"))
                    rc = hscope_cli_usage_error(usage_timeline,
                                                "--order: expected auto, name, mtime or given, not '%s'",
                                                order);
            }
        } else {
            rc = hscope_cli_usage_error(usage_timeline, "unknown option '%s'", a);
        }
    }
    if (!rc && np == 0)
        rc = hscope_cli_usage_error(usage_timeline, "no DUMP given%s", "");
    if (!rc && !hscope_cli_valid_key(by))
        rc = hscope_cli_usage_error(usage_timeline, "unknown --by key '%s'", by);
    if (!rc && json && csv)
        rc = hscope_cli_usage_error(usage_timeline, "--json and --csv exclude each other%s", "");
    if (rc) {
        free(paths);
        return rc;
    }

    hscope_cli_dump *d = calloc(np, sizeof(hscope_cli_dump));
    hscope_status *sts = calloc(np, sizeof(hscope_status));
    hscope_error *errs = calloc(np, sizeof(hscope_error));
    double *xs = calloc(np, sizeof(double)), *ys = calloc(np, sizeof(double)),
           *hs = calloc(np, sizeof(double));
    tl_ctx c;
    memset(&c, 0, sizeof(c));
    c.fp = calloc(np, sizeof(*c.fp));
    c.stats = calloc(np, sizeof(*c.stats));
    c.skipped = calloc(np, sizeof(*c.skipped));
    c.excluded = calloc(np, sizeof(*c.excluded));
    c.tally_flags = keep_dumper ? 0 : HSCOPE_TALLY_SKIP_DUMPER;
    if (!d || !sts || !errs || !xs || !ys || !hs || !c.fp || !c.stats || !c.skipped ||
        !c.excluded) {
        fprintf(stderr, "%s: out of memory\n", prog);
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
        goto out;
    }
    for (size_t i = 0; i < np; i++)
        d[i].path = paths[i];
    hscope_cli_order ord;
    char ebuf[256];
    if (hscope_cli_order_dumps(d, np, order, &ord, ebuf, sizeof(ebuf)) != 0) {
        rc = hscope_cli_usage_error(usage_timeline, "%s", ebuf);
        goto out;
    }

    c.dumps = d;
    c.nd = np;
    c.by = by;
    c.lo = &lo;
    c.st = sts;
    c.err = errs;
    pthread_mutex_init(&c.mu, NULL);
    size_t nt = threads ? (size_t)threads : (size_t)cores();
    if (nt > np)
        nt = np;
    /* dumps folded at once share the cores: each fold's parser gets its
     * part (all of them for a single dump) */
    if (!lo.threads)
        lo.threads = (uint32_t)(nt && (size_t)cores() > nt ? (size_t)cores() / nt : 1);
    pthread_t *th = calloc(nt, sizeof(pthread_t));
    size_t started = 0;
    if (th)
        for (; started < nt; started++)
            if (pthread_create(&th[started], NULL, tl_worker, &c) != 0)
                break;
    if (started == 0)
        tl_worker(&c); /* no threads: fold on this one */
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    pthread_mutex_destroy(&c.mu);

    for (size_t i = 0; i < np; i++)
        if (sts[i] != HSCOPE_OK) {
            fprintf(stderr, "%s: %s: %s\n", prog, d[i].path, errs[i].message);
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
        }
    if (!rc && c.nomem) {
        fprintf(stderr, "%s: out of memory\n", prog);
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    if (rc)
        goto out;
    /* said once per dump, in time order: damage, then the series checks */
    const char **names = calloc(np, sizeof(char *));
    for (size_t i = 0; i < np; i++) {
        hscope_cli_warn_damage(d[i].path, &c.stats[i], c.skipped[i]);
        if (names)
            names[i] = d[i].path;
    }
    hscope_series_check((const hscope_fingerprint_t *const *)c.fp, names, np, c.warnings,
                        sizeof(c.warnings));
    free(names);
    hscope_cli_warn_text(c.warnings);

    for (size_t i = 0; i < c.ng; i++)
        group_stats(&c.g[i], d, np, memsize, ord.times_known, xs, ys, hs);
    qsort(c.g, c.ng, sizeof(tl_group), cmp_group);
    size_t shown = top && top < c.ng ? (size_t)top : c.ng;
    if (json)
        tl_json(&c, &ord, memsize, shown);
    else if (csv)
        tl_csv(&c, shown);
    else
        tl_text(&c, &ord, memsize, shown);
    if (svg && tl_svg(&c, &ord, memsize, shown, svg) != 0)
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    if (fflush(stdout) != 0) {
        fprintf(stderr, "%s: write error on standard output\n", prog);
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    }
out:
    for (size_t i = 0; i < c.ng; i++) {
        free(c.g[i].key);
        free(c.g[i].count);
        free(c.g[i].memsize);
    }
    for (size_t i = 0; c.fp && i < np; i++)
        hscope_fingerprint_free(c.fp[i]);
    free(c.fp);
    free(c.stats);
    free(c.skipped);
    free(c.excluded);
    free(c.g);
    free(c.idx);
    free(d);
    free(sts);
    free(errs);
    free(xs);
    free(ys);
    free(hs);
    free(paths);
    return rc;
}

/* ------------------------------------------------------------------ */
/* histogram                                                          */
/* ------------------------------------------------------------------ */

int
hscope_cli_histogram(int argc, char **argv)
{
    if (hscope_cli_want_help(argc, argv, usage_histogram))
        return 0;
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    to.top = 20;
    to.sort = HSCOPE_SORT_MEMSIZE;
    to.flags = HSCOPE_TALLY_SKIP_DUMPER;
    const char *by = "type", *svg = NULL, *path = NULL;
    int json = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int r = hscope_cli_load_option(&lo, argc, argv, &i, usage_histogram);
        if (r < 0)
            return HSCOPE_CLI_EXIT_USAGE;
        if (r > 0)
            continue;
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--keep-dumper") == 0) {
            to.flags &= ~HSCOPE_TALLY_SKIP_DUMPER;
        } else if (strcmp(a, "--by") == 0) {
            if (i + 1 >= argc)
                return hscope_cli_usage_error(usage_histogram, "--by needs a KEY%s", "");
            by = argv[++i];
        } else if (strcmp(a, "--top") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &to.top) != 0)
                return hscope_cli_usage_error(usage_histogram, "--top needs a number%s", "");
        } else if (strcmp(a, "--sort") == 0) {
            if (i + 1 >= argc)
                return hscope_cli_usage_error(usage_histogram, "--sort needs memsize or count%s", "");
            i++;
            if (strcmp(argv[i], "memsize") == 0)
                to.sort = HSCOPE_SORT_MEMSIZE;
            else if (strcmp(argv[i], "count") == 0)
                to.sort = HSCOPE_SORT_COUNT;
            else
                return hscope_cli_usage_error(usage_histogram,
                                              "--sort: expected memsize or count, not '%s'", argv[i]);
        } else if (strcmp(a, "--svg") == 0) {
            if (i + 1 >= argc)
                return hscope_cli_usage_error(usage_histogram, "--svg needs a FILE%s", "");
            svg = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            return hscope_cli_usage_error(usage_histogram, "unknown option '%s'", a);
        } else if (!path) {
            path = a;
        } else {
            return hscope_cli_usage_error(usage_histogram,
                                          "histogram takes one DUMP ('%s' is extra)", a);
        }
    }
    if (!path)
        return hscope_cli_usage_error(usage_histogram, "no DUMP given%s", "");
    if (!hscope_cli_valid_key(by))
        return hscope_cli_usage_error(usage_histogram, "unknown --by key '%s'", by);

    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_tally_file(&t, path, by, &lo, &to, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, err.message);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    hscope_cli_warn_tally_damage(path, t);
    uint64_t tn = 0, tm = 0;
    hscope_tally_totals(t, &tn, &tm);
    uint64_t rows = hscope_tally_row_count(t);
    int rc = 0;
    if (json) {
        jw w;
        jw_init(&w, stdout, 0);
        jw_obj(&w);
        jw_key(&w, "dump"); jw_str(&w, path);
        jw_key(&w, "by"); jw_str(&w, by);
        jw_key(&w, "sort"); jw_str(&w, to.sort == HSCOPE_SORT_MEMSIZE ? "memsize" : "count");
        jw_key(&w, "total_count"); jw_u64(&w, tn);
        jw_key(&w, "total_memsize"); jw_u64(&w, tm);
        jw_key(&w, "group_count"); jw_u64(&w, hscope_tally_group_count(t));
        jw_key(&w, "excluded_dumper_objects"); jw_u64(&w, hscope_tally_excluded(t));
        jw_key(&w, "rows");
        jw_arr(&w);
        for (uint64_t i = 0; i < rows; i++) {
            jw_obj(&w);
            jw_key(&w, "key"); jw_str(&w, hscope_tally_row_key(t, i));
            jw_key(&w, "count"); jw_u64(&w, hscope_tally_row_count_of(t, i));
            jw_key(&w, "memsize"); jw_u64(&w, hscope_tally_row_memsize(t, i));
            jw_end_obj(&w);
        }
        jw_end_arr(&w);
        jw_end_obj(&w);
        jw_done(&w);
    } else {
        char a[32], b[32];
        hscope_cli_grouped(tn, a, sizeof(a));
        hscope_cli_human_bytes((double)tm, b, sizeof(b));
        printf("histogram: %s by %s (%s objects, %s), largest %s first\n\n", path, by, a, b,
               to.sort == HSCOPE_SORT_MEMSIZE ? "memsize" : "count");
        int kw = 8;
        for (uint64_t i = 0; i < rows; i++) {
            const char *k = hscope_tally_row_key(t, i);
            int l = (int)u8_chars(k, strlen(k));
            if (l > kw)
                kw = l;
        }
        if (kw > 40)
            kw = 40;
        uint64_t maxv = 0;
        for (uint64_t i = 0; i < rows; i++) {
            uint64_t v = to.sort == HSCOPE_SORT_MEMSIZE ? hscope_tally_row_memsize(t, i)
                                                        : hscope_tally_row_count_of(t, i);
            if (v > maxv)
                maxv = v;
        }
        printf("  %-*s %10s %6s %12s %6s\n", kw, "key", "memsize", "%", "count", "%");
        for (uint64_t i = 0; i < rows; i++) {
            uint64_t n = hscope_tally_row_count_of(t, i), m = hscope_tally_row_memsize(t, i);
            uint64_t v = to.sort == HSCOPE_SORT_MEMSIZE ? m : n;
            hscope_cli_human_bytes((double)m, a, sizeof(a));
            hscope_cli_grouped(n, b, sizeof(b));
            printf("  ");
            print_key(hscope_tally_row_key(t, i), kw);
            printf(" %10s %5.1f%% %12s %5.1f%%  ", a, tm ? 100.0 * (double)m / (double)tm : 0.0,
                   b, tn ? 100.0 * (double)n / (double)tn : 0.0);
            int bar = maxv ? (int)((double)v / (double)maxv * 30.0 + 0.5) : 0;
            for (int k = 0; k < bar; k++)
                putchar('#');
            putchar('\n');
        }
        if (hscope_tally_group_count(t) > rows)
            printf("  ... %llu more (--top 0 shows all)\n",
                   (unsigned long long)(hscope_tally_group_count(t) - rows));
        hscope_cli_dumper_note(stdout, hscope_tally_excluded(t));
    }
    if (svg) {
        hscope_svg_bar *bars = calloc(rows ? rows : 1, sizeof(hscope_svg_bar));
        FILE *f = NULL;
        if (!bars) {
            fprintf(stderr, "%s: out of memory\n", prog);
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
        } else if (!(f = fopen(svg, "w"))) {
            fprintf(stderr, "%s: %s: %s\n", prog, svg, strerror(errno));
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
        } else {
            for (uint64_t i = 0; i < rows; i++) {
                bars[i].label = hscope_tally_row_key(t, i);
                bars[i].memsize = hscope_tally_row_memsize(t, i);
                bars[i].count = hscope_tally_row_count_of(t, i);
            }
            char title[256], sub[512], a[32], b[32];
            snprintf(title, sizeof(title), "heapscope histogram: memsize and objects by %s", by);
            hscope_cli_grouped(tn, a, sizeof(a));
            hscope_cli_human_bytes((double)tm, b, sizeof(b));
            snprintf(sub, sizeof(sub), "%s: %s objects, %s; %s%llu of %llu groups, largest %s first",
                     hscope_cli_basename(path), a, b,
                     rows < hscope_tally_group_count(t) ? "top " : "",
                     (unsigned long long)rows,
                     (unsigned long long)hscope_tally_group_count(t),
                     to.sort == HSCOPE_SORT_MEMSIZE ? "memsize" : "count");
            hscope_svg_bars_chart ch = { title, sub, bars, (size_t)rows, tm, tn };
            int w = hscope_svg_write_bars(f, &ch);
            if (fclose(f) != 0 || w != 0) {
                fprintf(stderr, "%s: %s: write error\n", prog, svg);
                rc = HSCOPE_CLI_EXIT_BAD_INPUT;
            }
        }
        free(bars);
    }
    hscope_tally_free(t);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "%s: write error on standard output\n", prog);
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    return rc;
}
