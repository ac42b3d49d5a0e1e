/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A few lines of runtime for the test guest's programs, built with
 * -nostdlib: every syscall costs milliseconds in the test guest (its kernel
 * code is emulated), and libc's start-up alone makes a dozen of them, which
 * would also pollute the syscall counts that the traces are checked against.
 * rt_syscall and _start for x86_64, arm64, riscv64 and loongarch64 (the
 * QEMU host's guests); the vector-state helpers are x86_64's.
 */
#ifndef GUEST_PROGS_RT_H
#define GUEST_PROGS_RT_H

#include <asm/unistd.h>

#define RT_STR(x) #x
#define RT_XSTR(x) RT_STR(x)

#if defined(__x86_64__)
static inline long rt_syscall(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

/* The fourth to sixth arguments go in r10, r8, r9. */
static inline long rt_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long rt_syscall4(long nr, long a, long b, long c, long d)
{
	return rt_syscall6(nr, a, b, c, d, 0, 0);
}

/*
 * XCR0 as user code sees it (xgetbv), 0 when the OS has not enabled
 * xgetbv (CPUID.1:ECX.OSXSAVE): which vector state the CPU lets it use.
 */
static inline unsigned long rt_user_xcr0(void)
{
	unsigned int a, b, c, d, lo, hi;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	if (!(c & (1u << 27)))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((unsigned long)hi << 32) | lo;
}


/* The kernel enters with argc at (%rsp); the ABI wants %rsp 16-aligned at calls. */
__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call rt_main\n"
	"	mov %eax, %edi\n"
	"	mov $" RT_XSTR(__NR_exit) ", %eax\n"
	"	syscall\n"
	"	hlt\n");

#elif defined(__aarch64__)
/* arm64: the number in x8, arguments in x0-x5, svc #0; the result in x0. */
static inline long rt_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}

/* The kernel enters with argc at sp (16-aligned). */
__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"	mov x29, #0\n"
	"	mov x0, sp\n"
	"	bl rt_main\n"
	"	mov x8, #" RT_XSTR(__NR_exit) "\n"
	"	svc #0\n"
	"	b .\n");

#elif defined(__riscv) && __riscv_xlen == 64
/* riscv64: the number in a7, arguments in a0-a5, ecall; the result in a0. */
static inline long rt_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long a7 __asm__("a7") = nr;
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a3 __asm__("a3") = d;
	register long a4 __asm__("a4") = e;
	register long a5 __asm__("a5") = f;

	__asm__ volatile("ecall"
			 : "+r"(a0)
			 : "r"(a7), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5)
			 : "memory");
	return a0;
}

/* The kernel enters with argc at sp; gp is the linker's (-nostdlib: set here). */
__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"	.option push\n"
	"	.option norelax\n"
	"	lla gp, __global_pointer$\n"
	"	.option pop\n"
	"	mv a0, sp\n"
	"	call rt_main\n"
	"	li a7, " RT_XSTR(__NR_exit) "\n"
	"	ecall\n"
	"	j .\n");

#elif defined(__loongarch__) && __loongarch_grlen == 64
/*
 * loongarch64: the number in a7, arguments in a0-a5, `syscall 0`; the
 * result in a0. The kernel may clobber t0-t8 (as glibc declares).
 */
static inline long rt_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long a7 __asm__("$a7") = nr;
	register long a0 __asm__("$a0") = a;
	register long a1 __asm__("$a1") = b;
	register long a2 __asm__("$a2") = c;
	register long a3 __asm__("$a3") = d;
	register long a4 __asm__("$a4") = e;
	register long a5 __asm__("$a5") = f;

	__asm__ volatile("syscall 0"
			 : "+r"(a0)
			 : "r"(a7), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5)
			 : "$t0", "$t1", "$t2", "$t3", "$t4", "$t5", "$t6", "$t7", "$t8", "memory");
	return a0;
}

/* The kernel enters with argc at sp (16-aligned). */
__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"	move $fp, $zero\n"
	"	move $a0, $sp\n"
	"	bl rt_main\n"
	"	li.w $a7, " RT_XSTR(__NR_exit) "\n"
	"	syscall 0\n"
	"	b .\n");

#else
#error "the test programs know x86_64, arm64, riscv64 and loongarch64"
#endif

#if !defined(__x86_64__)
static inline long rt_syscall(long nr, long a, long b, long c)
{
	return rt_syscall6(nr, a, b, c, 0, 0, 0);
}

static inline long rt_syscall4(long nr, long a, long b, long c, long d)
{
	return rt_syscall6(nr, a, b, c, d, 0, 0);
}
#endif

static inline void rt_write(int fd, const char *s, unsigned long len)
{
	while (len) {
		long n = rt_syscall(__NR_write, fd, (long)s, (long)len);

		if (n <= 0)
			return;
		s += n;
		len -= n;
	}
}

static inline unsigned long rt_strlen(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

/* Appends the decimal form of v at p, returns the end. */
static inline char *rt_utoa(char *p, unsigned long v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static inline char *rt_puts(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

/* Parses a decimal number; returns -1 on anything else. */
static inline long rt_atol(const char *s)
{
	long v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (1L << 50))
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

#endif
