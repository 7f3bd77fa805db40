/*
 * test_watermark.c: the durable watermark (lib/watermark.c).
 */
#include "unit.h"

UT_TEST(encode_layout)
{
	unsigned char b[WM_SIZE];
	struct watermark wm = { 0x1122334455667788ull, 300, 4096 };
	elog__wm_encode(b, &wm);
	ck_assert_mem_eq(b, "ELOGWMK\n", 8);
	ck_assert_uint_eq(get64(b + 8), 0x1122334455667788ull);
	ck_assert_uint_eq(b[8], 0x88); /* little-endian */
	ck_assert_uint_eq(get64(b + 16), 300);
	ck_assert_uint_eq(get64(b + 24), 4096);
	ck_assert_uint_eq(get32(b + 32), elog__crc32c(0, b, 32));
	ck_assert_uint_eq(get32(b + 36), 0);
}
END_TEST

UT_TEST(round_trip)
{
	unsigned char b[WM_SIZE];
	struct watermark in = { UINT64_MAX, 12, 34 }, out;
	elog__wm_encode(b, &in);
	memset(&out, 0, sizeof out);
	UT_OK(elog__wm_decode(b, WM_SIZE, &out), NULL);
	ck_assert_uint_eq(out.durable_end, UINT64_MAX);
	ck_assert_uint_eq(out.segment_base, 12);
	ck_assert_uint_eq(out.segment_bytes, 34);
}
END_TEST

/* A torn update: the new durable end with the old CRC. */
UT_TEST(torn_is_corrupt)
{
	unsigned char old[WM_SIZE], neu[WM_SIZE], mix[WM_SIZE];
	struct watermark a = { 10, 0, 500 }, b = { 20, 0, 900 }, out = { 1, 2, 3 };
	elog__wm_encode(old, &a);
	elog__wm_encode(neu, &b);
	memcpy(mix, neu, 16);
	memcpy(mix + 16, old + 16, WM_SIZE - 16);
	UT_RC(elog__wm_decode(mix, WM_SIZE, &out), ELOG_CORRUPT, NULL);
	/* Nothing was filled in. */
	ck_assert_uint_eq(out.durable_end, 1);
	for (int byte = 0; byte < 36; byte++) {
		memcpy(mix, old, WM_SIZE);
		mix[byte] ^= 0x01;
		ck_assert_msg(elog__wm_decode(mix, WM_SIZE, &out) == ELOG_CORRUPT, "byte %d", byte);
	}
}
END_TEST

UT_TEST(short_is_corrupt)
{
	unsigned char b[WM_SIZE];
	struct watermark wm = { 1, 0, 100 }, out;
	elog__wm_encode(b, &wm);
	UT_RC(elog__wm_decode(b, WM_SIZE - 1, &out), ELOG_CORRUPT, NULL);
	UT_RC(elog__wm_decode(b, 0, &out), ELOG_CORRUPT, NULL);
}
END_TEST

static int open_wm(void)
{
	char p[1200];
	int fd = open(ut_path(p, sizeof p, ut_top, FN_WATERMARK), O_RDWR | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	return fd;
}

UT_TEST(read_empty_is_zero)
{
	int fd = open_wm();
	struct watermark wm = { 5, 5, 5 };
	UT_OK(elog__wm_read(fd, &wm), NULL);
	ck_assert_uint_eq(wm.durable_end, 0);
	ck_assert_uint_eq(wm.segment_base, 0);
	ck_assert_uint_eq(wm.segment_bytes, 0);
	close(fd);
}
END_TEST

UT_TEST(write_then_read)
{
	int fd = open_wm();
	struct watermark a = { 77, 70, 1234 }, b = { 80, 70, 1500 }, out;
	UT_OK(elog__wm_write(fd, &a), NULL);
	UT_OK(elog__wm_read(fd, &out), NULL);
	ck_assert_uint_eq(out.durable_end, 77);
	/* Rewritten in place: the file stays 40 bytes. */
	UT_OK(elog__wm_write(fd, &b), NULL);
	UT_OK(elog__wm_read(fd, &out), NULL);
	ck_assert_uint_eq(out.durable_end, 80);
	ck_assert_uint_eq(out.segment_bytes, 1500);
	char p[1200];
	ck_assert_uint_eq(ut_file_size(ut_path(p, sizeof p, ut_top, FN_WATERMARK)), WM_SIZE);
	close(fd);
}
END_TEST

UT_TEST(read_damaged_gives_up)
{
	int fd = open_wm();
	struct watermark a = { 77, 70, 1234 }, out;
	UT_OK(elog__wm_write(fd, &a), NULL);
	char p[1200];
	ut_flip_bit(ut_path(p, sizeof p, ut_top, FN_WATERMARK), 9, 3);
	UT_RC(elog__wm_read(fd, &out), ELOG_CORRUPT, NULL);
	/* A file cut short is damaged too, not a torn read to wait out. */
	UT_OK(elog__wm_write(fd, &a), NULL);
	ut_truncate(p, 20);
	UT_RC(elog__wm_read(fd, &out), ELOG_CORRUPT, NULL);
	close(fd);
}
END_TEST

/* The watermark is never synced: a power loss may leave it garbled.  Then
 * a reader takes what is surely durable, the closed segments, and the
 * writer recovers the active one from its records. */
UT_TEST(damaged_watermark_falls_back_to_closed_segments)
{
	elog *w = ut_open_writer(ut_dir, 4096, 0);
	for (int i = 0; i < 300; i++)
		ut_append(w, NULL, "a value of some forty bytes, give or take");
	UT_OK(elog_close(w), NULL);
	char p[1200];
	ut_flip_bit(ut_path(p, sizeof p, ut_dir, FN_WATERMARK), 12, 0);

	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	ck_assert_uint_gt(sl.n, 2);
	uint64_t newest = sl.base[sl.n - 1];
	elog__seglist_free(&sl);
	close(dfd);

	elog_reader *r = ut_open_reader(ut_dir);
	UT_OK(elog_reader_seek_begin(r), r);
	uint64_t offs[400];
	size_t n = ut_read_offsets(r, offs, 400);
	ck_assert_uint_eq(n, newest);
	ck_assert_uint_eq(elog_reader_durable_end(r), newest);
	elog_reader_close(r);

	w = ut_open_writer(ut_dir, 4096, 0);
	ck_assert_uint_eq(elog_next_offset(w), 300);
	UT_OK(elog_close(w), NULL);
	r = ut_open_reader(ut_dir);
	UT_OK(elog_reader_seek_begin(r), r);
	ck_assert_uint_eq(ut_read_offsets(r, offs, 400), 300);
	elog_reader_close(r);
}
END_TEST

/* A power loss may leave a watermark older than the segments: it names
 * segment 0 as the active one with its length then, but the writer has
 * since rolled to segment 10 and compaction rewrote segment 0, so that
 * length now ends inside a record.  Segment 0 has a successor, so it is
 * closed and read whole, up to the watermark's durable end. */
UT_TEST(stale_watermark_naming_a_rewritten_segment)
{
	uint64_t kept[] = { 0, 2, 4, 6, 8, 9 }, next[] = { 10, 11, 12 };
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	uint64_t upto4 = ut_seg_fill(ut_dir, 0, kept, 3, 0);
	ut_seg_fill(ut_dir, 0, kept + 3, 3, 0);
	ut_seg_create(ut_dir, 10);
	ut_seg_fill(ut_dir, 10, next, 3, 0);
	ut_set_wm(ut_dir, 5, 0, upto4 + 5);

	elog_reader *r = ut_open_reader(ut_dir);
	UT_OK(elog_reader_seek_begin(r), r);
	uint64_t offs[8];
	ck_assert_uint_eq(ut_read_offsets(r, offs, 8), 3);
	ck_assert_uint_eq(offs[2], 4);
	elog_reader_close(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("watermark");
	TCase *tc = ut_tcase("watermark");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
