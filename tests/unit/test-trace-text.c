// SPDX-License-Identifier: GPL-2.0
/*
 * The text writer (vmm/output/text.c) against ftrace's `trace` layout:
 * symbolisation of the traced slot (exact symbol start only) and of the
 * parent (any address inside a symbol, without offset), hexadecimal for
 * everything else, the timestamp from the guest TSC (tsc_base is time zero,
 * tsc_khz the rate), the irqs-off flag, and the CPU column. The guest writes
 * func, parent, cpu, flags and tsc, so all of them take hostile values too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/output/text.h"
#include "vmm/output/vmevent.h"

#define KT 0xffffffff81000000ull

static struct symtab syms;

static void build_symtab(void)
{
	static const struct { uint64_t addr; char type; const char *name; } s[] = {
		/* Out of address order on purpose: symtab_finish sorts. */
		{ KT + 0x0800, 'T', "x86_64_start_reservations" },
		{ KT + 0x0000, 'T', "_stext" },
		{ KT + 0x0100, 'T', "start_kernel" },
		{ KT + 0x0100, 't', "start_kernel_alias" },	/* an alias: the first added wins */
		{ KT + 0x0400, 't', "setup_arch" },
		{ KT + 0x0600, 'd', "some_data" },
		{ KT + 0x1000, 'T', "_etext" },			/* last: no extent */
	};

	symtab_init(&syms);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (symtab_add(&syms, s[i].addr, s[i].type, s[i].name, strlen(s[i].name))) {
			printf("FAIL: symtab_add %s\n", s[i].name);
			exit(1);
		}
	if (symtab_finish(&syms)) {
		printf("FAIL: symtab_finish\n");
		exit(1);
	}
}

static const char *fmt(const struct trace_text *t, uint64_t tsc, uint64_t func, uint64_t parent,
		       uint16_t cpu, uint16_t flags)
{
	static char buf[512];
	struct ring_event ev = { .tsc = tsc, .func = func, .parent = parent, .cpu = cpu, .flags = flags };

	trace_text_format(t, &ev, buf, sizeof(buf));
	return buf;
}

#define EXPECT_LINE(want, got)                                                    \
	do {                                                                      \
		const char *g_ = (got);                                           \
		CHECK(!strcmp(g_, want), "format: [%s]%s%s%s", g_,                \
		      strcmp(g_, want) ? " want [" : "", strcmp(g_, want) ? want : "", \
		      strcmp(g_, want) ? "]" : "");                               \
	} while (0)

#define PFX "           <...>-0       "

static void test_symbols(void)
{
	struct trace_text t;

	trace_text_init(&t, stdout, &syms, 1000000);
	EXPECT_LINE(PFX "[000] .....      0.000000: start_kernel <-x86_64_start_reservations",
		    fmt(&t, 0, KT + 0x100, KT + 0x81d, 0, 0));
	EXPECT_LINE(PFX "[000] .....      0.000000: setup_arch <-start_kernel",
		    fmt(&t, 0, KT + 0x400, KT + 0x1ff, 0, 0));
	/* A slot is a function's first byte: anything else is printed as an address. */
	EXPECT_LINE(PFX "[000] .....      0.000000: 0xffffffff81000404 <-start_kernel",
		    fmt(&t, 0, KT + 0x404, KT + 0x100, 0, 0));
	/* Below the first symbol, past the last one, nothing known: addresses. */
	EXPECT_LINE(PFX "[000] .....      0.000000: _stext <-0xffffffff80fffff0",
		    fmt(&t, 0, KT, KT - 0x10, 0, 0));
	EXPECT_LINE(PFX "[000] .....      0.000000: 0xffffffff81001010 <-0xffffffff81001010",
		    fmt(&t, 0, KT + 0x1010, KT + 0x1010, 0, 0));
	EXPECT_LINE(PFX "[000] .....      0.000000: 0x0 <-0xffffffffffffffff",
		    fmt(&t, 0, 0, UINT64_MAX, 0, 0));
	/* The symbol a parent lies in, whatever its type (as kallsyms_lookup does). */
	EXPECT_LINE(PFX "[000] .....      0.000000: setup_arch <-some_data",
		    fmt(&t, 0, KT + 0x400, KT + 0x7ff, 0, 0));

	trace_text_init(&t, stdout, NULL, 1000000);
	EXPECT_LINE(PFX "[000] .....      0.000000: 0xffffffff81000100 <-0xffffffff8100081d",
		    fmt(&t, 0, KT + 0x100, KT + 0x81d, 0, 0));
}

static void test_time_flags_cpu(void)
{
	struct trace_text t;

	/*
	 * 2 GHz; time zero at TSC 5000; 1999 ticks is under a microsecond.
	 * Microseconds are rounded to the nearest, as the kernel's trace file
	 * (ns2usecs) and trace-cmd report print them.
	 */
	trace_text_init(&t, stdout, &syms, 2000000);
	t.tsc_base = 5000;
	EXPECT_LINE(PFX "[000] .....      0.000000: start_kernel <-_stext",
		    fmt(&t, 5000, KT + 0x100, KT + 1, 0, 0));
	EXPECT_LINE(PFX "[000] .....      3.001235: start_kernel <-_stext",
		    fmt(&t, 5000 + 3 * 2000000000ull + 1234 * 2000ull + 1999, KT + 0x100, KT + 1, 0, 0));
	EXPECT_LINE(PFX "[000] .....      3.001234: start_kernel <-_stext",
		    fmt(&t, 5000 + 3 * 2000000000ull + 1234 * 2000ull + 999, KT + 0x100, KT + 1, 0, 0));
	EXPECT_LINE(PFX "[000] .....      3.001235: start_kernel <-_stext",
		    fmt(&t, 5000 + 3 * 2000000000ull + 1234 * 2000ull + 1000, KT + 0x100, KT + 1, 0, 0));
	EXPECT_LINE(PFX "[000] .....      0.000000: start_kernel <-_stext",
		    fmt(&t, 4999, KT + 0x100, KT + 1, 0, 0));
	EXPECT_LINE(PFX "[000] .....  86400.000001: start_kernel <-_stext",
		    fmt(&t, 5000 + 86400 * 2000000000ull + 2000, KT + 0x100, KT + 1, 0, 0));
	EXPECT_LINE(PFX "[000] .....  172800.000000: start_kernel <-_stext",
		    fmt(&t, 5000 + 172800 * 2000000000ull, KT + 0x100, KT + 1, 0, 0));

	/* No frequency from KVM: 1 GHz. */
	trace_text_init(&t, stdout, &syms, 0);
	CHECK(t.tsc_khz == 1000000 && t.tsc_base == 0, "trace_text_init: no TSC rate means 1 GHz, base 0");
	EXPECT_LINE(PFX "[000] .....   1234.567890: start_kernel <-_stext",
		    fmt(&t, 1234567890123ull, KT + 0x100, KT + 1, 0, 0));
	/* 1 kHz and the largest TSC: no overflow in the conversion. */
	trace_text_init(&t, stdout, &syms, 1);
	EXPECT_LINE(PFX "[000] .....  18446744073709551.615000: start_kernel <-_stext",
		    fmt(&t, UINT64_MAX, KT + 0x100, KT + 1, 0, 0));
	/* A rate that does not divide evenly: 2.5 GHz, 1 s + 0.4 ns. */
	trace_text_init(&t, stdout, &syms, 2500000);
	EXPECT_LINE(PFX "[000] .....      1.000000: start_kernel <-_stext",
		    fmt(&t, 2500000001ull, KT + 0x100, KT + 1, 0, 0));
	/* 999999499.6 ns rounds down to 0.999999 s, 999999500 ns up to 1 s. */
	EXPECT_LINE(PFX "[000] .....      0.999999: start_kernel <-_stext",
		    fmt(&t, 2499998749ull, KT + 0x100, KT + 1, 0, 0));
	EXPECT_LINE(PFX "[000] .....      1.000000: start_kernel <-_stext",
		    fmt(&t, 2499998750ull, KT + 0x100, KT + 1, 0, 0));

	trace_text_init(&t, stdout, &syms, 1000000);
	EXPECT_LINE(PFX "[003] d....      0.000001: start_kernel <-_stext",
		    fmt(&t, 1000, KT + 0x100, KT + 1, 3, VT_REC_FLAG_IRQS_OFF));
	EXPECT_LINE(PFX "[001] .....      0.000001: start_kernel <-_stext",
		    fmt(&t, 1000, KT + 0x100, KT + 1, 1, 0));
	/* RING_EV_VM marks a VM event the host made (vmevent.h), never a record. */
	EXPECT_LINE(PFX "[002] .....      0.000001: kvm_userspace_exit: reason IO (2) [start_kernel+0x4]",
		    fmt(&t, 1000, KT + 0x104, 2, 2, vmev_flags(VMEV_EXIT, 0)));
	EXPECT_LINE(PFX "[000] .....      0.000001: kvm_userspace_exit: reason HLT (5) [0xffffffff70000000]",
		    fmt(&t, 1000, 0xffffffff70000000ull, 5, 0, vmev_flags(VMEV_EXIT, 0)));
}

/* A function event with a task and a preempt count. */
static const char *fmt_task(const struct trace_text *t, uint16_t cpu, uint16_t flags, int32_t pid,
			    const char *comm, uint32_t preempt)
{
	static char buf[512];
	struct ring_event ev = { .tsc = 1000, .func = KT + 0x100, .parent = KT + 1, .cpu = cpu,
				 .flags = flags, .task = 0xffff888001000000ull, .pid = pid, .preempt = preempt };

	snprintf(ev.comm, sizeof(ev.comm), "%s", comm);
	trace_text_format(t, &ev, buf, sizeof(buf));
	return buf;
}

/*
 * The TASK-PID column and the five flag columns, as ftrace's
 * trace_print_context and trace_print_lat_fmt print them: "%16s-%-7d",
 * then irqs-off/BH (d, b, D), need-resched (n, p, N), hard/softirq/NMI
 * (h, s, H, z, Z), preempt depth and migrate-disable in hex (at most f).
 */
static void test_task_columns(void)
{
	const uint16_t T = VT_REC_FLAG_TASK, C = VT_REC_FLAG_CTX;
	struct trace_text t;

	trace_text_init(&t, stdout, &syms, 1000000);
	EXPECT_LINE("         sysloop-1234    [002] .....      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 2, T | C, 1234, "sysloop", 0));
	/* pid 0: the boot and idle tasks, named for their CPU. */
	EXPECT_LINE("       swapper/3-0       [003] .....      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 3, T | C, 0, "swapper", 0));
	/* No task known: ftrace's "<...>", pid 0. */
	EXPECT_LINE(PFX "[000] .....      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, C, 77, "ignored", 0));
	/* The longest comm a kernel keeps (15 characters) and the largest pid (PID_MAX_LIMIT). */
	EXPECT_LINE(" x123456789abcde-4194304 [001] .....      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 1, T, 4194304, "x123456789abcde", 0));
	/* hardirq with preemption off once, interrupts off. */
	EXPECT_LINE("          <idle>-9       [000] d.h1.      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, T | C | VT_REC_FLAG_IRQS_OFF, 9, "<idle>", 0x10001));
	/* Serving a softirq ('s'); bottom halves disabled, not serving ('b'; with irqs off 'D'). */
	EXPECT_LINE(PFX "[000] ..s..      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, C, 0, "", 0x100));
	EXPECT_LINE(PFX "[000] b....      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, C, 0, "", 0x200));
	EXPECT_LINE(PFX "[000] D....      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, C | VT_REC_FLAG_IRQS_OFF, 0, "", 0x200));
	/* hardirq in a softirq 'H', NMI 'z', NMI in a hardirq 'Z'. */
	EXPECT_LINE(PFX "[000] ..H..      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, C, 0, "", 0x10100));
	EXPECT_LINE(PFX "[000] ..z..      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, C, 0, "", 0x100000));
	EXPECT_LINE(PFX "[000] ..Z..      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, C, 0, "", 0x110000));
	/* need-resched: the task's flag 'n', the CPU's 'p', both 'N'. */
	EXPECT_LINE("               a-5       [000] .n...      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, T | VT_REC_FLAG_NEED_RESCHED, 5, "a", 0));
	EXPECT_LINE(PFX "[000] .p...      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, VT_REC_FLAG_PREEMPT_RESCHED, 0, "", 0));
	EXPECT_LINE("               a-5       [000] .N...      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, T | VT_REC_FLAG_NEED_RESCHED | VT_REC_FLAG_PREEMPT_RESCHED, 5, "a", 0));
	/* Depth and migrate-disable in hex, each at most f; without CTX no depth. */
	EXPECT_LINE("               a-5       [000] ...f3      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, T | C | (3 << VT_REC_MIGR_SHIFT), 5, "a", 0x12));
	EXPECT_LINE("               a-5       [000] ...af      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, T | C | (15 << VT_REC_MIGR_SHIFT), 5, "a", 0xa));
	EXPECT_LINE("               a-5       [000] .....      0.000001: start_kernel <-_stext",
		    fmt_task(&t, 0, T, 5, "a", 0x10001));
}

static void test_small_buffer(void)
{
	struct trace_text t;
	struct ring_event ev = { .tsc = 1, .func = KT + 0x100, .parent = KT + 0x81d };
	char full[512], buf[40];
	int ok = 1;

	trace_text_init(&t, stdout, &syms, 1000000);
	trace_text_format(&t, &ev, full, sizeof(full));
	for (size_t len = 1; len < 32; len++) {
		memset(buf, 'X', sizeof(buf));
		trace_text_format(&t, &ev, buf, len);
		ok &= CHECK_QUIET(strlen(buf) == len - 1 && !strncmp(buf, full, len - 1) && buf[len] == 'X',
				  "format into %zu bytes", len);
	}
	CHECK(ok, "format: a short buffer gets a NUL-terminated prefix, nothing beyond it");
}

static void test_writer(void)
{
	struct trace_text t;
	struct ring_event ev = { .tsc = 2000000, .func = KT + 0x400, .parent = KT + 0x180, .cpu = 1 };
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	FILE *full;

	trace_text_init(&t, f, &syms, 1000000);
	trace_text_header(&t, 2);
	trace_text_event(&t, &ev);
	ev.flags = VT_REC_FLAG_IRQS_OFF;
	ev.func = KT + 0x100;
	trace_text_event(&t, &ev);
	fclose(f);
	CHECK(!strncmp(text, "# tracer: function\n", 19), "header: starts as ftrace's does");
	CHECK(strstr(text, "#P:2\n") != NULL, "header: names the CPU count (#P:2)");
	CHECK(strstr(text, "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n") != NULL,
	      "header: ftrace's column line");
	CHECK(strstr(text, "\n" PFX "[001] .....      0.002000: setup_arch <-start_kernel\n" PFX
			   "[001] d....      0.002000: start_kernel <-start_kernel\n") != NULL,
	      "events: one line each after the header");
	CHECK(!t.error, "no write error");
	free(text);

	full = fopen("/dev/full", "w");
	if (!full) {
		printf("SKIP: no /dev/full\n");
		return;
	}
	setvbuf(full, NULL, _IONBF, 0);
	trace_text_init(&t, full, &syms, 1000000);
	trace_text_event(&t, &ev);
	trace_text_event(&t, &ev);
	CHECK(t.error == ENOSPC, "a failed write is kept as the first error (%s)", strerror(t.error));
	fclose(full);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	build_symtab();
	test_symbols();
	test_time_flags_cpu();
	test_task_columns();
	test_small_buffer();
	test_writer();
	symtab_destroy(&syms);
	return check_exit();
}
