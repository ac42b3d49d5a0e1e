/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For test-trace-dat.c: the oracle. Debian's `trace-cmd report` reads the
 * .dat and every line it prints must say what the text writer says of the
 * same event, to the microsecond (both round to the nearest, as the
 * kernel's trace file does). One documented difference is allowed, and only
 * exactly it: report merges the CPUs by nanosecond and prints ties lowest
 * CPU first (exp[] is in that order; the tracer's order breaks ties by
 * TSC), and what Debian's trace-cmd prints otherwise (dat_line_agrees: pid 0's name,
 * comms cut at 8 characters, older latency letters). `-l` adds the latency columns; `-O parent=1` makes the
 * function plugin print the parent, which it hides by default.
 */
#ifndef TESTS_UNIT_DAT_REPORT_H
#define TESTS_UNIT_DAT_REPORT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "vmm/output/dat.h"

struct dat_line {
	unsigned cpu;
	char lat[8];		/* the five latency columns */
	uint64_t usec;
	char comm[64], func[128], parent[128];
};

/* The event lines of a text trace or a report (header lines skipped). */
static size_t dat_parse_lines(char *text, struct dat_line *out, size_t max, int report, size_t *bad)
{
	size_t n = 0;

	*bad = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		struct dat_line l = { 0 };
		uint64_t sec, usec;
		int got;

		if (line[0] == '#' || !strncmp(line, "cpus=", 5))
			continue;
		if (report)
			got = sscanf(line, " %63s %u%5c %" SCNu64 ".%" SCNu64 ": function: %127s <-- %127s",
				     l.comm, &l.cpu, l.lat, &sec, &usec, l.func, l.parent);
		else
			got = sscanf(line, " %63s [%u] %5c %" SCNu64 ".%" SCNu64 ": %127s <-%127s",
				     l.comm, &l.cpu, l.lat, &sec, &usec, l.func, l.parent);
		if (got != 7 || n >= max) {
			if ((*bad)++ < 3)
				printf("INFO: unparsed %s line: %s\n", report ? "report" : "text", line);
			continue;
		}
		l.usec = sec * 1000000 + usec;
		out[n++] = l;
	}
	return n;
}

/* The text writer's output for the events, in the tracer's order. */
static char *dat_text_of(const struct trace_meta *m, const struct ring_event *ev, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct trace_writer *w = NULL;
	struct errbuf err;

	if (!f || trace_writer_text.open(&w, f, m, &err))
		exit(1);
	for (size_t i = 0; i < n; i++)
		trace_writer_text.event(w, &ev[i]);
	trace_writer_text.close(w, NULL, &err);
	fclose(f);
	return buf;
}

static char *dat_read_all(FILE *f)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, got;

	do {
		if (len + 65536 > cap && !(buf = realloc(buf, cap = 2 * cap + 65536)))
			exit(1);
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got);
	buf[len] = 0;
	return buf;
}

/*
 * Report line r against the text writer's line t of the same event (ns from
 * its TSC). The one difference in the task column: pid 0 is "<idle>" to
 * trace-cmd whatever the file says, "swapper/CPU" in the text.
 */
static int dat_line_agrees(const struct dat_line *r, const struct dat_line *t)
{
	const char *dash = strrchr(t->comm, '-'), *rdash = strrchr(r->comm, '-');
	int idle = dash && !strcmp(dash, "-0");
	size_t name = dash ? (size_t)(dash - t->comm) : 0, shown = name < 8 ? name : 8;
	char lat[8];

	/*
	 * Debian 12's trace-cmd prints at most 8 characters of a comm, and the
	 * latency columns of its libtraceevent (1.7): irqs-off 'd' (BH-off
	 * unknown: 'D' is 'd', 'b' is '.'), need-resched 'N' for the task's
	 * flag (the CPU's 'p' unknown: 'n' and 'N' are 'N', 'p' is '.'),
	 * NMI unknown ('Z' is 'h', 'z' is '.').
	 */
	lat[0] = t->lat[0] == 'D' || t->lat[0] == 'd' ? 'd' : '.';
	lat[1] = t->lat[1] == 'n' || t->lat[1] == 'N' ? 'N' : '.';
	lat[2] = t->lat[2] == 'Z' ? 'h' : t->lat[2] == 'z' ? '.' : t->lat[2];
	memcpy(lat + 3, t->lat + 3, 3);
	if (idle ? strcmp(r->comm, "<idle>-0") :
		   (!rdash || (size_t)(rdash - r->comm) != shown || strncmp(r->comm, t->comm, shown) ||
		    strcmp(rdash, dash)))
		return 0;
	return r->cpu == t->cpu && !strcmp(r->lat, lat) && r->usec == t->usec && !strcmp(r->func, t->func) &&
	       !strcmp(r->parent, t->parent);
}

static void check_report(const char *name, const char *path, const struct trace_meta *m,
			 const struct ring_event *ev, const struct ring_event *exp, size_t n)
{
	char cmd[2400], errpath[600];
	struct dat_line *rl = calloc(n + 1, sizeof(*rl)), *tl = calloc(n + 1, sizeof(*tl));
	size_t nr, nt, bad_r, bad_t, reordered = 0, wrong = 0;
	struct stat st;
	char *rtext, *ttext;
	FILE *p;
	int status;

	snprintf(errpath, sizeof(errpath), "%s.err", path);
	snprintf(cmd, sizeof(cmd), "trace-cmd report -l -O parent=1 -i '%s' 2>'%s'", path, errpath);
	if (!rl || !tl || !(p = popen(cmd, "r")))
		exit(1);
	rtext = dat_read_all(p);
	status = pclose(p);
	CHECK(status == 0 && !stat(errpath, &st) && st.st_size == 0,
	      "%s: trace-cmd report reads it, status 0, nothing on stderr (status %d)", name, status);
	ttext = dat_text_of(m, ev, n);
	nr = dat_parse_lines(rtext, rl, n + 1, 1, &bad_r);
	nt = dat_parse_lines(ttext, tl, n + 1, 0, &bad_t);
	CHECK(nr == n && nt == n && !bad_r && !bad_t, "%s: report prints %zu event lines, text %zu, of %zu",
	      name, nr, nt, n);
	for (size_t k = 0; k < nr && k < n; k++) {
		size_t i = exp[k].seq;	/* the event's index in the tracer's order */

		reordered += i != k;
		if (!dat_line_agrees(&rl[k], &tl[i]) && wrong++ < 5)
			printf("INFO: line %zu: report %s [%u] %s %" PRIu64 " us %s <- %s; text %s [%u] %s %" PRIu64
			       " us %s <- %s\n", k, rl[k].comm, rl[k].cpu, rl[k].lat, rl[k].usec, rl[k].func,
			       rl[k].parent, tl[i].comm, tl[i].cpu, tl[i].lat, tl[i].usec, tl[i].func, tl[i].parent);
	}
	CHECK(nr == n && !wrong, "%s: every report line agrees with the text writer's: task, pid, CPU, "
	      "the five latency columns, microseconds, function, parent (%zu lines; %zu ties reordered by CPU)",
	      name, nr, reordered);
	free(rtext);
	free(ttext);
	free(rl);
	free(tl);
}

#endif
