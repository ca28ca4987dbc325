/*
 * w_suspects.c - leak suspects (kind "suspects"): the diff's head, then
 * the holders of the leaked objects, best first, each with a labelled
 * path from a root: text and JSON.
 */
#include <stdio.h>
#include <string.h>

#include "writer.h"

typedef struct holder {
    hscope_id id;          /* HSCOPE_ID_NONE: a root category or the super-root */
    int32_t cat;           /* root category of the holder, or of its path */
    uint64_t count, memsize;
    hscope_id *path;
    uint64_t len;
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
    return HSCOPE_OK;
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
    hscope__json_end_obj(w);
}

static void
text_holder(hscope__out *o, const hscope_suspects_t *s, uint64_t i, const holder *x)
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
        return;
    }
    const char *f = hscope__heap_object_file(h, x->id);
    hscope__obj_text(h, x->id, lb, sizeof(lb));
    hscope__out_printf(o, "\n%llu. 0x%llx %s holds %s (%s)", (unsigned long long)i + 1,
                       (unsigned long long)hscope__heap_object_address(h, x->id), lb, a, b);
    if (f)
        hscope__out_printf(o, ", allocated at %s:%u", f, hscope__heap_object_line(h, x->id));
    hscope__out_printf(o, "\n   path from root %s%s:",
                       x->len ? hscope__root_name(h, x->cat) : "(unreachable)", cnote);
    for (uint64_t k = 0; k < x->len; k++) {
        hscope__obj_text(h, x->path[k], lb, sizeof(lb));
        hscope__out_printf(o, "%s0x%llx %s", k ? " -> " : " ",
                           (unsigned long long)hscope__heap_object_address(h, x->path[k]), lb);
    }
    hscope__out_putc(o, '\n');
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
            hscope__out_puts(o, "\nwhat holds them, most leaked memory first:\n");
    }
    hscope_status st = HSCOPE_OK;
    for (uint64_t i = 0; i < shown && st == HSCOPE_OK; i++) {
        holder x;
        if ((st = get_holder(s, i, &x, err)) != HSCOPE_OK)
            break;
        if (json)
            json_holder(&w, s, i, &x);
        else
            text_holder(o, s, i, &x);
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
