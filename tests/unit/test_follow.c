/*
 * test_follow.c: waiting for new durable records (lib/follow.c) and
 * following a log across segment rolls and writer restarts.
 *
 * Timings are generous on purpose: a test asserts that a wake-up comes
 * before a long timeout, never how fast it comes, so a loaded machine does
 * not make it fail.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>

#include "unit.h"
#include "reader.h"

#define GENEROUS_MS 5000

static double cpu_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 + ru.ru_stime.tv_sec * 1e3 +
	       ru.ru_stime.tv_usec / 1e3;
}

static void make_log(int n)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	for (int i = 0; i < n; i++)
		ut_append(w, NULL, "initial");
	UT_OK(elog_close(w), NULL);
}

/* Read to the end, then wait until a record arrives; returns how long it
 * took in ms, or -1 if none came within GENEROUS_MS. */
static int64_t wait_for_record(elog_reader *r, uint64_t want_offset)
{
	struct elog_record rec;
	int64_t t0 = ut_now_ms();
	for (;;) {
		int rc = elog_reader_next(r, &rec);
		if (rc == 0) {
			ck_assert_uint_eq(rec.offset, want_offset);
			return ut_now_ms() - t0;
		}
		ck_assert_msg(rc == ELOG_END, "%d %s", rc, elog_reader_errmsg(r));
		int64_t left = GENEROUS_MS - (ut_now_ms() - t0);
		if (left <= 0)
			return -1;
		rc = elog_reader_wait(r, (int)left);
		ck_assert_msg(rc == 0 || rc == ELOG_TIMEOUT, "wait: %d", rc);
	}
}

/* Follow r until n records with offsets first, first+1, ... have come,
 * each exactly once; fails after 30 s without progress. */
static void follow_exactly(elog_reader *r, uint64_t first, uint64_t n,
                           const char *(*value_of)(uint64_t))
{
	struct elog_record rec;
	uint64_t got = 0;
	int64_t last_progress = ut_now_ms();
	while (got < n) {
		int rc = elog_reader_next(r, &rec);
		if (rc == 0) {
			ck_assert_uint_eq(rec.offset, first + got);
			if (value_of) {
				const char *v = value_of(rec.offset);
				ck_assert_uint_eq(rec.value_len, strlen(v));
				ck_assert_mem_eq(rec.value, v, rec.value_len);
			}
			got++;
			last_progress = ut_now_ms();
			continue;
		}
		ck_assert_msg(rc == ELOG_END, "%d %s", rc, elog_reader_errmsg(r));
		ck_assert_msg(ut_now_ms() - last_progress < 30000, "stuck after %llu records",
		              (unsigned long long)got);
		rc = elog_reader_wait(r, 1000);
		ck_assert_msg(rc == 0 || rc == ELOG_TIMEOUT, "wait: %d", rc);
	}
	/* Nothing more, and nothing twice. */
	UT_RC(elog_reader_next(r, &rec), ELOG_END, r);
}

static const char *value_of(uint64_t off)
{
	static char v[32];
	snprintf(v, sizeof v, "value-%llu", (unsigned long long)off);
	return v;
}

static void append_values(elog *w, uint64_t from, uint64_t n)
{
	static uint64_t off[4096];
	if (n > 4096)
		_exit(11);
	for (uint64_t o = from; o < from + n; o++) {
		struct elog_record rec = ut_rec(0, ELOG_TS_NOW, 0, NULL, value_of(o));
		if (elog_append(w, &rec, &off[o - from]) != 0)
			_exit(10);
	}
	/* Offsets are known once written: check them then. */
	if (elog_sync(w) != 0)
		_exit(12);
	for (uint64_t o = from; o < from + n; o++)
		if (off[o - from] != o)
			_exit(13);
}

UT_TEST(wait_times_out_without_writes)
{
	make_log(3);
	elog_reader *r = ut_open_reader(ut_dir);
	uint64_t offs[8];
	ck_assert_uint_eq(ut_read_offsets(r, offs, 8), 3);
	/* The first wait sets up the watch and may return at once (the
	 * durable end "may have moved" meanwhile); the next one times out. */
	int rc = elog_reader_wait(r, 300);
	ck_assert(rc == 0 || rc == ELOG_TIMEOUT);
	ck_assert_uint_eq(ut_read_offsets(r, offs, 8), 0);
	int64_t t0 = ut_now_ms();
	double c0 = cpu_ms();
	UT_RC(elog_reader_wait(r, 300), ELOG_TIMEOUT, r);
	int64_t took = ut_now_ms() - t0;
	ck_assert_int_ge(took, 250);
	ck_assert_int_lt(took, GENEROUS_MS);
	/* It slept: a busy loop would burn the whole 300 ms of CPU. */
	ck_assert_msg(cpu_ms() - c0 < 100, "%.1f ms of CPU in 300 ms of waiting", cpu_ms() - c0);
	/* A zero timeout (the default) and ELOG_WAIT_NONE return at once;
	 * a negative one that is no constant is refused. */
	UT_RC(elog_reader_wait(r, 0), ELOG_TIMEOUT, r);
	UT_RC(elog_reader_wait(r, ELOG_WAIT_NONE), ELOG_TIMEOUT, r);
	UT_RC(elog_reader_wait(r, -3), ELOG_INVALID, r);
	ck_assert_str_eq(elog_reader_errmsg(r),
	                 "a wait of -3 ms: give milliseconds, ELOG_WAIT_NONE or ELOG_WAIT_FOREVER");
	elog_reader_close(r);
}
END_TEST

UT_TEST(wait_wakes_on_append_in_other_process)
{
	make_log(3);
	elog_reader *r = ut_open_reader(ut_dir);
	uint64_t offs[8];
	ck_assert_uint_eq(ut_read_offsets(r, offs, 8), 3);
	(void)elog_reader_wait(r, 0); /* set the watch up */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		elog *w;
		usleep(200 * 1000);
		if (elog_open(&w, ut_dir, NULL) != 0)
			_exit(2);
		append_values(w, 3, 1);
		if (elog_sync(w) != 0)
			_exit(3);
		/* Stay open: the wake-up must come from the sync alone. */
		usleep(GENEROUS_MS * 1000);
		_exit(elog_close(w) == 0 ? 0 : 4);
	}
	int64_t took = wait_for_record(r, 3);
	ck_assert_msg(took >= 0, "no wake-up within %d ms", GENEROUS_MS);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	elog_reader_close(r);
}
END_TEST

static void *append_later(void *arg)
{
	elog *w = arg;
	usleep(200 * 1000);
	struct elog_record rec = ut_rec(0, ELOG_TS_NOW, 0, NULL, "late");
	uint64_t off;
	if (elog_append(w, &rec, &off) != 0 || elog_sync(w) != 0)
		return (void *)1;
	return NULL;
}

UT_TEST(wait_wakes_on_append_in_other_thread)
{
	make_log(3);
	elog *w = ut_open_writer(ut_dir, 0, 0);
	elog_reader *r = ut_open_reader(ut_dir);
	uint64_t offs[8];
	ck_assert_uint_eq(ut_read_offsets(r, offs, 8), 3);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, append_later, w), 0);
	int64_t took = wait_for_record(r, 3);
	void *res;
	ck_assert_int_eq(pthread_join(t, &res), 0);
	ck_assert_ptr_null(res);
	ck_assert_msg(took >= 0, "no wake-up within %d ms", GENEROUS_MS);
	UT_OK(elog_close(w), NULL);
	elog_reader_close(r);
}
END_TEST

/* Appending without syncing does not wake a follower with nothing to read:
 * it may wake, but must find no record. */
UT_TEST(unsynced_append_is_not_followed)
{
	make_log(3);
	elog *w = ut_open_writer(ut_dir, 0, 0);
	elog_reader *r = ut_open_reader(ut_dir);
	uint64_t offs[8];
	ck_assert_uint_eq(ut_read_offsets(r, offs, 8), 3);
	(void)elog_reader_wait(r, 0);
	ut_append(w, NULL, "buffered");
	(void)elog_reader_wait(r, 300);
	ck_assert_uint_eq(ut_read_offsets(r, offs, 8), 0);
	UT_OK(elog_sync(w), w);
	ck_assert_int_ge(wait_for_record(r, 3), 0);
	UT_OK(elog_close(w), NULL);
	elog_reader_close(r);
}
END_TEST

UT_TEST(reader_fd_becomes_readable)
{
	make_log(3);
	elog *w = ut_open_writer(ut_dir, 0, 0);
	elog_reader *r = ut_open_reader(ut_dir);
	uint64_t offs[8];
	ck_assert_uint_eq(ut_read_offsets(r, offs, 8), 3);
	int fd = elog_reader_fd(r);
	ck_assert_int_ge(fd, 0); /* Linux: inotify */
	ut_append(w, NULL, "x");
	UT_OK(elog_sync(w), w);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, GENEROUS_MS), 1);
	ck_assert_uint_eq(ut_read_offsets(r, offs, 8), 1);
	ck_assert_uint_eq(offs[0], 3);
	/* next() drained it: quiet again. */
	ck_assert_int_eq(poll(&p, 1, 200), 0);
	UT_OK(elog_close(w), NULL);
	elog_reader_close(r);
}
END_TEST

/* A writer in another process appends in bursts over many segment rolls;
 * the follower sees every record once, in order. */
UT_TEST(follow_across_segment_rolls)
{
	enum { TOTAL = 400 };
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	UT_OK(elog_close(w), NULL);
	elog_reader *r = ut_open_reader(ut_dir);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		elog *cw;
		if (elog_open(&cw, ut_dir, NULL) != 0)
			_exit(2);
		for (uint64_t o = 0; o < TOTAL; o += 20) {
			append_values(cw, o, 20);
			if (elog_sync(cw) != 0)
				_exit(3);
			usleep(2000);
		}
		_exit(elog_close(cw) == 0 ? 0 : 4);
	}
	follow_exactly(r, 0, TOTAL, value_of);
	ck_assert_int_eq(ut_wait_child(pid), 0);
	/* It did roll, many times. */
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	ck_assert_uint_ge(sl.n, 3);
	elog__seglist_free(&sl);
	close(dfd);
	elog_reader_close(r);
}
END_TEST

/* The writer closes and another opens (recovery, a new watermark written)
 * while the follower waits; it goes on with the next offset. */
UT_TEST(follow_across_writer_restarts)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	UT_OK(elog_close(w), NULL);
	elog_reader *r = ut_open_reader(ut_dir);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (uint64_t round = 0; round < 5; round++) {
			elog *cw;
			if (elog_open(&cw, ut_dir, NULL) != 0)
				_exit(2);
			append_values(cw, round * 30, 15);
			if (elog_sync(cw) != 0)
				_exit(3);
			usleep(5000);
			append_values(cw, round * 30 + 15, 15);
			if (elog_close(cw) != 0)
				_exit(4);
			usleep(5000);
		}
		_exit(0);
	}
	follow_exactly(r, 0, 150, value_of);
	ck_assert_int_eq(ut_wait_child(pid), 0);
	elog_reader_close(r);
}
END_TEST

/* A writer killed mid-way (no close) and restarted: the follower sees the
 * records it had synced, then the new writer's, with no offset twice. */
UT_TEST(follow_across_writer_crash)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	UT_OK(elog_close(w), NULL);
	elog_reader *r = ut_open_reader(ut_dir);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		elog *cw;
		if (elog_open(&cw, ut_dir, NULL) != 0)
			_exit(2);
		append_values(cw, 0, 40);
		if (elog_sync(cw) != 0)
			_exit(3);
		/* Buffered, never synced: lost with the process. */
		struct elog_record rec = ut_rec(0, ELOG_TS_NOW, 0, NULL, "lost");
		elog_append(cw, &rec, NULL);
		_exit(0);
	}
	ck_assert_int_eq(ut_wait_child(pid), 0);
	follow_exactly(r, 0, 40, value_of);
	w = ut_open_writer(ut_dir, 0, 0);
	ck_assert_uint_eq(elog_next_offset(w), 40);
	for (uint64_t o = 40; o < 60; o++)
		ut_append(w, NULL, value_of(o));
	UT_OK(elog_sync(w), w);
	follow_exactly(r, 40, 20, value_of);
	UT_OK(elog_close(w), NULL);
	elog_reader_close(r);
}
END_TEST

/* A follower learns of the segments the writer creates from its inotify
 * watch: across rolls it never lists the directory again (a listing costs
 * as much as the log has segments). */
UT_TEST(follower_learns_new_segments_without_listing)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	for (int i = 0; i < 300; i++)
		ut_append(w, NULL, "a record of the log before the follower came");
	UT_OK(elog_sync(w), w);
	elog_reader *r = ut_open_reader(ut_dir);
	elog_reader_fd(r); /* the watches are made */
	uint64_t offs[400];
	ck_assert_uint_eq(ut_read_offsets(r, offs, 400), 300);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	size_t before = sl.n;
	elog__seglist_free(&sl);
	unsigned long lists = r->lists;
	for (int batch = 0; batch < 300; batch++) {
		ut_append(w, NULL, "one record a batch, rolling every few dozen");
		UT_OK(elog_sync(w), w);
		ck_assert_uint_eq(ut_read_offsets(r, offs, 1), 1);
		ck_assert_uint_eq(offs[0], 300 + (uint64_t)batch);
	}
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	ck_assert_uint_ge(sl.n, before + 5);
	elog__seglist_free(&sl);
	close(dfd);
	ck_assert_uint_eq(r->lists, lists);
	UT_OK(elog_close(w), NULL);
	elog_reader_close(r);
}
END_TEST

/* A segment made after the reader's list but before its watch gets no
 * event: the list is made again once the watch is there, so the follower
 * never jumps from the segment it read to one made after the watch. */
UT_TEST(segment_made_before_the_watch_is_not_skipped)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	uint64_t offs[400];
	for (int i = 0; i < 10; i++)
		ut_append(w, NULL, "a record of about seventy bytes, give or take a few");
	UT_OK(elog_sync(w), w);
	elog_reader *r = ut_open_reader(ut_dir);
	ck_assert_uint_eq(ut_read_offsets(r, offs, 400), 10);
	for (int i = 0; i < 60; i++) /* one roll, unwatched */
		ut_append(w, NULL, "a record of about seventy bytes, give or take a few");
	UT_OK(elog_sync(w), w);
	elog_reader_fd(r);            /* the watch */
	for (int i = 0; i < 120; i++) /* more rolls, watched */
		ut_append(w, NULL, "a record of about seventy bytes, give or take a few");
	UT_OK(elog_sync(w), w);
	ck_assert_uint_eq(ut_read_offsets(r, offs, 400), 180);
	for (int i = 0; i < 180; i++)
		ck_assert_uint_eq(offs[i], 10 + (uint64_t)i);
	UT_OK(elog_close(w), NULL);
	elog_reader_close(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("follow");
	TCase *tc = ut_tcase("follow");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
