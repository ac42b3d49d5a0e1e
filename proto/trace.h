/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between the guest stub and the host: the stub's read-only
 * configuration block, the per-CPU ring headers and the event record.
 * Freestanding: included by the host (C) and by the stub (assembler, through
 * the VT_* offsets, which the _Static_asserts tie to the C layout).
 */
#ifndef PROTO_TRACE_H
#define PROTO_TRACE_H

#define VT_PROTO_VERSION        3
#define VT_STUB_MAGIC           0x3354535454524d56ULL	/* "VMRTTST3": 128-byte records with task, context and arguments */

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
/*
 * Task and context (version 2). Each is -1 when unknown, and the stub then
 * leaves the fields it would give zero. The task's members are read only
 * when VT_CFG_CUR_OFF is known; the host sets it only with VT_CFG_PID_OFF and
 * VT_CFG_COMM_OFF (from the kernel's BTF), so that a task pointer is never
 * followed to unknown offsets.
 */
#define VT_CFG_CUR_OFF          64	/* %gs offset of the current task pointer */
#define VT_CFG_PC_OFF           72	/* %gs offset of the 32-bit preempt count */
#define VT_CFG_PID_OFF          80	/* task offset of pid (s32) */
#define VT_CFG_COMM_OFF         88	/* task offset of comm (16 bytes) */
#define VT_CFG_TIF_OFF          96	/* task offset of the thread flags (u64) */
#define VT_CFG_TIF_MASK         104	/* their need-resched bit(s) */
#define VT_CFG_MIGR_OFF         112	/* task offset of migration_disabled (u16) */
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
#define VT_REC_TASK             32	/* the current task pointer, 0 when unknown */
#define VT_REC_PREEMPT          40	/* u32 preempt count (arch bits removed) */
#define VT_REC_PID              44	/* s32 pid of the task */
#define VT_REC_COMM             48	/* the task's comm, 16 bytes, as found */
#define VT_REC_ARGS             64	/* version 3: the six argument registers at the call */
#define VT_REC_NARGS            6
#define VT_REC_SIZE             128	/* 112 used; the stub leaves the rest as it was */
#define VT_REC_SHIFT            7

/* Record flags: what the stub saw at the call (ftrace's TRACE_FLAG_* meaning). */
#define VT_REC_FLAG_IRQS_OFF        0x1
#define VT_REC_FLAG_NEED_RESCHED    0x2	/* the task's need-resched thread flag */
#define VT_REC_FLAG_PREEMPT_RESCHED 0x4	/* the CPU's preempt-count resched bit */
#define VT_REC_FLAG_CTX             0x8	/* VT_REC_PREEMPT holds the preempt count */
#define VT_REC_FLAG_TASK            0x10	/* task, pid and comm were read */
#define VT_REC_FLAG_ARGS            0x20	/* VT_REC_ARGS holds the argument registers */
#define VT_REC_MIGR_SHIFT           8	/* bits 8..11: migration_disabled, at most 15 */
#define VT_REC_MIGR_MASK            0xf00
#define VT_REC_FLAGS_VALID          0xf3f

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
	uint64_t cur_off;
	uint64_t pc_off;
	uint64_t pid_off;
	uint64_t comm_off;
	uint64_t tif_off;
	uint64_t tif_mask;
	uint64_t migr_off;
	uint8_t reserved[VT_CFG_SIZE - 120];
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
	uint64_t task;
	uint32_t preempt;
	int32_t pid;
	char comm[16];
	uint64_t args[VT_REC_NARGS];	/* x86_64: rdi, rsi, rdx, rcx, r8, r9 */
	uint64_t reserved[2];
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
_Static_assert(__builtin_offsetof(struct vt_stub_config, cur_off) == VT_CFG_CUR_OFF, "cur_off");
_Static_assert(__builtin_offsetof(struct vt_stub_config, pc_off) == VT_CFG_PC_OFF, "pc_off");
_Static_assert(__builtin_offsetof(struct vt_stub_config, pid_off) == VT_CFG_PID_OFF, "pid_off");
_Static_assert(__builtin_offsetof(struct vt_stub_config, comm_off) == VT_CFG_COMM_OFF, "comm_off");
_Static_assert(__builtin_offsetof(struct vt_stub_config, tif_off) == VT_CFG_TIF_OFF, "tif_off");
_Static_assert(__builtin_offsetof(struct vt_stub_config, tif_mask) == VT_CFG_TIF_MASK, "tif_mask");
_Static_assert(__builtin_offsetof(struct vt_stub_config, migr_off) == VT_CFG_MIGR_OFF, "migr_off");
_Static_assert(sizeof(struct vt_ring_hdr) == VT_HDR_SIZE && (1 << VT_HDR_SHIFT) == VT_HDR_SIZE, "hdr size");
_Static_assert(__builtin_offsetof(struct vt_ring_hdr, dropped) == VT_HDR_DROPPED, "dropped");
_Static_assert(__builtin_offsetof(struct vt_ring_hdr, tail) == VT_HDR_TAIL, "tail");
_Static_assert(sizeof(struct vt_record) == VT_REC_SIZE && (1 << VT_REC_SHIFT) == VT_REC_SIZE, "record size");
_Static_assert(__builtin_offsetof(struct vt_record, func) == VT_REC_FUNC, "func");
_Static_assert(__builtin_offsetof(struct vt_record, parent) == VT_REC_PARENT, "parent");
_Static_assert(__builtin_offsetof(struct vt_record, cpu) == VT_REC_CPU_FLAGS, "cpu");
_Static_assert(__builtin_offsetof(struct vt_record, commit) == VT_REC_COMMIT, "commit");
_Static_assert(__builtin_offsetof(struct vt_record, task) == VT_REC_TASK, "task");
_Static_assert(__builtin_offsetof(struct vt_record, preempt) == VT_REC_PREEMPT, "preempt");
_Static_assert(__builtin_offsetof(struct vt_record, pid) == VT_REC_PID, "pid");
_Static_assert(__builtin_offsetof(struct vt_record, comm) == VT_REC_COMM, "comm");
_Static_assert(__builtin_offsetof(struct vt_record, args) == VT_REC_ARGS, "args");
#endif

#endif
