// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 KVM host's stub: in the kernel's own image, where
 * vmm/guest/stub-place.c finds room for it (the padding at the end of
 * its text; docs/STUB-PLACEMENT.md), as the QEMU host places it; its rings
 * in the init data the guest frees after the hand-over, then in the region
 * arch_vm_load reserved for them in the device tree, reached through the
 * kernel's linear map. The host writes guest RAM directly: no vCPU exists
 * yet when the stub goes in.
 *
 * A kernel without such padding gets the one-page stub in _end's guard
 * page, mapped in the kernel's own tables (vmm/guest/a64-guard.c): before
 * the boot up to 6.8, at a breakpoint of the host's own at
 * __primary_switched from 6.9 on (arch_vcpu_host_break).
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/paging.h"
#include "proto/trace.h"
#include "vmm/guest/guest.h"
#include "vmm/guest/stub-place.h"
#include "vmm/image/elf.h"
#include "vmm/image/image.h"
#include "vmm/image/symtab.h"
#include "vmm/kvm-arm64/a64.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/stub.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"
#include "vmm/util/log.h"

/* TTBR1_EL1 and TCR_EL1 (op0 3, op1 0, CRn 2, CRm 0, op2 1 and 2). */
#define A64_TTBR1_EL1 ARM64_SYS_REG(3, 0, 2, 0, 1)
#define A64_TCR_EL1   ARM64_SYS_REG(3, 0, 2, 0, 2)
#define A64_1G        (1ULL << 30)

/* An arm64 Image's physical addresses count from where RAM starts (vmm/image/image-raw.c). */
uint64_t arch_image_base(const struct vm *vm)
{
	(void)vm;
	return A64_RAM;
}

int arch_stub_in_image(void)
{
	return 1;
}

/* The places this host offers: the rings' region to move to (when traced), nothing past _end. */
static int a64_place(struct vm *vm, const struct elf_image *elf, const struct symtab *syms, struct guest_place *pl,
		     struct errbuf *err)
{
	struct a64_state *s = vm->arch_state;
	return guest_stub_place(IMAGE_ARCH_ARM64, elf, syms, s->area_size != 0, s->past_end_size, pl, err);
}

uint64_t *a64_table(void *opaque, uint64_t pa, uint64_t bytes)
{
	return vm_gpa_ptr(opaque, pa, bytes);
}

/*
 * No padding below _etext: the one-page stub in _end's guard page, at the
 * start of the region past the image that arch_vm_load reserved, its
 * tables after it (vmm/guest/a64-guard.c); *code_pa image-relative.
 */
static int a64_guard_install(struct vm *vm, const struct elf_image *elf, const struct symtab *syms,
			     const struct guest_place *pl, uint64_t *code_pa, uint64_t *data_pa, struct errbuf *err)
{
	struct a64_state *s = vm->arch_state;
	uint64_t last = guest_sym(syms, guest_place_syms(IMAGE_ARCH_ARM64)->data_end);
	/* The stub's page, then up to three pages of tables (up to 6.8), or the page alone. */
	uint64_t need = guest_sym(syms, "__pi_early_map_kernel") ? 1ULL << s->page_shift : 4 * 4096;

	if (!last || elf_vaddr_to_paddr(elf, last - 1, code_pa))
		return err_set(err, ENOENT, "the stub's place past the image is not known");
	*code_pa += 1 + (pl->code - last);
	if (A64_RAM + *code_pa < s->past_end_pa || A64_RAM + *code_pa + need > s->past_end_pa + s->past_end_size)
		return err_set(err, ERANGE, "the stub's place past the image (%#llx) is not the region the device tree "
			       "reserves (%#llx)", (unsigned long long)(A64_RAM + *code_pa),
			       (unsigned long long)s->past_end_pa);
	if (elf_vaddr_to_paddr(elf, pl->data, data_pa))
		return err_set(err, ENOENT, "the stub's rings are outside the loaded kernel");
	return a64_guard_plan(&s->guard, syms, elf, s->page_shift, s->va_bits, pl->code, *code_pa, *code_pa + 4096,
			      A64_RAM, a64_table, vm, err);
}

int arch_stub_room(struct vm *vm, const struct elf_image *elf, const struct symtab *syms, uint64_t *bytes,
		   struct errbuf *err)
{
	struct guest_place pl;
	int rc = a64_place(vm, elf, syms, &pl, err);

	*bytes = rc ? 0 : pl.data_end - pl.data;
	return rc;
}

int arch_stub_install(struct vm *vm, const struct elf_image *elf, const struct symtab *syms,
		      uint64_t data_size, struct stub_region *r, struct errbuf *err)
{
	struct a64_state *s = vm->arch_state;
	const struct guest_arch *g;
	struct guest_place pl;
	uint64_t code_pa, data_pa, ms_pa, text = guest_sym(syms, "_stext"), ms = guest_sym(syms, "memstart_addr");
	uint8_t *copy;
	size_t size;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = a64_place(vm, elf, syms, &pl, err)) ||
	    (rc = guest_stub_image(IMAGE_ARCH_ARM64, &pl, data_size, s->area_size != 0, &g, &size, err)))
		return rc;
	/* For the guard page's tables and the rings' region (arch_rings_area): VA_BITS from _stext. */
	if (text >> 63)
		s->va_bits = 65 - (unsigned)__builtin_clzll(~text | 1);
	if (pl.where == GUEST_CODE_GUARD) {
		if ((rc = a64_guard_install(vm, elf, syms, &pl, &code_pa, &data_pa, err)))
			return rc;
	} else if (pl.where == GUEST_CODE_PAST_END) {
		return err_set(err, EOPNOTSUPP, "an arm64 stub past the image's end");	/* riscv64's place */
	} else {
		if (elf_vaddr_to_paddr(elf, pl.code, &code_pa) || pl.data < pl.code)
			return err_set(err, ENOENT, "the stub's place is outside the loaded kernel");
		data_pa = code_pa + (pl.data - pl.code);
	}
	r->code = vm_gpa_ptr(vm, A64_RAM + code_pa, size);
	r->data = vm_gpa_ptr(vm, A64_RAM + data_pa, data_size);
	if (!r->code || !r->data)
		return err_set(err, ERANGE, "the stub's place is outside guest RAM");
	if ((rc = guest_stub_linked(g, pl.code, &copy, &size, err)))
		return rc;
	memcpy(r->code, copy, size);
	free(copy);
	__builtin___clear_cache((char *)r->code, (char *)r->code + size);
	memset(r->data, 0, data_size);
	r->code_va = pl.code;
	r->code_gpa = r->gpa = code_pa;
	r->code_size = size;
	r->data_va = pl.data;
	r->data_size = data_size;
	r->data_must_move = pl.early;
	s->stub_cfg = r->code;
	/*
	 * The full stub rings at its doorbell, a breakpoint: KVM exits at no
	 * cost to the calls that do not reach it. The one-page stub's full
	 * ring waits in the stub for the host's consumer instead.
	 */
	s->doorbell_bp = pl.where == GUEST_CODE_PADDING ? ((struct vt_stub_config *)r->code)->doorbell_pc : 0;
	/* For the rings' region (arch_rings_area): where the linear map starts. */
	if (ms && !elf_vaddr_to_paddr(elf, ms, &ms_pa))
		s->memstart_pa = ms_pa;
	log_info("kvm: the stub at %#llx (%zu bytes%s), its rings at %#llx (%llu of %llu bytes)%s",
		 (unsigned long long)pl.code, size, pl.where == GUEST_CODE_PADDING ? "" :
		 pl.where == GUEST_CODE_GUARD ? s->guard.bp ? ", one page, in _end's guard page, mapped when the kernel "
		 "has built its tables" : ", one page, in _end's guard page, mapped by tables added to swapper_pg_dir" :
		 ", one page",
		 (unsigned long long)pl.data, (unsigned long long)data_size, (unsigned long long)(pl.data_end - pl.data),
		 s->doorbell_bp ? "" : "; a full ring waits in the stub for the host to drain it");
	return 0;
}

/* Guest memory: nothing of the host's own to free. */
void stub_region_free(struct stub_region *r)
{
	memset(r, 0, sizeof(*r));
}

/* TTBR1_EL1 and TCR_EL1's T1SZ and TG1 give each vCPU's walk. */
int a64_translate_any(struct vm *vm, uint64_t va, uint64_t *pa)
{
	static const unsigned tg1_shift[] = { 0, 14, 12, 16 };

	for (unsigned i = 0; i < vm->ncpus; i++) {
		uint64_t ttbr, tcr;
		unsigned shift, bits;

		if (a64_get_reg(&vm->vcpus[i], A64_TTBR1_EL1, &ttbr) || a64_get_reg(&vm->vcpus[i], A64_TCR_EL1, &tcr))
			continue;
		shift = tg1_shift[tcr >> 30 & 3];
		bits = 64 - (unsigned)(tcr >> 16 & 63);
		if (shift && !a64_translate(a64_table, vm, ttbr & A64_DESC_OA_48 & ~1ULL, shift, bits, va, pa))
			return 0;
	}
	return -ENOENT;
}

/*
 * arm64's linear map (arch/arm64/include/asm/memory.h): VA = (PA -
 * memstart_addr) | PAGE_OFFSET, PAGE_OFFSET = -(1 << VA_BITS), or -(1 <<
 * 52) on an LPA2 CPU under a 52-bit kernel. memstart_addr, set in
 * arm64_memblock_init (from setup_arch, before the hand-over), is read
 * from guest memory when kallsyms names it, else taken as RAM's start
 * rounded down to 1 GiB (what that function computes without KASLR with 4
 * KiB pages). Either way the answer must translate back to the region
 * through the kernel's own tables.
 */
int arch_rings_area(struct vm *vm, uint8_t **host, uint64_t *va, uint64_t *size, struct errbuf *err)
{
	struct a64_state *s = vm->arch_state;
	const int64_t *ms = s->memstart_pa ? vm_gpa_ptr(vm, A64_RAM + s->memstart_pa, sizeof(*ms)) : NULL;
	uint64_t start = ms ? (uint64_t)*ms : A64_RAM & ~(A64_1G - 1), pa = 0;

	if (!s->area_size)
		return -ENOENT;
	if (!s->va_bits)
		return err_set(err, ENOENT, "the kernel's _stext is unknown: no VA_BITS");
	if (start > s->area_pa || start & 0xfff || s->area_pa - start + s->area_size > (1ULL << (s->va_bits - 1)))
		return err_set(err, ERANGE, "memstart_addr %#llx does not place the ring region %#llx in the linear map",
			       (unsigned long long)start, (unsigned long long)s->area_pa);
	if (!(*host = vm_gpa_ptr(vm, s->area_pa, s->area_size)))
		return err_set(err, ERANGE, "the ring region is outside guest RAM");
	*size = s->area_size;
	for (unsigned bits = s->va_bits;; bits = 52) {
		*va = (s->area_pa - start) | (~0ULL << bits);
		if (!a64_translate_any(vm, *va, &pa) && pa == s->area_pa)
			return 0;
		if (bits == 52)
			break;
	}
	return err_set(err, EFAULT, "the guest's VA %#llx is not the ring region %#llx (memstart_addr %#llx%s)",
		       (unsigned long long)*va, (unsigned long long)s->area_pa, (unsigned long long)start,
		       ms ? "" : ", assumed");
}
