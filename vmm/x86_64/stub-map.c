// SPDX-License-Identifier: GPL-2.0
/*
 * Maps the stub region (VMM memory in the 32-bit hole) into every guest
 * address space at once by filling level3_kernel_pgt[509] before the
 * guest's first instruction, as arch/x86_64/stub-map.h lays it out.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/x86_64/stub-map.h"
#include "proto/trace.h"
#include "vmm/x86_64/layout.h"
#include "vmm/x86_64/regs.h"
#include "vmm/image/elf.h"
#include "vmm/kvm/stub.h"
#include "vmm/image/symtab.h"
#include "vmm/kvm/vm.h"

static int stub_find_l3(struct vm *vm, const struct elf_image *elf, const struct symtab *syms,
			uint64_t **l3, struct errbuf *err)
{
	const struct symbol *s = symtab_find_name(syms, "level3_kernel_pgt");
	uint64_t pa;

	if (!s)
		return err_set(err, ENOENT, "symbol level3_kernel_pgt not found: cannot map the tracing stub");
	if (elf_vaddr_to_paddr(elf, s->addr, &pa) || !(*l3 = vm_gpa_ptr(vm, pa, 4096)) || (pa & 0xfff))
		return err_set(err, EINVAL, "level3_kernel_pgt at 0x%llx is not in loaded kernel memory",
			       (unsigned long long)s->addr);
	if ((*l3)[X86_STUB_L3_INDEX])
		return err_set(err, EBUSY, "level3_kernel_pgt[%d] is in use (0x%llx): no room for the stub",
			       X86_STUB_L3_INDEX, (unsigned long long)(*l3)[X86_STUB_L3_INDEX]);
	return 0;
}

int arch_stub_install(struct vm *vm, const struct elf_image *elf, const struct symtab *syms,
		      uint64_t data_size, struct stub_region *r, struct errbuf *err)
{
	size_t code_size = vt_stub_blob_end - vt_stub_blob;
	uint64_t *l3 = NULL, l3e;
	int rc;

	memset(r, 0, sizeof(*r));
	data_size = (data_size + X86_PAGE_SIZE_2M - 1) & ~(X86_PAGE_SIZE_2M - 1);
	if (code_size > X86_STUB_CODE_MAX)
		return err_set(err, E2BIG, "stub image is %zu bytes, room for %llu", code_size,
			       (unsigned long long)X86_STUB_CODE_MAX);
	if (data_size > LAYOUT_STUB_GPA_END - LAYOUT_STUB_GPA - X86_STUB_DATA)
		return err_set(err, E2BIG, "trace buffers need %llu MiB, room for %llu MiB (lower --buffer-size)",
			       (unsigned long long)(data_size >> 20),
			       (unsigned long long)((LAYOUT_STUB_GPA_END - LAYOUT_STUB_GPA - X86_STUB_DATA) >> 20));
	if ((rc = stub_find_l3(vm, elf, syms, &l3, err)))
		return rc;
	r->size = X86_STUB_DATA + data_size;
	r->host = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r->host == MAP_FAILED) {
		r->host = NULL;
		return err_set(err, errno, "cannot map %llu MiB for the stub", (unsigned long long)(r->size >> 20));
	}
	r->gpa = LAYOUT_STUB_GPA;
	r->code = r->host + X86_STUB_CODE;
	r->code_va = X86_STUB_CODE_VA;
	r->code_gpa = r->gpa + X86_STUB_CODE;
	r->code_size = code_size;
	r->data = r->host + X86_STUB_DATA;
	r->data_va = X86_STUB_DATA_VA;
	r->data_size = data_size;
	memcpy(r->code, vt_stub_blob, code_size);
	/* The block holds the doorbell's address, as on every host (KVM answers the port write, not it). */
	((struct vt_stub_config *)r->code)->doorbell_pc += r->code_va;
	l3e = x86_stub_map(r->host, r->gpa, code_size, data_size);
	if (!l3e)
		rc = err_set(err, E2BIG, "the stub's %zu bytes and %llu MiB of rings do not fit its map", code_size,
			     (unsigned long long)(data_size >> 20));
	else
		rc = vm_add_region(vm, r->gpa, r->size, r->host, err);
	if (rc) {
		stub_region_free(r);
		return rc;
	}
	l3[X86_STUB_L3_INDEX] = l3e;
	return 0;
}

void stub_region_free(struct stub_region *r)
{
	if (r->host)
		munmap(r->host, r->size);
	memset(r, 0, sizeof(*r));
}
