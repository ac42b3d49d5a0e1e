// SPDX-License-Identifier: GPL-2.0
/*
 * Finding a boot's stages in its trace (stages.h). The markers are found
 * by name in the trace's symbols once; each event then costs a lookup of
 * its function in a small table. Initcalls are known by the kernel's own
 * table of them: each initcall's entry symbol (__initcall__kmod_..._fnN)
 * lies between the __initcallN_start symbols of its level, so a call of
 * that function from do_one_initcall (or a call of do_one_initcall whose
 * first argument, with --args, is that function) is an initcall of that
 * level. The level's stage runs from its first initcall's entry to its
 * last one's return.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/calls.h"
#include "vmm/output/stages.h"

struct stage_def {
	const char *label;
	const char *funcs[3];		/* the marker, or its other names across kernel versions */
	unsigned level;
};

static const struct stage_def stage_defs[] = {
	{ "start_kernel", { "start_kernel" }, 0 },
	{ "setup_arch", { "setup_arch" }, 1 },
	{ "mm_init", { "mm_core_init", "mm_init" }, 1 },
	{ "sched_init", { "sched_init" }, 1 },
	{ "ftrace_init", { "ftrace_init" }, 1 },
	{ "rest_init", { "rest_init" }, 0 },
	{ "kernel_init", { "kernel_init" }, 0 },
	{ "smp_init", { "smp_init" }, 1 },
	{ "init process", { "run_init_process", "try_to_run_init_process", "kernel_execve" }, 1 },
};
#define STAGE_NDEFS	(sizeof(stage_defs) / sizeof(stage_defs[0]))
#define STAGE_IC0	STAGE_NDEFS				/* the initcall levels' slots */
#define STAGE_IC_ANY	(STAGE_IC0 + STAGES_INITCALL_LEVELS)	/* do_one_initcall, level unknown */
#define STAGE_NSLOTS	(STAGE_IC_ANY + 1)

static const char *const initcall_labels[STAGES_INITCALL_LEVELS] = {
	"initcalls: early", "initcalls: pure", "initcalls: core", "initcalls: postcore", "initcalls: arch",
	"initcalls: subsys", "initcalls: fs", "initcalls: device", "initcalls: late",
};

struct stage_slot {
	int found, waiting, returned;
	uint64_t start, end;		/* end: the return's TSC (returned) */
	uint64_t task, func;		/* the marking call, to know its return */
	uint32_t depth;
	uint16_t cpu;
	int32_t pid;
	char comm[16];
	const char *marker;
};

/* A hooked initcall in flight: its return ends (for now) its level's stage. */
struct stage_open {
	uint64_t task, func;
	uint32_t depth;
	unsigned slot;
};

struct addr_map {
	uint64_t *keys;
	uint8_t *vals;
	size_t mask;
};

struct stage_finder {
	const struct trace_meta *meta;
	struct addr_map markers;	/* function -> 1 + slot of its stage */
	struct addr_map initcalls;	/* initcall function -> 1 + level */
	uint64_t do_one_initcall;
	struct stage_slot slot[STAGE_NSLOTS];
	struct stage_open open[8];
	unsigned nopen, nwaiting;
	uint64_t first, last;
	int seen;
};

static int addr_map_init(struct addr_map *m, size_t n)
{
	size_t cap = 64;

	while (cap < 2 * n)
		cap *= 2;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, 1);
	m->mask = cap - 1;
	return m->keys && m->vals ? 0 : -ENOMEM;
}

static size_t addr_map_slot(const struct addr_map *m, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 31) & m->mask;

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & m->mask;
	return i;
}

static void addr_map_put(struct addr_map *m, uint64_t key, uint8_t val)
{
	size_t i = addr_map_slot(m, key);

	m->keys[i] = key;
	m->vals[i] = val;
}

static uint8_t addr_map_get(const struct addr_map *m, uint64_t key)
{
	return m->mask ? m->vals[addr_map_slot(m, key)] : 0;
}

size_t stages_initcall_fn(const char *sym, const char *suffix, const char **fn)
{
	size_t len = strlen(sym), slen = strlen(suffix);
	const char *p;

	if (!strncmp(sym, "__initcall__kmod_", 17)) {
		/* __initcall__kmod_<module>__<counter>_<line>_<fn><suffix> */
		for (p = strstr(sym + 17, "__"); p; p = strstr(p + 1, "__")) {
			const char *q = p + 2;

			while (*q >= '0' && *q <= '9')
				q++;
			if (q == p + 2 || *q != '_')
				continue;
			for (p = ++q; *q >= '0' && *q <= '9'; q++)
				;
			if (q == p || *q != '_')
				return 0;
			p = q + 1;
			break;
		}
	} else if (!strncmp(sym, "__initcall_", 11)) {
		p = sym + 11;
	} else {
		return 0;
	}
	if (!p || len - (size_t)(p - sym) <= slen || strcmp(sym + len - slen, suffix))
		return 0;
	*fn = p;
	return len - (size_t)(p - sym) - slen;
}

/* The address of the symbol called name, 0 when the trace has none. */
static uint64_t stage_sym(const struct trace_meta *meta, const char *name)
{
	const struct symbol *s = meta->syms ? symtab_find_name(meta->syms, name) : NULL;

	return s ? s->addr : 0;
}

/* Each same-named text symbol of name, as val in m. */
static void stage_map_name(struct addr_map *m, const struct symtab *tab, const char *name, uint8_t val)
{
	for (const struct symbol *s = symtab_find_name(tab, name); s; s = symtab_next_same_name(tab, s))
		if (symtab_is_text(s->type))
			addr_map_put(m, s->addr, val);
}

/* The level (0: early) of the initcall entry at addr, given the levels' start symbols b[]. */
static int stage_ic_level(const uint64_t b[STAGES_INITCALL_LEVELS], uint64_t addr)
{
	int level = -1;

	for (int k = 0; k < STAGES_INITCALL_LEVELS; k++)
		if (b[k] && b[k] <= addr && (level < 0 || b[k] >= b[level]))
			level = k;
	return level;
}

/* One initcall entry symbol: its function, by name, into the initcalls map. */
static void stage_ic_entry(struct stage_finder *f, const char *sym, int level, int rootfs)
{
	char suffix[16], name[160];
	const char *fn;
	size_t n = 0;

	if (level == 0)
		n = stages_initcall_fn(sym, "early", &fn);
	else if (rootfs)
		n = stages_initcall_fn(sym, "rootfs", &fn);
	for (int sync = 1; !n && level > 0 && sync >= 0; sync--) {
		snprintf(suffix, sizeof(suffix), "%d%s", level - 1, sync ? "s" : "");
		n = stages_initcall_fn(sym, suffix, &fn);
	}
	if (!n || n >= sizeof(name))
		return;
	memcpy(name, fn, n);
	name[n] = 0;
	stage_map_name(&f->initcalls, f->meta->syms, name, (uint8_t)(1 + level));
}

/* The kernel's initcall table: each initcall's function and level, from the symbols. */
static int stage_find_initcalls(struct stage_finder *f)
{
	const struct symtab *tab = f->meta->syms;
	uint64_t b[STAGES_INITCALL_LEVELS], end = stage_sym(f->meta, "__initcall_end");
	uint64_t rootfs = stage_sym(f->meta, "__initcallrootfs_start");
	char name[24];
	size_t n = 0;

	b[0] = stage_sym(f->meta, "__initcall_start");
	for (int k = 1; k < STAGES_INITCALL_LEVELS; k++) {
		snprintf(name, sizeof(name), "__initcall%d_start", k - 1);
		b[k] = stage_sym(f->meta, name);
	}
	for (size_t i = 0; tab && end && i < tab->count; i++)
		n += tab->syms[i].addr < end && stage_ic_level(b, tab->syms[i].addr) >= 0;
	if (addr_map_init(&f->initcalls, n))
		return -ENOMEM;
	for (size_t i = 0; tab && end && i < tab->count; i++) {
		const struct symbol *s = &tab->syms[i];
		int level = s->addr < end ? stage_ic_level(b, s->addr) : -1;

		if (level >= 0)
			stage_ic_entry(f, symtab_name(tab, s), level,
				       rootfs && s->addr >= rootfs && (!b[7] || s->addr < b[7]));
	}
	return 0;
}

int stage_finder_new(struct stage_finder **out, const struct trace_meta *meta)
{
	struct stage_finder *f = calloc(1, sizeof(*f));
	int rc = f ? 0 : -ENOMEM;

	if (!rc) {
		f->meta = meta;
		rc = addr_map_init(&f->markers, 32);
	}
	if (!rc && meta->syms) {
		for (size_t d = 0; d < STAGE_NDEFS; d++)
			for (size_t k = 0; k < 3 && stage_defs[d].funcs[k]; k++)
				stage_map_name(&f->markers, meta->syms, stage_defs[d].funcs[k], (uint8_t)(1 + d));
		f->do_one_initcall = stage_sym(meta, "do_one_initcall");
		rc = stage_find_initcalls(f);
	}
	if (rc) {
		stage_finder_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

void stage_finder_free(struct stage_finder *f)
{
	if (!f)
		return;
	free(f->markers.keys);
	free(f->markers.vals);
	free(f->initcalls.keys);
	free(f->initcalls.vals);
	free(f);
}

/* The symbol holding addr is called name (a caller's return address lies inside it). */
static int stage_in(const struct trace_meta *meta, uint64_t addr, uint64_t func)
{
	uint64_t off;
	const struct symbol *s = meta->syms && func ? symtab_find_addr(meta->syms, addr, &off) : NULL;

	return s && s->addr == func && off < symtab_extent(meta->syms, s);
}

/* The initcall level slot of an entry, or -1: an initcall called by do_one_initcall, or do_one_initcall(fn). */
static int stage_initcall_slot(const struct stage_finder *f, const struct ring_event *ev)
{
	uint8_t level = addr_map_get(&f->initcalls, ev->func);

	if (level && stage_in(f->meta, ev->parent, f->do_one_initcall))
		return (int)(STAGE_IC0 + level - 1);
	if (!f->do_one_initcall || ev->func != f->do_one_initcall)
		return -1;
	if ((ev->flags & VT_REC_FLAG_ARGS) && (level = addr_map_get(&f->initcalls, ev->args[0])))
		return (int)(STAGE_IC0 + level - 1);
	return STAGE_IC_ANY;
}

static void stage_mark(struct stage_finder *f, unsigned i, const struct ring_event *ev)
{
	struct stage_slot *s = &f->slot[i];
	uint64_t off;
	const struct symbol *sym = f->meta->syms ? symtab_find_addr(f->meta->syms, ev->func, &off) : NULL;

	s->found = 1;
	s->start = ev->tsc;
	s->func = ev->func;
	s->task = calls_task_key(ev);
	s->depth = ev->depth;
	s->cpu = ev->cpu;
	s->pid = (ev->flags & VT_REC_FLAG_TASK) ? ev->pid : 0;
	memset(s->comm, 0, sizeof(s->comm));
	if (ev->flags & VT_REC_FLAG_TASK)
		memcpy(s->comm, ev->comm, sizeof(s->comm));
	s->marker = sym && !off ? symtab_name(f->meta->syms, sym) : "?";
	if (i < STAGE_NDEFS && (ev->flags & VT_REC_FLAG_HOOKED)) {
		s->waiting = 1;
		f->nwaiting++;
	}
}

/* An entry: a marker's first call starts its stage; one of its task at its depth or above ends a wait. */
static void stage_entry(struct stage_finder *f, const struct ring_event *ev)
{
	uint8_t d = addr_map_get(&f->markers, ev->func);
	int ic;

	for (unsigned i = 0; f->nwaiting && i < STAGE_NDEFS; i++)
		if (f->slot[i].waiting && f->slot[i].task == calls_task_key(ev) && ev->depth <= f->slot[i].depth &&
		    (ev->flags & VT_REC_FLAG_HOOKED)) {
			f->slot[i].waiting = 0;	/* the stub dropped it: no return will come */
			f->nwaiting--;
		}
	if (d && !f->slot[d - 1].found)
		stage_mark(f, d - 1, ev);
	ic = stage_initcall_slot(f, ev);
	if (ic < 0)
		return;
	if (!f->slot[ic].found)
		stage_mark(f, (unsigned)ic, ev);
	if ((ev->flags & VT_REC_FLAG_HOOKED) && f->nopen < sizeof(f->open) / sizeof(f->open[0]))
		f->open[f->nopen++] = (struct stage_open){ calls_task_key(ev), ev->func, ev->depth, (unsigned)ic };
}

static void stage_exit(struct stage_finder *f, const struct ring_event *ev)
{
	uint64_t key = calls_task_key(ev);
	uint8_t d = addr_map_get(&f->markers, ev->func);

	if (d && f->slot[d - 1].waiting && f->slot[d - 1].task == key && f->slot[d - 1].depth == ev->depth &&
	    f->slot[d - 1].func == ev->func) {
		f->slot[d - 1].waiting = 0;
		f->slot[d - 1].returned = 1;
		f->slot[d - 1].end = ev->tsc;
		f->nwaiting--;
	}
	for (unsigned i = f->nopen; i-- > 0;) {
		struct stage_open *o = &f->open[i];

		if (o->task != key || o->depth < ev->depth)
			continue;
		if (o->depth == ev->depth && o->func == ev->func) {
			f->slot[o->slot].returned = 1;
			f->slot[o->slot].end = ev->tsc;
		}
		*o = f->open[--f->nopen];	/* returned, or deeper: never will */
	}
}

void stage_finder_event(struct stage_finder *f, const struct ring_event *ev)
{
	if (!f->seen || ev->tsc < f->first)
		f->first = ev->tsc;
	if (!f->seen || ev->tsc > f->last)
		f->last = ev->tsc;
	f->seen = 1;
	if (vmev_is(ev))
		return;
	if (ev->flags & VT_REC_FLAG_EXIT)
		stage_exit(f, ev);
	else
		stage_entry(f, ev);
}

void stage_finder_span(const struct stage_finder *f, uint64_t *first, uint64_t *last)
{
	*first = f->first;
	*last = f->last;
}

static int stage_by_start(const void *a, const void *b)
{
	const struct stage *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->level < y->level ? -1 : x->level > y->level;	/* a phase before its first part */
}

/* A stage without its marking call's return ends where the next of its row, or of a row above, begins. */
static void stage_settle_end(struct stage *s, size_t n, size_t i, uint64_t last)
{
	for (size_t j = i + 1; j < n; j++)
		if (s[j].level <= s[i].level && s[j].start > s[i].start) {
			s[i].end = s[j].start;
			s[i].end_kind = STAGE_END_NEXT;
			s[i].end_marker = s[j].marker;
			return;
		}
	s[i].end = last > s[i].start ? last : s[i].start;
	s[i].end_kind = STAGE_END_TRACE;
	s[i].end_marker = NULL;
}

size_t stage_finder_result(const struct stage_finder *f, struct stage *out, size_t max)
{
	size_t n = 0;
	int levels = 0;

	for (unsigned i = STAGE_IC0; i < STAGE_IC_ANY; i++)
		levels |= f->slot[i].found;
	for (unsigned i = 0; i < STAGE_NSLOTS && n < max; i++) {
		const struct stage_slot *sl = &f->slot[i];
		struct stage *s = &out[n];

		if (!sl->found || (i == STAGE_IC_ANY && levels))
			continue;
		memset(s, 0, sizeof(*s));
		s->label = i < STAGE_NDEFS ? stage_defs[i].label : i < STAGE_IC_ANY ? initcall_labels[i - STAGE_IC0]
											: "initcalls";
		s->level = i < STAGE_NDEFS ? stage_defs[i].level : 1;
		s->marker = sl->marker;
		s->start = sl->start;
		s->cpu = sl->cpu;
		s->pid = sl->pid;
		memcpy(s->comm, sl->comm, sizeof(s->comm));
		s->end = sl->end > sl->start ? sl->end : sl->start;
		s->end_kind = sl->returned ? STAGE_END_RETURN : STAGE_END_TRACE;
		s->end_marker = sl->returned ? sl->marker : NULL;
		n++;
	}
	qsort(out, n, sizeof(*out), stage_by_start);
	for (size_t i = 0; i < n; i++)
		if (out[i].end_kind != STAGE_END_RETURN)
			stage_settle_end(out, n, i, f->last);
	return n;
}

void stages_count_vm(struct stage *s, size_t n, const struct ring_event *ev)
{
	unsigned kind = vmev_kind_of(ev);

	if (kind >= VMEV_NKINDS)
		return;
	for (size_t i = 0; i < n; i++)
		if (ev->tsc >= s[i].start && ev->tsc < s[i].end)
			s[i].vm[kind]++;
}
