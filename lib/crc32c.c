/*
 * crc32c.c: CRC-32C (Castagnoli), the checksum of every record.
 *
 * The hardware instruction is used where the CPU has it (SSE4.2 on x86-64,
 * the CRC extension on aarch64), chosen once at run time, three lanes at a
 * time on long buffers; elsewhere a slicing-by-8 table does the work.  All
 * give the same values (make check-cross compares them):
 * crc32c("123456789") = 0xE3069283.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

#define POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t table[8][256];

static void table_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1)));
		table[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int t = 1; t < 8; t++)
			table[t][n] = (table[t - 1][n] >> 8) ^ table[0][table[t - 1][n] & 0xff];
}

/* The hardware CRC instruction takes 3 cycles but can start one every
 * cycle: long buffers are cut into three lanes of LANE bytes computed side
 * by side, then joined.  The CRC is linear, so the state after lane A then
 * lane B is shift(state after A) ^ (state of B from zero), where shift
 * moves a state past LANE zero bytes; shift_table does that a byte at a
 * time, as a slicing table does. */
#if defined(__x86_64__) || (defined(__aarch64__) && defined(__linux__))
#define HAVE_LANES 1
#define LANE 128
static uint32_t shift_table[4][256];

static uint32_t crc_shift(uint32_t s)
{
	return shift_table[0][s & 0xff] ^ shift_table[1][(s >> 8) & 0xff] ^
	       shift_table[2][(s >> 16) & 0xff] ^ shift_table[3][s >> 24];
}

static uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t len);

static void shift_init(void)
{
	static const unsigned char zeros[LANE];
	uint32_t basis[32];
	/* Shifting is linear: shift each single-bit state, then any state
	 * is the XOR of the shifts of its bits. */
	for (int i = 0; i < 32; i++)
		basis[i] = crc_table(1u << i, zeros, LANE);
	for (int k = 0; k < 4; k++)
		for (uint32_t b = 0; b < 256; b++) {
			uint32_t v = 0;
			for (int i = 0; i < 8; i++)
				if (b & (1u << i))
					v ^= basis[8 * k + i];
			shift_table[k][b] = v;
		}
}
#endif

static uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo = crc ^ get32(p), hi = get32(p + 4);
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
		      table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^ table[3][hi & 0xff] ^
		      table[2][(hi >> 8) & 0xff] ^ table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>
#define HW_TARGET __attribute__((target("sse4.2")))
HW_TARGET static inline uint32_t crc8_hw(uint32_t c, uint8_t v)
{
	return _mm_crc32_u8(c, v);
}
HW_TARGET static inline uint32_t crc32_hw(uint32_t c, uint32_t v)
{
	return _mm_crc32_u32(c, v);
}
/* The state is kept in 64 bits (the instruction clears the upper half), so
 * that a loop of them moves nothing between steps. */
HW_TARGET static inline uint64_t crc64_hw(uint64_t c, uint64_t v)
{
	return _mm_crc32_u64(c, v);
}
static int hw_available(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}
#define HW_NAME "sse4.2"
#elif defined(__aarch64__) && defined(__linux__)
/* The CRC instructions are written out rather than taken from arm_acle.h,
 * whose intrinsics exist only when the whole file is built for +crc; the
 * assembler is told to accept them, and they run only after the check. */
#define HW_TARGET
static inline uint32_t crc8_hw(uint32_t c, uint8_t v)
{
	__asm__(".arch_extension crc\n\tcrc32cb %w0, %w0, %w1" : "+r"(c) : "r"(v));
	return c;
}
static inline uint32_t crc32_hw(uint32_t c, uint32_t v)
{
	__asm__(".arch_extension crc\n\tcrc32cw %w0, %w0, %w1" : "+r"(c) : "r"(v));
	return c;
}
static inline uint64_t crc64_hw(uint64_t c, uint64_t v)
{
	uint32_t w = (uint32_t)c;
	__asm__(".arch_extension crc\n\tcrc32cx %w0, %w0, %x1" : "+r"(w) : "r"(v));
	return w;
}
static int hw_available(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
}
#define HW_NAME "armv8-crc"
#endif

#ifdef HW_NAME
HW_TARGET static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = crc8_hw(crc, *p++);
		len--;
	}
	while (len >= 3 * LANE) {
		uint32_t c1 = 0, c2 = 0;
		for (size_t i = 0; i < LANE; i += 8) {
			uint64_t v0, v1, v2;
			memcpy(&v0, p + i, 8);
			memcpy(&v1, p + LANE + i, 8);
			memcpy(&v2, p + 2 * LANE + i, 8);
			crc = crc64_hw(crc, v0);
			c1 = crc64_hw(c1, v1);
			c2 = crc64_hw(c2, v2);
		}
		crc = crc_shift(crc_shift(crc) ^ c1) ^ c2;
		p += 3 * LANE;
		len -= 3 * LANE;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		crc = crc64_hw(crc, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc8_hw(crc, *p++);
	return crc;
}

/* Short buffers (records of a hundred bytes) are too short for lanes of
 * their own: four of them are taken side by side instead, word by word up
 * to the shortest one's length, and each is finished alone.  A group of
 * fewer than four repeats its last buffer in the lanes left. */
HW_TARGET static void each_hw(const unsigned char *const *p, const size_t *len, uint32_t *out,
                              size_t n)
{
	for (size_t i = 0; i < n; i += 4) {
		size_t j1 = i + 1 < n ? i + 1 : n - 1;
		size_t j2 = i + 2 < n ? i + 2 : n - 1;
		size_t j3 = i + 3 < n ? i + 3 : n - 1;
		const unsigned char *a = p[i], *b = p[j1], *c = p[j2], *d = p[j3];
		size_t m = len[i];
		m = len[j1] < m ? len[j1] : m;
		m = len[j2] < m ? len[j2] : m;
		m = len[j3] < m ? len[j3] : m;
		uint64_t ca = ~0u, cb = ~0u, cc = ~0u, cd = ~0u;
		size_t k = 0;
		for (; k + 8 <= m; k += 8) {
			uint64_t va, vb, vc, vd;
			memcpy(&va, a + k, 8);
			memcpy(&vb, b + k, 8);
			memcpy(&vc, c + k, 8);
			memcpy(&vd, d + k, 8);
			ca = crc64_hw(ca, va);
			cb = crc64_hw(cb, vb);
			cc = crc64_hw(cc, vc);
			cd = crc64_hw(cd, vd);
		}
		if (len[i] == m && len[j1] == m && len[j2] == m && len[j3] == m) {
			/* The same length (records of one size): their last
			 * bytes side by side too, four then one at a time.
			 * One call each would cost more than the rest. */
			if (m - k >= 4) {
				uint32_t va, vb, vc, vd;
				memcpy(&va, a + k, 4);
				memcpy(&vb, b + k, 4);
				memcpy(&vc, c + k, 4);
				memcpy(&vd, d + k, 4);
				ca = crc32_hw(ca, va);
				cb = crc32_hw(cb, vb);
				cc = crc32_hw(cc, vc);
				cd = crc32_hw(cd, vd);
				k += 4;
			}
			for (; k < m; k++) {
				ca = crc8_hw(ca, a[k]);
				cb = crc8_hw(cb, b[k]);
				cc = crc8_hw(cc, c[k]);
				cd = crc8_hw(cd, d[k]);
			}
			out[i] = ~ca;
			out[j1] = ~cb;
			out[j2] = ~cc;
			out[j3] = ~cd;
			continue;
		}
		out[i] = ~crc_hw(ca, a + k, len[i] - k);
		out[j1] = ~crc_hw(cb, b + k, len[j1] - k);
		out[j2] = ~crc_hw(cc, c + k, len[j2] - k);
		out[j3] = ~crc_hw(cd, d + k, len[j3] - k);
	}
}
#endif

static void each_table(const unsigned char *const *p, const size_t *len, uint32_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = ~crc_table(~0u, p[i], len[i]);
}

static uint32_t (*impl)(uint32_t, const unsigned char *, size_t);
static void (*impl_each)(const unsigned char *const *, const size_t *, uint32_t *, size_t);
static const char *impl_name;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void choose(void)
{
	table_init();
#ifdef HAVE_LANES
	shift_init();
#endif
	impl = crc_table;
	impl_each = each_table;
	impl_name = "table";
#ifdef HW_NAME
	if (hw_available()) {
		impl = crc_hw;
		impl_each = each_hw;
		impl_name = HW_NAME;
	}
#endif
}

uint32_t elog__crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&once, choose);
	return ~impl(~crc, buf, len);
}

void elog__crc32c_each(const unsigned char *const *p, const size_t *len, uint32_t *crc, size_t n)
{
	pthread_once(&once, choose);
	if (n)
		impl_each(p, len, crc, n);
}

uint32_t elog__crc32c_table(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&once, choose);
	return ~crc_table(~crc, buf, len);
}

const char *elog__crc32c_impl(void)
{
	pthread_once(&once, choose);
	return impl_name;
}
