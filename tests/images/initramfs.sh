#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The test initramfs: builds it into a private cache, checks its listing and
# its caching, smoke-tests /init's steps and sysloop on the host (the real
# boot is an end-to-end test), and checks make-names-initrd.sh.
. "$(dirname "$0")/../lib.sh"
BUSYBOX=${BUSYBOX:-/bin/busybox}
[ -x "$BUSYBOX" ] || { fail "initramfs: $BUSYBOX missing (apt-get install busybox-static)"; finish; }
cache=$TMPD/cache
build() { VMMTRACE_CACHE=$cache "$TOP/scripts/build-initramfs.sh" 2>&1; }

out=$(build)
check "build-initramfs.sh builds an initramfs" test -f "$cache/initramfs.cpio"
[ -f "$cache/initramfs.cpio" ] || { echo "$out"; finish; }
cpio_file=$(readlink -f "$cache/initramfs.cpio")
check "initramfs.cpio links to a hash-named archive" \
	bash -c '[[ $(readlink "$1") =~ ^initramfs-[0-9a-f]{16}\.cpio$ ]]' - "$cache/initramfs.cpio"
check "archive length is a multiple of 4 (a second archive can follow)" \
	test $(($(stat -c %s "$cpio_file") % 4)) = 0

cpio -itv --quiet <"$cpio_file" >"$TMPD/list" 2>"$TMPD/list.err"
check "cpio lists the archive without errors" test ! -s "$TMPD/list.err"
# has MODE-PATTERN NAME [SUFFIX]: a listing line with that mode and name.
has() {
	awk -v m="$1" -v n="$2" -v s="${3:-}" \
		'$1 ~ "^" m && $NF == (s == "" ? n : s) && (s == "" || $(NF - 2) == n) { f = 1 } END { exit !f }' \
		"$TMPD/list"
}
check "listing has /init (executable file)" has '-rwxr-xr-x' init
check "listing has /bin/busybox" has '-rwxr-xr-x' bin/busybox
check "listing has /bin/sysloop" has '-rwxr-xr-x' bin/sysloop
check "listing has /bin/sh -> busybox" has 'l' bin/sh busybox
for d in bin dev proc sys tmp; do check "listing has directory /$d" has d "$d"; done
check "listing has /dev/console, char 5,1" \
	awk '$1 ~ /^c/ && $NF == "dev/console" && $5 == "5," && $6 == "1" { f = 1 } END { exit !f }' "$TMPD/list"
check "every entry is owned by root" awk '$3 != "root" || $4 != "root" { bad = 1 } END { exit bad }' "$TMPD/list"

mkdir -p "$TMPD/root"
(cd "$TMPD/root" && cpio -id --quiet --no-absolute-filenames init bin/sysloop bin/vecstate bin/sigxstate <"$cpio_file")
check "/init in the archive is tests/guest/init" cmp -s "$TMPD/root/init" "$TOP/tests/guest/init"
check "/init passes sh -n" "$BUSYBOX" sh -n "$TMPD/root/init"
sysloop=$TMPD/root/bin/sysloop
check "sysloop is static (no ELF interpreter)" bash -c '! readelf -lW "$1" | grep -q INTERP' - "$sysloop"
check "sysloop is an x86_64 executable" bash -c 'readelf -hW "$1" | grep -q "Machine:.*X86-64"' - "$sysloop"
check "sysloop 100 prints its calls" bash -c '"$1" 100 | grep -qE "^SYSLOOP cpu=[0-9]+ calls=100 ns=[0-9]+ pid=[0-9]+$"' - "$sysloop"
check "sysloop without a count fails" bash -c '! "$1" 2>/dev/null' - "$sysloop"

again=$(build)
check "a second build is a cache hit" bash -c '[[ $1 == *cached* ]]' - "$again"
check "a cache hit keeps the archive" test "$(readlink -f "$cache/initramfs.cpio")" = "$cpio_file"
# A changed input (here busybox) gives a new archive and drops the old one.
cp "$BUSYBOX" "$TMPD/busybox" && echo >>"$TMPD/busybox"
BUSYBOX=$TMPD/busybox build >/dev/null
new=$(readlink -f "$cache/initramfs.cpio")
check "a changed input rebuilds" test "$new" != "$cpio_file"
check "the stale archive is removed" test ! -e "$cpio_file"

# --- /init on the host, through busybox like in the guest -------------------
mkdir -p "$TMPD/bb"
for a in awk nproc uname taskset rm dmesg cat; do ln -s "$BUSYBOX" "$TMPD/bb/$a"; done
run_init() {	# CMDLINE: runs /init's steps in host mode, output in $TMPD/init.out
	env -i PATH="$TMPD/bb" TMPDIR="$TMPD" VMMTRACE_INIT_HOST=1 VMMTRACE_CMDLINE="$1" \
		VMMTRACE_PROGS="$TMPD/root/bin" VMMTRACE_NAMES="$TMPD/names.txt" \
		VMMTRACE_KALLSYMS="$TMPD/kallsyms" "$BUSYBOX" sh "$TOP/tests/guest/init" >"$TMPD/init.out" 2>&1
}
out_has() { grep -qxF -- "$1" "$TMPD/init.out"; }
out_match() { grep -qxE -- "$1" "$TMPD/init.out"; }

ncpu=$(nproc)
run_init "console=ttyS0 vmmtrace.steps=cpus,uname,nosuch vmmtrace.expect_cpus=$ncpu"
check "init fails when a step fails" test $? != 0
check "init prints its start line" out_has "VMMTRACE-INIT: start"
check "init echoes its steps" out_has "VMMTRACE-INIT: steps=cpus,uname,nosuch"
check "cpus step reports online/nproc" out_match "VMMTRACE-STEP cpus: online=[0-9,-]+ possible=[0-9,?-]+ count=$ncpu nproc=$ncpu"
check "cpus step passes" out_has "VMMTRACE-RESULT cpus PASS $ncpu CPUs online"
check "uname step reports the release" out_has "VMMTRACE-STEP uname: release=$(uname -r) machine=$(uname -m)"
check "an unknown step fails" out_has "VMMTRACE-RESULT nosuch FAIL unknown step"
check "init prints its done line" out_has "VMMTRACE-INIT: done passed=2 failed=1"

run_init "vmmtrace.steps=cpus vmmtrace.expect_cpus=999"
check "cpus step fails on an unexpected count" out_has "VMMTRACE-RESULT cpus FAIL $ncpu CPUs online, expected 999"

run_init "vmmtrace.steps=syscall-loop vmmtrace.loops=300"
check "init passes when every step passes" test $? = 0
check "syscall-loop: one unpinned worker" \
	out_match "VMMTRACE-STEP syscall-loop: worker=0 pin=- cpu=[0-9]+ calls=300 ns=[0-9]+ status=0 pid=[0-9]+"
check "syscall-loop: summary line" out_has "VMMTRACE-STEP syscall-loop: syscall=getpriority loops=300 workers=1 total=300"
check "syscall-loop passes" out_has "VMMTRACE-RESULT syscall-loop PASS 1 workers x 300 calls"

if [ "$ncpu" -ge 2 ]; then
	run_init "vmmtrace.steps=syscall-loop vmmtrace.loops=200 vmmtrace.loop_cpus=2"
	check "syscall-loop: worker 1 pinned to CPU 1" \
		out_match "VMMTRACE-STEP syscall-loop: worker=1 pin=1 cpu=1 calls=200 ns=[0-9]+ status=0 pid=[0-9]+"
	check "syscall-loop: 2 pinned workers pass" out_has "VMMTRACE-RESULT syscall-loop PASS 2 workers x 200 calls"
fi
run_init "vmmtrace.steps=syscall-loop vmmtrace.loop_cpulist=0,0"
check "syscall-loop: loop_cpulist may repeat a CPU" out_has "VMMTRACE-RESULT syscall-loop PASS 2 workers x 1000 calls"
run_init "vmmtrace.steps=syscall-loop vmmtrace.loop_cpulist=4095"
check "syscall-loop fails on an absent CPU" out_match "VMMTRACE-RESULT syscall-loop FAIL .*worker 0.*"
run_init "vmmtrace.steps=syscall-loop vmmtrace.loops=12x"
check "syscall-loop rejects a bad count" out_has "VMMTRACE-RESULT syscall-loop FAIL bad vmmtrace.loops '12x'"

# vector-state on the host's own kernel: nothing lost, and it checks what
# this CPU lets user code use.
want=$(host_vector_level)
run_init "vmmtrace.steps=vector-state vmmtrace.vec_yields=200"
check "vector-state passes on the host, checking $want" \
	out_has "VMMTRACE-RESULT vector-state PASS 3 workers on CPU 0 x 200 yields, checked=$want"
check "vector-state: a line per worker, pinned to CPU 0" \
	test "$(grep -cE '^VMMTRACE-STEP vector-state: worker=[0-2] status=[03] pid=[0-9]+ cpu=0 ' "$TMPD/init.out")" = 3
run_init "vmmtrace.steps=vector-state vmmtrace.vec_workers=1"
check "vector-state needs two workers to switch between" \
	out_has "VMMTRACE-RESULT vector-state FAIL bad vmmtrace.vec_workers '1' (2 or more) or vec_yields '300'"
run_init "vmmtrace.steps=vector-state vmmtrace.vec_yields=x"
check "vector-state rejects a bad yield count" out_match "VMMTRACE-RESULT vector-state FAIL bad .*vec_yields 'x'"

run_init "vmmtrace.steps=sigframe"
if [ "$want" = none ]; then
	check "sigframe: nothing to check without AVX" out_has "VMMTRACE-RESULT sigframe PASS nothing to check: no AVX for user code"
else
	check "sigframe passes on the host: state kept, corrupt frame -> SIGSEGV" \
		out_has "VMMTRACE-RESULT sigframe PASS vector state kept across a handler; a corrupt frame ends the task with SIGSEGV"
	check "sigframe: what sigxstate said" \
		out_match "VMMTRACE-STEP sigframe: ok=0 bad=139 ok-said='SIGXSTATE ok kept=1 fresh=1' bad-said='[^']*'"
fi

# Nothing but sysloop may call getpriority, or traces of its handler would
# count more than the loop did: strace the whole init run.
if strace -f -o /dev/null true 2>/dev/null; then
	strace -f -qq -e trace=getpriority -o "$TMPD/strace" env -i PATH="$TMPD/bb" TMPDIR="$TMPD" \
		VMMTRACE_INIT_HOST=1 VMMTRACE_PROGS="$TMPD/root/bin" \
		VMMTRACE_CMDLINE="vmmtrace.steps=cpus,uname,syscall-loop vmmtrace.loops=77 vmmtrace.loop_cpulist=0,0" \
		"$BUSYBOX" sh "$TOP/tests/guest/init" >/dev/null 2>&1
	n=$(grep -c 'getpriority(' "$TMPD/strace")
	check "exactly 2 x 77 getpriority calls in the whole run (got $n)" test "$n" = 154
else
	echo "SKIP: strace cannot trace here; getpriority exclusivity not checked"
fi

cat >"$TMPD/kallsyms" <<'EOF'
ffffffff81000000 T startup_64
ffffffff81044a54 T __x64_sys_getpriority
ffffffff81100000 t dup_name
ffffffff81200000 t dup_name
ffffffffc0000000 t mod_fn	[some_module]
ffffffff81300000 T unrelated
EOF
printf 'startup_64\ndup_name\n\nmod_fn\n__x64_sys_getpriority\n' >"$TMPD/names.txt"
run_init "vmmtrace.steps=kallsyms"
check "kallsyms: prints KSYM lines in /proc/kallsyms order, duplicates included" \
	diff <(grep '^KSYM' "$TMPD/init.out") - <<'EOF'
KSYM ffffffff81000000 T startup_64
KSYM ffffffff81044a54 T __x64_sys_getpriority
KSYM ffffffff81100000 t dup_name
KSYM ffffffff81200000 t dup_name
KSYM ffffffffc0000000 t mod_fn [some_module]
EOF
check "kallsyms: summary line" out_has "VMMTRACE-STEP kallsyms: names=4 found=4 missing=0 lines=5 truncated=0 zero_addrs=0"
check "kallsyms passes" out_has "VMMTRACE-RESULT kallsyms PASS all names found"
echo nosuch >>"$TMPD/names.txt"
run_init "vmmtrace.steps=kallsyms vmmtrace.kallsyms_max=2"
check "kallsyms: output bounded by kallsyms_max" test "$(grep -c '^KSYM ' "$TMPD/init.out")" = 2
check "kallsyms: missing names listed" out_has "KSYM-MISSING nosuch"
check "kallsyms: missing names fail" out_has "VMMTRACE-RESULT kallsyms FAIL some names are not in $TMPD/kallsyms"
sed -i 's/^ffffffff81000000/0000000000000000/' "$TMPD/kallsyms"
run_init "vmmtrace.steps=kallsyms"
check "kallsyms: hidden (zero) addresses fail" \
	out_has "VMMTRACE-RESULT kallsyms FAIL $TMPD/kallsyms hides addresses (kptr_restrict)"
rm "$TMPD/names.txt"
run_init "vmmtrace.steps=kallsyms"
check "kallsyms: no names file fails" out_match "VMMTRACE-RESULT kallsyms FAIL no .*names.txt: .*"
run_init "vmmtrace.steps=ftrace-handoff"
check "ftrace-handoff refuses to touch the host's ftrace" \
	out_has "VMMTRACE-RESULT ftrace-handoff FAIL refused in host mode without VMMTRACE_TRACEFS"

# --- make-names-initrd.sh ---------------------------------------------------
printf 'start_kernel\nftrace_init\n' >"$TMPD/n.txt"
"$TOP/tests/guest/make-names-initrd.sh" "$TMPD/n.txt" "$TMPD/names.cpio"
check "make-names-initrd.sh makes an archive" test -s "$TMPD/names.cpio"
check "names archive lists test/ and test/names.txt" \
	diff <(cpio -it --quiet <"$TMPD/names.cpio") <(printf 'test\ntest/names.txt\n')
check "names archive holds the names file" \
	cmp -s <(cpio -i --quiet --to-stdout test/names.txt <"$TMPD/names.cpio") "$TMPD/n.txt"
check "names archive is owned by root" \
	bash -c '! cpio -itv --quiet <"$1" | awk "\$3 != \"root\"" | grep -q .' - "$TMPD/names.cpio"
check "names archive length is a multiple of 4" test $(($(stat -c %s "$TMPD/names.cpio") % 4)) = 0
check "make-names-initrd.sh rejects a missing names file" \
	bash -c '! "$1" "$2" "$3" 2>/dev/null' - "$TOP/tests/guest/make-names-initrd.sh" "$TMPD/absent" "$TMPD/x.cpio"
finish
