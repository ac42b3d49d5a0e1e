// SPDX-License-Identifier: GPL-2.0
/*
 * HOST-KVM §2: instructions this host's KVM emulator cannot execute at CPL0
 * end KVM_RUN with an emulation failure. The ones a Linux guest meets are
 * completed here: fwait is skipped (no x87 exception can be pending: the
 * guest kernel does not unmask them), int3 is delivered to the guest as #BP
 * (its own text patching relies on that), and the MXCSR/x87 control and
 * status instructions act on the state KVM_GET_FPU/KVM_SET_FPU expose, with
 * memory operands reached through the guest's page tables. The XSAVE family
 * is in compat-xsave.c.
 */
#include <errno.h>
#include <string.h>

#include "vmm/kvm-x86_64/compat-insn.h"
#include "vmm/kvm-x86_64/pagewalk.h"
#include "vmm/kvm-x86_64/regs.h"
#include "vmm/kvm/kvm.h"
#include "vmm/util/log.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

static int insn_byte(struct insn *in, uint8_t *v)
{
	if (in->pos >= in->avail)
		return -EINVAL;
	*v = in->b[in->pos++];
	return 0;
}

static void insn_prefixes(struct insn *in)
{
	while (in->pos < in->avail) {
		uint8_t c = in->b[in->pos];

		if (c == 0x64)
			in->seg_fs = 1;
		else if (c == 0x65)
			in->seg_gs = 1;
		else if (c == 0x67)
			in->addr32 = 1;
		else if (c == 0x66 || c == 0xf2 || c == 0xf3)
			in->simd_prefix = 1;	/* selects another 0f ae instruction */
		else if (c != 0xf0 && c != 0x2e && c != 0x36 && c != 0x3e && c != 0x26)
			break;
		in->pos++;
	}
	if (in->pos < in->avail && (in->b[in->pos] & 0xf0) == 0x40)
		in->rex = in->b[in->pos++];
}

/* ModRM, SIB and displacement of a memory operand (64-bit addressing). */
static int insn_modrm(struct insn *in)
{
	uint8_t mod, rm, sib, d8;

	if (insn_byte(in, &in->modrm))
		return -EINVAL;
	in->has_modrm = 1;
	mod = in->modrm >> 6;
	rm = in->modrm & 7;
	in->base = in->index = -1;
	if (mod == 3)
		return 0;
	if (rm == 4) {
		if (insn_byte(in, &sib))
			return -EINVAL;
		in->scale = sib >> 6;
		in->index = ((sib >> 3) & 7) | ((in->rex & 2) << 2);
		if (in->index == 4)
			in->index = -1;
		in->base = (sib & 7) | ((in->rex & 1) << 3);
		if ((sib & 7) == 5 && mod == 0) {
			in->base = -1;
			mod = 2;	/* disp32, no base */
		}
	} else if (rm == 5 && mod == 0) {
		in->rip_rel = 1;
		mod = 2;
	} else {
		in->base = rm | ((in->rex & 1) << 3);
	}
	if (mod == 1) {
		if (insn_byte(in, &d8))
			return -EINVAL;
		in->disp = (int8_t)d8;
	} else if (mod == 2) {
		if (in->pos + 4 > in->avail)
			return -EINVAL;
		memcpy(&in->disp, in->b + in->pos, 4);
		in->pos += 4;
	}
	return 0;
}

static uint64_t insn_reg(const struct kvm_regs *r, int n)
{
	const uint64_t v[16] = { r->rax, r->rcx, r->rdx, r->rbx, r->rsp, r->rbp, r->rsi, r->rdi,
				 r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15 };
	return v[n & 15];
}

uint64_t compat_insn_address(const struct insn *in, const struct kvm_regs *r,
			    const struct kvm_sregs *s)
{
	uint64_t ea = (uint64_t)(int64_t)in->disp;

	if (in->rip_rel)
		ea += r->rip + in->pos;
	if (in->base >= 0)
		ea += insn_reg(r, in->base);
	if (in->index >= 0)
		ea += insn_reg(r, in->index) << in->scale;
	if (in->addr32)
		ea &= 0xffffffff;
	if (in->seg_fs)
		ea += s->fs.base;
	if (in->seg_gs)
		ea += s->gs.base;
	return ea;
}

static int assist_fpu(struct assist_ctx *c, unsigned assist)
{
	struct vm *vm = c->vcpu->vm;
	struct kvm_fpu fpu;
	uint64_t ea = 0;
	uint32_t v32 = 0;
	uint16_t v16 = 0;

	if (kvm_ioctl(c->vcpu->fd, KVM_GET_FPU, &fpu, NULL) < 0)
		return -EIO;
	if (c->in.has_modrm && (c->in.modrm >> 6) != 3)
		ea = compat_insn_address(&c->in, &c->regs, &c->sregs);
	switch (assist) {
	case ASSIST_LDMXCSR:
		if (pagewalk_read(vm, &c->sregs, ea, &v32, 4))
			return -EFAULT;
		fpu.mxcsr = v32;
		break;
	case ASSIST_STMXCSR:
		if (pagewalk_write(vm, &c->sregs, ea, &fpu.mxcsr, 4))
			return -EFAULT;
		return 0;
	case ASSIST_FNSTSW:
		if (!c->in.has_modrm) {	/* fnstsw %ax */
			c->regs.rax = (c->regs.rax & ~0xffffULL) | fpu.fsw;
			return 0;
		}
		return pagewalk_write(vm, &c->sregs, ea, &fpu.fsw, 2) ? -EFAULT : 0;
	case ASSIST_FLDCW:
		if (pagewalk_read(vm, &c->sregs, ea, &v16, 2))
			return -EFAULT;
		fpu.fcw = v16;
		break;
	case ASSIST_FNCLEX:
		fpu.fsw &= ~(X86_FSW_EXCEPTIONS | X86_FSW_B);
		break;
	case ASSIST_EMMS:
		fpu.ftwx = 0;		/* abridged tag word: every register empty */
		break;
	}
	return kvm_ioctl(c->vcpu->fd, KVM_SET_FPU, &fpu, NULL) < 0 ? -EIO : 0;
}

/* Queues exception nr for the vCPU's next entry; the one path for every injection here. */
static int assist_inject(struct vcpu *vcpu, unsigned nr, int has_error, uint32_t error)
{
	struct kvm_vcpu_events ev;

	if (kvm_ioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, &ev, NULL) < 0)
		return -EIO;
	ev.exception.injected = 1;
	ev.exception.nr = nr;
	ev.exception.has_error_code = has_error;
	ev.exception.error_code = error;
	ev.flags = 0;
	return kvm_ioctl(vcpu->fd, KVM_SET_VCPU_EVENTS, &ev, NULL) < 0 ? -EIO : 0;
}

/*
 * An exception the instruction raises instead of completing (#GP, or #PF
 * when its memory operand is not reachable the way it would access it):
 * injected with RIP left on the instruction, as a fault. Returns 1.
 */
int compat_insn_fault(struct assist_ctx *c, unsigned nr, uint32_t error, uint64_t cr2)
{
	log_debug("vCPU %u: assisted instruction at 0x%llx raises vector %u (error 0x%x, address 0x%llx)",
		  c->vcpu->id, (unsigned long long)c->regs.rip, nr, error, (unsigned long long)cr2);
	if (nr == X86_VEC_PF) {
		c->sregs.cr2 = cr2;
		if (kvm_ioctl(c->vcpu->fd, KVM_SET_SREGS, &c->sregs, NULL) < 0)
			return -EIO;
	}
	return assist_inject(c->vcpu, nr, 1, error) ? -EIO : 1;
}

/*
 * The present code or data descriptor in the GDT that the selector operand
 * of lsl or verw names: 1 and *desc, 0 for none (null, LDT, out of the
 * GDT, not present, or a system descriptor the kernel never asks about),
 * -EFAULT when the operand cannot be read.
 */
static int assist_selector_desc(struct assist_ctx *c, uint64_t *desc)
{
	struct vm *vm = c->vcpu->vm;
	int rm = (c->in.modrm & 7) | ((c->in.rex & 1) << 3);
	uint16_t sel;

	if ((c->in.modrm >> 6) == 3)
		sel = (uint16_t)insn_reg(&c->regs, rm);
	else if (pagewalk_read(vm, &c->sregs, compat_insn_address(&c->in, &c->regs, &c->sregs), &sel, 2))
		return -EFAULT;
	if (!(sel & ~7) || (sel & 4) || (sel | 7) > c->sregs.gdt.limit ||
	    pagewalk_read(vm, &c->sregs, c->sregs.gdt.base + (sel & ~7), desc, 8))
		return 0;
	return (*desc & X86_DESC_P) && (*desc & X86_DESC_S);
}

/*
 * verw: 6.x kernels run it with __KERNEL_DS's selector to clear the CPU's
 * buffers on every return to user space (the MDS, TAA, MMIO and RFDS
 * mitigations, CLEAR_CPU_BUFFERS), which this host's emulator cannot.
 * Its architectural effect at CPL0 is ZF: 1 for a writable data segment
 * (SDM), else 0; the buffers it clears are the host CPU's business.
 */
static int assist_verw(struct assist_ctx *c)
{
	uint64_t desc;
	int rc = assist_selector_desc(c, &desc);

	if (rc < 0)
		return rc;
	c->regs.rflags &= ~X86_RFLAGS_ZF;
	if (rc && !(desc & X86_DESC_CODE) && (desc & X86_DESC_WRITABLE))
		c->regs.rflags |= X86_RFLAGS_ZF;
	return 0;
}

/*
 * lsl: the kernel reads its CPU number from the limit of the per-CPU
 * segment this way (the NMI and paranoid entry paths). SDM: ZF=1 and the
 * (granularity-scaled) limit for a valid GDT descriptor, else ZF=0.
 */
static int assist_lsl(struct assist_ctx *c)
{
	uint64_t desc, limit;
	__u64 *dst;
	int reg = ((c->in.modrm >> 3) & 7) | ((c->in.rex & 4) << 1);
	int rc = assist_selector_desc(c, &desc);

	if (rc < 0)
		return rc;
	c->regs.rflags &= ~X86_RFLAGS_ZF;
	if (!rc)
		return 0;	/* ZF=0, destination kept */
	limit = (desc & 0xffff) | ((desc >> 32) & 0xf0000);
	if (desc & X86_DESC_G)
		limit = (limit << 12) | 0xfff;
	{
		__u64 *regs[16] = { &c->regs.rax, &c->regs.rcx, &c->regs.rdx, &c->regs.rbx,
				       &c->regs.rsp, &c->regs.rbp, &c->regs.rsi, &c->regs.rdi,
				       &c->regs.r8, &c->regs.r9, &c->regs.r10, &c->regs.r11,
				       &c->regs.r12, &c->regs.r13, &c->regs.r14, &c->regs.r15 };
		dst = regs[reg & 15];
	}
	*dst = (c->in.rex & 8) ? limit : (uint32_t)limit;	/* 32-bit writes zero-extend */
	c->regs.rflags |= X86_RFLAGS_ZF;
	return 0;
}

/* Decodes the failing instruction; returns the assist or -1 if none applies. */
static int assist_decode(struct insn *in)
{
	uint8_t op, op2 = 0;

	insn_prefixes(in);
	if (insn_byte(in, &op))
		return -1;
	switch (op) {
	case 0x9b: return ASSIST_FWAIT;
	case 0xcc: return ASSIST_INT3;
	case 0x0f:
		if (insn_byte(in, &op2))
			return -1;
		if (op2 == 0x77)
			return ASSIST_EMMS;
		if (op2 == 0x03)
			return insn_modrm(in) ? -1 : ASSIST_LSL;
		if (op2 == 0x00)	/* 0f 00 /5 verw */
			return insn_modrm(in) || ((in->modrm >> 3) & 7) != 5 ? -1 : ASSIST_VERW;
		if (op2 == 0x01) {	/* 0f 01 d0 xgetbv, 0f 01 d1 xsetbv */
			if (in->simd_prefix || insn_byte(in, &op2) || (op2 != 0xd0 && op2 != 0xd1))
				return -1;
			return op2 == 0xd0 ? ASSIST_XGETBV : ASSIST_XSETBV;
		}
		if (op2 != 0xae || in->simd_prefix || insn_modrm(in) || (in->modrm >> 6) == 3)
			return -1;
		switch ((in->modrm >> 3) & 7) {
		case 2: return ASSIST_LDMXCSR;
		case 3: return ASSIST_STMXCSR;
		case 4: return ASSIST_XSAVE;
		case 5: return ASSIST_XRSTOR;
		case 6: return ASSIST_XSAVE;	/* xsaveopt may write all that xsave writes */
		default: return -1;
		}
	case 0xdf:
		if (in->pos < in->avail && in->b[in->pos] == 0xe0) {
			in->pos++;
			return ASSIST_FNSTSW;
		}
		return -1;
	case 0xdb:
		if (in->pos < in->avail && in->b[in->pos] == 0xe2) {
			in->pos++;
			return ASSIST_FNCLEX;
		}
		return -1;
	case 0xdd:
	case 0xd9:
		if (insn_modrm(in) || (in->modrm >> 6) == 3)
			return -1;
		if (op == 0xdd && ((in->modrm >> 3) & 7) == 7)
			return ASSIST_FNSTSW;
		if (op == 0xd9 && ((in->modrm >> 3) & 7) == 5)
			return ASSIST_FLDCW;
		return -1;
	default:
		return -1;
	}
}

int compat_insn_decode(const uint8_t *bytes, unsigned len, struct insn *in, unsigned *assist)
{
	int a;

	memset(in, 0, sizeof(*in));
	if (len > X86_INSN_MAX_LEN)
		len = X86_INSN_MAX_LEN;	/* byte 16 on cannot be part of an instruction */
	memcpy(in->b, bytes, len);
	in->avail = len;
	a = assist_decode(in);
	if (a < 0)
		return -ENOTSUP;
	*assist = (unsigned)a;
	return 0;
}

/*
 * int3 is a trap: the guest's #BP handler expects the saved RIP after the
 * int3, so RIP moves first and the exception is injected with no length.
 */
static int assist_int3(struct assist_ctx *c)
{
	return assist_inject(c->vcpu, X86_VEC_BP, 0, 0);
}

int compat_insn_bytes(struct vcpu *vcpu, const struct kvm_sregs *sregs, uint64_t rip,
		      uint8_t *buf, unsigned *len)
{
	struct kvm_run *run = vcpu->run;

	if (run->emulation_failure.ndata >= 2 &&
	    (run->emulation_failure.flags & KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES) &&
	    run->emulation_failure.insn_size && run->emulation_failure.insn_size <= X86_INSN_MAX_LEN) {
		*len = run->emulation_failure.insn_size;
		memcpy(buf, run->emulation_failure.insn_bytes, *len);
		return 0;
	}
	*len = X86_INSN_MAX_LEN;
	while (*len && pagewalk_read(vcpu->vm, sregs, rip, buf, *len))
		(*len)--;	/* the instruction may end just before an unmapped page */
	return *len ? 0 : -EFAULT;
}

int compat_insn_assist(struct vcpu *vcpu)
{
	struct assist_ctx c = { .vcpu = vcpu };
	uint8_t bytes[X86_INSN_MAX_LEN];
	unsigned len, assist;
	int rc;

	if (!vcpu->vm->cfg.compat)
		return -ENOTSUP;
	if (kvm_ioctl(vcpu->fd, KVM_GET_REGS, &c.regs, NULL) < 0 ||
	    kvm_ioctl(vcpu->fd, KVM_GET_SREGS, &c.sregs, NULL) < 0)
		return -EIO;
	if (compat_insn_bytes(vcpu, &c.sregs, c.regs.rip, bytes, &len))
		return -EFAULT;
	if (compat_insn_decode(bytes, len, &c.in, &assist))
		return -ENOTSUP;
	if (assist == ASSIST_INT3)
		rc = 0;
	else if (assist == ASSIST_FWAIT)
		rc = 0;
	else if (assist == ASSIST_LSL)
		rc = assist_lsl(&c);
	else if (assist == ASSIST_VERW)
		rc = assist_verw(&c);
	else if (assist == ASSIST_XGETBV || assist == ASSIST_XSETBV)
		rc = compat_xsave_xcr(&c, assist);
	else if (assist == ASSIST_XSAVE || assist == ASSIST_XRSTOR)
		rc = compat_xsave_run(&c, assist);
	else
		rc = assist_fpu(&c, assist);
	if (rc == 1) {		/* an exception was injected instead */
		compat_count(&vcpu->vm->compat, ASSIST_FAULT);
		return 0;
	}
	if (rc)
		return rc;
	c.regs.rip += c.in.pos;
	if (kvm_ioctl(vcpu->fd, KVM_SET_REGS, &c.regs, NULL) < 0)
		return -EIO;
	if (assist == ASSIST_INT3 && (rc = assist_int3(&c)))
		return rc;
	compat_count(&vcpu->vm->compat, assist);
	return 0;
}
