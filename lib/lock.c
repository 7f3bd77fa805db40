/*
 * lock.c: the advisory locks of a log directory.  Writers hold an exclusive
 * flock(2) on LOCK while they write one batch, and leave in it the state of
 * the log's tail and the record of every sync others' acknowledgements
 * rest on, with byte-range locks for the open writers and the sync slot
 * (format.h gives where each lies, lockstate.c their texts, elog(5) every
 * byte); the doorbell that wakes them is shared memory LOCK names.
 * Maintenance programs hold maint.lock instead,
 * so they never stop the application's writers, and write their pid into
 * it so that a second run can name the first.  flock locks belong to the
 * open file description and vanish with the process, so a crashed process
 * never leaves a stale lock behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/file.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"

/* The pid written by the holder, or 0 when the file holds none. */
static long lock_holder(int fd)
{
	char buf[32];
	size_t got;
	if (elog__fs_pread_full(fd, buf, sizeof buf - 1, 0, &got) != 0)
		return 0;
	buf[got] = '\0';
	char *end;
	long pid = strtol(buf, &end, 10);
	return (end != buf && pid > 0) ? pid : 0;
}

/* What a message that names the holder pid of a lock adds when that
 * process is stopped (SIGSTOP, ^Z, a frozen unit, a tracer): it holds the
 * lock until it is resumed, so the operator is told how.  "" otherwise,
 * or when /proc cannot tell. */
static const char *stopped_note(long pid, char *buf, size_t size)
{
	char path[64], line[256];
	size_t got = 0;
	buf[0] = '\0';
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return buf;
	int err = elog__fs_pread_full(fd, line, sizeof line - 1, 0, &got);
	close(fd);
	if (err)
		return buf;
	line[got] = '\0';
	/* "pid (name) state ...": the name may hold anything, even ") ". */
	const char *end = strrchr(line, ')');
	if (end && (end[1] == ' ') && (end[2] == 'T' || end[2] == 't'))
		snprintf(buf, size, "; it is stopped: kill -CONT %ld resumes it", pid);
	return buf;
}

/* Open (creating) the lock file name.  flock(2) needs no write access: when
 * readonly_ok, a lock file someone else owns (root's cron made it before
 * elog gave such files the directory's owner) is opened read-only, and
 * *writable says so. */
static int open_lock_file(int dfd, const char *name, int readonly_ok, int *fdp, int *writable,
                          char *msg)
{
	int fd = elog__fs_openat(dfd, name, O_RDWR | O_CREAT, 0666);
	*writable = 1;
	if (fd < 0 && errno == EACCES && readonly_ok) {
		fd = elog__fs_openat(dfd, name, O_RDONLY, 0);
		*writable = 0;
	}
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			return elog__errmsg_set(msg, e, "%s: refusing to follow a symbolic link",
			                        name);
		return elog__errmsg_set(msg, e, "%s: %s", name, elog_strerror(e));
	}
	*fdp = fd;
	return 0;
}

int elog__lock_open(int dfd, const char *name, int *fdp, char *msg)
{
	int writable;
	return open_lock_file(dfd, name, 0, fdp, &writable, msg);
}

static int64_t lock_mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_us(int64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

static int range_lock(int fd, short type, off_t at);

/* Take the exclusive flock of fd (at -1), or an OFD lock of type on its
 * byte at.  Neither has a timeout: poll with a growing sleep, from
 * LOCK_TAKE_POLL_US to LOCK_TAKE_POLL_MAX_US, which a holder of a small
 * lock (a commit holds consumers.lock for one fsync'ed rename) barely
 * notices.  0, EWOULDBLOCK when wait_ms ran out, or another errno value;
 * wait_ms -1 waits for ever (a flock then blocks). */
#define LOCK_TAKE_POLL_US 100
#define LOCK_TAKE_POLL_MAX_US 20000

static int take_within(int fd, short type, off_t at, int64_t wait_ms)
{
	int64_t deadline = wait_ms < 0 ? INT64_MAX : lock_mono_us() + wait_ms * 1000;
	for (int64_t sleep = LOCK_TAKE_POLL_US;;) {
		if ((at >= 0 ? range_lock(fd, type, at)
		          : flock(fd, LOCK_EX | (wait_ms < 0 ? 0 : LOCK_NB))) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK && errno != EACCES)
			return errno;
		int64_t left = deadline - lock_mono_us();
		if (left <= 0)
			return EWOULDBLOCK;
		sleep_us(sleep < left ? sleep : left);
		if (sleep < LOCK_TAKE_POLL_MAX_US)
			sleep *= 2;
	}
}

int elog__wait_ms(int64_t given, int64_t dflt, int64_t *ms, char *msg)
{
	if (given == ELOG_WAIT_DEFAULT)
		given = dflt;
	if (given == ELOG_WAIT_NONE)
		*ms = 0;
	else if (given == ELOG_WAIT_FOREVER || given >= 0)
		*ms = given;
	else
		return elog__errmsg_set(msg, ELOG_INVALID,
		                        "a wait of %lld ms: give milliseconds, "
		                        "ELOG_WAIT_NONE or ELOG_WAIT_FOREVER",
		                        (long long)given);
	return 0;
}

int elog__lock_take_ms(int dfd, const char *name, int64_t wait_ms, int record_pid, int *fdp,
                       char *msg)
{
	int fd = -1, writable = 0, err = open_lock_file(dfd, name, 1, &fd, &writable, msg);
	if (err)
		return err;
	if ((err = take_within(fd, 0, -1, wait_ms)) != 0) {
		long pid = err == EWOULDBLOCK ? lock_holder(fd) : 0;
		char note[96];
		close(fd);
		if (err != EWOULDBLOCK)
			return elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
		if (wait_ms > 0 && pid)
			return elog__errmsg_set(msg, ELOG_LOCKED,
			                        "timed out after %lld ms "
			                        "waiting for %s (pid %ld holds or last held it%s)",
			                        (long long)wait_ms, name, pid,
			                        stopped_note(pid, note, sizeof note));
		if (wait_ms > 0)
			return elog__errmsg_set(msg, ELOG_LOCKED,
			                        "timed out after %lld ms "
			                        "waiting for %s, held by another process",
			                        (long long)wait_ms, name);
		if (pid)
			return elog__errmsg_set(msg, ELOG_LOCKED,
			                        "locked by another writer (pid %ld%s)", pid,
			                        stopped_note(pid, note, sizeof note));
		return elog__errmsg_set(msg, ELOG_LOCKED, "locked by another process");
	}
	if (record_pid && writable) {
		char buf[32];
		int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
		err = ftruncate(fd, 0) < 0 ? errno : elog__fs_pwrite_all(fd, buf, (size_t)n, 0);
		/* The pid only names the holder in messages: a full disk
		 * must not keep retention from freeing space. */
		if (err == ENOSPC || err == EDQUOT)
			err = 0;
		if (err) {
			close(fd);
			return elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
		}
	}
	*fdp = fd;
	return 0;
}

/*
 * The writers' batch lock (elog(5), LOCK: "Taking the lock").  flock(2)
 * has no timeout, so a waiter polls, or sleeps on the doorbell below.
 * Polling alone would let a writer that releases and retakes the lock at
 * once (a busy pipeline) starve the others, who only look every few
 * hundred microseconds: so a waiter announces itself with an OFD read
 * lock on byte LOCK_BYTE_WAIT, and a poller that sees one waits its turn.
 * OFD locks and flock locks are independent of each other on Linux.
 */
#define LOCK_POLL_FIRST_US 20
#define LOCK_POLL_MAX_US 50

static int byte_held(int fd, off_t at, short type);

static int waiters_announce(int fd, short type)
{
	return range_lock(fd, type, LOCK_BYTE_WAIT);
}

/*
 * The doorbell: a page of System V shared memory that every writer handle
 * of the log attaches, whose words count the releases of LOCK and the
 * writers waiting for it, to write a batch or to publish a sync (elog(5),
 * writers, gives every word).  A release wakes one waiter, a publisher
 * first: a publication is a moment's work that acknowledges every writer
 * its sync covered.  A waiter reads the release count before it tries the
 * lock and sleeps while it is unchanged, so no release is missed.
 *
 * Memory, not a file: a store into a mapped file that was truncated, or
 * into a page of a full copy-on-write filesystem, is a SIGBUS.  Hints
 * only: a waiter sleeps at most BELL_WAIT_MAX_US at a time, a handle
 * without the page polls, and a count is believed only while its stamp is
 * fresh, so a count left by a process that died costs at most one round.
 */
#define BELL_BYTES 4096
#define BELL_SEQ 0
#define BELL_WAITERS 1
#define BELL_PUBLISHERS 2
#define BELL_WAIT_STAMP 14   /* ms, when a waiter last slept */
#define BELL_FOLLOW_STAMP 15 /* ms, when a follower last slept */
#define BELL_GATHER_STAMP 16 /* ms, when a gatherer last slept */
#define BELL_WAIT_MAX_US 1000
#define BELL_STAMP_FRESH_MS 20
#define BELL_FOLLOW_FRESH_MS 200 /* a follower sleeps up to 100 ms at once */
#define BELL_MAGIC "ELOGBELL"
/* The header, in the page's last 32 bytes: magic, LOCK's device and
 * inode, the nonce of LOCK's doorbell record. */
#define BELL_AT_HDR (BELL_BYTES - 32)

static uint64_t *bell_hdr(uint32_t *bell)
{
	return (uint64_t *)((unsigned char *)bell + BELL_AT_HDR);
}

/* The segment of LOCK's record, when it still lives and is this log's. */
static uint32_t *bell_attach(int fd, const struct stat *st)
{
	char rec[LOCK_BELL_LEN];
	size_t got;
	uint32_t id;
	uint64_t nonce;
	struct shmid_ds ds;
	if (elog__fs_pread_full(fd, rec, sizeof rec, LOCK_AT_BELL, &got) != 0 ||
	    elog__bell_rec_decode(rec, got, &id, &nonce) != 0 ||
	    shmctl((int)id, IPC_STAT, &ds) < 0 || ds.shm_segsz != BELL_BYTES)
		return NULL;
	void *p = shmat((int)id, NULL, 0);
	if (p == (void *)-1)
		return NULL;
	uint64_t *h = bell_hdr(p);
	if (memcmp(h, BELL_MAGIC, 8) == 0 && h[1] == (uint64_t)st->st_dev &&
	    h[2] == (uint64_t)st->st_ino && h[3] == nonce)
		return p;
	shmdt(p);
	return NULL;
}

/* A new segment, with LOCK's owner and permissions, named in LOCK. */
static uint32_t *bell_create(int fd, const struct stat *st)
{
	uint64_t nonce = 0;
	char rec[LOCK_BELL_LEN + 1];
	int id = shmget(IPC_PRIVATE, BELL_BYTES, IPC_CREAT | IPC_EXCL | (int)(st->st_mode & 0666));
	if (id < 0)
		return NULL;
	void *p = shmat(id, NULL, 0);
	struct shmid_ds ds;
	/* root's cron leaves it to the log's owner, as it does its files. */
	if (p != (void *)-1 && geteuid() == 0 && shmctl(id, IPC_STAT, &ds) == 0) {
		ds.shm_perm.uid = st->st_uid;
		ds.shm_perm.gid = st->st_gid;
		shmctl(id, IPC_SET, &ds);
	}
	/* Removed at once: the kernel frees it when its last writer
	 * detaches, dead or alive; LOCK's record names it meanwhile. */
	shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1)
		return NULL;
	elog__fs_random(&nonce, sizeof nonce);
	uint64_t *h = bell_hdr(p);
	memcpy(h, BELL_MAGIC, 8);
	h[1] = (uint64_t)st->st_dev;
	h[2] = (uint64_t)st->st_ino;
	h[3] = nonce;
	elog__bell_rec_encode(rec, (uint32_t)id, nonce);
	elog__fs_pwrite_all(fd, rec, LOCK_BELL_LEN, LOCK_AT_BELL);
	return p;
}

uint32_t *elog__bell_map(int fd)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	uint32_t *bell = bell_attach(fd, &st);
	return bell ? bell : bell_create(fd, &st);
}

void elog__bell_unmap(uint32_t *bell)
{
	if (bell)
		shmdt(bell);
}

static uint32_t bell_get(uint32_t *bell, int word)
{
	return __atomic_load_n(&bell[word], __ATOMIC_SEQ_CST);
}

static void bell_add(uint32_t *bell, int word, uint32_t n)
{
	__atomic_add_fetch(&bell[word], n, __ATOMIC_SEQ_CST);
}

static uint32_t mono_ms32(void)
{
	return (uint32_t)(lock_mono_us() / 1000);
}

/* Count oneself at word, renewing its stamp. */
static void bell_join(uint32_t *bell, int word, int stamp)
{
	bell_add(bell, word, 1);
	__atomic_store_n(&bell[stamp], mono_ms32(), __ATOMIC_SEQ_CST);
}

/* The count at word, believed while its stamp is at most fresh_ms old: a
 * process that died counted leaves it stale. */
static uint32_t bell_count(uint32_t *bell, int word, int stamp, uint32_t fresh_ms)
{
	uint32_t n = bell_get(bell, word);
	return n && mono_ms32() - bell_get(bell, stamp) <= fresh_ms ? n : 0;
}

/* Sleep while *word is val, until until_us on the monotonic clock, or a
 * wake of one of bits. */
static void word_wait(uint32_t *word, uint32_t val, int64_t until_us, uint32_t bits)
{
	struct timespec ts = { (time_t)(until_us / 1000000), (long)(until_us % 1000000) * 1000 };
	syscall(SYS_futex, word, FUTEX_WAIT_BITSET, val, &ts, NULL, bits);
}

static long bell_wake(uint32_t *bell, unsigned bits)
{
	return syscall(SYS_futex, &bell[BELL_SEQ], FUTEX_WAKE_BITSET, 1, NULL, NULL, bits);
}

static void bell_ring(uint32_t *bell)
{
	if (!bell)
		return;
	bell_add(bell, BELL_SEQ, 1);
	if (bell_count(bell, BELL_PUBLISHERS, BELL_WAIT_STAMP, BELL_STAMP_FRESH_MS) &&
	    bell_wake(bell, 2u) > 0)
		return;
	if (bell_count(bell, BELL_WAITERS, BELL_WAIT_STAMP, BELL_STAMP_FRESH_MS))
		bell_wake(bell, 1u);
}

static int lock_timed_out(int fd, int64_t wait_ms, char *msg)
{
	struct lock_state ls;
	char note[96];
	elog__lock_state_read(fd, &ls);
	if (ls.valid && ls.pid)
		return elog__errmsg_set(msg, ELOG_LOCKED,
		                        "timed out after %lld ms waiting for another writer "
		                        "(pid %u holds or last held LOCK%s)",
		                        (long long)wait_ms, ls.pid,
		                        stopped_note(ls.pid, note, sizeof note));
	return elog__errmsg_set(msg, ELOG_LOCKED,
	                        "timed out after %lld ms waiting for LOCK, held by "
	                        "another process",
	                        (long long)wait_ms);
}

int elog__lock_acquire_bell(int fd, uint32_t *bell, int publish, int64_t wait_ms, char *msg)
{
	/* Others waiting: without the doorbell, let one of them have the
	 * lock first (they look at least every LOCK_POLL_MAX_US), then wait
	 * among them.  With it, every release wakes one of them, so none is
	 * shut out, and a free lock is taken at once: a woken waiter needs
	 * the scheduler first, on a busy machine for longer than a batch
	 * holds the lock, and making everyone wait behind it left the lock
	 * idle meanwhile.  A publisher never waits its turn. */
	int yield = !publish && !bell && byte_held(fd, LOCK_BYTE_WAIT, F_WRLCK);
	if (!yield) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return elog__errmsg_set(msg, errno, "%s: %s", FN_LOCK,
			                        elog_strerror(errno));
	}
	int64_t start = lock_mono_us();
	int64_t deadline = wait_ms < 0 ? INT64_MAX : start + wait_ms * 1000;
	int64_t sleep = yield ? LOCK_POLL_MAX_US : LOCK_POLL_FIRST_US;
	/* The announcement is for writers that poll, which cannot see the
	 * doorbell's counts; a waiter with the doorbell makes it (two
	 * system calls) only once it has waited BELL_WAIT_MAX_US, since
	 * most waits end sooner, at the next release. */
	int announced = !bell && waiters_announce(fd, F_RDLCK) == 0;
	int word = publish ? BELL_PUBLISHERS : BELL_WAITERS, err = 0;
	for (int first = 1;; first = 0) {
		uint32_t seq = 0;
		if (bell) {
			seq = bell_get(bell, BELL_SEQ);
			bell_join(bell, word, BELL_WAIT_STAMP);
		}
		if (!(first && yield)) {
			if (flock(fd, LOCK_EX | LOCK_NB) == 0)
				goto done;
			if (errno != EWOULDBLOCK && errno != EINTR) {
				err = elog__errmsg_set(msg, errno, "%s: %s", FN_LOCK,
				                       elog_strerror(errno));
				goto done;
			}
		}
		int64_t now = lock_mono_us();
		if (now >= deadline) {
			err = lock_timed_out(fd, wait_ms, msg);
			goto done;
		}
		if (bell) {
			/* Until the release count moves: publishers wait
			 * on bit 2, others on bit 1. */
			word_wait(&bell[BELL_SEQ], seq,
			          deadline - now < BELL_WAIT_MAX_US ? deadline : now + BELL_WAIT_MAX_US,
			          publish ? 2u : 1u);
			bell_add(bell, word, (uint32_t)-1);
			if (!announced && lock_mono_us() - start >= BELL_WAIT_MAX_US)
				announced = waiters_announce(fd, F_RDLCK) == 0;
			continue;
		}
		sleep_us(sleep < deadline - now ? sleep : deadline - now);
		if (sleep < LOCK_POLL_MAX_US)
			sleep *= 2;
		continue;
done:
		if (bell)
			bell_add(bell, word, (uint32_t)-1);
		break;
	}
	if (announced)
		waiters_announce(fd, F_UNLCK);
	return err;
}

int elog__lock_acquire(int fd, int64_t wait_ms, char *msg)
{
	return elog__lock_acquire_bell(fd, NULL, 0, wait_ms, msg);
}

void elog__lock_release_bell(int fd, uint32_t *bell)
{
	flock(fd, LOCK_UN);
	bell_ring(bell);
}

/* 1 when another open file description holds byte at of LOCK: a lock of
 * this one's own never shows. */
static int byte_held(int fd, off_t at, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = at, .l_len = 1 };
	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

static int range_lock(int fd, short type, off_t at)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = at, .l_len = 1 };
	return fcntl(fd, F_OFD_SETLK, &fl);
}

/*
 * The sync slot: a writer that syncs for others holds an open file
 * description write lock on byte LOCK_BYTE_SLOT for as long as its sync
 * record may be pending.  A writer that finds it taken waits for the
 * watermark instead of syncing too: a sync that starts later will cover
 * it.  The kernel releases a dead writer's slot, which turns its pending
 * record into a failed sync.
 *
 * One slot: two let a second sync start while the first runs, which was
 * meant to keep ext4's journal commits overlapping, but 4 and 8 writer
 * processes acknowledged more with one (the median of a round: 5 and 10%
 * more on ext4 without a journal, 43 and 20% with one), and 2 processes
 * about as many: two syncs of one file repeat each other's work, and
 * their followers wait on either.
 */
int elog__lock_slot_take(int fd)
{
	return range_lock(fd, F_WRLCK, LOCK_BYTE_SLOT) == 0 ? 0 : -1;
}

void elog__lock_slot_release(int fd, int slot)
{
	if (slot >= 0)
		range_lock(fd, F_UNLCK, LOCK_BYTE_SLOT);
}

/* Every open writer handle holds byte LOCK_BYTE_OPEN of LOCK: shared, or
 * exclusive for the log's only writer.  In LOCK because that file is
 * checked at every batch (elog__lock_is_current()): no other file of the
 * directory takes part in the promise. */
int elog__lock_join(int fd, int exclusive, int64_t wait_ms)
{
	return take_within(fd, exclusive ? F_WRLCK : F_RDLCK, LOCK_BYTE_OPEN, wait_ms);
}

int elog__lock_exclusive_held(int fd)
{
	return byte_held(fd, LOCK_BYTE_OPEN, F_RDLCK);
}

/*
 * The doorbell's second use: followers, and leaders gathering (elog(5),
 * writers, gives every word).  A follower whose batch a running sync
 * covers (the cover word) waits on the count of publications instead of
 * trying the slot.  A leader that took the slot waits a moment for the
 * writers the last publication woke to write their next batches, so that
 * its sync covers them too rather than the one after it.  Hints only: a
 * cover left by a leader that died, or a count gone wrong, costs a wait
 * its bound.
 */
#define BELL_PUBS 3
#define BELL_COVER_BYTE 16
#define BELL_FOLLOWERS 8
#define BELL_WRITTEN 9
#define BELL_PUB_WRITTEN 10
#define BELL_PUB_WOKE 11
#define BELL_GATHERERS 12
#define BELL_GATHER_TARGET 13

static uint64_t *bell_cover(uint32_t *bell)
{
	return (uint64_t *)((unsigned char *)bell + BELL_COVER_BYTE);
}

void elog__bell_cover(uint32_t *bell, uint64_t end)
{
	if (bell)
		__atomic_store_n(bell_cover(bell), end, __ATOMIC_SEQ_CST);
}

uint64_t elog__bell_covering(uint32_t *bell)
{
	return bell ? __atomic_load_n(bell_cover(bell), __ATOMIC_SEQ_CST) : 0;
}

uint32_t elog__bell_pubs(uint32_t *bell)
{
	return bell ? bell_get(bell, BELL_PUBS) : 0;
}

void elog__bell_follow(uint32_t *bell, uint32_t pubs, int64_t us)
{
	int64_t until = lock_mono_us() + us;
	bell_join(bell, BELL_FOLLOWERS, BELL_FOLLOW_STAMP);
	word_wait(&bell[BELL_PUBS], pubs, until, FUTEX_BITSET_MATCH_ANY);
	bell_add(bell, BELL_FOLLOWERS, (uint32_t)-1);
}

void elog__bell_published(uint32_t *bell)
{
	if (!bell)
		return;
	bell_add(bell, BELL_PUBS, 1);
	/* The count before the wake: a follower woken may write at once. */
	uint32_t written = bell_get(bell, BELL_WRITTEN);
	long woke = 0;
	if (bell_count(bell, BELL_FOLLOWERS, BELL_FOLLOW_STAMP, BELL_FOLLOW_FRESH_MS))
		woke = syscall(SYS_futex, &bell[BELL_PUBS], FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
	__atomic_store_n(&bell[BELL_PUB_WRITTEN], written, __ATOMIC_SEQ_CST);
	__atomic_store_n(&bell[BELL_PUB_WOKE], woke > 0 ? (uint32_t)woke : 0, __ATOMIC_SEQ_CST);
}

void elog__bell_written(uint32_t *bell)
{
	if (!bell)
		return;
	uint32_t n = __atomic_add_fetch(&bell[BELL_WRITTEN], 1, __ATOMIC_SEQ_CST);
	if (bell_count(bell, BELL_GATHERERS, BELL_GATHER_STAMP, BELL_STAMP_FRESH_MS) &&
	    n == bell_get(bell, BELL_GATHER_TARGET))
		syscall(SYS_futex, &bell[BELL_WRITTEN], FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* The woken followers count as many batches to come: the publisher's own
 * next one makes up for the leader's, woken too but written already. */
void elog__bell_gather(uint32_t *bell, int64_t us)
{
	if (!bell)
		return;
	uint32_t target = bell_get(bell, BELL_PUB_WRITTEN) + bell_get(bell, BELL_PUB_WOKE);
	int64_t until = lock_mono_us() + us;
	__atomic_store_n(&bell[BELL_GATHER_TARGET], target, __ATOMIC_SEQ_CST);
	for (;;) {
		uint32_t n = bell_get(bell, BELL_WRITTEN);
		if ((int32_t)(n - target) >= 0 || lock_mono_us() >= until)
			return;
		bell_join(bell, BELL_GATHERERS, BELL_GATHER_STAMP);
		word_wait(&bell[BELL_WRITTEN], n, until, FUTEX_BITSET_MATCH_ANY);
		bell_add(bell, BELL_GATHERERS, (uint32_t)-1);
	}
}

int elog__lock_quiet(int fd, uint32_t *bell)
{
	/* Without the doorbell, waiters cannot be seen. */
	if (!bell || bell_count(bell, BELL_WAITERS, BELL_WAIT_STAMP, BELL_STAMP_FRESH_MS) ||
	    bell_count(bell, BELL_PUBLISHERS, BELL_WAIT_STAMP, BELL_STAMP_FRESH_MS))
		return 0;
	return !byte_held(fd, LOCK_BYTE_SLOT, F_WRLCK);
}

int elog__lock_is_current(int dfd, const struct stat *mine, char *msg)
{
	struct stat now;
	/* The name still leads to the file open: it was neither unlinked
	 * (then the name is gone, or names another file) nor replaced. */
	if (fstatat(dfd, FN_LOCK, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_dev != mine->st_dev ||
	    now.st_ino != mine->st_ino)
		return elog__errmsg_set(
		        msg, ELOG_FAILED,
		        "%s was removed or replaced while this writer had the log open "
		        "(the log was deleted, or LOCK was changed by hand): nothing more "
		        "is written or acknowledged; reopen the log",
		        FN_LOCK);
	return 0;
}

/* The boot id, so that a state written before a reboot (or a power loss,
 * which may have kept any part of it) is never taken for the log's.  Read
 * at each open, not once a process: the crash simulator reboots between
 * the writers of one process. */
#define BOOT_ID_TEXT 36

int elog__lock_boot_id(unsigned char id[16])
{
	char text[64];
	size_t got = 0;
	memset(id, 0, 16);
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* A UUID of 36 characters and a newline: one read of as many gives
	 * it all, without a second one to see the end of the file. */
	elog__fs_pread_full(fd, text, BOOT_ID_TEXT + 1, 0, &got);
	close(fd);
	text[got] = '\0';
	size_t n = 0;
	for (const char *p = text; *p && n < 32; p++) {
		int v = *p >= '0' && *p <= '9'   ? *p - '0'
		        : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
		                                 : -1;
		if (v < 0)
			continue;
		id[n / 2] |= (unsigned char)(n % 2 ? v : v << 4);
		n++;
	}
	return n == 32;
}

int elog__lock_state_read(int fd, struct lock_state *ls)
{
	char buf[LOCK_STATE_LEN];
	size_t got;
	memset(ls, 0, sizeof *ls);
	/* The state's bytes only (this runs for every batch): the sync
	 * records follow them in the file. */
	int err = elog__fs_pread_full(fd, buf, sizeof buf, 0, &got);
	if (!err)
		elog__lock_state_decode(buf, got, ls); /* else cleared: not ours to trust */
	return err;
}

int elog__lock_state_write(int fd, const struct lock_state *ls)
{
	char buf[LOCK_STATE_LEN + 1];
	elog__lock_state_encode(buf, ls);
	return elog__fs_pwrite_all(fd, buf, LOCK_STATE_LEN, 0);
}

/*
 * The sync records (elog(5), LOCK): Linux reports a failed writeback once
 * to each open file description that was open when it happened, and one
 * opened later syncs "successfully" over the pages the kernel dropped; so
 * a writer records, before and after, every fdatasync that others'
 * acknowledgements may rest on.  A pending record whose guard (the batch
 * lock for record 0, the sync slot for record 1) nobody holds is failed.
 */
static off_t sync_rec_at(int which)
{
	return (off_t)LOCK_AT_SYNC + (off_t)which * LOCK_SYNC_STEP;
}

int elog__sync_rec_read(int fd, int which, struct sync_rec *r)
{
	char buf[LOCK_SYNC_LEN];
	size_t got;
	memset(r, 0, sizeof *r);
	int err = elog__fs_pread_full(fd, buf, sizeof buf, sync_rec_at(which), &got);
	if (!err)
		elog__sync_rec_decode(buf, got, r); /* clears r when it fails */
	return err;
}

int elog__sync_rec_write(int fd, int which, const struct sync_rec *r)
{
	char buf[LOCK_SYNC_LEN + 1];
	elog__sync_rec_encode(buf, r);
	return elog__fs_pwrite_all(fd, buf, LOCK_SYNC_LEN, sync_rec_at(which));
}

int elog__lock_sick(int fd, struct lock_state *ls, const unsigned char boot[16],
                    struct sync_rec *slot)
{
	/* The state and both records with one pread: this runs for every
	 * batch and every publication. */
	char buf[LOCK_AT_SYNC + LOCK_SYNC_STEP + LOCK_SYNC_LEN];
	size_t got = 0;
	struct sync_rec r;
	memset(slot, 0, sizeof *slot);
	memset(&r, 0, sizeof r);
	elog__fs_pread_full(fd, buf, sizeof buf, 0, &got);
	/* (A decoder clears what it cannot decode.) */
	elog__lock_state_decode(buf, got, ls);
	if (got >= LOCK_AT_SYNC + LOCK_SYNC_LEN)
		elog__sync_rec_decode(buf + LOCK_AT_SYNC, LOCK_SYNC_LEN, &r);
	if (got == sizeof buf)
		elog__sync_rec_decode(buf + LOCK_AT_SYNC + LOCK_SYNC_STEP, LOCK_SYNC_LEN, slot);
	return (ls->valid && ls->sick) ||
	       elog__sync_verdict(fd, SYNC_BY_LOCK, &r, boot, ls->hseq) == SYNC_FAILED ||
	       elog__sync_verdict(fd, SYNC_BY_SLOT, slot, boot, ls->hseq) == SYNC_FAILED;
}

int elog__lock_state_clear(int fd)
{
	static const char zero[LOCK_STATE_LEN];
	return elog__fs_pwrite_all(fd, zero, sizeof zero, 0);
}

int elog__sync_verdict(int fd, int which, const struct sync_rec *r, const unsigned char boot[16],
                       uint64_t handled)
{
	/* Another boot's record says nothing of this boot's page cache. */
	if (!r->valid || memcmp(r->boot, boot, 16) != 0)
		return SYNC_CLEAR;
	if (r->status == SYNC_ST_OK || r->status == SYNC_ST_HANDLED ||
	    (which == SYNC_BY_SLOT && r->seq == handled))
		return SYNC_CLEAR;
	if (r->status == SYNC_ST_PENDING && which == SYNC_BY_SLOT &&
	    byte_held(fd, LOCK_BYTE_SLOT, F_WRLCK))
		return SYNC_RUNNING;
	return SYNC_FAILED;
}

/* The pid recorded in maint.lock by the run holding it, or 0. */
static long maint_holder(int dfd)
{
	int fd = elog__fs_openat(dfd, FN_MAINT, O_RDONLY | O_NONBLOCK, 0);
	long pid = fd >= 0 ? lock_holder(fd) : 0;
	if (fd >= 0)
		close(fd);
	return pid;
}

/* 1 when maint.lock is held shared only: by elog-verify checks, which a
 * maintenance run waits for even when told not to wait (they end by
 * themselves). */
static int only_checks_hold(int dfd)
{
	int fd = elog__fs_openat(dfd, FN_MAINT, O_RDONLY | O_NONBLOCK, 0), shared;
	if (fd < 0)
		return 0;
	shared = flock(fd, LOCK_SH | LOCK_NB) == 0;
	close(fd);
	return shared;
}

int elog__maint_lock(int dfd, int64_t wait_ms, int *fdp, char *msg)
{
	int err = elog__lock_take_ms(dfd, FN_MAINT, wait_ms, 1, fdp, msg);
	if (err == ELOG_LOCKED && wait_ms >= 0 && only_checks_hold(dfd))
		err = elog__lock_take_ms(dfd, FN_MAINT, -1, 1, fdp, msg);
	if (err != ELOG_LOCKED)
		return err;
	long pid = maint_holder(dfd);
	if (pid)
		return elog__errmsg_set(msg, err, "another maintenance run holds %s (pid %ld)",
		                        FN_MAINT, pid);
	return elog__errmsg_set(msg, err, "another maintenance run holds %s", FN_MAINT);
}
