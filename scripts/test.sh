#!/usr/bin/env bash
# test.sh: run every test of elog, from a fresh Debian 12 machine.
#
#   scripts/test.sh
#
# Installs missing packages (scripts/setup-debian.sh), then runs the steps
# below.  The steps of one lane run in order, whether or not the ones before
# them passed, so that one run reports every failure (make runs with -k for
# the same reason); the three lanes (the default build, the sanitizer build,
# the build without zstd) run side by side, since the tests spend most of
# their time waiting on fdatasync and on the processes they start, not on
# the processor: this keeps the whole run within CI's 15 minutes on a
# machine whose cores are all busy.  ELOG_TEST_LANES=1 runs the lanes one
# after the other instead.  Each step's output is printed whole when its
# lane ends; the run ends with a summary of the steps (each with the time
# it took and the processor time it used), under each failed
# step the tests that failed in it (read from its log by
# scripts/testlog.awk), and, as the last line, the number of tests that
# passed and failed in every step (Check, bats, the examples, and any other
# make target that failed; a failed step counts at least one).  The exit
# status is 0 only when every step passed.
#
# To add a step, write one line in a lane: a name, then the command.  Each
# step has a time limit (ELOG_STEP_TIMEOUT seconds, default 840) so that a
# hung test fails the run instead of eating CI's budget.
set -euo pipefail

cd "$(dirname "$0")/.."

jobs=$(nproc 2>/dev/null || echo 2)
step_timeout=${ELOG_STEP_TIMEOUT:-840}

# Lanes of steps, "name|command" separated by ";;" (each command runs with
# bash -c from the repository root).  The three lanes' tests are the make
# targets check-default, check-sanitize and check-nozstd (the Makefile says
# what each runs); the steps "check-default", "check-fuzz" and
# "check-python" (the Python package, built without zstd here) together
# are `make check`, split so that the lanes take about as long as each other.
SETUP="setup|scripts/setup-debian.sh"
LANES=(
	"build|make -j$jobs all;;check-default|make check-default"
	"build-sanitize|make -j$jobs all SANITIZE=1;;check-sanitize|make check-sanitize"
	"build-nozstd|make -j$jobs all HAVE_ZSTD=0;;check-nozstd|make check-nozstd;;check-python|make check-python HAVE_ZSTD=0;;check-fuzz|make -k check-fuzz check-build;;check-cross|make check-cross"
)

passed=0
failed=0
results=()
start_all=$SECONDS
logs=$(mktemp -d "${TMPDIR:-/tmp}/elog-test.XXXXXX")
trap 'rm -rf "$logs"' EXIT

# Tests counted from a step's output, and the failures named
# (scripts/testlog.awk): Check's and bats' tests, the examples, and any
# other make target that failed.  A step that failed with no failure named
# in its log counts as one failed test, so that the last line never says
# "0 failed" when a step failed.
tests_passed=0
tests_failed=0
tests_skipped=0
count_tests() {
	local name=$1 ok=$2 p f k
	awk -f scripts/testlog.awk "$logs/$name.log" >"$logs/$name.failures"
	read -r p f k <"$logs/$name.failures"
	sed -i 1d "$logs/$name.failures"
	if [ "$ok" != ok ] && [ "$f" -eq 0 ]; then
		echo "no failing test named in its log; its last lines:" >"$logs/$name.failures"
		tail -n 5 "$logs/$name.log" | sed 's/^/  /' >>"$logs/$name.failures"
		f=1
	fi
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

# The processor time (user and system) of the shell's children that have
# ended, in milliseconds, into cpu_ms: bash's `times`, written to a file
# (in a $(...) subshell it would count the subshell's children).  A step's
# figure is the difference before and after it, so that each result line
# says what the step cost the machine, not only how long it waited.
cpu_ms=0
children_cpu() {
	local f=$logs/times.$BASHPID u s ms=0 t m sec frac
	times >"$f"
	{ read -r _ _ && read -r u s; } <"$f"
	for t in "$u" "$s"; do
		m=${t%%m*} t=${t#*m} t=${t%s}
		sec=${t%.*} frac=${t#*.}
		ms=$((ms + (10#$m * 60 + 10#$sec) * 1000 + 10#$frac))
	done
	cpu_ms=$ms
}

# Run one step; its output goes to $logs/NAME.log, its result line to
# $logs/NAME.result ("ok|line" or "FAIL|line").
run_step() {
	local name=$1 cmd=$2 log=$logs/$1.log t0=$SECONDS rc c0
	children_cpu
	c0=$cpu_ms
	set +e
	timeout --foreground -k 10 "$step_timeout" bash -c "$cmd" </dev/null >"$log" 2>&1
	rc=$?
	set -e
	local dt=$((SECONDS - t0))
	children_cpu
	local cpu="processor $(((cpu_ms - c0 + 500) / 1000))s"
	if [ "$rc" -eq 0 ]; then
		echo "ok|ok    $name (${dt}s, $cpu)" >"$logs/$name.result"
	elif [ "$rc" -eq 124 ]; then
		# The processes killed were not waited for by their parents:
		# their time is missing from the figure.
		echo "FAIL|FAIL  $name: timed out after ${step_timeout}s ($cpu, without the processes killed)" >"$logs/$name.result"
	else
		echo "FAIL|FAIL  $name: exit status $rc (${dt}s, $cpu)" >"$logs/$name.result"
	fi
	echo "---- $(cut -d'|' -f2 "$logs/$name.result")"
}

# The steps of one lane, in order.
run_lane() {
	local rest=$1 entry
	while [ -n "$rest" ]; do
		entry=${rest%%;;*}
		run_step "${entry%%|*}" "${entry#*|}"
		if [ "$rest" = "$entry" ]; then rest=; else rest=${rest#*;;}; fi
	done
}

order=()
for lane in "$SETUP" "${LANES[@]}"; do
	rest=$lane
	while [ -n "$rest" ]; do
		entry=${rest%%;;*}
		order+=("${entry%%|*}")
		if [ "$rest" = "$entry" ]; then rest=; else rest=${rest#*;;}; fi
	done
done

echo "==== ${SETUP%%|*}: ${SETUP#*|}"
run_step "${SETUP%%|*}" "${SETUP#*|}"
cat "$logs/${SETUP%%|*}.log"

# The tests start Python hundreds of times.  Where python3 on PATH is a
# version manager's shim (pyenv's runs a dozen shell processes to pick the
# interpreter: 0.45 s of processor time a call, against 0.04 s for the
# interpreter itself), the run calls the interpreter it picks directly,
# through a link first on PATH.
py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || py=
on_path=$(command -v python3 || true)
if [ -n "$py" ] && [ -x "$py" ] && [ "$on_path" != "$py" ]; then
	mkdir -p "$logs/bin"
	ln -s "$py" "$logs/bin/python3"
	export PATH="$logs/bin:$PATH"
	echo "test.sh: the tests' python3 is $py, which $on_path runs"
fi
if [ "${ELOG_TEST_LANES:-3}" = 1 ]; then
	for lane in "${LANES[@]}"; do
		run_lane "$lane"
	done
else
	pids=()
	for lane in "${LANES[@]}"; do
		run_lane "$lane" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || true
	done
fi

for name in "${order[@]}"; do
	result=$(cat "$logs/$name.result")
	if [ "$name" != "${SETUP%%|*}" ]; then
		echo "==== $name"
		cat "$logs/$name.log"
	fi
	count_tests "$name" "${result%%|*}"
	results+=("${result#*|}")
	while IFS= read -r line; do
		results+=("      $line")
	done <"$logs/$name.failures"
	if [ "${result%%|*}" = ok ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "test.sh: step '$name' failed" >&2
	fi
done

if [ "$failed" -gt 0 ]; then
	echo "test.sh: ${failed} of $((passed + failed)) steps failed" >&2
	summary
	exit 1
fi
echo "test.sh: all ${passed} steps passed"
summary
