/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the qemu tier's tests share: the cache of test kernels, their
 * System.map, and running a guest under the gdbstub to its next stop.
 */
#ifndef TESTS_QEMU_QTEST_H
#define TESTS_QEMU_QTEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/qemu/qemu-proc.h"

static char qtest_cache[512];

/* $VMMTRACE_CACHE, or ~/.cache/vmmtrace (scripts/common.sh's default). */
static inline const char *qtest_cache_dir(void)
{
	const char *c = getenv("VMMTRACE_CACHE"), *home = getenv("HOME");

	if (!qtest_cache[0]) {
		if (c)
			snprintf(qtest_cache, sizeof(qtest_cache), "%s", c);
		else
			snprintf(qtest_cache, sizeof(qtest_cache), "%s/.cache/vmmtrace", home ? home : "/root");
	}
	return qtest_cache;
}

/* Whether the test was asked for arch: every arch with no arguments, else those named. */
static inline int qtest_wanted(int argc, char **argv, const char *arch)
{
	int want = argc == 1;

	for (int i = 1; i < argc; i++)
		want |= !strcmp(argv[i], arch);
	return want;
}

/* A symbol's address from the System.map of the cached kernel in dir, or 0. */
static inline uint64_t qtest_sysmap(const char *dir, const char *name)
{
	char path[640], line[256], sym[200], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *f;

	/* A kernel with no System.map (Debian's): its booted guest's /proc/kallsyms, from the test script. */
	if (getenv("QTEST_SYSMAP"))
		snprintf(path, sizeof(path), "%s", getenv("QTEST_SYSMAP"));
	else
		snprintf(path, sizeof(path), "%s/%s/System.map", qtest_cache_dir(), dir);
	if (!(f = fopen(path, "r")))
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %199s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	fclose(f);
	return found;
}

/* Resumes the guest and waits for its next stop; *pc from the 'g' reply at pc_off. */
static inline int qtest_run_to(struct qemu *q, unsigned pc_off, uint64_t *pc, struct errbuf *err)
{
	struct gdb_stop st;
	uint8_t regs[4096];
	size_t n;
	int rc = gdb_continue(&q->gdb, err);

	if (!rc)
		rc = gdb_wait_stop(&q->gdb, 60000, &st, err);
	if (!rc && st.kind != GDB_STOP_SIGNAL)
		rc = err_set(err, EIO, "the guest ended (QEMU exited)");
	if (!rc)
		rc = gdb_read_regs(&q->gdb, regs, sizeof(regs), &n, err);
	if (!rc && n < pc_off + 8)
		rc = err_set(err, EPROTO, "a 'g' reply of %zu bytes has no pc", n);
	if (!rc)
		memcpy(pc, regs + pc_off, 8);
	return rc;
}

#endif
