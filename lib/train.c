/*
 * train.c: a compressed log's dictionary, trained from the log's first
 * values read back from its segments.
 *
 * The set is the log's first TRAIN_SAMPLES non-empty values, or fewer that
 * add up to TRAIN_BYTES / 2, whichever writers appended them: a writer that
 * kept samples of its own values would never gather a set when each writer
 * appends a few records and exits (a cron job, a shell loop).  The writer
 * that trains holds the batch lock, so the log's tail is where it says and
 * stays there; it reads the segments from the first up to that tail, then
 * the batch it is about to write, decoding each value as a reader would.
 * Segments whose header names a dictionary are passed over: a log has none
 * of those before its first dictionary, unless one was deleted by hand,
 * and then their values cannot be read anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "encoding.h"
#include "compress.h"
#include "files.h"

struct samples {
	unsigned char *buf; /* TRAIN_BYTES, the values end to end */
	size_t *sizes;      /* TRAIN_SAMPLES */
	size_t len;
	unsigned n;
	struct vdec *vd;
	int dfd;
};

static int complete(const struct samples *s)
{
	return s->n >= TRAIN_SAMPLES || s->len >= TRAIN_BYTES / 2;
}

/* Add the value of rec, stored in a segment with these flags.  A value
 * that does not decode (a damaged frame) or that does not fit in what is
 * left of the buffer is left out, as an empty one is. */
static void add(struct samples *s, uint32_t flags, const struct elog_record *rec)
{
	char why[ELOG_MSG_MAX];
	const void *v;
	size_t n;
	if (elog__vdec_value(s->vd, s->dfd, flags, rec->value, rec->value_len, &v, &n, why) != 0 ||
	    n == 0 || n > TRAIN_BYTES - s->len)
		return;
	memcpy(s->buf + s->len, v, n);
	s->len += n;
	s->sizes[s->n++] = n;
}

/* Add the values of segment base, up to byte limit, until the set is
 * complete.  A segment that is gone or whose header is bad is passed over;
 * a damaged record ends what is read of its segment. */
static int from_segment(struct samples *s, uint64_t base, uint64_t limit)
{
	struct scan sc;
	struct elog_record rec;
	struct stat st;
	uint32_t flags;
	uint64_t at;
	int fd, err;

	if (elog__seg_open(s->dfd, base, O_RDONLY, &fd, &flags, &st, NULL) != 0)
		return 0;
	if (SEG_DICT(flags) != 0) {
		close(fd);
		return 0;
	}
	if (limit > (uint64_t)st.st_size)
		limit = (uint64_t)st.st_size;
	if ((err = elog__scan_init(&sc, fd, base, SEG_HDR, limit)) == 0) {
		while (!complete(s) && (err = elog__scan_next(&sc, &rec, &at)) == 0)
			add(s, flags, &rec);
		elog__scan_free(&sc);
	}
	close(fd);
	return err == ELOG_END || err == ELOG_CORRUPT ? 0 : err;
}

/* Add the values of the records laid end to end in m, until the set is
 * complete; *k counts the records read. */
static void from_more(struct samples *s, const struct train_more *m, size_t *k)
{
	struct elog_record rec;
	size_t size;
	for (size_t pos = 0; !complete(s) && pos < m->len; pos += size, ++*k) {
		if (elog__rec_decode(m->data + pos, m->len - pos, &rec, &size) != 0)
			return;
		add(s, m->flags, &rec);
	}
}

/* Gather the set into s; res->split as elog__train_first() says. */
static int gather(struct samples *s, uint64_t tail_base, uint64_t tail_size,
                  const struct train_more *more, size_t nmore, struct train_result *res)
{
	struct seglist sl = { 0 };
	int err;
	if ((err = elog__seglist_read(s->dfd, &sl)) != 0)
		return err;
	for (size_t i = 0; !err && !complete(s) && i < sl.n && sl.base[i] <= tail_base; i++)
		err = from_segment(s, sl.base[i], sl.base[i] == tail_base ? tail_size : UINT64_MAX);
	elog__seglist_free(&sl);
	if (err || complete(s))
		return err;
	size_t k = 0;
	for (size_t i = 0; !complete(s) && i < nmore; i++)
		from_more(s, &more[i], &k);
	/* The record read last is the one that completed the set. */
	if (complete(s))
		res->split = k - 1;
	return 0;
}

int elog__train_first(int dfd, const struct codec *c, uint64_t tail_base, uint64_t tail_size,
                      const struct train_more *more, size_t nmore, unsigned char *dict, size_t cap,
                      size_t *len, struct train_result *res)
{
	struct samples s = { 0 };
	int err = ENOMEM;
	res->split = SIZE_MAX;
	res->missing = 0;
	s.dfd = dfd;
	if (!(s.buf = malloc(TRAIN_BYTES)) ||
	    !(s.sizes = malloc(TRAIN_SAMPLES * sizeof *s.sizes)) || !(s.vd = elog__vdec_new()))
		goto out;
	if ((err = gather(&s, tail_base, tail_size, more, nmore, res)) != 0)
		goto out;
	res->samples = s.n;
	res->bytes = s.len;
	if (!complete(&s)) {
		/* The records that could complete it: as many as values are
		 * missing, or fewer when values as long as those read would
		 * make up the bytes first. */
		uint64_t need = TRAIN_SAMPLES - s.n;
		if (s.n > 0) {
			uint64_t avg = s.len / s.n ? s.len / s.n : 1;
			uint64_t by_bytes = (TRAIN_BYTES / 2 - s.len + avg - 1) / avg;
			if (by_bytes < need)
				need = by_bytes;
		}
		res->missing = need ? need : 1;
		err = ELOG_END;
		goto out;
	}
	/* (A complete set has at least TRAIN_SAMPLES bytes: zstd 1.5.4
	 * divides by zero on a set of ten one-byte values.) */
	err = elog__codec_train(c, s.buf, s.sizes, s.n, dict, cap, len);
out:
	elog__vdec_free(s.vd);
	free(s.buf);
	free(s.sizes);
	return err;
}
