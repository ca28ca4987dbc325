/*
 * rb_redact.c - Heapscope.redact: a copy of a dump that is safe to share
 * (hscope_redact(), as `heapscope redact` writes it).  The whole pass runs
 * in C without the GVL, cancellable like a load (the unblock function and
 * the progress: proc); the result is freed before the call returns and
 * Ruby gets plain values: no handle outlives the call, so there is no
 * memory to report to the GC.
 *
 *   Heapscope::Native._redact(in_path, out_path, load_opts, gzip, gzip_level)
 *     -> [lines, values, kept, skipped_lines, { "reason" => count }]
 *
 * SPDX-License-Identifier: MIT
 */
#include <ruby/thread.h>

#include <string.h>

#include "rb_heapscope.h"

typedef struct redact_job {
    const char *in, *out;
    load_args *load;            /* options, progress, cancellation */
    hscope_redact_options ro;
    hscope_redact_t *r;         /* freed by the caller's ensure */
    hscope_error err;
    hscope_status st;
} redact_job;

static void *
redact_nogvl(void *p)
{
    redact_job *j = p;
    if (atomic_load(&j->load->cancel)) {
        j->st = HSCOPE_ERR_CANCELLED;
        snprintf(j->err.message, sizeof(j->err.message), "redact cancelled");
        return NULL;
    }
    j->st = hscope_redact(&j->r, j->in, j->out, &j->load->opts, &j->ro, &j->err);
    return NULL;
}

/* What was done, as plain values. */
static VALUE
redact_result(const hscope_redact_t *r)
{
    uint64_t lines = 0, values = 0, kept = 0;
    hscope_redact_totals(r, &lines, &values, &kept);
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    uint64_t skipped_lines = hscope_redact_stats(r, &s) == HSCOPE_OK ? s.skipped_lines : 0;
    VALUE by = rb_hash_new();
    for (int32_t k = 0; k < HSCOPE_SKIP__COUNT; k++) {
        uint64_t n = hscope_redact_skipped(r, k);
        if (n)
            rb_hash_aset(by, rb_str_new_cstr(hscope_skip_reason_name(k)), ULL2NUM(n));
    }
    return rb_ary_new_from_args(5, ULL2NUM(lines), ULL2NUM(values), ULL2NUM(kept),
                                ULL2NUM(skipped_lines), by);
}

static VALUE
redact_body(VALUE p)
{
    redact_job *j = (redact_job *)p;
    rb_thread_call_without_gvl(redact_nogvl, j, hscope_rb_ubf_cancel, j->load);
    if (j->load->pstate)
        rb_jump_tag(j->load->pstate); /* the progress proc raised */
    if (j->st != HSCOPE_OK)
        hscope_rb_raise_status(j->st, &j->err);
    return redact_result(j->r);
}

static VALUE
redact_ensure(VALUE p)
{
    redact_job *j = (redact_job *)p;
    hscope_redact_free(j->r);
    j->r = NULL;
    return Qnil;
}

static VALUE
native_redact(VALUE self, VALUE in, VALUE out, VALUE opts, VALUE gzip, VALUE level)
{
    (void)self;
    FilePathValue(in);
    FilePathValue(out);
    in = rb_str_new_frozen(in);
    out = rb_str_new_frozen(out);
    load_args l;
    memset(&l, 0, sizeof(l));
    hscope_rb_load_options(opts, &l.opts);
    atomic_init(&l.cancel, 0);
    l.progress = NIL_P(opts) ? Qnil : rb_hash_lookup(opts, ID2SYM(rb_intern("progress")));
    l.opts.progress = hscope_rb_load_progress;
    l.opts.progress_user_data = &l;
    redact_job j;
    memset(&j, 0, sizeof(j));
    hscope_error_init(&j.err);
    hscope_redact_options_init(&j.ro);
    if (RTEST(gzip))
        j.ro.flags |= HSCOPE_REDACT_GZIP;
    if (!NIL_P(level)) {
        int lv = NUM2INT(level);
        if (lv < 1 || lv > 9)
            rb_raise(rb_eArgError, "gzip_level: must be 1 to 9, not %d", lv);
        j.ro.gzip_level = lv;
    }
    j.in = StringValueCStr(in);
    j.out = StringValueCStr(out);
    j.load = &l;
    VALUE r = rb_ensure(redact_body, (VALUE)&j, redact_ensure, (VALUE)&j);
    RB_GC_GUARD(in);
    RB_GC_GUARD(out);
    RB_GC_GUARD(l.progress);
    return r;
}

void
hscope_rb_init_redact(VALUE mHeapscope)
{
    VALUE mNative = rb_define_module_under(mHeapscope, "Native");
    rb_define_singleton_method(mNative, "_redact", native_redact, 5);
}
