/*
 * utf8.c - the one UTF-8 decoder of the library.
 *
 * Names and values in a dump are bytes: Ruby writes file names, class
 * names and string values without checking their encoding.  Writers that
 * must produce valid UTF-8 (JSON for browsers, SVG, HTML, CSV for
 * PostgreSQL) and text tables that count display columns decode with this
 * function and replace what it rejects.
 */
#include "core.h"

int
hscope__utf8_seq(const unsigned char *s, size_t avail, uint32_t *cp)
{
    if (!avail)
        return 0;
    uint32_t c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    int n;
    uint32_t v, min;
    if ((c & 0xE0) == 0xC0) {
        n = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if ((size_t)n > avail)
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

size_t
hscope__utf8_columns(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t cols = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int l = hscope__utf8_seq(p + i, len - i, &cp);
        i += l ? (size_t)l : 1; /* an invalid byte shows as one column */
        cols++;
    }
    return cols;
}

size_t
hscope__utf8_skip_columns(const char *s, size_t len, size_t cols)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len && cols) {
        uint32_t cp;
        int l = hscope__utf8_seq(p + i, len - i, &cp);
        i += l ? (size_t)l : 1; /* an invalid byte counts as one column */
        cols--;
    }
    return i;
}
