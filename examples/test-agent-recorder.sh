#!/bin/sh
# The agent recorder: two agents' runs recorded, interleaved in time order,
# from 02:50 to 03:20 on 2026-11-29 (explicit timestamps, so the answers are
# fixed); then "what did the agents do between 03:00 and 03:10", for both
# runs and for one, must be exactly the actions an awk filter over the input
# picks, including the edges (03:00:00.000 and 03:10:00.000 are in,
# 02:59:59.999 and 03:10:00.001 are out), and a record of another schema in
# the window must be left out.
#
# usage: test-agent-recorder.sh BUILD_DIR
set -eu
B=$(cd "${1:?usage: $0 build-dir}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
PATH=$B:$PATH
export PATH
T=$(mktemp -d "${TMPDIR:-/tmp}/elog-agent-recorder.XXXXXX")
trap 'rm -rf "$T"' EXIT
L=$T/actions

fail() { echo "test-agent-recorder: FAIL: $*" >&2; exit 1; }
command -v jq > /dev/null || fail "jq is not installed"

# run-1 acts every 20 s from 02:50:00, run-2 every 45 s from 02:58:10.500,
# plus run-2's actions at the edges; "at" has milliseconds always, so that
# sorting the lines sorts the times.
awk 'function at(ms,   s) {
	s = int(ms / 1000)
	return sprintf("2026-11-29T%02d:%02d:%02d.%03dZ", int(s / 3600), int(s / 60) % 60, s % 60, ms % 1000)
}
function act(ms, run, step, tool, args) {
	printf "%s {\"at\":\"%s\",\"run\":\"%s\",\"step\":%d,\"tool\":\"%s\",\"args\":%s}\n", at(ms), at(ms), run, step, tool, args
}
BEGIN {
	split("read_file edit_file run_tests http_get", tools, " ")
	for (i = 0; i < 90; i++)
		act(10200000 + i * 20000, "run-1", i, tools[i % 4 + 1], "{\"n\":" i "}")
	for (i = 0; i < 20; i++)
		act(10690500 + i * 45000, "run-2", i, tools[(i + 2) % 4 + 1], "{\"path\":\"src/f" i ".c\",\"note\":\"tab\\there\"}")
	act(10799999, "run-2", 100, "edge", "{\"before\":true}")
	act(10800000, "run-2", 101, "edge", "{\"first\":true}")
	act(11400000, "run-2", 102, "edge", "{\"last\":true}")
	act(11400001, "run-2", 103, "edge", "{\"after\":true}")
}' | sort > "$T/timed"
cut -d' ' -f2- "$T/timed" > "$T/input"
[ "$(wc -l < "$T/input")" -eq 114 ] || fail "the input has $(wc -l < "$T/input") actions"

# Recorded as an agent would report them: in three sittings, the recorder
# restarted in between.
head -n 40 "$T/input" | "$here/agent-recorder.sh" record "$L"
# Small segments from here on, so that compaction, were it allowed, would
# find closed segments of both runs to work on (see the end).
elog-retain --set segment-bytes=4K "$L"
sed -n '41,80p' "$T/input" | "$here/agent-recorder.sh" record "$L"
# A heartbeat of another schema, inside the window.
printf '2026-11-29T03:05:00Z\t{"alive":true}\n' | elog-append -t -s 2 "$L"
tail -n +81 "$T/input" | "$here/agent-recorder.sh" record "$L"

# What the answer must be, from the input alone.
expect() {
	awk -v run="$1" '$1 >= "2026-11-29T03:00:00.000Z" && $1 <= "2026-11-29T03:10:00.000Z" {
		line = $0
		sub(/^[^ ]* /, "", line)
		match(line, /"run":"[^"]*"/); r = substr(line, RSTART + 7, RLENGTH - 8)
		match(line, /"step":[0-9]*/); step = substr(line, RSTART + 7, RLENGTH - 7)
		match(line, /"tool":"[^"]*"/); tool = substr(line, RSTART + 8, RLENGTH - 9)
		match(line, /"args":.*}$/); args = substr(line, RSTART + 7, RLENGTH - 8)
		if (run == "" || r == run)
			printf "%s%s %s step %s %s %s\n", substr($1, 1, 19), "Z", r, step, tool, args
	}' "$T/timed"
}

"$here/agent-recorder.sh" between "$L" 2026-11-29T03:00:00Z 2026-11-29T03:10:00Z > "$T/got"
expect "" > "$T/want"
[ "$(wc -l < "$T/want")" -eq 46 ] || fail "the window should hold 46 actions, not $(wc -l < "$T/want")"
cmp -s "$T/got" "$T/want" || fail "between 03:00 and 03:10: $(diff "$T/want" "$T/got" | head -5)"

"$here/agent-recorder.sh" between "$L" 2026-11-29T03:00:00Z 2026-11-29T03:10:00Z run-2 > "$T/got2"
expect run-2 > "$T/want2"
[ "$(wc -l < "$T/want2")" -eq 15 ] || fail "run-2's window should hold 15 actions, not $(wc -l < "$T/want2")"
cmp -s "$T/got2" "$T/want2" || fail "run-2 between 03:00 and 03:10: $(diff "$T/want2" "$T/got2" | head -5)"

# The records themselves: the action's time as the timestamp, the run as
# the key, schema 1, the action as the value.
elog-cat -k run-2 "$L" | jq -se 'map(select(.value.step == 103)) | length == 1 and (.[0] |
	.ts == 1795921800001 and .key == "run-2" and .schema == 1 and .value.tool == "edge")' > /dev/null ||
	fail "run-2's step 103: $(elog-cat -k run-2 "$L" | grep '"step":103')"
[ "$(elog-cat "$L" | jq -s 'map(select(.schema == 1)) | length')" -eq 114 ] || fail "not 114 actions in the log"

# Keys that filter (the run): a delete log, which a blanket elog-compact
# leaves as it is (status 2) although it has closed segments; compacted,
# each run would keep little more than its last action.
grep -qx 'cleanup delete' "$L/settings" || fail "settings: $(grep cleanup "$L/settings")"
[ "$(elog-verify -l "$L" | grep -c ' closed$')" -ge 2 ] || fail "fewer than 2 closed segments"
elog-cat -F '%o %k\n' "$L" > "$T/before"
st=0
elog-compact "$L" 2> "$T/err" || st=$?
[ "$st" -eq 2 ] && grep -q "cleanup is delete" "$T/err" || fail "elog-compact: status $st: $(cat "$T/err")"
elog-cat -F '%o %k\n' "$L" | cmp -s - "$T/before" || fail "elog-compact changed the log"

# A bad action stops the recorder with an error, after the ones before it.
printf '%s\n' '{"at":"2026-11-29T03:30:00Z","run":"run-3","step":0,"tool":"x","args":{}}' '{"at":"later","run":"run-3"}' |
	"$here/agent-recorder.sh" record "$L" 2> "$T/err" && fail "a bad timestamp was accepted"
grep -q "invalid timestamp 'later'" "$T/err" || fail "stderr: $(cat "$T/err")"
[ "$(elog-cat -n 1 -F '%k' "$L")" = run-3 ] || fail "the action before the bad one is missing"
# run-2 handed over: exported, imported into a log of its own, it answers
# the same, line for line, with the same offsets; imported twice, the
# second import finds its offsets taken (status 2) and adds nothing.
"$here/agent-recorder.sh" export "$L" run-2 > "$T/run-2.jsonl"
"$here/agent-recorder.sh" import "$T/run-2" < "$T/run-2.jsonl"
elog-cat "$T/run-2" | cmp -s - "$T/run-2.jsonl" || fail "the imported run prints other lines"
"$here/agent-recorder.sh" between "$T/run-2" 2026-11-29T03:00:00Z 2026-11-29T03:10:00Z > "$T/got3"
cmp -s "$T/got3" "$T/want2" || fail "the imported run-2 between 03:00 and 03:10: $(diff "$T/want2" "$T/got3" | head -5)"
st=0
"$here/agent-recorder.sh" import "$T/run-2" < "$T/run-2.jsonl" 2> "$T/err" || st=$?
[ "$st" -eq 2 ] && grep -q "is taken" "$T/err" || fail "a second import: status $st: $(cat "$T/err")"
elog-cat "$T/run-2" | cmp -s - "$T/run-2.jsonl" || fail "a second import changed the log"
echo "test-agent-recorder: ok: 114 actions of two runs; 46 between 03:00 and 03:10 (15 of run-2), edges and the other schema right; run-2 handed over whole"
