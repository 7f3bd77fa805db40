/*
 * fuzz_segname: elog__seg_parse_name() over arbitrary names.  A name it accepts
 * is exactly the one elog__seg_name() makes for its base, so that no two names
 * mean one segment.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[300], again[NAME_MAX_LOCAL];
	static const char *const ext[] = { SEG_EXT, IDX_EXT };
	if (size >= sizeof name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	for (int i = 0; i < 2; i++) {
		uint64_t base;
		if (!elog__seg_parse_name(name, ext[i], &base))
			continue;
		elog__seg_name(again, base, ext[i]);
		if (strcmp(again, name) != 0)
			abort();
	}
	return 0;
}
