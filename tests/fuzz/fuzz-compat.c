// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the two pieces of the x86_64 compatibility layer
 * that read what the guest controls: the decoder of the instructions it
 * completes (compat_insn_decode, over instruction bytes) and the page
 * walker (pagewalk.c, over page tables in guest RAM). Input: a control
 * byte (CR0.WP, CR4.LA57, CR0.PG, write), the GVA, CR3, an access length,
 * 16 instruction bytes, then guest RAM (zero-filled to its size). RAM is
 * two regions behind a struct vm with no KVM, as tests/unit/test-pagewalk.c
 * builds it: 64 KiB at 0 and 4 KiB at 4 GiB.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/kvm/vm.h"
#include "vmm/kvm-x86_64/compat-insn.h"
#include "vmm/kvm-x86_64/pagewalk.h"
#include "vmm/kvm-x86_64/regs.h"

#define LOW_SIZE  0x10000ull
#define HIGH_GPA  0x100000000ull
#define HIGH_SIZE 0x1000ull
#define HDR (1 + 8 + 8 + 1 + 16)

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void fuzz_decode(const uint8_t *b, unsigned len, const uint8_t *regs_src)
{
	struct insn in, again;
	unsigned assist = ~0u, assist2 = ~0u;
	struct kvm_regs r;
	struct kvm_sregs s;

	if (compat_insn_decode(b, len, &in, &assist))
		return;
	if (!in.pos || in.pos > len || in.pos > 15 || assist >= ASSIST_COUNT)
		abort();
	if (in.base < -1 || in.base > 15 || in.index < -1 || in.index > 15 || in.scale < 0 ||
	    in.scale > 3)
		abort();
	/* It reads no byte past the instruction: given only those, the same. */
	if (compat_insn_decode(b, in.pos, &again, &assist2) || again.pos != in.pos ||
	    assist2 != assist || again.modrm != in.modrm || again.disp != in.disp)
		abort();
	/* Registers from the header's GVA and CR3 bytes: any values will do. */
	memset(&r, 0, sizeof(r));
	memcpy(&r, regs_src, 16);
	r.rip = get64(regs_src + 8);
	memset(&s, 0, sizeof(s));
	s.fs.base = get64(regs_src);
	s.gs.base = ~s.fs.base;
	compat_insn_address(&in, &r, &s);
}

static int rc_ok(int rc)
{
	return rc == 0 || rc == -EFAULT || rc == -EACCES || rc == -EINVAL;
}

static void fuzz_walk(struct vm *vm, uint8_t ctl, uint64_t gva, uint64_t cr3, unsigned len)
{
	struct kvm_sregs s;
	uint64_t gpa = 0, fault = 0;
	uint8_t buf[256], back[256];
	int write = ctl & 8, rc, rrc, crc;

	memset(&s, 0, sizeof(s));
	s.cr0 = X86_CR0_PE | (ctl & 4 ? X86_CR0_PG : 0) | (ctl & 1 ? X86_CR0_WP : 0);
	s.cr4 = X86_CR4_PAE | (ctl & 2 ? X86_CR4_LA57 : 0);
	s.efer = ctl & 4 ? X86_EFER_LME | X86_EFER_LMA : 0;
	s.cr3 = cr3;

	rc = pagewalk_translate(vm, &s, gva, write, &gpa);
	if (!rc_ok(rc) || (!rc && (gpa & 0xfff) != (gva & 0xfff)))
		abort();	/* every page size keeps the low 12 bits */
	pagewalk_pf_error(rc, write);

	crc = pagewalk_check(vm, &s, gva, len, 0, &fault);
	rrc = pagewalk_read(vm, &s, gva, buf, len);
	if (!rc_ok(crc) || !rc_ok(rrc) || (!crc != !rrc))
		abort();	/* check and read agree on what is reachable */
	if (crc && len && (fault < gva ? fault + (UINT64_MAX - gva) + 1 : fault - gva) >= len)
		abort();	/* the fault lies in the range asked for */
	if (!rrc && len && !pagewalk_translate(vm, &s, gva, 0, &gpa) && vm_gpa_ptr(vm, gpa, 1) &&
	    *(uint8_t *)vm_gpa_ptr(vm, gpa, 1) != buf[0])
		abort();	/* the read's first byte is where translate points */

	memset(buf, 0xa5, sizeof(buf));
	rc = pagewalk_write(vm, &s, gva, buf, len);
	if (!rc_ok(rc))
		abort();
	/* No read-back check: a self-mapping table lets a write move its own page. */
	(void)back;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vm vm;
	static uint8_t *low, *high;
	uint8_t insn[16], ctl;
	size_t rest;

	if (size < HDR)
		return 0;
	if (!low) {
		low = aligned_alloc(0x1000, LOW_SIZE);
		high = aligned_alloc(0x1000, HIGH_SIZE);
		vm.regions[0] = (struct mem_region){ 0, LOW_SIZE, low };
		vm.regions[1] = (struct mem_region){ HIGH_GPA, HIGH_SIZE, high };
		vm.nregions = 2;
	}
	ctl = data[0];
	memcpy(insn, data + 18, 16);
	fuzz_decode(insn, data[17] % 17u, data + 1);

	rest = size - HDR;
	memset(low, 0, LOW_SIZE);
	memset(high, 0, HIGH_SIZE);
	memcpy(low, data + HDR, rest < LOW_SIZE ? rest : LOW_SIZE);
	if (rest > LOW_SIZE)
		memcpy(high, data + HDR + LOW_SIZE, rest - LOW_SIZE < HIGH_SIZE ? rest - LOW_SIZE : HIGH_SIZE);
	/* CR3 in RAM half the time: the interesting walks start there. */
	fuzz_walk(&vm, ctl, get64(data + 1),
		  ctl & 0x10 ? get64(data + 9) : get64(data + 9) % LOW_SIZE, 1u + data[17] % 200u);
	return 0;
}
