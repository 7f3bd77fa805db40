/*
 * watermark.c: the durable end of the log, published by the writer after
 * every fdatasync and read by readers in any process.  It is rewritten in
 * place with one pwrite(2); a reader that races with the update sees a bad
 * CRC and reads again.  It is not fsynced itself: it is only ever written
 * after the data it describes is durable, so whatever version survives a
 * crash never points past the data.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "files.h"

void elog__wm_encode(unsigned char *p, const struct watermark *wm)
{
	memcpy(p, WM_MAGIC, 8);
	put64(p + WM_AT_END, wm->durable_end);
	put64(p + WM_AT_BASE, wm->segment_base);
	put64(p + WM_AT_BYTES, wm->segment_bytes);
	put32(p + WM_AT_CRC, elog__crc32c(0, p, WM_AT_CRC));
	put32(p + WM_AT_RESERVED, 0);
}

int elog__wm_decode(const unsigned char *p, size_t len, struct watermark *wm)
{
	if (len < WM_SIZE || memcmp(p, WM_MAGIC, 8) != 0 ||
	    get32(p + WM_AT_CRC) != elog__crc32c(0, p, WM_AT_CRC))
		return ELOG_CORRUPT;
	wm->durable_end = get64(p + WM_AT_END);
	wm->segment_base = get64(p + WM_AT_BASE);
	wm->segment_bytes = get64(p + WM_AT_BYTES);
	return 0;
}

/* Reads of the same bad bytes that make a watermark garbled, not torn. */
#define WM_STABLE_READS 8

int elog__wm_read(int fd, struct watermark *wm)
{
	unsigned char buf[WM_SIZE], prev[WM_SIZE];
	size_t prev_got = 0;
	int same = 0, rc = ELOG_CORRUPT;
	/* A torn read needs the writer to be mid-pwrite of 40 bytes: read
	 * again, yielding in between, while the bytes change.  The same bad
	 * bytes read WM_STABLE_READS times in a row are a garbled file, not
	 * a race; a yield costs a whole time slice on a busy machine, so a
	 * garbled file must not cost a hundred of them.  A damaged file
	 * never makes a reader loop for ever. */
	for (int attempt = 0; attempt < 100; attempt++) {
		size_t got;
		int err = elog__fs_pread_full(fd, buf, WM_SIZE, 0, &got);
		if (err)
			return err;
		if (got == 0) {
			memset(wm, 0, sizeof *wm);
			return 0;
		}
		rc = elog__wm_decode(buf, got, wm);
		if (rc == 0)
			return 0;
		same = got == prev_got && memcmp(buf, prev, got) == 0 ? same + 1 : 1;
		if (same >= WM_STABLE_READS)
			break;
		memcpy(prev, buf, got);
		prev_got = got;
		sched_yield();
	}
	return rc;
}

int elog__wm_load(int dfd, int fd, struct watermark *wm)
{
	int err = elog__wm_read(fd, wm);
	if (err != ELOG_CORRUPT)
		return err;
	/* The file is never synced, so a power loss may leave it torn,
	 * zeroed or garbled.  What is known durable then is every closed
	 * segment (each was synced before the next one was created), and
	 * nothing of the newest, not even its header. */
	struct seglist sl;
	if ((err = elog__seglist_read(dfd, &sl)) != 0)
		return err;
	uint64_t base = sl.n ? sl.base[sl.n - 1] : 0;
	elog__seglist_free(&sl);
	wm->durable_end = base;
	wm->segment_base = base;
	wm->segment_bytes = 0;
	return 0;
}

int elog__wm_write(int fd, const struct watermark *wm)
{
	unsigned char buf[WM_SIZE];
	elog__wm_encode(buf, wm);
	return elog__fs_pwrite_all(fd, buf, WM_SIZE, 0);
}
