// SPDX-License-Identifier: GPL-2.0
/*
 * The raw writer: vmmtrace's own chunks (proto/raw.h). Each chunk goes to
 * the FILE in one fwrite once whole, so a kill leaves whole chunks and at
 * most one partial one at the end, which the reader recognises as the cut.
 * Events are encoded into one chunk buffer; flush() closes it, so what the
 * tracer flushed after a round survives the process. Each closed chunk is
 * also handed to the kernel at once (fflush), not left partly in stdio's
 * buffer: a process that dies (SIGKILL, a fault) loses only the open chunk,
 * and the file ends at a chunk boundary unless it died inside that write.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vmm/output/raw.h"

struct trace_writer {
	FILE *out;
	uint8_t *buf;			/* chunk header, raw_events, records */
	uint8_t *pos;			/* next record byte */
	uint8_t *limit;			/* close the chunk before a record starts past it */
	uint32_t count;			/* records in the open chunk */
	uint64_t seq;			/* next chunk's sequence number */
	/* The open chunk's delta state (proto/raw.h). */
	uint64_t prev_tsc, prev_func;
	uint64_t seq_known;		/* bit r: last_seq[r] holds ring r's previous seq */
	uint64_t last_seq[RAW_SEQ_RINGS];
	uint64_t task_known;		/* bit r: task[r] holds ring r's last task in the chunk */
	struct raw_task { uint64_t task; int32_t pid; char comm[16]; } task[RAW_SEQ_RINGS];
	uint64_t events, event_chunks;
	int error;			/* errno of the first failed write */
	/* --args: the prototypes, and the functions whose prototype the file has (a set). */
	struct fnargs *fnargs;
	const struct symtab *syms;
	uint64_t *told;
	size_t told_cap, told_used;
};

#define RAW_EVENTS_OFF	(sizeof(struct raw_chunk) + sizeof(struct raw_events))

uint32_t raw_chunk_hdr_crc(const struct raw_chunk *c)
{
	return (uint32_t)crc32(0, (const Bytef *)c, offsetof(struct raw_chunk, hdr_crc));
}

void raw_chunk_seal(struct raw_chunk *c, uint16_t type, uint64_t seq, const void *payload,
		    uint32_t len)
{
	memset(c, 0, sizeof(*c));
	c->magic = RAW_MAGIC;
	c->version = RAW_VERSION;
	c->type = type;
	c->length = len;
	c->payload_crc = (uint32_t)crc32(0, (const Bytef *)payload, len);
	c->seq = seq;
	c->hdr_crc = raw_chunk_hdr_crc(c);
}

static int raw_write(struct trace_writer *w, const void *data, size_t len)
{
	if (!w->error && len && fwrite(data, 1, len, w->out) != len)
		w->error = errno ? errno : EIO;
	return -w->error;
}

/* Writes one chunk whose payload is separate from its header. */
static int raw_write_chunk(struct trace_writer *w, uint16_t type, const void *payload, size_t len)
{
	struct raw_chunk c;

	if (len > RAW_MAX_PAYLOAD)
		return -E2BIG;
	raw_chunk_seal(&c, type, w->seq++, payload, (uint32_t)len);
	raw_write(w, &c, sizeof(c));
	return raw_write(w, payload, len);
}

static int raw_write_header(struct trace_writer *w, const struct trace_meta *meta)
{
	size_t klen = meta->kernel ? strlen(meta->kernel) : 0;
	struct raw_header *h;
	int rc;

	if (klen > 4096)
		klen = 4096;	/* a path, for the record: the start of a long one is enough */
	h = calloc(1, sizeof(*h) + klen);
	if (!h)
		return -ENOMEM;
	h->tsc_khz = meta->tsc_khz;
	h->tsc_base = meta->tsc_base;
	h->ncpus = meta->ncpus;
	h->kernel_len = (uint32_t)klen;
	h->graph = (meta->graph ? RAW_GRAPH_ON : 0) | (meta->graph_retval ? RAW_GRAPH_RETVAL : 0);
	h->graph_depth = meta->graph_depth;
	if (klen)
		memcpy(h + 1, meta->kernel, klen);
	rc = raw_write_chunk(w, RAW_CHUNK_HEADER, h, sizeof(*h) + klen);
	free(h);
	return rc;
}

/*
 * Every symbol, not only the functions: the text writer names an address
 * by the nearest symbol of any type and bounds it by the next one, so only
 * the whole table makes a converted trace read exactly as the live one.
 * Deflate keeps it small: the lean kernel's 23,600 symbols take 205 KB,
 * written once, before the first event, in about 7 ms at level 1 (level
 * 6 saved a tenth of the bytes in 2.5 times the time, a fifth of what
 * writing 4 M events cost in bench/output).
 */
static int raw_encode_symbols(const struct symtab *tab, uint8_t **out, size_t *len)
{
	size_t cap = 0;
	uint8_t *buf, *p;
	uint64_t prev = 0;

	for (size_t i = 0; i < tab->count; i++)
		cap += 2 * 10 + 1 + strlen(symtab_name(tab, &tab->syms[i]));
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	p = buf;
	for (size_t i = 0; i < tab->count; i++) {
		const struct symbol *s = &tab->syms[i];
		const char *name = symtab_name(tab, s);
		size_t n = strlen(name);

		p = raw_put_varint(p, s->addr - prev);
		prev = s->addr;
		*p++ = (uint8_t)s->type;
		p = raw_put_varint(p, n);
		memcpy(p, name, n);
		p += n;
	}
	*out = buf;
	*len = (size_t)(p - buf);
	return 0;
}

static int raw_write_symbols(struct trace_writer *w, const struct symtab *tab)
{
	uint8_t *plain = NULL, *chunk = NULL;
	size_t plain_len;
	uLongf stored;
	struct raw_symbols *hdr;
	int rc;

	if (!tab || !tab->count)
		return 0;
	rc = raw_encode_symbols(tab, &plain, &plain_len);
	if (rc)
		return rc;
	stored = compressBound(plain_len);
	chunk = malloc(sizeof(*hdr) + stored);
	rc = -ENOMEM;
	if (!chunk || plain_len > UINT32_MAX)
		goto out;
	rc = -EIO;
	if (compress2(chunk + sizeof(*hdr), &stored, plain, plain_len, 1) != Z_OK)
		goto out;
	hdr = (struct raw_symbols *)chunk;
	memset(hdr, 0, sizeof(*hdr));
	hdr->count = (uint32_t)tab->count;
	hdr->encoding = RAW_SYMS_ZLIB;
	hdr->size = (uint32_t)plain_len;
	hdr->stored = (uint32_t)stored;
	rc = raw_write_chunk(w, RAW_CHUNK_SYMBOLS, chunk, sizeof(*hdr) + stored);
out:
	free(chunk);
	free(plain);
	return rc;
}

static void raw_chunk_reset(struct trace_writer *w)
{
	w->pos = w->buf + RAW_EVENTS_OFF;
	w->count = 0;
	w->prev_tsc = 0;
	w->prev_func = 0;
	w->seq_known = 0;
	w->task_known = 0;
}

/* Writes the open event chunk, if it holds anything, and starts another. */
static int raw_close_events(struct trace_writer *w)
{
	struct raw_events *ev = (struct raw_events *)(w->buf + sizeof(struct raw_chunk));
	size_t len = (size_t)(w->pos - w->buf) - sizeof(struct raw_chunk);

	if (!w->count)
		return -w->error;
	ev->count = w->count;
	ev->reserved = 0;
	raw_chunk_seal((struct raw_chunk *)w->buf, RAW_CHUNK_EVENTS, w->seq++, ev, (uint32_t)len);
	raw_write(w, w->buf, sizeof(struct raw_chunk) + len);
	if (!w->error && fflush(w->out))
		w->error = errno ? errno : EIO;
	w->event_chunks++;
	raw_chunk_reset(w);
	return -w->error;
}

static int raw_open(struct trace_writer **out_w, FILE *out, const struct trace_meta *meta,
		    struct errbuf *err)
{
	struct trace_writer *w = calloc(1, sizeof(*w));
	int rc;

	if (w)
		w->buf = malloc(RAW_EVENTS_OFF + RAW_EVENT_CHUNK_BYTES + RAW_REC_MAX);
	if (!w || !w->buf) {
		free(w);
		return err_set(err, ENOMEM, "out of memory for the raw writer");
	}
	w->out = out;
	w->fnargs = meta->fnargs;
	w->syms = meta->syms;
	w->limit = w->buf + RAW_EVENTS_OFF + RAW_EVENT_CHUNK_BYTES;
	raw_chunk_reset(w);
	rc = raw_write_header(w, meta);
	if (!rc)
		rc = raw_write_symbols(w, meta->syms);
	if (!rc && fflush(out))
		rc = -(errno ? errno : EIO);
	if (rc) {
		free(w->buf);
		free(w);
		return err_set(err, -rc, "writing the raw trace's header: %s", strerror(-rc));
	}
	*out_w = w;
	return 0;
}

/* Whether func's prototype was written; marks it so. -ENOMEM when the set cannot grow. */
static int raw_told(struct trace_writer *w, uint64_t func)
{
	size_t i;

	if ((w->told_used + 1) * 2 > w->told_cap) {
		size_t cap = w->told_cap ? w->told_cap * 2 : 256;
		uint64_t *n = calloc(cap, sizeof(*n)), *old = w->told;

		if (!n)
			return -ENOMEM;
		for (size_t k = 0; k < w->told_cap; k++) {
			if (!old[k])
				continue;
			for (i = (old[k] * 0x9e3779b97f4a7c15ULL >> 20) & (cap - 1); n[i]; i = (i + 1) & (cap - 1))
				;
			n[i] = old[k];
		}
		free(old);
		w->told = n;
		w->told_cap = cap;
	}
	for (i = (func * 0x9e3779b97f4a7c15ULL >> 20) & (w->told_cap - 1); w->told[i];
	     i = (i + 1) & (w->told_cap - 1))
		if (w->told[i] == func)
			return 1;
	w->told[i] = func;
	w->told_used++;
	return 0;
}

/*
 * Before the first event with the arguments of func: its prototype, in a
 * chunk of its own, ahead of the event chunk (still open) that needs it.
 */
static int raw_tell_proto(struct trace_writer *w, uint64_t func)
{
	uint8_t buf[4 + 8 + FNARGS_WIRE_MAX];
	struct kbtf_proto proto;
	const struct symbol *s;
	uint64_t off;
	uint32_t one = 1;
	int rc = func ? raw_told(w, func) : 1;

	if (rc)
		return rc < 0 ? rc : 0;
	s = w->syms ? symtab_find_addr(w->syms, func, &off) : NULL;
	if (!s || off || !fnargs_lookup(w->fnargs, func, symtab_name(w->syms, s), &proto))
		return 0;	/* no prototype: the reader prints the registers as they are */
	memcpy(buf, &one, 4);
	memcpy(buf + 4, &func, 8);
	return raw_write_chunk(w, RAW_CHUNK_PROTOS, buf, 12 + fnargs_encode(&proto, buf + 12));
}

/* A VM event: a sized record (proto/raw.h), so older readers step over it. */
static int raw_vm_event(struct trace_writer *w, const struct ring_event *ev)
{
	uint8_t body[RAW_REC_MAX], *p = body, *q = w->pos;

	p = raw_put_varint(p, ev->cpu);
	p = raw_put_varint(p, ev->ring);
	p = raw_put_varint(p, ev->flags);
	p = raw_put_varint(p, ev->seq);
	p = raw_put_varint(p, raw_zigzag(ev->tsc - w->prev_tsc));
	p = raw_put_varint(p, raw_zigzag(ev->func - w->prev_func));
	p = raw_put_varint(p, ev->parent);
	p = raw_put_varint(p, ev->arg);
	*q++ = RAW_REC_SIZED | RAW_REC_VMEV;
	q = raw_put_varint(q, (uint64_t)(p - body));
	memcpy(q, body, (size_t)(p - body));
	w->pos = q + (p - body);
	w->count++;
	w->events++;
	if (w->pos >= w->limit)
		return raw_close_events(w);
	return -w->error;
}

/* --graph's fields (version 4): a hooked entry's depth; an exit's depth, return value and length. */
static uint8_t *raw_put_graph(uint8_t *p, const struct ring_event *ev)
{
	if (ev->flags & (VT_REC_FLAG_HOOKED | VT_REC_FLAG_EXIT))
		p = raw_put_varint(p, ev->depth);
	if (ev->flags & VT_REC_FLAG_EXIT) {
		p = raw_put_varint(p, ev->retval);
		p = raw_put_varint(p, raw_zigzag(ev->tsc - ev->calltime));
	}
	return p;
}

/* Whether the ring's task changed since its last record in the chunk (then remembered). */
static int raw_new_task(struct trace_writer *w, const struct ring_event *ev)
{
	struct raw_task *k = ev->ring < RAW_SEQ_RINGS ? &w->task[ev->ring] : NULL;
	int new_task = !k || !(w->task_known & (1ull << ev->ring)) || k->task != ev->task ||
		       k->pid != ev->pid || memcmp(k->comm, ev->comm, sizeof(k->comm));

	if (new_task && k) {
		k->task = ev->task;
		k->pid = ev->pid;
		memcpy(k->comm, ev->comm, sizeof(k->comm));
		w->task_known |= 1ull << ev->ring;
	}
	return new_task;
}

/* The fields the flags varint announces (proto/raw.h), flags16 the flags kept. */
static uint8_t *raw_put_flags(struct trace_writer *w, uint8_t *p, const struct ring_event *ev, uint16_t flags16)
{
	int new_task = (ev->flags & VT_REC_FLAG_TASK) && raw_new_task(w, ev);

	p = raw_put_varint(p, (uint64_t)flags16 | (new_task ? RAW_FLAG_NEW_TASK : 0));
	if (ev->flags & VT_REC_FLAG_CTX)
		p = raw_put_varint(p, ev->preempt);
	if (new_task) {
		size_t n = strnlen(ev->comm, sizeof(ev->comm));

		p = raw_put_varint(p, ev->task);
		p = raw_put_varint(p, (uint32_t)ev->pid);
		p = raw_put_varint(p, n);
		memcpy(p, ev->comm, n);
		p += n;
	}
	if (flags16 & VT_REC_FLAG_ARGS)
		for (unsigned i = 0; i < VT_REC_NARGS; i++)
			p = raw_put_varint(p, ev->args[i]);
	return raw_put_graph(p, ev);
}

static int raw_event(struct trace_writer *w, const struct ring_event *ev)
{
	uint8_t *p = w->pos, *tag = p++;
	uint64_t expect = 0;
	uint16_t flags16 = ev->flags;
	int rc;

	if (ev->flags & RING_EV_VM)
		return raw_vm_event(w, ev);
	if (!w->fnargs)
		flags16 &= (uint16_t)~VT_REC_FLAG_ARGS;	/* not asked for: not kept */
	else if ((flags16 & VT_REC_FLAG_ARGS) && (rc = raw_tell_proto(w, ev->func)))
		return rc;
	*tag = RAW_REC_ENTRY;
	p = raw_put_varint(p, ev->cpu);
	if (ev->ring != ev->cpu) {
		*tag |= RAW_REC_RING;
		p = raw_put_varint(p, ev->ring);
	}
	if (flags16 == VT_REC_FLAG_IRQS_OFF) {
		*tag |= RAW_REC_IRQS_OFF;
	} else if (flags16) {
		*tag |= RAW_REC_FLAGS;
		p = raw_put_flags(w, p, ev, flags16);
	}
	p = raw_put_varint(p, raw_zigzag(ev->tsc - w->prev_tsc));
	p = raw_put_varint(p, raw_zigzag(ev->func - w->prev_func));
	p = raw_put_varint(p, raw_zigzag(ev->parent - ev->func));
	if (ev->ring < RAW_SEQ_RINGS) {
		if (w->seq_known & (1ull << ev->ring))
			expect = w->last_seq[ev->ring] + 1;
		w->last_seq[ev->ring] = ev->seq;
		w->seq_known |= 1ull << ev->ring;
	}
	p = raw_put_varint(p, raw_zigzag(ev->seq - expect));
	w->prev_tsc = ev->tsc;
	w->prev_func = ev->func;
	w->pos = p;
	w->count++;
	w->events++;
	if (p >= w->limit)
		return raw_close_events(w);
	return -w->error;
}

static int raw_flush(struct trace_writer *w)
{
	raw_close_events(w);
	if (fflush(w->out) && !w->error)
		w->error = errno ? errno : EIO;
	return -w->error;
}

static int raw_close(struct trace_writer *w, const struct trace_stats *st, struct errbuf *err)
{
	struct raw_trailer t;
	int rc;

	raw_close_events(w);
	memset(&t, 0, sizeof(t));
	t.events = w->events;
	t.event_chunks = w->event_chunks;
	if (st) {
		t.dropped_stub = st->dropped_stub;
		t.lost = st->lost;
		if (st->have_phase) {
			t.flags |= RAW_TRAILER_PHASE;
			t.early_events = st->early_events;
			t.ftrace_init_tsc = st->ftrace_init_tsc;
		}
	}
	raw_write_chunk(w, RAW_CHUNK_TRAILER, &t, sizeof(t));
	rc = raw_flush(w);
	free(w->told);
	free(w->buf);
	free(w);
	return rc ? err_set(err, -rc, "writing the raw trace: %s", strerror(-rc)) : 0;
}

const struct trace_writer_ops trace_writer_raw = {
	.name = "raw", .open = raw_open, .event = raw_event, .flush = raw_flush, .close = raw_close,
};
