/*
 * suspects.c - leak suspects: a diff's leaked objects, the dominator tree
 * of its heap, their holders ranked by the leaked memory each keeps alive
 * (the Ruby VM's own tables after every application holder), and
 * shortest paths from the roots to the holders.  For each holder: the
 * allocation sites of the leaked objects it holds, the first being those
 * whose objects sit directly in it (the line that put them there), what
 * names it on its path (the nearest class or module), and which VM table
 * it is, if one.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "diff.h"
#include "dominators.h"
#include "suspects.h"

#define NONE32 0xFFFFFFFFu

/* One allocation site (file, line, method) and class label of a holder's
 * leaked objects; the strings are the heap's. */
typedef struct ssite {
    uint32_t site, label, line;
    const char *file, *method, *cls;
    uint64_t count, memsize, entries, kept_count, kept_memsize;
} ssite;

/* What the suspects add to a holder. */
typedef struct sinfo {
    hscope_id owner;
    uint64_t owner_steps;
    uint64_t entries;
    uint64_t vm_entries;        /* entries that are VM tables */
    uint64_t vm_best_mem;
    hscope_id vm_best;          /* the largest of them */
    int32_t vm, vm_leaked;
    hscope_id vm_obj;
} sinfo;

struct hscope_suspects {
    hscope_diff_t *diff;        /* a reference (hscope__diff_ref) */
    hscope_domtree_t *tree;
    hscope_paths_t *paths;
    hscope_holders_t *holders;
    sinfo *info;                /* per holder, in the holders' order */
    uint64_t *site_start;       /* holders + 1: CSR into sites */
    ssite *sites;
};

void
hscope__suspects_free(hscope_suspects_t *s)
{
    if (!s)
        return;
    hscope_heap_t *h = hscope__diff_heap(s->diff);
    hscope_heap_t *keep = hscope__heap_ref(h); /* s itself lives in h's memory */
    hscope__free(&keep->mem, s->info);
    hscope__free(&keep->mem, s->site_start);
    hscope__free(&keep->mem, s->sites);
    hscope__holders_free(s->holders);
    hscope__paths_free(s->paths);
    hscope__domtree_free(s->tree);
    hscope__diff_free(s->diff);
    hscope__free(&keep->mem, s);
    hscope__heap_release(keep);
}

uint64_t
hscope__suspects_memory(const hscope_suspects_t *s)
{
    if (!s)
        return 0;
    const void *b[] = { s, s->info, s->site_start, s->sites };
    return hscope__msize_sum(b, 4) + hscope__domtree_memory(s->tree) +
           hscope__paths_memory(s->paths) + hscope__holders_memory(s->holders);
}

/* ------------------------------------------------------------------ */
/* the Ruby VM's own tables                                            */
/* ------------------------------------------------------------------ */

static const struct vmt {
    const char *name, *reason;
} vm_tables[] = {
    [HSCOPE_VM_TABLE_NONE] = { "", "" },
    [HSCOPE_VM_TABLE_FSTRING] = { "frozen-string table",
        "Ruby keeps one copy of each interned string (string literals, String#-@, "
        "frozen Hash keys) in this table; it grows, and is replaced by a larger one, as "
        "the program interns new strings such as the leaked objects': a consequence of "
        "the leak, not its place" },
    [HSCOPE_VM_TABLE_SYMBOL] = { "symbol table",
        "Ruby keeps every Symbol in this table; it grows as the program makes new "
        "symbols (String#to_sym, new method or variable names): a consequence of the "
        "leak, not its place" },
    [HSCOPE_VM_TABLE_OBJECT_ID] = { "object-id table",
        "Ruby keeps the objects whose object_id was asked for in this table; it grows "
        "as the program asks for the leaked objects' ids: a consequence of the leak, "
        "not its place" },
    [HSCOPE_VM_TABLE_SHAPES] = { "shape tree",
        "Ruby's object shapes (layouts of instance variables); it grows with each new "
        "layout the program makes" },
    [HSCOPE_VM_TABLE_TRACER] = { "allocation tracer",
        "ObjectSpace.trace_object_allocations keeps a record per traced object in this "
        "table; it grows with every allocation, the leaked objects' included: "
        "instrumentation, not the program's memory" },
    [HSCOPE_VM_TABLE_METHOD_CACHE] = { "method cache",
        "Ruby's method caches refer to the classes and methods last called: they hold "
        "what the program defines, not what it stores" },
    [HSCOPE_VM_TABLE_CONSTANT_CACHE] = { "constant cache",
        "Ruby's inline constant caches refer to the constants last read: they hold "
        "what the program defines, not what it stores" },
};

const char *
hscope__vm_table_name(int32_t kind)
{
    return kind > 0 && kind <= HSCOPE_VM_TABLE_CONSTANT_CACHE ? vm_tables[kind].name : "";
}

const char *
hscope__vm_table_reason(int32_t kind)
{
    return kind > 0 && kind <= HSCOPE_VM_TABLE_CONSTANT_CACHE ? vm_tables[kind].reason : "";
}

/* Does a root of category `name` reference object id directly? */
static int
root_holds(const hscope_heap_t *h, const char *name, hscope_id id)
{
    uint32_t nc = hscope__heap_root_category_count(h);
    for (uint32_t c = 0; c < nc; c++) {
        const char *cn = hscope__heap_root_category_name(h, c);
        const hscope_id *t;
        uint64_t k;
        if (!cn || strcmp(cn, name) || hscope__heap_root_targets(h, c, &t, &k, NULL) != HSCOPE_OK)
            continue;
        for (uint64_t j = 0; j < k; j++)
            if (t[j] == id)
                return 1;
    }
    return 0;
}

/*
 * The VM table an object is, by the names Ruby gives them: a DATA
 * object's "struct" (its rb_data_type_t's wrap_struct_name) or an IMEMO's
 * imemo_type.  Ruby 3.5+ and 4.0 keep both the frozen-string table and the
 * symbol table in a VM/concurrent_set (VM/ractor_safe_set while 3.5 was
 * developed): the symbol table is the one the global_symbols root marks.
 */
int32_t
hscope__vm_table_kind(const hscope_heap_t *h, hscope_id id)
{
    int32_t ty = hscope__heap_object_type(h, id);
    if (ty != HSCOPE_TYPE_DATA && ty != HSCOPE_TYPE_IMEMO)
        return HSCOPE_VM_TABLE_NONE;
    const char *d = hscope__heap_object_detail(h, id);
    if (!d)
        return HSCOPE_VM_TABLE_NONE;
    if (ty == HSCOPE_TYPE_IMEMO) {
        if (!strcmp(d, "callcache") || !strcmp(d, "callinfo"))
            return HSCOPE_VM_TABLE_METHOD_CACHE;
        return !strcmp(d, "constcache") ? HSCOPE_VM_TABLE_CONSTANT_CACHE : HSCOPE_VM_TABLE_NONE;
    }
    if (!strcmp(d, "VM/concurrent_set") || !strcmp(d, "VM/ractor_safe_set"))
        return root_holds(h, "global_symbols", id) ? HSCOPE_VM_TABLE_SYMBOL
                                                    : HSCOPE_VM_TABLE_FSTRING;
    if (!strcmp(d, "VM/_id2ref_table"))
        return HSCOPE_VM_TABLE_OBJECT_ID;
    if (!strcmp(d, "VM/shape_tree"))
        return HSCOPE_VM_TABLE_SHAPES;
    if (!strcmp(d, "ObjectTracing/allocation_info_tracer"))
        return HSCOPE_VM_TABLE_TRACER;
    if (!strcmp(d, "VM/cc_table"))
        return HSCOPE_VM_TABLE_METHOD_CACHE;
    return HSCOPE_VM_TABLE_NONE;
}

/* ------------------------------------------------------------------ */
/* each leaked object's entry and holder                               */
/* ------------------------------------------------------------------ */

/* A holder as a sortable key: object id, then root categories, then the
 * super-root. */
typedef struct hkey {
    uint64_t key;
    uint32_t i;
} hkey;

static uint64_t
vertex_key(hscope_id id, int32_t cat)
{
    return id != HSCOPE_ID_NONE ? id : cat >= 0 ? ((uint64_t)1 << 32) + (uint64_t)cat
                                                : (uint64_t)1 << 40;
}

static int
cmp_hkey(const void *a, const void *b)
{
    const hkey *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* One leaked object's contribution to a holder's site: its own (self) or
 * what an entry keeps (kept). */
typedef struct rec {
    uint32_t hi, site, label, entry;
    uint64_t self_mem, kept_mem;
    uint32_t self, kept;
} rec;

static int
cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

/* Sites that put objects in the holder first, by what they keep; then by
 * memsize, count, file, line, class, method. */
static int
cmp_site(const void *a, const void *b)
{
    const ssite *x = a, *y = b;
    if (x->kept_memsize != y->kept_memsize)
        return x->kept_memsize > y->kept_memsize ? -1 : 1;
    if (x->memsize != y->memsize)
        return x->memsize > y->memsize ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    int c = cmp_str(x->file, y->file);
    if (c)
        return c;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if ((c = cmp_str(x->cls, y->cls)))
        return c;
    return cmp_str(x->method, y->method);
}

/* Entry of leaked object x: the topmost leaked object of its dominator
 * chain below the holder (memoised in `entry`); NONE32 if unreachable. */
static uint32_t
entry_of(const hscope_domtree_t *t, const uint64_t *inset, uint32_t *entry, uint32_t x)
{
#define IN(v) (inset[(v) / 64] >> ((v) % 64) & 1)
    uint32_t v = x, e;
    hscope_id d;
    for (;;) {
        if (entry[v] != NONE32) {
            e = entry[v];
            break;
        }
        if (hscope__domtree_idom(t, v, &d, NULL) != HSCOPE_OK)
            return NONE32;
        if (d == HSCOPE_ID_NONE || !IN(d)) {
            e = v;
            break;
        }
        v = d;
    }
    for (v = x; entry[v] == NONE32; v = d) {
        entry[v] = e;
        if (v == e || hscope__domtree_idom(t, v, &d, NULL) != HSCOPE_OK)
            break;
    }
    return e;
#undef IN
}

/* The records of the leaked objects (two per object: its own site, and
 * its entry's), *nrec of them, and each holder's entries and VM tables
 * among them. */
static hscope_status
collect(hscope_suspects_t *s, const hkey *keys, uint64_t nh, rec *recs, size_t *nrec,
        hscope_error *err)
{
    hscope_heap_t *h = hscope__diff_heap(s->diff);
    const hscope_id *ids = hscope__diff_objects(s->diff);
    uint64_t n = hscope__diff_count(s->diff);
    uint64_t *inset = hscope__calloc(&h->mem, (size_t)h->n / 64 + 1, 8);
    uint32_t *entry = hscope__malloc(&h->mem, ((size_t)h->n + 1) * 4);
    if (!inset || !entry) {
        hscope__free(&h->mem, inset);
        hscope__free(&h->mem, entry);
        return hscope__nomem(err, ((size_t)h->n + 1) * 4);
    }
    memset(entry, 0xFF, ((size_t)h->n + 1) * 4);
    for (uint64_t i = 0; i < n; i++)
        inset[ids[i] / 64] |= (uint64_t)1 << (ids[i] % 64);
    size_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t x = ids[i], e = entry_of(s->tree, inset, entry, x);
        hscope_id d;
        int32_t cat = -1;
        if (e == NONE32 || hscope__domtree_idom(s->tree, e, &d, &cat) != HSCOPE_OK)
            continue; /* unreachable: held by nothing */
        hkey q = { vertex_key(d, cat), 0 };
        const hkey *f = bsearch(&q, keys, (size_t)nh, sizeof(hkey), cmp_hkey);
        if (!f)
            continue;
        uint64_t mem = hscope__memsize(h, x);
        recs[k++] = (rec){ f->i, h->site[x], hscope__label(h, x), x == e, mem, 0, 1, 0 };
        recs[k++] = (rec){ f->i, h->site[e], hscope__label(h, e), 0, 0, mem, 0, 1 };
        if (x == e) {
            sinfo *in = &s->info[f->i];
            in->entries++;
            int32_t vk = hscope__vm_table_kind(h, x);
            if (vk != HSCOPE_VM_TABLE_NONE) {
                in->vm_entries++;
                if (in->vm_entries == 1 || mem > in->vm_best_mem) {
                    in->vm_best_mem = mem;
                    in->vm_best = x;
                }
            }
        }
    }
    *nrec = k;
    hscope__free(&h->mem, inset);
    hscope__free(&h->mem, entry);
    return HSCOPE_OK;
}

/* Which holders are VM tables: the holder object is one, or every leaked
 * object it holds directly is one.  Then the order: application holders
 * first, VM tables after them, each part as before; *inv the new index of
 * each old one. */
static hscope_status
rank_vm_last(hscope_suspects_t *s, uint64_t nh, uint32_t *inv, hscope_error *err)
{
    hscope_heap_t *h = hscope__diff_heap(s->diff);
    uint32_t *order = hscope__malloc(&h->mem, (size_t)nh * 4 + 4);
    sinfo *info = hscope__malloc(&h->mem, (size_t)nh * sizeof(sinfo) + 1);
    if (!order || !info) {
        hscope__free(&h->mem, order);
        hscope__free(&h->mem, info);
        return hscope__nomem(err, (size_t)nh * sizeof(sinfo));
    }
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t i = 0; i < nh; i++) {
            sinfo *in = &s->info[i];
            if (pass == 0) {
                hscope_id id;
                hscope__holders_get(s->holders, i, &id, NULL, NULL, NULL);
                in->vm_obj = HSCOPE_ID_NONE;
                if (id != HSCOPE_ID_NONE && (in->vm = hscope__vm_table_kind(h, id)))
                    in->vm_obj = id;
                else if (in->entries && in->vm_entries == in->entries) {
                    in->vm = hscope__vm_table_kind(h, in->vm_best);
                    in->vm_leaked = 1;
                    in->vm_obj = in->vm_best;
                }
            }
            if ((in->vm != HSCOPE_VM_TABLE_NONE) == pass) {
                inv[i] = (uint32_t)k;
                order[k++] = (uint32_t)i;
            }
        }
    for (k = 0; k < nh; k++)
        info[k] = s->info[order[k]];
    hscope_status st = hscope__holders_reorder(s->holders, order, err);
    hscope__free(&h->mem, order);
    hscope__free(&h->mem, s->info);
    s->info = info;
    return st;
}

/* A (holder, site, class label) group of records and its sums. */
typedef struct rgroup {
    uint32_t hi, site, label;
    uint64_t self, self_mem, entry, kept, kept_mem;
} rgroup;

static int
cmp_rgroup(const void *a, const void *b)
{
    const rgroup *x = a, *y = b;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    if (x->site != y->site)
        return x->site < y->site ? -1 : 1;
    return x->label < y->label ? -1 : x->label > y->label;
}

static size_t
rgroup_hash(const rec *r)
{
    uint64_t k = ((uint64_t)r->hi << 32 | r->site) ^ (uint64_t)r->label * 0x9E3779B97F4A7C15ull;
    k *= 0xBF58476D1CE4E5B9ull;
    return (size_t)(k ^ (k >> 31));
}

/* The records summed per (holder, site, label) in a hash table: *out the
 * groups (*ng), unsorted.  Two records per leaked object fold into far
 * fewer groups, so only the groups are sorted. */
static hscope_status
group_recs(hscope__mem *m, const rec *recs, size_t nrec, rgroup **out, size_t *ng,
           hscope_error *err)
{
    size_t mask = 1023, n = 0, cap = 0;
    uint32_t *tab = hscope__calloc(m, mask + 1, sizeof(uint32_t));
    rgroup *g = NULL;
    if (!tab)
        return hscope__nomem(err, (mask + 1) * 4);
    hscope_status st = HSCOPE_OK;
    for (size_t k = 0; k < nrec && st == HSCOPE_OK; k++) {
        const rec *r = &recs[k];
        size_t i = rgroup_hash(r) & mask;
        uint32_t gi;
        while ((gi = tab[i]) != 0) {
            const rgroup *x = &g[gi - 1];
            if (x->hi == r->hi && x->site == r->site && x->label == r->label)
                break;
            i = (i + 1) & mask;
        }
        if (!gi) {
            if ((st = hscope__grow(m, (void **)&g, &cap, n + 1, sizeof(rgroup), err)) != HSCOPE_OK)
                break;
            g[n] = (rgroup){ r->hi, r->site, r->label, 0, 0, 0, 0, 0 };
            tab[i] = gi = (uint32_t)++n;
            if (n * 2 > mask) { /* rehash into twice the slots */
                size_t nm = mask * 2 + 1;
                uint32_t *nt = hscope__calloc(m, nm + 1, sizeof(uint32_t));
                if (!nt) {
                    st = hscope__nomem(err, (nm + 1) * 4);
                    break;
                }
                for (size_t e = 0; e < n; e++) {
                    rec probe = { g[e].hi, g[e].site, g[e].label, 0, 0, 0, 0, 0 };
                    size_t j = rgroup_hash(&probe) & nm;
                    while (nt[j])
                        j = (j + 1) & nm;
                    nt[j] = (uint32_t)(e + 1);
                }
                hscope__free(m, tab);
                tab = nt;
                mask = nm;
            }
        }
        rgroup *x = &g[gi - 1];
        x->self += r->self;
        x->self_mem += r->self_mem;
        x->entry += r->entry;
        x->kept += r->kept;
        x->kept_mem += r->kept_mem;
    }
    hscope__free(m, tab);
    if (st != HSCOPE_OK) {
        hscope__free(m, g);
        return st;
    }
    *out = g;
    *ng = n;
    return HSCOPE_OK;
}

/* The records folded into each holder's sites (grouped, the groups in
 * holder, site, label order), each holder's sites sorted. */
static hscope_status
fold_sites(hscope_suspects_t *s, rec *recs, size_t nrec, const uint32_t *inv, uint64_t nh,
           hscope_error *err)
{
    hscope_heap_t *h = hscope__diff_heap(s->diff);
    for (size_t k = 0; k < nrec; k++)
        recs[k].hi = inv[recs[k].hi];
    rgroup *g = NULL;
    size_t ns = 0;
    hscope_status st = group_recs(&h->mem, recs, nrec, &g, &ns, err);
    if (st != HSCOPE_OK)
        return st;
    if (ns)
        qsort(g, ns, sizeof(rgroup), cmp_rgroup);
    s->sites = hscope__calloc(&h->mem, ns + 1, sizeof(ssite));
    s->site_start = hscope__calloc(&h->mem, (size_t)nh + 1, sizeof(uint64_t));
    if (!s->sites || !s->site_start) {
        hscope__free(&h->mem, g);
        return hscope__nomem(err, (ns + 1) * sizeof(ssite));
    }
    for (size_t j = 0; j < ns; j++) {
        const rgroup *r = &g[j];
        ssite *x = &s->sites[j];
        x->site = r->site;
        x->label = r->label;
        x->file = hscope__intern_str(&h->strings, h->site_file[r->site]);
        x->line = h->site_line[r->site];
        x->method = hscope__intern_str(&h->strings, h->site_method[r->site]);
        x->cls = hscope__intern_str(&h->strings, r->label);
        s->site_start[r->hi + 1] = j + 1;
        x->count = r->self;
        x->memsize = r->self_mem;
        x->entries = r->entry;
        x->kept_count = r->kept;
        x->kept_memsize = r->kept_mem;
    }
    hscope__free(&h->mem, g);
    for (uint64_t i = 0; i < nh; i++) {
        if (s->site_start[i + 1] < s->site_start[i])
            s->site_start[i + 1] = s->site_start[i];
        size_t a = (size_t)s->site_start[i], b = (size_t)s->site_start[i + 1];
        if (b > a + 1)
            qsort(s->sites + a, b - a, sizeof(ssite), cmp_site);
    }
    return HSCOPE_OK;
}

/* What names each holder: the nearest CLASS or MODULE on its path. */
static hscope_status
find_owners(hscope_suspects_t *s, uint64_t nh, hscope_error *err)
{
    hscope_heap_t *h = hscope__diff_heap(s->diff);
    hscope_id *buf = NULL;
    uint64_t cap = 0;
    for (uint64_t i = 0; i < nh; i++) {
        sinfo *in = &s->info[i];
        in->owner = HSCOPE_ID_NONE;
        uint64_t len = hscope__suspects_path(s, i, NULL, 0, NULL);
        if (!len)
            continue;
        if (len > cap) {
            hscope__free(&h->mem, buf);
            cap = len;
            if (!(buf = hscope__malloc(&h->mem, (size_t)cap * sizeof(hscope_id))))
                return hscope__nomem(err, (size_t)cap * sizeof(hscope_id));
        }
        hscope__suspects_path(s, i, buf, len, NULL);
        for (uint64_t k = len; k-- > 0;) {
            int32_t t = hscope__heap_object_type(h, buf[k]);
            if (t == HSCOPE_TYPE_CLASS || t == HSCOPE_TYPE_MODULE) {
                in->owner = buf[k];
                in->owner_steps = len - 1 - k;
                break;
            }
        }
    }
    hscope__free(&h->mem, buf);
    return HSCOPE_OK;
}

static hscope_status
describe(hscope_suspects_t *s, hscope_error *err)
{
    hscope_heap_t *h = hscope__diff_heap(s->diff);
    uint64_t nh = hscope__holders_count(s->holders);
    uint64_t n = hscope__diff_count(s->diff);
    hkey *keys = hscope__malloc(&h->mem, (size_t)nh * sizeof(hkey) + 1);
    uint32_t *inv = hscope__malloc(&h->mem, (size_t)nh * 4 + 4);
    rec *recs = hscope__malloc(&h->mem, (size_t)n * 2 * sizeof(rec) + 1);
    s->info = hscope__calloc(&h->mem, (size_t)nh + 1, sizeof(sinfo));
    hscope_status st = HSCOPE_OK;
    size_t nrec = 0;
    if (!keys || !inv || !recs || !s->info) {
        st = hscope__nomem(err, (size_t)n * 2 * sizeof(rec));
        goto done;
    }
    for (uint64_t i = 0; i < nh; i++) {
        hscope_id id;
        int32_t cat;
        hscope__holders_get(s->holders, i, &id, &cat, NULL, NULL);
        keys[i] = (hkey){ vertex_key(id, cat), (uint32_t)i };
    }
    if (nh)
        qsort(keys, (size_t)nh, sizeof(hkey), cmp_hkey);
    if ((st = collect(s, keys, nh, recs, &nrec, err)) == HSCOPE_OK &&
        (st = rank_vm_last(s, nh, inv, err)) == HSCOPE_OK &&
        (st = fold_sites(s, recs, nrec, inv, nh, err)) == HSCOPE_OK)
        st = find_owners(s, nh, err);
done:
    hscope__free(&h->mem, keys);
    hscope__free(&h->mem, inv);
    hscope__free(&h->mem, recs);
    return st;
}

hscope_status
hscope__suspects_compute(hscope_suspects_t **out, hscope_diff_t *diff,
                         const hscope_dom_options *opts, hscope_error *err)
{
    hscope_heap_t *h = hscope__diff_heap(diff);
    hscope_suspects_t *s = hscope__calloc(&h->mem, 1, sizeof(*s));
    if (!s)
        return hscope__nomem(err, sizeof(*s));
    s->diff = hscope__diff_ref(diff);
    hscope_status st = hscope__domtree_compute(&s->tree, h, opts, err);
    if (st == HSCOPE_OK)
        st = hscope__paths_compute(&s->paths, h, opts, err);
    if (st == HSCOPE_OK)
        st = hscope__holders_compute(&s->holders, s->tree, hscope__diff_objects(diff),
                                    hscope__diff_count(diff), err);
    if (st == HSCOPE_OK)
        st = describe(s, err);
    if (st != HSCOPE_OK) {
        hscope__suspects_free(s);
        return st;
    }
    *out = s;
    return HSCOPE_OK;
}

hscope_diff_t *
hscope__suspects_diff(const hscope_suspects_t *s)
{
    return s->diff;
}

hscope_domtree_t *
hscope__suspects_domtree(const hscope_suspects_t *s)
{
    return s->tree;
}

const hscope_holders_t *
hscope__suspects_holders(const hscope_suspects_t *s)
{
    return s->holders;
}

const hscope_paths_t *
hscope__suspects_paths(const hscope_suspects_t *s)
{
    return s->paths;
}

uint64_t
hscope__suspects_path(const hscope_suspects_t *s, uint64_t i, hscope_id *out, uint64_t max,
                      int32_t *root_category)
{
    hscope_id holder;
    int32_t cat = -1;
    uint64_t c, m;
    if (hscope__holders_get(s->holders, i, &holder, &cat, &c, &m) != HSCOPE_OK) {
        if (root_category)
            *root_category = -1;
        return 0;
    }
    if (holder == HSCOPE_ID_NONE) {
        if (root_category)
            *root_category = cat;
        return 0;
    }
    return hscope__paths_get(s->paths, holder, out, max, root_category);
}

hscope_status
hscope__suspects_get(const hscope_suspects_t *s, uint64_t i, hscope_suspect *out)
{
    hscope_heap_t *h = hscope__diff_heap(s->diff);
    uint32_t size = out->size;
    memset(out, 0, sizeof(*out));
    out->size = size;
    hscope_status st = hscope__holders_get(s->holders, i, &out->holder, &out->root_category,
                                           &out->count, &out->memsize);
    if (st != HSCOPE_OK)
        return st;
    if (out->holder != HSCOPE_ID_NONE) {
        int32_t pcat = -1;
        if (!hscope__suspects_path(s, i, NULL, 0, &pcat))
            pcat = -1;
        out->root_category = pcat;
    }
    const sinfo *in = &s->info[i];
    out->owner = in->owner;
    out->owner_name = in->owner != HSCOPE_ID_NONE ? hscope__heap_object_label(h, in->owner) : NULL;
    out->owner_steps = in->owner != HSCOPE_ID_NONE ? in->owner_steps : 0;
    out->entries = in->entries;
    out->site_count = s->site_start[i + 1] - s->site_start[i];
    out->vm_table = in->vm;
    out->vm_table_leaked = in->vm ? in->vm_leaked : 0;
    out->vm_table_object = in->vm ? in->vm_obj : HSCOPE_ID_NONE;
    out->vm_table_name = in->vm ? hscope__vm_table_name(in->vm) : NULL;
    out->vm_table_reason = in->vm ? hscope__vm_table_reason(in->vm) : NULL;
    return HSCOPE_OK;
}

hscope_status
hscope__suspects_site_get(const hscope_suspects_t *s, uint64_t i, uint64_t j,
                          hscope_suspect_site *out)
{
    if (i >= hscope__holders_count(s->holders) || j >= s->site_start[i + 1] - s->site_start[i])
        return HSCOPE_ERR_NOT_FOUND;
    const ssite *x = &s->sites[s->site_start[i] + j];
    uint32_t size = out->size;
    memset(out, 0, sizeof(*out));
    out->size = size;
    out->line = x->line;
    out->file = x->file;
    out->method = x->method;
    out->class_label = x->cls;
    out->count = x->count;
    out->memsize = x->memsize;
    out->entries = x->entries;
    out->kept_count = x->kept_count;
    out->kept_memsize = x->kept_memsize;
    return HSCOPE_OK;
}
