#!/usr/bin/env bats
# elog-cat -L: the summary of a log, as text and as JSON (parsed with jq),
# and the consumers behind retention in elog-commit -l.  ELOG_BIN is the
# build directory.

load helpers

# 2000 records, timestamps one minute apart from 2020-01-01, in 4 KiB
# segments; extra flags go to elog-append.
fill() {
	awk 'BEGIN { for (i = 0; i < 2000; i++)
		printf "%.0f\tk%d\trecord number %06d padding\n", 1577836800000 + i * 60000, i % 10, i }' |
		elog-append -t -K '	' --segment-bytes 4K "$@" "$LOG"
}

# One member of the summary's JSON.
js() { elog-cat -L --json "$LOG" | jq -c "$1"; }

@test "summary: an empty log" {
	elog-append "$LOG" </dev/null
	run elog-cat -L --json "$LOG"
	[ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 1 ]
	[ "$(echo "$output" | jq -c '[.first, .last, .records, .durable_end, .segments, .oldest, .newest]')" = '[null,null,0,0,1,null,null]' ]
	run elog-cat -L "$LOG"
	[ "${lines[1]}" = "  offsets      none, 0 records" ]
}

@test "summary: offsets, records, durable end, segments and times" {
	fill
	[ "$(js '[.first, .last, .records, .records_exact, .durable_end, .start]')" = '[0,1999,2000,true,2000,0]' ]
	nseg=$(ls "$LOG" | grep -c '^[0-9]\{20\}\.log$')
	[ "$nseg" -gt 10 ]
	[ "$(js .segments)" = "$nseg" ]
	active=$(ls "$LOG" | grep '^[0-9]\{20\}\.log$' | tail -1)
	[ "$(js .active_segment)" = "$((10#${active%.log}))" ]
	[ "$(js .segment_bytes)" = 4096 ]
	[ "$(js .log_bytes)" = "$(cat "$LOG"/*.log | wc -c)" ]
	[ "$(js .dir_bytes)" = "$(cat "$LOG"/* | wc -c)" ]
	[ "$(js '[.oldest_ms, .oldest, .newest_ms, .newest]')" = \
	  '[1577836800000,"2020-01-01T00:00:00.000Z",1577956740000,"2020-01-02T09:19:00.000Z"]' ]
	[ "$(js '[.retention.max_age_ms, .retention.last_run, .compaction.cleanup, .compaction.last_run, .compression.codec, .compression.ratio, .damaged, .consumers]')" = \
	  '[null,null,"delete",null,"none",null,false,[]]' ]
	[ "$(js .id)" = "\"$(elog-commit --log-id "$LOG")\"" ]
}

@test "summary: the text form" {
	fill
	run elog-cat -L "$LOG"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "log $LOG (id $(elog-commit --log-id "$LOG"))" ]
	[ "${lines[1]}" = "  offsets      0..1999, 2000 records" ]
	[ "${lines[2]}" = "  durable end  2000" ]
	[[ "${lines[3]}" =~ ^\ \ size\ +[0-9.]+\ KiB\ in\ segments,\ [0-9.]+\ KiB\ in\ all\ files,\ [0-9.]+\ KiB\ on\ disk$ ]]
	[[ "${lines[4]}" =~ ^\ \ segments\ +[0-9]+,\ active\ [0-9]{20},\ rolled\ at\ 4\.0\ KiB$ ]]
	[ "${lines[5]}" = "  format       2: segments of version 2, indexes of version 2" ]
	[ "${lines[6]}" = "  oldest       2020-01-01T00:00:00.000Z (@1577836800000)" ]
	[ "${lines[7]}" = "  newest       2020-01-02T09:19:00.000Z (@1577956740000)" ]
	[ "${lines[8]}" = "  writers      none" ]
	[ "${lines[9]}" = "  retention    no stored policy" ]
	[ "${lines[10]}" = "    last run   never" ]
	[ "${lines[11]}" = "  compaction   off (cleanup delete), last run never" ]
	[ "${lines[12]}" = "  compression  none" ]
	[ "${lines[13]}" = "  consumers    0" ]
	[ "${#lines[@]}" -eq 14 ]
}

@test "summary: writers alive are the holders of a lock on the file writers" {
	command -v flock >/dev/null || skip "flock(1) is not installed"
	[ -r /proc/locks ] || skip "no /proc/locks"
	fill
	[ "$(js .writers)" = "[]" ]
	touch "$LOG/writers"
	flock -s "$LOG/writers" sleep 60 3>&- &
	p1=$!
	flock -s "$LOG/writers" sleep 60 3>&- &
	p2=$!
	BG_PIDS="$p1 $p2"
	for i in $(seq 100); do
		[ "$(js '.writers | length')" = 2 ] && break
		nap 0.05
	done
	[ "$(js '.writers | sort')" = "$(echo "[$p1,$p2]" | jq -c sort)" ]
	run elog-cat -L "$LOG"
	[[ "$output" == *"  writers      "*"$p1"* ]]
	[ "$(js .writing_pid)" = null ]
}

@test "summary: the writer writing a batch and a maintenance run show by pid" {
	command -v flock >/dev/null || skip "flock(1) is not installed"
	[ -r /proc/locks ] || skip "no /proc/locks"
	fill
	flock -x "$LOG/LOCK" sleep 60 3>&- &
	p1=$!
	flock -x "$LOG/maint.lock" sleep 60 3>&- &
	p2=$!
	BG_PIDS="$p1 $p2"
	for i in $(seq 100); do
		[ "$(js .maintenance_pid)" != null ] && [ "$(js .writing_pid)" != null ] && break
		nap 0.05
	done
	[ "$(js '[.writing_pid, .maintenance_pid]')" = "[$p1,$p2]" ]
	run elog-cat -L "$LOG"
	[[ "$output" == *"  writing now  $p1"* ]]
	[[ "$output" == *"  maintenance  running, pid $p2"* ]]
}

@test "summary: retention moves the start, says when it ran, and marks a consumer behind it" {
	fill --retain-bytes 20K
	elog-commit --create "$LOG" slow 5
	elog-commit --create "$LOG" fast 1990
	[ "$(js '.retention.max_bytes')" = 20480 ]
	before=$(date +%s%3N)
	elog-retain "$LOG"
	after=$(date +%s%3N)
	start=$(js .start)
	[ "$start" -gt 6 ]
	[ "$(js '[.first, .last, .records]')" = "[$start,1999,$((2000 - start))]" ]
	ran=$(js .retention.last_run_ms)
	[ "$ran" -ge "$before" ] && [ "$ran" -le "$after" ]
	[ "$(js '.consumers[] | select(.name == "slow") | [.offset, .lag, .lost]')" = "[5,$((2000 - start)),$((start - 6))]" ]
	[ "$(js '.consumers[] | select(.name == "fast") | [.offset, .lag, .lost]')" = "[1990,9,0]" ]
	run elog-cat -L "$LOG"
	[[ "$output" == *"    slow: offset 5, lag $((2000 - start)), LOST $((start - 6)) to retention (offsets 6-$((start - 1))), committed "* ]]
	[[ "$output" == *"    fast: offset 1990, lag 9, committed "* ]]
	[[ "$output" == *"  retention    max size 20.0 KiB"* ]]
	run elog-commit -l "$LOG"
	[[ "${lines[2]}" =~ ^slow\ +5\ +$((2000 - start))\ [0-9T:.Z-]+\ LOST\ $((start - 6))\ to\ retention\ \(offsets\ 6-$((start - 1))\)$ ]]
	[[ "${lines[1]}" =~ ^fast\ +1990\ +9\ [0-9T:.Z-]+$ ]]
	run elog-commit -l --json "$LOG"
	[ "$(echo "${lines[1]}" | jq -c '[.name, .lost, .lost_first, .lost_last]')" = "[\"slow\",$((start - 6)),6,$((start - 1))]" ]
}

@test "summary: a loss to retention stays in -L after the consumer moves past it, until acknowledged" {
	fill --retain-bytes 20K
	elog-commit --create "$LOG" slow 5
	elog-retain "$LOG" 2>/dev/null
	start=$(js .start)
	elog-commit --create "$LOG" slow 1999
	[ "$(js '.consumers[] | select(.name == "slow") | [.offset, .lag, .lost, .lost_first, .lost_last]')" = "[1999,0,$((start - 6)),6,$((start - 1))]" ]
	run elog-cat -L "$LOG"
	[[ "$output" == *"    slow: offset 1999, lag 0, LOST $((start - 6)) to retention (offsets 6-$((start - 1))), committed "* ]]
	elog-commit --ack-loss "$LOG" slow
	[ "$(js '.consumers[] | select(.name == "slow") | [.lost, .lost_first]')" = "[0,null]" ]
	run elog-cat -L "$LOG"
	[[ "$output" == *"    slow: offset 1999, lag 0, committed "* ]]
}

@test "summary: a dry run of retention is not a run" {
	fill --retain-bytes 20K
	elog-retain -n "$LOG" >/dev/null
	[ "$(js .retention.last_run)" = null ]
	[ ! -e "$LOG/retain.last" ]
}

@test "summary: the cleanup policy, as created and as set" {
	fill --cleanup compact
	[ "$(js .compaction.cleanup)" = '"compact"' ]
	run elog-cat -L "$LOG"
	[ "${lines[11]}" = "  compaction   on (cleanup compact), last run never" ]
	elog-retain --set cleanup=delete "$LOG"
	[ "$(js .compaction.cleanup)" = '"delete"' ]
	# A log made before the setting existed is shown as what it is: delete.
	elog-retain --set cleanup=compact "$LOG"
	sed -i '/^cleanup /d' "$LOG/settings"
	[ "$(js .compaction.cleanup)" = '"delete"' ]
	run elog-cat -L "$LOG"
	[ "${lines[11]}" = "  compaction   off (cleanup delete), last run never" ]
}

@test "summary: after compaction the record count is an upper bound" {
	fill --cleanup compact
	elog-compact --grace 0s "$LOG"
	[ "$(js .records_exact)" = false ]
	[ "$(js .compaction.last_run_ms)" -gt 0 ]
	[ "$(js .compaction.cleanup)" = '"compact"' ]
	first=$(js .first)
	[ "$first" = "$(elog-cat -c 1 -F %o "$LOG")" ]
	run elog-cat -L "$LOG"
	[ "${lines[1]}" = "  offsets      $first..1999, at most $((2000 - first)) records (compacted)" ]
	# What is really there is fewer.
	[ "$(elog-cat "$LOG" | wc -l)" -lt 2000 ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
}

@test "summary: the compression ratio of a zstd log" {
	elog-append --compress zstd "$T/probe" </dev/null 2>/dev/null || skip "built without zstd"
	awk 'BEGIN { for (i = 0; i < 3000; i++)
		printf "{\"sensor\":\"temperature\",\"unit\":\"celsius\",\"value\":%d,\"site\":\"north\"}\n", i % 7 }' |
		elog-append --compress zstd:5 "$LOG"
	[ "$(js '[.compression.codec, .compression.level]')" = '["zstd",5]' ]
	ratio=$(js .compression.ratio)
	awk -v r="$ratio" 'BEGIN { exit !(r > 1.2) }'
	run elog-cat -L "$LOG"
	[[ "$output" == *"  compression  zstd level 5, ratio $ratio (newest records)"* ]]
}

@test "summary: records past the durable end are not counted" {
	fill
	# Bytes a writer has written but not yet made durable: a copy of the
	# last record appended to the active segment, the watermark unchanged.
	active=$(ls "$LOG" | grep '^[0-9]\{20\}\.log$' | tail -1)
	printf 'not yet durable' >>"$LOG/$active"
	[ "$(js '[.last, .records, .durable_end]')" = '[1999,2000,2000]' ]
}

@test "summary: usage errors and a directory that is not a log" {
	run --separate-stderr elog-cat -L -f "$LOG"
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-cat: -L reads no records: it takes only --json" ]
	run --separate-stderr elog-cat --json "$LOG"
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-cat: --json goes with -L (records are JSON by default)" ]
	mkdir "$T/plain"
	run --separate-stderr elog-cat -L "$T/plain"
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-cat: $T/plain: not an elog directory (no settings file)" ]
}

# A writer killed after writing its batch, before its sync (syncfault.so):
# its records lie past the durable end.
killed_writer() {
	echo first | elog-append "$LOG"
	env LD_PRELOAD="$ELOG_BIN/tests/syncfault.so" ELOG_TEST_SYNC_FAULT="$1" \
		ASAN_OPTIONS=verify_asan_link_order=0 elog-append -p "$LOG" <<<"unacked" || true
}

@test "summary: a killed writer's records past the durable end are pending until the next writer publishes them" {
	killed_writer kill-before
	run elog-cat -L "$LOG"
	[ "${lines[2]}" = "  durable end  1" ]
	[ "${lines[3]}" = "  pending      1 whole record past the durable end, written by a writer that is gone; the next writer publishes it" ]
	[ "$(js '[.durable_end, .pending, .pending_cut]')" = '[1,1,false]' ]
	elog-append "$LOG" </dev/null
	[ "$(elog-cat -v "$LOG" | tr '\n' ' ')" = "first unacked " ]
	run elog-cat -L "$LOG"
	[[ "$output" != *pending* ]]
	[ "$(js '[.durable_end, .pending]')" = '[2,0]' ]
}

@test "summary: after a failed sync, or a writer killed in its sync, the pending records are the ones the next writer cuts" {
	for fault in eio kill; do
		rm -rf "$LOG"
		killed_writer "$fault"
		run elog-cat -L "$LOG"
		[ "${lines[3]}" = "  pending      1 whole record past the durable end, written by a writer that is gone; the next writer cuts it (a sync failed)" ]
		[ "$(js '[.pending, .pending_cut]')" = '[1,true]' ]
		elog-append "$LOG" </dev/null 2>/dev/null
		[ "$(elog-cat -v "$LOG")" = first ]
		[ "$(js .pending)" = 0 ]
	done
}

@test "summary: while a writer is open, what lies past the durable end is its business: no pending count" {
	echo first | elog-append "$LOG"
	mkfifo "$T/in"
	exec 4<>"$T/in"
	background elog-append -p "$LOG" <"$T/in" >"$T/a.off" 4>&-
	until [ "$(js '.writers | length')" = 1 ]; do sleep 0.05; done
	env LD_PRELOAD="$ELOG_BIN/tests/syncfault.so" ELOG_TEST_SYNC_FAULT=kill \
		ASAN_OPTIONS=verify_asan_link_order=0 elog-append "$LOG" <<<"unacked" || true
	[ "$(js '[.durable_end, .pending, (.writers | length)]')" = '[1,0,1]' ]
	run elog-cat -L "$LOG"
	[[ "$output" != *pending* ]]
	exec 4>&-
	wait
	[ "$(js '.writers | length')" = 0 ]
}
