#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/e2e/graph.sh's boots and checks under QEMU on the lean arm64 kernel
# with no padding below _etext (lean-arm64-nopad, scripts/prepare-tests.sh):
# the stub, its return hook and its doorbell share _end's guard page, and
# --graph '*', the sleepers and an attach window run through it. The qemu
# tier's guest-qemu.sh checks the same kernel's counts, order and a graph
# across paging_init; this is the rest, in the long tier (3 minutes).
GRAPH_HOST=qemu GRAPH_ARCH=arm64-nopad exec bash "$(dirname "$0")/graph.sh" "$@"
