// SPDX-License-Identifier: GPL-2.0
/*
 * The KVM paravirtual handshake as a table (handshake.h). What KVM offers
 * is CPUID leaf 0x40000001's EAX (the KVM_FEATURE_* bits of
 * Documentation/virt/kvm/x86/cpuid.rst); what the guest turns on it turns
 * on by writing the MSRs of Documentation/virt/kvm/x86/msr.rst. Features
 * without an MSR (hypercalls KVM answers itself, flags the guest only
 * reads) are listed as offered, with what would show their use.
 *
 * An arm64 guest has no CPUID and no MSRs: it asks its hypervisor through
 * SMCCC calls (PSCI, KVM's vendor services), which kvm:hypercall records
 * where the host can bring them to user space; its table lists each call
 * the guest made, with what it asked and what it was told.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/smccc.h"
#include "arch/x86_64/kvm-para.h"
#include "vmm/image/symtab.h"
#include "vmm/output/handshake.h"
#include "vmm/output/vmevent.h"

#define HS_CPUID_SIG		0x40000000u
#define HS_CPUID_FEATURES	0x40000001u

/* How a row reads the value written. */
enum hs_value { V_NONE, V_PVCLOCK, V_WALL, V_AREA, V_FLAG_GPA, V_VECTOR, V_POLL, V_RAW };

struct hs_row {
	unsigned bit;			/* KVM_FEATURE_* */
	const char *name;
	uint32_t msr;			/* 0: no MSR */
	uint64_t on_mask;		/* a write turns it on when all these bits are set; 0: any write */
	int on_any;			/* ... when any of them is set */
	enum hs_value value;
	const char *no_msr;		/* for rows without an MSR: what their use would show */
};

static const struct hs_row hs_rows[] = {
	{ X86_KVM_FEATURE_CLOCKSOURCE2, "kvm-clock", X86_MSR_KVM_SYSTEM_TIME_NEW, X86_KVM_MSR_ENABLED, 0, V_PVCLOCK, NULL },
	{ X86_KVM_FEATURE_CLOCKSOURCE2, "wall clock", X86_MSR_KVM_WALL_CLOCK_NEW, 0, 0, V_WALL, NULL },
	{ X86_KVM_FEATURE_CLOCKSOURCE, "kvm-clock (legacy MSR)", X86_MSR_KVM_SYSTEM_TIME, X86_KVM_MSR_ENABLED, 0, V_PVCLOCK, NULL },
	{ X86_KVM_FEATURE_CLOCKSOURCE, "wall clock (legacy MSR)", X86_MSR_KVM_WALL_CLOCK, 0, 0, V_WALL, NULL },
	{ X86_KVM_FEATURE_CLOCKSOURCE_STABLE_BIT, "stable kvm-clock", 0, 0, 0, V_NONE,
	  "no MSR: a flag the guest reads in the pvclock area" },
	{ X86_KVM_FEATURE_STEAL_TIME, "steal time", X86_MSR_KVM_STEAL_TIME, X86_KVM_MSR_ENABLED, 0, V_AREA, NULL },
	{ X86_KVM_FEATURE_PV_EOI, "PV EOI", X86_MSR_KVM_PV_EOI_EN, X86_KVM_MSR_ENABLED, 0, V_FLAG_GPA, NULL },
	{ X86_KVM_FEATURE_ASYNC_PF, "async PF", X86_MSR_KVM_ASYNC_PF_EN, X86_KVM_ASYNC_PF_ENABLED, 0, V_AREA, NULL },
	{ X86_KVM_FEATURE_ASYNC_PF_VMEXIT, "async PF as #PF vmexit", X86_MSR_KVM_ASYNC_PF_EN,
	  X86_KVM_ASYNC_PF_ENABLED | X86_KVM_ASYNC_PF_DELIVERY_AS_PF_VMEXIT, 0, V_AREA, NULL },
	{ X86_KVM_FEATURE_ASYNC_PF_INT, "async PF as interrupt", X86_MSR_KVM_ASYNC_PF_INT, 0xff, 1, V_VECTOR, NULL },
	{ X86_KVM_FEATURE_POLL_CONTROL, "poll control", X86_MSR_KVM_POLL_CONTROL, 0, 0, V_POLL, NULL },
	{ X86_KVM_FEATURE_MIGRATION_CONTROL, "migration control", X86_MSR_KVM_MIGRATION_CONTROL, 1, 0, V_RAW, NULL },
	{ X86_KVM_FEATURE_PV_UNHALT, "PV unhalt (spinlocks)", 0, 0, 0, V_NONE,
	  "no MSR: KVM_HC_KICK_CPU hypercalls, answered by KVM" },
	{ X86_KVM_FEATURE_PV_TLB_FLUSH, "PV TLB flush", 0, 0, 0, V_NONE,
	  "no MSR: the steal-time area's preempted flag" },
	{ X86_KVM_FEATURE_PV_SEND_IPI, "PV send IPI", 0, 0, 0, V_NONE,
	  "no MSR: KVM_HC_SEND_IPI hypercalls, answered by KVM" },
	{ X86_KVM_FEATURE_PV_SCHED_YIELD, "PV sched yield", 0, 0, 0, V_NONE,
	  "no MSR: KVM_HC_SCHED_YIELD hypercalls, answered by KVM" },
	{ X86_KVM_FEATURE_NOP_IO_DELAY, "no I/O delay", 0, 0, 0, V_NONE,
	  "no MSR: the guest skips its port 0x80 delays" },
	{ X86_KVM_FEATURE_MSI_EXT_DEST_ID, "MSI extended dest ID", 0, 0, 0, V_NONE,
	  "no MSR: how the guest composes MSIs" },
	{ X86_KVM_FEATURE_HC_MAP_GPA_RANGE, "map GPA range", 0, 0, 0, V_NONE,
	  "no MSR: KVM_HC_MAP_GPA_RANGE hypercalls (encrypted guests)" },
};
#define HS_NROWS (sizeof(hs_rows) / sizeof(hs_rows[0]))

struct hs_access {
	int seen;
	uint64_t tsc, value, rip, caller;
	unsigned cpu;
};

struct hs_state {
	struct hs_access first_on, last_off;
	uint64_t cpus_on;		/* CPUs (below 64) that turned it on at least once */
	uint64_t now_on;		/* CPUs on which it is on now */
	unsigned writes, reads, faults;
};

/* arm64: one SMCCC call, keyed by its function ID and, where it names one, what it asks about. */
struct hs_call {
	uint32_t fid, ret;		/* ret: the first call's answer */
	uint64_t arg, tsc, pc;
	unsigned cpu, calls;
};
#define HS_NCALLS 48

struct handshake {
	int have_sig, have_features;
	uint32_t sig[3], features;
	struct hs_state st[HS_NROWS];
	struct hs_call calls[HS_NCALLS];
	unsigned ncalls, other;		/* rows; calls beyond the last row */
};

struct handshake *handshake_new(void)
{
	return calloc(1, sizeof(struct handshake));
}

void handshake_free(struct handshake *h)
{
	free(h);
}

static int hs_turns_on(const struct hs_row *r, uint64_t v)
{
	if (!r->on_mask)
		return 1;
	return r->on_any ? (v & r->on_mask) != 0 : (v & r->on_mask) == r->on_mask;
}

static void hs_cpuid(struct handshake *h, const struct ring_event *ev)
{
	uint32_t fn = (uint32_t)ev->func, idx = (uint32_t)(ev->func >> 32);

	/* The boot vCPU's table: the others are offered the same. */
	if (ev->cpu != 0 || idx != 0)
		return;
	if (fn == HS_CPUID_SIG) {
		h->have_sig = 1;
		h->sig[0] = (uint32_t)(ev->parent >> 32);	/* ebx */
		h->sig[1] = (uint32_t)ev->arg;			/* ecx */
		h->sig[2] = (uint32_t)(ev->arg >> 32);		/* edx */
	} else if (fn == HS_CPUID_FEATURES) {
		h->have_features = 1;
		h->features = (uint32_t)ev->parent;		/* eax */
	}
}

/* The arg a row is keyed by: the call asked about (PSCI_FEATURES), the CPU to start (CPU_ON). */
static int hs_call_keyed(uint32_t fid)
{
	return smccc_arg_is_fid(fid) || smccc_psci32(fid) == A64_PSCI_FN(A64_PSCI_CPU_ON);
}

static void hs_call(struct handshake *h, const struct ring_event *ev)
{
	uint32_t fid = vmev_hypercall_nr(ev);
	uint64_t arg = hs_call_keyed(fid) ? ev->arg : 0;
	struct hs_call *c;

	for (unsigned i = 0; i < h->ncalls; i++)
		if (h->calls[i].fid == fid && h->calls[i].arg == arg) {
			h->calls[i].calls++;
			return;
		}
	if (h->ncalls == HS_NCALLS) {
		h->other++;
		return;
	}
	c = &h->calls[h->ncalls++];
	*c = (struct hs_call){ .fid = fid, .ret = vmev_hypercall_ret(ev), .arg = arg, .tsc = ev->tsc,
			       .pc = ev->func, .cpu = ev->cpu, .calls = 1 };
}

void handshake_event(struct handshake *h, const struct ring_event *ev)
{
	unsigned bits = ev->flags & 0xff;
	uint32_t msr;

	if (!h || !vmev_is(ev))
		return;
	if (vmev_kind_of(ev) == VMEV_CPUID) {
		hs_cpuid(h, ev);
		return;
	}
	if (vmev_kind_of(ev) == VMEV_HYPERCALL) {
		hs_call(h, ev);
		return;
	}
	if (vmev_kind_of(ev) != VMEV_MSR)
		return;
	msr = vmev_msr_index(ev);
	for (size_t i = 0; i < HS_NROWS; i++) {
		const struct hs_row *r = &hs_rows[i];
		struct hs_state *s = &h->st[i];
		uint64_t cpu_bit = ev->cpu < 64 ? 1ull << ev->cpu : 0;
		struct hs_access a = {
			.seen = 1, .tsc = ev->tsc, .value = ev->arg, .rip = ev->func,
			.caller = vmev_msr_caller(ev), .cpu = ev->cpu,
		};

		if (!r->msr || r->msr != msr)
			continue;
		if (bits & VMEV_FLAG_GP) {
			s->faults++;
			continue;
		}
		if (!(bits & VMEV_FLAG_WRITE)) {
			s->reads++;
			continue;
		}
		s->writes++;
		if (hs_turns_on(r, ev->arg)) {
			if (!s->first_on.seen)
				s->first_on = a;
			s->cpus_on |= cpu_bit;
			s->now_on |= cpu_bit;
		} else if (s->now_on & cpu_bit) {
			s->last_off = a;
			s->now_on &= ~cpu_bit;
		}
	}
}

/* function+0xoff of addr, or its address. */
static void hs_where(const struct trace_meta *m, uint64_t addr, int with_off, char *buf, size_t len)
{
	uint64_t off = 0;
	const struct symbol *s = m->syms ? symtab_find_addr(m->syms, addr, &off) : NULL;

	if (s && off < symtab_extent(m->syms, s)) {
		if (with_off && off)
			snprintf(buf, len, "%s+0x%" PRIx64, symtab_name(m->syms, s), off);
		else
			snprintf(buf, len, "%s", symtab_name(m->syms, s));
	} else {
		snprintf(buf, len, "0x%" PRIx64, addr);
	}
}

/* The trace's own time stamp: seconds, to the nearest microsecond. */
static void hs_time(const struct trace_meta *m, uint64_t tsc, char *buf, size_t len)
{
	uint64_t us = (trace_meta_ns(m, tsc) + 500) / 1000;

	snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
}

static void hs_value(const struct hs_row *r, uint64_t v, char *buf, size_t len)
{
	switch (r->value) {
	case V_PVCLOCK: snprintf(buf, len, "pvclock area at GPA 0x%" PRIx64, v & ~(uint64_t)1); break;
	case V_WALL: snprintf(buf, len, "wall clock at GPA 0x%" PRIx64, v); break;
	case V_AREA:
		snprintf(buf, len, "area at GPA 0x%" PRIx64 ", low bits 0x%" PRIx64, v & ~(uint64_t)0x3f, v & 0x3f);
		break;
	case V_FLAG_GPA: snprintf(buf, len, "flag at GPA 0x%" PRIx64, v & ~(uint64_t)1); break;
	case V_VECTOR: snprintf(buf, len, "vector 0x%" PRIx64, v & 0xff); break;
	case V_POLL: snprintf(buf, len, "%s (0x%" PRIx64 ")", v & 1 ? "host polls" : "host does not poll", v); break;
	default: snprintf(buf, len, "0x%" PRIx64, v); break;
	}
}

static unsigned hs_popcount(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

/* A line without its trailing blanks. */
static void hs_emit(FILE *out, char *line)
{
	size_t n = strlen(line);

	while (n > 0 && line[n - 1] == ' ')
		line[--n] = 0;
	fprintf(out, "%s\n", line);
}

/* One line of the table, aligned, without trailing blanks. */
static void hs_line(FILE *out, const char *name, const char *offered, const char *msr, const char *on,
		    const char *when, const char *cpu, const char *from, const char *what)
{
	char line[512];

	snprintf(line, sizeof(line), "  %-24s %-7s %-9s %-9s %-12s %-3s %-26s %s", name, offered, msr, on, when,
		 cpu, from, what);
	hs_emit(out, line);
}

/* arm64's line: call, function ID, calls, first, cpu, from, what it asked and was told. */
static void hs_call_line(FILE *out, const char *name, const char *id, const char *calls, const char *when,
			 const char *cpu, const char *from, const char *what)
{
	char line[512];

	snprintf(line, sizeof(line), "  %-24s %-10s %-5s %-12s %-3s %-26s %s", name, id, calls, when, cpu, from,
		 what);
	hs_emit(out, line);
}

static void hs_print_row(const struct handshake *h, size_t i, const struct trace_meta *m, FILE *out)
{
	const struct hs_row *r = &hs_rows[i];
	const struct hs_state *s = &h->st[i];
	const char *offered = !h->have_features ? "?" : (h->features >> r->bit) & 1 ? "yes" : "no";
	char msr[16] = "-", on[24], when[32] = "", cpu[8] = "", from[128] = "", what[192] = "";

	if (r->msr)
		snprintf(msr, sizeof(msr), "%" PRIx32, r->msr);
	if (!r->msr) {
		snprintf(on, sizeof(on), "-");
		snprintf(what, sizeof(what), "%s", r->no_msr);
	} else if (s->first_on.seen) {
		size_t n;

		snprintf(on, sizeof(on), "%u/%u CPUs", hs_popcount(s->cpus_on), m->ncpus);
		hs_time(m, s->first_on.tsc, when, sizeof(when));
		snprintf(cpu, sizeof(cpu), "%u", s->first_on.cpu);
		/* Who called the MSR accessor; without it, where the guest was. */
		hs_where(m, s->first_on.caller ? s->first_on.caller : s->first_on.rip,
			 !s->first_on.caller, from, sizeof(from));
		hs_value(r, s->first_on.value, what, sizeof(what));
		n = strlen(what);
		if (s->last_off.seen) {
			char t[32], f[96];

			hs_time(m, s->last_off.tsc, t, sizeof(t));
			hs_where(m, s->last_off.caller ? s->last_off.caller : s->last_off.rip,
				 !s->last_off.caller, f, sizeof(f));
			snprintf(what + n, sizeof(what) - n, "; off at %s on CPU %u (%s)", t, s->last_off.cpu, f);
		}
	} else if (s->writes || s->reads || s->faults) {
		snprintf(on, sizeof(on), "no");
		snprintf(what, sizeof(what), "%u writes, %u reads, %u #GP, none turning it on",
			 s->writes, s->reads, s->faults);
	} else {
		snprintf(on, sizeof(on), "no");
	}
	hs_line(out, r->name, offered, msr, on, when, cpu, from, what);
}

void handshake_print(const struct handshake *h, const struct trace_meta *meta, const char *why_not,
		     FILE *out)
{
	char sig[13] = "";

	for (unsigned i = 0; h->have_sig && i < 12; i++) {
		char c = (char)(h->sig[i / 4] >> (8 * (i % 4)));

		if (!c)
			break;
		sig[i] = c >= 0x20 && c < 0x7f ? c : '.';
	}
	fprintf(out, "vmmtrace: handshake: ");
	if (!h->have_sig && !h->have_features)
		fprintf(out, "no kvm:cpuid record: what KVM offered is not known\n");
	else if (!h->have_features)
		fprintf(out, "hypervisor signature '%s' offered, no KVM feature leaf\n", sig);
	else
		fprintf(out, "KVM features 0x%" PRIx32 " offered (CPUID 0x40000001 EAX, signature '%s')\n",
			h->features, sig);
	if (why_not) {
		fprintf(out, "vmmtrace: handshake: %s: which features the guest turned on is not known\n", why_not);
		return;
	}
	hs_line(out, "feature", "offered", "MSR", "enabled", "first", "cpu", "from", "value");
	for (size_t i = 0; i < HS_NROWS; i++)
		hs_print_row(h, i, meta, out);
}

/* The answer of the guest's first call of fid (asking about arg, when keyed), or NULL. */
static const struct hs_call *hs_find(const struct handshake *h, uint32_t fid)
{
	for (unsigned i = 0; i < h->ncalls; i++)
		if (h->calls[i].fid == fid)
			return &h->calls[i];
	return NULL;
}

void handshake_print_smccc(const struct handshake *h, const struct trace_meta *meta, const char *why_not,
			   FILE *out)
{
	const struct hs_call *v = hs_find(h, A64_PSCI_FN(A64_PSCI_VERSION)), *f = hs_find(h, SMCCC_KVM_FEATURES);
	unsigned total = h->other;
	char res[48];

	fprintf(out, "vmmtrace: handshake: arm64, SMCCC calls to the hypervisor");
	if (why_not) {
		fprintf(out, ": not recorded: %s\n", why_not);
		return;
	}
	for (unsigned i = 0; i < h->ncalls; i++)
		total += h->calls[i].calls;
	fprintf(out, ": %u", total);
	if (v)
		fprintf(out, "; PSCI %s", smccc_result(v->fid, v->ret, res, sizeof(res)));
	if (f)
		fprintf(out, "; KVM vendor services %s", smccc_result(f->fid, f->ret, res, sizeof(res)));
	fprintf(out, "\n");
	hs_call_line(out, "call", "id", "calls", "first", "cpu", "from", "asked -> answered");
	for (unsigned i = 0; i < h->ncalls; i++) {
		const struct hs_call *c = &h->calls[i];
		char id[16], calls[16], when[32], cpu[8], from[128], what[160], arg[48], fidname[40];
		const char *name = smccc_name(c->fid), *argname = smccc_arg_is_fid(c->fid) ?
			smccc_arg_name((uint32_t)c->arg, fidname, sizeof(fidname)) : NULL;

		snprintf(id, sizeof(id), "0x%08x", c->fid);
		snprintf(calls, sizeof(calls), "%u", c->calls);
		hs_time(meta, c->tsc, when, sizeof(when));
		snprintf(cpu, sizeof(cpu), "%u", c->cpu);
		hs_where(meta, c->pc, 0, from, sizeof(from));
		if (argname)
			snprintf(arg, sizeof(arg), "%s ", argname);
		else if (hs_call_keyed(c->fid))
			snprintf(arg, sizeof(arg), "0x%llx ", (unsigned long long)c->arg);
		else
			arg[0] = 0;
		snprintf(what, sizeof(what), "%s-> %s", arg, smccc_result(c->fid, c->ret, res, sizeof(res)));
		hs_call_line(out, name ? name : "SMCCC", id, calls, when, cpu, from, what);
	}
	if (h->other)
		fprintf(out, "  (%u more calls, of other functions)\n", h->other);
	fprintf(out, "vmmtrace: handshake: KVM answers SMCCC_VERSION, SMCCC_ARCH_FEATURES, PV_TIME_ST, TRNG and PTP itself: "
		     "they are not seen here\n");
}
