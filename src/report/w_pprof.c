/*
 * w_pprof.c - a loaded heap as a pprof profile (profile.proto, gzipped),
 * what continuous profilers (Pyroscope, Parca, Cloud Profiler, Datadog)
 * and `go tool pprof` read: in-use objects and bytes by allocation site.
 *
 * Sample types inuse_objects/count and inuse_space/bytes (the names of
 * Go's heap profiles, so every pprof tool picks its defaults; the default
 * sample type is inuse_space).  One sample per allocation site, class
 * label and type, with one location: a location per (file, line,
 * method), its function named by the method where the dump has one (else
 * "file:line"), with the file as the function's file name; objects without
 * allocation info under one "(no allocation info)" location.  The method
 * is part of the location's identity: one line can allocate in two
 * methods (`a.join` and `Comment.new` in one expression), and a location
 * per file:line named after whichever method came first in the dump's
 * site order would attribute all of the line's objects to that method,
 * a different one from one dump to the next, so `pprof -diff_base` would
 * show one method's objects vanish and the other's appear.  String labels class,
 * type, gem (of the file, as `tally --by gem`) and generation.  The
 * generation varies per object: splitting samples by it too would give a
 * profiler a label of unbounded cardinality (a cache filled over hours
 * has a generation per entry), so a sample's generation is its most
 * common one (ties: the oldest), and "generations" counts the distinct
 * ones.  The dumper's objects are left out, as in every report
 * (docs/DESIGN.md), and said in the profile's comments.
 *
 * Memory: one table entry per distinct (site, class, type, generation),
 * nothing per object.  Top-level fields are streamed through deflate
 * (protobuf lets fields come in any order; the string table goes last).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pb.h"
#include "../model/model.h"
#include "../analysis/origin.h"
#include "out.h"
#include "writers.h"

/* an object without a generation (the builder's HSCOPE__GEN_NONE) */
#define GEN_NONE UINT32_MAX

/* profile.proto field numbers */
enum { P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5,
       P_STRING_TABLE = 6, P_TIME_NANOS = 9, P_COMMENT = 13, P_DEFAULT_SAMPLE_TYPE = 14 };

/* ------------------------------------------------------------------ */
/* a table of four 32-bit keys                                         */
/* ------------------------------------------------------------------ */

typedef struct ent {
    uint32_t k[4];
    uint64_t count, bytes;
    uint32_t id;        /* locations and functions: the 1-based id */
} ent;

typedef struct tab {
    hscope__mem *m;
    ent *e;
    size_t n, cap;
    uint32_t *slot;     /* entry index + 1, or 0 */
    size_t mask;
} tab;

static size_t
hash4(const uint32_t k[4])
{
    uint64_t h = k[0] * 0x9E3779B97F4A7C15ull;
    h ^= (k[1] + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= (k[2] + 0x85EBCA77C2B2AE63ull) * 0x165667B19E3779F9ull;
    h ^= (k[3] + 0x27D4EB2F165667C5ull) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    return (size_t)(h ^ (h >> 29));
}

static hscope_status
tab_rehash(tab *t, size_t nslots, hscope_error *err)
{
    uint32_t *s = hscope__calloc(t->m, nslots, sizeof(uint32_t));
    if (!s)
        return hscope__nomem(err, nslots * sizeof(uint32_t));
    hscope__free(t->m, t->slot);
    t->slot = s;
    t->mask = nslots - 1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = hash4(t->e[i].k) & t->mask;
        while (s[j])
            j = (j + 1) & t->mask;
        s[j] = (uint32_t)i + 1;
    }
    return HSCOPE_OK;
}

/* The entry of key k, added (zeroed) if new: its index in *at, *added 1
 * when new. */
static hscope_status
tab_get(tab *t, const uint32_t k[4], size_t *at, int *added, hscope_error *err)
{
    hscope_status st;
    if (!t->slot || (t->n + 1) * 2 > t->mask + 1) {
        if ((st = tab_rehash(t, t->slot ? (t->mask + 1) * 2 : 1024, err)) != HSCOPE_OK)
            return st;
    }
    size_t j = hash4(k) & t->mask;
    for (; t->slot[j]; j = (j + 1) & t->mask) {
        ent *e = &t->e[t->slot[j] - 1];
        if (memcmp(e->k, k, sizeof(e->k)) == 0) {
            *at = t->slot[j] - 1;
            *added = 0;
            return HSCOPE_OK;
        }
    }
    if (t->n >= UINT32_MAX - 1)
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "pprof: too many distinct samples");
    if ((st = hscope__grow(t->m, (void **)&t->e, &t->cap, t->n + 1, sizeof(ent), err)) != HSCOPE_OK)
        return st;
    memset(&t->e[t->n], 0, sizeof(ent));
    memcpy(t->e[t->n].k, k, sizeof(t->e[t->n].k));
    t->slot[j] = (uint32_t)t->n + 1;
    *at = t->n++;
    *added = 1;
    return HSCOPE_OK;
}

static void
tab_free(tab *t)
{
    hscope__free(t->m, t->e);
    hscope__free(t->m, t->slot);
    memset(t, 0, sizeof(*t));
}

/* ------------------------------------------------------------------ */
/* the writer's state                                                  */
/* ------------------------------------------------------------------ */

typedef struct pp {
    const hscope_heap_t *h;
    const hscope__ropts *ro;
    int64_t time_ns;
    hscope__mem *m;
    hscope_error *err;
    uint8_t *dumper;          /* per site: 1 the dumper's */
    uint64_t excluded, excluded_bytes, untraced;
    uint64_t tracer, tracer_bytes;  /* Ruby's allocation tracer, left out */
    tab objs;                 /* (site, label, type, generation) */
    tab locs;                 /* (file, line, method) -> location */
    tab funcs;                /* (kind, method or file, file or line) */
    hscope__intern strs;      /* the string table (id = index; 0 "") */
    int strs_init;
    hscope__pb top, sub, lab; /* the profile's pending bytes, a message */
    z_stream z;
    int z_init;
    hscope__out *o;
    uint8_t zbuf[1 << 16];
} pp;

/* Index of string s[0..n) in the string table ("" is 0). */
static uint32_t
sid(pp *p, const char *s, size_t n)
{
    uint32_t id = 0;
    if (!s || !n)
        return 0;
    if (hscope__intern_add(&p->strs, s, n, &id, p->err) != HSCOPE_OK)
        p->top.failed = 1;
    return id;
}

static uint32_t
sidz(pp *p, const char *s)
{
    return s ? sid(p, s, strlen(s)) : 0;
}

/* Deflate what is pending (all of it with `finish`). */
static hscope_status
pump(pp *p, int finish)
{
    if (p->top.failed || p->sub.failed || p->lab.failed)
        return hscope__nomem(p->err, p->top.cap + p->sub.cap + p->lab.cap);
    p->z.next_in = p->top.p;
    p->z.avail_in = (uInt)p->top.len;
    int zr;
    do {
        p->z.next_out = p->zbuf;
        p->z.avail_out = sizeof(p->zbuf);
        zr = deflate(&p->z, finish ? Z_FINISH : Z_NO_FLUSH);
        if (zr == Z_STREAM_ERROR)
            return hscope__fail(p->err, HSCOPE_ERR_INTERNAL, "pprof: deflate failed");
        hscope__out_write(p->o, (const char *)p->zbuf, sizeof(p->zbuf) - p->z.avail_out);
    } while (p->z.avail_out == 0 || (finish && zr != Z_STREAM_END));
    p->top.len = 0;
    return p->o->status;
}

static hscope_status
maybe_pump(pp *p)
{
    return p->top.len >= (1u << 16) || p->top.failed ? pump(p, 0) : HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* the objects, grouped                                                */
/* ------------------------------------------------------------------ */

static hscope_status
judge_sites(pp *p)
{
    const hscope_heap_t *h = p->h;
    size_t ns = h->nsites ? h->nsites : 1;
    if (!(p->dumper = hscope__calloc(p->m, ns, 1)))
        return hscope__nomem(p->err, ns);
    for (size_t s = 1; s < h->nsites; s++)
        p->dumper[s] = (uint8_t)hscope__is_dumper(hscope__intern_str(&h->strings, h->site_file[s]),
                                                  hscope__intern_str(&h->strings, h->site_method[s]));
    return HSCOPE_OK;
}

static hscope_status
group_objects(pp *p)
{
    const hscope_heap_t *h = p->h;
    hscope_status st = judge_sites(p);
    uint32_t last[4] = { UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX };
    size_t at = 0;
    for (uint32_t i = 0; st == HSCOPE_OK && i < h->n; i++) {
        uint32_t s = h->site[i];
        uint64_t mem = hscope__memsize(h, i);
        if (p->dumper[s]) {
            p->excluded++;
            p->excluded_bytes += mem;
            continue;
        }
        if (hscope__is_tracer(h, i)) { /* instrumentation, not the app's memory */
            p->tracer++;
            p->tracer_bytes += mem;
            continue;
        }
        if (!s || !h->site_file[s])
            p->untraced++;
        uint32_t k[4] = { s && h->site_file[s] ? s : 0, hscope__label(h, i), h->type[i], h->gen[i] };
        int added;
        if (memcmp(k, last, sizeof(k)) != 0) {
            if ((st = tab_get(&p->objs, k, &at, &added, p->err)) != HSCOPE_OK)
                break;
            memcpy(last, k, sizeof(k));
        }
        p->objs.e[at].count++;
        p->objs.e[at].bytes += mem;
    }
    return st;
}

static int
cmp_ent(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    for (int i = 0; i < 4; i++)
        if (x->k[i] != y->k[i])
            return x->k[i] < y->k[i] ? -1 : 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* locations and functions                                             */
/* ------------------------------------------------------------------ */

/* The location of site s (0: no allocation info), made on first use: one
 * per (file, line, method), the same identity in every dump. */
static hscope_status
location_of(pp *p, uint32_t s, uint32_t *loc)
{
    const hscope_heap_t *h = p->h;
    uint32_t k[4] = { s ? h->site_file[s] : 0, s ? h->site_line[s] : 0,
                      s ? h->site_method[s] : 0, 0 };
    size_t at;
    int added;
    hscope_status st = tab_get(&p->locs, k, &at, &added, p->err);
    if (st != HSCOPE_OK)
        return st;
    if (added)
        p->locs.e[at].id = (uint32_t)p->locs.n;
    *loc = p->locs.e[at].id;
    return HSCOPE_OK;
}

/* Function of location e: by method and file when the dump has a
 * method, else one per file:line (named so). */
static hscope_status
function_of(pp *p, const ent *loc, uint32_t *fn)
{
    uint32_t file = loc->k[0], line = loc->k[1], method = loc->k[2];
    uint32_t k[4] = { method ? 1 : 2, method ? method : file, method ? file : line, 0 };
    size_t at;
    int added;
    hscope_status st = tab_get(&p->funcs, k, &at, &added, p->err);
    if (st != HSCOPE_OK)
        return st;
    if (added)
        p->funcs.e[at].id = (uint32_t)p->funcs.n;
    *fn = p->funcs.e[at].id;
    return HSCOPE_OK;
}

static void
write_function(pp *p, const ent *f)
{
    const hscope_heap_t *h = p->h;
    uint32_t name, file;
    if (f->k[0] == 1) {
        name = sidz(p, hscope__intern_str(&h->strings, f->k[1]));
        file = sidz(p, hscope__intern_str(&h->strings, f->k[2]));
    } else if (f->k[1]) {
        const char *fs = hscope__intern_str(&h->strings, f->k[1]);
        size_t n = strlen(fs) + 16;
        char *b = hscope__malloc(p->m, n);
        if (!b) {
            p->top.failed = 1;
            return;
        }
        snprintf(b, n, "%s:%u", fs, f->k[2]);
        name = sidz(p, b);
        hscope__free(p->m, b);
        file = sidz(p, fs);
    } else {
        name = sidz(p, "(no allocation info)");
        file = 0;
    }
    /* no system_name (field 3): pprof takes a name equal to its system
     * name for possibly demangled C++ and strips "<...>" from it, which
     * leaves Ruby's `<=>` nameless; a name with another (here empty)
     * system name is kept as is. */
    p->sub.len = 0;
    hscope__pb_u64(&p->sub, 1, f->id);
    hscope__pb_u64(&p->sub, 2, name);
    hscope__pb_u64(&p->sub, 4, file);
    hscope__pb_msg(&p->top, P_FUNCTION, &p->sub);
}

/* Mapping 1 (every location's: the profile has functions, files and lines,
 * so no tool tries to symbolize it), the locations, the functions. */
static hscope_status
write_places(pp *p)
{
    hscope_status st = HSCOPE_OK;
    p->sub.len = 0;
    hscope__pb_u64(&p->sub, 1, 1);
    hscope__pb_u64(&p->sub, 5, sidz(p, "ruby"));
    for (uint32_t f = 7; f <= 9; f++)
        hscope__pb_u64(&p->sub, f, 1); /* has_functions, filenames, line numbers */
    hscope__pb_msg(&p->top, P_MAPPING, &p->sub);
    for (size_t i = 0; i < p->locs.n && st == HSCOPE_OK; i++) {
        const ent *l = &p->locs.e[i];
        uint32_t fn = 0;
        if ((st = function_of(p, l, &fn)) != HSCOPE_OK)
            break;
        p->lab.len = 0;
        hscope__pb_u64(&p->lab, 1, fn);
        hscope__pb_u64(&p->lab, 2, l->k[1]);
        p->sub.len = 0;
        hscope__pb_u64(&p->sub, 1, l->id);
        hscope__pb_u64(&p->sub, 2, 1);
        hscope__pb_msg(&p->sub, 4, &p->lab);
        hscope__pb_msg(&p->top, P_LOCATION, &p->sub);
        st = maybe_pump(p);
    }
    for (size_t i = 0; i < p->funcs.n && st == HSCOPE_OK; i++) {
        write_function(p, &p->funcs.e[i]);
        st = maybe_pump(p);
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* samples                                                             */
/* ------------------------------------------------------------------ */

static void
label(pp *p, const char *key, const char *val, size_t n)
{
    p->lab.len = 0;
    hscope__pb_u64(&p->lab, 1, sidz(p, key));
    hscope__pb_u64(&p->lab, 2, sid(p, val, n));
    hscope__pb_msg(&p->sub, 3, &p->lab);
}

/* The sample of objs.e[a..b) (one site, label and type; generations
 * ascending). */
static hscope_status
write_sample(pp *p, size_t a, size_t b)
{
    const hscope_heap_t *h = p->h;
    const ent *e = p->objs.e;
    uint64_t v[2] = { 0, 0 }, best = 0, ngen = 0;
    uint32_t gen = GEN_NONE;
    for (size_t i = a; i < b; i++) {
        v[0] += e[i].count;
        v[1] += e[i].bytes;
        if (e[i].k[3] == GEN_NONE)
            continue;
        ngen++;
        if (e[i].count > best) {
            best = e[i].count;
            gen = e[i].k[3];
        }
    }
    uint32_t s = e[a].k[0], loc = 0;
    hscope_status st = location_of(p, s, &loc);
    if (st != HSCOPE_OK)
        return st;
    uint64_t l64 = loc;
    p->sub.len = 0;
    hscope__pb_packed(&p->sub, 1, &l64, 1);
    hscope__pb_packed(&p->sub, 2, v, 2);
    const char *cls = hscope__intern_str(&h->strings, e[a].k[1]);
    label(p, "class", cls ? cls : "(none)", cls ? hscope__intern_len(&h->strings, e[a].k[1]) : 6);
    const char *ty = hscope__heap_type_name(h, (int32_t)e[a].k[2]);
    label(p, "type", ty, strlen(ty));
    if (s) {
        const char *g;
        size_t gn;
        hscope__gem_of(hscope__intern_str(&h->strings, h->site_file[s]), &g, &gn);
        label(p, "gem", g, gn);
    }
    if (ngen) {
        char num[24];
        snprintf(num, sizeof(num), "%u", gen);
        label(p, "generation", num, strlen(num));
        snprintf(num, sizeof(num), "%llu", (unsigned long long)ngen);
        label(p, "generations", num, strlen(num));
    }
    hscope__pb_msg(&p->top, P_SAMPLE, &p->sub);
    return maybe_pump(p);
}

static hscope_status
write_samples(pp *p)
{
    ent *e = p->objs.e;
    if (p->objs.n)
        qsort(e, p->objs.n, sizeof(ent), cmp_ent);
    hscope_status st = HSCOPE_OK;
    for (size_t a = 0, b; a < p->objs.n && st == HSCOPE_OK; a = b) {
        for (b = a + 1; b < p->objs.n && memcmp(e[a].k, e[b].k, 3 * sizeof(uint32_t)) == 0; b++)
            ;
        st = write_sample(p, a, b);
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* the profile                                                         */
/* ------------------------------------------------------------------ */

static void
comment(pp *p, const char *fmt, ...) HS_PRINTF(2, 3);

static void
comment(pp *p, const char *fmt, ...)
{
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof(b), fmt, ap);
    va_end(ap);
    hscope__pb_u64(&p->top, P_COMMENT, sidz(p, b));
}

static void
write_head(pp *p)
{
    static const char *const types[2][2] = { { "inuse_objects", "count" },
                                             { "inuse_space", "bytes" } };
    for (int t = 0; t < 2; t++) {
        p->sub.len = 0;
        hscope__pb_u64(&p->sub, 1, sidz(p, types[t][0]));
        hscope__pb_u64(&p->sub, 2, sidz(p, types[t][1]));
        hscope__pb_msg(&p->top, P_SAMPLE_TYPE, &p->sub);
    }
    hscope__pb_u64(&p->top, P_DEFAULT_SAMPLE_TYPE, sidz(p, "inuse_space"));
    if (p->time_ns > 0)
        hscope__pb_i64(&p->top, P_TIME_NANOS, p->time_ns);
    const char *name = hscope__ropts_dump_name(p->ro, 0);
    comment(p, "heapscope %s: in-use objects and bytes of a Ruby heap dump%s%s, by allocation "
               "site and class", HSCOPE_VERSION_STRING, name ? " " : "", name ? name : "");
    comment(p, "left out: %llu objects (%llu bytes) the dumper allocated (ObjectSpace.dump_all, "
               "objspace.rb and its allocation tracer, heapscope's snapshot code), as in every "
               "heapscope report", (unsigned long long)p->excluded,
            (unsigned long long)p->excluded_bytes);
    if (p->tracer)
        comment(p, "left out: Ruby's allocation tracer (trace_object_allocations), %llu "
                   "object(s), %llu bytes: instrumentation, as in every heapscope report",
                (unsigned long long)p->tracer, (unsigned long long)p->tracer_bytes);
    if (p->untraced)
        comment(p, "%llu objects have no allocation info (allocated before "
                   "ObjectSpace.trace_object_allocations_start, or by C code): one location "
                   "\"(no allocation info)\"", (unsigned long long)p->untraced);
    comment(p, "labels: class, type, gem; generation is the most common GC generation of the "
               "sample's objects (ties: the oldest), generations how many there are");
}

static void
write_strings(pp *p)
{
    hscope__pb_bytes(&p->top, P_STRING_TABLE, "", 0);
    for (size_t k = 1; k < p->strs.count; k++)
        hscope__pb_bytes(&p->top, P_STRING_TABLE, hscope__intern_str(&p->strs, (uint32_t)k),
                         hscope__intern_len(&p->strs, (uint32_t)k));
}

static hscope_status
pprof_body(pp *p)
{
    hscope_status st = group_objects(p);
    if (st != HSCOPE_OK)
        return st;
    if (deflateInit2(&p->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return hscope__nomem(p->err, sizeof(p->z));
    p->z_init = 1;
    write_head(p);
    if ((st = write_samples(p)) == HSCOPE_OK && (st = write_places(p)) == HSCOPE_OK) {
        write_strings(p);
        st = pump(p, 1);
    }
    return st;
}

hscope_status
hscope__pprof_write(const hscope_heap_t *h, int64_t time_ns, const hscope__ropts *ro,
                    hscope__out *o, hscope_error *err)
{
    hscope__mem *m = (hscope__mem *)&h->mem;
    pp *p = hscope__calloc(m, 1, sizeof(*p));
    if (!p)
        return hscope__nomem(err, sizeof(*p));
    p->h = h;
    p->ro = ro;
    p->time_ns = time_ns;
    p->m = m;
    p->err = err;
    p->o = o;
    p->objs.m = p->locs.m = p->funcs.m = m;
    hscope__pb_init(&p->top, m);
    hscope__pb_init(&p->sub, m);
    hscope__pb_init(&p->lab, m);
    hscope_status st = hscope__intern_init(&p->strs, m, err);
    if (st == HSCOPE_OK) {
        p->strs_init = 1;
        st = pprof_body(p);
    }
    if (p->z_init)
        deflateEnd(&p->z);
    if (p->strs_init)
        hscope__intern_free(&p->strs);
    hscope__pb_free(&p->top);
    hscope__pb_free(&p->sub);
    hscope__pb_free(&p->lab);
    tab_free(&p->objs);
    tab_free(&p->locs);
    tab_free(&p->funcs);
    hscope__free(m, p->dumper);
    hscope__free(m, p);
    return st;
}
