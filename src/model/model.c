/*
 * model.c - turns the builder's columns into the immutable heap: builds
 * the address index, resolves class addresses, references and roots to
 * ids, and keeps every reference that does not resolve in a side table.
 */
#include "model.h"
#include "../index/index.h"

#include <stdlib.h>
#include <string.h>

/* Shrink an array to n elements (keeps it if realloc fails). */
static void *
shrink(hscope__mem *m, void *p, size_t n, size_t elem)
{
    if (!p)
        return NULL;
    size_t bytes = n * elem;
    if (bytes == 0)
        bytes = elem;
    if (bytes >= hscope__msize(p))
        return p;
    void *q = hscope__realloc(m, p, bytes);
    return q ? q : p;
}

uint64_t
hscope__big_get(const hscope__bigvals *bv, uint32_t id)
{
    size_t k = hscope__id_find(bv->id, bv->len, id);
    return k < bv->len ? bv->val[k] : HSCOPE__U32_BIG;
}

size_t
hscope__id_find(const uint32_t *ids, size_t n, uint32_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ids[lo] == id ? lo : n;
}

uint64_t
hscope__class_addr(const hscope_heap_t *h, uint32_t id)
{
    uint32_t c = h->cls[id];
    if (c == HSCOPE__CLS_HIDDEN)
        return 0;
    if (c != HSCOPE__CLS_UNKNOWN)
        return h->addr[c];
    size_t k = hscope__id_find(h->ucls_id, h->nucls, id);
    return k < h->nucls ? h->ucls_addr[k] : 0;
}

static int
is_class_type(uint8_t t)
{
    return t == HSCOPE_TYPE_CLASS || t == HSCOPE_TYPE_MODULE ||
           t == HSCOPE_TYPE_ICLASS;
}

static hscope_status
push_dangling(hscope_heap_t *h, size_t *cap, uint32_t from, uint64_t addr,
              hscope_error *err)
{
    size_t c0 = *cap;
    hscope_status st = hscope__grow(&h->mem, (void **)&h->dang_addr, cap,
                                    h->ndang + 1, sizeof(uint64_t), err);
    if (st != HSCOPE_OK)
        return st;
    if (*cap != c0) {
        uint32_t *f = hscope__realloc(&h->mem, h->dang_from, *cap * sizeof(uint32_t));
        if (!f) {
            *cap = c0;
            return hscope__nomem(err, 0);
        }
        h->dang_from = f;
    }
    h->dang_from[h->ndang] = from;
    h->dang_addr[h->ndang++] = addr;
    return HSCOPE_OK;
}

/*
 * Class address -> class object id; unresolved ones go to a side table.
 * Done in place: the u64 address array becomes the u32 id array (the write
 * at byte 4i never overtakes the read at byte 8i; memcpy keeps it legal
 * under strict aliasing).
 */
/* Work of one thread over a range [from, to) of objects or references. */
typedef struct part {
    hscope_heap_t *h;
    unsigned char *mem;       /* the u64 array being turned into u32 */
    uint64_t from, to;
    uint64_t *xa;             /* unresolved: index, address (in order) */
    uint64_t *xk;
    size_t nx, cap_a, cap_k;
    hscope_status st;
    hscope_error err;
} part;

static hscope_status
part_note(part *p, uint64_t k, uint64_t addr)
{
    hscope_status st;
    if ((st = hscope__grow(&p->h->mem, (void **)&p->xk, &p->cap_k, p->nx + 1, 8, &p->err)) ||
        (st = hscope__grow(&p->h->mem, (void **)&p->xa, &p->cap_a, p->nx + 1, 8, &p->err)))
        return st;
    p->xk[p->nx] = k;
    p->xa[p->nx++] = addr;
    return HSCOPE_OK;
}

/*
 * Run fn over [0, n) in two parts on two threads when n is large and
 * threads allow it (one part otherwise).  Each part turns its range of the
 * u64 array into u32 values written from the start of its own range (the
 * write at 8 from + 4 (k - from) never overtakes the read at 8 k nor leaves
 * the range), so the parts never touch each other's bytes; the second
 * part's values are then moved down behind the first's.  Unresolved
 * entries are listed per part, in order.
 */
static hscope_status
run_parts(hscope_heap_t *h, unsigned char *mem, uint64_t n, unsigned threads,
          void *(*fn)(void *), part P[2], int *nparts)
{
    memset(P, 0, 2 * sizeof(part));
    int two = threads > 1 && n >= ((uint64_t)1 << 16);
    for (int i = 0; i < 2; i++) {
        P[i].h = h;
        P[i].mem = mem;
        hscope__error_init(&P[i].err);
    }
    P[0].from = 0;
    P[0].to = two ? n / 2 : n;
    P[1].from = P[0].to;
    P[1].to = n;
    *nparts = 1;
    if (n == 0) /* mem may be NULL: nothing to do */
        return HSCOPE_OK;
    hscope__run_pair(fn, &P[0], &P[1], two);
    *nparts = two ? 2 : 1;
    for (int i = 0; i < *nparts; i++)
        if (P[i].st != HSCOPE_OK)
            return P[i].st;
    if (two)
        memmove(mem + P[1].from * 4, mem + P[1].from * 8, (size_t)(P[1].to - P[1].from) * 4);
    return HSCOPE_OK;
}

static void
parts_free(hscope_heap_t *h, part P[2])
{
    for (int i = 0; i < 2; i++) {
        hscope__free(&h->mem, P[i].xk);
        hscope__free(&h->mem, P[i].xa);
    }
}

static hscope_status
parts_error(part P[2], int nparts, hscope_error *err)
{
    for (int i = 0; i < nparts; i++)
        if (P[i].st != HSCOPE_OK) {
            hscope__error_copy_out(err, &P[i].err);
            return P[i].st;
        }
    return HSCOPE_OK;
}

/*
 * Class index -> class object id, in place (the builder's u32 index
 * column becomes h->cls): each distinct class address is looked up once
 * (a dump has few), then every object takes its index's answer.  The
 * objects whose class address is no class object of the dump go to the
 * side table (ucls_id, ucls_addr), in id order.
 */
static hscope_status
resolve_classes(hscope_heap_t *h, uint32_t *class_ix, const uint64_t *cls_addr, size_t ncls,
                hscope_error *err)
{
    uint32_t *cid = hscope__malloc(&h->mem, (ncls ? ncls : 1) * sizeof(uint32_t));
    if (!cid)
        return hscope__nomem(err, ncls * sizeof(uint32_t));
    cid[0] = HSCOPE__CLS_HIDDEN;
    size_t nu = 0;
    int unknown = 0;
    for (size_t k = 1; k < ncls; k++) {
        uint32_t id = hscope__index_find(h, cls_addr[k]);
        cid[k] = id != HSCOPE_ID_NONE && is_class_type(h->type[id]) ? id : HSCOPE__CLS_UNKNOWN;
        unknown |= cid[k] == HSCOPE__CLS_UNKNOWN;
    }
    /* the side table's size: a pass over the objects only when some
     * address is no class (a damaged or partial dump) */
    for (uint32_t i = 0; unknown && i < h->n; i++)
        nu += cid[class_ix[i]] == HSCOPE__CLS_UNKNOWN;
    if (nu) {
        h->ucls_id = hscope__malloc(&h->mem, nu * sizeof(uint32_t));
        h->ucls_addr = hscope__malloc(&h->mem, nu * sizeof(uint64_t));
        if (!h->ucls_id || !h->ucls_addr) {
            hscope__free(&h->mem, cid);
            return hscope__nomem(err, nu * 12);
        }
    }
    for (uint32_t i = 0; i < h->n; i++) {
        uint32_t x = class_ix[i], c = cid[x];
        if (c == HSCOPE__CLS_UNKNOWN) {
            h->ucls_id[h->nucls] = i;
            h->ucls_addr[h->nucls++] = cls_addr[x];
        }
        class_ix[i] = c;
    }
    hscope__free(&h->mem, cid);
    h->cls = shrink(&h->mem, class_ix, h->n, sizeof(uint32_t));
    return HSCOPE_OK;
}

static void *
edges_part(void *arg)
{
    part *p = arg;
    unsigned char *out = p->mem + p->from * 8;
    uint64_t batch[16];
    uint32_t ids[16];
    for (uint64_t k = p->from; k < p->to; k += 16) {
        size_t m = p->to - k < 16 ? (size_t)(p->to - k) : 16;
        memcpy(batch, p->mem + k * 8, m * 8);
        hscope__index_find_batch(p->h, batch, ids, m);
        for (size_t j = 0; j < m; j++)
            if (ids[j] == HSCOPE_ID_NONE && (p->st = part_note(p, k + j, batch[j])) != HSCOPE_OK)
                return NULL;
        memcpy(out + (k - p->from) * 4, ids, m * 4);
    }
    return NULL;
}

/*
 * References: addresses -> ids, in place (the u64 array becomes u32).
 * Pass 1 resolves batches of 16 (prefetching), on two threads for large
 * dumps (see run_parts).  Pass 2 drops the dangling entries, recording
 * them with their source.
 */
static hscope_status
resolve_edges(hscope_heap_t *h, uint64_t *raw, uint64_t nraw, size_t *dcap,
              unsigned threads, hscope_error *err)
{
    unsigned char *mem = (unsigned char *)raw;
    part P[2];
    int np = 1;
    hscope_status st = run_parts(h, mem, nraw, threads, edges_part, P, &np);
    if (st != HSCOPE_OK) {
        st = parts_error(P, np, err);
        goto out;
    }
    /* Entries before the first dangling one stay where they are: start
     * the compaction at the object holding it (none: nothing moves). */
    uint64_t j = 0, k = 0;
    size_t d = 0;
    int pi = 0;
    uint32_t i0 = h->n;
    if (P[0].nx || (np > 1 && P[1].nx)) {
        uint64_t first = P[0].nx ? P[0].xk[0] : P[1].xk[0];
        uint32_t lo = 0, hi = h->n; /* the last object starting at or before it */
        while (hi - lo > 1) {
            uint32_t m = lo + (hi - lo) / 2;
            if (h->edge_start[m] <= first)
                lo = m;
            else
                hi = m;
        }
        i0 = lo;
        j = k = h->edge_start[i0];
    } else {
        j = nraw;
    }
    for (uint32_t i = i0; i < h->n; i++) {
        uint64_t end = i + 1 < h->n ? h->edge_start[i + 1] : nraw;
        h->edge_start[i] = (uint32_t)j;
        for (; k < end; k++) {
            uint32_t t;
            memcpy(&t, mem + k * 4, 4);
            if (t != HSCOPE_ID_NONE) {
                memcpy(mem + j * 4, &t, 4);
                j++;
                continue;
            }
            while (pi < np && d == P[pi].nx) { /* the next unresolved one, in order */
                pi++;
                d = 0;
            }
            if (pi == np) {
                st = hscope__fail(err, HSCOPE_ERR_INTERNAL, "references: unresolved list out of step");
                goto out;
            }
            if ((st = push_dangling(h, dcap, i, P[pi].xa[d++], err)) != HSCOPE_OK)
                goto out;
        }
    }
    h->edge_start[h->n] = (uint32_t)j;
    h->nedges = j;
    h->edges = shrink(&h->mem, raw, j, sizeof(uint32_t));
out:
    parts_free(h, P);
    return st;
}

/* Root references grouped by category (counting sort, dump order kept
 * inside a category); dangling ones are kept per category too. */
static hscope_status
resolve_roots(hscope_heap_t *h, hscope__builder *b, size_t *dcap,
              hscope_error *err)
{
    size_t nc = b->ncat, nr = b->nroot;
    h->ncat = (uint32_t)nc;
    h->cat_name = b->cat_name;
    h->cat_records = b->cat_records;
    b->cat_name = NULL;
    b->cat_records = NULL;
    h->cat_start = hscope__calloc(&h->mem, nc + 2, sizeof(uint64_t));
    h->cat_dangling = hscope__calloc(&h->mem, nc + 2, sizeof(uint64_t));
    h->root_targets = hscope__malloc(&h->mem, (nr + 1) * sizeof(uint32_t));
    h->root_dang = hscope__malloc(&h->mem, (nr + 1) * sizeof(uint64_t));
    uint32_t *tmp = hscope__malloc(&h->mem, (nr + 1) * sizeof(uint32_t));
    uint64_t *pos = hscope__malloc(&h->mem, (nc + 1) * sizeof(uint64_t) * 2);
    hscope_status st = HSCOPE_OK;
    if (!h->cat_start || !h->cat_dangling || !h->root_targets ||
        !h->root_dang || !tmp || !pos) {
        st = hscope__nomem(err, nr * sizeof(uint64_t));
        goto out;
    }
    for (size_t i = 0; i < nr; i++) {
        uint32_t t = hscope__index_find(h, b->root_addr[i]);
        tmp[i] = t;
        if (t == HSCOPE_ID_NONE) {
            h->cat_dangling[b->root_cat[i] + 1]++;
            if ((st = push_dangling(h, dcap, HSCOPE_ID_NONE, b->root_addr[i],
                                    err)) != HSCOPE_OK)
                goto out;
        } else {
            h->cat_start[b->root_cat[i] + 1]++;
        }
    }
    for (size_t c = 0; c < nc; c++) {
        h->cat_start[c + 1] += h->cat_start[c];
        h->cat_dangling[c + 1] += h->cat_dangling[c];
    }
    uint64_t *pt = pos, *pd = pos + nc + 1;
    memcpy(pt, h->cat_start, (nc + 1) * sizeof(uint64_t));
    memcpy(pd, h->cat_dangling, (nc + 1) * sizeof(uint64_t));
    for (size_t i = 0; i < nr; i++) {
        uint32_t c = b->root_cat[i];
        if (tmp[i] != HSCOPE_ID_NONE)
            h->root_targets[pt[c]++] = tmp[i];
        else
            h->root_dang[pd[c]++] = b->root_addr[i];
    }
    h->stats.root_references = h->cat_start[nc];
out:
    hscope__free(&h->mem, pos);
    hscope__free(&h->mem, tmp);
    return st;
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static hscope_status
count_dangling_unique(hscope_heap_t *h, hscope_error *err)
{
    if (!h->ndang)
        return HSCOPE_OK;
    uint64_t *c = hscope__malloc(&h->mem, h->ndang * sizeof(uint64_t));
    if (!c)
        return hscope__nomem(err, h->ndang * sizeof(uint64_t));
    memcpy(c, h->dang_addr, h->ndang * sizeof(uint64_t));
    qsort(c, h->ndang, sizeof(uint64_t), cmp_u64);
    uint64_t u = 1;
    for (uint64_t i = 1; i < h->ndang; i++)
        u += c[i] != c[i - 1];
    h->ndang_unique = u;
    hscope__free(&h->mem, c);
    return HSCOPE_OK;
}

hscope_status
hscope__tracer_labels(hscope_heap_t *h, int add, hscope_error *err)
{
    h->str_tracer = hscope__intern_find(&h->strings, HSCOPE__TRACER_STRUCT,
                                        sizeof(HSCOPE__TRACER_STRUCT) - 1);
    h->lbl_tracer = 0;
    if (!h->str_tracer)
        return HSCOPE_OK;
    if (!add) {
        h->lbl_tracer = hscope__intern_find(&h->strings, HSCOPE__TRACER_LABEL,
                                            sizeof(HSCOPE__TRACER_LABEL) - 1);
        if (!h->lbl_tracer)
            h->str_tracer = 0;
        return HSCOPE_OK;
    }
    return hscope__intern_add(&h->strings, HSCOPE__TRACER_LABEL, sizeof(HSCOPE__TRACER_LABEL) - 1,
                              &h->lbl_tracer, err);
}

/* Interned "<imemo:X>" labels, one per distinct imemo_type, and the
 * allocation tracer's. */
static hscope_status
make_labels(hscope_heap_t *h, hscope_error *err)
{
    hscope_status st;
    if ((st = hscope__tracer_labels(h, 1, err)) != HSCOPE_OK)
        return st;
    if ((st = hscope__intern_add(&h->strings, "<hidden>", 8, &h->lbl_hidden, err)) ||
        (st = hscope__intern_add(&h->strings, "<unknown>", 9, &h->lbl_unknown, err)) ||
        (st = hscope__intern_add(&h->strings, "<anonymous>", 11, &h->lbl_anon, err)) ||
        (st = hscope__intern_add(&h->strings, "<imemo:?>", 9, &h->lbl_imemo_none, err)))
        return st;
    size_t cap = 0, lcap = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        if (h->type[i] != HSCOPE_TYPE_IMEMO || !h->detail[i])
            continue;
        size_t k;
        for (k = 0; k < h->nimemo && h->imemo_detail[k] != h->detail[i]; k++) {
        }
        if (k < h->nimemo)
            continue;
        if ((st = hscope__grow(&h->mem, (void **)&h->imemo_detail, &cap, k + 1,
                               sizeof(uint32_t), err)) ||
            (st = hscope__grow(&h->mem, (void **)&h->imemo_label, &lcap, k + 1,
                               sizeof(uint32_t), err)))
            return st;
        const char *d = hscope__intern_str(&h->strings, h->detail[i]);
        size_t dn = hscope__intern_len(&h->strings, h->detail[i]);
        char *buf = hscope__malloc(&h->mem, dn + 9);
        if (!buf)
            return hscope__nomem(err, dn + 9);
        memcpy(buf, "<imemo:", 7);
        memcpy(buf + 7, d, dn);
        buf[7 + dn] = '>';
        st = hscope__intern_add(&h->strings, buf, dn + 8, &h->imemo_label[k], err);
        hscope__free(&h->mem, buf);
        if (st)
            return st;
        h->imemo_detail[k] = h->detail[i];
        h->nimemo++;
    }
    return HSCOPE_OK;
}

uint32_t
hscope__label(const hscope_heap_t *h, uint32_t id)
{
    if (hscope__is_tracer(h, id))
        return h->lbl_tracer;
    if (h->type[id] == HSCOPE_TYPE_IMEMO) {
        uint32_t d = h->detail[id];
        for (size_t k = 0; d && k < h->nimemo; k++)
            if (h->imemo_detail[k] == d)
                return h->imemo_label[k];
        return h->lbl_imemo_none;
    }
    uint32_t c = h->cls[id];
    if (c == HSCOPE__CLS_HIDDEN)
        return h->lbl_hidden;
    if (c == HSCOPE__CLS_UNKNOWN)
        return h->lbl_unknown;
    return h->detail[c] ? h->detail[c] : h->lbl_anon;
}

uint32_t
hscope__fields_str(const hscope_heap_t *h)
{
    return hscope__intern_find(&h->strings, "fields", 6);
}

uint32_t
hscope__fields_owner(const hscope_heap_t *h, uint32_t id, uint32_t fields_str)
{
    if (h->type[id] != HSCOPE_TYPE_IMEMO || !fields_str || h->detail[id] != fields_str)
        return HSCOPE_ID_NONE;
    uint32_t c = h->cls[id];
    if (c < HSCOPE__CLS_UNKNOWN)
        return c; /* the owner is a class or module */
    /* a String, Array or Data owner: its address, kept in the side table */
    uint64_t a = hscope__class_addr(h, id);
    return a ? hscope__index_find(h, a) : HSCOPE_ID_NONE;
}

int
hscope__oid(const hscope_heap_t *h, uint32_t id, uint64_t *oid)
{
    size_t k = hscope__id_find(h->oids.id, h->oids.len, id);
    if (k == h->oids.len)
        return 0;
    *oid = h->oids.val[k];
    return 1;
}

int
hscope__cat_conservative(const hscope_heap_t *h, uint32_t c)
{
    return c < h->ncat && strcmp(hscope__intern_str(&h->strings, h->cat_name[c]),
                                 "machine_context") == 0;
}

uint32_t
hscope__object_label(const hscope_heap_t *h, uint32_t id)
{
    int t = h->type[id];
    if (t == HSCOPE_TYPE_CLASS || t == HSCOPE_TYPE_MODULE)
        return h->detail[id] ? h->detail[id] : h->lbl_anon;
    return hscope__label(h, id);
}

static void
take_columns(hscope_heap_t *h, hscope__builder *b)
{
    hscope__mem *m = &h->mem;
    size_t n = b->n;
    h->n = (uint32_t)n;
    h->addr = shrink(m, b->addr, n, sizeof(uint64_t));
    h->type = shrink(m, b->type, n, 1);
    h->flags = shrink(m, b->flags, n, sizeof(uint16_t));
    h->detail = shrink(m, b->detail, n, sizeof(uint32_t));
    h->site = shrink(m, b->site, n, sizeof(uint32_t));
    h->gen = shrink(m, b->gen, n, sizeof(uint32_t));
    h->memsize = shrink(m, b->memsize, n, sizeof(uint32_t));
    h->size = shrink(m, b->size, n, sizeof(uint32_t));
    h->edge_start = shrink(m, b->edge_start, n + 1, sizeof(uint32_t));
    h->big_memsize = b->big_memsize;
    h->big_size = b->big_size;
    h->oids = b->oids;
    h->strings = b->strings;
    h->site_file = b->site_file;
    h->site_line = b->site_line;
    h->site_method = b->site_method;
    h->nsites = b->nsites;
    h->val_id = b->val_id;
    h->val_off = b->val_off;
    h->val_len = b->val_len;
    h->nval = b->nval;
    h->val_arena = b->val_arena;
    memcpy(h->type_names, b->type_names, sizeof(h->type_names));
    for (int c = 1; c < 32; c++) {
        const char *f = hscope__fixed_type_name(c);
        if (f)
            hscope__strlcpy(h->type_names[c], f, sizeof(h->type_names[c]));
    }
    b->addr = NULL; b->type = NULL; b->flags = NULL; b->detail = NULL;
    b->site = NULL; b->gen = NULL; b->memsize = NULL; b->size = NULL;
    b->edge_start = NULL;
    memset(&b->big_memsize, 0, sizeof(b->big_memsize));
    memset(&b->big_size, 0, sizeof(b->big_size));
    memset(&b->oids, 0, sizeof(b->oids));
    memset(&b->strings, 0, sizeof(b->strings));
    b->site_file = b->site_line = b->site_method = NULL;
    b->val_id = NULL; b->val_off = NULL; b->val_len = NULL;
    b->val_arena = NULL;
}

/* Objects of type names this version does not know, counted per name
 * from the type column (after the keys and flags the parser noted). */
static hscope_status
note_unknown_types(hscope_heap_t *h, hscope_error *err)
{
    uint64_t per[256] = { 0 };
    for (uint32_t i = 0; i < h->n; i++)
        per[h->type[i]]++;
    for (int t = 32; t < 256; t++) {
        if (!per[t])
            continue;
        hscope_status st = hscope__unknown_note(&h->mem, &h->unknown, HSCOPE_UNKNOWN_TYPE,
                                                h->type_names[t], strlen(h->type_names[t]),
                                                per[t], err);
        if (st != HSCOPE_OK)
            return st;
    }
    return HSCOPE_OK;
}

static void
fill_stats(hscope_heap_t *h, const hscope__builder *b)
{
    hscope_load_stats *s = &h->stats;
    s->size = sizeof(*s);
    s->bytes = b->bytes;
    s->lines = b->lines;
    s->objects = h->n;
    s->references = h->nedges;
    s->root_records = b->root_records;
    s->shapes = b->shapes;
    s->free_slots = b->free_slots;
    s->dangling_references = h->ndang;
    s->dangling_addresses = h->ndang_unique;
    s->duplicate_addresses = h->duplicates;
    s->unknown_keys = b->unknown_keys;
    s->unknown_types = b->unknown_types;
    s->truncated = b->truncated;
    s->object_ids = h->oids.len;
    uint64_t sk = 0;
    for (int i = 0; i < HSCOPE_SKIP__COUNT; i++) {
        h->skipped[i] = b->skipped[i];
        sk += b->skipped[i];
    }
    s->skipped_lines = sk;
    h->nskip = b->nskip_examples;
    memcpy(h->skip_line, b->skip_line, sizeof(h->skip_line));
    memcpy(h->skip_reason, b->skip_reason, sizeof(h->skip_reason));
    uint64_t tm = 0;
    for (uint32_t i = 0; i < h->n; i++)
        tm = hscope__sat_add(tm, hscope__memsize(h, i));
    s->total_memsize = tm;
}

hscope_status
hscope__model_build(hscope_heap_t *h, hscope__builder *b, unsigned threads,
                    hscope_error *err)
{
    hscope_status st;
    uint32_t *class_ix = b->class_ix;
    uint64_t *raw = b->edges;
    uint64_t nraw = b->nedges;
    b->class_ix = NULL;
    b->edges = NULL;
    if (b->n == 0 && b->edge_start == NULL) {
        b->edge_start = hscope__malloc(b->mem, sizeof(uint32_t));
        if (!b->edge_start) {
            st = hscope__nomem(err, sizeof(uint32_t));
            goto fail;
        }
    }
    take_columns(h, b);
    h->unknown = b->unknown; /* NULL for a dump without unknown fields */
    b->unknown = NULL;
    if (b->ntypes > 32 && (st = note_unknown_types(h, err)) != HSCOPE_OK)
        goto fail;
    size_t dcap = 0;
    if ((st = hscope__index_build(h, err)) != HSCOPE_OK)
        goto fail;
    if (h->n) {
        if ((st = resolve_classes(h, class_ix, b->cls_addr, b->ncls, err)) != HSCOPE_OK)
            goto fail;
        class_ix = NULL; /* now owned as h->cls */
    }
    if (raw || h->n) {
        if ((st = resolve_edges(h, raw, nraw, &dcap, threads, err)) != HSCOPE_OK)
            goto fail;
        raw = NULL; /* now h->edges */
    }
    if (!h->edges && !(h->edges = hscope__calloc(&h->mem, 1, sizeof(uint32_t)))) {
        /* never NULL: accessors do pointer arithmetic on it */
        st = hscope__nomem(err, sizeof(uint32_t));
        goto fail;
    }
    if ((st = resolve_roots(h, b, &dcap, err)) != HSCOPE_OK ||
        (st = count_dangling_unique(h, err)) != HSCOPE_OK ||
        (st = make_labels(h, err)) != HSCOPE_OK)
        goto fail;
    fill_stats(h, b);
    return HSCOPE_OK;
fail:
    hscope__free(&h->mem, class_ix);
    hscope__free(&h->mem, raw);
    return st;
}

void
hscope__model_free(hscope_heap_t *h)
{
    hscope__mem *m = &h->mem;
    void *ptrs[] = { h->addr, h->type, h->flags, h->cls, h->detail, h->site,
                     h->gen, h->memsize, h->size, h->edge_start, h->edges,
                     h->big_memsize.id, h->big_memsize.val, h->big_size.id,
                     h->big_size.val, h->oids.id, h->oids.val, h->unknown, h->ucls_id,
                     h->ucls_addr, h->site_file,
                     h->site_line, h->site_method, h->imemo_detail,
                     h->imemo_label, h->cat_name, h->cat_records, h->root_dang,
                     h->cat_start, h->cat_dangling, h->root_targets,
                     h->dang_from, h->dang_addr, h->val_id, h->val_off,
                     h->val_len, h->val_arena, h->index, h->rev_start,
                     h->rev_src, h->runs, h->rdir, h->rbits, h->rrank };
    for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
        if (!hscope__model_is_mapped(h, ptrs[i]))
            hscope__free(m, ptrs[i]);
    if (h->map) {
        /* the interner's arrays are in the mapping too */
        void *sp[] = { h->strings.arena, h->strings.off, h->strings.len,
                       h->strings.table, h->strings.hash };
        for (size_t i = 0; i < sizeof(sp) / sizeof(sp[0]); i++)
            if (!hscope__model_is_mapped(h, sp[i]))
                hscope__free(m, sp[i]);
        memset(&h->strings, 0, sizeof(h->strings));
        hscope__model_unmap(h);
    } else {
        hscope__intern_free(&h->strings);
    }
}
