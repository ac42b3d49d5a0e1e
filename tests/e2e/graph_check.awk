# SPDX-License-Identifier: GPL-2.0
# The --graph text (function_graph's layout) checked per task: every block
# closes at the depth it opened, in the task that opened it (the separators
# name a CPU's task; before a CPU's first separator its task is not named
# yet; pid 0 is each CPU's idle task), durations contain their children's,
# and the blocks left open are the ones listed as still running or as not
# returned. Prints one line per problem, then
# "blocks=N closed=N open=N leaves=N".
# usage: awk -f graph_check.awk GRAPH_TEXT
function us(s) { return s + 0 }
function key(cpu) { return (cpu in task) ? task[cpu] : "first-on-cpu" cpu }
# A task is its pid: its comm changes at exec (kernel_init returns as init-1).
# Pid 0 is each CPU's idle task (swapper/N), which never migrates.
function pid_of(s, cpu) { sub(/.*-/, "", s); return s == "0" ? "idle" cpu : "pid" s }
# A return at depth d (its line: text, duration) closes task k's top block.
function close_block(k, depth, text, dur, line,   name) {
	closed++
	if (!n[k]) { print "a return with no open block in " k ": " line; return }
	if (dp[k, n[k]] != depth) print "depth " depth " closes a block opened at " dp[k, n[k]] " in " k ": " line
	if (match(text, /^\} \/\* [^ ]+/)) {
		name = substr(text, 6, RLENGTH - 5)
		if (name != st[k, n[k]]) print "block " st[k, n[k]] " closed as " name " in " k
	}
	# Printed durations are cut, to 1 us at most (7 digits): allow that much.
	if (dur + 1 < kids[k, n[k]]) print "duration " dur " under its children's " kids[k, n[k]] ": " line
	n[k]--
	if (n[k]) kids[k, n[k]] += dur
}
/^ -+$/ { next }
/^#/ || /^$/ { next }
# " 1)   bash-1234    =>   kworker-7   ": the task that runs on a CPU from here on.
/=>/ {
	cpu = $1; sub(/\)/, "", cpu)
	prev = pid_of($2, cpu); next_ = pid_of($4, cpu)
	k = "first-on-cpu" cpu
	if (!(cpu in task)) {
		# The CPU's first task now has a name. Its returns that found no
		# block open on this CPU close blocks it opened on another (it
		# migrated); they came while none was open here, so before the
		# blocks still open here, which then go on that task s.
		for (i = 1; i <= np[k]; i++)
			close_block(prev, pd[k, i], pt[k, i], pu[k, i], pl[k, i])
		delete np[k]
	}
	if (!(cpu in task) && k in n) {
		for (i = 1; i <= n[k]; i++) {
			j = ++n[prev]
			st[prev, j] = st[k, i]; dp[prev, j] = dp[k, i]; kids[prev, j] = kids[k, i]
		}
		delete n[k]
	}
	task[cpu] = next_
	next
}
{
	split($0, part, "|")
	head = part[1]; body = substr($0, length(head) + 2)
	cpu = head; sub(/\).*/, "", cpu); sub(/^ */, "", cpu)
	dur = -1
	if (match(head, /[0-9]+(\.[0-9]+)? us/)) dur = us(substr(head, RSTART, RLENGTH - 3))
	sub(/^  /, "", body)
	match(body, /^ */); depth = RLENGTH / 2; text = substr(body, RLENGTH + 1)
	k = key(cpu)
	# Blocks whose return never came: still running at the end, or left by their task (it exited).
	if (text ~ /^\/\* .*(still running when the trace ended|: return not recorded \()/) { open_end++; next }
	if (text ~ /^\/\*/) next
	if (dur != -1 && dur < 0) print "negative duration: " $0
	if (text ~ /\(\) \{$/) {
		blocks++
		n[k]++; st[k, n[k]] = text; dp[k, n[k]] = depth; kids[k, n[k]] = 0
		sub(/\(\) \{$/, "", st[k, n[k]])
	} else if (text ~ /^\}/) {
		if (!n[k] && !(cpu in task)) {
			# The CPU's task is not named yet: kept until it is.
			j = ++np[k]
			pd[k, j] = depth; pt[k, j] = text; pu[k, j] = dur; pl[k, j] = $0
			next
		}
		close_block(k, depth, text, dur, $0)
	} else if (text ~ /\(\);/) {
		leaves++
		if (n[k]) kids[k, n[k]] += dur
	}
}
END {
	for (k in np)
		for (i = 1; i <= np[k]; i++) { closed++; print "a return with no open block in " k ": " pl[k, i] }
	left = 0
	for (k in n) left += n[k]
	if (left != open_end) print left " blocks left open, " open_end " listed as still running or not returned"
	printf "blocks=%d closed=%d open=%d leaves=%d\n", blocks, closed, open_end, leaves
}
