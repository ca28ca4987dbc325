/*
 * w_check.c - a check against a budget: text (the rules over budget
 * first, each with how much it exceeds its limit by) and JSON (kind
 * "check", docs/JSON.md).
 */
#include <stdio.h>
#include <string.h>

#include "../analysis/budget.h"
#include "common.h"
#include "jsonw.h"
#include "out.h"
#include "table.h"
#include "writers.h"

/* The dumps the check read: all three with a diff, else the last. */
static uint64_t
first_read(const hscope_check_t *c)
{
    return c->has_leaked ? 0 : c->npaths - 1;
}

static const char *
dump_name(const hscope_check_t *c, const hscope__ropts *ro, uint64_t i)
{
    const char *n = hscope__ropts_dump_name(ro, i);
    return n ? n : c->paths[i];
}

static uint32_t
line_code(const void *ctx, uint32_t line)
{
    const hscope_check_t *c = ctx;
    return line < c->nwarn ? c->warn_codes[line] : 0;
}

static void
warnings(const hscope_check_t *c, const hscope__ropts *ro, hscope__warnings *ws)
{
    ws->n = 0;
    if (c->has_stats)
        hscope__warn_damage(ws, dump_name(c, ro, c->npaths - 1), &c->stats, c->skipped);
    hscope__warn_coded(ws, c->warn_text, line_code, c);
}

/* "1,234" objects or "1.5 MB" */
static void
fmt_value(int32_t metric, uint64_t v, char *buf, size_t n)
{
    if (metric == HSCOPE_BUDGET_OBJECTS)
        hscope__fmt_count(v, buf, n);
    else
        hscope__fmt_bytes((double)v, buf, n);
}

/* "by 120.3 KB (+2.9%)", "(no such group in the dump)", or "". */
static void
fmt_excess(const hscope__crule *r, char *buf, size_t n)
{
    char v[48];
    buf[0] = '\0';
    if (r->actual > r->r.limit) {
        uint64_t x = r->actual - r->r.limit;
        if (r->r.metric == HSCOPE_BUDGET_OBJECTS)
            hscope__fmt_plural(x, "object", "objects", v, sizeof(v));
        else
            hscope__fmt_bytes((double)x, v, sizeof(v));
        if (r->r.limit)
            snprintf(buf, n, "by %s (+%.1f%%)", v, 100.0 * (double)x / (double)r->r.limit);
        else
            snprintf(buf, n, "by %s", v);
    } else if (!r->found) {
        snprintf(buf, n, "(no such %s in the dump)", hscope__budget_scope_name(r->r.scope));
    }
}

static const char *
rule_key(const void *ctx, uint64_t i)
{
    const hscope_check_t *c = ctx;
    return c->rules[i].name;
}

static void
text_rows(const hscope_check_t *c, hscope__table *tb, int over)
{
    for (size_t i = 0; i < c->n; i++) {
        const hscope__crule *r = &c->rules[i];
        if ((r->actual > r->r.limit) != over)
            continue;
        char a[48], l[48], x[96];
        const char *lead[1] = { over ? "OVER" : "ok" };
        fmt_value(r->r.metric, r->actual, a, sizeof(a));
        fmt_value(r->r.metric, r->r.limit, l, sizeof(l));
        fmt_excess(r, x, sizeof(x));
        const char *cells[2] = { a, l };
        hscope__table_row_ex(tb, NULL, lead, r->name, cells, x);
    }
}

static void
text_totals(const hscope_check_t *c, hscope__out *o)
{
    char n[48], m[48];
    hscope__fmt_plural(c->count, "object", "objects", n, sizeof(n));
    hscope__fmt_bytes((double)c->memsize, m, sizeof(m));
    hscope__out_printf(o, "live: %s, %s", n, m);
    if (c->has_retained) {
        hscope__fmt_plural(c->retained_count, "object", "objects", n, sizeof(n));
        hscope__fmt_bytes((double)c->retained_memsize, m, sizeof(m));
        hscope__out_printf(o, "; retained from the roots: %s, %s", n, m);
    }
    if (c->has_leaked) {
        hscope__fmt_plural(c->leaked_count, "object", "objects", n, sizeof(n));
        hscope__fmt_bytes((double)c->leaked_memsize, m, sizeof(m));
        hscope__out_printf(o, "; leaked: %s, %s", n, m);
    }
    hscope__out_puts(o, "\n");
}

static void
text(const hscope_check_t *c, const hscope__ropts *ro, hscope__out *o)
{
    hscope__warnings ws;
    warnings(c, ro, &ws);
    if (c->no_verdict)
        hscope__out_printf(o, "NO VERDICT: %s\n\n", c->no_verdict + strlen("no verdict: "));
    hscope__text_warnings(o, ro, &ws);
    hscope__out_printf(o, "budget %s against ", c->budget);
    for (uint64_t i = first_read(c); i < c->npaths; i++)
        hscope__out_printf(o, "%s%s", i > first_read(c) ? ", " : "", dump_name(c, ro, i));
    hscope__out_puts(o, "\n");
    text_totals(c, o);
    hscope__text_excluded(o, c->excluded);
    hscope__text_excluded_tracer(o, c->tracer, c->tracer_mem);
    hscope__out_puts(o, "\n");
    hscope__table tb;
    hscope__table_init_fn(&tb, o, ro, "rule", rule_key, c, c->n);
    hscope__table_lead(&tb, "", 4);
    hscope__table_col(&tb, "actual", 11);
    hscope__table_col(&tb, "limit", 11);
    size_t tail = 0; /* as wide as the longest "by ..." (none within budget) */
    for (size_t i = 0; i < c->n; i++) {
        char x[96];
        fmt_excess(&c->rules[i], x, sizeof(x));
        tail = strlen(x) > tail ? strlen(x) : tail;
    }
    if (tail)
        hscope__table_tail(&tb, "", (int)(tail < 32 ? tail : 32));
    hscope__table_header(&tb);
    text_rows(c, &tb, 1);
    text_rows(c, &tb, 0);
    char n[48];
    hscope__fmt_plural(c->n, "rule", "rules", n, sizeof(n));
    if (c->no_verdict)
        hscope__out_printf(o, "\n%s\n", c->no_verdict);
    else if (c->over)
        hscope__out_printf(o, "\nOVER BUDGET: %llu of %s exceeded\n",
                           (unsigned long long)c->over, n);
    else
        hscope__out_printf(o, "\nwithin budget: %s, none exceeded\n", n);
}

static void
json_rule(hscope__json *j, const hscope__crule *r)
{
    hscope__json_obj(j);
    hscope__json_kstr(j, "rule", r->name);
    hscope__json_kstr(j, "section", hscope__budget_scope_name(r->r.scope));
    hscope__json_kstr(j, "key", r->r.key);
    hscope__json_kstr(j, "metric", hscope__budget_metric_name(r->r.metric));
    hscope__json_ku64(j, "line", r->r.line);
    hscope__json_ku64(j, "limit", r->r.limit);
    hscope__json_ku64(j, "actual", r->actual);
    hscope__json_key(j, "over");
    hscope__json_bool(j, r->actual > r->r.limit);
    hscope__json_ku64(j, "excess", r->actual > r->r.limit ? r->actual - r->r.limit : 0);
    hscope__json_key(j, "found");
    hscope__json_bool(j, r->found);
    hscope__json_end_obj(j);
}

static void
json(const hscope_check_t *c, const hscope__ropts *ro, hscope__out *o)
{
    hscope__json j;
    hscope__warnings ws;
    warnings(c, ro, &ws);
    hscope__json_init(&j, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    hscope__json_begin_doc(&j, "check");
    hscope__json_key(&j, "dumps");
    hscope__json_arr(&j);
    for (uint64_t i = first_read(c); i < c->npaths; i++)
        hscope__json_dump(&j, dump_name(c, ro, i), c->objects[i]);
    hscope__json_end_arr(&j);
    hscope__json_kstr(&j, "budget", c->budget);
    hscope__json_key(&j, "within_budget");
    hscope__json_bool(&j, c->over == 0 && !c->no_verdict);
    hscope__json_kstr(&j, "verdict", c->no_verdict ? "none" : c->over ? "over" : "within");
    hscope__json_kstr(&j, "no_verdict", c->no_verdict);
    hscope__json_ku64(&j, "rule_count", c->n);
    hscope__json_ku64(&j, "over_count", c->over);
    hscope__json_kcm(&j, "total", c->count, c->memsize);
    hscope__json_ku64(&j, "excluded_dumper_objects", c->excluded);
    hscope__json_kcm(&j, "excluded_tracer", c->tracer, c->tracer_mem);
    if (c->has_leaked)
        hscope__json_kcm(&j, "leaked", c->leaked_count, c->leaked_memsize);
    if (c->has_retained)
        hscope__json_kcm(&j, "retained", c->retained_count, c->retained_memsize);
    hscope__json_key(&j, "rules");
    hscope__json_arr(&j);
    for (size_t i = 0; i < c->n; i++)
        json_rule(&j, &c->rules[i]);
    hscope__json_end_arr(&j);
    hscope__json_warnings(&j, &ws);
    hscope__json_end_obj(&j);
    hscope__json_done(&j);
}

void
hscope__check_write(const hscope_check_t *c, const hscope__ropts *ro, hscope__out *o)
{
    if (ro->format == HSCOPE_FORMAT_JSON)
        json(c, ro, o);
    else
        text(c, ro, o);
}
