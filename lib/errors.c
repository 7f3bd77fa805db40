/*
 * errors.c: the one error contract.  Functions return 0, a positive errno
 * value or a negative ELOG_* code; elog_strerror() names any of them, and
 * errmsg_set() fills a handle's message with the context of the failure.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *elog_strerror(int code)
{
	switch (code) {
	case 0: return "success";
	case ELOG_END: return "no more records";
	case ELOG_GAP: return "records were removed by retention";
	case ELOG_LOCKED: return "locked by another writer";
	case ELOG_CORRUPT: return "corrupt data";
	case ELOG_NOTLOG: return "not an elog directory";
	case ELOG_VERSION: return "unsupported format version";
	case ELOG_TOOBIG: return "record too large";
	case ELOG_FAILED: return "writer failed earlier and refuses further writes";
	case ELOG_NETFS: return "log is on a network filesystem";
	case ELOG_INVALID: return "invalid argument";
	case ELOG_TIMEOUT: return "timed out";
	case ELOG_UNSUPPORTED: return "this build has no zstd support";
	}
	if (code > 0)
		return strerror(code);
	const char *s = elog_consumer_strerror(code);
	return s ? s : "unknown error";
}

const char *elog_version(void)
{
	return ELOG_VERSION_STRING;
}

int errmsg_set(char *buf, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, ERRMSG_MAX, fmt, ap);
	va_end(ap);
	return code;
}
