// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the raw trace reader (vmm/output/raw-read.c): the
 * input is a whole trace file. raw_read_open takes a path, so the input
 * goes into a memfd opened through /proc/self/fd: the reader maps it as
 * it maps a real file, with no change to its code. Checked: the report
 * stays within the file and its own counts; a replay hands on exactly
 * the events the open counted; a second replay gives the same; a
 * conversion through the text writer succeeds on whatever opened. What
 * reads recordings besides the reader runs on whatever opened too: the
 * --graph layout, trace.dat and Perfetto with their returns, the boot
 * chart (stages, calls, SVG) and vmmtrace diff's models of the file
 * against itself (two recordings, and two runs a side).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/output/chart.h"
#include "vmm/output/dat.h"
#include "vmm/output/diff.h"
#include "vmm/output/perfetto.h"
#include "vmm/output/raw-read.h"

struct count {
	uint64_t n;
	uint64_t hash;
};

static int count_ev(void *opaque, const struct ring_event *ev)
{
	struct count *c = opaque;

	c->n++;
	c->hash = (c->hash ^ ev->tsc ^ ev->func * 3 ^ ev->parent * 5 ^ ev->cpu) * 1099511628211ull;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int chart_ev(void *opaque, const struct ring_event *ev)
{
	return chart_event(opaque, ev);
}

/* The boot chart of whatever opened, into out. */
static void fuzz_chart(struct raw_reader *r, FILE *out)
{
	struct chart_opts o = { .min_ns = 0 };
	struct chart *c;
	struct errbuf err;
	int rc;

	if (chart_new(&c, raw_read_meta(r), &o))
		return;
	do
		rc = raw_read_replay(r, chart_ev, c) ? -1 : chart_end_pass(c);
	while (rc == 1);
	if (!rc)
		chart_write_svg(c, out, "fuzz", &err);
	chart_free(c);
}

/* vmmtrace diff's model of the file against itself: it must agree. */
static void fuzz_diff(const char *path)
{
	struct diff_side a = { 0 }, b = { 0 };
	struct diff_part *parts = NULL;
	struct diff_names nm;
	struct errbuf err;
	size_t n = 0;

	if (diff_names_init(&nm, NULL, NULL))
		return;
	if (!diff_side_open(&a, path, &nm, &err) && !diff_side_open(&b, path, &nm, &err) &&
	    !diff_side_read(&a, &err) && !diff_side_read(&b, &err) && !diff_parts(&a, &b, 3, &parts, &n) &&
	    !diff_side_details(&a, &err) && !diff_side_details(&b, &err)) {
		diff_parts_order(parts, n);
		for (size_t i = 0; i < n; i++)
			if (!parts[i].agree)
				abort();	/* a recording parts from itself */
	}
	free(parts);
	diff_side_close(&a);
	diff_side_close(&b);
	diff_names_destroy(&nm);
}

/* The runs model: the file twice a side, --force (a cut file too); no place may differ at all. */
static void fuzz_diff_runs(const char *path)
{
	struct diff_names nm;
	struct diff_runs r;
	struct errbuf err;
	int rc = 0;

	if (diff_names_init(&nm, NULL, NULL))
		return;
	if (diff_runs_init(&r, &nm)) {
		diff_names_destroy(&nm);
		return;
	}
	for (int i = 0; !rc && i < 4; i++)
		rc = diff_runs_add(&r, i >= 2, path, 1, &err);
	if (!rc && !diff_runs_compare(&r) && r.nplaces)
		abort();	/* runs of one recording differ */
	diff_runs_destroy(&r);
	diff_names_destroy(&nm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct raw_reader *r;
	const struct raw_read_report *rep;
	struct count a = { 0, 0 }, b = { 0, 0 };
	struct errbuf err;
	FILE *null;

	if (fd < 0) {
		fd = memfd_create("fuzz-raw", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	if (raw_read_open(&r, path, &err))
		return 0;
	rep = raw_read_report(r);
	if (rep->file_size != size || rep->ndamage > RAW_READ_MAX_DAMAGE ||
	    rep->ndamage > rep->damaged || rep->event_chunks > rep->chunks)
		abort();
	if (rep->cut && (rep->cut_offset > size || rep->cut_offset + rep->cut_bytes != size))
		abort();	/* a cut is the file's tail */
	for (unsigned i = 0; i < rep->ndamage; i++)
		if (rep->damage[i].offset > size || !rep->damage[i].why)
			abort();
	if (raw_read_meta(r) == NULL)
		abort();
	/* Replay hands on the events the open counted, fewer only if a chunk
	 * that checksummed still fails to decode (then added as damage). */
	if (raw_read_replay(r, count_ev, &a))
		abort();
	if (a.n > rep->events)
		abort();
	if (raw_read_replay(r, count_ev, &b) || a.n != b.n || a.hash != b.hash)
		abort();	/* replays are repeatable */
	null = fopen("/dev/null", "w");
	if (null) {
		raw_read_convert(r, &trace_writer_text, null, &err);
		raw_read_convert(r, &trace_writer_graph, null, &err);
		raw_read_convert(r, &trace_writer_dat, null, &err);
		raw_read_convert(r, &trace_writer_perfetto, null, &err);
		fuzz_chart(r, null);
		fclose(null);
	}
	raw_read_close(r);
	fuzz_diff(path);
	fuzz_diff_runs(path);
	return 0;
}
