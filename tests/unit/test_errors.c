/*
 * test_errors.c: the error contract (lib/errors.c): a text of its own for
 * every code, and elog__errmsg_set returning its code with the text bounded.
 */
#include "unit.h"

UT_TEST(every_code_has_its_own_text)
{
	static const int codes[] = {
		ELOG_END,        ELOG_GAP,         ELOG_LOCKED,    ELOG_CORRUPT, ELOG_NOTLOG,
		ELOG_BADVERSION, ELOG_TOOBIG,      ELOG_FAILED,    ELOG_NETFS,   ELOG_INVALID,
		ELOG_TIMEOUT,    ELOG_UNSUPPORTED, ELOG_NOCOMPACT, ELOG_BADNAME, ELOG_NOCONSUMER,
		ELOG_BEYOND,     ELOG_TOOMANY,     ELOG_TAKEN,     ELOG_NOTREG,  ELOG_LINKED,
		ELOG_SETTING,
	};
	size_t n = sizeof codes / sizeof codes[0];
	for (size_t i = 0; i < n; i++) {
		const char *t = elog_strerror(codes[i]);
		ck_assert_str_ne(t, "unknown error");
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(t, elog_strerror(codes[j]));
	}
	ck_assert_str_eq(elog_strerror(0), "success");
	ck_assert_str_eq(elog_strerror(ENOSPC), strerror(ENOSPC));
	/* The refusals of elog__fs_openat(), by the same function. */
	ck_assert_str_eq(elog_strerror(ELOG_NOTREG), "not a regular file");
	ck_assert_str_eq(elog_strerror(ELOG_LINKED),
	                 "has more than one hard link, refusing to write it");
	ck_assert_str_eq(elog_strerror(-999), "unknown error");
	ck_assert_str_eq(elog_version(), ELOG_VERSION_STRING);
}
END_TEST

/* A code of the library's own is negative, so it is no errno value, and
 * never -1, so that "rc == -1" (the system call convention) matches none:
 * ELOG_END was -1 until 0.2.0.  The refusals of elog__fs_openat() are the
 * library's own too: they were EMEDIUMTYPE and EMLINK, which a caller
 * could not tell from the errno values of a system call. */
UT_TEST(own_codes_are_negative_and_never_minus_one)
{
	static const int codes[] = {
		ELOG_END,        ELOG_GAP,         ELOG_LOCKED,    ELOG_CORRUPT, ELOG_NOTLOG,
		ELOG_BADVERSION, ELOG_TOOBIG,      ELOG_FAILED,    ELOG_NETFS,   ELOG_INVALID,
		ELOG_TIMEOUT,    ELOG_UNSUPPORTED, ELOG_NOCOMPACT, ELOG_BADNAME, ELOG_NOCONSUMER,
		ELOG_BEYOND,     ELOG_TOOMANY,     ELOG_TAKEN,     ELOG_NOTREG,  ELOG_LINKED,
		ELOG_SETTING,
	};
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
		ck_assert_int_lt(codes[i], -1);
		for (size_t j = 0; j < i; j++)
			ck_assert_int_ne(codes[i], codes[j]);
	}
}
END_TEST

/* elog__fs_openat() refuses a directory in place of a file with
 * ELOG_NOTREG, and a file to write with a second hard link with
 * ELOG_LINKED, through errno as any errno value. */
UT_TEST(openat_refusals_are_elog_codes)
{
	int dfd = open(ut_top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(mkdirat(dfd, "d", 0700), 0);
	errno = 0;
	ck_assert_int_eq(elog__fs_openat(dfd, "d", O_RDONLY, 0), -1);
	ck_assert_str_eq(elog_strerror(errno), elog_strerror(ELOG_NOTREG));
	ck_assert_int_eq(errno, ELOG_NOTREG);
	int fd = elog__fs_openat(dfd, "f", O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(linkat(dfd, "f", dfd, "g", 0), 0);
	errno = 0;
	ck_assert_int_eq(elog__fs_openat(dfd, "f", O_WRONLY, 0), -1);
	ck_assert_int_eq(errno, ELOG_LINKED);
	fd = elog__fs_openat(dfd, "f", O_RDONLY, 0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	close(dfd);
}
END_TEST

UT_TEST(errmsg_set_returns_the_code_and_bounds_the_text)
{
	char msg[ELOG_MSG_MAX];
	char long_name[2 * ELOG_MSG_MAX];
	memset(long_name, 'x', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	UT_RC(elog__errmsg_set(msg, ELOG_CORRUPT, "%s: bad", long_name), ELOG_CORRUPT, msg);
	ck_assert_uint_eq(strlen(msg), ELOG_MSG_MAX - 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = ut_tcase("errors");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
