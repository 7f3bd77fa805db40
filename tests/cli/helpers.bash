# helpers.bash: the one set-up of the bats tests of the elog programs;
# every file starts with `load helpers`.  The programs are taken from
# $ELOG_BIN (the Makefile's check-cli sets it).
#
# Each test gets, before it runs: the programs on PATH and in $B (the
# build directory), a scratch directory $T (bats' own $BATS_TEST_TMPDIR,
# which bats removes when the run ends: no mktemp and rm per test, 30 ms
# of processor time of the 190 a test that does nothing took), and the
# path of a log in it, $LOG (also $L), not yet created.  A file that needs
# more defines setup_test (run after this set-up) and teardown_test (run
# before this clean-up), and setup_file_test, run once before its first
# test (what it exports, every test sees); processes started with
# `background` are stopped whatever the test did.

bats_require_minimum_version 1.5.0

setup() {
	: "${ELOG_BIN:?set ELOG_BIN to the directory that holds the programs}"
	B=$ELOG_BIN
	PATH=$ELOG_BIN:$PATH
	T=$BATS_TEST_TMPDIR
	LOG=$T/log
	L=$LOG
	BG_PIDS=
	# Times without a zone are local; tests that need another zone set TZ.
	export TZ=UTC
	if declare -F setup_test >/dev/null; then
		setup_test
	fi
}

teardown() {
	local pid
	if declare -F teardown_test >/dev/null; then
		teardown_test
	fi
	for pid in $BG_PIDS; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}

# Bats makes its run's directory for its owner alone (mktemp -d); the
# tests that run a program as nobody (as_nobody, setpriv) need to reach
# their $T in it, as they reached it in /tmp.
setup_file() {
	if [ "$EUID" -eq 0 ]; then
		chmod go+x "$BATS_RUN_TMPDIR"
	fi
	if declare -F setup_file_test >/dev/null; then
		setup_file_test
	fi
}

# Start a command in the background, remembered for teardown.  Its fd 3,
# bats' own, is closed so that bats does not wait for it.  Its stdin is
# named explicitly: bash would give a background command /dev/null.
background() {
	"$@" 3>&- <&0 &
	BG_PIDS="$BG_PIDS $!"
}

# Pause $1 seconds without starting a process: read(1) with a time limit
# from a FIFO of the test's that nobody writes to.  A poll loop's `sleep
# 0.01` started one (bash forks, sleep is executed): 6 ms of processor
# time each, 1,172 of them in elog-cat-follow.bats, and more the slower
# the machine.  Subshells and pipelines of the test use it too.
nap() {
	if [ -z "${NAP_FD:-}" ]; then
		[ -p "$T/.nap" ] || mkfifo "$T/.nap" 2>/dev/null || [ -p "$T/.nap" ]
		exec {NAP_FD}<>"$T/.nap"
	fi
	read -r -t "$1" -u "$NAP_FD" _ || true
}

# The child of process $1 (a tracer, say strace) once it is stopped:
# printed, or nothing after about 10 s.
stopped_child() {
	local child
	for _ in $(seq 1000); do
		read -r child _ <"/proc/$1/task/$1/children" 2>/dev/null || true
		if [ -n "$child" ] && grep -qs '^State:.*stop' "/proc/$child/status"; then
			echo "$child"
			return
		fi
		nap 0.01
	done
}

# Wait until FILE has at least N lines, for at most 30 seconds of the wall
# clock (a loaded machine gets the time; a passing test never waits it).
# bash itself reads the clock ($EPOCHREALTIME, in microseconds once its
# point is dropped) and counts the lines: a round starts no process.
wait_lines() {
	local file=$1 n=$2 end s nl
	end=$((${EPOCHREALTIME/[.,]/} + 30000000))
	while :; do
		if [ -f "$file" ]; then
			s=
			IFS= read -r -d '' s <"$file" || true
			nl=${s//[!$'\n']/}
			[ "${#nl}" -ge "$n" ] && return 0
		fi
		[ "${EPOCHREALTIME/[.,]/}" -lt "$end" ] || break
		nap 0.01
	done
	echo "timed out waiting for $n lines in $file; it has:" >&2
	cat "$file" >&2
	return 1
}

# Wait until process PID has exited, for at most 30 seconds.
wait_exit() {
	local pid=$1 end
	end=$((${EPOCHREALTIME/[.,]/} + 30000000))
	while kill -0 "$pid" 2>/dev/null; do
		if [ "${EPOCHREALTIME/[.,]/}" -ge "$end" ]; then
			echo "process $pid did not exit" >&2
			return 1
		fi
		nap 0.01
	done
}

# Run a program as an unprivileged user, since root may read and write
# anywhere.  The caller skips its test when even --version fails this way.
as_nobody() {
	if [ "$(id -u)" -ne 0 ]; then
		"$@"
	else
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	fi
}

now_ms() {
	date +%s%3N
}

# Assert a usage error: status 2, the message and the hint, nothing on
# stdout.  usage_error PROG 'MESSAGE' ARGS...
usage_error() {
	local prog=$1 msg=$2
	shift 2
	run --separate-stderr "$prog" "$@" </dev/null
	[ "$status" -eq 2 ] || { echo "status $status, stderr: $stderr" >&2; return 1; }
	[ "$output" = "" ] || { echo "stdout: $output" >&2; return 1; }
	[ "$stderr" = "$prog: $msg
Try '$prog --help'." ] || { echo "stderr: $stderr" >&2; return 1; }
}

# Append the lines given as arguments, one record each.
append_lines() {
	local log=$1
	shift
	printf '%s\n' "$@" | elog-append "$log"
}

# The SYNOPSIS section of a man page as mandoc renders it, with every run of
# white space made one space, to compare with a program's --help.
synopsis_words() {
	MANWIDTH=80 mandoc -T ascii "$1" | col -b |
		sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed '1d;$d' | tr -s ' \t\n' '   ' |
		sed 's/^ //; s/ $//'
}

# The usage part of a program's --help: the lines before the first empty
# one (the options follow it, one per line).
help_usage() {
	"$1" --help | sed '/^$/,$d'
}

# The option lines of a program's --help: those after the first empty one.
help_options() {
	"$1" --help | sed '1,/^$/d'
}

usage_words() {
	help_usage "$1" | sed '1s/^usage: //' | tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//'
}
