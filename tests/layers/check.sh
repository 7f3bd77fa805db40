#!/usr/bin/env bash
# check.sh: no file of lib/ calls a file of a higher layer.
#
#   tests/layers/check.sh OBJDIR ORDER
#   tests/layers/check.sh --headers LIBDIR HEADERS
#   tests/layers/check.sh --self-test
#
# Reads, with nm(1), which global elog_ and elog__ functions each OBJDIR/*.o
# defines and which it calls, and ORDER (tests/layers/order: one layer a
# line, lowest first, files on one line being one object in two files).
# Prints each call from a lower layer to a higher one, and each object
# ORDER does not name (or names twice, or names without an object), and
# exits 1; exits 0 when there is none.  --headers holds the headers of
# LIBDIR to HEADERS (tests/layers/headers, the same form): it prints each
# header that includes one of a higher layer, each header HEADERS does not
# name, and each LIBDIR/*.c that includes internal.h (the tests' umbrella).
# --self-test builds a pair of tiny objects, and a pair of headers, that
# break the rules and checks that the check says so.
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
	mkdir "$t/h"
	printf '#include <stdio.h>\n' >"$t/h/low.h"
	printf '#include "low.h"\n' >"$t/h/high.h"
	printf '#include "low.h"\n#include "high.h"\n' >"$t/h/a.c"
	printf 'low.h\nhigh.h\n' >"$t/headers"
	"$0" --headers "$t/h" "$t/headers" >/dev/null ||
		{ echo "$me: self-test: a lawful pair of headers failed" >&2; return 1; }
	printf '#include "high.h"\n' >>"$t/h/low.h"
	rc=0; out=$("$0" --headers "$t/h" "$t/headers" 2>&1) || rc=$?
	[ "$rc" -eq 1 ] && grep -qF "low.h includes high.h, a higher layer" <<<"$out" ||
		{ echo "$me: self-test: an upward include was not named: $out" >&2; return 1; }
	printf '#include "low.h"\n' >"$t/h/low.h"
	printf 'int x;\n' >"$t/h/stray.h"
	rc=0; out=$("$0" --headers "$t/h" "$t/headers" 2>&1) || rc=$?
	[ "$rc" -eq 1 ] && grep -qF "stray.h is not named in" <<<"$out" ||
		{ echo "$me: self-test: an unlisted header passed: $out" >&2; return 1; }
	rm "$t/h/stray.h"
	printf 'low.h\nhigh.h\ninternal.h\n' >"$t/headers"
	printf '#include "high.h"\n' >"$t/h/internal.h"
	printf '#include "internal.h"\n' >>"$t/h/a.c"
	rc=0; out=$("$0" --headers "$t/h" "$t/headers" 2>&1) || rc=$?
	[ "$rc" -eq 1 ] && grep -qF "a.c includes internal.h" <<<"$out" ||
		{ echo "$me: self-test: a file including internal.h passed: $out" >&2; return 1; }
	echo "layers: self-test passed (an upward call, an unlisted object and a lawful pair;" \
		"an upward include, an unlisted header, internal.h in lib/ and a lawful pair)"
}

# rank[NAME]: the line of LIST that names it, among the lines that name
# files; sets bad when LIST names one twice or DIR has no DIR/NAME.
declare -A rank
bad=0
read_ranks() {
	local list=$1 dir=$2 ext=$3 line f n=0
	while read -r line; do
		line=${line%%#*}
		[ -n "${line// /}" ] || continue
		n=$((n + 1))
		for f in $line; do
			if [ -n "${rank[$f]:-}" ]; then
				echo "$me: $list names $f twice" >&2
				bad=1
			fi
			rank[$f]=$n
			[ -e "$dir/$f$ext" ] ||
				{ echo "$me: $list names $f, but there is no $dir/$f$ext" >&2; bad=1; }
		done
	done <"$list"
}

headers() {
	local dir=$1 list=$2 h b inc c nh=0 ninc=0
	read_ranks "$list" "$dir" ""
	shopt -s nullglob
	for h in "$dir"/*.h; do
		b=${h##*/}
		nh=$((nh + 1))
		[ -n "${rank[$b]:-}" ] ||
			{ echo "$me: $b is not named in $list: give it its layer" >&2; bad=1; continue; }
		while read -r inc; do
			ninc=$((ninc + 1))
			if [ -z "${rank[$inc]:-}" ]; then
				echo "$me: $b includes $inc, which $list does not name" >&2
				bad=1
			elif [ "${rank[$inc]}" -gt "${rank[$b]}" ]; then
				echo "$me: $b includes $inc, a higher layer (line ${rank[$b]} of $list includes line ${rank[$inc]})" >&2
				bad=1
			fi
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$h")
	done
	for c in "$dir"/*.c; do
		if grep -q '^[[:space:]]*#[[:space:]]*include[[:space:]]*"internal\.h"' "$c"; then
			echo "$me: ${c##*/} includes internal.h, the tests' umbrella: include the headers it uses" >&2
			bad=1
		fi
	done
	[ "$bad" -eq 0 ] && echo "layers: $nh headers, $ninc includes of one by another, none of a higher layer"
	exit "$bad"
}

if [ "${1:-}" = --self-test ]; then
	self_test
	exit
fi
if [ "${1:-}" = --headers ]; then
	headers "${2:?usage: check.sh --headers LIBDIR HEADERS}" "${3:?usage: check.sh --headers LIBDIR HEADERS}"
fi

dir=${1:?usage: check.sh OBJDIR ORDER | --headers LIBDIR HEADERS | --self-test}
order=${2:?usage: check.sh OBJDIR ORDER | --headers LIBDIR HEADERS | --self-test}

shopt -s nullglob
objs=("$dir"/*.o)
[ "${#objs[@]}" -gt 0 ] || { echo "$me: $dir holds no object" >&2; exit 1; }

read_ranks "$order" "$dir" .o

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
