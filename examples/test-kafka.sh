#!/usr/bin/env bash
# test-kafka.sh BUILD: the hand-off between elog and Kafka, against
# librdkafka's mock cluster (kafka-mock), with kcat as the Kafka client.
#
#  1. to-kafka.sh moves a log into a topic; every message's key, and the
#     record in its value (offset, timestamp, key, value), equal what
#     elog-cat prints.
#  2. to-kafka.sh (with kcat and everything it started) killed with
#     SIGKILL up to 10 times while it moves 2000 records of another log,
#     then run to the end: every offset reaches the topic.
#  3. Back from Kafka: messages produced by kcat, read with kcat -J,
#     through from-kafka.jq into elog-append: each record's timestamp, key
#     and value equal the message's.
#  4. The topic of part 1, through from-kafka-envelope.jq into a new log,
#     gives back the first log's timestamps, keys and values.
#
# Skipped, saying so, when kcat, jq or the kafka-mock program (built only
# where librdkafka's development files are) is missing.
set -eu
B=$(cd "${1:?usage: test-kafka.sh BUILD}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
PATH=$B:$PATH
export TZ=UTC

for need in kcat jq "$B/examples/kafka-mock"; do
	if ! command -v "$need" >/dev/null 2>&1; then
		echo "test-kafka: SKIP: $need is missing (Debian: kcat, jq, librdkafka-dev)"
		exit 0
	fi
done

T=$(mktemp -d)
cleanup() {
	exec 3>&- || true
	if [ -n "${MOCK:-}" ]; then
		kill "$MOCK" 2>/dev/null || true
		wait "$MOCK" 2>/dev/null || true
	fi
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "test-kafka: FAIL: $*" >&2; exit 1; }

# The broker lives while fd 3 is open: its end of file stops it.
mkfifo "$T/ctl"
"$B/examples/kafka-mock" events crash back <"$T/ctl" >"$T/boot" &
MOCK=$!
exec 3>"$T/ctl"
for i in $(seq 100); do [ -s "$T/boot" ] && break; sleep 0.05; done
BOOT=$(head -1 "$T/boot")
[ -n "$BOOT" ] || fail "kafka-mock printed no bootstrap address"

consume() {	# topic: every message, as kcat -J prints them
	kcat -C -b "$BOOT" -t "$1" -J -e -o beginning -q
}

# ---- 1: a log into a topic ----
L=$T/log
{
	printf '%s\t%s\n' 1577836800000 'user-1:{"name":"ana","n":1}'
	printf '%s\t%s\n' 1577836800001 'user-2:plain text value'
	printf '%s\t%s\n' 1577836800002 ':no key here'
	printf '%s\t%s\n' 2026-11-29T03:00:00.250Z 'user-1:{"name":"ana","n":2,"big":12345678901234567890}'
	printf '%s\t%s\n' 1577836800004 'user-3:'
	printf '%s\t%s\n' 1577836800005 'ünï:çødé ✓'
	printf '%s\t%s\n' 1577836800006 'user-4:[1,2,{"a":null}]'
	seq 1 40 | sed 's/^/1600000000000\tk/; s/$/:v/'
} | elog-append -t -K : "$L"
"$HERE/to-kafka.sh" -n 7 "$L" "$BOOT" events
elog-cat "$L" | jq -c '[.offset, .ts, .key, .value]' >"$T/want"
consume events >"$T/got.json"
jq -c '.payload | fromjson | [.offset, .ts, .key, .value]' "$T/got.json" >"$T/got"
cmp -s "$T/want" "$T/got" || { diff "$T/want" "$T/got" >&2; fail "the topic differs from the log"; }
jq -e -s 'all(.[]; .key == (.payload | fromjson | .key))' "$T/got.json" >/dev/null ||
	fail "a message's key differs from its record's"
# The value is elog-cat's line byte for byte: no number rounded.
grep -qF 'big\":12345678901234567890' "$T/got.json" || fail "a large number was rounded"
[ "$(elog-commit -l --json "$L" | jq -r 'select(.name == "kafka") | .lag')" = 0 ] ||
	fail "the consumer kafka is not at the end"
# Nothing new: nothing sent.
"$HERE/to-kafka.sh" -n 7 "$L" "$BOOT" events
[ "$(consume events | wc -l)" -eq "$(wc -l <"$T/want")" ] || fail "a second run sent again"
echo "test-kafka: 1 ok: $(wc -l <"$T/want") records, keys, values and timestamps equal"

# ---- 2: killed again and again, nothing lost ----
C=$T/crash
seq 0 1999 | sed 's/^/key/; s/$/:{"n":0}/' | elog-append -K : "$C"
kills=0
# Job control: each run gets a process group of its own, killed whole.
set -m
while :; do
	"$HERE/to-kafka.sh" -g mover -n 50 "$C" "$BOOT" crash &
	pid=$!
	sleep "0.$(( $(od -An -N1 -tu1 /dev/urandom) % 3 ))$(( $(od -An -N1 -tu1 /dev/urandom) % 10 ))"
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL -- "-$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		kills=$((kills + 1))
		[ "$kills" -lt 10 ] && continue
	fi
	wait "$pid" 2>/dev/null || true
	break
done
set +m
"$HERE/to-kafka.sh" -g mover -n 50 "$C" "$BOOT" crash
consume crash | jq '.payload | fromjson | .offset' | sort -n >"$T/offs"
sort -nu "$T/offs" >"$T/uniq"
seq 0 1999 | cmp -s - "$T/uniq" || fail "offsets lost in the topic after $kills kills"
echo "test-kafka: 2 ok: 2000 records after $kills kills, none lost," \
     "$(( $(wc -l <"$T/offs") - 2000 )) sent twice"

# ---- 3: from Kafka into a log ----
{
	printf 'k1\tfirst value\n'
	printf '\tunkeyed value\n'
	printf 'k2\t{"json":true,"n":[1,2]}\n'
	printf 'k1\t\n'
	printf 'k3\tvalue with\ttab\n'
} | kcat -P -b "$BOOT" -t back -K '\t' -Z
R=$T/from
consume back | jq -j -f "$HERE/from-kafka.jq" | elog-append -0 -t -K "$(printf '\t')" "$R"
consume back | jq -c '[.ts, .key, (.payload // "")]' >"$T/want3"
elog-cat "$R" | jq -c '[.ts, .key, (.value | if type == "string" then . else tojson end)]' >"$T/got3"
cmp -s "$T/want3" "$T/got3" || { diff "$T/want3" "$T/got3" >&2; fail "the log differs from the topic"; }
echo "test-kafka: 3 ok: $(wc -l <"$T/want3") messages, keys, values and timestamps equal"

# ---- 4: the topic of part 1 back into a log ----
E=$T/back
consume events | jq -j -f "$HERE/from-kafka-envelope.jq" |
	elog-append -0 -t -K "$(printf '\t')" "$E"
elog-cat "$L" | jq -c '[.ts, .key, .value]' >"$T/want4"
elog-cat "$E" | jq -c '[.ts, .key, .value]' >"$T/got4"
cmp -s "$T/want4" "$T/got4" || { diff "$T/want4" "$T/got4" >&2; fail "the round trip changed the log"; }
echo "test-kafka: 4 ok: $(wc -l <"$T/want4") records back from the topic unchanged"
