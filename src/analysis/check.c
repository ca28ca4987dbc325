/*
 * check.c - dumps against a budget: the measures each rule needs, from
 * the existing analyses, computed only when some rule asks for them.
 *
 *   live objects/memsize per group   tallies of the last dump: streamed
 *                                    (hscope_tally_file) for one key, on
 *                                    the loaded heap for several
 *   retained                          the dominator tree of the last dump
 *                                    (reachable totals; hscope_domtree_tally
 *                                    per group key)
 *   leaked                            the 3-dump diff (hscope_diff_files),
 *                                    whose heap is the last dump's, and
 *                                    whose warnings become the check's;
 *                                    per class or site its tally
 */
#include <stdio.h>
#include <string.h>

#include "../model/model.h"
#include "budget.h"
#include "diff.h"
#include "dominators.h"
#include "retained.h"
#include "tally.h"

/* What the budget asks for. */
typedef struct needs {
    int leaked, retained;
    uint32_t live_keys;     /* bits: 1 << scope of group scopes with live rules */
    uint32_t kept_keys;     /* bits: ... with retained rules */
    uint32_t leaked_keys;   /* bits: 1 << HSCOPE_BUDGET_LEAKED_CLASS, _SITE */
} needs;

static int
nkeys(uint32_t bits)
{
    int n = 0;
    for (; bits; bits &= bits - 1)
        n++;
    return n;
}

static needs
needs_of(const hscope_budget_t *b)
{
    needs n;
    memset(&n, 0, sizeof(n));
    for (size_t i = 0; i < b->n; i++) {
        const hscope__brule *r = &b->rules[i];
        if (r->scope == HSCOPE_BUDGET_LEAKED)
            n.leaked = 1;
        if (r->metric == HSCOPE_BUDGET_RETAINED)
            n.retained = 1;
        if (r->scope == HSCOPE_BUDGET_LEAKED_CLASS || r->scope == HSCOPE_BUDGET_LEAKED_SITE) {
            n.leaked = 1;
            n.leaked_keys |= 1u << r->scope;
        } else if (r->key && r->metric == HSCOPE_BUDGET_RETAINED)
            n.kept_keys |= 1u << r->scope;
        else if (r->key)
            n.live_keys |= 1u << r->scope;
    }
    return n;
}

/* Does the tally row `row` count for the rule's group `key`?  The same
 * text; for a gem also NAME-VERSION and NAME-SHA rows of a budget's NAME
 * (the gem key carries the version, a budget outlives it); for a site
 * also the rows whose file ends with the budget's FILE after a '/' (dumps
 * hold absolute paths, which differ from one checkout to the next). */
static int
matches(int32_t scope, const char *key, const char *row)
{
    size_t n = strlen(key), rn = strlen(row);
    if ((scope == HSCOPE_BUDGET_SITE || scope == HSCOPE_BUDGET_LEAKED_SITE) && rn > n &&
        row[rn - n - 1] == '/' &&
        memcmp(row + rn - n, key, n) == 0)
        return 1;
    if (strncmp(row, key, n) != 0)
        return 0;
    if (!row[n])
        return 1;
    if (scope != HSCOPE_BUDGET_GEM || row[n] != '-')
        return 0;
    const char *v = row + n + 1;
    if (*v >= '0' && *v <= '9')
        return 1;
    size_t hex = strspn(v, "0123456789abcdef");
    return hex >= 7 && !v[hex];
}

/* The rows of a tally that count for a rule's group, summed; 0 when there
 * are none. */
static int
tally_find(const hscope_tally_t *t, int32_t scope, const char *key, uint64_t *count,
           uint64_t *memsize)
{
    uint64_t n = hscope__tally_row_count(t);
    int found = 0;
    *count = *memsize = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *k = hscope__tally_row_key(t, i);
        if (k && matches(scope, key, k)) {
            *count += hscope__tally_row_count_of(t, i);
            *memsize += hscope__tally_row_memsize(t, i);
            found = 1;
        }
    }
    return found;
}

/* Whether a rule's group is Ruby's allocation tracer by the label it has
 * wherever it is kept ("<allocation tracer>", docs/DESIGN.md): left out of
 * the totals by default, it is still measured for a rule that names it. */
static int
tracer_named(int32_t scope, const char *key)
{
    return (scope == HSCOPE_BUDGET_CLASS || scope == HSCOPE_BUDGET_LEAKED_CLASS) && key &&
           strcmp(key, HSCOPE__TRACER_LABEL) == 0;
}

/* Edit distance (insert, delete, substitute: 1 each) of a and b, their
 * first 128 bytes; stops early above `cap`. */
static size_t
distance(const char *a, const char *b, size_t cap)
{
    enum { L = 128 };
    size_t na = strlen(a), nb = strlen(b);
    na = na < L ? na : L;
    nb = nb < L ? nb : L;
    if ((na > nb ? na - nb : nb - na) > cap)
        return cap + 1;
    size_t row[L + 1];
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0], best = row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            best = v < best ? v : best;
        }
        if (best > cap)
            return cap + 1;
    }
    return row[nb];
}

/* A rule that names a group the dump does not have: up to three of the
 * dump's keys nearest to it (edit distance at most a third of its length,
 * at least 2), joined by ", " into r->closest; nothing when none is near. */
static hscope_status
closest(hscope_check_t *c, hscope__crule *r, const hscope_tally_t *t, hscope_error *err)
{
    enum { K = 3 };
    const char *best[K] = { NULL, NULL, NULL };
    size_t bd[K] = { 0, 0, 0 }, klen = strlen(r->r.key);
    size_t cap = klen / 3 > 2 ? klen / 3 : 2;
    for (uint64_t i = 0; i < hscope__tally_row_count(t); i++) {
        const char *k = hscope__tally_row_key(t, i);
        size_t d = k ? distance(r->r.key, k, cap) : cap + 1;
        if (d > cap)
            continue;
        for (int j = 0; j < K; j++) {
            if (best[j] && bd[j] <= d)
                continue;
            for (int m = K - 1; m > j; m--) {
                best[m] = best[m - 1];
                bd[m] = bd[m - 1];
            }
            best[j] = k;
            bd[j] = d;
            break;
        }
    }
    size_t len = 0;
    for (int j = 0; j < K && best[j]; j++)
        len += strlen(best[j]) + 2;
    if (!len)
        return HSCOPE_OK;
    if (!(r->closest = hscope__malloc(&c->mem, len + 1)))
        return hscope__nomem(err, len + 1);
    r->closest[0] = '\0';
    for (int j = 0; j < K && best[j]; j++) {
        if (j)
            strcat(r->closest, ", ");
        strcat(r->closest, best[j]);
    }
    return HSCOPE_OK;
}

/* The actual value of every rule of `scope` measured by tally `t`: live
 * (objects, memsize) or retained (its memsize column); for a group the
 * dump does not have, its nearest names. */
static hscope_status
apply_tally_x(hscope_check_t *c, int32_t scope, const hscope_tally_t *t, int retained,
              void (*left_out)(const void *, uint64_t *, uint64_t *), const void *left_out_ud,
              hscope_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        hscope__crule *r = &c->rules[i];
        if (r->r.scope != scope || (r->r.metric == HSCOPE_BUDGET_RETAINED) != retained)
            continue;
        uint64_t count, mem;
        r->found = tally_find(t, scope, r->r.key, &count, &mem);
        if (!r->found && tracer_named(scope, r->r.key)) {
            /* the tracer left out of the tally: a rule naming it sees it */
            hscope__tally_tracer(t, &count, &mem);
            if (left_out)
                left_out(left_out_ud, &count, &mem);
            r->found = count != 0;
        }
        r->actual = r->r.metric == HSCOPE_BUDGET_OBJECTS ? count : mem;
        hscope_status st;
        if (!r->found && !r->closest && (st = closest(c, r, t, err)) != HSCOPE_OK)
            return st;
    }
    return HSCOPE_OK;
}

static hscope_status
apply_tally(hscope_check_t *c, int32_t scope, const hscope_tally_t *t, int retained,
            hscope_error *err)
{
    return apply_tally_x(c, scope, t, retained, NULL, NULL, err);
}

static void
copy_stats(hscope_check_t *c, const hscope_load_stats *s, const uint64_t *skipped)
{
    c->has_stats = 1;
    c->stats = *s;
    memcpy(c->skipped, skipped, sizeof(c->skipped));
    if (s->skipped_lines || s->truncated)
        c->warn |= HSCOPE_DIFF_WARN_SKIPPED;
}

/* Live tallies of the last dump: one per group key a rule needs ("type"
 * for the totals alone), on the heap when there is one, else streamed. */
static hscope_status
live(hscope_check_t *c, hscope_heap_t *h, const char *path, uint32_t keys,
     const hscope_load_options *lo, uint32_t flags, hscope_error *err)
{
    hscope_tally_options to;
    hscope__tally_options_init(&to);
    if (!(flags & HSCOPE_CHECK_KEEP_DUMPER))
        to.flags |= HSCOPE_TALLY_SKIP_DUMPER;
    if (!(flags & HSCOPE_CHECK_KEEP_TRACER))
        to.flags |= HSCOPE_TALLY_SKIP_TRACER;
    int32_t which[3];
    int nw = 0;
    for (int32_t scope = HSCOPE_BUDGET_CLASS; scope <= HSCOPE_BUDGET_SITE; scope++)
        if (keys & (1u << scope))
            which[nw++] = scope;
    for (int i = 0; i < (nw ? nw : 1); i++) {
        const char *key = nw ? hscope__budget_scope_key(which[i]) : "type";
        hscope_tally_t *t = NULL;
        hscope_status st = h ? hscope__tally_compute(&t, h, key, &to, err)
                             : hscope__tally_file(&t, path, key, lo, &to, err);
        if (st != HSCOPE_OK)
            return st;
        if (i == 0) {
            hscope_load_stats s;
            uint64_t sk[HSCOPE_SKIP__COUNT];
            hscope__load_stats_init(&s);
            hscope__tally_stats(t, &s);
            for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
                sk[r] = hscope__tally_skipped(t, r);
            hscope__tally_totals(t, &c->count, &c->memsize);
            c->excluded = hscope__tally_excluded(t);
            hscope__tally_tracer(t, &c->tracer, &c->tracer_mem);
            c->objects[c->npaths - 1] = s.objects;
            if (!c->has_leaked)
                copy_stats(c, &s, sk);
        }
        if (nw)
            st = apply_tally(c, which[i], t, 0, err);
        hscope__tally_free(t);
        if (st != HSCOPE_OK)
            return st;
    }
    return HSCOPE_OK;
}

/* Retained: the reachable totals, and per group key a retained tally. */
static hscope_status
retained(hscope_check_t *c, hscope_heap_t *h, uint32_t keys, uint32_t flags, hscope_error *err)
{
    hscope_domtree_t *tree = NULL;
    hscope_status st = hscope__domtree_compute(&tree, h, NULL, err);
    if (st != HSCOPE_OK)
        return st;
    uint64_t un, unm;
    hscope_tally_options to;
    hscope__tally_options_init(&to);
    hscope__domtree_totals(tree, &c->retained_count, &c->retained_memsize, &un, &unm);
    c->has_retained = 1;
    if (!(flags & HSCOPE_CHECK_KEEP_TRACER)) {
        /* the tracer and what it alone retains, as retained --keep-tracer
         * would show them (hscope_domtree_tally() with SKIP_TRACER) */
        to.flags |= HSCOPE_TALLY_SKIP_TRACER;
        hscope_id tr = hscope__domtree_tracer(tree);
        if (tr != HSCOPE_ID_NONE && hscope__domtree_reachable(tree, tr)) {
            c->retained_count -= hscope__domtree_retained_count(tree, tr);
            c->retained_memsize -= hscope__domtree_retained(tree, tr);
        }
    }
    for (int32_t scope = HSCOPE_BUDGET_CLASS; scope <= HSCOPE_BUDGET_SITE && st == HSCOPE_OK;
         scope++) {
        if (!(keys & (1u << scope)))
            continue;
        hscope_tally_t *t = NULL;
        st = hscope__domtree_tally(&t, tree, hscope__budget_scope_key(scope), &to, err);
        if (st == HSCOPE_OK)
            st = apply_tally(c, scope, t, 1, err);
        hscope__tally_free(t);
    }
    hscope__domtree_free(tree);
    return st;
}

/* The diff's warning text and codes, copied. */
static hscope_status
copy_diff(hscope_check_t *c, const hscope_diff_t *d, hscope_error *err)
{
    c->has_leaked = 1;
    c->leaked_count = hscope__diff_count(d);
    c->leaked_memsize = hscope__diff_memsize(d);
    for (uint32_t i = 0; i < 3; i++)
        c->objects[i] = hscope__diff_snapshot_objects(d, i);
    c->warn |= hscope__diff_warnings(d);
    const char *t = hscope__diff_warning_text(d);
    size_t len = strlen(t);
    uint32_t lines = 0;
    for (const char *p = t; *p; p++)
        lines += *p == '\n' || !p[1];
    if (!(c->warn_text = hscope__strndup(&c->mem, t, len)))
        return hscope__nomem(err, len + 1);
    if (lines && !(c->warn_codes = hscope__calloc(&c->mem, lines, sizeof(uint32_t))))
        return hscope__nomem(err, lines * sizeof(uint32_t));
    for (uint32_t i = 0; i < lines; i++)
        c->warn_codes[i] = hscope__diff_warning_code(d, i);
    c->nwarn = lines;
    return HSCOPE_OK;
}

/* [leaked.class."NAME"], [leaked.site."FILE:LINE:CLASS"]: the diff's
 * leaked objects tallied by class or by site (every group, so that a
 * site given by the end of its path finds all of its rows). */
/* The tracer the diff left out of the leaked objects (its tallies have no
 * count of it). */
static void
diff_tracer(const void *d, uint64_t *count, uint64_t *memsize)
{
    hscope__diff_tracer(d, count, memsize);
}

static hscope_status
leaked_groups(hscope_check_t *c, const hscope_diff_t *d, uint32_t keys, hscope_error *err)
{
    hscope_status st = HSCOPE_OK;
    for (int32_t scope = HSCOPE_BUDGET_LEAKED_CLASS; scope <= HSCOPE_BUDGET_LEAKED_SITE &&
         st == HSCOPE_OK; scope++) {
        if (!(keys & (1u << scope)))
            continue;
        hscope_tally_t *t = NULL;
        hscope_tally_options to;
        hscope__tally_options_init(&to);
        st = hscope__diff_tally(&t, d, hscope__budget_scope_key(scope), &to, err);
        if (st == HSCOPE_OK)
            st = apply_tally_x(c, scope, t, 0, diff_tracer, d, err);
        hscope__tally_free(t);
    }
    return st;
}

/* A note that the first dumps were not read (no [leaked] rule). */
static hscope_status
note_unread(hscope_check_t *c, hscope_error *err)
{
    char msg[600];
    snprintf(msg, sizeof(msg), "%.250s, %.250s: not read: the budget has no [leaked] rule, so "
             "only the last dump is checked", c->paths[0], c->paths[1]);
    if (!(c->warn_text = hscope__strndup(&c->mem, msg, strlen(msg))) ||
        !(c->warn_codes = hscope__calloc(&c->mem, 1, sizeof(uint32_t))))
        return hscope__nomem(err, sizeof(msg));
    c->nwarn = 1;
    return HSCOPE_OK;
}

static hscope_status
measure(hscope_check_t *c, const needs *nd, const hscope_load_options *lo, uint32_t flags,
        hscope_error *err)
{
    const char *last = c->paths[c->npaths - 1];
    hscope_diff_t *d = NULL;
    hscope_heap_t *h = NULL;
    hscope_status st = HSCOPE_OK;
    if (nd->leaked) {
        hscope_diff_options dop;
        hscope__diff_options_init(&dop);
        if (flags & HSCOPE_CHECK_KEEP_DUMPER)
            dop.flags |= HSCOPE_DIFF_KEEP_DUMPER;
        if (flags & HSCOPE_CHECK_KEEP_TRACER)
            dop.flags |= HSCOPE_DIFF_KEEP_TRACER;
        st = hscope__diff_files(&d, c->paths[0], c->paths[1], c->paths[2], lo, &dop, err);
        if (st == HSCOPE_OK && (st = copy_diff(c, d, err)) == HSCOPE_OK)
            st = leaked_groups(c, d, nd->leaked_keys, err);
        if (st == HSCOPE_OK)
            h = hscope__heap_ref(hscope__diff_heap(d));
    } else if (nd->retained || nkeys(nd->live_keys) > 1) {
        st = hscope__heap_open_file(&h, last, lo, err);
    }
    if (st == HSCOPE_OK && !nd->leaked && c->npaths == 3)
        st = note_unread(c, err);
    if (st == HSCOPE_OK)
        st = live(c, h, last, nd->live_keys, lo, flags, err);
    if (st == HSCOPE_OK && nd->retained)
        st = retained(c, h, nd->kept_keys, flags, err);
    hscope__diff_free(d);
    hscope__heap_release(h);
    return st;
}

/* The series checks that leave a [leaked] rule without an answer: the
 * same dump twice, dumps of two processes, dumps in the wrong order. */
#define NO_VERDICT_WARNINGS \
    (HSCOPE_DIFF_WARN_REPEATED | HSCOPE_DIFF_WARN_DIFFERENT_PROCESS | HSCOPE_DIFF_WARN_BACKWARDS)

/* c->no_verdict when a [leaked] rule met such a series: the reason and
 * the series check's own words. */
/* One more warning line (code 0), after the others. */
static hscope_status
add_warning(hscope_check_t *c, const char *line, hscope_error *err)
{
    size_t old = c->warn_text ? strlen(c->warn_text) : 0, n = strlen(line);
    char *t = hscope__realloc(&c->mem, c->warn_text, old + n + 2);
    if (!t)
        return hscope__nomem(err, old + n + 2);
    c->warn_text = t;
    if (old)
        t[old++] = '\n';
    memcpy(t + old, line, n + 1);
    uint32_t *codes = hscope__realloc(&c->mem, c->warn_codes, (c->nwarn + 1) * sizeof(uint32_t));
    if (!codes)
        return hscope__nomem(err, (c->nwarn + 1) * sizeof(uint32_t));
    c->warn_codes = codes;
    codes[c->nwarn++] = 0;
    return HSCOPE_OK;
}

/* A warning per rule that names a group the dump does not have (a typo
 * would pass silently forever), with the dump's closest names. */
static hscope_status
warn_unknown(hscope_check_t *c, hscope_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        const hscope__crule *r = &c->rules[i];
        if (!r->r.key || r->found)
            continue;
        size_t n = strlen(r->name) + strlen(r->r.key) + (r->closest ? strlen(r->closest) : 0) +
                   200;
        char *msg = hscope__malloc(&c->mem, n);
        if (!msg)
            return hscope__nomem(err, n);
        snprintf(msg, n, "%s:%llu: %s: the dump has no %s \"%s\"%s%s", c->budget,
                 (unsigned long long)r->r.line, r->name, hscope__budget_scope_name(r->r.scope),
                 r->r.key, r->closest ? "; closest: " : " and no name near it",
                 r->closest ? r->closest : "");
        hscope_status st = add_warning(c, msg, err);
        hscope__free(&c->mem, msg);
        if (st != HSCOPE_OK)
            return st;
    }
    return HSCOPE_OK;
}

/* With HSCOPE_CHECK_STRICT_NAMES, the first rule that names a group the
 * dump does not have leaves the check without a verdict. */
static hscope_status
unknown_name(hscope_check_t *c, hscope_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        const hscope__crule *r = &c->rules[i];
        if (!r->r.key || r->found)
            continue;
        size_t n = strlen(r->name) + (r->closest ? strlen(r->closest) : 0) + 160;
        if (!(c->no_verdict = hscope__malloc(&c->mem, n)))
            return hscope__nomem(err, n);
        snprintf(c->no_verdict, n, "no verdict: %s names a %s the dump does not have%s%s%s",
                 r->name, hscope__budget_scope_name(r->r.scope),
                 r->closest ? " (closest: " : "", r->closest ? r->closest : "",
                 r->closest ? ")" : "");
        return HSCOPE_OK;
    }
    return HSCOPE_OK;
}

static hscope_status
no_verdict(hscope_check_t *c, const needs *nd, uint32_t flags, hscope_error *err)
{
    if ((flags & HSCOPE_CHECK_STRICT_NAMES) && (!nd->leaked || !(c->warn & NO_VERDICT_WARNINGS)))
        return unknown_name(c, err);
    if (!nd->leaked || !(c->warn & NO_VERDICT_WARNINGS))
        return HSCOPE_OK;
    const char *line = c->warn_text ? c->warn_text : "";
    size_t len = 0;
    for (uint32_t i = 0; i < c->nwarn; i++) {
        len = strcspn(line, "\n");
        if (c->warn_codes[i] & NO_VERDICT_WARNINGS)
            break;
        line += len + (line[len] == '\n');
        len = 0;
    }
    const char *why = c->warn & HSCOPE_DIFF_WARN_REPEATED ? "the same dump more than once"
                    : c->warn & HSCOPE_DIFF_WARN_DIFFERENT_PROCESS ? "dumps of different processes"
                    : "dumps out of time order";
    char head[200];
    int hn = snprintf(head, sizeof(head), "no verdict: the [leaked] rules need three dumps A, B, "
                      "C of one process in time order; these are %s", why);
    size_t n = (size_t)hn + (len ? 2 + len : 0);
    if (!(c->no_verdict = hscope__malloc(&c->mem, n + 1)))
        return hscope__nomem(err, n + 1);
    memcpy(c->no_verdict, head, (size_t)hn);
    if (len) {
        memcpy(c->no_verdict + hn, ": ", 2);
        memcpy(c->no_verdict + hn + 2, line, len);
    }
    c->no_verdict[n] = '\0';
    return HSCOPE_OK;
}

/* Every rule's actual value from the measures, and the verdict. */
static void
judge(hscope_check_t *c)
{
    for (size_t i = 0; i < c->n; i++) {
        hscope__crule *r = &c->rules[i];
        if (r->r.scope == HSCOPE_BUDGET_TOTAL || r->r.scope == HSCOPE_BUDGET_LEAKED) {
            int leak = r->r.scope == HSCOPE_BUDGET_LEAKED;
            r->found = 1;
            if (r->r.metric == HSCOPE_BUDGET_RETAINED)
                r->actual = c->retained_memsize;
            else if (r->r.metric == HSCOPE_BUDGET_OBJECTS)
                r->actual = leak ? c->leaked_count : c->count;
            else
                r->actual = leak ? c->leaked_memsize : c->memsize;
        }
        if (r->actual > r->r.limit)
            c->over++;
    }
}

void
hscope__check_free(hscope_check_t *c)
{
    if (!c)
        return;
    hscope__mem m = c->mem;
    for (size_t i = 0; i < c->n; i++) {
        hscope__free(&m, c->rules[i].r.key);
        hscope__free(&m, c->rules[i].name);
        hscope__free(&m, c->rules[i].closest);
    }
    for (uint64_t i = 0; c->paths && i < c->npaths; i++)
        hscope__free(&m, c->paths[i]);
    hscope__free(&m, c->paths);
    hscope__free(&m, c->rules);
    hscope__free(&m, c->budget);
    hscope__free(&m, c->warn_text);
    hscope__free(&m, c->warn_codes);
    hscope__free(&m, c->no_verdict);
    hscope__free(&m, c);
}

/* A rule as the budget spells it: total.memsize, class."String".objects
 * (a quote or backslash in the name escaped); NULL when out of memory. */
static char *
rule_name(hscope__mem *m, const hscope__brule *r)
{
    const char *k = r->key ? r->key : "";
    size_t len = strlen(k), n = 0;
    char *s = hscope__malloc(m, 2 * len + 40);
    if (!s)
        return NULL;
    n += (size_t)sprintf(s, "%s.", hscope__budget_scope_name(r->scope));
    if (r->key) {
        s[n++] = '"';
        for (size_t i = 0; i < len; i++) {
            if (k[i] == '"' || k[i] == '\\')
                s[n++] = '\\';
            s[n++] = k[i];
        }
        s[n++] = '"';
        s[n++] = '.';
    }
    sprintf(s + n, "%s", hscope__budget_metric_name(r->metric));
    return s;
}

/* The check's copies of the budget's rules and name and of the paths. */
static hscope_status
copy_in(hscope_check_t *c, const hscope_budget_t *b, const char *const *paths, uint64_t n,
        hscope_error *err)
{
    c->npaths = n;
    if (!(c->budget = hscope__strndup(&c->mem, b->name, strlen(b->name))) ||
        !(c->paths = hscope__calloc(&c->mem, (size_t)n, sizeof(char *))) ||
        !(c->rules = hscope__calloc(&c->mem, b->n, sizeof(hscope__crule))))
        return hscope__nomem(err, b->n * sizeof(hscope__crule));
    for (uint64_t i = 0; i < n; i++)
        if (!(c->paths[i] = hscope__strndup(&c->mem, paths[i], strlen(paths[i]))))
            return hscope__nomem(err, strlen(paths[i]) + 1);
    for (size_t i = 0; i < b->n; i++) {
        c->rules[i].r = b->rules[i];
        c->rules[i].r.key = NULL;
        c->n = i + 1;
        const char *k = b->rules[i].key;
        if (k && !(c->rules[i].r.key = hscope__strndup(&c->mem, k, strlen(k))))
            return hscope__nomem(err, strlen(k) + 1);
        if (!(c->rules[i].name = rule_name(&c->mem, &b->rules[i])))
            return hscope__nomem(err, 2 * (k ? strlen(k) : 0) + 40);
    }
    return HSCOPE_OK;
}

hscope_status
hscope__check_compute(hscope_check_t **out, const hscope_budget_t *b,
                      const char *const *paths, uint64_t n, const hscope_load_options *lo,
                      uint32_t flags, hscope_error *err)
{
    needs nd = needs_of(b);
    if (nd.leaked && n != 3)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "%s:%llu: leaked: needs three dumps "
                            "(A B C, in time order), %llu given", b->name,
                            (unsigned long long)b->leaked_line, (unsigned long long)n);
    if (n != 1 && n != 3)
        return hscope__fail(err, HSCOPE_ERR_INVALID_ARG, "a budget checks one dump, or three "
                            "(A B C) for [leaked]; %llu given", (unsigned long long)n);
    hscope__mem mem;
    hscope__mem_init(&mem, lo ? lo->allocator : NULL, 0);
    hscope_check_t *c = hscope__calloc(&mem, 1, sizeof(*c));
    if (!c)
        return hscope__nomem(err, sizeof(*c));
    c->mem = mem;
    hscope_status st = copy_in(c, b, paths, n, err);
    if (st == HSCOPE_OK)
        st = measure(c, &nd, lo, flags, err);
    if (st == HSCOPE_OK)
        st = warn_unknown(c, err);
    if (st == HSCOPE_OK)
        st = no_verdict(c, &nd, flags, err);
    if (st != HSCOPE_OK) {
        hscope__check_free(c);
        return st;
    }
    judge(c);
    *out = c;
    return HSCOPE_OK;
}
