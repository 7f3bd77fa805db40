/*
 * test_segment.c: segment names, headers and the sorted list of segments
 * (lib/segment.c).
 */
#include "unit.h"

UT_TEST(name_is_20_digits)
{
	char b[NAME_MAX_LOCAL];
	elog__seg_name(b, 0, SEG_EXT);
	ck_assert_str_eq(b, "00000000000000000000.log");
	elog__seg_name(b, 4182917, IDX_EXT);
	ck_assert_str_eq(b, "00000000000004182917.idx");
	elog__seg_name(b, UINT64_MAX, SEG_EXT);
	ck_assert_str_eq(b, "18446744073709551615.log");
	elog__seg_name(b, 10, SEG_EXT SEG_NEW_EXT);
	ck_assert_str_eq(b, "00000000000000000010" SEG_EXT SEG_NEW_EXT);
}
END_TEST

UT_TEST(parse_name_accepts_and_refuses)
{
	uint64_t base = 999;
	ck_assert_int_eq(elog__seg_parse_name("00000000000004182917.log", SEG_EXT, &base), 1);
	ck_assert_uint_eq(base, 4182917);
	ck_assert_int_eq(elog__seg_parse_name("18446744073709551615.log", SEG_EXT, &base), 1);
	ck_assert_uint_eq(base, UINT64_MAX);

	base = 999;
	static const char *bad[] = {
		"00000000000004182917.idx",     /* other extension */
		"00000000000004182917.log.tmp", /* something after it */
		"0000000000004182917.log",      /* 19 digits */
		"000000000000004182917.log",    /* 21 digits */
		"0000000000000418291x.log",
		"-0000000000004182917.log",
		"18446744073709551616.log", /* UINT64_MAX + 1 */
		"99999999999999999999.log",
		"LOCK",
		"",
		".log",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(elog__seg_parse_name(bad[i], SEG_EXT, &base) == 0, "%s", bad[i]);
	ck_assert_uint_eq(base, 999); /* untouched on refusal */
}
END_TEST

UT_TEST(header_round_trip)
{
	unsigned char h[SEG_HDR];
	elog__seg_header_encode(h, 12345, 0, NULL);
	ck_assert_mem_eq(h, "ELOGSEG\n", 8);
	ck_assert_uint_eq(get32(h + 8), 2);
	ck_assert_uint_eq(get32(h + 12), 0);
	ck_assert_uint_eq(get64(h + 16), 12345);
	ck_assert_uint_eq(get32(h + 24), elog__crc32c(0, h, 24));
	ck_assert_uint_eq(get32(h + 28), 0);
	ck_assert_int_eq(elog__seg_header_verify(h, SEG_HDR, 12345, NULL, NULL), 0);
}
END_TEST

UT_TEST(header_wrong_base)
{
	unsigned char h[SEG_HDR];
	elog__seg_header_encode(h, 100, 0, NULL);
	ck_assert_int_eq(elog__seg_header_verify(h, SEG_HDR, 101, NULL, NULL), ELOG_CORRUPT);
	ck_assert_int_eq(elog__seg_header_verify(h, SEG_HDR, 0, NULL, NULL), ELOG_CORRUPT);
}
END_TEST

UT_TEST(header_bad_magic_or_crc)
{
	unsigned char h[SEG_HDR];
	elog__seg_header_encode(h, 7, 0, NULL);
	h[0] = 'X';
	put32(h + 24, elog__crc32c(0, h, 24));
	ck_assert_int_eq(elog__seg_header_verify(h, SEG_HDR, 7, NULL, NULL), ELOG_CORRUPT);
	for (int byte = 8; byte < 28; byte++) {
		elog__seg_header_encode(h, 7, 0, NULL);
		h[byte] ^= 0x10;
		ck_assert_msg(elog__seg_header_verify(h, SEG_HDR, 7, NULL, NULL) == ELOG_CORRUPT,
		              "byte %d", byte);
	}
	unsigned char z[SEG_HDR] = { 0 };
	ck_assert_int_eq(elog__seg_header_verify(z, SEG_HDR, 0, NULL, NULL), ELOG_CORRUPT);
}
END_TEST

UT_TEST(header_newer_version)
{
	unsigned char h[SEG_HDR];
	elog__seg_header_encode(h, 7, 0, NULL);
	put32(h + 8, 3);
	put32(h + 24, elog__crc32c(0, h, 24));
	ck_assert_int_eq(elog__seg_header_verify(h, SEG_HDR, 7, NULL, NULL), ELOG_BADVERSION);
	/* Version 1, of elog 0.2, is read, and has no seal. */
	put32(h + 8, 1);
	put32(h + 24, elog__crc32c(0, h, 24));
	ck_assert_int_eq(elog__seg_header_verify(h, SEG_HDR, 7, NULL, NULL), 0);
	ck_assert_int_eq(elog__seg_header_sealed(h), 0);
	elog__seg_header_encode(h, 7, 0, NULL);
	ck_assert_int_eq(elog__seg_header_sealed(h), 1);
	/* A codec this version does not know is a newer format too. */
	elog__seg_header_encode(h, 7, SEG_FLAGS(0xFF, 0), NULL);
	ck_assert_int_eq(elog__seg_header_verify(h, SEG_HDR, 7, NULL, NULL), ELOG_BADVERSION);
	/* A dictionary without a codec is nothing this version wrote. */
	elog__seg_header_encode(h, 7, SEG_FLAGS(CODEC_NONE, 1), NULL);
	ck_assert_int_eq(elog__seg_header_verify(h, SEG_HDR, 7, NULL, NULL), ELOG_BADVERSION);
}
END_TEST

/* The seal's bytes, as elog(5) gives them. */
UT_TEST(seal_round_trip)
{
	unsigned char p[SEAL_SIZE];
	struct seal s = { .next = 500, .end = 499, .pos = 4000 }, d;
	elog__seal_id("00112233445566778899aabbccddeeff", s.id);
	ck_assert_uint_eq(s.id[0], 0x00);
	ck_assert_uint_eq(s.id[5], 0x55);
	ck_assert_uint_eq(s.id[15], 0xff);
	elog__seal_encode(p, &s);
	ck_assert_mem_eq(p, "ELOGSEAL", 8);
	ck_assert_uint_eq(get64(p + 8), 500);
	ck_assert_uint_eq(get64(p + 16), 499);
	ck_assert_uint_eq(get64(p + 24), 4000);
	ck_assert_mem_eq(p + 32, s.id, 16);
	ck_assert_uint_eq(get32(p + 48), elog__crc32c(0, p, 48));
	ck_assert_uint_eq(get32(p + 52), 0);
	ck_assert_int_eq(elog__seal_decode(p, 100, 4000, &d), 0);
	ck_assert_uint_eq(d.next, 500);
	ck_assert_uint_eq(d.end, 499);
	ck_assert_uint_eq(d.pos, 4000);
	ck_assert_mem_eq(d.id, s.id, 16);
}
END_TEST

/* A seal read anywhere but where it says it lies, or with any byte
 * changed, is damage; bytes without its magic are no seal at all. */
UT_TEST(seal_damage_is_told_from_no_seal)
{
	unsigned char p[SEAL_SIZE];
	struct seal s = { .next = 500, .end = 500, .pos = 4000 }, d;
	elog__seal_encode(p, &s);
	ck_assert_int_eq(elog__seal_decode(p, 100, 4001, &d), ELOG_CORRUPT);
	ck_assert_int_eq(elog__seal_decode(p, 501, 4000, &d), ELOG_CORRUPT);
	for (int byte = 8; byte < (int)SEAL_SIZE; byte++) {
		elog__seal_encode(p, &s);
		p[byte] ^= 0x04;
		ck_assert_msg(elog__seal_decode(p, 100, 4000, &d) == ELOG_CORRUPT, "byte %d", byte);
	}
	elog__seal_encode(p, &s);
	p[0] = 'X';
	ck_assert_int_eq(elog__seal_decode(p, 100, 4000, &d), ELOG_END);
	/* The next base below the end: not a seal a writer makes. */
	s.next = 400;
	s.end = 450;
	elog__seal_encode(p, &s);
	ck_assert_int_eq(elog__seal_decode(p, 100, 4000, &d), ELOG_CORRUPT);
}
END_TEST

UT_TEST(header_flags_round_trip)
{
	unsigned char h[SEG_HDR];
	elog__seg_header_encode(h, 9, SEG_FLAGS(CODEC_ZSTD, 0xABCDEF), NULL);
	ck_assert_int_eq(elog__seg_header_verify(h, SEG_HDR, 9, NULL, NULL), 0);
	ck_assert_uint_eq(elog__seg_header_flags(h), 0xABCDEF01u);
	ck_assert_uint_eq(SEG_CODEC(elog__seg_header_flags(h)), CODEC_ZSTD);
	ck_assert_uint_eq(SEG_DICT(elog__seg_header_flags(h)), 0xABCDEF);
	elog__seg_header_encode(h, 9, 0, NULL);
	ck_assert_uint_eq(elog__seg_header_flags(h), 0);
}
END_TEST

static int open_top(void)
{
	int dfd = open(ut_top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	return dfd;
}

UT_TEST(seglist_sorted_and_filtered)
{
	static const uint64_t bases[] = { 500, 3, 10000000000ull, 0, 42 };
	char p[1200];
	for (size_t i = 0; i < 5; i++) {
		ut_seg_create(ut_top, bases[i]);
		ut_write_file(ut_seg_path(ut_top, bases[i], IDX_EXT), "x", 1);
	}
	/* Things that are not segments. */
	ut_write_file(ut_path(p, sizeof p, ut_top, "00000000000000000077.log.tmp.1.0"), "", 0);
	ut_write_file(ut_path(p, sizeof p, ut_top, "77.log"), "", 0);
	ut_write_file(ut_path(p, sizeof p, ut_top, "LOCK"), "", 0);
	ut_write_file(ut_path(p, sizeof p, ut_top, "00000000000000000088.idx"), "", 0);

	int dfd = open_top();
	struct seglist sl;
	ck_assert_int_eq(elog__seglist_read(dfd, &sl), 0);
	ck_assert_uint_eq(sl.n, 5);
	ck_assert_uint_eq(sl.base[0], 0);
	ck_assert_uint_eq(sl.base[1], 3);
	ck_assert_uint_eq(sl.base[2], 42);
	ck_assert_uint_eq(sl.base[3], 500);
	ck_assert_uint_eq(sl.base[4], 10000000000ull);
	elog__seglist_free(&sl);
	ck_assert_ptr_null(sl.base);
	ck_assert_uint_eq(sl.n, 0);

	/* Reading twice through the same descriptor lists everything again. */
	ck_assert_int_eq(elog__seglist_read(dfd, &sl), 0);
	ck_assert_uint_eq(sl.n, 5);
	elog__seglist_free(&sl);
	close(dfd);
}
END_TEST

UT_TEST(seglist_many)
{
	/* More than the initial capacity, so the list grows. */
	for (uint64_t b = 0; b < 100; b++)
		ut_seg_create(ut_top, (b * 7919) % 1000);
	int dfd = open_top();
	struct seglist sl;
	ck_assert_int_eq(elog__seglist_read(dfd, &sl), 0);
	ck_assert_uint_eq(sl.n, 100);
	for (size_t i = 1; i < sl.n; i++)
		ck_assert_uint_lt(sl.base[i - 1], sl.base[i]);
	elog__seglist_free(&sl);
	close(dfd);
}
END_TEST

UT_TEST(seglist_empty_dir)
{
	int dfd = open_top();
	struct seglist sl;
	ck_assert_int_eq(elog__seglist_read(dfd, &sl), 0);
	ck_assert_uint_eq(sl.n, 0);
	ck_assert_int_eq(elog__seglist_find(&sl, 0), -1);
	ck_assert_int_eq(elog__seglist_find(&sl, UINT64_MAX), -1);
	elog__seglist_free(&sl);
	close(dfd);
}
END_TEST

UT_TEST(seglist_find_edges)
{
	uint64_t b[] = { 10, 20, 30 };
	struct seglist sl = { b, 3 };
	ck_assert_int_eq(elog__seglist_find(&sl, 0), -1);
	ck_assert_int_eq(elog__seglist_find(&sl, 9), -1);
	ck_assert_int_eq(elog__seglist_find(&sl, 10), 0);
	ck_assert_int_eq(elog__seglist_find(&sl, 19), 0);
	ck_assert_int_eq(elog__seglist_find(&sl, 20), 1);
	ck_assert_int_eq(elog__seglist_find(&sl, 29), 1);
	ck_assert_int_eq(elog__seglist_find(&sl, 30), 2);
	ck_assert_int_eq(elog__seglist_find(&sl, UINT64_MAX), 2);
	struct seglist one = { b, 1 };
	ck_assert_int_eq(elog__seglist_find(&one, 9), -1);
	ck_assert_int_eq(elog__seglist_find(&one, 10), 0);
	ck_assert_int_eq(elog__seglist_find(&one, 11), 0);
}
END_TEST

UT_TEST(public_name_and_record_size)
{
	char b[ELOG_SEGMENT_NAME_MAX];
	elog_segment_name(b, 4182917);
	ck_assert_str_eq(b, "00000000000004182917.log");
	elog_segment_name(b, UINT64_MAX);
	ck_assert_str_eq(b, "18446744073709551615.log");
	ck_assert_uint_eq(strlen(b) + 1, ELOG_SEGMENT_NAME_MAX);
	ck_assert_uint_eq(elog_record_size(0, 0), 28);
	ck_assert_uint_eq(elog_record_size(3, 5), 36);
	ck_assert_uint_eq(elog_record_size(3, 5), elog__rec_size(3, 5));
}
END_TEST

UT_TEST(classify_names)
{
	static const struct {
		const char *name;
		int kind, tmp;
		uint64_t num;
	} cases[] = {
		{ "00000000000004182917.log", FILE_SEGMENT, 0, 4182917 },
		{ "00000000000004182917.idx", FILE_INDEX, 0, 4182917 },
		{ "00000000000004182917.log.new", FILE_SEGMENT_NEW, 0, 4182917 },
		{ "00000000000004182917.log.compact", FILE_COMPACT_TMP, 0, 4182917 },
		{ "00000000000004182917.idx.compact", FILE_COMPACT_TMP, 0, 4182917 },
		{ "00000000000004182917.log.cut-1764385200000", FILE_CUT, 0, 4182917 },
		{ "00000000000004182917.log.cut-1764385200000-2", FILE_CUT, 0, 4182917 },
		{ "00000000000004182917.idx.tmp.123.0", FILE_INDEX, 1, 4182917 },
		{ "00000000000004182917.log.cut-5.tmp.9.0", FILE_CUT, 1, 4182917 },
		{ "dict.7", FILE_DICT, 0, 7 },
		{ "dict.99999999999999999999999", FILE_DICT, 0, UINT64_MAX },
		{ "dict.7.tmp.12.3", FILE_DICT, 1, 7 },
		{ "settings", FILE_SETTINGS, 0, 0 },
		{ "settings.tmp.12.0", FILE_SETTINGS, 1, 0 },
		{ "watermark", FILE_WATERMARK, 0, 0 },
		{ "start", FILE_START, 0, 0 },
		{ "LOCK", FILE_LOCK, 0, 0 },
		{ "writers", FILE_WRITERS, 0, 0 },
		{ "maint.lock", FILE_MAINT, 0, 0 },
		{ "consumers.json", FILE_CONSUMERS, 0, 0 },
		{ "consumers.lock", FILE_CONSUMERS_LOCK, 0, 0 },
		{ "compact.state", FILE_COMPACT_STATE, 0, 0 },
		{ "retain.last", FILE_RETAIN_LAST, 0, 0 },
		{ "compact.last", FILE_COMPACT_LAST, 0, 0 },
		{ "copy.last", FILE_COPY_LAST, 0, 0 },
		{ "salvaged", FILE_SALVAGED, 0, 0 },
		{ "foo.tmp.1.2", FILE_UNKNOWN, 1, 0 },
		/* Not what they look like. */
		{ "0000000000004182917.log", FILE_UNKNOWN, 0, 0 },
		{ "00000000000004182917.log.cut-", FILE_UNKNOWN, 0, 0 },
		{ "00000000000004182917.log.cut-5-", FILE_UNKNOWN, 0, 0 },
		{ "00000000000004182917.log.newer", FILE_UNKNOWN, 0, 0 },
		{ "x.compact", FILE_UNKNOWN, 0, 0 },
		{ "dict.", FILE_UNKNOWN, 0, 0 },
		{ "dict.1x", FILE_UNKNOWN, 0, 0 },
		{ "settings.tmp.12", FILE_UNKNOWN, 0, 0 },
		{ "settings.tmp.x.0", FILE_UNKNOWN, 0, 0 },
		{ ".tmp.1.0", FILE_UNKNOWN, 0, 0 },
		{ "LOCK2", FILE_UNKNOWN, 0, 0 },
		{ "", FILE_UNKNOWN, 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct file_class fc;
		int kind = elog__file_classify(cases[i].name, &fc);
		ck_assert_msg(kind == cases[i].kind && fc.kind == kind && fc.tmp == cases[i].tmp &&
		                      fc.num == cases[i].num,
		              "%s: kind %d tmp %d num %llu", cases[i].name, kind, fc.tmp,
		              (unsigned long long)fc.num);
	}
	struct file_class fc;
	elog__file_classify("settings.tmp.4242.7", &fc);
	ck_assert_int_eq(fc.pid, 4242);
}
END_TEST

UT_TEST(seg_open_checks_the_header)
{
	char msg[ELOG_MSG_MAX];
	struct stat st;
	uint32_t flags = 99;
	int fd = 123;
	ut_seg_create(ut_top, 42);
	int dfd = open_top();
	ck_assert_int_eq(elog__seg_open(dfd, 42, O_RDONLY, &fd, &flags, &st, msg), 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_uint_eq(flags, 0);
	ck_assert_uint_eq((uint64_t)st.st_size, SEG_HDR);
	close(fd);

	ck_assert_int_eq(elog__seg_open(dfd, 43, O_RDONLY, &fd, NULL, NULL, msg), ENOENT);
	ck_assert_int_eq(fd, -1);
	ck_assert_str_eq(msg, "00000000000000000043.log: No such file or directory");

	ut_flip_bit(ut_seg_path(ut_top, 42, SEG_EXT), SEG_AT_BASE, 0);
	ck_assert_int_eq(elog__seg_open(dfd, 42, O_RDONLY, &fd, &flags, NULL, msg), ELOG_CORRUPT);
	ck_assert_int_eq(fd, -1);
	ck_assert_str_eq(msg, "00000000000000000042.log: bad segment header");

	ut_truncate(ut_seg_path(ut_top, 42, SEG_EXT), SEG_HDR - 1);
	ck_assert_int_eq(elog__seg_open(dfd, 42, O_RDONLY, &fd, &flags, NULL, msg), ELOG_CORRUPT);
	ck_assert_str_eq(msg, "00000000000000000042.log: truncated header");
	close(dfd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("segment");
	TCase *tc = ut_tcase("segment");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
