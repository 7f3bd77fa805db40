#!/bin/sh
# bench/run.sh: build and run the benchmark suite (bench/bench.c) against
# SQLite, with its data on the repository's disk, and clean up after.
#
#   bench/run.sh [--quick | --full] [bench options...]
#   bench/run.sh --long [--long-records N]     (100M records by default)
#
# B names the build directory (default: the one `make builddir` names for
# the flags in the environment, build/ for a default build); the library and
# programs are built there first with `make B=$B`, unless BENCH_BUILT=1 says
# that the caller (`make bench`, with its own HAVE_ZSTD and flags) has just
# done so.  BENCH_DIR overrides where the data goes (default: a temporary directory .bench.XXXXXX in the repository, which
# must not be tmpfs: the figures are about a disk).  The JSON lines go to
# $B/bench.jsonl unless --json is given.  See bench/README.md.
set -eu
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
B=${B:-$($MAKE -s --no-print-directory builddir)}

[ "${BENCH_BUILT:-0}" = 1 ] || $MAKE -s B="$B" all >/dev/null
cflags=$(pkg-config --cflags sqlite3)
libs=$(pkg-config --libs sqlite3)
zlibs=$(sed -n 's/^Libs:.*-pthread *//p' "$B/elog.pc")
# Redis Streams is a peer when hiredis is there (the bench starts its own
# redis-server); without it, the bench says so on each Redis row.
if pkg-config --exists hiredis 2>/dev/null; then
	cflags="$cflags -DHAVE_HIREDIS $(pkg-config --cflags hiredis)"
	libs="$libs $(pkg-config --libs hiredis)"
else
	echo "run.sh: no hiredis (apt-get install libhiredis-dev): the Redis rows are skipped" >&2
fi
# The syncs of the many-writer rows are counted by wrapping fdatasync and
# fsync at link time (libelog.a's calls and the bench's own): a counter,
# nothing that slows the timed loops.  (The flags are lists: split.)
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -g -pthread -Wall -Wextra -Werror -Ilib $cflags \
	-DBENCH_WRAP_SYNCS -Wl,--wrap=fdatasync -Wl,--wrap=fsync \
	-o "$B/bench" bench/bench.c "$B/libelog.a" $libs $zlibs -lm
# The raw one-shot writer the oneshot_raw row times beside elog-append.
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror \
	-o "$B/bench-oneshot-raw" bench/oneshot-raw.c

work=$(mktemp -d "${BENCH_DIR:-$PWD}/.bench.XXXXXX")
# The bench stops its redis-server itself (and the server dies with it:
# PR_SET_PDEATHSIG); should the bench be killed anyway, the server named by
# its pid file is stopped here, if it is still the one serving $work.
# shellcheck disable=SC2317  # called by the trap
cleanup() {
	pidf=$work/redis/redis.pid
	if [ -f "$pidf" ]; then
		pid=$(cat "$pidf")
		if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$work/"; then
			kill "$pid" 2>/dev/null || true
		fi
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
fstype=$(df -PT "$work" | awk 'NR == 2 { print $2 }')
if [ "$fstype" = tmpfs ] && [ -z "${BENCH_DIR:-}" ]; then
	echo "run.sh: $work is on tmpfs; set BENCH_DIR to a directory on a disk" >&2
	exit 2
fi

json=
case " $* " in
*" --json "*) ;;
*) json="--json $B/bench.jsonl" ;;
esac
# The suite bounds itself (alarm), and timeout bounds it once more; the
# long run of --long is bounded by timeout alone.
limit=75m
case " $* " in
*" --long "*) limit=12h ;;
esac
# shellcheck disable=SC2086
timeout $limit "$B/bench" --dir "$work" --bin "$B" $json "$@"
status=$?

# The Python rows (issue 36, bench/python.py): the package installed from
# the tree into a venv in $work, against Python's sqlite3 and, for the
# durable acknowledgements, the same workload in C (bench/ack-threads.c).
# --only runs them when its list names "python"; --long never does.
python_rows=1
prev=
for a in "$@"; do
	[ "$prev" = --only ] && case ",$a," in *,python,*) ;; *) python_rows=0 ;; esac
	[ "$a" = --long ] && python_rows=0
	prev=$a
done
if [ $status -eq 0 ] && [ $python_rows = 1 ]; then
	# shellcheck disable=SC2086
	${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -pthread -Wall -Wextra -Werror -Ilib \
		-o "$B/bench-ack-threads" bench/ack-threads.c "$B/libelog.a" $zlibs
	pyargs=
	prev=
	for a in "$@"; do
		case $a in --quick | --full) pyargs="$pyargs $a" ;; esac
		[ "$prev" = --runs ] && pyargs="$pyargs --runs $a"
		[ "$prev" = --json ] && pyargs="$pyargs --json $a"
		prev=$a
	done
	[ -n "$json" ] && pyargs="$pyargs --json $B/bench.jsonl"
	ELOG_HAVE_ZSTD=$(grep -q -- -lzstd "$B/elog.pc" && echo 1 || echo 0) \
		python/venv.sh "${PYTHON:-python3}" "$work/venv" "$PWD/python" &&
		timeout 30m "$work/venv/bin/python" bench/python.py --dir "$work" \
			--ack-threads "$B/bench-ack-threads" $pyargs
	status=$?
fi
[ -n "$json" ] && echo "JSON lines: $B/bench.jsonl"
exit $status
