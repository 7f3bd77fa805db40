#!/usr/bin/env bats
# One version everywhere: ELOG_VERSION_STRING in lib/elog.h is the version
# the README states, each program's --version prints, elog(3) gives for
# elog_version(), the build's .pc files carry (the Makefile reads it from
# elog.h) and NEWS has a section for.  ELOG_BIN is the build directory.

load helpers

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
PROGRAMS="elog-append elog-cat elog-commit elog-compact elog-retain elog-verify"

# The version elog.h defines.
version_h() {
	sed -n 's/^#define ELOG_VERSION_STRING "\(.*\)"$/\1/p' "$TOP/lib/elog.h"
}

@test "version: elog.h defines one version, of three numbers" {
	run version_h
	[ "${#lines[@]}" -eq 1 ] && [[ "$output" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "version: the README states elog.h's version" {
	run sed -n 's/^Version \([^:]*\): .*/\1/p' "$TOP/README.md"
	[ "${#lines[@]}" -eq 1 ] && [ "$output" = "$(version_h)" ]
}

@test "version: each program's --version prints elog.h's version" {
	local p v
	v=$(version_h)
	for p in $PROGRAMS; do
		run --separate-stderr "$ELOG_BIN/$p" --version
		[ "$status" -eq 0 ] && [ "$stderr" = "" ] && [ "$output" = "$p (elog) $v" ] || {
			echo "$p --version: $output" >&2
			return 1
		}
	done
}

@test "version: elog.h's comment and elog(3) give elog_version()'s value as elog.h's version" {
	local v
	v=$(version_h)
	run grep -c "^/\* \"$v\" (ELOG_VERSION_STRING" "$TOP/lib/elog.h"
	[ "$output" = 1 ]
	run grep -A2 '^returns the library.s version,$' "$TOP/man/elog.3"
	[ "${lines[1]}" = ".Dq $v ." ]
}

@test "version: the build's elog.pc and elog-uninstalled.pc carry elog.h's version" {
	[ "$(sed -n 's/^Version: //p' "$ELOG_BIN/elog.pc")" = "$(version_h)" ]
	[ "$(sed -n 's/^Version: //p' "$ELOG_BIN/elog-uninstalled.pc")" = "$(version_h)" ]
}

@test "version: the Makefile does not repeat the version" {
	run grep -F "$(version_h)" "$TOP/Makefile"
	[ "$status" -eq 1 ]
}

@test "version: NEWS has a section for elog.h's version, below Unreleased" {
	run grep -E '^(Unreleased|[0-9]+\.[0-9]+\.[0-9]+)( |$)' "$TOP/NEWS"
	[ "${lines[0]}" = Unreleased ]
	[[ "${lines[1]}" == "$(version_h) "* ]]
}
