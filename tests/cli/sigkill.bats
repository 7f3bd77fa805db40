#!/usr/bin/env bats
# sigkill.bats: elog-append killed with SIGKILL at random moments, again and
# again, never loses an offset it printed with -p.  A printed offset is an
# acknowledgement: afterwards it must be readable with exactly the bytes
# that were sent for it, and no later run may hand it out again.

load helpers

# Lines for run $1: distinct across runs, with spaces and punctuation so
# that a value is compared byte for byte, not word by word.  They come in
# bursts with pauses between, so that the writer makes many batches (and
# the kill lands before, during and after their syncs) while the log stays
# small enough to check in a second.  Finite, so a generator whose reader
# died cannot run on even if SIGPIPE were ignored.
generate() {
	awk -v run="$1" 'BEGIN {
		for (i = 0; i < 100000; i++) {
			printf "run%d line%d {\"x\": %d} tail\n", run, i, i * 7
			if (i % 200 == 199) {
				fflush()
				system("sleep 0.002")
			}
		}
	}'
}

# One run: append until killed after $2 milliseconds.  The offsets it
# printed go to $T/out.$1.
run_and_kill() {
	local run=$1 ms=$2 pid
	# A kill before the shell made the redirect leaves no file: nothing
	# was printed, which is an empty file.
	: >"$T/out.$run"
	generate "$run" | "$ELOG_BIN/elog-append" -p "$LOG" >"$T/out.$run" 2>"$T/err.$run" 3>&- &
	pid=$!
	sleep "$(printf '0.%03d' "$ms")"
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	# The output may end inside a line when stdio was flushing a full
	# buffer at the kill; a line without its newline was never printed.
	if [ -s "$T/out.$run" ] && [ -n "$(tail -c 1 "$T/out.$run")" ]; then
		sed -i '$d' "$T/out.$run"
	fi
}

@test "SIGKILL at random moments never loses a printed offset" {
	local runs=40 run
	for run in $(seq 1 $runs); do
		run_and_kill "$run" $((RANDOM % 200 + 5))
	done

	# A last, clean run: the log opens after all that, and goes on.
	printf 'final line\n' | "$ELOG_BIN/elog-append" -p "$LOG" >"$T/out.final"
	[ "$(wc -l <"$T/out.final")" -eq 1 ]

	"$ELOG_BIN/elog-cat" -F '%o %s\n' "$LOG" >"$T/cat"

	# offset -> the line sent for it, from every run's printed offsets: the
	# j-th offset a run printed is that run's j-th input line.
	for run in $(seq 1 $runs); do
		awk -v run="$run" '{ printf "%s run%d line%d {\"x\": %d} tail\n", $0, run, NR - 1, (NR - 1) * 7 }' \
			"$T/out.$run"
	done >"$T/expected"
	printf '%s final line\n' "$(cat "$T/out.final")" >>"$T/expected"

	# Some runs were killed before anything was durable, but not all.
	local acked
	acked=$(wc -l <"$T/expected")
	echo "acknowledged records: $acked of $(wc -l <"$T/cat") in the log"
	[ "$acked" -gt $runs ]

	# Every acknowledged offset is in the log with exactly its bytes.
	awk 'NR == FNR { have[$1] = $0; next }
	     !($1 in have) { print "missing: " $0; bad = 1; next }
	     have[$1] != $0 { print "differs: " $0 " / " have[$1]; bad = 1 }
	     END { exit bad }' "$T/cat" "$T/expected"

	# No offset was acknowledged twice, by one run or by two.
	[ -z "$(cut -d' ' -f1 "$T/expected" | sort -n | uniq -d)" ]

	# Each run's offsets come after everything acknowledged before it.
	local prev=-1 first last
	for run in $(seq 1 $runs) final; do
		[ -s "$T/out.$run" ] || continue
		first=$(head -n 1 "$T/out.$run")
		last=$(tail -n 1 "$T/out.$run")
		[ "$first" -gt "$prev" ]
		prev=$last
	done

	# The log itself is in offset order, each offset once.
	cut -d' ' -f1 "$T/cat" | sort -n -c
	[ -z "$(cut -d' ' -f1 "$T/cat" | uniq -d)" ]
}
