/*
 * waste_build.c - the result of a waste analysis, made from the
 * accumulator (waste.c) once every source is done: the duplicated values
 * (groups with two or more copies compared equal), the rows (one per
 * place to change: key, finding kind and type) and the lists between
 * them, each in an order that depends neither on the threads nor on the
 * dump's order; the totals and warnings; the options and the fixes.
 *
 * Work is linear in the number of (value, site) pairs but for sorting
 * within a row's values and a value's sites: pairs are bucketed by row
 * and by value first (counting sort), then each bucket is sorted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waste_acc.h"
#include "../core/core.h"
#include "../core/intern.h"
#include "origin.h"
#include "waste.h"

/* Copies of one value under one key (site or gem), while building. */
typedef struct vkey {
    uint32_t val, key;
    uint64_t copies, memsize, maxmem, frozen, fstring, chilled;
    uint64_t freed, saving;
} vkey;

typedef struct build {
    hscope_waste_t *w;
    hscope__wacc *a;
    const hscope__intern *strings; /* of the file ids */
    hscope_error *err;
    char *buf;
    size_t bcap;
    uint64_t *kc;             /* (file, line) -> key id cache: (file << 32 | line) */
    uint32_t *kcv;            /* its key id, 0: a free slot */
    size_t kcmask, nkc;
    uint32_t *rank;           /* key id -> rank of its text */
    uint32_t *gval;           /* group -> value index + 1 */
    uint32_t *fkey;           /* the key of each empty / oversized entry */
    vkey *vk;
    size_t nvk, vkcap;
    uint32_t *vkt;            /* (value, key) -> vk + 1 (by gem: pairs merge) */
    size_t vkmask;
} build;

/* ------------------------------------------------------------------ */
/* keys                                                                */
/* ------------------------------------------------------------------ */

static hscope_status
key_text(build *B, uint32_t file, uint32_t line, uint32_t *key)
{
    const char *f = hscope__intern_str(B->strings, file);
    const char *k = f ? f : "(none)";
    size_t n = f ? hscope__intern_len(B->strings, file) : 6;
    hscope_status st = hscope__grow(&B->w->mem, (void **)&B->buf, &B->bcap, n + 16, 1, B->err);
    if (st != HSCOPE_OK)
        return st;
    if (B->w->by == HSCOPE_WASTE_BY_GEM) {
        if (f)
            hscope__gem_of(f, &k, &n);
    } else {
        memcpy(B->buf, k, n);
        n += (size_t)snprintf(B->buf + n, 16, ":%u", f ? line : 0);
        k = B->buf;
    }
    return hscope__intern_add(&B->w->keys, k, n, key, B->err);
}

/* The key of (file, line): its text, interned in the result once per
 * (file, line). */
static hscope_status
key_of(build *B, uint32_t file, uint32_t line, uint32_t *key)
{
    hscope__mem *m = &B->w->mem;
    if (B->w->by == HSCOPE_WASTE_BY_GEM || !file)
        line = 0;
    if (!B->kcv || (B->nkc + 1) * 2 > B->kcmask + 1) {
        size_t nc = B->kcv ? (B->kcmask + 1) * 2 : 256;
        uint64_t *k = hscope__malloc(m, nc * sizeof(uint64_t));
        uint32_t *v = hscope__calloc(m, nc, sizeof(uint32_t));
        if (!k || !v) {
            hscope__free(m, k);
            hscope__free(m, v);
            return hscope__nomem(B->err, nc * 12);
        }
        for (size_t i = 0; B->kcv && i <= B->kcmask; i++) {
            if (!B->kcv[i])
                continue;
            size_t s = (size_t)hscope__hash3((uint32_t)(B->kc[i] >> 32), (uint32_t)B->kc[i], 0) &
                       (nc - 1);
            while (v[s])
                s = (s + 1) & (nc - 1);
            k[s] = B->kc[i];
            v[s] = B->kcv[i];
        }
        hscope__free(m, B->kc);
        hscope__free(m, B->kcv);
        B->kc = k;
        B->kcv = v;
        B->kcmask = nc - 1;
    }
    uint64_t x = (uint64_t)file << 32 | line;
    size_t s = (size_t)hscope__hash3(file, line, 0) & B->kcmask;
    for (; B->kcv[s]; s = (s + 1) & B->kcmask)
        if (B->kc[s] == x) {
            *key = B->kcv[s];
            return HSCOPE_OK;
        }
    hscope_status st = key_text(B, file, line, key);
    if (st == HSCOPE_OK) {
        B->kc[s] = x;
        B->kcv[s] = *key;
        B->nkc++;
    }
    return st;
}

/* Ranks of the key texts (for ties, independent of insertion order). */
typedef struct krank {
    const char *s;
    uint32_t len, id;
} krank;

static int
cmp_krank(const void *x, const void *y)
{
    const krank *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->s, b->s, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static hscope_status
rank_keys(build *B)
{
    hscope_waste_t *w = B->w;
    size_t n = w->keys.count;
    krank *k = hscope__malloc(&w->mem, (n ? n : 1) * sizeof(krank));
    B->rank = hscope__calloc(&w->mem, n ? n : 1, sizeof(uint32_t));
    if (!k || !B->rank) {
        hscope__free(&w->mem, k);
        return hscope__nomem(B->err, n * 20);
    }
    for (size_t i = 1; i < n; i++)
        k[i - 1] = (krank){ hscope__intern_str(&w->keys, (uint32_t)i),
                            hscope__intern_len(&w->keys, (uint32_t)i), (uint32_t)i };
    if (n > 1)
        qsort(k, n - 1, sizeof(krank), cmp_krank);
    for (size_t i = 0; i + 1 < n; i++)
        B->rank[k[i].id] = (uint32_t)i;
    hscope__free(&w->mem, k);
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* values and their (value, key) pairs                                 */
/* ------------------------------------------------------------------ */

static hscope_status
vk_new(build *B, uint32_t val, uint32_t key, vkey **out)
{
    if (B->nvk >= UINT32_MAX - 1)
        return hscope__fail(B->err, HSCOPE_ERR_LIMIT, "more than 2^32 (value, site) pairs");
    hscope_status st = hscope__grow(&B->w->mem, (void **)&B->vk, &B->vkcap, B->nvk + 1,
                                    sizeof(vkey), B->err);
    if (st != HSCOPE_OK)
        return st;
    vkey *k = &B->vk[B->nvk++];
    memset(k, 0, sizeof(*k));
    k->val = val;
    k->key = key;
    *out = k;
    return HSCOPE_OK;
}

/* The pair (val, key): by site every (group, file, line) is its own pair;
 * by gem the files of a gem share one. */
static hscope_status
vk_of(build *B, uint32_t val, uint32_t key, vkey **out)
{
    if (B->w->by != HSCOPE_WASTE_BY_GEM)
        return vk_new(B, val, key, out);
    hscope__mem *m = &B->w->mem;
    if (!B->vkt || (B->nvk + 1) * 2 > B->vkmask + 1) {
        size_t nc = B->vkt ? (B->vkmask + 1) * 2 : 1024;
        uint32_t *t = hscope__calloc(m, nc, sizeof(uint32_t));
        if (!t)
            return hscope__nomem(B->err, nc * 4);
        for (size_t i = 0; i < B->nvk; i++) {
            size_t s = (size_t)hscope__hash3(B->vk[i].val, B->vk[i].key, 1) & (nc - 1);
            while (t[s])
                s = (s + 1) & (nc - 1);
            t[s] = (uint32_t)(i + 1);
        }
        hscope__free(m, B->vkt);
        B->vkt = t;
        B->vkmask = nc - 1;
    }
    size_t s = (size_t)hscope__hash3(val, key, 1) & B->vkmask;
    for (uint32_t i; (i = B->vkt[s]) != 0; s = (s + 1) & B->vkmask)
        if (B->vk[i - 1].val == val && B->vk[i - 1].key == key) {
            *out = &B->vk[i - 1];
            return HSCOPE_OK;
        }
    hscope_status st = vk_new(B, val, key, out);
    if (st == HSCOPE_OK)
        B->vkt[s] = (uint32_t)B->nvk;
    return st;
}

/* Copies counted per group; the values are the groups with two or more,
 * their bytes copied into the result. */
static hscope_status
collect_values(build *B, uint64_t *copies)
{
    hscope__wacc *a = B->a;
    hscope_waste_t *w = B->w;
    size_t nv = 0, bytes = 0;
    for (size_t g = 0; g < a->ng; g++)
        copies[g] = a->g[g].n;
    for (size_t i = 0; i < a->ngs; i++)
        copies[a->gs[i].grp] += a->gs[i].count;
    for (size_t g = 0; g < a->ng; g++)
        if (copies[g] >= 2) {
            nv++;
            bytes += HSCOPE__WLEN(&a->v[a->g[g].ent]);
        }
    w->vals = hscope__calloc(&w->mem, nv ? nv : 1, sizeof(hscope__wval));
    w->varena = hscope__malloc(&w->mem, bytes + 1);
    if (!w->vals || !w->varena)
        return hscope__nomem(B->err, nv * sizeof(hscope__wval) + bytes);
    size_t off = 0;
    for (size_t g = 0; g < a->ng; g++) {
        if (copies[g] < 2)
            continue;
        const hscope__wvent *e = &a->v[a->g[g].ent];
        hscope__wval *v = &w->vals[w->nvals];
        v->hash = e->hash;
        v->len = v->length = HSCOPE__WLEN(e);
        v->data = off;
        memcpy(w->varena + off, hscope__wrep(a, e), v->len);
        uint64_t n, h;
        int legacy;
        if (hscope__redacted_parse(w->varena + off, (size_t)v->len, &n, &h, &legacy) &&
            !legacy && h == v->hash) {
            v->length = n; /* the copies were redacted: what they stand for */
            v->redacted = 1;
        }
        off += v->len;
        B->gval[g] = (uint32_t)++w->nvals;
    }
    return HSCOPE_OK;
}

static hscope_status
build_values(build *B)
{
    hscope__wacc *a = B->a;
    hscope_waste_t *w = B->w;
    hscope_status st;
    uint64_t *copies = hscope__calloc(&w->mem, a->ng + 1, sizeof(uint64_t));
    B->gval = hscope__calloc(&w->mem, a->ng + 1, sizeof(uint32_t));
    if (!copies || !B->gval) {
        hscope__free(&w->mem, copies);
        return hscope__nomem(B->err, (a->ng + 1) * 12);
    }
    st = collect_values(B, copies);
    hscope__free(&w->mem, copies);
    /* the copies at each group's entry site, then at the other sites */
    for (size_t i = 0; i < a->ng + a->ngs && st == HSCOPE_OK; i++) {
        hscope__wgs s;
        if (i < a->ng) {
            const hscope__wgrp *e = &a->g[i];
            s = (hscope__wgs){ .grp = (uint32_t)i, .file = e->file, .line = e->line,
                               .count = e->n, .memsize = e->mem, .maxmem = e->maxmem,
                               .frozen = e->frozen, .fstring = e->fstring,
                               .chilled = e->chilled };
        } else
            s = a->gs[i - a->ng];
        uint32_t val = B->gval[s.grp], key = 0;
        vkey *k = NULL;
        if (!val || !s.count || (st = key_of(B, s.file, s.line, &key)) != HSCOPE_OK ||
            (st = vk_of(B, val - 1, key, &k)) != HSCOPE_OK)
            continue;
        k->copies += s.count;
        k->memsize = hscope__sat_add(k->memsize, s.memsize);
        if (s.maxmem > k->maxmem)
            k->maxmem = s.maxmem;
        k->frozen += s.frozen;
        k->fstring += s.fstring;
        k->chilled += s.chilled;
    }
    return st;
}

/* The copy kept of each value: the largest, at the key holding it (ties:
 * the key with more copies, then the first key text); the others go. */
static hscope_status
attribute_savings(build *B)
{
    hscope_waste_t *w = B->w;
    uint64_t *best = hscope__calloc(&w->mem, w->nvals + 1, sizeof(uint64_t));
    if (!best)
        return hscope__nomem(B->err, (w->nvals + 1) * sizeof(uint64_t));
    for (size_t i = 0; i < B->nvk; i++) {
        vkey *k = &B->vk[i];
        hscope__wval *v = &w->vals[k->val];
        v->copies += k->copies;
        v->memsize = hscope__sat_add(v->memsize, k->memsize);
        v->frozen += k->frozen;
        v->fstring += k->fstring;
        v->nsites++;
        const vkey *b = best[k->val] ? &B->vk[best[k->val] - 1] : NULL;
        if (!b || k->maxmem > b->maxmem ||
            (k->maxmem == b->maxmem &&
             (k->copies > b->copies ||
              (k->copies == b->copies && B->rank[k->key] < B->rank[b->key]))))
            best[k->val] = i + 1;
    }
    for (size_t i = 0; i < B->nvk; i++) {
        vkey *k = &B->vk[i];
        int kept = best[k->val] == i + 1;
        k->freed = k->copies - (uint64_t)kept;
        k->saving = kept ? k->memsize - k->maxmem : k->memsize;
        w->vals[k->val].saving = hscope__sat_add(w->vals[k->val].saving, k->saving);
    }
    hscope__free(&w->mem, best);
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* ordering                                                            */
/* ------------------------------------------------------------------ */

/* The sort keys of a bucket (hscope__key4): ascending (k[0], k[1], k[2]),
 * then k[3], a vk index (k[2] is unique within a bucket but for hash
 * collisions).  A row's values: by saving there, then copies, then hash
 * (vk's values are not in their final order yet: see finish_rows). */
static void
key_in_row(const build *B, uint32_t i, hscope__key4 *k)
{
    const vkey *v = &B->vk[i];
    *k = (hscope__key4){ { ~v->saving, ~v->copies, B->w->vals[v->val].hash, i } };
}

/* a value's sites: by copies, then saving, then key text */
static void
key_in_value(const build *B, uint32_t i, hscope__key4 *k)
{
    const vkey *v = &B->vk[i];
    *k = (hscope__key4){ { ~v->copies, ~v->saving, B->rank[v->key], i } };
}

/* The indexes of vk grouped by a field (counting sort: bucket b holds
 * out[first[b] .. first[b + 1])), each bucket then sorted by its keys. */
static hscope_status
bucket(build *B, size_t nb, uint32_t (*of)(const vkey *),
       void (*mk)(const build *, uint32_t, hscope__key4 *), uint32_t **out, size_t **first,
       hscope_error *err)
{
    hscope__mem *m = &B->w->mem;
    size_t n = B->nvk ? B->nvk : 1;
    size_t *f = hscope__calloc(m, nb + 2, sizeof(size_t));
    uint32_t *x = hscope__malloc(m, n * sizeof(uint32_t));
    hscope__key4 *k = hscope__malloc(m, n * sizeof(hscope__key4)), *tmp = NULL;
    if (!f || !x || !k) {
        hscope__free(m, f);
        hscope__free(m, x);
        hscope__free(m, k);
        return hscope__nomem(err, n * 36 + nb * 8);
    }
    for (size_t i = 0; i < B->nvk; i++)
        f[of(&B->vk[i]) + 2]++;
    size_t most = 1; /* the largest bucket: the sort's scratch */
    for (size_t b = 2; b < nb + 2; b++) {
        most = f[b] > most ? f[b] : most;
        f[b] += f[b - 1];
    }
    if (!(tmp = hscope__malloc(m, most * sizeof(hscope__key4)))) {
        hscope__free(m, f);
        hscope__free(m, x);
        hscope__free(m, k);
        return hscope__nomem(err, most * sizeof(hscope__key4));
    }
    for (size_t i = 0; i < B->nvk; i++) {
        size_t at = f[of(&B->vk[i]) + 1]++;
        mk(B, (uint32_t)i, &k[at]);
    }
    for (size_t b = 0; b < nb; b++)
        if (f[b + 1] - f[b] > 1)
            hscope__key4_sort(k + f[b], f[b + 1] - f[b], tmp);
    for (size_t i = 0; i < B->nvk; i++)
        x[i] = (uint32_t)k[i].k[3];
    hscope__free(m, k);
    hscope__free(m, tmp);
    *out = x;
    *first = f;
    return HSCOPE_OK;
}

static uint32_t
vk_key(const vkey *k)
{
    return k->key;
}

static uint32_t
vk_val(const vkey *k)
{
    return k->val;
}

/* The values' order, biggest saving first (then more copies, then by
 * hash, length and index, ascending): *nv the values in it, *pos
 * the new index of each (the caller moves to it: this runs beside the
 * rows' half of finish_rows, which reads the values as they are). */
static hscope_status
sort_values(build *B, hscope__wval **nvals, uint32_t **posp, hscope_error *err)
{
    hscope_waste_t *w = B->w;
    size_t n = w->nvals;
    hscope__key4 *o = hscope__malloc(&w->mem, (n ? n : 1) * 2 * sizeof(hscope__key4));
    uint32_t *pos = hscope__malloc(&w->mem, (n ? n : 1) * sizeof(uint32_t));
    hscope__wval *nv = hscope__malloc(&w->mem, (n ? n : 1) * sizeof(hscope__wval));
    if (!o || !pos || !nv) {
        hscope__free(&w->mem, o);
        hscope__free(&w->mem, pos);
        hscope__free(&w->mem, nv);
        return hscope__nomem(err, n * 168);
    }
    /* a value's length is below 2^32 (the accumulator's entries hold it
     * in 31 bits), so length and index share the last word */
    for (size_t i = 0; i < n; i++)
        o[i] = (hscope__key4){ { ~w->vals[i].saving, ~w->vals[i].copies, w->vals[i].hash,
                                 (uint64_t)(uint32_t)w->vals[i].len << 32 | (uint32_t)i } };
    hscope__key4_sort(o, n, o + n);
    for (size_t i = 0; i < n; i++) {
        uint32_t idx = (uint32_t)o[i].k[3];
        pos[idx] = (uint32_t)i;
        nv[i] = w->vals[idx];
    }
    hscope__free(&w->mem, o);
    *nvals = nv;
    *posp = pos;
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* rows: one per (key, kind, type)                                     */
/* ------------------------------------------------------------------ */

typedef struct trow {
    hscope__wrow r;
    uint32_t rank;
} trow;

static int
cmp_group(const void *x, const void *y)
{
    const trow *a = x, *b = y;
    if (a->r.key != b->r.key)
        return a->r.key < b->r.key ? -1 : 1;
    if (a->r.kind != b->r.kind)
        return a->r.kind < b->r.kind ? -1 : 1;
    return (a->r.type > b->r.type) - (a->r.type < b->r.type);
}

/* biggest saving first; ties by key text, kind, type */
static int
cmp_saving(const void *x, const void *y)
{
    const trow *a = x, *b = y;
    if (a->r.saving != b->r.saving)
        return a->r.saving > b->r.saving ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return cmp_group(x, y);
}

static void
add_row(hscope__wrow *d, const hscope__wrow *s)
{
    d->count += s->count;
    d->saving = hscope__sat_add(d->saving, s->saving);
    d->memsize = hscope__sat_add(d->memsize, s->memsize);
    d->copies += s->copies;
    d->frozen += s->frozen;
    d->fstring += s->fstring;
    d->chilled += s->chilled;
    d->values += s->values;
    d->buffer = hscope__sat_add(d->buffer, s->buffer);
    d->used = hscope__sat_add(d->used, s->used);
}

/* The empty and oversized rows, merged by (key, kind, type) (there are
 * few: one per site at most per kind and type). */
static void
finding_rows(build *B, trow *t, size_t *n)
{
    const hscope__wftab *f = &B->a->f;
    for (size_t i = 0; i < f->n; i++) {
        const hscope__wfent *e = &f->f[i];
        hscope__wrow *r = &t[i].r;
        memset(&t[i], 0, sizeof(t[i]));
        r->key = B->fkey[i];
        r->kind = e->kind;
        r->type = e->type;
        r->count = e->count;
        r->saving = e->saving;
        r->memsize = e->memsize;
        r->buffer = e->buffer;
        r->used = e->used;
    }
    qsort(t, f->n, sizeof(trow), cmp_group);
    size_t m = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (m && cmp_group(&t[m - 1], &t[i]) == 0)
            add_row(&t[m - 1].r, &t[i].r);
        else
            t[m++] = t[i];
    }
    *n = m;
}

/* The duplicate rows: the pairs summed per key. */
static void
duplicate_rows(build *B, trow *t, size_t *n, trow *by_key)
{
    for (size_t i = 0; i < B->nvk; i++) {
        const vkey *k = &B->vk[i];
        hscope__wrow *r = &by_key[k->key].r;
        r->key = k->key;
        r->kind = HSCOPE_WASTE_DUPLICATE;
        r->type = HSCOPE_TYPE_STRING;
        r->count += k->freed;
        r->saving = hscope__sat_add(r->saving, k->saving);
        r->memsize = hscope__sat_add(r->memsize, k->memsize);
        r->copies += k->copies;
        r->frozen += k->frozen;
        r->fstring += k->fstring;
        r->chilled += k->chilled;
        r->values++;
    }
    for (size_t key = 1; key < B->w->keys.count; key++)
        if (by_key[key].r.values)
            t[(*n)++] = by_key[key];
}

/* The rows, sorted, and each duplicate row's values (vrefs, with the
 * values' indexes before sort_values). */
static hscope_status
rows_and_their_values(build *B, hscope_error *err)
{
    hscope_waste_t *w = B->w;
    hscope__mem *m = &w->mem;
    size_t nk = w->keys.count, n = 0;
    trow *t = hscope__malloc(m, (B->a->f.n + nk + 1) * sizeof(trow));
    trow *by_key = hscope__calloc(m, nk + 1, sizeof(trow));
    uint64_t *row_of_key = hscope__calloc(m, nk + 1, sizeof(uint64_t));
    uint32_t *x = NULL;
    size_t *first = NULL;
    hscope_status st = HSCOPE_OK;
    if (!t || !by_key || !row_of_key) {
        st = hscope__nomem(err, (B->a->f.n + nk) * sizeof(trow) * 2);
        goto out;
    }
    finding_rows(B, t, &n);
    duplicate_rows(B, t, &n, by_key);
    for (size_t i = 0; i < n; i++)
        t[i].rank = B->rank[t[i].r.key];
    qsort(t, n, sizeof(trow), cmp_saving);
    w->rows = hscope__malloc(m, (n ? n : 1) * sizeof(hscope__wrow));
    w->vrefs = hscope__malloc(m, (B->nvk ? B->nvk : 1) * sizeof(hscope__wref));
    if (!w->rows || !w->vrefs) {
        st = hscope__nomem(err, n * sizeof(hscope__wrow) + B->nvk * sizeof(hscope__wref));
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        w->rows[i] = t[i].r;
        if (t[i].r.kind == HSCOPE_WASTE_DUPLICATE)
            row_of_key[t[i].r.key] = i;
    }
    w->nrows = n;
    if ((st = bucket(B, nk, vk_key, key_in_row, &x, &first, err)) != HSCOPE_OK)
        goto out;
    for (size_t key = 0; key < nk; key++)
        for (size_t i = first[key]; i < first[key + 1]; i++) {
            const vkey *k = &B->vk[x[i]];
            if (i == first[key])
                w->rows[row_of_key[key]].vfirst = i;
            w->vrefs[i] = (hscope__wref){ k->val, k->copies, k->saving };
        }
out:
    hscope__free(m, t);
    hscope__free(m, by_key);
    hscope__free(m, row_of_key);
    hscope__free(m, x);
    hscope__free(m, first);
    return st;
}

/* Each value's sites (srefs), the values in their final order. */
static hscope_status
values_and_their_sites(build *B)
{
    hscope_waste_t *w = B->w;
    uint32_t *x = NULL;
    size_t *first = NULL;
    if (!(w->srefs = hscope__malloc(&w->mem, (B->nvk ? B->nvk : 1) * sizeof(hscope__wref))))
        return hscope__nomem(B->err, B->nvk * sizeof(hscope__wref));
    hscope_status st = bucket(B, w->nvals, vk_val, key_in_value, &x, &first, B->err);
    if (st != HSCOPE_OK)
        return st;
    for (size_t v = 0; v < w->nvals; v++) {
        w->vals[v].sfirst = first[v];
        for (size_t i = first[v]; i < first[v + 1]; i++) {
            const vkey *k = &B->vk[x[i]];
            w->srefs[i] = (hscope__wref){ k->key, k->copies, k->saving };
        }
    }
    hscope__free(&w->mem, x);
    hscope__free(&w->mem, first);
    return HSCOPE_OK;
}

/* The two halves of the ordering, on two threads: the values' order, and
 * the rows with their values. */
typedef struct half {
    build *B;
    int rows;
    hscope__wval *nv;
    uint32_t *pos;
    hscope_error err;
    hscope_status st;
} half;

static void *
run_half(void *p)
{
    half *h = p;
    h->st = h->rows ? rows_and_their_values(h->B, &h->err)
                    : sort_values(h->B, &h->nv, &h->pos, &h->err);
    return NULL;
}

static hscope_status
finish_rows(build *B)
{
    hscope_waste_t *w = B->w;
    half v = { .B = B, .rows = 0 }, r = { .B = B, .rows = 1 };
    hscope__error_init(&v.err);
    hscope__error_init(&r.err);
    hscope__run_pair(run_half, &v, &r, 1);
    if (v.st != HSCOPE_OK || r.st != HSCOPE_OK) {
        hscope__error_copy_out(B->err, v.st != HSCOPE_OK ? &v.err : &r.err);
        hscope__free(&w->mem, v.nv);
        hscope__free(&w->mem, v.pos);
        return v.st != HSCOPE_OK ? v.st : r.st;
    }
    hscope__free(&w->mem, w->vals);
    w->vals = v.nv;
    for (size_t i = 0; i < B->nvk; i++) {
        B->vk[i].val = v.pos[B->vk[i].val];
        w->vrefs[i].idx = v.pos[w->vrefs[i].idx];
    }
    hscope__free(&w->mem, v.pos);
    return values_and_their_sites(B);
}

/* ------------------------------------------------------------------ */
/* totals and the result                                               */
/* ------------------------------------------------------------------ */

static void
totals(build *B)
{
    hscope_waste_t *w = B->w;
    const hscope__wacc *a = B->a;
    hscope_waste_totals *t = &w->tot;
    uint64_t collisions = a->collisions, changed = a->changed;
    t->objects = a->tot.objects;
    t->memsize = a->tot.memsize;
    t->excluded = a->excluded;
    w->tracer = a->tracer;
    w->tracer_mem = a->tracer_mem;
    t->shared_count = a->tot.shared_n;
    t->shared_memsize = a->tot.shared_m;
    t->no_value_count = a->tot.noval_n;
    t->no_value_memsize = a->tot.noval_m;
    t->truncated_count = a->tot.trunc_n;
    t->truncated_memsize = a->tot.trunc_m;
    t->collision_count = collisions;
    t->group_count = w->nrows;
    t->dump_objects = w->stats.objects;
    uint32_t none = hscope__intern_find(&w->keys, w->by == HSCOPE_WASTE_BY_GEM ? "(none)"
                                                                             : "(none):0",
                                        w->by == HSCOPE_WASTE_BY_GEM ? 6 : 8);
    for (size_t i = 0; i < w->nrows; i++) {
        const hscope__wrow *r = &w->rows[i];
        t->count += r->count;
        t->saving = hscope__sat_add(t->saving, r->saving);
        if (none && r->key == none)
            t->untraced += r->kind == HSCOPE_WASTE_DUPLICATE ? r->copies : r->count;
        switch (r->kind) {
        case HSCOPE_WASTE_DUPLICATE:
            t->duplicate_count += r->count;
            t->duplicate_saving = hscope__sat_add(t->duplicate_saving, r->saving);
            t->duplicate_copies += r->copies;
            break;
        case HSCOPE_WASTE_EMPTY:
            t->empty_count += r->count;
            t->empty_saving = hscope__sat_add(t->empty_saving, r->saving);
            break;
        default:
            t->oversized_count += r->count;
            t->oversized_saving = hscope__sat_add(t->oversized_saving, r->saving);
            break;
        }
    }
    t->duplicate_values = w->nvals;
    uint32_t warn = a->warnings;
    if (w->stats.skipped_lines || w->stats.truncated)
        warn |= HSCOPE_WASTE_WARN_SKIPPED;
    if (w->nrows && t->untraced == t->duplicate_copies + t->empty_count + t->oversized_count)
        warn |= HSCOPE_WASTE_WARN_NO_TRACING;
    if (a->tot.candidates && !a->tot.values)
        warn |= HSCOPE_WASTE_WARN_NO_VALUES;
    if (collisions)
        warn |= HSCOPE_WASTE_WARN_COLLISIONS;
    if (changed)
        warn |= HSCOPE_WASTE_WARN_CHANGED;
    t->warnings = warn;
}

hscope_status
hscope__waste_finish(hscope_waste_t **out, hscope__wacc *a, const hscope__intern *strings,
                     const hscope_allocator *alloc, const hscope_load_stats *stats, const uint64_t skipped[HSCOPE_SKIP__COUNT],
                     hscope_error *err)
{
    hscope_waste_t *w = NULL;
    hscope__mem m;
    hscope__mem_init(&m, alloc, 0);
    if (!(w = hscope__calloc(&m, 1, sizeof(*w))))
        return hscope__nomem(err, sizeof(*w));
    w->mem = m;
    atomic_store(&w->mem.used, atomic_load(&m.used));
    w->by = a->cfg.by;
    w->stats = *stats;
    memcpy(w->skipped, skipped, sizeof(w->skipped));
    hscope__waste_totals_init(&w->tot);
    build B = { .w = w, .a = a, .strings = strings, .err = err };
    hscope_status st = hscope__intern_init(&w->keys, &w->mem, err);
    if (st == HSCOPE_OK)
        st = build_values(&B);
    /* every key is interned before the ranks are taken: those of the
     * empty and oversized rows too */
    if (st == HSCOPE_OK && !(B.fkey = hscope__malloc(&w->mem, (a->f.n + 1) * sizeof(uint32_t))))
        st = hscope__nomem(err, a->f.n * sizeof(uint32_t));
    for (size_t i = 0; st == HSCOPE_OK && i < a->f.n; i++)
        st = key_of(&B, a->f.f[i].file, a->f.f[i].line, &B.fkey[i]);
    if (st == HSCOPE_OK)
        st = rank_keys(&B);
    if (st == HSCOPE_OK)
        st = attribute_savings(&B);
    if (st == HSCOPE_OK)
        st = finish_rows(&B);
    if (st == HSCOPE_OK)
        totals(&B);
    w->chilled = a->tot.chilled;
    if (st == HSCOPE_OK)
        st = hscope__waste_fixes(w, err);
    void *tmp[] = { B.buf, B.kc, B.kcv, B.rank, B.gval, B.vk, B.vkt, B.fkey };
    for (size_t i = 0; i < sizeof(tmp) / sizeof(tmp[0]); i++)
        hscope__free(&w->mem, tmp[i]);
    if (st != HSCOPE_OK) {
        hscope__waste_free(w);
        return st;
    }
    *out = w;
    return HSCOPE_OK;
}

void
hscope__waste_options_init(hscope_waste_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->size = sizeof(*opts);
}

void
hscope__waste_totals_init(hscope_waste_totals *totals)
{
    if (!totals)
        return;
    memset(totals, 0, sizeof(*totals));
    totals->size = sizeof(*totals);
}

void
hscope__waste_free(hscope_waste_t *w)
{
    if (!w)
        return;
    hscope__mem m = w->mem;
    void *p[] = { w->varena, w->rows, w->vals, w->vrefs, w->srefs };
    hscope__intern_free(&w->keys);
    if (w->fixes.mem)
        hscope__intern_free(&w->fixes);
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        hscope__free(&w->mem, p[i]);
    hscope__free(&m, w);
}

uint64_t
hscope__waste_memory(const hscope_waste_t *w)
{
    if (!w)
        return 0;
    const hscope__intern *k = &w->keys;
    const hscope__intern *f = &w->fixes;
    const void *b[] = { k->arena, k->off, k->len, k->table, k->hash, f->arena, f->off, f->len,
                        f->table, f->hash, w->varena, w->rows, w->vals, w->vrefs, w->srefs, w };
    return hscope__msize_sum(b, sizeof(b) / sizeof(b[0]));
}

/* ------------------------------------------------------------------ */
/* options and fixes                                                   */
/* ------------------------------------------------------------------ */

hscope_status
hscope__wcfg_read(const hscope_waste_options *in, hscope__wcfg *out, hscope_error *err)
{
    hscope_waste_options o;
    hscope__waste_options_init(&o);
    if (in) {
        if (in->size < 2 * sizeof(uint32_t) || !hscope__tail_is_zero(in, in->size, sizeof(o)))
            return hscope__fail(err, in->size < 8 ? HSCOPE_ERR_INVALID_ARG : HSCOPE_ERR_UNSUPPORTED,
                                "bad hscope_waste_options (size %u)", in->size);
        memcpy(&o, in, in->size < sizeof(o) ? in->size : sizeof(o));
    }
    if (o.flags & ~(uint32_t)(HSCOPE_WASTE_KEEP_DUMPER | HSCOPE_WASTE_KEEP_TRACER))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown waste flags 0x%x", o.flags);
    if (o.by != HSCOPE_WASTE_BY_SITE && o.by != HSCOPE_WASTE_BY_GEM)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown waste grouping %u", o.by);
    out->by = (int)o.by;
    out->keep_dumper = (o.flags & HSCOPE_WASTE_KEEP_DUMPER) != 0;
    out->keep_tracer = (o.flags & HSCOPE_WASTE_KEEP_TRACER) != 0;
    out->ratio = o.ratio ? o.ratio : 4;
    out->min_slack = o.min_slack ? o.min_slack : 256;
    return HSCOPE_OK;
}
