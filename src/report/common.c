/*
 * common.c - pieces every writer shares: CSV fields, the "dumps" and
 * "warnings" members of a JSON document.
 */
#include <stdio.h>
#include <string.h>

#include "writer.h"

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

void
hscope__json_dumps_of_heap(hscope__json *w, const hscope__ropts *ro,
                           const hscope_heap_t *h, uint64_t objects)
{
    hscope__json_key(w, "dumps");
    hscope__json_arr(w);
    hscope__json_obj(w);
    hscope__json_kstr(w, "path", hscope__ropts_dump_name(ro, 0));
    hscope__json_ku64(w, "objects", h ? hscope_heap_object_count(h) : objects);
    hscope__json_end_obj(w);
    hscope__json_end_arr(w);
}

void
hscope__json_warning(hscope__json *w, const char *code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    hscope__json_obj(w);
    hscope__json_kstr(w, "code", code);
    hscope__json_kstr(w, "message", msg);
    hscope__json_end_obj(w);
}

void
hscope__json_heap_warnings(hscope__json *w, const hscope_heap_t *h)
{
    hscope__json_key(w, "warnings");
    hscope__json_arr(w);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    if (h && hscope_heap_stats(h, &s) == HSCOPE_OK) {
        if (s.skipped_lines)
            hscope__json_warning(w, "skipped_lines", "%llu malformed lines were skipped",
                                 (unsigned long long)s.skipped_lines);
        if (s.truncated)
            hscope__json_warning(w, "truncated",
                                 "the dump ends in the middle of a record or stream");
    }
    hscope__json_end_arr(w);
}
