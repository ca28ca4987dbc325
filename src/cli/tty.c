/*
 * tty.c - keep a dump's bytes from driving the terminal.
 *
 * Class names, file names, method names and string values come from the
 * dump, and a dump is written by a program that may have run anyone's
 * code: eval("...", binding, "\e]0;title\a") gives a file name with
 * terminal escape sequences in it, and \u001b in a JSON string decodes to
 * ESC.  Printed raw on a terminal, such bytes could move the cursor,
 * rewrite what was printed before, retitle the window or worse.
 *
 * So when standard output is a terminal, it goes through a filter that
 * prints every C0 control byte except '\n' and '\t', DEL, and the C1
 * controls (U+0080-U+009F, two bytes in UTF-8) as \xHH.  Like ls(1), this
 * is done for terminals only: output to a pipe or file stays byte for
 * byte what the dump holds, for scripts.  JSON output never has raw
 * control bytes (it escapes them), so the filter changes only text.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fopencookie */
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

#if defined(__GLIBC__)

typedef struct guard {
    int fd;
    int c2; /* the last byte of the previous write was 0xC2 */
} guard;

static int
write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static ssize_t
guard_write(void *cookie, const char *buf, size_t size)
{
    guard *g = cookie;
    static const char hex[] = "0123456789abcdef";
    char out[4096 + 16];
    size_t o = 0;
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)buf[i];
        unsigned char d = i + 1 < size ? (unsigned char)buf[i + 1] : 0;
        int c1 = 0;
        if (c == 0xc2 && d >= 0x80 && d <= 0x9f) {
            /* U+0080-U+009F, both bytes escaped */
            memcpy(out + o, "\\xc2", 4);
            o += 4;
            c = d;
            i++;
            c1 = 1;
        }
        /* a C1 control whose 0xC2 ended the previous write went out raw:
         * escaping its second byte still keeps it from the terminal */
        int ctl = c1 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ||
                  (g->c2 && i == 0 && c >= 0x80 && c <= 0x9f);
        if (ctl) {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
        g->c2 = c == 0xc2;
        if (o >= 4096) {
            if (write_all(g->fd, out, o) != 0)
                return -1;
            o = 0;
        }
    }
    if (o && write_all(g->fd, out, o) != 0)
        return -1;
    return (ssize_t)size;
}

void
hscope_cli_guard_terminal(void)
{
    static guard g;
    if (!isatty(STDOUT_FILENO))
        return;
    g.fd = STDOUT_FILENO;
    g.c2 = 0;
    cookie_io_functions_t io = { NULL, guard_write, NULL, NULL };
    FILE *f = fopencookie(&g, "w", io);
    if (!f)
        return; /* unfiltered rather than no output */
    setvbuf(f, NULL, _IOLBF, 0);
    fflush(stdout);
    stdout = f; /* glibc: stdout is an assignable FILE * */
}

#else

void
hscope_cli_guard_terminal(void)
{
    /* No fopencookie(): output is not filtered. */
}

#endif

int32_t
hscope_cli_write_stdout(void *user_data, const char *data, uint64_t len)
{
    (void)user_data;
    return fwrite(data, 1, (size_t)len, stdout) == (size_t)len ? 0 : -1;
}

uint32_t
hscope_cli_width(void)
{
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
        return ws.ws_col;
    const char *c = getenv("COLUMNS");
    long v = c ? strtol(c, NULL, 10) : 0;
    return v > 0 && v < 100000 ? (uint32_t)v : 100;
}
