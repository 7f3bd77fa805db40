#!/usr/bin/env bats
# The durable end: records past the watermark are, to readers, a batch
# still being written; elog-verify -l lists and counts only what readers
# see.  ELOG_BIN is the build directory.

load helpers

@test "durable end: elog-verify -l lists and counts only durable records" {
	seq 1 5 | elog-append "$LOG"
	cp "$LOG/watermark" "$T/wm5"
	seq 6 10 | elog-append "$LOG"
	# The watermark of five records: the five after it are, to readers,
	# a batch still being written.
	cp "$T/wm5" "$LOG/watermark"
	run elog-verify -l --json "$LOG"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -c '[.first, .last, .records]')" = '[0,4,5]' ]
	run elog-verify -l "$LOG"
	[[ "$output" =~ ^00000000000000000000\.log\ 0\ 4\ 5\  ]]
	[ "$(elog-cat -v "$LOG" | wc -l)" -eq 5 ]
}
