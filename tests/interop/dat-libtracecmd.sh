#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The trace.dat writer against libtracecmd's own reader (the library
# KernelShark reads with): test-trace-dat --emit writes the traces and what
# they hold, tests/interop/dat/dat-read.c (built here with pkg-config, so that
# vmmtrace never links libtracecmd) reads each one back record by record.
. "$(dirname "$0")/../lib.sh"
BIN=$TOP/build/tests/unit/test-trace-dat
[ -x "$BIN" ] || { fail "dat-libtracecmd: $BIN missing (make)"; finish; }
if ! pkg-config --exists libtracecmd 2>/dev/null; then
	echo "##################################################################"
	echo "SKIP: $(basename "$0"): libtracecmd is absent"
	echo "      (apt-get install libtracecmd-dev libtracefs-dev libtraceevent-dev); NOT RUN"
	echo "##################################################################"
	exit 77
fi
# shellcheck disable=SC2046
check "dat-read.c builds against libtracecmd $(pkg-config --modversion libtracecmd)" \
	cc -std=c11 -O2 -Wall -Wextra -Werror $(pkg-config --cflags libtracecmd) \
	-o "$TMPD/dat-read" "$TOP/tests/interop/dat/dat-read.c" $(pkg-config --libs libtracecmd)
[ -x "$TMPD/dat-read" ] || finish
"$BIN" --emit "$TMPD" | grep -v '^PASS:'
check "test-trace-dat --emit writes the traces" test "${PIPESTATUS[0]}" = 0
for name in main one-cpu empty; do
	"$TMPD/dat-read" "$TMPD/$name.dat" "$TMPD/$name.expect" 2>"$TMPD/$name.stderr"
	check "dat-read $name.dat exits 0" test $? = 0
	check "libtracecmd says nothing on stderr for $name.dat" test ! -s "$TMPD/$name.stderr"
	sed 's/^/INFO: stderr: /' "$TMPD/$name.stderr" | head -n 5
done
finish
