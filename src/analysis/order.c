/*
 * order.c - putting dumps in time order (timeline, export, the HTML
 * report): the rules of docs/TIMELINE.md, "How dumps are ordered".
 *
 * In this order, the first rule that gives every dump a value, all values
 * distinct, decides:
 *  1. name-time, source "datetime": every basename holds a date and time,
 *     YYYY-MM-DD[T_ -.]HH[:-.]MM[:-.]SS or YYYYMMDD[T_-.]HHMMSS (or a date
 *     alone, meaning midnight), years 2000-2099, read as UTC;
 *  2. name-time, "epoch" / "epoch-ms": every basename holds a run of 9-11
 *     digits that is a plausible epoch in seconds, or 12-14 digits that is
 *     one in milliseconds (2000-01-01 to 2100-01-01); the last such run of
 *     a name counts;
 *  3. name-time, "sequence": every basename holds a number: its last run of
 *     digits (step_03.json -> 3, heapscope.4242.7.json.gz -> 7);
 *  4. mtime: the files' modification times;
 *  5. given: the order of the paths.
 * Times are known (slopes per hour) for datetime, epoch and mtime.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../core/core.h"
#include "order.h"

hscope_status
hscope__fail_for_file(hscope_error *err, const hscope_error *src, const char *path)
{
    if (strstr(src->message, path)) {
        if (err && err->status == HSCOPE_OK)
            *err = *src;
        return src->status;
    }
    hscope_status st = hscope__fail(err, src->status, "%s: %s", path, src->message);
    if (err && err->status == src->status) {
        err->sys_errno = src->sys_errno;
        err->line = src->line;
        err->offset = src->offset;
    }
    return st;
}

const char *
hscope__basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

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

/* The time part after a date at s[q..]: HH[:-.]MM[:-.]SS (the same
 * separator twice, or none).  Returns the end offset, or 0 when there is
 * none. */
static size_t
time_part(const char *s, size_t q, int dashed, int *h, int *mi, int *sec)
{
    size_t r = q;
    if (s[r] == 'T' || s[r] == '_' || s[r] == '-' || s[r] == ' ' || s[r] == '.')
        r++;
    else if (dashed || !isdigit((unsigned char)s[r]))
        return 0; /* YYYYMMDDHHMMSS needs no separator, a dashed date does */
    if (!digits(s + r, 2, h))
        return 0;
    size_t u = r + 2;
    char ts = 0;
    if (s[u] == ':' || s[u] == '-' || s[u] == '.')
        ts = s[u++];
    if (!digits(s + u, 2, mi))
        return 0;
    u += 2;
    if (ts && s[u++] != ts)
        return 0;
    if (!digits(s + u, 2, sec))
        return 0;
    u += 2;
    if (isdigit((unsigned char)s[u]) || *h >= 24 || *mi >= 60 || *sec > 60)
        return 0;
    return u;
}

/* A date (and time) starting at s: its length, and the time in *out. */
static size_t
date_at(const char *s, double *out)
{
    int Y, M, D, h = 0, mi = 0, sec = 0;
    size_t q = 4;
    int dashed = 0;
    if (!digits(s, 4, &Y) || Y < 2000 || Y > 2099)
        return 0;
    if (s[q] == '-') {
        dashed = 1;
        q++;
    }
    if (!digits(s + q, 2, &M))
        return 0;
    q += 2;
    if (dashed && s[q++] != '-')
        return 0;
    if (!digits(s + q, 2, &D))
        return 0;
    q += 2;
    if (M < 1 || M > 12 || D < 1 || D > 31)
        return 0;
    size_t end = time_part(s, q, dashed, &h, &mi, &sec);
    if (end) {
        q = end;
    } else {
        h = mi = sec = 0;
        if (isdigit((unsigned char)s[q]))
            return 0; /* a longer number, not a date */
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
        return 0;
    *out = (double)t;
    return q;
}

/* The last date and time in a file name. */
static int
name_datetime(const char *name, double *out)
{
    size_t len = strlen(name);
    int found = 0;
    for (size_t p = 0; p + 8 <= len; p++) {
        if (!isdigit((unsigned char)name[p]) || (p > 0 && isdigit((unsigned char)name[p - 1])))
            continue;
        size_t q = date_at(name + p, out);
        if (q) {
            found = 1;
            p += q - 1;
        }
    }
    return found;
}

/* The last epoch (seconds or milliseconds) in a file name. */
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
cmp_time(const void *a, const void *b)
{
    const hscope__dump_time *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->given < y->given ? -1 : x->given > y->given;
}

static int
cmp_seq(const void *a, const void *b)
{
    const hscope__dump_time *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->given < y->given ? -1 : x->given > y->given;
}

/* Sorted by time (or by sequence): are the values pairwise distinct? */
static int
sorted_distinct(hscope__dump_time *d, uint64_t n, int by_time)
{
    qsort(d, (size_t)n, sizeof(*d), by_time ? cmp_time : cmp_seq);
    for (uint64_t i = 1; i < n; i++)
        if (by_time ? d[i].time == d[i - 1].time : d[i].seq == d[i - 1].seq)
            return 0;
    return 1;
}

/* Rules 1-3 on the names; the source, or NULL when none applies. */
static const char *
by_name(const char *const *paths, hscope__dump_time *d, uint64_t n)
{
    uint64_t k;
    for (k = 0; k < n; k++)
        if (!name_datetime(hscope__basename(paths[d[k].given]), &d[k].time))
            break;
    if (k == n && sorted_distinct(d, n, 1))
        return "datetime";
    int any_ms = 0;
    for (k = 0; k < n; k++) {
        int ms = 0;
        if (!name_epoch(hscope__basename(paths[d[k].given]), &d[k].time, &ms))
            break;
        any_ms |= ms;
    }
    if (k == n && sorted_distinct(d, n, 1))
        return any_ms ? "epoch-ms" : "epoch";
    for (k = 0; k < n; k++)
        if (!name_sequence(hscope__basename(paths[d[k].given]), &d[k].seq))
            break;
    if (k == n && sorted_distinct(d, n, 0))
        return "sequence";
    return NULL;
}

/* Rule 4; 1 when it applies. */
static int
by_mtime(const char *const *paths, hscope__dump_time *d, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++) {
        struct stat st;
        if (stat(paths[d[k].given], &st) != 0)
            return 0;
        d[k].time = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
    }
    return sorted_distinct(d, n, 1);
}

static void
reset(hscope__dump_time *d, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        d[i].given = i;
        d[i].has_time = 0;
        d[i].time = 0;
        d[i].seq = i;
    }
}

hscope_status
hscope__order_dumps(const char *const *paths, uint64_t n, int32_t rule,
                    hscope__dump_time *d, hscope__order *ord, hscope_error *err)
{
    const char *source = NULL;
    reset(d, n);
    ord->rule = HSCOPE_ORDER_GIVEN;
    ord->times_known = 0;
    if (rule == HSCOPE_ORDER_AUTO || rule == HSCOPE_ORDER_NAME) {
        source = by_name(paths, d, n);
        if (source)
            ord->rule = HSCOPE_ORDER_NAME;
        else
            reset(d, n);
    }
    if (!source && (rule == HSCOPE_ORDER_AUTO || rule == HSCOPE_ORDER_MTIME)) {
        if (by_mtime(paths, d, n)) {
            source = "mtime";
            ord->rule = HSCOPE_ORDER_MTIME;
        } else {
            reset(d, n);
        }
    }
    if (!source && rule != HSCOPE_ORDER_AUTO && rule != HSCOPE_ORDER_GIVEN)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "order %s: %s",
                            rule == HSCOPE_ORDER_NAME ? "name" : "mtime",
                            rule == HSCOPE_ORDER_NAME
                                ? "not every file name holds a distinct date-time, "
                                  "epoch or sequence number"
                                : "the files' modification times are not distinct");
    ord->source = source ? source : "given";
    ord->times_known = source && strcmp(source, "sequence") != 0;
    for (uint64_t i = 0; i < n; i++)
        d[i].has_time = ord->times_known;
    ord->name = ord->rule == HSCOPE_ORDER_NAME ? "name-time"
              : ord->rule == HSCOPE_ORDER_MTIME ? "mtime" : "given";
    return HSCOPE_OK;
}

const char *
hscope__order_source_text(const char *source)
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
