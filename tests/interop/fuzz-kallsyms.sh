#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the kallsyms/System.map fuzz target (libFuzzer, ASan, UBSan) and
# replays a fixed budget: seed 1, 200,000 executions from the generated
# seeds (as tests/interop/fuzz-targets.sh does, so that every machine replays
# the same inputs), capped at FUZZ_SECONDS (default 60). docs/SYMBOLS.md
# gives the long-run command.
. "$(dirname "$0")/../lib.sh"
seconds=${FUZZ_SECONDS:-60}
dir=$TOP/build/fuzz
if ! command -v clang >/dev/null; then
	echo "SKIP: $(basename "$0"): clang (libFuzzer) is not installed"
	exit 77
fi
mkdir -p "$dir/corpus-kallsyms" "$TMPD/seeds"
cd "$TOP" || exit 1
check "fuzz target builds" clang -g -O1 -std=c11 -D_GNU_SOURCE -I. \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	tests/fuzz/fuzz-kallsyms.c vmm/image/kallsyms.c vmm/image/kallsyms-layout.c vmm/image/symtab.c \
	vmm/image/sysmap.c vmm/image/elf.c vmm/util/error.c vmm/util/util.c -o "$dir/fuzz-kallsyms"
check "seed writer builds" cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. \
	tests/fuzz/kallsyms-seeds.c -o "$dir/kallsyms-seeds"
check "seeds written" "$dir/kallsyms-seeds" "$TMPD/seeds"
[ "$T_FAILS" = 0 ] || finish
mkdir -p "$TMPD/corpus"
"$dir/fuzz-kallsyms" -seed=1 -runs=200000 -max_total_time="$seconds" -timeout=10 \
	-rss_limit_mb=2048 -artifact_prefix="$TMPD/" "$TMPD/corpus" "$TMPD/seeds" >"$TMPD/log" 2>&1
rc=$?
echo "INFO: $(grep -E '^Done [0-9]+ runs' "$TMPD/log")"
check "200000 runs from seed 1: no crash, leak, hang or undefined behaviour" [ $rc = 0 ]
[ $rc = 0 ] || tail -n 30 "$TMPD/log"
finish
