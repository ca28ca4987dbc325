/*
 * load.c - a heap from a dump (path, fd or memory: reader, parser, model
 * build) or from a saved heap (DUMP.hsx), and the heap's reference count.
 * The exported hscope_heap_open_* of api/heap_api.c check nothing more
 * and call these.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../parse/parse.h"
#include "model.h"
#include "../index/index.h"

/* ------------------------------------------------------------------ */
/* loading                                                            */
/* ------------------------------------------------------------------ */

enum src_kind { SRC_PATH, SRC_FD, SRC_MEM };

/* A new heap with one reference, its memory context started with the
 * load options' hooks and limit (it accounts for the struct itself too);
 * NULL with err set when it cannot be allocated.  Freed by
 * hscope__heap_release(). */
static hscope_heap_t *
heap_new(const hscope_load_options *o, hscope_error *err)
{
    hscope__mem tmpmem;
    hscope__mem_init(&tmpmem, o->allocator, o->max_memory);
    hscope_heap_t *h = hscope__calloc(&tmpmem, 1, sizeof(*h));
    if (!h) {
        hscope__nomem(err, sizeof(*h));
        return NULL;
    }
    hscope__mem_init(&h->mem, o->allocator, o->max_memory);
    atomic_store(&h->mem.used, atomic_load(&tmpmem.used));
    atomic_init(&h->refs, 1);
    pthread_mutex_init(&h->rev_lock, NULL);
    return h;
}

static hscope_status
load(hscope_heap_t **out, enum src_kind kind, const char *path, int fd,
     const void *data, size_t len, const hscope_load_options *uopts,
     hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_load_options o;
    hscope_status st;
    hscope__reader r;
    hscope__builder b;
    hscope_heap_t *h = NULL;
    uint64_t t0 = hscope__now_ns();
    int have_reader = 0, have_builder = 0;

    memset(&b, 0, sizeof(b));
    if (!out) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out is NULL");
        goto done;
    }
    *out = NULL;
    if ((st = hscope__read_load_options(uopts, &o, &err)) != HSCOPE_OK)
        goto done;
    if (!(h = heap_new(&o, &err))) {
        st = err.status;
        goto done;
    }
    int no_gzip = (o.flags & HSCOPE_LOAD_NO_GZIP) != 0;
    if (kind == SRC_PATH)
        st = hscope__reader_open_path(&r, &h->mem, path, no_gzip, &err);
    else if (kind == SRC_FD)
        st = hscope__reader_open_fd(&r, &h->mem, fd, no_gzip, &err);
    else
        st = hscope__reader_open_memory(&r, &h->mem, data, len, no_gzip, &err);
    have_reader = 1;
    if (st != HSCOPE_OK)
        goto done;
    have_builder = 1;
    if ((st = hscope__builder_init(&b, &h->mem, (o.flags & HSCOPE_LOAD_VALUES) != 0,
                                   o.max_objects, &err)) != HSCOPE_OK)
        goto done;
    hscope__parse_opts po = hscope__parse_opts_of(&o);
    unsigned threads = hscope__parse_threads(o.threads, &r);
    if (threads > 1 && !po.line_fn)
        st = hscope__parse_parallel(&r, &b, &po, threads, &err);
    else
        st = hscope__parse_stream(&r, &b, &po, &err);
    if (st != HSCOPE_OK)
        goto done;
    if (b.n == 0 && b.root_records == 0 && b.shapes == 0 && b.free_slots == 0) {
        st = hscope__fail(&err, HSCOPE_ERR_NOT_A_DUMP,
                          b.lines ? "not a heap dump: none of %llu lines is a "
                                    "heap dump record (first problem: line %llu, %s)"
                                  : "not a heap dump: the input is empty",
                          (unsigned long long)b.lines,
                          (unsigned long long)(b.nskip_examples ? b.skip_line[0] : 0),
                          b.nskip_examples ? hscope__skip_reason_name(b.skip_reason[0]) : "");
        goto done;
    }
    if ((st = hscope__model_build(h, &b, threads, &err)) != HSCOPE_OK)
        goto done;
    h->stats.gzip = (uint32_t)r.gzip;
    h->stats.input_bytes = r.in_bytes;
    h->stats.load_ns = hscope__now_ns() - t0;
done:
    if (have_builder)
        hscope__builder_free(&b);
    if (have_reader)
        hscope__reader_close(&r);
    if (st != HSCOPE_OK) {
        hscope__heap_release(h); /* the only reference */
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    h->stats.index_bytes = hscope__index_bytes(h);
    h->stats.model_bytes = atomic_load(&h->mem.used) - h->stats.index_bytes;
    *out = h;
    return HSCOPE_OK;
}

hscope_status
hscope__heap_open_saved(hscope_heap_t **out, const char *path, const char *source,
                        const hscope_load_options *uopts, hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_load_options o;
    hscope_status st;
    hscope_heap_t *h = NULL;
    uint64_t t0 = hscope__now_ns();
    if (!out || !path) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out and path are required");
        goto done;
    }
    *out = NULL;
    if ((st = hscope__read_load_options(uopts, &o, &err)) != HSCOPE_OK)
        goto done;
    if (!(h = heap_new(&o, &err))) {
        st = err.status;
        goto done;
    }
    if ((st = hscope__model_open_saved(h, path, source, &err)) != HSCOPE_OK)
        goto done;
    h->stats.from_index = 1;
    h->stats.load_ns = hscope__now_ns() - t0;
done:
    if (st != HSCOPE_OK) {
        hscope__heap_release(h); /* the only reference */
        hscope__error_copy_out(uerr, &err);
        return st;
    }
    *out = h;
    return HSCOPE_OK;
}

hscope_status
hscope__heap_open_file(hscope_heap_t **out, const char *path,
                       const hscope_load_options *opts, hscope_error *err)
{
    if (opts && opts->size >= offsetof(hscope_load_options, flags) + 4 &&
        (opts->flags & HSCOPE_LOAD_USE_INDEX) && path) {
        /* a fresh, intact PATH.hsx; anything else: parse the dump */
        size_t n = strlen(path);
        char *ix = malloc(n + 5);
        if (ix) {
            memcpy(ix, path, n);
            memcpy(ix + n, ".hsx", 5);
            hscope_status st = access(ix, R_OK) == 0
                                   ? hscope__heap_open_saved(out, ix, path, opts, NULL)
                                   : HSCOPE_ERR_NOT_FOUND;
            free(ix);
            if (st == HSCOPE_OK)
                return st;
        }
    }
    return load(out, SRC_PATH, path, -1, NULL, 0, opts, err);
}

hscope_status
hscope__heap_open_fd(hscope_heap_t **out, int fd, const hscope_load_options *opts,
                     hscope_error *err)
{
    return load(out, SRC_FD, NULL, fd, NULL, 0, opts, err);
}

hscope_status
hscope__heap_open_memory(hscope_heap_t **out, const void *data, size_t len,
                         const hscope_load_options *opts, hscope_error *err)
{
    return load(out, SRC_MEM, NULL, -1, data, len, opts, err);
}

void
hscope__heap_retain(hscope_heap_t *h)
{
    atomic_fetch_add(&h->refs, 1);
}

void
hscope__heap_release(hscope_heap_t *h)
{
    if (!h || atomic_fetch_sub(&h->refs, 1) != 1)
        return;
    hscope__model_free(h);
    pthread_mutex_destroy(&h->rev_lock);
    hscope__mem m = h->mem;
    hscope__free(&m, h);
}

hscope_heap_t *
hscope__heap_ref(hscope_heap_t *h)
{
    if (h)
        hscope__heap_retain(h);
    return h;
}
