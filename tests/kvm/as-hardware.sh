#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What a user with hardware KVM gets (issue 29): there the compat layer is
# off and with it the options that only shorten an emulated boot; the
# guest kernel then runs its own checks against what vmmtrace put into its
# address space. Here the layer stays on (the guest cannot run without
# clearcpuid), --fast-boot off takes the rest away, and the lean kernel
# built with CONFIG_DEBUG_WX (as Debian's, Ubuntu's and Fedora's are:
# lean-wx.config) is traced from start_kernel to the start of /init:
# - the command line has no speed-only option, and -v said why each
#   compat option is there;
# - the kernel's W+X check walks every page table, the stub's among them
#   (a setup_data node in its direct map), and passes; no oops, no
#   WARNING, no BUG;
# - the trace holds start_kernel, the boot's early setup_arch and
#   mark_rodata_ro (which runs the check), once each.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
WX=$VMMTRACE_CACHE/lean-wx/bzImage
require_file "$WX"

timeout -k 5 900 "$VMMTRACE" boot "$WX" --fast-boot off -v --trace start_kernel --trace setup_arch \
	--trace mark_rodata_ro --stop-at run_init_process -o "$TMPD/trace.txt" --console "$TMPD/console" \
	</dev/null 2>"$TMPD/err"
rc=$?
tr -d '\r' <"$TMPD/console" >"$TMPD/con"
grep -E '^vmmtrace: (trace|info: (compat|--fast-boot))' "$TMPD/err" | sed 's/^/INFO: /'
grep -E 'W\+X|Command line' "$TMPD/con" | sed 's/^/INFO: /'
check "stopped at the start of /init (--stop-at run_init_process): status 0 (got $rc)" \
	eval "[ $rc = 0 ] && grep -q '^vmmtrace: stopped at run_init_process' '$TMPD/err'"
cmdline=$(sed -n 's/.*Command line: //p' "$TMPD/con" | head -n 1)
check "no speed-only option on the command line ($cmdline)" \
	eval "[ -n '$cmdline' ] && ! echo '$cmdline' | grep -qE 'rodata=off|cryptomgr.notests|initcall_blacklist'"
check "the compat layer's options are there, each with its reason (-v)" \
	eval "echo '$cmdline' | grep -q 'clearcpuid=' && grep -q '^vmmtrace: info: compat layer: clearcpuid=.* added to the command line: ' '$TMPD/err'"
check "the kernel's W+X check walked the stub's tables and passed" \
	grep -q 'x86/mm: Checked W+X mappings: passed, no W+X pages found' "$TMPD/con"
check "no oops, no BUG, no WARNING" sh -c "! grep -qE 'Oops|BUG:|WARNING:|Kernel panic|ftrace failed' '$TMPD/con'"
for f in start_kernel setup_arch mark_rodata_ro; do
	n=$(grep -c ": $f <-" "$TMPD/trace.txt")
	check "the trace has $f once ($n)" [ "$n" = 1 ]
done
finish
