/*
 * jsonw.h - the streaming JSON writer (jsonw.c).
 */
#ifndef HSCOPE_REPORT_JSONW_H
#define HSCOPE_REPORT_JSONW_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"

/*
 * Streaming JSON writer.  Strings are escaped for '"', '\\' and control
 * bytes; other bytes pass through unchanged (dumps hold non-UTF-8 file
 * names; readers that decode with surrogateescape see the dump's bytes).
 * With `script_safe`, the output may sit inside an HTML <script>: '<', '>',
 * '&', '\'' and U+2028/2029 are \u-escaped and invalid UTF-8 becomes
 * \ufffd.
 */
typedef struct hscope__json {
    hscope__out *o;
    int depth;
    int pretty;
    int script_safe;
    int after_key;
    unsigned char first[64];  /* per level: no element written yet */
} hscope__json;

void hscope__json_init(hscope__json *w, hscope__out *o, int pretty);
void hscope__json_obj(hscope__json *w);
void hscope__json_end_obj(hscope__json *w);
void hscope__json_arr(hscope__json *w);
void hscope__json_end_arr(hscope__json *w);
void hscope__json_key(hscope__json *w, const char *k);
void hscope__json_str(hscope__json *w, const char *s);        /* NULL: null */
void hscope__json_strn(hscope__json *w, const char *s, size_t n);
void hscope__json_u64(hscope__json *w, uint64_t v);
void hscope__json_i64(hscope__json *w, int64_t v);
void hscope__json_f64(hscope__json *w, double v, int decimals); /* NaN: null */
void hscope__json_bool(hscope__json *w, int v);
void hscope__json_null(hscope__json *w);
void hscope__json_addr(hscope__json *w, uint64_t a);          /* "0x..." */
/* A raw, already valid JSON value (e.g. a record from the dump). */
void hscope__json_raw(hscope__json *w, const char *s, size_t n);
void hscope__json_done(hscope__json *w);                      /* newline */

/* Shorthands: key + value. */
void hscope__json_kstr(hscope__json *w, const char *k, const char *s);
void hscope__json_ku64(hscope__json *w, const char *k, uint64_t v);
/* "key": {"count": n, "memsize": m} */
void hscope__json_kcm(hscope__json *w, const char *k, uint64_t count,
                      uint64_t memsize);

/* The head every JSON document starts with: {"kind": kind,
 * "heapscope_version": "..." (the object stays open). */
void hscope__json_begin_doc(hscope__json *w, const char *kind);

/* 1 if s[0..n) is one JSON value (syntax only; nesting up to 64). */
int hscope__json_valid(const char *s, size_t n);

#endif
