#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Issue 32's answers on the KVM host (tests/qemu/answers-qemu.sh has the
# rest, under QEMU): one boot of the lean kernel with --graph and
# --event 'kvm:*', recorded raw, stopped at populate_rootfs (the rootfs
# initcall) to keep it short on an emulating host:
#  - its text converted is the boot's own (VMMTRACE_TEE_TEXT), byte for
#    byte; its trace.dat read by trace-cmd report has the same entries and
#    exits; its Perfetto file decodes with a slice per closed call;
#  - its boot chart is well-formed XML, each stage starting at the time
#    trace-cmd prints for its marking call, the VM events on the vCPU's
#    lane as ticks and counted per stage (start_kernel's port I/O);
#  - --stat gives total and self time;
#  - the diff of several runs (issue 39) on KVM's boots, which nothing
#    makes alike: the boot twice more with
#    initcall_blacklist=proc_cmdline_init; `diff A -- B1 B2` exits 1 with
#    that initcall under do_one_initcall its one parting, and `report
#    --stat` of the three has it 1 or 0 times per run.
#    (tests/e2e/diff-runs-kvm.sh runs three against three, traced wide.)
. "$(dirname "$0")/../lib.sh"
require_file "$VMMTRACE"
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
require_kvm
for tool in trace-cmd protoc xmllint; do
	command -v "$tool" >/dev/null || { fail "$tool is missing (scripts/prepare-tests.sh installs it)"; finish; }
done
V=$VMMTRACE
d=$TMPD
args=(--graph --retval --args --event 'kvm:*' --stop-at populate_rootfs)
for f in start_kernel setup_arch sched_init rest_init kernel_init kernel_init_freeable smp_init do_one_initcall \
	proc_cmdline_init; do
	args+=(--trace "$f")
done
start=$(date +%s)
VMMTRACE_TEE_TEXT=$d/boot.tee timeout -k 10 900 "$V" boot "$LEAN_BZIMAGE" --host kvm --initrd "$INITRAMFS" "${args[@]}" \
	-o "$d/boot.raw" --console "$d/console" </dev/null 2>"$d/boot.err"
rc=$?
echo "INFO: boot took $(($(date +%s) - start)) s; $(grep '^vmmtrace: trace:' "$d/boot.err" | tr '\n' ' ')"
check "boot on KVM: status 0 (got $rc), stopped at populate_rootfs" \
	eval "[ $rc = 0 ] && grep -q 'stopped at populate_rootfs (--stop-at)' '$d/boot.err'"
"$V" report "$d/boot.raw" >"$d/boot.txt" 2>"$d/err"
check "report: the text converted is the boot's own, byte for byte ($(wc -l <"$d/boot.tee") lines)" \
	eval "[ -s '$d/boot.tee' ] && cmp -s '$d/boot.tee' '$d/boot.txt' && [ ! -s '$d/err' ]"
check "the text has the VM events among the calls, as function_graph's comments" \
	grep -qE '\|  +/\* kvm_pio: pio_write at 0x3f8 ' "$d/boot.txt"
O=$(grep -cE '^ [0-9]+\) .{14}\|  *[^ ]+\(\) \{$' "$d/boot.txt")
C=$(grep -cE '^ [0-9]+\) .{14}\|  *\}' "$d/boot.txt")
L=$(grep -E '^ [0-9]+\) .{14}\|  *[^ ]+\(\);' "$d/boot.txt" | grep -vc 'return not recorded')
"$V" report "$d/boot.raw" --format dat -o "$d/boot.dat"
trace-cmd report -i "$d/boot.dat" >"$d/boot.tc" 2>/dev/null
TE=$(grep -c ' funcgraph_entry: ' "$d/boot.tc")
TX=$(grep -c ' funcgraph_exit: ' "$d/boot.tc")
TL=$(grep ' funcgraph_entry: ' "$d/boot.tc" | grep -c '();$')
check "trace-cmd report: the same entries ($TE; the graph's $((O + L))) and exits ($((TX + TL)); $((C + L))), and the kvm events" \
	eval "[ $TE -gt 50 ] && [ $TE = $((O + L)) ] && [ $((TX + TL)) = $((C + L)) ] && grep -q ' kvm_pio: ' '$d/boot.tc'"
"$V" report "$d/boot.raw" --format perfetto -o "$d/boot.pf"
read -r PB PE PU < <(protoc --decode_raw <"$d/boot.pf" | awk '/\{$/ { path[++depth] = $1; next } /^ *\}$/ { depth--; next }
	depth == 2 && path[2] == "11" && $1 == "9:" { type[$2]++ }
	depth == 3 && path[2] == "11" && path[3] == "4" && $1 == "1:" && $2 == "7" { u++ }
	END { print type[1] + 0, type[2] + 0, u + 0 }')
check "Perfetto: a slice per call: $PB begins ($((O + L)) hooked entries), $((PE - PU)) ends at returns ($((C + L)) exits)" \
	eval "[ $PB = $((O + L)) ] && [ $((PE - PU)) = $((C + L)) ]"

"$V" report "$d/boot.raw" --chart "$d/boot.svg"
check "report --chart: status 0, well-formed XML" eval "[ \$? = 0 ] && xmllint --noout '$d/boot.svg'"
for s in start_kernel setup_arch sched_init kernel_init smp_init; do
	ns=$(sed -nE "s/.*<rect class=\"stage\" data-stage=\"$s\" [^>]*data-start-ns=\"([0-9]+)\".*/\\1/p" "$d/boot.svg")
	t=$(grep -m1 -E " funcgraph_entry: .*\|  *$s\(\)" "$d/boot.tc" | sed -nE 's/.* ([0-9]+\.[0-9]{6}): funcgraph_entry: .*/\1/p')
	want=$(awk -v n="${ns:-x}" 'BEGIN { if (n == "x") print "none"; else printf "%.6f\n", int((n + 500) / 1000) / 1e6 }')
	check "chart: stage $s starts at its entry's time (${ns:-none} ns; trace-cmd ${t:-none})" eval "[ -n '$ns' ] && [ '$want' = '$t' ]"
done
check "chart: the VM events as ticks on vCPU 0's lane (kvm:pio among them)" \
	eval "grep -q 'data-kind=\"kvm:pio\"' '$d/boot.svg' && [ \$(grep -c '<rect class=\"vm\"' '$d/boot.svg') -gt 10 ]"
vm=$(sed -nE 's/.*<g class="table-row" data-stage="start_kernel">(<text[^>]*>[^<]*<\/text>){5}<text[^>]*>([0-9]+)<\/text>.*/\2/p' "$d/boot.svg")
check "chart: the table counts start_kernel's VM exits (${vm:-none})" eval "[ '${vm:-0}' -gt 0 ]"
"$V" report "$d/boot.raw" --stat >"$d/stat"
check "report --stat: total and self time (setup_arch's)" grep -qE '^ +1 +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}  setup_arch$' "$d/stat"

echo "== diff of several runs: the boot twice more without proc_cmdline_init"
for b in b1 b2; do
	start=$(date +%s)
	timeout -k 10 900 "$V" boot "$LEAN_BZIMAGE" --host kvm --initrd "$INITRAMFS" "${args[@]}" \
		--cmdline initcall_blacklist=proc_cmdline_init -o "$d/$b.raw" --console /dev/null </dev/null 2>"$d/$b.err" ||
		fail "boot $b: status $?"
	echo "INFO: boot $b took $(($(date +%s) - start)) s"
done
"$V" diff "$d/boot.raw" -- "$d/b1.raw" "$d/b2.raw" >"$d/runs" 2>&1
rc=$?
head -n 1 "$d/runs" | sed 's/^/INFO: /'
check "diff A -- B1 B2: status 1 (got $rc), one parting: proc_cmdline_init under do_one_initcall, A 1 call, B 0 in each run" \
	eval "[ $rc = 1 ] && head -n 1 '$d/runs' | grep -q '^vmmtrace diff: the boots part in 1 place in every run (1 of A against 2 of B)' &&
	      grep -A1 '^- proc_cmdline_init <- do_one_initcall <- ' '$d/runs' | grep -q '^    calls per run: A 1, B 0; first in '"
"$V" report --stat --trace proc_cmdline_init "$d/boot.raw" "$d/b1.raw" "$d/b2.raw" >"$d/stat3" 2>&1
check "report --stat of the three runs: proc_cmdline_init's calls fewest 0, median 0, most 1" \
	eval "head -n 1 '$d/stat3' | grep -q '^runs: 3: ' && grep -qE '^ +0 +0 +1 .*  proc_cmdline_init\$' '$d/stat3'"
finish
