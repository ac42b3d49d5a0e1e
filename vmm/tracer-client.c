// SPDX-License-Identifier: GPL-2.0
/*
 * Clients of a trace (the boot command's own output, each `vmmtrace attach`)
 * and the change sets that give them slots. A change set pauses every vCPU,
 * drains the rings while no record is in flight (so each event goes to the
 * clients that held its slot when it happened), changes the claims, writes
 * the slots and publishes new routes before the guest runs again: an
 * attached window sees exactly the calls made inside it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu/urcu-memb.h>

#include "arch/arch.h"
#include "vmm/log.h"
#include "vmm/tracer-int.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

void tracer_rcu_register(void)
{
	urcu_memb_register_thread();
}

void tracer_rcu_unregister(void)
{
	urcu_memb_unregister_thread();
}

static uint64_t tracer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static const struct route *route_find(const struct route_table *rt, uint64_t va)
{
	size_t lo = 0, hi = rt ? rt->count : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rt->r[mid].va == va)
			return &rt->r[mid];
		if (rt->r[mid].va < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ring_sink_fn: hands an event to every client holding its slot. */
int tracer_route(void *opaque, const struct ring_event *ev)
{
	struct tracer *t = opaque;
	const struct route *r;
	uint64_t max = atomic_load(&t->max_tsc);
	int rc = 0;

	while (ev->tsc > max && !atomic_compare_exchange_weak(&t->max_tsc, &max, ev->tsc))
		;
	atomic_fetch_add(&t->events, 1);
	urcu_memb_read_lock();
	r = route_find(rcu_dereference(t->routes), ev->func);
	if (!r || !r->clients)
		atomic_fetch_add(&t->unrouted, 1);
	for (uint64_t m = r ? r->clients : 0; m && !rc; m &= m - 1) {
		struct trace_client *c = rcu_dereference(t->clients[__builtin_ctzll(m)]);

		if (c)
			rc = trace_buf_add(&c->buf, ev);
	}
	urcu_memb_read_unlock();
	return rc;
}

static struct route_table *routes_build(const struct patch_set *ps)
{
	struct route_table *rt = malloc(sizeof(*rt) + (ps->held ? ps->held : 1) * sizeof(rt->r[0]));

	if (!rt)
		return NULL;
	rt->count = 0;
	for (size_t i = 0; i < ps->count; i++)	/* slots are sorted by address */
		if (ps->slots[i].clients && rt->count < ps->held)
			rt->r[rt->count++] = (struct route){ ps->slots[i].va, ps->slots[i].clients };
	return rt;
}

/*
 * Which paused vCPUs stopped inside the stub (bit i: vCPU i). Such a
 * vCPU's record may not be reserved yet, so the drain cannot see it; routed
 * after the change, it would go to the wrong window (or to no client at all
 * after a detach).
 */
static uint64_t tracer_vcpus_in_stub(struct tracer *t, struct vcpu *self)
{
	uint64_t pc, mask = 0;

	for (unsigned i = 0; i < t->vm->ncpus; i++) {
		struct vcpu *v = &t->vm->vcpus[i];

		if (v != self && !arch_vcpu_pc(v, &pc) && tracer_pc_in_stub(t, pc))
			mask |= 1ULL << i;
	}
	return mask;
}

/*
 * Resumes the guest until every vCPU of `wait` has begun a KVM_RUN (or
 * WAIT_RUN_NS passed: a thread the host does not schedule), then pauses it
 * again: a vCPU that stopped inside the stub gets to run, however loaded the
 * host is, where a fixed nap could re-pause it before its thread woke.
 */
#define WAIT_RUN_NS (20 * 1000 * 1000ULL)
static void tracer_let_run(struct tracer *t, struct vcpu *self, uint64_t wait)
{
	unsigned long runs[VM_MAX_CPUS];
	struct timespec nap = { 0, 20 * 1000 };
	uint64_t start;
	unsigned i, n = t->vm->ncpus;

	for (i = 0; i < n; i++)
		runs[i] = atomic_load(&t->vm->vcpus[i].runs);
	vm_resume(t->vm);
	start = tracer_now_ns();
	for (i = 0; i < n && tracer_now_ns() - start < WAIT_RUN_NS && !atomic_load(&t->vm->stopping);) {
		struct vcpu *v = &t->vm->vcpus[i];

		if (v == self || !(wait & (1ULL << i)) || atomic_load(&v->runs) != runs[i] ||
		    atomic_load(&v->state) == VCPU_STOPPED)
			i++;
		else
			nanosleep(&nap, NULL);
	}
	nanosleep(&nap, NULL);	/* a few stub instructions, then pause again */
	vm_pause(t->vm, self);
}

/*
 * With the vCPUs paused: drain until no record is half-written and no vCPU
 * is inside the stub, so that every call made before the change is routed
 * by the routes from before it. Each retry lets the vCPUs caught in the stub
 * run a moment (all of them when none is, but a record is half-written);
 * the wait gives up after QUIESCE_NS (a guest spending all its time in the
 * stub for a second is broken, or the host is starving it).
 */
#define QUIESCE_NS (1000 * 1000 * 1000ULL)
static unsigned tracer_quiesce(struct tracer *t, struct vcpu *self)
{
	uint64_t start = tracer_now_ns(), in_stub;
	unsigned retries = 0;

	for (;; retries++) {
		in_stub = tracer_vcpus_in_stub(t, self);
		if (!tracer_drain_all(t, 0) && !in_stub)
			return retries;
		if (tracer_now_ns() - start > QUIESCE_NS || atomic_load(&t->vm->stopping))
			break;
		tracer_let_run(t, self, in_stub ? in_stub : ~0ULL);
	}
	log_warn("a vCPU stayed inside the stub for %llu ms: a record may reach the wrong window",
		 (unsigned long long)((tracer_now_ns() - start) / 1000000));
	return retries;
}

void tracer_stop(struct vm *vm, struct vcpu *self, int status, const char *fmt, ...)
{
	char msg[sizeof(vm->exit_msg)];
	unsigned retries;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!vm->tracer || atomic_load(&vm->stopping)) {
		vm_request_stop(vm, status, "%s", msg);
		return;
	}
	/*
	 * Paused, a vCPU caught in the stub finishes its record first; the
	 * stop request is made before the resume, so no vCPU enters the guest
	 * again after the quiesce.
	 */
	vm_pause(vm, self);
	retries = tracer_quiesce(vm->tracer, self);
	vm_request_stop(vm, status, "%s", msg);
	vm_resume(vm);
	if (retries)
		log_info("stop: a vCPU was inside the stub; it finished its record first (%u retries)",
			 retries);
}

/*
 * With the vCPUs paused: the slots follow the claims. A change a paused
 * vCPU would run half of (never on x86_64, whose slot is one instruction;
 * multi-instruction slots elsewhere) waits: the guest runs a moment and the
 * change is tried again.
 */
static void tracer_sync_slots(struct tracer *t, struct vcpu *self, struct patch_result *res)
{
	uint64_t pcs[VM_MAX_CPUS], start = tracer_now_ns();

	for (;;) {
		size_t n = 0;

		for (unsigned i = 0; i < t->vm->ncpus; i++)
			if (!arch_vcpu_pc(&t->vm->vcpus[i], &pcs[n]))
				n++;
		t->ps.pcs = pcs;
		t->ps.npcs = n;
		patch_sync(&t->ps, res);
		t->ps.pcs = NULL;
		t->ps.npcs = 0;
		if (!res->busy || tracer_now_ns() - start > QUIESCE_NS || atomic_load(&t->vm->stopping))
			break;
		/* Lock order is pause, then change_lock: drop it while the guest runs. */
		pthread_mutex_unlock(&t->change_lock);
		tracer_let_run(t, self, ~0ULL);
		pthread_mutex_lock(&t->change_lock);
	}
}

int tracer_change(struct tracer *t, struct vcpu *self, tracer_change_fn *fn, void *arg,
		  struct patch_result *res)
{
	struct route_table *old = NULL, *rt;
	uint64_t start, held, ns;
	int rc;

	start = tracer_now_ns();
	vm_pause(t->vm, self);
	tracer_quiesce(t, self);
	held = tracer_now_ns();
	pthread_mutex_lock(&t->change_lock);
	rc = fn ? fn(t, arg) : 0;
	if (!rc) {
		tracer_sync_slots(t, self, res);
		rt = routes_build(&t->ps);
		if (rt) {
			old = t->routes;
			rcu_assign_pointer(t->routes, rt);
		} else {
			rc = -ENOMEM;
		}
	}
	ns = tracer_now_ns();
	t->pause_last_ns = ns - start;
	t->held_last_ns = ns - held;
	if (t->pause_last_ns > t->pause_worst_ns)
		t->pause_worst_ns = t->pause_last_ns;
	if (t->held_last_ns > t->held_worst_ns)
		t->held_worst_ns = t->held_last_ns;
	t->changes++;
	pthread_mutex_unlock(&t->change_lock);
	vm_resume(t->vm);
	if (old) {
		urcu_memb_synchronize_rcu();
		free(old);
	}
	return rc;
}

int tracer_client_new(struct tracer *t, FILE *out, int own_out, struct trace_client **out_client,
		      struct errbuf *err)
{
	struct trace_client *c = calloc(1, sizeof(*c));

	if (!c)
		return err_set(err, ENOMEM, "out of memory for a trace client");
	trace_buf_init(&c->buf);
	c->out = out;
	c->own_out = own_out;
	trace_text_init(&c->text, out, &t->syms, t->tsc_khz);
	c->text.tsc_base = t->tsc_base;
	if (t->consumer_running)	/* else tracer_start writes it, with the TSC known */
		trace_text_header(&c->text, t->nrings);
	*out_client = c;
	return 0;
}

void tracer_client_free(struct trace_client *c)
{
	if (!c)
		return;
	if (c->own_out && c->out)
		fclose(c->out);
	trace_buf_destroy(&c->buf);
	free(c);
}

struct attach_arg {
	struct trace_client *c;
	const uint8_t *sel;
	size_t matched;
};

static int attach_fn(struct tracer *t, void *p)
{
	struct attach_arg *a = p;
	unsigned id;

	for (id = 0; id < PATCH_MAX_CLIENTS && t->clients[id]; id++)
		;
	if (id == PATCH_MAX_CLIENTS)
		return -EUSERS;
	a->c->id = id;
	rcu_assign_pointer(t->clients[id], a->c);
	a->matched = patch_want(&t->ps, a->sel, id);
	return 0;
}

int tracer_attach(struct tracer *t, const struct filter *f, struct trace_client *c,
		  char *msg, size_t len, struct errbuf *err)
{
	struct attach_arg a = { c, NULL, 0 };
	struct patch_result res;
	size_t n;
	int rc;

	a.sel = patch_match(&t->ps, f, &n);
	if (!a.sel)
		return err_set(err, ENOMEM, "out of memory");
	rc = tracer_change(t, NULL, attach_fn, &a, &res);
	free((void *)a.sel);
	if (rc)
		return err_set(err, rc, rc == -EUSERS ? "too many clients (at most %d)" : "attach failed (%d)",
			       rc == -EUSERS ? PATCH_MAX_CLIENTS : rc);
	snprintf(msg, len, "attached as client %u: %zu slots match, %zu written, %zu already held, "
		 "%zu left alone%s%s%s, %zu deferred until ftrace_init returns",
		 c->id, a.matched, res.written, res.already, res.foreign,
		 res.foreign_example ? " (e.g. " : "", res.foreign_example ? res.foreign_example : "",
		 res.foreign_example ? ": not in a state vmmtrace expects, e.g. the guest's own ftrace)" : "",
		 res.deferred);
	return 0;
}

static int detach_client_fn(struct tracer *t, void *p)
{
	struct trace_client *c = p;

	patch_unwant(&t->ps, NULL, c->id);
	rcu_assign_pointer(t->clients[c->id], NULL);
	return 0;
}

void tracer_detach_client(struct tracer *t, struct trace_client *c)
{
	struct patch_result res;

	/* Its window's events are drained into its buffer before it leaves. */
	tracer_change(t, NULL, detach_client_fn, c, &res);
	urcu_memb_synchronize_rcu();
	trace_buf_flush(&c->buf, 1, trace_text_event, &c->text);
	fflush(c->out);
}

struct detach_arg {
	const uint8_t *sel;
	size_t n;
};

static int detach_globs_fn(struct tracer *t, void *p)
{
	struct detach_arg *a = p;

	a->n = patch_unwant_all(&t->ps, a->sel);
	return 0;
}

int tracer_detach_globs(struct tracer *t, const struct filter *f, char *msg, size_t len)
{
	struct detach_arg a = { NULL, 0 };
	struct patch_result res;
	size_t n;
	int rc;

	if (f && !(a.sel = patch_match(&t->ps, f, &n)))
		return -ENOMEM;
	rc = tracer_change(t, NULL, detach_globs_fn, &a, &res);
	free((void *)a.sel);

	snprintf(msg, len, "released %zu slots (%zu written back, %zu left alone); %zu still held",
		 a.n, res.written, res.foreign, t->ps.held);
	return rc;
}
