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
INITRAMFS_ARM64="$VMMTRACE_CACHE/initramfs-arm64.cpio"
INITRAMFS_RV="$VMMTRACE_CACHE/initramfs-riscv64.cpio"
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

# ---- the guest's console

# wait_line FILE PATTERN SECONDS PID: waits until FILE has a line matching
# PATTERN (grep -E); fails if process PID ends or SECONDS pass first.
wait_line() {
	local i=0
	until grep -qE "$2" "$1" 2>/dev/null; do
		kill -0 "$4" 2>/dev/null && [ "$i" -lt $(($3 * 2)) ] || return 1
		i=$((i + 1)); sleep 0.5
	done
}
# attach_cycles SOCK CYCLES PREFIX: CYCLES attach/detach cycles on a guest
# that runs markloop (e2e/attach-stress.sh, qemu/attach-qemu.sh), with
# varying globs over getpriority's handler; every tenth cycle two clients
# at once, with overlapping filters. PREFIX names the arch's syscall
# handlers (__x64_sys_, __arm64_sys_). The windows go to $TMPD/w<i>.a (and
# .b), a client's non-zero status to $TMPD/attach.err ("attach status").
attach_cycles() {
	local sock=$1 n=$2 p=$3 i g d a
	local globs=("${p}getpriority" '*sys_getpriority' "${p}getp*" '*getpriority*' "${p}getpriority*" "${p}get*ority")
	for ((i = 0; i < n; i++)); do
		g=${globs[$((i % ${#globs[@]}))]}
		d=0.$((2 + i % 5))
		if [ $((i % 10)) = 5 ]; then
			"$VMMTRACE" attach "$sock" --trace "$g" --duration "$d" --format text -o "$TMPD/w$i.a" 2>>"$TMPD/attach.err" &
			a=$!
			"$VMMTRACE" attach "$sock" --trace "${p}getpriority" --trace "${p}getpgid" --duration 0.3 \
				--format text -o "$TMPD/w$i.b" 2>>"$TMPD/attach.err" || echo "cycle $i: attach status $?" >>"$TMPD/attach.err"
			wait "$a" || echo "cycle $i: attach status $?" >>"$TMPD/attach.err"
		else
			"$VMMTRACE" attach "$sock" --trace "$g" --notrace "${p}getpid" --duration "$d" \
				--format text -o "$TMPD/w$i.a" 2>>"$TMPD/attach.err" || echo "cycle $i: attach status $?" >>"$TMPD/attach.err"
		fi
	done
}
# attach_cycles_check SOCK DIGEST0 PID: after attach_cycles, what both
# attach tests check: every client exited 0, the slots' bytes are back to
# DIGEST0 (status before the first attach) with only the boot's own slot
# calling the stub, `vmmtrace stop` ends the boot (PID) with 0, no record
# unfinished or lost ($TMPD/boot.err), no oops or warning ($TMPD/console).
attach_cycles_check() {
	local sock=$1 digest0=$2 vt=$3 digest1 rc
	check "every attach exited 0" sh -c "! grep -q 'attach status' '$TMPD/attach.err'"
	"$VMMTRACE" status "$sock" >"$TMPD/status1"
	digest1=$(sed -n 's/^slot bytes digest: //p' "$TMPD/status1")
	check "slot bytes after the last detach equal those before the first attach ($digest0)" \
		test -n "$digest0" -a "$digest0" = "$digest1"
	check "only the boot's own slot calls the stub after the last detach" \
		grep -qx "slots calling the stub: 1" "$TMPD/status1"
	grep -E '^pause (last|worst)' "$TMPD/status1" | sed 's/^/INFO: /'
	check "vmmtrace stop is accepted" "$VMMTRACE" stop "$sock"
	wait "$vt"
	rc=$?
	check "vmmtrace exits 0 after stop (got $rc)" test "$rc" = 0
	check "the stop left no record unfinished and lost none" \
		sh -c "! grep -qE 'unfinished|[1-9][0-9]* lost\\)' '$TMPD/boot.err'"
	check "the guest never oopsed, panicked or warned, and no process segfaulted" \
		sh -c "! grep -qE 'Oops|BUG:|Kernel panic|WARNING:|ftrace failed|segfault at' '$TMPD/console'"
}
# trace_all_count NAME BOOT-ARGS...: `vmmtrace boot BOOT-ARGS --trace '*'`
# (within 600 s), the trace counted as it comes (hundreds of MB as text),
# the console to $TMPD/NAME.con, stderr to $TMPD/NAME.err; sets rc (its
# status), n (events written), c1 (those on CPU 1) and cx (those on neither
# CPU 0 nor 1), keeps the lines of notify_cpu_starting (which only a CPU
# coming up runs, so only CPU 1 in a 2-vCPU boot) in $TMPD/NAME.ncs, and
# says so.
trace_all_count() {
	local name=$1
	shift
	set -o pipefail
	timeout -k 5 600 "$VMMTRACE" boot "$@" --trace '*' --console "$TMPD/$name.con" </dev/null 2>"$TMPD/$name.err" |
		awk -v ncs="$TMPD/$name.ncs" '/^#/ { next } { n++ } /: notify_cpu_starting <-/ { print >ncs }
			/ \[001\] / { c1++; next } !/ \[000\] / { cx++ } END { print n + 0, c1 + 0, cx + 0 }' >"$TMPD/$name.n"
	rc=$?
	set +o pipefail
	touch "$TMPD/$name.ncs"
	read -r n c1 cx <"$TMPD/$name.n"
	echo "INFO: --trace '*': status $rc; $n events written, $c1 on CPU 1, $cx on another; $(grep '^vmmtrace: trace:' "$TMPD/$name.err")"
}
# trace_all_cpus_check NAME: after trace_all_count NAME on 2 vCPUs, each
# event went to its own CPU's ring under its own CPU's number: CPU 1's ring
# carried real traffic (how much depends on the guest's scheduler: 0.8 to
# 3.2 million of ~5 million seen), no event has another number, and the one
# function only a CPU coming up runs is CPU 1's, once.
trace_all_cpus_check() {
	local ncs="$TMPD/$1.ncs"
	check "--trace '*', 2 vCPUs: $c1 events on CPU 1 (over 100,000), $cx under another CPU number, notify_cpu_starting once, by swapper/1 on CPU 1" \
		eval "[ '$c1' -gt 100000 ] && [ '$cx' = 0 ] && [ \$(wc -l <'$ncs') = 1 ] && grep -qE '^ *swapper/1-0 +\[001\] .*: notify_cpu_starting <-' '$ncs'"
}
# attach_windows_check CPUS: attach_check.py over the boot's markers
# ($TMPD/boot.trace) and the windows attach_cycles wrote ($TMPD/w*.a,
# w*.b): every window exact, markloop seen on CPUs 0..CPUS-1, and windows
# that held events. ATTACH_MARKER and ATTACH_TARGET name other arches'
# handlers.
attach_windows_check() {
	local cpus
	cpus=$(seq -s ', ' 0 $(($1 - 1)))
	if python3 "$TOP/tests/e2e/attach_check.py" "$TMPD/boot.trace" "$TMPD"/w*.a "$TMPD"/w*.b >"$TMPD/check" 2>&1; then
		cat "$TMPD/check"
	else
		head -20 "$TMPD/check"
		grep -q '^FAIL' "$TMPD/check" || fail "attach_check.py failed"
	fi
	check "markloop ran on all $1 CPUs (markers on CPUs [$cpus])" grep -qF "marker events on CPUs [$cpus]" "$TMPD/check"
	check "the windows held events" grep -qE '^INFO: [0-9]+ windows, [1-9][0-9]* with events' "$TMPD/check"
}
# graph_check FILE: tests/e2e/graph_check.awk over a --graph text: one line
# per problem, then "blocks=N closed=N open=N leaves=N".
graph_check() { awk -f "$TOP/tests/e2e/graph_check.awk" "$1"; }
# graph_boot_checks FILE: a --graph trace of a boot with start_kernel,
# setup_arch, trap_init, sched_init and kernel_init among its functions:
# every block closes at its depth in its task, durations contain their
# children's, start_kernel is still running at the end with the other three
# returned inside its block, and kernel_init returned (into ret_from_fork).
graph_boot_checks() {
	local stats problems
	graph_check "$1" >"$1.check"
	tail -n 20 "$1.check" | sed 's/^/INFO: /'
	stats=$(tail -n 1 "$1.check")
	problems=$(($(wc -l <"$1.check") - 1))
	check "boot: every block closes at its depth in its task, durations contain their children ($stats; $problems problems)" \
		eval "[ $problems = 0 ] && [[ '$stats' =~ blocks=[1-9] ]]"
	check "boot: start_kernel is listed as still running at the end (swapper/0-0)" \
		grep -qE '^ [0-9]\)               \|  /\* start_kernel: still running when the trace ended \(swapper/0-0\) \*/$' "$1"
	check "boot: setup_arch, trap_init and sched_init returned inside start_kernel's block" \
		eval "[ \$(grep -cE '^ [0-9]\) .{14}\|    (setup_arch|trap_init|sched_init)\(\);' '$1') = 3 ]"
	# Its block's close (named when on another CPU), or one leaf line when nothing came between.
	check "boot: kernel_init returned into ret_from_fork (its block closed)" \
		grep -qE '\|  (\}( /\* kernel_init( = 0x0)? \*/)?|kernel_init\(\);( /\* = 0x0 \*/)?)$' "$1"
}
# graph_star IMAGE INITRD CMDLINE WORKLOAD: --graph --trace '*' on the QEMU
# host, 2 vCPUs, from start_kernel to the reboot, the guest running what
# CMDLINE asks (WORKLOAD: the console line that says it passed). Checked:
# status 0, no oops or WARNING, every block closed or listed, and the
# summary's events equal to the graph's: each call is an entry and an exit
# (a leaf line or a block's two), or an entry alone (still running at the
# end, its task gone, or not hooked).
graph_star() {
	local start rc bad stats problems notrec closed open leaves events sum
	start=$(date +%s)
	timeout -k 10 600 "$VMMTRACE" boot "$1" --host qemu --initrd "$2" --cpus 2 --graph --trace '*' \
		-o "$TMPD/star.txt" --console "$TMPD/star.console" --cmdline "$3" </dev/null 2>"$TMPD/star.err"
	rc=$?
	echo "INFO: --graph '*' boot took $(($(date +%s) - start)) s; $(grep '^vmmtrace: trace:' "$TMPD/star.err" | head -1)"
	check "--graph '*': status 0 (got $rc), the workload passed on 2 vCPUs" \
		eval "[ $rc = 0 ] && grep -qE '$4' '$TMPD/star.console'"
	bad=$(grep -cE 'Oops|WARNING:|BUG:|Call Trace|Unable to handle|invalid opcode' "$TMPD/star.console")
	check "--graph '*': no oops, no WARNING, no BUG on the console ($bad lines)" [ "$bad" = 0 ]
	graph_check "$TMPD/star.txt" >"$TMPD/star.check"
	stats=$(tail -n 1 "$TMPD/star.check")
	problems=$(($(wc -l <"$TMPD/star.check") - 1))
	head -n 5 "$TMPD/star.check" | grep -v '^blocks=' | sed 's/^/INFO: --graph '"'*'"': /'
	check "--graph '*': every block closes at its depth in its task ($stats; $problems problems)" \
		eval "[ $problems = 0 ] && [[ '$stats' =~ blocks=[1-9][0-9]{4} ]]"
	notrec=$(grep -c '/\* return not recorded \*/$' "$TMPD/star.txt")
	read -r closed open leaves < <(sed -nE 's/^blocks=[0-9]+ closed=([0-9]+) open=([0-9]+) leaves=([0-9]+)$/\1 \2 \3/p' \
		<<<"$stats")
	events=$(sed -nE 's/^vmmtrace: trace: ([0-9]+) events .* 0 dropped \(0 by the stub, 0 lost\).*/\1/p' "$TMPD/star.err")
	sum=$((2 * ${closed:-0} + 2 * (${leaves:-0} - notrec) + notrec + ${open:-0}))
	check "--graph '*': nothing dropped, and the summary's ${events:-?} events are the graph's $sum ($notrec not hooked)" \
		eval "[ -n '$events' ] && [ '$events' = $sum ]"
}
# graph_sleepers IMAGE INITRD CMDLINE DONE: `--graph --trace
# hrtimer_nanosleep -v` under QEMU on 2 vCPUs while the guest's 150 sleepers
# (docs/TEST-GUEST.md; CMDLINE asks for them, DONE matches the line that
# says they ran) sleep 3 s each, all at once. Each holds a shadow stack
# meanwhile, so tasks share the first table they try and claim others
# further on, whose reach the stub raises first (proto/trace.h): every
# sleeper's call closes, in its task, 3 s or more after it began, and -v
# says some task had to try more than one table.
graph_sleepers() {
	local rc stats problems long farthest events
	timeout -k 10 300 "$VMMTRACE" boot "$1" --host qemu --initrd "$2" --cpus 2 --graph --trace hrtimer_nanosleep -v \
		-o "$TMPD/sleep.txt" --console "$TMPD/sleep.console" --cmdline "$3" </dev/null 2>"$TMPD/sleep.err"
	rc=$?
	graph_check "$TMPD/sleep.txt" >"$TMPD/sleep.check"
	stats=$(tail -n 1 "$TMPD/sleep.check")
	problems=$(($(wc -l <"$TMPD/sleep.check") - 1))
	# A closing line or a leaf: a call's duration. 3 s by the guest's clock,
	# which on x86_64 under TCG is refined-jiffies (its TSC is marked
	# unstable there): a tick coarse, and sleeps of 2.989 s were seen.
	long=$(awk '$2 == "$" && $3 >= 2950000' "$TMPD/sleep.txt" | wc -l)
	farthest=$(sed -nE 's/.*--graph: .* the most any task had to try: ([0-9]+) of .*/\1/p' "$TMPD/sleep.err")
	events=$(sed -nE 's/^vmmtrace: trace: ([0-9]+) events .* 0 dropped \(0 by the stub, 0 lost\).*/\1/p' "$TMPD/sleep.err")
	check "sleepers: status 0 (got $rc), the guest's 150 sleepers ran" eval "[ $rc = 0 ] && grep -qE '$4' '$TMPD/sleep.console'"
	check "sleepers: every hrtimer_nanosleep closes in its task ($stats; $problems problems), $long of them about 3 s after they began (2.95 s or more; 150 or more)" \
		eval "[ $problems = 0 ] && [[ '$stats' =~ open=0 ]] && [ '$long' -ge 150 ]"
	check "sleepers: nothing dropped, no return unrecorded (${events:-?} events)" \
		eval "[ -n '$events' ] && ! grep -q 'returns not recorded' '$TMPD/sleep.err'"
	check "sleepers: tasks shared the table they try first and took others further on (the most tried: ${farthest:-?})" \
		eval "[ '${farthest:-0}' -ge 2 ]"
}
# wait_markloop FILE CPUS SECONDS PID: waits until the mark-loop step's
# worker on each CPU 0..CPUS-1 says it is running (docs/TEST-GUEST.md).
wait_markloop() {
	local c
	for ((c = 0; c < $2; c++)); do
		wait_line "$1" "^VMMTRACE-STEP mark-loop: running cpu=$c\b" "$3" "$4" || return 1
	done
}

# ---- trace files (ftrace layout: "TASK-PID [CPU] FLAGS TIMESTAMP: func <-parent")

# The numbers of vmmtrace's summary line in file $1: events before after
# slots doorbells dropped stub lost mode.
trace_summary() {
	sed -nE 's/^vmmtrace: trace: ([0-9]+) events \(([0-9]+) before ftrace_init, ([0-9]+) after\); ([0-9]+) slots held; ([0-9]+) doorbells; ([0-9]+) dropped \(([0-9]+) by the stub, ([0-9]+) lost\); mode ([a-z]+)$/\1 \2 \3 \4 \5 \6 \7 \8 \9/p' "$1"
}
# handshake_rows ERR: the --handshake table's lines from a run's stderr.
# kvmclock_write TRACE: the trace's first write of MSR_KVM_SYSTEM_TIME_NEW
# as grep -n prints it ("LINE:text"), or nothing; msr_value LINE: its value.
kvmclock_write() { grep -n ' kvm_msr: msr_write 4b564d01 = ' "$1" | head -1; }
msr_value() { local v=${1##*= }; echo "${v%% *}"; }
# kvmclock_value_ok VALUE RAM_BYTES: the enable bit and a GPA inside RAM.
kvmclock_value_ok() { [ -n "$1" ] && (( ($1 & 1) == 1 && ($1 & ~1) > 0 && ($1 & ~1) < $2 )); }
handshake_rows() { sed -n '/^vmmtrace: handshake: /,$p' "$1" | grep -E '^(vmmtrace: handshake|  )'; }
# handshake_disagree TABLE TRACE: how many rows disagree with the text
# trace of the same run (0 when all agree): each enabled row's first write
# must be a kvm_msr line of its time, CPU and MSR made from its function,
# and no MSR of a row said to be off may have an enabling write (bit 0) in
# the trace (async PF's vmexit bit and poll control aside: their rows share
# the MSR or take any write). Rows: feature, offered, MSR, enabled, first,
# cpu, from, value, two or more blanks apart.
handshake_disagree() {
	local bad=0 msr time cpu from value name ev
	while IFS='|' read -r msr time cpu from value name; do
		ev=$(grep -E " \[0*$cpu\] " "$2" | grep -F " $time: kvm_msr: msr_write $msr = ")
		case $ev in *"<-$from]"|*"[$from]") ;; *) bad=$((bad + 1)); echo "INFO: handshake row $name: no such event" >&2 ;; esac
	done < <(awk -F '  +' '/^  / && $5 ~ /CPUs$/ { print $4 "|" $6 "|" $7 "|" $8 "|" $9 "|" $2 }' "$1")
	while read -r msr; do
		if grep -q " kvm_msr: msr_write $msr = 0x[0-9a-f]*[13579bdf] " "$2"; then
			bad=$((bad + 1))
			echo "INFO: handshake: MSR $msr said to be off, turned on in the trace" >&2
		fi
	done < <(awk -F '  +' '/^  / && $4 ~ /^[0-9a-f]+$/ && $5 == "no" && $4 != "4b564d02" && $4 != "4b564d05" { print $4 }' "$1" | sort -u)
	echo "$bad"
}
# Event lines of a trace file.
trace_events() { grep -v '^#' "$1"; }
# A whole function event line (grep -E): TASK-PID, [CPU], the five latency
# columns (docs/TASKS.md), the timestamp, function <-parent.
EVENT_LINE_RE='^ *[^ ]+-[0-9]+ +\[[0-9]{3}\] [.dDb][.nNp][.hHszZ][.0-9a-f][.0-9a-f] +[0-9]+\.[0-9]{6}: [^ ]+ <-[^ ]+$'
# The traced function of every event, in order.
trace_funcs() { trace_events "$1" | sed -nE 's/.*[0-9]+\.[0-9]{6}: ([^ ]+) <-.*/\1/p'; }
# trace_calls_of FILE PID: task PID's calls in a text trace, "func <-parent" in order.
trace_calls_of() { awk -v pid="$2" -f "$TOP/tests/guest/calls-of.awk" "$1"; }
# Succeeds when timestamps never go back in the merged output.
trace_ordered() { trace_events "$1" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]{6}:$/) { t = $i + 0; break }
	if (t < last) bad++; last = t } END { exit bad > 0 }'; }
# trace_count_cpu FILE FUNC CPU: events of FUNC on that CPU.
trace_count_cpu() { trace_events "$1" | awk -v c="$3" -v f="$2" '$0 ~ (" " f " <-") {
	for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) { x = substr($i, 2, length($i) - 2) + 0; break }
	if (x == c) n++ } END { print n + 0 }'; }

# The vector extensions the host CPU gives user code, as the test guest's
# vecstate reports them (guest user code sees the host's CPU): avx512, avx or none.
host_vector_level() {
	if grep -qw avx512f /proc/cpuinfo; then echo avx512
	elif grep -qw avx /proc/cpuinfo; then echo avx
	else echo none; fi
}

# The QEMU host's checks of a lean kernel (tests/qemu/guest-qemu.sh, lean612.sh):
# LOOPS getpriority calls per worker, INITRAMFS_ARM64, INITRAMFS_RV.
# arm64_checks TAG IMAGE: the arm64 checks on IMAGE.
arm64_checks() {
	local tag=$1 img=$2 cpus name size rc
	for cpus in 1 2; do
		name=$tag-cpus$cpus
		size=()
		[ "$cpus" = 1 ] && size=(--buffer-size 4K)
		timeout -k 5 300 "$VMMTRACE" boot "$img" --host qemu --cpus "$cpus" "${size[@]}" --initrd "$INITRAMFS_ARM64" \
			--cmdline "$(arm64_loop_cmdline "$cpus")" \
			--trace __arm64_sys_getpriority --trace __arm64_sys_getpid -v -o "$TMPD/$name.txt" </dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err"
		rc=$?
		arm64_loop_checks "$tag" "$cpus" "$TMPD/$name" "$rc"
	done
}
# The command line of arm64_checks's boots on CPUS vCPUs: LOOPS getpriority
# calls per worker, then the guest's own ftrace on getpid after the hand-over.
arm64_loop_cmdline() {
	echo "vmmtrace.steps=syscall-loop,ftrace-handoff vmmtrace.loops=$LOOPS vmmtrace.loop_cpus=$1 vmmtrace.ftrace_func=__arm64_sys_getpid"
}
# arm64_loop_checks TAG CPUS BASE RC: the checks of such a boot (any host),
# from BASE.txt (its trace), BASE.out (the console), BASE.err and its status.
arm64_loop_checks() {
	local tag=$1 cpus=$2 b=$3 rc=$4 want got pids pid n
	echo "INFO: $tag, $cpus vCPU(s): status $rc; $(tail -n 1 "$b.err")"
	check "$tag, $cpus vCPU(s): /init ran its steps and the guest rebooted: status 0 (got $rc)" \
		eval "[ $rc = 0 ] && grep -q '^VMMTRACE-INIT: done passed=2 failed=0' '$b.out'"
	want=$((cpus * LOOPS + 3))
	got=$(grep -c ': __arm64_sys_getpriority <-' "$b.txt")
	check "$tag, $cpus vCPU(s): exactly $want getpriority events ($cpus x $LOOPS, and the hand-off step's 3; got $got)" [ "$got" = "$want" ]
	# The console's lines end in CR LF.
	pids=$(tr -d '\r' <"$b.out" | sed -n 's/^VMMTRACE-STEP syscall-loop: worker=.* pid=\([0-9]*\)$/\1/p')
	check "$tag, $cpus vCPU(s): one sysloop per vCPU reported its pid ($(echo $pids))" [ "$(echo $pids | wc -w)" = "$cpus" ]
	for pid in $pids; do
		n=$(grep -c -- "-$pid \+\[.*: __arm64_sys_getpriority <-" "$b.txt")
		check "$tag, $cpus vCPU(s): sysloop pid $pid: $LOOPS events with its pid (got $n)" [ "$n" = "$LOOPS" ]
	done
	got=$(grep -vc '^#' "$b.txt")
	check "$tag, $cpus vCPU(s): the summary counts every event written ($got), none dropped" \
		eval "grep -qE '^vmmtrace: trace: $got events .* 0 dropped' '$b.err'"
	guest_ftrace_shared "$tag, $cpus vCPU(s)" "$b.err"
	# The one-page stub with no padding below it has no doorbell breakpoint: a full
	# ring waits in the stub for the host's consumer (docs/STUB-PLACEMENT.md).
	if [ "$cpus" = 1 ] && grep -q 'a full ring waits in the stub' "$b.err"; then
		check "$tag, 1 vCPU, 32-record rings: no doorbell (no breakpoint on the stub's page), the stub waited for the host instead" \
			eval "grep -qE '; 0 doorbells;' '$b.err'"
	elif [ "$cpus" = 1 ]; then
		check "$tag, 1 vCPU, 32-record rings: drained at dozens of doorbells" \
			eval "grep -qE '; [1-9][0-9]+ doorbells;' '$b.err'"
	fi
	check "$tag, $cpus vCPU(s): the guest's own ftrace after the hand-off: its event, no 'ftrace failed to modify', no WARNING" \
		eval "grep -qE '^VMMTRACE-STEP ftrace-handoff: func=__arm64_sys_getpid .*events=[1-9][0-9]* .*first_func=__arm64_sys_getpid .*ftrace_failed=0 warnings=0' '$b.out' && grep -q '^VMMTRACE-RESULT ftrace-handoff PASS' '$b.out'"
}
# both_tracers TAG IMAGE INITRD MIN [cinit]: the guest's own function tracer on every
# function around a dd, then its function_graph tracer (/init's step
# ftrace-all; with cinit, tests/guest/cinit.c's ftraceall=1 around a read of
# /proc/version, its trace lines in the kernel log), while vmmtrace holds every
# slot (--trace '*', issue 37), 1 vCPU: QEMU 7.2's TCG on 2 vCPUs oopses on
# a stale int3 in about 1 boot in 8 when the guest turns its function tracer
# off for every function, with vmmtrace or without it (docs/TRACING.md). No
# "ftrace failed to modify", WARNING or oops; the guest's trace of the
# first dd holds vmmtrace's calls (each with its parent; their order may
# differ where an interrupt falls between the two records); both count
# dd's vfs_read calls alike under each tracer; at least MIN held slots went
# on to the guest's tracer. BOTH_HOST (qemu) and BOTH_TIMEOUT (600 s) say
# where and how long; BOTH_TRACE ('*') what vmmtrace traces (with another
# glob the guest's calls are a superset: no digest to compare).
both_tracers() {
	local tag=$1 img=$2 initrd=$3 min=$4 cinit=${5:-} b=$TMPD/both-$1 rc cmdline="vmmtrace.steps=ftrace-all"
	[ -z "$cinit" ] || cmdline="printk.devkmsg=on ftraceall=1 -- 0 1"
	set -o pipefail
	timeout -k 5 "${BOTH_TIMEOUT:-600}" "$VMMTRACE" boot "$img" --host "${BOTH_HOST:-qemu}" --cpus 1 --initrd "$initrd" \
		--cmdline "$cmdline" --trace "${BOTH_TRACE:-*}" --console "$b.con" </dev/null 2>"$b.err" |
		grep -v '^#' | gzip -1 >"$b.txt.gz"
	rc=$?
	set +o pipefail
	both_tracers_check "$tag" "$rc" "$min" "$cinit"
}
# both_tracers_check TAG STATUS MIN [cinit]: both_tracers's checks of a boot
# that ended with STATUS, from its files: $TMPD/both-TAG.con (its console),
# .err (vmmtrace's stderr) and .txt.gz (vmmtrace's text trace: all of it, or
# the lines of the tasks the checks read, dd's).
both_tracers_check() {
	local tag=$1 rc=${2:-none} min=$3 cinit=${4:-} b=$TMPD/both-$1 step fpid fcalls fmd5 fsorted gpid vmd5 vsorted w gn vn n
	local done_re='^VMMTRACE-INIT: done passed=1 failed=0' pass_re='^VMMTRACE-RESULT ftrace-all PASS'
	local mincalls=1000	# dd's exec, read and exit; cinit's child only reads
	[ -z "$cinit" ] || { done_re='^CINIT: done'; pass_re='^CINIT-FTRACE-ALL .* refused=0 '; mincalls=500; }
	tr -d '\r' <"$b.con" >"$b.console"
	if [ -z "$cinit" ]; then
		step=$(grep -m1 '^VMMTRACE-STEP ftrace-all: ' "$b.console")
	else	# the step line busybox's /init prints, from cinit's trace lines
		step=$(grep -m1 '^CINIT-FTRACE-ALL ' "$b.console")
		fpid=$(sed -nE 's/.* function_pid=([0-9]+) .*/\1/p' <<<"$step")
		gpid=$(sed -nE 's/.* graph_pid=([0-9]+) .*/\1/p' <<<"$step")
		sed -nE 's/^(\[ *[0-9.]+\] )?CINIT-TRACE f //p' "$b.console" >"$b.gf"	# through the kernel log
		sed -nE 's/^(\[ *[0-9.]+\] )?CINIT-TRACE g //p' "$b.console" >"$b.gg"
		step="CINIT-FTRACE-ALL function_pid=$fpid function_vfs_read=$(grep -c -- "-$fpid .* vfs_read <-" "$b.gf")\
 function_calls=$(trace_calls_of "$b.gf" "$fpid" | wc -l)\
 function_md5=$(trace_calls_of "$b.gf" "$fpid" | md5sum | cut -d' ' -f1)\
 function_sorted_md5=$(trace_calls_of "$b.gf" "$fpid" | sort | md5sum | cut -d' ' -f1)\
 graph_pid=$gpid graph_vfs_read=$(grep -c -- "-$gpid .*vfs_read()" "$b.gg") ${step#* refused=[0-9] }"
	fi
	echo "INFO: $tag, both tracers: status $rc; ${step:-no ftrace-all line}; $(grep "^vmmtrace: trace: the guest's" "$b.err")"
	check "$tag, both tracers, --trace '${BOTH_TRACE:-*}': /init finished and the guest rebooted: status 0 (got $rc)" \
		eval "[ $rc = 0 ] && grep -q '$done_re' '$b.console'"
	check "$tag, both tracers: the guest's function and function_graph tracers on every function: no 'ftrace failed to modify', no WARNING, no oops" \
		eval "grep -q '$pass_re' '$b.console' && grep -qE 'ftrace_failed=0 warnings=0 oopses=0\$' <<<'$step'"
	fpid=$(sed -nE 's/.* function_pid=([0-9]+) .*/\1/p' <<<"$step")
	fcalls=$(sed -nE 's/.* function_calls=([0-9]+) .*/\1/p' <<<"$step")
	fmd5=$(sed -nE 's/.* function_md5=([0-9a-f]+) .*/\1/p' <<<"$step")
	fsorted=$(sed -nE 's/.* function_sorted_md5=([0-9a-f]+) .*/\1/p' <<<"$step")
	gpid=$(sed -nE 's/.* graph_pid=([0-9]+) .*/\1/p' <<<"$step")
	zcat "$b.txt.gz" | trace_calls_of /dev/stdin "${fpid:-x}" >"$b.dd1"
	zcat "$b.txt.gz" | trace_calls_of /dev/stdin "${gpid:-x}" >"$b.dd2"
	# The guest's list may end earlier (it stops tracing once dd's parent wakes): vmmtrace's first as many.
	vmd5=$(head -n "${fcalls:-0}" "$b.dd1" | md5sum | cut -d' ' -f1)
	vsorted=$(head -n "${fcalls:-0}" "$b.dd1" | sort | md5sum | cut -d' ' -f1)
	if [ "${BOTH_TRACE:-*}" = '*' ]; then
		check "$tag, both tracers: the guest's function trace of dd (pid $fpid, $fcalls calls in task context) holds vmmtrace's calls, each with its parent ($(wc -l <"$b.dd1") in vmmtrace's)" \
			eval "[ '${fcalls:-0}' -ge $mincalls ] && [ '$vsorted' = '$fsorted' ] && [ \$(wc -l <'$b.dd1') -ge '$fcalls' ]"
		echo "INFO: $tag, both tracers: the same order too: $([ "$vmd5" = "$fmd5" ] && echo yes || echo "no (an interrupt fell between the two records of a call)")"
	fi
	for w in function graph; do
		gn=$(sed -nE "s/.* ${w}_vfs_read=([0-9]+) .*/\1/p" <<<"$step")
		vn=$(grep -c '^vfs_read <-' "$b.$([ $w = function ] && echo dd1 || echo dd2)")
		check "$tag, both tracers: dd's vfs_read calls under the guest's $w tracer: $gn in its trace, $vn in vmmtrace's" \
			eval "[ '${gn:-0}' -ge 1 ] && [ '$gn' = '$vn' ]"
	done
	n=$(sed -nE "s/^vmmtrace: trace: the guest's ftrace changed its code 4 times; of the slots vmmtrace held, ([0-9]+) at most went on to its tracer \(0 at the end\), 0 at most were given to it \(0 at the end\)$/\1/p" "$b.err")
	check "$tag, both tracers: the guest's ftrace changed its code 4 times, vmmtrace's calls went on to its tracer in ${n:-no} slots (at least $min), none given" \
		[ "${n:-0}" -ge "$min" ]
	check "$tag, both tracers: nothing dropped, nothing rejected" \
		eval "grep -qE '^vmmtrace: trace: [0-9]+ events .* 0 dropped' '$b.err' && ! grep -q rejected '$b.err'"
}

# guest_call_check SOCK FUNC CONSOLE: after the last detach, FUNC's slot
# holds the guest's own call (vmmtrace status SOCK FUNC), of the target its
# ftrace reports (/init's step ftrace-on prints FUNC's enabled_functions
# line and the kallsyms of ftrace's trampolines): a trampoline of its own
# when enabled_functions names one ("tramp:"), else ftrace_caller or
# ftrace_regs_caller (issue 37).
guest_call_check() {
	local sock=$1 func=$2 console=$3 line target en want
	"$VMMTRACE" status "$sock" "$func" >"$TMPD/status-$func" 2>&1
	line=$(grep -m1 "^slot $func " "$TMPD/status-$func")
	en=$(tr -d '\r' <"$console" | sed -n 's/^VMMTRACE-STEP ftrace-on: enabled: //p' | head -n 1)
	echo "INFO: vmmtrace status: ${line:-no slot line}; the guest's enabled_functions: ${en:-none}"
	target=$(sed -nE "s/^slot $func 0x[0-9a-f]+: the guest's call of 0x([0-9a-f]+) \(.*\)\$/\1/p" <<<"$line")
	case $en in
	*tramp:*) want=$(tr -d '\r' <"$console" | sed -nE 's/^VMMTRACE-STEP ftrace-on: kallsyms: ([0-9a-f]+) . ftrace_trampoline.*/\1/p') ;;
	*) want=$(tr -d '\r' <"$console" | sed -nE 's/^VMMTRACE-STEP ftrace-on: kallsyms: ([0-9a-f]+) . ftrace_(regs_)?caller$/\1/p') ;;
	esac
	check "after the last detach $func's slot holds the guest's call, vmmtrace's no more, of what its enabled_functions names (${target:-no call}; ${en:-no line})" \
		eval "[ -n '$target' ] && [ -n '$en' ] && grep -qx '0*$target' <<<'$want'"
}
# guest_ftrace_shared WHAT ERR: vmmtrace held the function the guest's own
# tracer turned on and off (issue 37): its call went on to the guest's
# tracer meanwhile (a chained entry), none was given to it, and vmmtrace's
# plain call was back after.
guest_ftrace_shared() {
	check "$1: the guest's tracer and vmmtrace on one function: vmmtrace's call went on to the guest's tracer while it was on, and was vmmtrace's alone again after" \
		grep -qE "^vmmtrace: trace: the guest's ftrace changed its code 2 times; of the slots vmmtrace held, 1 at most went on to its tracer \(0 at the end\), 0 at most were given to it \(0 at the end\)" "$2"
}

# trace_all NAME IMAGE INITRD DONE_LINE CMDLINE MIN: --trace '*' on 2 vCPUs from the
# first call to the reboot, the trace on stdout counted as it comes (hundreds
# of MB as text), the console to a file whose DONE_LINE says /init finished;
# at least MIN events (the count varies by a tenth between boots: timers, idle).
trace_all() {
	local name=$1 img=$2 initrd=$3 done_line=$4 cmdline=$5 min=$6 n rc
	set -o pipefail
	timeout -k 5 600 "$VMMTRACE" boot "$img" --host qemu --cpus 2 --initrd "$initrd" \
		--cmdline "$cmdline" --trace '*' --console "$TMPD/$name.con" </dev/null 2>"$TMPD/$name.err" |
		grep -vc '^#' >"$TMPD/$name.n"
	rc=$?
	set +o pipefail
	n=$(cat "$TMPD/$name.n")
	echo "INFO: $name --trace '*': status $rc; $n events written; $(tail -n 1 "$TMPD/$name.err")"
	check "$name --trace '*', 2 vCPUs: /init finished and the guest rebooted: status 0 (got $rc)" \
		eval "[ $rc = 0 ] && tr -d '\r' <'$TMPD/$name.con' | grep -q '^$done_line'"
	check "$name --trace '*', 2 vCPUs: $n events (at least $min), every one counted written, none dropped" \
		eval "[ '$n' -ge $min ] && grep -qE '^vmmtrace: trace: $n events .* 0 dropped' '$TMPD/$name.err'"
}

# qtrace_order TAG: test-qemu-trace on TAG's kernel: the first-hit order of
# five early functions against QEMU's own breakpoints, and --trace '*'.
qtrace_order() {
	local tag=$1 rc
	"$(dirname "$VMMTRACE")/tests/qemu/test-qemu-trace" "$tag" >"$TMPD/order-$tag.out" 2>&1
	rc=$?
	sed 's/^/  /' "$TMPD/order-$tag.out" | grep -E '^  (PASS|FAIL)' | sed "s/^  /$tag order: /" | sed "s/^$tag order: PASS: /INFO: /; s/^$tag order: FAIL: /INFO: FAILED: /"
	check "$tag: the first-hit order of QEMU's breakpoints, and --trace '*' (test-qemu-trace: $(grep -c '^PASS' "$TMPD/order-$tag.out") passed, $(grep -c '^FAIL' "$TMPD/order-$tag.out") failed)" \
		eval "[ $rc = 0 ] && ! grep -q '^FAIL' '$TMPD/order-$tag.out' && grep -q '^PASS' '$TMPD/order-$tag.out'"
}

# riscv64: cinit's arguments after "--": LOOPS CPUS FUNC. riscv_checks TAG KERNEL: the checks on KERNEL
# (RV_SYS: the system calls' prefix, sys_ by default; 6.12: __riscv_sys_).
riscv_checks() {
	local tag=$1 kernel=$2 cpus name rc want got pids pid n
	for cpus in 1 2; do
		name=$tag$cpus
		timeout -k 5 300 "$VMMTRACE" boot "$kernel" --host qemu --cpus "$cpus" --initrd "$INITRAMFS_RV" \
			--cmdline "-- $LOOPS $cpus ${RV_SYS:-sys_}getpid" --trace "${RV_SYS:-sys_}getpriority" \
			--trace "${RV_SYS:-sys_}getpid" -o "$TMPD/$name.txt" \
			</dev/null >"$TMPD/$name.out" 2>"$TMPD/$name.err"
		rc=$?
		tr -d '\r' <"$TMPD/$name.out" >"$TMPD/$name.con"
		echo "INFO: $tag $name: status $rc; $(tail -n 1 "$TMPD/$name.err")"
		check "$tag, $cpus vCPU(s): cinit ran and the guest rebooted: status 0 (got $rc)" \
			eval "[ $rc = 0 ] && grep -q '^CINIT: done' '$TMPD/$name.con'"
		want=$((cpus * LOOPS))
		got=$(grep -c ": ${RV_SYS:-sys_}getpriority <-" "$TMPD/$name.txt")
		check "$tag, $cpus vCPU(s): exactly $want getpriority events (got $got), none dropped" \
			eval "[ '$got' = $want ] && grep -qE '^vmmtrace: trace: $(grep -vc '^#' "$TMPD/$name.txt") events .* 0 dropped' '$TMPD/$name.err'"
		pids=$(sed -n "s/^CINIT-WORKER cpu=.* calls=$LOOPS ns=[0-9]* pid=\([0-9]*\)$/\1/p" "$TMPD/$name.con")
		check "$tag, $cpus vCPU(s): one worker per vCPU made every call ($(echo $pids))" [ "$(echo $pids | wc -w)" = "$cpus" ]
		for pid in $pids; do
			n=$(grep -c -- "-$pid \+\[.*: ${RV_SYS:-sys_}getpriority <-" "$TMPD/$name.txt")
			check "$tag, $cpus vCPU(s): worker pid $pid: $LOOPS events with its pid (got $n)" [ "$n" = "$LOOPS" ]
		done
		check "$tag, $cpus vCPU(s): the guest's own ftrace after the hand-off: 3 events, no 'ftrace failed to modify', no WARNING" \
			grep -qx "CINIT-FTRACE func=${RV_SYS:-sys_}getpid events=3 ftrace_failed=0 warnings=0 loops=0 ns=[0-9]*" "$TMPD/$name.con"
		guest_ftrace_shared "$tag, $cpus vCPU(s)" "$TMPD/$name.err"
	done
	trace_all "$tag" "$kernel" "$INITRAMFS_RV" 'CINIT: done' "-- 100 2" 500000
}

# The flight recorder's output (tests/qemu/flight-qemu.sh, tests/kvm-arm64/trace.sh).
# recorder_checks NAME ERR PCREG [LINE-ERE]: the recorder's block in ERR is whole, and vCPU 0's
# registers follow: PCREG (PC, RIP) a kernel address, and a line matching LINE-ERE when given (x86's CR0).
recorder_checks() {
	local name=$1 err=$2 pcreg=$3 more=${4:-.} kept seen lines
	kept=$(sed -nE 's/^vmmtrace: flight recorder: the last ([0-9]+) of ([0-9]+) events, oldest first:$/\1/p' "$err")
	seen=$(sed -nE 's/^vmmtrace: flight recorder: the last ([0-9]+) of ([0-9]+) events, oldest first:$/\2/p' "$err")
	lines=$(sed -n '/^vmmtrace: flight recorder: the last/,/^vmmtrace: flight recorder: vCPU/p' "$err" | grep -c '^ .*[0-9]\.[0-9]\{6\}: ')
	check "$name: the recorder kept its last ${kept:-?} of ${seen:-?} events and printed them all ($lines)" \
		eval "[ -n '$kept' ] && [ '$kept' -gt 0 ] && [ '$kept' -le '$seen' ] && [ '$lines' = '$kept' ]"
	check "$name: then vCPU 0's registers, its PC symbolised" eval \
		"grep -qE '^vmmtrace: flight recorder: vCPU 0 at [a-z_0-9.]+\\+0x[0-9a-f]+:$' '$err' &&
		 grep -qE '^$pcreg: ffffff[0-9a-f]{10} ' '$err' && grep -qE '$more' '$err'"
	sed -n '/^vmmtrace: flight recorder: the last/,$p' "$err" | tail -n 8 | sed 's/^/INFO: /'
}

# The last function event the recorder printed.
last_function() { sed -n '/^vmmtrace: flight recorder: the last/,/^vmmtrace: flight recorder: vCPU/p' "$1" |
	sed -nE 's/.*[0-9]+\.[0-9]{6}: ([^ (]+)(\([^<]*\))? <-([^ ]+)$/\1 <-\3/p' | tail -n 1; }
