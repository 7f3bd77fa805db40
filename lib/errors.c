/*
 * errors.c: the one error contract.  Functions return 0, a positive errno
 * value or a negative ELOG_* code; elog_strerror() names every one of them
 * (the texts of the library's own codes live here and nowhere else), and
 * elog__errmsg_set() writes a message with the context of a failure into an
 * ELOG_MSG_MAX buffer: a handle's, or the caller's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "os.h"

const char *elog_strerror(int code)
{
	switch (code) {
	case 0:
		return "success";
	case ELOG_END:
		return "no more records";
	case ELOG_GAP:
		return "records were removed by retention";
	case ELOG_LOCKED:
		return "locked by another writer";
	case ELOG_CORRUPT:
		return "corrupt data";
	case ELOG_NOTLOG:
		return "not an elog directory";
	case ELOG_BADVERSION:
		return "unsupported format version";
	case ELOG_TOOBIG:
		return "record too large";
	case ELOG_FAILED:
		return "writer failed earlier and refuses further writes";
	case ELOG_NETFS:
		return "log is on a network filesystem";
	case ELOG_INVALID:
		return "invalid argument";
	case ELOG_TIMEOUT:
		return "timed out";
	case ELOG_UNSUPPORTED:
		return "this build has no zstd support";
	case ELOG_NOCOMPACT:
		return "the log's cleanup policy is delete, not compact";
	case ELOG_BADNAME:
		return "invalid consumer name (1 to 64 of A-Z a-z 0-9 . _ -, "
		       "not starting with . or -)";
	case ELOG_NOCONSUMER:
		return "no such consumer";
	case ELOG_BEYOND:
		return "offset at or above the durable end of the log";
	case ELOG_TOOMANY:
		return "too many consumers";
	case ELOG_TAKEN:
		return "offset at or below the end of the log";
	case ELOG_NOTREG:
		return "not a regular file";
	case ELOG_LINKED:
		return "has more than one hard link, refusing to write it";
	case ELOG_SETTING:
		return "an option differs from the log's stored setting";
	}
	return code > 0 ? strerror(code) : "unknown error";
}

const char *elog_version(void)
{
	return ELOG_VERSION_STRING;
}

int elog__errmsg_set(char *buf, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, ELOG_MSG_MAX, fmt, ap);
	va_end(ap);
	return code;
}
