// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/protobuf.h"

void protobuf_buf_init(struct protobuf_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void protobuf_buf_free(struct protobuf_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* Room for n more bytes; 0, or -1 with b->error set. */
static int protobuf_reserve(struct protobuf_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->error)
		return -1;
	if (n <= b->cap - b->len)
		return 0;
	if (n > SIZE_MAX / 2 - b->len) {
		b->error = ENOMEM;
		return -1;
	}
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->error = ENOMEM;
		return -1;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

size_t protobuf_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

size_t protobuf_varint_encode(uint8_t out[PROTOBUF_VARINT_MAX], uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

void protobuf_put_raw(struct protobuf_buf *b, const void *p, size_t n)
{
	if (!n || protobuf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void protobuf_put_varint(struct protobuf_buf *b, uint64_t v)
{
	if (protobuf_reserve(b, PROTOBUF_VARINT_MAX))
		return;
	b->len += protobuf_varint_encode(b->data + b->len, v);
}

void protobuf_put_key(struct protobuf_buf *b, uint32_t field, enum protobuf_wire wire)
{
	protobuf_put_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

void protobuf_put_uint(struct protobuf_buf *b, uint32_t field, uint64_t v)
{
	protobuf_put_key(b, field, PROTOBUF_WIRE_VARINT);
	protobuf_put_varint(b, v);
}

void protobuf_put_int(struct protobuf_buf *b, uint32_t field, int64_t v)
{
	/* int32 and int64 are sign-extended to 64 bits on the wire. */
	protobuf_put_uint(b, field, (uint64_t)v);
}

void protobuf_put_sint(struct protobuf_buf *b, uint32_t field, int64_t v)
{
	protobuf_put_uint(b, field, protobuf_zigzag(v));
}

void protobuf_put_bool(struct protobuf_buf *b, uint32_t field, int v)
{
	protobuf_put_uint(b, field, v ? 1 : 0);
}

void protobuf_put_fixed64(struct protobuf_buf *b, uint32_t field, uint64_t v)
{
	uint8_t le[8];

	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	protobuf_put_key(b, field, PROTOBUF_WIRE_I64);
	protobuf_put_raw(b, le, sizeof(le));
}

void protobuf_put_bytes(struct protobuf_buf *b, uint32_t field, const void *p, size_t n)
{
	protobuf_put_key(b, field, PROTOBUF_WIRE_LEN);
	protobuf_put_varint(b, n);
	protobuf_put_raw(b, p, n);
}

void protobuf_put_string(struct protobuf_buf *b, uint32_t field, const char *s)
{
	protobuf_put_bytes(b, field, s, strlen(s));
}

/*
 * The length goes before the body but is known only after it: one byte is
 * reserved (enough for bodies under 128 bytes, most of a trace's), and
 * protobuf_end_message moves longer bodies up to make room.
 */
size_t protobuf_begin_message(struct protobuf_buf *b, uint32_t field)
{
	size_t mark;

	protobuf_put_key(b, field, PROTOBUF_WIRE_LEN);
	mark = b->len;
	if (!protobuf_reserve(b, 1))
		b->data[b->len++] = 0;
	return mark;
}

void protobuf_end_message(struct protobuf_buf *b, size_t mark)
{
	size_t body, n;

	if (b->error || mark >= b->len)
		return;
	body = b->len - mark - 1;
	n = protobuf_varint_size(body);
	if (n > 1) {
		if (protobuf_reserve(b, n - 1))
			return;
		memmove(b->data + mark + n, b->data + mark + 1, body);
		b->len += n - 1;
	}
	protobuf_varint_encode(b->data + mark, body);
}
