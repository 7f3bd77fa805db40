#!/usr/bin/env bats
# elog-verify(1): checking, listing and repairing, with exact output and
# exit status.  ELOG_BIN is the build directory holding the programs.

load helpers

setup_test() {
	# 1000 records in segments of 4 KiB: seven closed ones and the active.
	seq 1 1000 | "$B/elog-append" --segment-bytes 4096 "$L"
	S1=00000000000000000134.log
	ACTIVE=$(cd "$L" && ls *.log | tail -1)
}

teardown_test() {
	[ -n "${PID:-}" ] && kill "$PID" 2>/dev/null || true
}

# Overwrite one byte of file $1 at position $2 with a different value.
flip() {
	local old
	old=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf %03o $(( (old + 1) % 256 )))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

@test "--help prints the synopsis of the man page on stdout" {
	run "$B/elog-verify" --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "usage: elog-verify [-q] [--json] [--repair [--salvage]] dir" ]
	[ "${lines[1]}" = "       elog-verify -l [--json] dir" ]
	[ "${lines[2]}" = "       elog-verify -h | --help | --version" ]
}

@test "--help describes -q as the man page does" {
	local man help
	# The sentence after ".It Fl q , Fl \-quiet", its full stop dropped.
	man=$(sed -n '/^\.It Fl q , Fl \\-quiet$/{n;p;}' "$BATS_TEST_DIRNAME/../../man/elog-verify.1")
	[ "$man" = "Print nothing; only the exit status tells." ]
	run "$B/elog-verify" --help
	help=$(printf '%s\n' "${lines[@]}" | sed -n 's/^  -q, --quiet  *//p')
	man=${man%.}
	[ "$help" = "${man,}" ]
}

@test "--version names the program and the version" {
	run "$B/elog-verify" --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^elog-verify\ \(elog\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "bad usage exits 2 with a hint" {
	run "$B/elog-verify" -x "$L"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-verify: unknown option -x" ]
	[ "${lines[1]}" = "Try 'elog-verify --help'." ]
	run "$B/elog-verify"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-verify: missing log directory" ]
	run "$B/elog-verify" -l --repair "$L"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-verify: -l and --repair cannot be used together" ]
}

@test "a clean log verifies silently with status 0" {
	run "$B/elog-verify" "$L"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "a byte flipped in a closed segment's record is found with file and byte" {
	flip "$L/$S1" 1000
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" =~ ^$S1:\ byte\ [0-9]+:\ corrupt\ record:\ checksum\ mismatch ]]
	pos=$(echo "${lines[0]}" | sed 's/^[^:]*: byte \([0-9]*\):.*/\1/')
	[ "$pos" -le 1000 ] && [ "$pos" -gt 960 ]
	[[ "${lines[1]}" =~ ^$S1:\ unreadable:\ offsets\ [0-9]+-[0-9]+\ cannot\ be\ read\ past\ the\ damage\;\ elog-verify\ --repair\ --salvage\ gets\ past\ it,\ keeping\ [0-9]+\ records\ and\ losing\ offset\ [0-9]+$ ]]
	[[ "${lines[2]}" =~ ^elog-verify:\ $L:\ 1\ problem\ found\ in\ 8\ segments\ .*\;\ run\ elog-verify\ --repair\ --salvage\ $L\ to\ get\ past\ the\ damage$ ]]
}

@test "every byte flipped in a closed segment is found" {
	size=$(stat -c %s "$L/$S1")
	cp "$L/$S1" "$T/orig"
	for pos in 0 7 8 12 16 24 31 32 35 36 40 48 56 58 60 61 $((size / 2)) $((size - 1)); do
		cp "$T/orig" "$L/$S1"
		flip "$L/$S1" "$pos"
		run "$B/elog-verify" "$L"
		echo "byte $pos: $output"
		[ "$status" -eq 1 ]
		[[ "${lines[0]}" =~ ^$S1:\ byte\ [0-9]+:\  ]]
	done
}

@test "a truncated closed segment is reported at the cut record" {
	size=$(stat -c %s "$L/$S1")
	# Past its seal (56 bytes) into its last record.
	truncate -s $((size - 61)) "$L/$S1"
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" =~ ^$S1:\ byte\ [0-9]+:\ truncated\ record ]]
}

@test "--json reports problems as JSON lines" {
	flip "$L/$S1" 1000
	run "$B/elog-verify" --json "$L"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" =~ ^\{\"file\":\"$S1\",\"byte\":[0-9]+,\"kind\":\"damage\",\"problem\":\"corrupt\ record ]]
	echo "${lines[0]}" | jq -e '.byte > 900' >/dev/null
}

@test "-q prints nothing and exits with the status alone" {
	flip "$L/$S1" 1000
	run "$B/elog-verify" -q "$L"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
}

@test "-l lists every segment with offsets, records, bytes, times and state" {
	run "$B/elog-verify" -l "$L"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 8 ]
	[[ "${lines[0]}" =~ ^00000000000000000000\.log\ 0\ 133\ 134\ [0-9]+\ 20[0-9-]+T[0-9:.]+Z\ 20[0-9-]+T[0-9:.]+Z\ v2/2\ closed$ ]]
	[[ "${lines[7]}" =~ ^$ACTIVE\ [0-9]+\ 999\ [0-9]+\ [0-9]+\ .*\ v2/2\ active$ ]]
	total=$(printf '%s\n' "${lines[@]}" | awk '{ n += $4 } END { print n }')
	[ "$total" -eq 1000 ]
}

@test "-l --json lists segments as JSON lines" {
	run "$B/elog-verify" -l --json "$L"
	[ "$status" -eq 0 ]
	echo "${lines[0]}" | jq -e '.segment == "00000000000000000000.log" and .first == 0 and
		.last == 133 and .records == 134 and .active == false and .damaged == false' >/dev/null
	echo "${lines[7]}" | jq -e '.last == 999 and .active == true' >/dev/null
}

@test "-l --json: a list longer than the output buffer comes out whole" {
	# About 400 segments: their lines pass 64 KiB, the size of the
	# programs' stdout buffer, so lines are written across its flushes.
	local M=$T/big n
	yes "$(printf '%01000d' 0)" | head -n 1600 | "$B/elog-append" --segment-bytes 4096 "$M"
	n=$(cd "$M" && ls *.log | wc -l)
	run "$B/elog-verify" -l --json "$M"
	[ "$status" -eq 0 ]
	[ "${#output}" -gt 65536 ]
	[ "${#lines[@]}" -eq "$n" ]
	printf '%s\n' "${lines[@]}" |
		jq -se "length == $n and ([.[].records] | add) == 1600" >/dev/null
}

@test "-l marks a damaged segment and reports the problem on stderr" {
	flip "$L/$S1" 1000
	run "$B/elog-verify" -l "$L"
	[ "$status" -eq 1 ]
	[[ "$output" =~ $S1\ 134\ [0-9]+\ [0-9]+\ [0-9]+\ .*\ v2/2\ closed\ damaged ]]
	[[ "$output" =~ elog-verify:\ $L:\ $S1:\ byte\ [0-9]+:\ corrupt\ record ]]
}

@test "a truncated index is damage, and --repair rebuilds it" {
	truncate -s 100 "$L/00000000000000000134.idx"
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "00000000000000000134.idx: byte 64: truncated entry: 36 bytes at the end" ]
	run "$B/elog-verify" --repair "$L"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "00000000000000000134.idx: repaired: rebuilt from its segment" ]
	run "$B/elog-verify" "$L"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "an index entry pointing past the end of its segment is damage" {
	seq 1 1000 | "$B/elog-append" --segment-bytes 4096 --index-interval 256 "$T/dense"
	# Records 1-9 take 29 bytes and 10-99 take 30: byte 2993 ends the
	# record of offset 98, so the segment stays whole but its index points
	# further.
	truncate -s 2993 "$T/dense/00000000000000000000.log"
	run "$B/elog-verify" "$T/dense"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" =~ ^00000000000000000000\.idx:\ byte\ [0-9]+:\ entry\ points\ at\ byte\ [0-9]+,\ past\ the\ last\ record\ \(the\ segment\ has\ 2993\ bytes\)$ ]]
	# Readers ignore such entries and read the rest all the same.
	run "$B/elog-cat" -c 5 -o 90 -v "$T/dense"
	[ "$status" -eq 0 ]
	[ "$output" = "$(seq 91 95)" ]
}

@test "a missing index is a warning, and --repair makes it" {
	rm "$L/00000000000000000134.idx"
	run "$B/elog-verify" "$L"
	[ "$status" -eq 0 ]
	[ "$output" = "00000000000000000134.idx: warning: missing: readers scan the segment instead" ]
	run "$B/elog-verify" --repair "$L"
	[ "$status" -eq 0 ]
	[ -f "$L/00000000000000000134.idx" ]
	run "$B/elog-verify" "$L"
	[ -z "$output" ]
}

@test "--repair cuts a damaged tail of the active segment, keeping the bytes aside" {
	size=$(stat -c %s "$L/$ACTIVE")
	flip "$L/$ACTIVE" $((size - 100))
	run "$B/elog-append" "$L" </dev/null
	[ "$status" -eq 4 ]
	[[ "$output" =~ acknowledged\ data\ is\ damaged ]]
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" =~ ^$ACTIVE:\ byte\ ([0-9]+):\ corrupt\ record:\ checksum\ mismatch,\ below\ the\ durable\ end ]]
	at=${BASH_REMATCH[1]}
	cp "$L/$ACTIVE" "$T/before"
	run "$B/elog-verify" --repair "$L"
	# The records cut had been acknowledged: a loss, so status 1.
	[ "$status" -eq 1 ]
	[[ "${lines[2]}" =~ ^$ACTIVE:\ byte\ $at:\ repaired:\ cut\ [0-9]+\ bytes\ from\ here\ on,\ kept\ in\ ($ACTIVE\.cut-[0-9]+)$ ]]
	kept=${BASH_REMATCH[1]}
	# Nothing was lost: the segment and the kept bytes make the old file.
	# The cut segment is closed now (the log goes on in a new one at the
	# old durable end), so it ends with its seal (elog(5)).
	{ head -c "$at" "$L/$ACTIVE"; cat "$L/$kept"; } | cmp - "$T/before"
	[ "$(stat -c %s "$L/$ACTIVE")" -eq $((at + 56)) ]
	[ "$(tail -c 56 "$L/$ACTIVE" | head -c 8)" = ELOGSEAL ]
	# The log reads to the cut and the writer opens it again.
	last=$("$B/elog-cat" -F '%o\n' "$L" | tail -1)
	[ "$last" -lt 999 ]
	echo more | "$B/elog-append" "$L"
	[ "$("$B/elog-cat" -v "$L" | tail -1)" = more ]
	run --separate-stderr "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "$kept: warning: bytes cut from a segment by elog-verify --repair; delete it once inspected" ]
	[[ "${lines[1]}" =~ ^salvaged:\ loss:\ offsets\ [0-9]+-999\ were\ lost\ to\ damage\ \(recorded\ by\ a\ repair\ or\ salvage\ at\ [-0-9T:.]+Z\)\;\ readers\ report\ them\ as\ a\ gap$ ]]
	[ "$stderr" = "elog-verify: $L: 1 range of offsets lost to damage, which readers report as gaps" ]
}

@test "a segment retention left below the start: the warning names what deletes it" {
	cp "$L/00000000000000000000.log" "$T/first"
	"$B/elog-retain" --max-bytes 12K "$L"
	[ ! -e "$L/00000000000000000000.log" ]
	# The unlink that a crash kept from reaching the disk.
	cp "$T/first" "$L/00000000000000000000.log"
	run --separate-stderr "$B/elog-verify" "$L"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "00000000000000000000.log: warning: below the log's start "*": retention removed it and was stopped before unlinking it; readers skip it, and the next elog-retain or elog-compact deletes it and its index" ]]
}

@test "a closed segment cut inside its seal is reported as a damaged seal" {
	size=$(stat -c %s "$L/$S1")
	truncate -s $((size - 5)) "$L/$S1"
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" =~ ^$S1:\ byte\ $((size - 56)):\ truncated\ seal ]]
}

@test "--repair does not cut a closed segment" {
	flip "$L/$S1" 1000
	cp "$L/$S1" "$T/before"
	run "$B/elog-verify" --repair "$L"
	[ "$status" -eq 1 ]
	[[ "$output" =~ none\ could\ be\ repaired ]]
	cmp "$L/$S1" "$T/before"
}

@test "--repair waits for a writer's batch, and gives up after 10 s" {
	# LOCK held for a moment, as a writer holds it for one batch.
	flock -n -o "$L/LOCK" sleep 1 &
	PID=$!
	sleep 0.3
	run "$B/elog-verify" --repair "$L"
	[ "$status" -eq 0 ]
	wait "$PID"
	# Held for longer than a repair waits.
	flock -n -o "$L/LOCK" sleep 30 &
	PID=$!
	sleep 0.3
	run "$B/elog-verify" --repair "$L"
	[ "$status" -eq 3 ]
	[[ "$output" =~ ^elog-verify:\ $L:\ timed\ out\ after\ 10000\ ms\ waiting\ for ]]
}

@test "a damaged watermark is a warning, and --repair rewrites it" {
	flip "$L/watermark" 9
	run "$B/elog-verify" "$L"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^watermark:\ byte\ 0:\ warning:\ bad\ magic\ or\ checksum\ \(readers\ take ]]
	# Readers take the closed segments as durable and go on.
	run "$B/elog-cat" "$L"
	[ "$status" -eq 0 ]
	run "$B/elog-verify" --repair "$L"
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" =~ ^watermark:\ repaired:\ rewritten:\ durable\ end\ 1000, ]]
	[ "$("$B/elog-cat" "$L" | wc -l)" -eq 1000 ]
}

@test "a malformed consumers.json is damage with its byte position" {
	"$B/elog-commit" --create "$L" app 5
	printf '{"version":1,"consumers":{"app":{"offset":x}}}' > "$L/consumers.json"
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" =~ ^consumers\.json:\ byte\ 42:\ expected\ a\ non-negative\ integer$ ]]
}

@test "stray and temporary files are warnings, not damage" {
	touch "$L/notes.txt" "$L/settings.tmp.123.0" "$L/0000000000000000000.log"
	run "$B/elog-verify" "$L"
	[ "$status" -eq 0 ]
	[[ "$output" =~ notes\.txt:\ warning:\ unknown\ file ]]
	[[ "$output" =~ settings\.tmp\.123\.0:\ warning:\ temporary\ file ]]
	[[ "$output" =~ 0000000000000000000\.log:\ warning:\ unknown\ file ]]
}

@test "a directory that is not a log exits 5" {
	mkdir "$T/empty"
	run "$B/elog-verify" "$T/empty"
	[ "$status" -eq 5 ]
	[ "$output" = "elog-verify: $T/empty: not an elog directory (no settings file)" ]
	run "$B/elog-verify" "$T/missing"
	[ "$status" -eq 5 ]
	[ "$output" = "elog-verify: $T/missing: no such file or directory" ]
}

@test "verify runs while a writer appends and finds nothing wrong" {
	(for i in $(seq 1 3000); do echo "$i"; done | "$B/elog-append" --batch 1 "$L") &
	PID=$!
	for _ in 1 2 3 4 5; do
		run "$B/elog-verify" "$L"
		echo "$output"
		[ "$status" -eq 0 ]
	done
	wait "$PID"
	PID=
}

@test "-l writes times before 1970 and far off as RFC 3339 with a positive fraction, else @MS" {
	printf -- '-1500\tx\n253402300800000\ty\n' |
		"$B/elog-append" -t --max-skew 1000000w "$T/t"
	run "$B/elog-verify" -l "$T/t"
	[ "$status" -eq 0 ]
	[ "$output" = "00000000000000000000.log 0 1 2 90 1969-12-31T23:59:58.500Z @253402300800000 v2/2 active" ]
}

@test "verify beside compaction and retention reports no damage that is only maintenance at work" {
	M=$T/maint
	# Keyed records over few keys, so that every compaction rewrites.
	for i in $(seq 1 600); do echo "k$((i % 7)):value $i padded out a little"; done |
		"$B/elog-append" -K : --segment-bytes 4096 --cleanup compact "$M"
	# Maintenance in a loop, with a writer adding more, until told to stop.
	(
		i=0
		while [ ! -e "$T/stop" ]; do
			i=$((i + 1))
			for j in $(seq 1 40); do echo "k$((j % 7)):more $i $j padding padding"; done |
				"$B/elog-append" -K : "$M" || exit 1
			"$B/elog-compact" --wait --grace 0s "$M" >/dev/null || exit 2
			"$B/elog-retain" --wait --max-bytes 16K "$M" >/dev/null || exit 3
		done
	) 3>&- &
	PID=$!
	local n
	for n in $(seq 1 40); do
		run "$B/elog-verify" "$M"
		if [ "$status" -ne 0 ]; then
			echo "run $n: status $status: $output" >&2
			touch "$T/stop"
			false
		fi
	done
	touch "$T/stop"
	wait "$PID"
	PID=
}

@test "records a writer killed in its sync left: a warning that the next writer cuts them" {
	env LD_PRELOAD="$ELOG_BIN/tests/syncfault.so" ELOG_TEST_SYNC_FAULT=kill \
		ASAN_OPTIONS=verify_asan_link_order=0 elog-append "$L" <<<"unacked" || true
	run elog-verify "$L"
	[ "$status" -eq 0 ]
	[ "$output" = "$ACTIVE: warning: 1 whole record past the durable end, written by a writer that is gone; the next writer cuts it (a sync failed)" ]
	elog-append "$L" </dev/null 2>/dev/null
	run elog-verify "$L"
	[ "$status" -eq 0 ] && [ -z "$output" ]
	! elog-cat -v "$L" | grep -qx unacked
}

@test "records a killed writer left past the durable end: a warning, not damage" {
	env LD_PRELOAD="$ELOG_BIN/tests/syncfault.so" ELOG_TEST_SYNC_FAULT=kill-before \
		ASAN_OPTIONS=verify_asan_link_order=0 elog-append "$L" <<<"unacked" || true
	run elog-verify "$L"
	[ "$status" -eq 0 ]
	[ "$output" = "$ACTIVE: warning: 1 whole record past the durable end, written by a writer that is gone; the next writer publishes it" ]
	run elog-verify --json "$L"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -c '[.kind, .byte]')" = '["warning",null]' ]
	run elog-verify -q "$L"
	[ "$status" -eq 0 ] && [ -z "$output" ]
	elog-append "$L" </dev/null
	run elog-verify "$L"
	[ "$status" -eq 0 ] && [ -z "$output" ]
}

@test "a key length past its record is named as such, not as a checksum" {
	seq 1 3 | "$B/elog-append" "$T/k"
	# The first record's key length (bytes 26-27 of it, at 32 in the file).
	printf '\377\377' | dd of="$T/k/00000000000000000000.log" bs=1 seek=58 conv=notrunc status=none
	run "$B/elog-verify" "$T/k"
	[ "$status" -eq 1 ]
	[[ "$output" == *"00000000000000000000.log: byte 32: corrupt record: key length past its end, below the durable end"* ]]
}
