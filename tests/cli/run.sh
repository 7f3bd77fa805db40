#!/bin/sh
# run.sh: run bats and end with what failed.
#
#   tests/cli/run.sh [BATS OPTION...] FILE-OR-DIRECTORY...
#
# The arguments go to bats as they are; its TAP output is printed as it
# comes.  When a test failed, the output ends with every "not ok" line
# again, each with the lines bats printed under it (the file and line of
# the failing command, and the test's output): CI shows the tail of a log,
# and that tail must say what failed.  The exit status is bats'.
set -u

out=$(mktemp "${TMPDIR:-/tmp}/elog-cli-run.XXXXXX") || exit 1
trap 'rm -f "$out" "$out.rc"' EXIT
trap 'exit 130' INT TERM

# bats' status, kept through the pipe into tee.
{ bats "$@" 2>&1; echo $? >"$out.rc"; } | tee "$out"
status=$(cat "$out.rc")
[ "$status" -eq 0 ] && exit 0

failed=$(grep -c '^not ok ' "$out")
echo
echo "==== CLI tests that failed"
awk '
	/^not ok / { keep = 1; print; next }
	/^(ok |[0-9]+\.\.[0-9]+)/ { keep = 0; next }
	keep && /^#/ { print "  " $0 }
' "$out"
if [ "$failed" -eq 0 ]; then
	echo "bats exited with status $status before any test failed; its last lines:"
	tail -n 20 "$out" | sed 's/^/  /'
fi
echo "cli: $failed tests failed (bats exit status $status)"
exit "$status"
