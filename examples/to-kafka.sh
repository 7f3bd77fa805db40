#!/bin/sh
# to-kafka.sh: move the records of an elog log into a Kafka topic with
# kcat(1), as a named consumer of the log, so that a run that is killed
# resumes where the last one committed, losing nothing.
#
#   to-kafka.sh [-g consumer] [-n batch] [-f] dir brokers topic
#
# Each record becomes one Kafka message:
#   key    the record's key (none for an unkeyed record);
#   value  the record as elog-cat prints it, one line of JSON:
#          {"offset":N,"ts":MS,"schema":S,"key":...,"value":...}
# kcat has no option to set a message's timestamp, so the record's
# timestamp (and offset and schema) travel in the value; the message's own
# timestamp is the time it was produced.  Keys must be UTF-8 text without a
# tab or a newline (kcat splits its input at them): a record with another
# key stops the run before its batch is sent.
#
# Delivery is at-least-once: records are read as consumer "kafka" (-g),
# sent in batches of 1000 (-n), and the consumer's offset is committed
# only after kcat has had every message of the batch acknowledged
# (acks=all).  A crash between the two sends that batch again; the offset
# in the value tells duplicates apart.  With -f it keeps following the
# log; without, it exits once the log is drained.
#
# Exit status: 0 drained (or stopped while following), 1 a record that
# cannot be sent, 2 bad usage, other: that of the failing program.
set -eu

group=kafka batch=1000 follow=0
while getopts g:n:f opt; do
	case $opt in
	g) group=$OPTARG ;;
	n) batch=$OPTARG ;;
	f) follow=1 ;;
	*) echo "usage: to-kafka.sh [-g consumer] [-n batch] [-f] dir brokers topic" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 3 ] || { echo "usage: to-kafka.sh [-g consumer] [-n batch] [-f] dir brokers topic" >&2; exit 2; }
dir=$1 brokers=$2 topic=$3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The consumer, made once before the log's first record; a name that
# exists is left as it is.
elog-commit --create "$dir" "$group"

while :; do
	elog-cat -g "$group" -c "$batch" "$dir" >"$tmp/batch"
	if [ ! -s "$tmp/batch" ]; then
		[ "$follow" -eq 1 ] || exit 0
		# Sleep until there is more: the next record, read and dropped.
		elog-cat -g "$group" -f -c 1 "$dir" >/dev/null
		continue
	fi
	# The key of each line, checked first: kcat reads "key<TAB>value".
	if ! jq -e -s 'all(.[]; has("key_b64") | not) and
	               all(.[]; (.key // "") | test("[\t\n]") | not)' \
	        "$tmp/batch" >/dev/null; then
		echo "to-kafka.sh: $dir: a key in offsets" \
		     "$(head -1 "$tmp/batch" | jq .offset)-$(tail -1 "$tmp/batch" | jq .offset)" \
		     "is not UTF-8 text without tabs and newlines" >&2
		exit 1
	fi
	jq -r '.key // ""' "$tmp/batch" >"$tmp/keys"
	# The value is elog-cat's line as it is, not as jq would print it
	# again (jq rounds large numbers).
	paste "$tmp/keys" "$tmp/batch" |
		kcat -P -b "$brokers" -t "$topic" -K '\t' -Z -X acks=all \
		     -X message.timeout.ms=30000
	elog-commit "$dir" "$group" "$(tail -1 "$tmp/batch" | jq .offset)"
done
