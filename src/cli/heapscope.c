/*
 * heapscope - command-line front door to libheapscope.
 *
 *   heapscope summary [--json] [options] DUMP
 *   heapscope tally [--by KEY] [--top N] [--sort count|memsize] [--json] DUMP
 *
 * Exit codes: 0 success, 1 bad input (unreadable, not a dump, strict-mode
 * parse error, limit), 2 usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <zlib.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "heapscope/heapscope.h"
#include "json_out.h"
#include "cli.h"
#include "report.h"

#define EXIT_BAD_INPUT 1
#define EXIT_USAGE 2

static const char *prog = "heapscope";

static const char usage_main[] =
    "usage: heapscope COMMAND [OPTIONS] DUMP...\n"
    "\n"
    "Analyse Ruby heap dumps written by ObjectSpace.dump_all (Ruby 2.1-4.0,\n"
    "plain or gzip).\n"
    "\n"
    "Commands:\n"
    "  summary   what is on the heap: counts, memsize by type and class, roots,\n"
    "            dangling references, skipped lines, load speed\n"
    "  tally     group live objects by type, class, file, file:line,\n"
    "            file:line:class (bleak_house style), method, generation or gem\n"
    "  diff      objects born between dumps A and B and still alive in C\n"
    "  timeline  what grows over time: per type/class/file:line series over many\n"
    "            dumps, slopes and a growing verdict; text, JSON, CSV, SVG plot\n"
    "  histogram memsize and objects per type or class of one dump (text, JSON, SVG)\n"
    "  export    dumps, objects and references as CSV/JSON lines for PostgreSQL\n"
    "            and DuckDB, with schema.sql\n"
    "  report    one self-contained HTML page: summary, histograms, sites,\n"
    "            retainers, dominator tree; leak suspects and timeline for 2+ dumps\n"
    "  show      one object: all its fields, what it references, what references it\n"
    "  generations  objects per allocation generation and each one's top sites\n"
    "  retained  the objects that keep the most memory alive (retained size)\n"
    "  root      paths from the GC roots to objects (text, JSON or DOT)\n"
    "  suspects  rank what holds the objects leaked between three dumps\n"
    "  redact    copy a dump with every string value replaced by length + hash\n"
    "  index     parse once, save DUMP.hsx: later commands open it instantly\n"
    "  dominators  the dominator tree: top, or the chain and subtree of ADDR\n"
    "\n"
    "Run 'heapscope COMMAND --help' for the options of a command.\n"
    "Options for every command:\n"
    "  -h, --help       show help and exit\n"
    "  -V, --version    print the version and exit\n"
    "\n"
    "Exit status: 0 success, 1 bad input, 2 usage error.\n";

static const char load_opts_help[] =
    "Load options:\n"
    "  --strict             stop at the first malformed line (default: skip\n"
    "                       and count malformed lines, reported in summary)\n"
    "  --max-line BYTES     longest accepted line (default 1 GiB; suffixes K M G)\n"
    "  --max-memory BYTES   fail instead of allocating more than this\n"
    "                       (suffixes K M G)\n"
    "  --threads N          parser threads, 1-64 (default: one per core, at\n"
    "                       most 8; 1 for files under 32 MiB, 2 MiB gzip)\n"
    "  --no-index           ignore DUMP.hsx (see heapscope index)\n"
    "  -v, --verbose        say whether an index was used, or rebuilt\n"
    "  --no-progress        no progress bar (shown on a terminal for long loads)\n";

static const char usage_summary[] =
    "usage: heapscope summary [--json] [--top N] [load options] DUMP\n"
    "\n"
    "Print what a heap dump holds: objects and references, ROOT categories,\n"
    "count and memsize per type, the top classes, dangling references\n"
    "(references to addresses that are not in the dump), lines that were\n"
    "skipped and why, and how long the load took.\n"
    "\n"
    "  --json        machine-readable output (all classes, not just the top)\n"
    "  --top N       classes to list in the text output (default 20)\n";

static const char usage_diff[] =
    "usage: heapscope diff [--by KEY] [--top N] [--addresses] [--json] [--grew]\n"
    "                      [--address-only] [--keep-dumper] [load options] A B [C]\n"
    "\n"
    "The heapleak recipe: objects present in B, absent from A and still present\n"
    "in C (with two dumps: new in B).  Take A, B and C from one process, e.g.\n"
    "after warm-up, after the suspect work, and after more work; run with\n"
    "ObjectSpace.trace_object_allocations_start so that identity is exact.\n"
    "\n"
    "An address reused by a new object is not a survivor: records are the same\n"
    "object only if address and type agree and, when traced, generation and\n"
    "file:line agree too (without tracing: the class address).  Objects the\n"
    "dumper itself allocated are left out and counted.  Only the last dump is\n"
    "held in memory; the others are streamed against it.  The dumps are always\n"
    "read themselves (--no-index and -v have no effect).  Warnings go to stderr\n"
    "(and into the JSON): damaged dumps, no allocation tracing, and dumps that\n"
    "cannot be one process's series (the same dump twice, dumps of different\n"
    "processes, an order that runs backwards).\n"
    "\n"
    "  --by KEY        group by type, class, file, file:line, file:line:class\n"
    "                  (default), method, generation or gem\n"
    "  --top N         groups to print (default 20; 0 = all)\n"
    "  --addresses     list every leaked address per group (text: 3 samples)\n"
    "  --json          {\"leaked\": {\"count\", \"memsize\", \"groups\": [...]},\n"
    "                  \"warnings\", ...}\n"
    "  --grew          instead: per group, the count in each dump and the\n"
    "                  deltas, largest growth first (dumps streamed in parallel)\n"
    "  --address-only  classic heapleak: compare addresses only\n"
    "  --keep-dumper   keep the objects the dumper itself allocated\n"
    "                  (ObjectSpace.dump_all's, the heapscope gem's snapshot code's)\n";

static const char usage_show[] =
    "usage: heapscope show [--json] [--values] [--top N] [load options] DUMP ADDR...\n"
    "\n"
    "Everything about one or more objects: type, class, memsize, allocation\n"
    "site, flags, the dump record itself, what the object references and what\n"
    "references it.  ADDR is hex with 0x, as in the dump (0x7f...); spaces\n"
    "around it are ignored.  An ADDR that is not an object of the dump is\n"
    "reported on stderr, after the others, and the exit status is 1.  A saved\n"
    "index (DUMP.hsx) keeps neither the records nor the values: with one, the\n"
    "record is left out (--no-index shows it), and --values reads the dump\n"
    "itself.  show reads a dump on one thread (--threads has no effect).\n"
    "\n"
    "  --json        machine-readable output (complete: every reference and\n"
    "                referrer, the whole record)\n"
    "  --top N       references and referrers to list in the text output\n"
    "                (default 20; 0 = all); a record longer than 2000 bytes is\n"
    "                cut, with the number of bytes left out\n"
    "  --values      also print STRING/SYMBOL/FLOAT values (off by default:\n"
    "                dumps hold secrets in plain text; text output: the first\n"
    "                200 bytes)\n";

static const char usage_generations[] =
    "usage: heapscope generations [--top N] [--json] [load options] DUMP\n"
    "\n"
    "heapy's generation view: live objects per allocation generation (GC\n"
    "count at allocation; needs trace_object_allocations), and for each\n"
    "generation the top file:line:class sites.  Old generations that keep\n"
    "growing between dumps point at a leak.\n"
    "\n"
    "  --top N       sites per generation (default 5)\n"
    "  --json        {\"generations\": [{\"generation\", \"count\", \"memsize\",\n"
    "                \"sites\": [{\"key\", \"count\", \"memsize\"}]}], \"untraced\": N}\n";

static const char usage_dominators[] =
    "usage: heapscope dominators [--depth N] [--top N] [--json] [--full]\n"
    "                            [--no-class-edges] [load options] DUMP [ADDR]\n"
    "\n"
    "The dominator tree: X dominates Y when every path from the GC roots to Y\n"
    "passes through X; X's retained size is what would be freed without X.\n"
    "Without ADDR, prints the top of the tree (below each ROOT category);\n"
    "with ADDR (hex with 0x, as in the dump), the dominator chain from a root\n"
    "down to the object and the subtree below it; an ADDR that is not an\n"
    "object of the dump exits 1.  Objects keep their class alive: object ->\n"
    "class edges are part of the graph unless --no-class-edges.\n"
    "\n"
    "  --depth N        levels of the subtree to print (default 2)\n"
    "  --top N          children per node, largest retained first (default 10;\n"
    "                   0 = all)\n"
    "  --json           machine-readable output\n"
    "  --full           with --json: the immediate dominator and retained size\n"
    "                   of every reachable object\n"
    "  --no-class-edges leave out the object -> class edges\n";

static const char usage_retained[] =
    "usage: heapscope retained [--top N] [--by KEY] [--folded] [--json]\n"
    "                          [--no-class-edges] [load options] DUMP\n"
    "\n"
    "The objects that keep the most memory alive (retained size: the memsize\n"
    "of everything they dominate), like Eclipse MAT's dominator view.\n"
    "\n"
    "  --top N          rows (default 20; 0 = all)\n"
    "  --by KEY         \"du for the heap\": retained size per class, file:line,\n"
    "                   gem... (any tally key), counting each object once under\n"
    "                   its topmost dominator of that key\n"
    "  --folded         the dominator tree as folded stacks (frame;frame bytes),\n"
    "                   for flamegraph.pl or speedscope\n"
    "  --json           {\"rows\": [{\"address\", \"type\", \"class\", \"memsize\",\n"
    "                   \"retained\", \"retained_count\"}]}\n"
    "  --no-class-edges leave out the object -> class edges\n";

static const char usage_root[] =
    "usage: heapscope root [--dot|--json] [--max-paths N] [--no-class-edges]\n"
    "                      [load options] DUMP ADDR...\n"
    "\n"
    "What keeps these objects alive: a shortest path from a GC root (ROOT\n"
    "category) to each ADDR, through the objects that reference it.  With\n"
    "--max-paths N, up to N paths per object, one through each of its\n"
    "referrers.  --dot writes a Graphviz graph like heapleak's (the given\n"
    "objects highlighted; render with dot -Tsvg).  ADDR is hex with 0x, as in\n"
    "the dump; an ADDR that is not an object of the dump is reported on\n"
    "stderr, after the paths of the others, and the exit status is 1.\n"
    "\n"
    "  --dot              a Graphviz graph of the paths\n"
    "  --json             {\"paths\": [{\"target\", \"root\", \"path\": [\"0x...\",\n"
    "                     ...]}]} (path: from the first object after the root\n"
    "                     to the target)\n"
    "  --max-paths N      paths per object (default 1)\n"
    "  --no-class-edges   leave out the object -> class edges\n";

static const char usage_suspects[] =
    "usage: heapscope suspects [--top N] [--json] [--no-class-edges]\n"
    "                          [load options] A B C\n"
    "\n"
    "The one-screen answer to \"where is my leak\": diff the three dumps\n"
    "(see heapscope diff), then rank the objects that hold the leaked objects\n"
    "(for each leaked object, the first object up its dominator chain that is\n"
    "not itself leaked) by how much leaked memory each keeps alive, with a\n"
    "path from a GC root to each holder.  The dumps are always read\n"
    "themselves (--no-index and -v have no effect).  Warnings go to stderr (and\n"
    "into the JSON), as for diff.\n"
    "\n"
    "  --top N            suspects to list (default 10)\n"
    "  --json             {\"leaked_count\", \"leaked_memsize\", \"warnings\",\n"
    "                     \"suspects\": [{\"address\", \"type\", \"class\",\n"
    "                     \"leaked_count\", \"leaked_memsize\", \"path\": [\"0x...\",\n"
    "                     ...]}]}, best first\n"
    "  --no-class-edges   leave out the object -> class edges\n";

static const char usage_redact[] =
    "usage: heapscope redact [load options] IN OUT\n"
    "\n"
    "Write a copy of a dump that is safe to share: every string value (the\n"
    "\"value\" of STRING, SYMBOL and FLOAT records: tokens, passwords, personal\n"
    "data) is replaced by its length and an xxHash64 of its bytes, e.g.\n"
    "  \"value\":\"[redacted 22 bytes xxh64:5b1f0c...]\"\n"
    "and every other byte stays the same, so heapscope's answers on the copy\n"
    "equal those on the original (but for the dump's size).  IN may be gzip;\n"
    "OUT is gzip if\n"
    "its name ends in .gz.  Equal strings keep equal hashes (duplicates stay\n"
    "visible).  Length and hash are those of the text as the dump writes it\n"
    "(JSON escapes included).  Every line is copied, whatever its length\n"
    "(--max-line has no effect; --max-memory bounds the memory).  A regular\n"
    "OUT is written beside itself as OUT.tmp.XXXXXX and renamed when\n"
    "complete, so an existing OUT is replaced only by a whole copy; others\n"
    "(/dev/stdout, a pipe) are written to directly.  OUT must not be IN\n"
    "under any name.  One pass on one thread: --threads, --no-index and -v\n"
    "have no effect.\n";

static const char usage_index[] =
    "usage: heapscope index [--out FILE] [load options] DUMP...\n"
    "\n"
    "Parse each DUMP once and save its model as DUMP.hsx (or FILE): every\n"
    "later command on DUMP maps the index in milliseconds instead of parsing\n"
    "(-v says so).  An index records the dump's size, mtime and a hash of its\n"
    "ends: if the dump changes, the index is stale and rebuilt by the next\n"
    "command; a damaged index is detected (checksums, bounds), reported, and\n"
    "rebuilt from the dump.  index always parses (--no-index has no effect).\n"
    "\n"
    "  --out FILE    where to save (one DUMP only; default DUMP.hsx)\n";

static const char usage_tally[] =
    "usage: heapscope tally [--by KEY] [--top N] [--sort count|memsize] [--stream]\n"
    "                       [--keep-dumper] [--json] [load options] DUMP\n"
    "\n"
    "Group live objects by KEY and print count and memsize per group, largest\n"
    "first (ties by key).  KEY is one of:\n"
    "  type, class, file, file:line, file:line:class (default; bleak_house's\n"
    "  key, untraced objects under (none):0), method, generation, gem\n"
    "\n"
    "  --by KEY      the grouping (default file:line:class)\n"
    "  --top N       rows to print (default 20; 0 = all)\n"
    "  --sort WHAT   count (default) or memsize\n"
    "  --stream      fold the dump without building the object graph: memory\n"
    "                bounded by the number of groups (same results)\n"
    "  --keep-dumper keep the objects the dumper itself allocated (default: left\n"
    "                out and counted: ObjectSpace.dump_all's, the heapscope gem's\n"
    "                snapshot code's)\n"
    "  --json        {\"by\": KEY, \"groups\", \"excluded_dumper_objects\",\n"
    "                \"rows\": [{\"key\", \"count\", \"memsize\"}, ...]}\n"
    "\n"
    "--by gem: the gem of each object's allocation file: NAME-VERSION for\n"
    "gems (RubyGems, bundler, Debian's rubygems-integration), NAME below\n"
    "vendor_ruby or site_ruby, (stdlib) for Ruby's own library directories,\n"
    "(ruby) for <internal:...> files, (app) for every other file, (none)\n"
    "without allocation info.\n";

/* ------------------------------------------------------------------ */
/* helpers                                                            */
/* ------------------------------------------------------------------ */





static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Progress bar on stderr: only on a terminal and only after 1 s. */
typedef struct progress {
    double t0;
    int shown;
    const char *name;
} progress;

static int32_t
progress_cb(void *ud, uint64_t done, uint64_t total)
{
    progress *p = ud;
    double t = now_s() - p->t0;
    if (t < 1.0)
        return 0;
    p->shown = 1;
    double mb = (double)done / 1048576.0;
    if (total) {
        int pct = (int)(100.0 * (double)done / (double)total);
        int bars = pct / 4;
        char bar[26];
        memset(bar, '#', (size_t)bars);
        memset(bar + bars, '.', (size_t)(25 - bars));
        bar[25] = '\0';
        fprintf(stderr, "\r%s: loading [%s] %3d%% %.0f MB/s ", prog, bar, pct,
                mb / t);
    } else {
        fprintf(stderr, "\r%s: loading %.0f MB read, %.0f MB/s ", prog, mb, mb / t);
    }
    fflush(stderr);
    return 0;
}

typedef struct common {
    hscope_load_options lo;
    int progress;
    progress pr;
    int no_index, verbose;
    int from_index; /* set by load_dump: the model came from DUMP.hsx */
} common;

/* Parse a load option at argv[*i]; 1 if consumed, 0 if not ours, -1 bad.
 * The options every command shares (--strict, --max-line, --max-memory)
 * are hscope_cli_load_option's; these commands add the progress bar, the
 * saved index and the parser threads. */
static int
load_option(common *c, int argc, char **argv, int *i, const char *usage)
{
    const char *a = argv[*i];
    if (strcmp(a, "--no-progress") == 0) {
        c->progress = 0;
        return 1;
    }
    if (strcmp(a, "--no-index") == 0) {
        c->no_index = 1;
        return 1;
    }
    if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
        c->verbose = 1;
        return 1;
    }
    if (strcmp(a, "--threads") == 0) {
        uint64_t t;
        if (*i + 1 >= argc || hscope_cli_parse_size(argv[++*i], &t) != 0 || t == 0 || t > 64) {
            hscope_cli_usage_error(usage, "--threads needs a number from 1 to 64%s", "");
            return -1;
        }
        c->lo.threads = (uint32_t)t;
        return 1;
    }
    return hscope_cli_load_option(&c->lo, argc, argv, i, usage);
}

static hscope_heap_t *
load_dump(common *c, const char *path)
{
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_heap_t *h = NULL;
    /* a fresh DUMP.hsx is used instead of parsing; a stale or damaged one
     * is rebuilt after the parse */
    char ix[4096];
    int have_ix = !c->no_index && (size_t)snprintf(ix, sizeof(ix), "%s.hsx", path) < sizeof(ix) &&
                  access(ix, R_OK) == 0;
    if (have_ix) {
        hscope_status ist = hscope_heap_open_saved(&h, ix, path, &c->lo, &err);
        if (ist == HSCOPE_OK) {
            if (c->verbose)
                fprintf(stderr, "%s: using the index %s\n", prog, ix);
            c->from_index = 1;
            hscope_cli_warn_heap_damage(path, h); /* the index keeps the counts */
            return h;
        }
        if (ist == HSCOPE_ERR_STALE) {
            if (c->verbose)
                fprintf(stderr, "%s: %s; rebuilding it\n", prog, err.message);
        } else {
            fprintf(stderr, "%s: warning: %s: %s; reading the dump instead\n", prog, ix,
                    err.message);
        }
        hscope_error_init(&err);
    }
    if (c->progress && isatty(2)) {
        c->pr.t0 = now_s();
        c->pr.name = path;
        c->lo.progress = progress_cb;
        c->lo.progress_user_data = &c->pr;
    }
    hscope_status st = hscope_heap_open_file(&h, path, &c->lo, &err);
    if (c->pr.shown)
        fprintf(stderr, "\r\033[K");
    if (st != HSCOPE_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, err.message);
        return NULL;
    }
    hscope_cli_warn_heap_damage(path, h);
    if (have_ix) {
        hscope_error e2 = HSCOPE_ERROR_INIT;
        if (hscope_heap_save(h, ix, path, &e2) != HSCOPE_OK)
            fprintf(stderr, "%s: warning: cannot rebuild %s: %s\n", prog, ix, e2.message);
        else if (c->verbose)
            fprintf(stderr, "%s: rebuilt the index %s\n", prog, ix);
    }
    return h;
}

static int
want_help(int argc, char **argv, const char *usage)
{
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage, stdout);
            fputs("\n", stdout);
            fputs(load_opts_help, stdout);
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* summary                                                            */
/* ------------------------------------------------------------------ */

/* Unique count of a small id list, via sort of a copy. */
static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t
root_unique(const hscope_heap_t *h, uint32_t c)
{
    const hscope_id *t;
    const uint64_t *d;
    uint64_t n, nd;
    hscope_heap_root_targets(h, c, &t, &n, NULL);
    hscope_heap_root_dangling(h, c, &d, &nd);
    if (n + nd == 0)
        return 0;
    uint64_t *a = malloc((n + nd) * sizeof(uint64_t));
    if (!a)
        return 0;
    for (uint64_t i = 0; i < n; i++)
        a[i] = hscope_heap_object_address(h, t[i]);
    memcpy(a + n, d, nd * sizeof(uint64_t));
    qsort(a, n + nd, sizeof(uint64_t), cmp_u64);
    uint64_t u = 1;
    for (uint64_t i = 1; i < n + nd; i++)
        u += a[i] != a[i - 1];
    free(a);
    return u;
}

static void
summary_json(hscope_heap_t *h, const char *path, hscope_tally_t *bt,
             hscope_tally_t *bc)
{
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    hscope_heap_stats(h, &s);
    jw w;
    jw_init(&w, stdout, 1);
    jw_obj(&w);
    jw_key(&w, "dump"); jw_str(&w, path);
    jw_key(&w, "heapscope_version"); jw_str(&w, hscope_version_string());
    jw_key(&w, "gzip"); jw_bool(&w, (int)s.gzip);
    jw_key(&w, "input_bytes"); jw_u64(&w, s.input_bytes);
    jw_key(&w, "bytes"); jw_u64(&w, s.bytes);
    jw_key(&w, "lines"); jw_u64(&w, s.lines);
    jw_key(&w, "objects"); jw_u64(&w, s.objects);
    jw_key(&w, "references"); jw_u64(&w, s.references);
    jw_key(&w, "total_memsize"); jw_u64(&w, s.total_memsize);
    jw_key(&w, "shapes"); jw_u64(&w, s.shapes);
    jw_key(&w, "free_slots"); jw_u64(&w, s.free_slots);
    jw_key(&w, "roots");
    jw_obj(&w);
    for (uint32_t c = 0; c < hscope_heap_root_category_count(h); c++) {
        const hscope_id *t;
        uint64_t n, nd;
        hscope_heap_root_targets(h, c, &t, &n, &nd);
        jw_key(&w, hscope_heap_root_category_name(h, c));
        jw_obj(&w);
        jw_key(&w, "records"); jw_u64(&w, hscope_heap_root_category_records(h, c));
        jw_key(&w, "references"); jw_u64(&w, n + nd);
        jw_key(&w, "unique"); jw_u64(&w, root_unique(h, c));
        jw_key(&w, "dangling"); jw_u64(&w, nd);
        jw_end_obj(&w);
    }
    jw_end_obj(&w);
    jw_key(&w, "dangling_references"); jw_u64(&w, s.dangling_addresses);
    jw_key(&w, "dangling_edges"); jw_u64(&w, s.dangling_references);
    jw_key(&w, "duplicate_addresses"); jw_u64(&w, s.duplicate_addresses);
    jw_key(&w, "unknown_keys"); jw_u64(&w, s.unknown_keys);
    jw_key(&w, "unknown_types"); jw_u64(&w, s.unknown_types);
    jw_key(&w, "truncated"); jw_bool(&w, (int)s.truncated);
    jw_key(&w, "skipped_lines"); jw_u64(&w, s.skipped_lines);
    jw_key(&w, "skipped");
    jw_obj(&w);
    for (int32_t r = 0; r < HSCOPE_SKIP__COUNT; r++) {
        uint64_t k = hscope_heap_skipped(h, r);
        if (k) {
            jw_key(&w, hscope_skip_reason_name(r));
            jw_u64(&w, k);
        }
    }
    jw_end_obj(&w);
    jw_key(&w, "skipped_examples");
    jw_arr(&w);
    int32_t reason;
    uint64_t ln;
    for (uint32_t i = 0; (ln = hscope_heap_skipped_line(h, i, &reason)) != 0; i++) {
        jw_obj(&w);
        jw_key(&w, "line"); jw_u64(&w, ln);
        jw_key(&w, "reason"); jw_str(&w, hscope_skip_reason_name(reason));
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    const struct { const char *k; hscope_tally_t *t; } groups[] = {
        { "by_type", bt }, { "by_class", bc } };
    for (int g = 0; g < 2; g++) {
        jw_key(&w, groups[g].k);
        jw_obj(&w);
        for (uint64_t i = 0; i < hscope_tally_row_count(groups[g].t); i++) {
            jw_key(&w, hscope_tally_row_key(groups[g].t, i));
            jw_obj(&w);
            jw_key(&w, "count"); jw_u64(&w, hscope_tally_row_count_of(groups[g].t, i));
            jw_key(&w, "memsize"); jw_u64(&w, hscope_tally_row_memsize(groups[g].t, i));
            jw_end_obj(&w);
        }
        jw_end_obj(&w);
    }
    double sec = (double)s.load_ns / 1e9;
    jw_key(&w, "load");
    jw_obj(&w);
    jw_key(&w, "seconds"); jw_f64(&w, sec, 4);
    jw_key(&w, "mb_per_s"); jw_f64(&w, sec > 0 ? (double)s.bytes / 1048576.0 / sec : 0, 1);
    jw_key(&w, "model_bytes"); jw_u64(&w, s.model_bytes);
    jw_key(&w, "index_bytes"); jw_u64(&w, s.index_bytes);
    jw_key(&w, "bytes_per_object");
    jw_f64(&w, s.objects ? (double)(s.model_bytes - 4 * s.references) / (double)s.objects : 0, 2);
    jw_end_obj(&w);
    jw_end_obj(&w);
    jw_done(&w);
}

static void
print_table(hscope_tally_t *t, const char *title, uint64_t total_count,
            uint64_t total_mem)
{
    char c[32], m[32];
    printf("\n%-44s %12s %6s %12s %6s\n", title, "count", "%", "memsize", "%");
    for (uint64_t i = 0; i < hscope_tally_row_count(t); i++) {
        uint64_t n = hscope_tally_row_count_of(t, i), b = hscope_tally_row_memsize(t, i);
        hscope_cli_grouped(n, c, sizeof(c));
        hscope_cli_human_bytes((double)(b), m, sizeof(m));
        printf("  %-42s %12s %5.1f%% %12s %5.1f%%\n", hscope_tally_row_key(t, i), c,
               total_count ? 100.0 * (double)n / (double)total_count : 0.0, m,
               total_mem ? 100.0 * (double)b / (double)total_mem : 0.0);
    }
    if (hscope_tally_group_count(t) > hscope_tally_row_count(t))
        printf("  ... %llu more\n",
               (unsigned long long)(hscope_tally_group_count(t) - hscope_tally_row_count(t)));
}

static void
summary_text(hscope_heap_t *h, const char *path, hscope_tally_t *bt,
             hscope_tally_t *bc)
{
    hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
    hscope_heap_stats(h, &s);
    char a[32], b[32], c[32];
    hscope_cli_human_bytes((double)(s.bytes), a, sizeof(a));
    printf("%s: %s%s\n", path, a, s.gzip ? " (gzip)" : "");
    hscope_cli_grouped(s.objects, a, sizeof(a));
    hscope_cli_human_bytes((double)(s.total_memsize), b, sizeof(b));
    printf("  objects       %s, memsize %s\n", a, b);
    hscope_cli_grouped(s.references, a, sizeof(a));
    hscope_cli_grouped(s.dangling_references, b, sizeof(b));
    hscope_cli_grouped(s.dangling_addresses, c, sizeof(c));
    printf("  references    %s (dangling: %s to %s missing addresses)\n", a, b, c);
    printf("  roots        ");
    for (uint32_t i = 0; i < hscope_heap_root_category_count(h); i++) {
        const hscope_id *t;
        uint64_t n, nd;
        hscope_heap_root_targets(h, i, &t, &n, &nd);
        printf(" %s %llu%s", hscope_heap_root_category_name(h, i),
               (unsigned long long)(n + nd),
               i + 1 < hscope_heap_root_category_count(h) ? "," : "");
    }
    printf("%s\n", hscope_heap_root_category_count(h) ? "" : " none (a since: dump?)");
    if (s.shapes || s.free_slots)
        printf("  shapes        %llu; free slots %llu\n", (unsigned long long)s.shapes,
               (unsigned long long)s.free_slots);
    if (s.skipped_lines) {
        printf("  skipped lines %llu:", (unsigned long long)s.skipped_lines);
        for (int32_t r = 0; r < HSCOPE_SKIP__COUNT; r++)
            if (hscope_heap_skipped(h, r))
                printf(" %s %llu", hscope_skip_reason_name(r),
                       (unsigned long long)hscope_heap_skipped(h, r));
        printf(" (lines");
        int32_t reason;
        uint64_t ln;
        for (uint32_t i = 0; i < 5 && (ln = hscope_heap_skipped_line(h, i, &reason)); i++)
            printf("%s %llu", i ? "," : "", (unsigned long long)ln);
        printf("%s)\n", s.skipped_lines > 5 ? ", ..." : "");
    }
    if (s.unknown_keys || s.unknown_types)
        printf("  unknown       %llu keys, %llu objects of unknown types\n",
               (unsigned long long)s.unknown_keys, (unsigned long long)s.unknown_types);
    if (s.duplicate_addresses)
        printf("  duplicates    %llu objects repeat an earlier address\n",
               (unsigned long long)s.duplicate_addresses);
    double sec = (double)s.load_ns / 1e9;
    hscope_cli_human_bytes((double)(s.model_bytes + s.index_bytes), a, sizeof(a));
    printf("  load          %.2f s, %.0f MB/s; model %s (%.1f bytes/object + 4/reference)\n",
           sec, sec > 0 ? (double)s.bytes / 1048576.0 / sec : 0.0, a,
           s.objects ? (double)(s.model_bytes - 4 * s.references) / (double)s.objects : 0.0);
    print_table(bt, "by type", s.objects, s.total_memsize);
    print_table(bc, "top classes", s.objects, s.total_memsize);
}

static int
cmd_summary(int argc, char **argv)
{
    if (want_help(argc, argv, usage_summary))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 0, 0 };
    int json = 0;
    uint64_t top = 20;
    const char *path = NULL;
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_summary);
        if (r < 0)
            return EXIT_USAGE;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--top") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &top) != 0)
                return hscope_cli_usage_error(usage_summary, "--top needs a number%s", "");
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return hscope_cli_usage_error(usage_summary, "unknown option '%s'", argv[i]);
        } else if (!path) {
            path = argv[i];
        } else {
            return hscope_cli_usage_error(usage_summary, "summary takes one DUMP ('%s' is extra)", argv[i]);
        }
    }
    if (!path)
        return hscope_cli_usage_error(usage_summary, "no DUMP given%s", "");
    hscope_heap_t *h = load_dump(&c, path);
    if (!h)
        return EXIT_BAD_INPUT;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    hscope_tally_t *bt = NULL, *bc = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    int rc = 0;
    if (hscope_tally_compute(&bt, h, "type", &to, &err) != HSCOPE_OK)
        goto fail;
    to.top = json ? 0 : top;
    if (hscope_tally_compute(&bc, h, "class", &to, &err) != HSCOPE_OK)
        goto fail;
    if (json)
        summary_json(h, path, bt, bc);
    else
        summary_text(h, path, bt, bc);
    goto out;
fail:
    fprintf(stderr, "%s: %s\n", prog, err.message);
    rc = EXIT_BAD_INPUT;
out:
    hscope_tally_free(bt);
    hscope_tally_free(bc);
    hscope_heap_free(h);
    return rc;
}

/* ------------------------------------------------------------------ */
/* tally                                                              */
/* ------------------------------------------------------------------ */


static int
cmd_tally(int argc, char **argv)
{
    if (want_help(argc, argv, usage_tally))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 0, 0 };
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    to.top = 20;
    to.flags = HSCOPE_TALLY_SKIP_DUMPER;
    int json = 0, stream = 0;
    const char *by = "file:line:class", *path = NULL;
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_tally);
        if (r < 0)
            return EXIT_USAGE;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--keep-dumper") == 0) {
            to.flags &= ~HSCOPE_TALLY_SKIP_DUMPER;
        } else if (strcmp(argv[i], "--stream") == 0) {
            stream = 1;
        } else if (strcmp(argv[i], "--by") == 0) {
            if (i + 1 >= argc)
                return hscope_cli_usage_error(usage_tally, "--by needs a KEY%s", "");
            by = argv[++i];
        } else if (strcmp(argv[i], "--top") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &to.top) != 0)
                return hscope_cli_usage_error(usage_tally, "--top needs a number%s", "");
        } else if (strcmp(argv[i], "--sort") == 0) {
            if (i + 1 >= argc)
                return hscope_cli_usage_error(usage_tally, "--sort needs count or memsize%s", "");
            i++;
            if (strcmp(argv[i], "count") == 0)
                to.sort = HSCOPE_SORT_COUNT;
            else if (strcmp(argv[i], "memsize") == 0)
                to.sort = HSCOPE_SORT_MEMSIZE;
            else
                return hscope_cli_usage_error(usage_tally, "--sort: expected count or memsize, not '%s'", argv[i]);
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return hscope_cli_usage_error(usage_tally, "unknown option '%s'", argv[i]);
        } else if (!path) {
            path = argv[i];
        } else {
            return hscope_cli_usage_error(usage_tally, "tally takes one DUMP ('%s' is extra)", argv[i]);
        }
    }
    if (!path)
        return hscope_cli_usage_error(usage_tally, "no DUMP given%s", "");
    if (!hscope_cli_valid_key(by))
        return hscope_cli_usage_error(usage_tally, "unknown --by key '%s'", by);
    hscope_heap_t *h = NULL;
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_status st;
    if (stream) {
        st = hscope_tally_file(&t, path, by, &c.lo, &to, &err);
        if (st == HSCOPE_OK)
            hscope_cli_warn_tally_damage(path, t);
    } else {
        if (!(h = load_dump(&c, path)))
            return EXIT_BAD_INPUT;
        st = hscope_tally_compute(&t, h, by, &to, &err);
    }
    if (st != HSCOPE_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, err.message);
        hscope_heap_free(h);
        return EXIT_BAD_INPUT;
    }
    if (json) {
        jw w;
        jw_init(&w, stdout, 0);
        jw_obj(&w);
        jw_key(&w, "by"); jw_str(&w, by);
        jw_key(&w, "groups"); jw_u64(&w, hscope_tally_group_count(t));
        jw_key(&w, "excluded_dumper_objects"); jw_u64(&w, hscope_tally_excluded(t));
        jw_key(&w, "rows");
        jw_arr(&w);
        for (uint64_t i = 0; i < hscope_tally_row_count(t); i++) {
            jw_obj(&w);
            jw_key(&w, "key"); jw_str(&w, hscope_tally_row_key(t, i));
            jw_key(&w, "count"); jw_u64(&w, hscope_tally_row_count_of(t, i));
            jw_key(&w, "memsize"); jw_u64(&w, hscope_tally_row_memsize(t, i));
            jw_end_obj(&w);
        }
        jw_end_arr(&w);
        jw_end_obj(&w);
        jw_done(&w);
    } else {
        uint64_t n, m;
        hscope_tally_totals(t, &n, &m);
        char title[64];
        snprintf(title, sizeof(title), "by %s", by);
        print_table(t, title, n, m);
        if (hscope_tally_excluded(t))
            printf("\n");
        hscope_cli_dumper_note(stdout, hscope_tally_excluded(t));
    }
    hscope_tally_free(t);
    hscope_heap_free(h);
    return 0;
}

/* ------------------------------------------------------------------ */
/* diff                                                               */
/* ------------------------------------------------------------------ */

static void
diff_json(hscope_diff_t *d, hscope_tally_t *t, const char *by, char **paths,
          int np, int all_addr)
{
    hscope_heap_t *h = hscope_diff_heap(d);
    jw w;
    jw_init(&w, stdout, 0);
    jw_obj(&w);
    jw_key(&w, "dumps");
    jw_arr(&w);
    for (int i = 0; i < np; i++)
        jw_str(&w, paths[i]);
    jw_end_arr(&w);
    jw_key(&w, "objects");
    jw_arr(&w);
    for (int i = 0; i < np; i++)
        jw_u64(&w, hscope_diff_snapshot_objects(d, (uint32_t)i));
    jw_end_arr(&w);
    jw_key(&w, "by"); jw_str(&w, by);
    jw_key(&w, "leaked");
    jw_obj(&w);
    jw_key(&w, "count"); jw_u64(&w, hscope_diff_count(d));
    jw_key(&w, "memsize"); jw_u64(&w, hscope_diff_memsize(d));
    jw_key(&w, "group_count"); jw_u64(&w, hscope_tally_group_count(t));
    jw_key(&w, "groups");
    jw_arr(&w);
    for (uint64_t i = 0; i < hscope_tally_row_count(t); i++) {
        jw_obj(&w);
        jw_key(&w, "key"); jw_str(&w, hscope_tally_row_key(t, i));
        jw_key(&w, "count"); jw_u64(&w, hscope_tally_row_count_of(t, i));
        jw_key(&w, "memsize"); jw_u64(&w, hscope_tally_row_memsize(t, i));
        if (all_addr) {
            const hscope_id *ids;
            uint64_t n;
            hscope_tally_row_objects(t, i, &ids, &n);
            jw_key(&w, "addresses");
            jw_arr(&w);
            for (uint64_t k = 0; k < n; k++)
                jw_addr(&w, hscope_heap_object_address(h, ids[k]));
            jw_end_arr(&w);
        }
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_end_obj(&w);
    jw_key(&w, "excluded_dumper_objects"); jw_u64(&w, hscope_diff_excluded(d));
    jw_key(&w, "reused_addresses"); jw_u64(&w, hscope_diff_reused_addresses(d));
    jw_key(&w, "warnings"); jw_lines(&w, hscope_diff_warning_text(d));
    jw_end_obj(&w);
    jw_done(&w);
}

static void
diff_text(hscope_diff_t *d, hscope_tally_t *t, const char *by, char **paths,
          int np, int all_addr)
{
    hscope_heap_t *h = hscope_diff_heap(d);
    char a[32], b[32];
    for (int i = 0; i < np; i++) {
        hscope_cli_grouped(hscope_diff_snapshot_objects(d, (uint32_t)i), a, sizeof(a));
        printf("%c: %s (%s objects)\n", 'A' + i, paths[i], a);
    }
    hscope_cli_grouped(hscope_diff_count(d), a, sizeof(a));
    hscope_cli_human_bytes((double)(hscope_diff_memsize(d)), b, sizeof(b));
    if (np == 3)
        printf("\nleaked: %s objects, %s (new in B since A, still alive in C)\n", a, b);
    else
        printf("\nnew in B: %s objects, %s (absent from A)\n", a, b);
    if (hscope_diff_excluded(d))
        printf("left out: %llu objects allocated by the dumper itself\n",
               (unsigned long long)hscope_diff_excluded(d));
    if (!hscope_tally_row_count(t))
        return;
    printf("\n%-50s %10s %10s  %s\n", by, "count", "memsize", "addresses");
    for (uint64_t i = 0; i < hscope_tally_row_count(t); i++) {
        const hscope_id *ids;
        uint64_t n;
        hscope_tally_row_objects(t, i, &ids, &n);
        hscope_cli_grouped(hscope_tally_row_count_of(t, i), a, sizeof(a));
        hscope_cli_human_bytes((double)hscope_tally_row_memsize(t, i), b, sizeof(b));
        printf("  %-48s %10s %10s ", hscope_tally_row_key(t, i), a, b);
        uint64_t shown = all_addr ? n : (n < 3 ? n : 3);
        for (uint64_t k = 0; k < shown; k++)
            printf(" 0x%llx", (unsigned long long)hscope_heap_object_address(h, ids[k]));
        printf("%s\n", shown < n ? " ..." : "");
    }
    if (hscope_tally_group_count(t) > hscope_tally_row_count(t))
        printf("  ... %llu more groups (--top 0 shows all)\n",
               (unsigned long long)(hscope_tally_group_count(t) - hscope_tally_row_count(t)));
}

static int
cmd_diff(int argc, char **argv)
{
    if (want_help(argc, argv, usage_diff))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 0, 0 };
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    hscope_diff_options dopt = HSCOPE_DIFF_OPTIONS_INIT;
    to.top = 20;
    int json = 0, all_addr = 0, np = 0, grew = 0;
    const char *by = "file:line:class";
    char *paths[3];
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_diff);
        if (r < 0)
            return EXIT_USAGE;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--addresses") == 0) {
            all_addr = 1;
        } else if (strcmp(argv[i], "--grew") == 0) {
            grew = 1;
        } else if (strcmp(argv[i], "--address-only") == 0) {
            dopt.flags |= HSCOPE_DIFF_ADDRESS_ONLY;
        } else if (strcmp(argv[i], "--keep-dumper") == 0) {
            dopt.flags |= HSCOPE_DIFF_KEEP_DUMPER;
        } else if (strcmp(argv[i], "--by") == 0) {
            if (i + 1 >= argc)
                return hscope_cli_usage_error(usage_diff, "--by needs a KEY%s", "");
            by = argv[++i];
        } else if (strcmp(argv[i], "--top") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &to.top) != 0)
                return hscope_cli_usage_error(usage_diff, "--top needs a number%s", "");
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return hscope_cli_usage_error(usage_diff, "unknown option '%s'", argv[i]);
        } else if (np < 3) {
            paths[np++] = argv[i];
        } else {
            return hscope_cli_usage_error(usage_diff, "diff takes two or three dumps ('%s' is extra)", argv[i]);
        }
    }
    if (np < 2)
        return hscope_cli_usage_error(usage_diff, "diff needs dumps A B [C]%s", "");
    if (!hscope_cli_valid_key(by))
        return hscope_cli_usage_error(usage_diff, "unknown --by key '%s'", by);
    if (grew)
        return hscope_cli_diff_grew(paths, np, by, to.top, json, &c.lo,
                                    (dopt.flags & HSCOPE_DIFF_KEEP_DUMPER) != 0);
    if (c.progress && isatty(2)) {
        c.pr.t0 = now_s();
        c.lo.progress = progress_cb;
        c.lo.progress_user_data = &c.pr;
    }
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_diff_t *d = NULL;
    hscope_tally_t *t = NULL;
    hscope_status st = hscope_diff_files(&d, paths[0], paths[1], np == 3 ? paths[2] : NULL,
                                         &c.lo, &dopt, &err);
    if (c.pr.shown)
        fprintf(stderr, "\r\033[K");
    if (st != HSCOPE_OK) {
        fprintf(stderr, "%s: diff: %s\n", prog, err.message);
        return EXIT_BAD_INPUT;
    }
    if ((st = hscope_diff_tally(&t, d, by, &to, &err)) != HSCOPE_OK) {
        fprintf(stderr, "%s: diff: %s\n", prog, err.message);
        hscope_diff_free(d);
        return EXIT_BAD_INPUT;
    }
    /* warnings on stderr (and in the JSON): the dumps cannot support an
     * exact answer, or do not look like one process's series */
    hscope_cli_warn_text(hscope_diff_warning_text(d));
    if (json)
        diff_json(d, t, by, paths, np, all_addr);
    else
        diff_text(d, t, by, paths, np, all_addr);
    hscope_tally_free(t);
    hscope_diff_free(d);
    return 0;
}

/* ------------------------------------------------------------------ */
/* show                                                               */
/* ------------------------------------------------------------------ */

typedef struct want {
    uint64_t addr;
    char prefix[48];
    size_t plen;
    char *line;        /* the record, when found */
    size_t len;
} want;

typedef struct wantlist {
    want *w;
    int n;
} wantlist;

static int32_t
grab_lines(void *ud, const char *line, uint64_t len, uint64_t lineno)
{
    (void)lineno;
    wantlist *wl = ud;
    if (len < 16 || line[0] != '{')
        return 0;
    for (int i = 0; i < wl->n; i++) {
        want *w = &wl->w[i];
        if (!w->line && len > w->plen && memcmp(line, w->prefix, w->plen) == 0) {
            w->line = malloc(len + 1);
            if (w->line) {
                memcpy(w->line, line, len);
                w->line[len] = '\0';
                w->len = len;
            }
        }
    }
    return 0;
}

/* The record with any "value" string replaced (dumps hold secrets). */
static void
print_record(FILE *out, const char *line, int values)
{
    const char *p = line;
    const char *v;
    while (!values && (v = strstr(p, "\"value\":\"")) != NULL) {
        fwrite(p, 1, (size_t)(v - p), out);
        fputs("\"value\":\"(hidden; --values shows it)\"", out);
        const char *q = v + 9;
        while (*q && *q != '"')
            q += (*q == '\\' && q[1]) ? 2 : 1;
        p = *q ? q + 1 : q;
    }
    fputs(p, out);
}

static void
flag_names(uint32_t f, jw *w, FILE *out)
{
    static const char *const names[] = { "frozen", "embedded", "shared", "fstring",
        "old", "marked", "uncollectible", "wb_protected", "pinned", "broken",
        "marking", "remembered", "singleton", "chilled" };
    int first = 1;
    for (int b = 0; b < 14; b++) {
        if (!(f & (1u << b)))
            continue;
        if (w)
            jw_str(w, names[b]);
        else
            fprintf(out, "%s%s", first ? "" : ", ", names[b]);
        first = 0;
    }
    if (!w && first)
        fputs("(none)", out);
}

static void
obj_brief_json(jw *w, const hscope_heap_t *h, hscope_id id)
{
    jw_obj(w);
    jw_key(w, "address"); jw_addr(w, hscope_heap_object_address(h, id));
    jw_key(w, "type"); jw_str(w, hscope_heap_type_name(h, hscope_heap_object_type(h, id)));
    jw_key(w, "class"); jw_str(w, hscope_heap_object_label(h, id));
    jw_key(w, "memsize"); jw_u64(w, hscope_heap_object_memsize(h, id));
    jw_end_obj(w);
}

static void
obj_brief_text(const hscope_heap_t *h, hscope_id id)
{
    char m[32];
    hscope_cli_human_bytes((double)hscope_heap_object_memsize(h, id), m, sizeof(m));
    printf("  0x%-14llx %-8s %-36s %10s\n",
           (unsigned long long)hscope_heap_object_address(h, id),
           hscope_heap_type_name(h, hscope_heap_object_type(h, id)),
           hscope_heap_object_label(h, id), m);
}

/* Text output: a record longer than this is cut (show --json: whole). */
#define SHOW_RECORD_MAX 2000

/* The record (values hidden unless asked), cut after SHOW_RECORD_MAX
 * bytes at a character boundary, with the number of bytes cut. */
static void
print_record_cut(const char *line, int values)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        print_record(stdout, line, values);
        return;
    }
    print_record(m, line, values);
    if (fclose(m) != 0 || !buf) {
        free(buf);
        print_record(stdout, line, values);
        return;
    }
    size_t keep = len;
    if (len > SHOW_RECORD_MAX) {
        keep = SHOW_RECORD_MAX;
        while (keep > 0 && ((unsigned char)buf[keep] & 0xC0) == 0x80)
            keep--; /* not inside a UTF-8 sequence */
    }
    fwrite(buf, 1, keep, stdout);
    if (keep < len) {
        char n[32];
        hscope_cli_grouped((uint64_t)(len - keep), n, sizeof(n));
        printf(" ... (%s more bytes cut; show --json prints the whole record)", n);
    }
    free(buf);
}

/* A list of references or referrers: the first `top` (0: all). */
static void
print_brief_list(const hscope_heap_t *h, const hscope_id *ids, uint64_t n, uint64_t top)
{
    uint64_t shown = top && top < n ? top : n;
    for (uint64_t i = 0; i < shown; i++)
        obj_brief_text(h, ids[i]);
    if (shown < n)
        printf("  ... %llu more (--top 0 lists all)\n", (unsigned long long)(n - shown));
}

/* Returns 0, or -1 when the address is not an object of the dump. */
static int
show_one(hscope_heap_t *h, const want *wt, int json, jw *w, int values, int from_index,
         uint64_t top)
{
    hscope_id id;
    if (hscope_heap_find(h, wt->addr, &id) != HSCOPE_OK) {
        if (json) {
            jw_obj(w);
            jw_key(w, "address"); jw_addr(w, wt->addr);
            jw_key(w, "found"); jw_bool(w, 0);
            jw_end_obj(w);
        }
        return -1;
    }
    const hscope_id *refs, *srcs = NULL;
    uint64_t nrefs, nsrc = 0;
    hscope_heap_object_references(h, id, &refs, &nrefs);
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_heap_object_referrers(h, id, &srcs, &nsrc, &err) != HSCOPE_OK)
        nsrc = 0;
    const char *val = NULL;
    uint64_t vlen = 0;
    if (values)
        hscope_heap_object_value(h, id, &val, &vlen);
    const char *file = hscope_heap_object_file(h, id), *meth = hscope_heap_object_method(h, id);
    int64_t gen = hscope_heap_object_generation(h, id);
    if (json) {
        jw_obj(w);
        jw_key(w, "address"); jw_addr(w, wt->addr);
        jw_key(w, "found"); jw_bool(w, 1);
        jw_key(w, "type"); jw_str(w, hscope_heap_type_name(h, hscope_heap_object_type(h, id)));
        jw_key(w, "class"); jw_str(w, hscope_heap_object_label(h, id));
        uint64_t ca = hscope_heap_object_class_address(h, id);
        jw_key(w, "class_address");
        if (ca) jw_addr(w, ca); else jw_null(w);
        jw_key(w, "detail"); jw_str(w, hscope_heap_object_detail(h, id));
        jw_key(w, "memsize"); jw_u64(w, hscope_heap_object_memsize(h, id));
        jw_key(w, "size"); jw_u64(w, hscope_heap_object_size(h, id));
        jw_key(w, "file"); jw_str(w, file);
        jw_key(w, "line"); jw_u64(w, hscope_heap_object_line(h, id));
        jw_key(w, "method"); jw_str(w, meth);
        jw_key(w, "generation");
        if (gen >= 0) jw_i64(w, gen); else jw_null(w);
        jw_key(w, "flags"); jw_arr(w); flag_names(hscope_heap_object_flags(h, id), w, NULL); jw_end_arr(w);
        if (values) {
            jw_key(w, "value");
            if (val) jw_strn(w, val, (size_t)vlen); else jw_null(w);
        }
        jw_key(w, "record");
        if (wt->line)
            print_record(stdout, wt->line, values);
        else
            jw_null(w); /* loaded from an index */
        jw_key(w, "references"); jw_arr(w);
        for (uint64_t i = 0; i < nrefs; i++)
            obj_brief_json(w, h, refs[i]);
        jw_end_arr(w);
        jw_key(w, "referrers"); jw_arr(w);
        for (uint64_t i = 0; i < nsrc; i++)
            obj_brief_json(w, h, srcs[i]);
        jw_end_arr(w);
        jw_end_obj(w);
        return 0;
    }
    char m[32];
    hscope_cli_human_bytes((double)hscope_heap_object_memsize(h, id), m, sizeof(m));
    printf("0x%llx  %s  %s  memsize %s", (unsigned long long)wt->addr,
           hscope_heap_type_name(h, hscope_heap_object_type(h, id)),
           hscope_heap_object_label(h, id), m);
    if (hscope_heap_object_size(h, id))
        printf("  size %llu", (unsigned long long)hscope_heap_object_size(h, id));
    printf("\n");
    if (hscope_heap_object_detail(h, id))
        printf("  detail:     %s\n", hscope_heap_object_detail(h, id));
    if (file || gen >= 0)
        printf("  allocated:  %s:%u%s%s, generation %lld\n", file ? file : "(none)",
               hscope_heap_object_line(h, id), meth ? " in " : "", meth ? meth : "",
               (long long)gen);
    else
        printf("  allocated:  (no allocation info: trace_object_allocations was off)\n");
    printf("  flags:      ");
    flag_names(hscope_heap_object_flags(h, id), NULL, stdout);
    printf("\n");
    if (values && val)
        printf("  value:      %.*s\n", (int)(vlen > 200 ? 200 : vlen), val);
    if (wt->line || from_index) {
        printf("  record:     ");
        if (wt->line)
            print_record_cut(wt->line, values);
        else
            printf("(not kept in the saved index; --no-index reads it from the dump)");
        printf("\n");
    }
    printf("references (%llu):\n", (unsigned long long)nrefs);
    print_brief_list(h, refs, nrefs, top);
    printf("referenced by (%llu):\n", (unsigned long long)nsrc);
    print_brief_list(h, srcs, nsrc, top);
    printf("\n");
    return 0;
}

static int
cmd_show(int argc, char **argv)
{
    if (want_help(argc, argv, usage_show))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 0, 0 };
    int json = 0, values = 0;
    uint64_t top = 20;
    const char *path = NULL;
    wantlist wl = { calloc((size_t)argc, sizeof(want)), 0 };
    if (!wl.w)
        return EXIT_BAD_INPUT;
    int rc = 0;
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_show);
        if (r < 0) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--values") == 0) {
            values = 1;
        } else if (strcmp(argv[i], "--top") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &top) != 0) {
                rc = hscope_cli_usage_error(usage_show, "--top needs a number%s", "");
                goto out;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            rc = hscope_cli_usage_error(usage_show, "unknown option '%s'", argv[i]);
            goto out;
        } else if (!path) {
            path = argv[i];
        } else {
            want *w = &wl.w[wl.n];
            if (hscope_cli_parse_address(argv[i], &w->addr) != 0) {
                rc = hscope_cli_bad_address(usage_show, argv[i]);
                goto out;
            }
            snprintf(w->prefix, sizeof(w->prefix), "{\"address\":\"0x%llx\"",
                     (unsigned long long)w->addr);
            w->plen = strlen(w->prefix);
            wl.n++;
        }
    }
    if (!path || wl.n == 0) {
        rc = hscope_cli_usage_error(usage_show, "need a DUMP and at least one ADDR%s", "");
        goto out;
    }
    /* values come from the parse: an index does not keep them */
    if (values)
        c.no_index = 1;
    c.lo.line_fn = grab_lines;
    c.lo.line_user_data = &wl;
    if (values)
        c.lo.flags |= HSCOPE_LOAD_VALUES;
    hscope_heap_t *h = load_dump(&c, path);
    if (!h) {
        rc = EXIT_BAD_INPUT;
        goto out;
    }
    jw w;
    jw_init(&w, stdout, 1);
    if (json) {
        jw_obj(&w);
        jw_key(&w, "objects");
        jw_arr(&w);
    }
    int missing = 0;
    for (int i = 0; i < wl.n; i++)
        missing |= show_one(h, &wl.w[i], json, &w, values, c.from_index, top) != 0;
    if (json) {
        jw_end_arr(&w);
        jw_end_obj(&w);
        jw_done(&w);
    }
    /* what was found is printed; then what was not, as root does */
    fflush(stdout);
    for (int i = 0; i < wl.n; i++) {
        hscope_id id;
        if (hscope_heap_find(h, wl.w[i].addr, &id) != HSCOPE_OK)
            fprintf(stderr, "%s: 0x%llx is not an object of %s\n", prog,
                    (unsigned long long)wl.w[i].addr, path);
    }
    if (missing)
        rc = EXIT_BAD_INPUT;
    hscope_heap_free(h);
out:
    for (int i = 0; i < wl.n; i++)
        free(wl.w[i].line);
    free(wl.w);
    return rc;
}

/* ------------------------------------------------------------------ */
/* generations                                                        */
/* ------------------------------------------------------------------ */

static int
cmd_generations(int argc, char **argv)
{
    if (want_help(argc, argv, usage_generations))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 0, 0 };
    uint64_t top = 5;
    int json = 0;
    const char *path = NULL;
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_generations);
        if (r < 0)
            return EXIT_USAGE;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--top") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &top) != 0)
                return hscope_cli_usage_error(usage_generations, "--top needs a number%s", "");
        } else if (argv[i][0] == '-' && argv[i][1])
            return hscope_cli_usage_error(usage_generations, "unknown option '%s'", argv[i]);
        else if (!path)
            path = argv[i];
        else
            return hscope_cli_usage_error(usage_generations, "one DUMP only ('%s' is extra)", argv[i]);
    }
    if (!path)
        return hscope_cli_usage_error(usage_generations, "no DUMP given%s", "");
    hscope_heap_t *h = load_dump(&c, path);
    if (!h)
        return EXIT_BAD_INPUT;
    const void *col;
    uint64_t n;
    int32_t et;
    hscope_heap_column(h, HSCOPE_COL_GENERATION, &col, &n, &et);
    const uint32_t *gen = col;
    /* ids sorted by generation: counting sort over the distinct values */
    uint32_t maxg = 0;
    uint64_t untraced = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (gen[i] == 0xFFFFFFFFu)
            untraced++;
        else if (gen[i] > maxg)
            maxg = gen[i];
    }
    int rc = 0;
    uint64_t *start = calloc((size_t)maxg + 2, sizeof(uint64_t));
    hscope_id *ids = malloc((size_t)(n - untraced + 1) * sizeof(hscope_id));
    if (!start || !ids) {
        fprintf(stderr, "%s: out of memory\n", prog);
        rc = EXIT_BAD_INPUT;
        goto out;
    }
    for (uint64_t i = 0; i < n; i++)
        if (gen[i] != 0xFFFFFFFFu)
            start[gen[i] + 1]++;
    for (uint32_t g = 0; g <= maxg; g++)
        start[g + 1] += start[g];
    {
        uint64_t *pos = malloc(((size_t)maxg + 1) * sizeof(uint64_t));
        if (!pos) {
            rc = EXIT_BAD_INPUT;
            goto out;
        }
        memcpy(pos, start, ((size_t)maxg + 1) * sizeof(uint64_t));
        for (uint64_t i = 0; i < n; i++)
            if (gen[i] != 0xFFFFFFFFu)
                ids[pos[gen[i]]++] = (hscope_id)i;
        free(pos);
    }
    jw w;
    jw_init(&w, stdout, 0);
    if (json) {
        jw_obj(&w);
        jw_key(&w, "untraced"); jw_u64(&w, untraced);
        jw_key(&w, "generations"); jw_arr(&w);
    } else {
        printf("%s: %llu objects without allocation info\n", path, (unsigned long long)untraced);
        printf("\n%10s %12s %12s  top sites\n", "generation", "count", "memsize");
    }
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    to.top = top;
    for (uint32_t g = 0; g <= maxg && n > untraced; g++) {
        uint64_t cnt = start[g + 1] - start[g];
        if (!cnt)
            continue;
        hscope_tally_t *t = NULL;
        hscope_error err = HSCOPE_ERROR_INIT;
        if (hscope_tally_subset(&t, h, "file:line:class", ids + start[g], cnt, &to, &err) != HSCOPE_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            rc = EXIT_BAD_INPUT;
            break;
        }
        uint64_t mem;
        hscope_tally_totals(t, NULL, &mem);
        if (json) {
            jw_obj(&w);
            jw_key(&w, "generation"); jw_u64(&w, g);
            jw_key(&w, "count"); jw_u64(&w, cnt);
            jw_key(&w, "memsize"); jw_u64(&w, mem);
            jw_key(&w, "sites"); jw_arr(&w);
            for (uint64_t r = 0; r < hscope_tally_row_count(t); r++) {
                jw_obj(&w);
                jw_key(&w, "key"); jw_str(&w, hscope_tally_row_key(t, r));
                jw_key(&w, "count"); jw_u64(&w, hscope_tally_row_count_of(t, r));
                jw_key(&w, "memsize"); jw_u64(&w, hscope_tally_row_memsize(t, r));
                jw_end_obj(&w);
            }
            jw_end_arr(&w);
            jw_end_obj(&w);
        } else {
            char a[32], b[32];
            hscope_cli_grouped(cnt, a, sizeof(a));
            hscope_cli_human_bytes((double)(mem), b, sizeof(b));
            printf("%10u %12s %12s", g, a, b);
            for (uint64_t r = 0; r < hscope_tally_row_count(t); r++)
                printf("%s%s (%llu)", r ? "\n                                      " : "  ",
                       hscope_tally_row_key(t, r),
                       (unsigned long long)hscope_tally_row_count_of(t, r));
            printf("\n");
        }
        hscope_tally_free(t);
    }
    if (json) {
        jw_end_arr(&w);
        jw_end_obj(&w);
        jw_done(&w);
    }
out:
    free(start);
    free(ids);
    hscope_heap_free(h);
    return rc;
}

/* ------------------------------------------------------------------ */
/* dominators / retained                                              */
/* ------------------------------------------------------------------ */

static hscope_domtree_t *
domtree_for(hscope_heap_t *h, int no_class_edges)
{
    hscope_dom_options o = HSCOPE_DOM_OPTIONS_INIT;
    if (no_class_edges)
        o.flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_domtree_t *t = NULL;
    if (hscope_domtree_compute(&t, h, &o, &err) != HSCOPE_OK)
        fprintf(stderr, "%s: dominators: %s\n", prog, err.message);
    return t;
}

static const char *
obj_label(const hscope_heap_t *h, hscope_id id, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s", hscope_heap_type_name(h, hscope_heap_object_type(h, id)),
             hscope_heap_object_label(h, id));
    return buf;
}

/* children sorted by retained size, largest first */
static const hscope_domtree_t *sort_tree;
static int
cmp_retained(const void *a, const void *b)
{
    uint64_t x = hscope_domtree_retained(sort_tree, *(const hscope_id *)a);
    uint64_t y = hscope_domtree_retained(sort_tree, *(const hscope_id *)b);
    return x > y ? -1 : x < y;
}

static hscope_id *
sorted_children(hscope_domtree_t *t, hscope_id id, int32_t cat, uint64_t *n)
{
    const hscope_id *k;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_domtree_children(t, id, cat, &k, n, &err) != HSCOPE_OK) {
        *n = 0;
        return NULL;
    }
    hscope_id *c = malloc((*n + 1) * sizeof(hscope_id));
    if (!c) {
        *n = 0;
        return NULL;
    }
    memcpy(c, k, *n * sizeof(hscope_id));
    sort_tree = t;
    qsort(c, *n, sizeof(hscope_id), cmp_retained);
    return c;
}

static void
print_subtree(hscope_domtree_t *t, hscope_id id, int depth, int maxdepth,
              uint64_t top, int indent)
{
    hscope_heap_t *h = hscope_domtree_heap(t);
    char lb[256], r[32], m[32];
    hscope_cli_human_bytes((double)hscope_domtree_retained(t, id), r, sizeof(r));
    hscope_cli_human_bytes((double)hscope_heap_object_memsize(h, id), m, sizeof(m));
    printf("%*s0x%llx %s  retained %s (%llu objects), self %s\n", indent, "",
           (unsigned long long)hscope_heap_object_address(h, id),
           obj_label(h, id, lb, sizeof(lb)), r,
           (unsigned long long)hscope_domtree_retained_count(t, id), m);
    if (depth >= maxdepth)
        return;
    uint64_t n;
    hscope_id *c = sorted_children(t, id, -1, &n);
    for (uint64_t i = 0; i < n && i < top; i++)
        print_subtree(t, c[i], depth + 1, maxdepth, top, indent + 2);
    if (n > top)
        printf("%*s... %llu more\n", indent + 2, "", (unsigned long long)(n - top));
    free(c);
}

static void
dom_json_node(jw *w, hscope_domtree_t *t, hscope_id id, int depth, int maxdepth,
              uint64_t top)
{
    hscope_heap_t *h = hscope_domtree_heap(t);
    jw_obj(w);
    jw_key(w, "address"); jw_addr(w, hscope_heap_object_address(h, id));
    jw_key(w, "type"); jw_str(w, hscope_heap_type_name(h, hscope_heap_object_type(h, id)));
    jw_key(w, "class"); jw_str(w, hscope_heap_object_label(h, id));
    jw_key(w, "memsize"); jw_u64(w, hscope_heap_object_memsize(h, id));
    jw_key(w, "retained"); jw_u64(w, hscope_domtree_retained(t, id));
    jw_key(w, "retained_count"); jw_u64(w, hscope_domtree_retained_count(t, id));
    if (depth < maxdepth) {
        uint64_t n;
        hscope_id *c = sorted_children(t, id, -1, &n);
        jw_key(w, "children_total"); jw_u64(w, n);
        jw_key(w, "children"); jw_arr(w);
        for (uint64_t i = 0; i < n && i < top; i++)
            dom_json_node(w, t, c[i], depth + 1, maxdepth, top);
        jw_end_arr(w);
        free(c);
    }
    jw_end_obj(w);
}

static void
idom_text(jw *w, hscope_domtree_t *t, hscope_id id)
{
    hscope_heap_t *h = hscope_domtree_heap(t);
    hscope_id d;
    int32_t cat;
    if (hscope_domtree_idom(t, id, &d, &cat) != HSCOPE_OK) {
        jw_null(w);
    } else if (d != HSCOPE_ID_NONE) {
        jw_addr(w, hscope_heap_object_address(h, d));
    } else if (cat >= 0) {
        char b[128];
        snprintf(b, sizeof(b), "(root:%s)", hscope_heap_root_category_name(h, (uint32_t)cat));
        jw_str(w, b);
    } else {
        jw_str(w, "(super-root)");
    }
}

static int
cmd_dominators(int argc, char **argv)
{
    if (want_help(argc, argv, usage_dominators))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 0, 0 };
    uint64_t depth = 2, top = 10, addr = 0;
    int json = 0, full = 0, nce = 0, have_addr = 0;
    const char *path = NULL;
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_dominators);
        if (r < 0)
            return EXIT_USAGE;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--full") == 0)
            full = 1;
        else if (strcmp(argv[i], "--no-class-edges") == 0)
            nce = 1;
        else if (strcmp(argv[i], "--depth") == 0 || strcmp(argv[i], "--top") == 0) {
            uint64_t *dst = argv[i][2] == 'd' ? &depth : &top;
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], dst) != 0)
                return hscope_cli_usage_error(usage_dominators, "%s needs a number", argv[i - 1]);
        } else if (argv[i][0] == '-' && argv[i][1])
            return hscope_cli_usage_error(usage_dominators, "unknown option '%s'", argv[i]);
        else if (!path)
            path = argv[i];
        else if (!have_addr) {
            if (hscope_cli_parse_address(argv[i], &addr) != 0)
                return hscope_cli_bad_address(usage_dominators, argv[i]);
            have_addr = 1;
        } else
            return hscope_cli_usage_error(usage_dominators, "one ADDR at most ('%s' is extra)", argv[i]);
    }
    if (!path)
        return hscope_cli_usage_error(usage_dominators, "no DUMP given%s", "");
    if (top == 0)
        top = UINT64_MAX; /* 0 = all, as for the other commands */
    hscope_heap_t *h = load_dump(&c, path);
    if (!h)
        return EXIT_BAD_INPUT;
    hscope_domtree_t *t = domtree_for(h, nce);
    if (!t) {
        hscope_heap_free(h);
        return EXIT_BAD_INPUT;
    }
    int rc = 0;
    uint64_t rn, rm, un, um;
    hscope_domtree_totals(t, &rn, &rm, &un, &um);
    hscope_id target = HSCOPE_ID_NONE;
    if (have_addr && hscope_heap_find(h, addr, &target) != HSCOPE_OK) {
        fprintf(stderr, "%s: 0x%llx is not an object of %s\n", prog, (unsigned long long)addr, path);
        rc = EXIT_BAD_INPUT;
        goto out;
    }
    jw w;
    jw_init(&w, stdout, 0);
    if (json) {
        jw_obj(&w);
        jw_key(&w, "objects"); jw_u64(&w, hscope_heap_object_count(h));
        jw_key(&w, "reachable"); jw_u64(&w, rn);
        jw_key(&w, "reachable_memsize"); jw_u64(&w, rm);
        jw_key(&w, "unreachable"); jw_u64(&w, un);
        jw_key(&w, "unreachable_memsize"); jw_u64(&w, um);
        jw_key(&w, "class_edges"); jw_bool(&w, !nce);
        if (full) {
            jw_key(&w, "idom"); jw_obj(&w);
            char ab[32];
            for (hscope_id i = 0; i < hscope_heap_object_count(h); i++) {
                if (!hscope_domtree_reachable(t, i))
                    continue;
                snprintf(ab, sizeof(ab), "0x%llx", (unsigned long long)hscope_heap_object_address(h, i));
                jw_key(&w, ab);
                idom_text(&w, t, i);
            }
            jw_end_obj(&w);
            jw_key(&w, "retained"); jw_obj(&w);
            for (hscope_id i = 0; i < hscope_heap_object_count(h); i++) {
                if (!hscope_domtree_reachable(t, i))
                    continue;
                snprintf(ab, sizeof(ab), "0x%llx", (unsigned long long)hscope_heap_object_address(h, i));
                jw_key(&w, ab);
                jw_arr(&w);
                jw_u64(&w, hscope_domtree_retained(t, i));
                jw_u64(&w, hscope_domtree_retained_count(t, i));
                jw_end_arr(&w);
            }
            jw_end_obj(&w);
        }
        if (target != HSCOPE_ID_NONE) {
            int32_t cat;
            uint64_t len = hscope_domtree_chain(t, target, NULL, 0, &cat);
            hscope_id *chain = malloc((len + 1) * sizeof(hscope_id));
            if (chain)
                hscope_domtree_chain(t, target, chain, len, &cat);
            jw_key(&w, "root"); 
            if (len == 0) jw_null(&w);
            else jw_str(&w, cat >= 0 ? hscope_heap_root_category_name(h, (uint32_t)cat) : "(super-root)");
            jw_key(&w, "chain"); jw_arr(&w);
            for (uint64_t k = 0; chain && k < len; k++)
                jw_addr(&w, hscope_heap_object_address(h, chain[k]));
            jw_end_arr(&w);
            free(chain);
            jw_key(&w, "tree");
            if (len) dom_json_node(&w, t, target, 0, (int)depth, top); else jw_null(&w);
        } else {
            jw_key(&w, "top"); jw_arr(&w);
            for (uint32_t cidx = 0; cidx <= hscope_heap_root_category_count(h); cidx++) {
                int32_t cat = cidx < hscope_heap_root_category_count(h) ? (int32_t)cidx : -1;
                uint64_t n;
                hscope_id *kids = sorted_children(t, HSCOPE_ID_NONE, cat, &n);
                jw_obj(&w);
                jw_key(&w, "root"); jw_str(&w, cat >= 0 ? hscope_heap_root_category_name(h, (uint32_t)cat) : "(several roots)");
                jw_key(&w, "children_total"); jw_u64(&w, n);
                jw_key(&w, "children"); jw_arr(&w);
                for (uint64_t k = 0; k < n && k < top; k++)
                    dom_json_node(&w, t, kids[k], 1, (int)depth, top);
                jw_end_arr(&w);
                jw_end_obj(&w);
                free(kids);
            }
            jw_end_arr(&w);
        }
        jw_end_obj(&w);
        jw_done(&w);
        goto out;
    }
    char a[32], b[32];
    hscope_cli_grouped(un, a, sizeof(a));
    hscope_cli_human_bytes((double)(um), b, sizeof(b));
    printf("%s: %llu reachable objects; %s unreachable (%s)%s\n", path,
           (unsigned long long)rn, a, b, nce ? "; class edges off" : "");
    if (target != HSCOPE_ID_NONE) {
        int32_t cat;
        uint64_t len = hscope_domtree_chain(t, target, NULL, 0, &cat);
        if (!len) {
            printf("0x%llx is not reachable from any root\n", (unsigned long long)addr);
            goto out;
        }
        hscope_id *chain = malloc(len * sizeof(hscope_id));
        if (!chain)
            goto out;
        hscope_domtree_chain(t, target, chain, len, &cat);
        printf("\ndominator chain:\n  root: %s\n",
               cat >= 0 ? hscope_heap_root_category_name(h, (uint32_t)cat) : "(several roots)");
        char lb[256], r[32];
        for (uint64_t k = 0; k + 1 < len; k++) {
            hscope_cli_human_bytes((double)hscope_domtree_retained(t, chain[k]), r, sizeof(r));
            printf("  %*s0x%llx %s  retained %s\n", (int)(k < 20 ? k : 20), "",
                   (unsigned long long)hscope_heap_object_address(h, chain[k]),
                   obj_label(h, chain[k], lb, sizeof(lb)), r);
        }
        free(chain);
        printf("\nsubtree:\n");
        print_subtree(t, target, 0, (int)depth, top, 2);
    } else {
        for (uint32_t cidx = 0; cidx <= hscope_heap_root_category_count(h); cidx++) {
            int32_t cat = cidx < hscope_heap_root_category_count(h) ? (int32_t)cidx : -1;
            uint64_t n;
            hscope_id *kids = sorted_children(t, HSCOPE_ID_NONE, cat, &n);
            if (!n) {
                free(kids);
                continue;
            }
            printf("\nroot %s (%llu objects directly below)\n",
                   cat >= 0 ? hscope_heap_root_category_name(h, (uint32_t)cat) : "(several roots)",
                   (unsigned long long)n);
            for (uint64_t k = 0; k < n && k < top; k++)
                print_subtree(t, kids[k], 1, (int)depth, top, 2);
            if (n > top)
                printf("  ... %llu more\n", (unsigned long long)(n - top));
            free(kids);
        }
    }
out:
    hscope_domtree_free(t);
    hscope_heap_free(h);
    return rc;
}

/* folded stacks: one line per dominator-tree leaf path, weight = self size */
static void
folded(hscope_domtree_t *t, hscope_id id, char *prefix, size_t plen, size_t cap)
{
    hscope_heap_t *h = hscope_domtree_heap(t);
    char lb[256];
    obj_label(h, id, lb, sizeof(lb));
    for (char *p = lb; *p; p++)
        if (*p == ';' || *p == ' ')
            *p = *p == ';' ? ',' : '_';
    size_t n = strlen(lb);
    if (plen + n + 2 >= cap)
        return;
    if (plen)
        prefix[plen++] = ';';
    memcpy(prefix + plen, lb, n);
    prefix[plen + n] = '\0';
    uint64_t self = hscope_heap_object_memsize(h, id);
    if (self)
        printf("%s %llu\n", prefix, (unsigned long long)self);
    const hscope_id *k;
    uint64_t nk;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_domtree_children(t, id, -1, &k, &nk, &err) == HSCOPE_OK)
        for (uint64_t i = 0; i < nk; i++)
            if (hscope_domtree_retained(t, k[i]) * 1000 >= 1) /* all */
                folded(t, k[i], prefix, plen + n, cap);
    prefix[plen ? plen - 1 : 0] = '\0';
}

typedef struct rrow {
    const char *key;
    uint64_t retained, count;
} rrow;

static int
cmp_rrow(const void *a, const void *b)
{
    const rrow *x = a, *y = b;
    if (x->retained != y->retained)
        return x->retained > y->retained ? -1 : 1;
    return strcmp(x->key, y->key);
}

/*
 * "du for the heap": retained size per group, each object counted under
 * the topmost dominator of its group (so nested objects of one class are
 * not counted twice).  A DFS over the dominator tree keeps, per group, how
 * many objects of that group are on the current path.
 */
static int
retained_by(hscope_domtree_t *t, hscope_heap_t *h, const char *by, uint64_t top,
            int json)
{
    uint64_t n = hscope_heap_object_count(h);
    hscope_id *all = malloc((n + 1) * sizeof(hscope_id));
    uint32_t *grp = malloc((n + 1) * sizeof(uint32_t));
    hscope_tally_t *tl = NULL;
    rrow *rows = NULL;
    uint32_t *active = NULL;
    hscope_id *stk = NULL;
    uint64_t *pos = NULL;
    int rc = EXIT_BAD_INPUT;
    if (!all || !grp)
        goto out;
    for (uint64_t i = 0; i < n; i++)
        all[i] = (hscope_id)i;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_tally_subset(&tl, h, by, all, n, &to, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        goto out;
    }
    uint64_t ng = hscope_tally_row_count(tl);
    rows = calloc(ng + 1, sizeof(rrow));
    active = calloc(ng + 1, sizeof(uint32_t));
    stk = malloc((n + 1) * sizeof(hscope_id));
    pos = malloc((n + 1) * sizeof(uint64_t));
    if (!rows || !active || !stk || !pos)
        goto out;
    for (uint64_t r = 0; r < ng; r++) {
        const hscope_id *ids;
        uint64_t k;
        hscope_tally_row_objects(tl, r, &ids, &k);
        rows[r].key = hscope_tally_row_key(tl, r);
        for (uint64_t j = 0; j < k; j++)
            grp[ids[j]] = (uint32_t)r;
    }
    for (uint32_t cidx = 0; cidx <= hscope_heap_root_category_count(h); cidx++) {
        int32_t cat = cidx < hscope_heap_root_category_count(h) ? (int32_t)cidx : -1;
        const hscope_id *tops;
        uint64_t ntop;
        if (hscope_domtree_children(t, HSCOPE_ID_NONE, cat, &tops, &ntop, &err) != HSCOPE_OK)
            goto out;
        for (uint64_t q = 0; q < ntop; q++) {
            /* iterative DFS; pos[sp] = next child index of stk[sp] */
            uint64_t sp = 0;
            stk[0] = tops[q];
            pos[0] = 0;
            uint32_t g0 = grp[tops[q]];
            if (active[g0]++ == 0) {
                rows[g0].retained += hscope_domtree_retained(t, tops[q]);
                rows[g0].count += hscope_domtree_retained_count(t, tops[q]);
            }
            for (;;) {
                const hscope_id *kids;
                uint64_t nk;
                hscope_domtree_children(t, stk[sp], -1, &kids, &nk, &err);
                if (pos[sp] < nk) {
                    hscope_id c = kids[pos[sp]++];
                    uint32_t g = grp[c];
                    if (active[g]++ == 0) {
                        rows[g].retained += hscope_domtree_retained(t, c);
                        rows[g].count += hscope_domtree_retained_count(t, c);
                    }
                    stk[++sp] = c;
                    pos[sp] = 0;
                    continue;
                }
                active[grp[stk[sp]]]--;
                if (sp == 0)
                    break;
                sp--;
            }
        }
    }
    qsort(rows, ng, sizeof(rrow), cmp_rrow);
    uint64_t shown = top && top < ng ? top : ng;
    if (json) {
        jw w;
        jw_init(&w, stdout, 0);
        jw_obj(&w);
        jw_key(&w, "by"); jw_str(&w, by);
        jw_key(&w, "rows"); jw_arr(&w);
        for (uint64_t r = 0; r < shown; r++) {
            if (!rows[r].retained && !rows[r].count)
                break;
            jw_obj(&w);
            jw_key(&w, "key"); jw_str(&w, rows[r].key);
            jw_key(&w, "retained"); jw_u64(&w, rows[r].retained);
            jw_key(&w, "retained_count"); jw_u64(&w, rows[r].count);
            jw_end_obj(&w);
        }
        jw_end_arr(&w);
        jw_end_obj(&w);
        jw_done(&w);
    } else {
        printf("%-60s %12s %12s\n", by, "retained", "objects");
        for (uint64_t r = 0; r < shown; r++) {
            char a[32], b[32];
            hscope_cli_human_bytes((double)(rows[r].retained), a, sizeof(a));
            hscope_cli_grouped(rows[r].count, b, sizeof(b));
            printf("  %-58s %12s %12s\n", rows[r].key, a, b);
        }
    }
    rc = 0;
out:
    hscope_tally_free(tl);
    free(all);
    free(grp);
    free(rows);
    free(active);
    free(stk);
    free(pos);
    return rc;
}

static int
cmd_retained(int argc, char **argv)
{
    if (want_help(argc, argv, usage_retained))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 0, 0 };
    uint64_t top = 20;
    int json = 0, nce = 0, fold = 0;
    const char *path = NULL, *by = NULL;
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_retained);
        if (r < 0)
            return EXIT_USAGE;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--folded") == 0)
            fold = 1;
        else if (strcmp(argv[i], "--no-class-edges") == 0)
            nce = 1;
        else if (strcmp(argv[i], "--by") == 0) {
            if (i + 1 >= argc)
                return hscope_cli_usage_error(usage_retained, "--by needs a KEY%s", "");
            by = argv[++i];
            if (!hscope_cli_valid_key(by))
                return hscope_cli_usage_error(usage_retained, "unknown --by key '%s'", by);
        } else if (strcmp(argv[i], "--top") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &top) != 0)
                return hscope_cli_usage_error(usage_retained, "--top needs a number%s", "");
        } else if (argv[i][0] == '-' && argv[i][1])
            return hscope_cli_usage_error(usage_retained, "unknown option '%s'", argv[i]);
        else if (!path)
            path = argv[i];
        else
            return hscope_cli_usage_error(usage_retained, "one DUMP only ('%s' is extra)", argv[i]);
    }
    if (!path)
        return hscope_cli_usage_error(usage_retained, "no DUMP given%s", "");
    hscope_heap_t *h = load_dump(&c, path);
    if (!h)
        return EXIT_BAD_INPUT;
    hscope_domtree_t *t = domtree_for(h, nce);
    if (!t) {
        hscope_heap_free(h);
        return EXIT_BAD_INPUT;
    }
    int rc = 0;
    if (fold) {
        /* from every top-level node (children of roots and super-root) */
        size_t cap = 1 << 16;
        char *prefix = malloc(cap);
        for (uint32_t cidx = 0; prefix && cidx <= hscope_heap_root_category_count(h); cidx++) {
            int32_t cat = cidx < hscope_heap_root_category_count(h) ? (int32_t)cidx : -1;
            const hscope_id *k;
            uint64_t nk;
            hscope_error err = HSCOPE_ERROR_INIT;
            if (hscope_domtree_children(t, HSCOPE_ID_NONE, cat, &k, &nk, &err) != HSCOPE_OK)
                continue;
            const char *rn = cat >= 0 ? hscope_heap_root_category_name(h, (uint32_t)cat) : "roots";
            for (uint64_t i = 0; i < nk; i++) {
                int pl = snprintf(prefix, cap, "%s", rn);
                folded(t, k[i], prefix, (size_t)pl, cap);
            }
        }
        free(prefix);
    } else if (by) {
        rc = retained_by(t, h, by, top, json);
    } else {
        /* 0 = all rows, as for the other commands */
        uint64_t nobj = hscope_heap_object_count(h);
        uint64_t nrows = top && top < nobj ? top : nobj;
        hscope_id *ids = malloc((nrows ? nrows : 1) * sizeof(hscope_id));
        uint64_t n = ids ? hscope_domtree_top(t, ids, nrows) : 0;
        if (json) {
            jw w;
            jw_init(&w, stdout, 0);
            jw_obj(&w);
            jw_key(&w, "rows"); jw_arr(&w);
            for (uint64_t i = 0; i < n; i++) {
                jw_obj(&w);
                jw_key(&w, "address"); jw_addr(&w, hscope_heap_object_address(h, ids[i]));
                jw_key(&w, "type"); jw_str(&w, hscope_heap_type_name(h, hscope_heap_object_type(h, ids[i])));
                jw_key(&w, "class"); jw_str(&w, hscope_heap_object_label(h, ids[i]));
                jw_key(&w, "memsize"); jw_u64(&w, hscope_heap_object_memsize(h, ids[i]));
                jw_key(&w, "retained"); jw_u64(&w, hscope_domtree_retained(t, ids[i]));
                jw_key(&w, "retained_count"); jw_u64(&w, hscope_domtree_retained_count(t, ids[i]));
                jw_end_obj(&w);
            }
            jw_end_arr(&w);
            jw_end_obj(&w);
            jw_done(&w);
        } else {
            uint64_t rn, rm, un, um;
            hscope_domtree_totals(t, &rn, &rm, &un, &um);
            char a[32], b[32], lb[256];
            hscope_cli_human_bytes((double)(rm), a, sizeof(a));
            hscope_cli_human_bytes((double)(um), b, sizeof(b));
            printf("%s: reachable %s, unreachable %s (%llu objects)\n\n", path, a, b,
                   (unsigned long long)un);
            printf("%-18s %-44s %12s %10s %10s\n", "address", "object", "retained", "objects", "self");
            for (uint64_t i = 0; i < n; i++) {
                hscope_cli_human_bytes((double)hscope_domtree_retained(t, ids[i]), a, sizeof(a));
                hscope_cli_human_bytes((double)hscope_heap_object_memsize(h, ids[i]), b, sizeof(b));
                printf("0x%-16llx %-44.44s %12s %10llu %10s\n",
                       (unsigned long long)hscope_heap_object_address(h, ids[i]),
                       obj_label(h, ids[i], lb, sizeof(lb)), a,
                       (unsigned long long)hscope_domtree_retained_count(t, ids[i]), b);
            }
        }
        free(ids);
    }
    hscope_domtree_free(t);
    hscope_heap_free(h);
    return rc;
}

/* ------------------------------------------------------------------ */
/* root                                                               */
/* ------------------------------------------------------------------ */

static void
dot_escape(const char *s, FILE *f)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
}

static void
dot_node(const hscope_heap_t *h, hscope_id id, int target)
{
    char lb[256];
    printf("  n%u [label=\"", id);
    dot_escape(obj_label(h, id, lb, sizeof(lb)), stdout);
    printf("\\n0x%llx", (unsigned long long)hscope_heap_object_address(h, id));
    const char *f = hscope_heap_object_file(h, id);
    if (f) {
        const char *base = strrchr(f, '/');
        printf("\\n");
        dot_escape(base ? base + 1 : f, stdout);
        printf(":%u", hscope_heap_object_line(h, id));
    }
    printf("\"%s];\n", target ? ", style=filled, fillcolor=\"#f4a6a6\"" : "");
}

/* index of `to` among `from`'s references (the "field"), or -1 */
static long
ref_index(const hscope_heap_t *h, hscope_id from, hscope_id to)
{
    const hscope_id *r;
    uint64_t n;
    if (hscope_heap_object_references(h, from, &r, &n) != HSCOPE_OK)
        return -1;
    for (uint64_t i = 0; i < n; i++)
        if (r[i] == to)
            return (long)i;
    return -1;
}

static int
cmd_root(int argc, char **argv)
{
    if (want_help(argc, argv, usage_root))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 0, 0 };
    int json = 0, dot = 0, nce = 0, na = 0;
    uint64_t maxp = 1;
    const char *path = NULL;
    uint64_t *addrs = calloc((size_t)argc, sizeof(uint64_t));
    if (!addrs)
        return EXIT_BAD_INPUT;
    int rc = 0;
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_root);
        if (r < 0) {
            free(addrs);
            return EXIT_USAGE;
        }
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--dot") == 0)
            dot = 1;
        else if (strcmp(argv[i], "--no-class-edges") == 0)
            nce = 1;
        else if (strcmp(argv[i], "--max-paths") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &maxp) != 0 || !maxp) {
                free(addrs);
                return hscope_cli_usage_error(usage_root, "--max-paths needs a number >= 1%s", "");
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            free(addrs);
            return hscope_cli_usage_error(usage_root, "unknown option '%s'", argv[i]);
        } else if (!path)
            path = argv[i];
        else if (hscope_cli_parse_address(argv[i], &addrs[na++]) != 0) {
            free(addrs);
            return hscope_cli_bad_address(usage_root, argv[i]);
        }
    }
    if (!path || !na) {
        free(addrs);
        return hscope_cli_usage_error(usage_root, "need a DUMP and at least one ADDR%s", "");
    }
    hscope_heap_t *h = load_dump(&c, path);
    if (!h) {
        free(addrs);
        return EXIT_BAD_INPUT;
    }
    hscope_dom_options o = HSCOPE_DOM_OPTIONS_INIT;
    if (nce)
        o.flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    hscope_paths_t *ps = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    if (hscope_paths_compute(&ps, h, &o, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        hscope_heap_free(h);
        free(addrs);
        return EXIT_BAD_INPUT;
    }
    uint64_t n = hscope_heap_object_count(h);
    hscope_id *buf = malloc((n + 2) * sizeof(hscope_id));
    uint8_t *seen = calloc(n + 1, 1);
    jw w;
    jw_init(&w, stdout, 0);
    if (json) {
        jw_obj(&w);
        jw_key(&w, "paths");
        jw_arr(&w);
    } else if (dot) {
        printf("digraph heapscope {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n");
    }
    for (int a = 0; a < na && buf && seen; a++) {
        hscope_id tid;
        if (hscope_heap_find(h, addrs[a], &tid) != HSCOPE_OK) {
            fprintf(stderr, "%s: 0x%llx is not an object of %s\n", prog,
                    (unsigned long long)addrs[a], path);
            rc = EXIT_BAD_INPUT;
            continue;
        }
        /* candidate last hops: the target's own shortest path first, then
         * other referrers, shortest first */
        const hscope_id *srcs = NULL;
        uint64_t nsrc = 0;
        hscope_heap_object_referrers(h, tid, &srcs, &nsrc, &err);
        uint64_t emitted = 0;
        for (int64_t s = -1; s < (int64_t)nsrc && emitted < maxp; s++) {
            int32_t cat = -1;
            uint64_t len;
            if (s < 0) {
                len = hscope_paths_get(ps, tid, buf, n + 1, &cat);
            } else {
                if (srcs[s] == tid || (s > 0 && srcs[s] == srcs[s - 1]))
                    continue;
                len = hscope_paths_get(ps, srcs[s], buf, n + 1, &cat);
                if (!len)
                    continue;
                /* skip the referrer already on the shortest path */
                hscope_id prev[2];
                uint64_t l0 = hscope_paths_get(ps, tid, NULL, 0, NULL);
                if (l0 >= 2) {
                    hscope_id *tmp = malloc(l0 * sizeof(hscope_id));
                    if (tmp) {
                        hscope_paths_get(ps, tid, tmp, l0, NULL);
                        prev[0] = tmp[l0 - 2];
                        free(tmp);
                        if (prev[0] == srcs[s])
                            continue;
                    }
                }
                int cyc = 0;
                for (uint64_t k = 0; k < len; k++)
                    cyc |= buf[k] == tid;
                if (cyc)
                    continue;
                buf[len++] = tid;
            }
            const char *rootname = len ? (cat >= 0 ? hscope_heap_root_category_name(h, (uint32_t)cat)
                                                   : "(roots)") : NULL;
            emitted++;
            if (json) {
                jw_obj(&w);
                jw_key(&w, "target"); jw_addr(&w, addrs[a]);
                jw_key(&w, "root"); jw_str(&w, rootname);
                jw_key(&w, "path"); jw_arr(&w);
                for (uint64_t k = 0; k < len; k++)
                    jw_addr(&w, hscope_heap_object_address(h, buf[k]));
                jw_end_arr(&w);
                jw_end_obj(&w);
            } else if (dot) {
                if (!len)
                    continue;
                printf("  \"root:%s\" [shape=ellipse, style=filled, fillcolor=\"#cfe2f3\"];\n", rootname);
                for (uint64_t k = 0; k < len; k++)
                    if (!seen[buf[k]]) {
                        seen[buf[k]] = 1;
                        dot_node(h, buf[k], buf[k] == tid);
                    }
                printf("  \"root:%s\" -> n%u;\n", rootname, buf[0]);
                for (uint64_t k = 1; k < len; k++) {
                    long fi = ref_index(h, buf[k - 1], buf[k]);
                    if (fi >= 0)
                        printf("  n%u -> n%u [label=\"[%ld]\", fontsize=8];\n", buf[k - 1], buf[k], fi);
                    else
                        printf("  n%u -> n%u [label=\"class\", fontsize=8, style=dashed];\n", buf[k - 1], buf[k]);
                }
            } else {
                if (!len) {
                    printf("0x%llx: not reachable from any root (garbage the dump caught)\n\n",
                           (unsigned long long)addrs[a]);
                    continue;
                }
                printf("0x%llx: path %llu from root %s (%llu steps)\n", (unsigned long long)addrs[a],
                       (unsigned long long)emitted, rootname, (unsigned long long)len);
                char lb[256];
                for (uint64_t k = 0; k < len; k++) {
                    const char *f = hscope_heap_object_file(h, buf[k]);
                    printf("  %*s0x%llx %s", (int)(k < 30 ? k : 30), "",
                           (unsigned long long)hscope_heap_object_address(h, buf[k]),
                           obj_label(h, buf[k], lb, sizeof(lb)));
                    if (f)
                        printf("  (%s:%u)", f, hscope_heap_object_line(h, buf[k]));
                    printf("\n");
                }
                printf("\n");
            }
        }
    }
    if (json) {
        jw_end_arr(&w);
        jw_end_obj(&w);
        jw_done(&w);
    } else if (dot) {
        printf("}\n");
    }
    free(buf);
    free(seen);
    free(addrs);
    hscope_paths_free(ps);
    hscope_heap_free(h);
    return rc;
}

/* ------------------------------------------------------------------ */
/* suspects                                                           */
/* ------------------------------------------------------------------ */

static int
cmd_suspects(int argc, char **argv)
{
    if (want_help(argc, argv, usage_suspects))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 0, 0 };
    int json = 0, nce = 0, np = 0;
    uint64_t top = 10;
    char *paths[3];
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_suspects);
        if (r < 0)
            return EXIT_USAGE;
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--no-class-edges") == 0)
            nce = 1;
        else if (strcmp(argv[i], "--top") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &top) != 0)
                return hscope_cli_usage_error(usage_suspects, "--top needs a number%s", "");
        } else if (argv[i][0] == '-' && argv[i][1])
            return hscope_cli_usage_error(usage_suspects, "unknown option '%s'", argv[i]);
        else if (np < 3)
            paths[np++] = argv[i];
        else
            return hscope_cli_usage_error(usage_suspects, "suspects takes three dumps ('%s' is extra)", argv[i]);
    }
    if (np != 3)
        return hscope_cli_usage_error(usage_suspects, "need three dumps A B C%s", "");
    hscope_error err = HSCOPE_ERROR_INIT;
    hscope_diff_t *d = NULL;
    hscope_diff_options dopt = HSCOPE_DIFF_OPTIONS_INIT;
    if (hscope_diff_files(&d, paths[0], paths[1], paths[2], &c.lo, &dopt, &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: suspects: %s\n", prog, err.message);
        return EXIT_BAD_INPUT;
    }
    hscope_heap_t *h = hscope_diff_heap(d);
    hscope_domtree_t *t = domtree_for(h, nce);
    hscope_paths_t *ps = NULL;
    hscope_holders_t *hs = NULL;
    hscope_dom_options o = HSCOPE_DOM_OPTIONS_INIT;
    if (nce)
        o.flags |= HSCOPE_DOM_NO_CLASS_EDGES;
    int rc = EXIT_BAD_INPUT;
    if (!t || hscope_paths_compute(&ps, h, &o, &err) != HSCOPE_OK ||
        hscope_holders_compute(&hs, t, hscope_diff_objects(d), hscope_diff_count(d), &err) != HSCOPE_OK) {
        fprintf(stderr, "%s: suspects: %s\n", prog, err.message);
        goto out;
    }
    uint64_t n = hscope_heap_object_count(h);
    hscope_id *buf = malloc((n + 1) * sizeof(hscope_id));
    if (!buf)
        goto out;
    uint64_t nh = hscope_holders_count(hs), shown = top && top < nh ? top : nh;
    jw w;
    jw_init(&w, stdout, 0);
    hscope_cli_warn_text(hscope_diff_warning_text(d));
    if (json) {
        jw_obj(&w);
        jw_key(&w, "leaked_count"); jw_u64(&w, hscope_diff_count(d));
        jw_key(&w, "leaked_memsize"); jw_u64(&w, hscope_diff_memsize(d));
        jw_key(&w, "excluded_dumper_objects"); jw_u64(&w, hscope_diff_excluded(d));
        jw_key(&w, "warnings"); jw_lines(&w, hscope_diff_warning_text(d));
        jw_key(&w, "suspects"); jw_arr(&w);
    } else {
        char a[32], b[32];
        hscope_cli_grouped(hscope_diff_count(d), a, sizeof(a));
        hscope_cli_human_bytes((double)(hscope_diff_memsize(d)), b, sizeof(b));
        printf("leaked: %s objects, %s (new in B since A, still alive in C)\n", a, b);
        if (nh)
            printf("\nwhat holds them, most leaked memory first:\n");
    }
    for (uint64_t i = 0; i < shown; i++) {
        hscope_id hid;
        int32_t hcat, pcat = -1;
        uint64_t cnt, mem;
        hscope_holders_get(hs, i, &hid, &hcat, &cnt, &mem);
        uint64_t len = hid != HSCOPE_ID_NONE ? hscope_paths_get(ps, hid, buf, n, &pcat) : 0;
        const char *rootname = hid == HSCOPE_ID_NONE
            ? (hcat >= 0 ? hscope_heap_root_category_name(h, (uint32_t)hcat) : "(several roots)")
            : len ? (pcat >= 0 ? hscope_heap_root_category_name(h, (uint32_t)pcat) : "(roots)") : NULL;
        if (json) {
            jw_obj(&w);
            if (hid != HSCOPE_ID_NONE) {
                jw_key(&w, "address"); jw_addr(&w, hscope_heap_object_address(h, hid));
                jw_key(&w, "type"); jw_str(&w, hscope_heap_type_name(h, hscope_heap_object_type(h, hid)));
                jw_key(&w, "class"); jw_str(&w, hscope_heap_object_label(h, hid));
                jw_key(&w, "file"); jw_str(&w, hscope_heap_object_file(h, hid));
                jw_key(&w, "line"); jw_u64(&w, hscope_heap_object_line(h, hid));
                jw_key(&w, "retained"); jw_u64(&w, hscope_domtree_retained(t, hid));
            } else {
                jw_key(&w, "address"); jw_null(&w);
                jw_key(&w, "type"); jw_str(&w, "ROOT");
                jw_key(&w, "class"); jw_null(&w);
            }
            jw_key(&w, "leaked_count"); jw_u64(&w, cnt);
            jw_key(&w, "leaked_memsize"); jw_u64(&w, mem);
            jw_key(&w, "root"); jw_str(&w, rootname);
            jw_key(&w, "path"); jw_arr(&w);
            for (uint64_t k = 0; k < len; k++)
                jw_addr(&w, hscope_heap_object_address(h, buf[k]));
            jw_end_arr(&w);
            jw_end_obj(&w);
        } else {
            char a[32], b[32], lb[256];
            hscope_cli_grouped(cnt, a, sizeof(a));
            hscope_cli_human_bytes((double)(mem), b, sizeof(b));
            if (hid == HSCOPE_ID_NONE) {
                printf("\n%llu. root %s directly holds %s leaked objects (%s)\n",
                       (unsigned long long)i + 1, rootname, a, b);
                continue;
            }
            const char *f = hscope_heap_object_file(h, hid);
            printf("\n%llu. 0x%llx %s holds %s leaked objects (%s)",
                   (unsigned long long)i + 1, (unsigned long long)hscope_heap_object_address(h, hid),
                   obj_label(h, hid, lb, sizeof(lb)), a, b);
            if (f)
                printf(", allocated at %s:%u", f, hscope_heap_object_line(h, hid));
            printf("\n   path from root %s:", rootname ? rootname : "(unreachable)");
            for (uint64_t k = 0; k < len; k++)
                printf("%s0x%llx %s", k ? " -> " : " ",
                       (unsigned long long)hscope_heap_object_address(h, buf[k]),
                       obj_label(h, buf[k], lb, sizeof(lb)));
            printf("\n");
        }
    }
    if (json) {
        jw_end_arr(&w);
        jw_end_obj(&w);
        jw_done(&w);
    } else if (nh > shown) {
        printf("\n... %llu more holders (--top 0 shows all)\n", (unsigned long long)(nh - shown));
    }
    free(buf);
    rc = 0;
out:
    hscope_holders_free(hs);
    hscope_paths_free(ps);
    hscope_domtree_free(t);
    hscope_diff_free(d);
    return rc;
}

/* ------------------------------------------------------------------ */
/* redact                                                             */
/* ------------------------------------------------------------------ */

typedef struct redactor {
    gzFile gz;
    FILE *f;
    uint64_t values, lines;
    int failed;
} redactor;

static void
rd_write(redactor *r, const char *p, size_t n)
{
    if (!n || r->failed)
        return;
    if (r->gz ? gzwrite(r->gz, p, (unsigned)n) != (int)n : fwrite(p, 1, n, r->f) != n)
        r->failed = 1;
}

/* Past JSON whitespace (the line's '\n' is not in [q, end)). */
static const char *
skip_blanks(const char *q, const char *end)
{
    while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
        q++;
    return q;
}

static int32_t
redact_line(void *ud, const char *line, uint64_t len, uint64_t lineno)
{
    (void)lineno;
    redactor *r = ud;
    const char *p = line, *end = line + len, *v;
    static const char key[] = "\"value\"";
    r->lines++;
    /* "value", optional whitespace, ':', optional whitespace, '"': Ruby
     * writes "value":"...", but any JSON spacing must be redacted too.
     * Inside a JSON string every quote is escaped, so the key cannot
     * match there. */
    const char *from = p;
    while ((v = memmem(from, (size_t)(end - from), key, sizeof(key) - 1)) != NULL) {
        const char *q = skip_blanks(v + sizeof(key) - 1, end);
        if (q >= end || *q != ':' || (q = skip_blanks(q + 1, end)) >= end || *q != '"') {
            from = v + 1; /* not the key of a string value: search on */
            continue;
        }
        const char *b = q + 1;
        q = b;
        while (q < end && *q != '"')
            q += (*q == '\\' && q + 1 < end) ? 2 : 1;
        if (q >= end)
            break; /* unterminated (cut line): leave as is */
        char rep[96];
        int n = snprintf(rep, sizeof(rep), "[redacted %llu bytes xxh64:%016llx]",
                         (unsigned long long)(q - b),
                         (unsigned long long)XXH64(b, (size_t)(q - b), 0));
        rd_write(r, p, (size_t)(b - p)); /* up to the opening quote */
        rd_write(r, rep, (size_t)n);
        r->values++;
        p = from = q; /* the closing quote is copied with the rest */
    }
    rd_write(r, p, (size_t)(end - p));
    rd_write(r, "\n", 1);
    return r->failed;
}

static int
cmd_redact(int argc, char **argv)
{
    if (want_help(argc, argv, usage_redact))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 0, 0 };
    const char *in = NULL, *out = NULL;
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_redact);
        if (r < 0)
            return EXIT_USAGE;
        if (r > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return hscope_cli_usage_error(usage_redact, "unknown option '%s'", argv[i]);
        else if (!in)
            in = argv[i];
        else if (!out)
            out = argv[i];
        else
            return hscope_cli_usage_error(usage_redact, "IN and OUT only ('%s' is extra)", argv[i]);
    }
    if (!in || !out)
        return hscope_cli_usage_error(usage_redact, "need IN and OUT%s", "");
    /* the same file under another name (./IN, a link) must not be
     * truncated by opening OUT: compare the files, not the names */
    struct stat si, so;
    int out_exists = stat(out, &so) == 0;
    if (strcmp(in, out) == 0 ||
        (out_exists && stat(in, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino))
        return hscope_cli_usage_error(usage_redact, "OUT is the same file as IN (%s)", out);
    /* A regular OUT is written as a temporary file beside it and renamed
     * at the end, so an existing OUT is replaced only by a complete copy.
     * Anything else (/dev/stdout, a pipe) is written to directly. */
    size_t ol = strlen(out);
    int gz = ol > 3 && strcmp(out + ol - 3, ".gz") == 0;
    char *tmp = NULL;
    int fd;
    if (out_exists && !S_ISREG(so.st_mode)) {
        fd = open(out, O_WRONLY);
        if (fd < 0) {
            fprintf(stderr, "%s: cannot open %s: %s\n", prog, out, strerror(errno));
            return EXIT_BAD_INPUT;
        }
    } else {
        if (!(tmp = malloc(ol + 16))) {
            fprintf(stderr, "%s: out of memory\n", prog);
            return EXIT_BAD_INPUT;
        }
        snprintf(tmp, ol + 16, "%s.tmp.XXXXXX", out);
        if ((fd = mkstemp(tmp)) < 0) {
            fprintf(stderr, "%s: cannot create %s: %s\n", prog, tmp, strerror(errno));
            free(tmp);
            return EXIT_BAD_INPUT;
        }
        mode_t um = umask(0);
        umask(um);
        (void)fchmod(fd, 0666 & ~um); /* mkstemp makes 0600; OUT is for sharing */
    }
    int rc = EXIT_BAD_INPUT;
    redactor rd = { NULL, NULL, 0, 0, 0 };
    if (gz)
        rd.gz = gzdopen(fd, "wb6");
    else
        rd.f = fdopen(fd, "wb");
    if (!rd.gz && !rd.f) {
        fprintf(stderr, "%s: cannot create %s: %s\n", prog, out, strerror(errno));
        close(fd);
        goto out;
    }
    /* every line is copied, whatever its length: a line the loader skips
     * as too long would never reach the hook and be lost from the copy
     * (--max-memory still bounds the memory) */
    c.lo.max_line_bytes = UINT64_MAX;
    c.lo.line_fn = redact_line;
    c.lo.line_user_data = &rd;
    hscope_tally_options to = HSCOPE_TALLY_OPTIONS_INIT;
    hscope_tally_t *t = NULL;
    hscope_error err = HSCOPE_ERROR_INIT;
    /* a streaming fold reads every line through the hook with bounded memory */
    hscope_status st = hscope_tally_file(&t, in, "type", &c.lo, &to, &err);
    if (st == HSCOPE_OK)
        hscope_cli_warn_tally_damage(in, t); /* damaged lines are still copied, redacted as text */
    hscope_tally_free(t);
    int closed = rd.gz ? gzclose(rd.gz) == Z_OK : fclose(rd.f) == 0;
    if (st != HSCOPE_OK || rd.failed || !closed) {
        fprintf(stderr, "%s: redact: %s\n", prog,
                st != HSCOPE_OK ? err.message : "write error");
        goto out;
    }
    if (tmp && rename(tmp, out) != 0) {
        fprintf(stderr, "%s: cannot create %s: %s\n", prog, out, strerror(errno));
        goto out;
    }
    fprintf(stderr, "%s: %s: %llu lines, %llu string values redacted\n", prog, out,
            (unsigned long long)rd.lines, (unsigned long long)rd.values);
    rc = 0;
out:
    if (rc && tmp)
        unlink(tmp); /* OUT itself is untouched */
    free(tmp);
    return rc;
}

/* ------------------------------------------------------------------ */
/* index                                                              */
/* ------------------------------------------------------------------ */

static int
cmd_index(int argc, char **argv)
{
    if (want_help(argc, argv, usage_index))
        return 0;
    common c = { HSCOPE_LOAD_OPTIONS_INIT, 1, { 0, 0, NULL }, 1, 0 };
    const char *outp = NULL;
    int np = 0, rc = 0;
    char **paths = calloc((size_t)argc, sizeof(char *));
    if (!paths)
        return EXIT_BAD_INPUT;
    for (int i = 2; i < argc; i++) {
        int r = load_option(&c, argc, argv, &i, usage_index);
        if (r < 0) {
            free(paths);
            return EXIT_USAGE;
        }
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--out") == 0) {
            if (i + 1 >= argc) {
                free(paths);
                return hscope_cli_usage_error(usage_index, "--out needs a FILE%s", "");
            }
            outp = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            free(paths);
            return hscope_cli_usage_error(usage_index, "unknown option '%s'", argv[i]);
        } else {
            paths[np++] = argv[i];
        }
    }
    c.no_index = 1; /* always parse the dump itself */
    if (!np || (outp && np > 1)) {
        free(paths);
        return hscope_cli_usage_error(usage_index, np ? "--out takes one DUMP only%s" : "no DUMP given%s", "");
    }
    for (int i = 0; i < np; i++) {
        char ix[4096];
        snprintf(ix, sizeof(ix), "%s.hsx", paths[i]);
        hscope_heap_t *h = load_dump(&c, paths[i]);
        if (!h) {
            rc = EXIT_BAD_INPUT;
            continue;
        }
        hscope_error err = HSCOPE_ERROR_INIT;
        const char *dst = outp ? outp : ix;
        if (hscope_heap_save(h, dst, paths[i], &err) != HSCOPE_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            rc = EXIT_BAD_INPUT;
        } else {
            struct stat sb;
            hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
            hscope_heap_stats(h, &s);
            char a[32];
            hscope_cli_human_bytes(stat(dst, &sb) == 0 ? (double)sb.st_size : 0.0, a, sizeof(a));
            printf("%s: %llu objects, %s, parsed in %.2f s\n", dst,
                   (unsigned long long)s.objects, a, (double)s.load_ns / 1e9);
        }
        hscope_heap_free(h);
    }
    free(paths);
    return rc;
}

int
main(int argc, char **argv)
{
#ifdef M_MMAP_THRESHOLD
    /* Big arrays (model columns, parser buffers, dominator arrays) come
     * and go during one command; with a fixed threshold glibc maps each on
     * its own and unmaps it when freed, so the resident set follows what is
     * in use instead of keeping freed arrays in the heap (glibc's default
     * raises the threshold after the first big free). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    hscope_cli_guard_terminal();
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_main, stdout);
        return 0;
    }
    /* -V/--version works anywhere before "--", like -h/--help */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "-V") == 0 || strcmp(argv[i], "--version") == 0) {
            printf("heapscope %s (library %s)\n", HSCOPE_VERSION_STRING, hscope_version_string());
            return 0;
        }
    }
    if (strcmp(cmd, "summary") == 0)
        return cmd_summary(argc, argv);
    if (strcmp(cmd, "tally") == 0)
        return cmd_tally(argc, argv);
    if (strcmp(cmd, "diff") == 0)
        return cmd_diff(argc, argv);
    if (strcmp(cmd, "show") == 0)
        return cmd_show(argc, argv);
    if (strcmp(cmd, "generations") == 0)
        return cmd_generations(argc, argv);
    if (strcmp(cmd, "dominators") == 0)
        return cmd_dominators(argc, argv);
    if (strcmp(cmd, "retained") == 0)
        return cmd_retained(argc, argv);
    if (strcmp(cmd, "root") == 0)
        return cmd_root(argc, argv);
    if (strcmp(cmd, "suspects") == 0)
        return cmd_suspects(argc, argv);
    if (strcmp(cmd, "redact") == 0)
        return cmd_redact(argc, argv);
    if (strcmp(cmd, "index") == 0)
        return cmd_index(argc, argv);
    if (strcmp(cmd, "timeline") == 0)
        return hscope_cli_timeline(argc, argv);
    if (strcmp(cmd, "histogram") == 0)
        return hscope_cli_histogram(argc, argv);
    if (strcmp(cmd, "export") == 0)
        return hscope_cli_export(argc, argv);
    if (strcmp(cmd, "report") == 0)
        return hscope_cli_report(argc, argv);
    fprintf(stderr, "%s: unknown command '%s'\n\n%s", prog, cmd, usage_main);
    return EXIT_USAGE;
}
