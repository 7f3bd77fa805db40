/*
 * writer.c: the single writer of a log, with group commit.
 *
 * elog_append() encodes a record into the pending batch under a mutex and
 * returns its offset.  elog_sync() makes a thread the leader if no flush is
 * running: it takes the whole pending batch, writes it with one write(2) per
 * segment it touches, makes it durable with one fdatasync(2), publishes the
 * new durable end, and wakes every waiter.  Threads that arrive while a flush
 * runs append into a fresh batch and are served by the next leader, so one
 * fdatasync covers everyone queued behind it.
 *
 * Segment rolls are decided at append time (so each record's offset and
 * segment are known at once) and carried out by the leader: it syncs the
 * full segment before it creates the next one, so every closed segment is
 * durable.  After any write or sync error the writer refuses all further
 * work (ELOG_FAILED): after a failed fsync, Linux may have dropped the dirty
 * pages, and retrying would acknowledge data that is not on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

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
	uint64_t end;		/* offset after the batch's last record */
	size_t bytes;
};

/* Values sampled from a compressed log's first records to train its
 * dictionary. */
#define TRAIN_SAMPLES 1000
#define TRAIN_BYTES   (1u << 20)
#define DICT_BYTES    (16u << 10)
struct training {
	unsigned char *buf;
	size_t *sizes;
	size_t len;
	unsigned n;
	int done;		/* trained, or given up */
};

struct elog {
	char msg[ERRMSG_MAX];
	int dfd, lockfd, wmfd;
	struct elog_settings set;
	size_t batch_bytes;

	/* Owned by the leader of a flush (one at a time). */
	int segfd, idxfd;
	uint64_t seg_base, seg_size, idx_size;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* Under mu. */
	uint64_t next;		/* offset of the next record appended */
	uint64_t tail_base;	/* segment the next record goes to */
	uint64_t tail_size;	/* that segment's size once pending is written */
	uint32_t tail_flags;	/* that segment's codec and dictionary */
	struct zenc *z;		/* zstd state, when the log compresses */
	uint32_t dict_id;	/* dictionary for new segments, 0 = none */
	uint32_t dict_next;	/* id for a newly trained one: never reused */
	unsigned char *zbuf;	/* one encoded value */
	size_t zcap;
	struct training tr;
	struct idx_builder ib;	/* index entries of the tail segment */
	struct batch pending, spare;
	int flushing;
	/* Gathering (see gather()): threads now in elog_sync(), how many
	 * were there when the last flush ended, and how long it took. */
	unsigned nsync, last_waiters;
	int gathering;
	int64_t flush_ns;
	pthread_cond_t gather;
	uint64_t durable;
	int failed;		/* the error that stopped the writer, or 0 */
};

static int grow(unsigned char **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64 * 1024;
	while (c < need)
		c *= 2;
	unsigned char *np = realloc(*p, c);
	if (!np)
		return ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

/* The chunk of pending for segment base, added if needed. */
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

static void batch_reset(struct batch *b)
{
	b->n = 0;
	b->bytes = 0;
}

static void batch_free(struct batch *b)
{
	for (size_t i = 0; i < b->cap; i++) {
		free(b->c[i].data);
		free(b->c[i].idx);
	}
	free(b->c);
}

/* Make the leader's active segment the one based at base: sync the old one
 * and its index (so that closed segments and their indexes are durable: only
 * the active segment's index is rebuilt after a crash), then create the new
 * one. */
static int roll(elog *w, uint64_t base, uint32_t flags)
{
	char name[NAME_MAX_LOCAL];
	int err = 0;
	seg_name(name, w->seg_base, SEG_EXT);
	if (fdatasync(w->segfd) < 0)
		return errmsg_set(w->msg, errno, "%s: fdatasync: %s", name, strerror(errno));
	seg_name(name, w->seg_base, IDX_EXT);
	if (fdatasync(w->idxfd) < 0)
		return errmsg_set(w->msg, errno, "%s: fdatasync: %s", name, strerror(errno));
	close(w->segfd);
	close(w->idxfd);
	w->segfd = w->idxfd = -1;
	seg_name(name, base, SEG_EXT);
	if ((err = seg_create(w->dfd, base, flags, &w->segfd, &w->idxfd)) != 0)
		return errmsg_set(w->msg, err, "%s: %s", name, strerror(err));
	if ((err = fs_fsync_dir(w->dfd)) != 0)
		return errmsg_set(w->msg, err, "fsync of the log directory: %s", strerror(err));
	w->seg_base = base;
	w->seg_size = SEG_HDR;
	w->idx_size = IDX_HDR;
	return 0;
}

/* Write b and make it durable.  Runs without the mutex, as the leader. */
static int batch_write(elog *w, const struct batch *b)
{
	char name[NAME_MAX_LOCAL];
	int err;
	for (size_t i = 0; i < b->n; i++) {
		const struct chunk *c = &b->c[i];
		if (c->base != w->seg_base && (err = roll(w, c->base, c->flags)) != 0)
			return err;
		if ((err = fs_pwrite_all(w->segfd, c->data, c->len, (off_t)w->seg_size)) != 0) {
			seg_name(name, w->seg_base, SEG_EXT);
			return errmsg_set(w->msg, err, "%s: write at byte %llu: %s", name,
			                  (unsigned long long)w->seg_size, strerror(err));
		}
		w->seg_size += c->len;
		/* The index is derived data: it is written but never synced,
		 * and recovery or a reader copes with whatever survives. */
		if (c->ilen) {
			if ((err = fs_pwrite_all(w->idxfd, c->idx, c->ilen, (off_t)w->idx_size)) != 0) {
				seg_name(name, w->seg_base, IDX_EXT);
				return errmsg_set(w->msg, err, "%s: %s", name, strerror(err));
			}
			w->idx_size += c->ilen;
		}
	}
	if (fdatasync(w->segfd) < 0) {
		seg_name(name, w->seg_base, SEG_EXT);
		return errmsg_set(w->msg, errno, "%s: fdatasync: %s", name, strerror(errno));
	}
	struct watermark wm = { b->end, w->seg_base, w->seg_size };
	if ((err = wm_write(w->wmfd, &wm)) != 0)
		return errmsg_set(w->msg, err, "%s: %s", FN_WATERMARK, strerror(err));
	return 0;
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

int elog_sync(elog *w, uint64_t offset)
{
	int rc = 0;
	pthread_mutex_lock(&w->mu);
	w->nsync++;
	if (w->gathering)
		pthread_cond_signal(&w->gather);
	if (offset >= w->next)
		offset = w->next - 1;	/* nothing later was appended */
	while (w->next > 0 && w->durable <= offset) {
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
		pthread_mutex_unlock(&w->mu);
		int64_t t0 = mono_ns();
		int err = batch_write(w, &b);
		int64_t t1 = mono_ns();
		pthread_mutex_lock(&w->mu);
		w->flushing = 0;
		w->flush_ns = t1 - t0;
		w->last_waiters = w->nsync;
		if (err)
			w->failed = err;
		else
			w->durable = b.end;
		batch_reset(&b);
		w->spare = b;
		pthread_cond_broadcast(&w->cv);
		if (err) {
			rc = err;	/* the leader learns why; others ELOG_FAILED */
			break;
		}
	}
	w->nsync--;
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int elog_flush(elog *w)
{
	pthread_mutex_lock(&w->mu);
	uint64_t next = w->next;
	pthread_mutex_unlock(&w->mu);
	return next ? elog_sync(w, next - 1) : 0;
}

/* Start the segment for the next record: at a roll, or when a dictionary
 * has just been made.  Called with the mutex held. */
static void start_segment(elog *w)
{
	w->tail_base = w->next;
	w->tail_size = SEG_HDR;
	w->tail_flags = SEG_FLAGS(SEG_CODEC(w->tail_flags), w->dict_id);
	memset(&w->ib, 0, sizeof w->ib);
}

/* Keep a sample of a compressed log's first values; with enough of them,
 * train a dictionary, store it durably, and start a segment that uses it.
 * A failed training is not an error: the log goes on without one.  Called
 * with the mutex held; it runs once in the life of a log. */
static void train(elog *w, const void *value, size_t len)
{
	struct training *t = &w->tr;
	if (t->done || len == 0)
		return;
	if (!t->buf && (!(t->buf = malloc(TRAIN_BYTES)) ||
	                !(t->sizes = malloc(TRAIN_SAMPLES * sizeof *t->sizes)))) {
		t->done = 1;
		return;
	}
	if (len <= TRAIN_BYTES - t->len) {
		memcpy(t->buf + t->len, value, len);
		t->len += len;
		t->sizes[t->n++] = len;
	}
	if (t->n < TRAIN_SAMPLES && t->len < TRAIN_BYTES / 2)
		return;
	t->done = 1;
	unsigned char *dict = malloc(DICT_BYTES);
	size_t dlen;
	uint32_t id = w->dict_next;
	if (dict && zenc_train(t->buf, t->sizes, t->n, dict, DICT_BYTES, &dlen) == 0 &&
	    dict_store(w->dfd, id, dict, dlen) == 0 &&
	    zenc_set_dict(w->z, id, dict, dlen) == 0) {
		w->dict_id = id;
		w->dict_next = id + 1;
		/* An empty tail segment already has its header on disk; the
		 * dictionary then starts with the next segment instead. */
		if (w->tail_size > SEG_HDR)
			start_segment(w);
	}
	free(dict);
	free(t->buf);
	free(t->sizes);
	t->buf = NULL;
	t->sizes = NULL;
}

int elog_append(elog *w, struct elog_record *rec, uint64_t *offset)
{
	if (rec->key_len > ELOG_MAX_KEY ||
	    rec->value_len > ELOG_MAX_RECORD - REC_FIXED - rec->key_len)
		return errmsg_set(w->msg, ELOG_TOOBIG,
		    "record of %zu bytes is larger than the maximum of %u",
		    rec->key_len + rec->value_len, ELOG_MAX_RECORD - REC_FIXED);
	if ((rec->key_len && !rec->key) || (rec->value_len && !rec->value))
		return errmsg_set(w->msg, ELOG_INVALID, "record with a NULL key or value");
	int err = 0, full;

	pthread_mutex_lock(&w->mu);
	if (w->failed) {
		pthread_mutex_unlock(&w->mu);
		return ELOG_FAILED;
	}
	/* In a compressed segment the stored value is a tag byte and the
	 * value, compressed when that makes it smaller. */
	struct elog_record stored = *rec;
	if (w->z) {
		train(w, rec->value, rec->value_len);
		if (rec->value_len) {
			if (grow(&w->zbuf, &w->zcap, zenc_bound(rec->value_len))) {
				pthread_mutex_unlock(&w->mu);
				return errmsg_set(w->msg, ENOMEM, "%s", strerror(ENOMEM));
			}
		}
	}
	size_t size = rec_size(rec->key_len, rec->value_len + (w->z && rec->value_len));
	/* Roll before a record that would overfill a segment holding any;
	 * a record larger than a whole segment gets one of its own. */
	if (w->tail_size > SEG_HDR && w->tail_size + size > w->set.segment_bytes)
		start_segment(w);
	if (SEG_CODEC(w->tail_flags) == CODEC_ZSTD && rec->value_len) {
		stored.value = w->zbuf;
		stored.value_len = zenc_value(w->z, SEG_DICT(w->tail_flags), rec->value,
		                              rec->value_len, w->zbuf);
		if (stored.value_len > ELOG_MAX_RECORD - REC_FIXED - rec->key_len) {
			pthread_mutex_unlock(&w->mu);
			return errmsg_set(w->msg, ELOG_TOOBIG,
			    "record of %zu bytes is larger than the maximum of %u",
			    rec->key_len + stored.value_len, ELOG_MAX_RECORD - REC_FIXED);
		}
		size = rec_size(stored.key_len, stored.value_len);
	}
	struct chunk *c = batch_chunk(&w->pending, w->tail_base, w->tail_flags);
	if (!c || grow(&c->data, &c->cap, c->len + size) ||
	    grow(&c->idx, &c->icap, c->ilen + IDX_ENTRY)) {
		if (c && c->len == 0 && c->ilen == 0)
			w->pending.n--;	/* drop the chunk just added */
		pthread_mutex_unlock(&w->mu);
		return errmsg_set(w->msg, ENOMEM, "%s", strerror(ENOMEM));
	}
	rec->offset = stored.offset = w->next;
	if (rec->ts_ms == ELOG_TS_NOW)
		rec->ts_ms = stored.ts_ms = fs_now_ms();
	rec_encode(c->data + c->len, &stored);
	struct idx_entry e;
	if (idx_builder_add(&w->ib, rec->offset, rec->ts_ms, w->tail_size,
	                    w->set.index_interval, &e)) {
		idx_entry_encode(c->idx + c->ilen, &e);
		c->ilen += IDX_ENTRY;
	}
	c->len += size;
	w->tail_size += size;
	w->next++;
	w->pending.end = w->next;
	w->pending.bytes += size;
	full = w->pending.bytes >= w->batch_bytes;
	pthread_mutex_unlock(&w->mu);

	if (offset)
		*offset = rec->offset;
	/* A full buffer is written at once: memory stays bounded, and a
	 * fast producer gets large batches without asking. */
	if (full)
		err = elog_sync(w, rec->offset);
	return err;
}

uint64_t elog_next_offset(elog *w)
{
	pthread_mutex_lock(&w->mu);
	uint64_t v = w->next;
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

/* The highest dictionary id any segment header names: a new dictionary
 * must never take the id of one that is referenced, even if its file is
 * gone, or old records would decompress into garbage. */
static uint32_t dict_referenced(elog *w, const struct seglist *sl)
{
	uint32_t max = 0;
	for (size_t i = 0; i < sl->n; i++) {
		char name[NAME_MAX_LOCAL];
		unsigned char hdr[SEG_HDR];
		size_t got;
		seg_name(name, sl->base[i], SEG_EXT);
		int fd = fs_openat(w->dfd, name, O_RDONLY, 0);
		if (fd < 0)
			continue;
		if (fs_pread_full(fd, hdr, SEG_HDR, 0, &got) == 0 && got == SEG_HDR &&
		    seg_header_check(hdr, sl->base[i]) == 0 &&
		    SEG_DICT(seg_header_flags(hdr)) > max)
			max = SEG_DICT(seg_header_flags(hdr));
		close(fd);
	}
	return max;
}

/* Make the zstd state for a compressed log, with its newest dictionary. */
static int open_compression(elog *w, const struct seglist *sl)
{
	if (!elog_have_zstd())
		return errmsg_set(w->msg, ELOG_UNSUPPORTED,
		    "the log is compressed with zstd, but this build has no zstd support");
	if (!(w->z = zenc_new(w->set.compression_level)))
		return errmsg_set(w->msg, ENOMEM, "%s", strerror(ENOMEM));
	int err = dict_latest(w->dfd, &w->dict_id);
	if (err)
		return errmsg_set(w->msg, err, "listing dictionaries: %s", strerror(err));
	if (w->dict_id) {
		unsigned char *d;
		size_t len;
		if ((err = dict_load(w->dfd, w->dict_id, &d, &len, w->msg)) != 0)
			return err;
		err = zenc_set_dict(w->z, w->dict_id, d, len);
		free(d);
		if (err)
			return errmsg_set(w->msg, err, "dictionary %u: %s", w->dict_id,
			                  elog_strerror(err));
		w->tr.done = 1;
	}
	if (w->set.no_dictionary)
		w->tr.done = 1;
	uint32_t ref = dict_referenced(w, sl);
	w->dict_next = (ref > w->dict_id ? ref : w->dict_id) + 1;
	return 0;
}

static int open_log(elog *w, const char *dir, const struct elog_options *opt)
{
	struct watermark wm;
	struct seglist sl = { 0 };
	struct recovery rc;
	int err;

	if (opt && opt->create && mkdir(dir, 0777) < 0 && errno != EEXIST)
		return errmsg_set(w->msg, errno, "%s", strerror(errno));
	w->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dfd < 0)
		return errmsg_set(w->msg, errno, "%s", strerror(errno));
	if (fs_is_netfs(w->dfd))
		return errmsg_set(w->msg, ELOG_NETFS,
		    "on a network filesystem, where locks and fsync cannot be trusted");
	/* A directory that is not a log is refused before LOCK is made in
	 * it, so that a mistaken path is left as it was found. */
	err = settings_load(w->dfd, &w->set, w->msg);
	if (err == ELOG_NOTLOG && opt && opt->create)
		err = log_check_fresh(w->dfd, w->msg);
	if (err)
		return err;
	if ((err = lock_take(w->dfd, FN_LOCK, 0, 1, &w->lockfd, w->msg)) != 0)
		return err;

	err = settings_load(w->dfd, &w->set, w->msg);
	if (err == ELOG_NOTLOG && opt && opt->create) {
		if ((err = log_create(w->dfd, opt, w->msg)) != 0)
			return err;
		err = settings_load(w->dfd, &w->set, w->msg);
	}
	if (err || (err = settings_check_options(&w->set, opt, w->msg)) != 0)
		return err;

	w->wmfd = fs_openat(w->dfd, FN_WATERMARK, O_RDWR | O_CREAT, 0666);
	if (w->wmfd < 0)
		return errmsg_set(w->msg, errno, "%s: %s", FN_WATERMARK, strerror(errno));
	if ((err = wm_load(w->dfd, w->wmfd, &wm)) != 0)
		return errmsg_set(w->msg, err, "%s: %s", FN_WATERMARK, strerror(err));

	if ((err = recover_leftovers(w->dfd, w->msg)) != 0)
		return err;
	if ((err = seglist_read(w->dfd, &sl)) != 0)
		return errmsg_set(w->msg, err, "listing segments: %s", strerror(err));
	if (sl.n == 0) {
		seglist_free(&sl);
		return errmsg_set(w->msg, ELOG_CORRUPT, "no segment files%s",
		    wm.durable_end ? ", but the watermark says records are durable" : "");
	}
	uint64_t active = sl.base[sl.n - 1];
	uint32_t codec = CODEC_NONE;
	if (w->set.compression == ELOG_COMPRESS_ZSTD) {
		if ((err = open_compression(w, &sl)) != 0) {
			seglist_free(&sl);
			return err;
		}
		codec = CODEC_ZSTD;
	}
	err = recover_indexes(w->dfd, &sl, w->set.index_interval, w->msg);
	seglist_free(&sl);
	if (err)
		return err;
	if ((err = recover_active(w->dfd, &wm, active, w->set.index_interval,
	                          SEG_FLAGS(codec, w->dict_id), &rc, w->msg)) != 0) {
		if (rc.segfd >= 0)
			close(rc.segfd);
		if (rc.idxfd >= 0)
			close(rc.idxfd);
		recovery_free(&rc);
		return err;
	}
	w->segfd = rc.segfd;
	w->idxfd = rc.idxfd;
	w->seg_base = w->tail_base = active;
	w->seg_size = w->tail_size = rc.size;
	w->idx_size = rc.idx_size;
	w->ib = rc.ib;
	w->tail_flags = rc.flags;
	w->next = w->durable = rc.next;
	recovery_free(&rc);

	wm = (struct watermark){ w->next, active, rc.size };
	if ((err = wm_write(w->wmfd, &wm)) != 0)
		return errmsg_set(w->msg, err, "%s: %s", FN_WATERMARK, strerror(err));
	w->pending.end = w->spare.end = w->next;
	return 0;
}

int elog_open(elog **wp, const char *dir, const struct elog_options *opt)
{
	elog *w = calloc(1, sizeof *w);
	*wp = w;
	if (!w)
		return ENOMEM;
	w->dfd = w->lockfd = w->wmfd = w->segfd = w->idxfd = -1;
	w->batch_bytes = opt && opt->batch_bytes ? opt->batch_bytes : DEFAULT_BATCH_BYTES;
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
	int err = w->failed ? ELOG_FAILED : elog_flush(w);
	int fds[] = { w->segfd, w->idxfd, w->wmfd, w->dfd, w->lockfd };
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	batch_free(&w->pending);
	batch_free(&w->spare);
	zenc_free(w->z);
	free(w->zbuf);
	free(w->tr.buf);
	free(w->tr.sizes);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	pthread_cond_destroy(&w->gather);
	free(w);
	return err;
}
