#!/usr/bin/env bats
# Many writers at once: one-shot and long-running elog-append processes on
# one log; stop signals; a reader of the offsets that goes away; the cost
# of a one-shot append into a healthy log.

load helpers

# A writer a test stopped is not left behind should the test fail.
teardown_test() {
	[ -n "${STOPPED:-}" ] && kill -KILL "$STOPPED" 2>/dev/null || true
}

# Wait until the fifo open on fd 4 holds no unread byte: the writer reading
# it has read(2) everything written so far.  At most 60 s.
fifo_drained() {
	python3 -c '
import fcntl, struct, sys, termios, time
for _ in range(6000):
    n = struct.unpack("i", fcntl.ioctl(4, termios.FIONREAD, b"\0\0\0\0"))[0]
    if n == 0:
        sys.exit(0)
    time.sleep(0.01)
sys.exit(1)'
}

# One shell loop: $2 runs of elog-append -p, each of a single line or a
# batch of up to 20, every line unique; "offset line" pairs go to $3.
writer_loop() {
	local id=$1 runs=$2 out=$3 i n k
	for ((i = 0; i < runs; i++)); do
		n=$(( (i * 7 + id) % 4 == 0 ? 1 + (i * 13 + id) % 20 : 1 ))
		for ((k = 0; k < n; k++)); do
			echo "w$id-$i-$k"
		done > "$T/in.$id"
		elog-append -p "$LOG" < "$T/in.$id" > "$T/off.$id" || {
			echo "loop $id run $i: status $?" >> "$T/failed"
			return 1
		}
		paste -d' ' "$T/off.$id" "$T/in.$id" >> "$out"
	done
}

@test "many writers: 8 loops and a lingering writer, dense unique offsets, nothing lost" {
	echo start | elog-append --segment-bytes 16K "$LOG"
	echo "0 start" > "$T/pairs.base"
	# The long-running writer, fed slowly, holding batches open.
	mkfifo "$T/slow"
	exec 4<>"$T/slow"
	background elog-append -p --linger 300ms "$LOG" <"$T/slow" >"$T/slow.off" 4>&-
	local slow=${BG_PIDS##* }
	for i in 1 2 3 4 5 6 7 8; do
		writer_loop "$i" 25 "$T/pairs.$i" &
		pids="${pids:-} $!"
	done
	for i in $(seq 1 30); do
		echo "slow-$i" >&4
		echo "slow-$i" >> "$T/slow.in"
		nap 0.05
	done
	for p in $pids; do
		wait "$p" || true
	done
	exec 4>&-
	wait "$slow"
	BG_PIDS=
	[ ! -e "$T/failed" ] || { cat "$T/failed"; false; }
	paste -d' ' "$T/slow.off" "$T/slow.in" > "$T/pairs.slow"
	cat "$T"/pairs.* | sort -n > "$T/acked"
	local total
	total=$(wc -l < "$T/acked")
	[ "$total" -gt 300 ]
	# Offsets are 0..N-1, each once, and each holds the line it was
	# printed for.
	cut -d' ' -f1 "$T/acked" | cmp - <(seq 0 $((total - 1)))
	elog-cat -F '%o %s\n' "$LOG" | cmp - "$T/acked"
	run elog-verify "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
}

@test "many writers: SIGTERM, SIGINT and SIGHUP append what was read, then die of the signal" {
	for sig in TERM INT HUP; do
		rm -rf "$LOG"
		mkfifo "$T/in.$sig"
		exec 4<>"$T/in.$sig"
		elog-append -p --linger 60s "$LOG" <"$T/in.$sig" >"$T/out" 4>&- &
		local pid=$!
		printf 'one\ntwo\nthree-no-newline' >&4
		fifo_drained
		kill -s "$sig" "$pid"
		local status=0
		wait "$pid" || status=$?
		exec 4>&-
		[ "$status" -eq $((128 + $(kill -l "$sig"))) ]
		[ "$(cat "$T/out")" = $'0\n1\n2' ]
		[ "$(elog-cat -v "$LOG")" = $'one\ntwo\nthree-no-newline' ]
	done
}

@test "many writers: a reader of -p that goes away does not stop the appending" {
	run bash -c "seq 1 100000 | elog-append -p '$LOG' | head -1; echo \"status \${PIPESTATUS[1]}\""
	[ "$output" = $'0\nstatus 0' ]
	[ "$(elog-cat -v "$LOG" | wc -l)" -eq 100000 ]
	[ "$(elog-cat -v -n 1 "$LOG")" = 100000 ]
}

@test "many writers: one line into a healthy log costs one fdatasync, no fsync, no rename" {
	command -v strace >/dev/null || skip "strace is not installed"
	printf 'a\nb\n' | elog-append --segment-bytes 4K "$LOG"
	echo c | elog-append "$LOG"
	echo d | ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=fsync,fdatasync,rename,renameat,renameat2,ftruncate \
		-o "$T/trace" elog-append "$LOG"
	grep -c fdatasync "$T/trace" | grep -qx 1
	! grep -E 'fsync\(|rename|ftruncate' "$T/trace"
	[ "$(elog-cat -v "$LOG")" = $'a\nb\nc\nd' ]
	# A tail past the durable end (a writer killed mid-batch) is still
	# recovered: cut, and synced.
	printf 'torn' >> "$LOG/00000000000000000000.log"
	: > "$LOG/LOCK"
	echo e | ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=fdatasync,ftruncate -o "$T/trace2" elog-append "$LOG"
	grep -q ftruncate "$T/trace2"
	[ "$(elog-cat -v "$LOG")" = $'a\nb\nc\nd\ne' ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
}

# Hold an open file description write lock on byte $1 of $LOG/LOCK (a sync
# slot of elog(5)) until $T/slot.go is removed; $T/slot.held appears once
# it is held.
hold_lock_byte() {
	python3 -c '
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, int(sys.argv[2]), 1, 0))
open(sys.argv[3] + "/slot.held", "w").close()
while os.path.exists(sys.argv[3] + "/slot.go"):
    time.sleep(0.01)' "$LOG/LOCK" "$1" "$T"
}

# Return once a process holds byte $1 of LOCK (hold_lock_byte), until
# $T/slot.go is removed.
lock_byte_held() {
	touch "$T/slot.go"
	hold_lock_byte "$1" &
	BG_PIDS="$BG_PIDS $!"
	wait_lines "$T/slot.held" 0
}

@test "many writers: a lone writer takes LOCK once per batch, twice when another's sync runs" {
	command -v strace >/dev/null || skip "strace is not installed"
	echo a | elog-append "$LOG"
	# Alone: one take at open, one for the batch, its sync and publication.
	echo b | ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=flock -o "$T/trace" \
		elog-append -p "$LOG" >"$T/b.off"
	[ "$(cat "$T/b.off")" = 1 ]
	[ "$(grep -c 'LOCK_EX' "$T/trace")" -eq 2 ]
	# Another writer's sync runs (it holds a sync slot): the batch is
	# written, the lock released for the others, and taken again to
	# publish.
	lock_byte_held 16
	echo c | ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=flock -o "$T/trace2" \
		elog-append -p "$LOG" >"$T/c.off"
	rm "$T/slot.go"
	[ "$(cat "$T/c.off")" = 2 ]
	[ "$(grep -c 'LOCK_EX' "$T/trace2")" -eq 3 ]
	[ "$(elog-cat -v "$LOG")" = $'a\nb\nc' ]
	run elog-verify "$LOG"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
}

@test "many writers: a lone writer does not publish past a sync its writer did not live to finish" {
	echo a | elog-append "$LOG"
	# Killed in its fdatasync (the call failed, and the process died
	# before it could say so): its sync record stays pending, and no
	# writer publishes on the strength of its own later sync.
	run env LD_PRELOAD="$ELOG_BIN/tests/syncfault.so" ELOG_TEST_SYNC_FAULT=kill \
		ASAN_OPTIONS=verify_asan_link_order=0 elog-append -p "$LOG" <<<"lost"
	[ "$status" -eq 137 ]
	run elog-append -p "$LOG" <<<"b"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "elog-append: $LOG: a writer's fdatasync failed: the records after offset 1, which were never acknowledged, were cut (32 bytes)" ]
	[ "${lines[1]}" = 1 ]
	[ "$(elog-cat -v "$LOG")" = $'a\nb' ]
	elog-verify "$LOG"
}

# Keep a writer open, idle, so that the log's doorbell (System V shared
# memory that LOCK names, elog(5)) lives between the programs of a test.
keep_bell() {
	mkfifo "$T/bell.in"
	exec 5<>"$T/bell.in"
	background elog-append "$LOG" <"$T/bell.in" 5>&-
	local end=$((${EPOCHREALTIME/[.,]/} + 30000000))
	while [ "$(stat -c %s "$LOG/LOCK")" -lt 1083 ]; do
		[ "${EPOCHREALTIME/[.,]/}" -lt "$end" ] || return 1
		nap 0.01
	done
}

# Write $3 as the word of struct format $2 at byte $1 of the doorbell's
# page; with $4, stamp the 32-bit word at byte $4 with the time now (a
# count is believed only beside a fresh stamp).
set_bell_word() {
	python3 -c '
import ctypes, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
with open(sys.argv[1], "rb") as f:
    f.seek(1024)
    rec = f.read(59).decode()
p = libc.shmat(int(rec.split()[1][3:]), None, 0)
assert p not in (None, ctypes.c_void_p(-1).value), "no doorbell"
def put(at, fmt, v):
    ctypes.memmove(p + at, struct.pack(fmt, v), struct.calcsize(fmt))
put(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
if len(sys.argv) > 5:
    put(int(sys.argv[5]), "<I", int(time.monotonic() * 1000) & 0xffffffff)
libc.shmdt(ctypes.c_void_p(p))' "$LOG/LOCK" "$@"
}

# Set the doorbell's count of waiting followers (the 32-bit word at byte
# 32, its stamp at byte 60) to $1.
set_followers() {
	set_bell_word 32 '<I' "$1" 60
}

@test "many writers: followers are woken after LOCK is released, not while it is held" {
	command -v strace >/dev/null || skip "strace is not installed"
	command -v python3 >/dev/null || skip "python3 is not installed"
	echo a | elog-append "$LOG"
	keep_bell
	# A follower counted on the doorbell: the writer that publishes wakes
	# the followers (a shared futex wake on the page), once it no longer
	# holds LOCK, so that they do not take the processor from the holder.
	set_followers 1
	echo b | ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=flock,futex -o "$T/trace" \
		elog-append -p "$LOG" >"$T/b.off"
	set_followers 0
	exec 5>&-
	[ "$(cat "$T/b.off")" = 1 ]
	# The publication's wake is the only FUTEX_WAKE that is not private;
	# the last flock(2) before it released LOCK.
	grep -q 'FUTEX_WAKE,' "$T/trace"
	last=$(sed -n '/FUTEX_WAKE,/q;/flock(/p' "$T/trace" | tail -1)
	[[ "$last" == *LOCK_UN* ]]
	[ "$(elog-cat -v "$LOG")" = $'a\nb' ]
}

@test "many writers: a count left on the doorbell by a waiter killed with -9 costs no lone writer its fast path" {
	command -v strace >/dev/null || skip "strace is not installed"
	command -v python3 >/dev/null || skip "python3 is not installed"
	echo a | elog-append "$LOG"
	keep_bell
	# Five batch waiters counted (the word at byte 4), and not one of
	# them renewed its stamp (byte 56): they died.  A lone writer still
	# syncs under LOCK, one take per batch (two per batch before).
	set_bell_word 4 '<I' 5
	seq 2 41 | ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=flock -o "$T/trace" \
		elog-append -p --sync "$LOG" >"$T/off"
	exec 5>&-
	[ "$(cat "$T/off")" = "$(seq 1 40)" ]
	[ "$(grep -c LOCK_EX "$T/trace")" -le 42 ]
	[ "$(elog-cat -v "$LOG")" = "$(echo a; seq 2 41)" ]
}

@test "many writers: a sync slot held by a stopped writer costs one wait, not one per batch" {
	command -v strace >/dev/null || skip "strace is not installed"
	command -v python3 >/dev/null || skip "python3 is not installed"
	echo a | elog-append "$LOG"
	keep_bell
	# A writer stopped during its sync (SIGSTOP, a frozen unit, a
	# debugger): it holds the slot, and its cover (the doorbell's 64-bit
	# word at byte 16) names an end every new batch is past.  A batch
	# waits the follow bound once, then syncs under LOCK without the
	# slot; the next ones, seeing the same holder and cover, do so at
	# once.
	lock_byte_held 16
	set_bell_word 16 '<Q' 1
	seq 2 21 | ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=futex -o "$T/trace" \
		elog-append -p --sync "$LOG" >"$T/off"
	rm "$T/slot.go"
	[ "$(cat "$T/off")" = "$(seq 1 20)" ]
	# One wait that timed out (none when the first batch's bound passed
	# before it could sleep, on a busy machine); 20 before.
	[ "$(grep -c ETIMEDOUT "$T/trace")" -le 1 ]
	[ "$(elog-cat -v "$LOG")" = "$(echo a; seq 2 21)" ]
	exec 5>&-
}

@test "many writers: a writer stopped while it holds LOCK is named, with the command that resumes it" {
	command -v strace >/dev/null || skip "strace is not installed"
	echo a | elog-append "$LOG"
	# Alone, a writer syncs with LOCK held: stopped there (as ^Z or
	# SIGSTOP catch it), it keeps every other writer out.
	echo b | ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o /dev/null -e trace=fdatasync \
		-e inject=fdatasync:signal=SIGSTOP:when=1 elog-append -p "$LOG" >"$T/b.off" 3>&- &
	local tracer=$!
	BG_PIDS="$BG_PIDS $tracer"
	STOPPED=$(stopped_child "$tracer")
	[ -n "$STOPPED" ]
	run elog-append --wait 300ms "$LOG" <<<"c"
	kill -CONT "$STOPPED"
	wait "$tracer"
	[ "$status" -eq 3 ]
	[ "$output" = "elog-append: $LOG: timed out after 300 ms waiting for another writer (pid $STOPPED holds or last held LOCK; it is stopped: kill -CONT $STOPPED resumes it)" ]
	[ "$(cat "$T/b.off")" = 1 ]
	[ "$(elog-cat -v "$LOG")" = $'a\nb' ]
}
