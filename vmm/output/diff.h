/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmmtrace diff's model (vmm/cli/cmd-diff.c is its command line, and
 * vmm/cli/diff-print.c its report in text or JSON): each recording read
 * into per-task call sequences (diff-model.c), and where two boots part
 * (diff-part.c).
 *
 * A task is its pid; the boot and idle tasks (pid 0) and events whose
 * task is unknown are their CPU's ("swapper/N"). A call sequence is the
 * task's traced function entries in order, named as the text output names
 * them, less those --ignore names and, in a --graph recording, less
 * everything they called.
 */
#ifndef VMM_OUTPUT_DIFF_H
#define VMM_OUTPUT_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmm/output/raw-read.h"
#include "vmm/output/stages.h"

/* Function names, one id each, shared by the two recordings. */
struct diff_names {
	char **names;
	size_t n, cap;
	uint32_t *slots;		/* open addressing: 1 + id */
	size_t mask;
	int8_t *ignored;		/* per id: -1 not asked yet, 0, 1 */
	int (*ignore)(void *opaque, const char *name);	/* --ignore: whether calls of name are left out */
	void *ignore_opaque;
};

/* What the hunks show of a call: filled in the second pass for the calls they show. */
struct diff_call {
	uint64_t ns, parent;
	uint32_t depth, id;
	uint16_t cpu;
	int hooked;
};

struct diff_task {
	uint64_t key;			/* pid, or 1 << 32 | cpu */
	char label[40];			/* comm-pid of its last event; swapper/N */
	char comm[16];			/* of its last event */
	uint32_t *seq;			/* name ids of its calls, in order */
	size_t n, cap;
	int skipping;			/* inside an ignored call (--graph): until its return */
	uint32_t skip_depth;
	uint64_t skip_func;
	size_t n2;			/* the second pass's count */
	size_t want_lo, want_hi;	/* the calls the hunk shows: [lo, hi) */
	struct diff_call *shown;	/* want_hi - want_lo of them */
};

struct diff_side {
	const char *path;
	struct raw_reader *r;
	const struct trace_meta *meta;
	struct diff_names *names;
	struct diff_task *tasks;	/* open addressing by key */
	size_t ntasks, tasks_cap;
	uint64_t *addr_keys;		/* function address -> 1 + name id */
	uint32_t *addr_ids;
	size_t addr_mask, naddr;
	uint64_t *count, *total_ns;	/* per name id: calls, and the time of those that returned */
	size_t funcs_cap;
	struct stage_finder *finder;
	struct stage stages[STAGES_MAX];
	size_t nstages;
	uint64_t calls, events;
	int pass;
};

/* Where one task's two sequences part (or that they agree). */
struct diff_part {
	uint64_t key;
	struct diff_task *a, *b;	/* NULL: the task is not in that recording */
	size_t prefix;			/* calls alike from the start */
	size_t del, add;		/* then A's and B's that differ before they meet again */
	int met;			/* they meet again within the search window (or both end) */
	int agree;
	uint64_t ns;			/* when they part: A's call's time (B's when A has none there) */
};

/* diff-model.c; ignore (may be NULL) says which names --ignore leaves out. */
int diff_names_init(struct diff_names *nm, int (*ignore)(void *opaque, const char *name), void *opaque);
void diff_names_destroy(struct diff_names *nm);
int diff_side_open(struct diff_side *s, const char *path, struct diff_names *nm, struct errbuf *err);
void diff_side_close(struct diff_side *s);
/* The first pass: every task's sequence, the counts, the stages. */
int diff_side_read(struct diff_side *s, struct errbuf *err);
/* The second pass: the calls the hunks show (want_lo/want_hi set on the tasks). */
int diff_side_details(struct diff_side *s, struct errbuf *err);
struct diff_task *diff_side_task(const struct diff_side *s, uint64_t key);
/* A one-line account of why a recording cannot be compared (cut, damaged, unclosed), or NULL. */
const char *diff_side_incomplete(const struct diff_side *s, char *buf, size_t len);
/* Whether the two recordings are of the same kernel, by their symbol tables (or kernel paths). */
int diff_same_kernel(const struct diff_side *a, const struct diff_side *b, char *why, size_t len);

/* diff-part.c: the tasks of both, each with where it parts; by when they part, those that agree last. */
int diff_parts(struct diff_side *a, struct diff_side *b, unsigned context, struct diff_part **parts, size_t *n);
/* After diff_side_details: each part's time. Sorts them: parted first, earliest first. */
void diff_parts_order(struct diff_part *parts, size_t n);
/* A function's name as the text output prints it: a symbol at its first byte (exact) or anywhere in it, else hex. */
const char *diff_name_of(const struct trace_meta *meta, uint64_t addr, int exact, char buf[32]);

#endif
