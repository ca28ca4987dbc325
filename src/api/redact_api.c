/*
 * redact_api.c - the exported functions of redaction (report/redact.c):
 * argument and option checks, the result's accessors, errors copied out.
 */
#include <string.h>

#include "../core/core.h"
#include "../report/redact.h"

HSCOPE_API void
hscope_redact_options_init(hscope_redact_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->size = sizeof(*opts);
}

/* The caller's options, checked, into full-size copies. */
static hscope_status
read_options(const hscope_load_options *load, const hscope_redact_options *in,
             hscope_load_options *lo, hscope_redact_options *o, hscope_error *err)
{
    hscope_status st = hscope__read_load_options(load, lo, err);
    if (st != HSCOPE_OK)
        return st;
    hscope_redact_options_init(o);
    if (!in)
        return HSCOPE_OK;
    if (in->size < 2 * sizeof(uint32_t))
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG,
                            "hscope_redact_options.size is %u: set it with the _INIT macro or "
                            "the _init() function", in->size);
    if (!hscope__tail_is_zero(in, in->size, sizeof(*o)))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "hscope_redact_options has unknown non-zero fields (newer header "
                            "than library?)");
    memcpy(o, in, in->size < sizeof(*o) ? in->size : sizeof(*o));
    if (o->flags & ~(uint32_t)HSCOPE_REDACT_GZIP)
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "unknown redact flags 0x%x", o->flags);
    if (o->gzip_level < 0 || o->gzip_level > 9)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "gzip_level %d: 1 to 9, or 0",
                            (int)o->gzip_level);
    if (o->reserved)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "hscope_redact_options.reserved is not 0");
    return HSCOPE_OK;
}

HSCOPE_API hscope_status
hscope_redact(hscope_redact_t **out, const char *in, const char *out_path,
              const hscope_load_options *load, const hscope_redact_options *opts,
              hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_load_options lo;
    hscope_redact_options o;
    if (out)
        *out = NULL;
    hscope_status st = HSCOPE_OK;
    if (!in || !out_path || !*in || !*out_path)
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "no input or output path given");
    if (st == HSCOPE_OK)
        st = read_options(load, opts, &lo, &o, &err);
    if (st == HSCOPE_OK)
        st = hscope__redact_file(out, in, out_path, &lo, &o, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API hscope_status
hscope_redact_write(hscope_redact_t **out, const char *in, const hscope_load_options *load,
                    const hscope_redact_options *opts, hscope_write_fn write, void *user_data,
                    hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_load_options lo;
    hscope_redact_options o;
    if (out)
        *out = NULL;
    hscope_status st = HSCOPE_OK;
    if (!in || !*in || !write)
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "no input path or write function given");
    if (st == HSCOPE_OK)
        st = read_options(load, opts, &lo, &o, &err);
    if (st == HSCOPE_OK)
        st = hscope__redact_to(out, in, &lo, &o, write, user_data, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API void
hscope_redact_free(hscope_redact_t *r)
{
    hscope__redact_free(r);
}

HSCOPE_API void
hscope_redact_totals(const hscope_redact_t *r, uint64_t *lines, uint64_t *values,
                     uint64_t *kept)
{
    if (lines)
        *lines = r ? r->lines : 0;
    if (values)
        *values = r ? r->values : 0;
    if (kept)
        *kept = r ? r->kept : 0;
}

HSCOPE_API hscope_status
hscope_redact_stats(const hscope_redact_t *r, hscope_load_stats *stats)
{
    if (!r || !stats || stats->size < sizeof(uint32_t))
        return HSCOPE_ERR_INVALID_ARG;
    hscope__stats_copy_out(stats, &r->stats);
    return HSCOPE_OK;
}

HSCOPE_API uint64_t
hscope_redact_skipped(const hscope_redact_t *r, int32_t reason)
{
    return r && reason >= 0 && reason < HSCOPE_SKIP__COUNT ? r->skipped[reason] : 0;
}
