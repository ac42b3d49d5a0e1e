// SPDX-License-Identifier: GPL-2.0
/*
 * The --graph writer (vmm/output/graph.c) against the layout of the
 * kernel's function_graph tracer (kernel/trace/trace_functions_graph.c,
 * default options, funcgraph-retval): the header, the CPU column, the
 * duration column and its overhead marks, leaves on one line, blocks that
 * open and close, return values (hex, error codes in decimal), the task
 * switch separator, --graph-depth, events that are not hooked calls, and
 * the calls still running when the trace ends. The expected lines are
 * written from the kernel's format rules, with a 1 GHz TSC (1 tick = 1 ns).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/output/vmevent.h"
#include "vmm/output/writer.h"

#define KT 0xffffffff81000000ull
#define TASK_A 0xffff888000100000ull
#define TASK_B 0xffff888000200000ull

static struct symtab syms;

static void build_symtab(void)
{
	static const struct { uint64_t addr; const char *name; } s[] = {
		{ KT + 0x100, "outer" }, { KT + 0x200, "inner" }, { KT + 0x300, "leaf" },
		{ KT + 0x400, "other" }, { KT + 0x1000, "_etext" },
	};

	symtab_init(&syms);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (symtab_add(&syms, s[i].addr, 'T', s[i].name, strlen(s[i].name))) {
			printf("FAIL: symtab_add %s\n", s[i].name);
			exit(1);
		}
	if (symtab_finish(&syms)) {
		printf("FAIL: symtab_finish\n");
		exit(1);
	}
}

static struct ring_event ev_task(uint64_t task, int pid, const char *comm, uint16_t cpu)
{
	struct ring_event ev = { .cpu = cpu, .task = task, .pid = pid, .flags = VT_REC_FLAG_TASK };

	snprintf(ev.comm, sizeof(ev.comm), "%s", comm);
	return ev;
}

static struct ring_event enter(uint64_t tsc, uint64_t func, uint32_t depth, struct ring_event who)
{
	who.tsc = tsc;
	who.func = func;
	who.depth = depth;
	who.flags |= VT_REC_FLAG_HOOKED;
	return who;
}

static struct ring_event leave(uint64_t tsc, uint64_t calltime, uint64_t func, uint32_t depth, uint64_t ret,
			       struct ring_event who)
{
	who.tsc = tsc;
	who.calltime = calltime;
	who.func = func;
	who.depth = depth;
	who.retval = ret;
	who.flags |= VT_REC_FLAG_EXIT;
	return who;
}

/* Runs events through a graph writer; returns what it wrote (static). */
static const char *run(const struct ring_event *ev, size_t n, unsigned ncpus, int retval, unsigned depth)
{
	static char out[16384];
	FILE *f = fmemopen(out, sizeof(out) - 1, "w");
	struct trace_meta meta = { .syms = &syms, .tsc_khz = 1000000, .ncpus = ncpus,
				   .graph_retval = retval, .graph_depth = depth };
	struct trace_writer *w;
	struct errbuf err = { 0 };
	int rc;

	memset(out, 0, sizeof(out));
	rc = trace_writer_graph.open(&w, f, &meta, &err);
	CHECK(rc == 0, "open: %d %s", rc, err.msg);
	for (size_t i = 0; i < n && !rc; i++)
		rc = trace_writer_graph.event(w, &ev[i]);
	CHECK(rc == 0, "events: %d", rc);
	rc = trace_writer_graph.close(w, NULL, &err);
	CHECK(rc == 0, "close: %d %s", rc, err.msg);
	fclose(f);
	return out;
}

/* The output after the header's six lines. */
static const char *body(const char *out)
{
	for (int i = 0; i < 6 && out; i++)
		out = strchr(out, '\n') ? strchr(out, '\n') + 1 : NULL;
	return out ? out : "";
}

static void expect(const char *what, const char *want, const char *got)
{
	CHECK(strcmp(got, want) == 0, "%s", what);
	if (strcmp(got, want))
		printf("--- want\n%s--- got\n%s---\n", want, got);
}

#define EXPECT(want, got) expect(__func__, (want), (got))

static void test_header(void)
{
	const char *out = run(NULL, 0, 2, 0, 0);

	CHECK(strncmp(out, "# tracer: function_graph\n#\n", 27) == 0, "the header names the tracer");
	CHECK(strstr(out, "\n# CPU  DURATION                  FUNCTION CALLS\n"
			  "# |     |   |                     |   |   |   |\n") != NULL,
	      "the column header of CPU, DURATION and FUNCTION CALLS");
	EXPECT("", body(out));
}

/* outer { inner { leaf(); } } on CPU 0 of 2, then a leaf with a return value. */
static void test_nesting(void)
{
	struct ring_event a = ev_task(TASK_A, 42, "sysloop", 0);
	struct ring_event ev[] = {
		enter(1000, KT + 0x100, 0, a),
		enter(2000, KT + 0x200, 1, a),
		enter(3000, KT + 0x300, 2, a),
		leave(3531, 3000, KT + 0x300, 2, 0, a),			/* 0.531 us */
		leave(14345, 2000, KT + 0x200, 1, 0, a),		/* 12.345 us: '+' */
		leave(1001000, 1000, KT + 0x100, 0, 0, a),		/* 1000 us: '!' */
		enter(2000000, KT + 0x400, 0, a),
		leave(2000000 + 123456789, 2000000, KT + 0x400, 0, 0, a),	/* 123456.789 us: '@' */
	};

	EXPECT(" 0)               |  outer() {\n"
	       " 0)               |    inner() {\n"
	       " 0)   0.531 us    |      leaf();\n"
	       " 0) + 12.345 us   |    }\n"
	       " 0) ! 1000.000 us |  }\n"
	       " 0) @ 123456.7 us |  other();\n",
	       body(run(ev, sizeof(ev) / sizeof(ev[0]), 2, 0, 0)));
}

/* funcgraph-retval: 0 and plain values in hex, 32-bit error codes in decimal. */
static void test_retval(void)
{
	struct ring_event a = ev_task(TASK_A, 42, "argcall", 0);
	struct ring_event ev[] = {
		enter(1000, KT + 0x100, 0, a),
		enter(2000, KT + 0x300, 1, a),
		leave(3000, 2000, KT + 0x300, 1, 0xffffffea, a),		/* (int)-22 */
		enter(4000, KT + 0x300, 1, a),
		leave(5000, 4000, KT + 0x300, 1, 0xfffffffffffffff7ull, a),	/* (long)-9 */
		enter(6000, KT + 0x300, 1, a),
		leave(7000, 6000, KT + 0x300, 1, 0xfffffffffffff000ull, a),	/* -4096: no errno */
		leave(9000, 1000, KT + 0x100, 0, 0x4d, a),
		enter(10000, KT + 0x300, 0, a),
		leave(11000, 10000, KT + 0x300, 0, 0, a),
	};

	EXPECT(" 0)               |  outer() {\n"
	       " 0)   1.000 us    |    leaf(); /* = -22 */\n"
	       " 0)   1.000 us    |    leaf(); /* = -9 */\n"
	       " 0)   1.000 us    |    leaf(); /* = 0xfffffffffffff000 */\n"
	       " 0)   8.000 us    |  } /* outer = 0x4d */\n"
	       " 0)   1.000 us    |  leaf(); /* = 0x0 */\n",
	       body(run(ev, sizeof(ev) / sizeof(ev[0]), 1, 1, 0)));
}

/*
 * Two CPUs interleaved; a task switch on CPU 1; a call whose return comes on
 * another CPU (the task moved) closes with its name; --graph-depth 2 hides
 * the depth-2 call; an unhooked entry is a comment.
 */
static void test_cpus_switch_depth(void)
{
	struct ring_event a0 = ev_task(TASK_A, 7, "kworker/0:1", 0);
	struct ring_event b1 = ev_task(TASK_B, 1234, "bash", 1);
	struct ring_event a1 = ev_task(TASK_A, 7, "kworker/0:1", 1);
	struct ring_event unhooked = ev_task(TASK_B, 1234, "bash", 1);
	struct ring_event ev[] = {
		enter(1000, KT + 0x100, 0, a0),
		enter(1500, KT + 0x200, 0, b1),
		enter(2000, KT + 0x200, 1, a0),
		enter(2500, KT + 0x300, 2, a0),			/* too deep for --graph-depth 2 */
		leave(3000, 2500, KT + 0x300, 2, 0, a0),
		leave(4000, 1500, KT + 0x200, 0, 0, b1),
		leave(5000, 2000, KT + 0x200, 1, 0, a0),
		leave(9000, 1000, KT + 0x100, 0, 0, a1),		/* returns on CPU 1 */
	};
	const char *out;

	unhooked.tsc = 9500;
	unhooked.func = KT + 0x400;
	out = body(run(ev, sizeof(ev) / sizeof(ev[0]), 2, 0, 2));
	EXPECT(" 0)               |  outer() {\n"
	       " 0)               |    inner() {\n"
	       " 1)   2.500 us    |  inner();\n"
	       " 0)   3.000 us    |    }\n"
	       " ------------------------------------------\n"
	       " 1)   bash-1234    =>   kworker-7   \n"
	       " ------------------------------------------\n\n"
	       " 1)   8.000 us    |  } /* outer */\n",
	       out);

	/* Not hooked: a comment where the CPU's calls are, never a block. */
	struct ring_event ev2[] = { enter(1000, KT + 0x100, 0, b1), unhooked };

	ev2[1].cpu = 1;
	EXPECT(" 1)               |  outer() {\n"
	       " 1)               |    other(); /* return not recorded */\n"
	       " 1)               |  /* outer: still running when the trace ended (bash-1234) */\n",
	       body(run(ev2, 2, 2, 0, 0)));
}

/*
 * A task that moves while inside a call: its return on CPU 1 comes while
 * its entry still waits on CPU 0 (nothing else happened there); the entry's
 * block opens first, on CPU 0, and the return names the function.
 */
static void test_moved_while_waiting(void)
{
	struct ring_event a0 = ev_task(TASK_A, 24, "kworker/0:2", 0);
	struct ring_event a1 = ev_task(TASK_A, 24, "kworker/0:2", 1);
	struct ring_event b1 = ev_task(TASK_B, 20, "kdevtmpfs", 1);
	struct ring_event ev[] = {
		enter(1000, KT + 0x100, 0, b1),
		leave(2000, 1000, KT + 0x100, 0, 0, b1),
		enter(3000, KT + 0x400, 0, a0),
		leave(9000, 3000, KT + 0x400, 0, 0, a1),
	};

	EXPECT(" 1)   1.000 us    |  outer();\n"
	       " 0)               |  other() {\n"
	       " ------------------------------------------\n"
	       " 1)   kdevtmp-20   =>   kworker-24  \n"
	       " ------------------------------------------\n\n"
	       " 1)   6.000 us    |  } /* other */\n",
	       body(run(ev, sizeof(ev) / sizeof(ev[0]), 2, 0, 0)));
}

/* Calls still running at the end: the open block's line, then one comment each, innermost first. */
static void test_in_flight(void)
{
	struct ring_event a = ev_task(TASK_A, 0, "swapper/0", 0);
	struct ring_event ev[] = {
		enter(1000, KT + 0x100, 0, a),
		enter(2000, KT + 0x200, 1, a),
	};

	EXPECT(" 0)               |  outer() {\n"
	       " 0)               |    inner() {\n"
	       " 0)               |    /* inner: still running when the trace ended (swapper/0-0) */\n"
	       " 0)               |  /* outer: still running when the trace ended (swapper/0-0) */\n",
	       body(run(ev, 2, 1, 0, 0)));
}

/*
 * A task that exited inside a call: its task_struct's next owner enters at
 * depth 0, and the calls left open are said not to have returned, under
 * the task that entered them, before the new owner's first line.
 */
static void test_left_by_task(void)
{
	struct ring_event old = ev_task(TASK_A, 30, "sysloop", 0), next = ev_task(TASK_A, 35, "reboot", 0);
	struct ring_event ev[] = {
		enter(1000, KT + 0x100, 0, old),
		enter(2000, KT + 0x200, 1, old),
		enter(9000, KT + 0x300, 0, next),
		leave(9500, 9000, KT + 0x300, 0, 0, next),
	};

	EXPECT(" 0)               |  outer() {\n"
	       " 0)               |    inner() {\n"
	       " ------------------------------------------\n"
	       " 0)   sysloop-30   =>   reboot-35   \n"
	       " ------------------------------------------\n\n"
	       " 0)               |    /* inner: return not recorded (sysloop-30) */\n"
	       " 0)               |  /* outer: return not recorded (sysloop-30) */\n"
	       " 0)   0.500 us    |  leaf();\n",
	       body(run(ev, sizeof(ev) / sizeof(ev[0]), 1, 0, 0)));
}

/* Durations past 4 integer digits lose decimals, as trace_print_graph_duration cuts them. */
static void test_duration_widths(void)
{
	struct ring_event a = ev_task(TASK_A, 1, "init", 0);
	struct ring_event ev[] = {
		enter(0, KT + 0x300, 0, a), leave(12345678, 0, KT + 0x300, 0, 0, a),		/* 12345.67 */
		enter(20000000, KT + 0x300, 0, a), leave(20000000 + 1234567891, 20000000, KT + 0x300, 0, 0, a),
		enter(1300000000, KT + 0x300, 0, a), leave(1300000000 + 2000000, 1300000000, KT + 0x300, 0, 0, a),
	};

	EXPECT(" 0) * 12345.67 us |  leaf();\n"
	       " 0) $ 1234567 us  |  leaf();\n"
	       " 0) # 2000.000 us |  leaf();\n",
	       body(run(ev, sizeof(ev) / sizeof(ev[0]), 1, 0, 0)));
}

int main(void)
{
	build_symtab();
	test_header();
	test_nesting();
	test_retval();
	test_cpus_switch_depth();
	test_moved_while_waiting();
	test_in_flight();
	test_left_by_task();
	test_duration_widths();
	symtab_destroy(&syms);
	return check_exit();
}
