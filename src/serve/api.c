/*
 * api.c - the JSON endpoints of `heapscope serve` (see serve.h and
 * docs/SERVE.md).  Each answer is a document of the library's writers
 * (docs/JSON.md), but for /api/info (what is served), /api/members (the
 * objects of one row of a tally), a page of an object's references or
 * referrers and /api/search (rows of the tallies whose key has the text),
 * which only list what the library computed.
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

/* The result of a job, or NULL after writing 202 (pending) or 500.  With
 * no room to keep one more key, computed here: *own gets it too, for the
 * caller to release. */
static void *
job(hscope_srv_req *r, hscope_srv_buf *b, int kind, const char *key, const char *what, int *code,
    void **own)
{
    int state = 0;
    double sec = 0;
    hscope_error err = HSCOPE_ERROR_INIT;
    void *res = hscope_srv_job_get(r->srv, kind, key, 0, &state, &sec, &err);
    *own = NULL;
    if (res)
        return res;
    if (state == 4 && (*own = hscope_srv_compute(r->srv, kind, key, &err)) != NULL)
        return *own;
    if (state == 1) {
        hscope_srv_buf_puts(b, "{\"kind\":\"pending\",\"what\":");
        hscope_srv_buf_json_string(b, what, strlen(what));
        hscope_srv_buf_printf(b, ",\"seconds\":%.1f}\n", sec);
        *code = 202;
    } else {
        *code = fail(b, 500, err.message);
    }
    return NULL;
}

/* The object an answer is about, and how far it goes (paths, levels). */
typedef struct focus {
    hscope_id id;
    uint32_t n;
} focus;

/* What an endpoint writes from a job's result (arg: its parameters). */
enum { W_SUMMARY, W_TALLY, W_PATHS, W_DOMTREE, W_RETAINED, W_SUSPECTS, W_DIFF, W_TIMELINE,
       W_WASTE };
static hscope_status write_diff(hscope_srv_leaks *l, const char *key,
                                hscope_report_options *ro, hscope_srv_buf *b, hscope_error *err);
static hscope_status write_timeline(hscope_timeline_t *tl, hscope_srv_req *r,
                                    hscope_report_options *ro, hscope_srv_buf *b,
                                    hscope_error *err);

/* The shape of most endpoints: the job's result (else 202 or 500), the
 * report options (`top` rows; the names of every dump or of the last),
 * then the library's writer `w`: 200, or 500 with its error. */
static int
answer(hscope_srv_req *r, hscope_srv_buf *b, int kind, const char *key, const char *what,
       uint64_t top, int all_dumps, int w, const void *arg)
{
    int code = 0;
    void *own, *res = job(r, b, kind, key, what, &code, &own);
    if (!res)
        return code;
    hscope_report_options ro;
    report_options(r, &ro, top, all_dumps);
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_write_fn out = hscope_srv_buf_write;
    const focus *f = arg;
    hscope_status st = HSCOPE_ERR_INTERNAL;
    if (w == W_SUMMARY) { /* written once, when computed */
        st = hscope_srv_buf_write(b, ((hscope_srv_buf *)res)->data, ((hscope_srv_buf *)res)->len)
                 ? HSCOPE_ERR_NOMEM : HSCOPE_OK;
    } else if (w == W_TALLY) {
        st = hscope_tally_write(res, &ro, out, b, &err);
    } else if (w == W_PATHS) {
        ro.max_paths = f->n;
        st = hscope_paths_write(res, &f->id, 1, &ro, out, b, &err);
    } else if (w == W_DOMTREE) {
        ro.depth = f->n;
        st = hscope_domtree_write(res, f->id, &ro, out, b, &err);
    } else if (w == W_RETAINED) {
        st = hscope_domtree_write_retained(res, &ro, out, b, &err);
    } else if (w == W_SUSPECTS) {
        st = hscope_suspects_write(((hscope_srv_leaks *)res)->suspects, &ro, out, b, &err);
    } else if (w == W_DIFF) {
        st = write_diff(res, arg, &ro, b, &err);
    } else if (w == W_TIMELINE) {
        st = write_timeline(res, r, &ro, b, &err);
    } else if (w == W_WASTE) {
        st = hscope_waste_write(res, &ro, out, b, &err);
    }
    hscope_srv_release(kind, own);
    return written(b, st, &err);
}

/* ?limit= (default `def`, at most LIMIT_CAP): 0, or 400 written. */
static int
arg_limit(hscope_srv_req *r, hscope_srv_buf *b, uint64_t def, uint64_t *top)
{
    return arg_u64(r, "limit", def, LIMIT_CAP, top) < 0 ? fail(b, 400, "limit is not a number")
                                                        : 0;
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
    int code = arg_limit(r, b, 20, &top);
    char key[24];
    snprintf(key, sizeof(key), "%llu", (unsigned long long)(top ? top : 20));
    return code ? code
                : answer(r, b, HSCOPE_SRV_SUMMARY, key, "the summary", top, 0, W_SUMMARY, NULL);
}

static int
ep_tally(hscope_srv_req *r, hscope_srv_buf *b)
{
    int code = 0;
    const char *key = arg_key(r, b, "class", &code);
    uint64_t top;
    if (!key || (code = arg_limit(r, b, 100, &top)) != 0)
        return code;
    const char *sort = r->arg(r->conn, "sort");
    if (sort && strcmp(sort, "count") != 0 && strcmp(sort, "memsize") != 0)
        return fail(b, 400, "sort: count or memsize");
    /* computed once per question, on its own thread: a tally of a big
     * heap by site takes longer than an answer may */
    char jk[32];
    snprintf(jk, sizeof(jk), "%s|%u|%llu", key,
             sort && strcmp(sort, "count") == 0 ? HSCOPE_SORT_COUNT : HSCOPE_SORT_MEMSIZE,
             (unsigned long long)(top ? top : 100));
    return answer(r, b, HSCOPE_SRV_TALLY, jk, "the tally", top, 0, W_TALLY, NULL);
}

static void
object_brief(hscope_srv_buf *b, hscope_heap_t *h, hscope_id id)
{
    const char *label = hscope_heap_object_label(h, id);
    const char *type = hscope_heap_type_name(h, hscope_heap_object_type(h, id));
    hscope_srv_buf_printf(b, "{\"address\":\"0x%" PRIx64 "\",\"type\":",
                          hscope_heap_object_address(h, id));
    hscope_srv_buf_json_string(b, type, strlen(type));
    const char *cls = hscope_heap_object_class_label(h, id); /* as the library's lists */
    hscope_srv_buf_puts(b, ",\"class\":");
    if (cls)
        hscope_srv_buf_json_string(b, cls, strlen(cls));
    else
        hscope_srv_buf_puts(b, "null");
    hscope_srv_buf_puts(b, ",\"label\":");
    hscope_srv_buf_json_string(b, label ? label : "", label ? strlen(label) : 0);
    hscope_srv_buf_printf(b, ",\"memsize\":%" PRIu64 "}", hscope_heap_object_memsize(h, id));
}

/* The end of a list's answer: how many, and ids[off..off+lim) (a page past
 * the end is the empty last page). */
static int
page(hscope_srv_buf *b, hscope_heap_t *h, const hscope_id *ids, uint64_t n, uint64_t off,
     uint64_t lim)
{
    off = off < n ? off : n;
    uint64_t end = off + lim < n ? off + lim : n;
    hscope_srv_buf_printf(b, ",\"count\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"objects\":[", n,
                          off);
    for (uint64_t i = off; i < end; i++) {
        if (i > off)
            hscope_srv_buf_puts(b, ",");
        object_brief(b, h, ids[i]);
    }
    hscope_srv_buf_puts(b, "]}\n");
    return 200;
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
    /* the job of "BY\nROW" (one too long for a slot is computed here) */
    size_t len = strlen(by) + strlen(key) + 2;
    char *jk = malloc(len);
    if (!jk)
        return fail(b, 500, "out of memory");
    snprintf(jk, len, "%s\n%s", by, key);
    void *own;
    hscope_srv_members *m = job(r, b, HSCOPE_SRV_DRILL, jk, "grouping every object", &code, &own);
    free(jk);
    if (!m)
        return code;
    if (!m->n) {
        code = fail(b, 404, "no such row");
    } else {
        hscope_srv_buf_puts(b, "{\"kind\":\"members\",\"by\":");
        hscope_srv_buf_json_string(b, by, strlen(by));
        hscope_srv_buf_puts(b, ",\"key\":");
        hscope_srv_buf_json_string(b, key, strlen(key));
        hscope_srv_buf_printf(b, ",\"memsize\":%" PRIu64, m->memsize);
        code = page(b, r->srv->heap, m->ids, m->n, off, lim);
    }
    hscope_srv_release(HSCOPE_SRV_DRILL, own);
    return code;
}

/* A page of an object's references or referrers (?list=): the objects
 * from ?offset=, at most ?limit=, and how many there are. */
static int
object_list(hscope_srv_req *r, hscope_srv_buf *b, hscope_id id, const char *list, uint64_t off,
            uint64_t lim)
{
    hscope_heap_t *h = r->srv->heap;
    const hscope_id *ids = NULL;
    uint64_t n = 0;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = strcmp(list, "references") == 0
                           ? hscope_heap_object_references(h, id, &ids, &n)
                           : hscope_heap_object_referrers(h, id, &ids, &n, &err);
    if (st != HSCOPE_OK)
        return written(b, st, &err);
    hscope_srv_buf_printf(b, "{\"kind\":\"object_list\",\"address\":\"0x%" PRIx64
                          "\",\"list\":\"%s\"", hscope_heap_object_address(h, id), list);
    return page(b, h, ids, n, off, lim);
}

/* /api/object?addr=&limit=: the object (the library's document) with the
 * first `limit` references and referrers and their counts; with
 * ?list=references|referrers&offset=, a page of one of the lists.  An
 * object referenced by millions gives an answer of bounded size. */
static int
ep_object(hscope_srv_req *r, hscope_srv_buf *b)
{
    hscope_id id;
    uint64_t off, lim;
    int code = arg_object(r, b, &id);
    if (code)
        return code;
    if (arg_u64(r, "offset", 0, UINT64_MAX / 2, &off) < 0 ||
        arg_u64(r, "limit", 100, MEMBERS_CAP, &lim) < 0)
        return fail(b, 400, "offset and limit are numbers");
    const char *list = r->arg(r->conn, "list");
    if (list && strcmp(list, "references") != 0 && strcmp(list, "referrers") != 0)
        return fail(b, 400, "list: references or referrers");
    if (list)
        return object_list(r, b, id, list, off, lim);
    if (off)
        return fail(b, 400, "offset needs list (references or referrers)");
    uint64_t addr = hscope_heap_object_address(r->srv->heap, id);
    hscope_report_options ro;
    report_options(r, &ro, 0, 0);
    ro.top = lim; /* 0: none, only the counts */
    ro.flags |= HSCOPE_REPORT_LISTS_TOP;
    hscope_error err = HSCOPE_ERROR_INIT;
    return written(b, hscope_heap_write_objects(r->srv->heap, &addr, 1, NULL, &ro,
                                                hscope_srv_buf_write, b, &err), &err);
}

static int
ep_paths(hscope_srv_req *r, hscope_srv_buf *b)
{
    focus f;
    uint64_t max;
    int code = arg_object(r, b, &f.id);
    if (code)
        return code;
    if (arg_u64(r, "max", 1, 20, &max) < 0)
        return fail(b, 400, "max is not a number");
    f.n = (uint32_t)(max ? max : 1);
    return answer(r, b, HSCOPE_SRV_PATHS, NULL, "paths from the roots", 20, 0, W_PATHS, &f);
}

static int
ep_domtree(hscope_srv_req *r, hscope_srv_buf *b)
{
    focus f = { HSCOPE_ID_NONE, 1 };
    uint64_t top, depth;
    int code = 0;
    const char *a = r->arg(r->conn, "addr");
    if (a && *a && (code = arg_object(r, b, &f.id)) != 0)
        return code;
    if (arg_u64(r, "limit", 50, LIMIT_CAP, &top) < 0 || arg_u64(r, "depth", 1, 4, &depth) < 0)
        return fail(b, 400, "limit and depth are numbers");
    f.n = (uint32_t)(depth ? depth : 1);
    return answer(r, b, HSCOPE_SRV_DOMTREE, NULL, "the dominator tree", top, 0, W_DOMTREE, &f);
}

static int
ep_retained(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    int code = arg_limit(r, b, 20, &top);
    return code ? code
                : answer(r, b, HSCOPE_SRV_DOMTREE, NULL, "the dominator tree", top, 0,
                         W_RETAINED, NULL);
}

static int
ep_suspects(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    if (r->srv->cfg.n != 3)
        return fail(b, 404, "the leak views need three dumps A B C");
    int code = arg_limit(r, b, 20, &top);
    return code ? code
                : answer(r, b, HSCOPE_SRV_SUSPECTS, NULL, "the leak suspects", top, 1,
                         W_SUSPECTS, NULL);
}

/* The diff's leaked objects by a key (by count, as diff --by). */
static hscope_status
write_diff(hscope_srv_leaks *l, const char *key, hscope_report_options *ro, hscope_srv_buf *b,
           hscope_error *err)
{
    hscope_tally_options to;
    hscope_tally_options_init(&to);
    to.top = ro->top;
    hscope_tally_t *t = NULL;
    hscope_status st = hscope_diff_tally(&t, l->diff, key, &to, err);
    if (st == HSCOPE_OK)
        st = hscope_diff_write(l->diff, t, ro, hscope_srv_buf_write, b, err);
    hscope_tally_free(t);
    return st;
}

static int
ep_diff(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    int code = 0;
    if (r->srv->cfg.n != 3)
        return fail(b, 404, "the leak views need three dumps A B C");
    const char *key = arg_key(r, b, "file:line:class", &code);
    if (!key || (code = arg_limit(r, b, 20, &top)) != 0)
        return code;
    return answer(r, b, HSCOPE_SRV_SUSPECTS, NULL, "the leak suspects", top, 1, W_DIFF, key);
}

static hscope_status
write_timeline(hscope_timeline_t *tl, hscope_srv_req *r, hscope_report_options *ro,
               hscope_srv_buf *b, hscope_error *err)
{
    const char *fmt = r->arg(r->conn, "format");
    ro->dump_names = NULL; /* the timeline's own order: its paths */
    ro->dump_name_count = 0;
    if (fmt && strcmp(fmt, "svg") == 0) {
        ro->format = HSCOPE_FORMAT_SVG;
        r->mime = "image/svg+xml"; /* an error is JSON: ep_timeline resets it */
    }
    return hscope_timeline_write(tl, ro, hscope_srv_buf_write, b, err);
}

static int
ep_timeline(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    int code = 0;
    if (r->srv->cfg.n < 2)
        return fail(b, 404, "the timeline needs two dumps or more");
    const char *key = arg_key(r, b, "class", &code);
    if (!key || (code = arg_limit(r, b, 20, &top)) != 0)
        return code;
    const char *json = r->mime;
    code = answer(r, b, HSCOPE_SRV_TIMELINE, key, "the timeline", top, 1, W_TIMELINE, NULL);
    if (code != 200)
        r->mime = json;
    return code;
}

static int
ep_waste(hscope_srv_req *r, hscope_srv_buf *b)
{
    uint64_t top;
    int code = arg_limit(r, b, 20, &top);
    return code ? code : answer(r, b, HSCOPE_SRV_WASTE, NULL, "the waste", top, 0, W_WASTE, NULL);
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
    void *own; /* unkeyed: always kept */
    hscope_srv_search *t = job(r, b, HSCOPE_SRV_SEARCH, NULL, "grouping every object", &code, &own);
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
