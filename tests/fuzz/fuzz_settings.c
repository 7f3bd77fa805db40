/*
 * fuzz_settings: elog__settings_parse() over arbitrary text.  Settings it accepts
 * are in range, and their text form parses back to the same.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elog_settings s, t;
	char buf[SETTINGS_MAX];
	if (size > SETTINGS_MAX)
		return 0; /* elog__settings_load() refuses larger files */
	if (elog__settings_parse((const char *)data, size, &s) != 0)
		return 0;
	if (s.segment_bytes < ELOG_SEGMENT_BYTES_MIN || s.segment_bytes > ELOG_SEGMENT_BYTES_MAX ||
	    s.index_interval < ELOG_INDEX_INTERVAL_MIN ||
	    s.index_interval > ELOG_INDEX_INTERVAL_MAX || strlen(s.id) != 32)
		abort();
	/* The text form is of this version's format: writing settings is
	 * the upgrade of a log of format 1. */
	size_t n = elog__settings_format(&s, buf);
	s.format = SETTINGS_FORMAT;
	if (n >= SETTINGS_MAX || elog__settings_parse(buf, n, &t) != 0 ||
	    memcmp(&s, &t, sizeof s) != 0)
		abort();
	return 0;
}
