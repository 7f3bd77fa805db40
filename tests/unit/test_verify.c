/*
 * test_verify.c: elog_verify() (lib/verify.c): what it finds, where it says
 * it is, what it leaves alone, and what --repair does.
 *
 * Most logs are made by hand (settings, segments and watermark written
 * byte by byte) so that each test holds exactly one problem; the rest go
 * through the writer.
 */
#include "unit.h"

#define MAXP 64

/* The problems one run reported. */
struct seen {
	size_t n, segments;
	int kind[MAXP];
	char file[MAXP][64];
	uint64_t pos[MAXP];
	char text[MAXP][512];
	int hint[MAXP];
	char detail[MAXP][512];
};

/* 1 when s names a program ("elog-" and a letter): the library leaves
 * that to the programs, through the problem's hint. */
static int names_program(const char *s)
{
	for (const char *p = s; (p = strstr(p, "elog-")) != NULL; p++)
		if (p[5] >= 'a' && p[5] <= 'z')
			return 1;
	return 0;
}

static void on_problem(void *arg, const struct elog_problem *p)
{
	struct seen *s = arg;
	if (s->n == MAXP)
		return;
	s->kind[s->n] = p->kind;
	snprintf(s->file[s->n], sizeof s->file[0], "%s", p->file);
	s->pos[s->n] = p->pos;
	snprintf(s->text[s->n], sizeof s->text[0], "%s", p->text);
	ck_assert_msg(!names_program(p->text), "names a program: %s", p->text);
	ck_assert_ptr_nonnull(p->detail);
	ck_assert_msg(!names_program(p->detail), "names a program: %s", p->detail);
	s->hint[s->n] = p->hint;
	snprintf(s->detail[s->n], sizeof s->detail[0], "%s", p->detail);
	s->n++;
}

static void on_segment(void *arg, const struct elog_segment_info *i)
{
	(void)i;
	((struct seen *)arg)->segments++;
}

static int run_verify(const char *dir, unsigned flags, struct seen *s,
                      struct elog_verify_result *res)
{
	char msg[ELOG_MSG_MAX];
	struct elog_verify_opts o = { .flags = flags,
		                      .problem = on_problem,
		                      .segment = on_segment,
		                      .arg = s };
	memset(s, 0, sizeof *s);
	return elog_verify(dir, &o, res, msg);
}

/* The index of the first problem of kind in file, or -1. */
static int find(const struct seen *s, int kind, const char *file)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->kind[i] == kind && strcmp(s->file[i], file) == 0)
			return (int)i;
	return -1;
}

static char *seg(uint64_t base, const char *ext)
{
	static char name[4][NAME_MAX_LOCAL];
	static int k;
	k = (k + 1) % 4;
	elog__seg_name(name[k], base, ext);
	return name[k];
}

/* A log by hand: segment 0 with offsets 0-4 (closed) and segment 5 with
 * offsets 5-7 (active), a watermark vouching for all of it, and no index
 * files (elog-verify warns about those; tests make them as needed). */
static uint64_t seg0_size, seg5_size;
static void hand_log(void)
{
	uint64_t a[] = { 0, 1, 2, 3, 4 }, b[] = { 5, 6, 7 };
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	seg0_size = ut_seg_fill(ut_dir, 0, a, 5, 1000);
	ut_seg_create(ut_dir, 5);
	seg5_size = ut_seg_fill(ut_dir, 5, b, 3, 1000);
	ut_set_wm(ut_dir, 8, 5, seg5_size);
}

/* Indexes for the hand-made log, as a rebuild makes them. */
static void hand_indexes(void)
{
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	char msg[ELOG_MSG_MAX];
	ck_assert_int_ge(dfd, 0);
	for (int i = 0; i < 2; i++) {
		uint64_t base = i ? 5 : 0;
		int fd = openat(dfd, seg(base, SEG_EXT), O_RDONLY);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(elog__idx_rebuild(dfd, fd, base, i ? seg5_size : seg0_size, 64,
		                                   NULL, msg),
		                 0);
		close(fd);
	}
	close(dfd);
}

UT_TEST(clean_log_from_the_writer)
{
	elog *w = ut_open_writer(ut_dir, 4096, 256);
	for (int i = 0; i < 500; i++)
		ut_append(w, i % 2 ? "k" : NULL, "some value of a record");
	ck_assert_int_eq(elog_close(w), 0);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_msg(s.n == 0, "%s: %s", s.file[0], s.text[0]);
	ck_assert_uint_eq(res.records, 500);
	ck_assert_uint_gt(res.segments, 3);
	ck_assert_uint_eq(s.segments, res.segments);
	ck_assert_uint_eq(res.damage + res.warnings + res.remaining, 0);
}
END_TEST

UT_TEST(every_bit_of_a_closed_segment)
{
	hand_log();
	hand_indexes();
	const char *path = ut_seg_path(ut_dir, 0, SEG_EXT);
	char p[1200];
	snprintf(p, sizeof p, "%s", path);
	size_t len;
	unsigned char *orig = ut_read_file(p, &len);
	for (uint64_t pos = 0; pos < len; pos++) {
		struct seen s;
		struct elog_verify_result res;
		ut_write_file(p, orig, len);
		ut_flip_bit(p, pos, (int)(pos % 8));
		ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
		ck_assert_msg(res.damage >= 1, "a flip at byte %llu went unnoticed",
		              (unsigned long long)pos);
		int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, SEG_EXT));
		ck_assert_msg(k >= 0, "byte %llu: reported as %s: %s", (unsigned long long)pos,
		              s.file[0], s.text[0]);
		/* The position named is at or before the flipped byte, within
		 * the record (or header) that holds it. */
		ck_assert_uint_le(s.pos[k], pos);
	}
	free(orig);
}
END_TEST

UT_TEST(record_below_its_segment_base)
{
	uint64_t a[] = { 0, 1 }, b[] = { 3, 4 };
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	ut_seg_fill(ut_dir, 0, a, 2, 0);
	ut_seg_create(ut_dir, 5); /* named and headed 5, holding 3 and 4 */
	uint64_t size = ut_seg_fill(ut_dir, 5, b, 2, 0);
	ut_set_wm(ut_dir, 5, 5, size);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(5, SEG_EXT));
	ck_assert_int_ge(k, 0);
	/* The valid part of the segment ends at its first record. */
	ck_assert_uint_eq(s.pos[k], SEG_HDR);
	ck_assert_str_eq(s.text[k], "offset 3 is below the segment's base 5, below the durable end "
	                            "(60 bytes from here to the end are not read)");
	/* Reported once for the segment, though both records are wrong. */
	ck_assert_uint_eq(res.damage, 1);
}
END_TEST

UT_TEST(overlapping_segments)
{
	uint64_t a[] = { 0, 1, 2, 3 }, b[] = { 2, 3 };
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	uint64_t pos2 = SEG_HDR + 2 * elog__rec_size(0, 2);
	ut_seg_fill(ut_dir, 0, a, 4, 0);
	ut_seg_create(ut_dir, 2);
	uint64_t size = ut_seg_fill(ut_dir, 2, b, 2, 0);
	ut_set_wm(ut_dir, 4, 2, size);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, SEG_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], pos2 + 8);
	ck_assert_ptr_nonnull(strstr(s.text[k], "the segments overlap"));
}
END_TEST

/* A merge of segments 0 and 2 that renamed its output over segment 0 but
 * was stopped before it removed segment 2: every record of 2 is also in
 * 0.  The log reads correctly, so this is a warning, not damage. */
UT_TEST(merge_leftover_is_a_warning)
{
	uint64_t a[] = { 0, 1, 2, 3 }, b[] = { 2, 3 }, c[] = { 4 };
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	uint64_t pos2 = SEG_HDR + 2 * elog__rec_size(0, 2);
	ut_seg_fill(ut_dir, 0, a, 4, 0);
	ut_seg_create(ut_dir, 2);
	ut_seg_fill(ut_dir, 2, b, 2, 0);
	ut_seg_create(ut_dir, 4);
	uint64_t size = ut_seg_fill(ut_dir, 4, c, 1, 0);
	ut_set_wm(ut_dir, 5, 4, size);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 0);
	int k = find(&s, ELOG_PROBLEM_WARNING, seg(0, SEG_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], pos2 + 8);
	ck_assert_str_eq(s.text[k], "holds copies of every record of "
	                            "00000000000000000002.log: a merge was interrupted");
	ck_assert_int_eq(s.hint[k], ELOG_HINT_COMPACT_COPY);
	ck_assert_str_eq(s.detail[k], "");
}
END_TEST

/* The same overlap, but the later segment holds records the earlier one
 * does not: no merge leaves that, so it is damage. */
UT_TEST(overlap_with_later_records_is_damage)
{
	uint64_t a[] = { 0, 1, 2, 3 }, b[] = { 2, 3, 4, 5 }, c[] = { 6 };
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	ut_seg_fill(ut_dir, 0, a, 4, 0);
	ut_seg_create(ut_dir, 2);
	ut_seg_fill(ut_dir, 2, b, 4, 0);
	ut_seg_create(ut_dir, 6);
	uint64_t size = ut_seg_fill(ut_dir, 6, c, 1, 0);
	ut_set_wm(ut_dir, 7, 6, size);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, SEG_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_ptr_nonnull(strstr(s.text[k], "the segments overlap"));
	/* And compaction refuses to delete either segment. */
	char msg[ELOG_MSG_MAX];
	ut_cleanup_compact(ut_dir);
	ck_assert_int_eq(elog_compact(ut_dir, NULL, NULL, msg), ELOG_CORRUPT);
	ck_assert_str_eq(msg, "00000000000000000000.log runs into 00000000000000000002.log, "
	                      "which holds later records too: the segments overlap");
	ck_assert(ut_exists(ut_seg_path(ut_dir, 2, SEG_EXT)));
}
END_TEST

/* A repair told not to wait while a maintenance run holds maint.lock is
 * refused, with a message that names the holder and no program, and
 * without touching LOCK, which it takes second. */
UT_TEST(repair_refused_while_maintenance_runs)
{
	hand_log();
	char msg[ELOG_MSG_MAX], want[ELOG_MSG_MAX];
	int lockfd, dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	UT_OK(elog__lock_take_ms(dfd, FN_MAINT, 0, 1, &lockfd, msg), msg);
	snprintf(want, sizeof want, "another maintenance run holds maint.lock (pid %ld)",
	         (long)getpid());
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char m[ELOG_MSG_MAX];
		struct elog_verify_opts o = { .flags = ELOG_VERIFY_REPAIR,
			                      .wait_ms = ELOG_WAIT_NONE };
		struct elog_verify_result res;
		int rc = elog_verify(ut_dir, &o, &res, m);
		_exit(rc == ELOG_LOCKED && strcmp(m, want) == 0 ? 0 : 1);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	close(lockfd);
	close(dfd);
}
END_TEST

/* By default a repair waits for a maintenance run that ends, and then
 * repairs: a repair started by hand beside a cron job's retention is not
 * refused for the moment they met. */
UT_TEST(repair_waits_for_maintenance)
{
	hand_log();
	char msg[ELOG_MSG_MAX];
	int lockfd, dfd = open(ut_dir, O_RDONLY | O_DIRECTORY), pipefd[2];
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(pipe(pipefd), 0);
	UT_OK(elog__lock_take_ms(dfd, FN_MAINT, 0, 1, &lockfd, msg), msg);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char m[ELOG_MSG_MAX];
		struct elog_verify_opts o = { .flags = ELOG_VERIFY_REPAIR,
			                      .wait_ms = ELOG_WAIT_FOREVER };
		struct elog_verify_result res;
		close(lockfd); /* the parent's, inherited: it alone holds it */
		close(pipefd[0]);
		(void)!write(pipefd[1], "x", 1);
		int rc = elog_verify(ut_dir, &o, &res, m);
		_exit(rc == 0 ? 0 : 1);
	}
	close(pipefd[1]);
	char c;
	ck_assert_int_eq(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	usleep(100 * 1000);
	close(lockfd); /* the maintenance run ends */
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	close(dfd);
}
END_TEST

UT_TEST(result_may_be_null)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ut_append(w, NULL, "a");
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert_int_eq(elog_verify(ut_dir, NULL, NULL, NULL), 0);
}
END_TEST

UT_TEST(offsets_out_of_order)
{
	uint64_t a[] = { 0, 3, 2 };
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	uint64_t size = ut_seg_fill(ut_dir, 0, a, 3, 0);
	ut_set_wm(ut_dir, 4, 0, size);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, SEG_EXT));
	ck_assert_int_ge(k, 0);
	/* Where the valid part ends, as recovery and readers judge it. */
	ck_assert_str_eq(s.text[k],
	                 "offset 2 after 3: offsets must increase, below the durable end "
	                 "(30 bytes from here to the end are not read)");
}
END_TEST

/* Entry 1 of segment 0's index, changed by change() and its CRC made
 * right again. */
static void change_entry1(void (*change)(struct idx_entry *))
{
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 0, IDX_EXT));
	size_t len;
	unsigned char *buf = ut_read_file(p, &len);
	ck_assert_uint_ge(len, IDX_HDR + 2 * IDX_ENTRY);
	const struct idx_layout *lay;
	struct idx_entry e;
	ck_assert_int_eq(elog__idx_header_check(buf, len, &lay), 0);
	elog__idx_entry_check(buf + IDX_HDR + IDX_ENTRY, lay, 0, UINT64_MAX, NULL, &e);
	change(&e);
	elog__idx_entry_encode(buf + IDX_HDR + IDX_ENTRY, &e);
	ut_write_file(p, buf, len);
	free(buf);
}

static void narrow_span(struct idx_entry *e)
{
	ck_assert_int_eq(e->span_min, 1000); /* records 0 to 2 */
	ck_assert_int_eq(e->span_max, 1002);
	e->span_max = 1001;
}

static void upside_down(struct idx_entry *e)
{
	e->ts_min = e->ts_max + 1;
}

/* Times that contradict each other fail the entry's verdict itself. */
UT_TEST(index_entry_with_contradicting_times)
{
	hand_log();
	hand_indexes();
	change_entry1(upside_down);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 1);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, IDX_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], IDX_HDR + IDX_ENTRY + IDX_AT_TS_MAX);
	ck_assert_str_eq(s.text[k], "entry's timestamps contradict each other or the "
	                            "entry before (newest 1003, oldest 1004)");
}
END_TEST

static void widen_newest(struct idx_entry *e)
{
	ck_assert_int_eq(e->ts_max, 1003); /* records 0 to 3 */
	e->ts_max = 1005;
}

static void widen_oldest(struct idx_entry *e)
{
	ck_assert_int_eq(e->ts_min, 1000);
	e->ts_min = 999;
}

/* The times of an entry are held against the records: an entry that
 * would hide a record from a time window is damage, and so are extremes
 * (the newest and oldest timestamp up to its record) that the records do
 * not have.  --repair rebuilds the index. */
UT_TEST(index_entry_with_the_wrong_times)
{
	static const struct {
		void (*change)(struct idx_entry *);
		size_t at;
		const char *text;
	} cases[] = {
		{ narrow_span, IDX_AT_SPAN_MIN,
		  "entry says the records since the entry before are stamped 1000 to 1001, they "
		  "are 1000 to 1002" },
		{ widen_newest, IDX_AT_TS_MAX,
		  "entry says newest timestamp 1005, the records say 1003" },
		{ widen_oldest, IDX_AT_TS_MIN,
		  "entry says oldest timestamp 999, the records say 1000" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ut_rm_rf(ut_dir);
		hand_log();
		hand_indexes();
		change_entry1(cases[i].change);
		struct seen s;
		struct elog_verify_result res;
		ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
		ck_assert_uint_eq(res.damage, 1);
		int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, IDX_EXT));
		ck_assert_int_ge(k, 0);
		ck_assert_uint_eq(s.pos[k], IDX_HDR + IDX_ENTRY + cases[i].at);
		ck_assert_str_eq(s.text[k], cases[i].text);
		ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR, &s, &res), 0);
		ck_assert_uint_eq(res.remaining, 0);
		ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
		ck_assert_uint_eq(res.damage, 0);
	}
}
END_TEST

/* An index of version 1 (elog 0.2) is not a problem: it is read as it is. */
UT_TEST(index_of_version1_is_fine)
{
	hand_log();
	hand_indexes();
	for (int i = 0; i < 2; i++) {
		char p[1200];
		size_t len;
		const struct idx_layout *lay;
		snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, i ? 5 : 0, IDX_EXT));
		unsigned char *buf = ut_read_file(p, &len), v1[IDX_HDR + 16 * 24];
		ck_assert_int_eq(elog__idx_header_check(buf, len, &lay), 0);
		size_t n = (len - IDX_HDR) / IDX_ENTRY;
		ck_assert_uint_le(n, 16);
		memcpy(v1, buf, IDX_HDR);
		put32(v1 + 8, 1);
		for (size_t k = 0; k < n; k++) {
			struct idx_entry e;
			unsigned char *q = v1 + IDX_HDR + k * 24;
			elog__idx_entry_check(buf + IDX_HDR + k * IDX_ENTRY, lay, 0, UINT64_MAX,
			                      NULL, &e);
			put64(q, e.offset);
			put64(q + 8, (uint64_t)e.ts_max);
			put32(q + 16, e.pos);
			put32(q + 20, elog__crc32c(0, q, 20));
		}
		ut_write_file(p, v1, IDX_HDR + n * 24);
		free(buf);
	}
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_msg(s.n == 0, "%zu problems, the first: %s: %s", s.n, s.file[0], s.text[0]);
	ck_assert_uint_eq(res.damage, 0);
	/* Its own rules still hold: a CRC over bytes 0-19, checked. */
	ut_flip_bit(ut_seg_path(ut_dir, 0, IDX_EXT), IDX_HDR + 24 + 3, 0);
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, IDX_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], IDX_HDR + 24 + 20);
	ck_assert_str_eq(s.text[k], "entry checksum mismatch");
}
END_TEST

UT_TEST(index_entry_with_the_wrong_offset)
{
	hand_log();
	hand_indexes();
	/* Entry 0's offset field, with its CRC made right again. */
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 0, IDX_EXT));
	size_t len;
	unsigned char *buf = ut_read_file(p, &len);
	ck_assert_uint_ge(len, IDX_HDR + IDX_ENTRY);
	const struct idx_layout *lay;
	struct idx_entry e;
	ck_assert_int_eq(elog__idx_header_check(buf, len, &lay), 0);
	elog__idx_entry_check(buf + IDX_HDR, lay, 0, UINT64_MAX, NULL, &e);
	e.offset = 1;
	elog__idx_entry_encode(buf + IDX_HDR, &e);
	ut_write_file(p, buf, len);
	free(buf);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 1);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, IDX_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], IDX_HDR);
	ck_assert_str_eq(s.text[k], "entry says offset 1, the record it points at has 0");

	/* --repair rebuilds it, and the log is clean afterwards. */
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR, &s, &res), 0);
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_REPAIRED, seg(0, IDX_EXT)), 0);
	ck_assert_uint_eq(res.remaining, 0);
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 0);
}
END_TEST

UT_TEST(index_entry_inside_a_record)
{
	hand_log();
	hand_indexes();
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 0, IDX_EXT));
	size_t len;
	unsigned char *buf = ut_read_file(p, &len);
	const struct idx_layout *lay;
	struct idx_entry e;
	ck_assert_int_eq(elog__idx_header_check(buf, len, &lay), 0);
	elog__idx_entry_check(buf + IDX_HDR, lay, 0, UINT64_MAX, NULL, &e);
	e.pos = SEG_HDR + 3;
	elog__idx_entry_encode(buf + IDX_HDR, &e);
	ut_write_file(p, buf, len);
	free(buf);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, IDX_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_str_eq(s.text[k], "entry points at byte 35, which is not the start of a record");
}
END_TEST

UT_TEST(index_cut_short)
{
	/* Interval 64 over records of 30 bytes: entries at records 0, 3. */
	hand_log();
	hand_indexes();
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 0, IDX_EXT));
	ck_assert_uint_eq(ut_file_size(p), IDX_HDR + 2 * IDX_ENTRY);
	ut_truncate(p, IDX_HDR + IDX_ENTRY);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, IDX_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], IDX_HDR + IDX_ENTRY);
	ck_assert_ptr_nonnull(strstr(s.text[k], "the index is short or stale"));
}
END_TEST

UT_TEST(watermark_past_the_data)
{
	hand_log();
	hand_indexes();
	ut_set_wm(ut_dir, 9, 5, seg5_size);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, FN_WATERMARK);
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], 8);

	ut_set_wm(ut_dir, 8, 5, seg5_size + 1);
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	k = find(&s, ELOG_PROBLEM_DAMAGE, FN_WATERMARK);
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], 24);

	ut_set_wm(ut_dir, 6, 5, SEG_HDR + 5); /* inside the first record */
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	k = find(&s, ELOG_PROBLEM_DAMAGE, FN_WATERMARK);
	ck_assert_int_ge(k, 0);
	ck_assert_ptr_nonnull(strstr(s.text[k], "is not the end of a record"));

	ut_set_wm(ut_dir, 8, 9, 100); /* a segment that is not there */
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	k = find(&s, ELOG_PROBLEM_DAMAGE, FN_WATERMARK);
	ck_assert_int_ge(k, 0);
	ck_assert_str_eq(s.text[k], "names segment 00000000000000000009.log, which does not exist");

	/* --repair sets it from the data. */
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR, &s, &res), 0);
	ck_assert_uint_eq(res.remaining, 0);
	struct watermark wm = ut_get_wm(ut_dir);
	ck_assert_uint_eq(wm.durable_end, 8);
	ck_assert_uint_eq(wm.segment_base, 5);
	ck_assert_uint_eq(wm.segment_bytes, seg5_size);
}
END_TEST

UT_TEST(unacknowledged_tail_is_a_warning)
{
	hand_log();
	hand_indexes();
	/* Half a record after what the watermark vouches for: a crash's or a
	 * running writer's, not damage. */
	ut_append_file(ut_seg_path(ut_dir, 5, SEG_EXT), "\x40\0\0\0garbage", 11);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 0);
	int k = find(&s, ELOG_PROBLEM_WARNING, seg(5, SEG_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], seg5_size);
}
END_TEST

UT_TEST(repair_cuts_the_active_tail_and_keeps_it)
{
	hand_log();
	hand_indexes();
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 5, SEG_EXT));
	uint64_t second = SEG_HDR + elog__rec_size(0, 2);
	ut_flip_bit(p, second + 20, 3); /* the record of offset 6 */
	size_t len;
	unsigned char *before = ut_read_file(p, &len);

	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 1);
	ck_assert_uint_eq(s.pos[0], second);

	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR, &s, &res), 0);
	ck_assert_uint_eq(res.remaining, 0);
	int k = find(&s, ELOG_PROBLEM_REPAIRED, seg(5, SEG_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], second);
	const char *kept = strstr(s.text[k], "kept in ");
	ck_assert_ptr_nonnull(kept);
	kept += 8;
	ck_assert_int_eq(strncmp(kept, "00000000000000000005.log.cut-", 29), 0);

	/* The cut bytes are all there, and nothing else was lost. */
	char kp[1200];
	size_t klen;
	unsigned char *cut = ut_read_file(ut_path(kp, sizeof kp, ut_dir, kept), &klen);
	ck_assert_uint_eq(ut_file_size(p), second);
	ck_assert_uint_eq(second + klen, len);
	ck_assert_int_eq(memcmp(cut, before + second, klen), 0);
	uint64_t segbase;
	ck_assert(!elog__seg_parse_name(kept, SEG_EXT, &segbase));
	free(cut);
	free(before);

	/* Offsets 6 and 7 were acknowledged (the durable end was 8): they
	 * are a recorded damage gap, and the writer goes on from offset 8,
	 * in a new segment, never giving them to other records. */
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_REPAIRED, seg(8, SEG_EXT)), 0);
	struct holes h = { 0 };
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(elog__holes_load(dfd, &h), 0);
	close(dfd);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_uint_eq(h.v[0].first, 6);
	ck_assert_uint_eq(h.v[0].last, 7);
	elog__holes_free(&h);
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	ck_assert_uint_eq(elog_next_offset(w), 8);
	elog_close(w);
}
END_TEST

/* The offsets of every record a reader reads, gaps skipped and counted. */
static size_t read_skipping_gaps(uint64_t *offs, size_t max, size_t *gaps)
{
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	size_t n = 0;
	int rc;
	*gaps = 0;
	while ((rc = elog_reader_next(r, &rec)) != ELOG_END) {
		if (rc == ELOG_GAP) {
			(*gaps)++;
			continue;
		}
		ck_assert_msg(rc == 0, "elog_reader_next: %d %s", rc, elog_reader_errmsg(r));
		if (n < max)
			offs[n] = rec.offset;
		n++;
	}
	elog_reader_close(r);
	return n;
}

/* The one range of "salvaged". */
static void one_hole(uint64_t first, uint64_t last)
{
	struct holes h = { 0 };
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(elog__holes_load(dfd, &h), 0);
	close(dfd);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_uint_eq(h.v[0].first, first);
	ck_assert_uint_eq(h.v[0].last, last);
	elog__holes_free(&h);
}

/* Issue 22, case 1: with ELOG_VERIFY_SALVAGE, damage below the durable end
 * of the active segment costs the damaged record's offset only; the
 * records after it stay at their offsets, and the writer goes on at the
 * old durable end. */
UT_TEST(repair_salvages_the_active_segment_keeping_every_good_record)
{
	hand_log();
	hand_indexes();
	const char *p = ut_seg_path(ut_dir, 5, SEG_EXT);
	uint64_t rs = elog__rec_size(0, 2);
	ut_flip_bit(p, SEG_HDR + rs + 20, 3); /* the record of offset 6 */

	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR | ELOG_VERIFY_SALVAGE, &s, &res), 0);
	ck_assert_uint_eq(res.remaining, 0);
	ck_assert_uint_eq(res.losses, 1);
	int k = find(&s, ELOG_PROBLEM_REPAIRED, seg(5, SEG_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], SEG_HDR + rs);
	ck_assert_msg(strstr(s.text[k], "; offsets 6-6 may be lost, and readers report them "
	                                "as a gap") != NULL,
	              "%s", s.text[k]);
	/* No new segment: nothing at the durable end was lost. */
	ck_assert_int_lt(find(&s, ELOG_PROBLEM_REPAIRED, seg(8, SEG_EXT)), 0);
	ck_assert_uint_eq(ut_file_size(p), SEG_HDR + 2 * rs);
	one_hole(6, 6);
	ck_assert_uint_eq(ut_count_names(ut_dir, ".log.cut-"), 1);

	uint64_t offs[16];
	size_t gaps, n = read_skipping_gaps(offs, 16, &gaps);
	ck_assert_uint_eq(n, 7);
	ck_assert_uint_eq(gaps, 1);
	ck_assert_uint_eq(offs[5], 5);
	ck_assert_uint_eq(offs[6], 7);
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	ck_assert_uint_eq(elog_next_offset(w), 8);
	elog_close(w);

	/* Checked again, the log is sound but not clean: it lost offset 6. */
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 0);
	ck_assert_uint_eq(res.losses, 1);
	k = find(&s, ELOG_PROBLEM_LOSS, FN_SALVAGED);
	ck_assert_int_ge(k, 0);
	ck_assert_msg(strncmp(s.text[k],
	                      "offset 6 was lost to damage (recorded by a repair "
	                      "or salvage at ",
	                      62) == 0,
	              "%s", s.text[k]);
}
END_TEST

/* When the last durable record is the damaged one, the writer must not
 * give its offset again: a new segment starts at the old durable end. */
UT_TEST(repair_salvage_of_the_last_durable_record_resumes_above_it)
{
	hand_log();
	hand_indexes();
	const char *p = ut_seg_path(ut_dir, 5, SEG_EXT);
	uint64_t rs = elog__rec_size(0, 2);
	ut_flip_bit(p, SEG_HDR + 2 * rs + 20, 3); /* the record of offset 7 */

	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR | ELOG_VERIFY_SALVAGE, &s, &res), 0);
	ck_assert_uint_eq(res.remaining, 0);
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_REPAIRED, seg(8, SEG_EXT)), 0);
	one_hole(7, 7);
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	ck_assert_uint_eq(elog_next_offset(w), 8);
	ck_assert_uint_eq(ut_append(w, NULL, "new"), 8);
	elog_close(w);
}
END_TEST

/* Bytes past the durable end were never acknowledged: salvage sets them
 * aside with the damaged ones and keeps no record from them. */
UT_TEST(repair_salvage_sets_aside_bytes_past_the_durable_end)
{
	hand_log();
	hand_indexes();
	const char *p = ut_seg_path(ut_dir, 5, SEG_EXT);
	uint64_t rs = elog__rec_size(0, 2);
	struct elog_record rec = ut_rec(8, 1000, 0, "k", "v");
	ut_append_rec(p, &rec);          /* a record past the durable end */
	ut_flip_bit(p, SEG_HDR + 20, 3); /* the record of offset 5 */

	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR | ELOG_VERIFY_SALVAGE, &s, &res), 0);
	ck_assert_uint_eq(res.remaining, 0);
	int k = -1;
	for (size_t i = 0; i < s.n; i++)
		if (s.kind[i] == ELOG_PROBLEM_REPAIRED && s.pos[i] == seg5_size)
			k = (int)i;
	ck_assert_int_ge(k, 0);
	ck_assert_msg(strncmp(s.text[k], "salvaged: ", 10) == 0 &&
	                      strstr(s.text[k], " bytes past the durable end, never acknowledged, "
	                                        "moved to 00000000000000000005.log.cut-") != NULL,
	              "%s", s.text[k]);
	ck_assert_uint_eq(ut_file_size(p), SEG_HDR + 2 * rs);
	one_hole(5, 5);
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	ck_assert_uint_eq(elog_next_offset(w), 8);
	elog_close(w);
}
END_TEST

/* Without ELOG_VERIFY_SALVAGE the active segment is cut as before. */
UT_TEST(repair_without_salvage_still_cuts_the_active_segment)
{
	hand_log();
	hand_indexes();
	const char *p = ut_seg_path(ut_dir, 5, SEG_EXT);
	ut_flip_bit(p, SEG_HDR + 20, 3); /* the record of offset 5 */
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR, &s, &res), 0);
	ck_assert_uint_eq(ut_file_size(p), SEG_HDR);
	one_hole(5, 7);
	ck_assert_uint_eq(res.losses, 1);
}
END_TEST

/* Damage says which offsets readers cannot read, which named consumers
 * will run into them, and what salvage would keep and lose there. */
UT_TEST(damage_names_unreadable_offsets_consumers_behind_and_salvage)
{
	hand_log();
	hand_indexes();
	char msg[ELOG_MSG_MAX];
	ck_assert_int_eq(elog_consumer_commit(ut_dir, "early", 1, msg), 0);
	ck_assert_int_eq(elog_consumer_commit(ut_dir, "past", 4, msg), 0);
	uint64_t rs = elog__rec_size(0, 2);
	ut_flip_bit(ut_seg_path(ut_dir, 0, SEG_EXT), SEG_HDR + 2 * rs + 20, 3); /* offset 2 */

	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 1);
	ck_assert_uint_eq(res.unreadable, 1);
	ck_assert_uint_eq(res.salvageable, 1);
	ck_assert_uint_eq(res.losses, 0);
	int k = find(&s, ELOG_PROBLEM_UNREADABLE, seg(0, SEG_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], ELOG_NOPOS);
	ck_assert_str_eq(s.text[k], "offsets 2-4 cannot be read past the damage; consumer "
	                            "behind them: early (at 1)");
	ck_assert_int_eq(s.hint[k], ELOG_HINT_SALVAGE);
	ck_assert_str_eq(s.detail[k], "gets past it, keeping 2 records and losing offset 2");
}
END_TEST

/* A loss is reported while the segments span it; once retention removed
 * them, it is history. */
UT_TEST(a_recorded_loss_is_reported_until_retention_removes_its_offsets)
{
	hand_log();
	hand_indexes();
	char path[1200];
	const char text[] = "elog-salvaged 1\n2 3 1764385200000\n";
	ut_write_file(ut_path(path, sizeof path, ut_dir, FN_SALVAGED), text, sizeof text - 1);

	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 0);
	ck_assert_uint_eq(res.losses, 1);
	int k = find(&s, ELOG_PROBLEM_LOSS, FN_SALVAGED);
	ck_assert_int_ge(k, 0);
	ck_assert_str_eq(s.text[k],
	                 "offsets 2-3 were lost to damage (recorded by a repair or "
	                 "salvage at 2025-11-29T03:00:00.000Z); readers report them as a gap");

	/* Retention removed segment 0: the log starts at 5. */
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(elog__start_write(dfd, 5, NULL), 0);
	close(dfd);
	unlink(ut_seg_path(ut_dir, 0, SEG_EXT));
	unlink(ut_seg_path(ut_dir, 0, IDX_EXT));
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.losses, 0);
	ck_assert_uint_eq(res.damage, 0);
}
END_TEST

/* An active segment whose tail past the durable end is a 100 GB sparse
 * file: the repair cuts it all, keeps at most a segment's size of it (4096
 * bytes here) with its holes, and copies nothing from further on. */
UT_TEST(repair_of_a_huge_sparse_tail_keeps_one_segment_size)
{
	hand_log();
	hand_indexes();
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 5, SEG_EXT));
	unsigned char junk[100];
	memset(junk, 0xa5, sizeof junk);
	ut_write_at(p, seg5_size, junk, sizeof junk);
	ut_write_at(p, seg5_size + 2000, junk, sizeof junk);
	ut_write_at(p, 50ull << 30, junk, sizeof junk);
	ut_truncate(p, 100ull << 30);

	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR, &s, &res), 0);
	ck_assert_uint_eq(res.remaining, 0);
	int k = find(&s, ELOG_PROBLEM_REPAIRED, seg(5, SEG_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(s.pos[k], seg5_size);
	ck_assert_uint_eq(ut_file_size(p), seg5_size);
	const char *kept = strstr(s.text[k], " in ");
	ck_assert_ptr_nonnull(kept);
	char name[256], kp[1200];
	ck_assert_int_eq(sscanf(kept + 4, "%255s", name), 1);
	size_t klen;
	unsigned char *cut = ut_read_file(ut_path(kp, sizeof kp, ut_dir, name), &klen);
	ck_assert_uint_eq(klen, 4096);
	ck_assert_int_eq(memcmp(cut, junk, sizeof junk), 0);
	ck_assert_int_eq(memcmp(cut + 2000, junk, sizeof junk), 0);
	for (size_t i = sizeof junk; i < 2000; i++)
		ck_assert_uint_eq(cut[i], 0);
	free(cut);
	struct stat st;
	ck_assert_int_eq(stat(kp, &st), 0);
	ck_assert_uint_le((uint64_t)st.st_blocks * 512, 4096);
}
END_TEST

/* A repair killed while it wrote the copy of a cut tail leaves a
 * temporary file; the next repair removes it, and so does maintenance. */
UT_TEST(stale_copy_of_a_killed_repair_is_removed)
{
	pid_t dead = fork();
	ck_assert_int_ge(dead, 0);
	if (dead == 0)
		_exit(0);
	ck_assert_int_eq(ut_wait_child(dead), 0);
	char tmp[256], p[1200];
	hand_log();
	hand_indexes();
	snprintf(tmp, sizeof tmp, "%s.cut-1700000000000.tmp.%ld.0", seg(5, SEG_EXT), (long)dead);
	ut_write_file(ut_path(p, sizeof p, ut_dir, tmp), "partial", 7);
	/* Unlocked and unchanged for an hour (elog__file_tmp_drop()). */
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 3600;
	t[1] = t[0];
	ck_assert_int_eq(utimensat(AT_FDCWD, p, t, 0), 0);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR, &s, &res), 0);
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_REPAIRED, tmp), 0);
	ck_assert(!ut_exists(p));

	ut_write_file(p, "partial", 7);
	ck_assert_int_eq(utimensat(AT_FDCWD, p, t, 0), 0);
	char msg[ELOG_MSG_MAX];
	struct elog_retain_opts o = { 0 };
	o.max_bytes = 1ull << 40;
	ck_assert_msg(elog_retain(ut_dir, &o, NULL, msg) == 0, "%s", msg);
	ck_assert(!ut_exists(p));
}
END_TEST

UT_TEST(repair_leaves_a_closed_segment_alone)
{
	hand_log();
	hand_indexes();
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 0, SEG_EXT));
	ut_flip_bit(p, SEG_HDR + 40, 0);
	size_t len, len2;
	unsigned char *before = ut_read_file(p, &len);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR, &s, &res), 0);
	ck_assert_uint_eq(res.repaired, 0);
	ck_assert_uint_eq(res.remaining, 1);
	unsigned char *after = ut_read_file(p, &len2);
	ck_assert_uint_eq(len, len2);
	ck_assert_int_eq(memcmp(before, after, len), 0);
	free(before);
	free(after);
}
END_TEST

/* Writers hold LOCK only while they write a batch, so a repair runs
 * beside an open writer; the writer then finds the tail anew (the repair
 * leaves LOCK's state unusable) and goes on after what the repair kept. */
UT_TEST(repair_runs_beside_an_open_writer)
{
	elog *w = ut_open_writer(ut_dir, 4096, 256);
	ut_append(w, NULL, "x");
	ck_assert_int_eq(elog_sync(w), 0);
	/* Bytes past the durable end, as a writer killed mid-batch leaves. */
	char seg[1200];
	snprintf(seg, sizeof seg, "%s", ut_seg_path(ut_dir, 0, SEG_EXT));
	uint64_t size = ut_file_size(seg);
	FILE *f = fopen(seg, "ab");
	ck_assert_ptr_nonnull(f);
	fputs("torn tail", f);
	fclose(f);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR, &s, &res), 0);
	ck_assert_uint_eq(ut_file_size(seg), size);
	uint64_t off = UINT64_MAX;
	struct elog_record r = ut_rec(0, ELOG_TS_NOW, 0, NULL, "y");
	ck_assert_int_eq(elog_append(w, &r, &off), 0);
	ck_assert_int_eq(elog_sync(w), 0);
	ck_assert_uint_eq(off, 1);
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 0);
}
END_TEST

/* Compaction and retention run (in a child) while verify is half way through a log: it
 * waits for verify, which reports no damage (it used to report the
 * segments removed under it as missing). */
static pid_t retain_child;
static int retain_done_early;
static void retain_mid_verify(void *arg, const struct elog_segment_info *i)
{
	on_segment(arg, i);
	if (((struct seen *)arg)->segments != 1)
		return;
	retain_child = fork();
	ck_assert_int_ge(retain_child, 0);
	if (retain_child == 0) {
		char msg[ELOG_MSG_MAX];
		/* A separate program would not share verify's lock. */
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		struct elog_compact_opts c = { 0 };
		struct elog_retain_opts o = { 0 };
		c.grace_ms = ELOG_COMPACT_GRACE_NONE;
		o.max_bytes = 8192;
		_exit(elog_compact(ut_dir, &c, NULL, msg) == 0 &&
		                      elog_retain(ut_dir, &o, NULL, msg) == 0
		              ? 0
		              : 1);
	}
	for (int t = 0; t < 100 && !retain_done_early; t++) {
		int st;
		if (waitpid(retain_child, &st, WNOHANG) == retain_child)
			retain_done_early = 1;
		else
			usleep(10000);
	}
}

UT_TEST(verify_beside_retention_sees_no_damage)
{
	elog *w = ut_open_writer(ut_dir, 4096, 256);
	char key[16];
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof key, "k%d", i % 7);
		ut_append(w, i % 5 ? key : NULL, "some value of a record, long enough");
	}
	ck_assert_int_eq(elog_close(w), 0);
	ut_cleanup_compact(ut_dir);
	struct seen s;
	struct elog_verify_result res;
	char msg[ELOG_MSG_MAX];
	struct elog_verify_opts h = { .problem = on_problem,
		                      .segment = retain_mid_verify,
		                      .arg = &s };
	memset(&s, 0, sizeof s);
	retain_done_early = 0;
	ck_assert_int_eq(elog_verify(ut_dir, &h, &res, msg), 0);
	ck_assert_msg(res.damage == 0, "%llu: %s: %s", (unsigned long long)res.damage, s.file[0],
	              s.text[0]);
	ck_assert(!retain_done_early); /* it waited for verify */
	ck_assert_int_eq(ut_wait_child(retain_child), 0);
	/* And it did its work once verify was done. */
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	ck_assert_int_eq(elog__seglist_read(dfd, &sl), 0);
	close(dfd);
	ck_assert_uint_lt(sl.n, res.segments);
	elog__seglist_free(&sl);
}
END_TEST

/* A writer that rolls to a new segment and publishes it while verify is
 * between the directory's listing and the watermark: the watermark then
 * names records past the seal of the newest segment verify listed, which
 * are not lost (verify used to say "the seal names segment N as the next,
 * which is missing").  The problem reported by the listing (an index of
 * no segment) is where the writer steps in. */
static elog *roll_writer;
static void roll_mid_listing(void *arg, const struct elog_problem *p)
{
	on_problem(arg, p);
	if (!roll_writer || strstr(p->text, "index of a segment") == NULL)
		return;
	/* 100 records of about 80 bytes: two segments of 4 KiB and more. */
	for (int i = 0; i < 100; i++) {
		ut_append(roll_writer, NULL, "a value long enough to fill a small segment soon");
		ck_assert_int_eq(elog_sync(roll_writer), 0);
	}
	roll_writer = NULL;
}

UT_TEST(verify_beside_a_writer_that_rolls_sees_no_loss)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	for (int i = 0; i < 100; i++)
		ut_append(w, NULL, "a value long enough to fill a small segment soon");
	ck_assert_int_eq(elog_sync(w), 0);
	ut_write_file(ut_seg_path(ut_dir, 1000000, IDX_EXT), "", 0);
	struct seen s;
	struct elog_verify_result res;
	char msg[ELOG_MSG_MAX];
	struct elog_verify_opts h = { .problem = roll_mid_listing, .arg = &s };
	memset(&s, 0, sizeof s);
	roll_writer = w;
	ck_assert_int_eq(elog_verify(ut_dir, &h, &res, msg), 0);
	ck_assert_ptr_null(roll_writer); /* it did roll */
	ck_assert_msg(res.damage == 0 && res.losses == 0, "%llu: %s: %s",
	              (unsigned long long)res.damage, s.file[s.n - 1], s.text[s.n - 1]);
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

UT_TEST(fresh_segment_with_a_bad_header_is_a_warning)
{
	hand_log();
	hand_indexes();
	/* A segment created just before a crash, its header never written. */
	ut_write_file(ut_seg_path(ut_dir, 8, SEG_EXT), "", 0);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 0);
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_WARNING, seg(8, SEG_EXT)), 0);
}
END_TEST

UT_TEST(not_a_log_and_newer_settings)
{
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), ELOG_NOTLOG);
	ck_assert_int_eq(run_verify(ut_dir, ELOG_VERIFY_REPAIR, &s, &res), ELOG_NOTLOG);
	char p[1200];
	/* Repair made no LOCK in a directory that is not a log. */
	ck_assert(!ut_exists(ut_path(p, sizeof p, ut_dir, FN_LOCK)));
	const char *newer = "format 3\nid 0123456789abcdef0123456789abcdef\n";
	ut_write_file(ut_path(p, sizeof p, ut_dir, FN_SETTINGS), newer, strlen(newer));
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), ELOG_BADVERSION);
	const char *bad = "format 1\nid nothex\n";
	ut_write_file(p, bad, strlen(bad));
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_DAMAGE, FN_SETTINGS), 0);
}
END_TEST

UT_TEST(consumer_beyond_the_durable_end)
{
	hand_log();
	hand_indexes();
	char p[1200];
	const char *json = "{\"version\":1,\"consumers\":{\"a\":{\"offset\":3,\"committed_ms\":1},"
	                   "\"b\":{\"offset\":8,\"committed_ms\":1}}}";
	ut_write_file(ut_path(p, sizeof p, ut_dir, FN_CONSUMERS), json, strlen(json));
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 1);
	ck_assert_ptr_nonnull(strstr(s.text[0], "consumer b committed offset 8"));
}
END_TEST

UT_TEST(stray_files_are_warnings)
{
	hand_log();
	hand_indexes();
	char p[1200];
	ut_write_file(ut_path(p, sizeof p, ut_dir, "README"), "x", 1);
	ut_write_file(ut_path(p, sizeof p, ut_dir, "watermark.tmp.1.0"), "x", 1);
	ut_write_file(ut_path(p, sizeof p, ut_dir, "00000000000000000099.idx"), "x", 1);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 0);
	ck_assert_uint_eq(res.warnings, 3);
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_WARNING, "README"), 0);
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_WARNING, "watermark.tmp.1.0"), 0);
	int k = find(&s, ELOG_PROBLEM_WARNING, "00000000000000000099.idx");
	ck_assert_int_ge(k, 0);
	ck_assert_str_eq(s.text[k], "index of a segment that does not exist");
}
END_TEST

/* What a power loss leaves before the writer reopens the log is not
 * damage: a watermark from before the last roll naming a segment that
 * compaction has since rewritten (it is closed now, its old length no
 * longer applies), and a newest segment whose header never reached the
 * disk beside a garbled watermark. */
UT_TEST(power_loss_leftovers_are_not_damage)
{
	hand_log();
	hand_indexes();
	/* The watermark from when segment 0 was active and longer. */
	ut_set_wm(ut_dir, 5, 0, seg0_size + 1000);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 0);
	/* But not one whose durable end lies past the next segment. */
	ut_set_wm(ut_dir, 7, 0, seg0_size);
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_DAMAGE, FN_WATERMARK), 0);

	/* A garbled watermark and a newest segment without its header. */
	char p[1200];
	ut_write_file(ut_path(p, sizeof p, ut_dir, FN_WATERMARK), "\0\0\0\0", 4);
	ut_write_file(ut_seg_path(ut_dir, 8, SEG_EXT), "ELOG", 4);
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 0);
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_WARNING, FN_WATERMARK), 0);
	ck_assert_int_ge(find(&s, ELOG_PROBLEM_WARNING, seg(8, SEG_EXT)), 0);
}
END_TEST

#ifdef ELOG_HAVE_ZSTD
/* A compressed log of n values in one segment, without a dictionary. */
static void compressed_log(int n)
{
	struct elog_options o = { .create = 1,
		                  .segment_bytes = 1u << 20,
		                  .compression = ELOG_COMPRESS_ZSTD,
		                  .no_dictionary = 1 };
	elog *w;
	ck_assert_int_eq(elog_open(&w, ut_dir, &o), 0);
	for (int i = 0; i < n; i++) {
		char v[128];
		snprintf(v, sizeof v, "value %d value value value value value value value", i);
		ut_append(w, NULL, v);
	}
	ck_assert_int_eq(elog_close(w), 0);
}

/* Set the first byte of the first record's value (its tag) to tag, and
 * with garble its next four bytes to 0xff, with the record's CRC made
 * right again. */
static void retag_first_value(unsigned char tag, int garble)
{
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 0, SEG_EXT));
	size_t len;
	unsigned char *b = ut_read_file(p, &len);
	unsigned char *r = b + SEG_HDR;
	uint32_t rlen = get32(r);
	r[REC_HDR + get16(r + 26)] = tag;
	if (garble)
		memset(r + REC_HDR + get16(r + 26) + 1, 0xff, 4);
	put32(r + 4, elog__crc32c(0, r + 8, rlen - 4));
	ut_write_file(p, b, len);
	free(b);
}

/* What elog-cat would fail on, elog-verify must report: a value that does
 * not decode makes the log damaged, though every CRC is right. */
UT_TEST(undecodable_values_are_damage)
{
	static const struct {
		unsigned char tag;
		int garble;
		const char *why;
	} cases[] = {
		{ 7, 0, "unknown value encoding 7" },
		{ TAG_ZSTD, 1, "zstd" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ut_rm_rf(ut_dir);
		compressed_log(20);
		struct seen s;
		struct elog_verify_result res;
		ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
		ck_assert_uint_eq(res.damage, 0);
		retag_first_value(cases[i].tag, cases[i].garble);
		ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
		ck_assert_uint_eq(res.damage, 1);
		int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, SEG_EXT));
		ck_assert_int_ge(k, 0);
		ck_assert_msg(strstr(s.text[k], "value of offset 0 cannot be decoded") &&
		                      strstr(s.text[k], cases[i].why),
		              "%s", s.text[k]);
		/* And indeed a reader cannot read it. */
		elog_reader *r = ut_open_reader(ut_dir);
		struct elog_record rec;
		ck_assert_int_ne(elog_reader_next(r, &rec), 0);
		elog_reader_close(r);
	}
}
END_TEST

/* A segment naming a dictionary that is missing or damaged is damage, and
 * so is any damaged dictionary file. */
UT_TEST(dictionaries_are_checked)
{
	compressed_log(5);
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 0, SEG_EXT));
	/* Make the segment name dictionary 1. */
	size_t len;
	unsigned char *b = ut_read_file(p, &len);
	elog__seg_header_encode(b, 0, SEG_FLAGS(CODEC_ZSTD, 1), NULL);
	ut_write_file(p, b, len);
	free(b);
	struct seen s;
	struct elog_verify_result res;
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 1);
	int k = find(&s, ELOG_PROBLEM_DAMAGE, seg(0, SEG_EXT));
	ck_assert_int_ge(k, 0);
	ck_assert_str_eq(s.text[k], "its values need dictionary 1: dict.1: dictionary missing");
	/* A damaged dictionary file, used or not. */
	ut_write_file(ut_path(p, sizeof p, ut_dir, "dict.2"), "ELOGDICTgarbage", 15);
	ck_assert_int_eq(run_verify(ut_dir, 0, &s, &res), 0);
	ck_assert_uint_eq(res.damage, 2);
	k = find(&s, ELOG_PROBLEM_DAMAGE, "dict.2");
	ck_assert_int_ge(k, 0);
	ck_assert_str_eq(s.text[k], "damaged dictionary");
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("verify");
	TCase *tc = ut_tcase("verify");
	tcase_set_timeout(tc, 120);
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
