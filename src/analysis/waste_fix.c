/*
 * waste_fix.c - the fix of each place to change, decided from what the
 * dump says there, so that the advice works where it is given:
 *  - where the objects come from, by the rule of the tally's "gem" key
 *    (origin.c): no allocation info, Ruby's own code (<internal:...>), its
 *    standard library, a gem, or the application.  Code the application
 *    does not own gets whose code it is, not a change to make there.
 *  - for duplicate strings of the application, what the copies are: a
 *    dump cannot tell a literal from a string built at run time ("x".dup,
 *    interpolation), and # frozen_string_literal: true only helps the
 *    literals, -str (String#-@) or a cache helps both.  Frozen copies are
 *    no literals.  Ruby 3.4+ marks the strings of its literals "chilled"
 *    (unless the file says # frozen_string_literal: false): in a dump that
 *    has chilled strings, copies all chilled are literals and copies none
 *    chilled are not.
 */
#include <stdio.h>
#include <string.h>

#include "../core/intern.h"
#include "origin.h"
#include "waste.h"

enum { SITE_UNTRACED, SITE_RUBY, SITE_STDLIB, SITE_GEM, SITE_APP };

/* The origin of a gem key ("(none)", "(ruby)", "(stdlib)", "(app)", or a
 * gem's name). */
static int
origin_of(const char *g, size_t n)
{
    static const char *const names[] = { "(none)", "(ruby)", "(stdlib)" };
    for (int i = 0; i < 3; i++)
        if (n == strlen(names[i]) && memcmp(g, names[i], n) == 0)
            return i;
    return n == 5 && memcmp(g, "(app)", 5) == 0 ? SITE_APP : SITE_GEM;
}

/* The origin of a row's key ("file:line" or a gem key); a gem's key in
 * *gem (not NUL-terminated), the file in *file. */
static int
site_of(const hscope_waste_t *w, const char *key, char *file, size_t fcap, const char **gem,
        size_t *gn)
{
    *file = 0;
    if (w->by == HSCOPE_WASTE_BY_GEM) {
        *gem = key;
        *gn = strlen(key);
        return origin_of(key, *gn);
    }
    if (strcmp(key, "(none):0") == 0)
        return SITE_UNTRACED;
    const char *colon = strrchr(key, ':');
    size_t n = colon ? (size_t)(colon - key) : strlen(key);
    if (n >= fcap)
        n = fcap - 1;
    memcpy(file, key, n);
    file[n] = 0;
    hscope__gem_of(file, gem, gn);
    int o = origin_of(*gem, *gn);
    return o == SITE_UNTRACED ? SITE_APP : o; /* a file named "(none)" */
}

/* A gem's name without its version: NAME-VERSION, NAME-SHA. */
static size_t
gem_name_len(const char *g, size_t n)
{
    for (size_t i = 1; i + 1 < n; i++)
        if (g[i] == '-' && g[i + 1] >= '0' && g[i + 1] <= '9')
            return i;
    size_t last = 0;
    for (size_t i = 1; i < n; i++)
        if (g[i] == '-')
            last = i;
    return last && n - last > 7 ? last : n;
}

/* The fix of a duplicate row of the application's code. */
static int
duplicate_fix(const hscope_waste_t *w, const hscope__wrow *r, char *b, size_t n)
{
    if (r->copies && r->frozen == r->copies) {
        snprintf(b, n, "the copies are frozen but not deduplicated: intern them with -str "
                       "(String#-@) where they are made, or reuse one constant");
        return HSCOPE_WASTE_FIX_INTERN;
    }
    if (w->chilled && r->copies && r->chilled == r->copies) {
        snprintf(b, n, "the copies are string literals (Ruby marks them chilled): add "
                       "# frozen_string_literal: true at the top of the file and they become "
                       "one shared string");
        return HSCOPE_WASTE_FIX_LITERAL;
    }
    if (w->chilled && !r->chilled) {
        snprintf(b, n, "the copies are built at run time (\"x\".dup, interpolation, "
                       "String.new), not chilled literals, so # frozen_string_literal: true "
                       "would not help: intern them with -str (String#-@) where they are "
                       "made, or cache one copy");
        return HSCOPE_WASTE_FIX_INTERN;
    }
    if (w->chilled) {
        snprintf(b, n, "%llu of %llu copies are string literals (chilled): "
                       "# frozen_string_literal: true makes those one string; intern the "
                       "others with -str (String#-@) where they are made, or cache one copy",
                 (unsigned long long)r->chilled, (unsigned long long)r->copies);
        return HSCOPE_WASTE_FIX_INTERN_OR_LITERAL;
    }
    snprintf(b, n, "intern the copies with -str (String#-@) where they are made, or cache "
                   "one copy; only if the line is a plain string literal does "
                   "# frozen_string_literal: true help too (before Ruby 3.4 a dump cannot "
                   "tell a literal from a built string)");
    return HSCOPE_WASTE_FIX_INTERN_OR_LITERAL;
}

/* The fix of a row of the application's code. */
static int
app_fix(const hscope_waste_t *w, const hscope__wrow *r, char *b, size_t n)
{
    const char *s;
    int k = r->kind == HSCOPE_WASTE_EMPTY ? HSCOPE_WASTE_FIX_LAZY : HSCOPE_WASTE_FIX_RESIZE;
    if (r->kind == HSCOPE_WASTE_DUPLICATE)
        return duplicate_fix(w, r, b, n);
    if (r->kind == HSCOPE_WASTE_EMPTY)
        s = r->type == HSCOPE_TYPE_STRING
                ? "share one frozen empty string (-\"\", or a constant), or allocate lazily"
            : r->type == HSCOPE_TYPE_HASH
                ? "allocate lazily (@h ||= {}), or share one frozen empty Hash"
                : "allocate lazily (@a ||= []), or share one frozen empty Array";
    else
        s = r->type == HSCOPE_TYPE_STRING
                ? "the buffer is far larger than the content (String.new(capacity:) too "
                  "big, or a read buffer kept): size the capacity to the data, or keep a "
                  "right-sized copy"
            : r->type == HSCOPE_TYPE_HASH
                ? "the table stayed sized for entries since deleted: build a new Hash of "
                  "what remains instead of deleting from a big one"
                : "the buffer stayed sized for elements since removed (or was preallocated "
                  "too big): build the Array at its final size, or keep a fresh copy";
    snprintf(b, n, "%s", s);
    return k;
}

/* The fix of row r into b: its kind. */
static int
row_fix(const hscope_waste_t *w, const hscope__wrow *r, char *b, size_t n)
{
    const char *key = hscope__intern_str(&w->keys, r->key), *gem = "";
    char file[512];
    size_t gn = 0;
    switch (site_of(w, key ? key : "(none):0", file, sizeof(file), &gem, &gn)) {
    case SITE_UNTRACED:
        snprintf(b, n, "no allocation info: the objects were allocated before "
                       "ObjectSpace.trace_object_allocations_start (or without it), so the "
                       "dump cannot name the code; start tracing earlier, before the app "
                       "loads, to see where they come from");
        return HSCOPE_WASTE_FIX_UNTRACED;
    case SITE_RUBY:
        snprintf(b, n, "Ruby's own code (%s), not the app's: nothing to change in the app "
                       "here; the dump does not name the app's line that called it",
                 *file ? file : "<internal:...>");
        return HSCOPE_WASTE_FIX_RUBY;
    case SITE_STDLIB:
        snprintf(b, n, "Ruby's standard library's code, not the app's: nothing to change "
                       "there; cache the result where your code calls it");
        return HSCOPE_WASTE_FIX_STDLIB;
    case SITE_GEM: {
        size_t nl = gem_name_len(gem, gn);
        if (nl < gn)
            snprintf(b, n, "gem %.*s's code (%.*s), not the app's: report it upstream, or "
                           "cache the result where your code calls it",
                     (int)nl, gem, (int)gn, gem);
        else
            snprintf(b, n, "gem %.*s's code, not the app's: report it upstream, or cache the "
                           "result where your code calls it", (int)gn, gem);
        return HSCOPE_WASTE_FIX_GEM;
    }
    default:
        return app_fix(w, r, b, n);
    }
}

hscope_status
hscope__waste_fixes(hscope_waste_t *w, hscope_error *err)
{
    hscope_status st = hscope__intern_init(&w->fixes, &w->mem, err);
    for (size_t i = 0; i < w->nrows && st == HSCOPE_OK; i++) {
        char b[1024];
        hscope__wrow *r = &w->rows[i];
        r->fix_kind = row_fix(w, r, b, sizeof(b));
        st = hscope__intern_add(&w->fixes, b, strlen(b), &r->fix, err);
    }
    return st;
}

const char *
hscope__waste_fix_kind_name(int k)
{
    static const char *const names[] = { "untraced", "ruby", "stdlib", "gem", "literal",
                                         "intern", "intern_or_literal", "lazy", "resize" };
    return k >= 1 && k <= 9 ? names[k - 1] : "unknown";
}
