#!/usr/bin/env bash
# test.sh: run every test of elog, from a fresh Debian 12 machine.
#
#   scripts/test.sh
#
# Installs missing packages (scripts/setup-debian.sh), then runs every step
# below in order, whether or not the ones before it passed, so that one run
# reports every failure (make runs with -k for the same reason: a failing
# target does not keep the others from running).  It ends with a summary
# of the steps and, as the last line, the number of tests that passed and
# failed, added up from the Check and bats output of every step.  The exit
# status is 0 only when every step passed.
#
# To add a step, write one line in the STEPS list: a name, then the command.
# Each step has a time limit (ELOG_STEP_TIMEOUT seconds, default 600) so that
# a hung test fails the run instead of eating CI's budget.
set -euo pipefail

cd "$(dirname "$0")/.."

jobs=$(nproc 2>/dev/null || echo 2)
step_timeout=${ELOG_STEP_TIMEOUT:-600}

# name | command (run with bash -c from the repository root)
STEPS=(
	"setup|scripts/setup-debian.sh"
	"build|make -j$jobs all"
	"check|make -k check"
	"build-sanitize|make -j$jobs all SANITIZE=1"
	"check-sanitize|make -k check SANITIZE=1"
	"build-nozstd|make -j$jobs all HAVE_ZSTD=0"
	"check-nozstd|make -k check-unit check-cli HAVE_ZSTD=0"
	"check-cross|make check-cross"
)

passed=0
failed=0
results=()
start_all=$SECONDS
logs=$(mktemp -d "${TMPDIR:-/tmp}/elog-test.XXXXXX")
trap 'rm -rf "$logs"' EXIT

# Tests counted from a step's output: Check's "100%: Checks: 12, Failures: 0,
# Errors: 0" lines and bats' TAP "ok" / "not ok" lines.
tests_passed=0
tests_failed=0
tests_skipped=0
count_tests() {
	local counts
	counts=$(awk '
		/^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+/ {
			gsub(/,/, ""); c = $3; f = $5; e = $7
			pass += c - f - e; fail += f + e; next
		}
		/^ok [0-9]+ .*# [Ss][Kk][Ii][Pp]/ { skip++; next }
		/^ok [0-9]+/ { pass++; next }
		/^not ok [0-9]+/ { fail++; next }
		END { print pass + 0, fail + 0, skip + 0 }' "$1")
	read -r p f k <<<"$counts"
	tests_passed=$((tests_passed + p))
	tests_failed=$((tests_failed + f))
	tests_skipped=$((tests_skipped + k))
}

summary() {
	echo
	echo "==== summary ($((SECONDS - start_all))s)"
	local r
	for r in "${results[@]}"; do
		echo "  $r"
	done
	echo "steps: $passed passed, $failed failed"
	echo "tests: $tests_passed passed, $tests_failed failed, $tests_skipped skipped"
}

for entry in "${STEPS[@]}"; do
	name=${entry%%|*}
	cmd=${entry#*|}
	echo "==== $name: $cmd"
	t0=$SECONDS
	log=$logs/$name.log
	set +e
	timeout --foreground -k 10 "$step_timeout" bash -c "$cmd" </dev/null 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	count_tests "$log"
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
		echo "test.sh: step '$name' failed; going on with the next" >&2
	fi
done

if [ "$failed" -gt 0 ]; then
	echo "test.sh: ${failed} of $((passed + failed)) steps failed" >&2
	summary
	exit 1
fi
echo "test.sh: all ${passed} steps passed"
summary
