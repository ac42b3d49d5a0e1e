// SPDX-License-Identifier: GPL-2.0
/*
 * Reads a trace.dat back through libtracecmd's public reader API, as
 * KernelShark does (tracecmd_open, tracecmd_iterate_events), and checks
 * every record against NAME.expect written by `test-trace-dat --emit`:
 * "events N", then "cpu ns ip parent flags preempt_count pid comm" per
 * event in the order the reader must return them (comm "-" for none).
 * "events N loose" (a real boot's trace) checks only the count, the event
 * type, that the pid is one a kernel gives, the addresses and that time
 * never goes back. Built by dat-libtracecmd.sh with pkg-config, so
 * that vmmtrace itself never links libtracecmd.
 *
 *   dat-read FILE.dat FILE.expect
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <trace-cmd.h>

struct want {
	FILE *expect;
	int loose;		/* "events N loose": no per-record lines, only the count and sanity */
	unsigned long long last_ts;
	struct tep_handle *tep;
	struct tep_format_field *ip, *parent, *flags, *pc, *pid;
	int type;
	unsigned long long seen, bad;
};

static unsigned long long field(struct tep_format_field *f, struct tep_record *rec)
{
	unsigned long long v = ~0ull;

	if (!f || tep_read_number_field(f, rec->data, &v))
		return ~0ull;
	return v;
}

static int on_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *opaque)
{
	struct want *w = opaque;
	unsigned wcpu, wflags, wpc;
	uint64_t wns, wip, wparent;
	char wcomm[32];
	const char *comm;
	int ok, wpid;

	(void)h;
	w->seen++;
	if (w->loose) {
		/* A real boot's trace: ftrace:function, a pid, addresses, time never going back. */
		ok = tep_data_type(w->tep, rec) == w->type && field(w->pid, rec) <= 4194304 && field(w->ip, rec) &&
		     field(w->parent, rec) && rec->ts >= w->last_ts;
		w->last_ts = rec->ts;
		if (!ok && w->bad++ < 5)
			printf("INFO: record %llu: cpu %d ts %llu ip %llx parent %llx\n", w->seen, cpu, rec->ts,
			       field(w->ip, rec), field(w->parent, rec));
		return 0;
	}
	if (fscanf(w->expect, "%u %" SCNu64 " %" SCNu64 " %" SCNu64 " %u %u %d %31s", &wcpu, &wns, &wip, &wparent,
		   &wflags, &wpc, &wpid, wcomm) != 8) {
		if (w->bad++ < 5)
			printf("INFO: record %llu was never written\n", w->seen);
		return 0;
	}
	/* The comm of a pid comes from the file's cmdlines; pid 0 is always "<idle>" to libtraceevent. */
	comm = tep_data_comm_from_pid(w->tep, (int)field(w->pid, rec));
	ok = (unsigned)cpu == wcpu && rec->cpu == cpu && rec->ts == wns && tep_data_type(w->tep, rec) == w->type &&
	     field(w->ip, rec) == wip && field(w->parent, rec) == wparent &&
	     field(w->flags, rec) == wflags && field(w->pc, rec) == wpc && field(w->pid, rec) == (unsigned)wpid &&
	     (wpid == 0 ? !strcmp(comm, "<idle>") : !strcmp(comm, wcomm));
	if (!ok && w->bad++ < 5)
		printf("INFO: record %llu: cpu %d ts %llu ip %llx parent %llx flags %llx pc %llx pid %llu comm %s; "
		       "want cpu %u ts %" PRIu64 " ip %" PRIx64 " parent %" PRIx64 " flags %x pc %x pid %d comm %s\n",
		       w->seen, cpu, rec->ts, field(w->ip, rec), field(w->parent, rec), field(w->flags, rec),
		       field(w->pc, rec), field(w->pid, rec), comm, wcpu, wns, wip, wparent, wflags, wpc, wpid, wcomm);
	return 0;
}

int main(int argc, char **argv)
{
	struct want w = { 0 };
	struct tracecmd_input *h;
	struct tep_event *ev;
	unsigned long long n = 0;
	const char *comm;
	int fails = 0;

	if (argc != 3 || !(w.expect = fopen(argv[2], "r")) || fscanf(w.expect, "events %llu", &n) != 1) {
		printf("FAIL: usage: dat-read FILE.dat FILE.expect (with an \"events N\" line)\n");
		return 1;
	}
	{
		char word[16] = "";

		w.loose = fscanf(w.expect, " %15[a-z]", word) == 1 && !strcmp(word, "loose");
	}
	h = tracecmd_open(argv[1], 0);
	if (!h) {
		printf("FAIL: %s: tracecmd_open refuses it\n", argv[1]);
		return 1;
	}
	w.tep = tracecmd_get_tep(h);
	ev = tep_find_event_by_name(w.tep, "ftrace", "function");
	if (ev) {
		w.type = ev->id;
		w.ip = tep_find_field(ev, "ip");
		w.parent = tep_find_field(ev, "parent_ip");
		w.flags = tep_find_common_field(ev, "common_flags");
		w.pc = tep_find_common_field(ev, "common_preempt_count");
		w.pid = tep_find_common_field(ev, "common_pid");
	}
#define DAT_CHECK(cond, ...) (printf((cond) ? "PASS: " : "FAIL: "), printf(__VA_ARGS__), printf("\n"), fails += !(cond))
	DAT_CHECK(ev && ev->id == 1 && w.ip && w.parent && w.flags && w.pc && w.pid,
		  "%s: libtracecmd knows ftrace:function (id 1) with ip, parent_ip, common_flags, common_preempt_count, common_pid",
		  argv[1]);
	comm = tep_data_comm_from_pid(w.tep, 0);
	DAT_CHECK(comm && !strcmp(comm, "<idle>"), "%s: pid 0 is \"%s\"", argv[1], comm ? comm : "(null)");
	DAT_CHECK(tracecmd_iterate_events(h, NULL, 0, on_record, &w) >= 0,
		  "%s: tracecmd_iterate_events walks the file", argv[1]);
	DAT_CHECK(w.seen == n && !w.bad, w.loose ?
		  "%s: %llu records of %llu, each ftrace:function with ip, parent_ip, a pid, time never going back (%llu differ)" :
		  "%s: %llu records of %llu, each with the written CPU, ns timestamp, ip, parent_ip, flags, preempt count, pid and its comm (%llu differ)",
		  argv[1], w.seen, n, w.bad);
	tracecmd_close(h);
	fclose(w.expect);
	return fails ? 1 : 0;
}
