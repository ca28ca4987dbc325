/*
 * report_api.c - the exported writers: check the arguments and options,
 * run the writer of src/report/ into the caller's write function, copy
 * the error out.
 */
#include <string.h>

#include "../report/writer.h"

HSCOPE_API void
hscope_report_options_init(hscope_report_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->size = sizeof(*opts);
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

/* A writer of src/report/ on an untyped result (adapters below). */
typedef hscope_status (*writer_fn)(const void *result, const hscope__ropts *ro, hscope__out *o);

/* Every exported writer: options checked against `formats`, the writer
 * run into the caller's write function, the error copied out. */
static hscope_status
run(const void *result, const hscope_report_options *opts, uint32_t formats, writer_fn fn,
    hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    hscope_error err;
    hscope_error_init(&err);
    hscope__ropts ro;
    hscope__out o;
    hscope__out_init(&o, write, user_data, &err);
    hscope_status st = begin(result, opts, formats, write, &ro, &err);
    if (st == HSCOPE_OK)
        st = fn(result, &ro, &o);
    return end(st, &o, uerr, &err);
}

#define FMT_TEXT_JSON (HSCOPE__FMT(HSCOPE_FORMAT_TEXT) | HSCOPE__FMT(HSCOPE_FORMAT_JSON))

static hscope_status
tally_writer(const void *r, const hscope__ropts *ro, hscope__out *o)
{
    return hscope__tally_write(r, ro, o);
}

HSCOPE_API hscope_status
hscope_tally_write(const hscope_tally_t *tally, const hscope_report_options *opts,
                   hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(tally, opts,
               FMT_TEXT_JSON | HSCOPE__FMT(HSCOPE_FORMAT_CSV) | HSCOPE__FMT(HSCOPE_FORMAT_SVG),
               tally_writer, write, user_data, uerr);
}

/* ------------------------------------------------------------------ */
/* Memory over time (issue 20, part B)                                 */
/* ------------------------------------------------------------------ */

static hscope_status
timeline_writer(const void *r, const hscope__ropts *ro, hscope__out *o)
{
    return hscope__timeline_write(r, ro, o);
}

HSCOPE_API hscope_status
hscope_timeline_write(const hscope_timeline_t *tl, const hscope_report_options *opts,
                      hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(tl, opts,
               FMT_TEXT_JSON | HSCOPE__FMT(HSCOPE_FORMAT_CSV) | HSCOPE__FMT(HSCOPE_FORMAT_SVG),
               timeline_writer, write, user_data, uerr);
}

static hscope_status
export_writer(const void *r, const hscope__ropts *ro, hscope__out *o)
{
    return hscope__export_write(r, ro, o);
}

HSCOPE_API hscope_status
hscope_export_write(const hscope_export_t *ex, const hscope_report_options *opts,
                    hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    return run(ex, opts, FMT_TEXT_JSON, export_writer, write, user_data, uerr);
}
