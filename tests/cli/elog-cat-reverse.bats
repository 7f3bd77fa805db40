#!/usr/bin/env bats
# elog-cat --reverse: newest first, back to the first record, over
# compaction holes and segment boundaries, with -n, -c, -k, -o, --since
# and --until, and the options it refuses.

load helpers

# A log of five records with known timestamps, keys and schemas.
five() {
	printf '%s\n' \
		$'1000\ta:{"n":0}' \
		$'2000\tb:{"n":1}' \
		$'3000\ta:{"n":2}' \
		$'4000\t:{"n":3}' \
		$'5000\tb:{"n":4}' | elog-append -t -K : -s 3 "$LOG"
}

# Offsets 0-300 in segments of 4 KiB, of which compaction removed 3-5 (key z).
compacted_3_5() {
	{
		seq 0 2 | sed 's/^/:/'
		seq 3 5 | sed 's/^/z:/'
		seq 6 299 | sed 's/^/:/'
		echo z:last
	} | elog-append -K : --segment-bytes 4K "$LOG"
	elog-retain --set cleanup=compact "$LOG"
	elog-compact --grace 0 "$LOG"
}

@test "reverse: newest first, every member as without --reverse" {
	five
	run --separate-stderr elog-cat --reverse "$LOG"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$output" = "$(elog-cat "$LOG" | tac)" ]
	[ "${lines[0]}" = '{"offset":4,"ts":5000,"schema":3,"key":"b","value":{"n":4}}' ]
}

@test "reverse: an empty log prints nothing" {
	elog-append "$LOG" </dev/null
	run --separate-stderr elog-cat --reverse "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ "$stderr" = "" ]
}

@test "reverse: over compaction holes and segment boundaries to the first record" {
	# Every third record has a key of its own, the others share 40.
	for i in $(seq 0 1199); do
		echo "k$((i % 3 ? i % 40 : 1000 + i)):value $i"
	done | elog-append -K : --segment-bytes 4K "$LOG"
	elog-retain --set cleanup=compact "$LOG"
	elog-compact "$LOG"
	elog-cat -F '%o\n' "$LOG" >"$T/fwd"
	[ "$(wc -l <"$T/fwd")" -lt 1200 ]
	[ "$(ls "$LOG"/*.log | wc -l)" -gt 2 ]
	run --separate-stderr elog-cat --reverse -F '%o %s\n' "$LOG"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	[ "$(printf '%s\n' "$output" | cut -d' ' -f1)" = "$(tac "$T/fwd")" ]
	# Each record is its own: value i at offset i.
	printf '%s\n' "$output" | awk '$1 != $3 { exit 1 }'
}

@test "reverse: -n is the last records, newest first" {
	seq 0 9 | elog-append "$LOG"
	run elog-cat --reverse -n 3 -v "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = $'9\n8\n7' ]
	run elog-cat --reverse -o -2 -v "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = $'9\n8' ]
	run elog-cat --reverse -n 50 -F '%o ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "9 8 7 6 5 4 3 2 1 0 " ]
	run elog-cat --reverse -n 0 "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
}

@test "reverse: -c stops after count records" {
	seq 0 9 | elog-append "$LOG"
	run elog-cat --reverse -c 2 -v "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = $'9\n8' ]
	run elog-cat --reverse -n 5 -c 2 -v "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = $'9\n8' ]
}

@test "reverse: -o N starts at offset N, or the last record before it" {
	seq 0 9 | elog-append "$LOG"
	run elog-cat --reverse -o 4 -F '%o ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "4 3 2 1 0 " ]
	run elog-cat --reverse -o 400 -c 1 -F '%o' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "9" ]
	run elog-cat --reverse -o end -c 1 -F '%o' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "9" ]
	run elog-cat --reverse -o 0 -F '%o' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "0" ]
}

@test "reverse: -k prints only the key, and -n counts records of the key" {
	five
	run elog-cat --reverse -k a -F '%o ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "2 0 " ]
	run elog-cat --reverse -k b -n 1 -F '%o ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "4 " ]
	run elog-cat --reverse -k nope "$LOG"
	[ "$status" -eq 1 ]
	[ "$output" = "" ]
}

@test "reverse: --since and --until select exactly, whatever the order of timestamps" {
	# Three producers' clocks: timestamps out of order.
	printf '%s\n' $'5000\tx' $'1000\tx' $'3000\tx' $'7000\tx' $'2000\tx' \
		$'6000\tx' $'4000\tx' $'9000\tx' $'3500\tx' | elog-append -t "$LOG"
	run elog-cat --reverse --since @3000 --until @6000 -F '%T ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "3500 4000 6000 3000 5000 " ]
	run elog-cat --reverse --until @2000 -F '%T ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "2000 1000 " ]
	run elog-cat --reverse --since @6500 -F '%T ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "9000 7000 " ]
	run elog-cat --reverse --since @3000 --until @6000 -c 2 -F '%T ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "3500 4000 " ]
	# The same set as jq picks from the whole log, newest first.
	if command -v jq >/dev/null; then
		[ "$(elog-cat --reverse --since @3000 --until @6000 "$LOG")" = \
		  "$(elog-cat "$LOG" | jq -c 'select(.ts >= 3000 and .ts <= 6000)' | tac)" ]
	fi
}

@test "reverse: a gap lost to damage is reported walking back, and --strict ends there" {
	# The file "salvaged" says the offsets compaction removed were
	# lost to damage.
	compacted_3_5
	[ "$(elog-cat -o 3 -c 1 -F '%o' "$LOG")" = 6 ]
	printf 'elog-salvaged 1\n3 5 1\n' >"$LOG/salvaged"
	run --separate-stderr elog-cat --reverse -o 7 -F '%o ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "7 6 2 1 0 " ]
	[ "$stderr" = "elog-cat: $LOG: offsets 3-5 were lost to damage (see elog-verify --salvage)" ]
	run --separate-stderr elog-cat --reverse --strict -o 7 -F '%o ' "$LOG"
	[ "$status" -eq 1 ]
	[ "$output" = "7 6 " ]
}

@test "reverse: cannot be used with -f, -g or -o beginning" {
	seq 0 2 | elog-append "$LOG"
	usage_error elog-cat '--reverse and -f cannot be used together' --reverse -f "$LOG"
	usage_error elog-cat '--reverse and -g cannot be used together' --reverse -g c "$LOG"
	usage_error elog-cat '--reverse reads back from the end: -o beginning has nothing before it' \
		--reverse -o beginning "$LOG"
}

@test "reverse: ranges lost to damage in one gap are reported walking back, the later first" {
	compacted_3_5
	printf 'elog-salvaged 1\n3 3 1\n4 5 1\n' >"$LOG/salvaged"
	run --separate-stderr elog-cat --reverse -o 7 -F '%o ' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "7 6 2 1 0 " ]
	[ "$stderr" = "elog-cat: $LOG: offsets 4-5 were lost to damage (see elog-verify --salvage)
elog-cat: $LOG: offset 3 was lost to damage (see elog-verify --salvage)" ]
}
