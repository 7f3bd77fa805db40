/*
 * writer.c: a writer handle of a log, with group commit.  Any number of
 * handles, in one process or many, append to one log.
 *
 * elog_append() lays a record out into the handle's pending batch, under a
 * mutex, from where the handle expects the log's tail to be.  elog_sync()
 * makes a thread the leader when no flush of this handle runs: it takes
 * the whole batch and the log's batch lock (the flock on LOCK, lock.c),
 * finds the tail (tail_sync(): reloaded from LOCK's state when another
 * writer moved it, recovered as after a crash when a holder died, a sync
 * failed or the state cannot be trusted, recover.c), lays the batch out
 * again if the tail moved, writes it, rolling segments as needed, and
 * releases the lock; then it makes the batch durable and published,
 * sharing syncs with the other writers (see "making a written batch
 * durable" below).  Threads that arrive meanwhile fill the next batch.
 * After a write or sync error the handle refuses all further work
 * (ELOG_FAILED): Linux may have dropped the dirty pages, and retrying
 * would acknowledge data not on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <linux/futex.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "compress.h"
#include "files.h"
#include "writer.h"

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
	uint32_t flags; /* the segment's header flags, for a roll */
	uint64_t at;    /* where it was written in its segment */
	unsigned char *data;
	size_t len, cap;
	unsigned char *idx;
	size_t ilen, icap;
};

struct batch {
	struct chunk *c;
	size_t n, cap;
	struct tail start; /* the tail it is laid out from */
	struct tail end;   /* the tail after its last record */
	size_t bytes;
	struct placed {
		uint64_t *out; /* where the record's offset goes, or NULL */
		uint64_t off;  /* its offset as laid out */
		uint64_t want; /* the offset elog_append_at() asked, or
		                * OFF_NEXT (the next one) */
	} * rec;
	size_t nrec, reccap;
	int holes;    /* an elog_append_at() record skips offsets */
	size_t split; /* the record whose sample completed the
				 * training set, or SIZE_MAX */
};

/* Training a compressed log's dictionary from its first values (see
 * train.c and train() below). */
#define DICT_BYTES (16u << 10)
struct training {
	uint64_t due; /* not before the log (with the batch) ends
				 * here: too few values were found below */
	int done;     /* trained, adopted another's, or given up */
};

/* How long a writer waits for another's batch by default. */
#define DEFAULT_WAIT_MS 10000

struct elog {
	char msg[ELOG_MSG_MAX];
	int dfd, lockfd, wmfd, writersfd;
	uint32_t *bell;      /* the doorbell of LOCK's waiters, or NULL (lock.c) */
	unsigned pid;        /* getpid() at open, for LOCK's state (two calls a batch) */
	struct stat lock_st; /* LOCK's file, to tell it was replaced */
	int inofd;           /* inotify on the watermark; -2 not tried yet */
	int pub_owed;        /* followers to wake once LOCK is released */
	int64_t sync_ns;     /* how long its last fdatasync took */
	/* The sync slot's holder as this handle last waited it out (its cover,
	 * the doorbell's hint), while stalled: until it is seen gone or moved
	 * on, batches sync without waiting for it. */
	int stalled;
	uint64_t stalled_cover;
	/* The slot's sync record that this handle found stopped past the
	 * bound, for the next tail_sync() to cut back as failed (0: none);
	 * and the state's hseq as last read. */
	uint64_t stall_seq, hseq;
	struct elog_settings set;
	size_t batch_bytes;
	int64_t wait_ms;
	unsigned char boot[16];
	int have_boot;

	/* Owned by the leader of a flush (one at a time), touched on disk
	 * only with the batch lock held. */
	int segfd, idxfd;
	int64_t seg_open_ns;                   /* CLOCK_MONOTONIC when segfd was opened */
	uint64_t seg_base, seg_size, idx_size; /* the open segment */
	struct tail disk;                      /* the log's tail as this handle last saw it */
	uint64_t epoch, gen;                   /* LOCK's epoch and generation then */
	uint64_t seen[3];                      /* and the tail it recorded: next, base, size */
	int known;                             /* disk, epoch and gen are valid */
	char notice[ELOG_MSG_MAX];             /* for elog_notice() */
	struct vdec *vd;                       /* to lay compressed values out again */

	pthread_mutex_t mu;
	/* Under mu. */
	const struct codec *codec; /* of the segments it starts */
	struct venc *ve;           /* encodes values for their segment's codec */
	uint32_t dict_new;         /* the dictionary of segments it starts */
	struct training tr;
	struct batch pending, spare;
	int flushing;
	uint64_t appended; /* records appended through this handle */
	uint64_t written;  /* of those, the ones durable */
	uint32_t done;     /* flushes finished: a futex word (sync_to()) */
	/* Gathering (see gather()): threads now in elog_sync() (atomic, as
	 * written and done); calls of elog_sync() since the last leader took
	 * its batch; how many the next batch should wait for, and how long
	 * the last flush took. */
	unsigned nsync, arrived, last_waiters;
	int gathering;
	int64_t flush_ns;
	pthread_cond_t gather;
	uint64_t durable; /* the log's durable end after our last batch */
	int failed;       /* the error that stopped the writer, or 0 */
	int holes_marked; /* this handle wrote FN_COPY_LAST */
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
	b->holes = 0;
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
	free(b->rec);
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

/* A record of a batch that takes the next offset, not one of its own. */
#define OFF_NEXT UINT64_MAX

/* Lay one record out at the end of b, from b's end tail: roll when it
 * would overfill a segment holding any, encode its value for the
 * segment's codec, add an index entry when one is due.  It gets the next
 * offset, or want (elog_append_at()), which must not be below it: the
 * offsets between them are left out, a hole like compaction's.  new_flags
 * are the header flags of a segment it starts.  Called with the mutex
 * held. */
static int place(elog *w, struct batch *b, const struct elog_record *rec, uint32_t new_flags,
                 uint64_t *out, uint64_t want)
{
	struct tail *t = &b->end;
	size_t size = elog__rec_size(rec->key_len,
	                             elog__codec_value_max(new_flags, rec->value_len));
	char why[ELOG_MSG_MAX];
	int err;

	if (want != OFF_NEXT && want < t->next)
		return elog__errmsg_set(w->msg, ELOG_TAKEN,
		                        "offset %llu is taken: the log holds offsets up to %llu",
		                        (unsigned long long)want, (unsigned long long)t->next - 1);
	if ((want != OFF_NEXT ? want : t->next) >= ELOG_OFFSET_MAX)
		return elog__errmsg_set(w->msg, ELOG_INVALID,
		                        "offset %llu is out of range: offsets stay below %llu "
		                        "(ELOG_OFFSET_MAX)",
		                        (unsigned long long)(want != OFF_NEXT ? want : t->next),
		                        (unsigned long long)ELOG_OFFSET_MAX);

	/* A record larger than a whole segment gets one of its own. */
	if (t->size > SEG_HDR && t->size + size > w->set.segment_bytes)
		tail_new_segment(t, new_flags);
	struct elog_record stored = *rec;
	stored.offset = want != OFF_NEXT ? want : t->next;
	/* The segment's codec, which may not be the settings' (a segment
	 * started before elog-retain --set compress=...): its records keep
	 * it. */
	err = elog__venc_value(w->ve, w->dfd, t->flags, rec->value, rec->value_len, &stored.value,
	                       &stored.value_len, why);
	if (err == ELOG_UNSUPPORTED)
		return elog__errmsg_set(w->msg, err, "segment %020llu is %s",
		                        (unsigned long long)t->base, why);
	if (err)
		return elog__errmsg_set(w->msg, err, "%s", why);
	if (stored.value_len > ELOG_MAX_RECORD - REC_FIXED - rec->key_len)
		return elog__errmsg_set(w->msg, ELOG_TOOBIG,
		                        "record of %zu bytes is larger than the maximum of %u",
		                        rec->key_len + stored.value_len,
		                        ELOG_MAX_RECORD - REC_FIXED);
	size = elog__rec_size(stored.key_len, stored.value_len);
	/* Buffers start small (a one-shot append writes one record) and
	 * double as batches need; a batch reuses its buffers, so a writer
	 * that runs grows them once. */
	struct chunk *c = batch_chunk(b, t->base, t->flags);
	if (!c || elog__buf_grow(&c->data, &c->cap, c->len + size, 4096) ||
	    elog__buf_grow(&c->idx, &c->icap, c->ilen + IDX_ENTRY, 1024)) {
		if (c && c->len == 0 && c->ilen == 0)
			b->n--; /* drop the chunk just added */
		return elog__errmsg_set(w->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	}
	if (b->nrec == b->reccap) {
		size_t cap = b->reccap ? 2 * b->reccap : 64;
		struct placed *nr = realloc(b->rec, cap * sizeof *nr);
		if (!nr) {
			if (c->len == 0 && c->ilen == 0)
				b->n--;
			return elog__errmsg_set(w->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
		}
		b->rec = nr;
		b->reccap = cap;
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
	b->holes |= stored.offset != t->next;
	t->next = stored.offset + 1;
	b->bytes += size;
	b->rec[b->nrec++] = (struct placed){ out, stored.offset, want };
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
			if ((err = elog__rec_decode(c->data + pos, c->len - pos, &rec, &size)) !=
			    0) {
				err = elog__errmsg_set(w->msg, EIO,
				                       "internal error: a pending record "
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
				err = place(w, &nb, &rec,
				            k >= split ? new_segment_flags(w) : pre_flags,
				            b->rec[k].out, b->rec[k].want);
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

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Record in LOCK's sync record which, whose guard the caller holds, that
 * this handle is about to fdatasync its log, making the records below
 * cover durable, for others too (elog(5), LOCK). */
static int sync_begin(elog *w, int which, uint64_t cover, struct sync_rec *r)
{
	int64_t now = mono_ns();
	*r = (struct sync_rec){ .valid = 1,
		                .status = SYNC_ST_PENDING,
		                .seq = (uint64_t)now,
		                .pid = w->pid,
		                .t_ns = (uint64_t)now,
		                .cover = cover };
	memcpy(r->boot, w->boot, sizeof r->boot);
	return elog__sync_rec_write(w->lockfd, which, r);
}

/* And its outcome: failed is the call's errno value, or 0.  A record that
 * cannot be written stays pending, which counts as failed once the guard
 * is released: so does the sync, for this handle too. */
static int sync_end(elog *w, int which, struct sync_rec *r, int failed)
{
	r->status = failed ? SYNC_ST_FAILED : SYNC_ST_OK;
	r->seq = (uint64_t)mono_ns();
	int err = elog__sync_rec_write(w->lockfd, which, r);
	return failed ? failed : err;
}

/* An fdatasync of fd, recorded in which: 0, or an errno value. */
static int sync_recorded(elog *w, int fd, int which, uint64_t cover)
{
	struct sync_rec r;
	int err = sync_begin(w, which, cover, &r);
	if (err)
		return err;
	int64_t t0 = mono_ns();
	int failed = fdatasync(fd) < 0 ? errno : 0;
	w->sync_ns = mono_ns() - t0;
	return sync_end(w, which, &r, failed);
}

/* How long a sync of the slot's holder may stay pending before a writer
 * that cannot vouch for it treats it as failed (writer.h): its holder is
 * stopped (a signal, a frozen unit, a debugger) or the disk hangs.  Failed
 * costs a cut back to the watermark, which every writer whose records go
 * writes again; a second of others' batches is what it saves. */
int64_t elog__sync_stall_ns = 1000000000LL;

static void close_segment(elog *w)
{
	if (w->segfd >= 0)
		close(w->segfd);
	if (w->idxfd >= 0)
		close(w->idxfd);
	w->segfd = w->idxfd = -1;
}

/* The tail a clean state of LOCK records: open its segment when it is not
 * the open one, and check that the files agree with it (their sizes, the
 * segment still linked).  No record is read: the state carries the index
 * builder too, so it holds whatever index interval the writer that wrote
 * it was started with.  ELOG_CORRUPT (no message) when the files
 * disagree: then recover. */
static int tail_load(elog *w, const struct lock_state *ls)
{
	char name[NAME_MAX_LOCAL];
	struct stat st;
	uint32_t flags;
	if (ls->size < SEG_HDR || ls->next < ls->base || ls->idx < IDX_HDR ||
	    (ls->idx - IDX_HDR) % IDX_ENTRY != 0)
		return ELOG_CORRUPT;
	if (w->segfd < 0 || ls->base != w->seg_base) {
		close_segment(w);
		if (elog__seg_open(w->dfd, ls->base, O_RDWR, &w->segfd, &flags, &st, NULL) != 0)
			return ELOG_CORRUPT;
		w->seg_open_ns = mono_ns();
		elog__seg_name(name, ls->base, IDX_EXT);
		if ((w->idxfd = elog__fs_openat(w->dfd, name, O_RDWR, 0)) < 0 || flags != ls->flags)
			return ELOG_CORRUPT;
		w->seg_base = ls->base;
	} else if (fstat(w->segfd, &st) < 0 || w->disk.flags != ls->flags) {
		return ELOG_CORRUPT;
	}
	if (st.st_nlink == 0 || (uint64_t)st.st_size != ls->size || fstat(w->idxfd, &st) < 0 ||
	    st.st_nlink == 0 || (uint64_t)st.st_size != ls->idx)
		return ELOG_CORRUPT;
	w->seg_size = ls->size;
	w->idx_size = ls->idx;
	w->disk = (struct tail){ ls->next,
		                 ls->base,
		                 ls->size,
		                 ls->flags,
		                 { .last_pos = ls->ixpos,
		                   .ts_max = ls->ixts,
		                   .ts_min = ls->ixmin,
		                   .span_min = ls->ixlo,
		                   .span_max = ls->ixhi,
		                   .any = ls->ixany != 0 } };
	return 0;
}

/* At open, a clean state is checked against the files once more, so that
 * a damaged tail is refused at open rather than written after: the records
 * after the index's last entry must be intact and end at the recorded
 * tail, and the watermark must not pass it.  ELOG_CORRUPT (no message)
 * when not: then recover, which refuses damage below the watermark. */
static int tail_verify(elog *w)
{
	struct watermark wm;
	struct scan s;
	struct elog_record rec;
	uint64_t at;
	int any = 0, err;
	const struct tail *t = &w->disk;
	if (elog__wm_read(w->wmfd, &wm) != 0 || wm.segment_base > t->base ||
	    wm.durable_end > t->next || (wm.segment_base == t->base && wm.segment_bytes > t->size))
		return ELOG_CORRUPT;
	/* The index's last entry: of the version written, intact, and
	 * naming the record the state's builder says it does. */
	unsigned char hdr[IDX_HDR], e[IDX_ENTRY];
	const struct idx_layout *lay;
	struct idx_entry named = { 0 };
	size_t got;
	uint64_t from = SEG_HDR;
	if (t->ib.any) {
		if (w->idx_size < IDX_HDR + IDX_ENTRY ||
		    elog__fs_pread_full(w->idxfd, hdr, IDX_HDR, 0, &got) != 0 ||
		    elog__idx_header_check(hdr, got, &lay) != 0 || lay->version != IDX_VERSION ||
		    elog__fs_pread_full(w->idxfd, e, IDX_ENTRY, (off_t)(w->idx_size - IDX_ENTRY),
		                        &got) != 0 ||
		    got != IDX_ENTRY ||
		    elog__idx_entry_check(e, lay, t->base, t->size, NULL, &named) !=
		            IDX_FAULT_NONE ||
		    named.pos != t->ib.last_pos)
			return ELOG_CORRUPT;
		from = t->ib.last_pos;
	}
	if (from < SEG_HDR || from > t->size ||
	    elog__scan_init(&s, w->segfd, t->base, from, t->size) != 0)
		return ELOG_CORRUPT;
	/* The valid part from that entry's record on (the one tail rule,
	 * elog__seg_tail_next()) must end at the recorded tail; its records
	 * make the builder's span, and with the entry's times, the
	 * segment's. */
	struct seg_tail end = { .next = t->ib.any ? named.offset : t->base, .end = from };
	int64_t lo = IDX_SPAN_EMPTY_MIN, hi = IDX_SPAN_EMPTY_MAX;
	while ((err = elog__seg_tail_next(&s, &end, &rec, &at)) == 0) {
		if (!any && t->ib.any && rec.offset != named.offset)
			break;
		any = 1;
		lo = rec.ts_ms < lo ? rec.ts_ms : lo;
		hi = rec.ts_ms > hi ? rec.ts_ms : hi;
	}
	elog__scan_free(&s);
	if (err != ELOG_END || end.why != TAIL_WHOLE || end.next != t->next || (!any && t->ib.any))
		return ELOG_CORRUPT;
	if (t->ib.any && (lo != t->ib.span_min || hi != t->ib.span_max ||
	                  t->ib.ts_max != (hi > named.ts_max ? hi : named.ts_max) ||
	                  t->ib.ts_min != (lo < named.ts_min ? lo : named.ts_min)))
		return ELOG_CORRUPT;
	return 0;
}

static int sync_failed(elog *w, uint64_t base, int e);

/* The tail after a crash, a dead holder or a failed sync: recover the
 * active segment as on open.  When sick, everything past the watermark
 * is cut: a writer's fdatasync failed, and the kernel may have dropped
 * pages that still read back from its cache. */
static int tail_recover(elog *w, int sick)
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
		                        wm.durable_end
		                                ? ", but the watermark says records are durable"
		                                : "");
	}
	uint64_t active = sl.base[sl.n - 1];
	/* Closed segments and their indexes were synced before the next
	 * segment was made; the one a crash may have caught at its roll is
	 * the newest closed one. */
	err = sl.n > 1 ? elog__recover_index(w->dfd, sl.base[sl.n - 2], w->set.index_interval,
	                                     w->msg)
	               : 0;
	elog__seglist_free(&sl);
	if (err)
		return err;
	/* Recovery syncs what it keeps: a sync like any other. */
	struct sync_rec sr;
	int64_t opened = mono_ns();
	if ((err = sync_begin(w, SYNC_BY_LOCK, wm.durable_end, &sr)) != 0)
		return elog__errmsg_set(w->msg, err, "%s: %s", FN_LOCK, elog_strerror(err));
	err = elog__recover_active(w->dfd, &wm, active, &w->set, new_segment_flags(w), sick, &rc,
	                           w->msg);
	int rec_err = sync_end(w, SYNC_BY_LOCK, &sr, rc.sync_failed);
	if (!err && rec_err)
		err = rc.sync_failed = rec_err;
	if (err) {
		if (rc.segfd >= 0)
			close(rc.segfd);
		if (rc.idxfd >= 0)
			close(rc.idxfd);
		elog__idx_free(&rc.ix);
		/* Its sync of the bytes it kept failed: they may be dropped
		 * and still read back, so the next holder must cut them. */
		if (rc.sync_failed)
			return sync_failed(w, active, rc.sync_failed);
		return err;
	}
	if (sick && rc.cut)
		snprintf(w->notice, sizeof w->notice,
		         "a writer's fdatasync failed: the records after offset %llu, which "
		         "were never acknowledged, were cut (%llu bytes)",
		         (unsigned long long)rc.next, (unsigned long long)(rc.file_size - rc.size));
	w->segfd = rc.segfd;
	w->seg_open_ns = opened;
	w->idxfd = rc.idxfd;
	w->seg_base = active;
	w->seg_size = rc.size;
	w->idx_size = rc.idx_size;
	w->disk = (struct tail){ rc.next, active, rc.size, rc.flags, rc.ib };
	elog__idx_free(&rc.ix);

	/* Everything kept is durable now (recover_active synced it), and
	 * so is its name: the holder that died or failed may have created
	 * the active segment and not lived to sync the directory (or failed
	 * to), and records acknowledged in it must not vanish with it. */
	if ((err = elog__fs_fsync_dir(w->dfd)) != 0)
		return elog__errmsg_set(w->msg, err, "fsync of the log directory: %s",
		                        elog_strerror(err));
	struct watermark now = { rc.next, active, rc.size };
	if (memcmp(&now, &wm, sizeof now) != 0) {
		if ((err = elog__wm_write(w->wmfd, &now)) != 0)
			return elog__errmsg_set(w->msg, err, "%s: %s", FN_WATERMARK,
			                        elog_strerror(err));
		__atomic_store_n(&w->pub_owed, 1, __ATOMIC_SEQ_CST);
	}
	if (rc.next > w->durable)
		w->durable = rc.next;
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

/* Write LOCK's state: the handle's epoch, generation gen, and the tail t
 * with the open index's length. */
static int state_write(elog *w, uint64_t gen, unsigned busy, const struct tail *t)
{
	struct lock_state ls = { .valid = 1,
		                 .epoch = w->epoch,
		                 .gen = gen,
		                 .busy = busy,
		                 .pid = w->pid,
		                 .next = t->next,
		                 .base = t->base,
		                 .size = t->size,
		                 .flags = t->flags,
		                 .idx = w->idx_size,
		                 .ixpos = t->ib.last_pos,
		                 .ixts = t->ib.ts_max,
		                 .ixmin = t->ib.ts_min,
		                 .ixlo = t->ib.span_min,
		                 .ixhi = t->ib.span_max,
		                 .ixany = t->ib.any ? 1u : 0u,
		                 .hseq = w->hseq };
	memcpy(ls.boot, w->boot, sizeof ls.boot);
	int err = elog__lock_state_write(w->lockfd, &ls);
	if (err)
		return elog__errmsg_set(w->msg, err, "%s: %s", FN_LOCK, elog_strerror(err));
	w->seen[0] = t->next;
	w->seen[1] = t->base;
	w->seen[2] = t->size;
	return 0;
}

/* A fresh epoch: random and never 0, so that nothing a writer remembers
 * from before a reset can match the state after it. */
static uint64_t epoch_new(void)
{
	uint64_t e = 0;
	while (e == 0 && elog__fs_random(&e, sizeof e) == 0)
		;
	if (e == 0) /* no randomness: time and pid make a poor but changing one */
		e = ((uint64_t)elog__fs_now_ms() << 20) ^ (uint64_t)getpid() ^ 1;
	return e;
}

/* 1 when ls is a state of this boot (or, without a boot id, one written
 * since this handle first found the tail). */
static int state_ours(const elog *w, const struct lock_state *ls)
{
	return ls->valid &&
	       (w->have_boot ? memcmp(ls->boot, w->boot, sizeof ls->boot) == 0 : w->known);
}

/* 1 when the files agree with the tail this handle recorded: its segment
 * still linked and of that length, and no segment after it.  A state that
 * reads as the one the handle left, but was written back from an old copy
 * of LOCK, then still cannot make it write over another's records. */
static int files_as_seen(elog *w)
{
	char name[NAME_MAX_LOCAL];
	struct stat st;
	if (w->segfd < 0 || w->seg_base != w->seen[1] || fstat(w->segfd, &st) < 0 ||
	    st.st_nlink == 0 || (uint64_t)st.st_size != w->seen[2])
		return 0;
	elog__seg_name(name, w->seen[0], SEG_EXT);
	return w->seen[0] == w->seen[1] ||
	       (fstatat(w->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT);
}

/* With the batch lock held: make w->disk the log's tail.  *moved says
 * whether it changed since this handle last looked. */
static int tail_sync(elog *w, int *moved)
{
	struct lock_state ls;
	int err;
	/* Sick: a writer's sync failed, or its record is pending with no one
	 * to finish it (elog__lock_sick()), or the slot's holder was found
	 * stopped past the bound.  Cut back, and note the slot's record as
	 * dealt with (hseq), so that it costs one cut, not one a batch. */
	struct sync_rec slot;
	int sick = elog__lock_sick(w->lockfd, &ls, w->boot, &slot);
	int stalled = w->stall_seq && slot.valid && slot.seq == w->stall_seq;
	sick |= stalled;
	w->stall_seq = 0;
	w->hseq = ls.hseq; /* 0 when !ls.valid: a state not read is all 0 */
	if (stalled ||
	    elog__sync_verdict(w->lockfd, SYNC_BY_SLOT, &slot, w->boot, w->hseq) == SYNC_FAILED)
		w->hseq = slot.seq;
	int clean = state_ours(w, &ls) && !ls.busy && !sick;
	*moved = 1;
	if (clean && w->known && ls.epoch == w->epoch && ls.gen == w->gen &&
	    ls.next == w->seen[0] && ls.base == w->seen[1] && ls.size == w->seen[2] &&
	    files_as_seen(w)) {
		*moved = 0;
		return 0;
	}
	int opening = !w->known && !w->gen;
	w->known = 0;
	if (clean && tail_load(w, &ls) == 0 && (!opening || tail_verify(w) == 0)) {
		w->epoch = ls.epoch;
		w->gen = ls.gen;
		w->seen[0] = ls.next;
		w->seen[1] = ls.base;
		w->seen[2] = ls.size;
		goto known;
	}
	/* A holder died mid-batch, a sync failed, the state is from another
	 * boot (a crash or power loss may have kept any part of what was
	 * written), it disagrees with the files, or it is not one this code
	 * wrote: recover.  The state says so first, under a new epoch (and
	 * sick, with hseq, when a cut back is due), so that a recovery that
	 * cuts and then fails leaves no writer in flight a state that still
	 * vouches for what it cut. */
	if (ls.valid) {
		struct lock_state mark = ls;
		mark.epoch = epoch_new();
		mark.busy = 1;
		mark.sick = sick ? 1u : 0u;
		mark.hseq = w->hseq;
		if ((err = elog__lock_state_write(w->lockfd, &mark)) != 0)
			return elog__errmsg_set(w->msg, err, "%s: %s", FN_LOCK, elog_strerror(err));
	}
	if ((err = tail_recover(w, sick)) != 0)
		return err;
	/* The epoch stays only when nothing at or below the recorded tail
	 * went (a dead holder's partial batch lies above it): in-flight
	 * writers' records are then still there. */
	if (!(state_ours(w, &ls) && !sick && w->disk.next >= ls.next && ls.epoch))
		w->epoch = epoch_new();
	else
		w->epoch = ls.epoch;
	uint64_t gen = ls.valid ? ls.gen + 1 : 1;
	if ((err = state_write(w, gen, 0, &w->disk)) != 0)
		return err;
	w->gen = gen;
known:
	w->known = 1;
	adopt_dict(w);
	return 0;
}

/* Release the batch lock, then wake the followers of a publication made
 * under it, if any: woken while it was still held, they took the
 * processor from its holder (two cores, eight writers), and every writer
 * waited longer for the lock.  The wake is a hint (lock.c). */
static void lock_give(elog *w)
{
	elog__lock_release_bell(w->lockfd, w->bell);
	if (__atomic_exchange_n(&w->pub_owed, 0, __ATOMIC_SEQ_CST))
		elog__bell_published(w->bell);
}

/* Take the batch lock, and check that it is still the log's; publish:
 * to publish a sync (see elog__lock_acquire_bell()). */
static int lock_take(elog *w, int publish)
{
	int err = elog__lock_acquire_bell(w->lockfd, w->bell, publish, w->wait_ms, w->msg);
	if (!err && (err = elog__lock_is_current(w->dfd, &w->lock_st, w->msg)) != 0)
		lock_give(w);
	return err;
}

/* ---- writing a batch ---- */

/* End the open segment with its seal, naming base as the next one, if
 * its version has seals (a segment of elog 0.2 goes on without).  Its
 * records end at the open size, and base is the offset after the last. */
static int seal_open_segment(elog *w, uint64_t base)
{
	unsigned char hdr[SEG_HDR];
	size_t got;
	int err = elog__fs_pread_full(w->segfd, hdr, SEG_HDR, 0, &got);
	if (!err && got < SEG_HDR)
		err = ELOG_CORRUPT;
	if (err || !elog__seg_header_sealed(hdr))
		return err;
	struct seal s = elog__seal_of(w->set.id, base, base, w->seg_size);
	return elog__seal_write(w->segfd, w->seg_size, &s);
}

/* Make the open segment the one based at base: seal the old one, sync it
 * and its index (so that closed segments and their indexes are durable:
 * only the active segment's index is rebuilt after a crash), then create
 * the new one.  A crash before the new one is linked leaves the seal at
 * the end of what is still the active segment, past its records: the
 * next writer's recovery cuts it like any torn tail. */
static int roll(elog *w, uint64_t base, uint32_t flags)
{
	char name[NAME_MAX_LOCAL];
	int err = 0;
	elog__seg_name(name, w->seg_base, SEG_EXT);
	if ((err = seal_open_segment(w, base)) != 0)
		return elog__errmsg_set(w->msg, err, "%s: writing its seal at byte %llu: %s", name,
		                        (unsigned long long)w->seg_size, elog_strerror(err));
	/* Recorded, the index's sync with the segment's: they cover other
	 * writers' records, and a closed segment's index is trusted, so a
	 * failure of either is a failed sync for the next holder, which
	 * rebuilds the index as it cuts back. */
	struct sync_rec r;
	if ((err = sync_begin(w, SYNC_BY_LOCK, base, &r)) != 0)
		return elog__errmsg_set(w->msg, err, "%s: %s", FN_LOCK, elog_strerror(err));
	int failed = fdatasync(w->segfd) < 0 ? errno : 0;
	if (!failed && fdatasync(w->idxfd) < 0) {
		failed = errno;
		elog__seg_name(name, w->seg_base, IDX_EXT);
	}
	if ((err = sync_end(w, SYNC_BY_LOCK, &r, failed)) != 0)
		return elog__errmsg_set(w->msg, err, "%s: fdatasync: %s", name, elog_strerror(err));
	close_segment(w);
	elog__seg_name(name, base, SEG_EXT);
	if ((err = elog__seg_create(w->dfd, base, flags, w->set.id, &w->segfd, &w->idxfd)) != 0)
		return elog__errmsg_set(w->msg, err, "%s: %s", name, elog_strerror(err));
	w->seg_open_ns = mono_ns();
	if ((err = elog__fs_fsync_dir(w->dfd)) != 0)
		return elog__errmsg_set(w->msg, err, "fsync of the log directory: %s",
		                        elog_strerror(err));
	w->seg_base = base;
	w->seg_size = SEG_HDR;
	w->idx_size = IDX_HDR;
	return 0;
}

/* Write b, with the batch lock held: one pwrite per segment it touches,
 * rolling as needed.  It is made durable after the lock is released. */
static int batch_write(elog *w, struct batch *b)
{
	char name[NAME_MAX_LOCAL];
	int err;
	for (size_t i = 0; i < b->n; i++) {
		struct chunk *c = &b->c[i];
		if (c->base != w->seg_base && (err = roll(w, c->base, c->flags)) != 0)
			return err;
		c->at = w->seg_size;
		if ((err = elog__fs_pwrite_all(w->segfd, c->data, c->len, (off_t)w->seg_size)) !=
		    0) {
			elog__seg_name(name, w->seg_base, SEG_EXT);
			return elog__errmsg_set(w->msg, err, "%s: write at byte %llu: %s", name,
			                        (unsigned long long)w->seg_size,
			                        elog_strerror(err));
		}
		w->seg_size += c->len;
		/* The index is derived data: it is written but never synced,
		 * and recovery or a reader copes with whatever survives. */
		if (c->ilen) {
			if ((err = elog__fs_pwrite_all(w->idxfd, c->idx, c->ilen,
			                               (off_t)w->idx_size)) != 0) {
				elog__seg_name(name, w->seg_base, IDX_EXT);
				return elog__errmsg_set(w->msg, err, "%s: %s", name,
				                        elog_strerror(err));
			}
			w->idx_size += c->ilen;
		}
	}
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

/* A compressed log's dictionary, trained from its first values whichever
 * writers appended them (elog(5), Compression; train.c), by the leader of
 * a batch after which the log may hold a set: under the batch lock, so
 * that no two writers make one with the same id.  Its segment starts with
 * the record that completed the set (b->split), or the batch's first.
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
		if (elog__venc_use_dict(w->ve, w->dfd, SEG_FLAGS(w->codec->id, latest), w->msg) ==
		    0)
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

/* ---- making a written batch durable ----
 *
 * elog(5), LOCK, "Writing a batch".  A batch is written under the batch
 * lock and made durable outside it, so that writers in several processes
 * share their syncs: once its pwrite returned, a batch is durable when an
 * fdatasync of its segment that started afterwards has completed, whoever
 * called it (Linux writes back every dirty page of the inode).  It is
 * acknowledged only if LOCK's epoch is still the one it was written under,
 * which proves that nothing at or below its records was removed since (a
 * recovery's cut, a repair, a failed sync); else the slow path
 * (batch_recheck()).  A writer alone keeps the lock across its sync and
 * publication (flush_batch()): taking it again would cost it more system
 * calls than its sync, and no one else's turn.
 */

/* 1 when LOCK's state, read without the lock, is of epoch e and not sick.
 * A state being rewritten reads as torn: a few more reads, then 0 (the
 * slow path, which reads under the lock, decides). */
static int epoch_holds(elog *w, uint64_t e, struct lock_state *ls)
{
	for (int i = 0; i < 8; i++) {
		elog__lock_state_read(w->lockfd, ls);
		if (ls->valid)
			return ls->epoch == e && !ls->sick;
	}
	return 0;
}

static void note_durable(elog *w, uint64_t end)
{
	pthread_mutex_lock(&w->mu);
	if (end > w->durable)
		w->durable = end;
	pthread_mutex_unlock(&w->mu);
}

/* Under the batch lock: raise the watermark to cover, never lower it.
 * Its followers are woken when the lock is released (lock_give()). */
static int publish(elog *w, const struct watermark *cover)
{
	struct watermark wm;
	int err = 0;
	if (elog__wm_read(w->wmfd, &wm) != 0 || cover->durable_end > wm.durable_end) {
		if ((err = elog__wm_write(w->wmfd, cover)) == 0)
			__atomic_store_n(&w->pub_owed, 1, __ATOMIC_SEQ_CST);
	} else {
		cover = &wm;
	}
	if (err)
		return elog__errmsg_set(w->msg, err, "%s: %s", FN_WATERMARK, elog_strerror(err));
	note_durable(w, cover->durable_end);
	return 0;
}

/* An fdatasync of the segment based at base failed with e: the kernel may
 * have dropped the pages, which still read back from its cache.  Nothing
 * of the batch is acknowledged.  The sync record already says so (or
 * stays pending, which says the same once its guard is released): the
 * next holder of the batch lock cuts back to the watermark. */
static int sync_failed(elog *w, uint64_t base, int e)
{
	char name[NAME_MAX_LOCAL];
	elog__seg_name(name, base, SEG_EXT);
	w->known = 0;
	return elog__errmsg_set(w->msg, e,
	                        "%s: fdatasync: %s (nothing of this batch was "
	                        "acknowledged)",
	                        name, elog_strerror(e));
}

/* What publishing b, written, says: its end, in its last chunk's segment. */
static struct watermark batch_mark(const struct batch *b)
{
	const struct chunk *last = &b->c[b->n - 1];
	return (struct watermark){ b->end.next, last->base, last->at + last->len };
}

/* 1 when every chunk of b is still in the file of its segment's name,
 * byte for byte where it was written. */
static int batch_there(elog *w, const struct batch *b)
{
	unsigned char *buf = NULL;
	size_t cap = 0, got;
	int there = 1;
	for (size_t i = 0; i < b->n && there; i++) {
		const struct chunk *c = &b->c[i];
		char name[NAME_MAX_LOCAL];
		elog__seg_name(name, c->base, SEG_EXT);
		int fd = elog__fs_openat(w->dfd, name, O_RDONLY, 0);
		there = fd >= 0 && elog__buf_grow(&buf, &cap, c->len, 64 * 1024) == 0 &&
		        elog__fs_pread_full(fd, buf, c->len, (off_t)c->at, &got) == 0 &&
		        got == c->len && memcmp(buf, c->data, c->len) == 0;
		if (fd >= 0)
			close(fd);
	}
	free(buf);
	return there;
}

static int write_locked(elog *w, struct batch *b, int moved);

/* With the batch lock held (not the mutex): sync fd, recorded in the
 * batch lock's record, and publish mine, which it covers, unless the
 * slot's holder runs or ran a sync that may have taken a writeback error
 * this handle's description will never report, not having been open
 * before that sync was recorded (Linux reports an error to every
 * description open when it happens, or opened before anyone saw it).
 * *held: 0 published; HELD_WAIT not yet (that sync runs, within the
 * bound); HELD_CUT never (it failed, or its holder is stopped past the
 * bound, w->stall_seq): cut back first. */
#define HELD_WAIT 1
#define HELD_CUT 2
static int sync_publish(elog *w, int fd, const struct watermark *mine, int *held)
{
	struct sync_rec r;
	*held = 0;
	int failed = sync_recorded(w, fd, SYNC_BY_LOCK, mine->durable_end);
	if (failed)
		return sync_failed(w, mine->segment_base, failed);
	elog__sync_rec_read(w->lockfd, SYNC_BY_SLOT, &r);
	int v = elog__sync_verdict(w->lockfd, SYNC_BY_SLOT, &r, w->boot, w->hseq);
	if (v == SYNC_CLEAR || (v == SYNC_RUNNING && (int64_t)r.t_ns > w->seg_open_ns))
		return publish(w, mine);
	int stalled = v == SYNC_RUNNING && mono_ns() - (int64_t)r.t_ns >= elog__sync_stall_ns;
	*held = v == SYNC_RUNNING && !stalled ? HELD_WAIT : HELD_CUT;
	if (stalled)
		w->stall_seq = r.seq;
	return 0;
}

/* The slow path, with the batch lock and the mutex held: LOCK's epoch
 * moved since b was written, or a sync failed.  Find the tail (recovering
 * and cutting back if need be); when b's bytes are no longer there, write
 * them again; then sync and publish them.  *wait: not published (the
 * slot's holder runs a sync this handle cannot vouch for, or its sync
 * failed or stalled): try again. */
static int batch_recheck(elog *w, struct batch *b, int *wait)
{
	int moved, err;
	*wait = 0;
	if ((err = tail_sync(w, &moved)) != 0)
		return err;
	/* Gone: written again, but only when the log now ends at or below
	 * its first offset, so that none of its records can still be in it
	 * (recovery, repair and salvage never move a record to another
	 * offset; compaction moves the bytes of a closed segment). */
	if (!batch_there(w, b)) {
		if (b->nrec && w->disk.next > b->rec[0].off)
			return elog__errmsg_set(
			        w->msg, ELOG_FAILED,
			        "records %llu to %llu were removed before they were durable (a "
			        "recovery after another writer's failed sync, or a repair); they "
			        "were not acknowledged: append them again",
			        (unsigned long long)b->rec[0].off,
			        (unsigned long long)b->end.next - 1);
		if ((err = write_locked(w, b, 1)) != 0)
			return err;
	}
	struct watermark mine = batch_mark(b);
	/* Any descriptor syncs the inode: the open one when it is b's. */
	char name[NAME_MAX_LOCAL];
	elog__seg_name(name, mine.segment_base, SEG_EXT);
	int fd = w->seg_base == mine.segment_base && w->segfd >= 0
	                 ? w->segfd
	                 : elog__fs_openat(w->dfd, name, O_RDONLY, 0);
	if (fd < 0)
		return elog__errmsg_set(w->msg, errno, "%s: %s", name, elog_strerror(errno));
	pthread_mutex_unlock(&w->mu);
	int held;
	err = sync_publish(w, fd, &mine, &held);
	pthread_mutex_lock(&w->mu);
	if (fd != w->segfd)
		close(fd);
	/* Not published because the slot's sync failed or stalled past the
	 * bound: not acknowledged either.  The next round cuts back first
	 * (tail_sync()), then writes and syncs the batch again. */
	*wait = held != 0;
	return err;
}

/* Wait, at most ms milliseconds, for the watermark to be rewritten:
 * inotify where it can be had, else a short sleep.  The first call only
 * makes the watch, after the caller's first look at the watermark and
 * before its next, so no rewrite between that look and a wait is missed. */
static void wm_wait(elog *w, int first, int ms)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	if (w->inofd == -2) {
		snprintf(buf, sizeof buf, "/proc/self/fd/%d/%s", w->dfd, FN_WATERMARK);
		w->inofd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (w->inofd >= 0 && inotify_add_watch(w->inofd, buf, IN_MODIFY) < 0) {
			close(w->inofd);
			w->inofd = -1;
		}
	}
	if (first)
		return;
	if (w->inofd >= 0) {
		struct pollfd p = { w->inofd, POLLIN, 0 };
		/* Events of one file carry no name: one read takes them all,
		 * unless it filled the buffer (any left wake the next wait at
		 * once, which only looks again). */
		if (poll(&p, 1, ms) > 0)
			while (read(w->inofd, buf, sizeof buf) > (ssize_t)sizeof buf - 64)
				;
	} else {
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
}

/* How long a handle follows another's sync before it syncs itself: four
 * times its own last sync, within bounds, so that a leader that was
 * stopped or killed costs its followers little.  Not twice: a batch
 * written while one sync runs waits for that one and the next, and sync
 * times vary.  With syncs of about a millisecond (under half a one, the
 * 2 ms floor leaves room either way), twice let 13% of the batches of 8
 * writer processes time out and sync on their own (41% of the syncs; a
 * sync for 3.2 records), four times 0.4% (a sync for 5.3), and they
 * acknowledged 5 to 27% more (4 processes: 12 to 20%). */
static int follow_ms(const elog *w)
{
	int64_t ms = 4 * w->sync_ns / 1000000;
	return ms < 2 ? 2 : ms > 100 ? 100 : (int)ms;
}

/* Release a sync slot, and the cover it announced (lock.c). */
static void slot_drop(elog *w, int slot)
{
	if (slot < 0)
		return;
	elog__bell_cover(w->bell, 0);
	elog__lock_slot_release(w->lockfd, slot);
}

/* A leader with the slot, before it looks at the tail to sync, waits for
 * the writers the last publication acknowledged to write their next
 * batches (lock.c), an eighth of its last sync at most (nor 500 us): else
 * they write while its sync runs, and wait for the next one.  The disk is
 * idle meanwhile, but each sync covers more.  With syncs of about a
 * millisecond, 8 writer processes acknowledged about 20% more, 4 processes
 * 11 to 22% more and 2 about as many (alternating rounds against the same
 * build without it). */
static void gather_batches(elog *w)
{
	int64_t us = w->sync_ns / 8000;
	elog__bell_gather(w->bell, us < 500 ? us : 500);
}

/* Wait for the watermark to pass mine, or for the time to lead: 1 when
 * it passed under epoch e (b is durable), 0 when this handle must sync,
 * with *slot taken (-1: without it, under the batch lock) and *moved set
 * when the epoch moved.  A handle that finds a free sync slot leads; one
 * that finds none follows: a sync that started after its write will
 * cover it, and it leads itself after a while. */
static int follow(elog *w, const struct watermark *mine, uint64_t e, int *slot, int *moved)
{
	struct watermark wm;
	struct lock_state ls;
	int64_t follow_until = mono_ns() / 1000000 + follow_ms(w);
	*slot = -1;
	for (int first = 1;; first = 0) {
		/* (Sampled first: a publication after it ends the wait.) */
		uint32_t pubs = elog__bell_pubs(w->bell);
		/* Covered by another's sync and publication already? */
		if (elog__wm_read(w->wmfd, &wm) == 0 && wm.durable_end >= mine->durable_end) {
			if (epoch_holds(w, e, &ls)) {
				note_durable(w, wm.durable_end);
				return 1;
			}
			*moved = 1;
			return 0;
		}
		/* A leader reads the state once, below.  A follower does not
		 * look at the epoch until the watermark passes its batch: a
		 * batch that was cut is found then, or when it leads. */
		uint64_t cover_end = elog__bell_covering(w->bell);
		int covered = cover_end >= mine->durable_end;
		if (!covered && (*slot = elog__lock_slot_take(w->lockfd)) >= 0)
			return 0;
		/* The slot is held by the leader that was waited out last
		 * time, announcing the same cover: stopped in its sync
		 * (SIGSTOP, a frozen unit, a debugger).  Sync under the
		 * batch lock, now rather than after another wait. */
		if (!covered && w->stalled && cover_end == w->stalled_cover)
			return 0;
		int64_t left = follow_until - mono_ns() / 1000000;
		if (left <= 0) {
			if (covered) /* a leader that announced it is slow, or dead */
				*slot = elog__lock_slot_take(w->lockfd);
			w->stalled = *slot < 0 && w->bell;
			w->stalled_cover = cover_end;
			return 0;
		}
		if (w->bell) {
			elog__bell_follow(w->bell, pubs,
			                  1000 * (left < follow_ms(w) ? left : follow_ms(w)));
			continue;
		}
		wm_wait(w, first, follow_ms(w));
	}
}

/* Make b, written under epoch e, durable and published.  Called without
 * the mutex or the batch lock.  A leader (with the slot) records its sync
 * in the slot's record, syncs the tail it reads, and publishes under the
 * batch lock; a handle without the slot syncs under the batch lock,
 * recorded in the lock's record.  Either publishes only when the epoch
 * holds and no sync record says a sync failed (else the slow path cuts
 * back and writes its records again). */
static int make_durable(elog *w, struct batch *b, uint64_t e)
{
	struct lock_state ls;
	struct sync_rec r;
	int err = 0, slot = -1, moved = 0, wait = 0;
	if (b->n == 0)
		return 0;
	struct watermark mine = batch_mark(b);
	for (;;) {
		if (follow(w, &mine, e, &slot, &moved))
			return 0;
		struct watermark cover = mine;
		if (slot >= 0) {
			w->stalled = 0;
			/* A record left pending or failed by the slot's last
			 * holder is cut back before it is overwritten. */
			elog__sync_rec_read(w->lockfd, SYNC_BY_SLOT, &r);
			elog__lock_state_read(w->lockfd, &ls);
			moved |= elog__sync_verdict(w->lockfd, SYNC_BY_SLOT, &r, w->boot,
			                            ls.hseq) != SYNC_CLEAR;
			if (!moved)
				gather_batches(w);
			/* What the sync covers: the complete tail recorded now,
			 * when it is in this segment (written before the sync
			 * starts). */
			if (!moved && !epoch_holds(w, e, &ls))
				moved = 1; /* the slow path syncs, if the bytes are there */
			else if (!moved && ls.base == mine.segment_base && ls.next >= mine.durable_end)
				cover = (struct watermark){ ls.next, ls.base, ls.size };
			if (!moved) {
				/* Followers whose batches it covers wait for it. */
				elog__bell_cover(w->bell, cover.durable_end);
				int failed = sync_recorded(w, w->segfd, SYNC_BY_SLOT,
				                           cover.durable_end);
				if (failed) {
					slot_drop(w, slot);
					return sync_failed(w, mine.segment_base, failed);
				}
			}
		}
		if ((err = lock_take(w, 1)) != 0) {
			slot_drop(w, slot);
			return err;
		}
		struct sync_rec slotrec;
		int sick = elog__lock_sick(w->lockfd, &ls, w->boot, &slotrec);
		w->hseq = ls.hseq;
		int clean = !moved && ls.valid && ls.epoch == e && !sick;
		if (clean && slot >= 0) {
			err = publish(w, &cover);
		} else if (clean) {
			int held;
			err = sync_publish(w, w->segfd, &mine, &held);
			wait = held == HELD_WAIT;
			clean = held != HELD_CUT;
		}
		if (!clean) {
			pthread_mutex_lock(&w->mu);
			err = batch_recheck(w, b, &wait);
			pthread_mutex_unlock(&w->mu);
			/* Written again: a later epoch, its own tail. */
			e = w->epoch;
			mine = batch_mark(b);
		}
		lock_give(w);
		slot_drop(w, slot);
		if (err || !wait)
			return err;
		/* The slot's holder runs a sync this handle cannot vouch for:
		 * wait for its outcome (or for it to pass the bound). */
		moved = 0;
		wait = 0;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
}

/* With the batch lock held, at open: records past the watermark that a
 * writer wrote completely but did not live to sync (it was killed after
 * its batch) are synced and published now, rather than left invisible
 * until the next batch.  Not when a sync record stands in the way: the
 * next batch's writer decides. */
static int publish_tail(elog *w)
{
	struct watermark wm = { 0 }, now = { w->disk.next, w->disk.base, w->disk.size };
	int held, unreadable = elog__wm_read(w->wmfd, &wm) != 0;
	w->durable = wm.durable_end > w->durable ? wm.durable_end : w->durable;
	if (unreadable || wm.durable_end >= w->disk.next)
		return 0;
	return sync_publish(w, w->segfd, &now, &held);
}

/* With the batch lock and the mutex held: lay b out from the log's tail
 * (moved: it moved since b was laid out), tell each record its offset,
 * and write it.  The mutex is released while the bytes are written. */
static int write_locked(elog *w, struct batch *b, int moved)
{
	int err;
	if (moved && !same_tail(&b->start, &w->disk) &&
	    (err = relayout(w, b, &w->disk, SIZE_MAX, new_segment_flags(w))) != 0)
		return err;
	/* The layout is final: tell each record its offset now, so that a
	 * caller whose sync fails can still tell which records it wrote. */
	for (size_t i = 0; i < b->nrec; i++)
		if (b->rec[i].out)
			*b->rec[i].out = b->rec[i].off;
	/* Holes a copy left tell elog_summary_read() that offsets are not
	 * dense (as compact.last does); a mark is information only. */
	if (b->holes && !w->holes_marked) {
		elog__lastrun_mark(w->dfd, FN_COPY_LAST, elog__fs_now_ms(), NULL, 0);
		w->holes_marked = 1;
	}
	uint64_t gen = w->gen + 1;
	struct tail before = w->disk;
	pthread_mutex_unlock(&w->mu);
	/* busy: bytes past the recorded tail (the one before this batch)
	 * may be partial until the state names the new one. */
	err = state_write(w, gen, 1, &before);
	if (!err)
		err = batch_write(w, b);
	if (!err)
		err = state_write(w, gen, 0, &b->end);
	pthread_mutex_lock(&w->mu);
	if (err) {
		w->known = 0;
		return err;
	}
	w->gen = gen;
	w->disk = b->end;
	elog__bell_written(w->bell);
	return 0;
}

/* The leader's work on batch b, with the mutex held on entry and exit:
 * take the batch lock, find the tail, lay b out again if the log moved,
 * write, release, then make it durable. */
static int flush_batch(elog *w, struct batch *b)
{
	int err, moved;
	pthread_mutex_unlock(&w->mu);
	err = lock_take(w, 0);
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
	}
	uint64_t epoch = w->epoch;
	if ((err = write_locked(w, b, 1)) != 0)
		goto out;
	/* Alone: no other writer wrote since this handle's last batch (the
	 * generation did not move), and none waits for the lock or syncs.
	 * Then sync and publish before releasing it, which spares taking it
	 * again to publish.  Writers taking turns keep releasing it first,
	 * so that the next one's batch is written while this one syncs. */
	int later = 1;
	if (!moved && b->n && elog__lock_quiet(w->lockfd, w->bell)) {
		/* Nothing can have removed its records since they were
		 * written: make them durable and published now, unless the
		 * slot's holder runs a sync this handle cannot vouch for, or
		 * one failed (then as make_durable() does after all). */
		struct watermark mine = { b->end.next, b->end.base, b->end.size };
		pthread_mutex_unlock(&w->mu);
		err = sync_publish(w, w->segfd, &mine, &later);
		pthread_mutex_lock(&w->mu);
		if (err)
			w->known = 0;
		if (err || !later)
			goto out;
	}
	lock_give(w);
	pthread_mutex_unlock(&w->mu);
	err = make_durable(w, b, epoch);
	pthread_mutex_lock(&w->mu);
	if (err)
		w->known = 0;
	return err;
out:
	lock_give(w);
	return err;
}

/* Before a leader takes the batch, it waits briefly for the threads the
 * last flush served to come back with their next record: woken together,
 * the first would otherwise lead a flush of its record alone while the
 * others are still appending.  They are counted by their calls of
 * elog_sync() since the last batch was taken, not by the threads in it: a
 * thread the last flush served is in it until it has run again.  It waits
 * no longer than a sixteenth of a flush (nor 500 us): the disk is idle
 * meanwhile, and the threads that come back last are the ones the
 * processors are slowest to run again.  On two cores, 8 threads
 * acknowledged 14% more (the median of 9 rounds; 3 to 36%), and 4 threads
 * 14 and 25% more, than when it waited up to half a flush for all of
 * them; the ones it did not wait for are in the next batch.
 * Called with the mutex held. */
static void gather(elog *w)
{
	if (w->last_waiters <= 1 || w->arrived >= w->last_waiters)
		return;
	int64_t wait = w->flush_ns / 16 < 500000 ? w->flush_ns / 16 : 500000;
	int64_t until = mono_ns() + wait;
	struct timespec dl = { (time_t)(until / 1000000000), (long)(until % 1000000000) };
	w->gathering = 1;
	while (w->arrived < w->last_waiters)
		if (pthread_cond_timedwait(&w->gather, &w->mu, &dl) != 0)
			break;
	w->gathering = 0;
}

/* Wake the threads waiting for a flush to finish (sync_to()). */
static void flushes_ring(elog *w)
{
	syscall(SYS_futex, &w->done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* Wait until the first `target` records appended through w are durable,
 * leading flushes as needed.  Called with the mutex held; returns with it
 * held, unless *unlocked says that it was released.  *wake is set when
 * the caller must wake the waiters (flushes_ring()) after it releases the
 * mutex.  A thread waits for a flush to finish without the mutex, on the
 * count of flushes finished, and leaves without taking the mutex again
 * when its records are durable: woken all at once, the waiters would
 * otherwise each wake only to sleep again on the mutex. */
static int sync_to(elog *w, uint64_t target, int *wake, int *unlocked)
{
	int rc = 0;
	*wake = *unlocked = 0;
	__atomic_add_fetch(&w->nsync, 1, __ATOMIC_SEQ_CST);
	/* The leader waits for all of them: waking it for each would only
	 * cost it a switch to see that some are still missing. */
	if (++w->arrived >= w->last_waiters && w->gathering)
		pthread_cond_signal(&w->gather);
	while (w->written < target) {
		if (w->failed) {
			rc = ELOG_FAILED;
			break;
		}
		if (w->flushing) {
			uint32_t seen = __atomic_load_n(&w->done, __ATOMIC_SEQ_CST);
			pthread_mutex_unlock(&w->mu);
			syscall(SYS_futex, &w->done, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
			if (__atomic_load_n(&w->written, __ATOMIC_SEQ_CST) >= target) {
				__atomic_sub_fetch(&w->nsync, 1, __ATOMIC_SEQ_CST);
				*unlocked = 1;
				return 0;
			}
			pthread_mutex_lock(&w->mu);
			continue;
		}
		/* Lead: take everything pending; later appends start a new
		 * batch that the next leader will write. */
		w->flushing = 1;
		gather(w);
		unsigned took = w->arrived;
		w->arrived = 0;
		struct batch b = w->pending;
		w->pending = w->spare;
		batch_reset(&w->pending, &b.end);
		int64_t t0 = mono_ns();
		int err = flush_batch(w, &b);
		int64_t t1 = mono_ns();
		w->flushing = 0;
		w->flush_ns = t1 - t0;
		/* Back for the next: the callers this batch served, and
		 * those that came meanwhile. */
		w->last_waiters = took + w->arrived;
		if (!err) {
			__atomic_store_n(&w->written, w->written + b.nrec, __ATOMIC_SEQ_CST);
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
		__atomic_add_fetch(&w->done, 1, __ATOMIC_SEQ_CST);
		/* Others in sync_to() may sleep (a thread that comes in later
		 * finds this flush finished): wake them, after the mutex
		 * when this one leaves. */
		if (__atomic_load_n(&w->nsync, __ATOMIC_SEQ_CST) <= 1)
			;
		else if (err || w->written >= target)
			*wake = 1;
		else
			flushes_ring(w);
		if (err) {
			rc = err; /* the leader learns why; others ELOG_FAILED */
			break;
		}
	}
	__atomic_sub_fetch(&w->nsync, 1, __ATOMIC_SEQ_CST);
	return rc;
}

int elog_sync(elog *w)
{
	int wake, unlocked;
	pthread_mutex_lock(&w->mu);
	int rc = sync_to(w, w->appended, &wake, &unlocked);
	if (!unlocked)
		pthread_mutex_unlock(&w->mu);
	if (wake)
		flushes_ring(w);
	return rc;
}

/* elog_append() and elog_append_at(): want is OFF_NEXT or the offset. */
static int append(elog *w, const struct elog_record *rec, uint64_t *offset, uint64_t want)
{
	if (rec->key_len > ELOG_MAX_KEY ||
	    rec->value_len > ELOG_MAX_RECORD - REC_FIXED - rec->key_len)
		return elog__errmsg_set(w->msg, ELOG_TOOBIG,
		                        "record of %zu bytes is larger than the maximum of %u",
		                        rec->key_len + rec->value_len, ELOG_MAX_RECORD - REC_FIXED);
	if ((rec->key_len && !rec->key) || (rec->value_len && !rec->value))
		return elog__errmsg_set(w->msg, ELOG_INVALID, "record with a NULL key or value");
	int err, wake = 0, unlocked = 0;

	pthread_mutex_lock(&w->mu);
	if (w->failed) {
		pthread_mutex_unlock(&w->mu);
		return ELOG_FAILED;
	}
	struct elog_record r = *rec;
	if (r.ts_ms == ELOG_TS_NOW)
		r.ts_ms = elog__fs_now_ms();
	if ((err = place(w, &w->pending, &r, new_segment_flags(w), offset, want)) != 0) {
		pthread_mutex_unlock(&w->mu);
		return err;
	}
	w->appended++;
	/* A full buffer is written at once: memory stays bounded, and a
	 * fast producer gets large batches without asking. */
	if (w->pending.bytes >= w->batch_bytes)
		err = sync_to(w, w->appended, &wake, &unlocked);
	if (!unlocked)
		pthread_mutex_unlock(&w->mu);
	if (wake)
		flushes_ring(w);
	return err;
}

int elog_append(elog *w, const struct elog_record *rec, uint64_t *offset)
{
	return append(w, rec, offset, OFF_NEXT);
}

int elog_append_at(elog *w, const struct elog_record *rec)
{
	/* OFF_NEXT is no offset: the one after it could not be written. */
	if (rec->offset == OFF_NEXT)
		return elog__errmsg_set(w->msg, ELOG_INVALID, "offset %llu is out of range",
		                        (unsigned long long)rec->offset);
	return append(w, rec, NULL, rec->offset);
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

const char *elog_notice(elog *w)
{
	static __thread char last[ELOG_MSG_MAX];
	pthread_mutex_lock(&w->mu);
	int any = w->notice[0] != '\0';
	if (any) {
		memcpy(last, w->notice, sizeof last);
		w->notice[0] = '\0';
	}
	pthread_mutex_unlock(&w->mu);
	return any ? last : NULL;
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
	int err = elog__lock_acquire_bell(w->lockfd, w->bell, 0, w->wait_ms, w->msg);
	if (err)
		return err;
	err = elog__settings_load(w->dfd, &w->set, w->msg);
	if (err == ELOG_NOTLOG && (err = elog__log_create(w->dfd, opt, w->msg)) == 0)
		err = elog__settings_load(w->dfd, &w->set, w->msg);
	lock_give(w);
	return err;
}

/* Join the log's open writers (elog__lock_join()), waiting for another's
 * hold only when told how long (wait_ms given); and take a shared flock on
 * "writers", a report only of who has the log open (elog(5), writers). */
static int writers_join(elog *w, int exclusive, int64_t given_ms)
{
	int err = elog__lock_join(w->lockfd, exclusive, given_ms ? w->wait_ms : 0);
	if (!err) {
		w->writersfd = elog__fs_openat(w->dfd, FN_WRITERS, O_RDWR | O_CREAT, 0666);
		if (w->writersfd < 0 && errno == EACCES)
			w->writersfd = elog__fs_openat(w->dfd, FN_WRITERS, O_RDONLY, 0);
		if (w->writersfd >= 0)
			flock(w->writersfd, LOCK_SH | LOCK_NB);
		return 0;
	}
	if (err != EWOULDBLOCK)
		return elog__errmsg_set(w->msg, err, "%s: %s", FN_LOCK, elog_strerror(err));
	pid_t *pids = NULL;
	size_t n = 0;
	elog__lock_holders(w->dfd, FN_WRITERS, &pids, &n);
	long pid = n ? (long)pids[0] : 0;
	free(pids);
	char who[40] = "";
	if (pid)
		snprintf(who, sizeof who, " (pid %ld)", pid);
	if (exclusive)
		return elog__errmsg_set(w->msg, ELOG_LOCKED,
		                        "another writer has the log open%s: an exclusive "
		                        "writer needs it to itself; wait for it (--wait) or stop it",
		                        who);
	return elog__errmsg_set(w->msg, ELOG_LOCKED,
	                        "an exclusive writer has the log open%s; wait for it to "
	                        "close (--wait), or stop it",
	                        who);
}

/* mkdir of a new log's directory found no parent: name the parent, which
 * is what is missing, rather than the log. */
static int parent_missing(char *msg, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/') /* its trailing slashes, */
		n--;
	while (n > 0 && dir[n - 1] != '/') /* its last name, */
		n--;
	while (n > 1 && dir[n - 1] == '/') /* and the slashes before it */
		n--;
	return elog__errmsg_set(msg, ENOENT, "its parent directory %.*s does not exist: make it first",
	                        n ? (int)n : 1, n ? dir : ".");
}

static int open_log(elog *w, const char *dir, const struct elog_options *opt)
{
	int err, moved;

	/* The directory is made only when it is not there: one call for a
	 * log that exists, as most are. */
	w->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dfd < 0 && errno == ENOENT && opt && opt->create) {
		if (mkdir(dir, 0777) < 0 && errno != EEXIST)
			return errno == ENOENT ? parent_missing(w->msg, dir)
			                       : elog__errmsg_set(w->msg, errno, "%s",
			                                          elog_strerror(errno));
		w->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (w->dfd < 0)
		return elog__errmsg_set(w->msg, errno, "%s", elog_strerror(errno));
	if (elog__fs_is_netfs(w->dfd))
		return elog__errmsg_set(
		        w->msg, ELOG_NETFS,
		        "on a network filesystem, where locks and fsync cannot be trusted");
	/* A directory that is not a log is refused before LOCK is made in
	 * it, so that a mistaken path is left as it was found. */
	err = elog__settings_load(w->dfd, &w->set, w->msg);
	int fresh = err == ELOG_NOTLOG && opt && opt->create;
	if (fresh && (err = elog__log_check_fresh(w->dfd, w->msg)) != 0) {
		/* Another writer may have created the log since we looked:
		 * its settings, written last, make it one. */
		char again[ELOG_MSG_MAX];
		if (err == ELOG_NOTLOG && elog__settings_load(w->dfd, &w->set, again) == 0)
			err = fresh = 0;
		else
			return err;
	}
	if (err && !fresh)
		return err;
	if ((err = elog__lock_open(w->dfd, FN_LOCK, &w->lockfd, w->msg)) != 0)
		return err;
	if (fstat(w->lockfd, &w->lock_st) < 0)
		return elog__errmsg_set(w->msg, errno, "%s: %s", FN_LOCK, elog_strerror(errno));
	if (fresh && (err = create_log(w, opt)) != 0)
		return err;

	/* Options for a new log that this one does not have are refused:
	 * ignoring them would leave the caller believing they hold. */
	if ((err = elog__settings_check_options(&w->set, opt, w->msg)) != 0)
		return err;

	if ((err = writers_join(w, opt && opt->exclusive, opt ? opt->wait_ms : 0)) != 0 ||
	    (err = elog__settings_upgrade(w->dfd, &w->set, 0, w->wait_ms, &moved, w->msg)) != 0)
		return err;
	if (moved)
		snprintf(w->notice, sizeof w->notice,
		         "the log is now of format %u: programs of elog 0.2 refuse it "
		         "(elog(7), Upgrading)",
		         SETTINGS_FORMAT);

	w->wmfd = elog__fs_openat(w->dfd, FN_WATERMARK, O_RDWR | O_CREAT, 0666);
	if (w->wmfd < 0)
		return elog__errmsg_set(w->msg, errno, "%s: %s", FN_WATERMARK,
		                        elog_strerror(errno));
	if ((err = open_codec(w)) != 0)
		return err;

	/* Find the tail now, so that a damaged log is refused at open; and
	 * the doorbell, under the lock, so that the writers opening together
	 * share one. */
	if ((err = lock_take(w, 0)) != 0)
		return err;
	w->bell = elog__bell_map(w->lockfd);
	err = tail_sync(w, &moved);
	if (!err)
		err = publish_tail(w);
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
	lock_give(w);
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
	w->inofd = -2;
	w->batch_bytes = opt && opt->batch_bytes ? opt->batch_bytes : DEFAULT_BATCH_BYTES;
	w->have_boot = elog__lock_boot_id(w->boot);
	w->pid = (unsigned)getpid();
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->gather, &ca);
	pthread_condattr_destroy(&ca);
	int err = elog__wait_ms(opt ? opt->wait_ms : 0, DEFAULT_WAIT_MS, &w->wait_ms, w->msg);
	if (!err)
		err = open_log(w, dir, opt);
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
	elog__bell_unmap(w->bell);
	int fds[] = { w->segfd, w->idxfd, w->wmfd, w->writersfd, w->dfd, w->lockfd, w->inofd };
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	batch_free(&w->pending);
	batch_free(&w->spare);
	elog__venc_free(w->ve);
	elog__vdec_free(w->vd);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->gather);
	free(w);
	return err;
}
