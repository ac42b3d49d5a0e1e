/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A few lines of runtime for the test guest's programs, built with
 * -nostdlib: every syscall costs milliseconds in the test guest (its kernel
 * code is emulated), and libc's start-up alone makes a dozen of them, which
 * would also pollute the syscall counts that the traces are checked against.
 * The test guest is x86_64 only for now; another guest arch adds its own
 * rt_syscall and _start here.
 */
#ifndef GUEST_PROGS_RT_H
#define GUEST_PROGS_RT_H

#include <asm/unistd.h>

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

#define RT_STR(x) #x
#define RT_XSTR(x) RT_STR(x)

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
