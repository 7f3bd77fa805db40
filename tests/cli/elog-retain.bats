#!/usr/bin/env bats
# elog-retain(1): limits, the stored policy, -n and -v, and every failure
# path with exact stderr and exit status.  ELOG_BIN is the build directory.

load helpers

teardown_test() {
	[ -n "${PID:-}" ] && kill "$PID" 2>/dev/null || true
}

# 2000 records, timestamps one minute apart starting 2020-01-01, in 4 KiB
# segments; extra flags go to elog-append (creation settings).
fill() {
	awk 'BEGIN { for (i = 0; i < 2000; i++)
		printf "%.0f\trecord number %06d padding\n", 1577836800000 + i * 60000, i }' |
		"$B/elog-append" -t --segment-bytes 4K "$@" "$L"
}

segments() { ls "$L" | grep -c '^[0-9]\{20\}\.log$'; }
first() { ls "$L" | grep '^[0-9]\{20\}\.log$' | head -1; }

@test "retain: --max-bytes removes the oldest segments, silently" {
	fill
	before=$(segments)
	run --separate-stderr "$B/elog-retain" --max-bytes 20K "$L"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	[ "$(segments)" -lt "$before" ]
	total=$(cat "$L"/*.log | wc -c)
	[ "$total" -le 20480 ]
	# The records left are every offset from the first segment on.
	base=$((10#$(first | cut -c1-20)))
	run "$B/elog-cat" -F '%o\n' -o "$base" "$L"
	[ "$(echo "$output" | head -1)" = "$base" ]
	[ "$(echo "$output" | wc -l)" -eq $((2000 - base)) ]
	run "$B/elog-verify" "$L"
	[ "$status" -eq 0 ]
}

@test "retain: --max-age keeps every segment holding a younger record" {
	fill
	# The newest record is 2020-01-02T09:19; 12 hours before it is 21:19.
	now=$(date +%s)
	age_h=$(( (now - 1577956740) / 3600 + 12 ))
	run "$B/elog-retain" -v --max-age "${age_h}h" "$L"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^removed\ 00000000000000000000\.log\ offsets\ 0-[0-9]+\ bytes\ [0-9]+\ newest\ 2020-01-01T[0-9:.]+Z$ ]]
	# The first record left is at most a segment (72 min) older than the
	# cut-off, and not younger than it plus one record.
	cutoff=$(( now - age_h * 3600 ))
	run "$B/elog-cat" -c 1 -F '%T' "$L"
	[ "$output" -ge $(( (cutoff - 2 * 3600) * 1000 )) ]
	[ "$output" -le $(( (cutoff + 120) * 1000 )) ]
}

@test "retain: -n prints what would go and removes nothing" {
	fill
	before=$(ls "$L" | grep -v maint.lock)
	run --separate-stderr "$B/elog-retain" -n --max-bytes 20K "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[[ "${lines[0]}" =~ ^would\ remove\ 00000000000000000000\.log\ offsets\ 0- ]]
	[ "$(ls "$L" | grep -v maint.lock)" = "$before" ]
	run "$B/elog-retain" -v --max-bytes 20K "$L"
	[ "${#lines[@]}" -gt 0 ] && [[ "${lines[0]}" =~ ^removed\ 00000000000000000000\.log ]]
}

@test "retain: -n says when nothing would go" {
	fill
	before=$(ls "$L")
	run --separate-stderr "$B/elog-retain" -n --max-bytes 1G "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ] && [ "$output" = "would remove nothing" ]
	# Under an age limit the line that says why the first segment stays
	# follows.
	run --separate-stderr "$B/elog-retain" -n --max-age 5000w "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ] && [ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "would remove nothing" ]
	[[ "${lines[1]}" == "kept 00000000000000000000.log offsets 0-"*": younger than the age limit" ]]
	[ "$(ls "$L")" = "$before" ]
	# Without -n a run that removes nothing stays silent.
	run --separate-stderr "$B/elog-retain" --max-bytes 1G "$L"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
}

@test "retain: a bare run applies the policy stored at creation" {
	fill --retain-bytes 16K
	run "$B/elog-retain" "$L"
	[ "$status" -eq 0 ]
	[ "$(cat "$L"/*.log | wc -c)" -le 16384 ]
}

@test "retain: a flag overrides the stored limit of its kind" {
	fill --retain-bytes 16K
	run "$B/elog-retain" --max-bytes 1G "$L"
	[ "$status" -eq 0 ] && [ "$(first)" = 00000000000000000000.log ]
}

@test "retain: without a policy or a limit it is a usage error" {
	fill
	run --separate-stderr "$B/elog-retain" "$L"
	[ "$status" -eq 2 ]
	[ "$stderr" = "elog-retain: $L: no retention policy: the log has none stored, and no age or size limit was given" ]
}

@test "retain: the readers are told of the removed range" {
	fill
	"$B/elog-retain" --max-bytes 20K "$L"
	base=$((10#$(first | cut -c1-20)))
	run --separate-stderr "$B/elog-cat" -o 0 -c 1 -F '%o\n' "$L"
	[ "$status" -eq 0 ] && [ "$output" = "$base" ]
	[ "$stderr" = "elog-cat: $L: offsets 0-$((base - 1)) were removed by retention" ]
}

@test "retain: another maintenance run holding the lock gives status 3" {
	fill
	flock "$L/maint.lock" sleep 5 & PID=$!
	sleep 0.3
	run --separate-stderr "$B/elog-retain" --max-bytes 1K "$L"
	[ "$status" -eq 3 ]
	[[ "$stderr" =~ ^elog-retain:\ $L:\ another\ maintenance\ run\ holds\ maint\.lock ]]
	[ "$(first)" = 00000000000000000000.log ]
}

@test "retain: --wait waits for the lock" {
	fill
	flock "$L/maint.lock" sleep 1 & PID=$!
	sleep 0.3
	run "$B/elog-retain" --wait --max-bytes 20K "$L"
	[ "$status" -eq 0 ] && [ "$(first)" != 00000000000000000000.log ]
}

@test "--set: another maintenance run holding the lock gives status 3 at once, --wait waits, as the page says" {
	fill
	mkfifo "$T/go"
	flock "$L/maint.lock" sh -c "read x <'$T/go'" & PID=$!
	while flock -n "$L/maint.lock" true; do sleep 0.05; done
	run --separate-stderr "$B/elog-retain" --set retain-bytes=5G "$L"
	[ "$status" -eq 3 ]
	[[ "$stderr" =~ ^elog-retain:\ $L:\ another\ maintenance\ run\ holds\ maint\.lock ]]
	! grep -qx 'retain_bytes 5368709120' "$L/settings"
	"$B/elog-retain" --wait --set retain-bytes=5G "$L" & W=$!
	echo go > "$T/go"
	wait "$W"
	grep -qx 'retain_bytes 5368709120' "$L/settings"
	# What elog-retain(1) says of it, in words.
	mandoc -Tascii "$BATS_TEST_DIRNAME/../../man/elog-retain.1" | col -b | tr -s ' \n\t' '   ' |
		grep -q 'when another maintenance program holds it, --set exits with status 3 at once and changes nothing, unless --wait is given'
}

@test "retain: runs beside a live writer, which goes on" {
	fill
	(sleep 3 | "$B/elog-append" "$L") & PID=$!
	sleep 0.5
	run "$B/elog-retain" --max-bytes 8K "$L"
	[ "$status" -eq 0 ]
	printf 'after\n' > "$T/in"
	sleep 3
	"$B/elog-append" "$L" < "$T/in"
	run "$B/elog-cat" -n 1 -v "$L"
	[ "$output" = "after" ]
}

@test "retain: not a log, missing, damaged" {
	mkdir "$T/empty"
	run --separate-stderr "$B/elog-retain" --max-bytes 1K "$T/empty"
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-retain: $T/empty: not an elog directory (no settings file)" ]
	run --separate-stderr "$B/elog-retain" --max-bytes 1K "$T/none"
	[ "$status" -eq 5 ] && [ "$stderr" = "elog-retain: $T/none: no such file or directory" ]
	fill
	# A damaged record no longer stops retention: the size limit
	# removes the segment by its size (see the damage tests below).
	printf 'XXXX' | dd of="$L/00000000000000000000.log" bs=1 seek=100 conv=notrunc 2>/dev/null
	run --separate-stderr "$B/elog-retain" --max-bytes 1K "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[ ! -e "$L/00000000000000000000.log" ]
}

@test "retain: bad usage" {
	run --separate-stderr "$B/elog-retain"
	[ "$status" -eq 2 ] && [ "$stderr" = $'elog-retain: missing log directory\nTry \'elog-retain --help\'.' ]
	run --separate-stderr "$B/elog-retain" --max-age 3 "$T"
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-retain: --max-age: invalid duration '3'" ]
	run --separate-stderr "$B/elog-retain" --max-bytes lots "$T"
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-retain: --max-bytes: invalid size 'lots'" ]
	run --separate-stderr "$B/elog-retain" --max-bytes 0 "$T"
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-retain: --max-bytes: must be more than 0" ]
	run --separate-stderr "$B/elog-retain" -x "$T"
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-retain: unknown option -x" ]
	run --separate-stderr "$B/elog-retain" "$T" extra
	[ "$status" -eq 2 ] && [ "${stderr%%$'\n'*}" = "elog-retain: unexpected argument 'extra'" ]
}

@test "retain: --help matches the man page's synopsis; --version" {
	run "$B/elog-retain" --help
	[ "$status" -eq 0 ] && [[ "${lines[0]}" =~ ^usage:\ elog-retain\ \[-nv\] ]]
	man=$(MANWIDTH=200 mandoc -Tascii "$BATS_TEST_DIRNAME/../../man/elog-retain.1" | col -b |
		sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | grep 'elog-retain' | head -1 | tr -s ' ' | sed 's/^ //')
	[ "$man" = "elog-retain [-nv] [--max-age duration] [--max-bytes size] [--wait] dir" ]
	run "$B/elog-retain" --version
	[ "$status" -eq 0 ] && [[ "$output" =~ ^elog-retain\ \(elog\)\  ]]
}

@test "retain --set changes the stored policy; the next run applies it" {
	fill
	n=$(segments)
	run "$B/elog-retain" "$L"
	[ "$status" -eq 2 ]
	"$B/elog-retain" --set retain-bytes=16K "$L"
	grep -qx 'retain_bytes 16384' "$L/settings"
	"$B/elog-retain" "$L"
	[ "$(segments)" -lt "$n" ]
	"$B/elog-retain" --set retain-bytes=none --set retain-age=7d --set segment-bytes=8K "$L"
	grep -qx 'retain_bytes 0' "$L/settings"
	grep -qx 'retain_ms 604800000' "$L/settings"
	grep -qx 'segment_bytes 8192' "$L/settings"
	# A writer opened now rolls at the new size.
	seq 1 3000 | "$B/elog-append" "$L"
	run "$B/elog-verify" -l "$L"
	[ "$status" -eq 0 ]
	# 8 KiB of records at most, and a closed segment's seal (56 bytes).
	[[ "$output" =~ \ 8[0-2][0-9][0-9]\ .*closed ]]
}

@test "retain --set: bad keys and values are usage errors, nothing changes" {
	fill
	cp "$L/settings" "$T/before"
	run "$B/elog-retain" --set bogus=1 "$L"
	[ "$status" -eq 2 ]
	[[ "${lines[0]}" == "elog-retain: --set: unknown setting 'bogus' (one of "*")" ]]
	run "$B/elog-retain" --set segment-bytes=1K "$L"
	[ "$status" -eq 2 ]
	[ "$output" = "elog-retain: $L: segment size must be between 4096 and 1073741824 bytes" ]
	run "$B/elog-retain" --set compress=lz4 "$L"
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "elog-retain: --set compress: 'none' or 'zstd[:level]', not 'lz4'" ]
	run "$B/elog-retain" --set retain-bytes=1M --max-bytes 1M "$L"
	[ "$status" -eq 2 ]
	cmp "$T/before" "$L/settings"
}

@test "retain --set: an unknown key lists the keys of the man page, each of which is taken" {
	local listed documented k
	fill
	run --separate-stderr "$B/elog-retain" --set segment_bytes=8K "$L"
	[ "$status" -eq 2 ] && [ "$output" = "" ]
	[ "${stderr%%$'\n'*}" != "${stderr#*$'\n'}" ]
	[ "${stderr#*$'\n'}" = "Try 'elog-retain --help'." ]
	listed=$(echo "${stderr%%$'\n'*}" |
		sed -n "s/^elog-retain: --set: unknown setting 'segment_bytes' (one of \(.*\))$/\1/p" |
		sed 's/, /\n/g' | sort)
	documented=$(sed -n 's/^\.It Cm \([a-z-]*\) Ns = Ns .*/\1/p' \
		"$BATS_TEST_DIRNAME/../../man/elog-retain.1" | sort)
	[ -n "$documented" ] && [ "$listed" = "$documented" ] || {
		echo "listed: $listed" >&2
		echo "documented: $documented" >&2
		return 1
	}
	# Each listed key is one --set knows: its error, if any, is about
	# the value, never an unknown setting.
	for k in $listed; do
		run --separate-stderr "$B/elog-retain" --set "$k=bogus" "$L"
		[ "$status" -eq 2 ] && [[ "$stderr" != *"unknown setting"* ]] || {
			echo "$k: $stderr" >&2
			return 1
		}
	done
}

@test "retain --set cleanup: compact and delete are stored; the writer keeps both" {
	fill
	grep -qx 'cleanup delete' "$L/settings"
	run --separate-stderr "$B/elog-retain" --set cleanup=compact "$L"
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	grep -qx 'cleanup compact' "$L/settings"
	[ "$(grep -c '^cleanup ' "$L/settings")" -eq 1 ]
	# A writer opened afterwards keeps the setting, and agrees with it.
	echo x | "$B/elog-append" "$L"
	echo y | "$B/elog-append" --cleanup compact "$L"
	grep -qx 'cleanup compact' "$L/settings"
	"$B/elog-retain" --set cleanup=delete "$L"
	grep -qx 'cleanup delete' "$L/settings"
	[ "$(grep -c '^cleanup ' "$L/settings")" -eq 1 ]
}

@test "retain --set cleanup: a value other than delete or compact is a usage error" {
	fill
	cp "$L/settings" "$T/before"
	for v in bogus Compact "" none compact,delete; do
		run --separate-stderr "$B/elog-retain" --set "cleanup=$v" "$L"
		[ "$status" -eq 2 ] && [ "$output" = "" ]
		[ "$stderr" = "elog-retain: --set cleanup: 'delete' or 'compact', not '$v'
Try 'elog-retain --help'." ]
	done
	cmp "$T/before" "$L/settings"
}

@test "retain --set cleanup=compact: a log made before cleanup existed gains the key" {
	fill
	sed -i '/^cleanup /d' "$L/settings"
	cp "$L/settings" "$T/before"
	"$B/elog-retain" --set cleanup=compact "$L"
	grep -qx 'cleanup compact' "$L/settings"
	# Every other line is kept as it was.
	[ "$(grep -v '^cleanup ' "$L/settings")" = "$(cat "$T/before")" ]
}

# $2 records stamped $1 (epoch ms), in 4 KiB segments; flags after to
# elog-append.
stamped() {
	local ts=$1 n=$2
	shift 2
	awk -v ts="$ts" -v n="$n" -v from="$(cat "$T/count" 2>/dev/null || echo 0)" \
		'BEGIN { for (i = 0; i < n; i++)
			printf "%.0f\trecord number %06d padding\n", ts, from + i }' |
		"$B/elog-append" -t --segment-bytes 4K "$@" "$L"
	echo $(( $(cat "$T/count" 2>/dev/null || echo 0) + n )) >"$T/count"
}

now_ms() { echo $(( $(date +%s) * 1000 )); }

@test "retain: one segment stamped years ahead does not stop age retention" {
	local now
	now=$(now_ms)
	stamped $((now + 10 * 365 * 86400000)) 300 --max-skew 1000w
	stamped $((now - 10 * 86400000)) 300
	stamped "$now" 5
	run "$B/elog-retain" -v --max-age 7d "$L"
	[ "$status" -eq 0 ]
	# Every segment of the future records went, judged by those after.
	local first
	first=$("$B/elog-cat" -c 1 -F '%o' "$L")
	[ "$first" -ge 300 ]
	[[ "${lines[0]}" == "removed 00000000000000000000.log offsets 0-"* ]]
	# Every closed segment went: none is named as kept.
	[ "$(printf '%s\n' "${lines[@]}" | grep -vc '^removed ')" = 0 ]
}

@test "retain: records stamped while the clock said 1970 live as long as those after them" {
	local now
	now=$(now_ms)
	stamped 5000 300
	stamped $((now - 3600000)) 300
	stamped "$now" 5
	run "$B/elog-retain" -v --max-age 1d "$L"
	[ "$status" -eq 0 ]
	[ "$("$B/elog-cat" -c 1 -F '%o' "$L")" = 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "kept 00000000000000000000.log offsets 0-"*" newest 1970-01-01T00:00:05.000Z: its newest timestamp is not plausible (in the future or before 2000); judged by a later segment's "*", younger than the age limit" ]]
	# Once the records after them are too old, they go too.
	run "$B/elog-retain" --max-age 30m "$L"
	[ "$status" -eq 0 ]
	[ "$("$B/elog-cat" -c 1 -F '%o' "$L")" -ge 300 ]
}

@test "retain: a segment stamped ahead with nothing believable after it stays, and -n says why" {
	local now
	now=$(now_ms)
	stamped $((now - 10 * 86400000)) 300
	stamped $((now + 10 * 365 * 86400000)) 300 --max-skew 1000w
	run "$B/elog-retain" -n --max-age 7d "$L"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "would remove 00000000000000000000.log"* ]]
	[[ "${lines[-1]}" == "kept "*": its newest timestamp is not plausible (in the future or before 2000) and no later closed segment has one that is" ]]
}

# The base of the first segment left, in decimal.
start() { echo $((10#$(first | cut -c1-20))); }

# The name of the n-th segment (1-based).
nth() { ls "$L" | grep '^[0-9]\{20\}\.log$' | sed -n "$1p"; }

# Flip a byte of the header of segment file $1.
damage_header() { printf 'X' | dd of="$L/$1" bs=1 seek=3 conv=notrunc 2>/dev/null; }

@test "losses: a consumer losing unread records is named on stderr, with the command that acknowledges it" {
	fill
	"$B/elog-commit" --create "$L" uplink 99
	"$B/elog-commit" --create "$L" fast 1990
	run --separate-stderr "$B/elog-retain" --max-bytes 20K "$L"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
	s=$(start)
	[ "$stderr" = "elog-retain: $L: consumer uplink lost $((s - 100)) unread records (offsets 100-$((s - 1))); run: elog-commit --ack-loss $L uplink" ]
}

@test "losses: -v prints each loss after the segments, -n what would be lost, recording nothing" {
	fill
	"$B/elog-commit" --create "$L" uplink 99
	run --separate-stderr "$B/elog-retain" -n --max-bytes 20K "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[[ "${lines[-1]}" =~ ^would\ lose\ uplink\ offsets\ 100-([0-9]+)\ records\ ([0-9]+)$ ]]
	[ "${BASH_REMATCH[2]}" = $((BASH_REMATCH[1] - 99)) ]
	[ ! -e "$L/consumers.lost" ] && [ ! -e "$L/retain.last" ]
	run --separate-stderr "$B/elog-retain" -v --max-bytes 20K "$L"
	s=$(start)
	[ "${lines[-1]}" = "lost uplink offsets 100-$((s - 1)) records $((s - 100))" ]
	[[ "${lines[-2]}" == "removed "* ]]
	[[ "$stderr" == "elog-retain: $L: consumer uplink lost $((s - 100)) unread records"* ]]
}

@test "losses: retain.last lists them after the time" {
	fill
	"$B/elog-commit" --create "$L" a 9
	"$B/elog-commit" --create "$L" b 99
	"$B/elog-retain" --max-bytes 20K "$L" 2>/dev/null
	s=$(start)
	run cat "$L/retain.last"
	[[ "${lines[0]}" =~ ^[0-9]{13}$ ]]
	[ "${lines[1]}" = "lost a 10 $((s - 1)) $((s - 10))" ]
	[ "${lines[2]}" = "lost b 100 $((s - 1)) $((s - 100))" ]
	[ "${#lines[@]}" -eq 3 ]
}

@test "losses: elog-commit -l keeps the loss after the consumer moves past it, until --ack-loss" {
	fill
	"$B/elog-commit" --create "$L" uplink 99
	"$B/elog-retain" --max-bytes 20K "$L" 2>/dev/null
	s=$(start)
	"$B/elog-commit" --create "$L" uplink 1999
	run "$B/elog-commit" -l "$L"
	[[ "${lines[1]}" =~ ^uplink\ +1999\ +0\ [0-9T:.Z-]+\ LOST\ $((s - 100))\ to\ retention\ \(offsets\ 100-$((s - 1))\)$ ]]
	# Commits keep it, and consumers.json stays in the format older
	# versions read.
	"$B/elog-commit" --create "$L" other 5
	[ "$("$B/elog-commit" -l --json "$L" | jq -c 'select(.name == "uplink") | [.lost, .lost_first, .lost_last]')" = "[$((s - 100)),100,$((s - 1))]" ]
	! grep -q lost "$L/consumers.json"
	run --separate-stderr "$B/elog-commit" --ack-loss "$L" uplink
	[ "$status" -eq 0 ] && [ "$output" = "" ] && [ "$stderr" = "" ]
	run "$B/elog-commit" -l "$L"
	[[ "${lines[2]}" =~ ^uplink\ +1999\ +0\ [0-9T:.Z-]+$ ]]
	[ ! -e "$L/consumers.lost" ]
}

@test "losses: a second run adds to the loss, counting every offset once" {
	fill
	"$B/elog-commit" --create "$L" uplink 99
	"$B/elog-retain" --max-bytes 40K "$L" 2>/dev/null
	s1=$(start)
	run --separate-stderr "$B/elog-retain" --max-bytes 20K "$L"
	s2=$(start)
	[ "$s2" -gt "$s1" ]
	# This run names what it removed; the list, the whole loss.
	[ "$stderr" = "elog-retain: $L: consumer uplink lost $((s2 - s1)) unread records (offsets $s1-$((s2 - 1))); run: elog-commit --ack-loss $L uplink" ]
	[ "$("$B/elog-commit" -l --json "$L" | jq -c '[.lost, .lost_first, .lost_last]')" = "[$((s2 - 100)),100,$((s2 - 1))]" ]
}

@test "losses: a consumer behind the start still shows what it cannot read after --ack-loss" {
	fill
	"$B/elog-commit" --create "$L" uplink 99
	"$B/elog-retain" --max-bytes 20K "$L" 2>/dev/null
	s=$(start)
	"$B/elog-commit" --ack-loss "$L" uplink
	[ "$("$B/elog-commit" -l --json "$L" | jq -c '[.lost, .lost_first, .lost_last]')" = "[$((s - 100)),100,$((s - 1))]" ]
	# Reading on gets it past the gap, and the mark goes.
	"$B/elog-commit" --create "$L" uplink "$s"
	[ "$("$B/elog-commit" -l --json "$L" | jq -c '.lost')" = 0 ]
}

@test "losses: --ack-loss of a consumer that does not exist is a negative answer; -d drops the loss" {
	fill
	run --separate-stderr "$B/elog-commit" --ack-loss "$L" nobody
	[ "$status" -eq 1 ] && [ "$stderr" = "elog-commit: $L: no consumer \"nobody\"" ]
	"$B/elog-commit" --create "$L" uplink 99
	run "$B/elog-commit" --ack-loss "$L" uplink
	[ "$status" -eq 0 ]
	"$B/elog-retain" --max-bytes 20K "$L" 2>/dev/null
	grep -q '^uplink retention ' "$L/consumers.lost"
	"$B/elog-commit" -d "$L" uplink
	[ ! -e "$L/consumers.lost" ]
	"$B/elog-commit" --create "$L" uplink 1999
	[ "$("$B/elog-commit" -l --json "$L" | jq -c '.lost')" = 0 ]
}

@test "losses: a consumers.json that cannot be read does not stop retention, and says so" {
	fill
	echo garbage > "$L/consumers.json"
	run --separate-stderr "$B/elog-retain" --max-bytes 20K "$L"
	[ "$status" -eq 4 ]
	[ "$(start)" -gt 0 ]
	[ "$stderr" = "elog-retain: $L: the losses of named consumers are not known (see elog-verify $L): consumers.json: byte 0: expected '{'" ]
}

@test "protect: age retention keeps what a named consumer has not read, and -v says who" {
	fill
	"$B/elog-retain" --set retain-consumers=protect "$L"
	grep -qx 'retain_consumers protect' "$L/settings"
	"$B/elog-commit" --create "$L" uplink 1000
	"$B/elog-commit" --create "$L" fast 1990
	run --separate-stderr "$B/elog-retain" -v --max-age 7d "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	s=$(start)
	[ "$s" -le 1001 ] && [ "$s" -gt 900 ]
	[[ "${lines[-1]}" =~ ^kept\ [0-9]{20}\.log\ offsets\ $s-[0-9]+\ newest\ [0-9T:.Z-]+:\ consumer\ uplink\ has\ not\ read\ it\ \(retain-consumers=protect\)$ ]]
	[ "$("$B/elog-commit" -l --json "$L" | jq -s -c 'map(.lost)')" = "[0,0]" ]
	# Reading on lets it go.
	"$B/elog-commit" --create "$L" uplink 1990
	"$B/elog-retain" --max-age 7d "$L"
	[ "$(start)" -gt 1900 ]
}

@test "protect: a consumer created before it committed keeps every record from the first" {
	fill
	"$B/elog-retain" --set retain-consumers=protect "$L"
	"$B/elog-commit" --create "$L" shipper
	run --separate-stderr "$B/elog-retain" -v --max-age 7d "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[ "$(start)" = 0 ]
	[[ "${lines[-1]}" =~ ^kept\ 00000000000000000000\.log\ offsets\ 0-[0-9]+\ newest\ [0-9T:.Z-]+:\ consumer\ shipper\ has\ not\ read\ it\ \(retain-consumers=protect\)$ ]]
	[ "$("$B/elog-commit" -l --json "$L" | jq -c '[.name, .offset, .next, .lost]')" = '["shipper",null,0,0]' ]
	# Its first commit lets what it read go.
	"$B/elog-commit" "$L" shipper 1990
	"$B/elog-retain" --max-age 7d "$L"
	[ "$(start)" -gt 1900 ]
}

@test "report: a consumer created before it committed is told its loss from the first record" {
	fill
	"$B/elog-commit" --create "$L" shipper
	run --separate-stderr "$B/elog-retain" --max-age 7d "$L"
	[ "$status" -eq 0 ]
	s=$(start)
	[ "$s" -gt 0 ]
	[ "$("$B/elog-commit" -l --json "$L" | jq -c '[.offset, .next, .lost, .lost_first, .lost_last]')" = "[null,0,$s,0,$((s - 1))]" ]
}

@test "protect: a size limit still removes unread records, and says so" {
	fill
	"$B/elog-retain" --set retain-consumers=protect "$L"
	"$B/elog-commit" --create "$L" uplink 99
	run --separate-stderr "$B/elog-retain" -v --max-bytes 20K "$L"
	[ "$status" -eq 0 ]
	s=$(start)
	[ "${lines[-1]}" = "lost uplink offsets 100-$((s - 1)) records $((s - 100)) by the size limit" ]
	[ "$stderr" = "elog-retain: $L: consumer uplink lost $((s - 100)) unread records (offsets 100-$((s - 1))) to the size limit, although retain-consumers=protect; run: elog-commit --ack-loss $L uplink" ]
}

@test "protect: --set retain-consumers takes report or protect" {
	fill
	run --separate-stderr "$B/elog-retain" --set retain-consumers=keep "$L"
	[ "$status" -eq 2 ]
	[ "${stderr%%$'\n'*}" = "elog-retain: --set retain-consumers: 'report' or 'protect', not 'keep'" ]
	"$B/elog-retain" --set retain-consumers=protect "$L"
	"$B/elog-retain" --set retain-consumers=report "$L"
	grep -qx 'retain_consumers report' "$L/settings"
	"$B/elog-commit" --create "$L" uplink 99
	"$B/elog-retain" --max-age 7d "$L" 2>/dev/null
	[ "$(start)" -gt 1900 ]
}

@test "damage: a damaged closed-segment header does not stop age retention of the others" {
	fill
	n=$(segments)
	third=$(nth 3)
	damage_header "$third"
	run --separate-stderr "$B/elog-retain" -v --max-age 7d "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	# Every closed segment went, the damaged one judged by those after.
	[ "$(segments)" -eq 1 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c '^removed ')" -eq $((n - 1)) ]
	[[ "${lines[2]}" =~ ^removed\ $third\ offsets\ [0-9]+-[0-9]+\ bytes\ [0-9]+\ newest\ -\ damaged$ ]]
}

@test "damage: a damaged record does not stop age retention either" {
	fill
	printf 'XXXX' | dd of="$L/$(nth 2)" bs=1 seek=200 conv=notrunc 2>/dev/null
	run --separate-stderr "$B/elog-retain" --max-age 7d "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[ "$(segments)" -eq 1 ]
}

@test "damage: a damaged segment nothing later can judge stays, every older one goes, status 4 says what to run" {
	fill
	n=$(segments)
	last=$(nth $((n - 1)))
	damage_header "$last"
	run --separate-stderr "$B/elog-retain" -v --max-age 7d "$L"
	[ "$status" -eq 4 ]
	[ "$(first)" = "$last" ] && [ "$(segments)" -eq 2 ]
	[[ "${lines[-1]}" == "kept $last offsets "*": damaged, and no later closed segment tells its age" ]]
	[ "$stderr" = "elog-retain: $L: $last is damaged and no later closed segment tells its age: kept, with every segment after it; run: elog-verify --repair --salvage $L" ]
	# A size limit removes it by its size.
	run --separate-stderr "$B/elog-retain" --max-bytes 1K "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[ "$(segments)" -eq 1 ]
	# After salvage the age is known again.
}

@test "damage: after --repair --salvage rebuilt the header, age retention judges the segment itself" {
	fill
	n=$(segments)
	last=$(nth $((n - 1)))
	damage_header "$last"
	"$B/elog-verify" --repair --salvage "$L" >/dev/null
	run --separate-stderr "$B/elog-retain" --max-age 7d "$L"
	[ "$status" -eq 0 ] && [ "$stderr" = "" ]
	[ "$(segments)" -eq 1 ]
}
