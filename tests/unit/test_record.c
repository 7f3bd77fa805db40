/*
 * test_record.c: encoding and decoding one record (lib/record.c).
 */
#include "unit.h"

/* Encode, decode, and check every field came back. */
static void round_trip(const struct elog_record *in)
{
	size_t size, got;
	struct elog_record out;
	unsigned char *p = ut_encode(in, &size);
	ck_assert_uint_eq(size, 28 + in->key_len + in->value_len);
	ck_assert_uint_eq(get32(p), 24 + in->key_len + in->value_len);
	UT_OK(elog__rec_decode(p, size, &out, &got), NULL);
	ck_assert_uint_eq(got, size);
	ck_assert_uint_eq(out.offset, in->offset);
	ck_assert_int_eq(out.ts_ms, in->ts_ms);
	ck_assert_uint_eq(out.schema, in->schema);
	ck_assert_uint_eq(out.key_len, in->key_len);
	ck_assert_uint_eq(out.value_len, in->value_len);
	if (in->key_len)
		ck_assert_mem_eq(out.key, in->key, in->key_len);
	if (in->value_len)
		ck_assert_mem_eq(out.value, in->value, in->value_len);
	/* The decoded pointers point into the buffer, after the header. */
	ck_assert_ptr_eq(out.key, p + REC_HDR);
	ck_assert_ptr_eq(out.value, p + REC_HDR + in->key_len);
	free(p);
}

UT_TEST(layout_is_little_endian_as_documented)
{
	struct elog_record r = ut_rec(0x0102030405060708ull, -2, 0xBEEF, "k", "vv");
	size_t size;
	unsigned char *p = ut_encode(&r, &size);
	static const unsigned char want[] = { 27,   0,    0,    0, /* length = 24 + 1 + 2 */
		                              0,    0,    0,    0, /* crc, checked below */
		                              8,    7,    6,    5,
		                              4,    3,    2,    1, /* offset */
		                              0xFE, 0xFF, 0xFF, 0xFF,
		                              0xFF, 0xFF, 0xFF, 0xFF, /* ts -2 */
		                              0xEF, 0xBE,             /* schema */
		                              1,    0,                /* key_len */
		                              'k',  'v',  'v' };
	ck_assert_uint_eq(size, sizeof want);
	ck_assert_mem_eq(p, want, 4);
	ck_assert_mem_eq(p + 8, want + 8, sizeof want - 8);
	ck_assert_uint_eq(get32(p + 4), elog__crc32c(0, p + 8, sizeof want - 8));
	free(p);
}
END_TEST

UT_TEST(round_trip_keyed)
{
	struct elog_record r = ut_rec(42, 1764385200000, 7, "user-1", "{\"a\":1}");
	round_trip(&r);
}
END_TEST

UT_TEST(round_trip_unkeyed)
{
	struct elog_record r = ut_rec(0, 0, 0, NULL, "hello");
	round_trip(&r);
}
END_TEST

UT_TEST(round_trip_empty_value)
{
	struct elog_record r = ut_rec(UINT64_MAX - 1, INT64_MIN + 1, 65535, "tomb", NULL);
	round_trip(&r);
	struct elog_record e = ut_rec(5, 5, 0, NULL, NULL);
	round_trip(&e);
}
END_TEST

UT_TEST(round_trip_max_key_and_binary)
{
	unsigned char *key = malloc(ELOG_MAX_KEY);
	unsigned char val[256];
	ck_assert_ptr_nonnull(key);
	for (size_t i = 0; i < ELOG_MAX_KEY; i++)
		key[i] = (unsigned char)(i * 31);
	for (int i = 0; i < 256; i++)
		val[i] = (unsigned char)i;
	struct elog_record r = { 9, 9, 1, key, ELOG_MAX_KEY, val, sizeof val };
	round_trip(&r);
	free(key);
}
END_TEST

UT_TEST(rec_size_counts_length_field)
{
	ck_assert_uint_eq(elog__rec_size(0, 0), 28);
	ck_assert_uint_eq(elog__rec_size(3, 5), 36);
	ck_assert_uint_eq(REC_HDR, 28);
	ck_assert_uint_eq(REC_FIXED, 24);
}
END_TEST

/* Rewrite the length field and fix the CRC, so only the length is wrong. */
static void set_len(unsigned char *p, uint32_t len, size_t crc_len)
{
	put32(p, len);
	put32(p + 4, elog__crc32c(0, p + 8, crc_len));
}

UT_TEST(rejects_length_below_24)
{
	struct elog_record r = ut_rec(1, 1, 0, NULL, NULL), out;
	size_t size, got;
	unsigned char *p = ut_encode(&r, &size);
	UT_OK(elog__rec_decode(p, size, &out, &got), NULL);
	for (uint32_t len = 0; len < 24; len++) {
		put32(p, len);
		ck_assert_msg(elog__rec_decode(p, size, &out, &got) == ELOG_CORRUPT, "length %u",
		              len);
	}
	free(p);
}
END_TEST

UT_TEST(rejects_length_above_max)
{
	unsigned char p[64] = { 0 };
	struct elog_record out;
	size_t got;
	put32(p, ELOG_MAX_RECORD + 1);
	/* Refused at once, without waiting for 16 MiB that will never come. */
	UT_RC(elog__rec_decode(p, sizeof p, &out, &got), ELOG_CORRUPT, NULL);
	put32(p, UINT32_MAX);
	UT_RC(elog__rec_decode(p, sizeof p, &out, &got), ELOG_CORRUPT, NULL);
	/* Exactly the maximum is a length the decoder waits for. */
	put32(p, ELOG_MAX_RECORD);
	UT_RC(elog__rec_decode(p, sizeof p, &out, &got), ELOG_END, NULL);
}
END_TEST

UT_TEST(rejects_key_len_beyond_length)
{
	struct elog_record r = ut_rec(1, 1, 0, "ab", "cd"), out;
	size_t size, got;
	unsigned char *p = ut_encode(&r, &size);
	/* key_len 4 still fits (all of key + value), 5 does not. */
	put16(p + 26, 4);
	set_len(p, 28, 24);
	UT_OK(elog__rec_decode(p, size, &out, &got), NULL);
	ck_assert_uint_eq(out.key_len, 4);
	ck_assert_uint_eq(out.value_len, 0);
	put16(p + 26, 5);
	set_len(p, 28, 24);
	UT_RC(elog__rec_decode(p, size, &out, &got), ELOG_CORRUPT, NULL);
	put16(p + 26, 0xFFFF);
	set_len(p, 28, 24);
	UT_RC(elog__rec_decode(p, size, &out, &got), ELOG_CORRUPT, NULL);
	free(p);
}
END_TEST

UT_TEST(rejects_every_flipped_bit)
{
	struct elog_record r = ut_rec(77, 1234, 3, "key", "value"), out;
	size_t size, got;
	unsigned char *p = ut_encode(&r, &size);
	/* Room after the record for the longest length there is, so that a
	 * length made larger by the flip can be read whole and fails on its
	 * CRC (or on the maximum). */
	size_t room = size + ELOG_MAX_RECORD + 4;
	unsigned char *buf = calloc(1, room);
	ck_assert_ptr_nonnull(buf);
	for (size_t bit = 0; bit < size * 8; bit++) {
		memcpy(buf, p, size);
		buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		int rc = elog__rec_decode(buf, room, &out, &got);
		ck_assert_msg(rc == ELOG_CORRUPT, "bit %zu: %d", bit, rc);
		/* With nothing after the record, a longer length reads as
		 * incomplete; it must never decode. */
		rc = elog__rec_decode(buf, size, &out, &got);
		if (bit >= 32)
			ck_assert_msg(rc == ELOG_CORRUPT, "bit %zu: %d", bit, rc);
		else
			ck_assert_msg(rc == ELOG_CORRUPT || rc == ELOG_END, "bit %zu: %d", bit, rc);
	}
	free(buf);
	free(p);
}
END_TEST

UT_TEST(incomplete_buffer_is_end)
{
	struct elog_record r = ut_rec(1, 2, 3, "k", "some value"), out;
	size_t size, got;
	unsigned char *p = ut_encode(&r, &size);
	for (size_t avail = 0; avail < size; avail++)
		ck_assert_msg(elog__rec_decode(p, avail, &out, &got) == ELOG_END, "avail %zu",
		              avail);
	UT_OK(elog__rec_decode(p, size, &out, &got), NULL);
	free(p);
}
END_TEST

UT_TEST(decodes_first_of_several)
{
	struct elog_record a = ut_rec(1, 1, 0, NULL, "first"), b = ut_rec(2, 2, 0, "k", "second");
	size_t sa, sb, got;
	struct elog_record out;
	unsigned char *pa = ut_encode(&a, &sa), *pb = ut_encode(&b, &sb);
	unsigned char buf[256];
	memcpy(buf, pa, sa);
	memcpy(buf + sa, pb, sb);
	UT_OK(elog__rec_decode(buf, sa + sb, &out, &got), NULL);
	ck_assert_uint_eq(got, sa);
	ck_assert_uint_eq(out.offset, 1);
	UT_OK(elog__rec_decode(buf + got, sa + sb - got, &out, &got), NULL);
	ck_assert_uint_eq(got, sb);
	ck_assert_uint_eq(out.offset, 2);
	free(pa);
	free(pb);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("record");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
