/*
 * reader.c: reading a log, in any process, with no lock.
 *
 * A reader's position is an offset (want), never a byte position: to find
 * it, the reader picks from its list of segments the one whose base is the
 * greatest at or below want, uses that segment's index to jump close, and
 * scans forward to the first record at or above want.  Compaction holes are
 * skipped silently; offsets removed by retention are reported as a gap.
 *
 * The list is made once and kept: going from a segment to the next costs
 * an open, a read and a close, whatever the number of segments.  It is
 * made again only when it proves stale: a segment in it is gone (retention,
 * a merge: then a gap is reported as ever), or the writer has rolled past
 * its newest segment.  A follower learns of new segments from its inotify
 * watch of the directory instead, so it never lists it again at all.
 *
 * It never returns a record the writer has not made durable: the active
 * segment is read only up to the byte length published in the watermark,
 * and every record's offset is checked against the durable end as well.
 *
 * A segment that is replaced (compaction) or unlinked (retention) while it
 * is open stays readable through the open descriptor; at its end the reader
 * looks the position up afresh by offset, so it neither skips nor repeats.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "compress.h"
#include "files.h"
#include "reader.h"

/* A segment's file (inode and device), asked of the system only when an
 * index is kept or a seek wants it: reading on needs no fstat. */
static int seg_identify(struct rseg *g)
{
	struct stat st;
	if (!g->id_known) {
		if (g->fd < 0 || fstat(g->fd, &st) < 0)
			return -1;
		g->ino = st.st_ino;
		g->dev = st.st_dev;
		g->id_known = 1;
	}
	return 0;
}

/* Close segment g (the one read on, or the one parked), if open, keeping
 * its index in the cache, in place of the oldest, for a later visit. */
static void seg_close(elog_reader *r, struct rseg *g)
{
	if (g->ix_size && seg_identify(g) < 0) {
		elog__idx_free(&g->ix); /* cannot tell its file: not kept */
		g->ix_size = 0;
	}
	if (g->fd >= 0) {
		close(g->fd);
		elog__scan_free(&g->sc);
	}
	g->fd = -1;
	if (g->ix_size) {
		struct ixcache *c = &r->ixc[r->ixc_next++ % 4];
		if (c->size)
			elog__idx_free(&c->ix);
		*c = (struct ixcache){ g->base, g->ix_size, g->ino, g->dev, g->ix };
	}
	g->ix_size = 0;
}

static int refresh_watermark(elog_reader *r)
{
	if (r->wmfd < 0) {
		r->wmfd = elog__fs_openat(r->dfd, FN_WATERMARK, O_RDONLY, 0);
		if (r->wmfd < 0) {
			if (errno == ENOENT) /* no writer has opened the log yet */
				return 0;
			return elog__errmsg_set(r->msg, errno, "%s: %s", FN_WATERMARK,
			                        elog_strerror(errno));
		}
	}
	struct watermark wm;
	int err = elog__wm_load(r->dfd, r->wmfd, &wm);
	if (err)
		return elog__errmsg_set(r->msg, err, "%s: %s", FN_WATERMARK, elog_strerror(err));
	/* The durable end never moves backwards for a reader, even when it
	 * sees a watermark from before a crash that has not been redone. */
	if (wm.durable_end >= r->wm.durable_end)
		r->wm = wm;
	return 0;
}

/* How far into segment base, followed on disk by segment next (UINT64_MAX
 * when none), a reader may read under the watermark.  A segment with a
 * successor is closed even when the watermark still names it: the writer
 * synced it before creating the next one, and a watermark that a power loss
 * left behind may name a segment since rewritten by compaction. */
static uint64_t visible_limit(const elog_reader *r, uint64_t base, uint64_t next)
{
	if (base < r->wm.segment_base)
		return UINT64_MAX;      /* closed: all of it */
	if (base == r->wm.segment_base) /* active: what was synced */
		return next == UINT64_MAX ? r->wm.segment_bytes : UINT64_MAX;
	return SEG_HDR; /* newer than the watermark */
}

/* Open segment base, listed before segment next (UINT64_MAX when it was
 * the newest), for reading: 0 with *g set up, its scan's limit at what may
 * be read and its position at the first record.  *gone is 1 (nothing
 * open) when it was removed since it was listed, -1 when it is too new to
 * hold anything durable yet. */
static int seg_read_open(elog_reader *r, uint64_t base, uint64_t next, struct rseg *g, int *gone)
{
	char name[NAME_MAX_LOCAL], why[ELOG_MSG_MAX];
	struct stat st;
	struct seg_end e;
	size_t got;
	int err;

	*gone = 0;
	elog__seg_name(name, base, SEG_EXT);
	int fd = elog__fs_openat(r->dfd, name, O_RDONLY, 0);
	if (fd < 0) {
		if (errno == ENOENT) { /* removed since we listed it */
			*gone = 1;
			return 0;
		}
		return elog__errmsg_set(r->msg, errno, "%s: %s", name, elog_strerror(errno));
	}
	/* One read brings the header and, for a small segment, all of it (a
	 * short read found the end of the file): so not elog__seg_open(),
	 * which reads the header alone, though the verdict is the same. */
	uint64_t limit = visible_limit(r, base, next);
	size_t want = limit < SEG_HDR ? SEG_HDR : limit < SIZE_MAX ? (size_t)limit : SIZE_MAX;
	struct rseg s = { .fd = fd, .base = base, .next = next, .tail = { .next = base } };
	if ((err = elog__scan_init(&s.sc, fd, base, SEG_HDR, limit)) != 0) {
		close(fd);
		return elog__errmsg_set(r->msg, err, "%s", elog_strerror(err));
	}
	if (want > s.sc.cap)
		want = s.sc.cap;
	if ((err = elog__scan_read_head(&s.sc, want, &got)) != 0) {
		elog__errmsg_set(why, err, "%s: %s", name, elog_strerror(err));
		goto fail;
	}
	if ((err = elog__seg_header_verify(s.sc.buf, got, base, r->log_id, why)) != 0) {
		/* A segment with nothing durable in it yet (newer than the
		 * watermark, or named by it before its first sync) may still
		 * lack its header, or a power loss may have garbled it: it is
		 * simply not there to read yet. */
		if (limit <= SEG_HDR && err == ELOG_CORRUPT) {
			*gone = -1;
			err = 0;
		}
		goto fail;
	}
	s.flags = elog__seg_header_flags(s.sc.buf);
	s.plain = elog__codec_plain(s.flags);
	s.v2 = elog__seg_header_sealed(s.sc.buf); /* chain: CHAIN_NONE */
	/* A closed segment never grows (compaction makes a new file): its
	 * size is its end, and reading it needs no look past that. */
	if (limit == UINT64_MAX) {
		if (got < want)
			s.sc.limit = got;
		else if (fstat(fd, &st) == 0)
			s.sc.limit = (uint64_t)st.st_size;
		/* Its records end where its seal starts.  A damaged seal is
		 * left to the scan, which reports it as the damage it is. */
		int whole = got < want && s.sc.limit >= SEG_HDR + SEAL_SIZE;
		err = elog__seg_end(fd, s.v2, base, s.sc.limit,
		                    whole ? s.sc.buf + s.sc.limit - SEAL_SIZE : NULL, &e);
		if (err) {
			elog__errmsg_set(why, err, "%s: %s", name, elog_strerror(err));
			goto fail;
		}
		unsigned char id[SEAL_ID_LEN];
		elog__seal_id(r->log_id, id);
		if (e.chain == CHAIN_SEALED && memcmp(e.seal.id, id, SEAL_ID_LEN) != 0) {
			err = elog__errmsg_set(why, ELOG_CORRUPT, "%s: its seal names another log",
			                       name);
			goto fail;
		}
		if (!e.bad_seal) {
			s.sc.limit = e.end;
			s.chain = e.chain;
			s.seal = e.seal;
			s.tail.below = e.chain == CHAIN_SEALED ? e.seal.end : 0;
		}
	}
	*g = s;
	return 0;
fail:
	elog__scan_free(&s.sc);
	close(fd);
	return err ? elog__errmsg_set(r->msg, err, "%s", why) : 0;
}

/* Open segment base, listed before segment next, as the one read on. */
static int open_segment(elog_reader *r, uint64_t base, uint64_t next, int *gone)
{
	struct rseg g;
	int err = seg_read_open(r, base, next, &g, gone);
	if (err || *gone)
		return err;
	seg_close(r, &r->cur);
	r->cur = g;
	r->win_check = 0;
	/* Its index from the cache when of the same file (a compacted
	 * segment is another file, with another index). */
	for (int i = 0; i < 4; i++) {
		struct ixcache *c = &r->ixc[i];
		if (c->size && c->base == base && seg_identify(&r->cur) == 0 &&
		    c->ino == r->cur.ino && c->dev == r->cur.dev) {
			r->cur.ix = c->ix;
			r->cur.ix_size = c->size;
			c->size = 0;
			break;
		}
	}
	return 0;
}

/* Load the open segment's index, kept with it, when it has none, or when
 * reload and the segment has grown since: 0 when it has one. */
static int index_load(elog_reader *r, int reload)
{
	struct stat st;
	int intact;
	if (r->cur.ix_size && !reload)
		return 0;
	if (fstat(r->cur.fd, &st) < 0)
		return -1;
	if (r->cur.ix_size && (uint64_t)st.st_size <= r->cur.ix_size)
		return 0; /* it has not grown: nothing new to index */
	if (r->cur.ix_size)
		elog__idx_free(&r->cur.ix);
	r->cur.ix_size = 0;
	if (elog__idx_load(r->dfd, r->cur.base, (uint64_t)st.st_size, &r->cur.ix, &intact) != 0)
		return -1;
	r->cur.ix_size = st.st_size > 0 ? (uint64_t)st.st_size : 1;
	return 0;
}

/* Jump with the index of the open segment towards want.  The first jump
 * in a segment searches the index file in place (a process that seeks
 * once reads a few entries); a second loads the index and keeps it with
 * the segment for the seeks after, loading it again only when want lies
 * past its last entry in a segment that may have grown since. */
static void index_jump(elog_reader *r)
{
	struct idx_entry e;
	struct stat st;
	const struct index *ix = &r->cur.ix;
	if (r->want <= r->cur.base)
		return;
	if (!r->cur.ix_size && r->cur.jumps++ == 0 && fstat(r->cur.fd, &st) == 0) {
		int rc = elog__idx_lookup(r->dfd, r->cur.base, (uint64_t)st.st_size, r->want, &e);
		if (rc == 0)
			elog__scan_to_entry(&r->cur.sc, &e);
		if (rc != ELOG_CORRUPT)
			return;
	}
	if (index_load(r, r->cur.ix_size && r->cur.next == UINT64_MAX && ix->n > 0 &&
	                          r->want > ix->e[ix->n - 1].offset) != 0)
		return;
	ssize_t k = elog__idx_find_offset(ix, r->want);
	if (k >= 0)
		elog__scan_to_entry(&r->cur.sc, &ix->e[k]);
}

/* With a time window, move the open segment's scan past what its index
 * says holds no record of the window: first everything up to the last
 * entry whose segment-so-far extremes lie outside it, then the stretches
 * between entries whose spans do, in one jump each time.  A segment that
 * the window does not reach costs a look at its index's last entry and a
 * read of the stretch after it; one it reaches, its index.  The times are
 * trusted as ts_max is by elog_reader_seek_time(); the record an entry
 * names is checked before the scan moves to it, and a version 1 index,
 * whose entries have no span, moves the scan only by ts_max. */
static void window_skip(elog_reader *r)
{
	struct stat st;
	r->win_check = UINT64_MAX;
	if (!r->cur.ix_size && fstat(r->cur.fd, &st) == 0) {
		/* The whole segment up to its last entry outside the window:
		 * no need to load the index. */
		struct idx_entry last;
		if (elog__idx_last(r->dfd, r->cur.base, (uint64_t)st.st_size, &last) == 0 &&
		    last.pos > r->cur.sc.pos &&
		    (last.ts_max < r->win_lo || last.ts_min > r->win_hi) &&
		    elog__scan_to_entry(&r->cur.sc, &last))
			return;
	}
	if (index_load(r, 0) != 0)
		return;
	const struct index *ix = &r->cur.ix;
	size_t lo = 0, hi = ix->n; /* the first entry past the scan */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->e[mid].pos <= r->cur.sc.pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t k = lo;
	ssize_t j = elog__idx_skip_prefix(ix, k, r->win_lo, r->win_hi);
	if (j >= 0) {
		if (!elog__scan_to_entry(&r->cur.sc, &ix->e[j]))
			return;
		k = (size_t)j + 1;
	}
	/* Then the stretches that hold none, in one jump past the last of
	 * them.  Entry 0's span is empty: before the first entry is nothing
	 * it could vouch for. */
	size_t from = k ? k : 1;
	for (k = from; k < ix->n; k++) {
		const struct idx_entry *e = &ix->e[k];
		if (e->span_max >= r->win_lo && e->span_min <= r->win_hi)
			break; /* the stretch may hold some */
	}
	if (k > from && !elog__scan_to_entry(&r->cur.sc, &ix->e[k - 1]))
		return;
	if (k < ix->n)
		r->win_check = ix->e[k].pos;
}

/* List the segments afresh into r->segs. */
static int list_segments(elog_reader *r)
{
	elog__seglist_free(&r->segs);
	r->segs_valid = 0;
	int err = elog__seglist_read_start(r->dfd, &r->segs, r->log_id, NULL);
	if (err)
		return elog__errmsg_set(r->msg, err, "listing segments: %s", elog_strerror(err));
	r->segs_valid = 1;
	r->lists++;
	return 0;
}

void elog__reader_segments_stale(elog_reader *r)
{
	r->segs_valid = 0;
}

void elog__reader_segment_created(elog_reader *r, uint64_t base)
{
	struct seglist *sl = &r->segs;
	if (!r->segs_valid)
		return;
	if (sl->n > 0 && base <= sl->base[sl->n - 1]) {
		/* Compaction renaming a segment into place is no news; a
		 * segment new below the newest is, and the list is made
		 * again when next needed. */
		ssize_t i = elog__seglist_find(sl, base);
		if (i < 0 || sl->base[i] != base)
			r->segs_valid = 0;
		return;
	}
	uint64_t *nb = realloc(sl->base, (sl->n + 1) * sizeof *nb);
	if (!nb) {
		r->segs_valid = 0;
		return;
	}
	nb[sl->n++] = base;
	sl->base = nb;
}

/* Open the segment that holds want (or the first after it), or note a gap.
 * Returns 0 with a segment open, ELOG_END when there is none, or an error.
 * It trusts the cached list until that names a segment that is gone. */
static int locate(elog_reader *r)
{
	/* Segments change under a reader only by maintenance, and salvage
	 * is maintenance: a fresh look at its ranges here keeps up with it.
	 * A damaged file is elog-verify's to report. */
	if (elog__holes_load(r->dfd, &r->holes) != 0)
		elog__holes_free(&r->holes);
	for (int attempt = 0; attempt < 100; attempt++) {
		int err;
		if (!r->segs_valid && (err = list_segments(r)) != 0)
			return err;
		const struct seglist *sl = &r->segs;
		if (sl->n == 0) {
			r->segs_valid = 0; /* a writer may create one */
			return ELOG_END;
		}
		ssize_t i = elog__seglist_find(sl, r->want);
		if (i < 0) {
			/* Everything below the first segment was removed.  A
			 * second pass (the first segment went too) widens the
			 * gap already noted. */
			if (!r->gap_pending)
				r->gap_first = r->want;
			r->gap_last = sl->base[0] - 1;
			r->gap_pending = ELOG_GAP_RETENTION;
			r->want = sl->base[0];
			i = 0;
		}
		uint64_t base = sl->base[i];
		uint64_t next = (size_t)i + 1 < sl->n ? sl->base[i + 1] : UINT64_MAX;
		int gone;
		if ((err = open_segment(r, base, next, &gone)) != 0)
			return err;
		if (gone < 0)
			return ELOG_END; /* being created: wait for it */
		if (gone) {
			r->segs_valid = 0; /* removed since listed: list again */
			continue;
		}
		index_jump(r);
		return 0;
	}
	return elog__errmsg_set(r->msg, EAGAIN, "segments keep disappearing while listed");
}

/* Where the open segment stands in the cached list: its index, or -1. */
static ssize_t cached_position(const elog_reader *r)
{
	if (!r->segs_valid)
		return -1;
	ssize_t i = elog__seglist_find(&r->segs, r->cur.base);
	return i >= 0 && r->segs.base[i] == r->cur.base ? i : -1;
}

/* Whether segment g is open and its file still the one linked under its
 * name (neither compacted nor removed); st, when not NULL, its status. */
static int seg_linked(elog_reader *r, struct rseg *g, struct stat *st)
{
	char name[NAME_MAX_LOCAL];
	struct stat local;
	st = st ? st : &local;
	elog__seg_name(name, g->base, SEG_EXT);
	return g->fd >= 0 && seg_identify(g) == 0 &&
	       fstatat(r->dfd, name, st, AT_SYMLINK_NOFOLLOW) == 0 && st->st_ino == g->ino &&
	       st->st_dev == g->dev;
}

/* Note the offsets from `from` (want, if that is later) up to to as lost
 * to damage: 1 when noted, 0 when there are none or salvage recorded them
 * (those report themselves), -1 when segment g, which says they were lost,
 * is no longer the file of its name (compaction replaced it: its
 * replacement holds what we have not read; locate() again). */
static int gap_note(elog_reader *r, uint64_t from, uint64_t to, struct rseg *g)
{
	uint64_t a, b;
	if (from < r->want)
		from = r->want;
	if (from >= to || (r->holes.n && elog__holes_find(&r->holes, from, to - 1, &a, &b)))
		return 0;
	if (g && !seg_linked(r, g, NULL)) {
		r->segs_valid = 0;
		return -1;
	}
	r->gap_first = from;
	r->gap_last = to - 1;
	r->gap_pending = ELOG_GAP_DAMAGE;
	r->want = to;
	return 1;
}

/* At the end of the open segment, read to its end, before the segment
 * based at next (UINT64_MAX: there is none, and the log's durable end is
 * the next thing): 1 with a damage gap noted when the chain of segments
 * says offsets were lost between them (a segment missing, this one
 * truncated at a record boundary), as gap_note() says. */
static int chain_gap(elog_reader *r, uint64_t next)
{
	uint64_t to = next == UINT64_MAX ? r->wm.durable_end : next;
	/* Opened while it was the active segment, it was read on to its
	 * end once closed: what the scan found there tells.  A file that
	 * ended short of the records it held when opened was cut under us (a
	 * repair, a hand): what followed its last record is lost, whatever
	 * its seal said. */
	if (r->cur.sc.sealed) {
		r->cur.chain = CHAIN_SEALED;
		r->cur.seal = r->cur.sc.seal;
	} else if ((r->cur.chain == CHAIN_NONE && r->cur.v2) ||
	           (r->cur.sc.limit != UINT64_MAX && r->cur.sc.pos < r->cur.sc.limit)) {
		r->cur.chain = CHAIN_UNSEALED;
	}
	if (r->cur.chain == CHAIN_NONE)
		return 0;
	return gap_note(r, r->cur.chain == CHAIN_SEALED ? r->cur.seal.next : r->cur.tail.next, to,
	                &r->cur);
}

/* At the end of the newest segment, the one the watermark names: 1 with a
 * damage gap noted when the file ended before the bytes the watermark
 * says are durable (a copy taken in the wrong order, a file cut short),
 * so that acknowledged records never vanish without a word. */
static int short_gap(elog_reader *r)
{
	if (r->cur.base != r->wm.segment_base || r->cur.sc.limit == UINT64_MAX ||
	    r->cur.sc.pos >= r->cur.sc.limit || elog__scan_truncated(&r->cur.sc))
		return 0;
	return gap_note(r, r->cur.tail.next, r->wm.durable_end, NULL);
}

/* At the durable end: offsets a repair recorded as lost from want on are
 * a gap now, not only once a later record arrives. */
static int end_hole(elog_reader *r)
{
	if (!r->holes.n || r->want >= r->wm.durable_end ||
	    !elog__holes_find(&r->holes, r->want, r->wm.durable_end - 1, &r->gap_first,
	                      &r->gap_last))
		return 0;
	r->gap_pending = ELOG_GAP_DAMAGE;
	r->want = r->gap_last + 1;
	return 1;
}

/* At the end of the open segment: go on to where want now lives.  Returns
 * 0 when a (new) segment is open, ELOG_END when want is past the end.
 * A follower comes here after every batch: that costs nothing, and a
 * listing only when the writer has rolled past the newest segment listed. */
static int advance(elog_reader *r)
{
	int err;
	/* Whether the open file was since compacted or removed does not
	 * matter here: it held every record up to its end that its
	 * replacement holds, and the next segment is looked up by the list,
	 * which is made again when a segment in it is gone. */
	ssize_t i = cached_position(r);
	if (i >= 0 && (size_t)i + 1 == r->segs.n && r->cur.base < r->wm.segment_base) {
		/* The writer rolled: a follower may have the new segment's
		 * event still queued. */
		elog__follow_drain(r);
		i = cached_position(r);
	}
	if (i < 0 || ((size_t)i + 1 == r->segs.n && r->cur.base < r->wm.segment_base)) {
		/* Not listed, or the writer has moved on past the list. */
		if ((err = list_segments(r)) != 0)
			return err;
		if ((i = cached_position(r)) < 0)
			return locate(r);
	}
	if ((size_t)i + 1 >= r->segs.n || r->cur.base >= r->wm.segment_base) {
		/* The newest segment listed: but one whose seal names a
		 * next one that the watermark says holds durable records
		 * has lost it. */
		if ((size_t)i + 1 >= r->segs.n && r->cur.base < r->wm.segment_base &&
		    (err = chain_gap(r, UINT64_MAX)) != 0)
			return err > 0 ? 0 : locate(r);
		if ((size_t)i + 1 >= r->segs.n && (short_gap(r) || end_hole(r)))
			return 0;
		return ELOG_END;
	}
	if ((err = chain_gap(r, r->segs.base[i + 1])) != 0)
		return err > 0 ? 0 : locate(r);
	if (elog__seglist_find(&r->segs, r->want) > i)
		return locate(r); /* want lies in a later segment */
	/* The last records of this segment went by compaction: on to the
	 * next one. */
	uint64_t next_base = r->segs.base[i + 1];
	uint64_t after_next = (size_t)i + 2 < r->segs.n ? r->segs.base[i + 2] : UINT64_MAX;
	int gone;
	if ((err = open_segment(r, next_base, after_next, &gone)) != 0)
		return err;
	if (gone < 0)
		return ELOG_END;
	if (gone) {
		r->segs_valid = 0;
		return locate(r);
	}
	return 0;
}

/* Replace the stored value of a record, read at byte at of segment g, by
 * the value itself. */
static int decode_value(elog_reader *r, const struct rseg *g, struct elog_record *rec, uint64_t at)
{
	char name[NAME_MAX_LOCAL], why[ELOG_MSG_MAX];
	if (g->plain)
		return 0;
	if (!r->vd && !(r->vd = elog__vdec_new()))
		return elog__errmsg_set(r->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	int err = elog__vdec_value(r->vd, r->dfd, g->flags, rec->value, rec->value_len, &rec->value,
	                           &rec->value_len, why);
	if (err) {
		elog__seg_name(name, g->base, SEG_EXT);
		return elog__errmsg_set(r->msg, err, "%s: record at byte %llu: %s", name,
		                        (unsigned long long)at, why);
	}
	return 0;
}

/* The error for segment g at byte at: a record that does not check
 * (ELOG_CORRUPT), or err, an errno value from reading it. */
static int seg_fault(elog_reader *r, const struct rseg *g, int err, uint64_t at)
{
	char name[NAME_MAX_LOCAL];
	elog__seg_name(name, g->base, SEG_EXT);
	if (err == ELOG_CORRUPT)
		return elog__errmsg_set(r->msg, ELOG_CORRUPT, "%s: %s record at byte %llu", name,
		                        elog__scan_truncated(&g->sc) ? "truncated" : "corrupt",
		                        (unsigned long long)at);
	return elog__errmsg_set(r->msg, err, "%s: %s", name, elog_strerror(err));
}

/* The next record of segment g's valid part (elog__seg_tail_next(), from
 * g->tail): 0, ELOG_END where the part ends whole, or the error where it
 * ends otherwise. */
static int tail_next(elog_reader *r, struct rseg *g, struct elog_record *rec, uint64_t *at)
{
	char name[NAME_MAX_LOCAL];
	int err = elog__seg_tail_next(&g->sc, &g->tail, rec, at);
	if (err == 0 || (err == ELOG_END && g->tail.why == TAIL_WHOLE))
		return err;
	if (err != ELOG_END || g->tail.why != TAIL_ORDER)
		return seg_fault(r, g, err == ELOG_END ? ELOG_CORRUPT : err, *at);
	elog__seg_name(name, g->base, SEG_EXT);
	if (g->tail.below && rec->offset >= g->tail.below)
		return elog__errmsg_set(r->msg, ELOG_CORRUPT,
		                        "%s: offset %llu at byte %llu is at or past its seal's end %llu",
		                        name, (unsigned long long)rec->offset, (unsigned long long)*at,
		                        (unsigned long long)g->tail.below);
	return elog__errmsg_set(r->msg, ELOG_CORRUPT, "%s: offset %llu out of order at byte %llu",
	                        name, (unsigned long long)rec->offset, (unsigned long long)*at);
}

/* Swap the open segment (if any, and if its file can be told) with the
 * parked one (if any). */
static void park_swap(elog_reader *r)
{
	if (r->cur.fd >= 0 && seg_identify(&r->cur) < 0)
		seg_close(r, &r->cur);
	struct rseg g = r->cur;
	r->cur = r->pk;
	r->pk = g;
}

/* A seek keeps the open segment, and its index, when it holds offset and
 * seg_linked() says so; else it parks it, and takes back the one parked
 * when that does. */
static void seek_to(elog_reader *r, uint64_t offset)
{
	r->gap_pending = 0;
	r->reseek = 0;
	r->win_check = 0;
	r->want = offset;
	if (offset < r->cur.base || offset >= r->cur.next || !seg_linked(r, &r->cur, NULL)) {
		if (offset < r->pk.base || offset >= r->pk.next || !seg_linked(r, &r->pk, NULL))
			seg_close(r, &r->pk);
		park_swap(r);
		if (r->cur.fd < 0)
			return;
	}
	r->cur.tail.next = r->cur.base;
	elog__scan_seek(&r->cur.sc, SEG_HDR);
	index_jump(r);
}

/* elog_reader_next(), every case. */
static int next_record(elog_reader *r, struct elog_record *rec)
{
	if (r->reseek) { /* elog_reader_prev() moved the position */
		r->reseek = 0;
		seek_to(r, r->want);
	}
	for (int ends = 0;;) {
		if (r->gap_pending) {
			r->gap_cause = r->gap_pending;
			r->gap_pending = 0;
			return ELOG_GAP;
		}
		int err;
		if (r->cur.fd < 0) {
			if ((err = refresh_watermark(r)) != 0)
				return err;
			if ((err = locate(r)) != 0)
				return err;
			continue;
		}
		uint64_t at, seen = r->cur.tail.next;
		if (r->win && r->cur.sc.pos >= r->win_check)
			window_skip(r);
		err = tail_next(r, &r->cur, rec, &at);
		if (err == 0) {
			if (rec->offset >= r->wm.durable_end) {
				/* Not durable as far as we know, though inside the
				 * byte limit: read it again later (so it does not
				 * count as seen), after a fresh look at the
				 * watermark, which that limit did not prompt. */
				uint64_t old_end = r->wm.durable_end;
				elog__scan_seek(&r->cur.sc, at);
				r->cur.tail.next = seen;
				elog__follow_drain(r);
				if ((err = refresh_watermark(r)) != 0)
					return err;
				r->cur.sc.limit = visible_limit(r, r->cur.base, r->cur.next);
				if (r->wm.durable_end > old_end && ++ends <= 1000)
					continue;
				return ELOG_END;
			}
			if (rec->offset > r->want && r->holes.n &&
			    elog__holes_find(&r->holes, r->want, rec->offset - 1, &r->gap_first,
			                     &r->gap_last)) {
				/* Offsets salvage lost lie before this record:
				 * say so, and read it again next time. */
				elog__scan_seek(&r->cur.sc, at);
				r->cur.tail.next = seen;
				r->gap_cause = ELOG_GAP_DAMAGE;
				r->want = r->gap_last + 1;
				return ELOG_GAP;
			}
			if (rec->offset < r->want)
				continue; /* before the position sought */
			if (r->win && (rec->ts_ms < r->win_lo || rec->ts_ms > r->win_hi)) {
				r->want = rec->offset + 1;
				continue; /* outside the window */
			}
			if ((err = decode_value(r, &r->cur, rec, at)) != 0)
				return err;
			r->want = rec->offset + 1;
			return 0;
		}
		if (err != ELOG_END)
			return err;

		/* The end of what we may read here: has the writer moved on? */
		seg_close(r, &r->pk); /* reading on, not seeking back */
		if (++ends > 1000)    /* segments churning under us */
			return ELOG_END;
		if (r->cur.base < r->wm.segment_base && r->cur.next != UINT64_MAX) {
			/* A closed segment: the writer had moved past it when
			 * the watermark was read, so that need not be read
			 * again until the segment it names. */
			if ((err = advance(r)) != 0)
				return err;
			continue;
		}
		elog__follow_drain(r);
		uint64_t old_limit = r->cur.sc.limit;
		if ((err = refresh_watermark(r)) != 0)
			return err;
		r->cur.sc.limit = visible_limit(r, r->cur.base, r->cur.next);
		if (r->cur.sc.limit > old_limit)
			continue;
		if ((err = advance(r)) != 0)
			return err;
	}
}

/* The common case first, in a few instructions: the next record of the open
 * segment was checked already, is durable, in order, at or past the
 * position, with no salvaged offsets before it and a value stored as
 * given.  Its offset is looked at before anything is taken from it, so
 * that anything else leaves the scan as it was for the way above. */
int elog_reader_next(elog_reader *r, struct elog_record *rec)
{
	struct scan *s = &r->cur.sc;
	uint64_t at = s->pos;
	if (r->reseek || r->gap_pending || r->cur.fd < 0 || r->win || !r->cur.plain ||
	    at != s->vpos || at >= s->vend || at >= s->limit)
		return next_record(r, rec);
	const unsigned char *p = s->buf + s->off;
	uint64_t off = get64(p + REC_AT_OFFSET);
	if (off < r->want || off >= r->wm.durable_end || off < r->cur.tail.next ||
	    (r->cur.tail.below && off >= r->cur.tail.below) || (off > r->want && r->holes.n))
		return next_record(r, rec);
	elog__scan_next_checked(s, rec, &at);
	r->cur.tail.next = off + 1;
	r->want = off + 1;
	return 0;
}

void elog_reader_gap(const elog_reader *r, uint64_t *first, uint64_t *last)
{
	*first = r->gap_first;
	*last = r->gap_last;
}

int elog_reader_gap_cause(const elog_reader *r)
{
	return r->gap_cause;
}

uint64_t elog_reader_position(const elog_reader *r)
{
	return r->want;
}

uint64_t elog_reader_durable_end(const elog_reader *r)
{
	return r->wm.durable_end;
}

const char *elog_reader_errmsg(const elog_reader *r)
{
	if (!r)
		return "out of memory";
	return r->msg[0] ? r->msg : "no error";
}

int elog_reader_seek(elog_reader *r, uint64_t offset)
{
	/* A seek looks at the log afresh, also walking back: the stretch
	 * kept may be of a segment compaction has since replaced. */
	r->bk.valid = 0;
	seek_to(r, offset);
	return 0;
}

/* To the first segment's base, from a fresh listing (0 when there is
 * none). */
int elog_reader_seek_begin(elog_reader *r)
{
	int err = list_segments(r);
	return err ? err : elog_reader_seek(r, r->segs.n ? r->segs.base[0] : 0);
}

int elog_reader_seek_end(elog_reader *r)
{
	int err = refresh_watermark(r);
	return err ? err : elog_reader_seek(r, r->wm.durable_end);
}

/*
 * Walking back.  A segment can only be read forward, so a step back finds
 * the stretch of the segment that holds the record before the position:
 * from the last index entry at or below it (an entry is used only once the
 * record it points at proves to have its offset) up to the position, read
 * forward once, its records' offsets and byte positions kept.  The steps
 * back after it are answered from those; the stretch before is found from
 * the entry before, and so on to the segment's first record, then on to
 * the last stretch of the segment before it.  A step costs one record read
 * and, once per stretch (index_interval bytes), one index lookup and one
 * read of the stretch: nothing grows with the size of the log.  A segment
 * whose index is missing or wrong is scanned once for entries of its own.
 */

/* How far apart the entries made by scanning a segment without a usable
 * index lie, in bytes: the writer's default spacing. */
#define BACK_INTERVAL 4096
/* Lookups in an index file before it is loaded whole: a walk of one or
 * two steps reads a few entries; a longer one reads it once. */
#define BACK_LOOKUPS 2

static void back_close(elog_reader *r)
{
	struct back *b = &r->bk;
	if (b->s.fd >= 0) {
		close(b->s.fd);
		elog__scan_free(&b->s.sc);
	}
	b->s.fd = -1;
	if (b->ix_state)
		elog__idx_free(&b->s.ix);
	b->ix_state = 0;
	b->valid = 0;
	b->recs.n = 0;
}

/* Entries for the back segment made by scanning it: its index file is
 * missing, damaged or points at the wrong records. */
static int back_index_scan(elog_reader *r)
{
	struct back *b = &r->bk;
	struct idx_builder ib = { 0 };
	struct elog_record rec;
	struct idx_entry e;
	uint64_t at;
	int err;
	if (b->ix_state)
		elog__idx_free(&b->s.ix);
	b->ix_state = 2;
	elog__scan_seek(&b->s.sc, SEG_HDR);
	while ((err = elog__scan_next(&b->s.sc, &rec, &at)) == 0 &&
	       rec.offset < r->wm.durable_end) {
		if (elog__idx_builder_add(&ib, rec.offset, rec.ts_ms, at, BACK_INTERVAL, &e) &&
		    (err = elog__idx_push(&b->s.ix, &e)) != 0)
			return elog__errmsg_set(r->msg, err, "%s", elog_strerror(err));
	}
	return err == 0 || err == ELOG_END ? 0 : seg_fault(r, &b->s, err, at);
}

/* Where the stretch of the back segment holding offset target begins: the
 * last entry at or below it (*lo its offset, *pos its byte), or the first
 * record (*lo the base, *pos SEG_HDR) when there is none. */
static int back_entry(elog_reader *r, uint64_t target, uint64_t *lo, uint64_t *pos)
{
	struct back *b = &r->bk;
	struct idx_entry e;
	int intact, rc;
	for (;;) {
		if (b->ix_state) {
			ssize_t k = elog__idx_find_offset(&b->s.ix, target);
			rc = k < 0 ? ELOG_END : 0;
			if (k >= 0)
				e = b->s.ix.e[k];
		} else if (b->s.jumps < BACK_LOOKUPS) {
			b->s.jumps++;
			rc = elog__idx_lookup(r->dfd, b->s.base, b->size, target, &e);
		} else {
			rc = elog__idx_load(r->dfd, b->s.base, b->size, &b->s.ix, &intact);
			if (rc == 0) {
				b->ix_state = 1;
				continue;
			}
		}
		/* No entry at or below target is to be believed only of an
		 * index whose entries start at the first record. */
		if (rc == ELOG_END && (b->ix_state != 1 || b->s.ix.n > 0)) {
			*lo = b->s.base;
			*pos = SEG_HDR;
			return 0;
		}
		if (rc == 0 && elog__scan_to_entry(&b->s.sc, &e)) {
			*lo = e.offset;
			*pos = e.pos;
			return 0;
		}
		if (b->ix_state == 2) /* entries of our own scan: cannot be */
			return seg_fault(r, &b->s, ELOG_CORRUPT, e.pos);
		if ((rc = back_index_scan(r)) != 0)
			return rc;
	}
}

/* Keep the records of the back segment from byte pos (the record of
 * offset lo) up to offset hi. */
static int back_fill(elog_reader *r, uint64_t lo, uint64_t pos, uint64_t hi)
{
	struct back *b = &r->bk;
	struct elog_record rec;
	uint64_t at;
	int err;
	b->recs.n = 0;
	b->valid = 0;
	b->s.tail = (struct seg_tail){ .next = lo };
	elog__scan_seek(&b->s.sc, pos);
	while ((err = tail_next(r, &b->s, &rec, &at)) == 0 && rec.offset < hi) {
		struct idx_entry e = { .offset = rec.offset, .pos = (uint32_t)at };
		if ((err = elog__idx_push(&b->recs, &e)) != 0)
			return elog__errmsg_set(r->msg, err, "%s", elog_strerror(err));
	}
	if (err != 0 && err != ELOG_END)
		return err;
	b->lo = lo;
	b->hi = hi;
	b->valid = 1;
	return 0;
}

/* Before a new stretch is read from the back segment kept open: -1 when
 * its name now means another file (compaction replaced it; it is opened
 * again), else 0, with what may be read of it brought up to date (the
 * active segment grows, and a segment the writer has left is closed). */
static int back_refresh(elog_reader *r, uint64_t next)
{
	struct back *b = &r->bk;
	struct stat st;
	if (!seg_linked(r, &b->s, &st))
		return -1;
	uint64_t limit = visible_limit(r, b->s.base, next);
	if ((uint64_t)st.st_size != b->size && b->ix_state) {
		/* Grown: its index has entries the one kept lacks. */
		elog__idx_free(&b->s.ix);
		b->ix_state = 0;
		b->s.jumps = 0;
	}
	b->size = (uint64_t)st.st_size;
	b->s.next = next;
	b->s.sc.limit = limit == UINT64_MAX ? b->size : limit;
	return 0;
}

/* Fill the back cache with the stretch that holds offset p - 1, up to p.
 * ELOG_END when no segment holds it (it is below the log's start). */
static int back_locate(elog_reader *r, uint64_t p)
{
	struct back *b = &r->bk;
	uint64_t target = p - 1;
	int err;
	/* Salvage is maintenance, as in locate(). */
	if (elog__holes_load(r->dfd, &r->holes) != 0)
		elog__holes_free(&r->holes);
	for (int attempt = 0; attempt < 100; attempt++) {
		const struct seglist *sl = &r->segs;
		/* The list may predate a roll of the writer's, which a target
		 * at or past its newest segment would not see. */
		if (!r->segs_valid || (sl->n > 0 && target >= sl->base[sl->n - 1] &&
		                       sl->base[sl->n - 1] < r->wm.segment_base)) {
			if ((err = list_segments(r)) != 0)
				return err;
		}
		ssize_t i = elog__seglist_find(sl, target);
		if (i < 0)
			return ELOG_END;
		uint64_t base = sl->base[i];
		uint64_t next = (size_t)i + 1 < sl->n ? sl->base[i + 1] : UINT64_MAX;
		if (b->s.fd >= 0 && b->s.base == base && back_refresh(r, next) != 0)
			back_close(r);
		if (b->s.fd < 0 || b->s.base != base) {
			struct stat st;
			int gone;
			back_close(r);
			if ((err = seg_read_open(r, base, next, &b->s, &gone)) != 0)
				return err;
			if (gone > 0) {
				r->segs_valid = 0; /* removed since listed */
				continue;
			}
			if (gone < 0) { /* nothing durable in it yet */
				b->s.base = base;
				b->lo = base;
				b->hi = p;
				b->recs.n = 0;
				b->valid = 1;
				return 0;
			}
			if (fstat(b->s.fd, &st) < 0) {
				err = errno;
				back_close(r);
				return elog__errmsg_set(r->msg, err, "%s", elog_strerror(err));
			}
			b->size = (uint64_t)st.st_size;
			b->s.ino = st.st_ino;
			b->s.dev = st.st_dev;
			b->s.id_known = 1;
		}
		uint64_t lo = base, pos = SEG_HDR;
		if ((err = back_entry(r, target, &lo, &pos)) != 0)
			return err;
		return back_fill(r, lo, pos, p);
	}
	return elog__errmsg_set(r->msg, EAGAIN, "segments keep disappearing while listed");
}

/* The last durable record below offset p: 0 with *k its place in the back
 * cache, ELOG_END when there is none, or an error. */
static int back_find(elog_reader *r, uint64_t p, size_t *k)
{
	struct back *b = &r->bk;
	int err;
	if (p > r->wm.durable_end)
		p = r->wm.durable_end;
	while (p > 0) {
		if (!b->valid || p <= b->lo || p > b->hi) {
			if ((err = back_locate(r, p)) != 0)
				return err;
		}
		ssize_t i = elog__idx_find_offset(&b->recs, p - 1);
		if (i >= 0) {
			*k = (size_t)i;
			return 0;
		}
		p = b->lo; /* none from lo to p: look below lo */
	}
	return ELOG_END;
}

/* Offsets lost to damage from `from` up to p, as salvage recorded them:
 * the last range of them reported as a gap, and the position moved below
 * it. */
static int back_gap(elog_reader *r, uint64_t from, uint64_t p)
{
	uint64_t a, b;
	int found = 0;
	while (from < p && elog__holes_find(&r->holes, from, p - 1, &a, &b)) {
		r->gap_first = a;
		r->gap_last = b;
		found = 1;
		from = b + 1;
	}
	if (!found)
		return 0;
	r->gap_cause = ELOG_GAP_DAMAGE;
	r->want = r->gap_first;
	r->reseek = 1;
	return ELOG_GAP;
}

/* Offsets lost between record off, the one before position p, and p,
 * that the chain of segments shows (a segment missing after off's, or
 * off's segment truncated): reported as a gap, and the position moved
 * below them.  Ranges salvage recorded are back_gap()'s. */
static int back_chain_gap(elog_reader *r, uint64_t off, uint64_t p)
{
	struct back *b = &r->bk;
	uint64_t from, to = p < b->s.next ? p : b->s.next, x, y;
	if (b->s.chain == CHAIN_SEALED)
		from = b->s.seal.next;
	else if (b->s.chain == CHAIN_UNSEALED && p >= b->s.next)
		from = off + 1; /* off is its last record */
	else
		return 0;
	if (from < off + 1)
		from = off + 1;
	if (from >= to || (r->holes.n && elog__holes_find(&r->holes, from, to - 1, &x, &y)))
		return 0;
	r->gap_first = from;
	r->gap_last = to - 1;
	r->gap_cause = ELOG_GAP_DAMAGE;
	r->want = from;
	r->reseek = 1;
	return ELOG_GAP;
}

int elog_reader_window(elog_reader *r, int64_t since_ms, int64_t until_ms)
{
	r->win = since_ms != INT64_MIN || until_ms != INT64_MAX;
	r->win_lo = since_ms;
	r->win_hi = until_ms;
	r->win_check = 0;
	return 0;
}

/* The record before the position, whatever its time. */
static int prev_any(elog_reader *r, struct elog_record *rec)
{
	struct back *b = &r->bk;
	uint64_t at;
	size_t k;
	int err;
	r->gap_pending = 0;
	/* A position past the durable end as last read (a seek past it)
	 * steps back from the durable end as it is now. */
	if (r->want > r->wm.durable_end && (err = refresh_watermark(r)) != 0)
		return err;
	uint64_t p = r->want < r->wm.durable_end ? r->want : r->wm.durable_end;
	err = back_find(r, p, &k);
	if (err == ELOG_END) /* the beginning: after what damage took there */
		return r->segs.n > 0 && back_gap(r, r->segs.base[0], p) ? ELOG_GAP : ELOG_END;
	if (err)
		return err;
	uint64_t off = b->recs.e[k].offset;
	if (back_gap(r, off + 1, p) || back_chain_gap(r, off, p))
		return ELOG_GAP;
	elog__scan_seek(&b->s.sc, b->recs.e[k].pos);
	if ((err = elog__scan_next(&b->s.sc, rec, &at)) != 0 || rec->offset != off)
		return seg_fault(r, &b->s, err ? err : ELOG_CORRUPT, b->recs.e[k].pos);
	if ((err = decode_value(r, &b->s, rec, at)) != 0)
		return err;
	r->want = off;
	r->reseek = 1;
	return 0;
}

int elog_reader_prev(elog_reader *r, struct elog_record *rec)
{
	int err;
	while ((err = prev_any(r, rec)) == 0 && r->win &&
	       (rec->ts_ms < r->win_lo || rec->ts_ms > r->win_hi))
		;
	return err;
}

int elog_reader_seek_last(elog_reader *r, uint64_t n)
{
	int err = refresh_watermark(r);
	if (err)
		return err;
	/* Step back n records; fewer when the log holds fewer, which leaves
	 * the position at its first record. */
	r->bk.valid = 0;
	uint64_t p = r->wm.durable_end;
	size_t k;
	for (uint64_t i = 0; i < n; i++) {
		if ((err = back_find(r, p, &k)) == ELOG_END)
			break;
		if (err)
			return err;
		p = r->bk.recs.e[k].offset;
	}
	seek_to(r, p);
	return 0;
}

int elog_reader_seek_time(elog_reader *r, int64_t ts)
{
	int err = refresh_watermark(r);
	if (err)
		return err;
	if ((err = list_segments(r)) != 0)
		return err;
	const struct seglist sl = r->segs; /* nothing below lists again */
	for (size_t i = 0; i < sl.n; i++) {
		int gone;
		if ((err = open_segment(r, sl.base[i], i + 1 < sl.n ? sl.base[i + 1] : UINT64_MAX,
		                        &gone)) != 0)
			break;
		if (gone < 0)
			break; /* newer than anything durable */
		if (gone)
			continue;
		/* Index entries carry the greatest timestamp up to their
		 * record: start at the entry before the first that reaches
		 * ts, and scan from there. */
		const struct index *ix = &r->cur.ix;
		struct idx_entry last;
		struct stat st;
		/* A segment wholly before ts up to its last entry: that entry
		 * alone says so. */
		if (fstat(r->cur.fd, &st) == 0 &&
		    elog__idx_last(r->dfd, r->cur.base, (uint64_t)st.st_size, &last) == 0 &&
		    last.ts_max < ts && elog__scan_to_entry(&r->cur.sc, &last)) {
			/* the stretch after it is scanned below */
		} else if (index_load(r, 0) == 0) {
			ssize_t k = elog__idx_find_time(ix, ts);
			ssize_t from = k < 0 ? (ssize_t)ix->n - 1 : k - 1;
			if (from >= 0)
				elog__scan_to_entry(&r->cur.sc, &ix->e[from]);
		}
		struct elog_record rec;
		uint64_t at;
		while ((err = tail_next(r, &r->cur, &rec, &at)) == 0) {
			if (rec.offset >= r->wm.durable_end)
				break;
			if (rec.ts_ms >= ts)
				return elog_reader_seek(r, rec.offset);
		}
		if (err != 0 && err != ELOG_END)
			break;
		err = 0;
	}
	if (err)
		return err;
	return elog_reader_seek(r, r->wm.durable_end);
}

int elog_reader_open(elog_reader **rp, const char *dir)
{
	elog_reader *r = calloc(1, sizeof *r);
	*rp = r;
	if (!r)
		return ENOMEM;
	r->cur.fd = r->wmfd = r->ino_fd = r->bk.s.fd = r->pk.fd = -1;
	r->dir = strdup(dir);
	if (!r->dir)
		return ENOMEM;
	struct elog_settings s;
	int err = elog__settings_open(dir, &r->dfd, &s, r->msg);
	if (err)
		return err;
	memcpy(r->log_id, s.id, sizeof r->log_id);
	if ((err = refresh_watermark(r)) != 0)
		return err;
	return elog_reader_seek_begin(r);
}

void elog_reader_close(elog_reader *r)
{
	if (!r)
		return;
	seg_close(r, &r->cur);
	seg_close(r, &r->pk);
	back_close(r);
	elog__idx_free(&r->bk.recs);
	for (int i = 0; i < 4; i++)
		if (r->ixc[i].size)
			elog__idx_free(&r->ixc[i].ix);
	elog__follow_close(r);
	elog__seglist_free(&r->segs);
	elog__vdec_free(r->vd);
	if (r->wmfd >= 0)
		close(r->wmfd);
	if (r->dfd >= 0)
		close(r->dfd);
	free(r->dir);
	elog__holes_free(&r->holes);
	free(r);
}
