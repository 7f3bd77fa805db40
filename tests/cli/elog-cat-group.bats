#!/usr/bin/env bats
# elog-cat -g NAME: reading as a consumer, from just after its committed
# offset, with the gaps and errors a consumer must hear about.

load helpers

ten() {
	seq 0 9 | elog-append "$LOG"
}

@test "cat -g: resumes exactly after the committed offset" {
	ten
	elog-commit --create "$LOG" uplink 4
	run --separate-stderr elog-cat -g uplink -F '%o ' "$LOG"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[ "$output" = "5 6 7 8 9 " ]
}

@test "cat -g: a consumer that never committed starts at the beginning, and says so" {
	ten
	run --separate-stderr elog-cat -g newcomer -c 3 -F '%o ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "0 1 2 " ]
	[ "$stderr" = "elog-cat: $LOG: consumer \"newcomer\" has committed nothing: a new consumer, reading from the beginning of the log" ]
}

@test "cat -g --existing: a consumer that never committed is refused" {
	ten
	run --separate-stderr elog-cat -g newcomer --existing "$LOG"
	[ "$status" -eq 1 ]
	[ "$output" = "" ]
	[ "$stderr" = "elog-cat: $LOG: no consumer \"newcomer\" (without --existing, it would start at the beginning of the log)" ]
	elog-commit --create "$LOG" newcomer 7
	run --separate-stderr elog-cat -g newcomer --existing -F '%o ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "8 9 " ]
	[ "$stderr" = "" ]
}

@test "cat --existing goes with -g" {
	ten
	usage_error elog-cat '--existing goes with -g' --existing "$LOG"
}

@test "cat -g: a consumer at the end prints nothing" {
	ten
	elog-commit --create "$LOG" uplink 9
	run --separate-stderr elog-cat -g uplink "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
}

@test "cat -g: moving the committed offset back replays" {
	ten
	elog-commit --create "$LOG" uplink 8
	elog-commit --create "$LOG" uplink 1
	run elog-cat -g uplink -c 2 -F '%o ' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "2 3 " ]
}

@test "cat -g: follows new records after the committed offset" {
	ten
	elog-commit --create "$LOG" uplink 7
	background elog-cat -g uplink -f -F '%o\n' "$LOG" >"$T/out"
	wait_lines "$T/out" 2
	seq 10 12 | elog-append "$LOG"
	wait_lines "$T/out" 5
	[ "$(tr '\n' ' ' <"$T/out")" = "8 9 10 11 12 " ]
}

@test "cat -g: records removed by retention after the committed offset are a gap" {
	seq 0 299 | elog-append --segment-bytes 4K "$LOG"
	elog-commit --create "$LOG" slow 5
	elog-retain --max-bytes 8K "$LOG"
	first=$(elog-cat -c 1 -F '%o' "$LOG")
	[ "$first" -gt 6 ]
	run --separate-stderr elog-cat -g slow -c 1 -F '%o' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "$first" ]
	[ "$stderr" = "elog-cat: $LOG: offsets 6-$((first - 1)) were removed by retention" ]
	run --separate-stderr elog-cat -g slow --strict "$LOG"
	[ "$status" -eq 1 ] && [ "$output" = "" ]
}

@test "cat -g: an invalid consumer name is a usage error" {
	ten
	run --separate-stderr elog-cat -g 'no spaces' "$LOG"
	[ "$status" -eq 2 ] && [ "$output" = "" ]
	[ "${stderr%%$'\n'*}" = "elog-cat: -g: invalid consumer name 'no spaces'" ]
}

@test "cat -g: cannot be combined with another start position" {
	ten
	run --separate-stderr elog-cat -g uplink -n 2 "$LOG"
	[ "$status" -eq 2 ]
	[ "${stderr%%$'\n'*}" = "elog-cat: -g and -n cannot be used together" ]
}

@test "cat -g: a damaged consumers.json is an error, not a silent start" {
	ten
	elog-commit --create "$LOG" uplink 3
	printf '{"version":1,"consumers":{"uplink":' >"$LOG/consumers.json"
	run --separate-stderr elog-cat -g uplink "$LOG"
	[ "$status" -eq 4 ] && [ "$output" = "" ]
	[[ "$stderr" == "elog-cat: $LOG: consumers.json: "* ]]
}

@test "cat -g: a consumer ahead of the log is data loss, with the command that goes on" {
	ten
	printf '{"version":1,"consumers":{"uplink":{"offset":50,"committed_ms":1}}}\n' \
		>"$LOG/consumers.json"
	run --separate-stderr elog-cat -g uplink "$LOG"
	[ "$status" -eq 4 ]
	[ "$output" = "" ]
	[ "$stderr" = "elog-cat: $LOG: consumer \"uplink\" committed offset 50, but the log ends at 10: records it read were lost; to go on with the records to come: elog-commit $LOG uplink 9" ]
	# The command given works: the consumer goes on with what comes.
	${stderr##*: }
	echo 10 | elog-append "$LOG"
	run --separate-stderr elog-cat -g uplink -F '%o ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "10 " ]
	[ "$stderr" = "" ]
}

@test "cat -g: a consumer ahead of an empty log: the command that starts it over" {
	elog-append "$LOG" </dev/null
	printf '{"version":1,"consumers":{"uplink":{"offset":5,"committed_ms":1}}}\n' \
		>"$LOG/consumers.json"
	run --separate-stderr elog-cat -g uplink "$LOG"
	[ "$status" -eq 4 ]
	[ "$output" = "" ]
	[ "$stderr" = "elog-cat: $LOG: consumer \"uplink\" committed offset 5, but the log is empty: records it read were lost; to start it over: elog-commit -d uplink $LOG" ]
	${stderr##*: }
	run --separate-stderr elog-cat -g uplink --existing "$LOG"
	[ "$status" -eq 1 ]
}
