#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Trace the first phases of a boot, where in-guest ftrace cannot look:
# the slots of these functions call vmmtrace's stub from the guest's first
# instruction on. sched_init runs after ftrace_init, where the guest's own
# ftrace takes the slots over: vmmtrace hands them over and keeps tracing.
# --stop-at ends the guest the moment rest_init is called. The trace (ftrace's text layout)
# goes to stdout, the summary to stderr; the console is not kept.
#
#   examples/boot-trace.sh [KERNEL]
. "$(dirname "$0")/common.sh"

"$VMMTRACE" boot "$KERNEL" \
	--trace start_kernel --trace setup_arch --trace trap_init --trace sched_init \
	--stop-at rest_init --console /dev/null
