/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --args: the arguments of each traced call, named and typed by the guest
 * kernel's BTF and printed as the guest's own ftrace prints them with its
 * func-args option (Linux 6.15+): `ksys_dup3(oldfd=0x1, newfd=0x4d,
 * flags=524288)`. The stub records the six argument registers of every call
 * (proto/trace.h, VT_REC_ARGS); this turns them into text. docs/ARGS.md.
 *
 * A table of prototypes by function address, filled from BTF as functions
 * are met (the first lookup of a name costs a binary search of the BTF's
 * functions) or from a raw trace's prototype chunks. Shared by every writer
 * of a run: lookups lock.
 */
#ifndef VMM_OUTPUT_FNARGS_H
#define VMM_OUTPUT_FNARGS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/image/btf.h"

struct fnargs;

/* A table resolving from kb (NULL: only what fnargs_add puts in); NULL when out of memory. */
struct fnargs *fnargs_new(struct kernel_btf *kb);
void fnargs_free(struct fnargs *fa);

/*
 * The prototype of the function at addr, called name (NULL: not a known
 * function), copied to *out: 1, or 0 when the BTF does not know it.
 */
int fnargs_lookup(struct fnargs *fa, uint64_t addr, const char *name, struct kbtf_proto *out);
/* Records the prototype of the function at addr (from a raw trace): 0 or -ENOMEM. */
int fnargs_add(struct fnargs *fa, uint64_t addr, const struct kbtf_proto *p);

/*
 * "(name=value, ...)" for the argument registers args (VT_REC_NARGS of
 * them); with p NULL, the six registers as they are. Returns the length
 * snprintf would (buf holds what fits).
 */
int fnargs_format(const struct kbtf_proto *p, const uint64_t *args, char *buf, size_t len);

/*
 * A prototype's wire form in a raw trace (proto/raw.h, RAW_CHUNK_PROTOS):
 * encode returns the bytes written (at most FNARGS_WIRE_MAX); decode returns
 * the bytes read, or 0 when the bytes are not a valid prototype.
 */
#define FNARGS_WIRE_MAX (4 + KBTF_ARG_REGS * (4 + KBTF_NAME_MAX + 9))
size_t fnargs_encode(const struct kbtf_proto *p, uint8_t *buf);
size_t fnargs_decode(const uint8_t *buf, size_t len, struct kbtf_proto *p);

#endif
