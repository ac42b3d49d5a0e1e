// SPDX-License-Identifier: GPL-2.0
/*
 * The Perfetto writer (trace-perfetto.h). The file is a `Trace` message:
 * each TracePacket is written as field 1 of it the moment it is complete,
 * so the file is valid after every packet and needs no trailer. All
 * packets are on one packet sequence, whose first packet clears its
 * incremental state so that interned ids (iids) are valid from there on.
 * docs/FORMATS.md ("Perfetto") shows the packets.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/protobuf.h"
#include "vmm/output/perfetto.h"
#include "vmm/output/perfetto-calls.h"
#include "vmm/output/perfetto-intern.h"
#include "vmm/output/vmevent.h"

/*
 * Field numbers and enum values of Perfetto's public protos, as published
 * in the Perfetto repository under protos/perfetto/trace/ (checked against
 * google/perfetto at ec5d16b14b, 2026-08-22; these are its stable API).
 */
enum {
	/* trace.proto, message Trace */
	PF_TRACE_PACKET = 1,		/* repeated TracePacket packet */

	/* trace_packet.proto, message TracePacket */
	PF_PACKET_TIMESTAMP = 8,	/* uint64 timestamp */
	PF_PACKET_SEQUENCE_ID = 10,	/* uint32 trusted_packet_sequence_id */
	PF_PACKET_TRACK_EVENT = 11,	/* TrackEvent track_event */
	PF_PACKET_INTERNED_DATA = 12,	/* InternedData interned_data */
	PF_PACKET_SEQUENCE_FLAGS = 13,	/* uint32 sequence_flags */
	PF_PACKET_TRACK_DESCRIPTOR = 60, /* TrackDescriptor track_descriptor */
	/* enum TracePacket.SequenceFlags */
	PF_SEQ_INCREMENTAL_STATE_CLEARED = 1,
	PF_SEQ_NEEDS_INCREMENTAL_STATE = 2,

	/* track_event/track_event.proto, message TrackEvent */
	PF_EVENT_CATEGORY_IIDS = 3,	/* repeated uint64 category_iids (EventCategory) */
	PF_EVENT_ANNOTATIONS = 4,	/* repeated DebugAnnotation debug_annotations */
	PF_EVENT_TYPE = 9,		/* Type type */
	PF_EVENT_NAME_IID = 10,		/* uint64 name_iid (EventName) */
	PF_EVENT_TRACK_UUID = 11,	/* uint64 track_uuid */
	/* enum TrackEvent.Type */
	PF_TYPE_SLICE_BEGIN = 1,
	PF_TYPE_SLICE_END = 2,
	PF_TYPE_INSTANT = 3,

	/* track_event/debug_annotation.proto, message DebugAnnotation */
	PF_ANNOT_NAME_IID = 1,		/* uint64 name_iid (DebugAnnotationName) */
	PF_ANNOT_BOOL = 2,		/* bool bool_value */
	PF_ANNOT_UINT = 3,		/* uint64 uint_value */
	PF_ANNOT_STRING = 6,		/* string string_value */
	PF_ANNOT_STRING_IID = 17,	/* uint64 string_value_iid (debug_annotation_string_values) */

	/* track_event/track_descriptor.proto, message TrackDescriptor */
	PF_TRACK_UUID = 1,		/* uint64 uuid */
	PF_TRACK_NAME = 2,		/* string name */
	PF_TRACK_PARENT_UUID = 5,	/* uint64 parent_uuid */
	PF_TRACK_CHILD_ORDERING = 11,	/* ChildTracksOrdering child_ordering */
	PF_TRACK_SIBLING_RANK = 12,	/* int32 sibling_order_rank */
	PF_CHILD_ORDERING_EXPLICIT = 3,	/* enum TrackDescriptor.ChildTracksOrdering */

	/* interned_data/interned_data.proto, message InternedData */
	PF_INTERNED_CATEGORIES = 1,	/* repeated EventCategory event_categories */
	PF_INTERNED_EVENT_NAMES = 2,	/* repeated EventName event_names */
	PF_INTERNED_ANNOT_NAMES = 3,	/* repeated DebugAnnotationName debug_annotation_names */
	PF_INTERNED_ANNOT_STRINGS = 29,	/* repeated InternedString debug_annotation_string_values */
	/*
	 * EventCategory and EventName (track_event.proto), DebugAnnotationName
	 * (debug_annotation.proto): uint64 iid = 1, string name = 2;
	 * InternedString (profiling/profile_common.proto): iid = 1, bytes str = 2.
	 */
	PF_ENTRY_IID = 1,
	PF_ENTRY_NAME = 2,
};

/*
 * Track uuids are small so that each event's track_uuid takes 1-2 bytes:
 * the file has one producer, and other producers' uuids are 64-bit hashes.
 * Tasks, once recorded, get their own range above the vCPUs'.
 */
#define PERFETTO_SEQUENCE_ID	1
#define PERFETTO_UUID_GUEST	1
#define PERFETTO_UUID_TASKS	2		/* "guest tasks", the parent of every task's track */
#define PERFETTO_UUID_VCPU0	16
#define PERFETTO_UUID_TASK0	(1u << 17)	/* + pid (at most 4,194,304: RING_PID_MAX) */
#define PERFETTO_MAX_CPUS	65536	/* ring_event.cpu is 16 bits */

/* Interned once in the first packet; the iids the events use. */
enum { PERFETTO_CAT_FUNCTION = 1, PERFETTO_CAT_KVM = 2 };
enum {
	PERFETTO_ANN_PARENT = 1, PERFETTO_ANN_IRQS_OFF = 2, PERFETTO_ANN_ARGS = 3, PERFETTO_ANN_CPU = 4,
	PERFETTO_ANN_COMM = 5, PERFETTO_ANN_RETVAL = 6, PERFETTO_ANN_UNRETURNED = 7,
};
static const char *const perfetto_categories[] = { "function", "kvm" };
static const char *const perfetto_annotations[] = { "parent", "irqs_off", "args", "cpu", "comm", "retval",
						    "return_not_recorded" };

/* Where an event's name comes from. */
enum { PERFETTO_NAME_NONE, PERFETTO_NAME_FUNC, PERFETTO_NAME_GIVEN };
/* Which annotations an event carries (bits). */
#define PERFETTO_WITH_PARENT	0x1
#define PERFETTO_WITH_IRQS_OFF	0x2
#define PERFETTO_WITH_ARGS	0x4	/* the event's fields as text (VM events; --args) */
#define PERFETTO_WITH_RETVAL	0x8	/* the return value, with --retval */
#define PERFETTO_WITH_UNRETURNED 0x10	/* the slice ends where its task was seen past it */

static const struct perfetto_kind_desc {
	uint8_t type;		/* TrackEvent.Type */
	uint8_t name;		/* PERFETTO_NAME_* */
	uint8_t category;	/* category iid, 0 for none */
	uint8_t with;		/* PERFETTO_WITH_* */
} perfetto_kinds[TRACE_PERFETTO_NKINDS] = {
	[TRACE_PERFETTO_FUNC_ENTRY] = { PF_TYPE_INSTANT, PERFETTO_NAME_FUNC, PERFETTO_CAT_FUNCTION,
					PERFETTO_WITH_PARENT | PERFETTO_WITH_IRQS_OFF | PERFETTO_WITH_ARGS },
	[TRACE_PERFETTO_FUNC_BEGIN] = { PF_TYPE_SLICE_BEGIN, PERFETTO_NAME_FUNC, PERFETTO_CAT_FUNCTION,
					PERFETTO_WITH_PARENT | PERFETTO_WITH_IRQS_OFF | PERFETTO_WITH_ARGS },
	/* An end closes the innermost open slice of its track: no name needed. */
	[TRACE_PERFETTO_FUNC_END] = { PF_TYPE_SLICE_END, PERFETTO_NAME_NONE, 0, PERFETTO_WITH_RETVAL },
	[TRACE_PERFETTO_FUNC_UNRETURNED] = { PF_TYPE_SLICE_END, PERFETTO_NAME_NONE, 0, PERFETTO_WITH_UNRETURNED },
	[TRACE_PERFETTO_VM_EVENT] = { PF_TYPE_INSTANT, PERFETTO_NAME_GIVEN, PERFETTO_CAT_KVM,
				      PERFETTO_WITH_ARGS },
};

struct trace_writer {
	FILE *out;
	struct trace_meta meta;
	struct protobuf_buf pkt;	/* the TracePacket being built */
	/* Event names by function address and by VM event name pointer. */
	struct perfetto_intern func_names, given_names;
	struct perfetto_intern callers;	/* annotation strings by return address */
	uint64_t next_name_iid, next_string_iid;
	uint8_t described[PERFETTO_MAX_CPUS / 8];	/* vCPUs whose track is written */
	/* Tasks whose track is written: pid -> a hash of the comm it was named with. */
	struct perfetto_intern tasks;
	struct perfetto_intern comms;	/* annotation strings by comm hash */
	struct perfetto_calls calls;	/* --graph: each track's open slices */
	int error;			/* errno of the first failure */
};

/* Appends the finished packet to the file as one `Trace.packet` field. */
static int perfetto_write_packet(struct trace_writer *w)
{
	uint8_t hdr[1 + PROTOBUF_VARINT_MAX];
	size_t n;

	if (w->pkt.error && !w->error)
		w->error = w->pkt.error;
	if (w->error)
		return -w->error;
	hdr[0] = PF_TRACE_PACKET << 3 | PROTOBUF_WIRE_LEN;
	n = 1 + protobuf_varint_encode(hdr + 1, w->pkt.len);
	if (fwrite(hdr, 1, n, w->out) != n || fwrite(w->pkt.data, 1, w->pkt.len, w->out) != w->pkt.len)
		w->error = errno ? errno : EIO;
	protobuf_buf_reset(&w->pkt);
	return -w->error;
}

/* An InternedData entry: EventCategory, EventName, DebugAnnotationName, InternedString. */
static void perfetto_put_entry(struct protobuf_buf *b, uint32_t field, uint64_t iid, const char *name)
{
	size_t m = protobuf_begin_message(b, field);

	protobuf_put_uint(b, PF_ENTRY_IID, iid);
	protobuf_put_string(b, PF_ENTRY_NAME, name);
	protobuf_end_message(b, m);
}

/*
 * The first packet: clears the sequence's incremental state, interns the
 * fixed categories and annotation names, and describes the guest's track,
 * the parent of every vCPU track.
 */
static int perfetto_write_start(struct trace_writer *w)
{
	struct protobuf_buf *b = &w->pkt;
	size_t m;

	protobuf_put_uint(b, PF_PACKET_SEQUENCE_ID, PERFETTO_SEQUENCE_ID);
	protobuf_put_uint(b, PF_PACKET_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
	m = protobuf_begin_message(b, PF_PACKET_INTERNED_DATA);
	for (unsigned i = 0; i < sizeof(perfetto_categories) / sizeof(perfetto_categories[0]); i++)
		perfetto_put_entry(b, PF_INTERNED_CATEGORIES, i + 1, perfetto_categories[i]);
	for (unsigned i = 0; i < sizeof(perfetto_annotations) / sizeof(perfetto_annotations[0]); i++)
		perfetto_put_entry(b, PF_INTERNED_ANNOT_NAMES, i + 1, perfetto_annotations[i]);
	protobuf_end_message(b, m);
	m = protobuf_begin_message(b, PF_PACKET_TRACK_DESCRIPTOR);
	protobuf_put_uint(b, PF_TRACK_UUID, PERFETTO_UUID_GUEST);
	protobuf_put_string(b, PF_TRACK_NAME, "guest kernel");
	/* vCPU 10 after vCPU 9, not after vCPU 1. */
	protobuf_put_uint(b, PF_TRACK_CHILD_ORDERING, PF_CHILD_ORDERING_EXPLICIT);
	protobuf_end_message(b, m);
	return perfetto_write_packet(w);
}

/* The vCPU's track, written once, before its first event (or at open). */
static int perfetto_describe_cpu(struct trace_writer *w, unsigned cpu)
{
	struct protobuf_buf *b = &w->pkt;
	char name[32];
	size_t m;

	if (w->described[cpu / 8] & (1u << (cpu % 8)))
		return 0;
	w->described[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
	snprintf(name, sizeof(name), "vCPU %u", cpu);
	protobuf_put_uint(b, PF_PACKET_SEQUENCE_ID, PERFETTO_SEQUENCE_ID);
	m = protobuf_begin_message(b, PF_PACKET_TRACK_DESCRIPTOR);
	protobuf_put_uint(b, PF_TRACK_UUID, PERFETTO_UUID_VCPU0 + (uint64_t)cpu);
	protobuf_put_uint(b, PF_TRACK_PARENT_UUID, PERFETTO_UUID_GUEST);
	protobuf_put_string(b, PF_TRACK_NAME, name);
	protobuf_put_int(b, PF_TRACK_SIBLING_RANK, cpu);
	protobuf_end_message(b, m);
	return perfetto_write_packet(w);
}

/*
 * The track of an event: its task's when the stub read one other than a
 * CPU's idle or boot task (pid 0), else its vCPU's (idle, boot before the
 * tasks, unknown tasks, VM events).
 */
uint64_t trace_perfetto_track(const struct ring_event *ev)
{
	if (!vmev_is(ev) && (ev->flags & VT_REC_FLAG_TASK) && ev->pid > 0 && ev->pid <= RING_PID_MAX)
		return PERFETTO_UUID_TASK0 + (uint64_t)ev->pid;
	return PERFETTO_UUID_VCPU0 + (uint64_t)ev->cpu;
}

static uint64_t perfetto_comm_hash(const char *comm, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len && comm[i]; i++)
		h = (h ^ (uint8_t)comm[i]) * 1099511628211ull;
	return h | 1;	/* never 0: 0 marks an empty slot */
}

/*
 * A task's track, "comm-pid" as the text's TASK-PID column with the comm
 * of its first event, written once before that event. Sets *renamed when
 * the event's comm is another (exec, prctl): the event then says its comm.
 */
static int perfetto_describe_task(struct trace_writer *w, const struct ring_event *ev, int *renamed)
{
	struct protobuf_buf *b = &w->pkt;
	uint64_t h = perfetto_comm_hash(ev->comm, sizeof(ev->comm)), key = (uint64_t)ev->pid;
	char name[40];
	size_t s, m;
	int rc;

	*renamed = 0;
	if (w->tasks.mask) {
		s = perfetto_intern_slot(&w->tasks, key);
		if (w->tasks.iids[s]) {
			*renamed = w->tasks.iids[s] != h;
			return 0;
		}
	}
	if (!w->tasks.count) {
		/* The parent of every task's track, before the first. */
		protobuf_put_uint(b, PF_PACKET_SEQUENCE_ID, PERFETTO_SEQUENCE_ID);
		m = protobuf_begin_message(b, PF_PACKET_TRACK_DESCRIPTOR);
		protobuf_put_uint(b, PF_TRACK_UUID, PERFETTO_UUID_TASKS);
		protobuf_put_string(b, PF_TRACK_NAME, "guest tasks");
		protobuf_put_uint(b, PF_TRACK_CHILD_ORDERING, PF_CHILD_ORDERING_EXPLICIT);
		protobuf_end_message(b, m);
		if ((rc = perfetto_write_packet(w)))
			return rc;
	}
	if ((w->tasks.count + 1) * 2 > w->tasks.mask && perfetto_intern_grow(&w->tasks))
		return -ENOMEM;
	s = perfetto_intern_slot(&w->tasks, key);
	w->tasks.count++;
	w->tasks.keys[s] = key;
	w->tasks.iids[s] = h;
	snprintf(name, sizeof(name), "%.16s-%d", ev->comm, (int)ev->pid);
	protobuf_put_uint(b, PF_PACKET_SEQUENCE_ID, PERFETTO_SEQUENCE_ID);
	m = protobuf_begin_message(b, PF_PACKET_TRACK_DESCRIPTOR);
	protobuf_put_uint(b, PF_TRACK_UUID, PERFETTO_UUID_TASK0 + key);
	protobuf_put_uint(b, PF_TRACK_PARENT_UUID, PERFETTO_UUID_TASKS);
	protobuf_put_string(b, PF_TRACK_NAME, name);
	protobuf_put_int(b, PF_TRACK_SIBLING_RANK, (int64_t)key);	/* by pid */
	protobuf_end_message(b, m);
	return perfetto_write_packet(w);
}

/* A symbol's name when addr lies inside it (the nearest symbol can be far off). */
static const char *perfetto_sym(const struct trace_writer *w, uint64_t addr, uint64_t *off)
{
	const struct symtab *syms = w->meta.syms;
	const struct symbol *s = syms ? symtab_find_addr(syms, addr, off) : NULL;

	if (!s || *off >= symtab_extent(syms, s))
		return NULL;
	return symtab_name(syms, s);
}

/*
 * Names as trace-text.c gives them: a traced function is its symbol only
 * at the symbol's first byte (the slot), a caller is the symbol its return
 * address lies in; anything else is the address in hexadecimal.
 */
static const char *perfetto_func_name(const struct trace_writer *w, uint64_t addr, char buf[32])
{
	uint64_t off;
	const char *name = perfetto_sym(w, addr, &off);

	if (name && !off)
		return name;
	snprintf(buf, 32, "0x%" PRIx64, addr);
	return buf;
}

static const char *perfetto_caller_name(const struct trace_writer *w, uint64_t addr, char buf[32])
{
	uint64_t off;
	const char *name = perfetto_sym(w, addr, &off);

	if (name)
		return name;
	snprintf(buf, 32, "0x%" PRIx64, addr);
	return buf;
}

/* An event's interned ids, and the strings to intern with it when new. */
struct perfetto_names {
	uint64_t name_iid, caller_iid;
	const char *new_name, *new_caller;
	char name_buf[32], caller_buf[32];
	const char *args;		/* PERFETTO_WITH_ARGS: the fields as text */
	uint64_t comm_iid;		/* a renamed task's comm, 0: none */
	char new_comm[17];		/* to intern with the event, "" when known */
};

static int perfetto_resolve(struct trace_writer *w, const struct perfetto_kind_desc *k,
			    const struct ring_event *ev, const char *given, struct perfetto_names *n)
{
	int fresh, rc = 0;

	if (k->name == PERFETTO_NAME_FUNC) {
		rc = perfetto_intern(&w->func_names, ev->func, &w->next_name_iid, &n->name_iid, &fresh);
		if (!rc && fresh)
			n->new_name = perfetto_func_name(w, ev->func, n->name_buf);
	} else if (k->name == PERFETTO_NAME_GIVEN) {
		rc = perfetto_intern(&w->given_names, (uintptr_t)given, &w->next_name_iid,
				     &n->name_iid, &fresh);
		if (!rc && fresh)
			n->new_name = given;
	}
	if (!rc && (k->with & PERFETTO_WITH_PARENT)) {
		rc = perfetto_intern(&w->callers, ev->parent, &w->next_string_iid, &n->caller_iid, &fresh);
		if (!rc && fresh)
			n->new_caller = perfetto_caller_name(w, ev->parent, n->caller_buf);
	}
	return rc;
}

static void perfetto_put_annotation(struct protobuf_buf *b, uint64_t name_iid, uint32_t field,
				    uint64_t value)
{
	size_t m = protobuf_begin_message(b, PF_EVENT_ANNOTATIONS);

	protobuf_put_uint(b, PF_ANNOT_NAME_IID, name_iid);
	protobuf_put_uint(b, field, value);
	protobuf_end_message(b, m);
}

static void perfetto_put_event(struct trace_writer *w, const struct perfetto_kind_desc *k,
			       const struct ring_event *ev, const struct perfetto_names *n)
{
	struct protobuf_buf *b = &w->pkt;
	size_t m;

	protobuf_put_uint(b, PF_PACKET_TIMESTAMP, trace_meta_ns(&w->meta, ev->tsc));
	protobuf_put_uint(b, PF_PACKET_SEQUENCE_ID, PERFETTO_SEQUENCE_ID);
	protobuf_put_uint(b, PF_PACKET_SEQUENCE_FLAGS, PF_SEQ_NEEDS_INCREMENTAL_STATE);
	if (n->new_name || n->new_caller || *n->new_comm) {
		m = protobuf_begin_message(b, PF_PACKET_INTERNED_DATA);
		if (n->new_name)
			perfetto_put_entry(b, PF_INTERNED_EVENT_NAMES, n->name_iid, n->new_name);
		if (n->new_caller)
			perfetto_put_entry(b, PF_INTERNED_ANNOT_STRINGS, n->caller_iid, n->new_caller);
		if (*n->new_comm)
			perfetto_put_entry(b, PF_INTERNED_ANNOT_STRINGS, n->comm_iid, n->new_comm);
		protobuf_end_message(b, m);
	}
	m = protobuf_begin_message(b, PF_PACKET_TRACK_EVENT);
	protobuf_put_uint(b, PF_EVENT_TYPE, k->type);
	protobuf_put_uint(b, PF_EVENT_TRACK_UUID, trace_perfetto_track(ev));
	if (k->category)
		protobuf_put_uint(b, PF_EVENT_CATEGORY_IIDS, k->category);
	if (k->name != PERFETTO_NAME_NONE)
		protobuf_put_uint(b, PF_EVENT_NAME_IID, n->name_iid);
	if (k->with & PERFETTO_WITH_PARENT)
		perfetto_put_annotation(b, PERFETTO_ANN_PARENT, PF_ANNOT_STRING_IID, n->caller_iid);
	if ((k->with & PERFETTO_WITH_ARGS) && n->args) {
		size_t a = protobuf_begin_message(b, PF_EVENT_ANNOTATIONS);

		protobuf_put_uint(b, PF_ANNOT_NAME_IID, PERFETTO_ANN_ARGS);
		protobuf_put_string(b, PF_ANNOT_STRING, n->args);
		protobuf_end_message(b, a);
	}
	if (k->with & PERFETTO_WITH_IRQS_OFF)
		perfetto_put_annotation(b, PERFETTO_ANN_IRQS_OFF, PF_ANNOT_BOOL,
					!!(ev->flags & VT_REC_FLAG_IRQS_OFF));
	if (trace_perfetto_track(ev) != PERFETTO_UUID_VCPU0 + (uint64_t)ev->cpu)
		perfetto_put_annotation(b, PERFETTO_ANN_CPU, PF_ANNOT_UINT, ev->cpu);	/* a task's track: where it ran */
	if (n->comm_iid)
		perfetto_put_annotation(b, PERFETTO_ANN_COMM, PF_ANNOT_STRING_IID, n->comm_iid);
	if ((k->with & PERFETTO_WITH_RETVAL) && w->meta.graph_retval)
		perfetto_put_annotation(b, PERFETTO_ANN_RETVAL, PF_ANNOT_UINT, ev->retval);
	if (k->with & PERFETTO_WITH_UNRETURNED)
		perfetto_put_annotation(b, PERFETTO_ANN_UNRETURNED, PF_ANNOT_BOOL, 1);
	protobuf_end_message(b, m);
}

static int perfetto_emit(struct trace_writer *w, enum trace_perfetto_kind kind,
			 const struct ring_event *ev, const char *name, const char *args)
{
	const struct perfetto_kind_desc *k;
	struct perfetto_names n = { .args = args };
	int rc;

	if ((unsigned)kind >= TRACE_PERFETTO_NKINDS)
		return -EINVAL;
	k = &perfetto_kinds[kind];
	if (k->name == PERFETTO_NAME_GIVEN && !name)
		return -EINVAL;
	if (w->error)
		return -w->error;
	rc = perfetto_describe_cpu(w, ev->cpu);
	if (!rc && trace_perfetto_track(ev) != PERFETTO_UUID_VCPU0 + (uint64_t)ev->cpu) {
		int renamed, fresh;

		rc = perfetto_describe_task(w, ev, &renamed);
		if (!rc && renamed) {
			rc = perfetto_intern(&w->comms, perfetto_comm_hash(ev->comm, sizeof(ev->comm)),
					     &w->next_string_iid, &n.comm_iid, &fresh);
			if (!rc && fresh)
				snprintf(n.new_comm, sizeof(n.new_comm), "%.16s", ev->comm);
		}
	}
	if (!rc)
		rc = perfetto_resolve(w, k, ev, name, &n);
	if (rc) {
		if (!w->error)
			w->error = -rc;
		return rc;
	}
	perfetto_put_event(w, k, ev, &n);
	return perfetto_write_packet(w);
}

int trace_perfetto_emit(struct trace_writer *w, enum trace_perfetto_kind kind,
			const struct ring_event *ev, const char *name)
{
	return perfetto_emit(w, kind, ev, name, NULL);
}

/*
 * A VM event: an instant named after its kind ("kvm:pio") on its vCPU's
 * track, its fields and guest RIP as the text writer prints them after
 * the tracepoint's name, in an "args" annotation.
 */
static int perfetto_vm_event(struct trace_writer *w, const struct ring_event *ev)
{
	static const char unknown[] = "kvm:unknown";
	const char *name = vmev_name(vmev_kind_of(ev));
	char text[256], args[320];
	const char *fields = text, *colon;
	uint64_t off;
	const char *sym = perfetto_sym(w, ev->func, &off), *caller = NULL;
	char cbuf[24];
	size_t len;

	if (vmev_kind_of(ev) == VMEV_MSR && vmev_msr_caller(ev)) {
		uint64_t coff;

		if (!(caller = perfetto_sym(w, vmev_msr_caller(ev), &coff))) {
			snprintf(cbuf, sizeof(cbuf), "0x%" PRIx64, vmev_msr_caller(ev));
			caller = cbuf;
		}
	}

	vmev_format(ev, text, sizeof(text));
	/* The kernel's kvm_pio leaves a space for its "(...)" of a rep's values. */
	for (len = strlen(text); len && text[len - 1] == ' '; len--)
		text[len - 1] = 0;
	colon = strstr(text, ": ");
	if (colon)
		fields = colon + 2;	/* the name is the event's own */
	if (vmev_kind_of(ev) == VMEV_CPUID)
		snprintf(args, sizeof(args), "%s", fields);
	else if (sym)
		snprintf(args, sizeof(args), "%s [%s+0x%" PRIx64 "%s%s]", fields, sym, off,
			 caller ? " <-" : "", caller ? caller : "");
	else
		snprintf(args, sizeof(args), "%s [0x%" PRIx64 "%s%s]", fields, ev->func,
			 caller ? " <-" : "", caller ? caller : "");
	return perfetto_emit(w, TRACE_PERFETTO_VM_EVENT, ev, name ? name : unknown, args);
}

static void perfetto_free(struct trace_writer *w)
{
	protobuf_buf_free(&w->pkt);
	perfetto_intern_free(&w->func_names);
	perfetto_intern_free(&w->given_names);
	perfetto_intern_free(&w->callers);
	perfetto_intern_free(&w->tasks);
	perfetto_intern_free(&w->comms);
	perfetto_calls_free(&w->calls);
	free(w);
}

static int perfetto_open(struct trace_writer **out_w, FILE *out, const struct trace_meta *meta,
			 struct errbuf *err)
{
	struct trace_writer *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return err_set(err, ENOMEM, "out of memory for the perfetto writer");
	w->out = out;
	w->meta = *meta;
	w->next_name_iid = w->next_string_iid = 1;
	protobuf_buf_init(&w->pkt);
	rc = perfetto_write_start(w);
	for (unsigned cpu = 0; !rc && cpu < meta->ncpus && cpu < PERFETTO_MAX_CPUS; cpu++)
		rc = perfetto_describe_cpu(w, cpu);
	if (rc) {
		perfetto_free(w);
		return err_set(err, -rc, "writing the perfetto trace's tracks: %s", strerror(-rc));
	}
	*out_w = w;
	return 0;
}

static int perfetto_event(struct trace_writer *w, const struct ring_event *ev)
{
	enum trace_perfetto_kind kind = TRACE_PERFETTO_FUNC_ENTRY;
	int rc;

	if (vmev_is(ev))
		return perfetto_vm_event(w, ev);
	/* --graph: a hooked call is a slice, which its return ends; any other entry an instant. */
	if (w->meta.graph && (ev->flags & (VT_REC_FLAG_HOOKED | VT_REC_FLAG_EXIT))) {
		if (w->meta.graph_depth && ev->depth >= w->meta.graph_depth)
			return 0;	/* as function_graph's max_graph_depth: not shown */
		if (ev->flags & VT_REC_FLAG_EXIT)
			return perfetto_calls_exit(w, &w->calls, ev);
		if ((rc = perfetto_calls_enter(w, &w->calls, ev)))
			return rc;
		kind = TRACE_PERFETTO_FUNC_BEGIN;
	}
	if (w->meta.fnargs && (ev->flags & VT_REC_FLAG_ARGS)) {
		/* --args: "(name=value, ...)" as the text writer prints it, in an "args" annotation. */
		struct kbtf_proto proto;
		uint64_t off;
		const char *sym = perfetto_sym(w, ev->func, &off);
		int known = fnargs_lookup(w->meta.fnargs, ev->func, sym && !off ? sym : NULL, &proto);
		char args[384];

		fnargs_format(known ? &proto : NULL, ev->args, args, sizeof(args));
		return perfetto_emit(w, kind, ev, NULL, args);
	}
	return trace_perfetto_emit(w, kind, ev, NULL);
}

static int perfetto_flush(struct trace_writer *w)
{
	if (fflush(w->out) && !w->error)
		w->error = errno ? errno : EIO;
	return -w->error;
}

static int perfetto_close(struct trace_writer *w, const struct trace_stats *st, struct errbuf *err)
{
	int rc = perfetto_flush(w);

	(void)st;
	perfetto_free(w);
	return rc ? err_set(err, -rc, "writing the perfetto trace: %s", strerror(-rc)) : 0;
}

const struct trace_writer_ops trace_writer_perfetto = {
	.name = "perfetto", .open = perfetto_open, .event = perfetto_event,
	.flush = perfetto_flush, .close = perfetto_close,
};
