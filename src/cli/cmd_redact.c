/*
 * cmd_redact.c - heapscope redact: a copy of a dump with every string
 * value replaced by its length and a hash, safe to share.
 */
#include <stdio.h>

#include "opts.h"

static const char *prog = "heapscope";

static const char usage[] =
    "usage: heapscope redact [load options] IN OUT\n"
    "\n"
    "Write a copy of a dump that is safe to share: every string value (the\n"
    "\"value\" of STRING, SYMBOL and FLOAT records: tokens, passwords, personal\n"
    "data) is replaced by its length and the XXH3-64 hash of its bytes, e.g.\n"
    "  \"value\":\"[redacted 22 bytes xxh3:5b1f0c...]\"\n"
    "and every other byte stays the same, so heapscope's answers on the copy\n"
    "equal those on the original (but for the dump's size).  IN may be gzip;\n"
    "OUT is gzip if\n"
    "its name ends in .gz.  Equal strings keep equal hashes: waste on the copy\n"
    "lists the same duplicates, lengths and hashes as on the original.  A\n"
    "value that is a placeholder already is kept, so redacting a copy again\n"
    "changes nothing.  Every line is copied, whatever its length\n"
    "(--max-line has no effect; --max-memory bounds the memory).  A regular\n"
    "OUT is written beside itself as OUT.tmp.XXXXXX and renamed when\n"
    "complete, so an existing OUT is replaced only by a whole copy; others\n"
    "(/dev/stdout, a pipe) are written to directly.  OUT must not be IN\n"
    "under any name.  One pass on one thread: --threads, --no-index and -v\n"
    "have no effect.\n";

/* Say what the library did, or why it could not. */
static int
redact(hscope_cli_opts *o, const char *in, const char *out)
{
    hscope_redact_t *r = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st = hscope_redact(&r, in, out, &o->lo, NULL, &err);
    if (st == HSCOPE_ERR_INVALID_ARG)
        return hscope_cli_usage_error(usage, "%s", err.message);
    if (st != HSCOPE_OK) {
        fprintf(stderr, "%s: redact: %s\n", prog, err.message);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    /* damaged lines are still copied, their values redacted as text */
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    uint64_t sk[HSCOPE_SKIP__COUNT];
    if (hscope_redact_stats(r, &s) == HSCOPE_OK) {
        for (int k = 0; k < HSCOPE_SKIP__COUNT; k++)
            sk[k] = hscope_redact_skipped(r, k);
        hscope_cli_warn_damage(in, &s, sk);
    }
    uint64_t lines, values;
    hscope_redact_totals(r, &lines, &values, NULL);
    fprintf(stderr, "%s: %s: %llu lines, %llu string values redacted\n", prog, out,
            (unsigned long long)lines, (unsigned long long)values);
    hscope_redact_free(r);
    return 0;
}

int
hscope_cli_redact(int argc, char **argv)
{
    if (hscope_cli_help(argc, argv, usage))
        return 0;
    hscope_cli_opts o;
    hscope_cli_opts_init(&o, "redact", usage, 0, 0);
    const char *io[2];
    hscope_cli_args a = { NULL, NULL, io, 0, 2, "IN and OUT only ('%s' is extra)" };
    int rc = hscope_cli_parse_args(&o, &a, argc, argv);
    if (rc)
        return rc;
    if (a.n != 2)
        return hscope_cli_usage_error(usage, "need IN and OUT%s", "");
    return redact(&o, io[0], io[1]);
}
