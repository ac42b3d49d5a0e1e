/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A trace session on a booting guest: symbols and slots from the image, the
 * stub and its rings, the slots' phases around the guest's ftrace_init, the
 * consumer thread, and the output.
 */
#ifndef VMM_TRACER_H
#define VMM_TRACER_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/error.h"

struct kernel_image;
struct vcpu;
struct vm;
struct tracer;

enum trace_mode { TRACE_LOSSLESS, TRACE_OVERWRITE };

struct tracer_config {
	const char **include;		/* --trace globs */
	unsigned n_include;
	const char **exclude;		/* --notrace globs */
	unsigned n_exclude;
	const char *output;		/* -o FILE; NULL: stdout */
	uint64_t buffer_size;		/* bytes of records per CPU */
	enum trace_mode mode;
	const char *stop_at;		/* function name or NULL */
	const char *system_map;		/* --system-map FILE or NULL */
};

/* After the kernel is loaded, before the vCPUs exist: symbols, stub, slots. */
int tracer_create(struct tracer **out, struct vm *vm, const struct kernel_image *img,
		  const struct tracer_config *cfg, struct errbuf *err);
/* After the vCPUs exist, before they run: breakpoints, consumer thread. */
int tracer_start(struct tracer *t, struct errbuf *err);
/* After the vCPUs stopped: last drain, output, summary on stderr. Returns 0 or -errno. */
int tracer_finish(struct tracer *t, struct errbuf *err);
/* After the VM is destroyed. */
void tracer_destroy(struct tracer *t);

/* vCPU thread: an execution breakpoint hit at pc. */
void tracer_breakpoint(struct vcpu *vcpu, uint64_t pc);

#endif
