/*
 * json_out.h - minimal streaming JSON writer for the CLI (no allocation).
 */
#ifndef HSCOPE_CLI_JSON_OUT_H
#define HSCOPE_CLI_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>

typedef struct jw {
    FILE *f;
    int depth;
    int first[64];  /* per level: no element written yet */
    int pretty;
    int after_key; /* next value follows a key: no separator */
} jw;

void jw_init(jw *w, FILE *f, int pretty);
void jw_obj(jw *w);          /* { */
void jw_end_obj(jw *w);      /* } */
void jw_arr(jw *w);          /* [ */
void jw_end_arr(jw *w);      /* ] */
void jw_key(jw *w, const char *k);
void jw_str(jw *w, const char *s);            /* NULL -> null */
void jw_strn(jw *w, const char *s, size_t n);
void jw_u64(jw *w, uint64_t v);
void jw_i64(jw *w, int64_t v);
void jw_f64(jw *w, double v, int decimals);
void jw_bool(jw *w, int v);
void jw_null(jw *w);
void jw_addr(jw *w, uint64_t a); /* "0x..." */
void jw_lines(jw *w, const char *text); /* ["line", ...] of a text, [] for ""/NULL */
void jw_done(jw *w);         /* final newline */

#endif
