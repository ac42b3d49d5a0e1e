/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For test-trace-dat.c: walks a trace.dat (version 6) by the sizes its
 * sections give, as trace-cmd.dat.v6(5) lays them out, and decodes the
 * ring-buffer pages back into events, checking them against what was
 * written. Every read is bounds-checked: a wrong size in the writer shows
 * as a walk that fails, not as a crash.
 */
#ifndef TESTS_UNIT_DAT_WALK_H
#define TESTS_UNIT_DAT_WALK_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/dat.h"

#define DAT_WALK_MAX_CPUS 64

struct dat_walk {
	uint8_t *buf;
	size_t len, pos;
	unsigned ncpus, nftrace, nsystems, ncpustat, has_clock;
	const char *function_fmt, *kallsyms, *cmdlines;
	size_t function_fmt_len, kallsyms_len, cmdlines_len;
	const char *fgraph_fmt[2];	/* funcgraph_entry's and funcgraph_exit's formats (--graph) */
	size_t fgraph_fmt_len[2];
	uint64_t cpu_off[DAT_WALK_MAX_CPUS], cpu_size[DAT_WALK_MAX_CPUS];
};

static uint64_t dat_le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The next n bytes, or NULL when the file ends first. */
static const uint8_t *dat_take(struct dat_walk *w, uint64_t n)
{
	const uint8_t *p = w->buf + w->pos;

	if (n > w->len - w->pos)
		return NULL;
	w->pos += n;
	return p;
}

static int dat_take_num(struct dat_walk *w, unsigned bytes, uint64_t *v)
{
	const uint8_t *p = dat_take(w, bytes);

	if (!p)
		return -1;
	*v = dat_le(p, bytes);
	return 0;
}

/* A text whose size precedes it in size_bytes bytes. */
static const char *dat_take_text(struct dat_walk *w, unsigned size_bytes, size_t *len)
{
	uint64_t n;

	if (dat_take_num(w, size_bytes, &n))
		return NULL;
	*len = n;
	return (const char *)dat_take(w, n);
}

static int dat_expect(struct dat_walk *w, const void *s, size_t n)
{
	const uint8_t *p = dat_take(w, n);

	return p && !memcmp(p, s, n) ? 0 : -1;
}

#define WALK_FAIL(what) err_set(err, EINVAL, "%s at offset %zu", what, w->pos)

static int dat_walk_formats(struct dat_walk *w, struct errbuf *err)
{
	uint64_t n;
	size_t len;
	const char *t;

	if (dat_take_num(w, 4, &n))
		return WALK_FAIL("ftrace format count");
	w->nftrace = (unsigned)n;
	for (uint64_t i = 0; i < n; i++) {
		if (!(t = dat_take_text(w, 8, &len)))
			return WALK_FAIL("ftrace format");
		if (len > 15 && !memcmp(t, "name: function\n", 15)) {
			w->function_fmt = t;
			w->function_fmt_len = len;
		}
		for (unsigned k = 0; k < 2; k++) {
			const char *want = k ? "name: funcgraph_exit\n" : "name: funcgraph_entry\n";

			if (len > strlen(want) && !memcmp(t, want, strlen(want))) {
				w->fgraph_fmt[k] = t;
				w->fgraph_fmt_len[k] = len;
			}
		}
	}
	if (dat_take_num(w, 4, &n))
		return WALK_FAIL("event system count");
	w->nsystems = (unsigned)n;
	for (uint64_t i = 0; i < w->nsystems; i++) {
		uint64_t nev;

		while (w->pos < w->len && w->buf[w->pos])
			w->pos++;
		if (!dat_take(w, 1) || dat_take_num(w, 4, &nev))
			return WALK_FAIL("event system");
		for (uint64_t j = 0; j < nev; j++)
			if (!dat_take_text(w, 8, &len))
				return WALK_FAIL("event format");
	}
	return 0;
}

static int dat_walk_options(struct dat_walk *w, struct errbuf *err)
{
	uint64_t id, size;

	if (dat_expect(w, "options  ", 10))
		return WALK_FAIL("\"options  \"");
	for (;;) {
		if (dat_take_num(w, 2, &id))
			return WALK_FAIL("option id");
		if (!id)
			return 0;
		if (dat_take_num(w, 4, &size) || !dat_take(w, size))
			return WALK_FAIL("option");
		w->ncpustat += id == 2;
		w->has_clock |= id == 4;
	}
}

static int dat_walk_file(const char *path, struct dat_walk *w, struct errbuf *err)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g', '6', 0, 0, 8 };
	FILE *f = fopen(path, "r");
	uint64_t v;
	size_t len;
	long size;

	memset(w, 0, sizeof(*w));
	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(w->buf = malloc(size ? size : 1)) || fread(w->buf, 1, size, f) != (size_t)size) {
		if (f)
			fclose(f);
		return err_set(err, EIO, "reading %s", path);
	}
	fclose(f);
	w->len = size;
	if (dat_expect(w, magic, sizeof(magic)) || dat_take_num(w, 4, &v) || v != TRACE_DAT_PAGE_SIZE)
		return WALK_FAIL("magic, version 6, little endian, 8-byte long, 4096-byte pages");
	if (dat_expect(w, "header_page", 12) || !dat_take_text(w, 8, &len) ||
	    dat_expect(w, "header_event", 13) || !dat_take_text(w, 8, &len))
		return WALK_FAIL("header_page, header_event");
	if (dat_walk_formats(w, err))
		return -EINVAL;
	if (!(w->kallsyms = dat_take_text(w, 4, &w->kallsyms_len)) || !dat_take_text(w, 4, &len) ||
	    !(w->cmdlines = dat_take_text(w, 8, &w->cmdlines_len)))
		return WALK_FAIL("kallsyms, printk formats, cmdlines");
	if (dat_take_num(w, 4, &v) || !v || v > DAT_WALK_MAX_CPUS)
		return WALK_FAIL("CPU count");
	w->ncpus = (unsigned)v;
	if (dat_walk_options(w, err))
		return -EINVAL;
	if (dat_expect(w, "flyrecord", 10))
		return WALK_FAIL("\"flyrecord\"");
	for (unsigned i = 0; i < w->ncpus; i++)
		if (dat_take_num(w, 8, &w->cpu_off[i]) || dat_take_num(w, 8, &w->cpu_size[i]))
			return WALK_FAIL("CPU data offsets");
	return 0;
}

static void dat_walk_free(struct dat_walk *w)
{
	free(w->buf);
	w->buf = NULL;
}

/* Decoded from the pages: what the writer's encoding must give back. */
struct dat_decoded {
	size_t events, extends, pages, mismatches;
};

/* One data event at p (len bytes) on cpu, at ns, against the next expected on that CPU. */
static void dat_check_event(const uint8_t *p, unsigned len, uint64_t ns, unsigned cpu,
			    const struct trace_meta *m, const struct ring_event *exp, size_t n,
			    size_t *next, struct dat_decoded *d)
{
	while (*next < n && exp[*next].cpu != cpu)
		(*next)++;
	d->events++;
	/* A mismatch is counted for check_walk's verdict; the first few are shown. */
	if (*next >= n) {
		if (d->mismatches++ < 5)
			printf("INFO: CPU %u: event %zu was never written\n", cpu, d->events);
		return;
	}
	const struct ring_event *e = &exp[(*next)++];
	unsigned flags = ring_event_ftrace_flags(e), pc = ring_event_ftrace_pc(e);
	uint32_t pid = (e->flags & VT_REC_FLAG_TASK) ? (uint32_t)e->pid : 0;

	if (len >= 24 && dat_le(p, 2) == 1 && p[2] == flags && p[3] == pc && dat_le(p + 4, 4) == pid &&
	    ns == trace_meta_ns(m, e->tsc) && dat_le(p + 8, 8) == e->func && dat_le(p + 16, 8) == e->parent &&
	    !(m->graph && (e->flags & (VT_REC_FLAG_HOOKED | VT_REC_FLAG_EXIT))))
		return;
	/* --graph: funcgraph_entry (11: func, depth) and funcgraph_exit (10: + calltime and rettime in ns). */
	if (m->graph && (e->flags & VT_REC_FLAG_HOOKED) && len >= 20 && dat_le(p, 2) == 11 && p[2] == flags &&
	    dat_le(p + 4, 4) == pid && ns == trace_meta_ns(m, e->tsc) && dat_le(p + 8, 8) == e->func &&
	    dat_le(p + 16, 4) == e->depth)
		return;
	if (m->graph && (e->flags & VT_REC_FLAG_EXIT) && len >= 40 && dat_le(p, 2) == 10 && p[2] == flags &&
	    dat_le(p + 4, 4) == pid && ns == trace_meta_ns(m, e->tsc) && dat_le(p + 8, 8) == e->func &&
	    dat_le(p + 16, 4) == e->depth && dat_le(p + 24, 8) == trace_meta_ns(m, e->calltime) &&
	    dat_le(p + 32, 8) == ns)
		return;
	if (d->mismatches++ < 5)
		printf("INFO: CPU %u event %zu: type %u flags %u pid %u ns %llu ip %llx parent %llx\n", cpu,
		       d->events, (unsigned)dat_le(p, 2), p[2], (unsigned)dat_le(p + 4, 4),
		       (unsigned long long)ns, (unsigned long long)dat_le(p + 8, 8),
		       (unsigned long long)dat_le(p + 16, 8));
}

/* Decodes one CPU's pages: 5-bit type_len, 27-bit delta, extends of type 30. */
static void dat_decode_cpu(const struct dat_walk *w, unsigned cpu, const struct trace_meta *m,
			   const struct ring_event *exp, size_t n, struct dat_decoded *d)
{
	size_t next = 0;

	for (uint64_t pg = 0; pg < w->cpu_size[cpu] / TRACE_DAT_PAGE_SIZE; pg++) {
		const uint8_t *page = w->buf + w->cpu_off[cpu] + pg * TRACE_DAT_PAGE_SIZE;
		uint64_t ts = dat_le(page, 8), commit = dat_le(page + 8, 8), p = 0;
		const uint8_t *data = page + TRACE_DAT_PAGE_HDR;

		d->pages++;
		if (!CHECK_QUIET(commit > 0 && commit <= TRACE_DAT_PAGE_DATA, "CPU %u page %llu: commit %llu",
				 cpu, (unsigned long long)pg, (unsigned long long)commit))
			return;
		while (p + 4 <= commit) {
			uint32_t h = (uint32_t)dat_le(data + p, 4), tl = h & 31, delta = h >> 5;
			uint64_t len;

			if (tl == 30 && p + 8 <= commit) {
				ts += (dat_le(data + p + 4, 4) << 27) + delta;
				d->extends++;
				p += 8;
				continue;
			}
			len = tl ? tl * 4 : (p + 8 <= commit ? dat_le(data + p + 4, 4) - 4 : ~0ull);
			p += tl ? 4 : 8;
			if (!CHECK_QUIET(tl < 29 && len <= commit - p, "CPU %u page %llu: entry type %u length %llu",
					 cpu, (unsigned long long)pg, tl, (unsigned long long)len))
				return;
			ts += delta;
			dat_check_event(data + p, (unsigned)len, ts, cpu, m, exp, n, &next, d);
			p += len;
		}
	}
}

/* The cmdlines section names exactly the pids above 0 of the events, each with its comm. */
static int dat_cmdlines_ok(const struct dat_walk *w, const struct ring_event *exp, size_t n)
{
	size_t want = 0, lines = 0;

	for (size_t i = 0; i < n; i++) {
		char line[64];
		int first = 1;

		if (!(exp[i].flags & VT_REC_FLAG_TASK) || exp[i].pid <= 0)
			continue;
		for (size_t j = 0; j < i && first; j++)
			first = !((exp[j].flags & VT_REC_FLAG_TASK) && exp[j].pid == exp[i].pid);
		if (!first)
			continue;
		want++;
		snprintf(line, sizeof(line), "%d %s\n", exp[i].pid, exp[i].comm);
		if (!memmem(w->cmdlines, w->cmdlines_len, line, strlen(line)))
			return 0;
	}
	for (size_t i = 0; i < w->cmdlines_len; i++)
		lines += w->cmdlines[i] == '\n';
	return lines == want;
}

static void check_walk(const char *name, const struct dat_walk *w, const struct trace_meta *m,
		       const struct ring_event *exp, size_t n)
{
	struct dat_decoded d = { 0 };
	uint64_t end = w->cpu_off[0];
	int layout_ok = 1;

	CHECK(w->ncpus == m->ncpus && w->ncpustat == m->ncpus && w->has_clock,
	      "%s: %u CPUs, a CPUSTAT option each, a trace clock", name, w->ncpus);
	/* ftrace's function and funcgraph_entry/_exit; one other system: kvm (trace-dat-events.c). */
	CHECK(w->nftrace == 3 && w->nsystems == 1 && w->function_fmt &&
	      memmem(w->function_fmt, w->function_fmt_len, "ID: 1\n", 6) &&
	      memmem(w->function_fmt, w->function_fmt_len,
		     "\tfield:unsigned long parent_ip;\toffset:16;\tsize:8;\tsigned:0;\n", 58),
	      "%s: the ftrace formats hold ftrace:function, id 1, parent_ip at 16", name);
	CHECK(w->fgraph_fmt[0] && w->fgraph_fmt[1] &&
	      memmem(w->fgraph_fmt[0], w->fgraph_fmt_len[0], "ID: 11\n", 7) &&
	      memmem(w->fgraph_fmt[0], w->fgraph_fmt_len[0], "\tfield:int depth;\toffset:16;\tsize:4;\tsigned:1;\n", 47) &&
	      memmem(w->fgraph_fmt[1], w->fgraph_fmt_len[1], "ID: 10\n", 7) &&
	      memmem(w->fgraph_fmt[1], w->fgraph_fmt_len[1],
		     "\tfield:unsigned long long rettime;\toffset:32;\tsize:8;\tsigned:0;\n", 64),
	      "%s: and funcgraph_entry (id 11, depth at 16) and funcgraph_exit (id 10, rettime at 32)", name);
	CHECK(dat_cmdlines_ok(w, exp, n), "%s: cmdlines: one \"pid comm\" line per pid above 0 the events have", name);
	CHECK(memmem(w->kallsyms, w->kallsyms_len, "ffffffff81001000 T fn_00\n", 25) &&
	      memmem(w->kallsyms, w->kallsyms_len, " d some_data\n", 13) &&
	      !memmem(w->kallsyms, w->kallsyms_len, "fn_05_alias", 11),
	      "%s: kallsyms lines \"addr type name\", the first of aliases only", name);
	for (unsigned i = 0; i < w->ncpus; i++) {
		layout_ok &= w->cpu_off[i] % TRACE_DAT_PAGE_SIZE == 0 && w->cpu_size[i] % TRACE_DAT_PAGE_SIZE == 0 &&
			     w->cpu_off[i] == end && w->cpu_off[i] >= w->pos;
		end = w->cpu_off[i] + w->cpu_size[i];
	}
	CHECK(layout_ok && end == w->len, "%s: CPU data page-aligned, contiguous, up to the end of the file (%zu bytes)",
	      name, w->len);
	if (!layout_ok || end != w->len)
		return;
	for (unsigned i = 0; i < w->ncpus; i++)
		dat_decode_cpu(w, i, m, exp, n, &d);
	CHECK(d.events == n && !d.mismatches, "%s: the pages decode to the %zu events written (%zu pages, %zu time extends)",
	      name, n, d.pages, d.extends);
	if (n > 1000)
		CHECK(d.extends > 10, "%s: deltas over 2^27 ns went through time extends (%zu)", name, d.extends);
}

#endif
