#!/usr/bin/env bash
# soak-repro-tmp-leak.sh: found by soak.sh.  A writer killed while it opens
# the log (recover.c rebuilds the active segment's index through
# fs_replace_file) leaves NNN.idx.tmp.PID.N in the log directory.  Nothing
# removed it: not the next writer, not elog-retain when it deletes that
# segment, not elog-compact; elog-verify skips such names.  No record was
# lost, but the files piled up for ever on a log whose writer is killed.
# Fixed: the next writer removes temporary files whose process is dead
# (elog__fs_tmp_orphaned; unit test temporary_files_of_dead_processes_are_removed).
#
# usage: soak-repro-tmp-leak.sh  (programs from $ELOG_BIN, default: the
# repository's build directory, as `make builddir` names it)
# Exit 1 when leftover temporary files outlive their segment, 0 otherwise.

set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${ELOG_BIN:-$repo/$(make -s --no-print-directory -C "$repo" builddir)}
T=$(mktemp -d "${TMPDIR:-/tmp}/elog-tmpleak.XXXXXX")
LOG=$T/log

seq 1 200 | "$BIN/elog-append" --segment-bytes 4K --cleanup compact "$LOG"
# Kill writers just as they start, until one leaves a temporary file.
for i in $(seq 1 400); do
	seq 1 50 | "$BIN/elog-append" "$LOG" 2>/dev/null &
	pid=$!
	sleep "0.00$((i % 3 + 1))"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	ls "$LOG" | grep -q '\.tmp\.' && break
done
echo "after $i killed writers:"
ls "$LOG" | grep '\.tmp\.'
# Roll past that segment, let retention delete everything closed.
seq 1 2000 | "$BIN/elog-append" "$LOG"
"$BIN/elog-retain" --max-bytes 1 "$LOG"
"$BIN/elog-compact" --grace 0s "$LOG"
"$BIN/elog-verify" "$LOG" >/dev/null && echo "elog-verify: clean"
echo "segments left: $(ls "$LOG" | grep -c '\.log$'), first: $(ls "$LOG" | grep '\.log$' | head -n 1)"
left=$(ls "$LOG" | grep '\.tmp\.')
if [ -n "$left" ]; then
	echo "still there after retention deleted their segments:"
	echo "$left"
	rm -rf "$T"
	exit 1
fi
rm -rf "$T"
exit 0
