/*
 * base.h: the pure code every file of libelog may use: little-endian
 * fields, growing buffers, timestamps, CRC-32C and error messages.  No
 * file and no system call.  Never installed; internal.h maps the layers.
 */
#ifndef ELOG_BASE_H
#define ELOG_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "elog.h"

/* ---- little-endian encoding (le.h would be a junk drawer of one line) ---- */
static inline void put16(unsigned char *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}
static inline void put32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}
static inline void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}
static inline uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ---- buf.c ---- */
/* Room for need elements of size bytes in the array p of *cap, doubling
 * from first: the array (p, or where it moved), or NULL when out of memory
 * (p and *cap unchanged). */
void *elog__grow(void *p, size_t *cap, size_t need, size_t size, size_t first);
/* Make *p hold at least need bytes, doubling from first (0 or ENOMEM). */
int elog__buf_grow(unsigned char **p, size_t *cap, size_t need, size_t first);
/* Append the size bytes at x to the array whose pointer is at arrayp (of
 * any element type, NULL when empty) and which holds *n elements of size
 * bytes: 0 or ENOMEM. */
int elog__array_push(void *arrayp, size_t *n, size_t size, const void *x);

/* ---- timestamp.c ---- */
/* 1 when retention may believe ts_ms: from 2000-01-01 to an hour past
 * now_ms. */
int elog__ts_plausible(int64_t ts_ms, int64_t now_ms);

/* ---- crc32c.c ---- */
uint32_t elog__crc32c(uint32_t crc, const void *buf, size_t len);
const char *elog__crc32c_impl(void); /* "sse4.2", "armv8-crc" or "table" */
/* crc[i] = elog__crc32c(0, p[i], len[i]) for i < n, several buffers side by
 * side: short ones (records) leave the CRC instruction idle one at a time. */
void elog__crc32c_each(const unsigned char *const *p, const size_t *len, uint32_t *crc, size_t n);
/* The portable code alone, whatever the CPU has: for tests to compare. */
uint32_t elog__crc32c_table(uint32_t crc, const void *buf, size_t len);
/* For tests: from now on use the table code (1), the CRC instruction with
 * lanes joined by tables (2) or by carry-less multiplies (3), or what the
 * CPU has (0).  0, or ENOTSUP when the CPU lacks it. */
int elog__crc32c_force(int impl);

/* ---- errors.c: messages ---- */
/* Format a message into buf (ELOG_MSG_MAX bytes: a handle's or a caller's)
 * and return code, so error paths read "return elog__errmsg_set(...)". */
int elog__errmsg_set(char *buf, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#endif
