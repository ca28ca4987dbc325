/*
 * serve.h - `heapscope serve`: the heap explorer in the browser.
 *
 * A front end like the CLI: it calls the public API only
 * (heapscope/heapscope.h) and every answer is a document of the library's
 * writers (docs/JSON.md), so the library stays free of HTTP.  The HTTP
 * server is libmicrohttpd's (parsing, connections, a thread pool).
 *
 *   server.c  the socket, the token, the Host check, the headers every
 *             answer carries, the embedded UI, the dispatch to api.c
 *   api.c     the JSON endpoints (/api/...), one function each
 *   lazy.c    what is computed once, on first use, on its own thread
 *             (dominator tree, root paths, diff and suspects, timeline,
 *             the objects of a tally's row), so that no request
 *             waits for it: until it is ready an endpoint answers 202
 *   ui/       the page (HTML, CSS, JS), embedded at build time (embed.py)
 *
 * Names: hscope_srv_* (the program's own, not the library's).
 */
#ifndef HSCOPE_SERVE_SERVE_H
#define HSCOPE_SERVE_SERVE_H

#include <pthread.h>
#include <stdint.h>

#include "heapscope/heapscope.h"

/* What `heapscope serve` hands over: the loaded dumps (time order, as
 * given), their paths, the address to bind. */
typedef struct hscope_srv_config {
    hscope_heap_t **heaps;     /* n heaps; with n > 3 only the last is loaded
                                  (the timeline reads the files), the others
                                  NULL */
    const char *const *paths;
    uint32_t n;
    const char *host;          /* NULL: 127.0.0.1 */
    uint32_t port;             /* 0: an ephemeral port */
    int values;                /* string values in answers (--values) */
    hscope_load_options lo;    /* for the timeline's folds */
} hscope_srv_config;

/* Serve until SIGINT or SIGTERM: the URL (with the token) is the first
 * line of stdout.  Returns the exit status (0, or 1 after saying why). */
int hscope_srv_run(const hscope_srv_config *cfg);

/* ---- shared by server.c, api.c and lazy.c ---- */

/* A growing response body; the writers' hscope_write_fn appends to it. */
typedef struct hscope_srv_buf {
    char *data;
    uint64_t len, cap;
    int failed;                /* out of memory or over the cap */
} hscope_srv_buf;

int32_t hscope_srv_buf_write(void *user_data, const char *data, uint64_t len);
void hscope_srv_buf_puts(hscope_srv_buf *b, const char *s);
void hscope_srv_buf_printf(hscope_srv_buf *b, const char *fmt, ...);
/* A JSON string literal (quotes included) of s[0..len). */
void hscope_srv_buf_json_string(hscope_srv_buf *b, const char *s, uint64_t len);

struct hscope_srv;

/* Something computed once on its own thread. */
typedef struct hscope_srv_job {
    pthread_mutex_t mu;
    pthread_cond_t done;
    int state;                 /* 0 not started, 1 running, 2 done, 3 failed */
    void *result;
    hscope_error err;
    double started, seconds;
    void *(*compute)(struct hscope_srv *s, const char *key, hscope_error *err);
    void (*release)(void *result);
    struct hscope_srv *srv;
    char key[320];             /* the key of a keyed job, else "" */
} hscope_srv_job;

/* Kinds of jobs. */
#define HSCOPE_SRV_DOMTREE  0  /* the dominator tree of the heap */
#define HSCOPE_SRV_PATHS    1  /* shortest paths from the roots */
#define HSCOPE_SRV_SUSPECTS 2  /* the diff of three dumps and its suspects */
#define HSCOPE_SRV_TIMELINE 3  /* keyed: the timeline of every dump by KEY */
#define HSCOPE_SRV_DRILL    4  /* keyed "BY\nROW": the objects of one row of a tally */
#define HSCOPE_SRV_WASTE    5  /* the waste of the heap */
#define HSCOPE_SRV_TALLY    6  /* keyed "BY|SORT|TOP": a tally as /api/tally asks it */
#define HSCOPE_SRV_WARM     7  /* the heap's reverse references, built at start */
#define HSCOPE_SRV_SUMMARY  8  /* keyed "TOP": the summary document, written once */
#define HSCOPE_SRV_SEARCH   9  /* the three tallies search reads */
#define HSCOPE_SRV_KINDS    10
#define HSCOPE_SRV_KEYS     64 /* keyed jobs per kind, e.g. the rows drilled
                                  into (a full table: computed per request
                                  instead) */

/* The served state. */
typedef struct hscope_srv {
    hscope_srv_config cfg;
    hscope_heap_t *heap;       /* the single-heap views: the last dump */
    char token[33];
    char host_ok[2][300];      /* the Host values accepted */
    pthread_mutex_t mu;        /* guards the job table */
    hscope_srv_job jobs[HSCOPE_SRV_KINDS][HSCOPE_SRV_KEYS];
} hscope_srv;

void hscope_srv_state_init(hscope_srv *s);
void hscope_srv_state_free(hscope_srv *s);
/* The job of `kind` (and tally key `key` for keyed kinds, else NULL),
 * started when not started yet: its result when done, else NULL with
 * *state 1 (running; *seconds: so far), 3 (failed: *err) or 4 (no room
 * for another key: compute it in the request).
 * With wait != 0 it waits until the job is done (or failed). */
void *hscope_srv_job_get(hscope_srv *s, int kind, const char *key, int wait, int *state,
                         double *seconds, hscope_error *err);

/* What a keyed job of `kind` computes, computed here, on the caller's
 * thread (for a key that has no slot left); free it with
 * hscope_srv_release().  NULL after writing *err. */
void *hscope_srv_compute(hscope_srv *s, int kind, const char *key, hscope_error *err);
void hscope_srv_release(int kind, void *result);

/* Results of the drill job: the objects of one row, ascending. */
typedef struct hscope_srv_members {
    hscope_id *ids;
    uint64_t n, memsize;
} hscope_srv_members;

/* Results of the suspects job. */
typedef struct hscope_srv_leaks {
    hscope_diff_t *diff;
    hscope_suspects_t *suspects;
} hscope_srv_leaks;

/* Results of the search job: every row of the heap by class, by site and
 * by gem. */
#define HSCOPE_SRV_SEARCH_KEYS 3
typedef struct hscope_srv_search {
    const char *keys[HSCOPE_SRV_SEARCH_KEYS];
    hscope_tally_t *t[HSCOPE_SRV_SEARCH_KEYS];
} hscope_srv_search;

/* A request as api.c sees it. */
typedef struct hscope_srv_req {
    hscope_srv *srv;
    const char *path;                      /* after "/api/" */
    const char *(*arg)(void *conn, const char *name);
    void *conn;
    const char *mime;                      /* of the answer: JSON unless set */
} hscope_srv_req;

/* Answer an API request: the status code, the body in *body (JSON). */
int hscope_srv_api(hscope_srv_req *r, hscope_srv_buf *body);

/* Embedded UI files (ui_assets.c, generated by ui/embed.py). */
typedef struct hscope_srv_asset {
    const char *path;
    const char *mime;
    const unsigned char *data;
    uint64_t len;
} hscope_srv_asset;
extern const hscope_srv_asset hscope_srv_assets[];
extern const uint32_t hscope_srv_asset_count;

double hscope_srv_now(void);

#endif
