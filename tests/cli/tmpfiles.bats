#!/usr/bin/env bats
# Temporary files "<name>.tmp.<pid>.<n>" (elog(5), The directory): a process
# holds a lock on its own while it writes it, and a cleaner (a writer's
# recovery, elog-verify --repair, retention, compaction) removes only one
# whose lock it can take and which has not changed for ten minutes.  A pid
# means nothing across pid namespaces; the lock does.  These tests run
# processes in another pid namespace, which needs root.

load helpers

# unshare --fork ignores SIGTERM while it waits for its child: the processes
# these tests start are killed with SIGKILL, which --kill-child passes on.
teardown_test() {
	local pid
	for pid in $BG_PIDS; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}

# Skip unless this user may make a pid namespace.
need_pidns() {
	unshare --pid --fork --mount-proc true 2>/dev/null ||
		skip "cannot make a pid namespace here (needs root)"
}

# A pid that names no process in this namespace.
dead_pid() {
	local p
	p=$(sh -c 'echo $$')
	while kill -0 "$p" 2>/dev/null; do
		p=$((p + 1))
	done
	echo "$p"
}

# Set FILE's last change an hour back: old enough for any cleaner.
backdate() {
	touch -m -d '1 hour ago' "$1"
}

# Wait until someone holds a lock on FILE, for at most 10 seconds.
wait_held() {
	local i
	for i in $(seq 1000); do
		flock -n -x "$1" true 2>/dev/null || return 0
		nap 0.01
	done
	echo "nobody took the lock on $1" >&2
	return 1
}

# Wait until nobody holds a lock on FILE, for at most 10 seconds: unshare's
# --kill-child kills the holder after unshare itself is gone.
wait_free() {
	local i
	for i in $(seq 1000); do
		flock -n -x "$1" true 2>/dev/null && return 0
		nap 0.01
	done
	echo "the lock on $1 was never released" >&2
	return 1
}

@test "a temporary file held from another pid namespace survives every cleaner" {
	need_pidns
	printf 'a\nb\n' | elog-append --cleanup compact "$LOG"
	# As a commit in a container makes it: its pid is the container's,
	# and names no process here.
	tmp=$LOG/consumers.json.tmp.$(dead_pid).0
	echo '{}' >"$tmp"
	backdate "$tmp"
	background unshare --pid --fork --kill-child flock -x "$tmp" sleep 600
	holder=$!
	wait_held "$tmp"
	run elog-verify --repair "$LOG"
	[ "$status" -eq 0 ]
	[[ "$output" != *removed* ]]
	[ -f "$tmp" ]
	run elog-retain --max-bytes 1G "$LOG"
	[ "$status" -eq 0 ]
	[ -f "$tmp" ]
	run elog-compact "$LOG"
	[ "$status" -eq 0 ]
	[ -f "$tmp" ]
	# Its holder gone, the file is what a crash left: garbage.
	kill -KILL "$holder"
	wait "$holder" || true
	wait_free "$tmp"
	run elog-verify --repair "$LOG"
	[ "$status" -eq 0 ]
	[[ "$output" == *"${tmp##*/}: repaired: removed: the temporary file of a process that died"* ]]
	[ ! -e "$tmp" ]
}

@test "a commit stopped in another pid namespace keeps its temporary file and succeeds" {
	need_pidns
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	seq 1 10 | elog-append "$LOG"
	# The commit's pid in its namespace is made high, so that it names
	# no process here; strace stops it at its first fsync, which is the
	# temporary file's: written, not yet renamed.
	last=$(( $(cat /proc/sys/kernel/pid_max) - 1000 ))
	background unshare --pid --fork --kill-child --mount-proc sh -c "
		echo $last >/proc/sys/kernel/ns_last_pid &&
		exec strace -f -qq -o /dev/null -e trace=fsync \
			-e inject=fsync:signal=SIGSTOP:when=1 \
			$ELOG_BIN/elog-commit --create '$LOG' uplink 7" 2>"$T/err"
	outer=$!
	commit=
	for i in $(seq 1000); do
		read -r tracer _ <"/proc/$outer/task/$outer/children" 2>/dev/null || true
		[ -n "$tracer" ] && read -r commit _ <"/proc/$tracer/task/$tracer/children" 2>/dev/null || true
		# Traced, it is in a tracing stop at each of its calls too, and
		# then briefly: stopped with its temporary file there, three
		# times in a row, is the injected stop.
		if [ -n "$commit" ] && grep -qs '^State:.*stop' "/proc/$commit/status" &&
			ls "$LOG"/consumers.json.tmp.* >/dev/null 2>&1; then
			seen=$((${seen:-0} + 1))
			[ "$seen" -ge 3 ] && break
		else
			seen=0
		fi
		commit=
		nap 0.05
	done
	[ -n "$commit" ]
	tmp=$(echo "$LOG"/consumers.json.tmp.*)
	[ -f "$tmp" ]
	pid=${tmp#*consumers.json.tmp.}
	pid=${pid%.*}
	! kill -0 "$pid" 2>/dev/null
	run elog-verify --repair "$LOG"
	[ "$status" -eq 0 ]
	[[ "$output" != *removed* ]]
	run elog-retain --max-bytes 1G "$LOG"
	[ "$status" -eq 0 ]
	[ -f "$tmp" ]
	kill -CONT "$commit"
	wait "$outer"
	[ ! -s "$T/err" ]
	[ ! -e "$tmp" ]
	run elog-commit -l --json "$LOG"
	[ "$status" -eq 0 ]
	[[ "$output" == '{"name":"uplink","offset":7,'* ]]
}

@test "an unlocked temporary file goes once ten minutes old, and not before" {
	printf 'a\nb\n' | elog-append "$LOG"
	old=$LOG/settings.tmp.$(dead_pid).0
	new=$LOG/00000000000000000000.idx.tmp.$(dead_pid).1
	echo x >"$old"
	backdate "$old"
	echo y >"$new"
	# A writer of an elog that did not lock its temporary files may be
	# writing the fresh one: it stays, and is reported.
	run elog-verify --repair "$LOG"
	[ "$status" -eq 0 ]
	[[ "$output" == *"${old##*/}: repaired: removed: the temporary file of a process that died"* ]]
	[[ "$output" == *"${new##*/}: warning: temporary file"* ]]
	[ ! -e "$old" ]
	[ -f "$new" ]
	touch -m -d '11 minutes ago' "$new"
	run elog-retain --max-bytes 1G "$LOG"
	[ "$status" -eq 0 ]
	[ ! -e "$new" ]
}

@test "a cleaner neither follows nor removes a link or a FIFO named like a temporary file" {
	printf 'a\n' | elog-append "$LOG"
	echo precious >"$T/target"
	ln -s "$T/target" "$LOG/settings.tmp.1.0"
	mkfifo "$LOG/consumers.json.tmp.1.0"
	touch -h -m -d '1 hour ago' "$LOG/settings.tmp.1.0" "$LOG/consumers.json.tmp.1.0"
	run timeout 60 elog-verify --repair "$LOG"
	[ "$status" -eq 0 ]
	run timeout 60 elog-retain --max-bytes 1G "$LOG"
	[ "$status" -eq 0 ]
	[ -L "$LOG/settings.tmp.1.0" ]
	[ -p "$LOG/consumers.json.tmp.1.0" ]
	[ "$(cat "$T/target")" = precious ]
}
