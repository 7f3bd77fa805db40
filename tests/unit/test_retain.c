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
			UT_OK(elog_append(w, &r, NULL), w);
		}
	UT_OK(elog_close(w), NULL);
}

struct seen {
	int n;
	uint64_t first_base, last_end;
};

static void each(void *arg, const struct elog_segment_report *rep)
{
	struct seen *s = arg;
	ck_assert_int_eq(rep->action, ELOG_SEG_REMOVED);
	if (s->n++ == 0)
		s->first_base = rep->base;
	else
		ck_assert_uint_eq(rep->base, s->last_end); /* oldest first, no skip */
	s->last_end = rep->end;
}

static uint64_t first_base(const char *path)
{
	struct seglist sl;
	int dfd = open(path, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
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
	UT_OK(elog_reader_open(&r, path), r);
	UT_OK(elog_reader_seek(r, 0), r);
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
		ck_assert_uint_eq(rec.offset, next); /* nothing missing */
		next++;
		n++;
	}
	ck_assert_int_eq(rc, ELOG_END);
	elog_reader_close(r);
	if (!gaps)
		*gap_last = UINT64_MAX;
	return n;
}

UT_TEST(by_age)
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
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
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
	UT_OK(elog_reader_open(&r, ut_dir), r);
	UT_OK(elog_reader_next(r, &rec), r);
	ck_assert_int_gt(rec.ts_ms, T0 + 48 * HOUR);
	ck_assert_int_le(rec.ts_ms, T0 + 50 * HOUR);
	elog_reader_close(r);
	/* Again: nothing more goes. */
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
	ck_assert_uint_eq(res.segments, 0);
}
END_TEST

UT_TEST(by_size_never_the_active_segment)
{
	struct elog_retain_opts o = { 0 };
	struct elog_retain_result res;
	uint64_t gap;
	fill(ut_dir, NULL);
	o.max_bytes = 40 * 1024;
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
	ck_assert_uint_le(res.total_bytes, 40 * 1024);
	ck_assert_uint_gt(res.total_bytes, 40 * 1024 - 4096);
	read_all(ut_dir, &gap);
	/* A limit below one segment leaves the active segment alone. */
	o.max_bytes = 1;
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
	struct seglist sl;
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	ck_assert_uint_eq(sl.n, 1);
	elog__seglist_free(&sl);
	close(dfd);
	elog *w;
	UT_OK(elog_open(&w, ut_dir, NULL), w);
	ck_assert_uint_eq(elog_next_offset(w), 6000);
	UT_OK(elog_close(w), NULL);
}
END_TEST

UT_TEST(stored_policy_and_overrides)
{
	struct elog_options pol = { .retain_bytes = 20 * 1024 };
	struct elog_retain_opts o = { 0 };
	struct elog_retain_result res;
	fill(ut_dir, &pol);
	o.dry_run = 1;
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
	ck_assert_uint_gt(res.segments, 0);
	ck_assert_uint_eq(first_base(ut_dir), 0); /* a dry run removes nothing */
	/* The option turns the stored limit off. */
	o.max_bytes = ELOG_RETAIN_OFF;
	UT_RC(elog_retain(ut_dir, &o, &res, msg), ELOG_INVALID, msg);
	ck_assert_str_eq(msg, "no retention policy: the log has none stored, and "
	                      "no age or size limit was given");
	o.dry_run = 0;
	o.max_bytes = 0;
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
	ck_assert_uint_le(res.total_bytes, 20 * 1024);
	ck_assert_uint_eq(first_base(ut_dir), res.start_after);
}
END_TEST

UT_TEST(no_policy_is_an_error)
{
	fill(ut_dir, NULL);
	UT_RC(elog_retain(ut_dir, NULL, NULL, msg), ELOG_INVALID, msg);
	ck_assert_uint_eq(first_base(ut_dir), 0);
}
END_TEST

UT_TEST(refusals)
{
	struct elog_retain_opts o = { .max_bytes = 1 };
	int lockfd;
	UT_RC(elog_retain("/nonexistent/elog", &o, NULL, msg), ENOENT, msg);
	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	UT_RC(elog_retain(ut_dir, &o, NULL, msg), ELOG_NOTLOG, msg);
	ut_rm_rf(ut_dir);
	fill(ut_dir, NULL);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	UT_OK(elog__lock_take_ms(dfd, FN_MAINT, 0, 1, &lockfd, msg), msg);
	pid_t pid = fork();
	if (pid == 0)
		_exit(elog_retain(ut_dir, &o, NULL, NULL) == ELOG_LOCKED ? 0 : 1);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	close(lockfd);
	close(dfd);
	ck_assert_uint_eq(first_base(ut_dir), 0);
	/* A damaged segment in the way no longer stops a size limit: it
	 * goes by its size. */
	struct elog_retain_result res;
	ut_write_at(ut_seg_path(ut_dir, 0, SEG_EXT), 100, "XXXX", 4);
	ck_assert_msg(elog_retain(ut_dir, &o, &res, msg) == 0, "%s", msg);
	ck_assert_uint_eq(res.damaged, 1);
	ck_assert_uint_eq(res.unjudged, 0);
	ck_assert_uint_gt(first_base(ut_dir), 0);
}
END_TEST

/* The base of the k-th segment (0-based). */
static uint64_t nth_base(const char *path, size_t k)
{
	struct seglist sl;
	int dfd = open(path, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	ck_assert_uint_gt(sl.n, k);
	uint64_t b = sl.base[k];
	elog__seglist_free(&sl);
	close(dfd);
	return b;
}

static size_t nsegments(const char *path)
{
	struct seglist sl;
	int dfd = open(path, O_RDONLY | O_DIRECTORY);
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	size_t n = sl.n;
	elog__seglist_free(&sl);
	close(dfd);
	return n;
}

UT_TEST(damaged_header_judged_by_its_neighbour)
{
	struct elog_retain_opts o = { 0 };
	struct elog_retain_result res;
	fill(ut_dir, NULL);
	uint64_t b3 = nth_base(ut_dir, 3);
	ut_write_at(ut_seg_path(ut_dir, b3, SEG_EXT), 2, "X", 1);
	o.now_ms = T0 + 100 * HOUR;
	o.max_age_ms = 50 * HOUR;
	ck_assert_msg(elog_retain(ut_dir, &o, &res, msg) == 0, "%s", msg);
	ck_assert_uint_gt(res.start_after, b3);
	ck_assert_uint_eq(res.damaged, 1);
	ck_assert_uint_eq(res.unjudged, 0);
	ck_assert_int_eq(res.kept_why, ELOG_KEPT_YOUNG);
}
END_TEST

UT_TEST(damaged_header_nothing_later_judges)
{
	struct elog_retain_opts o = { 0 };
	struct elog_retain_result res;
	fill(ut_dir, NULL);
	size_t n = nsegments(ut_dir);
	uint64_t last = nth_base(ut_dir, n - 2); /* the last closed one */
	ut_write_at(ut_seg_path(ut_dir, last, SEG_EXT), 2, "X", 1);
	o.now_ms = T0 + 1000 * HOUR;
	o.max_age_ms = 50 * HOUR;
	ck_assert_msg(elog_retain(ut_dir, &o, &res, msg) == 0, "%s", msg);
	ck_assert_uint_eq(res.start_after, last);
	ck_assert_uint_eq(res.unjudged, 1);
	ck_assert_uint_eq(res.unjudged_base, last);
	ck_assert_int_eq(res.kept_why, ELOG_KEPT_DAMAGED);
	ck_assert_uint_eq(first_base(ut_dir), last);
}
END_TEST

struct losses_seen {
	int n;
	struct elog_consumer_loss l;
	char name[ELOG_CONSUMER_NAME_MAX + 1];
};

static void on_loss(void *arg, const struct elog_consumer_loss *l)
{
	struct losses_seen *s = arg;
	s->n++;
	s->l = *l;
	snprintf(s->name, sizeof s->name, "%s", l->name);
	s->l.name = s->name;
}

static struct elog_consumer consumer(const char *name)
{
	struct elog_consumer c;
	ck_assert_msg(elog_consumer_get(ut_dir, name, &c, msg) == 0, "%s", msg);
	return c;
}

UT_TEST(losses_are_kept_until_acknowledged)
{
	struct elog_retain_opts o = { .max_bytes = 40 * 1024, .lost = on_loss };
	struct elog_retain_result res;
	struct losses_seen seen = { 0 };
	o.arg = &seen;
	fill(ut_dir, NULL);
	UT_OK(elog_consumer_commit(ut_dir, "slow", 99, msg), msg);
	UT_OK(elog_consumer_commit(ut_dir, "fast", 5990, msg), msg);
	/* A dry run tells, and records nothing. */
	o.dry_run = 1;
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
	ck_assert_int_eq(seen.n, 1);
	ck_assert_int_eq(seen.l.recorded, 0);
	ck_assert_int_eq(ut_exists(ut_path((char[1200]){ 0 }, 1200, ut_dir, FN_LOSSES)), 0);
	o.dry_run = 0;
	seen.n = 0;
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
	uint64_t s = res.start_after;
	ck_assert_int_eq(seen.n, 1);
	ck_assert_str_eq(seen.name, "slow");
	ck_assert_uint_eq(seen.l.first, 100);
	ck_assert_uint_eq(seen.l.last, s - 1);
	ck_assert_uint_eq(seen.l.records, s - 100);
	ck_assert_int_eq(seen.l.recorded, 1);
	ck_assert_int_eq(seen.l.forced, 0);
	ck_assert_uint_eq(res.losers, 1);
	/* The consumer moves past the gap: the loss stays. */
	UT_OK(elog_consumer_commit(ut_dir, "slow", 5999, msg), msg);
	struct elog_consumer c = consumer("slow");
	ck_assert_uint_eq(c.lost, s - 100);
	ck_assert_uint_eq(c.lost_first, 100);
	ck_assert_uint_eq(c.lost_last, s - 1);
	ck_assert_uint_eq(consumer("fast").lost, 0);
	/* More retention adds what is new. */
	o.max_bytes = 20 * 1024;
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
	ck_assert_uint_eq(res.losers, 0); /* slow had read that far */
	ck_assert_uint_eq(consumer("slow").lost, s - 100);
	UT_OK(elog_consumer_ack_loss(ut_dir, "slow", msg), msg);
	c = consumer("slow");
	ck_assert_uint_eq(c.lost, 0);
	ck_assert_uint_eq(c.lost_first, 0);
	UT_OK(elog_consumer_ack_loss(ut_dir, "slow", msg), msg);
	UT_RC(elog_consumer_ack_loss(ut_dir, "nobody", msg), ELOG_NOCONSUMER, msg);
	UT_RC(elog_consumer_ack_loss(ut_dir, "a b", msg), ELOG_BADNAME, msg);
}
END_TEST

UT_TEST(losses_add_counts_each_offset_once)
{
	struct losses l = { 0 };
	UT_OK(elog__losses_add(&l, "a", 100, 199, 1), NULL);
	UT_OK(elog__losses_add(&l, "a", 100, 199, 2), NULL); /* a rerun */
	ck_assert_uint_eq(l.v[0].count, 100);
	UT_OK(elog__losses_add(&l, "a", 150, 299, 3), NULL); /* overlaps */
	ck_assert_uint_eq(l.v[0].count, 200);
	UT_OK(elog__losses_add(&l, "a", 500, 599, 4), NULL); /* beyond */
	ck_assert_uint_eq(l.v[0].count, 300);
	ck_assert_uint_eq(l.v[0].first, 100);
	ck_assert_uint_eq(l.v[0].last, 599);
	UT_OK(elog__losses_add(&l, "a", 50, 99, 5), NULL); /* below */
	ck_assert_uint_eq(l.v[0].count, 350);
	ck_assert_int_eq(l.v[0].ms, 5);
	UT_OK(elog__losses_add(&l, "b", 7, 7, 6), NULL);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_int_eq(elog__losses_remove(&l, "a"), 1);
	ck_assert_int_eq(elog__losses_remove(&l, "a"), 0);
	ck_assert_str_eq(l.v[0].name, "b");
	elog__losses_free(&l);
}
END_TEST

UT_TEST(losses_file_round_trip_and_bad_lines)
{
	struct losses l = { 0 };
	char path[1200];
	fill(ut_dir, NULL);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	UT_OK(elog__losses_add(&l, "up-link.2", 100, 1333, 1764385200000ll), NULL);
	UT_OK(elog__losses_store(dfd, &l), NULL);
	elog__losses_free(&l);
	ut_path(path, sizeof path, ut_dir, FN_LOSSES);
	char *text;
	size_t len;
	UT_OK(elog__fs_read_small(dfd, FN_LOSSES, 4096, &text, &len), NULL);
	ck_assert_str_eq(text, "elog-consumers-lost 1\n"
	                       "up-link.2 retention 100 1333 1234 1764385200000\n");
	free(text);
	/* Lines that do not parse, and causes of a later version, are
	 * skipped; the rest reads. */
	const char *bad = "elog-consumers-lost 1\n"
	                  "a retention 5 4 1 1\n"  /* first > last */
	                  "b retention 1 5 9 1\n"  /* count too big */
	                  "c damage 1 5 5 1\n"     /* unknown cause */
	                  "d retention -1 5 5 1\n" /* a sign */
	                  ".e retention 1 5 5 1\n" /* a bad name */
	                  "f retention 1 5 5 1 extra\n"
	                  "g retention 1 5 5 1\n"
	                  "h retention 1 5 5"; /* unfinished */
	ut_write_file(path, bad, strlen(bad));
	UT_OK(elog__losses_load(dfd, &l), NULL);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_str_eq(l.v[0].name, "g");
	elog__losses_free(&l);
	/* Not ours: no loss. */
	ut_write_file(path, "elog-consumers-lost 2\ng retention 1 5 5 1\n", 41);
	UT_OK(elog__losses_load(dfd, &l), NULL);
	ck_assert_uint_eq(l.n, 0);
	/* Storing none removes the file. */
	UT_OK(elog__losses_store(dfd, &l), NULL);
	ck_assert_int_eq(ut_exists(path), 0);
	close(dfd);
}
END_TEST

UT_TEST(protect_keeps_from_age_but_not_from_size)
{
	struct elog_settings set = { .retain_consumers = ELOG_RETAIN_CONSUMERS_PROTECT };
	struct elog_retain_opts o = { 0 };
	struct elog_retain_result res;
	struct losses_seen seen = { 0 };
	fill(ut_dir, NULL);
	UT_OK(elog_settings_update(ut_dir, &set, ELOG_SET_RETAIN_CONSUMERS, 0, msg), msg);
	struct elog_settings st;
	UT_OK(elog_settings_read(ut_dir, &st, msg), msg);
	ck_assert_int_eq(st.retain_consumers, ELOG_RETAIN_CONSUMERS_PROTECT);
	UT_OK(elog_consumer_commit(ut_dir, "uplink", 1000, msg), msg);
	o.now_ms = T0 + 1000 * HOUR;
	o.max_age_ms = 50 * HOUR;
	o.lost = on_loss;
	o.arg = &seen;
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
	ck_assert_int_eq(seen.n, 0);
	ck_assert_int_eq(res.kept_why, ELOG_KEPT_CONSUMER);
	ck_assert_str_eq(res.kept_consumer, "uplink");
	ck_assert_uint_le(res.start_after, 1001);
	ck_assert_uint_gt(res.kept_end, 1001);
	/* The size limit wins, and the loss is forced. */
	o.max_age_ms = 0;
	o.max_bytes = 20 * 1024;
	UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
	ck_assert_int_eq(seen.n, 1);
	ck_assert_int_eq(seen.l.forced, 1);
	ck_assert_uint_eq(seen.l.first, 1001);
	ck_assert_uint_eq(consumer("uplink").lost, res.start_after - 1001);
}
END_TEST

/* The steps of a retention run to 200 KiB on a copy of copy in ut_dir,
 * plus one: the first step at which a run no longer crashes. */
static int retain_last_step(const char *copy)
{
	struct elog_retain_opts o = { .max_bytes = 200 * 1024 };
	ut_restore_dir(ut_dir, copy);
	maint_fault_steps();
	setenv(MAINT_CRASH_ENV, "-1", 1);
	UT_OK(elog_retain(ut_dir, &o, NULL, msg), msg);
	unsetenv(MAINT_CRASH_ENV);
	/* Counted from 0 again, as in the children that crash. */
	return (int)maint_fault_steps() + 1;
}

/* A crash at each step with a consumer behind: its loss, once the next
 * run finished, is exactly what it lost, counted once.  Under the
 * sanitizers, a sample of the steps (ut_sweep_step()). */
UT_TEST(crash_at_every_step_loss_counted_once)
{
	char copy[1200];
	ut_path(copy, sizeof copy, ut_top, "copy");
	fill(copy, NULL);
	UT_OK(elog_consumer_commit(copy, "slow", 10, msg), msg);
	int n, last = retain_last_step(copy);
	for (n = 1;; n++) {
		if (!ut_sweep_step(n, last))
			continue;
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
		struct elog_retain_opts o = { .max_bytes = 200 * 1024 };
		struct elog_retain_result res;
		UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
		uint64_t start = first_base(ut_dir);
		struct elog_consumer c = consumer("slow");
		ck_assert_uint_eq(c.lost, start - 11);
		ck_assert_uint_eq(c.lost_first, 11);
		ck_assert_uint_eq(c.lost_last, start - 1);
		if (WEXITSTATUS(st) == 0)
			break;
		ck_assert_int_eq(WEXITSTATUS(st), MAINT_CRASH_STATUS);
	}
	ck_assert_int_eq(n, last); /* it crashed at every step counted */
	ck_assert_int_gt(n, 10);
}
END_TEST

/* A crash at each step: the log reads with one gap at its start at most,
 * and the next run finishes.  Under the sanitizers, a sample of the steps
 * (ut_sweep_step()). */
UT_TEST(crash_at_every_step)
{
	char copy[1200];
	uint64_t gap;
	ut_path(copy, sizeof copy, ut_top, "copy");
	fill(copy, NULL);
	int n, last = retain_last_step(copy);
	for (n = 1;; n++) {
		if (!ut_sweep_step(n, last))
			continue;
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
		UT_OK(elog_retain(ut_dir, &o, &res, msg), msg);
		read_all(ut_dir, &gap);
		ck_assert_uint_le(res.total_bytes, 200 * 1024);
		if (WEXITSTATUS(st) == 0)
			break;
		ck_assert_int_eq(WEXITSTATUS(st), MAINT_CRASH_STATUS);
	}
	ck_assert_int_eq(n, last); /* it crashed at every step counted */
	ck_assert_int_gt(n, 10);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("retain");
	TCase *tc = ut_tcase("retain");
	tcase_set_timeout(tc, 300);
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
