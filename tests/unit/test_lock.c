/*
 * test_lock.c: the lock files (lib/lock.c): the holder's pid in the file,
 * a second taker refused with a message naming it, the lock released with
 * its descriptor, and a symbolic link in place of the file refused.
 */
#include "unit.h"

static int open_top(void)
{
	int dfd = open(ut_top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	return dfd;
}

UT_TEST(lock_names_the_holder_and_releases_with_the_descriptor)
{
	int dfd = open_top();
	char msg[ELOG_MSG_MAX], p[1200];
	int fd, fd2;
	UT_OK(elog__lock_take(dfd, "L", 0, 1, &fd, msg), msg);
	size_t len;
	unsigned char *d = ut_read_file(ut_path(p, sizeof p, ut_top, "L"), &len);
	char want[64];
	snprintf(want, sizeof want, "%ld\n", (long)getpid());
	ck_assert_str_eq((char *)d, want);
	free(d);
	/* flock locks belong to the open file: a second open is refused. */
	UT_RC(elog__lock_take(dfd, "L", 0, 1, &fd2, msg), ELOG_LOCKED, msg);
	snprintf(want, sizeof want, "locked by another writer (pid %ld)", (long)getpid());
	ck_assert_str_eq(msg, want);
	close(fd);
	UT_OK(elog__lock_take(dfd, "L", 0, 0, &fd2, msg), msg);
	close(fd2);
	/* A lock file replaced by a symbolic link is refused. */
	ck_assert_int_eq(symlinkat("elsewhere", dfd, "S"), 0);
	UT_RC(elog__lock_take(dfd, "S", 0, 1, &fd, msg), ELOOP, msg);
	ck_assert_str_eq(msg, "S: refusing to follow a symbolic link");
	close(dfd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lock");
	TCase *tc = ut_tcase("lock");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
