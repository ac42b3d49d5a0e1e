// SPDX-License-Identifier: GPL-2.0
/*
 * Functions with compiler-emitted entry slots, covering what a stub must
 * preserve: integer and stack-passed arguments, FP arguments, recursion,
 * a leaf, an indirect call. Built with -fno-optimize-sibling-calls so that
 * every call stays a call and entries are countable.
 */
#include "funcs.h"

volatile unsigned long st_entries[ST_NFUNCS];

#define NOINLINE __attribute__((noinline, noclone))

NOINLINE int st_add(int a, int b)
{
	st_entries[ST_ADD]++;
	return a + b;
}

NOINLINE long st_many(long a, long b, long c, long d, long e, long f, long g, long h, long i)
{
	st_entries[ST_MANY]++;
	return a - b + c * 3 - d + e * 5 - f + g * 7 - h + i * 11;
}

NOINLINE double st_mix(double x, float y, int n)
{
	st_entries[ST_MIX]++;
	return x * y + n;
}

NOINLINE unsigned int st_fib(unsigned int n)
{
	st_entries[ST_FIB]++;
	return n < 2 ? n : st_fib(n - 1) + st_fib(n - 2);
}

NOINLINE int st_leaf(int x)
{
	st_entries[ST_LEAF]++;
	return x * 7 + 3;
}

NOINLINE int st_apply(int (*fn)(int), int x)
{
	st_entries[ST_APPLY]++;
	return fn(x) + fn(x + 1);
}
