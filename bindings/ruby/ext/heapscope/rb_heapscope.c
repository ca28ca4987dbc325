/*
 * rb_heapscope.c - Ruby binding of libheapscope.
 *
 * Binding code only: every answer comes from the library, and so does every
 * report (the _write methods run the library's writers into a String or an
 * IO: rb_write.c).  The Ruby classes (lib/heapscope.rb) turn the
 * plain values returned here into Structs; methods starting with an
 * underscore are internal.
 *
 * Handles are TypedData objects with dfree and dsize; the memory the library
 * says a handle holds (a heap's model and index bytes, hscope_*_memory() of
 * a result) is reported to the GC (rb_gc_adjust_memory_usage) and to
 * ObjectSpace.memsize_of.  Derived objects (tally, diff, dominator tree,
 * paths) keep their parent Ruby object alive by a write-barriered reference;
 * the library refcounts heaps as well, so the GC may free in any order.
 *
 * Long calls run without the GVL.  Loading is cancellable: the unblock
 * function sets a flag that the load's progress callback polls.  Analyses
 * of a loaded heap (tally, dominators, paths) have no cancellation hook in
 * the library: other threads run meanwhile, and an interrupt takes effect
 * when the call returns.
 *
 * No global state beyond the class objects.
 *
 * One file per Ruby class (rb_heapscope.h lists them); this one defines
 * the module and calls each file's init.
 *
 * SPDX-License-Identifier: MIT
 */

#include "rb_heapscope.h"

RUBY_FUNC_EXPORTED void
Init_heapscope(void)
{
    VALUE mod = rb_define_module("Heapscope");
    rb_define_module_under(mod, "Native");

    rb_define_const(mod, "LIBRARY_VERSION",
                    rb_str_freeze(rb_str_new_cstr(hscope_version_string())));
    rb_define_const(mod, "LIBRARY_VERSION_NUMBER", UINT2NUM(hscope_version_number()));
    rb_define_const(mod, "HEADER_VERSION", rb_str_freeze(rb_str_new_cstr(HSCOPE_VERSION_STRING)));

    hscope_rb_init_error(mod);
    hscope_rb_init_heap(mod);
    hscope_rb_init_load(mod);
    hscope_rb_init_loader(mod);
    hscope_rb_init_tally(mod);
    hscope_rb_init_diff(mod);
    hscope_rb_init_domtree(mod);
    hscope_rb_init_waste(mod);
    hscope_rb_init_timeline(mod);
    hscope_rb_init_export(mod);
    hscope_rb_init_html(mod);
    hscope_rb_init_format(mod);
    hscope_rb_init_check(mod);
    hscope_rb_init_redact(mod);
}
