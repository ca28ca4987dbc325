/*
 * out.c - buffered output to a caller's write function, and the check of
 * report options shared by every writer.
 */
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "out.h"

void
hscope__out_init(hscope__out *o, hscope_write_fn write, void *user_data,
                 hscope_error *err)
{
    o->write = write;
    o->user_data = user_data;
    o->err = err;
    o->status = HSCOPE_OK;
    o->len = 0;
    o->total = 0;
    o->ext = NULL;
    o->ext_cap = 0;
}

void
hscope__out_use_buffer(hscope__out *o, char *buf, size_t cap)
{
    if (buf && cap > sizeof(o->buf) && o->len == 0) {
        o->ext = buf;
        o->ext_cap = cap;
    }
}

static inline char *
base(hscope__out *o)
{
    return o->ext ? o->ext : o->buf;
}

static inline size_t
cap(const hscope__out *o)
{
    return o->ext ? o->ext_cap : sizeof(o->buf);
}

static void
flush(hscope__out *o)
{
    if (o->status == HSCOPE_OK && o->len) {
        if (o->write(o->user_data, base(o), o->len) != 0)
            o->status = hscope__fail(o->err, HSCOPE_ERR_IO,
                                     "output: the write function failed after %llu bytes",
                                     (unsigned long long)o->total);
        else
            o->total += o->len;
    }
    o->len = 0;
}

void
hscope__out_write(hscope__out *o, const void *p, size_t n)
{
    if (o->status != HSCOPE_OK)
        return;
    if (o->len + n > cap(o)) {
        flush(o);
        if (n > cap(o)) {
            /* large pieces (a record from the dump) go out directly */
            if (o->status == HSCOPE_OK && o->write(o->user_data, p, n) != 0)
                o->status = hscope__fail(o->err, HSCOPE_ERR_IO,
                                         "output: the write function failed after %llu bytes",
                                         (unsigned long long)o->total);
            else
                o->total += n;
            return;
        }
    }
    memcpy(base(o) + o->len, p, n);
    o->len += n;
}

char *
hscope__out_room(hscope__out *o, size_t n, size_t *avail)
{
    if (o->len + n > cap(o)) {
        flush(o);
        if (n > cap(o))
            return NULL;
    }
    *avail = cap(o) - o->len;
    return base(o) + o->len;
}

void
hscope__out_puts(hscope__out *o, const char *s)
{
    hscope__out_write(o, s, strlen(s));
}

void
hscope__out_putc(hscope__out *o, int c)
{
    if (o->len >= cap(o))
        flush(o);
    base(o)[o->len++] = (char)c;
}

void
hscope__out_fill(hscope__out *o, int c, size_t n)
{
    while (n--)
        hscope__out_putc(o, c);
}

void
hscope__out_vprintf(hscope__out *o, const char *fmt, va_list ap)
{
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    if ((size_t)n < sizeof(small)) {
        hscope__out_write(o, small, (size_t)n);
    } else {
        /* rare: a long formatted piece; format it in the output buffer */
        flush(o);
        if ((size_t)n < cap(o)) {
            vsnprintf(base(o), cap(o), fmt, ap2);
            o->len = (size_t)n;
        } else {
            hscope__out_write(o, small, sizeof(small) - 1); /* cut, never overflow */
        }
    }
    va_end(ap2);
}

void
hscope__out_printf(hscope__out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hscope__out_vprintf(o, fmt, ap);
    va_end(ap);
}

hscope_status
hscope__out_finish(hscope__out *o)
{
    flush(o);
    return o->status;
}

int32_t
hscope__membuf_write(void *user_data, const char *data, uint64_t len)
{
    hscope__membuf *b = user_data;
    hscope_error err;
    hscope__error_init(&err);
    if (b->failed)
        return -1;
    if (len > SIZE_MAX - b->len - 1 ||
        hscope__grow(b->mem, (void **)&b->data, &b->cap, b->len + (size_t)len + 1, 1,
                     &err) != HSCOPE_OK) {
        b->failed = 1;
        return -1;
    }
    memcpy(b->data + b->len, data, (size_t)len);
    b->len += (size_t)len;
    b->data[b->len] = '\0';
    return 0;
}

void
hscope__membuf_free(hscope__membuf *b)
{
    hscope__free(b->mem, b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

hscope_status
hscope__ropts_read(const hscope_report_options *in, uint32_t formats,
                   hscope__ropts *out, hscope_error *err)
{
    hscope_report_options d = HSCOPE_REPORT_OPTIONS_INIT;
    if (in) {
        if (in->size < offsetof(hscope_report_options, flags))
            return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                                "hscope_report_options.size is %u: set it with "
                                "HSCOPE_REPORT_OPTIONS_INIT or hscope_report_options_init()",
                                in->size);
        if (!hscope__tail_is_zero(in, in->size, sizeof(d)))
            return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                                "hscope_report_options has unknown non-zero fields "
                                "(newer header than library?)");
        memcpy(&d, in, in->size < sizeof(d) ? in->size : sizeof(d));
    }
    int32_t f = d.format ? d.format : HSCOPE_FORMAT_TEXT;
    if (f < 1 || f > 31 || !(formats & HSCOPE__FMT(f)))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "this result has no writer for format %d", (int)f);
    if (d.flags & ~(uint32_t)(HSCOPE_REPORT_ADDRESSES | HSCOPE_REPORT_PRETTY |
                              HSCOPE_REPORT_VALUES | HSCOPE_REPORT_ASCII |
                              HSCOPE_REPORT_NO_WARNINGS | HSCOPE_REPORT_BARS |
                              HSCOPE_REPORT_SKIP_TRACER | HSCOPE_REPORT_KEEP_DUMPER |
                      HSCOPE_REPORT_LISTS_TOP))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown report flags 0x%x",
                            d.flags);
    if (d.dump_name_count && !d.dump_names)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                            "dump_name_count is %llu but dump_names is NULL",
                            (unsigned long long)d.dump_name_count);
    out->format = f;
    out->flags = d.flags;
    out->width = d.width ? d.width : 100;
    if (out->width < 40)
        out->width = 40;
    out->top = d.top ? d.top : 20;
    out->depth = d.depth ? d.depth : 3;
    out->max_paths = d.max_paths ? d.max_paths : 1;
    out->dump_names = d.dump_names;
    out->dump_name_count = d.dump_name_count;
    return HSCOPE_OK;
}

const char *
hscope__ropts_dump_name(const hscope__ropts *o, uint64_t i)
{
    return i < o->dump_name_count ? o->dump_names[i] : NULL;
}

char *
hscope__u64_digits(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}
