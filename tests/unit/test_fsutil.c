/*
 * test_fsutil.c: the durability helpers (lib/fsutil.c).  The locks are
 * tested in test_lock.c, the error texts in test_errors.c.
 */
#include <dirent.h>
#include <sys/file.h>

#include "unit.h"

static int open_top(void)
{
	int dfd = open(ut_top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	return dfd;
}

UT_TEST(replace_file_writes_whole_content_and_leaves_no_temporary)
{
	int dfd = open_top();
	char p[1200];
	UT_OK(elog__fs_replace_file(dfd, "f", "first", 5), NULL);
	UT_OK(elog__fs_replace_file(dfd, "f", "second!", 7), NULL);
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

UT_TEST(replace_file_respects_the_umask)
{
	int dfd = open_top();
	char p[1200];
	mode_t old = umask(027);
	UT_OK(elog__fs_replace_file(dfd, "g", "x", 1), NULL);
	umask(old);
	struct stat st;
	ck_assert_int_eq(stat(ut_path(p, sizeof p, ut_top, "g"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0640);
	close(dfd);
}
END_TEST

UT_TEST(read_small_bounds_and_refuses_links)
{
	int dfd = open_top();
	char p[1200], *data;
	size_t len;
	ut_write_file(ut_path(p, sizeof p, ut_top, "small"), "abc", 3);
	UT_OK(elog__fs_read_small(dfd, "small", 3, &data, &len), NULL);
	ck_assert_uint_eq(len, 3);
	ck_assert_str_eq(data, "abc"); /* NUL-terminated */
	free(data);
	UT_RC(elog__fs_read_small(dfd, "small", 2, &data, &len), EFBIG, NULL);
	ck_assert_int_eq(symlinkat("small", dfd, "link"), 0);
	UT_RC(elog__fs_read_small(dfd, "link", 100, &data, &len), ELOOP, NULL);
	UT_RC(elog__fs_read_small(dfd, "missing", 100, &data, &len), ENOENT, NULL);
	ck_assert_int_eq(mkdirat(dfd, "dir", 0777), 0);
	UT_RC(elog__fs_read_small(dfd, "dir", 100, &data, &len), ELOG_NOTREG, NULL);
	close(dfd);
}
END_TEST

/* Move name's last change by `minutes` (negative: into the past). */
static void shift_mtime(int dfd, const char *name, int minutes)
{
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec += minutes * 60;
	t[1] = t[0];
	ck_assert_int_eq(utimensat(dfd, name, t, AT_SYMLINK_NOFOLLOW), 0);
}

static void put(int dfd, const char *name, const char *text)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	ck_assert_msg(fd >= 0, "%s: %s", name, strerror(errno));
	UT_OK(elog__fs_write_all(fd, text, strlen(text)), NULL);
	ck_assert_int_eq(close(fd), 0);
}

static int exists_at(int dfd, const char *name)
{
	struct stat st;
	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* What elog__file_tmp_drop() did with name: 1 removed, 0 kept. */
static int drop(int dfd, const char *name)
{
	int dropped = -1;
	UT_OK(elog__file_tmp_drop(dfd, name, &dropped), NULL);
	ck_assert_int_eq(dropped, !exists_at(dfd, name));
	return dropped;
}

/* The creator's lock keeps its file, whatever its age and whatever its
 * pid says: a process in another pid namespace is invisible to kill(2). */
UT_TEST(tmp_file_is_kept_while_its_creator_holds_it)
{
	int dfd = open_top();
	char tmp[128];
	int fd = elog__fs_tmp_create(dfd, "consumers.json", tmp, sizeof tmp);
	ck_assert_msg(fd >= 0, "%s", strerror(errno));
	char want[64];
	snprintf(want, sizeof want, "consumers.json.tmp.%ld.0", (long)getpid());
	ck_assert_str_eq(tmp, want);
	UT_OK(elog__fs_write_all(fd, "{}", 2), NULL);
	shift_mtime(dfd, tmp, -60);
	/* Even in the process that holds it: flock belongs to the open file
	 * description, and the cleaner opens its own. */
	ck_assert_int_eq(drop(dfd, tmp), 0);
	close(fd);
	ck_assert_int_eq(drop(dfd, tmp), 1);
	close(dfd);
}
END_TEST

UT_TEST(tmp_file_held_by_another_process_is_kept)
{
	int dfd = open_top();
	int ready[2], done[2];
	char c;
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(done), 0);
	put(dfd, "held.tmp.1.0", "x");
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		int fd = openat(dfd, "held.tmp.1.0", O_RDONLY);
		if (fd < 0 || flock(fd, LOCK_EX) < 0 || write(ready[1], "r", 1) != 1)
			_exit(1);
		_exit(read(done[0], &c, 1) == 1 ? 0 : 1);
	}
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	shift_mtime(dfd, "held.tmp.1.0", -60);
	ck_assert_int_eq(drop(dfd, "held.tmp.1.0"), 0);
	ck_assert_int_eq(write(done[1], "d", 1), 1);
	ck_assert_int_eq(ut_wait_child(child), 0);
	ck_assert_int_eq(drop(dfd, "held.tmp.1.0"), 1);
	close(dfd);
}
END_TEST

/* An unlocked temporary file may be a writer's of an elog that did not lock
 * them: it goes only once it has not changed for ten minutes, either way
 * from the clock. */
UT_TEST(unlocked_tmp_file_goes_only_when_minutes_old)
{
	int dfd = open_top();
	put(dfd, "settings.tmp.4242.0", "x");
	ck_assert_int_eq(drop(dfd, "settings.tmp.4242.0"), 0);
	shift_mtime(dfd, "settings.tmp.4242.0", -9);
	ck_assert_int_eq(drop(dfd, "settings.tmp.4242.0"), 0);
	shift_mtime(dfd, "settings.tmp.4242.0", -11);
	ck_assert_int_eq(drop(dfd, "settings.tmp.4242.0"), 1);
	put(dfd, "settings.tmp.4242.1", "x");
	shift_mtime(dfd, "settings.tmp.4242.1", 11);
	ck_assert_int_eq(drop(dfd, "settings.tmp.4242.1"), 1);
	close(dfd);
}
END_TEST

UT_TEST(drop_leaves_what_is_not_a_temporary_file)
{
	int dfd = open_top();
	const char *names[] = { "settings", "x.tmp.1.2.3", ".tmp.1.2", "settings.tmp.12a.0",
		                "settings.tmp.12" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		put(dfd, names[i], "x");
		shift_mtime(dfd, names[i], -60);
		ck_assert_msg(drop(dfd, names[i]) == 0, "%s", names[i]);
	}
	/* A link, a FIFO, a directory under a temporary name: nothing elog
	 * made; a FIFO is not even opened for long. */
	ck_assert_int_eq(symlinkat("settings", dfd, "a.tmp.1.0"), 0);
	ck_assert_int_eq(mkfifoat(dfd, "b.tmp.1.0", 0666), 0);
	ck_assert_int_eq(mkdirat(dfd, "c.tmp.1.0", 0777), 0);
	const char *odd[] = { "a.tmp.1.0", "b.tmp.1.0", "c.tmp.1.0" };
	for (size_t i = 0; i < 3; i++) {
		shift_mtime(dfd, odd[i], -60);
		ck_assert_msg(drop(dfd, odd[i]) == 0, "%s", odd[i]);
	}
	int dropped = -1;
	UT_OK(elog__file_tmp_drop(dfd, "missing.tmp.1.0", &dropped), NULL);
	ck_assert_int_eq(dropped, 0);
	close(dfd);
}
END_TEST

/* The first name is taken (a file of another process that has our pid in
 * its own namespace): the next one is used, and the other is left alone. */
UT_TEST(tmp_create_takes_the_next_name_when_one_is_taken)
{
	int dfd = open_top();
	char taken[64], tmp[128];
	snprintf(taken, sizeof taken, "f.tmp.%ld.0", (long)getpid());
	put(dfd, taken, "theirs");
	int fd = elog__fs_tmp_create(dfd, "f", tmp, sizeof tmp);
	ck_assert_int_ge(fd, 0);
	ck_assert_str_ne(tmp, taken);
	ck_assert(exists_at(dfd, taken));
	close(fd);
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

UT_TEST(dir_each_visits_every_entry_but_dots_and_stops_on_request)
{
	int dfd = open_top();
	char p[1200];
	ut_write_file(ut_path(p, sizeof p, ut_top, "a"), "", 0);
	ut_write_file(ut_path(p, sizeof p, ut_top, "b"), "", 0);
	ut_write_file(ut_path(p, sizeof p, ut_top, "c"), "", 0);
	struct names c = { 0, 0 };
	UT_OK(elog__fs_dir_each(dfd, count_name, &c), NULL);
	ck_assert_int_eq(c.n, 3);
	ck_assert_int_eq(c.dots, 0);
	/* Twice on the same descriptor: each walk starts at the top. */
	c.n = 0;
	UT_OK(elog__fs_dir_each(dfd, count_name, &c), NULL);
	ck_assert_int_eq(c.n, 3);
	ck_assert_int_eq(elog__fs_dir_each(dfd, stop_at_b, NULL), 42);
	close(dfd);
}
END_TEST

UT_TEST(random_bytes_differ)
{
	unsigned char a[16], b[16];
	UT_OK(elog__fs_random(a, sizeof a), NULL);
	UT_OK(elog__fs_random(b, sizeof b), NULL);
	ck_assert(memcmp(a, b, sizeof a) != 0);
}
END_TEST

UT_TEST(write_all_and_pread_full)
{
	char p[1200];
	int fd = open(ut_path(p, sizeof p, ut_top, "w"), O_RDWR | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	UT_OK(elog__fs_write_all(fd, "hello", 5), NULL);
	UT_OK(elog__fs_pwrite_all(fd, "J", 1, 0), NULL);
	char buf[16];
	size_t got;
	UT_OK(elog__fs_pread_full(fd, buf, sizeof buf, 0, &got), NULL);
	ck_assert_uint_eq(got, 5); /* short at the end of the file */
	ck_assert_mem_eq(buf, "Jello", 5);
	close(fd);
	UT_RC(elog__fs_write_all(fd, "x", 1), EBADF, NULL);
}
END_TEST

/* O_TRUNC is carried out only on a file that may be written: a hard link
 * to a file elsewhere is refused with its bytes intact, and a file of the
 * log is emptied as open(2) would empty it. */
UT_TEST(openat_truncates_only_what_it_may_write)
{
	int dfd = open_top();
	char target[1200], p[1200];
	ut_write_file(ut_path(target, sizeof target, ut_top, "target"), "precious\n", 9);
	ck_assert_int_eq(link(target, ut_path(p, sizeof p, ut_top, "linked")), 0);
	errno = 0;
	ck_assert_int_eq(elog__fs_openat(dfd, "linked", O_RDWR | O_CREAT | O_TRUNC, 0666), -1);
	ck_assert_int_eq(errno, ELOG_LINKED);
	size_t len;
	unsigned char *d = ut_read_file(target, &len);
	ck_assert_uint_eq(len, 9);
	ck_assert_mem_eq(d, "precious\n", 9);
	free(d);
	ut_write_file(ut_path(p, sizeof p, ut_top, "mine"), "old bytes", 9);
	struct stat st;
	int fd = elog__fs_openat_stat(dfd, "mine", O_RDWR | O_CREAT | O_TRUNC, 0666, &st);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(st.st_size, 0);
	struct stat now;
	ck_assert_int_eq(fstat(fd, &now), 0);
	ck_assert_int_eq(now.st_size, 0);
	close(fd);
	close(dfd);
}
END_TEST

/* The status given with the descriptor is the file's, and the descriptor
 * reads and writes as a blocking one would: O_NONBLOCK, which the open
 * leaves set, changes nothing on a regular file. */
UT_TEST(openat_stat_describes_the_file_opened)
{
	int dfd = open_top();
	char p[1200];
	ut_write_file(ut_path(p, sizeof p, ut_top, "f"), "abc", 3);
	struct stat st, now;
	int fd = elog__fs_openat_stat(dfd, "f", O_RDWR | O_APPEND, 0, &st);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &now), 0);
	ck_assert(st.st_dev == now.st_dev && st.st_ino == now.st_ino);
	ck_assert_int_eq(st.st_size, 3);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	UT_OK(elog__fs_write_all(fd, "def", 3), NULL);
	char buf[8];
	size_t got;
	UT_OK(elog__fs_pread_full(fd, buf, sizeof buf, 0, &got), NULL);
	ck_assert_uint_eq(got, 6);
	ck_assert_mem_eq(buf, "abcdef", 6);
	close(fd);
	/* A new file, made by this call: its status too. */
	fd = elog__fs_openat_stat(dfd, "new", O_RDWR | O_CREAT, 0666, &st);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert(S_ISREG(st.st_mode));
	close(fd);
	close(dfd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fsutil");
	TCase *tc = ut_tcase("fsutil");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
