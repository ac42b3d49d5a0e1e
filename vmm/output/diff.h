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
	uint32_t *stack;		/* several runs (diff-runs.c): 1 + the path of the call at each depth */
	uint32_t nstack, stack_cap;
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

/*
 * Several runs of each side (diff-runs.c): a boot that cannot be made
 * reproducible is recorded a few times, and only what differs alike in
 * every run of one side against every run of the other is a parting; what
 * differs between runs of one side is noise. A call is keyed by its path:
 * with --graph, the traced calls it is nested in, from the task's
 * outermost; without (or when its return was not hooked), its caller. Each
 * path's calls are counted per run.
 */
#define DIFF_PATH_CALLER	0x80000000u	/* a path's id with this: a caller, not a call */
#define DIFF_PATH_NONE		UINT32_MAX

struct diff_path {
	uint32_t parent;		/* 1 + the enclosing path's index; 0: none */
	uint32_t id;			/* the function's name id (| DIFF_PATH_CALLER: the caller's) */
};

/* Where a path was first called in a side's runs. */
struct diff_first {
	uint64_t ns;
	uint32_t run;			/* the side's run; UINT32_MAX: in none */
	char task[40];
};

struct diff_run {
	const char *path;
	uint64_t calls, events;
	size_t ntasks;
	unsigned ncpus;
	int graph;
	uint32_t *count;		/* per path; beyond ncount: 0 */
	size_t ncount;
	/*
	 * The order of the calls: per enclosing path, a hash of the sequence
	 * of paths called in it and how many; per path, 1 + how many calls
	 * its enclosing path had made before its first (0: never called).
	 */
	uint64_t *order;
	uint32_t *seq, *rank;
	size_t norder, nseq, nrank;
};

/* A place where the runs differ: a path that differs whose enclosing path does not. */
struct diff_place {
	uint32_t path;
	uint32_t min[2], max[2];	/* its calls per run of A ([0]) and of B ([1]) */
	size_t under;			/* paths nested in it that differ too */
	int holds;			/* every run of one side against every run of the other */
	int noisy_name;			/* would hold, but its function differs at random elsewhere */
	int order;			/* the calls in it are alike in number but not in order */
	uint32_t kid[2];		/* order: A's first run calls kid[0] where B's calls kid[1] (or DIFF_PATH_NONE) */
	const struct diff_first *first;	/* in A when A calls it, else in B */
	const char *first_run;
};

struct diff_runs {
	struct diff_names *names;
	struct diff_path *paths;
	size_t npaths, paths_cap;
	uint32_t *slots;		/* open addressing: 1 + path */
	size_t mask;
	struct diff_run *runs;		/* A's, then B's */
	size_t nruns, nside[2];
	struct diff_first *first[2];
	size_t first_cap[2];
	struct diff_side ref;		/* the first run, kept open: the kernel the others must match */
	struct diff_place *places;	/* after diff_runs_compare: those that hold first, by time */
	size_t nplaces, nholds;
};

int diff_runs_init(struct diff_runs *r, struct diff_names *nm);
void diff_runs_destroy(struct diff_runs *r);
/* Reads one run of side (0: A, 1: B); force: of another kernel, or cut. */
int diff_runs_add(struct diff_runs *r, int side, const char *path, int force, struct errbuf *err);
/* The places where the runs differ, those that hold first. */
int diff_runs_compare(struct diff_runs *r);
/* A path's name: the function, and the caller for a path keyed by its caller. */
const char *diff_runs_func(const struct diff_runs *r, uint32_t path);

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
/* Whether ev is a call to count: 1 (*tp, *idp set), 0, or -ENOMEM (the first pass's). */
int diff_side_take(struct diff_side *s, const struct ring_event *ev, struct diff_task **tp, uint32_t *idp);
/* The id of a name, made when new; UINT32_MAX when out of memory. */
uint32_t diff_names_id(struct diff_names *nm, const char *name);
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
