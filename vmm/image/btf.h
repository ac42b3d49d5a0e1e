/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest kernel's own type information (BTF), read with libbpf: where
 * the members the tracer reads from guest memory lie (task_struct's pid,
 * comm, ...). From the .BTF section of the vmlinux inside the image, or
 * from a file the user names (a raw BTF blob or an ELF with .BTF).
 * libbpf validates the blob before anything here uses it.
 */
#ifndef VMM_IMAGE_BTF_H
#define VMM_IMAGE_BTF_H

#include <stdint.h>

#include "vmm/image/elf.h"
#include "vmm/util/error.h"

struct btf;

struct kernel_btf {
	struct btf *btf;
	char source[256];		/* where it came from, for messages */
	uint32_t *funcs;		/* FUNC type ids by name (kbtf_func_proto builds it) */
	uint32_t nfuncs;
};

/*
 * A function's parameters, as ftrace's func-args option prints them
 * (kernel/trace/trace_output.c, print_function_args): the first
 * KBTF_ARG_REGS argument registers, named and typed.
 */
#define KBTF_ARG_REGS		6	/* FTRACE_REGS_MAX_ARGS on x86_64, arm64 and riscv64 */
#define KBTF_NAME_MAX		40	/* a longer parameter name is cut */

enum kbtf_arg_kind {
	KBTF_ARG_UNKNOWN,		/* printed "?0x..." */
	KBTF_ARG_PTR,			/* "0x..." */
	KBTF_ARG_SINT,			/* decimal, sign-extended from its size */
	KBTF_ARG_UINT,			/* "0x...", cut to its size (bool and char too) */
	KBTF_ARG_ENUM,			/* decimal, from its size, signed when the enum is */
	KBTF_ARG_OTHER,			/* "(KIND)[0x...:0x...]", one word per register it takes */
	KBTF_ARG_KINDS
};

struct kbtf_param {
	char name[KBTF_NAME_MAX];	/* "" when BTF names none */
	uint8_t kind;			/* enum kbtf_arg_kind */
	uint8_t size;			/* bytes (1..8; OTHER: up to 255, 8 per register) */
	uint8_t is_signed;		/* ENUM */
	char type[9];			/* OTHER: BTF's kind name ("STRUCT", "UNION", "FLOAT", ...) */
};

struct kbtf_proto {
	uint8_t nparams;		/* the function's parameters (may be more than kept) */
	uint8_t kept;			/* those in p[]: at most one per register */
	uint8_t variadic;		/* its last parameter is "..." */
	struct kbtf_param p[KBTF_ARG_REGS];
};

/* From the image's .BTF section; -ENOENT when it has none. */
int kbtf_from_elf(const struct elf_image *elf, const char *name, struct kernel_btf *kb,
		  struct errbuf *err);
/* From a file: raw BTF, or an ELF holding .BTF (a vmlinux). */
int kbtf_from_file(const char *path, struct kernel_btf *kb, struct errbuf *err);
void kbtf_close(struct kernel_btf *kb);

/*
 * Byte offset and size of a member of struct (or union) `type`, named by a
 * dotted path ("thread_info.flags"); members of anonymous structs and unions
 * are found as the compiler finds them. -ENOENT when the type or a member is
 * missing, -EINVAL for a bit field.
 */
int kbtf_member(const struct kernel_btf *kb, const char *type, const char *path,
		uint32_t *offset, uint32_t *size);
/* Size of struct `type`, or 0 when unknown. */
uint32_t kbtf_struct_size(const struct kernel_btf *kb, const char *type);

/*
 * The prototype of the function called name: 0, -ENOENT when the BTF has no
 * such function, -ENOMEM. The first call indexes the BTF's functions (not
 * thread-safe: callers share a kernel_btf under their own lock).
 */
int kbtf_func_proto(struct kernel_btf *kb, const char *name, struct kbtf_proto *out);

#endif
