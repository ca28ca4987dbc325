/*
 * parse.c - the record decoder: one dump line (a JSON object) into the
 * builder.
 *
 * One pass, key-driven, no allocation per line.  The tokenizer accepts
 * exactly the JSON that Python's json module accepts (so our counts agree
 * with the reference checker): any key order and whitespace, all escapes
 * including \uXXXX and surrogates, NaN/Infinity literals, duplicate keys
 * (the last wins), raw bytes >= 0x80 (no UTF-8 validation: Ruby writes
 * file and class names raw).  It rejects what makes a line invalid JSON:
 * raw control bytes in strings (Ruby's unescaped fields and the 3.0/3.1
 * NUL bug), bad escapes, bad numbers, trailing garbage.
 *
 * The hot path is the string scanner: 16 bytes at a time (SSE2) looking
 * for '"', '\\' or a control byte.  The line's own '\n' is a control byte,
 * so it stops every scan: no bounds checks are needed inside strings.
 */
#include "parse.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { OK = 0, SKIP = 1, FATAL = 2 };

/* Known keys.  K_IGNORED: documented keys we validate and do not store. */
enum key {
    K_UNKNOWN, K_IGNORED, K_ADDRESS, K_TYPE, K_CLASS, K_FROZEN, K_EMBEDDED,
    K_SHARED, K_FSTRING, K_BROKEN, K_CHILLED, K_SINGLETON, K_BYTESIZE,
    K_LENGTH, K_SIZE, K_VALUE, K_MEMSIZE, K_REFERENCES, K_FILE, K_LINE,
    K_METHOD, K_GENERATION, K_FLAGS, K_NAME, K_REAL_CLASS_NAME, K_IMEMO_TYPE,
    K_STRUCT, K_NODE_TYPE, K_ROOT, K_CAPACITY, K_SLOT_SIZE, K_OBJECT_ID,
    K_SHAREABLE
};

/* flag_of() for "object_id" (a value, not a bit) */
#define FLAG_OBJECT_ID (-2)

typedef struct slice {
    const uint8_t *p;
    uint32_t n;
    uint8_t esc; /* contains escapes: decode before use */
    uint8_t set;
} slice;

/*
 * One record as decoded.  lp_parse does not clear it whole (240 bytes on
 * every line): rec_reset clears the presence flags and the fields read
 * whether or not their key came on the line.  Every other field is written
 * together with its flag and read only under it.  A new field read without
 * such a flag belongs in the last group and in rec_reset.
 */
typedef struct rec {
    /* each valid only when its .set (p, n, esc are written with it) */
    slice type, name, real_name, imemo, strct, node, file, method, root,
        value;
    /* each valid only when its has_ flag is set */
    uint64_t addr, class_addr, line, gen, capacity, slot_size;
    /* reset for every line */
    uint64_t memsize, size;
    uint8_t has_addr, has_class, has_line, has_gen, has_capacity,
        has_slot_size;
    uint8_t rare; /* HSCOPE__RARE_* */
    uint16_t top_flags, gc_flags;
    uint32_t unknown_keys;
} rec;

static inline void
rec_reset(rec *r)
{
    r->type.set = r->name.set = r->real_name.set = r->imemo.set = 0;
    r->strct.set = r->node.set = r->file.set = r->method.set = 0;
    r->root.set = r->value.set = 0;
    r->memsize = r->size = 0;
    r->has_addr = r->has_class = r->has_line = r->has_gen = 0;
    r->has_capacity = r->has_slot_size = 0;
    r->rare = 0;
    r->top_flags = r->gc_flags = 0;
    r->unknown_keys = 0;
}

static inline int
FAIL(hscope__lp *lp, const uint8_t *at, int reason, const char *msg)
{
    lp->fail_at = at;
    lp->reason = reason;
    lp->why = msg;
    return SKIP;
}

/* ------------------------------------------------------------------ */
/* Lexical helpers                                                      */
/* ------------------------------------------------------------------ */

static inline const uint8_t *
skip_ws(const uint8_t *s)
{
    if (HS_LIKELY(*s > ' ')) /* the common case: no whitespace at all */
        return s;
    while (*s == ' ' || *s == '\t' || *s == '\r')
        s++;
    return s;
}

/* First byte at or after s that is '"', '\\' or < 0x20. */
static inline const uint8_t *
scan_str(const uint8_t *s)
{
#if defined(__SSE2__)
    const __m128i q = _mm_set1_epi8('"');
    const __m128i bs = _mm_set1_epi8('\\');
    const __m128i c1f = _mm_set1_epi8(0x1f);
    for (;;) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i m = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)),
            _mm_cmpeq_epi8(_mm_max_epu8(x, c1f), c1f));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask)
            return s + __builtin_ctz(mask);
        s += 16;
    }
#else
    while (*s != '"' && *s != '\\' && *s >= 0x20)
        s++;
    return s;
#endif
}

static const int8_t hexval[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6,
    ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12,
    ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
    ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};
#define HEX(c) (hexval[(uint8_t)(c)] - 1) /* -1: not a hex digit */

/*
 * Scan a string whose opening quote is at s[-1].  On success *out covers
 * the raw bytes between the quotes and the return value points after the
 * closing quote.  NULL on invalid JSON (lp has the reason).
 */
static const uint8_t *
lex_string(hscope__lp *lp, const uint8_t *s, slice *out)
{
    const uint8_t *b = s;
    uint8_t esc = 0;
    for (;;) {
        s = scan_str(s);
        if (HS_LIKELY(*s == '"'))
            break;
        if (*s == '\\') {
            esc = 1;
            uint8_t c = s[1];
            if (c == 'u') {
                if (HEX(s[2]) < 0 || HEX(s[3]) < 0 || HEX(s[4]) < 0 ||
                    HEX(s[5]) < 0) {
                    FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "invalid \\u escape");
                    return NULL;
                }
                s += 6;
            } else if (c == '"' || c == '\\' || c == '/' || c == 'b' ||
                       c == 'f' || c == 'n' || c == 'r' || c == 't') {
                s += 2;
            } else {
                FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "invalid escape in string");
                return NULL;
            }
            continue;
        }
        FAIL(lp, s, HSCOPE_SKIP_BAD_JSON,
             *s == '\n' ? "unterminated string"
                        : "unescaped control character in string");
        return NULL;
    }
    if ((size_t)(s - b) > UINT32_MAX) {
        FAIL(lp, b, HSCOPE_SKIP_TOO_LONG, "string longer than 4 GiB");
        return NULL;
    }
    out->p = b;
    out->n = (uint32_t)(s - b);
    out->esc = esc;
    out->set = 1;
    return s + 1;
}

static size_t
put_utf8(char *d, uint32_t cp)
{
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xC0 | (cp >> 6));
        d[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xE0 | (cp >> 12));
        d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        d[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (char)(0xF0 | (cp >> 18));
    d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    d[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static uint32_t
hex4(const uint8_t *s)
{
    return (uint32_t)((HEX(s[0]) << 12) | (HEX(s[1]) << 8) | (HEX(s[2]) << 4) |
                      HEX(s[3]));
}

/*
 * Decode a lexed string into lp->tmp (escapes resolved; \u to UTF-8,
 * surrogate pairs combined, lone surrogates kept as 3-byte sequences the
 * way Python keeps them).  Returns the decoded length or SIZE_MAX on OOM.
 * The output is never longer than the input.
 */
static size_t
decode(hscope__lp *lp, const slice *sl, const char **out)
{
    if (!sl->esc) {
        *out = (const char *)sl->p;
        return sl->n;
    }
    if (hscope__grow(lp->b->mem, (void **)&lp->tmp, &lp->tmp_cap,
                     (size_t)sl->n + 1, 1, lp->err) != HSCOPE_OK)
        return SIZE_MAX;
    char *d = lp->tmp;
    const uint8_t *s = sl->p, *e = sl->p + sl->n;
    while (s < e) {
        if (*s != '\\') {
            *d++ = (char)*s++;
            continue;
        }
        uint8_t c = s[1];
        s += 2;
        switch (c) {
        case 'b': *d++ = '\b'; break;
        case 'f': *d++ = '\f'; break;
        case 'n': *d++ = '\n'; break;
        case 'r': *d++ = '\r'; break;
        case 't': *d++ = '\t'; break;
        case 'u': {
            uint32_t cp = hex4(s);
            s += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && s + 6 <= e && s[0] == '\\' &&
                s[1] == 'u') {
                uint32_t lo = hex4(s + 2);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    s += 6;
                }
            }
            d += put_utf8(d, cp);
            break;
        }
        default: *d++ = (char)c; break; /* " \ / */
        }
    }
    *out = lp->tmp;
    return (size_t)(d - lp->tmp);
}

/* JSON number grammar; returns pointer after it or NULL. */
static const uint8_t *
lex_number(const uint8_t *s, int *is_int)
{
    const uint8_t *b = s;
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return NULL;
    *is_int = *b != '-';
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return NULL;
        while (*s >= '0' && *s <= '9')
            s++;
        *is_int = 0;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return NULL;
        while (*s >= '0' && *s <= '9')
            s++;
        *is_int = 0;
    }
    return s;
}

/* Parse a non-negative integer value of a known key. */
static const uint8_t *
parse_uint(hscope__lp *lp, const uint8_t *s, uint64_t *v)
{
    /* Fast path: 1-19 digits without a leading zero, not followed by a
     * digit, fraction or exponent: a valid integer below 10^19 (no
     * overflow check needed).  Everything else takes the full lexer. */
    if (HS_LIKELY(*s >= '1' && *s <= '9')) {
        uint64_t x = (uint64_t)(*s - '0');
        const uint8_t *p = s + 1;
        while (*p >= '0' && *p <= '9' && p - s < 19)
            x = x * 10 + (uint64_t)(*p++ - '0');
        if (!(*p >= '0' && *p <= '9') && *p != '.' && *p != 'e' && *p != 'E') {
            *v = x;
            return p;
        }
    }
    int is_int = 0;
    const uint8_t *e = lex_number(s, &is_int);
    if (!e) {
        FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "invalid number");
        return NULL;
    }
    if (!is_int) {
        FAIL(lp, s, HSCOPE_SKIP_BAD_VALUE, "expected a non-negative integer");
        return NULL;
    }
    uint64_t x = 0;
    for (const uint8_t *p = s; p < e; p++) {
        if (x > (UINT64_MAX - 9) / 10 &&
            (x > UINT64_MAX / 10 || x * 10 > UINT64_MAX - (uint64_t)(*p - '0'))) {
            FAIL(lp, s, HSCOPE_SKIP_NUMBER_RANGE, "integer beyond 64 bits");
            return NULL;
        }
        x = x * 10 + (uint64_t)(*p - '0');
    }
    *v = x;
    return e;
}

static int
match_lit(const uint8_t *s, const char *lit, size_t n)
{
    return memcmp(s, lit, n) == 0;
}

/*
 * Skip any JSON value, validating it.  Nesting is tracked with an explicit
 * bit stack (no recursion); deeper than 1024 levels is refused, since no
 * dump record nests beyond 2.
 */
#define MAX_DEPTH 1024
static const uint8_t *
skip_value(hscope__lp *lp, const uint8_t *s)
{
    uint8_t stack[MAX_DEPTH / 8] = { 0 }; /* bit set: in array */
    int depth = 0;
    slice tmp;
    for (;;) {
        s = skip_ws(s);
        /* one scalar or an opening bracket */
        switch (*s) {
        case '"':
            if (!(s = lex_string(lp, s + 1, &tmp)))
                return NULL;
            break;
        case '{':
        case '[': {
            if (depth >= MAX_DEPTH) {
                FAIL(lp, s, HSCOPE_SKIP_TOO_DEEP, "nesting deeper than 1024");
                return NULL;
            }
            int arr = *s == '[';
            if (arr)
                stack[depth / 8] |= (uint8_t)(1u << (depth % 8));
            else
                stack[depth / 8] &= (uint8_t)~(1u << (depth % 8));
            depth++;
            s = skip_ws(s + 1);
            if (*s == (arr ? ']' : '}')) {
                depth--;
                s++;
                break;
            }
            if (!arr) {
                if (*s != '"' || !(s = lex_string(lp, s + 1, &tmp)))
                    return lp->why ? NULL
                                   : (FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "expected a key"), NULL);
                s = skip_ws(s);
                if (*s != ':') {
                    FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "expected ':'");
                    return NULL;
                }
                s++;
            }
            continue; /* parse the first element */
        }
        case 't':
            if (!match_lit(s, "true", 4))
                goto bad;
            s += 4;
            break;
        case 'f':
            if (!match_lit(s, "false", 5))
                goto bad;
            s += 5;
            break;
        case 'n':
            if (!match_lit(s, "null", 4))
                goto bad;
            s += 4;
            break;
        case 'N':
            if (!match_lit(s, "NaN", 3))
                goto bad;
            s += 3;
            break;
        case 'I':
            if (!match_lit(s, "Infinity", 8))
                goto bad;
            s += 8;
            break;
        default: {
            if (*s == '-' && match_lit(s, "-Infinity", 9)) {
                s += 9;
                break;
            }
            int is_int;
            const uint8_t *e = lex_number(s, &is_int);
            if (!e)
                goto bad;
            s = e;
            break;
        }
        }
        /* after a value: close brackets or move to the next element */
        for (;;) {
            if (depth == 0)
                return s;
            s = skip_ws(s);
            int arr = (stack[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1;
            if (*s == ',') {
                s = skip_ws(s + 1);
                if (!arr) {
                    if (*s != '"' || !(s = lex_string(lp, s + 1, &tmp)))
                        return lp->why ? NULL
                                       : (FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "expected a key"), NULL);
                    s = skip_ws(s);
                    if (*s != ':') {
                        FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "expected ':'");
                        return NULL;
                    }
                    s++;
                }
                break;
            }
            if (*s == (arr ? ']' : '}')) {
                depth--;
                s++;
                continue;
            }
            FAIL(lp, s, HSCOPE_SKIP_BAD_JSON,
                 arr ? "expected ',' or ']'" : "expected ',' or '}'");
            return NULL;
        }
    }
bad:
    FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "invalid JSON value");
    return NULL;
}

/* Parse "0x..." (or bare hex) into a 64-bit address. */
static const uint8_t *
parse_addr(hscope__lp *lp, const uint8_t *s, uint64_t *out)
{
    if (*s != '"') {
        FAIL(lp, s, HSCOPE_SKIP_BAD_VALUE, "expected an address string");
        return NULL;
    }
    const uint8_t *p = s + 1;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2;
    uint64_t v = 0;
    int nd = 0, d;
#if defined(__SSE2__)
    {
        /* Fast path: find the closing quote in 16 bytes, check every byte
         * before it is a hex digit at once, then convert without lookups
         * ((c & 15) + 9 * (c >> 6) maps 0-9, a-f and A-F to their value). */
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned qm = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')));
        if (qm && !(qm & 1u)) {
            int n = __builtin_ctz(qm);
            __m128i lo = _mm_or_si128(x, _mm_set1_epi8(0x20));
            __m128i dig = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
                                        _mm_cmpgt_epi8(_mm_set1_epi8('9' + 1), x));
            __m128i alp = _mm_and_si128(_mm_cmpgt_epi8(lo, _mm_set1_epi8('a' - 1)),
                                        _mm_cmpgt_epi8(_mm_set1_epi8('f' + 1), lo));
            unsigned ok = (unsigned)_mm_movemask_epi8(_mm_or_si128(dig, alp));
            unsigned want = (1u << n) - 1;
            if ((ok & want) == want) {
                /* nibble values of all 16 bytes (those from the quote on
                 * are garbage, shifted out below), digit pairs packed
                 * into bytes, then the first n digits as one number */
                __m128i letter = _mm_and_si128(_mm_srli_epi16(x, 6), _mm_set1_epi8(1));
                __m128i nib = _mm_add_epi8(_mm_and_si128(x, _mm_set1_epi8(15)),
                                           _mm_add_epi8(_mm_slli_epi16(letter, 3), letter));
                __m128i pair = _mm_or_si128(
                    _mm_slli_epi16(_mm_and_si128(nib, _mm_set1_epi16(0xff)), 4),
                    _mm_srli_epi16(nib, 8));
                uint64_t packed = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(pair, pair));
                *out = __builtin_bswap64(packed) >> (64 - 4 * n);
                return p + n + 1;
            }
        }
    }
#endif
    while ((d = HEX(*p)) >= 0) {
        if (nd >= 16 && v >> 60) {
            FAIL(lp, p, HSCOPE_SKIP_BAD_VALUE, "address beyond 64 bits");
            return NULL;
        }
        v = (v << 4) | (uint64_t)d;
        p++;
        nd++;
    }
    if (HS_LIKELY(*p == '"' && nd > 0)) {
        *out = v;
        return p + 1;
    }
    /* Not a plain hex address: lex it as a string to tell bad JSON from a
     * bad value. */
    slice tmp;
    lp->why = NULL;
    const uint8_t *e = lex_string(lp, s + 1, &tmp);
    if (!e)
        return NULL;
    FAIL(lp, s, HSCOPE_SKIP_BAD_VALUE, "address is not a hex number");
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Keys                                                                 */
/* ------------------------------------------------------------------ */

#define KEQ(lit) (n == sizeof(lit) - 1 && memcmp(k, lit, n) == 0)

static enum key
key_of(const uint8_t *k, size_t n)
{
    switch (n) {
    case 2: if (KEQ("fd") || KEQ("id")) return K_IGNORED; break;
    case 3: if (KEQ("mid")) return K_IGNORED; break;
    case 4:
        if (KEQ("type")) return K_TYPE;
        if (KEQ("file")) return K_FILE;
        if (KEQ("line")) return K_LINE;
        if (KEQ("size")) return K_SIZE;
        if (KEQ("name")) return K_NAME;
        if (KEQ("root")) return K_ROOT;
        break;
    case 5:
        if (KEQ("class")) return K_CLASS;
        if (KEQ("flags")) return K_FLAGS;
        if (KEQ("value")) return K_VALUE;
        if (KEQ("ivars") || KEQ("depth") || KEQ("edges")) return K_IGNORED;
        break;
    case 6:
        if (KEQ("frozen")) return K_FROZEN;
        if (KEQ("length")) return K_LENGTH;
        if (KEQ("method")) return K_METHOD;
        if (KEQ("shared")) return K_SHARED;
        if (KEQ("broken")) return K_BROKEN;
        if (KEQ("struct")) return K_STRUCT;
        break;
    case 7:
        if (KEQ("address")) return K_ADDRESS;
        if (KEQ("memsize")) return K_MEMSIZE;
        if (KEQ("fstring")) return K_FSTRING;
        if (KEQ("chilled")) return K_CHILLED;
        if (KEQ("default")) return K_IGNORED;
        break;
    case 8:
        if (KEQ("embedded")) return K_EMBEDDED;
        if (KEQ("bytesize")) return K_BYTESIZE;
        if (KEQ("capacity")) return K_CAPACITY;
        if (KEQ("shape_id") || KEQ("encoding"))
            return K_IGNORED;
        break;
    case 9:
        if (KEQ("singleton")) return K_SINGLETON;
        if (KEQ("node_type")) return K_NODE_TYPE;
        if (KEQ("slot_size")) return K_SLOT_SIZE;
        if (KEQ("object_id")) return K_OBJECT_ID;
        if (KEQ("shareable")) return K_SHAREABLE;
        if (KEQ("coderange") || KEQ("called_id") ||
            KEQ("parent_id") || KEQ("edge_name"))
            return K_IGNORED;
        break;
    case 10:
        if (KEQ("references")) return K_REFERENCES;
        if (KEQ("generation")) return K_GENERATION;
        if (KEQ("imemo_type")) return K_IMEMO_TYPE;
        if (KEQ("superclass") || KEQ("associated") || KEQ("shape_type"))
            return K_IGNORED;
        break;
    case 14:
        if (KEQ("receiver_class")) return K_IGNORED;
        break;
    case 15:
        if (KEQ("real_class_name")) return K_REAL_CLASS_NAME;
        if (KEQ("variation_count")) return K_IGNORED;
        break;
    case 16:
        /* typed DATA in Ruby's master after 4.0: true or false */
        if (KEQ("free_immediately")) return K_IGNORED;
        break;
    case 17:
        if (KEQ("too_complex_shape")) return K_IGNORED;
        break;
    default:
        break;
    }
    return K_UNKNOWN;
}

/* GC flag names inside "flags":{...}; 0 = known but not stored, -1 =
 * unknown. */
static int
flag_of(const uint8_t *k, size_t n)
{
    switch (n) {
    case 3: if (KEQ("old")) return HSCOPE_FLAG_OLD; if (KEQ("age")) return 0; break;
    case 5: if (KEQ("young")) return 0; break;
    case 6:
        if (KEQ("marked")) return HSCOPE_FLAG_MARKED;
        if (KEQ("pinned")) return HSCOPE_FLAG_PINNED;
        if (KEQ("infant")) return 0;
        break;
    case 7: if (KEQ("marking")) return HSCOPE_FLAG_MARKING; break;
    case 9:
        if (KEQ("shareable")) return HSCOPE_FLAG_SHAREABLE;
        if (KEQ("object_id")) return FLAG_OBJECT_ID;
        break;
    case 10:
        if (KEQ("remembered")) return HSCOPE_FLAG_REMEMBERED;
        if (KEQ("long_lived")) return 0;
        break;
    case 12: if (KEQ("wb_protected")) return HSCOPE_FLAG_WB_PROTECTED; break;
    case 13: if (KEQ("uncollectible")) return HSCOPE_FLAG_UNCOLLECTIBLE; break;
    default: break;
    }
    return -1;
}
#undef KEQ

/* Read a key string at s (s points at '"'); resolves escaped keys. */
static const uint8_t *
read_key(hscope__lp *lp, const uint8_t *s, const uint8_t **k, size_t *n)
{
    slice sl;
    if (*s != '"') {
        FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "expected a key string");
        return NULL;
    }
    if (!(s = lex_string(lp, s + 1, &sl)))
        return NULL;
    if (HS_UNLIKELY(sl.esc)) {
        const char *d;
        size_t dn = decode(lp, &sl, &d);
        if (dn == SIZE_MAX) {
            lp->fatal = HSCOPE_ERR_NOMEM;
            return NULL;
        }
        *k = (const uint8_t *)d;
        *n = dn;
    } else {
        *k = sl.p;
        *n = sl.n;
    }
    s = skip_ws(s);
    if (*s != ':') {
        FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "expected ':' after key");
        return NULL;
    }
    return skip_ws(s + 1);
}

/* Remember the name of a field this version does not know (cold path);
 * hscope__lp_line notes it in the builder if the record is stored. */
static void
note_unknown(hscope__lp *lp, rec *r, int32_t kind, const uint8_t *k, size_t n)
{
    r->unknown_keys++;
    if (!(r->rare & HSCOPE__RARE_UNK)) {
        r->rare |= HSCOPE__RARE_UNK;
        lp->nunk = 0;
    }
    if (lp->nunk == sizeof(lp->unk) / sizeof(lp->unk[0]))
        return;
    if (n >= HSCOPE__UNKNOWN_NAME)
        n = HSCOPE__UNKNOWN_NAME - 1;
    lp->unk[lp->nunk].kind = kind;
    lp->unk[lp->nunk].len = (uint32_t)n;
    memcpy(lp->unk[lp->nunk++].name, k, n);
}

/* ------------------------------------------------------------------ */
/* Values of known keys                                                 */
/* ------------------------------------------------------------------ */

static int
is_null(const uint8_t *s)
{
    return s[0] == 'n' && match_lit(s, "null", 4);
}

/* Optional string field: a string, or null (= absent). */
static const uint8_t *
opt_string(hscope__lp *lp, const uint8_t *s, slice *out)
{
    if (*s == '"')
        return lex_string(lp, s + 1, out);
    if (is_null(s)) {
        out->set = 0;
        return s + 4;
    }
    lp->why = NULL;
    const uint8_t *e = skip_value(lp, s);
    if (!e)
        return NULL;
    FAIL(lp, s, HSCOPE_SKIP_BAD_VALUE, "expected a string");
    return NULL;
}

/* Optional unsigned integer field: integer or null. */
static const uint8_t *
opt_uint(hscope__lp *lp, const uint8_t *s, uint64_t *v, uint8_t *has)
{
    if ((*s >= '0' && *s <= '9') || *s == '-') {
        const uint8_t *e = parse_uint(lp, s, v);
        if (e && has)
            *has = 1;
        return e;
    }
    if (is_null(s)) {
        *v = 0;
        if (has)
            *has = 0;
        return s + 4;
    }
    lp->why = NULL;
    const uint8_t *e = skip_value(lp, s);
    if (!e)
        return NULL;
    FAIL(lp, s, HSCOPE_SKIP_BAD_VALUE, "expected an integer");
    return NULL;
}

/*
 * A key the loader does not store but the waste analysis reads (capacity,
 * slot_size): validated exactly as an ignored key is (any JSON value
 * passes, so loads are unchanged), and kept when it is a plain
 * non-negative integer below 2^64.
 */
static const uint8_t *
soft_uint(hscope__lp *lp, const uint8_t *s, uint64_t *v, uint8_t *has)
{
    const uint8_t *e = skip_value(lp, s);
    *has = 0;
    if (!e || *s < '0' || *s > '9' || (*s == '0' && e - s > 1))
        return e;
    uint64_t x = 0;
    for (const uint8_t *p = s; p < e; p++) {
        if (*p < '0' || *p > '9' || x > (UINT64_MAX - 9) / 10)
            return e; /* a fraction, an exponent or too many digits */
        x = x * 10 + (uint64_t)(*p - '0');
    }
    *v = x;
    *has = 1;
    return e;
}

/* Boolean top-level flag: true sets, false/null clears. */
static const uint8_t *
opt_bool(hscope__lp *lp, const uint8_t *s, uint16_t *flags, uint16_t bit)
{
    if (s[0] == 't' && match_lit(s, "true", 4)) {
        *flags |= bit;
        return s + 4;
    }
    if (s[0] == 'f' && match_lit(s, "false", 5)) {
        *flags &= (uint16_t)~bit;
        return s + 5;
    }
    if (is_null(s)) {
        *flags &= (uint16_t)~bit;
        return s + 4;
    }
    lp->why = NULL;
    const uint8_t *e = skip_value(lp, s);
    if (!e)
        return NULL;
    FAIL(lp, s, HSCOPE_SKIP_BAD_VALUE, "expected true or false");
    return NULL;
}

/* Ruby's object_id: an integer is kept; any other value is skipped (a
 * future Ruby's form of it must not cost the record). */
static const uint8_t *
opt_oid(hscope__lp *lp, const uint8_t *s, rec *r)
{
    r->rare &= (uint8_t)~HSCOPE__RARE_OID; /* a repeated key replaces the value */
    if (*s >= '0' && *s <= '9') {
        /* through opt_uint: parse_uint keeps one caller, inlined there */
        uint8_t has = 0;
        if ((s = opt_uint(lp, s, &lp->oid, &has)) && has)
            r->rare |= HSCOPE__RARE_OID;
        return s;
    }
    return skip_value(lp, s);
}

static const uint8_t *
parse_refs(hscope__lp *lp, const uint8_t *s)
{
    if (*s != '[') {
        if (is_null(s)) {
            lp->nrefs = 0;
            return s + 4;
        }
        lp->why = NULL;
        const uint8_t *e = skip_value(lp, s);
        if (!e)
            return NULL;
        FAIL(lp, s, HSCOPE_SKIP_BAD_VALUE, "references is not an array");
        return NULL;
    }
    lp->nrefs = 0; /* a repeated key replaces the earlier list */
    s = skip_ws(s + 1);
    if (*s == ']')
        return s + 1;
    uint64_t max = lp->o->max_refs;
    for (;;) {
        uint64_t a;
        if (!(s = parse_addr(lp, s, &a)))
            return NULL;
        if (HS_UNLIKELY(lp->nrefs == lp->refs_cap)) {
            if (hscope__grow(lp->b->mem, (void **)&lp->refs, &lp->refs_cap,
                             lp->nrefs + 1, sizeof(uint64_t), lp->err) != HSCOPE_OK) {
                lp->fatal = lp->err->status;
                return NULL;
            }
        }
        if (HS_UNLIKELY(max && lp->nrefs >= max)) {
            FAIL(lp, s, HSCOPE_SKIP_TOO_MANY_REFS,
                 "more references than max_references");
            return NULL;
        }
        lp->refs[lp->nrefs++] = a;
        if (HS_LIKELY(s[0] == ',' && s[1] == ' ' && s[2] == '"')) {
            s += 2;
            continue;
        }
        s = skip_ws(s);
        if (*s == ',') {
            s = skip_ws(s + 1);
            continue;
        }
        if (*s == ']')
            return s + 1;
        FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "expected ',' or ']' in references");
        return NULL;
    }
}

#define LIT(lit) (memcmp(s, lit, sizeof(lit) - 1) == 0 && (*sp = s + sizeof(lit) - 1, 1))

/* The 16 bytes at p equal those at lit. */
static inline int
eq16(const uint8_t *p, const char *lit)
{
#if defined(__SSE2__)
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)lit);
    return _mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) == 0xFFFF;
#else
    return memcmp(p, lit, 16) == 0;
#endif
}

static const uint8_t *
parse_flags(hscope__lp *lp, const uint8_t *s, rec *r)
{
    if (*s != '{') {
        if (is_null(s)) {
            r->gc_flags = 0;
            return s + 4;
        }
        lp->why = NULL;
        const uint8_t *e = skip_value(lp, s);
        if (!e)
            return NULL;
        FAIL(lp, s, HSCOPE_SKIP_BAD_VALUE, "flags is not an object");
        return NULL;
    }
    /* The value of nearly every record in a dump taken after a GC, matched
     * whole.  16 bytes at a time, each compare only after the previous
     * one matched, so none reads more than 16 bytes past what is known to
     * be in the line (within its padding: no literal byte is a newline). */
    static const char all[] = "{\"wb_protected\":true, \"old\":true, "
                              "\"uncollectible\":true, \"marked\":true}";
    _Static_assert(sizeof(all) - 1 == 70, "five 16-byte pieces, the last overlapping");
    if (eq16(s, all) && eq16(s + 16, all + 16) && eq16(s + 32, all + 32) &&
        eq16(s + 48, all + 48) && eq16(s + 54, all + 54)) {
        r->gc_flags = HSCOPE_FLAG_WB_PROTECTED | HSCOPE_FLAG_OLD |
                      HSCOPE_FLAG_UNCOLLECTIBLE | HSCOPE_FLAG_MARKED;
        return s + sizeof(all) - 1;
    }
    r->gc_flags = 0;
    s = skip_ws(s + 1);
    if (*s == '}')
        return s + 1;
    for (;;) {
        const uint8_t *k;
        size_t n;
        /* the writer's common flags, key and value at once */
        const uint8_t **sp = &s;
        if (s[1] == 'w' && LIT("\"wb_protected\":true")) {
            r->gc_flags |= HSCOPE_FLAG_WB_PROTECTED;
            goto next;
        }
        if (s[1] == 'o' && LIT("\"old\":true")) {
            r->gc_flags |= HSCOPE_FLAG_OLD;
            goto next;
        }
        if (s[1] == 'u' && LIT("\"uncollectible\":true")) {
            r->gc_flags |= HSCOPE_FLAG_UNCOLLECTIBLE;
            goto next;
        }
        if (s[1] == 'm' && LIT("\"marked\":true")) {
            r->gc_flags |= HSCOPE_FLAG_MARKED;
            goto next;
        }
        /* Ruby 4.0+: "age" (0-3) on every record, "shareable" on many */
        if (s[1] == 'a' && memcmp(s, "\"age\":", 6) == 0 && s[6] >= '0' && s[6] <= '9' &&
            (s[7] == ',' || s[7] == '}')) {
            s += 7;
            goto next;
        }
        if (s[1] == 's' && LIT("\"shareable\":true")) {
            r->gc_flags |= HSCOPE_FLAG_SHAREABLE;
            goto next;
        }
        if (!(s = read_key(lp, s, &k, &n)))
            return NULL;
        int bit = flag_of(k, n);
        if (bit == FLAG_OBJECT_ID) {
            if (!(s = opt_oid(lp, s, r)))
                return NULL;
            goto next;
        }
        if (bit < 0)
            note_unknown(lp, r, HSCOPE_UNKNOWN_FLAG, k, n);
        if (s[0] == 't' && match_lit(s, "true", 4)) {
            if (bit > 0)
                r->gc_flags |= (uint16_t)bit;
            s += 4;
        } else if (!(s = skip_value(lp, s))) {
            return NULL;
        }
    next:
        if (s[0] == ',' && s[1] == ' ' && s[2] == '"') {
            s += 2;
            continue;
        }
        s = skip_ws(s);
        if (*s == ',') {
            s = skip_ws(s + 1);
            continue;
        }
        if (*s == '}')
            return s + 1;
        FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "expected ',' or '}' in flags");
        return NULL;
    }
}

/*
 * Fast path for the writer's layout: match `"key":` literally (no escapes,
 * no spaces, as Ruby writes it) with constant-length compares.  Returns the
 * key and advances *sp past the colon, or K_UNKNOWN to fall back to the
 * general key reader (which handles escapes, whitespace and unknown keys).
 */
static inline enum key
fast_key(const uint8_t **sp)
{
    const uint8_t *s = *sp;
    switch (s[1]) {
    case 'a': if (LIT("\"address\":")) return K_ADDRESS; break;
    case 't': if (LIT("\"type\":")) return K_TYPE; break;
    case 'c':
        if (LIT("\"class\":")) return K_CLASS;
        if (LIT("\"capacity\":")) return K_CAPACITY;
        if (LIT("\"coderange\":")) return K_IGNORED;
        break;
    case 'e':
        if (LIT("\"embedded\":")) return K_EMBEDDED;
        if (LIT("\"encoding\":")) return K_IGNORED;
        break;
    case 'b': if (LIT("\"bytesize\":")) return K_BYTESIZE; break;
    case 'v': if (LIT("\"value\":")) return K_VALUE; break;
    case 'f':
        if (LIT("\"file\":")) return K_FILE;
        if (LIT("\"flags\":")) return K_FLAGS;
        if (LIT("\"frozen\":")) return K_FROZEN;
        if (LIT("\"fstring\":")) return K_FSTRING;
        break;
    case 'l':
        if (LIT("\"line\":")) return K_LINE;
        if (LIT("\"length\":")) return K_LENGTH;
        break;
    case 'm':
        if (LIT("\"memsize\":")) return K_MEMSIZE;
        if (LIT("\"method\":")) return K_METHOD;
        break;
    case 'g': if (LIT("\"generation\":")) return K_GENERATION; break;
    case 'r': if (LIT("\"references\":")) return K_REFERENCES; break;
    case 's':
        if (LIT("\"size\":")) return K_SIZE;
        if (LIT("\"shape_id\":")) return K_IGNORED;
        if (LIT("\"slot_size\":")) return K_SLOT_SIZE;
        if (LIT("\"shared\":")) return K_SHARED;
        break;
    case 'i': if (LIT("\"imemo_type\":")) return K_IMEMO_TYPE; break;
    case 'n': if (LIT("\"name\":")) return K_NAME; break;
    default: break;
    }
    return K_UNKNOWN;
}

/* The value of a pair whose key is known, s at the value.  Inlined: with a
 * constant key (the writer's-order fast path in lp_parse) it folds to one
 * handler. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const uint8_t *
value_of(hscope__lp *lp, const uint8_t *s, rec *r, enum key key)
{
    switch (key) {
    case K_ADDRESS:
        if (is_null(s)) {
            r->has_addr = 0;
            return s + 4;
        }
        if ((s = parse_addr(lp, s, &r->addr)))
            r->has_addr = 1;
        return s;
    case K_CLASS:
        if (is_null(s)) {
            r->has_class = 0;
            return s + 4;
        }
        if ((s = parse_addr(lp, s, &r->class_addr)))
            r->has_class = 1;
        return s;
    case K_TYPE: return opt_string(lp, s, &r->type);
    case K_REFERENCES: return parse_refs(lp, s);
    case K_FILE: return opt_string(lp, s, &r->file);
    case K_LINE: return opt_uint(lp, s, &r->line, &r->has_line);
    case K_METHOD: return opt_string(lp, s, &r->method);
    case K_GENERATION: return opt_uint(lp, s, &r->gen, &r->has_gen);
    case K_MEMSIZE: return opt_uint(lp, s, &r->memsize, NULL);
    case K_BYTESIZE:
    case K_LENGTH:
    case K_SIZE: return opt_uint(lp, s, &r->size, NULL);
    case K_FLAGS: return parse_flags(lp, s, r);
    case K_FROZEN: return opt_bool(lp, s, &r->top_flags, HSCOPE_FLAG_FROZEN);
    case K_EMBEDDED: return opt_bool(lp, s, &r->top_flags, HSCOPE_FLAG_EMBEDDED);
    case K_SHARED: return opt_bool(lp, s, &r->top_flags, HSCOPE_FLAG_SHARED);
    case K_FSTRING: return opt_bool(lp, s, &r->top_flags, HSCOPE_FLAG_FSTRING);
    case K_BROKEN: return opt_bool(lp, s, &r->top_flags, HSCOPE_FLAG_BROKEN);
    case K_CHILLED: return opt_bool(lp, s, &r->top_flags, HSCOPE_FLAG_CHILLED);
    case K_SINGLETON: return opt_bool(lp, s, &r->top_flags, HSCOPE_FLAG_SINGLETON);
    case K_NAME: return opt_string(lp, s, &r->name);
    case K_REAL_CLASS_NAME: return opt_string(lp, s, &r->real_name);
    case K_IMEMO_TYPE: return opt_string(lp, s, &r->imemo);
    case K_STRUCT: return opt_string(lp, s, &r->strct);
    case K_NODE_TYPE: return opt_string(lp, s, &r->node);
    case K_ROOT: return opt_string(lp, s, &r->root);
    case K_CAPACITY: return soft_uint(lp, s, &r->capacity, &r->has_capacity);
    case K_SLOT_SIZE: return soft_uint(lp, s, &r->slot_size, &r->has_slot_size);
    case K_OBJECT_ID: return opt_oid(lp, s, r);
    case K_SHAREABLE: return opt_bool(lp, s, &r->top_flags, HSCOPE_FLAG_SHAREABLE);
    case K_VALUE:
        if (*s == '"')
            return lex_string(lp, s + 1, &r->value);
        r->value.set = 0;
        return skip_value(lp, s);
    case K_UNKNOWN:
        return skip_value(lp, s); /* parse_pair noted it */
    case K_IGNORED:
    default:
        return skip_value(lp, s);
    }
}

/* Decode one "key": value pair into r. */
static const uint8_t *
parse_pair(hscope__lp *lp, const uint8_t *s, rec *r)
{
    const uint8_t *k;
    size_t n;
    enum key key = fast_key(&s);
    if (key != K_UNKNOWN) {
        s = skip_ws(s);
    } else {
        if (!(s = read_key(lp, s, &k, &n)))
            return NULL;
        key = key_of(k, n);
        if (HS_UNLIKELY(key == K_UNKNOWN))
            note_unknown(lp, r, HSCOPE_UNKNOWN_KEY, k, n);
    }
    return value_of(lp, s, r, key);
}

/* ------------------------------------------------------------------ */
/* Storing a record                                                     */
/* ------------------------------------------------------------------ */

static hscope_status
intern_slice(hscope__lp *lp, const slice *sl, uint32_t *id)
{
    *id = 0;
    if (!sl->set)
        return HSCOPE_OK;
    const char *d;
    size_t n = decode(lp, sl, &d);
    if (n == SIZE_MAX)
        return lp->err->status;
    return hscope__intern_add(&lp->b->strings, d, n, id, lp->err);
}

/* intern_slice with a one-entry memo: when the slice (unescaped) is the
 * string interned last time for this field, its id without hashing. */
static inline hscope_status
intern_memo(hscope__lp *lp, const slice *sl, uint32_t *last, uint32_t *id)
{
    const hscope__intern *in = &lp->b->strings;
    if (sl->set && !sl->esc && *last && sl->n == hscope__intern_len(in, *last) &&
        memcmp(sl->p, hscope__intern_str(in, *last), sl->n) == 0) {
        *id = *last;
        return HSCOPE_OK;
    }
    hscope_status st = intern_slice(lp, sl, id);
    if (st == HSCOPE_OK)
        *last = *id;
    return st;
}

static hscope_status
grow_objects(hscope__builder *b, hscope_error *err)
{
    size_t nc = b->cap ? b->cap * 2 : 4096;
    if (b->cap >= ((size_t)1 << 24))
        nc = b->cap + b->cap / 2;
    if (nc > (size_t)UINT32_MAX - 1)
        nc = (size_t)UINT32_MAX - 1;
#define G(f, t)                                                            \
    do {                                                                   \
        t *q = hscope__realloc(b->mem, b->f, (nc + 1) * sizeof(t));       \
        if (!q)                                                            \
            return hscope__nomem(err, (nc + 1) * sizeof(t));               \
        b->f = q;                                                          \
    } while (0)
    G(addr, uint64_t);
    G(type, uint8_t);
    G(flags, uint16_t);
    G(class_ix, uint32_t);
    G(detail, uint32_t);
    G(site, uint32_t);
    G(gen, uint32_t);
    G(memsize, uint32_t);
    G(size, uint32_t);
    G(edge_start, uint32_t);
#undef G
    b->cap = nc;
    return HSCOPE_OK;
}

static hscope_status
store_value(hscope__lp *lp, const slice *sl, uint32_t id)
{
    hscope__builder *b = lp->b;
    const char *d;
    hscope_status st;
    size_t n = decode(lp, sl, &d), need;
    if (n == SIZE_MAX)
        return lp->err->status;
    if (!hscope__add_ok(b->val_arena_len, n + 1, &need))
        return hscope__fail(lp->err, HSCOPE_ERR_LIMIT, "value arena overflow");
    if ((st = hscope__grow(b->mem, (void **)&b->val_arena, &b->val_arena_cap,
                           need, 1, lp->err)) != HSCOPE_OK)
        return st;
    size_t c0 = b->val_cap;
    if ((st = hscope__grow(b->mem, (void **)&b->val_off, &b->val_cap,
                           b->nval + 1, sizeof(uint64_t), lp->err)) != HSCOPE_OK)
        return st;
    if (b->val_cap != c0) {
        uint32_t *a = hscope__realloc(b->mem, b->val_id, b->val_cap * sizeof(uint32_t));
        if (!a)
            return hscope__nomem(lp->err, b->val_cap * sizeof(uint32_t));
        b->val_id = a;
        uint32_t *l = hscope__realloc(b->mem, b->val_len, b->val_cap * sizeof(uint32_t));
        if (!l)
            return hscope__nomem(lp->err, b->val_cap * sizeof(uint32_t));
        b->val_len = l;
    }
    memcpy(b->val_arena + b->val_arena_len, d, n);
    b->val_arena[b->val_arena_len + n] = '\0';
    b->val_id[b->nval] = id;
    b->val_off[b->nval] = b->val_arena_len;
    b->val_len[b->nval++] = (uint32_t)n;
    b->val_arena_len = need;
    return HSCOPE_OK;
}

static hscope_status
store_root(hscope__lp *lp, const rec *r)
{
    hscope__builder *b = lp->b;
    hscope_status st;
    uint32_t name;
    slice q = r->root;
    if (!q.set) {
        q.p = (const uint8_t *)"(none)";
        q.n = 6;
        q.esc = 0;
        q.set = 1;
    }
    if ((st = intern_slice(lp, &q, &name)) != HSCOPE_OK)
        return st;
    size_t c;
    for (c = 0; c < b->ncat && b->cat_name[c] != name; c++) {
    }
    if (c == b->ncat) {
        size_t c0 = b->cat_cap;
        if ((st = hscope__grow(b->mem, (void **)&b->cat_name, &b->cat_cap,
                               b->ncat + 1, sizeof(uint32_t), lp->err)) != HSCOPE_OK)
            return st;
        if (b->cat_cap != c0) {
            uint64_t *x = hscope__realloc(b->mem, b->cat_records, b->cat_cap * sizeof(uint64_t));
            if (!x)
                return hscope__nomem(lp->err, b->cat_cap * sizeof(uint64_t));
            b->cat_records = x;
        }
        b->cat_name[c] = name;
        b->cat_records[c] = 0;
        b->ncat++;
    }
    b->cat_records[c]++;
    b->root_records++;
    size_t c0 = b->root_cap;
    if ((st = hscope__grow(b->mem, (void **)&b->root_addr, &b->root_cap,
                           b->nroot + lp->nrefs, sizeof(uint64_t), lp->err)) != HSCOPE_OK)
        return st;
    if (b->root_cap != c0) {
        uint32_t *x = hscope__realloc(b->mem, b->root_cat, b->root_cap * sizeof(uint32_t));
        if (!x)
            return hscope__nomem(lp->err, b->root_cap * sizeof(uint32_t));
        b->root_cat = x;
    }
    for (size_t i = 0; i < lp->nrefs; i++) {
        b->root_cat[b->nroot] = (uint32_t)c;
        b->root_addr[b->nroot++] = lp->refs[i];
    }
    return HSCOPE_OK;
}

/* The extras of a sink record (hscope__objrec, sink_details). */
static hscope_status
sink_details(hscope__lp *lp, const rec *r, hscope__objrec *o)
{
    if (r->value.set) {
        const char *d;
        size_t n = decode(lp, &r->value, &d);
        if (n == SIZE_MAX)
            return lp->err->status;
        o->value = d;
        o->value_len = n;
        o->has_value = 1;
    }
    o->has_capacity = r->has_capacity;
    o->capacity = r->has_capacity ? r->capacity : 0;
    o->slot_size = r->has_slot_size && r->slot_size <= UINT32_MAX ? (uint32_t)r->slot_size : 0;
    o->offset = lp->base + (uint64_t)(lp->line - lp->buf0);
    return HSCOPE_OK;
}

static hscope_status
store_object(hscope__lp *lp, rec *r, int type)
{
    hscope__builder *b = lp->b;
    hscope_status st;
    hscope_error *err = lp->err;
    /* detail: class name for classes, sub-type for the others */
    const slice *det = NULL;
    switch (type) {
    case HSCOPE_TYPE_CLASS:
    case HSCOPE_TYPE_MODULE:
    case HSCOPE_TYPE_ICLASS:
        /* an empty name counts as none, as in the label rule */
        det = r->name.set && r->name.n ? &r->name
            : r->real_name.set && r->real_name.n ? &r->real_name : NULL;
        break;
    case HSCOPE_TYPE_IMEMO: det = &r->imemo; break;
    case HSCOPE_TYPE_DATA: det = &r->strct; break;
    case HSCOPE_TYPE_NODE: det = &r->node; break;
    default: break;
    }
    uint32_t detail = 0, file, method, site;
    if (det && (st = intern_slice(lp, det, &detail)) != HSCOPE_OK)
        return st;
    if ((st = intern_memo(lp, &r->file, &lp->last_file, &file)) != HSCOPE_OK ||
        (st = intern_memo(lp, &r->method, &lp->last_method, &method)) != HSCOPE_OK)
        return st;
    uint32_t line = r->has_line ? (r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line) : 0;
    if ((st = hscope__builder_site(b, file, line, method, &site, err)) != HSCOPE_OK)
        return st;
    uint32_t gen = !r->has_gen ? HSCOPE__GEN_NONE
                   : r->gen >= HSCOPE__GEN_NONE ? HSCOPE__GEN_NONE - 1
                                                : (uint32_t)r->gen;
    if (type >= 32)
        b->unknown_types++; /* by name: the model counts its type column */
    if (b->sink) {
        hscope__objrec o = {
            .addr = r->addr, .class_addr = r->has_class ? r->class_addr : 0,
            .memsize = r->memsize, .size = r->size, .nrefs = lp->nrefs,
            .detail = detail, .file = file, .line = line, .method = method,
            .site = site, .gen = gen,
            .flags = (uint16_t)(r->top_flags | r->gc_flags),
            .type = (uint8_t)type, .has_class = r->has_class,
        };
        if (b->sink_details && (st = sink_details(lp, r, &o)) != HSCOPE_OK)
            return st;
        b->streamed++;
        return b->sink(b->sink_ud, b, &o, err);
    }
    if (b->n >= b->max_objects)
        return hscope__fail(err, HSCOPE_ERR_LIMIT,
                            "more than %llu objects (max_objects)",
                            (unsigned long long)b->max_objects);
    if (b->n == b->cap && (st = grow_objects(b, err)) != HSCOPE_OK)
        return st;
    if (b->nedges + lp->nrefs > UINT32_MAX)
        return hscope__fail(err, HSCOPE_ERR_LIMIT,
                            "more than 2^32-1 references in one dump");
    if ((st = hscope__grow(b->mem, (void **)&b->edges, &b->edge_cap,
                           b->nedges + lp->nrefs, sizeof(uint64_t), err)) != HSCOPE_OK)
        return st;
    uint32_t id = (uint32_t)b->n, cix = 0;
    if (r->has_class && (st = hscope__builder_class(b, r->class_addr, &cix, err)) != HSCOPE_OK)
        return st;
    if (r->memsize >= HSCOPE__U32_BIG &&
        (st = hscope__bigvals_push(b->mem, &b->big_memsize, id, r->memsize, err)) != HSCOPE_OK)
        return st;
    if (r->size >= HSCOPE__U32_BIG &&
        (st = hscope__bigvals_push(b->mem, &b->big_size, id, r->size, err)) != HSCOPE_OK)
        return st;
    if (b->keep_values && r->value.set &&
        (st = store_value(lp, &r->value, id)) != HSCOPE_OK)
        return st;
    b->addr[id] = r->addr;
    b->type[id] = (uint8_t)type;
    b->flags[id] = (uint16_t)(r->top_flags | r->gc_flags);
    b->class_ix[id] = cix;
    b->detail[id] = detail;
    b->site[id] = site;
    b->gen[id] = gen;
    b->memsize[id] = r->memsize >= HSCOPE__U32_BIG ? HSCOPE__U32_BIG : (uint32_t)r->memsize;
    b->size[id] = r->size >= HSCOPE__U32_BIG ? HSCOPE__U32_BIG : (uint32_t)r->size;
    b->edge_start[id] = (uint32_t)b->nedges;
    if (lp->nrefs)
        memcpy(b->edges + b->nedges, lp->refs, lp->nrefs * sizeof(uint64_t));
    b->nedges += lp->nrefs;
    b->n++;
    return HSCOPE_OK;
}

/* What a stored record had that few have (r->rare): the object_id of an
 * object (into the side table, or to the sink's sink_oid right after the
 * sink took the record) and the names of unknown fields. */
static hscope_status
rare_fields(hscope__lp *lp, const rec *r, int object)
{
    hscope__builder *b = lp->b;
    if (r->rare & HSCOPE__RARE_UNK) {
        b->unknown_keys += r->unknown_keys;
        for (uint32_t i = 0; i < lp->nunk; i++) {
            hscope_status st = hscope__unknown_note(b->mem, &b->unknown, lp->unk[i].kind,
                                                    lp->unk[i].name, lp->unk[i].len, 1, lp->err);
            if (st != HSCOPE_OK)
                return st;
        }
    }
    if (!(r->rare & HSCOPE__RARE_OID) || !object)
        return HSCOPE_OK;
    if (b->sink)
        return b->sink_oid ? b->sink_oid(b->sink_ud, b, lp->oid, lp->err) : HSCOPE_OK;
    return hscope__bigvals_push(b->mem, &b->oids, (uint32_t)(b->n - 1), lp->oid, lp->err);
}

/* Classify and store a fully parsed record. */
static int
commit(hscope__lp *lp, rec *r, const uint8_t *s)
{
    hscope__builder *b = lp->b;
    hscope_status st = HSCOPE_OK;
    int object = 0;
    if (!r->type.set)
        return FAIL(lp, s, HSCOPE_SKIP_NO_TYPE, "record has no \"type\"");
    const char *t;
    size_t tn = decode(lp, &r->type, &t);
    if (tn == SIZE_MAX) {
        lp->fatal = lp->err->status;
        return FATAL;
    }
    if (tn == 4 && memcmp(t, "ROOT", 4) == 0) {
        st = store_root(lp, r);
    } else if (tn == 5 && memcmp(t, "SHAPE", 5) == 0) {
        b->shapes++;
        b->shape_memsize = hscope__sat_add(b->shape_memsize, r->memsize);
    } else if (tn == 4 && memcmp(t, "NONE", 4) == 0) {
        b->free_slots++;
    } else {
        if (!r->has_addr)
            return FAIL(lp, s, HSCOPE_SKIP_NO_ADDRESS, "object record has no \"address\"");
        st = store_object(lp, r, hscope__type_code(b, t, tn));
        object = 1;
    }
    /* object ids and unknown fields (r->unknown_keys is 0 without) */
    if (HS_UNLIKELY(r->rare) && st == HSCOPE_OK)
        st = rare_fields(lp, r, object);
    if (st != HSCOPE_OK) {
        lp->fatal = st;
        return FATAL;
    }
    return OK;
}

/* ------------------------------------------------------------------ */
/* Line entry point                                                     */
/* ------------------------------------------------------------------ */

void
hscope__lp_init(hscope__lp *lp, hscope__builder *b, const hscope__parse_opts *o,
                hscope_error *err)
{
    memset(lp, 0, sizeof(*lp));
    lp->b = b;
    lp->o = o;
    lp->err = err;
}

void
hscope__lp_free(hscope__lp *lp)
{
    hscope__free(lp->b->mem, lp->refs);
    hscope__free(lp->b->mem, lp->tmp);
    lp->refs = NULL;
    lp->tmp = NULL;
}

/*
 * Parse the line at s, which ends at its first '\n'.  The scanners never
 * step over a newline (whitespace skipping stops at it, strings reject it
 * as a raw control byte, numbers, literals and addresses cannot contain
 * it), so when the parse reaches a newline it is the line's end: *eol is
 * set to it.  *eol stays NULL when the parse stopped earlier (a skipped
 * or fatal line): the caller finds the end.
 */
static int
lp_parse(hscope__lp *lp, const uint8_t *s, const uint8_t **eol)
{
    rec r;
    rec_reset(&r);
    lp->line = s;
    lp->nrefs = 0;
    lp->why = NULL;
    lp->fatal = HSCOPE_OK;
    s = skip_ws(s);
    if (*s == '\n') {
        *eol = s;
        FAIL(lp, s, HSCOPE_SKIP_EMPTY, "blank line");
        return 0;
    }
    if (*s != '{') {
        /* Valid JSON that is not an object, or not JSON at all. */
        const uint8_t *v = skip_value(lp, s);
        const uint8_t *w = v ? skip_ws(v) : NULL;
        if (w && *w == '\n') {
            *eol = w;
            FAIL(lp, s, HSCOPE_SKIP_NOT_OBJECT, "JSON value is not an object");
        } else if (v) {
            FAIL(lp, v, HSCOPE_SKIP_BAD_JSON, "not a JSON object");
        }
        return 0;
    }
    s = skip_ws(s + 1);
    if (*s != '}') {
        /*
         * The writer's order, straight-line: nearly every object record
         * starts with "address", "type", "class" and ends with "file",
         * "line", "method", "generation", "memsize", "flags" (Ruby 2.x-3.x
         * write them so).  Each STEP matches its key literally and calls
         * that key's handler directly; at the first key that differs the
         * general loop takes over from that key, so any order, spacing or
         * repetition still parses exactly as before.
         */
#define KEY_AT(lit) (memcmp(s, lit, sizeof(lit) - 1) == 0)
#define VALUE(lit, K) /* the key lit is at s */                          \
        if (!(s = value_of(lp, skip_ws(s + sizeof(lit) - 1), &r, K)))   \
            return lp->fatal ? -1 : 0;                                   \
        if (!(s[0] == ',' && s[1] == ' '))                               \
            goto sep;                                                    \
        s += 2;
#define STEP(lit, K)                                                     \
        if (!KEY_AT(lit))                                                \
            continue;                                                    \
        VALUE(lit, K)
        int head = 1;
        for (;;) {
            if (head) {
                head = 0;
                STEP("\"address\":", K_ADDRESS)
                STEP("\"type\":", K_TYPE)
                STEP("\"class\":", K_CLASS)
            }
            if (s[1] == 'f' && KEY_AT("\"file\":")) {
                VALUE("\"file\":", K_FILE)
                STEP("\"line\":", K_LINE)
                STEP("\"method\":", K_METHOD)
                STEP("\"generation\":", K_GENERATION)
                STEP("\"memsize\":", K_MEMSIZE)
                STEP("\"flags\":", K_FLAGS)
                continue;
            }
            if (s[1] == 'm' && KEY_AT("\"memsize\":")) {
                VALUE("\"memsize\":", K_MEMSIZE)
                STEP("\"flags\":", K_FLAGS)
                continue;
            }
#undef STEP
#undef VALUE
#undef KEY_AT
            if (!(s = parse_pair(lp, s, &r)))
                return lp->fatal ? -1 : 0;
        sep:
            if (HS_LIKELY(s[0] == ',' && s[1] == ' ')) {
                s += 2;
                continue;
            }
            s = skip_ws(s);
            if (*s == ',') {
                s = skip_ws(s + 1);
                continue;
            }
            if (*s == '}')
                break;
            FAIL(lp, s, HSCOPE_SKIP_BAD_JSON, "expected ',' or '}'");
            return 0;
        }
    }
    const uint8_t *end = skip_ws(s + 1);
    if (*end != '\n') {
        FAIL(lp, end, HSCOPE_SKIP_BAD_JSON, "extra data after the object");
        return 0;
    }
    *eol = end;
    switch (commit(lp, &r, s)) {
    case OK: return 1;
    case SKIP: return 0;
    default: return -1;
    }
}

int
hscope__lp_next(hscope__lp *lp, const uint8_t *s, const uint8_t *lim, const uint8_t **nl)
{
    const uint8_t *eol = NULL;
    int rc = lp_parse(lp, s, &eol);
    if (!eol)
        eol = memchr(s, '\n', (size_t)(lim - s) + 1);
    *nl = eol;
    return rc;
}

int
hscope__lp_line(hscope__lp *lp, const uint8_t *s, const uint8_t *e)
{
    const uint8_t *nl; /* e itself: the line's first newline */
    return hscope__lp_next(lp, s, e, &nl);
}
