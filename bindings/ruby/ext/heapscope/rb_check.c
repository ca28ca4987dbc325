/*
 * rb_check.c - Heapscope.check (a budget checked without the CLI:
 * hscope_budget_*, hscope_check_*) and Heapscope.export(..., format:
 * :pprof) (hscope_heap_write_pprof()).  Each call does its whole work in
 * C, the library's part without the GVL, and hands Ruby plain values: no
 * handle outlives the call.
 *
 *   Heapscope::Native._check(budget_text, budget_name, paths, keep_dumper, keep_tracer)
 *     -> [over_count, rules, [count, memsize, excluded, tracer objects, tracer
 *         memsize], warning_text,
 *         text_report, json_report]
 *     rules: [scope, metric, key, line, limit, actual, over, found] each
 *   Heapscope::Native._export_pprof(dump_path, out_path, time_ns)
 *     -> bytes written
 */
#include <ruby.h>
#include <ruby/encoding.h>
#include <ruby/thread.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <heapscope/heapscope.h>

#include "rb_heapscope.h"


/* ------------------------------------------------------------------ */
/* check                                                               */
/* ------------------------------------------------------------------ */

typedef struct check_job {
    const char *text;
    uint64_t len;
    const char *name;
    const char **paths;
    uint64_t n;
    uint32_t flags;
    hscope_budget_t *budget;
    hscope_check_t *check;
    hscope_error err;
    hscope_status st;
} check_job;

static void *
check_nogvl(void *p)
{
    check_job *j = p;
    j->st = hscope_budget_parse(&j->budget, j->text, j->len, j->name, &j->err);
    if (j->st == HSCOPE_OK) {
        hscope_check_options o = HSCOPE_CHECK_OPTIONS_INIT;
        o.flags = j->flags;
        j->st = hscope_check_compute(&j->check, j->budget, j->paths, j->n, NULL, &o, &j->err);
    }
    return NULL;
}

static int32_t
str_write(void *ud, const char *data, uint64_t len)
{
    rb_str_cat((VALUE)ud, data, (long)len);
    return 0;
}

static VALUE
check_report(const hscope_check_t *c, int32_t format, VALUE names)
{
    VALUE s = rb_str_new(NULL, 0);
    hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
    ro.format = format;
    long n = RARRAY_LEN(names);
    const char **nm = ALLOCA_N(const char *, n ? n : 1);
    for (long i = 0; i < n; i++)
        nm[i] = StringValueCStr(RARRAY_AREF(names, i));
    ro.dump_names = nm;
    ro.dump_name_count = (uint64_t)n;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_check_write(c, &ro, str_write, (void *)s, &err);
    if (st != HSCOPE_OK)
        hscope_rb_raise_status(st, &err);
    rb_enc_associate(s, rb_utf8_encoding());
    return s;
}

static VALUE
check_result(const hscope_check_t *c, VALUE paths)
{
    VALUE rules = rb_ary_new();
    for (uint64_t i = 0; i < hscope_check_rule_count(c); i++) {
        hscope_check_rule r = HSCOPE_CHECK_RULE_INIT;
        if (hscope_check_rule_get(c, i, &r) != HSCOPE_OK)
            break;
        VALUE row = rb_ary_new_capa(8);
        rb_ary_push(row, INT2NUM(r.scope));
        rb_ary_push(row, INT2NUM(r.metric));
        rb_ary_push(row, r.key ? rb_utf8_str_new_cstr(r.key) : Qnil);
        rb_ary_push(row, ULL2NUM(r.line));
        rb_ary_push(row, ULL2NUM(r.limit));
        rb_ary_push(row, ULL2NUM(r.actual));
        rb_ary_push(row, r.over ? Qtrue : Qfalse);
        rb_ary_push(row, r.found ? Qtrue : Qfalse);
        rb_ary_push(rules, row);
    }
    uint64_t count = 0, memsize = 0, excluded = 0;
    hscope_check_totals(c, &count, &memsize, &excluded);
    const char *w = hscope_check_warning_text(c);
    VALUE out = rb_ary_new_capa(6);
    rb_ary_push(out, ULL2NUM(hscope_check_over_count(c)));
    rb_ary_push(out, rules);
    uint64_t tn = 0, tm = 0;
    hscope_check_excluded_tracer(c, &tn, &tm);
    rb_ary_push(out, rb_ary_new_from_args(5, ULL2NUM(count), ULL2NUM(memsize), ULL2NUM(excluded),
                                          ULL2NUM(tn), ULL2NUM(tm)));
    rb_ary_push(out, rb_utf8_str_new_cstr(w ? w : ""));
    rb_ary_push(out, check_report(c, HSCOPE_FORMAT_TEXT, paths));
    rb_ary_push(out, check_report(c, HSCOPE_FORMAT_JSON, paths));
    return out;
}

typedef struct check_call {
    check_job *j;
    VALUE paths;
} check_call;

static VALUE
check_body(VALUE p)
{
    check_call *c = (check_call *)p;
    rb_thread_call_without_gvl(check_nogvl, c->j, RUBY_UBF_IO, NULL);
    if (c->j->st != HSCOPE_OK)
        hscope_rb_raise_status(c->j->st, &c->j->err);
    return check_result(c->j->check, c->paths);
}

static VALUE
check_ensure(VALUE p)
{
    check_job *j = ((check_call *)p)->j;
    hscope_check_free(j->check);
    hscope_budget_free(j->budget);
    j->check = NULL;
    j->budget = NULL;
    return Qnil;
}

static VALUE
native_check(VALUE self, VALUE text, VALUE name, VALUE paths, VALUE keep_dumper,
             VALUE keep_tracer)
{
    (void)self;
    StringValue(text);
    Check_Type(paths, T_ARRAY);
    long n = RARRAY_LEN(paths);
    check_job j;
    memset(&j, 0, sizeof(j));
    hscope_error_init(&j.err);
    j.text = RSTRING_PTR(text);
    j.len = (uint64_t)RSTRING_LEN(text);
    j.name = NIL_P(name) ? NULL : StringValueCStr(name);
    j.paths = ALLOCA_N(const char *, n ? n : 1);
    for (long i = 0; i < n; i++)
        j.paths[i] = StringValueCStr(RARRAY_AREF(paths, i));
    j.n = (uint64_t)n;
    j.flags = (RTEST(keep_dumper) ? HSCOPE_CHECK_KEEP_DUMPER : 0) |
              (RTEST(keep_tracer) ? HSCOPE_CHECK_KEEP_TRACER : 0);
    check_call c = { &j, paths };
    /* text, name and paths stay reachable from the arguments (on the
     * stack) for the whole call */
    VALUE r = rb_ensure(check_body, (VALUE)&c, check_ensure, (VALUE)&c);
    RB_GC_GUARD(text);
    RB_GC_GUARD(name);
    RB_GC_GUARD(paths);
    return r;
}

/* ------------------------------------------------------------------ */
/* pprof                                                               */
/* ------------------------------------------------------------------ */

typedef struct pprof_job {
    const char *path, *out;
    int64_t time_ns;
    uint64_t written;
    hscope_error err;
    hscope_status st;
} pprof_job;

typedef struct file_sink {
    FILE *f;
    uint64_t *n;
} file_sink;

static int32_t
file_write(void *ud, const char *data, uint64_t len)
{
    file_sink *s = ud;
    *s->n += len;
    return fwrite(data, 1, (size_t)len, s->f) == len ? 0 : -1;
}

static void *
pprof_nogvl(void *p)
{
    pprof_job *j = p;
    hscope_heap_t *h = NULL;
    j->st = hscope_heap_open_file(&h, j->path, NULL, &j->err);
    if (j->st != HSCOPE_OK)
        return NULL;
    FILE *f = fopen(j->out, "wb");
    if (!f) {
        j->st = HSCOPE_ERR_IO;
        snprintf(j->err.message, sizeof(j->err.message), "cannot write %s: %s", j->out,
                 strerror(errno));
    } else {
        hscope_report_options ro = HSCOPE_REPORT_OPTIONS_INIT;
        const char *name = j->path;
        ro.dump_names = &name;
        ro.dump_name_count = 1;
        file_sink s = { f, &j->written };
        j->st = hscope_heap_write_pprof(h, j->time_ns, &ro, file_write, &s, &j->err);
        if (fclose(f) != 0 && j->st == HSCOPE_OK) {
            j->st = HSCOPE_ERR_IO;
            snprintf(j->err.message, sizeof(j->err.message), "write error on %s", j->out);
        }
    }
    hscope_heap_free(h);
    return NULL;
}

static VALUE
native_export_pprof(VALUE self, VALUE path, VALUE out, VALUE time_ns)
{
    (void)self;
    pprof_job j;
    memset(&j, 0, sizeof(j));
    hscope_error_init(&j.err);
    j.path = StringValueCStr(path);
    j.out = StringValueCStr(out);
    j.time_ns = NIL_P(time_ns) ? 0 : NUM2LL(time_ns);
    rb_thread_call_without_gvl(pprof_nogvl, &j, RUBY_UBF_IO, NULL);
    RB_GC_GUARD(path);
    RB_GC_GUARD(out);
    if (j.st != HSCOPE_OK)
        hscope_rb_raise_status(j.st, &j.err);
    return ULL2NUM(j.written);
}

void
hscope_rb_init_check(VALUE mHeapscope)
{
    VALUE mNative = rb_define_module_under(mHeapscope, "Native");
    rb_define_singleton_method(mNative, "_check", native_check, 5);
    rb_define_singleton_method(mNative, "_export_pprof", native_export_pprof, 3);
    rb_define_const(mHeapscope, "FORMAT_PPROF", INT2NUM(HSCOPE_FORMAT_PPROF));
}
