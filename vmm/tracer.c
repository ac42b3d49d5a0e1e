// SPDX-License-Identifier: GPL-2.0
/* Setting up and closing a trace session (tracer-run.c: while the guest runs). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/image.h"
#include "vmm/kallsyms.h"
#include "vmm/log.h"
#include "vmm/sysmap.h"
#include "vmm/tracer-int.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

#define TRACE_MIN_RECORDS 64
#define PERCPU_OFFSET_MAX (16u << 20)	/* per-CPU symbols are small offsets */

static int tracer_load_symbols(struct tracer *t, const struct kernel_image *img, struct errbuf *err)
{
	struct kallsyms_layout layout;
	int rc;

	symtab_init(&t->syms);
	if (t->cfg.system_map)
		rc = sysmap_read_file(t->cfg.system_map, &t->syms, err);
	else if (!(rc = kallsyms_recover(&img->elf, &t->syms, &layout, err)))
		;
	else if (elf_section(&img->elf, ".symtab")) {
		symtab_destroy(&t->syms);
		symtab_init(&t->syms);
		rc = sysmap_read_elf(&img->elf, &t->syms, err);
	}
	if (rc)
		return rc;
	if ((rc = symtab_finish(&t->syms)))
		return err_set(err, rc, "cannot index the kernel's symbols");
	return mcount_read(&img->elf, &t->syms, &t->mt, err);
}

static int tracer_build_filter(struct tracer *t, struct errbuf *err)
{
	char pat[512];
	int rc;

	filter_init(&t->filter);
	for (unsigned i = 0; i < t->cfg.n_include; i++)
		if ((rc = filter_add(&t->filter, t->cfg.include[i], err)))
			return rc;
	for (unsigned i = 0; i < t->cfg.n_exclude; i++) {
		if (snprintf(pat, sizeof(pat), "!%s", t->cfg.exclude[i]) >= (int)sizeof(pat))
			return err_set(err, EINVAL, "--notrace pattern is too long");
		if ((rc = filter_add(&t->filter, pat, err)))
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

/* Ring geometry, the stub's configuration block, the host's ring views. */
static int tracer_setup_rings(struct tracer *t, const struct kernel_image *img, struct errbuf *err)
{
	uint64_t hdr_bytes, ring_bytes, n = t->cfg.buffer_size / VT_REC_SIZE;
	const struct symbol *cpu = symtab_find_name(&t->syms, "cpu_number");
	struct vt_stub_config *c;
	int rc;

	t->nrecords = TRACE_MIN_RECORDS;
	while (t->nrecords * 2 <= n)
		t->nrecords *= 2;
	t->nrings = t->vm->cfg.ncpus;
	ring_bytes = t->nrecords * VT_REC_SIZE;
	hdr_bytes = ((uint64_t)t->nrings * VT_HDR_SIZE + 4095) & ~4095ULL;
	rc = arch_stub_install(t->vm, &img->elf, &t->syms, hdr_bytes + t->nrings * ring_bytes, &t->stub, err);
	if (rc)
		return rc;
	c = (struct vt_stub_config *)t->stub.code;
	c->magic = VT_STUB_MAGIC;
	c->cpu_off = cpu && cpu->addr < PERCPU_OFFSET_MAX ? cpu->addr : UINT64_MAX;
	c->ring_hdrs = t->stub.data_va;
	c->ring_recs = t->stub.data_va + hdr_bytes;
	c->ring_bytes = ring_bytes;
	c->ring_mask = t->nrecords - 1;
	c->limit = t->cfg.mode == TRACE_LOSSLESS ? t->nrecords : UINT64_MAX;
	c->nrings = t->nrings;
	c->doorbell_port = VT_DOORBELL_PORT;
	if (c->cpu_off == UINT64_MAX)
		log_warn("no per-CPU cpu_number symbol: all CPUs share one ring");
	t->rings = calloc(t->nrings, sizeof(*t->rings));
	if (!t->rings)
		return err_set(err, ENOMEM, "out of memory for ring views");
	for (unsigned i = 0; i < t->nrings; i++)
		ring_view_init(&t->rings[i], i, (struct vt_ring_hdr *)(t->stub.data + i * VT_HDR_SIZE),
			       (struct vt_record *)(t->stub.data + hdr_bytes + i * ring_bytes),
			       t->nrecords, t->cfg.mode == TRACE_LOSSLESS);
	t->stub_entry = t->stub.code_va + VT_CFG_SIZE;
	return 0;
}

static int tracer_setup_slots(struct tracer *t, const struct kernel_image *img, struct errbuf *err)
{
	struct patch_result res;
	int rc;

	rc = patch_select(&t->ps, t->vm, &img->elf, &t->mt, &t->syms, &t->filter,
			  arch_slot_ops(), t->mt.fentry, t->stub_entry, err);
	if (rc)
		return rc;
	if (!t->ps.count)
		return err_set(err, ENOENT, "no traceable function matches --trace %s%s",
			       t->cfg.include[0], t->cfg.n_include > 1 ? " ..." : "");
	/* Before the guest's first instruction: call __fentry__ -> call stub. */
	patch_enable(&t->ps, &res);
	t->ftrace_init = tracer_text_symbol(t, "ftrace_init");
	atomic_store(&t->phase, t->ftrace_init ? PHASE_EARLY : PHASE_RUNNING);
	log_info("tracing %zu slots (%zu written); stub at 0x%llx, %u rings of %llu records",
		 t->ps.count, res.written, (unsigned long long)t->stub_entry, t->nrings,
		 (unsigned long long)t->nrecords);
	return 0;
}

int tracer_create(struct tracer **out, struct vm *vm, const struct kernel_image *img,
		  const struct tracer_config *cfg, struct errbuf *err)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return err_set(err, ENOMEM, "out of memory for the tracer");
	t->vm = vm;
	t->cfg = *cfg;
	trace_buf_init(&t->buf);
	if ((rc = tracer_load_symbols(t, img, err)) || (rc = tracer_build_filter(t, err)))
		goto fail;
	if (cfg->stop_at && !(t->stop_at = tracer_text_symbol(t, cfg->stop_at))) {
		rc = err_set(err, ENOENT, "--stop-at %s: no such function in the kernel", cfg->stop_at);
		goto fail;
	}
	if ((rc = tracer_setup_rings(t, img, err)) || (rc = tracer_setup_slots(t, img, err)))
		goto fail;
	t->out = cfg->output ? fopen(cfg->output, "w") : stdout;
	if (!t->out) {
		rc = err_set(err, errno, "cannot open output '%s': %s", cfg->output, strerror(errno));
		goto fail;
	}
	if (pio_register(&vm->pio, VT_DOORBELL_PORT, 4, tracer_doorbell, t)) {
		rc = err_set(err, ENOSPC, "too many port I/O devices");
		goto fail;
	}
	vm->tracer = t;
	*out = t;
	return 0;
fail:
	tracer_destroy(t);
	return rc;
}

int tracer_start(struct tracer *t, struct errbuf *err)
{
	uint64_t khz = 0;
	int rc;

	if (arch_vcpu_tsc_khz(&t->vm->vcpus[0], &khz))
		log_warn("KVM reports no TSC frequency: timestamps assume 1 GHz");
	trace_text_init(&t->text, t->out, &t->syms, khz);
	trace_text_header(&t->text, t->nrings);
	for (unsigned i = 0; i < t->vm->ncpus; i++)
		if ((rc = tracer_set_breakpoints(t, &t->vm->vcpus[i], err)))
			return rc;
	return tracer_consumer_start(t, err);
}

static void tracer_summary(struct tracer *t)
{
	uint64_t lost = 0, stub_dropped = 0, rejected = 0;

	for (unsigned i = 0; i < t->nrings; i++) {
		lost += t->rings[i].lost;
		stub_dropped += t->rings[i].stub_dropped;
		rejected += t->rings[i].rejected + (t->rings[i].broken ? 1 : 0);
	}
	fprintf(stderr, "vmmtrace: trace: %llu events (%llu before ftrace_init, %llu after); "
		"%zu slots held; %lu doorbells; %llu dropped (%llu by the stub, %llu lost); mode %s\n",
		(unsigned long long)t->buf.emitted, (unsigned long long)t->early_events,
		(unsigned long long)(t->buf.emitted - t->early_events), t->ps.count,
		atomic_load(&t->doorbells), (unsigned long long)(stub_dropped + lost),
		(unsigned long long)stub_dropped, (unsigned long long)lost,
		t->cfg.mode == TRACE_LOSSLESS ? "lossless" : "overwrite");
	if (t->ftrace_init && !t->handed_over)
		fprintf(stderr, "vmmtrace: trace: the guest did not finish ftrace_init while traced\n");
	if (t->handoff_restore.foreign || t->handoff_enable.foreign)
		fprintf(stderr, "vmmtrace: trace: %zu slots were in a foreign state at the hand-over and left alone\n",
			t->handoff_restore.foreign + t->handoff_enable.foreign);
	if (rejected || atomic_load(&t->bad_doorbells))
		fprintf(stderr, "vmmtrace: trace: rejected %llu invalid ring values and %lu invalid doorbells from the guest\n",
			(unsigned long long)rejected, atomic_load(&t->bad_doorbells));
}

int tracer_finish(struct tracer *t, struct errbuf *err)
{
	tracer_consumer_stop(t);
	tracer_drain_all(t, 1);
	trace_buf_flush(&t->buf, 1, trace_text_event, &t->text);
	if (fflush(t->out) && !t->text.error)
		t->text.error = errno;
	tracer_summary(t);
	if (t->text.error)
		return err_set(err, t->text.error, "writing the trace to %s: %s",
			       t->cfg.output ? t->cfg.output : "stdout", strerror(t->text.error));
	return 0;
}

void tracer_destroy(struct tracer *t)
{
	if (!t)
		return;
	tracer_consumer_stop(t);
	if (t->vm && t->vm->tracer == t)
		t->vm->tracer = NULL;
	if (t->out && t->out != stdout)
		fclose(t->out);
	for (unsigned i = 0; t->rings && i < t->nrings; i++)
		ring_view_destroy(&t->rings[i]);
	free(t->rings);
	patch_destroy(&t->ps);
	stub_region_free(&t->stub);
	mcount_destroy(&t->mt);
	filter_destroy(&t->filter);
	symtab_destroy(&t->syms);
	trace_buf_destroy(&t->buf);
	free(t);
}
