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
#include "vmm/guest/x86-stub.h"
#include "vmm/image/elf.h"
#include "vmm/image/symtab.h"
#include "vmm/qemu/host-qemu.h"
#include "vmm/util/log.h"

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
/* The region: the tables' node header in the 16 bytes below it, then as x86_stub_target says. */
#define SETUP_HDR		X86_SETUP_HDR
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
		const uint8_t *h = qvm_gpa_ptr(hq->q, sd, SETUP_HDR);

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
 * rings (hq->area_pa set; its first pages take the tables).
 */
static int x86_place(struct host_qemu *hq, const struct elf_image *elf, struct errbuf *err)
{
	uint64_t rsi, kern_lo = UINT64_MAX, kern_hi = 0, pa, cmd;
	struct busy b[BUSY_MAX];
	uint8_t *bp;
	char *line;
	unsigned nb;
	int rc;

	if ((rc = qvm_vcpu_reg(hq->q, 0, 4 * 8, &rsi, err)))
		return rc;
	if (!(bp = qvm_gpa_ptr(hq->q, rsi, 4096)))
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
	if (!(line = qvm_gpa_ptr(hq->q, cmd, (uint64_t)rd32(bp + BP_CMDLINE_SIZE) + 1)))
		return err_set(err, EFAULT, "qemu: the command line at %#llx is not in guest RAM", (unsigned long long)cmd);
	if ((rc = x86_memmap(line, strnlen(line, rd32(bp + BP_CMDLINE_SIZE) + 1), hq->memmap, pa + HQ_X86_CODE,
			     hq->area_size - HQ_X86_CODE, err)))
		return rc;
	hq->area_pa = pa;
	hq->boot_params = rsi;
	log_info("qemu: the x86_64 stub's region at guest-physical %#llx (%llu MiB), its tables a setup_data node",
		 (unsigned long long)hq->area_pa, (unsigned long long)(hq->area_size >> 20));
	return 0;
}

int host_qemu_x86_room(const struct host_qemu *hq, uint64_t *bytes, struct errbuf *err)
{
	if (hq->area_size <= HQ_X86_DATA)
		return err_set(err, ENOSPC, "qemu: no region kept for the x86_64 stub (memmap=)");
	*bytes = hq->area_size - HQ_X86_DATA;
	if (*bytes > X86_STUB_DATA_MAX)
		*bytes = X86_STUB_DATA_MAX;
	return 0;
}

static void *x86_gpa_ptr(void *opaque, uint64_t gpa, uint64_t len)
{
	struct host_qemu *hq = opaque;

	return qvm_gpa_ptr(hq->q, gpa, len);
}

/* Through the gdbstub, by physical address: QEMU drops what it translated of the page. */
static int x86_write_code(void *opaque, uint64_t gpa, const void *bytes, size_t len, struct errbuf *err)
{
	struct host_qemu *hq = opaque;

	return qvm_write_code(hq->q, gpa, bytes, len, err);
}

int host_qemu_x86_install(struct host_qemu *hq, const struct elf_image *elf, const struct symtab *syms,
			  uint64_t data_size, struct stub_region *r, struct errbuf *err)
{
	struct x86_stub_target tg = { .opaque = hq, .gpa_ptr = x86_gpa_ptr, .write_code = x86_write_code };
	uint64_t room = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	/* The kernel runs where it was linked (nokaslr): the image's physical addresses are RAM's. */
	if (hq->bias)
		return err_set(err, EINVAL, "qemu: the kernel is not at its link address (%+lld bytes): randomised?",
			       (long long)hq->bias);
	if ((rc = host_qemu_x86_room(hq, &room, err)) || (rc = x86_place(hq, elf, err)))
		return rc;
	tg.boot_params = hq->boot_params;
	tg.tables = hq->area_pa;
	tg.code = hq->area_pa + HQ_X86_CODE;
	tg.data = hq->area_pa + HQ_X86_DATA;
	tg.data_room = room;
	tg.code_host = qvm_gpa_ptr(hq->q, tg.code, X86_STUB_CODE_MAX);
	tg.data_host = qvm_gpa_ptr(hq->q, tg.data, room);
	if (!tg.code_host || !tg.data_host || (hq->area_pa & (X86_PAGE_SIZE_2M - 1)))
		return err_set(err, ERANGE, "qemu: the stub's region %#llx is not 2 MiB of guest RAM",
			       (unsigned long long)hq->area_pa);
	if ((rc = x86_stub_install(&tg, elf, syms, data_size, r, err)))
		return rc;
	r->gpa = hq->area_pa;
	log_info("qemu: the x86_64 stub at guest-physical %#llx (%zu bytes), then %llu MiB of rings and shadow stacks",
		 (unsigned long long)r->code_gpa, r->code_size, (unsigned long long)(r->data_size >> 20));
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
