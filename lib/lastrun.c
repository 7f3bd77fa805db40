/*
 * lastrun.c: when retention and compaction last ran to completion, for the
 * summary (elog_summary_read()).
 *
 * Each successful run (not a dry run) replaces a small file,
 * "retain.last" or "compact.last", holding the wall-clock time in
 * milliseconds since the epoch as decimal text and a newline.  The time
 * is in the file, not in its mtime, so that copying a log keeps it.  The
 * mark is information only: a run whose mark cannot be written (a full
 * disk, a read-only directory) has still done its work and still
 * succeeds, and a missing or unreadable mark reads as "never".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

void elog__lastrun_mark(int dfd, const char *name, int64_t ms)
{
	char buf[32];
	int len = snprintf(buf, sizeof buf, "%lld\n", (long long)ms);

	(void)elog__fs_replace_file(dfd, name, buf, (size_t)len);
}

int64_t elog__lastrun_read(int dfd, const char *name)
{
	char *text, *end;
	size_t len;
	int64_t ms = INT64_MIN;

	if (elog__fs_read_small(dfd, name, 32, &text, &len) != 0)
		return INT64_MIN;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (errno == 0 && end != text && *end == '\n' && v >= 0)
		ms = v;
	free(text);
	return ms;
}
