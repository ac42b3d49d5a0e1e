// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace diff: a recording read into its tasks' call sequences (diff.h).
 * Names are interned once across both recordings, so that two kernels'
 * different addresses of one function compare as the same call (--force),
 * and each address is named once per recording.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/calls.h"
#include "vmm/output/diff.h"

int diff_names_init(struct diff_names *nm, int (*ignore)(void *opaque, const char *name), void *opaque)
{
	memset(nm, 0, sizeof(*nm));
	nm->ignore = ignore;
	nm->ignore_opaque = opaque;
	nm->mask = 4095;
	nm->slots = calloc(nm->mask + 1, sizeof(*nm->slots));
	return nm->slots ? 0 : -ENOMEM;
}

void diff_names_destroy(struct diff_names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->names[i]);
	free(nm->names);
	free(nm->slots);
	free(nm->ignored);
}

static uint64_t diff_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static int diff_names_grow(struct diff_names *nm)
{
	size_t mask = 2 * nm->mask + 1;
	uint32_t *slots = calloc(mask + 1, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < nm->n; i++) {
		size_t k = (size_t)diff_hash(nm->names[i]) & mask;

		while (slots[k])
			k = (k + 1) & mask;
		slots[k] = (uint32_t)(i + 1);
	}
	free(nm->slots);
	nm->slots = slots;
	nm->mask = mask;
	return 0;
}

uint32_t diff_names_id(struct diff_names *nm, const char *name)
{
	size_t k = (size_t)diff_hash(name) & nm->mask;

	for (; nm->slots[k]; k = (k + 1) & nm->mask)
		if (!strcmp(nm->names[nm->slots[k] - 1], name))
			return nm->slots[k] - 1;
	if (nm->n == nm->cap) {
		size_t cap = nm->cap ? 2 * nm->cap : 1024;
		char **n = realloc(nm->names, cap * sizeof(*n));
		int8_t *ig = realloc(nm->ignored, cap);

		if (n)
			nm->names = n;
		if (ig)
			nm->ignored = ig;
		if (!n || !ig || nm->n >= UINT32_MAX - 1)
			return UINT32_MAX;
		nm->cap = cap;
	}
	if (!(nm->names[nm->n] = strdup(name)))
		return UINT32_MAX;
	nm->ignored[nm->n] = -1;
	nm->slots[k] = (uint32_t)(nm->n + 1);
	if (2 * ++nm->n > nm->mask && diff_names_grow(nm))
		return UINT32_MAX;
	return (uint32_t)(nm->n - 1);
}

const char *diff_name_of(const struct trace_meta *meta, uint64_t addr, int exact, char buf[32])
{
	uint64_t off = 0;
	const struct symbol *s = meta->syms ? symtab_find_addr(meta->syms, addr, &off) : NULL;

	/* As the text writer names them: inside the symbol, and at its start for a function. */
	if (s && off < symtab_extent(meta->syms, s) && (!exact || !off))
		return symtab_name(meta->syms, s);
	snprintf(buf, 32, "0x%" PRIx64, addr);
	return buf;
}

static int diff_ignored(struct diff_names *nm, uint32_t id)
{
	if (nm->ignored[id] < 0)
		nm->ignored[id] = nm->ignore && nm->ignore(nm->ignore_opaque, nm->names[id]);
	return nm->ignored[id];
}

int diff_side_open(struct diff_side *s, const char *path, struct diff_names *nm, struct errbuf *err)
{
	memset(s, 0, sizeof(*s));
	s->path = path;
	s->names = nm;
	if (raw_read_open(&s->r, path, err))
		return -EINVAL;
	s->meta = raw_read_meta(s->r);
	s->tasks_cap = 64;
	s->addr_mask = 4095;
	s->tasks = calloc(s->tasks_cap, sizeof(*s->tasks));
	s->addr_keys = calloc(s->addr_mask + 1, sizeof(*s->addr_keys));
	s->addr_ids = calloc(s->addr_mask + 1, sizeof(*s->addr_ids));
	if (!s->tasks || !s->addr_keys || !s->addr_ids || stage_finder_new(&s->finder, s->meta))
		return err_set(err, ENOMEM, "out of memory reading %s", path);
	return 0;
}

void diff_side_close(struct diff_side *s)
{
	for (size_t i = 0; s->tasks && i < s->tasks_cap; i++) {
		free(s->tasks[i].seq);
		free(s->tasks[i].shown);
		free(s->tasks[i].stack);
	}
	free(s->tasks);
	free(s->addr_keys);
	free(s->addr_ids);
	free(s->count);
	free(s->total_ns);
	stage_finder_free(s->finder);
	raw_read_close(s->r);
}

static size_t diff_task_slot(const struct diff_task *t, size_t cap, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);

	while (t[i].key && t[i].key != key)
		i = (i + 1) & (cap - 1);
	return i;
}

struct diff_task *diff_side_task(const struct diff_side *s, uint64_t key)
{
	size_t i = diff_task_slot(s->tasks, s->tasks_cap, key);

	return s->tasks[i].key ? &s->tasks[i] : NULL;
}

/* The task of key, made when new (pass 1); NULL when out of memory. */
static struct diff_task *diff_task_get(struct diff_side *s, uint64_t key)
{
	size_t i = diff_task_slot(s->tasks, s->tasks_cap, key);

	if (s->tasks[i].key)
		return &s->tasks[i];
	if (2 * (s->ntasks + 1) > s->tasks_cap) {
		size_t cap = 2 * s->tasks_cap;
		struct diff_task *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t k = 0; k < s->tasks_cap; k++)
			if (s->tasks[k].key)
				n[diff_task_slot(n, cap, s->tasks[k].key)] = s->tasks[k];
		free(s->tasks);
		s->tasks = n;
		s->tasks_cap = cap;
		i = diff_task_slot(s->tasks, s->tasks_cap, key);
	}
	s->tasks[i].key = key;
	s->ntasks++;
	return &s->tasks[i];
}

/* The name id of a function address, named as the text output names it; UINT32_MAX: out of memory. */
static uint32_t diff_func_id(struct diff_side *s, uint64_t addr)
{
	size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 30) & s->addr_mask;
	char buf[32];
	uint32_t id;

	for (; s->addr_ids[i]; i = (i + 1) & s->addr_mask)
		if (s->addr_keys[i] == addr)
			return s->addr_ids[i] - 1;
	id = diff_names_id(s->names, diff_name_of(s->meta, addr, 1, buf));
	if (id == UINT32_MAX)
		return id;
	if (2 * (s->naddr + 1) > s->addr_mask) {
		/* A full cache starts again: a hostile trace of a million addresses costs lookups, not memory. */
		memset(s->addr_ids, 0, (s->addr_mask + 1) * sizeof(*s->addr_ids));
		s->naddr = 0;
		i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 30) & s->addr_mask;
	}
	s->addr_keys[i] = addr;
	s->addr_ids[i] = id + 1;
	s->naddr++;
	return id;
}

static int diff_funcs_fit(struct diff_side *s, uint32_t id)
{
	size_t cap = s->funcs_cap ? s->funcs_cap : 1024;
	uint64_t *c, *t;

	if (id < s->funcs_cap)
		return 0;
	while (cap <= id)
		cap *= 2;
	c = realloc(s->count, cap * sizeof(*c));
	if (c)
		s->count = c;
	t = realloc(s->total_ns, cap * sizeof(*t));
	if (t)
		s->total_ns = t;
	if (!c || !t)
		return -ENOMEM;
	memset(s->count + s->funcs_cap, 0, (cap - s->funcs_cap) * sizeof(*c));
	memset(s->total_ns + s->funcs_cap, 0, (cap - s->funcs_cap) * sizeof(*t));
	s->funcs_cap = cap;
	return 0;
}

static uint64_t diff_key(const struct ring_event *ev)
{
	return (ev->flags & VT_REC_FLAG_TASK) && ev->pid > 0 ? (uint64_t)(uint32_t)ev->pid : 1ull << 32 | ev->cpu;
}

static void diff_label(struct diff_task *t, const struct ring_event *ev)
{
	if (t->key >> 32)
		snprintf(t->label, sizeof(t->label), "swapper/%u", (unsigned)(uint32_t)t->key);
	else
		snprintf(t->label, sizeof(t->label), "%.16s-%d", *ev->comm ? ev->comm : "<...>", ev->pid);
}

/*
 * Whether ev is a call of a task's sequence: 1 (*tp, *idp set), 0, or
 * -ENOMEM. Exits add their call's time to its function, and end an
 * ignored call's skip; --ignore drops a call and, with its return known
 * to come (--graph), every call under it.
 */
int diff_side_take(struct diff_side *s, const struct ring_event *ev, struct diff_task **tp, uint32_t *idp)
{
	int hooked = !!(ev->flags & VT_REC_FLAG_HOOKED);
	struct diff_task *t;
	uint32_t id;

	if (vmev_is(ev))
		return 0;
	t = s->pass ? diff_side_task(s, diff_key(ev)) : diff_task_get(s, diff_key(ev));
	if (!t)
		return s->pass ? 0 : -ENOMEM;
	if (!s->pass && (!*t->label || ((ev->flags & VT_REC_FLAG_TASK) && memcmp(t->comm, ev->comm, sizeof(t->comm))))) {
		memcpy(t->comm, ev->comm, sizeof(t->comm));
		diff_label(t, ev);
	}
	if ((id = diff_func_id(s, ev->func)) == UINT32_MAX || diff_funcs_fit(s, id))
		return -ENOMEM;
	if (ev->flags & VT_REC_FLAG_EXIT) {
		if (t->skipping && ev->depth <= t->skip_depth)
			t->skipping = 0;
		else if (!t->skipping && !diff_ignored(s->names, id) && !s->pass && ev->calltime < ev->tsc)
			s->total_ns[id] += trace_meta_ns(&(struct trace_meta){ .tsc_khz = s->meta->tsc_khz },
							 ev->tsc - ev->calltime);
		return 0;
	}
	if (t->skipping && hooked && ev->depth <= t->skip_depth)
		t->skipping = 0;
	if (t->skipping)
		return 0;
	if (diff_ignored(s->names, id)) {
		t->skipping = hooked;
		t->skip_depth = ev->depth;
		t->skip_func = ev->func;
		return 0;
	}
	*tp = t;
	*idp = id;
	return 1;
}

static int diff_read_event(void *opaque, const struct ring_event *ev)
{
	struct diff_side *s = opaque;
	struct diff_task *t;
	uint32_t id;
	int rc;

	s->events++;
	stage_finder_event(s->finder, ev);
	if ((rc = diff_side_take(s, ev, &t, &id)) <= 0)
		return rc;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		uint32_t *n = realloc(t->seq, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->seq = n;
		t->cap = cap;
	}
	t->seq[t->n++] = id;
	s->count[id]++;
	s->calls++;
	return 0;
}

int diff_side_read(struct diff_side *s, struct errbuf *err)
{
	int rc = raw_read_replay(s->r, diff_read_event, s);

	if (rc)
		return err_set(err, -rc, "reading %s: %s", s->path, strerror(-rc));
	s->nstages = stage_finder_result(s->finder, s->stages, STAGES_MAX);
	return 0;
}

static int diff_detail_event(void *opaque, const struct ring_event *ev)
{
	struct diff_side *s = opaque;
	struct diff_task *t;
	uint32_t id;
	int rc = diff_side_take(s, ev, &t, &id);
	size_t i;

	if (rc <= 0)
		return rc;
	i = t->n2++;
	if (t->shown && i >= t->want_lo && i < t->want_hi)
		t->shown[i - t->want_lo] = (struct diff_call){
			.ns = trace_meta_ns(s->meta, ev->tsc), .parent = ev->parent, .depth = ev->depth, .id = id,
			.cpu = ev->cpu, .hooked = !!(ev->flags & VT_REC_FLAG_HOOKED),
		};
	return 0;
}

int diff_side_details(struct diff_side *s, struct errbuf *err)
{
	int rc;

	s->pass = 1;
	for (size_t i = 0; i < s->tasks_cap; i++) {
		struct diff_task *t = &s->tasks[i];

		t->skipping = 0;
		t->n2 = 0;
		if (!t->key || t->want_hi <= t->want_lo)
			continue;
		if (!(t->shown = calloc(t->want_hi - t->want_lo, sizeof(*t->shown))))
			return err_set(err, ENOMEM, "out of memory reading %s", s->path);
	}
	rc = raw_read_replay(s->r, diff_detail_event, s);
	return rc ? err_set(err, -rc, "reading %s: %s", s->path, strerror(-rc)) : 0;
}

const char *diff_side_incomplete(const struct diff_side *s, char *buf, size_t len)
{
	const struct raw_read_report *rep = raw_read_report(s->r);

	if (rep->cut)
		snprintf(buf, len, "%s: cut at offset %" PRIu64 " (%" PRIu64 " bytes after its last complete chunk): "
			 "the recording did not end cleanly", s->path, rep->cut_offset, rep->cut_bytes);
	else if (rep->damaged)
		snprintf(buf, len, "%s: %" PRIu64 " damaged chunk(s), the first at offset %" PRIu64, s->path,
			 rep->damaged, rep->ndamage ? rep->damage[0].offset : 0);
	else if (rep->missing_chunks)
		snprintf(buf, len, "%s: %" PRIu64 " chunk(s) missing", s->path, rep->missing_chunks);
	else if (!rep->have_trailer)
		snprintf(buf, len, "%s: no closing account (trailer): the recording did not end cleanly", s->path);
	else
		return NULL;
	return buf;
}

/* A digest of a symbol table: every symbol's address, type and name. */
static uint64_t diff_symtab_digest(const struct symtab *tab)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < tab->count; i++) {
		const struct symbol *sym = &tab->syms[i];
		const char *name = symtab_name(tab, sym);

		h = (h ^ sym->addr) * 1099511628211ull;
		h = (h ^ (uint8_t)sym->type) * 1099511628211ull;
		for (; *name; name++)
			h = (h ^ (uint8_t)*name) * 1099511628211ull;
	}
	return h;
}

int diff_same_kernel(const struct diff_side *a, const struct diff_side *b, char *why, size_t len)
{
	const struct trace_meta *x = a->meta, *y = b->meta;

	if (x->syms && y->syms) {
		if (x->syms->count == y->syms->count && diff_symtab_digest(x->syms) == diff_symtab_digest(y->syms))
			return 1;
		snprintf(why, len, "their kernels' symbol tables differ (%zu and %zu symbols; kernels %s and %s)",
			 x->syms->count, y->syms->count, x->kernel ? x->kernel : "unknown", y->kernel ? y->kernel : "unknown");
		return 0;
	}
	if (x->kernel && y->kernel && !strcmp(x->kernel, y->kernel))
		return 1;
	snprintf(why, len, "without both symbol tables their kernels are known only by path (%s and %s)",
		 x->kernel ? x->kernel : "none", y->kernel ? y->kernel : "none");
	return 0;
}
