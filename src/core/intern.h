/*
 * intern.h - string interner: every distinct byte string is stored once and
 * named by a dense 32-bit id (0 means "absent").  Hashing is xxhash (XXH3).
 * Not thread-safe while adding; read-only lookups of ids are.
 */
#ifndef HSCOPE_INTERN_H
#define HSCOPE_INTERN_H

#include "core.h"

typedef struct hscope__intern {
    hscope__mem *mem;
    char *arena;          /* strings, each followed by a NUL */
    size_t arena_len, arena_cap;
    uint64_t *off;        /* off[id] = offset in arena; id 0 unused */
    uint32_t *len;        /* byte length (strings may contain NUL) */
    size_t count, cap;    /* ids in use (incl. 0), capacity of off/len */
    uint32_t *table;      /* open addressing: id or 0 */
    uint64_t *hash;       /* hash[id], kept for rehashing */
    size_t tmask;
} hscope__intern;

hscope_status hscope__intern_init(hscope__intern *in, hscope__mem *m,
                                  hscope_error *err);
void hscope__intern_free(hscope__intern *in);
/* Intern bytes s[0..n); *id gets the id (>= 1). */
hscope_status hscope__intern_add(hscope__intern *in, const char *s, size_t n,
                                 uint32_t *id, hscope_error *err);
/* Look up without adding: 0 if absent. */
uint32_t hscope__intern_find(const hscope__intern *in, const char *s,
                             size_t n);
static inline const char *
hscope__intern_str(const hscope__intern *in, uint32_t id)
{
    return id && id < in->count ? in->arena + in->off[id] : NULL;
}
static inline uint32_t
hscope__intern_len(const hscope__intern *in, uint32_t id)
{
    return id && id < in->count ? in->len[id] : 0;
}
size_t hscope__intern_bytes(const hscope__intern *in);

#endif
