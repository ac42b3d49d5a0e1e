// SPDX-License-Identifier: GPL-2.0
/*
 * x86_64 kernels under QEMU (docs/HOSTS.md, "x86_64 under QEMU"). QEMU
 * boots the bzImage itself, so its decompressor runs first: the traced
 * kernel's first instruction is startup_64 at the vmlinux's entry
 * (physical, identity-mapped by the decompressor), where the caller stops
 * QEMU with a breakpoint before the tracer places anything. The stub and
 * its rings then go where the KVM host puts them in the guest's address
 * space (arch/x86_64/stub-map.h), in RAM the command line's memmap= keeps
 * from the kernel: the region's own page directory and table, the stub's
 * code written through the gdbstub, and level3_kernel_pgt[509] written
 * into the decompressed image before startup_64 runs.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "arch/x86_64/paging.h"
#include "arch/x86_64/stub-map.h"
#include "proto/trace.h"
#include "vmm/image/elf.h"
#include "vmm/image/symtab.h"
#include "vmm/qemu/host-qemu.h"
#include "vmm/util/log.h"

/* The x86_64 stub, embedded at build time (guest-stub/x86_64/stub.mk). */
extern const uint8_t vt_stub_blob[], vt_stub_blob_end[];

int host_qemu_x86_room(const struct host_qemu *hq, uint64_t *bytes, struct errbuf *err)
{
	if (hq->area_size <= X86_STUB_DATA)
		return err_set(err, ENOSPC, "qemu: no region kept for the x86_64 stub (memmap=)");
	*bytes = hq->area_size - X86_STUB_DATA;
	if (*bytes > X86_STUB_DATA_MAX)
		*bytes = X86_STUB_DATA_MAX;
	return 0;
}

/* level3_kernel_pgt's host view, in the image QEMU's decompressor wrote, with entry 509 free. */
static int x86_find_l3(struct host_qemu *hq, const struct elf_image *elf, const struct symtab *syms,
		       uint64_t **l3, struct errbuf *err)
{
	const struct symbol *s = symtab_find_name(syms, "level3_kernel_pgt");
	uint64_t pa;

	if (!s)
		return err_set(err, ENOENT, "symbol level3_kernel_pgt not found: cannot map the tracing stub");
	if (elf_vaddr_to_paddr(elf, s->addr, &pa) || (pa & 0xfff) ||
	    !(*l3 = hq->h.ops->gpa_ptr(&hq->h, pa, 4096)))
		return err_set(err, EINVAL, "level3_kernel_pgt at %#llx is not in guest RAM",
			       (unsigned long long)s->addr);
	if ((*l3)[X86_STUB_L3_INDEX])
		return err_set(err, EBUSY, "level3_kernel_pgt[%d] is in use (%#llx): no room for the stub",
			       X86_STUB_L3_INDEX, (unsigned long long)(*l3)[X86_STUB_L3_INDEX]);
	return 0;
}

/*
 * Whether the firmware's memory map, in the boot_params the decompressor
 * hands startup_64 (rsi), says the region is RAM: QEMU's BIOS keeps its
 * own tables at the top of low RAM, and memmap= cannot take back what it
 * reserved. boot_params (arch/x86/include/uapi/asm/bootparam.h): the
 * number of entries at 0x1e8, the entries at 0x2d0, 20 bytes each
 * (address, size, type; 1 is RAM), at most 128.
 */
static int x86_region_is_ram(struct host_qemu *hq, uint64_t size, struct errbuf *err)
{
	const uint8_t *bp;
	uint64_t rsi;
	int rc;

	if ((rc = qhost_vcpu_reg(hq->q, 0, 4 * 8, &rsi, err)))
		return rc;
	if (!(bp = qhost_gpa_ptr(hq->q, rsi, 4096)))
		return err_set(err, EFAULT, "qemu: boot_params at %#llx (startup_64's rsi) is not in guest RAM",
			       (unsigned long long)rsi);
	for (unsigned i = 0; i < bp[0x1e8] && i < 128; i++) {
		const uint8_t *e = bp + 0x2d0 + i * 20;
		uint64_t addr, len;
		uint32_t type;

		memcpy(&addr, e, 8);
		memcpy(&len, e + 8, 8);
		memcpy(&type, e + 16, 4);
		if (type == 1 && addr <= hq->area_pa && hq->area_pa - addr <= len && len - (hq->area_pa - addr) >= size)
			return 0;
	}
	return err_set(err, ENOSPC, "qemu: the stub's region [%#llx, %#llx) is not RAM in the firmware's memory map",
		       (unsigned long long)hq->area_pa, (unsigned long long)(hq->area_pa + size));
}

int host_qemu_x86_install(struct host_qemu *hq, const struct elf_image *elf, const struct symtab *syms,
			  uint64_t data_size, struct stub_region *r, struct errbuf *err)
{
	size_t size = (size_t)(vt_stub_blob_end - vt_stub_blob);
	uint64_t room = 0, *l3 = NULL, l3e;
	uint8_t *region;
	int rc;

	memset(r, 0, sizeof(*r));
	data_size = (data_size + X86_PAGE_SIZE_2M - 1) & ~(X86_PAGE_SIZE_2M - 1);
	if ((rc = host_qemu_x86_room(hq, &room, err)))
		return rc;
	if (data_size > room)
		return err_set(err, E2BIG, "the stub's rings need %llu MiB, the kept region has %llu",
			       (unsigned long long)(data_size >> 20), (unsigned long long)(room >> 20));
	if (size <= VT_CFG_SIZE || size > X86_STUB_CODE_MAX)
		return err_set(err, EINVAL, "the embedded x86_64 stub is %zu bytes", size);
	if ((rc = x86_find_l3(hq, elf, syms, &l3, err)) || (rc = x86_region_is_ram(hq, X86_STUB_DATA + data_size, err)))
		return rc;
	region = qhost_gpa_ptr(hq->q, hq->area_pa, X86_STUB_DATA + data_size);
	if (!region || (hq->area_pa & (X86_PAGE_SIZE_2M - 1)))
		return err_set(err, ERANGE, "qemu: the stub's region %#llx is not 2 MiB of guest RAM",
			       (unsigned long long)hq->area_pa);
	memset(region, 0, X86_STUB_DATA + data_size);
	if (!(l3e = x86_stub_map(region, hq->area_pa, size, data_size)))
		return err_set(err, E2BIG, "the stub's %zu bytes and %llu MiB of rings do not fit its map", size,
			       (unsigned long long)(data_size >> 20));
	/* Code through the gdbstub (QEMU drops what it translated of the page); tables and rings are data. */
	if ((rc = qhost_write_code(hq->q, hq->area_pa + X86_STUB_CODE, vt_stub_blob, size, err)))
		return rc;
	r->gpa = hq->area_pa;
	r->size = X86_STUB_DATA + data_size;
	r->code = region + X86_STUB_CODE;
	r->code_va = X86_STUB_CODE_VA;
	r->code_gpa = hq->area_pa + X86_STUB_CODE;
	r->code_size = size;
	r->data = region + X86_STUB_DATA;
	r->data_va = X86_STUB_DATA_VA;
	r->data_size = data_size;
	/* Before startup_64 runs: its __startup_64 fixes entries 510 and 511 only. */
	l3[X86_STUB_L3_INDEX] = l3e;
	log_info("qemu: the x86_64 stub at guest-physical %#llx (%zu bytes), then %llu MiB of rings and shadow stacks",
		 (unsigned long long)r->code_gpa, size, (unsigned long long)(data_size >> 20));
	return 0;
}

/*
 * Under TCG an x86 guest's TSC is the host's (QEMU's cpu_get_host_ticks,
 * rdtsc), less the time the machine stood stopped: it runs at the host's
 * TSC rate, measured here against CLOCK_MONOTONIC_RAW over 20 ms (the
 * pair of readings closest together of three at each end).
 */
#if defined(__x86_64__)
#include <x86intrin.h>

static void tsc_pair(uint64_t *ns, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 3; i++) {
		struct timespec a, b;
		uint64_t t, an, bn;

		clock_gettime(CLOCK_MONOTONIC_RAW, &a);
		t = __rdtsc();
		clock_gettime(CLOCK_MONOTONIC_RAW, &b);
		an = (uint64_t)a.tv_sec * 1000000000u + (uint64_t)a.tv_nsec;
		bn = (uint64_t)b.tv_sec * 1000000000u + (uint64_t)b.tv_nsec;
		if (bn - an < best) {
			best = bn - an;
			*ns = an + (bn - an) / 2;
			*tsc = t;
		}
	}
}

int host_qemu_x86_tsc_khz(uint64_t *khz)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	uint64_t n0, t0, n1, t1;

	tsc_pair(&n0, &t0);
	nanosleep(&pause, NULL);
	tsc_pair(&n1, &t1);
	if (n1 <= n0 || t1 <= t0)
		return -EIO;
	*khz = (uint64_t)(((unsigned __int128)(t1 - t0) * 1000000u + (n1 - n0) / 2) / (n1 - n0));
	return 0;
}
#else
int host_qemu_x86_tsc_khz(uint64_t *khz)
{
	(void)khz;
	return -EOPNOTSUPP;	/* another host's QEMU counts its x86 TSC by that host's own ticks */
}
#endif
