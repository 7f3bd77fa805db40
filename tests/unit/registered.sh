#!/bin/sh
# registered.sh: fail when a unit test is written but never run.
#
#   tests/unit/registered.sh FILE.c...
#
# A test written with UT_TEST (unit.h) registers itself.  One written with
# Check's START_TEST runs only when main() adds it by hand, which is easy
# to forget: a START_TEST whose name no tcase_add_test or
# tcase_add_loop_test names in its file is reported, with its line, and
# the exit status is 1.
status=0
for f in "$@"; do
	for name in $(sed -n 's/^START_TEST(\([A-Za-z0-9_]*\)).*/\1/p' "$f"); do
		if ! grep -Eq "tcase_add_(loop_)?test(_raise_signal|_exit)?\([^,]*, *$name\b" "$f"; then
			line=$(grep -n "^START_TEST($name)" "$f" | cut -d: -f1)
			echo "$f:$line: test $name is never added to a test case (write it with UT_TEST)" >&2
			status=1
		fi
	done
done
exit $status
