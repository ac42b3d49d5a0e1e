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


def assign(marks, stamps):
    """Each call's iteration, calls in order. A call belongs to iteration j
    when marks[j] <= ts <= marks[j + 1]: both bounds inclusive, since the
    stamps are printed to the microsecond and a fast guest (QEMU's TCG runs
    an x86 iteration in a few us) makes a call and the next iteration's
    marker print the same time. Of the iterations that fit, a call gets the
    first after the previous call's. Returns (iterations, calls before any
    marker, calls no iteration after the previous one fits: duplicates)."""
    iters, before, dups, prev = [], 0, 0, -1
    for ts in stamps:
        a = bisect.bisect_left(marks, ts)
        b = bisect.bisect_right(marks, ts)
        if b == 0:
            before += 1
            continue
        lo, hi = max(a - 1, 0), b - 1
        j = max(prev + 1, lo)
        if j > hi:
            dups += 1
            continue
        iters.append(j)
        prev = j
    return iters, before, dups


def check_window(markers, path):
    """Returns (events, problems) for one attach window."""
    problems = []
    got = events(path, TARGET)
    total = 0
    for cpu, stamps in got.items():
        total += len(stamps)
        iters, before, dups = assign(markers.get(cpu, []), sorted(stamps))
        if before:
            problems.append(f"cpu {cpu}: {before} getpriority events before any marker")
        if dups:
            problems.append(f"cpu {cpu}: {dups} duplicated events")
        if iters:
            span = max(iters) - min(iters) + 1
            if span != len(iters):
                problems.append(f"cpu {cpu}: {span - len(iters)} iterations inside the "
                                f"window have no event ({len(iters)} of {span})")
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
