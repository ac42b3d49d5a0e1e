#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Issue 32's answers on real boots under QEMU (TCG), lean kernels:
#  - returns in every format: a --graph boot recorded raw converts to text
#    identical to the same boot's own text (VMMTRACE_TEE_TEXT); its
#    trace.dat, read by Debian's trace-cmd report, has the same entries and
#    exits (funcgraph_entry/funcgraph_exit); its Perfetto file decodes
#    (protoc --decode_raw) with a slice per closed call; --stat gives total
#    and self time;
#  - the boot chart: well-formed XML, the boot's stages, each starting at
#    the time trace-cmd prints for its marking call's entry;
#  - diff: the boot twice (1 vCPU, and 2): exit 0; with an initcall
#    blacklisted: exit 1, the blacklisted initcall and its caller named in
#    the first lines; 1 vCPU against 2: exit 1, the SMP bring-up named
#    there; a truncated recording, and two kernels' recordings: exit 2 and
#    one line;
#  - arm64 and riscv64: a --graph boot's text, chart and stages, and diff
#    against itself (0) and against the x86_64 kernel's (2).
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
for tool in trace-cmd protoc xmllint; do
	command -v "$tool" >/dev/null || { fail "$tool is missing (scripts/prepare-tests.sh installs it)"; finish; }
done
V=$VMMTRACE
d=$TMPD
MARKERS="start_kernel setup_arch sched_init rest_init kernel_init kernel_init_freeable smp_init do_one_initcall
	run_init_process bringup_nonboot_cpus cpu_up bringup_cpu"

# qboot NAME IMAGE INITRD CMDLINE ARGS...: a --graph boot under QEMU into NAME.raw, its own text in NAME.tee.
qboot() {
	local name=$1 image=$2 initrd=$3 cmdline=$4 rc
	shift 4
	VMMTRACE_TEE_TEXT=$d/$name.tee timeout -k 10 300 "$V" boot "$image" --host qemu --initrd "$initrd" --graph \
		--cmdline "$cmdline" "$@" -o "$d/$name.raw" --console "$d/$name.con" </dev/null 2>"$d/$name.err"
	rc=$?
	echo "INFO: $name: status $rc; $(grep '^vmmtrace: trace:' "$d/$name.err" | head -1)"
	return $rc
}
markers() { local f; for f in $MARKERS "$@"; do printf -- '--trace\n%s\n' "$f"; done; }
mapfile -t M < <(markers)

echo "== returns in every format: one --graph boot on 2 vCPUs"
mapfile -t ARGS < <(markers schedule '__x64_sys_*')
qboot fmt "$LEAN_BZIMAGE" "$INITRAMFS" vmmtrace.steps=cpus,uname --cpus 2 --retval --args "${ARGS[@]}"
check "boot: status 0" [ $? = 0 ]
"$V" report "$d/fmt.raw" >"$d/fmt.txt" 2>"$d/err"
check "report: the raw recording's text is the boot's own, byte for byte ($(wc -l <"$d/fmt.tee") lines)" \
	eval "[ -s '$d/fmt.tee' ] && cmp -s '$d/fmt.tee' '$d/fmt.txt' && [ ! -s '$d/err' ]"
# The graph's hooked entries (blocks opened and leaves) and exits (blocks closed and leaves).
O=$(grep -cE '^ [0-9]+\) .{14}\|  *[^ ]+\(\) \{$' "$d/fmt.txt")
C=$(grep -cE '^ [0-9]+\) .{14}\|  *\}' "$d/fmt.txt")
L=$(grep -E '^ [0-9]+\) .{14}\|  *[^ ]+\(\);' "$d/fmt.txt" | grep -vc 'return not recorded')
"$V" report "$d/fmt.raw" --format dat -o "$d/fmt.dat"
trace-cmd report -i "$d/fmt.dat" >"$d/fmt.tc" 2>/dev/null
TE=$(grep -c ' funcgraph_entry: ' "$d/fmt.tc")
TX=$(grep -c ' funcgraph_exit: ' "$d/fmt.tc")
TL=$(grep ' funcgraph_entry: ' "$d/fmt.tc" | grep -c '();$')
check "trace-cmd report: the same entries ($TE; the graph's $((O + L))) and exits ($((TX + TL)); $((C + L)))" \
	eval "[ $TE -gt 100 ] && [ $TE = $((O + L)) ] && [ $((TX + TL)) = $((C + L)) ]"
check "trace-cmd report: the graph as function_graph prints it (a block, a leaf with its duration)" \
	eval "grep -qE ' funcgraph_entry: +\|  start_kernel\(\) \{\$' '$d/fmt.tc' && grep -qE ' funcgraph_entry: +[!#+@* ] *[0-9.]+ us +\|    setup_arch\(\);\$' '$d/fmt.tc'"
"$V" report "$d/fmt.raw" --format perfetto -o "$d/fmt.pf"
protoc --decode_raw <"$d/fmt.pf" >"$d/fmt.pfd" 2>"$d/err"
check "protoc --decode_raw parses the Perfetto file" [ $? = 0 ]
# TracePacket (1) > TrackEvent (11): its type (9: 1 begin, 2 end), and a debug annotation (4) named
# by iid 7, return_not_recorded (vmm/output/perfetto.c), on the ends of calls the stub dropped.
read -r PB PE PU < <(awk '/\{$/ { path[++depth] = $1; next } /^ *\}$/ { depth--; next }
	depth == 2 && path[2] == "11" && $1 == "9:" { type[$2]++ }
	depth == 3 && path[2] == "11" && path[3] == "4" && $1 == "1:" && $2 == "7" { u++ }
	END { print type[1] + 0, type[2] + 0, u + 0 }' "$d/fmt.pfd")
check "Perfetto: a slice per call: $PB begins ($((O + L)) hooked entries), $((PE - PU)) ends at returns ($((C + L)) exits), $PU dropped" \
	eval "[ $PB = $((O + L)) ] && [ $((PE - PU)) = $((C + L)) ]"
"$V" report "$d/fmt.raw" --stat >"$d/stat"
check "report --stat: total and self time per function (kernel_init_freeable's)" \
	grep -qE '^ +1 +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}  kernel_init_freeable$' "$d/stat"

echo "== the boot chart"
"$V" report "$d/fmt.raw" --chart "$d/fmt.svg"
check "report --chart: status 0, well-formed XML" eval "[ \$? = 0 ] && xmllint --noout '$d/fmt.svg'"
for s in start_kernel setup_arch sched_init rest_init kernel_init smp_init; do
	ns=$(sed -nE "s/.*<rect class=\"stage\" data-stage=\"$s\" [^>]*data-start-ns=\"([0-9]+)\".*/\\1/p" "$d/fmt.svg")
	# trace-cmd prints the entry's time in µs, rounded as the kernel rounds (ns2usecs: to the nearest).
	t=$(grep -m1 -E " funcgraph_entry: .*\|  *$s\(\)" "$d/fmt.tc" | sed -nE 's/.* ([0-9]+\.[0-9]{6}): funcgraph_entry: .*/\1/p')
	want=$(awk -v n="${ns:-x}" 'BEGIN { if (n == "x") print "none"; else printf "%.6f\n", int((n + 500) / 1000) / 1e6 }')
	check "chart: stage $s starts at its entry's time (${ns:-none} ns; trace-cmd ${t:-none})" \
		eval "[ -n '$ns' ] && [ '$want' = '$t' ]"
done
check "chart: the initcall levels from do_one_initcall's calls and the init process" \
	eval "grep -q 'data-stage=\"initcalls: device\"' '$d/fmt.svg' && grep -q 'data-stage=\"init process\"' '$d/fmt.svg'"

echo "== diff: the same boot twice, an initcall blacklisted, 1 vCPU against 2"
mapfile -t ARGS < <(markers proc_execdomains_init)
for b in "a1 1" "a2 1" "bl 1 initcall_blacklist=proc_execdomains_init" "c1 2" "c2 2"; do
	set -- $b
	qboot "$1" "$LEAN_BZIMAGE" "$INITRAMFS" "vmmtrace.steps=cpus,uname ${3:-}" --cpus "$2" "${ARGS[@]}" ||
		fail "boot $1: status $?"
done
"$V" diff "$d/a1.raw" "$d/a2.raw" >"$d/d.same" 2>&1
check "diff of the boot twice on 1 vCPU: exit 0, the boots agree" \
	eval "[ \$? = 0 ] && head -1 '$d/d.same' | grep -q '^vmmtrace diff: the boots agree'"
"$V" diff "$d/c1.raw" "$d/c2.raw" >"$d/d.same2" 2>&1
check "diff of the boot twice on 2 vCPUs: exit 0, the boots agree" \
	eval "[ \$? = 0 ] && head -1 '$d/d.same2' | grep -q '^vmmtrace diff: the boots agree'"
"$V" diff "$d/a1.raw" "$d/bl.raw" >"$d/d.bl" 2>&1
rc=$?
head -2 "$d/d.bl" | sed 's/^/INFO: /'
check "diff, initcall_blacklist=proc_execdomains_init: exit 1 (got $rc), parted in init-1, the blacklisted initcall and its caller in the first lines" \
	eval "[ $rc = 1 ] && head -1 '$d/d.bl' | grep -q 'part in 1 of [0-9]* tasks; first in init-1 at call' &&
	      sed -n 2p '$d/d.bl' | grep -q '^first parting point: A calls proc_execdomains_init <- do_one_initcall, B calls do_one_initcall <- '"
"$V" diff "$d/a1.raw" "$d/c1.raw" >"$d/d.smp" 2>&1
rc=$?
head -2 "$d/d.smp" | sed 's/^/INFO: /'
check "diff, 1 vCPU against 2: exit 1 (got $rc), the SMP bring-up named in the first lines (cpu_up <- bringup_nonboot_cpus)" \
	eval "[ $rc = 1 ] && head -2 '$d/d.smp' | grep -q 'B calls cpu_up <- bringup_nonboot_cpus'"
"$V" diff "$d/a1.raw" "$d/c1.raw" --format json >"$d/d.json" 2>/dev/null
check "diff --format json: the same parting point, for scripts" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
p = j["parted"][0]
assert not j["agree"] and p["task"] == "init-1"
assert ("+", "cpu_up", "bringup_nonboot_cpus") in [(h["op"], h["func"], h["caller"]) for h in p["hunk"]]
' "$d/d.json"
size=$(stat -c %s "$d/a1.raw")
head -c $((size - 40)) "$d/a1.raw" >"$d/cut.raw"
"$V" diff "$d/a1.raw" "$d/cut.raw" >"$d/out" 2>"$d/err"
rc=$?
check "diff of a truncated recording: exit 2 (got $rc), one line: $(cat "$d/err")" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$d/err') = 1 ] && grep -q 'cut.raw: cut at offset' '$d/err' && [ ! -s '$d/out' ]"

echo "== arm64 and riscv64"
A64=$VMMTRACE_CACHE/lean-arm64/Image RV=$VMMTRACE_CACHE/lean-riscv64/Image
RV_INITRD=$VMMTRACE_CACHE/initramfs-riscv64.cpio
for a in "arm64 $A64 $INITRAMFS_ARM64 vmmtrace.steps=cpus,uname" "riscv64 $RV $RV_INITRD -- 1 1"; do
	set -- $a
	arch=$1 image=$2 initrd=$3
	shift 3
	if [ ! -e "$image" ] || [ ! -e "$initrd" ]; then
		fail "$arch: missing $image or $initrd (scripts/prepare-tests.sh builds them)"
		continue
	fi
	qboot "$arch" "$image" "$initrd" "$*" --cpus 2 "${M[@]}"
	check "$arch: a --graph boot recorded raw, status 0" [ $? = 0 ]
	"$V" report "$d/$arch.raw" >"$d/$arch.txt" 2>/dev/null
	check "$arch: its text converted is the boot's own" eval "[ -s '$d/$arch.tee' ] && cmp -s '$d/$arch.tee' '$d/$arch.txt'"
	"$V" report "$d/$arch.raw" --chart "$d/$arch.svg"
	check "$arch: the chart is well-formed, with start_kernel, setup_arch, kernel_init and smp_init" \
		eval "xmllint --noout '$d/$arch.svg' && for s in start_kernel setup_arch kernel_init smp_init; do
		      grep -q \"<rect class=\\\"stage\\\" data-stage=\\\"\$s\\\"\" '$d/$arch.svg' || exit 1; done"
	"$V" diff "$d/$arch.raw" "$d/$arch.raw" >/dev/null 2>&1
	check "$arch: diff against itself: exit 0" [ $? = 0 ]
	"$V" diff "$d/a1.raw" "$d/$arch.raw" >"$d/out" 2>"$d/err"
	rc=$?
	check "$arch: diff against the x86_64 kernel's boot: exit 2 (got $rc), one line: different kernels" \
		eval "[ $rc = 2 ] && [ \$(wc -l <'$d/err') = 1 ] && grep -q 'recordings of different kernels' '$d/err'"
done
finish
