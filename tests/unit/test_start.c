/*
 * test_start.c: the log's start (lib/start.c) and what honours it: the
 * file's bytes and its damage, the segment listing (lib/segment.c), readers,
 * the writer, verification, and the cleanup by the next maintenance run
 * (lib/maint.c) after a crash between writing the start and unlinking.
 */
#include "unit.h"
#include "../crash/maint_fault.h"

#define ID "6f1c0e4e9a2b4d7f8e3a5b6c7d8e9f01"

#define MAXP 64

/* ---- helpers ---- */

static int open_dir(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	return dfd;
}

static void put_start(const char *dir, uint64_t start)
{
	int dfd = open_dir(dir);
	UT_OK(elog__start_write(dfd, start, NULL), NULL);
	close(dfd);
}

static const char *start_path(const char *dir)
{
	static char p[1200];
	return ut_path(p, sizeof p, dir, FN_START);
}

/* The listing of dir: its bases in b (up to 16), their number returned. */
static size_t list(const char *dir, uint64_t *b, struct elog__start_view *sv)
{
	struct seglist sl;
	int dfd = open_dir(dir);
	UT_OK(elog__seglist_read_start(dfd, &sl, NULL, sv), NULL);
	size_t n = sl.n;
	for (size_t i = 0; i < n && i < 16; i++)
		b[i] = sl.base[i];
	elog__seglist_free(&sl);
	close(dfd);
	return n;
}

struct seen {
	size_t n;
	int kind[MAXP];
	char file[MAXP][64];
	char text[MAXP][512];
	int hint[MAXP];
};

static void on_problem(void *arg, const struct elog_problem *p)
{
	struct seen *s = arg;
	if (s->n == MAXP)
		return;
	s->kind[s->n] = p->kind;
	snprintf(s->file[s->n], sizeof s->file[0], "%s", p->file);
	snprintf(s->text[s->n], sizeof s->text[0], "%s", p->text);
	s->hint[s->n] = p->hint;
	s->n++;
}

static struct elog_verify_result verify(const char *dir, unsigned flags, struct seen *s)
{
	char msg[ELOG_MSG_MAX];
	struct elog_verify_result res;
	struct elog_verify_opts o = { .flags = flags, .problem = on_problem, .arg = s };
	memset(s, 0, sizeof *s);
	ck_assert_msg(elog_verify(dir, &o, &res, msg) == 0, "%s", msg);
	return res;
}

/* 1 when a problem of kind about file mentions text. */
static int said(const struct seen *s, int kind, const char *file, const char *text)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->kind[i] == kind && strcmp(s->file[i], file) == 0 && strstr(s->text[i], text))
			return 1;
	return 0;
}

/* The hint of the first problem of kind about file, or -1. */
static int hint_of(const struct seen *s, int kind, const char *file)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->kind[i] == kind && strcmp(s->file[i], file) == 0)
			return s->hint[i];
	return -1;
}

/* A real log of n records in 4 KiB segments, keyed k<i % 7>, ts 1000 + i;
 * its segment bases in b, their number returned. */
static size_t fill(const char *dir, int n, uint64_t *b)
{
	elog *w = ut_open_writer(dir, 4096, 512);
	char key[16], val[64];
	for (int i = 0; i < n; i++) {
		struct elog_record r = { 0 };
		snprintf(key, sizeof key, "k%d", i % 7);
		snprintf(val, sizeof val, "value %d, some bytes to fill segments", i);
		r = ut_rec(0, 1000 + i, 0, key, val);
		UT_OK(elog_append(w, &r, NULL), w);
	}
	UT_OK(elog_close(w), NULL);
	struct elog__start_view sv;
	size_t ns = list(dir, b, &sv);
	/* A log is made with its start file, saying 0. */
	ck_assert_int_eq(sv.state, START_OK);
	ck_assert_uint_eq(sv.start, 0);
	ck_assert_uint_eq(sv.hidden, 0);
	ck_assert_uint_ge(ns, 6);
	return ns;
}

/* Read from offset 0: one gap up to base, then every offset from base to
 * end without a hole. */
static void read_from(const char *dir, uint64_t base, uint64_t end)
{
	elog_reader *r = ut_open_reader(dir);
	struct elog_record rec;
	uint64_t first, last, next = base;
	int rc;
	UT_OK(elog_reader_seek(r, 0), r);
	rc = elog_reader_next(r, &rec);
	if (base > 0) {
		ck_assert_int_eq(rc, ELOG_GAP);
		elog_reader_gap(r, &first, &last);
		ck_assert_uint_eq(first, 0);
		ck_assert_uint_eq(last, base - 1);
		rc = elog_reader_next(r, &rec);
	}
	for (; rc == 0; rc = elog_reader_next(r, &rec))
		ck_assert_uint_eq(rec.offset, next++);
	ck_assert_int_eq(rc, ELOG_END);
	ck_assert_uint_eq(next, end);
	elog_reader_close(r);
}

/* ---- the file ---- */

UT_TEST(bytes_round_trip)
{
	unsigned char p[START_SIZE];
	uint64_t v = 0;
	const char *why = "x";
	elog__start_encode(p, 4182917, ID);
	ck_assert_mem_eq(p, "ELOGSTA\n", 8);
	ck_assert_uint_eq(get32(p + 8), 1);
	ck_assert_mem_eq(p + 12, "\x6f\x1c\x0e\x4e", 4); /* the log: its id's first bytes */
	ck_assert_uint_eq(get64(p + 16), 4182917);
	ck_assert_uint_eq(get32(p + 24), elog__crc32c(0, p, 24));
	ck_assert_uint_eq(get32(p + 28), 0);
	UT_OK(elog__start_decode(p, sizeof p, ID, &v, &why), NULL);
	ck_assert_uint_eq(v, 4182917);
	ck_assert_ptr_null(why);
	/* Another log's start file is damage to this one, and names none
	 * when no log is given. */
	UT_RC(elog__start_decode(p, sizeof p, "0123456789abcdef0123456789abcdef", &v, &why),
	      ELOG_CORRUPT, NULL);
	ck_assert_str_eq(why, "names another log: a start file copied in from elsewhere");
	UT_OK(elog__start_decode(p, sizeof p, NULL, &v, &why), NULL);

	/* Every flipped bit is caught; the version, under a right
	 * checksum, is a newer format. */
	for (size_t i = 0; i < START_SIZE * 8; i++) {
		unsigned char q[START_SIZE];
		memcpy(q, p, sizeof q);
		q[i / 8] ^= (unsigned char)(1u << (i % 8));
		UT_RC(elog__start_decode(q, sizeof q, ID, &v, NULL), ELOG_CORRUPT, NULL);
	}
	unsigned char q[START_SIZE];
	memcpy(q, p, sizeof q);
	put32(q + 8, 2);
	put32(q + 24, elog__crc32c(0, q, 24));
	UT_RC(elog__start_decode(q, sizeof q, ID, &v, NULL), ELOG_BADVERSION, NULL);
	memcpy(q, p, sizeof q);
	put32(q + 28, 1);
	UT_RC(elog__start_decode(q, sizeof q, ID, &v, &why), ELOG_CORRUPT, NULL);
	ck_assert_str_eq(why, "reserved bytes are not zero");
	UT_RC(elog__start_decode(p, sizeof p - 1, ID, &v, &why), ELOG_CORRUPT, NULL);
	ck_assert_str_eq(why, "not 32 bytes long");
}
END_TEST

UT_TEST(file_round_trip_and_damage)
{
	struct elog__start_view sv;
	uint64_t b[16];
	for (uint64_t i = 0; i < 4; i++)
		ut_seg_create(ut_top, i * 10);
	/* No file: start 0, everything listed. */
	ck_assert_uint_eq(list(ut_top, b, &sv), 4);
	ck_assert_int_eq(sv.state, START_NONE);

	put_start(ut_top, 20);
	ck_assert_uint_eq(ut_file_size(start_path(ut_top)), START_SIZE);
	ck_assert_uint_eq(list(ut_top, b, &sv), 2);
	ck_assert_int_eq(sv.state, START_OK);
	ck_assert_uint_eq(sv.start, 20);
	ck_assert_uint_eq(sv.hidden, 2);
	ck_assert_uint_eq(b[0], 20);
	ck_assert_uint_eq(b[1], 30);

	/* Damage of every kind hides nothing. */
	ut_flip_bit(start_path(ut_top), 17, 0);
	ck_assert_uint_eq(list(ut_top, b, &sv), 4);
	ck_assert_int_eq(sv.state, START_DAMAGED);
	ck_assert_str_eq(sv.why, "checksum mismatch");
	ut_truncate(start_path(ut_top), 31);
	ck_assert_uint_eq(list(ut_top, b, &sv), 4);
	ck_assert_int_eq(sv.state, START_DAMAGED);
	ut_write_file(start_path(ut_top), "0123456789012345678901234567890123456789", 40);
	ck_assert_uint_eq(list(ut_top, b, &sv), 4);
	ck_assert_int_eq(sv.state, START_DAMAGED);
	unlink(start_path(ut_top));
	ck_assert_int_eq(symlink("settings", start_path(ut_top)), 0);
	ck_assert_uint_eq(list(ut_top, b, &sv), 4);
	ck_assert_int_eq(sv.state, START_DAMAGED);
	unlink(start_path(ut_top));
	ck_assert_int_eq(mkdir(start_path(ut_top), 0777), 0);
	ck_assert_uint_eq(list(ut_top, b, &sv), 4);
	ck_assert_int_eq(sv.state, START_DAMAGED);
	ck_assert_str_eq(sv.why, "not a regular file");
	rmdir(start_path(ut_top));

	/* Past the newest segment: wrong, ignored. */
	put_start(ut_top, 31);
	ck_assert_uint_eq(list(ut_top, b, &sv), 4);
	ck_assert_int_eq(sv.state, START_BEYOND);
	/* The newest segment's base is a start retention may write. */
	put_start(ut_top, 30);
	ck_assert_uint_eq(list(ut_top, b, &sv), 1);
	ck_assert_uint_eq(b[0], 30);
	/* Inside a segment: the one holding it stays, whole. */
	put_start(ut_top, 25);
	ck_assert_uint_eq(list(ut_top, b, &sv), 2);
	ck_assert_uint_eq(b[0], 20);
	ck_assert_uint_eq(sv.hidden, 2);
	/* Below the first segment: nothing to hide. */
	put_start(ut_top, 0);
	ck_assert_uint_eq(list(ut_top, b, &sv), 4);
	ck_assert_int_eq(sv.state, START_OK);

	/* A newer version refuses the listing, as every file does. */
	unsigned char q[START_SIZE];
	elog__start_encode(q, 10, NULL);
	put32(q + 8, 2);
	put32(q + 24, elog__crc32c(0, q, 24));
	ut_write_file(start_path(ut_top), q, sizeof q);
	struct seglist sl;
	int dfd = open_dir(ut_top);
	UT_RC(elog__seglist_read(dfd, &sl), ELOG_BADVERSION, NULL);
	close(dfd);
}
END_TEST

/* ---- a crash between the start and the unlinks ---- */

UT_TEST(readers_writer_and_verify_skip_segments_below_start)
{
	uint64_t b[16], got[4];
	size_t ns = fill(ut_dir, 600, b);
	uint64_t start = b[2];
	/* Retention wrote the start, then the machine stopped. */
	put_start(ut_dir, start);

	read_from(ut_dir, start, 600);
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	UT_OK(elog_reader_seek_begin(r), r);
	UT_OK(elog_reader_next(r, &rec), r);
	ck_assert_uint_eq(rec.offset, start);
	/* By time: the oldest timestamps are below the start. */
	UT_OK(elog_reader_seek_time(r, 0), r);
	UT_OK(elog_reader_next(r, &rec), r);
	ck_assert_uint_eq(rec.offset, start);
	UT_OK(elog_reader_seek_time(r, 1000 + (int64_t)start + 3), r);
	UT_OK(elog_reader_next(r, &rec), r);
	ck_assert_uint_eq(rec.offset, start + 3);
	/* The last N, N larger than what is left. */
	UT_OK(elog_reader_seek_last(r, 1000), r);
	UT_OK(elog_reader_next(r, &rec), r);
	ck_assert_uint_eq(rec.offset, start);
	UT_OK(elog_reader_seek_last(r, 2), r);
	ck_assert_uint_eq(ut_read_offsets(r, got, 4), 2);
	ck_assert_uint_eq(got[0], 598);
	elog_reader_close(r);

	/* The writer opens, recovers and appends as before. */
	elog *w = ut_open_writer(ut_dir, 4096, 512);
	ck_assert_uint_eq(elog_next_offset(w), 600);
	ut_append(w, "k", "after");
	UT_OK(elog_close(w), NULL);
	read_from(ut_dir, start, 601);

	/* verify: a warning per segment left below the start, no damage. */
	struct seen s;
	struct elog_verify_result res = verify(ut_dir, 0, &s);
	ck_assert_uint_eq(res.damage, 0);
	ck_assert_uint_eq(res.warnings, 2);
	char name[NAME_MAX_LOCAL];
	elog__seg_name(name, b[0], SEG_EXT);
	ck_assert(said(&s, ELOG_PROBLEM_WARNING, name, "below the log's start"));
	ck_assert(!said(&s, ELOG_PROBLEM_WARNING, name, "elog-"));
	ck_assert_int_eq(hint_of(&s, ELOG_PROBLEM_WARNING, name), ELOG_HINT_RETAIN);
	struct elog__start_view sv;
	ck_assert_uint_eq(res.segments, list(ut_dir, b, &sv));
	ck_assert_uint_ge(res.segments, ns - 2);
	ck_assert_uint_eq(res.records, 601 - start);
}
END_TEST

/* The next maintenance run, retention or compaction, unlinks them. */
static void cleaned_by(int compaction)
{
	uint64_t b[16];
	fill(ut_dir, 600, b);
	put_start(ut_dir, b[2]);
	char msg[ELOG_MSG_MAX];
	uint64_t leftovers;
	if (compaction) {
		struct elog_compact_result res;
		ut_cleanup_compact(ut_dir);
		ck_assert_msg(elog_compact(ut_dir, NULL, &res, msg) == 0, "%s", msg);
		leftovers = res.leftovers;
	} else {
		struct elog_retain_opts o = { .max_bytes = UINT64_MAX / 2 };
		struct elog_retain_result res;
		ck_assert_msg(elog_retain(ut_dir, &o, &res, msg) == 0, "%s", msg);
		ck_assert_uint_eq(res.segments, 0);
		ck_assert_uint_eq(res.start_before, b[2]);
		leftovers = res.leftovers;
	}
	ck_assert_uint_eq(leftovers, 4); /* two .log, two .idx */
	for (int i = 0; i < 2; i++) {
		ck_assert(!ut_exists(ut_seg_path(ut_dir, b[i], SEG_EXT)));
		ck_assert(!ut_exists(ut_seg_path(ut_dir, b[i], IDX_EXT)));
	}
	ck_assert(ut_exists(ut_seg_path(ut_dir, b[2], SEG_EXT)));
	struct seen s;
	struct elog_verify_result vr = verify(ut_dir, 0, &s);
	ck_assert_uint_eq(vr.damage, 0);
	ck_assert_uint_eq(vr.warnings, 0);
	if (!compaction)
		read_from(ut_dir, b[2], 600);
}

UT_TEST(leftovers_cleaned_by_retention)
{
	cleaned_by(0);
}
END_TEST

UT_TEST(leftovers_cleaned_by_compaction)
{
	cleaned_by(1);
}
END_TEST

/* ---- verification and repair of the file ---- */

UT_TEST(verify_reports_and_repairs_a_bad_start)
{
	uint64_t b[16];
	struct seen s;
	struct elog_verify_result res;
	fill(ut_dir, 600, b);

	/* Damaged: reported, ignored, rewritten by --repair. */
	put_start(ut_dir, b[2]);
	ut_flip_bit(start_path(ut_dir), 20, 3);
	res = verify(ut_dir, 0, &s);
	ck_assert_uint_eq(res.damage, 1);
	ck_assert(said(&s, ELOG_PROBLEM_DAMAGE, FN_START, "checksum mismatch"));
	ck_assert_uint_eq(res.records, 600); /* nothing hidden */
	read_from(ut_dir, 0, 600);
	res = verify(ut_dir, ELOG_VERIFY_REPAIR, &s);
	ck_assert_uint_eq(res.repaired, 1);
	ck_assert_uint_eq(res.remaining, 0);
	res = verify(ut_dir, 0, &s);
	ck_assert_uint_eq(res.damage + res.warnings, 0);
	read_from(ut_dir, 0, 600);

	/* Past the newest segment. */
	put_start(ut_dir, 600);
	res = verify(ut_dir, 0, &s);
	ck_assert_uint_eq(res.damage, 1);
	ck_assert(said(&s, ELOG_PROBLEM_DAMAGE, FN_START, "past the base"));
	ck_assert_uint_eq(res.records, 600);

	/* Not a segment's base: the segment holding it is read whole. */
	put_start(ut_dir, b[2] + 1);
	res = verify(ut_dir, 0, &s);
	ck_assert_uint_eq(res.damage, 1);
	ck_assert_uint_eq(res.warnings, 2);
	ck_assert(said(&s, ELOG_PROBLEM_DAMAGE, FN_START, "not a segment's base"));
	read_from(ut_dir, b[2], 600);
	res = verify(ut_dir, ELOG_VERIFY_REPAIR, &s);
	ck_assert_uint_eq(res.remaining, 0);
	read_from(ut_dir, b[2], 600);

	/* Below the first segment: segments are missing. */
	put_start(ut_dir, b[0]);
	ck_assert_int_eq(unlink(ut_seg_path(ut_dir, b[0], SEG_EXT)), 0);
	ck_assert_int_eq(unlink(ut_seg_path(ut_dir, b[1], SEG_EXT)), 0);
	res = verify(ut_dir, 0, &s);
	ck_assert(said(&s, ELOG_PROBLEM_DAMAGE, FN_START, "are missing"));
}
END_TEST

UT_TEST(maintenance_rewrites_an_ignored_start)
{
	uint64_t b[16];
	char msg[ELOG_MSG_MAX];
	struct elog_retain_opts o = { .max_bytes = UINT64_MAX / 2 };
	struct elog_retain_result res;
	struct elog__start_view sv;
	fill(ut_dir, 600, b);
	put_start(ut_dir, 600);
	ck_assert_msg(elog_retain(ut_dir, &o, &res, msg) == 0, "%s", msg);
	ck_assert_uint_eq(res.leftovers, 1);
	list(ut_dir, b, &sv);
	ck_assert_int_eq(sv.state, START_OK);
	ck_assert_uint_eq(sv.start, 0);
}
END_TEST

/* A crash at every step of a retention run: no damage and no hole, and the
 * next run leaves a log that verifies without a warning. */
UT_TEST(crash_at_every_step)
{
	uint64_t b[16];
	char copy[1200], cmd[3600];
	snprintf(copy, sizeof copy, "%s/copy", ut_top);
	fill(copy, 600, b);
	int n;
	for (n = 1;; n++) {
		snprintf(cmd, sizeof cmd, "rm -rf %s && cp -a %s %s", ut_dir, copy, ut_dir);
		ck_assert_int_eq(system(cmd), 0);
		pid_t pid = fork();
		if (pid == 0) {
			char v[16];
			struct elog_retain_opts o = { .max_bytes = 6 * 1024 };
			snprintf(v, sizeof v, "%d", n);
			setenv(MAINT_CRASH_ENV, v, 1);
			_exit(elog_retain(ut_dir, &o, NULL, NULL) == 0 ? 0 : 1);
		}
		int st = ut_wait_child(pid);
		struct seen s;
		struct elog_verify_result vr = verify(ut_dir, 0, &s);
		ck_assert_uint_eq(vr.damage, 0);
		uint64_t first[16];
		struct elog__start_view sv;
		list(ut_dir, first, &sv);
		read_from(ut_dir, first[0], 600);

		struct elog_retain_opts o = { .max_bytes = 6 * 1024 };
		struct elog_retain_result res;
		char msg[ELOG_MSG_MAX];
		ck_assert_msg(elog_retain(ut_dir, &o, &res, msg) == 0, "%s", msg);
		vr = verify(ut_dir, 0, &s);
		ck_assert_msg(vr.damage + vr.warnings == 0, "step %d: %s", n, s.n ? s.text[0] : "");
		list(ut_dir, first, &sv);
		ck_assert_int_eq(sv.state, START_OK);
		ck_assert_uint_eq(sv.hidden, 0);
		read_from(ut_dir, first[0], 600);
		if (st == 0)
			break;
		ck_assert_int_eq(st, MAINT_CRASH_STATUS);
	}
	/* The start, then an unlink per file, then the directory sync. */
	ck_assert_int_gt(n, 4);
}
END_TEST

/* A log is born with its start file and lock files, so that retention on a
 * full disk needs no new file (the start is then rewritten in place). */
UT_TEST(created_with_the_log)
{
	elog *w = ut_open_writer(ut_dir, 4096, 512);
	UT_OK(elog_close(w), NULL);
	char p[1200];
	static const char *const names[] = { FN_START, FN_MAINT, FN_CONSUMERS_LOCK };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		ck_assert_msg(ut_exists(ut_path(p, sizeof p, ut_dir, names[i])), "%s missing",
		              names[i]);
	ck_assert_uint_eq(ut_file_size(start_path(ut_dir)), START_SIZE);
	struct elog__start_view sv;
	uint64_t b[4];
	ck_assert_uint_eq(list(ut_dir, b, &sv), 1);
	ck_assert_int_eq(sv.state, START_OK);
	ck_assert_uint_eq(sv.start, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("start");
	TCase *tc = ut_tcase("start");
	tcase_set_timeout(tc, 120);
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
