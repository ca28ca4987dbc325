/*
 * fold.c - streaming aggregation: a dump folded straight into group totals
 * (count and memsize per key) by the parser in sink mode, without the
 * model, so memory is bounded by the number of groups and distinct strings
 * rather than by the dump.  Same keys and definitions as the tally.
 *
 * Class labels need the class records, which may come after the objects:
 * objects are grouped by class *address* (IMEMO by imemo_type) and the
 * labels are resolved once the whole dump has been read; groups whose
 * labels coincide are then merged by text.
 */
#include <stdio.h>
#include <string.h>

#include "../model/model.h"
#include "origin.h"
#include "series.h"
#include "tally.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define IMEMO_BIT ((uint64_t)1 << 63)
/* the class key of Ruby's allocation tracer when it is kept */
#define TRACER_KEY ((uint64_t)1 << 62)

typedef struct gkey {
    uint64_t a;
    uint32_t b, c;
} gkey;

typedef struct fold {
    hscope__mem *mem;
    int tk;
    gkey *keys;
    uint64_t *count, *memsize;
    size_t n, cap;
    uint32_t *table;              /* group index + 1 */
    size_t mask;
    uint64_t *cls_addr;           /* class records: address -> detail */
    uint32_t *cls_detail;
    uint64_t *cls_seq;            /* chunk of the record (parallel folds) */
    size_t ncls, ccap;
    uint32_t *cls_table;
    size_t cmask;
    const uint64_t *seq;          /* a worker slot's fold: its chunk number */
    hscope_fingerprint_t *fp;     /* the dump's, made in the same pass; NULL
                                     unless HSCOPE_TALLY_FINGERPRINT */
    int skip_dumper;              /* HSCOPE_TALLY_SKIP_DUMPER */
    uint8_t *dsite;               /* per builder site: 0 not judged, 1 no, 2 dumper */
    size_t dcap;
    uint64_t excluded;
    int skip_tracer;              /* HSCOPE_TALLY_SKIP_TRACER */
    uint32_t tracer_str;          /* the tracer's struct name in b->strings, once seen */
    uint64_t tracer, tracer_mem;  /* the tracer left out */
} fold;

static size_t
hash_key(const gkey *k)
{
    uint64_t w[2] = { k->a, ((uint64_t)k->b << 32) | k->c };
    return (size_t)XXH3_64bits(w, sizeof(w));
}

static hscope_status
rehash_groups(fold *f, hscope_error *err)
{
    size_t nc = (f->mask + 1) * 2;
    uint32_t *t = hscope__calloc(f->mem, nc, sizeof(uint32_t));
    if (!t)
        return hscope__nomem(err, nc * 4);
    for (size_t g = 0; g < f->n; g++) {
        size_t s = hash_key(&f->keys[g]) & (nc - 1);
        while (t[s])
            s = (s + 1) & (nc - 1);
        t[s] = (uint32_t)(g + 1);
    }
    hscope__free(f->mem, f->table);
    f->table = t;
    f->mask = nc - 1;
    return HSCOPE_OK;
}

static hscope_status
add(fold *f, const gkey *k, uint64_t count, uint64_t memsize, hscope_error *err)
{
    size_t s = hash_key(k) & f->mask;
    uint32_t g;
    while ((g = f->table[s]) != 0) {
        const gkey *x = &f->keys[g - 1];
        if (x->a == k->a && x->b == k->b && x->c == k->c)
            break;
        s = (s + 1) & f->mask;
    }
    if (!g) {
        if (f->n == f->cap) {
            size_t c0 = f->cap;
            hscope_status st = hscope__grow(f->mem, (void **)&f->keys, &f->cap,
                                            f->n + 1, sizeof(gkey), err);
            if (st != HSCOPE_OK)
                return st;
            uint64_t *c = hscope__realloc(f->mem, f->count, f->cap * 8);
            if (!c) {
                f->cap = c0;
                return hscope__nomem(err, f->cap * 8);
            }
            f->count = c;
            uint64_t *m = hscope__realloc(f->mem, f->memsize, f->cap * 8);
            if (!m) {
                f->cap = c0;
                return hscope__nomem(err, f->cap * 8);
            }
            f->memsize = m;
        }
        f->keys[f->n] = *k;
        f->count[f->n] = 0;
        f->memsize[f->n] = 0;
        f->table[s] = g = (uint32_t)++f->n;
        if (f->n * 2 > f->mask + 1) {
            hscope_status st = rehash_groups(f, err);
            if (st != HSCOPE_OK)
                return st;
        }
    }
    f->count[g - 1] += count;
    f->memsize[g - 1] = hscope__sat_add(f->memsize[g - 1], memsize);
    return HSCOPE_OK;
}

/* class address -> detail string id (last record wins, as in the model:
 * the one of the latest chunk, and within a chunk the later one) */
static hscope_status
add_class(fold *f, uint64_t addr, uint32_t detail, uint64_t seq, hscope_error *err)
{
    hscope_status st;
    if (f->ncls * 2 >= f->cmask + 1) {
        size_t nc = (f->cmask + 1) * 2;
        uint32_t *t = hscope__calloc(f->mem, nc, sizeof(uint32_t));
        if (!t)
            return hscope__nomem(err, nc * 4);
        for (size_t i = 0; i < f->ncls; i++) {
            size_t s = (size_t)XXH3_64bits(&f->cls_addr[i], 8) & (nc - 1);
            while (t[s])
                s = (s + 1) & (nc - 1);
            t[s] = (uint32_t)(i + 1);
        }
        hscope__free(f->mem, f->cls_table);
        f->cls_table = t;
        f->cmask = nc - 1;
    }
    size_t s = (size_t)XXH3_64bits(&addr, 8) & f->cmask;
    uint32_t i;
    while ((i = f->cls_table[s]) != 0) {
        if (f->cls_addr[i - 1] == addr) {
            if (seq >= f->cls_seq[i - 1]) {
                f->cls_detail[i - 1] = detail;
                f->cls_seq[i - 1] = seq;
            }
            return HSCOPE_OK;
        }
        s = (s + 1) & f->cmask;
    }
    size_t c0 = f->ccap;
    if ((st = hscope__grow(f->mem, (void **)&f->cls_addr, &f->ccap, f->ncls + 1, 8,
                           err)) != HSCOPE_OK)
        return st;
    if (f->ccap != c0) {
        uint32_t *d = hscope__realloc(f->mem, f->cls_detail, f->ccap * 4);
        if (!d) {
            f->ccap = c0;
            return hscope__nomem(err, f->ccap * 4);
        }
        f->cls_detail = d;
        uint64_t *q = hscope__realloc(f->mem, f->cls_seq, f->ccap * 8);
        if (!q) {
            f->ccap = c0;
            return hscope__nomem(err, f->ccap * 8);
        }
        f->cls_seq = q;
    }
    f->cls_addr[f->ncls] = addr;
    f->cls_detail[f->ncls] = detail;
    f->cls_seq[f->ncls] = seq;
    f->cls_table[s] = (uint32_t)++f->ncls;
    return HSCOPE_OK;
}

static int
find_class(const fold *f, uint64_t addr, uint32_t *detail)
{
    size_t s = (size_t)XXH3_64bits(&addr, 8) & f->cmask;
    uint32_t i;
    while ((i = f->cls_table[s]) != 0) {
        if (f->cls_addr[i - 1] == addr) {
            *detail = f->cls_detail[i - 1];
            return 1;
        }
        s = (s + 1) & f->cmask;
    }
    return 0;
}

/* Whether a DATA object's struct name (string id d) is the allocation
 * tracer's: the name compared until seen, then its id. */
static int
is_tracer(fold *f, const hscope__builder *b, uint32_t d)
{
    if (f->tracer_str)
        return d == f->tracer_str;
    const char *s = hscope__intern_str(&b->strings, d);
    if (!s || strcmp(s, HSCOPE__TRACER_STRUCT) != 0)
        return 0;
    f->tracer_str = d;
    return 1;
}

static hscope_status
sink(void *ud, hscope__builder *b, const hscope__objrec *o, hscope_error *err)
{
    fold *f = ud;
    hscope_status st;
    if (f->fp)
        hscope__fp_add(f->fp, o->addr, o->type, o->gen);
    if (f->skip_dumper) {
        int dumper;
        if ((st = hscope__dumper_site(f->mem, &f->dsite, &f->dcap, &b->strings, b->site_file,
                                      b->site_method, o->site, &dumper, err)) != HSCOPE_OK)
            return st;
        if (dumper) {
            f->excluded++;
            return HSCOPE_OK;
        }
    }
    if (o->type == HSCOPE_TYPE_CLASS || o->type == HSCOPE_TYPE_MODULE ||
        o->type == HSCOPE_TYPE_ICLASS)
        if ((st = add_class(f, o->addr, o->detail, f->seq ? *f->seq : 0, err)) != HSCOPE_OK)
            return st;
    uint64_t cls = o->type == HSCOPE_TYPE_IMEMO ? IMEMO_BIT | o->detail : o->class_addr;
    if (o->type == HSCOPE_TYPE_DATA && o->detail && is_tracer(f, b, o->detail)) {
        if (f->skip_tracer) {
            f->tracer++;
            f->tracer_mem = hscope__sat_add(f->tracer_mem, o->memsize);
            return HSCOPE_OK;
        }
        cls = TRACER_KEY;
    }
    gkey k = { 0, 0, 0 };
    switch (f->tk) {
    case HSCOPE__TK_TYPE: k.a = o->type; break;
    case HSCOPE__TK_CLASS: k.a = cls; break;
    case HSCOPE__TK_FILE:
    case HSCOPE__TK_GEM: k.a = o->file; break;
    case HSCOPE__TK_FILE_LINE: k.a = o->file; k.b = o->line; break;
    case HSCOPE__TK_SITE: k.a = cls; k.b = o->file; k.c = o->line; break;
    case HSCOPE__TK_METHOD: k.a = o->method; break;
    case HSCOPE__TK_GENERATION: k.a = o->gen; break;
    default: break;
    }
    return add(f, &k, 1, o->memsize, err);
}

/* ------------------------------------------------------------------ */
/* on the parallel parser: one fold per worker slot, merged at the end */
/* ------------------------------------------------------------------ */

static void fold_free(fold *f);

static hscope_status
fold_init(fold *f, hscope__mem *mem, int tk, uint32_t flags)
{
    hscope_error e;
    hscope__error_init(&e);
    memset(f, 0, sizeof(*f));
    f->mem = mem;
    f->tk = tk;
    f->skip_dumper = (flags & HSCOPE_TALLY_SKIP_DUMPER) != 0;
    f->skip_tracer = (flags & HSCOPE_TALLY_SKIP_TRACER) != 0;
    f->table = hscope__calloc(mem, 1024, sizeof(uint32_t));
    f->cls_table = hscope__calloc(mem, 1024, sizeof(uint32_t));
    f->mask = f->cmask = 1023;
    if (!f->table || !f->cls_table ||
        ((flags & HSCOPE_TALLY_FINGERPRINT) && hscope__fp_new(&f->fp, mem, &e) != HSCOPE_OK))
        return HSCOPE_ERR_NOMEM;
    return HSCOPE_OK;
}

static void *
slot_new(void *ud, const uint64_t *seq)
{
    const fold *top = ud;
    fold *f = hscope__malloc(top->mem, sizeof(*f));
    if (!f)
        return NULL;
    uint32_t flags = (top->skip_dumper ? HSCOPE_TALLY_SKIP_DUMPER : 0) |
                     (top->skip_tracer ? HSCOPE_TALLY_SKIP_TRACER : 0) |
                     (top->fp ? HSCOPE_TALLY_FINGERPRINT : 0);
    if (fold_init(f, top->mem, top->tk, flags) != HSCOPE_OK) {
        fold_free(f);
        hscope__free(top->mem, f);
        return NULL;
    }
    f->seq = seq;
    return f;
}

static void
slot_free(void *slot_ud)
{
    fold *f = slot_ud;
    hscope__mem *mem = f->mem;
    fold_free(f);
    hscope__free(mem, f);
}

static uint32_t
remap(const uint32_t *smap, size_t nsmap, uint64_t id)
{
    return id < nsmap ? smap[id] : 0;
}

/* A slot's groups and class records, into the final fold, with the final
 * builder's string ids and type codes. */
static hscope_status
slot_merge(void *ud, void *slot_ud, const uint32_t *smap, size_t nsmap, const int *tmap,
           hscope_error *err)
{
    fold *top = ud;
    const fold *f = slot_ud;
    hscope_status st;
    if (top->fp)
        hscope__fp_merge(top->fp, f->fp);
    top->excluded += f->excluded;
    top->tracer += f->tracer;
    top->tracer_mem = hscope__sat_add(top->tracer_mem, f->tracer_mem);
    for (size_t i = 0; i < f->ncls; i++)
        if ((st = add_class(top, f->cls_addr[i], remap(smap, nsmap, f->cls_detail[i]),
                            f->cls_seq[i], err)) != HSCOPE_OK)
            return st;
    for (size_t g = 0; g < f->n; g++) {
        gkey k = f->keys[g];
        uint64_t cls = k.a;
        if ((f->tk == HSCOPE__TK_CLASS || f->tk == HSCOPE__TK_SITE) && (cls & IMEMO_BIT))
            cls = IMEMO_BIT | remap(smap, nsmap, (uint32_t)cls);
        switch (f->tk) {
        case HSCOPE__TK_TYPE: k.a = (uint64_t)tmap[k.a & 255]; break;
        case HSCOPE__TK_CLASS: k.a = cls; break;
        case HSCOPE__TK_FILE:
        case HSCOPE__TK_GEM:
        case HSCOPE__TK_FILE_LINE:
        case HSCOPE__TK_METHOD: k.a = remap(smap, nsmap, k.a); break;
        case HSCOPE__TK_SITE: k.a = cls; k.b = remap(smap, nsmap, k.b); break;
        default: break;
        }
        if ((st = add(top, &k, f->count[g], f->memsize[g], err)) != HSCOPE_OK)
            return st;
    }
    return HSCOPE_OK;
}

static const hscope__slot_sink fold_slots = { slot_new, sink, slot_merge, slot_free };

/* Text of a class key (docs/DESIGN.md label rule). */
static void
label(const fold *f, const hscope__builder *b, uint64_t cls, char *buf, size_t n)
{
    uint32_t d;
    if (cls == TRACER_KEY) {
        snprintf(buf, n, "%s", HSCOPE__TRACER_LABEL);
    } else if (cls & IMEMO_BIT) {
        const char *s = hscope__intern_str(&b->strings, (uint32_t)cls);
        snprintf(buf, n, "<imemo:%s>", s ? s : "?");
    } else if (!cls) {
        snprintf(buf, n, "<hidden>");
    } else if (!find_class(f, cls, &d)) {
        snprintf(buf, n, "<unknown>");
    } else {
        const char *s = hscope__intern_str(&b->strings, d);
        snprintf(buf, n, "%s", s ? s : "<anonymous>");
    }
}

/* Render every group's text and merge groups with equal text. */
static hscope_status
render_all(fold *f, const hscope__builder *b, hscope_tally_t *t, hscope_error *err)
{
    hscope__intern texts;
    hscope_status st = hscope__intern_init(&texts, f->mem, err);
    uint64_t *cnt = NULL, *mem = NULL;
    size_t cap = 0, cap2 = 0;
    char *buf = NULL, lbl[1024];
    size_t bcap = 0;
    if (st != HSCOPE_OK)
        return st;
    for (size_t g = 0; g < f->n; g++) {
        const gkey *k = &f->keys[g];
        const char *file = hscope__intern_str(&b->strings, (uint32_t)(f->tk == HSCOPE__TK_SITE ? k->b : k->a));
        if (!file)
            file = "(none)";
        size_t need = strlen(file) + sizeof(lbl) + 64;
        if ((st = hscope__grow(f->mem, (void **)&buf, &bcap, need, 1, err)) != HSCOPE_OK)
            goto out;
        size_t len;
        switch (f->tk) {
        case HSCOPE__TK_TYPE: {
            const char *tn = hscope__stream_type_name(b, k->a);
            len = (size_t)snprintf(buf, bcap, "%s", tn ? tn : "?");
            break;
        }
        case HSCOPE__TK_CLASS:
            label(f, b, k->a, lbl, sizeof(lbl));
            len = (size_t)snprintf(buf, bcap, "%s", lbl);
            break;
        case HSCOPE__TK_FILE:
        case HSCOPE__TK_METHOD:
            len = (size_t)snprintf(buf, bcap, "%s", file);
            break;
        case HSCOPE__TK_GEM: {
            const char *gm;
            size_t gl;
            if (k->a) {
                hscope__gem_of(file, &gm, &gl);
            } else {
                gm = "(none)";
                gl = 6;
            }
            len = (size_t)snprintf(buf, bcap, "%.*s", (int)gl, gm);
            break;
        }
        case HSCOPE__TK_FILE_LINE:
            len = (size_t)snprintf(buf, bcap, "%s:%u", file, k->b);
            break;
        case HSCOPE__TK_SITE:
            label(f, b, k->a, lbl, sizeof(lbl));
            len = (size_t)snprintf(buf, bcap, "%s:%u:%s", file, k->c, lbl);
            break;
        case HSCOPE__TK_GENERATION:
            if (k->a == HSCOPE__GEN_NONE)
                len = (size_t)snprintf(buf, bcap, "(none)");
            else
                len = (size_t)snprintf(buf, bcap, "%llu", (unsigned long long)k->a);
            break;
        default:
            len = 0;
        }
        if (len >= bcap)
            len = bcap - 1;
        uint32_t id;
        if ((st = hscope__intern_add(&texts, buf, len, &id, err)) != HSCOPE_OK)
            goto out;
        if (id >= cap) {
            size_t old = cap;
            if ((st = hscope__grow(f->mem, (void **)&cnt, &cap, id + 1, 8, err)) != HSCOPE_OK)
                goto out;
            memset(cnt + old, 0, (cap - old) * 8);
        }
        if (id >= cap2) {
            size_t old = cap2;
            if ((st = hscope__grow(f->mem, (void **)&mem, &cap2, id + 1, 8, err)) != HSCOPE_OK)
                goto out;
            memset(mem + old, 0, (cap2 - old) * 8);
        }
        cnt[id] += f->count[g];
        mem[id] = hscope__sat_add(mem[id], f->memsize[g]);
    }
    for (uint32_t id = 1; id < texts.count; id++)
        if ((st = hscope__tally_add(t, hscope__intern_str(&texts, id),
                                    hscope__intern_len(&texts, id), cnt[id], mem[id],
                                    err)) != HSCOPE_OK)
            goto out;
out:
    hscope__free(f->mem, buf);
    hscope__free(f->mem, cnt);
    hscope__free(f->mem, mem);
    hscope__intern_free(&texts);
    return st;
}

static void
fold_free(fold *f)
{
    void *p[] = { f->keys, f->count, f->memsize, f->table, f->cls_addr,
                  f->cls_detail, f->cls_seq, f->cls_table, f->dsite };
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        hscope__free(f->mem, p[i]);
    hscope__fingerprint_free(f->fp);
    f->fp = NULL;
}

/* What the pass saw, for hscope__tally_stats(); the fingerprint moves to
 * the tally. */
static void
source_stats(hscope_tally_t *t, const hscope__builder *b, fold *f, uint64_t in_bytes,
             int gz, uint64_t ns)
{
    hscope_load_stats s;
    hscope__stream_stats(b, in_bytes, gz, ns, &s);
    hscope__tally_set_source(t, &s, b->skipped, f->fp, f->excluded);
    hscope__tally_set_tracer(t, f->tracer, f->tracer_mem);
    f->fp = NULL;
}

/* The fold f of the dump at `path`, read by b, as a tally: rows rendered,
 * sorted by o, with the pass's statistics and the fingerprint (taken
 * over). */
static hscope_status
fold_tally(fold *f, const hscope__builder *b, const char *key, const hscope_allocator *a,
           const hscope_tally_options *o, const char *path, uint64_t in_bytes, int gz,
           uint64_t ns, hscope_tally_t **out, hscope_error *err)
{
    hscope_tally_t *t = NULL;
    hscope_status st = hscope__tally_new(&t, a, err);
    if (st != HSCOPE_OK)
        return st;
    hscope__tally_set_by(t, key);
    if ((st = render_all(f, b, t, err)) != HSCOPE_OK) {
        hscope__tally_free(t);
        return st;
    }
    hscope__tally_finish(t, o->sort, o->top);
    if (f->fp) {
        hscope__fp_finish(f->fp, path);
        f->fp->partial = b->streamed && b->root_records == 0;
    }
    source_stats(t, b, f, in_bytes, gz, ns);
    *out = t;
    return HSCOPE_OK;
}

/* What a fold can count: the flags it knows, a known key (*tk its code). */
static hscope_status
fold_args(const char *key, uint32_t flags, int *tk, hscope_error *err)
{
    if (flags & HSCOPE_TALLY_FIELDS_WITH_OWNER)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "counting fields objects with their owners needs the loaded heap: "
                            "an owner can come after its fields object in the dump");
    if (flags & ~(uint32_t)(HSCOPE_TALLY_SKIP_DUMPER | HSCOPE_TALLY_FINGERPRINT |
                            HSCOPE_TALLY_SKIP_TRACER))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown tally flags 0x%x", flags);
    if ((*tk = hscope__tally_key(key)) < 0)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown tally key \"%s\"", key);
    return HSCOPE_OK;
}

hscope_status
hscope__tally_file(hscope_tally_t **out, const char *path, const char *key,
                   const hscope_load_options *lo, const hscope_tally_options *uopts,
                   hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st;
    hscope__mem mem;
    hscope__builder b;
    fold f;
    hscope_tally_t *t = NULL;
    int have_b = 0;
    memset(&f, 0, sizeof(f));
    memset(&b, 0, sizeof(b));
    hscope_tally_options o;
    hscope__tally_options_init(&o);
    if (!out || !path || !key) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "NULL argument");
        goto done;
    }
    *out = NULL;
    hscope_load_options lopts;
    if ((st = hscope__read_load_options(lo, &lopts, &err)) != HSCOPE_OK)
        goto done;
    lo = &lopts;
    if (uopts) {
        if (uopts->size < 2 * sizeof(uint32_t) ||
            !hscope__tail_is_zero(uopts, uopts->size, sizeof(o))) {
            st = hscope__fail(&err, uopts->size < 8 ? HSCOPE_ERR_INVALID_ARG
                                                    : HSCOPE_ERR_UNSUPPORTED,
                              "bad hscope_tally_options (size %u)", uopts->size);
            goto done;
        }
        memcpy(&o, uopts, uopts->size < sizeof(o) ? uopts->size : sizeof(o));
    }
    if ((st = fold_args(key, o.flags, &f.tk, &err)) != HSCOPE_OK)
        goto done;
    hscope__mem_init(&mem, lo ? lo->allocator : NULL, lo ? lo->max_memory : 0);
    int tk = f.tk;
    if (fold_init(&f, &mem, tk, o.flags) != HSCOPE_OK) {
        st = hscope__nomem(&err, 4096);
        goto done;
    }
    have_b = 1; /* a half-made builder is freed too */
    uint64_t in_bytes = 0, t0 = hscope__now_ns();
    int gz = 0;
    /* on the parallel parser: folded on the workers (fold_slots) */
    hscope__stream_sinks ss = { sink, NULL, &fold_slots, &f, 0 };
    if ((st = hscope__heap_stream(&b, &mem, path, lo, &ss, &in_bytes, &gz, &err)) != HSCOPE_OK)
        goto done;
    st = fold_tally(&f, &b, key, lo ? lo->allocator : NULL, &o, path, in_bytes, gz,
                    hscope__now_ns() - t0, &t, &err);
done:
    if (have_b)
        hscope__heap_stream_end(&b);
    fold_free(&f);
    if (st != HSCOPE_OK) {
        hscope__tally_free(t);
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    *out = t;
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* a fold riding another pass over a dump (tally.h)                    */
/* ------------------------------------------------------------------ */

struct hscope__fold {
    hscope__mem mem;
    const hscope_allocator *alloc;
    hscope_tally_options o;
    const char *key;
    fold f;
};

hscope_status
hscope__fold_new(hscope__fold **out, const hscope_allocator *a, const char *key,
                 const hscope_tally_options *o, hscope_error *err)
{
    int tk;
    hscope_status st = fold_args(key, o->flags, &tk, err);
    if (st != HSCOPE_OK)
        return st;
    hscope__mem m;
    hscope__mem_init(&m, a, 0);
    hscope__fold *r = hscope__calloc(&m, 1, sizeof(*r));
    if (!r)
        return hscope__nomem(err, sizeof(*r));
    r->mem = m;
    r->alloc = a;
    r->o = *o;
    r->key = hscope__tally_key_name(key);
    if (fold_init(&r->f, &r->mem, tk, o->flags) != HSCOPE_OK) {
        hscope__fold_free(r);
        return hscope__nomem(err, 4096);
    }
    *out = r;
    return HSCOPE_OK;
}

hscope_status
hscope__fold_sink(void *ud, hscope__builder *b, const hscope__objrec *o, hscope_error *err)
{
    hscope__fold *r = ud;
    return sink(&r->f, b, o, err);
}

hscope_status
hscope__fold_finish(hscope__fold *r, const hscope__builder *b, const char *path,
                    uint64_t in_bytes, int gz, uint64_t ns, hscope_tally_t **out,
                    hscope_error *err)
{
    return fold_tally(&r->f, b, r->key, r->alloc, &r->o, path, in_bytes, gz, ns, out, err);
}

void
hscope__fold_free(hscope__fold *r)
{
    if (!r)
        return;
    fold_free(&r->f);
    hscope__mem m = r->mem;
    hscope__free(&m, r);
}
