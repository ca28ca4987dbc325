/*
 * server.c - the HTTP side of `heapscope serve` (see serve.h): the socket,
 * the token, the Host check, the headers of every answer, the embedded UI
 * and the dispatch of /api/ to api.c.  libmicrohttpd parses HTTP and runs
 * a pool of threads, so concurrent clients are served.
 *
 * Every request must:
 *   - name the served address in Host (else 421): a page of another site
 *     that resolves its own name to 127.0.0.1 (DNS rebinding) sends its
 *     own name;
 *   - carry the token: the cookie set by the first visit of the URL
 *     (/?token=T, answered with a redirect to / so the token leaves the
 *     address bar), or the X-Heapscope-Token header (else 401 without a
 *     token, 403 with a wrong one);
 *   - be a GET or HEAD (else 405): nothing can be changed.
 * Every answer carries a Content-Security-Policy that lets the page run
 * its own script and nothing else, nosniff, no-referrer and no caching.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "serve.h"

#if MHD_VERSION < 0x00097002
typedef int hscope_srv_mhd_result;
#else
typedef enum MHD_Result hscope_srv_mhd_result;
#endif

#define BODY_CAP (256ull << 20) /* an answer larger than this is refused */

static const char csp[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

double
hscope_srv_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- response bodies ---- */

int32_t
hscope_srv_buf_write(void *user_data, const char *data, uint64_t len)
{
    hscope_srv_buf *b = user_data;
    if (b->failed)
        return 1;
    if (b->len + len + 1 > b->cap) {
        uint64_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *p = cap > BODY_CAP ? NULL : realloc(b->data, cap);
        if (!p) {
            b->failed = 1;
            return 1;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

void
hscope_srv_buf_puts(hscope_srv_buf *b, const char *s)
{
    hscope_srv_buf_write(b, s, strlen(s));
}

void
hscope_srv_buf_printf(hscope_srv_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0)
        hscope_srv_buf_write(b, tmp, (uint64_t)n < sizeof(tmp) ? (uint64_t)n : sizeof(tmp) - 1);
}

void
hscope_srv_buf_json_string(hscope_srv_buf *b, const char *s, uint64_t len)
{
    hscope_srv_buf_puts(b, "\"");
    for (uint64_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            hscope_srv_buf_write(b, esc, 2);
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            hscope_srv_buf_write(b, esc, 6);
        } else {
            hscope_srv_buf_write(b, (const char *)&s[i], 1);
        }
    }
    hscope_srv_buf_puts(b, "\"");
}

/* ---- answers ---- */

static hscope_srv_mhd_result
answer(struct MHD_Connection *c, unsigned code, const char *mime, void *data, uint64_t len,
       int must_free)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        (size_t)len, data, must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (must_free)
            free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", mime);
    MHD_add_response_header(r, "Content-Security-Policy", csp);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
    if (code == 405)
        MHD_add_response_header(r, "Allow", "GET, HEAD");
    if (code == 202)
        MHD_add_response_header(r, "Retry-After", "1");
    hscope_srv_mhd_result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static hscope_srv_mhd_result
error_answer(struct MHD_Connection *c, unsigned code, const char *message)
{
    hscope_srv_buf b = { 0 };
    hscope_srv_buf_printf(&b, "{\"kind\":\"error\",\"status\":%u,\"error\":", code);
    hscope_srv_buf_json_string(&b, message, strlen(message));
    hscope_srv_buf_puts(&b, "}\n");
    if (b.failed) {
        free(b.data);
        return MHD_NO;
    }
    return answer(c, code, "application/json", b.data, b.len, 1);
}

/* ---- the checks every request passes ---- */

static int
same_token(const char *a, const char *b)
{
    if (!a || strlen(a) != 32)
        return 0;
    unsigned d = 0;
    for (int i = 0; i < 32; i++)
        d |= (unsigned)(a[i] ^ b[i]);
    return d == 0;
}

/* 0 when allowed, else the status to refuse with (*why said). */
static unsigned
check_request(hscope_srv *s, struct MHD_Connection *c, const char *method, const char **why)
{
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (!host || (strcmp(host, s->host_ok[0]) != 0 && strcmp(host, s->host_ok[1]) != 0)) {
        *why = "the Host header is not the address this server serves";
        return 421;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        *why = "read-only: only GET and HEAD";
        return 405;
    }
    const char *t = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Heapscope-Token");
    if (!t)
        t = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "hs_token");
    if (!t) {
        *why = "no token: open the URL heapscope serve printed";
        return 401;
    }
    if (!same_token(t, s->token)) {
        *why = "wrong token";
        return 403;
    }
    return 0;
}

/* The first visit: /?token=T sets the cookie and sends the browser to the
 * same URL without the token. */
static hscope_srv_mhd_result
first_visit(hscope_srv *s, struct MHD_Connection *c, const char *t)
{
    if (!same_token(t, s->token))
        return error_answer(c, 403, "wrong token");
    struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    char cookie[128];
    snprintf(cookie, sizeof(cookie), "hs_token=%s; Path=/; HttpOnly; SameSite=Strict", s->token);
    MHD_add_response_header(r, "Set-Cookie", cookie);
    MHD_add_response_header(r, "Location", "/");
    MHD_add_response_header(r, "Content-Security-Policy", csp);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    hscope_srv_mhd_result ret = MHD_queue_response(c, 303, r);
    MHD_destroy_response(r);
    return ret;
}

static const char *
get_arg(void *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
}

static hscope_srv_mhd_result
handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
       const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload;
    hscope_srv *s = cls;
    if (!*con_cls) { /* the headers: answer on the next call (the body, if any, is dropped) */
        *con_cls = (void *)1;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    const char *why = "";
    const char *t = get_arg(c, "token");
    unsigned code;
    if (strcmp(url, "/") == 0 && t && (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)) {
        const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
        if (!host || (strcmp(host, s->host_ok[0]) != 0 && strcmp(host, s->host_ok[1]) != 0))
            return error_answer(c, 421, "the Host header is not the address this server serves");
        return first_visit(s, c, t);
    }
    if ((code = check_request(s, c, method, &why)) != 0)
        return error_answer(c, code, why);
    if (strncmp(url, "/api/", 5) == 0) {
        hscope_srv_req r = { s, url + 5, get_arg, c, "application/json" };
        hscope_srv_buf b = { 0 };
        int st = hscope_srv_api(&r, &b);
        if (b.failed) {
            free(b.data);
            return error_answer(c, 503, "the answer is too large or memory ran out");
        }
        return answer(c, (unsigned)st, r.mime, b.data ? b.data : (void *)"", b.len,
                      b.data != NULL);
    }
    const char *want = strcmp(url, "/") == 0 ? "/index.html" : url;
    for (uint32_t i = 0; i < hscope_srv_asset_count; i++) {
        const hscope_srv_asset *a = &hscope_srv_assets[i];
        if (strcmp(a->path, want) == 0)
            return answer(c, 200, a->mime, (void *)a->data, a->len, 0);
    }
    return error_answer(c, 404, "no such page");
}

/* ---- the socket ---- */

static int
listen_on(const char *host, uint32_t port, char *shown, size_t shown_n, uint32_t *bound,
          int *loopback)
{
    struct addrinfo hints = { 0 }, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    char ps[16];
    snprintf(ps, sizeof(ps), "%u", port);
    int rc = getaddrinfo(host, ps, &hints, &ai);
    if (rc != 0) {
        fprintf(stderr, "heapscope: serve: --host %s: %s (a numeric address: 127.0.0.1, ::1, "
                "0.0.0.0)\n", host, gai_strerror(rc));
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0) {
        fprintf(stderr, "heapscope: serve: cannot listen on %s port %u: %s\n", host, port,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    char addr[INET6_ADDRSTRLEN] = "";
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a6->sin6_addr, addr, sizeof(addr));
        *bound = ntohs(a6->sin6_port);
        *loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
        snprintf(shown, shown_n, "[%s]:%u", addr, *bound);
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a4->sin_addr, addr, sizeof(addr));
        *bound = ntohs(a4->sin_port);
        *loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
        snprintf(shown, shown_n, "%s:%u", addr, *bound);
    }
    freeaddrinfo(ai);
    return fd;
}

static int
make_token(char out[33])
{
    unsigned char r[16];
    size_t got = 0;
    while (got < sizeof(r)) {
        ssize_t k = getrandom(r + got, sizeof(r) - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    return 0;
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    fputs("heapscope: serve: ", stderr);
    vfprintf(stderr, fmt, ap);
}

int
hscope_srv_run(const hscope_srv_config *cfg)
{
    static hscope_srv s; /* lives as long as the server threads */
    memset(&s, 0, sizeof(s));
    s.cfg = *cfg;
    s.heap = cfg->heaps[cfg->n - 1];
    if (make_token(s.token) != 0) {
        fprintf(stderr, "heapscope: serve: no random bytes for the token: %s\n", strerror(errno));
        return 1;
    }
    const char *host = cfg->host ? cfg->host : "127.0.0.1";
    uint32_t port = 0;
    int loopback = 0;
    int fd = listen_on(host, cfg->port, s.host_ok[0], sizeof(s.host_ok[0]), &port, &loopback);
    if (fd < 0)
        return 1;
    /* a browser on this machine may say localhost too */
    if (loopback)
        snprintf(s.host_ok[1], sizeof(s.host_ok[1]), "localhost:%u", port);
    else
        snprintf(s.host_ok[1], sizeof(s.host_ok[1]), "%s", s.host_ok[0]);
    if (!loopback)
        fprintf(stderr, "heapscope: serve: warning: listening on %s, not a loopback address: "
                "anyone who can reach it and has the token can read the heap\n", s.host_ok[0]);
    hscope_srv_state_init(&s);
    int wst = 0;
    double wsec = 0;
    hscope_error werr = HSCOPE_ERROR_INIT;
    hscope_srv_job_get(&s, HSCOPE_SRV_WARM, NULL, 0, &wst, &wsec, &werr);
    /* the signals are taken by sigwait below, never by the server's threads */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_AUTO, 0, NULL, NULL,
        handle, &s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, 4,
        MHD_OPTION_CONNECTION_LIMIT, 128, MHD_OPTION_CONNECTION_TIMEOUT, 30,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "heapscope: serve: the HTTP server did not start\n");
        close(fd);
        hscope_srv_state_free(&s);
        return 1;
    }
    printf("http://%s/?token=%s\n", s.host_ok[0], s.token);
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    MHD_stop_daemon(d); /* closes the socket too */
    hscope_srv_state_free(&s);
    fprintf(stderr, "heapscope: serve: stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    return 0;
}
