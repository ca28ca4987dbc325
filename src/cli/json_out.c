/*
 * json_out.c - minimal streaming JSON writer.  Strings are written with
 * JSON escapes for '"', '\\' and control bytes; other bytes pass through
 * unchanged (dumps can hold non-UTF-8 file names; readers that decode with
 * surrogateescape see the same text as in the dump).
 */
#include "json_out.h"

#include <string.h>

static void
sep(jw *w)
{
    if (w->depth > 0) {
        if (!w->first[w->depth])
            fputc(',', w->f);
        w->first[w->depth] = 0;
        if (w->pretty) {
            fputc('\n', w->f);
            for (int i = 0; i < w->depth; i++)
                fputs("  ", w->f);
        }
    }
}

void
jw_init(jw *w, FILE *f, int pretty)
{
    memset(w, 0, sizeof(*w));
    w->f = f;
    w->pretty = pretty;
}

static void
value_start(jw *w)
{
    if (w->after_key)
        w->after_key = 0;
    else
        sep(w);
}

static void
open_(jw *w, int c)
{
    value_start(w);
    fputc(c, w->f);
    if (w->depth < 63)
        w->depth++;
    w->first[w->depth] = 1;
}

static void
close_(jw *w, int c)
{
    int empty = w->first[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (w->pretty && !empty) {
        fputc('\n', w->f);
        for (int i = 0; i < w->depth; i++)
            fputs("  ", w->f);
    }
    fputc(c, w->f);
}

void jw_obj(jw *w) { open_(w, '{'); }
void jw_end_obj(jw *w) { close_(w, '}'); }
void jw_arr(jw *w) { open_(w, '['); }
void jw_end_arr(jw *w) { close_(w, ']'); }

static void
put_escaped(FILE *f, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (c < 0x20 || c == 0x7f) {
                fputs("\\u00", f);
                fputc(hex[c >> 4], f);
                fputc(hex[c & 15], f);
            } else {
                fputc(c, f);
            }
        }
    }
    fputc('"', f);
}

void
jw_key(jw *w, const char *k)
{
    sep(w);
    put_escaped(w->f, k, strlen(k));
    fputs(w->pretty ? ": " : ":", w->f);
    w->after_key = 1;
}

void
jw_strn(jw *w, const char *s, size_t n)
{
    value_start(w);
    put_escaped(w->f, s, n);
}

void
jw_str(jw *w, const char *s)
{
    if (!s) {
        jw_null(w);
        return;
    }
    jw_strn(w, s, strlen(s));
}

void
jw_u64(jw *w, uint64_t v)
{
    value_start(w);
    fprintf(w->f, "%llu", (unsigned long long)v);
}

void
jw_i64(jw *w, int64_t v)
{
    value_start(w);
    fprintf(w->f, "%lld", (long long)v);
}

void
jw_f64(jw *w, double v, int decimals)
{
    value_start(w);
    if (v != v || v > 1e300 || v < -1e300)
        fputs("null", w->f);
    else
        fprintf(w->f, "%.*f", decimals, v);
}

void
jw_bool(jw *w, int v)
{
    value_start(w);
    fputs(v ? "true" : "false", w->f);
}

void
jw_null(jw *w)
{
    value_start(w);
    fputs("null", w->f);
}

void
jw_addr(jw *w, uint64_t a)
{
    value_start(w);
    fprintf(w->f, "\"0x%llx\"", (unsigned long long)a);
}

void
jw_done(jw *w)
{
    fputc('\n', w->f);
}

void
jw_lines(jw *w, const char *text)
{
    jw_arr(w);
    while (text && *text) {
        const char *nl = strchr(text, '\n');
        size_t n = nl ? (size_t)(nl - text) : strlen(text);
        jw_strn(w, text, n);
        text += n + (nl != NULL);
    }
    jw_end_arr(w);
}
