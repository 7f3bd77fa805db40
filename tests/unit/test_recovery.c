/*
 * test_recovery.c: what the writer does to a log before appending
 * (lib/recover.c): cutting the active segment at the first incomplete or
 * damaged record, refusing when the cut would lose acknowledged data, and
 * repairing the header of a segment created just before a crash.
 *
 * Each test writes a log with the writer, then changes its files the way a
 * crash (or a disk) could, then opens it again.
 */
#include <sys/file.h>

#include "unit.h"

#define N 10
/* Values "rec-000".."rec-009": every record is 28 + 7 = 35 bytes. */
#define RSZ 35u
#define POS(i) (SEG_HDR + RSZ * (uint64_t)(i))
#define SEG0 "00000000000000000000.log"

static char seg0[1200];

/* A log of N acknowledged records in one segment. */
static void make_log(void)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	char v[16];
	for (int i = 0; i < N; i++) {
		snprintf(v, sizeof v, "rec-%03d", i);
		ut_append(w, NULL, v);
	}
	ck_assert_int_eq(elog_close(w), 0);
	snprintf(seg0, sizeof seg0, "%s", ut_seg_path(ut_dir, 0, SEG_EXT));
	ck_assert_uint_eq(ut_file_size(seg0), POS(N));
	struct watermark wm = ut_get_wm(ut_dir);
	ck_assert_uint_eq(wm.durable_end, N);
	ck_assert_uint_eq(wm.segment_bytes, POS(N));
}

/* Append a valid record with this offset and value by hand. */
static uint64_t add_rec(const char *path, uint64_t off, const char *v)
{
	struct elog_record r = ut_rec(off, 1, 0, NULL, v);
	return ut_append_rec(path, &r);
}

static int try_open(elog **w)
{
	struct elog_options o = { 0 };
	return elog_open(w, ut_dir, &o);
}

static elog *must_open(void)
{
	elog *w;
	int rc = try_open(&w);
	ck_assert_msg(rc == 0, "elog_open: %d %s", rc, elog_errmsg(w));
	return w;
}

/* Read the whole log; check offsets 0..n-1 and return n.  Values of
 * offsets below N must be the original ones. */
static size_t check_readable(void)
{
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	size_t n = 0;
	int rc;
	char v[16];
	while ((rc = elog_reader_next(r, &rec)) == 0) {
		ck_assert_uint_eq(rec.offset, n);
		if (n < N) {
			snprintf(v, sizeof v, "rec-%03zu", n);
			ck_assert_uint_eq(rec.value_len, 7);
			ck_assert_mem_eq(rec.value, v, 7);
		}
		n++;
	}
	ck_assert_msg(rc == ELOG_END, "%d %s", rc, elog_reader_errmsg(r));
	elog_reader_close(r);
	return n;
}

/* After a cut to N records, the writer goes on at offset N and the new
 * record is the one read there. */
static void goes_on_at_n(elog *w)
{
	ck_assert_uint_eq(elog_next_offset(w), N);
	ck_assert_uint_eq(elog_durable_end(w), N);
	ck_assert_uint_eq(ut_append(w, NULL, "fresh"), N);
	ck_assert_int_eq(elog_close(w), 0);
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	ck_assert_int_eq(elog_reader_seek(r, N), 0);
	ck_assert_int_eq(elog_reader_next(r, &rec), 0);
	ck_assert_uint_eq(rec.offset, N);
	ck_assert_uint_eq(rec.value_len, 5);
	ck_assert_mem_eq(rec.value, "fresh", 5);
	ck_assert_int_eq(elog_reader_next(r, &rec), ELOG_END);
	elog_reader_close(r);
	ck_assert_uint_eq(check_readable(), N + 1);
}

/* ---- cuts that lose nothing acknowledged ---- */

UT_TEST(clean_reopen_changes_nothing)
{
	make_log();
	size_t len;
	unsigned char *before = ut_read_file(seg0, &len);
	elog *w = must_open();
	ck_assert_uint_eq(elog_next_offset(w), N);
	ck_assert_int_eq(elog_close(w), 0);
	size_t len2;
	unsigned char *after = ut_read_file(seg0, &len2);
	ck_assert_uint_eq(len, len2);
	ck_assert_mem_eq(before, after, len);
	free(before);
	free(after);
}
END_TEST

UT_TEST(truncated_tail_is_cut)
{
	make_log();
	struct elog_record r = ut_rec(N, 1, 0, NULL, "half a record");
	size_t size;
	unsigned char *p = ut_encode(&r, &size);
	ut_append_file(seg0, p, size / 2); /* cut mid-record */
	free(p);
	elog *w = must_open();
	ck_assert_uint_eq(ut_file_size(seg0), POS(N));
	goes_on_at_n(w);
}
END_TEST

UT_TEST(partial_length_field_is_cut)
{
	make_log();
	ut_append_file(seg0, "\x30\x00", 2);
	elog *w = must_open();
	ck_assert_uint_eq(ut_file_size(seg0), POS(N));
	goes_on_at_n(w);
}
END_TEST

/* The kernel writes pages back in any order: a crash can leave a hole of
 * zeros with intact records after it.  Those records were never
 * acknowledged and must go too. */
UT_TEST(zeros_then_valid_records_are_cut_at_the_zeros)
{
	make_log();
	unsigned char zeros[4096] = { 0 };
	ut_append_file(seg0, zeros, sizeof zeros);
	add_rec(seg0, N + 1, "ghost-1");
	add_rec(seg0, N + 2, "ghost-2");
	elog *w = must_open();
	ck_assert_uint_eq(ut_file_size(seg0), POS(N));
	/* The ghosts are gone: the next offsets are given afresh. */
	goes_on_at_n(w);
	size_t len;
	unsigned char *seg = ut_read_file(seg0, &len);
	ck_assert_ptr_null(memmem(seg, len, "ghost", 5));
	free(seg);
}
END_TEST

/* Zeros where the length is, then the rest of a record. */
UT_TEST(zeroed_record_start_is_cut)
{
	make_log();
	uint64_t at = add_rec(seg0, N, "rec-010");
	add_rec(seg0, N + 1, "rec-011");
	ut_write_at(seg0, at, "\0\0\0\0\0\0\0\0", 8);
	elog *w = must_open();
	ck_assert_uint_eq(ut_file_size(seg0), POS(N));
	goes_on_at_n(w);
}
END_TEST

/* The last record was written but not acknowledged (the watermark stops
 * before it), and one of its bits flipped. */
UT_TEST(flipped_bit_in_last_record_is_cut)
{
	make_log();
	ut_set_wm(ut_dir, N - 1, 0, POS(N - 1));
	ut_flip_bit(seg0, POS(N - 1) + 30, 2); /* in the value */
	elog *w = must_open();
	ck_assert_uint_eq(ut_file_size(seg0), POS(N - 1));
	ck_assert_uint_eq(elog_next_offset(w), N - 1);
	ck_assert_uint_eq(ut_append(w, NULL, "rec-009"), N - 1);
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert_uint_eq(check_readable(), N);
}
END_TEST

UT_TEST(flipped_bit_in_length_of_last_record_is_cut)
{
	make_log();
	ut_set_wm(ut_dir, N - 1, 0, POS(N - 1));
	ut_flip_bit(seg0, POS(N - 1) + 1, 0); /* length 31 + 256 */
	elog *w = must_open();
	ck_assert_uint_eq(ut_file_size(seg0), POS(N - 1));
	ck_assert_uint_eq(elog_next_offset(w), N - 1);
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

/* A record with an offset that does not increase is not one the writer
 * wrote there: it is cut like damage. */
UT_TEST(record_with_stale_offset_is_cut)
{
	make_log();
	add_rec(seg0, 3, "replayed");
	elog *w = must_open();
	ck_assert_uint_eq(ut_file_size(seg0), POS(N));
	goes_on_at_n(w);
}
END_TEST

/* Written, intact, but the watermark was not published before the crash:
 * kept, and durable (and published) from now on. */
UT_TEST(intact_records_beyond_watermark_are_kept)
{
	make_log();
	ut_set_wm(ut_dir, 6, 0, POS(6));
	/* Readers do not see them yet. */
	ck_assert_uint_eq(check_readable(), 6);
	elog *w = must_open();
	ck_assert_uint_eq(elog_next_offset(w), N);
	ck_assert_uint_eq(elog_durable_end(w), N);
	struct watermark wm = ut_get_wm(ut_dir);
	ck_assert_uint_eq(wm.durable_end, N);
	ck_assert_uint_eq(wm.segment_bytes, POS(N));
	ck_assert_uint_eq(check_readable(), N);
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

/* No watermark at all (a crash before the first publication): everything
 * intact is kept. */
UT_TEST(missing_watermark_keeps_intact_records)
{
	make_log();
	char p[1200];
	ck_assert_int_eq(unlink(ut_path(p, sizeof p, ut_dir, FN_WATERMARK)), 0);
	add_rec(seg0, N, "rec-010");
	ut_append_file(seg0, "junk", 4);
	elog *w = must_open();
	ck_assert_uint_eq(elog_next_offset(w), N + 1);
	ck_assert_uint_eq(ut_get_wm(ut_dir).durable_end, N + 1);
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert_uint_eq(check_readable(), N + 1);
}
END_TEST

/* ---- refusals: acknowledged data is damaged ---- */

static void assert_untouched(const unsigned char *before, size_t len)
{
	size_t len2;
	unsigned char *after = ut_read_file(seg0, &len2);
	ck_assert_uint_eq(len2, len);
	ck_assert_mem_eq(after, before, len);
	free(after);
}

UT_TEST(damage_below_watermark_is_refused)
{
	make_log();
	ut_flip_bit(seg0, POS(5) + 12, 7); /* in the offset of record 5 */
	size_t len;
	unsigned char *before = ut_read_file(seg0, &len);
	elog *w;
	ck_assert_int_eq(try_open(&w), ELOG_CORRUPT);
	char want[256];
	snprintf(want, sizeof want,
	         SEG0 ": damaged record at byte %llu, below the %llu "
	              "durable bytes (acknowledged data is damaged)",
	         (unsigned long long)POS(5), (unsigned long long)POS(N));
	ck_assert_str_eq(elog_errmsg(w), want);
	/* The refused handle refuses work, and closing it writes nothing. */
	struct elog_record r = ut_rec(0, 1, 0, NULL, "x");
	ck_assert_int_ne(elog_append(w, &r, NULL), 0);
	ck_assert_int_ne(elog_close(w), 0);
	assert_untouched(before, len);
	free(before);
	/* Readers see the records before it, then the same damage. */
	elog_reader *rd = ut_open_reader(ut_dir);
	struct elog_record rec;
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(elog_reader_next(rd, &rec), 0);
	ck_assert_int_eq(elog_reader_next(rd, &rec), ELOG_CORRUPT);
	snprintf(want, sizeof want, SEG0 ": corrupt record at byte %llu",
	         (unsigned long long)POS(5));
	ck_assert_str_eq(elog_reader_errmsg(rd), want);
	elog_reader_close(rd);
}
END_TEST

UT_TEST(truncation_mid_record_below_watermark_is_refused)
{
	make_log();
	ut_truncate(seg0, POS(7) + 10);
	elog *w;
	ck_assert_int_eq(try_open(&w), ELOG_CORRUPT);
	char want[64];
	snprintf(want, sizeof want, "at byte %llu", (unsigned long long)POS(7));
	ck_assert_ptr_nonnull(strstr(elog_errmsg(w), SEG0));
	ck_assert_msg(strstr(elog_errmsg(w), want) != NULL, "%s", elog_errmsg(w));
	elog_close(w);
	ck_assert_uint_eq(ut_file_size(seg0), POS(7) + 10);
}
END_TEST

UT_TEST(truncation_at_record_boundary_below_watermark_is_refused)
{
	make_log();
	ut_truncate(seg0, POS(8));
	elog *w;
	ck_assert_int_eq(try_open(&w), ELOG_CORRUPT);
	char want[256];
	snprintf(want, sizeof want,
	         SEG0 ": ends at byte %llu (offset 8), but the watermark "
	              "says %llu bytes (offset 10) are durable",
	         (unsigned long long)POS(8), (unsigned long long)POS(N));
	ck_assert_str_eq(elog_errmsg(w), want);
	elog_close(w);
	ck_assert_uint_eq(ut_file_size(seg0), POS(8));
}
END_TEST

UT_TEST(damaged_header_of_acknowledged_segment_is_refused)
{
	make_log();
	ut_flip_bit(seg0, 3, 0);
	size_t len;
	unsigned char *before = ut_read_file(seg0, &len);
	elog *w;
	ck_assert_int_eq(try_open(&w), ELOG_CORRUPT);
	char want[128];
	snprintf(want, sizeof want, SEG0 ": damaged header, but %llu bytes were acknowledged",
	         (unsigned long long)POS(N));
	ck_assert_str_eq(elog_errmsg(w), want);
	elog_close(w);
	assert_untouched(before, len);
	free(before);
}
END_TEST

UT_TEST(watermark_naming_missing_segment_is_refused)
{
	make_log();
	ut_set_wm(ut_dir, 50, 40, 500);
	elog *w;
	ck_assert_int_eq(try_open(&w), ELOG_CORRUPT);
	ck_assert_str_eq(
	        elog_errmsg(w),
	        "watermark: watermark names segment 00000000000000000040, which is missing");
	elog_close(w);
}
END_TEST

UT_TEST(no_segments_but_durable_records_is_refused)
{
	make_log();
	ck_assert_int_eq(unlink(seg0), 0);
	elog *w;
	ck_assert_int_eq(try_open(&w), ELOG_CORRUPT);
	ck_assert_str_eq(elog_errmsg(w),
	                 "no segment files, but the watermark says records are durable");
	elog_close(w);
}
END_TEST

/* ---- a segment created just before a crash ---- */

/* A log of two full segments plus, named after them, a new segment whose
 * header never became durable (the watermark still names the old one). */
static uint64_t make_rolled_log(const void *hdr, size_t hdr_len)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	char v[100];
	memset(v, 'q', 99);
	v[99] = '\0';
	for (int i = 0; i < 60; i++) /* 127 bytes each, 32 per segment */
		ut_append(w, NULL, v);
	uint64_t next = elog_next_offset(w);
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert_uint_eq(next, 60);
	struct watermark wm = ut_get_wm(ut_dir);
	ck_assert_uint_eq(wm.segment_base, 32);
	ut_write_file(ut_seg_path(ut_dir, next, SEG_EXT), hdr, hdr_len);
	return next;
}

static void torn_header_repaired(const void *hdr, size_t hdr_len)
{
	uint64_t next = make_rolled_log(hdr, hdr_len);
	ut_crashed(ut_dir);
	elog *w = must_open();
	const char *p = ut_seg_path(ut_dir, next, SEG_EXT);
	char path[1200];
	snprintf(path, sizeof path, "%s", p);
	ck_assert_uint_eq(ut_file_size(path), SEG_HDR);
	unsigned char *h = ut_read_file(path, NULL);
	ck_assert_int_eq(elog__seg_header_verify(h, SEG_HDR, next, NULL, NULL), 0);
	free(h);
	ck_assert_uint_eq(elog_next_offset(w), next);
	ck_assert_uint_eq(ut_append(w, NULL, "after the crash"), next);
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert_uint_gt(ut_file_size(path), SEG_HDR);
	elog_reader *r = ut_open_reader(ut_dir);
	uint64_t offs[100];
	ck_assert_uint_eq(ut_read_offsets(r, offs, 100), next + 1);
	for (uint64_t i = 0; i <= next; i++)
		ck_assert_uint_eq(offs[i], i);
	elog_reader_close(r);
}

UT_TEST(torn_header_of_new_segment_is_repaired)
{
	unsigned char h[SEG_HDR];
	elog__seg_header_encode(h, 60, 0, NULL);
	torn_header_repaired(h, 13);
}
END_TEST

UT_TEST(zeroed_header_of_new_segment_is_repaired)
{
	unsigned char z[SEG_HDR] = { 0 };
	torn_header_repaired(z, SEG_HDR);
}
END_TEST

UT_TEST(empty_new_segment_is_repaired)
{
	torn_header_repaired("", 0);
}
END_TEST

/* The same torn segment with a torn record after its header: nothing of
 * it was acknowledged, all of it goes. */
/* A crash between writing a new segment's header under its temporary
 * name and renaming it leaves "<base>.log.new": the next writer removes it
 * and the log goes on as if the roll had not begun. */
UT_TEST(segment_left_half_created_is_removed)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ut_append(w, NULL, "a");
	ck_assert_int_eq(elog_close(w), 0);
	char p[1200], q[1200];
	unsigned char hdr[SEG_HDR];
	elog__seg_header_encode(hdr, 1, 0, NULL);
	snprintf(q, sizeof q, "%s%s", ut_seg_path(ut_dir, 1, SEG_EXT), SEG_NEW_EXT);
	ut_write_file(q, hdr, SEG_HDR);
	ut_crashed(ut_dir);
	w = ut_open_writer(ut_dir, 0, 0);
	ck_assert(!ut_exists(q));
	ck_assert(!ut_exists(ut_seg_path(ut_dir, 1, SEG_EXT)));
	ck_assert_uint_eq(ut_append(w, NULL, "b"), 1);
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert(ut_exists(ut_path(p, sizeof p, ut_dir, "00000000000000000000.log")));
}
END_TEST

/* A process killed inside elog__fs_replace_file() leaves "<name>.tmp.<pid>.<n>":
 * the next writer removes one nobody holds a lock on and that has not
 * changed for minutes, and leaves alone one that a process holds (it may be
 * about to rename it; its pid may mean nothing here, from another pid
 * namespace) or that changed lately (an elog that did not lock them). */
static void backdate(const char *path)
{
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 3600;
	t[1] = t[0];
	ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

UT_TEST(temporary_files_of_dead_processes_are_removed)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ut_append(w, NULL, "a");
	ck_assert_int_eq(elog_close(w), 0);
	char dead[1200], held[1200], fresh[1200];
	ut_path(dead, sizeof dead, ut_dir, "00000000000000000000.idx.tmp.7.0");
	ut_write_file(dead, "x", 1);
	backdate(dead);
	ut_path(held, sizeof held, ut_dir, "consumers.json.tmp.7.3");
	ut_write_file(held, "y", 1);
	backdate(held);
	int hfd = open(held, O_RDONLY);
	ck_assert_int_ge(hfd, 0);
	ck_assert_int_eq(flock(hfd, LOCK_EX), 0);
	ut_path(fresh, sizeof fresh, ut_dir, "settings.tmp.7.0");
	ut_write_file(fresh, "z", 1);
	ut_crashed(ut_dir);
	w = ut_open_writer(ut_dir, 0, 0);
	ck_assert(!ut_exists(dead));
	ck_assert(ut_exists(held));
	ck_assert(ut_exists(fresh));
	ck_assert_int_eq(elog_close(w), 0);
	close(hfd);
}
END_TEST

UT_TEST(torn_header_with_garbage_after_it_is_repaired)
{
	unsigned char b[SEG_HDR + 50];
	memset(b, 0x5A, sizeof b);
	torn_header_repaired(b, sizeof b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("recovery");
	TCase *tc = ut_tcase("recovery");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
