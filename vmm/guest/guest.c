// SPDX-License-Identifier: GPL-2.0
/* Each guest architecture's stub and facts (guest.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/trace.h"
#include "vmm/guest/guest.h"
#include "vmm/image/image.h"

/* The stubs, embedded at build time (guest-stub/<arch>/stub.mk). */
extern const uint8_t vt_stub_blob_x86_64[], vt_stub_blob_x86_64_end[];
extern const uint8_t vt_stub_blob_arm64[], vt_stub_blob_arm64_end[];
extern const uint8_t vt_stub_blob_arm64_1p[], vt_stub_blob_arm64_1p_end[];
extern const uint8_t vt_stub_blob_riscv64[], vt_stub_blob_riscv64_end[];
extern const uint8_t vt_stub_blob_loongarch64[], vt_stub_blob_loongarch64_end[];

/*
 * THREAD_SIZE is 16 KiB without KASAN on all four (arch/<arch>/include/asm/thread_info.h,
 * page_64_types.h; loongarch64: SZ_16K whatever the page size). loongarch64's stub reads
 * the constant timer (rdtime.d), the counter Linux's sched_clock uses there.
 */
/*
 * riscv64 (6.7+): head.S applies the early boot alternatives before
 * relocate_enable_mmu, and alternative.c is built with ftrace.
 */
static const char *const riscv64_before_mmu[] = { "apply_early_boot_alternatives", NULL };

#define GUEST_NOKASLR_WHY "the tracer places its slots at the kernel's link addresses"

static const struct guest_arch guest_arches[] = {
	[IMAGE_ARCH_X86_64] = { "x86_64", SLOT_ARCH_X86_64, vt_stub_blob_x86_64, vt_stub_blob_x86_64_end,
				"TSC", 16u << 10, 3, NULL, GUEST_NOKASLR_WHY },
	[IMAGE_ARCH_ARM64] = { "arm64", SLOT_ARCH_ARM64, vt_stub_blob_arm64, vt_stub_blob_arm64_end,
			       "CNTVCT", 16u << 10, 1, NULL, GUEST_NOKASLR_WHY },
	[IMAGE_ARCH_RISCV64] = { "riscv64", SLOT_ARCH_RISCV64, vt_stub_blob_riscv64, vt_stub_blob_riscv64_end,
				 "time", 16u << 10, 3, riscv64_before_mmu },
	[IMAGE_ARCH_LOONGARCH64] = { "loongarch64", SLOT_ARCH_LOONGARCH64, vt_stub_blob_loongarch64,
				     vt_stub_blob_loongarch64_end, "rdtime", 16u << 10, 2, NULL },
};

const struct guest_arch *guest_arch_of(int image_arch)
{
	if (image_arch < 0 || (size_t)image_arch >= sizeof(guest_arches) / sizeof(guest_arches[0]))
		return NULL;
	return guest_arches[image_arch].stub ? &guest_arches[image_arch] : NULL;
}

/* arm64's stub with its doorbell on its own page (guest-stub/arm64/stub.mk). */
static const struct guest_arch guest_arm64_one_page = {
	"arm64", SLOT_ARCH_ARM64, vt_stub_blob_arm64_1p, vt_stub_blob_arm64_1p_end, "CNTVCT", 16u << 10, 1, NULL,
	GUEST_NOKASLR_WHY
};

const struct guest_arch *guest_arch_one_page(int image_arch)
{
	return image_arch == IMAGE_ARCH_ARM64 ? &guest_arm64_one_page : NULL;
}

const struct slot_ops *guest_slot_ops(const struct guest_arch *g)
{
	return slot_ops_for(g->slot_arch);
}

int guest_stub_link(const struct guest_arch *g, uint8_t *copy, size_t size, uint64_t code_va, struct errbuf *err)
{
	struct vt_stub_config *c = (struct vt_stub_config *)(void *)copy;

	if (size <= VT_CFG_SIZE || size != guest_stub_size(g))
		return err_set(err, EINVAL, "a copy of %zu bytes of the %s stub, which is %zu", size, g->name,
			       guest_stub_size(g));
	if (c->ret_va < VT_CFG_SIZE || c->ret_va >= size)
		return err_set(err, EINVAL, "the embedded %s stub has no return hook (offset %#llx)", g->name,
			       (unsigned long long)c->ret_va);
	if (c->doorbell_pc < VT_CFG_SIZE || c->doorbell_pc >= size)
		return err_set(err, EINVAL, "the embedded %s stub has no doorbell (offset %#llx)", g->name,
			       (unsigned long long)c->doorbell_pc);
	if (c->chain_n && (c->chain_va < VT_CFG_SIZE || c->chain_tgt_va < VT_CFG_SIZE ||
			   c->chain_va + (uint64_t)c->chain_n * VT_CHAIN_STRIDE > size ||
			   c->chain_tgt_va + (uint64_t)c->chain_n * 8 > size))
		return err_set(err, EINVAL, "the embedded %s stub's %u chained entries are not inside it", g->name,
			       c->chain_n);
	c->ret_va += code_va;
	c->doorbell_pc += code_va;
	if (c->chain_n) {
		c->chain_va += code_va;
		c->chain_tgt_va += code_va;
	}
	return 0;
}

#define A64_MRS_X12_TPIDR_EL1	0xd538d08cu
#define A64_MRS_X12_SP_EL0	0xd538410cu

int guest_stub_cpu_in_task(const struct guest_arch *g, uint8_t *code, size_t size, struct errbuf *err)
{
	const struct vt_stub_config *c = (const struct vt_stub_config *)(void *)code;
	const uint32_t n = sizeof(c->cpu_mrs) / sizeof(c->cpu_mrs[0]);
	uint32_t want = A64_MRS_X12_TPIDR_EL1, to = A64_MRS_X12_SP_EL0, w;

	if (g->slot_arch != SLOT_ARCH_ARM64)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t off = c->cpu_mrs[i];

		if (off < VT_CFG_SIZE || off % 4 || off > size - 4 || (memcpy(&w, code + off, 4), w != want))
			return err_set(err, EINVAL, "the %s stub's read of its CPU's base %u is not where its "
				       "configuration says (offset %#x)", g->name, i, off);
	}
	for (uint32_t i = 0; i < n; i++)
		memcpy(code + c->cpu_mrs[i], &to, 4);
	return 0;
}

int guest_stub_linked(const struct guest_arch *g, uint64_t code_va, uint8_t **copy, size_t *size,
		      struct errbuf *err)
{
	int rc;

	*size = guest_stub_size(g);
	if (!(*copy = malloc(*size)))
		return err_set(err, ENOMEM, "out of memory for the stub");
	memcpy(*copy, g->stub, *size);
	if ((rc = guest_stub_link(g, *copy, *size, code_va, err))) {
		free(*copy);
		*copy = NULL;
	}
	return rc;
}
