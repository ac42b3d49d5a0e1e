// SPDX-License-Identifier: GPL-2.0
/*
 * VM events (--event, vmevent.h): the exits a hardware-virtualization host
 * reports (host_hooks.exit) become struct ring_event records on the guest's clock
 * and go to the clients that asked for them through the same ordering
 * buffers as function events.
 *
 * The clock: KVM_GET_MSRS of IA32_TSC on the exiting vCPU gives the
 * guest's TSC as the stub's rdtsc would read it, whatever offset or
 * scaling KVM applies and even after the guest wrote its TSC; it is read
 * after the exit, before the vCPU runs again, so the event sorts after
 * every function event of that vCPU before the exit and before every one
 * after it. One ioctl per exit, only while a client wants the kind.
 *
 * Ordering against the consumer: an event is "in flight" from just before
 * its TSC is read until it is in every buffer; a drain round that sees
 * one in flight makes nothing final (tracer_drain_all), exactly as for a
 * ring record still being written.
 */
#include <errno.h>
#include <stdio.h>
#include <urcu/urcu-memb.h>

#include "vmm/trace/tracer-int.h"
#include "vmm/output/vmevent.h"
#include "vmm/util/log.h"

/*
 * Kinds asked for that this guest arch never brings the host (arm64: no
 * port I/O, no CPUID), said in one line; the host said why for MSRs and
 * hypercalls itself.
 */
static void tracer_vmev_never(struct tracer *t)
{
	uint32_t never = t->cfg.events & ~t->cfg.events_implied & ~t->vmev_offered &
			 ~(VMEV_MASK(VMEV_MSR) | VMEV_MASK(VMEV_HYPERCALL));
	char names[128] = "";
	size_t off = 0;

	for (unsigned k = 1; k < VMEV_NKINDS && off < sizeof(names); k++)
		if (never & VMEV_MASK(k))
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", off ? ", " : "", vmev_name(k));
	if (never)
		log_warn("%s: %s guests bring this host none: none are recorded", names, t->guest->name);
}

int tracer_vmev_setup(struct tracer *t, struct errbuf *err)
{
	static const struct { unsigned host, kind; } kinds[] = {
		{ HOST_EV_EXIT, VMEV_EXIT }, { HOST_EV_PIO, VMEV_PIO }, { HOST_EV_MMIO, VMEV_MMIO },
		{ HOST_EV_MSR, VMEV_MSR }, { HOST_EV_CPUID, VMEV_CPUID }, { HOST_EV_HYPERCALL, VMEV_HYPERCALL },
	};
	int want_msr = !!(t->cfg.events & VMEV_MASK(VMEV_MSR));
	unsigned offered = 0, quiet;
	int rc;

	t->vmev_offered = 0;
	if (!t->host->exits) {
		if (t->cfg.events)
			log_warn("the %s host reports no VM exits: no VM events are recorded", t->host->name);
		return 0;
	}
	quiet = (t->cfg.events_implied & VMEV_MASK(VMEV_MSR) ? HOST_EV_MSR : 0) |
		(t->cfg.events_implied & VMEV_MASK(VMEV_HYPERCALL) ? HOST_EV_HYPERCALL : 0);
	rc = t->host->exits->setup(t->host, t->cfg.msrs, want_msr ? t->cfg.n_msrs : 0,
				      !!(t->cfg.events & VMEV_MASK(VMEV_HYPERCALL)), quiet, &offered,
				      &t->vmev_why_no_hypercall, err);
	if (rc)
		return rc;
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (offered & kinds[i].host)
			t->vmev_offered |= VMEV_MASK(kinds[i].kind);
	tracer_vmev_never(t);
	return 0;
}

void tracer_vmev_recount(struct tracer *t)
{
	uint32_t want = 0;

	for (unsigned i = 0; i < PATCH_MAX_CLIENTS; i++)
		if (t->clients[i])
			want |= t->clients[i]->events;
	atomic_store(&t->vmev_want, want & t->vmev_offered);
}

static void tracer_vmev_route(struct tracer *t, const struct ring_event *ev, uint32_t mask)
{
	uint64_t max = atomic_load(&t->max_tsc);

	while (ev->tsc > max && !atomic_compare_exchange_weak(&t->max_tsc, &max, ev->tsc))
		;
	atomic_fetch_add(&t->vm_events, 1);
	urcu_memb_read_lock();
	for (unsigned i = 0; i < PATCH_MAX_CLIENTS; i++) {
		struct trace_client *c = rcu_dereference(t->clients[i]);

		if (c && (c->events & mask) && trace_buf_add(&c->buf, ev))
			log_warn("out of memory for a VM event: dropped");	/* never silently */
	}
	urcu_memb_read_unlock();
}

/* The event's kind and payload from what the core reported; 0: none. */
static unsigned tracer_vmev_fill(const struct vm_exit_info *x, struct ring_event *ev)
{
	unsigned w = x->is_write ? VMEV_FLAG_WRITE : 0;

	switch (x->kind) {
	case VM_EXIT_ANY:
		ev->parent = x->reason;
		ev->flags = vmev_flags(VMEV_EXIT, 0);
		return VMEV_EXIT;
	case VM_EXIT_PIO:
		ev->parent = (x->addr & 0xffff) | (uint64_t)(x->size & 0xff) << 16 | (uint64_t)x->count << 32;
		ev->arg = x->value;
		ev->flags = vmev_flags(VMEV_PIO, w);
		return VMEV_PIO;
	case VM_EXIT_MMIO:
		ev->parent = x->addr;
		ev->arg = x->value;
		ev->flags = vmev_flags(VMEV_MMIO, w | (x->size & 0xf) << VMEV_LEN_SHIFT);
		return VMEV_MMIO;
	case VM_EXIT_MSR:
		ev->parent = x->addr;
		ev->arg = x->value;
		ev->flags = vmev_flags(VMEV_MSR, w | (x->failed ? VMEV_FLAG_GP : 0));
		return VMEV_MSR;
	case VM_EXIT_HYPERCALL:
		ev->parent = vmev_hypercall_pack((uint32_t)x->addr, (uint32_t)x->ret);
		ev->arg = x->value;
		ev->flags = vmev_flags(VMEV_HYPERCALL, x->smc ? VMEV_FLAG_SMC : 0);
		return VMEV_HYPERCALL;
	}
	return 0;
}

/*
 * kvm:msr: MSRs are read and written by small leaves (native_write_msr),
 * so the RIP alone names the same function for every access; the caller,
 * from the guest's stack, says who asked (kvm_register_clock). Exits for
 * MSRs are rare (a dozen a boot): two more ioctls each cost nothing.
 */
static void tracer_vmev_caller(struct tracer *t, unsigned cpu, struct ring_event *ev)
{
	uint64_t ret;

	if (!t->host->exits->caller(t->host, cpu, &ret))
		ev->parent = vmev_msr_pack((uint32_t)ev->parent, ret);
}

/* The detail event the host said an exit brings after its kvm:exit event, or 0. */
static unsigned tracer_vmev_detail(enum vm_exit_kind detail)
{
	switch (detail) {
	case VM_EXIT_PIO: return VMEV_PIO;
	case VM_EXIT_MMIO: return VMEV_MMIO;
	case VM_EXIT_MSR: return VMEV_MSR;
	case VM_EXIT_HYPERCALL: return VMEV_HYPERCALL;
	case VM_EXIT_ANY: break;
	}
	return 0;
}

/*
 * One exit's kvm:exit event and its port, MMIO or MSR event share one read
 * of the guest's TSC and RIP (two ioctls, the main cost of an event). The
 * stamp stays "in flight" from the first read until the second event is in
 * the buffers, so that the consumer makes nothing later final meanwhile.
 */
void tracer_vm_exit(void *opaque, unsigned cpu, const struct vm_exit_info *x)
{
	struct tracer *t = opaque;
	struct ring_event ev = { .cpu = (uint16_t)cpu, .ring = cpu };
	unsigned kind = tracer_vmev_fill(x, &ev), detail;
	uint32_t want = atomic_load(&t->vmev_want);
	int stamped = 0, held;

	if (cpu >= HOST_MAX_CPUS)
		return;
	held = t->vmev_stamp[cpu].valid;
	t->vmev_stamp[cpu].valid = 0;
	if (x->kind == VM_EXIT_ANY && held) {
		/* The last exit's detail never came (a port access of count 0). */
		atomic_fetch_sub(&t->vmev_inflight, 1);
		held = 0;
	}
	if (!kind || !(want & VMEV_MASK(kind))) {
		if (held)
			atomic_fetch_sub(&t->vmev_inflight, 1);
		return;
	}
	if (held) {
		ev.tsc = t->vmev_stamp[cpu].tsc;
		ev.func = t->vmev_stamp[cpu].rip;
		stamped = 1;
	} else {
		atomic_fetch_add(&t->vmev_inflight, 1);
		stamped = !t->host->exits->stamp(t->host, cpu, &ev.tsc, &ev.func);
	}
	if (!stamped) {
		/* Without the guest's clock the event cannot be placed: say so, never guess. */
		log_warn("vCPU %u: cannot read its TSC or RIP: a %s event is not recorded",
			 cpu, vmev_name(kind));
		atomic_fetch_sub(&t->vmev_inflight, 1);
		return;
	}
	if (kind == VMEV_MSR)
		tracer_vmev_caller(t, cpu, &ev);
	ev.seq = t->vmev_seq[cpu]++;
	tracer_vmev_route(t, &ev, VMEV_MASK(kind));
	detail = x->kind == VM_EXIT_ANY ? tracer_vmev_detail(x->detail) : 0;
	if (detail && (want & VMEV_MASK(detail))) {
		/* Held for the detail event: it reuses the stamp and ends the flight. */
		t->vmev_stamp[cpu].tsc = ev.tsc;
		t->vmev_stamp[cpu].rip = ev.func;
		t->vmev_stamp[cpu].valid = 1;
		return;
	}
	atomic_fetch_sub(&t->vmev_inflight, 1);
}

/*
 * kvm:cpuid: the table each vCPU was offered, read back from KVM, as
 * records at time zero (CPUID itself never exits to user space: KVM
 * answers it from this table). Only clients there at the start get them.
 */
void tracer_vmev_boot_records(struct tracer *t)
{
	struct host_cpuid_leaf leaf[256];
	unsigned n;

	if (!(t->cfg.events & t->vmev_offered & VMEV_MASK(VMEV_CPUID)))
		return;
	for (unsigned c = 0; c < t->host->ncpus && c < HOST_MAX_CPUS; c++) {
		if (!t->host->exits->cpuid || t->host->exits->cpuid(t->host, c, leaf, 256, &n)) {
			log_warn("kvm:cpuid: cannot read vCPU %u's CPUID table: not recorded", c);
			continue;
		}
		for (unsigned i = 0; i < n; i++) {
			struct ring_event ev = {
				.tsc = t->tsc_base, .cpu = (uint16_t)c, .ring = c, .seq = t->vmev_seq[c]++,
				.func = leaf[i].function | (uint64_t)leaf[i].index << 32,
				.parent = leaf[i].eax | (uint64_t)leaf[i].ebx << 32,
				.arg = leaf[i].ecx | (uint64_t)leaf[i].edx << 32,
				.flags = vmev_flags(VMEV_CPUID, 0),
			};

			tracer_vmev_route(t, &ev, VMEV_MASK(VMEV_CPUID));
		}
	}
}

void tracer_vmev_summary(struct tracer *t, FILE *out)
{
	if (!t->cfg.events)
		return;
	fprintf(out, "vmmtrace: trace: %lu VM events\n", atomic_load(&t->vm_events));
}

/* Why kind k is not recorded, for a boot that asked for it. */
static const char *tracer_vmev_why(const struct tracer *t, unsigned k)
{
	if (k == VMEV_HYPERCALL)
		return !(t->cfg.events & VMEV_MASK(VMEV_HYPERCALL)) ? "the boot did not ask for --event kvm:hypercall" :
		       t->vmev_why_no_hypercall ? t->vmev_why_no_hypercall : "this host's KVM hands none over";
	if (k != VMEV_MSR)
		return "not offered";
	return (t->cfg.events & VMEV_MASK(VMEV_MSR)) ? "this host's KVM cannot bring MSR accesses to user space" :
	       "the boot did not ask for --event kvm:msr";
}

const char *tracer_vmev_missing(const struct tracer *t, unsigned kind)
{
	return kind < VMEV_NKINDS && (t->vmev_offered & VMEV_MASK(kind)) ? NULL : tracer_vmev_why(t, kind);
}

void tracer_vmev_describe(struct tracer *t, uint32_t events, char *msg, size_t len)
{
	size_t off = 0;

	msg[0] = 0;
	for (unsigned k = 1; k < VMEV_NKINDS && off < len; k++) {
		const char *why = tracer_vmev_why(t, k);

		if (!(events & VMEV_MASK(k)))
			continue;
		if (k == VMEV_CPUID)	/* attach comes after the start */
			off += (size_t)snprintf(msg + off, len - off, "; kvm:cpuid not recorded: a record of "
						"the guest's start, in the boot's own trace only");
		else if (t->vmev_offered & VMEV_MASK(k))
			off += (size_t)snprintf(msg + off, len - off, "; %s recorded", vmev_name(k));
		else	/* said here, once, instead of a window that silently lacks them */
			off += (size_t)snprintf(msg + off, len - off, "; %s not recorded: %s", vmev_name(k), why);
	}
}
