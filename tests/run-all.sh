#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs the test tiers (unit, images, interop, qemu, kvm, kvm-arm64, san, or those
# named; the long e2e tier only when named; docs/TESTING.md says what each
# needs and costs) and counts the
# PASS:/FAIL:/SKIP: lines every test prints. A test that exits non-zero
# without printing FAIL counts as one failure. Ends with "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tiers=${*:-unit images interop qemu kvm kvm-arm64 san}
# The "san" and "san-long" tiers run programs built with
# SAN=address,undefined into build/san (make check builds it); any report
# stops the program, so it fails the test.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
logdir=build/test-logs
mkdir -p "$logdir"
passed=0 failed=0 skipped=0
for tier in $tiers; do
	case $tier in
	# The unit, images and qemu tiers' programs (the gdbstub client, QEMU's
	# process, the device tree: ~1 min), and the KVM host's code where it
	# is quick to reach under the sanitizers: the payload guests (every
	# path of the ring, the hand-off, live attach with its control socket,
	# RCU tables and patching, NMIs, a hostile guest), bad input, a clean
	# stop on 2 vCPUs, and a lean boot checked against QEMU
	# (trace-reference.sh: every slot with tiny rings). The KVM tests with
	# long boots (events, flight, lost, examples, attach-stress...) run
	# sanitized in "tests/run-all.sh san-long", outside make check's time.
	san) list="build/san/tests/unit/test-* build/san/tests/images/test-* build/san/tests/qemu/test-*
		tests/kvm/payload-*.sh tests/kvm/bad-input.sh tests/kvm/hooks.sh tests/kvm/sandbox.sh tests/kvm/stop-clean.sh
		tests/e2e/trace-reference.sh" ;;
	# (setup-job.sh runs scripts/setup.sh, which builds and runs the plain binary.)
	san-long) list="$(ls tests/kvm/*.sh | grep -vE '/(payload-[a-z-]+|bad-input|hooks|sandbox|stop-clean|setup-job)\.sh$')
		tests/e2e/attach-stress.sh" ;;
	# The long tier (make check-long, about 90 minutes with KVM): stock
	# kernels on KVM, the stress tests, exact counts, NMIs, tasks and call
	# graphs on KVM's full boots, 4 vCPUs, the stock arm64 kernel's --graph
	# '*' under QEMU. make check keeps a test of every feature, on the KVM
	# path too (docs/TESTING.md); these go further.
	e2e) list="$(ls tests/e2e/*.sh)" ;;
	*) list="build/tests/$tier/test-* tests/$tier/*.sh" ;;
	esac
	for t in $list; do
		[ -x "$t" ] || [ -f "$t" ] || continue
		case "$t" in *.d|*.o) continue ;; esac
		name=$tier/$(basename "$t")
		[ "${tier%-long}" != san ] || name=san/$(basename "$(dirname "$t")")/$(basename "$t")
		log=$logdir/${name//\//_}.log
		start=$(date +%s)
		echo "== $name"
		if [ "${tier%-long}" = san ] && [ "${t##*.}" = sh ]; then
			# 150 attach/detach cycles (attach-stress.sh's default is 200) under the sanitizers.
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
