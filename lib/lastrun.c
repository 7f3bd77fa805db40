/*
 * lastrun.c: when retention and compaction last ran to completion, for the
 * summary (elog_summary_read()): "retain.last" and "compact.last", whose
 * text elog(5) gives.  The time is in the file, not in its mtime, so that
 * copying a log keeps it.  The mark is information only: a run whose mark
 * cannot be written (a full disk, a read-only directory) has still done
 * its work and still succeeds, and a missing or unreadable mark reads as
 * "never".  Only the first line, the time, is read here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os.h"
#include "files.h"

/* The largest mark read: the time and a line for each of the most
 * consumers a log may have. */
#define LASTRUN_MAX (1u << 20)

void elog__lastrun_mark(int dfd, const char *name, int64_t ms, const char *more, size_t len)
{
	char head[32];
	int n = snprintf(head, sizeof head, "%lld\n", (long long)ms);
	char *buf = malloc((size_t)n + len);

	if (!buf || (size_t)n + len > LASTRUN_MAX) {
		/* The time alone is better than no mark. */
		free(buf);
		(void)elog__fs_replace_file(dfd, name, head, (size_t)n);
		return;
	}
	memcpy(buf, head, (size_t)n);
	if (len)
		memcpy(buf + n, more, len);
	(void)elog__fs_replace_file(dfd, name, buf, (size_t)n + len);
	free(buf);
}

int64_t elog__lastrun_read(int dfd, const char *name)
{
	char *text, *end;
	size_t len;
	int64_t ms = INT64_MIN;

	if (elog__fs_read_small(dfd, name, LASTRUN_MAX, &text, &len) != 0)
		return INT64_MIN;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (errno == 0 && end != text && *end == '\n' && v >= 0)
		ms = v;
	free(text);
	return ms;
}
