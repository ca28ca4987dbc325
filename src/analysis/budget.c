/*
 * budget.c - the budget file (docs/BUDGET.md): a small subset of TOML,
 * read by our own code line by line.
 *
 *   # comment
 *   [total]                     sections: total, leaked, class.NAME,
 *   memsize = "200 MB"          gem.NAME, site."FILE:LINE:CLASS",
 *                               leaked.class.NAME, leaked.site."F:L:C"
 *   objects = 1_500_000         keys: objects, memsize, retained
 *
 * A name is a bare key (A-Z a-z 0-9 _ -), a basic string ("..." with the
 * escapes \" \\ \t \n \r) or a literal string ('...', no escapes).  A value
 * is a whole number (underscores between digits) or, for memsize and
 * retained, a size string: a number with an optional fraction and unit
 * B, KB, MB, GB, TB (1024-based, as heapscope prints sizes; KiB... are the
 * same).  Every error says where: "NAME:LINE: KEY: what is wrong".
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../core/core.h"
#include "budget.h"

/* Which keys a scope has, as metric bits. */
#define M_(m) (1u << (m))
#define ALL_METRICS (M_(HSCOPE_BUDGET_OBJECTS) | M_(HSCOPE_BUDGET_MEMSIZE) | \
                     M_(HSCOPE_BUDGET_RETAINED))

static const struct scope_def {
    const char *name;
    int32_t scope;
    int named;          /* takes a group name: [class."String"] */
    uint32_t metrics;
    const char *keys;   /* for messages */
    const char *tally_key;
} scopes[] = {
    { "total", HSCOPE_BUDGET_TOTAL, 0, ALL_METRICS, "objects, memsize, retained", NULL },
    { "leaked", HSCOPE_BUDGET_LEAKED, 0, M_(HSCOPE_BUDGET_OBJECTS) | M_(HSCOPE_BUDGET_MEMSIZE),
      "objects, memsize", NULL },
    { "class", HSCOPE_BUDGET_CLASS, 1, ALL_METRICS, "objects, memsize, retained", "class" },
    { "gem", HSCOPE_BUDGET_GEM, 1, ALL_METRICS, "objects, memsize, retained", "gem" },
    { "site", HSCOPE_BUDGET_SITE, 1, ALL_METRICS, "objects, memsize, retained",
      "file:line:class" },
    /* [leaked.class."NAME"], [leaked.site."FILE:LINE:CLASS"]: the leaked
     * objects of one group (the 3-dump diff's tally) */
    { "leaked.class", HSCOPE_BUDGET_LEAKED_CLASS, 1,
      M_(HSCOPE_BUDGET_OBJECTS) | M_(HSCOPE_BUDGET_MEMSIZE), "objects, memsize", "class" },
    { "leaked.site", HSCOPE_BUDGET_LEAKED_SITE, 1,
      M_(HSCOPE_BUDGET_OBJECTS) | M_(HSCOPE_BUDGET_MEMSIZE), "objects, memsize",
      "file:line:class" },
};
#define NSCOPES (sizeof(scopes) / sizeof(scopes[0]))

static const char *const metric_names[] = { NULL, "objects", "memsize", "retained" };

const char *
hscope__budget_scope_name(int32_t scope)
{
    for (size_t i = 0; i < NSCOPES; i++)
        if (scopes[i].scope == scope)
            return scopes[i].name;
    return "?";
}

const char *
hscope__budget_metric_name(int32_t metric)
{
    return metric >= HSCOPE_BUDGET_OBJECTS && metric <= HSCOPE_BUDGET_RETAINED
               ? metric_names[metric] : "?";
}

const char *
hscope__budget_scope_key(int32_t scope)
{
    for (size_t i = 0; i < NSCOPES; i++)
        if (scopes[i].scope == scope)
            return scopes[i].tally_key;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* The parser's state and its one error helper                         */
/* ------------------------------------------------------------------ */

typedef struct section {
    const struct scope_def *def;  /* NULL: none yet */
    char *key;                    /* the group name, or NULL */
    uint64_t line;
    uint64_t seen[4];             /* line of each metric given, 0: not yet */
} section;

typedef struct parser {
    hscope_budget_t *b;
    hscope_error *err;
    const char *p, *end;          /* the rest of the current line */
    uint64_t line;
    section cur;
    section *secs;                /* sections so far (duplicates) */
    size_t nsecs, secs_cap;
    char buf[512];                /* a name or string value being read */
    size_t blen;
} parser;

/* "NAME:LINE: WHAT: message" */
static hscope_status HS_PRINTF(3, 4)
bad(parser *ps, const char *what, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return hscope__fail_at(ps->err, HSCOPE_ERR_PARSE, ps->line, 0, "%s:%llu: %s: %s",
                           ps->b->name, (unsigned long long)ps->line, what, msg);
}

static void
skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
        ps->p++;
}

/* Only whitespace and a comment may be left on the line. */
static hscope_status
end_of_line(parser *ps, const char *what)
{
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p != '#')
        return bad(ps, what, "unexpected '%.*s' after the value",
                   (int)(ps->end - ps->p > 20 ? 20 : ps->end - ps->p), ps->p);
    return HSCOPE_OK;
}

static int
is_bare(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
}

static hscope_status
put(parser *ps, char c, const char *what)
{
    if (ps->blen + 1 >= sizeof(ps->buf))
        return bad(ps, what, "a name or string longer than %zu bytes", sizeof(ps->buf) - 1);
    ps->buf[ps->blen++] = c;
    ps->buf[ps->blen] = '\0';
    return HSCOPE_OK;
}

static hscope_status
escape(parser *ps, const char *what)
{
    if (++ps->p >= ps->end)
        return bad(ps, what, "a string is not closed");
    switch (*ps->p) {
    case '"': return put(ps, '"', what);
    case '\\': return put(ps, '\\', what);
    case 't': return put(ps, '\t', what);
    case 'n': return put(ps, '\n', what);
    case 'r': return put(ps, '\r', what);
    default:
        return bad(ps, what, "escape '\\%c' is not supported (\\\" \\\\ \\t \\n \\r are; "
                   "'...' takes none)", *ps->p);
    }
}

/* A quoted string at ps->p ('"' or '\'') into ps->buf. */
static hscope_status
quoted(parser *ps, const char *what)
{
    char q = *ps->p++;
    ps->blen = 0;
    ps->buf[0] = '\0';
    for (; ps->p < ps->end; ps->p++) {
        unsigned char c = (unsigned char)*ps->p;
        hscope_status st;
        if (c == (unsigned char)q) {
            ps->p++;
            return HSCOPE_OK;
        }
        if (c < 0x20 && c != '\t')
            return bad(ps, what, "a control character (0x%02x) in a string", c);
        st = (c == '\\' && q == '"') ? escape(ps, what) : put(ps, (char)c, what);
        if (st != HSCOPE_OK)
            return st;
    }
    return bad(ps, what, "a string is not closed on its line");
}

/* A bare or quoted name into ps->buf. */
static hscope_status
name(parser *ps, const char *what)
{
    skip_ws(ps);
    if (ps->p < ps->end && (*ps->p == '"' || *ps->p == '\''))
        return quoted(ps, what);
    ps->blen = 0;
    ps->buf[0] = '\0';
    while (ps->p < ps->end && is_bare(*ps->p)) {
        hscope_status st = put(ps, *ps->p++, what);
        if (st != HSCOPE_OK)
            return st;
    }
    if (!ps->blen)
        return bad(ps, what, "expected a name");
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* Sections                                                            */
/* ------------------------------------------------------------------ */

/* FILE:LINE:CLASS: somewhere a ":DIGITS:" (files and classes may hold ':'). */
static int
site_like(const char *s)
{
    for (const char *c = strchr(s, ':'); c; c = strchr(c + 1, ':')) {
        const char *d = c + 1;
        while (*d >= '0' && *d <= '9')
            d++;
        if (d > c + 1 && *d == ':' && c > s && d[1])
            return 1;
    }
    return 0;
}

static hscope_status
new_section(parser *ps, const struct scope_def *def, const char *key, const char *what)
{
    for (size_t i = 0; i < ps->nsecs; i++) {
        const section *s = &ps->secs[i];
        if (s->def == def && ((!s->key && !key) || (s->key && key && strcmp(s->key, key) == 0)))
            return bad(ps, what, "this section is already defined at line %llu",
                       (unsigned long long)s->line);
    }
    hscope_status st = hscope__grow(&ps->b->mem, (void **)&ps->secs, &ps->secs_cap,
                                    ps->nsecs + 1, sizeof(section), ps->err);
    if (st != HSCOPE_OK)
        return st;
    section *s = &ps->secs[ps->nsecs];
    memset(s, 0, sizeof(*s));
    s->def = def;
    s->line = ps->line;
    if (key && !(s->key = hscope__strndup(&ps->b->mem, key, strlen(key))))
        return hscope__nomem(ps->err, strlen(key) + 1);
    ps->nsecs++;
    ps->cur = *s;
    return HSCOPE_OK;
}

static hscope_status
header(parser *ps)
{
    char what[160], first[64];
    int n = (int)(ps->end - ps->p);
    const char *close = memchr(ps->p, ']', (size_t)n);
    snprintf(what, sizeof(what), "%.*s", close ? (int)(close - ps->p + 1) : (n > 60 ? 60 : n),
             ps->p);
    ps->p++;
    if (ps->p < ps->end && *ps->p == '[')
        return bad(ps, what, "arrays of tables ([[...]]) are not part of a budget");
    hscope_status st = name(ps, what);
    if (st != HSCOPE_OK)
        return st;
    snprintf(first, sizeof(first), "%s", ps->buf);
    skip_ws(ps);
    int has_key = ps->p < ps->end && *ps->p == '.';
    if (has_key) {
        ps->p++;
        if ((st = name(ps, what)) != HSCOPE_OK)
            return st;
        skip_ws(ps);
        /* leaked.class."NAME", leaked.site."FILE:LINE:CLASS" */
        if (strcmp(first, "leaked") == 0 && ps->p < ps->end && *ps->p == '.' &&
            (strcmp(ps->buf, "class") == 0 || strcmp(ps->buf, "site") == 0)) {
            snprintf(first, sizeof(first), "leaked.%s", ps->buf);
            ps->p++;
            if ((st = name(ps, what)) != HSCOPE_OK)
                return st;
            skip_ws(ps);
        }
    }
    const struct scope_def *def = NULL;
    for (size_t i = 0; i < NSCOPES; i++)
        if (strcmp(scopes[i].name, first) == 0)
            def = &scopes[i];
    if (!def)
        return bad(ps, what, "unknown section (total, leaked, class.\"NAME\", gem.\"NAME\", "
                   "site.\"FILE:LINE:CLASS\", leaked.class.\"NAME\", "
                   "leaked.site.\"FILE:LINE:CLASS\")");
    if (ps->p >= ps->end || *ps->p != ']')
        return bad(ps, what, "expected ']' (a section is [NAME] or [NAME.\"GROUP\"])");
    ps->p++;
    int site = def->scope == HSCOPE_BUDGET_SITE || def->scope == HSCOPE_BUDGET_LEAKED_SITE;
    if (def->named && !has_key)
        return bad(ps, what, "needs a name, e.g. [%s.\"%s\"]", def->name,
                   site ? "app/models/user.rb:12:String"
                   : def->scope == HSCOPE_BUDGET_GEM ? "activerecord" : "String");
    if (!def->named && has_key)
        return bad(ps, what, def->scope == HSCOPE_BUDGET_LEAKED
                                 ? "[%s] takes no name (per group: [leaked.class.\"NAME\"], "
                                   "[leaked.site.\"FILE:LINE:CLASS\"])"
                                 : "[%s] takes no name", def->name);
    if (site && !site_like(ps->buf))
        return bad(ps, what, "a site is \"FILE:LINE:CLASS\", e.g. "
                   "\"app/models/user.rb:12:String\"");
    if (has_key && !ps->blen)
        return bad(ps, what, "the name is empty");
    if ((st = end_of_line(ps, what)) != HSCOPE_OK)
        return st;
    return new_section(ps, def, has_key ? ps->buf : NULL, what);
}

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

/* Digits with single underscores between them (TOML) at *s: the value,
 * and the number of digits (0: none).  -1 on overflow or a misplaced '_'. */
static int
digits(const char **s, const char *end, int underscores, uint64_t *v, int *nd)
{
    const char *p = *s;
    *v = 0;
    *nd = 0;
    while (p < end && ((*p >= '0' && *p <= '9') || (underscores && *p == '_'))) {
        if (*p == '_') {
            if (!*nd || p + 1 >= end || p[1] < '0' || p[1] > '9')
                return -1;
            p++;
            continue;
        }
        unsigned d = (unsigned)(*p - '0');
        if (*v > (UINT64_MAX - d) / 10)
            return -1;
        *v = *v * 10 + d;
        (*nd)++;
        p++;
    }
    *s = p;
    return 0;
}

static int
ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a | 0x20) != (*b | 0x20))
            return 0;
    return *a == *b;
}

/* The multiplier of a unit ("" is bytes); 0 when not a unit. */
static uint64_t
unit_of(const char *u)
{
    static const char *const names[][2] = {
        { "B", "" }, { "KB", "KiB" }, { "MB", "MiB" }, { "GB", "GiB" }, { "TB", "TiB" },
    };
    for (int i = 0; i < 5; i++)
        if (ieq(u, names[i][0]) || (i && ieq(u, names[i][1])) || (!i && !*u))
            return (uint64_t)1 << (10 * i);
    return 0;
}

/* "1.5 GB", "512 KB", "100": bytes.  The fraction is exact, then rounded
 * down to a whole byte. */
static hscope_status
size_string(parser *ps, const char *s, const char *what, uint64_t *out)
{
    const char *p = s, *end = s + strlen(s);
    uint64_t whole, frac = 0, scale = 1;
    int nd, nf = 0;
    while (p < end && *p == ' ')
        p++;
    if (*p == '-')
        return bad(ps, what, "must not be negative");
    if (digits(&p, end, 1, &whole, &nd) < 0 || !nd)
        return bad(ps, what, "expected a size such as \"200 MB\" or \"1.5 GB\", not \"%s\"", s);
    if (p < end && *p == '.') {
        p++;
        while (p < end && *p >= '0' && *p <= '9') {
            if (nf < 9) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                scale *= 10;
            }
            nf++;
            p++;
        }
        if (!nf)
            return bad(ps, what, "expected digits after the '.' in \"%s\"", s);
    }
    while (p < end && *p == ' ')
        p++;
    const char *u = p;
    while (p < end && *p != ' ')
        p++;
    char unit[8];
    size_t ul = (size_t)(p - u);
    while (p < end && *p == ' ')
        p++;
    uint64_t mult = 0;
    if (ul < sizeof(unit) && p == end) {
        memcpy(unit, u, ul);
        unit[ul] = '\0';
        mult = unit_of(unit);
    }
    if (!mult)
        return bad(ps, what, "unknown unit in \"%s\" (B, KB, MB, GB, TB: 1024-based)", s);
    if (whole > UINT64_MAX / mult)
        return bad(ps, what, "\"%s\" is too large (at most 16 EB)", s);
    /* frac / scale of the unit, rounded down: frac * mult would overflow
     * (10^9 x 2^40), so divide bit by bit (mult is a power of two) */
    uint64_t part = 0, r = frac;
    for (uint64_t bit = mult; bit > 1; bit >>= 1) {
        r <<= 1;
        part <<= 1;
        if (r >= scale) {
            r -= scale;
            part |= 1;
        }
    }
    if (whole * mult > UINT64_MAX - part)
        return bad(ps, what, "\"%s\" is too large (at most 16 EB)", s);
    *out = whole * mult + part;
    return HSCOPE_OK;
}

/* The value of KEY (metric m) at ps->p. */
static hscope_status
value(parser *ps, int32_t m, const char *what, uint64_t *out)
{
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p == '#')
        return bad(ps, what, "no value after '='");
    char c = *ps->p;
    hscope_status st;
    if (c == '"' || c == '\'') {
        if (m == HSCOPE_BUDGET_OBJECTS)
            return bad(ps, what, "expected a whole number (e.g. 1_500_000), not a string");
        if ((st = quoted(ps, what)) != HSCOPE_OK ||
            (st = size_string(ps, ps->buf, what, out)) != HSCOPE_OK)
            return st;
        return end_of_line(ps, what);
    }
    if (c == '-')
        return bad(ps, what, "must not be negative");
    if (c == '+')
        ps->p++;
    int nd;
    const char *start = ps->p;
    if (digits(&ps->p, ps->end, 1, out, &nd) < 0)
        return bad(ps, what, "not a whole number, or too large (at most 18446744073709551615)");
    if (!nd)
        return bad(ps, what, "expected a %s, not '%.*s'",
                   m == HSCOPE_BUDGET_OBJECTS ? "whole number" : "size (\"200 MB\") or bytes",
                   (int)(ps->end - start > 20 ? 20 : ps->end - start), start);
    if (nd > 1 && *start == '0')
        return bad(ps, what, "a number does not start with 0");
    if (ps->p < ps->end && (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E'))
        return bad(ps, what, "expected a whole number%s",
                   m == HSCOPE_BUDGET_OBJECTS ? "" : " of bytes, or a size string (\"1.5 MB\")");
    return end_of_line(ps, what);
}

static hscope_status
add_rule(parser *ps, int32_t m, uint64_t limit)
{
    hscope_budget_t *b = ps->b;
    hscope_status st = hscope__grow(&b->mem, (void **)&b->rules, &b->cap, b->n + 1,
                                    sizeof(hscope__brule), ps->err);
    if (st != HSCOPE_OK)
        return st;
    hscope__brule *r = &b->rules[b->n];
    memset(r, 0, sizeof(*r));
    r->scope = ps->cur.def->scope;
    r->metric = m;
    r->line = ps->line;
    r->limit = limit;
    if (ps->cur.key && !(r->key = hscope__strndup(&b->mem, ps->cur.key, strlen(ps->cur.key))))
        return hscope__nomem(ps->err, strlen(ps->cur.key) + 1);
    if ((r->scope == HSCOPE_BUDGET_LEAKED || r->scope == HSCOPE_BUDGET_LEAKED_CLASS ||
         r->scope == HSCOPE_BUDGET_LEAKED_SITE) && !b->leaked_line)
        b->leaked_line = ps->cur.line;
    b->n++;
    return HSCOPE_OK;
}

static hscope_status
assignment(parser *ps)
{
    char what[128];
    hscope_status st = name(ps, "key");
    if (st != HSCOPE_OK)
        return st;
    snprintf(what, sizeof(what), "%.100s", ps->buf);
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '.')
        return bad(ps, what, "dotted keys are not part of a budget: use a section");
    if (ps->p >= ps->end || *ps->p != '=')
        return bad(ps, what, "expected '=' after the key");
    ps->p++;
    const struct scope_def *def = ps->cur.def;
    if (!def)
        return bad(ps, what, "a key outside a section: put it under [total], [leaked], "
                   "[class.\"NAME\"], [gem.\"NAME\"] or [site.\"FILE:LINE:CLASS\"]");
    int32_t m = 0;
    for (int32_t i = HSCOPE_BUDGET_OBJECTS; i <= HSCOPE_BUDGET_RETAINED; i++)
        if (strcmp(what, metric_names[i]) == 0 && (def->metrics & M_(i)))
            m = i;
    if (!m)
        return bad(ps, what, "unknown key in [%s] (it has %s)", def->name, def->keys);
    section *s = &ps->secs[ps->nsecs - 1];
    if (s->seen[m])
        return bad(ps, what, "given twice in this section (first at line %llu)",
                   (unsigned long long)s->seen[m]);
    s->seen[m] = ps->line;
    uint64_t limit;
    if ((st = value(ps, m, what, &limit)) != HSCOPE_OK)
        return st;
    return add_rule(ps, m, limit);
}

static hscope_status
one_line(parser *ps)
{
    for (const char *c = ps->p; c < ps->end; c++)
        if (*c == '\0')
            return bad(ps, "line", "a NUL byte: this is not a text file");
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p == '#')
        return HSCOPE_OK;
    if (*ps->p == '[')
        return header(ps);
    return assignment(ps);
}

static hscope_status
parse_all(parser *ps, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* a byte order mark */
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        ps->line++;
        ps->p = p;
        ps->end = le > p && le[-1] == '\r' ? le - 1 : le;
        hscope_status st = one_line(ps);
        if (st != HSCOPE_OK)
            return st;
        p = nl ? nl + 1 : end;
    }
    if (!ps->b->n)
        return hscope__fail(ps->err, HSCOPE_ERR_PARSE, "%s: no limits: a budget needs at least "
                            "one KEY = VALUE under a section (docs/BUDGET.md)", ps->b->name);
    return HSCOPE_OK;
}

void
hscope__budget_free(hscope_budget_t *b)
{
    if (!b)
        return;
    hscope__mem m = b->mem;
    for (size_t i = 0; i < b->n; i++)
        hscope__free(&m, b->rules[i].key);
    hscope__free(&m, b->rules);
    hscope__free(&m, b->name);
    hscope__free(&m, b);
}

hscope_status
hscope__budget_parse(hscope_budget_t **out, const char *text, size_t len, const char *nm,
                     hscope_error *err)
{
    hscope__mem mem;
    hscope__mem_init(&mem, NULL, 0);
    hscope_budget_t *b = hscope__calloc(&mem, 1, sizeof(*b));
    if (!b)
        return hscope__nomem(err, sizeof(*b));
    b->mem = mem;
    if (!nm)
        nm = "budget";
    if (!(b->name = hscope__strndup(&b->mem, nm, strlen(nm)))) {
        hscope__budget_free(b);
        return hscope__nomem(err, strlen(nm) + 1);
    }
    parser ps;
    memset(&ps, 0, sizeof(ps));
    ps.b = b;
    ps.err = err;
    hscope_status st = parse_all(&ps, text, len);
    for (size_t i = 0; i < ps.nsecs; i++)
        hscope__free(&b->mem, ps.secs[i].key);
    hscope__free(&b->mem, ps.secs);
    if (st != HSCOPE_OK) {
        hscope__budget_free(b);
        return st;
    }
    *out = b;
    return HSCOPE_OK;
}
