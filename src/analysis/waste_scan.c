/*
 * waste_scan.c - the two sources of the waste analysis (waste.c): a dump
 * file streamed through the parser in sink mode, and a loaded heap.
 *
 * A dump file is read twice.  The first pass parses every record on the
 * parser's threads (one accumulator per slot, folded at the end) without
 * building the model.  It leaves the first copies of the repeated values
 * to be compared: the second pass reads back only their lines, by offset,
 * with positioned reads of a plain file (a window of 1 MiB serves nearby
 * lines) or, for gzip, inflating the stream again and decoding only those
 * lines (hscope__heap_stream_at(), model/records.c).  The same line decoder
 * reads them, so they decode exactly as in the first pass.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../model/model.h"
#include "origin.h"
#include "waste.h"

typedef struct wscan {
    hscope__mem *mem;
    hscope__wacc *acc;        /* the one accumulator */
    hscope__wsrc *src;        /* this slot's (or the calling thread's) */
    const hscope__wcfg *cfg;
    uint8_t *dsite;           /* per builder site: 0 not judged, 1 no, 2 dumper */
    size_t dcap;
    uint64_t excluded;
    uint32_t tracer_str;      /* the tracer's struct name in this builder, once seen */
    uint64_t tracer, tracer_mem; /* Ruby's allocation tracer left out */
} wscan;

static void
wobj_of(const hscope__objrec *o, hscope__wobj *w)
{
    memset(w, 0, sizeof(*w));
    w->memsize = o->memsize;
    w->size = o->size;
    w->capacity = o->capacity;
    w->has_capacity = o->has_capacity;
    w->ref = o->offset;
    w->value = o->value;
    w->value_len = o->value_len;
    w->has_value = o->has_value;
    w->file = o->file;
    w->line = o->file ? o->line : 0;
    w->slot = o->slot_size;
    w->flags = o->flags;
    w->type = o->type;
}

/* Whether a streamed record is Ruby's allocation tracer: its DATA struct
 * name compared until seen, then its string id (per builder). */
static int
is_tracer(wscan *S, const hscope__builder *b, const hscope__objrec *o)
{
    if (o->type != HSCOPE_TYPE_DATA || !o->detail)
        return 0;
    if (S->tracer_str)
        return o->detail == S->tracer_str;
    const char *s = hscope__intern_str(&b->strings, o->detail);
    if (!s || strcmp(s, HSCOPE__TRACER_STRUCT) != 0)
        return 0;
    S->tracer_str = o->detail;
    return 1;
}

static hscope_status
sink(void *ud, hscope__builder *b, const hscope__objrec *o, hscope_error *err)
{
    wscan *S = ud;
    if (!S->cfg->keep_tracer && is_tracer(S, b, o)) {
        S->tracer++;
        S->tracer_mem = hscope__sat_add(S->tracer_mem, o->memsize);
        return HSCOPE_OK;
    }
    if (!S->cfg->keep_dumper) {
        int dumper;
        hscope_status st = hscope__dumper_site(S->mem, &S->dsite, &S->dcap, &b->strings,
                                               b->site_file, b->site_method, o->site, &dumper,
                                               err);
        if (st != HSCOPE_OK)
            return st;
        if (dumper) {
            S->excluded++;
            return HSCOPE_OK;
        }
    }
    hscope__wobj w;
    wobj_of(o, &w);
    return hscope__wsrc_add(S->src, &w, err);
}

/* A worker slot of the parallel parser: a source of its own, whose
 * strings the accumulator takes on the merging thread after each chunk,
 * in the dump's order (chunk_done). */
static void *
slot_new(void *ud, const uint64_t *seq)
{
    const wscan *top = ud;
    hscope_error e;
    hscope__error_init(&e);
    (void)seq; /* every total is order-free; ties are broken by key text */
    wscan *S = hscope__calloc(top->mem, 1, sizeof(*S));
    if (!S)
        return NULL;
    S->mem = top->mem;
    S->cfg = top->cfg;
    S->acc = top->acc;
    if (hscope__wsrc_new(&S->src, top->acc, 0, &e) != HSCOPE_OK) {
        hscope__free(top->mem, S);
        return NULL;
    }
    return S;
}

static void
slot_free(void *slot_ud)
{
    wscan *S = slot_ud;
    hscope__mem *m = S->mem;
    hscope__free(m, S->dsite);
    hscope__free(m, S);
}

static hscope_status
slot_merge(void *ud, void *slot_ud, const uint32_t *smap, size_t nsmap, const int *tmap,
           hscope_error *err)
{
    wscan *top = ud, *S = slot_ud;
    (void)tmap; /* only fixed type codes (STRING, ARRAY, HASH) matter */
    top->excluded += S->excluded;
    S->excluded = 0;
    top->tracer += S->tracer;
    top->tracer_mem = hscope__sat_add(top->tracer_mem, S->tracer_mem);
    S->tracer = S->tracer_mem = 0;
    return hscope__wsrc_done(S->src, smap, nsmap, err);
}

static hscope_status
chunk_done(void *ud, void *slot_ud, const uint32_t *smap, size_t nsmap, hscope_error *err)
{
    wscan *S = slot_ud;
    (void)ud;
    return hscope__wsrc_flush(S->src, smap, nsmap, err);
}

static const hscope__slot_sink waste_slots = { slot_new, sink, slot_merge, slot_free,
                                               chunk_done };

/* ------------------------------------------------------------------ */
/* the second pass: lines read back by offset                          */
/* ------------------------------------------------------------------ */

static uint64_t
pending_offset(void *ud, size_t i)
{
    const wscan *S = ud;
    return hscope__wacc_pending_ref(S->acc, i);
}

/* A first copy read back: confirmed with its record, or unconfirmed when
 * its line is no object record any more (the file changed). */
static hscope_status
confirm(void *ud, size_t i, const hscope__objrec *o, hscope_error *err)
{
    wscan *S = ud;
    if (!o) {
        hscope__wacc_unconfirmed(S->acc, i);
        return HSCOPE_OK;
    }
    hscope__wobj w;
    wobj_of(o, &w);
    return hscope__wacc_confirm(S->acc, i, &w, err);
}

/* Read back the pending first copies (waste.c) with the final builder,
 * whose string ids the accumulator uses. */
static hscope_status
read_back(wscan *S, hscope__builder *b, const char *path, const hscope_load_options *lo,
          hscope_error *err)
{
    size_t n;
    hscope_status st = hscope__wacc_pending(S->acc, &n, err);
    if (st != HSCOPE_OK || n == 0)
        return st;
    return hscope__heap_stream_at(b, path, lo, n, pending_offset, confirm, S, err);
}

/* ------------------------------------------------------------------ */
/* a dump file                                                         */
/* ------------------------------------------------------------------ */

/* What the first pass saw (as a streamed tally reports it). */
static void
pass_stats(hscope_load_stats *s, const hscope__builder *b, uint64_t in_bytes, int gz,
           uint64_t ns)
{
    hscope__stream_stats(b, in_bytes, gz, ns, s);
}

/* The dump must be a regular file; *size gets its size. */
static hscope_status
regular_file(const char *path, uint64_t *size, hscope_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return hscope__fail_errno(err, errno, "cannot open %s", path);
    if (!S_ISREG(sb.st_mode))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "not a regular file: the waste analysis reads the dump twice "
                            "(save the stream to a file first)");
    *size = (uint64_t)sb.st_size;
    return HSCOPE_OK;
}

/* Distinct string values to expect in a dump of this size: about one per
 * KiB of dump (the benchmark dumps: 0.96 per KiB), gzip ~17 times smaller. */
static uint64_t
values_hint(const char *path, uint64_t size)
{
    unsigned char m[2] = { 0, 0 };
    FILE *f = fopen(path, "rb");
    if (f) {
        if (fread(m, 1, 2, f) != 2)
            m[0] = 0;
        fclose(f);
    }
    return (m[0] == 0x1f && m[1] == 0x8b ? size * 17 : size) / 1024;
}

hscope_status
hscope__waste_file(hscope_waste_t **out, const char *path, const hscope_load_options *lo,
                   const hscope__wcfg *cfg, hscope_error *err)
{
    hscope__mem mem;
    hscope__builder b;
    wscan S;
    hscope_status st;
    memset(&b, 0, sizeof(b));
    memset(&S, 0, sizeof(S));
    uint64_t size = 0;
    if ((st = regular_file(path, &size, err)) != HSCOPE_OK)
        return st;
    hscope__mem_init(&mem, lo->allocator, lo->max_memory);
    S.mem = &mem;
    S.cfg = cfg;
    int have_b = 0;
    if ((st = hscope__wacc_new(&S.acc, &mem, cfg, NULL, NULL, err)) != HSCOPE_OK ||
        (st = hscope__wacc_reserve(S.acc, values_hint(path, size), err)) != HSCOPE_OK ||
        (st = hscope__wsrc_new(&S.src, S.acc, 1, err)) != HSCOPE_OK)
        goto done;
    have_b = 1;
    uint64_t in_bytes = 0, t0 = hscope__now_ns();
    int gz = 0;
    hscope__stream_sinks ss = { sink, NULL, &waste_slots, &S, 1 };
    if ((st = hscope__heap_stream(&b, &mem, path, lo, &ss, &in_bytes, &gz, err)) != HSCOPE_OK)
        goto done;
    /* the objects parsed on this thread (one parser thread), final ids */
    if ((st = hscope__wsrc_done(S.src, NULL, 0, err)) != HSCOPE_OK)
        goto done;
    hscope__wacc_note(S.acc, S.excluded, 0);
    hscope__wacc_note_tracer(S.acc, S.tracer, S.tracer_mem);
    hscope_load_stats stats;
    pass_stats(&stats, &b, in_bytes, gz, hscope__now_ns() - t0);
    uint64_t skipped[HSCOPE_SKIP__COUNT];
    memcpy(skipped, b.skipped, sizeof(skipped));
    if ((st = read_back(&S, &b, path, lo, err)) != HSCOPE_OK)
        goto done;
    stats.load_ns = hscope__now_ns() - t0;
    st = hscope__waste_finish(out, S.acc, &b.strings, lo->allocator, &stats, skipped, err);
done:
    if (have_b)
        hscope__heap_stream_end(&b);
    hscope__free(&mem, S.dsite);
    hscope__wacc_free(S.acc);
    return st;
}

/* ------------------------------------------------------------------ */
/* a loaded heap                                                       */
/* ------------------------------------------------------------------ */

typedef struct hscan {
    const hscope_heap_t *h;
    size_t vpos;              /* walk over the value columns */
} hscan;

static uint64_t
size_of(const hscope_heap_t *h, uint32_t id)
{
    uint32_t v = h->size[id];
    return v == HSCOPE__U32_BIG ? hscope__big_get(&h->big_size, id) : v;
}

/* The model keeps no capacity: a heap string's buffer is its memsize less
 * a 40-byte slot and a 1-byte terminator (Ruby up to 3.1, ASCII/UTF-8). */
static void
heap_wobj(const hscope_heap_t *h, uint32_t id, hscope__wobj *w)
{
    memset(w, 0, sizeof(*w));
    uint32_t site = h->site[id];
    w->type = h->type[id];
    w->flags = h->flags[id];
    w->memsize = hscope__memsize(h, id);
    w->size = size_of(h, id);
    w->file = site < h->nsites ? h->site_file[site] : 0;
    w->line = w->file && site < h->nsites ? h->site_line[site] : 0;
    w->ref = id;
    if (w->type == HSCOPE_TYPE_STRING &&
        !(w->flags & (HSCOPE_FLAG_EMBEDDED | HSCOPE_FLAG_SHARED)) && w->size < UINT64_MAX - 41 &&
        w->memsize > w->size + 41) {
        w->capacity = w->memsize - 41;
        w->has_capacity = 1;
    }
}

static hscope_status
resolve(void *ud, uint64_t ref, hscope__wobj *out, hscope_error *err)
{
    const hscan *H = ud;
    const char *d;
    uint64_t n;
    (void)err;
    heap_wobj(H->h, (uint32_t)ref, out);
    if (hscope__heap_object_value(H->h, (hscope_id)ref, &d, &n) == HSCOPE_OK) {
        out->value = d;
        out->value_len = n;
        out->has_value = 1;
    }
    return HSCOPE_OK;
}

hscope_status
hscope__waste_heap(hscope_waste_t **out, const hscope_heap_t *h, const hscope__wcfg *cfg,
                   hscope_error *err)
{
    /* working memory counts against the heap's max_memory, as for the
     * other analyses of a heap (the accounting is atomic) */
    hscope__mem *mem = (hscope__mem *)&h->mem;
    hscope__wacc *acc = NULL;
    hscope__wsrc *src = NULL;
    hscan H = { h, 0 };
    uint8_t *dsite = NULL;
    size_t dcap = 0;
    uint64_t excluded = 0, tracer = 0, tracer_mem = 0;
    hscope_status st;
    if ((st = hscope__wacc_new(&acc, mem, cfg, resolve, &H, err)) != HSCOPE_OK)
        return st;
    if ((st = hscope__wacc_reserve(acc, h->nval, err)) != HSCOPE_OK ||
        (st = hscope__wsrc_new(&src, acc, 1, err)) != HSCOPE_OK)
        goto done;
    for (uint32_t id = 0; id < h->n && st == HSCOPE_OK; id++) {
        uint32_t site = h->site[id];
        int dumper = 0;
        if (!cfg->keep_dumper && site < h->nsites &&
            (st = hscope__dumper_site(mem, &dsite, &dcap, &h->strings, h->site_file,
                                      h->site_method, site, &dumper, err)) != HSCOPE_OK)
            break;
        if (dumper) {
            excluded++;
            continue;
        }
        if (!cfg->keep_tracer && hscope__is_tracer(h, id)) {
            tracer++;
            tracer_mem = hscope__sat_add(tracer_mem, hscope__memsize(h, id));
            continue;
        }
        hscope__wobj w;
        heap_wobj(h, id, &w);
        while (H.vpos < h->nval && h->val_id[H.vpos] < id)
            H.vpos++;
        if (H.vpos < h->nval && h->val_id[H.vpos] == id) {
            w.value = h->val_arena + h->val_off[H.vpos];
            w.value_len = h->val_len[H.vpos];
            w.has_value = 1;
        }
        st = hscope__wsrc_add(src, &w, err);
    }
    if (st == HSCOPE_OK)
        st = hscope__wsrc_done(src, NULL, 0, err);
    if (st != HSCOPE_OK)
        goto done;
    hscope__wacc_note(acc, excluded, 0);
    hscope__wacc_note_tracer(acc, tracer, tracer_mem);
    hscope_load_stats stats;
    uint64_t skipped[HSCOPE_SKIP__COUNT];
    hscope__load_stats_init(&stats);
    hscope__heap_stats(h, &stats);
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        skipped[r] = hscope__heap_skipped(h, r);
    hscope_allocator alloc = { sizeof(alloc), 0, h->mem.malloc_fn, h->mem.realloc_fn,
                               h->mem.free_fn, h->mem.ud };
    st = hscope__waste_finish(out, acc, &h->strings, &alloc, &stats, skipped, err);
done:
    hscope__free(mem, dsite);
    hscope__wacc_free(acc);
    return st;
}
