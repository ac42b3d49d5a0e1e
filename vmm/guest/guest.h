/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vmmtrace knows of a guest kernel's architecture and puts into it,
 * whichever host runs it: the stub image embedded for it, its slot
 * encodings, the counter its stub reads and the kernel stack size its
 * --graph shadow stacks check calls against. The tracer and every host
 * read these here, not from each other.
 */
#ifndef VMM_GUEST_GUEST_H
#define VMM_GUEST_GUEST_H

#include <stddef.h>
#include <stdint.h>

#include "arch/slot.h"
#include "vmm/util/error.h"

struct guest_arch {
	const char *name;		/* as image_arch_name() says it */
	enum slot_arch slot_arch;
	/* The stub image (guest-stub/<arch>/), its config block at offset 0. */
	const uint8_t *stub, *stub_end;
	/* The counter the stub reads for timestamps, for messages. */
	const char *clock;
	/* THREAD_SIZE without KASAN: a call is on its task's stack when within it. */
	uint64_t thread_size;
	/* TIF_NEED_RESCHED's bit in thread_info.flags (asm/thread_info.h: a #define, not in BTF). */
	unsigned tif_need_resched;
	/*
	 * Traceable functions the kernel may run before its MMU is on, where a
	 * call to the stub's virtual address cannot return: never patched
	 * (NULL-terminated; NULL: none).
	 */
	const char *const *before_mmu;
	/*
	 * Why a traced boot adds nokaslr: the kernel, booted as a host boots
	 * it, would move itself from the link addresses the slots, the stub
	 * and the rings are placed by (arm64: a seed from the device tree's
	 * kaslr-seed or from RNDR; x86_64: its decompressor, from RDRAND and
	 * the TSC); NULL where it does not move (riscv64 and loongarch64 as
	 * vmmtrace boots them; loongarch64 through QEMU's ELF boot, where a word
	 * the kernel does not know would reach init's arguments).
	 */
	const char *nokaslr_why;
};

/* By IMAGE_ARCH_* (vmm/image/image.h); NULL for an architecture vmmtrace has no stub for. */
const struct guest_arch *guest_arch_of(int image_arch);
/*
 * The arch's stub built to fit one page, its doorbell on the stub's own
 * page (slower under QEMU), for a kernel that has no more room for it
 * (arm64: _end's guard page); NULL where there is no such build.
 */
const struct guest_arch *guest_arch_one_page(int image_arch);
/* Its slot encodings. */
const struct slot_ops *guest_slot_ops(const struct guest_arch *g);

/*
 * A copy of g's stub image (size bytes), linked to run at code_va: the
 * addresses its configuration block holds of its return hook and its
 * doorbell (offsets into the image until then) checked to lie inside it
 * and made guest VAs. Every host installs such a copy.
 */
int guest_stub_link(const struct guest_arch *g, uint8_t *copy, size_t size, uint64_t code_va, struct errbuf *err);

/*
 * A malloc'ed copy of g's stub linked at code_va (guest_stub_link), for a
 * host to write into the guest its own way; *size its length.
 */
int guest_stub_linked(const struct guest_arch *g, uint64_t code_va, uint8_t **copy, size_t *size,
		      struct errbuf *err);

/*
 * Makes the installed stub at code (size bytes, not yet run) read its CPU
 * number in the current task, at VT_CFG_CPU_OFF, where the kernel keeps
 * it in thread_info (arm64 6.3+): arm64's three reads of the per-CPU base
 * become reads of sp_el0 (VT_CFG_CPU_MRS). Nothing to do elsewhere
 * (riscv64's stub always reads it there).
 */
int guest_stub_cpu_in_task(const struct guest_arch *g, uint8_t *code, size_t size, struct errbuf *err);

static inline size_t guest_stub_size(const struct guest_arch *g)
{
	return (size_t)(g->stub_end - g->stub);
}

#endif
