#!/usr/bin/env bats
# format.bats: an independent reader written from elog(5) alone
# (tests/format/read_log.py) reads the same records as elog-cat: keyed,
# unkeyed, empty and binary values, explicit and negative timestamps,
# schemas, across many segments; and tests/format/read_index.py, from
# elog(5) alone too, finds every index file as the page lays it out.

load helpers

setup_test() {
	READ_LOG=$BATS_TEST_DIRNAME/../format/read_log.py
	# The example of elog(5), as printed: the literal display after "An
	# independent reader in Python", with mdoc's \e turned back into \.
	EXAMPLE=$T/example.py
	awk '/^An independent reader in Python/ { on = 1 }
		on && /^\.Bd -literal/ { inside = 1; next }
		inside && /^\.Ed/ { exit }
		inside { gsub(/\\e/, "\\"); print }' \
		"$BATS_TEST_DIRNAME/../../man/elog.5" >"$EXAMPLE"
}

# Compressed values need the zstandard module: the Python on PATH may lack
# it where the system's has it (python3-zstandard).  Chosen once: a
# version manager's python3 (pyenv's shim) takes 0.45 s of processor time
# to start.
setup_file_test() {
	PY=python3
	if ! python3 -c 'import zstandard' 2>/dev/null &&
	   /usr/bin/python3 -c 'import zstandard' 2>/dev/null; then
		PY=/usr/bin/python3
	fi
	export PY
}

have_zstandard() {
	"$PY" -c 'import zstandard' 2>/dev/null
}

# elog-cat's view of the log in read_log.py's form (offset ts schema
# key-hex value-hex): the fields come from -F, the raw key and value bytes
# from a second -F, cut apart by the sizes the first one printed.
cat_as_hex() {
	"$ELOG_BIN/elog-cat" -F '%o %T %c %K %S\n' "$1" >"$T/meta" &&
	"$ELOG_BIN/elog-cat" -F '%k%s' "$1" >"$T/raw" &&
	python3 -c '
import sys
raw = open(sys.argv[2], "rb").read()
at = 0
for line in open(sys.argv[1]):
    o, ts, schema, kn, vn = line.split()
    k = raw[at:at + int(kn)]; at += int(kn)
    v = raw[at:at + int(vn)]; at += int(vn)
    print(o, ts, schema, k.hex() or "-", v.hex() or "-")
assert at == len(raw), "bytes left over"
' "$T/meta" "$T/raw"
}

# Compare the readers on $1: read_log.py, the example of elog(5) and
# elog-cat; fails with a diff when they disagree.
same_records() {
	"$PY" "$READ_LOG" "$1" >"$T/python" &&
	"$PY" "$EXAMPLE" "$1" >"$T/example" &&
	cat_as_hex "$1" >"$T/elog-cat" &&
	diff -u "$T/python" "$T/elog-cat" &&
	diff -u "$T/example" "$T/elog-cat"
}

@test "read_log.py knows the CRC-32C check value" {
	python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
from read_log import crc32c
assert crc32c(b"123456789") == 0xE3069283
assert crc32c(bytes(32)) == 0x8A9136AA
assert crc32c(b"\xff" * 32) == 0x62A8AB43
' "$BATS_TEST_DIRNAME/../format"
}

@test "keyed, unkeyed, empty, binary and timed records read the same by both readers" {
	A="$ELOG_BIN/elog-append"
	# Unkeyed text, an empty line (an empty unkeyed value), JSON.
	printf 'plain text\n\n{"a":[1,2,{"b":null}]}\nsp ace\ttab\n' | "$A" "$LOG"
	# Keyed, and tombstones (a key with an empty value).
	printf 'user1=alice\nuser2=bob\nuser1=\nuser3==equals=in=value\n' | "$A" -K = "$LOG"
	# One fixed key and a schema.
	printf 'one\ntwo\n' | "$A" -k fixed-key -s 65535 "$LOG"
	# Timestamps from the input, negative and far in the future too.
	printf '0\tepoch\n-1000\tbefore\n4102444800000\tlater\n1764385200250\tk:v\n' |
		"$A" -t --max-skew 100000w -K : -s 7 "$LOG"
	# Bytes that are not UTF-8, and every byte value but newline in a line...
	python3 -c '
import sys
out = sys.stdout.buffer
out.write(b"\xff\xfe\x00\x01 invalid utf-8\n")
out.write(bytes(b for b in range(256) if b != 10) + b"\n")
out.write(b"key\x00with\x00nuls=\x80\x81\x82\n")
' | "$A" -K = "$LOG"
	# ...and newlines inside records, NUL-delimited.
	printf 'multi\nline\nvalue\0k\nkey|v\nvalue\0' | "$A" -0 -K '|' "$LOG"

	run same_records "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$T/python")" -eq 19 ]
	# Spot checks of the independent reader itself.
	grep -q '^1 [0-9]* 0 - -$' "$T/python"                     # empty, unkeyed
	grep -q " 0 $(printf user1 | od -An -tx1 | tr -d ' \n') -$" "$T/python"  # tombstone
	grep -q '^[0-9]* -1000 7 - 6265666f7265$' "$T/python"       # "before"
	grep -q ' 0 - fffe0001' "$T/python"
}

@test "a log of many segments reads the same by both readers" {
	seq 1 3000 | sed 's/^/event number /' |
		"$ELOG_BIN/elog-append" -K ' ' --segment-bytes 4K "$LOG"
	[ "$(ls "$LOG"/*.log | wc -l)" -gt 20 ]
	run same_records "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$T/python")" -eq 3000 ]
	# Offsets 0..2999, each once, in order, across the segment files.
	[ "$(cut -d' ' -f1 "$T/python" | sort -n -u | wc -l)" -eq 3000 ]
	[ "$(head -n 1 "$T/python" | cut -d' ' -f1)" -eq 0 ]
	[ "$(tail -n 1 "$T/python" | cut -d' ' -f1)" -eq 2999 ]
}

@test "read_log.py stops at the watermark, as elog-cat does" {
	printf 'a\nb\nc\n' | "$ELOG_BIN/elog-append" "$LOG"
	# Three more records written past the watermark, as if by a writer that
	# crashed before publishing them: a copy of the segment's records.
	seg=$LOG/00000000000000000000.log
	tail -c +33 "$seg" >"$T/records"
	cat "$T/records" >>"$seg"
	run same_records "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$T/python")" -eq 3 ]
}

@test "read_log.py reports damage with file and byte position" {
	printf 'first\nsecond\nthird\n' | "$ELOG_BIN/elog-append" "$LOG"
	# Flip a bit in the value of the second record: it starts at byte
	# 32 + 28 + 5 = 65, its value at 65 + 28.
	seg=$LOG/00000000000000000000.log
	printf '\x53' | dd of="$seg" bs=1 seek=$((65 + 28)) conv=notrunc 2>/dev/null
	# Records before the damage are printed; the message goes to stderr.
	run sh -c 'python3 "$1" "$2" 2>&1 >/dev/null' sh "$READ_LOG" "$LOG"
	[ "$status" -eq 1 ]
	[ "$output" = "read_log.py: $LOG: 00000000000000000000.log: corrupt record at byte 65" ]
	python3 "$READ_LOG" "$LOG" >"$T/before" 2>/dev/null || true
	[ "$(wc -l <"$T/before")" -eq 1 ]
	grep -q '^0 [0-9]* 0 - 6669727374$' "$T/before"
	run "$ELOG_BIN/elog-cat" "$LOG"
	[ "$status" -ne 0 ]
	[[ "$output" == *"00000000000000000000.log"*"byte 65"* ]]
}

@test "the example of elog(5) is there to be run" {
	[ "$(wc -l <"$EXAMPLE")" -gt 50 ]
	"$PY" -m py_compile "$EXAMPLE"
}

# Write a watermark: durable_end, segment_base, segment_bytes.
put_watermark() {
	python3 - "$LOG/watermark" "$@" <<'PY'
import struct, sys
def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 & -(c & 1))
    return c ^ 0xFFFFFFFF
b = b"ELOGWMK\n" + struct.pack("<3Q", *map(int, sys.argv[2:5]))
open(sys.argv[1], "wb").write(b + struct.pack("<II", crc32c(b), 0))
PY
}

@test "a segment the watermark names that has a successor is read whole" {
	seq 1 300 | "$ELOG_BIN/elog-append" --segment-bytes 4K "$LOG"
	# A watermark left from before the writer rolled, naming segment 0
	# with a length short of its end (as after a power loss).
	put_watermark 300 0 100
	run same_records "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
	# All of segment 0, not the 100 bytes; the segments after the one
	# the watermark names hold nothing durable as far as it says.
	second=$(ls "$LOG" | grep '\.log$' | sed -n 2p)
	[ "$(wc -l <"$T/python")" -eq "$((10#${second%.log}))" ]
}

@test "segments below the start file are not read, as a crashed retention left them" {
	seq 1 600 | "$ELOG_BIN/elog-append" --segment-bytes 4K "$LOG"
	cp "$LOG/00000000000000000000.log" "$T/first"
	"$ELOG_BIN/elog-retain" --max-bytes 12K "$LOG"
	[ ! -e "$LOG/00000000000000000000.log" ]
	# The unlink that a crash kept from reaching the disk.
	cp "$T/first" "$LOG/00000000000000000000.log"
	run same_records "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(head -n 1 "$T/python" | cut -d' ' -f1)" -gt 0 ]
	[ "$(tail -n 1 "$T/python" | cut -d' ' -f1)" -eq 599 ]
}

@test "a missing, empty or garbled watermark reads as elog-cat reads it" {
	seq 1 300 | "$ELOG_BIN/elog-append" --segment-bytes 4K "$LOG"
	head -c 40 /dev/urandom >"$LOG/watermark"
	run same_records "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
	# The closed segments, nothing of the newest.
	[ "$(wc -l <"$T/python")" -gt 0 ] && [ "$(wc -l <"$T/python")" -lt 300 ]
	: >"$LOG/watermark"
	run same_records "$LOG"
	[ "$status" -eq 0 ] && [ ! -s "$T/python" ]
	rm "$LOG/watermark"
	run same_records "$LOG"
	[ "$status" -eq 0 ] && [ ! -s "$T/python" ]
}

@test "an active segment shorter than the watermark says reads to what is there" {
	seq 1 300 | "$ELOG_BIN/elog-append" --segment-bytes 4K "$LOG"
	seg=$(ls "$LOG"/*.log | tail -n 1)
	# Cut at a record boundary: the first three records of the segment.
	python3 - "$seg" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
pos = 32
for _ in range(3):
    pos += 4 + struct.unpack_from("<I", b, pos)[0]
open(sys.argv[1], "wb").write(b[:pos])
PY
	run same_records "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$T/python")" -lt 300 ]
	run "$ELOG_BIN/elog-verify" "$LOG"
	[ "$status" -eq 1 ]
}

@test "a directory without settings is no log to any reader" {
	seq 1 3 | "$ELOG_BIN/elog-append" "$LOG"
	rm "$LOG/settings"
	run "$PY" "$READ_LOG" "$LOG"
	[ "$status" -eq 3 ]
	run "$PY" "$EXAMPLE" "$LOG"
	[ "$status" -eq 1 ] && [ "$output" = "not an elog directory (no settings file)" ]
	run "$ELOG_BIN/elog-cat" "$LOG"
	[ "$status" -eq 5 ]
}

@test "compressed logs, with and without a dictionary, read the same by all readers" {
	"$ELOG_BIN/elog-append" --compress zstd "$T/probe" </dev/null 2>/dev/null ||
		skip "elog built without zstd"
	have_zstandard || skip "no zstandard module for Python (python3-zstandard)"
	awk 'BEGIN { for (i = 0; i < 3000; i++)
		printf "k%d={\"sensor\":\"gw-%03d\",\"reading\":%d,\"status\":\"ok\"}\n",
			i % 50, i % 97, i * 7 }' >"$T/in"
	"$ELOG_BIN/elog-append" -K = --compress zstd --segment-bytes 16K --cleanup compact \
		"$LOG" <"$T/in"
	[ -f "$LOG/dict.1" ]
	run same_records "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$T/python")" -eq 3000 ]
	"$ELOG_BIN/elog-append" -K = --compress zstd --no-dictionary "$T/nodict" <"$T/in"
	run same_records "$T/nodict"
	[ "$status" -eq 0 ]
	# After compaction and retention too.
	"$ELOG_BIN/elog-compact" --grace 0s "$LOG"
	"$ELOG_BIN/elog-retain" --max-bytes 32K "$LOG"
	run same_records "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "index files are as elog(5) lays them out (read_index.py), times and all" {
	local w
	# Three producers whose clocks disagree, small segments, a dense index.
	"$ELOG_BIN/elog-append" --segment-bytes 8K --index-interval 256 --cleanup compact \
		"$LOG" </dev/null
	for w in 0 1 2; do
		awk -v w="$w" 'BEGIN { srand(3 + w)
			for (i = 0; i < 300; i++) {
				t = 1000000 + i * 100 + w * 1000 - int(rand() * 2000)
				printf "%d\tk%d:v%d-%d\n", t, i % 40, w, i
			} }' | "$ELOG_BIN/elog-append" -t -K : --batch 5 "$LOG" 3>&- &
	done
	wait
	run python3 "$BATS_TEST_DIRNAME/../format/read_index.py" "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "00000000000000000000.idx v2 ${lines[0]##* v2 }" ]
	[ "$(printf '%s\n' "$output" | grep -c ' v2 ')" -gt 3 ]
	# Rewritten by compaction, and rebuilt by elog-verify --repair.
	"$ELOG_BIN/elog-compact" --grace 0s "$LOG"
	rm "$LOG/00000000000000000000.idx"
	"$ELOG_BIN/elog-verify" --repair "$LOG" >/dev/null
	[ -f "$LOG/00000000000000000000.idx" ]
	run python3 "$BATS_TEST_DIRNAME/../format/read_index.py" "$LOG"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "elog-verify flags offsets out of range: a watermark past ELOG_OFFSET_MAX" {
	echo a | "$ELOG_BIN/elog-append" "$LOG"
	size=$(stat -c %s "$LOG/00000000000000000000.log")
	put_watermark 9223372036854775809 0 "$size"
	run "$ELOG_BIN/elog-verify" "$LOG"
	[ "$status" -ne 0 ]
	[[ "$output" == *"offsets reach 9223372036854775809, out of range: offsets stay below 9223372036854775808 (ELOG_OFFSET_MAX); copy the records to a new log"* ]]
}

@test "the first writer of 0.3 marks a log of 0.2 format 2, and says so once" {
	"$ELOG_BIN/elog-append" --compress zstd "$T/probe" </dev/null 2>/dev/null ||
		skip "elog built without zstd: the log of 0.2 kept here is compressed"
	cp -r "$BATS_TEST_DIRNAME/../fixtures/zstd-log" "$LOG"
	[ "$(head -1 "$LOG/settings")" = "format 1" ]
	# Read as it is: reading changes nothing.
	elog-cat "$LOG" >/dev/null
	[ "$(head -1 "$LOG/settings")" = "format 1" ]
	run elog-cat -L "$LOG"
	[[ "$output" == *"  format       1: segments of version 1, indexes of version 1"* ]]
	run elog-verify -l "$LOG"
	[[ "${lines[0]}" == *" v1/1 closed" ]]
	run --separate-stderr elog-append "$LOG" <<<'{"new":1}'
	[ "$status" -eq 0 ]
	[ "$stderr" = "elog-append: $LOG: the log is now of format 2: programs of elog 0.2 refuse it (elog(7), Upgrading)" ]
	[ "$(head -1 "$LOG/settings")" = "format 2" ]
	run --separate-stderr elog-append "$LOG" <<<'{"new":2}'
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
	run elog-cat -L --json "$LOG"
	[[ "$output" == *'"format":2,"segment_versions":[1],"index_versions":[1,2]'* ]]
}

@test "a log of a newer format is refused as a whole, before any segment is read" {
	echo '{"a":1}' | elog-append "$LOG"
	sed -i 's/^format 2$/format 3/' "$LOG/settings"
	for p in elog-cat elog-verify elog-append elog-compact elog-retain; do
		run "$p" "$LOG" </dev/null
		[ "$status" -eq 4 ]
		[[ "$output" == *"settings: unsupported format version"* ]]
	done
}

@test "the page's example and read_log.py report the losses a repair recorded" {
	seq 10 | "$ELOG_BIN/elog-append" "$LOG"
	local seg=$LOG/00000000000000000000.log size
	size=$(stat -c %s "$seg")
	printf 'X' | dd of="$seg" bs=1 seek=$((size - 1)) conv=notrunc status=none
	run "$ELOG_BIN/elog-verify" --repair --salvage "$LOG"
	run --separate-stderr "$PY" "$EXAMPLE" "$LOG"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 9 ]
	[ "$stderr" = "offsets 9-9 were lost" ]
	run --separate-stderr "$PY" "$READ_LOG" "$LOG"
	[ "$status" -eq 0 ]
	[ "$stderr" = "read_log.py: $LOG: offsets 9-9 were lost to damage" ]
	same_records "$LOG"
}

@test "the page's example refuses a newer format and another log's segment" {
	seq 10 | "$ELOG_BIN/elog-append" "$LOG"
	seq 10 | "$ELOG_BIN/elog-append" "$T/other"
	cp "$T/other/00000000000000000000.log" "$LOG/"
	run "$PY" "$EXAMPLE" "$LOG"
	[ "$status" -eq 1 ]
	[ "$output" = "00000000000000000000.log: a copy of another segment or log" ]
	run "$PY" "$READ_LOG" "$LOG"
	[ "$status" -ne 0 ]
	sed -i 's/^format 2$/format 3/' "$LOG/settings"
	run "$PY" "$EXAMPLE" "$LOG"
	[ "$status" -eq 1 ]
	[ "$output" = "settings: unsupported format version" ]
	run "$PY" "$READ_LOG" "$LOG"
	[ "$status" -eq 3 ]
}
