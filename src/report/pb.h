/*
 * pb.h - a protocol buffers encoder, just what profile.proto needs:
 * varint fields (uint64 and int64), length-delimited fields (strings,
 * bytes, nested messages) and packed repeated varints.  Messages are built
 * in growable byte buffers; a nested message is built in a buffer of its
 * own, then written into its parent with its length (the length comes
 * first on the wire).  Field order is free in protobuf, so a writer can
 * stream the top-level message in pieces.
 *
 * An allocation failure sets `failed` and makes every later call a no-op;
 * the caller checks it once, at the end.
 */
#ifndef HSCOPE_PB_H
#define HSCOPE_PB_H

#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"

/* Wire types. */
#define HSCOPE__PB_VARINT 0
#define HSCOPE__PB_LEN    2

typedef struct hscope__pb {
    hscope__mem *mem;
    uint8_t *p;
    size_t len, cap;
    int failed;
} hscope__pb;

void hscope__pb_init(hscope__pb *b, hscope__mem *m);
void hscope__pb_free(hscope__pb *b);
/* Bytes a varint of v takes (1 to 10). */
size_t hscope__pb_varint_size(uint64_t v);
void hscope__pb_varint(hscope__pb *b, uint64_t v);
/* A field key: (field << 3) | wire type. */
void hscope__pb_key(hscope__pb *b, uint32_t field, uint32_t wire);
/* A varint field, left out when v is 0 (proto3's default). */
void hscope__pb_u64(hscope__pb *b, uint32_t field, uint64_t v);
/* An int64 field: two's complement as a varint (a negative value takes
 * ten bytes); left out when 0. */
void hscope__pb_i64(hscope__pb *b, uint32_t field, int64_t v);
/* A length-delimited field (always written, even when empty). */
void hscope__pb_bytes(hscope__pb *b, uint32_t field, const void *data, size_t n);
/* A nested message, built in `sub`. */
void hscope__pb_msg(hscope__pb *b, uint32_t field, const hscope__pb *sub);
/* A packed repeated varint field (left out when n is 0). */
void hscope__pb_packed(hscope__pb *b, uint32_t field, const uint64_t *v, size_t n);

#endif
