/*
 * html_api.c - the exported entry points of the HTML report
 * (report/html*.c): argument and option checks, accessors, the writer's
 * entry, errors copied out.
 */
#include <string.h>

#include "../report/html.h"

HSCOPE_API void
hscope_html_options_init(hscope_html_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->size = sizeof(*opts);
}

static hscope_status
read_html_options(const hscope_html_options *in, hscope__html_cfg *cfg, hscope_error *err)
{
    hscope_html_options o;
    hscope_html_options_init(&o);
    if (in) {
        if (in->size < 2 * sizeof(uint32_t))
            return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                                "hscope_html_options.size is %u: set it with "
                                "HSCOPE_HTML_OPTIONS_INIT or hscope_html_options_init()",
                                in->size);
        if (!hscope__tail_is_zero(in, in->size, sizeof(o)))
            return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                                "hscope_html_options has unknown non-zero fields "
                                "(newer header than library?)");
        memcpy(&o, in, in->size < sizeof(o) ? in->size : sizeof(o));
    }
    if (o.flags & ~(uint32_t)(HSCOPE_HTML_NO_CLASS_EDGES | HSCOPE_HTML_KEEP_DUMPER |
                              HSCOPE_HTML_KEEP_TRACER |
                              HSCOPE_HTML_NO_WASTE))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown HTML report flags 0x%x",
                            o.flags);
    if (o.by && hscope__tally_key(o.by) < 0)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown tally key \"%s\"", o.by);
    if (o.order < HSCOPE_ORDER_AUTO || o.order > HSCOPE_ORDER_GIVEN)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown order %d", (int)o.order);
    if (o.reserved)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "hscope_html_options.reserved is not 0");
    cfg->flags = o.flags;
    cfg->by = o.by ? o.by : "class";
    cfg->order = o.order;
    cfg->title = o.title;
    return HSCOPE_OK;
}

HSCOPE_API hscope_status
hscope_html_report_compute(hscope_html_report_t **out, const char *const *paths, uint64_t n,
                           const hscope_load_options *load, const hscope_html_options *opts,
                           hscope_error *uerr)
{
    hscope_error err;
    hscope_error_init(&err);
    hscope_load_options lo;
    hscope__html_cfg cfg;
    hscope_status st = HSCOPE_OK;
    if (!out)
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "out is NULL");
    else
        *out = NULL;
    if (st == HSCOPE_OK)
        st = hscope__check_paths(paths, n, &err);
    if (st == HSCOPE_OK)
        st = hscope__read_load_options(load, &lo, &err);
    if (st == HSCOPE_OK)
        st = read_html_options(opts, &cfg, &err);
    if (st == HSCOPE_OK)
        st = hscope__html_compute(out, paths, n, &lo, &cfg, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API void
hscope_html_report_free(hscope_html_report_t *report)
{
    hscope__html_free(report);
}

HSCOPE_API hscope_heap_t *
hscope_html_report_heap(const hscope_html_report_t *report)
{
    return report ? report->heap : NULL;
}

HSCOPE_API hscope_diff_t *
hscope_html_report_diff(const hscope_html_report_t *report)
{
    return report ? report->diff : NULL;
}

HSCOPE_API const hscope_timeline_t *
hscope_html_report_timeline(const hscope_html_report_t *report)
{
    return report ? report->tl : NULL;
}

HSCOPE_API const hscope_waste_t *
hscope_html_report_waste(const hscope_html_report_t *report)
{
    return report ? report->waste : NULL;
}

HSCOPE_API hscope_status
hscope_html_report_write(const hscope_html_report_t *report, const hscope_report_options *opts,
                         hscope_write_fn write, void *user_data, hscope_error *uerr)
{
    hscope_error err;
    hscope_error_init(&err);
    hscope__ropts ro;
    hscope__out o;
    hscope__out_init(&o, write, user_data, &err);
    hscope_status st = HSCOPE_OK;
    if (!report || !write)
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG,
                          "the report and the write function are required");
    if (st == HSCOPE_OK)
        st = hscope__ropts_read(opts, HSCOPE__FMT(HSCOPE_FORMAT_TEXT) |
                                          HSCOPE__FMT(HSCOPE_FORMAT_HTML), &ro, &err);
    if (st == HSCOPE_OK && opts && opts->format == HSCOPE_FORMAT_TEXT)
        st = hscope__fail(&err, HSCOPE_ERR_UNSUPPORTED, "the HTML report is only HTML");
    if (st == HSCOPE_OK)
        st = hscope__html_write(report, &ro, &o, &err);
    hscope_status fst = write ? hscope__out_finish(&o) : st;
    if (st == HSCOPE_OK)
        st = fst;
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API hscope_status
hscope_report_html(const char *const *paths, uint64_t n, const hscope_load_options *load,
                   const hscope_html_options *html, const hscope_report_options *opts,
                   hscope_write_fn write, void *user_data, hscope_error *err)
{
    hscope_html_report_t *r = NULL;
    if (!write) {
        hscope_error e;
        hscope_error_init(&e);
        hscope__fail(&e, HSCOPE_ERR_INVALID_ARG, "the write function is required");
        hscope__error_copy_out(err, &e);
        return HSCOPE_ERR_INVALID_ARG;
    }
    hscope_status st = hscope_html_report_compute(&r, paths, n, load, html, err);
    if (st == HSCOPE_OK)
        st = hscope_html_report_write(r, opts, write, user_data, err);
    hscope_html_report_free(r);
    return st;
}
