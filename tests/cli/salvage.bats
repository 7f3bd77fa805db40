#!/usr/bin/env bats
# elog-verify --repair --salvage: the way past damage in a closed segment.
# Every record that checks is kept, the damaged bytes are moved aside, the
# offsets lost are reported to readers as a gap, and elog-verify reports
# each loss afterwards (status 1): a log that lost records is never called
# clean.  ELOG_BIN is the build directory.

load helpers

SEG0=00000000000000000000.log

# 300 records of 38 bytes of value, in 4 KiB segments (61 per segment).
fill() {
	awk 'BEGIN { for (i = 0; i < 300; i++)
		printf "record number %06d with some padding\n", i }' |
		elog-append --segment-bytes 4K "$LOG"
}

# The byte position of offset N's record in segment 0 (records are 66
# bytes each after the 32-byte header).
pos() { echo $((32 + $1 * 66)); }

@test "salvage: flipped bytes in a closed segment" {
	fill
	printf '\377\377\377' | dd of="$LOG/$SEG0" bs=1 seek=$(($(pos 7) + 20)) conv=notrunc 2>/dev/null
	run --separate-stderr elog-cat "$LOG"
	[ "$status" -eq 4 ] && [ "${#lines[@]}" -eq 7 ]
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	run --separate-stderr elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" =~ ^$SEG0:\ byte\ $(pos 7):\ repaired:\ salvaged:\ 66\ damaged\ bytes\ moved\ to\ $SEG0\.cut-[0-9]+\;\ offsets\ 7-7\ may\ be\ lost,\ and\ readers\ report\ them\ as\ a\ gap$ ]]
	[ "$stderr" = "elog-verify: $LOG: 1 range of offsets lost to damage, which readers report as gaps" ]
	aside=$(ls "$LOG" | grep "^$SEG0\.cut-")
	[ "$(wc -c <"$LOG/$aside")" -eq 66 ]
	run --separate-stderr elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "$aside: warning: bytes cut from a segment by elog-verify --repair; delete it once inspected" ]
	[[ "${lines[1]}" =~ ^salvaged:\ loss:\ offset\ 7\ was\ lost\ to\ damage\ \(recorded\ by\ a\ repair\ or\ salvage\ at\ 20[0-9-]+T[0-9:.]+Z\)\;\ readers\ report\ it\ as\ a\ gap$ ]]
	[ "${#lines[@]}" -eq 2 ]
	run --separate-stderr elog-cat -F '%o\n' "$LOG"
	[ "$status" -eq 0 ]
	[ "$stderr" = "elog-cat: $LOG: offset 7 was lost to damage (see elog-verify --salvage)" ]
	[ "${#lines[@]}" -eq 299 ]
	[ "${lines[6]}" = 6 ] && [ "${lines[7]}" = 8 ]
	[ "$(printf '%s\n' "${lines[@]}" | sort -n | uniq | wc -l)" -eq 299 ]
	[ "$(head -1 "$LOG/salvaged")" = "elog-salvaged 1" ]
	[[ "$(sed -n 2p "$LOG/salvaged")" =~ ^7\ 7\ [0-9]+$ ]]
}

@test "salvage: a zeroed range across several records" {
	fill
	dd if=/dev/zero of="$LOG/$SEG0" bs=1 seek=$(($(pos 10) + 5)) count=300 conv=notrunc 2>/dev/null
	run elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets 10-14 may be lost"* ]]
	run --separate-stderr elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "${lines[1]}" == "salvaged: loss: offsets 10-14 were lost to damage (recorded by a repair or salvage at "*"); readers report them as a gap" ]]
	run --separate-stderr elog-cat -F '%o\n' "$LOG"
	[ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 295 ]
	[ "$stderr" = "elog-cat: $LOG: offsets 10-14 were lost to damage (see elog-verify --salvage)" ]
	# --strict makes the gap an error, as for retention.
	run --separate-stderr elog-cat --strict -F '%o\n' "$LOG"
	[ "$status" -eq 1 ] && [ "${#lines[@]}" -eq 10 ]
}

@test "salvage: a truncated closed segment" {
	fill
	truncate -s $(($(pos 50) + 30)) "$LOG/$SEG0"
	run elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"byte $(pos 50): repaired: salvaged: 30 damaged bytes"*"offsets 50-60 may be lost"* ]]
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"salvaged: loss: offsets 50-60 were lost to damage"* ]]
	run --separate-stderr elog-cat -F '%o\n' "$LOG"
	[ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 289 ]
	[ "$stderr" = "elog-cat: $LOG: offsets 50-60 were lost to damage (see elog-verify --salvage)" ]
}

@test "salvage: a consumer stuck at the damage goes on past it, told of the gap" {
	fill
	elog-commit --create "$LOG" uplink 5
	dd if=/dev/zero of="$LOG/$SEG0" bs=1 seek=$(pos 7) count=66 conv=notrunc 2>/dev/null
	run --separate-stderr elog-cat -g uplink -c 3 -F '%o\n' "$LOG"
	[ "$status" -eq 4 ] && [ "${lines[0]}" = 6 ]
	run elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 1 ]
	run --separate-stderr elog-cat -g uplink -c 3 -F '%o\n' "$LOG"
	[ "$status" -eq 0 ] && [ "${lines[*]}" = "6 8 9" ]
	[ "$stderr" = "elog-cat: $LOG: offset 7 was lost to damage (see elog-verify --salvage)" ]
	# Reading from a position inside the range reports it too.
	run --separate-stderr elog-cat -o 7 -c 1 -F '%o\n' "$LOG"
	[ "$output" = 8 ] && [ "$stderr" = "elog-cat: $LOG: offset 7 was lost to damage (see elog-verify --salvage)" ]
}

@test "salvage: a sound log is left alone, and a second salvage changes nothing" {
	fill
	before=$(cat "$LOG"/*.log | cksum)
	run elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 0 ] && [ -z "$output" ]
	[ "$(cat "$LOG"/*.log | cksum)" = "$before" ]
	[ ! -e "$LOG/salvaged" ]
}

@test "salvage: a damaged header of a closed segment is rebuilt, no record lost" {
	fill
	elog-cat "$LOG" >"$T/before"
	printf 'X' | dd of="$LOG/$SEG0" bs=1 seek=0 conv=notrunc 2>/dev/null
	run --separate-stderr elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[ "${lines[1]}" = "$SEG0: unreadable: offsets 0-60 cannot be read (the segment header is damaged); elog-verify --repair --salvage gets past it if it can rebuild the header, keeping 61 records and losing no offset" ]
	[ "$stderr" = "elog-verify: $LOG: 1 problem found in 5 segments (239 records); run elog-verify --repair --salvage $LOG to get past the damage" ]
	run --separate-stderr elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^$SEG0:\ byte\ 0:\ repaired:\ salvaged:\ 32\ damaged\ bytes\ moved\ to\ $SEG0\.cut-[0-9]+\;\ no\ record\ lost$ ]]
	aside=$(ls "$LOG" | grep "^$SEG0\.cut-")
	[ "$(head -c 8 "$LOG/$aside")" = "XLOGSEG" ]
	[ "$(head -c 8 "$LOG/$SEG0")" = "ELOGSEG" ]
	[ ! -e "$LOG/salvaged" ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
	elog-cat "$LOG" | cmp - "$T/before"
}

@test "salvage: a header damaged together with the records after it" {
	fill
	printf '\377%.0s' $(seq 40) | dd of="$LOG/$SEG0" bs=1 seek=20 conv=notrunc 2>/dev/null
	run --separate-stderr elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "$SEG0: byte 0: repaired: salvaged: 32 damaged bytes moved to "*"; no record lost" ]]
	[[ "${lines[1]}" == "$SEG0: byte 32: repaired: salvaged: 66 damaged bytes moved to "*"; offsets 0-0 may be lost, and readers report them as a gap" ]]
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"salvaged: loss: offset 0 was lost to damage"* ]]
	[ "$(elog-cat -F '%o\n' "$LOG" 2>/dev/null | head -1)" = 1 ]
}

@test "salvage: a damaged header of a compressed segment is rebuilt with its codec and dictionary" {
	elog-append --compress zstd "$T/probe" </dev/null 2>/dev/null || skip "built without zstd"
	awk 'BEGIN { for (i = 0; i < 3000; i++)
		printf "{\"n\":%d,\"pad\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}\n", i }' |
		elog-append --compress zstd --segment-bytes 8K "$LOG"
	elog-cat "$LOG" >"$T/before"
	seg=$(ls "$LOG" | grep '^[0-9]\{20\}\.log$' | sed -n 3p)
	printf 'XXXXXXXXXXXXXXXX' | dd of="$LOG/$seg" bs=1 seek=8 conv=notrunc 2>/dev/null
	run --separate-stderr elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 0 ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
	elog-cat "$LOG" | cmp - "$T/before"
}

@test "salvage: a header whose values no codec reads is not rebuilt" {
	elog-append --compress zstd "$T/probe" </dev/null 2>/dev/null || skip "built without zstd"
	awk 'BEGIN { for (i = 0; i < 3000; i++)
		printf "{\"n\":%d,\"pad\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}\n", i }' |
		elog-append --compress zstd --segment-bytes 8K "$LOG"
	[ -e "$LOG/dict.1" ] || skip "no dictionary trained"
	# A segment written after the dictionary was trained.
	seg=$(ls "$LOG" | grep '^[0-9]\{20\}\.log$' | sed -n 12p)
	printf 'X' | dd of="$LOG/$seg" bs=1 seek=0 conv=notrunc 2>/dev/null
	mv "$LOG/dict.1" "$T/"
	run --separate-stderr elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 4 ]
	[[ "$stderr" == "elog-verify: $LOG: $seg: the segment header is damaged and cannot be rebuilt: "* ]]
	[ "$(head -c 1 "$LOG/$seg")" = X ]
}

@test "salvage: a malformed salvaged file is damage, since readers would report no gap" {
	fill
	printf 'elog-salvaged 1\n9 3 1\n' >"$LOG/salvaged"
	run elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "salvaged: malformed: readers report no gap for the offsets that salvage lost (format in elog(5))" ]
}

# Issue 22, case 1: one byte flipped below the durable end of the active
# segment.  Every record after it is kept at its offset, only the damaged
# record's offset is lost, and new records go above the old durable end.
case1() {
	seq 2000 | sed 's/.*/{"n":&}/' | elog-append "$LOG"
	elog-commit --create "$LOG" uplink 1500
	printf Z | dd of="$LOG/$SEG0" bs=1 seek=20000 conv=notrunc 2>/dev/null
}

@test "salvage: the active segment (issue 22, case 1): offsets never name two records" {
	case1
	run --separate-stderr elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "$SEG0: byte 19978: corrupt record: checksum mismatch, below the durable end (54947 bytes from here to the end are not read)" ]
	[[ "${lines[2]}" =~ ^$SEG0:\ byte\ 19978:\ repaired:\ salvaged:\ 37\ damaged\ bytes\ moved\ to\ $SEG0\.cut-[0-9]+\;\ offsets\ 542-542\ may\ be\ lost,\ and\ readers\ report\ them\ as\ a\ gap$ ]]
	[ "${lines[3]}" = "watermark: repaired: rewritten: durable end 2000, 74888 bytes of $SEG0" ]
	[ "${#lines[@]}" -eq 4 ]
	[ "$stderr" = "elog-verify: $LOG: 1 range of offsets lost to damage, which readers report as gaps" ]
	seq 1200 | elog-append "$LOG"
	# The record at 1200 is still the one acknowledged there.
	run --separate-stderr elog-cat -o 1200 -c 1 -F '%o %s\n' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = '1200 {"n":1201}' ]
	# The consumer resumes after 1500 and sees the old records, then the new.
	run --separate-stderr elog-cat -g uplink -c 1 -F '%o %s\n' "$LOG"
	[ "$output" = '1501 {"n":1502}' ]
	run --separate-stderr elog-cat -o 1999 -c 2 -F '%o %s\n' "$LOG"
	[ "${lines[0]}" = '1999 {"n":2000}' ] && [ "${lines[1]}" = '2000 1' ]
	# Every offset names one record: 2000 old ones but 542, then 1200 new.
	elog-cat -F '%o %s\n' "$LOG" 2>/dev/null >"$T/all"
	[ "$(wc -l <"$T/all")" -eq 3199 ]
	[ "$(cut -d' ' -f1 "$T/all" | sort -n | uniq | wc -l)" -eq 3199 ]
	[ "$(awk '$1 < 2000 && $2 != "{\"n\":" $1 + 1 "}"' "$T/all" | wc -l)" -eq 0 ]
	[ "$(awk '$1 >= 2000 && $2 != $1 - 1999' "$T/all" | wc -l)" -eq 0 ]
	! grep -q '^542 ' "$T/all"
	# Readers are told of the one offset lost.
	run --separate-stderr elog-cat -o 540 -c 3 -F '%o\n' "$LOG"
	[ "${lines[*]}" = "540 541 543" ]
	[ "$stderr" = "elog-cat: $LOG: offset 542 was lost to damage (see elog-verify --salvage)" ]
}

@test "salvage: the active segment: before the repair, elog-verify says what --salvage would keep" {
	case1
	elog-commit --create "$LOG" done 1999
	run --separate-stderr elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[ "${lines[1]}" = "$SEG0: unreadable: offsets 542-1999 cannot be read past the damage; consumer behind them: uplink (at 1500); elog-verify --repair --salvage gets past it, keeping 1457 records and losing offset 542" ]
	[ "$stderr" = "elog-verify: $LOG: 1 problem found in 1 segment (542 records); run elog-verify --repair --salvage $LOG to get past the damage" ]
}

@test "salvage: the active segment: losing its last durable records, the writer goes on above them" {
	seq 100 | elog-append "$LOG"
	size=$(stat -c %s "$LOG/$SEG0")
	printf Z | dd of="$LOG/$SEG0" bs=1 seek=$((size - 5)) conv=notrunc 2>/dev/null
	run elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offsets 99-99 may be lost"* ]]
	[[ "$output" == *"00000000000000000100.log: repaired: created: offsets 99 to 99, acknowledged but lost to the damage"* ]]
	echo new | elog-append -p "$LOG" >"$T/p"
	[ "$(cat "$T/p")" = 100 ]
	run --separate-stderr elog-cat -o 98 -F '%o %s\n' "$LOG"
	[ "${lines[*]}" = "98 99 100 new" ]
	[ "$stderr" = "elog-cat: $LOG: offset 99 was lost to damage (see elog-verify --salvage)" ]
}

@test "salvage: the active segment: a second salvage changes nothing" {
	case1
	elog-verify --repair --salvage "$LOG" >/dev/null 2>&1 || true
	before=$(cat "$LOG/$SEG0" "$LOG/salvaged" | cksum)
	run --separate-stderr elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 1 ]
	[[ "${lines[1]}" == "salvaged: loss: offset 542 was lost to damage (recorded by a repair or salvage at "*"); readers report it as a gap" ]]
	[ "$(cat "$LOG/$SEG0" "$LOG/salvaged" | cksum)" = "$before" ]
}

@test "salvage: the active segment's damaged header is rebuilt, no record lost" {
	seq 100 | elog-append "$LOG"
	elog-commit --create "$LOG" uplink 50
	printf 'ZZ' | dd of="$LOG/$SEG0" bs=1 seek=2 conv=notrunc 2>/dev/null
	run -4 elog-cat "$LOG"
	run --separate-stderr elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "$SEG0: byte 0: bad magic: not an elog segment" ]
	[ "${lines[1]}" = "$SEG0: unreadable: offsets 0-99 cannot be read (the segment header is damaged); consumer behind them: uplink (at 50); elog-verify --repair --salvage gets past it if it can rebuild the header, keeping 100 records and losing no offset" ]
	[ "$stderr" = "elog-verify: $LOG: 1 problem found in 1 segment (0 records); run elog-verify --repair --salvage $LOG to get past the damage" ]
	run --separate-stderr elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 0 ]
	[[ "${lines[2]}" =~ ^$SEG0:\ byte\ 0:\ repaired:\ salvaged:\ 32\ damaged\ bytes\ moved\ to\ $SEG0\.cut-[0-9]+\;\ no\ record\ lost$ ]]
	[ "${lines[3]}" = "watermark: repaired: rewritten: durable end 100, 3024 bytes of $SEG0" ]
	aside=$(ls "$LOG" | grep "^$SEG0\.cut-")
	[ "$(head -c 4 "$LOG/$aside")" = "ELZZ" ]
	[ ! -e "$LOG/salvaged" ]
	[ "$(elog-cat -F '%s\n' "$LOG")" = "$(seq 100)" ]
	# The writer goes on at 100: no offset named twice.
	[ "$(echo new | elog-append -p "$LOG")" = 100 ]
	[ "$(elog-cat -g uplink -c 1 -F '%o %s\n' "$LOG")" = "51 52" ]
}

@test "salvage: the active segment's damaged header takes the codec of the segment before" {
	elog-append --compress zstd "$T/probe" </dev/null 2>/dev/null || skip "built without zstd"
	awk 'BEGIN { for (i = 0; i < 3000; i++)
		printf "{\"n\":%d,\"pad\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}\n", i }' |
		elog-append --compress zstd --segment-bytes 8K "$LOG"
	elog-cat "$LOG" >"$T/before"
	seg=$(ls "$LOG" | grep '^[0-9]\{20\}\.log$' | tail -1)
	[ "$seg" != "$SEG0" ]
	printf 'XXXXXXXXXXXXXXXX' | dd of="$LOG/$seg" bs=1 seek=8 conv=notrunc 2>/dev/null
	run -4 elog-cat "$LOG"
	run --separate-stderr elog-verify --repair --salvage "$LOG"
	[ "$status" -eq 0 ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
	elog-cat "$LOG" | cmp - "$T/before"
	echo '{"n":3000}' | elog-append "$LOG"
	[ "$(elog-cat -o 3000 -F '%s\n' "$LOG")" = '{"n":3000}' ]
}

@test "salvage: the active segment's damaged header without --salvage: left as it is, and said" {
	seq 100 | elog-append "$LOG"
	printf 'ZZ' | dd of="$LOG/$SEG0" bs=1 seek=2 conv=notrunc 2>/dev/null
	cp "$LOG/$SEG0" "$T/seg"
	run --separate-stderr elog-verify --repair "$LOG"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"run elog-verify --repair --salvage $LOG to get past the damage" ]]
	cmp "$LOG/$SEG0" "$T/seg"
	# The writer refuses to write behind it.
	run -4 elog-append "$LOG" <<<x
	cmp "$LOG/$SEG0" "$T/seg"
}

@test "salvage: elog-verify names the consumers behind damage in a closed segment" {
	fill
	elog-commit --create "$LOG" early 3
	elog-commit --create "$LOG" late 100
	printf '\377\377\377' | dd of="$LOG/$SEG0" bs=1 seek=$(($(pos 7) + 20)) conv=notrunc 2>/dev/null
	run --separate-stderr elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[ "${lines[1]}" = "$SEG0: unreadable: offsets 7-60 cannot be read past the damage; consumer behind them: early (at 3); elog-verify --repair --salvage gets past it, keeping 53 records and losing offset 7" ]
	[ "$stderr" = "elog-verify: $LOG: 1 problem found in 5 segments (246 records); run elog-verify --repair --salvage $LOG to get past the damage" ]
	run elog-verify --json "$LOG"
	[ "${lines[1]}" = "{\"file\":\"$SEG0\",\"byte\":null,\"kind\":\"unreadable\",\"problem\":\"offsets 7-60 cannot be read past the damage; consumer behind them: early (at 3); elog-verify --repair --salvage gets past it, keeping 53 records and losing offset 7\"}" ]
}

@test "salvage: a closed segment shorter than a header: elog-verify says --salvage cannot get past it" {
	fill
	seg=00000000000000000061.log
	truncate -s 20 "$LOG/$seg"
	run --separate-stderr elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "$seg: byte 20: truncated header: the file has 20 bytes" ]
	[ "${lines[1]}" = "$seg: unreadable: offsets 61-121 cannot be read (the segment header is damaged); elog-verify --repair --salvage cannot get past it: the file is shorter than a segment header" ]
	[ "$stderr" = "elog-verify: $LOG: 1 problem found in 5 segments (239 records)" ]
}

@test "salvage: a loss below the log's first segment is history, not reported" {
	fill
	printf 'elog-salvaged 1\n5 7 1764385200000\n' >"$LOG/salvaged"
	run --separate-stderr elog-verify "$LOG"
	[ "$status" -eq 1 ]
	[ "$output" = "salvaged: loss: offsets 5-7 were lost to damage (recorded by a repair or salvage at 2025-11-29T03:00:00.000Z); readers report them as a gap" ]
	[ "$stderr" = "elog-verify: $LOG: 1 range of offsets lost to damage, which readers report as gaps" ]
	elog-retain --max-bytes 8K "$LOG"
	run elog-verify "$LOG"
	[ "$status" -eq 0 ] && [ -z "$output" ]
}

@test "salvage: --salvage goes with --repair" {
	fill
	run --separate-stderr elog-verify --salvage "$LOG"
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-verify: --salvage goes with --repair" ]
}
