// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vmm/host/console.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/kvm.h"
#include "vmm/util/log.h"
#include "vmm/util/util.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

int vm_create(struct vm *vm, const struct vm_config *cfg, struct errbuf *err)
{
	int rc;

	memset(vm, 0, sizeof(*vm));
	vm->cfg = *cfg;
	vm->kvm_fd = vm->vm_fd = -1;
	pthread_mutex_init(&vm->stop_lock, NULL);
	pthread_mutex_init(&vm->pause_lock, NULL);
	pthread_cond_init(&vm->pause_cond, NULL);
	pthread_mutex_init(&vm->pauser_lock, NULL);
	rc = kvm_open(&vm->kvm_fd, err);
	if (rc)
		return rc;
	vm->vm_fd = kvm_ioctl_val(vm->kvm_fd, KVM_CREATE_VM, 0, "KVM_CREATE_VM", err);
	if (vm->vm_fd < 0) {
		rc = vm->vm_fd;
		goto err;
	}
	vm->ram_size = cfg->mem_size;
	vm->ram = mmap(NULL, cfg->mem_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->ram == MAP_FAILED) {
		vm->ram = NULL;
		rc = err_set(err, errno, "cannot map %llu MiB of guest memory: %s",
			     (unsigned long long)(cfg->mem_size >> 20), strerror(errno));
		goto err;
	}
	madvise(vm->ram, cfg->mem_size, MADV_MERGEABLE);
	rc = arch_vm_init(vm, err);
	if (rc)
		goto err;
	rc = arch_vm_add_devices(vm, err);
	if (rc)
		goto err;
	return 0;
err:
	vm_destroy(vm);
	return rc;
}

void vm_destroy(struct vm *vm)
{
	for (unsigned i = 0; vm->vcpus && i < vm->ncpus; i++)
		vcpu_destroy(&vm->vcpus[i]);
	free(vm->vcpus);
	arch_vm_remove_devices(vm);
	vm->vcpus = NULL;
	if (vm->ram)
		munmap(vm->ram, vm->ram_size);
	vm->ram = NULL;
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->vm_fd = vm->kvm_fd = -1;
}

int vm_create_vcpus(struct vm *vm, struct errbuf *err)
{
	int rc;

	vm->vcpus = calloc(vm->cfg.ncpus, sizeof(*vm->vcpus));
	if (!vm->vcpus)
		return err_set(err, ENOMEM, "out of memory for %u vCPUs", vm->cfg.ncpus);
	for (unsigned i = 0; i < vm->cfg.ncpus; i++) {
		rc = vcpu_create(vm, &vm->vcpus[i], i, err);
		if (rc)
			return rc;
		vm->ncpus = i + 1;
	}
	return 0;
}

int vm_add_region(struct vm *vm, uint64_t gpa, uint64_t size, uint8_t *hva, struct errbuf *err)
{
	struct kvm_userspace_memory_region r = {
		.slot = vm->nregions,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};
	int rc;

	if (vm->nregions == VM_MAX_REGIONS)
		return err_set(err, ENOSPC, "too many guest memory regions");
	rc = kvm_ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r, err);
	if (rc)
		return rc;
	vm->regions[vm->nregions++] = (struct mem_region){ gpa, size, hva };
	return 0;
}

void *vm_gpa_ptr(struct vm *vm, uint64_t gpa, uint64_t len)
{
	for (unsigned i = 0; i < vm->nregions; i++) {
		const struct mem_region *r = &vm->regions[i];

		if (gpa >= r->gpa && gpa - r->gpa <= r->size && len <= r->size - (gpa - r->gpa))
			return r->hva + (gpa - r->gpa);
	}
	return NULL;
}

void vm_set_hooks(struct vm *vm, const struct vm_hooks *hooks)
{
	if (hooks)
		vm->hooks = *hooks;
	else
		memset(&vm->hooks, 0, sizeof(vm->hooks));
}

void vm_request_stop(struct vm *vm, enum vm_stop_reason reason, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&vm->stop_lock);
	if (!atomic_load(&vm->stopping)) {
		vm->stop_reason = reason;
		va_start(ap, fmt);
		vsnprintf(vm->stop_msg, sizeof(vm->stop_msg), fmt, ap);
		va_end(ap);
		atomic_store(&vm->stopping, 1);
	}
	pthread_mutex_unlock(&vm->stop_lock);
	for (unsigned i = 0; vm->vcpus && i < vm->ncpus; i++)
		vcpu_kick(&vm->vcpus[i]);
}

void vm_stop(struct vm *vm, struct vcpu *self, enum vm_stop_reason reason, const char *fmt, ...)
{
	char msg[sizeof(vm->stop_msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (vm->hooks.stop && !atomic_load(&vm->stopping))
		vm->hooks.stop(vm->hooks.opaque, vm, self, reason, msg);
	else
		vm_request_stop(vm, reason, "%s", msg);
}

unsigned vm_inject_nmi(struct vm *vm)
{
	unsigned n = 0;

	for (unsigned i = 0; vm->vcpus && i < vm->ncpus; i++) {
		struct vcpu *vcpu = &vm->vcpus[i];

		if (!vcpu->thread_started || atomic_load(&vcpu->state) == VCPU_STOPPED)
			continue;
		atomic_store(&vcpu->nmi_pending, 1);
		vcpu_kick(vcpu);
		n++;
	}
	/*
	 * Return once every vCPU has handed its NMI to KVM (or 1 s passed):
	 * NMIs asked for one after the other are then not merged here, while a
	 * vCPU thread waits for the host to schedule it, nor in KVM, since a
	 * vCPU hands over an NMI only once KVM has delivered the one before
	 * (vcpu_thread): a vCPU still holding its NMI back is kicked again.
	 */
	for (int ms = 0; ms < 1000 && !atomic_load(&vm->stopping); ms++) {
		unsigned pending = 0;

		for (unsigned i = 0; vm->vcpus && i < vm->ncpus; i++) {
			struct vcpu *vcpu = &vm->vcpus[i];

			if (atomic_load(&vcpu->nmi_pending) && atomic_load(&vcpu->state) != VCPU_STOPPED) {
				pending++;
				if (ms)
					vcpu_kick(vcpu);
			}
		}
		if (!pending)
			break;
		usleep(1000);
	}
	return n;
}

void vm_request_reset(struct vm *vm, const char *source)
{
	const char *panic = vm->cfg.console ? console_panic(vm->cfg.console) : NULL;

	/* With panic=-1 a panicking kernel resets at once: tell that apart. */
	if (panic)
		vm_request_stop(vm, VM_STOP_GUEST_PANIC, "guest kernel panic: %s", panic);
	else if (vm->cfg.console && atomic_load(&vm->cfg.console->poweroff))
		vm_request_stop(vm, VM_STOP_GUEST_EXIT, "guest powered off");
	else
		vm_request_stop(vm, VM_STOP_GUEST_EXIT, "guest rebooted (%s)", source);
}

/*
 * The main thread waits for SIGINT/SIGTERM while the vCPUs run: they are
 * blocked in every thread (set before the threads start) and taken here.
 */
static void vm_wait(struct vm *vm)
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	while (!atomic_load(&vm->stopping)) {
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig > 0) {
			/* Only this thread writes it; read once the stop won. */
			if (!atomic_load(&vm->stopping))
				vm->stop_signal = sig;
			vm_stop(vm, NULL, VM_STOP_SIGNAL, "stopped by %s", strsignal(sig));
		}
	}
}

/* With pause_lock held: until every vCPU but self waits at its pause point. */
static void vm_wait_paused(struct vm *vm, struct vcpu *self)
{
	while (vm->paused < vm->live_vcpus - (self ? 1 : 0))
		pthread_cond_wait(&vm->pause_cond, &vm->pause_lock);
}

uint64_t vm_pause(struct vm *vm, struct vcpu *self)
{
	uint64_t start = util_now_ns();

	/*
	 * A vCPU that pauses the others must keep honouring other pausers
	 * while it waits its turn, or the two would wait for each other.
	 */
	if (self) {
		while (pthread_mutex_trylock(&vm->pauser_lock)) {
			vm_pause_point(vm, self);
			sched_yield();
		}
	} else {
		pthread_mutex_lock(&vm->pauser_lock);
	}
	pthread_mutex_lock(&vm->pause_lock);
	vm->pause_req = 1;
	pthread_mutex_unlock(&vm->pause_lock);
	for (unsigned i = 0; i < vm->ncpus; i++)
		if (&vm->vcpus[i] != self)
			vcpu_kick(&vm->vcpus[i]);
	pthread_mutex_lock(&vm->pause_lock);
	vm_wait_paused(vm, self);
	pthread_mutex_unlock(&vm->pause_lock);
	return util_now_ns() - start;
}

void vm_resume(struct vm *vm)
{
	pthread_mutex_lock(&vm->pause_lock);
	vm->pause_req = 0;
	pthread_cond_broadcast(&vm->pause_cond);
	pthread_mutex_unlock(&vm->pause_lock);
	pthread_mutex_unlock(&vm->pauser_lock);
}

/* Whether a vCPU must wait at its pause point: paused, and not let run. */
static int vm_must_wait(const struct vm *vm, const struct vcpu *vcpu)
{
	return vm->pause_req && !(vcpu && (vm->run_mask >> vcpu->id) & 1);
}

void vm_pause_point(struct vm *vm, struct vcpu *vcpu)
{
	pthread_mutex_lock(&vm->pause_lock);
	if (vm_must_wait(vm, vcpu)) {
		vm->paused++;
		pthread_cond_broadcast(&vm->pause_cond);
		while (vm_must_wait(vm, vcpu))
			pthread_cond_wait(&vm->pause_cond, &vm->pause_lock);
		vm->paused--;
	}
	pthread_mutex_unlock(&vm->pause_lock);
}

void vm_let_run(struct vm *vm, struct vcpu *self, uint64_t mask, uint64_t wait_ns)
{
	unsigned long runs[VM_MAX_CPUS];
	struct timespec nap = { 0, 20 * 1000 };
	uint64_t start;
	unsigned i, n = vm->ncpus;

	if (self)
		mask &= ~(1ULL << self->id);
	for (i = 0; i < n; i++)
		runs[i] = atomic_load(&vm->vcpus[i].runs);
	pthread_mutex_lock(&vm->pause_lock);
	vm->run_mask = mask;
	pthread_cond_broadcast(&vm->pause_cond);
	pthread_mutex_unlock(&vm->pause_lock);
	/* Until each has begun a KVM_RUN: a fixed nap could end before the host woke its thread. */
	start = util_now_ns();
	for (i = 0; i < n && util_now_ns() - start < wait_ns && !atomic_load(&vm->stopping);) {
		struct vcpu *v = &vm->vcpus[i];

		if (!((mask >> i) & 1) || atomic_load(&v->runs) != runs[i] ||
		    atomic_load(&v->state) == VCPU_STOPPED)
			i++;
		else
			nanosleep(&nap, NULL);
	}
	nanosleep(&nap, NULL);	/* a few guest instructions more */
	pthread_mutex_lock(&vm->pause_lock);
	vm->run_mask = 0;
	pthread_mutex_unlock(&vm->pause_lock);
	for (i = 0; i < n; i++)
		if ((mask >> i) & 1)
			vcpu_kick(&vm->vcpus[i]);
	pthread_mutex_lock(&vm->pause_lock);
	vm_wait_paused(vm, self);
	pthread_mutex_unlock(&vm->pause_lock);
}

/* A vCPU thread leaves its loop: a pauser must not wait for it any more. */
void vm_vcpu_exited(struct vm *vm)
{
	pthread_mutex_lock(&vm->pause_lock);
	vm->live_vcpus--;
	pthread_cond_broadcast(&vm->pause_cond);
	pthread_mutex_unlock(&vm->pause_lock);
}

enum vm_stop_reason vm_run(struct vm *vm)
{
	struct errbuf err;
	unsigned started = 0;

	vm->live_vcpus = vm->ncpus;
	for (; started < vm->ncpus; started++)
		if (vcpu_start(&vm->vcpus[started], &err)) {
			vm_request_stop(vm, VM_STOP_HOST_FAILURE, "%s", err.msg);
			pthread_mutex_lock(&vm->pause_lock);
			vm->live_vcpus = started;
			pthread_mutex_unlock(&vm->pause_lock);
			break;
		}
	vm_wait(vm);
	for (unsigned i = 0; i < started; i++)
		vcpu_join(&vm->vcpus[i]);
	if (log_get_level() >= LOG_DEBUG)
		for (unsigned i = 0; i < vm->ncpus; i++) {
			struct kvm_mp_state mp = { 0 };
			char regs[256];

			kvm_ioctl(vm->vcpus[i].fd, KVM_GET_MP_STATE, &mp, NULL);
			arch_vcpu_describe(&vm->vcpus[i], regs, sizeof(regs));
			log_debug("vCPU %u at stop: mp_state %u, %s", i, mp.mp_state, regs);
		}
	return vm->stop_reason;
}
