// SPDX-License-Identifier: GPL-2.0
/*
 * vt.insncost=N (bench/insn-cost): how long this host takes for each kind
 * of instruction the guest stubs are made of, at CPL0 with interrupts
 * off. Each kind runs N times in an unrolled loop (8 per iteration); the
 * TSC ticks for 8,000 of them are printed, from which bench/insn-cost
 * makes ratios against plain register arithmetic. The software-assisted
 * host of HOST-KVM.md emulates guest kernel code, and some instructions
 * there cost far more than others: the stub's design follows what this
 * measures.
 *
 *   PAYLOAD insncost KIND ticks_per_8000=N
 */
#include "tests/guest/payload/payload.h"

static uint64_t cell[8] __attribute__((aligned(64)));

#define REP8(s) s s s s s s s s

#define KIND(name, body, ...)                                                      \
	static NOTRACE uint64_t name(unsigned long n)                              \
	{                                                                          \
		uint64_t t0 = rdtsc();                                             \
		for (unsigned long i = 0; i < n; i++)                              \
			asm volatile(REP8(body) __VA_ARGS__);                      \
		return rdtsc() - t0;                                               \
	}

KIND(k_loop, "", ::: "memory")
KIND(k_add, "addq $1, %%rax\n\t", ::: "rax", "memory")
KIND(k_load, "movq %0, %%rax\n\t", : : "m"(cell[0]) : "rax", "memory")
KIND(k_store, "movq %%rax, %0\n\t", : "=m"(cell[0]) : : "rax", "memory")
KIND(k_gsload, "movq %%gs:0, %%rax\n\t", ::: "rax", "memory")
KIND(k_pushpop, "pushq %%rax\n\tpopq %%rax\n\t", ::: "memory")
KIND(k_pushfpopf, "pushfq\n\tpopfq\n\t", ::: "memory", "cc")
KIND(k_cli, "cli\n\t", ::: "memory")
KIND(k_rdtsc, "rdtsc\n\t", ::: "rax", "rdx", "memory")
KIND(k_lockcmpxchg, "xorl %%eax, %%eax\n\tlock cmpxchgq %%rdx, %0\n\t", : "+m"(cell[1]) : "d"(0UL) : "rax", "memory", "cc")
KIND(k_cmpxchg, "xorl %%eax, %%eax\n\tcmpxchgq %%rdx, %0\n\t", : "+m"(cell[1]) : "d"(0UL) : "rax", "memory", "cc")
KIND(k_lockinc, "lock incq %0\n\t", : "+m"(cell[2]) : : "memory", "cc")
KIND(k_xchg, "xchgq %%rax, %0\n\t", : "+m"(cell[3]) : : "rax", "memory")
KIND(k_callret, "call 1f\n\tjmp 2f\n1:\tret\n2:\n\t", ::: "memory")
KIND(k_jcc, "testq %%rax, %%rax\n\tjnz 1f\n1:\n\t", ::: "memory", "cc")
KIND(k_imul, "imulq %%rax, %%rax\n\t", ::: "rax", "memory")

NOTRACE void insncost_run(unsigned long n)
{
	static const struct {
		const char *name;
		uint64_t (*fn)(unsigned long);
	} kinds[] = {
		{ "loop", k_loop }, { "add", k_add }, { "load", k_load }, { "store", k_store },
		{ "gs-load", k_gsload }, { "push+pop", k_pushpop }, { "pushf+popf", k_pushfpopf },
		{ "cli", k_cli }, { "rdtsc", k_rdtsc }, { "xor+lock-cmpxchg", k_lockcmpxchg },
		{ "xor+cmpxchg", k_cmpxchg }, { "lock-inc", k_lockinc }, { "xchg-mem", k_xchg },
		{ "call+jmp+ret", k_callret }, { "test+jnz", k_jcc }, { "imul", k_imul },
	};

	asm volatile("cli" ::: "memory");
	for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		uint64_t t = kinds[k].fn(n);

		pr("PAYLOAD insncost %s ticks_per_8000=%lu\n", kinds[k].name,
		   (unsigned long)(t * 1000 / n));
	}
}
