/*
 * test_hostile.c: hostile files against the library: lengths that would
 * make it allocate or read without bound, garbage where a log should be,
 * and symbolic links planted in a log directory.
 */
#include <sys/mman.h>

#include "unit.h"

UT_TEST(huge_length_field_is_corrupt_without_allocating)
{
	/* A record claiming just under ELOG_MAX_RECORD, of which 100 bytes
	 * exist: the scan may grow its buffer to the record, never further. */
	unsigned char buf[SEG_HDR + 100] = { 0 };
	elog__seg_header_encode(buf, 0, 0, NULL);
	put32(buf + SEG_HDR, ELOG_MAX_RECORD);
	int fd = memfd_create("seg", 0);
	ck_assert_int_ge(fd, 0);
	UT_OK(elog__fs_pwrite_all(fd, buf, sizeof buf, 0), NULL);
	struct scan s;
	struct elog_record rec;
	uint64_t at;
	UT_OK(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), NULL);
	UT_RC(elog__scan_next(&s, &rec, &at), ELOG_CORRUPT, NULL);
	ck_assert(elog__scan_truncated(&s));
	ck_assert_uint_le(s.cap, 2 * ((size_t)ELOG_MAX_RECORD + 4));
	elog__scan_free(&s);

	/* One byte more than the maximum is corrupt at once, with no read of
	 * the record at all. */
	put32(buf + SEG_HDR, ELOG_MAX_RECORD + 1);
	UT_OK(elog__fs_pwrite_all(fd, buf, sizeof buf, 0), NULL);
	UT_OK(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), NULL);
	UT_RC(elog__scan_next(&s, &rec, &at), ELOG_CORRUPT, NULL);
	ck_assert(!elog__scan_truncated(&s));
	ck_assert_uint_lt(s.cap, ELOG_MAX_RECORD / 4); /* not grown for it */
	elog__scan_free(&s);
	close(fd);
}
END_TEST

UT_TEST(index_read_is_bounded_by_its_segment)
{
	/* A 4 MiB index beside a segment of one record: elog__idx_load() reads at
	 * most what that segment could need. */
	uint64_t offs[] = { 0 };
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	uint64_t size = ut_seg_fill(ut_dir, 0, offs, 1, 0);
	size_t n = 4u << 20;
	unsigned char *big = calloc(1, n);
	ck_assert_ptr_nonnull(big);
	elog__idx_header_encode(big);
	for (size_t i = 0; IDX_HDR + (i + 1) * IDX_ENTRY <= n; i++) {
		struct idx_entry e = { .offset = i,
			               .pos = (uint32_t)(SEG_HDR + i),
			               .span_min = IDX_SPAN_EMPTY_MIN,
			               .span_max = IDX_SPAN_EMPTY_MAX };
		elog__idx_entry_encode(big + IDX_HDR + i * IDX_ENTRY, &e);
	}
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 0, IDX_EXT));
	ut_write_file(p, big, n);
	free(big);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct index ix;
	int intact;
	UT_OK(elog__idx_load(dfd, 0, size, &ix, &intact), NULL);
	ck_assert_uint_le(ix.n, size / REC_HDR + 1);
	ck_assert(!intact);
	elog__idx_free(&ix);
	close(dfd);
}
END_TEST

UT_TEST(settings_and_consumers_have_size_limits)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	elog_close(w);
	char p[1200], msg[ELOG_MSG_MAX];
	size_t n = 2u << 20;
	char *big = malloc(n);
	ck_assert_ptr_nonnull(big);
	memset(big, ' ', n);
	ut_write_file(ut_path(p, sizeof p, ut_dir, FN_CONSUMERS), big, n);
	struct elog_consumer c;
	UT_RC(elog_consumer_get(ut_dir, "a", &c, msg), ELOG_CORRUPT, msg);
	unlink(p);
	ut_write_file(ut_path(p, sizeof p, ut_dir, FN_SETTINGS), big, SETTINGS_MAX + 1);
	struct elog_settings s;
	UT_RC(elog_settings_read(ut_dir, &s, NULL), ELOG_CORRUPT, NULL);
	free(big);
}
END_TEST

UT_TEST(garbage_watermark_does_not_spin)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	ut_append(w, NULL, "x");
	elog_close(w);
	char p[1200];
	ut_write_file(ut_path(p, sizeof p, ut_dir, FN_WATERMARK),
	              "garbage garbage garbage "
	              "garbage garbage garbage",
	              47);
	int64_t t0 = ut_now_ms();
	/* It reads as nothing known durable beyond the closed segments. */
	elog_reader *r = ut_open_reader(ut_dir);
	ck_assert_uint_eq(elog_reader_durable_end(r), 0);
	elog_reader_close(r);
	ck_assert_int_lt(ut_now_ms() - t0, 2000);
}
END_TEST

UT_TEST(zero_filled_segment_gives_an_error_naming_it)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	for (int i = 0; i < 300; i++)
		ut_append(w, NULL, "a value long enough to fill a few segments");
	elog_close(w);
	char p[1200], *zeros = calloc(1, 4096);
	ck_assert_ptr_nonnull(zeros);
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 0, SEG_EXT));
	ut_write_file(p, zeros, 4096);
	free(zeros);
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	UT_RC(elog_reader_next(r, &rec), ELOG_CORRUPT, r);
	ck_assert_str_eq(elog_reader_errmsg(r), "00000000000000000000.log: bad segment header");
	elog_reader_close(r);
}
END_TEST

/* A symbolic link planted in place of name makes op fail, and the file it
 * points at is left as it was. */
static void plant_link(const char *name, char *target, size_t size)
{
	char p[1200];
	ut_path(p, sizeof p, ut_dir, name);
	ut_path(target, size, ut_top, "target");
	ut_write_file(target, "precious\n", 9);
	unlink(p);
	ck_assert_int_eq(symlink(target, p), 0);
}

static void target_intact(const char *target)
{
	size_t len;
	unsigned char *b = ut_read_file(target, &len);
	ck_assert_uint_eq(len, 9);
	ck_assert_int_eq(memcmp(b, "precious\n", 9), 0);
	free(b);
}

UT_TEST(symlinked_files_are_refused)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	ut_append(w, NULL, "x");
	elog_close(w);
	char target[1200], msg[ELOG_MSG_MAX];

	plant_link(FN_LOCK, target, sizeof target);
	UT_RC(elog_open(&w, ut_dir, NULL), ELOOP, w);
	ck_assert_str_eq(elog_errmsg(w), "LOCK: refusing to follow a symbolic link");
	elog_close(w);
	target_intact(target);
	char p[1200];
	unlink(ut_path(p, sizeof p, ut_dir, FN_LOCK));

	plant_link(FN_CONSUMERS, target, sizeof target);
	ck_assert_int_ne(elog_consumer_commit(ut_dir, "a", 0, msg), 0);
	target_intact(target);
	unlink(ut_path(p, sizeof p, ut_dir, FN_CONSUMERS));

	plant_link(FN_WATERMARK, target, sizeof target);
	elog_reader *r;
	UT_RC(elog_reader_open(&r, ut_dir), ELOOP, r);
	elog_reader_close(r);
	ck_assert_int_ne(elog_open(&w, ut_dir, NULL), 0);
	elog_close(w);
	target_intact(target);
}
END_TEST

UT_TEST(files_respect_the_umask)
{
	mode_t old = umask(027);
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	for (int i = 0; i < 200; i++)
		ut_append(w, NULL, "a value long enough to roll a segment or two");
	elog_close(w);
	char msg[ELOG_MSG_MAX];
	UT_OK(elog_consumer_commit(ut_dir, "a", 1, msg), msg);
	umask(old);
	const char *names[] = { FN_SETTINGS,
		                FN_WATERMARK,
		                FN_LOCK,
		                FN_CONSUMERS,
		                "00000000000000000000.log",
		                "00000000000000000000.idx" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char p[1200];
		struct stat st;
		ck_assert_int_eq(lstat(ut_path(p, sizeof p, ut_dir, names[i]), &st), 0);
		ck_assert_msg((st.st_mode & 0027) == 0, "%s has mode %o", names[i],
		              (unsigned)(st.st_mode & 0777));
	}
	struct stat st;
	ck_assert_int_eq(stat(ut_dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0750);
}
END_TEST

UT_TEST(temporary_names_are_created_exclusively)
{
	/* A link planted at the temporary name a replacement would use first
	 * is neither followed nor overwritten. */
	char target[1200], link[1200], tmp[128];
	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld.0", FN_CONSUMERS, (long)getpid());
	ut_path(target, sizeof target, ut_top, "target");
	ut_write_file(target, "precious\n", 9);
	ck_assert_int_eq(symlink(target, ut_path(link, sizeof link, ut_dir, tmp)), 0);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	UT_OK(elog__fs_replace_file(dfd, FN_CONSUMERS, "{}", 2), NULL);
	close(dfd);
	target_intact(target);
	struct stat st;
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
}
END_TEST

/* A FIFO in place of each file a program opens: every call returns at once
 * with ELOG_NOTREG (or treats the file as damaged), never blocks. */
UT_TEST(fifos_are_refused_without_blocking)
{
	static const char *const names[] = {
		FN_SETTINGS,
		FN_WATERMARK,
		"00000000000000000000.log",
		FN_LOCK,
	};
	alarm(20); /* a blocked open fails the test instead of hanging */
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		ut_rm_rf(ut_dir);
		elog *w = ut_open_writer(ut_dir, 4096, 64);
		ut_append(w, NULL, "x");
		elog_close(w);
		char p[1200];
		ut_path(p, sizeof p, ut_dir, names[i]);
		ck_assert_int_eq(unlink(p), 0);
		ck_assert_int_eq(mkfifo(p, 0666), 0);
		UT_RC(elog_open(&w, ut_dir, NULL), ELOG_NOTREG, w);
		char want[128];
		snprintf(want, sizeof want, "%s: not a regular file", names[i]);
		ck_assert_str_eq(elog_errmsg(w), want);
		elog_close(w);
	}
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	errno = 0;
	ck_assert_int_eq(elog__fs_openat(dfd, FN_LOCK, O_RDONLY, 0), -1);
	ck_assert_int_eq(errno, ELOG_NOTREG);
	ck_assert_int_eq(elog__fs_openat(dfd, FN_LOCK, O_WRONLY | O_CREAT, 0666), -1);
	ck_assert_int_eq(errno, ELOG_NOTREG);
	char *data;
	size_t len;
	UT_RC(elog__fs_read_small(dfd, FN_LOCK, 100, &data, &len), ELOG_NOTREG, NULL);
	close(dfd);
	ck_assert_str_eq(elog_strerror(ELOG_NOTREG), "not a regular file");
	alarm(0);
}
END_TEST

/* A second hard link to a file the log writes: opening it for writing is
 * refused, and the other name keeps its bytes.  Reading is allowed (a
 * hard-link snapshot of a log, as cp -al makes, stays readable). */
UT_TEST(hard_linked_files_are_not_written)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	ut_append(w, NULL, "x");
	elog_close(w);
	char target[1200], p[1200], msg[ELOG_MSG_MAX];
	ut_path(target, sizeof target, ut_top, "target");
	ut_write_file(target, "precious\n", 9);
	static const char *const names[] = { FN_LOCK, FN_WATERMARK };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		ut_path(p, sizeof p, ut_dir, names[i]);
		unlink(p);
		ck_assert_int_eq(link(target, p), 0);
		UT_RC(elog_open(&w, ut_dir, NULL), ELOG_LINKED, w);
		char want[128];
		snprintf(want, sizeof want,
		         "%s: has more than one hard link, refusing "
		         "to write it",
		         names[i]);
		ck_assert_str_eq(elog_errmsg(w), want);
		elog_close(w);
		target_intact(target);
		unlink(p);
	}
	ut_path(p, sizeof p, ut_dir, FN_MAINT);
	unlink(p);
	ck_assert_int_eq(link(target, p), 0);
	struct elog_retain_opts ro = { .max_bytes = 1 };
	UT_RC(elog_retain(ut_dir, &ro, NULL, msg), ELOG_LINKED, msg);
	ck_assert_str_eq(msg, "maint.lock: has more than one hard link, refusing to write it");
	target_intact(target);
	/* Read-only opens take a linked file. */
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	int fd = elog__fs_openat(dfd, FN_MAINT, O_RDONLY, 0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	close(dfd);
}
END_TEST

/* Run as root in a directory another user owns, every file the library
 * creates is that user's; one that was there keeps its owner. */
UT_TEST(files_root_creates_belong_to_the_directory_owner)
{
	if (geteuid() != 0)
		return; /* needs root: nothing to check otherwise */
	ck_assert_int_eq(mkdir(ut_dir, 0755), 0);
	ck_assert_int_eq(chown(ut_dir, 65534, 65534), 0);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	int fd = elog__fs_openat(dfd, "made", O_RDWR | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = elog__fs_openat(dfd, "excl", O_RDWR | O_CREAT | O_EXCL, 0666);
	ck_assert_int_ge(fd, 0);
	close(fd);
	UT_OK(elog__fs_replace_file(dfd, "replaced", "x", 1), NULL);
	char p[1200];
	ut_write_file(ut_path(p, sizeof p, ut_dir, "roots"), "y", 1);
	fd = elog__fs_openat(dfd, "roots", O_RDWR | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	close(fd);
	close(dfd);
	static const char *const mine[] = { "made", "excl", "replaced" };
	struct stat st;
	for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++) {
		ck_assert_int_eq(stat(ut_path(p, sizeof p, ut_dir, mine[i]), &st), 0);
		ck_assert_msg(st.st_uid == 65534 && st.st_gid == 65534, "%s: %u:%u", mine[i],
		              (unsigned)st.st_uid, (unsigned)st.st_gid);
	}
	ck_assert_int_eq(stat(ut_path(p, sizeof p, ut_dir, "roots"), &st), 0);
	ck_assert_uint_eq(st.st_uid, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostile");
	TCase *tc = ut_tcase("hostile");
	tcase_set_timeout(tc, 60);
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
