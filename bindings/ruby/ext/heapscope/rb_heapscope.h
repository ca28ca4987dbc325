/*
 * rb_heapscope.h - the Ruby extension's private header: what its files
 * share.  The extension is split by Ruby class, as the CLI is by command:
 *
 *   rb_heapscope.c   Init_heapscope: the module, its constants, and one
 *                    hscope_rb_init_<part>(module) call per file below
 *   rb_error.c       Heapscope::Error and one subclass per hscope_status
 *   rb_heap.c        Heapscope::Heap: the handle, accessors, writers
 *   rb_load.c        Heap._open_file/_open_io/_open_memory without the GVL
 *   rb_loader.c      Native::Loader and Native::GzipSink (pipe threads)
 *   rb_analysis.c    derived handles and analyses run without the GVL
 *   rb_write.c       the library's writers into a String or an IO
 *   rb_tally.c       Native::Tally
 *   rb_diff.c        Heapscope::Diff, Native::Suspects
 *   rb_domtree.c     Heapscope::DominatorTree, Native::Paths, Native::Holders
 *   rb_waste.c       Heapscope::Waste
 *   rb_timeline.c    Heapscope::Timeline
 *   rb_export.c      Heapscope::Export
 *   rb_html.c        Native::HtmlReport
 *   rb_format.c      the library's number formats (Heapscope::Format)
 *   rb_check.c       Heapscope.check, the pprof export
 *   rb_redact.c      Heapscope.redact (a copy of a dump safe to share)
 *
 * The extension includes the library's public header only.  Names shared
 * between its files start with hscope_rb_; everything is compiled with
 * hidden visibility and Init_heapscope alone is exported.  extconf.rb
 * compiles every rb_*.c of this directory.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef HSCOPE_RB_HEAPSCOPE_H
#define HSCOPE_RB_HEAPSCOPE_H

#include <ruby.h>

#include <stdatomic.h>
#include <stdint.h>

#include <heapscope/heapscope.h>

#ifndef HAVE_RB_GC_ADJUST_MEMORY_USAGE
#define rb_gc_adjust_memory_usage(d) ((void)(d))
#endif

/* ---- one init per file, called by Init_heapscope in this order ---- */

void hscope_rb_init_error(VALUE mod);
void hscope_rb_init_heap(VALUE mod);
void hscope_rb_init_load(VALUE mod);
void hscope_rb_init_loader(VALUE mod);
void hscope_rb_init_tally(VALUE mod);
void hscope_rb_init_diff(VALUE mod);
void hscope_rb_init_domtree(VALUE mod);
void hscope_rb_init_waste(VALUE mod);
void hscope_rb_init_timeline(VALUE mod);
void hscope_rb_init_export(VALUE mod);
void hscope_rb_init_html(VALUE mod);
void hscope_rb_init_format(VALUE mod);
void hscope_rb_init_check(VALUE mod);   /* rb_check.c */
void hscope_rb_init_redact(VALUE mod);  /* rb_redact.c */

/* Classes used outside the file that defines them. */
extern VALUE hscope_rb_cHeap, hscope_rb_cTally;

/* ---- errors (rb_error.c) ---- */

extern VALUE hscope_rb_eError;
extern VALUE hscope_rb_eStatus[HSCOPE_ERR_INTERNAL + 1];

/* Raise the Heapscope::Error subclass for `st`, carrying the library's
 * message and its details as attributes. */
NORETURN(void hscope_rb_raise_status(hscope_status st, const hscope_error *err));

/* ---- Heap (rb_heap.c) ---- */

typedef struct rb_heap {
    hscope_heap_t *heap;
    VALUE owner;       /* a Diff whose heap this is (borrowed), or Qfalse */
    size_t accounted;  /* bytes reported to the GC */
} rb_heap;

VALUE hscope_rb_heap_alloc(VALUE klass);
rb_heap *hscope_rb_heap_data(VALUE obj);
/* The heap of a Heap object; raises if it is not loaded. */
hscope_heap_t *hscope_rb_heap_get(VALUE obj);
/* Report the heap's model + index memory to the GC, once. */
void hscope_rb_heap_account(rb_heap *h);
/* An object id of `h` from a Ruby Integer; IndexError when out of range. */
hscope_id hscope_rb_id_arg(const hscope_heap_t *h, VALUE v);
VALUE hscope_rb_cstr_or_nil(const char *s);
VALUE hscope_rb_ids_to_ary(const hscope_id *ids, uint64_t n);
/* The name of root category `cat`, nil for -1. */
VALUE hscope_rb_root_name(const hscope_heap_t *h, int32_t cat);

/* ---- loading (rb_load.c) ---- */

typedef struct load_args {
    rb_heap *target;          /* receives the heap inside the call */
    int kind;
    const char *path;
    int fd;
    const void *data;
    size_t len;
    hscope_load_options opts;
    hscope_error err;
    hscope_status st;
    atomic_int cancel;        /* set by the unblock function */
    VALUE progress;           /* a callable or Qnil */
    uint64_t done, total;
    int pstate;               /* rb_protect state of the progress proc */
    int pstop;                /* the proc returned :cancel */
} load_args;

/* Load options from the Hash `opts` (nil: the defaults). */
void hscope_rb_load_options(VALUE opts, hscope_load_options *o);
/* The unblock function of a load: sets a->cancel. */
void hscope_rb_ubf_cancel(void *p);
/* The load's progress callback (user data: a load_args). */
int32_t hscope_rb_load_progress(void *ud, uint64_t done, uint64_t total);
int hscope_rb_io_fd(VALUE io);

/* ---- derived handles and analyses (rb_analysis.c) ---- */

typedef struct rb_handle {
    void *ptr;
    void (*free_fn)(void *);
    VALUE parent;          /* the Ruby object whose heap this refers to */
    hscope_heap_t *heap;   /* the heap the handle's ids refer to */
    size_t accounted;
} rb_handle;

void hscope_rb_handle_mark(void *p);
void hscope_rb_handle_compact(void *p);
void hscope_rb_handle_free(void *p);
size_t hscope_rb_handle_memsize(const void *p);

/* The rb_data_type_t of a derived handle: `static HANDLE_TYPE(var, name);` */
#define HANDLE_TYPE(var, name)                                                  \
    const rb_data_type_t var = {                                                \
        name,                                                                   \
        { hscope_rb_handle_mark, hscope_rb_handle_free, hscope_rb_handle_memsize, \
          hscope_rb_handle_compact, { 0 } },                                    \
        0, 0, RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,            \
    }

VALUE hscope_rb_handle_new(VALUE klass, const rb_data_type_t *type, void (*free_fn)(void *),
                           VALUE parent, hscope_heap_t *heap);
/* The handle of `obj`; raises if it is not initialised. */
rb_handle *hscope_rb_handle_get(VALUE obj, const rb_data_type_t *type);
void hscope_rb_handle_account(rb_handle *h, uint64_t bytes);

/* A Native::Tally to be filled by an analysis (rb_tally.c): its ids refer
 * to `heap`, which `parent` keeps alive. */
VALUE hscope_rb_tally_new(VALUE parent, hscope_heap_t *heap);
/* The handle of a Native::Tally; raises if obj is none. */
rb_handle *hscope_rb_tally_data(VALUE obj);

/* One analysis call run without the GVL.  The result is stored straight
 * into the pre-allocated handle, so an interrupt raised when the call
 * returns cannot leak it. */
typedef struct analysis_args {
    int what;
    rb_handle *out;
    hscope_heap_t *heap;
    const hscope_heap_t *cheap;
    hscope_diff_t *diff;
    hscope_domtree_t *tree;
    hscope_heap_t *a, *b, *c;
    const char *pa, *pb, *pc;
    const char *key;
    const hscope_id *ids;
    uint64_t nids;
    hscope_tally_options topts;
    hscope_dom_options dopts;
    hscope_diff_options fopts;
    hscope_waste_options wopts;
    const char *const *paths;   /* AN_TIMELINE, AN_EXPORT: the dumps */
    uint64_t npaths;
    const char *dir;            /* AN_EXPORT */
    hscope_timeline_options lopts;
    hscope_export_options xopts;
    hscope_html_options hopts;  /* AN_HTML */
    load_args *load;            /* dumps read by the call: progress / cancellation */
    hscope_error err;
    hscope_status st;
} analysis_args;

enum { AN_TALLY, AN_DIFF_TALLY, AN_DOMTREE, AN_PATHS, AN_DIFF, AN_DIFF_FILES,
       AN_HOLDERS, AN_WASTE_FILE, AN_WASTE_HEAP,
       AN_TALLY_FILE, AN_TIMELINE, AN_EXPORT /* dumps read from files (timeline section) */,
       AN_HTML /* the HTML report */ };

/* Run `a` without the GVL; raise on failure. */
void hscope_rb_run_analysis(analysis_args *a);
uint64_t hscope_rb_top_arg(VALUE top);
/* The key (returned: a frozen copy the caller keeps alive, *ckey its
 * bytes) and tally options of a _tally call. */
VALUE hscope_rb_tally_args(VALUE key, VALUE top, VALUE sort, const char **ckey,
                           hscope_tally_options *o);
void hscope_rb_dom_opts(hscope_dom_options *o, VALUE class_edges);
VALUE hscope_rb_files_call(VALUE klass, const rb_data_type_t *type, void (*free_fn)(void *),
                           analysis_args *x, VALUE paths, VALUE opts);

/* An analysis made for the writers (suspects, retained by key). */
typedef struct report_analysis {
    rb_handle *out;
    hscope_diff_t *diff;
    hscope_domtree_t *tree;
    const char *key;
    hscope_tally_options topts;
    hscope_dom_options dopts;
    hscope_error err;
    hscope_status st;
} report_analysis;

void hscope_rb_run_report_analysis(report_analysis *a, void *(*fn)(void *));

/* ---- writers (rb_write.c) ---- */

typedef struct rb_sink {
    char *buf;             /* malloc'd: no GVL when it grows */
    size_t len, cap;
    VALUE io;              /* Qnil: collect the whole output */
    uint64_t written;      /* bytes handed to io.write */
    int nomem;             /* the buffer could not grow */
    int state;             /* rb_protect state of io.write */
    atomic_int cancel;     /* set by the unblock function */
} rb_sink;

enum { W_SUMMARY, W_OBJECTS, W_GENERATIONS, W_TALLY, W_DIFF, W_DOMTREE, W_RETAINED,
       W_PATHS, W_SUSPECTS,
       W_TIMELINE, W_EXPORT /* the timeline section */, W_HTML /* the HTML report */ };

/* One writer call: which writer, its arguments and options, the sink. */
typedef struct write_job {
    int what;
    void *handle;                 /* the result written */
    const hscope_tally_t *groups; /* W_DIFF: the diff's tally, or NULL */
    hscope_id focus;              /* W_DOMTREE */
    const void *items;            /* W_OBJECTS: addresses; W_PATHS: ids */
    uint64_t nitems;
    VALUE opts;
    hscope_report_options ro;
    rb_sink sink;
    hscope_error err;
    hscope_status st;
} write_job;

const char **hscope_rb_cstr_array(VALUE ary, VALUE *keep, uint64_t *n_out);
void hscope_rb_write_job_init(write_job *j, int what, void *handle);
VALUE hscope_rb_write_run(VALUE self, write_job *j, VALUE opts);
VALUE hscope_rb_write_handle(VALUE self, int what, void *handle, VALUE opts);
VALUE hscope_rb_write_items(VALUE self, int what, void *handle, const hscope_heap_t *heap,
                            VALUE ary, VALUE opts);

#endif
