#!/bin/sh
# The edge gateway: READINGS readings recorded in 40 batches while the
# uplink is down, with retention keeping the log's files under 256 KiB;
# then the replay over a slow link, SIGKILLed as a whole at random moments
# and started again (until one gets to the end first, at most KILLS times),
# and a last replay to the end.  The receiver must hold every
# reading still in the log exactly once, in the log's order, with its sensor
# and timestamp; the consumer must end committed at the last reading.
#
# usage: test-edge-gateway.sh BUILD_DIR [READINGS] [KILLS]
set -eu
B=$(cd "${1:?usage: $0 build-dir [readings] [kills]}" && pwd)
N=${2:-20000}
KILLS=${3:-40}
here=$(cd "$(dirname "$0")" && pwd)
PATH=$B:$PATH
export PATH
T=$(mktemp -d "${TMPDIR:-/tmp}/elog-edge-gateway.XXXXXX")
trap '[ -n "${pg:-}" ] && kill -KILL "-$pg" 2>/dev/null; rm -rf "$T"' EXIT
L=$T/readings
DB=$T/receiver.db
LIMIT=262144

fail() { echo "test-edge-gateway: FAIL: $*" >&2; exit 1; }
pause() { od -An -N2 -tu2 /dev/urandom | awk -v max="$1" '{ printf "%.3f", ($1 % (max + 1)) / 1000 }'; }
log_bytes() { cat "$L"/*.log | wc -c; }

command -v sqlite3 > /dev/null || fail "sqlite3 is not installed"

# Four sensors, one reading a second each from 2026-11-29T03:00:00Z.
awk -v n="$N" 'BEGIN {
	for (i = 0; i < n; i++)
		printf "%.0f\tt%d:{\"seq\":%d,\"c\":%.1f}\n", 1795921200000 + i * 250, i % 4, i, 15 + (i % 97) / 10
}' > "$T/all"

# The uplink is down: record, batch after batch.
chunk=$((N / 40))
max=0
i=1
while [ "$i" -le "$N" ]; do
	sed -n "${i},$((i + chunk - 1))p" "$T/all" | "$here/edge-gateway.sh" record "$L"
	bytes=$(log_bytes)
	[ "$bytes" -le "$LIMIT" ] || fail "after reading $i the log's files take $bytes bytes"
	[ "$bytes" -gt "$max" ] && max=$bytes
	i=$((i + chunk))
done
total=$(($(wc -c < "$T/all")))
first=$(elog-cat -c 1 -F '%o' "$L")
[ "$first" -gt 0 ] || fail "retention removed nothing from $total bytes of readings"
elog-cat -F '%o\t%T\t%k\t%s\n' "$L" > "$T/kept"
kept=$(wc -l < "$T/kept")
[ "$((first + kept))" -eq "$N" ] || fail "the log holds $kept readings from $first, not up to $N"
# Keys that filter (the sensor): a delete log, which a blanket elog-compact
# leaves as it is (status 2), every unsent reading still there.
grep -qx 'cleanup delete' "$L/settings" || fail "settings: $(grep cleanup "$L/settings")"
st=0
elog-compact "$L" 2> "$T/err" || st=$?
[ "$st" -eq 2 ] && grep -q "cleanup is delete" "$T/err" || fail "elog-compact: status $st: $(cat "$T/err")"
elog-cat -F '%o\t%T\t%k\t%s\n' "$L" | cmp -s - "$T/kept" || fail "elog-compact changed the readings"
id=$(elog-commit --log-id "$L")

# The uplink is back, over a slow link (20 ms a batch of 50): replay,
# killed again and again, until a replay reaches the end before its kill.
export BATCH=50 LATENCY=0.02
kills=0 runs=0
while [ "$kills" -lt "$KILLS" ]; do
	setsid "$here/edge-gateway.sh" replay "$L" "$DB" &
	pg=$!
	sleep "$(pause 200)"
	# A kill that finds the replay finished does not count.
	{ kill -KILL "-$pg" || kill -KILL "$pg"; } 2>/dev/null && kills=$((kills + 1))
	wait "$pg" 2>/dev/null || true
	pg=
	runs=$((runs + 1))
	elog-commit -l --json "$L" | grep -q '"lag":0,' && break
done
[ "$kills" -ge 10 ] || fail "only $kills of $runs replays were still running when killed"
"$here/edge-gateway.sh" replay "$L" "$DB"

# Every reading kept, once, in order, as recorded.
sqlite3 -separator "$(printf '\t')" "$DB" \
	'SELECT idem, ts, sensor, value FROM readings ORDER BY seq' > "$T/received"
sed "s/^/$id:/" "$T/kept" > "$T/want"
cmp -s "$T/received" "$T/want" ||
	fail "the receiver's table differs from the log: $(diff "$T/want" "$T/received" | head -3)"
sent=$(sqlite3 "$DB" 'SELECT sum(n) FROM sends')
elog-commit -l --json "$L" | grep -q "^{\"name\":\"uplink\",\"offset\":$((N - 1)),\"lag\":0," ||
	fail "committed: $(elog-commit -l --json "$L")"
echo "test-edge-gateway: ok: $N readings ($total bytes) recorded under a ${LIMIT}-byte limit (at most $max bytes of segments);" \
	"the $kept kept (offsets $first-$((N - 1))) replayed exactly once, in order, across $kills SIGKILLs in $runs runs ($((sent - kept)) resends dropped by key)"
