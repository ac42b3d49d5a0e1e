/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace's own trace file ("raw", docs/FORMATS.md): a stream of
 * self-describing chunks, each a fixed header and a payload, written whole
 * and checksummed, so that a file cut anywhere (SIGKILL, power cut) reads up
 * to its last complete chunk and a damaged chunk is found, named by its file
 * offset, and stepped over.
 *
 *   header   first chunk: format version, tsc_khz, tsc_base, ncpus, kernel
 *   symbols  the guest kernel's symbol table (every symbol, zlib-compressed)
 *   events   many event records, compactly encoded, decodable on their own
 *   trailer  last chunk: the closing account; absent when the run was killed
 *
 * All integers are little-endian. Readers skip chunk types they do not
 * know (their checksums still tell whether they are whole), and event
 * records of kinds they do not know when the kind has RAW_REC_SIZED set.
 * Freestanding (<stdint.h> only), as every proto/ header.
 */
#ifndef PROTO_RAW_H
#define PROTO_RAW_H

#include <stdint.h>

#define RAW_MAGIC		0x31525456u	/* "VTR1" at the start of every chunk */
#define RAW_VERSION		4		/* readers refuse a newer header chunk */

/* Chunk types. New types may appear in any version: readers skip them. */
#define RAW_CHUNK_HEADER	1
#define RAW_CHUNK_SYMBOLS	2
#define RAW_CHUNK_EVENTS	3
#define RAW_CHUNK_TRAILER	4
#define RAW_CHUNK_PROTOS	5		/* version 3: functions' prototypes (--args) */

/* Largest payload a reader accepts: bounds what a damaged length can claim. */
#define RAW_MAX_PAYLOAD		(1u << 28)

/*
 * Every chunk starts with this. hdr_crc covers the bytes before it,
 * payload_crc among them, so one chain of checksums covers header and
 * payload; a header that checks out can be trusted for the payload's length
 * even when the payload does not, so a damaged payload costs only its chunk.
 * seq counts chunks from 0 (the header chunk): a gap means chunks were lost.
 */
struct raw_chunk {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t length;		/* payload bytes after this header */
	uint32_t payload_crc;		/* CRC-32 (zlib's) of the payload */
	uint64_t seq;
	uint32_t reserved;		/* 0 */
	uint32_t hdr_crc;		/* CRC-32 of the 28 bytes before it */
};

/* RAW_CHUNK_HEADER payload; the kernel's path follows (kernel_len bytes, no NUL). */
struct raw_header {
	uint64_t tsc_khz;		/* guest TSC ticks per ms (0: 1 GHz assumed) */
	uint64_t tsc_base;		/* guest TSC at time zero */
	uint32_t ncpus;
	uint32_t kernel_len;
	uint32_t graph;			/* version 4: RAW_GRAPH_* (0 in older files) */
	uint32_t graph_depth;		/* version 4: --graph-depth, 0: every depth */
	uint64_t reserved[3];		/* 0 */
};
/* raw_header.graph: how the trace was recorded, so that a conversion prints it as the boot did. */
#define RAW_GRAPH_ON		0x1	/* --graph: hooked entries and exits; text is function_graph's */
#define RAW_GRAPH_RETVAL	0x2	/* --retval */

/*
 * RAW_CHUNK_SYMBOLS payload: this, then `stored` bytes that inflate (zlib)
 * to `size` bytes of `count` symbols in the table's order (by address,
 * aliases as the table had them): varint address delta from the previous
 * symbol, the nm type letter, varint name length, the name.
 */
struct raw_symbols {
	uint32_t count;
	uint32_t encoding;		/* RAW_SYMS_ZLIB */
	uint32_t size;			/* bytes once inflated */
	uint32_t stored;		/* bytes that follow */
};
#define RAW_SYMS_ZLIB		1

/*
 * RAW_CHUNK_EVENTS payload: this, then `count` records. Each chunk decodes
 * on its own (the delta state below starts afresh), so a damaged chunk
 * takes no other with it.
 *
 * A record starts with a tag byte. Entry records (tag & RAW_REC_KIND ==
 * RAW_REC_ENTRY, RAW_REC_SIZED clear), one per function entry, carry the
 * struct ring_event fields as LEB128 varints, signed ones zigzag-encoded:
 *   cpu
 *   [ring]   when RAW_REC_RING; else ring == cpu
 *   [flags]  when RAW_REC_FLAGS; else flags is RAW_REC_IRQS_OFF ? 1 : 0
 *            (the record's VT_REC_FLAG_* bits, with RAW_FLAG_NEW_TASK)
 *   [preempt] when flags has VT_REC_FLAG_CTX                  (version 2)
 *   [task, pid, comm length, comm bytes] when flags has RAW_FLAG_NEW_TASK:
 *            the task of this and the ring's later records in the chunk
 *            that have VT_REC_FLAG_TASK without it              (version 2)
 *   [6 argument registers] when flags has VT_REC_FLAG_ARGS     (version 3)
 *   [depth] when flags has VT_REC_FLAG_HOOKED or VT_REC_FLAG_EXIT (version 4)
 *   [retval, tsc - calltime (signed)] when flags has VT_REC_FLAG_EXIT (version 4):
 *            an exit (--graph's return) is an entry record with that flag
 *   tsc    - the chunk's previous tsc            (signed; first: from 0)
 *   func   - the chunk's previous func           (signed; first: from 0)
 *   parent - this func                           (signed)
 *   seq    - (the ring's previous seq + 1)       (signed; from 0 for a
 *            ring's first in the chunk and for rings >= RAW_SEQ_RINGS)
 * A record with RAW_REC_SIZED has a varint body length after its tag, so a
 * reader skips kinds it does not know (returns, task context, VM events).
 */
struct raw_events {
	uint32_t count;			/* records in this chunk */
	uint32_t reserved;		/* 0 */
};
#define RAW_REC_KIND		0x0f
#define RAW_REC_ENTRY		1
/*
 * A VM event (--event), always with RAW_REC_SIZED, so readers before it
 * skip it. Its body, varints, leaves the chunk's delta state alone:
 *   cpu, ring, flags (with 0x8000, the VM-event bit), seq,
 *   tsc - the chunk's previous entry tsc  (signed),
 *   rip - the chunk's previous entry func (signed),
 *   parent, arg                            (the payload, as is)
 */
#define RAW_REC_VMEV		2
#define RAW_REC_IRQS_OFF	0x10	/* flags == VT_REC_FLAG_IRQS_OFF */
#define RAW_REC_FLAGS		0x20	/* flags other than 0/irqs-off: varint follows */
#define RAW_REC_RING		0x40	/* ring != cpu: varint follows */
#define RAW_REC_SIZED		0x80	/* varint body length follows the tag */
#define RAW_SEQ_RINGS		64
/* In an entry's flags varint only: task, pid and comm follow (the ring's task changed). */
#define RAW_FLAG_NEW_TASK	0x10000

/*
 * RAW_CHUNK_TRAILER payload: the writer's closing account. The ftrace_init
 * boundary (events before the guest's own ftrace took over) has its place
 * here; RAW_TRAILER_PHASE says it was recorded (the tracer does not hand it
 * to writers yet, so today it never is).
 */
struct raw_trailer {
	uint64_t events;		/* events written */
	uint64_t dropped_stub;		/* dropped by the stub */
	uint64_t lost;			/* overwritten or unfinished before the host read them */
	uint64_t event_chunks;		/* event chunks written */
	uint64_t flags;			/* RAW_TRAILER_* */
	uint64_t early_events;		/* events before ftrace_init (RAW_TRAILER_PHASE) */
	uint64_t ftrace_init_tsc;	/* guest TSC at ftrace_init (RAW_TRAILER_PHASE) */
	uint64_t reserved[5];		/* 0 */
};
#define RAW_TRAILER_PHASE	0x1

/*
 * RAW_CHUNK_PROTOS payload (version 3, written with --args): a u32 count,
 * then count times a u64 function address and its prototype in the wire
 * form of vmm/output/fnargs.c (fnargs_encode): u8 parameters, u8 kept,
 * u8 variadic, then for each kept parameter u8 kind, u8 size, u8 signed,
 * u8 name length, the name, u8 type length, the type. The writer puts a
 * function's prototype in the file before the first event chunk with a call
 * of it; a reader takes them all at open, wherever they lie.
 */

_Static_assert(sizeof(struct raw_chunk) == 32, "raw_chunk size");
_Static_assert(__builtin_offsetof(struct raw_chunk, version) == 4, "raw_chunk version");
_Static_assert(__builtin_offsetof(struct raw_chunk, type) == 6, "raw_chunk type");
_Static_assert(__builtin_offsetof(struct raw_chunk, length) == 8, "raw_chunk length");
_Static_assert(__builtin_offsetof(struct raw_chunk, payload_crc) == 12, "raw_chunk payload_crc");
_Static_assert(__builtin_offsetof(struct raw_chunk, seq) == 16, "raw_chunk seq");
_Static_assert(__builtin_offsetof(struct raw_chunk, hdr_crc) == 28, "raw_chunk hdr_crc");
_Static_assert(sizeof(struct raw_header) == 56, "raw_header size");
_Static_assert(__builtin_offsetof(struct raw_header, ncpus) == 16, "raw_header ncpus");
_Static_assert(__builtin_offsetof(struct raw_header, kernel_len) == 20, "raw_header kernel_len");
_Static_assert(__builtin_offsetof(struct raw_header, graph) == 24, "raw_header graph");
_Static_assert(sizeof(struct raw_symbols) == 16, "raw_symbols size");
_Static_assert(sizeof(struct raw_events) == 8, "raw_events size");
_Static_assert(sizeof(struct raw_trailer) == 96, "raw_trailer size");
_Static_assert(__builtin_offsetof(struct raw_trailer, flags) == 32, "raw_trailer flags");
_Static_assert(__builtin_offsetof(struct raw_trailer, ftrace_init_tsc) == 48, "raw_trailer ftrace_init_tsc");

#endif
