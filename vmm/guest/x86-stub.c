// SPDX-License-Identifier: GPL-2.0
/* The x86_64 stub's install on any host (x86-stub.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/paging.h"
#include "arch/x86_64/stub-map.h"
#include "proto/trace.h"
#include "vmm/guest/guest.h"
#include "vmm/guest/x86-stub.h"
#include "vmm/image/elf.h"
#include "vmm/image/image.h"
#include "vmm/image/symtab.h"

/* level3_kernel_pgt's host view in the loaded kernel, with entry 509 free. */
static int x86_find_l3(const struct x86_stub_target *tg, const struct elf_image *elf, const struct symtab *syms,
		       uint64_t **l3, struct errbuf *err)
{
	const struct symbol *s = symtab_find_name(syms, "level3_kernel_pgt");
	uint64_t pa;

	if (!s)
		return err_set(err, ENOENT, "symbol level3_kernel_pgt not found: cannot map the tracing stub");
	if (elf_vaddr_to_paddr(elf, s->addr, &pa) || (pa & 0xfff) || !(*l3 = tg->gpa_ptr(tg->opaque, pa, 4096)))
		return err_set(err, EINVAL, "level3_kernel_pgt at %#llx is not in loaded kernel memory",
			       (unsigned long long)s->addr);
	if ((*l3)[X86_STUB_L3_INDEX])
		return err_set(err, EBUSY, "level3_kernel_pgt[%d] is in use (%#llx): no room for the stub",
			       X86_STUB_L3_INDEX, (unsigned long long)(*l3)[X86_STUB_L3_INDEX]);
	return 0;
}

/*
 * The stub linked at its VA, written where tg says. Its doorbell is an
 * out to VT_DOORBELL_PORT: the KVM host takes the port's exit, the QEMU
 * host a breakpoint on it (doorbell_pc), where no device decodes the port.
 */
static int x86_write_stub(const struct x86_stub_target *tg, struct errbuf *err)
{
	uint8_t *copy;
	size_t size;
	int rc = guest_stub_linked(guest_arch_of(IMAGE_ARCH_X86_64), X86_STUB_CODE_VA, &copy, &size, err);

	if (!rc) {
		((struct vt_stub_config *)copy)->doorbell_port = VT_DOORBELL_PORT;
		rc = tg->write_code(tg->opaque, tg->code, copy, size, err);
	}
	free(copy);
	return rc;
}

int x86_stub_install(const struct x86_stub_target *tg, const struct elf_image *elf, const struct symtab *syms,
		     uint64_t data_size, struct stub_region *r, struct errbuf *err)
{
	size_t code_size = guest_stub_size(guest_arch_of(IMAGE_ARCH_X86_64));
	uint8_t *bp, *hdr;
	uint64_t *l3 = NULL, l3e;
	int rc;

	data_size = (data_size + X86_PAGE_SIZE_2M - 1) & ~(X86_PAGE_SIZE_2M - 1);
	if (code_size > X86_STUB_CODE_MAX)
		return err_set(err, E2BIG, "the embedded x86_64 stub is %zu bytes, room for %llu", code_size,
			       (unsigned long long)X86_STUB_CODE_MAX);
	if (data_size > tg->data_room || data_size > X86_STUB_DATA_MAX)
		return err_set(err, E2BIG, "the stub's rings need %llu MiB, room for %llu MiB (lower --buffer-size)",
			       (unsigned long long)(data_size >> 20),
			       (unsigned long long)((tg->data_room < X86_STUB_DATA_MAX ? tg->data_room : X86_STUB_DATA_MAX) >> 20));
	if ((rc = x86_find_l3(tg, elf, syms, &l3, err)))
		return rc;
	if (!(bp = tg->gpa_ptr(tg->opaque, tg->boot_params, 4096)))
		return err_set(err, EFAULT, "the boot parameters at %#llx are not in guest RAM",
			       (unsigned long long)tg->boot_params);
	if (!(hdr = tg->gpa_ptr(tg->opaque, tg->tables - X86_SETUP_HDR, X86_SETUP_HDR + X86_STUB_TABLES_SIZE)))
		return err_set(err, EFAULT, "the stub's page tables at %#llx are not in guest RAM",
			       (unsigned long long)tg->tables);
	l3e = x86_stub_map(hdr + X86_SETUP_HDR, tg->tables, tg->code, code_size, tg->data, data_size);
	if (!l3e)
		return err_set(err, E2BIG, "the stub's %zu bytes and %llu MiB of rings do not fit its map", code_size,
			       (unsigned long long)(data_size >> 20));
	if ((rc = x86_write_stub(tg, err)))
		return rc;
	x86_setup_data_link(bp, hdr, tg->tables - X86_SETUP_HDR, X86_STUB_TABLES_SIZE);
	memset(tg->data_host, 0, data_size);
	r->gpa = tg->code;
	r->code = tg->code_host;
	r->code_va = X86_STUB_CODE_VA;
	r->code_gpa = tg->code;
	r->code_size = code_size;
	r->data = tg->data_host;
	r->data_va = X86_STUB_DATA_VA;
	r->data_size = data_size;
	l3[X86_STUB_L3_INDEX] = l3e;
	return 0;
}
