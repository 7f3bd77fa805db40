/*
 * syncfault.c: an LD_PRELOAD shim for the CLI tests of a writer's failed
 * or interrupted fdatasync(2), which a healthy disk never gives.
 *
 *   ELOG_TEST_SYNC_FAULT=eio   the call fails with EIO, as Linux reports a
 *                              failed writeback (the pages stay readable
 *                              from the cache, as the kernel may keep them)
 *   ELOG_TEST_SYNC_FAULT=kill  the process is killed with SIGKILL instead,
 *                              after its batch was written, before it is
 *                              durable (as if the call failed and its
 *                              caller died before it could say so)
 *   ELOG_TEST_SYNC_FAULT=kill-before
 *                              the process is killed with SIGKILL when it
 *                              records a sync in LOCK, before the call
 *   ELOG_TEST_SYNC_FAULT=kill-on-error
 *                              the call is made; when it fails (a real
 *                              writeback error), the process is killed
 *                              with SIGKILL before it returns
 *   ELOG_TEST_SYNC_FAULT=stop-on-error
 *                              the same, but the process stops itself
 *                              (SIGSTOP) before it returns
 *   ELOG_TEST_SYNC_FAULT=eio-stop
 *                              the call fails with EIO, and the process
 *                              stops itself (SIGSTOP) before it returns:
 *                              SIGCONT lets it go on
 *   ELOG_TEST_SYNC_SKIP=N      the first N calls are let through
 *
 * Only fdatasync(2) on a segment ("*.log") and pwrite(2) of a pending
 * sync record to LOCK are touched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int path_ends(int fd, const char *end)
{
	char link[64], path[PATH_MAX];
	size_t len = strlen(end);
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n < (ssize_t)len)
		return 0;
	path[n] = '\0';
	return strcmp(path + n - len, end) == 0;
}

static int is_segment(int fd)
{
	return path_ends(fd, ".log");
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t at)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);
	if (!real)
		real = (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
	const char *mode = getenv("ELOG_TEST_SYNC_FAULT");
	if (mode && strcmp(mode, "kill-before") == 0 && at >= 512 && len > 13 &&
	    memcmp(buf, "ELOGSYN1 st=P", 13) == 0 && path_ends(fd, "/LOCK"))
		kill(getpid(), SIGKILL);
	return real(fd, buf, len, at);
}

int fdatasync(int fd)
{
	static int (*real)(int);
	static long calls;
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	const char *mode = getenv("ELOG_TEST_SYNC_FAULT");
	const char *skip = getenv("ELOG_TEST_SYNC_SKIP");
	if (!mode || !is_segment(fd) || calls++ < (skip ? atol(skip) : 0))
		return real(fd);
	if (strcmp(mode, "kill-before") == 0)
		return real(fd);
	if (strcmp(mode, "kill-on-error") == 0 || strcmp(mode, "stop-on-error") == 0) {
		int rc = real(fd), e = errno;
		if (rc < 0)
			kill(getpid(), mode[0] == 'k' ? SIGKILL : SIGSTOP);
		errno = e;
		return rc;
	}
	if (strcmp(mode, "kill") == 0)
		kill(getpid(), SIGKILL);
	if (strcmp(mode, "eio-stop") == 0)
		kill(getpid(), SIGSTOP);
	errno = EIO;
	return -1;
}
