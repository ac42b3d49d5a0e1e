/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small protobuf encoder: varints, fixed 64-bit values, length-delimited
 * fields and nested messages, written into a growable buffer. It is all
 * the Perfetto writer (trace-perfetto.c) needs, without generated code or
 * a protobuf library.
 *
 * Errors are sticky: the first failed allocation sets buf->error (ENOMEM)
 * and every later call leaves the buffer alone, so a writer checks once
 * per message rather than after every field.
 */
#ifndef VMM_OUTPUT_PROTOBUF_H
#define VMM_OUTPUT_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

/* Wire types (the low 3 bits of a field's key). */
enum protobuf_wire {
	PROTOBUF_WIRE_VARINT = 0,
	PROTOBUF_WIRE_I64 = 1,
	PROTOBUF_WIRE_LEN = 2,
	PROTOBUF_WIRE_I32 = 5,
};

/* The longest varint: 64 bits, 7 per byte. */
#define PROTOBUF_VARINT_MAX 10

struct protobuf_buf {
	uint8_t *data;
	size_t len, cap;
	int error;		/* 0 or the errno of the first failure (ENOMEM) */
};

void protobuf_buf_init(struct protobuf_buf *b);
void protobuf_buf_free(struct protobuf_buf *b);
/* Empties the buffer for the next message; keeps its memory and its error. */
static inline void protobuf_buf_reset(struct protobuf_buf *b)
{
	b->len = 0;
}

/* Bytes of v as a varint (1 to 10). */
size_t protobuf_varint_size(uint64_t v);
/* Writes v as a varint into out; returns its size. */
size_t protobuf_varint_encode(uint8_t out[PROTOBUF_VARINT_MAX], uint64_t v);
/* sint32/sint64's mapping of small negative numbers to small varints. */
static inline uint64_t protobuf_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
}

void protobuf_put_raw(struct protobuf_buf *b, const void *p, size_t n);
void protobuf_put_varint(struct protobuf_buf *b, uint64_t v);
void protobuf_put_key(struct protobuf_buf *b, uint32_t field, enum protobuf_wire wire);

/* uint32, uint64, enum fields. */
void protobuf_put_uint(struct protobuf_buf *b, uint32_t field, uint64_t v);
/* int32, int64 fields: a negative value takes 10 bytes, as protobuf says. */
void protobuf_put_int(struct protobuf_buf *b, uint32_t field, int64_t v);
/* sint32, sint64 fields (zigzag). */
void protobuf_put_sint(struct protobuf_buf *b, uint32_t field, int64_t v);
void protobuf_put_bool(struct protobuf_buf *b, uint32_t field, int v);
/* fixed64 fields, little-endian. */
void protobuf_put_fixed64(struct protobuf_buf *b, uint32_t field, uint64_t v);
/* bytes fields, and string fields from n bytes or a NUL-terminated string. */
void protobuf_put_bytes(struct protobuf_buf *b, uint32_t field, const void *p, size_t n);
void protobuf_put_string(struct protobuf_buf *b, uint32_t field, const char *s);

/*
 * A nested message: protobuf_begin_message() writes the field's key and
 * returns a mark; the message's fields follow; protobuf_end_message(mark)
 * puts its length in front of them. Nest freely, end in reverse order.
 */
size_t protobuf_begin_message(struct protobuf_buf *b, uint32_t field);
void protobuf_end_message(struct protobuf_buf *b, size_t mark);

#endif
