#!/usr/bin/env bats
# --help against the man pages: each program's usage names the same flags
# as its man page's SYNOPSIS, word for word; the man page's option list
# documents every flag the program's getopt accepts, no more and no less.
# ELOG_BIN is the build directory.

load helpers

PROGRAMS="elog-append elog-cat elog-commit elog-compact elog-retain elog-verify"
TOP=$BATS_TEST_DIRNAME/../..

# The flags named in a usage text or a rendered SYNOPSIS, one per line,
# sorted: "-0ptv" gives -0 -p -t -v; "--batch-bytes" stays whole.
flags_of_text() {
	grep -oE -- '(^|[][ |])--?[A-Za-z0-9][-A-Za-z0-9]*' |
		sed 's/^[][ |]//' |
		awk '/^--/ { print; next }
		     { for (i = 2; i <= length($0); i++) print "-" substr($0, i, 1) }' |
		sort -u
}

# The flags of the man page's option list: every "Fl" of an ".It Fl" line
# (a flag and its long alias), or only the first of each line with "first".
flags_of_options() {
	sed -n 's/^\.It Fl //p' "$1" | sed 's/\\//g' |
		awk -v first="$2" '{
			line = "Fl " $0
			n = split(line, w, " ")
			for (i = 1; i < n; i++)
				if (w[i] == "Fl" && w[i + 1] != "|") {
					print "-" w[i + 1]
					if (first) break
				}
		}' | sort -u
}

# The flags the program's getopt_long accepts, read from its source: the
# letters of the short option string and the names of the long options.
flags_of_source() {
	local src=$1
	{
		grep -o 'getopt_long(argc, argv, "[^"]*"' "$src" |
			sed 's/.*"\(.*\)"/\1/' | tr -d ':' | grep -o . | sed 's/^/-/'
		awk '/long_options\[\] = \{/, /^\};/' "$src" |
			grep -o '{ "[^"]*"' | sed 's/{ "/--/; s/"$//'
	} | sort -u
}

@test "help: each program's --help names the flags of its SYNOPSIS" {
	command -v mandoc >/dev/null || skip "mandoc is not installed"
	local p usage man
	for p in $PROGRAMS; do
		usage=$("$p" --help | flags_of_text)
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
		usage=$("$p" --help | flags_of_text | grep -vx -- --help)
		doc=$(flags_of_options "$TOP/man/$p.1" first)
		[ "$usage" = "$doc" ] || {
			echo "$p: --help (<) and the option list (>) differ:" >&2
			diff <(echo "$usage") <(echo "$doc") >&2
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
