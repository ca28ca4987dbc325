/*
 * api.c - the JSON endpoints of `heapscope serve` (see serve.h and
 * docs/SERVE.md).  Each answer is a document of the library's writers
 * (docs/JSON.md), but for /api/info (what is served), /api/members (the
 * objects of one row of a tally) and /api/search (rows of the tallies
 * whose key has the text), which only list what the library computed.
 *
 * Parameters are checked: a malformed one is 400, an address that is not
 * an object of the dump 404; `limit` is capped (a huge one is clamped,
 * never an error), so every answer stays small and quick.  What needs the
 * dominator tree, the paths, the diff or the timeline answers 202
 * ("pending") until lazy.c has it.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve.h"

#define LIMIT_CAP 2000   /* rows per answer */
#define MEMBERS_CAP 1000 /* objects per page of /api/members */

static int
fail(hscope_srv_buf *b, int code, const char *message)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
    hscope_srv_buf_printf(b, "{\"kind\":\"error\",\"status\":%d,\"error\":", code);
    hscope_srv_buf_json_string(b, message, strlen(message));
    hscope_srv_buf_puts(b, "}\n");
    return code;
}

/* An unsigned decimal parameter: its value clamped to [0, max], `def`
 * when absent; -1 when malformed. */
static int
arg_u64(hscope_srv_req *r, const char *name, uint64_t def, uint64_t max, uint64_t *out)
{
    const char *v = r->arg(r->conn, name);
    if (!v || !*v) {
        *out = def;
        return 0;
    }
    uint64_t x = 0;
    for (const char *p = v; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return -1;
        if (x <= max)
            x = x * 10 + (uint64_t)(*p - '0');
    }
    *out = x > max ? max : x;
    return 0;
}

/* The object named by ?addr=0x...: 0, or the status of the error written. */
static int
arg_object(hscope_srv_req *r, hscope_srv_buf *b, hscope_id *id)
{
    const char *v = r->arg(r->conn, "addr");
    if (!v || !*v)
        return fail(b, 400, "addr is missing (an address, 0x...)");
    if (v[0] != '0' || (v[1] != 'x' && v[1] != 'X') || !v[2] || strlen(v) > 18)
        return fail(b, 400, "addr is not an address (hex with 0x, as in the dump)");
    uint64_t a = 0;
    for (const char *p = v + 2; *p; p++) {
        if (!isxdigit((unsigned char)*p))
            return fail(b, 400, "addr is not an address (hex with 0x, as in the dump)");
        a = a * 16 + (uint64_t)(isdigit((unsigned char)*p) ? *p - '0' : (tolower(*p) - 'a' + 10));
    }
    if (hscope_heap_find(r->srv->heap, a, id) != HSCOPE_OK)
        return fail(b, 404, "no object at this address in the dump");
    return 0;
}

/* ?by=KEY, a tally key (default `def`): NULL after a 400. */
static const char *
arg_key(hscope_srv_req *r, hscope_srv_buf *b, const char *def, int *code)
{
    const char *v = r->arg(r->conn, "by");
    if (!v || !*v)
        v = def;
    if (!hscope_tally_key_valid(v)) {
        *code = fail(b, 400, "by: not a tally key (type, class, file, file:line, "
                             "file:line:class, method, generation, gem)");
        return NULL;
    }
    return v;
}

static void
report_options(hscope_srv_req *r, hscope_report_options *ro, uint64_t top, int all_dumps)
{
    hscope_report_options_init(ro);
    ro->format = HSCOPE_FORMAT_JSON;
    ro->top = top ? top : 20;
    if (r->srv->cfg.values)
        ro->flags |= HSCOPE_REPORT_VALUES;
    /* Ruby's allocation tracer is left out of the retainers as in
     * `heapscope retained` (the tallies leave it out too) */
    ro->flags |= HSCOPE_REPORT_SKIP_TRACER;
    uint32_t n = r->srv->cfg.n;
    ro->dump_names = all_dumps ? r->srv->cfg.paths : r->srv->cfg.paths + n - 1;
    ro->dump_name_count = all_dumps ? n : 1;
}

static int
written(hscope_srv_buf *b, hscope_status st, const hscope_error *err)
{
    if (st == HSCOPE_OK || b->failed)
        return 200;
    return fail(b, 500, err->message[0] ? err->message : hscope_status_name(st));
}

/* The result of a job, or NULL after writing 202 (pending) or 500. */
static void *
job(hscope_srv_req *r, hscope_srv_buf *b, int kind, const char *key, const char *what, int *code)
{
    int state = 0;
    double sec = 0;
    hscope_error err = HSCOPE_ERROR_INIT;
    void *res = hscope_srv_job_get(r->srv, kind, key, 0, &state, &sec, &err);
    if (res)
        return res;
    if (state == 4) {
        *code = 0; /* no room to keep it: the caller computes it */
    } else if (state == 1) {
        hscope_srv_buf_puts(b, "{\"kind\":\"pending\",\"what\":");
        hscope_srv_buf_json_string(b, what, strlen(what));
        hscope_srv_buf_printf(b, ",\"seconds\":%.1f}\n", sec);
        *code = 202;
    } else {
        *code = fail(b, 500, err.message);
    }
    return NULL;
}

static int
ep_info(hscope_srv_req *r, hscope_srv_buf *b)
{
    hscope_srv *s = r->srv;
    hscope_srv_buf_printf(b, "{\"kind\":\"serve\",\"heapscope_version\":\"%s\",\"dumps\":[",
                          hscope_version_string());
    for (uint32_t i = 0; i < s->cfg.n; i++) {
        if (i)
            hscope_srv_buf_puts(b, ",");
        hscope_srv_buf_json_string(b, s->cfg.paths[i], strlen(s->cfg.paths[i]));
    }
    hscope_srv_buf_printf(b, "],\"objects\":%" PRIu64 ",\"values\":%s,\"leaks\":%s,"
                          "\"timeline\":%s,\"computed\":{",
                          hscope_heap_object_count(s->heap), s->cfg.values ? "true" : "false",
                          s->cfg.n == 3 ? "true" : "false", s->cfg.n >= 2 ? "true" : "false");
    static const char *names[] = { "domtree", "paths", "suspects" };
    for (int k = 0; k < 3; k++) {
        hscope_srv_job *j = &s->jobs[k][0];
        pthread_mutex_lock(&j->mu);
        static const char *st[] = { "no", "running", "done", "failed" };
        hscope_srv_buf_printf(b, "%s\"%s\":\"%s\"", k ? "," : "", names[k], st[j->state]);
        pthread_mutex_unlock(&j->mu);
    }
    hscope_srv_buf_puts(b, "}}\n");
    return 200;
}

static int
ep_summary(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    int code = 0;
    if (arg_u64(r, "limit", 20, LIMIT_CAP, &top) < 0)
        return fail(b, 400, "limit is not a number");
    char key[24];
    snprintf(key, sizeof(key), "%llu", (unsigned long long)(top ? top : 20));
    hscope_srv_buf *doc = job(r, b, HSCOPE_SRV_SUMMARY, key, "the summary", &code);
    if (doc) {
        hscope_srv_buf_write(b, doc->data, doc->len);
        return 200;
    }
    if (code)
        return code;
    hscope_report_options ro; /* no room to keep it: written here */
    report_options(r, &ro, top, 0);
    hscope_error err = HSCOPE_ERROR_INIT;
    return written(b, hscope_heap_write_summary(r->srv->heap, &ro, hscope_srv_buf_write, b, &err),
                   &err);
}

static int
ep_tally(hscope_srv_req *r, hscope_srv_buf *b)
{
    int code = 0;
    const char *key = arg_key(r, b, "class", &code);
    uint64_t top;
    if (!key)
        return code;
    if (arg_u64(r, "limit", 100, LIMIT_CAP, &top) < 0)
        return fail(b, 400, "limit is not a number");
    const char *sort = r->arg(r->conn, "sort");
    if (sort && strcmp(sort, "count") != 0 && strcmp(sort, "memsize") != 0)
        return fail(b, 400, "sort: count or memsize");
    /* computed once per question, on its own thread: a tally of a big
     * heap by site takes longer than an answer may */
    char jk[32];
    snprintf(jk, sizeof(jk), "%s|%u|%llu", key,
             sort && strcmp(sort, "count") == 0 ? HSCOPE_SORT_COUNT : HSCOPE_SORT_MEMSIZE,
             (unsigned long long)(top ? top : 100));
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_tally_t *t = job(r, b, HSCOPE_SRV_TALLY, jk, "the tally", &code), *own = NULL;
    if (!t && code)
        return code;
    hscope_status st = HSCOPE_OK;
    if (!t) {
        hscope_tally_options to;
        hscope_tally_options_init(&to);
        to.sort = sort && strcmp(sort, "count") == 0 ? HSCOPE_SORT_COUNT : HSCOPE_SORT_MEMSIZE;
        to.top = top ? top : 100;
        to.flags = HSCOPE_TALLY_SKIP_DUMPER | HSCOPE_TALLY_SKIP_TRACER;
        st = hscope_tally_compute(&own, r->srv->heap, key, &to, &err);
        t = own;
    }
    if (st == HSCOPE_OK) {
        hscope_report_options ro;
        report_options(r, &ro, top, 0);
        st = hscope_tally_write(t, &ro, hscope_srv_buf_write, b, &err);
    }
    hscope_tally_free(own);
    return written(b, st, &err);
}

static void
object_brief(hscope_srv_buf *b, hscope_heap_t *h, hscope_id id)
{
    const char *label = hscope_heap_object_label(h, id);
    const char *type = hscope_heap_type_name(h, hscope_heap_object_type(h, id));
    hscope_srv_buf_printf(b, "{\"address\":\"0x%" PRIx64 "\",\"type\":",
                          hscope_heap_object_address(h, id));
    hscope_srv_buf_json_string(b, type, strlen(type));
    hscope_srv_buf_puts(b, ",\"label\":");
    hscope_srv_buf_json_string(b, label ? label : "", label ? strlen(label) : 0);
    hscope_srv_buf_printf(b, ",\"memsize\":%" PRIu64 "}", hscope_heap_object_memsize(h, id));
}

/* /api/members?by=KEY&key=ROW&offset=&limit=: the objects of a row. */
static int
ep_members(hscope_srv_req *r, hscope_srv_buf *b)
{
    int code = 0;
    const char *by = arg_key(r, b, "class", &code);
    const char *key = r->arg(r->conn, "key");
    uint64_t off, lim;
    if (!by)
        return code;
    if (!key)
        return fail(b, 400, "key is missing (a row of the tally)");
    if (arg_u64(r, "offset", 0, UINT64_MAX / 2, &off) < 0 ||
        arg_u64(r, "limit", 100, MEMBERS_CAP, &lim) < 0)
        return fail(b, 400, "offset and limit are numbers");
    hscope_tally_t *t = job(r, b, HSCOPE_SRV_DRILL, by, "grouping every object", &code);
    if (!t)
        return code;
    uint64_t rows = hscope_tally_row_count(t), row = rows;
    for (uint64_t i = 0; i < rows && row == rows; i++)
        if (strcmp(hscope_tally_row_key(t, i), key) == 0)
            row = i;
    const hscope_id *ids = NULL;
    uint64_t n = 0;
    if (row == rows || hscope_tally_row_objects(t, row, &ids, &n) != HSCOPE_OK)
        return fail(b, 404, "no such row");
    if (off > n)
        off = n; /* a page past the end is the empty last page */
    uint64_t end = off + lim < n ? off + lim : n;
    hscope_srv_buf_puts(b, "{\"kind\":\"members\",\"by\":");
    hscope_srv_buf_json_string(b, by, strlen(by));
    hscope_srv_buf_puts(b, ",\"key\":");
    hscope_srv_buf_json_string(b, key, strlen(key));
    hscope_srv_buf_printf(b, ",\"count\":%" PRIu64 ",\"memsize\":%" PRIu64 ",\"offset\":%" PRIu64
                          ",\"objects\":[", n, hscope_tally_row_memsize(t, row), off);
    for (uint64_t i = off; i < end; i++) {
        if (i > off)
            hscope_srv_buf_puts(b, ",");
        object_brief(b, r->srv->heap, ids[i]);
    }
    hscope_srv_buf_puts(b, "]}\n");
    return 200;
}

static int
ep_object(hscope_srv_req *r, hscope_srv_buf *b)
{
    hscope_id id;
    int code = arg_object(r, b, &id);
    if (code)
        return code;
    uint64_t addr = hscope_heap_object_address(r->srv->heap, id);
    hscope_report_options ro;
    report_options(r, &ro, 20, 0);
    hscope_error err = HSCOPE_ERROR_INIT;
    return written(b, hscope_heap_write_objects(r->srv->heap, &addr, 1, NULL, &ro,
                                                hscope_srv_buf_write, b, &err), &err);
}

static int
ep_paths(hscope_srv_req *r, hscope_srv_buf *b)
{
    hscope_id id;
    uint64_t max;
    int code = arg_object(r, b, &id);
    if (code)
        return code;
    if (arg_u64(r, "max", 1, 20, &max) < 0)
        return fail(b, 400, "max is not a number");
    hscope_paths_t *p = job(r, b, HSCOPE_SRV_PATHS, NULL, "paths from the roots", &code);
    if (!p)
        return code;
    hscope_report_options ro;
    report_options(r, &ro, 20, 0);
    ro.max_paths = (uint32_t)(max ? max : 1);
    hscope_error err = HSCOPE_ERROR_INIT;
    return written(b, hscope_paths_write(p, &id, 1, &ro, hscope_srv_buf_write, b, &err), &err);
}

static int
ep_domtree(hscope_srv_req *r, hscope_srv_buf *b)
{
    hscope_id id = HSCOPE_ID_NONE;
    uint64_t top, depth;
    int code = 0;
    const char *a = r->arg(r->conn, "addr");
    if (a && *a && (code = arg_object(r, b, &id)) != 0)
        return code;
    if (arg_u64(r, "limit", 50, LIMIT_CAP, &top) < 0 || arg_u64(r, "depth", 1, 4, &depth) < 0)
        return fail(b, 400, "limit and depth are numbers");
    hscope_domtree_t *t = job(r, b, HSCOPE_SRV_DOMTREE, NULL, "the dominator tree", &code);
    if (!t)
        return code;
    hscope_report_options ro;
    report_options(r, &ro, top, 0);
    ro.depth = (uint32_t)(depth ? depth : 1);
    hscope_error err = HSCOPE_ERROR_INIT;
    return written(b, hscope_domtree_write(t, id, &ro, hscope_srv_buf_write, b, &err), &err);
}

static int
ep_retained(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    int code = 0;
    if (arg_u64(r, "limit", 20, LIMIT_CAP, &top) < 0)
        return fail(b, 400, "limit is not a number");
    hscope_domtree_t *t = job(r, b, HSCOPE_SRV_DOMTREE, NULL, "the dominator tree", &code);
    if (!t)
        return code;
    hscope_report_options ro;
    report_options(r, &ro, top, 0);
    hscope_error err = HSCOPE_ERROR_INIT;
    return written(b, hscope_domtree_write_retained(t, &ro, hscope_srv_buf_write, b, &err), &err);
}

static int
ep_suspects(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    int code = 0;
    if (r->srv->cfg.n != 3)
        return fail(b, 404, "the leak views need three dumps A B C");
    if (arg_u64(r, "limit", 20, LIMIT_CAP, &top) < 0)
        return fail(b, 400, "limit is not a number");
    hscope_srv_leaks *l = job(r, b, HSCOPE_SRV_SUSPECTS, NULL, "the leak suspects", &code);
    if (!l)
        return code;
    hscope_report_options ro;
    report_options(r, &ro, top, 1);
    hscope_error err = HSCOPE_ERROR_INIT;
    return written(b, hscope_suspects_write(l->suspects, &ro, hscope_srv_buf_write, b, &err),
                   &err);
}

static int
ep_diff(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    int code = 0;
    if (r->srv->cfg.n != 3)
        return fail(b, 404, "the leak views need three dumps A B C");
    const char *key = arg_key(r, b, "file:line:class", &code);
    if (!key)
        return code;
    if (arg_u64(r, "limit", 20, LIMIT_CAP, &top) < 0)
        return fail(b, 400, "limit is not a number");
    hscope_srv_leaks *l = job(r, b, HSCOPE_SRV_SUSPECTS, NULL, "the leak suspects", &code);
    if (!l)
        return code;
    hscope_tally_options to;
    hscope_tally_options_init(&to);
    to.top = top ? top : 20; /* by count, as diff --by */
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_diff_tally(&t, l->diff, key, &to, &err);
    if (st == HSCOPE_OK) {
        hscope_report_options ro;
        report_options(r, &ro, top, 1);
        st = hscope_diff_write(l->diff, t, &ro, hscope_srv_buf_write, b, &err);
    }
    hscope_tally_free(t);
    return written(b, st, &err);
}

static int
ep_timeline(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    int code = 0;
    if (r->srv->cfg.n < 2)
        return fail(b, 404, "the timeline needs two dumps or more");
    const char *key = arg_key(r, b, "class", &code);
    if (!key)
        return code;
    if (arg_u64(r, "limit", 20, LIMIT_CAP, &top) < 0)
        return fail(b, 400, "limit is not a number");
    const char *fmt = r->arg(r->conn, "format");
    hscope_timeline_t *tl = job(r, b, HSCOPE_SRV_TIMELINE, key, "the timeline", &code);
    if (!tl)
        return code;
    hscope_report_options ro;
    report_options(r, &ro, top, 1);
    ro.dump_names = NULL; /* the timeline's own order: its paths */
    ro.dump_name_count = 0;
    if (fmt && strcmp(fmt, "svg") == 0)
        ro.format = HSCOPE_FORMAT_SVG;
    hscope_error err = HSCOPE_ERROR_INIT;
    code = written(b, hscope_timeline_write(tl, &ro, hscope_srv_buf_write, b, &err), &err);
    if (code == 200 && ro.format == HSCOPE_FORMAT_SVG)
        r->mime = "image/svg+xml";
    return code;
}

static int
ep_waste(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    int code = 0;
    if (arg_u64(r, "limit", 20, LIMIT_CAP, &top) < 0)
        return fail(b, 400, "limit is not a number");
    hscope_waste_t *w = job(r, b, HSCOPE_SRV_WASTE, NULL, "the waste", &code);
    if (!w)
        return code;
    hscope_report_options ro;
    report_options(r, &ro, top, 0);
    hscope_error err = HSCOPE_ERROR_INIT;
    return written(b, hscope_waste_write(w, &ro, hscope_srv_buf_write, b, &err), &err);
}

/* Rows of tally t (by `by`) whose key has q (any case), at most 100. */
static void
search_rows(hscope_srv_buf *b, hscope_tally_t *t, const char *by, const char *q, int first)
{
    hscope_srv_buf_printf(b, "%s\"%s\":[", first ? "" : ",", by);
    uint64_t rows = hscope_tally_row_count(t);
    int found = 0;
    for (uint64_t i = 0; i < rows && found < 100; i++) {
        const char *k = hscope_tally_row_key(t, i);
        if (!strcasestr(k, q))
            continue;
        hscope_srv_buf_puts(b, found++ ? ",{\"key\":" : "{\"key\":");
        hscope_srv_buf_json_string(b, k, strlen(k));
        hscope_srv_buf_printf(b, ",\"count\":%" PRIu64 ",\"memsize\":%" PRIu64 "}",
                              hscope_tally_row_count_of(t, i), hscope_tally_row_memsize(t, i));
    }
    hscope_srv_buf_puts(b, "]");
}

/* /api/search?q=: the object at an address, the classes, sites and gems
 * whose name has the text. */
static int
ep_search(hscope_srv_req *r, hscope_srv_buf *b)
{
    int code = 0;
    const char *q = r->arg(r->conn, "q");
    if (!q || !*q || strlen(q) > 200)
        return fail(b, 400, "q: the text to look for (1 to 200 bytes)");
    hscope_srv_search *t = job(r, b, HSCOPE_SRV_SEARCH, NULL, "grouping every object", &code);
    if (!t)
        return code;
    hscope_srv_buf_puts(b, "{\"kind\":\"search\",\"q\":");
    hscope_srv_buf_json_string(b, q, strlen(q));
    hscope_srv_buf_puts(b, ",\"object\":");
    uint64_t a = 0;
    hscope_id id;
    char tail;
    if (sscanf(q, " 0x%" SCNx64 " %c", &a, &tail) == 1 &&
        hscope_heap_find(r->srv->heap, a, &id) == HSCOPE_OK)
        object_brief(b, r->srv->heap, id);
    else
        hscope_srv_buf_puts(b, "null");
    hscope_srv_buf_puts(b, ",\"rows\":{");
    for (int k = 0; k < HSCOPE_SRV_SEARCH_KEYS; k++)
        search_rows(b, t->t[k], t->keys[k], q, k == 0);
    hscope_srv_buf_puts(b, "}}\n");
    return 200;
}

int
hscope_srv_api(hscope_srv_req *r, hscope_srv_buf *b)
{
    static const struct {
        const char *path;
        int (*fn)(hscope_srv_req *, hscope_srv_buf *);
    } eps[] = {
        { "info", ep_info },       { "summary", ep_summary },   { "tally", ep_tally },
        { "members", ep_members }, { "object", ep_object },     { "paths", ep_paths },
        { "domtree", ep_domtree }, { "retained", ep_retained }, { "suspects", ep_suspects },
        { "diff", ep_diff },       { "timeline", ep_timeline }, { "waste", ep_waste },
        { "search", ep_search },
    };
    for (size_t i = 0; i < sizeof(eps) / sizeof(eps[0]); i++)
        if (strcmp(r->path, eps[i].path) == 0)
            return eps[i].fn(r, b);
    return fail(b, 404, "no such endpoint");
}
