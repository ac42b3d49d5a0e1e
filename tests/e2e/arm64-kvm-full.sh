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
# The same boot runs /init's step ftrace-all (issue 37, tests/lib.sh's
# both_tracers on a KVM host): the guest's own function tracer, then its
# function_graph tracer, on every function around a dd while vmmtrace
# holds every slot: no "ftrace failed to modify", no WARNING; the guest's
# trace of the dd holds vmmtrace's calls, each with its parent; both count
# its vfs_read calls alike. Only the lines of dd and /init's other children
# come back from vmmtrace's trace.
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
exec 3>&1 >out.txt 2>&1
# dd's lines, and those of /init's other children (a child is "init", as
# busybox runs /init, until it runs dd): the checks pick dd's pid.
{ timeout 900 vmmtrace boot --host kvm Image --cpus 2 --initrd initramfs-arm64.cpio --trace '*' \
	--cmdline vmmtrace.steps=ftrace-all --console con.txt 2>err.txt; echo $? >rc.txt; } |
	awk '!/^#/ { n++; if ($2 == "[001]") c1++; if ($1 ~ /^(dd|init)-[0-9]+$/ && $1 != "init-1") print >"dd.txt" }
	     END { print "lines", n + 0, "cpu1", c1 + 0 }' >count.txt
echo "status $(cat rc.txt)"
cat count.txt
grep -E 'Run /init|reboot: ' con.txt
cat err.txt
touch dd.txt
gzip -1 dd.txt
tar czf - out.txt con.txt err.txt dd.txt.gz >&3
EOF
start=$(date +%s)
"$MACHINE" --file "$TMPD/inside.sh" --file "$LEAN_A64" --file "${LEAN_A64%/Image}/vmlinux.btf" --file "$INITRAMFS_ARM64" \
	-- sh inside.sh >"$TMPD/out.tgz" 2>"$TMPD/err"
rc=$?
echo "INFO: the machine ran for $(( $(date +%s) - start )) s"
mkdir -p "$TMPD/in"
tar xzf "$TMPD/out.tgz" -C "$TMPD/in" 2>/dev/null
touch "$TMPD/in/out.txt" "$TMPD/in/con.txt" "$TMPD/in/err.txt" "$TMPD/in/dd.txt.gz"
out=$TMPD/in/out.txt
sed 's/^/INFO: /' "$out" | grep -v 'liburcu'
check "the machine ran the boot (status $rc)" [ "$rc" = 0 ]
set -- $(sed -n 's/^lines \([0-9]*\) cpu1 \([0-9]*\)$/\1 \2/p' "$out")
lines=${1:-0} cpu1=${2:-0}
sum=($(trace_summary "$out"))
check "--trace '*' on 2 vCPUs: status 0, /init ran and the guest rebooted" \
	eval "grep -qx 'status 0' '$out' && grep -q 'Run /init as init process' '$out' &&
	      grep -q 'reboot: Restarting system' '$out'"
check "every event the summary counts was written (${sum[0]:-?} counted, $lines written), at least a million" \
	eval "[ '${sum[0]:-x}' = '$lines' ] && [ '$lines' -ge 1000000 ]"
check "none dropped (${sum[5]:-?}), rings drained at doorbells (${sum[4]:-?})" \
	eval "[ '${sum[5]:-x}' = 0 ] && [ '${sum[4]:-0}' -ge 1 ]"
check "CPU 1's events among them ($cpu1)" [ "$cpu1" -ge 1000 ]
# The guest's own tracers beside vmmtrace's, the QEMU host's checks (guest-qemu.sh's arm64 both_tracers).
cp "$TMPD/in/con.txt" "$TMPD/both-arm64-kvm.con"
cp "$TMPD/in/err.txt" "$TMPD/both-arm64-kvm.err"
cp "$TMPD/in/dd.txt.gz" "$TMPD/both-arm64-kvm.txt.gz"
both_tracers_check arm64-kvm "$(sed -n 's/^status //p' "$out")" 9000
finish
