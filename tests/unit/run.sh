#!/bin/sh
# run.sh: run unit test programs, JOBS at a time, and end with what failed.
#
#   tests/unit/run.sh JOBS PROGRAM...
#
# Every program runs, whatever the others did; each one's output is printed
# whole when it ends (programs running side by side do not mix their
# lines).  When any failed, the output ends with the names of the failing
# programs and, for each, its failing lines again (Check's "file:line:F:"
# and ":E:" lines; the last lines of its output when there are none, as
# when a sanitizer stopped the program itself): CI shows the tail of a log,
# and that tail must say what failed.  Exit status 1 when any failed.
set -u

[ $# -ge 1 ] || { echo "usage: tests/unit/run.sh JOBS PROGRAM..." >&2; exit 2; }
jobs=$1
shift
[ $# -ge 1 ] || exit 0

out=$(mktemp -d "${TMPDIR:-/tmp}/elog-unit-run.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
trap 'exit 130' INT TERM

# One program: its output into $out/N.out, its exit status into $out/N.rc.
# xargs runs this with sh -c; $1 is the output directory, $2 the program.
one='
	o=$1/$(printf "%s" "$2" | tr / _)
	CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120} "$2" >"$o.out" 2>&1
	echo $? >"$o.rc"
	printf "== %s\n" "$2"
	cat "$o.out"
'
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c "$one" sh "$out" {}

failed=0
for p in "$@"; do
	o=$out/$(printf '%s' "$p" | tr / _)
	rc=$(cat "$o.rc" 2>/dev/null || echo "?")
	[ "$rc" = 0 ] && continue
	if [ "$failed" -eq 0 ]; then
		echo
		echo "==== unit tests that failed"
	fi
	failed=$((failed + 1))
	echo "FAIL $p (exit status $rc)"
	if grep -q ':[FE]:' "$o.out"; then
		grep ':[FE]:' "$o.out" | sed 's/^/  /'
	else
		tail -n 20 "$o.out" | sed 's/^/  /'
	fi
done
if [ "$failed" -gt 0 ]; then
	echo "unit: $failed of $# programs failed"
	exit 1
fi
exit 0
