/*
 * out.h - the report layer's first building block (every writer of
 * the library, text, JSON, CSV, DOT, SVG, HTML, is built on it and on
 * jsonw.h and table.h, so that the CLI, the Ruby gem and FFI callers get
 * the same bytes): buffered output to a caller's write function, first error
 * wins (out.c), growable buffers and the report options.
 */
#ifndef HSCOPE_REPORT_OUT_H
#define HSCOPE_REPORT_OUT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"

/*
 * Output to a hscope_write_fn through a fixed buffer (its own 8 KiB, or a
 * larger one of the caller's: hscope__out_use_buffer).  Errors are sticky:
 * after the first failed write nothing more is written and
 * hscope__out_finish() returns HSCOPE_ERR_IO (first error wins), so writers
 * need not check every call.
 */
typedef struct hscope__out {
    hscope_write_fn write;
    void *user_data;
    hscope_error *err;
    hscope_status status;
    size_t len;
    uint64_t total;          /* bytes passed to write so far */
    char *ext;               /* the caller's buffer, or NULL: buf */
    size_t ext_cap;
    char buf[8192];
} hscope__out;

void hscope__out_init(hscope__out *o, hscope_write_fn write, void *user_data,
                      hscope_error *err);
/* Buffer through `buf` (cap bytes, the caller's, outliving o) instead of
 * the 8 KiB of o itself: fewer, larger writes for outputs of hundreds of
 * MB.  Right after hscope__out_init(), before anything is written. */
void hscope__out_use_buffer(hscope__out *o, char *buf, size_t cap);
/* Room for n more bytes in the buffer (flushed first if it has less):
 * where to write them (*avail bytes there, n or more), then
 * hscope__out_advance() by what was written.  NULL if n is more than the
 * buffer holds (write it with hscope__out_write()).  For writers that
 * format rows in place. */
char *hscope__out_room(hscope__out *o, size_t n, size_t *avail);
static inline void
hscope__out_advance(hscope__out *o, size_t n)
{
    o->len += n;
}
void hscope__out_write(hscope__out *o, const void *p, size_t n);
void hscope__out_puts(hscope__out *o, const char *s);
void hscope__out_putc(hscope__out *o, int c);
void hscope__out_printf(hscope__out *o, const char *fmt, ...) HS_PRINTF(2, 3);
void hscope__out_vprintf(hscope__out *o, const char *fmt, va_list ap);
/* n copies of byte c. */
void hscope__out_fill(hscope__out *o, int c, size_t n);
/* Flush; HSCOPE_OK or the first error. */
hscope_status hscope__out_finish(hscope__out *o);

/* The decimal digits of v written backwards so that they end just before
 * `end` (at most 20 bytes); returns the first digit. */
char *hscope__u64_digits(char *end, uint64_t v);

/* A write function that appends to a growable buffer (for writers that
 * embed another writer's output, e.g. an SVG chart in the HTML report). */
typedef struct hscope__membuf {
    hscope__mem *mem;
    char *data;
    size_t len, cap;
    int failed;
} hscope__membuf;
int32_t hscope__membuf_write(void *user_data, const char *data, uint64_t len);
void hscope__membuf_free(hscope__membuf *b);

/* A caller's report options, checked and completed with the defaults. */
typedef struct hscope__ropts {
    int32_t format;          /* HSCOPE_FORMAT_*, never 0 */
    uint32_t flags;
    uint32_t width;
    uint64_t top;            /* UINT64_MAX: all */
    uint32_t depth;
    uint32_t max_paths;
    const char *const *dump_names;
    uint64_t dump_name_count;
} hscope__ropts;

/* Check a caller's options (NULL: defaults) against the formats a writer
 * supports (bit 1 << format). */
hscope_status hscope__ropts_read(const hscope_report_options *in,
                                 uint32_t formats, hscope__ropts *out,
                                 hscope_error *err);
#define HSCOPE__FMT(f) (1u << (f))

/* Name of dump i (as given in the options), or NULL. */
const char *hscope__ropts_dump_name(const hscope__ropts *o, uint64_t i);

#endif
