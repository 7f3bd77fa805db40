/*
 * test_scan.c: reading a segment's records in order through a buffer
 * (lib/scan.c): clean ends, limits, cut and damaged records, seeks, and
 * records larger than the buffer.
 */
#include "unit.h"

/* Segment 0 of dir with records 0..n-1, values "v<offset>"; returns the
 * open descriptor, its size in *size. */
static int segment_of(int n, uint64_t *size)
{
	uint64_t *offs = malloc((size_t)n * sizeof *offs);
	ck_assert_ptr_nonnull(offs);
	for (int i = 0; i < n; i++)
		offs[i] = (uint64_t)i;
	ut_seg_create(ut_top, 0);
	*size = ut_seg_fill(ut_top, 0, offs, (size_t)n, 0);
	free(offs);
	int fd = open(ut_seg_path(ut_top, 0, SEG_EXT), O_RDONLY);
	ck_assert_int_ge(fd, 0);
	return fd;
}

UT_TEST(reads_every_record_then_ends)
{
	uint64_t size, at;
	int fd = segment_of(10, &size);
	struct scan s;
	struct elog_record rec;
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), 0);
	for (int i = 0; i < 10; i++) {
		ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
		ck_assert_uint_eq(rec.offset, (uint64_t)i);
		ck_assert_uint_eq(at, SEG_HDR + (uint64_t)i * elog__rec_size(0, 2));
	}
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_END);
	ck_assert_uint_eq(at, size);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_END); /* and stays there */
	elog__scan_free(&s);
	close(fd);
}
END_TEST

UT_TEST(stops_at_the_limit)
{
	uint64_t size, at;
	int fd = segment_of(10, &size);
	struct scan s;
	struct elog_record rec;
	uint64_t limit = SEG_HDR + 3 * elog__rec_size(0, 2);
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, limit), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_END);
	ck_assert_uint_eq(at, limit);
	/* A limit inside a record reads as a record cut short. */
	s.limit = limit + 5;
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_CORRUPT);
	ck_assert_int_eq(elog__scan_truncated(&s), 1);
	elog__scan_free(&s);
	close(fd);
}
END_TEST

UT_TEST(cut_tail_is_truncated_and_damage_is_not)
{
	uint64_t size, at;
	int fd = segment_of(4, &size);
	close(fd);
	ut_truncate(ut_seg_path(ut_top, 0, SEG_EXT), size - 3);
	fd = open(ut_seg_path(ut_top, 0, SEG_EXT), O_RDONLY);
	struct scan s;
	struct elog_record rec;
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_CORRUPT);
	ck_assert_int_eq(elog__scan_truncated(&s), 1);
	ck_assert_uint_eq(at, SEG_HDR + 3 * elog__rec_size(0, 2));
	elog__scan_free(&s);
	close(fd);

	/* A flipped bit in the second record: damage, not a short tail. */
	ut_flip_bit(ut_seg_path(ut_top, 0, SEG_EXT), SEG_HDR + elog__rec_size(0, 2) + 20, 0);
	fd = open(ut_seg_path(ut_top, 0, SEG_EXT), O_RDONLY);
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), 0);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_CORRUPT);
	ck_assert_int_eq(elog__scan_truncated(&s), 0);
	ck_assert_uint_eq(at, SEG_HDR + elog__rec_size(0, 2));
	elog__scan_free(&s);
	close(fd);
}
END_TEST

UT_TEST(seek_back_and_forth)
{
	uint64_t size, at;
	int fd = segment_of(20, &size);
	struct scan s;
	struct elog_record rec;
	uint64_t r = elog__rec_size(0, 3); /* "v10" and on */
	uint64_t pos15 = SEG_HDR + 10 * elog__rec_size(0, 2) + 5 * r;
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), 0);
	elog__scan_seek(&s, pos15);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_uint_eq(rec.offset, 15);
	ck_assert_uint_eq(at, pos15);
	elog__scan_seek(&s, SEG_HDR); /* back, inside what is buffered or not */
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_uint_eq(rec.offset, 0);
	elog__scan_seek(&s, pos15);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_uint_eq(rec.offset, 15);
	elog__scan_free(&s);
	close(fd);
}
END_TEST

/* Records are checked several at a time, ahead of the one asked for: the
 * good ones before a damaged record still come out one by one, and the
 * damaged one is reported where it lies, also after a seek back. */
UT_TEST(damage_after_good_records_read_at_once)
{
	uint64_t size, at;
	int fd = segment_of(12, &size);
	close(fd);
	uint64_t r = elog__rec_size(0, 2);
	ut_flip_bit(ut_seg_path(ut_top, 0, SEG_EXT), SEG_HDR + 6 * r + REC_HDR + 1, 3);
	fd = open(ut_seg_path(ut_top, 0, SEG_EXT), O_RDONLY);
	struct scan s;
	struct elog_record rec;
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = pass * 2; i < 6; i++) {
			ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
			ck_assert_uint_eq(rec.offset, (uint64_t)i);
		}
		ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_CORRUPT);
		ck_assert_int_eq(elog__scan_truncated(&s), 0);
		ck_assert_uint_eq(at, SEG_HDR + 6 * r);
		elog__scan_seek(&s, SEG_HDR + 2 * r);
	}
	elog__scan_free(&s);
	close(fd);
}
END_TEST

/* A length or key length out of bounds ahead stops the check there. */
UT_TEST(bad_lengths_ahead)
{
	static const struct {
		uint64_t at;
		unsigned char v[4];
		size_t n;
	} bad[] = {
		{ 0, { 0xff, 0xff, 0xff, 0x7f }, 4 }, /* length past the maximum */
		{ 0, { 3, 0, 0, 0 }, 4 },             /* length below the fixed fields */
		{ 26, { 0xff, 0xff }, 2 },            /* key longer than the record */
	};
	uint64_t r = elog__rec_size(0, 2);
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		uint64_t size, at;
		int fd = segment_of(10, &size);
		close(fd);
		ut_write_at(ut_seg_path(ut_top, 0, SEG_EXT), SEG_HDR + 4 * r + bad[k].at, bad[k].v,
		            bad[k].n);
		fd = open(ut_seg_path(ut_top, 0, SEG_EXT), O_RDONLY);
		struct scan s;
		struct elog_record rec;
		ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), 0);
		for (int i = 0; i < 4; i++) {
			ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
			ck_assert_uint_eq(rec.offset, (uint64_t)i);
		}
		ck_assert_msg(elog__scan_next(&s, &rec, &at) == ELOG_CORRUPT, "case %zu", k);
		ck_assert_uint_eq(at, SEG_HDR + 4 * r);
		elog__scan_free(&s);
		close(fd);
	}
}
END_TEST

/* What was checked ahead is forgotten by a seek, even into the bytes
 * buffered: a position off a record's start (a wrong index entry) reads
 * as damage, never as a record. */
UT_TEST(seek_inside_checked_records_checks_again)
{
	uint64_t size, at;
	int fd = segment_of(10, &size);
	uint64_t r = elog__rec_size(0, 2);
	struct scan s;
	struct elog_record rec;
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), 0);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	for (uint64_t skew = 1; skew < r; skew++) {
		elog__scan_seek(&s, SEG_HDR + 2 * r + skew);
		ck_assert_msg(elog__scan_next(&s, &rec, &at) == ELOG_CORRUPT, "skew %llu",
		              (unsigned long long)skew);
	}
	elog__scan_seek(&s, SEG_HDR + 2 * r);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_uint_eq(rec.offset, 2);
	elog__scan_free(&s);
	close(fd);
}
END_TEST

/* A limit lowered below records already checked ahead still ends the
 * scan there (the reader moves the limit with the watermark). */
UT_TEST(limit_lowered_below_checked_records)
{
	uint64_t size, at;
	int fd = segment_of(10, &size);
	uint64_t r = elog__rec_size(0, 2);
	struct scan s;
	struct elog_record rec;
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), 0);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	s.limit = SEG_HDR + 3 * r;
	for (int i = 1; i < 3; i++)
		ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_END);
	ck_assert_uint_eq(at, SEG_HDR + 3 * r);
	s.limit = UINT64_MAX;
	for (int i = 3; i < 10; i++) {
		ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
		ck_assert_uint_eq(rec.offset, (uint64_t)i);
	}
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_END);
	elog__scan_free(&s);
	close(fd);
}
END_TEST

/* A scan that seeks reads, and allocates, a few KiB; reading on from there
 * grows its buffer read by read, records across each growth intact. */
UT_TEST(seek_reads_little_then_grows)
{
	enum { N = 6000 };
	uint64_t size;
	int fd = segment_of(N, &size);
	struct scan s;
	struct elog_record rec;
	uint64_t at, pos = SEG_HDR;
	for (int i = 0; i < 5000; i++)
		pos += elog__rec_size(0, (size_t)snprintf(NULL, 0, "v%d", i));
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, size), 0);
	elog__scan_seek(&s, pos);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_uint_eq(rec.offset, 5000);
	ck_assert_uint_le(s.cap, 16u << 10);
	elog__scan_seek(&s, SEG_HDR);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
		ck_assert_uint_eq(rec.offset, (uint64_t)i);
		char v[16];
		ck_assert_int_eq(rec.value_len, (size_t)snprintf(v, sizeof v, "v%d", i));
		ck_assert_mem_eq(rec.value, v, rec.value_len);
	}
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_END);
	ck_assert_uint_eq(at, size);
	ck_assert_uint_gt(s.cap, 16u << 10);
	elog__scan_free(&s);
	close(fd);
}
END_TEST

/* Reading on, records are checked many at a time (SCAN_AHEAD); a seek,
 * which comes for one record, checks only a few (SCAN_NEAR) and reads on
 * from there as any scan does. */
UT_TEST(checks_many_ahead_reading_on_few_after_a_seek)
{
	enum { N = 3000 };
	uint64_t size;
	int fd = segment_of(N, &size);
	struct scan s;
	struct elog_record rec;
	uint64_t at, r2 = elog__rec_size(0, 2), r3 = elog__rec_size(0, 3);
	uint64_t r4 = elog__rec_size(0, 4);
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, size), 0);
	size_t got;
	ck_assert_int_eq(elog__scan_read_head(&s, s.cap, &got), 0);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	/* values "v0".."v9" are 2 bytes, "v10".."v99" 3, then 4, then 5 */
	ck_assert_uint_eq(s.vend - SEG_HDR, 10 * r2 + 54 * r3);
	uint64_t pos = SEG_HDR + 10 * r2 + 90 * r3 + 900 * r4;
	elog__scan_seek(&s, pos);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_uint_eq(rec.offset, 1000);
	ck_assert_uint_eq(s.vend - pos, 8 * elog__rec_size(0, 5));
	for (int i = 1001; i < N; i++) {
		ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
		ck_assert_uint_eq(rec.offset, (uint64_t)i);
	}
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_END);
	elog__scan_free(&s);
	close(fd);
}
END_TEST

UT_TEST(record_larger_than_the_buffer)
{
	size_t big = 3u << 20;
	char *v = malloc(big);
	ck_assert_ptr_nonnull(v);
	memset(v, 'z', big);
	ut_seg_create(ut_top, 0);
	struct elog_record a = ut_rec(0, 1, 0, "k", "small");
	struct elog_record b = { .offset = 1, .ts_ms = 2, .value = v, .value_len = big };
	ut_append_rec(ut_seg_path(ut_top, 0, SEG_EXT), &a);
	ut_append_rec(ut_seg_path(ut_top, 0, SEG_EXT), &b);
	int fd = open(ut_seg_path(ut_top, 0, SEG_EXT), O_RDONLY);
	struct scan s;
	struct elog_record rec;
	uint64_t at;
	ck_assert_int_eq(elog__scan_init(&s, fd, 0, SEG_HDR, UINT64_MAX), 0);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), 0);
	ck_assert_uint_eq(rec.value_len, big);
	ck_assert_mem_eq(rec.value, v, big);
	ck_assert_int_eq(elog__scan_next(&s, &rec, &at), ELOG_END);
	elog__scan_free(&s);
	close(fd);
	free(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("scan");
	TCase *tc = ut_tcase("scan");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
