#!/usr/bin/env bash
# demo.sh: build elog and show its main job in a scratch directory:
# append JSON events, follow them live from another process, filter them
# with jq, and pick records by count and by time.
#
#   scripts/demo.sh
#
# Installs missing packages first (scripts/setup-debian.sh).  Leaves nothing
# behind: the log lives in a temporary directory removed at exit.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD

scripts/setup-debian.sh
echo "demo: building (make)"
make

bin=$root/$(make -s --no-print-directory builddir)
append=$bin/elog-append
cat=$bin/elog-cat

tmp=$(mktemp -d "${TMPDIR:-/tmp}/elog-demo.XXXXXX")
follower=
cleanup() {
	if [ -n "$follower" ]; then
		kill "$follower" 2>/dev/null || true
		wait "$follower" 2>/dev/null || true
	fi
	cd / && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Work inside the temporary directory, so that the log is simply "events".
cd "$tmp"
log=events

if [ -t 1 ]; then
	bold=$(printf '\033[1m') plain=$(printf '\033[0m')
else
	bold='' plain=''
fi

# A heading for each part of the demo.
step() {
	printf '\n%s== %s%s\n' "$bold" "$1" "$plain"
}
# Show a command as a user would type it (program without its build path,
# odd arguments quoted), then run it.
run() {
	local a shown=${1##*/}
	for a in "${@:2}"; do
		if [[ $a =~ ^[A-Za-z0-9@%+=:,./_-]+$ ]]; then
			shown+=" $a"
		else
			shown+=" '$a'"
		fi
	done
	printf '$ %s\n' "$shown"
	"$@"
}
now_ms() {
	date +%s%3N
}

step "Append three events; -p prints each offset once it is durable"
printf '$ printf ... | elog-append -p %s\n' "$log"
printf '%s\n' \
	'{"type":"login","user":"ana"}' \
	'{"type":"click","user":"ana","button":"buy"}' \
	'{"type":"login","user":"bo"}' |
	"$append" -p "$log"

step "Read them back: one JSON object per record"
run "$cat" "$log"

step "Follow the log from another process while more events arrive"
printf '$ elog-cat -f %s > follow.out &\n' "$log"
"$cat" -f "$log" >follow.out &
follower=$!

# Wait until the follower has printed n lines, at most 5 seconds.
wait_lines() {
	local n=$1 deadline=$((SECONDS + 5))
	while [ "$(wc -l <follow.out)" -lt "$n" ]; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "demo: the follower did not receive record $n" >&2
			exit 1
		fi
		sleep 0.01
	done
}

wait_lines 3
echo "  (the follower printed the 3 existing records first)"
for i in 1 2 3 4; do
	event='{"type":"click","user":"bo","n":'$i'}'
	t0=$(now_ms)
	offset=$(printf '%s\n' "$event" | "$append" -p "$log")
	wait_lines $((3 + i))
	t1=$(now_ms)
	echo "  appended offset $offset; follower received after $((t1 - t0)) ms:"
	echo "    $(tail -n 1 follow.out)"
	sleep 0.2
done
kill "$follower"
wait "$follower" 2>/dev/null || true
follower=

step "Filter with jq: the clicks, as offset and user"
printf "\$ elog-cat %s | jq -c 'select(.value.type == \"click\") | {offset, user: .value.user}'\n" "$log"
"$cat" "$log" | jq -c 'select(.value.type == "click") | {offset, user: .value.user}'

step "The last two records (-n, like tail -n)"
run "$cat" -n 2 "$log"

step "Only what happened since a moment in time (--since)"
sleep 0.05
mark=$(now_ms)
since=$(date -u -d "@$((mark / 1000))" +%Y-%m-%dT%H:%M:%S).$(printf '%03d' $((mark % 1000)))Z
sleep 0.05
printf '%s\n' '{"type":"logout","user":"ana"}' '{"type":"logout","user":"bo"}' |
	"$append" "$log"
run "$cat" --since "$since" "$log"
echo "  (the same with epoch milliseconds: --since @$mark, or relative: --since -5m)"

step "Values only, and a format string"
run "$cat" -v -c 2 "$log"
run "$cat" -F '%o %T %S bytes\n' -n 3 "$log"

total=$("$cat" "$log" | wc -l)
printf '\ndemo: ok, %s records in %s/%s (removed on exit)\n' "$total" "$tmp" "$log"
