// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile guests (vt.hostile=MODE, docs/TEST-GUEST.md): the payload attacks
 * vmmtrace's side of the contract (proto/trace.h) the way a compromised or
 * buggy kernel could, while a well-behaved CPU keeps making traced calls
 * the tests count exactly. In modes 1, 2, 4 and 5 CPU 1 attacks until CPU 0
 * (loop_cpu, f_mark/f_work) gets its 'q'; mode 3 runs alone on CPU 0.
 *
 *   1 rings:    scribble ring 1's head, tail and dropped, forge records
 *               (cpu numbers, flags), write the stub's read-only code page
 *   2 doorbell: ring the doorbell with ring numbers that do not exist
 *   3 pte:      clear level3_kernel_pgt[509], point it elsewhere, alias the
 *               stub region, then restore it; calls traced functions each time
 *   4 stuck:    reserve a record in ring 1 and never commit it, then keep
 *               calling (a ring the host can never drain past)
 *   5 ports:    flood emulated and unknown ports and unbacked MMIO
 *
 * Faults the attack expects (writing the read-only stub, calling through a
 * broken mapping) resume at a fix-up (hostile_fixup) and print a line:
 *
 *   PAYLOAD hostile fault: vector=V cpu=C rip=ADDR error=E cr2=ADDR
 *   PAYLOAD hostile: mode=M rounds=N faults=N forged=N doorbells=N io=N mmio=N f_h=N
 *   PAYLOAD hostile: mode=3 before=N after=N faults=N alias_magic=0|1
 */
#include "proto/trace.h"
#include "tests/guest/payload/payload.h"

#define STUB_CODE_VA   0xffffffff7fe00000UL	/* arch/x86_64/stub-map.h, vmm/kvm-x86_64/layout.h */
#define STUB_ENTRY_VA  (STUB_CODE_VA + VT_CFG_SIZE)
#define STUB_GPA       0xe0000000UL
#define STUB_CODE_OFF  0x10000UL		/* the code page's offset in the stub region */
#define STUB_L3_INDEX  509
#define PTE_TABLE      0x63
#define PTE_LARGE      0xe3
#define PTE_UC         0x18
#define CR0_WP         0x10000UL
#define UD2_PAGE_PHYS  0x2000000UL		/* 32 MiB: free RAM for a page of ud2 */
#define HOLE_BASE      0xc0000000UL		/* level2_apic_pgt maps 3..4 GiB */

enum { MODE_RINGS = 1, MODE_DOORBELL, MODE_PTE, MODE_STUCK, MODE_PORTS };

extern uint64_t level3_kernel_pgt[], level2_apic_pgt[];

/* Read by the exception entry: where an expected fault resumes, on which stack. */
uint64_t fixup_rip, fixup_rsp;

static unsigned long mode, faults, rounds, forged, doorbells, io, mmio, fh_calls;
static int attack_done;
static uint64_t hostile_pd[512] __attribute__((aligned(4096)));

int hostile_fixup(uint64_t *iret, unsigned long vector, unsigned long error, unsigned long cr2)
{
	if (!fixup_rip)
		return 0;
	pr("PAYLOAD hostile fault: vector=%lu cpu=%u rip=%lx error=%lx cr2=%lx\n", vector, cpu_self(),
	   (unsigned long)iret[0], error, cr2);
	iret[0] = fixup_rip;
	iret[3] = fixup_rsp;	/* a call that faulted at its target pushed a return address */
	fixup_rip = 0;
	faults++;
	return 1;
}

/* Each returns 1 when the access faulted (and was skipped). */
static int guarded_write(volatile uint64_t *p, uint64_t v)
{
	unsigned long before = faults;

	asm volatile("leaq 1f(%%rip), %%rax\n\t"
		     "movq %%rax, fixup_rip(%%rip)\n\t"
		     "movq %%rsp, fixup_rsp(%%rip)\n\t"
		     "movq %1, (%0)\n"
		     "1:\tmovq $0, fixup_rip(%%rip)"
		     : : "r"(p), "r"(v) : "rax", "memory");
	return __atomic_load_n(&faults, __ATOMIC_RELAXED) != before;
}

static int guarded_call(void (*fn)(void))
{
	unsigned long before = faults;

	asm volatile("leaq 1f(%%rip), %%rax\n\t"
		     "movq %%rax, fixup_rip(%%rip)\n\t"
		     "movq %%rsp, fixup_rsp(%%rip)\n\t"
		     "call *%0\n"
		     "1:\tmovq $0, fixup_rip(%%rip)"
		     : "+r"(fn) : : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
	return __atomic_load_n(&faults, __ATOMIC_RELAXED) != before;
}

static void call_fh(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		f_h();
		fh_calls++;
	}
}

static void flush_tlb(void)
{
	unsigned long cr3;

	asm volatile("mov %%cr3, %0\n\tmov %0, %%cr3" : "=r"(cr3) : : "memory");
}

static void set_wp(void)
{
	unsigned long cr0;

	asm volatile("mov %%cr0, %0" : "=r"(cr0));
	asm volatile("mov %0, %%cr0" : : "r"(cr0 | CR0_WP) : "memory");
}

static const struct vt_stub_config *cfg(void)
{
	return (const struct vt_stub_config *)STUB_CODE_VA;
}

static struct vt_ring_hdr *ring_hdr(unsigned ring)
{
	return (struct vt_ring_hdr *)(uintptr_t)(cfg()->ring_hdrs + (uint64_t)ring * VT_HDR_SIZE);
}

static struct vt_record *ring_rec(unsigned ring, uint64_t idx)
{
	return (struct vt_record *)(uintptr_t)(cfg()->ring_recs + ring * cfg()->ring_bytes) + (idx & cfg()->ring_mask);
}

/* Reserves the next index of `ring` as the stub does; the caller writes (or not) the record. */
static uint64_t ring_reserve(unsigned ring)
{
	struct vt_ring_hdr *h = ring_hdr(ring);
	uint64_t idx = __atomic_load_n(&h->head, __ATOMIC_RELAXED);

	while (!__atomic_compare_exchange_n(&h->head, &idx, idx + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
	return idx;
}

/* A complete, committed record that lies: another CPU's number, bad flags, f_mark's slot. */
static void ring_forge(unsigned ring, uint16_t cpu, uint16_t flags)
{
	uint64_t idx = ring_reserve(ring);
	struct vt_record *r = ring_rec(ring, idx);

	r->tsc = rdtsc();
	r->func = (uint64_t)f_mark;
	r->parent = (uint64_t)loop_cpu + 16;
	r->cpu = cpu;
	r->flags = flags;
	__atomic_store_n(&r->commit, (uint32_t)(idx + 1), __ATOMIC_RELEASE);
	forged++;
}

/* Mode 1: every value of ring 1 the guest can write, between legitimate calls. */
static void attack_rings(void)
{
	static const uint16_t lies[] = { 0, 7, 0xffff, 1 };
	struct vt_ring_hdr *h = ring_hdr(1);
	volatile uint64_t *magic = (volatile uint64_t *)STUB_CODE_VA;

	set_wp();	/* as Linux's CR0 has it: supervisor writes honour read-only pages */
	while (!loop_stopped()) {
		call_fh(4);
		switch (rounds % 6) {
		case 0: h->dropped = ~0UL; call_fh(1); h->dropped = 5; break;	/* backwards */
		case 1: h->tail = h->head + (1UL << 40); break;
		case 2: h->tail = ~0UL; break;
		case 3: ring_forge(1, lies[(rounds / 6) % ARRAY_SIZE(lies)], (uint16_t)(rounds & 0xfffe)); break;
		case 4: h->tail = h->head; break;	/* the ring looks empty: the stub may overwrite unread records */
		case 5:
			guarded_write(magic, 0);
			guarded_write((volatile uint64_t *)STUB_ENTRY_VA, 0xcccccccccccccccc);
			if (*magic != VT_STUB_MAGIC)
				pr("PAYLOAD FATAL: the stub's read-only page changed\n");
			break;
		}
		rounds++;
	}
	/* Last, what the host cannot recover from: a record never committed, then head going back. */
	ring_reserve(1);
	call_fh(4);
	h->head = 1;
	call_fh(4);
}

/* Mode 2: ring numbers that do not exist, at every width, one by one and with rep outs. */
static void attack_doorbell(void)
{
	uint32_t n = cfg()->nrings, port = cfg()->doorbell_port, v[16];

	while (!loop_stopped()) {
		uint32_t bad = n + (uint32_t)(rounds & 0xffff), rd;

		asm volatile("outl %0, %w1" : : "a"(bad), "Nd"(port));
		asm volatile("outl %0, %w1" : : "a"(0xffffffffu), "Nd"(port));
		asm volatile("outl %0, %w1" : : "a"(0x80000000u | n), "Nd"(port));
		asm volatile("outw %w0, %w1" : : "a"(0xfff0u), "Nd"(port));
		asm volatile("outb %b0, %w1" : : "a"(0xf0u), "Nd"(port));
		asm volatile("inl %w1, %0" : "=a"(rd) : "Nd"(port));	/* a read is not a doorbell */
		doorbells += 5;
		for (unsigned i = 0; i < ARRAY_SIZE(v); i++)
			v[i] = bad + i;
		{
			const uint32_t *p = v;
			unsigned long c = ARRAY_SIZE(v);

			asm volatile("rep outsl" : "+S"(p), "+c"(c) : "d"(port) : "memory");
		}
		doorbells += ARRAY_SIZE(v);
		rounds++;
		(void)rd;
	}
}

/* Mode 4: ring 1's oldest record stays reserved; the host must not wait for it forever. */
static void attack_stuck(void)
{
	call_fh(8);
	ring_reserve(1);
	while (!loop_stopped()) {
		call_fh(16);
		rounds++;
	}
}

/* Mode 5: ports the payload does not need (never COM1's data or the i8042 reset) and unbacked MMIO. */
static void attack_ports(void)
{
	static const uint16_t ports[] = {
		0x3f9, 0x3fa, 0x3fb, 0x3fd, 0x3fe, 0x3ff,		/* COM1 registers, reads */
		0x2f8, 0x2f9, 0x2fa, 0x2fb, 0x2fc, 0x2fd, 0x2ff,	/* COM2 */
		0x60, 0x64, 0x70, 0x71, 0x80, 0xcf8, 0xcfc, 0xd41, 0x1234, 0x5658, 0xfff8,
	};
	static const uint64_t mmio_gpa[] = { 0x8000000, 0x3ff00000, HOLE_BASE, 0xf0000000, 0xfed00000 };
	uint8_t buf[64];

	for (unsigned i = 2; i < ARRAY_SIZE(mmio_gpa); i++)
		level2_apic_pgt[(mmio_gpa[i] - HOLE_BASE) >> 21] = (mmio_gpa[i] & ~0x1fffffUL) + PTE_LARGE + PTE_UC;
	flush_tlb();
	while (!loop_stopped()) {
		for (unsigned i = 0; i < ARRAY_SIZE(ports); i++) {
			uint16_t p = ports[i];
			uint32_t l;
			uint16_t w;
			uint8_t b;

			asm volatile("inb %w1, %0" : "=a"(b) : "Nd"(p));
			asm volatile("inw %w1, %0" : "=a"(w) : "Nd"(p));
			asm volatile("inl %w1, %0" : "=a"(l) : "Nd"(p));
			io += 3;
			if (p >= 0x3f8 && p <= 0x3ff && p != 0x3ff)
				continue;	/* COM1 carries the console: only its scratch register is written */
			if (p == 0x64) {	/* any command but 0xfe, which resets */
				asm volatile("outb %b0, %w1" : : "a"(0xd1), "Nd"(p));
				io++;
				continue;
			}
			asm volatile("outb %b0, %w1" : : "a"(b ^ 0x5a), "Nd"(p));
			asm volatile("outw %w0, %w1" : : "a"((uint16_t)(w ^ 0xa5a5)), "Nd"(p));
			asm volatile("outl %0, %w1" : : "a"(l ^ (uint32_t)rounds), "Nd"(p));
			io += 3;
			(void)w;
		}
		{
			uint8_t *d = buf;
			unsigned long c = sizeof(buf);

			asm volatile("rep insb" : "+D"(d), "+c"(c) : "d"(0x1234) : "memory");
			d = buf;
			c = sizeof(buf);
			asm volatile("rep outsb" : "+S"(d), "+c"(c) : "d"(0x2f8) : "memory");
			io += 2 * sizeof(buf);
		}
		for (unsigned i = 0; i < ARRAY_SIZE(mmio_gpa); i++) {
			volatile uint32_t *m = (volatile uint32_t *)(uintptr_t)(mmio_gpa[i] + (rounds & 0xff) * 4);
			volatile uint8_t *m8 = (volatile uint8_t *)m;

			*m = (uint32_t)rounds;
			(void)*m;
			*m8 = 0xa5;
			(void)*m8;
			mmio += 4;
		}
		rounds++;
	}
}

static void hostile_ap(unsigned cpu)
{
	(void)cpu;
	switch (mode) {
	case MODE_RINGS: attack_rings(); break;
	case MODE_DOORBELL: attack_doorbell(); break;
	case MODE_STUCK: attack_stuck(); break;
	case MODE_PORTS: attack_ports(); break;
	}
	__atomic_store_n(&attack_done, 1, __ATOMIC_RELEASE);
}

/* Mode 3, CPU 0 alone: the page tables are shared, so no other CPU may call a traced function. */
static void attack_pte(unsigned long n)
{
	uint64_t saved = level3_kernel_pgt[STUB_L3_INDEX];
	volatile uint8_t *ud2 = (volatile uint8_t *)(KERNEL_MAP + UD2_PAGE_PHYS);
	volatile uint64_t *alias = (volatile uint64_t *)(STUB_CODE_VA + STUB_CODE_OFF);
	unsigned long before, alias_ok;

	call_fh(n);
	before = fh_calls;
	/* Not present: the call faults at the stub's entry. */
	level3_kernel_pgt[STUB_L3_INDEX] = 0;
	flush_tlb();
	guarded_call(f_h);
	/* Elsewhere: a page of ud2 where the stub's code was. */
	for (unsigned i = 0; i < 4096; i += 2) {
		ud2[i] = 0x0f;
		ud2[i + 1] = 0x0b;
	}
	hostile_pd[511] = UD2_PAGE_PHYS + PTE_LARGE;
	level3_kernel_pgt[STUB_L3_INDEX] = ((uint64_t)hostile_pd - KERNEL_MAP) + PTE_TABLE;
	flush_tlb();
	guarded_call(f_h);
	/* The stub region itself, writable: nothing but the guest's own page tables protects it. */
	hostile_pd[511] = STUB_GPA + PTE_LARGE;
	flush_tlb();
	alias_ok = *alias == VT_STUB_MAGIC;
	*alias = VT_STUB_MAGIC;	/* a write the host must not depend on: the same value */
	level3_kernel_pgt[STUB_L3_INDEX] = saved;
	flush_tlb();
	call_fh(n);
	pr("PAYLOAD hostile: mode=3 before=%lu after=%lu faults=%lu alias_magic=%lu\n", before, fh_calls - before,
	   faults, alias_ok);
}

void hostile_run(unsigned long m, unsigned long a, unsigned long spin)
{
	mode = m;
	if (m == MODE_PTE) {
		attack_pte(a ? a : 100);
		return;
	}
	if (m != MODE_RINGS && m != MODE_DOORBELL && m != MODE_STUCK && m != MODE_PORTS) {
		pr("PAYLOAD FATAL: vt.hostile=%lu is no mode\n", m);
		reset();
	}
	if (cpu_start_aps(2, hostile_ap) < 2) {
		pr("PAYLOAD FATAL: vt.hostile=%lu needs --cpus 2\n", m);
		reset();
	}
	loop_cpu(0, spin);
	while (!__atomic_load_n(&attack_done, __ATOMIC_ACQUIRE))
		cpu_relax();
	pr("PAYLOAD loop: cpu=0 iterations=%lu nmis=%lu\n", loop_iterations(0), cpu_nmis(0));
	pr("PAYLOAD hostile: mode=%lu rounds=%lu faults=%lu forged=%lu doorbells=%lu io=%lu mmio=%lu f_h=%lu\n", m,
	   rounds, faults, forged, doorbells, io, mmio, fh_calls);
}
