/*
 * fuzz_watermark: elog__wm_decode() over arbitrary bytes, and elog__wm_read() over them
 * as a file (which must give up on a damaged one rather than spin).
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct watermark wm;
	if (elog__wm_decode(data, size, &wm) == 0) {
		unsigned char again[WM_SIZE];
		elog__wm_encode(again, &wm);
		if (memcmp(again, data, 36) != 0)
			abort();
	}
	int fd = fuzz_memfd(data, size);
	int err = elog__wm_read(fd, &wm);
	if (err != 0 && err != ELOG_CORRUPT)
		abort();
	close(fd);
	return 0;
}
