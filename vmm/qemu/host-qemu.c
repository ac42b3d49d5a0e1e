// SPDX-License-Identifier: GPL-2.0
/* QEMU behind the host boundary (vmm/host/host.h); see host-qemu.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/slot.h"
#include "proto/trace.h"
#include "vmm/image/elf.h"
#include "vmm/image/image.h"
#include "vmm/image/symtab.h"
#include "vmm/guest/guest.h"
#include "vmm/qemu/host-qemu-int.h"
#include "vmm/util/log.h"
#include "vmm/util/util.h"

#define QEMU_LET_RUN_MS 1

static int on_driver(const struct host_qemu *hq)
{
	return pthread_equal(pthread_self(), hq->driver);
}

/* Whether this thread holds the gdbstub's conversation: the driver's, or a pause's holder. */
static int hq_owns(const struct host_qemu *hq)
{
	if (atomic_load(&hq->handed))
		return pthread_equal(pthread_self(), hq->holder);
	return on_driver(hq);
}

/* Whether rc says QEMU is gone; then no operation talks to it again. */
int hq_gone(struct host_qemu *hq, int rc)
{
	if (rc == -EPIPE || rc == -ECONNRESET || rc == -ECHILD || hq->q->exited)
		hq->dead = 1;
	return hq->dead;
}

/* The driver's wait for a stop ends at once: another thread asked it something. */
static void hq_wake(struct host_qemu *hq)
{
	uint64_t one = 1;

	if (hq->wake_fd >= 0 && write(hq->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("qemu: cannot wake the driving thread: %s", strerror(errno));
}

static void hq_request_stop(struct host *h, enum vm_stop_reason reason, const char *msg)
{
	struct host_qemu *hq = hq_of(h);

	pthread_mutex_lock(&hq->lock);
	if (!atomic_load(&hq->stopping)) {
		hq->reason = reason;
		snprintf(hq->msg, sizeof(hq->msg), "%s", msg);
		atomic_store(&hq->stopping, 1);
	}
	pthread_mutex_unlock(&hq->lock);
}

static bool hq_stopping(struct host *h)
{
	return atomic_load(&hq_of(h)->stopping) != 0 || hq_of(h)->dead;
}

static void hq_stop(struct host *h, int self, enum vm_stop_reason reason, const char *msg)
{
	struct host_qemu *hq = hq_of(h);

	if (!on_driver(hq)) {
		/* Carried out by the driver at its next step: the gdbstub is its conversation. */
		pthread_mutex_lock(&hq->lock);
		if (!hq->asked) {
			hq->asked = 1;
			hq->ask_reason = reason;
			snprintf(hq->ask_msg, sizeof(hq->ask_msg), "%s", msg);
		}
		pthread_mutex_unlock(&hq->lock);
		hq_wake(hq);
		return;
	}
	if (hq->hooks.stop && !atomic_load(&hq->stopping))
		hq->hooks.stop(hq->hooks.opaque, self, reason, msg);
	else
		hq_request_stop(h, reason, msg);
}

/*
 * On the driver QEMU is stopped whenever the tracer runs: nothing to
 * pause. Another thread asks the driver (host_qemu_step serves it) and
 * holds the gdbstub until its resume; after the guest's end it gets no
 * conversation, and every operation that needs one fails.
 */
static uint64_t hq_pause(struct host *h, int self)
{
	struct host_qemu *hq = hq_of(h);
	uint64_t start = util_now_ns();

	(void)self;
	if (on_driver(hq))
		return 0;
	pthread_mutex_lock(&hq->pause_lock);
	pthread_mutex_lock(&hq->lock);
	hq->pause_want = 1;
	hq_wake(hq);
	while (!atomic_load(&hq->handed) && !hq->closed && !hq->pause_failed)
		pthread_cond_wait(&hq->cond, &hq->lock);
	if (atomic_load(&hq->handed))
		hq->holder = pthread_self();
	hq->pause_failed = 0;
	pthread_mutex_unlock(&hq->lock);
	return util_now_ns() - start;
}

static void hq_resume(struct host *h)
{
	struct host_qemu *hq = hq_of(h);

	if (on_driver(hq))
		return;	/* the driver resumes QEMU when the hook returns */
	pthread_mutex_lock(&hq->lock);
	hq->pause_want = 0;
	pthread_cond_broadcast(&hq->cond);
	pthread_mutex_unlock(&hq->lock);
	pthread_mutex_unlock(&hq->pause_lock);
}

/* The ring whose header the stub holds at its doorbell, or UINT32_MAX. */
static uint32_t hq_doorbell_ring(struct host_qemu *hq, unsigned cpu)
{
	const struct vt_stub_config *c = (const struct vt_stub_config *)hq->stub_cfg;
	struct errbuf err;
	uint64_t hdr;

	if (qvm_vcpu_reg(hq->q, cpu, hq_guest(hq)->ring_reg_off, &hdr, &err) || hdr < c->ring_hdrs ||
	    (hdr - c->ring_hdrs) % VT_HDR_SIZE || (hdr - c->ring_hdrs) / VT_HDR_SIZE >= UINT32_MAX)
		return UINT32_MAX;
	return (uint32_t)((hdr - c->ring_hdrs) / VT_HDR_SIZE);
}

/* A vCPU at the stub's doorbell: the tracer drains its ring, the vCPU steps past it. */
static int hq_doorbell(struct host_qemu *hq, const struct qvm_stop *st, struct errbuf *err)
{
	hq->doorbells++;
	if (hq->hooks.doorbell)
		hq->hooks.doorbell(hq->hooks.opaque, hq_doorbell_ring(hq, st->cpu));
	return qvm_step_over(hq->q, 1, st, err);
}

static void hq_let_run(struct host *h, int self, uint64_t mask, uint64_t wait_ns)
{
	struct host_qemu *hq = hq_of(h);
	uint64_t end = util_now_ns() + wait_ns, now;
	struct qvm_stop st;
	struct errbuf err = { "" };

	if (!hq_owns(hq) || hq->dead)
		return;
	if (self >= 0)
		mask &= ~(1ULL << self);
	mask &= hq->h.ncpus >= 64 ? ~0ULL : (1ULL << hq->h.ncpus) - 1;
	/*
	 * The whole while: a vCPU that fills its ring again and again would
	 * otherwise end every run at the doorbell, inside the stub, where the
	 * caller wants it not to be.
	 */
	do {
		/*
		 * A moment: a TCG vCPU finishes a record in microseconds, and the
		 * caller asks again while one is still inside the stub.
		 */
		int rc = qvm_let_run(hq->q, mask, QEMU_LET_RUN_MS, &st, &err);

		if (!rc && st.cpu < QVM_MAX_CPUS && st.pc == hq->doorbell)
			rc = hq_doorbell(hq, &st, &err);
		if (rc) {
			if (!hq_gone(hq, rc))
				hq_request_stop(h, VM_STOP_HOST_FAILURE, err.msg);
			return;
		}
		/* Another breakpoint: the vCPU waits on it and hits it again once resumed. */
		now = util_now_ns();
	} while (st.cpu < QVM_MAX_CPUS && st.pc == hq->doorbell && now < end);
}

static int hq_vcpu_pc(struct host *h, unsigned cpu, uint64_t *pc)
{
	struct host_qemu *hq = hq_of(h);
	struct errbuf err;
	int rc = hq->dead ? -ECHILD : !hq_owns(hq) ? -EPERM : qvm_vcpu_pc(hq->q, cpu, pc, &err);

	hq_gone(hq, rc);
	return rc;
}

static int hq_has(const uint64_t *v, unsigned n, uint64_t va)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i] == va)
			return 1;
	return 0;
}

/* QEMU's breakpoints hold for every vCPU: it gets the union of what each wants. */
int hq_sync_breaks(struct host_qemu *hq, struct errbuf *err)
{
	uint64_t next[HOST_MAX_CPUS * 4 + 5];
	unsigned n = 0;
	int rc;

	if (hq->doorbell)
		next[n++] = hq->doorbell;
	if (hq->guard.bp && !hq_has(next, n, hq->guard.bp))
		next[n++] = hq->guard.bp;
	for (unsigned i = 0; i < 3; i++)
		if (hq->end_bp[i] && !hq_has(next, n, hq->end_bp[i]))
			next[n++] = hq->end_bp[i];
	for (unsigned c = 0; c < hq->h.ncpus; c++)
		for (unsigned i = 0; i < hq->nwant[c]; i++)
			if (!hq_has(next, n, hq->want[c][i]))
				next[n++] = hq->want[c][i];
	for (unsigned i = 0; i < hq->nset; i++)
		if (!hq_has(next, n, hq->set[i]) && (rc = qvm_clear_break(hq->q, 1, hq->set[i], err)))
			return rc;
	for (unsigned i = 0; i < n; i++)
		if (!hq_has(hq->set, hq->nset, next[i]) && (rc = qvm_set_break(hq->q, 1, next[i], err)))
			return rc;
	memcpy(hq->set, next, n * sizeof(next[0]));
	hq->nset = n;
	return 0;
}

static int hq_set_breakpoints(struct host *h, unsigned cpu, const uint64_t *va, unsigned n, struct errbuf *err)
{
	struct host_qemu *hq = hq_of(h);

	if (cpu >= hq->h.ncpus || n > 4)
		return err_set(err, EINVAL, "qemu: %u breakpoints on vCPU %u", n, cpu);
	if (!hq_owns(hq))
		return err_set(err, EPERM, "qemu: breakpoints are set by the gdbstub's holder only");
	if (hq->dead)
		return err_set(err, ECHILD, "qemu: gone");
	memcpy(hq->want[cpu], va, n * sizeof(*va));
	hq->nwant[cpu] = n;
	return hq_sync_breaks(hq, err);
}

static int hq_entry_frame(struct host *h, unsigned cpu, uint64_t *sp, uint64_t *ret)
{
	struct host_qemu *hq = hq_of(h);
	struct errbuf err;

	if (hq->dead || !hq_owns(hq) || qvm_vcpu_reg(hq->q, cpu, hq_guest(hq)->sp_off, sp, &err))
		return -EIO;
	if (hq_guest(hq)->ret_off == RET_ON_STACK)
		return qvm_read_virt_on(hq->q, cpu, *sp, ret, sizeof(*ret), &err) ? -EIO : 0;
	return qvm_vcpu_reg(hq->q, cpu, hq_guest(hq)->ret_off, ret, &err) ? -EIO : 0;
}

/*
 * The gdbstub shows neither CNTVCT_EL0 nor riscv64's time: the counter is
 * known only at the start, where QEMU's virtual clock (which both derive
 * from) is 0 with the machine just reset.
 */
static int hq_read_clock(struct host *h, unsigned cpu, uint64_t *ticks)
{
	(void)cpu;
	if (hq_of(h)->started)
		return -EOPNOTSUPP;
	*ticks = 0;
	return 0;
}

static int hq_clock_khz(struct host *h, uint64_t *khz)
{
	*khz = hq_of(h)->clock_khz;
	return *khz ? 0 : -EOPNOTSUPP;
}

static void hq_set_hooks(struct host *h, const struct host_hooks *hooks)
{
	struct host_qemu *hq = hq_of(h);

	if (hooks)
		hq->hooks = *hooks;
	else
		memset(&hq->hooks, 0, sizeof(hq->hooks));
}

void *hq_gpa_ptr(struct host *h, uint64_t gpa, uint64_t len)
{
	struct host_qemu *hq = hq_of(h);

	return qvm_gpa_ptr(hq->q, hq_real(hq, gpa), len);
}

/* Through the gdbstub, so that QEMU drops what it translated of the page. */
static int hq_write_code(struct host *h, uint64_t gpa, uint8_t *hva, const void *bytes, size_t len)
{
	struct host_qemu *hq = hq_of(h);
	struct errbuf err;
	int rc;

	(void)hva;
	if (!hq_owns(hq))
		return -EPERM;
	if (hq->dead)
		return -ECHILD;
	rc = qvm_write_code(hq->q, hq_real(hq, gpa), bytes, len, &err);
	if (rc && !hq_gone(hq, rc))
		log_warn("%s", err.msg);
	return rc;
}

/*
 * For `vmmtrace status`, from the control thread: each vCPU and where it
 * is, read in a pause of its own (a guest that stopped making progress
 * shows where it spins).
 */
static void hq_describe(struct host *h, FILE *f)
{
	struct host_qemu *hq = hq_of(h);
	uint64_t pc[HOST_MAX_CPUS];
	int have[HOST_MAX_CPUS] = { 0 };
	struct errbuf err;

	if (!on_driver(hq) && !hq->dead && !hq_stopping(h)) {
		hq_pause(h, HOST_NO_CPU);
		for (unsigned i = 0; i < h->ncpus && i < HOST_MAX_CPUS && hq_owns(hq) && !hq->dead; i++)
			have[i] = !qvm_vcpu_pc(hq->q, i, &pc[i], &err);
		hq_resume(h);
	}
	for (unsigned i = 0; i < h->ncpus; i++) {
		fprintf(f, "vcpu %u: in QEMU (pid %d), %s", i, (int)hq->q->q.pid,
			hq->dead ? "gone" : hq_stopping(h) ? "stopping" : "running");
		if (i < HOST_MAX_CPUS && have[i])
			fprintf(f, ", pc %#llx", (unsigned long long)pc[i]);
		fputc('\n', f);
	}
	fprintf(f, "qemu: %llu doorbells answered\n", (unsigned long long)atomic_load(&hq->doorbells));
}

static const struct host_ops host_qemu_ops = {
	.pause = hq_pause,
	.resume = hq_resume,
	.let_run = hq_let_run,
	.vcpu_pc = hq_vcpu_pc,
	.set_breakpoints = hq_set_breakpoints,
	.entry_frame = hq_entry_frame,
	.read_clock = hq_read_clock,
	.clock_khz = hq_clock_khz,
	.stop = hq_stop,
	.request_stop = hq_request_stop,
	.stopping = hq_stopping,
	.set_hooks = hq_set_hooks,
	.gpa_ptr = hq_gpa_ptr,
	.write_code = hq_write_code,
	.stub_install = hq_stub_install,
	.stub_free = hq_stub_free,
	.stub_room = hq_stub_room,
	.rings_area = hq_rings_area,
	.describe = hq_describe,
	.start = hq_start,
	.run = hq_run,
	.stop_msg = hq_stop_msg,
	.vcpu_registers = hq_vcpu_registers,
	.report = hq_report,
	.destroy = hq_destroy,
};

int host_qemu_loads(const struct kernel_image *img)
{
	return img->is_bzimage || (img->is_raw && img->codec == CODEC_NONE) ||
	       (img->arch == IMAGE_ARCH_LOONGARCH64 && !img->is_raw && img->codec == CODEC_NONE);
}

int host_qemu_init(struct host_qemu *hq, int image_arch, const struct elf_image *elf,
		   const uint8_t *head, size_t hlen, const char *kernel_path, struct errbuf *err)
{
	struct qvm *q = hq->q;
	uint64_t off = 0, first = UINT64_MAX;

	if (!guest_arch_of(image_arch))
		return err_set(err, EOPNOTSUPP, "tracing under --host qemu takes x86_64, arm64, riscv64 and loongarch64 "
			       "kernels, not %s", image_arch_name(image_arch));
	for (unsigned i = 0; i < elf->ehdr->e_phnum; i++)
		if (elf->phdr[i].p_type == PT_LOAD && elf->phdr[i].p_paddr < first)
			first = elf->phdr[i].p_paddr;
	/* Where QEMU's loader put the image: its first bytes, at a page boundary of RAM. */
	for (off = 0; head && off + hlen <= q->q.ram_size; off += 4096)
		if (!memcmp(q->q.ram + off, head, hlen))
			break;
	if (head && (first == UINT64_MAX || !hlen || off + hlen > q->q.ram_size))
		return err_set(err, ENOENT, "qemu: the kernel image is not in guest RAM");
	hq->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (hq->wake_fd < 0)
		return err_set(err, errno, "eventfd: %s", strerror(errno));
	hq->image_arch = image_arch;
	hq->bias = head ? (int64_t)off - (int64_t)first : 0;
	hq->driver = pthread_self();
	hq->clock_khz = host_qemu_guests[image_arch].clock_khz;
	if (image_arch == IMAGE_ARCH_X86_64 && host_qemu_x86_tsc_khz(&hq->clock_khz))
		hq->clock_khz = 0;
	pthread_mutex_init(&hq->lock, NULL);
	pthread_mutex_init(&hq->pause_lock, NULL);
	pthread_cond_init(&hq->cond, NULL);
	hq->inited = 1;
	hq->h.ops = &host_qemu_ops;
	hq->h.name = "qemu";
	hq->h.ncpus = q->ncpus;
	hq->h.kernel_path = kernel_path;
	if (head)
		log_info("qemu: the kernel at guest-physical %#llx", (unsigned long long)(q->arch.ram_gpa + off));
	return 0;
}

void host_qemu_destroy(struct host_qemu *hq)
{
	if (!hq->inited)
		return;
	hq->inited = 0;
	if (hq->wake_fd >= 0)
		close(hq->wake_fd);
	hq->wake_fd = -1;
	pthread_cond_destroy(&hq->cond);
	pthread_mutex_destroy(&hq->pause_lock);
	pthread_mutex_destroy(&hq->lock);
}

/* A vCPU stopped: the stub's doorbell, a breakpoint the tracer wants, or another vCPU's. */
static int hq_dispatch(struct host_qemu *hq, const struct qvm_stop *st, struct errbuf *err)
{
	int rc;

	if (hq->doorbell && st->pc == hq->doorbell)
		return hq_doorbell(hq, st, err);
	if (hq->guard.bp && st->pc == hq->guard.bp) {
		/* Once, before any traced call: the guard page mapped, the breakpoint gone unless the tracer wants it. */
		if ((rc = hq_guard_map_now(hq, st->cpu, err)) || (rc = hq_sync_breaks(hq, err)))
			return rc;
		if (!hq_has(hq->set, hq->nset, st->pc))
			return 0;
	}
	if (st->pc && hq_has(hq->end_bp, 3, st->pc)) {
		/* Stopped here, as the KVM host stops at the guest's reset exit: the tracer quiesces first. */
		hq_stop(&hq->h, (int)st->cpu, VM_STOP_GUEST_EXIT, "the guest powered off or reset");
		return 0;
	}
	if (st->cpu < hq->h.ncpus && hq_has(hq->want[st->cpu], hq->nwant[st->cpu], st->pc) && hq->hooks.debug_exit) {
		hq->hooks.debug_exit(hq->hooks.opaque, st->cpu, st->pc);
		if (atomic_load(&hq->stopping))
			return 0;
	}
	/* Still a breakpoint (another vCPU's, or kept): this vCPU runs past it. */
	if (hq_has(hq->set, hq->nset, st->pc))
		return qvm_step_over(hq->q, 1, st, err);
	return 0;
}

/* QEMU's end: the guest's own (QEMU exits with -no-reboot), or QEMU died. */
static void hq_ended(struct host_qemu *hq)
{
	struct qemu *q = &hq->q->q;
	char msg[128];

	enum vm_stop_reason reason = VM_STOP_GUEST_EXIT;

	hq->dead = 1;
	for (int i = 0; i < 100 && !qemu_reap(q); i++)
		usleep(10000);	/* its gdbstub closed first: the exit follows */
	if (q->reaped && WIFSIGNALED(q->status)) {
		snprintf(msg, sizeof(msg), "qemu died (signal %d, %s): the guest is gone", WTERMSIG(q->status),
			 strsignal(WTERMSIG(q->status)));
		reason = VM_STOP_HOST_FAILURE;
	} else {
		snprintf(msg, sizeof(msg), "the guest powered off or reset (QEMU ended)");
	}
	/* Whatever stop was under way, QEMU's end is the reason now. */
	pthread_mutex_lock(&hq->lock);
	hq->reason = reason;
	snprintf(hq->msg, sizeof(hq->msg), "%s", msg);
	atomic_store(&hq->stopping, 1);
	pthread_mutex_unlock(&hq->lock);
}

/*
 * Another thread's pause: QEMU stops (a breakpoint a vCPU hit just before
 * is handled first, as qvm_wait's would be), the conversation is that
 * thread's until its resume. The guest may have ended meanwhile: the
 * holder then finds every operation failing, and resumes.
 */
static void hq_serve_pause(struct host_qemu *hq)
{
	struct qvm_stop st = { QVM_MAX_CPUS, 0 };
	struct errbuf err = { "" };
	int rc = 0;

	if (hq->q->running && !hq->dead) {
		rc = qvm_pause(hq->q, &st, &err);
		if (rc) {
			/* QEMU may still run: no conversation to hand over; the guest ends at the next step. */
			if (!hq_gone(hq, rc))
				hq_request_stop(&hq->h, VM_STOP_HOST_FAILURE, err.msg);
			pthread_mutex_lock(&hq->lock);
			hq->pause_failed = 1;
			pthread_cond_broadcast(&hq->cond);
			pthread_mutex_unlock(&hq->lock);
			return;
		}
		if (st.cpu < QVM_MAX_CPUS && (rc = hq_dispatch(hq, &st, &err)) && !hq_gone(hq, rc))
			hq_request_stop(&hq->h, VM_STOP_HOST_FAILURE, err.msg);
	}
	pthread_mutex_lock(&hq->lock);
	atomic_store(&hq->handed, 1);
	pthread_cond_broadcast(&hq->cond);
	while (hq->pause_want)
		pthread_cond_wait(&hq->cond, &hq->lock);
	atomic_store(&hq->handed, 0);
	pthread_mutex_unlock(&hq->lock);
}

static enum host_qemu_state hq_step(struct host_qemu *hq, int timeout_ms)
{
	struct errbuf err = { "" };
	struct qvm_stop st;
	int asked, want, rc;

	if (hq->dead && !atomic_load(&hq->stopping))
		hq_ended(hq);
	if (atomic_load(&hq->stopping))
		return HOST_QEMU_ENDED;
	pthread_mutex_lock(&hq->lock);
	asked = hq->asked;
	want = hq->pause_want;
	pthread_mutex_unlock(&hq->lock);
	if (want && !asked) {
		hq_serve_pause(hq);
		return HOST_QEMU_RUNNING;	/* QEMU resumes at the next step */
	}
	if (asked) {
		/* Stopped first: a breakpoint that raced the pause stays unhandled, the guest ends here. */
		if (hq->started && (rc = qvm_pause(hq->q, &st, &err))) {
			if (hq_gone(hq, rc))
				hq_ended(hq);
			else
				hq_request_stop(&hq->h, VM_STOP_HOST_FAILURE, err.msg);
		} else
			hq_stop(&hq->h, HOST_NO_CPU, hq->ask_reason, hq->ask_msg);
		return HOST_QEMU_ENDED;
	}
	if (!hq->q->running) {
		hq->started = 1;
		if ((rc = qvm_resume(hq->q, &err))) {
			hq_request_stop(&hq->h, rc == -ECHILD ? VM_STOP_GUEST_EXIT : VM_STOP_HOST_FAILURE, err.msg);
			return HOST_QEMU_ENDED;
		}
	}
	rc = qvm_wait_wake(hq->q, timeout_ms, hq->wake_fd, &st, &err);
	if (rc == -ETIMEDOUT)
		return HOST_QEMU_RUNNING;
	if (rc == -ECHILD) {
		hq_ended(hq);
		return HOST_QEMU_ENDED;
	}
	if (!rc)
		rc = hq_dispatch(hq, &st, &err);
	if ((rc && hq_gone(hq, rc)) || hq->dead)	/* found gone here or by the tracer's hook */
		hq_ended(hq);
	else if (rc)
		hq_request_stop(&hq->h, VM_STOP_HOST_FAILURE, err.msg);
	return atomic_load(&hq->stopping) ? HOST_QEMU_ENDED : HOST_QEMU_RUNNING;
}

enum host_qemu_state host_qemu_step(struct host_qemu *hq, int timeout_ms)
{
	enum host_qemu_state state = hq_step(hq, timeout_ms);

	if (state == HOST_QEMU_ENDED) {
		/* No more conversations to hand over: a waiting pause returns without one. */
		pthread_mutex_lock(&hq->lock);
		hq->closed = 1;
		pthread_cond_broadcast(&hq->cond);
		pthread_mutex_unlock(&hq->lock);
	}
	return state;
}
