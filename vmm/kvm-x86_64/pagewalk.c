// SPDX-License-Identifier: GPL-2.0
/*
 * A walk of the guest's page tables (SDM vol. 3 §4.5), used where the VMM
 * must touch memory the guest names by virtual address. Every table entry is
 * read through vm_gpa_ptr, so a hostile CR3 cannot take us outside guest
 * RAM. A write marks the leaf entry accessed and dirty, as the CPU would:
 * the guest's memory management trusts the dirty bit.
 */
#include <errno.h>
#include <string.h>

#include "vmm/kvm-x86_64/pagewalk.h"
#include "vmm/kvm-x86_64/regs.h"
#include "vmm/kvm/vm.h"

/*
 * Bits 63:47 (63:56 with LA57) all equal. The walk indexes with bits 47:12
 * (56:12) only, so a non-canonical address would alias a canonical one; the
 * CPU raises #GP for it instead (SDM vol. 1 §3.3.7.1).
 */
static int pagewalk_canonical(uint64_t gva, int levels)
{
	uint64_t top = gva >> (12 + 9 * levels - 1);

	return top == 0 || top == ~0ULL >> (12 + 9 * levels - 1);
}

int pagewalk_translate(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva,
		       int write, uint64_t *gpa)
{
	int levels = (sregs->cr4 & X86_CR4_LA57) ? 5 : 4;
	uint64_t table = sregs->cr3 & X86_PTE_ADDR;
	int read_only = 0;

	if (!(sregs->cr0 & X86_CR0_PG)) {
		*gpa = gva;
		return 0;
	}
	if (!pagewalk_canonical(gva, levels))
		return -EINVAL;
	for (int level = levels; level >= 1; level--) {
		unsigned shift = 12 + 9 * (level - 1);
		uint64_t *entry = vm_gpa_ptr(vm, table + ((gva >> shift) & 0x1ff) * 8, 8);
		uint64_t pte;

		if (!entry)
			return -EFAULT;
		pte = __atomic_load_n(entry, __ATOMIC_RELAXED);
		if (!(pte & X86_PTE_P))
			return -EFAULT;
		/*
		 * Rights count only for a complete translation: below a
		 * read-only entry, a missing one is still "not present"
		 * (#PF with P=0, SDM vol. 3 §4.7).
		 */
		read_only |= !(pte & X86_PTE_W);
		if (level == 1 || ((level == 2 || level == 3) && (pte & X86_PTE_PS))) {
			uint64_t mask = (1ULL << shift) - 1;

			if (write && read_only && (sregs->cr0 & X86_CR0_WP))
				return -EACCES;
			if (write && (pte & (X86_PTE_A | X86_PTE_D)) != (X86_PTE_A | X86_PTE_D))
				__atomic_fetch_or(entry, X86_PTE_A | X86_PTE_D, __ATOMIC_RELAXED);
			*gpa = ((pte & X86_PTE_ADDR) & ~mask) | (gva & mask);
			return 0;
		}
		table = pte & X86_PTE_ADDR;
	}
	return -EFAULT;
}

static int pagewalk_copy(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva,
			 uint8_t *buf, size_t len, int write)
{
	while (len) {
		size_t chunk = X86_PAGE_SIZE - (gva & (X86_PAGE_SIZE - 1));
		uint64_t gpa;
		uint8_t *p;

		if (chunk > len)
			chunk = len;
		if (pagewalk_translate(vm, sregs, gva, write, &gpa))
			return -EFAULT;
		p = vm_gpa_ptr(vm, gpa, chunk);
		if (!p)
			return -EFAULT;
		if (write)
			memcpy(p, buf, chunk);
		else
			memcpy(buf, p, chunk);
		gva += chunk;
		buf += chunk;
		len -= chunk;
	}
	return 0;
}

int pagewalk_check(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva, size_t len,
		   int write, uint64_t *fault)
{
	uint64_t va = gva, last = gva + len - 1, gpa;
	int rc;

	while (len) {
		rc = pagewalk_translate(vm, sregs, va, write, &gpa);
		if (!rc && !vm_gpa_ptr(vm, gpa, 1))
			rc = -EFAULT;
		if (rc) {
			*fault = va;
			return rc;
		}
		if ((va >> 12) == (last >> 12))
			break;
		va = (va | 0xfff) + 1;
	}
	return 0;
}

uint32_t pagewalk_pf_error(int rc, int write)
{
	return (rc == -EACCES ? X86_PF_P : 0) | (write ? X86_PF_W : 0);
}

int pagewalk_read(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva, void *buf, size_t len)
{
	return pagewalk_copy(vm, sregs, gva, buf, len, 0);
}

/*
 * All pages first: a store that faults on its second page must leave the
 * first unwritten, as the faulting instruction would.
 */
int pagewalk_write(struct vm *vm, const struct kvm_sregs *sregs, uint64_t gva, const void *buf, size_t len)
{
	uint64_t fault;

	if (pagewalk_check(vm, sregs, gva, len, 1, &fault))
		return -EFAULT;
	return pagewalk_copy(vm, sregs, gva, (uint8_t *)buf, len, 1);
}
