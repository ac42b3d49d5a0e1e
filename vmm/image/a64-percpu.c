// SPDX-License-Identifier: GPL-2.0
/*
 * arm64: cpu_number's and swapper_pg_dir's addresses, from the code that
 * uses them, for kernels whose kallsyms names no data (Debian's: no
 * KALLSYMS_ALL). Linux reads a
 * per-CPU variable at its address plus the CPU's offset in tpidr_el1
 * (arch/arm64/include/asm/percpu.h, __my_cpu_offset), so
 * raw_smp_processor_id() compiles to
 *
 *     adrp  xS, cpu_number            (the page)
 *     add   xA, xS, :lo12:cpu_number
 *     mrs   xB, tpidr_el1
 *     ldr   wT, [xA, xB]              (or [xB, xA])
 *
 * in some order, and it is by far the most read 32-bit per-CPU variable:
 * the address such loads use most often is cpu_number's. Debian's
 * 6.1.0-56 arm64 kernel: 1,017 loads of it, 40 of the next (an irq_stat
 * field); the lean test kernel: 11, no other. The answer must stand out
 * (A64_PERCPU_MIN loads, A64_PERCPU_LEAD times the next), or there is none.
 */
#include <string.h>

#include "vmm/image/image-raw.h"

#define A64_PERCPU_MIN		8
#define A64_PERCPU_LEAD		4
#define A64_PERCPU_TRACK	64	/* distinct addresses counted */
#define A64_LOOK		16	/* instructions searched around a load */

static uint32_t insn(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The address adrp xS + add xA, xS, #imm put in register a before index j (0: not found). */
static uint64_t a64_addr_in(const uint8_t *t, size_t j, unsigned a, uint64_t pc0)
{
	for (size_t k = j; k-- > 0 && j - k <= A64_LOOK;) {
		uint32_t u = insn(t + k * 4);
		unsigned s;

		if ((u & 0xff80001f) != (0x91000000 | a))	/* add xA, xS, #imm{, lsl 12} */
			continue;
		s = (u >> 5) & 31;
		for (size_t m = k; m-- > 0 && k - m <= A64_LOOK;) {
			uint32_t v = insn(t + m * 4);
			int64_t off;

			if ((v & 0x9f00001f) != (0x90000000 | s))	/* adrp xS, page */
				continue;
			off = (int64_t)((((v >> 5) & 0x7ffff) << 2) | ((v >> 29) & 3));
			if (off & (1 << 20))
				off -= 1 << 21;
			return ((pc0 + m * 4) & ~0xfffULL) + (uint64_t)(off * 4096) +
			       ((uint64_t)((u >> 10) & 0xfff) << ((u >> 22) & 1 ? 12 : 0));
		}
		return 0;
	}
	return 0;
}

uint64_t image_a64_cpu_number(const uint8_t *text, size_t len, uint64_t text_va, uint64_t lo, uint64_t hi)
{
	uint64_t addr[A64_PERCPU_TRACK], best = 0;
	size_t count[A64_PERCPU_TRACK], n = 0, top = 0, second = 0;

	for (size_t i = 0; i + 1 < len / 4; i++) {
		uint32_t w = insn(text + i * 4);
		unsigned b = w & 31;

		if ((w & 0xffffffe0) != 0xd538d080)	/* mrs xB, tpidr_el1 */
			continue;
		for (size_t j = i + 1; j < len / 4 && j - i <= A64_LOOK / 2; j++) {
			uint32_t v = insn(text + j * 4);
			unsigned rm = (v >> 16) & 31, rn = (v >> 5) & 31;
			uint64_t a;
			size_t k;

			if ((v & 0xffe0fc00) != 0xb8606800 || (rm != b && rn != b))	/* ldr wT, [xN, xM] */
				continue;
			a = a64_addr_in(text, j, rm == b ? rn : rm, text_va);
			if (a < lo || a >= hi || (a & 3))
				break;
			for (k = 0; k < n && addr[k] != a; k++)
				;
			if (k == n && n < A64_PERCPU_TRACK) {
				addr[n] = a;
				count[n++] = 0;
			}
			if (k < n)
				count[k]++;
			break;
		}
	}
	for (size_t k = 0; k < n; k++) {
		if (count[k] > top) {
			second = top;
			top = count[k];
			best = addr[k];
		} else if (count[k] > second) {
			second = count[k];
		}
	}
	return top >= A64_PERCPU_MIN && top >= A64_PERCPU_LEAD * second ? best : 0;
}

/*
 * swapper_pg_dir's address, for the same kernels (hq_guard_map needs it):
 * head.S turns the MMU on with `adrp x1, <TTBR1's table>` and a call of
 * __enable_mmu a few instructions on, twice: secondary_startup with
 * swapper_pg_dir, __primary_switch with reserved_pg_dir, the page that
 * vmlinux.lds.S puts right below swapper_pg_dir (6.1). Debian's 6.1.0-56:
 *
 *     secondary_startup: adrp x1, 0xffff800009658000; adrp x2, ...; bl __enable_mmu
 *     __primary_switch:  adrp x1, 0xffff800009657000; adrp x2, ...; bl __enable_mmu
 *
 * The answer stands only when both calls go to one function and the
 * pages are one apart.
 */
#define A64_MMU_LOOK	32	/* instructions searched from a function's start */

/* The page of the first `adrp x1, page` that a `bl` follows within 3 instructions, and that bl's target. */
static int a64_x1_at_call(const uint8_t *t, size_t len, uint64_t pc0, uint64_t *page, uint64_t *callee)
{
	for (size_t i = 0; i < len / 4 && i < A64_MMU_LOOK; i++) {
		uint32_t v = insn(t + i * 4);
		int64_t off;

		if ((v & 0x9f00001f) != 0x90000001)	/* adrp x1, page */
			continue;
		off = (int64_t)((((v >> 5) & 0x7ffff) << 2) | ((v >> 29) & 3));
		if (off & (1 << 20))
			off -= 1 << 21;
		for (size_t j = i + 1; j < len / 4 && j <= i + 3; j++) {
			uint32_t b = insn(t + j * 4);
			int64_t rel;

			if ((b & 0x1f) == 1 && (b & 0x9f000000) == 0x90000000)	/* x1 written again */
				break;
			if ((b & 0xfc000000) != 0x94000000)	/* bl */
				continue;
			rel = (int64_t)(b & 0x3ffffff);
			if (rel & (1 << 25))
				rel -= 1 << 26;
			*page = ((pc0 + i * 4) & ~0xfffULL) + (uint64_t)(off * 4096);
			*callee = pc0 + j * 4 + (uint64_t)(rel * 4);
			return 0;
		}
	}
	return -1;
}

uint64_t image_a64_swapper_pg_dir(const uint8_t *sec, size_t sec_len, uint64_t sec_va, const uint8_t *pri,
				  size_t pri_len, uint64_t pri_va)
{
	uint64_t swapper, reserved, to_sec, to_pri;

	if (!sec || !pri || a64_x1_at_call(sec, sec_len, sec_va, &swapper, &to_sec) ||
	    a64_x1_at_call(pri, pri_len, pri_va, &reserved, &to_pri))
		return 0;
	return to_sec == to_pri && swapper == reserved + 4096 ? swapper : 0;
}
