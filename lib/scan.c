/*
 * scan.c: reading the records of one segment in order through a buffer.
 * Used by readers, by recovery and by everything that walks a segment.
 * Reads with pread(2) only: a segment may be replaced or unlinked while it
 * is read, and an open descriptor keeps the old file readable.
 *
 * Records are checked many at a time, ahead of the one asked for: the CRC
 * of a record of a hundred bytes is a chain of a dozen instructions each
 * waiting on the last, and several records' chains side by side
 * (elog__crc32c_each) keep the instruction busy; and the way there (a
 * call, a look at the buffer) is paid once for the lot, not once for a
 * few.  Only records wholly in the buffer are checked ahead; any move of
 * the position forgets them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "files.h"

/* The buffer: large enough that a read costs little per record, small
 * enough that what one read brought is still in the CPU's cache when its
 * records are checked.  A read(2) costs about 2 us on the development VM
 * before it copies a byte: 256 KiB read and checked 100 B records faster
 * than 128 KiB (two reads where there were four per MiB), 512 KiB and more
 * no faster again.  It starts at SCAN_FIRST and grows as reading goes on:
 * a reader that opens a segment to seek in it reads, and allocates, a few
 * KiB. */
#define SCAN_BUF (256u << 10)
#define SCAN_FIRST (8u << 10) /* after a seek: the record is near */
#define SCAN_AHEAD 64         /* records checked at once, reading on */
#define SCAN_NEAR 8           /* after a seek */

int elog__scan_init(struct scan *s, int fd, uint64_t base, uint64_t pos, uint64_t limit)
{
	memset(s, 0, sizeof *s);
	s->buf = malloc(SCAN_FIRST);
	if (!s->buf)
		return ENOMEM;
	s->cap = SCAN_FIRST;
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
	s->vend = 0;
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
	s->vend = 0;
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
	/* Grow to what the next read asks for, if the file has that much. */
	uint64_t left = s->limit > s->buf_pos ? s->limit - s->buf_pos : 0;
	size_t cap = s->cap;
	while (cap < need || (cap < s->ra && cap < left))
		cap *= 2;
	if (cap > s->cap) {
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
		if (s->ra < SCAN_BUF)
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
	if ((s->limit != UINT64_MAX && s->limit - s->pos != SEAL_SIZE) || fill(s, SEAL_SIZE) != 0 ||
	    s->len - s->off < SEAL_SIZE ||
	    elog__seal_decode(s->buf + s->off, s->base, s->pos, &s->seal) != 0)
		return ELOG_CORRUPT;
	s->sealed = 1;
	return ELOG_END;
}

/* Check the records in the buffer from the position on, as
 * elog__rec_decode() would: s->vend ends the run that passed, and is s->pos
 * when the first did not.  A scan reading on checks up to SCAN_AHEAD of
 * them at once, one after a seek (whose read-ahead is still small) only
 * SCAN_NEAR: it came for one record. */
static void check_ahead(struct scan *s)
{
	const unsigned char *p[SCAN_AHEAD];
	size_t len[SCAN_AHEAD];
	uint32_t crc[SCAN_AHEAD], stored[SCAN_AHEAD];
	size_t n = 0, at = s->off, most = s->ra < SCAN_BUF ? SCAN_NEAR : SCAN_AHEAD;
	while (n < most) {
		const unsigned char *q = s->buf + at;
		/* Each length is found at the end of the last record: a
		 * chain of loads, each a miss of what the read just brought.
		 * Lines a kilobyte on are asked for meanwhile, three a
		 * record (a record of up to 192 bytes takes fewer), inside
		 * the buffer. */
		if (s->len - at > 1216) {
			__builtin_prefetch(q + 1024);
			__builtin_prefetch(q + 1088);
			__builtin_prefetch(q + 1152);
		}
		if (elog__rec_frame(q, s->len - at) != 0)
			break;
		uint32_t l = get32(q);
		stored[n] = get32(q + REC_AT_CRC);
		p[n] = q + REC_PREFIX;
		len[n++] = l - 4;
		at += (size_t)l + 4;
	}
	s->vpos = s->vend = s->pos;
	if (n == 0)
		return;
	elog__crc32c_each(p, len, crc, n);
	for (size_t i = 0; i < n && crc[i] == stored[i]; i++)
		s->vend += len[i] + REC_PREFIX;
}

/* The way to the next record when it was not checked ahead: read it in,
 * check it and those after it; 0 when it passed. */
static int __attribute__((noinline)) next_slow(struct scan *s, struct elog_record *rec)
{
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
	/* Cut short by the limit whatever lies past it: not read, as salvage
	 * tries every byte of a damaged stretch and fill() moves the buffer. */
	if ((uint64_t)len + 4 > s->limit - s->pos) {
		s->trunc = 1;
		return ELOG_CORRUPT;
	}
	if ((err = fill(s, (size_t)len + 4)) != 0)
		return err;
	check_ahead(s);
	if (s->vend > s->pos)
		return 0;
	/* The record here is bad: its verdict, as one. */
	size_t size;
	int rc = elog__rec_decode(s->buf + s->off, s->len - s->off, rec, &size);
	if (rc == ELOG_END) {
		s->trunc = 1;
		return ELOG_CORRUPT;
	}
	return rc ? rc : ELOG_CORRUPT;
}

int elog__scan_next(struct scan *s, struct elog_record *rec, uint64_t *at)
{
	if (elog__scan_next_checked(s, rec, at))
		return 0;
	s->trunc = 0;
	*at = s->pos;
	if (s->pos >= s->limit)
		return ELOG_END;
	int err = next_slow(s, rec);
	if (!err)
		elog__scan_next_checked(s, rec, at); /* it is checked now */
	return err;
}

int elog__scan_to_entry(struct scan *s, const struct idx_entry *e)
{
	struct elog_record rec;
	uint64_t at, from = s->pos;
	elog__scan_seek(s, e->pos);
	if (elog__scan_next(s, &rec, &at) == 0 && rec.offset == e->offset) {
		elog__scan_seek(s, e->pos);
		return 1;
	}
	elog__scan_seek(s, from);
	return 0;
}

int elog__seg_tail_next(struct scan *s, struct seg_tail *t, struct elog_record *rec, uint64_t *at)
{
	int err = elog__scan_next(s, rec, at);
	if (err == 0 && rec->offset >= t->next && (!t->below || rec->offset < t->below)) {
		t->next = rec->offset + 1;
		return 0;
	}
	if (err != 0 && err != ELOG_END && err != ELOG_CORRUPT)
		return err;
	t->end = *at;
	t->why = err == ELOG_END ? TAIL_WHOLE : err == ELOG_CORRUPT ? TAIL_DAMAGED : TAIL_ORDER;
	return ELOG_END;
}

int elog__scan_truncated(const struct scan *s)
{
	return s->trunc;
}
