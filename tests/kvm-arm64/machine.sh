#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The arm64 test machine (scripts/arm64-machine.sh) and vmmtrace built for
# arm64, in one boot of the machine: Debian's arm64 kernel at EL2 offers
# /dev/kvm; the arm64 build is the same program as the x86_64 one (its
# version; `symbols` of the lean arm64 kernel and of Debian's arm64 kernel
# and `report` of a raw trace recorded here in every format, byte for byte
# the x86_64 build's: char signedness and alignment differ between the
# two); vmmtrace's own arm64 KVM host boots the lean and Debian's arm64
# kernels on 2 vCPUs to /init and their power-off, untraced
# (tests/kvm-arm64/trace.sh traces them), and says in one line that an
# x86_64 kernel is not for it and (a second run, on a GICv2 machine) that
# KVM gives no GICv3 there; the machine gives back the command's stdout,
# stderr and status apart. Runs under QEMU's emulator, so it needs no
# /dev/kvm on this host.
. "$(dirname "$0")/../lib.sh"
MACHINE=$TOP/scripts/arm64-machine.sh
LEAN_A64=$VMMTRACE_CACHE/lean-arm64/Image
STOCK_A64=$VMMTRACE_CACHE/stock-arm64-Image

if ! command -v qemu-system-aarch64 >/dev/null; then
	echo "##################################################################"
	echo "SKIP: machine.sh: qemu-system-aarch64 is absent; NOT RUN"
	echo "##################################################################"
	exit 77
fi
require_file "$LEAN_A64"
require_file "$STOCK_A64"

# The machine script's own refusals, before any boot: one line, status 2.
refusal() {	# refusal WHAT ARGS...
	local what=$1
	shift
	"$MACHINE" "$@" >"$TMPD/r.out" 2>"$TMPD/r.err"
	check "arm64-machine.sh $what: status 2, one line, nothing on stdout" \
		eval "[ $? = 2 ] && [ \$(wc -l <'$TMPD/r.err') = 1 ] && [ ! -s '$TMPD/r.out' ]"
}
refusal "without a command" --
refusal "with a missing --file" --file "$TMPD/nonexistent" -- true
mkdir -p "$TMPD/a" "$TMPD/b" && touch "$TMPD/a/x" "$TMPD/b/x"
refusal "with two --files of one name" --file "$TMPD/a/x" --file "$TMPD/b/x" -- true

# A raw trace recorded here (the lean x86_64 kernel under QEMU, with a
# call graph and task context), for the arm64 build to read there.
require_file "$LEAN_BZIMAGE"
require_file "$INITRAMFS"
require_file "$INITRAMFS_ARM64"
timeout -k 5 120 "$VMMTRACE" boot "$LEAN_BZIMAGE" --host qemu --initrd "$INITRAMFS" --cmdline vmmtrace.steps=uname \
	--trace 'vfs_*' --trace '__x64_sys_newuname' --graph -o "$TMPD/trace.raw" </dev/null >/dev/null 2>"$TMPD/boot.err"
check "a raw trace recorded on this host to read on arm64 (status $?)" [ -s "$TMPD/trace.raw" ]

# What the machine runs: every result on stdout, one marker on stderr, status 7.
cat >"$TMPD/inside.sh" <<'EOF'
[ -c /dev/kvm ] && echo "dev-kvm yes"
echo "uname $(uname -m)"
echo "version $(vmmtrace --version)"
for k in Image stock-arm64-Image; do
	vmmtrace symbols "$k" >sym.out 2>sym.err
	echo "symbols $k status $?"
	echo "symbols $k sha $(sha256sum <sym.out | cut -d' ' -f1) lines $(wc -l <sym.out)"
	echo "symbols $k stderr $(sha256sum <sym.err | cut -d' ' -f1)"
done
for f in text dat perfetto; do
	vmmtrace report trace.raw --format $f -o report.$f 2>report.err
	echo "report $f status $? sha $(sha256sum <report.$f | cut -d' ' -f1)"
done
# vmmtrace's own KVM host: the lean and Debian's kernel on 2 vCPUs to /init and its power-off.
for k in Image stock-arm64-Image; do
	timeout 300 vmmtrace boot --host kvm "$k" --cpus 2 --initrd initramfs-arm64.cpio >kvm-$k.out 2>kvm-$k.err
	echo "kvm $k status $?"
	grep -E '^\[ *[0-9.]+\] (smp: Brought up|Run /init as init process|reboot: )|^vmmtrace: ' kvm-$k.out kvm-$k.err |
		sed "s/^/kvm $k: /"
done
# Bad input: one line.
for c in "x86:bzImage"; do
	timeout 60 vmmtrace boot --host kvm ${c#*:} >kvm.out 2>kvm.err
	echo "kvm-${c%%:*} status $? stdout $(wc -c <kvm.out) stderr-lines $(wc -l <kvm.err)"
	sed "s/^/kvm-${c%%:*}-stderr: /" kvm.err
done
echo "marker on stderr" >&2
exit 7
EOF

start=$(date +%s)
ARM64_MACHINE_CONSOLE=$TMPD/console "$MACHINE" --file "$TMPD/inside.sh" --file "$LEAN_A64" \
	--file "$STOCK_A64" --file "$TMPD/trace.raw" --file "$INITRAMFS_ARM64" --file "$LEAN_BZIMAGE" \
	-- sh inside.sh >"$TMPD/out" 2>"$TMPD/err"
rc=$?
echo "INFO: the machine ran for $(( $(date +%s) - start )) s"
check "the command's status comes back (7)" [ "$rc" = 7 ]
check "its stderr comes back apart from its stdout" \
	eval "grep -qx 'marker on stderr' '$TMPD/err' && ! grep -q marker '$TMPD/out'"
if [ "$rc" != 7 ]; then
	sed 's/^/   | /' "$TMPD/err" | tail -20
	finish
fi
check "the machine offers /dev/kvm (Debian's arm64 kernel at EL2)" grep -qx 'dev-kvm yes' "$TMPD/out"
check "the machine is arm64" grep -qx 'uname aarch64' "$TMPD/out"
# What this tree's build says (the Makefile's VMMTRACE_VERSION): its release and commit.
rev=$(git -C "$TOP" rev-parse --short=12 HEAD 2>/dev/null)
check "the arm64 build is this tree's vmmtrace (--version: $(cat "$TOP/VERSION")${rev:+ at $rev})" \
	grep -qxF "version vmmtrace $(cat "$TOP/VERSION")${rev:+ ($rev)}" "$TMPD/out"

# The x86_64 build's listing of the same files.
for k in Image:"$LEAN_A64" stock-arm64-Image:"$STOCK_A64"; do
	name=${k%%:*} file=${k#*:}
	"$VMMTRACE" symbols "$file" >"$TMPD/sym.out" 2>"$TMPD/sym.err"
	hrc=$?
	lines=$(wc -l <"$TMPD/sym.out")
	check "symbols $name: status 0 on both hosts" grep -qx "symbols $name status $hrc" "$TMPD/out"
	check "symbols $name: the arm64 build lists the x86_64 build's $lines lines, byte for byte" \
		grep -qx "symbols $name sha $(sha256sum <"$TMPD/sym.out" | cut -d' ' -f1) lines $lines" "$TMPD/out"
	check "symbols $name: and says the same on stderr" \
		grep -qx "symbols $name stderr $(sha256sum <"$TMPD/sym.err" | cut -d' ' -f1)" "$TMPD/out"
	check "symbols $name: more than 1000 symbols" [ "$lines" -gt 1000 ]
done

# The output library on arm64: the same raw trace gives the same files.
for f in text dat perfetto; do
	"$VMMTRACE" report "$TMPD/trace.raw" --format $f -o "$TMPD/report.$f" 2>/dev/null
	check "report --format $f of an x86_64 host's raw trace: the arm64 build writes the same file" \
		grep -qx "report $f status $? sha $(sha256sum <"$TMPD/report.$f" | cut -d' ' -f1)" "$TMPD/out"
done
check "report: the trace is a call graph holding uname's calls" \
	eval "grep -q '|  __x64_sys_newuname();' '$TMPD/report.text' && grep -q '|    vfs_kern_mount() {' '$TMPD/report.text'"

for k in Image stock-arm64-Image; do
	check "--host kvm, $k on 2 vCPUs: status 0, the guest's own reboot ended it" \
		eval "grep -qx 'kvm $k status 0' '$TMPD/out' && grep -qE '^kvm $k: kvm-$k.(out|err):.*reboot: (Restarting system|Power down)' '$TMPD/out'"
	check "--host kvm, $k: both CPUs up, /init ran" \
		eval "grep -qE '^kvm $k: kvm-$k.(out|err):.*smp: Brought up 1 node, 2 CPUs' '$TMPD/out' &&
		      grep -qE '^kvm $k: kvm-$k.(out|err):.*Run /init as init process' '$TMPD/out'"
done
# A host whose KVM can give no GICv3 (a GICv2 machine): one line, status 2.
"$MACHINE" --gic 2 --file "$LEAN_A64" -- vmmtrace boot --host kvm Image >"$TMPD/gic.out" 2>"$TMPD/gic.err"
rc=$?
check "--host kvm on a machine with a GICv2: status 2 (got $rc), one line, nothing on stdout" \
	eval "[ $rc = 2 ] && [ \$(wc -l <'$TMPD/gic.err') = 1 ] && grep -q 'KVM cannot give the guest a GICv3' '$TMPD/gic.err' &&
	      [ ! -s '$TMPD/gic.out' ]"
check "--host kvm of an x86_64 bzImage on arm64: one line, status 2" \
	eval "grep -qx 'kvm-x86 status 2 stdout 0 stderr-lines 1' '$TMPD/out' && grep -q '^kvm-x86-stderr: .*x86_64' '$TMPD/out'"
finish
