// SPDX-License-Identifier: GPL-2.0
/*
 * The vCPU loop. Exits the VM core answers (MMIO, through its bus) are
 * handled here; anything else (x86_64's port I/O among them) goes to the
 * arch layer, which either handles it or stops the VM with a diagnosis.
 * The loop never spins on an error.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/kvm/arch.h"
#include "vmm/kvm/kvm.h"
#include "vmm/util/log.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

#define VCPU_KICK_SIGNAL SIGUSR1

static void vcpu_kick_handler(int sig)
{
	(void)sig;
}

int vcpu_init_signals(struct errbuf *err)
{
	struct sigaction sa = { .sa_handler = vcpu_kick_handler };

	/* No SA_RESTART: the signal must make KVM_RUN return -EINTR. */
	sigemptyset(&sa.sa_mask);
	if (sigaction(VCPU_KICK_SIGNAL, &sa, NULL))
		return err_set(err, errno, "sigaction: %s", strerror(errno));
	return 0;
}

int vcpu_create(struct vm *vm, struct vcpu *vcpu, unsigned id, struct errbuf *err)
{
	int size, rc;

	memset(vcpu, 0, sizeof(*vcpu));
	vcpu->vm = vm;
	vcpu->id = id;
	vcpu->fd = kvm_ioctl_val(vm->vm_fd, KVM_CREATE_VCPU, id, "KVM_CREATE_VCPU", err);
	if (vcpu->fd < 0)
		return vcpu->fd;
	size = kvm_ioctl_val(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0, "KVM_GET_VCPU_MMAP_SIZE", err);
	if (size < 0) {
		rc = size;
		goto err_close;
	}
	vcpu->run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu->fd, 0);
	if (vcpu->run == MAP_FAILED) {
		rc = err_set(err, errno, "mmap of vCPU %u run area: %s", id, strerror(errno));
		goto err_close;
	}
	vcpu->run_size = size;
	rc = arch_vcpu_init(vcpu, err);
	if (rc)
		goto err_unmap;
	return 0;
err_unmap:
	munmap(vcpu->run, size);
err_close:
	close(vcpu->fd);
	vcpu->fd = -1;
	return rc;
}

void vcpu_destroy(struct vcpu *vcpu)
{
	if (vcpu->run)
		munmap(vcpu->run, vcpu->run_size);
	if (vcpu->fd >= 0)
		close(vcpu->fd);
	vcpu->run = NULL;
	vcpu->fd = -1;
}

static void vcpu_exit_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;

	/* Where no device answers, reads see all ones, as on an empty bus. */
	if (!run->mmio.is_write)
		memset(run->mmio.data, 0xff, sizeof(run->mmio.data));
	bus_dispatch(&vcpu->vm->mmio, run->mmio.phys_addr, run->mmio.is_write, run->mmio.data,
		     run->mmio.len < 8 ? run->mmio.len : 8);
	if (vcpu->vm->hooks.exit) {
		struct vm_exit_info x = {
			.kind = VM_EXIT_MMIO, .reason = KVM_EXIT_MMIO, .addr = run->mmio.phys_addr,
			.is_write = run->mmio.is_write,
			.size = run->mmio.len < 8 ? run->mmio.len : 8,
		};

		memcpy(&x.value, run->mmio.data, x.size);
		vm_report_exit(vcpu->vm, vcpu, &x);
	}
}

static void vcpu_exit_stop(struct vcpu *vcpu, enum vm_stop_reason reason, const char *what)
{
	char regs[256];

	arch_vcpu_describe(vcpu, regs, sizeof(regs));
	vm_request_stop(vcpu->vm, reason, "%s on vCPU %u (%s)", what, vcpu->id, regs);
}

/* An execution breakpoint: only the layer that set it knows what it means. */
static void vcpu_exit_debug(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	uint64_t pc = 0;

	if (arch_vcpu_debug_pc(vcpu, &pc) || !vm->hooks.debug_exit) {
		vm_request_stop(vm, VM_STOP_HOST_FAILURE, "unexpected breakpoint at 0x%llx on vCPU %u",
				(unsigned long long)pc, vcpu->id);
		return;
	}
	vm->hooks.debug_exit(vm->hooks.opaque, vcpu, pc);
}

/* The details an exit reason brings after it (vcpu_exit_mmio, the arch's port, MSR and hypercall exits), or 0. */
static enum vm_exit_kind vcpu_exit_detail(uint32_t reason)
{
	switch (reason) {
	case KVM_EXIT_IO: return VM_EXIT_PIO;
	case KVM_EXIT_MMIO: return VM_EXIT_MMIO;
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR: return VM_EXIT_MSR;
	case KVM_EXIT_HYPERCALL: return VM_EXIT_HYPERCALL;	/* the arch answers and reports it */
	}
	return 0;
}

static void vcpu_dispatch_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;

	if (vcpu->vm->hooks.exit)
		vm_report_exit(vcpu->vm, vcpu, &(struct vm_exit_info){ .kind = VM_EXIT_ANY,
								 .reason = run->exit_reason,
								 .detail = vcpu_exit_detail(run->exit_reason) });
	switch (run->exit_reason) {
	case KVM_EXIT_MMIO:
		vcpu_exit_mmio(vcpu);
		break;
	case KVM_EXIT_SHUTDOWN:
		vcpu_exit_stop(vcpu, VM_STOP_CPU_SHUTDOWN, "guest triple fault");
		break;
	case KVM_EXIT_SYSTEM_EVENT:
		if (run->system_event.type == KVM_SYSTEM_EVENT_RESET)
			vm_request_reset(vcpu->vm, "system reset event");
		else
			vm_request_stop(vcpu->vm, VM_STOP_GUEST_EXIT, "guest powered off");
		break;
	case KVM_EXIT_DEBUG:
		vcpu_exit_debug(vcpu);
		break;
	case KVM_EXIT_FAIL_ENTRY:
		vm_request_stop(vcpu->vm, VM_STOP_UNEMULATED,
				"KVM could not enter vCPU %u (hardware reason 0x%llx)", vcpu->id,
				(unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		break;
	default:
		arch_vcpu_exit(vcpu);
		break;
	}
}

/*
 * The NMI is taken before the next guest instruction, at the current PC;
 * counting those that interrupt the stub lets tests show that they did.
 */
static void vcpu_deliver_nmi(struct vcpu *vcpu)
{
	const struct vm_hooks *h = &vcpu->vm->hooks;
	struct errbuf err;
	uint64_t pc;

	if (!arch_optional.vcpu_nmi) {
		log_warn("vCPU %u: NMI not delivered: %s guests take none", vcpu->id, arch_name());
		return;
	}
	if (arch_optional.vcpu_nmi(vcpu, &err)) {
		log_warn("vCPU %u: NMI not delivered: %s", vcpu->id, err.msg);
		return;
	}
	atomic_fetch_add(&vcpu->nmis, 1);
	if (h->pc_in_stub && !arch_vcpu_pc(vcpu, &pc) && h->pc_in_stub(h->opaque, pc))
		atomic_fetch_add(&vcpu->nmis_in_stub, 1);
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *vcpu = arg;
	struct vm *vm = vcpu->vm;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (vm->hooks.thread_enter)
		vm->hooks.thread_enter(vm->hooks.opaque);
	while (!atomic_load(&vm->stopping)) {
		atomic_store(&vcpu->state, vm->pause_req ? VCPU_PAUSED : VCPU_IN_VMM);
		vm_pause_point(vm, vcpu);
		if (atomic_load(&vm->stopping))
			break;
		/*
		 * A plain load first: no locked exchange on every exit. While
		 * KVM still holds the previous NMI (the guest not yet in its
		 * handler), this one waits: KVM would merge the two, as
		 * hardware may, and the guest would see one NMI for two asked.
		 */
		if (atomic_load_explicit(&vcpu->nmi_pending, memory_order_relaxed) &&
		    !(arch_optional.vcpu_nmi_busy && arch_optional.vcpu_nmi_busy(vcpu)) &&
		    atomic_exchange(&vcpu->nmi_pending, 0))
			vcpu_deliver_nmi(vcpu);
		arch_vcpu_before_run(vcpu);
		atomic_store(&vcpu->state, VCPU_IN_GUEST);
		/* Only this thread writes it: a store, no locked add on every exit. */
		atomic_store_explicit(&vcpu->runs,
				      atomic_load_explicit(&vcpu->runs, memory_order_relaxed) + 1,
				      memory_order_release);
		if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			atomic_store(&vcpu->state, VCPU_IN_VMM);
			if (errno == EINTR || errno == EAGAIN) {
				vcpu->run->immediate_exit = 0;
				continue;
			}
			vm_request_stop(vm, VM_STOP_HOST_FAILURE, "KVM_RUN on vCPU %u: %s",
					vcpu->id, strerror(errno));
			break;
		}
		atomic_store(&vcpu->state, VCPU_IN_VMM);
		vcpu_dispatch_exit(vcpu);
	}
	atomic_store(&vcpu->state, VCPU_STOPPED);
	vm_vcpu_exited(vm);
	if (vm->hooks.thread_exit)
		vm->hooks.thread_exit(vm->hooks.opaque);
	return NULL;
}

int vcpu_start(struct vcpu *vcpu, struct errbuf *err)
{
	int rc = pthread_create(&vcpu->thread, NULL, vcpu_thread, vcpu);

	if (rc)
		return err_set(err, rc, "cannot start vCPU %u thread: %s", vcpu->id, strerror(rc));
	vcpu->thread_started = 1;
	return 0;
}

const char *vcpu_state_name(int state)
{
	static const char *const names[] = {
		[VCPU_NEW] = "not started", [VCPU_IN_GUEST] = "running",
		[VCPU_IN_VMM] = "in the VMM", [VCPU_PAUSED] = "paused", [VCPU_STOPPED] = "stopped",
	};
	return state >= 0 && state <= VCPU_STOPPED ? names[state] : "?";
}

void vcpu_kick(struct vcpu *vcpu)
{
	if (!vcpu->thread_started)
		return;
	vcpu->run->immediate_exit = 1;
	pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
}

void vcpu_join(struct vcpu *vcpu)
{
	if (vcpu->thread_started)
		pthread_join(vcpu->thread, NULL);
	vcpu->thread_started = 0;
}
