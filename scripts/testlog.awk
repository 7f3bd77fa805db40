# testlog.awk: what passed and what failed in the log of one step of
# scripts/test.sh.
#
#   awk -f scripts/testlog.awk LOG
#
# Prints "PASSED FAILED SKIPPED" on the first line, then one line per
# failure naming it:
#   unit FILE: TEST          a Check test (":F:" or ":E:" line)
#   unit PROGRAM: ...        a unit program that failed with no Check line
#                            (a sanitizer stopped it, or it never ran)
#   cli FILE: TEST           a bats test ("not ok", and the file under it)
#   example NAME             an example test (examples/Makefile check-NAME)
#   make TARGET: ERROR       any other make target that failed (a build,
#                            check-man, check-crash, check-symbols,
#                            check-layers...)
# A failure is counted once, whichever way it shows: the summaries that
# tests/unit/run.sh and tests/cli/run.sh print at the end of their output
# repeat failures already seen, and the make targets that only run other
# make targets, or tests counted by name, are not counted again.

function fail(name) {
	if (!(name in seen)) {
		seen[name] = 1
		names[++nnames] = name
	}
}

# The summary blocks of tests/unit/run.sh and tests/cli/run.sh.
/^==== (unit|CLI) tests that failed$/ { insum = 1; next }
insum && /^(unit|cli): / { insum = 0; next }
insum && /^FAIL / {
	# FAIL ./build/tests/test_x (exit status N)
	prog = $2; sub(/.*\//, "", prog)
	st = $0; sub(/^[^(]*\(/, "", st); sub(/\)$/, "", st)
	unitfailed[prog] = st
	nunit++
	next
}
insum { next }

# Check: "100%: Checks: 12, Failures: 0, Errors: 0" and each failure.
/^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+/ {
	line = $0; gsub(/,/, "", line); split(line, f, " ")
	pass += f[3] - f[5] - f[7]
	next
}
/^[^ :]+\.c:[0-9]+:[FE]:[^:]*:[^:]*:[0-9]+:/ {
	split($0, f, ":")
	file = f[1]; sub(/.*\//, "", file)
	prog = file; sub(/\.c$/, "", prog)
	checkfailed[prog] = 1
	ncheck++
	fail("unit " file ": " f[5] (f[6] != "0" ? " (loop " f[6] ")" : ""))
	next
}

# bats (TAP): the file of a failing test is on a comment line under it.
/^ok [0-9]+ .*# [Ss][Kk][Ii][Pp]/ { skip++; pending = ""; next }
/^ok [0-9]+/ { pass++; pending = ""; next }
/^not ok [0-9]+ / {
	if (pending != "")
		fail("cli " pending)
	pending = $0; sub(/^not ok [0-9]+ /, "", pending)
	batsfailed = 1
	next
}
pending != "" && /^# .*in test file / {
	file = $0
	sub(/.*in test file /, "", file); sub(/, line [0-9]+\)$/, "", file)
	fail("cli " file ": " pending)
	pending = ""
	next
}
pending != "" && !/^#/ { fail("cli " pending); pending = "" }

# The examples: "test-outbox: ok: ..." or "test-kafka: SKIP: ...".
/^test-[a-z0-9-]+: ok: / { pass++; next }
/^test-[a-z0-9-]+: SKIP: / { skip++; next }

# A unit test written and never registered (tests/unit/registered.sh).
/ is never added to a test case / { ncheck++; fail("unit " $1 " " $3 " never runs"); next }

# make: "make[1]: *** [Makefile:57: check-test-outbox] Error 1".
/^make(\[[0-9]+\])?: \*\*\* \[[^]]*\] / {
	s = $0; sub(/^[^*]*\*\*\* \[/, "", s)
	target = s; sub(/\].*/, "", target); sub(/^.*:[0-9]+: /, "", target)
	err = s; sub(/^[^]]*\] /, "", err)
	if (target ~ /^check-test-/) {
		sub(/^check-/, "", target)
		fail("example " target)
	} else if (target !~ /^(check|check-default|check-sanitize|check-nozstd|check-examples|check-fuzz|examples|check-unit|check-cli)$/) {
		fail("make " target ": " err)
	} else if (target == "check-unit" || target == "check-cli") {
		makefailed[target] = err
	}
	next
}

END {
	if (pending != "")
		fail("cli " pending)
	for (prog in unitfailed)
		if (!(prog in checkfailed))
			fail("unit " prog ": " unitfailed[prog] ", no Check failure line (see its output)")
	# check-unit or check-cli failed with no test named: say so.
	if ("check-unit" in makefailed && !nunit && !ncheck)
		fail("make check-unit: " makefailed["check-unit"])
	if ("check-cli" in makefailed && !batsfailed)
		fail("make check-cli: " makefailed["check-cli"])
	print pass + 0, nnames + 0, skip + 0
	for (i = 1; i <= nnames; i++)
		print names[i]
}
