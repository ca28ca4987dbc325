/*
 * builder.c - columns under construction, sites and type codes.
 */
#include "builder.h"

#include <string.h>

static const char *const fixed_types[32] = {
    [HSCOPE_TYPE_OBJECT] = "OBJECT",     [HSCOPE_TYPE_CLASS] = "CLASS",
    [HSCOPE_TYPE_MODULE] = "MODULE",     [HSCOPE_TYPE_ICLASS] = "ICLASS",
    [HSCOPE_TYPE_FLOAT] = "FLOAT",       [HSCOPE_TYPE_STRING] = "STRING",
    [HSCOPE_TYPE_REGEXP] = "REGEXP",     [HSCOPE_TYPE_ARRAY] = "ARRAY",
    [HSCOPE_TYPE_HASH] = "HASH",         [HSCOPE_TYPE_STRUCT] = "STRUCT",
    [HSCOPE_TYPE_BIGNUM] = "BIGNUM",     [HSCOPE_TYPE_FILE] = "FILE",
    [HSCOPE_TYPE_DATA] = "DATA",         [HSCOPE_TYPE_MATCH] = "MATCH",
    [HSCOPE_TYPE_SYMBOL] = "SYMBOL",     [HSCOPE_TYPE_RATIONAL] = "RATIONAL",
    [HSCOPE_TYPE_COMPLEX] = "COMPLEX",   [HSCOPE_TYPE_IMEMO] = "IMEMO",
    [HSCOPE_TYPE_NODE] = "NODE",         [HSCOPE_TYPE_ZOMBIE] = "ZOMBIE",
    [HSCOPE_TYPE_NIL] = "NIL",           [HSCOPE_TYPE_TRUE] = "TRUE",
    [HSCOPE_TYPE_FALSE] = "FALSE",       [HSCOPE_TYPE_FIXNUM] = "FIXNUM",
    [HSCOPE_TYPE_UNDEF] = "UNDEF",       [HSCOPE_TYPE_MOVED] = "MOVED",
    [HSCOPE_TYPE_UNKNOWN] = "UNKNOWN",
};

const char *
hscope__fixed_type_name(int code)
{
    return code > 0 && code < 32 ? fixed_types[code] : NULL;
}

int
hscope__type_code(hscope__builder *b, const char *s, size_t n)
{
    /* The most common types first, then every fixed name. */
#define T(lit, code) if (n == sizeof(lit) - 1 && memcmp(s, lit, n) == 0) return code
    switch (n ? s[0] : 0) {
    case 'S': T("STRING", HSCOPE_TYPE_STRING); T("STRUCT", HSCOPE_TYPE_STRUCT);
              T("SYMBOL", HSCOPE_TYPE_SYMBOL); break;
    case 'I': T("IMEMO", HSCOPE_TYPE_IMEMO); T("ICLASS", HSCOPE_TYPE_ICLASS); break;
    case 'A': T("ARRAY", HSCOPE_TYPE_ARRAY); break;
    case 'H': T("HASH", HSCOPE_TYPE_HASH); break;
    case 'O': T("OBJECT", HSCOPE_TYPE_OBJECT); break;
    case 'C': T("CLASS", HSCOPE_TYPE_CLASS); break;
    case 'D': T("DATA", HSCOPE_TYPE_DATA); break;
    default: break;
    }
#undef T
    for (int c = 1; c < 32; c++) {
        const char *f = fixed_types[c];
        if (f && f[0] == s[0] && strlen(f) == n && memcmp(f, s, n) == 0)
            return c;
    }
    for (int c = 32; c < b->ntypes; c++) {
        const char *f = b->type_names[c];
        if (strlen(f) == n && memcmp(f, s, n) == 0 && n < sizeof(b->type_names[c]))
            return c;
    }
    if (b->ntypes < HSCOPE_TYPE_OTHER && n < sizeof(b->type_names[0]) &&
        memchr(s, 0, n) == NULL) {
        memcpy(b->type_names[b->ntypes], s, n);
        b->type_names[b->ntypes][n] = '\0';
        return b->ntypes++;
    }
    return HSCOPE_TYPE_OTHER;
}

hscope_status
hscope__builder_init(hscope__builder *b, hscope__mem *m, int keep_values,
                     uint64_t max_objects, hscope_error *err)
{
    memset(b, 0, sizeof(*b));
    b->mem = m;
    b->keep_values = keep_values;
    b->ntypes = 32;
    b->max_objects = max_objects && max_objects < (uint64_t)UINT32_MAX - 1
                         ? max_objects : (uint64_t)UINT32_MAX - 1;
    memcpy(b->type_names[HSCOPE_TYPE_OTHER], "(other)", 8);
    hscope_status st = hscope__intern_init(&b->strings, m, err);
    if (st != HSCOPE_OK)
        return st;
    b->site_table = hscope__calloc(m, 1024, sizeof(uint32_t));
    if (!b->site_table)
        return hscope__nomem(err, 1024 * sizeof(uint32_t));
    b->site_mask = 1023;
    /* site 0: no file, no line, no method */
    if ((st = hscope__grow(m, (void **)&b->site_file, &b->site_cap, 64,
                           sizeof(uint32_t), err)) != HSCOPE_OK)
        return st;
    b->site_line = hscope__malloc(m, b->site_cap * sizeof(uint32_t));
    b->site_method = hscope__malloc(m, b->site_cap * sizeof(uint32_t));
    if (!b->site_line || !b->site_method)
        return hscope__nomem(err, b->site_cap * sizeof(uint32_t));
    b->site_file[0] = b->site_line[0] = b->site_method[0] = 0;
    b->nsites = 1;
    return HSCOPE_OK;
}

void
hscope__builder_note_skip(hscope__builder *b, int reason, uint64_t lineno)
{
    b->skipped[reason]++;
    if (b->nskip_examples < HSCOPE__MAX_SKIP_EXAMPLES) {
        b->skip_line[b->nskip_examples] = lineno;
        b->skip_reason[b->nskip_examples++] = reason;
    }
}

void
hscope__builder_free(hscope__builder *b)
{
    hscope__mem *m = b->mem;
    if (!m)
        return;
    hscope__intern_free(&b->strings);
    void *ptrs[] = { b->addr, b->type, b->flags, b->class_ix, b->cls_addr, b->cls_tab, b->detail,
                     b->site, b->gen, b->memsize, b->size, b->edge_start,
                     b->edges, b->site_file, b->site_line, b->site_method,
                     b->site_table, b->root_cat, b->root_addr, b->cat_name,
                     b->cat_records, b->val_id, b->val_off, b->val_len,
                     b->val_arena, b->big_memsize.id, b->big_memsize.val,
                     b->big_size.id, b->big_size.val, b->oids.id, b->oids.val,
                     b->unknown };
    for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
        hscope__free(m, ptrs[i]);
    memset(b, 0, sizeof(*b));
}

static inline size_t
cls_slot(uint64_t addr, size_t mask)
{
    uint64_t x = addr * 0x9E3779B97F4A7C15ull;
    return (size_t)(x ^ (x >> 29)) & mask;
}

hscope_status
hscope__builder_class_find(hscope__builder *b, uint64_t addr, uint32_t *ix, hscope_error *err)
{
    if (!addr) {
        *ix = 0;
        return HSCOPE_OK;
    }
    hscope_status st;
    if (!b->cls_tab || (b->ncls + 1) * 2 > b->cls_mask + 1) {
        size_t nc = b->cls_tab ? (b->cls_mask + 1) * 2 : 256;
        uint32_t *t = hscope__calloc(b->mem, nc, sizeof(uint32_t));
        if (!t)
            return hscope__nomem(err, nc * sizeof(uint32_t));
        for (size_t i = 1; i < b->ncls; i++) {
            size_t s = cls_slot(b->cls_addr[i], nc - 1);
            while (t[s])
                s = (s + 1) & (nc - 1);
            t[s] = (uint32_t)i;
        }
        hscope__free(b->mem, b->cls_tab);
        b->cls_tab = t;
        b->cls_mask = nc - 1;
        if (!b->ncls) {
            /* index 0: no class */
            if ((st = hscope__grow(b->mem, (void **)&b->cls_addr, &b->cls_cap, 64,
                                   sizeof(uint64_t), err)) != HSCOPE_OK)
                return st;
            b->cls_addr[0] = 0;
            b->ncls = 1;
        }
    }
    size_t s = cls_slot(addr, b->cls_mask);
    uint32_t i;
    while ((i = b->cls_tab[s]) != 0) {
        if (b->cls_addr[i] == addr) {
            *ix = b->cls_last = i;
            return HSCOPE_OK;
        }
        s = (s + 1) & b->cls_mask;
    }
    if (b->ncls >= UINT32_MAX - 1)
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "more than 2^32-2 distinct class addresses");
    if ((st = hscope__grow(b->mem, (void **)&b->cls_addr, &b->cls_cap, b->ncls + 1,
                           sizeof(uint64_t), err)) != HSCOPE_OK)
        return st;
    i = (uint32_t)b->ncls++;
    b->cls_addr[i] = addr;
    b->cls_tab[s] = i;
    *ix = b->cls_last = i;
    return HSCOPE_OK;
}

static inline uint64_t
site_hash(uint32_t f, uint32_t l, uint32_t m)
{
    return hscope__hash3(f, l, m);
}

static hscope_status
site_rehash(hscope__builder *b, hscope_error *err)
{
    size_t nc = (b->site_mask + 1) * 2;
    uint32_t *t = hscope__calloc(b->mem, nc, sizeof(uint32_t));
    if (!t)
        return hscope__nomem(err, nc * sizeof(uint32_t));
    for (size_t id = 1; id < b->nsites; id++) {
        size_t i = (size_t)site_hash(b->site_file[id], b->site_line[id],
                                     b->site_method[id]) & (nc - 1);
        while (t[i])
            i = (i + 1) & (nc - 1);
        t[i] = (uint32_t)id;
    }
    hscope__free(b->mem, b->site_table);
    b->site_table = t;
    b->site_mask = nc - 1;
    return HSCOPE_OK;
}

hscope_status
hscope__builder_site(hscope__builder *b, uint32_t file, uint32_t line,
                     uint32_t method, uint32_t *out, hscope_error *err)
{
    if (!file && !line && !method) {
        *out = 0;
        return HSCOPE_OK;
    }
    /* consecutive objects often come from the same site */
    if (b->last_site && b->site_file[b->last_site] == file &&
        b->site_line[b->last_site] == line && b->site_method[b->last_site] == method) {
        *out = b->last_site;
        return HSCOPE_OK;
    }
    size_t i = (size_t)site_hash(file, line, method) & b->site_mask;
    for (uint32_t id; (id = b->site_table[i]) != 0; i = (i + 1) & b->site_mask) {
        if (b->site_file[id] == file && b->site_line[id] == line &&
            b->site_method[id] == method) {
            *out = b->last_site = id;
            return HSCOPE_OK;
        }
    }
    if (b->nsites == b->site_cap) {
        size_t c0 = b->site_cap;
        hscope_status st = hscope__grow(b->mem, (void **)&b->site_file,
                                        &b->site_cap, b->nsites + 1,
                                        sizeof(uint32_t), err);
        if (st != HSCOPE_OK)
            return st;
        uint32_t *l = hscope__realloc(b->mem, b->site_line, b->site_cap * sizeof(uint32_t));
        if (!l) {
            b->site_cap = c0;
            return hscope__nomem(err, 0);
        }
        b->site_line = l;
        uint32_t *m = hscope__realloc(b->mem, b->site_method, b->site_cap * sizeof(uint32_t));
        if (!m) {
            b->site_cap = c0;
            return hscope__nomem(err, 0);
        }
        b->site_method = m;
    }
    uint32_t id = (uint32_t)b->nsites++;
    b->site_file[id] = file;
    b->site_line[id] = line;
    b->site_method[id] = method;
    b->site_table[i] = id;
    *out = b->last_site = id;
    if (b->nsites * 2 > b->site_mask + 1)
        return site_rehash(b, err);
    return HSCOPE_OK;
}

hscope_status
hscope__bigvals_push(hscope__mem *m, hscope__bigvals *bv, uint32_t id, uint64_t v,
                     hscope_error *err)
{
    hscope_status st;
    if ((st = hscope__grow(m, (void **)&bv->id, &bv->cap_id, bv->len + 1,
                           sizeof(uint32_t), err)) != HSCOPE_OK ||
        (st = hscope__grow(m, (void **)&bv->val, &bv->cap_val, bv->len + 1,
                           sizeof(uint64_t), err)) != HSCOPE_OK)
        return st;
    bv->id[bv->len] = id;
    bv->val[bv->len++] = v;
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* fields this version does not know                                    */
/* ------------------------------------------------------------------ */

/* The table, made on first use. */
static hscope__unknowns *
unknowns(hscope__mem *m, hscope__unknowns **up, hscope_error *err)
{
    if (!*up && !(*up = hscope__calloc(m, 1, sizeof(**up))))
        hscope__nomem(err, sizeof(**up));
    return *up;
}

hscope_status
hscope__unknown_note(hscope__mem *m, hscope__unknowns **up, int32_t kind, const char *name,
                     size_t n, uint64_t count, hscope_error *err)
{
    hscope__unknowns *u = unknowns(m, up, err);
    if (!u)
        return err->status;
    if (n >= HSCOPE__UNKNOWN_NAME)
        n = HSCOPE__UNKNOWN_NAME - 1;
    for (uint32_t i = 0; i < u->n; i++) {
        hscope__unknown *e = &u->e[i];
        if (e->kind == kind && strncmp(e->name, name, n) == 0 && e->name[n] == '\0') {
            e->count += count;
            return HSCOPE_OK;
        }
    }
    if (u->n == HSCOPE__MAX_UNKNOWN) {
        u->other += count;
        return HSCOPE_OK;
    }
    hscope__unknown *e = &u->e[u->n++];
    e->kind = kind;
    e->count = count;
    memcpy(e->name, name, n);
    e->name[n] = '\0';
    return HSCOPE_OK;
}

hscope_status
hscope__builder_merge_side(hscope__builder *out, hscope__builder *b, hscope_error *err)
{
    hscope_status st = HSCOPE_OK;
    /* b's objects are the last b->n of out's; a sink took them one by one
     * (with their object ids), so then there is nothing to keep */
    uint32_t shift = (uint32_t)(out->n - b->n);
    for (size_t i = 0; !out->sink && i < b->oids.len && st == HSCOPE_OK; i++)
        st = hscope__bigvals_push(out->mem, &out->oids, b->oids.id[i] + shift, b->oids.val[i], err);
    const hscope__unknowns *u = b->unknown;
    for (uint32_t i = 0; u && i < u->n && st == HSCOPE_OK; i++)
        st = hscope__unknown_note(out->mem, &out->unknown, u->e[i].kind, u->e[i].name,
                                  strlen(u->e[i].name), u->e[i].count, err);
    if (u && u->other && st == HSCOPE_OK) {
        hscope__unknowns *o = unknowns(out->mem, &out->unknown, err);
        if (!o)
            return err->status;
        o->other += u->other;
    }
    b->oids.len = 0;
    if (b->unknown)
        memset(b->unknown, 0, sizeof(*b->unknown));
    return st;
}
