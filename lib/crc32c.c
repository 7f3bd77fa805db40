/*
 * crc32c.c: CRC-32C (Castagnoli), the checksum of every record.
 *
 * The hardware instruction is used where the CPU has it (SSE4.2 on x86-64,
 * the CRC extension on aarch64), chosen once at run time, three lanes at a
 * time on long buffers; elsewhere a slicing-by-8 table does the work.  All
 * give the same values (make check-cross compares them):
 * crc32c("123456789") = 0xE3069283.
 *
 * Nothing is prepared that a call does not need: a process that appends
 * one record (`echo x | elog-append LOG`) checks a few short buffers, and
 * building the tables (12 KiB of pages to fault in) or asking the CPU
 * about every feature it has (libgcc's __builtin_cpu_init runs CPUID a
 * dozen times, each a trap to the hypervisor on a virtual machine) would
 * cost it more than all its checksums.  What glibc found at start-up (or
 * one CPUID) tells SSE4.2 and PCLMULQDQ; with both, lanes are joined by a carry-less multiply and no
 * table is ever built.  Elsewhere the tables are built on first use: the
 * lane shifts for the first buffer long enough for lanes, the slicing
 * table for them or where there is no CRC instruction.
 */
#include <errno.h>
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
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

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
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

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
	pthread_once(&table_once, table_init);
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
#if defined(__has_include) && __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#else
#include <cpuid.h>
#endif
#include <nmmintrin.h>
#include <wmmintrin.h>
#define HW_TARGET __attribute__((target("sse4.2,pclmul")))
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
/* A state moved past LANE zero bytes is the state times x^(8 LANE) mod P:
 * one carry-less multiply by x^(8 LANE - 33) mod P (bit-reflected, as the
 * states are: hence 33, not 32) and one CRC of the 64-bit product do that
 * without a table.  The unit tests check it against the bitwise CRC. */
#define HAVE_CLMUL 1
#define LANE_K 0x0d3b6092u
HW_TARGET static inline uint32_t clmul_shift(uint32_t s)
{
	__m128i v = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)s), _mm_cvtsi32_si128((int)LANE_K),
	                                 0);
	return crc64_hw(0, (uint64_t)_mm_cvtsi128_si64(v));
}
/* 2 with SSE4.2 and PCLMULQDQ, 1 with SSE4.2 alone, else 0.  glibc (2.33
 * and later) asked the CPU at start-up and says what it found; elsewhere
 * CPUID leaf 1 tells (ECX bits 20 and 1).  Neither needs support from the
 * operating system beyond the SSE state every x86-64 kernel saves. */
static int hw_available(void)
{
#if defined(__has_include) && __has_include(<sys/platform/x86.h>)
	if (!CPU_FEATURE_ACTIVE(SSE4_2))
		return 0;
	return CPU_FEATURE_ACTIVE(PCLMULQDQ) ? 2 : 1;
#else
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_2))
		return 0;
	return c & bit_PCLMUL ? 2 : 1;
#endif
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

/* The implementation: IMPL_UNCHOSEN, then one of the others.  The choice
 * is a pure function of the CPU, so threads that race to make it store
 * the same value: an atomic int needs no once and no futex.  Not zero at
 * first, so that it lies in .data, on a page every program touches at its
 * start, rather than in .bss after some large buffer: a page fault less. */
enum { IMPL_UNCHOSEN = -1, IMPL_TABLE = 1, IMPL_HW, IMPL_HW_CLMUL };
static int impl_chosen = IMPL_UNCHOSEN;

#ifdef HW_NAME
HW_TARGET static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = crc8_hw(crc, *p++);
		len--;
	}
	int clmul = 0;
	if (len >= 3 * LANE) {
		clmul = __atomic_load_n(&impl_chosen, __ATOMIC_RELAXED) == IMPL_HW_CLMUL;
		if (!clmul)
			pthread_once(&shift_once, shift_init);
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
#ifdef HAVE_CLMUL
		if (clmul)
			crc = clmul_shift(clmul_shift(crc) ^ c1) ^ c2;
		else
#endif
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

/* The table code, once its table is built. */
static uint32_t table_crc(uint32_t crc, const unsigned char *p, size_t len)
{
	pthread_once(&table_once, table_init);
	return crc_table(crc, p, len);
}

static int impl_get(void)
{
	int m = __atomic_load_n(&impl_chosen, __ATOMIC_RELAXED);
	if (m == IMPL_UNCHOSEN) {
		m = IMPL_TABLE;
#ifdef HW_NAME
		int hw = hw_available();
		m = hw == 2 ? IMPL_HW_CLMUL : hw ? IMPL_HW : IMPL_TABLE;
#endif
		__atomic_store_n(&impl_chosen, m, __ATOMIC_RELAXED);
	}
	return m;
}

int elog__crc32c_force(int impl)
{
	int hw = 0;
#ifdef HW_NAME
	hw = hw_available();
#endif
	if (impl < 0 || impl > IMPL_HW_CLMUL || (impl == IMPL_HW && hw < 1) ||
	    (impl == IMPL_HW_CLMUL && hw < 2))
		return ENOTSUP;
	__atomic_store_n(&impl_chosen, impl ? impl : IMPL_UNCHOSEN, __ATOMIC_RELAXED);
	return 0;
}

uint32_t elog__crc32c(uint32_t crc, const void *buf, size_t len)
{
#ifdef HW_NAME
	if (impl_get() != IMPL_TABLE)
		return ~crc_hw(~crc, buf, len);
#endif
	return ~table_crc(~crc, buf, len);
}

void elog__crc32c_each(const unsigned char *const *p, const size_t *len, uint32_t *crc, size_t n)
{
	if (!n)
		return;
#ifdef HW_NAME
	if (impl_get() != IMPL_TABLE) {
		each_hw(p, len, crc, n);
		return;
	}
#endif
	pthread_once(&table_once, table_init);
	for (size_t i = 0; i < n; i++)
		crc[i] = ~crc_table(~0u, p[i], len[i]);
}

uint32_t elog__crc32c_table(uint32_t crc, const void *buf, size_t len)
{
	return ~table_crc(~crc, buf, len);
}

const char *elog__crc32c_impl(void)
{
#ifdef HW_NAME
	if (impl_get() != IMPL_TABLE)
		return HW_NAME;
#endif
	return "table";
}
