// SPDX-License-Identifier: GPL-2.0
/*
 * Slot execution test, cross-compiled for arm64 or riscv64 (-DST_ARCH=...)
 * and run under qemu-user. It patches its own compiler-emitted slots (funcs.c)
 * with the arch/ layer, the way vmmtrace patches a guest kernel: prepare
 * every slot once, flip toggles to reach a counting stub, flip them back,
 * restore the original bytes. After each step the stub's counts must equal
 * the functions' own entry counts and the results must not change. The stub
 * is also copied to both edges of the call's range and reached from there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/slot.h"
#include "funcs.h"
#include "tests/unit/check.h"

#define ALL_FUNCS ((1u << ST_NFUNCS) - 1)

extern char st_stub[], st_stub_end[];
extern uint64_t st_stub_hook;
void st_count_hit(uint64_t slot_pc);

static const char *const names[ST_NFUNCS] = { "add", "many", "mix", "fib", "leaf", "apply" };
static const struct slot_ops *ops;
static uint64_t slot_pcs[ST_NFUNCS];
static uint8_t originals[ST_NFUNCS][SLOT_MAX_BYTES];
static unsigned long hits[ST_NFUNCS], stray_hits;

/* Called by the stub with the address of the slot that reached it. */
void st_count_hit(uint64_t slot_pc)
{
	for (int i = 0; i < ST_NFUNCS; i++) {
		if (slot_pcs[i] == slot_pc) {
			hits[i]++;
			return;
		}
	}
	stray_hits++;
}

/* Calls every instrumented function; a checksum of all the results. */
static uint64_t run_workload(void)
{
	uint64_t sum = 0;

	for (int i = 0; i < 40; i++) {
		sum = sum * 31 + (uint64_t)st_add(i, 2 * i);
		sum = sum * 31 + (uint64_t)st_many(i, 2, 3, 4, 5, 6, 7, 8, 9 * i);
		sum = sum * 31 + (uint64_t)(st_mix(i * 0.5, 1.5f, i) * 4);
		sum = sum * 31 + (uint64_t)st_leaf(i);
		sum = sum * 31 + (uint64_t)st_apply(st_leaf, i);
	}
	return sum * 31 + st_fib(12);
}

/* Runs the workload: functions in mask must have reached the stub once per
 * entry, the others never, and the results must equal the unpatched ones. */
static void check_run(const char *phase, uint64_t want_sum, unsigned int mask)
{
	unsigned long e0[ST_NFUNCS], h0[ST_NFUNCS], e, h;
	char detail[256] = "";
	size_t n = 0;
	uint64_t sum;
	int ok = 1;

	for (int i = 0; i < ST_NFUNCS; i++) {
		e0[i] = st_entries[i];
		h0[i] = hits[i];
	}
	sum = run_workload();
	for (int i = 0; i < ST_NFUNCS; i++) {
		e = st_entries[i] - e0[i];
		h = hits[i] - h0[i];
		ok &= e > 0 && h == (mask & 1u << i ? e : 0);
		n += (size_t)snprintf(detail + n, sizeof(detail) - n, " %s %lu/%lu", names[i], h, e);
	}
	CHECK(sum == want_sum, "%s: results unchanged (checksum %" PRIx64 ", want %" PRIx64 ")",
	      phase, sum, want_sum);
	CHECK(ok && !stray_hits, "%s: stub hits/calls:%s, stray %lu", phase, detail, stray_hits);
}

/* Writes the change that turns slot i into next, as the tracer would. */
static void write_slot(int i, const uint8_t *next, struct slot_change *chg)
{
	uint8_t *p = (uint8_t *)(uintptr_t)slot_pcs[i];

	slot_plan_change(ops, slot_pcs[i], p, next, chg);
	memcpy(p + chg->offset, chg->bytes + chg->offset, chg->len);
	__builtin___clear_cache((char *)p, (char *)p + chg->slot_bytes);
}

/* Puts slot i in state (prepared for target); checks it classifies so. */
static int set_state(int i, enum slot_state state, uint64_t target, struct slot_change *chg)
{
	struct slot_ctx ctx = { slot_pcs[i], 0, target };
	uint8_t next[SLOT_MAX_BYTES];
	struct slot_err err = { "" };
	int ret = 0;

	if (state == SLOT_ORIGINAL)
		memcpy(next, originals[i], ops->layout->slot_bytes);
	else
		ret = slot_build(ops, state, &ctx, next, &err);
	if (!CHECK_QUIET(!ret, "build %s for %s: %s", slot_state_name(state), names[i], err.msg))
		return ret;
	write_slot(i, next, chg);
	if (!CHECK_QUIET(slot_classify(ops, &ctx, (uint8_t *)(uintptr_t)slot_pcs[i], NULL) == state,
			 "%s does not classify as %s after the write", names[i],
			 slot_state_name(state)))
		return -EIO;
	return 0;
}

/* Sets every slot in mask; checks each write was one toggle (or not). */
static void set_all(const char *what, unsigned int mask, enum slot_state state,
		    uint64_t target, int want_toggle)
{
	const struct slot_layout *l = ops->layout;
	struct slot_change chg;
	int ok = 1, toggles = 1;

	for (int i = 0; i < ST_NFUNCS; i++) {
		if (!(mask & 1u << i))
			continue;
		ok &= !set_state(i, state, target, &chg);
		toggles &= chg.len == l->toggle_bytes && chg.offset == l->toggle_offset &&
			   chg.insns == 1 && !chg.needs_quiet_guest;
	}
	CHECK(ok, "%s: every slot classifies as %s", what, slot_state_name(state));
	CHECK(toggles == want_toggle, "%s: %s", what, want_toggle ?
	      "each write was the one toggle instruction, safe with tasks in the slot" :
	      "writes outside the toggle, flagged as needing a quiet guest");
}

static int make_writable(void *addr)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(page - 1);

	return mprotect((void *)start, 2 * (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC) ?
	       -errno : 0;
}

/* Text pages of the slots and of the stub, whose hook literal is set here
 * rather than relocated, so that copies of the stub work anywhere. */
static int prepare_text(void)
{
	int ret = make_writable(st_stub);

	for (int i = 0; i < ST_NFUNCS && !ret; i++)
		ret = make_writable((void *)(uintptr_t)slot_pcs[i]);
	if (ret)
		return ret;
	st_stub_hook = (uint64_t)(uintptr_t)st_count_hit;
	__builtin___clear_cache(st_stub, st_stub_end);
	return 0;
}

/* A copy of the stub at exactly target, in a fresh mapping. */
static int copy_stub_to(uint64_t target)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)(st_stub_end - st_stub);
	uintptr_t start = (uintptr_t)target & ~(uintptr_t)(page - 1);
	size_t maplen = ((uintptr_t)target + len - start + (size_t)page - 1) & ~(size_t)(page - 1);
	void *p = mmap((void *)start, maplen, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED || (uintptr_t)p != start) {
		printf("FAIL: cannot map a stub copy at 0x%" PRIx64 " (got %p, errno %d)\n",
		       target, p, errno);
		return -ENOMEM;
	}
	memcpy((void *)(uintptr_t)target, st_stub, len);
	__builtin___clear_cache((char *)(uintptr_t)target, (char *)(uintptr_t)target + len);
	return 0;
}

/* Reaches stub copies at both ends of the call's range from st_leaf. */
static void check_edges(uint64_t want_sum)
{
	const struct slot_layout *l = ops->layout;
	uint64_t cpc = slot_pcs[ST_LEAF] + l->call_offset, al = l->target_align;
	uint64_t edge[2] = { (cpc + (uint64_t)l->reach_max) & ~(al - 1),
			     (cpc + (uint64_t)l->reach_min + al - 1) & ~(al - 1) };
	struct slot_ctx ctx = { slot_pcs[ST_LEAF], 0, 0 };
	uint8_t buf[SLOT_MAX_BYTES];
	struct slot_change chg;
	char what[64];

	for (int k = 0; k < 2; k++) {
		snprintf(what, sizeof(what), "stub at the %s edge (%+" PRId64 ")",
			 k ? "backward" : "forward", (int64_t)(edge[k] - cpc));
		if (copy_stub_to(edge[k]))
			continue;
		if (set_state(ST_LEAF, SLOT_DISABLED, edge[k], &chg) ||
		    set_state(ST_LEAF, SLOT_ENABLED, edge[k], &chg))
			continue;
		check_run(what, want_sum, 1u << ST_LEAF);
		ctx.our_target = k ? edge[k] - al : edge[k] + al;
		CHECK(slot_build(ops, SLOT_ENABLED, &ctx, buf, NULL) == -ERANGE,
		      "%s: one step further is -ERANGE", what);
		set_state(ST_LEAF, SLOT_DISABLED, (uint64_t)(uintptr_t)st_stub, &chg);
	}
}

int main(void)
{
	uint64_t stub = (uint64_t)(uintptr_t)st_stub, want;
	void *fns[ST_NFUNCS] = { st_add, st_many, st_mix, st_fib, st_leaf, st_apply };
	struct slot_ctx ctx = { 0, 0, stub };
	int ok = 1;

	ops = slot_ops_for(ST_ARCH);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < ST_NFUNCS; i++) {
		slot_pcs[i] = ctx.slot_pc = (uint64_t)(uintptr_t)fns[i];
		memcpy(originals[i], fns[i], ops->layout->slot_bytes);
		ok &= CHECK_QUIET(slot_classify(ops, &ctx, originals[i], NULL) == SLOT_ORIGINAL,
				  "%s: compiler's slot is not the %s original form", names[i], ops->name);
	}
	CHECK(ok, "%s: every compiler-emitted slot classifies as original", ops->name);
	CHECK(prepare_text() == 0, "text made writable for patching, stub hooked");
	want = run_workload();
	check_run("original", want, 0);
	set_all("load time: prepare", ALL_FUNCS, SLOT_DISABLED, stub, 0);
	check_run("prepared (disabled)", want, 0);
	set_all("run time: enable half", 0x15, SLOT_ENABLED, stub, 1);
	check_run("half enabled", want, 0x15);
	set_all("run time: enable all", ALL_FUNCS & ~0x15u, SLOT_ENABLED, stub, 1);
	check_run("all enabled", want, ALL_FUNCS);
	set_all("run time: disable all", ALL_FUNCS, SLOT_DISABLED, stub, 1);
	check_run("disabled again", want, 0);
	check_edges(want);
	set_all("restore originals", ALL_FUNCS, SLOT_ORIGINAL, stub, 0);
	check_run("restored", want, 0);
	printf("INFO: %s slot execution test ran to the end\n", ops->name);
	return check_exit();
}
