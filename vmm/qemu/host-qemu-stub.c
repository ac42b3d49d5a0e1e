// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU host's stub: its install through the gdbstub where
 * vmm/guest/stub-place.c finds room in an arm64 or riscv64 image
 * (docs/STUB-PLACEMENT.md), arm64's guard page (vmm/guest/a64-guard.c)
 * and its check through the gdbstub, and, on arm64, the region the rings
 * move to at the hand-over. x86_64's own
 * placement is host-qemu-x86.c, loongarch64's hq_la64_install (the low
 * 2 MiB, its data in the region the device tree reserves).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/paging.h"
#include "proto/trace.h"
#include "vmm/guest/guest.h"
#include "vmm/guest/stub-place.h"
#include "vmm/image/elf.h"
#include "vmm/image/image.h"
#include "vmm/image/symtab.h"
#include "vmm/qemu/host-qemu-int.h"
#include "vmm/qemu/la64-boot.h"
#include "vmm/util/log.h"
#include "vmm/util/util.h"

const struct qguest host_qemu_guests[] = {
	[IMAGE_ARCH_X86_64] = { 7 * 8, RET_ON_STACK, 8 * 8, 0 },
	[IMAGE_ARCH_ARM64] = { 31 * 8, 30 * 8, 11 * 8, 62500 },
	[IMAGE_ARCH_RISCV64] = { 2 * 8, 1 * 8, 9 * 8, 10000 },
	[IMAGE_ARCH_LOONGARCH64] = { 3 * 8, 1 * 8, 24 * 8, 100000 },
};

/* Bytes of padding below the one-page stub that take its doorbell (bti j; br x15) off its page. */
#define HQ_DOORBELL_ROOM 16

/* The stub's places in the image (vmm/guest/stub-place.c), given what this host reserved. */
static int hq_place(struct host_qemu *hq, const struct elf_image *elf, const struct symtab *syms,
		    struct guest_place *pl, struct errbuf *err)
{
	return guest_stub_place(hq->image_arch, elf, syms, hq->area_size != 0, hq->past_end_size, pl, err);
}

int hq_stub_room(struct host *h, const struct elf_image *elf, const struct symtab *syms, uint64_t *bytes,
			struct errbuf *err)
{
	struct guest_place pl;
	int rc;

	if (hq_of(h)->image_arch == IMAGE_ARCH_X86_64)
		return host_qemu_x86_room(hq_of(h), bytes, err);
	if (hq_of(h)->image_arch == IMAGE_ARCH_LOONGARCH64) {
		*bytes = hq_of(h)->area_size;
		return *bytes ? 0 : err_set(err, ENOENT, "the loongarch64 guest was booted without a region for the "
					     "stub's data");
	}
	rc = hq_place(hq_of(h), elf, syms, &pl, err);
	if (!rc)
		*bytes = pl.data_end - pl.data;
	return rc;
}

/*
 * The stub is in place (rc 0), linked: its doorbell gets a breakpoint
 * (but a one-page stub's that waits in its own page instead: a breakpoint
 * there would slow every call), as does the guest's end (machine_restart,
 * _power_off, _halt).
 */
static int hq_stub_finish(struct host_qemu *hq, const struct symtab *syms, struct stub_region *r, int rc,
			  struct errbuf *err)
{
	struct vt_stub_config *c = (struct vt_stub_config *)r->code;

	if (rc)
		return rc;
	hq->doorbell = hq->doorbell_waits ? 0 : c->doorbell_pc;
	hq->stub_cfg = r->code;
	hq->end_bp[0] = guest_sym(syms, "machine_restart");
	hq->end_bp[1] = guest_sym(syms, "machine_power_off");
	hq->end_bp[2] = guest_sym(syms, "machine_halt");
	return hq_sync_breaks(hq, err);
}

/* The stub g, linked at its VA code_va, written at gpa through the gdbstub. */
static int hq_write_stub(struct host_qemu *hq, const struct guest_arch *g, uint64_t gpa, uint64_t code_va,
			 struct errbuf *err)
{
	uint8_t *copy;
	size_t size;
	int rc = guest_stub_linked(g, code_va, &copy, &size, err);

	if (!rc)
		rc = qvm_write_code(hq->q, gpa, copy, size, err);
	free(copy);
	return rc;
}

/*
 * loongarch64 (docs/STUB-PLACEMENT.md): the stub in the low 2 MiB of RAM,
 * which Linux reserves for ever (memblock_init) and which every slot of a
 * kernel smaller than 126 MiB reaches with bl (±128 MiB: the image starts
 * at 2 MiB); its rings and shadow stacks in the region the device tree
 * this host wrote reserves (la64-boot.h). The kernel reaches both through
 * its direct-mapped window DMW1 (VA = 0x9000... | PA), RWX at PLV0 from
 * kernel_entry on, with no page table and no permission any boot phase
 * changes: nothing moves at the hand-over, and no padding of the image is
 * needed.
 */
static int hq_la64_install(struct host_qemu *hq, const struct symtab *syms, uint64_t data_size,
			   struct stub_region *r, struct errbuf *err)
{
	size_t size = guest_stub_size(guest_arch_of(hq->image_arch));
	uint64_t code_va = LA64_DMW1 | LA64_STUB_PA, data_va = LA64_DMW1 | hq->area_pa;
	int rc;

	memset(r, 0, sizeof(*r));
	if (size <= VT_CFG_SIZE || size > LA64_STUB_ROOM)
		return err_set(err, EINVAL, "the embedded loongarch64 stub is %zu bytes", size);
	if (!hq->area_size)
		return err_set(err, ENOENT, "the loongarch64 guest was booted without a region for the stub's data");
	if (data_size > hq->area_size)
		return err_set(err, E2BIG, "the stub's rings need %llu bytes, the region has %llu",
			       (unsigned long long)data_size, (unsigned long long)hq->area_size);
	r->code = qvm_gpa_ptr(hq->q, LA64_STUB_PA, size);
	r->data = qvm_gpa_ptr(hq->q, hq->area_pa, data_size);
	if (!r->code || !r->data)
		return err_set(err, ERANGE, "the stub's place is outside guest RAM");
	if ((rc = hq_write_stub(hq, guest_arch_of(hq->image_arch), LA64_STUB_PA, code_va, err)))
		return rc;
	memset(r->data, 0, data_size);
	/* The tracer's guest-physical addresses are the image's (hq_real): the same places in its terms. */
	r->code_va = code_va;
	r->code_gpa = r->gpa = (uint64_t)((int64_t)(LA64_STUB_PA - hq->q->arch.ram_gpa) - hq->bias);
	r->code_size = size;
	r->data_va = data_va;
	r->data_size = data_size;
	log_info("qemu: the stub at %#llx (%zu bytes), its rings and shadow stacks at %#llx (%llu of the %llu bytes "
		 "the device tree reserves)", (unsigned long long)code_va, size, (unsigned long long)data_va,
		 (unsigned long long)data_size, (unsigned long long)hq->area_size);
	return hq_stub_finish(hq, syms, r, 0, err);
}

static uint64_t *hq_table(void *opaque, uint64_t pa, uint64_t bytes)
{
	return qvm_gpa_ptr(((struct host_qemu *)opaque)->q, pa, bytes);
}

/* arm64 6.9 on, at guard.bp: the guard page's entry in the kernel's tables, then read back through vCPU cpu. */
int hq_guard_map_now(struct host_qemu *hq, unsigned cpu, struct errbuf *err)
{
	const uint8_t *stub = qvm_gpa_ptr(hq->q, hq->guard.pa, 16);
	uint8_t back[16];
	unsigned bits;
	int rc;

	if ((rc = a64_guard_map_now(&hq->guard, hq_table, hq, &bits, err)))
		return rc;
	/* Through the vCPU's own translation: the stub's first bytes must read back at _end. */
	if (!stub || (rc = qvm_read_virt_on(hq->q, cpu, hq->guard.va, back, sizeof(back), err)))
		return stub ? rc : err_set(err, ERANGE, "the stub's guard page is outside guest RAM");
	if (memcmp(stub, back, sizeof(back)))
		return err_set(err, EFAULT, "the stub's guard page at _end does not read back as the stub through the "
			       "kernel's tables (%u-bit VAs)", bits);
	log_info("qemu: the stub's guard page at %#llx mapped in the kernel's own tables (%u-bit VAs, %u KiB pages)",
		 (unsigned long long)hq->guard.va, bits, 1u << (hq->guard.page_shift - 10));
	return 0;
}

/*
 * The one-page arm64 stub's doorbell (`bti j; br x15`, vt_stub_doorbell) on
 * its own page when the padding reaches below the stub's page: QEMU runs
 * every instruction of a page that holds a breakpoint as a translation
 * block of its own, so a doorbell sharing the stub's page makes every
 * traced call several times slower. The stub reaches it through its
 * configuration block (VT_CFG_DOORBELL_PC). Without such padding the
 * stub's own vt_stub_wait stays there: a full ring waits for the host's
 * consumer, with no breakpoint (hq->doorbell_waits).
 */
#define A64_BTI_J	0xd503249fu	/* the stub branches here with br: a landing pad on BTI kernels */
#define A64_BR_X15	0xd61f01e0u

static int hq_doorbell_off_page(struct host_qemu *hq, const struct elf_image *elf, const struct symtab *syms,
				uint8_t *code_host, uint64_t code, uint64_t code_pa, struct errbuf *err)
{
	struct vt_stub_config *c = (struct vt_stub_config *)code_host;
	uint8_t insns[8];
	int rc;

	if (!guest_is_padding(elf, syms, code - HQ_DOORBELL_ROOM, HQ_DOORBELL_ROOM)) {
		log_info("qemu: no padding below the stub's page: a full ring waits in the stub for the host to drain it");
		hq->doorbell_waits = 1;
		return 0;
	}
	for (unsigned i = 0; i < 4; i++) {
		insns[i] = (uint8_t)(A64_BTI_J >> 8 * i);
		insns[4 + i] = (uint8_t)(A64_BR_X15 >> 8 * i);
	}
	if ((rc = qvm_write_code(hq->q, hq_real(hq, code_pa - sizeof(insns)), insns, sizeof(insns), err)))
		return rc;
	c->doorbell_pc = code - sizeof(insns);
	log_info("qemu: the stub's doorbell at %#llx, below its page", (unsigned long long)c->doorbell_pc);
	return 0;
}

int hq_stub_install(struct host *h, const struct elf_image *elf, const struct symtab *syms,
			   uint64_t data_size, struct stub_region *r, struct errbuf *err)
{
	struct host_qemu *hq = hq_of(h);
	const struct guest_arch *g;
	size_t size;
	const struct guest_place_syms *ps = guest_place_syms(hq->image_arch);
	struct guest_place pl;
	uint64_t code, data, data_end, code_pa, data_pa;
	enum guest_code_place place;
	int early, rc;

	if (hq->image_arch == IMAGE_ARCH_X86_64)
		return hq_stub_finish(hq, syms, r, host_qemu_x86_install(hq, elf, syms, data_size, r, err), err);
	if (hq->image_arch == IMAGE_ARCH_LOONGARCH64)
		return hq_la64_install(hq, syms, data_size, r, err);
	memset(r, 0, sizeof(*r));
	if ((rc = hq_place(hq, elf, syms, &pl, err)) ||
	    (rc = guest_stub_image(hq->image_arch, &pl, data_size, hq->area_size != 0, &g, &size, err)))
		return rc;
	code = pl.code, data = pl.data, data_end = pl.data_end, early = pl.early, place = pl.where;
	if (hq->image_arch == IMAGE_ARCH_ARM64) {
		/* For the rings' later area (hq_rings_area) and the guard page's tables. */
		uint64_t ms = guest_sym(syms, "memstart_addr"), text = guest_sym(syms, "_stext"), pa;

		if (ms && !elf_vaddr_to_paddr(elf, ms, &pa))
			hq->memstart_pa = pa;
		if (text >> 63)
			hq->va_bits = 65 - (unsigned)__builtin_clzll(~text | 1);
	}
	if (place == GUEST_CODE_PADDING_PAGE)
		log_info("qemu: %llu bytes of padding below %s, not %u: the one-page stub goes in its last page",
			 (unsigned long long)(guest_sym(syms, ps->code_end) - code), ps->code_end,
			 STUB_CODE_ROOM);
	/* The image is contiguous in physical memory, [_end, ...) after it too (riscv64's rings, arm64's guard). */
	if (place != GUEST_CODE_PADDING && place != GUEST_CODE_PADDING_PAGE) {
		uint64_t last = guest_sym(syms, ps->data_end);
		/* The guard page: the stub, then its page tables; past the end: the stub, then its rings. */
		uint64_t need = place != GUEST_CODE_GUARD ? STUB_CODE_ROOM + data_size :
				guest_sym(syms, "__pi_early_map_kernel") ? 1ULL << hq->a64_page_shift : 4 * 4096;

		if (!last || elf_vaddr_to_paddr(elf, last - 1, &code_pa))
			return err_set(err, ENOENT, "the stub's place past the image is not known");
		code_pa += 1 + (code - last);
		if (hq_real(hq, code_pa) < hq->past_end_pa ||
		    hq_real(hq, code_pa) + need > hq->past_end_pa + hq->past_end_size)
			return err_set(err, ERANGE, "the stub's place past the image (%#llx) is not the region the device "
				       "tree reserves (%#llx)", (unsigned long long)hq_real(hq, code_pa),
				       (unsigned long long)hq->past_end_pa);
		if (place == GUEST_CODE_PAST_END) {
			log_info("qemu: no padding below %s (no STRICT_KERNEL_RWX): the stub goes past the image's end, "
				 "in its last 2 MiB block", ps->code_end);
		} else {
			if ((rc = a64_guard_plan(&hq->guard, syms, elf, hq->a64_page_shift, hq->va_bits, code, code_pa,
						 code_pa + 4096, hq_real(hq, 0), hq_table, hq, err)))
				return rc;
			if (elf_vaddr_to_paddr(elf, data, &data_pa))
				return err_set(err, ENOENT, "the stub's rings are outside the loaded kernel");
			log_info("qemu: no %u bytes of padding below %s: the stub goes in the guard page at %s, mapped "
				 "by %s; a full ring waits in the stub for the host to drain it", STUB_CODE_ROOM,
				 ps->code_end, ps->code_guard, hq->guard.bp ?
				 "the host in the kernel's own tables once it has built them" :
				 "page tables vmmtrace adds to swapper_pg_dir");
			hq->doorbell_waits = 1;
		}
	} else if (elf_vaddr_to_paddr(elf, code, &code_pa) || data < code) {
		return err_set(err, ENOENT, "the stub's place is outside the loaded kernel");
	}
	if (place != GUEST_CODE_GUARD)
		data_pa = code_pa + (data - code);
	r->code = hq_gpa_ptr(h, code_pa, size);
	r->data = hq_gpa_ptr(h, data_pa, data_size);
	if (!r->code || !r->data)
		return err_set(err, ERANGE, "the stub's place is outside guest RAM");
	if ((rc = hq_write_stub(hq, g, hq_real(hq, code_pa), code, err)))
		return rc;
	if (place == GUEST_CODE_PADDING_PAGE && (rc = hq_doorbell_off_page(hq, elf, syms, r->code, code, code_pa, err)))
		return rc;
	/* Whatever the tracer asks for: the guard page's breakpoint is the host's own. */
	if (hq->guard.bp && (rc = hq_sync_breaks(hq, err)))
		return rc;
	memset(r->data, 0, data_size);
	r->code_va = code;
	r->code_gpa = code_pa;
	r->code_size = size;
	r->data_va = data;
	r->data_size = data_size;
	r->data_must_move = early;
	r->gpa = code_pa;
	/* For the rings' later area (hq_rings_area). */
	if (hq->image_arch == IMAGE_ARCH_RISCV64) {
		uint64_t base = guest_sym(syms, "phys_ram_base"), pa;

		if (base && !elf_vaddr_to_paddr(elf, base, &pa))
			hq->memstart_pa = pa;
	}
	log_info("qemu: the stub at %#llx (%zu bytes), its rings at %#llx (%llu of %llu bytes)",
		 (unsigned long long)code, size, (unsigned long long)data, (unsigned long long)data_size,
		 (unsigned long long)(data_end - data));
	return hq_stub_finish(hq, syms, r, 0, err);
}

/*
 * arm64's linear map (arch/arm64/include/asm/memory.h, 6.1): VA = PA -
 * memstart_addr + PAGE_OFFSET, PAGE_OFFSET = -(1 << VA_BITS); the kernel
 * image sits 128 MiB (the modules) above -(1 << (VA_BITS - 1)), which
 * gives VA_BITS from _stext. memstart_addr is set in arm64_memblock_init
 * (from setup_arch): read at the hand-over, after it. A kernel whose
 * kallsyms lacks it (no KALLSYMS_ALL: Debian's) gets what
 * arm64_memblock_init computes without KASLR: the start of RAM rounded
 * down to ARM64_MEMSTART_ALIGN (1 GiB with 4 KiB pages). Either way the
 * answer is checked through the guest's own page tables: a marker written
 * into the region must read back at the VA through the gdbstub.
 */
/*
 * A marker written into the region reads back at va through the gdbstub:
 * 0, -EFAULT, or -ENOENT when QEMU is gone (its end is what the run
 * reports). Through each vCPU's page tables in turn: the one at the
 * hand-over has the kernel's, but on riscv64 it need not be vCPU 0
 * (OpenSBI lets the harts draw lots for the boot), and a hart not yet
 * started has no translation.
 */
static int hq_area_at(struct host_qemu *hq, uint8_t *host, uint64_t va, struct errbuf *err)
{
	uint8_t mark[16], back[16];
	int rc = -EFAULT;

	for (unsigned i = 0; i < sizeof(mark); i++)
		mark[i] = (uint8_t)(util_now_ns() >> (i % 8 * 8)) ^ (uint8_t)(0xa5 + i);
	memcpy(host, mark, sizeof(mark));
	for (unsigned cpu = 0; cpu < hq->h.ncpus && rc == -EFAULT; cpu++) {
		int r = qvm_read_virt_on(hq->q, cpu, va, back, sizeof(back), err);

		rc = r && hq_gone(hq, r) ? -ENOENT : !r && !memcmp(mark, back, sizeof(mark)) ? 0 : -EFAULT;
	}
	memset(host, 0, sizeof(mark));
	return rc;
}

/*
 * riscv64's linear map (arch/riscv/mm/init.c, 6.1): VA = PA - phys_ram_base
 * + PAGE_OFFSET, where PAGE_OFFSET depends on the MMU mode the kernel chose
 * at boot (sv57, sv48 or sv39: the largest the hart has) and phys_ram_base,
 * set in setup_bootmem, is where the kernel's RAM starts (read from guest
 * memory when kallsyms names it; the start of RAM otherwise).
 * setup_vm_final (paging_init, in setup_arch) built the map before the
 * hand-over. Each mode's answer is tried through the guest's own page
 * tables, as on arm64: the one where a marker reads back is the map.
 */
static int hq_rings_area_riscv64(struct host_qemu *hq, uint8_t *host, uint64_t *va, struct errbuf *err)
{
	static const uint64_t page_offset[] = { 0xff60000000000000ULL, 0xffffaf8000000000ULL, 0xffffffd800000000ULL };
	const uint64_t *b = hq->memstart_pa ? hq_gpa_ptr(&hq->h, hq->memstart_pa, sizeof(*b)) : NULL;
	uint64_t base = b ? *b : hq->q->arch.ram_gpa;

	if (base > hq->area_pa || base & 0xfff)
		return err_set(err, ERANGE, "phys_ram_base %#llx does not place the ring region %#llx in the linear map",
			       (unsigned long long)base, (unsigned long long)hq->area_pa);
	for (unsigned i = 0; i < sizeof(page_offset) / sizeof(page_offset[0]); i++) {
		int rc = hq_area_at(hq, host, page_offset[i] + (hq->area_pa - base), err);

		if (rc != -EFAULT) {
			*va = page_offset[i] + (hq->area_pa - base);
			return rc;
		}
	}
	return err_set(err, EFAULT, "the ring region %#llx is in none of riscv64's linear maps (sv57, sv48, sv39; "
		       "phys_ram_base %#llx%s)", (unsigned long long)hq->area_pa, (unsigned long long)base,
		       b ? "" : ", assumed");
}

int hq_rings_area(struct host *h, uint8_t **host, uint64_t *va, uint64_t *size, struct errbuf *err)
{
	struct host_qemu *hq = hq_of(h);
	const int64_t *ms = NULL;
	uint64_t start;
	int rc;

	if (!hq->area_size || (hq->image_arch != IMAGE_ARCH_ARM64 && hq->image_arch != IMAGE_ARCH_RISCV64))
		return -ENOENT;
	if (hq->image_arch == IMAGE_ARCH_RISCV64) {
		*host = qvm_gpa_ptr(hq->q, hq->area_pa, hq->area_size);
		*size = hq->area_size;
		if (!*host)
			return err_set(err, ERANGE, "the ring region is outside guest RAM");
		return hq_rings_area_riscv64(hq, *host, va, err);
	}
	if (hq->memstart_pa && !(ms = hq_gpa_ptr(h, hq->memstart_pa, sizeof(*ms))))
		return err_set(err, ERANGE, "the kernel's memstart_addr is outside guest RAM");
	if (!hq->va_bits)
		return err_set(err, ENOENT, "the kernel's _stext is unknown: no VA_BITS");
	start = ms ? (uint64_t)*ms : hq->q->arch.ram_gpa & ~((1ULL << 30) - 1);
	if (start > hq->area_pa || start & 0xfff || hq->area_pa - start + hq->area_size > (1ULL << (hq->va_bits - 1)))
		return err_set(err, ERANGE, "memstart_addr %#llx does not place the ring region %#llx in the linear map",
			       (unsigned long long)start, (unsigned long long)hq->area_pa);
	*host = qvm_gpa_ptr(hq->q, hq->area_pa, hq->area_size);
	if (!*host)
		return err_set(err, ERANGE, "the ring region is outside guest RAM");
	*size = hq->area_size;
	/*
	 * The image sits in the range of the smallest VA size the kernel
	 * supports (VA_BITS_MIN): a 52-bit kernel (Debian's 6.12,
	 * ARM64_VA_BITS_52, 48 bits with 4 KiB pages, 47 with 16 KiB) has its
	 * linear map at -(1 << 52) when the CPU has LPA2 (QEMU's max CPU has),
	 * and at -(1 << VA_BITS_MIN) otherwise (arm64_memblock_init then moves
	 * memstart_addr by the difference).
	 */
	for (unsigned bits = hq->va_bits;; bits = 52) {
		*va = (hq->area_pa - start) | (~0ULL << bits);
		rc = hq_area_at(hq, *host, *va, err);
		if (rc != -EFAULT || bits == 52)
			break;
	}
	if (rc == -EFAULT)
		return err_set(err, EFAULT, "the guest's VA %#llx is not the ring region (memstart_addr %#llx%s)",
			       (unsigned long long)*va, (unsigned long long)start, ms ? "" : ", assumed");
	return rc;
}

void hq_stub_free(struct host *h, struct stub_region *r)
{
	(void)h;
	memset(r, 0, sizeof(*r));	/* guest memory, gone with QEMU */
}
