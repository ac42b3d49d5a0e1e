// SPDX-License-Identifier: GPL-2.0
/*
 * The event types a trace.dat of vmmtrace declares, one table entry each.
 * Format texts follow the kernel's events/<system>/<name>/format files of
 * the 6.1 guests vmmtrace traces (readers parse the payload from them, so
 * field offsets and sizes must match what the encoder writes).
 */
#include "vmm/output/dat.h"
#include "vmm/output/vmevent.h"

/* The kernel's struct trace_entry, the first fields of every event. */
static const struct trace_dat_field dat_common_fields[] = {
	{ "unsigned short common_type", 0, 2, 0 },
	{ "unsigned char common_flags", 2, 1, 0 },
	{ "unsigned char common_preempt_count", 3, 1, 0 },
	{ "int common_pid", 4, 4, 1 },
};

/* ftrace:function, the function tracer's entry event. */
static const struct trace_dat_field dat_function_fields[] = {
	{ "unsigned long ip", 8, 8, 0 },
	{ "unsigned long parent_ip", 16, 8, 0 },
};

static void dat_function_encode(const struct ring_event *ev, uint8_t *payload, const struct trace_dat_ns *ns)
{
	(void)ns;
	trace_dat_put_le64(payload + 8, ev->func);
	trace_dat_put_le64(payload + 16, ev->parent);
}

/*
 * --graph: ftrace's funcgraph_entry (a hooked call) and funcgraph_exit (its
 * return), as the kernel's trace_entries.h lays them out (6.1, before
 * funcgraph-retval had a field), so that trace-cmd's function_graph
 * handlers print them as for the guest's own function_graph: a leaf on
 * one line, blocks open and closed, durations from calltime and rettime,
 * nanoseconds on the trace's clock.
 */
static const struct trace_dat_field dat_fgraph_entry_fields[] = {
	{ "unsigned long func", 8, 8, 0 },
	{ "int depth", 16, 4, 1 },
};

static void dat_fgraph_entry_encode(const struct ring_event *ev, uint8_t *p, const struct trace_dat_ns *ns)
{
	(void)ns;
	trace_dat_put_le64(p + 8, ev->func);
	trace_dat_put_le32(p + 16, ev->depth);
}

static const struct trace_dat_field dat_fgraph_exit_fields[] = {
	{ "unsigned long func", 8, 8, 0 }, { "int depth", 16, 4, 1 }, { "unsigned int overrun", 20, 4, 0 },
	{ "unsigned long long calltime", 24, 8, 0 }, { "unsigned long long rettime", 32, 8, 0 },
};

static void dat_fgraph_exit_encode(const struct ring_event *ev, uint8_t *p, const struct trace_dat_ns *ns)
{
	/* A damaged raw file's exit may claim to have begun after it ended: no negative length. */
	uint64_t call = trace_dat_ns(ns, ev->calltime < ev->tsc ? ev->calltime : ev->tsc);

	trace_dat_put_le64(p + 8, ev->func);
	trace_dat_put_le32(p + 16, ev->depth);
	trace_dat_put_le64(p + 24, call);
	trace_dat_put_le64(p + 32, trace_dat_ns(ns, ev->tsc));
}

/*
 * VM events (vmevent.h): the host kernel's kvm tracepoints' fields and
 * print formats (arch/x86/kvm/trace.h, include/trace/events/kvm.h), plus
 * the guest RIP, printed as the text writer prints it. common_flags stays
 * 0: the VM event's low flag bits are its own, not irqs-off.
 */
#define DAT_RIP(off) { "unsigned long rip", off, 8, 0 }
#define DAT_FIELDS(f) .fields = f, .nfields = sizeof(f) / sizeof(f[0])

static const struct trace_dat_field dat_pio_fields[] = {
	{ "unsigned int rw", 8, 4, 0 }, { "unsigned int port", 12, 4, 0 },
	{ "unsigned int size", 16, 4, 0 }, { "unsigned int count", 20, 4, 0 },
	{ "unsigned int val", 24, 4, 0 }, DAT_RIP(32),
};

static void dat_pio_encode(const struct ring_event *ev, uint8_t *p, const struct trace_dat_ns *ns)
{
	(void)ns;
	p[2] = 0;
	trace_dat_put_le32(p + 8, ev->flags & VMEV_FLAG_WRITE);
	trace_dat_put_le32(p + 12, (uint32_t)(ev->parent & 0xffff));
	trace_dat_put_le32(p + 16, (uint32_t)(ev->parent >> 16 & 0xff));
	trace_dat_put_le32(p + 20, (uint32_t)(ev->parent >> 32));
	trace_dat_put_le32(p + 24, (uint32_t)ev->arg);
	trace_dat_put_le64(p + 32, ev->func);
}

static const struct trace_dat_field dat_mmio_fields[] = {
	{ "u32 type", 8, 4, 0 }, { "u32 len", 12, 4, 0 }, { "u64 gpa", 16, 8, 0 },
	{ "u64 val", 24, 8, 0 }, DAT_RIP(32),
};

static void dat_mmio_encode(const struct ring_event *ev, uint8_t *p, const struct trace_dat_ns *ns)
{
	(void)ns;
	p[2] = 0;
	trace_dat_put_le32(p + 8, (ev->flags & VMEV_FLAG_WRITE) ? 2 : 1);	/* KVM_TRACE_MMIO_WRITE, _READ */
	trace_dat_put_le32(p + 12, (ev->flags & 0xff) >> VMEV_LEN_SHIFT);
	trace_dat_put_le64(p + 16, ev->parent);
	trace_dat_put_le64(p + 24, ev->arg);
	trace_dat_put_le64(p + 32, ev->func);
}

static const struct trace_dat_field dat_msr_fields[] = {
	{ "unsigned write", 8, 4, 0 }, { "u32 ecx", 12, 4, 0 }, { "u64 data", 16, 8, 0 },
	{ "u8 exception", 24, 1, 0 }, DAT_RIP(32), { "unsigned long caller", 40, 8, 0 },
};

static void dat_msr_encode(const struct ring_event *ev, uint8_t *p, const struct trace_dat_ns *ns)
{
	(void)ns;
	p[2] = 0;
	trace_dat_put_le32(p + 8, ev->flags & VMEV_FLAG_WRITE);
	trace_dat_put_le32(p + 12, (uint32_t)ev->parent);
	trace_dat_put_le64(p + 16, ev->arg);
	p[24] = !!(ev->flags & VMEV_FLAG_GP);
	trace_dat_put_le64(p + 32, ev->func);
	trace_dat_put_le64(p + 40, vmev_msr_caller(ev));
}

static const struct trace_dat_field dat_exit_fields[] = {
	{ "__u32 reason", 8, 4, 0 }, { "int errno", 12, 4, 1 }, DAT_RIP(16),
};

static void dat_exit_encode(const struct ring_event *ev, uint8_t *p, const struct trace_dat_ns *ns)
{
	(void)ns;
	p[2] = 0;
	trace_dat_put_le32(p + 8, (uint32_t)ev->parent);
	trace_dat_put_le64(p + 16, ev->func);
}

static const struct trace_dat_field dat_cpuid_fields[] = {
	{ "unsigned int function", 8, 4, 0 }, { "unsigned int index", 12, 4, 0 },
	{ "unsigned int rax", 16, 4, 0 }, { "unsigned int rbx", 20, 4, 0 },
	{ "unsigned int rcx", 24, 4, 0 }, { "unsigned int rdx", 28, 4, 0 },
};

static void dat_cpuid_encode(const struct ring_event *ev, uint8_t *p, const struct trace_dat_ns *ns)
{
	(void)ns;
	p[2] = 0;
	trace_dat_put_le32(p + 8, (uint32_t)ev->func);
	trace_dat_put_le32(p + 12, (uint32_t)(ev->func >> 32));
	trace_dat_put_le32(p + 16, (uint32_t)ev->parent);
	trace_dat_put_le32(p + 20, (uint32_t)(ev->parent >> 32));
	trace_dat_put_le32(p + 24, (uint32_t)ev->arg);
	trace_dat_put_le32(p + 28, (uint32_t)(ev->arg >> 32));
}

/*
 * kvm:hypercall, recorded on arm64: the host's kvm_hvc_arm64 fields
 * (imm is not known to user space: 0), then the first argument, the
 * answer (x0's low half, sign-extended) and the conduit.
 */
static const struct trace_dat_field dat_hvc_fields[] = {
	{ "unsigned long vcpu_pc", 8, 8, 0 }, { "unsigned long r0", 16, 8, 0 }, { "unsigned long imm", 24, 8, 0 },
	{ "unsigned long x1", 32, 8, 0 }, { "long ret", 40, 8, 1 }, { "unsigned int smc", 48, 4, 0 },
};

static void dat_hvc_encode(const struct ring_event *ev, uint8_t *p, const struct trace_dat_ns *ns)
{
	(void)ns;
	p[2] = 0;
	trace_dat_put_le64(p + 8, ev->func);
	trace_dat_put_le64(p + 16, vmev_hypercall_nr(ev));
	trace_dat_put_le64(p + 24, 0);
	trace_dat_put_le64(p + 32, ev->arg);
	trace_dat_put_le64(p + 40, (uint64_t)(int64_t)(int32_t)vmev_hypercall_ret(ev));
	trace_dat_put_le32(p + 48, !!(ev->flags & VMEV_FLAG_SMC));
}

#define DAT_EXIT_NAMES "{ 0, \"UNKNOWN\" }, { 1, \"EXCEPTION\" }, { 2, \"IO\" }, { 3, \"HYPERCALL\" }, " \
	"{ 4, \"DEBUG\" }, { 5, \"HLT\" }, { 6, \"MMIO\" }, { 7, \"IRQ_WINDOW_OPEN\" }, { 8, \"SHUTDOWN\" }, " \
	"{ 9, \"FAIL_ENTRY\" }, { 10, \"INTR\" }, { 11, \"SET_TPR\" }, { 12, \"TPR_ACCESS\" }, { 16, \"NMI\" }, " \
	"{ 17, \"INTERNAL_ERROR\" }, { 24, \"SYSTEM_EVENT\" }, { 26, \"IOAPIC_EOI\" }, { 27, \"HYPERV\" }, " \
	"{ 29, \"X86_RDMSR\" }, { 30, \"X86_WRMSR\" }"

/* Index 0 must stay ftrace:function, 1 and 2 funcgraph's; the others by kind (trace_dat_event_pick). */
const struct trace_dat_event trace_dat_events[] = {
	{
		.id = 1, .system = "ftrace", .name = "function",
		.fields = dat_function_fields,
		.nfields = sizeof(dat_function_fields) / sizeof(dat_function_fields[0]),
		.print_fmt = "\" %ps <-- %ps\", (void *)REC->ip, (void *)REC->parent_ip",
		.size = 24, .encode = dat_function_encode,
	},
	{
		/* TRACE_GRAPH_ENT and TRACE_GRAPH_RET: the kernel's ids, which tools may assume. */
		.id = 11, .system = "ftrace", .name = "funcgraph_entry", DAT_FIELDS(dat_fgraph_entry_fields),
		.print_fmt = "\"--> %ps (%d)\", (void *)REC->func, REC->depth",
		.size = 24, .encode = dat_fgraph_entry_encode,
	},
	{
		.id = 10, .system = "ftrace", .name = "funcgraph_exit", DAT_FIELDS(dat_fgraph_exit_fields),
		.print_fmt = "\"<-- %ps (%d) (start: %llx  end: %llx) over: %d\", (void *)REC->func, "
			     "REC->depth, REC->calltime, REC->rettime, REC->depth",
		.size = 40, .encode = dat_fgraph_exit_encode,
	},
	{
		.id = 2, .system = "kvm", .name = "kvm_pio", DAT_FIELDS(dat_pio_fields),
		.print_fmt = "\"pio_%s at 0x%x size %d count %d val 0x%x%s [%pS]\", REC->rw ? \"write\" : \"read\", "
			     "REC->port, REC->size, REC->count, REC->val, REC->count > 1 ? \" (...)\" : \"\", "
			     "(void *)REC->rip",
		.size = 40, .encode = dat_pio_encode,
	},
	{
		.id = 3, .system = "kvm", .name = "kvm_mmio", DAT_FIELDS(dat_mmio_fields),
		.print_fmt = "\"mmio %s len %u gpa 0x%llx val 0x%llx [%pS]\", __print_symbolic(REC->type, "
			     "{ 0, \"unsatisfied-read\" }, { 1, \"read\" }, { 2, \"write\" }), REC->len, REC->gpa, "
			     "REC->val, (void *)REC->rip",
		.size = 40, .encode = dat_mmio_encode,
	},
	{
		.id = 4, .system = "kvm", .name = "kvm_msr", DAT_FIELDS(dat_msr_fields),
		.print_fmt = "\"msr_%s %x = 0x%llx%s [%pS]\", REC->write ? \"write\" : \"read\", REC->ecx, "
			     "REC->data, REC->exception ? \" (#GP)\" : \"\", (void *)REC->rip",
		.size = 48, .encode = dat_msr_encode,
	},
	{
		.id = 5, .system = "kvm", .name = "kvm_userspace_exit", DAT_FIELDS(dat_exit_fields),
		.print_fmt = "\"reason %s (%d) [%pS]\", __print_symbolic(REC->reason, " DAT_EXIT_NAMES "), "
			     "REC->reason, (void *)REC->rip",
		.size = 24, .encode = dat_exit_encode,
	},
	{
		.id = 6, .system = "kvm", .name = "kvm_cpuid", DAT_FIELDS(dat_cpuid_fields),
		.print_fmt = "\"func %x idx %x rax %x rbx %x rcx %x rdx %x, cpuid entry offered\", REC->function, "
			     "REC->index, REC->rax, REC->rbx, REC->rcx, REC->rdx",
		.size = 32, .encode = dat_cpuid_encode,
	},
	{
		.id = 7, .system = "kvm", .name = "kvm_hvc_arm64", DAT_FIELDS(dat_hvc_fields),
		.print_fmt = "\"%s at 0x%016lx (r0: 0x%016lx, imm: 0x%lx) x1 0x%lx = %ld\", REC->smc ? \"SMC\" : \"HVC\", "
			     "REC->vcpu_pc, REC->r0, REC->imm, REC->x1, REC->ret",
		.size = 56, .encode = dat_hvc_encode,
	},
};
const size_t trace_dat_nevents = sizeof(trace_dat_events) / sizeof(trace_dat_events[0]);

const struct trace_dat_event *trace_dat_event_pick(const struct ring_event *ev, int graph)
{
	static const unsigned by_kind[VMEV_NKINDS] = {
		[VMEV_PIO] = 3, [VMEV_MMIO] = 4, [VMEV_MSR] = 5, [VMEV_EXIT] = 6, [VMEV_CPUID] = 7,
		[VMEV_HYPERCALL] = 8,
	};
	unsigned k;

	/* Without --graph every function event is an entry, as before returns were recorded. */
	if (graph && !vmev_is(ev) && (ev->flags & VT_REC_FLAG_EXIT))
		return &trace_dat_events[2];
	if (graph && !vmev_is(ev) && (ev->flags & VT_REC_FLAG_HOOKED))
		return &trace_dat_events[1];
	k = vmev_is(ev) ? vmev_kind_of(ev) : 0;
	/* Function entries, and a kind without a format (none is recorded), as index 0. */
	return &trace_dat_events[k < VMEV_NKINDS ? by_kind[k] : 0];
}

static void dat_field_print(const struct trace_dat_field *f, FILE *out)
{
	fprintf(out, "\tfield:%s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
		f->decl, f->offset, f->size, f->is_signed);
}

void trace_dat_event_format(const struct trace_dat_event *e, FILE *out)
{
	fprintf(out, "name: %s\nID: %u\nformat:\n", e->name, e->id);
	for (size_t i = 0; i < sizeof(dat_common_fields) / sizeof(dat_common_fields[0]); i++)
		dat_field_print(&dat_common_fields[i], out);
	fputc('\n', out);
	for (size_t i = 0; i < e->nfields; i++)
		dat_field_print(&e->fields[i], out);
	fprintf(out, "\nprint fmt: %s\n", e->print_fmt);
}
