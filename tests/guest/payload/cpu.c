// SPDX-License-Identifier: GPL-2.0
/*
 * CPUs: per-CPU data the stub reads the way it reads Linux's (%gs:cpu_number),
 * the IDT (NMI handled, everything else fatal), and bringing up the APs with
 * INIT and SIPI through the local APIC.
 */
#include "tests/guest/payload/payload.h"

#define APIC_SVR      0xfee000f0UL
#define APIC_ICR_LOW  0xfee00300UL
#define APIC_ICR_HIGH 0xfee00310UL
#define APIC_SVR_ENABLE  0x100
#define ICR_INIT      0x4500	/* INIT, level assert */
#define ICR_SIPI      0x4600
#define ICR_BUSY      0x1000
#define AP_WAIT_TSC   20000000000ULL	/* seconds on any TSC; emulated code is slow */

#define PIC1_DATA     0x21
#define PIC2_DATA     0xa1

char percpu_areas[MAX_CPUS][PERCPU_AREA] __attribute__((aligned(64)));
static char ap_stacks[MAX_CPUS][STACK_SIZE] __attribute__((aligned(16)));

/* head.S reads these when an AP arrives. */
uint64_t ap_boot_stack, ap_boot_gsbase;
unsigned ap_boot_cpu;
static volatile unsigned cpus_up = 1;
static void (*ap_work)(unsigned cpu);

struct idt_gate {
	uint16_t off_lo, sel;
	uint8_t ist, type;
	uint16_t off_mid;
	uint32_t off_hi, zero;
};
static struct idt_gate idt[NR_VECTORS] __attribute__((aligned(16)));

extern char idt_stubs[], nmi_entry[], gdt[], early_top_pgt[], ap_start64[];
extern char ap_trampoline[], ap_trampoline_end[], tramp_gdt_base[], tramp_cr3[], tramp_entry[];
void ap_main(unsigned cpu);
uint64_t *payload_exception(uint64_t *frame);

static inline void outb(uint16_t port, uint8_t v)
{
	asm volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

void cpu_relax(void)
{
	asm volatile("pause" ::: "memory");
}

unsigned cpu_self(void)
{
	unsigned v;

	asm volatile("movl %%gs:cpu_number, %0" : "=r"(v));
	return v;
}

unsigned long cpu_nmis(unsigned cpu)
{
	return __atomic_load_n((unsigned long *)(percpu_areas[cpu] + (uintptr_t)&nmi_count), __ATOMIC_RELAXED);
}

static void idt_set(unsigned vector, const void *handler)
{
	uint64_t a = (uint64_t)handler;

	idt[vector] = (struct idt_gate){
		.off_lo = (uint16_t)a, .sel = SEL_CODE64, .type = 0x8e,	/* present interrupt gate */
		.off_mid = (uint16_t)(a >> 16), .off_hi = (uint32_t)(a >> 32),
	};
}

void cpu_load_idt(void)
{
	struct __attribute__((packed)) {
		uint16_t limit;
		uint64_t base;
	} desc = { sizeof(idt) - 1, (uint64_t)idt };

	asm volatile("lidt %0" : : "m"(desc));
}

void cpu_init_bsp(void)
{
	/* Linux masks the legacy PIC too: nothing may interrupt but an NMI. */
	outb(PIC1_DATA, 0xff);
	outb(PIC2_DATA, 0xff);
	for (unsigned v = 0; v < NR_VECTORS; v++)
		idt_set(v, idt_stubs + v * IDT_STUB_SIZE);
	idt_set(VECTOR_NMI, nmi_entry);
	cpu_load_idt();
}

void nmi_handler(void)
{
	asm volatile("incq %%gs:nmi_count" ::: "memory");
	f_nmi();
}

/* Returns (to entry.S's iretq) only for a fault a hostile mode expected. */
uint64_t *payload_exception(uint64_t *frame)
{
	/* Vectors whose frame carries an error code before RIP. */
	static const uint32_t with_error = 1u << 8 | 1u << 10 | 1u << 11 | 1u << 12 | 1u << 13 |
					   1u << 14 | 1u << 17 | 1u << 21 | 1u << 29 | 1u << 30;
	unsigned long vector = frame[0], cr2;
	int err = vector < 32 && (with_error >> vector & 1);

	asm volatile("mov %%cr2, %0" : "=r"(cr2));
	if (hostile_fixup(frame + (err ? 2 : 1), vector, err ? frame[1] : 0, cr2))
		return frame + (err ? 2 : 1);
	pr("PAYLOAD FATAL: vector %lu on cpu %u at rip %lx (error %lx, cr2 %lx)\n", vector, cpu_self(),
	   (unsigned long)frame[err ? 2 : 1], err ? (unsigned long)frame[1] : 0UL, cr2);
	reset();
}

static inline void apic_write(unsigned long reg, uint32_t v)
{
	*(volatile uint32_t *)reg = v;
}

static inline uint32_t apic_read(unsigned long reg)
{
	return *(volatile uint32_t *)reg;
}

static void apic_ipi(unsigned apic_id, uint32_t icr)
{
	apic_write(APIC_ICR_HIGH, apic_id << 24);
	apic_write(APIC_ICR_LOW, icr);
	while (apic_read(APIC_ICR_LOW) & ICR_BUSY)
		cpu_relax();
}

void ap_main(unsigned cpu)
{
	cpu_load_idt();
	__atomic_store_n((int *)(percpu_areas[cpu] + (uintptr_t)&cpu_number), (int)cpu, __ATOMIC_RELAXED);
	__atomic_store_n(&cpus_up, cpu + 1, __ATOMIC_RELEASE);
	if (ap_work)
		ap_work(cpu);
	for (;;)
		asm volatile("cli; hlt");
}

/*
 * One AP at a time: the trampoline and the ap_boot_* words are shared.
 * vmmtrace gives vCPU n the local APIC ID n. Returns the CPUs now up.
 */
unsigned cpu_start_aps(unsigned ncpus, void (*work)(unsigned cpu))
{
	unsigned long tramp_len = (unsigned long)(ap_trampoline_end - ap_trampoline);
	char *low = (char *)(uintptr_t)TRAMP_PHYS;

	ap_work = work;
	memcpy(low, ap_trampoline, tramp_len);
	*(uint32_t *)(low + (tramp_gdt_base - ap_trampoline)) = (uint32_t)((uint64_t)gdt - KERNEL_MAP);
	*(uint32_t *)(low + (tramp_cr3 - ap_trampoline)) = (uint32_t)((uint64_t)early_top_pgt - KERNEL_MAP);
	*(uint64_t *)(low + (tramp_entry - ap_trampoline)) = (uint64_t)ap_start64;
	apic_write(APIC_SVR, apic_read(APIC_SVR) | APIC_SVR_ENABLE);
	for (unsigned cpu = 1; cpu < ncpus && cpu < MAX_CPUS; cpu++) {
		uint64_t start = rdtsc();

		ap_boot_cpu = cpu;
		ap_boot_stack = (uint64_t)(ap_stacks[cpu] + STACK_SIZE);
		ap_boot_gsbase = (uint64_t)percpu_areas[cpu];
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		apic_ipi(cpu, ICR_INIT);
		apic_ipi(cpu, ICR_SIPI | TRAMP_PHYS >> 12);
		apic_ipi(cpu, ICR_SIPI | TRAMP_PHYS >> 12);
		while (__atomic_load_n(&cpus_up, __ATOMIC_ACQUIRE) <= cpu) {
			if (rdtsc() - start > AP_WAIT_TSC) {
				pr("PAYLOAD FATAL: cpu %u did not start\n", cpu);
				reset();
			}
			cpu_relax();
		}
	}
	return cpus_up;
}
