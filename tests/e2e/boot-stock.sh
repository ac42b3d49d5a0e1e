#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debian's stock kernel (what users run) on one vCPU and 1 GiB, with the test
# initramfs: it must get through smp_init and kernel_init to the point where
# it starts /init. On this project's hosts the stock kernel's user space
# cannot run (HOST-KVM.md §4: SYSCALL from user mode is broken), so the test
# stops there: as soon as the kernel announces /init it sends SIGTERM, which
# also tests vmmtrace's clean shutdown on a signal (exit status 128+15,
# console flushed, no crash). The boot traces four functions across the
# guest's hand-over to its own ftrace (start_kernel setup_arch trap_init
# before ftrace_init, sched_init after): exactly those four events, in that
# order, and once the guest frees its init text no slot is held any more
# (all four are __init). trace-stock.sh traces every function.
# It also runs --handshake (docs/VM-EVENTS.md), so the trace holds the
# kvm:msr and kvm:cpuid events: the guest's kvm-clock write (MSR
# 0x4b564d01) has the enable bit and a GPA inside guest RAM, is made from
# kvmclock.c (kvm_register_clock; the lean kernel inlines it into
# kvmclock_init) during setup_arch, goes through KVM (the guest still
# switches to kvm-clock), and the table agrees with the events. Budget: STOCK_BUDGET seconds (default 1800: a hang fails, a slow shared
# machine does not; CI took 593 s, this machine 4-10 min).
#
# Speed: guest kernel code is emulated here, and three initcalls that do
# nothing a VMM takes part in cost most of this kernel's boot (measured with
# initcall_debug, guest seconds on a loaded 2-CPU host, 793 s to /init):
# creating the tracefs event directories (tracer_init_tracefs's work, which
# init_kprobe_trace waits for: 215 s), parsing the vmlinux BTF to register
# tcp_cubic's kfuncs (cubictcp_register: 178 s) and /sys/kernel/slab
# (slab_sysfs_init: 68 s). They are blacklisted, like the compat layer's own
# speed-only options; STOCK_FULL=1 boots without that.
. "$(dirname "$0")/../lib.sh"
require_kvm
require_file "$VMMTRACE"
require_file "$STOCK_BZIMAGE"
require_file "$INITRAMFS"
budget=${STOCK_BUDGET:-1800}
out=$TMPD/console err=$TMPD/stderr fifo=$TMPD/stdout
INIT_MARK='Run /init as init process'
speedup=initcall_blacklist=tracer_init_tracefs,cubictcp_register,slab_sysfs_init
[ "${STOCK_FULL:-0}" = 1 ] && speedup=
FREE_MARK='Freeing unused kernel image'
mkfifo "$fifo"

start=$(date +%s)
"$VMMTRACE" boot "$STOCK_BZIMAGE" --initrd "$INITRAMFS" --cpus 1 --mem 1G \
	--trace start_kernel --trace setup_arch --trace trap_init --trace sched_init -o "$TMPD/four.trace" --handshake --args \
	--cmdline "vmmtrace.steps=cpus,uname $speedup panic=0" </dev/null >"$fifo" 2>"$err" &
pid=$!
# Over budget: SIGINT, and SIGKILL should even that not stop it.
(
	trap 'kill "$nap" 2>/dev/null; exit 0' TERM
	sleep "$budget" & nap=$!; wait "$nap"; kill -INT "$pid"
	sleep 30 & nap=$!; wait "$nap"; kill -KILL "$pid"
) 2>/dev/null &
watchdog=$!

smp_at='' free_at='' init_at='' term_at='' cpu_s=''
# CPU seconds a process has used: on a shared machine, how much of the wall
# time the guest actually ran.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null; }
# Reads the console as it comes, so that SIGTERM follows the marker at once:
# the stock kernel panics soon after it starts /init here. panic=0 (the last
# panic= wins over the compat default -1) makes that panic wait instead of
# resetting, so the SIGTERM always meets a running guest.
while IFS= read -r line; do
	line=${line%$'\r'}
	printf '%s\n' "$line" >>"$out"
	now=$(( $(date +%s) - start ))
	case $line in
	*"smp: Brought up"*) smp_at=${smp_at:-$now} ;;
	*"$FREE_MARK"*) free_at=${free_at:-$now} ;;
	*"$INIT_MARK"*)
		if [ -z "$init_at" ]; then
			init_at=$now
			cpu_s=$(cpu_seconds "$pid")
			kill -TERM "$pid"
			term_at=$(date +%s)
		fi
		;;
	esac
done <"$fifo"
wait "$pid"
rc=$?
stop_s=$(( $(date +%s) - ${term_at:-$(date +%s)} ))
kill "$watchdog" 2>/dev/null
wait "$watchdog" 2>/dev/null

echo "INFO: stock kernel: smp_init done after ${smp_at:--} s, $FREE_MARK after ${free_at:--} s"
if [ -n "$init_at" ]; then
	echo "INFO: stock kernel reached /init after $init_at s (vmmtrace used ${cpu_s:-?} s of CPU${speedup:+; $speedup}); vmmtrace stopped ${stop_s} s after SIGTERM, status $rc"
else
	echo "INFO: stock kernel did not reach /init within ${budget} s (status $rc, load average $(cut -d' ' -f1-3 /proc/loadavg)); its last line: $(tail -n 1 "$out")"
fi
grep -E 'Linux version|Brought up|Freeing unused|Run /init|Kernel panic' "$out" | sed 's/^/    console: /'
sed 's/^/    stderr: /' "$err"

check "stdout carries the stock kernel's console" grep -q '^\[ *0\.000000\] Linux version .*-amd64' "$out"
check "smp_init brought up the CPU (smp: Brought up)" grep -q 'smp: Brought up 1 node, 1 CPU' "$out"
check "kernel_init freed the init memory ($FREE_MARK)" grep -q "$FREE_MARK" "$out"
check "the kernel started /init ($INIT_MARK) within ${budget} s" [ -n "$init_at" ]
check "SIGTERM then stops vmmtrace with exit status 143 (status $rc)" [ "$rc" = 143 ]
stopped_fast() { [ -n "$term_at" ] && [ "$stop_s" -le 10 ]; }
check "... within 10 s" stopped_fast
check "... saying why on stderr" grep -q '^vmmtrace: stopped by Terminated' "$err"
check "... and the trace's summary and the handshake table, nothing else: no error, no crash report" \
	[ "$(grep -vEc '^vmmtrace: trace: [0-9]* (VM )?events|^vmmtrace: handshake: |^  ' "$err")" = 1 ]

got=$(trace_funcs "$TMPD/four.trace" | sed 's/(.*//' | tr '\n' ' ')
echo "INFO: four functions traced: $got"
check "events: exactly start_kernel setup_arch trap_init sched_init, in that order, once each" \
	[ "$got" = "start_kernel setup_arch trap_init sched_init " ]
check "the trace has ftrace's header" grep -q '^# tracer: function' "$TMPD/four.trace"
# Task and context (docs/TASKS.md), from the image's own .BTF: the boot task,
# interrupts off, preempt depth 1 (a PREEMPT_COUNT kernel starts with
# INIT_PREEMPT_COUNT; start_kernel enables preemption only in rest_init).
ctx=$(trace_events "$TMPD/four.trace" | grep -E ': (start_kernel|setup_arch|trap_init|sched_init)\(' | awk '{ print $1, $3 }')
echo "INFO: task and flags of the four: $(tr '\n' ';' <<<"$ctx")"
check "the four run as swapper/0-0, irqs off, preempt depth 1 (d?.1.)" \
	[ "$(grep -cE '^swapper/0-0 d.\.1\.$' <<<"$ctx")" = 4 ]

# --args from the image's own .BTF: setup_arch(char **cmdline_p) gets a
# pointer into the kernel image; the other three take no parameters.
sa=$(trace_events "$TMPD/four.trace" | grep -m1 ': setup_arch(')
echo "INFO: ${sa##*: }"
check "--args: setup_arch(cmdline_p=0xffffffff........) <-start_kernel, named from the image's .BTF" \
	eval "[[ '$sa' =~ :\ setup_arch\(cmdline_p=0xffffffff[0-9a-f]{8}\)\ \<-start_kernel$ ]]"
check "--args: start_kernel(), trap_init(), sched_init(): no parameters" \
	[ "$(trace_events "$TMPD/four.trace" | grep -cE ': (start_kernel|trap_init|sched_init)\(\) <-')" = 3 ]

# The KVM handshake of the stock kernel.
line=$(kvmclock_write "$TMPD/four.trace")
val=$(msr_value "$line")
echo "INFO: ${line:-no write of 4b564d01}"
check "kvm:msr: the stock guest writes MSR_KVM_SYSTEM_TIME_NEW with the enable bit, a GPA in its 1 GiB ($val)" \
	kvmclock_value_ok "$val" $((1 << 30))
check "kvm:msr: ... from a function of kvmclock.c (kvm_register_clock), during setup_arch" \
	eval "case '$line' in *'<-kvm_register_clock]'|*'<-kvmclock_init]') true ;; *) false ;; esac &&
	      head -n '${line%%:*}' '$TMPD/four.trace' | grep -qE ' setup_arch(\(.*\))? <-start_kernel' &&
	      tail -n +'${line%%:*}' '$TMPD/four.trace' | grep -qE ' trap_init(\(\))? <-start_kernel'"
check "kvm:msr: the write went through KVM: the guest switched to kvm-clock" \
	grep -q 'clocksource: Switched to clocksource kvm-clock' "$out"
handshake_rows "$err" >"$TMPD/hs.txt"
sed 's/^/    handshake: /' "$TMPD/hs.txt"
n=$(grep -c ' [0-9]*/[0-9]* CPUs ' "$TMPD/hs.txt")
bad=$(handshake_disagree "$TMPD/hs.txt" "$TMPD/four.trace")
check "handshake: $n enabled rows, each first write in the trace; no row said off was on ($bad disagree)" \
	eval "[ '$n' -ge 4 ] && [ '$bad' = 0 ]"
check "handshake: kvm-clock enabled from kvmclock.c, as the console's 'kvm-clock: Using msrs 4b564d01' says" \
	eval "grep -qE '^  kvm-clock +yes +4b564d01 +1/1 CPUs .* (kvm_register_clock|kvmclock_init) +pvclock area at GPA ' '$TMPD/hs.txt' &&
	      grep -q 'kvm-clock: Using msrs 4b564d01 and 4b564d00' '$out'"
check "the parents are symbolised (setup_arch <-start_kernel)" \
	grep -qE ': setup_arch(\([^)]*\))? <-start_kernel$' "$TMPD/four.trace"
set -- $(trace_summary "$err") - - - - - - - - -
echo "INFO: summary: events=$1 before=$2 after=$3 slots=$4 doorbells=$5 dropped=$6 mode=$9"
check "summary: 4 events, 3 before ftrace_init and 1 after (the hand-over)" [ "$1 $2 $3" = "4 3 1" ]
check "summary: no slot held after the guest freed its init text, 0 dropped, mode lossless" \
	[ "$4 $6 $9" = "0 0 lossless" ]
check "the guest finished ftrace_init while traced (no hand-over warning)" \
	eval "! grep -q 'did not finish ftrace_init' '$err'"
check "no slot was in a foreign state at the hand-over" eval "! grep -q 'foreign state' '$err'"
finish
