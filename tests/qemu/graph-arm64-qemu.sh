#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --graph and --retval on arm64: tests/e2e/graph.sh's boot and checks, the
# lean arm64 kernel under QEMU on 2 vCPUs. The arm64 stub hooks returns
# from start_kernel on: its first shadow stacks sit beside the early rings
# in the image's padding, and move with the rings at the hand-over.
GRAPH_HOST=qemu GRAPH_ARCH=arm64 exec bash "$(dirname "$0")/../e2e/graph.sh" "$@"
