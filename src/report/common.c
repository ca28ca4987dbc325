/*
 * common.c - pieces every writer shares: CSV fields, the "dumps" and
 * "warnings" members of a JSON document, object references.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../model/model.h"
#include "../analysis/diff.h"
#include "../analysis/tally.h"
#include "common.h"
#include "rowcur.h"
#include "jsonw.h"
#include "out.h"
#include "table.h"

void
hscope__csv_field(hscope__out *o, const char *s)
{
    if (!s)
        return; /* an empty field: NULL for PostgreSQL's COPY */
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    int quote = len == 0 || p[0] == ' ';
    for (size_t i = 0; i < len && !quote; i++)
        if (p[i] == ',' || p[i] == '"' || p[i] == '\n' || p[i] == '\r' || p[i] == '\\' ||
            p[i] >= 0x80 || p[i] < 0x20)
            quote = 1;
    if (!quote) {
        hscope__out_write(o, s, len);
        return;
    }
    hscope__out_putc(o, '"');
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int l = hscope__utf8_seq(p + i, len - i, &cp);
        if (!l) {
            hscope__out_puts(o, "\xef\xbf\xbd"); /* PostgreSQL wants UTF-8 */
            i++;
            continue;
        }
        if (p[i] == '"')
            hscope__out_putc(o, '"');
        hscope__out_write(o, p + i, (size_t)l);
        i += (size_t)l;
    }
    hscope__out_putc(o, '"');
}

const char hscope__digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

const uint64_t hscope__pow10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

const char hscope__hex2[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021222324252627"
    "28292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f"
    "505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f7071727374757677"
    "78797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7"
    "c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
    "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* A byte a CSV field carries as it is (hscope__csv_field() quotes a
 * field with any other, or empty, or starting with a space). */
static inline int
csv_plain(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != ',' && c != '"' && c != '\\';
}

void
hscope__cur_csv_str(hscope__cur *k, const char *s)
{
    if (!s)
        return;
    const unsigned char *u = (const unsigned char *)s;
    size_t n = 0;
    if (u[0] != ' ')
        while (csv_plain(u[n]))
            n++;
    if (n == 0 || u[n] != 0) { /* quoted: the general writer */
        hscope__cur_close(k);
        hscope__csv_field(k->o, s);
        hscope__cur_open(k, HSCOPE__ROW_ROOM);
        return;
    }
    hscope__cur_bytes(k, s, n);
}


void
hscope__json_dumps_of_heap(hscope__json *w, const hscope__ropts *ro,
                           const hscope_heap_t *h, uint64_t objects)
{
    hscope__json_key(w, "dumps");
    hscope__json_arr(w);
    hscope__json_obj(w);
    hscope__json_kstr(w, "path", hscope__ropts_dump_name(ro, 0));
    hscope__json_ku64(w, "objects", h ? hscope__heap_object_count(h) : objects);
    hscope__json_end_obj(w);
    hscope__json_end_arr(w);
}

void
hscope__json_dump(hscope__json *w, const char *name, uint64_t objects)
{
    hscope__json_obj(w);
    hscope__json_kstr(w, "path", name);
    hscope__json_ku64(w, "objects", objects);
    hscope__json_end_obj(w);
}

/* ------------------------------------------------------------------ */
/* Warnings                                                            */
/* ------------------------------------------------------------------ */

void
hscope__warn(hscope__warnings *ws, const char *code, const char *fmt, ...)
{
    if (ws->n >= HSCOPE__MAX_WARNINGS)
        return;
    hscope__warning *x = &ws->w[ws->n++];
    x->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->message, sizeof(x->message), fmt, ap);
    va_end(ap);
}

void
hscope__warn_damage(hscope__warnings *ws, const char *name, const hscope_load_stats *s,
                    const uint64_t skipped[HSCOPE_SKIP__COUNT])
{
    const char *pre = name ? name : "", *sep = name ? ": " : "";
    if (s->skipped_lines) {
        char why[256] = "";
        size_t len = 0;
        for (int r = 0; r < HSCOPE_SKIP__COUNT && len < sizeof(why); r++)
            if (skipped[r])
                len += (size_t)snprintf(why + len, sizeof(why) - len, "%s%s %llu",
                                        len ? ", " : "", hscope__skip_reason_name(r),
                                        (unsigned long long)skipped[r]);
        char a[32], b[32];
        hscope__fmt_count(s->skipped_lines, a, sizeof(a));
        hscope__fmt_count(s->lines, b, sizeof(b));
        hscope__warn(ws, "skipped_lines", "%s%s%s of %s lines skipped (%s)%s", pre, sep, a, b,
                     why, s->skipped_lines * 2 > s->lines
                         ? "; most lines could not be read: is this really a heap dump?" : "");
    }
    if (s->truncated)
        hscope__warn(ws, "truncated", "%s%sthe dump is truncated (it ends in the middle of a "
                     "record or gzip stream)", pre, sep);
}

uint64_t
hscope__load_warnings_text(const char *name, const hscope_load_stats *s,
                           const uint64_t skipped[HSCOPE_SKIP__COUNT], char *buf, size_t n)
{
    hscope__warnings ws;
    ws.n = 0;
    hscope__warn_damage(&ws, name, s, skipped);
    size_t len = 0;
    if (n)
        buf[0] = '\0';
    for (int i = 0; i < ws.n; i++) {
        int k = snprintf(len < n ? buf + len : NULL, len < n ? n - len : 0, "%s\n",
                         ws.w[i].message);
        len += k > 0 ? (size_t)k : 0;
    }
    return len;
}

void
hscope__warn_heap(hscope__warnings *ws, const char *name, const hscope_heap_t *h)
{
    hscope_load_stats s;
    uint64_t sk[HSCOPE_SKIP__COUNT];
    hscope__load_stats_init(&s);
    if (!h || hscope__heap_stats(h, &s) != HSCOPE_OK)
        return;
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        sk[r] = hscope__heap_skipped(h, r);
    hscope__warn_damage(ws, name, &s, sk);
}

void
hscope__warn_tally(hscope__warnings *ws, const char *name, const hscope_tally_t *t)
{
    hscope_load_stats s;
    uint64_t sk[HSCOPE_SKIP__COUNT];
    hscope__load_stats_init(&s);
    if (hscope__tally_stats(t, &s) != HSCOPE_OK)
        return;
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        sk[r] = hscope__tally_skipped(t, r);
    hscope__warn_damage(ws, name, &s, sk);
}

static const char *
diff_code(uint32_t bit)
{
    switch (bit) {
    case HSCOPE_DIFF_WARN_NO_TRACING: return "no_tracing";
    case HSCOPE_DIFF_WARN_PARTIAL: return "partial";
    case HSCOPE_DIFF_WARN_COMPACTION: return "compaction";
    case HSCOPE_DIFF_WARN_SKIPPED: return "skipped_lines";
    case HSCOPE_DIFF_WARN_DIFFERENT_PROCESS: return "different_process";
    case HSCOPE_DIFF_WARN_REPEATED: return "repeated";
    case HSCOPE_DIFF_WARN_BACKWARDS: return "backwards";
    default: return "warning";
    }
}

void
hscope__warn_coded(hscope__warnings *ws, const char *text,
                   uint32_t (*code_of)(const void *ctx, uint32_t line), const void *ctx)
{
    const char *t = text;
    for (uint32_t line = 0; t && *t; line++) {
        const char *nl = strchr(t, '\n');
        int n = nl ? (int)(nl - t) : (int)strlen(t);
        hscope__warn(ws, diff_code(code_of(ctx, line)), "%.*s", n, t);
        t += n + (nl != NULL);
    }
}

static uint32_t
diff_line_code(const void *ctx, uint32_t line)
{
    return hscope__diff_warning_code(ctx, line);
}

void
hscope__warn_diff(hscope__warnings *ws, const hscope_diff_t *d)
{
    hscope__warn_coded(ws, hscope__diff_warning_text(d), diff_line_code, d);
}

void
hscope__json_warnings(hscope__json *w, const hscope__warnings *ws)
{
    hscope__json_key(w, "warnings");
    hscope__json_arr(w);
    for (int i = 0; i < ws->n; i++) {
        hscope__json_obj(w);
        hscope__json_kstr(w, "code", ws->w[i].code);
        hscope__json_kstr(w, "message", ws->w[i].message);
        hscope__json_end_obj(w);
    }
    hscope__json_end_arr(w);
}

void
hscope__text_warnings(hscope__out *o, const hscope__ropts *ro, const hscope__warnings *ws)
{
    if (ro->flags & HSCOPE_REPORT_NO_WARNINGS)
        return;
    for (int i = 0; i < ws->n; i++)
        hscope__out_printf(o, "warning: %s\n", ws->w[i].message);
}

void
hscope__text_excluded(hscope__out *o, uint64_t n)
{
    char c[64];
    if (!n)
        return;
    hscope__fmt_plural(n, "object", "objects", c, sizeof(c));
    hscope__out_printf(o, "left out: %s allocated by the dumper itself\n", c);
}

void
hscope__text_excluded_tracer(hscope__out *o, uint64_t n, uint64_t memsize)
{
    char c[64], b[32];
    if (!n)
        return;
    hscope__fmt_plural(n, "object", "objects", c, sizeof(c));
    hscope__fmt_bytes((double)memsize, b, sizeof(b));
    hscope__out_printf(o, "left out: the allocation tracer (trace_object_allocations), %s, %s\n",
                       c, b);
}

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

const char *
hscope__root_name(const hscope_heap_t *h, int32_t cat)
{
    const char *n = cat >= 0 ? hscope__heap_root_category_name(h, (uint32_t)cat) : NULL;
    return n ? n : "(roots)";
}

const char *
hscope__type_name(const hscope_heap_t *h, hscope_id id)
{
    return hscope__heap_type_name(h, hscope__heap_object_type(h, id));
}

void
hscope__obj_text(const hscope_heap_t *h, hscope_id id, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s", hscope__type_name(h, id), hscope__heap_object_label(h, id));
}

void
hscope__json_objref_fields(hscope__json *w, const hscope_heap_t *h, hscope_id id)
{
    hscope__json_key(w, "address");
    hscope__json_addr(w, hscope__heap_object_address(h, id));
    hscope__json_kstr(w, "type", hscope__type_name(h, id));
    hscope__json_kstr(w, "class", hscope__heap_object_class_label(h, id));
    hscope__json_kstr(w, "label", hscope__heap_object_label(h, id));
}

void
hscope__json_objref(hscope__json *w, const hscope_heap_t *h, hscope_id id)
{
    hscope__json_obj(w);
    hscope__json_objref_fields(w, h, id);
    hscope__json_end_obj(w);
}

void
hscope__json_objrefs(hscope__json *w, const hscope_heap_t *h, const hscope_id *ids,
                     uint64_t n)
{
    hscope__json_arr(w);
    for (uint64_t i = 0; i < n; i++)
        hscope__json_objref(w, h, ids[i]);
    hscope__json_end_arr(w);
}
