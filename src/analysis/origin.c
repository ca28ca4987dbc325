/*
 * origin.c - where an allocation comes from, read off its file path and
 * method: the "gem" tally key, and the dumper's own allocations that the
 * diff, the tallies and the timelines leave out.  One rule each, shared by
 * every analysis (loaded heaps and streamed folds alike).
 */
#include <string.h>

#include "../core/core.h"
#include "../core/intern.h"
#include "origin.h"

/* A path component [p, e): digits and dots with a dot, as in Ruby's
 * library version directories ("3.1.0", "2.7.0", "3.5.0+1"). */
static int
is_version(const char *p, const char *e)
{
    int dot = 0;
    if (p == e || *p < '0' || *p > '9')
        return 0;
    for (; p < e; p++) {
        if (*p == '.')
            dot = 1;
        else if ((*p < '0' || *p > '9') && *p != '+')
            return 0;
    }
    return dot;
}

/* End of the component starting at p ('/' or the end of the string). */
static const char *
comp_end(const char *p)
{
    const char *e = strchr(p, '/');
    return e ? e : p + strlen(p);
}

static int
comp_is(const char *p, const char *e, const char *name)
{
    size_t n = strlen(name);
    return (size_t)(e - p) == n && memcmp(p, name, n) == 0;
}

/* NAME-VERSION (gems/rack-2.2.4, gems/nokogiri-1.15.4-x86_64-linux) or
 * NAME-SHA (bundler/gems/rails-8d3c2a1f0b9e): a dash after the first byte
 * followed by a digit, or a last dash followed by 7 or more hex digits. */
static int
is_gem_dir(const char *p, const char *e)
{
    const char *dash = NULL;
    for (const char *q = p + 1; q + 1 < e; q++) {
        if (*q != '-')
            continue;
        if (q[1] >= '0' && q[1] <= '9')
            return 1;
        dash = q;
    }
    if (!dash || e - (dash + 1) < 7)
        return 0;
    for (const char *v = dash + 1; v < e; v++)
        if (!((*v >= '0' && *v <= '9') || (*v >= 'a' && *v <= 'f')))
            return 0;
    return 1;
}

/* The library below vendor_ruby/ or site_ruby/ (q: what follows it): an
 * optional version directory, then the first component, a file's name
 * without its extension. */
static void
vendor_lib(const char *q, const char **out, const char **out_end)
{
    const char *qe = comp_end(q);
    if (is_version(q, qe) && *qe) {
        q = qe + 1;
        qe = comp_end(q);
    }
    if (qe == q)
        return;
    if (!*qe) {
        const char *dot = memchr(q, '.', (size_t)(qe - q));
        if (dot && dot > q)
            qe = dot;
    }
    *out = q;
    *out_end = qe;
}

static void
literal(const char *s, const char **out, size_t *n)
{
    *out = s;
    *n = strlen(s);
}

/*
 * The gem of an allocation file (docs: tally --by gem):
 *  - "<internal:...>" (Ruby's own code written in Ruby)          -> (ruby)
 *  - a directory NAME-VERSION (or NAME-SHA) right below a "gems" directory,
 *    the last one in the path: RubyGems (…/gems/3.1.0/gems/rack-2.2.4/),
 *    bundler (vendor/bundle/ruby/3.1.0/gems/…, bundler/gems/NAME-SHA/),
 *    Debian (/usr/share/rubygems-integration/all/gems/…), default gems
 *                                                                -> NAME-VERSION
 *  - below vendor_ruby or site_ruby (Debian's packaged libraries), after
 *    an optional version directory: the first component, without .rb/.so
 *                                                                -> NAME
 *  - Ruby's own library directories: a "ruby" component followed by a
 *    version directory, below "lib" or below lib/ARCH
 *    (/usr/lib/ruby/3.1.0/, /usr/lib/x86_64-linux-gnu/ruby/3.1.0/,
 *    ~/.rubies/ruby-3.2.2/lib/ruby/3.2.0/)                        -> (stdlib)
 *  - anything else (the application's own files, eval strings)   -> (app)
 * Objects without a file are "(none)" (the callers' rule).
 */
void
hscope__gem_of(const char *f, const char **out, size_t *n)
{
    if (strncmp(f, "<internal:", 10) == 0) {
        literal("(ruby)", out, n);
        return;
    }
    /* components, walked once; pc[0] is the previous one, pc[1] the one
     * before, pc[2] the one before that */
    const char *gem = NULL, *gem_end = NULL, *vend = NULL, *vend_end = NULL;
    int stdlib = 0;
    const char *pc[3] = { NULL, NULL, NULL }, *pe[3] = { NULL, NULL, NULL };
    for (const char *p = f; *p;) {
        const char *e = comp_end(p);
        int dir = *e == '/';
        if (dir && pc[0] && comp_is(pc[0], pe[0], "gems") && is_gem_dir(p, e)) {
            gem = p;
            gem_end = e;
        }
        if (!vend && dir && (comp_is(p, e, "vendor_ruby") || comp_is(p, e, "site_ruby")))
            vendor_lib(e + 1, &vend, &vend_end);
        if (dir && pc[0] && comp_is(pc[0], pe[0], "ruby") && is_version(p, e) &&
            ((pc[1] && comp_is(pc[1], pe[1], "lib")) || (pc[2] && comp_is(pc[2], pe[2], "lib"))))
            stdlib = 1;
        for (int k = 2; k > 0; k--) {
            pc[k] = pc[k - 1];
            pe[k] = pe[k - 1];
        }
        pc[0] = p;
        pe[0] = e;
        p = dir ? e + 1 : e;
    }
    if (gem) {
        *out = gem;
        *n = (size_t)(gem_end - gem);
    } else if (vend) {
        *out = vend;
        *n = (size_t)(vend_end - vend);
    } else if (stdlib) {
        literal("(stdlib)", out, n);
    } else {
        literal("(app)", out, n);
    }
}

/*
 * The dumper's own allocations, left out of diffs, tallies and timelines
 * unless asked for: objects allocated by ObjectSpace.dump_all (method
 * dump_all, or any method of objspace.rb, Ruby's ext/objspace/lib), and by
 * the heapscope gem's snapshot code (lib/heapscope/snapshot.rb,
 * lib/heapscope/fork.rb and lib/heapscope/auto.rb: Heapscope.snapshot,
 * Heapscope.dump, fork snapshots, the heapscope/auto signal handler).  Not a bare method name "dump":
 * Marshal.dump, JSON.dump and the application's own dump methods allocate
 * real data.
 */
hscope_status
hscope__judge_site(hscope__mem *m, uint8_t **judged, size_t *cap, const hscope__intern *strings,
                   const uint32_t *site_file, const uint32_t *site_method, uint32_t site,
                   hscope_error *err)
{
    if (site >= *cap) {
        size_t old = *cap;
        hscope_status st = hscope__grow(m, (void **)judged, cap, (size_t)site + 1, 1, err);
        if (st != HSCOPE_OK)
            return st;
        memset(*judged + old, 0, *cap - old);
    }
    (*judged)[site] = site && hscope__is_dumper(hscope__intern_str(strings, site_file[site]),
                                                hscope__intern_str(strings, site_method[site]))
                          ? 2 : 1;
    return HSCOPE_OK;
}

int
hscope__is_dumper(const char *file, const char *method)
{
    if (method && strcmp(method, "dump_all") == 0)
        return 1;
    if (!file)
        return 0;
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    if (strcmp(base, "objspace.rb") == 0)
        return 1;
    static const char *const own[] = { "/heapscope/snapshot.rb", "/heapscope/fork.rb",
                                       "/heapscope/auto.rb" };
    size_t fl = strlen(file);
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        size_t ol = strlen(own[i]);
        if (fl >= ol && strcmp(file + fl - ol, own[i]) == 0)
            return 1;
    }
    return 0;
}
