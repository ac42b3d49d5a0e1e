// SPDX-License-Identifier: GPL-2.0
/*
 * The XSAVE family for the compatibility layer's instruction assists.
 *
 * This host runs the guest's user code natively with the host's XCR0 (x87,
 * SSE, AVX and AVX-512 on the project's machines), whatever XCR0 the guest
 * kernel set, and user code sees the host's CPUID: glibc uses AVX and
 * AVX-512. Under `noxsave` the guest kernel switched tasks' FPU state with
 * fxsave/fxrstor, x87 and SSE only, so a task switch handed one task's
 * upper register state to the next: a static busybox read its freshly
 * copied TLS block back as zeros and segfaulted in __ctype_init (PID 1
 * included), and a probe lost its ymm upper halves after most of 400
 * sched_yield calls. So the guest kernel keeps XSAVE with the host's
 * components; the command line keeps its AVX2/AVX-512VL code (which the
 * emulator cannot run) and the xsave variants other than xsave/xrstor away;
 * and these two, which the emulator cannot run at CPL0 either, act here on
 * KVM's copy of the guest's state, in the standard form (SDM vol. 1
 * §13.7-13.8). A memory operand the guest could not access that way gets the
 * #PF the CPU would raise (the kernel's xsave into a signal frame relies on
 * it); a non-canonical one, a malformed header or MXCSR, the #GP (an
 * rsp- or rbp-based non-canonical operand would get #SS: the kernel has none).
 */
#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "vmm/kvm-x86_64/compat-insn.h"
#include "vmm/kvm-x86_64/pagewalk.h"
#include "vmm/kvm-x86_64/regs.h"
#include "vmm/kvm/kvm.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

#define XSAVE_HDR       512	/* XSTATE_BV, XCOMP_BV, 48 reserved bytes */
#define XSAVE_MIN       576
#define XSAVE_X87_END   24	/* FCW..FDP; MXCSR and its mask follow */
#define XSAVE_MXCSR     24
#define XSAVE_ST        32
#define XSAVE_XMM       160
#define XSAVE_XMM_END   416

static int xsave_get_xcr0(struct assist_ctx *c, uint64_t *xcr0)
{
	struct kvm_xcrs x;

	memset(&x, 0, sizeof(x));
	if (kvm_ioctl(c->vcpu->fd, KVM_GET_XCRS, &x, NULL) < 0)
		return -EIO;
	for (unsigned i = 0; i < x.nr_xcrs && i < KVM_MAX_XCRS; i++)
		if (x.xcrs[i].xcr == 0) {
			*xcr0 = x.xcrs[i].value;
			return 0;
		}
	return -EIO;
}

/*
 * xgetbv and xsetbv on XCR0 through KVM_GET/SET_XCRS (KVM checks the value
 * it is given; a value it refuses is the guest's #GP). XINUSE (xgetbv with
 * ECX=1) is answered with XCR0: every enabled component in use, which is
 * always a correct answer.
 */
int compat_xsave_xcr(struct assist_ctx *c, unsigned assist)
{
	uint32_t index = (uint32_t)c->regs.rcx;
	struct kvm_xcrs x;
	uint64_t v;

	if (assist == ASSIST_XGETBV) {
		if (index > 1)
			return compat_insn_fault(c, X86_VEC_GP, 0, 0);
		if (xsave_get_xcr0(c, &v))
			return -EIO;
		c->regs.rax = (uint32_t)v;
		c->regs.rdx = v >> 32;
		return 0;
	}
	if (index != 0)
		return compat_insn_fault(c, X86_VEC_GP, 0, 0);
	memset(&x, 0, sizeof(x));
	x.nr_xcrs = 1;
	x.xcrs[0].xcr = 0;
	x.xcrs[0].value = (c->regs.rdx << 32) | (uint32_t)c->regs.rax;
	if (kvm_ioctl(c->vcpu->fd, KVM_SET_XCRS, &x, NULL) < 0)
		return compat_insn_fault(c, X86_VEC_GP, 0, 0);
	return 0;
}

/*
 * The standard-form layout of this CPU: offset and size of each user state
 * component from CPUID 0xD (SDM vol. 1 §13.4). KVM_GET_XSAVE hands over the
 * guest's state in the same layout, as the host CPU defines it.
 */
static struct {
	uint32_t off, size;
} xsave_layout[64];
static pthread_once_t xsave_layout_once = PTHREAD_ONCE_INIT;

static void xsave_layout_init(void)
{
	unsigned a, b, c, d;

	for (unsigned i = 2; i < 64; i++)
		if (__get_cpuid_count(X86_CPUID_LEAF_XSAVE, i, &a, &b, &c, &d) && a && !(c & 1))
			xsave_layout[i].off = b, xsave_layout[i].size = a;
}

/* xsave: the components in rfbm from KVM's copy (k) into the image (mem). */
static void xsave_store(uint8_t *mem, const uint8_t *k, uint64_t rfbm)
{
	uint64_t kbv, mbv;

	memcpy(&kbv, k + XSAVE_HDR, 8);
	memcpy(&mbv, mem + XSAVE_HDR, 8);
	/* KVM's legacy area holds init values for components not in use. */
	if (rfbm & X86_XCR0_X87) {
		memcpy(mem, k, XSAVE_X87_END);
		memcpy(mem + XSAVE_ST, k + XSAVE_ST, XSAVE_XMM - XSAVE_ST);
	}
	if (rfbm & (X86_XCR0_SSE | X86_XCR0_YMM))
		memcpy(mem + XSAVE_MXCSR, k + XSAVE_MXCSR, 8);
	if (rfbm & X86_XCR0_SSE)
		memcpy(mem + XSAVE_XMM, k + XSAVE_XMM, XSAVE_XMM_END - XSAVE_XMM);
	for (unsigned i = 2; i < 64; i++) {
		if (!(rfbm & (1ULL << i)))
			continue;
		if (kbv & (1ULL << i))
			memcpy(mem + xsave_layout[i].off, k + xsave_layout[i].off, xsave_layout[i].size);
		else
			memset(mem + xsave_layout[i].off, 0, xsave_layout[i].size);
	}
	/* Only XSTATE_BV is written of the header; x87 and SSE are always there. */
	mbv = (mbv & ~rfbm) | (kbv & rfbm) | (rfbm & (X86_XCR0_X87 | X86_XCR0_SSE));
	memcpy(mem + XSAVE_HDR, &mbv, 8);
}

/*
 * xrstor's checks on the image: 0, 1 after injecting #GP, -ENOTSUP for the
 * compacted form (xsavec/xsaves are kept from the guest; stop, do not guess).
 */
static int xsave_check(struct assist_ctx *c, const uint8_t *mem, const uint8_t *k,
		       uint64_t rfbm, uint64_t xcr0)
{
	uint64_t mbv, xcomp;
	uint32_t mxcsr, mask;

	memcpy(&mbv, mem + XSAVE_HDR, 8);
	memcpy(&xcomp, mem + XSAVE_HDR + 8, 8);
	if (xcomp & (1ULL << 63))
		return -ENOTSUP;
	for (unsigned i = XSAVE_HDR + 8; i < XSAVE_HDR + 24; i++)
		if (mem[i])	/* the standard form wants header bytes 23:8 zero */
			return compat_insn_fault(c, X86_VEC_GP, 0, 0);
	if (mbv & ~xcr0)
		return compat_insn_fault(c, X86_VEC_GP, 0, 0);
	memcpy(&mxcsr, mem + XSAVE_MXCSR, 4);
	memcpy(&mask, k + XSAVE_MXCSR + 4, 4);
	if ((rfbm & (X86_XCR0_SSE | X86_XCR0_YMM)) && (mxcsr & ~(mask ? mask : X86_MXCSR_MASK_DEFAULT)))
		return compat_insn_fault(c, X86_VEC_GP, 0, 0);
	return 0;
}

/* xrstor: the components in rfbm from a checked image (mem) into KVM's copy (k). */
static void xsave_load(uint8_t *k, const uint8_t *mem, uint64_t rfbm)
{
	uint64_t kbv, mbv;

	memcpy(&kbv, k + XSAVE_HDR, 8);
	memcpy(&mbv, mem + XSAVE_HDR, 8);
	if (rfbm & (X86_XCR0_SSE | X86_XCR0_YMM))
		memcpy(k + XSAVE_MXCSR, mem + XSAVE_MXCSR, 4);
	/* x87 and SSE are written out even in init state, so that KVM keeps MXCSR. */
	if (rfbm & X86_XCR0_X87) {
		if (mbv & X86_XCR0_X87) {
			memcpy(k, mem, XSAVE_X87_END);
			memcpy(k + XSAVE_ST, mem + XSAVE_ST, XSAVE_XMM - XSAVE_ST);
		} else {
			memset(k, 0, XSAVE_X87_END);
			memset(k + XSAVE_ST, 0, XSAVE_XMM - XSAVE_ST);
			k[0] = X86_FCW_DEFAULT & 0xff, k[1] = X86_FCW_DEFAULT >> 8;
		}
		kbv |= X86_XCR0_X87;
	}
	if (rfbm & X86_XCR0_SSE) {
		if (mbv & X86_XCR0_SSE)
			memcpy(k + XSAVE_XMM, mem + XSAVE_XMM, XSAVE_XMM_END - XSAVE_XMM);
		else
			memset(k + XSAVE_XMM, 0, XSAVE_XMM_END - XSAVE_XMM);
		kbv |= X86_XCR0_SSE;
	}
	for (unsigned i = 2; i < 64; i++) {
		uint64_t bit = 1ULL << i;

		if (!(rfbm & bit))
			continue;
		if (mbv & bit) {
			memcpy(k + xsave_layout[i].off, mem + xsave_layout[i].off, xsave_layout[i].size);
			kbv |= bit;
		} else {
			kbv &= ~bit;	/* KVM puts the component in its init state */
		}
	}
	memcpy(k + XSAVE_HDR, &kbv, 8);
}

/* xsave (and xsaveopt, which may write all that xsave writes) and xrstor. */
int compat_xsave_run(struct assist_ctx *c, unsigned assist)
{
	struct vm *vm = c->vcpu->vm;
	int write = assist == ASSIST_XSAVE, rc;
	struct kvm_xsave kx;
	uint8_t *k = (uint8_t *)kx.region, mem[sizeof(kx.region)];
	uint64_t xcr0, rfbm, ea, fault;
	size_t len = XSAVE_MIN;

	pthread_once(&xsave_layout_once, xsave_layout_init);
	if (xsave_get_xcr0(c, &xcr0))
		return -EIO;
	rfbm = xcr0 & ((c->regs.rdx << 32) | (uint32_t)c->regs.rax);
	ea = compat_insn_address(&c->in, &c->regs, &c->sregs);
	if (ea & 63)
		return compat_insn_fault(c, X86_VEC_GP, 0, 0);
	for (unsigned i = 2; i < 64; i++) {
		if (!(rfbm & (1ULL << i)))
			continue;
		if (!xsave_layout[i].size)
			return -ENOTSUP;
		if (len < xsave_layout[i].off + xsave_layout[i].size)
			len = xsave_layout[i].off + xsave_layout[i].size;
	}
	if (len > sizeof(mem))
		return -ENOTSUP;
	rc = pagewalk_check(vm, &c->sregs, ea, len, write, &fault);
	if (rc == -EINVAL)	/* a non-canonical byte in the area */
		return compat_insn_fault(c, X86_VEC_GP, 0, 0);
	if (rc)
		return compat_insn_fault(c, X86_VEC_PF, pagewalk_pf_error(rc, write), fault);
	if (kvm_ioctl(c->vcpu->fd, KVM_GET_XSAVE, &kx, NULL) < 0)
		return -EIO;
	if (pagewalk_read(vm, &c->sregs, ea, mem, len))
		return -EFAULT;
	if (write) {
		xsave_store(mem, k, rfbm);
		return pagewalk_write(vm, &c->sregs, ea, mem, len) ? -EFAULT : 0;
	}
	if ((rc = xsave_check(c, mem, k, rfbm, xcr0)))
		return rc;
	xsave_load(k, mem, rfbm);
	return kvm_ioctl(c->vcpu->fd, KVM_SET_XSAVE, &kx, NULL) < 0 ? -EIO : 0;
}
