/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The x86_64 stub's install, the same on every host (arch/x86_64/stub-map.h
 * has the bytes): level3_kernel_pgt[509] found free in the loaded kernel,
 * the page directory and table built in guest RAM the kernel keeps in its
 * direct map (a setup_data node), the stub's code linked and written, its
 * rings zeroed, and the entry written before startup_64 runs (its
 * __startup_64 fixes entries 510 and 511 only). Where each part goes is
 * the host's choice, as is how code is written.
 */
#ifndef VMM_GUEST_X86_STUB_H
#define VMM_GUEST_X86_STUB_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/host/host.h"
#include "vmm/util/error.h"

struct elf_image;
struct symtab;

struct x86_stub_target {
	void *opaque;
	/* Host view of guest RAM (the kernel, boot_params, the tables); NULL outside it. */
	void *(*gpa_ptr)(void *opaque, uint64_t gpa, uint64_t len);
	/* Writes the stub's code at gpa: KVM into its memory, QEMU through the gdbstub. */
	int (*write_code)(void *opaque, uint64_t gpa, const void *bytes, size_t len, struct errbuf *err);
	/* The boot_params startup_64 receives (its rsi). */
	uint64_t boot_params;
	/*
	 * X86_STUB_TABLES_SIZE bytes, page-aligned, with X86_SETUP_HDR bytes
	 * below them for the node's header: RAM in the guest's E820 map, clear
	 * of everything the kernel is given.
	 */
	uint64_t tables;
	/* X86_STUB_CODE_MAX bytes, page-aligned, and its host view: memory the kernel never uses. */
	uint64_t code;
	uint8_t *code_host;
	/* data_room bytes, 2 MiB-aligned, and their host view: memory the kernel never uses. */
	uint64_t data;
	uint8_t *data_host;
	uint64_t data_room;
};

/*
 * Installs the stub at tg's places with data_size bytes of rings (rounded
 * up to 2 MiB) and fills r (its host and size fields are the host's).
 */
int x86_stub_install(const struct x86_stub_target *tg, const struct elf_image *elf, const struct symtab *syms,
		     uint64_t data_size, struct stub_region *r, struct errbuf *err);

#endif
