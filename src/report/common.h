/*
 * common.h - the writers' shared pieces (common.c): CSV fields,
 * warnings in one wording, object references.
 */
#ifndef HSCOPE_REPORT_COMMON_H
#define HSCOPE_REPORT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "jsonw.h"
#include "out.h"

/* One CSV field (RFC 4180): quoted when needed, invalid UTF-8 replaced by
 * U+FFFD; NULL writes an empty, unquoted field (NULL for COPY). */
void hscope__csv_field(hscope__out *o, const char *s);

/* "dumps": [{"path": name 0 or null, "objects": N}] for a result of one
 * heap (h may be NULL: `objects` is used). */
void hscope__json_dumps_of_heap(hscope__json *w, const hscope__ropts *ro,
                                const hscope_heap_t *h, uint64_t objects);
/* One {"path", "objects"} element of "dumps". */
void hscope__json_dump(hscope__json *w, const char *name, uint64_t objects);

/*
 * Warnings of a result, gathered once and written the same way in text
 * ("warning: MESSAGE" lines) and JSON ("warnings": [{"code", "message"}]).
 * Codes (docs/JSON.md): skipped_lines, truncated, no_tracing, partial,
 * compaction, different_process, repeated, backwards.
 */
#define HSCOPE__MAX_WARNINGS 24
typedef struct hscope__warning {
    const char *code;
    char message[480];
} hscope__warning;
typedef struct hscope__warnings {
    int n;
    hscope__warning w[HSCOPE__MAX_WARNINGS];
} hscope__warnings;

void hscope__warn(hscope__warnings *ws, const char *code, const char *fmt, ...)
    HS_PRINTF(3, 4);
/* A damaged dump (load statistics and skip counts): skipped lines, cut
 * short.  `name` (may be NULL) starts each message. */
void hscope__warn_damage(hscope__warnings *ws, const char *name,
                         const hscope_load_stats *s,
                         const uint64_t skipped[HSCOPE_SKIP__COUNT]);
/* The messages of hscope__warn_damage() as lines of text into buf (n
 * bytes, as snprintf); the whole text's length (hscope_load_warnings_text). */
uint64_t hscope__load_warnings_text(const char *name, const hscope_load_stats *s,
                                    const uint64_t skipped[HSCOPE_SKIP__COUNT], char *buf,
                                    size_t n);
void hscope__warn_heap(hscope__warnings *ws, const char *name, const hscope_heap_t *h);
void hscope__warn_tally(hscope__warnings *ws, const char *name, const hscope_tally_t *t);
/* Every line of a diff's warning text, with its code. */
void hscope__warn_diff(hscope__warnings *ws, const hscope_diff_t *d);
/* Every line of a warning text, each with the code of its
 * HSCOPE_DIFF_WARN_* bit code_of(ctx, line) ("warning" for 0). */
void hscope__warn_coded(hscope__warnings *ws, const char *text,
                        uint32_t (*code_of)(const void *ctx, uint32_t line), const void *ctx);
/* "warnings": [...] */
void hscope__json_warnings(hscope__json *w, const hscope__warnings *ws);
/* "warning: MESSAGE" lines (none with HSCOPE_REPORT_NO_WARNINGS). */
void hscope__text_warnings(hscope__out *o, const hscope__ropts *ro,
                           const hscope__warnings *ws);
/* "left out: N objects allocated by the dumper itself" (nothing for 0). */
void hscope__text_excluded(hscope__out *o, uint64_t n);
/* "left out: the allocation tracer (…), N objects, SIZE" (nothing for 0). */
void hscope__text_excluded_tracer(hscope__out *o, uint64_t n, uint64_t memsize);

/* Name of a root category, "(roots)" for the super-root (-1). */
const char *hscope__root_name(const hscope_heap_t *h, int32_t cat);
/* The type name of an object ("STRING"). */
const char *hscope__type_name(const hscope_heap_t *h, hscope_id id);
/* "TYPE label" of an object, as text prints it ("CLASS PostsController"). */
void hscope__obj_text(const hscope_heap_t *h, hscope_id id, char *buf, size_t n);
/* The members of an object reference, in an open JSON object: "address",
 * "type", "class" (the class label), "label" (the object's own name). */
void hscope__json_objref_fields(hscope__json *w, const hscope_heap_t *h, hscope_id id);
/* {"address", "type", "class", "label"} */
void hscope__json_objref(hscope__json *w, const hscope_heap_t *h, hscope_id id);
/* [objref, ...] of ids[0..n) */
void hscope__json_objrefs(hscope__json *w, const hscope_heap_t *h, const hscope_id *ids,
                          uint64_t n);

#endif
