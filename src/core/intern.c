/*
 * intern.c - string interner (open addressing, linear probing, XXH3).
 */
#include "intern.h"

#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

hscope_status
hscope__intern_init(hscope__intern *in, hscope__mem *m, hscope_error *err)
{
    memset(in, 0, sizeof(*in));
    in->mem = m;
    in->table = hscope__calloc(m, 1024, sizeof(uint32_t));
    if (!in->table)
        return hscope__nomem(err, 1024 * sizeof(uint32_t));
    in->tmask = 1023;
    in->count = 1; /* id 0 = absent */
    return HSCOPE_OK;
}

void
hscope__intern_free(hscope__intern *in)
{
    hscope__free(in->mem, in->arena);
    hscope__free(in->mem, in->off);
    hscope__free(in->mem, in->len);
    hscope__free(in->mem, in->table);
    hscope__free(in->mem, in->hash);
    memset(in, 0, sizeof(*in));
}

static hscope_status
rehash(hscope__intern *in, hscope_error *err)
{
    size_t ncap = (in->tmask + 1) * 2;
    uint32_t *t = hscope__calloc(in->mem, ncap, sizeof(uint32_t));
    if (!t)
        return hscope__nomem(err, ncap * sizeof(uint32_t));
    for (size_t id = 1; id < in->count; id++) {
        size_t i = (size_t)in->hash[id] & (ncap - 1);
        while (t[i])
            i = (i + 1) & (ncap - 1);
        t[i] = (uint32_t)id;
    }
    hscope__free(in->mem, in->table);
    in->table = t;
    in->tmask = ncap - 1;
    return HSCOPE_OK;
}

uint32_t
hscope__intern_find(const hscope__intern *in, const char *s, size_t n)
{
    uint64_t h = XXH3_64bits(s, n);
    size_t i = (size_t)h & in->tmask;
    for (uint32_t id; (id = in->table[i]) != 0; i = (i + 1) & in->tmask) {
        if (in->hash[id] == h && in->len[id] == n &&
            memcmp(in->arena + in->off[id], s, n) == 0)
            return id;
    }
    return 0;
}

hscope_status
hscope__intern_add(hscope__intern *in, const char *s, size_t n, uint32_t *id,
                   hscope_error *err)
{
    hscope_status st;
    uint64_t h = XXH3_64bits(s, n);
    size_t i = (size_t)h & in->tmask;
    for (uint32_t k; (k = in->table[i]) != 0; i = (i + 1) & in->tmask) {
        if (in->hash[k] == h && in->len[k] == n &&
            memcmp(in->arena + in->off[k], s, n) == 0) {
            *id = k;
            return HSCOPE_OK;
        }
    }
    if (n > UINT32_MAX || in->count >= UINT32_MAX - 1)
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "too many or too long strings");
    size_t oldcap = in->cap;
    if ((st = hscope__grow(in->mem, (void **)&in->off, &in->cap, in->count + 1,
                           sizeof(uint64_t), err)) != HSCOPE_OK)
        return st;
    if (in->cap != oldcap) {
        /* len and hash follow off's capacity */
        uint32_t *nl = hscope__realloc(in->mem, in->len, in->cap * sizeof(uint32_t));
        if (!nl) {
            in->cap = oldcap;
            return hscope__nomem(err, in->cap * sizeof(uint32_t));
        }
        in->len = nl;
        uint64_t *nh = hscope__realloc(in->mem, in->hash, in->cap * sizeof(uint64_t));
        if (!nh) {
            in->cap = oldcap;
            return hscope__nomem(err, in->cap * sizeof(uint64_t));
        }
        in->hash = nh;
        if (oldcap == 0) { /* id 0 (absent) has no string: keep it defined */
            in->off[0] = 0;
            in->len[0] = 0;
            in->hash[0] = 0;
        }
    }
    size_t need;
    if (!hscope__add_ok(in->arena_len, n + 1, &need))
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "string arena overflow");
    if ((st = hscope__grow(in->mem, (void **)&in->arena, &in->arena_cap, need, 1,
                           err)) != HSCOPE_OK)
        return st;
    uint32_t k = (uint32_t)in->count++;
    in->off[k] = in->arena_len;
    in->len[k] = (uint32_t)n;
    in->hash[k] = h;
    if (n)
        memcpy(in->arena + in->arena_len, s, n);
    in->arena[in->arena_len + n] = '\0';
    in->arena_len = need;
    in->table[i] = k;
    *id = k;
    if (in->count * 2 > in->tmask + 1)
        return rehash(in, err);
    return HSCOPE_OK;
}

size_t
hscope__intern_bytes(const hscope__intern *in)
{
    return hscope__msize(in->arena) + hscope__msize(in->off) +
           hscope__msize(in->len) + hscope__msize(in->table) +
           hscope__msize(in->hash);
}
