/*
 * writer.c: a writer handle of a log, with group commit.  Any number of
 * handles, in one process or many, append to one log.
 *
 * elog_append() encodes a record into the handle's pending batch under a
 * mutex, laid out as if the log's tail were where this handle expects it:
 * offset, segment, position and index entries.  elog_sync() makes a thread
 * the leader if no flush of this handle is running: it takes the whole
 * pending batch, takes the log's batch lock (the flock on LOCK, see lock.c),
 * checks that the log's tail is where the batch was laid out from, writes it
 * with one write(2) per segment it touches, makes it durable with one
 * fdatasync(2), publishes the new durable end in the watermark, releases the
 * lock and wakes every waiter, telling each appended record its offset.
 * Threads that arrive while a flush runs append into a fresh batch and are
 * served by the next leader, so one fdatasync covers everyone queued.
 *
 * When another writer wrote, rolled or trained a dictionary since this
 * handle's last batch (LOCK's generation moved), the handle reloads the
 * tail from the watermark and lays the batch out again from there (new
 * offsets, crcs, positions; values encoded anew when the segment's
 * dictionary differs).  When a holder died mid-batch (LOCK says busy), or
 * LOCK's state is from another boot or unreadable, the tail is recovered
 * as on open after a crash (recover.c): cut at the first bad record, never
 * below the durable end.
 *
 * Segment rolls are carried out by the leader: it syncs the full segment
 * and its index before it creates the next one, so every closed segment is
 * durable.  After any write or sync error the handle refuses all further
 * work (ELOG_FAILED): after a failed fsync, Linux may have dropped the dirty
 * pages, and retrying would acknowledge data that is not on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Where the next record goes: its offset, its segment, that segment's size
 * and header flags, and the index entries' builder for it. */
struct tail {
	uint64_t next;
	uint64_t base;
	uint64_t size;
	uint32_t flags;
	struct idx_builder ib;
};

/* The bytes of one batch that go to one segment. */
struct chunk {
	uint64_t base;
	uint32_t flags;		/* the segment's header flags, for a roll */
	unsigned char *data;
	size_t len, cap;
	unsigned char *idx;
	size_t ilen, icap;
};

struct batch {
	struct chunk *c;
	size_t n, cap;
	struct tail start;	/* the tail it is laid out from */
	struct tail end;	/* the tail after its last record */
	size_t bytes;
	uint64_t **out;		/* where each record's offset goes, or NULL */
	size_t nrec, outcap;
	size_t split;		/* the record whose sample completed the
				 * training set, or SIZE_MAX */
};

/* Training a compressed log's dictionary from its first values (see
 * train.c and train() below). */
#define DICT_BYTES    (16u << 10)
struct training {
	uint64_t due;		/* not before the log (with the batch) ends
				 * here: too few values were found below */
	int done;		/* trained, adopted another's, or given up */
};

/* How long a writer waits for another's batch by default. */
#define DEFAULT_WAIT_MS 10000

struct elog {
	char msg[ELOG_MSG_MAX];
	int dfd, lockfd, wmfd, writersfd;
	struct elog_settings set;
	size_t batch_bytes;
	int64_t wait_ms;
	unsigned char boot[16];
	int have_boot;

	/* Owned by the leader of a flush (one at a time), touched on disk
	 * only with the batch lock held. */
	int segfd, idxfd;
	uint64_t seg_base, seg_size, idx_size;	/* the open segment */
	struct tail disk;	/* the log's tail as this handle last saw it */
	uint64_t gen;		/* LOCK's generation then */
	int known;		/* disk and gen are valid */
	struct vdec *vd;	/* to lay compressed values out again */

	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* Under mu. */
	const struct codec *codec;	/* of the segments it starts */
	struct venc *ve;	/* encodes values for their segment's codec */
	uint32_t dict_new;	/* the dictionary of segments it starts */
	struct training tr;
	struct batch pending, spare;
	int flushing;
	uint64_t appended;	/* records appended through this handle */
	uint64_t written;	/* of those, the ones durable */
	/* Gathering (see gather()): threads now in elog_sync(), how many
	 * were there when the last flush ended, and how long it took. */
	unsigned nsync, last_waiters;
	int gathering;
	int64_t flush_ns;
	pthread_cond_t gather;
	uint64_t durable;	/* the log's durable end after our last batch */
	int failed;		/* the error that stopped the writer, or 0 */
};

/* The chunk of b for segment base, added if needed. */
static struct chunk *batch_chunk(struct batch *b, uint64_t base, uint32_t flags)
{
	if (b->n > 0 && b->c[b->n - 1].base == base)
		return &b->c[b->n - 1];
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 2;
		struct chunk *nc = realloc(b->c, cap * sizeof *nc);
		if (!nc)
			return NULL;
		memset(nc + b->cap, 0, (cap - b->cap) * sizeof *nc);
		b->c = nc;
		b->cap = cap;
	}
	struct chunk *c = &b->c[b->n++];
	c->base = base;
	c->flags = flags;
	c->len = c->ilen = 0;
	return c;
}

static void batch_reset(struct batch *b, const struct tail *t)
{
	b->n = 0;
	b->bytes = 0;
	b->nrec = 0;
	b->split = SIZE_MAX;
	b->start = b->end = *t;
}

static void batch_free(struct batch *b)
{
	for (size_t i = 0; i < b->cap; i++) {
		free(b->c[i].data);
		free(b->c[i].idx);
	}
	free(b->c);
	free(b->out);
}

static int same_tail(const struct tail *a, const struct tail *b)
{
	return a->next == b->next && a->base == b->base && a->size == b->size &&
	       a->flags == b->flags;
}

/* Start a new segment at t's next offset (a roll, or a new dictionary). */
static void tail_new_segment(struct tail *t, uint32_t flags)
{
	t->base = t->next;
	t->size = SEG_HDR;
	t->flags = flags;
	memset(&t->ib, 0, sizeof t->ib);
}

/* Lay one record out at the end of b, from b's end tail: roll when it
 * would overfill a segment holding any, encode its value for the
 * segment's codec, add an index entry when one is due.  new_flags are the
 * header flags of a segment it starts.  Called with the mutex held. */
static int place(elog *w, struct batch *b, const struct elog_record *rec,
                 uint32_t new_flags, uint64_t *out)
{
	struct tail *t = &b->end;
	size_t size = elog__rec_size(rec->key_len, elog__codec_value_max(new_flags, rec->value_len));
	char why[ELOG_MSG_MAX];
	int err;

	/* A record larger than a whole segment gets one of its own. */
	if (t->size > SEG_HDR && t->size + size > w->set.segment_bytes)
		tail_new_segment(t, new_flags);
	struct elog_record stored = *rec;
	stored.offset = t->next;
	/* The segment's codec, which may not be the settings' (a segment
	 * started before elog-retain --set compress=...): its records keep
	 * it. */
	err = elog__venc_value(w->ve, w->dfd, t->flags, rec->value, rec->value_len,
	                 &stored.value, &stored.value_len, why);
	if (err == ELOG_UNSUPPORTED)
		return elog__errmsg_set(w->msg, err, "segment %020llu is %s",
		                  (unsigned long long)t->base, why);
	if (err)
		return elog__errmsg_set(w->msg, err, "%s", why);
	if (stored.value_len > ELOG_MAX_RECORD - REC_FIXED - rec->key_len)
		return elog__errmsg_set(w->msg, ELOG_TOOBIG,
		    "record of %zu bytes is larger than the maximum of %u",
		    rec->key_len + stored.value_len, ELOG_MAX_RECORD - REC_FIXED);
	size = elog__rec_size(stored.key_len, stored.value_len);
	struct chunk *c = batch_chunk(b, t->base, t->flags);
	if (!c || elog__buf_grow(&c->data, &c->cap, c->len + size, 64 * 1024) ||
	    elog__buf_grow(&c->idx, &c->icap, c->ilen + IDX_ENTRY, 64 * 1024)) {
		if (c && c->len == 0 && c->ilen == 0)
			b->n--;	/* drop the chunk just added */
		return elog__errmsg_set(w->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	}
	if (b->nrec == b->outcap) {
		size_t cap = b->outcap ? 2 * b->outcap : 1024;
		uint64_t **no = realloc(b->out, cap * sizeof *no);
		if (!no) {
			if (c->len == 0 && c->ilen == 0)
				b->n--;
			return elog__errmsg_set(w->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
		}
		b->out = no;
		b->outcap = cap;
	}
	elog__rec_encode(c->data + c->len, &stored);
	struct idx_entry e;
	if (elog__idx_builder_add(&t->ib, stored.offset, stored.ts_ms, t->size,
	                    w->set.index_interval, &e)) {
		elog__idx_entry_encode(c->idx + c->ilen, &e);
		c->ilen += IDX_ENTRY;
	}
	c->len += size;
	t->size += size;
	t->next++;
	b->bytes += size;
	b->out[b->nrec++] = out;
	return 0;
}

/* The header flags of a segment this handle starts. */
static uint32_t new_segment_flags(const elog *w)
{
	return SEG_FLAGS(w->codec->id, w->dict_new);
}

/* Lay b out again from the tail t: the log moved since it was laid out.
 * Each record keeps its key, value, time and schema, and gets the offset,
 * position and encoding it has now; the record at index split (if any)
 * starts a new segment, and segments started before it get pre_flags.
 * Called with the mutex held. */
static int relayout(elog *w, struct batch *b, const struct tail *t, size_t split,
                    uint32_t pre_flags)
{
	struct batch nb = { 0 };
	int err = 0;
	size_t k = 0;
	int split_done = 0;
	batch_reset(&nb, t);
	for (size_t i = 0; i < b->n && !err; i++) {
		const struct chunk *c = &b->c[i];
		for (size_t pos = 0; pos < c->len && !err; k++) {
			struct elog_record rec;
			size_t size;
			if ((err = elog__rec_decode(c->data + pos, c->len - pos, &rec, &size)) != 0) {
				err = elog__errmsg_set(w->msg, EIO, "internal error: a pending record "
				                 "does not decode");
				break;
			}
			pos += size;
			/* The value itself, in vd's buffer until the next
			 * elog__vdec_value() (place() encodes with ve's). */
			if ((err = elog__vdec_value(w->vd, w->dfd, c->flags, rec.value,
			                      rec.value_len, &rec.value, &rec.value_len,
			                      w->msg)) != 0)
				break;
			/* (A segment that has no record keeps the ones that
			 * come before the split: its header is on disk.) */
			if (!err && k >= split && !split_done && nb.end.size > SEG_HDR) {
				tail_new_segment(&nb.end, new_segment_flags(w));
				split_done = 1;
			}
			if (!err)
				err = place(w, &nb, &rec, k >= split ? new_segment_flags(w)
				                                     : pre_flags, b->out[k]);
		}
	}
	if (err) {
		batch_free(&nb);
		return err;
	}
	/* Keep b's buffers for reuse: swap contents. */
	struct batch old = *b;
	*b = nb;
	batch_free(&old);
	return 0;
}

/* ---- the log's tail, under the batch lock ---- */

static void close_segment(elog *w)
{
	if (w->segfd >= 0)
		close(w->segfd);
	if (w->idxfd >= 0)
		close(w->idxfd);
	w->segfd = w->idxfd = -1;
}

/* The tail of a log whose last batch ended cleanly: the watermark says where
 * it is.  Reads what it needs: the watermark, the active segment's header
 * and size, its index's last entry and the records after it.  ELOG_CORRUPT
 * (with no message) when what it finds does not agree: then recover. */
static int tail_reload(elog *w)
{
	struct watermark wm;
	struct stat st;
	unsigned char hdr[SEG_HDR > IDX_ENTRY ? SEG_HDR : IDX_ENTRY];
	char name[NAME_MAX_LOCAL];
	size_t got;
	int err;

	if ((err = elog__wm_read(w->wmfd, &wm)) != 0)
		return err == ELOG_CORRUPT ? err : elog__errmsg_set(w->msg, err, "%s: %s",
		                                              FN_WATERMARK, elog_strerror(err));
	if (wm.segment_bytes < SEG_HDR)
		return ELOG_CORRUPT;
	uint32_t flags;
	if (w->segfd < 0 || wm.segment_base != w->seg_base) {
		close_segment(w);
		if (elog__seg_open(w->dfd, wm.segment_base, O_RDWR, &w->segfd, &flags, &st,
		             NULL) != 0)
			return ELOG_CORRUPT;
		elog__seg_name(name, wm.segment_base, IDX_EXT);
		if ((w->idxfd = elog__fs_openat(w->dfd, name, O_RDWR, 0)) < 0)
			return ELOG_CORRUPT;
		w->seg_base = wm.segment_base;
	} else if (fstat(w->segfd, &st) < 0 ||
	           elog__fs_pread_full(w->segfd, hdr, SEG_HDR, 0, &got) != 0 ||
	           elog__seg_header_verify(hdr, got, wm.segment_base, NULL) != 0) {
		return ELOG_CORRUPT;	/* the open segment, checked again */
	} else {
		flags = elog__seg_header_flags(hdr);
	}
	if ((uint64_t)st.st_size != wm.segment_bytes)
		return ELOG_CORRUPT;
	struct tail t = { wm.durable_end, wm.segment_base, wm.segment_bytes,
	                  flags, { 0 } };
	if (fstat(w->idxfd, &st) < 0 || st.st_size < IDX_HDR ||
	    ((uint64_t)st.st_size - IDX_HDR) % IDX_ENTRY != 0)
		return ELOG_CORRUPT;
	uint64_t idx_size = (uint64_t)st.st_size;
	if (idx_size > IDX_HDR) {
		/* The builder goes on from the last entry: its position, and the
		 * greatest time through the records after it. */
		if (elog__fs_pread_full(w->idxfd, hdr, IDX_ENTRY, (off_t)(idx_size - IDX_ENTRY),
		                  &got) != 0 || got != IDX_ENTRY ||
		    get32(hdr + 20) != elog__crc32c(0, hdr, 20))
			return ELOG_CORRUPT;
		uint64_t pos = get32(hdr + 16), entry_offset = get64(hdr);
		t.ib.any = 1;
		t.ib.last_pos = pos;
		t.ib.ts_max = (int64_t)get64(hdr + 8);
		/* The records from the last entry on: the first must be the
		 * one it names, the last the one before the durable end, and
		 * none may be due an entry of its own (else entries are
		 * missing: the index was cut). */
		struct scan s;
		struct elog_record rec;
		struct idx_entry e;
		uint64_t at, last = 0;
		int any = 0, wrong = 0;
		if (pos < SEG_HDR || pos >= t.size)
			return ELOG_CORRUPT;
		if ((err = elog__scan_init(&s, w->segfd, t.base, pos, t.size)) != 0)
			return elog__errmsg_set(w->msg, err, "%s", elog_strerror(err));
		while (!wrong && (err = elog__scan_next(&s, &rec, &at)) == 0) {
			wrong = any ? rec.offset <= last
			            : rec.offset != entry_offset || rec.ts_ms > t.ib.ts_max;
			wrong |= elog__idx_builder_add(&t.ib, rec.offset, rec.ts_ms, at,
			                         w->set.index_interval, &e);
			last = rec.offset;
			any = 1;
		}
		elog__scan_free(&s);
		if (wrong || err != ELOG_END || !any || last + 1 != t.next)
			return ELOG_CORRUPT;
	} else if (t.size > SEG_HDR || t.base != t.next) {
		return ELOG_CORRUPT;
	}
	w->seg_size = t.size;
	w->idx_size = idx_size;
	w->disk = t;
	w->durable = t.next;
	return 0;
}

/* The tail after a crash: recover the active segment as on open. */
static int tail_recover(elog *w)
{
	struct watermark wm;
	struct seglist sl = { 0 };
	struct recovery rc;
	int err;

	close_segment(w);
	if ((err = elog__wm_load(w->dfd, w->wmfd, &wm)) != 0)
		return elog__errmsg_set(w->msg, err, "%s: %s", FN_WATERMARK, elog_strerror(err));
	if ((err = elog__recover_leftovers(w->dfd, w->msg)) != 0)
		return err;
	if ((err = elog__seglist_read(w->dfd, &sl)) != 0)
		return elog__errmsg_set(w->msg, err, "listing segments: %s", elog_strerror(err));
	if (sl.n == 0) {
		elog__seglist_free(&sl);
		return elog__errmsg_set(w->msg, ELOG_CORRUPT, "no segment files%s",
		    wm.durable_end ? ", but the watermark says records are durable" : "");
	}
	uint64_t active = sl.base[sl.n - 1];
	/* Closed segments and their indexes were synced before the next
	 * segment was made; the one a crash may have caught at its roll is
	 * the newest closed one. */
	struct seglist last = { sl.n > 1 ? &sl.base[sl.n - 2] : NULL, sl.n > 1 ? 2 : 0 };
	err = elog__recover_indexes(w->dfd, &last, w->set.index_interval, w->msg);
	elog__seglist_free(&sl);
	if (err)
		return err;
	err = elog__recover_active(w->dfd, &wm, active, w->set.index_interval,
	                     new_segment_flags(w), &rc, w->msg);
	if (err) {
		if (rc.segfd >= 0)
			close(rc.segfd);
		if (rc.idxfd >= 0)
			close(rc.idxfd);
		elog__recovery_free(&rc);
		return err;
	}
	w->segfd = rc.segfd;
	w->idxfd = rc.idxfd;
	w->seg_base = active;
	w->seg_size = rc.size;
	w->idx_size = rc.idx_size;
	w->disk = (struct tail){ rc.next, active, rc.size, rc.flags, rc.ib };
	w->durable = rc.next;
	elog__recovery_free(&rc);

	struct watermark now = { rc.next, active, rc.size };
	if (memcmp(&now, &wm, sizeof now) != 0 && (err = elog__wm_write(w->wmfd, &now)) != 0)
		return elog__errmsg_set(w->msg, err, "%s: %s", FN_WATERMARK, elog_strerror(err));
	return 0;
}

/* A compressed log's tail segment may use a dictionary newer than this
 * handle's (another writer trained it): new segments use it too, and this
 * handle samples no more. */
static void adopt_dict(elog *w)
{
	if (w->codec->dictionaries && SEG_DICT(w->disk.flags) > w->dict_new) {
		w->dict_new = SEG_DICT(w->disk.flags);
		w->tr.done = 1;
	}
}

static int state_write(elog *w, uint64_t gen, unsigned busy, int trunc)
{
	struct lock_state ls = { 1, gen, busy, (unsigned)getpid(), { 0 } };
	memcpy(ls.boot, w->boot, sizeof ls.boot);
	int err = elog__lock_state_write(w->lockfd, &ls, trunc);
	if (err)
		return elog__errmsg_set(w->msg, err, "%s: %s", FN_LOCK, elog_strerror(err));
	return 0;
}

/* With the batch lock held: make w->disk the log's tail.  *moved says
 * whether it changed since this handle last looked. */
static int tail_sync(elog *w, int *moved)
{
	struct lock_state ls;
	int err = elog__lock_state_read(w->lockfd, &ls);
	if (err)
		return elog__errmsg_set(w->msg, err, "%s: %s", FN_LOCK, elog_strerror(err));
	/* A state from this boot can be trusted; without a boot id, only one
	 * written since this handle first found the tail. */
	int clean = ls.valid && !ls.busy &&
	            (w->have_boot ? memcmp(ls.boot, w->boot, sizeof ls.boot) == 0 : w->known);
	*moved = 1;
	if (clean && w->known && ls.gen == w->gen) {
		*moved = 0;
		return 0;
	}
	w->known = 0;
	if (clean && (err = tail_reload(w)) == 0) {
		w->gen = ls.gen;
		w->known = 1;
		adopt_dict(w);
		return 0;
	}
	if (clean && err != ELOG_CORRUPT)
		return err;
	/* A holder died mid-batch, the state is from another boot (a crash
	 * or power loss may have kept any part of what was written), or it
	 * is not one this code wrote: recover, and say the tail is known. */
	if ((err = tail_recover(w)) != 0)
		return err;
	uint64_t gen = ls.valid ? ls.gen + 1 : 1;
	if ((err = state_write(w, gen, 0, !ls.valid)) != 0)
		return err;
	w->gen = gen;
	w->known = 1;
	adopt_dict(w);
	return 0;
}

/* ---- writing a batch ---- */

/* Make the open segment the one based at base: sync the old one and its
 * index (so that closed segments and their indexes are durable: only the
 * active segment's index is rebuilt after a crash), then create the new
 * one. */
static int roll(elog *w, uint64_t base, uint32_t flags)
{
	char name[NAME_MAX_LOCAL];
	int err = 0;
	elog__seg_name(name, w->seg_base, SEG_EXT);
	if (fdatasync(w->segfd) < 0)
		return elog__errmsg_set(w->msg, errno, "%s: fdatasync: %s", name, elog_strerror(errno));
	elog__seg_name(name, w->seg_base, IDX_EXT);
	if (fdatasync(w->idxfd) < 0)
		return elog__errmsg_set(w->msg, errno, "%s: fdatasync: %s", name, elog_strerror(errno));
	close_segment(w);
	elog__seg_name(name, base, SEG_EXT);
	if ((err = elog__seg_create(w->dfd, base, flags, &w->segfd, &w->idxfd)) != 0)
		return elog__errmsg_set(w->msg, err, "%s: %s", name, elog_strerror(err));
	if ((err = elog__fs_fsync_dir(w->dfd)) != 0)
		return elog__errmsg_set(w->msg, err, "fsync of the log directory: %s", elog_strerror(err));
	w->seg_base = base;
	w->seg_size = SEG_HDR;
	w->idx_size = IDX_HDR;
	return 0;
}

/* Write b and make it durable, with the batch lock held. */
static int batch_write(elog *w, const struct batch *b)
{
	char name[NAME_MAX_LOCAL];
	int err;
	for (size_t i = 0; i < b->n; i++) {
		const struct chunk *c = &b->c[i];
		if (c->base != w->seg_base && (err = roll(w, c->base, c->flags)) != 0)
			return err;
		if ((err = elog__fs_pwrite_all(w->segfd, c->data, c->len, (off_t)w->seg_size)) != 0) {
			elog__seg_name(name, w->seg_base, SEG_EXT);
			return elog__errmsg_set(w->msg, err, "%s: write at byte %llu: %s", name,
			                  (unsigned long long)w->seg_size, elog_strerror(err));
		}
		w->seg_size += c->len;
		/* The index is derived data: it is written but never synced,
		 * and recovery or a reader copes with whatever survives. */
		if (c->ilen) {
			if ((err = elog__fs_pwrite_all(w->idxfd, c->idx, c->ilen, (off_t)w->idx_size)) != 0) {
				elog__seg_name(name, w->seg_base, IDX_EXT);
				return elog__errmsg_set(w->msg, err, "%s: %s", name, elog_strerror(err));
			}
			w->idx_size += c->ilen;
		}
	}
	if (fdatasync(w->segfd) < 0) {
		elog__seg_name(name, w->seg_base, SEG_EXT);
		return elog__errmsg_set(w->msg, errno, "%s: fdatasync: %s", name, elog_strerror(errno));
	}
	struct watermark wm = { b->end.next, w->seg_base, w->seg_size };
	if ((err = elog__wm_write(w->wmfd, &wm)) != 0)
		return elog__errmsg_set(w->msg, err, "%s: %s", FN_WATERMARK, elog_strerror(err));
	return 0;
}

/* The highest dictionary id any segment header names: a new dictionary
 * must never take the id of one that is referenced, even if its file is
 * gone, or old records would decompress into garbage.  Reads every
 * header, once in the life of a log. */
static uint32_t dict_referenced(elog *w)
{
	struct seglist sl = { 0 };
	uint32_t max = SEG_DICT(w->disk.flags);
	if (elog__seglist_read(w->dfd, &sl) != 0)
		return max;
	for (size_t i = 0; i < sl.n; i++) {
		uint32_t flags;
		int fd;
		if (elog__seg_open(w->dfd, sl.base[i], O_RDONLY, &fd, &flags, NULL, NULL) != 0)
			continue;
		if (SEG_DICT(flags) > max)
			max = SEG_DICT(flags);
		close(fd);
	}
	elog__seglist_free(&sl);
	return max;
}

/* A compressed log without a dictionary gets one trained from its first
 * values, whichever writers appended them (train.c).  The leader of a batch
 * after which the log may hold a set reads them back and trains, under the
 * batch lock so that no two writers make one with the same id, stores it
 * durably, and starts a segment that uses it with the batch's record that
 * completed the set (b->split), or with its first.  A writer that finds a
 * newer dictionary than its own (another writer trained one) uses that
 * instead.  Too few values is tried again once the log may hold enough;
 * a failed training is not an error: the log goes on without one, and
 * this handle tries no more (the next handle opened tries once again).
 * Called with the mutex held. */
static void train(elog *w, struct batch *b)
{
	struct training *t = &w->tr;
	uint64_t end = w->disk.next + b->nrec;
	/* A test every batch can afford: while the log's records with the
	 * batch's are fewer than a set, and lie in the first segment with
	 * fewer bytes than a set, they cannot make one. */
	if (end < t->due || (end < TRAIN_SAMPLES && w->disk.base == 0 &&
	                     w->disk.size - SEG_HDR + b->bytes < TRAIN_BYTES / 2))
		return;
	uint32_t latest = 0;
	if (elog__dict_latest(w->dfd, &latest) == 0 && latest > w->dict_new) {
		t->done = 1;
		if (elog__venc_use_dict(w->ve, w->dfd, SEG_FLAGS(w->codec->id, latest), w->msg) == 0)
			w->dict_new = latest;
		return;
	}
	struct train_more *more = malloc((b->n ? b->n : 1) * sizeof *more);
	unsigned char *dict = malloc(DICT_BYTES);
	struct train_result res;
	size_t dlen;
	int err = ENOMEM;
	for (size_t i = 0; more && i < b->n; i++)
		more[i] = (struct train_more){ b->c[i].data, b->c[i].len, b->c[i].flags };
	if (more && dict)
		err = elog__train_first(w->dfd, w->codec, w->disk.base, w->disk.size, more, b->n,
		                        dict, DICT_BYTES, &dlen, &res);
	if (err == ELOG_END)
		t->due = end + res.missing;
	else
		t->done = 1;
	if (!err) {
		uint32_t id = latest + 1, ref = dict_referenced(w);
		char why[ELOG_MSG_MAX];
		if (ref >= id)
			id = ref + 1;
		if (elog__dict_store(w->dfd, id, dict, dlen) == 0 &&
		    elog__venc_set_dict(w->ve, SEG_FLAGS(w->codec->id, id), dict, dlen, why) == 0) {
			w->dict_new = id;
			b->split = res.split;
		}
	}
	free(dict);
	free(more);
}

/* The leader's work on batch b, with the mutex held on entry and exit:
 * take the batch lock, find the tail, lay b out again if the log moved,
 * write, sync, publish, release. */
static int flush_batch(elog *w, struct batch *b)
{
	int err, moved;
	pthread_mutex_unlock(&w->mu);
	err = elog__lock_acquire(w->lockfd, w->wait_ms, w->msg);
	pthread_mutex_lock(&w->mu);
	if (err)
		return err;
	if ((err = tail_sync(w, &moved)) != 0)
		goto out;
	uint32_t dict_before = w->dict_new;
	if (!w->tr.done)
		train(w, b);
	if (w->dict_new != dict_before) {
		/* The new dictionary starts with a new segment at once: with
		 * the record that completed the samples, or this batch's
		 * first when that one was written before. */
		if ((err = relayout(w, b, &w->disk, b->split == SIZE_MAX ? 0 : b->split,
		                    SEG_FLAGS(w->codec->id, dict_before))) != 0)
			goto out;
	} else if (!same_tail(&b->start, &w->disk) &&
	           (err = relayout(w, b, &w->disk, SIZE_MAX, new_segment_flags(w))) != 0) {
		goto out;
	}
	/* The layout is final: tell each record its offset now, so that a
	 * caller whose sync fails can still tell which records it wrote. */
	for (size_t i = 0; i < b->nrec; i++)
		if (b->out[i])
			*b->out[i] = b->start.next + i;
	uint64_t gen = w->gen + 1;
	pthread_mutex_unlock(&w->mu);
	err = state_write(w, gen, 1, 0);
	if (!err)
		err = batch_write(w, b);
	if (!err)
		err = state_write(w, gen, 0, 0);
	pthread_mutex_lock(&w->mu);
	if (!err) {
		w->gen = gen;
		w->disk = b->end;
		w->durable = b->end.next;
	} else {
		w->known = 0;
	}
out:
	elog__lock_release(w->lockfd);
	return err;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Before a leader takes the batch, it waits briefly for the threads the
 * last flush served to come back with their next record: woken together,
 * the first would otherwise lead a flush of its record alone while the
 * others are still appending, and batches would stay small.  It waits no
 * longer than half a flush (nor 500 us), so a thread that does not come
 * back costs little.  Called with the mutex held. */
static void gather(elog *w)
{
	if (w->last_waiters <= 1 || w->nsync >= w->last_waiters)
		return;
	int64_t wait = w->flush_ns / 2 < 500000 ? w->flush_ns / 2 : 500000;
	int64_t until = mono_ns() + wait;
	struct timespec dl = { (time_t)(until / 1000000000), (long)(until % 1000000000) };
	w->gathering = 1;
	while (w->nsync < w->last_waiters)
		if (pthread_cond_timedwait(&w->gather, &w->mu, &dl) != 0)
			break;
	w->gathering = 0;
}

/* Wait until the first `target` records appended through w are durable,
 * leading flushes as needed.  Called with the mutex held. */
static int sync_to(elog *w, uint64_t target)
{
	int rc = 0;
	w->nsync++;
	if (w->gathering)
		pthread_cond_signal(&w->gather);
	while (w->written < target) {
		if (w->failed) {
			rc = ELOG_FAILED;
			break;
		}
		if (w->flushing) {
			pthread_cond_wait(&w->cv, &w->mu);
			continue;
		}
		/* Lead: take everything pending; later appends start a new
		 * batch that the next leader will write. */
		w->flushing = 1;
		gather(w);
		struct batch b = w->pending;
		w->pending = w->spare;
		batch_reset(&w->pending, &b.end);
		int64_t t0 = mono_ns();
		int err = flush_batch(w, &b);
		int64_t t1 = mono_ns();
		w->flushing = 0;
		w->flush_ns = t1 - t0;
		w->last_waiters = w->nsync;
		if (!err) {
			w->written += b.nrec;
			/* Records appended meanwhile were laid out from where
			 * this batch was expected to end; when it ended
			 * elsewhere, lay them out from the truth now, so that
			 * the ones appended next follow them there. */
			if (!same_tail(&w->pending.start, &w->disk))
				err = relayout(w, &w->pending, &w->disk, SIZE_MAX,
				               new_segment_flags(w));
		}
		if (err)
			w->failed = err;
		batch_reset(&b, &w->disk);
		w->spare = b;
		pthread_cond_broadcast(&w->cv);
		if (err) {
			rc = err;	/* the leader learns why; others ELOG_FAILED */
			break;
		}
	}
	w->nsync--;
	return rc;
}

int elog_sync(elog *w)
{
	pthread_mutex_lock(&w->mu);
	int rc = sync_to(w, w->appended);
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int elog_append(elog *w, const struct elog_record *rec, uint64_t *offset)
{
	if (rec->key_len > ELOG_MAX_KEY ||
	    rec->value_len > ELOG_MAX_RECORD - REC_FIXED - rec->key_len)
		return elog__errmsg_set(w->msg, ELOG_TOOBIG,
		    "record of %zu bytes is larger than the maximum of %u",
		    rec->key_len + rec->value_len, ELOG_MAX_RECORD - REC_FIXED);
	if ((rec->key_len && !rec->key) || (rec->value_len && !rec->value))
		return elog__errmsg_set(w->msg, ELOG_INVALID, "record with a NULL key or value");
	int err;

	pthread_mutex_lock(&w->mu);
	if (w->failed) {
		pthread_mutex_unlock(&w->mu);
		return ELOG_FAILED;
	}
	struct elog_record r = *rec;
	if (r.ts_ms == ELOG_TS_NOW)
		r.ts_ms = elog__fs_now_ms();
	if ((err = place(w, &w->pending, &r, new_segment_flags(w), offset)) != 0) {
		pthread_mutex_unlock(&w->mu);
		return err;
	}
	w->appended++;
	/* A full buffer is written at once: memory stays bounded, and a
	 * fast producer gets large batches without asking. */
	if (w->pending.bytes >= w->batch_bytes)
		err = sync_to(w, w->appended);
	pthread_mutex_unlock(&w->mu);
	return err;
}

uint64_t elog_next_offset(elog *w)
{
	pthread_mutex_lock(&w->mu);
	uint64_t v = w->pending.end.next;
	pthread_mutex_unlock(&w->mu);
	return v;
}

uint64_t elog_durable_end(elog *w)
{
	pthread_mutex_lock(&w->mu);
	uint64_t v = w->durable;
	pthread_mutex_unlock(&w->mu);
	return v;
}

const struct elog_settings *elog_settings_of(elog *w)
{
	return &w->set;
}

const char *elog_errmsg(elog *w)
{
	if (!w)
		return "out of memory";
	return w->msg[0] ? w->msg : "no error";
}

/* Find the codec the settings name, and make the value encoder and
 * decoder. */
static int open_codec(elog *w)
{
	char why[ELOG_MSG_MAX];
	int err;
	/* elog__settings_parse() knows only the codecs of the table. */
	if (!(w->codec = elog__codec_from_settings(&w->set)))
		return elog__errmsg_set(w->msg, ELOG_CORRUPT, "%s: unknown compression %d",
		                  FN_SETTINGS, w->set.compression);
	if ((err = elog__codec_usable(w->codec, why)) != 0)
		return elog__errmsg_set(w->msg, err, "the log is %s", why);
	if (!(w->ve = elog__venc_new(w->codec, w->set.compression_level)) ||
	    !(w->vd = elog__vdec_new()))
		return elog__errmsg_set(w->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	/* Only a codec with dictionaries trains one. */
	w->tr.done = w->set.no_dictionary || !w->codec->dictionaries;
	return 0;
}

/* Create the log in dfd under the batch lock, unless another writer has
 * meanwhile. */
static int create_log(elog *w, const struct elog_options *opt)
{
	int err = elog__lock_acquire(w->lockfd, w->wait_ms, w->msg);
	if (err)
		return err;
	err = elog__settings_load(w->dfd, &w->set, w->msg);
	if (err == ELOG_NOTLOG && (err = elog__log_create(w->dfd, opt, w->msg)) == 0)
		err = elog__settings_load(w->dfd, &w->set, w->msg);
	elog__lock_release(w->lockfd);
	return err;
}

static int open_log(elog *w, const char *dir, const struct elog_options *opt)
{
	int err, moved;

	if (opt && opt->create && mkdir(dir, 0777) < 0 && errno != EEXIST)
		return elog__errmsg_set(w->msg, errno, "%s", elog_strerror(errno));
	w->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dfd < 0)
		return elog__errmsg_set(w->msg, errno, "%s", elog_strerror(errno));
	if (elog__fs_is_netfs(w->dfd))
		return elog__errmsg_set(w->msg, ELOG_NETFS,
		    "on a network filesystem, where locks and fsync cannot be trusted");
	/* A directory that is not a log is refused before LOCK is made in
	 * it, so that a mistaken path is left as it was found. */
	err = elog__settings_load(w->dfd, &w->set, w->msg);
	int fresh = err == ELOG_NOTLOG && opt && opt->create;
	if (fresh && (err = elog__log_check_fresh(w->dfd, w->msg)) != 0)
		return err;
	if (err && !fresh)
		return err;
	if ((err = elog__lock_open(w->dfd, FN_LOCK, &w->lockfd, w->msg)) != 0)
		return err;
	if (fresh && (err = create_log(w, opt)) != 0)
		return err;

	/* Options for a new log that this one does not have are refused:
	 * ignoring them would leave the caller believing they hold. */
	if ((err = elog__settings_check_options(&w->set, opt, w->msg)) != 0)
		return err;

	/* Every open handle holds a shared lock on "writers", so that an
	 * operator can see which processes have the log open for writing
	 * (elog-cat -L).  It is a report only: without it, writing goes on. */
	w->writersfd = elog__fs_openat(w->dfd, FN_WRITERS, O_RDWR | O_CREAT, 0666);
	if (w->writersfd >= 0)
		flock(w->writersfd, LOCK_SH | LOCK_NB);

	w->wmfd = elog__fs_openat(w->dfd, FN_WATERMARK, O_RDWR | O_CREAT, 0666);
	if (w->wmfd < 0)
		return elog__errmsg_set(w->msg, errno, "%s: %s", FN_WATERMARK, elog_strerror(errno));
	if ((err = open_codec(w)) != 0)
		return err;

	/* Find the tail now, so that a damaged log is refused at open. */
	if ((err = elog__lock_acquire(w->lockfd, w->wait_ms, w->msg)) != 0)
		return err;
	err = tail_sync(w, &moved);
	if (!err && w->codec->dictionaries) {
		/* New segments use the newest dictionary, which may be newer
		 * than the tail segment's (stored by a writer that stopped
		 * before its next segment).  Ids are given in order, so look
		 * for the ones after the tail's instead of listing. */
		uint32_t id = w->dict_new;
		char name[NAME_MAX_LOCAL];
		struct stat st;
		for (;;) {
			elog__dict_name(name, id + 1);
			if (fstatat(w->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				break;
			id++;
		}
		if (id) {
			w->dict_new = id;
			w->tr.done = 1;
		}
		/* The tail segment's dictionary is gone (deleted by hand): its
		 * records stay unreadable, but writing goes on in a segment of
		 * its own, and a new dictionary gets a new id. */
		elog__dict_name(name, SEG_DICT(w->disk.flags));
		if (SEG_DICT(w->disk.flags) &&
		    fstatat(w->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
			if (w->dict_new == SEG_DICT(w->disk.flags)) {
				w->dict_new = 0;
				w->tr.done = w->set.no_dictionary;
			}
			if (w->disk.size > SEG_HDR)
				tail_new_segment(&w->disk, new_segment_flags(w));
		}
		/* Load the dictionary now: a damaged one is refused at open. */
		if (w->dict_new)
			err = elog__venc_use_dict(w->ve, w->dfd, new_segment_flags(w), w->msg);
	}
	elog__lock_release(w->lockfd);
	if (err)
		return err;
	batch_reset(&w->pending, &w->disk);
	batch_reset(&w->spare, &w->disk);
	return 0;
}

int elog_open(elog **wp, const char *dir, const struct elog_options *opt)
{
	elog *w = calloc(1, sizeof *w);
	*wp = w;
	if (!w)
		return ENOMEM;
	w->dfd = w->lockfd = w->wmfd = w->writersfd = w->segfd = w->idxfd = -1;
	w->batch_bytes = opt && opt->batch_bytes ? opt->batch_bytes : DEFAULT_BATCH_BYTES;
	w->wait_ms = opt && opt->wait_ms ? opt->wait_ms : DEFAULT_WAIT_MS;
	w->have_boot = elog__lock_boot_id(w->boot);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->gather, &ca);
	pthread_condattr_destroy(&ca);
	int err = open_log(w, dir, opt);
	if (err)
		w->failed = err;
	return err;
}

int elog_close(elog *w)
{
	if (!w)
		return 0;
	/* A writer that failed (or never opened) has nothing it could still
	 * make durable; saying so keeps a caller from assuming otherwise. */
	int err = w->failed ? ELOG_FAILED : elog_sync(w);
	int fds[] = { w->segfd, w->idxfd, w->wmfd, w->writersfd, w->dfd, w->lockfd };
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	batch_free(&w->pending);
	batch_free(&w->spare);
	elog__venc_free(w->ve);
	elog__vdec_free(w->vd);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	pthread_cond_destroy(&w->gather);
	free(w);
	return err;
}
