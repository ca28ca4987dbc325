/*
 * fuzz_line.c - white-box libFuzzer target for the record decoder: each
 * line of the input goes straight to hscope__lp_line() (src/parse/parse.h),
 * skipping the reader and the line loop, so the tokenizer is reached in a
 * few hundred instructions.
 *
 * The input is split at '\n' (the line loop never passes a newline inside
 * a line); every line is copied into a buffer of exactly len + 1 + PAD
 * bytes: the line, the '\n' sentinel, and the PAD readable bytes the
 * contract promises, so AddressSanitizer flags any read beyond them.  The
 * same line is parsed twice, into two builders, with different bytes in
 * those 16: the result (stored or skipped, reason, where, why) must not
 * depend on them.  Also checked: a skipped line reports a valid reason, a
 * message and a position inside the line; the builders agree at the end;
 * every stored line is counted exactly once as an object, ROOT, SHAPE or
 * NONE record.
 *
 * Parse options: the first byte of the input, if it is not '{', selects
 * max_refs = 2 (bit 0x01) and keeping values (bit 0x02) and is otherwise
 * parsed as part of the first line; seeds start with '{', so they get
 * values kept and no reference cap.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/parse/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Exactly the padding parse.h promises to need (the flags fast path used
 * to read past a 16-byte promise: corpus/fuzz_line/crash-flags-literal-
 * overread.json; the contract is now HSCOPE__LINE_PAD). */
#define PAD HSCOPE__LINE_PAD

static size_t
pad_after(void)
{
    return PAD;
}

static void
fail(const char *what)
{
    fprintf(stderr, "fuzz_line invariant violated: %s\n", what);
    fflush(stderr);
    abort();
}

#define CHECK(c, what)      \
    do {                    \
        if (!(c))           \
            fail(what);     \
    } while (0)

typedef struct side {
    hscope__mem mem;
    hscope__builder b;
    hscope__lp lp;
    hscope_error err;
    hscope__parse_opts o;
    uint64_t stored;
} side;

static void
side_init(side *s, int keep_values, uint64_t max_refs)
{
    memset(s, 0, sizeof(*s));
    hscope__mem_init(&s->mem, NULL, 0);
    hscope_error_init(&s->err);
    s->o.max_refs = max_refs;
    CHECK(hscope__builder_init(&s->b, &s->mem, keep_values, 0, &s->err) == HSCOPE_OK,
          "builder_init failed");
    hscope__lp_init(&s->lp, &s->b, &s->o, &s->err);
}

static void
side_free(side *s)
{
    hscope__lp_free(&s->lp);
    hscope__builder_free(&s->b);
    CHECK(atomic_load(&s->mem.used) == 0, "memory still in use after builder_free");
}

/* A copy of [p, p+n) followed by '\n' and the padding the decoder may
 * read, filled with `pad` repeated. */
static uint8_t *
padded(const uint8_t *p, size_t n, const uint8_t pad[PAD])
{
    size_t extra = pad_after();
    uint8_t *buf = malloc(n + 1 + extra);
    CHECK(buf != NULL, "harness: out of memory");
    if (n)
        memcpy(buf, p, n);
    buf[n] = '\n';
    for (size_t i = 0; i < extra; i++)
        buf[n + 1 + i] = pad[i % PAD];
    return buf;
}

/* Parse [p, p+n) as one line with the given 16 bytes after its '\n'. */
static int
one(side *s, const uint8_t *p, size_t n, const uint8_t pad[PAD],
    size_t *fail_off)
{
    uint8_t *buf = padded(p, n, pad);
    int rc = hscope__lp_line(&s->lp, buf, buf + n);
    *fail_off = 0;
    if (rc == 0) {
        CHECK(s->lp.reason >= 0 && s->lp.reason < HSCOPE_SKIP__COUNT,
              "skip reason out of range");
        CHECK(s->lp.why != NULL && s->lp.why[0] != '\0', "skipped without a message");
        CHECK(s->lp.fail_at >= buf && s->lp.fail_at <= buf + n,
              "fail_at outside the line");
        CHECK((s->lp.reason == HSCOPE_SKIP_EMPTY) ==
                  (strspn((const char *)buf, " \t\r") == n),
              "blank-line verdict differs from the line being blank");
        *fail_off = (size_t)(s->lp.fail_at - buf);
    } else if (rc > 0) {
        s->stored++;
    } else {
        CHECK(rc == -1, "hscope__lp_line returned neither -1, 0 nor 1");
        CHECK(s->lp.fatal != HSCOPE_OK, "fatal result without a status");
    }
    free(buf);
    return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* two paddings as different as can be: all newlines and NULs (the
     * sentinels a scanner would stop at), and text that would extend or
     * repair a record if it were read */
    static const uint8_t pad_a[PAD] = { '\n', 0, '\n', 0, '\n', 0, '\n', 0,
                                        '\n', 0, '\n', 0, '\n', 0, '\n', 0 };
    static const uint8_t pad_b[PAD] = { '"', '}', ']', ',', ' ', '"', 'a',
                                        '"', ':', '1', '}', '0', 'x', '1',
                                        '"', '\\' };
    int keep_values = 1;
    uint64_t max_refs = 0;
    if (size && data[0] != '{') {
        keep_values = (data[0] & 0x02) != 0;
        max_refs = (data[0] & 0x01) ? 2 : 0;
    }
    side A, B;
    side_init(&A, keep_values, max_refs);
    side_init(&B, keep_values, max_refs);
    /* C reads the whole input in place with hscope__lp_next(), which finds
     * each line's end itself (as the parallel parser does): it must agree
     * with A, which is handed lines already split at their newline */
    side C;
    side_init(&C, keep_values, max_refs);
    uint8_t *whole = padded(data, size, pad_b);

    const uint8_t *p = data, *end = data + size;
    int fatal = 0;
    while (p < end && !fatal) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t fa, fb;
        int ra = one(&A, p, n, pad_a, &fa);
        int rb = one(&B, p, n, pad_b, &fb);
        CHECK(ra == rb, "result depends on the bytes after the line");
        if (ra == 0) {
            CHECK(A.lp.reason == B.lp.reason, "skip reason depends on the padding");
            CHECK(fa == fb, "fail position depends on the padding");
            CHECK(A.lp.why == B.lp.why, "skip message depends on the padding");
        }
        const uint8_t *wp = whole + (p - data), *wnl = NULL;
        int rc = hscope__lp_next(&C.lp, wp, whole + size, &wnl);
        CHECK(rc == ra, "hscope__lp_next and hscope__lp_line disagree");
        if (ra >= 0)
            CHECK(wnl == wp + n, "hscope__lp_next found another line end");
        if (ra == 0) {
            CHECK(C.lp.reason == A.lp.reason && C.lp.why == A.lp.why &&
                      (size_t)(C.lp.fail_at - wp) == fa,
                  "hscope__lp_next skipped for another reason or position");
        }
        fatal = ra < 0;
        p += n + (nl != NULL);
    }
    free(whole);
    CHECK(C.b.n == A.b.n && C.b.nedges == A.b.nedges && C.b.nroot == A.b.nroot &&
              C.b.nsites == A.b.nsites && C.b.strings.count == A.b.strings.count &&
              C.b.root_records == A.b.root_records && C.b.shapes == A.b.shapes &&
              C.b.free_slots == A.b.free_slots,
          "hscope__lp_next stored other records");

    CHECK(A.b.n == B.b.n && A.b.nedges == B.b.nedges && A.b.nroot == B.b.nroot &&
              A.b.root_records == B.b.root_records && A.b.shapes == B.b.shapes &&
              A.b.free_slots == B.b.free_slots && A.b.unknown_keys == B.b.unknown_keys &&
              A.b.unknown_types == B.b.unknown_types && A.b.nval == B.b.nval &&
              A.b.nsites == B.b.nsites && A.b.strings.count == B.b.strings.count &&
              A.b.val_arena_len == B.b.val_arena_len,
          "builders differ after the same lines");
    if (!fatal)
        CHECK(A.stored == A.b.n + A.b.root_records + A.b.shapes + A.b.free_slots,
              "stored lines != objects + ROOT + SHAPE + NONE records");
    if (A.b.n) {
        /* the columns the model reads must be consistent */
        for (size_t i = 0; i < A.b.n; i++) {
            CHECK(A.b.type[i] >= 1, "object with type code 0");
            CHECK(A.b.site[i] < A.b.nsites, "site id out of range");
            CHECK(A.b.detail[i] < A.b.strings.count, "detail string id out of range");
            CHECK(A.b.edge_start[i] <= A.b.nedges, "edge_start beyond the edges");
            CHECK(i == 0 || A.b.edge_start[i] >= A.b.edge_start[i - 1],
                  "edge_start not ascending");
            CHECK(A.b.type[i] < A.b.ntypes || A.b.type[i] == HSCOPE_TYPE_OTHER,
                  "type code beyond the codes handed out");
        }
    }
    for (size_t i = 0; i < A.b.nval; i++)
        CHECK(A.b.val_off[i] + A.b.val_len[i] < A.b.val_arena_len &&
                  A.b.val_arena[A.b.val_off[i] + A.b.val_len[i]] == '\0',
              "value outside the arena or not terminated");
    side_free(&A);
    side_free(&B);
    side_free(&C);
    return 0;
}
