#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks attached windows against the guest's own iterations.

The guest runs markloop on every CPU: each iteration calls the marker
(__x64_sys_sched_get_priority_max, traced for the whole boot into BOOT_TRACE)
and then getpriority (__x64_sys_getpriority, traced only while an attach
client holds it). So on one CPU, between two consecutive markers there is
exactly one getpriority call. For each attach window (one output file):
  - no iteration holds two getpriority events (a duplicate),
  - every iteration from the window's first event to its last holds one
    (nothing lost inside the window: the calls made while attached).
Prints PASS:/FAIL: lines; exit status 1 on any failure.

usage: attach_check.py BOOT_TRACE WINDOW_TRACE...
(ATTACH_MARKER and ATTACH_TARGET name other arches' handlers.)
"""
import bisect
import os
import re
import sys

LINE = re.compile(r"^\s*\S+-\d+\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\S+) <-")
# Other arches' handlers (e.g. __arm64_sys_*) through the environment.
MARKER = os.environ.get("ATTACH_MARKER", "__x64_sys_sched_get_priority_max")
TARGET = os.environ.get("ATTACH_TARGET", "__x64_sys_getpriority")


def events(path, func):
    per_cpu = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m and m.group(3) == func:
                ts = round(float(m.group(2)) * 1e6)  # microseconds, as printed
                per_cpu.setdefault(int(m.group(1)), []).append(ts)
    return per_cpu


def ranges(marks, stamps):
    """For each call (in order), the iterations it may belong to: j with
    marks[j] <= ts <= marks[j + 1]. Both bounds are inclusive, since the
    stamps are printed to the microsecond and a fast guest (QEMU's TCG runs
    an x86 iteration in a few us) makes a call and the next iteration's
    marker, or two markers, print the same time. Returns (ranges, calls
    before any marker)."""
    out, before = [], 0
    for ts in stamps:
        b = bisect.bisect_right(marks, ts)
        if b == 0:
            before += 1
            continue
        a = bisect.bisect_left(marks, ts)
        out.append((max(a - 1, 0), b - 1))
    return out, before


def exact(spans):
    """True when the n calls can be the n consecutive iterations s..s+n-1:
    call k is iteration s + k, so s must lie in every [lo - k, hi - k]."""
    s_lo = max((lo - k for k, (lo, _) in enumerate(spans)), default=0)
    s_hi = min((hi - k for k, (_, hi) in enumerate(spans)), default=0)
    return s_lo <= s_hi


def explain(spans):
    """When no exact fit exists, what is wrong: calls placed in order, each
    in the first iteration it fits after the previous call's. Returns
    (duplicates: calls that fit no later iteration, iterations between the
    first and the last placed call that hold none)."""
    placed, dups, prev = [], 0, -1
    for lo, hi in spans:
        j = max(prev + 1, lo)
        if j > hi:
            dups += 1
            continue
        placed.append(j)
        prev = j
    missing = placed[-1] - placed[0] + 1 - len(placed) if placed else 0
    return dups, missing


def check_window(markers, path):
    """Returns (events, problems) for one attach window."""
    problems = []
    got = events(path, TARGET)
    total = 0
    for cpu, stamps in got.items():
        total += len(stamps)
        spans, before = ranges(markers.get(cpu, []), sorted(stamps))
        if before:
            problems.append(f"cpu {cpu}: {before} getpriority events before any marker")
        if exact(spans):
            continue
        dups, missing = explain(spans)
        if dups:
            problems.append(f"cpu {cpu}: {dups} duplicated events")
        if missing or not dups:
            problems.append(f"cpu {cpu}: {missing} iterations inside the window have "
                            f"no event ({len(spans)} events)")
    return total, problems


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    markers = {cpu: sorted(v) for cpu, v in events(sys.argv[1], MARKER).items()}
    nmarks = sum(len(v) for v in markers.values())
    print(f"INFO: {nmarks} marker events on CPUs {sorted(markers)}")
    failed = 0
    windows_with_events = 0
    total = 0
    for path in sys.argv[2:]:
        n, problems = check_window(markers, path)
        total += n
        windows_with_events += n > 0
        for p in problems:
            print(f"FAIL: {path}: {p}")
            failed += 1
    print(f"INFO: {len(sys.argv) - 2} windows, {windows_with_events} with events, {total} events")
    if failed:
        return 1
    print(f"PASS: every attached window holds exactly one event per iteration ({total} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
