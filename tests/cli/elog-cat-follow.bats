#!/usr/bin/env bats
# elog-cat -f: following a log while it is written.

load helpers

# Start elog-cat with the given options following $LOG into $T/out; its pid
# goes to $FOLLOWER.
follow() {
	background elog-cat "$@" "$LOG" >"$T/out" 2>"$T/err" </dev/null
	FOLLOWER=${BG_PIDS##* }
}

# Wait for the follower to exit by itself and check its status.
follower_exits_with() {
	local st=0
	wait_exit "$FOLLOWER"
	wait "$FOLLOWER" || st=$?
	BG_PIDS=
	[ "$st" -eq "$1" ] || { echo "status $st, stderr: $(cat "$T/err")" >&2; return 1; }
}

# Move $LOG away to $T/old and $1 in its place, with the follower stopped
# meanwhile.  A follower that looks between the two renames gives the
# second 200 ms to come before it calls the log moved, not replaced; two
# mv(1) processes on a loaded machine may take longer than that.
replace_stopped() {
	kill -STOP "$FOLLOWER"
	mv "$LOG" "$T/old"
	mv "$1" "$LOG"
	kill -CONT "$FOLLOWER"
}

@test "follow: prints what is there, then new records across segment rolls and writers" {
	seq -f '%098g' 0 9 | elog-append --segment-bytes 4K "$LOG"
	follow -f -v
	wait_lines "$T/out" 10
	# Each run of elog-append is a new writer; 100 records of 126 bytes
	# fill several 4 KiB segments.
	local i
	for i in 1 2 3; do
		seq -f '%098g' $((i * 100 - 90)) $((i * 100 + 9)) | elog-append "$LOG"
	done
	wait_lines "$T/out" 310
	[ "$(ls "$LOG" | grep -c '\.log$')" -ge 10 ]
	cmp "$T/out" <(seq -f '%098g' 0 309)
	kill -0 "$FOLLOWER"
	[ ! -s "$T/err" ]
}

@test "follow: each new record arrives promptly, without waiting for a timeout" {
	# Woken by the watermark's change, not found by a periodic look: each
	# record is read after a wait that ended with an event (strace), so the
	# test says how the follower waits, not how fast a busy machine is.
	command -v strace >/dev/null || skip "strace is not installed"
	echo a | elog-append "$LOG"
	# -c 4: it ends by itself after the last record, and strace with it.
	background strace -f -e trace=poll,ppoll -o "$T/trace" elog-cat -f -c 4 -F '%s\n' "$LOG" \
		>"$T/out" 2>"$T/err" </dev/null
	local tracer=${BG_PIDS##* }
	wait_lines "$T/out" 1
	local i
	for i in 1 2 3; do
		echo "r$i" | elog-append "$LOG"
		wait_lines "$T/out" $((i + 1))
	done
	[ "$(cat "$T/out")" = $'a\nr1\nr2\nr3' ]
	wait_exit "$tracer"
	# At least one wait per record ended with its descriptor readable.
	[ "$(grep -c 'revents=POLLIN' "$T/trace")" -ge 3 ]
}

@test "follow: waiting costs no CPU" {
	echo a | elog-append "$LOG"
	follow -f
	wait_lines "$T/out" 1
	local before after
	before=$(awk '{print $14 + $15}' "/proc/$FOLLOWER/stat")
	sleep 1.5
	after=$(awk '{print $14 + $15}' "/proc/$FOLLOWER/stat")
	# Clock ticks are usually 10 ms; a busy loop would use about 150.
	[ $((after - before)) -le 3 ]
}

@test "follow: -n N prints the last N records, then new ones" {
	seq 0 9 | elog-append "$LOG"
	follow -f -n 2 -v
	wait_lines "$T/out" 2
	seq 10 11 | elog-append "$LOG"
	wait_lines "$T/out" 4
	[ "$(cat "$T/out")" = $'8\n9\n10\n11' ]
}

@test "follow: -o end prints only new records" {
	seq 0 9 | elog-append "$LOG"
	follow -f -o end -F '%o:%s\n'
	# Give the follower time to position itself before appending.
	sleep 0.2
	echo new | elog-append "$LOG"
	wait_lines "$T/out" 1
	[ "$(cat "$T/out")" = "10:new" ]
}

@test "follow: an empty log, then records" {
	elog-append "$LOG" </dev/null
	follow --follow -v
	sleep 0.1
	printf 'a\nb\n' | elog-append "$LOG"
	wait_lines "$T/out" 2
	[ "$(cat "$T/out")" = $'a\nb' ]
}

@test "follow: -c COUNT exits once COUNT records were printed" {
	echo a | elog-append "$LOG"
	follow -f -c 3 -v
	wait_lines "$T/out" 1
	kill -0 "$FOLLOWER"
	printf 'b\nc\nd\n' | elog-append "$LOG"
	follower_exits_with 0
	[ "$(cat "$T/out")" = $'a\nb\nc' ] && [ ! -s "$T/err" ]
}

@test "follow: --until prints what is at or before TIME in any order, and ends by the clock" {
	# TIME was 4 s ago: the follower ends at its grace, 6 s from now.
	local t=$(($(now_ms) - 4000))
	printf '%s\ta\n' $((t - 1000)) | elog-append -t "$LOG"
	follow -f --until "@$t" -v
	wait_lines "$T/out" 1
	printf '%s\tb\n' $t | elog-append -t "$LOG"
	wait_lines "$T/out" 2
	# A later record does not end it: one stamped before TIME may follow
	# from another producer, and is printed.
	printf '%s\tc\n%s\td\n' $((t + 1)) $((t - 5)) | elog-append -t "$LOG"
	wait_lines "$T/out" 3
	follower_ends_with 0
	[ "$(cat "$T/out")" = $'a\nb\nd' ]
	[ "$(now_ms)" -ge $((t + 10000)) ]
}

@test "follow: -k filters new records too" {
	printf 'a:1\nb:2\n' | elog-append -K : "$LOG"
	follow -f -k b -v
	wait_lines "$T/out" 1
	printf 'a:3\nb:4\n' | elog-append -K : "$LOG"
	wait_lines "$T/out" 2
	[ "$(cat "$T/out")" = $'2\n4' ]
}

@test "follow: SIGTERM ends it with status 0, SIGINT kills it as tail -f; output flushed" {
	seq 1 3 | elog-append "$LOG"
	follow -f -v
	wait_lines "$T/out" 3
	kill -TERM "$FOLLOWER"
	follower_exits_with 0
	[ "$(cat "$T/out")" = $'1\n2\n3' ] && [ ! -s "$T/err" ]
	follow -f -v
	wait_lines "$T/out" 3
	kill -INT "$FOLLOWER"
	follower_exits_with 130
	[ "$(cat "$T/out")" = $'1\n2\n3' ] && [ ! -s "$T/err" ]
	# As with tail -f, an interrupted pipeline in a script is seen as
	# interrupted: bash reports the status of a process killed by SIGINT.
	run bash -c 'elog-cat -f -v "$1" & p=$!; sleep 0.5; kill -INT $p; wait $p' _ "$LOG"
	[ "$status" -eq 130 ] && [ "$output" = $'1\n2\n3' ]
	[ "$(cat "$T/out")" = $'1\n2\n3' ] && [ ! -s "$T/err" ]
}

@test "follow: a closed stdout ends it quietly while it waits" {
	echo a | elog-append "$LOG"
	# It must notice by itself: a follower that waited on would be
	# killed by timeout (status 124).
	run bash -c 'timeout 60 elog-cat -f -v "$1" 2>"$2" | head -1; echo "${PIPESTATUS[0]}"' _ "$LOG" "$T/err"
	[ "$output" = $'a\n0' ] && [ ! -s "$T/err" ]
}

@test "follow: into jq, a record at a time" {
	echo '{"n":1}' | elog-append "$LOG"
	background bash -c 'elog-cat -f "$1" | jq --unbuffered -c .value.n >"$2"' _ "$LOG" "$T/out"
	wait_lines "$T/out" 1
	echo '{"n":2}' | elog-append "$LOG"
	wait_lines "$T/out" 2
	[ "$(cat "$T/out")" = $'1\n2' ]
}

@test "follow: --strict ends following at a gap" {
	seq -f '%098g' 0 99 | elog-append --segment-bytes 4K "$LOG"
	follow -f --strict -o 0 -c 1 -F '%o\n'
	follower_exits_with 0
	[ "$(cat "$T/out")" = 0 ]
	local second
	second=$(ls "$LOG" | grep '\.log$' | sed -n 2p)
	second=$((10#${second%.log}))
	rm "$LOG"/00000000000000000000.*
	follow -f --strict -o 0 -F '%o\n'
	follower_exits_with 1
	[ ! -s "$T/out" ]
	[ "$(cat "$T/err")" = "elog-cat: $LOG: offsets 0-$((second - 1)) were removed by retention" ]
}

@test "follow: a deleted log ends -f with an error, not a wait on deleted files" {
	seq 1 3 | elog-append "$LOG"
	follow -f -v
	wait_lines "$T/out" 3
	rm -rf "$LOG"
	follower_exits_with 5
	[ "$(cat "$T/err")" = "elog-cat: $LOG: the log was deleted" ]
	[ "$(cat "$T/out")" = $'1\n2\n3' ]
}

@test "follow: a log replaced by another of the same name ends -f with an error" {
	seq 1 3 | elog-append "$LOG"
	follow -f -v
	wait_lines "$T/out" 3
	seq 7 8 | elog-append "$T/new"
	replace_stopped "$T/new"
	follower_exits_with 5
	[ "$(cat "$T/err")" = "elog-cat: $LOG: the log was replaced by another directory" ]
	[ "$(cat "$T/out")" = $'1\n2\n3' ]
}

@test "follow: --follow=name goes on with the new log that replaces a deleted one" {
	seq 1 3 | elog-append "$LOG"
	follow --follow=name -v
	wait_lines "$T/out" 3
	rm -rf "$LOG"
	wait_lines "$T/err" 1
	seq 10 11 | elog-append "$LOG"
	wait_lines "$T/out" 5
	# And the same when one is moved in place of the other.
	seq 20 21 | elog-append "$T/new"
	replace_stopped "$T/new"
	wait_lines "$T/err" 2
	wait_lines "$T/out" 7
	echo 22 | elog-append "$LOG"
	wait_lines "$T/out" 8
	[ "$(cat "$T/out")" = "$(printf '%s\n' 1 2 3 10 11 20 21 22)" ]
	grep -q "the log was deleted; following the new log of that name" "$T/err" || { cat "$T/err"; false; }
	grep -q "the log was replaced by another directory; following the new log" "$T/err"
	kill -0 "$FOLLOWER"
}

@test "follow: a log deleted while the follower looks at it is deleted, not replaced" {
	seq 1 3 | elog-append "$LOG"
	# The shim stops the follower's look at the directory, once its
	# files are gone, until $T/stall is removed: the directory goes
	# meanwhile, as rm -rf's last step.
	background env LD_PRELOAD="$ELOG_BIN/tests/dirstall.so" ELOG_TEST_DIR_STALL="$T/stall" \
		ASAN_OPTIONS=verify_asan_link_order=0 elog-cat --follow=name -v "$LOG" \
		>"$T/out" 2>"$T/err" </dev/null
	FOLLOWER=${BG_PIDS##* }
	wait_lines "$T/out" 3
	rm "$LOG"/*
	wait_lines "$T/stall" 0
	rmdir "$LOG"
	rm "$T/stall"
	wait_lines "$T/err" 1
	[ "$(cat "$T/err")" = "elog-cat: $LOG: the log was deleted; following the new log of that name" ]
	kill -0 "$FOLLOWER"
}

@test "follow: --follow=name waits for a log that does not exist yet" {
	follow --follow=name -v
	sleep 0.3
	kill -0 "$FOLLOWER"
	seq 1 2 | elog-append "$LOG"
	wait_lines "$T/out" 2
	[ "$(cat "$T/out")" = $'1\n2' ]
	kill -TERM "$FOLLOWER"
	follower_exits_with 0
	[ ! -s "$T/err" ]
}

@test "follow: without --follow=name, a log that does not exist is an error" {
	run -5 timeout 10 elog-cat -f "$LOG"
	[[ "$output" == "elog-cat: $LOG: "* ]]
}

@test "follow: --follow takes name or descriptor only" {
	run -2 timeout 10 elog-cat --follow=path "$LOG"
	[[ "$output" == *"--follow: expected 'name' or 'descriptor', not 'path'"* ]]
	seq 1 2 | elog-append "$LOG"
	run -0 timeout 10 elog-cat --follow=descriptor -c 2 -v "$LOG"
	[ "$output" = $'1\n2' ]
}

# Wait for the follower to exit by itself, for at most 30 seconds (for
# the clock rules of --idle and --until), and check its status.
follower_ends_with() {
	local st=0 i
	for i in $(seq 300); do
		kill -0 "$FOLLOWER" 2>/dev/null || break
		nap 0.1
	done
	if kill -0 "$FOLLOWER" 2>/dev/null; then
		echo "the follower did not end by itself" >&2
		return 1
	fi
	wait "$FOLLOWER" || st=$?
	BG_PIDS=
	[ "$st" -eq "$1" ] || { echo "status $st, stderr: $(cat "$T/err")" >&2; return 1; }
}

@test "follow: --idle ends a quiet follower with status 0" {
	seq 1 3 | elog-append "$LOG"
	follow -f --idle 500ms -v
	follower_ends_with 0
	[ "$(cat "$T/out")" = $'1\n2\n3' ]
	[ ! -s "$T/err" ]
}

@test "follow: --idle counts from the last record printed" {
	echo 1 | elog-append "$LOG"
	follow -f --idle 4s -v
	wait_lines "$T/out" 1
	# Each record comes within 4 s of the one before, the last well
	# after 4 s from the start: only a follower whose wait starts over
	# at each record prints it.
	sleep 2; echo 2 | elog-append "$LOG"
	sleep 2; echo 3 | elog-append "$LOG"
	sleep 2; echo 4 | elog-append "$LOG"
	follower_ends_with 0
	[ "$(cat "$T/out")" = $'1\n2\n3\n4' ]
}

@test "follow: --idle with -k: records of other keys are not news" {
	echo a:1 | elog-append -K : "$LOG"
	follow -f -k a --idle 1s -v
	# Records of key b keep coming, for far longer than the idle time.
	for i in $(seq 100); do
		kill -0 "$FOLLOWER" 2>/dev/null || break
		echo "b:$i" | elog-append -K : "$LOG"
		nap 0.1
	done
	follower_ends_with 0
	[ "$i" -lt 100 ]
	[ "$(cat "$T/out")" = 1 ]
}

@test "follow: --idle goes with -f" {
	seq 1 3 | elog-append "$LOG"
	usage_error elog-cat '--idle goes with -f (without it, elog-cat ends at the end of the log)' \
		--idle 1s "$LOG"
	usage_error elog-cat "--idle: invalid duration 'soon'" -f --idle soon "$LOG"
}

@test "follow: -f --until ends on a quiet log once the clock has passed the time" {
	printf '1000\tone\n2000\ttwo\n' | elog-append -t "$LOG"
	run --separate-stderr timeout 20 elog-cat -f --until @3000 -v "$LOG"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = $'one\ntwo' ]
}

@test "follow: -f --until waits out the grace for records at or before the time" {
	local t=$(($(now_ms) - 5000))
	printf '%s\told\n' $((t - 10)) | elog-append -t "$LOG"
	follow -f --until "@$t" -v
	wait_lines "$T/out" 1
	# Stamped before the time, made durable after it: still printed.
	printf '%s\tlate\n' $((t - 1)) | elog-append -t "$LOG"
	wait_lines "$T/out" 2
	follower_ends_with 0
	[ "$(cat "$T/out")" = $'old\nlate' ]
	# Never before the grace of 10 s after the time.
	[ "$(now_ms)" -ge $((t + 10000)) ]
}

@test "follow: a log renamed away ends -f saying where it went" {
	seq 1 3 | elog-append "$LOG"
	follow -f -v
	wait_lines "$T/out" 3
	mv "$LOG" "$T/old"
	follower_exits_with 5
	[ "$(cat "$T/err")" = "elog-cat: $LOG: the log was moved to $(realpath "$T/old")" ]
}
