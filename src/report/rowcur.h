/*
 * rowcur.h - rows of large tables formatted in place: a cursor over the
 * room hscope__out_room() gives, kept at least HSCOPE__ROW_ROOM bytes
 * ahead at every fixed-width field (numbers and addresses with their
 * separators), and the formatters that write into it.  For writers of
 * outputs as large as the dumps (export's CSV tables), where a call per
 * field through hscope__out costs more than the formatting.
 */
#ifndef HSCOPE_REPORT_ROWCUR_H
#define HSCOPE_REPORT_ROWCUR_H

#include <string.h>

#include "out.h"

#define HSCOPE__ROW_ROOM 256

typedef struct hscope__cur {
    hscope__out *o;
    char *start, *p, *end;
} hscope__cur;

/* Room for n bytes (k->o set): k->p where to write, k->end its end; k->p
 * NULL if n is more than the buffer holds. */
static inline void
hscope__cur_open(hscope__cur *k, size_t n)
{
    size_t avail = 0;
    k->start = k->p = hscope__out_room(k->o, n, &avail);
    k->end = k->p ? k->p + avail : NULL;
}

/* What was written since hscope__cur_open() goes into the output. */
static inline void
hscope__cur_close(hscope__cur *k)
{
    if (k->p)
        hscope__out_advance(k->o, (size_t)(k->p - k->start));
}

extern const char hscope__digits2[201];
/* "00" "01" ... "ff": the two lowercase hex digits of each byte. */
extern const char hscope__hex2[513];

/* 10^0 ... 10^19. */
extern const uint64_t hscope__pow10[20];

/* The decimal digits of v at p (at most 20 bytes); returns their end.
 * The digit count comes first (from the bit length), so the digits are
 * written in place, two at a time, with no copy of variable length (a
 * call to memcpy per number was most of the cost). */
static inline char *
hscope__put_u64(char *p, uint64_t v)
{
    if (v < 10) {
        *p = (char)('0' + v);
        return p + 1;
    }
    /* floor(log10(v)): 1233 / 4096 ~ log10(2), too big by at most one */
    unsigned t = ((unsigned)(64 - __builtin_clzll(v)) * 1233u) >> 12;
    char *end = p + t + 1 - (v < hscope__pow10[t]), *q = end;
    while (v >= 100) {
        uint64_t r = v % 100;
        v /= 100;
        q -= 2;
        memcpy(q, hscope__digits2 + 2 * r, 2);
    }
    if (v >= 10)
        memcpy(q - 2, hscope__digits2 + 2 * v, 2);
    else
        q[-1] = (char)('0' + v);
    return end;
}

/* "0x" and the lowercase hex digits of a (at most 18 bytes); returns
 * their end. */
static inline char *
hscope__put_addr(char *p, uint64_t a)
{
    int nd = a ? (67 - __builtin_clzll(a)) / 4 : 1; /* hex digits */
    p[0] = '0';
    p[1] = 'x';
    p += 2;
    int i = nd;
    for (; i >= 2; i -= 2) { /* two digits (one byte) at a time */
        memcpy(p + i - 2, hscope__hex2 + 2 * (a & 255), 2);
        a >>= 8;
    }
    if (i)
        p[0] = hscope__hex2[2 * (a & 15) + 1];
    return p + nd;
}

/* A CSV text field as hscope__csv_field() writes it (NULL: nothing, an
 * empty field), then HSCOPE__ROW_ROOM bytes ahead again. */
void hscope__cur_csv_str(hscope__cur *k, const char *s);
/* n bytes at the cursor (more than the buffer holds: written through);
 * then HSCOPE__ROW_ROOM bytes ahead again. */
static inline void
hscope__cur_bytes(hscope__cur *k, const char *s, size_t n)
{
    if ((size_t)(k->end - k->p) < n + HSCOPE__ROW_ROOM) {
        hscope__cur_close(k);
        hscope__cur_open(k, n + HSCOPE__ROW_ROOM);
        if (!k->p) { /* longer than the buffer */
            hscope__out_write(k->o, s, n);
            hscope__cur_open(k, HSCOPE__ROW_ROOM);
            return;
        }
    }
    memcpy(k->p, s, n);
    k->p += n;
}

#endif
