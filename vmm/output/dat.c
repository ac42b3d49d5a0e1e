// SPDX-License-Identifier: GPL-2.0
/*
 * The trace.dat writer (trace-dat.h): trace-cmd's file version 6, as its
 * trace-cmd.dat.v6(5) page describes it, holding the kernel's ring-buffer
 * pages. Everything up to the printk formats is known at open and written
 * then; the tasks' names (cmdlines) are known only at the end, and the
 * per-CPU data must be contiguous per CPU in the file, so each CPU's
 * finished pages wait in the page store (trace-dat-pages.c) until close,
 * which writes the cmdlines, the options, the offsets and the pages. Offsets count the
 * bytes this writer wrote, so out need not be seekable (a pipe works).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/dat.h"
#include "vmm/output/dat-pages.h"
#include "vmm/output/vmevent.h"

/* The ring buffer's event header: 5-bit type_len, 27-bit time_delta. */
#define DAT_TYPE_LEN_MAX	28u	/* data events: type_len * 4 payload bytes */
#define DAT_TYPE_TIME_EXTEND	30u
#define DAT_DELTA_BITS		27
#define DAT_EXTEND_BITS		(DAT_DELTA_BITS + 32)	/* time_delta + array[0] */

/* TRACECMD_OPTION_* ids of the options section (trace-cmd.dat.v7(5)). */
#define DAT_OPTION_DONE		0
#define DAT_OPTION_CPUSTAT	2
#define DAT_OPTION_TRACECLOCK	4

/* events/header_page and events/header_event of a 64-bit kernel. */
static const char dat_header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
static const char dat_header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n"
	"\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

struct dat_cpu {
	uint8_t *page;		/* the page being filled, in the page store; NULL: none */
	size_t used;		/* data bytes in page (its commit) */
	uint64_t last_ns;	/* time of the last event written to page */
	uint64_t npages, nevents;
};

/* pid -> the comm of its last event: the cmdlines section (open addressing). */
struct dat_task {
	int32_t pid;			/* -1: empty */
	char comm[16];
};

struct trace_writer {
	FILE *out;
	struct dat_task *tasks;
	size_t ntasks, tasks_cap;	/* tasks_cap: a power of two, or 0 */
	uint64_t pos;		/* bytes written to out: the file offset */
	int error;		/* errno of the first failed write */
	struct errbuf err;	/* the first event() failure, reported by close */
	int failed;
	struct trace_meta meta;
	struct dat_cpu *cpus;
	struct trace_dat_pages *pages;
	struct trace_dat_ns ns;
};

static void dat_write(struct trace_writer *w, const void *p, size_t n)
{
	if (w->error || !n)
		return;
	if (fwrite(p, 1, n, w->out) != n)
		w->error = errno ? errno : EIO;
	w->pos += n;
}

static void dat_write_le(struct trace_writer *w, uint64_t v, unsigned bytes)
{
	uint8_t b[8];

	for (unsigned i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	dat_write(w, b, bytes);
}

static void dat_write_zeros(struct trace_writer *w, size_t n)
{
	static const uint8_t zero[256];

	while (n) {
		size_t k = n < sizeof(zero) ? n : sizeof(zero);

		dat_write(w, zero, k);
		n -= k;
	}
}

/* A text section: its size in size_bytes little-endian bytes, then the text. */
static void dat_write_sized(struct trace_writer *w, const char *text, size_t len, unsigned size_bytes)
{
	dat_write_le(w, len, size_bytes);
	dat_write(w, text, len);
}

/* Runs fill(w, arg, f) on a memory stream and writes the result as a sized text. */
static int dat_write_built(struct trace_writer *w, void (*fill)(struct trace_writer *, const void *, FILE *),
			   const void *arg, unsigned size_bytes)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -(errno ? errno : ENOMEM);
	fill(w, arg, f);
	if (fclose(f)) {
		free(buf);
		return -(errno ? errno : ENOMEM);
	}
	dat_write_sized(w, buf, len, size_bytes);
	free(buf);
	return 0;
}

static void dat_fill_format(struct trace_writer *w, const void *arg, FILE *f)
{
	(void)w;
	trace_dat_event_format(arg, f);
}

/* Events of system sys: each format with a u64 size before it. */
static int dat_write_system(struct trace_writer *w, const char *sys)
{
	uint32_t n = 0;
	int rc = 0;

	for (size_t i = 0; i < trace_dat_nevents; i++)
		n += !strcmp(trace_dat_events[i].system, sys);
	dat_write_le(w, n, 4);
	for (size_t i = 0; i < trace_dat_nevents && !rc; i++)
		if (!strcmp(trace_dat_events[i].system, sys))
			rc = dat_write_built(w, dat_fill_format, &trace_dat_events[i], 8);
	return rc;
}

/* The ftrace formats, then every other system once, in table order. */
static int dat_write_formats(struct trace_writer *w)
{
	uint32_t nsys = 0;
	size_t i, j;
	int rc;

	rc = dat_write_system(w, "ftrace");
	for (i = 0; i < trace_dat_nevents; i++) {
		for (j = 0; j < i && strcmp(trace_dat_events[j].system, trace_dat_events[i].system); j++)
			;
		nsys += j == i && strcmp(trace_dat_events[i].system, "ftrace");
	}
	dat_write_le(w, nsys, 4);
	for (i = 0; i < trace_dat_nevents && !rc; i++) {
		const char *sys = trace_dat_events[i].system;

		for (j = 0; j < i && strcmp(trace_dat_events[j].system, sys); j++)
			;
		if (j < i || !strcmp(sys, "ftrace"))
			continue;
		dat_write(w, sys, strlen(sys) + 1);
		rc = dat_write_system(w, sys);
	}
	return rc;
}

/* A name /proc/kallsyms could show: a whitespace would split its line. */
static int dat_name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 0;
	return 1;
}

/*
 * /proc/kallsyms lines. Of aliases only the first is written, the one the
 * text writer names (symtab_find_addr), since readers pick among equal
 * addresses as their sort happens to leave them.
 */
static void dat_fill_kallsyms(struct trace_writer *w, const void *arg, FILE *f)
{
	const struct symtab *t = arg;

	(void)w;
	for (size_t i = 0; t && i < t->count; i++) {
		const struct symbol *s = &t->syms[i];

		if (i && t->syms[i - 1].addr == s->addr)
			continue;
		if (dat_name_ok(symtab_name(t, s)))
			fprintf(f, "%016" PRIx64 " %c %s\n", s->addr, s->type, symtab_name(t, s));
	}
}

/* Everything from the magic to the printk formats: all known before any event. */
static int dat_write_head(struct trace_writer *w)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g', '6', 0 };
	int rc;

	dat_write(w, magic, sizeof(magic));
	dat_write_le(w, 0, 1);				/* little endian */
	dat_write_le(w, 8, 1);				/* long size */
	dat_write_le(w, TRACE_DAT_PAGE_SIZE, 4);
	dat_write(w, "header_page", 12);
	dat_write_sized(w, dat_header_page, strlen(dat_header_page), 8);
	dat_write(w, "header_event", 13);
	dat_write_sized(w, dat_header_event, strlen(dat_header_event), 8);
	rc = dat_write_formats(w);
	if (!rc)
		rc = dat_write_built(w, dat_fill_kallsyms, w->meta.syms, 4);
	dat_write_le(w, 0, 4);				/* printk formats: none */
	return rc;
}

/* Remembers the comm of pid's latest event; -ENOMEM when the table cannot grow. */
static int dat_task_note(struct trace_writer *w, int32_t pid, const char *comm)
{
	size_t i;

	if (w->ntasks * 2 >= w->tasks_cap) {
		size_t cap = w->tasks_cap ? w->tasks_cap * 2 : 64;
		struct dat_task *t = malloc(cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (i = 0; i < cap; i++)
			t[i].pid = -1;
		for (size_t j = 0; j < w->tasks_cap; j++) {
			if (w->tasks[j].pid < 0)
				continue;
			for (i = (size_t)w->tasks[j].pid * 2654435761u & (cap - 1); t[i].pid >= 0; i = (i + 1) & (cap - 1))
				;
			t[i] = w->tasks[j];
		}
		free(w->tasks);
		w->tasks = t;
		w->tasks_cap = cap;
	}
	for (i = (size_t)pid * 2654435761u & (w->tasks_cap - 1); w->tasks[i].pid >= 0 && w->tasks[i].pid != pid;
	     i = (i + 1) & (w->tasks_cap - 1))
		;
	if (w->tasks[i].pid < 0)
		w->ntasks++;
	w->tasks[i].pid = pid;
	memcpy(w->tasks[i].comm, comm, sizeof(w->tasks[i].comm));
	w->tasks[i].comm[sizeof(w->tasks[i].comm) - 1] = 0;
	return 0;
}

/* The cmdlines section ("pid comm" lines, as saved_cmdlines) and the CPU count. */
static void dat_write_cmdlines(struct trace_writer *w)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		w->error = ENOMEM;
		return;
	}
	for (size_t i = 0; i < w->tasks_cap; i++)
		if (w->tasks[i].pid >= 0)
			fprintf(f, "%d %s\n", w->tasks[i].pid, w->tasks[i].comm);
	if (fclose(f)) {
		free(text);
		w->error = ENOMEM;
		return;
	}
	dat_write_sized(w, text, len, 8);
	free(text);
	dat_write_le(w, w->meta.ncpus, 4);
}

static void dat_page_finish(struct trace_writer *w, unsigned cpu)
{
	struct dat_cpu *c = &w->cpus[cpu];

	trace_dat_put_le64(c->page + 8, c->used);	/* the rest of the page is zero since its start */
	trace_dat_pages_commit(w->pages, cpu);
	c->page = NULL;
	c->npages++;
}

static int dat_page_start(struct trace_writer *w, unsigned cpu, uint64_t ns)
{
	struct dat_cpu *c = &w->cpus[cpu];
	int rc;

	c->page = trace_dat_pages_open(w->pages, cpu, &rc);
	if (!c->page)
		return rc;
	/* Zero once per page, not per event: padding and unwritten fields read 0. */
	memset(c->page, 0, TRACE_DAT_PAGE_SIZE);
	trace_dat_put_le64(c->page, ns);
	c->used = 0;
	c->last_ns = ns;
	return 0;
}

/* Appends one ring-buffer event header: type_len in the low 5 bits. */
static inline void dat_page_put_header(struct dat_cpu *c, unsigned type_len, uint64_t delta, uint32_t array)
{
	uint32_t h = type_len | (uint32_t)(delta << 5);
	uint8_t *p = c->page + TRACE_DAT_PAGE_HDR + c->used;
	int n = type_len == DAT_TYPE_TIME_EXTEND || type_len == 0 ? 8 : 4;

	trace_dat_put_le32(p, h);
	trace_dat_put_le32(p + 4, array);
	c->used += n;
}

static int dat_cpu_event(struct trace_writer *w, unsigned cpu, const struct trace_dat_event *e,
			 const struct ring_event *ev, uint64_t ns)
{
	struct dat_cpu *c = &w->cpus[cpu];
	/* Payloads of up to 112 bytes fit type_len; longer ones give their length in array[0]. */
	unsigned len = (e->size + 3) & ~3u;
	unsigned type_len = len / 4 <= DAT_TYPE_LEN_MAX ? len / 4 : 0;
	size_t need = (type_len ? 4 : 8) + len;
	uint64_t delta = 0;
	uint8_t *payload;
	int rc;

	if (need > TRACE_DAT_PAGE_DATA)
		return -EMSGSIZE;	/* a table entry larger than a page: never fits */
	if (c->page) {
		/* Time going back, or a gap no extend holds: a new page states the time itself. */
		if (ns < c->last_ns || ns - c->last_ns >= (1ull << DAT_EXTEND_BITS))
			need = TRACE_DAT_PAGE_DATA + 1;
		else
			delta = ns - c->last_ns;
		if (delta >= (1ull << DAT_DELTA_BITS))
			need += 8;
		if (c->used + need > TRACE_DAT_PAGE_DATA)
			dat_page_finish(w, cpu);
	}
	if (!c->page) {
		rc = dat_page_start(w, cpu, ns);
		if (rc)
			return rc;
		delta = 0;
	}
	if (delta >= (1ull << DAT_DELTA_BITS)) {
		dat_page_put_header(c, DAT_TYPE_TIME_EXTEND, delta & ((1u << DAT_DELTA_BITS) - 1),
				    (uint32_t)(delta >> DAT_DELTA_BITS));
		delta = 0;
	}
	/* With type_len set the payload starts at array[0], which it overwrites. */
	dat_page_put_header(c, type_len, delta, len + 4);
	payload = c->page + TRACE_DAT_PAGE_HDR + c->used;
	/* The page is zero past used but for array[0], which the common fields overwrite. */
	payload[0] = (uint8_t)e->id;
	payload[1] = (uint8_t)(e->id >> 8);
	if (vmev_is(ev)) {
		payload[2] = (ev->flags & VMEV_FLAG_IRQS_OFF) ? TRACE_DAT_FLAG_IRQS_OFF : 0;
		payload[3] = 0;
	} else {
		int32_t pid = (ev->flags & VT_REC_FLAG_TASK) ? ev->pid : 0;

		payload[2] = (uint8_t)ring_event_ftrace_flags(ev);
		payload[3] = (uint8_t)ring_event_ftrace_pc(ev);
		memcpy(payload + 4, &pid, 4);	/* common_pid, little endian like the host */
	}
	e->encode(ev, payload, &w->ns);
	c->used += len;
	c->last_ns = ns;
	c->nevents++;
	return 0;
}

static int dat_event(struct trace_writer *w, const struct ring_event *ev)
{
	int rc;

	if (w->failed)
		return w->failed;
	/* --graph-depth: deeper calls are not shown, as function_graph's max_graph_depth records none. */
	if (w->meta.graph && !vmev_is(ev) && (ev->flags & (VT_REC_FLAG_HOOKED | VT_REC_FLAG_EXIT)) &&
	    w->meta.graph_depth && ev->depth >= w->meta.graph_depth)
		return 0;
	if (ev->cpu >= w->meta.ncpus) {
		w->failed = err_set(&w->err, EINVAL, "trace.dat: event on CPU %u of a %u-CPU trace",
				    ev->cpu, w->meta.ncpus);
		return w->failed;
	}
	/* pid 0 is <idle> to trace-cmd whatever the file says. */
	if (!vmev_is(ev) && (ev->flags & VT_REC_FLAG_TASK) && ev->pid > 0 &&
	    dat_task_note(w, ev->pid, ev->comm)) {
		w->failed = err_set(&w->err, ENOMEM, "trace.dat: out of memory for the tasks' names");
		return w->failed;
	}
	rc = dat_cpu_event(w, ev->cpu, trace_dat_event_pick(ev, w->meta.graph), ev, trace_dat_ns(&w->ns, ev->tsc));
	if (rc)
		w->failed = err_set(&w->err, -rc, "trace.dat: buffering CPU %u's pages: %s",
				    ev->cpu, strerror(-rc));
	return rc;
}

static void dat_free(struct trace_writer *w)
{
	trace_dat_pages_free(w->pages);
	free(w->tasks);
	free(w->cpus);
	free(w);
}

static int dat_open(struct trace_writer **out_w, FILE *out, const struct trace_meta *meta,
		    struct errbuf *err)
{
	struct trace_writer *w;
	int rc;

	if (!meta->ncpus || meta->ncpus > 4096)
		return err_set(err, EINVAL, "trace.dat: %u CPUs", meta->ncpus);
	w = calloc(1, sizeof(*w));
	if (!w)
		return err_set(err, ENOMEM, "out of memory for the trace.dat writer");
	w->out = out;
	w->meta = *meta;
	trace_dat_ns_init(&w->ns, meta);
	w->cpus = calloc(meta->ncpus, sizeof(*w->cpus));
	if (!w->cpus || trace_dat_pages_new(&w->pages, meta->ncpus)) {
		dat_free(w);
		return err_set(err, ENOMEM, "out of memory for %u CPUs' trace pages", meta->ncpus);
	}
	rc = dat_write_head(w);
	if (rc || w->error) {
		rc = rc ? -rc : w->error;
		dat_free(w);
		return err_set(err, rc, "writing the trace.dat header: %s", strerror(rc));
	}
	*out_w = w;
	return 0;
}

/* An option of the options section: u16 id, u32 size, a NUL-terminated text. */
static void dat_write_option_text(struct trace_writer *w, uint16_t id, const char *text)
{
	dat_write_le(w, id, 2);
	dat_write_sized(w, text, strlen(text) + 1, 4);
}

/*
 * Each CPU's stats in the kernel's per_cpu/cpuN/stats layout (trace-cmd
 * report --stat shows them): "entries" are those left unread in the ring,
 * none here, "read events" those in the file. The stub's drops and the host's losses are
 * counted for the whole trace, not per CPU, so they follow CPU 0's.
 */
static void dat_write_cpustats(struct trace_writer *w, const struct trace_stats *st)
{
	char text[512];

	for (unsigned i = 0; i < w->meta.ncpus; i++) {
		const struct dat_cpu *c = &w->cpus[i];
		int n = snprintf(text, sizeof(text),
				 "CPU: %u\nentries: 0\noverrun: 0\ncommit overrun: 0\n"
				 "bytes: %" PRIu64 "\ndropped events: 0\nread events: %" PRIu64 "\n",
				 i, c->npages * TRACE_DAT_PAGE_SIZE, c->nevents);

		if (i == 0 && st && n > 0 && (size_t)n < sizeof(text))
			snprintf(text + n, sizeof(text) - n,
				 "vmmtrace, all CPUs: %" PRIu64 " dropped by the stub, %" PRIu64
				 " lost before the host read them\n", st->dropped_stub, st->lost);
		dat_write_option_text(w, DAT_OPTION_CPUSTAT, text);
	}
}

/* Options, then the flyrecord offsets, padding to a page, each CPU's pages. */
/* trace_dat_put_fn: the pages go out through dat_write, which counts them. */
static void dat_put_pages(void *opaque, const void *buf, size_t len)
{
	dat_write(opaque, buf, len);
}

static int dat_write_tail(struct trace_writer *w, const struct trace_stats *st)
{
	uint64_t off;
	int rc;

	dat_write_cmdlines(w);
	dat_write(w, "options  ", 10);
	/* ns since the guest started, which report prints as seconds.microseconds. */
	dat_write_option_text(w, DAT_OPTION_TRACECLOCK, "[local] global\n");
	dat_write_cpustats(w, st);
	dat_write_le(w, DAT_OPTION_DONE, 2);
	dat_write(w, "flyrecord", 10);
	off = (w->pos + 16ull * w->meta.ncpus + TRACE_DAT_PAGE_SIZE - 1) & ~(uint64_t)(TRACE_DAT_PAGE_SIZE - 1);
	for (unsigned i = 0; i < w->meta.ncpus; i++) {
		uint64_t size = w->cpus[i].npages * TRACE_DAT_PAGE_SIZE;

		dat_write_le(w, off, 8);
		dat_write_le(w, size, 8);
		off += size;
	}
	dat_write_zeros(w, (TRACE_DAT_PAGE_SIZE - w->pos % TRACE_DAT_PAGE_SIZE) % TRACE_DAT_PAGE_SIZE);
	for (unsigned i = 0; i < w->meta.ncpus && !w->error; i++)
		if ((rc = trace_dat_pages_put(w->pages, i, dat_put_pages, w)))
			return rc;
	if (!w->error && fflush(w->out))
		w->error = errno ? errno : EIO;
	return w->error ? -w->error : 0;
}

static int dat_flush(struct trace_writer *w)
{
	/* Nothing of the events reaches out before close: the file is whole only then. */
	return w->failed;
}

static int dat_close(struct trace_writer *w, const struct trace_stats *st, struct errbuf *err)
{
	int rc = w->failed;

	if (rc && err)
		*err = w->err;
	for (unsigned i = 0; i < w->meta.ncpus && !rc; i++)
		if (w->cpus[i].page)
			dat_page_finish(w, i);
	if (!rc && (rc = dat_write_tail(w, st)))
		err_set(err, -rc, "writing the trace.dat CPU data: %s", strerror(-rc));
	dat_free(w);
	return rc;
}

const struct trace_writer_ops trace_writer_dat = {
	.name = "dat", .open = dat_open, .event = dat_event, .flush = dat_flush, .close = dat_close,
};
