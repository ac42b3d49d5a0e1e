#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --graph and --retval on the QEMU host: tests/e2e/graph.sh's boot and
# checks, the lean x86_64 kernel under QEMU (whose x86_64 stub hooks
# returns as on KVM: its shadow stacks sit after the rings in the region
# memmap= keeps).
GRAPH_HOST=qemu exec bash "$(dirname "$0")/../e2e/graph.sh" "$@"
