/*
 * test_fsutil.c: the durability helpers (lib/fsutil.c).  The locks are
 * tested in test_lock.c, the error texts in test_errors.c.
 */
#include <dirent.h>

#include "unit.h"

static int open_top(void)
{
	int dfd = open(ut_top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	return dfd;
}

START_TEST(replace_file_writes_whole_content_and_leaves_no_temporary)
{
	int dfd = open_top();
	char p[1200];
	ck_assert_int_eq(elog__fs_replace_file(dfd, "f", "first", 5), 0);
	ck_assert_int_eq(elog__fs_replace_file(dfd, "f", "second!", 7), 0);
	size_t len;
	unsigned char *d = ut_read_file(ut_path(p, sizeof p, ut_top, "f"), &len);
	ck_assert_uint_eq(len, 7);
	ck_assert_mem_eq(d, "second!", 7);
	free(d);
	/* Only the file itself is there: no "f.tmp.<pid>.<n>" left. */
	DIR *dir = opendir(ut_top);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	ck_assert_int_eq(n, 1);
	close(dfd);
}
END_TEST

START_TEST(replace_file_respects_the_umask)
{
	int dfd = open_top();
	char p[1200];
	mode_t old = umask(027);
	ck_assert_int_eq(elog__fs_replace_file(dfd, "g", "x", 1), 0);
	umask(old);
	struct stat st;
	ck_assert_int_eq(stat(ut_path(p, sizeof p, ut_top, "g"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0640);
	close(dfd);
}
END_TEST

START_TEST(read_small_bounds_and_refuses_links)
{
	int dfd = open_top();
	char p[1200], *data;
	size_t len;
	ut_write_file(ut_path(p, sizeof p, ut_top, "small"), "abc", 3);
	ck_assert_int_eq(elog__fs_read_small(dfd, "small", 3, &data, &len), 0);
	ck_assert_uint_eq(len, 3);
	ck_assert_str_eq(data, "abc");	/* NUL-terminated */
	free(data);
	ck_assert_int_eq(elog__fs_read_small(dfd, "small", 2, &data, &len), EFBIG);
	ck_assert_int_eq(symlinkat("small", dfd, "link"), 0);
	ck_assert_int_eq(elog__fs_read_small(dfd, "link", 100, &data, &len), ELOOP);
	ck_assert_int_eq(elog__fs_read_small(dfd, "missing", 100, &data, &len), ENOENT);
	ck_assert_int_eq(mkdirat(dfd, "dir", 0777), 0);
	ck_assert_int_eq(elog__fs_read_small(dfd, "dir", 100, &data, &len), FS_ENOTREG);
	close(dfd);
}
END_TEST

struct names {
	int n, dots;
};

static int count_name(const char *name, void *arg)
{
	struct names *c = arg;
	c->n++;
	c->dots += name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
	return 0;
}

static int stop_at_b(const char *name, void *arg)
{
	(void)arg;
	return strcmp(name, "b") == 0 ? 42 : 0;
}

START_TEST(dir_each_visits_every_entry_but_dots_and_stops_on_request)
{
	int dfd = open_top();
	char p[1200];
	ut_write_file(ut_path(p, sizeof p, ut_top, "a"), "", 0);
	ut_write_file(ut_path(p, sizeof p, ut_top, "b"), "", 0);
	ut_write_file(ut_path(p, sizeof p, ut_top, "c"), "", 0);
	struct names c = { 0, 0 };
	ck_assert_int_eq(elog__fs_dir_each(dfd, count_name, &c), 0);
	ck_assert_int_eq(c.n, 3);
	ck_assert_int_eq(c.dots, 0);
	/* Twice on the same descriptor: each walk starts at the top. */
	c.n = 0;
	ck_assert_int_eq(elog__fs_dir_each(dfd, count_name, &c), 0);
	ck_assert_int_eq(c.n, 3);
	ck_assert_int_eq(elog__fs_dir_each(dfd, stop_at_b, NULL), 42);
	close(dfd);
}
END_TEST

START_TEST(random_bytes_differ)
{
	unsigned char a[16], b[16];
	ck_assert_int_eq(elog__fs_random(a, sizeof a), 0);
	ck_assert_int_eq(elog__fs_random(b, sizeof b), 0);
	ck_assert(memcmp(a, b, sizeof a) != 0);
}
END_TEST

START_TEST(write_all_and_pread_full)
{
	char p[1200];
	int fd = open(ut_path(p, sizeof p, ut_top, "w"), O_RDWR | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elog__fs_write_all(fd, "hello", 5), 0);
	ck_assert_int_eq(elog__fs_pwrite_all(fd, "J", 1, 0), 0);
	char buf[16];
	size_t got;
	ck_assert_int_eq(elog__fs_pread_full(fd, buf, sizeof buf, 0, &got), 0);
	ck_assert_uint_eq(got, 5);	/* short at the end of the file */
	ck_assert_mem_eq(buf, "Jello", 5);
	close(fd);
	ck_assert_int_eq(elog__fs_write_all(fd, "x", 1), EBADF);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fsutil");
	TCase *tc = ut_tcase("fsutil");
	tcase_add_test(tc, replace_file_writes_whole_content_and_leaves_no_temporary);
	tcase_add_test(tc, replace_file_respects_the_umask);
	tcase_add_test(tc, read_small_bounds_and_refuses_links);
	tcase_add_test(tc, dir_each_visits_every_entry_but_dots_and_stops_on_request);
	tcase_add_test(tc, random_bytes_differ);
	tcase_add_test(tc, write_all_and_pread_full);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
