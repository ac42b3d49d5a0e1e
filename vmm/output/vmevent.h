/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VM events (`--event`): what the VMM itself sees of the guest (port and
 * MMIO accesses that reach it, MSR accesses it intercepts, its exits), as
 * struct ring_event records that travel with the function events through
 * the same ordering buffer, named and printed like the host kernel's KVM
 * tracepoints (arch/x86/kvm/trace.h, include/trace/events/kvm.h) so that
 * they read at sight. Pure code: names, encoding and text; no KVM (which
 * of them a trace records, and which MSRs: vmm/trace/vmev-select.h).
 *
 * A VM event in a struct ring_event: flags has RING_EV_VM, the kind in
 * bits 8..14 and kind-specific bits in 0..7; func is the guest RIP; seq
 * counts the vCPU's VM events; parent and arg carry the payload.
 */
#ifndef VMM_OUTPUT_VMEVENT_H
#define VMM_OUTPUT_VMEVENT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/output/event.h"

enum vmev_kind {
	VMEV_PIO = 1,		/* kvm:pio  parent: port | size << 16 | count << 32; arg: value */
	VMEV_MMIO,		/* kvm:mmio parent: gpa; arg: value; low bits: len */
	VMEV_MSR,		/* kvm:msr  parent: index | caller's low half << 32; arg: value */
	VMEV_EXIT,		/* kvm:exit parent: KVM_EXIT_* reason */
	VMEV_HYPERCALL,		/* kvm:hypercall parent: call | result's low half << 32; arg: first argument
				   (arm64: the SMCCC function ID, x0 after it, x1; x86 hands none over) */
	VMEV_CPUID,		/* kvm:cpuid  a boot record per leaf: func: function | index << 32;
				   parent: eax | ebx << 32; arg: ecx | edx << 32 */
	VMEV_NKINDS,
};

#define VMEV_MASK(kind)		(1u << (kind))
#define VMEV_FLAG_WRITE		0x01	/* pio, mmio, msr: a write */
#define VMEV_FLAG_GP		0x02	/* msr: the access raised #GP */
#define VMEV_FLAG_IRQS_OFF	0x04	/* RFLAGS.IF was clear */
#define VMEV_FLAG_SMC		0x01	/* hypercall: made with SMC, not HVC (arm64) */
#define VMEV_LEN_SHIFT		4	/* mmio: len (1..8) in bits 4..7 */

/* The event's "group:name" (kvm:pio), or NULL for a kind out of range. */
const char *vmev_name(unsigned kind);
/* Encoding. */
static inline int vmev_is(const struct ring_event *ev)
{
	return !!(ev->flags & RING_EV_VM);
}
static inline unsigned vmev_kind_of(const struct ring_event *ev)
{
	return (ev->flags >> 8) & 0x7f;
}
static inline uint16_t vmev_flags(unsigned kind, unsigned bits)
{
	return (uint16_t)(RING_EV_VM | (kind & 0x7f) << 8 | (bits & 0xff));
}

/*
 * kvm:msr: the MSR, and the guest function that called the one that made
 * the access (native_write_msr's caller), 0 when not known. The caller is
 * kept as its low 32 bits: x86_64 kernel text lies in the top 2 GiB, where
 * the high half is all ones.
 */
static inline uint32_t vmev_msr_index(const struct ring_event *ev)
{
	return (uint32_t)ev->parent;
}
static inline uint64_t vmev_msr_caller(const struct ring_event *ev)
{
	uint32_t low = (uint32_t)(ev->parent >> 32);

	return low ? 0xffffffff00000000ull | low : 0;
}
static inline uint64_t vmev_msr_pack(uint32_t index, uint64_t caller)
{
	return index | ((caller >> 32) == 0xffffffff ? caller << 32 : 0);
}

/* kvm:hypercall: the call (arm64: SMCCC function ID) and what it returned (x0's low 32 bits). */
static inline uint32_t vmev_hypercall_nr(const struct ring_event *ev)
{
	return (uint32_t)ev->parent;
}
static inline uint32_t vmev_hypercall_ret(const struct ring_event *ev)
{
	return (uint32_t)(ev->parent >> 32);
}
static inline uint64_t vmev_hypercall_pack(uint32_t nr, uint32_t ret)
{
	return nr | (uint64_t)ret << 32;
}

/*
 * The text after "TIMESTAMP: " for a VM event, in the host tracepoint's
 * layout: "kvm_pio: pio_write at 0x3f8 size 1 count 1 val 0x41". Returns
 * the length snprintf would have written.
 */
int vmev_format(const struct ring_event *ev, char *buf, size_t len);

#endif
