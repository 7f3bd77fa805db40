/*
 * fuzz.h: what the libFuzzer harnesses share: putting fuzzed bytes into a
 * file, since the parsers under test read through file descriptors.
 */
#ifndef ELOG_FUZZ_H
#define ELOG_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An anonymous file holding data, or abort: the harness cannot go on
 * without one, and a silent skip would fuzz nothing. */
static inline int fuzz_memfd(const void *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0 || elog__fs_pwrite_all(fd, data, size, 0) != 0)
		abort();
	return fd;
}

/* Replace name in dfd by exactly data. */
static inline void fuzz_put(int dfd, const char *name, const void *data, size_t size)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || elog__fs_pwrite_all(fd, data, size, 0) != 0)
		abort();
	close(fd);
}

/* A private directory for this process, made once. */
static inline const char *fuzz_dir(void)
{
	static char path[64];
	if (!path[0]) {
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(path, sizeof path, "%s/elog-fuzz.XXXXXX", base);
		if (!mkdtemp(path))
			abort();
	}
	return path;
}

#endif
