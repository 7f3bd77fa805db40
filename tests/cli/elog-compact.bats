#!/usr/bin/env bats
# elog-compact(1): newest record per key, tombstones, -n and -v, and every
# failure path with exact stderr and exit status.

load helpers

teardown_test() {
	[ -n "${PID:-}" ] && kill "$PID" 2>/dev/null || true
}

# 3000 keyed records over 50 keys (k0..k49), value "v<i>", key k7 deleted
# by its last record (a tombstone), then 200 unkeyed lines so that every keyed
# record is in a closed segment.  The log is created with --cleanup compact,
# or with the flags in CLEANUP when it is set (CLEANUP= fill: the default).
fill() {
	{
		for i in $(seq 1 3000); do
			if [ "$i" -eq 2957 ]; then echo "k7="; else echo "k$((i % 50))=v$i"; fi
		done
		for i in $(seq 1 200); do echo "=filler$i"; done
	} | "$B/elog-append" -K = --segment-bytes 4K ${CLEANUP---cleanup=compact} "$L"
}

# The message of a refusal to compact the log $1 (a delete log).
refusal() {
	echo "elog-compact: $1: the log's cleanup is delete, so it is not compacted (delete is the default, and the policy of every log created before the setting existed); if only the newest record of each key matters, run: elog-retain --set cleanup=compact $1"
}

# Every file of the log with its inode, size and mtime, to show that
# nothing changed.
snapshot() {
	(cd "$L" && stat -c '%n %i %s %.9Y' * | sort)
}

# "key=value" of the newest record of each key (k7 excluded), sorted.
newest() {
	"$B/elog-cat" -F '%k=%s\n' "$L" | grep -v '^=' |
		awk -F= '{ v[$1] = $2 } END { for (k in v) if (v[k] != "") print k "=" v[k] }' | sort
}

@test "compact: the newest value of every key survives, silently" {
	fill
	want=$(newest)
	before=$(ls "$L" | grep -c '\.log$')
	run --separate-stderr "$B/elog-compact" "$L"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	[ "$(newest)" = "$want" ]
	[ "$(ls "$L" | grep -c '\.log$')" -lt "$before" ]
	# Each key once, the 200 unkeyed records all there.
	[ "$("$B/elog-cat" -F '%k\n' "$L" | grep -v '^$' | sort | uniq -d)" = "" ]
	[ "$("$B/elog-cat" -F '%k\n' "$L" | grep -c '^$')" -eq 200 ]
	# Offsets strictly increasing.
	"$B/elog-cat" -F '%o\n' "$L" | awk 'NR > 1 && $1 <= p { exit 1 } { p = $1 }'
	run "$B/elog-verify" "$L"
	[ "$status" -eq 0 ]
}

@test "compact: a delete log (the default) is refused with status 2 and left as it was" {
	CLEANUP= fill		# no --cleanup: a new log's default
	grep -qx 'cleanup delete' "$L/settings"
	before=$(snapshot)
	records=$("$B/elog-cat" "$L" | wc -l)
	run --separate-stderr "$B/elog-compact" "$L"
	[ "$status" -eq 2 ] && [ "$output" = "" ]
	[ "$stderr" = "$(refusal "$L")" ]
	[ "$(snapshot)" = "$before" ]
	[ ! -e "$L/compact.state" ] && [ ! -e "$L/compact.last" ]
	[ "$("$B/elog-cat" "$L" | wc -l)" -eq "$records" ]
	# -n and -v are refused alike, and print nothing on stdout.
	run --separate-stderr "$B/elog-compact" -n -v --wait "$L"
	[ "$status" -eq 2 ] && [ "$output" = "" ]
	[ "$stderr" = "$(refusal "$L")" ]
	[ "$(snapshot)" = "$before" ]
}

@test "compact: --cleanup delete given at creation is refused the same way" {
	CLEANUP="--cleanup delete" fill
	grep -qx 'cleanup delete' "$L/settings"
	run --separate-stderr "$B/elog-compact" "$L"
	[ "$status" -eq 2 ] && [ "$stderr" = "$(refusal "$L")" ]
}

@test "compact: a log made before cleanup existed (no cleanup key) is a delete log" {
	CLEANUP= fill
	sed -i '/^cleanup /d' "$L/settings"
	! grep -q '^cleanup' "$L/settings"
	before=$(snapshot)
	run --separate-stderr "$B/elog-compact" "$L"
	[ "$status" -eq 2 ] && [ "$stderr" = "$(refusal "$L")" ]
	[ "$(snapshot)" = "$before" ]
	# Writers and readers go on with it as before.
	echo more | "$B/elog-append" "$L"
	[ "$("$B/elog-cat" -n 1 -v "$L")" = more ]
	# The command the refusal names makes it compactable.
	"$B/elog-retain" --set cleanup=compact "$L"
	grep -qx 'cleanup compact' "$L/settings"
	run --separate-stderr "$B/elog-compact" -v "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[[ "${lines[-1]}" =~ ^compacted\ segments ]]
}

@test "compact: the command of the refusal makes compaction work; delete stops it again" {
	CLEANUP= fill
	want=$(newest)
	run "$B/elog-compact" "$L"
	[ "$status" -eq 2 ]
	run --separate-stderr "$B/elog-retain" --set cleanup=compact "$L"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	n=$("$B/elog-cat" "$L" | wc -l)
	run --separate-stderr "$B/elog-compact" "$L"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	[ "$("$B/elog-cat" "$L" | wc -l)" -lt "$n" ]
	[ "$(newest)" = "$want" ]
	"$B/elog-retain" --set cleanup=delete "$L"
	grep -qx 'cleanup delete' "$L/settings"
	run --separate-stderr "$B/elog-compact" "$L"
	[ "$status" -eq 2 ] && [ "$stderr" = "$(refusal "$L")" ]
}

@test "compact: a cleanup word of a later version is refused as a newer format, status 4" {
	fill
	sed -i 's/^cleanup compact$/cleanup compact,delete/' "$L/settings"
	grep -qx 'cleanup compact,delete' "$L/settings"
	before=$(snapshot)
	run --separate-stderr "$B/elog-compact" "$L"
	[ "$status" -eq 4 ] && [ "$output" = "" ]
	[ "$stderr" = "elog-compact: $L: settings: unsupported format version" ]
	[ "$(snapshot)" = "$before" ]
}

@test "compact: a tombstone stays for --grace, then goes" {
	fill
	"$B/elog-compact" "$L"
	[ "$("$B/elog-cat" -k k7 -F '%S\n' "$L")" = "0" ]
	grep -q '^elog-compact-state 1$' "$L/compact.state"
	[ "$(wc -l < "$L/compact.state")" -eq 2 ]
	"$B/elog-compact" --grace 1h "$L"
	[ "$("$B/elog-cat" -k k7 -F '%S\n' "$L")" = "0" ]
	sleep 1
	run "$B/elog-compact" -v --grace 500ms "$L"
	[[ "$output" =~ tombstones\ 0\ kept\ 1\ removed ]]
	[ "$("$B/elog-cat" -k k7 -F '%S\n' "$L")" = "" ]
	[ "$(cat "$L/compact.state")" = "elog-compact-state 1" ]
}

@test "compact: -n reports and changes nothing; -v reports what it did" {
	fill
	before=$(ls -i "$L" | grep -v maint.lock)
	run --separate-stderr "$B/elog-compact" -n "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[[ "${lines[0]}" =~ ^would\ rewrite\ 00000000000000000000\.log\ records\ [0-9]+\ -\>\ [0-9]+\ bytes ]]
	[[ "${lines[-1]}" =~ ^would\ compact\ segments\ [0-9]+\ -\>\ [0-9]+\ records ]]
	[ "$(ls -i "$L" | grep -v maint.lock)" = "$before" ]
	dry=${lines[-1]#would compact}
	run "$B/elog-compact" -v "$L"
	[ "${lines[-1]#compacted}" = "$dry" ]
	[[ "${lines[-1]}" =~ keys\ 50\ .*memory\ [0-9]+\ bytes$ ]]
}

@test "compact: --min-lag leaves young records alone" {
	fill
	n=$("$B/elog-cat" "$L" | wc -l)
	"$B/elog-compact" --min-lag 1h "$L"
	[ "$("$B/elog-cat" "$L" | wc -l)" -eq "$n" ]
}

@test "compact: leftovers of an interrupted run are removed" {
	fill
	for n in 3 9 14; do
		# The test build that crashes at the n-th step (tests/crash/maint_fault.h).
		run env ELOG_MAINT_CRASH_AT=$n "$B/tests/elog-compact-faulty" "$L"
		[ "$status" -eq 86 ]
	done
	: > "$L/00000000000000000072.log.compact"
	run "$B/elog-compact" "$L"
	[ "$status" -eq 0 ]
	[ "$(ls "$L" | grep -c compact\$)" -eq 0 ]
	run "$B/elog-verify" "$L"
	[ "$status" -eq 0 ]
}

@test "compact: the installed program never crashes on purpose" {
	fill
	run env ELOG_MAINT_CRASH_AT=1 "$B/elog-compact" "$L"
	[ "$status" -eq 0 ]
}

@test "compact: another maintenance run holding the lock gives status 3" {
	fill
	flock "$L/maint.lock" sleep 5 & PID=$!
	sleep 0.3
	run --separate-stderr "$B/elog-compact" "$L"
	[ "$status" -eq 3 ]
	[[ "$stderr" =~ ^elog-compact:\ $L:\ another\ maintenance\ run\ holds\ maint\.lock ]]
	run "$B/elog-compact" --wait "$L"
	[ "$status" -eq 0 ]
}

@test "compact: not a log, missing, damaged segment, damaged state" {
	mkdir "$T/empty"
	run --separate-stderr "$B/elog-compact" "$T/empty"
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-compact: $T/empty: not an elog directory (no settings file)" ]
	run --separate-stderr "$B/elog-compact" "$T/none"
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-compact: $T/none: no such file or directory" ]
	fill
	printf 'junk\n' > "$L/compact.state"
	run --separate-stderr "$B/elog-compact" "$L"
	[ "$status" -eq 4 ]
	[ "$stderr" = "elog-compact: $L: compact.state: malformed at line 1 (remove it to restart the grace periods of tombstones); run elog-verify $L to see what is damaged" ]
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "compact.state: malformed at line 1 (remove it to restart the grace periods of tombstones)" ]
	rm "$L/compact.state"
	printf 'XXXX' | dd of="$L/00000000000000000000.log" bs=1 seek=40 conv=notrunc 2>/dev/null
	run --separate-stderr "$B/elog-compact" "$L"
	[ "$status" -eq 4 ]
	[ "$stderr" = "elog-compact: $L: 00000000000000000000.log: corrupt record at byte 32; run elog-verify $L to see what is damaged" ]
}

@test "compact: bad usage" {
	run --separate-stderr "$B/elog-compact"
	[ "$status" -eq 2 ] && [ "$stderr" = $'elog-compact: missing log directory\nTry \'elog-compact --help\'.' ]
	run --separate-stderr "$B/elog-compact" --grace soon "$T"
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-compact: --grace: invalid duration 'soon'" ]
	run --separate-stderr "$B/elog-compact" --min-lag "$T"
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-compact: --min-lag: invalid duration '$T'" ]
	run --separate-stderr "$B/elog-compact" --bogus "$T"
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-compact: unknown option --bogus" ]
}

@test "compact: --help matches the man page's synopsis; --version" {
	run "$B/elog-compact" --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "usage: elog-compact [-nv] [--grace duration] [--min-lag duration] [--wait] dir" ]
	man=$(MANWIDTH=200 mandoc -Tascii "$BATS_TEST_DIRNAME/../../man/elog-compact.1" | col -b |
		sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | grep 'elog-compact' | head -1 | tr -s ' ' | sed 's/^ //')
	[ "$man" = "elog-compact [-nv] [--grace duration] [--min-lag duration] [--wait] dir" ]
	run "$B/elog-compact" --version
	[ "$status" -eq 0 ] && [[ "$output" =~ ^elog-compact\ \(elog\)\  ]]
}
