/*
 * export.c - heapscope export: dumps, objects, references and roots as
 * CSV or JSON-lines tables, plus schema.sql (psql) and schema.duckdb.sql,
 * for fleets of dumps that outgrow one process.
 *
 * One dump is loaded at a time (values off: STRING values, which hold
 * secrets, are never loaded, so never exported).  Every text field is
 * written as valid UTF-8 (bytes that are not are replaced by U+FFFD),
 * because PostgreSQL refuses invalid UTF-8 in COPY.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

static const char *prog = "heapscope";

static const char usage_export[] =
    "usage: heapscope export --format csv|jsonl --out DIR [--first-id N]\n"
    "                        [--order auto|name|mtime|given] [load options]\n"
    "                        DUMP...\n"
    "\n"
    "Write the dumps as tables for PostgreSQL or DuckDB, one dump id per DUMP\n"
    "(in time order, see 'heapscope timeline --help'):\n"
    "  dumps     dump_id, seq, path, name, taken_at, order_source, objects,\n"
    "            refs, memsize, bytes, input_bytes, gzip, skipped_lines\n"
    "  objects   dump_id, address, type, class, class_address, memsize, size,\n"
    "            file, line, method, generation, flags, detail\n"
    "  refs      dump_id, from_address, to_address (object references, in\n"
    "            dump order, with duplicates)\n"
    "  roots     dump_id, category, address\n"
    "and DIR/schema.sql: CREATE TABLE and \\copy lines, so that\n"
    "'psql -f DIR/schema.sql' loads everything; DIR/schema.duckdb.sql does the\n"
    "same for 'duckdb FILE.db < DIR/schema.duckdb.sql'.  String values are\n"
    "never exported.\n"
    "\n"
    "  --format F      csv (RFC 4180, header line) or jsonl (one object a line)\n"
    "  --out DIR       output directory (created if missing; files replaced)\n"
    "  --first-id N    dump_id of the first dump (default 1), to add more\n"
    "                  dumps to a database later\n"
    "  --order HOW     auto (default), name, mtime or given\n";

/* Column sets (the order of the CSV columns and JSON keys). */
static const char *const dumps_cols[] = { "dump_id", "seq", "path", "name", "taken_at",
    "order_source", "objects", "refs", "memsize", "bytes", "input_bytes", "gzip",
    "skipped_lines", NULL };
static const char *const objects_cols[] = { "dump_id", "address", "type", "class",
    "class_address", "memsize", "size", "file", "line", "method", "generation", "flags",
    "detail", NULL };
static const char *const refs_cols[] = { "dump_id", "from_address", "to_address", NULL };
static const char *const roots_cols[] = { "dump_id", "category", "address", NULL };

typedef struct table {
    const char *name;
    const char *const *cols;
    const char *ddl;        /* column definitions */
    FILE *f;
    char *buf;
} table;

/* A row writer: CSV or JSON lines. */
typedef struct row {
    FILE *f;
    int jsonl;
    const char *const *cols;
    int i;
} row;

static void
row_begin(row *r, table *t, int jsonl)
{
    r->f = t->f;
    r->jsonl = jsonl;
    r->cols = t->cols;
    r->i = 0;
    if (jsonl)
        fputc('{', r->f);
}

static void
row_sep(row *r)
{
    if (r->jsonl)
        fprintf(r->f, "%s\"%s\":", r->i ? "," : "", r->cols[r->i]);
    else if (r->i)
        fputc(',', r->f);
    r->i++;
}

static void
row_end(row *r)
{
    if (r->jsonl)
        fputc('}', r->f);
    fputc('\n', r->f);
}

static void
col_null(row *r)
{
    row_sep(r);
    if (r->jsonl)
        fputs("null", r->f);
}

static void
col_u64(row *r, uint64_t v)
{
    row_sep(r);
    fprintf(r->f, "%llu", (unsigned long long)v);
}

static void
col_bool(row *r, int v)
{
    row_sep(r);
    fputs(v ? "true" : "false", r->f);
}

static void
col_addr(row *r, uint64_t a)
{
    row_sep(r);
    fprintf(r->f, r->jsonl ? "\"0x%llx\"" : "0x%llx", (unsigned long long)a);
}

/* Valid UTF-8 sequence length at s (0 if invalid). */
static int
utf8_len(const unsigned char *s)
{
    unsigned c = s[0], v, min;
    int n;
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0) {
        n = 2; v = c & 0x1F; min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3; v = c & 0x0F; min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4; v = c & 0x07; min = 0x10000;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    return n;
}

/* A text value; NULL -> SQL NULL.  CSV: quoted when needed (an empty
 * string is "" so that it is not read as NULL); JSON: escaped. */
static void
col_str(row *r, const char *s)
{
    if (!s) {
        col_null(r);
        return;
    }
    row_sep(r);
    FILE *f = r->f;
    const unsigned char *p = (const unsigned char *)s;
    int quote = r->jsonl || !*s;
    if (!quote)
        for (const unsigned char *q = p; *q; q++)
            if (*q == ',' || *q == '"' || *q == '\n' || *q == '\r' || *q == '\\' ||
                *q >= 0x80 || *q < 0x20 || (q == p && *q == ' ')) {
                quote = 1;
                break;
            }
    if (!quote) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    while (*p) {
        int l = utf8_len(p);
        if (l == 0) {
            fputs("\xef\xbf\xbd", f);
            p++;
            continue;
        }
        unsigned c = *p;
        if (l == 1) {
            if (r->jsonl) {
                switch (c) {
                case '"': fputs("\\\"", f); break;
                case '\\': fputs("\\\\", f); break;
                case '\n': fputs("\\n", f); break;
                case '\r': fputs("\\r", f); break;
                case '\t': fputs("\\t", f); break;
                default:
                    if (c < 0x20 || c == 0x7f)
                        fprintf(f, "\\u%04x", c);
                    else
                        fputc((int)c, f);
                }
            } else {
                if (c == '"')
                    fputc('"', f);
                fputc((int)c, f);
            }
        } else {
            fwrite(p, 1, (size_t)l, f);
        }
        p += l;
    }
    fputc('"', f);
}

static int
open_table(table *t, const char *dir, int jsonl)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s.%s", dir, t->name, jsonl ? "jsonl" : "csv");
    t->f = fopen(path, "w");
    if (!t->f) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    t->buf = malloc(1 << 20);
    if (t->buf)
        setvbuf(t->f, t->buf, _IOFBF, 1 << 20);
    if (!jsonl) {
        for (int i = 0; t->cols[i]; i++)
            fprintf(t->f, "%s%s", i ? "," : "", t->cols[i]);
        fputc('\n', t->f);
    }
    return 0;
}

static int
close_table(table *t, const char *dir, int jsonl)
{
    int rc = 0;
    if (t->f) {
        if (ferror(t->f) | (fclose(t->f) != 0)) {
            fprintf(stderr, "%s: %s/%s.%s: write error\n", prog, dir, t->name,
                    jsonl ? "jsonl" : "csv");
            rc = -1;
        }
    }
    t->f = NULL;
    free(t->buf);
    t->buf = NULL;
    return rc;
}

/* psql single-quoted argument: '' doubles a quote. */
static void
sql_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

static int
write_schema(const char *dir, const char *absdir, table *tabs, int ntab, int jsonl,
             int duck)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, duck ? "schema.duckdb.sql" : "schema.sql");
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    const char *ext = jsonl ? "jsonl" : "csv";
    fprintf(f, "-- heapscope %s export (%s): %s\n", hscope_version_string(), ext,
            duck ? "duckdb FILE.db < schema.duckdb.sql" : "psql -f schema.sql");
    fprintf(f, "-- Tables are created if missing, so several exports (with distinct\n"
               "-- --first-id ranges) can be loaded into one database.\n");
    if (!duck)
        fprintf(f, "\\set ON_ERROR_STOP on\nBEGIN;\nSET LOCAL client_encoding = 'UTF8';\n");
    for (int i = 0; i < ntab; i++)
        fprintf(f, "CREATE TABLE IF NOT EXISTS %s (\n%s\n);\n", tabs[i].name, tabs[i].ddl);
    if (!duck && jsonl)
        fprintf(f, "CREATE TEMP TABLE heapscope_jsonl (doc jsonb) ON COMMIT DROP;\n");
    for (int i = 0; i < ntab; i++) {
        char file[PATH_MAX];
        snprintf(file, sizeof(file), "%s/%s.%s", absdir, tabs[i].name, ext);
        if (duck) {
            fprintf(f, "COPY %s FROM ", tabs[i].name);
            sql_quoted(f, file);
            fprintf(f, jsonl ? " (FORMAT json);\n" : " (FORMAT csv, HEADER true);\n");
        } else if (!jsonl) {
            fprintf(f, "\\copy %s FROM ", tabs[i].name);
            sql_quoted(f, file);
            fprintf(f, " WITH (FORMAT csv, HEADER true)\n");
        } else {
            /* one JSON document per line: CSV mode with quote and delimiter
             * bytes that never occur in the files (JSON escapes controls) */
            fprintf(f, "\\copy heapscope_jsonl (doc) FROM ");
            sql_quoted(f, file);
            fprintf(f, " WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')\n");
            fprintf(f, "INSERT INTO %s SELECT r.* FROM heapscope_jsonl, "
                       "jsonb_populate_record(NULL::%s, doc) AS r;\n"
                       "TRUNCATE heapscope_jsonl;\n", tabs[i].name, tabs[i].name);
        }
    }
    fprintf(f, "CREATE INDEX IF NOT EXISTS objects_dump_address ON objects (dump_id, address);\n");
    fprintf(f, "CREATE INDEX IF NOT EXISTS refs_dump_to ON refs (dump_id, to_address);\n");
    if (!duck)
        fprintf(f, "COMMIT;\nANALYZE dumps;\nANALYZE objects;\nANALYZE refs;\nANALYZE roots;\n");
    int rc = 0;
    if (ferror(f) | (fclose(f) != 0)) {
        fprintf(stderr, "%s: %s: write error\n", prog, path);
        rc = -1;
    }
    return rc;
}

static int
export_one(hscope_heap_t *h, uint64_t id, table *tabs, int jsonl)
{
    const void *data;
    uint64_t n, len;
    int32_t et;
    const uint64_t *addr;
    const uint8_t *type;
    const uint16_t *flags;
    const uint32_t *mem, *size, *gen, *site, *rstart, *refs;
    n = hscope_heap_object_count(h);
#define COL(c, var, want)                                                       \
    do {                                                                        \
        if (hscope_heap_column(h, (c), &data, &len, &et) != HSCOPE_OK ||        \
            et != (want))                                                       \
            return -1;                                                          \
        var = data;                                                             \
    } while (0)
    COL(HSCOPE_COL_ADDRESS, addr, HSCOPE_ELEM_U64);
    COL(HSCOPE_COL_TYPE, type, HSCOPE_ELEM_U8);
    COL(HSCOPE_COL_FLAGS, flags, HSCOPE_ELEM_U16);
    COL(HSCOPE_COL_MEMSIZE, mem, HSCOPE_ELEM_U32);
    COL(HSCOPE_COL_SIZE, size, HSCOPE_ELEM_U32);
    COL(HSCOPE_COL_GENERATION, gen, HSCOPE_ELEM_U32);
    COL(HSCOPE_COL_SITE, site, HSCOPE_ELEM_U32);
    COL(HSCOPE_COL_REF_START, rstart, HSCOPE_ELEM_U32);
    COL(HSCOPE_COL_REFS, refs, HSCOPE_ELEM_U32);
#undef COL
    table *to = &tabs[1], *tr = &tabs[2], *tt = &tabs[3];
    row r;
    for (uint64_t i = 0; i < n; i++) {
        hscope_id id32 = (hscope_id)i;
        int t = type[i];
        uint32_t fid = 0, line = 0, mid = 0;
        hscope_heap_site(h, site[i], &fid, &line, &mid);
        const char *file = hscope_heap_string(h, fid);
        const char *method = hscope_heap_string(h, mid);
        row_begin(&r, to, jsonl);
        col_u64(&r, id);
        col_addr(&r, addr[i]);
        col_str(&r, hscope_heap_type_name(h, t));
        col_str(&r, hscope_heap_object_class_label(h, id32));
        uint64_t ca = hscope_heap_object_class_address(h, id32);
        if (ca)
            col_addr(&r, ca);
        else
            col_null(&r);
        col_u64(&r, mem[i] != 0xFFFFFFFFu ? mem[i] : hscope_heap_object_memsize(h, id32));
        if (t == HSCOPE_TYPE_STRING || t == HSCOPE_TYPE_SYMBOL || t == HSCOPE_TYPE_ARRAY ||
            t == HSCOPE_TYPE_HASH)
            col_u64(&r, size[i] != 0xFFFFFFFFu ? size[i] : hscope_heap_object_size(h, id32));
        else
            col_null(&r);
        col_str(&r, file);
        if (file || line)
            col_u64(&r, line);
        else
            col_null(&r);
        col_str(&r, method);
        if (gen[i] != 0xFFFFFFFFu)
            col_u64(&r, gen[i]);
        else
            col_null(&r);
        col_u64(&r, flags[i]);
        col_str(&r, hscope_heap_object_detail(h, id32));
        row_end(&r);
        for (uint32_t e = rstart[i]; e < rstart[i + 1]; e++) {
            row_begin(&r, tr, jsonl);
            col_u64(&r, id);
            col_addr(&r, addr[i]);
            col_addr(&r, addr[refs[e]]);
            row_end(&r);
        }
    }
    for (uint32_t c = 0; c < hscope_heap_root_category_count(h); c++) {
        const hscope_id *tg;
        const uint64_t *dang;
        uint64_t nt = 0, nd = 0;
        hscope_heap_root_targets(h, c, &tg, &nt, NULL);
        hscope_heap_root_dangling(h, c, &dang, &nd);
        const char *cat = hscope_heap_root_category_name(h, c);
        for (uint64_t k = 0; k < nt + nd; k++) {
            row_begin(&r, tt, jsonl);
            col_u64(&r, id);
            col_str(&r, cat);
            col_addr(&r, k < nt ? addr[tg[k]] : dang[k - nt]);
            row_end(&r);
        }
    }
    return 0;
}

int
hscope_cli_export(int argc, char **argv)
{
    if (hscope_cli_want_help(argc, argv, usage_export))
        return 0;
    hscope_load_options lo = HSCOPE_LOAD_OPTIONS_INIT;
    const char *format = NULL, *out = NULL, *order = "auto";
    uint64_t first_id = 1;
    char **paths = calloc((size_t)argc, sizeof(char *));
    size_t np = 0;
    int rc = 0;
    if (!paths) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    for (int i = 2; i < argc && !rc; i++) {
        const char *a = argv[i];
        int r = hscope_cli_load_option(&lo, argc, argv, &i, usage_export);
        if (r < 0) {
            rc = HSCOPE_CLI_EXIT_USAGE;
            break;
        }
        if (r > 0)
            continue;
        if (strcmp(a, "--format") == 0) {
            if (i + 1 >= argc)
                rc = hscope_cli_usage_error(usage_export, "--format needs csv or jsonl%s", "");
            else if (strcmp(argv[++i], "csv") && strcmp(argv[i], "jsonl"))
                rc = hscope_cli_usage_error(usage_export,
                                            "--format: expected csv or jsonl, not '%s'", argv[i]);
            else
                format = argv[i];
        } else if (strcmp(a, "--out") == 0) {
            if (i + 1 >= argc)
                rc = hscope_cli_usage_error(usage_export, "--out needs a DIR%s", "");
            else
                out = argv[++i];
        } else if (strcmp(a, "--first-id") == 0) {
            if (i + 1 >= argc || hscope_cli_parse_size(argv[++i], &first_id) != 0 ||
                first_id == 0 || first_id > 1000000000u)
                rc = hscope_cli_usage_error(usage_export,
                                            "--first-id needs a number from 1 to 10^9%s", "");
        } else if (strcmp(a, "--order") == 0) {
            if (i + 1 >= argc) {
                rc = hscope_cli_usage_error(usage_export, "--order needs auto, name, mtime or given%s", "");
            } else {
                order = argv[++i];
                if (strcmp(order, "auto") && strcmp(order, "name") && strcmp(order, "mtime") &&
                    strcmp(order, "given"))
                    rc = hscope_cli_usage_error(usage_export,
                                                "--order: expected auto, name, mtime or given, not '%s'",
                                                order);
            }
        } else if (a[0] == '-' && a[1]) {
            rc = hscope_cli_usage_error(usage_export, "unknown option '%s'", a);
        } else {
            paths[np++] = argv[i];
        }
    }
    if (!rc && !format)
        rc = hscope_cli_usage_error(usage_export, "--format csv|jsonl is required%s", "");
    if (!rc && !out)
        rc = hscope_cli_usage_error(usage_export, "--out DIR is required%s", "");
    if (!rc && np == 0)
        rc = hscope_cli_usage_error(usage_export, "no DUMP given%s", "");
    if (rc) {
        free(paths);
        return rc;
    }
    int jsonl = strcmp(format, "jsonl") == 0;

    hscope_cli_dump *d = calloc(np, sizeof(hscope_cli_dump));
    if (!d) {
        free(paths);
        fprintf(stderr, "%s: out of memory\n", prog);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    for (size_t i = 0; i < np; i++)
        d[i].path = paths[i];
    hscope_cli_order ord;
    char ebuf[256];
    if (hscope_cli_order_dumps(d, np, order, &ord, ebuf, sizeof(ebuf)) != 0) {
        rc = hscope_cli_usage_error(usage_export, "%s", ebuf);
        free(d);
        free(paths);
        return rc;
    }

    char absdir[PATH_MAX];
    if (mkdir(out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: %s: %s\n", prog, out, strerror(errno));
        free(d);
        free(paths);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }
    if (!realpath(out, absdir)) {
        fprintf(stderr, "%s: %s: %s\n", prog, out, strerror(errno));
        free(d);
        free(paths);
        return HSCOPE_CLI_EXIT_BAD_INPUT;
    }

    table tabs[4] = {
        { "dumps", dumps_cols,
          "  dump_id       integer PRIMARY KEY,\n"
          "  seq           integer NOT NULL,      -- 1-based position in time order\n"
          "  path          text NOT NULL,\n"
          "  name          text NOT NULL,\n"
          "  taken_at      timestamptz,           -- NULL when the time is not known\n"
          "  order_source  text NOT NULL,         -- datetime, epoch, epoch-ms, sequence, mtime, given\n"
          "  objects       bigint NOT NULL,\n"
          "  refs          bigint NOT NULL,\n"
          "  memsize       bigint NOT NULL,\n"
          "  bytes         bigint NOT NULL,       -- uncompressed dump size\n"
          "  input_bytes   bigint NOT NULL,       -- file size (compressed for gzip)\n"
          "  gzip          boolean NOT NULL,\n"
          "  skipped_lines bigint NOT NULL",
          NULL, NULL },
        { "objects", objects_cols,
          "  dump_id       integer NOT NULL,\n"
          "  address       text NOT NULL,         -- '0x7f...' as in the dump\n"
          "  type          text NOT NULL,         -- STRING, ARRAY, ...\n"
          "  class         text NOT NULL,         -- class label (<hidden>, <imemo:env>, ...)\n"
          "  class_address text,\n"
          "  memsize       bigint NOT NULL,\n"
          "  size          bigint,                -- bytesize / length / size (STRING, SYMBOL, ARRAY, HASH)\n"
          "  file          text,                  -- allocation site (traced objects)\n"
          "  line          integer,\n"
          "  method        text,\n"
          "  generation    bigint,\n"
          "  flags         integer NOT NULL,      -- HSCOPE_FLAG_* bits\n"
          "  detail        text                   -- class/module name, imemo type, DATA struct",
          NULL, NULL },
        { "refs", refs_cols,
          "  dump_id       integer NOT NULL,\n"
          "  from_address  text NOT NULL,\n"
          "  to_address    text NOT NULL",
          NULL, NULL },
        { "roots", roots_cols,
          "  dump_id       integer NOT NULL,\n"
          "  category      text NOT NULL,         -- vm, machine_context, global_tbl, ...\n"
          "  address       text NOT NULL",
          NULL, NULL },
    };
    for (int t = 0; t < 4 && !rc; t++)
        if (open_table(&tabs[t], out, jsonl) != 0)
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;

    uint64_t total_objects = 0, total_refs = 0;
    for (size_t k = 0; k < np && !rc; k++) {
        hscope_heap_t *h = NULL;
        hscope_error err = HSCOPE_ERROR_INIT;
        if (hscope_heap_open_file(&h, d[k].path, &lo, &err) != HSCOPE_OK) {
            fprintf(stderr, "%s: %s: %s\n", prog, d[k].path, err.message);
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
            break;
        }
        hscope_cli_warn_heap_damage(d[k].path, h);
        hscope_load_stats s = HSCOPE_LOAD_STATS_INIT;
        hscope_heap_stats(h, &s);
        uint64_t id = first_id + k;
        row r;
        row_begin(&r, &tabs[0], jsonl);
        col_u64(&r, id);
        col_u64(&r, k + 1);
        col_str(&r, d[k].path);
        col_str(&r, hscope_cli_basename(d[k].path));
        if (d[k].has_time) {
            char tb[48];
            time_t sec = (time_t)d[k].time;
            struct tm tm;
            gmtime_r(&sec, &tm);
            strftime(tb, sizeof(tb), "%Y-%m-%dT%H:%M:%S", &tm);
            char full[64];
            snprintf(full, sizeof(full), "%s.%03dZ", tb,
                     (int)((d[k].time - (double)sec) * 1000.0 + 0.5) % 1000);
            col_str(&r, full);
        } else {
            col_null(&r);
        }
        col_str(&r, ord.source);
        col_u64(&r, s.objects);
        col_u64(&r, s.references);
        col_u64(&r, s.total_memsize);
        col_u64(&r, s.bytes);
        col_u64(&r, s.input_bytes);
        col_bool(&r, (int)s.gzip);
        col_u64(&r, s.skipped_lines);
        row_end(&r);
        if (export_one(h, id, tabs, jsonl) != 0) {
            fprintf(stderr, "%s: %s: cannot read the heap's columns\n", prog, d[k].path);
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
        }
        total_objects += s.objects;
        total_refs += s.references;
        hscope_heap_free(h);
        for (int t = 0; t < 4 && !rc; t++)
            if (ferror(tabs[t].f)) {
                fprintf(stderr, "%s: %s/%s: write error\n", prog, out, tabs[t].name);
                rc = HSCOPE_CLI_EXIT_BAD_INPUT;
            }
    }
    for (int t = 0; t < 4; t++)
        if (close_table(&tabs[t], out, jsonl) != 0 && !rc)
            rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    if (!rc && (write_schema(out, absdir, tabs, 4, jsonl, 0) != 0 ||
                write_schema(out, absdir, tabs, 4, jsonl, 1) != 0))
        rc = HSCOPE_CLI_EXIT_BAD_INPUT;
    if (!rc)
        fprintf(stderr, "%s: exported %zu dump%s (ids %llu-%llu, order %s by %s): %llu objects, "
                        "%llu references -> %s/{dumps,objects,refs,roots}.%s, schema.sql\n",
                prog, np, np == 1 ? "" : "s", (unsigned long long)first_id,
                (unsigned long long)(first_id + np - 1), ord.name, ord.source,
                (unsigned long long)total_objects, (unsigned long long)total_refs, out,
                jsonl ? "jsonl" : "csv");
    free(d);
    free(paths);
    return rc;
}
