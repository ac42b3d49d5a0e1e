// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 host arch of vmmtrace's KVM VMM: not built yet (issue 38,
 * part 2). vmmtrace builds and runs on arm64 machines today, with the
 * QEMU host for every guest; what is here makes that build link and makes
 * `--host kvm` say in one line that it cannot boot a kernel yet. Every op
 * below is reached only after arch_kernel_check, which refuses.
 */
#include <errno.h>
#include <stdio.h>

#include "vmm/image/image.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/stub.h"

#define A64_NOT_YET "vmmtrace's own KVM host does not boot kernels on arm64 yet: use --host qemu"

int arch_guest_arch(void)
{
	return -1;
}

int arch_kernel_check(const struct kernel_image *img, struct errbuf *err)
{
	(void)img;
	return err_set(err, ENOEXEC, A64_NOT_YET);
}

int arch_compat_detect(void)
{
	return 0;
}

const char *arch_compat_assist_name(unsigned assist)
{
	(void)assist;
	return "none";
}

const char *arch_default_cmdline(void)
{
	return "console=ttyAMA0";
}

static const struct cmdline_opt a64_no_opts[] = { { NULL, NULL } };

const struct cmdline_opt *arch_compat_cmdline(void)
{
	return a64_no_opts;
}

const struct cmdline_opt *arch_fast_boot_cmdline(void)
{
	return a64_no_opts;
}

size_t arch_console_input(struct vm *vm, const uint8_t *buf, size_t len)
{
	(void)vm, (void)buf;
	return len;
}

void arch_console_flush(struct vm *vm)
{
	(void)vm;
}

int arch_vm_init(struct vm *vm, struct errbuf *err)
{
	(void)vm;
	return err_set(err, EOPNOTSUPP, A64_NOT_YET);
}

int arch_vm_add_devices(struct vm *vm, struct errbuf *err)
{
	(void)vm;
	return err_set(err, EOPNOTSUPP, A64_NOT_YET);
}

void arch_vm_remove_devices(struct vm *vm)
{
	(void)vm;
}

int arch_vm_load(struct vm *vm, const struct kernel_image *img, const uint8_t *initrd,
		 size_t initrd_size, struct errbuf *err)
{
	(void)vm, (void)img, (void)initrd, (void)initrd_size;
	return err_set(err, EOPNOTSUPP, A64_NOT_YET);
}

int arch_vcpu_init(struct vcpu *vcpu, struct errbuf *err)
{
	(void)vcpu;
	return err_set(err, EOPNOTSUPP, A64_NOT_YET);
}

int arch_vcpu_exit(struct vcpu *vcpu)
{
	(void)vcpu;
	return -EOPNOTSUPP;
}

int arch_vcpu_debug_pc(struct vcpu *vcpu, uint64_t *pc)
{
	(void)vcpu;
	*pc = 0;
	return -EOPNOTSUPP;
}

void arch_vcpu_describe(struct vcpu *vcpu, char *buf, size_t len)
{
	(void)vcpu;
	snprintf(buf, len, "no registers");
}

void arch_vcpu_registers(struct vcpu *vcpu, char *buf, size_t len, uint64_t *pc)
{
	(void)vcpu;
	if (len)
		buf[0] = '\0';
	*pc = 0;
}

int arch_vcpu_nmi(struct vcpu *vcpu, struct errbuf *err)
{
	(void)vcpu;
	return err_set(err, EOPNOTSUPP, A64_NOT_YET);
}

int arch_vcpu_nmi_busy(struct vcpu *vcpu)
{
	(void)vcpu;
	return 0;
}

const unsigned long *arch_sandbox_ioctls(size_t *n)
{
	*n = 0;
	return NULL;
}

const struct slot_ops *arch_slot_ops(void)
{
	return NULL;
}

int arch_vcpu_set_breakpoints(struct vcpu *vcpu, const uint64_t *addrs, unsigned n,
			      struct errbuf *err)
{
	(void)vcpu, (void)addrs, (void)n;
	return err_set(err, EOPNOTSUPP, A64_NOT_YET);
}

int arch_vcpu_pc(struct vcpu *vcpu, uint64_t *pc)
{
	return arch_vcpu_debug_pc(vcpu, pc);
}

int arch_vcpu_exit_pc(struct vcpu *vcpu, uint64_t *pc)
{
	return arch_vcpu_debug_pc(vcpu, pc);
}

int arch_vcpu_entry_frame(struct vcpu *vcpu, uint64_t *sp, uint64_t *ret)
{
	(void)vcpu;
	*sp = *ret = 0;
	return -EOPNOTSUPP;
}

int arch_vcpu_caller(struct vcpu *vcpu, uint64_t *ret)
{
	(void)vcpu;
	*ret = 0;
	return -EOPNOTSUPP;
}

int arch_vcpu_tsc_khz(struct vcpu *vcpu, uint64_t *khz)
{
	(void)vcpu;
	*khz = 0;
	return -EOPNOTSUPP;
}

int arch_vm_msr_intercept(struct vm *vm, const uint32_t (*ranges)[2], unsigned n, struct errbuf *err)
{
	(void)vm, (void)ranges, (void)n;
	return err_set(err, EOPNOTSUPP, "arm64 has no MSRs");
}

int arch_vcpu_cpuid(struct vcpu *vcpu, struct host_cpuid_leaf *out, unsigned max, unsigned *n)
{
	(void)vcpu, (void)out, (void)max;
	*n = 0;
	return -EOPNOTSUPP;
}

int arch_vcpu_read_tsc(struct vcpu *vcpu, uint64_t *tsc)
{
	(void)vcpu;
	*tsc = 0;
	return -EOPNOTSUPP;
}

int arch_stub_install(struct vm *vm, const struct elf_image *elf, const struct symtab *syms,
		      uint64_t data_size, struct stub_region *r, struct errbuf *err)
{
	(void)vm, (void)elf, (void)syms, (void)data_size, (void)r;
	return err_set(err, EOPNOTSUPP, A64_NOT_YET);
}

void stub_region_free(struct stub_region *r)
{
	(void)r;
}
