/*
 * report_api.c - the exported writers: check the arguments and options,
 * run the writer of src/report/ into the caller's write function, copy
 * the error out.
 */
#include <string.h>

#include "../model/model.h"
#include "../report/common.h"
#include "../report/export.h"
#include "../report/out.h"
#include "../report/table.h"
#include "../report/writers.h"

HSCOPE_API void
hscope_report_options_init(hscope_report_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->size = sizeof(*opts);
}

HSCOPE_API void
hscope_format_bytes(int64_t bytes, char *buf, uint64_t n)
{
    if (buf && n)
        hscope__fmt_bytes((double)bytes, buf, n > SIZE_MAX ? SIZE_MAX : (size_t)n);
}

HSCOPE_API void
hscope_format_count(uint64_t count, char *buf, uint64_t n)
{
    if (buf && n)
        hscope__fmt_count(count, buf, n > SIZE_MAX ? SIZE_MAX : (size_t)n);
}

HSCOPE_API uint64_t
hscope_load_warnings_text(const char *name, const hscope_load_stats *stats,
                          const uint64_t *skipped, uint32_t nskipped, char *buf, uint64_t n)
{
    hscope_load_stats s;
    uint64_t sk[HSCOPE_SKIP__COUNT] = { 0 };
    if (!buf)
        n = 0;
    if (n)
        buf[0] = '\0';
    if (!stats || stats->size < 2 * sizeof(uint32_t))
        return 0;
    hscope__load_stats_init(&s);
    memcpy(&s, stats, stats->size < sizeof(s) ? stats->size : sizeof(s));
    s.size = sizeof(s);
    for (uint32_t r = 0; skipped && r < nskipped && r < HSCOPE_SKIP__COUNT; r++)
        sk[r] = skipped[r];
    return hscope__load_warnings_text(name, &s, sk, buf, n > SIZE_MAX ? SIZE_MAX : (size_t)n);
}

/* Common entry: options checked against `formats`, output set up. */
static hscope_status
begin(const void *handle, const hscope_report_options *opts, uint32_t formats,
      hscope_write_fn write, hscope__ropts *ro, hscope_error *err)
{
    if (!handle || !write)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                            "the result and the write function are required");
    return hscope__ropts_read(opts, formats, ro, err);
}

static hscope_status
end(hscope_status st, hscope__out *o, hscope_error *uerr, hscope_error *err)
{
    hscope_status fst = hscope__out_finish(o);
    if (st == HSCOPE_OK)
        st = fst;
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, err);
    return st;
}

/* A writer's body: its arguments, the checked options, the output. */
typedef hscope_status (*body_fn)(const void *args, const hscope__ropts *ro, hscope__out *o,
                                 hscope_error *err);

/* Check, write through `body`, flush, copy the first error out. */
static hscope_status
run(const void *handle, const void *args, body_fn body, uint32_t formats,
    const hscope_report_options *opts, hscope_write_fn write, void *user_data,
    hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope__ropts ro;
    hscope__out o;
    hscope__out_init(&o, write, user_data, &err);
    hscope_status st = begin(handle, opts, formats, write, &ro, &err);
    if (st == HSCOPE_OK)
        st = body(args, &ro, &o, &err);
    return end(st, &o, uerr, &err);
}

#define TEXT_JSON (HSCOPE__FMT(HSCOPE_FORMAT_TEXT) | HSCOPE__FMT(HSCOPE_FORMAT_JSON))

static hscope_status
tally_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    (void)err;
    return hscope__tally_write(args, ro, o);
}

HSCOPE_API hscope_status
hscope_tally_write(const hscope_tally_t *tally, const hscope_report_options *opts,
                   hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(tally, tally, tally_body,
               TEXT_JSON | HSCOPE__FMT(HSCOPE_FORMAT_CSV) | HSCOPE__FMT(HSCOPE_FORMAT_SVG), opts,
               write, user_data, uerr);
}

static hscope_status
summary_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    return hscope__summary_write((hscope_heap_t *)args, ro, o, err);
}

HSCOPE_API hscope_status
hscope_heap_write_summary(hscope_heap_t *heap, const hscope_report_options *opts,
                          hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(heap, heap, summary_body, TEXT_JSON, opts, write, user_data, uerr);
}

static hscope_status
heapsnapshot_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    if (ro->format == HSCOPE_FORMAT_PPROF)
        return hscope__pprof_write(args, 0, ro, o, err);
    return hscope__heapsnapshot_write(args, o, err);
}

HSCOPE_API hscope_status
hscope_heap_write_export(const hscope_heap_t *heap, const hscope_report_options *opts,
                         hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(heap, heap, heapsnapshot_body,
               HSCOPE__FMT(HSCOPE_FORMAT_HEAPSNAPSHOT) | HSCOPE__FMT(HSCOPE_FORMAT_PPROF), opts,
               write, user_data, uerr);
}

typedef struct pprof_args {
    const hscope_heap_t *h;
    int64_t time_ns;
} pprof_args;

static hscope_status
pprof_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    const pprof_args *a = args;
    return hscope__pprof_write(a->h, a->time_ns, ro, o, err);
}

HSCOPE_API hscope_status
hscope_heap_write_pprof(const hscope_heap_t *heap, int64_t time_ns,
                        const hscope_report_options *opts, hscope_write_fn write, void *user_data,
                        hscope_error *uerr)
{
    /* format 0 means pprof here, not text */
    hscope_report_options d = HSCOPE_REPORT_OPTIONS_INIT;
    if (!opts) {
        opts = &d;
    } else if (!opts->format && opts->size >= offsetof(hscope_report_options, flags) &&
               opts->size <= sizeof(d)) {
        memcpy(&d, opts, opts->size);
        opts = &d;
    }
    if (opts == &d)
        d.format = HSCOPE_FORMAT_PPROF;
    pprof_args a = { heap, time_ns };
    return run(heap, &a, pprof_body, HSCOPE__FMT(HSCOPE_FORMAT_PPROF), opts, write, user_data,
               uerr);
}

typedef struct diff_args {
    const hscope_diff_t *d;
    const hscope_tally_t *groups;
} diff_args;

static hscope_status
diff_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    const diff_args *a = args;
    return hscope__diff_write(a->d, a->groups, ro, o, err);
}

HSCOPE_API hscope_status
hscope_diff_write(const hscope_diff_t *diff, const hscope_tally_t *groups,
                  const hscope_report_options *opts, hscope_write_fn write, void *user_data,
                  hscope_error *uerr)
{
    diff_args a = { diff, groups };
    return run(diff, &a, diff_body, TEXT_JSON | HSCOPE__FMT(HSCOPE_FORMAT_CSV), opts, write,
               user_data, uerr);
}

typedef struct objects_args {
    hscope_heap_t *h;
    const uint64_t *addrs;
    uint64_t n;
    const char *const *records;
} objects_args;

static hscope_status
objects_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    const objects_args *a = args;
    return hscope__objects_write(a->h, a->addrs, a->n, a->records, ro, o, err);
}

HSCOPE_API hscope_status
hscope_heap_write_objects(hscope_heap_t *heap, const uint64_t *addresses, uint64_t count,
                          const char *const *records, const hscope_report_options *opts,
                          hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    if (count && !addresses) {
        hscope_error err;
        hscope__error_init(&err);
        hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "addresses is NULL");
        hscope__error_copy_out(uerr, &err);
        return HSCOPE_ERR_INVALID_ARG;
    }
    objects_args a = { heap, addresses, count, records };
    return run(heap, &a, objects_body, TEXT_JSON, opts, write, user_data, uerr);
}

static hscope_status
generations_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    return hscope__generations_write((hscope_heap_t *)args, ro, o, err);
}

HSCOPE_API hscope_status
hscope_heap_write_generations(hscope_heap_t *heap, const hscope_report_options *opts,
                              hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(heap, heap, generations_body, TEXT_JSON, opts, write, user_data, uerr);
}

typedef struct domtree_args {
    hscope_domtree_t *t;
    hscope_id focus;
} domtree_args;

static hscope_status
domtree_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    const domtree_args *a = args;
    return hscope__domtree_write(a->t, a->focus, ro, o, err);
}

HSCOPE_API hscope_status
hscope_domtree_write(hscope_domtree_t *tree, hscope_id focus, const hscope_report_options *opts,
                     hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    domtree_args a = { tree, focus };
    return run(tree, &a, domtree_body, TEXT_JSON | HSCOPE__FMT(HSCOPE_FORMAT_FOLDED), opts,
               write, user_data, uerr);
}

static hscope_status
retained_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    return hscope__retained_write(args, ro, o, err);
}

HSCOPE_API hscope_status
hscope_domtree_write_retained(const hscope_domtree_t *tree, const hscope_report_options *opts,
                              hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(tree, tree, retained_body, TEXT_JSON, opts, write, user_data, uerr);
}

typedef struct paths_args {
    const hscope_paths_t *p;
    const hscope_id *ids;
    uint64_t n;
} paths_args;

static hscope_status
paths_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    const paths_args *a = args;
    return hscope__paths_write(a->p, a->ids, a->n, ro, o, err);
}

HSCOPE_API hscope_status
hscope_paths_write(const hscope_paths_t *paths, const hscope_id *ids, uint64_t count,
                   const hscope_report_options *opts, hscope_write_fn write, void *user_data,
                   hscope_error *uerr)
{
    if (count && !ids) {
        hscope_error err;
        hscope__error_init(&err);
        hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "ids is NULL");
        hscope__error_copy_out(uerr, &err);
        return HSCOPE_ERR_INVALID_ARG;
    }
    paths_args a = { paths, ids, count };
    return run(paths, &a, paths_body, TEXT_JSON | HSCOPE__FMT(HSCOPE_FORMAT_DOT), opts, write,
               user_data, uerr);
}

static hscope_status
suspects_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    return hscope__suspects_write(args, ro, o, err);
}

HSCOPE_API hscope_status
hscope_suspects_write(const hscope_suspects_t *suspects, const hscope_report_options *opts,
                      hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(suspects, suspects, suspects_body, TEXT_JSON, opts, write, user_data, uerr);
}

/* ------------------------------------------------------------------ */
/* Memory over time                                                    */
/* ------------------------------------------------------------------ */

static hscope_status
timeline_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    (void)err;
    return hscope__timeline_write(args, ro, o);
}

HSCOPE_API hscope_status
hscope_timeline_write(const hscope_timeline_t *tl, const hscope_report_options *opts,
                      hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(tl, tl, timeline_body,
               TEXT_JSON | HSCOPE__FMT(HSCOPE_FORMAT_CSV) | HSCOPE__FMT(HSCOPE_FORMAT_SVG), opts,
               write, user_data, uerr);
}

static hscope_status
export_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    (void)err;
    return hscope__export_write(args, ro, o);
}

HSCOPE_API hscope_status
hscope_export_write(const hscope_export_t *ex, const hscope_report_options *opts,
                    hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(ex, ex, export_body, TEXT_JSON, opts, write, user_data, uerr);
}

static hscope_status
check_body(const void *args, const hscope__ropts *ro, hscope__out *o, hscope_error *err)
{
    (void)err;
    hscope__check_write(args, ro, o);
    return HSCOPE_OK;
}

HSCOPE_API hscope_status
hscope_check_write(const hscope_check_t *check, const hscope_report_options *opts,
                   hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(check, check, check_body, TEXT_JSON, opts, write, user_data, uerr);
}
