#!/bin/sh
# The consumer with no database: the edge gateway's pipeline
#
#   elog-cat -g uplink -f DIR | ./upload.sh DIR FAR | elog-commit DIR uplink
#
# killed as a whole with SIGKILL at random moments while records arrive,
# and restarted each time; a last run without -f drains the rest.  Delivery
# is at least once: every record must reach the far side, duplicates are
# allowed, and the idempotency key "<log id>:<offset>" tells them apart.
#
# usage: test-shell-consumer.sh BUILD_DIR [RECORDS]
set -eu
B=$(cd "${1:?usage: $0 build-dir [records]}" && pwd)
N=${2:-2000}
here=$(cd "$(dirname "$0")" && pwd)
PATH=$B:$PATH
export PATH
T=$(mktemp -d "${TMPDIR:-/tmp}/elog-shell-consumer.XXXXXX")
trap 'kill $producer 2>/dev/null || true; [ -n "${pg:-}" ] && kill -KILL "-$pg" 2>/dev/null; rm -rf "$T"' EXIT
L=$T/log
FAR=$T/far

fail() { echo "test-shell-consumer: FAIL: $*" >&2; exit 1; }
pause() { od -An -N2 -tu2 /dev/urandom | awk -v max="$1" '{ printf "%.3f", ($1 % (max + 1)) / 1000 }'; }

echo 0 | elog-append "$L"
elog-commit --create "$L" uplink
(
	i=1
	while [ "$i" -lt "$N" ]; do
		end=$((i + 49))
		[ "$end" -ge "$N" ] && end=$((N - 1))
		seq "$i" "$end" | elog-append "$L"
		i=$((end + 1))
		sleep 0.05
	done
) &
producer=$!

kills=0
while kill -0 "$producer" 2>/dev/null || [ "$kills" -lt 20 ]; do
	# Its own process group, so that one kill reaches all three programs.
	setsid sh -c 'elog-cat -g uplink -f "$1" | "$2/upload.sh" "$1" "$3" |
		elog-commit --every 200ms "$1" uplink' sh "$L" "$here" "$FAR" &
	pg=$!
	sleep "$(pause 300)"
	# The group exists once the child has called setsid(): a kill sent
	# before finds no group, and the pipeline started after it would
	# follow the log for ever, with `wait` waiting for it.
	while ! kill -KILL "-$pg" 2>/dev/null && kill -0 "$pg" 2>/dev/null; do
		sleep 0.01
	done
	wait "$pg" 2>/dev/null || true
	pg=
	kills=$((kills + 1))
	[ "$kills" -gt 500 ] && fail "the producer did not finish"
done
wait "$producer"
elog-cat -g uplink "$L" | "$here/upload.sh" "$L" "$FAR" | elog-commit "$L" uplink

id=$(elog-commit --log-id "$L")
cut -d' ' -f1 "$FAR" | sort -u > "$T/keys"
seq 0 $((N - 1)) | sed "s/^/$id:/" | sort > "$T/want"
cmp -s "$T/keys" "$T/want" || fail "records missing at the far side: $(comm -13 "$T/keys" "$T/want" | head -3)"
elog-commit -l --json "$L" | grep -q "^{\"name\":\"uplink\",\"offset\":$((N - 1)),\"lag\":0," ||
	fail "committed: $(elog-commit -l --json "$L")"
dups=$(($(wc -l < "$FAR") - N))
echo "test-shell-consumer: ok: $N records delivered at least once across $kills SIGKILLs ($dups duplicates dropped by key)"
