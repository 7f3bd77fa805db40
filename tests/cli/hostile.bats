#!/usr/bin/env bats
# Hostile and unlucky log directories: every program gives a clear error
# (one line naming the directory, an exit status below 128, within a few
# seconds), never a crash or a hang.  Mounts need root; tests that cannot
# mount say so and skip.  ELOG_BIN is the build directory of the programs.

load helpers

setup_test() {
	# Compact, so that elog-compact gets as far as the files under test.
	seq 1 500 | "$B/elog-append" --segment-bytes 4096 --cleanup compact "$L"
	FIRST=00000000000000000000.log
	ACTIVE=$(cd "$L" && ls *.log | tail -1)
	MNT=
}

teardown_test() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null || true
}

# Run a program with a time limit; a signal or a timeout fails the test.
bounded() {
	run timeout 20 "$@"
	echo "status $status: $output"
	[ "$status" -lt 124 ]
}

# Every program on the log: a clear error or success, never a crash.  The
# writer goes last, since its recovery may change the active segment.
all_programs_cope() {
	bounded "$B/elog-verify" "$L"
	verify_status=$status verify_output=$output
	bounded sh -c "'$B/elog-cat' '$L' >/dev/null"
	cat_status=$status cat_output=$output
	bounded "$B/elog-append" "$L" </dev/null
	append_status=$status
}

mount_tmpfs() {
	MNT=$T/mnt
	mkdir "$MNT"
	mount -t tmpfs -o "size=$1" tmpfs "$MNT" 2>/dev/null || {
		MNT=
		skip "cannot mount a tmpfs here (not root, or no privilege)"
	}
}

@test "a zero-filled file named like a closed segment" {
	head -c 8192 /dev/zero > "$L/00000000000000000100.log"
	all_programs_cope
	[ "$verify_status" -eq 1 ]
	[[ "$verify_output" =~ 00000000000000000100\.log:\ byte\ 0:\ bad\ magic ]]
	# Reading from the start never needs it (the next base is 134), but
	# a reader sent into its range is told what is wrong.
	[ "$cat_status" -eq 0 ]
	run "$B/elog-cat" -o 110 "$L"
	[ "$status" -eq 4 ]
	[ "$output" = "elog-cat: $L: 00000000000000000100.log: bad segment header; run elog-verify $L to see what is damaged" ]
}

@test "a zero-filled file named like a newer segment holds nothing promised" {
	head -c 8192 /dev/zero > "$L/00000000000099999999.log"
	all_programs_cope
	[ "$verify_status" -eq 0 ]
	[[ "$verify_output" =~ 00000000000099999999\.log:\ byte\ 0:\ warning:\ bad\ magic ]]
	[ "$cat_status" -eq 0 ]
	[ "$append_status" -eq 0 ]
}

@test "a random file named like a closed segment" {
	head -c 10000 /dev/urandom > "$L/$FIRST"
	all_programs_cope
	[ "$verify_status" -eq 1 ]
	[ "$cat_status" -eq 4 ]
	[ "$cat_output" = "elog-cat: $L: $FIRST: bad segment header; run elog-verify $L to see what is damaged" ]
}

@test "random bytes after a valid header in every segment" {
	for f in "$L"/*.log; do
		head -c 32 "$f" > "$T/h"
		head -c 3000 /dev/urandom >> "$T/h"
		cat "$T/h" > "$f"
	done
	all_programs_cope
	[ "$verify_status" -eq 1 ]
	[ "$cat_status" -eq 4 ]
}

@test "an empty file named like the active segment" {
	: > "$L/$ACTIVE"
	all_programs_cope
	[ "$verify_status" -eq 1 ]
	[[ "$verify_output" =~ $ACTIVE:\ byte\ 0:\ truncated\ header ]]
	# The watermark vouches for its records: the writer refuses.
	[ "$append_status" -eq 4 ]
}

@test "a truncated closed segment is named with its byte position" {
	truncate -s 1000 "$L/$FIRST"
	all_programs_cope
	[ "$cat_status" -eq 4 ]
	[[ "$cat_output" =~ ^elog-cat:\ $L:\ $FIRST:\ truncated\ record\ at\ byte\ [0-9]+\;\ run\ elog-verify\ $L\ to\ see\ what\ is\ damaged$ ]]
	# A writer appends to the active segment only, so it still works.
	[ "$append_status" -eq 0 ]
	[ "$verify_status" -eq 1 ]
}

@test "truncated and garbage indexes do not stop readers" {
	truncate -s 20 "$L/00000000000000000000.idx"
	head -c 500 /dev/urandom > "$L/${ACTIVE%.log}.idx"
	run "$B/elog-cat" -v "$L"
	[ "$status" -eq 0 ]
	[ "$output" = "$(seq 1 500)" ]
	run "$B/elog-cat" -v -o 300 -c 1 "$L"
	[ "$output" = 301 ]
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
}

@test "a segment copied under another name: a stray copy, not damage" {
	# The copy claims base 50 but holds offsets 0-133.
	cp "$L/$FIRST" "$L/00000000000000000050.log"
	all_programs_cope
	[ "$verify_status" -eq 1 ]
	output=$verify_output
	# A stray copy, not damage: left out of the chain, the log is whole.
	[[ "$output" == *"00000000000000000050.log: byte 16: a copy of segment 0, whose base its header names, under another name: not in the log's chain (move it out and run elog-verify again)"* ]]
	[[ "$output" != *"overlap"* ]]
	run "$B/elog-cat" -o 60 "$L"
	[ "$status" -eq 4 ]
	[ "$output" = "elog-cat: $L: 00000000000000000050.log: a copy of segment 0 (its header names that base): move it out of the log directory; run elog-verify $L to see what is damaged" ]
}

@test "a directory that is not a log" {
	mkdir "$T/other"
	echo hello > "$T/other/notes"
	for p in elog-cat elog-verify; do
		bounded "$B/$p" "$T/other"
		[ "$status" -eq 5 ]
		[ "$output" = "$p: $T/other: not an elog directory (no settings file)" ]
	done
	bounded "$B/elog-append" "$T/other" </dev/null
	[ "$status" -eq 5 ]
	[[ "$output" =~ ^elog-append:\ $T/other:\ not\ an\ elog\ directory ]]
}

@test "permission denied is a clear error for a user who may not read" {
	command -v setpriv >/dev/null || skip "setpriv(1) is not installed"
	[ "$(id -u)" -eq 0 ] || skip "needs root to switch to another user"
	chmod 700 "$L"
	chmod 711 "$T"
	for p in elog-cat elog-verify; do
		run setpriv --reuid=65534 --regid=65534 --clear-groups "$B/$p" "$L"
		echo "$output"
		[ "$status" -eq 5 ]
		[ "$output" = "$p: $L: permission denied" ]
	done
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$B/elog-append" "$L" </dev/null
	[ "$status" -eq 5 ]
	[[ "$output" =~ ^elog-append:\ $L:\ .*permission\ denied$ ]]
}

@test "a read-only directory: readers work, the writer fails clearly" {
	mount_tmpfs 4M
	seq 1 100 | "$B/elog-append" "$MNT/log"
	mount -o remount,ro "$MNT"
	run "$B/elog-cat" -v "$MNT/log"
	[ "$status" -eq 0 ]
	[ "$output" = "$(seq 1 100)" ]
	run "$B/elog-verify" "$MNT/log"
	[ "$status" -eq 0 ]
	run "$B/elog-append" "$MNT/log" <<<"x"
	[ "$status" -eq 5 ]
	[[ "$output" =~ ^elog-append:\ $MNT/log:\ .*[Rr]ead-only\ file\ system$ ]]
	run "$B/elog-verify" --repair "$MNT/log"
	[ "$status" -eq 5 ]
	[[ "$output" =~ [Rr]ead-only\ file\ system$ ]]
}

@test "a full disk: the writer fails clearly, acknowledged records survive" {
	mount_tmpfs 1M
	# Offsets printed by -p are acknowledged: every one must be readable
	# after the disk filled up.  Small batches make many acknowledgements.
	run bash -c "yes 0123456789012345678901234567890123456789 | head -n 100000 |
		'$B/elog-append' -p --batch 100 --segment-bytes 65536 '$MNT/log' > '$T/acked'"
	echo "$output"
	[ "$status" -eq 5 ]
	[[ "${lines[0]}" =~ ^elog-append:\ $MNT/log:\ .*[Nn]o\ space\ left\ on\ device$ ]]
	acked=$(wc -l < "$T/acked")
	[ "$acked" -gt 1000 ]
	[ "$(tail -1 "$T/acked")" -eq $((acked - 1)) ]
	"$B/elog-cat" -F '%o\n' "$MNT/log" | head -n "$acked" | cmp - "$T/acked"
	# Only the unacknowledged tail is amiss, and that is no damage.
	run "$B/elog-verify" "$MNT/log"
	echo "$output"
	[ "$status" -eq 0 ]
	# While the disk is full a writer still opens: recovery cuts the
	# torn tail and keeps an index that is right, writing nothing new.
	run "$B/elog-append" "$MNT/log" </dev/null
	echo "$output"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
	run "$B/elog-verify" "$MNT/log"
	[ "$status" -eq 0 ] && [ "$output" = "" ]
	# Once there is room, the log opens and takes records again.
	mount -o remount,size=4M "$MNT"
	echo after | "$B/elog-append" "$MNT/log"
	[ "$("$B/elog-cat" -v -n 1 "$MNT/log")" = after ]
	"$B/elog-cat" -F '%o\n' "$MNT/log" | head -n "$acked" | cmp - "$T/acked"
	run "$B/elog-verify" "$MNT/log"
	[ "$status" -eq 0 ]
}

# The producer of elog-append(1)'s EXAMPLES, resuming by the rule of
# "Resuming after a failure": $1, the input file; $2, the log; $3, a
# command that fixes the cause after a failure (here: room on the disk);
# more arguments are options of elog-append.
resend_by_the_rule() {
	local done=0 first tries=0 in=$1 log=$2 fix=$3
	shift 3
	until tail -n +$((done + 1)) "$in" | elog-append -p "$@" "$log" >"$T/acked" 2>"$T/err"; do
		case $? in 3|4|5) ;; *) cat "$T/err"; return 1 ;; esac
		cat "$T/err"
		done=$((done + $(wc -l <"$T/acked")))
		first=$(sed -n 's/.* written at offsets \([0-9]*\)-.*/\1/p' "$T/err")
		$fix
		until elog-append "$log" </dev/null; do sleep 1; done
		[ -z "$first" ] ||
			done=$((done + $(elog-cat -o "$first" -F '%o\n' "$log" | wc -l)))
		[ $((tries += 1)) -lt 5 ] || return 1
	done
}

@test "a full disk: every durable record is acknowledged, and the message says where the input stands" {
	mount_tmpfs 2M
	run bash -c "seq 1 100000 | elog-append -p '$MNT/log' > '$T/acked'"
	echo "$output"
	[ "$status" -eq 5 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" =~ ^elog-append:\ $MNT/log:\ .*[Nn]o\ space\ left\ on\ device$ ]]
	acked=$(wc -l < "$T/acked")
	[ "$acked" -gt 1000 ]
	# Before any other writer opens the log: the acknowledged records
	# are exactly the durable ones.
	elog-cat -F '%o\n' "$MNT/log" | cmp - "$T/acked"
	re="^elog-append: $MNT/log: lines 1-$acked are durable; lines $((acked + 1))-([0-9]+) were written at offsets $acked-([0-9]+) but not synced: the next writer publishes those written whole, or cuts them all after a failed sync; lines from ([0-9]+) on were not written$"
	[[ "${lines[1]}" =~ $re ]]
	last=${BASH_REMATCH[1]}
	[ "${BASH_REMATCH[2]}" -eq $((last - 1)) ]
	[ "${BASH_REMATCH[3]}" -eq $((last + 1)) ]
	# Room again: the next writer publishes the first of the written
	# lines, those written whole, at the offsets given.
	mount -o remount,size=16M "$MNT"
	elog-append "$MNT/log" </dev/null
	n=$(elog-cat -F '%o\n' "$MNT/log" | wc -l)
	[ "$n" -ge "$acked" ] && [ "$n" -le "$last" ]
	[ "$(elog-cat -v "$MNT/log")" = "$(seq 1 "$n")" ]
}

@test "a full disk: a producer that resends by elog-append(1)'s rule loses no line and duplicates none" {
	mount_tmpfs 2M
	seq 1 100000 > "$T/input"
	run resend_by_the_rule "$T/input" "$MNT/log" "mount -o remount,size=16M $MNT"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"no space left on device"* ]]
	elog-cat -v "$MNT/log" | cmp - "$T/input"
	grep -q 'Resuming after a failure' "$BATS_TEST_DIRNAME/../../man/elog-append.1"
}

@test "a full disk under --json: the same report, by line of JSON, and the same rule" {
	mount_tmpfs 2M
	seq 1 150000 | sed 's/.*/{"key":"k","value":"&"}/' > "$T/input"
	run bash -c "elog-append --json -p '$MNT/log' < '$T/input' > '$T/acked'"
	echo "$output"
	[ "$status" -eq 5 ]
	acked=$(wc -l < "$T/acked")
	elog-cat -F '%o\n' "$MNT/log" | cmp - "$T/acked"
	[[ "${lines[1]}" =~ ^elog-append:\ $MNT/log:\ lines\ 1-$acked\ are\ durable\;\ lines\ $((acked + 1))-[0-9]+\ were\ written ]]
	# The producer, from the start on an empty disk of the same size.
	umount "$MNT" && mount -t tmpfs -o size=2M tmpfs "$MNT"
	run resend_by_the_rule "$T/input" "$MNT/log" "mount -o remount,size=16M $MNT" --json
	[ "$status" -eq 0 ]
	elog-cat "$MNT/log" | jq -c '{key, value}' | cmp - "$T/input"
}

@test "LOCK replaced by a symbolic link is refused" {
	rm "$L/LOCK"
	ln -s "$T/elsewhere" "$L/LOCK"
	bounded "$B/elog-append" "$L" <<<"x"
	[ "$status" -eq 5 ]
	[ "$output" = "elog-append: $L: LOCK: refusing to follow a symbolic link" ]
	[ ! -e "$T/elsewhere" ]
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[[ "$output" =~ LOCK:\ a\ symbolic\ link,\ which\ elog\ refuses\ to\ follow ]]
}

@test "the watermark or settings replaced by a symbolic link is refused" {
	cp "$L/watermark" "$T/wm"
	rm "$L/watermark"
	ln -s "$T/wm" "$L/watermark"
	bounded "$B/elog-cat" "$L"
	[ "$status" -ne 0 ]
	[[ "$output" =~ watermark ]]
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[[ "$output" =~ watermark:\ a\ symbolic\ link ]]
	# Repair replaces the link by a file and leaves its target alone.
	cp "$T/wm" "$T/wm.orig"
	run "$B/elog-verify" --repair "$L"
	[ "$status" -eq 0 ]
	[ ! -L "$L/watermark" ]
	cmp "$T/wm" "$T/wm.orig"

	cp "$L/settings" "$T/settings"
	rm "$L/settings"
	ln -s "$T/settings" "$L/settings"
	bounded "$B/elog-cat" "$L"
	[ "$status" -ne 0 ]
	bounded "$B/elog-append" "$L" </dev/null
	[ "$status" -ne 0 ]
}

@test "consumers.json replaced by a symbolic link is refused" {
	"$B/elog-commit" --create "$L" app 3
	cp "$L/consumers.json" "$T/c.json"
	rm "$L/consumers.json"
	ln -s "$T/c.json" "$L/consumers.json"
	bounded "$B/elog-commit" --create "$L" app 4
	[ "$status" -ne 0 ]
	cmp "$T/c.json" <(cat "$T/c.json")
	grep -q '"offset": *3' "$T/c.json"
	run "$B/elog-verify" "$L"
	[ "$status" -eq 1 ]
	[[ "$output" =~ consumers\.json:\ a\ symbolic\ link ]]
}

@test "a huge length field does not make a reader allocate or wait" {
	# A record header claiming 4 GiB right after the segment header.
	printf '\377\377\377\377' | dd of="$L/$FIRST" bs=1 seek=32 conv=notrunc status=none
	bounded sh -c "'$B/elog-cat' '$L' >/dev/null"
	[ "$status" -eq 4 ]
	[ "$output" = "elog-cat: $L: $FIRST: corrupt record at byte 32; run elog-verify $L to see what is damaged" ]
	run "$B/elog-verify" "$L"
	[[ "$output" =~ $FIRST:\ byte\ 32:\ corrupt\ record:\ length\ 4294967295\ out\ of\ range ]]
}

# Every program that opens the file: a one-line error naming it within
# the time limit, never a hang (a FIFO blocks open(2) until a writer comes).
@test "a FIFO in place of any log file is refused, never waited on" {
	"$B/elog-commit" --create "$L" app 3
	for f in settings watermark start "$FIRST" 00000000000000000000.idx \
	         consumers.json compact.state LOCK maint.lock consumers.lock; do
		rm -rf "$T/c"
		cp -a "$L" "$T/c"
		rm -f "$T/c/$f"
		mkfifo "$T/c/$f"
		# elog-verify names it, whatever it is.
		run timeout 10 "$B/elog-verify" "$T/c"
		echo "$f: verify: $status: $output"
		[ "$status" -eq 1 ]
		[[ "$output" == *"$f"*"not a regular file"* ]]
		for p in "elog-cat" "elog-verify" "elog-retain --max-bytes 8K" \
		         "elog-compact" "elog-commit" "elog-append"; do
			case $p in
			elog-commit) args="$T/c app 4" ;;
			elog-cat) args="-c 1 -F %o $T/c" ;;
			*) args="$T/c" ;;
			esac
			run timeout 10 $B/$p $args </dev/null
			echo "$f: $p: status $status: $output"
			[ "$status" -lt 124 ]
			[ "$p" = elog-verify ] || [ "${#lines[@]}" -le 1 ]
			if [ "$status" -ne 0 ] && [ "$p" != elog-verify ]; then
				[[ "$output" == *"$f: not a regular file" ]]
			fi
		done
	done
}

@test "the programs that need a FIFO'd file name it" {
	mkfifo "$T/fifo"
	rm "$L/watermark" && mkfifo "$L/watermark"
	for p in elog-cat elog-retain elog-compact; do
		run timeout 10 "$B/$p" "$L"
		[ "$status" -eq 5 ]
		[ "$output" = "$p: $L: watermark: not a regular file" ]
	done
	run timeout 10 "$B/elog-append" "$L" <<<"x"
	[ "$status" -eq 5 ]
	[ "$output" = "elog-append: $L: watermark: not a regular file" ]
}

# A user who can write the directory plants a hard link to a file elsewhere
# under a name the programs write: they refuse, and the file keeps its bytes.
@test "hard links to files elsewhere are never written through" {
	"$B/elog-commit" --create "$L" app 3
	echo precious > "$T/target"
	for f in LOCK watermark maint.lock consumers.lock "$ACTIVE"; do
		rm -rf "$T/c"
		cp -a "$L" "$T/c"
		rm -f "$T/c/$f"
		ln "$T/target" "$T/c/$f"
		case $f in
		maint.lock) run timeout 10 "$B/elog-retain" --max-bytes 8K "$T/c" ;;
		consumers.lock) run timeout 10 "$B/elog-commit" --create "$T/c" app 4 ;;
		*) run timeout 10 "$B/elog-append" "$T/c" <<<"x" ;;
		esac
		echo "$f: $status: $output"
		[ "$status" -eq 5 ]
		[[ "$output" == *": $T/c: $f: has more than one hard link, refusing to write it" ]]
		[ "$(cat "$T/target")" = precious ]
		run timeout 10 "$B/elog-verify" "$T/c"
		[ "$status" -eq 1 ]
		[[ "$output" == *"$f: has 2 hard links"* ]]
	done
	# Reading through a hard link is harmless: a cp -al snapshot reads.
	cp -al "$L" "$T/snap"
	run "$B/elog-cat" -v "$T/snap"
	[ "$status" -eq 0 ]
	[ "$output" = "$(seq 1 500)" ]
}

# Fill a small filesystem with one log: the writer stops with ENOSPC.
fill_disk() {
	run bash -c "yes 0123456789012345678901234567890123456789 | head -n 100000 |
		'$B/elog-append' --batch 100 --segment-bytes 65536 '$MNT/log'"
	[ "$status" -eq 5 ]
	[[ "${lines[0]}" =~ [Nn]o\ space\ left\ on\ device$ ]]
}

@test "a full disk: retention frees space, and the writer appends again" {
	mount_tmpfs 2M
	fill_disk
	last=$("$B/elog-cat" -F '%o\n' -n 1 "$MNT/log")
	run timeout 20 "$B/elog-retain" --max-bytes 512K "$MNT/log"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(du -sk "$MNT/log" | cut -f1)" -le 700 ]
	# Nothing but the oldest segments went: the newest record is there.
	[ "$("$B/elog-cat" -F '%o\n' -n 1 "$MNT/log")" = "$last" ]
	echo after | "$B/elog-append" "$MNT/log"
	[ "$("$B/elog-cat" -v -n 1 "$MNT/log")" = after ]
	"$B/elog-commit" --create "$MNT/log" app $((last + 1))
	run "$B/elog-verify" "$MNT/log"
	[ "$status" -eq 0 ]
}

@test "a full disk: retention frees a log made without start and lock files" {
	mount_tmpfs 2M
	fill_disk
	# As a log made by an older elog: no start file, no lock files.
	rm -f "$MNT/log/start" "$MNT/log/maint.lock" "$MNT/log/consumers.lock"
	# Fill what the removal freed.
	head -c 2M /dev/zero > "$MNT/filler" 2>/dev/null || true
	last=$("$B/elog-cat" -F '%o\n' -n 1 "$MNT/log")
	run timeout 20 "$B/elog-retain" --max-bytes 512K "$MNT/log"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(du -sk "$MNT/log" | cut -f1)" -le 700 ]
	[ "$("$B/elog-cat" -F '%o\n' -n 1 "$MNT/log")" = "$last" ]
	rm "$MNT/filler"
	echo after | "$B/elog-append" "$MNT/log"
	[ "$("$B/elog-cat" -v -n 1 "$MNT/log")" = after ]
	run "$B/elog-verify" "$MNT/log"
	[ "$status" -eq 0 ]
}

@test "a full disk: a writer whose doorbell page cannot be allocated still appends" {
	mount_tmpfs 200k
	echo x | "$B/elog-append" "$MNT/log"
	head -c 1M /dev/zero >"$MNT/filler" 2>/dev/null || true
	# The page the doorbell had is freed with its file: take it too, so
	# that the new "writers" file cannot have a block.
	rm "$MNT/log/writers"
	head -c 1M /dev/zero >"$MNT/filler2" 2>/dev/null || true
	run fallocate -l 4096 "$MNT/probe"
	[ "$status" -ne 0 ]
	# One record fits in the segment's page already allocated: the
	# writer acknowledges it, polling for LOCK without the doorbell
	# (before the page was allocated, the first store into it was a
	# SIGBUS).
	run timeout 20 "$B/elog-append" -p "$MNT/log" <<<"y"
	echo "status $status: $output"
	[ "$status" -eq 0 ]
	[ "$output" = 1 ]
	[ -f "$MNT/log/writers" ] && [ ! -s "$MNT/log/writers" ]
	[ "$("$B/elog-cat" -v "$MNT/log")" = $'x\ny' ]
}

# Run a program as the unprivileged user who owns the log.
as_owner() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

@test "root's maintenance on a user's log leaves nothing that locks the user out" {
	command -v setpriv >/dev/null || skip "setpriv(1) is not installed"
	[ "$(id -u)" -eq 0 ] || skip "needs root to run as root and as another user"
	chmod 755 "$T"
	mkdir "$T/u"
	chown 65534:65534 "$T/u"
	# Compressed when the build can, so that root's writer trains and
	# stores a dictionary.
	z=
	"$B/elog-append" --compress zstd "$T/probe" </dev/null 2>/dev/null && z="--compress zstd"
	seq 1 300 | as_owner "$B/elog-append" $z --segment-bytes 4096 --cleanup compact "$T/u/log"
	U=$T/u/log
	# As a log made by an older elog, which had no lock files from the
	# start: root's run is the one that creates them.
	rm -f "$U/maint.lock" "$U/consumers.lock" "$U/start"
	seq 1 1500 | sed 's/^\(.*\)$/k\1:a value that compresses well \1/' |
		"$B/elog-append" -K : "$U"
	seq 1 200 | sed 's/^/k/; s/$/:/' | "$B/elog-append" -K : "$U"
	"$B/elog-commit" --create "$U" rootapp 3
	"$B/elog-compact" --grace 0s "$U"
	"$B/elog-retain" --max-bytes 8K "$U"
	"$B/elog-verify" "$U"
	echo x | "$B/elog-append" "$U"
	# Every file in the log belongs to its owner.
	run find "$U" ! -user 65534 -print
	echo "$output"
	[ -z "$output" ]
	run find "$U" ! -group 65534 -print
	[ -z "$output" ]
	# And the owner's own programs work.
	echo y | as_owner "$B/elog-append" "$U"
	as_owner "$B/elog-commit" --create "$U" app 5
	as_owner "$B/elog-commit" --create "$U" rootapp 6
	as_owner "$B/elog-compact" --grace 0s "$U"
	as_owner "$B/elog-retain" --max-bytes 8K "$U"
	run as_owner "$B/elog-verify" "$U"
	[ "$status" -eq 0 ]
	[ "$(as_owner "$B/elog-cat" -v -n 1 "$U")" = y ]
}

@test "lock files root made before are still usable by the log's owner" {
	command -v setpriv >/dev/null || skip "setpriv(1) is not installed"
	[ "$(id -u)" -eq 0 ] || skip "needs root to run as root and as another user"
	chmod 755 "$T"
	mkdir "$T/u"
	chown 65534:65534 "$T/u"
	seq 1 300 | as_owner "$B/elog-append" --segment-bytes 4096 --cleanup compact "$T/u/log"
	U=$T/u/log
	# What an older elog run as root left: root's 0644 lock files.
	for f in maint.lock consumers.lock; do
		rm -f "$U/$f"
		install -m 644 -o 0 -g 0 /dev/null "$U/$f"
	done
	as_owner "$B/elog-commit" --create "$U" app 5
	as_owner "$B/elog-retain" --max-bytes 8K "$U"
	as_owner "$B/elog-compact" "$U"
}

@test "a full disk without a free inode: retention rewrites start in place" {
	# Few inodes, so that taking the last ones is quick.
	mount_tmpfs 2M,nr_inodes=200
	fill_disk
	# Take every inode left, so that not even an empty file can be made.
	mkdir "$MNT/inodes"
	(cd "$MNT/inodes" && seq 1 300 | xargs touch 2>/dev/null) || true
	run touch "$MNT/log/probe"
	[ "$status" -ne 0 ]
	last=$("$B/elog-cat" -F '%o\n' -n 1 "$MNT/log")
	run timeout 20 "$B/elog-retain" --max-bytes 512K "$MNT/log"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(du -sk "$MNT/log" | cut -f1)" -le 700 ]
	[ "$("$B/elog-cat" -F '%o\n' -n 1 "$MNT/log")" = "$last" ]
	run "$B/elog-verify" "$MNT/log"
	[ "$status" -eq 0 ]
	first=$("$B/elog-cat" -F '%o\n' -c 1 "$MNT/log")
	[ "$first" -gt 0 ]
	# The start file is still there, and says so: rewritten in place.
	[ "$(od -An -tu8 -j16 -N8 "$MNT/log/start" | tr -d ' ')" = "$first" ]
	rm -rf "$MNT/inodes"
	echo after | "$B/elog-append" "$MNT/log"
	[ "$("$B/elog-cat" -v -n 1 "$MNT/log")" = after ]
}
