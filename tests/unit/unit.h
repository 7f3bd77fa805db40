/*
 * unit.h: what the unit tests share: the Check framework, a scratch
 * directory per test (and copies of a log directory), helpers that read
 * and damage files byte by byte, a record builder that writes segments by
 * hand, and a log directory made without the writer (so that a test can
 * put the watermark anywhere).
 *
 * Every helper is static inline and prefixed ut_ so that a test file may
 * use any subset of them, and its own helpers never collide with these.
 * A helper that fails stops the test with a Check assertion: a test that
 * could not set up its files must not go on and pass by accident.
 */
#ifndef ELOG_UNIT_H
#define ELOG_UNIT_H

#include <check.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* ---- scratch directories ---- */

/* The scratch directory of the running test, and a log directory inside
 * it (not created: tests decide whether the writer creates it). */
static char ut_top[1024] __attribute__((unused));
static char ut_dir[1100] __attribute__((unused));

static inline int ut_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void ut_rm_rf(const char *path)
{
	nftw(path, ut_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Checked fixtures run in the forked test process, so each test gets a
 * fresh directory and leaves nothing behind even when it fails. */
static inline void ut_setup(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(ut_top, sizeof ut_top, "%s/elog-unit.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(ut_top));
	snprintf(ut_dir, sizeof ut_dir, "%s/log", ut_top);
}

static inline void ut_teardown(void)
{
	if (ut_top[0])
		ut_rm_rf(ut_top);
}

/* dir/name into buf. */
static inline const char *ut_path(char *buf, size_t size, const char *dir, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", dir, name);
	ck_assert(n > 0 && (size_t)n < size);
	return buf;
}

/* The path of segment (or index) base in dir, in a static buffer. */
static inline const char *ut_seg_path(const char *dir, uint64_t base, const char *ext)
{
	static char buf[2][1200];
	static int k;
	char name[NAME_MAX_LOCAL];
	elog__seg_name(name, base, ext);
	k ^= 1;
	return ut_path(buf[k], sizeof buf[k], dir, name);
}

static inline int ut_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* ---- whole files and bytes in them ---- */

static inline void ut_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elog__fs_write_all(fd, data, len), 0);
	ck_assert_int_eq(close(fd), 0);
}

static inline void ut_append_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elog__fs_write_all(fd, data, len), 0);
	ck_assert_int_eq(close(fd), 0);
}

/* Create path empty unless it exists, as touch(1) would. */
static inline void ut_touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0666);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(close(fd), 0);
}

static inline void ut_write_at(const char *path, uint64_t pos, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elog__fs_pwrite_all(fd, data, len, (off_t)pos), 0);
	ck_assert_int_eq(close(fd), 0);
}

/* The whole file in a malloc'ed buffer (NUL-terminated), its size in *len. */
static inline unsigned char *ut_read_file(const char *path, size_t *len)
{
	struct stat st;
	size_t got;
	int fd = open(path, O_RDONLY);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fstat(fd, &st), 0);
	unsigned char *buf = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(elog__fs_pread_full(fd, buf, (size_t)st.st_size, 0, &got), 0);
	ck_assert_uint_eq(got, (size_t)st.st_size);
	buf[got] = '\0';
	close(fd);
	if (len)
		*len = got;
	return buf;
}

static inline uint64_t ut_file_size(const char *path)
{
	struct stat st;
	ck_assert_msg(stat(path, &st) == 0, "%s: %s", path, strerror(errno));
	return (uint64_t)st.st_size;
}

static inline void ut_truncate(const char *path, uint64_t size)
{
	ck_assert_int_eq(truncate(path, (off_t)size), 0);
}

static inline void ut_flip_bit(const char *path, uint64_t pos, int bit)
{
	unsigned char c;
	size_t got;
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elog__fs_pread_full(fd, &c, 1, (off_t)pos, &got), 0);
	ck_assert_uint_eq(got, 1);
	c ^= (unsigned char)(1u << bit);
	ck_assert_int_eq(elog__fs_pwrite_all(fd, &c, 1, (off_t)pos), 0);
	close(fd);
}

/* ---- whole directories ---- */

/* How many names in dir contain part ("." and ".." aside). */
static inline int ut_count_names(const char *dir, const char *part)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	ck_assert_msg(d != NULL, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    strstr(de->d_name, part) != NULL)
			n++;
	closedir(d);
	return n;
}

/* Copy the log directory src to dst, which must not exist: every file in
 * it (a log holds regular files only), each with its mode and times, as
 * `cp -a` would. */
static inline void ut_copy_dir(const char *src, const char *dst)
{
	char from[1200], to[1200];
	struct stat st;
	struct dirent *de;
	DIR *d = opendir(src);
	ck_assert_msg(d != NULL, "%s: %s", src, strerror(errno));
	ck_assert_msg(mkdir(dst, 0777) == 0, "%s: %s", dst, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		ut_path(from, sizeof from, src, de->d_name);
		ut_path(to, sizeof to, dst, de->d_name);
		ck_assert_int_eq(lstat(from, &st), 0);
		ck_assert_msg(S_ISREG(st.st_mode), "%s: not a regular file", from);
		size_t len;
		unsigned char *data = ut_read_file(from, &len);
		ut_write_file(to, data, len);
		free(data);
		const struct timespec times[2] = { st.st_atim, st.st_mtim };
		ck_assert_int_eq(chmod(to, st.st_mode & 07777), 0);
		ck_assert_int_eq(utimensat(AT_FDCWD, to, times, 0), 0);
	}
	closedir(d);
	ck_assert_int_eq(stat(src, &st), 0);
	const struct timespec times[2] = { st.st_atim, st.st_mtim };
	ck_assert_int_eq(chmod(dst, st.st_mode & 07777), 0);
	ck_assert_int_eq(utimensat(AT_FDCWD, dst, times, 0), 0);
}

/* dst made again as a copy of src (the state a test starts over from). */
static inline void ut_restore_dir(const char *dst, const char *src)
{
	ut_rm_rf(dst);
	ck_assert_msg(!ut_exists(dst), "%s could not be removed", dst);
	ut_copy_dir(src, dst);
}

/* ---- records ---- */

/* A record of strings (NULL key = unkeyed). */
static inline struct elog_record ut_rec(uint64_t offset, int64_t ts, uint16_t schema,
                                        const char *key, const char *value)
{
	struct elog_record r = { 0 };
	r.offset = offset;
	r.ts_ms = ts;
	r.schema = schema;
	r.key = key;
	r.key_len = key ? strlen(key) : 0;
	r.value = value;
	r.value_len = value ? strlen(value) : 0;
	return r;
}

/* Encode rec into a malloc'ed buffer; its size in *size. */
static inline unsigned char *ut_encode(const struct elog_record *rec, size_t *size)
{
	*size = elog__rec_size(rec->key_len, rec->value_len);
	unsigned char *p = malloc(*size);
	ck_assert_ptr_nonnull(p);
	elog__rec_encode(p, rec);
	return p;
}

/* Append an encoded record to a file; returns its byte position. */
static inline uint64_t ut_append_rec(const char *path, const struct elog_record *rec)
{
	size_t size;
	uint64_t pos = ut_file_size(path);
	unsigned char *p = ut_encode(rec, &size);
	ut_append_file(path, p, size);
	free(p);
	return pos;
}

/* A segment file holding only its header, of version 1 (elog 0.2): the
 * segments made by hand need no seal when closed.  ut_seg_create_sealed()
 * makes one of this version, which ut_seg_seal() closes. */
static inline void ut_seg_create_version(const char *dir, uint64_t base, uint32_t version)
{
	unsigned char hdr[SEG_HDR];
	struct elog_settings set;
	/* Of version 2, it names the log of dir, when dir is one. */
	int have = version == SEG_VERSION && elog_settings_read(dir, &set, NULL) == 0;
	elog__seg_header_encode(hdr, base, 0, have ? set.id : NULL);
	if (version != SEG_VERSION) {
		put32(hdr + SEG_AT_VERSION, version);
		put32(hdr + SEG_AT_CRC, elog__crc32c(0, hdr, SEG_AT_CRC));
	}
	ut_write_file(ut_seg_path(dir, base, SEG_EXT), hdr, SEG_HDR);
}

static inline void ut_seg_create(const char *dir, uint64_t base)
{
	ut_seg_create_version(dir, base, SEG_VERSION_1);
}

static inline void ut_seg_create_sealed(const char *dir, uint64_t base)
{
	ut_seg_create_version(dir, base, SEG_VERSION);
}

/* End segment base of dir with a seal naming next (of the log with id
 * hex, or zeros when NULL); returns where the seal starts. */
static inline uint64_t ut_seg_seal(const char *dir, uint64_t base, uint64_t next, uint64_t end,
                                   const char *hex)
{
	const char *path = ut_seg_path(dir, base, SEG_EXT);
	char path_copy[1200];
	unsigned char p[SEAL_SIZE];
	snprintf(path_copy, sizeof path_copy, "%s", path);
	struct seal s = elog__seal_of(hex ? hex : "", next, end, ut_file_size(path_copy));
	elog__seal_encode(p, &s);
	ut_append_file(path_copy, p, SEAL_SIZE);
	return s.pos;
}

/* Append records with the given offsets to segment base of dir; record i
 * gets ts ts0 + offset and the value "v<offset>".  Returns the segment's
 * size afterwards. */
static inline uint64_t ut_seg_fill(const char *dir, uint64_t base, const uint64_t *offs, size_t n,
                                   int64_t ts0)
{
	const char *path = ut_seg_path(dir, base, SEG_EXT);
	char path_copy[1200], v[32];
	snprintf(path_copy, sizeof path_copy, "%s", path);
	for (size_t i = 0; i < n; i++) {
		snprintf(v, sizeof v, "v%llu", (unsigned long long)offs[i]);
		struct elog_record r = ut_rec(offs[i], ts0 + (int64_t)offs[i], 0, NULL, v);
		ut_append_rec(path_copy, &r);
	}
	return ut_file_size(path_copy);
}

/* ---- a log made by hand ---- */

/* Publish a watermark in dir, as the writer would. */
static inline void ut_set_wm(const char *dir, uint64_t durable_end, uint64_t segment_base,
                             uint64_t segment_bytes)
{
	char p[1200];
	unsigned char buf[WM_SIZE];
	struct watermark wm = { durable_end, segment_base, segment_bytes };
	elog__wm_encode(buf, &wm);
	ut_write_file(ut_path(p, sizeof p, dir, FN_WATERMARK), buf, WM_SIZE);
}

static inline struct watermark ut_get_wm(const char *dir)
{
	char p[1200];
	size_t len;
	struct watermark wm;
	unsigned char *buf = ut_read_file(ut_path(p, sizeof p, dir, FN_WATERMARK), &len);
	ck_assert_int_eq(elog__wm_decode(buf, len, &wm), 0);
	free(buf);
	return wm;
}

/* Create dir with a settings file (and no segment, no watermark). */
static inline void ut_make_settings(const char *dir, uint64_t segment_bytes, uint32_t interval)
{
	struct elog_settings s = { 0 };
	ck_assert_int_eq(mkdir(dir, 0777), 0);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(elog__settings_new_id(s.id), 0);
	s.created_ms = 1764385200000;
	s.segment_bytes = segment_bytes;
	s.index_interval = interval;
	ck_assert_int_eq(elog__settings_store(dfd, &s), 0);
	close(dfd);
}

/* Set the cleanup of the log dir to compact, so that elog_compact() runs
 * on it (a new log's cleanup is delete, which compaction refuses). */
static inline void ut_cleanup_compact(const char *dir)
{
	struct elog_settings o = { .cleanup = ELOG_CLEANUP_COMPACT };
	char msg[ELOG_MSG_MAX];
	int rc = elog_settings_update(dir, &o, ELOG_SET_CLEANUP, 0, msg);
	ck_assert_msg(rc == 0, "%s: cleanup compact: %d %s", dir, rc, msg);
}

/* ---- the writer and readers ---- */

static inline elog *ut_open_writer(const char *dir, uint64_t segment_bytes, uint32_t interval)
{
	struct elog_options o = { 0 };
	elog *w;
	o.create = 1;
	o.segment_bytes = segment_bytes;
	o.index_interval = interval;
	int rc = elog_open(&w, dir, &o);
	ck_assert_msg(rc == 0, "elog_open %s: %d %s", dir, rc, elog_errmsg(w));
	return w;
}

/* Append a string record (value "<prefix><offset-to-be>" is the caller's
 * business); returns its offset. */
static inline uint64_t ut_append(elog *w, const char *key, const char *value)
{
	struct elog_record r = ut_rec(0, ELOG_TS_NOW, 0, key, value);
	/* The offset it gets when no other writer writes first. */
	uint64_t off = elog_next_offset(w);
	int rc = elog_append(w, &r, NULL);
	ck_assert_msg(rc == 0, "elog_append: %d %s", rc, elog_errmsg(w));
	return off;
}

/* What a crash of the machine (or of a writer in the middle of a batch)
 * leaves in LOCK, as far as the next writer is concerned: a state it cannot
 * trust, so that it recovers the tail instead of reloading it. */
static inline void ut_crashed(const char *dir)
{
	char p[1200];
	snprintf(p, sizeof p, "%s/LOCK", dir);
	ck_assert_int_eq(truncate(p, 0), 0);
}

static inline elog_reader *ut_open_reader(const char *dir)
{
	elog_reader *r;
	int rc = elog_reader_open(&r, dir);
	ck_assert_msg(rc == 0, "elog_reader_open %s: %d %s", dir, rc, elog_reader_errmsg(r));
	return r;
}

/* Read on until ELOG_END, storing up to max offsets; returns how many
 * records were read.  Any other result fails the test. */
static inline size_t ut_read_offsets(elog_reader *r, uint64_t *offs, size_t max)
{
	struct elog_record rec;
	size_t n = 0;
	int rc;
	while ((rc = elog_reader_next(r, &rec)) == 0) {
		if (n < max)
			offs[n] = rec.offset;
		n++;
	}
	ck_assert_msg(rc == ELOG_END, "elog_reader_next: %d %s", rc, elog_reader_errmsg(r));
	return n;
}

static inline int64_t ut_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for a child and return its exit status (-1 when it did not exit). */
static inline int ut_wait_child(pid_t pid)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- crash sweeps ---- */

/* A crash sweep runs a maintenance call once for each of its steps,
 * crashed at that step (tests/crash/maint_fault.h), and checks what the
 * crash left.  The default build checks every step.  Under the sanitizers
 * each step is several times slower, and a whole sweep outgrew its test's
 * timeout on a loaded machine (test_retain's and test_compact's, 300 s,
 * in CI's sanitizer lane at cec9c37): there a sweep checks one step in
 * UT_SWEEP_EVERY, from a start drawn at random and printed, and always
 * the last (the run that does not crash).  UT_SWEEP_START=K in the
 * environment checks the steps of start K again. */
#define UT_SWEEP_EVERY 3

/* Whether a sweep whose run has last - 1 steps checks step n. */
static inline int ut_sweep_step(int n, int last)
{
#if defined(__SANITIZE_ADDRESS__)
	static int start = -1;
	if (start < 0) {
		const char *e = getenv("UT_SWEEP_START");
		start = e && *e ? atoi(e) % UT_SWEEP_EVERY
		                : (int)((unsigned)getpid() % UT_SWEEP_EVERY);
		fprintf(stderr,
		        "crash sweep of %d steps: one in %d, from step %d, "
		        "and the last (UT_SWEEP_START=%d)\n",
		        last - 1, UT_SWEEP_EVERY, start ? start : UT_SWEEP_EVERY, start);
	}
	return n >= last || n % UT_SWEEP_EVERY == start;
#else
	(void)n;
	(void)last;
	return 1;
#endif
}

/* ---- checks that say why ---- */

/* The message of a handle, for a failing check: h is an elog *, an
 * elog_reader *, a message buffer (char *) or NULL when the call has none. */
static inline const char *ut_msg_w(elog *w)
{
	return w ? elog_errmsg(w) : "";
}
static inline const char *ut_msg_r(const elog_reader *r)
{
	return r ? elog_reader_errmsg(r) : "";
}
static inline const char *ut_msg_s(const char *msg)
{
	return msg ? msg : "";
}
static inline const char *ut_msg_none(const void *p)
{
	(void)p;
	return "";
}
#define UT_MSG(h) \
	_Generic((h), \
	elog *: ut_msg_w, \
	elog_reader *: ut_msg_r, const elog_reader *: ut_msg_r, \
	char *: ut_msg_s, const char *: ut_msg_s, \
	void *: ut_msg_none)(h)

/* UT_RC(call, want, h): the call returns the code want, or the test fails
 * with the call as written, both codes with their elog_strerror() texts
 * and the handle's message:
 *   elog_append(w, &r, NULL) returned -4 (corrupt data), not 0 (success):
 *   00000000000000000000.seg: bad record at 4096
 * UT_OK(call, h) is UT_RC(call, 0, h).  h is evaluated after the call, so
 * that a handle the call makes (elog_open(&w, ...)) is the one read. */
#define UT_RC(call, want, h) \
	do { \
		int ut_rc_ = (call), ut_want_ = (want); \
		if (ut_rc_ != ut_want_) { \
			const char *ut_m_ = UT_MSG(h); \
			ck_abort_msg("%s returned %d (%s), not %d (%s)%s%s", #call, ut_rc_, \
			             elog_strerror(ut_rc_), ut_want_, elog_strerror(ut_want_), \
			             *ut_m_ ? ": " : "", ut_m_); \
		} \
	} while (0)
#define UT_OK(call, h) UT_RC(call, 0, h)

/* ---- tests that register themselves ---- */

/* UT_TEST(name) { ... } END_TEST defines a test as Check's START_TEST does
 * and registers it, before main() runs, for ut_add_tests(): a test cannot
 * be written and forgotten.  UT_LOOP_TEST(name, start, end) is a loop test
 * (tcase_add_loop_test), its index _i from start to end - 1.  The tests run
 * in the order of their lines. */
#define UT_MAX_TESTS 128
struct ut_test {
	const TTest *test;
	int start, end;
};
static struct ut_test ut_tests[UT_MAX_TESTS] __attribute__((unused));
static int ut_ntests __attribute__((unused));
static int ut_nadded __attribute__((unused));

static inline void ut_register(const TTest *t, int start, int end)
{
	if (ut_ntests == UT_MAX_TESTS) {
		fprintf(stderr, "%s: more than %d tests: raise UT_MAX_TESTS\n", t->file,
		        UT_MAX_TESTS);
		exit(EXIT_FAILURE);
	}
	ut_tests[ut_ntests++] = (struct ut_test){ t, start, end };
}

#define UT_LOOP_TEST(name, start, end) \
	static void name##_fn(int _i CK_ATTRIBUTE_UNUSED); \
	static const TTest name##_ttest = { #name, name##_fn, __FILE__, __LINE__ }; \
	__attribute__((constructor)) static void name##_register(void) \
	{ \
		ut_register(&name##_ttest, (start), (end)); \
	} \
	static void name##_fn(int _i CK_ATTRIBUTE_UNUSED)
#define UT_TEST(name) UT_LOOP_TEST(name, 0, 1)

static inline int ut_test_cmp(const void *a, const void *b)
{
	const struct ut_test *x = a, *y = b;
	return (x->test->line > y->test->line) - (x->test->line < y->test->line);
}

/* Add every registered test to tc. */
static inline void ut_add_tests(TCase *tc)
{
	qsort(ut_tests, (size_t)ut_ntests, sizeof ut_tests[0], ut_test_cmp);
	for (int i = 0; i < ut_ntests; i++)
		tcase_add_loop_test(tc, ut_tests[i].test, ut_tests[i].start, ut_tests[i].end);
	ut_nadded = ut_ntests;
}

/* ---- running a suite ---- */

static inline TCase *ut_tcase(const char *name)
{
	TCase *tc = tcase_create(name);
	tcase_add_checked_fixture(tc, ut_setup, ut_teardown);
	return tc;
}

/* Run the suite; EXIT_FAILURE when a test failed, or when tests were
 * registered with UT_TEST but main() never called ut_add_tests(). */
static inline int ut_run(Suite *s)
{
	if (ut_nadded != ut_ntests) {
		fprintf(stderr,
		        "%d tests written with UT_TEST were never added: "
		        "call ut_add_tests()\n",
		        ut_ntests - ut_nadded);
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
