/*
 * test_crc32c.c: CRC-32C (lib/crc32c.c) against published vectors, against
 * a bit-at-a-time reference written here, and the table path (in a child
 * process) against that reference and against the path this CPU chose, so
 * that both paths are checked independently on any CPU, with or without
 * CRC instructions.
 */
#include "unit.h"

/* The textbook definition, one bit at a time: slow, but too simple to share
 * a mistake with the slicing-by-8 table or the CPU instruction. */
static uint32_t ref_crc(const unsigned char *p, size_t len)
{
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < len; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
	}
	return ~c;
}

/* Bytes that are not a simple pattern, so that a wrong table entry shows. */
static void fill(unsigned char *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
}

UT_TEST(check_string)
{
	ck_assert_uint_eq(elog__crc32c(0, "123456789", 9), 0xE3069283u);
}
END_TEST

UT_TEST(empty_is_zero)
{
	ck_assert_uint_eq(elog__crc32c(0, "", 0), 0);
	ck_assert_uint_eq(elog__crc32c(0, NULL, 0), 0);
	/* An empty update leaves a running CRC as it was. */
	ck_assert_uint_eq(elog__crc32c(0xE3069283u, "x", 0), 0xE3069283u);
}
END_TEST

/* RFC 3720 (iSCSI), appendix B.4. */
UT_TEST(rfc3720_vectors)
{
	unsigned char b[32];
	memset(b, 0, sizeof b);
	ck_assert_uint_eq(elog__crc32c(0, b, 32), 0x8A9136AAu);
	memset(b, 0xFF, sizeof b);
	ck_assert_uint_eq(elog__crc32c(0, b, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		b[i] = (unsigned char)i;
	ck_assert_uint_eq(elog__crc32c(0, b, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		b[i] = (unsigned char)(31 - i);
	ck_assert_uint_eq(elog__crc32c(0, b, 32), 0x113FDB5Cu);
}
END_TEST

UT_TEST(matches_reference_lengths_0_to_100)
{
	unsigned char b[100];
	fill(b, sizeof b, 7);
	for (size_t len = 0; len <= 100; len++)
		ck_assert_msg(elog__crc32c(0, b, len) == ref_crc(b, len),
		              "length %zu: 0x%08x, reference 0x%08x", len, elog__crc32c(0, b, len),
		              ref_crc(b, len));
}
END_TEST

/* Every start alignment, so that the byte-wise head before the 8-byte
 * loop is exercised with each of its lengths. */
UT_TEST(unaligned_buffers)
{
	unsigned char raw[300];
	fill(raw, sizeof raw, 99);
	for (size_t shift = 0; shift < 16; shift++)
		for (size_t len = 0; len <= 64 + 17; len += 3)
			ck_assert_msg(elog__crc32c(0, raw + shift, len) ==
			                      ref_crc(raw + shift, len),
			              "shift %zu length %zu", shift, len);
}
END_TEST

UT_TEST(incremental_equals_one_shot)
{
	unsigned char b[4096];
	fill(b, sizeof b, 3);
	uint32_t whole = elog__crc32c(0, b, sizeof b);
	ck_assert_uint_eq(whole, ref_crc(b, sizeof b));
	static const size_t cuts[] = { 0, 1, 3, 7, 8, 9, 63, 1000, 4095, 4096 };
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		uint32_t c = elog__crc32c(0, b, cuts[i]);
		c = elog__crc32c(c, b + cuts[i], sizeof b - cuts[i]);
		ck_assert_msg(c == whole, "split at %zu", cuts[i]);
	}
	/* Byte by byte, too. */
	uint32_t c = 0;
	for (size_t i = 0; i < sizeof b; i++)
		c = elog__crc32c(c, b + i, 1);
	ck_assert_uint_eq(c, whole);
}
END_TEST

UT_TEST(single_bit_changes_crc)
{
	unsigned char b[64];
	fill(b, sizeof b, 5);
	uint32_t base = elog__crc32c(0, b, sizeof b);
	for (size_t i = 0; i < sizeof b * 8; i++) {
		b[i / 8] ^= (unsigned char)(1u << (i % 8));
		ck_assert_uint_ne(elog__crc32c(0, b, sizeof b), base);
		b[i / 8] ^= (unsigned char)(1u << (i % 8));
	}
}
END_TEST

/* Several buffers at once (records, side by side): each gets the CRC it
 * gets alone, for every count (groups of four and what is left), lengths
 * short and long, equal and not, and any alignment. */
UT_TEST(each_equals_one_by_one)
{
	static const size_t lens[] = { 136, 136, 0, 1, 7, 8, 9, 136, 300, 135, 17, 64, 1000 };
	enum { N = sizeof lens / sizeof lens[0] };
	static unsigned char raw[N * 1008];
	fill(raw, sizeof raw, 11);
	const unsigned char *p[N] = { 0 };
	size_t len[N] = { 0 };
	uint32_t crc[N + 1];
	for (size_t n = 0; n <= N; n++) {
		for (size_t i = 0; i < n; i++) {
			p[i] = raw + i * 1008 + (i * 3 + n) % 8;
			len[i] = lens[(i + n) % N];
		}
		crc[n] = 0xdeadbeefu; /* past the last: left alone */
		elog__crc32c_each(p, len, crc, n);
		for (size_t i = 0; i < n; i++)
			ck_assert_msg(crc[i] == ref_crc(p[i], len[i]),
			              "%zu buffers, #%zu of %zu bytes: 0x%08x, reference 0x%08x", n,
			              i, len[i], crc[i], ref_crc(p[i], len[i]));
		ck_assert_uint_eq(crc[n], 0xdeadbeefu);
	}
}
END_TEST

/* Groups of buffers of one length (records of one size, the common case,
 * whose last bytes are taken side by side): every length of the tail after
 * the 8-byte words, 0 to 7 bytes, any alignment, and groups that end short
 * (their last buffer repeated in the lanes left) or meet a longer buffer. */
UT_TEST(each_of_one_length_every_tail)
{
	enum { N = 11 };
	static unsigned char raw[N * 304];
	fill(raw, sizeof raw, 23);
	const unsigned char *p[N] = { 0 };
	size_t len[N] = { 0 };
	uint32_t crc[N];
	for (size_t l = 0; l <= 151; l++) {
		for (size_t n = 1; n <= N; n++) {
			for (size_t i = 0; i < n; i++) {
				p[i] = raw + i * 304 + (i + l) % 8;
				/* the ninth buffer is longer: its group is mixed */
				len[i] = i == 8 ? l + 5 : l;
			}
			elog__crc32c_each(p, len, crc, n);
			for (size_t i = 0; i < n; i++)
				ck_assert_msg(crc[i] == ref_crc(p[i], len[i]),
				              "%zu buffers of %zu bytes, #%zu: 0x%08x, reference "
				              "0x%08x",
				              n, l, i, crc[i], ref_crc(p[i], len[i]));
		}
	}
}
END_TEST

/* The CRC of a prefix of a fixed buffer at a fixed misalignment, for many
 * lengths, with crc (or with the reference when crc is NULL). */
#define SAMPLES 200
static void sample(uint32_t out[SAMPLES], uint32_t (*crc)(uint32_t, const void *, size_t))
{
	static unsigned char raw[SAMPLES * 13 + 8];
	fill(raw, sizeof raw, 42);
	for (size_t i = 0; i < SAMPLES; i++)
		out[i] = crc ? crc(0, raw + (i % 8), i * 13) : ref_crc(raw + (i % 8), i * 13);
}

/* The portable table code and the one the library chose on this CPU, each
 * against the bitwise reference, so that the test means something on a
 * CPU without CRC instructions too. */
UT_TEST(hardware_and_table_agree)
{
	ck_assert_uint_eq(elog__crc32c_table(0, "123456789", 9), 0xE3069283u);
	uint32_t table[SAMPLES], mine[SAMPLES], ref[SAMPLES];
	sample(table, elog__crc32c_table);
	sample(mine, elog__crc32c);
	sample(ref, NULL);
	for (size_t i = 0; i < SAMPLES; i++) {
		ck_assert_msg(table[i] == ref[i], "sample %zu: table 0x%08x, reference 0x%08x", i,
		              table[i], ref[i]);
		ck_assert_msg(mine[i] == ref[i], "sample %zu: %s 0x%08x, reference 0x%08x", i,
		              elog__crc32c_impl(), mine[i], ref[i]);
	}
	/* On x86-64 every CPU this runs on has SSE4.2: the comparison above
	 * is then of the hardware path too.  Elsewhere, say when this CPU had
	 * none (both paths were the table's). */
#if defined(__x86_64__)
	ck_assert_str_eq(elog__crc32c_impl(), "sse4.2");
#else
	if (strcmp(elog__crc32c_impl(), "table") == 0)
		fprintf(stderr, "test_crc32c: no CRC-32C instruction on this CPU: "
		                "only the table path was tested\n");
#endif
}
END_TEST

/* Every implementation this CPU has, forced in turn (the library picks
 * one, so the others would go untested here): the table code, the CRC
 * instruction with its lanes joined by tables, and by carry-less
 * multiplies.  Long buffers take the lanes; several at once the side by
 * side code. */
UT_TEST(every_implementation_matches_the_reference)
{
	static const char *const what[] = { "", "table", "instruction, lanes joined by tables",
		                            "instruction, lanes joined by multiplies" };
	uint32_t ref[SAMPLES], mine[SAMPLES];
	sample(ref, NULL);
	static unsigned char big[3 * 4096 + 8];
	fill(big, sizeof big, 17);
	int tried = 0;
	for (int impl = 1; impl <= 3; impl++) {
		if (elog__crc32c_force(impl) != 0)
			continue;
		tried++;
		sample(mine, elog__crc32c);
		for (size_t i = 0; i < SAMPLES; i++)
			ck_assert_msg(mine[i] == ref[i], "%s: sample %zu: 0x%08x, reference 0x%08x",
			              what[impl], i, mine[i], ref[i]);
		for (size_t len = 380; len < sizeof big - 8; len += 377)
			ck_assert_msg(elog__crc32c(0, big + len % 8, len) ==
			                      ref_crc(big + len % 8, len),
			              "%s: length %zu", what[impl], len);
		const unsigned char *p[3] = { big, big + 5, big + 4099 };
		size_t len[3] = { 4096, 1000, 385 };
		uint32_t crc[3];
		elog__crc32c_each(p, len, crc, 3);
		for (int i = 0; i < 3; i++)
			ck_assert_msg(crc[i] == ref_crc(p[i], len[i]), "%s: each, #%d", what[impl],
			              i);
	}
	ck_assert_int_eq(elog__crc32c_force(4), ENOTSUP);
	UT_OK(elog__crc32c_force(0), NULL);
#if defined(__x86_64__)
	ck_assert_int_ge(tried, 2); /* SSE4.2 is everywhere x86-64 runs this */
#endif
	ck_assert_int_ge(tried, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("crc32c");
	TCase *tc = tcase_create("crc32c");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
