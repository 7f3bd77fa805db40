#!/usr/bin/env bash
# soak.sh: the kill -9 soak.  One log directory on a real disk, and at the
# same time:
#
#  - --writers concurrent writer lanes (4 by default): in each, a writer,
#    elog-append -p -K '|', fed by a generator of distinct lines (each
#    names its run and line number), killed with SIGKILL after a random few
#    to few hundred milliseconds and started again; --kills killed runs in
#    all (a lane's last killed run lives those milliseconds past its first
#    acknowledgement, so that killed runs always acknowledged some).  Lane L
#    of N does runs L, L+N, L+2N, ... up to --kills, so run numbers are
#    unique across lanes; the writers of different lanes interleave their
#    batches in the log (each holds LOCK only while it writes and syncs
#    one batch), and one killed mid-batch leaves bytes past the durable end
#    for the next writer to take the lock to cut;
#  - a follower, elog-cat -f, printing every record it sees to a file, and
#    itself stopped (SIGTERM or SIGKILL) and resumed now and then;
#  - a consumer that reads batches as elog-cat -g soak and commits them
#    with elog-commit, sometimes replaying a little;
#  - a maintenance loop running elog-compact --grace 0s (some runs crashed
#    on purpose, some killed), elog-retain --max-bytes, and now and then
#    elog-verify --repair on the healthy log beside the writers (it takes
#    LOCK, empties its state, and every writer recovers under a new epoch);
#  - a stop lane: SIGSTOP to a random running writer for 5 to 500 ms, then
#    SIGCONT, so that a stop lands while a writer holds LOCK, between its
#    write and its sync, or while it publishes;
#  - once, LOCK's content copied and written back in place a moment later
#    without the lock (an operator's mistake elog(5) warns about: the state
#    written back is an old one; the file stays the same inode, so writers
#    go on, and must lose nothing);
#  - a watermark sampler reading the watermark every millisecond
#    (soak_check.py --sample-watermark): its durable end must never go
#    back, and everything below it must be in the final log.
#
# Run 0, clean, creates the log before anything else starts; when every
# lane is done, a last clean writer run (--kills + 1) alone, elog-verify,
# and soak_check.py, which holds every acknowledged or followed record
# against the bytes sent for it: none lost, none duplicated, no offset
# acknowledged twice or holding another line.
#
# usage: soak.sh [--kills N] [--writers N] [--seed S] [--compress] [--keep]
# --writers 1 runs one writer at a time, as before 0.2 (soak_check.py then
# also holds each run's offsets to be consecutive and above the run
# before's).
# --compress creates the log with --compress zstd (a dictionary is trained
# after the first 1000 values, so kills also land around that); --keep
# keeps the temporary directory even on success.
# The programs come from $ELOG_BIN (default: the repository's build
# directory, as `make builddir` names it).
# Exit 0 when everything holds, 1 on any violation (the temporary directory
# is then kept and named), 77 when a tool it needs is missing.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
kills=150
writers=4
seed=
keep=0
# Settings of the new log: small segments make many closed ones to compact
# and retain; compact, or elog-compact would refuse the log.
create="--segment-bytes 16K --cleanup compact"

usage() {
	echo "usage: soak.sh [--kills N] [--writers N] [--seed S] [--compress] [--keep]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--kills) [ $# -ge 2 ] || usage; kills=$2; shift 2 ;;
	--kills=*) kills=${1#*=}; shift ;;
	--writers) [ $# -ge 2 ] || usage; writers=$2; shift 2 ;;
	--writers=*) writers=${1#*=}; shift ;;
	--seed) [ $# -ge 2 ] || usage; seed=$2; shift 2 ;;
	--seed=*) seed=${1#*=}; shift ;;
	--keep) keep=1; shift ;;
	--compress) create="$create --compress zstd"; shift ;;
	-h|--help) usage ;;
	*) usage ;;
	esac
done
case $kills in ''|*[!0-9]*) usage ;; esac
case $writers in ''|*[!0-9]*|0|0*) usage ;; esac
[ -n "$seed" ] || seed=$(( ($$ * 7919 + $(date +%s)) % 1000000 ))
case $seed in ''|*[!0-9]*) usage ;; esac

BIN=${ELOG_BIN:-$repo/$(make -s --no-print-directory -C "$repo" builddir)}
for p in elog-append elog-cat elog-commit elog-compact elog-retain elog-verify \
	tests/elog-compact-faulty; do
	if [ ! -x "$BIN/$p" ]; then
		echo "soak: skipped: $BIN/$p is missing (set ELOG_BIN)" >&2
		exit 77
	fi
done
for t in python3 awk sleep mktemp timeout seq; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "soak: skipped: $t is missing" >&2
		exit 77
	fi
done

# The interpreter itself, not a version manager's shim (a shell script
# that takes seconds to start on a busy machine: the watermark sampler
# would miss the soak, and the follower's restarts would lag).
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -x "$PY" ] || PY=python3

T=$(mktemp -d "${TMPDIR:-/tmp}/elog-soak.XXXXXX") || exit 1
LOG=$T/log
mkdir -p "$T/w" "$T/f" "$T/c" "$T/m" "$T/s"
echo "soak: seed $seed, $kills kills, $writers writer lanes, in $T" >&2

RETAIN=384K		# what elog-retain keeps
KEYS=48			# keyed records use this many keys, so they repeat
FMT='%o\t%K\t%S\t%k%s\n'	# offset, key and value sizes, then the bytes
# A program that has not finished after this long is taken for hung
# (status 124 from timeout(1)); nothing else in the soak is timed.
HANG=120

BG=			# the background loops, for the trap
LANES=			# the writer lanes, for the trap
cleanup_bg() {
	local p f
	touch "$T/stop" "$T/stop-follow" 2>/dev/null
	for p in $LANES $BG; do kill -KILL "$p" 2>/dev/null; done
	# Each lane names the writer it runs in w/laneL.pid.
	for f in "$T"/w/lane*.pid "$T/f/pid"; do
		if [ -s "$f" ]; then kill -CONT "$(cat "$f")" 2>/dev/null; kill -KILL "$(cat "$f")" 2>/dev/null; fi
	done
}
trap 'cleanup_bg; echo "soak: interrupted, seed $seed, kept $T" >&2; exit 1' INT TERM HUP

sleep_ms() {
	sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"
}

# The lines of writer run $1, at most $2 of them, in bursts with short
# pauses between them when $3 is 1 (after the first $4 lines), so that the writer makes many batches
# and a kill lands before, during and after their syncs.  Line 0 has no
# key; after it about half the lines are unkeyed JSON objects, the others
# are keyed (key|value) with keys that repeat, a few of them tombstones
# (key| with an empty value).  Values carry some non-ASCII text and JSON
# escapes, cut at a random byte so that some are not UTF-8 or not JSON.
# Each line is written to $T/w/$1.sent and flushed before it goes to the
# writer, so the file holds at least every line the writer may have read.
generate() {
	awk -v run="$1" -v max="$2" -v pause="$3" -v fast="${4:-0}" -v seed="$seed" -v keys="$KEYS" \
	    -v sent="$T/w/$1.sent" 'BEGIN {
		srand(seed * 1009 + run)
		pad = "caf\303\251 na\303\257ve \\\"q\\\" tab\\t \\u00e9 <>&;:,.!?~#$%^*()[]{}-+=_ 0123456789 abcdefghijklmnop"
		n = 0
		while (n < max) {
			burst = 1 + int(rand() * 40)
			for (j = 0; j < burst && n < max; j++) {
				x = rand()
				if (n == 0 || x < 0.5)
					line = sprintf("{\"r\":%d,\"i\":%d,\"pad\":\"%s\"}", run, n,
					    substr(pad, 1, int(rand() * 90)))
				else if (x < 0.97)
					line = sprintf("user-%d|{\"r\":%d,\"i\":%d,\"n\":%d,\"pad\":\"%s\"}",
					    int(rand() * keys), run, n, int(rand() * 1000000),
					    substr(pad, 1, int(rand() * 40)))
				else
					line = sprintf("user-%d|", int(rand() * keys))
				print line > sent
				fflush(sent)
				print line
				n++
			}
			fflush()
			if (pause && n >= fast)
				system("sleep 0.00" (1 + int(rand() * 4)))
		}
	}'
}

# Writer run $1: start it, kill it with SIGKILL after $2 ms ("-" for a
# clean run of $3 lines that ends at EOF).  Offsets go to $T/w/$1.ack.
# $4, the lane, names the file that holds the pid of a killed run's writer.
# With $5 set, the $2 ms count from the run's first acknowledgement (up to
# $HANG s for it): a slow machine, or the sanitizers, must not leave a soak
# whose killed runs all died before they acknowledged anything.
writer_run() {
	local run=$1 ms=$2 max=${3:-1000000} lane=${4:-0} after_ack=${5:-} pid rc opts='' fast i
	case $((RANDOM % 6)) in
	0) opts="--linger 3ms" ;;
	1) opts="--batch 7" ;;
	2) opts="--batch-bytes 2K" ;;
	3) [ $((RANDOM % 3)) -eq 0 ] && opts="--sync" ;;
	esac
	if [ "$ms" = - ]; then
		generate "$run" "$max" 0 |
			timeout $HANG "$BIN/elog-append" -p -K '|' $create $opts "$LOG" \
			>"$T/w/$run.ack" 2>"$T/w/$run.err"
		rc=$?
	else
		# Mostly a slow producer; now and then a fast one, whose lines
		# make big batches (and, with --compress, train a dictionary).
		fast=0
		[ $((RANDOM % 8)) -eq 0 ] && fast=1500
		generate "$run" "$max" 1 "$fast" |
			"$BIN/elog-append" -p -K '|' $create $opts "$LOG" \
			>"$T/w/$run.ack" 2>"$T/w/$run.err" &
		pid=$!
		echo "$pid" >"$T/w/lane$lane.pid"
		if [ -n "$after_ack" ]; then
			i=0
			while [ ! -s "$T/w/$run.ack" ] && [ $i -lt $((HANG * 20)) ] &&
				kill -0 "$pid" 2>/dev/null; do
				sleep 0.05
				i=$((i + 1))
			done
		fi
		sleep_ms "$ms"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rc=$?
		: >"$T/w/lane$lane.pid"
	fi
	# One short write with O_APPEND: lanes add their lines whole.
	echo "$run $rc $ms $lane $opts" >>"$T/w/runs"
}

# Writer lane $1 of $writers: runs $1, $1 + $writers, ... up to --kills,
# one after the other, each killed after 3 to 100 ms (while it opens the
# log, recovers, writes its first batches).  With more than one lane, half
# the runs live 100 to 400 ms instead: the lanes share one LOCK and one
# fsync after another, so a writer makes fewer batches a second than alone,
# and these make most of the acknowledged records and the interleaving.
lane_loop() {
	local lane=$1 run=$1 ms last
	RANDOM=$((seed * 17 + lane))
	while [ "$run" -le "$kills" ]; do
		if [ "$writers" -gt 1 ] && [ $((RANDOM % 2)) -eq 0 ]; then
			ms=$((100 + RANDOM % 301))
		else
			ms=$((3 + RANDOM % 98))
		fi
		# A lane's last killed run is killed after it acknowledged.
		last=
		[ $((run + writers)) -gt "$kills" ] && last=1
		writer_run "$run" "$ms" "" "$lane" "$last"
		run=$((run + writers))
	done
	# The generators still winding down after their writers were killed
	# (each dies of SIGPIPE at its next flush).
	wait 2>/dev/null
}

# Wait, up to $HANG s, until follower $1 catches SIGTERM (elog-cat -f sets
# that up first thing): before, SIGTERM kills it as it would any program
# still starting, which under the sanitizers or on a loaded machine takes
# longer than a short life.  Linux's /proc tells; without it, no wait.
follower_ready() {
	local deadline=$((SECONDS + HANG)) comm cgt
	while [ "$SECONDS" -lt "$deadline" ]; do
		comm=$(cat "/proc/$1/comm" 2>/dev/null) || return 0
		cgt=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
		[ -n "$cgt" ] || return 0
		# Bit 14 is signal 15, SIGTERM; comm tells elog-cat from the
		# shell that forked it and has not yet called exec.
		[ "$comm" = elog-cat ] && [ $(((16#$cgt >> 14) & 1)) -eq 1 ] && return 0
		sleep 0.05
	done
}

# The follower: elog-cat -f from where the last one stopped, stopped with
# SIGTERM or SIGKILL after a random while and started again, until
# $T/stop-follow appears.  Then the one running is let reach the offset in
# $T/f/target, the end of the log, and stopped with SIGTERM; one that does
# not get there within $HANG seconds is reported as stuck.  f/runs has a
# line per run: its number, the signal that stopped it, its exit status
# and the offset it started at.
follow_loop() {
	RANDOM=$((seed + 3))
	local n=0 next=0 from pid life sig rc last target deadline
	while :; do
		n=$((n + 1))
		from=$next
		"$BIN/elog-cat" -f -o "$next" -F "$FMT" "$LOG" >"$T/f/$n.out" 2>"$T/f/$n.err" &
		pid=$!
		echo "$pid" >"$T/f/pid"
		life=$((3 + RANDOM % 25))
		while [ "$life" -gt 0 ] && [ ! -e "$T/stop-follow" ]; do
			sleep 0.05
			life=$((life - 1))
		done
		[ -e "$T/stop-follow" ] && break
		if [ $((RANDOM % 2)) -eq 0 ]; then sig=TERM; else sig=KILL; fi
		[ "$sig" = TERM ] && follower_ready "$pid"
		kill -$sig "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rc=$?
		echo "$n $sig $rc $from" >>"$T/f/runs"
		# A line cut by SIGKILL was never printed; start again after the
		# last whole one.
		last=$("$PY" "$here/soak_check.py" --last-offset "$T/f/$n.out")
		[ -n "$last" ] && next=$((last + 1))
		# Now and then stay away long enough for retention to pass by.
		[ $((RANDOM % 3)) -eq 0 ] && sleep_ms $((500 + RANDOM % 2000))
	done
	target=$(cat "$T/f/target")
	[ -n "$target" ] || target=-1
	# The run stopped last may have printed the whole log already, before
	# stop-follow appeared (the last writer, done, takes a moment to exit:
	# longer under the sanitizers): this one then started past the end
	# and has nothing to print.  A run that started at or below the end
	# must get there.  The deadline is on the clock: a look costs a
	# python start, seconds on a loaded machine.
	last=
	if [ "$from" -le "$target" ]; then
		deadline=$((SECONDS + HANG))
		while :; do
			last=$("$PY" "$here/soak_check.py" --last-offset "$T/f/$n.out")
			[ -n "$last" ] && [ "$last" -ge "$target" ] && break
			[ "$SECONDS" -lt "$deadline" ] || break
			sleep 0.1
		done
		if [ -z "$last" ] || [ "$last" -lt "$target" ]; then
			echo "follower $n, started at $from, stuck at ${last:-nothing}, the log ends at $target" >"$T/f/stuck"
		fi
	fi
	follower_ready "$pid"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	echo "$n TERM $? $from" >>"$T/f/runs"
}

# The consumer: a batch of a random size as consumer "soak", then a commit
# of its last offset, by argument or from the JSON lines on stdin; now and
# then a commit a little lower, a replay.
consume_once() {
	local n=$1 count=$2 rc last crc=- mode=- commit=-
	timeout $HANG "$BIN/elog-cat" -g soak ${count:+-c "$count"} "$LOG" >"$T/c/$n.json" 2>"$T/c/$n.err"
	rc=$?
	last=$(tail -n 1 "$T/c/$n.json" | sed -n 's/^{"offset":\([0-9]*\),.*/\1/p')
	if [ -n "$last" ]; then
		case $((RANDOM % 10)) in
		0)	mode=replay
			commit=$((last - RANDOM % 20))
			[ "$commit" -ge 0 ] || commit=0
			timeout $HANG "$BIN/elog-commit" --create "$LOG" soak "$commit" 2>"$T/c/$n.cerr" ;;
		1|2|3|4) mode=stdin
			commit=$last
			# A commit from stdin needs the consumer made first.
			timeout $HANG "$BIN/elog-commit" --create "$LOG" soak 2>"$T/c/$n.cerr" &&
			timeout $HANG "$BIN/elog-commit" -e 0s "$LOG" soak <"$T/c/$n.json" 2>"$T/c/$n.cerr" ;;
		*)	mode=arg
			commit=$last
			timeout $HANG "$BIN/elog-commit" --create "$LOG" soak "$commit" 2>"$T/c/$n.cerr" ;;
		esac
		crc=$?
	fi
	echo "$n $rc ${last:--} $mode $commit $crc" >>"$T/c/runs"
}

consume_loop() {
	RANDOM=$((seed + 2))
	local n=0
	while [ ! -e "$T/stop" ]; do
		sleep_ms $((20 + RANDOM % 150))
		# Now and then fall far behind, for retention to overtake.
		[ $((RANDOM % 12)) -eq 0 ] && sleep_ms $((500 + RANDOM % 1500))
		n=$((n + 1))
		consume_once "$n" $((1 + RANDOM % 400))
	done
	echo "$n" >"$T/c/count"
}

# Maintenance, as cron would run it but often: elog-compact, sometimes
# made to crash at its n-th change (ELOG_MAINT_CRASH_AT, which only the
# test build elog-compact-faulty obeys: tests/crash/maint_fault.h) or
# killed with SIGKILL after a few ms, then elog-retain.
maint_loop() {
	RANDOM=$((seed + 1))
	local n=0 rc how pid
	while [ ! -e "$T/stop" ]; do
		sleep_ms $((10 + RANDOM % 120))
		n=$((n + 1))
		case $((RANDOM % 5)) in
		0)	how=crash-at
			ELOG_MAINT_CRASH_AT=$((1 + RANDOM % 8)) timeout $HANG "$BIN/tests/elog-compact-faulty" --wait --grace 0s -v "$LOG" \
				>"$T/m/$n.compact" 2>"$T/m/$n.compact.err"
			rc=$? ;;
		1)	how=killed
			"$BIN/elog-compact" --wait --grace 0s -v "$LOG" \
				>"$T/m/$n.compact" 2>"$T/m/$n.compact.err" &
			pid=$!
			sleep_ms $((1 + RANDOM % 15))
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			rc=$? ;;
		*)	how=plain
			timeout $HANG "$BIN/elog-compact" --wait --grace 0s -v "$LOG" \
				>"$T/m/$n.compact" 2>"$T/m/$n.compact.err"
			rc=$? ;;
		esac
		echo "$n compact $how $rc" >>"$T/m/runs"
		timeout $HANG "$BIN/elog-retain" --wait --max-bytes $RETAIN -v "$LOG" \
			>"$T/m/$n.retain" 2>"$T/m/$n.retain.err"
		echo "$n retain plain $?" >>"$T/m/runs"
	done
}

# The stop lane: a random writer, stopped for 5 to 500 ms, then continued.
# A writer killed while stopped dies all the same (SIGKILL needs no
# SIGCONT).
stop_loop() {
	RANDOM=$((seed + 4))
	local n=0 lane pid ms
	while [ ! -e "$T/stop" ]; do
		sleep_ms $((10 + RANDOM % 50))
		lane=$((1 + RANDOM % writers))
		pid=$(cat "$T/w/lane$lane.pid" 2>/dev/null)
		[ -n "$pid" ] || continue
		ms=$((5 + RANDOM % 496))
		kill -STOP "$pid" 2>/dev/null || continue
		n=$((n + 1))
		sleep_ms "$ms"
		kill -CONT "$pid" 2>/dev/null
		echo "$n $pid $ms" >>"$T/s/stops"
	done
}

# elog-verify --repair now and then on the healthy log, beside the
# writers; and once, a while into the soak, LOCK's content copied and
# written back in place without the lock.
repair_loop() {
	RANDOM=$((seed + 5))
	local n=0 rc rewrite=$((1 + RANDOM % 2))
	while [ ! -e "$T/stop" ]; do
		sleep_ms $((50 + RANDOM % 350))
		n=$((n + 1))
		timeout $HANG "$BIN/elog-verify" --repair "$LOG" >"$T/s/$n.repair" 2>&1
		rc=$?
		echo "$n repair $rc" >>"$T/s/runs"
		if [ "$n" -eq "$rewrite" ]; then
			cat "$LOG/LOCK" >"$T/s/LOCK.copy"
			sleep_ms $((100 + RANDOM % 500))
			cat "$T/s/LOCK.copy" >"$LOG/LOCK"
			echo "$n lock-rewrite 0" >>"$T/s/runs"
		fi
	done
}

start=$SECONDS
RANDOM=$seed

# Run 0, a clean one, creates the log; the background loops start once it
# exists.  Runs 1 to --kills are killed, in the lanes at once; run
# --kills + 1 is the last, clean, alone.
writer_run 0 - 50

follow_loop 3>&- &
BG="$BG $!"
"$PY" "$here/soak_check.py" --sample-watermark "$LOG/watermark" "$T/s/wm" "$T/stop-follow" 3>&- &
BG="$BG $!"
stop_loop 3>&- &
BG="$BG $!"
repair_loop 3>&- &
BG="$BG $!"
consume_loop 3>&- &
BG="$BG $!"
maint_loop 3>&- &
BG="$BG $!"

lane=0
while [ "$lane" -lt "$writers" ]; do
	lane=$((lane + 1))
	lane_loop "$lane" 3>&- &
	LANES="$LANES $!"
done
for p in $LANES; do wait "$p"; done
LANES=

# Stop the consumer and the maintenance; a last clean writer run.
touch "$T/stop"
set -- $BG
fpid=$1
spid=$2
shift 2
for p in "$@"; do wait "$p"; done
final=$((kills + 1))
writer_run $final - 200

# Let the follower reach the last acknowledged offset, then stop it.
tail -n 1 "$T/w/$final.ack" >"$T/f/target"
touch "$T/stop-follow"
wait "$fpid"
wait "$spid"

# The consumer reads the rest and commits it.
n=$(( $(cat "$T/c/count" 2>/dev/null || echo 0) + 1 ))
consume_once "$n" ""

# What the log holds now.
timeout $HANG "$BIN/elog-verify" "$LOG" >"$T/verify.out" 2>&1
echo $? >"$T/verify.rc"
timeout $HANG "$BIN/elog-verify" -l --json "$LOG" >"$T/segments.json" 2>"$T/segments.err"
timeout $HANG "$BIN/elog-cat" -F "$FMT" "$LOG" >"$T/final.dump" 2>"$T/final.err"
echo $? >"$T/final.rc"
timeout $HANG "$BIN/elog-commit" -l --json "$LOG" >"$T/consumers.json" 2>"$T/consumers.err"
# A commit at the durable end (one past the last record) must be refused,
# one of the last record taken.
end=$(tail -n 1 "$T/w/$final.ack")
if [ -n "$end" ]; then
	timeout $HANG "$BIN/elog-commit" --create "$LOG" soak-probe $((end + 1)) >/dev/null 2>"$T/probe.err"
	echo "end $((end + 1)) $?" >"$T/probe"
	timeout $HANG "$BIN/elog-commit" --create "$LOG" soak-probe "$end" >/dev/null 2>>"$T/probe.err"
	echo "last $end $?" >>"$T/probe"
	timeout $HANG "$BIN/elog-commit" -d soak-probe "$LOG" >/dev/null 2>>"$T/probe.err"
fi

# Any generator still winding down after its writer was killed.
wait 2>/dev/null
elapsed=$((SECONDS - start))

"$PY" "$here/soak_check.py" --dir "$T" --kills "$kills" --runs "$final" --writers "$writers"
status=$?
if [ "$status" -eq 0 ]; then
	echo "soak: seed $seed, ${elapsed}s" >&2
	[ "$keep" -eq 1 ] || rm -rf "$T"
	exit 0
fi
echo "soak: FAILED with seed $seed (rerun: $0 --kills $kills --writers $writers --seed $seed); kept $T" >&2
exit 1
