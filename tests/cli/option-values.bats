#!/usr/bin/env bats
# Sizes, durations and limits on the command line as people write them:
# every unit spelling, 0 where it means something and refused where it
# does not, and a value out of range refused before anything is created.
# ELOG_BIN is the build directory.

load helpers

@test "option values: sizes take kb, kB, KiB and KIB alike" {
	local s
	for s in 10kb 10kB 10KB 10KiB 10kib; do
		echo x | elog-append --segment-bytes "$s" "$T/$s"
		grep -qx 'segment_bytes 10240' "$T/$s/settings"
	done
	usage_error elog-append "--segment-bytes: invalid size '10kbb'" --segment-bytes 10kbb "$LOG"
}

@test "option values: a duration of 0 is accepted where 0 means something" {
	seq 1 3 | elog-append --linger 0 --cleanup compact "$LOG"
	[ "$(elog-cat -v "$LOG")" = $'1\n2\n3' ]
	printf 'k:a\nk:\n' | elog-append -K : "$LOG"
	elog-compact --grace 0 --min-lag 0 "$LOG"
	elog-commit --create "$LOG" uplink
	seq 0 4 | elog-commit -e 0 "$LOG" uplink
	[ "$(elog-commit -l --json "$LOG" | jq .offset)" = 4 ]
	# "5" is still no duration: only 0 is the same in every unit.
	usage_error elog-append "--linger: invalid duration '5'" --linger 5 "$LOG"
}

@test "option values: a retention limit of 0 is refused alike at creation and by elog-retain" {
	usage_error elog-append "--retain-age: must be more than 0" --retain-age 0s "$LOG"
	usage_error elog-append "--retain-bytes: must be more than 0" --retain-bytes 0 "$LOG"
	[ ! -e "$LOG" ]
	echo x | elog-append "$LOG"
	usage_error elog-retain "--max-age: must be more than 0" --max-age 0s "$LOG"
	usage_error elog-retain "--max-age: must be more than 0" --max-age 0 "$LOG"
	usage_error elog-retain "--max-bytes: must be more than 0" --max-bytes 0K "$LOG"
}

@test "option values: --segment-bytes out of range names the option and the limits in units, and creates nothing" {
	usage_error elog-append "--segment-bytes: 1K is out of range (4K to 1G)" --segment-bytes 1K "$LOG"
	[ ! -e "$LOG" ]
	usage_error elog-append "--segment-bytes: 2G is out of range (4K to 1G)" --segment-bytes 2G "$LOG"
	usage_error elog-append "--segment-bytes: 4095 is out of range (4K to 1G)" --segment-bytes 4095 "$LOG"
	usage_error elog-append "--index-interval: 32 is out of range (64 to 16M)" --index-interval 32 "$LOG"
	[ ! -e "$LOG" ]
	echo x | elog-append --segment-bytes 4K --index-interval 16M "$LOG"
	grep -qx 'segment_bytes 4096' "$LOG/settings"
}
