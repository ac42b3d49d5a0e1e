// SPDX-License-Identifier: GPL-2.0
/*
 * --args formatting (vmm/output/fnargs.c): each kind of parameter printed as
 * the guest's ftrace prints it with func-args (kernel/trace/trace_output.c,
 * print_function_args: signed integers in decimal, unsigned ones and
 * pointers in hex, what it cannot show as "(KIND)[0x..:0x..]", "?" before a
 * value of unknown type, "..." past the six argument registers), integers
 * cut to their size; the raw registers when no prototype is known; the
 * prototype table; the wire form in raw traces, whose decoder takes nothing
 * malformed from a file.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "vmm/output/fnargs.h"

static struct kbtf_param param(const char *name, unsigned kind, unsigned size, int sign, const char *type)
{
	struct kbtf_param p;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	p.kind = (uint8_t)kind;
	p.size = (uint8_t)size;
	p.is_signed = (uint8_t)sign;
	snprintf(p.type, sizeof(p.type), "%s", type);
	return p;
}

static void expect(const struct kbtf_proto *p, const uint64_t *args, const char *want, const char *what)
{
	char buf[512];
	int n = fnargs_format(p, args, buf, sizeof(buf));

	CHECK(!strcmp(buf, want) && n == (int)strlen(want), "%s: %s", what, buf);
}

static void test_kinds(void)
{
	struct kbtf_proto p = { 0 };
	uint64_t a[6] = { 0x1, 0x4d, 0xffffffff, 0xffff888003a1c000ull, 0x123456789, 7 };

	/* ksys_dup3(unsigned int oldfd, unsigned int newfd, int flags): flags -1 in a 32-bit register. */
	p.nparams = p.kept = 3;
	p.p[0] = param("oldfd", KBTF_ARG_UINT, 4, 0, "");
	p.p[1] = param("newfd", KBTF_ARG_UINT, 4, 0, "");
	p.p[2] = param("flags", KBTF_ARG_SINT, 4, 0, "");
	expect(&p, a, "(oldfd=0x1, newfd=0x4d, flags=-1)", "unsigned in hex, a signed int sign-extended from 32 bits");
	a[0] = 0xdeadbeef00000001ull;
	expect(&p, a, "(oldfd=0x1, newfd=0x4d, flags=-1)", "an int's upper register half is not the int's");
	a[0] = 1;
	a[2] = 524288;
	expect(&p, a, "(oldfd=0x1, newfd=0x4d, flags=524288)", "a positive int in decimal");

	memset(&p, 0, sizeof(p));
	p.nparams = p.kept = 6;
	p.p[0] = param("file", KBTF_ARG_PTR, 8, 0, "");
	p.p[1] = param("ch", KBTF_ARG_SINT, 1, 0, "");
	p.p[2] = param("on", KBTF_ARG_UINT, 1, 0, "");
	p.p[3] = param("mode", KBTF_ARG_ENUM, 4, 0, "");
	p.p[4] = param("delta", KBTF_ARG_SINT, 8, 0, "");
	p.p[5] = param("cmp", KBTF_ARG_ENUM, 4, 1, "");
	{
		uint64_t b[6] = { 0xffff888003a1c000ull, 0xff, 0x101, 0xfffffffe, (uint64_t)-5, 0xfffffffe };

		expect(&p, b, "(file=0xffff888003a1c000, ch=-1, on=0x1, mode=4294967294, delta=-5, cmp=-2)",
		       "pointer, char, bool, unsigned and signed enums, a long");
	}

	/* A struct by value takes its words; the seventh register is not recorded. */
	memset(&p, 0, sizeof(p));
	p.nparams = 3;
	p.kept = 3;
	p.p[0] = param("now", KBTF_ARG_OTHER, 16, 0, "STRUCT");
	p.p[1] = param("x", KBTF_ARG_SINT, 4, 0, "");
	p.p[2] = param("d", KBTF_ARG_OTHER, 8, 0, "FLOAT");
	expect(&p, a, "(now=(STRUCT)[0x1:0x4d], x=524288, d=(FLOAT)[0xffff888003a1c000])",
	       "a 16-byte struct in two registers, a float as its register");
	memset(&p, 0, sizeof(p));
	p.nparams = 7;
	p.kept = 6;
	for (unsigned i = 0; i < 6; i++)
		p.p[i] = param("n", KBTF_ARG_UINT, 8, 0, "");
	expect(&p, a, "(n=0x1, n=0x4d, n=0x80000, n=0xffff888003a1c000, n=0x123456789, n=0x7, ...)",
	       "a seventh parameter: \"...\", as ftrace prints it");
	memset(&p, 0, sizeof(p));
	p.nparams = p.kept = 5;
	p.p[0] = param("a", KBTF_ARG_UINT, 8, 0, "");
	p.p[1] = param("b", KBTF_ARG_UINT, 8, 0, "");
	p.p[2] = param("c", KBTF_ARG_UINT, 8, 0, "");
	p.p[3] = param("d", KBTF_ARG_UINT, 8, 0, "");
	p.p[4] = param("big", KBTF_ARG_OTHER, 24, 0, "STRUCT");
	expect(&p, a, "(a=0x1, b=0x4d, c=0x80000, d=0xffff888003a1c000, big=(STRUCT)[0x123456789:0x7:...])",
	       "a struct running past the sixth register");
	memset(&p, 0, sizeof(p));
	p.nparams = p.kept = 2;
	p.variadic = 1;
	p.p[0] = param("fmt", KBTF_ARG_PTR, 8, 0, "");
	p.p[1] = param("", KBTF_ARG_UNKNOWN, 8, 0, "");
	expect(&p, a, "(fmt=0x1, ?0x4d, ...)", "an unnamed parameter of unknown type, then variadic");
	memset(&p, 0, sizeof(p));
	expect(&p, a, "()", "no parameters");
	expect(NULL, a, "(0x1, 0x4d, 0x80000, 0xffff888003a1c000, 0x123456789, 0x7)",
	       "no prototype: the six registers as they are");
	{
		char small[12];
		int n = fnargs_format(NULL, a, small, sizeof(small));

		CHECK(n > (int)sizeof(small) && strlen(small) == sizeof(small) - 1 && !strncmp(small, "(0x1, 0x4d,", 11),
		      "a short buffer holds what fits, NUL-terminated; the whole length is returned (%d)", n);
	}
}

static void test_table(void)
{
	struct fnargs *fa = fnargs_new(NULL);
	struct kbtf_proto p = { .nparams = 1, .kept = 1 }, got;
	int ok = 1;

	p.p[0] = param("fd", KBTF_ARG_UINT, 4, 0, "");
	CHECK(fa && !fnargs_lookup(fa, 0xffffffff81000000ull, "close_fd", &got),
	      "a table without BTF knows no function by name");
	for (uint64_t i = 1; i <= 5000 && ok; i++) {
		p.p[0].size = (uint8_t)(1 + i % 8);
		ok = !fnargs_add(fa, 0xffffffff81000000ull + 16 * i, &p);
	}
	CHECK(ok, "5,000 prototypes added (the table grows)");
	for (uint64_t i = 1; i <= 5000 && ok; i++)
		ok = fnargs_lookup(fa, 0xffffffff81000000ull + 16 * i, NULL, &got) && got.p[0].size == 1 + i % 8 &&
		     !strcmp(got.p[0].name, "fd");
	CHECK(ok, "each of them found by its address");
	CHECK(!fnargs_lookup(fa, 0xffffffff81000008ull, "x", &got) && !fnargs_lookup(fa, 0, "x", &got),
	      "an address never added, and address 0, are not found");
	fnargs_free(fa);
}

static void test_wire(void)
{
	struct kbtf_proto p = { 0 }, q;
	uint8_t buf[FNARGS_WIRE_MAX + 16];
	size_t n, bad = 0, taken = 0;
	char a[256], b[256];
	uint64_t args[6] = { 1, 2, 3, 4, 5, 6 };

	p.nparams = 9;
	p.kept = 6;
	p.variadic = 1;
	for (unsigned i = 0; i < 6; i++)
		p.p[i] = param(i ? "a_rather_long_parameter_name_of_39_char" : "x", i % KBTF_ARG_KINDS, i == 5 ? 24 : 4,
			       i == 4, i == 5 ? "STRUCT" : "");
	n = fnargs_encode(&p, buf);
	CHECK(n <= FNARGS_WIRE_MAX && fnargs_decode(buf, n, &q) == n, "wire form: %zu bytes, decoded whole", n);
	fnargs_format(&p, args, a, sizeof(a));
	fnargs_format(&q, args, b, sizeof(b));
	CHECK(!strcmp(a, b), "wire form: the decoded prototype prints the same: %s", b);
	for (size_t len = 0; len < n; len++)
		bad += fnargs_decode(buf, len, &q) != 0;
	CHECK(!bad, "wire form: every cut short of the whole is refused (%zu accepted)", bad);
	/* Every single-byte change: refused, or a prototype whose names print cleanly. */
	for (size_t i = 0; i < n; i++) {
		for (unsigned v = 0; v < 256; v++) {
			uint8_t save = buf[i];
			size_t m;

			buf[i] = (uint8_t)v;
			m = fnargs_decode(buf, n, &q);
			if (m) {
				taken++;
				fnargs_format(&q, args, b, sizeof(b));
				for (const char *c = b; *c; c++)
					bad += *c < 0x20 || *c > 0x7e;
				bad += q.kept > KBTF_ARG_REGS || q.kept > q.nparams;
			}
			buf[i] = save;
		}
	}
	CHECK(!bad, "wire form: %zu of %zu one-byte changes decode, none to a line with a control "
	      "character or past the registers", taken, n * 256);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_kinds();
	test_table();
	test_wire();
	return check_exit();
}
