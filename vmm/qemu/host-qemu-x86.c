// SPDX-License-Identifier: GPL-2.0
/*
 * x86_64 kernels under QEMU (docs/HOSTS.md, "x86_64 under QEMU"). QEMU
 * boots the bzImage itself, so its decompressor runs first: the traced
 * kernel's first instruction is startup_64 at the vmlinux's entry
 * (physical, identity-mapped by the decompressor), where the caller stops
 * QEMU with a breakpoint before the tracer places anything. The stub and
 * its rings then go where the KVM host puts them in the guest's address
 * space (arch/x86_64/stub-map.h), in a region of RAM chosen there, from
 * the boot_params startup_64 gets: RAM in the firmware's map, clear of the
 * kernel, its initrd, command line and setup_data. The command line's
 * memmap= (a placeholder of fixed width) is rewritten in place to keep the
 * code and rings from the kernel; the region's page directory and table
 * become a setup_data node, which the kernel keeps as RAM it never
 * allocates (E820_TYPE_RESERVED_KERN): in its direct map, where a walk of
 * its page tables (the W+X check of CONFIG_DEBUG_WX) reads them. Then
 * the stub's code is written through the gdbstub, and
 * level3_kernel_pgt[509] into the decompressed image.
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

/*
 * boot_params (arch/x86/include/uapi/asm/bootparam.h, bootparam.rst): the
 * fields read here, at their offsets in the zero page.
 */
#define BP_EXT_RAMDISK_IMAGE	0x0c0
#define BP_EXT_RAMDISK_SIZE	0x0c4
#define BP_EXT_CMD_LINE_PTR	0x0c8
#define BP_E820_ENTRIES		0x1e8
#define BP_RAMDISK_IMAGE	0x218
#define BP_RAMDISK_SIZE		0x21c
#define BP_CMD_LINE_PTR		0x228
#define BP_CMDLINE_SIZE		0x238
#define BP_SETUP_DATA		0x250
#define BP_E820_TABLE		0x2d0
#define BP_E820_MAX		128
#define BP_E820_RAM		1
/* The setup_data node holding the stub's tables: a type no kernel parses ("vt"). */
#define VT_SETUP_TYPE		0x76740000u
#define SETUP_HDR		16
#define BUSY_MAX		40

struct busy {
	uint64_t lo, hi;
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void busy_add(struct busy *b, unsigned *n, uint64_t lo, uint64_t len)
{
	if (*n < BUSY_MAX && len) {
		b[*n].lo = lo;
		b[(*n)++].hi = lo + len;
	}
}

/*
 * What the region must not touch at startup_64: low memory, the zero page,
 * the command line, the initrd, the kernel image, every setup_data node.
 */
static unsigned x86_busy(struct host_qemu *hq, const uint8_t *bp, uint64_t bp_pa, uint64_t kern_lo,
			 uint64_t kern_hi, struct busy *b)
{
	uint64_t cmd = rd32(bp + BP_CMD_LINE_PTR) | (uint64_t)rd32(bp + BP_EXT_CMD_LINE_PTR) << 32;
	uint64_t rd = rd32(bp + BP_RAMDISK_IMAGE) | (uint64_t)rd32(bp + BP_EXT_RAMDISK_IMAGE) << 32;
	uint64_t rdsize = rd32(bp + BP_RAMDISK_SIZE) | (uint64_t)rd32(bp + BP_EXT_RAMDISK_SIZE) << 32;
	uint64_t sd = rd64(bp + BP_SETUP_DATA);
	unsigned n = 0;

	busy_add(b, &n, 0, 1 << 20);
	busy_add(b, &n, bp_pa, 4096);
	busy_add(b, &n, cmd, (uint64_t)rd32(bp + BP_CMDLINE_SIZE) + 1);
	busy_add(b, &n, rd, rdsize);
	busy_add(b, &n, kern_lo, kern_hi - kern_lo);
	for (unsigned i = 0; sd && i < 16; i++) {
		const uint8_t *h = qhost_gpa_ptr(hq->q, sd, SETUP_HDR);

		if (!h)
			break;
		busy_add(b, &n, sd, SETUP_HDR + rd32(h + 12));
		sd = rd64(h);
	}
	return n;
}

static int x86_overlaps(const struct busy *b, unsigned n, uint64_t lo, uint64_t hi)
{
	for (unsigned i = 0; i < n; i++)
		if (lo < b[i].hi && b[i].lo < hi)
			return 1;
	return 0;
}

/*
 * The highest 2 MiB-aligned start below 2 GiB for the region (size bytes,
 * its setup_data header in the 16 bytes below it) inside one RAM entry of
 * the firmware's map and clear of every busy range; 0: none.
 */
static uint64_t x86_pick(const uint8_t *bp, const struct busy *b, unsigned nb, uint64_t size)
{
	uint64_t best = 0;

	for (unsigned i = 0; i < bp[BP_E820_ENTRIES] && i < BP_E820_MAX; i++) {
		const uint8_t *e = bp + BP_E820_TABLE + i * 20;
		uint64_t lo = rd64(e), hi = lo + rd64(e + 8), s;

		if (rd32(e + 16) != BP_E820_RAM || hi <= lo)
			continue;
		if (hi > (2ULL << 30))
			hi = 2ULL << 30;
		if (hi < size)
			continue;
		for (s = (hi - size) & ~(X86_PAGE_SIZE_2M - 1); s > best && s >= lo + SETUP_HDR; s -= X86_PAGE_SIZE_2M) {
			if (!x86_overlaps(b, nb, s - SETUP_HDR, s + size)) {
				best = s;
				break;
			}
			if (s < X86_PAGE_SIZE_2M)
				break;
		}
	}
	return best;
}

/* memmap='s placeholder in the command line, at its fixed width: the code and rings from start on. */
static int x86_memmap(char *cmd, size_t len, const char *was, uint64_t start, uint64_t size, struct errbuf *err)
{
	char now[64];
	char *at = memmem(cmd, len, was, strlen(was));

	snprintf(now, sizeof(now), HOST_QEMU_MEMMAP_FMT, (unsigned long long)size, (unsigned long long)start);
	if (!at || strlen(now) != strlen(was))
		return err_set(err, EPROTO, "qemu: the command line has no '%s' to place the stub's region with", was);
	memcpy(at, now, strlen(now));
	return 0;
}

/*
 * At startup_64: the region chosen, memmap= rewritten to keep its code and
 * rings, its tables made a setup_data node (hq->area_pa set).
 */
static int x86_place(struct host_qemu *hq, const struct elf_image *elf, struct errbuf *err)
{
	uint64_t rsi, kern_lo = UINT64_MAX, kern_hi = 0, pa, cmd;
	struct busy b[BUSY_MAX];
	uint8_t *bp, *hdr;
	char *line;
	unsigned nb;
	int rc;

	if ((rc = qhost_vcpu_reg(hq->q, 0, 4 * 8, &rsi, err)))
		return rc;
	if (!(bp = qhost_gpa_ptr(hq->q, rsi, 4096)))
		return err_set(err, EFAULT, "qemu: boot_params at %#llx (startup_64's rsi) is not in guest RAM",
			       (unsigned long long)rsi);
	for (unsigned i = 0; i < elf->ehdr->e_phnum; i++)
		if (elf->phdr[i].p_type == PT_LOAD) {
			uint64_t lo = (uint64_t)((int64_t)elf->phdr[i].p_paddr + hq->bias);

			kern_lo = lo < kern_lo ? lo : kern_lo;
			kern_hi = lo + elf->phdr[i].p_memsz > kern_hi ? lo + elf->phdr[i].p_memsz : kern_hi;
		}
	nb = x86_busy(hq, bp, rsi, kern_lo, kern_hi, b);
	if (!(pa = x86_pick(bp, b, nb, hq->area_size)))
		return err_set(err, ENOSPC, "qemu: no %llu MiB of RAM under 2 GiB clear of the kernel and its initrd for "
			       "the stub (more --mem, or a smaller --buffer-size)",
			       (unsigned long long)(hq->area_size >> 20));
	cmd = rd32(bp + BP_CMD_LINE_PTR) | (uint64_t)rd32(bp + BP_EXT_CMD_LINE_PTR) << 32;
	if (!(line = qhost_gpa_ptr(hq->q, cmd, (uint64_t)rd32(bp + BP_CMDLINE_SIZE) + 1)))
		return err_set(err, EFAULT, "qemu: the command line at %#llx is not in guest RAM", (unsigned long long)cmd);
	if ((rc = x86_memmap(line, strnlen(line, rd32(bp + BP_CMDLINE_SIZE) + 1), hq->memmap, pa + X86_STUB_CODE,
			     hq->area_size - X86_STUB_CODE, err)))
		return rc;
	/* The tables' node: header just below the region, PD and PT its first pages. */
	if (!(hdr = qhost_gpa_ptr(hq->q, pa - SETUP_HDR, SETUP_HDR + X86_STUB_PT + X86_PAGE_SIZE)))
		return err_set(err, EFAULT, "qemu: the stub's region %#llx is not in guest RAM", (unsigned long long)pa);
	memcpy(hdr, bp + BP_SETUP_DATA, 8);
	memcpy(hdr + 8, &(uint32_t){ VT_SETUP_TYPE }, 4);
	memcpy(hdr + 12, &(uint32_t){ (uint32_t)(X86_STUB_PT + X86_PAGE_SIZE) }, 4);
	pa -= SETUP_HDR;
	memcpy(bp + BP_SETUP_DATA, &pa, 8);
	hq->area_pa = pa + SETUP_HDR;
	log_info("qemu: the x86_64 stub's region at guest-physical %#llx (%llu MiB), its tables a setup_data node",
		 (unsigned long long)hq->area_pa, (unsigned long long)(hq->area_size >> 20));
	return 0;
}

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
	if ((rc = x86_find_l3(hq, elf, syms, &l3, err)) || (rc = x86_place(hq, elf, err)))
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
