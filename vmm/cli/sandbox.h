/* SPDX-License-Identifier: GPL-2.0 */
/* The seccomp sandbox `vmmtrace boot` enters once the VM is set up (docs/SANDBOX.md). */
#ifndef VMM_CLI_SANDBOX_H
#define VMM_CLI_SANDBOX_H

#include "vmm/util/error.h"

#include <sys/types.h>

/*
 * Drops every capability, then confines every thread of the process to the
 * system calls a running guest needs; with child (QEMU's pid, 0: none),
 * also kill and wait4 on that process only. Returns 0 with *nallowed set
 * to the number of system calls allowed, or -errno with a message in err.
 */
int sandbox_enter(pid_t child, unsigned *nallowed, struct errbuf *err);

/* 0, with why set, when this build cannot run under the filter. */
int sandbox_available(const char **why);

/*
 * VMMTRACE_SANDBOX_SELFTEST (tests/kvm/sandbox.sh): "eperm" makes an
 * unlisted call (open of an existing file) and returns its -errno; "kill"
 * calls execve(), which the filter answers by killing the process.
 * Returns 1 when the variable is unset.
 */
int sandbox_selftest(const char **what);

#endif
