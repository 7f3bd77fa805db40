#!/usr/bin/env bats
# Copying and backing up a log (elog(7), "Copying and backing up a log"):
# a test behind each claim of that section.

load helpers

# The file copy of elog(7), word for word: maintenance held off through
# maint.lock; the small files, then the watermark, then the segments oldest
# first with their indexes, then the dictionaries.  backup LOG DEST (DEST
# absolute).
backup() {
	(cd "$1" && flock maint.lock sh -ec '
	mkdir "$1"
	for f in settings start consumers.json consumers.lost compact.state \
	         salvaged retain.last compact.last copy.last; do
		if [ -e "$f" ]; then cp -p "$f" "$1/"; fi
	done
	cp -p watermark "$1/"
	for s in *.log; do
		cp -p "$s" "$1/"
		if [ -e "${s%.log}.idx" ]; then cp -p "${s%.log}.idx" "$1/"; fi
	done
	for d in dict.*; do
		if [ -e "$d" ]; then cp -p "$d" "$1/"; fi
	done' sh "$2")
}

# A writer that appends numbered lines in small bursts for a while (the
# copies are taken meanwhile; waited for with wait, however slow), printing
# each offset once it is durable (its acknowledgement) to $T/acked.
start_writer() {
	background sh -c 'i=1; while [ $i -le 100 ]; do
		seq $((i * 50 - 49)) $((i * 50)); i=$((i + 1)); sleep 0.01; done |
		elog-append -p --segment-bytes 4K "$1" >"$2"' sh "$LOG" "$T/acked"
	WRITER=$!
	wait_lines "$T/acked" 100
}

# The copy dir holds every record acknowledged before $1 (a count of
# lines of $T/acked), and its records are a prefix of the log's.
holds_acked_prefix() {
	local copy=$1 acked=$2 n
	n=$(elog-cat -F '%o\n' "$copy" | wc -l)
	[ "$n" -ge "$acked" ] || { echo "$copy: $n records, $acked acknowledged before" >&2; return 1; }
	cmp <(elog-cat "$copy") <(elog-cat -c "$n" "$LOG")
}

@test "backup: the file copy of a log being written holds an acknowledged prefix and verifies" {
	command -v flock >/dev/null || skip "no flock(1)"
	printf 'first\n' | elog-append --segment-bytes 4K "$LOG"
	elog-commit --create "$LOG" reader 0
	start_writer
	local k acked
	for k in 1 2 3 4 5; do
		acked=$(wc -l <"$T/acked")
		backup "$LOG" "$T/copy$k"
		nap 0.05
	done
	wait "$WRITER"
	for k in 1 2 3 4 5; do
		run --separate-stderr elog-verify "$T/copy$k"
		[ "$status" -eq 0 ] || { echo "copy$k: $output $stderr" >&2; return 1; }
		holds_acked_prefix "$T/copy$k" 0
		# The consumer came along, and reads on in the copy.
		[ "$(elog-commit -l --json "$T/copy$k" | jq -r .name)" = reader ]
		run elog-cat -g reader -c 1 -F '%o' "$T/copy$k"
		[ "$status" -eq 0 ] && [ "$output" = 1 ]
	done
	# The last copy, taken after most acknowledgements, holds them all.
	holds_acked_prefix "$T/copy5" "$acked"
	# A writer takes the copy on after its last complete record: the
	# watermark's end, or past it when whole records were copied after
	# the watermark (a tail the original's writer had written).
	local end
	end=$(elog-cat -L --json "$T/copy5" | jq .durable_end)
	run elog-append -p "$T/copy5" < <(echo more)
	[ "$status" -eq 0 ] && [ "$output" -ge "$end" ]
	[ "$(elog-cat -o "$output" -F '%s' "$T/copy5")" = more ]
	cmp <(elog-cat -c "$output" "$T/copy5") <(elog-cat -c "$output" "$LOG")
	run elog-verify "$T/copy5"
	[ "$status" -eq 0 ]
}

@test "backup: the file copy keeps the log's id, settings and consumers" {
	command -v flock >/dev/null || skip "no flock(1)"
	seq 1 500 | elog-append --segment-bytes 4K --cleanup compact "$LOG"
	elog-commit --create "$LOG" c1 42
	backup "$LOG" "$T/copy"
	[ "$(elog-cat -L --json "$T/copy" | jq -c '[.id, .segment_bytes, .compaction.cleanup]')" = \
	  "$(elog-cat -L --json "$LOG" | jq -c '[.id, .segment_bytes, .compaction.cleanup]')" ]
	[ "$(elog-commit -l --json "$T/copy" | jq -c '[.name, .offset]')" = '["c1",42]' ]
	cmp <(elog-cat "$LOG") <(elog-cat "$T/copy")
	run elog-verify "$T/copy"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
}

@test "backup: holding maint.lock keeps retention and compaction out (status 3)" {
	command -v flock >/dev/null || skip "no flock(1)"
	seq 1 500 | elog-append --segment-bytes 4K --cleanup compact "$LOG"
	background flock "$LOG/maint.lock" sleep 30
	local i
	for i in $(seq 500); do
		flock -n "$LOG/maint.lock" true || break
		nap 0.01
	done
	run --separate-stderr elog-retain --max-bytes 4K "$LOG"
	[ "$status" -eq 3 ] && [ "$stderr" = "elog-retain: $LOG: another maintenance run holds maint.lock" ]
	run --separate-stderr elog-compact "$LOG"
	[ "$status" -eq 3 ] && [ "$stderr" = "elog-compact: $LOG: another maintenance run holds maint.lock" ]
	# So is a change of the settings, which a run could read half of.
	run --separate-stderr elog-retain --set retain-age=1d "$LOG"
	[ "$status" -eq 3 ] && [ "$stderr" = "elog-retain: $LOG: another maintenance run holds maint.lock" ]
	! grep -q "^retain_ms 86400000$" "$LOG/settings"
	# Writers and readers go on.
	run elog-append -p "$LOG" < <(echo x)
	[ "$status" -eq 0 ] && [ "$output" = 500 ]
	[ "$(elog-cat -o 500 -F '%s' "$LOG")" = x ]
}

@test "backup: a watermark copied after its segment promises records the copy lacks" {
	seq 1 100 | elog-append "$LOG"
	mkdir "$T/copy"
	cp -p "$LOG/settings" "$LOG/start" "$LOG"/*.log "$T/copy/"
	seq 101 110 | elog-append "$LOG"
	cp -p "$LOG/watermark" "$T/copy/"
	run elog-verify "$T/copy"
	[ "$status" -eq 1 ]
	[[ "$output" == *"watermark: byte 8: durable end 110 is past the durable records of 00000000000000000000.log, which end before offset 100"* ]]
	run --separate-stderr elog-append "$T/copy" < <(echo x)
	[ "$status" -eq 4 ]
	# --repair makes it usable, the missing offsets a damage gap (which
	# it reports: status 1).
	run elog-verify --repair "$T/copy"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets 100 to 109, acknowledged but lost to the damage, are recorded as a damage gap"* ]]
	run elog-append -p "$T/copy" < <(echo x)
	[ "$status" -eq 0 ] && [ "$output" = 110 ]
}

@test "backup: segments retention removes during a plain copy are missing from it" {
	seq 1 1000 | elog-append --segment-bytes 4K "$LOG"
	mkdir "$T/copy"
	cp -p "$LOG/settings" "$LOG/start" "$LOG/watermark" "$T/copy/"
	local segs
	segs=$(ls "$LOG"/*.log)
	elog-retain --max-bytes 16K "$LOG"
	# shellcheck disable=SC2086
	run cp -p $segs "$T/copy/"
	[ "$status" -ne 0 ]
	run --separate-stderr elog-verify "$T/copy"
	[ "$status" -eq 1 ]
	[[ "$output" == *"start: byte 16: says the log starts at offset 0, but its first segment's base is "*": the segments in between are missing"* ]]
}

@test "backup: a log nobody writes or maintains copies whole with cp -a" {
	seq 1 500 | elog-append --segment-bytes 4K "$LOG"
	elog-commit --create "$LOG" c1 7
	cp -a "$LOG" "$T/copy"
	cmp <(elog-cat "$LOG") <(elog-cat "$T/copy")
	run elog-verify "$T/copy"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
	[ "$(elog-commit -l --json "$T/copy" | jq -c '[.name, .offset]')" = '["c1",7]' ]
}

@test "backup: elog-cat | elog-append --json --keep-offsets copies an acknowledged prefix of a live log" {
	printf 'first\n' | elog-append --segment-bytes 4K "$LOG"
	start_writer
	local acked k
	for k in 1 2 3; do
		acked=$(wc -l <"$T/acked")
		elog-cat "$LOG" | elog-append --json --keep-offsets "$T/copy$k"
		nap 0.05
	done
	wait "$WRITER"
	for k in 1 2 3; do
		holds_acked_prefix "$T/copy$k" 0
		run elog-verify "$T/copy$k"
		[ "$status" -eq 0 ] && [ "$output" = "" ]
	done
	holds_acked_prefix "$T/copy3" "$acked"
	# Taken up again from its end, the copy catches up with the log.
	local end
	end=$(elog-cat -L --json "$T/copy1" | jq .durable_end)
	elog-cat -o "$end" "$LOG" | elog-append --json --keep-offsets "$T/copy1"
	cmp <(elog-cat "$LOG") <(elog-cat "$T/copy1")
}

@test "backup: the JSON copy is a new log: its own id, settings as given, no consumers" {
	seq 1 50 | elog-append --cleanup compact "$LOG"
	elog-commit --create "$LOG" c1 9
	elog-cat "$LOG" | elog-append --json --keep-offsets --segment-bytes 8K "$T/copy"
	[ "$(elog-cat -L --json "$T/copy" | jq .id)" != "$(elog-cat -L --json "$LOG" | jq .id)" ]
	[ "$(elog-cat -L --json "$T/copy" | jq -c '[.segment_bytes, .compaction.cleanup]')" = '[8192,"delete"]' ]
	[ "$(elog-commit -l --json "$T/copy")" = "" ]
	cmp <(elog-cat "$LOG") <(elog-cat "$T/copy")
}
