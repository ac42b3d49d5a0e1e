// SPDX-License-Identifier: GPL-2.0
/*
 * The event records of a raw chunk (proto/raw.h) decoded into ring_events:
 * entries (with --args' registers and --graph's depths and returns), VM
 * events, and the sized records of later kinds, skipped. The bytes are
 * untrusted: every varint is bounded by the chunk, every value by what
 * the tracer could have written where a reader would index with it.
 */
#include <errno.h>
#include <string.h>

#include "vmm/output/raw-decode.h"
#include "vmm/output/raw.h"

/* A chunk's decoding state (proto/raw.h): deltas, each ring's last seq and task. */
struct raw_decode_state {
	uint64_t prev_tsc, prev_func, known, last_seq[RAW_SEQ_RINGS];
	uint64_t task_known;
	struct ring_event task[RAW_SEQ_RINGS];	/* task, pid, comm of the ring's last task */
};

/* The task fields of an entry with RAW_FLAG_NEW_TASK; NULL when malformed. */
static const uint8_t *raw_decode_task(const uint8_t *p, const uint8_t *end, struct ring_event *ev)
{
	uint64_t v;

	if (!(p = raw_get_varint(p, end, &v)))
		return NULL;
	ev->task = v;
	if (!(p = raw_get_varint(p, end, &v)) || v > RING_PID_MAX)
		return NULL;
	ev->pid = (int32_t)v;
	if (!(p = raw_get_varint(p, end, &v)) || v >= sizeof(ev->comm) || v > (uint64_t)(end - p))
		return NULL;
	memset(ev->comm, 0, sizeof(ev->comm));
	for (uint64_t i = 0; i < v; i++)
		ev->comm[i] = p[i] >= 0x20 && p[i] <= 0x7e ? (char)p[i] : '?';
	return p + v;
}

/*
 * The fields an entry's flags varint announces (proto/raw.h), up to its
 * times; an exit's length goes to ev->calltime until its tsc is known.
 * NULL when malformed.
 */
static const uint8_t *raw_decode_flags(const uint8_t *p, const uint8_t *end, struct ring_event *ev,
				       struct raw_decode_state *st, unsigned version)
{
	uint64_t v, flags;

	if (!(p = raw_get_varint(p, end, &flags)) || (flags & ~(uint64_t)(VT_REC_FLAGS_VALID | RAW_FLAG_NEW_TASK)))
		return NULL;
	ev->flags = (uint16_t)flags;
	if ((flags & RAW_FLAG_NEW_TASK) && !(flags & VT_REC_FLAG_TASK))
		return NULL;
	if (ev->flags & VT_REC_FLAG_CTX) {
		if (!(p = raw_get_varint(p, end, &v)) || v > UINT32_MAX)
			return NULL;
		ev->preempt = (uint32_t)v;
	}
	if (flags & RAW_FLAG_NEW_TASK) {
		if (!(p = raw_decode_task(p, end, ev)))
			return NULL;
		if (ev->ring < RAW_SEQ_RINGS) {
			st->task[ev->ring] = *ev;
			st->task_known |= 1ull << ev->ring;
		}
	} else if (ev->flags & VT_REC_FLAG_TASK) {
		/* The ring's task from an earlier record of this chunk. */
		if (ev->ring >= RAW_SEQ_RINGS || !(st->task_known & (1ull << ev->ring)))
			return NULL;
		ev->task = st->task[ev->ring].task;
		ev->pid = st->task[ev->ring].pid;
		memcpy(ev->comm, st->task[ev->ring].comm, sizeof(ev->comm));
	}
	if (ev->flags & VT_REC_FLAG_ARGS)
		for (unsigned i = 0; i < VT_REC_NARGS; i++)
			if (!(p = raw_get_varint(p, end, &ev->args[i])))
				return NULL;
	if (version < 4 || !(ev->flags & (VT_REC_FLAG_HOOKED | VT_REC_FLAG_EXIT)))
		return p;
	/* A depth the graph writer indexes with: never one a shadow stack cannot hold. */
	if (!(p = raw_get_varint(p, end, &v)) || v >= VT_SHADOW_FRAMES)
		return NULL;
	ev->depth = (uint32_t)v;
	if ((ev->flags & VT_REC_FLAG_EXIT) &&
	    (!(p = raw_get_varint(p, end, &ev->retval)) || !(p = raw_get_varint(p, end, &ev->calltime))))
		return NULL;
	return p;
}

/* Decodes one entry record's fields after its tag; NULL when malformed. */
static const uint8_t *raw_decode_entry(const uint8_t *p, const uint8_t *end, uint8_t tag,
				       struct ring_event *ev, struct raw_decode_state *st, unsigned version)
{
	uint64_t v, expect = 0;

	if (!(p = raw_get_varint(p, end, &v)) || v > UINT16_MAX)
		return NULL;
	ev->cpu = (uint16_t)v;
	ev->ring = ev->cpu;
	if (tag & RAW_REC_RING) {
		if (!(p = raw_get_varint(p, end, &v)) || v > UINT32_MAX)
			return NULL;
		ev->ring = (uint32_t)v;
	}
	ev->flags = (tag & RAW_REC_IRQS_OFF) ? VT_REC_FLAG_IRQS_OFF : 0;
	if ((tag & RAW_REC_FLAGS) && !(p = raw_decode_flags(p, end, ev, st, version)))
		return NULL;
	if (!(p = raw_get_varint(p, end, &v)))
		return NULL;
	ev->tsc = st->prev_tsc += raw_unzigzag(v);
	if (ev->flags & VT_REC_FLAG_EXIT)
		ev->calltime = ev->tsc - raw_unzigzag(ev->calltime);
	if (!(p = raw_get_varint(p, end, &v)))
		return NULL;
	ev->func = st->prev_func += raw_unzigzag(v);
	if (!(p = raw_get_varint(p, end, &v)))
		return NULL;
	ev->parent = ev->func + raw_unzigzag(v);
	if (!(p = raw_get_varint(p, end, &v)))
		return NULL;
	if (ev->ring < RAW_SEQ_RINGS && (st->known & (1ull << ev->ring)))
		expect = st->last_seq[ev->ring] + 1;
	ev->seq = expect + raw_unzigzag(v);
	if (ev->ring < RAW_SEQ_RINGS) {
		st->last_seq[ev->ring] = ev->seq;
		st->known |= 1ull << ev->ring;
	}
	return p;
}

/*
 * A VM event's body (proto/raw.h, RAW_REC_VMEV): 0, or -EINVAL unless it
 * decodes to exactly its length as a VM event.
 */
static int raw_decode_vmev(const uint8_t *p, const uint8_t *end, struct ring_event *ev,
			   uint64_t prev_tsc, uint64_t prev_func)
{
	uint64_t v[8];

	for (unsigned i = 0; i < 8; i++)
		if (!(p = raw_get_varint(p, end, &v[i])))
			return -EINVAL;
	if (p != end || v[0] > UINT16_MAX || v[1] > UINT32_MAX || v[2] > UINT16_MAX || !(v[2] & RING_EV_VM))
		return -EINVAL;
	ev->cpu = (uint16_t)v[0];
	ev->ring = (uint32_t)v[1];
	ev->flags = (uint16_t)v[2];
	ev->seq = v[3];
	ev->tsc = prev_tsc + raw_unzigzag(v[4]);
	ev->func = prev_func + raw_unzigzag(v[5]);
	ev->parent = v[6];
	ev->arg = v[7];
	return 0;
}

long raw_decode_records(const uint8_t *p, const uint8_t *end, uint32_t count, unsigned version,
			struct ring_event *out, uint64_t *skipped)
{
	struct raw_decode_state st;
	size_t n = 0;

	st.prev_tsc = st.prev_func = st.known = st.task_known = 0;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t tag;
		uint64_t len;

		if (p >= end)
			return -EINVAL;
		tag = *p++;
		if (tag & RAW_REC_SIZED) {
			if (!(p = raw_get_varint(p, end, &len)) || len > (uint64_t)(end - p))
				return -EINVAL;
			if ((tag & RAW_REC_KIND) == RAW_REC_VMEV) {
				memset(&out[n], 0, sizeof(out[n]));
				if (raw_decode_vmev(p, p + len, &out[n], st.prev_tsc, st.prev_func))
					return -EINVAL;
				n++;
			} else {
				(*skipped)++;
			}
			p += len;
		} else if ((tag & RAW_REC_KIND) == RAW_REC_ENTRY) {
			memset(&out[n], 0, sizeof(out[n]));
			p = raw_decode_entry(p, end, tag, &out[n], &st, version);
			if (!p)
				return -EINVAL;
			n++;
		} else {
			return -EINVAL;
		}
		if (p >= end && i + 1 < count)
			return -EINVAL;
	}
	return p == end ? (long)n : -EINVAL;
}
