// SPDX-License-Identifier: GPL-2.0
/*
 * vecstate YIELDS: whether the guest kernel keeps each task's vector
 * register state across task switches. It puts a pattern made from its pid
 * in the parts of the registers that only XSAVE switches (the upper half of
 * ymm8; with AVX-512 also bits 511:256 of zmm9, all of zmm17 and opmask k3),
 * then calls sched_yield YIELDS times and reads them back after each call.
 * Several copies pinned to one CPU switch into each other at every yield.
 * Prints "VECSTATE pid=<n> cpu=<n> xcr0=0x<hex> checked=<avx|avx512>
 * yields=<n> lost=<n>" and exits 0 when nothing was lost, 1 when something
 * was, 3 when the CPU lets user code use neither (checked=none).
 *
 * Only legacy SSE code is compiled here (no -mavx): the compiler may use the
 * low 128 bits of xmm8/xmm9 between the asm statements, which legacy SSE
 * instructions write without touching the upper bits, and never zmm16-31
 * or the opmask registers.
 */
#include <asm/unistd.h>

#include "rt.h"

#define XCR0_AVX    0x6UL	/* SSE | YMM */
#define XCR0_AVX512 0xe0UL	/* opmask | ZMM_Hi256 | Hi16_ZMM */

static char *hex(char *p, unsigned long v)
{
	int shift = 60;

	while (shift > 0 && !((v >> shift) & 0xf))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = "0123456789abcdef"[(v >> shift) & 0xf];
	return p;
}

static int has_avx512f(void)
{
	unsigned int a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
	if (a < 7)
		return 0;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
	return (b >> 16) & 1;
}

struct vregs {
	unsigned long ymm8[4], zmm9[8], zmm17[8];
	unsigned short k3;
};

static void load(const struct vregs *v, int avx512)
{
	__asm__ volatile("vmovdqu %0, %%ymm8" : : "m"(v->ymm8) : "xmm8");
	if (avx512)
		__asm__ volatile("vmovdqu64 %0, %%zmm9\n\t"
				 "vmovdqu64 %1, %%zmm17\n\t"
				 "kmovw %2, %%k3"
				 : : "m"(v->zmm9), "m"(v->zmm17), "m"(v->k3) : "xmm9");
}

static void store(struct vregs *v, int avx512)
{
	__asm__ volatile("vmovdqu %%ymm8, %0" : "=m"(v->ymm8));
	if (avx512)
		__asm__ volatile("vmovdqu64 %%zmm9, %0\n\t"
				 "vmovdqu64 %%zmm17, %1\n\t"
				 "kmovw %%k3, %2"
				 : "=m"(v->zmm9), "=m"(v->zmm17), "=m"(v->k3));
}

/* Whether the parts only XSAVE switches came back as they were put. */
static int same(const struct vregs *a, const struct vregs *b, int avx512)
{
	int ok = a->ymm8[2] == b->ymm8[2] && a->ymm8[3] == b->ymm8[3];

	for (int i = 4; avx512 && i < 8; i++)
		ok &= a->zmm9[i] == b->zmm9[i];
	for (int i = 0; avx512 && i < 8; i++)
		ok &= a->zmm17[i] == b->zmm17[i];
	return ok && (!avx512 || a->k3 == b->k3);
}

int rt_main(long *sp)
{
	char **argv = (char **)(sp + 1);
	long yields = sp[0] == 2 ? rt_atol(argv[1]) : -1;
	unsigned long xcr0 = rt_user_xcr0(), pid, lost = 0;
	int avx = (xcr0 & XCR0_AVX) == XCR0_AVX, avx512;
	unsigned int cpu = ~0u;
	struct vregs want, got;
	char line[160], *p = line;

	if (yields < 0) {
		static const char usage[] = "usage: vecstate YIELDS\n";

		rt_write(2, usage, sizeof(usage) - 1);
		return 2;
	}
	avx512 = avx && (xcr0 & XCR0_AVX512) == XCR0_AVX512 && has_avx512f();
	pid = rt_syscall(__NR_getpid, 0, 0, 0);
	for (int i = 0; i < 8; i++) {
		unsigned long v = (pid << 32) | (unsigned long)(i + 1) * 0x01010101UL;

		if (i < 4)
			want.ymm8[i] = v ^ 0x1111;
		want.zmm9[i] = v ^ 0x2222;
		want.zmm17[i] = v ^ 0x3333;
	}
	want.k3 = (unsigned short)(pid * 7 + 1);
	if (avx) {
		load(&want, avx512);
		for (long n = 0; n < yields; n++) {
			rt_syscall(__NR_sched_yield, 0, 0, 0);
			store(&got, avx512);
			if (!same(&want, &got, avx512)) {
				lost++;
				load(&want, avx512);
			}
		}
	}
	rt_syscall(__NR_getcpu, (long)&cpu, 0, 0);
	p = rt_puts(p, "VECSTATE pid=");
	p = rt_utoa(p, pid);
	p = rt_puts(p, " cpu=");
	p = cpu == ~0u ? rt_puts(p, "?") : rt_utoa(p, cpu);
	p = rt_puts(p, " xcr0=0x");
	p = hex(p, xcr0);
	p = rt_puts(p, avx512 ? " checked=avx512" : avx ? " checked=avx" : " checked=none");
	p = rt_puts(p, " yields=");
	p = rt_utoa(p, avx ? yields : 0);
	p = rt_puts(p, " lost=");
	p = rt_utoa(p, lost);
	*p++ = '\n';
	rt_write(1, line, p - line);
	return !avx ? 3 : lost ? 1 : 0;
}
