#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks an attach window of the payload's loop against the whole run.

    check_windows.py BOOT WINDOW [--detached FUNC]

BOOT is the trace of f_mark for the whole run (the boot command's own
client held it from the first instruction); WINDOW is an attached client's
trace of f_mark and f_work. The payload calls f_mark then f_work on every
CPU, once per iteration. A window is exact when, on every CPU:

- its f_mark events are a contiguous run of BOOT's (the same records, so
  the same timestamps): no call inside the window is missing;
- f_mark and f_work alternate: the slot of f_work, written in the attach's
  pause, caught every call from that instant on, and none before;
- with --detached FUNC (FUNC released from every client by `vmmtrace
  detach` in mid-window): the alternation holds up to FUNC's last event and
  only f_mark follows, at least twice.

Timestamps are compared as the text prints them; equal ones (a fast host)
are interchangeable, so a slice of equal values still matches.
"""
import re
import sys

EVENT = re.compile(r"\[(\d+)\] \S+\s+(\d+\.\d{6}): (\S+) <-(\S+)$")
MIN_EVENTS = 10


def read(path):
    per_cpu = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = EVENT.search(line.rstrip("\n"))
            if not m:
                raise SystemExit("%s: not an event line: %r" % (path, line))
            cpu, ts, func, parent = int(m.group(1)), m.group(2), m.group(3), m.group(4)
            per_cpu.setdefault(cpu, []).append((func, parent, ts))
    return per_cpu


def find_slice(whole, part):
    """Index where part occurs contiguously in whole, or -1."""
    if not part:
        return -1
    for i in range(len(whole) - len(part) + 1):
        if whole[i] == part[0] and whole[i:i + len(part)] == part:
            return i
    return -1


def check_cpu(cpu, boot, win, detached):
    errors = []
    funcs = [e[0] for e in win]
    marks = [e[2] for e in win if e[0] == "f_mark"]
    boot_marks = [e[2] for e in boot if e[0] == "f_mark"]
    if len(win) < MIN_EVENTS:
        return ["cpu %d: %d events in the window, want at least %d" % (cpu, len(win), MIN_EVENTS)]
    bad = [e for e in win if e[0] not in ("f_mark", "f_work") or e[1] != "loop_cpu"]
    if bad:
        errors.append("cpu %d: unexpected event %s <-%s at %s" % (cpu, *bad[0]))
    at = find_slice(boot_marks, marks)
    if at < 0:
        errors.append("cpu %d: the window's %d f_mark events are not a contiguous run of the "
                      "boot trace's %d (a call inside the window is missing)"
                      % (cpu, len(marks), len(boot_marks)))
    end = len(funcs)
    if detached:
        last = max((i for i, f in enumerate(funcs) if f == detached), default=-1)
        if last < 0:
            errors.append("cpu %d: no %s event before the detach" % (cpu, detached))
        tail = funcs[last + 1:]
        if len(tail) < 2 or any(f != "f_mark" for f in tail):
            errors.append("cpu %d: after %s's last event: %d events, want f_mark only and at least 2"
                          % (cpu, detached, len(tail)))
        end = last + 1
    for i in range(1, end):
        if funcs[i] == funcs[i - 1]:
            errors.append("cpu %d: %s twice in a row at %s (event %d of the window): "
                          "f_mark and f_work must alternate" % (cpu, funcs[i], win[i][2], i))
            break
    if not errors:
        print("cpu %d: %d f_mark (boot events %d..%d), %d f_work"
              % (cpu, len(marks), at, at + len(marks) - 1, funcs.count("f_work")))
    return errors


def main():
    args = sys.argv[1:]
    detached = None
    if len(args) == 4 and args[2] == "--detached":
        detached = args[3]
        args = args[:2]
    if len(args) != 2:
        raise SystemExit(__doc__)
    boot, win = read(args[0]), read(args[1])
    errors = []
    for cpu in sorted(boot):
        errors += check_cpu(cpu, boot[cpu], win.get(cpu, []), detached)
    for cpu in sorted(set(win) - set(boot)):
        errors.append("cpu %d: in the window, never in the boot trace" % cpu)
    for e in errors:
        print("error: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
