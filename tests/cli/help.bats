#!/usr/bin/env bats
# --help against the man pages: each program's usage names the same flags
# as its man page's SYNOPSIS, word for word; the man page's option list
# documents every flag the program's getopt accepts, no more and no less.
# ELOG_BIN is the build directory.

load helpers
load flags

PROGRAMS="elog-append elog-cat elog-commit elog-compact elog-retain elog-verify"
TOP=$BATS_TEST_DIRNAME/../..

@test "help: each program's --help names the flags of its SYNOPSIS" {
	command -v mandoc >/dev/null || skip "mandoc is not installed"
	local p usage man
	for p in $PROGRAMS; do
		usage=$(help_usage "$p" | flags_of_text)
		man=$(MANWIDTH=80 mandoc -T ascii "$TOP/man/$p.1" | col -b |
			sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed '1d;$d' | flags_of_text)
		[ -n "$usage" ] || { echo "$p: no flags in --help" >&2; return 1; }
		[ "$usage" = "$man" ] || {
			echo "$p: --help and SYNOPSIS differ:" >&2
			diff <(echo "$usage") <(echo "$man") >&2
			return 1
		}
	done
}

@test "help: each program's --help is its SYNOPSIS, word for word" {
	command -v mandoc >/dev/null || skip "mandoc is not installed"
	local p
	for p in $PROGRAMS; do
		[ "$(usage_words "$p")" = "$(synopsis_words "$TOP/man/$p.1")" ] || {
			echo "$p: $(usage_words "$p")" >&2
			echo "man: $(synopsis_words "$TOP/man/$p.1")" >&2
			return 1
		}
	done
}

@test "help: the man page documents every flag the program accepts, and no other" {
	local p src doc
	for p in $PROGRAMS; do
		src=$(flags_of_source "$TOP/bin/$p.c")
		doc=$(flags_of_options "$TOP/man/$p.1")
		[ "$(echo "$src" | wc -l)" -ge 4 ] || { echo "$p: flags not found in the source" >&2; return 1; }
		[ "$src" = "$doc" ] || {
			echo "$p: source (<) and man page option list (>) differ:" >&2
			diff <(echo "$src") <(echo "$doc") >&2
			return 1
		}
	done
}

@test "help: --help names each option of the man page's list by its first name" {
	local p usage doc
	for p in $PROGRAMS; do
		usage=$(help_usage "$p" | flags_of_text | grep -vx -- --help)
		doc=$(flags_of_options "$TOP/man/$p.1" first)
		[ "$usage" = "$doc" ] || {
			echo "$p: --help (<) and the option list (>) differ:" >&2
			diff <(echo "$usage") <(echo "$doc") >&2
			return 1
		}
	done
}

@test "help: --help lists each option of the man page's list on one line" {
	local p opts doc n
	for p in $PROGRAMS; do
		opts=$(help_options "$p")
		doc=$(flags_of_options "$TOP/man/$p.1")
		# Every line starts with the option, its names and argument.
		[ -z "$(echo "$opts" | grep -v '^  -')" ] || {
			echo "$p: a line of --help's options is not an option:" >&2
			echo "$opts" | grep -v '^  -' >&2
			return 1
		}
		[ "$(echo "$opts" | cut -c1-29 | flags_of_text)" = "$doc" ] || {
			echo "$p: --help's options (<) and the man page's list (>) differ:" >&2
			diff <(echo "$opts" | cut -c1-29 | flags_of_text) <(echo "$doc") >&2
			return 1
		}
		n=$(grep -c '^\.It Fl ' "$TOP/man/$p.1")
		[ "$(echo "$opts" | wc -l)" -eq "$n" ] || {
			echo "$p: $(echo "$opts" | wc -l) option lines in --help, $n in the man page" >&2
			return 1
		}
	done
}

@test "help: every documented long option is accepted by its program" {
	local p f out
	for p in $PROGRAMS; do
		for f in $(flags_of_options "$TOP/man/$p.1" | grep -- '^--'); do
			out=$("$p" "$f" 2>&1 </dev/null) || true
			case $out in
			*"unknown option"*) echo "$p: $out" >&2; return 1 ;;
			esac
		done
	done
}

@test "help: the flag extraction sees bundles, long options and alternatives" {
	run flags_of_text <<<'usage: x [-0pv] [-K delim | -k key] [--batch-bytes size] zstd[:level] dir-name'
	[ "$output" = "$(printf '%s\n' --batch-bytes -0 -K -k -p -v | sort)" ]
}
