/*
 * w_suspects.c - leak suspects (kind "suspects"): the diff's head, then
 * the holders of the leaked objects, best first (the Ruby VM's own tables
 * after the application's holders), each with the allocation sites of the
 * leaked objects it holds (the lines that put them in it first), what
 * names it, which VM table it is if one, and a labelled path from a root:
 * text and JSON.
 */
#include <stdio.h>
#include <string.h>

#include "../model/model.h"
#include "../analysis/diff.h"
#include "../analysis/dominators.h"
#include "../analysis/suspects.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "table.h"
#include "writers.h"

/* Allocation sites shown per holder (hscope_suspects_site_get() has all). */
#define SITES_SHOWN 5

typedef struct holder {
    hscope_id id;          /* HSCOPE_ID_NONE: a root category or the super-root */
    int32_t cat;           /* root category of the holder, or of its path */
    uint64_t count, memsize;
    hscope_id *path;
    uint64_t len;
    hscope_suspect info;
} holder;

static hscope_status
get_holder(const hscope_suspects_t *s, uint64_t i, holder *x, hscope_error *err)
{
    const hscope_holders_t *hs = hscope__suspects_holders(s);
    hscope_heap_t *h = hscope__diff_heap(hscope__suspects_diff(s));
    memset(x, 0, sizeof(*x));
    hscope__holders_get(hs, i, &x->id, &x->cat, &x->count, &x->memsize);
    int32_t pcat = -1;
    x->len = hscope__suspects_path(s, i, NULL, 0, &pcat);
    if (x->id != HSCOPE_ID_NONE)
        x->cat = pcat;
    x->path = hscope__malloc(&h->mem, (size_t)(x->len + 1) * sizeof(hscope_id));
    if (!x->path)
        return hscope__nomem(err, (size_t)x->len * sizeof(hscope_id));
    hscope__suspects_path(s, i, x->path, x->len, NULL);
    x->info.size = sizeof(x->info);
    return hscope__suspects_get(s, i, &x->info);
}

/* Held through machine_context, the GC's conservative stack scan: the
 * holder is that category, or its path starts there (paths prefer every
 * other root), so a stack slot, maybe stale, keeps it, not the data. */
static int
conservative(const hscope_heap_t *h, const holder *x)
{
    return x->cat >= 0 && (x->id == HSCOPE_ID_NONE || x->len) &&
           hscope__heap_root_category_conservative(h, (uint32_t)x->cat);
}

/* What names the holder, its VM table, the sites of what it holds. */
static void
json_more(hscope__json *w, const hscope_suspects_t *s, uint64_t i, const holder *x)
{
    const hscope_heap_t *h = hscope__diff_heap(hscope__suspects_diff(s));
    const hscope_suspect *in = &x->info;
    hscope__json_key(w, "held_by");
    hscope__json_obj(w);
    hscope__json_key(w, "owner");
    if (in->owner != HSCOPE_ID_NONE)
        hscope__json_objref(w, h, in->owner);
    else
        hscope__json_null(w);
    hscope__json_ku64(w, "steps", in->owner_steps);
    hscope__json_end_obj(w);
    hscope__json_key(w, "vm_table");
    if (in->vm_table) {
        hscope__json_obj(w);
        hscope__json_kstr(w, "kind", in->vm_table_name);
        hscope__json_key(w, "address");
        hscope__json_addr(w, hscope__heap_object_address(h, in->vm_table_object));
        hscope__json_kstr(w, "type", hscope__type_name(h, in->vm_table_object));
        hscope__json_kstr(w, "detail", hscope__heap_object_detail(h, in->vm_table_object));
        hscope__json_key(w, "leaked");
        hscope__json_bool(w, in->vm_table_leaked);
        hscope__json_kstr(w, "reason", in->vm_table_reason);
        hscope__json_end_obj(w);
    } else {
        hscope__json_null(w);
    }
    hscope__json_ku64(w, "entries", in->entries);
    hscope__json_ku64(w, "site_count", in->site_count);
    hscope__json_key(w, "sites");
    hscope__json_arr(w);
    for (uint64_t j = 0; j < in->site_count && j < SITES_SHOWN; j++) {
        hscope_suspect_site t = { .size = sizeof(t) };
        hscope__suspects_site_get(s, i, j, &t);
        hscope__json_obj(w);
        hscope__json_kstr(w, "file", t.file);
        hscope__json_key(w, "line");
        if (t.file)
            hscope__json_u64(w, t.line);
        else
            hscope__json_null(w);
        hscope__json_kstr(w, "class", t.class_label);
        hscope__json_kstr(w, "method", t.method);
        hscope__json_ku64(w, "count", t.count);
        hscope__json_ku64(w, "memsize", t.memsize);
        hscope__json_ku64(w, "entries", t.entries);
        hscope__json_kcm(w, "kept", t.kept_count, t.kept_memsize);
        hscope__json_end_obj(w);
    }
    hscope__json_end_arr(w);
}

static void
json_holder(hscope__json *w, const hscope_suspects_t *s, uint64_t i, const holder *x)
{
    const hscope_heap_t *h = hscope__diff_heap(hscope__suspects_diff(s));
    hscope_domtree_t *t = hscope__suspects_domtree(s);
    int obj = x->id != HSCOPE_ID_NONE;
    hscope__json_obj(w);
    hscope__json_ku64(w, "rank", i + 1);
    if (obj) {
        hscope__json_objref_fields(w, h, x->id);
        hscope__json_kstr(w, "file", hscope__heap_object_file(h, x->id));
        hscope__json_ku64(w, "line", hscope__heap_object_line(h, x->id));
        hscope__json_kcm(w, "retained", hscope__domtree_retained_count(t, x->id),
                         hscope__domtree_retained(t, x->id));
    } else {
        /* a root category (or all roots together) holds them directly */
        hscope__json_key(w, "address");
        hscope__json_null(w);
        hscope__json_kstr(w, "type", "ROOT");
        hscope__json_kstr(w, "class", NULL);
        hscope__json_kstr(w, "label", hscope__root_name(h, x->cat));
        hscope__json_kstr(w, "file", NULL);
        hscope__json_key(w, "line");
        hscope__json_null(w);
        hscope__json_key(w, "retained");
        hscope__json_null(w);
    }
    hscope__json_kcm(w, "leaked", x->count, x->memsize);
    hscope__json_kstr(w, "root", obj && !x->len ? NULL : hscope__root_name(h, x->cat));
    hscope__json_key(w, "conservative_root");
    hscope__json_bool(w, conservative(h, x));
    hscope__json_key(w, "path");
    hscope__json_objrefs(w, h, x->path, x->len);
    json_more(w, s, i, x);
    hscope__json_end_obj(w);
}

/* "   held by: Desk::Hooks (CLASS) -> Array, from root vm": the class it
 * hangs from and the steps from there (four at most), or its root. */
static void
text_held_by(hscope__out *o, const hscope_heap_t *h, const holder *x, int ascii)
{
    const hscope_suspect *in = &x->info;
    if (in->owner == HSCOPE_ID_NONE) {
        if (!x->len)
            return;
        hscope__out_printf(o, "   held by: root %s", hscope__root_name(h, x->cat));
    } else {
        hscope__out_printf(o, "   held by: %s (%s)", in->owner_name,
                           hscope__type_name(h, in->owner));
    }
    uint64_t first = x->len - (in->owner != HSCOPE_ID_NONE ? in->owner_steps : x->len);
    for (uint64_t k = first; k < x->len; k++) {
        if (k > first + 1 && k + 2 < x->len) {
            hscope__out_puts(o, ascii ? " -> ..." : " -> \xe2\x80\xa6");
            k = x->len - 3;
            continue;
        }
        hscope__out_printf(o, " -> %s", hscope__heap_object_label(h, x->path[k]));
    }
    if (in->owner != HSCOPE_ID_NONE && x->len)
        hscope__out_printf(o, ", from root %s", hscope__root_name(h, x->cat));
    hscope__out_putc(o, '\n');
}

/* The holder's allocation sites: the lines that put leaked objects in it
 * first, with what those keep. */
static void
text_sites(hscope__out *o, const hscope_suspects_t *s, uint64_t i, const holder *x, int ascii)
{
    const hscope_suspect *in = &x->info;
    if (!in->site_count)
        return;
    hscope__out_puts(o, "   leaked objects allocated at (what put them in it first):\n");
    for (uint64_t j = 0; j < in->site_count && j < SITES_SHOWN; j++) {
        hscope_suspect_site t = { .size = sizeof(t) };
        hscope__suspects_site_get(s, i, j, &t);
        char c[64], b[32];
        hscope__fmt_plural(t.count, "object", "objects", c, sizeof(c));
        hscope__fmt_bytes((double)t.memsize, b, sizeof(b));
        if (t.file)
            hscope__out_printf(o, "     %s:%u:%s", t.file, t.line, t.class_label);
        else
            hscope__out_printf(o, "     (no allocation info):%s", t.class_label);
        if (t.method)
            hscope__out_printf(o, " (method %s)", t.method);
        hscope__out_printf(o, ": %s, %s", c, b);
        if (t.entries) {
            char e[64], kc[64], kb[32];
            hscope__fmt_count(t.entries, e, sizeof(e));
            hscope__fmt_plural(t.kept_count, "object", "objects", kc, sizeof(kc));
            hscope__fmt_bytes((double)t.kept_memsize, kb, sizeof(kb));
            hscope__out_printf(o, "; %s put in it, keeping %s (%s)", e, kc, kb);
        }
        hscope__out_putc(o, '\n');
    }
    if (in->site_count > SITES_SHOWN) {
        char c[64];
        hscope__fmt_plural(in->site_count - SITES_SHOWN, "more site", "more sites", c, sizeof(c));
        hscope__out_printf(o, "     %s %s\n", ascii ? "..." : "\xe2\x80\xa6", c);
    }
}

/* A Ruby VM table: which, why it holds leaked objects. */
static void
text_vm_table(hscope__out *o, const hscope_heap_t *h, const holder *x)
{
    const hscope_suspect *in = &x->info;
    const char *d = hscope__heap_object_detail(h, in->vm_table_object);
    hscope__out_printf(o, "   Ruby VM table: %s (0x%llx %s%s%s%s), not the application's: %s\n",
                       in->vm_table_name,
                       (unsigned long long)hscope__heap_object_address(h, in->vm_table_object),
                       hscope__type_name(h, in->vm_table_object), d ? " " : "", d ? d : "",
                       in->vm_table_leaked ? ", itself among the leaked objects" : "",
                       in->vm_table_reason);
}

static void
text_holder(hscope__out *o, const hscope_suspects_t *s, uint64_t i, const holder *x, int ascii)
{
    const hscope_heap_t *h = hscope__diff_heap(hscope__suspects_diff(s));
    char a[64], b[32], lb[512];
    hscope__fmt_plural(x->count, "leaked object", "leaked objects", a, sizeof(a));
    hscope__fmt_bytes((double)x->memsize, b, sizeof(b));
    const char *cnote = conservative(h, x) ? " (conservative: a stack slot, maybe stale, not your data)"
                                           : "";
    if (x->id == HSCOPE_ID_NONE) {
        hscope__out_printf(o, "\n%llu. root %s%s directly holds %s (%s)\n", (unsigned long long)i + 1,
                           hscope__root_name(h, x->cat), cnote, a, b);
        if (x->info.vm_table)
            text_vm_table(o, h, x);
        else
            text_sites(o, s, i, x, ascii);
        return;
    }
    const char *f = hscope__heap_object_file(h, x->id);
    hscope__obj_text(h, x->id, lb, sizeof(lb));
    hscope__out_printf(o, "\n%llu. 0x%llx %s holds %s (%s)", (unsigned long long)i + 1,
                       (unsigned long long)hscope__heap_object_address(h, x->id), lb, a, b);
    if (f)
        hscope__out_printf(o, ", allocated at %s:%u", f, hscope__heap_object_line(h, x->id));
    hscope__out_putc(o, '\n');
    if (x->info.vm_table) {
        text_vm_table(o, h, x);
    } else {
        text_held_by(o, h, x, ascii);
        text_sites(o, s, i, x, ascii);
    }
    hscope__out_printf(o, "   path from root %s%s:",
                       x->len ? hscope__root_name(h, x->cat) : "(unreachable)", cnote);
    for (uint64_t k = 0; k < x->len; k++) {
        hscope__obj_text(h, x->path[k], lb, sizeof(lb));
        hscope__out_printf(o, "%s0x%llx %s", k ? " -> " : " ",
                           (unsigned long long)hscope__heap_object_address(h, x->path[k]), lb);
    }
    hscope__out_putc(o, '\n');
}

/* Is the last holder a Ruby VM table (then some are, last)? */
static int
vm_last(const hscope_suspects_t *s, uint64_t nh)
{
    hscope_suspect in = { .size = sizeof(in) };
    return nh && hscope__suspects_get(s, nh - 1, &in) == HSCOPE_OK && in.vm_table;
}

hscope_status
hscope__suspects_write(const hscope_suspects_t *s, const hscope__ropts *ro, hscope__out *o,
                       hscope_error *err)
{
    const hscope_diff_t *d = hscope__suspects_diff(s);
    hscope_heap_t *h = hscope__diff_heap(d);
    uint64_t nh = hscope__holders_count(hscope__suspects_holders(s));
    uint64_t shown = ro->top < nh ? ro->top : nh;
    int json = ro->format == HSCOPE_FORMAT_JSON;
    hscope__warnings ws;
    ws.n = 0;
    hscope__warn_diff(&ws, d);
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    if (json) {
        hscope__json_begin_doc(&w, "suspects");
        hscope__json_diff_head(&w, d, ro);
        hscope__json_key(&w, "class_edges");
        hscope__json_bool(&w, hscope__domtree_class_edges(hscope__suspects_domtree(s)));
        hscope__json_ku64(&w, "holder_count", nh);
        hscope__json_key(&w, "suspects");
        hscope__json_arr(&w);
    } else {
        hscope__text_warnings(o, ro, &ws);
        hscope__text_diff_head(o, d, ro);
        if (nh)
            hscope__out_puts(o, vm_last(s, nh) ? "\nwhat holds them, most leaked memory first "
                                                 "(the Ruby VM's own tables last):\n"
                                               : "\nwhat holds them, most leaked memory first:\n");
    }
    hscope_status st = HSCOPE_OK;
    for (uint64_t i = 0; i < shown && st == HSCOPE_OK; i++) {
        holder x;
        if ((st = get_holder(s, i, &x, err)) != HSCOPE_OK)
            break;
        if (json)
            json_holder(&w, s, i, &x);
        else
            text_holder(o, s, i, &x, (ro->flags & HSCOPE_REPORT_ASCII) != 0);
        hscope__free(&h->mem, x.path);
    }
    if (st != HSCOPE_OK)
        return st;
    if (json) {
        hscope__json_end_arr(&w);
        hscope__json_warnings(&w, &ws);
        hscope__json_end_obj(&w);
        hscope__json_done(&w);
    } else if (nh > shown) {
        char c[64];
        hscope__fmt_plural(nh - shown, "more holder", "more holders", c, sizeof(c));
        hscope__out_printf(o, "\n%s %s\n", (ro->flags & HSCOPE_REPORT_ASCII) ? "..." : "\xe2\x80\xa6", c);
    }
    return HSCOPE_OK;
}
