/*
 * waste.c - what a heap could shrink by: duplicate strings, empty
 * collections and oversized buffers.  This file is the accumulator that
 * sees the objects one at a time (waste_scan.c feeds it from a streamed
 * dump or a loaded heap); waste_build.c makes the result.
 *
 * What it keeps:
 *  - totals, and per (kind, type, file, line) the empty and oversized
 *    objects: small tables, bounded by the number of sites;
 *  - per distinct string value, half a cache line (32 bytes): its XXH3-64
 *    hash, length and where its first copy is, never its bytes; once seen
 *    twice, a group with the copies counted at one site (most values come
 *    from one);
 *  - per value seen twice: one copy of its bytes (the representative, in
 *    the entry up to 16 bytes, else in an arena), against which every
 *    later copy is compared with memcmp, and per (value, other site) the
 *    copies counted there;
 *  - a ring of 16 MiB holding the bytes and details of the latest first
 *    copies.
 * So memory grows with the number of distinct values and the bytes of the
 * repeated ones, never with every value.
 *
 * Nobody knows a value will repeat until its second copy comes: by then
 * the first copy's bytes are in the ring (in the dumps we measured, 99%
 * of second copies come within a few MiB of new values after the first:
 * copies made by one loop sit in nearby heap pages), or fetched from a
 * loaded heap (`resolve`), or else read back from the dump's line at the
 * end (hscope__wacc_pending, hscope__wacc_confirm).  Copies whose bytes
 * differ from the representative despite an equal hash and length are
 * counted apart (collisions), never grouped.
 *
 * Threads: a "source" (one per parser slot) classifies its objects and
 * hashes its strings on its own thread, keeping the strings in a stash;
 * the accumulator takes the stashes on one thread in the dump's order
 * (hscope__wsrc_flush after each chunk), so the value table needs no lock
 * and the first copy is the first in the dump, whatever the threads.
 */
#include <string.h>

#include "waste_acc.h"
#include "../core/core.h"
#include "waste.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define DEFAULT_SLOT 40  /* sizeof(RVALUE) on 64-bit Ruby up to 3.1 */
#define OWN_FLUSH ((size_t)256 << 10) /* own sources hand over this many bytes */

/* ------------------------------------------------------------------ */
/* tables                                                              */
/* ------------------------------------------------------------------ */

static hscope_status
room(hscope__mem *m, void **arr, size_t *cap, size_t n, size_t elem, hscope_error *err)
{
    if (n >= UINT32_MAX - 1)
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "more than 2^32 distinct waste entries");
    return hscope__grow(m, arr, cap, n + 1, elem, err);
}

/* The tag of a hash in the value table: bits the slot (low bits) does not
 * use. */
static inline uint64_t
tag_of(uint64_t hash)
{
    return hash >> 32;
}

static hscope_status
grow_values(hscope__wacc *a, hscope_error *err)
{
    size_t nc = a->t ? (a->mask + 1) * 2 : 4096;
    uint64_t *t = hscope__calloc(a->mem, nc, sizeof(*t));
    if (!t)
        return hscope__nomem(err, nc * sizeof(*t));
    for (size_t i = 0; i < a->nv; i++) {
        size_t s = (size_t)a->v[i].hash & (nc - 1);
        while (t[s])
            s = (s + 1) & (nc - 1);
        t[s] = tag_of(a->v[i].hash) << 32 | (uint64_t)(i + 1);
    }
    hscope__free(a->mem, a->t);
    a->t = t;
    a->mask = nc - 1;
    return HSCOPE_OK;
}

_Static_assert(sizeof(hscope__wvent) == 32, "a value entry is half a cache line");

/* Room for one more entry, the entries 64-byte aligned in a->vraw (an
 * entry never straddles two cache lines). */
static hscope_status
grow_entries(hscope__wacc *a, hscope_error *err)
{
    if (a->nv >= UINT32_MAX - 2)
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "more than 2^32 distinct waste entries");
    if (a->v && a->nv < a->vcap)
        return HSCOPE_OK;
    /* two entries more than vcap: room to move the start to a 64-byte
     * boundary */
    size_t old = a->v ? (size_t)((char *)a->v - (char *)a->vraw) : 0, rcap = a->vcap ? a->vcap + 2 : 0;
    hscope_status st = hscope__grow(a->mem, &a->vraw, &rcap, a->nv + 3, sizeof(hscope__wvent), err);
    if (st != HSCOPE_OK)
        return st;
    char *raw = a->vraw;
    char *v = (char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    if (a->nv && (size_t)(v - raw) != old) /* realloc kept the offset, not the alignment */
        memmove(v, raw + old, a->nv * sizeof(hscope__wvent));
    a->v = (hscope__wvent *)v;
    a->vcap = rcap - 2;
    return HSCOPE_OK;
}

/* The entry of value (hash, len), added empty when absent (*added).  The
 * pointer is valid until the next insertion. */
static hscope_status
vfind(hscope__wacc *a, uint64_t hash, uint32_t len, hscope__wvent **out, int *added,
      hscope_error *err)
{
    hscope_status st;
    if (!a->t || (a->nv + 1) * 2 > a->mask + 1)
        if ((st = grow_values(a, err)) != HSCOPE_OK)
            return st;
    uint64_t tag = tag_of(hash), x;
    size_t s = (size_t)hash & a->mask;
    while ((x = a->t[s]) != 0) {
        if (x >> 32 == tag) {
            hscope__wvent *e = &a->v[(uint32_t)x - 1];
            if (e->hash == hash && HSCOPE__WLEN(e) == len) {
                *out = e;
                *added = 0;
                return HSCOPE_OK;
            }
        }
        s = (s + 1) & a->mask;
    }
    if ((st = grow_entries(a, err)) != HSCOPE_OK)
        return st;
    hscope__wvent *e = &a->v[a->nv];
    memset(e, 0, sizeof(*e));
    e->hash = hash;
    e->len = len;
    e->first = HSCOPE__WNO_REF;
    e->at = HSCOPE__WNO_REF;
    a->t[s] = tag << 32 | (uint64_t)++a->nv;
    *out = e;
    *added = 1;
    return HSCOPE_OK;
}

/* Prefetch what taking a string of this hash will read, one step at a
 * time (each step's data should be cached by the previous one): 0 its
 * table slot, 1 the entry it points at, 2 the bytes it is compared with
 * when they are not in the entry (the first copy in the ring, or the
 * representative in the arena). */
HS_PREFETCH_FN void
prefetch_value(const hscope__wacc *a, uint64_t hash, int step)
{
    if (!a->t)
        return;
    const uint64_t *slot = &a->t[(size_t)hash & a->mask];
    if (step == 0) {
        __builtin_prefetch(slot);
        return;
    }
    uint64_t x = *slot;
    if (!x || x >> 32 != tag_of(hash))
        return;
    const hscope__wvent *e = &a->v[(uint32_t)x - 1];
    if (step == 1) {
        __builtin_prefetch(e);
        return;
    }
    if (e->at == HSCOPE__WNO_REF || (e->len & HSCOPE__WREP_INLINE))
        return;
    if (e->grp && e->at < a->alen)
        __builtin_prefetch(a->arena + e->at);
    else if (!e->grp && a->ring)
        __builtin_prefetch(a->ring + e->at % HSCOPE__WRING);
}

/* Room for n distinct values without growing the table (a guess from the
 * input's size: growing rehashes every entry, a random write each). */
hscope_status
hscope__wacc_reserve(hscope__wacc *a, uint64_t n, hscope_error *err)
{
    if (n > ((uint64_t)1 << 26))
        n = (uint64_t)1 << 26;
    while (a->t ? (a->mask + 1) < 2 * n : n > 2048) {
        hscope_status st = grow_values(a, err);
        if (st != HSCOPE_OK)
            return st;
    }
    return HSCOPE_OK;
}

/* The (group, file, line) counts, added empty. */
static hscope_status
gsfind(hscope__wacc *a, uint32_t g, uint32_t file, uint32_t line, size_t *out,
       hscope_error *err)
{
    hscope_status st;
    if (!a->gst || (a->ngs + 1) * 2 > a->gsmask + 1) {
        size_t nc = a->gst ? (a->gsmask + 1) * 2 : 1024;
        uint32_t *t = hscope__calloc(a->mem, nc, sizeof(uint32_t));
        if (!t)
            return hscope__nomem(err, nc * sizeof(uint32_t));
        for (size_t i = 0; i < a->ngs; i++) {
            const hscope__wgs *e = &a->gs[i];
            size_t s = (size_t)hscope__hash3(e->grp, e->file, e->line) & (nc - 1);
            while (t[s])
                s = (s + 1) & (nc - 1);
            t[s] = (uint32_t)(i + 1);
        }
        hscope__free(a->mem, a->gst);
        a->gst = t;
        a->gsmask = nc - 1;
    }
    size_t s = (size_t)hscope__hash3(g, file, line) & a->gsmask;
    uint32_t i;
    while ((i = a->gst[s]) != 0) {
        const hscope__wgs *e = &a->gs[i - 1];
        if (e->grp == g && e->file == file && e->line == line) {
            *out = i - 1;
            return HSCOPE_OK;
        }
        s = (s + 1) & a->gsmask;
    }
    if ((st = room(a->mem, (void **)&a->gs, &a->gscap, a->ngs, sizeof(hscope__wgs), err)) !=
        HSCOPE_OK)
        return st;
    hscope__wgs *e = &a->gs[a->ngs];
    memset(e, 0, sizeof(*e));
    e->grp = g;
    e->file = file;
    e->line = line;
    a->gst[s] = (uint32_t)++a->ngs;
    *out = a->ngs - 1;
    return HSCOPE_OK;
}

static uint64_t
f_hash(uint32_t file, uint32_t line, int kind, int type)
{
    return hscope__hash3(file, line, (uint32_t)kind << 8 | (uint32_t)type);
}

static hscope_status
ffind(hscope__mem *m, hscope__wftab *ft, int kind, int type, uint32_t file, uint32_t line,
      hscope__wfent **out, hscope_error *err)
{
    hscope_status st;
    if (!ft->t || (ft->n + 1) * 2 > ft->mask + 1) {
        size_t nc = ft->t ? (ft->mask + 1) * 2 : 64;
        uint32_t *t = hscope__calloc(m, nc, sizeof(uint32_t));
        if (!t)
            return hscope__nomem(err, nc * sizeof(uint32_t));
        for (size_t i = 0; i < ft->n; i++) {
            const hscope__wfent *e = &ft->f[i];
            size_t s = (size_t)f_hash(e->file, e->line, e->kind, e->type) & (nc - 1);
            while (t[s])
                s = (s + 1) & (nc - 1);
            t[s] = (uint32_t)(i + 1);
        }
        hscope__free(m, ft->t);
        ft->t = t;
        ft->mask = nc - 1;
    }
    size_t s = (size_t)f_hash(file, line, kind, type) & ft->mask;
    uint32_t i;
    while ((i = ft->t[s]) != 0) {
        hscope__wfent *e = &ft->f[i - 1];
        if (e->file == file && e->line == line && e->kind == kind && e->type == type) {
            *out = e;
            return HSCOPE_OK;
        }
        s = (s + 1) & ft->mask;
    }
    if ((st = room(m, (void **)&ft->f, &ft->cap, ft->n, sizeof(hscope__wfent), err)) != HSCOPE_OK)
        return st;
    hscope__wfent *e = &ft->f[ft->n];
    memset(e, 0, sizeof(*e));
    e->file = file;
    e->line = line;
    e->kind = (uint8_t)kind;
    e->type = (uint8_t)type;
    ft->t[s] = (uint32_t)++ft->n;
    *out = e;
    return HSCOPE_OK;
}

static void
ftab_free(hscope__mem *m, hscope__wftab *ft)
{
    hscope__free(m, ft->f);
    hscope__free(m, ft->t);
    memset(ft, 0, sizeof(*ft));
}

/* ------------------------------------------------------------------ */
/* the accumulator and its sources                                     */
/* ------------------------------------------------------------------ */

hscope_status
hscope__wacc_new(hscope__wacc **out, hscope__mem *mem, const hscope__wcfg *cfg,
                 hscope__wresolve_fn resolve, void *resolve_ud, hscope_error *err)
{
    hscope__wacc *a = hscope__calloc(mem, 1, sizeof(*a));
    if (!a)
        return hscope__nomem(err, sizeof(*a));
    a->mem = mem;
    a->cfg = *cfg;
    a->resolve = resolve;
    a->rud = resolve_ud;
    if (!resolve && !(a->ring = hscope__malloc(mem, HSCOPE__WRING))) {
        hscope__free(mem, a);
        return hscope__nomem(err, HSCOPE__WRING);
    }
    *out = a;
    return HSCOPE_OK;
}

static void
src_free(hscope__mem *m, hscope__wsrc *s)
{
    ftab_free(m, &s->f);
    hscope__free(m, s->rec);
    hscope__free(m, s->bytes);
    hscope__free(m, s);
}

void
hscope__wacc_free(hscope__wacc *a)
{
    if (!a)
        return;
    hscope__mem *m = a->mem;
    void *q[] = { a->vraw, a->t, a->g, a->arena, a->gs, a->gst, a->ring, a->pend, a->srcs };
    for (size_t i = 0; i < a->nsrc; i++)
        src_free(m, a->srcs[i]);
    for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
        hscope__free(m, q[k]);
    ftab_free(m, &a->f);
    hscope__free(m, a);
}

void
hscope__wacc_note(hscope__wacc *a, uint64_t excluded, uint32_t warnings)
{
    a->excluded += excluded;
    a->warnings |= warnings;
}

void
hscope__wacc_note_tracer(hscope__wacc *a, uint64_t objects, uint64_t memsize)
{
    a->tracer += objects;
    a->tracer_mem = hscope__sat_add(a->tracer_mem, memsize);
}

hscope_status
hscope__wsrc_new(hscope__wsrc **out, hscope__wacc *a, int own, hscope_error *err)
{
    hscope__wsrc *s = hscope__calloc(a->mem, 1, sizeof(*s));
    if (!s)
        return hscope__nomem(err, sizeof(*s));
    s->a = a;
    s->own = own;
    hscope_status st = hscope__grow(a->mem, (void **)&a->srcs, &a->srccap, a->nsrc + 1,
                                    sizeof(*a->srcs), err);
    if (st != HSCOPE_OK) {
        hscope__free(a->mem, s);
        return st;
    }
    a->srcs[a->nsrc++] = s;
    *out = s;
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* one object, on the source's thread                                  */
/* ------------------------------------------------------------------ */

/* buf >= ratio * used and buf - used >= min_slack */
static int
oversized(const hscope__wcfg *c, uint64_t buf, uint64_t used)
{
    if (buf <= used || buf - used < c->min_slack)
        return 0;
    return used <= UINT64_MAX / c->ratio && buf >= used * c->ratio;
}

/* A string that takes part in the duplicate search: not shared, not
 * empty, not oversized, with a value of its bytesize. */
/* A value `heapscope redact` replaced: its placeholder carries the length
 * and hash of the value it stands for; it stands for it when that length
 * is the string's bytesize.  1 and *hash (may be NULL) then. */
static int
redacted_id(const hscope__wobj *o, uint64_t *hash)
{
    uint64_t n, h;
    int legacy;
    if (o->value_len < HSCOPE__REDACTED_MIN || o->value[0] != '[' ||
        !hscope__redacted_parse(o->value, (size_t)o->value_len, &n, &h, &legacy) || legacy ||
        n != o->size)
        return 0;
    if (hash)
        *hash = h;
    return 1;
}

/* The identity of a candidate's value: the XXH3-64 of its bytes, or the
 * one its placeholder carries (the same number). */
static uint64_t
value_hash(const hscope__wobj *o)
{
    uint64_t h;
    return redacted_id(o, &h) ? h : XXH3_64bits(o->value, (size_t)o->value_len);
}

static int
dup_candidate(const hscope__wcfg *c, const hscope__wobj *o)
{
    return o->type == HSCOPE_TYPE_STRING && !(o->flags & HSCOPE_FLAG_SHARED) && o->size &&
           !(o->has_capacity && oversized(c, o->capacity, o->size)) && o->has_value &&
           (o->value_len == o->size || redacted_id(o, NULL)) &&
           o->value_len < HSCOPE__WREP_INLINE;
}

static hscope_status
finding(hscope__wsrc *s, int kind, const hscope__wobj *o, uint64_t saving, uint64_t buffer,
        uint64_t used, hscope_error *err)
{
    hscope__wfent *e;
    hscope_status st = ffind(s->a->mem, &s->f, kind, o->type, o->file, o->line, &e, err);
    if (st != HSCOPE_OK)
        return st;
    e->count++;
    e->memsize = hscope__sat_add(e->memsize, o->memsize);
    e->saving = hscope__sat_add(e->saving, saving);
    e->buffer = hscope__sat_add(e->buffer, buffer);
    e->used = hscope__sat_add(e->used, used);
    return HSCOPE_OK;
}

/* Stash a string for the accumulator, hashed here. */
static hscope_status
stash(hscope__wsrc *s, const hscope__wobj *o, hscope_error *err)
{
    hscope__mem *m = s->a->mem;
    size_t need;
    hscope_status st;
    if (!hscope__add_ok(s->blen, (size_t)o->value_len, &need))
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "value buffer overflow");
    if ((st = hscope__grow(m, (void **)&s->bytes, &s->bcap, need ? need : 1, 1, err)) !=
            HSCOPE_OK ||
        (st = hscope__grow(m, (void **)&s->rec, &s->reccap, s->nrec + 1, sizeof(*s->rec),
                           err)) != HSCOPE_OK)
        return st;
    memcpy(s->bytes + s->blen, o->value, (size_t)o->value_len);
    s->rec[s->nrec++] = (hscope__wrec){
        .hash = value_hash(o), .ref = o->ref,
        .memsize = o->memsize, .voff = s->blen, .len = (uint32_t)o->value_len, .file = o->file,
        .line = o->line, .flags = o->flags,
    };
    s->blen = need;
    if (s->own && s->blen >= OWN_FLUSH)
        return hscope__wsrc_flush(s, NULL, 0, err);
    return HSCOPE_OK;
}

static hscope_status
add_string(hscope__wsrc *s, const hscope__wobj *o, hscope_error *err)
{
    hscope__wtot *t = &s->tot;
    const hscope__wcfg *c = &s->a->cfg;
    t->chilled += (o->flags & HSCOPE_FLAG_CHILLED) != 0;
    if (o->flags & HSCOPE_FLAG_SHARED) {
        t->shared_n++;
        t->shared_m = hscope__sat_add(t->shared_m, o->memsize);
        return HSCOPE_OK;
    }
    if (o->size == 0)
        return finding(s, HSCOPE_WASTE_EMPTY, o, o->memsize, 0, 0, err);
    if (o->has_capacity && oversized(c, o->capacity, o->size))
        return finding(s, HSCOPE_WASTE_OVERSIZED, o, o->capacity - o->size, o->capacity, o->size,
                       err);
    t->candidates++;
    if (!o->has_value) {
        t->noval_n++;
        t->noval_m = hscope__sat_add(t->noval_m, o->memsize);
        return HSCOPE_OK;
    }
    t->values++;
    if (!dup_candidate(c, o)) {
        t->trunc_n++;
        t->trunc_m = hscope__sat_add(t->trunc_m, o->memsize);
        return HSCOPE_OK;
    }
    return stash(s, o, err);
}

/* An array or hash: empty, or a buffer (memsize beyond the slot) far
 * beyond its content (`per` bytes per element). */
static hscope_status
add_collection(hscope__wsrc *s, const hscope__wobj *o, uint64_t per, hscope_error *err)
{
    if (o->size == 0)
        return finding(s, HSCOPE_WASTE_EMPTY, o, o->memsize, 0, 0, err);
    if (o->type == HSCOPE_TYPE_ARRAY && (o->flags & (HSCOPE_FLAG_EMBEDDED | HSCOPE_FLAG_SHARED)))
        return HSCOPE_OK;
    uint64_t slot = o->slot ? o->slot : DEFAULT_SLOT;
    uint64_t buf = o->memsize > slot ? o->memsize - slot : 0;
    if (o->size > UINT64_MAX / per)
        return HSCOPE_OK;
    uint64_t used = o->size * per;
    if (oversized(&s->a->cfg, buf, used))
        return finding(s, HSCOPE_WASTE_OVERSIZED, o, buf - used, buf, used, err);
    return HSCOPE_OK;
}

hscope_status
hscope__wsrc_add(hscope__wsrc *s, const hscope__wobj *o, hscope_error *err)
{
    s->tot.objects++;
    s->tot.memsize = hscope__sat_add(s->tot.memsize, o->memsize);
    switch (o->type) {
    case HSCOPE_TYPE_STRING: return add_string(s, o, err);
    case HSCOPE_TYPE_ARRAY: return add_collection(s, o, 8, err);
    case HSCOPE_TYPE_HASH: return add_collection(s, o, 64, err);
    default: return HSCOPE_OK;
    }
}

/* ------------------------------------------------------------------ */
/* the ring of recent first copies                                     */
/* ------------------------------------------------------------------ */

typedef struct ringrec {
    uint64_t memsize;
    uint32_t len, file, line;
    uint16_t flags, pad;
} ringrec;

static size_t
ring_size(uint32_t len)
{
    return (sizeof(ringrec) + len + 7) & ~(size_t)7;
}

/* Put a first copy's details and bytes; its position, or HSCOPE__WNO_REF
 * when it is too big to keep there. */
static uint64_t
ring_put(hscope__wacc *a, const hscope__wrec *r, const char *bytes)
{
    size_t n = ring_size(r->len);
    if (!a->ring || n > HSCOPE__WRING / 16)
        return HSCOPE__WNO_REF;
    size_t at = (size_t)(a->rhead % HSCOPE__WRING);
    if (at + n > HSCOPE__WRING) { /* no record wraps: start over */
        a->rhead += HSCOPE__WRING - at;
        at = 0;
    }
    ringrec h = { r->memsize, r->len, r->file, r->line, r->flags, 0 };
    memcpy(a->ring + at, &h, sizeof(h));
    memcpy(a->ring + at + sizeof(h), bytes, r->len);
    uint64_t pos = a->rhead;
    a->rhead += n;
    return pos;
}

/* The first copy at ring position pos, if not overwritten since. */
static int
ring_get(const hscope__wacc *a, uint64_t pos, hscope__wobj *o)
{
    if (pos == HSCOPE__WNO_REF || a->rhead - pos > HSCOPE__WRING)
        return 0; /* written over since */
    ringrec h;
    const unsigned char *p = a->ring + pos % HSCOPE__WRING;
    memcpy(&h, p, sizeof(h));
    memset(o, 0, sizeof(*o));
    o->type = HSCOPE_TYPE_STRING;
    o->memsize = h.memsize;
    o->size = o->value_len = h.len;
    o->file = h.file;
    o->line = h.line;
    o->flags = h.flags;
    o->value = (const char *)p + sizeof(h);
    o->has_value = 1;
    return 1;
}

/* ------------------------------------------------------------------ */
/* taking the strings, on the accumulator's thread                     */
/* ------------------------------------------------------------------ */

static hscope_status
copy_bytes(hscope__wacc *a, const char *b, size_t n, uint64_t *off, hscope_error *err)
{
    size_t need;
    if (!hscope__add_ok(a->alen, n, &need))
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "value arena overflow");
    hscope_status st = hscope__grow(a->mem, (void **)&a->arena, &a->acap, need ? need : 1, 1, err);
    if (st != HSCOPE_OK)
        return st;
    if (n)
        memcpy(a->arena + a->alen, b, n);
    *off = a->alen;
    a->alen = need;
    return HSCOPE_OK;
}

/* Entry ei's representative: bytes b[0..n), in the entry when they fit
 * and the entry no longer needs `first` (its first copy is counted). */
static hscope_status
set_rep(hscope__wacc *a, size_t ei, const char *b, size_t n, hscope_error *err)
{
    hscope__wvent *e = &a->v[ei];
    if (n <= 16 && e->first == HSCOPE__WNO_REF) {
        char in[16] = { 0 };
        memcpy(in, b, n);
        memcpy(&e->first, in, 8);
        memcpy(&e->at, in + 8, 8);
        e->len |= HSCOPE__WREP_INLINE;
        return HSCOPE_OK;
    }
    return copy_bytes(a, b, n, &e->at, err);
}

static int
has_rep(const hscope__wvent *e)
{
    return (e->len & HSCOPE__WREP_INLINE) || e->at != HSCOPE__WNO_REF;
}

/* A new group for entry ei, represented by bytes b[0..n) (b NULL: none
 * yet). */
static hscope_status
new_group(hscope__wacc *a, size_t ei, const char *b, size_t n, hscope_error *err)
{
    hscope_status st = room(a->mem, (void **)&a->g, &a->gcap, a->ng, sizeof(*a->g), err);
    if (st != HSCOPE_OK)
        return st;
    memset(&a->g[a->ng], 0, sizeof(*a->g));
    a->g[a->ng].ent = (uint32_t)ei;
    a->v[ei].grp = (uint32_t)++a->ng;
    a->v[ei].at = HSCOPE__WNO_REF;
    return b ? set_rep(a, ei, b, n, err) : HSCOPE_OK;
}

/* *same: the bytes b[0..n) are the value of entry ei, in a group (which
 * takes them as its representative when it has none). */
static hscope_status
same_bytes(hscope__wacc *a, size_t ei, const char *b, size_t n, int *same, hscope_error *err)
{
    const hscope__wvent *e = &a->v[ei];
    if (!has_rep(e)) {
        *same = 1;
        return set_rep(a, ei, b, n, err);
    }
    *same = n == 0 || memcmp(hscope__wrep(a, e), b, n) == 0;
    return HSCOPE_OK;
}

/* Count a copy of entry ei's value (in a group) at (file, line): in the
 * group when it is at the group's site (the first site counted), with
 * counts that fit, else in the gs table. */
static hscope_status
count_copy(hscope__wacc *a, size_t ei, uint32_t file, uint32_t line, uint64_t memsize,
           uint16_t flags, hscope_error *err)
{
    uint32_t grp = a->v[ei].grp;
    hscope__wgrp *e = &a->g[grp - 1];
    int fs = (flags & HSCOPE_FLAG_FSTRING) != 0, ch = (flags & HSCOPE_FLAG_CHILLED) != 0;
    if ((e->n == 0 || (e->file == file && e->line == line)) && e->n < UINT32_MAX &&
        memsize <= UINT32_MAX && !(fs && e->fstring == UINT16_MAX) &&
        !(ch && e->chilled == UINT16_MAX)) {
        if (e->n++ == 0) {
            e->file = file;
            e->line = line;
        }
        e->mem = hscope__sat_add(e->mem, memsize);
        if (memsize > e->maxmem)
            e->maxmem = (uint32_t)memsize;
        e->frozen += (flags & HSCOPE_FLAG_FROZEN) != 0;
        e->fstring = (uint16_t)(e->fstring + fs);
        e->chilled = (uint16_t)(e->chilled + ch);
        return HSCOPE_OK;
    }
    size_t i = 0;
    hscope_status st = gsfind(a, grp - 1, file, line, &i, err);
    if (st != HSCOPE_OK)
        return st;
    hscope__wgs *g = &a->gs[i];
    g->count++;
    g->memsize = hscope__sat_add(g->memsize, memsize);
    if (memsize > g->maxmem)
        g->maxmem = memsize;
    g->frozen += (flags & HSCOPE_FLAG_FROZEN) != 0;
    g->fstring += (uint64_t)fs;
    g->chilled += (uint64_t)ch;
    return HSCOPE_OK;
}

/* The first copy of entry ei's value, now that a second came: from the
 * ring, from a loaded heap, or later from the dump (pending). */
static hscope_status
first_copy(hscope__wacc *a, size_t ei, const char *b2, size_t n2, hscope_error *err)
{
    hscope__wvent *e = &a->v[ei];
    hscope__wobj f;
    hscope_status st;
    int have = ring_get(a, e->at, &f);
    e->at = HSCOPE__WNO_REF;
    if (!have && a->resolve && e->first != HSCOPE__WNO_REF) {
        memset(&f, 0, sizeof(f));
        if ((st = a->resolve(a->rud, e->first, &f, err)) != HSCOPE_OK)
            return st;
        have = 1;
        e = &a->v[ei];
        if (!dup_candidate(&a->cfg, &f) || f.value_len != HSCOPE__WLEN(e) ||
            value_hash(&f) != e->hash) {
            a->changed++; /* not the record it was: nothing to compare with */
            e->first = HSCOPE__WNO_REF;
            return new_group(a, ei, b2, n2, err);
        }
    }
    if (!have) /* read back at the end: the second copy represents the value */
        return new_group(a, ei, b2, n2, err);
    a->v[ei].first = HSCOPE__WNO_REF;
    if ((st = new_group(a, ei, f.value, (size_t)f.value_len, err)) != HSCOPE_OK)
        return st;
    return count_copy(a, ei, f.file, f.line, f.memsize, f.flags, err);
}

/* One string, its file id the accumulator's. */
static hscope_status
take(hscope__wacc *a, const hscope__wrec *r, const char *bytes, hscope_error *err)
{
    hscope__wvent *e;
    int added, same = 1;
    hscope_status st = vfind(a, r->hash, r->len, &e, &added, err);
    if (st != HSCOPE_OK)
        return st;
    size_t ei = (size_t)(e - a->v);
    if (added) {
        e->first = r->ref;
        e->at = ring_put(a, r, bytes);
        return HSCOPE_OK;
    }
    if (!e->grp)
        st = first_copy(a, ei, bytes, r->len, err);
    if (st == HSCOPE_OK)
        st = same_bytes(a, ei, bytes, r->len, &same, err);
    if (st != HSCOPE_OK)
        return st;
    if (!same) {
        a->collisions++;
        return HSCOPE_OK;
    }
    return count_copy(a, ei, r->file, r->line, r->memsize, r->flags, err);
}

static uint32_t
remap(const uint32_t *smap, size_t n, uint32_t id)
{
    return !smap ? id : id < n ? smap[id] : 0;
}

/*
 * The stash, in order.  The value table is far larger than the caches,
 * so every lookup waits for memory: what the strings 24, 12 and 4 ahead
 * will need is prefetched, one step each, so that the waits overlap
 * (memory latency on the shared benchmark VMs: 150-400 ns).
 */
hscope_status
hscope__wsrc_flush(hscope__wsrc *s, const uint32_t *smap, size_t nsmap, hscope_error *err)
{
    hscope__wacc *a = s->a;
    hscope_status st = HSCOPE_OK;
    for (size_t i = 0; i < s->nrec && st == HSCOPE_OK; i++) {
        if (i + 24 < s->nrec)
            prefetch_value(a, s->rec[i + 24].hash, 0);
        if (i + 12 < s->nrec)
            prefetch_value(a, s->rec[i + 12].hash, 1);
        if (i + 4 < s->nrec)
            prefetch_value(a, s->rec[i + 4].hash, 2);
        hscope__wrec r = s->rec[i];
        r.file = remap(smap, nsmap, r.file);
        if (!r.file)
            r.line = 0;
        st = take(a, &r, s->bytes + r.voff, err);
    }
    s->nrec = 0;
    s->blen = 0;
    return st;
}

static void
tot_add(hscope__wtot *d, const hscope__wtot *s)
{
    uint64_t *y[] = { &d->objects, &d->memsize, &d->shared_n, &d->shared_m, &d->noval_n,
                      &d->noval_m, &d->trunc_n, &d->trunc_m, &d->candidates, &d->values,
                      &d->chilled };
    const uint64_t x[] = { s->objects, s->memsize, s->shared_n, s->shared_m, s->noval_n,
                           s->noval_m, s->trunc_n, s->trunc_m, s->candidates, s->values,
                           s->chilled };
    for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
        *y[i] = hscope__sat_add(*y[i], x[i]);
}

hscope_status
hscope__wsrc_done(hscope__wsrc *s, const uint32_t *smap, size_t nsmap, hscope_error *err)
{
    hscope__wacc *a = s->a;
    hscope_status st;
    if (s->done)
        return HSCOPE_OK;
    if ((st = hscope__wsrc_flush(s, smap, nsmap, err)) != HSCOPE_OK)
        return st;
    tot_add(&a->tot, &s->tot);
    for (size_t i = 0; i < s->f.n; i++) {
        const hscope__wfent *x = &s->f.f[i];
        hscope__wfent *d;
        uint32_t file = remap(smap, nsmap, x->file);
        if ((st = ffind(a->mem, &a->f, x->kind, x->type, file, file ? x->line : 0, &d, err)) !=
            HSCOPE_OK)
            return st;
        d->count += x->count;
        d->memsize = hscope__sat_add(d->memsize, x->memsize);
        d->saving = hscope__sat_add(d->saving, x->saving);
        d->buffer = hscope__sat_add(d->buffer, x->buffer);
        d->used = hscope__sat_add(d->used, x->used);
    }
    ftab_free(a->mem, &s->f);
    hscope__free(a->mem, s->rec);
    hscope__free(a->mem, s->bytes);
    s->rec = NULL;
    s->bytes = NULL;
    s->reccap = s->bcap = 0;
    s->done = 1;
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* first copies read back                                              */
/* ------------------------------------------------------------------ */

static int
cmp_pend(const void *x, const void *y)
{
    const hscope__wpend *a = x, *b = y;
    if (a->ref != b->ref)
        return a->ref < b->ref ? -1 : 1;
    return (a->ent > b->ent) - (a->ent < b->ent);
}

hscope_status
hscope__wacc_pending(hscope__wacc *a, size_t *n, hscope_error *err)
{
    hscope_status st;
    a->np = 0;
    for (size_t i = 0; i < a->nv; i++) {
        hscope__wvent *e = &a->v[i];
        if (!e->grp || (e->len & HSCOPE__WREP_INLINE) || e->first == HSCOPE__WNO_REF)
            continue;
        if ((st = hscope__grow(a->mem, (void **)&a->pend, &a->pcap, a->np + 1, sizeof(*a->pend),
                               err)) != HSCOPE_OK)
            return st;
        a->pend[a->np++] = (hscope__wpend){ e->first, (uint32_t)i };
        e->first = HSCOPE__WNO_REF;
    }
    if (a->np > 1)
        qsort(a->pend, a->np, sizeof(*a->pend), cmp_pend);
    *n = a->np;
    return HSCOPE_OK;
}

uint64_t
hscope__wacc_pending_ref(const hscope__wacc *a, size_t i)
{
    return a->pend[i].ref;
}

hscope_status
hscope__wacc_confirm(hscope__wacc *a, size_t i, const hscope__wobj *o, hscope_error *err)
{
    size_t ei = a->pend[i].ent;
    hscope__wvent *e = &a->v[ei];
    if (!dup_candidate(&a->cfg, o) || o->value_len != HSCOPE__WLEN(e) ||
        value_hash(o) != e->hash) {
        a->changed++;
        return HSCOPE_OK;
    }
    int same = 1;
    hscope_status st = e->grp ? same_bytes(a, ei, o->value, (size_t)o->value_len, &same, err)
                              : new_group(a, ei, o->value, (size_t)o->value_len, err);
    if (st != HSCOPE_OK)
        return st;
    if (!same) {
        a->collisions++;
        return HSCOPE_OK;
    }
    return count_copy(a, ei, o->file, o->file ? o->line : 0, o->memsize, o->flags, err);
}

void
hscope__wacc_unconfirmed(hscope__wacc *a, size_t i)
{
    (void)i;
    a->changed++;
}
