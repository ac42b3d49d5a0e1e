// SPDX-License-Identifier: GPL-2.0
/* The KVM VMM behind the host boundary (vmm/host/host.h). */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/trace.h"
#include "vmm/host/host-exits.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/host-kvm.h"
#include "vmm/kvm/kvm.h"
#include "vmm/kvm/stub.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"
#include "vmm/host/console.h"
#include "vmm/util/log.h"

_Static_assert(HOST_KVM_MAX_CPUS <= HOST_MAX_CPUS && HOST_KVM_MAX_CPUS <= VM_MAX_CPUS,
	       "the tracer sizes its per-vCPU tables by HOST_MAX_CPUS");

struct host_kvm {
	struct host h;
	struct host_ops ops;		/* host_kvm_ops, less what the host arch does not offer */
	struct vm *vm;
	struct vm vm_store;
	struct console con;
	struct host_hooks hooks;
	int vm_created, verbose;
	char *cmdline;
};

static struct host_kvm *hk_of(struct host *h)
{
	return (struct host_kvm *)h;
}

static struct vcpu *hk_vcpu(struct host *h, int cpu)
{
	struct vm *vm = hk_of(h)->vm;

	return cpu >= 0 && (unsigned)cpu < vm->ncpus ? &vm->vcpus[cpu] : NULL;
}

static uint64_t hk_pause(struct host *h, int self)
{
	return vm_pause(hk_of(h)->vm, hk_vcpu(h, self));
}

static void hk_resume(struct host *h)
{
	vm_resume(hk_of(h)->vm);
}

static void hk_let_run(struct host *h, int self, uint64_t mask, uint64_t wait_ns)
{
	vm_let_run(hk_of(h)->vm, hk_vcpu(h, self), mask, wait_ns);
}

static int hk_vcpu_pc(struct host *h, unsigned cpu, uint64_t *pc)
{
	struct vcpu *v = hk_vcpu(h, (int)cpu);

	return v ? arch_vcpu_pc(v, pc) : -EINVAL;
}

static int hk_set_breakpoints(struct host *h, unsigned cpu, const uint64_t *va, unsigned n, struct errbuf *err)
{
	struct vcpu *v = hk_vcpu(h, (int)cpu);

	return v ? arch_vcpu_set_breakpoints(v, va, n, err) : err_set(err, EINVAL, "no vCPU %u", cpu);
}

static int hk_entry_frame(struct host *h, unsigned cpu, uint64_t *sp, uint64_t *ret)
{
	struct vcpu *v = hk_vcpu(h, (int)cpu);

	return v ? arch_vcpu_entry_frame(v, sp, ret) : -EINVAL;
}

static int hk_read_clock(struct host *h, unsigned cpu, uint64_t *ticks)
{
	struct vcpu *v = hk_vcpu(h, (int)cpu);

	return v ? arch_vcpu_read_tsc(v, ticks) : -EINVAL;
}

static int hk_clock_khz(struct host *h, uint64_t *khz)
{
	struct vcpu *v = hk_vcpu(h, 0);

	return v ? arch_vcpu_tsc_khz(v, khz) : -EINVAL;
}

static void hk_stop(struct host *h, int self, enum vm_stop_reason reason, const char *msg)
{
	vm_stop(hk_of(h)->vm, hk_vcpu(h, self), reason, "%s", msg);
}

static void hk_request_stop(struct host *h, enum vm_stop_reason reason, const char *msg)
{
	vm_request_stop(hk_of(h)->vm, reason, "%s", msg);
}

static bool hk_stopping(struct host *h)
{
	return atomic_load(&hk_of(h)->vm->stopping) != 0;
}

/* The core's hooks, each handing on to the tracer's with the vCPU's index. */
static void hkh_thread_enter(void *opaque)
{
	struct host_kvm *hk = opaque;

	hk->hooks.thread_enter(hk->hooks.opaque);
}

static void hkh_thread_exit(void *opaque)
{
	struct host_kvm *hk = opaque;

	hk->hooks.thread_exit(hk->hooks.opaque);
}

static bool hkh_pc_in_stub(void *opaque, uint64_t pc)
{
	struct host_kvm *hk = opaque;

	return hk->hooks.pc_in_stub(hk->hooks.opaque, pc);
}

static void hkh_stop(void *opaque, struct vm *vm, struct vcpu *self, enum vm_stop_reason reason, const char *msg)
{
	struct host_kvm *hk = opaque;

	(void)vm;
	hk->hooks.stop(hk->hooks.opaque, self ? (int)self->id : HOST_NO_CPU, reason, msg);
}

/* A breakpoint: the host arch's own (arm64: the stub's doorbell, its guard page's mapping), else the tracer's. */
static void hkh_debug_exit(void *opaque, struct vcpu *vcpu, uint64_t pc)
{
	struct host_kvm *hk = opaque;
	uint32_t ring;

	switch (arch_vcpu_host_break(vcpu, pc, &ring)) {
	case ARCH_BREAK_DOORBELL:
		if (hk->hooks.doorbell)
			hk->hooks.doorbell(hk->hooks.opaque, ring);
		if (arch_stub_doorbell_leave(vcpu))
			vm_request_stop(hk->vm, VM_STOP_HOST_FAILURE, "vCPU %u: cannot leave the stub's doorbell",
					vcpu->id);
		return;
	case ARCH_BREAK_DONE:
		return;
	case ARCH_BREAK_NONE:
		break;
	}
	hk->hooks.debug_exit(hk->hooks.opaque, vcpu->id, pc);
}

static void hkh_exit(void *opaque, struct vcpu *vcpu, const struct vm_exit_info *x)
{
	struct host_kvm *hk = opaque;

	hk->hooks.exit(hk->hooks.opaque, vcpu->id, x);
}

/* The stub's doorbell as the host arch heard it (x86_64: its port). */
static void hkh_doorbell(void *opaque, uint32_t ring)
{
	struct host_kvm *hk = opaque;

	hk->hooks.doorbell(hk->hooks.opaque, ring);
}

static void hk_set_hooks(struct host *h, const struct host_hooks *hooks)
{
	struct host_kvm *hk = hk_of(h);
	struct vm_hooks vh = { .opaque = hk };

	if (!hooks) {
		vm_set_hooks(hk->vm, NULL);
		memset(&hk->hooks, 0, sizeof(hk->hooks));
		return;
	}
	hk->hooks = *hooks;
	/* A hook the tracer leaves NULL stays NULL in the core: no cost for it. */
	vh.thread_enter = hooks->thread_enter ? hkh_thread_enter : NULL;
	vh.thread_exit = hooks->thread_exit ? hkh_thread_exit : NULL;
	vh.pc_in_stub = hooks->pc_in_stub ? hkh_pc_in_stub : NULL;
	vh.stop = hooks->stop ? hkh_stop : NULL;
	vh.debug_exit = hooks->debug_exit ? hkh_debug_exit : NULL;
	vh.exit = hooks->exit ? hkh_exit : NULL;
	vh.doorbell = hooks->doorbell ? hkh_doorbell : NULL;
	vm_set_hooks(hk->vm, &vh);
}

/* The tracer's addresses are the kernel image's (arch_image_base). */
static void *hk_gpa_ptr(struct host *h, uint64_t gpa, uint64_t len)
{
	struct vm *vm = hk_of(h)->vm;

	return vm_gpa_ptr(vm, gpa + arch_image_base(vm), len);
}

/*
 * Every vCPU is outside KVM_RUN: KVM runs what memory holds next time,
 * once the instruction cache holds it too (arm64 without DIC: the
 * cleaning to the point of unification and the invalidation that
 * __builtin___clear_cache makes; nothing on x86_64).
 */
static int hk_write_code(struct host *h, uint64_t gpa, uint8_t *hva, const void *bytes, size_t len)
{
	(void)h;
	(void)gpa;
	memcpy(hva, bytes, len);
	__builtin___clear_cache((char *)hva, (char *)hva + len);
	return 0;
}

static int hk_stub_install(struct host *h, const struct elf_image *elf, const struct symtab *syms,
			   uint64_t data_size, struct stub_region *r, struct errbuf *err)
{
	return arch_stub_install(hk_of(h)->vm, elf, syms, data_size, r, err);
}

static void hk_stub_free(struct host *h, struct stub_region *r)
{
	(void)h;
	stub_region_free(r);
}

static int hk_stub_room(struct host *h, const struct elf_image *elf, const struct symtab *syms, uint64_t *bytes,
			struct errbuf *err)
{
	return arch_stub_room(hk_of(h)->vm, elf, syms, bytes, err);
}

static int hk_rings_area(struct host *h, uint8_t **host, uint64_t *va, uint64_t *size, struct errbuf *err)
{
	return arch_rings_area(hk_of(h)->vm, host, va, size, err);
}

static int hk_vmev_setup(struct host *h, const uint32_t (*msrs)[2], unsigned n_msrs, int hypercall, unsigned quiet,
			 unsigned *offered, const char **why_no_hypercall, struct errbuf *err)
{
	struct host_kvm *hk = hk_of(h);

	*offered = arch_vm_exit_kinds();
	*why_no_hypercall = NULL;
	if (n_msrs) {
		struct errbuf why = { "" };
		int rc = arch_optional.vm_msr_intercept ? arch_optional.vm_msr_intercept(hk->vm, msrs, n_msrs, &why) :
			 err_set(&why, EOPNOTSUPP, "%s has no MSRs", arch_name());

		if (rc == -EOPNOTSUPP && !(quiet & HOST_EV_MSR))
			log_warn("kvm:msr: %s: no MSR events are recorded", why.msg);
		else if (rc == -EOPNOTSUPP)
			log_info("kvm:msr: %s", why.msg);
		else if (rc)
			return err_set(err, -rc, "kvm:msr: %s", why.msg);
		else
			*offered |= HOST_EV_MSR;
	}
	if (hypercall) {
		int rc = arch_vm_hypercall_exits(hk->vm, why_no_hypercall, err);

		if (rc == -EOPNOTSUPP && !(quiet & HOST_EV_HYPERCALL))
			log_warn("kvm:hypercall: %s: no hypercall events are recorded", *why_no_hypercall);
		else if (rc == -EOPNOTSUPP)
			log_info("kvm:hypercall: %s", *why_no_hypercall);
		else if (rc)
			return rc;
		else
			*offered |= HOST_EV_HYPERCALL;
	}
	return 0;
}

static int hk_exit_stamp(struct host *h, unsigned cpu, uint64_t *ticks, uint64_t *pc)
{
	struct vcpu *v = hk_vcpu(h, (int)cpu);

	if (!v)
		return -EINVAL;
	if (arch_vcpu_read_tsc(v, ticks) || arch_vcpu_exit_pc(v, pc))
		return -EIO;
	return 0;
}

static int hk_vcpu_caller(struct host *h, unsigned cpu, uint64_t *ret)
{
	struct vcpu *v = hk_vcpu(h, (int)cpu);

	return v ? arch_vcpu_caller(v, ret) : -EINVAL;
}

static int hk_vcpu_cpuid(struct host *h, unsigned cpu, struct host_cpuid_leaf *out, unsigned max, unsigned *n)
{
	struct vcpu *v = hk_vcpu(h, (int)cpu);

	return !v ? -EINVAL : !arch_optional.vcpu_cpuid ? -EOPNOTSUPP : arch_optional.vcpu_cpuid(v, out, max, n);
}

static void hk_describe(struct host *h, FILE *f)
{
	struct vm *vm = hk_of(h)->vm;

	for (unsigned i = 0; i < vm->ncpus; i++)
		fprintf(f, "vcpu %u: %s, %lu NMIs injected (%lu inside the stub)\n", i,
			vcpu_state_name(atomic_load(&vm->vcpus[i].state)),
			atomic_load(&vm->vcpus[i].nmis), atomic_load(&vm->vcpus[i].nmis_in_stub));
}

static unsigned hk_inject_nmi(struct host *h)
{
	return vm_inject_nmi(hk_of(h)->vm);
}

/* The console's input: the UART takes what fits its receive buffer. */
static size_t hk_console_deliver(void *opaque, const uint8_t *buf, size_t len)
{
	struct host_kvm *hk = opaque;

	if (atomic_load(&hk->vm->stopping))
		return len;	/* dropped: nobody reads it any more */
	return arch_console_input(hk->vm, buf, len);
}

static int hk_start(struct host *h, struct errbuf *err)
{
	struct host_kvm *hk = hk_of(h);
	int rc = vm_create_vcpus(hk->vm, err);

	if (!rc && console_input_start(&hk->con, hk_console_deliver, hk))
		log_warn("the guest gets no console input: no thread for it");
	return rc;
}

static enum vm_stop_reason hk_run(struct host *h, int *signo)
{
	struct host_kvm *hk = hk_of(h);
	enum vm_stop_reason reason = vm_run(hk->vm);

	console_input_stop(&hk->con);
	arch_console_flush(hk->vm);
	*signo = hk->vm->stop_signal;
	return reason;
}

static const char *hk_stop_msg(struct host *h)
{
	return hk_of(h)->vm->stop_msg;
}

static void hk_vcpu_registers(struct host *h, unsigned cpu, char *buf, size_t len, uint64_t *pc)
{
	struct vcpu *v = hk_vcpu(h, (int)cpu);

	*pc = 0;
	if (!v) {
		snprintf(buf, len, "(no vCPU %u)\n", cpu);
		return;
	}
	arch_vcpu_registers(v, buf, len, pc);
}

static void hk_report(struct host *h, FILE *f)
{
	struct host_kvm *hk = hk_of(h);

	if (hk->vm->cfg.compat)
		compat_report(&hk->vm->compat, f);
}

static void hk_destroy(struct host *h)
{
	struct host_kvm *hk = hk_of(h);

	if (!hk)
		return;
	console_input_stop(&hk->con);
	if (hk->vm_created)
		vm_destroy(hk->vm);
	free(hk->cmdline);
	free(hk);
}

static const struct host_ops host_kvm_ops = {
	.pause = hk_pause,
	.resume = hk_resume,
	.let_run = hk_let_run,
	.vcpu_pc = hk_vcpu_pc,
	.set_breakpoints = hk_set_breakpoints,
	.entry_frame = hk_entry_frame,
	.read_clock = hk_read_clock,
	.clock_khz = hk_clock_khz,
	.stop = hk_stop,
	.request_stop = hk_request_stop,
	.stopping = hk_stopping,
	.set_hooks = hk_set_hooks,
	.gpa_ptr = hk_gpa_ptr,
	.write_code = hk_write_code,
	.stub_install = hk_stub_install,
	.stub_free = hk_stub_free,
	.stub_room = hk_stub_room,
	.rings_area = hk_rings_area,
	.describe = hk_describe,
	.inject_nmi = hk_inject_nmi,
	.start = hk_start,
	.run = hk_run,
	.stop_msg = hk_stop_msg,
	.vcpu_registers = hk_vcpu_registers,
	.report = hk_report,
	.destroy = hk_destroy,
};

static const struct host_exit_ops host_kvm_exit_ops = {
	.setup = hk_vmev_setup,
	.stamp = hk_exit_stamp,
	.caller = hk_vcpu_caller,
	.cpuid = hk_vcpu_cpuid,
};

static void host_kvm_init(struct host_kvm *hk, struct vm *vm)
{
	hk->vm = vm;
	hk->ops = host_kvm_ops;
	if (!arch_stub_in_image()) {
		/* Room for the stub and its rings as asked for, and nowhere they must move. */
		hk->ops.stub_room = NULL;
		hk->ops.rings_area = NULL;
	}
	if (!arch_optional.vcpu_nmi)
		hk->ops.inject_nmi = NULL;	/* `vmmtrace nmi` is refused in one line */
	hk->h.ops = &hk->ops;
	hk->h.name = "KVM";
	hk->h.exits = &host_kvm_exit_ops;
	hk->h.ncpus = vm->cfg.ncpus;
	hk->h.kernel_path = vm->cfg.kernel_path;
}

/* Appends each option of opts to *line, saying with -v why. */
static int hk_add_opts(char **line, const struct cmdline_opt *opts, const char *layer, int verbose)
{
	for (; opts->opt; opts++) {
		char *next = NULL;

		if (asprintf(&next, "%s %s", *line, opts->opt) < 0)
			return -ENOMEM;
		free(*line);
		*line = next;
		if (verbose)
			log_info("%s: %s added to the command line: %s", layer, opts->opt, opts->why);
	}
	return 0;
}

/*
 * The command line: the host's default, what the compat layer needs and,
 * unless --fast-boot says otherwise, what only saves time when emulated;
 * or --cmdline-replace; then --cmdline's additions; last what a traced
 * guest needs (ARCH_CMDLINE_TRACED) unless the line has it already.
 */
static int hk_cmdline(struct host_kvm *hk, const struct host_boot *b, int compat, struct errbuf *err)
{
	int fast = b->fast_boot == HOST_AUTO ? compat : b->fast_boot;
	int rc = 0;

	hk->cmdline = strdup(b->cmdline_replace ? b->cmdline_replace : arch_default_cmdline());
	if (hk->cmdline && !b->cmdline_replace && compat)
		rc = hk_add_opts(&hk->cmdline, arch_cmdline_opts(ARCH_CMDLINE_COMPAT), "compat layer", b->verbose);
	if (hk->cmdline && !rc && !b->cmdline_replace && fast)
		rc = hk_add_opts(&hk->cmdline, arch_cmdline_opts(ARCH_CMDLINE_FAST_BOOT), "--fast-boot", b->verbose);
	if (hk->cmdline && !rc && *b->cmdline_extra) {
		char *next = NULL;

		rc = asprintf(&next, "%s%s", hk->cmdline, b->cmdline_extra) < 0 ? -ENOMEM : 0;
		free(hk->cmdline);
		hk->cmdline = next;
	}
	for (const struct cmdline_opt *o = arch_cmdline_opts(ARCH_CMDLINE_TRACED);
	     hk->cmdline && !rc && b->traced && o->opt; o++)
		if (!strstr(hk->cmdline, o->opt))
			rc = hk_add_opts(&hk->cmdline, (const struct cmdline_opt[]){ *o, { NULL, NULL } }, "traced",
					 b->verbose);
	if (!hk->cmdline || rc)
		return err_set(err, ENOMEM, "out of memory for the command line");
	return 0;
}

int host_kvm_guest_arch(void)
{
	return arch_guest_arch();
}

int host_kvm_traces(void)
{
	return arch_slot_ops() != NULL;
}

const unsigned long *host_kvm_sandbox_ioctls(size_t *n)
{
	return arch_sandbox_ioctls(n);
}

int host_kvm_create(struct host **out, const struct host_boot *b, struct errbuf *err)
{
	struct host_kvm *hk;
	struct vm_config cfg;
	int rc;

	*out = NULL;
	if ((rc = arch_kernel_check(b->img, err)))
		return rc;
	if (b->traced && !arch_slot_ops())
		return err_set(err, EOPNOTSUPP, "vmmtrace's own KVM host does not trace %s kernels yet: use --host qemu",
			       arch_name());
	if (b->ncpus > HOST_KVM_MAX_CPUS)
		return err_set(err, EINVAL, "--cpus %u: the KVM host runs at most %d vCPUs", b->ncpus, HOST_KVM_MAX_CPUS);
	if (!(hk = calloc(1, sizeof(*hk))))
		return err_set(err, ENOMEM, "out of memory for the VM");
	hk->verbose = b->verbose;
	console_init(&hk->con, b->console_fd);
	cfg = (struct vm_config){ .kernel_path = b->kernel, .initrd_path = b->initrd, .ncpus = b->ncpus,
				  .mem_size = b->mem, .console = &hk->con,
				  .compat = compat_resolve(b->compat), .stub_bytes = b->traced ? b->stub_bytes : 0 };
	if ((rc = hk_cmdline(hk, b, cfg.compat, err)))
		goto fail;
	cfg.cmdline = hk->cmdline;
	log_info("compat layer %s; command line: %s", cfg.compat ? "on" : "off", hk->cmdline);
	if ((rc = vcpu_init_signals(err)) || (rc = vm_create(&hk->vm_store, &cfg, err)))
		goto fail;
	hk->vm_created = 1;
	if ((rc = arch_vm_load(&hk->vm_store, b->img, b->initrd_data, b->initrd_size, err))) {
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg);
		/* The kernel or what it was given does not fit this VM: the user's to change. */
		rc = err_set(err, rc == -ENOEXEC ? ENOEXEC : EINVAL, "%s: %s", b->kernel, why);
		goto fail;
	}
	host_kvm_init(hk, &hk->vm_store);
	*out = &hk->h;
	return 0;
fail:
	hk->vm = &hk->vm_store;
	hk_destroy(&hk->h);
	return rc;
}
