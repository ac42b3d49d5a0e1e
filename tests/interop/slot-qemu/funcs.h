/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The instrumented functions of the slot execution test. funcs.c is the only
 * file built with -fpatchable-function-entry, so only these have slots.
 * Each counts its own entries, the truth the stub's counts are held to.
 */
#ifndef SLOT_QEMU_FUNCS_H
#define SLOT_QEMU_FUNCS_H

enum { ST_ADD, ST_MANY, ST_MIX, ST_FIB, ST_LEAF, ST_APPLY, ST_NFUNCS };

extern volatile unsigned long st_entries[ST_NFUNCS];

int st_add(int a, int b);
long st_many(long a, long b, long c, long d, long e, long f, long g, long h, long i);
double st_mix(double x, float y, int n);
unsigned int st_fib(unsigned int n);
int st_leaf(int x);
int st_apply(int (*fn)(int), int x);

#endif
