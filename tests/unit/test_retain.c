/*
 * test_retain.c: retention (lib/retain.c, lib/maint.c): by age, by size,
 * the stored policy, dry runs, readers told of the gap, refusals, and a
 * crash at every step never leaving a hole in the middle of the log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "../crash/maint_fault.h"
#include "internal.h"

/* Each test's log is ut_dir, in the scratch directory of unit.h. */
static char msg[ELOG_MSG_MAX];

#define T0 1700000000000ll
#define HOUR (3600 * 1000ll)

/* 100 hours of records, 60 an hour, one hour per 4 KiB segment or so. */
static void fill(const char *path, const struct elog_options *extra)
{
	struct elog_options o = { .create = 1, .segment_bytes = 4096 };
	if (extra) {
		o.retain_ms = extra->retain_ms;
		o.retain_bytes = extra->retain_bytes;
	}
	elog *w;
	ck_assert_msg(elog_open(&w, path, &o) == 0, "%s", elog_errmsg(w));
	for (int h = 0; h < 100; h++)
		for (int i = 0; i < 60; i++) {
			struct elog_record r = { 0 };
			r.ts_ms = T0 + h * HOUR + i;
			r.value = "a value of some thirty bytes..";
			r.value_len = 30;
			ck_assert_int_eq(elog_append(w, &r, NULL), 0);
		}
	ck_assert_int_eq(elog_close(w), 0);
}

struct seen {
	int n;
	uint64_t first_base, last_end;
};

static void each(const struct elog_segment_report *rep, void *arg)
{
	struct seen *s = arg;
	ck_assert_int_eq(rep->action, ELOG_SEG_REMOVED);
	if (s->n++ == 0)
		s->first_base = rep->base;
	else
		ck_assert_uint_eq(rep->base, s->last_end);	/* oldest first, no skip */
	s->last_end = rep->end;
}

static uint64_t first_base(const char *path)
{
	struct seglist sl;
	int dfd = open(path, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(elog__seglist_read(dfd, &sl), 0);
	uint64_t b = sl.n ? sl.base[0] : UINT64_MAX;
	elog__seglist_free(&sl);
	close(dfd);
	return b;
}

/* Read the whole log: a gap only at the start, then every offset from the
 * first segment's base to the end, in order. */
static uint64_t read_all(const char *path, uint64_t *gap_last)
{
	elog_reader *r;
	struct elog_record rec;
	uint64_t n = 0, next = 0, first, last;
	int rc, gaps = 0;
	ck_assert_int_eq(elog_reader_open(&r, path), 0);
	ck_assert_int_eq(elog_reader_seek(r, 0), 0);
	while ((rc = elog_reader_next(r, &rec)) == 0 || rc == ELOG_GAP) {
		if (rc == ELOG_GAP) {
			elog_reader_gap(r, &first, &last);
			ck_assert_int_eq(gaps++, 0);
			ck_assert_uint_eq(n, 0);
			ck_assert_uint_eq(first, 0);
			*gap_last = last;
			next = last + 1;
			continue;
		}
		ck_assert_uint_eq(rec.offset, next);	/* nothing missing */
		next++;
		n++;
	}
	ck_assert_int_eq(rc, ELOG_END);
	elog_reader_close(r);
	if (!gaps)
		*gap_last = UINT64_MAX;
	return n;
}

START_TEST(by_age)
{
	struct elog_retain_opts o = { 0 };
	struct elog_retain_result res;
	struct seen s = { 0 };
	uint64_t gap;
	fill(ut_dir, NULL);
	o.now_ms = T0 + 100 * HOUR;
	o.max_age_ms = 50 * HOUR;
	o.each = each;
	o.arg = &s;
	ck_assert_int_eq(elog_retain(ut_dir, &o, &res, msg), 0);
	ck_assert_int_gt(s.n, 30);
	ck_assert_uint_eq(res.segments, (uint64_t)s.n);
	ck_assert_uint_eq(res.start_before, 0);
	ck_assert_uint_eq(res.start_after, s.last_end);
	ck_assert_uint_eq(first_base(ut_dir), res.start_after);
	uint64_t n = read_all(ut_dir, &gap);
	ck_assert_uint_eq(gap, res.start_after - 1);
	ck_assert_uint_eq(n, 6000 - res.start_after);
	/* Every record older than the limit that is left shares a segment
	 * with a younger one: the first record left is at most a segment's
	 * worth older than the limit. */
	elog_reader *r;
	struct elog_record rec;
	ck_assert_int_eq(elog_reader_open(&r, ut_dir), 0);
	ck_assert_int_eq(elog_reader_next(r, &rec), 0);
	ck_assert_int_gt(rec.ts_ms, T0 + 48 * HOUR);
	ck_assert_int_le(rec.ts_ms, T0 + 50 * HOUR);
	elog_reader_close(r);
	/* Again: nothing more goes. */
	ck_assert_int_eq(elog_retain(ut_dir, &o, &res, msg), 0);
	ck_assert_uint_eq(res.segments, 0);
}
END_TEST

START_TEST(by_size_never_the_active_segment)
{
	struct elog_retain_opts o = { 0 };
	struct elog_retain_result res;
	uint64_t gap;
	fill(ut_dir, NULL);
	o.max_bytes = 40 * 1024;
	ck_assert_int_eq(elog_retain(ut_dir, &o, &res, msg), 0);
	ck_assert_uint_le(res.total_bytes, 40 * 1024);
	ck_assert_uint_gt(res.total_bytes, 40 * 1024 - 4096);
	read_all(ut_dir, &gap);
	/* A limit below one segment leaves the active segment alone. */
	o.max_bytes = 1;
	ck_assert_int_eq(elog_retain(ut_dir, &o, &res, msg), 0);
	struct seglist sl;
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(elog__seglist_read(dfd, &sl), 0);
	ck_assert_uint_eq(sl.n, 1);
	elog__seglist_free(&sl);
	close(dfd);
	elog *w;
	ck_assert_int_eq(elog_open(&w, ut_dir, NULL), 0);
	ck_assert_uint_eq(elog_next_offset(w), 6000);
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

START_TEST(stored_policy_and_overrides)
{
	struct elog_options pol = { .retain_bytes = 20 * 1024 };
	struct elog_retain_opts o = { 0 };
	struct elog_retain_result res;
	fill(ut_dir, &pol);
	o.dry_run = 1;
	ck_assert_int_eq(elog_retain(ut_dir, &o, &res, msg), 0);
	ck_assert_uint_gt(res.segments, 0);
	ck_assert_uint_eq(first_base(ut_dir), 0);	/* a dry run removes nothing */
	/* The option turns the stored limit off. */
	o.max_bytes = ELOG_RETAIN_OFF;
	ck_assert_int_eq(elog_retain(ut_dir, &o, &res, msg), ELOG_INVALID);
	ck_assert_str_eq(msg, "no retention policy: the log has none stored, and "
	                 "no age or size limit was given");
	o.dry_run = 0;
	o.max_bytes = 0;
	ck_assert_int_eq(elog_retain(ut_dir, &o, &res, msg), 0);
	ck_assert_uint_le(res.total_bytes, 20 * 1024);
	ck_assert_uint_eq(first_base(ut_dir), res.start_after);
}
END_TEST

START_TEST(no_policy_is_an_error)
{
	fill(ut_dir, NULL);
	ck_assert_int_eq(elog_retain(ut_dir, NULL, NULL, msg), ELOG_INVALID);
	ck_assert_uint_eq(first_base(ut_dir), 0);
}
END_TEST

START_TEST(refusals)
{
	struct elog_retain_opts o = { .max_bytes = 1 };
	int lockfd;
	ck_assert_int_eq(elog_retain("/nonexistent/elog", &o, NULL, msg), ENOENT);
	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	ck_assert_int_eq(elog_retain(ut_dir, &o, NULL, msg), ELOG_NOTLOG);
	ut_rm_rf(ut_dir);
	fill(ut_dir, NULL);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(elog__lock_take(dfd, FN_MAINT, 0, 1, &lockfd, msg), 0);
	pid_t pid = fork();
	if (pid == 0)
		_exit(elog_retain(ut_dir, &o, NULL, NULL) == ELOG_LOCKED ? 0 : 1);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	close(lockfd);
	close(dfd);
	ck_assert_uint_eq(first_base(ut_dir), 0);
	/* A damaged segment in the way stops the run there. */
	ut_write_at(ut_seg_path(ut_dir, 0, SEG_EXT), 100, "XXXX", 4);
	ck_assert_int_eq(elog_retain(ut_dir, &o, NULL, msg), ELOG_CORRUPT);
	ck_assert_ptr_nonnull(strstr(msg, "00000000000000000000.log: "));
}
END_TEST

/* A crash at each step: the log reads with one gap at its start at most,
 * and the next run finishes. */
START_TEST(crash_at_every_step)
{
	char copy[1200];
	uint64_t gap;
	ut_path(copy, sizeof copy, ut_top, "copy");
	fill(copy, NULL);
	int n;
	for (n = 1;; n++) {
		ut_restore_dir(ut_dir, copy);
		pid_t pid = fork();
		if (pid == 0) {
			char v[16];
			struct elog_retain_opts o = { .max_bytes = 200 * 1024 };
			snprintf(v, sizeof v, "%d", n);
			setenv(MAINT_CRASH_ENV, v, 1);
			_exit(elog_retain(ut_dir, &o, NULL, NULL) == 0 ? 0 : 1);
		}
		int st;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		uint64_t got = read_all(ut_dir, &gap);
		ck_assert_uint_eq(got, 6000 - first_base(ut_dir));
		struct elog_retain_opts o = { .max_bytes = 200 * 1024 };
		struct elog_retain_result res;
		ck_assert_int_eq(elog_retain(ut_dir, &o, &res, msg), 0);
		read_all(ut_dir, &gap);
		ck_assert_uint_le(res.total_bytes, 200 * 1024);
		if (WEXITSTATUS(st) == 0)
			break;
		ck_assert_int_eq(WEXITSTATUS(st), MAINT_CRASH_STATUS);
	}
	ck_assert_int_gt(n, 10);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("retain");
	TCase *tc = ut_tcase("retain");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, by_age);
	tcase_add_test(tc, by_size_never_the_active_segment);
	tcase_add_test(tc, stored_policy_and_overrides);
	tcase_add_test(tc, no_policy_is_an_error);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, crash_at_every_step);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
