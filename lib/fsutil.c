/*
 * fsutil.c: the durability helpers.  Every write that must survive a crash
 * goes through these: full writes that retry short ones, fsync of a
 * directory after a name changes in it, and replacing a small file by
 * write-temporary, fsync, rename, fsync-directory.  It knows no file names
 * of elog(5): what a name means is files.c's, one layer up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "os.h"

/* Write all len bytes at pos, or at the file position when pos is -1. */
static int write_full(int fd, const void *buf, size_t len, off_t pos)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = pos < 0 ? write(fd, p, len) : pwrite(fd, p, len, pos);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0)
			return EIO;
		p += n;
		pos += pos < 0 ? 0 : n;
		len -= (size_t)n;
	}
	return 0;
}

int elog__fs_write_all(int fd, const void *buf, size_t len)
{
	return write_full(fd, buf, len, -1);
}

int elog__fs_pwrite_all(int fd, const void *buf, size_t len, off_t pos)
{
	return write_full(fd, buf, len, pos);
}

int elog__fs_pread_full(int fd, void *buf, size_t len, off_t pos, size_t *got)
{
	char *p = buf;
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, p + done, len - done, pos + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*got = done;
			return errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	*got = done;
	return 0;
}

int elog__fs_fsync_dir(int dfd)
{
	/* Some filesystems refuse fsync on a directory (EINVAL); the rename
	 * is then as durable as that filesystem can make it. */
	if (fsync(dfd) < 0 && errno != EINVAL)
		return errno;
	return 0;
}

/* Give a file this process just created in dfd the directory's owner and
 * group, when running as root: a root cron job on a log an application
 * user owns must never leave behind a file that user cannot open.  Best
 * effort: where root may not chown (a user namespace), the file keeps
 * root's ownership, as it would have without this. */
static void give_to_dir_owner(int dfd, int fd)
{
	struct stat d;
	if (fstat(dfd, &d) == 0 && d.st_uid != 0)
		(void)!fchown(fd, d.st_uid, d.st_gid);
}

int elog__fs_openat_stat(int dfd, const char *name, int flags, mode_t mode, struct stat *st)
{
	int fd = -1, e;
	int create = (flags & O_CREAT) != 0, excl = create && (flags & O_EXCL);
	int trunc = (flags & O_TRUNC) != 0;
	int exists = !create;

	/* O_NONBLOCK stays set on what is returned: open(2) of a FIFO
	 * swapped in after the look below would otherwise block, and on a
	 * regular file the flag changes nothing (open(2): "no effect for
	 * regular files"), so clearing it again was a system call that
	 * bought nothing.  O_NOCTTY: a terminal never becomes ours.  O_TRUNC
	 * waits until the file is known to be one we may write. */
	flags = (flags & ~O_TRUNC) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
	/* Look before opening: open(2) of a FIFO blocks until someone opens
	 * the other end, and opening or closing a device may act (a tape
	 * rewinds).  O_NONBLOCK covers a file swapped in between. */
	if (!excl && fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st->st_mode)) {
			errno = ELOOP;
			return -1;
		}
		if (!S_ISREG(st->st_mode)) {
			errno = ELOG_NOTREG;
			return -1;
		}
		exists = 1;
	}
	/* A file that is there is opened as it is, in one call.  One that is
	 * not is made with O_EXCL, so that this process knows whether it
	 * made it (root gives what it made to the directory's owner); when
	 * another process makes it or removes it in between, try again. */
	for (int attempt = 0;; attempt++) {
		if (exists) {
			fd = openat(dfd, name, flags & ~O_CREAT, mode);
			if (fd >= 0 || errno != ENOENT || !create || attempt > 100)
				break;
		}
		fd = openat(dfd, name, flags | O_EXCL, mode);
		if (fd >= 0) {
			if (geteuid() == 0)
				give_to_dir_owner(dfd, fd);
			break;
		}
		if (excl || errno != EEXIST || attempt > 100)
			break;
		exists = 1;
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0)
		goto fail;
	if (!S_ISREG(st->st_mode)) {
		errno = ELOG_NOTREG;
		goto fail;
	}
	/* A second name may lie outside the log (a hard link planted by
	 * whoever can write the directory): writing through it would
	 * change a file elsewhere, with the rights of whoever runs us. */
	if (st->st_nlink > 1 && (flags & O_ACCMODE) != O_RDONLY) {
		errno = ELOG_LINKED;
		goto fail;
	}
	if (trunc && st->st_size != 0) {
		if (ftruncate(fd, 0) < 0)
			goto fail;
		st->st_size = 0;
	}
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

int elog__fs_openat(int dfd, const char *name, int flags, mode_t mode)
{
	struct stat st;
	return elog__fs_openat_stat(dfd, name, flags, mode, &st);
}

/*
 * Temporary files.  "<name>.tmp.<pid>.<n>" is created exclusively and its
 * creator holds an exclusive flock(2) on it, through the descriptor it
 * writes with, until it has renamed or unlinked it.  A cleaner removes one
 * only when it can take that lock itself, and unlinks it while holding it:
 * a lock, unlike a pid, means the same thing in every pid namespace, so a
 * process in a container that shares the directory keeps its file.
 *
 * Two races are closed by the creator.  A cleaner may open the new file and
 * take the lock between its creation and the creator's flock; the creator
 * then finds the lock taken, or the file already unlinked (st_nlink 0), and
 * starts again under the next name.  And a cleaner checks, under the lock,
 * that the name still leads to the file it locked: the creator renames or
 * unlinks the name before its lock goes, so a name that was reused since
 * is never taken for the file that was locked.
 */

int elog__fs_tmp_create(int dfd, const char *name, char *tmp, size_t size)
{
	for (int attempt = 0;; attempt++) {
		struct stat st;
		int fd;
		if (attempt > 100) {
			errno = EEXIST;
			return -1;
		}
		/* The pid only tells people whose file it is: uniqueness
		 * comes from O_EXCL, and liveness from the lock. */
		snprintf(tmp, size, "%s" TMP_INFIX "%ld.%d", name, (long)getpid(), attempt);
		fd = elog__fs_openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			if (fstat(fd, &st) == 0 && st.st_nlink > 0)
				return fd;
			close(fd); /* a cleaner unlinked it: take another */
			continue;
		}
		int e = errno;
		/* A cleaner looks at it: never wait for one, leave it the
		 * name, and go on to the next. */
		struct stat now;
		if (fstat(fd, &st) == 0 && fstatat(dfd, tmp, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    now.st_dev == st.st_dev && now.st_ino == st.st_ino)
			unlinkat(dfd, tmp, 0);
		close(fd);
		if (e == EWOULDBLOCK)
			continue;
		errno = e;
		return -1;
	}
}

int elog__fs_replace_file(int dfd, const char *name, const void *data, size_t len)
{
	char tmp[NAME_MAX_LOCAL + 32];
	int fd = elog__fs_tmp_create(dfd, name, tmp, sizeof tmp), err = 0;
	if (fd < 0)
		return errno;
	err = elog__fs_write_all(fd, data, len);
	if (!err && fsync(fd) < 0)
		err = errno;
	if (!err && renameat(dfd, tmp, dfd, name) < 0)
		err = errno;
	if (err)
		unlinkat(dfd, tmp, 0);
	/* Closed, which drops the lock, only once the temporary name is gone.
	 * A local file system reports no error at close that fsync did not. */
	close(fd);
	if (err)
		return err;
	return elog__fs_fsync_dir(dfd);
}

int elog__fs_read_small(int dfd, const char *name, size_t max, char **data, size_t *len)
{
	struct stat st;
	int fd = elog__fs_openat_stat(dfd, name, O_RDONLY, 0, &st);
	if (fd < 0)
		return errno;
	char *buf = NULL;
	size_t got = 0;
	int err = (uint64_t)st.st_size > max ? EFBIG : 0;
	if (!err && !(buf = malloc((size_t)st.st_size + 1)))
		err = ENOMEM;
	if (!err)
		err = elog__fs_pread_full(fd, buf, (size_t)st.st_size, 0, &got);
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[got] = '\0';
	*data = buf;
	*len = got;
	return 0;
}

int64_t elog__fs_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int elog__fs_is_netfs(int fd)
{
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0)
		return 0;
	switch ((unsigned long)sf.f_type) {
	case 0x6969:     /* NFS */
	case 0xFF534D42: /* CIFS */
	case 0xFE534D42: /* SMB2 */
	case 0x517B:     /* SMB */
	case 0x564C:     /* NCP */
	case 0x6B414653: /* AFS */
	case 0x47504653: /* GPFS */
	case 0x01021997: /* 9P (v9fs) */
	case 0x0BD00BD0: /* Lustre */
	case 0x19830326: /* FhGFS / BeeGFS */
		return 1;
	}
	return 0;
}

int elog__fs_dir_each(int dfd, int (*fn)(const char *name, void *arg), void *arg)
{
	/* A duplicate, so that closedir() leaves dfd open; rewound, since
	 * the duplicate shares the position of a descriptor read before. */
	int fd = dup(dfd);
	if (fd < 0)
		return errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return e;
	}
	rewinddir(d);
	int rc = 0;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			rc = errno;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((rc = fn(de->d_name, arg)) != 0)
			break;
	}
	closedir(d);
	return rc;
}

int elog__fs_random(void *buf, size_t len)
{
	size_t got;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int err = elog__fs_pread_full(fd, buf, len, 0, &got);
	close(fd);
	return err ? err : got == len ? 0 : EIO;
}
