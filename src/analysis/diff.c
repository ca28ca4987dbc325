/*
 * diff.c - the 3-snapshot (and 2-snapshot) leak diff.
 *
 * One heap is the target (C, or B in the 2-snapshot form); the other
 * dumps are "bases" whose objects mark target objects with the same
 * identity in a bitmap.  Bases are either loaded heaps or streamed dumps
 * (parser in sink mode: nothing but a bitmap and the string maps is kept),
 * so a diff of three 1 GB dumps holds one model in memory.
 *
 * Identity (docs/DESIGN.md): address and type agree; if both records carry a
 * generation, generation and allocation file:line agree too; if neither
 * does, the class address agrees.  A record with a generation and one
 * without are different objects.  Stronger than all of that, Ruby 4.0+
 * records the object_id of objects whose id was asked for: a base record
 * with one is the target object with the same id, wherever it lies (moved
 * by compaction), and no other (an id is never dropped, so a target object
 * at its address without that id is a new object).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "diff.h"
#include "origin.h"
#include "series.h"
#include "tally.h"
#include "../index/index.h"

#define MISSING 0xFFFFFFFFu

struct hscope_diff {
    hscope_heap_t *heap;
    uint32_t *ids;
    size_t n;
    uint64_t memsize, excluded, reused, untraced;
    uint64_t tracer, tracer_mem;  /* the allocation tracer left out */
    uint64_t oid_matches, moved;  /* in the pass of the dump before the target */
    uint64_t snap[3];
    uint32_t ndumps;        /* 2 or 3 */
    uint32_t warn;
    char text[2048];
    /* the warning bit of each line of text (lines beyond the table: 0) */
    uint32_t codes[HSCOPE__DIFF_MAX_WARNINGS];
    uint32_t ncodes;
    _Atomic int32_t refs;   /* the handle + hscope_suspects_t holding it */
    char notes[512];
};

/* Maps string ids of one interner to the target's (MISSING if absent). */
typedef struct strmap {
    hscope__mem *mem;
    const hscope__intern *to;
    uint32_t *m;       /* m[id] = target id + 1, 0 = not looked up yet */
    size_t cap;
} strmap;

static hscope_status
map_str(strmap *sm, const hscope__intern *from, uint32_t id, uint32_t *out,
        hscope_error *err)
{
    if (id == 0) {
        *out = 0;
        return HSCOPE_OK;
    }
    if (id >= sm->cap) {
        size_t old = sm->cap;
        hscope_status st = hscope__grow(sm->mem, (void **)&sm->m, &sm->cap, id + 1,
                                        sizeof(uint32_t), err);
        if (st != HSCOPE_OK)
            return st;
        memset(sm->m + old, 0, (sm->cap - old) * sizeof(uint32_t));
    }
    if (!sm->m[id]) {
        uint32_t t = hscope__intern_find(sm->to, hscope__intern_str(from, id),
                                         hscope__intern_len(from, id));
        sm->m[id] = t ? t + 1 : MISSING;
    }
    *out = sm->m[id] == MISSING ? MISSING : sm->m[id] - 1;
    return HSCOPE_OK;
}

#define QN 32 /* records looked up together (prefetching the index) */

typedef struct qrec {
    uint64_t addr, cls;
    uint32_t gen, file, line;
    uint16_t flags;
    uint8_t type;
} qrec;

/* The target's objects with an object_id, sorted by it. */
typedef struct oidmap {
    uint64_t *oid;
    uint32_t *id;
    size_t n;
} oidmap;

/* One marking pass: base records against the target. */
typedef struct pass {
    qrec q[QN];
    uint64_t qaddr[QN];
    size_t nq;
    const hscope__intern *qstr;
    hscope_heap_t *t;           /* target */
    uint64_t *bits;             /* target ids with a same-identity record */
    strmap files;
    const char (*base_types)[24];
    int address_only, count_reuse;
    uint64_t reused, objects, traced, pinned, oid_matches, moved;
    const oidmap *oids;         /* the target's, or NULL (none, or address_only) */
    hscope_fingerprint_t *fp;   /* the base's, for the series checks */
} pass;

static uint64_t
class_address(const hscope_heap_t *h, uint32_t id)
{
    return hscope__class_addr(h, id);
}

static int
same_type(const pass *p, uint32_t tid, int btype)
{
    int tt = p->t->type[tid];
    if (tt < 32 || btype < 32)
        return tt == btype;
    return strcmp(p->t->type_names[tt], p->base_types[btype]) == 0;
}

/* Compare a base record with target object tid. */
static hscope_status
visit(pass *p, const hscope__intern *bstr, uint32_t tid, int type, uint32_t gen,
      uint32_t file, uint32_t line, uint64_t cls, uint16_t flags,
      hscope_error *err)
{
    p->objects++;
    p->traced += gen != HSCOPE__GEN_NONE;
    p->pinned += (flags & HSCOPE_FLAG_PINNED) != 0;
    if (tid == HSCOPE_ID_NONE)
        return HSCOPE_OK;
    int same = 1;
    if (!p->address_only) {
        uint32_t tgen = p->t->gen[tid];
        same = same_type(p, tid, type) && (tgen == HSCOPE__GEN_NONE) == (gen == HSCOPE__GEN_NONE);
        if (same && gen != HSCOPE__GEN_NONE) {
            uint32_t site = p->t->site[tid], mf;
            hscope_status st = map_str(&p->files, bstr, file, &mf, err);
            if (st != HSCOPE_OK)
                return st;
            same = tgen == gen && p->t->site_file[site] == mf && p->t->site_line[site] == line;
        } else if (same) {
            same = class_address(p->t, tid) == cls;
        }
    }
    if (same)
        p->bits[tid / 64] |= (uint64_t)1 << (tid % 64);
    else
        p->reused++;
    return HSCOPE_OK;
}

/* The target object whose object_id is oid, or HSCOPE_ID_NONE. */
static uint32_t
oid_target(const oidmap *m, uint64_t oid)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->oid[mid] < oid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->oid[lo] == oid ? m->id[lo] : HSCOPE_ID_NONE;
}

/* A base record with an object_id, against a target that has some: the
 * id decides.  The object at the record's address, if any, is another
 * object unless it is the one with that id.  Few records have one: they
 * skip the queue (and its batched address lookups). */
static void
visit_oid(pass *p, uint64_t addr, int type, uint32_t gen, uint16_t flags, uint64_t oid)
{
    p->objects++;
    p->traced += gen != HSCOPE__GEN_NONE;
    p->pinned += (flags & HSCOPE_FLAG_PINNED) != 0;
    uint32_t same = oid_target(p->oids, oid), tid = hscope__index_find(p->t, addr);
    if (same != HSCOPE_ID_NONE && same_type(p, same, type)) {
        p->bits[same / 64] |= (uint64_t)1 << (same % 64);
        p->oid_matches++;
        p->moved += p->t->addr[same] != addr;
    }
    if (tid != HSCOPE_ID_NONE && tid != same)
        p->reused++;
}

/* Look up the queued records' addresses together, then compare each. */
static hscope_status
flush(pass *p, hscope_error *err)
{
    uint32_t tid[QN];
    hscope__index_find_batch(p->t, p->qaddr, tid, p->nq);
    for (size_t i = 0; i < p->nq; i++) {
        const qrec *r = &p->q[i];
        hscope_status st = visit(p, p->qstr, tid[i], r->type, r->gen, r->file,
                                 r->line, r->cls, r->flags, err);
        if (st != HSCOPE_OK)
            return st;
    }
    p->nq = 0;
    return HSCOPE_OK;
}

/* Queue a record; a full queue is compared first, so that the last record
 * queued stays there until the next one comes (sink_oid() may take it
 * back).  The pass ends with a flush. */
static hscope_status
enqueue(pass *p, const hscope__intern *bstr, uint64_t addr, int type,
        uint32_t gen, uint32_t file, uint32_t line, uint64_t cls,
        uint16_t flags, hscope_error *err)
{
    if (p->nq == QN) {
        hscope_status st = flush(p, err);
        if (st != HSCOPE_OK)
            return st;
    }
    p->qstr = bstr;
    qrec *r = &p->q[p->nq];
    r->addr = addr;
    r->cls = cls;
    r->gen = gen;
    r->file = file;
    r->line = line;
    r->flags = flags;
    r->type = (uint8_t)type;
    p->qaddr[p->nq++] = addr;
    return HSCOPE_OK;
}

static hscope_status
pass_heap(pass *p, const hscope_heap_t *b, hscope_error *err)
{
    p->base_types = (const char (*)[24])b->type_names;
    hscope__fp_add_heap(p->fp, b);
    size_t oc = 0; /* b's object ids, walked along with the ids */
    for (uint32_t i = 0; i < b->n; i++) {
        uint32_t s = b->site[i];
        uint64_t cls = b->cls[i] == HSCOPE__CLS_HIDDEN ? 0 : class_address(b, i), oid = 0;
        if (p->oids && hscope__oid_next(b, i, &oc, &oid)) {
            visit_oid(p, b->addr[i], b->type[i], b->gen[i], b->flags[i], oid);
            continue;
        }
        hscope_status st = enqueue(p, &b->strings, b->addr[i], b->type[i], b->gen[i],
                                   b->site_file[s], b->site_line[s], cls, b->flags[i], err);
        if (st != HSCOPE_OK)
            return st;
    }
    return flush(p, err);
}

static hscope_status
sink(void *ud, hscope__builder *b, const hscope__objrec *o, hscope_error *err)
{
    pass *p = ud;
    p->base_types = (const char (*)[24])b->type_names;
    hscope__fp_add(p->fp, o->addr, o->type, o->gen);
    return enqueue(p, &b->strings, o->addr, o->type, o->gen, o->file, o->line,
                   o->class_addr, o->flags, err);
}

/* The record just queued has an object_id: the id decides, not its address. */
static hscope_status
sink_oid(void *ud, hscope__builder *b, uint64_t oid, hscope_error *err)
{
    (void)b;
    (void)err;
    pass *p = ud;
    if (!p->oids || !p->nq)
        return HSCOPE_OK;
    const qrec *r = &p->q[--p->nq];
    visit_oid(p, r->addr, r->type, r->gen, r->flags, oid);
    return HSCOPE_OK;
}

/* Per site of the target: 1 if it is the dumper's (origin.c's rule). */
static hscope_status
dumper_sites(const hscope_heap_t *h, uint8_t **out, hscope_error *err)
{
    uint8_t *d = hscope__calloc((hscope__mem *)&h->mem, h->nsites ? h->nsites : 1, 1);
    if (!d)
        return hscope__nomem(err, h->nsites);
    for (size_t s = 1; s < h->nsites; s++)
        d[s] = (uint8_t)hscope__is_dumper(hscope__intern_str(&h->strings, h->site_file[s]),
                                          hscope__intern_str(&h->strings, h->site_method[s]));
    *out = d;
    return HSCOPE_OK;
}

typedef struct snapinfo {
    const char *name;
    uint64_t objects, traced, pinned, roots, skipped;
    uint64_t skip[HSCOPE_SKIP__COUNT];
    int truncated;
} snapinfo;

/* "12 unreadable lines (bad_json 11, truncated 1)" into buf. */
static void
skipped_text(const snapinfo *s, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "%llu unreadable line%s (",
                                  (unsigned long long)s->skipped, s->skipped == 1 ? "" : "s");
    const char *sep = "";
    for (int r = 0; r < HSCOPE_SKIP__COUNT && len < n; r++) {
        if (!s->skip[r])
            continue;
        len += (size_t)snprintf(buf + len, n - len, "%s%s %llu", sep, hscope__skip_reason_name(r),
                                (unsigned long long)s->skip[r]);
        sep = ", ";
    }
    if (len < n)
        snprintf(buf + len, n - len, ")%s", s->truncated ? ", and it is truncated" : "");
}

static void HS_PRINTF(3, 4)
add_warning(hscope_diff_t *d, uint32_t bit, const char *fmt, ...)
{
    size_t len = strlen(d->text);
    d->warn |= bit; /* the bit even when the text is full */
    if (len + 2 >= sizeof(d->text))
        return;
    if (len)
        d->text[len++] = '\n';
    if (d->ncodes < HSCOPE__DIFF_MAX_WARNINGS)
        d->codes[d->ncodes++] = bit;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->text + len, sizeof(d->text) - len, fmt, ap);
    va_end(ap);
}

static void
warnings(hscope_diff_t *d, const snapinfo *s, int ns)
{
    for (int i = 0; i < ns; i++) {
        if (s[i].objects && s[i].traced == 0)
            add_warning(d, HSCOPE_DIFF_WARN_NO_TRACING,
                "%s has no allocation info (trace_object_allocations was off): "
                "identity falls back to address, type and class, so an address "
                "reused by a similar object can pass for a survivor", s[i].name);
        if (s[i].roots == 0)
            add_warning(d, HSCOPE_DIFF_WARN_PARTIAL,
                "%s has no ROOT records (a since: partial dump?): objects missing "
                "from it may still be alive", s[i].name);
        if (s[i].pinned)
            add_warning(d, HSCOPE_DIFF_WARN_COMPACTION,
                "%s has %llu pinned objects, a sign of GC compaction: objects "
                "that moved look like new ones", s[i].name, (unsigned long long)s[i].pinned);
        if (s[i].skipped) {
            char why[256];
            skipped_text(&s[i], why, sizeof(why));
            add_warning(d, HSCOPE_DIFF_WARN_SKIPPED,
                "%s had %s: objects on them are not compared", s[i].name, why);
        }
    }
    if (d->untraced && !(d->warn & HSCOPE_DIFF_WARN_NO_TRACING))
        add_warning(d, HSCOPE_DIFF_WARN_NO_TRACING,
            "%llu leaked objects have no allocation info; they are matched "
            "by address, type and class only", (unsigned long long)d->untraced);
}

void
hscope__diff_options_init(hscope_diff_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
}

static hscope_status
read_opts(const hscope_diff_options *in, hscope_diff_options *o, hscope_error *err)
{
    hscope__diff_options_init(o);
    if (!in)
        return HSCOPE_OK;
    if (in->size < sizeof(uint32_t) * 2)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "diff options size not set");
    if (!hscope__tail_is_zero(in, in->size, sizeof(*o)))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "hscope_diff_options has unknown non-zero fields");
    memcpy(o, in, in->size < sizeof(*o) ? in->size : sizeof(*o));
    if (o->flags & ~(uint32_t)(HSCOPE_DIFF_ADDRESS_ONLY | HSCOPE_DIFF_KEEP_DUMPER |
                               HSCOPE_DIFF_KEEP_TRACER))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown diff flags 0x%x", o->flags);
    return HSCOPE_OK;
}

typedef hscope__diff_base base;

static int
cmp_oid(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The target's (object_id, id) pairs sorted by object_id, in one
 * allocation (pairs packed as two u64s, then split). */
static hscope_status
oidmap_build(oidmap *om, const hscope_heap_t *t, hscope__mem *m, hscope_error *err)
{
    size_t n = t->oids.len;
    uint64_t *pairs = hscope__malloc(m, (n ? n : 1) * 2 * sizeof(uint64_t));
    om->id = hscope__malloc(m, (n ? n : 1) * sizeof(uint32_t));
    if (!pairs || !om->id) {
        hscope__free(m, pairs);
        return hscope__nomem(err, n * 20);
    }
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = t->oids.val[i];
        pairs[2 * i + 1] = t->oids.id[i];
    }
    qsort(pairs, n, 2 * sizeof(uint64_t), cmp_oid);
    for (size_t i = 0; i < n; i++) {
        pairs[i] = pairs[2 * i]; /* in place: i <= 2i */
        om->id[i] = (uint32_t)pairs[2 * i + 1];
    }
    om->oid = pairs;
    om->n = n;
    return HSCOPE_OK;
}

/* What the object ids did, for hscope_diff_note_text(). */
static void
oid_notes(hscope_diff_t *d, const hscope_heap_t *t, const char *tname, const char *prev,
          int address_only)
{
    if (!t->oids.len)
        return;
    if (address_only) {
        snprintf(d->notes, sizeof(d->notes),
                 "%llu objects of %s carry Ruby's object_id; not used (address-only comparison)",
                 (unsigned long long)t->oids.len, tname);
        return;
    }
    snprintf(d->notes, sizeof(d->notes),
             "identity by object_id (Ruby 4.0+): %llu of the %llu objects of %s that carry one "
             "matched %s by it, %llu of them at another address (moved)",
             (unsigned long long)d->oid_matches, (unsigned long long)t->oids.len, tname, prev,
             (unsigned long long)d->moved);
}

/* Roots and damage of a loaded dump. */
static void
snap_heap(snapinfo *si, const hscope_heap_t *h)
{
    si->roots = h->stats.root_records;
    si->skipped = h->stats.skipped_lines;
    si->truncated = h->stats.truncated != 0;
    memcpy(si->skip, h->skipped, sizeof(si->skip));
}

/* A streamed base with a rider: the diff's sink, then the rider's. */
typedef struct tee {
    pass *p;
    const base *b;
} tee;

static hscope_status
tee_sink(void *ud, hscope__builder *b, const hscope__objrec *o, hscope_error *err)
{
    tee *t = ud;
    hscope_status st = sink(t->p, b, o, err);
    return st == HSCOPE_OK ? t->b->rider(t->b->rider_ud, b, o, err) : st;
}

static hscope_status
tee_oid(void *ud, hscope__builder *b, uint64_t oid, hscope_error *err)
{
    return sink_oid(((tee *)ud)->p, b, oid, err);
}

static hscope_status
run_pass(pass *p, const base *b, snapinfo *si, hscope_error *err)
{
    hscope_status st;
    if (b->heap) {
        st = pass_heap(p, b->heap, err);
        snap_heap(si, b->heap);
    } else {
        hscope__mem mem;
        hscope__builder bl;
        const hscope_load_options *lo = b->load;
        hscope__mem_init(&mem, lo ? lo->allocator : NULL, lo ? lo->max_memory : 0);
        tee t = { p, b };
        hscope__stream_sinks ss = { sink, sink_oid, NULL, p, 0 };
        if (b->rider)
            ss = (hscope__stream_sinks){ tee_sink, tee_oid, NULL, &t, 0 };
        uint64_t in_bytes = 0, t0 = hscope__now_ns();
        int gz = 0;
        st = hscope__heap_stream(&bl, &mem, b->path, lo, &ss, &in_bytes, &gz, err);
        if (st == HSCOPE_OK)
            st = flush(p, err); /* while the builder's strings still exist */
        if (st == HSCOPE_OK && b->rider_done)
            st = b->rider_done(b->rider_ud, &bl, in_bytes, gz, hscope__now_ns() - t0, err);
        uint64_t sk = 0;
        for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
            sk += bl.skipped[r];
        si->roots = bl.root_records;
        si->skipped = sk;
        si->truncated = bl.truncated != 0;
        memcpy(si->skip, bl.skipped, sizeof(si->skip));
        hscope__heap_stream_end(&bl);
    }
    si->objects = p->objects;
    si->traced = p->traced;
    si->pinned = p->pinned;
    return st;
}

static void
series_line(void *ud, uint32_t bit, const char *text)
{
    add_warning(ud, bit, "%s", text);
}

/* The series checks over the fingerprints of the dumps, in order. */
static void
series(hscope_diff_t *d, hscope_fingerprint_t *const fps[3], const snapinfo *si, int ns)
{
    const char *names[3];
    for (int i = 0; i < ns; i++)
        names[i] = si[i].name;
    hscope__series_check_lines((const hscope_fingerprint_t *const *)fps, names,
                               (uint64_t)ns, series_line, d);
}

/* leaked = (in B) and not in A, minus the dumper's objects (dsite) and,
 * with skip_tracer, Ruby's allocation tracer; both counted. */
static hscope_status
collect(hscope_diff_t *d, hscope_heap_t *target, const uint64_t *in_a, const uint64_t *in_b,
        const uint8_t *dsite, int skip_tracer, hscope_error *err)
{
    size_t cap = 0;
    for (uint32_t i = 0; i < target->n; i++) {
        uint64_t bit = (uint64_t)1 << (i % 64);
        if ((in_a[i / 64] & bit) || (in_b && !(in_b[i / 64] & bit)))
            continue;
        if (dsite && dsite[target->site[i]]) {
            d->excluded++;
            continue;
        }
        if (skip_tracer && hscope__is_tracer(target, i)) {
            d->tracer++;
            d->tracer_mem = hscope__sat_add(d->tracer_mem, hscope__memsize(target, i));
            continue;
        }
        hscope_status st = hscope__grow(&target->mem, (void **)&d->ids, &cap, d->n + 1,
                                        sizeof(uint32_t), err);
        if (st != HSCOPE_OK)
            return st;
        d->ids[d->n++] = i;
        d->memsize = hscope__sat_add(d->memsize, hscope__memsize(target, i));
        d->untraced += target->gen[i] == HSCOPE__GEN_NONE;
    }
    return HSCOPE_OK;
}

hscope_status
hscope__diff_run(hscope_diff_t **out, hscope_heap_t *target, const char *target_path,
                 const base *ba, const base *bb, const char *const names[3],
                 const hscope_diff_options *uopts, hscope_error *err)
{
    hscope_diff_options o;
    hscope_status st;
    uint64_t *in_a = NULL, *in_b = NULL;
    uint8_t *dsite = NULL;
    hscope_diff_t *d = NULL;
    hscope__mem *m = &target->mem;
    hscope_fingerprint_t *fps[3] = { NULL, NULL, NULL };
    oidmap om = { NULL, NULL, 0 };
    pass p;
    memset(&p, 0, sizeof(p));
    if ((st = read_opts(uopts, &o, err)) != HSCOPE_OK)
        return st;
    if (target->oids.len && !(o.flags & HSCOPE_DIFF_ADDRESS_ONLY) &&
        (st = oidmap_build(&om, target, m, err)) != HSCOPE_OK)
        return st;
    size_t words = (size_t)target->n / 64 + 1;
    in_a = hscope__calloc(m, words, sizeof(uint64_t));
    in_b = bb ? hscope__calloc(m, words, sizeof(uint64_t)) : NULL;
    d = hscope__calloc(m, 1, sizeof(*d));
    if (!in_a || (bb && !in_b) || !d) {
        st = hscope__nomem(err, words * 8);
        goto fail;
    }
    d->heap = target;
    atomic_init(&d->refs, 1);
    hscope__heap_retain(target);
    snapinfo si[3];
    memset(si, 0, sizeof(si));
    int ns = 0;
    /* pass over A, then B (three-way only) */
    const base *bases[2] = { ba, bb };
    uint64_t *bits[2] = { in_a, in_b };
    for (int k = 0; k < 2 && bases[k]; k++) {
        memset(&p, 0, sizeof(p));
        p.t = target;
        p.bits = bits[k];
        p.files.mem = m;
        p.files.to = &target->strings;
        p.address_only = (o.flags & HSCOPE_DIFF_ADDRESS_ONLY) != 0;
        p.oids = om.n ? &om : NULL;
        si[ns].name = names[ns];
        if ((st = hscope__fp_new(&fps[ns], m, err)) != HSCOPE_OK)
            goto fail;
        p.fp = fps[ns];
        st = run_pass(&p, bases[k], &si[ns], err);
        hscope__free(m, p.files.m);
        if (st != HSCOPE_OK)
            goto fail;
        hscope__fp_finish(fps[ns], bases[k]->heap ? NULL : bases[k]->path);
        fps[ns]->partial = p.objects && si[ns].roots == 0;
        if (k == 0)
            d->reused = p.reused;
        d->oid_matches = p.oid_matches; /* the last pass's: the dump before the target */
        d->moved = p.moved;
        d->snap[ns++] = p.objects;
    }
    /* the target itself */
    si[ns].name = names[ns];
    si[ns].objects = target->n;
    snap_heap(&si[ns], target);
    if ((st = hscope__fp_new(&fps[ns], m, err)) != HSCOPE_OK ||
        (!(o.flags & HSCOPE_DIFF_KEEP_DUMPER) && (st = dumper_sites(target, &dsite, err)) != HSCOPE_OK))
        goto fail;
    hscope__fp_add_heap(fps[ns], target);
    hscope__fp_finish(fps[ns], target_path);
    for (uint32_t i = 0; i < target->n; i++) {
        si[ns].traced += target->gen[i] != HSCOPE__GEN_NONE;
        si[ns].pinned += (target->flags[i] & HSCOPE_FLAG_PINNED) != 0;
    }
    d->snap[ns++] = target->n;
    d->ndumps = (uint32_t)ns;
    if ((st = collect(d, target, in_a, in_b, dsite, !(o.flags & HSCOPE_DIFF_KEEP_TRACER),
                      err)) != HSCOPE_OK)
        goto fail;
    warnings(d, si, ns);
    series(d, fps, si, ns);
    oid_notes(d, target, names[ns - 1], names[ns - 2], (o.flags & HSCOPE_DIFF_ADDRESS_ONLY) != 0);
    hscope__free(m, om.oid);
    hscope__free(m, om.id);
    hscope__free(m, in_a);
    hscope__free(m, in_b);
    hscope__free(m, dsite);
    for (int i = 0; i < 3; i++)
        hscope__fingerprint_free(fps[i]);
    *out = d;
    return HSCOPE_OK;
fail:
    hscope__free(m, om.oid);
    hscope__free(m, om.id);
    hscope__free(m, in_a);
    hscope__free(m, in_b);
    hscope__free(m, dsite);
    for (int i = 0; i < 3; i++)
        hscope__fingerprint_free(fps[i]);
    if (d && !d->heap)
        hscope__free(m, d); /* failed before it held the target */
    else
        hscope__diff_free(d);
    return st;
}

hscope_status
hscope__diff_compute(hscope_diff_t **out, hscope_heap_t *a, hscope_heap_t *b,
                     hscope_heap_t *c, const hscope_diff_options *opts,
                     hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st;
    if (!out || !a || !b) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out, a and b are required");
    } else {
        *out = NULL;
        base ba = { a, NULL, NULL, NULL, NULL, NULL }, bb = { b, NULL, NULL, NULL, NULL, NULL };
        static const char *const n3[3] = { "snapshot A", "snapshot B", "snapshot C" };
        st = c ? hscope__diff_run(out, c, NULL, &ba, &bb, n3, opts, &err)
               : hscope__diff_run(out, b, NULL, &ba, NULL, n3, opts, &err);
    }
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

hscope_diff_t *
hscope__diff_ref(hscope_diff_t *d)
{
    atomic_fetch_add(&d->refs, 1);
    return d;
}

uint32_t
hscope__diff_dumps(const hscope_diff_t *d)
{
    return d ? d->ndumps : 0;
}

uint32_t
hscope__diff_warning_code(const hscope_diff_t *d, uint32_t line)
{
    return d && line < d->ncodes ? d->codes[line] : 0;
}

void
hscope__diff_free(hscope_diff_t *d)
{
    if (!d || atomic_fetch_sub(&d->refs, 1) != 1)
        return;
    hscope_heap_t *h = d->heap;
    hscope__free(&h->mem, d->ids);
    hscope__free(&h->mem, d);
    hscope__heap_release(h);
}

uint64_t
hscope__diff_memory(const hscope_diff_t *d)
{
    const void *b[] = { d ? d->ids : NULL, d };
    return hscope__msize_sum(b, 2);
}

hscope_heap_t *
hscope__diff_heap(const hscope_diff_t *d)
{
    return d ? d->heap : NULL;
}

uint64_t
hscope__diff_count(const hscope_diff_t *d)
{
    return d ? d->n : 0;
}

uint64_t
hscope__diff_memsize(const hscope_diff_t *d)
{
    return d ? d->memsize : 0;
}

const hscope_id *
hscope__diff_objects(const hscope_diff_t *d)
{
    return d ? d->ids : NULL;
}

uint64_t
hscope__diff_excluded(const hscope_diff_t *d)
{
    return d ? d->excluded : 0;
}

void
hscope__diff_tracer(const hscope_diff_t *d, uint64_t *objects, uint64_t *memsize)
{
    if (objects)
        *objects = d ? d->tracer : 0;
    if (memsize)
        *memsize = d ? d->tracer_mem : 0;
}

uint64_t
hscope__diff_snapshot_objects(const hscope_diff_t *d, uint32_t i)
{
    return d && i < 3 ? d->snap[i] : 0;
}

uint64_t
hscope__diff_reused_addresses(const hscope_diff_t *d)
{
    return d ? d->reused : 0;
}

uint32_t
hscope__diff_warnings(const hscope_diff_t *d)
{
    return d ? d->warn : 0;
}

const char *
hscope__diff_warning_text(const hscope_diff_t *d)
{
    return d ? d->text : "";
}

uint64_t
hscope__diff_object_id_matches(const hscope_diff_t *d)
{
    return d ? d->oid_matches : 0;
}

uint64_t
hscope__diff_moved_objects(const hscope_diff_t *d)
{
    return d ? d->moved : 0;
}

const char *
hscope__diff_note_text(const hscope_diff_t *d)
{
    return d ? d->notes : "";
}

hscope_status
hscope__diff_tally(hscope_tally_t **out, const hscope_diff_t *d, const char *key,
                   const hscope_tally_options *opts, hscope_error *err)
{
    if (!d) {
        if (out)
            *out = NULL;
        return HSCOPE_ERR_INVALID_ARG;
    }
    /* d->ids is NULL when nothing leaked: zero objects, not "all" */
    return hscope__tally_run(out, d->heap, key, opts, hscope__ids_or_none(d->ids, d->n),
                             d->n, 1, err);
}

/* The last dump loaded, the others streamed against it. */
hscope_status
hscope__diff_files(hscope_diff_t **out, const char *path_a, const char *path_b,
                   const char *path_c, const hscope_load_options *load,
                   const hscope_diff_options *opts, hscope_error *uerr)
{
    return hscope__diff_files_riding(out, path_a, path_b, path_c, load, opts, NULL, NULL, uerr);
}

static void
set_rider(base *b, const base *r)
{
    if (!r)
        return;
    b->rider = r->rider;
    b->rider_done = r->rider_done;
    b->rider_ud = r->rider_ud;
}

hscope_status
hscope__diff_files_riding(hscope_diff_t **out, const char *path_a, const char *path_b,
                          const char *path_c, const hscope_load_options *load,
                          const hscope_diff_options *opts, const base *ra, const base *rb,
                          hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st;
    hscope_heap_t *target = NULL;
    if (!out || !path_a || !path_b) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out, path_a and path_b are required");
        goto done;
    }
    *out = NULL;
    hscope_load_options lopts;
    if ((st = hscope__read_load_options(load, &lopts, &err)) != HSCOPE_OK)
        goto done;
    load = &lopts;
    const char *tpath = path_c ? path_c : path_b;
    if ((st = hscope__heap_open_file(&target, tpath, load, &err)) != HSCOPE_OK)
        goto done;
    hscope__diff_base ba = { NULL, path_a, load, NULL, NULL, NULL };
    hscope__diff_base bb = { NULL, path_b, load, NULL, NULL, NULL };
    set_rider(&ba, ra);
    if (path_c)
        set_rider(&bb, rb);
    const char *names[3] = { path_a, path_b, path_c ? path_c : "" };
    if (!path_c)
        names[1] = path_b;
    st = hscope__diff_run(out, target, tpath, &ba, path_c ? &bb : NULL, names, opts, &err);
done:
    hscope__heap_release(target); /* the diff holds its own reference */
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}
