#!/usr/bin/env bats
# elog-cat --since and --until: exactly the records whose timestamp lies
# in the window, in offset order, on a log written by several producers
# whose clocks disagree, compared with what jq selects from the whole log;
# with -c, -n, -k and --reverse.

load helpers

# Three producers writing at once with `elog-append -t`, each with its own
# clock (on time, 1.5 s behind, 2.5 s ahead) jittering by up to 0.3 s:
# 900 records whose timestamps go back and forth, in small segments with a
# dense index, so that windows cross segments and index stretches.
three_writers() {
	local w skew
	elog-append --segment-bytes 8K --index-interval 256 "$LOG" </dev/null
	for w in 0 1 2; do
		skew=$(( w == 1 ? -1500 : w == 2 ? 2500 : 0 ))
		awk -v w="$w" -v skew="$skew" 'BEGIN { srand(7 + w)
			for (i = 0; i < 300; i++) {
				t = 1000000 + i * 100 + skew + int(rand() * 600) - 300
				printf "%d\tw%d-%d\n", t, w, i
			} }' >"$T/w$w"
	done
	for w in 0 1 2; do
		elog-append -t --batch 7 "$LOG" <"$T/w$w" 3>&- &
	done
	wait
	elog-cat "$LOG" >"$T/all"
	[ "$(wc -l <"$T/all")" -eq 900 ]
	[ "$(ls "$LOG" | grep -c '\.log$')" -gt 3 ]
	# The clocks disagree: many records are older than one before them.
	[ "$(jq -s '[range(1; length) as $i | select(.[$i].ts < .[$i - 1].ts)] | length' \
		"$T/all")" -gt 50 ]
}

# What jq selects from the whole log for the window [A, B].
selected() {
	jq -c "select(.ts >= $1 and .ts <= $2)" "$T/all"
}

# Windows: before every record, around the start, in the middle (where the
# three clocks overlap), across segments, one millisecond, the end, after
# every record.
WINDOWS="0:999999 998000:1001000 1005000:1010000 1012345:1012345
1010000:1022000 1020000:1031000 1029500:1040000 1040000:1050000"

@test "window: --since A --until B prints what jq selects from the whole log" {
	three_writers
	local w a b n=0
	for w in $WINDOWS; do
		a=${w%:*} b=${w#*:}
		run --separate-stderr elog-cat --since "@$a" --until "@$b" "$LOG"
		[ "$status" -eq 0 ] && [ "$stderr" = "" ]
		[ "$output" = "$(selected "$a" "$b")" ]
		n=$((n + ${#lines[@]}))
	done
	[ "$n" -gt 500 ]	# the windows hold records, not only nothing
}

@test "window: --since alone prints no older record, --until alone misses none" {
	three_writers
	local t
	for t in 1001000 1015000 1029000; do
		[ "$(elog-cat --since "@$t" "$LOG")" = "$(selected "$t" 9999999999999)" ]
		[ "$(elog-cat --until "@$t" "$LOG")" = "$(selected -9999999999999 "$t")" ]
	done
	# The first record at or after the time is where --since starts:
	# records after it that are older are left out.
	[ -z "$(elog-cat --since @1015000 -F '%T\n' "$LOG" | awk '$1 < 1015000')" ]
	[ -z "$(elog-cat --until @1015000 -F '%T\n' "$LOG" | awk '$1 > 1015000')" ]
}

@test "window: -c COUNT prints the first COUNT records of the window" {
	three_writers
	local w a b
	for w in $WINDOWS; do
		a=${w%:*} b=${w#*:}
		[ "$(elog-cat --since "@$a" --until "@$b" -c 17 "$LOG")" = \
		  "$(selected "$a" "$b" | head -n 17)" ]
	done
	[ "$(elog-cat --until @1015000 -c 5 "$LOG")" = \
	  "$(selected -9999999999999 1015000 | head -n 5)" ]
}

@test "window: -n COUNT prints the last COUNT records of the window, oldest first" {
	three_writers
	local w a b
	for w in $WINDOWS; do
		a=${w%:*} b=${w#*:}
		[ "$(elog-cat --since "@$a" --until "@$b" -n 17 "$LOG")" = \
		  "$(selected "$a" "$b" | tail -n 17)" ]
		[ "$(elog-cat -n 5 --since "@$a" --until "@$b" "$LOG")" = \
		  "$(selected "$a" "$b" | tail -n 5)" ]
	done
	[ "$(elog-cat -n 9 --until @1015000 "$LOG")" = \
	  "$(selected -9999999999999 1015000 | tail -n 9)" ]
	[ "$(elog-cat -n 9 --since @1015000 "$LOG")" = \
	  "$(selected 1015000 9999999999999 | tail -n 9)" ]
	# -n with -o or -g still says where to start on its own.
	usage_error elog-cat "-n and -o cannot be used together" -n 1 --since @1 -o 3 "$LOG"
}

@test "window: with -k, and newest first with --reverse" {
	three_writers
	local w a b
	for w in $WINDOWS; do
		a=${w%:*} b=${w#*:}
		[ "$(elog-cat --since "@$a" --until "@$b" --reverse "$LOG")" = \
		  "$(selected "$a" "$b" | tac)" ]
		[ "$(elog-cat --since "@$a" --until "@$b" --reverse -n 4 "$LOG")" = \
		  "$(selected "$a" "$b" | tac | head -n 4)" ]
	done
	# Keys: the records of one producer, by its key.
	elog-append -t -K : "$LOG" <<-'EOF'
		1012000	w1:late
		1011000	w2:later
		EOF
	elog-cat "$LOG" >"$T/all"
	[ "$(elog-cat --since @1010000 --until @1013000 -k w1 "$LOG")" = \
	  "$(selected 1010000 1013000 | jq -c 'select(.key == "w1")')" ]
	[ "$(elog-cat --since @1010000 --until @1013000 -k w1 -F '%s\n' "$LOG" | tail -n 1)" = late ]
	[ "$(elog-cat -n 1 -k w1 --until @1013000 -v "$LOG")" = late ]
	[ "$(elog-cat --reverse -k w1 --until @1013000 -v "$LOG")" = late ]
	# Newest first from an offset: the window at or below it.
	[ "$(elog-cat --reverse -o 450 --until @1020000 "$LOG")" = \
	  "$(selected -9999999999999 1020000 | jq -c 'select(.offset <= 450)' | tac)" ]
	[ "$(elog-cat --reverse -o 800 --until @1012000 -c 9 "$LOG")" = \
	  "$(selected -9999999999999 1012000 | jq -c 'select(.offset <= 800)' | tac | head -n 9)" ]
}

@test "window: an empty window prints nothing and is no error; -k that matches none is 1" {
	three_writers
	run --separate-stderr elog-cat --since @1020000 --until @1010000 "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	run --separate-stderr elog-cat --since @2000000 "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
	run --separate-stderr elog-cat --since @1010000 --until @1013000 -k nope "$LOG"
	[ "$status" -eq 1 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
}

@test "window: --since later than --until is bad usage, not an empty answer" {
	seq 3 | elog-append "$LOG"
	run --separate-stderr elog-cat --since 2026-12-01 --until 2026-11-30 "$LOG"
	[ "$status" -eq 2 ] && [ "$output" = "" ]
	[ "$stderr" = "elog-cat: --since 2026-12-01 is later than --until 2026-11-30: nothing lies between
Try 'elog-cat --help'." ]
	run --separate-stderr elog-cat --reverse --since -1h --until -2h "$LOG"
	[ "$status" -eq 2 ]
	# One instant is a window.
	run elog-cat -v --since @0 --until @0 "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
	grep -q 'later than' "$BATS_TEST_DIRNAME/../../man/elog-cat.1"
}
