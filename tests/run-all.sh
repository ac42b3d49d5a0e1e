#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs the test tiers (unit, images, interop, qemu, kvm, san, e2e, or those
# named; docs/TESTING.md says what each needs) and counts the
# PASS:/FAIL:/SKIP: lines every test prints. A test that exits non-zero
# without printing FAIL counts as one failure. Ends with "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tiers=${*:-unit images interop qemu kvm san e2e}
# The "san" tier: the unit binaries, the KVM tests and two boots again, built
# with SAN=address,undefined into build/san (make check builds it); any
# report stops the program, so it fails the test.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
logdir=build/test-logs
mkdir -p "$logdir"
passed=0 failed=0 skipped=0
for tier in $tiers; do
	case $tier in
	# The qemu tier's programs too (the gdbstub client, QEMU's process, the
	# device tree: ~15 s). Two boots under the sanitizers: every slot with tiny rings (doorbells,
	# the hand-off) and live attach (control socket, RCU tables, patching).
	# Not again under them: formats.sh and examples.sh, whose host code (the
	# writers, report) the sanitized unit tests already run, tasks.sh,
	# whose host code (BTF, the task fields) every sanitized lean boot runs,
	# graph.sh, whose writer and record checks run sanitized as unit
	# tests, hosts-x86.sh, whose QEMU half the sanitized qemu programs
	# cover, as-hardware.sh, a plain lean boot with the W+X check on (the
	# sanitized lean boots run its host code), and answers.sh, whose chart
	# and diff run sanitized as unit tests; they would only cost seven more
	# boots (about 15 minutes).
	san) list="build/san/tests/unit/test-* build/san/tests/images/test-* build/san/tests/qemu/test-* $(ls tests/kvm/*.sh | grep -vE '/(formats|examples|tasks|graph|hosts-x86|as-hardware|answers)\.sh$')
		tests/e2e/trace-reference.sh tests/e2e/attach-stress.sh" ;;
	# attach-stress.sh on 2 vCPUs runs in the san tier only: the e2e tier
	# runs the same test on 4 vCPUs with the plain build.
	e2e) list="$(ls tests/e2e/*.sh | grep -v '/attach-stress\.sh$')" ;;
	*) list="build/tests/$tier/test-* tests/$tier/*.sh" ;;
	esac
	for t in $list; do
		[ -x "$t" ] || [ -f "$t" ] || continue
		case "$t" in *.d|*.o) continue ;; esac
		name=$tier/$(basename "$t")
		[ "$tier" != san ] || name=san/$(basename "$(dirname "$t")")/$(basename "$t")
		log=$logdir/${name//\//_}.log
		start=$(date +%s)
		echo "== $name"
		if [ "$tier" = san ] && [ "${t##*.}" = sh ]; then
			# 150 attach/detach cycles (attach-stress.sh's default is 200) keep the suite in its budget.
			VMMTRACE=$top/build/san/vmmtrace ATTACH_CYCLES=${ATTACH_CYCLES:-150} bash "$t" >"$log" 2>&1
		elif [ "${t##*.}" = sh ]; then bash "$t" >"$log" 2>&1; else "$t" >"$log" 2>&1; fi
		rc=$?
		if grep -qE '^(==[0-9]+==ERROR: [A-Za-z]+Sanitizer|.*: runtime error: )' "$log"; then
			echo "FAIL: $name: sanitizer report (see $log)" >>"$log"
		fi
		p=$(grep -c '^PASS:' "$log"); f=$(grep -c '^FAIL:' "$log"); s=$(grep -c '^SKIP:' "$log")
		if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ "$f" = 0 ]; then
			echo "FAIL: $name exited with status $rc" >>"$log"; f=1
		fi
		if [ "$rc" = 77 ] && [ "$s" = 0 ]; then
			echo "SKIP: $name" >>"$log"; s=1
		fi
		grep -E '^(FAIL|SKIP|INFO):' "$log" | sed 's/^/   /'
		[ "$f" = 0 ] || { echo "   --- last lines of $log:"; tail -n 15 "$log" | sed 's/^/   | /'; }
		echo "   $p passed, $f failed, $s skipped ($(( $(date +%s) - start )) s)"
		passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	done
done
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
