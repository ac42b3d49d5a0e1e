// SPDX-License-Identifier: GPL-2.0
/*
 * Change sets: how the tracer changes a running guest. A change set pauses
 * every vCPU, drains the rings while no record is in flight and no vCPU is
 * inside the stub (so each event goes to the clients that held its slot
 * when it happened), lets the caller change the claims, writes the slots'
 * bytes and publishes new routes before the guest runs again: an attached
 * window sees exactly the calls made inside it. A clean stop uses the same
 * quiesce, so that no record is left half-written.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <urcu/urcu-memb.h>

#include "vmm/util/log.h"
#include "vmm/trace/tracer-int.h"
#include "vmm/util/util.h"

/*
 * Every slot a client holds routes its events, a forgotten init slot too
 * (patch_drop_init): x86_64's free_initmem still calls an init function
 * (e820__reallocate_tables) before it frees them.
 */
static struct route_table *routes_build(const struct patch_set *ps)
{
	struct route_table *rt;
	size_t n = 0;

	for (size_t i = 0; i < ps->count; i++)
		n += ps->slots[i].clients != 0;
	if (!(rt = malloc(sizeof(*rt) + (n ? n : 1) * sizeof(rt->r[0]))))
		return NULL;
	rt->count = 0;
	for (size_t i = 0; i < ps->count; i++)	/* slots are sorted by address */
		if (ps->slots[i].clients)
			rt->r[rt->count++] = (struct route){ ps->slots[i].va, ps->slots[i].func, ps->slots[i].clients };
	return rt;
}

/*
 * Which paused vCPUs stopped inside the stub (bit i: vCPU i). Such a
 * vCPU's record may not be reserved yet, so the drain cannot see it; routed
 * after the change, it would go to the wrong window (or to no client at all
 * after a detach).
 */
static uint64_t tracer_vcpus_in_stub(struct tracer *t, int self)
{
	uint64_t pc, mask = 0;

	for (unsigned i = 0; i < t->host->ncpus; i++) {
		if ((int)i != self && !t->host->ops->vcpu_pc(t->host, i, &pc) && tracer_pc_in_stub(t, pc))
			mask |= 1ULL << i;
	}
	return mask;
}

/*
 * Lets the vCPUs of `wait` (those caught inside the stub) run a moment,
 * the others staying paused, so that they leave the stub however busy the
 * other vCPUs keep it; WAIT_RUN_NS bounds the wait for a thread the host
 * does not schedule.
 */
#define WAIT_RUN_NS (20 * 1000 * 1000ULL)
static void tracer_let_run(struct tracer *t, int self, uint64_t wait)
{
	t->host->ops->let_run(t->host, self, wait, WAIT_RUN_NS);
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
static unsigned tracer_quiesce(struct tracer *t, int self)
{
	uint64_t start = util_now_ns(), in_stub;
	unsigned retries = 0;

	for (;; retries++) {
		in_stub = tracer_vcpus_in_stub(t, self);
		if (!tracer_drain_all(t, 0) && !in_stub)
			return retries;
		if (util_now_ns() - start > QUIESCE_NS || t->host->ops->stopping(t->host))
			break;
		tracer_let_run(t, self, in_stub ? in_stub : ~0ULL);
	}
	log_warn("a vCPU stayed inside the stub for %llu ms: a record may reach the wrong window",
		 (unsigned long long)((util_now_ns() - start) / 1000000));
	return retries;
}

void tracer_stop_hook(void *opaque, int self, enum vm_stop_reason reason, const char *msg)
{
	struct tracer *t = opaque;
	unsigned retries;

	/*
	 * Paused, a vCPU caught in the stub finishes its record first; the
	 * stop request is made before the resume, so no vCPU enters the guest
	 * again after the quiesce.
	 */
	t->host->ops->pause(t->host, self);
	retries = tracer_quiesce(t, self);
	t->host->ops->request_stop(t->host, reason, msg);
	t->host->ops->resume(t->host);
	if (retries)
		log_info("stop: a vCPU was inside the stub; it finished its record first (%u retries)",
			 retries);
}

/*
 * Held slots whose calls go on to the guest's own tracer, and those given
 * to it (issue 37): the most at once, for the summary.
 */
static void tracer_count_shared(struct tracer *t)
{
	size_t chained = 0;

	for (size_t i = 0; t->ps.chain.n && i < t->ps.count; i++)
		chained += t->ps.slots[i].enabled && t->ps.slots[i].chain;
	if (chained > t->guest_chained_max)
		t->guest_chained_max = chained;
	if (t->ps.given > t->guest_given_max)
		t->guest_given_max = t->ps.given;
}

/*
 * With the vCPUs paused: the slots follow the claims. A change a paused
 * vCPU would run half of (never on x86_64, whose slot is one instruction;
 * multi-instruction slots elsewhere) waits: the guest runs a moment and the
 * change is tried again.
 */
static void tracer_sync_slots(struct tracer *t, int self, struct patch_result *res)
{
	uint64_t pcs[HOST_MAX_CPUS], start = util_now_ns();

	for (;;) {
		size_t n = 0;

		for (unsigned i = 0; i < t->host->ncpus && i < HOST_MAX_CPUS; i++)
			if (!t->host->ops->vcpu_pc(t->host, i, &pcs[n]))
				n++;
		t->ps.pcs = pcs;
		t->ps.npcs = n;
		patch_sync(&t->ps, res);
		t->ps.pcs = NULL;
		t->ps.npcs = 0;
		if (!res->busy || util_now_ns() - start > QUIESCE_NS || t->host->ops->stopping(t->host))
			break;
		/* Lock order is pause, then change_lock: drop it while the guest runs. */
		pthread_mutex_unlock(&t->change_lock);
		tracer_let_run(t, self, ~0ULL);
		pthread_mutex_lock(&t->change_lock);
	}
}

int tracer_change(struct tracer *t, int self, tracer_change_fn *fn, void *arg,
		  struct patch_result *res)
{
	struct route_table *old = NULL, *rt;
	uint64_t start, held, ns;
	int rc;

	start = util_now_ns();
	t->host->ops->pause(t->host, self);
	tracer_quiesce(t, self);
	held = util_now_ns();
	pthread_mutex_lock(&t->change_lock);
	rc = fn ? fn(t, arg) : 0;
	if (!rc) {
		tracer_sync_slots(t, self, res);
		tracer_count_shared(t);
		rt = routes_build(&t->ps);
		if (rt) {
			old = t->routes;
			rcu_assign_pointer(t->routes, rt);
		} else {
			rc = -ENOMEM;
		}
	}
	ns = util_now_ns();
	t->pause_last_ns = ns - start;
	t->held_last_ns = ns - held;
	if (t->pause_last_ns > t->pause_worst_ns)
		t->pause_worst_ns = t->pause_last_ns;
	if (t->held_last_ns > t->held_worst_ns)
		t->held_worst_ns = t->held_last_ns;
	t->changes++;
	pthread_mutex_unlock(&t->change_lock);
	t->host->ops->resume(t->host);
	if (old) {
		urcu_memb_synchronize_rcu();
		free(old);
	}
	return rc;
}
