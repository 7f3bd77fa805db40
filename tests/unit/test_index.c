/*
 * test_index.c: the sparse index (lib/index.c): where entries go, loading
 * only the valid prefix of a damaged file, lookups, rebuilding, the quick
 * check of a closed segment's index, and the writer rebuilding a bad one.
 */
#include "unit.h"

#define INTERVAL 64u

static int open_dir(const char *d)
{
	int dfd = open(d, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	return dfd;
}

/* The index a segment file should have, computed here from the rules in
 * elog(5) rather than with the library's builder: version 2, an entry for
 * the first record, then one for the first record at least interval bytes
 * after the previous entry; ts_max and ts_min are the extremes from the
 * segment's start through the entry's record, span_min and span_max those
 * of the records from the previous entry's up to this one (empty for the
 * first). */
static unsigned char *expected_index(const char *segpath, uint32_t interval, size_t *len)
{
	size_t seg_len, got;
	unsigned char *seg = ut_read_file(segpath, &seg_len);
	unsigned char *out = malloc(IDX_HDR + seg_len / REC_HDR * IDX_ENTRY + IDX_ENTRY);
	ck_assert_ptr_nonnull(out);
	memcpy(out, "ELOGIDX\n", 8);
	put32(out + 8, 2);
	put32(out + 12, 0);
	size_t n = IDX_HDR;
	uint64_t pos = SEG_HDR, last = 0;
	int64_t ts_max = INT64_MIN, ts_min = INT64_MAX;
	int64_t lo = INT64_MAX, hi = INT64_MIN; /* empty */
	int any = 0;
	while (pos < seg_len) {
		struct elog_record r;
		if (seg_len - pos == SEAL_SIZE && memcmp(seg + pos, SEAL_MAGIC, 8) == 0)
			break; /* a closed segment's seal */
		ck_assert_int_eq(elog__rec_decode(seg + pos, seg_len - pos, &r, &got), 0);
		if (r.ts_ms > ts_max)
			ts_max = r.ts_ms;
		if (r.ts_ms < ts_min)
			ts_min = r.ts_ms;
		if (!any || pos >= last + interval) {
			any = 1;
			last = pos;
			put64(out + n, r.offset);
			put64(out + n + 8, (uint64_t)ts_max);
			put64(out + n + 16, (uint64_t)ts_min);
			put64(out + n + 24, (uint64_t)lo);
			put64(out + n + 32, (uint64_t)hi);
			put32(out + n + 40, (uint32_t)pos);
			put32(out + n + 44, elog__crc32c(0, out + n, 44));
			n += 48;
			lo = hi = r.ts_ms;
		} else {
			lo = r.ts_ms < lo ? r.ts_ms : lo;
			hi = r.ts_ms > hi ? r.ts_ms : hi;
		}
		pos += got;
	}
	free(seg);
	*len = n;
	return out;
}

static void assert_file_is(const char *path, const unsigned char *want, size_t len)
{
	size_t got;
	unsigned char *have = ut_read_file(path, &got);
	ck_assert_msg(got == len, "%s: %zu bytes, expected %zu", path, got, len);
	ck_assert_mem_eq(have, want, len);
	free(have);
}

/* A segment base 0 of ut_top with offsets 0..n-1 (values "v<o>", so the
 * records are 30 to 32 bytes and entries fall every few records). */
static uint64_t make_segment(size_t n)
{
	uint64_t *offs = malloc(n * sizeof *offs);
	for (size_t i = 0; i < n; i++)
		offs[i] = i;
	ut_seg_create(ut_top, 0);
	uint64_t len = ut_seg_fill(ut_top, 0, offs, n, 1000);
	free(offs);
	return len;
}

/* Write an index file of the given entries (computing their CRCs). */
static void write_index(const char *path, const struct idx_entry *e, size_t n)
{
	unsigned char buf[IDX_HDR + 32 * IDX_ENTRY];
	ck_assert_uint_le(n, 32);
	elog__idx_header_encode(buf);
	for (size_t i = 0; i < n; i++)
		elog__idx_entry_encode(buf + IDX_HDR + i * IDX_ENTRY, &e[i]);
	ut_write_file(path, buf, IDX_HDR + n * IDX_ENTRY);
}

#define E IDX_SPAN_EMPTY_MIN, IDX_SPAN_EMPTY_MAX
static const struct idx_entry good[] = {
	{ 100, 5, 32, 5, E },
	{ 103, 9, 200, 1, 1, 5 },
	{ 110, 9, 400, 1, 3, 9 },
	{ 120, 12, 900, 0, 0, 8 },
};
#undef E
#define SEG_LEN 1000u

/* ---- the builder ---- */

UT_TEST(builder_placement)
{
	struct idx_builder b = { 0 };
	struct idx_entry e, last = { 0 };
	/* Records of 50 bytes from byte 32, interval 100. */
	static const int64_t ts[] = { 5, 3, 9, 1, 2, 4 };
	static const int want[] = { 1, 0, 1, 0, 1, 0 };
	for (int i = 0; i < 6; i++) {
		memset(&e, 0xAA, sizeof e);
		int got = elog__idx_builder_add(&b, 10 + (uint64_t)i, ts[i], 32 + 50 * (uint64_t)i,
		                                100, &e);
		ck_assert_msg(got == want[i], "record %d", i);
		if (!got)
			continue;
		ck_assert_uint_eq(e.offset, 10 + (uint64_t)i);
		ck_assert_uint_eq(e.pos, 32 + 50 * (uint64_t)i);
		last = e;
	}
	/* ts_max of the last entry (record 4) is the greatest so far, 9. */
	ck_assert_uint_eq(last.offset, 14);
	ck_assert_int_eq(last.ts_max, 9);
}
END_TEST

UT_TEST(builder_ts_max_running)
{
	struct idx_builder b = { 0 };
	struct idx_entry e;
	ck_assert_int_eq(elog__idx_builder_add(&b, 0, -50, 32, 64, &e), 1);
	ck_assert_int_eq(e.ts_max, -50); /* negative times are times too */
	ck_assert_int_eq(elog__idx_builder_add(&b, 1, -10, 95, 64, &e), 0);
	ck_assert_int_eq(elog__idx_builder_add(&b, 2, -90, 96, 64, &e), 1);
	ck_assert_int_eq(e.ts_max, -10);
	ck_assert_uint_eq(e.pos, 96);
}
END_TEST

/* ---- the one decoder and verdict ---- */

UT_TEST(builder_times)
{
	struct idx_builder b = { 0 };
	struct idx_entry e;
	/* Records of 50 bytes from byte 32, interval 100: entries at 0, 2, 4. */
	static const int64_t ts[] = { 5, 3, 9, 1, 2, 4 };
	ck_assert_int_eq(elog__idx_builder_add(&b, 0, ts[0], 32, 100, &e), 1);
	ck_assert_int_eq(e.ts_max, 5);
	ck_assert_int_eq(e.ts_min, 5);
	ck_assert_int_eq(e.span_min, IDX_SPAN_EMPTY_MIN); /* nothing before */
	ck_assert_int_eq(e.span_max, IDX_SPAN_EMPTY_MAX);
	ck_assert_int_eq(elog__idx_builder_add(&b, 1, ts[1], 82, 100, &e), 0);
	ck_assert_int_eq(elog__idx_builder_add(&b, 2, ts[2], 132, 100, &e), 1);
	ck_assert_int_eq(e.ts_max, 9);
	ck_assert_int_eq(e.ts_min, 3);
	ck_assert_int_eq(e.span_min, 3); /* records 0 and 1 */
	ck_assert_int_eq(e.span_max, 5);
	ck_assert_int_eq(elog__idx_builder_add(&b, 3, ts[3], 182, 100, &e), 0);
	ck_assert_int_eq(elog__idx_builder_add(&b, 4, ts[4], 232, 100, &e), 1);
	ck_assert_int_eq(e.ts_max, 9);
	ck_assert_int_eq(e.ts_min, 1);
	ck_assert_int_eq(e.span_min, 1); /* records 2 and 3 */
	ck_assert_int_eq(e.span_max, 9);
	/* What the writer keeps in LOCK to go on: the span from entry 4 on. */
	ck_assert_int_eq(elog__idx_builder_add(&b, 5, ts[5], 282, 100, &e), 0);
	ck_assert_int_eq(b.span_min, 2);
	ck_assert_int_eq(b.span_max, 4);
}
END_TEST

UT_TEST(header_check_versions)
{
	unsigned char h[IDX_HDR];
	const struct idx_layout *lay = NULL;
	elog__idx_header_encode(h);
	ck_assert_int_eq(memcmp(h, "ELOGIDX\n\2\0\0\0\0\0\0\0", IDX_HDR), 0);
	ck_assert_int_eq(elog__idx_header_check(h, IDX_HDR, &lay), 0);
	ck_assert_uint_eq(lay->version, 2);
	ck_assert_uint_eq(lay->entry, 48);
	ck_assert_uint_eq(lay->at_ts_max, 8);
	ck_assert_uint_eq(lay->at_pos, 40);
	ck_assert_uint_eq(lay->at_crc, 44);
	put32(h + 8, 1);
	ck_assert_int_eq(elog__idx_header_check(h, IDX_HDR, &lay), 0);
	ck_assert_uint_eq(lay->version, 1);
	ck_assert_uint_eq(lay->entry, 24);
	ck_assert_uint_eq(lay->at_ts_max, 8);
	ck_assert_uint_eq(lay->at_pos, 16);
	ck_assert_uint_eq(lay->at_crc, 20);
	put32(h + 8, 3);
	ck_assert_int_eq(elog__idx_header_check(h, IDX_HDR, &lay), ELOG_BADVERSION);
	put32(h + 8, 2);
	put32(h + 12, 1); /* reserved */
	ck_assert_int_eq(elog__idx_header_check(h, IDX_HDR, &lay), ELOG_BADVERSION);
	put32(h + 12, 0);
	ck_assert_int_eq(elog__idx_header_check(h, IDX_HDR - 1, &lay), ELOG_CORRUPT);
	h[7] = 'X';
	ck_assert_int_eq(elog__idx_header_check(h, IDX_HDR, &lay), ELOG_CORRUPT);
}
END_TEST

/* Encode e, judge it after prev in segment 100 of SEG_LEN bytes. */
static int judge(const struct idx_entry *e, const struct idx_entry *prev)
{
	unsigned char h[IDX_HDR], p[IDX_ENTRY];
	const struct idx_layout *lay;
	struct idx_entry out;
	elog__idx_header_encode(h);
	ck_assert_int_eq(elog__idx_header_check(h, IDX_HDR, &lay), 0);
	elog__idx_entry_encode(p, e);
	int fault = elog__idx_entry_check(p, lay, 100, SEG_LEN, prev, &out);
	if (fault == IDX_FAULT_NONE) {
		ck_assert_uint_eq(out.offset, e->offset);
		ck_assert_int_eq(out.ts_max, e->ts_max);
		ck_assert_uint_eq(out.pos, e->pos);
		ck_assert_int_eq(out.ts_min, e->ts_min);
		ck_assert_int_eq(out.span_min, e->span_min);
		ck_assert_int_eq(out.span_max, e->span_max);
	}
	return fault;
}

UT_TEST(entry_check_each_rule)
{
	struct idx_entry e;
	ck_assert_int_eq(judge(&good[0], NULL), IDX_FAULT_NONE);
	for (int i = 1; i < 4; i++)
		ck_assert_int_eq(judge(&good[i], &good[i - 1]), IDX_FAULT_NONE);
	/* The entry's bytes are where elog(5) puts them. */
	unsigned char p[IDX_ENTRY];
	elog__idx_entry_encode(p, &good[2]);
	ck_assert_uint_eq(get64(p), 110);
	ck_assert_int_eq((int64_t)get64(p + 8), 9);
	ck_assert_int_eq((int64_t)get64(p + 16), 1);
	ck_assert_int_eq((int64_t)get64(p + 24), 3);
	ck_assert_int_eq((int64_t)get64(p + 32), 9);
	ck_assert_uint_eq(get32(p + 40), 400);
	ck_assert_uint_eq(get32(p + 44), elog__crc32c(0, p, 44));

	e = good[1];
	e.pos = SEG_HDR - 1;
	ck_assert_int_eq(judge(&e, NULL), IDX_FAULT_POS);
	e = good[1];
	e.pos = SEG_LEN;
	ck_assert_int_eq(judge(&e, NULL), IDX_FAULT_POS);
	e = good[1];
	e.offset = 99;
	ck_assert_int_eq(judge(&e, NULL), IDX_FAULT_OFFSET);
	e = good[1];
	e.offset = good[0].offset;
	ck_assert_int_eq(judge(&e, &good[0]), IDX_FAULT_ORDER);
	e = good[1];
	e.pos = good[0].pos;
	ck_assert_int_eq(judge(&e, &good[0]), IDX_FAULT_ORDER);
	e = good[1];
	e.ts_max = 4;
	e.span_max = 4; /* below the one before */
	ck_assert_int_eq(judge(&e, &good[0]), IDX_FAULT_TIME);
	e = good[1];
	e.ts_min = 6;
	e.span_min = 6; /* above the one before */
	ck_assert_int_eq(judge(&e, &good[0]), IDX_FAULT_TIME);
	e = good[1];
	e.ts_min = 10; /* above its own ts_max */
	ck_assert_int_eq(judge(&e, NULL), IDX_FAULT_TIME);
	e = good[1];
	e.span_min = 6;
	e.span_max = 5; /* a span upside down */
	ck_assert_int_eq(judge(&e, NULL), IDX_FAULT_TIME);
	e = good[1];
	e.span_max = 10; /* past ts_max */
	ck_assert_int_eq(judge(&e, NULL), IDX_FAULT_TIME);
	e = good[1];
	e.span_min = 0; /* before ts_min */
	ck_assert_int_eq(judge(&e, NULL), IDX_FAULT_TIME);
	e = good[1];
	e.span_min = IDX_SPAN_EMPTY_MIN;
	e.span_max = IDX_SPAN_EMPTY_MAX;
	ck_assert_int_eq(judge(&e, NULL), IDX_FAULT_NONE);     /* a first entry's */
	ck_assert_int_eq(judge(&e, &good[0]), IDX_FAULT_TIME); /* no record after */
	/* Any bit of the entry is covered by its CRC. */
	unsigned char h[IDX_HDR];
	const struct idx_layout *lay;
	elog__idx_header_encode(h);
	ck_assert_int_eq(elog__idx_header_check(h, IDX_HDR, &lay), 0);
	for (size_t at = 0; at < IDX_ENTRY; at++) {
		elog__idx_entry_encode(p, &good[1]);
		p[at] ^= 0x10;
		ck_assert_int_eq(elog__idx_entry_check(p, lay, 100, SEG_LEN, &good[0], &e),
		                 IDX_FAULT_CRC);
		ck_assert_uint_eq(elog__idx_fault_at(lay, IDX_FAULT_CRC), 44);
	}
}
END_TEST

/* A version 1 file of the entries of good, laid out by elog(5)'s table. */
static void write_index_v1(const char *path, const struct idx_entry *e, size_t n)
{
	unsigned char *buf = malloc(IDX_HDR + n * 24);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, "ELOGIDX\n\1\0\0\0\0\0\0\0", IDX_HDR);
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = buf + IDX_HDR + i * 24;
		put64(p, e[i].offset);
		put64(p + 8, (uint64_t)e[i].ts_max);
		put32(p + 16, e[i].pos);
		put32(p + 20, elog__crc32c(0, p, 20));
	}
	ut_write_file(path, buf, IDX_HDR + n * 24);
	free(buf);
}

UT_TEST(load_version1)
{
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_top, 100, IDX_EXT));
	write_index_v1(p, good, 4);
	int dfd = open_dir(ut_top), intact = -1;
	struct index ix;
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), 0);
	ck_assert_int_eq(intact, 1);
	ck_assert_uint_eq(ix.version, 1);
	ck_assert_uint_eq(ix.n, 4);
	for (size_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(ix.e[i].offset, good[i].offset);
		ck_assert_int_eq(ix.e[i].ts_max, good[i].ts_max);
		ck_assert_uint_eq(ix.e[i].pos, good[i].pos);
		/* No times but ts_max: the widest, which skip nothing. */
		ck_assert_int_eq(ix.e[i].ts_min, INT64_MIN);
		ck_assert_int_eq(ix.e[i].span_min, INT64_MIN);
		ck_assert_int_eq(ix.e[i].span_max, INT64_MAX);
	}
	/* ts_max still tells what lies before a window, as in version 1. */
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 0, 1000, 2000), 3);
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 0, 0, 3), -1);
	elog__idx_free(&ix);
	/* Its rules: a bad CRC (bytes 20-23) or ts_max going down end the
	 * valid prefix. */
	ut_flip_bit(p, IDX_HDR + 2 * 24 + 20, 0);
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), 0);
	ck_assert_int_eq(intact, 0);
	ck_assert_uint_eq(ix.n, 2);
	elog__idx_free(&ix);
	struct idx_entry e[4];
	memcpy(e, good, sizeof e);
	e[3].ts_max = 8;
	write_index_v1(p, e, 4);
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), 0);
	ck_assert_uint_eq(ix.n, 3);
	elog__idx_free(&ix);
	/* The search in the file reads it too. */
	write_index_v1(p, good, 4);
	struct idx_entry got;
	ck_assert_int_eq(elog__idx_lookup(dfd, 100, SEG_LEN, 115, &got), 0);
	ck_assert_uint_eq(got.offset, 110);
	ck_assert_uint_eq(got.pos, 400);
	ck_assert_int_eq(elog__idx_lookup(dfd, 100, SEG_LEN, 99, &got), ELOG_END);
	close(dfd);
}
END_TEST

UT_TEST(last_entry_alone)
{
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_top, 100, IDX_EXT));
	int dfd = open_dir(ut_top);
	struct idx_entry e;
	ck_assert_int_eq(elog__idx_last(dfd, 100, SEG_LEN, &e), ENOENT);
	write_index(p, good, 4);
	ck_assert_int_eq(elog__idx_last(dfd, 100, SEG_LEN, &e), 0);
	ck_assert_uint_eq(e.offset, 120);
	ck_assert_int_eq(e.ts_min, 0);
	ck_assert_int_eq(e.ts_max, 12);
	/* A partial entry at the end (a write under way) is not read. */
	ut_append_file(p, "partial", 7);
	ck_assert_int_eq(elog__idx_last(dfd, 100, SEG_LEN, &e), 0);
	ck_assert_uint_eq(e.offset, 120);
	write_index(p, good, 0);
	ck_assert_int_eq(elog__idx_last(dfd, 100, SEG_LEN, &e), ELOG_END);
	write_index(p, good, 4);
	ut_flip_bit(p, IDX_HDR + 3 * IDX_ENTRY + 1, 0);
	ck_assert_int_eq(elog__idx_last(dfd, 100, SEG_LEN, &e), ELOG_CORRUPT);
	write_index_v1(p, good, 4);
	ck_assert_int_eq(elog__idx_last(dfd, 100, SEG_LEN, &e), 0);
	ck_assert_uint_eq(e.offset, 120);
	ck_assert_int_eq(e.ts_min, INT64_MIN);
	close(dfd);
}
END_TEST

UT_TEST(skip_prefix_edges)
{
	/* ts_max 5 9 9 12, ts_min 5 1 1 0. */
	struct index ix = { (struct idx_entry *)good, 4, 4, IDX_VERSION };
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 0, 10, 20), 2); /* ts_max < 10 */
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 0, 13, 20), 3);
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 0, 6, 20), 0);
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 0, 5, 20), -1);
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 0, -5, 4), 0); /* ts_min > 4 */
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 0, -5, 0), 2); /* ts_min > 0 */
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 0, -5, 5), -1);
	/* Only from the entry given on. */
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 3, 10, 20), -1);
	ck_assert_int_eq(elog__idx_skip_prefix(&ix, 2, 10, 20), 2);
	struct index none = { NULL, 0, 0, IDX_VERSION };
	ck_assert_int_eq(elog__idx_skip_prefix(&none, 0, 10, 20), -1);
}
END_TEST

/* ---- loading ---- */

UT_TEST(load_all_valid)
{
	write_index(ut_seg_path(ut_top, 100, IDX_EXT), good, 4);
	int dfd = open_dir(ut_top), intact = -1;
	struct index ix;
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), 0);
	ck_assert_int_eq(intact, 1);
	ck_assert_uint_eq(ix.n, 4);
	for (size_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(ix.e[i].offset, good[i].offset);
		ck_assert_int_eq(ix.e[i].ts_max, good[i].ts_max);
		ck_assert_uint_eq(ix.e[i].pos, good[i].pos);
	}
	elog__idx_free(&ix);
	close(dfd);
}
END_TEST

UT_TEST(load_header_only)
{
	write_index(ut_seg_path(ut_top, 100, IDX_EXT), good, 0);
	int dfd = open_dir(ut_top), intact = -1;
	struct index ix;
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), 0);
	ck_assert_int_eq(intact, 1);
	ck_assert_uint_eq(ix.n, 0);
	elog__idx_free(&ix);
	close(dfd);
}
END_TEST

/* Load after damaging entry k in some way; expect its prefix. */
static void load_expect_prefix(struct idx_entry *e, size_t k, int bad_crc)
{
	const char *path = ut_seg_path(ut_top, 100, IDX_EXT);
	char p[1200];
	snprintf(p, sizeof p, "%s", path);
	write_index(p, e, 4);
	if (bad_crc)
		ut_flip_bit(p, IDX_HDR + k * IDX_ENTRY + IDX_AT_CRC, 0);
	int dfd = open_dir(ut_top), intact = -1;
	struct index ix;
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), 0);
	ck_assert_int_eq(intact, 0);
	ck_assert_uint_eq(ix.n, k);
	for (size_t i = 0; i < k; i++)
		ck_assert_uint_eq(ix.e[i].offset, e[i].offset);
	elog__idx_free(&ix);
	close(dfd);
}

UT_TEST(load_bad_crc_keeps_prefix)
{
	struct idx_entry e[4];
	memcpy(e, good, sizeof e);
	load_expect_prefix(e, 2, 1);
}
END_TEST

UT_TEST(load_bad_crc_first_entry)
{
	struct idx_entry e[4];
	memcpy(e, good, sizeof e);
	load_expect_prefix(e, 0, 1);
}
END_TEST

UT_TEST(load_non_increasing_offset)
{
	struct idx_entry e[4];
	memcpy(e, good, sizeof e);
	e[2].offset = e[1].offset;
	load_expect_prefix(e, 2, 0);
}
END_TEST

UT_TEST(load_non_increasing_pos)
{
	struct idx_entry e[4];
	memcpy(e, good, sizeof e);
	e[3].pos = e[2].pos;
	load_expect_prefix(e, 3, 0);
}
END_TEST

UT_TEST(load_decreasing_ts_max)
{
	struct idx_entry e[4];
	memcpy(e, good, sizeof e);
	e[1].ts_max = 4;
	load_expect_prefix(e, 1, 0);
}
END_TEST

UT_TEST(load_pos_outside_segment)
{
	struct idx_entry e[4];
	memcpy(e, good, sizeof e);
	e[3].pos = SEG_LEN; /* at the end: no record starts there */
	load_expect_prefix(e, 3, 0);
	memcpy(e, good, sizeof e);
	e[0].pos = SEG_HDR - 1; /* inside the header */
	load_expect_prefix(e, 0, 0);
}
END_TEST

UT_TEST(load_offset_below_base)
{
	struct idx_entry e[4];
	memcpy(e, good, sizeof e);
	e[0].offset = 99;
	load_expect_prefix(e, 0, 0);
}
END_TEST

UT_TEST(load_trailing_partial_entry)
{
	const char *path = ut_seg_path(ut_top, 100, IDX_EXT);
	char p[1200];
	snprintf(p, sizeof p, "%s", path);
	write_index(p, good, 4);
	ut_truncate(p, IDX_HDR + 3 * IDX_ENTRY + 10);
	int dfd = open_dir(ut_top), intact = -1;
	struct index ix;
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), 0);
	ck_assert_int_eq(intact, 0);
	ck_assert_uint_eq(ix.n, 3);
	elog__idx_free(&ix);
	close(dfd);
}
END_TEST

UT_TEST(load_missing_or_bad_header)
{
	int dfd = open_dir(ut_top), intact;
	struct index ix;
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), ENOENT);
	const char *path = ut_seg_path(ut_top, 100, IDX_EXT);
	char p[1200];
	snprintf(p, sizeof p, "%s", path);
	write_index(p, good, 4);
	ut_flip_bit(p, 0, 1); /* magic */
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), ELOG_CORRUPT);
	write_index(p, good, 4);
	ut_write_at(p, 8, "\3\0\0\0", 4); /* version 3 */
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), ELOG_CORRUPT);
	ut_write_file(p, "ELOGIDX\n", 8); /* header cut short */
	ck_assert_int_eq(elog__idx_load(dfd, 100, SEG_LEN, &ix, &intact), ELOG_CORRUPT);
	close(dfd);
}
END_TEST

/* ---- lookups ---- */

UT_TEST(find_offset_edges)
{
	struct index ix = { (struct idx_entry *)good, 4, 4, IDX_VERSION };
	ck_assert_int_eq(elog__idx_find_offset(&ix, 0), -1);
	ck_assert_int_eq(elog__idx_find_offset(&ix, 99), -1);
	ck_assert_int_eq(elog__idx_find_offset(&ix, 100), 0);
	ck_assert_int_eq(elog__idx_find_offset(&ix, 102), 0);
	ck_assert_int_eq(elog__idx_find_offset(&ix, 103), 1);
	ck_assert_int_eq(elog__idx_find_offset(&ix, 119), 2);
	ck_assert_int_eq(elog__idx_find_offset(&ix, 120), 3);
	ck_assert_int_eq(elog__idx_find_offset(&ix, UINT64_MAX), 3);
	struct index none = { NULL, 0, 0, IDX_VERSION };
	ck_assert_int_eq(elog__idx_find_offset(&none, 5), -1);
}
END_TEST

UT_TEST(find_time_edges)
{
	/* ts_max 5, 9, 9, 12. */
	struct index ix = { (struct idx_entry *)good, 4, 4, IDX_VERSION };
	ck_assert_int_eq(elog__idx_find_time(&ix, INT64_MIN), 0);
	ck_assert_int_eq(elog__idx_find_time(&ix, 5), 0);
	ck_assert_int_eq(elog__idx_find_time(&ix, 6), 1);
	ck_assert_int_eq(elog__idx_find_time(&ix, 9), 1); /* the first of equals */
	ck_assert_int_eq(elog__idx_find_time(&ix, 10), 3);
	ck_assert_int_eq(elog__idx_find_time(&ix, 12), 3);
	ck_assert_int_eq(elog__idx_find_time(&ix, 13), -1);
	struct index none = { NULL, 0, 0, IDX_VERSION };
	ck_assert_int_eq(elog__idx_find_time(&none, 0), -1);
}
END_TEST

/* ---- rebuilding ---- */

UT_TEST(rebuild_matches_rule)
{
	uint64_t len = make_segment(200);
	int dfd = open_dir(ut_top);
	int segfd = open(ut_seg_path(ut_top, 0, SEG_EXT), O_RDONLY);
	ck_assert_int_ge(segfd, 0);
	struct index ix;
	char msg[ELOG_MSG_MAX] = "";
	ck_assert_int_eq(elog__idx_rebuild(dfd, segfd, 0, len, INTERVAL, &ix, msg), 0);
	size_t wlen;
	unsigned char *want = expected_index(ut_seg_path(ut_top, 0, SEG_EXT), INTERVAL, &wlen);
	assert_file_is(ut_seg_path(ut_top, 0, IDX_EXT), want, wlen);
	/* The entries handed back are those in the file. */
	ck_assert_uint_eq(ix.n, (wlen - IDX_HDR) / IDX_ENTRY);
	ck_assert_uint_gt(ix.n, 40); /* about one per 2 records */
	for (size_t i = 0; i < ix.n; i++) {
		ck_assert_uint_eq(ix.e[i].offset, get64(want + IDX_HDR + i * IDX_ENTRY));
		ck_assert_uint_eq(ix.e[i].pos, get32(want + IDX_HDR + i * IDX_ENTRY + 40));
	}
	elog__idx_free(&ix);
	free(want);
	/* No temporary file is left behind. */
	struct seglist sl;
	ck_assert_int_eq(elog__seglist_read(dfd, &sl), 0);
	ck_assert_uint_eq(sl.n, 1);
	elog__seglist_free(&sl);
	close(segfd);
	close(dfd);
}
END_TEST

UT_TEST(rebuild_refuses_corrupt_segment)
{
	uint64_t len = make_segment(20);
	const char *seg = ut_seg_path(ut_top, 0, SEG_EXT);
	/* Record 3 starts at 32 + 3 * 30 (values "v0".."v9" are 2 bytes). */
	ut_flip_bit(seg, 32 + 3 * 30 + 20, 4);
	int dfd = open_dir(ut_top);
	int segfd = open(seg, O_RDONLY);
	char msg[ELOG_MSG_MAX] = "";
	ck_assert_int_eq(elog__idx_rebuild(dfd, segfd, 0, len, INTERVAL, NULL, msg), ELOG_CORRUPT);
	ck_assert_str_eq(msg, "00000000000000000000.log: corrupt record at byte 122");
	/* Nothing was written. */
	ck_assert_int_eq(ut_exists(ut_seg_path(ut_top, 0, IDX_EXT)), 0);
	close(segfd);
	close(dfd);
}
END_TEST

/* elog__idx_lookup() searches the file and finds what elog__idx_find_offset() finds
 * in the loaded index, for every target. */
UT_TEST(lookup_in_file_matches_loaded_index)
{
	uint64_t len = make_segment(200);
	int dfd = open_dir(ut_top);
	int segfd = open(ut_seg_path(ut_top, 0, SEG_EXT), O_RDONLY);
	ck_assert_int_ge(segfd, 0);
	struct index ix;
	char msg[ELOG_MSG_MAX] = "";
	ck_assert_int_eq(elog__idx_rebuild(dfd, segfd, 0, len, INTERVAL, &ix, msg), 0);
	for (uint64_t t = 0; t < 210; t++) {
		struct idx_entry e;
		ssize_t k = elog__idx_find_offset(&ix, t);
		int rc = elog__idx_lookup(dfd, 0, len, t, &e);
		if (k < 0) {
			ck_assert_int_eq(rc, ELOG_END);
			continue;
		}
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_eq(e.offset, ix.e[k].offset);
		ck_assert_uint_eq(e.pos, ix.e[k].pos);
		ck_assert_int_eq(e.ts_max, ix.e[k].ts_max);
	}
	/* A damaged entry on the search's path: ELOG_CORRUPT, so that the
	 * reader falls back to the valid prefix. */
	ut_flip_bit(ut_seg_path(ut_top, 0, IDX_EXT), IDX_HDR + (ix.n / 2) * IDX_ENTRY + 3, 1);
	struct idx_entry e;
	ck_assert_int_eq(elog__idx_lookup(dfd, 0, len, 150, &e), ELOG_CORRUPT);
	ck_assert_int_eq(unlink(ut_seg_path(ut_top, 0, IDX_EXT)), 0);
	ck_assert_int_eq(elog__idx_lookup(dfd, 0, len, 150, &e), ENOENT);
	elog__idx_free(&ix);
	close(segfd);
	close(dfd);
}
END_TEST

/* ---- the quick check ---- */

/* Build segment 0 of 100 records and its correct index; returns the
 * segment length, the descriptors in *dfd and *segfd. */
static uint64_t quick_setup(int *dfd, int *segfd)
{
	uint64_t len = make_segment(100);
	*dfd = open_dir(ut_top);
	*segfd = open(ut_seg_path(ut_top, 0, SEG_EXT), O_RDONLY);
	ck_assert_int_ge(*segfd, 0);
	char msg[ELOG_MSG_MAX];
	ck_assert_int_eq(elog__idx_rebuild(*dfd, *segfd, 0, len, INTERVAL, NULL, msg), 0);
	ck_assert_int_eq(elog__idx_quick_check(*dfd, *segfd, 0, len, INTERVAL), 1);
	return len;
}

UT_TEST(quick_check_missing)
{
	int dfd, segfd;
	uint64_t len = quick_setup(&dfd, &segfd);
	ck_assert_int_eq(unlink(ut_seg_path(ut_top, 0, IDX_EXT)), 0);
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, len, INTERVAL), 0);
	close(segfd);
	close(dfd);
}
END_TEST

UT_TEST(quick_check_cut_by_entries)
{
	int dfd, segfd;
	uint64_t len = quick_setup(&dfd, &segfd);
	const char *idx = ut_seg_path(ut_top, 0, IDX_EXT);
	uint64_t size = ut_file_size(idx);
	ut_truncate(idx, size - IDX_ENTRY);
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, len, INTERVAL), 0);
	ut_truncate(idx, IDX_HDR + IDX_ENTRY);
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, len, INTERVAL), 0);
	ut_truncate(idx, IDX_HDR);
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, len, INTERVAL), 0);
	close(segfd);
	close(dfd);
}
END_TEST

UT_TEST(quick_check_cut_mid_entry)
{
	int dfd, segfd;
	uint64_t len = quick_setup(&dfd, &segfd);
	const char *idx = ut_seg_path(ut_top, 0, IDX_EXT);
	ut_truncate(idx, ut_file_size(idx) - 5);
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, len, INTERVAL), 0);
	close(segfd);
	close(dfd);
}
END_TEST

UT_TEST(quick_check_bad_last_crc)
{
	int dfd, segfd;
	uint64_t len = quick_setup(&dfd, &segfd);
	const char *idx = ut_seg_path(ut_top, 0, IDX_EXT);
	ut_flip_bit(idx, ut_file_size(idx) - IDX_ENTRY + 3, 2);
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, len, INTERVAL), 0);
	close(segfd);
	close(dfd);
}
END_TEST

UT_TEST(quick_check_bad_header)
{
	int dfd, segfd;
	uint64_t len = quick_setup(&dfd, &segfd);
	ut_flip_bit(ut_seg_path(ut_top, 0, IDX_EXT), 2, 0);
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, len, INTERVAL), 0);
	close(segfd);
	close(dfd);
}
END_TEST

/* An index made for other contents of the segment: its entries are sound
 * by themselves but point between records. */
UT_TEST(quick_check_stale)
{
	int dfd, segfd;
	(void)quick_setup(&dfd, &segfd);
	close(segfd);
	const char *seg = ut_seg_path(ut_top, 0, SEG_EXT);
	char p[1200];
	snprintf(p, sizeof p, "%s", seg);
	ut_seg_create(ut_top, 0);
	for (uint64_t o = 0; o < 100; o++) {
		struct elog_record r = ut_rec(o, 1, 0, NULL, "a longer value than before");
		ut_append_rec(p, &r);
	}
	uint64_t len = ut_file_size(p);
	segfd = open(p, O_RDONLY);
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, len, INTERVAL), 0);
	close(segfd);
	close(dfd);
}
END_TEST

/* A segment that grew after its index was made (records appended that
 * should have had entries). */
UT_TEST(quick_check_segment_longer_than_index)
{
	int dfd, segfd;
	(void)quick_setup(&dfd, &segfd);
	const char *seg = ut_seg_path(ut_top, 0, SEG_EXT);
	char p[1200];
	snprintf(p, sizeof p, "%s", seg);
	for (uint64_t o = 100; o < 110; o++) {
		struct elog_record r = ut_rec(o, 1, 0, NULL, "v");
		ut_append_rec(p, &r);
	}
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, ut_file_size(p), INTERVAL), 0);
	close(segfd);
	close(dfd);
}
END_TEST

UT_TEST(quick_check_empty_segment)
{
	ut_seg_create(ut_top, 0);
	write_index(ut_seg_path(ut_top, 0, IDX_EXT), good, 0);
	int dfd = open_dir(ut_top);
	int segfd = open(ut_seg_path(ut_top, 0, SEG_EXT), O_RDONLY);
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, SEG_HDR, INTERVAL), 1);
	close(segfd);
	close(dfd);
}
END_TEST

UT_TEST(quick_check_version1)
{
	int dfd, segfd;
	uint64_t len = quick_setup(&dfd, &segfd);
	struct index ix;
	int intact;
	ck_assert_int_eq(elog__idx_load(dfd, 0, len, &ix, &intact), 0);
	char p[1200];
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_top, 0, IDX_EXT));
	write_index_v1(p, ix.e, ix.n);
	/* Not wrong: it stays, and is read as version 1. */
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, len, INTERVAL), 1);
	ut_truncate(p, ut_file_size(p) - 24);
	ck_assert_int_eq(elog__idx_quick_check(dfd, segfd, 0, len, INTERVAL), 0);
	elog__idx_free(&ix);
	close(segfd);
	close(dfd);
}
END_TEST

/* ---- the writer rebuilds a bad index of a closed segment ---- */

/* A log of several segments; returns how many, with their bases. */
static size_t make_log(uint64_t *bases, size_t max)
{
	elog *w = ut_open_writer(ut_dir, 4096, INTERVAL);
	char v[64];
	/* 440 records: the last segment, the active one, nearly full. */
	for (int i = 0; i < 440; i++) {
		snprintf(v, sizeof v, "value number %d of the test log", i);
		ut_append(w, i % 3 ? NULL : "key", v);
	}
	ck_assert_int_eq(elog_close(w), 0);
	int dfd = open_dir(ut_dir);
	struct seglist sl;
	ck_assert_int_eq(elog__seglist_read(dfd, &sl), 0);
	close(dfd);
	ck_assert_uint_ge(sl.n, 3);
	ck_assert_uint_le(sl.n, max);
	memcpy(bases, sl.base, sl.n * sizeof *bases);
	size_t n = sl.n;
	elog__seglist_free(&sl);
	return n;
}

static void reopen(void)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ck_assert_int_eq(elog_close(w), 0);
}

enum damage { DELETE, CUT_ENTRY, CUT_MID, STALE, FLIP_LAST, GARBAGE };

/* The active segment's index, damaged: the writer finds out on open and
 * rebuilds it.  (Closed segments' indexes were synced at their roll; the
 * writer does not read them on open, readers use what is valid of them,
 * and elog-verify --repair rebuilds them.) */
static void rebuilt_after(enum damage how)
{
	uint64_t bases[64];
	size_t n = make_log(bases, 64);
	char seg[1200], idx[1200], other[1200];
	snprintf(seg, sizeof seg, "%s", ut_seg_path(ut_dir, bases[n - 1], SEG_EXT));
	snprintf(idx, sizeof idx, "%s", ut_seg_path(ut_dir, bases[n - 1], IDX_EXT));
	snprintf(other, sizeof other, "%s", ut_seg_path(ut_dir, bases[0], IDX_EXT));
	size_t wlen, olen;
	unsigned char *want = expected_index(seg, INTERVAL, &wlen);
	/* The writer built the same index as it appended. */
	assert_file_is(idx, want, wlen);
	ck_assert_uint_gt(wlen, IDX_HDR + 3 * IDX_ENTRY);

	switch (how) {
	case DELETE:
		ck_assert_int_eq(unlink(idx), 0);
		break;
	case CUT_ENTRY:
		ut_truncate(idx, wlen - IDX_ENTRY);
		break;
	case CUT_MID:
		ut_truncate(idx, wlen - IDX_ENTRY / 2);
		break;
	case STALE: {
		unsigned char *o = ut_read_file(other, &olen);
		ut_write_file(idx, o, olen);
		free(o);
		break;
	}
	case FLIP_LAST:
		ut_flip_bit(idx, wlen - 8, 5);
		break;
	case GARBAGE:
		ut_write_file(idx, "not an index at all", 19);
		break;
	}
	reopen();
	assert_file_is(idx, want, wlen);
	/* Other segments' indexes are still right. */
	for (size_t i = 0; i + 1 < n; i++) {
		unsigned char *w2 = expected_index(ut_seg_path(ut_dir, bases[i], SEG_EXT), INTERVAL,
		                                   &olen);
		assert_file_is(ut_seg_path(ut_dir, bases[i], IDX_EXT), w2, olen);
		free(w2);
	}
	free(want);
}

UT_TEST(writer_rebuilds_deleted_index)
{
	rebuilt_after(DELETE);
}
END_TEST
UT_TEST(writer_rebuilds_cut_index)
{
	rebuilt_after(CUT_ENTRY);
}
END_TEST
UT_TEST(writer_rebuilds_cut_mid_entry)
{
	rebuilt_after(CUT_MID);
}
END_TEST
UT_TEST(writer_rebuilds_stale_index)
{
	rebuilt_after(STALE);
}
END_TEST
UT_TEST(writer_rebuilds_bad_last_entry)
{
	rebuilt_after(FLIP_LAST);
}
END_TEST
UT_TEST(writer_rebuilds_garbage_index)
{
	rebuilt_after(GARBAGE);
}
END_TEST

UT_TEST(writer_rebuilds_active_index)
{
	uint64_t bases[64];
	size_t n = make_log(bases, 64);
	char seg[1200], idx[1200];
	snprintf(seg, sizeof seg, "%s", ut_seg_path(ut_dir, bases[n - 1], SEG_EXT));
	snprintf(idx, sizeof idx, "%s", ut_seg_path(ut_dir, bases[n - 1], IDX_EXT));
	size_t wlen;
	unsigned char *want = expected_index(seg, INTERVAL, &wlen);
	ck_assert_int_eq(unlink(idx), 0);
	reopen();
	assert_file_is(idx, want, wlen);
	free(want);
}
END_TEST

/* A reader copes with an index damaged in the middle (which the writer's
 * quick check does not look at): it uses the valid prefix and still finds
 * every record. */
UT_TEST(reader_survives_damaged_middle_entry)
{
	uint64_t bases[64];
	(void)make_log(bases, 64);
	const char *idx = ut_seg_path(ut_dir, bases[0], IDX_EXT);
	ut_flip_bit(idx, IDX_HDR + 2 * IDX_ENTRY + 4, 0);
	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	for (uint64_t o = 0; o < 400; o += 7) {
		ck_assert_int_eq(elog_reader_seek(r, o), 0);
		ck_assert_int_eq(elog_reader_next(r, &rec), 0);
		ck_assert_uint_eq(rec.offset, o);
	}
	elog_reader_close(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("index");
	TCase *tc = ut_tcase("index");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
