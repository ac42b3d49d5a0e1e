// SPDX-License-Identifier: GPL-2.0
/*
 * sigxstate ok|bad: the kernel's XSAVE to and XRSTOR from a user signal
 * frame. A SIGUSR1 handler runs on an alternate stack mapped just before,
 * whose top ends 1 KiB into a page: the frame's XSAVE area starts in the
 * page below (whose header the kernel clears first) and ends in that top
 * page, which nothing has touched, so the kernel's xsave into the frame
 * takes a #PF and retries. "fresh=1" says the top page was not resident
 * before the signal and was after it (mincore).
 *   ok:  the upper half of ymm8 must be the same after the handler returns
 *        (the frame was saved and restored); prints "SIGXSTATE ok kept=1
 *        fresh=<0|1>" and exits 0, 1 if it changed.
 *   bad: the handler sets XCOMP_BV in the frame's XSAVE header, which the
 *        standard form forbids: the kernel's XRSTOR raises #GP, and
 *        rt_sigreturn must end the process with SIGSEGV. Prints
 *        "SIGXSTATE bad survived" and exits 1 if it does not.
 * Exits 3 when the CPU gives user code no AVX (nothing to check).
 */
#include <asm/sigcontext.h>
#include <asm/unistd.h>
#include <linux/mman.h>
#include <linux/signal.h>

#include "rt.h"

#define ALT_SIZE (64 * 1024)
#define ALT_USED (ALT_SIZE - 3072)	/* the top 1 KiB into the last page */
#define UC_MCONTEXT 40		/* uc_flags, uc_link, stack_t uc_stack */
#define XSAVE_HDR 512

struct ksigaction {
	void (*handler)(int, void *, void *);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

struct kstack {
	void *sp;
	int flags;
	unsigned long size;
};

static int corrupt;
static volatile int handled;

void sigxstate_restorer(void);
__asm__(".text\n"
	"sigxstate_restorer:\n"
	"	mov $" RT_XSTR(__NR_rt_sigreturn) ", %eax\n"
	"	syscall\n"
	"	hlt\n");

static void on_usr1(int sig, void *info, void *ucontext)
{
	struct sigcontext *sc = (struct sigcontext *)((char *)ucontext + UC_MCONTEXT);
	unsigned char *xsave = (unsigned char *)sc->fpstate;

	(void)sig;
	(void)info;
	handled = 1;
	/* The handler must not touch ymm8 itself: only legacy SSE code here. */
	if (corrupt && xsave)
		xsave[XSAVE_HDR + 8] = 1;	/* XCOMP_BV bit 0 */
}

/* AVX usable by user code: the OS switches ymm state (XCR0 bits 1 and 2). */
static int avx_usable(void)
{
	return (rt_user_xcr0() & 6) == 6;
}

static void say(const char *s)
{
	rt_write(1, s, rt_strlen(s));
}

int rt_main(long *sp)
{
	char **argv = (char **)(sp + 1);
	unsigned long want[4] = { 0x1111, 0x2222, 0x3333444455556666UL, 0x7777888899990000UL };
	unsigned long got[4];
	struct ksigaction sa = { on_usr1, SA_SIGINFO | SA_ONSTACK | SA_RESTORER, sigxstate_restorer, 0 };
	struct kstack ss = { 0, 0, ALT_USED };
	unsigned char before = 1, after = 0;
	long pid;

	if (sp[0] != 2 || (rt_strlen(argv[1]) != 2 && rt_strlen(argv[1]) != 3)) {
		say("usage: sigxstate ok|bad\n");
		return 2;
	}
	corrupt = argv[1][0] == 'b';
	if (!avx_usable()) {
		say("SIGXSTATE none\n");
		return 3;
	}
	ss.sp = (void *)rt_syscall6(__NR_mmap, 0, ALT_SIZE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((unsigned long)ss.sp > -4096UL ||
	    rt_syscall(__NR_sigaltstack, (long)&ss, 0, 0) ||
	    rt_syscall4(__NR_rt_sigaction, SIGUSR1, (long)&sa, 0, 8)) {
		say("SIGXSTATE setup failed\n");
		return 2;
	}
	rt_syscall(__NR_mincore, (long)ss.sp + ALT_SIZE - 4096, 4096, (long)&before);
	pid = rt_syscall(__NR_getpid, 0, 0, 0);
	__asm__ volatile("vmovdqu %0, %%ymm8" : : "m"(want) : "xmm8");
	rt_syscall(__NR_kill, pid, SIGUSR1, 0);
	__asm__ volatile("vmovdqu %%ymm8, %0" : "=m"(got));
	rt_syscall(__NR_mincore, (long)ss.sp + ALT_SIZE - 4096, 4096, (long)&after);
	if (!handled) {
		say("SIGXSTATE no signal\n");
		return 2;
	}
	if (corrupt) {
		say("SIGXSTATE bad survived\n");
		return 1;
	}
	if (got[2] != want[2] || got[3] != want[3]) {
		say("SIGXSTATE ok kept=0\n");
		return 1;
	}
	say(!(before & 1) && (after & 1) ? "SIGXSTATE ok kept=1 fresh=1\n" : "SIGXSTATE ok kept=1 fresh=0\n");
	return 0;
}
