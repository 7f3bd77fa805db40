#!/bin/sh
# edge-gateway.sh: an edge box that buffers sensor readings in a log while
# its uplink is down, keeps the disk under a limit, and replays the readings
# in order, exactly once at the far side, when the uplink comes back.
#
#   edge-gateway.sh record DIR          < readings
#   edge-gateway.sh replay DIR RECEIVER
#
# record: each input line is "TIMESTAMP<TAB>SENSOR:JSON", the time the
#   sensor measured it (epoch ms or RFC 3339) and the reading, for instance
#   "1764385200000<TAB>t1:{"c":21.5}".  elog-append stores the sensor as the
#   record's key and keeps the timestamp (-t, -K :).  The log is created with
#   a retention policy of LIMIT bytes (default 256K) in segments of
#   SEGMENT bytes (default 32K); after each batch, elog-retain applies it, so
#   the log's files stay at most LIMIT bytes after each batch, whatever the
#   length of the outage.  What goes is the oldest readings, whole segments
#   at a time.  (A gateway fed forever would run elog-append once, and
#   elog-retain from cron; here each batch of input is one run of both.)
#   The sensor is a key that filters, not one that names state: every
#   reading must reach the far side, so the log's cleanup policy is delete
#   (--cleanup delete, the default, said here on purpose) and elog-compact
#   refuses it with status 2.  Compacted, the unsent readings of a sensor
#   would shrink to its last one.
#
# replay: the uplink.  The consumer "uplink" reads the log from just after
#   its committed offset, sends each reading, and commits what was sent:
#
#     elog-cat -g uplink -F ... DIR | send | elog-commit DIR uplink
#
#   send delivers BATCH readings at a time to RECEIVER, here a SQLite
#   database standing for the far side's API, and only once the receiver
#   has them prints their offsets for elog-commit.  Each reading carries
#   the idempotency key "<log id>:<offset>"; the receiver's table has it as a
#   UNIQUE column and inserts with INSERT OR IGNORE, so a reading sent again
#   after a crash (sent, but not yet committed) is dropped there.  The table
#   keeps the order of first arrival, which is the log's order.  A replay
#   killed at any moment is simply started again.  LATENCY (seconds, default
#   0) makes each batch take that long to reach the receiver, as over a slow
#   link.
set -eu
LIMIT=${LIMIT:-256K}
SEGMENT=${SEGMENT:-32K}
BATCH=${BATCH:-100}
LATENCY=${LATENCY:-0}

usage() {
	echo "usage: edge-gateway.sh record dir < readings" >&2
	echo "       edge-gateway.sh replay dir receiver.db" >&2
	exit 2
}

record() {
	# The creation settings are kept with the log; a later run must give
	# the same ones, or none.
	elog-append -t -K : --segment-bytes "$SEGMENT" --retain-bytes "$LIMIT" \
		--cleanup delete "$1"
	elog-retain "$1"
}

# The fake far side: a table whose idempotency key is unique.
receiver_init() {
	sqlite3 -cmd ".timeout 5000" "$1" "PRAGMA journal_mode = WAL;
		CREATE TABLE IF NOT EXISTS readings (
			seq INTEGER PRIMARY KEY AUTOINCREMENT,
			idem TEXT NOT NULL UNIQUE,
			sensor TEXT NOT NULL,
			ts INTEGER NOT NULL,
			value TEXT NOT NULL);
		CREATE TABLE IF NOT EXISTS sends (n INTEGER NOT NULL);" > /dev/null
}

# Lines "OFFSET<TAB>TS<TAB>SENSOR<TAB>JSON" in, offsets out once delivered.
# awk's close() of the sqlite3 pipe waits for sqlite3 to exit, that is for
# the batch's transaction to commit, before the offsets are printed.
send() {
	awk -F '\t' -v db="$1" -v id="$2" -v batch="$BATCH" -v latency="$LATENCY" '
	function flush(   i, cmd) {
		if (n == 0) return
		cmd = (latency > 0 ? "sleep " latency "; " : "") "sqlite3 -bail -cmd \".timeout 5000\" " db
		print "BEGIN;" | cmd
		for (i = 1; i <= n; i++) print sql[i] | cmd
		print "INSERT INTO sends VALUES (" n ");" | cmd
		print "COMMIT;" | cmd
		if (close(cmd) != 0) { print "send: the receiver failed" > "/dev/stderr"; exit 1 }
		for (i = 1; i <= n; i++) print off[i]
		fflush()
		n = 0
	}
	function q(s) { gsub(/\047/, "\047\047", s); return "\047" s "\047" }
	{
		n++
		off[n] = $1
		sql[n] = sprintf("INSERT OR IGNORE INTO readings (idem, sensor, ts, value) VALUES (%s, %s, %s, %s);",
			q(id ":" $1), q($3), $2, q($4))
		if (n == batch) flush()
	}
	END { flush() }'
}

replay() {
	dir=$1 db=$2
	receiver_init "$db"
	id=$(elog-commit --log-id "$dir")
	# Made once, before the first record: commits go to it from then on.
	elog-commit --create "$dir" uplink
	elog-cat -g uplink -F '%o\t%T\t%k\t%s\n' "$dir" | send "$db" "$id" |
		elog-commit --every 100ms "$dir" uplink
}

[ $# -ge 2 ] || usage
case $1 in
record) [ $# -eq 2 ] || usage; record "$2" ;;
replay) [ $# -eq 3 ] || usage; replay "$2" "$3" ;;
*) usage ;;
esac
