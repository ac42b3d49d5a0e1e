// SPDX-License-Identifier: GPL-2.0
/*
 * The functions the tests trace, and the code that calls them a known
 * number of times. Each traced function is a real call from one known
 * caller (TRACED: never inlined, cloned or tail-called), so a trace line
 * reads `f_a <-run_calls`, `f_leaf <-f_b`, `f_nmi <-nmi_handler`. Each
 * counts its own calls: the console lines give the guest's side of every
 * count a test compares with the trace.
 */
#include "tests/guest/payload/payload.h"

#define LOOP_RUNNING_AFTER 64	/* iterations before a CPU says it runs */
#define LOOP_POLL_EVERY    256	/* iterations between looks at COM1 (each is a VM exit) */

static struct round_counts counts;

TRACED void f_leaf(void)
{
	counts.f_leaf++;
	asm volatile("" ::: "memory");
}

TRACED void f_a(unsigned long i)
{
	counts.f_a++;
	asm volatile("" : : "r"(i) : "memory");
}

TRACED void f_b(unsigned long i)
{
	counts.f_b++;
	asm volatile("" : : "r"(i) : "memory");
	f_leaf();
	asm volatile("" ::: "memory");	/* f_leaf is not the last thing f_b does */
}

/* Called with interrupts enabled: its records carry flags '.', the others 'd'. */
TRACED void f_irqon(void)
{
	counts.f_irqon++;
	asm volatile("" ::: "memory");
}

TRACED void run_calls(unsigned long a, unsigned long b, unsigned long irqon, struct round_counts *c)
{
	counts = (struct round_counts){ 0 };
	for (unsigned long i = 0; i < a; i++)
		f_a(i);
	for (unsigned long i = 0; i < b; i++)
		f_b(i);
	for (unsigned long i = 0; i < irqon; i++) {
		asm volatile("sti" ::: "memory");	/* the PIC is masked: nothing can come */
		f_irqon();
		asm volatile("cli" ::: "memory");
	}
	*c = counts;
}

/* ---- loop mode: every CPU alternates f_mark and f_work until told to stop */

static unsigned long loop_iters[MAX_CPUS];
static int loop_stopping;

TRACED void f_mark(void)
{
	asm volatile("" ::: "memory");
}

TRACED void f_work(void)
{
	asm volatile("" ::: "memory");
}

/* From the NMI handler (cpu.c): traced, so NMIs landing in the stub nest records. */
TRACED void f_nmi(void)
{
	asm volatile("" ::: "memory");
}

/* The hostile CPU's own traced function (hostile.c): its records are the ones it scribbles on. */
TRACED void f_h(void)
{
	asm volatile("" ::: "memory");
}

int loop_stopped(void)
{
	return __atomic_load_n(&loop_stopping, __ATOMIC_ACQUIRE);
}

/*
 * Exactly one f_mark then one f_work per iteration, so a trace of both
 * alternates on every CPU; CPU 0 ends the loops on a 'q' from the host.
 * spin: a countdown between iterations, time spent outside the stub.
 */
TRACED void loop_cpu(unsigned cpu, unsigned long spin)
{
	unsigned long n = 0;

	while (!__atomic_load_n(&loop_stopping, __ATOMIC_ACQUIRE)) {
		f_mark();
		f_work();
		for (unsigned long i = spin; i; i--)
			asm volatile("" : "+r"(i));
		n++;
		__atomic_store_n(&loop_iters[cpu], n, __ATOMIC_RELEASE);
		if (n == LOOP_RUNNING_AFTER)
			pr("PAYLOAD loop: running cpu=%u\n", cpu);
		if (cpu == 0 && !(n % LOOP_POLL_EVERY) && con_getc() == 'q')
			__atomic_store_n(&loop_stopping, 1, __ATOMIC_RELEASE);
	}
}

unsigned long loop_iterations(unsigned cpu)
{
	return __atomic_load_n(&loop_iters[cpu], __ATOMIC_ACQUIRE);
}
