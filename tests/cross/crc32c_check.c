/*
 * crc32c_check.c: the CRC-32C of lib/crc32c.c against known vectors and
 * against its own portable table, on whatever CPU it runs on.  Built for
 * aarch64 and run under qemu by tests/cross/run.sh, so that the ARMv8 CRC
 * instructions are tested on an x86-64 machine too.  Exit 0 when right.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int main(void)
{
	static const unsigned char zeros[32];
	static unsigned char buf[5000];
	unsigned char ones[32];
	int bad = 0;

	memset(ones, 0xff, sizeof ones);
	for (int i = 0; i < 5000; i++)
		buf[i] = (unsigned char)(i * 7 + 3 + (i >> 8));
	bad |= elog__crc32c(0, "123456789", 9) != 0xE3069283u;
	bad |= elog__crc32c(0, zeros, 32) != 0x8A9136AAu;
	bad |= elog__crc32c(0, ones, 32) != 0x62A8AB43u;
	bad |= elog__crc32c(0, "", 0) != 0;
	/* Every length and alignment up to a few words, and long buffers
	 * that take the interleaved lanes, with and without a tail: the
	 * same digest from the chosen code as from the portable table. */
	uint32_t mix = 0, table = 0;
	for (int off = 0; off < 8; off++) {
		for (int len = 0; len < 200; len++) {
			mix = mix * 31 + elog__crc32c(0, buf + off, (size_t)len);
			table = table * 31 + elog__crc32c_table(0, buf + off, (size_t)len);
		}
		for (int len = 200; len < 4900; len += 13) {
			mix = mix * 31 + elog__crc32c(0x12345678u, buf + off, (size_t)len);
			table = table * 31 +
			        elog__crc32c_table(0x12345678u, buf + off, (size_t)len);
		}
	}
	/* Records side by side (elog__crc32c_each), in groups of four and
	 * what is left, against the table one at a time. */
	const unsigned char *p[11];
	size_t len[11];
	uint32_t each[11];
	for (int i = 0; i < 11; i++) {
		p[i] = buf + i * 401 + i % 8;
		len[i] = (size_t)(i % 3 ? 136 : 7 * i + 1);
	}
	elog__crc32c_each(p, len, each, 11);
	for (int i = 0; i < 11; i++)
		bad |= each[i] != elog__crc32c_table(0, p[i], len[i]);
	printf("%s %08x, table %08x\n", elog__crc32c_impl(), mix, table);
	bad |= mix != table;
	return bad;
}
