// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 host arch of vmmtrace's KVM VMM (issue 38): an arm64 Image
 * (Debian's vmlinuz is one) loaded at the start of RAM plus its
 * text_offset, vCPUs initialised with KVM_ARM_VCPU_INIT (PSCI 0.2: KVM
 * starts and stops the secondary CPUs and reports power-off and reset as
 * system events), an in-kernel GICv3, the architected timer, a PL011 for
 * the console and a device tree written with libfdt; QEMU's virt board's
 * addresses (a64.h). What tracing asks of it is in debug.c and stub.c.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/devices/pl011.h"
#include "vmm/guest/devtree.h"
#include "vmm/guest/guest.h"
#include "vmm/host/console.h"
#include "vmm/image/image.h"
#include "vmm/kvm-arm64/a64.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/kvm.h"
#include "vmm/kvm/stub.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

/* An arm64 Image's header (Documentation/arm64/booting.rst). */
#define A64_IMAGE_MAGIC 0x644d5241u	/* "ARM\x64" at offset 56 */
#define A64_2M (2ULL << 20)

static struct a64_state *a64(const struct vm *vm)
{
	return vm->arch_state;
}

int arch_guest_arch(void)
{
	return IMAGE_ARCH_ARM64;
}

const char *arch_name(void)
{
	return "arm64";
}

int arch_kernel_check(const struct kernel_image *img, struct errbuf *err)
{
	int rc = image_require_arch(img, IMAGE_ARCH_ARM64, err);

	if (rc)
		return rc;
	if (!img->is_raw || img->codec != CODEC_NONE)
		return err_set(err, ENOEXEC, "%s: the arm64 KVM host boots an uncompressed Image (Debian's vmlinuz is one)",
			       img->path);
	return 0;
}

const char *arch_default_cmdline(void)
{
	return "console=ttyAMA0 panic=-1";
}

/*
 * Traced: nokaslr, as the guest arch says (guest_arch.nokaslr_why: a seed
 * from the device tree or, on a CPU with FEAT_RNG, from RNDR, which KVM
 * offers when the host has it). No compat layer, nothing to skip.
 */
const struct cmdline_opt *arch_cmdline_opts(enum arch_cmdline why)
{
	static struct cmdline_opt traced[] = { { "nokaslr", NULL }, { NULL, NULL } };
	const struct guest_arch *ga = guest_arch_of(IMAGE_ARCH_ARM64);

	if (why != ARCH_CMDLINE_TRACED || !ga || !ga->nokaslr_why)
		return traced + 1;
	traced[0].why = ga->nokaslr_why;
	return traced;
}

size_t arch_console_input(struct vm *vm, const uint8_t *buf, size_t len)
{
	return a64(vm) && a64(vm)->uart ? pl011_receive(a64(vm)->uart, buf, len) : len;
}

/* The UART writes through to the console: nothing waits in it. */
void arch_console_flush(struct vm *vm)
{
	(void)vm;
}

static void a64_console_out(void *opaque, const void *buf, size_t len)
{
	console_write(opaque, buf, len);
}

static int a64_gic_attr(int fd, uint32_t group, uint64_t attr, void *addr, const char *what, struct errbuf *err)
{
	struct kvm_device_attr a = { .group = group, .attr = attr, .addr = (uint64_t)(uintptr_t)addr };

	if (ioctl(fd, KVM_SET_DEVICE_ATTR, &a))
		return err_set(err, errno, "the GICv3: %s: %s", what, strerror(errno));
	return 0;
}

/*
 * Steal time, as QEMU's virt board offers it with KVM: where KVM can keep
 * it (KVM_CAP_STEAL_TIME: the host accounts its tasks' run delay), a page
 * of records outside RAM at QEMU's address, one per vCPU, whose address KVM
 * gives the guest's PV_TIME_ST call (Documentation/virt/kvm/arm/pvtime.rst).
 */
static int a64_pvtime_init(struct vm *vm, struct errbuf *err)
{
	struct a64_state *s = a64(vm);
	uint8_t *mem;
	int rc;

	if (kvm_check_cap(vm->vm_fd, KVM_CAP_STEAL_TIME) <= 0)
		return 0;
	mem = mmap(NULL, A64_PVTIME_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return err_set(err, errno, "cannot map the steal-time records: %s", strerror(errno));
	if ((rc = vm_add_region(vm, A64_PVTIME, A64_PVTIME_SIZE, mem, err))) {
		munmap(mem, A64_PVTIME_SIZE);
		return rc;
	}
	s->pvtime = mem;
	return 0;
}

/* The vCPU's steal-time record's address, told to KVM once. */
static int a64_pvtime_vcpu(struct vcpu *vcpu, struct errbuf *err)
{
	uint64_t ipa = A64_PVTIME + 64ULL * vcpu->id;
	struct kvm_device_attr a = { .group = KVM_ARM_VCPU_PVTIME_CTRL, .attr = KVM_ARM_VCPU_PVTIME_IPA,
				     .addr = (uint64_t)(uintptr_t)&ipa };

	if (!a64(vcpu->vm)->pvtime)
		return 0;
	if (ioctl(vcpu->fd, KVM_SET_DEVICE_ATTR, &a))
		return err_set(err, errno, "vCPU %u: its steal-time record (KVM_ARM_VCPU_PVTIME_IPA): %s", vcpu->id,
			       strerror(errno));
	return 0;
}

int arch_vm_init(struct vm *vm, struct errbuf *err)
{
	struct kvm_create_device cd = { .type = KVM_DEV_TYPE_ARM_VGIC_V3 };
	uint64_t dist = A64_GICD, redist = A64_GICR;
	struct a64_state *s = calloc(1, sizeof(*s));
	int rc, n;

	if (!s)
		return err_set(err, ENOMEM, "out of memory for the VM");
	s->gic_fd = -1;
	pthread_mutex_init(&s->psci.lock, NULL);
	vm->arch_state = s;
	if ((rc = vm_add_region(vm, A64_RAM, vm->ram_size, vm->ram, err)))
		return rc;
	if (ioctl(vm->vm_fd, KVM_CREATE_DEVICE, &cd))
		return err_set(err, EOPNOTSUPP, "KVM cannot give the guest a GICv3 (%s): this host needs one",
			       strerror(errno));
	s->gic_fd = (int)cd.fd;
	/* Asked now, before any sandbox: how many breakpoint registers a tracer may use. */
	n = kvm_check_cap(vm->kvm_fd, KVM_CAP_GUEST_DEBUG_HW_BPS);
	s->hw_bps = n > 0 ? (unsigned)n : 0;
	if ((rc = a64_gic_attr(s->gic_fd, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_DIST, &dist,
			       "its distributor's address", err)) ||
	    (rc = a64_gic_attr(s->gic_fd, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_REDIST, &redist,
			       "its redistributors' address", err)))
		return rc;
	return a64_pvtime_init(vm, err);
}

static void a64_uart_mmio(void *opaque, uint64_t addr, int is_write, uint8_t *data, unsigned size)
{
	pl011_mmio(opaque, addr - A64_UART, data, size, is_write);
}

int arch_vm_add_devices(struct vm *vm, struct errbuf *err)
{
	uint32_t irq = (KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT) | (32 + A64_UART_SPI);

	if (!(a64(vm)->uart = pl011_create(vm->vm_fd, irq, vm->cfg.console ? a64_console_out : NULL,
					   vm->cfg.console)))
		return err_set(err, ENOMEM, "out of memory for the UART");
	if (bus_register(&vm->mmio, A64_UART, 0x1000, a64_uart_mmio, a64(vm)->uart))
		return err_set(err, ENOSPC, "too many MMIO devices");
	return 0;
}

void arch_vm_remove_devices(struct vm *vm)
{
	struct a64_state *s = a64(vm);

	if (!s)
		return;
	pl011_destroy(s->uart);
	if (s->pvtime)
		munmap(s->pvtime, A64_PVTIME_SIZE);
	pthread_mutex_destroy(&s->psci.lock);
	if (s->gic_fd >= 0)
		close(s->gic_fd);
	free(s);
	vm->arch_state = NULL;
}

static uint64_t a64_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A /reserved-memory node for [base, base + size) in the tree *fdt, which it replaces. */
static int a64_reserve(void **fdt, size_t *len, const char *name, uint64_t base, uint64_t size, struct errbuf *err)
{
	void *with = NULL;
	size_t with_len = 0;
	int rc = devtree_add_reserved(*fdt, *len, name, base, size, 0, &with, &with_len, err);

	free(*fdt);
	*fdt = with;
	*len = with_len;
	return rc;
}

/*
 * The Image at RAM + text_offset, the device tree in RAM's last 2 MiB, for
 * a traced boot the rings' region below it (reserved in the tree, in the
 * kernel's linear map: they move there at the hand-over), the initrd
 * below that; the boot vCPU starts at the Image's first byte with x0 the
 * tree's address (booting.rst).
 */
int arch_vm_load(struct vm *vm, const struct kernel_image *img, const uint8_t *initrd, size_t initrd_size,
		 struct errbuf *err)
{
	const uint8_t *k = img->file;
	struct a64_state *s = a64(vm);
	uint64_t text_offset, image_size, dtb = A64_RAM + vm->ram_size - A64_2M, rd = 0, top = dtb;
	size_t fdt_len;
	void *fdt;
	int rc;

	if (img->file_size < 64 || (uint32_t)a64_le64(k + 56) != A64_IMAGE_MAGIC)
		return err_set(err, ENOEXEC, "not an arm64 Image (no ARM\\x64 magic in its header)");
	text_offset = a64_le64(k + 8);
	image_size = a64_le64(k + 16);
	if (!image_size)
		image_size = img->file_size;
	if (text_offset + image_size + A64_2M > vm->ram_size || img->file_size > image_size)
		return err_set(err, EINVAL, "the kernel needs %llu MiB, memory is %llu MiB",
			       (unsigned long long)((text_offset + image_size) >> 20),
			       (unsigned long long)(vm->ram_size >> 20));
	memcpy(vm->ram + text_offset, k, img->file_size);
	/* The Image header's flags: bits 1-2 the page size, 4, 16 or 64 KiB (0: unspecified). */
	s->page_shift = (unsigned[]){ 0, 12, 14, 16 }[a64_le64(k + 24) >> 1 & 3];
	if (vm->cfg.stub_bytes) {
		s->area_size = (vm->cfg.stub_bytes + A64_2M - 1) & ~(A64_2M - 1);
		if (s->area_size > vm->ram_size / 4)
			return err_set(err, E2BIG, "--buffer-size: %u CPUs' rings take more than a quarter of --mem",
				       vm->cfg.ncpus);
		top = s->area_pa = dtb - s->area_size;
		s->past_end_pa = A64_RAM + ((text_offset + image_size + 4095) & ~4095ULL);
		s->past_end_size = ((s->past_end_pa + A64_2M - 1) & ~(A64_2M - 1)) - s->past_end_pa;
	}
	if (initrd_size) {
		rd = (top - initrd_size) & ~4095ULL;
		if (rd < A64_RAM + text_offset + image_size + s->past_end_size)
			return err_set(err, EINVAL, "the initrd (%zu bytes) does not fit in memory after the kernel",
				       initrd_size);
		memcpy(vm->ram + (rd - A64_RAM), initrd, initrd_size);
	}
	if ((rc = a64_fdt(vm, rd, initrd_size, &fdt, &fdt_len, err)))
		return rc;
	/*
	 * Traced: the rings' region, and [_end, the end of its 2 MiB block),
	 * where a kernel without padding gets the stub in its guard page and
	 * the tables that map it (stub.c).
	 */
	if (s->area_size) {
		if ((rc = a64_reserve(&fdt, &fdt_len, "vmmtrace-rings", s->area_pa, s->area_size, err)))
			return rc;
		if (s->past_end_size &&
		    (rc = a64_reserve(&fdt, &fdt_len, "vmmtrace-stub", s->past_end_pa, s->past_end_size, err)))
			return rc;
	}
	if (fdt_len > A64_2M) {
		free(fdt);
		return err_set(err, E2BIG, "the device tree is %zu bytes", fdt_len);
	}
	memcpy(vm->ram + (dtb - A64_RAM), fdt, fdt_len);
	free(fdt);
	vm->boot_entry = A64_RAM + text_offset;
	vm->boot_arg = dtb;
	return 0;
}

int a64_set_reg(struct vcpu *vcpu, uint64_t id, uint64_t v, struct errbuf *err)
{
	struct kvm_one_reg r = { .id = id, .addr = (uint64_t)(uintptr_t)&v };

	if (ioctl(vcpu->fd, KVM_SET_ONE_REG, &r))
		return err_set(err, errno, "vCPU %u: KVM_SET_ONE_REG: %s", vcpu->id, strerror(errno));
	return 0;
}

int a64_get_reg(struct vcpu *vcpu, uint64_t id, uint64_t *v)
{
	struct kvm_one_reg r = { .id = id, .addr = (uint64_t)(uintptr_t)v };

	return ioctl(vcpu->fd, KVM_GET_ONE_REG, &r) ? -errno : 0;
}

int arch_vcpu_init(struct vcpu *vcpu, struct errbuf *err)
{
	struct vm *vm = vcpu->vm;
	struct kvm_vcpu_init init;
	int rc;

	if (ioctl(vm->vm_fd, KVM_ARM_PREFERRED_TARGET, &init))
		return err_set(err, errno, "KVM_ARM_PREFERRED_TARGET: %s", strerror(errno));
	init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
	/* The others wait powered off until the kernel's PSCI CPU_ON. */
	if (vcpu->id)
		init.features[0] |= 1u << KVM_ARM_VCPU_POWER_OFF;
	if (ioctl(vcpu->fd, KVM_ARM_VCPU_INIT, &init))
		return err_set(err, errno, "vCPU %u: KVM_ARM_VCPU_INIT: %s", vcpu->id, strerror(errno));
	a64(vm)->init[vcpu->id] = init;
	a64(vm)->psci.power[vcpu->id] = vcpu->id ? A64_OFF : A64_ON;
	if ((rc = a64_get_reg(vcpu, ARM64_SYS_REG(3, 0, 0, 0, 5), &a64(vm)->mpidr[vcpu->id])))
		return err_set(err, -rc, "vCPU %u: its MPIDR_EL1: %s", vcpu->id, strerror(-rc));
	if ((rc = a64_pvtime_vcpu(vcpu, err)))
		return rc;
	if (!vcpu->id && ((rc = a64_set_reg(vcpu, A64_CORE_REG(regs.pc), vm->boot_entry, err)) ||
			  (rc = a64_set_reg(vcpu, A64_CORE_REG(regs.regs[0]), vm->boot_arg, err))))
		return rc;
	/* The GIC's redistributors exist once every vCPU does. */
	if (vcpu->id + 1 == vm->cfg.ncpus &&
	    (rc = a64_gic_attr(a64(vm)->gic_fd, KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_CTRL_INIT, NULL,
			       "its initialisation", err)))
		return rc;
	return 0;
}


int arch_vcpu_exit(struct vcpu *vcpu)
{
	char regs[128];

	if (vcpu->run->exit_reason == KVM_EXIT_HYPERCALL && a64(vcpu->vm)->psci.user)
		return a64_smccc_exit(vcpu);

	arch_vcpu_describe(vcpu, regs, sizeof(regs));
	vm_request_stop(vcpu->vm, VM_STOP_UNEMULATED, "vCPU %u: an exit this host does not handle (%u; %s)",
			vcpu->id, vcpu->run->exit_reason, regs);
	return -EOPNOTSUPP;
}

void arch_vcpu_describe(struct vcpu *vcpu, char *buf, size_t len)
{
	uint64_t pc = 0, pstate = 0;

	if (arch_vcpu_pc(vcpu, &pc) || a64_get_reg(vcpu, A64_CORE_REG(regs.pstate), &pstate))
		snprintf(buf, len, "registers unreadable");
	else
		snprintf(buf, len, "pc 0x%llx pstate 0x%llx", (unsigned long long)pc, (unsigned long long)pstate);
}

/*
 * As the QEMU host prints an arm64 vCPU (vmm/qemu/qemu-vm.c): PC, SP
 * (SP_EL1: the kernel's) and PSTATE, then x0-x30, three to a line.
 */
void arch_vcpu_registers(struct vcpu *vcpu, char *buf, size_t len, uint64_t *pc)
{
	uint64_t sp = 0, pstate = 0, v;
	size_t off;

	*pc = 0;
	if (arch_vcpu_pc(vcpu, pc) || a64_get_reg(vcpu, A64_CORE_REG(sp_el1), &sp) ||
	    a64_get_reg(vcpu, A64_CORE_REG(regs.pstate), &pstate)) {
		snprintf(buf, len, "(registers unreadable)\n");
		return;
	}
	off = (size_t)snprintf(buf, len, "PC: %016llx SP: %016llx PSTATE: %08llx\n", (unsigned long long)*pc,
			       (unsigned long long)sp, (unsigned long long)pstate);
	for (unsigned i = 0; i < 31 && off < len; i++) {
		if (a64_get_reg(vcpu, A64_CORE_REG(regs.regs[i]), &v))
			v = 0;
		off += (size_t)snprintf(buf + off, len - off, "X%02u: %016llx%s", i, (unsigned long long)v,
					i % 3 == 2 || i == 30 ? "\n" : " ");
	}
}

/*
 * The running VM's register reads and writes (diagnoses, the flight
 * recorder, the doorbell's return, PSCI's answers), and a PSCI CPU_ON's
 * reset of its target.
 */
static const unsigned long a64_sandbox_ioctls[] = { KVM_GET_ONE_REG, KVM_SET_ONE_REG, KVM_ARM_VCPU_INIT,
						    KVM_SET_MP_STATE };

const unsigned long *arch_sandbox_ioctls(size_t *n)
{
	*n = sizeof(a64_sandbox_ioctls) / sizeof(a64_sandbox_ioctls[0]);
	return a64_sandbox_ioctls;
}

/* No compat layer, no NMI to give, no MSRs, no CPUID. */
const struct arch_optional arch_optional = { NULL };
