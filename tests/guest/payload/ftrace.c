// SPDX-License-Identifier: GPL-2.0
/*
 * The payload's ftrace_init does to its slots what Linux's does
 * (ftrace_process_locs, ftrace_make_nop): every __mcount_loc entry must hold
 * exactly `call __fentry__`, which becomes the 5-byte NOP; anything else is
 * a mismatch, where Linux says "ftrace failed to modify" and gives up its
 * ftrace. vmmtrace must therefore put back every slot it holds before this
 * runs (a breakpoint on ftrace_init) and call the stub again over the NOPs
 * after it returns. Like Linux's, it is not traced itself, and it calls
 * nothing while it rewrites slots (a slot of a function it called could be
 * rewritten under it).
 */
#include "tests/guest/payload/payload.h"

#define CALL_REL32 0xe8
#define SLOT_BYTES 5

extern const uint64_t __start_mcount_loc[], __stop_mcount_loc[];
extern char __fentry__[];

static const uint8_t nop5[SLOT_BYTES] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

struct ftrace_result ftrace_result;

NOTRACE static int slot_calls_fentry(const uint8_t *p, uint64_t addr)
{
	int32_t rel = (int32_t)((uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16 |
				(uint32_t)p[4] << 24);

	return p[0] == CALL_REL32 && addr + SLOT_BYTES + (uint64_t)(int64_t)rel == (uint64_t)__fentry__;
}

NOTRACE __attribute__((noinline)) void ftrace_init(void)
{
	struct ftrace_result r = { 0 };

	for (const uint64_t *loc = __start_mcount_loc; loc < __stop_mcount_loc; loc++) {
		volatile uint8_t *p = (volatile uint8_t *)*loc;

		if (!*loc)
			continue;
		r.slots++;
		if (!slot_calls_fentry((const uint8_t *)p, *loc)) {
			if (!r.mismatched++)
				r.first_bad = *loc;
			continue;
		}
		for (unsigned i = 0; i < SLOT_BYTES; i++)
			p[i] = nop5[i];
		r.nopped++;
	}
	ftrace_result = r;
}
