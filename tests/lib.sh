# SPDX-License-Identifier: GPL-2.0
# Helpers for shell tests. Each check prints one PASS:/FAIL:/SKIP: line that
# tests/run-all.sh counts. Source it from a test script.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VMMTRACE=${VMMTRACE:-$TOP/build/vmmtrace}
. "$TOP/scripts/common.sh"
LEAN_DIR="$VMMTRACE_CACHE/lean"
LEAN_BZIMAGE="$LEAN_DIR/bzImage"
LEAN_VMLINUX="$LEAN_DIR/vmlinux"
STOCK_BZIMAGE="$VMMTRACE_CACHE/stock-bzImage"
INITRAMFS="$VMMTRACE_CACHE/initramfs.cpio"
T_FAILS=0
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/vmmtrace-test.XXXXXX")
[ -n "${VMMTRACE_KEEP_TMP:-}" ] && echo "INFO: keeping $TMPD" || trap 'rm -rf "$TMPD"' EXIT

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; T_FAILS=$((T_FAILS + 1)); }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }
finish() { [ "$T_FAILS" = 0 ]; exit $?; }

# Tests that need /dev/kvm may skip only where it is absent, and say so loudly.
require_kvm() {
	if [ ! -c /dev/kvm ] || [ ! -r /dev/kvm ]; then
		echo "##################################################################"
		echo "SKIP: $(basename "$0"): /dev/kvm is absent on this machine; NOT RUN"
		echo "##################################################################"
		exit 77
	fi
}
require_file() {
	[ -e "$1" ] || { fail "$(basename "$0"): missing $1 (run scripts/setup.sh)"; finish; }
}
