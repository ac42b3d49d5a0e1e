// SPDX-License-Identifier: GPL-2.0
/*
 * Clients of a trace (the boot command's own output, each `vmmtrace attach`):
 * which events reach which client (the routes), and the change sets
 * (tracer-change.c) that give clients slots and take them back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-memb.h>

#include "vmm/trace/tracer-int.h"
#include "vmm/output/vmevent.h"
#include "vmm/util/log.h"

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

/*
 * The clients an event goes to; the event is named from here on by its
 * function's address, which differs from its slot's where a landing pad
 * (x86_64 ENDBR64, arm64 BTI) or call-ops NOPs come first.
 */
static uint64_t route_clients(const struct route_table *rt, struct ring_event *ev)
{
	const struct route *r = route_find(rt, ev->func);

	if (!r)
		return 0;
	ev->func = r->func;
	return r->clients;
}

/* Hands ev[0..n) to every client in mask, each as one batch. */
static int route_deliver(struct tracer *t, uint64_t mask, const struct ring_event *ev, size_t n)
{
	size_t taken;
	int rc = 0;

	if (!mask)
		atomic_fetch_add(&t->unrouted, n);
	for (; mask && !rc; mask &= mask - 1) {
		struct trace_client *c = rcu_dereference(t->clients[__builtin_ctzll(mask)]);

		if (c)
			rc = trace_buf_add_batch(&c->buf, ev, n, &taken);
	}
	return rc;
}

/*
 * ring_batch_fn: hands each event to every client holding its slot. The
 * batch goes out in runs of events bound for the same clients, so a
 * client's buffer is locked once per run (with one client holding every
 * slot, once per batch), and the shared counters move once per batch.
 * On an error the run that failed and the rest stay in the ring; clients
 * of that run that did take it get it again (as one event did before).
 */
int tracer_route(void *opaque, struct ring_event *ev, size_t n, size_t *taken)
{
	struct tracer *t = opaque;
	const struct route_table *rt;
	uint64_t max = atomic_load(&t->max_tsc), newest = 0, mask = 0;
	size_t start = 0;
	int rc = 0;

	*taken = 0;
	if (!n)
		return 0;
	urcu_memb_read_lock();
	rt = rcu_dereference(t->routes);
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t m = route_clients(rt, &ev[i]);

		if (i && m != mask) {
			rc = route_deliver(t, mask, ev + start, i - start);
			start = rc ? start : i;
		}
		mask = m;
	}
	if (!rc) {
		rc = route_deliver(t, mask, ev + start, n - start);
		start = rc ? start : n;
	}
	urcu_memb_read_unlock();
	*taken = start;
	for (size_t i = 0; i < start; i++)
		newest = ev[i].tsc > newest ? ev[i].tsc : newest;
	while (newest > max && !atomic_compare_exchange_weak(&t->max_tsc, &max, newest))
		;
	atomic_fetch_add(&t->events, start);
	return rc;
}

int tracer_client_new(struct tracer *t, FILE *out, int own_out, const struct trace_writer_ops *wops,
		      const struct trace_client_opts *opts, struct trace_client **out_client, struct errbuf *err)
{
	struct trace_client *c = calloc(1, sizeof(*c));
	int rc;

	if (!c) {
		if (own_out && out)	/* it was handed over: closed on every failure */
			fclose(out);
		return err_set(err, ENOMEM, "out of memory for a trace client");
	}
	trace_buf_init(&c->buf);
	c->out = out;
	c->own_out = own_out;
	c->wops = wops ? wops : &trace_writer_text;
	if (opts) {
		c->args = opts->args;
		c->graph = opts->graph;
		c->retval = opts->retval;
		c->graph_depth = opts->graph_depth;
	}
	if (c->graph && !t->shadow_tables) {
		tracer_client_free(c);
		return err_set(err, ENOSPC, "--graph: this boot keeps no shadow stacks yet (the stub's place is small "
			       "until the ftrace_init hand-over, and the boot did not ask for --graph)");
	}
	if (c->graph) {
		struct vt_stub_config *cfg = (struct vt_stub_config *)t->stub.code;

		/* The call graph is a text layout of its own (function_graph's); other formats carry returns as theirs. */
		if (c->wops == &trace_writer_text)
			c->wops = &trace_writer_graph;
		/*
		 * The stub reads the switch at each entry. It stays on: a call
		 * hooked now returns through the stub whenever it returns, and
		 * the calls of clients without --graph cost a little more.
		 */
		t->graph = 1;
		__atomic_store_n(&cfg->graph, 1, __ATOMIC_RELEASE);
	}
	if (c->args) {
		struct vt_stub_config *cfg = (struct vt_stub_config *)t->stub.code;

		/*
		 * The stubs record the argument registers only when asked
		 * (loongarch64's always does). On from now on, as --graph.
		 */
		__atomic_store_n(&cfg->args, 1, __ATOMIC_RELEASE);
	}
	/* Before the guest runs its clock is not known yet: tracer_start opens it. */
	if (t->consumer_running && (rc = tracer_client_open(t, c, err))) {
		tracer_client_free(c);
		return rc;
	}
	*out_client = c;
	return 0;
}

void tracer_client_set_events(struct trace_client *c, uint32_t events)
{
	c->events = events;
}

/* The run's prototype table, made when a client first asks for arguments; NULL: out of memory. */
struct fnargs *tracer_fnargs(struct tracer *t)
{
	pthread_mutex_lock(&t->fnargs_lock);
	if (!t->fnargs) {
		t->fnargs = fnargs_new(t->kbtf.btf ? &t->kbtf : NULL);
		if (t->fnargs && !t->kbtf.btf)
			log_warn("--args: no BTF for this kernel (%s): arguments are printed as the raw "
				 "registers; --btf FILE names them", t->task.btf);
	}
	pthread_mutex_unlock(&t->fnargs_lock);
	return t->fnargs;
}

void tracer_meta(const struct tracer *t, struct trace_meta *m)
{
	*m = (struct trace_meta){
		.syms = &t->syms, .tsc_khz = t->tsc_khz, .tsc_base = t->tsc_base,
		.ncpus = t->nrings, .kernel = t->host->kernel_path,
		/* The boot's --args (made at start); attach clients ask for theirs. */
		.fnargs = t->cfg.args ? t->fnargs : NULL,
	};
}

int tracer_client_open(struct tracer *t, struct trace_client *c, struct errbuf *err)
{
	struct trace_meta meta;

	if (!c->out)	/* events for the tap only */
		return 0;
	tracer_meta(t, &meta);
	/* Each client's own choice: an attach without --args on a boot with it prints none. */
	meta.fnargs = c->args ? tracer_fnargs(t) : NULL;
	if (c->args && !meta.fnargs)
		return err_set(err, ENOMEM, "out of memory for --args");
	meta.graph = c->graph;	/* the other formats record the returns too (docs/FORMATS.md) */
	meta.graph_retval = c->retval;
	meta.graph_depth = c->graph_depth;
	return c->wops->open(&c->w, c->out, &meta, err);
}

int tracer_client_emit(void *opaque, const struct ring_event *ev)
{
	struct trace_client *c = opaque;
	struct ring_event plain;
	int rc;

	/* Another client's --graph: returns and shadow depths are not this one's. */
	if (!c->graph && !vmev_is(ev) && (ev->flags & (VT_REC_FLAG_EXIT | VT_REC_FLAG_HOOKED))) {
		if (ev->flags & VT_REC_FLAG_EXIT)
			return 0;
		plain = *ev;
		plain.flags &= (uint16_t)~VT_REC_FLAG_HOOKED;
		plain.depth = 0;
		ev = &plain;
	}
	if (c->tap)
		c->tap(c->tap_opaque, ev);
	/*
	 * After a failed write nothing more goes to the file: a raw trace then
	 * ends at its last complete chunk (or inside the one that failed, a
	 * cut the reader recognises) instead of gaining chunks after a gap
	 * should the disk get space again. Draining goes on, so that the
	 * guest's rings never wait for a dead output.
	 */
	if (!c->w || atomic_load(&c->werr))
		return 0;
	rc = c->wops->event(c->w, ev);
	if (rc)
		atomic_store(&c->werr, rc);
	c->written += !rc;
	return 0;
}

void tracer_client_flush(struct trace_client *c)
{
	int rc = c->w && !atomic_load(&c->werr) ? c->wops->flush(c->w) : 0;

	if (rc)
		atomic_store(&c->werr, rc);
}

int tracer_client_error(const struct trace_client *c)
{
	return c ? atomic_load(&c->werr) : 0;
}

void tracer_output_msg(const struct tracer *t, int rc, char *buf, size_t len)
{
	if (t->cfg.output)
		snprintf(buf, len, "cannot write %s: %s", t->cfg.output, strerror(-rc));
	else
		snprintf(buf, len, "cannot write the trace to stdout: %s", strerror(-rc));
}

int tracer_client_close(struct tracer *t, struct trace_client *c, struct errbuf *err)
{
	struct trace_stats st = { .events = c->written };
	uint64_t rejected;
	int rc;

	trace_buf_flush(&c->buf, 1, tracer_client_emit, c);
	if (!c->w)
		return 0;
	tracer_ring_totals(t, &st.lost, &st.dropped_stub, &rejected);
	if (t->ftrace_init) {
		/* Stopped before it: every event was before it. */
		st.have_phase = 1;
		st.ftrace_init_tsc = t->ftrace_init_tsc ? t->ftrace_init_tsc : UINT64_MAX;
		st.early_events = t->ftrace_init_tsc ? t->early_events : atomic_load(&t->events);
	}
	/* After a failed write the writers' sticky errors make close only free. */
	rc = c->wops->close(c->w, &st, err);
	c->w = NULL;
	if (rc && !atomic_load(&c->werr))
		atomic_store(&c->werr, rc);
	rc = atomic_load(&c->werr);
	if (rc)
		return err_set(err, -rc, "writing the %s trace: %s", c->wops->name, strerror(-rc));
	return 0;
}

void tracer_client_free(struct trace_client *c)
{
	struct trace_stats st = { .events = c ? c->written : 0 };

	if (!c)
		return;
	if (c->w)
		c->wops->close(c->w, &st, NULL);
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
	tracer_vmev_recount(t);
	return 0;
}

int tracer_attach(struct tracer *t, const struct filter *f, struct trace_client *c,
		  char *msg, size_t len, struct errbuf *err)
{
	struct attach_arg a = { c, NULL, 0 };
	struct patch_result res;
	size_t n;
	int rc;

	/* No filter: a client of VM events only, holding no slot. */
	a.sel = f ? patch_match(&t->ps, f, &n) : calloc(t->ps.count + 1, 1);
	if (!a.sel)
		return err_set(err, ENOMEM, "out of memory");
	rc = tracer_change(t, HOST_NO_CPU, attach_fn, &a, &res);
	free((void *)a.sel);
	if (rc == -EUSERS)
		return err_set(err, rc, "too many clients (at most %d)", PATCH_MAX_CLIENTS);
	if (rc)
		return err_set(err, rc, "attach failed: %s", strerror(-rc));
	if (!f) {
		snprintf(msg, len, "attached as client %u, for VM events only (no function slots)", c->id);
		return 0;
	}
	snprintf(msg, len, "attached as client %u: %zu slots match, %zu written, %zu already held, "
		 "%zu left alone%s%s%s, %zu deferred until ftrace_init returns%s",
		 c->id, a.matched, res.written, res.already, res.foreign,
		 res.foreign_example ? " (e.g. " : "", res.foreign_example ? res.foreign_example : "",
		 res.foreign_example ? ": not in a state vmmtrace expects, e.g. the guest's own ftrace)" : "",
		 res.deferred, res.failed ? "; the host could not write some (see the warnings)" : "");
	return 0;
}

static int detach_client_fn(struct tracer *t, void *p)
{
	struct trace_client *c = p;

	patch_unwant(&t->ps, NULL, c->id);
	rcu_assign_pointer(t->clients[c->id], NULL);
	tracer_vmev_recount(t);
	return 0;
}

int tracer_detach_client(struct tracer *t, struct trace_client *c)
{
	struct patch_result res;

	/* Its window's events are drained into its buffer before it leaves. */
	tracer_change(t, HOST_NO_CPU, detach_client_fn, c, &res);
	urcu_memb_synchronize_rcu();
	tracer_client_close(t, c, NULL);
	if (c->out && fflush(c->out) && !atomic_load(&c->werr))
		atomic_store(&c->werr, -(errno ? errno : EIO));
	return atomic_load(&c->werr);
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
	rc = tracer_change(t, HOST_NO_CPU, detach_globs_fn, &a, &res);
	free((void *)a.sel);

	snprintf(msg, len, "released %zu slots (%zu written back, %zu left alone); %zu still held",
		 a.n, res.written, res.foreign, t->ps.held);
	return rc;
}
