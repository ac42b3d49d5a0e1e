// SPDX-License-Identifier: GPL-2.0
/* Setting up and closing a trace session (tracer-run.c: while the guest runs). */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-memb.h>

#include "vmm/image/image.h"
#include "vmm/image/kallsyms.h"
#include "vmm/util/log.h"
#include "vmm/image/sysmap.h"
#include "vmm/trace/tracer-int.h"

static atomic_ulong rcu_registrations;

void tracer_rcu_register(void)
{
	urcu_memb_register_thread();
	atomic_fetch_add(&rcu_registrations, 1);
}

void tracer_rcu_unregister(void)
{
	urcu_memb_unregister_thread();
}

unsigned long tracer_rcu_registrations(void)
{
	return atomic_load(&rcu_registrations);
}

static void tracer_hook_thread_enter(void *opaque)
{
	(void)opaque;
	tracer_rcu_register();	/* doorbells read the tracer's shared tables */
}

static void tracer_hook_thread_exit(void *opaque)
{
	(void)opaque;
	tracer_rcu_unregister();
}

static bool tracer_hook_pc_in_stub(void *opaque, uint64_t pc)
{
	return tracer_pc_in_stub(opaque, pc);
}

static void tracer_set_hooks(struct tracer *t)
{
	const struct host_hooks hooks = {
		.opaque = t,
		.thread_enter = tracer_hook_thread_enter,
		.thread_exit = tracer_hook_thread_exit,
		.pc_in_stub = tracer_hook_pc_in_stub,
		.stop = tracer_stop_hook,
		.debug_exit = tracer_breakpoint,
		.doorbell = tracer_doorbell,
		.exit = t->host->exits ? tracer_vm_exit : NULL,
	};

	t->host->ops->set_hooks(t->host, &hooks);
	t->hooked = 1;
}

static int tracer_load_symbols(struct tracer *t, const struct kernel_image *img, struct errbuf *err)
{
	struct kallsyms_layout layout;
	int rc;

	symtab_init(&t->syms);
	/* A raw Image without kallsyms (image.h): no symbol, no slot; VM events only. */
	if (img->unplaced)
		return symtab_finish(&t->syms) ? err_set(err, ENOMEM, "out of memory for the kernel's symbols") : 0;
	if (t->cfg.system_map) {
		rc = sysmap_read_file(t->cfg.system_map, &t->syms, err);
	} else if ((rc = kallsyms_recover(&img->elf, &t->syms, &layout, err)) &&
		   elf_section(&img->elf, ".symtab")) {
		symtab_destroy(&t->syms);
		symtab_init(&t->syms);
		rc = sysmap_read_elf(&img->elf, &t->syms, err);
	}
	if (rc)
		return rc;
	/* A relocatable arm64 Image's data symbols that its kallsyms lacks (image.h). */
	if ((rc = image_add_recovered(img, &t->syms)) < 0)
		return err_set(err, ENOMEM, "out of memory for the kernel's symbols");
	if (rc)
		log_info("recovered from the Image's relocations and header: %d data symbols kallsyms lacks "
			 "(__mcount_loc: %llu entries)", rc,
			 (unsigned long long)(img->recovered.stop_mcount_loc - img->recovered.start_mcount_loc) / 8);
	if ((rc = symtab_finish(&t->syms)))
		return err_set(err, rc, "cannot index the kernel's symbols");
	rc = mcount_read(&img->elf, &t->syms, guest_slot_ops(t->guest), &t->mt, err);
	if (rc && t->cfg.system_map) {
		/* The usual cause: a map of another build. */
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg);
		return err_set(err, rc, "%.300s: is '%.150s' this kernel's System.map?", why, t->cfg.system_map);
	}
	return rc;
}

static int tracer_build_filter(const struct tracer_config *cfg, struct filter *f, struct errbuf *err)
{
	char pat[512];
	int rc;

	filter_init(f);
	for (unsigned i = 0; i < cfg->n_include; i++)
		if ((rc = filter_add(f, cfg->include[i], err)))
			return rc;
	for (unsigned i = 0; i < cfg->n_exclude; i++) {
		if (snprintf(pat, sizeof(pat), "!%s", cfg->exclude[i]) >= (int)sizeof(pat))
			return err_set(err, EINVAL, "--notrace pattern is too long");
		if ((rc = filter_add(f, pat, err)))
			return rc;
	}
	return 0;
}

static uint64_t tracer_text_symbol(struct tracer *t, const char *name)
{
	const struct symbol *s = symtab_find_name(&t->syms, name);

	for (; s; s = symtab_next_same_name(&t->syms, s))
		if (symtab_is_text(s->type))
			return s->addr;
	return 0;
}

/*
 * How many records each CPU's ring gets and where the shadow stacks go
 * (vmm/guest/stub-geom.h): as asked where the host has room, as many as
 * fit where it has little (QEMU: padding of the image).
 */
static int tracer_layout(struct tracer *t, const struct kernel_image *img, struct errbuf *err)
{
	uint64_t nrecords = stub_geom_records(t->cfg.buffer_size), room = 0;
	struct errbuf why = { "" };
	int rc;

	if (!t->host->ops->stub_room) {
		stub_geom_roomy(&t->geom, t->host->ncpus, nrecords, STUB_SHADOW_TABLES);
		return 0;
	}
	if ((rc = t->host->ops->stub_room(t->host, &img->elf, &t->syms, &room, err)))
		return rc;
	/* Not all the shadow stacks beside the smallest rings: a few for a boot that asks for --graph. */
	if ((rc = stub_geom_fit(&t->geom, t->host->ncpus, nrecords, room, 1, t->cfg.graph, &why)))
		return err_set(err, -rc, "the %s host: %s", t->host->name, why.msg);
	if (t->geom.nrecords < nrecords)
		log_info("rings of %llu records (%llu bytes) per CPU: all the %s host has room for",
			 (unsigned long long)t->geom.nrecords, (unsigned long long)t->geom.ring_bytes, t->host->name);
	return 0;
}

/* Ring geometry, the stub's configuration block, the host's ring views. */
static int tracer_setup_rings(struct tracer *t, const struct kernel_image *img, struct errbuf *err)
{
	struct vt_stub_config *c;
	int rc;

	if ((rc = tracer_layout(t, img, err)))
		return rc;
	t->nrings = t->geom.nrings;
	t->nrecords = t->geom.nrecords;
	if ((rc = task_layout_find(img, &t->syms, t->cfg.btf, &t->task, &t->kbtf, err)))
		return rc;
	/* Said where it matters: a Linux kernel (tiny test payloads have no tasks). */
	if (*t->task.missing && symtab_find_name(&t->syms, "init_task"))
		log_warn("tasks and context in part unknown (%s): %s%s", t->task.btf, t->task.missing,
			 t->cfg.btf ? "" : "; --btf FILE gives the kernel's types");
	else
		log_info("tasks and context from %s", t->task.btf);
	rc = t->host->ops->stub_install(t->host, &img->elf, &t->syms, t->geom.size, &t->stub, err);
	if (rc)
		return rc;
	c = (struct vt_stub_config *)t->stub.code;
	c->magic = VT_STUB_MAGIC;
	c->cpu_off = t->task.cpu_off;
	if (t->task.cpu_in_task && t->task.cpu_off != TASK_UNKNOWN &&
	    (rc = guest_stub_cpu_in_task(t->guest, t->stub.code, t->stub.code_size, err)))
		return rc;
	/* exit mode: a limit of one record rings the doorbell for every event after the first. */
	stub_geom_config(&t->geom, t->stub.data_va,
			 t->cfg.mode == TRACE_LOSSLESS ? t->nrecords : t->cfg.mode == TRACE_EXIT ? 1 : UINT64_MAX, c);
	c->cur_off = t->task.cur_off;
	c->pc_off = t->task.pc_off;
	c->pid_off = t->task.pid_off;
	c->comm_off = t->task.comm_off;
	c->tif_off = t->task.tif_off;
	c->tif_mask = t->task.tif_mask;
	c->migr_off = t->task.migr_off;
	c->graph = 0;	/* until a client asks for returns */
	t->shadow_tables = t->geom.shadow_tables;
	t->shadow_host = t->stub.data + t->geom.rings_end;
	if (t->cfg.graph && t->shadow_tables < STUB_SHADOW_TABLES)
		log_info("--graph: %llu shadow stacks in the stub's first place%s", (unsigned long long)t->shadow_tables,
			 t->host->ops->rings_area ? ", all of them if the rings move" : "");
	c->stack_off = t->task.stack_off;
	c->stack_size = t->guest->thread_size;
	if (c->cpu_off == UINT64_MAX)
		log_warn("the CPU number is unknown (%s): all CPUs share one ring",
			 t->task.cpu_in_task ? "no thread_info.cpu in the BTF" : "no per-CPU cpu_number symbol");
	t->rings = calloc(t->nrings, sizeof(*t->rings));
	if (!t->rings)
		return err_set(err, ENOMEM, "out of memory for ring views");
	for (unsigned i = 0; i < t->nrings; i++)
		ring_view_init(&t->rings[i], i, (struct vt_ring_hdr *)(t->stub.data + i * VT_HDR_SIZE),
			       (struct vt_record *)(t->stub.data + t->geom.hdr_bytes + i * t->geom.ring_bytes),
			       t->nrecords, t->cfg.mode != TRACE_OVERWRITE);
	t->stub_entry = t->stub.code_va + VT_CFG_SIZE;
	t->doorbell_pc = c->doorbell_pc;	/* the host's answer, read before the guest runs */
	return 0;
}

/*
 * The rings' place is freed by the guest after the hand-over and they could
 * not move: the trace ends here, before the guest reuses that memory.
 */
static void tracer_rings_stranded(struct tracer *t, const char *why)
{
	char msg[384];

	snprintf(msg, sizeof(msg), "the rings could not leave the init data the guest frees: %s", why);
	t->host->ops->request_stop(t->host, VM_STOP_HOST_FAILURE, msg);
}

/*
 * At the hand-over, with every vCPU paused, out of the stub and the rings
 * drained: rings of the size asked for in a bigger area the host offers now
 * (QEMU: a reserved region in the arm64 guest's linear map), when the
 * stub's own place held smaller ones, and all the shadow stacks where the
 * stub's place held a few (tracer_setup_rings). The stub reads its
 * configuration at every call, so the next call uses the new places.
 */
void tracer_rings_move(struct tracer *t)
{
	struct vt_stub_config *c = (struct vt_stub_config *)t->stub.code;
	int shadow = t->shadow_tables < STUB_SHADOW_TABLES;
	struct errbuf err = { "" };
	struct stub_geom g;
	uint64_t va, size;
	uint8_t *area;
	int rc;

	rc = t->host->ops->rings_area ? t->host->ops->rings_area(t->host, &area, &va, &size, &err) : -ENOENT;
	if (rc) {
		if (t->stub.data_must_move)
			tracer_rings_stranded(t, rc == -ENOENT ? "the host offers no other place" : err.msg);
		else if (rc != -ENOENT)
			log_warn("the rings stay where they are: %s", err.msg);
		return;
	}
	if (stub_geom_move(&g, t->nrings, t->cfg.buffer_size / VT_REC_SIZE, size, shadow)) {
		if (t->stub.data_must_move)
			tracer_rings_stranded(t, "the region offered is too small");
		return;
	}
	/* The few stacks (if any) stay only where the guest does not free their place. */
	if (shadow && !g.shadow_tables && t->stub.data_must_move && t->shadow_tables) {
		tracer_rings_stranded(t, "the region offered has no room for the shadow stacks");
		return;
	}
	if (g.nrecords <= t->nrecords && !t->stub.data_must_move && !g.shadow_tables)
		return;	/* nothing gained */
	if (g.shadow_tables)
		tracer_shadow_move(t, area + g.rings_end, va + g.rings_end);
	memset(area, 0, g.hdr_bytes + t->nrings * g.ring_bytes);
	for (unsigned i = 0; i < t->nrings; i++) {
		pthread_mutex_lock(&t->rings[i].lock);
		ring_view_move(&t->rings[i], (struct vt_ring_hdr *)(area + i * VT_HDR_SIZE),
			       (struct vt_record *)(area + g.hdr_bytes + i * g.ring_bytes), g.nrecords);
		pthread_mutex_unlock(&t->rings[i].lock);
	}
	t->nrecords = g.nrecords;
	stub_geom_config_rings(&g, va, t->cfg.mode == TRACE_LOSSLESS ? g.nrecords : c->limit, c);
	log_info("rings moved to %#llx: %llu records per CPU", (unsigned long long)va, (unsigned long long)g.nrecords);
}

/* The boot command's own client: --trace globs, output to -o or stdout. */
static int tracer_boot_client(struct tracer *t, struct errbuf *err)
{
	struct filter f;
	struct trace_client_opts opts = { .args = t->cfg.args, .graph = t->cfg.graph, .retval = t->cfg.retval,
					  .graph_depth = t->cfg.graph_depth };
	FILE *out;
	char msg[512];
	int rc;

	if (!t->cfg.n_include && !t->cfg.events)
		return 0;
	out = t->cfg.no_output ? NULL : t->cfg.output ? fopen(t->cfg.output, "w") : stdout;
	if (!out && !t->cfg.no_output)
		return err_set(err, errno, "cannot open output '%s': %s", t->cfg.output, strerror(errno));
	if ((rc = tracer_client_new(t, out, out && out != stdout, t->cfg.format, &opts, &t->boot_client, err)))
		return rc;
	tracer_client_set_events(t->boot_client, t->cfg.events);
	t->boot_client->tap = t->cfg.tap;
	t->boot_client->tap_opaque = t->cfg.tap_opaque;
	if ((rc = tracer_build_filter(&t->cfg, &f, err)))
		goto out;
	/* Before the guest's first instruction: call __fentry__ -> call stub. */
	rc = tracer_attach(t, t->cfg.n_include ? &f : NULL, t->boot_client, msg, sizeof(msg), err);
	if (!rc && !t->ps.held && t->cfg.n_include)
		rc = err_set(err, ENOENT, "no traceable function matches --trace %s%s",
			     t->cfg.include[0], t->cfg.n_include > 1 ? " ..." : "");
	log_info("%s", msg);
out:
	filter_destroy(&f);
	return rc;
}

/*
 * The stub's chained entries, which let a slot the guest's ftrace
 * enabled be held too: their table is in the stub's code, as its
 * configuration says.
 */
static void tracer_chain_setup(struct tracer *t)
{
	const struct vt_stub_config *c = (const struct vt_stub_config *)t->stub.code;

	if (!c || !c->chain_n || c->chain_tgt_va < t->stub.code_va ||
	    c->chain_tgt_va + (uint64_t)c->chain_n * 8 > t->stub.code_va + t->stub.code_size)
		return;
	t->ps.chain.va = c->chain_va;
	t->ps.chain.stride = VT_CHAIN_STRIDE;
	t->ps.chain.n = c->chain_n;
	t->ps.chain.targets = (uint64_t *)(void *)(t->stub.code + (c->chain_tgt_va - t->stub.code_va));
}

/* Slot patching reaches guest memory through these, knowing nothing of the host. */
static void *tracer_gpa_ptr(void *host, uint64_t gpa, uint64_t len)
{
	struct host *h = host;

	return h->ops->gpa_ptr(h, gpa, len);
}

static int tracer_write_code(void *host, uint64_t gpa, uint8_t *hva, const void *bytes, size_t len)
{
	struct host *h = host;

	return h->ops->write_code(h, gpa, hva, bytes, len);
}

int tracer_create(struct tracer **out, struct host *host, const struct kernel_image *img,
		  const struct tracer_config *cfg, struct errbuf *err)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return err_set(err, ENOMEM, "out of memory for the tracer");
	tracer_rcu_register();
	t->host = host;
	t->cfg = *cfg;
	if (!(t->guest = guest_arch_of(img->arch))) {
		free(t);
		return err_set(err, EOPNOTSUPP, "vmmtrace has no stub for %s kernels", image_arch_name(img->arch));
	}
	pthread_mutex_init(&t->change_lock, NULL);
	pthread_mutex_init(&t->fnargs_lock, NULL);
	if ((rc = tracer_load_symbols(t, img, err)))
		goto fail;
	if (cfg->stop_at && !(t->stop_at = tracer_text_symbol(t, cfg->stop_at))) {
		rc = err_set(err, ENOENT, "--stop-at %s: no such function in the kernel", cfg->stop_at);
		goto fail;
	}
	/* An unplaced Image (image.h) has no slot to patch and no room known for a stub: no stub, no rings. */
	if (!img->unplaced && (rc = tracer_setup_rings(t, img, err)))
		goto fail;
	rc = patch_init(&t->ps, &(struct patch_mem){ tracer_gpa_ptr, tracer_write_code, host }, &img->elf, &t->mt,
			&t->syms, guest_slot_ops(t->guest), t->mt.fentry, t->stub_entry, err);
	if (rc)
		goto fail;
	tracer_chain_setup(t);
	if (patch_exclude(&t->ps, t->guest->before_mmu))
		log_info("not traceable: the kernel runs some functions before its MMU is on (%s...)",
			 t->guest->before_mmu[0]);
	/*
	 * The ftrace_init hand-over and free_initmem concern slots, and rings
	 * in memory the guest frees (arm64: its init data), which must move
	 * at the hand-over before the guest reuses it, slots or not: a boot
	 * that has neither (x86_64 with VM events alone, --stop-at alone, no
	 * control socket) arms neither, and keeps guest debugging off unless
	 * --stop-at or --flight-recorder need it.
	 */
	if (cfg->n_include || cfg->live || t->stub.data_must_move) {
		t->ftrace_init = tracer_text_symbol(t, "ftrace_init");
		t->free_initmem = tracer_text_symbol(t, "free_initmem");
		t->guest_ftrace = tracer_text_symbol(t, "ftrace_modify_all_code");
	}
	if (cfg->stop_on_panic && !(t->emergency_restart = tracer_text_symbol(t, "emergency_restart")))
		log_warn("the kernel has no emergency_restart(): a panic that reboots is not caught");
	t->ps.phase = t->ftrace_init ? PATCH_PHASE_EARLY : PATCH_PHASE_RUNNING;
	tracer_set_hooks(t);
	if ((rc = tracer_vmev_setup(t, err)))
		goto fail;
	/* --args: made now, so that every writer of the boot (and the flight recorder) has it. */
	if (cfg->args && !tracer_fnargs(t)) {
		rc = err_set(err, ENOMEM, "out of memory for --args");
		goto fail;
	}
	if ((rc = tracer_boot_client(t, err)))
		goto fail;
	*out = t;
	return 0;
fail:
	tracer_destroy(t);
	return rc;
}

int tracer_start(struct tracer *t, struct errbuf *err)
{
	int rc;

	if (t->host->ops->clock_khz(t->host, &t->tsc_khz))
		log_warn("%s reports no %s frequency: timestamps assume 1 GHz", t->host->name, t->guest->clock);
	if (t->host->ops->read_clock(t->host, 0, &t->tsc_base))
		log_warn("cannot read the guest %s: timestamps count from its zero", t->guest->clock);
	if (t->boot_client && (rc = tracer_client_open(t, t->boot_client, err))) {
		char msg[384];

		if (rc == -ENOMEM)
			return rc;
		/* The header could not be written: the same line as a failure later on. */
		atomic_store(&t->boot_client->werr, rc);
		tracer_output_msg(t, rc, msg, sizeof(msg));
		return err_set(err, -rc, "%s", msg);
	}
	for (unsigned i = 0; i < t->host->ncpus; i++)
		if ((rc = tracer_set_breakpoints(t, i, err)))
			return rc;
	tracer_vmev_boot_records(t);
	return tracer_consumer_start(t, err);
}

void tracer_ring_totals(struct tracer *t, uint64_t *lost, uint64_t *stub_dropped, uint64_t *rejected)
{
	*lost = *stub_dropped = *rejected = 0;
	for (unsigned i = 0; i < t->nrings; i++) {
		*lost += t->rings[i].lost + t->rings[i].unfinished;
		*stub_dropped += t->rings[i].stub_dropped;
		*rejected += t->rings[i].rejected + (t->rings[i].broken ? 1 : 0);
	}
}

void tracer_summary(struct tracer *t, FILE *out)
{
	uint64_t lost, stub_dropped, rejected, events = atomic_load(&t->events);
	/* A guest stopped before ftrace_init made every one of its calls before it. */
	uint64_t early = t->ftrace_init && t->ps.phase == PATCH_PHASE_EARLY ? events : t->early_events;

	tracer_ring_totals(t, &lost, &stub_dropped, &rejected);
	fprintf(out, "vmmtrace: trace: %llu events (%llu before ftrace_init, %llu after); "
		"%zu slots held; %lu doorbells; %llu dropped (%llu by the stub, %llu lost); mode %s\n",
		(unsigned long long)events, (unsigned long long)early,
		(unsigned long long)(events - early), t->ps.held,
		atomic_load(&t->doorbells), (unsigned long long)(stub_dropped + lost),
		(unsigned long long)stub_dropped, (unsigned long long)lost,
		t->cfg.mode == TRACE_LOSSLESS ? "lossless" : t->cfg.mode == TRACE_EXIT ? "exit" : "overwrite");
	for (unsigned i = 0; i < t->nrings; i++)
		if (t->rings[i].unfinished)
			fprintf(out, "vmmtrace: trace: %llu record(s) on CPU %u unfinished: the guest stopped while inside the stub\n",
				(unsigned long long)t->rings[i].unfinished, i);
	if (t->ftrace_init && !t->handed_over && t->ps.phase != PATCH_PHASE_EARLY)
		fprintf(out, "vmmtrace: trace: the guest did not finish ftrace_init while traced\n");
	if (t->handoff_restore.foreign || t->handoff_enable.foreign)
		fprintf(out, "vmmtrace: trace: %zu slots were in a foreign state at the hand-over and left alone\n",
			t->handoff_restore.foreign + t->handoff_enable.foreign);
	if (t->guest_ftrace_changes || t->guest_chained_max || t->guest_given_max) {
		size_t chained = 0;

		for (size_t i = 0; i < t->ps.count; i++)
			chained += t->ps.slots[i].enabled && t->ps.slots[i].chain;
		fprintf(out, "vmmtrace: trace: the guest's ftrace changed its code %llu times; of the slots vmmtrace "
			"held, %zu at most went on to its tracer (%zu at the end), %zu at most were given to it "
			"(%zu at the end)\n", (unsigned long long)t->guest_ftrace_changes, t->guest_chained_max, chained,
			t->guest_given_max, t->ps.given);
	}
	if (t->graph) {
		uint64_t unhooked = 0;

		for (unsigned i = 0; i < t->nrings; i++)
			unhooked += t->rings[i].unhooked;
		if (unhooked)
			fprintf(out, "vmmtrace: trace: %llu returns not recorded: their call found no room on "
				"its task's shadow stack, or no task\n", (unsigned long long)unhooked);
		tracer_shadow_report(t);
	}
	if (atomic_load(&t->unrouted))
		fprintf(out, "vmmtrace: trace: %lu events arrived for slots no client held any more "
			"(returns of calls in flight at a detach, or a call interrupted inside the stub "
			"across one) and were not written\n",
			atomic_load(&t->unrouted));
	tracer_vmev_summary(t, out);
	if (rejected || atomic_load(&t->bad_doorbells))
		fprintf(out, "vmmtrace: trace: rejected %llu invalid ring values and %lu invalid doorbells from the guest\n",
			(unsigned long long)rejected, atomic_load(&t->bad_doorbells));
}

void tracer_progress(struct tracer *t, struct tracer_progress *p)
{
	const struct trace_meta meta = { .tsc_khz = t->tsc_khz, .tsc_base = t->tsc_base };
	uint64_t lost, stub_dropped, rejected;

	tracer_ring_totals(t, &lost, &stub_dropped, &rejected);
	p->events = atomic_load(&t->events);
	p->vm_events = atomic_load(&t->vm_events);
	p->dropped = lost + stub_dropped;
	p->guest_ns = trace_meta_ns(&meta, atomic_load(&t->max_tsc));
	p->phase = t->ps.phase == PATCH_PHASE_EARLY ? "early boot" :
		   t->ps.phase == PATCH_PHASE_FTRACE_INIT ? "ftrace_init" :
		   t->ps.phase == PATCH_PHASE_GUEST_FTRACE ? "guest ftrace" : "running";
}

void tracer_status(struct tracer *t, FILE *out)
{
	uint64_t lost, stub_dropped, rejected, digest;
	unsigned nclients = 0;
	size_t ours;

	tracer_ring_totals(t, &lost, &stub_dropped, &rejected);
	pthread_mutex_lock(&t->change_lock);
	patch_scan(&t->ps, &ours, &digest);
	for (unsigned i = 0; i < PATCH_MAX_CLIENTS; i++)
		nclients += t->clients[i] != NULL;
	fprintf(out, "held slots: %zu of %zu\nslots calling the stub: %zu\nslot bytes digest: %016llx\n"
		"clients: %u\nphase: %s\n", t->ps.held, t->ps.count, ours, (unsigned long long)digest, nclients,
		t->ps.phase == PATCH_PHASE_EARLY ? "early boot (before ftrace_init)" :
		t->ps.phase == PATCH_PHASE_FTRACE_INIT ? "inside ftrace_init" :
		t->ps.phase == PATCH_PHASE_GUEST_FTRACE ? "running, the guest's ftrace changing its code" : "running");
	fprintf(out, "events: %lu\nevents for released slots: %lu\ndoorbells: %lu\n"
		"dropped: %llu (%llu by the stub, %llu lost)\n",
		atomic_load(&t->events), atomic_load(&t->unrouted), atomic_load(&t->doorbells),
		(unsigned long long)(lost + stub_dropped), (unsigned long long)stub_dropped,
		(unsigned long long)lost);
	fprintf(out, "rejected guest values: %llu\nchange sets: %llu\n"
		"pause last: %.3f ms (all vCPUs stopped %.3f ms)\npause worst: %.3f ms (all vCPUs stopped %.3f ms)\n",
		(unsigned long long)(rejected + atomic_load(&t->bad_doorbells)), (unsigned long long)t->changes,
		t->pause_last_ns / 1e6, t->held_last_ns / 1e6, t->pause_worst_ns / 1e6, t->held_worst_ns / 1e6);
	pthread_mutex_unlock(&t->change_lock);
}

#define STATUS_SLOTS_MAX 64

void tracer_status_slots(struct tracer *t, const struct filter *f, FILE *out)
{
	char line[512];
	size_t n, shown = 0;
	uint8_t *sel = patch_match(&t->ps, f, &n);

	if (!sel) {
		fprintf(out, "slots: out of memory\n");
		return;
	}
	if (!n)
		fprintf(out, "slots: no traceable function matches\n");
	pthread_mutex_lock(&t->change_lock);
	for (size_t i = 0; i < t->ps.count && shown < STATUS_SLOTS_MAX; i++) {
		if (!sel[i])
			continue;
		patch_describe(&t->ps, i, line, sizeof(line));
		fprintf(out, "%s\n", line);
		shown++;
	}
	pthread_mutex_unlock(&t->change_lock);
	if (n > shown)
		fprintf(out, "slots: %zu more match (the first %d are shown)\n", n - shown, STATUS_SLOTS_MAX);
	free(sel);
}

int tracer_finish(struct tracer *t, struct errbuf *err)
{
	struct errbuf why = { "" };
	int rc;

	tracer_consumer_stop(t);
	tracer_drain_all(t, 1);
	tracer_flush_clients(t, 1);
	if (!t->boot_client)
		return 0;
	rc = tracer_client_close(t, t->boot_client, &why);
	if (!rc && t->boot_client->out && fflush(t->boot_client->out))
		atomic_store(&t->boot_client->werr, rc = -(errno ? errno : EIO));
	if (rc) {
		char msg[384];

		/* The line the stop said, when the consumer stopped the guest for it. */
		tracer_output_msg(t, rc, msg, sizeof(msg));
		return err_set(err, -rc, "%s", msg);
	}
	return 0;
}

int tracer_output_error(const struct tracer *t)
{
	return tracer_client_error(t->boot_client);
}

void tracer_destroy(struct tracer *t)
{
	if (!t)
		return;
	tracer_consumer_stop(t);
	if (t->hooked)
		t->host->ops->set_hooks(t->host, NULL);
	for (unsigned i = 0; i < PATCH_MAX_CLIENTS; i++)
		if (t->clients[i] && t->clients[i] != t->boot_client)
			t->clients[i] = NULL;	/* owned by their connections */
	tracer_client_free(t->boot_client);
	free(t->routes);
	for (unsigned i = 0; t->rings && i < t->nrings; i++)
		ring_view_destroy(&t->rings[i]);
	free(t->rings);
	patch_destroy(&t->ps);
	if (t->stub.code)
		t->host->ops->stub_free(t->host, &t->stub);
	mcount_destroy(&t->mt);
	symtab_destroy(&t->syms);
	fnargs_free(t->fnargs);
	kbtf_close(&t->kbtf);
	pthread_mutex_destroy(&t->fnargs_lock);
	pthread_mutex_destroy(&t->change_lock);
	free(t);
}
