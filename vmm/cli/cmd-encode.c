// SPDX-License-Identifier: GPL-2.0
/*
 * vmmtrace encode: prints the instructions vmmtrace writes into slots, so that
 * people porting to a new kernel can compare them with a disassembler, and
 * tests can feed thousands of them to one (reading requests from stdin).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/slot.h"
#include "vmm/cli/cmd.h"
#include "vmm/util/error.h"

#define ENCODE_MAX_WORDS 8

static const char encode_usage[] =
	"usage: vmmtrace encode --arch ARCH INSN [ARGS]\n"
	"       vmmtrace encode --arch ARCH -    (one 'INSN [ARGS]' per line on stdin)\n"
	"\n"
	"INSN:\n"
	"  call PC TARGET            call / branch-with-link at PC to TARGET\n"
	"                            (riscv64: the auipc+jalr pair)\n"
	"  nop                       the NOP a disabled slot's toggle holds\n"
	"  save-ra                   the return-address save written at load time\n"
	"                            (arm64: mov x9, x30; loongarch64: move t0, ra)\n"
	"  slot STATE SLOT_PC TARGET the whole slot, STATE disabled or enabled,\n"
	"                            prepared for a stub at TARGET\n"
	"\n"
	"ARCH: x86_64, arm64, riscv64, loongarch64. Numbers: 0x-prefixed hex or decimal.\n"
	"Prints one instruction per line in hex: the instruction word (x86_64: the\n"
	"bytes in memory order). Exit status 2 for bad input, including a target out\n"
	"of the call's range.\n";

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	int base = 10;

	/* No octal: a leading 0 on an address is far more likely a typo. */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		base = 16;
	}
	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, base);
	return errno || *end ? -EINVAL : 0;
}

static void print_insns(const struct slot_ops *ops, const uint8_t *buf, size_t len)
{
	size_t off = 0, n;

	while (off < len) {
		n = ops->insn_len(buf + off, len - off);
		if (ops->layout->byte_stream) {
			for (size_t i = 0; i < n; i++)
				printf("%s%02x", i ? " " : "", buf[off + i]);
			printf("\n");
		} else if (n == 2) {
			printf("%04x\n", (unsigned int)(buf[off] | buf[off + 1] << 8));
		} else {
			printf("%08" PRIx32 "\n", slot_get_le32(buf + off));
		}
		off += n;
	}
}

/* Parses argument i of the request as a number named what. */
static int get_number(int argc, char **argv, int i, const char *what, uint64_t *v,
		      struct errbuf *err)
{
	if (i >= argc)
		return err_set(err, EINVAL, "%s needs %s", argv[0], what);
	if (parse_u64(argv[i], v))
		return err_set(err, EINVAL, "%s: '%s' is not a number", what, argv[i]);
	return 0;
}

static int encode_slot(const struct slot_ops *ops, int argc, char **argv,
		       struct errbuf *err)
{
	struct slot_ctx ctx = { 0 };
	struct slot_err serr;
	uint8_t buf[SLOT_MAX_BYTES];
	enum slot_state state;
	int ret;

	if (argc != 4)
		return err_set(err, EINVAL, "usage: slot {disabled|enabled} SLOT_PC TARGET");
	if (!strcmp(argv[1], "disabled"))
		state = SLOT_DISABLED;
	else if (!strcmp(argv[1], "enabled"))
		state = SLOT_ENABLED;
	else
		return err_set(err, EINVAL, "slot state '%s' is not disabled or enabled", argv[1]);
	ret = get_number(argc, argv, 2, "SLOT_PC", &ctx.slot_pc, err);
	if (!ret)
		ret = get_number(argc, argv, 3, "TARGET", &ctx.our_target, err);
	if (ret)
		return ret;
	ret = slot_build(ops, state, &ctx, buf, &serr);
	if (ret)
		return err_set(err, -ret, "%s", serr.msg);
	print_insns(ops, buf, ops->layout->slot_bytes);
	return 0;
}

/* One request: argv[0] is the instruction name. */
static int encode_one(const struct slot_ops *ops, int argc, char **argv, struct errbuf *err)
{
	uint8_t buf[SLOT_INSN_MAX_BYTES];
	uint64_t pc = 0, target = 0;
	struct slot_err serr;
	enum slot_insn insn;
	size_t len = 0;
	int ret, want;

	if (!strcmp(argv[0], "slot"))
		return encode_slot(ops, argc, argv, err);
	if (slot_insn_from_name(argv[0], &insn))
		return err_set(err, EINVAL, "unknown instruction '%s' (call, nop, save-ra, slot)",
			       argv[0]);
	want = insn == SLOT_INSN_CALL ? 3 : 1;
	if (argc != want)
		return err_set(err, EINVAL, "%s takes %s", argv[0],
			       want == 3 ? "PC TARGET" : "no arguments");
	if (insn == SLOT_INSN_CALL) {
		ret = get_number(argc, argv, 1, "PC", &pc, err);
		if (!ret)
			ret = get_number(argc, argv, 2, "TARGET", &target, err);
		if (ret)
			return ret;
	}
	ret = slot_encode(ops, insn, pc, target, buf, &len, &serr);
	if (ret)
		return err_set(err, -ret, "%s", serr.msg);
	print_insns(ops, buf, len);
	return 0;
}

/* Requests from stdin, one per line; blank lines and #-comments skipped.
 * *lineno ends at the line that failed. */
static int encode_stream(const struct slot_ops *ops, unsigned long *lineno,
			 struct errbuf *err)
{
	char *line = NULL, *argv[ENCODE_MAX_WORDS + 1], *save, *tok;
	size_t cap = 0;
	int argc, ret = 0;

	*lineno = 0;
	while (!ret && getline(&line, &cap, stdin) >= 0) {
		(*lineno)++;
		argc = 0;
		for (tok = strtok_r(line, " \t\r\n", &save); tok && argc <= ENCODE_MAX_WORDS;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			argv[argc++] = tok;
		if (!argc || argv[0][0] == '#')
			continue;
		ret = encode_one(ops, argc, argv, err);
	}
	free(line);
	return ret;
}

/* Finds --arch and --help; the rest, in order, is the request. */
static int parse_options(int argc, char **argv, const char **arch, int *first)
{
	int i;

	*arch = NULL;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
		if (!strcmp(argv[i], "--arch") && i + 1 < argc)
			*arch = argv[++i];
		else if (!strncmp(argv[i], "--arch=", 7))
			*arch = argv[i] + 7;
		else
			break;
	}
	*first = i;
	return 0;
}

int cmd_encode(int argc, char **argv)
{
	const struct slot_ops *ops;
	struct errbuf err = { "" };
	enum slot_arch arch;
	const char *name;
	unsigned long lineno = 0;
	int first, ret;

	if (parse_options(argc, argv, &name, &first)) {
		fputs(encode_usage, stdout);
		return EXIT_OK;
	}
	if (!name || first >= argc)
		return cmd_fail("encode", EXIT_BAD_INPUT, "%s (try 'vmmtrace encode --help')",
				name ? "missing instruction" : "missing --arch ARCH");
	if (slot_arch_from_name(name, &arch))
		return cmd_fail("encode", EXIT_BAD_INPUT, "unknown arch '%s' (%s)", name,
				slot_arch_names());
	ops = slot_ops_for(arch);
	if (!strcmp(argv[first], "-") && argc == first + 1)
		ret = encode_stream(ops, &lineno, &err);
	else
		ret = encode_one(ops, argc - first, argv + first, &err);
	fflush(stdout);
	if (ret && lineno)
		return cmd_fail("encode", EXIT_BAD_INPUT, "stdin line %lu: %s", lineno, err.msg);
	if (ret)
		return cmd_fail("encode", EXIT_BAD_INPUT, "%s", err.msg);
	return EXIT_OK;
}
