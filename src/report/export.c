/*
 * export.c - dumps, objects, references and roots as CSV or JSON-lines
 * tables, plus schema.sql (psql) and schema.duckdb.sql, for fleets of
 * dumps that outgrow one process (docs/TIMELINE.md, "heapscope export").
 *
 * One dump is loaded at a time, without its values: STRING values hold
 * secrets and are never loaded, so never exported.  Every text field is
 * valid UTF-8 (what is not becomes U+FFFD), because PostgreSQL refuses
 * invalid UTF-8 in COPY.  Rows go out through hscope__out into a FILE with
 * a large buffer; rows are formatted in place through a row cursor, numbers
 * by hand and text values copied from their escaped form made once per dump
 * (strcache; the tables are as large as the dumps), and a dump's objects and
 * references tables shared by two threads in chunks (rows_two) unless the
 * load asks for one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../model/model.h"
#include "../analysis/order.h"
#include "common.h"
#include "export.h"
#include "jsonw.h"
#include "out.h"
#include "rowcur.h"

#define NTABLES 4
#define MAX_COLS 16
#define TABLE_BUF ((size_t)1 << 20)

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
    const char *ddl;          /* column definitions */
    FILE *f;
    char *buf;
    hscope__out out;
    hscope_error out_err;     /* the output's own: tables may be written on */
    int sys_errno;            /* two threads; errno of the failed write */
    hscope__json js;          /* JSON lines: the string escaper */
    int col;                  /* next column of the row */
    int jl;                   /* JSON lines, not CSV */
    /* what goes before column c's value in a row: CSV "" then ",";
     * JSON lines "{\"name\":" then ",\"name\":" (from cols) */
    char lead[MAX_COLS][24];
    uint8_t lead_len[MAX_COLS];
    const struct strcache *sc; /* while a dump's rows are written: its strings, escaped */
} table;

static const table table_defs[NTABLES] = {
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
      NULL, NULL, { 0 }, { 0 }, 0 },
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
      NULL, NULL, { 0 }, { 0 }, 0 },
    { "refs", refs_cols,
      "  dump_id       integer NOT NULL,\n"
      "  from_address  text NOT NULL,\n"
      "  to_address    text NOT NULL",
      NULL, NULL, { 0 }, { 0 }, 0 },
    { "roots", roots_cols,
      "  dump_id       integer NOT NULL,\n"
      "  category      text NOT NULL,         -- vm, machine_context, global_tbl, ...\n"
      "  address       text NOT NULL",
      NULL, NULL, { 0 }, { 0 }, 0 },
};

/* ------------------------------------------------------------------ */
/* rows: CSV or JSON lines                                             */
/* ------------------------------------------------------------------ */

static int32_t
file_write(void *ud, const char *data, uint64_t len)
{
    return fwrite(data, 1, (size_t)len, ud) == len ? 0 : -1;
}

static int32_t
table_write(void *ud, const char *data, uint64_t len)
{
    struct table *t = ud;
    if (fwrite(data, 1, (size_t)len, t->f) == len)
        return 0;
    t->sys_errno = errno ? errno : EIO;
    return -1;
}

/* A table that could not be written, said with its file and the cause. */
static hscope_status
table_failed(const struct table *t, const hscope_export_t *ex, int jsonl, hscope_error *err)
{
    return hscope__fail_errno(err, t->sys_errno ? t->sys_errno : EIO, "cannot write %s/%s.%s",
                              ex->dir, t->name, jsonl ? "jsonl" : "csv");
}

static int
is_jsonl(const hscope_export_t *ex)
{
    return ex->format == HSCOPE_FORMAT_JSONL;
}

static void
row_begin(table *t, int jsonl)
{
    t->col = 0;
    if (jsonl)
        hscope__out_putc(&t->out, '{');
}

static void
row_sep(table *t, int jsonl)
{
    hscope__out *o = &t->out;
    if (jsonl) {
        if (t->col)
            hscope__out_putc(o, ',');
        hscope__out_putc(o, '"');
        hscope__out_puts(o, t->cols[t->col]);
        hscope__out_puts(o, "\":");
    } else if (t->col) {
        hscope__out_putc(o, ',');
    }
    t->col++;
}

static void
row_end(table *t, int jsonl)
{
    if (jsonl)
        hscope__out_putc(&t->out, '}');
    hscope__out_putc(&t->out, '\n');
}

static void
col_null(table *t, int jsonl)
{
    row_sep(t, jsonl);
    if (jsonl)
        hscope__out_puts(&t->out, "null");
}

static void
col_u64(table *t, int jsonl, uint64_t v)
{
    char b[24];
    char *p = hscope__u64_digits(b + sizeof(b), v);
    row_sep(t, jsonl);
    hscope__out_write(&t->out, p, (size_t)(b + sizeof(b) - p));
}

static void
col_bool(table *t, int jsonl, int v)
{
    row_sep(t, jsonl);
    hscope__out_puts(&t->out, v ? "true" : "false");
}

/* "0x7f3a..." (quoted in JSON). */
static void
col_addr(table *t, int jsonl, uint64_t a)
{
    static const char hex[] = "0123456789abcdef";
    char b[20];
    int i = (int)sizeof(b);
    if (jsonl)
        b[--i] = '"';
    do {
        b[--i] = hex[a & 15];
        a >>= 4;
    } while (a);
    b[--i] = 'x';
    b[--i] = '0';
    if (jsonl)
        b[--i] = '"';
    row_sep(t, jsonl);
    hscope__out_write(&t->out, b + i, sizeof(b) - (size_t)i);
}

/* A text value; NULL is SQL NULL (CSV: an empty unquoted field). */
static void
col_str(table *t, int jsonl, const char *s)
{
    if (!s) {
        col_null(t, jsonl);
        return;
    }
    row_sep(t, jsonl);
    if (jsonl)
        hscope__json_str(&t->js, s);
    else
        hscope__csv_field(&t->out, s);
}

/* ------------------------------------------------------------------ */
/* files                                                               */
/* ------------------------------------------------------------------ */

/*
 * A table file of an earlier export is replaced, not truncated.  On ext4,
 * truncating a file of hundreds of MB frees its page cache in the open
 * call (0.06 s for the 420 MB of a 1 GB dump's tables), and a file
 * truncated to nothing and written again is flushed to disk by its close
 * (ext4's auto_da_alloc: another 0.06 s, in the process's own time).  So
 * an existing table that is a plain file of ours with one link is renamed
 * aside first (.NAME.old in the same directory, a rename within one
 * directory), the table is created anew with the old file's permission
 * bits, and the old file is unlinked on a thread of its own while the
 * dumps load (stale: every one is gone before the export returns).  A
 * symbolic link, a file with other links, a FIFO or device, a file owned by
 * someone else, and any step that fails, go the usual way: fopen "w",
 * which writes through the link and keeps the inode.  A file left aside
 * by an export that was killed is replaced by the next one's.
 */
typedef struct stale {
    char path[NTABLES][PATH_MAX];
    int n;
    pthread_t th;
    int running;
} stale;

static void *
stale_unlink(void *arg)
{
    stale *s = arg;
    for (int i = 0; i < s->n; i++)
        (void)unlink(s->path[i]);
    return NULL;
}

/* Unlink the files set aside: on a thread while the dumps load (start),
 * then wait for it (finish); where no thread can be had, at once. */
static void
stale_start(stale *s)
{
    s->running = s->n && pthread_create(&s->th, NULL, stale_unlink, s) == 0;
    if (!s->running)
        stale_unlink(s);
}

static void
stale_finish(stale *s)
{
    if (s->running)
        pthread_join(s->th, NULL);
    s->running = 0;
    s->n = 0;
}

static FILE *
open_fresh(const char *dir, const char *file, stale *s)
{
    char path[PATH_MAX], aside[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    struct stat st;
    if (s && s->n < NTABLES && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_nlink == 1 && st.st_uid == geteuid() &&
        snprintf(aside, sizeof(aside), "%s/.%s.old", dir, file) < (int)sizeof(aside) &&
        rename(path, aside) == 0) {
        memcpy(s->path[s->n++], aside, sizeof(aside));
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
        if (fd >= 0) {
            (void)fchmod(fd, st.st_mode & 07777); /* as it was, whatever the umask */
            FILE *f = fdopen(fd, "w");
            if (f)
                return f;
            close(fd);
        } else if (rename(aside, path) == 0) {
            s->n--; /* no new file (out of inodes?): the old one back, truncated below */
        }
    }
    return fopen(path, "w");
}

static hscope_status
open_table(table *t, const hscope_export_t *ex, hscope__mem *m, stale *s, hscope_error *err)
{
    char path[PATH_MAX], file[64];
    snprintf(file, sizeof(file), "%s.%s", t->name, is_jsonl(ex) ? "jsonl" : "csv");
    snprintf(path, sizeof(path), "%s/%s", ex->dir, file);
    t->f = open_fresh(ex->dir, file, s);
    if (!t->f)
        return hscope__fail_errno(err, errno, "cannot write %s", path);
    /* rows are formatted into the table's 1 MiB buffer and go straight
     * to the file from there (no second copy into stdio's buffer) */
    t->buf = hscope__malloc(m, TABLE_BUF);
    hscope__error_init(&t->out_err);
    t->sys_errno = 0;
    hscope__out_init(&t->out, table_write, t, &t->out_err);
    if (t->buf) {
        setvbuf(t->f, NULL, _IONBF, 0);
        hscope__out_use_buffer(&t->out, t->buf, TABLE_BUF);
    } else {
        setvbuf(t->f, NULL, _IOFBF, 1 << 16);
    }
    hscope__json_init(&t->js, &t->out, 0);
    t->js.script_safe = 1; /* invalid UTF-8 as \ufffd */
    t->jl = is_jsonl(ex);
    memset(t->lead, 0, sizeof(t->lead));
    for (int i = 0; t->cols[i] && i < MAX_COLS; i++) {
        int n = t->jl ? snprintf(t->lead[i], sizeof(t->lead[i]), "%s\"%s\":", i ? "," : "{",
                                 t->cols[i])
                      : snprintf(t->lead[i], sizeof(t->lead[i]), "%s", i ? "," : "");
        t->lead_len[i] = (uint8_t)n;
    }
    if (!t->jl) {
        for (int i = 0; t->cols[i]; i++) {
            if (i)
                hscope__out_putc(&t->out, ',');
            hscope__out_puts(&t->out, t->cols[i]);
        }
        hscope__out_putc(&t->out, '\n');
    }
    return HSCOPE_OK;
}

/* Close a table's file (every one, even after an error); the first
 * error wins. */
static hscope_status
close_table(table *t, const hscope_export_t *ex, hscope__mem *m, hscope_error *err)
{
    hscope_status st = HSCOPE_OK;
    if (t->f) {
        int bad = hscope__out_finish(&t->out) != HSCOPE_OK || ferror(t->f);
        if (fclose(t->f) != 0) {
            if (!t->sys_errno)
                t->sys_errno = errno;
            bad = 1;
        }
        if (bad)
            st = table_failed(t, ex, is_jsonl(ex), err);
    }
    t->f = NULL;
    hscope__free(m, t->buf);
    t->buf = NULL;
    return st;
}

/* psql single-quoted argument: '' doubles a quote. */
static void
sql_quoted(hscope__out *o, const char *s)
{
    hscope__out_putc(o, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            hscope__out_putc(o, '\'');
        hscope__out_putc(o, *s);
    }
    hscope__out_putc(o, '\'');
}

static void
schema_copy(hscope__out *o, const hscope_export_t *ex, const char *name, int duck)
{
    const char *ext = is_jsonl(ex) ? "jsonl" : "csv";
    char file[HSCOPE__PATH_MAX + 64];
    snprintf(file, sizeof(file), "%s/%s.%s", ex->absdir, name, ext);
    if (duck) {
        hscope__out_printf(o, "COPY %s FROM ", name);
        sql_quoted(o, file);
        hscope__out_puts(o, is_jsonl(ex) ? " (FORMAT json);\n" : " (FORMAT csv, HEADER true);\n");
    } else if (!is_jsonl(ex)) {
        hscope__out_printf(o, "\\copy %s FROM ", name);
        sql_quoted(o, file);
        hscope__out_puts(o, " WITH (FORMAT csv, HEADER true)\n");
    } else {
        /* one JSON document per line: CSV mode with quote and delimiter
         * bytes that never occur in the files (JSON escapes controls) */
        hscope__out_puts(o, "\\copy heapscope_jsonl (doc) FROM ");
        sql_quoted(o, file);
        hscope__out_puts(o, " WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')\n");
        hscope__out_printf(o, "INSERT INTO %s SELECT r.* FROM heapscope_jsonl, "
                              "jsonb_populate_record(NULL::%s, doc) AS r;\n"
                              "TRUNCATE heapscope_jsonl;\n", name, name);
    }
}

static void
schema_text(hscope__out *o, const hscope_export_t *ex, int duck)
{
    hscope__out_printf(o, "-- heapscope %s export (%s): %s\n", HSCOPE_VERSION_STRING,
                       is_jsonl(ex) ? "jsonl" : "csv",
                       duck ? "duckdb FILE.db < schema.duckdb.sql" : "psql -f schema.sql");
    hscope__out_puts(o, "-- Tables are created if missing, so several exports (with distinct\n"
                        "-- --first-id ranges) can be loaded into one database.\n");
    if (!duck)
        hscope__out_puts(o, "\\set ON_ERROR_STOP on\nBEGIN;\nSET LOCAL client_encoding = 'UTF8';\n");
    for (int i = 0; i < NTABLES; i++)
        hscope__out_printf(o, "CREATE TABLE IF NOT EXISTS %s (\n%s\n);\n", table_defs[i].name,
                           table_defs[i].ddl);
    if (!duck && is_jsonl(ex))
        hscope__out_puts(o, "CREATE TEMP TABLE heapscope_jsonl (doc jsonb) ON COMMIT DROP;\n");
    for (int i = 0; i < NTABLES; i++)
        schema_copy(o, ex, table_defs[i].name, duck);
    hscope__out_puts(o, "CREATE INDEX IF NOT EXISTS objects_dump_address ON objects (dump_id, address);\n");
    hscope__out_puts(o, "CREATE INDEX IF NOT EXISTS refs_dump_to ON refs (dump_id, to_address);\n");
    if (!duck)
        hscope__out_puts(o, "COMMIT;\nANALYZE dumps;\nANALYZE objects;\nANALYZE refs;\nANALYZE roots;\n");
}

static hscope_status
write_schema(const hscope_export_t *ex, int duck, hscope_error *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", ex->dir, duck ? "schema.duckdb.sql" : "schema.sql");
    FILE *f = fopen(path, "w");
    if (!f)
        return hscope__fail_errno(err, errno, "cannot write %s", path);
    hscope__out o;
    hscope__out_init(&o, file_write, f, err);
    schema_text(&o, ex, duck);
    hscope_status st = hscope__out_finish(&o);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad && st == HSCOPE_OK)
        st = hscope__fail(err, HSCOPE_ERR_IO, "write error on %s", path);
    return st;
}

/* ------------------------------------------------------------------ */
/* one dump                                                            */
/* ------------------------------------------------------------------ */

typedef struct cols {
    const uint64_t *addr;
    const uint8_t *type;
    const uint16_t *flags;
    const uint32_t *mem, *size, *gen, *site, *rstart, *refs;
    uint64_t nrefs;           /* entries of refs */
} cols;

static hscope_status
get_cols(const hscope_heap_t *h, cols *c, hscope_error *err)
{
    static const struct { int32_t col, elem; size_t off; } want[] = {
        { HSCOPE_COL_ADDRESS, HSCOPE_ELEM_U64, offsetof(cols, addr) },
        { HSCOPE_COL_TYPE, HSCOPE_ELEM_U8, offsetof(cols, type) },
        { HSCOPE_COL_FLAGS, HSCOPE_ELEM_U16, offsetof(cols, flags) },
        { HSCOPE_COL_MEMSIZE, HSCOPE_ELEM_U32, offsetof(cols, mem) },
        { HSCOPE_COL_SIZE, HSCOPE_ELEM_U32, offsetof(cols, size) },
        { HSCOPE_COL_GENERATION, HSCOPE_ELEM_U32, offsetof(cols, gen) },
        { HSCOPE_COL_SITE, HSCOPE_ELEM_U32, offsetof(cols, site) },
        { HSCOPE_COL_REF_START, HSCOPE_ELEM_U32, offsetof(cols, rstart) },
        { HSCOPE_COL_REFS, HSCOPE_ELEM_U32, offsetof(cols, refs) },
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const void *data;
        uint64_t len;
        int32_t et;
        if (hscope__heap_column(h, want[i].col, &data, &len, &et) != HSCOPE_OK ||
            et != want[i].elem)
            return hscope__fail(err, HSCOPE_ERR_INTERNAL, "cannot read the heap's column %d",
                                (int)want[i].col);
        memcpy((char *)c + want[i].off, &data, sizeof(data));
        if (want[i].col == HSCOPE_COL_REFS)
            c->nrefs = len;
    }
    return HSCOPE_OK;
}


/* Rows of the big tables formatted in place through a row cursor
 * (rowcur.h): the same bytes as the col_* functions above.  Each value is
 * preceded by its column's lead (t->lead); a missing value is CSV's empty
 * field, JSON's null. */

/* The bytes of a string literal at p; returns their end. */
#define PUTLIT(p, lit) ((char *)memcpy(p, lit, sizeof(lit) - 1) + sizeof(lit) - 1)

/* The whole lead buffer is copied, a constant size the compiler turns
 * into a few stores (the room ahead of the cursor holds it), and the
 * cursor moves by the lead's length. */
static inline void
cur_lead(hscope__cur *k, const table *t, int col)
{
    memcpy(k->p, t->lead[col], sizeof(t->lead[col]));
    k->p += t->lead_len[col];
}

static inline void
cur_null(hscope__cur *k, const table *t)
{
    if (t->jl)
        k->p = PUTLIT(k->p, "null");
}

static inline void
cur_u64(hscope__cur *k, uint64_t v)
{
    k->p = hscope__put_u64(k->p, v);
}

static inline void
cur_addr(hscope__cur *k, const table *t, uint64_t a)
{
    if (t->jl)
        *k->p++ = '"';
    k->p = hscope__put_addr(k->p, a);
    if (t->jl)
        *k->p++ = '"';
}

/* A text value (NULL: missing); then HSCOPE__ROW_ROOM bytes ahead again. */
static void
cur_str(hscope__cur *k, table *t, const char *s)
{
    if (!t->jl) {
        hscope__cur_csv_str(k, s);
    } else if (!s) {
        cur_null(k, t);
    } else {
        hscope__cur_close(k);
        hscope__json_str(&t->js, s);
        hscope__cur_open(k, HSCOPE__ROW_ROOM);
    }
}

static inline void
cur_row_end(hscope__cur *k, const table *t)
{
    if (t->jl)
        *k->p++ = '}';
    *k->p++ = '\n';
}

/*
 * A dump's strings as the table writes them (CSV field or JSON string,
 * NULL as CSV's empty field or JSON's null), made once per dump by the
 * rows' own value writer (cur_str), so that a row copies each of its text values
 * instead of scanning or escaping it again: the objects table repeats a
 * few thousand class, file and method names millions of times.  String id
 * i's bytes are bytes[off[i]..off[i + 1]); type code c's are those of id
 * count + c.
 */
typedef struct strcache {
    uint64_t *off;
    char *bytes;
    uint32_t count;           /* the interner's ids */
} strcache;

static void
strcache_free(hscope__mem *m, strcache *c)
{
    hscope__free(m, c->off);
    hscope__free(m, c->bytes);
    memset(c, 0, sizeof(*c));
}

/* Where the output will be after what it holds: its bytes so far. */
static uint64_t
out_pos(const hscope__out *o)
{
    return o->total + o->len;
}

/* HSCOPE_ERR_NOMEM (no cache: rows escape as they go) when it cannot be
 * made. */
static hscope_status
strcache_make(strcache *c, hscope__mem *m, const hscope_heap_t *h, const table *t,
              hscope_error *err)
{
    memset(c, 0, sizeof(*c));
    const hscope__intern *in = &h->strings;
    size_t n = in->count + 256;
    hscope__membuf mb = { m, NULL, 0, 0, 0 };
    hscope_error e;
    hscope__error_init(&e);
    /* the table's value writer (cur_str), writing to mb */
    table w = *t;
    w.sc = NULL;
    hscope__out *o = &w.out;
    hscope__out_init(o, hscope__membuf_write, &mb, &e);
    hscope__json_init(&w.js, o, 0);
    w.js.script_safe = t->js.script_safe;
    if (!(c->off = hscope__malloc(m, (n + 1) * sizeof(uint64_t))))
        return hscope__nomem(err, (n + 1) * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++) {
        c->off[i] = out_pos(o);
        hscope__cur k = { o, NULL, NULL, NULL };
        hscope__cur_open(&k, HSCOPE__ROW_ROOM);
        cur_str(&k, &w, i < in->count ? hscope__intern_str(in, (uint32_t)i)
                                      : hscope__heap_type_name(h, (int32_t)(i - in->count)));
        hscope__cur_close(&k);
    }
    c->off[n] = out_pos(o);
    if (hscope__out_finish(o) != HSCOPE_OK || mb.failed) {
        size_t want = mb.cap;
        hscope__free(m, c->off);
        hscope__membuf_free(&mb);
        c->off = NULL;
        return hscope__nomem(err, want);
    }
    c->bytes = mb.data;
    c->count = (uint32_t)in->count;
    return HSCOPE_OK;
}

/* The cached bytes of entry i at the cursor; then HSCOPE__ROW_ROOM bytes
 * ahead again. */
static inline void
cur_cached(hscope__cur *k, const strcache *c, size_t i)
{
    hscope__cur_bytes(k, c->bytes + c->off[i], (size_t)(c->off[i + 1] - c->off[i]));
}

/* String id `id` of the heap (0: missing), from the cache if there is one. */
static inline void
cur_sid(hscope__cur *k, table *t, const hscope_heap_t *h, uint32_t id)
{
    if (t->sc && id < t->sc->count)
        cur_cached(k, t->sc, id);
    else
        cur_str(k, t, hscope__heap_string(h, id));
}

/* Object i's row (the columns of objects_cols). */
static void
object_row(table *t, const hscope_heap_t *h, const cols *c, uint64_t id, uint32_t i)
{
    int ty = c->type[i];
    uint32_t fid = 0, line = 0, mid = 0;
    hscope__heap_site(h, c->site[i], &fid, &line, &mid);
    const char *file = hscope__heap_string(h, fid);
    hscope__cur k = { &t->out, NULL, NULL, NULL };
    hscope__cur_open(&k, HSCOPE__ROW_ROOM);
    cur_lead(&k, t, 0);
    cur_u64(&k, id);
    cur_lead(&k, t, 1);
    cur_addr(&k, t, c->addr[i]);
    cur_lead(&k, t, 2);
    if (t->sc)
        cur_cached(&k, t->sc, (size_t)t->sc->count + (size_t)ty);
    else
        cur_str(&k, t, hscope__heap_type_name(h, ty));
    cur_lead(&k, t, 3);
    cur_sid(&k, t, h, hscope__label(h, i));
    cur_lead(&k, t, 4);
    uint64_t ca = hscope__heap_object_class_address(h, i);
    if (ca)
        cur_addr(&k, t, ca);
    else
        cur_null(&k, t);
    cur_lead(&k, t, 5);
    cur_u64(&k, c->mem[i] != 0xFFFFFFFFu ? c->mem[i] : hscope__heap_object_memsize(h, i));
    cur_lead(&k, t, 6);
    if (ty == HSCOPE_TYPE_STRING || ty == HSCOPE_TYPE_SYMBOL || ty == HSCOPE_TYPE_ARRAY ||
        ty == HSCOPE_TYPE_HASH)
        cur_u64(&k, c->size[i] != 0xFFFFFFFFu ? c->size[i] : hscope__heap_object_size(h, i));
    else
        cur_null(&k, t);
    cur_lead(&k, t, 7);
    cur_sid(&k, t, h, fid);
    cur_lead(&k, t, 8);
    if (file || line)
        cur_u64(&k, line);
    else
        cur_null(&k, t);
    cur_lead(&k, t, 9);
    cur_sid(&k, t, h, mid);
    cur_lead(&k, t, 10);
    if (c->gen[i] != 0xFFFFFFFFu)
        cur_u64(&k, c->gen[i]);
    else
        cur_null(&k, t);
    cur_lead(&k, t, 11);
    cur_u64(&k, c->flags[i]);
    cur_lead(&k, t, 12);
    cur_sid(&k, t, h, h->detail[i]);
    cur_row_end(&k, t);
    hscope__cur_close(&k);
}

/* The references rows of object i (the columns of refs_cols): the part
 * before the target's address is the same for each. */
static void
ref_rows(table *t, const cols *c, uint64_t id, uint32_t i)
{
    char head[128]; /* three leads and two values, with a whole lead's room */
    hscope__cur k = { &t->out, head, head, head + sizeof(head) };
    cur_lead(&k, t, 0);
    cur_u64(&k, id);
    cur_lead(&k, t, 1);
    cur_addr(&k, t, c->addr[i]);
    cur_lead(&k, t, 2);
    size_t hn = (size_t)(k.p - head);
    hscope__cur_open(&k, HSCOPE__ROW_ROOM);
    for (uint32_t e = c->rstart[i]; e < c->rstart[i + 1]; e++) {
        /* the targets' addresses are far apart: one asked for ahead */
        if (e + 32 < c->nrefs)
            __builtin_prefetch(&c->addr[c->refs[e + 32]]);
        if ((size_t)(k.end - k.p) < HSCOPE__ROW_ROOM) {
            hscope__cur_close(&k);
            hscope__cur_open(&k, HSCOPE__ROW_ROOM);
        }
        memcpy(k.p, head, hn);
        k.p += hn;
        cur_addr(&k, t, c->addr[c->refs[e]]);
        cur_row_end(&k, t);
    }
    hscope__cur_close(&k);
}

static void
root_rows(table *t, int jl, const hscope_heap_t *h, const cols *c, uint64_t id)
{
    for (uint32_t k = 0; k < hscope__heap_root_category_count(h); k++) {
        const hscope_id *tg;
        const uint64_t *dang;
        uint64_t nt = 0, nd = 0;
        hscope__heap_root_targets(h, k, &tg, &nt, NULL);
        hscope__heap_root_dangling(h, k, &dang, &nd);
        const char *cat = hscope__heap_root_category_name(h, k);
        for (uint64_t r = 0; r < nt + nd; r++) {
            row_begin(t, jl);
            col_u64(t, jl, id);
            col_str(t, jl, cat);
            col_addr(t, jl, r < nt ? c->addr[tg[r]] : dang[r - nt]);
            row_end(t, jl);
        }
    }
}

/*
 * Two threads share a dump's objects and references rows in chunks of
 * CHUNK objects: the jobs (objects of chunk 0, its references, objects of
 * chunk 1, ...) are taken in that order from a shared counter, so the
 * tables are shared by bytes, not by table (the objects table is about
 * three times the references').  A job is formatted into a buffer of the
 * pool (with the thread's own copy of the table's leads and escaper; what
 * does not fit goes on in the buffer's overflow), then parked; whoever
 * parks a job writes every parked job that is its table's next chunk, in
 * order, so each file gets the rows one thread would write.  A thread
 * never waits for a turn, only for a free buffer: the pool has two per
 * thread, and while the other thread formats the chunk a table waits for,
 * the parked jobs of the other table are written.
 */
#define CHUNK 8192u
#define CHUNK_BUF ((size_t)2 << 20)
#define NBUF 4

typedef struct chunk_buf {
    char *data;               /* CHUNK_BUF bytes */
    hscope__membuf over;      /* the job's bytes before data's (rare) */
    hscope__out out;          /* into data, overflowing to over */
    hscope_error err;
    int k;                    /* the job's table: 0 objects, 1 references */
    uint64_t chunk;
    int state;                /* 0 free, 1 formatting, 2 parked, 3 writing */
} chunk_buf;

typedef struct chunks {
    table *tabs;              /* tabs[1] objects, tabs[2] references */
    const hscope_heap_t *h;
    const cols *c;
    uint64_t id, n, njobs, next;
    pthread_mutex_t mu;
    pthread_cond_t freed;
    uint64_t turn[2];         /* per table: the chunk to write next */
    chunk_buf b[NBUF];
} chunks;

/* Write buffer cb (the lock not held), then give its table's turn on. */
static void
write_job(chunks *C, chunk_buf *cb)
{
    table *t = &C->tabs[1 + cb->k];
    if (cb->out.status != HSCOPE_OK || cb->over.failed) {
        /* the overflow could not grow: the table is incomplete */
        if (t->out.status == HSCOPE_OK) {
            t->sys_errno = ENOMEM;
            t->out.status = HSCOPE_ERR_IO;
        }
    } else if (t->out.status == HSCOPE_OK) {
        if (cb->over.len)
            (void)table_write(t, cb->over.data, cb->over.len);
        if (cb->out.len)
            (void)table_write(t, cb->data, cb->out.len);
    }
    cb->over.len = 0;
}

/* Lock held: write every parked job that is its table's next. */
static void
drain(chunks *C)
{
    for (int again = 1; again;) {
        again = 0;
        for (int i = 0; i < NBUF; i++) {
            chunk_buf *cb = &C->b[i];
            if (cb->state != 2 || C->turn[cb->k] != cb->chunk)
                continue;
            cb->state = 3;
            pthread_mutex_unlock(&C->mu);
            write_job(C, cb);
            pthread_mutex_lock(&C->mu);
            C->turn[cb->k]++;
            cb->state = 0;
            pthread_cond_broadcast(&C->freed);
            again = 1;
        }
    }
}

static void
format_job(chunks *C, chunk_buf *cb, table *lt)
{
    *lt = C->tabs[1 + cb->k];
    hscope__error_init(&cb->err);
    hscope__out_init(&cb->out, hscope__membuf_write, &cb->over, &cb->err);
    hscope__out_use_buffer(&cb->out, cb->data, CHUNK_BUF);
    lt->out = cb->out;
    hscope__json_init(&lt->js, &lt->out, 0);
    lt->js.script_safe = 1;
    uint64_t i0 = cb->chunk * CHUNK, i1 = i0 + CHUNK < C->n ? i0 + CHUNK : C->n;
    for (uint64_t i = i0; i < i1; i++) {
        if (cb->k)
            ref_rows(lt, C->c, C->id, (uint32_t)i);
        else
            object_row(lt, C->h, C->c, C->id, (uint32_t)i);
    }
    cb->out = lt->out; /* the bytes still in data: out.len */
}

static void *
chunks_run(void *arg)
{
    chunks *C = arg;
    table lt;
    pthread_mutex_lock(&C->mu);
    while (C->next < C->njobs) {
        chunk_buf *cb = NULL;
        for (int i = 0; i < NBUF && !cb; i++)
            if (C->b[i].state == 0)
                cb = &C->b[i];
        if (!cb) {
            pthread_cond_wait(&C->freed, &C->mu);
            continue;
        }
        uint64_t j = C->next++;
        cb->k = (int)(j & 1);
        cb->chunk = j >> 1;
        cb->state = 1;
        pthread_mutex_unlock(&C->mu);
        format_job(C, cb, &lt);
        pthread_mutex_lock(&C->mu);
        cb->state = 2;
        drain(C);
    }
    drain(C);
    pthread_mutex_unlock(&C->mu);
    return NULL;
}

/* The big tables' rows on two threads; HSCOPE_ERR_NOMEM (nothing
 * written) when the buffers cannot be had. */
static hscope_status
rows_two(table *tabs, const hscope_heap_t *h, const cols *c, uint64_t id, hscope__mem *m,
         hscope_error *err)
{
    chunks *C = hscope__calloc(m, 1, sizeof(*C));
    hscope_status st = C ? HSCOPE_OK : hscope__nomem(err, sizeof(*C));
    for (int i = 0; i < NBUF && st == HSCOPE_OK; i++) {
        C->b[i].over.mem = m;
        if (!(C->b[i].data = hscope__malloc(m, CHUNK_BUF)))
            st = hscope__nomem(err, CHUNK_BUF);
    }
    if (st == HSCOPE_OK) {
        C->tabs = tabs;
        C->h = h;
        C->c = c;
        C->id = id;
        C->n = hscope__heap_object_count(h);
        C->njobs = 2 * ((C->n + CHUNK - 1) / CHUNK);
        pthread_mutex_init(&C->mu, NULL);
        pthread_cond_init(&C->freed, NULL);
        /* what the tables' own buffers hold (their headers) goes first */
        (void)hscope__out_finish(&tabs[1].out);
        (void)hscope__out_finish(&tabs[2].out);
        hscope__run_pair(chunks_run, C, C, 1);
        pthread_mutex_destroy(&C->mu);
        pthread_cond_destroy(&C->freed);
    }
    for (int i = 0; C && i < NBUF; i++) {
        hscope__free(m, C->b[i].data);
        hscope__membuf_free(&C->b[i].over);
    }
    hscope__free(m, C);
    return st;
}

/* The rows of a loaded dump: the objects and references tables on two
 * threads (rows_two) where the load may use more than one, else in turn. */
static hscope_status
heap_rows(table *tabs, int jl, const hscope_heap_t *h, uint64_t id, int two, hscope__mem *m,
          hscope_error *err)
{
    cols c;
    hscope_status st = get_cols(h, &c, err);
    if (st != HSCOPE_OK)
        return st;
    hscope_error e;
    hscope__error_init(&e);
    strcache sc;
    int cached = strcache_make(&sc, m, h, &tabs[1], &e) == HSCOPE_OK;
    tabs[1].sc = cached ? &sc : NULL; /* without: each value escaped as it goes */
    if (!two || rows_two(tabs, h, &c, id, m, &e) != HSCOPE_OK) {
        uint64_t n = hscope__heap_object_count(h);
        for (uint64_t i = 0; i < n; i++)
            object_row(&tabs[1], h, &c, id, (uint32_t)i);
        for (uint64_t i = 0; i < n; i++)
            ref_rows(&tabs[2], &c, id, (uint32_t)i);
    }
    tabs[1].sc = NULL;
    if (cached)
        strcache_free(m, &sc);
    root_rows(&tabs[3], jl, h, &c, id);
    return HSCOPE_OK;
}

/* "2024-05-01T12:00:00.250Z" */
static void
taken_at(double t, char *buf, size_t n)
{
    char tb[48];
    time_t sec = (time_t)floor(t);
    struct tm tm;
    gmtime_r(&sec, &tm);
    strftime(tb, sizeof(tb), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03dZ", tb, (int)((t - (double)sec) * 1000.0 + 0.5) % 1000);
}

static void
dump_row(table *t, int jl, const hscope_export_t *ex, const hscope__ex_dump *d, uint64_t k)
{
    const hscope_load_stats *s = &d->stats;
    row_begin(t, jl);
    col_u64(t, jl, d->id);
    col_u64(t, jl, k + 1);
    col_str(t, jl, d->path);
    col_str(t, jl, hscope__basename(d->path));
    if (d->has_time) {
        char tb[64];
        taken_at(d->time, tb, sizeof(tb));
        col_str(t, jl, tb);
    } else {
        col_null(t, jl);
    }
    col_str(t, jl, ex->order.source);
    col_u64(t, jl, s->objects);
    col_u64(t, jl, s->references);
    col_u64(t, jl, s->total_memsize);
    col_u64(t, jl, s->bytes);
    col_u64(t, jl, s->input_bytes);
    col_bool(t, jl, (int)s->gzip);
    col_u64(t, jl, s->skipped_lines);
    row_end(t, jl);
}

/* Load dump k (time order) and write its rows; its damage is a warning. */
static hscope_status
export_dump(hscope_export_t *ex, table *tabs, uint64_t k, const hscope_load_options *lo,
            hscope_error *err)
{
    hscope__ex_dump *d = &ex->d[k];
    hscope_heap_t *h = NULL;
    hscope_error e;
    hscope__error_init(&e);
    if (hscope__heap_open_file(&h, d->path, lo, &e) != HSCOPE_OK)
        return hscope__fail_for_file(err, &e, d->path);
    d->stats.size = sizeof(d->stats);
    hscope__heap_stats(h, &d->stats);
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        d->skipped[r] = hscope__heap_skipped(h, r);
    int jl = is_jsonl(ex);
    dump_row(&tabs[0], jl, ex, d, k);
    /* two threads for the two big tables, unless the load was asked
     * for one (threads 1) or the dump is small */
    int two = lo->threads != 1 && hscope__cores() > 1 &&
              hscope__heap_object_count(h) >= ((uint64_t)1 << 12);
    hscope_status st = heap_rows(tabs, jl, h, d->id, two, &ex->mem, err);
    ex->objects += d->stats.objects;
    ex->references += d->stats.references;
    hscope__heap_release(h);
    for (int t = 0; t < NTABLES && st == HSCOPE_OK; t++)
        if (tabs[t].out.status != HSCOPE_OK || ferror(tabs[t].f))
            st = table_failed(&tabs[t], ex, jl, err);
    return st;
}

/* ------------------------------------------------------------------ */
/* the result                                                          */
/* ------------------------------------------------------------------ */

void
hscope__export_free(hscope_export_t *ex)
{
    if (!ex)
        return;
    hscope__mem m = ex->mem;
    for (uint64_t i = 0; ex->d && i < ex->nd; i++)
        hscope__free(&m, ex->d[i].path);
    hscope__free(&m, ex->d);
    hscope__free(&m, ex->dir);
    hscope__free(&m, ex);
}

/* The dumps in time order with their ids; the directory made. */
static hscope_status
prepare(hscope_export_t *ex, const char *const *paths, const char *dir, int32_t order,
        hscope_error *err)
{
    size_t n = (size_t)ex->nd;
    hscope__dump_time *dt = hscope__calloc(&ex->mem, n, sizeof(*dt));
    ex->d = hscope__calloc(&ex->mem, n, sizeof(*ex->d));
    ex->dir = hscope__strndup(&ex->mem, dir, strlen(dir));
    hscope_status st = HSCOPE_OK;
    if (!dt || !ex->d || !ex->dir)
        st = hscope__nomem(err, n * (sizeof(*dt) + sizeof(*ex->d)));
    if (st == HSCOPE_OK)
        st = hscope__order_dumps(paths, ex->nd, order, dt, &ex->order, err);
    for (size_t i = 0; st == HSCOPE_OK && i < n; i++) {
        ex->d[i].id = ex->first_id + i;
        ex->d[i].has_time = dt[i].has_time;
        ex->d[i].time = dt[i].time;
        if (!(ex->d[i].path = hscope__strndup(&ex->mem, paths[dt[i].given], strlen(paths[dt[i].given]))))
            st = hscope__nomem(err, strlen(paths[dt[i].given]) + 1);
    }
    hscope__free(&ex->mem, dt);
    if (st == HSCOPE_OK && mkdir(dir, 0777) != 0 && errno != EEXIST)
        st = hscope__fail_errno(err, errno, "cannot make the directory %s", dir);
    if (st == HSCOPE_OK && !realpath(dir, ex->absdir))
        st = hscope__fail_errno(err, errno, "%s", dir);
    return st;
}

static hscope_status
write_all(hscope_export_t *ex, const hscope_load_options *lo, hscope_error *err)
{
    table tabs[NTABLES];
    memcpy(tabs, table_defs, sizeof(tabs));
    hscope_status st = HSCOPE_OK;
    stale *s = hscope__calloc(&ex->mem, 1, sizeof(*s)); /* NULL: truncated as usual */
    for (int t = 0; t < NTABLES && st == HSCOPE_OK; t++)
        st = open_table(&tabs[t], ex, &ex->mem, s, err);
    if (s)
        stale_start(s);
    for (uint64_t k = 0; k < ex->nd && st == HSCOPE_OK; k++)
        st = export_dump(ex, tabs, k, lo, err);
    if (s)
        stale_finish(s);
    hscope__free(&ex->mem, s);
    for (int t = 0; t < NTABLES; t++) {
        hscope_status cst = close_table(&tabs[t], ex, &ex->mem, err);
        if (st == HSCOPE_OK)
            st = cst;
    }
    if (st == HSCOPE_OK)
        st = write_schema(ex, 0, err);
    if (st == HSCOPE_OK)
        st = write_schema(ex, 1, err);
    return st;
}

hscope_status
hscope__export_files(hscope_export_t **out, const char *const *paths, uint64_t n,
                     const char *dir, const hscope_load_options *lo,
                     const hscope_export_options *o, hscope_error *err)
{
    hscope__mem m;
    hscope__mem_init(&m, lo->allocator, 0);
    hscope_export_t *ex = hscope__calloc(&m, 1, sizeof(*ex));
    if (!ex)
        return hscope__nomem(err, sizeof(*ex));
    ex->mem = m;
    atomic_store(&ex->mem.used, atomic_load(&m.used));
    ex->format = o->format ? o->format : HSCOPE_FORMAT_CSV;
    ex->first_id = o->first_id ? o->first_id : 1;
    ex->nd = n;
    hscope_load_options plain = *lo;
    plain.flags &= ~(uint32_t)(HSCOPE_LOAD_VALUES | HSCOPE_LOAD_USE_INDEX);
    hscope_status st = prepare(ex, paths, dir, o->order, err);
    if (st == HSCOPE_OK)
        st = write_all(ex, &plain, err);
    if (st != HSCOPE_OK || !out) {
        hscope__export_free(ex);
        return st;
    }
    *out = ex;
    return HSCOPE_OK;
}

/* ------------------------------------------------------------------ */
/* what was written: text and JSON                                     */
/* ------------------------------------------------------------------ */

static void
export_json(const hscope_export_t *ex, const hscope__ropts *ro, hscope__out *o)
{
    hscope__json w;
    hscope__json_init(&w, o, (ro->flags & HSCOPE_REPORT_PRETTY) != 0);
    hscope__json_begin_doc(&w, "export");
    hscope__json_key(&w, "dumps");
    hscope__json_arr(&w);
    for (uint64_t i = 0; i < ex->nd; i++) {
        const hscope__ex_dump *d = &ex->d[i];
        hscope__json_obj(&w);
        hscope__json_kstr(&w, "path", d->path);
        hscope__json_ku64(&w, "objects", d->stats.objects);
        hscope__json_ku64(&w, "dump_id", d->id);
        hscope__json_ku64(&w, "references", d->stats.references);
        hscope__json_ku64(&w, "memsize", d->stats.total_memsize);
        hscope__json_key(&w, "time");
        if (d->has_time)
            hscope__json_f64(&w, d->time, 3);
        else
            hscope__json_null(&w);
        hscope__json_end_obj(&w);
    }
    hscope__json_end_arr(&w);
    hscope__json_kstr(&w, "format", is_jsonl(ex) ? "jsonl" : "csv");
    hscope__json_kstr(&w, "directory", ex->absdir);
    hscope__json_kstr(&w, "order", ex->order.name);
    hscope__json_kstr(&w, "order_source", ex->order.source);
    hscope__json_ku64(&w, "objects", ex->objects);
    hscope__json_ku64(&w, "references", ex->references);
    hscope__json_key(&w, "files");
    hscope__json_arr(&w);
    for (int t = 0; t < NTABLES; t++) {
        char f[32];
        snprintf(f, sizeof(f), "%s.%s", table_defs[t].name, is_jsonl(ex) ? "jsonl" : "csv");
        hscope__json_str(&w, f);
    }
    hscope__json_str(&w, "schema.sql");
    hscope__json_str(&w, "schema.duckdb.sql");
    hscope__json_end_arr(&w);
    hscope__json_key(&w, "warnings");
    hscope__json_arr(&w);
    for (uint64_t i = 0; i < ex->nd; i++) {
        hscope__warnings ws;
        ws.n = 0;
        hscope__warn_damage(&ws, ex->d[i].path, &ex->d[i].stats, ex->d[i].skipped);
        for (int k = 0; k < ws.n; k++) {
            hscope__json_obj(&w);
            hscope__json_kstr(&w, "code", ws.w[k].code);
            hscope__json_kstr(&w, "message", ws.w[k].message);
            hscope__json_end_obj(&w);
        }
    }
    hscope__json_end_arr(&w);
    hscope__json_end_obj(&w);
    hscope__json_done(&w);
}

hscope_status
hscope__export_write(const hscope_export_t *ex, const hscope__ropts *ro, hscope__out *o)
{
    if (ro->format == HSCOPE_FORMAT_JSON) {
        export_json(ex, ro, o);
        return o->status;
    }
    uint64_t n = ex->nd;
    hscope__out_printf(o, "exported %llu dump%s (ids %llu-%llu, order %s by %s): %llu objects, "
                          "%llu references -> %s/{dumps,objects,refs,roots}.%s, schema.sql\n",
                       (unsigned long long)n, n == 1 ? "" : "s",
                       (unsigned long long)ex->first_id,
                       (unsigned long long)(ex->first_id + n - 1), ex->order.name,
                       ex->order.source, (unsigned long long)ex->objects,
                       (unsigned long long)ex->references, ex->dir,
                       is_jsonl(ex) ? "jsonl" : "csv");
    return o->status;
}
