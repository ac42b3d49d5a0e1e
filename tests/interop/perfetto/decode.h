/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A reader of Perfetto protobuf traces for tests, written apart from the
 * writer's encoder on purpose: a generic walk of the wire format (any
 * field, any wire type, every length checked against its container), then
 * an interpretation of the few Perfetto messages vmmtrace writes. Field
 * numbers are Perfetto's (vmm/output/perfetto.c names each one); they
 * are repeated here as bare numbers so that a wrong number in the writer
 * does not carry over into the reader.
 */
#ifndef TESTS_UNIT_PERFETTO_DECODE_H
#define TESTS_UNIT_PERFETTO_DECODE_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the wire format */

struct pbr {
	const uint8_t *p, *end;
};

struct pbr_field {
	uint32_t num;
	unsigned wire;
	uint64_t v;		/* varint, fixed64, fixed32 value; length of a LEN field */
	const uint8_t *data;	/* a LEN field's bytes */
	size_t len;
};

static int pbr_varint(struct pbr *r, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		if (r->p >= r->end)
			return -1;
		c = *r->p++;
		if (shift == 63 && c > 1)
			return -1;	/* more than 64 bits */
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static uint64_t pbr_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* 1: *f is the next field; 0: the message ends; -1: malformed. */
static int pbr_next(struct pbr *r, struct pbr_field *f)
{
	uint64_t key;

	if (r->p == r->end)
		return 0;
	if (pbr_varint(r, &key) || key >> 3 == 0 || key >> 3 > 0x1fffffff)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wire = key & 7;
	f->data = NULL;
	f->len = 0;
	switch (f->wire) {
	case 0:
		return pbr_varint(r, &f->v) ? -1 : 1;
	case 1:
	case 5: {
		unsigned n = f->wire == 1 ? 8 : 4;

		if ((size_t)(r->end - r->p) < n)
			return -1;
		f->v = pbr_le(r->p, n);
		r->p += n;
		return 1;
	}
	case 2:
		if (pbr_varint(r, &f->v) || f->v > (uint64_t)(r->end - r->p))
			return -1;
		f->data = r->p;
		f->len = (size_t)f->v;
		r->p += f->len;
		return 1;
	default:
		return -1;
	}
}

static struct pbr pbr_of(const struct pbr_field *f)
{
	return (struct pbr){ f->data, f->data + f->len };
}

/* ---- Perfetto's messages */

struct dec_table {		/* one interning index: iid -> string */
	char **v;
	size_t cap, entries;
};

struct dec_track {
	uint64_t uuid, parent;
	int has_parent, cpu;	/* cpu: from "vCPU N", -1 otherwise */
	long rank;
	uint64_t ordering;
	char *name;
};

struct dec_event {
	uint64_t ts;
	int cpu, type, irqs_off, has_irqs, has_parent;
	int cpu_ann;		/* the "cpu" annotation of a task's track event, -1: none */
	const char *track;	/* its track's name */
	const char *comm;	/* the "comm" annotation (a renamed task), NULL: none */
	const char *name, *category, *parent;
	char *args;		/* a VM event's "args" (string_value), owned */
	uint64_t retval;	/* a slice end's "retval" (--graph --retval) */
	int has_retval, unreturned;	/* unreturned: "return_not_recorded" */
};

struct dec_trace {
	struct dec_table names, cats, annots, strings;
	struct dec_track tracks[64];
	size_t ntracks, npackets, ndescriptor_packets;
	struct dec_event *ev;
	size_t nev, cap;
	uint64_t first_flags;	/* sequence_flags of the first packet */
	int bad_sequence;	/* packets without trusted_packet_sequence_id 1 */
	int events_without_needs_state;
	char why[256];		/* the first reason the trace is invalid */
};

static int dec_fail(struct dec_trace *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->why[0]) {
		va_start(ap, fmt);
		vsnprintf(t->why, sizeof(t->why), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int dec_table_set(struct dec_trace *t, struct dec_table *tab, const char *what,
			 const struct pbr_field *entry)
{
	struct pbr r = pbr_of(entry);
	struct pbr_field f;
	uint64_t iid = 0;
	char *s = NULL;
	int rc;

	while ((rc = pbr_next(&r, &f)) > 0) {
		if (f.num == 1 && f.wire == 0)
			iid = f.v;
		else if (f.num == 2 && f.wire == 2 && !s)
			s = strndup((const char *)f.data, f.len);
	}
	if (rc < 0 || !iid || !s || iid > 1000000) {
		free(s);
		return dec_fail(t, "%s: a malformed entry (iid %llu)", what, (unsigned long long)iid);
	}
	if (iid >= tab->cap) {
		size_t cap = iid * 2;
		char **v = realloc(tab->v, cap * sizeof(*v));

		if (!v)
			return dec_fail(t, "out of memory");
		memset(v + tab->cap, 0, (cap - tab->cap) * sizeof(*v));
		tab->v = v;
		tab->cap = cap;
	}
	if (tab->v[iid]) {
		free(s);
		return dec_fail(t, "%s: iid %llu interned twice", what, (unsigned long long)iid);
	}
	tab->v[iid] = s;
	tab->entries++;
	return 0;
}

static const char *dec_table_get(const struct dec_table *tab, uint64_t iid)
{
	return iid < tab->cap ? tab->v[iid] : NULL;
}

static int dec_interned(struct dec_trace *t, const struct pbr_field *field)
{
	struct pbr r = pbr_of(field);
	struct pbr_field f;
	int rc;

	while ((rc = pbr_next(&r, &f)) > 0) {
		struct dec_table *tab = f.num == 1 ? &t->cats : f.num == 2 ? &t->names :
					f.num == 3 ? &t->annots : f.num == 29 ? &t->strings : NULL;

		if (tab && (f.wire != 2 || dec_table_set(t, tab, "InternedData", &f)))
			return dec_fail(t, "InternedData field %u is malformed", f.num);
	}
	return rc < 0 ? dec_fail(t, "InternedData is malformed") : 0;
}

static int dec_descriptor(struct dec_trace *t, const struct pbr_field *field)
{
	struct dec_track *k = &t->tracks[t->ntracks];
	struct pbr r = pbr_of(field);
	struct pbr_field f;
	int rc;

	if (t->ntracks == sizeof(t->tracks) / sizeof(t->tracks[0]))
		return dec_fail(t, "too many tracks");
	memset(k, 0, sizeof(*k));
	k->cpu = -1;
	while ((rc = pbr_next(&r, &f)) > 0) {
		if (f.num == 1 && f.wire == 0)
			k->uuid = f.v;
		else if (f.num == 5 && f.wire == 0)
			k->parent = f.v, k->has_parent = 1;
		else if (f.num == 2 && f.wire == 2)
			k->name = strndup((const char *)f.data, f.len);
		else if (f.num == 11 && f.wire == 0)
			k->ordering = f.v;
		else if (f.num == 12 && f.wire == 0)
			k->rank = (long)(int64_t)f.v;
	}
	if (rc < 0 || !k->uuid || !k->name)
		return dec_fail(t, "a TrackDescriptor is malformed or has no uuid or name");
	for (size_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].uuid == k->uuid)
			return dec_fail(t, "track uuid %llu described twice", (unsigned long long)k->uuid);
	if (sscanf(k->name, "vCPU %d", &k->cpu) != 1)
		k->cpu = -1;
	t->ntracks++;
	return 0;
}

static const struct dec_track *dec_track_find(const struct dec_trace *t, uint64_t uuid)
{
	for (size_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].uuid == uuid)
			return &t->tracks[i];
	return NULL;
}

/*
 * One DebugAnnotation: "parent" and "comm" (interned strings), "irqs_off"
 * and "return_not_recorded" (bool), "args" (string), "cpu" and "retval" (uint).
 */
static int dec_annotation(struct dec_trace *t, const struct pbr_field *field, struct dec_event *e)
{
	struct pbr r = pbr_of(field);
	struct pbr_field f;
	uint64_t name_iid = 0, str_iid = 0, bval = 0, uval = 0;
	int rc, has_str = 0, has_bool = 0, has_uint = 0;
	struct pbr_field sval = { 0 };
	const char *name;

	while ((rc = pbr_next(&r, &f)) > 0) {
		if (f.num == 1 && f.wire == 0)
			name_iid = f.v;
		else if (f.num == 17 && f.wire == 0)
			str_iid = f.v, has_str = 1;
		else if (f.num == 2 && f.wire == 0)
			bval = f.v, has_bool = 1;
		else if (f.num == 3 && f.wire == 0)
			uval = f.v, has_uint = 1;
		else if (f.num == 6 && f.wire == 2)
			sval = f;
	}
	name = dec_table_get(&t->annots, name_iid);
	if (rc < 0 || !name)
		return dec_fail(t, "an annotation is malformed or its name iid %llu unknown",
				(unsigned long long)name_iid);
	if (!strcmp(name, "parent") && has_str && dec_table_get(&t->strings, str_iid)) {
		e->parent = dec_table_get(&t->strings, str_iid);
		e->has_parent = 1;
	} else if (!strcmp(name, "comm") && has_str && dec_table_get(&t->strings, str_iid) && !e->comm) {
		e->comm = dec_table_get(&t->strings, str_iid);
	} else if (!strcmp(name, "cpu") && has_uint && uval < 65536 && e->cpu_ann < 0) {
		e->cpu_ann = (int)uval;
	} else if (!strcmp(name, "irqs_off") && has_bool && bval <= 1) {
		e->irqs_off = (int)bval;
		e->has_irqs = 1;
	} else if (!strcmp(name, "retval") && has_uint && !e->has_retval) {
		e->retval = uval;
		e->has_retval = 1;
	} else if (!strcmp(name, "return_not_recorded") && has_bool && bval == 1) {
		e->unreturned = 1;
	} else if (!strcmp(name, "args") && sval.data && !e->args) {
		if (!(e->args = strndup((const char *)sval.data, sval.len)))
			return dec_fail(t, "out of memory");
	} else {
		return dec_fail(t, "annotation %s has no valid value", name);
	}
	return 0;
}

static int dec_track_event_into(struct dec_trace *t, const struct pbr_field *field, struct dec_event *ep);

static int dec_track_event(struct dec_trace *t, const struct pbr_field *field, uint64_t ts)
{
	struct dec_event e = { .ts = ts, .cpu = -1, .cpu_ann = -1 };
	int rc = dec_track_event_into(t, field, &e);

	if (rc)
		free(e.args);	/* a kept event owns it */
	return rc;
}

static int dec_track_event_into(struct dec_trace *t, const struct pbr_field *field, struct dec_event *e)
{
	struct pbr r = pbr_of(field);
	struct pbr_field f;
	const struct dec_track *k = NULL;
	int rc;

	while ((rc = pbr_next(&r, &f)) > 0) {
		if (f.num == 9 && f.wire == 0)
			e->type = (int)f.v;
		else if (f.num == 11 && f.wire == 0 && !(k = dec_track_find(t, f.v)))
			return dec_fail(t, "an event on undescribed track %llu", (unsigned long long)f.v);
		else if (f.num == 3 && f.wire == 0 && !(e->category = dec_table_get(&t->cats, f.v)))
			return dec_fail(t, "unknown category iid %llu", (unsigned long long)f.v);
		else if (f.num == 10 && f.wire == 0 && !(e->name = dec_table_get(&t->names, f.v)))
			return dec_fail(t, "unknown event name iid %llu", (unsigned long long)f.v);
		else if (f.num == 4 && f.wire == 2 && dec_annotation(t, &f, e))
			return -1;
	}
	if (rc < 0 || !k || !e->type)
		return dec_fail(t, "a TrackEvent is malformed or has no track or type");
	/* A vCPU's track says the CPU; a task's track event says it in its "cpu" annotation. */
	if (k->cpu >= 0 && e->cpu_ann >= 0)
		return dec_fail(t, "a \"cpu\" annotation on vCPU %d's track", k->cpu);
	e->cpu = k->cpu >= 0 ? k->cpu : e->cpu_ann;
	e->track = k->name;
	if (t->nev == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct dec_event *v = realloc(t->ev, cap * sizeof(*v));

		if (!v)
			return dec_fail(t, "out of memory");
		t->ev = v;
		t->cap = cap;
	}
	t->ev[t->nev++] = *e;
	return 0;
}

/* One TracePacket: its interned data first, as trace_processor reads it. */
static int dec_packet(struct dec_trace *t, const struct pbr_field *packet)
{
	struct pbr r = pbr_of(packet);
	struct pbr_field f, event = { 0 }, desc = { 0 };
	uint64_t ts = 0, seq = 0, flags = 0;
	int rc, has_ts = 0;

	while ((rc = pbr_next(&r, &f)) > 0) {
		if (f.num == 8 && f.wire == 0)
			ts = f.v, has_ts = 1;
		else if (f.num == 10 && f.wire == 0)
			seq = f.v;
		else if (f.num == 13 && f.wire == 0)
			flags = f.v;
		else if (f.num == 12 && f.wire == 2 && dec_interned(t, &f))
			return -1;
		else if (f.num == 11 && f.wire == 2)
			event = f;
		else if (f.num == 60 && f.wire == 2)
			desc = f;
	}
	if (rc < 0)
		return dec_fail(t, "packet %zu is malformed", t->npackets);
	if (!t->npackets)
		t->first_flags = flags;
	t->npackets++;
	t->bad_sequence += seq != 1;
	if (desc.data && event.data)
		return dec_fail(t, "packet %zu has both an event and a track descriptor", t->npackets);
	if (desc.data) {
		t->ndescriptor_packets++;
		return dec_descriptor(t, &desc);
	}
	if (!event.data)
		return 0;
	if (!has_ts)
		return dec_fail(t, "an event packet without a timestamp");
	t->events_without_needs_state += !(flags & 2);
	return dec_track_event(t, &event, ts);
}

/* Parses a whole `Trace`: 0, or -1 with t->why set. */
static int dec_trace_parse(struct dec_trace *t, const uint8_t *data, size_t len)
{
	struct pbr r = { data, data + len };
	struct pbr_field f;
	int rc;

	memset(t, 0, sizeof(*t));
	while ((rc = pbr_next(&r, &f)) > 0) {
		if (f.num != 1 || f.wire != 2)
			return dec_fail(t, "a top-level field %u (wire %u), not packet = 1", f.num, f.wire);
		if (dec_packet(t, &f))
			return -1;
	}
	return rc < 0 ? dec_fail(t, "the Trace message is malformed after %zu packets", t->npackets) : 0;
}

static void dec_table_free(struct dec_table *tab)
{
	for (size_t i = 0; i < tab->cap; i++)
		free(tab->v[i]);
	free(tab->v);
}

static void dec_trace_free(struct dec_trace *t)
{
	dec_table_free(&t->names);
	dec_table_free(&t->cats);
	dec_table_free(&t->annots);
	dec_table_free(&t->strings);
	for (size_t i = 0; i < t->ntracks; i++)
		free(t->tracks[i].name);
	for (size_t i = 0; i < t->nev; i++)
		free(t->ev[i].args);
	free(t->ev);
}

#endif
