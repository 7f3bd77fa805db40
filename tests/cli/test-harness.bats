#!/usr/bin/env bats
# The test machinery says what failed: tests/unit/run.sh and
# tests/cli/run.sh end their output with the failures (CI shows the tail of
# a log), tests/unit/registered.sh and UT_TEST leave no unit test unrun,
# UT_OK prints why a call failed, and scripts/testlog.awk, which adds up
# scripts/test.sh's summary, names and counts every failure once.
# ELOG_BIN is the build directory (its libelog.a links the unit test made
# here).

load helpers

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

# A program that prints what a Check program prints and exits with status
# $2: fake_unit NAME STATUS [LINE...].
fake_unit() {
	local name=$1 st=$2
	shift 2
	{
		echo '#!/bin/sh'
		echo "echo 'Running suite(s): $name'"
		for l in "$@"; do printf "echo '%s'\n" "$l"; done
		echo "exit $st"
	} >"$T/$name"
	chmod +x "$T/$name"
}

@test "test-harness: unit run.sh ends with each failing program and its failing lines" {
	fake_unit test_a 1 '50%: Checks: 2, Failures: 1, Errors: 0' \
		'tests/unit/test_a.c:12:F:a:one_fails:0: elog_sync(w) returned -4 (corrupt data), not 0 (success)'
	fake_unit test_b 0 '100%: Checks: 3, Failures: 0, Errors: 0'
	fake_unit test_c 134 'ERROR: AddressSanitizer: heap-use-after-free' 'SUMMARY: AddressSanitizer'
	run "$TOP/tests/unit/run.sh" 2 "$T/test_a" "$T/test_b" "$T/test_c"
	[ "$status" -eq 1 ]
	# Every program ran, and the end says which failed and why; without a
	# Check line, the program's last lines.
	[[ "$output" == *"== $T/test_b"* ]]
	[ "$(tail -n 9 <<<"$output")" = "
==== unit tests that failed
FAIL $T/test_a (exit status 1)
  tests/unit/test_a.c:12:F:a:one_fails:0: elog_sync(w) returned -4 (corrupt data), not 0 (success)
FAIL $T/test_c (exit status 134)
  Running suite(s): test_c
  ERROR: AddressSanitizer: heap-use-after-free
  SUMMARY: AddressSanitizer
unit: 2 of 3 programs failed" ]
}

@test "test-harness: unit run.sh passes quietly when every program passes" {
	fake_unit test_b 0 '100%: Checks: 3, Failures: 0, Errors: 0'
	run "$TOP/tests/unit/run.sh" 3 "$T/test_b"
	[ "$status" -eq 0 ]
	[ "$output" = "== $T/test_b
Running suite(s): test_b
100%: Checks: 3, Failures: 0, Errors: 0" ]
}

@test "test-harness: registered.sh names a START_TEST that main() never adds" {
	cat >"$T/test_x.c" <<'EOF'
START_TEST(added)
END_TEST
START_TEST(forgotten)
END_TEST
START_TEST(looped)
END_TEST
int main(void)
{
	tcase_add_test(tc, added);
	tcase_add_loop_test(tc, looped, 0, 3);
}
EOF
	run --separate-stderr "$TOP/tests/unit/registered.sh" "$T/test_x.c"
	[ "$status" -eq 1 ]
	[ "$stderr" = "$T/test_x.c:3: test forgotten is never added to a test case (write it with UT_TEST)" ]
	sed -i 's/^}$/\ttcase_add_test(tc, forgotten);\n}/' "$T/test_x.c"
	run "$TOP/tests/unit/registered.sh" "$T/test_x.c"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
}

# Build a unit test program of the source on stdin against $ELOG_BIN, with
# the flags its elog-uninstalled.pc names (zstd, the sanitizers).
build_unit() {
	local pc=$ELOG_BIN/elog-uninstalled.pc
	cat >"$T/test_t.c"
	cc -std=c11 -D_GNU_SOURCE -I"$TOP/tests/unit" -Wall -Wextra -Werror \
		$(pkg-config --cflags "$pc") -o "$T/test_t" "$T/test_t.c" \
		$(pkg-config --libs "$pc") $(pkg-config --libs check)
}

@test "test-harness: UT_OK prints the call, elog_strerror of both codes and the message" {
	build_unit <<'EOF'
#include "unit.h"
UT_TEST(settings_of_no_log)
{
	char msg[ELOG_MSG_MAX];
	struct elog_settings s;
	UT_OK(elog_settings_read(ut_top, &s, msg), msg);
}
END_TEST
UT_LOOP_TEST(code_by_index, 0, 2)
{
	UT_RC(elog_reader_open(&(elog_reader *){ NULL }, ut_top), _i ? ELOG_NOTLOG : 0, NULL);
}
END_TEST
int main(void)
{
	Suite *s = suite_create("t");
	TCase *tc = ut_tcase("t");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
EOF
	run "$T/test_t"
	[ "$status" -eq 1 ]
	[[ "${lines[1]}" == "33%: Checks: 3, Failures: 2, Errors: 0" ]]
	[[ "${lines[2]}" == *"/test_t.c:6:F:t:settings_of_no_log:0: elog_settings_read(ut_top, &s, msg) returned -5 (not an elog directory), not 0 (success): not an elog directory (no settings file)" ]]
	[[ "${lines[3]}" == *"/test_t.c:11:F:t:code_by_index:0: elog_reader_open(&(elog_reader *){ NULL }, ut_top) returned -5 (not an elog directory), not 0 (success)" ]]
}

@test "test-harness: a UT_TEST never added by main() fails the program" {
	build_unit <<'EOF'
#include "unit.h"
UT_TEST(passes)
{
}
END_TEST
int main(void)
{
	Suite *s = suite_create("t");
	TCase *tc = ut_tcase("t");
	suite_add_tcase(s, tc);
	return ut_run(s);
}
EOF
	run "$T/test_t"
	[ "$status" -eq 1 ]
	[ "$output" = "1 tests written with UT_TEST were never added: call ut_add_tests()" ]
}

# tests/cli/run.sh of a bats run of its own: none of this one's BATS_
# variables in its environment, nor bats' own directory in its PATH (where
# "bats" is the script bats runs, not the command).
cli_run() {
	local path
	path=$(tr : '\n' <<<"$PATH" | grep -v bats-core | paste -sd:)
	env -i PATH="$path" HOME="$HOME" TMPDIR="$T" "$TOP/tests/cli/run.sh" "$@" 3>&-
}

@test "test-harness: cli run.sh ends with each not ok line and the lines under it" {
	mkdir "$T/b"
	# "%test", not "@test": bats would take the lines for tests of this file.
	sed 's/^%/@/' >"$T/b/one.bats" <<'EOF'
%test "passes" { true; }
%test "fails" {
	echo "what it printed"
	false
}
%test "skipped" { skip "no reason"; }
EOF
	run cli_run "$T/b"
	[ "$status" -eq 1 ]
	[ "$(tail -n 6 <<<"$output")" = "==== CLI tests that failed
not ok 2 fails
  # (in test file $T/b/one.bats, line 4)
  #   \`false' failed
  # what it printed
cli: 1 tests failed (bats exit status 1)" ]
}

@test "test-harness: cli run.sh passes bats' success on" {
	mkdir "$T/b"
	echo '%test "passes" { true; }' | sed 's/^%/@/' >"$T/b/one.bats"
	run cli_run "$T/b"
	[ "$status" -eq 0 ] && [ "$output" = $'1..1\nok 1 passes' ]
}

# The log of a step in which a unit test, a sanitizer-stopped unit program,
# a bats test, an example and the man page check failed, each once, with
# the summaries of the run.sh scripts repeating some of them.
step_log() {
	cat <<'EOF'
== ./build/tests/test_a
Running suite(s): a
90%: Checks: 10, Failures: 1, Errors: 0
tests/unit/test_a.c:12:F:a:one_fails:0: elog_sync(w) returned -4 (corrupt data), not 0 (success)
== ./build/tests/test_b
Running suite(s): b
100%: Checks: 5, Failures: 0, Errors: 0
== ./build/tests/test_c
Running suite(s): c
==1==ERROR: AddressSanitizer: heap-use-after-free

==== unit tests that failed
FAIL ./build/tests/test_a (exit status 1)
  tests/unit/test_a.c:12:F:a:one_fails:0: elog_sync(w) returned -4 (corrupt data), not 0 (success)
FAIL ./build/tests/test_c (exit status 1)
  ==1==ERROR: AddressSanitizer: heap-use-after-free
unit: 2 of 3 programs failed
make[1]: *** [Makefile:229: check-unit] Error 1
1..3
ok 1 cat: prints
not ok 2 cat: follows
# (in test file tests/cli/elog-cat.bats, line 7)
#   `false' failed
ok 3 cat: skipped # skip why

==== CLI tests that failed
not ok 2 cat: follows
  # (in test file tests/cli/elog-cat.bats, line 7)
  #   `false' failed
cli: 1 tests failed (bats exit status 1)
make[1]: *** [Makefile:260: check-cli] Error 1
mandoc: man/elog.1:3:2: WARNING: something
make[1]: *** [Makefile:270: check-man] Error 2
test-outbox: ok: 3000 orders relayed exactly once across 12 SIGKILLs
test-sqlite-consumer: FAIL: consumers.json: {"name":"sqlite","offset":7974}
make[2]: *** [Makefile:67: check-test-sqlite-consumer] Error 1
test-kafka: SKIP: kcat is missing
make[1]: *** [Makefile:250: check-examples] Error 2
make[1]: Target 'check-default' not remade because of errors.
make: *** [Makefile:169: check-default] Error 2
EOF
}

@test "test-harness: testlog.awk names every failure of a step once and counts it" {
	step_log >"$T/log"
	run awk -f "$TOP/scripts/testlog.awk" "$T/log"
	[ "$status" -eq 0 ]
	[ "$output" = "16 5 2
unit test_a.c: one_fails
cli tests/cli/elog-cat.bats: cat: follows
make check-man: Error 2
example test-sqlite-consumer
unit test_c: exit status 1, no Check failure line (see its output)" ]
}

# The log that once ended "tests: 2005 passed, 0 failed": only an example
# failed.
@test "test-harness: testlog.awk counts a failed example as a failed test" {
	cat >"$T/log" <<'EOF'
100%: Checks: 5, Failures: 0, Errors: 0
test-sqlite-consumer: FAIL: consumers.json: offset 7974
make[1]: *** [Makefile:67: check-test-sqlite-consumer] Error 1
make: *** [Makefile:250: check-examples] Error 2
EOF
	run awk -f "$TOP/scripts/testlog.awk" "$T/log"
	[ "$output" = "5 1 0
example test-sqlite-consumer" ]
}

@test "test-harness: testlog.awk names a unit test written and never registered" {
	cat >"$T/log" <<'EOF'
tests/unit/test_x.c:3: test forgotten is never added to a test case (write it with UT_TEST)
make: *** [Makefile:229: check-unit] Error 1
EOF
	run awk -f "$TOP/scripts/testlog.awk" "$T/log"
	[ "$output" = "0 1 0
unit tests/unit/test_x.c:3: forgotten never runs" ]
}
