/*
 * test_lock.c: the lock files (lib/lock.c): the holder's pid in the file,
 * a second taker refused with a message naming it, the lock released with
 * its descriptor, and a symbolic link in place of the file refused;
 * LOCK's state, byte for byte as elog(5) gives it; the waits of elog.h
 * (ELOG_WAIT_*) for LOCK and maint.lock; and the doorbell of LOCK's
 * waiters in "writers".
 */
#include <pthread.h>
#include <sys/file.h>
#include <sys/wait.h>

#include "unit.h"

static int open_top(void)
{
	int dfd = open(ut_top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	return dfd;
}

UT_TEST(lock_names_the_holder_and_releases_with_the_descriptor)
{
	int dfd = open_top();
	char msg[ELOG_MSG_MAX], p[1200];
	int fd, fd2;
	UT_OK(elog__lock_take_ms(dfd, "L", 0, 1, &fd, msg), msg);
	size_t len;
	unsigned char *d = ut_read_file(ut_path(p, sizeof p, ut_top, "L"), &len);
	char want[64];
	snprintf(want, sizeof want, "%ld\n", (long)getpid());
	ck_assert_str_eq((char *)d, want);
	free(d);
	/* flock locks belong to the open file: a second open is refused. */
	UT_RC(elog__lock_take_ms(dfd, "L", 0, 1, &fd2, msg), ELOG_LOCKED, msg);
	snprintf(want, sizeof want, "locked by another writer (pid %ld)", (long)getpid());
	ck_assert_str_eq(msg, want);
	close(fd);
	UT_OK(elog__lock_take_ms(dfd, "L", 0, 0, &fd2, msg), msg);
	close(fd2);
	/* A lock file replaced by a symbolic link is refused. */
	ck_assert_int_eq(symlinkat("elsewhere", dfd, "S"), 0);
	UT_RC(elog__lock_take_ms(dfd, "S", 0, 1, &fd, msg), ELOOP, msg);
	ck_assert_str_eq(msg, "S: refusing to follow a symbolic link");
	close(dfd);
}
END_TEST

/* The example of elog(5) "LOCK", encoded: every field where the byte table
 * puts it, and decoded back to the same state. */
UT_TEST(lock_state_text_as_documented)
{
	struct lock_state ls = {
		.valid = 1,
		.epoch = 0x9f1c2a7e55d04b31ull,
		.gen = 42,
		.pid = 12345,
		.boot = { 0x15, 0x99, 0xb2, 0x20, 0xf4, 0x31, 0x47, 0x20, 0x92, 0x4f, 0x3c, 0x7a,
		          0x52, 0x5f, 0x52, 0x3f },
		.next = 1000,
		.base = 0,
		.size = 145032,
		.flags = 0,
		.idx = 840,
		.ixpos = 143872,
		.ixts = 1764590400000,
		.ixmin = 1764590100000,
		.ixlo = 1764590399000,
		.ixhi = 1764590400000,
		.ixany = 1,
		.hseq = 7,
	};
	static const char want[] =
	        "ELOGLCK3 epoch=9f1c2a7e55d04b31 gen=00000000000000000042 busy=0 sick=0 "
	        "pid=0000012345 boot=1599b220f4314720924f3c7a525f523f "
	        "next=00000000000000001000 base=00000000000000000000 "
	        "size=00000000000000145032 flags=00000000 idx=00000000000000000840 "
	        "ixpos=00000000000000143872 ixts=+0000001764590400000 "
	        "ixmin=+0000001764590100000 ixlo=+0000001764590399000 "
	        "ixhi=+0000001764590400000 ixany=1 hseq=00000000000000000007 crc=";
	static const struct {
		size_t at;
		const char *field;
	} table[] = {
		{ 0, "ELOGLCK3 " }, { 9, "epoch=" },   { 32, "gen=" },    { 57, "busy=" },
		{ 64, "sick=" },    { 71, "pid=" },    { 86, "boot=" },   { 124, "next=" },
		{ 150, "base=" },   { 176, "size=" },  { 202, "flags=" }, { 217, "idx=" },
		{ 242, "ixpos=" },  { 269, "ixts=" },  { 295, "ixmin=" }, { 322, "ixlo=" },
		{ 348, "ixhi=" },   { 374, "ixany=" }, { 382, "hseq=" }, { 408, "crc=" },
	};
	char buf[LOCK_STATE_LEN + 1], crc[9];
	ck_assert_uint_eq(LOCK_STATE_LEN, 421);
	elog__lock_state_encode(buf, &ls);
	ck_assert_uint_eq(strlen(want), 412);
	ck_assert_msg(memcmp(buf, want, strlen(want)) == 0, "%.*s", LOCK_STATE_LEN, buf);
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		ck_assert_msg(memcmp(buf + table[i].at, table[i].field, strlen(table[i].field)) ==
		                      0,
		              "%s not at byte %zu", table[i].field, table[i].at);
	snprintf(crc, sizeof crc, "%08x", elog__crc32c(0, buf, 412));
	ck_assert_int_eq(memcmp(buf + 412, crc, 8), 0);
	ck_assert_int_eq(buf[LOCK_STATE_LEN - 1], '\n');

	struct lock_state back;
	ck_assert_int_eq(elog__lock_state_decode(buf, LOCK_STATE_LEN, &back), 0);
	ck_assert_int_eq(back.ixts, ls.ixts);
	ck_assert_int_eq(back.ixmin, ls.ixmin);
	ck_assert_int_eq(back.ixlo, ls.ixlo);
	ck_assert_int_eq(back.ixhi, ls.ixhi);
	ck_assert_uint_eq(back.ixpos, ls.ixpos);
	ck_assert_uint_eq(back.ixany, 1);
	ck_assert_uint_eq(back.hseq, 7);
	/* The extremes of an i64 fit their 20 characters. */
	ls.ixmin = INT64_MIN;
	ls.ixhi = INT64_MAX;
	elog__lock_state_encode(buf, &ls);
	ck_assert_int_eq(memcmp(buf + 295, "ixmin=-9223372036854775808 ", 27), 0);
	ck_assert_int_eq(memcmp(buf + 348, "ixhi=+9223372036854775807 ", 26), 0);
	ck_assert_int_eq(elog__lock_state_decode(buf, LOCK_STATE_LEN, &back), 0);
	ck_assert_int_eq(back.ixmin, INT64_MIN);
	ck_assert_int_eq(back.ixhi, INT64_MAX);
	/* Any other byte is not a state: a digit changed, or the length of
	 * an earlier layout (version 2: 395 bytes). */
	buf[330] = buf[330] == '1' ? '2' : '1';
	ck_assert_int_eq(elog__lock_state_decode(buf, LOCK_STATE_LEN, &back), ELOG_CORRUPT);
	ck_assert_int_eq(elog__lock_state_decode(buf, 316, &back), ELOG_CORRUPT);
	ck_assert_int_eq(elog__lock_state_decode(buf, 395, &back), ELOG_CORRUPT);
}
END_TEST

/* A sync record: 155 bytes, each field at its place (elog(5), LOCK), one
 * text per record: a changed digit or an unknown status is no record. */
UT_TEST(sync_record_is_one_canonical_line)
{
	struct sync_rec r = { .valid = 1,
		              .status = SYNC_ST_PENDING,
		              .seq = 42,
		              .pid = 12345,
		              .boot = { 0x15, 0x99, 0xb2, 0x20, 0xf4, 0x31, 0x47, 0x20, 0x92, 0x4f, 0x3c,
		                        0x7a, 0x52, 0x5f, 0x52, 0x3f },
		              .t_ns = 777,
		              .cover = 1000 },
	                back;
	static const char want[] = "ELOGSYN1 st=P seq=00000000000000000042 pid=0000012345 "
	                           "boot=1599b220f4314720924f3c7a525f523f "
	                           "t=00000000000000000777 cover=00000000000000001000 crc=";
	char buf[LOCK_SYNC_LEN + 1];
	elog__sync_rec_encode(buf, &r);
	ck_assert_uint_eq(LOCK_SYNC_LEN, 155);
	ck_assert_uint_eq(strlen(buf), LOCK_SYNC_LEN);
	ck_assert_msg(memcmp(buf, want, strlen(want)) == 0, "%s", buf);
	ck_assert_int_eq(elog__sync_rec_decode(buf, LOCK_SYNC_LEN, &back), 0);
	ck_assert_int_eq(back.status, SYNC_ST_PENDING);
	ck_assert_uint_eq(back.seq, 42);
	ck_assert_uint_eq(back.pid, 12345);
	ck_assert_uint_eq(back.t_ns, 777);
	ck_assert_uint_eq(back.cover, 1000);
	ck_assert_int_eq(memcmp(back.boot, r.boot, 16), 0);
	ck_assert_int_eq(elog__sync_rec_decode(buf, LOCK_SYNC_LEN - 1, &back), ELOG_CORRUPT);
	buf[30] = buf[30] == '1' ? '2' : '1';
	ck_assert_int_eq(elog__sync_rec_decode(buf, LOCK_SYNC_LEN, &back), ELOG_CORRUPT);
	r.status = 'X';
	elog__sync_rec_encode(buf, &r);
	ck_assert_int_eq(elog__sync_rec_decode(buf, LOCK_SYNC_LEN, &back), ELOG_CORRUPT);
}
END_TEST

/* A record's verdict (elog(5), LOCK): a pending one runs while another
 * description holds its guard and has failed once none does; succeeded,
 * cut back (hseq) or of another boot, it is clear; the batch lock's is
 * judged by its holder, for whom pending means failed. */
UT_TEST(sync_verdict_follows_the_guard)
{
	char p[1200];
	unsigned char boot[16];
	elog__lock_boot_id(boot);
	int a = open(ut_path(p, sizeof p, ut_top, "LOCK"), O_RDWR | O_CREAT, 0666);
	int b = open(p, O_RDWR);
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(b, 0);
	struct sync_rec r = { .valid = 1, .status = SYNC_ST_PENDING, .seq = 9, .cover = 5 }, got;
	memcpy(r.boot, boot, 16);
	ck_assert_int_eq(elog__sync_rec_write(a, SYNC_BY_SLOT, &r), 0);
	ck_assert_int_eq(elog__sync_rec_write(a, SYNC_BY_LOCK, &r), 0);
	ck_assert_int_eq(elog__sync_rec_read(b, SYNC_BY_SLOT, &got), 0);
	ck_assert_int_eq(got.valid && got.status == SYNC_ST_PENDING && got.seq == 9, 1);
	ck_assert_int_eq(elog__lock_slot_take(a), 0);
	ck_assert_int_eq(elog__sync_verdict(b, SYNC_BY_SLOT, &got, boot, 0), SYNC_RUNNING);
	ck_assert_int_eq(elog__sync_verdict(b, SYNC_BY_LOCK, &got, boot, 0), SYNC_FAILED);
	elog__lock_slot_release(a, 0);
	ck_assert_int_eq(elog__sync_verdict(b, SYNC_BY_SLOT, &got, boot, 0), SYNC_FAILED);
	ck_assert_int_eq(elog__sync_verdict(b, SYNC_BY_SLOT, &got, boot, 9), SYNC_CLEAR);
	unsigned char other[16] = { 1 };
	ck_assert_int_eq(elog__sync_verdict(b, SYNC_BY_SLOT, &got, other, 0), SYNC_CLEAR);
	got.status = SYNC_ST_OK;
	ck_assert_int_eq(elog__sync_verdict(b, SYNC_BY_SLOT, &got, boot, 0), SYNC_CLEAR);
	got.status = SYNC_ST_FAILED;
	ck_assert_int_eq(elog__sync_verdict(b, SYNC_BY_LOCK, &got, boot, 0), SYNC_FAILED);
	/* The state stays the file's first bytes, the records after it. */
	struct lock_state ls = { .valid = 1, .epoch = 3, .gen = 1, .hseq = 9 }, back;
	ck_assert_int_eq(elog__lock_state_write(a, &ls), 0);
	ck_assert_int_eq(elog__lock_state_read(b, &back), 0);
	ck_assert_uint_eq(back.hseq, 9);
	ck_assert_int_eq(elog__sync_rec_read(b, SYNC_BY_LOCK, &got), 0);
	ck_assert_int_eq(got.status, SYNC_ST_PENDING);
	close(a);
	close(b);
}
END_TEST

/* One way to wait (elog(3), Waiting).  The call under test runs in a
 * child, so that its lock is another process's: its result comes back as
 * the exit status, an ELOG_* code negated, 100 for an errno value. */
static int child_status(int rc)
{
	return rc < 0 ? -rc : rc ? 100 : 0;
}

enum waiter { RETAIN, SALVAGE, REPAIR };

/* Run the call in a child with wait_ms; its status, and the time taken. */
static int wait_in_child(enum waiter what, int64_t wait_ms, int64_t *took)
{
	int64_t t0 = ut_now_ms();
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int rc;
		if (what == RETAIN) {
			struct elog_retain_opts o = { .max_bytes = 1, .wait_ms = wait_ms };
			rc = elog_retain(ut_dir, &o, NULL, NULL);
		} else if (what == SALVAGE) {
			struct elog_salvage_opts o = { .wait_ms = wait_ms };
			rc = elog_salvage(ut_dir, &o, NULL, NULL);
		} else {
			struct elog_verify_opts o = { .flags = ELOG_VERIFY_REPAIR,
				                      .wait_ms = wait_ms };
			rc = elog_verify(ut_dir, &o, NULL, NULL);
		}
		_exit(child_status(rc));
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	if (took)
		*took = ut_now_ms() - t0;
	return WEXITSTATUS(st);
}

/* maint.lock held: retention and salvage fail at once by default and with
 * ELOG_WAIT_NONE, after a duration when given one, and go on once it is
 * free; a negative wait that is no constant is refused. */
UT_TEST(maintenance_waits_for_maint_lock_as_long_as_asked)
{
	char msg[ELOG_MSG_MAX];
	int64_t took;
	elog_close(ut_open_writer(ut_dir, 4096, 64));
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY), lockfd;
	ck_assert_int_ge(dfd, 0);
	UT_OK(elog__lock_take_ms(dfd, FN_MAINT, 0, 1, &lockfd, msg), msg);
	ck_assert_int_eq(wait_in_child(RETAIN, -3, NULL), -ELOG_INVALID);
	ck_assert_int_eq(wait_in_child(SALVAGE, -3, NULL), -ELOG_INVALID);
	ck_assert_int_eq(wait_in_child(RETAIN, ELOG_WAIT_DEFAULT, NULL), -ELOG_LOCKED);
	ck_assert_int_eq(wait_in_child(RETAIN, ELOG_WAIT_NONE, NULL), -ELOG_LOCKED);
	ck_assert_int_eq(wait_in_child(SALVAGE, ELOG_WAIT_NONE, NULL), -ELOG_LOCKED);
	ck_assert_int_eq(wait_in_child(RETAIN, 300, &took), -ELOG_LOCKED);
	ck_assert_int_ge(took, 250);
	ck_assert_int_eq(wait_in_child(SALVAGE, 300, &took), -ELOG_LOCKED);
	ck_assert_int_ge(took, 250);
	close(lockfd);
	ck_assert_int_eq(wait_in_child(RETAIN, 300, NULL), 0);
	ck_assert_int_eq(wait_in_child(SALVAGE, ELOG_WAIT_FOREVER, NULL), 0);
	close(dfd);
}
END_TEST

/* LOCK held: a repair waits wait_ms for it (ELOG_WAIT_NONE: not at all),
 * and a writer's open refuses a negative wait that is no constant. */
UT_TEST(repair_and_writer_wait_for_lock_as_long_as_asked)
{
	char msg[ELOG_MSG_MAX];
	int64_t took;
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	elog_close(w);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY), lockfd;
	ck_assert_int_ge(dfd, 0);
	UT_OK(elog__lock_open(dfd, FN_LOCK, &lockfd, msg), msg);
	ck_assert_int_eq(flock(lockfd, LOCK_EX), 0);
	ck_assert_int_eq(wait_in_child(REPAIR, -3, NULL), -ELOG_INVALID);
	ck_assert_int_eq(wait_in_child(REPAIR, ELOG_WAIT_NONE, &took), -ELOG_LOCKED);
	ck_assert_int_eq(wait_in_child(REPAIR, 300, &took), -ELOG_LOCKED);
	ck_assert_int_ge(took, 250);
	close(lockfd);
	ck_assert_int_eq(wait_in_child(REPAIR, ELOG_WAIT_NONE, NULL), 0);
	close(dfd);
	struct elog_options o = { .wait_ms = -3 };
	UT_RC(elog_open(&w, ut_dir, &o), ELOG_INVALID, w);
	ck_assert_str_eq(elog_errmsg(w),
	                 "a wait of -3 ms: give milliseconds, ELOG_WAIT_NONE or ELOG_WAIT_FOREVER");
	elog_close(w);
	o.wait_ms = ELOG_WAIT_NONE;
	UT_OK(elog_open(&w, ut_dir, &o), w);
	elog_close(w);
}
END_TEST

/* The doorbell is shared memory that LOCK names: a second handle of the
 * log attaches the same page, and no operator's action on the file can
 * make a store into it fault (a truncated LOCK: no SIGBUS); a handle that
 * finds no live page makes one.  No descriptor, no doorbell. */
UT_TEST(bell_is_shared_memory_that_LOCK_names)
{
	char p[1200];
	int fd = open(ut_path(p, sizeof p, ut_top, "LOCK"), O_RDWR | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	int fd2 = open(p, O_RDWR);
	ck_assert_int_ge(fd2, 0);
	uint32_t *bell = elog__bell_map(fd);
	ck_assert_ptr_nonnull(bell);
	uint32_t *again = elog__bell_map(fd2);
	ck_assert_ptr_nonnull(again);
	bell[100] = 0xfeed;
	ck_assert_uint_eq(again[100], 0xfeed);
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	bell[101] = 7; /* a mapped file would kill the test here */
	ck_assert_uint_eq(again[101], 7);
	uint32_t *fresh = elog__bell_map(fd2);
	ck_assert_ptr_nonnull(fresh);
	ck_assert_uint_eq(fresh[100], 0);
	elog__bell_unmap(fresh);
	elog__bell_unmap(again);
	elog__bell_unmap(bell);
	close(fd2);
	close(fd);
	ck_assert_ptr_null(elog__bell_map(-1));
	int dir = open(ut_top, O_RDONLY | O_DIRECTORY);
	ck_assert_ptr_null(elog__bell_map(dir));
	close(dir);
}
END_TEST

/* The doorbell's tests' log: the page of its "writers" file, and three
 * open file descriptions of its LOCK, as three writers hold them. */
struct bells {
	int lock[3];
	uint32_t *bell;
};

static void bells_open(struct bells *t)
{
	char p[1200];
	ck_assert_int_ge(t->lock[0] = open(ut_path(p, sizeof p, ut_top, "LOCK"), O_RDWR | O_CREAT,
	                                   0666),
	                 0);
	for (int i = 1; i < 3; i++)
		ck_assert_int_ge(t->lock[i] = open(p, O_RDWR), 0);
	t->bell = elog__bell_map(t->lock[0]);
	ck_assert_ptr_nonnull(t->bell);
}

static void bells_close(struct bells *t)
{
	elog__bell_unmap(t->bell);
	for (int i = 0; i < 3; i++)
		close(t->lock[i]);
}

struct bell_waiter {
	int fd, publish, rc;
	uint32_t *bell;
	char msg[ELOG_MSG_MAX];
};

static void *bell_waiter_run(void *arg)
{
	struct bell_waiter *b = arg;
	b->rc = elog__lock_acquire_bell(b->fd, b->bell, b->publish, 60000, b->msg);
	return NULL;
}

/* A waiter counts itself in the page while it sleeps, a release counts
 * itself and hands the lock over, and every count is back to 0 after.
 * Words 0, 1, 2: releases, batch waiters, publishers (elog(5)). */
UT_TEST(bell_counts_waiters_and_hands_the_lock_over)
{
	char msg[ELOG_MSG_MAX];
	struct bells t;
	bells_open(&t);
	int a = t.lock[0], b = t.lock[1], c = t.lock[2];
	uint32_t *bell = t.bell;
	UT_OK(elog__lock_acquire_bell(a, bell, 0, 0, msg), msg);
	ck_assert_uint_eq(bell[1], 0);
	/* Not waiting at all: refused at once, nothing left counted. */
	UT_RC(elog__lock_acquire_bell(c, bell, 0, 0, msg), ELOG_LOCKED, msg);
	ck_assert_uint_eq(bell[1], 0);
	struct bell_waiter w = { .fd = b, .bell = bell, .rc = -1 }, x = w;
	x.fd = c;
	x.publish = 1;
	pthread_t tw, tx;
	ck_assert_int_eq(pthread_create(&tw, NULL, bell_waiter_run, &w), 0);
	ck_assert_int_eq(pthread_create(&tx, NULL, bell_waiter_run, &x), 0);
	for (int i = 0; i < 10000 && (__atomic_load_n(&bell[1], __ATOMIC_SEQ_CST) != 1 ||
	                              __atomic_load_n(&bell[2], __ATOMIC_SEQ_CST) != 1);
	     i++)
		usleep(1000);
	ck_assert_uint_eq(bell[1], 1);
	ck_assert_uint_eq(bell[2], 1);
	uint32_t seq = bell[0];
	elog__lock_release_bell(a, bell);
	ck_assert_uint_eq(bell[0], seq + 1);
	/* Each gets the lock in turn, and releases it. */
	for (int got = 0; got < 2;) {
		usleep(1000);
		if (__atomic_load_n(&w.rc, __ATOMIC_SEQ_CST) == 0) {
			elog__lock_release_bell(b, bell);
			w.rc = -2;
			got++;
		}
		if (__atomic_load_n(&x.rc, __ATOMIC_SEQ_CST) == 0) {
			elog__lock_release_bell(c, bell);
			x.rc = -2;
			got++;
		}
	}
	pthread_join(tw, NULL);
	pthread_join(tx, NULL);
	ck_assert_uint_eq(bell[1], 0);
	ck_assert_uint_eq(bell[2], 0);
	ck_assert_uint_eq(bell[0], seq + 3);
	/* A count left by a waiter that died makes no one wait for a free
	 * lock, and a waiter that gives up uncounts itself. */
	bell[1] = 5;
	UT_OK(elog__lock_acquire_bell(a, bell, 0, 1000, msg), msg);
	UT_RC(elog__lock_acquire_bell(b, bell, 0, 5, msg), ELOG_LOCKED, msg);
	ck_assert_uint_eq(bell[1], 5);
	elog__lock_release_bell(a, bell);
	bells_close(&t);
}
END_TEST

/* A waiter announced on byte 0 of LOCK makes a writer that polls wait its
 * turn (refused at once when it may not wait), while one with the doorbell
 * takes the free lock: each release wakes a waiter, so none is shut out. */
UT_TEST(bell_takes_a_free_lock_with_waiters_announced)
{
	char msg[ELOG_MSG_MAX];
	struct bells t;
	bells_open(&t);
	int a = t.lock[0], waiter = t.lock[1];
	uint32_t *bell = t.bell;
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	ck_assert_int_eq(fcntl(waiter, F_OFD_SETLK, &fl), 0);
	UT_RC(elog__lock_acquire_bell(a, NULL, 0, 0, msg), ELOG_LOCKED, msg);
	bell[1] = 1; /* counted in the page too, as a waiter is */
	UT_OK(elog__lock_acquire_bell(a, bell, 0, 0, msg), msg);
	elog__lock_release_bell(a, bell);
	ck_assert_uint_eq(bell[1], 1);
	/* A publisher never waits its turn. */
	UT_OK(elog__lock_acquire_bell(a, NULL, 1, 0, msg), msg);
	elog__lock_release_bell(a, NULL);
	bells_close(&t);
}
END_TEST

/* 1 when another description holds a lock on byte 0 of LOCK (fd). */
static int byte0_announced(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	ck_assert_int_eq(fcntl(fd, F_OFD_GETLK, &fl), 0);
	return fl.l_type != F_UNLCK;
}

/* A waiter with the doorbell that waits long announces itself on byte 0
 * all the same, for the writers that poll and cannot see the page, and
 * withdraws the announcement once it has the lock. */
UT_TEST(bell_waiter_announces_itself_when_its_wait_is_long)
{
	char msg[ELOG_MSG_MAX];
	struct bells t;
	bells_open(&t);
	int a = t.lock[0], b = t.lock[1], c = t.lock[2];
	uint32_t *bell = t.bell;
	UT_OK(elog__lock_acquire_bell(a, bell, 0, 0, msg), msg);
	struct bell_waiter w = { .fd = b, .bell = bell, .rc = -1 };
	pthread_t tw;
	ck_assert_int_eq(pthread_create(&tw, NULL, bell_waiter_run, &w), 0);
	int seen = 0;
	for (int i = 0; i < 10000 && !(seen = byte0_announced(c)); i++)
		usleep(1000);
	ck_assert_msg(seen, "a waiter of 10 s never announced itself on byte 0");
	elog__lock_release_bell(a, bell);
	pthread_join(tw, NULL);
	UT_OK(w.rc, w.msg);
	ck_assert_msg(!byte0_announced(c), "the announcement outlived the wait");
	elog__lock_release_bell(b, bell);
	bells_close(&t);
}
END_TEST

struct follower {
	uint32_t *bell, pubs;
	int64_t us;
	int done;
};

static void *follower_run(void *arg)
{
	struct follower *f = arg;
	elog__bell_follow(f->bell, f->pubs, f->us);
	__atomic_store_n(&f->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* A follower sleeps on the doorbell's count of publications (byte 12),
 * counted at byte 32 while it does, until a publication rings; one that
 * comes too late to be waited for does not make it sleep.  The cover of
 * the sync slot at byte 16 says which end a running sync covers (elog(5),
 * writers). */
UT_TEST(bell_wakes_followers_at_a_publication)
{
	char p[1200];
	int wfd = open(ut_path(p, sizeof p, ut_top, "LOCK"), O_RDWR | O_CREAT, 0666);
	uint32_t *bell = elog__bell_map(wfd);
	ck_assert_ptr_nonnull(bell);
	uint64_t *cover = (uint64_t *)((unsigned char *)bell + 16);
	ck_assert_uint_eq(elog__bell_covering(bell), 0);
	elog__bell_cover(bell, 100);
	ck_assert_uint_eq(cover[0], 100);
	ck_assert_uint_eq(elog__bell_covering(bell), 100);
	elog__bell_cover(bell, 0);
	ck_assert_uint_eq(elog__bell_covering(bell), 0);
	ck_assert_uint_eq(elog__bell_covering(NULL), 0);

	uint32_t pubs = elog__bell_pubs(bell);
	ck_assert_uint_eq(pubs, bell[3]);
	/* 60 s: woken by the publication, not by the time. */
	struct follower f = { bell, pubs, 60 * 1000000, 0 };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, follower_run, &f), 0);
	for (int i = 0; i < 10000 && __atomic_load_n(&bell[8], __ATOMIC_SEQ_CST) != 1; i++)
		usleep(1000);
	ck_assert_uint_eq(bell[8], 1);
	ck_assert(!__atomic_load_n(&f.done, __ATOMIC_SEQ_CST));
	elog__bell_published(bell);
	pthread_join(t, NULL);
	ck_assert_uint_eq(bell[3], pubs + 1);
	ck_assert_uint_eq(bell[8], 0);
	/* The count moved since it was read: no sleep at all. */
	f = (struct follower){ bell, pubs, 60 * 1000000, 0 };
	ck_assert_int_eq(pthread_create(&t, NULL, follower_run, &f), 0);
	pthread_join(t, NULL);
	ck_assert_uint_eq(bell[8], 0);
	elog__bell_unmap(bell);
	close(wfd);
}
END_TEST

struct gatherer {
	uint32_t *bell;
	int64_t us;
	int done;
};

static void *gatherer_run(void *arg)
{
	struct gatherer *g = arg;
	elog__bell_gather(g->bell, g->us);
	__atomic_store_n(&g->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* A publication notes the batches written so far (byte 36, to byte 40)
 * and the followers it woke (byte 44); a leader gathering waits, counted
 * at byte 48, until as many batches more were written, or its bound. */
UT_TEST(bell_gathers_as_many_batches_as_a_publication_woke)
{
	char p[1200];
	int wfd = open(ut_path(p, sizeof p, ut_top, "LOCK"), O_RDWR | O_CREAT, 0666);
	uint32_t *bell = elog__bell_map(wfd);
	ck_assert_ptr_nonnull(bell);
	elog__bell_written(bell);
	elog__bell_written(bell);
	ck_assert_uint_eq(bell[9], 2);
	/* No follower woken: nothing to wait for (60 s: not the bound). */
	elog__bell_published(bell);
	ck_assert_uint_eq(bell[10], 2);
	ck_assert_uint_eq(bell[11], 0);
	elog__bell_gather(bell, 60 * 1000000);
	ck_assert_uint_eq(bell[12], 0);

	/* One follower woken: one batch to wait for, which wakes it. */
	struct follower f = { bell, elog__bell_pubs(bell), 60 * 1000000, 0 };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, follower_run, &f), 0);
	for (int i = 0; i < 10000 && __atomic_load_n(&bell[8], __ATOMIC_SEQ_CST) != 1; i++)
		usleep(1000);
	elog__bell_published(bell);
	pthread_join(t, NULL);
	ck_assert_uint_eq(bell[10], 2);
	ck_assert_uint_eq(bell[11], 1);
	struct gatherer g = { bell, 60 * 1000000, 0 };
	ck_assert_int_eq(pthread_create(&t, NULL, gatherer_run, &g), 0);
	for (int i = 0; i < 10000 && __atomic_load_n(&bell[12], __ATOMIC_SEQ_CST) != 1; i++)
		usleep(1000);
	ck_assert_uint_eq(bell[12], 1);
	ck_assert_uint_eq(bell[13], 3);
	ck_assert(!__atomic_load_n(&g.done, __ATOMIC_SEQ_CST));
	elog__bell_written(bell);
	pthread_join(t, NULL);
	ck_assert_uint_eq(bell[9], 3);
	ck_assert_uint_eq(bell[12], 0);

	/* Batches that do not come: the bound ends the wait. */
	bell[11] = 5;
	int64_t t0 = ut_now_ms();
	elog__bell_gather(bell, 20000);
	ck_assert_int_ge(ut_now_ms() - t0, 20);
	ck_assert_uint_eq(bell[12], 0);
	elog__bell_gather(NULL, 60 * 1000000);
	elog__bell_written(NULL);
	elog__bell_unmap(bell);
	close(wfd);
}
END_TEST

/* A writer's handle maps no file: "writers" stays empty, and LOCK and
 * "writers" truncated under an open handle kill nothing; the next batch
 * finds the tail anew and is acknowledged. */
UT_TEST(writer_handle_maps_no_file)
{
	char p[1200];
	struct stat st;
	struct elog_options o = { .create = 1 };
	struct elog_record r = { .value = "x", .value_len = 1, .ts_ms = ELOG_TS_NOW };
	uint64_t off;
	elog *w;
	UT_OK(elog_open(&w, ut_dir, &o), elog_errmsg(w));
	UT_OK(elog_append(w, &r, &off), elog_errmsg(w));
	UT_OK(elog_sync(w), elog_errmsg(w));
	ck_assert_int_eq(stat(ut_path(p, sizeof p, ut_dir, "writers"), &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert_int_eq(truncate(p, 0), 0);
	ck_assert_int_eq(truncate(ut_path(p, sizeof p, ut_dir, "LOCK"), 0), 0);
	UT_OK(elog_append(w, &r, &off), elog_errmsg(w));
	UT_OK(elog_sync(w), elog_errmsg(w));
	ck_assert_uint_eq(off, 1);
	ck_assert_uint_eq(elog_durable_end(w), 2);
	UT_OK(elog_close(w), NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lock");
	TCase *tc = ut_tcase("lock");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
