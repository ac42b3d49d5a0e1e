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

setup_packages() {
	PREP_PACKAGES=("${SETUP_PACKAGES[@]}")
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
# the lean test kernel: two vCPUs, the test /init's cpus and uname steps
# (docs/TEST-GUEST.md), and a trace of boot phases from start_kernel (before
# the guest's own ftrace exists) to uname(2) in user space: the trace on
# stdout, the console on stderr. Its exit status is setup.sh's. Where
# /dev/kvm does not open, vmmtrace runs the same job under QEMU (TCG), the
# second host: the same kernel, initramfs and trace.
SETUP_JOB_TIMEOUT=${SETUP_JOB_TIMEOUT:-1200}
setup_default_job() {
	local cmd=("$top/build/vmmtrace" boot "$VMMTRACE_CACHE/lean/bzImage"
		--initrd "$VMMTRACE_CACHE/initramfs.cpio" --cpus 2
		--cmdline vmmtrace.steps=cpus,uname
		--trace start_kernel --trace setup_arch --trace trap_init --trace sched_init
		--trace rest_init --trace kernel_init --trace __x64_sys_newuname)
	local rc=0

	if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
		say "no usable /dev/kvm here: vmmtrace runs the default job under QEMU (--host qemu)"
	fi
	say "default job: ${cmd[*]}"
	say "(guest kernel code may be emulated on this host: expect about two minutes)"
	# A hang must not block forever: after the timeout vmmtrace gets SIGINT.
	timeout --foreground -s INT "$SETUP_JOB_TIMEOUT" "${cmd[@]}" </dev/null || rc=$?
	case $rc in
	0) say "default job done: the guest ran (to its reboot, or to --stop-at); its trace is above" ;;
	130) say "default job stopped (interrupted or over ${SETUP_JOB_TIMEOUT} s)" ;;
	*) say "default job failed with exit status $rc (see README.md, 'Exit status')" ;;
	esac
	return "$rc"
}

setup_start=$(date +%s)
step "packages: the ${#SETUP_PACKAGES[@]} the first trace needs (apt)" setup_packages
step "the lean x86_64 test kernel (linux-source-6.1, 3 to 4 minutes on 2 cores the first time) and its initramfs" \
	prep_first_guest
step "vmmtrace" setup_build
say "setup complete in $(( $(date +%s) - setup_start )) s (cache: $VMMTRACE_CACHE); the tests: make check"
if [ "$run_job" = 1 ]; then
	step "the default job" setup_default_job
fi
