/*
 * w_objects.c - everything about some objects (kind "objects", the show
 * command): text and JSON.
 */
#include <stdio.h>
#include <string.h>

#include "../model/model.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "table.h"
#include "writers.h"

/* Text output: a record line is at most this many bytes, its label and
 * the note of what was cut included (JSON: the whole record). */
#define RECORD_MAX 2000
/* Text output: the first bytes of a string value. */
#define VALUE_MAX 200

static const char *const flag_names[] = { "frozen", "embedded", "shared", "fstring",
    "old", "marked", "uncollectible", "wb_protected", "pinned", "broken",
    "marking", "remembered", "singleton", "chilled", "shareable" };
#define NFLAGS (sizeof(flag_names) / sizeof(flag_names[0]))

typedef struct one {
    hscope_heap_t *h;
    hscope_id id;
    uint64_t addr;
    const char *record;     /* the dump's line, or NULL */
    const hscope_id *refs, *srcs;
    uint64_t nrefs, nsrcs;
    const char *value;      /* with HSCOPE_REPORT_VALUES, when loaded */
    uint64_t vlen;
} one;

/* The record with every "value" string replaced (dumps hold secrets),
 * into a buffer of the heap's allocator; NULL on allocation failure. */
static char *
hide_values(hscope__mem *m, const char *line, size_t *len)
{
    static const char key[] = "\"value\":\"", rep[] = "\"value\":\"(hidden)\"";
    size_t n = strlen(line);
    char *out = hscope__malloc(m, n + 1 + (n / 10 + 1) * sizeof(rep));
    if (!out)
        return NULL;
    size_t o = 0;
    const char *p = line, *v;
    while ((v = strstr(p, key)) != NULL) {
        memcpy(out + o, p, (size_t)(v - p));
        o += (size_t)(v - p);
        memcpy(out + o, rep, sizeof(rep) - 1);
        o += sizeof(rep) - 1;
        const char *q = v + sizeof(key) - 1;
        while (*q && *q != '"')
            q += (*q == '\\' && q[1]) ? 2 : 1;
        p = *q ? q + 1 : q;
    }
    memcpy(out + o, p, strlen(p) + 1);
    *len = o + strlen(p);
    return out;
}

/* The record as the output shows it: values hidden unless asked for. */
static const char *
shown_record(const one *x, const hscope__ropts *ro, char **owned, size_t *len)
{
    *owned = NULL;
    if (!x->record)
        return NULL;
    if (ro->flags & HSCOPE_REPORT_VALUES) {
        *len = strlen(x->record);
        return x->record;
    }
    *owned = hide_values(&x->h->mem, x->record, len);
    return *owned;
}

static hscope_status
gather(one *x, const hscope__ropts *ro, hscope_error *err)
{
    hscope__heap_object_references(x->h, x->id, &x->refs, &x->nrefs);
    hscope_status st = hscope__heap_object_referrers(x->h, x->id, &x->srcs, &x->nsrcs, err);
    if (st != HSCOPE_OK)
        return st;
    x->value = NULL;
    if ((ro->flags & HSCOPE_REPORT_VALUES) &&
        hscope__heap_object_value(x->h, x->id, &x->value, &x->vlen) != HSCOPE_OK)
        x->value = NULL;
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

/* The list k of n objects: all of them, or with HSCOPE_REPORT_LISTS_TOP
 * the first `top` and "K_count". */
static void
json_list(hscope__json *w, const char *k, const hscope_heap_t *h, const hscope_id *ids,
          uint64_t n, const hscope__ropts *ro)
{
    uint64_t shown = n;
    if (ro->flags & HSCOPE_REPORT_LISTS_TOP) {
        char key[32];
        snprintf(key, sizeof(key), "%s_count", k);
        hscope__json_ku64(w, key, n);
        shown = ro->top < n ? ro->top : n;
    }
    hscope__json_key(w, k);
    hscope__json_arr(w);
    for (uint64_t i = 0; i < shown; i++) {
        hscope__json_obj(w);
        hscope__json_objref_fields(w, h, ids[i]);
        hscope__json_ku64(w, "memsize", hscope__heap_object_memsize(h, ids[i]));
        hscope__json_end_obj(w);
    }
    hscope__json_end_arr(w);
}

static void
json_record(hscope__json *w, const one *x, const hscope__ropts *ro)
{
    char *owned;
    size_t len = 0;
    const char *rec = shown_record(x, ro, &owned, &len);
    hscope__json_key(w, "record");
    if (!rec)
        hscope__json_null(w); /* not given, or loaded from a saved index */
    else if (hscope__json_valid(rec, len))
        hscope__json_raw(w, rec, len);
    else
        hscope__json_strn(w, rec, len); /* not a JSON value: as text */
    hscope__free(&x->h->mem, owned);
}

static void
json_site(hscope__json *w, const one *x)
{
    const hscope_heap_t *h = x->h;
    hscope__json_kstr(w, "file", hscope__heap_object_file(h, x->id));
    hscope__json_ku64(w, "line", hscope__heap_object_line(h, x->id));
    hscope__json_kstr(w, "method", hscope__heap_object_method(h, x->id));
    int64_t gen = hscope__heap_object_generation(h, x->id);
    hscope__json_key(w, "generation");
    if (gen >= 0)
        hscope__json_i64(w, gen);
    else
        hscope__json_null(w);
}

static void
json_one(hscope__json *w, const one *x, const hscope__ropts *ro)
{
    const hscope_heap_t *h = x->h;
    hscope__json_obj(w);
    hscope__json_objref_fields(w, h, x->id);
    hscope__json_key(w, "found");
    hscope__json_bool(w, 1);
    uint64_t ca = hscope__heap_object_class_address(h, x->id);
    hscope__json_key(w, "class_address");
    if (ca)
        hscope__json_addr(w, ca);
    else
        hscope__json_null(w);
    hscope__json_kstr(w, "detail", hscope__heap_object_detail(h, x->id));
    hscope__json_ku64(w, "memsize", hscope__heap_object_memsize(h, x->id));
    hscope__json_ku64(w, "size", hscope__heap_object_size(h, x->id));
    json_site(w, x);
    hscope__json_key(w, "flags");
    hscope__json_arr(w);
    uint32_t f = hscope__heap_object_flags(h, x->id);
    for (size_t b = 0; b < NFLAGS; b++)
        if (f & (1u << b))
            hscope__json_str(w, flag_names[b]);
    hscope__json_end_arr(w);
    /* Ruby 4.0+: whose instance variables an IMEMO fields object holds;
     * Ruby's object_id when the dump has it (members only then) */
    hscope_id owner = hscope__heap_object_owner(h, x->id);
    if (owner != HSCOPE_ID_NONE) {
        hscope__json_key(w, "owner");
        hscope__json_obj(w);
        hscope__json_objref_fields(w, h, owner);
        hscope__json_end_obj(w);
    }
    uint64_t oid;
    if (hscope__heap_object_oid(h, x->id, &oid))
        hscope__json_ku64(w, "object_id", oid);
    if (ro->flags & HSCOPE_REPORT_VALUES) {
        hscope__json_key(w, "value");
        if (x->value)
            hscope__json_strn(w, x->value, (size_t)x->vlen);
        else
            hscope__json_null(w);
    }
    json_record(w, x, ro);
    json_list(w, "references", h, x->refs, x->nrefs, ro);
    json_list(w, "referrers", h, x->srcs, x->nsrcs, ro);
    hscope__json_end_obj(w);
}

/* ------------------------------------------------------------------ */
/* Text                                                                */
/* ------------------------------------------------------------------ */

typedef struct idlist {
    const hscope_heap_t *h;
    const hscope_id *ids;
} idlist;

static const char *
label_of(const void *ctx, uint64_t i)
{
    const idlist *l = ctx;
    return hscope__heap_object_label(l->h, l->ids[i]);
}

/* The first `top` of a list of objects: address, type, label, memsize. */
static void
text_list(hscope__out *o, const hscope__ropts *ro, const hscope_heap_t *h, const char *title,
          const hscope_id *ids, uint64_t n)
{
    char c[32];
    hscope__fmt_count(n, c, sizeof(c));
    hscope__out_printf(o, "%s (%s):\n", title, c);
    uint64_t shown = ro->top < n ? ro->top : n;
    idlist ctx = { h, ids };
    hscope__table tb;
    hscope__table_init_fn(&tb, o, ro, "label", label_of, &ctx, shown);
    hscope__table_lead(&tb, "address", 16);
    hscope__table_lead(&tb, "type", 8);
    hscope__table_col(&tb, "memsize", 10);
    for (uint64_t i = 0; i < shown; i++) {
        char a[24], m[32];
        snprintf(a, sizeof(a), "0x%llx", (unsigned long long)hscope__heap_object_address(h, ids[i]));
        hscope__fmt_bytes((double)hscope__heap_object_memsize(h, ids[i]), m, sizeof(m));
        const char *leads[2] = { a, hscope__type_name(h, ids[i]) };
        const char *cells[1] = { m };
        hscope__table_row_lead(&tb, leads, hscope__heap_object_label(h, ids[i]), cells);
    }
    if (shown < n) {
        hscope__fmt_count(n - shown, c, sizeof(c));
        hscope__out_printf(o, "  %s %s more\n", tb.ascii ? "..." : "\xe2\x80\xa6", c);
    }
}

/* s[0..len) cut at a character boundary, with the number of bytes left
 * out, so that the line (`used` bytes before s, s and the note) holds at
 * most `max` bytes; with used 0 and no cut, s is `max` bytes at most. */
static void
text_cut(hscope__out *o, const hscope__ropts *ro, const char *s, size_t len, size_t max,
         size_t used, const char *what)
{
    const char *mark = (ro->flags & HSCOPE_REPORT_ASCII) ? "..." : "\xe2\x80\xa6";
    char note[160] = "";
    size_t keep = len;
    if (used + len > max) {
        /* the note's length depends on the count it gives: settle it */
        size_t room = max > used ? max - used : 0;
        keep = 0;
        for (int pass = 0; pass < 3; pass++) {
            char n[32];
            hscope__fmt_count((uint64_t)(len - keep), n, sizeof(n));
            snprintf(note, sizeof(note), " %s (%s more bytes cut%s)", mark, n, what);
            size_t nl = strlen(note);
            keep = room > nl ? room - nl : 0;
            if (keep > len)
                keep = len;
        }
        while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--; /* not inside a UTF-8 sequence */
        char n[32];
        hscope__fmt_count((uint64_t)(len - keep), n, sizeof(n));
        snprintf(note, sizeof(note), " %s (%s more bytes cut%s)", mark, n, what);
    }
    hscope__out_write(o, s, keep);
    hscope__out_puts(o, note);
}

static void
text_head(hscope__out *o, const one *x)
{
    const hscope_heap_t *h = x->h;
    char m[32];
    hscope__fmt_bytes((double)hscope__heap_object_memsize(h, x->id), m, sizeof(m));
    hscope__out_printf(o, "0x%llx  %s  %s  memsize %s", (unsigned long long)x->addr,
                       hscope__type_name(h, x->id), hscope__heap_object_label(h, x->id), m);
    if (hscope__heap_object_size(h, x->id)) {
        hscope__fmt_count(hscope__heap_object_size(h, x->id), m, sizeof(m));
        hscope__out_printf(o, "  size %s", m);
    }
    hscope__out_putc(o, '\n');
    if (hscope__heap_object_detail(h, x->id))
        hscope__out_printf(o, "  detail:     %s\n", hscope__heap_object_detail(h, x->id));
    const char *file = hscope__heap_object_file(h, x->id), *meth = hscope__heap_object_method(h, x->id);
    int64_t gen = hscope__heap_object_generation(h, x->id);
    if (file || gen >= 0)
        hscope__out_printf(o, "  allocated:  %s:%u%s%s, generation %lld\n", file ? file : "(none)",
                           hscope__heap_object_line(h, x->id), meth ? " in " : "",
                           meth ? meth : "", (long long)gen);
    else
        hscope__out_puts(o, "  allocated:  (no allocation info: trace_object_allocations was off)\n");
    hscope__out_puts(o, "  flags:      ");
    uint32_t f = hscope__heap_object_flags(h, x->id);
    int first = 1;
    for (size_t b = 0; b < NFLAGS; b++)
        if (f & (1u << b)) {
            hscope__out_printf(o, "%s%s", first ? "" : ", ", flag_names[b]);
            first = 0;
        }
    hscope__out_puts(o, first ? "(none)\n" : "\n");
    hscope_id owner = hscope__heap_object_owner(h, x->id);
    if (owner != HSCOPE_ID_NONE)
        hscope__out_printf(o, "  owner:      0x%llx %s (these are its instance variables)\n",
                           (unsigned long long)hscope__heap_object_address(h, owner),
                           hscope__heap_object_label(h, owner));
    uint64_t oid;
    if (hscope__heap_object_oid(h, x->id, &oid))
        hscope__out_printf(o, "  object_id:  %llu\n", (unsigned long long)oid);
}

static void
text_one(hscope__out *o, const one *x, const hscope__ropts *ro, int from_index)
{
    text_head(o, x);
    if (x->value) {
        hscope__out_puts(o, "  value:      ");
        text_cut(o, ro, x->value, (size_t)x->vlen, VALUE_MAX, 0, "");
        hscope__out_putc(o, '\n');
    }
    char *owned;
    size_t len = 0;
    const char *rec = shown_record(x, ro, &owned, &len);
    if (rec) {
        static const char label[] = "  record:     ";
        hscope__out_puts(o, label);
        text_cut(o, ro, rec, len, RECORD_MAX, sizeof(label) - 1,
                 "; the JSON output has the whole record");
        hscope__out_putc(o, '\n');
    } else if (from_index) {
        hscope__out_puts(o, "  record:     (not kept in the saved index: the dump itself has it)\n");
    }
    hscope__free(&x->h->mem, owned);
    text_list(o, ro, x->h, "references", x->refs, x->nrefs);
    text_list(o, ro, x->h, "referenced by", x->srcs, x->nsrcs);
    hscope__out_putc(o, '\n');
}

hscope_status
hscope__objects_write(hscope_heap_t *h, const uint64_t *addrs, uint64_t n,
                      const char *const *records, const hscope__ropts *ro, hscope__out *o,
                      hscope_error *err)
{
    hscope__warnings ws;
    ws.n = 0;
    hscope__warn_heap(&ws, hscope__ropts_dump_name(ro, 0), h);
    hscope_load_stats s;
    hscope__load_stats_init(&s);
    hscope__heap_stats(h, &s);
    int json = ro->format == HSCOPE_FORMAT_JSON;
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    if (json) {
        hscope__json_begin_doc(&w, "objects");
        hscope__json_dumps_of_heap(&w, ro, h, 0);
        hscope__json_key(&w, "objects");
        hscope__json_arr(&w);
    } else {
        hscope__text_warnings(o, ro, &ws);
    }
    hscope_status st = HSCOPE_OK;
    for (uint64_t i = 0; i < n && st == HSCOPE_OK; i++) {
        one x = { h, 0, addrs[i], records ? records[i] : NULL, NULL, NULL, 0, 0, NULL, 0 };
        if (hscope__heap_find(h, addrs[i], &x.id) != HSCOPE_OK) {
            if (json) {
                hscope__json_obj(&w);
                hscope__json_key(&w, "address");
                hscope__json_addr(&w, addrs[i]);
                hscope__json_key(&w, "found");
                hscope__json_bool(&w, 0);
                hscope__json_end_obj(&w);
            }
            continue;
        }
        if ((st = gather(&x, ro, err)) != HSCOPE_OK)
            break;
        if (json)
            json_one(&w, &x, ro);
        else
            text_one(o, &x, ro, s.from_index != 0);
    }
    if (json && st == HSCOPE_OK) {
        hscope__json_end_arr(&w);
        hscope__json_warnings(&w, &ws);
        hscope__json_end_obj(&w);
        hscope__json_done(&w);
    }
    return st;
}
