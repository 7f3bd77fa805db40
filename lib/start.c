/*
 * start.c: the log's first offset, as retention records it in the file
 * "start" before it unlinks the segments below that offset.
 *
 * Unlinks reach the disk in no particular order, so a crash in the middle
 * of a retention run could leave a hole in the log if the directory were
 * all there is.  Retention therefore writes the new first offset once,
 * durably (temporary file, fsync, rename, directory fsync; in place when
 * the disk is full), then unlinks the segments below it without a sync
 * between them.  The file is made with the log, saying 0.  Every listing of
 * segments applies the start: a segment all of whose offsets lie below it
 * is already gone, whatever the directory still shows, and the next
 * maintenance run unlinks it for good.
 *
 * The file never hides a record that exists unless it is sound: a missing
 * file means 0, a damaged one, or one naming an offset past the newest
 * segment's base (retention never removes that segment), is ignored, and
 * the segment holding the start itself is always listed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "files.h"

void elog__start_encode(unsigned char *p, uint64_t start, const char *log_id)
{
	unsigned char id[SEAL_ID_LEN];
	elog__seal_id(log_id ? log_id : "", id);
	memcpy(p, START_MAGIC, 8);
	put32(p + START_AT_VERSION, START_VERSION);
	memcpy(p + START_AT_LOG, id, SEG_LOG_LEN);
	put64(p + START_AT_START, start);
	put32(p + START_AT_CRC, elog__crc32c(0, p, START_AT_CRC));
	put32(p + START_AT_RESERVED2, 0);
}

int elog__start_decode(const unsigned char *p, size_t len, const char *log_id, uint64_t *start,
                       const char **why)
{
	unsigned char id[SEAL_ID_LEN];
	const char *w = NULL;
	elog__seal_id(log_id ? log_id : "", id);
	if (len != START_SIZE)
		w = "not 32 bytes long";
	else if (memcmp(p, START_MAGIC, 8) != 0)
		w = "bad magic";
	else if (get32(p + START_AT_CRC) != elog__crc32c(0, p, START_AT_CRC))
		w = "checksum mismatch";
	else if (get32(p + START_AT_VERSION) != START_VERSION)
		return ELOG_BADVERSION;
	else if (get32(p + START_AT_RESERVED2) != 0)
		w = "reserved bytes are not zero";
	else if (log_id && get32(p + START_AT_LOG) != 0 &&
	         memcmp(p + START_AT_LOG, id, SEG_LOG_LEN))
		w = "names another log: a start file copied in from elsewhere";
	if (why)
		*why = w;
	if (w)
		return ELOG_CORRUPT;
	*start = get64(p + START_AT_START);
	return 0;
}

int elog__start_write(int dfd, uint64_t start, const char *log_id)
{
	unsigned char buf[START_SIZE];
	struct stat st;
	elog__start_encode(buf, start, log_id);
	int err = elog__fs_replace_file(dfd, FN_START, buf, sizeof buf);
	if (err != ENOSPC && err != EDQUOT)
		return err;
	/* A full disk has no room for a new file, but the file made with
	 * the log can be rewritten in place: its 32 bytes lie within one
	 * sector.  Should a crash tear them anyway, the checksum fails and
	 * the file is ignored, which loses nothing: nothing below the new
	 * start is unlinked before this write is synced, and everything
	 * below the old start was unlinked, and the directory synced,
	 * before it began.  Elsewhere the file is replaced whole, so that it
	 * is never seen torn. */
	int fd = elog__fs_openat_stat(dfd, FN_START, O_RDWR, 0, &st);
	if (fd < 0)
		return err;
	if (st.st_size != START_SIZE) {
		close(fd);
		return err;
	}
	err = elog__fs_pwrite_all(fd, buf, sizeof buf, 0);
	if (!err && fdatasync(fd) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

int elog__start_view(int dfd, const uint64_t *base, size_t n, const char *log_id,
                     struct elog__start_view *sv)
{
	char *data;
	size_t len;
	memset(sv, 0, sizeof *sv);
	int err = elog__fs_read_small(dfd, FN_START, START_SIZE + 1, &data, &len);
	switch (err) {
	case 0:
		break;
	case ENOENT:
		sv->state = START_NONE;
		return 0;
	case ELOOP:
	case ELOG_NOTREG:
	case EFBIG:
		sv->state = START_DAMAGED;
		sv->why = err == ELOOP   ? "a symbolic link, which elog refuses to follow"
		          : err == EFBIG ? "not 32 bytes long"
		                         : "not a regular file";
		return 0;
	default:
		return err;
	}
	err = elog__start_decode((const unsigned char *)data, len, log_id, &sv->start, &sv->why);
	free(data);
	if (err == ELOG_BADVERSION)
		return err;
	if (err) {
		sv->state = START_DAMAGED;
		return 0;
	}
	if (n > 0 && sv->start > base[n - 1]) {
		sv->state = START_BEYOND;
		return 0;
	}
	sv->state = START_OK;
	/* Segment i holds offsets [base[i], base[i + 1]): it is gone when
	 * the next one begins at or below the start. */
	while (sv->hidden + 1 < n && base[sv->hidden + 1] <= sv->start)
		sv->hidden++;
	return 0;
}
