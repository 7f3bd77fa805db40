#!/usr/bin/env bats
# The writers against what the field does to them, with real filesystems
# where the machine allows it (root, loop devices): a writeback error the
# kernel reports once, taken by a writer that dies or stops before it can
# say so; a full btrfs; the file "writers" made immutable, truncated or
# removed; `ulimit -f`; offsets at the end of their range; a count left on
# the doorbell by a waiter killed with -9.  Each ends with nothing
# acknowledged lost and no process of ours dead of a signal.

load helpers

MOUNTS=
LOOPDEV=

# Mount a $1 filesystem (ext4, btrfs) of $2 MiB, made on an image in a
# tmpfs of $3 MiB at $T/t, at $T/m with options $4; skip where the machine
# cannot (not root, no loop device, no mkfs).
loop_mount() {
	[ "$EUID" -eq 0 ] || skip "needs root, for loop devices"
	command -v losetup >/dev/null || skip "losetup is not installed"
	mkdir -p "$T/t" "$T/m"
	mount -t tmpfs -o "size=${3}m" tmpfs "$T/t" || skip "cannot mount a tmpfs"
	MOUNTS="$T/t"
	truncate -s "${2}M" "$T/t/img"
	case $1 in
	ext4) mkfs.ext4 -q -O ^has_journal -E nodiscard "$T/t/img" || skip "mkfs.ext4 failed" ;;
	btrfs)
		command -v mkfs.btrfs >/dev/null || skip "btrfs-progs is not installed"
		mkfs.btrfs -q "$T/t/img" >/dev/null || skip "mkfs.btrfs failed"
		;;
	esac
	LOOPDEV=$(losetup -f --show "$T/t/img") || skip "no loop device"
	mount -o "$4" "$LOOPDEV" "$T/m" || skip "cannot mount $1"
	MOUNTS="$T/m $MOUNTS"
}

teardown_test() {
	local m pid
	# A writer stopped by a test is let go, so that it can be killed.
	for pid in $BG_PIDS; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	for m in $MOUNTS; do
		if [ "$m" = "$T/t" ] && [ -n "$LOOPDEV" ]; then
			losetup -d "$LOOPDEV" 2>/dev/null || true
		fi
		umount -l "$m" 2>/dev/null || true
	done
}

# Lines of about 1 KiB, enough for several batches.
data() {
	head -c "$1" /dev/urandom | base64 -w 1000
}

# A real writeback error (ext4 on a loop device whose tmpfs is full), taken
# by a writer that is killed (kill-on-error) or stopped (stop-on-error) at
# the first moment after the failed call: the next writer must cut back to
# the watermark, never publish the dropped records on the strength of its
# own sync (the error is reported once; its description never sees it).
# A log on ext4 whose device's tmpfs is full ($T/t/fill), and 3 MB of
# lines to append to it in $T/data: its writeback fails.
full_device_log() {
	loop_mount ext4 64 12 errors=continue
	LOG=$T/m/log
	echo first | elog-append "$LOG"
	dd if=/dev/zero of="$T/t/fill" bs=1M 2>/dev/null || true
	data 3000000 >"$T/data"
}

@test "a real writeback error, its writer killed before it returns: the next writer cuts back" {
	full_device_log
	run env LD_PRELOAD="$ELOG_BIN/tests/syncfault.so" ELOG_TEST_SYNC_FAULT=kill-on-error \
		ASAN_OPTIONS=verify_asan_link_order=0 elog-append -p "$LOG" <"$T/data"
	[ "$status" -eq 137 ] || skip "no writeback error on this machine (status $status)"
	acked=${#lines[@]}
	rm "$T/t/fill"
	run elog-append -p "$LOG" <<<"next"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"a writer's fdatasync failed: the records after offset $((acked + 1)), which were never acknowledged, were cut"* ]]
	[ "${lines[1]}" = $((acked + 1)) ]
}

@test "a real writeback error, its writer stopped: others time out naming it, and cut once it is gone" {
	full_device_log
	LD_PRELOAD="$ELOG_BIN/tests/syncfault.so" ELOG_TEST_SYNC_FAULT=stop-on-error \
		ASAN_OPTIONS=verify_asan_link_order=0 background elog-append -p "$LOG" <"$T/data" >"$T/a.off"
	pid=${BG_PIDS##* }
	end=$((${EPOCHREALTIME/[.,]/} + 30000000))
	until grep -q '^State:.*stopped' "/proc/$pid/status" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || skip "no writeback error on this machine"
		[ "${EPOCHREALTIME/[.,]/}" -lt "$end" ]
		nap 0.05
	done
	acked=$(wc -l <"$T/a.off")
	rm "$T/t/fill"
	# Stopped with LOCK, it is named with the command that resumes it;
	# stopped in a sync outside it, its pending record makes the next
	# writer cut back to the watermark and write after it.
	run elog-append -p --wait 300ms "$LOG" <<<"waits"
	if [ "$status" -eq 3 ]; then
		[[ "$output" == *"it is stopped: kill -CONT $pid resumes it"* ]]
		want=next
	else
		[ "$status" -eq 0 ]
		[ "${lines[-1]}" = $((acked + 1)) ]
		want=$'waits\nnext'
	fi
	# Gone without a word: its record says the sync may have failed.
	kill -KILL "$pid"
	wait "$pid" || true
	run elog-append -p "$LOG" <<<"next"
	[ "$status" -eq 0 ]
	[ "$(elog-cat -o $((acked + 1)) -v "$LOG")" = "$want" ]
	elog-verify "$LOG"
}

# The same windows with the fault shim, on any machine: killed after the
# failed call; stopped after it and resumed later (its batch is never
# acknowledged, and the writers beside it go on).
@test "a failed sync whose writer stops: resumed, it acknowledges nothing, and the log verifies" {
	echo first | elog-append "$LOG"
	LD_PRELOAD="$ELOG_BIN/tests/syncfault.so" ELOG_TEST_SYNC_FAULT=eio-stop \
		ASAN_OPTIONS=verify_asan_link_order=0 background elog-append -p "$LOG" <<<"lost" \
		>"$T/a.off" 2>"$T/a.err"
	pid=${BG_PIDS##* }
	end=$((${EPOCHREALTIME/[.,]/} + 30000000))
	until grep -q '^State:.*stopped' "/proc/$pid/status" 2>/dev/null; do
		[ "${EPOCHREALTIME/[.,]/}" -lt "$end" ]
		nap 0.05
	done
	kill -CONT "$pid"
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 5 ]
	[ ! -s "$T/a.off" ]
	grep -q "nothing of this batch was acknowledged" "$T/a.err"
	run elog-append -p "$LOG" <<<"next"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = 1 ]
	[ "$(elog-cat -v "$LOG")" = $'first\nnext' ]
	elog-verify "$LOG"
}

# A full btrfs: copy-on-write, so that even a store into an allocated page
# of a mapped file needs a block.  No writer dies of a signal: each says
# what failed and exits 5, and once space is freed they write again.
@test "a full btrfs: writers fail with a message, none dies of a signal, and they go on after" {
	loop_mount btrfs 160 256 defaults
	LOG=$T/m/log
	echo first | elog-append "$LOG"
	dd if=/dev/zero of="$T/m/fill" bs=1M 2>/dev/null || true
	sync
	for i in 1 2 3; do
		run elog-append -p "$LOG" < <(data 200000)
		[ "$status" -lt 128 ]
	done
	rm "$T/m/fill"
	sync
	run elog-append -p "$LOG" <<<"after"
	[ "$status" -eq 0 ]
	[ "$(elog-cat -o "${lines[-1]}" -v "$LOG")" = after ]
	elog-verify "$LOG"
}

# "writers" is a listing only: immutable, emptied or removed under open
# writers, it kills none and lets no second writer in beside an
# exclusive one.
@test "\"writers\" made immutable, truncated or removed: writers go on, exclusivity holds" {
	[ "$EUID" -eq 0 ] || skip "chattr +i needs root"
	echo first | elog-append "$LOG"
	chattr +i "$LOG/writers" 2>/dev/null || skip "no chattr +i on this filesystem"
	run elog-append -p "$LOG" <<<"immutable"
	chattr -i "$LOG/writers"
	[ "$status" -eq 0 ] && [ "$output" = 1 ]
	mkfifo "$T/in"
	exec 4<>"$T/in"
	background elog-append -p --exclusive "$LOG" <"$T/in" >"$T/a.off" 2>"$T/a.err" 4>&-
	echo x >&4
	wait_lines "$T/a.off" 1
	: >"$LOG/writers"
	run elog-append "$LOG" <<<"intruder"
	[ "$status" -eq 3 ]
	rm "$LOG/writers"
	run elog-append "$LOG" <<<"intruder"
	[ "$status" -eq 3 ]
	echo y >&4
	wait_lines "$T/a.off" 2
	exec 4>&-
	wait "${BG_PIDS##* }"
	[ "$(elog-cat -v "$LOG")" = $'first\nimmutable\nx\ny' ]
}

@test "ulimit -f: a segment that cannot grow is an error with a message, status 5" {
	run bash -c 'ulimit -f 64; seq 1 100000 | elog-append "$1"' _ "$LOG"
	[ "$status" -eq 5 ]
	[[ "$output" == *"file too large"* ]]
	# LOCK is free: the next writer, without the limit, goes on.
	run elog-append -p "$LOG" <<<"after"
	[ "$status" -eq 0 ]
	elog-verify "$LOG"
}

@test "offsets stay below 2^63: --keep-offsets refuses one at or above it" {
	run elog-append --json --keep-offsets "$LOG" \
		<<<'{"offset":18446744073709551614,"value":"x"}'
	[ "$status" -eq 2 ]
	[[ "$output" == *"offset 18446744073709551614 is out of range: offsets stay below 9223372036854775808"* ]]
	printf '%s\n' '{"offset":9223372036854775806,"value":"last"}' |
		elog-append --json --keep-offsets "$LOG"
	run elog-append -p "$LOG" <<<"one more"
	[ "$status" -eq 0 ] && [ "$output" = 9223372036854775807 ]
	run elog-append -p "$LOG" <<<"none"
	[ "$status" -ne 0 ]
	[[ "$output" == *"offset 9223372036854775808 is out of range"* ]]
	elog-verify "$LOG"
}
