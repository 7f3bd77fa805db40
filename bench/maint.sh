#!/bin/sh
# bench/maint.sh: maintenance next to SQLite, on this machine.
#   1. Dropping the oldest half of 1M records of 100 bytes: elog-retain
#      (1 MiB segments) versus SQLite (WAL; DELETE of the oldest half, then
#      VACUUM).
#   2. Compaction throughput: 1M keyed records over 10k keys, MB/s of input.
# Medians of 3 runs.  Usage: bench/maint.sh [build-dir]
set -eu
B=${1:-build}
N=${N:-1000000}
T=$(mktemp -d "${TMPDIR:-/tmp}/elog-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

now() { date +%s.%N; }
median() { sort -n | sed -n 2p; }
gen() {	# N lines: key=value with a 100-byte record payload
	awk -v n="$N" -v keys="$1" 'BEGIN { pad = sprintf("%80s", ""); gsub(/ /, "x", pad)
		for (i = 0; i < n; i++) printf "k%06d=%s%010d\n", i % keys, pad, i }'
}

gen 1000000000 > "$T/in"
for r in 1 2 3; do
	rm -rf "$T/log" "$T/db"*
	"$B/elog-append" -K = --segment-bytes 1M "$T/log" < "$T/in"
	total=$(cat "$T/log"/*.log | wc -c)
	t0=$(now)
	"$B/elog-retain" --max-bytes $((total / 2)) "$T/log"
	t1=$(now)
	echo "$t0 $t1" | awk '{ printf "%.4f\n", $2 - $1 }' >> "$T/retain"

	sqlite3 "$T/db" "PRAGMA journal_mode=WAL;" \
		"CREATE TABLE log (offset INTEGER PRIMARY KEY, ts INTEGER, schema INTEGER, key BLOB, value BLOB);" >/dev/null
	awk -F= '{ printf "%d,%d,0,%s,%s\n", NR - 1, 1764385200000 + NR, $1, $2 }' "$T/in" > "$T/csv"
	sqlite3 "$T/db" ".mode csv" ".import $T/csv log"
	t0=$(now)
	sqlite3 "$T/db" "PRAGMA journal_mode=WAL;" "DELETE FROM log WHERE offset < $((N / 2));" "VACUUM;" >/dev/null
	t1=$(now)
	echo "$t0 $t1" | awk '{ printf "%.4f\n", $2 - $1 }' >> "$T/sqlite"
done
er=$(median < "$T/retain")
sq=$(median < "$T/sqlite")
echo "drop the oldest half of $N x 100-byte records: elog-retain ${er}s, SQLite DELETE+VACUUM ${sq}s" \
	"($(echo "$sq $er" | awk '{ printf "%.0f", $1 / $2 }')x)"

gen 10000 > "$T/in"
for r in 1 2 3; do
	rm -rf "$T/log"
	"$B/elog-append" -K = --segment-bytes 1M "$T/log" < "$T/in"
	bytes=$(cat "$T/log"/*.log | wc -c)
	t0=$(now)
	"$B/elog-compact" "$T/log"
	t1=$(now)
	echo "$t0 $t1 $bytes" | awk '{ printf "%.1f\n", $3 / 1048576 / ($2 - $1) }' >> "$T/compact"
done
echo "compaction of $N records over 10000 keys: $(median < "$T/compact") MB/s of input"
