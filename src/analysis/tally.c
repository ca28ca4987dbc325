/*
 * tally.c - group objects by a key and sum count and memsize per group
 * (bleak_house's file:line:class tally, heapy's and MAT's histograms).
 *
 * Each object maps to a key of three 32-bit parts (e.g. file id, line,
 * label id); groups are aggregated in an open-addressing table, rendered
 * to text once per group, then sorted (count or memsize descending, ties by
 * key text ascending, like the reference checker).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../model/model.h"
#include "origin.h"
#include "series.h"
#include "tally.h"

enum tkey { TK_TYPE, TK_CLASS, TK_FILE, TK_FILE_LINE, TK_SITE, TK_METHOD,
            TK_GENERATION, TK_GEM };

static const struct { const char *name; enum tkey k; } keys[] = {
    { "type", TK_TYPE }, { "class", TK_CLASS }, { "file", TK_FILE },
    { "file:line", TK_FILE_LINE }, { "file:line:class", TK_SITE },
    { "method", TK_METHOD }, { "generation", TK_GENERATION }, { "gem", TK_GEM },
};

typedef struct group {
    uint32_t k[3];
    uint64_t count, memsize;
    size_t text;       /* offset of the key text in the arena */
    const char *tp;    /* the text itself, set once the arena is final */
    uint32_t orig;     /* index before sorting */
} group;

struct hscope_tally {
    hscope_heap_t *heap;   /* NULL for a tally folded from a stream */
    hscope__mem *mem;      /* &heap->mem, or &own */
    hscope__mem own;
    uint64_t *mstart;  /* with members: row i owns members[mstart[i]..] */
    uint32_t *members;
    group *g;
    size_t ng, ncap;
    size_t nrows;      /* after top */
    char *arena;
    size_t alen, acap;
    uint64_t excluded;     /* the dumper's objects left out */
    uint64_t tracer, tracer_mem; /* the allocation tracer left out */
    /* a tally folded from a stream: the pass's load statistics and the
     * dump's fingerprint (a heap's tally asks its heap) */
    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
    hscope_fingerprint_t *fp;
    const char *by;    /* key name (static), or NULL */
    int retained;      /* rows are what groups retain (hscope_domtree_tally) */
    uint32_t sort;     /* HSCOPE_SORT_* the rows are in */
};

const uint32_t hscope__no_ids[1] = { 0 };

void
hscope__tally_options_init(hscope_tally_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
}

static void
key_of(const hscope_heap_t *h, enum tkey tk, const uint32_t *gem, uint32_t i,
       uint32_t k[3])
{
    uint32_t s = h->site[i];
    k[0] = k[1] = k[2] = 0;
    switch (tk) {
    case TK_TYPE: k[0] = h->type[i]; break;
    case TK_CLASS: k[0] = hscope__label(h, i); break;
    case TK_FILE: k[0] = h->site_file[s]; break;
    case TK_FILE_LINE: k[0] = h->site_file[s]; k[1] = h->site_line[s]; break;
    case TK_SITE:
        k[0] = h->site_file[s];
        k[1] = h->site_line[s];
        k[2] = hscope__label(h, i);
        break;
    case TK_METHOD: k[0] = h->site_method[s]; break;
    case TK_GENERATION: k[0] = h->gen[i]; break;
    case TK_GEM: k[0] = h->site_file[s] ? gem[h->site_file[s]] : 0; break;
    }
}

static hscope_status
append_text(hscope_tally_t *t, const char *s, size_t n, hscope_error *err)
{
    size_t need;
    if (!hscope__add_ok(t->alen, n + 1, &need))
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "tally text overflow");
    hscope_status st = hscope__grow(t->mem, (void **)&t->arena, &t->acap,
                                    need, 1, err);
    if (st != HSCOPE_OK)
        return st;
    memcpy(t->arena + t->alen, s, n);
    t->arena[t->alen + n] = '\0';
    t->alen = need;
    return HSCOPE_OK;
}

/* Render group g's key text into the arena. */
static hscope_status
render(hscope_tally_t *t, enum tkey tk, const hscope__intern *names, group *g,
       hscope_error *err)
{
    const hscope_heap_t *h = t->heap;
    char num[32];
    g->text = t->alen;
    hscope_status st;
    switch (tk) {
    case TK_TYPE: {
        const char *n = hscope__heap_type_name(h, (int32_t)g->k[0]);
        return append_text(t, n, strlen(n), err);
    }
    case TK_CLASS:
    case TK_FILE:
    case TK_METHOD:
    case TK_GEM: {
        const char *s = hscope__intern_str(names, g->k[0]);
        size_t n = hscope__intern_len(names, g->k[0]);
        if (!s) {
            s = "(none)";
            n = 6;
        }
        return append_text(t, s, n, err);
    }
    case TK_GENERATION:
        if (g->k[0] == HSCOPE__GEN_NONE)
            return append_text(t, "(none)", 6, err);
        snprintf(num, sizeof(num), "%u", g->k[0]);
        return append_text(t, num, strlen(num), err);
    case TK_FILE_LINE:
    case TK_SITE: {
        const char *f = hscope__intern_str(&h->strings, g->k[0]);
        size_t fn = hscope__intern_len(&h->strings, g->k[0]);
        if (!f) {
            f = "(none)";
            fn = 6;
        }
        snprintf(num, sizeof(num), ":%u", g->k[1]);
        /* build without the trailing NUL, then add the label */
        size_t start = t->alen;
        if ((st = append_text(t, f, fn, err)) != HSCOPE_OK)
            return st;
        t->alen--; /* drop NUL */
        if ((st = append_text(t, num, strlen(num), err)) != HSCOPE_OK)
            return st;
        if (tk == TK_SITE) {
            t->alen--;
            const char *l = hscope__intern_str(&h->strings, g->k[2]);
            size_t ln = hscope__intern_len(&h->strings, g->k[2]);
            if ((st = append_text(t, ":", 1, err)) != HSCOPE_OK)
                return st;
            t->alen--;
            if ((st = append_text(t, l ? l : "", l ? ln : 0, err)) != HSCOPE_OK)
                return st;
        }
        g->text = start;
        return HSCOPE_OK;
    }
    }
    return HSCOPE_ERR_INTERNAL;
}

/* file string id -> gem id in a tally-local interner (the heap is shared
 * and immutable, so derived names never go into its own interner). */
static hscope_status
gem_table(hscope_heap_t *h, hscope__intern *names, uint32_t **out,
          hscope_error *err)
{
    size_t n = h->strings.count;
    uint32_t *gem = hscope__calloc(&h->mem, n ? n : 1, sizeof(uint32_t));
    if (!gem)
        return hscope__nomem(err, n * sizeof(uint32_t));
    for (size_t s = 1; s < h->nsites; s++) {
        uint32_t f = h->site_file[s];
        if (!f || gem[f])
            continue;
        const char *g;
        size_t gn;
        hscope__gem_of(hscope__intern_str(&h->strings, f), &g, &gn);
        hscope_status st = hscope__intern_add(names, g, gn, &gem[f], err);
        if (st != HSCOPE_OK) {
            hscope__free(&h->mem, gem);
            return st;
        }
    }
    *out = gem;
    return HSCOPE_OK;
}

static int
cmp_text(const group *x, const group *y)
{
    return strcmp(x->tp, y->tp);
}

static int
cmp_count(const void *a, const void *b)
{
    const group *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return cmp_text(x, y);
}

static int
cmp_memsize(const void *a, const void *b)
{
    const group *x = a, *y = b;
    if (x->memsize != y->memsize)
        return x->memsize > y->memsize ? -1 : 1;
    return cmp_text(x, y);
}

/* Members per row: objects' group indices, then a counting sort. */
static hscope_status
collect_members(hscope_tally_t *t, const uint32_t *gidx, const uint32_t *ids,
                size_t n, hscope_error *err)
{
    hscope__mem *m = t->mem;
    /* rows were sorted: map old group index -> row */
    uint32_t *row = hscope__malloc(m, (t->ng + 1) * sizeof(uint32_t));
    t->mstart = hscope__calloc(m, t->ng + 2, sizeof(uint64_t));
    t->members = hscope__malloc(m, (n + 1) * sizeof(uint32_t));
    if (!row || !t->mstart || !t->members) {
        hscope__free(m, row);
        return hscope__nomem(err, n * sizeof(uint32_t));
    }
    for (size_t r = 0; r < t->ng; r++)
        row[t->g[r].orig] = (uint32_t)r;
    for (size_t i = 0; i < n; i++)
        t->mstart[row[gidx[i]] + 1]++;
    for (size_t r = 0; r < t->ng; r++)
        t->mstart[r + 1] += t->mstart[r];
    uint64_t *pos = hscope__malloc(m, (t->ng + 1) * sizeof(uint64_t));
    if (!pos) {
        hscope__free(m, row);
        return hscope__nomem(err, t->ng * sizeof(uint64_t));
    }
    memcpy(pos, t->mstart, (t->ng + 1) * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++)
        t->members[pos[row[gidx[i]]]++] = ids ? ids[i] : (uint32_t)i;
    hscope__free(m, pos);
    hscope__free(m, row);
    return HSCOPE_OK;
}

/* The class label of object i (hscope__label, with its common case inline). */
static inline uint32_t
label_fast(const hscope_heap_t *h, uint32_t i)
{
    if (h->type[i] == HSCOPE_TYPE_IMEMO || hscope__is_tracer(h, i))
        return hscope__label(h, i);
    uint32_t c = h->cls[i];
    if (c >= HSCOPE__CLS_UNKNOWN)
        return c == HSCOPE__CLS_HIDDEN ? h->lbl_hidden : h->lbl_unknown;
    uint32_t d = h->detail[c];
    return d ? d : h->lbl_anon;
}

/* What a tally leaves out (the dumper's objects, Ruby's allocation
 * tracer), as it counts them. */
typedef struct leftout {
    const uint8_t *dsite;  /* per site: 1 the dumper's; NULL: nothing left out */
    int skip_tracer;
    uint64_t dumper, tracer, tracer_mem;
} leftout;

/* Whether object i is left out (and counted in x). */
static inline int
left_out(const hscope_heap_t *h, leftout *x, uint32_t i)
{
    if (x->dsite[h->site[i]]) {
        x->dumper++;
        return 1;
    }
    if (x->skip_tracer && hscope__is_tracer(h, i)) {
        x->tracer++;
        x->tracer_mem = hscope__sat_add(x->tracer_mem, hscope__memsize(h, i));
        return 1;
    }
    return 0;
}

/*
 * The tally of a key that is one small id (type, class label, file,
 * method, gem): per-id count and memsize in a flat array, one tight loop
 * per key, then one group per id seen.  This is what summary runs twice
 * over every object, so it is kept free of hashing and per-object
 * branching on the key.
 */
typedef struct dense_job {
    const hscope_heap_t *h;
    enum tkey tk;
    const uint32_t *gem, *subset;
    size_t from, to;
    uint64_t *acc;     /* dense_n pairs (count, memsize) */
    leftout out;       /* out.dsite NULL: every object counts */
} dense_job;

static void *
dense_run(void *arg)
{
    dense_job *j = arg;
    const hscope_heap_t *h = j->h;
    const uint32_t *subset = j->subset, *gem = j->gem;
    uint64_t *acc = j->acc;
#define FOLD(KEY)                                                              \
    for (size_t x = j->from; x < j->to; x++) {                                 \
        uint32_t i = subset ? subset[x] : (uint32_t)x;                         \
        if (j->out.dsite && left_out(h, &j->out, i))                           \
            continue;                                                          \
        uint64_t *a = acc + 2 * (size_t)(KEY);                                 \
        a[0]++;                                                                \
        a[1] = hscope__sat_add(a[1], hscope__memsize(h, i));                   \
    }
    switch (j->tk) {
    case TK_TYPE: FOLD(h->type[i]); break;
    case TK_CLASS: FOLD(label_fast(h, i)); break;
    case TK_FILE: FOLD(h->site_file[h->site[i]]); break;
    case TK_METHOD: FOLD(h->site_method[h->site[i]]); break;
    case TK_GEM: FOLD(h->site_file[h->site[i]] ? gem[h->site_file[h->site[i]]] : 0); break;
    default: {
        uint32_t k[3];
        FOLD((key_of(h, j->tk, gem, i, k), k[0]));
        break;
    }
    }
#undef FOLD
    return NULL;
}

/*
 * The tally of a key that is one small id (type, class label, file,
 * method, gem): per-id count and memsize in a flat array, one tight loop
 * per key, then one group per id seen.  This is what summary runs twice
 * over every object, so it is kept free of hashing and per-object
 * branching on the key; over millions of objects the second half runs on
 * another thread with its own array.
 */
static hscope_status
dense_fold(hscope_tally_t *t, hscope_heap_t *heap, enum tkey tk, const uint32_t *gem,
           const uint32_t *subset, size_t total, size_t dense_n, const leftout *out,
           hscope_error *err)
{
    int split = total >= ((size_t)1 << 20) && sysconf(_SC_NPROCESSORS_ONLN) > 1;
    uint64_t *acc = hscope__calloc(&heap->mem, dense_n * (split ? 2 : 1), 2 * sizeof(uint64_t));
    if (!acc)
        return hscope__nomem(err, dense_n * 16);
    dense_job jobs[2] = {
        { heap, tk, gem, subset, 0, split ? total / 2 : total, acc, *out },
        { heap, tk, gem, subset, total / 2, total, acc + 2 * dense_n, *out },
    };
    hscope__run_pair(dense_run, &jobs[0], &jobs[1], split);
    for (int k = 0; k < (split ? 2 : 1); k++) {
        t->excluded += jobs[k].out.dumper;
        t->tracer += jobs[k].out.tracer;
        t->tracer_mem = hscope__sat_add(t->tracer_mem, jobs[k].out.tracer_mem);
    }
    if (split)
        for (size_t k = 0; k < dense_n; k++) {
            acc[2 * k] += acc[2 * (dense_n + k)];
            acc[2 * k + 1] = hscope__sat_add(acc[2 * k + 1], acc[2 * (dense_n + k) + 1]);
        }
    hscope_status st = HSCOPE_OK;
    for (size_t k = 0; k < dense_n; k++) {
        if (!acc[2 * k])
            continue;
        if ((st = hscope__grow(&heap->mem, (void **)&t->g, &t->ncap, t->ng + 1,
                               sizeof(group), err)) != HSCOPE_OK)
            break;
        group *g = &t->g[t->ng];
        g->k[0] = (uint32_t)k;
        g->k[1] = g->k[2] = 0;
        g->count = acc[2 * k];
        g->memsize = acc[2 * k + 1];
        g->orig = (uint32_t)t->ng++;
    }
    hscope__free(&heap->mem, acc);
    return st;
}

/*
 * The objects of a subset (or of the whole heap: *subset NULL) that the
 * dumper did not allocate (if skip_dumper), and that are not Ruby's
 * allocation tracer (if skip_tracer), into a new list (*kept, also *subset); the dumper's
 * counted in t->excluded, the tracer in t->tracer and t->tracer_mem.
 * Sites are judged once each.  Nothing changes when no site is the
 * dumper's and the dump has no tracer.  With `fold` (a tally without
 * members, which tests each object as it counts it), no list is made:
 * *fold gets the judged sites instead (the caller frees fold->dsite), an
 * 11 MB list and a pass over the objects less on the 1 GB benchmark dump.
 */
static hscope_status
without_dumper(hscope_heap_t *h, hscope_tally_t *t, int skip_dumper, int skip_tracer,
               const uint32_t **subset, size_t *nsub, uint32_t **kept, leftout *fold,
               hscope_error *err)
{
    uint8_t *dsite = hscope__calloc(&h->mem, h->nsites ? h->nsites : 1, 1);
    if (!dsite)
        return hscope__nomem(err, h->nsites);
    int any = skip_tracer && h->str_tracer;
    for (size_t s = 1; skip_dumper && s < h->nsites; s++) {
        dsite[s] = (uint8_t)hscope__is_dumper(hscope__intern_str(&h->strings, h->site_file[s]),
                                              hscope__intern_str(&h->strings, h->site_method[s]));
        any |= dsite[s];
    }
    size_t total = *subset ? *nsub : h->n;
    if (any && fold) {
        fold->dsite = dsite;
        fold->skip_tracer = skip_tracer;
        return HSCOPE_OK;
    }
    if (any) {
        uint32_t *ids = hscope__malloc(&h->mem, (total + 1) * sizeof(uint32_t));
        if (!ids) {
            hscope__free(&h->mem, dsite);
            return hscope__nomem(err, total * sizeof(uint32_t));
        }
        leftout x = { dsite, skip_tracer, 0, 0, 0 };
        size_t k = 0;
        for (size_t j = 0; j < total; j++) {
            uint32_t i = *subset ? (*subset)[j] : (uint32_t)j;
            if (!left_out(h, &x, i))
                ids[k++] = i;
        }
        t->excluded += x.dumper;
        t->tracer += x.tracer;
        t->tracer_mem = hscope__sat_add(t->tracer_mem, x.tracer_mem);
        *kept = ids;
        *subset = ids;
        *nsub = k;
    }
    hscope__free(&h->mem, dsite);
    return HSCOPE_OK;
}

/* A caller's tally options (NULL: defaults) and key, checked: *o, and in
 * *kip the key's index in keys[]. */
static hscope_status
tally_args(const hscope_tally_options *uopts, const char *key, hscope_tally_options *o,
           size_t *kip, hscope_error *err)
{
    hscope__tally_options_init(o);
    if (uopts) {
        if (uopts->size < sizeof(uint32_t) * 2)
            return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "tally options size not set");
        if (!hscope__tail_is_zero(uopts, uopts->size, sizeof(*o)))
            return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                                "hscope_tally_options has unknown non-zero fields");
        memcpy(o, uopts, uopts->size < sizeof(*o) ? uopts->size : sizeof(*o));
    }
    if (o->flags & ~(uint32_t)(HSCOPE_TALLY_SKIP_DUMPER | HSCOPE_TALLY_FINGERPRINT |
                               HSCOPE_TALLY_FIELDS_WITH_OWNER | HSCOPE_TALLY_SKIP_TRACER))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown tally flags 0x%x", o->flags);
    size_t ki;
    for (ki = 0; ki < sizeof(keys) / sizeof(keys[0]); ki++)
        if (strcmp(keys[ki].name, key) == 0)
            break;
    if (ki == sizeof(keys) / sizeof(keys[0]))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "unknown tally key \"%s\" (expected type, class, file, "
                            "file:line, file:line:class, method, generation or gem)",
                            key);
    if (o->sort > HSCOPE_SORT_MEMSIZE)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown sort %u", o->sort);
    *kip = ki;
    return HSCOPE_OK;
}

/* The groups by key: a direct array (dense) for keys of one small id,
 * else an open hash table of group numbers + 1 (hscope__tally_run()). */
typedef struct gtab {
    uint32_t *table, *dense;
    size_t tcap;
} gtab;

/* The hash table at twice its size. */
static hscope_status
gtab_grow(hscope_tally_t *t, gtab *G, hscope_error *err)
{
    size_t nc = G->tcap * 2;
    uint32_t *nt = hscope__calloc(t->mem, nc, sizeof(uint32_t));
    if (!nt)
        return hscope__nomem(err, nc * 4);
    for (size_t j = 0; j < t->ng; j++) {
        size_t q = (size_t)hscope__hash3(t->g[j].k[0], t->g[j].k[1], t->g[j].k[2]) & (nc - 1);
        while (nt[q])
            q = (q + 1) & (nc - 1);
        nt[q] = (uint32_t)(j + 1);
    }
    hscope__free(t->mem, G->table);
    G->table = nt;
    G->tcap = nc;
    return HSCOPE_OK;
}

/* The group of key k, made if new: its number + 1 in *gip. */
static inline hscope_status
group_of(hscope_tally_t *t, gtab *G, const uint32_t k[3], uint32_t *gip, hscope_error *err)
{
    uint32_t gi;
    size_t s = 0, mask = G->tcap - 1;
    if (G->dense) {
        gi = G->dense[k[0]];
    } else {
        s = (size_t)hscope__hash3(k[0], k[1], k[2]) & mask;
        while ((gi = G->table[s]) != 0 && memcmp(t->g[gi - 1].k, k, 3 * sizeof(uint32_t)) != 0)
            s = (s + 1) & mask;
    }
    if (!gi) {
        hscope_status st = hscope__grow(t->mem, (void **)&t->g, &t->ncap, t->ng + 1,
                                        sizeof(group), err);
        if (st != HSCOPE_OK)
            return st;
        group *g = &t->g[t->ng];
        memcpy(g->k, k, 3 * sizeof(uint32_t));
        g->count = g->memsize = 0;
        g->orig = (uint32_t)t->ng;
        gi = (uint32_t)++t->ng;
        if (G->dense)
            G->dense[k[0]] = gi;
        else
            G->table[s] = gi;
        if (!G->dense && t->ng * 2 > G->tcap && (st = gtab_grow(t, G, err)) != HSCOPE_OK)
            return st;
    }
    *gip = gi;
    return HSCOPE_OK;
}

/* Every object (of the subset) counted in its group; with gidx, gidx[x]
 * is the group of the x-th.  fields (a string id, or 0): a fields object
 * takes its owner's key.  An object `left` leaves out is counted there
 * (with left->dsite; never with gidx, whose subset lists only what counts).
 *
 * By file:line the key is the site's; by file:line:class, the site's and
 * the object's class label, and the objects of a site are nearly all of
 * one class.  So each site remembers the group (and label) of its last
 * object, which answers most objects without hashing the key: the
 * bleak_house-style tally of the 1 GB benchmark dump took 50 ms of
 * hashing before (bench/README.md).  The group is the one the table would
 * have found, so groups, their order of creation and the members are the
 * same. */
static hscope_status
group_all(hscope_tally_t *t, hscope_heap_t *heap, enum tkey tk, const uint32_t *gem, gtab *G,
          const uint32_t *subset, size_t total, uint32_t fields, uint32_t *gidx,
          leftout *left, hscope_error *err)
{
    uint64_t *last = NULL; /* per site: label << 32 | group number, 0: none yet */
    if ((tk == TK_FILE_LINE || tk == TK_SITE) && heap->nsites &&
        !(last = hscope__calloc(&heap->mem, heap->nsites, sizeof(uint64_t))))
        return hscope__nomem(err, heap->nsites * sizeof(uint64_t));
    for (size_t x = 0; x < total; x++) {
        uint32_t i = subset ? subset[x] : (uint32_t)x;
        uint32_t k[3], ko = i, gi;
        if (left->dsite && left_out(heap, left, i))
            continue;
        if (fields && (ko = hscope__fields_owner(heap, i, fields)) == HSCOPE_ID_NONE)
            ko = i;
        uint32_t site = 0, lbl = 0;
        uint64_t seen = 0;
        if (last) {
            site = heap->site[ko];
            lbl = tk == TK_SITE ? label_fast(heap, ko) : 0;
            seen = last[site];
        }
        if (seen && (uint32_t)(seen >> 32) == lbl) {
            gi = (uint32_t)seen;
        } else {
            key_of(heap, tk, gem, ko, k);
            hscope_status st = group_of(t, G, k, &gi, err);
            if (st != HSCOPE_OK) {
                hscope__free(&heap->mem, last);
                return st;
            }
            if (last)
                last[site] = (uint64_t)lbl << 32 | gi;
        }
        t->g[gi - 1].count++;
        t->g[gi - 1].memsize = hscope__sat_add(t->g[gi - 1].memsize, hscope__memsize(heap, i));
        if (gidx)
            gidx[x] = gi - 1;
    }
    hscope__free(&heap->mem, last);
    t->excluded += left->dumper;
    t->tracer += left->tracer;
    t->tracer_mem = hscope__sat_add(t->tracer_mem, left->tracer_mem);
    return HSCOPE_OK;
}

/* The groups' texts, their order, their members (with gidx), the rows
 * shown. */
static hscope_status
finish_groups(hscope_tally_t *t, enum tkey tk, const hscope__intern *strings,
              const hscope_tally_options *o, const uint32_t *gidx, const uint32_t *subset,
              size_t total, hscope_error *err)
{
    hscope_status st;
    for (size_t j = 0; j < t->ng; j++)
        if ((st = render(t, tk, strings, &t->g[j], err)) != HSCOPE_OK)
            return st;
    for (size_t j = 0; j < t->ng; j++)
        t->g[j].tp = t->arena + t->g[j].text;
    if (t->ng)
        qsort(t->g, t->ng, sizeof(group),
              o->sort == HSCOPE_SORT_MEMSIZE ? cmp_memsize : cmp_count);
    t->sort = o->sort;
    if (gidx && (st = collect_members(t, gidx, subset, total, err)) != HSCOPE_OK)
        return st;
    t->nrows = o->top && o->top < t->ng ? (size_t)o->top : t->ng;
    return HSCOPE_OK;
}

/*
 * The group-by itself, over all objects of the heap or over a subset
 * (ascending ids); with `members`, each row also lists its objects.
 */
hscope_status
hscope__tally_run(hscope_tally_t **out, hscope_heap_t *heap, const char *key,
                  const hscope_tally_options *uopts, const uint32_t *subset,
                  size_t nsub, int members, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st = HSCOPE_OK;
    hscope_tally_t *t = NULL;
    gtab G = { NULL, NULL, 1024 };
    uint32_t *gem = NULL, *gidx = NULL, *kept = NULL;
    leftout left = { NULL, 0, 0, 0, 0 };
    hscope__intern gems = { 0 };
    int have_gems = 0;
    hscope_tally_options o;
    size_t ki = 0;
    if (!out || !heap || !key) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "NULL argument");
        goto done;
    }
    *out = NULL;
    if ((st = tally_args(uopts, key, &o, &ki, &err)) != HSCOPE_OK)
        goto done;
    enum tkey tk = keys[ki].k;
    t = hscope__calloc(&heap->mem, 1, sizeof(*t));
    if (!t) {
        st = hscope__nomem(&err, sizeof(*t));
        goto done;
    }
    t->heap = heap;
    t->mem = &heap->mem;
    t->by = keys[ki].name;
    hscope__heap_retain(heap);
    /* with HSCOPE_TALLY_FIELDS_WITH_OWNER, a fields object takes its
     * owner's key (group_all; the dense fold keys by the object) */
    uint32_t fields = (o.flags & HSCOPE_TALLY_FIELDS_WITH_OWNER) ? hscope__fields_str(heap) : 0;
    /* Keys made of one small id (type, class label, file, method, gem)
     * index a direct array instead of the hash table: no hashing, no
     * probing (summary's histograms over millions of objects). */
    int dense = (tk == TK_TYPE || tk == TK_CLASS || tk == TK_FILE || tk == TK_METHOD ||
                 tk == TK_GEM) && !members && !fields;
    if ((o.flags & (HSCOPE_TALLY_SKIP_DUMPER | HSCOPE_TALLY_SKIP_TRACER)) &&
        (st = without_dumper(heap, t, (o.flags & HSCOPE_TALLY_SKIP_DUMPER) != 0,
                             (o.flags & HSCOPE_TALLY_SKIP_TRACER) != 0, &subset, &nsub, &kept,
                             members ? NULL : &left, &err)) != HSCOPE_OK)
        goto done;
    if (tk == TK_GEM) {
        if ((st = hscope__intern_init(&gems, &heap->mem, &err)) != HSCOPE_OK)
            goto done;
        have_gems = 1;
        if ((st = gem_table(heap, &gems, &gem, &err)) != HSCOPE_OK)
            goto done;
    }
    if (!(G.table = hscope__calloc(&heap->mem, G.tcap, sizeof(uint32_t)))) {
        st = hscope__nomem(&err, G.tcap * 4);
        goto done;
    }
    size_t total = subset ? nsub : heap->n;
    if (members && !(gidx = hscope__malloc(&heap->mem, (total + 1) * sizeof(uint32_t)))) {
        st = hscope__nomem(&err, total * sizeof(uint32_t));
        goto done;
    }
    size_t dense_n = tk == TK_TYPE ? 256
                   : (tk == TK_CLASS || tk == TK_FILE || tk == TK_METHOD) ? heap->strings.count
                   : tk == TK_GEM ? gems.count : 0;
    if (dense_n && !(G.dense = hscope__calloc(&heap->mem, dense_n, sizeof(uint32_t)))) {
        st = hscope__nomem(&err, dense_n * 4);
        goto done;
    }
    if (dense && G.dense)
        /* Straight accumulation by key id, groups made afterwards (rows
         * are sorted by value, then text, so creation order is moot). */
        st = dense_fold(t, heap, tk, gem, subset, total, dense_n, &left, &err);
    else
        st = group_all(t, heap, tk, gem, &G, subset, total, fields, gidx, &left, &err);
    if (st == HSCOPE_OK)
        st = finish_groups(t, tk, have_gems ? &gems : &heap->strings, &o, gidx, subset, total,
                           &err);
done:
    if (gidx)
        hscope__free(&heap->mem, gidx);
    if (G.dense)
        hscope__free(&heap->mem, G.dense);
    hscope__free(heap ? &heap->mem : NULL, G.table);
    if (gem)
        hscope__free(&heap->mem, gem);
    if (kept)
        hscope__free(&heap->mem, kept);
    if (left.dsite)
        hscope__free(&heap->mem, (void *)left.dsite);
    if (have_gems)
        hscope__intern_free(&gems);
    if (st != HSCOPE_OK) {
        hscope__tally_free(t);
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    *out = t;
    return HSCOPE_OK;
}

hscope_status
hscope__tally_compute(hscope_tally_t **out, hscope_heap_t *heap, const char *key,
                      const hscope_tally_options *opts, hscope_error *err)
{
    return hscope__tally_run(out, heap, key, opts, NULL, 0, 0, err);
}

hscope_status
hscope__tally_subset(hscope_tally_t **out, hscope_heap_t *heap, const char *key,
                     const hscope_id *ids, uint64_t count,
                     const hscope_tally_options *opts, hscope_error *err)
{
    if (out)
        *out = NULL;
    if (!heap || (!ids && count))
        return HSCOPE_ERR_INVALID_ARG;
    for (uint64_t i = 0; i < count; i++) {
        if (ids[i] >= heap->n || (i && ids[i] <= ids[i - 1])) {
            hscope_error e;
            hscope__error_init(&e);
            hscope__fail(&e, HSCOPE_ERR_INVALID_ARG,
                         "ids must be ascending object ids (index %llu)",
                         (unsigned long long)i);
            hscope__error_copy_out(err, &e);
            return HSCOPE_ERR_INVALID_ARG;
        }
    }
    return hscope__tally_run(out, heap, key, opts, hscope__ids_or_none(ids, (size_t)count),
                             (size_t)count, 1, err);
}

hscope_status
hscope__tally_row_objects(const hscope_tally_t *t, uint64_t i,
                          const hscope_id **ids, uint64_t *count)
{
    if (!t || !ids || !count)
        return HSCOPE_ERR_INVALID_ARG;
    if (!t->members || i >= t->nrows)
        return HSCOPE_ERR_NOT_FOUND;
    *ids = t->members + t->mstart[i];
    *count = t->mstart[i + 1] - t->mstart[i];
    return HSCOPE_OK;
}

void
hscope__tally_drop_members(hscope_tally_t *t)
{
    if (!t)
        return;
    hscope__free(t->mem, t->mstart);
    hscope__free(t->mem, t->members);
    t->mstart = NULL;
    t->members = NULL;
}

void
hscope__tally_free(hscope_tally_t *t)
{
    if (!t)
        return;
    hscope_heap_t *h = t->heap;
    hscope__mem *m = t->mem, own = t->own;
    if (!h)
        m = &own; /* t holds its own context: free t through a copy */
    hscope__free(m, t->mstart);
    hscope__free(m, t->members);
    hscope__free(m, t->g);
    hscope__free(m, t->arena);
    hscope__fingerprint_free(t->fp);
    hscope__free(m, t);
    hscope__heap_release(h);
}

uint64_t
hscope__tally_memory(const hscope_tally_t *t)
{
    if (!t)
        return 0;
    const void *b[] = { t->mstart, t->members, t->g, t->arena, t };
    return hscope__msize_sum(b, sizeof(b) / sizeof(b[0])) + hscope__fingerprint_memory(t->fp);
}

uint64_t
hscope__tally_excluded(const hscope_tally_t *t)
{
    return t ? t->excluded : 0;
}

void
hscope__tally_tracer(const hscope_tally_t *t, uint64_t *objects, uint64_t *memsize)
{
    if (objects)
        *objects = t ? t->tracer : 0;
    if (memsize)
        *memsize = t ? t->tracer_mem : 0;
}

void
hscope__tally_set_tracer(hscope_tally_t *t, uint64_t objects, uint64_t memsize)
{
    t->tracer = objects;
    t->tracer_mem = memsize;
}

hscope_status
hscope__tally_stats(const hscope_tally_t *t, hscope_load_stats *stats)
{
    if (!t || !stats || stats->size < 2 * sizeof(uint32_t))
        return HSCOPE_ERR_INVALID_ARG;
    hscope__stats_copy_out(stats, t->heap ? &t->heap->stats : &t->stats);
    return HSCOPE_OK;
}

uint64_t
hscope__tally_skipped(const hscope_tally_t *t, int32_t reason)
{
    if (!t || reason < 0 || reason >= HSCOPE_SKIP__COUNT)
        return 0;
    return t->heap ? hscope__heap_skipped(t->heap, reason) : t->skipped[reason];
}

const hscope_fingerprint_t *
hscope__tally_fingerprint(const hscope_tally_t *t)
{
    return t ? t->fp : NULL;
}

/* A streamed tally's dump: statistics of the pass, skip counts, the
 * fingerprint (taken over) and the dumper's objects left out. */
void
hscope__tally_set_source(hscope_tally_t *t, const hscope_load_stats *stats,
                         const uint64_t skipped[HSCOPE_SKIP__COUNT],
                         hscope_fingerprint_t *fp, uint64_t excluded)
{
    t->stats = *stats;
    memcpy(t->skipped, skipped, sizeof(t->skipped));
    t->fp = fp;
    t->excluded = excluded;
}

void
hscope__tally_set_fingerprint(hscope_tally_t *t, hscope_fingerprint_t *fp)
{
    hscope__fingerprint_free(t->fp);
    t->fp = fp;
}

uint64_t
hscope__tally_row_count(const hscope_tally_t *t)
{
    return t ? t->nrows : 0;
}

uint64_t
hscope__tally_group_count(const hscope_tally_t *t)
{
    return t ? t->ng : 0;
}

void
hscope__tally_totals(const hscope_tally_t *t, uint64_t *count, uint64_t *memsize)
{
    uint64_t c = 0, m = 0;
    for (size_t i = 0; t && i < t->ng; i++) {
        c += t->g[i].count;
        m = hscope__sat_add(m, t->g[i].memsize);
    }
    if (count)
        *count = c;
    if (memsize)
        *memsize = m;
}

const char *
hscope__tally_row_key(const hscope_tally_t *t, uint64_t i)
{
    return t && i < t->nrows ? t->arena + t->g[i].text : NULL;
}

uint64_t
hscope__tally_row_count_of(const hscope_tally_t *t, uint64_t i)
{
    return t && i < t->nrows ? t->g[i].count : 0;
}

uint64_t
hscope__tally_row_memsize(const hscope_tally_t *t, uint64_t i)
{
    return t && i < t->nrows ? t->g[i].memsize : 0;
}

/* ------------------------------------------------------------------ */
/* standalone tallies (folded from a stream, no heap)                  */
/* ------------------------------------------------------------------ */

hscope_status
hscope__tally_new(hscope_tally_t **out, const hscope_allocator *a,
                  hscope_error *err)
{
    hscope__mem m;
    hscope__mem_init(&m, a, 0);
    hscope_tally_t *t = hscope__calloc(&m, 1, sizeof(*t));
    if (!t)
        return hscope__nomem(err, sizeof(*t));
    t->own = m;
    atomic_store(&t->own.used, atomic_load(&m.used));
    t->mem = &t->own;
    *out = t;
    return HSCOPE_OK;
}

hscope_status
hscope__tally_add(hscope_tally_t *t, const char *key, size_t len,
                  uint64_t count, uint64_t memsize, hscope_error *err)
{
    hscope_status st = hscope__grow(t->mem, (void **)&t->g, &t->ncap, t->ng + 1,
                                    sizeof(group), err);
    if (st != HSCOPE_OK)
        return st;
    group *g = &t->g[t->ng];
    memset(g, 0, sizeof(*g));
    g->count = count;
    g->memsize = memsize;
    g->orig = (uint32_t)t->ng;
    g->text = t->alen;
    if ((st = append_text(t, key, len, err)) != HSCOPE_OK)
        return st;
    t->ng++;
    return HSCOPE_OK;
}

void
hscope__tally_finish(hscope_tally_t *t, uint32_t sort, uint64_t top)
{
    for (size_t j = 0; j < t->ng; j++)
        t->g[j].tp = t->arena + t->g[j].text;
    t->sort = sort;
    if (t->ng)
        qsort(t->g, t->ng, sizeof(group),
              sort == HSCOPE_SORT_MEMSIZE ? cmp_memsize : cmp_count);
    t->nrows = top && top < t->ng ? (size_t)top : t->ng;
}

/* Key name -> enum, or -1. */
int
hscope__tally_key(const char *key)
{
    for (size_t ki = 0; ki < sizeof(keys) / sizeof(keys[0]); ki++)
        if (strcmp(keys[ki].name, key) == 0)
            return (int)keys[ki].k;
    return -1;
}

const char *
hscope__tally_key_name(const char *key)
{
    for (size_t ki = 0; key && ki < sizeof(keys) / sizeof(keys[0]); ki++)
        if (strcmp(keys[ki].name, key) == 0)
            return keys[ki].name;
    return NULL;
}

void
hscope__tally_set_by(hscope_tally_t *t, const char *key)
{
    const char *name = hscope__tally_key_name(key);
    if (name)
        t->by = name;
}

uint32_t
hscope__tally_sort(const hscope_tally_t *t)
{
    return t->sort;
}

hscope__mem *
hscope__tally_mem(const hscope_tally_t *t)
{
    return t->mem;
}

const char *
hscope__tally_by(const hscope_tally_t *t)
{
    return t ? t->by : NULL;
}

void
hscope__tally_set_retained(hscope_tally_t *t)
{
    t->retained = 1;
}

int
hscope__tally_is_retained(const hscope_tally_t *t)
{
    return t && t->retained;
}

const hscope_heap_t *
hscope__tally_heap(const hscope_tally_t *t)
{
    return t ? t->heap : NULL;
}
