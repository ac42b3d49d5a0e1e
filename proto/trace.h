/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between the guest stub and the host: the stub's read-only
 * configuration block, the per-CPU ring headers and the event record.
 * Freestanding: included by the host (C) and by the stub (assembler, through
 * the VT_* offsets, which the _Static_asserts tie to the C layout).
 */
#ifndef PROTO_TRACE_H
#define PROTO_TRACE_H

#define VT_PROTO_VERSION        7
#define VT_STUB_MAGIC           0x3754535454524d56ULL	/* "VMRTTST7": version 7, the chained entries */

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
/*
 * Return hooks (version 4, --graph). With VT_CFG_GRAPH non-zero the stub
 * replaces a traced call's return address with vt_stub_return and keeps the
 * original on a shadow stack of the current task: VT_CFG_SHADOW_N tables of
 * VT_SHADOW_SIZE bytes at VT_CFG_SHADOW, found by the task pointer. A frame
 * whose return-address slot lies on the task's own kernel stack (task offset
 * VT_CFG_STACK_OFF, VT_CFG_STACK_SIZE bytes) below the slot of a new
 * call is dead (its task left it without returning) and is dropped.
 */
#define VT_CFG_GRAPH            120	/* u32, non-zero: hook returns */
/*
 * Arguments (version 5): with VT_CFG_ARGS non-zero (a client asked for
 * --args) an entry record holds the argument registers (VT_REC_ARGS, with
 * VT_REC_FLAG_ARGS); without, the x86_64, arm64 and riscv64 stubs leave
 * them out (the last two store them for --graph too, whose hook reloads
 * them, without the flag); the loongarch64 stub always records them. It
 * follows VT_CFG_GRAPH, so that one 64-bit test sees both; the host sets
 * it with the first client that asks, and it stays on, as VT_CFG_GRAPH.
 */
#define VT_CFG_ARGS             124	/* u32, non-zero: record the arguments */
#define VT_CFG_SHADOW           128	/* guest VA of the shadow stacks */
#define VT_CFG_SHADOW_MASK      136	/* number of shadow stacks - 1 (power of two) */
#define VT_CFG_STACK_OFF        144	/* task offset of the stack pointer (task_struct.stack), or -1 */
#define VT_CFG_STACK_SIZE       152	/* the kernel stack's size (THREAD_SIZE) */
#define VT_CFG_RETURN           160	/* guest VA of vt_stub_return (set by the host) */
/*
 * The guest VA of vt_stub_doorbell, where the QEMU host keeps a breakpoint
 * (the image holds its offset until the host fills the block; the stub
 * never reads it). On arm64 and riscv64 (issue 12) VT_CFG_CUR_OFF other
 * than -1 means "the current task is in the arch's register" (arm64:
 * sp_el0), and VT_CFG_CPU_OFF is the address of cpu_number, to which the
 * CPU's per-CPU offset (tpidr_el1) is added.
 */
#define VT_CFG_DOORBELL_PC      168
/*
 * Version 6, arm64: the offsets in the image of the stub's three `mrs x12,
 * tpidr_el1`, which read the base its CPU number is loaded from (plus
 * VT_CFG_CPU_OFF, cpu_number's address). Where VT_CFG_CPU_OFF is the
 * offset of thread_info.cpu in the task instead (as 6.3+ kernels read
 * raw_smp_processor_id()), the host makes them `mrs x12, sp_el0` before
 * the guest runs: the task's base, at no cost per call.
 */
#define VT_CFG_CPU_MRS          176	/* u32 x 3 */
/*
 * Version 7 (issue 37): the chained entries. A slot the guest's own
 * ftrace enabled (`call T`, T its ftrace_caller or an ops trampoline) and
 * vmmtrace holds calls chain entry k instead, VT_CHAIN_STRIDE bytes apart
 * from VT_CFG_CHAIN: the stub records the call as from the slot, then
 * jumps to T, the k-th of VT_CFG_CHAIN_N targets at VT_CFG_CHAIN_TGT, with
 * every register and the stack as the slot's call left them. The image
 * holds the two offsets until the host fills the block; 0: no chained
 * entries. Each stub carries k through its body in bits its saved flags
 * never use (x86_64: RFLAGS' upper half; arm64: x17's, DAIF; riscv64 and
 * loongarch64: bits 40-45 of sstatus or CRMD, clear of riscv64's UXL).
 */
#define VT_CFG_CHAIN            192	/* guest VA of chain entry 0 */
#define VT_CFG_CHAIN_TGT        200	/* guest VA of the targets (u64 each, the host's) */
#define VT_CFG_CHAIN_N          208	/* u32: how many entries */
#define VT_CHAIN_STRIDE         16
#define VT_CFG_SIZE             256	/* the entry point follows the block */

/* Ring header, one per ring, VT_HDR_SIZE apart (read-write for the guest). */
#define VT_HDR_HEAD             0	/* reservations made: written by the stub */
#define VT_HDR_DROPPED          8	/* events the stub had to drop */
#define VT_HDR_UNHOOKED         16	/* --graph: calls whose return could not be hooked */
/*
 * The stub's cache of this ring (version 5; the x86_64, arm64 and riscv64
 * stubs), taken from the configuration block at the ring's first event:
 * its first record, the record's CPU and flags word as every event there
 * starts it (the ring's CPU, VT_REC_FLAG_CTX | VT_REC_FLAG_TASK, commit 0),
 * and the limit, written last. A limit of 0 means empty: the host leaves
 * the cache zero wherever it lays rings out (their headers zeroed, and the
 * stub then fills it), and the stub fills it only when every field its
 * common path reads is known (guest-stub/x86_64/stub.S). The host never
 * reads it.
 */
#define VT_HDR_RECS             24
#define VT_HDR_CPU_FLAGS        32
#define VT_HDR_LIMIT            40
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
#define VT_REC_ARGS             64	/* version 3: the six argument registers at the call (VT_REC_FLAG_ARGS, with VT_CFG_ARGS) */
#define VT_REC_NARGS            6
#define VT_REC_RETVAL           64	/* exit records: the return value (rax) ... */
#define VT_REC_CALLTIME         72	/* ... and the TSC at the function's entry */
#define VT_REC_DEPTH            112	/* u32: hooked entries and exits, the shadow stack depth */
#define VT_REC_SIZE             128	/* 116 used; the stub leaves the rest as it was */
#define VT_REC_SHIFT            7

/* Record flags: what the stub saw at the call (ftrace's TRACE_FLAG_* meaning). */
#define VT_REC_FLAG_IRQS_OFF        0x1
#define VT_REC_FLAG_NEED_RESCHED    0x2	/* the task's need-resched thread flag */
#define VT_REC_FLAG_PREEMPT_RESCHED 0x4	/* the CPU's preempt-count resched bit */
#define VT_REC_FLAG_CTX             0x8	/* VT_REC_PREEMPT holds the preempt count */
#define VT_REC_FLAG_TASK            0x10	/* task, pid and comm were read */
#define VT_REC_FLAG_ARGS            0x20	/* VT_REC_ARGS holds the argument registers */
#define VT_REC_FLAG_EXIT            0x40	/* a return: func returned to parent (VT_REC_RETVAL) */
#define VT_REC_FLAG_HOOKED          0x80	/* an entry whose return will be recorded */
#define VT_REC_MIGR_SHIFT           8	/* bits 8..11: migration_disabled, at most 15 */
#define VT_REC_MIGR_MASK            0xf00
#define VT_REC_FLAGS_VALID          0xfff

/*
 * A shadow stack: the owning task (0: free), the number of frames in use,
 * the owner's kernel stack when its frames were pushed (a task_struct
 * reused by a new task comes with another stack: the frames are the dead
 * task's), then VT_SHADOW_FRAMES frames of the return-address slot's
 * address (arm64, riscv64: sp at the call), the original return address,
 * the traced slot and the entry TSC. Only the stub reads them, and the
 * host when it moves them (tracer_rings_move).
 *
 * VT_SHADOW_REACH belongs to the table's place, not its owner: how many
 * tables from this one on a task whose hash leads here may own (at most
 * VT_SHADOW_PROBE). A stub raises it (atomically: others may raise it at
 * once) before it claims a table that far away and never lowers it, so a
 * lookup tries that many tables, not all VT_SHADOW_PROBE of them, and a
 * task whose table was given back at depth 0 finds it free at the first.
 * The host recomputes it when it moves the tables.
 */
#define VT_SHADOW_TASK          0
#define VT_SHADOW_DEPTH         8
#define VT_SHADOW_STACK         16
#define VT_SHADOW_REACH         24
#define VT_SHADOW_FRAME0        32
#define VT_FRAME_SLOT           0
#define VT_FRAME_RET            8
#define VT_FRAME_FUNC           16
#define VT_FRAME_TSC            24
#define VT_FRAME_SIZE           32
#define VT_FRAME_SHIFT          5
#define VT_SHADOW_FRAMES        127
#define VT_SHADOW_SIZE          4096
#define VT_SHADOW_SHIFT         12
#define VT_SHADOW_PROBE         16	/* tables tried for a task, from its hash on */

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
	uint32_t graph;
	uint32_t args;
	uint64_t shadow;
	uint64_t shadow_mask;
	uint64_t stack_off;
	uint64_t stack_size;
	uint64_t ret_va;
	uint64_t doorbell_pc;
	uint32_t cpu_mrs[3];
	uint32_t pad0;
	uint64_t chain_va;
	uint64_t chain_tgt_va;
	uint32_t chain_n;
	uint32_t pad1;
	uint8_t reserved[VT_CFG_SIZE - 216];
};

/* Where a stub looks for task's shadow stack first: table (hash + i) & mask, i < VT_SHADOW_PROBE. */
static inline uint64_t vt_shadow_hash(uint64_t task)
{
	return (task * 0x9e3779b97f4a7c15ULL) >> 40;
}

struct vt_ring_hdr {
	uint64_t head;
	uint64_t dropped;
	uint64_t unhooked;
	uint64_t stub_recs;		/* the stub's cache (VT_HDR_RECS): the host never reads it */
	uint64_t stub_cpu_flags;
	uint64_t stub_limit;
	uint64_t reserved0[2];
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
	uint64_t args[VT_REC_NARGS];	/* x86_64: rdi, rsi, rdx, rcx, r8, r9; exits: return value, entry TSC */
	uint32_t depth;
	uint32_t reserved[3];
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
_Static_assert(__builtin_offsetof(struct vt_stub_config, graph) == VT_CFG_GRAPH, "graph");
_Static_assert(__builtin_offsetof(struct vt_stub_config, args) == VT_CFG_ARGS && VT_CFG_ARGS == VT_CFG_GRAPH + 4, "args");
_Static_assert(__builtin_offsetof(struct vt_stub_config, shadow) == VT_CFG_SHADOW, "shadow");
_Static_assert(__builtin_offsetof(struct vt_stub_config, shadow_mask) == VT_CFG_SHADOW_MASK, "shadow_mask");
_Static_assert(__builtin_offsetof(struct vt_stub_config, stack_off) == VT_CFG_STACK_OFF, "stack_off");
_Static_assert(__builtin_offsetof(struct vt_stub_config, stack_size) == VT_CFG_STACK_SIZE, "stack_size");
_Static_assert(__builtin_offsetof(struct vt_stub_config, ret_va) == VT_CFG_RETURN, "ret_va");
_Static_assert(__builtin_offsetof(struct vt_stub_config, doorbell_pc) == VT_CFG_DOORBELL_PC, "doorbell_pc");
_Static_assert(__builtin_offsetof(struct vt_stub_config, cpu_mrs) == VT_CFG_CPU_MRS, "cpu_mrs");
_Static_assert(__builtin_offsetof(struct vt_stub_config, chain_va) == VT_CFG_CHAIN &&
	       __builtin_offsetof(struct vt_stub_config, chain_tgt_va) == VT_CFG_CHAIN_TGT &&
	       __builtin_offsetof(struct vt_stub_config, chain_n) == VT_CFG_CHAIN_N, "chain");
_Static_assert(VT_SHADOW_FRAME0 + VT_SHADOW_FRAMES * VT_FRAME_SIZE <= VT_SHADOW_SIZE &&
	       (1 << VT_SHADOW_SHIFT) == VT_SHADOW_SIZE && (1 << VT_FRAME_SHIFT) == VT_FRAME_SIZE, "shadow stack");
_Static_assert(sizeof(struct vt_ring_hdr) == VT_HDR_SIZE && (1 << VT_HDR_SHIFT) == VT_HDR_SIZE, "hdr size");
_Static_assert(__builtin_offsetof(struct vt_ring_hdr, dropped) == VT_HDR_DROPPED, "dropped");
_Static_assert(__builtin_offsetof(struct vt_ring_hdr, unhooked) == VT_HDR_UNHOOKED, "unhooked");
_Static_assert(__builtin_offsetof(struct vt_ring_hdr, stub_recs) == VT_HDR_RECS &&
	       __builtin_offsetof(struct vt_ring_hdr, stub_cpu_flags) == VT_HDR_CPU_FLAGS &&
	       __builtin_offsetof(struct vt_ring_hdr, stub_limit) == VT_HDR_LIMIT, "the stub's cache");
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
_Static_assert(VT_REC_RETVAL == VT_REC_ARGS && VT_REC_CALLTIME == VT_REC_ARGS + 8, "exit fields");
_Static_assert(__builtin_offsetof(struct vt_record, depth) == VT_REC_DEPTH, "depth");
#else /* __ASSEMBLER__ */

/*
 * SHADOW_HASH, where a stub starts looking for a task's shadow stack: the
 * same Fibonacci hashing as vt_shadow_hash() above, which the host uses
 * when it moves the stacks (tests/interop/shadow-hash.sh runs each against
 * it). x86_64: the task is in r10, h gets the hash, rdx is clobbered;
 * arm64, riscv64 and loongarch64: h gets the hash of task, using k.
 */
#if defined(__x86_64__)
.macro SHADOW_HASH h
	movq	%r10, \h
	movabsq	$0x9e3779b97f4a7c15, %rdx
	imulq	%rdx, \h
	shrq	$40, \h
.endm
#elif defined(__aarch64__)
.macro SHADOW_HASH h, task, k
	movz	\k, #0x7c15
	movk	\k, #0x7f4a, lsl #16
	movk	\k, #0x79b9, lsl #32
	movk	\k, #0x9e37, lsl #48
	mul	\h, \task, \k
	lsr	\h, \h, #40
.endm
#elif defined(__riscv)
.macro SHADOW_HASH h, task, k
	li	\k, 0x9e3779b97f4a7c15
	mul	\h, \task, \k
	srli	\h, \h, 40
.endm
#elif defined(__loongarch__)
.macro SHADOW_HASH h, task, k
	li.d	\k, 0x9e3779b97f4a7c15
	mul.d	\h, \task, \k
	srli.d	\h, \h, 40
.endm
#endif

#endif /* __ASSEMBLER__ */

#endif
