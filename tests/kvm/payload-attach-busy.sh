#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# payload-attach.sh with every vCPU spending ~95% of its time inside the
# stub (no spin between traced calls), on 4 vCPUs: each change set must
# still find a moment when no vCPU is inside the stub, well within its
# 1 s limit, and every window must stay exact. Before the quiesce let only
# the vCPUs caught in the stub run, this hit the limit ("a vCPU stayed
# inside the stub") and routed events to released slots.
ATTACH_SPIN=0 ATTACH_CPUS=4 exec bash "$(dirname "$0")/payload-attach.sh"
