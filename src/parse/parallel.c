/*
 * parallel.c - parse on all cores.
 *
 * Reading in order (gzip, pipes): the calling thread reads the input in
 * chunks cut at line boundaries into a ring of slots.
 * Worker threads parse whole chunks, each into the slot's own builder.
 * The calling thread then merges the parsed slots into the final builder
 * strictly in chunk order, remapping the slot's string, site and type ids,
 * so object ids stay dense and in dump order and the model is identical
 * whatever the number of threads (strings and sites are even numbered in
 * the same first-appearance order as a single-threaded parse).
 *
 * Slot builders keep their interner and site table across chunks, so each
 * distinct string is remapped once per slot, not once per line.
 *
 * Block mode (a plain regular file, or memory): the calling thread does
 * not read at all.  Chunk k is the lines that start in bytes
 * [k * B, (k + 1) * B) of the input; the worker that parses it reads those
 * bytes itself with a positioned read, plus the byte before (to tell
 * whether a line starts at k * B) and the rest of its last line.  So the
 * read copy is spread over the workers and lands in the cache of the core
 * that parses it, and the calling thread only merges.  Every line belongs
 * to exactly one chunk, so the result is the same as reading in order.
 * A line that spans whole blocks leaves them empty.  Only a block's last
 * line can be longer than a block, so block mode needs max_line_bytes of
 * at least two blocks (smaller limits read in order).  The size is taken
 * when the input is opened: bytes appended later are not read, and a file
 * cut short while being read ends where the reads find its end.
 *
 * Line numbers are chunk-local while parsing and made global at merge
 * time; a strict-mode error in chunk k is reported after chunks < k are
 * merged, with its global line number, exactly as a single thread would.
 *
 * Handoff.  A slot goes FREE -> READY (queue(), calling thread) -> BUSY
 * (a worker takes it) -> DONE (the worker parsed it) -> FREE (merged, on
 * the calling thread).  Every state change, and `stop`, is made under
 * P->mu; no thread touches a slot's contents unless the state says the
 * slot is its own (FREE and taken by the calling thread, BUSY for the
 * worker that took it, DONE for the merger).  There are two waits:
 *
 *  - a worker waits on P->work until some slot is READY or `stop` is set;
 *    both are set under P->mu and followed, in the same critical section,
 *    by a broadcast on P->work;
 *  - the merger waits on P->done until the chunk it merges next is DONE
 *    (or no chunk is out: then it returns); a worker sets DONE under P->mu
 *    and broadcasts P->done in the same critical section.
 *
 * A waiter tests its condition under P->mu and pthread_cond_wait releases
 * the mutex atomically, so each change happens either before the test
 * (seen) or while the waiter is blocked (woken by the broadcast).  Always
 * a broadcast, never pthread_cond_signal: glibc (before 2.41) can lose a
 * pthread_cond_signal wakeup when several threads wait on one condition
 * variable (sourceware bug 25847; Debian 12 ships 2.36), and a lost wakeup
 * of the workers leaves them all asleep beside a READY slot and the merger
 * waiting for it forever: a hang seen under fuzzing, which no ordering of our
 * own steps can produce.  And every wait is bounded (WAIT_MS), after
 * which the waiter tests its condition again, so even a lost wakeup costs
 * a pause, not a hang.  The chunks a waiter waits for always come: an
 * outstanding chunk is READY (some worker takes it: at least one runs,
 * and none exits before `stop`, which is set only after the last merge or
 * on failure) or BUSY (its worker finishes: a chunk is finite and parsing
 * it never waits).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parse.h"

#define PAD 64 /* >= HSCOPE__LINE_PAD + 1 */
#define CHUNK ((size_t)4 << 20)
/* Block mode: B, and how much past its block a worker reads at first to
 * find the end of its last line (more if that line is longer).  1 MiB
 * blocks fit a core's L2 cache with the builder's columns beside them. */
#define BLOCK ((uint64_t)1 << 20)
#define SLACK ((size_t)16 << 10)
#define PROGRESS_EVERY ((uint64_t)16 << 20)
#define WAIT_MS 100 /* bound of every wait (see Handoff above) */

#ifdef HSCOPE_TEST_HOOKS
hscope__parallel_hook_fn hscope__parallel_hook;
unsigned hscope__parallel_wait_ms = WAIT_MS;
#define HOOK(pt, p, n) (hscope__parallel_hook ? hscope__parallel_hook(pt, p, n) : 0)
#define WAIT_BOUND_MS hscope__parallel_wait_ms
#else
#define HOOK(pt, p, n) 0
#define WAIT_BOUND_MS WAIT_MS
#endif

enum { FREE, READY, BUSY, DONE };

typedef struct slot {
    int state;
    uint64_t seq;
    uint8_t *buf;
    size_t cap, len;        /* len: bytes handed over (whole lines) */
    int at_eof;             /* last chunk: may end without a newline */
    uint64_t base;          /* stream offset of buf[0] */
    hscope__builder b;      /* this slot's records, chunk-local */
    hscope__lp lp;
    hscope_status st;       /* fatal/strict error while parsing */
    hscope_error err;       /* its details (line chunk-local) */
    /* id maps into the final builder, persistent across chunks */
    uint32_t *smap;         /* string id -> final id */
    size_t smap_n, smap_cap;
    uint32_t *sitemap;
    size_t sitemap_n, sitemap_cap;
    uint32_t *cmap;         /* class index -> final class index */
    size_t cmap_n, cmap_cap;
    int tmap[256];
    void *sink_state;       /* slot sink mode: this slot's fold */
    /* block mode */
    const uint8_t *data;    /* first byte of the chunk (in buf) */
    uint64_t blk;           /* block number */
    uint64_t nbytes;        /* bytes of the input in this block */
    int too_long;           /* the chunk is followed by a line > max_line */
    uint64_t last;          /* input offset of that line */
    int raw_error;          /* st came from fill_block: err as is */
} slot;

typedef struct pool {
    hscope__reader *r;
    hscope__builder *out;
    const hscope__parse_opts *o;
    hscope_error *err;
    hscope__mem *mem;
    slot *slots;
    unsigned nslots, nthreads;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    clockid_t clock;        /* of the condition variables' timed waits */
    int stop;
    uint64_t next_seq;      /* next chunk to hand out */
    uint64_t bsize;         /* block mode: block size B; 0: reading in order */
    uint64_t fsize;         /* block mode: input size */
    uint64_t max_line;
    uint64_t progress_every;
} pool;

/* ------------------------------------------------------------------ */
/* waiting (see Handoff at the top)                                   */
/* ------------------------------------------------------------------ */

/* Wait on cv (P->mu held) until woken or WAIT_MS have passed; the caller
 * tests its condition again either way. */
static void
wait_on(pool *P, pthread_cond_t *cv)
{
    struct timespec ts;
    if (clock_gettime(P->clock, &ts) != 0) {
        pthread_cond_wait(cv, &P->mu);
        return;
    }
    long ms = (long)WAIT_BOUND_MS;
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    if (pthread_cond_timedwait(cv, &P->mu, &ts) == ETIMEDOUT)
        (void)HOOK(HSCOPE__HOOK_TIMEOUT, NULL, 0);
}

/* Wake every waiter on cv (P->mu held, in the critical section that made
 * the change they wait for). */
static void
wake_all(pool *P, pthread_cond_t *cv)
{
    (void)P;
    if (!HOOK(HSCOPE__HOOK_WAKE, NULL, 0))
        pthread_cond_broadcast(cv);
}

/* ------------------------------------------------------------------ */
/* workers                                                            */
/* ------------------------------------------------------------------ */

/*
 * Block mode: read block s->blk's lines into the slot (see the top).  The
 * chunk is the lines that start in [b0, b1) = [k * B, (k + 1) * B): read
 * from the byte before b0 (a line starts at b0 if that byte is '\n') up
 * to the first '\n' at or after b1 - 1, which ends the last line.  A last
 * line of max_line bytes or more is not read further: it is left out of
 * the chunk and counted as too long (s->too_long), as reading in order
 * would.  buf[i] is input byte rd + i.
 */
static hscope_status
fill_block(pool *P, slot *s)
{
    uint64_t k = s->blk, b0 = k * P->bsize, F = P->fsize;
    uint64_t b1 = F - b0 > P->bsize ? b0 + P->bsize : F;
    uint64_t rd = k ? b0 - 1 : 0;
    size_t blen = (size_t)(b1 - rd);
    size_t want = F - b1 > SLACK ? blen + SLACK : (size_t)(F - rd);
    size_t len = 0, got;
    hscope_status st;
    s->len = 0;
    s->too_long = 0;
    s->nbytes = 0;
    /* the bytes [0, want) */
    if (want > s->cap) {
        uint8_t *nb = hscope__realloc(P->mem, s->buf, want + PAD);
        if (!nb)
            return hscope__nomem(&s->err, want + PAD);
        s->buf = nb;
        s->cap = want;
    }
    s->data = s->buf; /* an empty chunk unless lines are found */
    (void)HOOK(HSCOPE__HOOK_POISON, s->buf, s->cap + PAD); /* whatever an earlier chunk left */
    if ((st = hscope__reader_pread(P->r, s->buf, want, rd, &len, &s->err)) != HSCOPE_OK)
        return st;
    int eof = len < want || rd + len >= F; /* a file cut short ends early */
    if (rd + len > b0 || !k)
        s->nbytes = (rd + len < b1 ? rd + len : b1) - b0;
    /* the first line that starts in the block */
    size_t start = 0, lastb = (len < blen ? len : blen);
    if (lastb == 0)
        return HSCOPE_OK;
    lastb--; /* the block's last byte we have */
    if (k) {
        const uint8_t *nl = memchr(s->buf, '\n', lastb + 1);
        if (!nl || nl == s->buf + lastb)
            return HSCOPE_OK; /* no line starts in the block */
        start = (size_t)(nl - s->buf) + 1;
    }
    /* the last line starts after the last '\n' before lastb */
    size_t last = lastb;
    while (last > start && s->buf[last - 1] != '\n')
        last--;
    /* its end: the first '\n' at or after lastb, reading on if need be */
    size_t from = lastb, stop;
    for (;;) {
        const uint8_t *e = memchr(s->buf + from, '\n', len - from);
        if (e) {
            stop = (size_t)(e - s->buf) + 1;
            if ((uint64_t)(stop - 1 - last) >= P->max_line)
                stop = last, s->too_long = 1;
            break;
        }
        if (eof || (uint64_t)(len - last) >= P->max_line) {
            /* at the end of the input without a newline, or too long */
            stop = len;
            if ((uint64_t)(len - last) >= P->max_line)
                stop = last, s->too_long = 1;
            break;
        }
        uint64_t nw = (uint64_t)len * 2, cap = (uint64_t)last + P->max_line;
        if (nw > cap)
            nw = cap;
        if (nw > F - rd)
            nw = F - rd;
        if (nw > SIZE_MAX - PAD)
            return hscope__nomem(&s->err, SIZE_MAX);
        if (nw > s->cap) {
            uint8_t *nb = hscope__realloc(P->mem, s->buf, (size_t)nw + PAD);
            if (!nb)
                return hscope__nomem(&s->err, (size_t)nw + PAD);
            s->buf = nb;
            s->cap = (size_t)nw;
        }
        (void)HOOK(HSCOPE__HOOK_POISON, s->buf + len, s->cap + PAD - len);
        if ((st = hscope__reader_pread(P->r, s->buf + len, (size_t)nw - len, rd + len, &got,
                                       &s->err)) != HSCOPE_OK)
            return st;
        from = len;
        len += got;
        eof = len < nw || rd + len >= F;
    }
    s->data = s->buf + start;
    s->len = stop - start;
    s->buf[stop] = '\n'; /* sentinel (PAD bytes follow) */
    (void)HOOK(HSCOPE__HOOK_POISON, s->buf + stop + 1, s->cap + PAD - stop - 1);
    s->base = rd + start;
    s->last = rd + last;
    return HSCOPE_OK;
}

/* Parse every line of the slot (same rules as stream.c's one_line). */
static void
parse_chunk(pool *P, slot *s)
{
    const uint8_t *p = s->data, *end = s->data + s->len;
    hscope__builder *b = &s->b;
    hscope__lp_at(&s->lp, s->data, s->base);
    while (p < end) {
        /* end holds a '\n' sentinel (hand_over): the last line of the
         * input may have no newline of its own */
        const uint8_t *nl;
        uint64_t lineno = ++b->lines;
        int rc = hscope__lp_next(&s->lp, p, end, &nl);
        int at_eof = nl == end;
        if (rc < 0) {
            s->st = s->lp.fatal ? s->lp.fatal : HSCOPE_ERR_INTERNAL;
            return;
        }
        if (rc == 0) {
            int reason = s->lp.reason;
            uint64_t off = s->base + (uint64_t)(s->lp.fail_at - s->data);
            if (at_eof && reason == HSCOPE_SKIP_BAD_JSON) {
                b->truncated = 1;
                if (P->o->strict) {
                    s->st = hscope__fail_at(&s->err, HSCOPE_ERR_TRUNCATED, lineno, off,
                        "byte %llu: input ends in the middle of a record (%s)",
                        (unsigned long long)off, s->lp.why);
                    return;
                }
                reason = HSCOPE_SKIP_TRUNCATED;
            }
            if (P->o->strict) {
                s->st = hscope__fail_at(&s->err, HSCOPE_ERR_PARSE, lineno, off,
                    "column %llu (byte %llu): %s",
                    (unsigned long long)(s->lp.fail_at - p) + 1,
                    (unsigned long long)off, s->lp.why ? s->lp.why : "invalid record");
                return;
            }
            hscope__builder_note_skip(b, reason, lineno);
        }
        p = nl + 1;
    }
}

/* The oldest READY slot (P->mu held), or NULL. */
static slot *
oldest_ready(pool *P)
{
    slot *s = NULL;
    for (unsigned i = 0; i < P->nslots; i++)
        if (P->slots[i].state == READY && (!s || P->slots[i].seq < s->seq))
            s = &P->slots[i];
    return s;
}

static void *
worker(void *arg)
{
    pool *P = arg;
    pthread_mutex_lock(&P->mu);
    for (;;) {
        slot *s = NULL;
        /* the oldest ready chunk first, so merging never starves */
        while (!P->stop && !(s = oldest_ready(P)))
            wait_on(P, &P->work);
        if (!s)
            break;
        s->state = BUSY;
        pthread_mutex_unlock(&P->mu);
        (void)HOOK(HSCOPE__HOOK_TAKEN, NULL, 0);
        s->st = HSCOPE_OK;
        /* a reading error is reported as it is, without a line number */
        s->raw_error = P->bsize && (s->st = fill_block(P, s)) != HSCOPE_OK;
        if (s->st == HSCOPE_OK)
            parse_chunk(P, s);
        if (s->st == HSCOPE_OK && s->too_long) {
            /* the line after the chunk is too long: count it in order */
            uint64_t lineno = ++s->b.lines;
            if (P->o->strict) {
                s->st = hscope__fail_at(&s->err, HSCOPE_ERR_LIMIT, lineno, s->last,
                                        "longer than max_line_bytes");
                s->too_long = 2; /* the error is this line's */
            }
            else
                hscope__builder_note_skip(&s->b, HSCOPE_SKIP_TOO_LONG, lineno);
        }
        (void)HOOK(HSCOPE__HOOK_PARSED, NULL, 0);
        pthread_mutex_lock(&P->mu);
        s->state = DONE;
        wake_all(P, &P->done);
    }
    pthread_mutex_unlock(&P->mu);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* merging a parsed slot into the final builder                       */
/* ------------------------------------------------------------------ */

static hscope_status
map_strings(pool *P, slot *s)
{
    hscope__intern *from = &s->b.strings;
    hscope_status st = hscope__grow(P->mem, (void **)&s->smap, &s->smap_cap,
                                    from->count, sizeof(uint32_t), P->err);
    if (st != HSCOPE_OK)
        return st;
    if (s->smap_n == 0) {
        s->smap[0] = 0;
        s->smap_n = 1;
    }
    for (size_t id = s->smap_n; id < from->count; id++)
        if ((st = hscope__intern_add(&P->out->strings, hscope__intern_str(from, (uint32_t)id),
                                     hscope__intern_len(from, (uint32_t)id), &s->smap[id],
                                     P->err)) != HSCOPE_OK)
            return st;
    s->smap_n = from->count;
    return HSCOPE_OK;
}

static hscope_status
map_sites(pool *P, slot *s)
{
    const hscope__builder *b = &s->b;
    hscope_status st = hscope__grow(P->mem, (void **)&s->sitemap, &s->sitemap_cap,
                                    b->nsites, sizeof(uint32_t), P->err);
    if (st != HSCOPE_OK)
        return st;
    for (size_t id = s->sitemap_n; id < b->nsites; id++)
        if ((st = hscope__builder_site(P->out, s->smap[b->site_file[id]], b->site_line[id],
                                       s->smap[b->site_method[id]], &s->sitemap[id],
                                       P->err)) != HSCOPE_OK)
            return st;
    s->sitemap_n = b->nsites;
    return HSCOPE_OK;
}

/* The slot's class indexes seen since its last merge, added to the final
 * builder's (index 0, no class, maps to 0). */
static hscope_status
map_classes(pool *P, slot *s)
{
    const hscope__builder *b = &s->b;
    size_t n = b->ncls ? b->ncls : 1;
    hscope_status st = hscope__grow(P->mem, (void **)&s->cmap, &s->cmap_cap, n,
                                    sizeof(uint32_t), P->err);
    if (st != HSCOPE_OK)
        return st;
    if (s->cmap_n == 0) {
        s->cmap[0] = 0;
        s->cmap_n = 1;
    }
    for (size_t i = s->cmap_n; i < b->ncls; i++)
        if ((st = hscope__builder_class(P->out, b->cls_addr[i], &s->cmap[i], P->err)) !=
            HSCOPE_OK)
            return st;
    s->cmap_n = n;
    return HSCOPE_OK;
}

static int
map_type(pool *P, slot *s, int t)
{
    if (t < 32 || t == HSCOPE_TYPE_OTHER)
        return t;
    if (!s->tmap[t]) {
        const char *name = s->b.type_names[t];
        s->tmap[t] = hscope__type_code(P->out, name, strlen(name));
    }
    return s->tmap[t];
}

/*
 * The first capacity of the final columns.  Growing them from a few
 * thousand entries leaves their first megabytes in 4 KiB pages and moves
 * them a dozen times; a plain file's size tells their size in advance.
 * Dumps hold about 2.8 objects and 7 references per KB (a few hundred
 * bytes per record): these ratios err low, so the columns grow once
 * or twice more at most.  A dump of unusually long records gets more
 * capacity than it fills, which costs address space, not memory (pages
 * never written are never faulted in), and the model cuts every column to
 * its length at the end.  Under a memory limit the columns grow from
 * small as before, since the limit counts their capacity.
 */
#define EST_OBJ_BYTES 512
#define EST_REF_BYTES 256
static size_t
first_cap(pool *P, uint64_t bytes_per, uint64_t max)
{
    uint64_t est = P->bsize && !P->mem->limit ? P->fsize / bytes_per : 0;
    if (est > max)
        est = max;
    return est > 4096 ? (size_t)est : 4096;
}

static hscope_status
grow_out(pool *P, size_t add_objs, size_t add_edges, hscope_error *err)
{
    hscope__builder *o = P->out;
    hscope_status st;
    if (o->n + add_objs > o->max_objects)
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "more than %llu objects (max_objects)",
                            (unsigned long long)o->max_objects);
    if (o->nedges + add_edges > UINT32_MAX)
        return hscope__fail(err, HSCOPE_ERR_LIMIT, "more than 2^32-1 references in one dump");
    if (o->n + add_objs > o->cap) {
        size_t nc = o->cap ? o->cap : first_cap(P, EST_OBJ_BYTES, o->max_objects);
        while (nc < o->n + add_objs)
            nc = nc < ((size_t)1 << 24) ? nc * 2 : nc + nc / 2;
#define G(f, t)                                                              \
        do {                                                                 \
            t *q = hscope__realloc(P->mem, o->f, (nc + 1) * sizeof(t));     \
            if (!q)                                                          \
                return hscope__nomem(err, (nc + 1) * sizeof(t));             \
            o->f = q;                                                        \
        } while (0)
        G(addr, uint64_t); G(type, uint8_t); G(flags, uint16_t);
        G(class_ix, uint32_t); G(detail, uint32_t); G(site, uint32_t);
        G(gen, uint32_t); G(memsize, uint32_t); G(size, uint32_t);
        G(edge_start, uint32_t);
#undef G
        o->cap = nc;
    }
    size_t need = o->nedges + add_edges;
    if (!o->edge_cap && add_edges) {
        size_t e = first_cap(P, EST_REF_BYTES, UINT32_MAX);
        need = need > e ? need : e;
    }
    if ((st = hscope__grow(P->mem, (void **)&o->edges, &o->edge_cap, need,
                           sizeof(uint64_t), err)) != HSCOPE_OK)
        return st;
    return HSCOPE_OK;
}

static hscope_status
merge_big(pool *P, hscope__bigvals *to, const hscope__bigvals *from, uint32_t shift)
{
    for (size_t i = 0; i < from->len; i++) {
        hscope_status st;
        if ((st = hscope__grow(P->mem, (void **)&to->id, &to->cap_id, to->len + 1, 4, P->err)) ||
            (st = hscope__grow(P->mem, (void **)&to->val, &to->cap_val, to->len + 1, 8, P->err)))
            return st;
        to->id[to->len] = from->id[i] + shift;
        to->val[to->len++] = from->val[i];
    }
    return HSCOPE_OK;
}

static hscope_status
merge_roots(pool *P, slot *s)
{
    hscope__builder *o = P->out, *b = &s->b;
    hscope_status st;
    uint32_t cmap[64], *cm = cmap;
    if (b->ncat > 64 && !(cm = hscope__malloc(P->mem, b->ncat * 4)))
        return hscope__nomem(P->err, b->ncat * 4);
    for (size_t c = 0; c < b->ncat; c++) {
        uint32_t name = s->smap[b->cat_name[c]];
        size_t k;
        for (k = 0; k < o->ncat && o->cat_name[k] != name; k++) {
        }
        if (k == o->ncat) {
            size_t c0 = o->cat_cap;
            if ((st = hscope__grow(P->mem, (void **)&o->cat_name, &o->cat_cap, o->ncat + 1, 4,
                                   P->err)) != HSCOPE_OK)
                goto out;
            if (o->cat_cap != c0) {
                uint64_t *x = hscope__realloc(P->mem, o->cat_records, o->cat_cap * 8);
                if (!x) {
                    st = hscope__nomem(P->err, o->cat_cap * 8);
                    goto out;
                }
                o->cat_records = x;
            }
            o->cat_name[k] = name;
            o->cat_records[k] = 0;
            o->ncat++;
        }
        o->cat_records[k] += b->cat_records[c];
        cm[c] = (uint32_t)k;
    }
    size_t c0 = o->root_cap;
    if ((st = hscope__grow(P->mem, (void **)&o->root_addr, &o->root_cap, o->nroot + b->nroot, 8,
                           P->err)) != HSCOPE_OK)
        goto out;
    if (o->root_cap != c0) {
        uint32_t *x = hscope__realloc(P->mem, o->root_cat, o->root_cap * 4);
        if (!x) {
            st = hscope__nomem(P->err, o->root_cap * 4);
            goto out;
        }
        o->root_cat = x;
    }
    for (size_t i = 0; i < b->nroot; i++) {
        o->root_cat[o->nroot] = cm[b->root_cat[i]];
        o->root_addr[o->nroot++] = b->root_addr[i];
    }
    o->root_records += b->root_records;
    st = HSCOPE_OK;
out:
    if (cm != cmap)
        hscope__free(P->mem, cm);
    return st;
}

static hscope_status
merge_values(pool *P, slot *s, uint32_t shift)
{
    hscope__builder *o = P->out, *b = &s->b;
    hscope_status st;
    size_t need;
    if (!b->nval)
        return HSCOPE_OK;
    if (!hscope__add_ok(o->val_arena_len, b->val_arena_len, &need))
        return hscope__fail(P->err, HSCOPE_ERR_LIMIT, "value arena overflow");
    if ((st = hscope__grow(P->mem, (void **)&o->val_arena, &o->val_arena_cap, need, 1,
                           P->err)) != HSCOPE_OK)
        return st;
    size_t c0 = o->val_cap;
    if ((st = hscope__grow(P->mem, (void **)&o->val_off, &o->val_cap, o->nval + b->nval, 8,
                           P->err)) != HSCOPE_OK)
        return st;
    if (o->val_cap != c0) {
        uint32_t *a = hscope__realloc(P->mem, o->val_id, o->val_cap * 4);
        if (!a)
            return hscope__nomem(P->err, o->val_cap * 4);
        o->val_id = a;
        uint32_t *l = hscope__realloc(P->mem, o->val_len, o->val_cap * 4);
        if (!l)
            return hscope__nomem(P->err, o->val_cap * 4);
        o->val_len = l;
    }
    memcpy(o->val_arena + o->val_arena_len, b->val_arena, b->val_arena_len);
    for (size_t i = 0; i < b->nval; i++) {
        o->val_id[o->nval] = b->val_id[i] + shift;
        o->val_off[o->nval] = b->val_off[i] + o->val_arena_len;
        o->val_len[o->nval++] = b->val_len[i];
    }
    o->val_arena_len = need;
    return HSCOPE_OK;
}

/* Append the slot's chunk to the final builder, then empty the slot's
 * per-chunk state (its interner and sites stay, with their maps). */
/*
 * Sink mode (a streaming fold): the workers still parse chunks into their
 * slot's columns, and the slot's objects are handed to the final builder's
 * sink here, in dump order and with the final builder's string and site
 * ids, exactly as a single-threaded parse would hand them over.  Only the
 * hand-over runs on this thread; the parsing is spread over the workers.
 */
static hscope_status
absorb(pool *P, slot *s)
{
    hscope__builder *o = P->out, *b = &s->b;
    size_t big = 0, bigs = 0, oc = 0;
    for (size_t i = 0; i < b->n; i++) {
        uint64_t memsize = b->memsize[i], size = b->size[i];
        if (memsize == HSCOPE__U32_BIG) {
            while (big < b->big_memsize.len && b->big_memsize.id[big] < i)
                big++;
            if (big < b->big_memsize.len && b->big_memsize.id[big] == i)
                memsize = b->big_memsize.val[big];
        }
        if (size == HSCOPE__U32_BIG) {
            while (bigs < b->big_size.len && b->big_size.id[bigs] < i)
                bigs++;
            if (bigs < b->big_size.len && b->big_size.id[bigs] == i)
                size = b->big_size.val[bigs];
        }
        uint32_t site = s->sitemap[b->site[i]];
        hscope__objrec r = {
            .addr = b->addr[i], .class_addr = b->cls_addr ? b->cls_addr[b->class_ix[i]] : 0,
            .memsize = memsize, .size = size,
            .nrefs = (i + 1 < b->n ? b->edge_start[i + 1] : b->nedges) - b->edge_start[i],
            .detail = s->smap[b->detail[i]],
            .file = o->site_file[site], .line = o->site_line[site],
            .method = o->site_method[site], .site = site, .gen = b->gen[i],
            .flags = b->flags[i], .type = (uint8_t)map_type(P, s, b->type[i]),
            .has_class = b->class_ix[i] != 0,
        };
        o->streamed++;
        hscope_status st = o->sink(o->sink_ud, o, &r, P->err);
        uint64_t oid;
        if (st == HSCOPE_OK && o->sink_oid && hscope__bigvals_next(&b->oids, i, &oc, &oid))
            st = o->sink_oid(o->sink_ud, o, oid, P->err);
        if (st != HSCOPE_OK)
            return st;
    }
    return HSCOPE_OK;
}

static hscope_status
merge(pool *P, slot *s)
{
    hscope__builder *o = P->out, *b = &s->b;
    hscope_status st;
    uint64_t line0 = o->lines;
    if (s->st != HSCOPE_OK) {
        /* the records before the error count first: one thread would have
         * hit max_objects before reaching the bad line */
        if (o->n + b->n > o->max_objects)
            return hscope__fail(P->err, HSCOPE_ERR_LIMIT, "more than %llu objects (max_objects)",
                                (unsigned long long)o->max_objects);
        /* make the chunk-local line number global */
        if (s->raw_error) {
            hscope__error_copy_out(P->err, &s->err);
        } else if (s->too_long == 2) {
            uint64_t lineno = s->err.line + line0;
            hscope__fail_at(P->err, HSCOPE_ERR_LIMIT, lineno, s->last,
                            "line %llu (byte %llu) is longer than max_line_bytes (%llu)",
                            (unsigned long long)lineno, (unsigned long long)s->last,
                            (unsigned long long)P->max_line);
        } else if (s->err.status) {
            hscope__fail_at(P->err, s->err.status, s->err.line + line0, s->err.offset,
                            "line %llu, %s", (unsigned long long)(s->err.line + line0),
                            s->err.message);
        }
        return s->st;
    }
    if ((st = map_strings(P, s)) != HSCOPE_OK || (st = map_sites(P, s)) != HSCOPE_OK ||
        (st = map_classes(P, s)) != HSCOPE_OK)
        return st;
    if (o->sink) {
        /* roots are kept in sink mode too, as on one thread */
        if ((st = absorb(P, s)) != HSCOPE_OK || (st = merge_roots(P, s)) != HSCOPE_OK)
            return st;
        if (o->slot_sink && o->slot_sink->chunk_done && s->sink_state &&
            (st = o->slot_sink->chunk_done(o->sink_ud, s->sink_state, s->smap, s->smap_n,
                                           P->err)) != HSCOPE_OK)
            return st;
        goto counters;
    }
    if ((st = grow_out(P, b->n, b->nedges, P->err)) != HSCOPE_OK)
        return st;
    uint32_t shift = (uint32_t)o->n;
    uint32_t eshift = (uint32_t)o->nedges;
    for (size_t i = 0; i < b->n; i++) {
        size_t k = o->n + i;
        o->addr[k] = b->addr[i];
        o->type[k] = (uint8_t)map_type(P, s, b->type[i]);
        o->flags[k] = b->flags[i];
        o->class_ix[k] = s->cmap[b->class_ix[i]];
        o->detail[k] = s->smap[b->detail[i]];
        o->site[k] = s->sitemap[b->site[i]];
        o->gen[k] = b->gen[i];
        o->memsize[k] = b->memsize[i];
        o->size[k] = b->size[i];
        o->edge_start[k] = b->edge_start[i] + eshift;
    }
    if (b->nedges)
        memcpy(o->edges + o->nedges, b->edges, b->nedges * sizeof(uint64_t));
    if ((st = merge_big(P, &o->big_memsize, &b->big_memsize, shift)) != HSCOPE_OK ||
        (st = merge_big(P, &o->big_size, &b->big_size, shift)) != HSCOPE_OK ||
        (st = merge_roots(P, s)) != HSCOPE_OK || (st = merge_values(P, s, shift)) != HSCOPE_OK)
        return st;
    o->n += b->n;
    o->nedges += b->nedges;
counters:
    if ((st = hscope__builder_merge_side(o, b, P->err)) != HSCOPE_OK)
        return st;
    o->bytes += s->nbytes; /* block mode (reading in order counts as it reads) */
    o->blocks += P->bsize != 0;
    o->streamed += b->streamed; /* slot sink mode: records folded on the worker */
    o->lines += b->lines;
    o->shapes += b->shapes;
    o->shape_memsize = hscope__sat_add(o->shape_memsize, b->shape_memsize);
    o->free_slots += b->free_slots;
    o->unknown_keys += b->unknown_keys;
    o->unknown_types += b->unknown_types;
    o->truncated |= b->truncated;
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        o->skipped[r] += b->skipped[r];
    for (uint32_t i = 0; i < b->nskip_examples && o->nskip_examples < HSCOPE__MAX_SKIP_EXAMPLES; i++) {
        o->skip_line[o->nskip_examples] = b->skip_line[i] + line0;
        o->skip_reason[o->nskip_examples++] = b->skip_reason[i];
    }
    /* reset the per-chunk parts */
    b->n = 0;
    b->nedges = 0;
    b->nroot = 0;
    b->ncat = 0;
    b->root_records = 0;
    b->nval = 0;
    b->val_arena_len = 0;
    b->big_memsize.len = b->big_size.len = 0;
    b->lines = b->shapes = b->shape_memsize = b->free_slots = b->streamed = 0;
    b->unknown_keys = b->unknown_types = b->truncated = 0;
    memset(b->skipped, 0, sizeof(b->skipped));
    b->nskip_examples = 0;
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* the producer / merger loop                                         */
/* ------------------------------------------------------------------ */

/* Merge every DONE slot that is next in order; with `wait`, block until
 * the oldest outstanding slot is done. */
static hscope_status
merge_ready(pool *P, uint64_t *merge_seq, int wait)
{
    for (;;) {
        slot *s = NULL;
        (void)HOOK(HSCOPE__HOOK_MERGE, NULL, 0);
        pthread_mutex_lock(&P->mu);
        for (;;) {
            s = NULL;
            int outstanding = 0;
            for (unsigned i = 0; i < P->nslots; i++) {
                if (P->slots[i].state != FREE && P->slots[i].seq == *merge_seq)
                    s = &P->slots[i];
                outstanding |= P->slots[i].state != FREE;
            }
            if (s && s->state == DONE)
                break;
            if (!wait || !outstanding) {
                s = NULL;
                break;
            }
            wait_on(P, &P->done);
        }
        pthread_mutex_unlock(&P->mu);
        if (!s)
            return HSCOPE_OK;
        hscope_status st = merge(P, s);
        (void)HOOK(HSCOPE__HOOK_MERGED, NULL, 0);
        pthread_mutex_lock(&P->mu);
        s->state = FREE;
        pthread_mutex_unlock(&P->mu);
        (*merge_seq)++;
        if (st != HSCOPE_OK)
            return st;
        wait = 0; /* merged one: now only take what is already done */
    }
}

static slot *
free_slot(pool *P)
{
    for (unsigned i = 0; i < P->nslots; i++)
        if (P->slots[i].state == FREE)
            return &P->slots[i];
    return NULL;
}

/* A free slot, merging finished chunks while there is none. */
static hscope_status
take_slot(pool *P, uint64_t *merge_seq, slot **out)
{
    for (;;) {
        pthread_mutex_lock(&P->mu);
        slot *s = free_slot(P);
        pthread_mutex_unlock(&P->mu);
        if (s) {
            *out = s;
            (void)HOOK(HSCOPE__HOOK_TAKE_SLOT, NULL, 0);
            return HSCOPE_OK;
        }
        hscope_status st = merge_ready(P, merge_seq, 1);
        if (st != HSCOPE_OK)
            return st;
    }
}

/* Hand the slot to the workers as the next chunk in order. */
static void
queue(pool *P, slot *s)
{
    (void)HOOK(HSCOPE__HOOK_QUEUE, NULL, 0);
    pthread_mutex_lock(&P->mu);
    s->seq = P->next_seq++;
    s->state = READY;
    wake_all(P, &P->work);
    pthread_mutex_unlock(&P->mu);
    (void)HOOK(HSCOPE__HOOK_QUEUED, NULL, 0);
}

/* Give the slot's first `len` bytes (whole lines) to the workers, as the
 * next chunk in order. */
static void
hand_over(pool *P, slot *s, size_t len, int at_eof, uint64_t base)
{
    s->buf[len] = '\n'; /* sentinel (PAD bytes follow) */
    (void)HOOK(HSCOPE__HOOK_POISON, s->buf + len + 1, s->cap + PAD - len - 1);
    s->data = s->buf;
    s->len = len;
    s->at_eof = at_eof;
    s->base = base;
    queue(P, s);
}

/* The producer's state from one slot to the next (produce()). */
typedef struct feed {
    uint64_t merge_seq;         /* chunks merged */
    uint64_t pos;               /* input bytes read */
    uint64_t next_progress;
    uint64_t max;               /* max_line */
    uint8_t *carry;             /* partial line left from the last chunk */
    size_t ncarry, carry_cap;
    int discard;                /* in a line longer than max: dropping it */
    int eof;
} feed;

/* Merge every chunk handed over so far, in order. */
static hscope_status
merge_all(pool *P, uint64_t *merge_seq)
{
    hscope_status st;
    while (*merge_seq < P->next_seq)
        if ((st = merge_ready(P, merge_seq, 1)) != HSCOPE_OK)
            return st;
    return HSCOPE_OK;
}

/* The carried partial line at the start of slot s. */
static hscope_status
take_carry(pool *P, const feed *F, slot *s)
{
    if (F->ncarry > s->cap) {
        uint8_t *nb = hscope__realloc(P->mem, s->buf, F->ncarry + PAD);
        if (!nb)
            return hscope__nomem(P->err, F->ncarry + PAD);
        s->buf = nb;
        s->cap = F->ncarry;
    }
    memcpy(s->buf, F->carry, F->ncarry);
    return HSCOPE_OK;
}

/* Slot s is full and holds no complete line: grow it up to max_line, or
 * (a longer line) fail in strict mode, else start dropping the line. */
static hscope_status
full_slot(pool *P, feed *F, slot *s, size_t *len, size_t *scanned, uint64_t *base)
{
    hscope_status st;
    if (s->cap >= F->max) { /* a line longer than max_line */
        if (P->o->strict) {
            /* all earlier lines are in merged or in-flight chunks: merge
             * them to know this line's number */
            if ((st = merge_all(P, &F->merge_seq)) != HSCOPE_OK)
                return st;
            uint64_t lineno = P->out->lines + 1;
            return hscope__fail_at(P->err, HSCOPE_ERR_LIMIT, lineno, *base,
                "line %llu (byte %llu) is longer than max_line_bytes (%llu)",
                (unsigned long long)lineno, (unsigned long long)*base,
                (unsigned long long)F->max);
        }
        F->discard = 1;
        *base += *len;
        *len = *scanned = 0;
        return HSCOPE_OK;
    }
    size_t nc = s->cap * 2 > F->max ? (size_t)F->max : s->cap * 2;
    uint8_t *nb = hscope__realloc(P->mem, s->buf, nc + PAD);
    if (!nb)
        return hscope__nomem(P->err, nc + PAD);
    memset(nb + s->cap, 0, nc + PAD - s->cap);
    (void)HOOK(HSCOPE__HOOK_POISON, nb + s->cap, nc + PAD - s->cap);
    s->buf = nb;
    s->cap = nc;
    return HSCOPE_OK;
}

/* Read more input into slot s after its first len bytes (*got 0 at the
 * end), and report progress. */
static hscope_status
read_input(pool *P, feed *F, slot *s, size_t len, size_t last_nl, uint64_t base,
           size_t *got)
{
    hscope_status st;
    hscope_error rerr;
    hscope__error_init(&rerr);
    if ((st = hscope__reader_read(P->r, s->buf + len, s->cap - len, got, &rerr)) != HSCOPE_OK) {
        /* A read error (corrupt gzip...) comes after every line read
         * before it, as on one thread: parse the complete lines of this
         * slot and merge everything first; an error there is reported
         * instead. */
        if (last_nl != SIZE_MAX)
            hand_over(P, s, last_nl + 1, 0, base);
        hscope_status st2 = merge_all(P, &F->merge_seq);
        if (st2 != HSCOPE_OK)
            return st2;
        hscope__error_copy_out(P->err, &rerr);
        return st;
    }
    if (P->o->progress && P->r->in_bytes >= F->next_progress) {
        F->next_progress = P->r->in_bytes + P->progress_every;
        if (P->o->progress(P->o->progress_ud, P->r->in_bytes, P->r->total))
            return hscope__fail(P->err, HSCOPE_ERR_CANCELLED, "load cancelled");
    }
    return HSCOPE_OK;
}

/* The end (nl) of the too-long line being dropped: drop up to it, count it
 * in order (everything before was merged or is in flight). */
static hscope_status
end_discard(pool *P, feed *F, slot *s, const uint8_t *nl, size_t *len, uint64_t *base)
{
    hscope_status st;
    if ((st = merge_ready(P, &F->merge_seq, 1)) != HSCOPE_OK ||
        (st = merge_all(P, &F->merge_seq)) != HSCOPE_OK)
        return st;
    hscope__builder_note_skip(P->out, HSCOPE_SKIP_TOO_LONG, ++P->out->lines);
    size_t skip = (size_t)(nl - s->buf) + 1;
    memmove(s->buf, s->buf + skip, *len - skip);
    *base += skip;
    *len -= skip;
    F->discard = 0;
    return HSCOPE_OK;
}

/* Fill slot s: the carried partial line, then fresh input, until it holds
 * at least one complete line and is full, or the input ends.  *len bytes
 * from input offset *base; the last newline at *last_nl (SIZE_MAX: none). */
static hscope_status
fill_slot(pool *P, feed *F, slot *s, size_t *lenp, size_t *last_nlp, uint64_t *basep)
{
    hscope_status st;
    size_t len = 0;
    if (F->ncarry) {
        if ((st = take_carry(P, F, s)) != HSCOPE_OK)
            return st;
        len = F->ncarry;
    }
    uint64_t base = F->pos - F->ncarry;
    F->ncarry = 0;
    size_t last_nl = SIZE_MAX, scanned = 0;
    for (;;) {
        if (len == s->cap) {
            if (last_nl != SIZE_MAX)
                break;
            if ((st = full_slot(P, F, s, &len, &scanned, &base)) != HSCOPE_OK)
                return st;
        }
        size_t got;
        if ((st = read_input(P, F, s, len, last_nl, base, &got)) != HSCOPE_OK)
            return st;
        if (got == 0) {
            F->eof = 1;
            break;
        }
        P->out->bytes += got;
        F->pos += got;
        len += got;
        uint8_t *nl = memchr(s->buf + scanned, '\n', len - scanned);
        if (F->discard && nl) {
            if ((st = end_discard(P, F, s, nl, &len, &base)) != HSCOPE_OK)
                return st;
            scanned = 0;
            continue;
        }
        if (F->discard) {
            base += len;
            len = scanned = 0;
            continue;
        }
        /* last newline so far: search backwards from the end */
        for (size_t i = len; i > scanned; i--)
            if (s->buf[i - 1] == '\n') {
                last_nl = i - 1;
                break;
            }
        scanned = len;
        if (last_nl != SIZE_MAX && len == s->cap)
            break;
    }
    *lenp = len;
    *last_nlp = last_nl;
    *basep = base;
    return HSCOPE_OK;
}

/* Hand the complete lines of a filled slot to the workers (all of it at
 * the end), keeping its partial last line for the next slot, and merge
 * what is done. */
static hscope_status
hand_slot(pool *P, feed *F, slot *s, size_t len, size_t last_nl, uint64_t base)
{
    hscope_status st;
    /* At the end the partial last line goes too, except from a cut gzip
     * stream in strict mode: as on one thread, the cut stream is then the
     * error (reported by produce(), after the complete lines). */
    int whole = F->eof && !(P->r->truncated && P->o->strict);
    size_t hand = whole ? len : (last_nl == SIZE_MAX ? 0 : last_nl + 1);
    if (F->eof && F->discard) {
        if ((st = merge_all(P, &F->merge_seq)) != HSCOPE_OK)
            return st;
        hscope__builder_note_skip(P->out, HSCOPE_SKIP_TOO_LONG, ++P->out->lines);
        hand = 0;
    }
    if (!F->eof && len > hand) { /* keep the partial last line */
        F->ncarry = len - hand;
        if ((st = hscope__grow(P->mem, (void **)&F->carry, &F->carry_cap, F->ncarry, 1,
                               P->err)) != HSCOPE_OK)
            return st;
        memcpy(F->carry, s->buf + hand, F->ncarry);
    }
    if (hand == 0)
        return HSCOPE_OK;
    hand_over(P, s, hand, F->eof, base);
    return merge_ready(P, &F->merge_seq, 0);
}

/* Stream mode: read the input in order into free slots, hand each slot's
 * complete lines to the workers, merge the chunks in order. */
static hscope_status
produce(pool *P)
{
    hscope_status st = HSCOPE_OK;
    feed F;
    memset(&F, 0, sizeof(F));
    F.max = P->o->max_line ? P->o->max_line : HSCOPE_DEFAULT_MAX_LINE_BYTES;
    while (!F.eof) {
        slot *s;
        size_t len, last_nl;
        uint64_t base;
        if ((st = take_slot(P, &F.merge_seq, &s)) != HSCOPE_OK ||
            (st = fill_slot(P, &F, s, &len, &last_nl, &base)) != HSCOPE_OK ||
            (st = hand_slot(P, &F, s, len, last_nl, base)) != HSCOPE_OK)
            goto out;
    }
    if ((st = merge_all(P, &F.merge_seq)) != HSCOPE_OK)
        goto out;
    if (P->r->truncated) {
        P->out->truncated = 1;
        if (P->o->strict)
            st = hscope__fail_at(P->err, HSCOPE_ERR_TRUNCATED, P->out->lines + 1, F.pos,
                                 "gzip stream is truncated (ends before its trailer)");
    }
out:
    hscope__free(P->mem, F.carry);
    return st;
}

/* Block mode: hand out the blocks in order and merge them in order. */
static hscope_status
produce_blocks(pool *P)
{
    hscope_status st;
    uint64_t merge_seq = 0, next_progress = 0, done = 0;
    uint64_t nblocks = P->fsize / P->bsize + (P->fsize % P->bsize != 0);
    for (uint64_t k = 0; k < nblocks;) {
        slot *s;
        if ((st = take_slot(P, &merge_seq, &s)) != HSCOPE_OK)
            return st;
        s->blk = k++;
        queue(P, s);
        done = k * P->bsize < P->fsize ? k * P->bsize : P->fsize;
        if (P->o->progress && done >= next_progress) {
            next_progress = done + P->progress_every;
            if (P->o->progress(P->o->progress_ud, done, P->fsize))
                return hscope__fail(P->err, HSCOPE_ERR_CANCELLED, "load cancelled");
        }
        if ((st = merge_ready(P, &merge_seq, 0)) != HSCOPE_OK)
            return st;
    }
    while (merge_seq < P->next_seq)
        if ((st = merge_ready(P, &merge_seq, 1)) != HSCOPE_OK)
            return st;
    /* the reader did not read: say how much was, and leave a descriptor
     * where reading it in order would have (at the end) */
    P->r->in_bytes = P->out->bytes;
    P->r->eof = 1;
    if (P->r->fd >= 0)
        (void)lseek(P->r->fd, (off_t)(P->r->origin + P->out->bytes), SEEK_SET);
    return HSCOPE_OK;
}

hscope_status
hscope__parse_parallel(hscope__reader *r, hscope__builder *out,
                       const hscope__parse_opts *o, unsigned threads,
                       hscope_error *err)
{
    pool P;
    memset(&P, 0, sizeof(P));
    P.r = r;
    P.out = out;
    P.o = o;
    P.err = err;
    P.mem = out->mem;
    P.nthreads = threads;
    P.nslots = threads + 2;
    hscope_status st = HSCOPE_OK;
    pthread_t th[64];
    unsigned started = 0;
    P.slots = hscope__calloc(P.mem, P.nslots, sizeof(slot));
    if (!P.slots)
        return hscope__nomem(err, P.nslots * sizeof(slot));
    P.progress_every = o->progress_bytes ? o->progress_bytes : PROGRESS_EVERY;
    /* timed waits on the monotonic clock where there is a choice (a
     * wall-clock step then cannot stretch a wait) */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    P.clock = CLOCK_REALTIME;
#if defined(_POSIX_CLOCK_SELECTION) && _POSIX_CLOCK_SELECTION > 0
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0)
        P.clock = CLOCK_MONOTONIC;
#endif
    pthread_mutex_init(&P.mu, NULL);
    pthread_cond_init(&P.work, &ca);
    pthread_cond_init(&P.done, &ca);
    pthread_condattr_destroy(&ca);
    uint64_t max = o->max_line ? o->max_line : HSCOPE_DEFAULT_MAX_LINE_BYTES;
    size_t cap = max < CHUNK ? (size_t)(max < 64 ? 64 : max) : CHUNK;
    P.max_line = max < 64 ? 64 : max; /* the limit reading in order applies */
    /* block mode: a plain input that can be read at any offset; lines
     * shorter than two blocks, so only a block's last line can be long */
    uint64_t bsize = o->block_bytes ? o->block_bytes : BLOCK;
    if (r->total && !r->gzip && max / 2 >= bsize) {
        P.bsize = bsize;
        P.fsize = r->total;
        cap = (size_t)bsize + 1 + SLACK;
    }
    /* a small plain input needs no more (the buffers grow for long lines) */
    if (r->total && !r->gzip && r->total < cap)
        cap = r->total < 64 ? 64 : (size_t)r->total;
    for (unsigned i = 0; i < P.nslots && st == HSCOPE_OK; i++) {
        slot *s = &P.slots[i];
        hscope__error_init(&s->err);
        s->cap = cap;
        s->buf = hscope__calloc(P.mem, 1, cap + PAD);
        if (!s->buf) {
            st = hscope__nomem(err, cap + PAD);
            break;
        }
        (void)HOOK(HSCOPE__HOOK_POISON, s->buf, cap + PAD);
        if ((st = hscope__builder_init(&s->b, P.mem, out->keep_values, 0, err)) == HSCOPE_OK)
            hscope__lp_init(&s->lp, &s->b, o, &s->err);
        s->b.sink_details = out->sink_details;
        if (st == HSCOPE_OK && out->sink && out->slot_sink) {
            /* the fold runs on the workers, one state per slot */
            if (!(s->sink_state = out->slot_sink->slot_new(out->sink_ud, &s->seq)))
                st = hscope__nomem(err, 4096);
            s->b.sink = out->slot_sink->slot_sink;
            s->b.sink_ud = s->sink_state;
        }
    }
    for (; st == HSCOPE_OK && started < threads && started < 64; started++)
        if (pthread_create(&th[started], NULL, worker, &P) != 0)
            break;
    if (st == HSCOPE_OK && started == 0)
        st = hscope__fail(err, HSCOPE_ERR_INTERNAL, "cannot start parser threads");
    if (st == HSCOPE_OK)
        st = P.bsize ? produce_blocks(&P) : produce(&P);
    pthread_mutex_lock(&P.mu);
    P.stop = 1;
    wake_all(&P, &P.work);
    pthread_mutex_unlock(&P.mu);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    /* slot sink mode: every chunk is merged (so each slot's strings are
     * mapped); fold the slots' states into the final one */
    for (unsigned i = 0; i < P.nslots && st == HSCOPE_OK && out->slot_sink && out->sink; i++) {
        slot *s = &P.slots[i];
        if (!s->sink_state)
            continue;
        if ((st = map_strings(&P, s)) != HSCOPE_OK)
            break;
        int tm[256];
        for (int t = 0; t < 256; t++)
            tm[t] = t < 32 || t == HSCOPE_TYPE_OTHER || !s->b.type_names[t][0] ? t
                                                                             : map_type(&P, s, t);
        st = out->slot_sink->slot_merge(out->sink_ud, s->sink_state, s->smap, s->smap_n, tm, err);
    }
    for (unsigned i = 0; i < P.nslots; i++) {
        slot *s = &P.slots[i];
        if (s->lp.b)
            hscope__lp_free(&s->lp);
        if (s->b.mem)
            hscope__builder_free(&s->b);
        hscope__free(P.mem, s->buf);
        hscope__free(P.mem, s->smap);
        hscope__free(P.mem, s->sitemap);
        hscope__free(P.mem, s->cmap);
        if (s->sink_state)
            out->slot_sink->slot_free(s->sink_state);
    }
    hscope__free(P.mem, P.slots);
    pthread_mutex_destroy(&P.mu);
    pthread_cond_destroy(&P.work);
    pthread_cond_destroy(&P.done);
    return st;
}

_Static_assert(PAD >= HSCOPE__LINE_PAD + 1, "line buffers need HSCOPE__LINE_PAD");
