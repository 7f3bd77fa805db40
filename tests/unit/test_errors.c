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
		ELOG_BEYOND,     ELOG_TOOMANY,     ELOG_TAKEN,
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
	ck_assert_str_eq(elog_strerror(FS_ENOTREG), "not a regular file");
	ck_assert_str_eq(elog_strerror(FS_ELINKED),
	                 "has more than one hard link, refusing to write it");
	ck_assert_str_eq(elog_strerror(-999), "unknown error");
	ck_assert_str_eq(elog_version(), ELOG_VERSION_STRING);
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
	TCase *tc = tcase_create("errors");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
