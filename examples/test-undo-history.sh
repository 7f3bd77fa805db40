#!/bin/sh
# undo-history keeps every acknowledged edit across SIGKILL, and undo gives
# back the earlier states.
#
# 1. A fixed session, one process per command: after each undo the document
#    must be exactly the one printed that many edits before.
# 2. RUNS runs over one script of COMMANDS random edits and undos, fed a few
#    at a time; each run is SIGKILLed 0 to 15 ms after it starts (in its
#    rebuild, between a sync and its "ok", anywhere), then restarted where
#    the log ends; a last run ends the script.  After every kill: every "ok" printed is in the log (at most
#    one more edit is there, synced but not yet acknowledged), and the
#    document rebuilt from the log is the one a model of the same commands
#    (written in awk, below) gives.
#
# usage: test-undo-history.sh BUILD_DIR [COMMANDS] [RUNS]
set -eu
B=$(cd "${1:?usage: $0 build-dir [commands] [runs]}" && pwd)
N=${2:-1000}
RUNS=${3:-60}
E=$B/examples/undo-history
T=$(mktemp -d "${TMPDIR:-/tmp}/elog-undo-history.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() { echo "test-undo-history: FAIL: $*" >&2; exit 1; }
pause() { od -An -N2 -tu2 /dev/urandom | awk -v max="$1" '{ printf "%.3f", ($1 % (max + 1)) / 1000 }'; }
# Commands as a user types them, only faster: a pause of 2 ms every four,
# so that a run is still editing when its kill comes.
feed() {
	i=0
	while IFS= read -r c; do
		printf '%s\n' "$c" || return 0
		i=$((i + 1))
		[ $((i % 4)) -ne 0 ] || sleep 0.002
	done
}
# The document as one line, its lines joined by "|".
show() { "$E" "$1" p | paste -sd'|' -; }

# 1. The fixed session.
D=$T/fixed
for c in 'a alpha' 'a beta' 'a gamma' 'r 2 BETA' 'i 1 first' 'd 4'; do
	"$E" "$D" "$c" > /dev/null
	show "$D" >> "$T/states"
done
# States 1..6: alpha / alpha|beta / alpha|beta|gamma / alpha|BETA|gamma /
# first|alpha|BETA|gamma / first|alpha|BETA
[ "$(sed -n 6p "$T/states")" = 'first|alpha|BETA' ] || fail "session: $(sed -n 6p "$T/states")"
[ "$("$E" "$D" 'u 2')" = "ok 6 undid 2" ] || fail "u 2 was not acknowledged"
[ "$(show "$D")" = "$(sed -n 4p "$T/states")" ] || fail "u 2 gave $(show "$D")"
"$E" "$D" u > /dev/null
[ "$(show "$D")" = alpha'|'beta'|'gamma ] || fail "u gave $(show "$D")"
# An edit after an undo, then its undo: back to the same state.
"$E" "$D" 'a delta' 'u' > /dev/null
[ "$(show "$D")" = alpha'|'beta'|'gamma ] || fail "a + u gave $(show "$D")"
[ "$("$E" "$D" 'u 10')" = "ok 10 undid 3" ] || fail "u 10 did not undo the 3 edits left"
[ "$(show "$D")" = "" ] || fail "u 10 left $(show "$D")"
[ "$("$B/elog-cat" -v "$D" | wc -l)" -eq 11 ] || fail "the log does not hold 11 records"
# A second copy of the editor on the same document is refused while the
# first is open, naming it; the first goes on.
mkfifo "$T/in"
"$E" "$D" < "$T/in" > "$T/first.out" &
first=$!
exec 9> "$T/in"
echo 'a one' >&9
while ! grep -q '^ok' "$T/first.out" 2>/dev/null; do sleep 0.01; done
if "$E" "$D" 'a two' > /dev/null 2> "$T/second.err"; then fail "a second editor was let in"; fi
grep -q "another writer has the log open (pid $first)" "$T/second.err" ||
	fail "the second editor said: $(cat "$T/second.err")"
exec 9>&-
wait "$first"
[ "$(show "$D")" = one ] || fail "with a second editor refused: $(show "$D")"
# A history, never compacted: made with cleanup delete, which elog-compact
# refuses (status 2); a log set to compact is not taken for a document.
grep -qx 'cleanup delete' "$D/settings" || fail "settings: $(grep cleanup "$D/settings")"
st=0
"$B/elog-compact" "$D" 2> "$T/err" || st=$?
[ "$st" -eq 2 ] && grep -q "cleanup is delete" "$T/err" || fail "elog-compact: status $st: $(cat "$T/err")"
cp -r "$D" "$T/compact"
"$B/elog-retain" --set cleanup=compact "$T/compact"
st=0
"$E" "$T/compact" p > /dev/null 2> "$T/err" || st=$?
[ "$st" -ne 0 ] && grep -q "the log's cleanup is compact, not delete" "$T/err" ||
	fail "a compact log was opened: status $st: $(cat "$T/err")"

# 2. The random script: COMMANDS lines in $T/cmds, and in $T/model line i
# the document after command i.  Edits are only ever made to lines that
# exist, so that each command is one record.
awk -v n="$N" -v seed="$$" -v cmds="$T/cmds" -v model="$T/model" '
function show(   s, j) { s = ""; for (j = 1; j <= lines; j++) s = s (j > 1 ? "|" : "") doc[j]; return s }
function ins(at, t,   j) { for (j = lines; j >= at; j--) doc[j + 1] = doc[j]; doc[at] = t; lines++ }
function del(at,   j) { for (j = at; j < lines; j++) doc[j] = doc[j + 1]; delete doc[lines]; lines-- }
function push(op, at, old) { depth++; sop[depth] = op; sat[depth] = at; sold[depth] = old }
BEGIN {
	srand(seed)
	for (i = 1; i <= n; i++) {
		r = rand(); t = "line-" i
		if (lines == 0 && r >= 0.8) r = 0
		if (r < 0.25) {
			print "a " t > cmds; ins(lines + 1, t); push("a", lines, "")
		} else if (r < 0.45) {
			at = 1 + int(rand() * (lines + 1))
			print "i " at " " t > cmds; ins(at, t); push("i", at, "")
		} else if (r < 0.65 && lines > 0) {
			at = 1 + int(rand() * lines)
			print "r " at " " t > cmds; push("r", at, doc[at]); doc[at] = t
		} else if (r < 0.8 && lines > 0) {
			at = 1 + int(rand() * lines)
			print "d " at > cmds; push("d", at, doc[at]); del(at)
		} else {
			k = 1 + int(rand() * 3)
			print "u " k > cmds
			while (k > 0 && depth > 0) {
				op = sop[depth]; at = sat[depth]
				if (op == "a" || op == "i") del(at)
				else if (op == "r") doc[at] = sold[depth]
				else ins(at, sold[depth])
				k--; depth--
			}
		}
		print show() > model
	}
}'
[ "$(wc -l < "$T/cmds")" -eq "$N" ] || fail "the model wrote $(wc -l < "$T/cmds") commands"

D=$T/doc
done=0 kills=0 unacked=0 run=0
while [ "$done" -lt "$N" ]; do
	run=$((run + 1))
	tail -n +"$((done + 1))" "$T/cmds" > "$T/todo"
	# Emptied here, not only by the redirection below: a kill that comes
	# before the child made it would leave the last run's messages (or
	# the compact check's, above) to be taken for this run's.
	: > "$T/acks"
	: > "$T/err"
	feed < "$T/todo" | "$E" "$D" > "$T/acks" 2> "$T/err" &
	pid=$!
	if [ "$run" -le "$RUNS" ]; then
		sleep "$(pause 15)"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	status=0
	wait "$pid" 2>/dev/null || status=$?
	wait
	# 0: the run ended the script before its kill came.
	case $status in
	0) ;;
	137) kills=$((kills + 1)) ;;
	*) fail "run $run: exit status $status: $(cat "$T/err")" ;;
	esac
	[ -s "$T/err" ] && fail "run $run: $(cat "$T/err")"
	# Every acknowledged edit is in the log, with the offsets acknowledged.
	acked=$(grep -c '^ok ' "$T/acks" || true)
	grep -o '^ok [0-9]*' "$T/acks" | cut -d' ' -f2 > "$T/offsets" || true
	if [ "$acked" -gt 0 ]; then
		seq "$done" "$((done + acked - 1))" | cmp -s - "$T/offsets" ||
			fail "run $run: acknowledged offsets $(head -1 "$T/offsets")..., expected from $done"
	fi
	# Rebuild first: opening the writer recovers the log, and a record that
	# was synced when the kill came, before the watermark said so, is kept
	# (elog-cat alone would not show it yet).
	doc=$(show "$D")
	now=$("$B/elog-cat" -F '%o\n' "$D" | wc -l)
	[ "$now" -ge "$((done + acked))" ] ||
		fail "run $run: $acked edits acknowledged from $done, but the log ends at $now"
	[ "$now" -le "$((done + acked + 1))" ] ||
		fail "run $run: the log holds $((now - done - acked)) edits that were never acknowledged"
	[ "$now" -eq "$((done + acked + 1))" ] && unacked=$((unacked + 1))
	# The document is the model's after the same commands.
	want=
	[ "$now" -gt 0 ] && want=$(sed -n "${now}p" "$T/model")
	[ "$doc" = "$want" ] ||
		fail "run $run: after $now commands the document is '$doc', not '$want'"
	done=$now
	[ "$run" -gt "$((RUNS + 1))" ] && fail "the last run did not finish the script"
done
[ "$kills" -ge $((RUNS * 2 / 3)) ] || fail "only $kills of $RUNS runs were killed by SIGKILL"
"$B/elog-verify" -q "$D" || fail "elog-verify"
echo "test-undo-history: ok: fixed session, then $N edits and undos across $kills SIGKILLs ($unacked of them mid-edit: the edit in the log, its ok not yet printed), the document right after each"
