/*
 * test_json.c: the JSON of the programs (bin/json.c): what elog-cat writes
 * (strings, base64) and what elog-append --json reads back (objects, values
 * compacted, strings decoded, base64), the refusals of each.  bin/json.c is
 * not in libelog.a: the Makefile links bin/json.o and bin/cli.o, through
 * whose standard output buffer the writers print, into this program.
 */
#include <sys/mman.h>

#include "unit.h"
#include "cli.h"

/* Standard output as a file, read back after the writers ran. */
static char *stdout_capture(void (*write_fn)(const void *, size_t), const void *buf, size_t len,
                            size_t *out_len)
{
	int saved = dup(STDOUT_FILENO), fd = memfd_create("out", 0);
	ck_assert(saved >= 0 && fd >= 0);
	ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
	write_fn(buf, len);
	cli_flush();
	off_t end = lseek(fd, 0, SEEK_CUR);
	char *text = malloc((size_t)end + 1);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(pread(fd, text, (size_t)end, 0), end);
	text[end] = '\0';
	ck_assert_int_ge(dup2(saved, STDOUT_FILENO), 0);
	close(saved);
	close(fd);
	*out_len = (size_t)end;
	return text;
}

/* cli_json_compact() of s: 0 with its compact form in out, or -1. */
static int compact(const char *s, char *out)
{
	const char *res;
	size_t n;
	char buf[256];
	int rc = cli_json_compact(s, strlen(s), buf, &res, &n);
	if (rc == 0) {
		memcpy(out, res, n);
		out[n] = '\0';
	}
	return rc;
}

UT_TEST(utf8_refuses_overlong_surrogates_and_beyond_unicode)
{
	ck_assert_int_eq(cli_utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14), 1);
	ck_assert_int_eq(cli_utf8_valid("", 0), 1);
	ck_assert_int_eq(cli_utf8_valid("\xc0\xaf", 2), 0);         /* overlong '/' */
	ck_assert_int_eq(cli_utf8_valid("\xe0\x80\xaf", 3), 0);     /* overlong */
	ck_assert_int_eq(cli_utf8_valid("\xed\xa0\x80", 3), 0);     /* U+D800 */
	ck_assert_int_eq(cli_utf8_valid("\xf4\x90\x80\x80", 4), 0); /* > U+10FFFF */
	ck_assert_int_eq(cli_utf8_valid("abcdefgh\xc3", 9), 0);     /* cut short */
	ck_assert_int_eq(cli_utf8_valid("\xff", 1), 0);
}
END_TEST

UT_TEST(compact_drops_white_space_only)
{
	char out[256];
	ck_assert_int_eq(compact(" { \"a\" : [ 1 , 2.5e-3 , true , null ] , \"b\" : \"x y\" } ", out),
	                 0);
	ck_assert_str_eq(out, "{\"a\":[1,2.5e-3,true,null],\"b\":\"x y\"}");
	ck_assert_int_eq(compact("-0", out), 0);
	ck_assert_str_eq(out, "-0");
	ck_assert_int_eq(compact("\"\\u00e9\\ud83d\\ude00\"", out), 0);
	ck_assert_str_eq(out, "\"\\u00e9\\ud83d\\ude00\"");
}
END_TEST

UT_TEST(compact_refuses_what_is_not_one_json_value)
{
	static const char *const bad[] = {
		"",         "{",        "[1,]",      "{\"a\":1,}", "01",        "1.",
		"1e",       "+1",       ".5",        "tru",        "nul",       "\"abc",
		"\"\\x\"",  "\"\\u12\"", "\"\t\"",   "1 2",        "{\"a\" 1}", "{1:2}",
		"\"\\ud83d\"", /* a high surrogate alone */
		"\"\\ude00\"", /* a low surrogate alone */
		"\"\xff\"",    /* not UTF-8 */
	};
	char out[256];
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(compact(bad[i], out) == -1, "accepted: %s", bad[i]);
}
END_TEST

UT_TEST(compact_bounds_the_nesting)
{
	char deep[2 * CLI_JSON_MAX_DEPTH + 8], out[2 * CLI_JSON_MAX_DEPTH + 8];
	const char *res;
	size_t n;
	for (size_t d = CLI_JSON_MAX_DEPTH; d <= CLI_JSON_MAX_DEPTH + 1; d++) {
		memset(deep, '[', d);
		memset(deep + d, ']', d);
		int rc = cli_json_compact(deep, 2 * d, out, &res, &n);
		ck_assert_int_eq(rc, d <= CLI_JSON_MAX_DEPTH ? 0 : -1);
	}
}
END_TEST

UT_TEST(object_gives_each_member_as_it_lies)
{
	const char *s = " {\"offset\" : 7 , \"value\":{\"a\": 1}, \"key\":null}\n";
	struct cli_jmember m[4];
	size_t n;
	ck_assert_int_eq(cli_json_object(s, strlen(s), m, 4, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert(cli_json_name_is(&m[0], "offset"));
	ck_assert(!cli_json_name_is(&m[0], "offse"));
	ck_assert_uint_eq(m[0].len, 1);
	ck_assert(memcmp(m[0].value, "7", 1) == 0);
	ck_assert(cli_json_name_is(&m[1], "value"));
	ck_assert_uint_eq(m[1].len, 8);
	ck_assert(memcmp(m[1].value, "{\"a\": 1}", 8) == 0);
	ck_assert(cli_json_name_is(&m[2], "key"));
	ck_assert(memcmp(m[2].value, "null", 4) == 0);
	ck_assert_int_eq(cli_json_object("{}", 2, m, 4, &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

UT_TEST(object_refuses_other_values_and_too_many_members)
{
	static const char *const bad[] = { "[1]", "\"x\"", "{\"a\":1", "{\"a\":1} x", "{\"a\"}",
		                           "{a:1}", "" };
	struct cli_jmember m[2];
	size_t n;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(cli_json_object(bad[i], strlen(bad[i]), m, 2, &n) == -1,
		              "accepted: %s", bad[i]);
	const char *three = "{\"a\":1,\"b\":2,\"c\":3}";
	ck_assert_int_eq(cli_json_object(three, strlen(three), m, 2, &n), -2);
}
END_TEST

UT_TEST(string_decode_gives_the_bytes)
{
	const char *s = "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\u0000\"";
	char out[64];
	size_t n = cli_json_string_decode(s, strlen(s), out);
	static const char want[] = "a\"b\\c/d\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80";
	ck_assert_uint_eq(n, sizeof want);
	ck_assert(memcmp(out, want, sizeof want) == 0); /* the NUL of \u0000 too */
}
END_TEST

UT_TEST(string_writer_reads_back)
{
	static const char bytes[] = "ctl \x01\x1f quote \" back \\ tab \t caf\xc3\xa9";
	size_t len, n;
	char *text = stdout_capture(cli_json_string, bytes, sizeof bytes - 1, &len);
	ck_assert_str_eq(text, "\"ctl \\u0001\\u001f quote \\\" back \\\\ tab \\t caf\xc3\xa9\"");
	char *back = malloc(len);
	n = cli_json_string_decode(text, len, back);
	ck_assert_uint_eq(n, sizeof bytes - 1);
	ck_assert(memcmp(back, bytes, n) == 0);
	free(back);
	free(text);
}
END_TEST

UT_TEST(base64_reads_back_and_refuses_non_canonical_text)
{
	static const unsigned char bytes[] = { 0xde, 0xad, 0xbe, 0xef, 0x00 };
	unsigned char out[16];
	size_t len, n;
	for (size_t k = 0; k <= sizeof bytes; k++) {
		char *text = stdout_capture(cli_base64, bytes, k, &len);
		ck_assert_uint_eq(len, (k + 2) / 3 * 4);
		ck_assert_int_eq(cli_base64_decode(text, len, out, &n), 0);
		ck_assert_uint_eq(n, k);
		ck_assert(memcmp(out, bytes, k) == 0);
		free(text);
	}
	static const char *const bad[] = { "3q2",  "3q2+7w=",  "3q=+", "=q2+", "3q2+7w=x",
		                           "3q2-", "3q2+7x==", "3q\n+" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(cli_base64_decode(bad[i], strlen(bad[i]), out, &n) == -1,
		              "accepted: %s", bad[i]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("json");
	TCase *tc = ut_tcase("json");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
