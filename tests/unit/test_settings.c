/*
 * test_settings.c: the settings file (lib/settings.c): parsing, refusing
 * what is malformed or newer, loading from a directory.
 */
#include "unit.h"

#define ID "6f1c0e4e9a2b4d7f8e3a5b6c7d8e9f01"
#define VALID \
	"format 2\nid " ID "\ncreated_ms 1764385200000\n" \
	"segment_bytes 67108864\nindex_interval 4096\nretain_ms 7\nretain_bytes 9\n"

static int parse(const char *text, struct elog_settings *s)
{
	return elog__settings_parse(text, strlen(text), s);
}

UT_TEST(parse_valid)
{
	struct elog_settings s;
	ck_assert_int_eq(parse(VALID, &s), 0);
	ck_assert_str_eq(s.id, ID);
	ck_assert_int_eq(s.created_ms, 1764385200000);
	ck_assert_uint_eq(s.segment_bytes, 67108864);
	ck_assert_uint_eq(s.index_interval, 4096);
	ck_assert_uint_eq(s.retain_ms, 7);
	ck_assert_uint_eq(s.retain_bytes, 9);
}
END_TEST

UT_TEST(parse_without_final_newline)
{
	struct elog_settings s;
	const char *t = "format 1\nid " ID "\nsegment_bytes 4096\nindex_interval 64";
	ck_assert_int_eq(parse(t, &s), 0);
	ck_assert_uint_eq(s.index_interval, 64);
	ck_assert_uint_eq(s.retain_ms, 0); /* absent keys are zero */
}
END_TEST

UT_TEST(unknown_keys_and_comments_ignored)
{
	struct elog_settings s;
	const char *t = "# made by a later version\nformat 1\ncompress zstd:3\n\n"
	                "id " ID "\nfuture_key some text here\n"
	                "segment_bytes 4096\nindex_interval 64\n";
	ck_assert_int_eq(parse(t, &s), 0);
	ck_assert_str_eq(s.id, ID);
	ck_assert_uint_eq(s.segment_bytes, 4096);
}
END_TEST

UT_TEST(format_round_trip)
{
	struct elog_settings a, b;
	char buf[SETTINGS_MAX];
	ck_assert_int_eq(parse(VALID, &a), 0);
	a.compression = ELOG_COMPRESS_ZSTD;
	a.compression_level = 19;
	size_t n = elog__settings_format(&a, buf);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_lt(n, SETTINGS_MAX);
	/* The first line names the format, so an older reader refuses. */
	ck_assert_mem_eq(buf, "format 2\n", 9);
	UT_OK(elog__settings_parse(buf, n, &b), NULL);
	ck_assert_mem_eq(&a, &b, sizeof a);
}
END_TEST

UT_TEST(compression)
{
	struct elog_settings s;
	char t[256];
	snprintf(t, sizeof t,
	         "format 1\nid " ID "\nsegment_bytes 4096\nindex_interval 64\n"
	         "compression zstd\ncompression_level 5\n");
	ck_assert_int_eq(parse(t, &s), 0);
	ck_assert_int_eq(s.compression, ELOG_COMPRESS_ZSTD);
	ck_assert_int_eq(s.compression_level, 5);
	snprintf(t, sizeof t,
	         "format 1\nid " ID "\nsegment_bytes 4096\nindex_interval 64\n"
	         "compression none\n");
	ck_assert_int_eq(parse(t, &s), 0);
	ck_assert_int_eq(s.compression, ELOG_COMPRESS_NONE);
	/* A codec this version does not know: a newer log, not a broken one. */
	snprintf(t, sizeof t,
	         "format 1\nid " ID "\nsegment_bytes 4096\nindex_interval 64\n"
	         "compression lz4\n");
	ck_assert_int_eq(parse(t, &s), ELOG_BADVERSION);
	snprintf(t, sizeof t,
	         "format 1\nid " ID "\nsegment_bytes 4096\nindex_interval 64\n"
	         "compression_level 23\n");
	ck_assert_int_eq(parse(t, &s), ELOG_CORRUPT);
}
END_TEST

/* cleanup: delete or compact; absent (a log made before the key existed)
 * is delete; another word is a newer version's policy. */
UT_TEST(cleanup)
{
	struct elog_settings s;
	char t[256];
	ck_assert_int_eq(parse(VALID, &s), 0);
	ck_assert_int_eq(s.cleanup, ELOG_CLEANUP_DELETE);
	snprintf(t, sizeof t, "%scleanup compact\n", VALID);
	ck_assert_int_eq(parse(t, &s), 0);
	ck_assert_int_eq(s.cleanup, ELOG_CLEANUP_COMPACT);
	snprintf(t, sizeof t, "%scleanup delete\n", VALID);
	ck_assert_int_eq(parse(t, &s), 0);
	ck_assert_int_eq(s.cleanup, ELOG_CLEANUP_DELETE);
	static const char *bad[] = { "compact,delete", "Compact", "", "compact ", "1" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(t, sizeof t, "%scleanup %s\n", VALID, bad[i]);
		ck_assert_msg(parse(t, &s) == ELOG_BADVERSION, "cleanup '%s'", bad[i]);
	}
}
END_TEST

/* The file always says which: a struct that never had its cleanup set
 * (0) is written as delete, which is what it reads as. */
UT_TEST(cleanup_is_written)
{
	struct elog_settings a, b;
	char buf[SETTINGS_MAX];
	ck_assert_int_eq(parse(VALID, &a), 0);
	a.cleanup = ELOG_CLEANUP_COMPACT;
	size_t n = elog__settings_format(&a, buf);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "\ncleanup compact\n"));
	UT_OK(elog__settings_parse(buf, n, &b), NULL);
	ck_assert_mem_eq(&a, &b, sizeof a);
	a.cleanup = 0;
	n = elog__settings_format(&a, buf);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "\ncleanup delete\n"));
	UT_OK(elog__settings_parse(buf, n, &b), NULL);
	ck_assert_int_eq(b.cleanup, ELOG_CLEANUP_DELETE);
}
END_TEST

UT_TEST(missing_id)
{
	struct elog_settings s;
	ck_assert_int_eq(parse("format 1\nsegment_bytes 4096\nindex_interval 64\n", &s),
	                 ELOG_CORRUPT);
}
END_TEST

UT_TEST(bad_id)
{
	struct elog_settings s;
	static const char *bad[] = {
		"format 1\nid 6F1C0E4E9A2B4D7F8E3A5B6C7D8E9F01\nsegment_bytes 4096\nindex_interval 64\n",
		"format 1\nid 6f1c0e4e9a2b4d7f8e3a5b6c7d8e9f0\nsegment_bytes 4096\nindex_interval 64\n",
		"format 1\nid 6f1c0e4e9a2b4d7f8e3a5b6c7d8e9f012\nsegment_bytes 4096\nindex_interval 64\n",
		"format 1\nid 6f1c0e4e9a2b4d7f8e3a5b6c7d8e9fg1\nsegment_bytes 4096\nindex_interval 64\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(parse(bad[i], &s) == ELOG_CORRUPT, "case %zu", i);
}
END_TEST

UT_TEST(bad_numbers)
{
	struct elog_settings s;
	static const char *vals[] = {
		"4096x",
		"-4096",
		"+4096",
		" 4096",
		"",
		"0x1000",
		"4 096",
		"99999999999999999999999",
		"18446744073709551616",
	};
	char t[256];
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		snprintf(t, sizeof t, "format 1\nid " ID "\nsegment_bytes %s\nindex_interval 64\n",
		         vals[i]);
		ck_assert_msg(parse(t, &s) == ELOG_CORRUPT, "segment_bytes '%s'", vals[i]);
	}
}
END_TEST

UT_TEST(line_without_value)
{
	struct elog_settings s;
	ck_assert_int_eq(parse("format 1\nid " ID "\nsegment_bytes\nindex_interval 64\n", &s),
	                 ELOG_CORRUPT);
}
END_TEST

UT_TEST(values_out_of_range)
{
	struct elog_settings s;
	char t[256];
	static const struct {
		unsigned long long seg, ival;
	} c[] = {
		{ 4095, 4096 },           { (1ull << 30) + 1, 4096 }, { 4096, 63 },
		{ 4096, (1u << 24) + 1 }, { 4096, 4294967296ull }, /* does not fit the u32 */
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		snprintf(t, sizeof t,
		         "format 1\nid " ID "\nsegment_bytes %llu\nindex_interval %llu\n", c[i].seg,
		         c[i].ival);
		ck_assert_msg(parse(t, &s) == ELOG_CORRUPT, "case %zu", i);
	}
	/* The limits themselves are fine. */
	snprintf(t, sizeof t, "format 1\nid " ID "\nsegment_bytes %llu\nindex_interval %u\n",
	         1ull << 30, 1u << 24);
	ck_assert_int_eq(parse(t, &s), 0);
}
END_TEST

UT_TEST(format_3_is_version)
{
	struct elog_settings s;
	ck_assert_int_eq(parse("format 3\nid " ID "\nsegment_bytes 4096\nindex_interval 64\n", &s),
	                 ELOG_BADVERSION);
	/* Even when the rest would not parse in version 2. */
	ck_assert_int_eq(parse("format 3\nid " ID "\nsegment_bytes 1\n", &s), ELOG_BADVERSION);
	/* Formats 1 (elog 0.2) and 2 are read, and said. */
	ck_assert_int_eq(parse("format 1\nid " ID "\nsegment_bytes 4096\nindex_interval 64\n", &s),
	                 0);
	ck_assert_uint_eq(s.format, 1);
	ck_assert_int_eq(parse("format 2\nid " ID "\nsegment_bytes 4096\nindex_interval 64\n", &s),
	                 0);
	ck_assert_uint_eq(s.format, 2);
}
END_TEST

UT_TEST(missing_format)
{
	struct elog_settings s;
	ck_assert_int_eq(parse("id " ID "\nsegment_bytes 4096\nindex_interval 64\n", &s),
	                 ELOG_CORRUPT);
	ck_assert_int_eq(parse("", &s), ELOG_CORRUPT);
	ck_assert_int_eq(parse("format 0\nid " ID "\nsegment_bytes 4096\nindex_interval 64\n", &s),
	                 ELOG_CORRUPT);
}
END_TEST

/* ---- loading from a directory ---- */

static int load(char *msg, struct elog_settings *s)
{
	int dfd = open(ut_top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	int rc = elog__settings_load(dfd, s, msg);
	close(dfd);
	return rc;
}

UT_TEST(load_missing_is_notlog)
{
	char msg[ELOG_MSG_MAX] = "";
	struct elog_settings s;
	ck_assert_int_eq(load(msg, &s), ELOG_NOTLOG);
	ck_assert_str_eq(msg, "not an elog directory (no settings file)");
	UT_RC(elog_settings_read(ut_top, &s, NULL), ELOG_NOTLOG, NULL);
	msg[0] = '\0';
	UT_RC(elog_settings_read(ut_top, &s, msg), ELOG_NOTLOG, msg);
	ck_assert_str_eq(msg, "not an elog directory (no settings file)");
}
END_TEST

UT_TEST(load_oversized)
{
	char p[1200], msg[ELOG_MSG_MAX] = "";
	struct elog_settings s;
	size_t n = SETTINGS_MAX + 1;
	char *big = malloc(n);
	memset(big, '#', n);
	memcpy(big, VALID, strlen(VALID)); /* valid, but too long */
	big[strlen(VALID)] = '#';
	ut_write_file(ut_path(p, sizeof p, ut_top, FN_SETTINGS), big, n);
	ck_assert_int_eq(load(msg, &s), ELOG_CORRUPT);
	ck_assert_str_eq(msg, "settings: larger than 4096 bytes");
	/* One byte less is read. */
	ut_write_file(p, big, n - 1);
	ck_assert_int_eq(load(msg, &s), 0);
	free(big);
}
END_TEST

UT_TEST(load_version_and_malformed_messages)
{
	char p[1200], msg[ELOG_MSG_MAX] = "";
	struct elog_settings s;
	const char *v2 = "format 3\n";
	ut_write_file(ut_path(p, sizeof p, ut_top, FN_SETTINGS), v2, strlen(v2));
	ck_assert_int_eq(load(msg, &s), ELOG_BADVERSION);
	ck_assert_str_eq(msg, "settings: unsupported format version");
	ut_write_file(p, "format 1\n", 9);
	ck_assert_int_eq(load(msg, &s), ELOG_CORRUPT);
	ck_assert_str_eq(msg, "settings: malformed settings");
}
END_TEST

UT_TEST(load_refuses_symlink)
{
	char p[1200], q[1200], msg[ELOG_MSG_MAX] = "";
	struct elog_settings s;
	ut_write_file(ut_path(q, sizeof q, ut_top, "real"), VALID, strlen(VALID));
	ck_assert_int_eq(symlink("real", ut_path(p, sizeof p, ut_top, FN_SETTINGS)), 0);
	ck_assert_int_eq(load(msg, &s), ELOOP);
}
END_TEST

UT_TEST(store_then_read)
{
	struct elog_settings a, b;
	ck_assert_int_eq(parse(VALID, &a), 0);
	int dfd = open(ut_top, O_RDONLY | O_DIRECTORY);
	UT_OK(elog__settings_store(dfd, &a), NULL);
	close(dfd);
	UT_OK(elog_settings_read(ut_top, &b, NULL), NULL);
	ck_assert_mem_eq(&a, &b, sizeof a);
}
END_TEST

UT_TEST(new_ids_differ)
{
	char a[33], b[33];
	UT_OK(elog__settings_new_id(a), NULL);
	UT_OK(elog__settings_new_id(b), NULL);
	ck_assert_uint_eq(strlen(a), 32);
	ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 32);
	ck_assert_str_ne(a, b);
}
END_TEST

/* Creation options given for an existing log: the same values are fine,
 * a different one is refused with a message naming it. */
UT_TEST(options_checked_against_an_existing_log)
{
	struct elog_settings st;
	char msg[ELOG_MSG_MAX];
	struct elog_options o = { 0 };
	memset(&st, 0, sizeof st);
	st.segment_bytes = 65536;
	st.index_interval = 4096;
	st.retain_bytes = 1u << 20;
	UT_OK(elog__settings_check_options(&st, NULL, msg), msg);
	UT_OK(elog__settings_check_options(&st, &o, msg), msg);
	o.segment_bytes = 65536;
	o.retain_bytes = 1u << 20;
	UT_OK(elog__settings_check_options(&st, &o, msg), msg);
	o.retain_bytes = 2u << 20;
	UT_RC(elog__settings_check_options(&st, &o, msg), ELOG_SETTING, msg);
	/* What is wrong, without the program that changes it: elog-append
	 * adds that (bin/cli.c). */
	ck_assert_str_eq(msg, "the log's retention size is 1048576 bytes, not 2097152");
	o.retain_bytes = 0;
	o.compression = ELOG_COMPRESS_ZSTD;
	UT_RC(elog__settings_check_options(&st, &o, msg), ELOG_SETTING, msg);
	ck_assert_str_eq(msg, "the log is not compressed");
	o.compression = 0;
	o.segment_bytes = 4096;
	UT_RC(elog__settings_check_options(&st, &o, msg), ELOG_SETTING, msg);
	ck_assert_str_eq(msg, "the log's segment size is 65536 bytes, not 4096");
}
END_TEST

/* cleanup given for an existing log must be the log's; 0 is "the log's". */
UT_TEST(cleanup_option_checked_against_an_existing_log)
{
	struct elog_settings st;
	char msg[ELOG_MSG_MAX];
	struct elog_options o = { 0 };
	ck_assert_int_eq(parse(VALID, &st), 0);
	UT_OK(elog__settings_check_options(&st, &o, msg), msg);
	o.cleanup = ELOG_CLEANUP_DELETE;
	UT_OK(elog__settings_check_options(&st, &o, msg), msg);
	o.cleanup = ELOG_CLEANUP_COMPACT;
	UT_RC(elog__settings_check_options(&st, &o, msg), ELOG_SETTING, msg);
	ck_assert_str_eq(msg, "the log's cleanup is delete, not compact");
	st.cleanup = ELOG_CLEANUP_COMPACT;
	UT_OK(elog__settings_check_options(&st, &o, msg), msg);
	o.cleanup = ELOG_CLEANUP_DELETE;
	UT_RC(elog__settings_check_options(&st, &o, msg), ELOG_SETTING, msg);
	ck_assert_str_eq(msg, "the log's cleanup is compact, not delete");
	o.cleanup = 3;
	UT_RC(elog__settings_check_options(&st, &o, msg), ELOG_INVALID, msg);
	ck_assert_str_eq(msg, "cleanup must be ELOG_CLEANUP_DELETE or ELOG_CLEANUP_COMPACT, not 3");
}
END_TEST

/* Given at creation: stored; a value that is neither is refused and no
 * log is made. */
UT_TEST(cleanup_at_creation)
{
	elog *w;
	struct elog_settings s;
	char msg[ELOG_MSG_MAX], p[1200];
	struct elog_options o = { .create = 1, .cleanup = ELOG_CLEANUP_COMPACT };
	UT_OK(elog_open(&w, ut_dir, &o), w);
	ck_assert_int_eq(elog_settings_of(w)->cleanup, ELOG_CLEANUP_COMPACT);
	UT_OK(elog_close(w), NULL);
	UT_OK(elog_settings_read(ut_dir, &s, msg), msg);
	ck_assert_int_eq(s.cleanup, ELOG_CLEANUP_COMPACT);
	/* Nothing given: delete. */
	ut_path(p, sizeof p, ut_top, "plain");
	o.cleanup = 0;
	UT_OK(elog_open(&w, p, &o), w);
	ck_assert_int_eq(elog_settings_of(w)->cleanup, ELOG_CLEANUP_DELETE);
	UT_OK(elog_close(w), NULL);
	ut_path(p, sizeof p, ut_top, "bad");
	o.cleanup = -1;
	UT_RC(elog_open(&w, p, &o), ELOG_INVALID, w);
	ck_assert_str_eq(elog_errmsg(w),
	                 "cleanup must be ELOG_CLEANUP_DELETE or ELOG_CLEANUP_COMPACT, not -1");
	elog_close(w);
	char sp[1300];
	ck_assert(!ut_exists(ut_path(sp, sizeof sp, p, FN_SETTINGS)));
}
END_TEST

/* ELOG_SET_CLEANUP changes cleanup and nothing else; a bad value changes
 * nothing. */
UT_TEST(update_cleanup)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	elog_close(w);
	struct elog_settings before, after;
	char msg[ELOG_MSG_MAX];
	UT_OK(elog_settings_read(ut_dir, &before, NULL), NULL);
	ck_assert_int_eq(before.cleanup, ELOG_CLEANUP_DELETE);
	/* The other fields of o are not looked at. */
	struct elog_settings o = { .cleanup = ELOG_CLEANUP_COMPACT,
		                   .segment_bytes = 1,
		                   .retain_ms = 5 };
	UT_OK(elog_settings_update(ut_dir, &o, ELOG_SET_CLEANUP, 0, msg), msg);
	UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
	ck_assert_int_eq(after.cleanup, ELOG_CLEANUP_COMPACT);
	after.cleanup = before.cleanup;
	ck_assert_mem_eq(&before, &after, sizeof before);
	o.cleanup = 0;
	UT_RC(elog_settings_update(ut_dir, &o, ELOG_SET_CLEANUP, 0, msg), ELOG_INVALID, msg);
	ck_assert_str_eq(msg, "cleanup must be ELOG_CLEANUP_DELETE or ELOG_CLEANUP_COMPACT, not 0");
	UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
	ck_assert_int_eq(after.cleanup, ELOG_CLEANUP_COMPACT);
	o.cleanup = ELOG_CLEANUP_DELETE;
	UT_OK(elog_settings_update(ut_dir, &o, ELOG_SET_CLEANUP, 0, msg), msg);
	UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
	ck_assert_mem_eq(&before, &after, sizeof before);
	/* Another field's update keeps cleanup. */
	o.cleanup = ELOG_CLEANUP_COMPACT;
	UT_OK(elog_settings_update(ut_dir, &o, ELOG_SET_CLEANUP, 0, msg), msg);
	o.retain_ms = 7;
	UT_OK(elog_settings_update(ut_dir, &o, ELOG_SET_RETAIN_MS, 0, msg), msg);
	UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
	ck_assert_int_eq(after.cleanup, ELOG_CLEANUP_COMPACT);
	ck_assert_uint_eq(after.retain_ms, 7);
}
END_TEST

/* An update takes maint.lock: with a maintenance run holding it, it fails
 * at once by default (ELOG_LOCKED, naming the holder) and changes
 * nothing, and waits when told to, for as long as it is told. */
UT_TEST(update_waits_for_maintenance_as_told)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	elog_close(w);
	char msg[ELOG_MSG_MAX], want[ELOG_MSG_MAX];
	int lockfd, dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	UT_OK(elog__lock_take_ms(dfd, FN_MAINT, 0, 1, &lockfd, msg), msg);
	struct elog_settings o = { .retain_ms = 7 }, after;
	snprintf(want, sizeof want, "another maintenance run holds maint.lock (pid %ld)",
	         (long)getpid());
	UT_RC(elog_settings_update(ut_dir, &o, ELOG_SET_RETAIN_MS, 0, msg), ELOG_LOCKED, msg);
	ck_assert_str_eq(msg, want);
	UT_RC(elog_settings_update(ut_dir, &o, ELOG_SET_RETAIN_MS, 50, msg), ELOG_LOCKED, msg);
	ck_assert_str_eq(msg, want);
	UT_RC(elog_settings_update(ut_dir, &o, ELOG_SET_RETAIN_MS, -5, msg), ELOG_INVALID, msg);
	UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
	ck_assert_uint_ne(after.retain_ms, 7);
	close(lockfd);
	UT_OK(elog_settings_update(ut_dir, &o, ELOG_SET_RETAIN_MS, ELOG_WAIT_NONE, msg), msg);
	UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
	ck_assert_uint_eq(after.retain_ms, 7);
	close(dfd);
}
END_TEST

UT_TEST(update_changes_what_is_named_only)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	elog_close(w);
	struct elog_settings before, after;
	UT_OK(elog_settings_read(ut_dir, &before, NULL), NULL);
	char msg[ELOG_MSG_MAX];
	struct elog_settings o = { .retain_bytes = 1u << 20,
		                   .segment_bytes = 8192,
		                   .retain_ms = 5 };
	UT_OK(elog_settings_update(ut_dir, &o, ELOG_SET_RETAIN_BYTES | ELOG_SET_SEGMENT_BYTES, 0,
	                           msg),
	      msg);
	UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
	ck_assert_uint_eq(after.retain_bytes, 1u << 20);
	ck_assert_uint_eq(after.segment_bytes, 8192);
	ck_assert_uint_eq(after.retain_ms, before.retain_ms);
	ck_assert_str_eq(after.id, before.id);
	ck_assert_int_eq(after.created_ms, before.created_ms);
	/* Zero is a value: no size limit any more. */
	o.retain_bytes = 0;
	UT_OK(elog_settings_update(ut_dir, &o, ELOG_SET_RETAIN_BYTES, 0, msg), msg);
	UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
	ck_assert_uint_eq(after.retain_bytes, 0);
	/* Out of range: refused, nothing changed. */
	o.segment_bytes = 100;
	UT_RC(elog_settings_update(ut_dir, &o, ELOG_SET_SEGMENT_BYTES, 0, msg), ELOG_INVALID, msg);
	UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
	ck_assert_uint_eq(after.segment_bytes, 8192);
	ck_assert_int_eq(after.compression, ELOG_COMPRESS_NONE);
	/* Another codec applies from the next segment; back again. */
	if (elog_have_zstd()) {
		o.compression = ELOG_COMPRESS_ZSTD;
		UT_OK(elog_settings_update(ut_dir, &o, ELOG_SET_COMPRESSION, 0, msg), msg);
		UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
		ck_assert_int_eq(after.compression, ELOG_COMPRESS_ZSTD);
		o.compression = ELOG_COMPRESS_NONE;
		UT_OK(elog_settings_update(ut_dir, &o, ELOG_SET_COMPRESSION, 0, msg), msg);
		UT_OK(elog_settings_read(ut_dir, &after, NULL), NULL);
		ck_assert_int_eq(after.compression, ELOG_COMPRESS_NONE);
	}
	/* An existing writer now opens with the stored values only. */
	struct elog_options given = { .segment_bytes = 4096 };
	UT_RC(elog_open(&w, ut_dir, &given), ELOG_SETTING, w);
	elog_close(w);
	given.segment_bytes = 8192;
	UT_OK(elog_open(&w, ut_dir, &given), w);
	ck_assert_uint_eq(elog_settings_of(w)->segment_bytes, 8192);
	elog_close(w);
}
END_TEST

/* Zero is no segment size nor index interval: an update refuses it, as
 * creation does, rather than store a settings file no program reads. */
UT_TEST(update_refuses_zero_sizes)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	elog_close(w);
	struct elog_settings o = { 0 }, after;
	char msg[ELOG_MSG_MAX];
	UT_RC(elog_settings_update(ut_dir, &o, ELOG_SET_SEGMENT_BYTES, 0, msg), ELOG_INVALID, msg);
	ck_assert_str_eq(msg, "segment size must be between 4096 and 1073741824 bytes");
	UT_RC(elog_settings_update(ut_dir, &o, ELOG_SET_INDEX_INTERVAL, 0, msg), ELOG_INVALID, msg);
	ck_assert_str_eq(msg, "index interval must be between 64 and 16777216 bytes");
	UT_OK(elog_settings_read(ut_dir, &after, msg), msg);
	ck_assert_uint_eq(after.segment_bytes, 4096);
	ck_assert_uint_eq(after.index_interval, 64);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("settings");
	TCase *tc = ut_tcase("settings");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
