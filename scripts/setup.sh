#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The first command on a fresh Debian 12 machine: installs what the first
# trace needs (the packages to build vmmtrace and the lean test kernel),
# builds vmmtrace, the lean x86_64 kernel and its initramfs, and runs the
# default job on them. Everything else the tests need (the other guests,
# the cross tools, the oracles) comes with `make check`
# (scripts/prepare-tests.sh). Safe to run again: every step is cached or
# incremental, so a second run costs little more than the job.
#
#   scripts/setup.sh            everything, then the default job
#   scripts/setup.sh --no-job   everything but the job
#
# SETUP_APT_UPDATE=1 forces apt-get update; VMMTRACE_CACHE moves the cache.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
. "$here/prepare-tests.sh"

run_job=1
case "${1:-}" in
"") ;;
--no-job) run_job=0 ;;
-h|--help) sed -n '3,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
*) die "unknown option '$1' (try --help)" ;;
esac

# step NAME COMMAND...: runs a step, then says how long it took.
step() {
	local name=$1 start rc=0
	shift
	start=$(date +%s)
	say "== $name"
	"$@" || rc=$?
	say "   $name: $(( $(date +%s) - start )) s$([ "$rc" = 0 ] || echo ", failed (status $rc)")"
	return "$rc"
}

# setup_packages PACKAGE...: installs those of them that are missing.
setup_packages() {
	PREP_PACKAGES=("$@")
	if ! prep_find_root; then
		local missing
		missing=$(prep_missing_packages | tr '\n' ' ')
		[ -z "$missing" ] && return 0
		die "need root or sudo to install packages: $missing"
	fi
	prep_install_packages
}

setup_build() {
	make -C "$top" -s -j"$(nproc)" build/vmmtrace
}

# The default job: what setup.sh exists to get to, vmmtrace's main job on
# the lean test kernel: a trace of the boot phases from start_kernel, before
# the guest's own ftrace exists, to kernel_init, where the kernel leaves
# its boot CPU's early set-up for the initcalls and user space (--stop-at):
# the trace on stdout, the console on stderr. Its exit status is
# setup.sh's. It stops there because on a host whose KVM emulates guest
# kernel code (this project's machines) the boot to kernel_init takes
# about 30 s and the initcalls and user space two more minutes; on
# hardware KVM the whole boot takes a second. Where /dev/kvm does not open,
# vmmtrace runs the same job under QEMU (TCG), the second host: the same
# kernel, initramfs and trace.
SETUP_JOB_TIMEOUT=${SETUP_JOB_TIMEOUT:-1200}
setup_default_job() {
	local cmd=("$top/build/vmmtrace" boot "$VMMTRACE_CACHE/lean/bzImage" --initrd "$VMMTRACE_CACHE/initramfs.cpio"
		--trace start_kernel --trace setup_arch --trace trap_init --trace sched_init --trace rest_init
		--stop-at kernel_init)
	local rc=0

	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		say "no usable /dev/kvm here: vmmtrace runs the default job under QEMU (--host qemu)"
	fi
	say "default job: ${cmd[*]}"
	say "(guest kernel code may be emulated on this host: expect about half a minute)"
	# A hang must not block forever: after the timeout vmmtrace gets SIGINT.
	timeout --foreground -s INT "$SETUP_JOB_TIMEOUT" "${cmd[@]}" </dev/null || rc=$?
	case $rc in
	0) say "default job done: the guest ran to kernel_init (--stop-at); its trace is above" ;;
	130) say "default job stopped (interrupted or over ${SETUP_JOB_TIMEOUT} s)" ;;
	*) say "default job failed with exit status $rc (see README.md, 'Exit status')" ;;
	esac
	return "$rc"
}

# The lean kernel and its initramfs build in the background (its own
# process group, so that a failure elsewhere stops all of it) while the
# rest of the packages install and vmmtrace builds; its lines are shown
# on stderr when it is done (stdout is the default job's trace).
kernel_pid='' kernel_log='' kernel_start=0
setup_kernel_start() {
	kernel_log=$(mktemp "${TMPDIR:-/tmp}/vmmtrace-setup-kernel.XXXXXX")
	kernel_start=$(date +%s)
	say "== the lean x86_64 test kernel (linux-source-6.1; 3 to 5 minutes on 2 cores the first time) and its" \
		"initramfs: building in the background"
	set -m
	prep_first_guest >"$kernel_log" 2>&1 </dev/null &
	kernel_pid=$!
	set +m
}
setup_kernel_wait() {
	local rc=0
	wait "$kernel_pid" || rc=$?
	kernel_pid=''
	# Its own lines (what it did and how long it took); all of the end when it failed.
	if [ "$rc" = 0 ]; then
		grep '^vmmtrace-setup: ' "$kernel_log" | sed 's/^/   | /' >&2 || true
	else
		tail -n 40 "$kernel_log" | sed 's/^/   | /' >&2
	fi
	rm -f "$kernel_log"
	say "   the lean kernel and its initramfs: $(( $(date +%s) - kernel_start )) s since they began$(
		[ "$rc" = 0 ] || echo ", failed (status $rc)")"
	return "$rc"
}
setup_cleanup() {
	[ -z "$kernel_pid" ] || kill -TERM -- "-$kernel_pid" 2>/dev/null || true
	[ -z "$kernel_log" ] || rm -f "$kernel_log"
}
trap setup_cleanup EXIT

setup_start=$(date +%s)
step "packages: the ${#SETUP_KERNEL_PACKAGES[@]} the lean kernel's build needs (apt)" \
	setup_packages "${SETUP_KERNEL_PACKAGES[@]}"
setup_kernel_start
step "packages: the other $(( ${#SETUP_PACKAGES[@]} - ${#SETUP_KERNEL_PACKAGES[@]} )) the first trace needs (apt), while the kernel builds" \
	setup_packages "${SETUP_PACKAGES[@]}"
step "vmmtrace, while the kernel builds" setup_build
say "== waiting for the lean kernel"
setup_kernel_wait
say "setup complete in $(( $(date +%s) - setup_start )) s (cache: $VMMTRACE_CACHE); the tests: make check"
if [ "$run_job" = 1 ]; then
	step "the default job" setup_default_job
fi
