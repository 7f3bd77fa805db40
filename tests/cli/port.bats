#!/usr/bin/env bats
# A portable run: elog-cat's JSON lines read back by elog-append --json, with
# --keep-offsets keeping the original offsets; copies compared byte for byte.

load helpers

# A source log with the records a run may hold: binary keys and values, a
# NUL in a key, text that is not UTF-8, values with newlines and tabs,
# JSON written with white space, empty values, tombstones, schemas, and
# timestamps negative, 0 and far in the future.  Records of other keys lie
# between those of run-A, so that a copy of run-A alone has holes.
make_source() {
	SRC=$T/src
	printf 'run-A:first\nrun-B:other\n' | elog-append -K : "$SRC"
	printf 'run-A:\xff\xfe\x00bin\x01\n' | elog-append -K : -s 3 "$SRC"
	printf 'run-A:{ "step" : 1,\n  "ok": true }\n\0run-A:line1\nline2\ttab\0' |
		elog-append -0 -K : -s 9 "$SRC"
	printf 'run-B:x\n\xc3\xa9\xf0\x9f\x98\x80:unicode key\na\0b:nul in key\n' |
		elog-append -K : "$SRC"
	printf 'run-A:\n\nrun-A:[1, 2]\n' | elog-append -K : -s 65535 "$SRC"
	printf -- '-62135596800001\trun-A:before year 1\n0\trun-A:zero\n' |
		elog-append -t -K : "$SRC"
	printf '253402300800000\trun-A:year 10000\n4102444800000\trun-B:2100\n' |
		elog-append -t -K : --max-skew 1000000w "$SRC"
	printf '\xff\x00key\x01:\xfe value\n' | elog-append -K : "$SRC"
}

# Every field of every record, raw: offset, time, schema, sizes, key and
# value bytes, for cmp.
raw() {
	elog-cat -F '%o %T %c %K %S|%k|%s\n' "$@"
}

@test "port: a run copied with --json --keep-offsets prints the same lines" {
	make_source
	elog-cat -k run-A "$SRC" >"$T/run.json"
	[ "$(wc -l <"$T/run.json")" -eq 9 ]
	run --separate-stderr elog-append --json --keep-offsets "$T/copy" <"$T/run.json"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	elog-cat "$T/copy" >"$T/copy.json"
	cmp "$T/run.json" "$T/copy.json"
	# Byte for byte: keys, values, times, schemas and offsets.
	cmp <(raw -k run-A "$SRC") <(raw "$T/copy")
	cmp <(elog-cat -v -k run-A "$SRC") <(elog-cat -v "$T/copy")
	# The holes are those of the run in the source: offsets 1, 5, 6...
	[ "$(elog-cat -F '%o ' "$T/copy")" = "0 2 3 4 8 10 11 12 13 " ]
}

@test "port: a whole log copied keeps every byte, and elog-cat --json lines equal" {
	make_source
	elog-cat "$SRC" | elog-append --json --keep-offsets "$T/copy"
	cmp <(elog-cat "$SRC") <(elog-cat "$T/copy")
	cmp <(raw "$SRC") <(raw "$T/copy")
	# A copy of the copy is the same again.
	elog-cat "$T/copy" | elog-append --json --keep-offsets "$T/copy2"
	cmp <(raw "$SRC") <(raw "$T/copy2")
}

@test "port: JSON written with white space comes back with its own bytes" {
	printf '  { "a" : [ 1 , 2 ] }\n\0[]\0{"b":1}\n\0' | elog-append -0 "$LOG"
	run elog-cat "$LOG"
	[ "$status" -eq 0 ]
	[ "${lines[0]#*\"key\":null,}" = '"value":{"a":[1,2]},"value_text":"  { \"a\" : [ 1 , 2 ] }\n"}' ]
	[ "${lines[1]#*\"key\":null,}" = '"value":[]}' ]
	[ "${lines[2]#*\"key\":null,}" = '"value":{"b":1},"value_text":"{\"b\":1}\n"}' ]
	elog-cat "$LOG" | elog-append --json "$T/copy"
	cmp <(elog-cat -v "$LOG") <(elog-cat -v "$T/copy")
}

@test "port: the copy's holes are silent to readers, verify and -L says why" {
	make_source
	elog-cat -k run-A "$SRC" | elog-append --json --keep-offsets "$T/copy"
	run --separate-stderr elog-verify "$T/copy"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	# A position in a hole reads on from the next record, with no gap.
	run --separate-stderr elog-cat -F '%o\n' -o 5 "$T/copy"
	[ "$status" -eq 0 ] && [ "${lines[0]}" = 8 ] && [ "$stderr" = "" ]
	run elog-cat -L "$T/copy"
	[ "$status" -eq 0 ]
	[[ "$output" == *"offsets      0..13, at most 14 records (a copy kept offsets with holes)"* ]]
	run elog-cat -L --json "$T/copy"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"records":14,"records_exact":false,"copy_holes_ms":'[0-9]* ]]
	# The source, with no holes, still counts exactly.
	run elog-cat -L --json "$SRC"
	[[ "$output" == *'"records_exact":true,"copy_holes_ms":null,"copy_holes":null,'* ]]
}

@test "port: a copy without holes counts its records exactly" {
	printf 'a\nb\nc\n' | elog-append "$LOG"
	elog-cat "$LOG" | elog-append --json --keep-offsets "$T/copy"
	[ ! -e "$T/copy/copy.last" ]
	run elog-cat -L "$T/copy"
	[[ "$output" == *"offsets      0..2, 3 records"$'\n'* ]]
}

@test "port: --keep-offsets above the log's end leaves a hole, then appends go on" {
	printf 'a\nb\n' | elog-append "$LOG"
	printf '{"offset":10,"ts":5,"schema":1,"key":"k","value":"x"}\n' >"$T/in"
	run --separate-stderr elog-append --json --keep-offsets -p "$LOG" <"$T/in"
	[ "$status" -eq 0 ] && [ "$output" = 10 ] && [ "$stderr" = "" ]
	run elog-append -p "$LOG" < <(printf 'c\n')
	[ "$output" = 11 ]
	[ "$(elog-cat -F '%o:%s ' "$LOG")" = "0:a 1:b 10:x 11:c " ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
}

@test "port: an offset at or below the log's end is refused (status 2)" {
	printf 'a\nb\nc\n' | elog-append "$LOG"
	printf '{"offset":2,"value":"x"}\n{"offset":7,"value":"y"}\n' >"$T/in"
	run --separate-stderr elog-append --json --keep-offsets -p "$LOG" <"$T/in"
	[ "$status" -eq 2 ] && [ "$output" = "" ]
	[ "$stderr" = "elog-append: $LOG: line 1: offset 2 is taken: the log holds offsets up to 2 (to copy what it lacks: elog-cat -o 3)" ]
	[ "$(elog-cat -F '%s' "$LOG")" = abc ]
	# A copy run twice: the second finds the first offset taken.
	printf '{"offset":3,"value":"d"}\n' | elog-append --json --keep-offsets "$LOG"
	run --separate-stderr elog-append --json --keep-offsets "$LOG" < <(printf '{"offset":3,"value":"d"}\n')
	[ "$status" -eq 2 ]
	[ "$stderr" = "elog-append: $LOG: line 1: offset 3 is taken: the log holds offsets up to 3 (to copy what it lacks: elog-cat -o 4)" ]
	[ "$(elog-cat -F '%s' "$LOG")" = abcd ]
}

@test "port: offsets that do not increase are malformed input" {
	printf '{"offset":5,"value":"a"}\n{"offset":5,"value":"b"}\n' >"$T/in"
	run --separate-stderr elog-append --json --keep-offsets "$LOG" <"$T/in"
	[ "$status" -eq 5 ]
	[ "$stderr" = "elog-append: $LOG: line 2: offset 5 does not follow offset 5 of the line before: offsets must increase" ]
	[ "$(elog-cat "$LOG")" = "" ]
}

@test "port: a malformed line names its line; lines of earlier batches stay" {
	printf '{"value":"a"}\n{"value":"b"}\n{"value":"c"}\n{"value":\n{"value":"e"}\n' >"$T/in"
	# One batch: nothing is appended.
	run --separate-stderr elog-append --json -p "$LOG" <"$T/in"
	[ "$status" -eq 5 ] && [ "$output" = "" ]
	[ "$stderr" = "elog-append: $LOG: line 4: not a JSON object" ]
	[ "$(elog-cat "$LOG")" = "" ]
	# Batches of two: the first is acknowledged, the one with line 4 is not.
	run --separate-stderr elog-append --json -p --batch 2 "$LOG" <"$T/in"
	[ "$status" -eq 5 ] && [ "$output" = $'0\n1' ]
	[ "$stderr" = "elog-append: $LOG: line 4: not a JSON object" ]
	[ "$(elog-cat -F '%s' "$LOG")" = ab ]
}

# Assert that the one JSON line $1 is refused with "line 1: $2", status 5,
# and appends nothing.
refused() {
	rm -rf "$LOG"
	run --separate-stderr elog-append --json "${@:3}" "$LOG" < <(printf '%s\n' "$1")
	[ "$status" -eq 5 ] || { echo "status $status: $stderr" >&2; return 1; }
	[ "$stderr" = "elog-append: $LOG: line 1: $2" ] || { echo "stderr: $stderr" >&2; return 1; }
	[ "$(elog-cat "$LOG")" = "" ]
}

@test "port: each malformed line says what is wrong with it" {
	refused 'hello' 'not a JSON object'
	refused '[1]' 'not a JSON object'
	refused '{"value":"a"} x' 'not a JSON object'
	refused '' 'not a JSON object'
	refused '{"key":"k"}' 'no value (value, value_b64 or value_text)'
	refused '{"value":null}' 'value is null (an empty value is "")'
	refused '{"value":"a","value":"b"}' 'value is given twice'
	refused '{"key":"a","key_b64":"YQ==","value":""}' 'both key and key_b64'
	refused '{"value":"a","value_b64":"YQ=="}' 'both value_b64 and value'
	refused '{"value_b64":"YQ="}' 'value_b64 is not base64'
	refused '{"value_b64":"Y===",}' 'not a JSON object'
	refused '{"value_b64":"YR=="}' 'value_b64 is not base64'
	refused '{"key_b64":7,"value":""}' 'key_b64 is not a string'
	refused '{"value":{"a":1},"value_text":"{\"a\":2}"}' 'value_text is not the text of value'
	refused '{"ts":1.5,"value":""}' 'ts 1.5 is not an integer in range'
	refused '{"ts":"1","value":""}' 'ts is not an integer'
	refused '{"ts":-9223372036854775808,"value":""}' 'ts -9223372036854775808 is out of range'
	refused '{"ts":9223372036854775808,"value":""}' 'ts 9223372036854775808 is not an integer in range'
	refused '{"schema":65536,"value":""}' 'schema 65536 is not an integer in range'
	refused '{"schema":-1,"value":""}' 'schema -1 is not an integer in range'
	refused '{"offset":-1,"value":""}' 'offset -1 is not an integer in range'
	refused '{"offset":18446744073709551615,"value":""}' 'offset 18446744073709551615 is not an integer in range'
	refused '{"value":""}' 'no offset (--keep-offsets)' --keep-offsets
	refused '{"ts":4102444800000,"value":""}' 'ts 4102444800000 lies more than --max-skew ahead of the clock' --max-skew 1h
}

@test "port: without --keep-offsets records take the log's next offsets, as they were otherwise" {
	printf 'x\n' | elog-append "$LOG"
	printf '%s\n' '{"offset":40,"ts":-7,"schema":12,"key":"k","value":"v","extra":[1]}' \
		'{"offset":3,"ts":9223372036854775807,"key_b64":"/w==","value_b64":"AAE="}' \
		'{"key":null,"value":{"n":1}}' >"$T/in"
	run --separate-stderr elog-append --json -p "$LOG" <"$T/in"
	[ "$status" -eq 0 ] && [ "$output" = $'1\n2\n3' ] && [ "$stderr" = "" ]
	[ "$(elog-cat -F '%o %T %c %K %S|%s\n' -o 1 -c 1 "$LOG")" = "1 -7 12 1 1|v" ]
	[ "$(elog-cat -F '%T %K %S\n' -o 2 -c 1 "$LOG")" = "9223372036854775807 1 2" ]
	[ "$(elog-cat -F '%k%s' -o 2 -c 1 "$LOG" | od -An -tx1 | tr -d ' \n')" = ff0001 ]
	[ "$(elog-cat -F '%K %s' -o 3 "$LOG")" = '0 {"n":1}' ]
}

@test "port: a line without ts gets the time of append; without schema, 0" {
	local before after ts
	before=$(now_ms)
	printf '{"value":"v"}\n' | elog-append --json "$LOG"
	after=$(now_ms)
	ts=$(elog-cat -F '%T' "$LOG")
	[ "$ts" -ge "$before" ] && [ "$ts" -le "$after" ]
	[ "$(elog-cat -F '%c' "$LOG")" = 0 ]
}

@test "port: a far-future ts is kept unless --max-skew is given" {
	printf '{"ts":4102444800000,"value":"v"}\n' | elog-append --json "$LOG"
	[ "$(elog-cat -F '%T' "$LOG")" = 4102444800000 ]
}

@test "port: --json and --keep-offsets refuse the options that would shape records" {
	usage_error elog-append '--keep-offsets goes with --json (the offsets are read from it)' --keep-offsets "$LOG"
	local o msg='--json takes the key, value, time and schema from each line: not with -0, -K, -k, -s or -t'
	for o in -0 '-K :' '-k x' '-s 1' -t; do
		# shellcheck disable=SC2086
		usage_error elog-append "$msg" --json $o "$LOG"
	done
	[ ! -e "$LOG" ]
}

@test "port: a copy into a log with other settings keeps the bytes" {
	elog-append --version >/dev/null
	make_source
	local opts="--segment-bytes 4K"
	elog-cat "$SRC" | elog-append --json --keep-offsets $opts "$T/copy"
	cmp <(raw "$SRC") <(raw "$T/copy")
	# Across many segment rolls, with holes at segment boundaries.
	seq 1 3000 | sed 's/^/run-C:/' | elog-append -K : "$SRC"
	printf 'run-D:d\n' | elog-append -K : "$SRC"
	elog-cat -k run-C "$SRC" | awk 'NR % 7 == 0' |
		elog-append --json --keep-offsets --segment-bytes 4K "$T/sparse"
	[ "$(ls "$T/sparse"/*.log | wc -l)" -gt 3 ]
	cmp <(elog-cat -k run-C "$SRC" | awk 'NR % 7 == 0') <(elog-cat "$T/sparse")
	run elog-verify "$T/sparse"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
	if elog-append --help | grep -q -- --compress && elog-append --compress zstd "$T/z" </dev/null 2>/dev/null; then
		elog-cat "$SRC" | elog-append --json --keep-offsets "$T/z"
		cmp <(raw "$SRC") <(raw "$T/z")
	fi
}

@test "port: an offset another writer takes first is refused when its batch is written" {
	elog-append "$LOG" </dev/null
	mkfifo "$T/in"
	# The copy's batch lingers with its line until the input ends; another
	# writer appends offsets 0..9 meanwhile.
	elog-append --json --keep-offsets --linger 60s "$LOG" <"$T/in" 2>"$T/err" &
	local pid=$! st=0
	exec 4>"$T/in"
	echo '{"offset":5,"value":"mine"}' >&4
	sleep 0.2
	seq 0 9 | elog-append "$LOG"
	exec 4>&-
	wait "$pid" || st=$?
	[ "$st" -eq 2 ]
	grep -q "offset 5 is taken: the log holds offsets up to 9" "$T/err"
	[ "$(elog-cat -F '%s ' "$LOG")" = "0 1 2 3 4 5 6 7 8 9 " ]
}
