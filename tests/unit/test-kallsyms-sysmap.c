// SPDX-License-Identifier: GPL-2.0
/* System.map parsing and the x86_64 slot classification. */
#include <errno.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/mcount.h"
#include "vmm/sysmap.h"

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

static void check_classify(void)
{
	const uint64_t slot = 0xffffffff81000100, fentry = 0xffffffff81076650;
	const uint64_t lo = 0xffffffff00000000, hi = 0xffffffff80000000;
	int32_t rel = (int32_t)(fentry - (slot + 5));
	uint8_t call[5] = { 0xe8 }, nop[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	uint8_t other[5] = { 0x55, 0x48, 0x89, 0xe5, 0x90 };

	memcpy(call + 1, &rel, 4);
	CHECK(mcount_classify_x86(call, 5, slot, fentry, lo, hi) == MCOUNT_FENTRY, "call __fentry__");
	CHECK(mcount_classify_x86(call, 5, slot, 0, lo, hi) == MCOUNT_UNKNOWN, "a call, but __fentry__ unknown");
	CHECK(mcount_classify_x86(call, 5, slot + 1, fentry, lo, hi) == MCOUNT_UNKNOWN, "a call elsewhere");
	CHECK(mcount_classify_x86(nop, 5, slot, fentry, lo, hi) == MCOUNT_NOP, "the 5-byte NOP");
	CHECK(mcount_classify_x86(nop, 4, slot, fentry, lo, hi) == MCOUNT_UNKNOWN, "too few bytes");
	rel = (int32_t)(0xffffffff7fe00000 - (slot + 5));
	memcpy(call + 1, &rel, 4);
	CHECK(mcount_classify_x86(call, 5, slot, fentry, lo, hi) == MCOUNT_STUB, "call into the stub");
	CHECK(mcount_classify_x86(other, 5, slot, fentry, lo, hi) == MCOUNT_UNKNOWN, "a function prologue");
	CHECK(!strcmp(mcount_state_name(MCOUNT_FENTRY), "fentry") && !strcmp(mcount_state_name(MCOUNT_NOP), "nop") &&
	      !strcmp(mcount_state_name(MCOUNT_STUB), "stub") && !strcmp(mcount_state_name(MCOUNT_UNKNOWN), "unknown"),
	      "state names");
}

int main(void)
{
	check_sysmap();
	check_classify();
	return check_exit();
}
