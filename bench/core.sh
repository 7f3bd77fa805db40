#!/usr/bin/env bash
# bench/core.sh: elog-append and elog-cat against a SQLite table on the same
# machine in the same run.  Prints medians of RUNS runs and their ratios.
#
#   bench/core.sh [RECORDS] [RUNS]       defaults: 1000000 3
#
# Workloads: appending RECORDS lines of ~100-byte JSON from a file
# (elog-append, batched by its group commit; SQLite: one transaction per 1000
# rows, WAL, synchronous=FULL), and reading them all back in order
# (elog-cat -v and elog-cat JSON to /dev/null; SQLite: SELECT ... ORDER BY
# offset through the C API).  Data lives under $BENCH_DIR (default: a
# temporary directory beside the repository, on the same disk).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
RUNS=${2:-3}
B=${B:-build}
make -s B="$B" >/dev/null
cc -O2 -o "$B/sqlite_ref" bench/sqlite_ref.c $(pkg-config --cflags --libs sqlite3)
work=$(mktemp -d "${BENCH_DIR:-$PWD}/.bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++)
  printf "{\"sensor\":\"s-%04d\",\"seq\":%d,\"temp_c\":%.2f,\"humidity\":%.1f,\"site\":\"north-field-07\"}\n",
         i % 1000, i, 15 + (i % 1700) / 100.0, 30 + (i % 500) / 10.0 }' > "$work/input"
bytes=$(wc -c < "$work/input")

now() { date +%s.%N; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
declare -A T
for r in $(seq "$RUNS"); do
	rm -rf "$work/log" "$work/db"*
	t0=$(now); "$B/elog-append" "$work/log" < "$work/input"; t1=$(now)
	T[append]+="$(echo "$t1 - $t0" | bc) "
	t0=$(now); "$B/elog-cat" -v "$work/log" > /dev/null; t1=$(now)
	T[catv]+="$(echo "$t1 - $t0" | bc) "
	t0=$(now); "$B/elog-cat" "$work/log" > /dev/null; t1=$(now)
	T[catjson]+="$(echo "$t1 - $t0" | bc) "
	T[sqlins]+="$("$B/sqlite_ref" insert "$work/input" "$work/db" | cut -d' ' -f2) "
	T[sqlsel]+="$("$B/sqlite_ref" select "$work/db" | cut -d' ' -f2) "
done
m() { printf '%s\n' ${T[$1]} | median; }
rate() { echo "$N / $1" | bc; }
ea=$(m append); ec=$(m catv); ej=$(m catjson); si=$(m sqlins); ss=$(m sqlsel)
printf '%-34s %14s %14s %8s\n' workload "elog rec/s" "sqlite rec/s" ratio
printf '%-34s %14s %14s %8.1f\n' "append $N lines (elog-append)" "$(rate "$ea")" "$(rate "$si")" "$(echo "$si / $ea" | bc -l)"
printf '%-34s %14s %14s %8.1f\n' "read all, elog-cat -v" "$(rate "$ec")" "$(rate "$ss")" "$(echo "$ss / $ec" | bc -l)"
printf '%-34s %14s %14s %8.1f\n' "read all, elog-cat JSON" "$(rate "$ej")" "$(rate "$ss")" "$(echo "$ss / $ej" | bc -l)"
printf 'input %d bytes; elog-append %.0f MB/s; medians of %d runs\n' "$bytes" "$(echo "$bytes / $ea / 1000000" | bc -l)" "$RUNS"
