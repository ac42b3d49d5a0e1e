/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The KVM tier's payload: a tiny freestanding x86_64 "kernel" that vmmtrace
 * boots like a vmlinux (docs/TEST-GUEST.md, "The payload"). Constants shared
 * by its assembler and C files, then the C declarations.
 */
#ifndef PAYLOAD_H
#define PAYLOAD_H

/* Linux's layout: the image at 16 MiB, seen at __START_KERNEL_map + 16 MiB. */
#define KERNEL_MAP        0xffffffff80000000
#define LOAD_PHYS         0x1000000

/* GDT selectors; code64 and data match vmmtrace's boot GDT. */
#define SEL_CODE32        0x08
#define SEL_CODE64        0x10
#define SEL_DATA          0x18
#define GDT_ENTRIES       4

#define MSR_EFER          0xc0000080
#define MSR_GS_BASE       0xc0000101
#define EFER_LME          0x100
#define EFER_NX           0x800	/* the stub's rings are mapped no-execute */
#define CR0_PE            0x1
#define CR0_PG            0x80000000
#define CR0_CD_NW         0x60000000
#define CR4_PAE           0x20

/* The AP trampoline runs from low memory (SIPI vector = page number). */
#define TRAMP_PHYS        0x10000

#define MAX_CPUS          8
#define STACK_SIZE        16384
#define PERCPU_AREA       256	/* bytes per CPU; the linker script checks .data..percpu fits */

#define VECTOR_NMI        2
#define NR_VECTORS        256
#define IDT_STUB_SIZE     16	/* entry.S: one stub per vector, this far apart */

#ifndef __ASSEMBLER__
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define NOTRACE   __attribute__((no_instrument_function))
/* Traced functions stay real calls from their own caller: exact parents. */
#define TRACED    __attribute__((noinline, noclone, used))
#define NORETURN  __attribute__((noreturn))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Kernel command line: vt.KEY=NUMBER, 0 when absent. */
struct params {
	unsigned long a, b, irqon;	/* round 1: f_a, f_b (-> f_leaf), f_irqon calls */
	unsigned long ftrace;		/* 1: ftrace_init, then round 2 */
	unsigned long a2, b2;		/* round 2 */
	unsigned long cpus;		/* CPUs to bring up (1 when absent) */
	unsigned long loop;		/* 1: every CPU loops f_mark/f_work until 'q' on COM1 */
	unsigned long spin;		/* loop: countdown per iteration, outside the stub */
	unsigned long hostile;		/* a hostile mode (hostile.c), with 2 CPUs but the PTE one */
	unsigned long insncost;		/* > 0: time each instruction kind that many x 8 times (insncost.c) */
};

/* console.c */
void con_init(void);
void pr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int con_getc(void);
NORETURN void reset(void);
void params_parse(const char *cmdline, struct params *p);
void *memcpy(void *dst, const void *src, unsigned long n);
void *memset(void *dst, int c, unsigned long n);

/* head.S: per-CPU data, linked at 0; a symbol's value is its %gs offset */
extern int cpu_number;
extern unsigned long nmi_count;

/* cpu.c */
void cpu_init_bsp(void);
void cpu_load_idt(void);
unsigned cpu_self(void);
unsigned long cpu_nmis(unsigned cpu);
unsigned cpu_start_aps(unsigned ncpus, void (*work)(unsigned cpu));
uint64_t rdtsc(void);
void cpu_relax(void);
void nmi_handler(void);

/* insncost.c */
void insncost_run(unsigned long n);

/* calls.c */
struct round_counts {
	unsigned long f_a, f_b, f_leaf, f_irqon;
};
void run_calls(unsigned long a, unsigned long b, unsigned long irqon, struct round_counts *c);
void loop_cpu(unsigned cpu, unsigned long spin);
unsigned long loop_iterations(unsigned cpu);
void f_nmi(void);
int loop_stopped(void);
void f_h(void);
void f_mark(void);

/* ftrace.c */
struct ftrace_result {
	unsigned long slots, nopped, mismatched;
	uint64_t first_bad;
};
void ftrace_init(void);
extern struct ftrace_result ftrace_result;

/* hostile.c */
void hostile_run(unsigned long mode, unsigned long a, unsigned long spin);
int hostile_fixup(uint64_t *iret, unsigned long vector, unsigned long error, unsigned long cr2);
#endif

#endif
