/*
 * w_folded.c - the dominator tree as folded stacks ("frame;frame;frame
 * bytes" per object, its self memsize as the weight) for flamegraph.pl
 * and speedscope: a node's width in the flame graph is its retained size.
 *
 * Frames: the root category ("(roots)" for objects only the super-root
 * dominates), then "TYPE_label" of each object down the dominator tree; in
 * a frame ';' becomes ',' and spaces and control bytes '_', so that a name
 * cannot split a frame or a line.  Walked with an explicit stack, the
 * prefix in a growable buffer: no depth limit, nothing cut.
 */
#include <string.h>

#include "../model/model.h"
#include "../analysis/dominators.h"
#include "common.h"
#include "out.h"
#include "writers.h"

typedef struct fframe {
    const hscope_id *kids;
    uint64_t n, next;
    size_t plen;          /* prefix length before this node's frame */
} fframe;

typedef struct folder {
    hscope_domtree_t *t;
    const hscope_heap_t *h;
    hscope__mem *m;
    hscope__out *o;
    char *prefix;
    size_t plen, pcap;
    fframe *stk;
    size_t sp, scap;
    hscope_error *err;
} folder;

static hscope_status
append_frame(folder *f, const char *s)
{
    size_t n = strlen(s);
    hscope_status st = hscope__grow(f->m, (void **)&f->prefix, &f->pcap, f->plen + n + 2, 1,
                                    f->err);
    if (st != HSCOPE_OK)
        return st;
    if (f->plen)
        f->prefix[f->plen++] = ';';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        f->prefix[f->plen++] = c == ';' ? ',' : (c == ' ' || c < 0x20 || c == 0x7f) ? '_' : (char)c;
    }
    f->prefix[f->plen] = '\0';
    return HSCOPE_OK;
}

/* Enter object id: its frame, its line, its children on the stack. */
static hscope_status
enter(folder *f, hscope_id id)
{
    char lb[512];
    size_t before = f->plen;
    hscope__obj_text(f->h, id, lb, sizeof(lb));
    hscope_status st = append_frame(f, lb);
    if (st == HSCOPE_OK)
        st = hscope__grow(f->m, (void **)&f->stk, &f->scap, f->sp + 1, sizeof(fframe), f->err);
    if (st != HSCOPE_OK)
        return st;
    uint64_t self = hscope__heap_object_memsize(f->h, id);
    if (self) {
        hscope__out_write(f->o, f->prefix, f->plen);
        hscope__out_printf(f->o, " %llu\n", (unsigned long long)self);
    }
    fframe *fr = &f->stk[f->sp++];
    fr->plen = before;
    fr->next = 0;
    return hscope__domtree_children(f->t, id, -1, &fr->kids, &fr->n, f->err);
}

/* Fold the subtree of top; stops when the output failed (the write
 * function returned non-zero), the rest of the heap unvisited. */
static hscope_status
fold_from(folder *f, hscope_id top)
{
    hscope_status st = enter(f, top);
    while (st == HSCOPE_OK && f->sp && f->o->status == HSCOPE_OK) {
        fframe *fr = &f->stk[f->sp - 1];
        if (fr->next < fr->n) {
            st = enter(f, fr->kids[fr->next++]);
            continue;
        }
        f->plen = fr->plen;
        f->sp--;
    }
    return st;
}

hscope_status
hscope__folded_write(hscope_domtree_t *t, const hscope__ropts *ro, hscope__out *o,
                     hscope_error *err)
{
    (void)ro;
    hscope_heap_t *h = hscope__domtree_heap(t);
    folder f = { t, h, &h->mem, o, NULL, 0, 0, NULL, 0, 0, err };
    uint32_t ncat = hscope__heap_root_category_count(h);
    hscope_status st = HSCOPE_OK;
    for (uint32_t ci = 0; ci <= ncat && st == HSCOPE_OK; ci++) {
        int32_t cat = ci < ncat ? (int32_t)ci : -1;
        const hscope_id *k;
        uint64_t nk;
        if ((st = hscope__domtree_children(t, HSCOPE_ID_NONE, cat, &k, &nk, err)) != HSCOPE_OK)
            break;
        for (uint64_t i = 0; i < nk && st == HSCOPE_OK && o->status == HSCOPE_OK; i++) {
            f.plen = 0;
            f.sp = 0;
            if ((st = append_frame(&f, hscope__root_name(h, cat))) == HSCOPE_OK)
                st = fold_from(&f, k[i]);
        }
    }
    hscope__free(f.m, f.prefix);
    hscope__free(f.m, f.stk);
    return st;
}
