/*
 * test_consumers.c: committed offsets (lib/consumers.c, lib/consumers_json.c).
 *
 * Most tests make a log directory by hand (settings file and watermark) so
 * that they exercise the consumer code alone and can set the durable end to
 * anything; the reader test goes through the writer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "internal.h"
#include "consumers_json.h"

/* Each test's log is ut_dir, in the scratch directory of unit.h. */

/* A log directory with settings and a watermark saying durable_end. */
static void make_log(const char *path, uint64_t end)
{
	struct elog_settings s = { 0 };
	struct watermark wm = { end, 0, 0 };
	int dfd, fd;

	ck_assert_int_eq(mkdir(path, 0777), 0);
	dfd = open(path, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	UT_OK(elog__settings_new_id(s.id), NULL);
	s.created_ms = elog__fs_now_ms();
	s.segment_bytes = DEFAULT_SEGMENT_BYTES;
	s.index_interval = DEFAULT_INDEX_INTERVAL;
	UT_OK(elog__settings_store(dfd, &s), NULL);
	fd = elog__fs_openat(dfd, FN_WATERMARK, O_RDWR | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	UT_OK(elog__wm_write(fd, &wm), NULL);
	close(fd);
	close(dfd);
}

static void set_end(const char *path, uint64_t end)
{
	struct watermark wm = { end, 0, 0 };
	char p[4200];
	int fd;

	snprintf(p, sizeof p, "%s/%s", path, FN_WATERMARK);
	fd = open(p, O_RDWR);
	ck_assert_int_ge(fd, 0);
	UT_OK(elog__wm_write(fd, &wm), NULL);
	close(fd);
}

static void write_file(const char *path, const char *name, const void *data, size_t len)
{
	char p[1300];

	ut_write_file(ut_path(p, sizeof p, path, name), data, len);
}

/* The whole file, NUL-terminated, in a malloc'ed buffer. */
static char *read_file(const char *path, const char *name)
{
	char p[1300];

	return (char *)ut_read_file(ut_path(p, sizeof p, path, name), NULL);
}

static int exists(const char *name)
{
	char p[1300];

	return ut_exists(ut_path(p, sizeof p, ut_dir, name));
}

UT_TEST(name_alphabet)
{
	char longest[ELOG_CONSUMER_NAME_MAX + 2];

	UT_OK(elog_consumer_name_check("uplink"), NULL);
	UT_OK(elog_consumer_name_check("a"), NULL);
	UT_OK(elog_consumer_name_check("Az09._-"), NULL);
	UT_OK(elog_consumer_name_check("0"), NULL);
	UT_OK(elog_consumer_name_check("a.."), NULL);
	memset(longest, 'x', ELOG_CONSUMER_NAME_MAX);
	longest[ELOG_CONSUMER_NAME_MAX] = 0;
	UT_OK(elog_consumer_name_check(longest), NULL);
	longest[ELOG_CONSUMER_NAME_MAX] = 'x';
	longest[ELOG_CONSUMER_NAME_MAX + 1] = 0;
	UT_RC(elog_consumer_name_check(longest), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check(NULL), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check(""), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check("."), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check(".."), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check(".hidden"), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check("-l"), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check("a b"), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check("a/b"), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check("a\"b"), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check("a\\b"), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check("caf\xc3\xa9"), ELOG_BADNAME, NULL);
	UT_RC(elog_consumer_name_check("a\n"), ELOG_BADNAME, NULL);
}
END_TEST

UT_TEST(bad_name_is_refused_everywhere)
{
	char msg[ELOG_MSG_MAX];
	struct elog_consumer c;

	make_log(ut_dir, 10);
	UT_RC(elog_consumer_commit(ut_dir, "a b", 1, msg), ELOG_BADNAME, msg);
	ck_assert_ptr_nonnull(strstr(msg, "consumer name \"a b\""));
	UT_RC(elog_consumer_get(ut_dir, "", &c, msg), ELOG_BADNAME, msg);
	UT_RC(elog_consumer_delete(ut_dir, "-x", msg), ELOG_BADNAME, msg);
	UT_RC(elog_consumer_commit(ut_dir, NULL, 1, NULL), ELOG_BADNAME, NULL);
	/* Nothing was written for a refused name. */
	ck_assert(!exists(FN_CONSUMERS));
}
END_TEST

UT_TEST(commit_get_and_lag)
{
	char msg[ELOG_MSG_MAX];
	struct elog_consumer c;
	int64_t before = elog__fs_now_ms();

	make_log(ut_dir, 100);
	UT_RC(elog_consumer_get(ut_dir, "uplink", &c, msg), ELOG_NOCONSUMER, msg);
	ck_assert_str_eq(msg, "no consumer \"uplink\"");
	UT_OK(elog_consumer_commit(ut_dir, "uplink", 41, msg), msg);
	UT_OK(elog_consumer_get(ut_dir, "uplink", &c, msg), msg);
	ck_assert_str_eq(c.name, "uplink");
	ck_assert_uint_eq(c.offset, 41);
	ck_assert_uint_eq(c.lag, 58); /* 42..99 are behind it */
	ck_assert_int_ge(c.committed_ms, before);
	ck_assert_int_le(c.committed_ms, elog__fs_now_ms());
	UT_OK(elog_consumer_commit(ut_dir, "uplink", 99, msg), msg);
	UT_OK(elog_consumer_get(ut_dir, "uplink", &c, NULL), NULL);
	ck_assert_uint_eq(c.offset, 99);
	ck_assert_uint_eq(c.lag, 0);
}
END_TEST

UT_TEST(commit_above_durable_end_is_refused)
{
	char msg[ELOG_MSG_MAX];
	struct elog_consumer c;

	make_log(ut_dir, 100);
	UT_RC(elog_consumer_commit(ut_dir, "a", 100, msg), ELOG_BEYOND, msg);
	ck_assert_str_eq(msg, "offset 100 is at or above the durable end 100 of the log");
	UT_RC(elog_consumer_commit(ut_dir, "a", UINT64_MAX, msg), ELOG_BEYOND, msg);
	UT_RC(elog_consumer_get(ut_dir, "a", &c, msg), ELOG_NOCONSUMER, msg);
	/* The refusal left an existing commit alone. */
	UT_OK(elog_consumer_commit(ut_dir, "a", 50, msg), msg);
	UT_RC(elog_consumer_commit(ut_dir, "a", 101, msg), ELOG_BEYOND, msg);
	UT_OK(elog_consumer_get(ut_dir, "a", &c, msg), msg);
	ck_assert_uint_eq(c.offset, 50);
	/* Once the durable end moves, the offset is accepted. */
	set_end(ut_dir, 102);
	UT_OK(elog_consumer_commit(ut_dir, "a", 101, msg), msg);
}
END_TEST

UT_TEST(empty_log_accepts_no_commit)
{
	char msg[ELOG_MSG_MAX];
	char p[4200];

	make_log(ut_dir, 0);
	UT_RC(elog_consumer_commit(ut_dir, "a", 0, msg), ELOG_BEYOND, msg);
	/* A log whose writer never published a watermark has nothing durable. */
	snprintf(p, sizeof p, "%s/%s", ut_dir, FN_WATERMARK);
	ck_assert_int_eq(unlink(p), 0);
	UT_RC(elog_consumer_commit(ut_dir, "a", 0, msg), ELOG_BEYOND, msg);
}
END_TEST

UT_TEST(moving_backwards_is_allowed)
{
	struct elog_consumer c;

	make_log(ut_dir, 1000);
	UT_OK(elog_consumer_commit(ut_dir, "replay", 900, NULL), NULL);
	UT_OK(elog_consumer_commit(ut_dir, "replay", 3, NULL), NULL);
	UT_OK(elog_consumer_get(ut_dir, "replay", &c, NULL), NULL);
	ck_assert_uint_eq(c.offset, 3);
	UT_OK(elog_consumer_commit(ut_dir, "replay", 0, NULL), NULL);
	UT_OK(elog_consumer_get(ut_dir, "replay", &c, NULL), NULL);
	ck_assert_uint_eq(c.offset, 0);
	ck_assert_uint_eq(c.lag, 999);
}
END_TEST

UT_TEST(not_a_log)
{
	char msg[ELOG_MSG_MAX];
	struct elog_consumer *list;
	size_t n;

	UT_RC(elog_consumer_commit(ut_dir, "a", 0, msg), ENOENT, msg);
	ck_assert_str_eq(msg, strerror(ENOENT));
	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	UT_RC(elog_consumer_commit(ut_dir, "a", 0, msg), ELOG_NOTLOG, msg);
	UT_RC(elog_consumer_list(ut_dir, &list, &n, msg), ELOG_NOTLOG, msg);
	UT_RC(elog_consumer_delete(ut_dir, "a", msg), ELOG_NOTLOG, msg);
	ck_assert(!exists("consumers.lock"));
}
END_TEST

UT_TEST(delete_one)
{
	char msg[ELOG_MSG_MAX];
	struct elog_consumer c;

	make_log(ut_dir, 10);
	UT_OK(elog_consumer_commit(ut_dir, "a", 1, NULL), NULL);
	UT_OK(elog_consumer_commit(ut_dir, "b", 2, NULL), NULL);
	UT_OK(elog_consumer_delete(ut_dir, "a", msg), msg);
	UT_RC(elog_consumer_get(ut_dir, "a", &c, msg), ELOG_NOCONSUMER, msg);
	UT_OK(elog_consumer_get(ut_dir, "b", &c, msg), msg);
	ck_assert_uint_eq(c.offset, 2);
	UT_RC(elog_consumer_delete(ut_dir, "a", msg), ELOG_NOCONSUMER, msg);
	ck_assert_str_eq(msg, "no consumer \"a\"");
	UT_OK(elog_consumer_delete(ut_dir, "b", msg), msg);
	UT_RC(elog_consumer_delete(ut_dir, "never", msg), ELOG_NOCONSUMER, msg);
}
END_TEST

UT_TEST(list_sorted)
{
	struct elog_consumer *list;
	size_t n;

	make_log(ut_dir, 10);
	UT_OK(elog_consumer_list(ut_dir, &list, &n, NULL), NULL);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(list);
	UT_OK(elog_consumer_commit(ut_dir, "zeta", 9, NULL), NULL);
	UT_OK(elog_consumer_commit(ut_dir, "Alpha", 0, NULL), NULL);
	UT_OK(elog_consumer_commit(ut_dir, "mid", 5, NULL), NULL);
	UT_OK(elog_consumer_list(ut_dir, &list, &n, NULL), NULL);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(list[0].name, "Alpha");
	ck_assert_uint_eq(list[0].lag, 9);
	ck_assert_str_eq(list[1].name, "mid");
	ck_assert_uint_eq(list[1].offset, 5);
	ck_assert_uint_eq(list[1].lag, 4);
	ck_assert_str_eq(list[2].name, "zeta");
	ck_assert_uint_eq(list[2].lag, 0);
	free(list);
}
END_TEST

UT_TEST(file_is_readable_and_replaced)
{
	char *text;

	make_log(ut_dir, 1000);
	UT_OK(elog_consumer_commit(ut_dir, "uplink", 41, NULL), NULL);
	UT_OK(elog_consumer_commit(ut_dir, "audit", 7, NULL), NULL);
	text = read_file(ut_dir, FN_CONSUMERS);
	ck_assert_ptr_nonnull(strstr(text, "{\n  \"version\": 1,\n  \"consumers\": {\n"
	                                   "    \"audit\": {\"offset\": 7, \"committed_ms\": "));
	ck_assert_ptr_nonnull(strstr(text, "},\n    \"uplink\": {\"offset\": 41, "));
	ck_assert_ptr_nonnull(strstr(text, "}\n  }\n}\n"));
	free(text);
	/* The lock file exists beside it and no temporary file is left. */
	ck_assert(exists("consumers.lock"));
	ck_assert_int_eq(ut_count_names(ut_dir, "tmp"), 0);
}
END_TEST

/* Every text here is damaged in one way; each must be refused with the
 * byte position, and a commit must leave the file as it was. */
static const struct {
	const char *text, *msg;
} corrupt[] = {
	{ "", "byte 0: expected '{'" },
	{ "   ", "byte 3: expected '{'" },
	{ "[]", "byte 0: expected '{'" },
	{ "{}", "byte 1: expected a string" },
	{ "{\"consumers\":{},\"version\":1}", "byte 1: expected \"version\" as the first member" },
	{ "{\"version\":1}", "byte 12: missing \"consumers\"" },
	{ "{\"version\":1,\"consumers\":{}", "byte 27: expected '}'" },
	{ "{\"version\":1,\"consumers\":{}}x", "byte 28: data after the end of the document" },
	{ "{\"version\":1,\"consumers\":{},\"consumers\":{}}", "byte 28: duplicate member" },
	{ "{\"version\":1,\"consumers\":{},\"extra\":1}", "byte 28: unknown member" },
	{ "{\"version\":01,\"consumers\":{}}", "byte 11: a number with a leading zero" },
	{ "{\"version\":-1,\"consumers\":{}}", "byte 11: expected a non-negative integer" },
	{ "{\"version\":1.0,\"consumers\":{}}", "byte 12: expected an integer" },
	{ "{\"version\":1,\"consumers\":{\"a\":{\"offset\":1}}}",
	  "byte 41: missing \"committed_ms\"" },
	{ "{\"version\":1,\"consumers\":{\"a\":{\"committed_ms\":1}}}",
	  "byte 47: missing \"offset\"" },
	{ "{\"version\":1,\"consumers\":{\"a\":{\"offset\":1,\"offset\":2,\"committed_ms\":1}}}",
	  "byte 42: duplicate member" },
	{ "{\"version\":1,\"consumers\":{\"a\":{\"offset\":1,\"x\":2}}}",
	  "byte 42: unknown member" },
	{ "{\"version\":1,\"consumers\":{\"a\":{\"offset\":18446744073709551615,\"committed_ms\":1}}}",
	  "byte 40: number out of range" },
	{ "{\"version\":1,\"consumers\":{\"a\":{\"offset\":99999999999999999999,\"committed_ms\":1}}}",
	  "byte 40: number out of range" },
	{ "{\"version\":1,\"consumers\":{\"a\":{\"offset\":1,\"committed_ms\":9223372036854775808}}}",
	  "byte 57: number out of range" },
	{ "{\"version\":1,\"consumers\":{\"a b\":{\"offset\":1,\"committed_ms\":1}}}",
	  "byte 26: invalid consumer name" },
	{ "{\"version\":1,\"consumers\":{\"a\\u0020\":{\"offset\":1,\"committed_ms\":1}}}",
	  "byte 28: escape sequences are not allowed" },
	{ "{\"version\":1,\"consumers\":{\"caf\xc3\xa9\":{\"offset\":1,\"committed_ms\":1}}}",
	  "byte 30: a character outside printable ASCII in a string" },
	{ "{\"version\":1,\"consumers\":{\"a\":{\"offset\":1,\"committed_ms\":1},"
	  "\"a\":{\"offset\":2,\"committed_ms\":1}}}",
	  "byte 60: duplicate consumer name" },
	{ "{\"version\":1,\"consumers\":{\"a\":{\"offset\":1,\"committed_ms\":1},}}",
	  "byte 60: expected a string" },
	{ "{\"version\":1,\"consumers\":{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":1}}",
	  "byte 91: string too long" },
	{ "{\"version\":1,\"consumers\":{\"a", "byte 28: unterminated string" },
	{ "{\"version\":1,\"consumers\":{\"a\":{\"offset\":",
	  "byte 40: expected a non-negative integer" },
};

UT_LOOP_TEST(corrupt_file_is_a_clear_error, 0, (int)(sizeof corrupt / sizeof corrupt[0]))
{
	char msg[ELOG_MSG_MAX], want[256];
	struct elog_consumer c, *list;
	const char *text = corrupt[_i].text;
	size_t n, len = strlen(text);
	char *after;

	make_log(ut_dir, 10);
	write_file(ut_dir, FN_CONSUMERS, text, len);
	snprintf(want, sizeof want, "consumers.json: %s", corrupt[_i].msg);
	UT_RC(elog_consumer_get(ut_dir, "a", &c, msg), ELOG_CORRUPT, msg);
	ck_assert_str_eq(msg, want);
	UT_RC(elog_consumer_list(ut_dir, &list, &n, msg), ELOG_CORRUPT, msg);
	ck_assert_ptr_null(list);
	UT_RC(elog_consumer_commit(ut_dir, "a", 1, msg), ELOG_CORRUPT, msg);
	ck_assert_str_eq(msg, want);
	UT_RC(elog_consumer_delete(ut_dir, "a", msg), ELOG_CORRUPT, msg);
	after = read_file(ut_dir, FN_CONSUMERS);
	ck_assert_mem_eq(after, text, len);
	free(after);
}
END_TEST

UT_TEST(nul_byte_is_corrupt)
{
	const char text[] = "{\"version\":1\0,\"consumers\":{}}";
	struct ctable t = { 0 };
	char msg[ELOG_MSG_MAX];

	UT_RC(elog__ctable_parse(&t, text, sizeof text - 1, msg), ELOG_CORRUPT, msg);
	ck_assert_str_eq(msg, "consumers.json: byte 12: missing \"consumers\"");
}
END_TEST

UT_TEST(newer_version_is_refused)
{
	char msg[ELOG_MSG_MAX];
	struct elog_consumer c;
	const char *text = "{\"version\": 3, \"anything\": [1,2,3]}";

	make_log(ut_dir, 10);
	write_file(ut_dir, FN_CONSUMERS, text, strlen(text));
	UT_RC(elog_consumer_get(ut_dir, "a", &c, msg), ELOG_BADVERSION, msg);
	ck_assert_str_eq(msg, "consumers.json: format version 3, this build reads versions 1 and 2");
	UT_RC(elog_consumer_commit(ut_dir, "a", 1, msg), ELOG_BADVERSION, msg);
}
END_TEST

UT_TEST(oversized_file_is_corrupt)
{
	char msg[ELOG_MSG_MAX];
	struct elog_consumer c;
	size_t len = CONSUMERS_FILE_MAX + 1;
	char *big = malloc(len);

	memset(big, ' ', len);
	make_log(ut_dir, 10);
	write_file(ut_dir, FN_CONSUMERS, big, len);
	free(big);
	UT_RC(elog_consumer_get(ut_dir, "a", &c, msg), ELOG_CORRUPT, msg);
	ck_assert_str_eq(msg, "consumers.json: larger than 1048576 bytes");
}
END_TEST

UT_TEST(symlinked_file_is_refused)
{
	char msg[ELOG_MSG_MAX], p[4200];
	struct elog_consumer c;

	make_log(ut_dir, 10);
	snprintf(p, sizeof p, "%s/%s", ut_dir, FN_CONSUMERS);
	ck_assert_int_eq(symlink("/etc/passwd", p), 0);
	UT_RC(elog_consumer_get(ut_dir, "a", &c, msg), ELOOP, msg);
	ck_assert_ptr_nonnull(strstr(msg, "consumers.json: "));
}
END_TEST

UT_TEST(whitespace_and_member_order)
{
	const char *text = "\r\n\t{ \"version\" : 1 , \"consumers\" : {\n"
	                   "\"b\" : { \"committed_ms\" : 5 , \"offset\" : 0 } ,"
	                   "\"a\":{\"offset\":18446744073709551614,\"committed_ms\":0}}}\n ";
	struct ctable t = { 0 };
	char msg[ELOG_MSG_MAX];

	UT_OK(elog__ctable_parse(&t, text, strlen(text), msg), msg);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_str_eq(t.v[0].name, "a");
	ck_assert_uint_eq(t.v[0].offset, UINT64_MAX - 1);
	ck_assert_str_eq(t.v[1].name, "b");
	ck_assert_int_eq(t.v[1].committed_ms, 5);
	elog__ctable_free(&t);
}
END_TEST

UT_TEST(format_parse_round_trip)
{
	struct ctable t = { 0 }, u = { 0 };
	char msg[ELOG_MSG_MAX], name[16], *text;
	size_t len;

	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "c%d", i * 7919 % 1000);
		UT_OK(elog__ctable_set(&t, name, (uint64_t)i * 1000003, INT64_MAX - i), NULL);
	}
	UT_OK(elog__ctable_format(&t, &text, &len), NULL);
	ck_assert_uint_eq(strlen(text), len);
	UT_OK(elog__ctable_parse(&u, text, len, msg), msg);
	ck_assert_uint_eq(u.n, t.n);
	ck_assert_mem_eq(u.v, t.v, t.n * sizeof *t.v);
	free(text);
	elog__ctable_free(&t);
	elog__ctable_free(&u);
}
END_TEST

UT_TEST(too_many_consumers)
{
	char msg[ELOG_MSG_MAX], name[16], *text;
	struct ctable t = { 0 };
	size_t len;

	make_log(ut_dir, 10);
	for (int i = 0; i < ELOG_CONSUMERS_MAX; i++) {
		snprintf(name, sizeof name, "c%05d", i);
		UT_OK(elog__ctable_set(&t, name, 1, 1), NULL);
	}
	UT_RC(elog__ctable_set(&t, "one-more", 1, 1), ELOG_TOOMANY, NULL);
	UT_OK(elog__ctable_format(&t, &text, &len), NULL);
	ck_assert_uint_le(len, CONSUMERS_FILE_MAX);
	write_file(ut_dir, FN_CONSUMERS, text, len);
	UT_RC(elog_consumer_commit(ut_dir, "one-more", 1, msg), ELOG_TOOMANY, msg);
	ck_assert_str_eq(msg, "consumer \"one-more\": the log already has 4096 consumers");
	/* Existing consumers still commit, and deleting one makes room. */
	UT_OK(elog_consumer_commit(ut_dir, "c00000", 9, msg), msg);
	UT_OK(elog_consumer_delete(ut_dir, "c00001", msg), msg);
	UT_OK(elog_consumer_commit(ut_dir, "one-more", 1, msg), msg);
	free(text);

	/* A file with more entries than the limit is damaged. */
	UT_OK(elog__ctable_format(&t, &text, &len), NULL);
	char *more = malloc(len + 100);
	char *end = strstr(text, "\n  }\n}\n");
	ck_assert_ptr_nonnull(end);
	size_t head = (size_t)(end - text);
	memcpy(more, text, head);
	len = head + (size_t)sprintf(more + head, ",\n\"zz\":{\"offset\":1,"
	                                          "\"committed_ms\":1}}}");
	elog__ctable_free(&t);
	UT_RC(elog__ctable_parse(&t, more, len, msg), ELOG_CORRUPT, msg);
	ck_assert_ptr_nonnull(strstr(msg, "more consumers than the limit"));
	ck_assert_uint_eq(t.n, 0);
	free(more);
	free(text);
}
END_TEST

/* Hostile input: mutations of a valid file and plain noise must give an
 * answer, never a crash or a read past the buffer (run under ASan). */
UT_TEST(hostile_input_never_crashes)
{
	const char *valid = "{\"version\":1,\"consumers\":{\"a\":{\"offset\":1,"
	                    "\"committed_ms\":2},\"b-c.d\":{\"committed_ms\":3,"
	                    "\"offset\":4}}}";
	size_t vlen = strlen(valid);
	unsigned seed = 12345;
	int ok = 0;

	for (int i = 0; i < 50000; i++) {
		struct ctable t = { 0 };
		char msg[ELOG_MSG_MAX];
		size_t len = vlen;
		char *buf;
		int rc;

		seed = seed * 1103515245 + 12345;
		if (i % 10 == 0)
			len = (seed >> 16) % 64;
		else if (i % 10 == 1)
			len = (seed >> 16) % (vlen + 1);
		/* An exact-size heap buffer, so ASan sees any overread. */
		buf = malloc(len ? len : 1);
		if (i % 10 == 0) {
			for (size_t k = 0; k < len; k++) {
				seed = seed * 1103515245 + 12345;
				buf[k] = "{}[]\":,0123456789abcoffsetversion \\\n-."[(seed >> 16) %
				                                                     38];
			}
		} else {
			memcpy(buf, valid, len);
			for (int m = 0; m < 1 + i % 3 && len; m++) {
				seed = seed * 1103515245 + 12345;
				buf[(seed >> 8) % len] = (char)(seed >> 20);
			}
		}
		rc = elog__ctable_parse(&t, buf, len, msg);
		ck_assert(rc == 0 || rc == ELOG_CORRUPT || rc == ELOG_BADVERSION);
		if (rc == 0)
			ok++;
		else
			ck_assert_uint_eq(t.n, 0);
		elog__ctable_free(&t);
		free(buf);
	}
	/* Some mutations land in whitespace-free spots that stay valid
	 * (a digit for a digit); most must not. */
	ck_assert_int_gt(ok, 0);
	ck_assert_int_lt(ok, 40000);
}
END_TEST

/* 8 processes x 150 commits: each to its own name and to one shared name.
 * Under the lock no read-modify-write loses another's update.  Each commit
 * is two fsyncs and a rename, one at a time: 500 commits each (8000 in
 * all) outgrew the test's 120 s under the sanitizers on a loaded machine
 * (CI's sanitizer lane, cec9c37), and 2400 interleave as much. */
#define PROCS 8
#define COMMITS 150

/* A commit holds consumers.lock with its pid written in it, so that a
 * commit waiting for it can name it. */
UT_TEST(commit_records_its_pid_in_the_lock_file)
{
	char want[32];
	make_log(ut_dir, 10);
	UT_OK(elog_consumer_commit(ut_dir, "app", 3, NULL), NULL);
	char *text = read_file(ut_dir, FN_CONSUMERS_LOCK);
	snprintf(want, sizeof want, "%ld\n", (long)getpid());
	ck_assert_str_eq(text, want);
	free(text);
}
END_TEST

/* A holder that never lets go (a commit stopped with ^Z): the commit
 * waits its bound, then says who holds the lock, and changes nothing. */
UT_TEST(commit_gives_up_on_a_held_lock_and_names_the_holder)
{
	char msg[ELOG_MSG_MAX], p[1200];
	make_log(ut_dir, 10);
	UT_OK(elog_consumer_commit(ut_dir, "app", 3, NULL), NULL);
	write_file(ut_dir, FN_CONSUMERS_LOCK, "4242\n", 5);
	int fd = open(ut_path(p, sizeof p, ut_dir, FN_CONSUMERS_LOCK), O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	int64_t t0 = elog__fs_now_ms();
	UT_RC(elog_consumer_commit(ut_dir, "app", 5, msg), ELOG_LOCKED, msg);
	ck_assert_str_eq(msg, "timed out after 10000 ms waiting for consumers.lock "
	                      "(pid 4242 holds or last held it)");
	ck_assert_int_ge(elog__fs_now_ms() - t0, 10000);
	UT_RC(elog_consumer_delete(ut_dir, "app", msg), ELOG_LOCKED, msg);
	/* No pid in the file (a holder that could not write it, one made by
	 * another user): the message says so, here after a shorter wait. */
	write_file(ut_dir, FN_CONSUMERS_LOCK, "", 0);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY), lfd = -1;
	ck_assert_int_ge(dfd, 0);
	UT_RC(elog__lock_take_ms(dfd, FN_CONSUMERS_LOCK, 50, 1, &lfd, msg), ELOG_LOCKED, msg);
	ck_assert_str_eq(msg, "timed out after 50 ms waiting for consumers.lock, "
	                      "held by another process");
	ck_assert_int_eq(lfd, -1);
	close(dfd);
	close(fd);
	struct elog_consumer c;
	UT_OK(elog_consumer_get(ut_dir, "app", &c, NULL), NULL);
	ck_assert_uint_eq(c.offset, 3);
	UT_OK(elog_consumer_commit(ut_dir, "app", 5, msg), msg);
}
END_TEST

UT_TEST(concurrent_commits_lose_nothing)
{
	struct elog_consumer *list;
	pid_t pid[PROCS];
	size_t n;

	make_log(ut_dir, 1000000);
	for (int p = 0; p < PROCS; p++) {
		pid[p] = fork();
		ck_assert_int_ge(pid[p], 0);
		if (pid[p] == 0) {
			char name[16], msg[ELOG_MSG_MAX];
			snprintf(name, sizeof name, "proc%d", p);
			/* A commit that waited past the lock's bound on a
			 * saturated machine reports ELOG_LOCKED and changed
			 * nothing: it is tried again.  What is tested here is
			 * that no commit's update is lost. */
			for (int j = 0; j < COMMITS; j++) {
				uint64_t off = (uint64_t)p * 1000 + (uint64_t)j;
				const char *who[] = { name, "shared" };
				for (int k = 0; k < 2; k++) {
					int rc;
					while ((rc = elog_consumer_commit(ut_dir, who[k], off,
					                                  msg)) == ELOG_LOCKED)
						;
					if (rc) {
						fprintf(stderr, "commit: %s\n", msg);
						_exit(1);
					}
				}
			}
			_exit(0);
		}
	}
	for (int p = 0; p < PROCS; p++) {
		int st;
		ck_assert_int_eq(waitpid(pid[p], &st, 0), pid[p]);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	UT_OK(elog_consumer_list(ut_dir, &list, &n, NULL), NULL);
	ck_assert_uint_eq(n, PROCS + 1);
	for (int p = 0; p < PROCS; p++) {
		char name[16];
		snprintf(name, sizeof name, "proc%d", p);
		ck_assert_str_eq(list[p].name, name);
		ck_assert_uint_eq(list[p].offset, (uint64_t)p * 1000 + COMMITS - 1);
	}
	/* The last commit of all was some process's last one. */
	ck_assert_str_eq(list[PROCS].name, "shared");
	ck_assert_uint_eq(list[PROCS].offset % 1000, COMMITS - 1);
	free(list);
}
END_TEST

/* Through the writer and a reader: the consumer resumes just after its
 * committed offset, or at the beginning when it never committed. */
UT_TEST(seek_resumes_after_committed_offset)
{
	struct elog_options opt = { .create = 1 };
	char msg[ELOG_MSG_MAX];
	struct elog_record rec;
	elog_reader *r = NULL;
	elog *w = NULL;

	UT_OK(elog_open(&w, ut_dir, &opt), w);
	for (int i = 0; i < 20; i++) {
		char v[8];
		struct elog_record in = { .ts_ms = ELOG_TS_NOW,
			                  .value = v,
			                  .value_len = (size_t)snprintf(v, sizeof v, "%d", i) };
		UT_OK(elog_append(w, &in, NULL), w);
	}
	UT_OK(elog_sync(w), w);
	UT_OK(elog_reader_open(&r, ut_dir), r);

	UT_OK(elog_consumer_seek(r, ut_dir, "c", msg), msg);
	UT_OK(elog_reader_next(r, &rec), r);
	ck_assert_uint_eq(rec.offset, 0);

	UT_RC(elog_consumer_commit(ut_dir, "c", 20, msg), ELOG_BEYOND, msg);
	UT_OK(elog_consumer_commit(ut_dir, "c", 12, msg), msg);
	UT_OK(elog_consumer_seek(r, ut_dir, "c", msg), msg);
	UT_OK(elog_reader_next(r, &rec), r);
	ck_assert_uint_eq(rec.offset, 13);

	UT_OK(elog_consumer_commit(ut_dir, "c", 19, msg), msg);
	UT_OK(elog_consumer_seek(r, ut_dir, "c", msg), msg);
	UT_RC(elog_reader_next(r, &rec), ELOG_END, r);

	UT_RC(elog_consumer_seek(r, ut_dir, "bad name", msg), ELOG_BADNAME, msg);
	elog_reader_close(r);
	UT_OK(elog_close(w), NULL);
}
END_TEST

/* A consumer made before it commits: before the log's first record,
 * made once, written as version 2 only while it has not committed, and
 * read from its next offset. */
UT_TEST(create_before_the_first_record)
{
	char msg[ELOG_MSG_MAX];
	struct elog_consumer c;

	make_log(ut_dir, 10);
	UT_OK(elog_consumer_create(ut_dir, "shipper", msg), msg);
	UT_OK(elog_consumer_get(ut_dir, "shipper", &c, msg), msg);
	ck_assert_int_eq(c.uncommitted, 1);
	ck_assert_uint_eq(c.next, 0);
	ck_assert_uint_eq(c.lag, 10);
	char *text = read_file(ut_dir, FN_CONSUMERS);
	ck_assert_ptr_nonnull(strstr(text, "\"version\": 2"));
	ck_assert_ptr_nonnull(strstr(text, "\"shipper\": {\"next\": 0, \"created_ms\": "));
	free(text);
	/* Made again: left as it is. */
	int64_t made = c.committed_ms;
	UT_OK(elog_consumer_create(ut_dir, "shipper", msg), msg);
	UT_OK(elog_consumer_get(ut_dir, "shipper", &c, msg), msg);
	ck_assert_int_eq(c.committed_ms, made);
	ck_assert_int_eq(c.uncommitted, 1);
	/* Committed: a consumer as any other, in a file of version 1. */
	UT_OK(elog_consumer_commit(ut_dir, "shipper", 3, msg), msg);
	UT_OK(elog_consumer_get(ut_dir, "shipper", &c, msg), msg);
	ck_assert_int_eq(c.uncommitted, 0);
	ck_assert_uint_eq(c.next, 4);
	ck_assert_uint_eq(c.lag, 6);
	text = read_file(ut_dir, FN_CONSUMERS);
	ck_assert_ptr_nonnull(strstr(text, "\"version\": 1"));
	free(text);
	UT_OK(elog_consumer_create(ut_dir, "shipper", msg), msg);
	UT_OK(elog_consumer_get(ut_dir, "shipper", &c, msg), msg);
	ck_assert_uint_eq(c.offset, 3);
	UT_RC(elog_consumer_create(ut_dir, "bad name", msg), ELOG_BADNAME, msg);
}
END_TEST

UT_TEST(version_2_entries_parse_and_round_trip)
{
	char msg[ELOG_MSG_MAX], *out;
	size_t len;
	struct ctable t = { 0 };
	const char v2[] = "{\"version\":2,\"consumers\":{\"a\":{\"created_ms\":5,\"next\":7},"
	                  "\"b\":{\"offset\":1,\"committed_ms\":2}}}";
	const char v1_with_next[] = "{\"version\":1,\"consumers\":{\"a\":{\"next\":7,\"created_ms\":5}}}";
	const char mixed[] = "{\"version\":2,\"consumers\":{\"a\":{\"next\":7,\"committed_ms\":5}}}";

	UT_OK(elog__ctable_parse(&t, v2, sizeof v2 - 1, msg), msg);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_int_eq(t.v[0].uncommitted, 1);
	ck_assert_uint_eq(t.v[0].next, 7);
	ck_assert_int_eq(t.v[0].committed_ms, 5);
	ck_assert_int_eq(t.v[1].uncommitted, 0);
	ck_assert_uint_eq(t.v[1].next, 2);
	UT_OK(elog__ctable_format(&t, &out, &len), NULL);
	elog__ctable_free(&t);
	UT_OK(elog__ctable_parse(&t, out, len, msg), msg);
	ck_assert_uint_eq(t.v[0].next, 7);
	ck_assert_int_eq(t.v[0].uncommitted, 1);
	free(out);
	elog__ctable_free(&t);
	UT_RC(elog__ctable_parse(&t, v1_with_next, sizeof v1_with_next - 1, msg), ELOG_CORRUPT, msg);
	ck_assert_str_eq(msg, "consumers.json: byte 31: unknown member");
	UT_RC(elog__ctable_parse(&t, mixed, sizeof mixed - 1, msg), ELOG_CORRUPT, msg);
}
END_TEST

/* A committed offset above the durable end (a log restored from an older
 * copy) is reported rather than resumed from. */
UT_TEST(seek_refuses_offset_beyond_the_log)
{
	char msg[ELOG_MSG_MAX];
	elog_reader *r = NULL;

	make_log(ut_dir, 100);
	UT_OK(elog_consumer_commit(ut_dir, "c", 80, msg), msg);
	set_end(ut_dir, 50);
	UT_OK(elog_reader_open(&r, ut_dir), r);
	UT_RC(elog_consumer_seek(r, ut_dir, "c", msg), ELOG_BEYOND, msg);
	ck_assert_str_eq(msg, "consumer \"c\" committed offset 80, at or above "
	                      "the durable end 50 of the log");
	elog_reader_close(r);
}
END_TEST

UT_TEST(strerror_of_consumer_codes)
{
	ck_assert_str_eq(elog_strerror(ELOG_NOCONSUMER), "no such consumer");
	ck_assert_str_eq(elog_strerror(ELOG_BADNAME),
	                 "invalid consumer name (1 to 64 "
	                 "of A-Z a-z 0-9 . _ -, not starting with . or -)");
	ck_assert_str_eq(elog_strerror(ELOG_BEYOND),
	                 "offset at or above the durable end of the log");
	ck_assert_str_eq(elog_strerror(ELOG_TOOMANY), "too many consumers");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("consumers");
	TCase *tc = ut_tcase("consumers");
	tcase_set_timeout(tc, 120);
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
