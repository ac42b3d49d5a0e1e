// SPDX-License-Identifier: GPL-2.0
/*
 * The KVM host's places for the x86_64 stub (vmm/guest/x86-stub.h
 * installs it): its code and rings in VMM memory in the 32-bit hole,
 * outside RAM and the E820 map, so the kernel neither allocates nor maps
 * them; its page tables in low RAM, a setup_data node of the zero page,
 * where the kernel's direct map covers them (its W+X check walks them).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/x86_64/stub-map.h"
#include "vmm/guest/x86-stub.h"
#include "vmm/kvm/stub.h"
#include "vmm/kvm/vm.h"
#include "vmm/kvm-x86_64/layout.h"
#include "vmm/kvm-x86_64/regs.h"

/* The hole's region: the code's 64 KiB at its start, the rings from 2 MiB on. */
#define STUB_HOLE_CODE 0ULL
#define STUB_HOLE_DATA 0x200000ULL

static void *kvm_stub_gpa_ptr(void *opaque, uint64_t gpa, uint64_t len)
{
	return vm_gpa_ptr(opaque, gpa, len);
}

/* Every vCPU is still to be created: memory holds what KVM runs. */
static int kvm_stub_write_code(void *opaque, uint64_t gpa, const void *bytes, size_t len, struct errbuf *err)
{
	uint8_t *to = vm_gpa_ptr(opaque, gpa, len);

	if (!to)
		return err_set(err, EFAULT, "the stub's code at %#llx is not in the VM's memory", (unsigned long long)gpa);
	memcpy(to, bytes, len);
	return 0;
}

int arch_stub_install(struct vm *vm, const struct elf_image *elf, const struct symtab *syms,
		      uint64_t data_size, struct stub_region *r, struct errbuf *err)
{
	uint64_t room = LAYOUT_STUB_GPA_END - LAYOUT_STUB_GPA - STUB_HOLE_DATA;
	struct x86_stub_target tg = {
		.opaque = vm, .gpa_ptr = kvm_stub_gpa_ptr, .write_code = kvm_stub_write_code,
		.boot_params = vm->boot_arg, .tables = LAYOUT_STUB_TABLES,
		.code = LAYOUT_STUB_GPA + STUB_HOLE_CODE, .data = LAYOUT_STUB_GPA + STUB_HOLE_DATA,
	};
	uint64_t size;
	uint8_t *host;
	int rc;

	memset(r, 0, sizeof(*r));
	data_size = (data_size + X86_PAGE_SIZE_2M - 1) & ~(X86_PAGE_SIZE_2M - 1);
	if (data_size > room)
		return err_set(err, E2BIG, "trace buffers need %llu MiB, room for %llu MiB (lower --buffer-size)",
			       (unsigned long long)(data_size >> 20), (unsigned long long)(room >> 20));
	size = STUB_HOLE_DATA + data_size;
	host = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (host == MAP_FAILED)
		return err_set(err, errno, "cannot map %llu MiB for the stub", (unsigned long long)(size >> 20));
	if ((rc = vm_add_region(vm, LAYOUT_STUB_GPA, size, host, err))) {
		munmap(host, size);
		return rc;
	}
	tg.code_host = host + STUB_HOLE_CODE;
	tg.data_host = host + STUB_HOLE_DATA;
	tg.data_room = data_size;
	if ((rc = x86_stub_install(&tg, elf, syms, data_size, r, err))) {
		/* No vCPU exists yet to touch the slot KVM keeps for it: the boot fails. */
		munmap(host, size);
		return rc;
	}
	r->host = host;
	r->size = size;
	r->gpa = LAYOUT_STUB_GPA;
	return 0;
}

void stub_region_free(struct stub_region *r)
{
	if (r->host)
		munmap(r->host, r->size);
	memset(r, 0, sizeof(*r));
}

/* A bzImage's addresses are the guest's own. */
uint64_t arch_image_base(const struct vm *vm)
{
	(void)vm;
	return 0;
}

/* The stub's region is the hole's: room as asked, and nothing moves. */
int arch_stub_in_image(void)
{
	return 0;
}

int arch_stub_room(struct vm *vm, const struct elf_image *elf, const struct symtab *syms, uint64_t *bytes,
		   struct errbuf *err)
{
	(void)vm, (void)elf, (void)syms, (void)err;
	*bytes = 0;
	return -EOPNOTSUPP;
}

int arch_rings_area(struct vm *vm, uint8_t **host, uint64_t *va, uint64_t *size, struct errbuf *err)
{
	(void)vm, (void)host, (void)va, (void)size, (void)err;
	return -ENOENT;
}
