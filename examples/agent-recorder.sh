#!/usr/bin/env bash
# agent-recorder.sh: every action of an AI agent as a record, to answer
# "what did the agent do between 03:00 and 03:10?" afterwards.
#
#   agent-recorder.sh record DIR < actions
#   agent-recorder.sh between DIR SINCE UNTIL [RUN]
#   agent-recorder.sh export DIR RUN > run.jsonl
#   agent-recorder.sh import DIR < run.jsonl
#
# record: each input line is one action as a JSON object, with the time the
#   agent took it in "at" (RFC 3339, such as "2026-11-29T03:04:05.250Z") and
#   the id of the agent's run in "run":
#
#     {"at":"2026-11-29T03:00:30Z","run":"run-7","step":3,"tool":"read_file","args":{"path":"setup.py"}}
#
#   It is appended with that time as the record's timestamp (elog-append -t),
#   the run as its key, and schema id 1, which says "an action, in this JSON
#   shape": the id a reader checks before it reads a value, and the one to
#   change when the shape changes.  Several agents may share one log, each
#   with its own recorder and its own clock: --since and --until select by
#   timestamp whatever order the clocks wrote them in.  The run is a key that
#   filters (elog-cat -k run-7), not one that names state: every action of
#   a run matters, so the log is made with the cleanup policy delete
#   (elog-append --cleanup delete, the default, said here on purpose) and
#   elog-compact refuses it with status 2; compacted, a run of 61 actions
#   would keep its last one.  jq passes each action on as
#   it comes (--unbuffered), and elog-append makes it durable before reading
#   the next one that is not already waiting, so a crash loses none of the
#   actions reported before it.
#
# between: the actions with SINCE <= time <= UNTIL (any time elog(7)
#   accepts), of run RUN or of every run, one line each:
#
#     2026-11-29T03:00:30Z run-7 step 3 read_file {"path":"setup.py"}
#
#   It is elog-cat --since/--until, which select exactly those, and jq.
#
# export, import: one run handed to someone as JSON lines (elog-cat -k RUN),
#   and made a log of its own again (elog-append --json --keep-offsets):
#   every action with its time, schema and offset, so that a replay's
#   idempotency keys, made from offsets, are those of the original.  Import
#   into a new directory: an offset the log already holds is refused.
set -euo pipefail
SCHEMA=1

usage() {
	echo "usage: agent-recorder.sh record dir < actions" >&2
	echo "       agent-recorder.sh between dir since until [run]" >&2
	echo "       agent-recorder.sh export dir run > run.jsonl" >&2
	echo "       agent-recorder.sh import dir < run.jsonl" >&2
	exit 2
}

record() {
	# "TIME<TAB>RUN:JSON" for elog-append -t -K :; tojson keeps the action
	# on one line, with no tab in it.  A run id holds no colon.
	jq -rc --unbuffered 'if (.run | type) != "string" or (.run | contains(":"))
		then error("\"run\" must be a string without a colon") else . end |
		"\(.at)\t\(.run):\(tojson)"' |
		elog-append -t -K : -s "$SCHEMA" --cleanup delete "$1"
}

between() {
	if [ $# -eq 4 ]; then
		set -- "$1" "$2" "$3" -k "$4"
	fi
	dir=$1 since=$2 until=$3
	shift 3
	elog-cat --since "$since" --until "$until" "$@" "$dir" |
		jq -r --argjson schema "$SCHEMA" 'select(.schema == $schema) |
			"\(.ts / 1000 | floor | todate) \(.key) step \(.value.step) \(.value.tool) \(.value.args | tojson)"'
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
record) [ $# -eq 1 ] || usage; record "$@" ;;
between) [ $# -eq 3 ] || [ $# -eq 4 ] || usage; between "$@" ;;
export) [ $# -eq 2 ] || usage; elog-cat -k "$2" "$1" ;;
import) [ $# -eq 1 ] || usage; elog-append --json --keep-offsets --cleanup delete "$1" ;;
*) usage ;;
esac
