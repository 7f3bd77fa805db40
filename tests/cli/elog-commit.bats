#!/usr/bin/env bats
# elog-commit(1): every flag and every failure path, with exact stderr and
# exit status.  ELOG_BIN is the build directory holding the programs.

load helpers

setup_test() {
	# Ten durable records, offsets 0..9.
	seq 1 10 | "$B/elog-append" "$L"
}

teardown_test() {
	[ -n "${STOPPED:-}" ] && kill -KILL "$STOPPED" 2>/dev/null || true
	[ -n "${PID:-}" ] && kill "$PID" 2>/dev/null || true
	rm -rf "$T"
}

# The committed offset of consumer $1, or "none".
committed() {
	"$B/elog-commit" -l --json "$L" |
		sed -n "s/^{\"name\":\"$1\",\"offset\":\([0-9]*\),.*/\1/p" | grep . || echo none
}

# Wait up to 5 s for command "$@" to succeed.
eventually() {
	for _ in $(seq 50); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# Whether consumer $1 has committed offset $2.
committed_is() {
	[ "$(committed "$1")" = "$2" ]
}

@test "--help prints the synopsis of the man page on stdout" {
	run "$B/elog-commit" --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "usage: elog-commit [-T] [-e duration] dir name [offset]" ]
	[ "${lines[1]}" = "       elog-commit --create dir name [offset]" ]
	[ "${lines[2]}" = "       elog-commit -l [--json] dir" ]
	[ "${lines[3]}" = "       elog-commit -d dir name" ]
	[ "${lines[4]}" = "       elog-commit --ack-loss dir name" ]
	[ "${lines[5]}" = "       elog-commit --log-id dir" ]
	[ "${lines[6]}" = "       elog-commit -h | --help | --version" ]
	run "$B/elog-commit" -h
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "usage: elog-commit [-T] [-e duration] dir name [offset]" ]
}

@test "--version names the program and the version" {
	run "$B/elog-commit" --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^elog-commit\ \(elog\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "an unknown option is bad usage" {
	run "$B/elog-commit" -x "$L" a 1
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: unknown option -x" ]
	[ "${lines[1]}" = "Try 'elog-commit --help'." ]
}

@test "a missing option argument is bad usage" {
	run "$B/elog-commit" "$L" a --every
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: option --every needs an argument" ]
}

@test "missing operands are bad usage" {
	run "$B/elog-commit"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: missing log directory" ]
	run "$B/elog-commit" "$L"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: missing consumer name" ]
}

@test "an extra operand is bad usage" {
	run "$B/elog-commit" "$L" a 1 2
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: unexpected argument '2'" ]
}

@test "OFFSET is committed silently" {
	run "$B/elog-commit" --create "$L" uplink 4
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(committed uplink)" = 4 ]
}

@test "a malformed OFFSET is bad usage" {
	for bad in x -1 1.5 "" 18446744073709551616 " 1"; do
		run "$B/elog-commit" --create -- "$L" uplink "$bad"
		[ "$status" -eq 2 ]
		[ "${lines[0]}" = "elog-commit: invalid offset '$bad'" ]
	done
	[ "$(committed uplink)" = none ]
}

@test "an offset at or above the durable end is refused" {
	run "$B/elog-commit" --create "$L" uplink 10
	[ "$status" -eq 2 ]
	[ "$output" = "elog-commit: $L: offset 10 is at or above the durable end 10 of the log" ]
	run "$B/elog-commit" --create "$L" uplink 18446744073709551615
	[ "$status" -eq 2 ]
	[ "$(committed uplink)" = none ]
	"$B/elog-commit" --create "$L" uplink 9
	[ "$(committed uplink)" = 9 ]
}

@test "moving backwards is allowed" {
	"$B/elog-commit" --create "$L" uplink 9
	"$B/elog-commit" --create "$L" uplink 2
	[ "$(committed uplink)" = 2 ]
}

@test "an invalid name is bad usage and commits nothing" {
	for bad in "a b" .hidden -x "" "a/b" "$(printf 'x%.0s' $(seq 65))"; do
		run "$B/elog-commit" --create "$L" -- "$bad" 1
		[ "$status" -eq 2 ]
		[[ "${lines[0]}" == "elog-commit: $L: consumer name \""*"\": invalid consumer name (1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -)" ]]
	done
	[ ! -e "$L/consumers.json" ]
}

@test "the longest name is accepted" {
	name=$(printf 'x%.0s' $(seq 64))
	"$B/elog-commit" --create "$L" "$name" 3
	[ "$(committed "$name")" = 3 ]
}

@test "a directory that is not a log is an I/O error" {
	mkdir "$T/plain"
	run "$B/elog-commit" --create "$T/plain" uplink 1
	[ "$status" -eq 5 ]
	[ "$output" = "elog-commit: $T/plain: not an elog directory (no settings file)" ]
	[ ! -e "$T/plain/consumers.lock" ]
}

@test "a missing directory is an I/O error" {
	run "$B/elog-commit" --create "$T/none" uplink 1
	[ "$status" -eq 5 ]
	[ "$output" = "elog-commit: $T/none: no such file or directory" ]
}

@test "a corrupt consumers.json is refused with its byte position and kept" {
	printf '{"version":1,"consumers":{"a":{"offset":1}}}' > "$L/consumers.json"
	run "$B/elog-commit" --create "$L" a 2
	[ "$status" -eq 4 ]
	[ "$output" = "elog-commit: $L: consumers.json: byte 41: missing \"committed_ms\"; run elog-verify $L to see what is damaged" ]
	run "$B/elog-commit" -l "$L"
	[ "$status" -eq 4 ]
	[ "$output" = "elog-commit: $L: consumers.json: byte 41: missing \"committed_ms\"; run elog-verify $L to see what is damaged" ]
	run "$B/elog-commit" "$L" a < /dev/null
	[ "$status" -eq 4 ]
	[ "$(cat "$L/consumers.json")" = '{"version":1,"consumers":{"a":{"offset":1}}}' ]
}

@test "a consumers.json of a newer version is refused" {
	printf '{"version": 3}\n' > "$L/consumers.json"
	run "$B/elog-commit" --create "$L" a 2
	[ "$status" -eq 4 ]
	[ "$output" = "elog-commit: $L: consumers.json: format version 3, this build reads versions 1 and 2" ]
}

@test "stdin: the last plain offset is committed at EOF" {
	"$B/elog-commit" --create "$L" uplink
	printf '1\n2\n7\n' | "$B/elog-commit" "$L" uplink
	[ "$(committed uplink)" = 7 ]
}

@test "stdin: the latest offset wins even when it goes back" {
	"$B/elog-commit" --create "$L" uplink
	printf '7\n3\n' | "$B/elog-commit" "$L" uplink
	[ "$(committed uplink)" = 3 ]
}

@test "stdin: elog-cat's JSON lines" {
	"$B/elog-commit" --create "$L" uplink
	"$B/elog-cat" "$L" | "$B/elog-commit" "$L" uplink
	[ "$(committed uplink)" = 9 ]
}

@test "stdin: only the top-level offset member counts" {
	"$B/elog-commit" --create "$L" uplink
	printf '%s\n' '{"value":{"offset":99,"x":[{"offset":98}]},"s":"\"offset\":97","offset":2}' |
		"$B/elog-commit" "$L" uplink
	[ "$(committed uplink)" = 2 ]
	printf '%s\n' '{ "offset" : 5 , "value" : "{\"offset\":8}" }' | "$B/elog-commit" "$L" uplink
	[ "$(committed uplink)" = 5 ]
}

@test "stdin: blank lines, spaces, CR and a missing final newline" {
	"$B/elog-commit" --create "$L" uplink
	printf '\n  3 \r\n\n\t4' | "$B/elog-commit" "$L" uplink
	[ "$(committed uplink)" = 4 ]
}

@test "stdin: empty input commits nothing" {
	"$B/elog-commit" --create "$L" uplink
	run "$B/elog-commit" "$L" uplink < /dev/null
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(committed uplink)" = none ]
}

@test "stdin: a malformed line stops, after committing the lines before it" {
	"$B/elog-commit" --create "$L" c
	for bad in 'x' '-1' '1.5' '{"offset":-1}' '{"offset":1.0}' '{"offset":01}' \
	           '{"offset":"3"}' '{"value":1}' '{"offset":1,"offset":2}' '{"offset":1' \
	           '[1]' '18446744073709551616'; do
		run "$B/elog-commit" "$L" "c" <<-EOF
			3

			$bad
			4
		EOF
		[ "$status" -eq 2 ]
		[ "$output" = "elog-commit: stdin: line 3: not an offset or a JSON object with an \"offset\" member" ]
		[ "$(committed c)" = 3 ]
	done
}

@test "stdin: an offset above the durable end stops with status 2" {
	"$B/elog-commit" --create "$L" uplink
	run "$B/elog-commit" "$L" uplink <<-EOF
		1
		10
	EOF
	[ "$status" -eq 2 ]
	[ "$output" = "elog-commit: $L: offset 10 is at or above the durable end 10 of the log" ]
}

@test "stdin: a log that is not usable fails before reading" {
	mkdir "$T/plain"
	run "$B/elog-commit" "$T/plain" uplink < /dev/null
	[ "$status" -eq 5 ]
	[ "$output" = "elog-commit: $T/plain: not an elog directory (no settings file)" ]
}

@test "-T copies every input line to stdout unchanged" {
	"$B/elog-commit" --create "$L" uplink
	"$B/elog-cat" "$L" > "$T/in"
	printf '\n7 \r\n' >> "$T/in"
	printf '8' >> "$T/in"
	"$B/elog-commit" -T "$L" uplink < "$T/in" > "$T/out"
	cmp "$T/in" "$T/out"
	[ "$(committed uplink)" = 8 ]
	"$B/elog-commit" --create "$L" other
	"$B/elog-commit" --tee "$L" other < "$T/in" > "$T/out"
	cmp "$T/in" "$T/out"
}

@test "-T holds each line back until the commit that covers it" {
	"$B/elog-commit" --create "$L" uplink
	mkfifo "$T/in"
	"$B/elog-commit" -T --every 1h "$L" uplink < "$T/in" > "$T/out" &
	PID=$!
	exec 7> "$T/in"
	# The first line commits at once: nothing was committed before it.
	echo 1 >&7
	eventually grep -qx 1 "$T/out"
	[ "$(committed uplink)" = 1 ]
	# The next one waits for the hour, or for EOF.
	echo 2 >&7
	sleep 0.5
	[ "$(cat "$T/out")" = 1 ]
	[ "$(committed uplink)" = 1 ]
	exec 7>&-
	wait "$PID"
	PID=
	[ "$(cat "$T/out")" = "$(printf '1\n2')" ]
	[ "$(committed uplink)" = 2 ]
}

@test "--every 0s commits every line" {
	"$B/elog-commit" --create "$L" uplink
	mkfifo "$T/in"
	"$B/elog-commit" -e 0s "$L" uplink < "$T/in" &
	PID=$!
	exec 7> "$T/in"
	echo 4 >&7
	eventually committed_is uplink 4
	echo 6 >&7
	eventually committed_is uplink 6
	exec 7>&-
	wait "$PID"
	PID=
}

@test "--every coalesces: a commit at most every DUR" {
	"$B/elog-commit" --create "$L" uplink
	mkfifo "$T/in"
	"$B/elog-commit" --every 300ms "$L" uplink < "$T/in" &
	PID=$!
	exec 7> "$T/in"
	echo 1 >&7
	eventually committed_is uplink 1
	echo 2 >&7
	echo 3 >&7
	# Committed by the timer, without EOF.
	eventually committed_is uplink 3
	exec 7>&-
	wait "$PID"
	PID=
}

@test "a malformed --every is bad usage" {
	run "$B/elog-commit" --every 5 "$L" uplink
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: --every: invalid duration '5'" ]
}

@test "-T and --every with OFFSET are bad usage" {
	run "$B/elog-commit" -T "$L" uplink 1
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: -T and --every apply to standard input only" ]
	run "$B/elog-commit" -e 1s "$L" uplink 1
	[ "$status" -eq 2 ]
	[ "$(committed uplink)" = none ]
}

@test "SIGTERM commits the offset read so far, then ends by the signal" {
	"$B/elog-commit" --create "$L" uplink
	mkfifo "$T/in"
	"$B/elog-commit" --every 1h "$L" uplink < "$T/in" &
	PID=$!
	exec 7> "$T/in"
	echo 1 >&7
	eventually committed_is uplink 1
	echo 5 >&7
	sleep 0.3
	[ "$(committed uplink)" = 1 ]
	kill -TERM "$PID"
	status=0
	wait "$PID" || status=$?
	PID=
	[ "$status" -eq 143 ]
	exec 7>&-
	[ "$(committed uplink)" = 5 ]
}

@test "-T exits quietly when stdout is closed" {
	"$B/elog-commit" --create "$L" uplink
	run bash -c "seq 0 9 | '$B/elog-commit' -T -e 0s '$L' uplink | head -1"
	[ "$status" -eq 0 ]
	[ "$output" = 0 ]
}

@test "-l with no consumers prints nothing" {
	run "$B/elog-commit" -l "$L"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "-l: a header, then name, offset, lag and commit time, aligned, sorted by name" {
	"$B/elog-commit" --create "$L" uplink 3
	"$B/elog-commit" --create "$L" a 9
	run "$B/elog-commit" --list "$L"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "NAME   OFFSET LAG COMMITTED" ]
	[[ "${lines[1]}" =~ ^a\ {11}9\ \ \ 0\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$ ]]
	[[ "${lines[2]}" =~ ^uplink\ \ \ \ \ \ 3\ \ \ 6\ [0-9]{4}-[0-9]{2}-[0-9]{2}T ]]
}

@test "-l: the header widens with the columns, and is the same when piped" {
	"$B/elog-commit" --create "$L" a-consumer-with-a-long-name 9
	run bash -c "'$B/elog-commit' -l '$L' | cat"
	[ "${lines[0]}" = "NAME                        OFFSET LAG COMMITTED" ]
	[[ "${lines[1]}" =~ ^a-consumer-with-a-long-name\ {6}9\ \ \ 0\ [0-9]{4}- ]]
}

@test "-l --json has no header" {
	"$B/elog-commit" --create "$L" uplink 3
	run "$B/elog-commit" -l --json "$L"
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == '{"name":"uplink",'* ]]
}

@test "-l --json: one object per consumer" {
	"$B/elog-commit" --create "$L" uplink 3
	run "$B/elog-commit" -l --json "$L"
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^\{\"name\":\"uplink\",\"offset\":3,\"lag\":6,\"lost\":0,\"committed_ms\":[0-9]{13},\"next\":4\}$ ]]
}

@test "the lag grows as records become durable" {
	"$B/elog-commit" --create "$L" uplink 9
	seq 1 5 | "$B/elog-append" "$L"
	run "$B/elog-commit" -l --json "$L"
	[[ "$output" == '{"name":"uplink","offset":9,"lag":5,'* ]]
}

@test "--json without -l is bad usage" {
	run "$B/elog-commit" --json "$L" uplink 1
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: --json goes with -l" ]
}

@test "-l takes the directory only" {
	run "$B/elog-commit" -l "$L" uplink
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: unexpected argument 'uplink'" ]
	run "$B/elog-commit" -l
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: missing log directory" ]
}

@test "-l on a directory that is not a log fails" {
	mkdir "$T/plain"
	run "$B/elog-commit" -l "$T/plain"
	[ "$status" -eq 5 ]
	[ "$output" = "elog-commit: $T/plain: not an elog directory (no settings file)" ]
}

@test "-d DIR NAME deletes one consumer silently, as a commit orders them" {
	"$B/elog-commit" --create "$L" uplink 3
	"$B/elog-commit" --create "$L" other 4
	run "$B/elog-commit" -d "$L" uplink
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(committed uplink)" = none ]
	[ "$(committed other)" = 4 ]
	"$B/elog-commit" --delete "$L" other
	[ "$(committed other)" = none ]
}

@test "-d NAME DIR, the older order, still deletes" {
	"$B/elog-commit" --create "$L" uplink 3
	"$B/elog-commit" --create "$L" other 4
	"$B/elog-commit" --create "$L" third 5
	run "$B/elog-commit" -d uplink "$L"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(committed uplink)" = none ]
	"$B/elog-commit" --delete other "$L"
	[ "$(committed other)" = none ]
	"$B/elog-commit" --delete=third "$L"
	[ "$(committed third)" = none ]
}

@test "-d: a directory named like the consumer does not confuse the order" {
	"$B/elog-commit" --create "$L" uplink 3
	mkdir "$T/uplink"
	cd "$T"
	run "$B/elog-commit" -d log uplink
	[ "$status" -eq 0 ]
	[ "$(committed uplink)" = none ]
}

@test "-d of a consumer that does not exist is a negative answer" {
	run "$B/elog-commit" -d "$L" uplink
	[ "$status" -eq 1 ]
	[ "$output" = "elog-commit: $L: no consumer \"uplink\"" ]
}

@test "-d with an invalid name is bad usage" {
	run "$B/elog-commit" -d "$L" "a b"
	[ "$status" -eq 2 ]
	[[ "$output" == "elog-commit: $L: consumer name \"a b\": invalid consumer name"* ]]
}

@test "-d takes the directory and the name only" {
	run "$B/elog-commit" -d "$L" uplink 3
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: unexpected argument '3'" ]
	run "$B/elog-commit" -d "$L"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: missing consumer name" ]
	run "$B/elog-commit" --delete=uplink "$L" 3
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: unexpected argument '3'" ]
}

@test "--ack-loss takes DIR NAME; a consumer with no loss is left as it is" {
	"$B/elog-commit" --create "$L" uplink 3
	cp "$L/consumers.json" "$T/before"
	run "$B/elog-commit" --ack-loss "$L" uplink
	[ "$status" -eq 0 ] && [ "$output" = "" ]
	cmp "$L/consumers.json" "$T/before"
	[ ! -e "$L/consumers.lost" ]
	run "$B/elog-commit" --ack-loss "$L"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: missing consumer name" ]
	run "$B/elog-commit" --ack-loss "$L" "a b"
	[ "$status" -eq 2 ]
	run "$B/elog-commit" -T --ack-loss "$L" uplink
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: -T, --every and --create go with committing only" ]
}

@test "-l, -d and --log-id exclude each other and -T" {
	run "$B/elog-commit" -l -d "$L" uplink
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: -l, -d, --ack-loss and --log-id exclude each other" ]
	run "$B/elog-commit" -d --ack-loss "$L" uplink
	[ "$status" -eq 2 ]
	run "$B/elog-commit" -l --log-id "$L"
	[ "$status" -eq 2 ]
	run "$B/elog-commit" -T -l "$L"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: -T, --every and --create go with committing only" ]
}

@test "--log-id prints the log's stable id, the same after a move" {
	run "$B/elog-commit" --log-id "$L"
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^[0-9a-f]{32}$ ]]
	id=$output
	mv "$L" "$T/moved"
	run "$B/elog-commit" --log-id "$T/moved"
	[ "$output" = "$id" ]
}

@test "--log-id on a directory that is not a log fails" {
	mkdir "$T/plain"
	run "$B/elog-commit" --log-id "$T/plain"
	[ "$status" -eq 5 ]
	[[ "$output" == "elog-commit: $T/plain: "* ]]
}

@test "commits from many processes at once lose nothing" {
	for p in 1 2 3 4 5 6 7 8; do
		( for i in $(seq 0 9); do "$B/elog-commit" --create "$L" "c$p" "$i"; done ) &
	done
	wait
	[ "$("$B/elog-commit" -l --json "$L" | wc -l)" -eq 8 ]
	for p in 1 2 3 4 5 6 7 8; do
		[ "$(committed "c$p")" = 9 ]
	done
}

# Wait up to 10 s until someone holds a lock on file $1.
held() {
	for _ in $(seq 1000); do
		flock -n -x "$1" true 2>/dev/null || return 0
		nap 0.01
	done
	return 1
}

@test "a commit waits 10 s at most for consumers.lock, then exits 3 naming the holder" {
	"$B/elog-commit" --create "$L" app 3
	# A holder that never lets go, its pid in the file as a commit's is.
	sh -c 'echo $$ >"$1"; exec 9<"$1"; flock -x 9; exec sleep 600' sh \
		"$L/consumers.lock" 3>&- &
	PID=$!
	held "$L/consumers.lock"
	run timeout 60 "$B/elog-commit" --create "$L" app 5
	[ "$status" -eq 3 ]
	[ "$output" = "elog-commit: $L: timed out after 10000 ms waiting for consumers.lock (pid $PID holds or last held it)" ]
	[ "$(committed app)" = 3 ]
	# Once it is gone, commits go through.
	kill "$PID"
	wait "$PID" || true
	"$B/elog-commit" --create "$L" app 5
	[ "$(committed app)" = 5 ]
}

@test "a commit stopped while it holds consumers.lock does not hang the others" {
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	"$B/elog-commit" --create "$L" other
	# Stopped at its first fsync, the temporary file's: under the lock,
	# as ^Z catches an elog-cat -g ... | elog-commit pipeline.
	strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:signal=SIGSTOP:when=1 \
		"$B/elog-commit" --create "$L" app 3 3>&- &
	PID=$!
	STOPPED=$(stopped_child "$PID")
	[ -n "$STOPPED" ]
	run timeout 60 "$B/elog-commit" --create "$L" other 4 </dev/null
	[ "$status" -eq 3 ]
	[ "$output" = "elog-commit: $L: timed out after 10000 ms waiting for consumers.lock (pid $STOPPED holds or last held it; it is stopped: kill -CONT $STOPPED resumes it)" ]
	# And when the offsets come on standard input.
	run timeout 60 sh -c "echo 4 | '$B/elog-commit' '$L' other"
	[ "$status" -eq 3 ]
	[ "$output" = "elog-commit: $L: timed out after 10000 ms waiting for consumers.lock (pid $STOPPED holds or last held it; it is stopped: kill -CONT $STOPPED resumes it)" ]
	kill -CONT "$STOPPED"
	wait "$PID"
	[ "$(committed app)" = 3 ]
	[ "$(committed other)" = none ]
	"$B/elog-commit" --create "$L" other 4
	[ "$(committed other)" = 4 ]
}

@test "a commit to a consumer that does not exist is refused, naming --create" {
	run --separate-stderr "$B/elog-commit" "$L" shiper 4
	[ "$status" -eq 1 ]
	[ "$stderr" = "elog-commit: $L: no consumer \"shiper\" (elog-commit -l lists them); to make it: elog-commit --create $L shiper" ]
	[ ! -e "$L/consumers.json" ]
	# From standard input, before anything is read.
	run --separate-stderr "$B/elog-commit" "$L" shiper <<<"4"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"to make it: elog-commit --create $L shiper" ]]
	[ -z "$("$B/elog-commit" -l "$L")" ]
	# A directory that needs quoting is quoted in the command.
	mkdir "$T/my logs"
	seq 3 | "$B/elog-append" "$T/my logs/l"
	run --separate-stderr "$B/elog-commit" "$T/my logs/l" shiper 1
	[ "$stderr" = "elog-commit: $T/my logs/l: no consumer \"shiper\" (elog-commit -l lists them); to make it: elog-commit --create '$T/my logs/l' shiper" ]
}

@test "--create makes a consumer before the first record, once" {
	run "$B/elog-commit" --create "$L" shipper </dev/null
	[ "$status" -eq 0 ] && [ -z "$output" ]
	grep -q '"version": 2' "$L/consumers.json"
	grep -q '"shipper": {"next": 0, "created_ms": [0-9]*}' "$L/consumers.json"
	run "$B/elog-commit" -l "$L"
	[ "${lines[0]}" = "NAME    OFFSET LAG COMMITTED" ]
	[[ "${lines[1]}" =~ ^shipper\ \ \ \ \ \ -\ \ 10\ never\ \(created\ [0-9T:.-]+Z\)$ ]]
	[ "$("$B/elog-commit" -l --json "$L" | jq -c '[.offset, .next, .lag, .committed_ms]')" = '[null,0,10,null]' ]
	[ "$("$B/elog-cat" -L --json "$L" | jq -c '.consumers[0] | [.offset, .next, .lag, .committed]')" = '[null,0,10,null]' ]
	[[ "$("$B/elog-cat" -L "$L" | tail -1)" == "    shipper: not yet committed, from offset 0, lag 10, created "* ]]
	# elog-cat -g reads from the first record, without a word.
	run --separate-stderr "$B/elog-cat" -v -g shipper "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ] && [ "$output" = "$(seq 1 10)" ]
	run elog-verify "$L"
	[ "$status" -eq 0 ] && [ -z "$output" ]
	# A commit makes it a consumer like any other, in a file of version 1.
	"$B/elog-commit" "$L" shipper 4
	[ "$(committed shipper)" = 4 ]
	grep -q '"version": 1' "$L/consumers.json"
	# Made again, it is left as it is.
	"$B/elog-commit" --create "$L" shipper
	[ "$(committed shipper)" = 4 ]
	# --create with an offset commits it, as a commit did before.
	"$B/elog-commit" --create "$L" other 2
	[ "$(committed other)" = 2 ]
	# A refused offset makes no consumer.
	run "$B/elog-commit" --create "$L" third 10
	[ "$status" -eq 2 ]
	[ "$(committed third)" = none ]
	run "$B/elog-commit" --create -T "$L" shipper
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-commit: --create reads no standard input: not with -T or --every" ]
}

@test "a consumers.json of version 1, as older builds wrote it, is read and kept at version 1" {
	printf '{"version":1,"consumers":{"a":{"offset":3,"committed_ms":1764385200000}}}' > "$L/consumers.json"
	[ "$(committed a)" = 3 ]
	"$B/elog-commit" "$L" a 5
	grep -q '"version": 1' "$L/consumers.json"
	# Version 2 refuses the members of the other form in an entry.
	printf '{"version":2,"consumers":{"a":{"next":0,"committed_ms":1}}}' > "$L/consumers.json"
	run "$B/elog-commit" -l "$L"
	[ "$status" -eq 4 ]
	[[ "$output" == *"consumers.json: byte "*": unknown member"* ]]
	printf '{"version":1,"consumers":{"a":{"next":0,"created_ms":1}}}' > "$L/consumers.json"
	run "$B/elog-commit" -l "$L"
	[ "$status" -eq 4 ]
}
