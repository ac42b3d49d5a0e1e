# SPDX-License-Identifier: GPL-2.0
# The calls of one task in a function-tracer text trace (the guest's own
# `trace` file, or vmmtrace's text output, which has the same layout), in
# order, as "func <-parent" lines: awk -v pid=PID -f calls-of.awk TRACE.
# The guest's /init (step ftrace-all) and the host's tests (tests/lib.sh
# trace_calls_of) use this one copy, so that their digests compare.
# Calls in interrupt context (the latency field's third column h, H, s,
# z or Z) are left out: an interrupt taken between vmmtrace's record of a
# call and the guest's own puts its calls between the two, so the two
# traces interleave them differently.
/^#/ { next }
{
	for (i = 1; i <= NF && $i !~ /^\[[0-9]+\]$/; i++)
		;
	task = $1
	for (k = 2; k < i; k++)
		task = task " " $k
	if (task !~ ("-" pid "$") || substr($(i + 1), 3, 1) != ".")
		next
	for (j = i + 1; j <= NF && $j !~ /^[0-9]+\.[0-9]+:$/; j++)
		;
	if (j < NF)
		print $(j + 1), $(j + 2)
}
