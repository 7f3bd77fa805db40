/*
 * dirstall.c: an LD_PRELOAD shim for the CLI tests of a log deleted while
 * a follower looks at it, a window of a few instructions that a test
 * cannot hit by timing.
 *
 *   ELOG_TEST_DIR_STALL=FILE  an fstat(2) of a directory that is still
 *                             linked but has no settings file (a log part
 *                             of the way through rm -rf) creates FILE and
 *                             waits, up to 10 s, until FILE is removed,
 *                             before it asks the kernel
 *
 * The test removes the directory meanwhile, then FILE.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int fstat(int fd, struct stat *st)
{
	static int (*real)(int, struct stat *);
	if (!real)
		real = (int (*)(int, struct stat *))dlsym(RTLD_NEXT, "fstat");
	const char *file = getenv("ELOG_TEST_DIR_STALL");
	struct stat s;
	if (file && real(fd, &s) == 0 && S_ISDIR(s.st_mode) && s.st_nlink > 0 &&
	    faccessat(fd, "settings", F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
		int mfd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (mfd >= 0)
			close(mfd);
		for (int i = 0; i < 1000 && access(file, F_OK) == 0; i++)
			usleep(10000);
	}
	return real(fd, st);
}
