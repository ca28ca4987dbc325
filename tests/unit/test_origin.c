/*
 * test_origin.c - the gem of an allocation file (tally --by gem) for every
 * layout users have, and the dumper's own allocation sites: tables of
 * real-looking paths, each with the label a person would give it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "src/analysis/origin.h"

static const struct {
    const char *file, *gem;
} gems[] = {
    /* Ruby's own code written in Ruby */
    { "<internal:kernel>", "(ruby)" },
    { "<internal:/usr/lib/ruby/vendor_ruby/rubygems/core_ext/kernel_require.rb>", "(ruby)" },
    { "<internal:/usr/lib/ruby/vendor_ruby/rubygems/core_ext", "(ruby)" }, /* cut */
    { "<internal:numeric>", "(ruby)" },
    /* the standard library (rubylibdir, rubyarchdir) */
    { "/usr/lib/ruby/3.1.0/set.rb", "(stdlib)" },
    { "/usr/lib/ruby/3.1.0/psych/visitors/to_ruby.rb", "(stdlib)" },
    { "/usr/lib/x86_64-linux-gnu/ruby/3.1.0/json/ext/parser.so", "(stdlib)" },
    { "/usr/local/lib/ruby/3.3.0/json/common.rb", "(stdlib)" },
    { "/home/dev/.rubies/ruby-3.2.2/lib/ruby/3.2.0/uri/generic.rb", "(stdlib)" },
    { "/home/dev/.rbenv/versions/3.3.1/lib/ruby/3.3.0/forwardable.rb", "(stdlib)" },
    { "/usr/share/rvm/rubies/ruby-2.7.8/lib/ruby/2.7.0/logger.rb", "(stdlib)" },
    { "/opt/ruby/lib/ruby/3.4.0+1/erb.rb", "(stdlib)" },
    { "C:/Ruby31-x64/lib/ruby/3.1.0/time.rb", "(stdlib)" },
    /* gems: RubyGems, user installs, bundler, Debian, default gems */
    { "/usr/local/lib/ruby/gems/3.3.0/gems/rack-3.0.8/lib/rack/request.rb", "rack-3.0.8" },
    { "/home/dev/.gem/ruby/3.1.0/gems/nokogiri-1.15.4-x86_64-linux/lib/nokogiri.rb",
      "nokogiri-1.15.4-x86_64-linux" },
    { "/var/lib/gems/3.1.0/gems/puma-6.4.0/lib/puma/server.rb", "puma-6.4.0" },
    { "/app/vendor/bundle/ruby/3.2.0/gems/activesupport-7.1.2/lib/active_support/core_ext.rb",
      "activesupport-7.1.2" },
    { "/app/vendor/bundle/ruby/3.2.0/bundler/gems/rails-8d3c2a1f0b9e/actionpack/lib/x.rb",
      "rails-8d3c2a1f0b9e" },
    { "/usr/share/rubygems-integration/all/gems/rake-13.0.6/lib/rake/task.rb", "rake-13.0.6" },
    { "/usr/lib/x86_64-linux-gnu/rubygems-integration/3.1.0/gems/bigdecimal-3.1.1/lib/b.rb",
      "bigdecimal-3.1.1" },
    { "/usr/lib/ruby/gems/3.1.0/gems/debug-1.4.0/lib/debug/session.rb", "debug-1.4.0" },
    { "/home/dev/.rubies/ruby-3.2.2/lib/ruby/gems/3.2.0/gems/json-2.6.3/lib/json.rb",
      "json-2.6.3" },
    { "/usr/share/rubygems-integration/all/gems/tzinfo-2.0.5/lib/tzinfo.rb", "tzinfo-2.0.5" },
    /* Debian's packaged libraries */
    { "/usr/lib/ruby/vendor_ruby/rubygems/specification.rb", "rubygems" },
    { "/usr/lib/ruby/vendor_ruby/rubygems.rb", "rubygems" },
    { "/usr/lib/ruby/vendor_ruby/active_support/core_ext/object.rb", "active_support" },
    { "/usr/lib/ruby/vendor_ruby/3.1.0/concurrent/map.rb", "concurrent" },
    { "/usr/local/lib/site_ruby/3.1.0/mylib/thing.rb", "mylib" },
    /* the application: anything else */
    { "/app/app/models/user.rb", "(app)" },
    { "app/controllers/posts_controller.rb", "(app)" },
    { "/work/shared/corpus/gen_leak.rb", "(app)" },
    { "(eval)", "(app)" },
    { "/srv/app/lib/gems/loader.rb", "(app)" },        /* a "gems" folder of the app */
    { "/srv/app/gems/my-thing/x.rb", "(app)" },        /* no version after the dash */
    { "/srv/app/lib/ruby/helpers.rb", "(app)" },       /* "ruby" without a version */
    { "/home/dev/ruby/3.1.0/notes.rb", "(app)" },      /* ruby/VERSION not below lib */
    { "script.rb", "(app)" },
};

static void
test_gem_layouts(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof(gems) / sizeof(gems[0]); i++) {
        const char *g;
        size_t n;
        hscope__gem_of(gems[i].file, &g, &n);
        if (n != strlen(gems[i].gem) || memcmp(g, gems[i].gem, n) != 0) {
            fprintf(stderr, "gem of %s: got \"%.*s\", want \"%s\"\n", gems[i].file, (int)n, g,
                    gems[i].gem);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

static const struct {
    const char *file, *method;
    int dumper;
} dumpers[] = {
    { "/usr/lib/ruby/3.1.0/objspace.rb", "dump_all", 1 },
    { "/usr/lib/ruby/3.1.0/objspace.rb", "_dump_all", 1 },
    { "/usr/local/lib/ruby/3.3.0/objspace.rb", NULL, 1 },
    { "/app/script.rb", "dump_all", 1 },     /* Ruby < 3.0: a C method */
    { "/gems/heapscope-0.1.0/lib/heapscope/snapshot.rb", "capture", 1 },
    { "/gems/heapscope-0.1.0/lib/heapscope/snapshot.rb", "dump", 1 },
    { "/src/heapscope/bindings/ruby/lib/heapscope/auto.rb", "write_dump", 1 },
    { "/var/lib/gems/3.1.0/gems/libheapscope-0.2.0/lib/heapscope/fork.rb", "thread_roots", 1 },
    { "/app/lib/serializer.rb", "dump", 0 },  /* Marshal.dump, JSON.dump... */
    { "/app/lib/heapscope.rb", "snapshot", 0 },
    { "/app/lib/my_objspace.rb", "dump_all_users", 0 },
    { NULL, "dump", 0 },
    { NULL, NULL, 0 },
};

static void
test_dumper_sites(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(dumpers) / sizeof(dumpers[0]); i++) {
        int got = hscope__is_dumper(dumpers[i].file, dumpers[i].method);
        if (got != dumpers[i].dumper)
            fprintf(stderr, "dumper(%s, %s): got %d\n", dumpers[i].file ? dumpers[i].file : "NULL",
                    dumpers[i].method ? dumpers[i].method : "NULL", got);
        assert_int_equal(got, dumpers[i].dumper);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gem_layouts),
        cmocka_unit_test(test_dumper_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
