/*
 * fuzz_consumers: elog__ctable_parse() over arbitrary text as consumers.json.  A
 * table it accepts is sorted with valid names, and its text form parses
 * back to the same table.
 */
#include "fuzz.h"
#include "consumers_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctable t = { 0 }, u = { 0 };
	char msg[ELOG_MSG_MAX];
	char *text;
	size_t len;
	if (size > CONSUMERS_FILE_MAX)
		return 0;
	if (elog__ctable_parse(&t, (const char *)data, size, msg) != 0) {
		if (t.n != 0)
			abort();
		return 0;
	}
	for (size_t i = 0; i < t.n; i++)
		if (elog_consumer_name_check(t.v[i].name) != 0 ||
		    (i > 0 && strcmp(t.v[i - 1].name, t.v[i].name) >= 0))
			abort();
	if (elog__ctable_format(&t, &text, &len) != 0)
		abort();
	if (elog__ctable_parse(&u, text, len, msg) != 0 || u.n != t.n)
		abort();
	for (size_t i = 0; i < t.n; i++)
		if (strcmp(t.v[i].name, u.v[i].name) != 0 || t.v[i].offset != u.v[i].offset ||
		    t.v[i].committed_ms != u.v[i].committed_ms)
			abort();
	free(text);
	elog__ctable_free(&t);
	elog__ctable_free(&u);
	return 0;
}
