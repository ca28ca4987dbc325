/*
 * analysis_api.c - exported entry points of the analyses added with the
 * report layer: retained size per group, leak suspects; and the memory
 * each analysis result holds.
 * Argument checks and error copy-out; the work is in src/analysis/.
 */
#include <string.h>

#include "../analysis/analysis.h"

static hscope_status
fail(hscope_error *uerr, hscope_status st, const char *msg)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope__fail(&err, st, "%s", msg);
    hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API hscope_status
hscope_domtree_tally(hscope_tally_t **out, hscope_domtree_t *tree, const char *key,
                     const hscope_tally_options *opts, hscope_error *uerr)
{
    if (out)
        *out = NULL;
    if (!out || !tree || !key)
        return fail(uerr, HSCOPE_ERR_INVALID_ARG, "out, tree and key are required");
    hscope_tally_options o;
    hscope__tally_options_init(&o);
    if (opts) {
        if (opts->size < sizeof(uint32_t) * 2)
            return fail(uerr, HSCOPE_ERR_INVALID_ARG, "tally options size not set");
        if (!hscope__tail_is_zero(opts, opts->size, sizeof(o)))
            return fail(uerr, HSCOPE_ERR_UNSUPPORTED,
                        "hscope_tally_options has unknown non-zero fields");
        memcpy(&o, opts, opts->size < sizeof(o) ? opts->size : sizeof(o));
    }
    if (o.flags & ~(uint32_t)HSCOPE_TALLY_SKIP_TRACER)
        return fail(uerr, HSCOPE_ERR_UNSUPPORTED,
                    "hscope_domtree_tally: of the tally flags only HSCOPE_TALLY_SKIP_TRACER has "
                    "a meaning here (every other reachable object is counted)");
    if (o.sort > HSCOPE_SORT_MEMSIZE)
        return fail(uerr, HSCOPE_ERR_UNSUPPORTED, "unknown sort");
    if (hscope__tally_key(key) < 0)
        return fail(uerr, HSCOPE_ERR_UNSUPPORTED,
                    "unknown tally key (expected type, class, file, file:line, "
                    "file:line:class, method, generation or gem)");
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st = hscope__domtree_tally(out, tree, key, &o, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API int
hscope_tally_key_valid(const char *key)
{
    return key && hscope__tally_key(key) >= 0;
}

HSCOPE_API hscope_status
hscope_suspects_compute(hscope_suspects_t **out, hscope_diff_t *diff,
                        const hscope_dom_options *opts, hscope_error *uerr)
{
    if (out)
        *out = NULL;
    if (!out || !diff)
        return fail(uerr, HSCOPE_ERR_INVALID_ARG, "out and diff are required");
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st = hscope__suspects_compute(out, diff, opts, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API void
hscope_suspects_free(hscope_suspects_t *suspects)
{
    hscope__suspects_free(suspects);
}

HSCOPE_API hscope_diff_t *
hscope_suspects_diff(const hscope_suspects_t *suspects)
{
    return suspects ? hscope__suspects_diff(suspects) : NULL;
}

HSCOPE_API hscope_domtree_t *
hscope_suspects_domtree(const hscope_suspects_t *suspects)
{
    return suspects ? hscope__suspects_domtree(suspects) : NULL;
}

HSCOPE_API const hscope_holders_t *
hscope_suspects_holders(const hscope_suspects_t *suspects)
{
    return suspects ? hscope__suspects_holders(suspects) : NULL;
}

HSCOPE_API const hscope_paths_t *
hscope_suspects_paths(const hscope_suspects_t *suspects)
{
    return suspects ? hscope__suspects_paths(suspects) : NULL;
}

HSCOPE_API uint64_t
hscope_suspects_path(const hscope_suspects_t *suspects, uint64_t i, hscope_id *out,
                     uint64_t max, int32_t *root_category)
{
    if (!suspects) {
        if (root_category)
            *root_category = -1;
        return 0;
    }
    return hscope__suspects_path(suspects, i, out, max, root_category);
}

HSCOPE_API uint64_t
hscope_tally_memory(const hscope_tally_t *tally)
{
    return hscope__tally_memory(tally);
}

HSCOPE_API uint64_t
hscope_diff_memory(const hscope_diff_t *diff)
{
    return hscope__diff_memory(diff);
}

HSCOPE_API uint64_t
hscope_domtree_memory(const hscope_domtree_t *tree)
{
    return hscope__domtree_memory(tree);
}

HSCOPE_API uint64_t
hscope_paths_memory(const hscope_paths_t *paths)
{
    return hscope__paths_memory(paths);
}

HSCOPE_API uint64_t
hscope_holders_memory(const hscope_holders_t *holders)
{
    return hscope__holders_memory(holders);
}

HSCOPE_API uint64_t
hscope_suspects_memory(const hscope_suspects_t *suspects)
{
    return hscope__suspects_memory(suspects);
}

HSCOPE_API uint64_t
hscope_waste_memory(const hscope_waste_t *waste)
{
    return hscope__waste_memory(waste);
}

HSCOPE_API uint64_t
hscope_timeline_memory(const hscope_timeline_t *timeline)
{
    return hscope__timeline_memory(timeline);
}

HSCOPE_API hscope_status
hscope_suspects_get(const hscope_suspects_t *suspects, uint64_t i, hscope_suspect *out)
{
    if (!suspects || !out || out->size < 2 * sizeof(uint32_t))
        return HSCOPE_ERR_INVALID_ARG;
    hscope_suspect x;
    x.size = out->size;
    hscope_status st = hscope__suspects_get(suspects, i, &x);
    if (st == HSCOPE_OK)
        memcpy(out, &x, out->size < sizeof(x) ? out->size : sizeof(x));
    return st;
}

HSCOPE_API hscope_status
hscope_suspects_site_get(const hscope_suspects_t *suspects, uint64_t i, uint64_t j,
                         hscope_suspect_site *out)
{
    if (!suspects || !out || out->size < 2 * sizeof(uint32_t))
        return HSCOPE_ERR_INVALID_ARG;
    hscope_suspect_site x;
    x.size = out->size;
    hscope_status st = hscope__suspects_site_get(suspects, i, j, &x);
    if (st == HSCOPE_OK)
        memcpy(out, &x, out->size < sizeof(x) ? out->size : sizeof(x));
    return st;
}
