/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between the guest stub and the host: the stub's read-only
 * configuration block, the per-CPU ring headers and the event record.
 * Freestanding: included by the host (C) and by the stub (assembler, through
 * the VT_* offsets, which the _Static_asserts tie to the C layout).
 */
#ifndef PROTO_TRACE_H
#define PROTO_TRACE_H

#define VT_PROTO_VERSION        1
#define VT_STUB_MAGIC           0x3154535454524d56ULL	/* "VMRTTST1" */

/* Port the stub writes (32-bit, value = ring index) when a lossless ring is full. */
#define VT_DOORBELL_PORT        0x0d40

/* Configuration block: the first bytes of the stub's code page (read-only). */
#define VT_CFG_MAGIC            0
#define VT_CFG_CPU_OFF          8	/* %gs offset of the guest's cpu_number, or -1 */
#define VT_CFG_RING_HDRS        16	/* guest VA of ring header 0 */
#define VT_CFG_RING_RECS        24	/* guest VA of ring 0's first record */
#define VT_CFG_RING_BYTES       32	/* bytes of records per ring */
#define VT_CFG_RING_MASK        40	/* records per ring - 1 (power of two) */
#define VT_CFG_LIMIT            48	/* lossless: records per ring; overwrite: ~0 */
#define VT_CFG_NRINGS           56	/* u32 */
#define VT_CFG_DOORBELL         60	/* u32 */
#define VT_CFG_SIZE             256	/* the entry point follows the block */

/* Ring header, one per ring, VT_HDR_SIZE apart (read-write for the guest). */
#define VT_HDR_HEAD             0	/* reservations made: written by the stub */
#define VT_HDR_DROPPED          8	/* events the stub had to drop */
#define VT_HDR_TAIL             64	/* records consumed: written by the host */
#define VT_HDR_SIZE             128
#define VT_HDR_SHIFT            7

/* Record, VT_REC_SIZE bytes. */
#define VT_REC_TSC              0
#define VT_REC_FUNC             8	/* address of the traced slot */
#define VT_REC_PARENT           16	/* return address into the caller */
#define VT_REC_CPU_FLAGS        24	/* u16 cpu | u16 flags << 16 */
#define VT_REC_COMMIT           28	/* low 32 bits of (index + 1); 0 while written */
#define VT_REC_SIZE             32
#define VT_REC_SHIFT            5

#define VT_REC_FLAG_IRQS_OFF    0x1

#ifndef __ASSEMBLER__
#include <stdint.h>

struct vt_stub_config {
	uint64_t magic;
	uint64_t cpu_off;
	uint64_t ring_hdrs;
	uint64_t ring_recs;
	uint64_t ring_bytes;
	uint64_t ring_mask;
	uint64_t limit;
	uint32_t nrings;
	uint32_t doorbell_port;
	uint8_t reserved[VT_CFG_SIZE - 64];
};

struct vt_ring_hdr {
	uint64_t head;
	uint64_t dropped;
	uint64_t reserved0[6];
	uint64_t tail;			/* its own cache line: the host writes it */
	uint64_t reserved1[7];
};

struct vt_record {
	uint64_t tsc;
	uint64_t func;
	uint64_t parent;
	uint16_t cpu;
	uint16_t flags;
	uint32_t commit;
};

_Static_assert(sizeof(struct vt_stub_config) == VT_CFG_SIZE, "config block size");
_Static_assert(__builtin_offsetof(struct vt_stub_config, cpu_off) == VT_CFG_CPU_OFF, "cpu_off");
_Static_assert(__builtin_offsetof(struct vt_stub_config, ring_hdrs) == VT_CFG_RING_HDRS, "ring_hdrs");
_Static_assert(__builtin_offsetof(struct vt_stub_config, ring_recs) == VT_CFG_RING_RECS, "ring_recs");
_Static_assert(__builtin_offsetof(struct vt_stub_config, ring_bytes) == VT_CFG_RING_BYTES, "ring_bytes");
_Static_assert(__builtin_offsetof(struct vt_stub_config, ring_mask) == VT_CFG_RING_MASK, "ring_mask");
_Static_assert(__builtin_offsetof(struct vt_stub_config, limit) == VT_CFG_LIMIT, "limit");
_Static_assert(__builtin_offsetof(struct vt_stub_config, nrings) == VT_CFG_NRINGS, "nrings");
_Static_assert(__builtin_offsetof(struct vt_stub_config, doorbell_port) == VT_CFG_DOORBELL, "doorbell");
_Static_assert(sizeof(struct vt_ring_hdr) == VT_HDR_SIZE && (1 << VT_HDR_SHIFT) == VT_HDR_SIZE, "hdr size");
_Static_assert(__builtin_offsetof(struct vt_ring_hdr, dropped) == VT_HDR_DROPPED, "dropped");
_Static_assert(__builtin_offsetof(struct vt_ring_hdr, tail) == VT_HDR_TAIL, "tail");
_Static_assert(sizeof(struct vt_record) == VT_REC_SIZE && (1 << VT_REC_SHIFT) == VT_REC_SIZE, "record size");
_Static_assert(__builtin_offsetof(struct vt_record, func) == VT_REC_FUNC, "func");
_Static_assert(__builtin_offsetof(struct vt_record, parent) == VT_REC_PARENT, "parent");
_Static_assert(__builtin_offsetof(struct vt_record, cpu) == VT_REC_CPU_FLAGS, "cpu");
_Static_assert(__builtin_offsetof(struct vt_record, commit) == VT_REC_COMMIT, "commit");
#endif

#endif
