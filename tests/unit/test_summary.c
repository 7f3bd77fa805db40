/*
 * test_summary.c: elog_summary_read() (lib/summary.c) on logs made by hand,
 * the lock holders read from /proc/locks (lib/holders.c), the marks of the
 * last maintenance runs (lib/lastrun.c), and the records a consumer lost to
 * retention (lib/consumers.c).
 */
#include <sys/file.h>

#include "unit.h"

#define TS0 1764385200000LL

static int open_dir(void)
{
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	return dfd;
}

/* Segment 0 holds offsets 0..9, segment 10 offsets 10..14, of which the
 * watermark vouches for 10..12 only. */
static void two_segments(void)
{
	uint64_t a[10], b[5];
	for (int i = 0; i < 10; i++)
		a[i] = (uint64_t)i;
	for (int i = 0; i < 5; i++)
		b[i] = 10 + (uint64_t)i;
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	ut_seg_fill(ut_dir, 0, a, 10, TS0);
	ut_seg_create(ut_dir, 10);
	ut_seg_fill(ut_dir, 10, b, 3, TS0);
	uint64_t durable = ut_file_size(ut_seg_path(ut_dir, 10, SEG_EXT));
	ut_seg_fill(ut_dir, 10, b + 3, 2, TS0);
	ut_set_wm(ut_dir, 13, 10, durable);
}

UT_TEST(offsets_records_and_times_stop_at_the_durable_end)
{
	struct elog_summary s;
	char msg[ELOG_MSG_MAX];

	two_segments();
	UT_OK(elog_summary_read(ut_dir, &s, msg), msg);
	ck_assert(s.have_first && s.have_last);
	ck_assert_uint_eq(s.first, 0);
	ck_assert_uint_eq(s.last, 12);
	ck_assert_uint_eq(s.records, 13);
	ck_assert_int_eq(s.records_exact, 1);
	ck_assert_uint_eq(s.durable_end, 13);
	ck_assert_uint_eq(s.segments, 2);
	ck_assert_uint_eq(s.active_base, 10);
	ck_assert_int_eq(s.oldest_ms, TS0);
	ck_assert_int_eq(s.newest_ms, TS0 + 12);
	ck_assert_uint_eq(s.log_bytes, ut_file_size(ut_seg_path(ut_dir, 0, SEG_EXT)) +
	                                       ut_file_size(ut_seg_path(ut_dir, 10, SEG_EXT)));
	ck_assert_int_eq(s.damaged, 0);
	ck_assert_int_eq(s.retain_last_ms, INT64_MIN);
	ck_assert_int_eq(s.compact_last_ms, INT64_MIN);
	elog_summary_free(&s);
}
END_TEST

UT_TEST(nothing_durable_in_the_active_segment)
{
	struct elog_summary s;

	two_segments();
	ut_set_wm(ut_dir, 10, 10, SEG_HDR);
	UT_OK(elog_summary_read(ut_dir, &s, NULL), NULL);
	ck_assert_uint_eq(s.last, 9);
	ck_assert_uint_eq(s.records, 10);
	ck_assert_int_eq(s.newest_ms, TS0 + 9);
	elog_summary_free(&s);
}
END_TEST

UT_TEST(the_start_file_hides_segments_below_it)
{
	struct elog_summary s;

	two_segments();
	int dfd = open_dir();
	UT_OK(elog__start_write(dfd, 10, NULL), NULL);
	close(dfd);
	UT_OK(elog_summary_read(ut_dir, &s, NULL), NULL);
	ck_assert_uint_eq(s.start, 10);
	ck_assert_uint_eq(s.first, 10);
	ck_assert_uint_eq(s.records, 3);
	ck_assert_uint_eq(s.segments, 1);
	ck_assert_int_eq(s.oldest_ms, TS0 + 10);
	elog_summary_free(&s);
}
END_TEST

UT_TEST(a_damaged_first_record_is_reported_not_fatal)
{
	struct elog_summary s;

	two_segments();
	ut_flip_bit(ut_seg_path(ut_dir, 0, SEG_EXT), SEG_HDR + 12, 0);
	UT_OK(elog_summary_read(ut_dir, &s, NULL), NULL);
	ck_assert_int_eq(s.damaged, 1);
	ck_assert_uint_eq(s.first, 10);
	elog_summary_free(&s);
}
END_TEST

UT_TEST(not_a_log)
{
	struct elog_summary s;
	char msg[ELOG_MSG_MAX];

	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	UT_RC(elog_summary_read(ut_dir, &s, msg), ELOG_NOTLOG, msg);
	ck_assert_str_eq(msg, "not an elog directory (no settings file)");
}
END_TEST

UT_TEST(lock_holders_from_proc_locks)
{
	char p[1200];
	pid_t *pids;
	size_t n;

	if (access("/proc/locks", R_OK) != 0)
		return;
	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	int dfd = open_dir();
	UT_OK(elog__lock_holders(dfd, FN_WRITERS, &pids, &n), NULL);
	ck_assert_uint_eq(n, 0);
	int fd = open(ut_path(p, sizeof p, ut_dir, FN_WRITERS), O_RDWR | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	UT_OK(elog__lock_holders(dfd, FN_WRITERS, &pids, &n), NULL);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(flock(fd, LOCK_SH), 0);
	UT_OK(elog__lock_holders(dfd, FN_WRITERS, &pids, &n), NULL);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(pids[0], getpid());
	free(pids);
	/* Another file of the same directory is not confused with it. */
	UT_OK(elog__lock_holders(dfd, ".", &pids, &n), NULL);
	ck_assert_uint_eq(n, 0);
	close(fd);
	UT_OK(elog__lock_holders(dfd, FN_WRITERS, &pids, &n), NULL);
	ck_assert_uint_eq(n, 0);
	close(dfd);
}
END_TEST

UT_TEST(lastrun_round_trip)
{
	char p[1200];

	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	int dfd = open_dir();
	ck_assert_int_eq(elog__lastrun_read(dfd, FN_RETAIN_LAST), INT64_MIN);
	elog__lastrun_mark(dfd, FN_RETAIN_LAST, TS0, NULL, 0);
	ck_assert_int_eq(elog__lastrun_read(dfd, FN_RETAIN_LAST), TS0);
	/* Retention's loss lines after the time leave the time readable. */
	const char *more = "lost uplink 100 1333 1234\nlost a-much-longer-name 7 7 1\n";
	elog__lastrun_mark(dfd, FN_RETAIN_LAST, TS0 + 1, more, strlen(more));
	ck_assert_int_eq(elog__lastrun_read(dfd, FN_RETAIN_LAST), TS0 + 1);
	size_t len;
	unsigned char *text = ut_read_file(ut_path(p, sizeof p, ut_dir, FN_RETAIN_LAST), &len);
	ck_assert_str_eq((char *)text, "1764385200001\nlost uplink 100 1333 1234\n"
	                               "lost a-much-longer-name 7 7 1\n");
	free(text);
	ut_write_file(ut_path(p, sizeof p, ut_dir, FN_RETAIN_LAST), "12x\n", 4);
	ck_assert_int_eq(elog__lastrun_read(dfd, FN_RETAIN_LAST), INT64_MIN);
	close(dfd);
}
END_TEST

UT_TEST(retain_and_compact_mark_their_runs)
{
	struct elog_retain_opts ro = { 0 };
	struct elog_compact_opts co = { 0 };
	struct elog_summary s;

	two_segments();
	ro.max_bytes = 1;
	ro.dry_run = 1;
	UT_OK(elog_retain(ut_dir, &ro, NULL, NULL), NULL);
	UT_OK(elog_summary_read(ut_dir, &s, NULL), NULL);
	ck_assert_int_eq(s.retain_last_ms, INT64_MIN);
	elog_summary_free(&s);
	ro.dry_run = 0;
	co.now_ms = TS0 + 5;
	ut_cleanup_compact(ut_dir);
	UT_OK(elog_compact(ut_dir, &co, NULL, NULL), NULL);
	UT_OK(elog_retain(ut_dir, &ro, NULL, NULL), NULL);
	UT_OK(elog_summary_read(ut_dir, &s, NULL), NULL);
	ck_assert_int_ge(s.retain_last_ms, ut_now_ms() - 60000);
	ck_assert_int_eq(s.compact_last_ms, TS0 + 5);
	ck_assert_int_eq(s.records_exact, 0);
	elog_summary_free(&s);
}
END_TEST

UT_TEST(consumer_lost_to_retention)
{
	struct elog_consumer c;

	two_segments();
	UT_OK(elog_consumer_commit(ut_dir, "slow", 3, NULL), NULL);
	UT_OK(elog_consumer_commit(ut_dir, "edge", 8, NULL), NULL);
	UT_OK(elog_consumer_get(ut_dir, "slow", &c, NULL), NULL);
	ck_assert_uint_eq(c.lost, 0);
	ck_assert_uint_eq(c.lag, 9);
	int dfd = open_dir();
	UT_OK(elog__start_write(dfd, 10, NULL), NULL);
	close(dfd);
	UT_OK(elog_consumer_get(ut_dir, "slow", &c, NULL), NULL);
	ck_assert_uint_eq(c.lost, 6); /* offsets 4..9 */
	ck_assert_uint_eq(c.lag, 3);  /* 10..12 */
	UT_OK(elog_consumer_get(ut_dir, "edge", &c, NULL), NULL);
	ck_assert_uint_eq(c.lost, 1); /* offset 9 */
	ck_assert_uint_eq(c.lag, 3);
	UT_OK(elog_consumer_commit(ut_dir, "edge", 9, NULL), NULL);
	UT_OK(elog_consumer_get(ut_dir, "edge", &c, NULL), NULL);
	ck_assert_uint_eq(c.lost, 0);
	ck_assert_uint_eq(c.lag, 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("summary");
	TCase *tc = ut_tcase("summary");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
