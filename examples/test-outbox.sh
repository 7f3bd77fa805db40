#!/bin/sh
# The outbox relay survives SIGKILL without duplicates: outbox-app places N
# orders (each with its outbox row, in one transaction) while outbox-relay
# drains the outbox into the log and is killed with SIGKILL at random
# moments and restarted; a last run drains the rest.  In the end the log
# must hold each order's event exactly once, in outbox order.
#
# usage: test-outbox.sh BUILD_DIR [ORDERS]
set -eu
B=$(cd "${1:?usage: $0 build-dir [orders]}" && pwd)
N=${2:-3000}
T=$(mktemp -d "${TMPDIR:-/tmp}/elog-outbox.XXXXXX")
trap 'kill $app 2>/dev/null || true; rm -rf "$T"' EXIT
L=$T/log
DB=$T/app.db

fail() { echo "test-outbox: FAIL: $*" >&2; exit 1; }
pause() { od -An -N2 -tu2 /dev/urandom | awk -v max="$1" '{ printf "%.3f", ($1 % (max + 1)) / 1000 }'; }

# Create the tables first, so that the relay's first run finds them.
"$B/examples/outbox-app" "$DB" 0
"$B/examples/outbox-app" "$DB" "$N" 500 &
app=$!

kills=0
while kill -0 "$app" 2>/dev/null || [ "$kills" -lt 30 ]; do
	"$B/examples/outbox-relay" -f "$DB" "$L" &
	r=$!
	sleep "$(pause 150)"
	kill -KILL "$r" 2>/dev/null || true
	wait "$r" 2>/dev/null || true
	kills=$((kills + 1))
	[ "$kills" -gt 1000 ] && fail "the app did not finish"
done
wait "$app"
"$B/examples/outbox-relay" "$DB" "$L"

# A second relay while one holds the log is refused at once.  The first
# holds it once it has started, which a loaded machine may delay past any
# fixed pause: until then a second relay finds the log free, relays
# nothing (the outbox is drained) and exits 0; so it is tried again, up
# to 300 times a tenth of a second apart, until it is refused.
"$B/examples/outbox-relay" -f "$DB" "$L" &
r=$!
tries=0
while :; do
	sleep 0.1
	set +e
	"$B/examples/outbox-relay" "$DB" "$L" 2> "$T/err"
	st=$?
	set -e
	tries=$((tries + 1))
	[ "$st" -eq 0 ] && [ "$tries" -lt 300 ] || break
done
kill "$r"; wait "$r" 2>/dev/null || true
[ "$st" -eq 3 ] || fail "a second relay exited with $st: $(cat "$T/err")"

"$B/elog-cat" -F '%k\n' "$L" > "$T/keys"
seq 1 "$N" | sed 's/^/outbox-/' > "$T/want"
cmp -s "$T/keys" "$T/want" || fail "the log does not hold outbox rows 1..$N once each, in order: $(diff "$T/want" "$T/keys" | head -5)"
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM outbox')" = 0 ] || fail "the outbox was not drained"
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM orders')" = "$N" ] || fail "orders"
# Each event names its order, and order and outbox ids agree here.
"$B/elog-cat" -v "$L" | sed -n 's/^{"outbox_id":\([0-9]*\),"event":{"type":"order_placed","order":\([0-9]*\),.*/\1 \2/p' |
	awk '$1 != $2 { bad++ } END { exit bad || NR != '"$N"' }' || fail "event payloads"
echo "test-outbox: ok: $N orders relayed exactly once across $kills SIGKILLs"
