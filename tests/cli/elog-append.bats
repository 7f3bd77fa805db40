#!/usr/bin/env bats
# elog-append: input forms, keys, timestamps, batching, settings, failures.

load helpers

@test "append: -p prints each offset in input order; silent otherwise" {
	run --separate-stderr elog-append -p "$LOG" < <(printf 'a\nb\nc\n')
	[ "$status" -eq 0 ] && [ "$output" = $'0\n1\n2' ] && [ "$stderr" = "" ]
	run --separate-stderr elog-append "$LOG" < <(printf 'd\n')
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	run elog-cat -F '%o=%s\n' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = $'0=a\n1=b\n2=c\n3=d' ]
}

@test "append: creates the log directory and a later writer continues its offsets" {
	[ ! -e "$LOG" ]
	append_lines "$LOG" one
	[ -f "$LOG/settings" ] && [ -f "$LOG/00000000000000000000.log" ]
	run elog-append -p "$LOG" < <(printf 'two\n')
	[ "$status" -eq 0 ] && [ "$output" = "1" ]
}

@test "append: a last line without a newline is a record; empty lines are records" {
	printf 'a\n\nb' | elog-append "$LOG"
	run elog-cat -F '%o:%S:%s|' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "0:1:a|1:0:|2:1:b|" ]
}

@test "append: empty input appends nothing and creates an empty log" {
	run --separate-stderr elog-append -p "$LOG" </dev/null
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	run elog-cat "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
}

@test "append: -0 splits at NUL bytes and keeps newlines inside records" {
	printf 'a\nb\0c\0d' | elog-append -0 "$LOG"
	run elog-cat -F '[%s]' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = $'[a\nb][c][d]' ]
	printf 'x\0' | elog-append --null "$LOG"
	run elog-cat -o 3 -v "$LOG"
	[ "$output" = "x" ]
}

@test "append: -K splits at the first delimiter; without it the line is an unkeyed value" {
	printf 'k1:v:1\nnodelim\n:nokey\nk2:\n' | elog-append -K : "$LOG"
	run elog-cat -F '%K[%k]%S[%s]\n' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = $'2[k1]3[v:1]\n0[]7[nodelim]\n0[]5[nokey]\n2[k2]0[]' ]
	run elog-cat -o 1 -c 1 "$LOG"
	[[ "$output" == *'"key":null,"value":"nodelim"}' ]]
}

@test "append: -K takes a delimiter of several bytes" {
	printf 'a::b::c\n' | elog-append --key-delimiter '::' "$LOG"
	run elog-cat -F '%k|%s' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "a|b::c" ]
}

@test "append: -k gives every record the same key; keyed empty value is kept" {
	printf 'v1\n\n' | elog-append -k user-7 "$LOG"
	printf 'v2\n' | elog-append --key 'κλειδί' "$LOG"
	run elog-cat -F '%k=%s;' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "user-7=v1;user-7=;κλειδί=v2;" ]
}

@test "append: -s sets the schema of every record" {
	printf 'a\n' | elog-append -s 7 "$LOG"
	printf 'b\n' | elog-append --schema 65535 "$LOG"
	printf 'c\n' | elog-append "$LOG"
	run elog-cat -F '%c ' "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "7 65535 0 " ]
}

@test "append: without -t the writer stamps the time of append" {
	local before after ts
	before=$(now_ms)
	printf 'a\n' | elog-append "$LOG"
	after=$(now_ms)
	ts=$(elog-cat -F '%T' "$LOG")
	[ "$ts" -ge "$before" ] && [ "$ts" -le "$after" ]
}

@test "append: -t reads epoch milliseconds and RFC 3339 times before a tab" {
	printf '%s\n' \
		$'1764385200000\tepoch' \
		$'0\tzero' \
		$'-1500\tbefore-epoch' \
		$'2025-11-29T03:00:00Z\tutc' \
		$'2025-11-29T03:00:00.25Z\tfraction' \
		$'2025-11-29t03:00:00.123456z\tlowercase' \
		$'2025-11-29T05:30:00+02:30\tahead' \
		$'2025-11-29T00:00:00-03:00\tbehind' \
		$'2025-11-29 03:00\tspace-no-seconds' \
		$'2024-02-29T00:00:00Z\tleap-day' \
		$'@1764385200001\tat' \
		$'1764385200000\ttab\tin value' |
		elog-append -t "$LOG"
	run elog-cat -F '%T %s\n' "$LOG"
	[ "$status" -eq 0 ]
	[ "$output" = "1764385200000 epoch
0 zero
-1500 before-epoch
1764385200000 utc
1764385200250 fraction
1764385200123 lowercase
1764385200000 ahead
1764385200000 behind
1764385200000 space-no-seconds
1709164800000 leap-day
1764385200001 at
1764385200000 tab	in value" ]
}

@test "append: -t reads a date alone and a time without zone as local time" {
	printf '2026-07-01\tdate\n2026-07-01T12:00:00\tlocal\n' |
		TZ=Europe/Berlin elog-append --timestamp "$LOG"
	run elog-cat -F '%T %s\n' "$LOG"
	# Berlin is two hours ahead of UTC in July.
	[ "$status" -eq 0 ] && [ "$output" = $'1782856800000 date\n1782900000000 local' ]
}

@test "append: -t reads a time relative to now" {
	local before after ts
	before=$(now_ms)
	printf -- '-1h\tlate\n' | elog-append -t "$LOG"
	after=$(now_ms)
	ts=$(elog-cat -F '%T' "$LOG")
	[ "$ts" -ge $((before - 3600000)) ] && [ "$ts" -le $((after - 3600000)) ]
}

@test "append: -t with -K looks for the key after the tab" {
	printf '1000\tk:v\n' | elog-append -t -K : "$LOG"
	run elog-cat "$LOG"
	[ "$output" = '{"offset":0,"ts":1000,"schema":0,"key":"k","value":"v"}' ]
}

@test "append: -t without a tab stops at that line, keeping the lines before" {
	run --separate-stderr elog-append -t -p "$LOG" < <(printf '1\ta\n2\tb\nnotab\n3\tc\n')
	[ "$status" -eq 5 ] && [ "$output" = $'0\n1' ]
	[ "$stderr" = "elog-append: $LOG: line 3: no tab after the timestamp (-t)" ]
	run elog-cat -F '%T %s\n' "$LOG"
	[ "$output" = $'1 a\n2 b' ]
}

@test "append: -t with a bad timestamp names it and the line" {
	local bad
	for bad in yesterday 2026-13-01 2026-02-30 '2026-11-29T24:00:00Z' \
		'2026-11-29T03:00:00+2' '2026-11-29T03:00:00.Z' '1.5' '@' '' \
		'99999999999999999999' '2026-11-29T03:00:00Z '; do
		run --separate-stderr elog-append -t "$LOG" < <(printf '1\tok\n%s\tv\n' "$bad")
		[ "$status" -eq 5 ] || { echo "accepted '$bad'" >&2; return 1; }
		[ "$stderr" = "elog-append: $LOG: line 2: invalid timestamp '$bad'" ] ||
			{ echo "for '$bad': $stderr" >&2; return 1; }
	done
}

@test "append: with -0, errors count records rather than lines" {
	run --separate-stderr elog-append -0 -t "$LOG" < <(printf '1\ta\nb\0nope\0')
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-append: $LOG: record 2: no tab after the timestamp (-t)" ]
	run elog-cat -v "$LOG"
	[ "$output" = $'a\nb' ]
}

@test "append: the largest record fits and one byte more is refused, keeping earlier records" {
	# A record is 24 bytes of fixed fields plus key and value: 16 MiB in all.
	local max=$((16 * 1024 * 1024 - 24))
	{ echo first; head -c "$max" /dev/zero | tr '\0' x; echo; } | elog-append "$LOG"
	run elog-cat -F '%o %S\n' "$LOG"
	[ "$output" = $'0 5\n1 '"$max" ]
	run --separate-stderr elog-append -p "$LOG" < <(echo next; head -c $((max + 1)) /dev/zero | tr '\0' y; echo; echo after)
	[ "$status" -eq 5 ] && [ "$output" = "2" ]
	[ "$stderr" = "elog-append: $LOG: line 2: the record is larger than the limit of 16 MiB" ]
	run elog-cat -o 2 -v "$LOG"
	[ "$output" = "next" ]
}

@test "append: a line far beyond the limit is refused without reading all of it" {
	run --separate-stderr elog-append -p "$LOG" < <(echo a; echo b; head -c $((20 * 1024 * 1024)) /dev/zero)
	[ "$status" -eq 5 ] && [ "$output" = $'0\n1' ]
	[ "$stderr" = "elog-append: $LOG: line 3: the record is larger than the limit of 16 MiB" ]
}

@test "append: a key longer than 65535 bytes from -K is refused with its line" {
	run --separate-stderr elog-append -K : "$LOG" < <(echo k:v; head -c 65536 /dev/zero | tr '\0' k; echo :v)
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-append: $LOG: line 2: the key is longer than 65535 bytes" ]
	run elog-cat -F '%k=%s' "$LOG"
	[ "$output" = "k=v" ]
	{ head -c 65535 /dev/zero | tr '\0' k; echo :v; } | elog-append -K : "$LOG"
	[ "$(elog-cat -o 1 -F '%K %s' "$LOG")" = "65535 v" ]
}

@test "append: -v prints a summary on stderr" {
	run --separate-stderr elog-append -v "$LOG" < <(printf 'a\nb\nc\n')
	[ "$status" -eq 0 ] && [ "$output" = "" ]
	[ "$stderr" = "elog-append: $LOG: appended 3 records (offsets 0-2) in 1 batch" ]
	run --separate-stderr elog-append --verbose --sync "$LOG" < <(printf 'd\ne\n')
	[ "$stderr" = "elog-append: $LOG: appended 2 records (offsets 3-4) in 2 batches" ]
	run --separate-stderr elog-append -v "$LOG" </dev/null
	[ "$stderr" = "elog-append: $LOG: appended 0 records" ]
}

# A producer: print the records given, wait until elog-append printed WANT
# offsets in $T/out or PRODUCER_WAIT seconds (30 by default) went by on the
# wall clock, write how many there were to $T/seen, then print one more
# record and end the input.  The wait counts time, not polls, and forks
# nothing, so a loaded machine makes it neither longer nor shorter; a test
# that expects nothing yet (an hour's linger) waits 3 seconds.
producer() {
	local want=$1 limit=${PRODUCER_WAIT:-30} start=$EPOCHREALTIME lines
	shift
	printf '%s\n' "$@"
	while :; do
		mapfile -t lines <"$T/out"
		[ "${#lines[@]}" -ge "$want" ] && break
		[ "$(elapsed_since "$start")" -ge "$limit" ] && break
		nap 0.01
	done
	mapfile -t lines <"$T/out"
	echo "${#lines[@]}" >"$T/seen"
	echo last
}

# Whole seconds since START, an $EPOCHREALTIME.
elapsed_since() {
	local now=$EPOCHREALTIME
	echo $(( ${now%.*} - ${1%.*} ))
}

@test "append: without --linger a batch is durable as soon as input pauses" {
	: >"$T/out"
	producer 1 a | elog-append -p "$LOG" >"$T/out"
	[ "$(cat "$T/seen")" = 1 ] && [ "$(cat "$T/out")" = $'0\n1' ]
}

@test "append: --linger holds a batch open for company, and EOF ends it" {
	: >"$T/out"
	# An hour's linger: only EOF can end the batch before the time limit.
	PRODUCER_WAIT=3 producer 1 a | timeout 120 elog-append -p --linger 1h "$LOG" >"$T/out"
	[ "$(cat "$T/seen")" = 0 ] && [ "$(cat "$T/out")" = $'0\n1' ]
}

@test "append: --linger ends a batch after its duration" {
	: >"$T/out"
	producer 1 a | elog-append -p --linger 200ms "$LOG" >"$T/out"
	[ "$(cat "$T/seen")" = 1 ] && [ "$(cat "$T/out")" = $'0\n1' ]
}

@test "append: --batch ends a batch at N records even while lingering" {
	: >"$T/out"
	producer 2 a b | timeout 120 elog-append -p --linger 1h --batch 2 "$LOG" >"$T/out"
	[ "$(cat "$T/seen")" = 2 ] && [ "$(cat "$T/out")" = $'0\n1\n2' ]
}

@test "append: --batch-bytes ends a batch at SIZE bytes even while lingering" {
	# Each record counts 28 bytes plus its key and value: 29 here.
	: >"$T/out"
	producer 2 a b | timeout 120 elog-append -p --linger 1h --batch-bytes 58 "$LOG" >"$T/out"
	[ "$(cat "$T/seen")" = 2 ] && [ "$(cat "$T/out")" = $'0\n1\n2' ]
}

@test "append: --sync makes each record durable on its own" {
	: >"$T/out"
	producer 1 a | timeout 120 elog-append -p --linger 1h --sync "$LOG" >"$T/out"
	[ "$(cat "$T/seen")" = 1 ] && [ "$(cat "$T/out")" = $'0\n1' ]
}

@test "append: many lines from a fast producer are all acknowledged once, in order" {
	seq 0 99999 | elog-append -p "$LOG" >"$T/out"
	cmp "$T/out" <(seq 0 99999)
	[ "$(elog-cat -v "$LOG" | cmp - <(seq 0 99999) && echo same)" = same ]
}

@test "append: -p into a closed pipe exits 0 quietly" {
	run bash -c 'seq 1 200000 | elog-append -p "$1" 2>"$2" | head -1; echo "${PIPESTATUS[1]}"' _ "$LOG" "$T/err"
	[ "$output" = $'0\n0' ] && [ ! -s "$T/err" ]
}

@test "append: --segment-bytes rolls segments at that size" {
	seq -f '%098g' 1 200 | elog-append --segment-bytes 4K "$LOG"
	local n f
	n=$(ls "$LOG" | grep -c '\.log$')
	[ "$n" -ge 5 ]
	# The limit is on the header and the records: a closed segment's
	# seal (56 bytes, elog(5)) comes on top.
	for f in "$LOG"/*.log; do
		[ "$(stat -c %s "$f")" -le $((4096 + 56)) ] || { echo "$f too big" >&2; return 1; }
	done
	grep -qx 'segment_bytes 4096' "$LOG/settings"
	[ "$(elog-cat -v "$LOG" | cmp - <(seq -f '%098g' 1 200) && echo same)" = same ]
}

@test "append: creation settings are stored, and must agree for an existing log" {
	echo a | elog-append --segment-bytes 64K --index-interval 1K \
		--retain-age 7d --retain-bytes 1G "$LOG"
	grep -qx 'segment_bytes 65536' "$LOG/settings"
	grep -qx 'index_interval 1024' "$LOG/settings"
	grep -qx 'retain_ms 604800000' "$LOG/settings"
	grep -qx 'retain_bytes 1073741824' "$LOG/settings"
	run elog-append --segment-bytes 8K --retain-age 1d "$LOG" <<<"b"
	[ "$status" -eq 2 ]
	echo b | elog-append --segment-bytes 64K --retain-age 7d "$LOG"
	grep -qx 'segment_bytes 65536' "$LOG/settings"
	grep -qx 'retain_ms 604800000' "$LOG/settings"
}

@test "append: a new log's cleanup is delete unless --cleanup compact is given" {
	echo a | elog-append "$LOG"
	grep -qx 'cleanup delete' "$LOG/settings"
	echo a | elog-append --cleanup compact "$T/state"
	grep -qx 'cleanup compact' "$T/state/settings"
	echo a | elog-append --cleanup delete "$T/history"
	grep -qx 'cleanup delete' "$T/history/settings"
	# The option's value with = works as well.
	echo a | elog-append --cleanup=compact "$T/state2"
	grep -qx 'cleanup compact' "$T/state2/settings"
}

@test "append: --cleanup must agree with an existing log's, and appends nothing otherwise" {
	echo a | elog-append "$LOG"
	cp "$LOG/settings" "$T/before"
	run --separate-stderr elog-append --cleanup compact "$LOG" <<<"b"
	[ "$status" -eq 2 ] && [ "$output" = "" ]
	[ "$stderr" = "elog-append: $LOG: the log's cleanup is delete, not compact; change the log's settings with elog-retain --set" ]
	cmp "$T/before" "$LOG/settings"
	[ "$(elog-cat -v "$LOG")" = a ]
	echo b | elog-append --cleanup delete "$LOG"
	elog-retain --set cleanup=compact "$LOG"
	run --separate-stderr elog-append --cleanup delete "$LOG" <<<"c"
	[ "$status" -eq 2 ]
	[ "$stderr" = "elog-append: $LOG: the log's cleanup is compact, not delete; change the log's settings with elog-retain --set" ]
	echo c | elog-append --cleanup compact "$LOG"
	[ "$(elog-cat -v "$LOG")" = $'a\nb\nc' ]
}

@test "append: a log made before cleanup existed takes --cleanup delete, not compact" {
	echo a | elog-append "$LOG"
	sed -i '/^cleanup /d' "$LOG/settings"
	echo b | elog-append --cleanup delete "$LOG"
	run --separate-stderr elog-append --cleanup compact "$LOG" <<<"c"
	[ "$status" -eq 2 ]
	[ "$stderr" = "elog-append: $LOG: the log's cleanup is delete, not compact; change the log's settings with elog-retain --set" ]
	# Appending never adds the key: the file is the log's own.
	! grep -q '^cleanup' "$LOG/settings"
	[ "$(elog-cat -v "$LOG")" = $'a\nb' ]
}

@test "append: --cleanup other than delete or compact is a usage error, and creates nothing" {
	usage_error elog-append "--cleanup: 'delete' or 'compact', not 'bogus'" --cleanup bogus "$LOG"
	usage_error elog-append "--cleanup: 'delete' or 'compact', not ''" --cleanup "" "$LOG"
	usage_error elog-append "--cleanup: 'delete' or 'compact', not 'COMPACT'" --cleanup COMPACT "$LOG"
	usage_error elog-append "option --cleanup needs an argument" --cleanup
	[ ! -e "$LOG" ]
}

@test "append: settings the library refuses are usage errors, and create nothing" {
	usage_error elog-append "--segment-bytes: 1K is out of range (4K to 1G)" --segment-bytes 1K "$LOG"
	usage_error elog-append "--index-interval: 32 is out of range (64 to 16M)" --index-interval 32 "$LOG"
	[ ! -e "$LOG" ]
}

@test "append: a second writer appends while a long-running one waits for input" {
	# The first writer reads a fifo that this shell keeps open for writing
	# (read-write, so that opening it does not wait for the reader).
	mkfifo "$T/in"
	exec 4<>"$T/in"
	background elog-append -p "$LOG" <"$T/in" >"$T/out" 2>"$T/err" 4>&-
	local holder=${BG_PIDS##* }
	echo first >&4
	wait_lines "$T/out" 1
	run --separate-stderr elog-append -p "$LOG" < <(echo second)
	[ "$status" -eq 0 ] && [ "$output" = 1 ] && [ "$stderr" = "" ]
	echo third >&4
	exec 4>&-
	wait "$holder"
	BG_PIDS=
	[ "$(cat "$T/out")" = $'0\n2' ] && [ ! -s "$T/err" ]
	[ "$(elog-cat -v "$LOG")" = $'first\nsecond\nthird' ]
}

@test "append: a writer waits --wait for another's batch, then exits 3 and appends nothing" {
	echo zero | elog-append "$LOG"
	# LOCK held for longer than the writer waits: as by a writer stuck
	# in a batch on a dead disk.
	flock -n -o "$LOG/LOCK" sleep 30 &
	local pid=$!
	sleep 0.3
	run --separate-stderr elog-append -p --wait 200ms "$LOG" < <(printf 'a\nb\n')
	kill "$pid"
	[ "$status" -eq 3 ] && [ "$output" = "" ]
	[[ "$stderr" =~ ^elog-append:\ $LOG:\ timed\ out\ after\ 200\ ms\ waiting\ for ]]
	[ "$(elog-cat -v "$LOG")" = zero ]
	# Held for less than the wait: the writer goes on.
	flock -n "$LOG/LOCK" sleep 0.5 &
	sleep 0.2
	run --separate-stderr elog-append -p --wait 10s "$LOG" < <(echo c)
	[ "$status" -eq 0 ] && [ "$output" = 1 ]
}

@test "append: the parent directory must exist, and the message names it" {
	run --separate-stderr elog-append "$T/missing/log" < <(echo a)
	[ "$status" -eq 5 ] && [ "$output" = "" ]
	[ "$stderr" = "elog-append: $T/missing/log: its parent directory $T/missing does not exist: make it first" ]
	[ ! -e "$T/missing" ]
	run --separate-stderr elog-append "$T/missing//log//" < <(echo a)
	[ "$stderr" = "elog-append: $T/missing//log//: its parent directory $T/missing does not exist: make it first" ]
	cd "$T"
	run --separate-stderr elog-append missing/log < <(echo a)
	[ "$stderr" = "elog-append: missing/log: its parent directory missing does not exist: make it first" ]
	# A log in a directory that does not exist either, named alone: the
	# working directory's parent is not what is missing.
	mkdir gone && cd gone && rmdir ../gone
	run --separate-stderr elog-append log < <(echo a)
	[ "$status" -eq 5 ]
	[ "$stderr" = "elog-append: log: its parent directory . does not exist: make it first" ]
}

@test "append: a parent that is a file" {
	touch "$T/file"
	run --separate-stderr elog-append "$T/file/log" < <(echo a)
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-append: $T/file/log: not a directory" ]
}

@test "append: a directory that holds other files is not taken for a log" {
	mkdir "$LOG" && touch "$LOG/notes.txt"
	run --separate-stderr elog-append "$LOG" < <(echo a)
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-append: $LOG: not an elog directory and not empty (it holds notes.txt)" ]
	[ "$(cat "$LOG/notes.txt")" = "" ]
}

@test "append: a directory the user may not write" {
	chmod 755 "$T"
	mkdir "$T/ro" && chmod 555 "$T/ro"
	as_nobody "$ELOG_BIN/elog-append" --version >/dev/null 2>&1 ||
		skip "cannot run the programs as an unprivileged user here"
	run --separate-stderr as_nobody "$ELOG_BIN/elog-append" "$T/ro/log" < <(echo a)
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-append: $T/ro/log: permission denied" ]
	echo a | elog-append "$T/ro/log2"
	chmod 555 "$T/ro/log2"
	run --separate-stderr as_nobody "$ELOG_BIN/elog-append" "$T/ro/log2" < <(echo b)
	# The library names the file; strerror(3) may give it a capital.
	# A writer writes the tail's state into LOCK, so LOCK is the first.
	[ "$status" -eq 5 ] && [ "${stderr,,}" = "elog-append: ${T,,}/ro/log2: lock: permission denied" ]
	run as_nobody "$ELOG_BIN/elog-cat" -v "$T/ro/log2"
	[ "$status" -eq 0 ] && [ "$output" = a ]
}

@test "append: bad arguments are usage errors" {
	usage_error elog-append "missing log directory"
	usage_error elog-append "unexpected argument 'b'" a b
	usage_error elog-append "unknown option -x" -x "$LOG"
	usage_error elog-append "unknown option --bogus" --bogus "$LOG"
	usage_error elog-append "unknown option --bogus" --bogus=1 "$LOG"
	usage_error elog-append "option -s needs an argument" "$LOG" -s
	usage_error elog-append "option --schema needs an argument" "$LOG" --schema
	usage_error elog-append "-s: 65536 is out of range (0 to 65535)" -s 65536 "$LOG"
	usage_error elog-append "-s: invalid number '-1'" -s -1 "$LOG"
	usage_error elog-append "-s: invalid number '1x'" -s 1x "$LOG"
	usage_error elog-append "-K: the delimiter is empty" -K '' "$LOG"
	usage_error elog-append "-k and -K cannot be used together" -k a -K : "$LOG"
	usage_error elog-append "--batch: 0 is out of range (1 to 18446744073709551615)" --batch 0 "$LOG"
	usage_error elog-append "--batch: invalid number '18446744073709551616'" --batch 18446744073709551616 "$LOG"
	usage_error elog-append "--batch-bytes: the size is zero" --batch-bytes 0 "$LOG"
	usage_error elog-append "--batch-bytes: invalid size '1X'" --batch-bytes 1X "$LOG"
	usage_error elog-append "--batch-bytes: invalid size '1.5M'" --batch-bytes 1.5M "$LOG"
	usage_error elog-append "--batch-bytes: invalid size '16777216T'" --batch-bytes 16777216T "$LOG"
	usage_error elog-append "--linger: invalid duration '5'" --linger 5 "$LOG"
	usage_error elog-append "--linger: invalid duration '5x'" --linger 5x "$LOG"
	usage_error elog-append "--linger: invalid duration '-5s'" --linger -5s "$LOG"
	usage_error elog-append "--linger: invalid duration ''" --linger '' "$LOG"
	usage_error elog-append "--retain-age: invalid duration '15250284453w'" --retain-age 15250284453w "$LOG"
	usage_error elog-append "--retain-age: invalid duration '15250284452w1w'" --retain-age 15250284452w1w "$LOG"
	usage_error elog-append "--index-interval: 4G is out of range (64 to 16M)" --index-interval 4G "$LOG"
	usage_error elog-append "--segment-bytes: invalid size 'M'" --segment-bytes M "$LOG"
	[ ! -e "$LOG" ]
}

@test "append: sizes and durations take every documented form" {
	local s
	for s in 4096 4K 4k 4KB 4KiB 1M 1MiB 1G 1T 1TB; do
		run elog-append --batch-bytes "$s" "$T/x" </dev/null
		[ "$status" -eq 0 ] || { echo "refused size $s" >&2; return 1; }
	done
	for s in 500ms 30s 15m 2h 7d 4w 1h30m 0s 15250284452w; do
		run elog-append --linger "$s" "$T/x" </dev/null
		[ "$status" -eq 0 ] || { echo "refused duration $s" >&2; return 1; }
	done
	echo a | elog-append --retain-age 1h30m500ms "$LOG"
	grep -qx 'retain_ms 5400500' "$LOG/settings"
}

@test "append: --help prints the man page's synopsis, --version the version" {
	run --separate-stderr elog-append --version
	[ "$status" -eq 0 ] && [[ "$output" =~ ^elog-append\ \(elog\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]] && [ "$stderr" = "" ]
	run --separate-stderr elog-append --help
	[ "$status" -eq 0 ] && [ "$stderr" = "" ] && [[ "$output" == "usage: elog-append "* ]]
	[ "$(elog-append -h)" = "$output" ]
	command -v mandoc >/dev/null || skip "mandoc is not installed"
	[ "$(usage_words elog-append)" = "$(synopsis_words "$BATS_TEST_DIRNAME/../../man/elog-append.1")" ]
}

@test "creation options that conflict with an existing log are refused" {
	seq 1 3 | elog-append --segment-bytes 64K "$LOG"
	cp "$LOG/settings" "$T/before"
	run elog-append --retain-bytes 1M "$LOG" </dev/null
	[ "$status" -eq 2 ]
	[ "$output" = "elog-append: $LOG: the log's retention size is 0 bytes, not 1048576; change the log's settings with elog-retain --set" ]
	run elog-append --segment-bytes 1M "$LOG" <<<"x"
	[ "$status" -eq 2 ]
	[ "$output" = "elog-append: $LOG: the log's segment size is 65536 bytes, not 1048576; change the log's settings with elog-retain --set" ]
	cmp "$T/before" "$LOG/settings"
	[ "$(elog-cat -v "$LOG")" = "$(seq 1 3)" ]
	# The log's own values are no conflict.
	elog-append --segment-bytes 64K "$LOG" <<<"4"
	elog-retain --set retain-bytes=1M "$LOG"
	elog-append --retain-bytes 1M "$LOG" <<<"5"
	[ "$(elog-cat -v "$LOG")" = "$(seq 1 5)" ]
}

@test "append: -t refuses a timestamp more than --max-skew (1h) ahead of the clock" {
	local now=$(( $(date +%s) * 1000 ))
	run -5 elog-append -t "$LOG" < <(printf '%s\tlater\n' $((now + 2 * 3600000)))
	[ "$output" = "elog-append: $LOG: line 1: timestamp $((now + 2 * 3600000)) lies more than --max-skew ahead of the clock" ]
	run -0 elog-append -t --max-skew 3h "$LOG" < <(printf '%s\tlater\n' $((now + 2 * 3600000)))
	# The past, even 1970, is taken as it is; so is a little skew.
	run -0 elog-append -t "$LOG" < <(printf '5000\told\n%s\tsoon\n' $((now + 60000)))
	run -0 elog-cat -F '%s\n' "$LOG"
	[ "$output" = $'later\nold\nsoon' ]
}

# A one-shot append (`echo x | elog-append LOG`) traced with strace: what it
# asks of the system is behaviour (issue 25), counted here, never timed.
# Skipped without strace, and in a build with the sanitizers, whose runtime
# makes calls of its own.
oneshot_setup() {
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	if grep -q __asan_init "$ELOG_BIN/elog-append"; then
		skip "built with the sanitizers"
	fi
	seq 1 100 | elog-append "$LOG"
}

@test "append: a one-shot append makes one fdatasync and starts no thread" {
	oneshot_setup
	strace -f -qq -o "$T/trace" elog-append "$LOG" <<<"x"
	[ "$(grep -c ' fdatasync(' "$T/trace")" -eq 1 ]
	[ "$(grep -cE ' (fsync|sync_file_range|clone3?|fork|vfork)\(' "$T/trace")" -eq 0 ]
	# --sync waits for every record: one fdatasync each, still one thread.
	printf 'y\nz\n' | strace -f -qq -o "$T/trace" elog-append --sync "$LOG"
	[ "$(grep -c ' fdatasync(' "$T/trace")" -eq 2 ]
	[ "$(grep -cE ' (clone3?|fork|vfork)\(' "$T/trace")" -eq 0 ]
	[ "$(elog-cat -F '%o %s\n' -o 100 "$LOG")" = $'100 x\n101 y\n102 z' ]
}

@test "append: a one-shot append opens each file of a healthy log once and creates none" {
	oneshot_setup
	strace -f -qq -o "$T/trace" elog-append "$LOG" <<<"x"
	for f in settings LOCK writers watermark 00000000000000000000.log \
	         00000000000000000000.idx; do
		[ "$(grep -c "openat([0-9]*, \"$f\"" "$T/trace")" -eq 1 ]
	done
	# No attempt to make what is there, and O_NONBLOCK left as it is (it
	# changes nothing on a regular file).
	[ "$(grep -cE 'O_CREAT|EEXIST|F_GETFL|F_SETFL| mkdir\(' "$T/trace")" -eq 0 ]
}

@test "append: a one-shot append on a healthy log makes at most 125 system calls" {
	oneshot_setup
	strace -f -c -o "$T/count" elog-append "$LOG" <<<"x"
	# 114 with glibc 2.36, the dynamic loader's included (123 where
	# libzstd.so is loaded: ZSTD_STATIC=0); 126 when every file opened
	# cost an fcntl more and input went to a mapped megabyte; 182 when a
	# flusher thread was started for the one batch and every file was
	# made with O_EXCL first.
	calls=$(awk '$NF == "total" { print $4 }' "$T/count")
	echo "calls: $calls"
	[ "$calls" -le 125 ]
}

@test "append: input longer than the first read buffer, in records long and short" {
	# The input buffer starts at 8 KiB and grows: records that straddle
	# its first sizes, and one far longer, arrive whole and in order.
	{
		head -c 8191 /dev/zero | tr '\0' a; echo
		head -c 8192 /dev/zero | tr '\0' b; echo
		head -c 16383 /dev/zero | tr '\0' a; echo
		head -c 16384 /dev/zero | tr '\0' b; echo
		echo short
		head -c 300000 /dev/zero | tr '\0' c; echo
		seq 1 20000
	} >"$T/in"
	elog-append "$LOG" <"$T/in"
	elog-cat -v "$LOG" | cmp - "$T/in"
	# The same through a pipe that delivers it in small pieces.
	rm -rf "$LOG"
	dd if="$T/in" bs=1000 status=none | elog-append "$LOG"
	elog-cat -v "$LOG" | cmp - "$T/in"
}
