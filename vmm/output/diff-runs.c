// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace diff of several runs of each side (diff.h): each run's calls
 * counted by call path, then the places where the runs differ. A place
 * holds when every run of A calls it a number of times no run of B does,
 * all on one side of B's (A's fewest above B's most, or the other way); a
 * place where the counts overlap is noise, and so is one that would hold
 * but whose function differs between runs somewhere else (a timer
 * callback that fired in some runs only, caught once in each run of one
 * side by chance). A path whose calls are alike in number in every run
 * but come in another order (two initcalls swapped) is a place too: it
 * holds when the order is the same in every run of each side and differs
 * between the sides, and is noise when it varies within a side.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/output/diff.h"

#define DIFF_DEPTH_MAX	512	/* deeper --graph calls are keyed by their caller */
#define DIFF_NONE	UINT32_MAX

int diff_runs_init(struct diff_runs *r, struct diff_names *nm)
{
	memset(r, 0, sizeof(*r));
	r->names = nm;
	r->mask = 4095;
	r->slots = calloc(r->mask + 1, sizeof(*r->slots));
	return r->slots ? 0 : -ENOMEM;
}

void diff_runs_destroy(struct diff_runs *r)
{
	for (size_t i = 0; i < r->nruns; i++) {
		free(r->runs[i].count);
		free(r->runs[i].order);
		free(r->runs[i].seq);
		free(r->runs[i].rank);
	}
	free(r->runs);
	free(r->paths);
	free(r->slots);
	free(r->first[0]);
	free(r->first[1]);
	free(r->places);
	if (r->nruns)
		diff_side_close(&r->ref);
}

static size_t diff_path_hash(uint32_t parent, uint32_t id, size_t mask)
{
	uint64_t h = ((uint64_t)parent << 32 | id) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 29) & mask;
}

static int diff_paths_grow(struct diff_runs *r)
{
	size_t mask = 2 * r->mask + 1;
	uint32_t *slots = calloc(mask + 1, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < r->npaths; i++) {
		size_t k = diff_path_hash(r->paths[i].parent, r->paths[i].id, mask);

		while (slots[k])
			k = (k + 1) & mask;
		slots[k] = (uint32_t)(i + 1);
	}
	free(r->slots);
	r->slots = slots;
	r->mask = mask;
	return 0;
}

/* The index of path (parent, id), made when new; DIFF_NONE when out of memory. */
static uint32_t diff_path_get(struct diff_runs *r, uint32_t parent, uint32_t id)
{
	size_t k = diff_path_hash(parent, id, r->mask);

	for (; r->slots[k]; k = (k + 1) & r->mask) {
		const struct diff_path *p = &r->paths[r->slots[k] - 1];

		if (p->parent == parent && p->id == id)
			return r->slots[k] - 1;
	}
	if (r->npaths == r->paths_cap) {
		size_t cap = r->paths_cap ? 2 * r->paths_cap : 4096;
		struct diff_path *n = realloc(r->paths, cap * sizeof(*n));

		if (!n || r->npaths >= DIFF_NONE - 1)
			return DIFF_NONE;
		r->paths = n;
		r->paths_cap = cap;
	}
	r->paths[r->npaths] = (struct diff_path){ .parent = parent, .id = id };
	r->slots[k] = (uint32_t)(r->npaths + 1);
	if (2 * ++r->npaths > r->mask && diff_paths_grow(r))
		return DIFF_NONE;
	return (uint32_t)(r->npaths - 1);
}

static int diff_grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 1024;
	void *n;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(n = realloc(*v, c * size)))
		return -ENOMEM;
	memset((char *)n + *cap * size, 0, (c - *cap) * size);
	*v = n;
	*cap = c;
	return 0;
}

/* One run being read. */
struct diff_reading {
	struct diff_runs *r;
	struct diff_side *s;
	struct diff_run *run;
	int side;
	uint32_t index;			/* the run's number on its side */
};

/* The path of a call: nested in its task's enclosing --graph call, else under its caller. */
static uint32_t diff_call_path(struct diff_reading *rd, struct diff_task *t, const struct ring_event *ev, uint32_t id)
{
	int hooked = !!(ev->flags & VT_REC_FLAG_HOOKED) && ev->depth < DIFF_DEPTH_MAX;
	uint32_t parent, p;
	char buf[32];

	if (hooked && ev->depth && ev->depth <= t->nstack && t->stack[ev->depth - 1]) {
		parent = t->stack[ev->depth - 1];
	} else {
		uint32_t caller = diff_names_id(rd->r->names, diff_name_of(rd->s->meta, ev->parent, 0, buf));

		if (caller == DIFF_NONE || (p = diff_path_get(rd->r, 0, caller | DIFF_PATH_CALLER)) == DIFF_NONE)
			return DIFF_NONE;
		parent = p + 1;
	}
	if ((p = diff_path_get(rd->r, parent, id)) == DIFF_NONE)
		return DIFF_NONE;
	if (hooked) {
		size_t cap = t->stack_cap;

		if (diff_grow((void **)&t->stack, &cap, ev->depth + 1, sizeof(*t->stack)))
			return DIFF_NONE;
		t->stack_cap = (uint32_t)cap;
		t->stack[ev->depth] = p + 1;
		t->nstack = ev->depth + 1;
	}
	return p;
}

/* The order of the calls in path up: path p called once more. */
static int diff_runs_order(struct diff_run *run, uint32_t up, uint32_t p)
{
	if (diff_grow((void **)&run->order, &run->norder, (size_t)up + 1, sizeof(*run->order)) ||
	    diff_grow((void **)&run->seq, &run->nseq, (size_t)up + 1, sizeof(*run->seq)) ||
	    diff_grow((void **)&run->rank, &run->nrank, (size_t)p + 1, sizeof(*run->rank)))
		return -ENOMEM;
	run->order[up] = (run->order[up] ^ (p + 1)) * 0x100000001b3ull;	/* FNV-1a over the paths' numbers */
	if (run->seq[up] < UINT32_MAX)
		run->seq[up]++;
	if (!run->rank[p])
		run->rank[p] = run->seq[up];
	return 0;
}

static int diff_runs_event(void *opaque, const struct ring_event *ev)
{
	struct diff_reading *rd = opaque;
	struct diff_runs *r = rd->r;
	struct diff_first *f;
	struct diff_task *t;
	uint32_t id, p;
	int rc;

	rd->s->events++;
	if ((rc = diff_side_take(rd->s, ev, &t, &id)) <= 0)
		return rc;
	rd->s->calls++;
	if ((p = diff_call_path(rd, t, ev, id)) == DIFF_NONE ||
	    diff_grow((void **)&rd->run->count, &rd->run->ncount, (size_t)p + 1, sizeof(*rd->run->count)) ||
	    diff_grow((void **)&r->first[rd->side], &r->first_cap[rd->side], (size_t)p + 1, sizeof(*f)))
		return -ENOMEM;
	if (rd->run->count[p] < UINT32_MAX)
		rd->run->count[p]++;
	if ((rc = diff_runs_order(rd->run, r->paths[p].parent - 1, p)))
		return rc;
	f = &r->first[rd->side][p];
	if (!f->task[0]) {
		f->ns = trace_meta_ns(rd->s->meta, ev->tsc);
		f->run = rd->index;
		memcpy(f->task, t->label, sizeof(f->task));
	}
	return 0;
}

/* Whether a run can be compared with the first: complete, the same kernel (unless force). */
static int diff_runs_check(struct diff_runs *r, struct diff_side *s, int force, struct errbuf *err)
{
	char why[512];

	if (force)
		return 0;
	if (diff_side_incomplete(s, why, sizeof(why)))
		return err_set(err, EINVAL, "%s; --force compares what it holds", why);
	if (s != &r->ref && !diff_same_kernel(&r->ref, s, why, sizeof(why)))
		return err_set(err, EINVAL, "%s and %s are recordings of different kernels: %s; --force compares them by "
			       "function name", r->ref.path, s->path, why);
	return 0;
}

int diff_runs_add(struct diff_runs *r, int side, const char *path, int force, struct errbuf *err)
{
	struct diff_side one, *s = r->nruns ? &one : &r->ref;
	struct diff_reading rd = { .r = r, .s = s, .side = side, .index = (uint32_t)r->nside[side] };
	struct diff_run *runs = realloc(r->runs, (r->nruns + 1) * sizeof(*runs));
	int rc;

	if (!runs)
		return err_set(err, ENOMEM, "out of memory");
	r->runs = runs;
	rd.run = &r->runs[r->nruns];
	memset(rd.run, 0, sizeof(*rd.run));
	if (diff_side_open(s, path, r->names, err)) {
		diff_side_close(s);	/* the first run's too: r->nruns stays 0, so destroy leaves it */
		return -EINVAL;
	}
	r->nruns++;
	r->nside[side]++;
	rc = diff_runs_check(r, s, force, err);
	if (!rc && (rc = raw_read_replay(s->r, diff_runs_event, &rd)))
		err_set(err, -rc, "reading %s: %s", path, strerror(-rc));
	*rd.run = (struct diff_run){ .path = path, .calls = s->calls, .events = s->events, .ntasks = s->ntasks,
				     .ncpus = s->meta->ncpus, .graph = s->meta->graph, .count = rd.run->count,
				     .ncount = rd.run->ncount, .order = rd.run->order, .seq = rd.run->seq,
				     .rank = rd.run->rank, .norder = rd.run->norder, .nseq = rd.run->nseq,
				     .nrank = rd.run->nrank };
	if (s != &r->ref)
		diff_side_close(s);
	return rc;
}

static uint32_t diff_run_count(const struct diff_run *run, uint32_t p)
{
	return p < run->ncount ? run->count[p] : 0;
}

const char *diff_runs_func(const struct diff_runs *r, uint32_t path)
{
	return r->names->names[r->paths[path].id & ~DIFF_PATH_CALLER];
}

static uint64_t diff_place_ns(const struct diff_place *pl)
{
	return pl->first ? pl->first->ns : 0;
}

static int diff_place_cmp(const void *x, const void *y)
{
	const struct diff_place *p = x, *q = y;

	if (p->holds != q->holds)
		return p->holds ? -1 : 1;
	if (diff_place_ns(p) != diff_place_ns(q))
		return diff_place_ns(p) < diff_place_ns(q) ? -1 : 1;
	return p->path < q->path ? -1 : p->path > q->path;
}

/* The place for path p: its counts, whether it holds, where it was first called. */
static struct diff_place diff_place_of(const struct diff_runs *r, uint32_t p)
{
	struct diff_place pl = { .path = p, .min = { UINT32_MAX, UINT32_MAX } };

	for (size_t i = 0; i < r->nruns; i++) {
		int side = i >= r->nside[0];
		uint32_t c = diff_run_count(&r->runs[i], p);

		pl.min[side] = c < pl.min[side] ? c : pl.min[side];
		pl.max[side] = c > pl.max[side] ? c : pl.max[side];
	}
	pl.holds = pl.max[0] < pl.min[1] || pl.max[1] < pl.min[0];
	for (int side = 0; side < 2 && !pl.first; side++)
		if (p < r->first_cap[side] && r->first[side][p].task[0]) {
			pl.first = &r->first[side][p];
			pl.first_run = r->runs[(side ? r->nside[0] : 0) + pl.first->run].path;
		}
	return pl;
}

static uint32_t diff_run_rank(const struct diff_run *run, uint32_t p)
{
	return p < run->nrank ? run->rank[p] : 0;
}

/*
 * Where the order of the calls in path up first differs between A's first
 * run and B's: of the paths called in it whose first call comes at
 * another place, the one A calls first (kid[0]) and the one B does.
 */
static void diff_order_kids(const struct diff_runs *r, uint32_t up, struct diff_place *pl)
{
	const struct diff_run *a = &r->runs[0], *b = &r->runs[r->nside[0]];
	uint32_t first[2] = { UINT32_MAX, UINT32_MAX };

	pl->kid[0] = pl->kid[1] = DIFF_PATH_NONE;
	for (uint32_t c = 0; c < r->npaths; c++) {
		uint32_t ra = diff_run_rank(a, c), rb = diff_run_rank(b, c);

		if (r->paths[c].parent != up + 1 || ra == rb)
			continue;
		if (ra && ra < first[0]) {
			first[0] = ra;
			pl->kid[0] = c;
		}
		if (rb && rb < first[1]) {
			first[1] = rb;
			pl->kid[1] = c;
		}
	}
}

/*
 * The order places: paths under no place that differs in count, none of
 * whose calls differs in count, whose calls' order differs between runs.
 */
static int diff_runs_orders(struct diff_runs *r, const uint32_t *top, size_t *cap)
{
	uint8_t *kids_differ = calloc(r->npaths + 1, 1);

	if (!kids_differ)
		return -ENOMEM;
	for (uint32_t p = 0; p < r->npaths; p++)
		if (top[p] != DIFF_NONE && r->paths[p].parent)
			kids_differ[r->paths[p].parent - 1] = 1;
	for (uint32_t up = 0; up < r->npaths; up++) {
		uint64_t sig[2] = { 0, 0 };
		int same[2] = { 1, 1 };
		struct diff_place pl;

		if (top[up] != DIFF_NONE || kids_differ[up])
			continue;
		for (size_t i = 0; i < r->nruns; i++) {
			int side = i >= r->nside[0];
			uint64_t o = up < r->runs[i].norder ? r->runs[i].order[up] : 0;

			if (i == (side ? r->nside[0] : 0))
				sig[side] = o;
			else if (o != sig[side])
				same[side] = 0;
		}
		if (same[0] && same[1] && sig[0] == sig[1])
			continue;
		if (diff_grow((void **)&r->places, cap, r->nplaces + 1, sizeof(*r->places))) {
			free(kids_differ);
			return -ENOMEM;
		}
		pl = diff_place_of(r, up);
		pl.order = 1;
		pl.holds = same[0] && same[1];
		pl.kid[0] = pl.kid[1] = DIFF_PATH_NONE;
		if (pl.holds)
			diff_order_kids(r, up, &pl);
		r->places[r->nplaces++] = pl;
	}
	free(kids_differ);
	return 0;
}

int diff_runs_compare(struct diff_runs *r)
{
	uint32_t *top = malloc((r->npaths + 1) * sizeof(*top));
	int8_t *noisy = calloc(r->names->n + 1, 1);
	size_t cap = 0;

	if (!top || !noisy)
		goto oom;
	for (uint32_t p = 0; p < r->npaths; p++) {
		const struct diff_path *path = &r->paths[p];
		uint32_t ptop = path->parent ? top[path->parent - 1] : DIFF_NONE;
		struct diff_place pl;

		top[p] = ptop;
		if (path->id & DIFF_PATH_CALLER)
			continue;
		pl = diff_place_of(r, p);
		if (pl.min[0] == pl.max[1] && pl.max[0] == pl.min[1] && pl.min[0] == pl.max[0])
			continue;	/* every run alike */
		if (ptop != DIFF_NONE) {
			r->places[ptop].under++;
			continue;
		}
		if (diff_grow((void **)&r->places, &cap, r->nplaces + 1, sizeof(*r->places)))
			goto oom;
		top[p] = (uint32_t)r->nplaces;
		r->places[r->nplaces++] = pl;
		if (!pl.holds)
			noisy[path->id] = 1;
	}
	if (diff_runs_orders(r, top, &cap))
		goto oom;
	for (size_t i = 0; i < r->nplaces; i++) {
		struct diff_place *pl = &r->places[i];

		if (pl->holds && !pl->order && noisy[r->paths[pl->path].id]) {
			pl->holds = 0;
			pl->noisy_name = 1;
		}
		r->nholds += pl->holds;
	}
	if (r->nplaces)
		qsort(r->places, r->nplaces, sizeof(*r->places), diff_place_cmp);
	free(top);
	free(noisy);
	return 0;
oom:
	free(top);
	free(noisy);
	return -ENOMEM;
}
