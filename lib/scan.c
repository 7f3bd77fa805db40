/*
 * scan.c: reading the records of one segment in order through a buffer.
 * Used by readers, by recovery and by everything that walks a segment.
 * Reads with pread(2) only: a segment may be replaced or unlinked while it
 * is read, and an open descriptor keeps the old file readable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define SCAN_BUF (256u << 10)
#define SCAN_FIRST (8u << 10)	/* after a seek: the record is near */

int elog__scan_init(struct scan *s, int fd, uint64_t base, uint64_t pos, uint64_t limit)
{
	memset(s, 0, sizeof *s);
	s->buf = malloc(SCAN_BUF);
	if (!s->buf)
		return ENOMEM;
	s->cap = SCAN_BUF;
	s->fd = fd;
	s->base = base;
	s->pos = pos;
	s->buf_pos = pos;
	s->limit = limit;
	s->ra = SCAN_BUF;
	return 0;
}

int elog__scan_read_head(struct scan *s, size_t want, size_t *got)
{
	if (want > s->cap)
		want = s->cap;
	/* One read: on a local file system a regular file reads short only
	 * at its end. */
	ssize_t n;
	while ((n = pread(s->fd, s->buf, want, 0)) < 0)
		if (errno != EINTR)
			return errno;
	*got = (size_t)n;
	s->buf_pos = 0;
	s->len = *got;
	s->off = s->pos < *got ? (size_t)s->pos : *got;
	return 0;
}

void elog__scan_free(struct scan *s)
{
	free(s->buf);
	s->buf = NULL;
}

void elog__scan_seek(struct scan *s, uint64_t pos)
{
	if (pos >= s->buf_pos && pos <= s->buf_pos + s->len) {
		s->off = (size_t)(pos - s->buf_pos);
	} else {
		s->buf_pos = pos;
		s->off = s->len = 0;
		s->ra = SCAN_FIRST;
	}
	s->pos = pos;
	s->trunc = 0;
	s->sealed = 0;
}

/* Make at least need bytes available from s->off on, if the file (up to the
 * limit) has them.  Returns 0 or an errno value. */
static int fill(struct scan *s, size_t need)
{
	if (s->len - s->off >= need)
		return 0;
	if (s->off > 0) {
		memmove(s->buf, s->buf + s->off, s->len - s->off);
		s->len -= s->off;
		s->buf_pos += s->off;
		s->off = 0;
	}
	if (need > s->cap) {
		size_t cap = s->cap;
		while (cap < need)
			cap *= 2;
		unsigned char *nb = realloc(s->buf, cap);
		if (!nb)
			return ENOMEM;
		s->buf = nb;
		s->cap = cap;
	}
	while (s->len < need) {
		uint64_t at = s->buf_pos + s->len;
		if (at >= s->limit)
			break;
		size_t want = s->cap - s->len;
		if (want > s->ra && s->ra >= need - s->len)
			want = s->ra;
		if (s->ra < s->cap)
			s->ra *= 2;
		if ((uint64_t)want > s->limit - at)
			want = (size_t)(s->limit - at);
		ssize_t n = pread(s->fd, s->buf + s->len, want, (off_t)at);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0)
			break;
		s->len += (size_t)n;
	}
	return 0;
}

/* Bytes at the scan's position that are no record: the seal that ends a
 * closed segment ends the scan (ELOG_END, with s->sealed) when it ends at
 * the limit or the scan has none; anything else is damage. */
static int at_seal(struct scan *s)
{
	if ((s->limit != UINT64_MAX && s->limit - s->pos != SEAL_SIZE) ||
	    fill(s, SEAL_SIZE) != 0 || s->len - s->off < SEAL_SIZE ||
	    elog__seal_decode(s->buf + s->off, s->base, s->pos, &s->seal) != 0)
		return ELOG_CORRUPT;
	s->sealed = 1;
	return ELOG_END;
}

int elog__scan_next(struct scan *s, struct elog_record *rec, uint64_t *at)
{
	s->trunc = 0;
	*at = s->pos;
	if (s->pos >= s->limit)
		return ELOG_END;
	int err = fill(s, 4);
	if (err)
		return err;
	size_t avail = s->len - s->off;
	if (avail == 0)
		return ELOG_END;
	if (avail < 4) {
		s->trunc = 1;
		return ELOG_CORRUPT;
	}
	uint32_t len = get32(s->buf + s->off);
	if (len < REC_MIN_LEN || len > ELOG_MAX_RECORD)
		return at_seal(s);
	err = fill(s, (size_t)len + 4);
	if (err)
		return err;
	size_t size;
	int rc = elog__rec_decode(s->buf + s->off, s->len - s->off, rec, &size);
	if (rc == ELOG_END) {
		s->trunc = 1;
		return ELOG_CORRUPT;
	}
	if (rc)
		return rc;
	s->off += size;
	s->pos += size;
	return 0;
}

int elog__scan_truncated(const struct scan *s)
{
	return s->trunc;
}
