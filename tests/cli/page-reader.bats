#!/usr/bin/env bats
# page-reader.bats: a reader written again from elog(5) alone
# (tests/format/page_reader.py), and the example reader printed in the page,
# agree with elog-cat and elog-verify on logs the programs made, clean,
# compacted, retained, interrupted, written at once, compressed and damaged
# in every way the page names (tests/format/gen_logs.py; the comparison is
# tests/format/page_compare.py).  `make check-page` runs the same on 600
# logs.  The tests marked "lib bug" show disagreements where the page is
# right and the library is not.

load helpers

setup_test() {
	export FMT=$BATS_TEST_DIRNAME/../format
	# The example of elog(5), as printed, as page_compare.py takes it.
	EXAMPLE=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1])
import page_compare; print(page_compare.example_setup(sys.argv[2]))' "$FMT" "$T")
}

# Rewrite the seal of segment file $1 with its field $2 (end or id) set to
# the value $3 (an offset; for id, 32 hex digits), its CRC right.
reseal() {
	python3 - "$@" <<-'EOF'
	import sys
	sys.path.insert(0, __import__("os").environ["FMT"])
	from gen_logs import seal_of, write_seal
	path, field, value = sys.argv[1:]
	pos, nxt, end, ident = seal_of(path)
	if field == "end":
	    end = int(value)
	else:
	    ident = bytes.fromhex(value)
	write_seal(path, pos, nxt, end, ident)
	EOF
}

# Six segments or more of 600 records, values {"n":1} ... {"n":600}.
make_log() {
	seq 600 | sed 's/.*/{"n":&}/' | elog-append --segment-bytes 4096 "$LOG"
	[ "$(ls "$LOG" | grep -c '\.log$')" -ge 6 ]
}

# The name of the Nth segment (1 = the first; -1 = the last).
nth() {
	if [ "$1" -lt 0 ]; then
		ls "$LOG" | grep '\.log$' | tail -n "${1#-}" | head -n 1
	else
		ls "$LOG" | grep '\.log$' | sed -n "${1}p"
	fi
}

# elog-cat's records and gaps in page_reader.py's form.
cat_view() {
	python3 - "$ELOG_BIN" "$1" <<-'EOF'
	import sys
	sys.path.insert(0, __import__("os").environ["FMT"])
	import page_compare
	events, gaps, status, _ = page_compare.cat(sys.argv[1], sys.argv[2])
	print("\n".join(events + gaps))
	sys.exit(status)
	EOF
}

# The example's records (as page_reader.py prints them) and its losses.
example_view() {
	python3 "$EXAMPLE" "$1" 2>"$T/example.err" | sed 's/^/record /'
	sed -n 's/^offsets \([0-9]*\)-\([0-9]*\) were lost$/gap \1 \2 damage/p' "$T/example.err"
}

@test "page_reader.py knows the CRC-32C check value" {
	run python3 -c "import sys; sys.path.insert(0, '$FMT'); from page_reader import crc32c; print(hex(crc32c(b'123456789')))"
	[ "$output" = "0xe3069283" ]
}

@test "a reader from elog(5) alone agrees with elog-cat and elog-verify on 60 logs" {
	python3 "$FMT/gen_logs.py" --count 60 --seed 34 --bin "$ELOG_BIN" "$T/logs"
	[ "$(ls -d "$T"/logs/0* | grep -vc '\.how$')" -eq 60 ]
	run python3 "$FMT/page_compare.py" --example --bin "$ELOG_BIN" "$T/logs"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[-1]}" = "page_compare: 60 logs, "* ]]
}

@test "page_compare.py reports a reader that disagrees" {
	make_log
	run python3 "$FMT/page_compare.py" --bin "$ELOG_BIN" "$LOG"
	[ "$status" -eq 0 ]
	# A reader that drops the last record.
	cat >"$T/bad.py" <<-'EOF'
	import os, subprocess, sys
	reader = os.path.join(os.environ["FMT"], "page_reader.py")
	out = subprocess.run([sys.executable, reader] + sys.argv[1:],
	                     stdout=subprocess.PIPE).stdout.decode().splitlines()
	print("\n".join(l for l in out if not l.startswith("record 599 ")))
	EOF
	run env PAGE_READER="$T/bad.py" python3 "$FMT/page_compare.py" --bin "$ELOG_BIN" "$LOG"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" = *"DISAGREE $LOG"* ]]
	[[ "$output" = *"elog-cat 600 records"*"page 599"* ]]
}

@test "the example of elog(5) reads past a copy under a lower name, as elog-cat does" {
	make_log
	local a b
	a=$(nth -1)
	b=$(nth -2)
	# The active segment copied under a name inside the segment before it.
	cp "$LOG/$a" "$LOG/$(printf '%020d' $((10#${b%.log} + 1))).log"
	cat_view "$LOG" >"$T/cat"
	example_view "$LOG" >"$T/example"
	diff -u "$T/cat" "$T/example"
	[ "$(wc -l <"$T/cat")" -eq 600 ]
	run python3 "$FMT/page_reader.py" "$LOG"
	[ "$status" -eq 0 ]
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
}

@test "the example of elog(5) reports no loss up to a stray segment above the watermark's" {
	make_log
	local a
	a=$(nth -1)
	cp "$LOG/$a" "$LOG/$(printf '%020d' $((10#${a%.log} + 5000))).log"
	cat_view "$LOG" >"$T/cat"
	example_view "$LOG" >"$T/example"
	diff -u "$T/cat" "$T/example"
	! grep -q '^gap' "$T/example"
}

@test "the example of elog(5) returns the records before a damaged seal, then stops" {
	make_log
	local s size
	s=$(nth 2)
	size=$(stat -c %s "$LOG/$s")
	# A byte of the seal's end field: its CRC no longer holds.
	printf '\377' | dd of="$LOG/$s" bs=1 seek=$((size - 56 + 17)) conv=notrunc 2>/dev/null
	run elog-cat -F '%o\n' "$LOG"
	[ "$status" -eq 4 ]
	elog-cat -F '%o\n' "$LOG" >"$T/cat" 2>/dev/null || true
	run python3 "$EXAMPLE" "$LOG"
	[ "$status" -ne 0 ]
	[[ "${lines[-1]}" = *"damaged seal at byte $((size - 56))" ]]
	python3 "$EXAMPLE" "$LOG" 2>/dev/null | cut -d' ' -f1 >"$T/example" || true
	diff -u "$T/cat" "$T/example"
	[ "$(wc -l <"$T/cat")" -gt 100 ]
}

@test "the example of elog(5) refuses a corrupt settings file, as elog-cat does" {
	make_log
	echo 'segment_bytes 12' >>"$LOG/settings"
	run elog-cat "$LOG"
	[ "$status" -eq 4 ]
	run python3 "$EXAMPLE" "$LOG"
	[ "$status" -ne 0 ]
	[ "$output" = "settings: corrupt" ]
	[ -z "$(python3 "$FMT/page_reader.py" "$LOG" 2>/dev/null)" ]
}

@test "the example of elog(5) ignores a malformed salvaged file, as elog-cat does" {
	make_log
	printf 'elog-salvaged 1\n5 9 1764385200000\ngarbage\n' >"$LOG/salvaged"
	cat_view "$LOG" >"$T/cat"
	example_view "$LOG" >"$T/example"
	diff -u "$T/cat" "$T/example"
	! grep -q '^gap' "$T/example"
}

@test "elog-verify --repair of a log that lost its active segment keeps one seal" {
	make_log
	local a b
	a=$(nth -1)
	b=$(nth -2)
	rm "$LOG/$a"
	run elog-verify --repair "$LOG"
	[ "$status" -eq 1 ]
	# One seal at the end of the segment before, as elog(5) lays it out.
	[ "$(grep -ao ELOGSEAL "$LOG/$b" | wc -l)" -eq 1 ]
	run python3 "$FMT/page_reader.py" "$LOG"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "gap $((10#${a%.log})) 599 damage" ]
	[ "$(grep -ao ELOGSEAL "$LOG/$b" | wc -l)" -eq 1 ]
}

@test "elog-cat refuses a record at or above its segment's seal's end" {
	make_log
	local s
	s=$(nth 2)
	# The seal's end lowered to the segment's last offset.
	reseal "$LOG/$s" end "$(elog-verify -l --json "$LOG" | sed -n 2p |
		sed 's/.*"last":\([0-9]*\).*/\1/')"
	run elog-cat "$LOG"
	[ "$status" -eq 4 ]
}

@test "elog-cat refuses a segment whose seal names another log" {
	make_log
	local s
	s=$(nth 2)
	reseal "$LOG/$s" id 000102030405060708090a0b0c0d0e0f
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	run elog-cat "$LOG"
	[ "$status" -eq 4 ]
}

@test "lib bug: elog-cat reports no gap when the records end below the durable end" {
	skip "lib bug: readers report offsets below the watermark's durable end that no record holds only when the active file is shorter than its length"
	# A log of elog 0.2 (no seals) that lost its active segment.
	cp -r "$BATS_TEST_DIRNAME/../fixtures/zstd-log" "$LOG"
	rm "$LOG/00000000000000000999.log"
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	run elog-cat -F '%o\n' "$LOG"
	[[ "$output" = *"offsets 999-1199 were lost to damage"* ]]
}

@test "lib bug: with a segment above the watermark's, elog-cat takes the end of the log at its base" {
	skip "lib bug: a chain gap is bounded by the next segment listed, not by the durable end"
	make_log
	local a
	a=$(nth -1)
	# The active segment renamed far above: its offsets are lost, no more.
	mv "$LOG/$a" "$LOG/$(printf '%020d' $((10#${a%.log} + 5000))).log"
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" = *"offsets $((10#${a%.log}))-599 are lost"* ]]
	run elog-cat -F '%o\n' "$LOG"
	[[ "$output" = *"offsets $((10#${a%.log}))-599 were lost to damage"* ]]
	# Recorded (as elog-compact records it, up to that segment), the loss
	# is not reported at all.
	printf 'elog-salvaged 1\n%d %d 1764385200000\n' $((10#${a%.log})) \
		$((10#${a%.log} + 4999)) >"$LOG/salvaged"
	run elog-cat -F '%o\n' "$LOG"
	[[ "$output" = *"offsets $((10#${a%.log}))-599 were lost to damage"* ]]
}
