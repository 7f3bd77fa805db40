/*
 * test_salvage.c: elog_salvage() (lib/salvage.c) on closed segments damaged
 * by hand, the file "salvaged" (lib/holes.c), and the gap readers report
 * for its ranges (lib/reader.c).
 */
#include "unit.h"

#define TS0 1764385200000LL

/* The first n bytes of path into buf. */
static void read_head(const char *path, unsigned char *buf, size_t n)
{
	size_t len;
	unsigned char *all = ut_read_file(path, &len);
	ck_assert_uint_ge(len, n);
	memcpy(buf, all, n);
	free(all);
}

/* Segment 0 holds offsets 0..9, closed; segment 10 holds 10..11. */
static void two_segments(void)
{
	uint64_t a[10], b[2] = { 10, 11 };
	for (int i = 0; i < 10; i++)
		a[i] = (uint64_t)i;
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	ut_seg_fill(ut_dir, 0, a, 10, TS0);
	ut_seg_create(ut_dir, 10);
	uint64_t size = ut_seg_fill(ut_dir, 10, b, 2, TS0);
	ut_set_wm(ut_dir, 12, 10, size);
}

/* Record i of segment 0 starts here: every record is the same size. */
static uint64_t rec_pos(int i)
{
	return SEG_HDR + (uint64_t)i * elog__rec_size(0, 2);
}

static void read_all(uint64_t *offs, size_t *n, uint64_t *gf, uint64_t *gl, int *cause)
{
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	int rc;
	*n = 0;
	*cause = 0;
	while ((rc = elog_reader_next(r, &rec)) != ELOG_END) {
		if (rc == ELOG_GAP) {
			elog_reader_gap(r, gf, gl);
			*cause = elog_reader_gap_cause(r);
			continue;
		}
		ck_assert_int_eq(rc, 0);
		offs[(*n)++] = rec.offset;
	}
	elog_reader_close(r);
}

UT_TEST(salvage_keeps_every_good_record_and_readers_see_the_gap)
{
	struct elog_salvage_result res;
	uint64_t offs[32], gf = 0, gl = 0;
	size_t n;
	int cause;
	char msg[ELOG_MSG_MAX];

	two_segments();
	ut_flip_bit(ut_seg_path(ut_dir, 0, SEG_EXT), rec_pos(3) + 10, 2);
	ut_flip_bit(ut_seg_path(ut_dir, 0, SEG_EXT), rec_pos(4) + 10, 2);
	ck_assert_int_eq(elog_salvage(ut_dir, NULL, &res, msg), 0);
	ck_assert_uint_eq(res.segments, 1);
	ck_assert_uint_eq(res.ranges, 1);
	ck_assert_uint_eq(res.bytes, 2 * elog__rec_size(0, 2));
	read_all(offs, &n, &gf, &gl, &cause);
	ck_assert_uint_eq(n, 10);
	ck_assert_uint_eq(offs[2], 2);
	ck_assert_uint_eq(offs[3], 5);
	ck_assert_uint_eq(gf, 3);
	ck_assert_uint_eq(gl, 4);
	ck_assert_int_eq(cause, ELOG_GAP_DAMAGE);

	struct elog_verify_result vr;
	ck_assert_int_eq(elog_verify(ut_dir, NULL, &vr, NULL), 0);
	ck_assert_uint_eq(vr.damage, 0);
}
END_TEST

/* What the salvage callback was given. */
struct salvage_seen {
	int calls;
	uint64_t pos, bytes, first, last;
	int lost;
	char segment[64];
};

static void on_salvage(void *arg, const struct elog_salvage_report *rep)
{
	struct salvage_seen *s = arg;
	s->calls++;
	s->pos = rep->pos;
	s->bytes = rep->bytes;
	s->lost = rep->lost;
	s->first = rep->first;
	s->last = rep->last;
	snprintf(s->segment, sizeof s->segment, "%s", rep->segment);
}

/* The callback convention (elog(3), Callbacks): each in the options,
 * called with arg first, once per damaged range. */
UT_TEST(salvage_reports_each_range_through_its_options)
{
	struct salvage_seen seen = { 0 };
	struct elog_salvage_opts o = { .each = on_salvage, .arg = &seen };
	char msg[ELOG_MSG_MAX], name[ELOG_SEGMENT_NAME_MAX];

	two_segments();
	ut_flip_bit(ut_seg_path(ut_dir, 0, SEG_EXT), rec_pos(3) + 10, 2);
	UT_OK(elog_salvage(ut_dir, &o, NULL, msg), msg);
	ck_assert_int_eq(seen.calls, 1);
	elog_segment_name(name, 0);
	ck_assert_str_eq(seen.segment, name);
	ck_assert_uint_eq(seen.pos, rec_pos(3));
	ck_assert_uint_eq(seen.bytes, elog__rec_size(0, 2));
	ck_assert_int_eq(seen.lost, 1);
	ck_assert_uint_eq(seen.first, 3);
	ck_assert_uint_eq(seen.last, 3);
}
END_TEST

UT_TEST(a_damaged_header_is_rebuilt_and_every_record_kept)
{
	struct elog_salvage_result res;
	uint64_t offs[32], gf = 0, gl = 0;
	size_t n;
	int cause;
	char msg[ELOG_MSG_MAX];
	unsigned char hdr[SEG_HDR], good[SEG_HDR];

	two_segments();
	const char *seg = ut_seg_path(ut_dir, 0, SEG_EXT);
	read_head(seg, good, SEG_HDR);
	ut_flip_bit(seg, SEG_AT_BASE, 0); /* the base no longer matches */
	struct elog_verify_result vr;
	ck_assert_int_eq(elog_verify(ut_dir, NULL, &vr, NULL), 0);
	ck_assert_uint_gt(vr.damage, 0);
	ck_assert_msg(elog_salvage(ut_dir, NULL, &res, msg) == 0, "%s", msg);
	ck_assert_uint_eq(res.segments, 1);
	ck_assert_uint_eq(res.ranges, 1);
	ck_assert_uint_eq(res.bytes, SEG_HDR);
	/* Rebuilt in this version's format (the segment was of version 1):
	 * the same base and flags, and a seal naming the next segment. */
	read_head(seg, hdr, SEG_HDR);
	ck_assert_mem_ne(hdr, good, SEG_HDR);
	struct elog_settings set;
	ck_assert_int_eq(elog_settings_read(ut_dir, &set, NULL), 0);
	elog__seg_header_encode(good, 0, elog__seg_header_flags(good), set.id);
	ck_assert_mem_eq(hdr, good, SEG_HDR);
	size_t len;
	unsigned char *all = ut_read_file(seg, &len);
	struct seal seal;
	ck_assert_int_eq(elog__seal_decode(all + len - SEAL_SIZE, 0, len - SEAL_SIZE, &seal), 0);
	ck_assert_uint_gt(seal.next, 0);
	free(all);
	read_all(offs, &n, &gf, &gl, &cause);
	ck_assert_uint_eq(n, 12);
	ck_assert_int_eq(cause, 0); /* no gap: the header held no offset */
	ck_assert_int_eq(elog_verify(ut_dir, NULL, &vr, NULL), 0);
	ck_assert_uint_eq(vr.damage, 0);
}
END_TEST

UT_TEST(a_header_of_a_newer_version_is_not_rebuilt)
{
	char msg[ELOG_MSG_MAX];
	unsigned char hdr[SEG_HDR];

	two_segments();
	const char *seg = ut_seg_path(ut_dir, 0, SEG_EXT);
	read_head(seg, hdr, SEG_HDR);
	put32(hdr + SEG_AT_VERSION, SEG_VERSION + 1);
	put32(hdr + SEG_AT_CRC, elog__crc32c(0, hdr, SEG_AT_CRC));
	ut_write_at(seg, 0, hdr, SEG_HDR);
	ck_assert_int_eq(elog_salvage(ut_dir, NULL, NULL, msg), ELOG_BADVERSION);
	ck_assert_str_eq(msg, "00000000000000000000.log: unsupported segment version");
}
END_TEST

UT_TEST(salvage_of_a_sound_log_changes_nothing)
{
	struct elog_salvage_result res;
	two_segments();
	size_t before_len, after_len;
	unsigned char *before = ut_read_file(ut_seg_path(ut_dir, 0, SEG_EXT), &before_len);
	ck_assert_int_eq(elog_salvage(ut_dir, NULL, &res, NULL), 0);
	ck_assert_uint_eq(res.segments, 0);
	unsigned char *after = ut_read_file(ut_seg_path(ut_dir, 0, SEG_EXT), &after_len);
	ck_assert_uint_eq(before_len, after_len);
	ck_assert(memcmp(before, after, before_len) == 0);
	free(before);
	free(after);
}
END_TEST

/* What elog_verify() says salvage would keep and lose comes from a dry
 * run of the same scan: it must be what elog_salvage() then does. */
UT_TEST(a_dry_run_plan_is_what_salvage_then_does)
{
	struct elog_salvage_result res;
	struct salvage_plan p = { .count_only = 1 };
	char msg[ELOG_MSG_MAX];
	uint64_t offs[32], gf = 0, gl = 0;
	size_t n;
	int cause;

	two_segments();
	ut_flip_bit(ut_seg_path(ut_dir, 0, SEG_EXT), rec_pos(3) + 10, 2);
	ut_flip_bit(ut_seg_path(ut_dir, 0, SEG_EXT), rec_pos(4) + 10, 2);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	p.next = 3; /* after the last good record, 2 */
	ck_assert_msg(elog__salvage_plan_segment(dfd, 0, rec_pos(3), UINT64_MAX, UINT64_MAX, 10, &p,
	                                         msg) == 0,
	              "%s", msg);
	close(dfd);
	ck_assert_ptr_null(p.keep); /* a dry run copies nothing */
	ck_assert_uint_eq(p.records, 5);
	ck_assert_uint_eq(p.next, 10);
	ck_assert_uint_eq(p.nd, 1);
	ck_assert_uint_eq(p.d[0].pos, rec_pos(3));
	ck_assert_uint_eq(p.d[0].bytes, 2 * elog__rec_size(0, 2));
	ck_assert_uint_eq(p.d[0].first, 3);
	ck_assert_uint_eq(p.d[0].last, 4);
	elog__salvage_plan_free(&p);

	ck_assert_int_eq(elog_salvage(ut_dir, NULL, &res, msg), 0);
	ck_assert_uint_eq(res.ranges, 1);
	ck_assert_uint_eq(res.bytes, 2 * elog__rec_size(0, 2));
	read_all(offs, &n, &gf, &gl, &cause);
	ck_assert_uint_eq(n, 3 + 5 + 2);
	ck_assert_uint_eq(gf, 3);
	ck_assert_uint_eq(gl, 4);
}
END_TEST

/* Damage at the end of a segment's records: its offsets run to the next
 * segment's base, and no good record follows. */
UT_TEST(a_plan_of_damage_at_the_end_loses_up_to_the_bound)
{
	struct salvage_plan p = { 0 };
	char msg[ELOG_MSG_MAX];
	two_segments();
	ut_flip_bit(ut_seg_path(ut_dir, 0, SEG_EXT), rec_pos(9) + 10, 2);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	p.next = 0;
	ck_assert_msg(elog__salvage_plan_segment(dfd, 0, SEG_HDR, UINT64_MAX, UINT64_MAX, 10, &p,
	                                         msg) == 0,
	              "%s", msg);
	close(dfd);
	ck_assert_uint_eq(p.records, 9);
	ck_assert_uint_eq(p.klen, rec_pos(9)); /* the header and 9 records */
	ck_assert_uint_eq(p.llen, elog__rec_size(0, 2));
	ck_assert_uint_eq(p.nd, 1);
	ck_assert_uint_eq(p.d[0].first, 9);
	ck_assert_uint_eq(p.d[0].last, 9);
	elog__salvage_plan_free(&p);
}
END_TEST

/* elog_salvage() works under the maintenance lock, beside the writer: the
 * active segment is elog_verify()'s, with ELOG_VERIFY_SALVAGE
 * (test_verify.c). */
UT_TEST(the_active_segment_is_not_salvaged)
{
	struct elog_salvage_result res;
	two_segments();
	ut_flip_bit(ut_seg_path(ut_dir, 10, SEG_EXT), SEG_HDR + 10, 1);
	ck_assert_int_eq(elog_salvage(ut_dir, NULL, &res, NULL), 0);
	ck_assert_uint_eq(res.segments, 0);
}
END_TEST

UT_TEST(holes_merge_and_find)
{
	struct holes h = { 0 };
	uint64_t a, b;

	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(elog__holes_load(dfd, &h), 0);
	ck_assert_uint_eq(h.n, 0);
	ck_assert_int_eq(elog__holes_add(dfd, 20, 29, TS0), 0);
	ck_assert_int_eq(elog__holes_add(dfd, 5, 7, TS0), 0);
	ck_assert_int_eq(elog__holes_add(dfd, 25, 34, TS0), 0);
	ck_assert_int_eq(elog__holes_load(dfd, &h), 0);
	ck_assert_uint_eq(h.n, 2);
	ck_assert_uint_eq(h.v[0].first, 5);
	ck_assert_uint_eq(h.v[1].first, 20);
	ck_assert_uint_eq(h.v[1].last, 34);
	ck_assert_int_eq(elog__holes_find(&h, 0, 4, &a, &b), 0);
	ck_assert_int_eq(elog__holes_find(&h, 6, 40, &a, &b), 1);
	ck_assert_uint_eq(a, 6);
	ck_assert_uint_eq(b, 7);
	ck_assert_int_eq(elog__holes_find(&h, 8, 22, &a, &b), 1);
	ck_assert_uint_eq(a, 20);
	ck_assert_uint_eq(b, 22);
	elog__holes_free(&h);
	char p[1200];
	ut_write_file(ut_path(p, sizeof p, ut_dir, FN_SALVAGED), "elog-salvaged 1\n9 3 1\n", 22);
	ck_assert_int_eq(elog__holes_load(dfd, &h), ELOG_CORRUPT);
	close(dfd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("salvage");
	TCase *tc = ut_tcase("salvage");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
