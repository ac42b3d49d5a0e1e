/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace's own crash-safe trace format (proto/raw.h, docs/FORMATS.md):
 * the writer, and the encoding pieces its reader (raw-read.c) shares, so
 * that both sides of every varint and checksum are one piece of code.
 */
#ifndef VMM_OUTPUT_RAW_H
#define VMM_OUTPUT_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "proto/raw.h"
#include "vmm/output/writer.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the raw format's headers are written as the host lays them out: little-endian hosts only"
#endif

extern const struct trace_writer_ops trace_writer_raw;

/* Payload bytes after which the writer closes an event chunk. */
#define RAW_EVENT_CHUNK_BYTES	(64 * 1024)
/* Most bytes one entry record takes (tag, 17 varints, a comm of at most 16 bytes). */
#define RAW_REC_MAX		192

/*
 * Fills c for a chunk of type/seq around payload (len bytes): both
 * checksums. The writer and tests (crafting chunks) use it.
 */
void raw_chunk_seal(struct raw_chunk *c, uint16_t type, uint64_t seq, const void *payload,
		    uint32_t len);
/* hdr_crc of c as it should be. */
uint32_t raw_chunk_hdr_crc(const struct raw_chunk *c);

static inline uint64_t raw_zigzag(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

static inline uint64_t raw_unzigzag(uint64_t v)
{
	return (v >> 1) ^ (0 - (v & 1));
}

static inline uint8_t *raw_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Reads a varint below end into *v; NULL when it runs past end or 10 bytes. */
static inline const uint8_t *raw_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; shift < 70 && p < end; shift += 7) {
		uint8_t b = *p++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return p;
		}
	}
	return NULL;
}

#endif
