#!/usr/bin/env bats
# elog-append --compress: values compressed with zstd read back byte for
# byte, take far less disk, and a build without zstd says so clearly.
# Tests that need zstd skip, visibly, in a build without it.

load helpers

have_zstd() {
	elog-append --compress zstd "$T/probe" </dev/null 2>/dev/null
}

# N sensor readings of about 140 bytes of JSON, as an edge gateway sends.
events() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++)
		printf "{\"device\":\"gw-07/temp-%03d\",\"ts\":\"2026-11-30T03:%02d:%02d.%03dZ\",\"temp_c\":%.2f,\"humidity\":%.1f,\"battery_v\":%.2f,\"status\":\"ok\"}\n",
			i % 97, int(i / 600) % 60, int(i / 10) % 60, (i * 37) % 1000,
			15 + (i % 1700) / 100, 30 + (i % 500) / 10, 3.3 + (i % 90) / 100 }'
}

@test "compress: 50,000 JSON events read back byte for byte in at most half the disk" {
	have_zstd || skip "built without zstd"
	events 50000 >"$T/in"
	elog-append --compress zstd "$T/z" <"$T/in"
	elog-append "$T/plain" <"$T/in"
	elog-cat -v "$T/z" | cmp - "$T/in"
	[ -f "$T/z/dict.1" ]
	z=$(du -sb "$T/z" | cut -f1)
	p=$(du -sb "$T/plain" | cut -f1)
	echo "compressed $z bytes, plain $p bytes"
	[ $((z * 2)) -le "$p" ]
}

# The dictionary each segment's header names, in the order of the segments:
# bits 8-31 of the u32 flags at byte 12 (elog(5)).
seg_dicts() {
	local f
	for f in "$1"/*.log; do
		echo $(($(od -An -tu4 -j12 -N4 "$f") >> 8))
	done | tr '\n' ' '
}

# Values i to j - 1 of the file in, by elog-append processes of n each.
append_by() {
	local in=$1 n=$2 i=$3 j=$4
	while [ "$i" -lt "$j" ]; do
		sed -n "$((i + 1)),$((i + n))p" "$in" | elog-append "$LOG" || return 1
		i=$((i + n))
	done
}

@test "compress: 30 writers of 100 values each train the dictionary of the log's first 1000" {
	have_zstd || skip "built without zstd"
	events 3000 >"$T/in"
	elog-append --compress zstd "$LOG" </dev/null
	append_by "$T/in" 100 0 3000
	[ -f "$LOG/dict.1" ]
	[ ! -e "$LOG/dict.2" ]
	# As one writer of the 3000 does: the same dictionary, and a segment
	# naming it from the record that completed the set (offset 999) on.
	elog-append --compress zstd "$T/one" <"$T/in"
	cmp "$T/one/dict.1" "$LOG/dict.1"
	[ "$(cd "$LOG" && echo *.log)" = "00000000000000000000.log 00000000000000000999.log" ]
	[ "$(seg_dicts "$LOG")" = "0 1 " ]
	elog-cat -v "$LOG" | cmp - "$T/in"
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
}

@test "compress: fewer than 1000 values make no dictionary; writing goes on until there are" {
	have_zstd || skip "built without zstd"
	events 1000 >"$T/in"
	elog-append --compress zstd "$LOG" </dev/null
	append_by "$T/in" 100 0 900
	append_by "$T/in" 1 900 999
	[ ! -e "$LOG/dict.1" ]
	[ "$(seg_dicts "$LOG")" = "0 " ]
	[ "$(elog-cat -v "$LOG" | wc -l)" -eq 999 ]
	# The 1000th value completes the set: it starts the segment that
	# names the dictionary.
	append_by "$T/in" 1 999 1000
	[ -f "$LOG/dict.1" ]
	[ "$(seg_dicts "$LOG")" = "0 1 " ]
	[ -f "$LOG/00000000000000000999.log" ]
	elog-cat -v "$LOG" | cmp - "$T/in"
}

@test "compress: values zstd cannot train on leave no dictionary, and writing goes on" {
	have_zstd || skip "built without zstd"
	# Five values of 110,000 random bytes (no NUL: -0 splits there) make
	# a set by their size, and zstd refuses to train on so few.
	local i
	for i in 1 2 3 4 5; do
		head -c 200000 /dev/urandom | tr -d '\000' | head -c 110000
		printf '\0'
	done >"$T/big"
	elog-append --compress zstd -0 "$LOG" <"$T/big"
	[ ! -e "$LOG/dict.1" ]
	# Another writer tries again with the same first values, in vain.
	events 1500 | elog-append "$LOG"
	[ ! -e "$LOG/dict.1" ]
	[ "$(seg_dicts "$LOG")" = "0 " ]
	diff <(elog-cat -v -o 5 "$LOG") <(events 1500)
	# (-v would split the random values at their newlines.)
	elog-cat -F '%s' -c 5 "$LOG" | cmp - <(tr -d '\000' <"$T/big")
	run elog-verify "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
}

@test "compress: keys, schemas, timestamps, tombstones and binary values survive" {
	have_zstd || skip "built without zstd"
	printf '1000\tk1=%s\n2000\tk2=\n3000\t=plain\n' "$(head -c 3000 /dev/zero | tr '\0' a)" |
		elog-append --compress zstd:19 -t -K = -s 7 "$LOG"
	run elog-cat -F '%o %T %c [%k] %S\n' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "0 1000 7 [k1] 3000
1 2000 7 [k2] 0
2 3000 7 [] 5" ]
	head -c 100000 /dev/urandom >"$T/bin"
	elog-append --compress zstd -0 "$T/b" <"$T/bin"
	# -0 splits at each NUL; the values put together are the rest.
	tr -d '\0' <"$T/bin" >"$T/want"
	elog-cat -F '%s' "$T/b" | cmp - "$T/want"
}

@test "compress: the setting is stored with the log and kept by later writers" {
	have_zstd || skip "built without zstd"
	echo one | elog-append --compress zstd:5 "$LOG"
	echo two | elog-append "$LOG"
	grep -qx 'compression zstd' "$LOG/settings"
	grep -qx 'compression_level 5' "$LOG/settings"
	[ "$(elog-cat -v "$LOG" | tr '\n' ' ')" = "one two " ]
}

@test "compress: --no-dictionary never trains one" {
	have_zstd || skip "built without zstd"
	events 3000 | elog-append --compress zstd --no-dictionary "$LOG"
	[ ! -e "$LOG/dict.1" ]
	[ "$(elog-cat -v "$LOG" | wc -l)" -eq 3000 ]
}

@test "compress: a log made by a zstd build reads the same in this build, or fails clearly" {
	F=$BATS_TEST_DIRNAME/../fixtures/zstd-log
	cp -r "$F" "$LOG"
	if have_zstd; then
		run --separate-stderr elog-cat -v "$LOG"
		[ "$status" -eq 0 ] && [ "$stderr" = "" ]
		[ "${#lines[@]}" -eq 1200 ]
		[ "${lines[0]}" = '{"device":"gw-07/temp-000","seq":0,"temp_c":15.00,"status":"ok"}' ]
		[ "${lines[1199]}" = '{"device":"gw-07/temp-035","seq":1199,"temp_c":24.99,"status":"ok"}' ]
	else
		run --separate-stderr elog-cat -v "$LOG"
		[ "$status" -eq 4 ]
		[[ "$stderr" == "elog-cat: $LOG: 00000000000000000"*".log: record at byte "*": compressed with zstd, but this build has no zstd support" ]]
		run --separate-stderr elog-append "$LOG" </dev/null
		[ "$status" -eq 4 ]
		[ "$stderr" = "elog-append: $LOG: the log is compressed with zstd, but this build has no zstd support" ]
	fi
}

@test "compress: unknown methods and levels are usage errors" {
	run --separate-stderr elog-append --compress lz4 "$LOG"
	[ "$status" -eq 2 ]
	[ "${stderr%%$'\n'*}" = "elog-append: --compress: unknown method 'lz4' (only zstd)" ]
	if have_zstd; then
		run --separate-stderr elog-append --compress zstd:20 "$LOG"
		[ "$status" -eq 2 ]
		[ "${stderr%%$'\n'*}" = "elog-append: --compress: 20 is out of range (1 to 19)" ]
	else
		run --separate-stderr elog-append --compress zstd "$LOG"
		[ "$status" -eq 2 ]
		[ "${stderr%%$'\n'*}" = "elog-append: --compress: this build has no zstd support" ]
	fi
	[ ! -e "$LOG" ]
}

@test "compress: a damaged dictionary is a clear error naming it" {
	have_zstd || skip "built without zstd"
	cp -r "$BATS_TEST_DIRNAME/../fixtures/zstd-log" "$LOG"
	printf 'X' | dd of="$LOG/dict.1" bs=1 seek=100 conv=notrunc 2>/dev/null
	run --separate-stderr elog-cat -v "$LOG"
	[ "$status" -eq 4 ]
	[ "$stderr" = "elog-cat: $LOG: 00000000000000000999.log: record at byte 32: dict.1: damaged dictionary; run elog-verify $LOG to see what is damaged" ]
}

@test "compress: seeks, time ranges, tails, keys and follow work the same" {
	have_zstd || skip "built without zstd"
	events 3000 | awk '{ printf "%d\tk%d=%s\n", 1000 * NR, NR % 7, $0 }' |
		elog-append --compress zstd -t -K = --segment-bytes 64K "$LOG"
	[ "$(ls "$LOG"/*.log | wc -l)" -gt 2 ]
	[ "$(elog-cat -o 2500 -c 2 -F '%o ' "$LOG")" = "2500 2501 " ]
	[ "$(elog-cat -n 2 -F '%o ' "$LOG")" = "2998 2999 " ]
	[ "$(elog-cat --since @1500000 -c 1 -F '%o %T' "$LOG")" = "1499 1500000" ]
	[ "$(elog-cat -k k3 -c 2 -F '%o ' "$LOG")" = "2 9 " ]
	want=$(events 3000 | sed -n 2501p)
	[ "$(elog-cat -o 2500 -c 1 -v "$LOG")" = "$want" ]
	background elog-cat -f -o end -v "$LOG" >"$T/out"
	sleep 0.2
	echo '{"late":true}' | elog-append "$LOG"
	wait_lines "$T/out" 1
	[ "$(cat "$T/out")" = '{"late":true}' ]
}

@test "compress: --compress on an existing log must match it; --set changes the level" {
	have_zstd || skip "built without zstd"
	events 100 | elog-append "$T/plain"
	run elog-append --compress zstd "$T/plain" </dev/null
	[ "$status" -eq 2 ]
	[ "$output" = "elog-append: $T/plain: the log is not compressed; change the log's settings with elog-retain --set" ]
	events 100 | elog-append --compress zstd "$T/z"
	events 10 | elog-append --compress zstd "$T/z"
	run elog-append --compress zstd:9 "$T/z" </dev/null
	[ "$status" -eq 2 ]
	[ "$output" = "elog-append: $T/z: the log's zstd level is 3, not 9; change the log's settings with elog-retain --set" ]
	elog-retain --set compress=zstd:9 "$T/z"
	grep -qx 'compression_level 9' "$T/z/settings"
	events 10 | elog-append --compress zstd:9 "$T/z"
	[ "$(elog-cat -v "$T/z" | wc -l)" -eq 120 ]
	elog-verify "$T/z"
}

@test "compress: --set compress turns compression on and off from the next segment" {
	have_zstd || skip "built without zstd"
	# Segments of 4 KiB: each batch of events rolls several.
	events 100 | elog-append --segment-bytes 4K "$T/l"
	codecs() {
		local f
		for f in "$T"/l/*.log; do
			# Byte 12 of a segment's header: its codec (elog(5)).
			od -An -tu1 -j12 -N1 "$f" | tr -d ' '
		done | sort -u | tr '\n' ' '
	}
	[ "$(codecs)" = "0 " ]
	elog-retain --set compress=zstd "$T/l"
	grep -qx 'compression zstd' "$T/l/settings"
	events 1500 | elog-append "$T/l"
	[ "$(codecs)" = "0 1 " ]
	ls "$T/l"/dict.1
	elog-retain --set compress=none "$T/l"
	events 100 | elog-append "$T/l"
	# The newest segment is uncompressed again; the zstd ones read as before.
	local newest
	newest=$(ls "$T"/l/*.log | tail -1)
	[ "$(od -An -tu1 -j12 -N1 "$newest" | tr -d ' ')" = 0 ]
	[ "$(elog-cat -v "$T/l" | wc -l)" -eq 1700 ]
	diff <(elog-cat -v "$T/l") <(events 100; events 1500; events 100)
	run elog-verify "$T/l"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
}

@test "compress: elog-verify reports a missing or damaged dictionary, as elog-cat fails on it" {
	have_zstd || skip "built without zstd"
	events 3000 | elog-append --compress zstd "$T/z"
	[ -f "$T/z/dict.1" ]
	elog-verify "$T/z"
	mv "$T/z/dict.1" "$T/dict.1"
	run elog-cat "$T/z"
	[ "$status" -eq 4 ]
	run elog-verify "$T/z"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *".log: byte 12: its values need dictionary 1: dict.1: dictionary missing"* ]]
	head -c 100 "$T/dict.1" > "$T/z/dict.1"
	run elog-verify "$T/z"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "dict.1: damaged dictionary" ]]
}
