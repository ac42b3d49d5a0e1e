#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every function of a whole boot on vmmtrace's own arm64 KVM host (issue
# 38), in the arm64 test machine (scripts/arm64-machine.sh: no /dev/kvm
# needed here): the lean arm64 kernel with --trace '*' on 2 vCPUs from
# start_kernel to the guest's reboot after /init (about 35 s inside, the
# trace counted as it comes there: millions of lines). Checked: status 0,
# /init ran, every event the summary counts was written, none dropped,
# CPU 1's events among them, its rings drained at doorbells. make check's
# tests/kvm-arm64/trace.sh has the exact counts; this is the whole boot.
. "$(dirname "$0")/../lib.sh"
MACHINE=$TOP/scripts/arm64-machine.sh
LEAN_A64=$VMMTRACE_CACHE/lean-arm64/Image

if ! command -v qemu-system-aarch64 >/dev/null; then
	echo "##################################################################"
	echo "SKIP: arm64-kvm-full.sh: qemu-system-aarch64 is absent; NOT RUN"
	echo "##################################################################"
	exit 77
fi
require_file "$LEAN_A64"
require_file "$INITRAMFS_ARM64"

cat >"$TMPD/inside.sh" <<'EOF'
timeout 600 vmmtrace boot --host kvm Image --cpus 2 --initrd initramfs-arm64.cpio --trace '*' --console con.txt \
	2>err.txt | awk '!/^#/ { n++; if ($2 == "[001]") c1++ } END { print "lines", n + 0, "cpu1", c1 + 0 }' >count.txt
echo "status $?"
cat count.txt
grep -E 'Run /init|reboot: ' con.txt
cat err.txt
EOF
start=$(date +%s)
"$MACHINE" --file "$TMPD/inside.sh" --file "$LEAN_A64" --file "${LEAN_A64%/Image}/vmlinux.btf" --file "$INITRAMFS_ARM64" \
	-- sh inside.sh >"$TMPD/out" 2>"$TMPD/err"
rc=$?
echo "INFO: the machine ran for $(( $(date +%s) - start )) s"
sed 's/^/INFO: /' "$TMPD/out" | grep -v 'liburcu'
check "the machine ran the boot (status $rc)" [ "$rc" = 0 ]
set -- $(sed -n 's/^lines \([0-9]*\) cpu1 \([0-9]*\)$/\1 \2/p' "$TMPD/out")
lines=${1:-0} cpu1=${2:-0}
sum=($(trace_summary "$TMPD/out"))
check "--trace '*' on 2 vCPUs: status 0, /init ran and the guest rebooted" \
	eval "grep -qx 'status 0' '$TMPD/out' && grep -q 'Run /init as init process' '$TMPD/out' &&
	      grep -q 'reboot: Restarting system' '$TMPD/out'"
check "every event the summary counts was written (${sum[0]:-?} counted, $lines written), at least a million" \
	eval "[ '${sum[0]:-x}' = '$lines' ] && [ '$lines' -ge 1000000 ]"
check "none dropped (${sum[5]:-?}), rings drained at doorbells (${sum[4]:-?})" \
	eval "[ '${sum[5]:-x}' = 0 ] && [ '${sum[4]:-0}' -ge 1 ]"
check "CPU 1's events among them ($cpu1)" [ "$cpu1" -ge 1000 ]
finish
