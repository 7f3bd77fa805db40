/*
 * fuzz_scan: elog__scan_next() over arbitrary bytes as a segment file, from a
 * position and up to a limit taken from the input, as readers, recovery
 * and elog-verify use it.  Every record returned must start where the last
 * one ended, and the walk must end.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint64_t start = data[0] % 64;
	uint64_t limit = data[1] & 1 ? UINT64_MAX : size - (data[1] >> 1) % (size + 1) / 2;
	int fd = fuzz_memfd(data + 2, size - 2);
	struct scan s;
	struct elog_record rec;
	uint64_t at, expect = start;
	int err;
	if (elog__scan_init(&s, fd, 0, start, limit) != 0)
		abort();
	while ((err = elog__scan_next(&s, &rec, &at)) == 0) {
		if (at != expect || s.pos <= at || s.pos > size - 2)
			abort();
		expect = s.pos;
	}
	if (err != ELOG_END && err != ELOG_CORRUPT)
		abort();
	/* A seek back into the buffer and a second pass see the same. */
	elog__scan_seek(&s, start);
	while (elog__scan_next(&s, &rec, &at) == 0)
		;
	elog__scan_free(&s);
	close(fd);
	return 0;
}
