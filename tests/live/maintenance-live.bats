#!/usr/bin/env bats
# Everything at once: a writer appending keyed records, a follower
# (elog-cat -f), and elog-compact and elog-retain in a loop, until the
# writer has written 6000 records and maintenance has run at least 6 times
# beside it, however slow the machine (a loaded one takes longer; nothing
# here depends on speed).  The follower must see strictly increasing offsets, each record
# holding what was written at its offset, with holes only where compaction
# (a newer record of the same key exists) or retention (a range it was
# told of) explains them; and at the end the newest record of every key
# must be readable.
#
# Part of make check (make check-cli).

bats_require_minimum_version 1.5.0

setup() {
	B=${ELOG_BIN:?set ELOG_BIN to the build directory}
	T=$(mktemp -d "${BATS_TMPDIR:-/tmp}/elog-live.XXXXXX")
	L=$T/log
	PIDS=
}

teardown() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$T"
}

@test "live: writer, follower, compaction and retention together" {
	KEYS=20
	# Record i has key k<i mod KEYS> and value i, so its offset is i.
	printf 'k0=0\n' | "$B/elog-append" -K = --segment-bytes 4K --cleanup compact "$L"
	"$B/elog-cat" -f -F '%o %k %s\n' "$L" > "$T/follow" 2> "$T/follow.err" &
	PIDS="$PIDS $!"
	: > "$T/runs"
	{
		i=1
		while [ "$i" -le 6000 ] || [ "$(wc -l < "$T/runs")" -lt 6 ]; do
			for _ in $(seq 50); do echo "k$((i % KEYS))=$i"; i=$((i + 1)); done
			sleep 0.02
		done
	} | "$B/elog-append" -K = --linger 10ms "$L" &
	WRITER=$!
	PIDS="$PIDS $WRITER"
	while kill -0 "$WRITER" 2>/dev/null; do
		"$B/elog-compact" --wait --grace 0s "$L"
		"$B/elog-retain" --wait --max-bytes 48K "$L"
		echo run >> "$T/runs"
	done
	wait "$WRITER"
	[ "$(wc -l < "$T/runs")" -ge 6 ]
	last=$("$B/elog-cat" -n 1 -F '%o' "$L")
	[ "$last" -ge 6000 ]
	# Let the follower catch up (a minute at most), then stop it.
	for _ in $(seq 600); do
		[ "$(tail -n 1 "$T/follow" | cut -d' ' -f1)" = "$last" ] && break
		sleep 0.1
	done
	echo "last $last, follower at: $(tail -n 1 "$T/follow"); stderr: $(head -c 300 "$T/follow.err")"
	[ "$(tail -n 1 "$T/follow" | cut -d' ' -f1)" = "$last" ]
	# Retention ranges the follower was told of.
	sed -n 's/.*offsets \([0-9]*\)-\([0-9]*\) were removed by retention$/\1 \2/p' \
		"$T/follow.err" > "$T/gaps"
	[ "$(grep -vc 'were removed by retention' "$T/follow.err")" -eq 0 ]
	awk -v keys=$KEYS -v last="$last" '
		NR == FNR { glo[++ng] = $1; ghi[ng] = $2; next }
		{
			if ($1 != $3 || $2 != "k" ($1 % keys)) { print "bad record: " $0; exit 1 }
			if (seen && $1 <= prev) { print "not increasing: " prev " then " $1; exit 1 }
			for (j = seen ? prev + 1 : 0; j < $1; j++) {
				if (j + keys <= last) continue		# superseded
				ok = 0
				for (g = 1; g <= ng; g++) if (j >= glo[g] && j <= ghi[g]) ok = 1
				if (!ok) { print "unexplained hole at " j; exit 1 }
			}
			prev = $1; seen = 1
		}' "$T/gaps" "$T/follow"
	# The newest record of every key is readable, and each key once in
	# the closed segments at most... the log verifies.
	"$B/elog-cat" -F '%o %k %s\n' "$L" > "$T/final"
	for k in $(seq 0 $((KEYS - 1))); do
		want=$(( last - ((last - k) % KEYS) ))
		grep -q "^$want k$k $want\$" "$T/final"
	done
	run "$B/elog-verify" "$L"
	[ "$status" -eq 0 ]
}
