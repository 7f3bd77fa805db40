/*
 * create.c: making a new log in a directory.  The settings file is written
 * last: its presence is what makes a directory a log, so a crash part-way
 * through creation leaves a directory that the next creation simply redoes.
 * Besides its first segment, a log is born with its lock files and its
 * start file (see elog__log_create()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "compress.h"
#include "files.h"
#include "writer.h"

/* Files an interrupted creation may have left; anything else in the
 * directory means it holds something other than a log. */
static int leftover_of_creation(const char *name)
{
	struct file_class fc;
	switch (elog__file_classify(name, &fc)) {
	case FILE_LOCK:
	case FILE_WATERMARK:
	case FILE_WRITERS:
	case FILE_MAINT:
	case FILE_CONSUMERS_LOCK:
		return !fc.tmp;
	case FILE_SEGMENT:
	case FILE_SEGMENT_NEW:
		return !fc.tmp && fc.num == 0;
	case FILE_INDEX: /* the first, or its temporary file */
		return fc.num == 0;
	case FILE_START: /* the file, or its temporary file */
		return 1;
	case FILE_SETTINGS: /* written last: only its temporary file */
		return fc.tmp;
	default:
		return 0;
	}
}

struct stranger {
	char *name;
	size_t size;
};

static int find_stranger(const char *name, void *arg)
{
	struct stranger *st = arg;
	if (leftover_of_creation(name))
		return 0;
	snprintf(st->name, st->size, "%s", name);
	return -1; /* found: stop */
}

int elog__log_check_fresh(int dfd, char *msg)
{
	char name[256];
	struct stranger st = { name, sizeof name };
	int err = elog__fs_dir_each(dfd, find_stranger, &st);
	if (err == -1)
		return elog__errmsg_set(msg, ELOG_NOTLOG,
		                        "not an elog directory and not empty (it holds %s)", name);
	if (err)
		return elog__errmsg_set(msg, err, "%s", elog_strerror(err));
	return 0;
}

int elog__seg_create(int dfd, uint64_t base, uint32_t flags, const char *log_id, int *segfd,
                     int *idxfd)
{
	char name[NAME_MAX_LOCAL];
	unsigned char hdr[SEG_HDR > IDX_HDR ? SEG_HDR : IDX_HDR];
	int err;

	/* The segment appears under its name with its header already in it
	 * (written to a temporary name, then renamed), so a reader never
	 * finds a segment without one. */
	char tmp[NAME_MAX_LOCAL + 8];
	elog__seg_name(name, base, SEG_EXT);
	snprintf(tmp, sizeof tmp, "%s%s", name, SEG_NEW_EXT);
	unlinkat(dfd, tmp, 0); /* left by a crash at this very step */
	int sfd = elog__fs_openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL, 0666);
	if (sfd < 0)
		return errno;
	elog__seg_header_encode(hdr, base, flags, log_id);
	err = elog__fs_pwrite_all(sfd, hdr, SEG_HDR, 0);
	if (!err && renameat(dfd, tmp, dfd, name) < 0)
		err = errno;
	if (err)
		unlinkat(dfd, tmp, 0);
	elog__seg_name(name, base, IDX_EXT);
	int ifd = err ? -1 : elog__fs_openat(dfd, name, O_RDWR | O_CREAT | O_TRUNC, 0666);
	if (!err && ifd < 0)
		err = errno;
	if (!err) {
		elog__idx_header_encode(hdr);
		err = elog__fs_pwrite_all(ifd, hdr, IDX_HDR, 0);
	}
	if (err) {
		close(sfd);
		if (ifd >= 0)
			close(ifd);
		return err;
	}
	*segfd = sfd;
	*idxfd = ifd;
	return 0;
}

int elog__log_create(int dfd, const struct elog_options *opt, char *msg)
{
	struct elog_settings s;
	int segfd, idxfd, err;

	memset(&s, 0, sizeof s);
	if ((err = elog__opt_check(opt, &s, msg)) != 0)
		return err;
	if ((err = elog__log_check_fresh(dfd, msg)) != 0)
		return err;
	if ((err = elog__settings_new_id(s.id)) != 0)
		return elog__errmsg_set(msg, err, "cannot make a log id: %s", elog_strerror(err));
	s.created_ms = elog__fs_now_ms();

	if ((err = elog__seg_create(dfd, 0, SEG_FLAGS(elog__codec_from_settings(&s)->id, 0), s.id,
	                            &segfd, &idxfd)) == 0) {
		if (fdatasync(segfd) < 0)
			err = errno;
		close(segfd);
		close(idxfd);
	}
	/* The segment's name is durable before the settings that make the
	 * directory a log: a log never lacks its first segment. */
	if (!err)
		err = elog__fs_fsync_dir(dfd);
	if (err)
		return elog__errmsg_set(msg, err, "creating the first segment: %s",
		                        elog_strerror(err));
	/* The lock files and the start exist from the first: on a full
	 * disk, retention can then take its lock and record the log's new
	 * start in place, needing no new file, and a run as root creates
	 * nothing the owner cannot open. */
	const char *const locks[] = { FN_MAINT, FN_CONSUMERS_LOCK };
	for (size_t i = 0; i < sizeof locks / sizeof locks[0]; i++) {
		int fd = elog__fs_openat(dfd, locks[i], O_RDWR | O_CREAT, 0666);
		if (fd < 0)
			return elog__errmsg_set(msg, errno, "%s: %s", locks[i],
			                        elog_strerror(errno));
		close(fd);
	}
	if ((err = elog__start_write(dfd, 0, s.id)) != 0)
		return elog__errmsg_set(msg, err, "%s: %s", FN_START, elog_strerror(err));
	if ((err = elog__settings_store(dfd, &s)) != 0)
		return elog__errmsg_set(msg, err, "%s: %s", FN_SETTINGS, elog_strerror(err));
	return 0;
}
