#!/usr/bin/env bash
# check.sh: libelog.a exports only the public names of elog.h.
#
#   tests/symbols/check.sh LIBRARY HEADER
#
# Every global symbol the library defines must be either a function or
# variable declared in the header (elog_...), or an internal one with the
# reserved prefix elog__, which the header never names.  Prints each symbol
# that breaks the rule and exits 1; exits 0 when there is none.
set -euo pipefail

lib=${1:?usage: check.sh LIBRARY HEADER}
hdr=${2:?usage: check.sh LIBRARY HEADER}

public=$(grep -oE '\belog_[a-z0-9_]+[[:space:]]*\(' "$hdr" | tr -d '( \t' | sort -u)
defined=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u)

[ -n "$defined" ] || { echo "check.sh: $lib defines no symbol" >&2; exit 1; }

bad=0
while read -r sym; do
	case $sym in
	elog__*) continue ;;
	esac
	if ! grep -qxF "$sym" <<<"$public"; then
		echo "check.sh: $lib: global symbol '$sym' is neither declared in $hdr nor prefixed elog__" >&2
		bad=1
	fi
done <<<"$defined"

if grep -n '\belog__' "$hdr" >&2; then
	echo "check.sh: $hdr names internal (elog__) symbols" >&2
	bad=1
fi
[ "$bad" -eq 0 ] && echo "symbols: $(wc -l <<<"$defined") global symbols of $lib, all public or elog__"
exit "$bad"
