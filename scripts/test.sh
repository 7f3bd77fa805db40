#!/usr/bin/env bash
# test.sh: run every test of elog, from a fresh Debian 12 machine.
#
#   scripts/test.sh
#
# Installs missing packages (scripts/setup-debian.sh), then runs the steps
# below in order and stops at the first that fails.  The last line is a
# summary; the exit status is 0 only when every step passed.
#
# To add a step, write one line in the STEPS list: a name, then the command.
# Each step has a time limit (ELOG_STEP_TIMEOUT seconds, default 480) so that
# a hung test fails the run instead of eating CI's budget.
set -euo pipefail

cd "$(dirname "$0")/.."

jobs=$(nproc 2>/dev/null || echo 2)
step_timeout=${ELOG_STEP_TIMEOUT:-480}

# name | command (run with bash -c from the repository root)
STEPS=(
	"setup|scripts/setup-debian.sh"
	"build|make -j$jobs all"
	"check|make check"
	"build-sanitize|make -j$jobs all SANITIZE=1"
	"check-sanitize|make check SANITIZE=1"
)

passed=0
failed=0
results=()
start_all=$SECONDS

summary() {
	echo
	echo "==== summary ($((SECONDS - start_all))s)"
	local r
	for r in "${results[@]}"; do
		echo "  $r"
	done
	echo "steps: $passed passed, $failed failed"
}

for entry in "${STEPS[@]}"; do
	name=${entry%%|*}
	cmd=${entry#*|}
	echo "==== $name: $cmd"
	t0=$SECONDS
	rc=0
	timeout --foreground -k 10 "$step_timeout" bash -c "$cmd" </dev/null || rc=$?
	dt=$((SECONDS - t0))
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		results+=("ok    $name (${dt}s)")
	else
		failed=$((failed + 1))
		if [ "$rc" -eq 124 ]; then
			results+=("FAIL  $name: timed out after ${step_timeout}s")
		else
			results+=("FAIL  $name: exit status $rc (${dt}s)")
		fi
		echo "test.sh: step '$name' failed; the steps after it were not run" >&2
		summary
		exit 1
	fi
done

echo "test.sh: all ${passed} steps passed"
summary
