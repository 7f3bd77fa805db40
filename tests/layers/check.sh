#!/usr/bin/env bash
# check.sh: no file of lib/ calls a file of a higher layer.
#
#   tests/layers/check.sh OBJDIR ORDER
#   tests/layers/check.sh --self-test
#
# Reads, with nm(1), which global elog_ and elog__ functions each OBJDIR/*.o
# defines and which it calls, and ORDER (tests/layers/order: one layer a
# line, lowest first, files on one line being one object in two files).
# Prints each call from a lower layer to a higher one, and each object
# ORDER does not name (or names twice, or names without an object), and
# exits 1; exits 0 when there is none.  --self-test builds a pair of tiny
# objects that break the rule and checks that the check says so.
set -euo pipefail

me=check.sh

self_test() {
	local rc out
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	mkdir "$t/o"
	printf 'int elog__low(int x);\nint elog__high(int x);\nint elog__high(int x) { return elog__low(x) + 1; }\n' >"$t/high.c"
	printf 'int elog__low(int x);\nint elog__low(int x) { return x; }\n' >"$t/low.c"
	# The planted violation: low calls high.
	printf 'int elog__high(int x);\nint elog__low2(int x);\nint elog__low2(int x) { return elog__high(x); }\n' >"$t/bad.c"
	for f in high low; do
		${CC:-cc} -c -o "$t/o/$f.o" "$t/$f.c"
	done
	printf 'low\nhigh\n' >"$t/order"
	"$0" "$t/o" "$t/order" >/dev/null || { echo "$me: self-test: a lawful pair failed" >&2; return 1; }
	printf 'high\nlow\n' >"$t/order"
	rc=0; out=$("$0" "$t/o" "$t/order" 2>&1) || rc=$?
	[ "$rc" -eq 1 ] && grep -qF "high.o calls elog__low of low.o, a higher layer" <<<"$out" ||
		{ echo "$me: self-test: an upward call was not named: $out" >&2; return 1; }
	${CC:-cc} -c -o "$t/o/bad.o" "$t/bad.c"
	printf 'bad\nlow\nhigh\n' >"$t/order"
	rc=0; out=$("$0" "$t/o" "$t/order" 2>&1) || rc=$?
	[ "$rc" -eq 1 ] && grep -qF "bad.o calls elog__high of high.o, a higher layer" <<<"$out" ||
		{ echo "$me: self-test: the planted call was not named: $out" >&2; return 1; }
	printf 'low\nhigh\n' >"$t/order"
	rc=0; out=$("$0" "$t/o" "$t/order" 2>&1) || rc=$?
	[ "$rc" -eq 1 ] && grep -qF "bad.o is not named in" <<<"$out" ||
		{ echo "$me: self-test: an unlisted object passed: $out" >&2; return 1; }
	printf 'low high\nbad\n' >"$t/order"
	"$0" "$t/o" "$t/order" >/dev/null ||
		{ echo "$me: self-test: calls within one line failed" >&2; return 1; }
	echo "layers: self-test passed (an upward call, an unlisted object and a lawful pair)"
}

if [ "${1:-}" = --self-test ]; then
	self_test
	exit
fi

dir=${1:?usage: check.sh OBJDIR ORDER | --self-test}
order=${2:?usage: check.sh OBJDIR ORDER | --self-test}

shopt -s nullglob
objs=("$dir"/*.o)
[ "${#objs[@]}" -gt 0 ] || { echo "$me: $dir holds no object" >&2; exit 1; }

# rank of each name: its line among the lines that name files.
declare -A rank
bad=0 n=0
while read -r line; do
	line=${line%%#*}
	[ -n "${line// /}" ] || continue
	n=$((n + 1))
	for f in $line; do
		if [ -n "${rank[$f]:-}" ]; then
			echo "$me: $order names $f twice" >&2
			bad=1
		fi
		rank[$f]=$n
		[ -e "$dir/$f.o" ] || { echo "$me: $order names $f, but there is no $dir/$f.o" >&2; bad=1; }
	done
done <"$order"

# "D obj sym" for each elog_ symbol defined, "U obj sym" for each used.
syms=$(for o in "${objs[@]}"; do
	b=${o##*/}; b=${b%.o}
	nm "$o" | awk -v o="$b" '
		NF == 3 && $2 ~ /^[A-TV-Z]$/ && $3 ~ /^elog_/ { print "D", o, $3 }
		NF == 2 && $1 == "U" && $2 ~ /^elog_/ { print "U", o, $2 }'
done)

for o in "${objs[@]}"; do
	b=${o##*/}; b=${b%.o}
	[ -n "${rank[$b]:-}" ] || { echo "$me: $b.o is not named in $order: give it its layer" >&2; bad=1; }
done

# "caller callee symbol" for each call between objects.
calls=$(awk '$1 == "D" { def[$3] = $2; next }
	{ u[++n] = $2 " " $3 }
	END { for (i = 1; i <= n; i++) { split(u[i], a, " ");
		if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]], a[2] } }' <<<"$syms" | sort -u)

ncalls=0
while read -r from to sym; do
	[ -n "$from" ] || continue
	ncalls=$((ncalls + 1))
	rf=${rank[$from]:-} rt=${rank[$to]:-}
	[ -n "$rf" ] && [ -n "$rt" ] || continue
	if [ "$rt" -gt "$rf" ]; then
		echo "$me: $from.o calls $sym of $to.o, a higher layer (layer $rf of $order calls layer $rt)" >&2
		bad=1
	fi
done <<<"$calls"

[ "$bad" -eq 0 ] && echo "layers: ${#objs[@]} objects, $ncalls functions one calls of another, none of a higher layer"
exit "$bad"
