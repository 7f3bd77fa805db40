/*
 * syncfault.c: an LD_PRELOAD shim for the CLI tests of a writer's failed
 * or interrupted fdatasync(2), which a healthy disk never gives.
 *
 *   ELOG_TEST_SYNC_FAULT=eio   the call fails with EIO, as Linux reports a
 *                              failed writeback (the pages stay readable
 *                              from the cache, as the kernel may keep them)
 *   ELOG_TEST_SYNC_FAULT=kill  the process is killed with SIGKILL instead,
 *                              after its batch was written, before it is
 *                              durable
 *   ELOG_TEST_SYNC_SKIP=N      the first N calls are let through
 *
 * Only fdatasync(2) on a segment ("*.log") is touched.
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

static int is_segment(int fd)
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n < 4)
		return 0;
	path[n] = '\0';
	return strcmp(path + n - 4, ".log") == 0;
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
	if (strcmp(mode, "kill") == 0)
		kill(getpid(), SIGKILL);
	errno = EIO;
	return -1;
}
