#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A guest that dies before its console is up, explained by the flight
# recorder. memmap=exactmap with no map leaves the kernel no RAM: it panics
# in setup_arch, before its console exists and before panic= is parsed, so
# it prints nothing and spins for ever. vmmtrace keeps the last 40 events
# (the e820 code, panic, and every VM event) in memory, writes no trace,
# stops the guest once it recorded nothing for 20 s, and prints them with
# the vCPU's registers. Exit status 7: the guest made no progress.
#
#   examples/flight-recorder.sh [KERNEL]
. "$(dirname "$0")/common.sh"

"$VMMTRACE" boot "$KERNEL" --cmdline memmap=exactmap --console /dev/null \
	--flight-recorder 40 --trace panic --trace setup_arch --trace 'e820__*' --event 'kvm:*' --hang 20
