#!/bin/sh
# The exactly-once consumer survives SIGKILL: a producer appends N records
# while sqlite-consumer follows the log and is killed with SIGKILL at random
# moments and restarted, again and again; a last run drains the rest.  In
# the end every record must have been applied exactly once.
#
# usage: test-sqlite-consumer.sh BUILD_DIR [RECORDS]
set -eu
B=$(cd "${1:?usage: $0 build-dir [records]}" && pwd)
N=${2:-5000}
T=$(mktemp -d "${TMPDIR:-/tmp}/elog-sqlite-consumer.XXXXXX")
trap 'kill $producer 2>/dev/null || true; rm -rf "$T"' EXIT
L=$T/log
DB=$T/consumer.db

fail() { echo "test-sqlite-consumer: FAIL: $*" >&2; exit 1; }
# A random pause of 0 to $1 ms, as seconds for sleep(1).
pause() { od -An -N2 -tu2 /dev/urandom | awk -v max="$1" '{ printf "%.3f", ($1 % (max + 1)) / 1000 }'; }

# Values 1..N, appended in 50 chunks with pauses, so that the consumer has
# a moving log to follow for a few seconds.
(
	chunk=$((N / 50))
	i=1
	while [ "$i" -le "$N" ]; do
		end=$((i + chunk - 1))
		[ "$end" -gt "$N" ] && end=$N
		seq "$i" "$end" | "$B/elog-append" "$L"
		i=$((end + 1))
		sleep 0.05
	done
) &
producer=$!

kills=0
while kill -0 "$producer" 2>/dev/null || [ "$kills" -lt 30 ]; do
	"$B/examples/sqlite-consumer" -f -b 25 "$L" "$T/consumer.db" &
	c=$!
	# Somewhere between 0 and 150 ms into the run, mid-batch as often as not.
	sleep "$(pause 150)"
	kill -KILL "$c" 2>/dev/null || true
	wait "$c" 2>/dev/null || true
	kills=$((kills + 1))
	[ "$kills" -gt 400 ] && fail "the producer did not finish"
done
wait "$producer"
"$B/examples/sqlite-consumer" "$L" "$DB"

q() { sqlite3 "$DB" "$1"; }
[ "$(q 'SELECT count(*) FROM applied')" = "$N" ] || fail "applied $(q 'SELECT count(*) FROM applied') of $N records"
[ "$(q 'SELECT max(times) FROM applied')" = 1 ] || fail "a record was applied twice"
[ "$(q 'SELECT min(offset), max(offset) FROM applied')" = "0|$((N - 1))" ] || fail "offsets"
[ "$(q 'SELECT count(*) FROM applied WHERE value != offset + 1')" = 0 ] || fail "values"
[ "$(q 'SELECT records, sum FROM total')" = "$N|$((N * (N + 1) / 2))" ] || fail "totals $(q 'SELECT records, sum FROM total')"
[ "$(q 'SELECT offset FROM cursor')" = "$((N - 1))" ] || fail "cursor"
# The advisory copy in consumers.json caught up too.
mirrored() {
	"$B/elog-commit" -l --json "$L" | grep -q "^{\"name\":\"sqlite\",\"offset\":$1,\"lag\":$2," ||
		fail "consumers.json, $3: $("$B/elog-commit" -l --json "$L")"
}
mirrored $((N - 1)) 0 "after the last run"
# A run killed between its database commit and its copy leaves the copy a
# batch behind (as here, by hand); the next run copies the database's
# cursor, even with nothing new to apply.
"$B/elog-commit" "$L" sqlite $((N - 26))
mirrored $((N - 26)) 25 "set back"
"$B/examples/sqlite-consumer" "$L" "$DB"
mirrored $((N - 1)) 0 "after a run with nothing to apply"
echo "test-sqlite-consumer: ok: $N records applied exactly once across $kills SIGKILLs"
