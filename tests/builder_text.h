/*
 * builder_text.h - a parse result as text, for tests that compare two
 * parses of the same input (tests/unit/test_blocks.c, tests/fuzz/
 * fuzz_blocks.c): every object with its fields, references and the
 * strings its ids name, roots, values, counters, skip examples and the
 * byte count.  Two builders hold the same result iff the texts are equal.
 */
#ifndef HSCOPE_TEST_BUILDER_TEXT_H
#define HSCOPE_TEST_BUILDER_TEXT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/parse/builder.h"

/* ------------------------------------------------------------------ */
/* a growable text                                                    */
/* ------------------------------------------------------------------ */

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static inline void
put(text *t, const void *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
        if (!t->p)
            abort();
    }
    if (n)
        memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = 0;
}

static inline void
putf(text *t, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(tmp))
        abort();
    put(t, tmp, (size_t)n);
}

static inline void
put_str(text *t, const hscope__builder *b, uint32_t id)
{
    put(t, "\"", 1);
    put(t, hscope__intern_str(&b->strings, id), hscope__intern_len(&b->strings, id));
    put(t, "\"", 1);
}

/* Everything the builder holds, ids replaced by the strings they name. */
static inline void
describe(text *t, const hscope__builder *b)
{
    putf(t, "objects %zu edges %zu\n", b->n, b->nedges);
    for (size_t i = 0; i < b->n; i++) {
        uint32_t s = b->site[i];
        putf(t, "%llx %u %u %llx ", (unsigned long long)b->addr[i], b->type[i],
             b->flags[i],
             (unsigned long long)(b->cls_addr ? b->cls_addr[b->class_ix[i]] : 0));
        put_str(t, b, b->detail[i]);
        put_str(t, b, b->site_file[s]);
        putf(t, ":%u:", b->site_line[s]);
        put_str(t, b, b->site_method[s]);
        putf(t, " %u %u %u [", b->gen[i], b->memsize[i], b->size[i]);
        size_t e1 = i + 1 < b->n ? b->edge_start[i + 1] : b->nedges;
        for (size_t e = b->edge_start[i]; e < e1; e++)
            putf(t, " %llx", (unsigned long long)b->edges[e]);
        put(t, " ]\n", 3);
        if (b->type[i] >= 32 && b->type[i] != HSCOPE_TYPE_OTHER)
            putf(t, "  type %s\n", b->type_names[b->type[i]]);
    }
    for (size_t i = 0; i < b->big_memsize.len; i++)
        putf(t, "big memsize %u %llu\n", b->big_memsize.id[i],
             (unsigned long long)b->big_memsize.val[i]);
    for (size_t i = 0; i < b->big_size.len; i++)
        putf(t, "big size %u %llu\n", b->big_size.id[i], (unsigned long long)b->big_size.val[i]);
    for (size_t i = 0; i < b->nroot; i++) {
        putf(t, "root %llx ", (unsigned long long)b->root_addr[i]);
        put_str(t, b, b->cat_name[b->root_cat[i]]);
        put(t, "\n", 1);
    }
    for (size_t c = 0; c < b->ncat; c++) {
        put(t, "category ", 9);
        put_str(t, b, b->cat_name[c]);
        putf(t, " %llu\n", (unsigned long long)b->cat_records[c]);
    }
    for (size_t i = 0; i < b->nval; i++) {
        putf(t, "value %u ", b->val_id[i]);
        put(t, b->val_arena + b->val_off[i], b->val_len[i]);
        put(t, "\n", 1);
    }
    putf(t, "lines %llu bytes %llu shapes %llu %llu free %llu unknown %llu %llu "
            "truncated %llu roots %llu\n",
         (unsigned long long)b->lines, (unsigned long long)b->bytes,
         (unsigned long long)b->shapes, (unsigned long long)b->shape_memsize,
         (unsigned long long)b->free_slots, (unsigned long long)b->unknown_keys,
         (unsigned long long)b->unknown_types, (unsigned long long)b->truncated,
         (unsigned long long)b->root_records);
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        if (b->skipped[r])
            putf(t, "skipped %s %llu\n", hscope_skip_reason_name(r),
                 (unsigned long long)b->skipped[r]);
    for (uint32_t i = 0; i < b->nskip_examples; i++)
        putf(t, "skip at line %llu: %s\n", (unsigned long long)b->skip_line[i],
             hscope_skip_reason_name(b->skip_reason[i]));
}

#endif
