#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --stop-at FUNC on its own (no --trace): the guest stops the first time FUNC
# is called, before FUNC runs, with status 0 and no trace on stdout. Real
# kernels, stopped in their first second, so this is quick. Exactness: the
# lean kernel's start_kernel prints "Kernel command line:" after setup_arch
# and before trap_init, so the console must lack that line when stopped at
# setup_arch and hold it when stopped at trap_init.
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_kvm

# stop_at NAME KERNEL FUNC: runs the boot; sets rc.
stop_at() {
	local name=$1 kernel=$2 func=$3
	timeout -k 5 120 "$VMMTRACE" boot "$kernel" --stop-at "$func" --cmdline "earlyprintk=serial,ttyS0,115200" \
		</dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err"
	rc=$?
	check "$name: status 0 (got $rc)" [ "$rc" = 0 ]
	check "$name: stopped at $func" grep -q "stopped at $func (--stop-at) on vCPU 0" "$TMPD/$name.err"
	check "$name: no trace on stdout (only the console)" eval "! grep -q '^# tracer:' '$TMPD/$name.out'"
	check "$name: the summary says nothing was traced" grep -q "trace: 0 events" "$TMPD/$name.err"
}

stop_at setup_arch "$LEAN_BZIMAGE" setup_arch
# No console exists before setup_arch parses earlyprintk: an empty console is
# expected here, and the line below must be missing.
check "setup_arch: stopped before it returned (no 'Kernel command line:')" \
	eval "! grep -q 'Kernel command line:' '$TMPD/setup_arch.out'"
stop_at trap_init "$LEAN_BZIMAGE" trap_init
check "trap_init: setup_arch had returned ('Kernel command line:')" grep -q "Kernel command line:" "$TMPD/trap_init.out"
if [ -e "$STOCK_BZIMAGE" ]; then
	stop_at stock "$STOCK_BZIMAGE" start_kernel
else
	echo "INFO: $STOCK_BZIMAGE absent: the stock kernel's case is not run"
fi
finish
