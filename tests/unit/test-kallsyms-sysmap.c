// SPDX-License-Identifier: GPL-2.0
/* System.map parsing and the x86_64 slot classification. */
#include <errno.h>
#include <string.h>

#include "arch/slot.h"
#include "tests/unit/check.h"
#include "vmm/image/mcount.h"
#include "vmm/image/sysmap.h"

static int parse(const char *text, struct symtab *t, struct errbuf *err)
{
	symtab_init(t);
	return sysmap_parse("test.map", text, strlen(text), t, err);
}

static void check_sysmap(void)
{
	struct symtab t;
	struct errbuf err;
	const struct symbol *s;
	int rc;

	rc = parse("0000000000000000 D __per_cpu_start\n"
		   "ffffffff81000000 T _stext\r\n"
		   "\n"
		   "ffffffff83079e46 T start_kernel\n"
		   "ffffffffc0a00000 t ext4_init_fs\t[ext4]\n"
		   "ffffffff81993000 ? __nosave_begin", &t, &err);
	CHECK(rc == 0 && t.count == 4, "System.map: 4 symbols, the module's skipped (%s)", rc ? err.msg : "ok");
	symtab_finish(&t);
	s = symtab_find_name(&t, "start_kernel");
	CHECK(s && s->addr == 0xffffffff83079e46 && s->type == 'T', "start_kernel at ffffffff83079e46 T");
	s = symtab_find_name(&t, "__nosave_begin");
	CHECK(s && s->type == '?', "nm's '?' type and a missing final newline");
	symtab_destroy(&t);

	rc = parse("ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n", &t, &err);
	CHECK(rc == -EINVAL && strstr(err.msg, "placeholder"), "Debian's placeholder: %s", err.msg);
	symtab_destroy(&t);
	rc = parse("0000000000000000 T a\n0000000000000000 T b\n", &t, &err);
	CHECK(rc == -EINVAL && strstr(err.msg, "zero"), "unprivileged /proc/kallsyms: %s", err.msg);
	symtab_destroy(&t);
	rc = parse("ffffffff81000000 T ok\nnot a map\n", &t, &err);
	CHECK(rc == -EINVAL && strstr(err.msg, "test.map:2"), "garbage names its line: %s", err.msg);
	symtab_destroy(&t);
	rc = parse("ffffffff81000000 TT x\n", &t, &err);
	CHECK(rc == -EINVAL, "a two-letter type is refused");
	symtab_destroy(&t);
	rc = parse("1ffffffff81000000 T x\n", &t, &err);
	CHECK(rc == -EINVAL, "a 17-digit address is refused");
	symtab_destroy(&t);
	rc = parse("", &t, &err);
	CHECK(rc == -EINVAL && strstr(err.msg, "no symbols"), "an empty file: %s", err.msg);
	symtab_destroy(&t);
	rc = sysmap_read_file("/nonexistent/System.map", &t, &err);
	CHECK(rc == -ENOENT && strstr(err.msg, "/nonexistent/System.map"), "a missing file: %s", err.msg);
}

/* Slots judged from the image alone: no stub is known there. */
static void check_classify(void)
{
	const struct slot_ops *x86 = &slot_ops_x86_64, *a64 = &slot_ops_arm64;
	const uint64_t slot = 0xffffffff81000100, fentry = 0xffffffff81076650;
	int32_t rel = (int32_t)(fentry - (slot + 5));
	uint8_t call[5] = { 0xe8 }, nop[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	uint8_t other[5] = { 0x55, 0x48, 0x89, 0xe5, 0x90 };
	uint8_t a64_nops[8] = { 0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20, 0x03, 0xd5 };
	uint8_t a64_dis[8] = { 0xe9, 0x03, 0x1e, 0xaa, 0x1f, 0x20, 0x03, 0xd5 };

	memcpy(call + 1, &rel, 4);
	CHECK(mcount_classify(x86, call, 5, slot, fentry) == SLOT_ORIGINAL, "call __fentry__ is original");
	CHECK(mcount_classify(x86, call, 5, slot, 0) == SLOT_UNKNOWN, "a call, but __fentry__ unknown");
	CHECK(mcount_classify(x86, call, 5, slot + 1, fentry) == SLOT_ENABLED_ELSEWHERE,
	      "a call to another target is enabled-elsewhere");
	CHECK(mcount_classify(x86, nop, 5, slot, fentry) == SLOT_DISABLED, "the 5-byte NOP is disabled");
	CHECK(mcount_classify(x86, nop, 5, slot, 0) == SLOT_DISABLED, "... also without __fentry__");
	CHECK(mcount_classify(x86, nop, 4, slot, fentry) == SLOT_UNKNOWN, "too few bytes");
	rel = (int32_t)(0xffffffff7fe00000 - (slot + 5));
	memcpy(call + 1, &rel, 4);
	CHECK(mcount_classify(x86, call, 5, slot, fentry) == SLOT_ENABLED_ELSEWHERE,
	      "a call into the stub hole: the image alone cannot say whose");
	rel = (int32_t)(SLOT_TARGET_NONE - (slot + 5));
	memcpy(call + 1, &rel, 4);
	CHECK(mcount_classify(x86, call, 5, slot, fentry) == SLOT_ENABLED_ELSEWHERE,
	      "a call to the no-stub marker is not taken for ours");
	CHECK(mcount_classify(x86, other, 5, slot, fentry) == SLOT_UNKNOWN, "a function prologue");
	CHECK(mcount_classify(a64, a64_nops, 8, 0xffff800008010000, 0) == SLOT_ORIGINAL,
	      "arm64: the compiler's two NOPs are original, no __fentry__ needed");
	CHECK(mcount_classify(a64, a64_dis, 8, 0xffff800008010000, 0) == SLOT_DISABLED,
	      "arm64: mov x9, x30; nop is disabled");
}

int main(void)
{
	check_sysmap();
	check_classify();
	return check_exit();
}
