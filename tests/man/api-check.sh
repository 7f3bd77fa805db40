#!/bin/sh
# api-check.sh: elog(3) and lib/elog.h name the same functions and error
# codes.  elog(3) is the reference; elog.h declares.  Checked:
#   - every function declared in elog.h is in elog(3)'s NAME and SYNOPSIS,
#     and is described (named with .Fn) after the SYNOPSIS;
#   - every function that returns int is named in RETURN VALUES or ERRORS;
#   - every error code of elog.h (a negative #define) has its entry
#     (.It Er CODE) in RETURN VALUES;
#   - every function in elog(3)'s NAME and SYNOPSIS is declared in elog.h,
#     and every code elog(3) marks as an error (Er ELOG_...) is defined
#     there as an error code.
# Usage: tests/man/api-check.sh [elog.h [elog.3]]; exit 1 on a difference.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
hdr=${1:-$top/lib/elog.h}
man=${2:-$top/man/elog.3}
t=$(mktemp -d "${TMPDIR:-/tmp}/api-check.XXXXXX")
trap 'rm -rf "$t"' EXIT

# elog.h, comments removed: functions (a declaration at the start of a
# line, not a typedef), the int ones, the function types, the error codes.
sed -e 's|/\*.*\*/||g' "$hdr" | awk '
	c && /\*\// { c = 0; sub(/.*\*\//, "") }
	c { next }
	/\/\*/ { c = 1; sub(/\/\*.*/, "") }
	{ print }' >"$t/h"
grep -E '^[a-z]' "$t/h" | grep -v '^typedef' |
	sed -nE 's/^(.*[^a-z0-9_])?(elog_[a-z0-9_]+)\(.*/\2 \1/p' >"$t/decl"
cut -d' ' -f1 "$t/decl" | sort -u >"$t/h.fn"
awk '$2 == "int" { print $1 }' "$t/decl" | sort -u >"$t/h.intfn"
sed -nE 's/^typedef .*[^a-z0-9_](elog_[a-z0-9_]+)\(.*/\1/p' "$t/h" | sort -u >"$t/h.type"
sed -nE 's/^#define[[:space:]]+(ELOG_[A-Z0-9_]+)[[:space:]]+\(-[0-9]+\).*/\1/p' "$t/h" |
	sort -u >"$t/h.err"

# elog(3), by section.
awk -v t="$t" '
	/^\.Sh / { sec = $2; next }
	sec == "NAME" && /^\.Nm / { print $2 > (t "/m.name") }
	sec == "SYNOPSIS" && /^\.Ft / { ft = $0 }
	sec == "SYNOPSIS" && /^\.F[no] / {
		print $2 > (t (ft ~ /typedef/ ? "/m.syntype" : "/m.syn"))
	}
	sec != "NAME" && sec != "SYNOPSIS" && /^\.Fn / { print $2 > (t "/m.desc") }
	(sec == "RETURN" || sec == "ERRORS") && /^\.Fn / { print $2 > (t "/m.ret") }
	sec == "RETURN" && /^\.It Er ELOG_/ { print $3 > (t "/m.errdef") }
	{
		for (i = 1; i < NF; i++)
			if ($i == "Er" && $(i + 1) ~ /^ELOG_/)
				print $(i + 1) > (t "/m.err")
	}' "$man"
for f in name syn syntype desc ret errdef err; do
	touch "$t/m.$f"
	sed 's/[^A-Za-z0-9_]*$//' "$t/m.$f" | sort -u >"$t/m.$f.s"
done

bad=0
# $1: what is missing, $2: where, $3 and $4: the lists compared.
missing() {
	comm -23 "$3" "$4" >"$t/diff"
	if [ -s "$t/diff" ]; then
		sed "s|^|api-check: $1 |; s|\$| $2|" "$t/diff" >&2
		bad=1
	fi
}
missing "function" "is not in elog(3) NAME" "$t/h.fn" "$t/m.name.s"
missing "function" "is not in elog(3) SYNOPSIS" "$t/h.fn" "$t/m.syn.s"
missing "function" "is not described in elog(3)" "$t/h.fn" "$t/m.desc.s"
missing "function" "returns int but is not in elog(3) RETURN VALUES or ERRORS" \
	"$t/h.intfn" "$t/m.ret.s"
missing "error code" "has no entry in elog(3) RETURN VALUES" "$t/h.err" "$t/m.errdef.s"
missing "function" "of elog(3) NAME is not declared in elog.h" "$t/m.name.s" "$t/h.fn"
missing "function" "of elog(3) SYNOPSIS is not declared in elog.h" "$t/m.syn.s" "$t/h.fn"
missing "function type" "of elog(3) SYNOPSIS is not declared in elog.h" "$t/m.syntype.s" "$t/h.type"
missing "error code" "named in elog(3) is not an error code of elog.h" "$t/m.err.s" "$t/h.err"
[ $bad -eq 0 ] || exit 1
echo "api-check: $(wc -l <"$t/h.fn") functions and $(wc -l <"$t/h.err") error codes in elog.h and elog(3)"
