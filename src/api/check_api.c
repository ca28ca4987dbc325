/*
 * check_api.c - the exported functions of budgets and checks: argument
 * and option checks, the budget file read, accessors with size-checked
 * copy-out, errors copied out (the writer's entry point is with the
 * others, in report_api.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "../analysis/budget.h"

/* A budget file larger than this is not a budget. */
#define MAX_BUDGET_BYTES ((size_t)16 << 20)

HSCOPE_API hscope_status
hscope_budget_parse(hscope_budget_t **out, const char *text, uint64_t len, const char *name,
                    hscope_error *uerr)
{
    hscope_error err;
    hscope_error_init(&err);
    hscope_status st;
    if (out)
        *out = NULL;
    if (!out || (!text && len))
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "NULL argument");
    else if (len > MAX_BUDGET_BYTES)
        st = hscope__fail(&err, HSCOPE_ERR_LIMIT, "%s: a budget of more than 16 MiB",
                          name ? name : "budget");
    else
        st = hscope__budget_parse(out, text ? text : "", (size_t)len, name, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

/* The whole file into *buf (malloc'd by m), at most MAX_BUDGET_BYTES. */
static hscope_status
read_all(hscope__mem *m, const char *path, char **buf, size_t *len, hscope_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return hscope__fail_errno(err, errno, "%s", path);
    size_t cap = 0, n = 0;
    char *b = NULL;
    hscope_status st = HSCOPE_OK;
    for (;;) {
        if ((st = hscope__grow(m, (void **)&b, &cap, n + 4096, 1, err)) != HSCOPE_OK)
            break;
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (n > MAX_BUDGET_BYTES) {
            st = hscope__fail(err, HSCOPE_ERR_LIMIT, "%s: a budget of more than 16 MiB", path);
            break;
        }
        if (got == 0) {
            if (ferror(f))
                st = hscope__fail_errno(err, errno ? errno : EIO, "%s", path);
            break;
        }
    }
    fclose(f);
    if (st != HSCOPE_OK) {
        hscope__free(m, b);
        return st;
    }
    *buf = b;
    *len = n;
    return HSCOPE_OK;
}

HSCOPE_API hscope_status
hscope_budget_load_file(hscope_budget_t **out, const char *path, hscope_error *uerr)
{
    hscope_error err;
    hscope_error_init(&err);
    hscope__mem m;
    hscope__mem_init(&m, NULL, 0);
    char *buf = NULL;
    size_t len = 0;
    hscope_status st;
    if (out)
        *out = NULL;
    if (!out || !path)
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "NULL argument");
    else if ((st = read_all(&m, path, &buf, &len, &err)) == HSCOPE_OK)
        st = hscope__budget_parse(out, buf, len, path, &err);
    hscope__free(&m, buf);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API void
hscope_budget_free(hscope_budget_t *budget)
{
    hscope__budget_free(budget);
}

HSCOPE_API uint64_t
hscope_budget_rule_count(const hscope_budget_t *budget)
{
    return budget ? budget->n : 0;
}

HSCOPE_API uint32_t
hscope_budget_dumps_needed(const hscope_budget_t *budget)
{
    return budget && budget->leaked_line ? 3 : 1;
}

HSCOPE_API void
hscope_check_options_init(hscope_check_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof(*opts));
    opts->size = sizeof(*opts);
}

HSCOPE_API void
hscope_check_rule_init(hscope_check_rule *rule)
{
    if (!rule)
        return;
    memset(rule, 0, sizeof(*rule));
    rule->size = sizeof(*rule);
}

static hscope_status
read_options(const hscope_check_options *in, uint32_t *flags, hscope_error *err)
{
    *flags = 0;
    if (!in)
        return HSCOPE_OK;
    if (in->size < sizeof(uint32_t) * 2)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "check options: size %u too small",
                            in->size);
    if (!hscope__tail_is_zero(in, in->size, sizeof(*in)))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED,
                            "check options: fields this library does not know are set");
    if (in->flags & ~(uint32_t)(HSCOPE_CHECK_KEEP_DUMPER | HSCOPE_CHECK_STRICT_NAMES |
                                HSCOPE_CHECK_KEEP_TRACER))
        return hscope__fail(err, HSCOPE_ERR_UNSUPPORTED, "check options: unknown flags 0x%x",
                            in->flags & ~(uint32_t)(HSCOPE_CHECK_KEEP_DUMPER |
                                                    HSCOPE_CHECK_STRICT_NAMES |
                                                    HSCOPE_CHECK_KEEP_TRACER));
    *flags = in->flags;
    return HSCOPE_OK;
}

HSCOPE_API hscope_status
hscope_check_compute(hscope_check_t **out, const hscope_budget_t *budget,
                     const char *const *paths, uint64_t n, const hscope_load_options *load,
                     const hscope_check_options *opts, hscope_error *uerr)
{
    hscope_error err;
    hscope_error_init(&err);
    hscope_load_options lo;
    uint32_t flags = 0;
    hscope_status st = HSCOPE_OK;
    if (out)
        *out = NULL;
    if (!out || !budget || !paths)
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "NULL argument");
    for (uint64_t i = 0; st == HSCOPE_OK && i < n; i++)
        if (!paths[i])
            st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "path %llu is NULL",
                              (unsigned long long)i);
    if (st == HSCOPE_OK && (st = hscope__read_load_options(load, &lo, &err)) == HSCOPE_OK &&
        (st = read_options(opts, &flags, &err)) == HSCOPE_OK)
        st = hscope__check_compute(out, budget, paths, n, &lo, flags, &err);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

HSCOPE_API void
hscope_check_free(hscope_check_t *check)
{
    hscope__check_free(check);
}

HSCOPE_API uint64_t
hscope_check_rule_count(const hscope_check_t *check)
{
    return check ? check->n : 0;
}

HSCOPE_API uint64_t
hscope_check_over_count(const hscope_check_t *check)
{
    return check ? check->over : 0;
}

HSCOPE_API const char *
hscope_check_no_verdict(const hscope_check_t *check)
{
    return check ? check->no_verdict : NULL;
}

HSCOPE_API hscope_status
hscope_check_rule_get(const hscope_check_t *check, uint64_t i, hscope_check_rule *rule)
{
    uint32_t size;
    if (!check || !rule)
        return HSCOPE_ERR_INVALID_ARG;
    memcpy(&size, rule, sizeof(size));
    if (size < 2 * sizeof(uint32_t))
        return HSCOPE_ERR_INVALID_ARG;
    if (i >= check->n)
        return HSCOPE_ERR_NOT_FOUND;
    const hscope__crule *r = &check->rules[i];
    hscope_check_rule full = {
        .size = size, .scope = r->r.scope, .metric = r->r.metric,
        .over = r->actual > r->r.limit, .found = r->found, .key = r->r.key,
        .line = r->r.line, .limit = r->r.limit, .actual = r->actual, .closest = r->closest,
    };
    memcpy(rule, &full, size < sizeof(full) ? size : sizeof(full));
    return HSCOPE_OK;
}

HSCOPE_API void
hscope_check_totals(const hscope_check_t *check, uint64_t *count, uint64_t *memsize,
                    uint64_t *excluded)
{
    if (count)
        *count = check ? check->count : 0;
    if (memsize)
        *memsize = check ? check->memsize : 0;
    if (excluded)
        *excluded = check ? check->excluded : 0;
}

HSCOPE_API void
hscope_check_excluded_tracer(const hscope_check_t *check, uint64_t *objects, uint64_t *memsize)
{
    if (objects)
        *objects = check ? check->tracer : 0;
    if (memsize)
        *memsize = check ? check->tracer_mem : 0;
}

HSCOPE_API uint32_t
hscope_check_warnings(const hscope_check_t *check)
{
    return check ? check->warn : 0;
}

HSCOPE_API const char *
hscope_check_warning_text(const hscope_check_t *check)
{
    return check && check->warn_text ? check->warn_text : "";
}

HSCOPE_API hscope_status
hscope_check_stats(const hscope_check_t *check, hscope_load_stats *stats)
{
    if (!check || !stats || stats->size < 8)
        return HSCOPE_ERR_INVALID_ARG;
    if (!check->has_stats)
        return HSCOPE_ERR_NOT_FOUND;
    hscope__stats_copy_out(stats, &check->stats);
    return HSCOPE_OK;
}

HSCOPE_API uint64_t
hscope_check_skipped(const hscope_check_t *check, int32_t reason)
{
    if (!check || !check->has_stats || reason < 0 || reason >= HSCOPE_SKIP__COUNT)
        return 0;
    return check->skipped[reason];
}
