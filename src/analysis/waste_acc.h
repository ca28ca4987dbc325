/*
 * waste_acc.h - the waste accumulator's insides, shared by waste.c (what it
 * keeps while objects stream in) and waste_build.c (the result made from
 * it).  Private to the analysis module.
 */
#ifndef HSCOPE_WASTE_ACC_H
#define HSCOPE_WASTE_ACC_H

#include "waste.h"

#define HSCOPE__WNO_REF UINT64_MAX
/* Bytes (and details) of recent first copies, so that most values seen
 * twice are compared when the second copy comes (see waste.c). */
#define HSCOPE__WRING ((size_t)16 << 20)

/*
 * A distinct value: half a cache line (entries are appended, never
 * moved), so that a lookup brings in all it needs.  Most values are seen
 * once (the benchmark heap: 0.83 M distinct, 68 k seen twice or more), so
 * the counts of a value seen twice are in its group (hscope__wgrp).
 */
typedef struct hscope__wvent {
    uint64_t hash;
    uint64_t first;   /* ref of the first copy; HSCOPE__WNO_REF once counted
                         (with HSCOPE__WREP_INLINE: the representative's
                         bytes, with `at`) */
    uint64_t at;      /* seen once: the ring position of the first copy; in
                         a group: the representative's bytes in the arena;
                         HSCOPE__WNO_REF: none */
    uint32_t len;     /* length, and HSCOPE__WREP_INLINE */
    uint32_t grp;     /* its group + 1 once seen twice; 0: none */
} hscope__wvent;

/* A value seen twice.  Copies of a value mostly come from one site (a
 * literal in a loop): the first site counted is kept here, copies from
 * elsewhere go to the gs table. */
typedef struct hscope__wgrp {
    uint64_t mem;     /* the memsize of the copies counted at the site */
    uint32_t ent;     /* its value's entry */
    uint32_t file, line;  /* the site of the first copy counted */
    uint32_t n;       /* copies counted there */
    uint32_t maxmem;  /* the largest (saturates) */
    uint32_t frozen;
    uint16_t fstring, chilled; /* copies at a full count go to gs */
} hscope__wgrp;

#define HSCOPE__WREP_INLINE 0x80000000u /* a representative of <= 16 bytes
                                           sits in first and at */
#define HSCOPE__WLEN(e) ((e)->len & ~HSCOPE__WREP_INLINE)

/* Copies of a group at a site other than its entry's. */
typedef struct hscope__wgs {
    uint32_t grp, file, line, pad;
    uint64_t count, memsize, maxmem, frozen, fstring, chilled;
} hscope__wgs;

/* Empty or oversized objects of one kind and type at one site. */
typedef struct hscope__wfent {
    uint32_t file, line;
    uint8_t kind, type;
    uint64_t count, memsize, saving, buffer, used;
} hscope__wfent;

typedef struct hscope__wftab {
    hscope__wfent *f;
    size_t n, cap;
    uint32_t *t;
    size_t mask;
} hscope__wftab;

/* Counters of a source, summed when it is done. */
typedef struct hscope__wtot {
    uint64_t objects, memsize, shared_n, shared_m, noval_n, noval_m, trunc_n, trunc_m;
    uint64_t candidates, values;
    uint64_t chilled;         /* chilled strings (Ruby 3.4+ literals) */
} hscope__wtot;

/* A string of a source waiting for the accumulator (its bytes at voff in
 * the source's byte buffer; file: an id of the source's interner). */
typedef struct hscope__wrec {
    uint64_t hash, ref, memsize, voff;
    uint32_t len, file, line;
    uint16_t flags;
} hscope__wrec;

struct hscope__wsrc {
    hscope__wacc *a;
    int done, own;            /* own: on the accumulator's thread */
    hscope__wtot tot;
    hscope__wftab f;          /* empty and oversized objects, its file ids */
    hscope__wrec *rec;        /* its strings not handed over yet */
    size_t nrec, reccap;
    char *bytes;
    size_t blen, bcap;
};

/* A first copy to read back: its ref and its value's entry. */
typedef struct hscope__wpend {
    uint64_t ref;
    uint32_t ent;
} hscope__wpend;

struct hscope__wacc {
    hscope__mem *mem;
    hscope__wcfg cfg;
    hscope__wresolve_fn resolve;
    void *rud;
    hscope__wvent *v;         /* distinct values, 64-byte aligned in vraw */
    void *vraw;
    size_t nv, vcap;
    uint64_t *t;              /* open addressing: tag << 32 | entry + 1, 0
                                 free; the tag (32 more bits of the hash)
                                 spares a look at entries that differ */
    size_t mask;
    hscope__wgrp *g;          /* the groups */
    size_t ng, gcap;
    char *arena;              /* the representatives' bytes */
    size_t alen, acap;
    hscope__wgs *gs;
    size_t ngs, gscap;
    uint32_t *gst;            /* gs entry + 1 */
    size_t gsmask;
    unsigned char *ring;      /* HSCOPE__WRING bytes, NULL with resolve */
    uint64_t rhead;           /* position of the next record */
    hscope__wftab f;          /* final file ids */
    hscope__wtot tot;
    uint64_t excluded, collisions, changed;
    uint64_t tracer, tracer_mem;  /* the allocation tracer left out */
    uint32_t warnings;
    hscope__wsrc **srcs;
    size_t nsrc, srccap;
    hscope__wpend *pend;
    size_t np, pcap;
};

/* The bytes of the representative of entry e (which is in a group). */
static inline const char *
hscope__wrep(const hscope__wacc *a, const hscope__wvent *e)
{
    return (e->len & HSCOPE__WREP_INLINE) ? (const char *)&e->first : a->arena + e->at;
}

#endif
