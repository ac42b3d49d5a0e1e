#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --graph and --retval (issue 14, part 3; docs/TRACING.md "Call graphs"):
# one boot of the lean kernel on 2 vCPUs, its calls printed as the
# function_graph tracer prints them, and a live attach with --graph whose
# window ends while calls are in flight. The guest runs syscall-loop (two
# sysloop workers calling getpriority), arg-calls (argcall: system calls
# whose return values it prints), waits for the host, then runs
# syscall-loop again after the detach. Checked:
#  - the boot ends normally (status 0, every guest step passed, no oops, no
#    WARNING): returns hooked from the first call of start_kernel on, across
#    the ftrace_init hand-off (start_kernel is still running then), into
#    ret_from_fork (kernel_init) and on both CPUs, come back right;
#  - every block that opens closes at the same depth in the same task (the
#    separators say which task a CPU runs), named when it closes on another
#    CPU; what stays open is listed as still running, and start_kernel is;
#  - durations are never negative and contain their children's;
#  - exactly one getpriority return per call the guest made;
#  - --retval: the values argcall printed (77 and -22 from dup3, 0 and -9
#    from close, 20 from getpriority) are the returns of those handlers;
#  - the attach window's blocks close or are listed as still running at the
#    detach, and the calls still in flight then return without harm (the
#    second syscall-loop passes);
#  - on the QEMU host only, a second boot with --graph --trace '*' and
#    syscall-loop on both vCPUs (graph_star in tests/lib.sh): every block
#    closed or listed, the summary's events the graph's;
#  - on the QEMU host only, a third with 150 tasks asleep in
#    hrtimer_nanosleep at once (graph_sleepers): they share the shadow
#    stacks' first tables and claim others further on, every call closes
#    after its 3 s, no return goes unrecorded.
# GRAPH_HOST=qemu runs it all on the QEMU host (tests/qemu/graph-qemu.sh),
# GRAPH_ARCH=arm64 on the lean arm64 kernel there (graph-arm64-qemu.sh),
# GRAPH_ARCH=arm64-nopad on it without padding below _etext.
. "$(dirname "$0")/../lib.sh"
HOST=${GRAPH_HOST:-kvm}
case ${GRAPH_ARCH:-x86_64} in
x86_64) IMAGE=$LEAN_BZIMAGE BTF=$LEAN_DIR/vmlinux.btf INITRD=$INITRAMFS SYS=__x64_sys_ ;;
arm64) IMAGE=$VMMTRACE_CACHE/lean-arm64/Image BTF=$VMMTRACE_CACHE/lean-arm64/vmlinux.btf INITRD=$INITRAMFS_ARM64
	SYS=__arm64_sys_ ;;
# No padding below _etext (scripts/prepare-tests.sh): the stub and its return hook in _end's guard page.
arm64-nopad) IMAGE=$VMMTRACE_CACHE/lean-arm64-nopad/Image BTF=$VMMTRACE_CACHE/lean-arm64/vmlinux.btf
	INITRD=$INITRAMFS_ARM64 SYS=__arm64_sys_ ;;
*) fail "GRAPH_ARCH: x86_64, arm64 or arm64-nopad, not $GRAPH_ARCH"; finish ;;
esac
require_file "$VMMTRACE"
require_file "$IMAGE"
require_file "$BTF"
require_file "$INITRD"
[ "$HOST" = qemu ] || require_kvm

LOOPS=20
ROUNDS=$LOOPS	# argcall's rounds: vmmtrace.loops too
SOCK=$TMPD/sock
funcs="start_kernel setup_arch trap_init sched_init rest_init kernel_init ${SYS}getpriority
	${SYS}dup3 ksys_dup3 ${SYS}close close_fd find_task_by_vpid run_timer_softirq"
args=(--graph --retval)
for f in $funcs; do args+=(--trace "$f"); done
mkfifo "$TMPD/in"
start=$(date +%s)
timeout -k 10 600 "$VMMTRACE" boot "$IMAGE" --host "$HOST" --initrd "$INITRD" --cpus 2 "${args[@]}" \
	--control "$SOCK" -o "$TMPD/graph.txt" --console "$TMPD/console" \
	--cmdline "vmmtrace.steps=syscall-loop,arg-calls,wait-host,syscall-loop vmmtrace.loops=$LOOPS vmmtrace.loop_cpus=2" \
	<"$TMPD/in" 2>"$TMPD/err" &
vt=$!
exec 3>"$TMPD/in"
if wait_line "$TMPD/console" '^VMMTRACE-STEP wait-host: ready=1' 400 "$vt"; then
	# Tasks sleep inside schedule(): some calls are in flight when the window ends.
	"$VMMTRACE" attach "$SOCK" --graph --retval --trace schedule --trace run_timer_softirq \
		--trace 'schedule_timeout*' --duration 3 -o "$TMPD/window.txt" 2>"$TMPD/attach.err"
	check "attach --graph: the window ends with status 0 (got $?)" [ $? = 0 ]
	echo go >&3
else
	fail "the guest never reached wait-host (console ends: $(tail -n1 "$TMPD/console"))"
fi
wait "$vt"
rc=$?
exec 3>&-
echo "INFO: boot took $(($(date +%s) - start)) s"
check "boot: status 0 (got $rc)" [ "$rc" = 0 ]
check "boot: both syscall loops and arg-calls passed" \
	eval "[ \$(grep -c '^VMMTRACE-RESULT syscall-loop PASS 2 workers' '$TMPD/console') = 2 ] &&
	      grep -q '^VMMTRACE-RESULT arg-calls PASS' '$TMPD/console'"
check "boot: every guest step passed" grep -q '^VMMTRACE-INIT: done passed=[0-9]* failed=0' "$TMPD/console"
bad=$(grep -cE 'Oops|WARNING:|BUG:|invalid opcode|general protection|Call Trace' "$TMPD/console")
check "boot: no oops, no WARNING, no BUG on the console ($bad lines)" [ "$bad" = 0 ]
check "boot: the trace is the function_graph layout" \
	eval "head -1 '$TMPD/graph.txt' | grep -qx '# tracer: function_graph'"

graph_boot_checks "$TMPD/graph.txt"

# getpriority: the loops' calls (2 workers x LOOPS, twice) and argcall's (one a round).
want=$((2 * 2 * LOOPS + ROUNDS))
got=$(grep -cE "${SYS}getpriority\\(\\); /\\* = 0x14 \\*/\$|\\} /\\* ${SYS}getpriority = 0x14 \\*/\$" "$TMPD/graph.txt")
all=$(grep -cE "${SYS}getpriority\\(\\);|\\} /\\* ${SYS}getpriority " "$TMPD/graph.txt")
check "getpriority: $want returns, each 20 (got $got of $all)" eval "[ $got = $want ] && [ $all = $want ]"

# --retval against what argcall printed of its last round.
line=$(grep -m1 '^VMMTRACE-STEP arg-calls:' "$TMPD/console" | tr -d '\r')
echo "INFO: guest: ${line#VMMTRACE-STEP }"
val() { sed -nE "s/.* $1=(-?[0-9]+).*/\\1/p" <<<"$line"; }
fmt() { if [ "$1" -lt 0 ]; then echo "$1"; else printf '0x%x' "$1"; fi; }
# Only argcall dups to fd 77 or with bad flags; the shell closes fds too;
# argcall's getpriority (with its own pid) is the one with a block.
for pair in "${SYS}dup3 dup3 =" "${SYS}dup3 dup3_bad =" "${SYS}close close -ge" "${SYS}close close_bad -ge" \
	"${SYS}getpriority getpriority -ge"; do
	set -- $pair
	v=$(val "$2")
	n=$(grep -cE "\} /\* $1 = $(fmt "${v:-x}") \*/\$" "$TMPD/graph.txt")
	check "--retval: $1 returned $(fmt "${v:-x}") as argcall's $2 did, in each of its $ROUNDS rounds (got $n)" \
		eval "[ -n '$v' ] && [ $n $3 $ROUNDS ]"
done
check "--retval: argcall's fd 77 came from ksys_dup3 (= 0x4d) under ${SYS}dup3" \
	eval "[ \$(grep -cE '^ [01]\) .{14}\|    ksys_dup3\(\); /\* = 0x4d \*/\$' '$TMPD/graph.txt') -ge $ROUNDS ]"

# The attach window.
graph_check "$TMPD/window.txt" >"$TMPD/wcheck.out"
wstats=$(tail -n 1 "$TMPD/wcheck.out")
wproblems=$(($(wc -l <"$TMPD/wcheck.out") - 1))
tail -n 5 "$TMPD/wcheck.out" | sed 's/^/INFO: window: /'
check "attach --graph: the window is the function_graph layout, blocks close or are listed ($wstats; $wproblems problems)" \
	eval "head -1 '$TMPD/window.txt' | grep -qx '# tracer: function_graph' && [ $wproblems = 0 ] &&
	      [[ '$wstats' =~ blocks=[1-9] ]]"
check "attach --graph: calls were in flight at the detach" \
	eval "[[ '$wstats' =~ open=[1-9] ]]"
check "boot: the returns of calls in flight at the detach reached the stub after it (not written)" \
	grep -qE '^vmmtrace: trace: [0-9]+ events arrived for slots no client held' "$TMPD/err"

# Stress, on the QEMU host only (on this machine's KVM the tick's handler
# then outlasts the tick: docs/TRACING.md): --graph --trace '*' with
# syscall-loop on both vCPUs.
[ "$HOST" != qemu ] || graph_star "$IMAGE" "$INITRD" \
	"vmmtrace.steps=syscall-loop vmmtrace.loops=$LOOPS vmmtrace.loop_cpus=2" '^VMMTRACE-RESULT syscall-loop PASS 2 workers'
# Many tasks inside hooked calls at once, on the QEMU host only (150 forks).
[ "$HOST" != qemu ] || graph_sleepers "$IMAGE" "$INITRD" "vmmtrace.steps=sleepers vmmtrace.sleep_secs=3" \
	'^VMMTRACE-RESULT sleepers PASS 150'
finish
