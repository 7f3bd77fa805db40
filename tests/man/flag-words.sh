#!/bin/sh
# flag-words.sh: no plain word of a man page is set as a flag.  In mdoc
# every argument of Fl up to the next macro or delimiter is a flag, so
# ".Pq after Fl k has filtered them" renders as "after -k -has -filtered
# -them": a word after a flag needs No (or another macro) before it.
# Reported: a lowercase word of two letters or more among the arguments
# of Fl after its first (single letters are flags written together, as
# "Fl a b"), outside literal displays (.Bd ... .Ed).
# Usage: tests/man/flag-words.sh PAGE...; exit 1 when one is found.
set -eu
awk '
function is_macro(t) {
	return t ~ /^(Ap|Ar|Aq|Bq|Brq|Cm|Dq|Dv|Em|Er|Ev|Fa|Fl|Fn|Ic|Li|Nm|No|Ns|Oc|Oo|Op|Pa|Pc|Pf|Po|Pq|Ql|Qq|Sq|Sx|Sy|Ta|Va|Xr)$/
}
function is_delim(t) { return t ~ /^[,.;:()|!?\[\]]+$/ }
FNR == 1 { lit = 0 }
/^\.Bd/ { lit = 1 }
/^\.Ed/ { lit = 0 }
/^\./ && !lit {
	n = split(substr($0, 2), tok, /[ \t]+/)
	for (i = 1; i <= n; i++) {
		if (tok[i] != "Fl")
			continue
		for (j = i + 1; j <= n && !is_macro(tok[j]) && !is_delim(tok[j]); j++)
			if (j > i + 1 && tok[j] ~ /^[a-z][a-z]+$/) {
				printf "%s:%d: \"%s\" is set as a flag (put No before it): %s\n",
				       FILENAME, FNR, tok[j], $0
				bad = 1
			}
		i = j - 1
	}
}
END { exit bad }
' "$@"
