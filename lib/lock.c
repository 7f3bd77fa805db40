/*
 * lock.c: the advisory locks of a log directory.  The writer holds an
 * exclusive flock(2) on LOCK for as long as it runs and writes its pid into
 * the file so that a second writer can name it; maintenance programs hold
 * maint.lock instead, so they never stop the application's writer.
 * flock locks belong to the open file description and vanish with the
 * process, so a crashed writer never leaves a stale lock behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "internal.h"

/* The pid written by the holder, or 0 when the file holds none. */
static long lock_holder(int fd)
{
	char buf[32];
	size_t got;
	if (fs_pread_full(fd, buf, sizeof buf - 1, 0, &got) != 0)
		return 0;
	buf[got] = '\0';
	char *end;
	long pid = strtol(buf, &end, 10);
	return (end != buf && pid > 0) ? pid : 0;
}

int lock_take(int dfd, const char *name, int wait, int record_pid, int *fdp, char *msg)
{
	int fd = fs_openat(dfd, name, O_RDWR | O_CREAT, 0666), writable = 1;
	/* flock(2) needs no write access: a lock file someone else owns
	 * (root's cron made it before elog gave such files the directory's
	 * owner) is locked read-only, without the pid. */
	if (fd < 0 && errno == EACCES) {
		fd = fs_openat(dfd, name, O_RDONLY, 0);
		writable = 0;
	}
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			return errmsg_set(msg, e, "%s: refusing to follow a symbolic link", name);
		return errmsg_set(msg, e, "%s: %s", name, strerror(e));
	}
	while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
		int e = errno;
		if (e == EINTR)
			continue;
		if (e == EWOULDBLOCK) {
			long pid = lock_holder(fd);
			close(fd);
			if (pid)
				return errmsg_set(msg, ELOG_LOCKED,
				    "locked by another writer (pid %ld)", pid);
			return errmsg_set(msg, ELOG_LOCKED, "locked by another process");
		}
		close(fd);
		return errmsg_set(msg, e, "%s: %s", name, strerror(e));
	}
	if (record_pid && writable) {
		char buf[32];
		int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
		int err = ftruncate(fd, 0) < 0 ? errno : fs_pwrite_all(fd, buf, (size_t)n, 0);
		/* The pid only names the holder in messages: a full disk
		 * must not keep retention from freeing space. */
		if (err == ENOSPC || err == EDQUOT)
			err = 0;
		if (err) {
			close(fd);
			return errmsg_set(msg, err, "%s: %s", name, strerror(err));
		}
	}
	*fdp = fd;
	return 0;
}
