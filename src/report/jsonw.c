/*
 * jsonw.c - streaming JSON writer on hscope__out (no allocation).
 */
#include <string.h>

#include "heapscope/version.h"
#include "../core/core.h"
#include "jsonw.h"
#include "out.h"
#include "rowcur.h"

void
hscope__json_init(hscope__json *w, hscope__out *o, int pretty)
{
    memset(w, 0, sizeof(*w));
    w->o = o;
    w->pretty = pretty;
}

static void
sep(hscope__json *w)
{
    if (w->depth > 0) {
        if (!w->first[w->depth])
            hscope__out_putc(w->o, ',');
        w->first[w->depth] = 0;
        if (w->pretty) {
            hscope__out_putc(w->o, '\n');
            hscope__out_fill(w->o, ' ', 2 * (size_t)w->depth);
        }
    }
}

static void
value_start(hscope__json *w)
{
    if (w->after_key)
        w->after_key = 0;
    else
        sep(w);
}

static void
open_(hscope__json *w, int c)
{
    value_start(w);
    hscope__out_putc(w->o, c);
    if (w->depth < 63)
        w->depth++;
    w->first[w->depth] = 1;
}

static void
close_(hscope__json *w, int c)
{
    int empty = w->first[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (w->pretty && !empty) {
        hscope__out_putc(w->o, '\n');
        hscope__out_fill(w->o, ' ', 2 * (size_t)w->depth);
    }
    hscope__out_putc(w->o, c);
}

void hscope__json_obj(hscope__json *w) { open_(w, '{'); }
void hscope__json_end_obj(hscope__json *w) { close_(w, '}'); }
void hscope__json_arr(hscope__json *w) { open_(w, '['); }
void hscope__json_end_arr(hscope__json *w) { close_(w, ']'); }

static void
put_u(hscope__out *o, uint32_t cp)
{
    hscope__out_printf(o, "\\u%04x", (unsigned)cp);
}

/* A byte put_escaped() writes as it is, with nothing to decide: printable
 * ASCII but the quote and the backslash (and, script-safe, < > & '), and
 * without script-safety any byte from 0x80 on. */
static inline int
plain_byte(unsigned char c, int safe)
{
    if (c >= 0x80)
        return !safe;
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
        return 0;
    return !safe || (c != '<' && c != '>' && c != '&' && c != '\'');
}

static void
put_escaped(hscope__json *w, const char *s, size_t n)
{
    hscope__out *o = w->o;
    const unsigned char *p = (const unsigned char *)s;
    int safe = w->script_safe;
    hscope__out_putc(o, '"');
    for (size_t i = 0; i < n;) {
        /* a run of plain bytes in one write (most strings are one run) */
        size_t j = i;
        while (j < n && plain_byte(p[j], safe))
            j++;
        if (j > i) {
            hscope__out_write(o, p + i, j - i);
            i = j;
            if (i == n)
                break;
        }
        unsigned char c = p[i];
        const char *e = NULL;
        switch (c) {
        case '"': e = "\\\""; break;
        case '\\': e = "\\\\"; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        case '\b': e = "\\b"; break;
        case '\f': e = "\\f"; break;
        default: break;
        }
        if (e) {
            hscope__out_puts(o, e);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            put_u(o, c);
            i++;
        } else { /* script-safe: a byte from 0x80 on, or < > & ' */
            uint32_t cp;
            int l = hscope__utf8_seq(p + i, n - i, &cp);
            if (!l) {
                hscope__out_puts(o, "\\ufffd");
                i++;
            } else if (cp == '<' || cp == '>' || cp == '&' || cp == '\'' ||
                       cp == 0x2028 || cp == 0x2029) {
                put_u(o, cp);
                i += (size_t)l;
            } else {
                hscope__out_write(o, p + i, (size_t)l);
                i += (size_t)l;
            }
        }
    }
    hscope__out_putc(o, '"');
}

void
hscope__json_key(hscope__json *w, const char *k)
{
    sep(w);
    size_t n = strlen(k), i = 0, avail;
    while (i < n && plain_byte((unsigned char)k[i], w->script_safe))
        i++;
    char *p = i == n && n <= 64 ? hscope__out_room(w->o, n + 4, &avail) : NULL;
    if (p) { /* the quoted key and its colon in one piece */
        p[0] = '"';
        memcpy(p + 1, k, n);
        p[n + 1] = '"';
        p[n + 2] = ':';
        p[n + 3] = ' ';
        hscope__out_advance(w->o, n + (w->pretty ? 4 : 3));
    } else {
        put_escaped(w, k, n);
        hscope__out_puts(w->o, w->pretty ? ": " : ":");
    }
    w->after_key = 1;
}

void
hscope__json_strn(hscope__json *w, const char *s, size_t n)
{
    value_start(w);
    put_escaped(w, s, n);
}

void
hscope__json_str(hscope__json *w, const char *s)
{
    if (!s) {
        hscope__json_null(w);
        return;
    }
    hscope__json_strn(w, s, strlen(s));
}

void
hscope__json_u64(hscope__json *w, uint64_t v)
{
    char b[24];
    value_start(w);
    hscope__out_write(w->o, b, (size_t)(hscope__put_u64(b, v) - b));
}

void
hscope__json_i64(hscope__json *w, int64_t v)
{
    char b[24];
    value_start(w);
    b[0] = '-';
    /* the magnitude as unsigned: -INT64_MIN does not fit an int64_t */
    char *e = v < 0 ? hscope__put_u64(b + 1, 0 - (uint64_t)v) : hscope__put_u64(b, (uint64_t)v);
    hscope__out_write(w->o, b, (size_t)(e - b));
}

void
hscope__json_f64(hscope__json *w, double v, int decimals)
{
    value_start(w);
    if (v != v || v > 1e300 || v < -1e300)
        hscope__out_puts(w->o, "null");
    else
        hscope__out_printf(w->o, "%.*f", decimals, v);
}

void
hscope__json_bool(hscope__json *w, int v)
{
    value_start(w);
    hscope__out_puts(w->o, v ? "true" : "false");
}

void
hscope__json_null(hscope__json *w)
{
    value_start(w);
    hscope__out_puts(w->o, "null");
}

void
hscope__json_addr(hscope__json *w, uint64_t a)
{
    char b[24];
    value_start(w);
    b[0] = '"';
    char *e = hscope__put_addr(b + 1, a);
    *e++ = '"';
    hscope__out_write(w->o, b, (size_t)(e - b));
}

void
hscope__json_raw(hscope__json *w, const char *s, size_t n)
{
    value_start(w);
    hscope__out_write(w->o, s, n);
}

void
hscope__json_done(hscope__json *w)
{
    hscope__out_putc(w->o, '\n');
}

void
hscope__json_kstr(hscope__json *w, const char *k, const char *s)
{
    hscope__json_key(w, k);
    hscope__json_str(w, s);
}

void
hscope__json_ku64(hscope__json *w, const char *k, uint64_t v)
{
    hscope__json_key(w, k);
    hscope__json_u64(w, v);
}

void
hscope__json_kcm(hscope__json *w, const char *k, uint64_t count, uint64_t memsize)
{
    hscope__json_key(w, k);
    hscope__json_obj(w);
    hscope__json_ku64(w, "count", count);
    hscope__json_ku64(w, "memsize", memsize);
    hscope__json_end_obj(w);
}

void
hscope__json_begin_doc(hscope__json *w, const char *kind)
{
    hscope__json_obj(w);
    hscope__json_kstr(w, "kind", kind);
    hscope__json_kstr(w, "heapscope_version", HSCOPE_VERSION_STRING);
}

/* ------------------------------------------------------------------ */
/* Syntax check (a record from a dump is written raw only if valid)    */
/* ------------------------------------------------------------------ */

static const char *
ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* Past a string starting at p ('"'), or NULL. */
static const char *
str_end(const char *p, const char *e)
{
    for (p++; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c < 0x20)
            return NULL;
        if (c == '\\') {
            if (++p >= e)
                return NULL;
            if (*p == 'u') {
                for (int k = 0; k < 4; k++)
                    if (++p >= e || !strchr("0123456789abcdefABCDEF", *p))
                        return NULL;
            } else if (!strchr("\"\\/bfnrt", *p)) {
                return NULL;
            }
        }
    }
    return NULL;
}

static const char *
digits(const char *p, const char *e)
{
    const char *q = p;
    while (q < e && *q >= '0' && *q <= '9')
        q++;
    return q > p ? q : NULL;
}

/* Past a number, literal or string at p, or NULL. */
static const char *
scalar_end(const char *p, const char *e)
{
    if (*p == '"')
        return str_end(p, e);
    static const char *const lits[] = { "true", "false", "null" };
    for (int i = 0; i < 3; i++) {
        size_t l = strlen(lits[i]);
        if ((size_t)(e - p) >= l && memcmp(p, lits[i], l) == 0)
            return p + l;
    }
    if (*p == '-')
        p++;
    if (p < e && *p == '0')
        p++;
    else if (!(p = digits(p, e)))
        return NULL;
    if (p < e && *p == '.' && !(p = digits(p + 1, e)))
        return NULL;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (!(p = digits(p, e)))
            return NULL;
    }
    return p;
}

int
hscope__json_valid(const char *s, size_t n)
{
    const char *p = s, *e = s + n;
    char stack[64];
    int depth = 0;
    for (;;) {
        /* a value */
        if ((p = ws(p, e)) >= e)
            return 0;
        if (*p == '{' || *p == '[') {
            if (depth == (int)sizeof(stack))
                return 0;
            stack[depth++] = *p;
            p = ws(p + 1, e);
            if (p < e && *p == (stack[depth - 1] == '{' ? '}' : ']')) {
                depth--;
                p++;
            } else if (stack[depth - 1] == '{') {
                if (p >= e || *p != '"' || !(p = str_end(p, e)) || (p = ws(p, e)) >= e ||
                    *p++ != ':')
                    return 0;
                continue;
            } else {
                continue;
            }
        } else if (!(p = scalar_end(p, e))) {
            return 0;
        }
        /* after a value: close containers, or a ',' and the next value */
        for (;;) {
            p = ws(p, e);
            if (depth == 0)
                return p == e;
            if (p >= e)
                return 0;
            char close = stack[depth - 1] == '{' ? '}' : ']';
            if (*p == close) {
                depth--;
                p++;
                continue;
            }
            if (*p++ != ',')
                return 0;
            if (stack[depth - 1] == '{') {
                if ((p = ws(p, e)) >= e || *p != '"' || !(p = str_end(p, e)) ||
                    (p = ws(p, e)) >= e || *p++ != ':')
                    return 0;
            }
            break;
        }
    }
}
