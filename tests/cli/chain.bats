#!/usr/bin/env bats
# chain.bats: a log knows its own chain of segments (elog(5), Segment
# files): each closed segment ends with a seal naming the next one, so a
# segment deleted, a closed segment truncated at a record boundary or a
# segment of another log is told by elog-verify, by readers and by
# elog-cat -L, never taken for compaction.

load helpers

# Five segments or more of 3000 records ({"n":1} ... {"n":3000}).
make_log() {
	seq 3000 | sed 's/.*/{"n":&}/' | elog-append --segment-bytes 16384 "$LOG"
	[ "$(ls "$LOG"/*.log | wc -l)" -ge 5 ]
}

# The base of the Nth segment (1 = the first).
nth_base() {
	ls "$LOG" | grep '\.log$' | sed -n "${1}p" | sed 's/\.log$//; s/^0*\([0-9]\)/\1/'
}

seg() {
	printf '%s/%020d.log' "$LOG" "$1"
}

@test "every closed segment ends with a seal naming the next segment" {
	make_log
	local b2 tail
	b2=$(nth_base 2)
	tail=$(tail -c 56 "$(seg 0)" | od -An -tx1 -N16 | tr -d ' \n')
	# "ELOGSEAL", then the next base as a little-endian u64.
	[ "${tail:0:16}" = "454c4f475345414c" ]
	[ "$(python3 -c 'import sys,struct; print(struct.unpack("<Q", bytes.fromhex(sys.argv[1][16:32]))[0])' "$tail")" = "$b2" ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
}

@test "a deleted segment: verify names the offsets, --strict fails, -L counts them" {
	make_log
	local b2 b3
	b2=$(nth_base 2)
	b3=$(nth_base 3)
	rm "$(seg "$b2")"
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets $b2-$((b3 - 1)) are lost: the seal names segment $b2 as the next, but the next one is $b3: segments are missing; restore the segments from a backup, or run elog-verify --repair to record the loss"* ]]
	run elog-cat --strict "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets $b2-$((b3 - 1)) were lost to damage"* ]]
	# Without --strict: every other record, and the loss said on stderr.
	run --separate-stderr elog-cat "$LOG"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq $((3000 - (b3 - b2))) ]
	[[ "$stderr" == *"offsets $b2-$((b3 - 1)) were lost to damage"* ]]
	run elog-cat -L --json "$LOG"
	[ "$status" -eq 0 ]
	[[ "$output" == *"\"records\":$((3000 - (b3 - b2))),"* ]]
	[[ "$output" == *"\"damaged\":true,\"lost\":$((b3 - b2))"* ]]
	run elog-cat -L "$LOG"
	[[ "$output" == *"lost         $((b3 - b2)) offsets to damage: run elog-verify"* ]]
}

@test "a read from inside a deleted segment reports the gap, then goes on" {
	make_log
	local b2 b3
	b2=$(nth_base 2)
	b3=$(nth_base 3)
	rm "$(seg "$b2")"
	run --separate-stderr elog-cat -o $((b2 + 5)) -c 1 "$LOG"
	[ "$status" -eq 0 ]
	[[ "$output" == "{\"offset\":$b3,"* ]]
	[[ "$stderr" == *"offsets $((b2 + 5))-$((b3 - 1)) were lost to damage"* ]]
}

@test "a closed segment truncated at a record boundary is a loss, not compaction" {
	make_log
	local b2
	b2=$(nth_base 2)
	# Cut the seal and the last two records, exactly at a record's end.
	python3 - "$(seg 0)" <<'EOF'
import struct, sys
p = sys.argv[1]
d = open(p, "rb").read()
pos, ends = 32, []
while pos < len(d) - 56:
    (n,) = struct.unpack_from("<I", d, pos)
    pos += 4 + n
    ends.append(pos)
open(p, "r+b").truncate(ends[-3])
EOF
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets $((b2 - 2))-$((b2 - 1)) are lost: the closed segment ends at byte"*"without its seal: it was truncated; restore the segments from a backup, or run elog-verify --repair to record the loss"* ]]
	run elog-cat --strict "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets $((b2 - 2))-$((b2 - 1)) were lost to damage"* ]]
}

@test "a segment of another log dropped in is named" {
	make_log
	local other=$T/other b2
	b2=$(nth_base 2)
	seq 3000 | sed 's/.*/{"n":&}/' | elog-append --segment-bytes 16384 "$other"
	cp "$other/$(basename "$(seg "$b2")")" "$(seg "$b2")"
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$(basename "$(seg "$b2")"): byte 28: a segment of another log: its header does not name this log's id (move it out and run elog-verify again)"* ]]
}

@test "the newest segment deleted: readers and verify report what was durable" {
	make_log
	local last end
	last=$(ls "$LOG" | grep '\.log$' | tail -1 | sed 's/\.log$//; s/^0*\([0-9]\)/\1/')
	rm "$(seg "$last")"
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets $last-2999 are lost: the seal names segment $last as the next, which is missing, and the watermark says they were durable; restore the segments from a backup, or run elog-verify --repair to record the loss"* ]]
	run elog-cat --strict "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets $last-2999 were lost to damage"* ]]
}

@test "elog-verify --repair records a chain's loss; readers still report it" {
	make_log
	local b2 b3
	b2=$(nth_base 2)
	b3=$(nth_base 3)
	rm "$(seg "$b2")"
	# Recorded, the loss is still told (and the status says it, as
	# elog-verify(1) does for every recorded loss).
	run elog-verify --repair "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"salvaged: repaired: offsets $b2-$((b3 - 1)) recorded as lost to damage"* ]]
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"salvaged: loss: offsets $b2-$((b3 - 1)) were lost to damage"* ]]
	grep -q "^$b2 $((b3 - 1)) " "$LOG/salvaged"
	run elog-cat --strict "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets $b2-$((b3 - 1)) were lost to damage"* ]]
	# New records go on above the old end: no offset names two records.
	echo '{"n":"new"}' | elog-append "$LOG"
	run elog-cat -o 3000 "$LOG"
	[ "$output" = "$(elog-cat -o 3000 -c 1 "$LOG")" ]
	[[ "$output" == *'"offset":3000,'*'"new"'* ]]
}

@test "a closed segment whose seal alone was cut: --repair seals it again" {
	make_log
	local size
	size=$(stat -c %s "$(seg 0)")
	truncate -s $((size - 56)) "$(seg 0)"
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"00000000000000000000.log: byte $((size - 56)): the closed segment lost its seal (byte $((size - 56)) on): run elog-verify --repair to write it again"* ]]
	run elog-verify --repair "$LOG"
	[ "$status" -eq 0 ]
	[[ "$output" == *"sealed again, naming segment $(nth_base 2) as the next"* ]]
	[ "$(stat -c %s "$(seg 0)")" -eq "$size" ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
}

@test "compaction that empties a segment keeps the chain whole" {
	# One key: every segment but the newest is emptied by compaction.
	seq 2000 | sed 's/.*/k {"n":&}/' |
		elog-append -K ' ' --cleanup compact --segment-bytes 8192 "$LOG"
	[ "$(ls "$LOG"/*.log | wc -l)" -ge 4 ]
	run elog-compact "$LOG"
	[ "$status" -eq 0 ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
	run --separate-stderr elog-cat --strict "$LOG"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "a crash between a seal and the next segment: the next writer goes on" {
	make_log
	local b2
	b2=$(nth_base 2)
	# As a writer that died after sealing segment 0 and before creating
	# the next: only segment 0, the watermark naming its records.
	for f in "$LOG"/*.log "$LOG"/*.idx; do
		case $f in */00000000000000000000.*) ;; *) rm "$f" ;; esac
	done
	python3 - "$LOG" "$b2" "$(( $(stat -c %s "$(seg 0)") - 56 ))" <<'EOF'
import struct, sys
def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 & -(c & 1))
    return c ^ 0xFFFFFFFF
d, end, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
w = b"ELOGWMK\n" + struct.pack("<QQQ", end, 0, size)
open(d + "/watermark", "wb").write(w + struct.pack("<II", crc32c(w), 0))
EOF
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
	echo '{"n":"after"}' | elog-append "$LOG"
	run elog-cat -o $((b2 - 1)) "$LOG"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == "{\"offset\":$b2,"*'"after"'* ]]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
}

@test "walking back reports a deleted segment as the same gap" {
	make_log
	local b2 b3
	b2=$(nth_base 2)
	b3=$(nth_base 3)
	rm "$(seg "$b2")"
	run --separate-stderr elog-cat --reverse "$LOG"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq $((3000 - (b3 - b2))) ]
	[[ "$stderr" == *"offsets $b2-$((b3 - 1)) were lost to damage"* ]]
	run elog-cat --reverse --strict "$LOG"
	[ "$status" -eq 1 ]
	# The newest segment gone: walking back from the end says so first.
	rm "$(seg "$(ls "$LOG" | grep '\.log$' | tail -1 | sed 's/\.log$//; s/^0*\([0-9]\)/\1/')")"
	run --separate-stderr elog-cat --reverse -c 1 "$LOG"
	[[ "$stderr" == *"-2999 were lost to damage"* ]]
}

@test "the newest segment cut at a record boundary below the durable end: readers report the loss" {
	seq 300 | elog-append "$LOG"
	python3 - "$(seg 0)" <<'PY'
import struct, sys
p = sys.argv[1]
d = open(p, "rb").read()
pos, n = 32, 0
while n < 100:
    (length,) = struct.unpack_from("<I", d, pos)
    pos += 4 + length
    n += 1
open(p, "r+b").truncate(pos)
PY
	run --separate-stderr elog-cat "$LOG"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 100 ]
	[[ "$stderr" == *"offsets 100-299 were lost to damage"* ]]
	run elog-cat --strict "$LOG"
	[ "$status" -eq 1 ]
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
}

# Keyed records (50 keys) in segments of 16 KiB, a compacted log.
make_keyed_log() {
	seq 3000 | awk '{print "k" ($1 % 50) "\t{\"n\":" $1 "}"}' |
		elog-append -K '	' --segment-bytes 16384 --cleanup compact "$LOG"
	[ "$(ls "$LOG"/*.log | wc -l)" -ge 5 ]
}

# Remove the Nth segment: b3 is its base, b4 the next one's.
remove_nth() {
	b3=$(nth_base "$1")
	b4=$(nth_base $(($1 + 1)))
	rm "$(seg "$b3")"
}

@test "compaction across a deleted segment records the loss first: the gap stays reported" {
	make_keyed_log
	local b3 b4
	remove_nth 3
	run elog-compact "$LOG"
	[ "$status" -eq 0 ]
	# The segments around the gap were merged across it ...
	[ ! -e "$(seg "$b4")" ]
	# ... and the offsets it held are still lost, for every reader.
	run --separate-stderr elog-cat "$LOG"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"offsets $b3-$((b4 - 1)) were lost to damage"* ]]
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets $b3-$((b4 - 1)) were lost to damage"* ]]
	run elog-cat --strict "$LOG"
	[ "$status" -eq 1 ]
}

@test "retention records a deleted segment's loss before it acts" {
	make_log
	local b3 b4
	remove_nth 3
	[ ! -e "$LOG/salvaged" ]
	run elog-retain --max-bytes 40000 "$LOG"
	[ "$status" -eq 0 ]
	grep -q "^$b3 $((b4 - 1)) " "$LOG/salvaged"
}

@test "a closed segment of another log: verify flags it, compaction refuses to merge it" {
	make_keyed_log
	local b2 sum
	b2=$(nth_base 2)
	mv "$LOG" "$T/other"
	make_keyed_log
	cp "$T/other/$(basename "$(seg "$b2")")" "$(seg "$b2")"
	sum=$(cat "$LOG"/*.log | cksum)
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$(basename "$(seg "$b2")"): byte 28: a segment of another log: its header does not name this log's id (move it out and run elog-verify again)"* ]]
	run elog-compact "$LOG"
	[ "$status" -ne 0 ]
	[[ "$output" == *"a segment of another log"* ]]
	# Readers refuse it too, naming it, rather than serve its records.
	run elog-cat "$LOG"
	[ "$status" -eq 4 ]
	[[ "$output" == *"$(basename "$(seg "$b2")"): a segment of another log (its header does not name this log's id): move it out of the log directory"* ]]
	# Nothing was merged or removed.
	[ "$(cat "$LOG"/*.log | cksum)" = "$sum" ]
}

@test "another log's active segment copied in: verify flags it, the writer refuses it" {
	make_log
	seq 3000 | sed 's/.*/{"other":&}/' | elog-append --segment-bytes 16384 "$T/other"
	local last
	last=$(ls "$T/other" | grep '\.log$' | tail -1)
	[ ! -e "$LOG/$last" ] || skip "the other log's newest segment has a name of this one"
	cp "$T/other/$last" "$LOG/$last"
	# Named above this log's newest: it would be taken as the active one.
	[ "$(ls "$LOG" | grep '\.log$' | tail -1)" = "$last" ]
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$last: byte 28: a segment of another log"* ]]
	run elog-verify --repair "$LOG"
	[ "$status" -eq 1 ]
	run elog-append "$LOG" <<<'{"mine":1}'
	[ "$status" -ne 0 ]
	[[ "$output" == *"$last: a segment of another log (its header does not name this log's id): move it out of the log directory"* ]]
	# Nothing was adopted: moved out, the log is whole and takes records.
	mv "$LOG/$last" "$T/"
	rm -f "$LOG/${last%.log}.idx"
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
	run elog-append "$LOG" <<<'{"mine":1}'
	[ "$status" -eq 0 ]
	run elog-cat "$LOG"
	[[ "$output" != *other* ]]
	[ "${#lines[@]}" -eq 3001 ]
}

@test "a stray copy of the active segment under a higher name is flagged, never salvaged into loss" {
	make_log
	local active stray
	active=$(nth_base "$(ls "$LOG" | grep -c '\.log$')")
	stray=$((active + 15))
	cp "$(seg "$active")" "$(seg "$stray")"
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$(basename "$(seg "$stray")"): byte 16: a copy of segment $active, whose base its header names, under another name: not in the log's chain (move it out and run elog-verify again)"* ]]
	[[ "$output" != *"lost"* ]]
	run elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 1 ]
	# Every acknowledged record is still read, with no gap.
	mv "$(seg "$stray")" "$T/"
	rm -f "$LOG/$(printf '%020d.idx' "$stray")"
	run --separate-stderr elog-cat "$LOG"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3000 ]
	[ -z "$stderr" ]
	[ ! -e "$LOG/salvaged" ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
}

@test "a stray copy in the log refuses the writer, which never adopts it" {
	make_log
	local active
	active=$(nth_base "$(ls "$LOG" | grep -c '\.log$')")
	cp "$(seg "$active")" "$(seg $((active + 15)))"
	# A writer that finds LOCK's state whole goes on in the active
	# segment; one that must recover refuses the copy.
	echo '{"n":3001}' | elog-append "$LOG"
	cmp -s "$(seg "$active")" "$(seg $((active + 15)))" && false
	: >"$LOG/LOCK"
	run elog-append "$LOG" <<<'{"n":3002}'
	[ "$status" -ne 0 ]
	[[ "$output" == *"a copy of segment $active (its header names that base): move it out of the log directory"* ]]
	# A closed segment copied under another name is flagged the same way.
	rm "$(seg $((active + 15)))"
	cp "$(seg 0)" "$(seg 1)"
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$(basename "$(seg 1)"): byte 16: a copy of segment 0, whose base"* ]]
	run elog-compact "$LOG"
	[ "$status" -ne 0 ]
}

@test "a loss recorded at the very end of the log is reported before a later record arrives" {
	seq 10 | elog-append "$LOG"
	local size
	size=$(stat -c %s "$(seg 0)")
	# The last record's last byte: its checksum no longer holds.
	printf 'X' | dd of="$(seg 0)" bs=1 seek=$((size - 1)) conv=notrunc status=none
	run elog-verify --repair --salvage "$LOG"
	grep -q '^9 9 ' "$LOG/salvaged"
	run --separate-stderr elog-cat "$LOG"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 9 ]
	[[ "$stderr" == *"offset 9 was lost to damage"* ]]
	run elog-cat --strict "$LOG"
	[ "$status" -eq 1 ]
	# Reported once: a record after it reads with no second report.
	echo 11 | elog-append "$LOG"
	run --separate-stderr elog-cat -o 9 "$LOG"
	[[ "$output" == '{"offset":10,'* ]]
	[ "$(grep -c 'lost to damage' <<<"$stderr")" -eq 1 ]
}

@test "another log's start file copied in hides nothing and deletes nothing" {
	make_log
	seq 3000 | sed 's/.*/{"n":&}/' | elog-append --segment-bytes 16384 "$T/other"
	elog-retain --max-bytes 40000 "$T/other"
	cp "$T/other/start" "$LOG/start"
	# Every record is still read ...
	run elog-cat "$LOG"
	[ "${#lines[@]}" -eq 3000 ]
	# ... the file is named as another log's ...
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"start: names another log: a start file copied in from elsewhere; ignored: the log is read from its first segment"* ]]
	# ... and maintenance deletes none of the segments it would hide
	# (it writes the start again, naming the first segment).
	run elog-retain --max-bytes 100M "$LOG"
	[ "$status" -eq 0 ]
	run elog-cat "$LOG"
	[ "${#lines[@]}" -eq 3000 ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
}
