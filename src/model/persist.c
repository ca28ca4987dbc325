/*
 * persist.c - the columnar model saved to one file and opened again by
 * mmap, without parsing (docs/FORMAT.md).
 *
 * Layout: a 4 KiB header (magic, format version, byte-order mark, the
 * source dump's size, mtime and a hash of its first and last 64 KiB, the
 * section table and an XXH64 of the header itself), then sections, each
 * 64-byte aligned, each with its own XXH64.  Section 1 ("meta") holds the
 * scalars as little-endian u64s in a fixed order.
 *
 * An index file is untrusted input: every offset and length is checked
 * against the file size, every checksum is verified, and every id stored
 * in a column is range-checked before the heap is handed out, so a forged
 * file with valid checksums still cannot make an accessor read out of
 * bounds or loop forever.
 */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "../index/index.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAGIC "HSCOPEIX"
#define FORMAT_VERSION 3u /* 2: section checksums are XXH3-64; 3: object ids,
                             unknown fields, load stats' object_ids */
#define BOM 0x01020304u
#define HEADER_SIZE 4096u
#define MAX_SECTIONS 64u
#define ALIGN 64u

typedef struct sect {
    uint32_t id, elem;
    uint64_t offset, bytes, xxh;
} sect;

typedef struct header {
    char magic[8];
    uint32_t version, bom;
    uint64_t src_size, src_mtime_ns, src_hash;
    uint32_t nsect, reserved;
    uint64_t header_xxh;           /* of the header with this field zeroed */
    sect s[MAX_SECTIONS];
} header;

enum {
    S_META = 1, S_ADDR, S_TYPE, S_FLAGS, S_CLS, S_DETAIL, S_SITE, S_GEN,
    S_MEMSIZE, S_SIZE, S_EDGE_START, S_EDGES, S_BIGM_ID, S_BIGM_VAL,
    S_BIGS_ID, S_BIGS_VAL, S_UCLS_ID, S_UCLS_ADDR, S_STR_ARENA, S_STR_OFF,
    S_STR_LEN, S_STR_HASH, S_STR_TABLE, S_SITE_FILE, S_SITE_LINE,
    S_SITE_METHOD, S_IMEMO_DETAIL, S_IMEMO_LABEL, S_TYPE_NAMES, S_CAT_NAME,
    S_CAT_RECORDS, S_CAT_START, S_CAT_DANGLING, S_ROOT_DANG, S_ROOT_TARGETS,
    S_DANG_FROM, S_DANG_ADDR, S_VAL_ID, S_VAL_OFF, S_VAL_LEN, S_VAL_ARENA,
    S_INDEX, S_OID_ID, S_OID_VAL, S_UNKNOWN, S__END
};

/* the scalars of section S_META, in this order */
enum {
    M_N, M_NEDGES, M_BIGM, M_BIGS, M_NUCLS, M_STR_COUNT, M_STR_ARENA,
    M_STR_TMASK, M_NSITES, M_LBL_HIDDEN, M_LBL_UNKNOWN, M_LBL_ANON,
    M_LBL_IMEMO, M_NIMEMO, M_NCAT, M_NROOT_DANG, M_NROOT_TARGETS, M_NDANG,
    M_NDANG_UNIQUE, M_NVAL, M_VAL_ARENA, M_INDEX_MASK, M_DUPLICATES, M_NSKIP,
    M_SKIPPED, /* HSCOPE_SKIP__COUNT values */
    M_SKIP_LINE = M_SKIPPED + HSCOPE_SKIP__COUNT,
    M_SKIP_REASON = M_SKIP_LINE + HSCOPE__MAX_SKIP_EXAMPLES,
    M_STATS = M_SKIP_REASON + HSCOPE__MAX_SKIP_EXAMPLES,
    M_NOID = M_STATS + sizeof(hscope_load_stats) / 8 + 1,
    M_UNKNOWN,                  /* bytes of the unknown-fields table: 0 or its size */
    M__COUNT
};

/* ------------------------------------------------------------------ */
/* the source dump's identity                                         */
/* ------------------------------------------------------------------ */

/* Open path for reading and stat it: the descriptor, or -1 with *st set
 * (the error names the path). */
static int
open_stat(const char *path, struct stat *sb, hscope_status *st, hscope_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *st = hscope__fail_errno(err, errno, "cannot open %s", path);
        return -1;
    }
    if (fstat(fd, sb) != 0) {
        *st = hscope__fail_errno(err, errno, "cannot stat %s", path);
        close(fd);
        return -1;
    }
    return fd;
}

hscope_status
hscope__source_identity(const char *path, uint64_t *size, uint64_t *mtime_ns,
                        uint64_t *hash, hscope_error *err)
{
    struct stat sb;
    hscope_status st = HSCOPE_OK;
    int fd = open_stat(path, &sb, &st, err);
    if (fd < 0)
        return st;
    *size = (uint64_t)sb.st_size;
    *mtime_ns = (uint64_t)sb.st_mtim.tv_sec * 1000000000u + (uint64_t)sb.st_mtim.tv_nsec;
    /* XXH64 of the first and the last 64 KiB (the whole file if smaller) */
    unsigned char buf[1 << 16];
    XXH64_state_t *xs = XXH64_createState();
    if (!xs) {
        st = hscope__nomem(err, sizeof(*xs));
        goto out;
    }
    XXH64_reset(xs, *size);
    for (int part = 0; part < 2; part++) {
        off_t at = part == 0 ? 0 : (off_t)(*size > sizeof(buf) ? *size - sizeof(buf) : 0);
        if (part == 1 && *size <= sizeof(buf))
            break;
        ssize_t got = pread(fd, buf, sizeof(buf), at);
        if (got < 0) {
            st = hscope__fail_errno(err, errno, "cannot read %s", path);
            break;
        }
        XXH64_update(xs, buf, (size_t)got);
    }
    *hash = XXH64_digest(xs);
    XXH64_freeState(xs);
out:
    close(fd);
    return st;
}

/* ------------------------------------------------------------------ */
/* saving                                                             */
/* ------------------------------------------------------------------ */

typedef struct part {
    uint32_t id, elem;
    const void *p;
    uint64_t count;
} part;

static size_t
parts_of(const hscope_heap_t *h, part *ps, uint64_t *meta, const uint32_t *index,
         size_t index_mask)
{
    size_t k = 0;
    const hscope__intern *in = &h->strings;
#define P(sid, ptr, el, cnt) ps[k++] = (part){ sid, el, ptr, cnt }
    P(S_META, meta, 8, M__COUNT);
    P(S_ADDR, h->addr, 8, h->n);
    P(S_TYPE, h->type, 1, h->n);
    P(S_FLAGS, h->flags, 2, h->n);
    P(S_CLS, h->cls, 4, h->n);
    P(S_DETAIL, h->detail, 4, h->n);
    P(S_SITE, h->site, 4, h->n);
    P(S_GEN, h->gen, 4, h->n);
    P(S_MEMSIZE, h->memsize, 4, h->n);
    P(S_SIZE, h->size, 4, h->n);
    P(S_EDGE_START, h->edge_start, 4, (uint64_t)h->n + 1);
    P(S_EDGES, h->edges, 4, h->nedges);
    P(S_BIGM_ID, h->big_memsize.id, 4, h->big_memsize.len);
    P(S_BIGM_VAL, h->big_memsize.val, 8, h->big_memsize.len);
    P(S_BIGS_ID, h->big_size.id, 4, h->big_size.len);
    P(S_BIGS_VAL, h->big_size.val, 8, h->big_size.len);
    P(S_UCLS_ID, h->ucls_id, 4, h->nucls);
    P(S_UCLS_ADDR, h->ucls_addr, 8, h->nucls);
    P(S_STR_ARENA, in->arena, 1, in->arena_len);
    P(S_STR_OFF, in->off, 8, in->count);
    P(S_STR_LEN, in->len, 4, in->count);
    P(S_STR_HASH, in->hash, 8, in->count);
    P(S_STR_TABLE, in->table, 4, in->tmask + 1);
    P(S_SITE_FILE, h->site_file, 4, h->nsites);
    P(S_SITE_LINE, h->site_line, 4, h->nsites);
    P(S_SITE_METHOD, h->site_method, 4, h->nsites);
    P(S_IMEMO_DETAIL, h->imemo_detail, 4, h->nimemo);
    P(S_IMEMO_LABEL, h->imemo_label, 4, h->nimemo);
    P(S_TYPE_NAMES, h->type_names, 1, sizeof(h->type_names));
    P(S_CAT_NAME, h->cat_name, 4, h->ncat);
    P(S_CAT_RECORDS, h->cat_records, 8, h->ncat);
    P(S_CAT_START, h->cat_start, 8, (uint64_t)h->ncat + 1);
    P(S_CAT_DANGLING, h->cat_dangling, 8, (uint64_t)h->ncat + 1);
    P(S_ROOT_DANG, h->root_dang, 8, h->cat_dangling[h->ncat]);
    P(S_ROOT_TARGETS, h->root_targets, 4, h->cat_start[h->ncat]);
    P(S_DANG_FROM, h->dang_from, 4, h->ndang);
    P(S_DANG_ADDR, h->dang_addr, 8, h->ndang);
    P(S_VAL_ID, h->val_id, 4, h->nval);
    P(S_VAL_OFF, h->val_off, 8, h->nval);
    P(S_VAL_LEN, h->val_len, 4, h->nval);
    P(S_VAL_ARENA, h->val_arena, 1, h->nval ? h->val_off[h->nval - 1] + h->val_len[h->nval - 1] + 1 : 0);
    P(S_INDEX, index, 4, index_mask + 1);
    P(S_OID_ID, h->oids.id, 4, h->oids.len);
    P(S_OID_VAL, h->oids.val, 8, h->oids.len);
    P(S_UNKNOWN, h->unknown, 1, h->unknown ? sizeof(*h->unknown) : 0);
#undef P
    meta[M_N] = h->n;
    meta[M_NEDGES] = h->nedges;
    meta[M_BIGM] = h->big_memsize.len;
    meta[M_BIGS] = h->big_size.len;
    meta[M_NUCLS] = h->nucls;
    meta[M_STR_COUNT] = in->count;
    meta[M_STR_ARENA] = in->arena_len;
    meta[M_STR_TMASK] = in->tmask;
    meta[M_NSITES] = h->nsites;
    meta[M_LBL_HIDDEN] = h->lbl_hidden;
    meta[M_LBL_UNKNOWN] = h->lbl_unknown;
    meta[M_LBL_ANON] = h->lbl_anon;
    meta[M_LBL_IMEMO] = h->lbl_imemo_none;
    meta[M_NIMEMO] = h->nimemo;
    meta[M_NCAT] = h->ncat;
    meta[M_NROOT_DANG] = h->cat_dangling[h->ncat];
    meta[M_NROOT_TARGETS] = h->cat_start[h->ncat];
    meta[M_NDANG] = h->ndang;
    meta[M_NDANG_UNIQUE] = h->ndang_unique;
    meta[M_NVAL] = h->nval;
    meta[M_VAL_ARENA] = ps[k - 5].count;
    meta[M_NOID] = h->oids.len;
    meta[M_UNKNOWN] = h->unknown ? sizeof(*h->unknown) : 0;
    meta[M_INDEX_MASK] = index_mask;
    meta[M_DUPLICATES] = h->duplicates;
    meta[M_NSKIP] = h->nskip;
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        meta[M_SKIPPED + r] = h->skipped[r];
    for (int i = 0; i < HSCOPE__MAX_SKIP_EXAMPLES; i++) {
        meta[M_SKIP_LINE + i] = h->skip_line[i];
        meta[M_SKIP_REASON + i] = (uint64_t)(uint32_t)h->skip_reason[i];
    }
    memcpy(&meta[M_STATS], &h->stats, sizeof(h->stats));
    return k;
}

hscope_status
hscope__heap_save(const hscope_heap_t *h, const char *path, const char *source,
                  hscope_error *uerr)
{
    hscope_error err;
    hscope__error_init(&err);
    hscope_status st = HSCOPE_OK;
    FILE *f = NULL;
    char *tmp = NULL;
    uint32_t *own_index = NULL;
    uint64_t meta[M__COUNT];
    part ps[MAX_SECTIONS];
    header hd;
    if (!h || !path) {
        st = hscope__fail(&err, HSCOPE_ERR_INVALID_ARG, "heap and path are required");
        goto done;
    }
    memset(&hd, 0, sizeof(hd));
    memset(meta, 0, sizeof(meta));
    memcpy(hd.magic, MAGIC, 8);
    hd.version = FORMAT_VERSION;
    hd.bom = BOM;
    if (source && (st = hscope__source_identity(source, &hd.src_size, &hd.src_mtime_ns,
                                                &hd.src_hash, &err)) != HSCOPE_OK)
        goto done;
    /* the format stores a hash table; a heap loaded with the run index
     * builds one for the file */
    const uint32_t *index = h->index;
    size_t index_mask = h->index_mask;
    if (!index) {
        uint64_t dups;
        if ((st = hscope__index_hash_table(h, (hscope__mem *)&h->mem, &own_index, &index_mask,
                                           &dups, &err)) != HSCOPE_OK)
            goto done;
        index = own_index;
    }
    size_t np = parts_of(h, ps, meta, index, index_mask);
    hd.nsect = (uint32_t)np;
    uint64_t off = HEADER_SIZE;
    for (size_t i = 0; i < np; i++) {
        sect *s = &hd.s[i];
        s->id = ps[i].id;
        s->elem = ps[i].elem;
        s->offset = off;
        s->bytes = ps[i].count * ps[i].elem;
        s->xxh = XXH3_64bits(ps[i].p ? ps[i].p : "", (size_t)s->bytes);
        off += (s->bytes + ALIGN - 1) / ALIGN * ALIGN;
    }
    hd.header_xxh = XXH64(&hd, sizeof(hd), 0);
    /* write to a temporary name and rename, so readers never see a half
     * written index */
    size_t pl = strlen(path);
    tmp = hscope__malloc((hscope__mem *)&h->mem, pl + 32);
    if (!tmp) {
        st = hscope__nomem(&err, pl + 32);
        goto done;
    }
    snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    if (!(f = fopen(tmp, "wb"))) {
        st = hscope__fail_errno(&err, errno, "cannot create %s", tmp);
        goto done;
    }
    static const char zeros[HEADER_SIZE] = { 0 };
    int ok = fwrite(&hd, sizeof(hd), 1, f) == 1 &&
             fwrite(zeros, HEADER_SIZE - sizeof(hd), 1, f) == 1;
    for (size_t i = 0; ok && i < np; i++) {
        uint64_t b = hd.s[i].bytes, pad = (b + ALIGN - 1) / ALIGN * ALIGN - b;
        ok = (b == 0 || fwrite(ps[i].p, (size_t)b, 1, f) == 1) &&
             (pad == 0 || fwrite(zeros, (size_t)pad, 1, f) == 1);
    }
    if (fclose(f) != 0)
        ok = 0;
    f = NULL;
    if (!ok) {
        st = hscope__fail_errno(&err, errno ? errno : EIO, "cannot write %s", tmp);
        unlink(tmp);
        goto done;
    }
    if (rename(tmp, path) != 0) {
        st = hscope__fail_errno(&err, errno, "cannot rename %s to %s", tmp, path);
        unlink(tmp);
    }
done:
    if (f)
        fclose(f);
    if (tmp)
        hscope__free((hscope__mem *)&h->mem, tmp);
    hscope__free((hscope__mem *)&h->mem, own_index);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(uerr, &err);
    return st;
}

/* ------------------------------------------------------------------ */
/* opening                                                            */
/* ------------------------------------------------------------------ */

#define CORRUPT(...) hscope__fail(err, HSCOPE_ERR_CORRUPT, __VA_ARGS__)

static const void *
section(const header *hd, const unsigned char *base, uint32_t id, uint64_t count,
        uint32_t elem, hscope_error *err, hscope_status *st)
{
    for (uint32_t i = 0; i < hd->nsect; i++) {
        const sect *s = &hd->s[i];
        if (s->id != id)
            continue;
        uint64_t want;
        if (s->elem != elem || __builtin_mul_overflow(count, (uint64_t)elem, &want) ||
            s->bytes != want) {
            *st = CORRUPT("index section %u has the wrong size", id);
            return NULL;
        }
        /* An empty section may sit at the very end of the file; its pointer
         * must still lie inside the mapping, or hscope__model_free() would
         * take it for an allocation of ours and free it. */
        return s->bytes ? base + s->offset : base;
    }
    *st = CORRUPT("index section %u is missing", id);
    return NULL;
}

/*
 * Scans for the range checks, over columns of millions of entries: SSE2
 * where available (an unsigned compare is a signed one after flipping the
 * top bit), a plain loop otherwise.
 */
#ifdef __SSE2__
#include <emmintrin.h>
#define FLIP 0x80000000u
#endif

/* Is any a[i] > lim?  *zeros (if not NULL) gets the number of a[i] == 0. */
static int
any_above(const uint32_t *a, size_t n, uint32_t lim, uint64_t *zeros)
{
    size_t i = 0;
    uint32_t bad = 0;
    uint64_t z = 0;
#ifdef __SSE2__
    const __m128i flip = _mm_set1_epi32((int)FLIP), vl = _mm_set1_epi32((int)(lim ^ FLIP));
    const __m128i zero = _mm_setzero_si128();
    while (i + 4 <= n) {
        /* zero counts per lane stay below 2^31 within a block */
        __m128i acc = zero, cnt = zero;
        size_t stop = n - i > ((size_t)1 << 30) ? i + ((size_t)1 << 30) : n;
        for (; i + 4 <= stop; i += 4) {
            __m128i v = _mm_loadu_si128((const __m128i *)(a + i));
            acc = _mm_or_si128(acc, _mm_cmpgt_epi32(_mm_xor_si128(v, flip), vl));
            cnt = _mm_sub_epi32(cnt, _mm_cmpeq_epi32(v, zero));
        }
        bad |= (uint32_t)_mm_movemask_epi8(acc);
        uint32_t c[4];
        _mm_storeu_si128((__m128i *)c, cnt);
        z += (uint64_t)c[0] + c[1] + c[2] + c[3];
    }
#endif
    for (; i < n; i++) {
        bad |= a[i] > lim;
        z += a[i] == 0;
    }
    if (zeros)
        *zeros = z;
    return bad != 0;
}

/* Is any a[i] in [lo, hi)?  (lo <= hi) */
static int
any_within(const uint32_t *a, size_t n, uint32_t lo, uint32_t hi)
{
    if (lo >= hi)
        return 0;
    /* a[i] - lo < hi - lo, unsigned */
    size_t i = 0;
    uint32_t bad = 0, w = hi - lo;
#ifdef __SSE2__
    const __m128i flip = _mm_set1_epi32((int)FLIP), vlo = _mm_set1_epi32((int)lo);
    const __m128i vw = _mm_set1_epi32((int)(w ^ FLIP));
    __m128i acc = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4) {
        __m128i v = _mm_sub_epi32(_mm_loadu_si128((const __m128i *)(a + i)), vlo);
        acc = _mm_or_si128(acc, _mm_cmplt_epi32(_mm_xor_si128(v, flip), vw));
    }
    bad = (uint32_t)_mm_movemask_epi8(acc);
#endif
    for (; i < n; i++)
        bad |= a[i] - lo < w;
    return bad != 0;
}

/* Does a[0..n] (n + 1 entries) ever decrease? */
static int
any_decrease(const uint32_t *a, size_t n)
{
    size_t i = 0;
    uint32_t bad = 0;
#ifdef __SSE2__
    const __m128i flip = _mm_set1_epi32((int)FLIP);
    __m128i acc = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4) {
        __m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(a + i)), flip);
        __m128i y = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(a + i + 1)), flip);
        acc = _mm_or_si128(acc, _mm_cmplt_epi32(y, x));
    }
    bad = (uint32_t)_mm_movemask_epi8(acc);
#endif
    for (; i < n; i++)
        bad |= a[i + 1] < a[i];
    return bad != 0;
}

/* Range checks of everything an accessor may use as an index. */
static hscope_status
validate(const hscope_heap_t *h, uint64_t str_arena, uint64_t val_arena, hscope_error *err)
{
    const hscope__intern *in = &h->strings;
    uint32_t n = h->n;
    if (in->count == 0 || in->count > UINT32_MAX || (in->tmask & (in->tmask + 1)) ||
        in->count > in->tmask)
        return CORRUPT("index strings table is malformed");
    for (size_t i = 1; i < in->count; i++)
        if (in->off[i] > str_arena || in->len[i] >= str_arena - in->off[i] ||
            in->arena[in->off[i] + in->len[i]] != '\0')
            return CORRUPT("index string %zu is out of bounds", i);
    size_t empty = 0;
    for (size_t i = 0; i <= in->tmask; i++) {
        if (in->table[i] >= in->count)
            return CORRUPT("index string table entry out of range");
        empty += in->table[i] == 0;
    }
    if (!empty)
        return CORRUPT("index string table has no free slot");
    if ((h->index_mask & (h->index_mask + 1)) || h->index_mask < n)
        return CORRUPT("index address table is malformed");
    /* The big scans are SIMD reductions; on failure the offending entry
     * is looked for to name it. */
    uint64_t zeros = 0;
    if (any_above(h->index, h->index_mask + 1, n, &zeros))
        return CORRUPT("index address table entry out of range");
    if (!zeros)
        return CORRUPT("index address table has no free slot");
    if (h->edge_start[0] != 0 || h->edge_start[n] != h->nedges)
        return CORRUPT("index references are malformed");
    if (h->nsites > UINT32_MAX)
        return CORRUPT("index sites are malformed");
    if (any_decrease(h->edge_start, n) || any_within(h->cls, n, n, HSCOPE__CLS_UNKNOWN) ||
        any_above(h->detail, n, (uint32_t)in->count - 1, NULL) ||
        (n && (h->nsites == 0 || any_above(h->site, n, (uint32_t)h->nsites - 1, NULL)))) {
        uint32_t i = 0;
        while (i < n && !(h->edge_start[i + 1] < h->edge_start[i] ||
                          (h->cls[i] >= n && h->cls[i] < HSCOPE__CLS_UNKNOWN) ||
                          h->detail[i] >= in->count || h->site[i] >= h->nsites))
            i++;
        return CORRUPT("index object %u is out of range", i);
    }
    if (n == 0 ? h->nedges != 0 : any_above(h->edges, h->nedges, n - 1, NULL)) {
        uint64_t k = 0;
        while (k < h->nedges && h->edges[k] < n)
            k++;
        return CORRUPT("index reference %llu is out of range", (unsigned long long)k);
    }
    for (size_t s = 0; s < h->nsites; s++)
        if (h->site_file[s] >= in->count || h->site_method[s] >= in->count)
            return CORRUPT("index site %zu is out of range", s);
    for (size_t i = 0; i < h->nimemo; i++)
        if (h->imemo_detail[i] >= in->count || h->imemo_label[i] >= in->count)
            return CORRUPT("index label out of range");
    if (h->lbl_hidden >= in->count || h->lbl_unknown >= in->count ||
        h->lbl_anon >= in->count || h->lbl_imemo_none >= in->count)
        return CORRUPT("index label out of range");
    for (int t = 0; t < 256; t++)
        if (memchr(h->type_names[t], 0, sizeof(h->type_names[t])) == NULL)
            return CORRUPT("index type name %d is not terminated", t);
    if (h->cat_start[0] != 0 || h->cat_dangling[0] != 0)
        return CORRUPT("index roots are malformed");
    for (uint32_t c = 0; c < h->ncat; c++)
        if (h->cat_name[c] >= in->count || h->cat_start[c + 1] < h->cat_start[c] ||
            h->cat_dangling[c + 1] < h->cat_dangling[c])
            return CORRUPT("index root category %u is malformed", c);
    for (uint64_t i = 0; i < h->cat_start[h->ncat]; i++)
        if (h->root_targets[i] >= n)
            return CORRUPT("index root target out of range");
    for (uint64_t i = 0; i < h->ndang; i++)
        if (h->dang_from[i] >= n && h->dang_from[i] != HSCOPE_ID_NONE)
            return CORRUPT("index dangling reference out of range");
    const hscope__bigvals *bv[3] = { &h->big_memsize, &h->big_size, &h->oids };
    for (int b = 0; b < 3; b++)
        for (size_t i = 0; i < bv[b]->len; i++)
            if (bv[b]->id[i] >= n || (i && bv[b]->id[i] <= bv[b]->id[i - 1]))
                return CORRUPT("index large values are malformed");
    for (size_t i = 0; i < h->nucls; i++)
        if (h->ucls_id[i] >= n || (i && h->ucls_id[i] <= h->ucls_id[i - 1]))
            return CORRUPT("index class side table is malformed");
    for (size_t i = 0; i < h->nval; i++)
        if (h->val_id[i] >= n || (i && h->val_id[i] <= h->val_id[i - 1]) ||
            h->val_off[i] > val_arena || h->val_len[i] >= val_arena - h->val_off[i])
            return CORRUPT("index values are malformed");
    if (h->nskip > HSCOPE__MAX_SKIP_EXAMPLES)
        return CORRUPT("index skip list is malformed");
    const hscope__unknowns *u = h->unknown;
    if (u && u->n > HSCOPE__MAX_UNKNOWN)
        return CORRUPT("index unknown fields are malformed");
    for (uint32_t i = 0; u && i < u->n; i++)
        if (u->e[i].kind < HSCOPE_UNKNOWN_KEY || u->e[i].kind > HSCOPE_UNKNOWN_TYPE ||
            !memchr(u->e[i].name, 0, sizeof(u->e[i].name)))
            return CORRUPT("index unknown field %u is malformed", i);
    return HSCOPE_OK;
}

static hscope_status
attach(hscope_heap_t *h, const header *hd, const unsigned char *base, hscope_error *err)
{
    hscope_status st = HSCOPE_OK;
    const uint64_t *meta = section(hd, base, S_META, M__COUNT, 8, err, &st);
    if (!meta)
        return st;
    if (meta[M_N] > UINT32_MAX - 2 || meta[M_NEDGES] > UINT32_MAX || meta[M_NCAT] > UINT32_MAX ||
        meta[M_NSKIP] > HSCOPE__MAX_SKIP_EXAMPLES || meta[M_STR_TMASK] >= ((uint64_t)1 << 40) ||
        meta[M_INDEX_MASK] >= ((uint64_t)1 << 40) || meta[M_NCAT] >= ((uint64_t)1 << 32) - 1)
        return CORRUPT("index counts are out of range");
    h->n = (uint32_t)meta[M_N];
    h->nedges = meta[M_NEDGES];
    uint64_t n = h->n;
#define S(field, sid, cnt, el)                                                 \
    do {                                                                       \
        h->field = (void *)(uintptr_t)section(hd, base, sid, cnt, el, err, &st); \
        if (st != HSCOPE_OK)                                                   \
            return st;                                                         \
    } while (0)
    S(addr, S_ADDR, n, 8);
    S(type, S_TYPE, n, 1);
    S(flags, S_FLAGS, n, 2);
    S(cls, S_CLS, n, 4);
    S(detail, S_DETAIL, n, 4);
    S(site, S_SITE, n, 4);
    S(gen, S_GEN, n, 4);
    S(memsize, S_MEMSIZE, n, 4);
    S(size, S_SIZE, n, 4);
    S(edge_start, S_EDGE_START, n + 1, 4);
    S(edges, S_EDGES, h->nedges, 4);
    h->big_memsize.len = (size_t)meta[M_BIGM];
    h->big_size.len = (size_t)meta[M_BIGS];
    S(big_memsize.id, S_BIGM_ID, meta[M_BIGM], 4);
    S(big_memsize.val, S_BIGM_VAL, meta[M_BIGM], 8);
    S(big_size.id, S_BIGS_ID, meta[M_BIGS], 4);
    S(big_size.val, S_BIGS_VAL, meta[M_BIGS], 8);
    h->nucls = (size_t)meta[M_NUCLS];
    S(ucls_id, S_UCLS_ID, meta[M_NUCLS], 4);
    S(ucls_addr, S_UCLS_ADDR, meta[M_NUCLS], 8);
    h->strings.count = (size_t)meta[M_STR_COUNT];
    h->strings.arena_len = (size_t)meta[M_STR_ARENA];
    h->strings.tmask = (size_t)meta[M_STR_TMASK];
    S(strings.arena, S_STR_ARENA, meta[M_STR_ARENA], 1);
    S(strings.off, S_STR_OFF, meta[M_STR_COUNT], 8);
    S(strings.len, S_STR_LEN, meta[M_STR_COUNT], 4);
    S(strings.hash, S_STR_HASH, meta[M_STR_COUNT], 8);
    S(strings.table, S_STR_TABLE, meta[M_STR_TMASK] + 1, 4);
    h->nsites = (size_t)meta[M_NSITES];
    S(site_file, S_SITE_FILE, meta[M_NSITES], 4);
    S(site_line, S_SITE_LINE, meta[M_NSITES], 4);
    S(site_method, S_SITE_METHOD, meta[M_NSITES], 4);
    h->nimemo = (size_t)meta[M_NIMEMO];
    S(imemo_detail, S_IMEMO_DETAIL, meta[M_NIMEMO], 4);
    S(imemo_label, S_IMEMO_LABEL, meta[M_NIMEMO], 4);
    const void *tn = section(hd, base, S_TYPE_NAMES, sizeof(h->type_names), 1, err, &st);
    if (!tn)
        return st;
    memcpy(h->type_names, tn, sizeof(h->type_names));
    h->ncat = (uint32_t)meta[M_NCAT];
    S(cat_name, S_CAT_NAME, meta[M_NCAT], 4);
    S(cat_records, S_CAT_RECORDS, meta[M_NCAT], 8);
    S(cat_start, S_CAT_START, meta[M_NCAT] + 1, 8);
    S(cat_dangling, S_CAT_DANGLING, meta[M_NCAT] + 1, 8);
    S(root_dang, S_ROOT_DANG, meta[M_NROOT_DANG], 8);
    S(root_targets, S_ROOT_TARGETS, meta[M_NROOT_TARGETS], 4);
    if (h->cat_start[h->ncat] != meta[M_NROOT_TARGETS] ||
        h->cat_dangling[h->ncat] != meta[M_NROOT_DANG])
        return CORRUPT("index roots do not match their counts");
    h->ndang = meta[M_NDANG];
    h->ndang_unique = meta[M_NDANG_UNIQUE];
    S(dang_from, S_DANG_FROM, meta[M_NDANG], 4);
    S(dang_addr, S_DANG_ADDR, meta[M_NDANG], 8);
    h->nval = (size_t)meta[M_NVAL];
    S(val_id, S_VAL_ID, meta[M_NVAL], 4);
    S(val_off, S_VAL_OFF, meta[M_NVAL], 8);
    S(val_len, S_VAL_LEN, meta[M_NVAL], 4);
    S(val_arena, S_VAL_ARENA, meta[M_VAL_ARENA], 1);
    h->index_mask = (size_t)meta[M_INDEX_MASK];
    S(index, S_INDEX, meta[M_INDEX_MASK] + 1, 4);
    h->oids.len = (size_t)meta[M_NOID];
    S(oids.id, S_OID_ID, meta[M_NOID], 4);
    S(oids.val, S_OID_VAL, meta[M_NOID], 8);
#undef S
    if (meta[M_UNKNOWN] != 0 && meta[M_UNKNOWN] != sizeof(*h->unknown))
        return CORRUPT("index unknown fields have the wrong size");
    const void *unk = section(hd, base, S_UNKNOWN, meta[M_UNKNOWN], 1, err, &st);
    if (!unk)
        return st;
    h->unknown = meta[M_UNKNOWN] ? (hscope__unknowns *)(uintptr_t)unk : NULL;
    h->lbl_hidden = (uint32_t)meta[M_LBL_HIDDEN];
    h->lbl_unknown = (uint32_t)meta[M_LBL_UNKNOWN];
    h->lbl_anon = (uint32_t)meta[M_LBL_ANON];
    h->lbl_imemo_none = (uint32_t)meta[M_LBL_IMEMO];
    h->duplicates = meta[M_DUPLICATES];
    h->nskip = (uint32_t)meta[M_NSKIP];
    for (int r = 0; r < HSCOPE_SKIP__COUNT; r++)
        h->skipped[r] = meta[M_SKIPPED + r];
    for (int i = 0; i < HSCOPE__MAX_SKIP_EXAMPLES; i++) {
        h->skip_line[i] = meta[M_SKIP_LINE + i];
        h->skip_reason[i] = (int32_t)(uint32_t)meta[M_SKIP_REASON + i];
    }
    memcpy(&h->stats, &meta[M_STATS], sizeof(h->stats));
    h->stats.size = sizeof(h->stats);
    if ((st = validate(h, meta[M_STR_ARENA], meta[M_VAL_ARENA], err)) != HSCOPE_OK)
        return st;
    return hscope__tracer_labels(h, 0, err); /* finds them, adds nothing */
}

/*
 * Section checksums, shared by two threads: the sections are taken largest
 * first from a common counter, so a big index is hashed on two cores while
 * the calling thread also attaches and range-checks it (those checks are
 * safe on any bytes: they are what makes a mutated index harmless).
 */
typedef struct sumjob {
    const header *hd;
    const unsigned char *base;
    uint32_t order[MAX_SECTIONS];
    _Atomic uint32_t next;
    unsigned char bad[MAX_SECTIONS];
} sumjob;

static void *
sum_sections(void *arg)
{
    sumjob *j = arg;
    uint32_t k;
    while ((k = atomic_fetch_add(&j->next, 1)) < j->hd->nsect) {
        const sect *s = &j->hd->s[j->order[k]];
        j->bad[j->order[k]] = XXH3_64bits(j->base + s->offset, (size_t)s->bytes) != s->xxh;
    }
    return NULL;
}

/* The two halves of opening a saved model, for hscope__run_pair: the
 * calling thread attaches (and range-checks) the sections and then helps
 * with the checksums; the helper thread only sums. */
typedef struct openjob {
    sumjob *sums;
    hscope_heap_t *h;       /* NULL: sum only */
    const header *hd;
    const void *map;
    hscope_status st;
    hscope_error err;
} openjob;

static void *
open_half(void *arg)
{
    openjob *o = arg;
    if (o->h)
        o->st = attach(o->h, o->hd, o->map, &o->err);
    return sum_sections(o->sums);
}

hscope_status
hscope__model_open_saved(hscope_heap_t *h, const char *path, const char *source,
                         hscope_error *err)
{
    struct stat sb;
    hscope_status st = HSCOPE_OK;
    int fd = open_stat(path, &sb, &st, err);
    if (fd < 0)
        return st;
    uint64_t fsize = (uint64_t)sb.st_size;
    if (fsize < HEADER_SIZE) {
        close(fd);
        return CORRUPT("%s is not a heapscope index (too short)", path);
    }
    void *map = mmap(NULL, (size_t)fsize, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return hscope__fail_errno(err, errno, "cannot map %s", path);
    h->map = map;
    h->map_len = (size_t)fsize;
    header hd;
    memcpy(&hd, map, sizeof(hd));
    uint64_t want = hd.header_xxh;
    hd.header_xxh = 0;
    if (memcmp(hd.magic, MAGIC, 8) != 0)
        return CORRUPT("%s is not a heapscope index", path);
    if (hd.bom != BOM || hd.version != FORMAT_VERSION)
        return hscope__fail(err, HSCOPE_ERR_STALE,
                            "%s: index format %u (byte order %08x) is not this version's (%u)",
                            path, hd.version, hd.bom, FORMAT_VERSION);
    if (XXH64(&hd, sizeof(hd), 0) != want || hd.nsect > MAX_SECTIONS)
        return CORRUPT("%s: index header checksum mismatch", path);
    if (source) {
        uint64_t sz, mt, hs;
        if ((st = hscope__source_identity(source, &sz, &mt, &hs, err)) != HSCOPE_OK)
            return st;
        if (sz != hd.src_size || mt != hd.src_mtime_ns || hs != hd.src_hash)
            return hscope__fail(err, HSCOPE_ERR_STALE,
                                "%s was made from another version of %s", path, source);
    }
    sumjob job;
    memset(&job, 0, sizeof(job));
    job.hd = &hd;
    job.base = map;
    atomic_init(&job.next, 0);
    for (uint32_t i = 0; i < hd.nsect; i++) {
        const sect *s = &hd.s[i];
        uint64_t end;
        if (s->offset % 8 || s->offset < HEADER_SIZE ||
            __builtin_add_overflow(s->offset, s->bytes, &end) || end > fsize)
            return CORRUPT("%s: section %u lies outside the file", path, s->id);
        /* insertion sort, largest first (at most 64 sections) */
        uint32_t k = i;
        while (k > 0 && hd.s[job.order[k - 1]].bytes < s->bytes) {
            job.order[k] = job.order[k - 1];
            k--;
        }
        job.order[k] = i;
    }
    openjob main_half = { .sums = &job, .h = h, .hd = &hd, .map = map };
    openjob sum_half = { .sums = &job };
    hscope__error_init(&main_half.err);
    hscope__run_pair(open_half, &main_half, &sum_half, fsize >= ((uint64_t)8 << 20));
    st = main_half.st;
    /* a checksum failure is the first thing to report, as if the sums had
     * been checked before anything was read */
    for (uint32_t i = 0; i < hd.nsect; i++)
        if (job.bad[i])
            return CORRUPT("%s: section %u checksum mismatch", path, hd.s[i].id);
    if (st != HSCOPE_OK)
        hscope__error_copy_out(err, &main_half.err);
    return st;
}

/* Does p point into the mapping (then it is not ours to free)? */
int
hscope__model_is_mapped(const hscope_heap_t *h, const void *p)
{
    const unsigned char *b = h->map, *q = p;
    return b && q >= b && q < b + h->map_len;
}

void
hscope__model_unmap(hscope_heap_t *h)
{
    if (h->map)
        munmap(h->map, h->map_len);
    h->map = NULL;
    h->map_len = 0;
}

/* For the fuzzer: recompute the section and header checksums of an index
 * image in place (where its header allows), so that mutated files get past
 * the checksums and reach the bounds and range checks. */
void
hscope__saved_index_fix_checksums(unsigned char *buf, size_t len)
{
    if (len < HEADER_SIZE)
        return;
    header hd;
    memcpy(&hd, buf, sizeof(hd));
    if (hd.nsect > MAX_SECTIONS)
        hd.nsect = MAX_SECTIONS;
    for (uint32_t i = 0; i < hd.nsect; i++) {
        sect *s = &hd.s[i];
        uint64_t end;
        if (!__builtin_add_overflow(s->offset, s->bytes, &end) && end <= len)
            s->xxh = XXH3_64bits(buf + s->offset, (size_t)s->bytes);
    }
    hd.header_xxh = 0;
    hd.header_xxh = XXH64(&hd, sizeof(hd), 0);
    memcpy(buf, &hd, sizeof(hd));
}
