/*
 * compact.c: compaction, elog_compact().
 *
 * Pass 1 reads every durable record of the log, closed segments and the
 * active one alike, and notes in a key table (keyset.c) the offset of each
 * key's newest record.  Pass 2 rewrites each closed segment that holds a
 * record to drop, keeping:
 *   - unkeyed records;
 *   - records at or after the min-lag cut (the first record younger than
 *     min_lag_ms), so that young records are never touched;
 *   - each key's newest record, unless it is a tombstone whose grace is
 *     over: it goes then, everything older for its key having gone already.
 * Then runs of adjacent closed segments that fit in one segment together are
 * merged into the first of them.
 *
 * A segment is replaced by writing "<base>.log.compact" and
 * "<base>.idx.compact" beside it, syncing both, unlinking the old index,
 * renaming the new segment and then the new index over the old names, and
 * syncing the directory.  The new segment keeps its base (its name) even
 * when its first record is now later: readers find a record by the greatest
 * base at or below its offset.  Whatever step a crash interrupts, the old
 * segment or the new one is in place, either of which holds every record
 * that must stay; a segment without its index is read by scanning, and the
 * next run removes the temporary files and rebuilds a missing index.
 *
 * Only a log whose stored cleanup is compact is compacted.  Keys also
 * serve to filter (a run, a sensor), and there every record matters; a
 * delete log, the default and every log made before the setting existed,
 * is refused before anything is touched, maint.lock included, and again
 * under the lock in case the setting changed while the run waited for it.
 *
 * A merge writes the records of segments A, B... into A's replacement, and
 * only once that is in place and synced removes B...; see maint.c for why
 * the moment in between shows nothing twice and how the next run ends it.
 *
 * The tombstone state.  The file compact.state (elog(5)) records when
 * compaction first saw each tombstone it keeps, so that the grace period
 * runs from then, by this machine's wall clock, and not from the
 * producer's timestamp.  A lost or removed file only restarts the grace
 * periods.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "files.h"
#include "maint.h"

#define STATE_MAGIC "elog-compact-state 1\n"
#define STATE_MAX (1u << 30)
#define OUT_BUF (1u << 20)

struct tomb {
	uint64_t offset;
	int64_t first_ms;
};
struct tombs {
	struct tomb *v;
	size_t n, cap;
};

static int tombs_add(struct tombs *t, uint64_t offset, int64_t first_ms)
{
	struct tomb *v = elog__grow(t->v, &t->cap, t->n + 1, sizeof *v, 64);
	if (!v)
		return ENOMEM;
	t->v = v;
	t->v[t->n++] = (struct tomb){ offset, first_ms };
	return 0;
}

static int tomb_cmp(const void *key, const void *elem)
{
	uint64_t a = *(const uint64_t *)key, b = ((const struct tomb *)elem)->offset;
	return a < b ? -1 : a > b;
}

static const struct tomb *tombs_find(const struct tombs *t, uint64_t offset)
{
	return t->n ? bsearch(&offset, t->v, t->n, sizeof *t->v, tomb_cmp) : NULL;
}

static int state_load(int dfd, char *msg, struct tombs *t)
{
	char *text;
	size_t len;
	int err = elog__fs_read_small(dfd, FN_COMPACT_STATE, STATE_MAX, &text, &len);
	if (err == ENOENT)
		return 0;
	if (err)
		return elog__errmsg_set(msg, err, "%s: %s", FN_COMPACT_STATE, elog_strerror(err));
	size_t line = 1;
	const char *p = text, *end = text + len;
	if (len < sizeof STATE_MAGIC - 1 || memcmp(text, STATE_MAGIC, sizeof STATE_MAGIC - 1)) {
		err = ELOG_CORRUPT;
		goto out;
	}
	p += sizeof STATE_MAGIC - 1;
	while (p < end) {
		unsigned long long off;
		long long ms;
		int n;
		line++;
		if (sscanf(p, "%20llu %20lld%n", &off, &ms, &n) != 2 || p[n] != '\n' ||
		    (p[0] < '0' || p[0] > '9') || (t->n && off <= t->v[t->n - 1].offset)) {
			err = ELOG_CORRUPT;
			goto out;
		}
		if ((err = tombs_add(t, off, ms)) != 0)
			break;
		p += n + 1;
	}
out:
	free(text);
	if (err == ELOG_CORRUPT)
		return elog__errmsg_set(msg, err,
		                        "%s: malformed at line %zu (remove it to "
		                        "restart the grace periods of tombstones)",
		                        FN_COMPACT_STATE, line);
	if (err)
		return elog__errmsg_set(msg, err, "%s: %s", FN_COMPACT_STATE, elog_strerror(err));
	return 0;
}

int elog__compact_state_check(int dfd, char *msg)
{
	struct tombs t = { 0 };
	int err = state_load(dfd, msg, &t);
	free(t.v);
	return err;
}

static int state_store(struct maint *m, const struct tombs *t)
{
	size_t cap = sizeof STATE_MAGIC + t->n * 44, len;
	char *buf = malloc(cap);
	if (!buf)
		return elog__errmsg_set(m->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	memcpy(buf, STATE_MAGIC, sizeof STATE_MAGIC - 1);
	len = sizeof STATE_MAGIC - 1;
	for (size_t i = 0; i < t->n; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%llu %lld\n",
		                        (unsigned long long)t->v[i].offset,
		                        (long long)t->v[i].first_ms);
	elog__maint_step();
	int err = elog__fs_replace_file(m->dfd, FN_COMPACT_STATE, buf, len);
	free(buf);
	if (err)
		return elog__errmsg_set(m->msg, err, "%s: %s", FN_COMPACT_STATE,
		                        elog_strerror(err));
	return 0;
}

static int tombs_equal(const struct tombs *a, const struct tombs *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].offset != b->v[i].offset || a->v[i].first_ms != b->v[i].first_ms)
			return 0;
	return 1;
}

struct compactor {
	struct maint *m;
	const struct elog_compact_opts *o;
	struct elog_compact_result *res;
	int64_t now;
	uint64_t grace_ms; /* o's, 0 for ELOG_COMPACT_GRACE_NONE */
	struct keyset ks;
	uint64_t cut;           /* records at or above it are left alone */
	struct tombs old, keep; /* the state as read, and as it will be */
	uint64_t *size;         /* closed segments' sizes once compacted */
	uint32_t *flags;        /* and their headers' flags (codec, dictionary) */
	unsigned char *buf;     /* OUT_BUF bytes of output */
};

/* The replacement of one segment being written. */
struct out {
	uint64_t base;
	uint32_t flags; /* copied from the input: values stay encoded */
	int fd;         /* the temporary .log, or -1 (not opened) */
	size_t len;     /* bytes in the compactor's buffer */
	uint64_t pos;   /* the file position of the next record */
	uint64_t records;
	struct idx_builder ib;
	struct index ix;
	struct seal seal; /* what the segments it replaces end with */
};

static void tmp_name(char *buf, uint64_t base, const char *ext)
{
	elog__seg_name(buf, base, ext);
	strcat(buf, MAINT_TMP_EXT);
}

static void out_init(struct out *w, uint64_t base)
{
	memset(w, 0, sizeof *w);
	w->base = base;
	w->fd = -1;
	w->pos = SEG_HDR;
}

static int out_flush(struct compactor *c, struct out *w)
{
	char name[NAME_MAX_LOCAL];
	int err = elog__fs_write_all(w->fd, c->buf, w->len);
	w->len = 0;
	if (err) {
		tmp_name(name, w->base, SEG_EXT);
		return elog__errmsg_set(c->m->msg, err, "%s: %s", name, elog_strerror(err));
	}
	return 0;
}

static int out_write(struct compactor *c, struct out *w, const void *p, size_t n)
{
	int err;
	while (n > 0) {
		if (w->len == OUT_BUF && (err = out_flush(c, w)) != 0)
			return err;
		size_t k = OUT_BUF - w->len < n ? OUT_BUF - w->len : n;
		memcpy(c->buf + w->len, p, k);
		w->len += k;
		p = (const unsigned char *)p + k;
		n -= k;
	}
	return 0;
}

/* Create the temporary segment and put its header in the buffer. */
static int out_open(struct compactor *c, struct out *w)
{
	char name[NAME_MAX_LOCAL];
	unsigned char hdr[SEG_HDR];
	tmp_name(name, w->base, SEG_EXT);
	elog__maint_step();
	w->fd = elog__fs_openat(c->m->dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0666);
	if (w->fd < 0)
		return elog__errmsg_set(c->m->msg, errno, "%s: %s", name, elog_strerror(errno));
	elog__seg_header_encode(hdr, w->base, w->flags, c->m->set.id);
	w->len = 0;
	return out_write(c, w, hdr, SEG_HDR);
}

/* Account for a record that goes to the output at w->pos. */
static int out_note(struct compactor *c, struct out *w, const struct elog_record *rec, size_t size)
{
	struct idx_entry e;
	if (elog__idx_builder_add(&w->ib, rec->offset, rec->ts_ms, w->pos, c->m->set.index_interval,
	                          &e)) {
		int err = elog__idx_push(&w->ix, &e);
		if (err)
			return elog__errmsg_set(c->m->msg, err, "%s", elog_strerror(err));
	}
	w->pos += size;
	w->records++;
	return 0;
}

/* Copy bytes [from, to) of segfd to the output unchanged. */
static int out_copy(struct compactor *c, struct out *w, int segfd, uint64_t from, uint64_t to)
{
	unsigned char tmp[64 * 1024];
	while (from < to) {
		size_t n = to - from < sizeof tmp ? (size_t)(to - from) : sizeof tmp, got;
		int err = elog__fs_pread_full(segfd, tmp, n, (off_t)from, &got);
		if (!err && got != n)
			err = EIO; /* a closed segment never shrinks */
		if (err)
			return elog__errmsg_set(c->m->msg, err, "reading a segment: %s",
			                        elog_strerror(err));
		if ((err = out_write(c, w, tmp, n)) != 0)
			return err;
		from += n;
	}
	return 0;
}

static void out_abort(struct compactor *c, struct out *w)
{
	char name[NAME_MAX_LOCAL];
	if (w->fd != -1) {
		if (w->fd >= 0)
			close(w->fd);
		tmp_name(name, w->base, SEG_EXT);
		unlinkat(c->m->dfd, name, 0);
		tmp_name(name, w->base, IDX_EXT);
		unlinkat(c->m->dfd, name, 0);
	}
	w->fd = -1;
	elog__idx_free(&w->ix);
}

/* Rename base's temporary ext file over its name, then fsync the directory. */
static int swap_in(struct maint *m, uint64_t base, const char *ext)
{
	char name[NAME_MAX_LOCAL], tmp[NAME_MAX_LOCAL];
	elog__seg_name(name, base, ext);
	tmp_name(tmp, base, ext);
	elog__maint_step();
	if (renameat(m->dfd, tmp, m->dfd, name) < 0)
		return elog__errmsg_set(m->msg, errno, "%s: %s", name, elog_strerror(errno));
	return elog__maint_sync_dir(m);
}

/* Sync the new segment, write its index, and swap both into place. */
static int out_commit(struct compactor *c, struct out *w)
{
	struct maint *m = c->m;
	char name[NAME_MAX_LOCAL], tmp[NAME_MAX_LOCAL];
	int err, ifd;

	/* The new segment ends with the seal of the last it replaces: the
	 * same next segment, whatever compaction removed. */
	unsigned char seal[SEAL_SIZE];
	w->seal = elog__seal_of(m->set.id, w->seal.next, w->seal.end, w->pos);
	elog__seal_encode(seal, &w->seal);
	if ((err = out_write(c, w, seal, SEAL_SIZE)) != 0 || (err = out_flush(c, w)) != 0)
		return err;
	tmp_name(tmp, w->base, SEG_EXT);
	elog__maint_step();
	if (fdatasync(w->fd) < 0)
		return elog__errmsg_set(m->msg, errno, "%s: fdatasync: %s", tmp,
		                        elog_strerror(errno));
	close(w->fd);
	w->fd = -2; /* closed, but the temporary files exist */

	size_t len = IDX_HDR + w->ix.n * IDX_ENTRY;
	unsigned char *ibuf = malloc(len);
	if (!ibuf)
		return elog__errmsg_set(m->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	elog__idx_header_encode(ibuf);
	for (size_t i = 0; i < w->ix.n; i++)
		elog__idx_entry_encode(ibuf + IDX_HDR + i * IDX_ENTRY, &w->ix.e[i]);
	tmp_name(tmp, w->base, IDX_EXT);
	elog__maint_step();
	ifd = elog__fs_openat(m->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
	err = ifd < 0 ? errno : elog__fs_write_all(ifd, ibuf, len);
	free(ibuf);
	if (!err && fdatasync(ifd) < 0)
		err = errno;
	if (ifd >= 0)
		close(ifd);
	if (err)
		return elog__errmsg_set(m->msg, err, "%s: %s", tmp, elog_strerror(err));

	/* The old index goes first, durably: between the renames a reader
	 * then finds no index rather than one describing the other file,
	 * even after a power loss that kept the rename and not the unlink.
	 * And the segment before its index, so the new index never stands
	 * beside the old segment. */
	elog__seg_name(name, w->base, IDX_EXT);
	if ((err = elog__maint_unlink(m, name)) != 0 || (err = elog__maint_sync_dir(m)) != 0 ||
	    (err = swap_in(m, w->base, SEG_EXT)) != 0 || (err = swap_in(m, w->base, IDX_EXT)) != 0)
		return err;
	w->fd = -1;
	return 0;
}

static int open_segment(struct maint *m, uint64_t base, int *fd, uint64_t *size, uint32_t *flags)
{
	struct stat st;
	int err = elog__seg_open(m->dfd, base, O_RDONLY, fd, flags, &st, m->msg);
	if (!err)
		*size = (uint64_t)st.st_size;
	return err;
}

/* Pass 1: the newest record of every key, in every durable record. */
static int collect_keys(struct compactor *c)
{
	struct maint *m = c->m;
	int64_t young = c->o->min_lag_ms ? c->now - (int64_t)c->o->min_lag_ms : INT64_MAX;
	c->cut = UINT64_MAX;
	for (size_t i = 0; i < m->sl.n; i++) {
		uint64_t base = m->sl.base[i], limit = UINT64_MAX, size, at;
		if (i >= m->nclosed) {
			if (base > m->wm.segment_base)
				break; /* nothing durable in it yet */
			if (base == m->wm.segment_base)
				limit = m->wm.segment_bytes;
		}
		int fd, err;
		if ((err = open_segment(m, base, &fd, &size, NULL)) != 0)
			return err;
		struct scan s;
		struct elog_record rec;
		if ((err = elog__scan_init(&s, fd, base, SEG_HDR, limit)) != 0) {
			close(fd);
			return elog__errmsg_set(m->msg, err, "%s", elog_strerror(err));
		}
		/* The valid part only: the tail rule of elog(5), Records. */
		struct seg_tail t = { .next = base };
		while ((err = elog__seg_tail_next(&s, &t, &rec, &at)) == 0) {
			if (i >= m->nclosed && rec.offset >= m->wm.durable_end)
				break;
			if (c->cut == UINT64_MAX && rec.ts_ms > young)
				c->cut = rec.offset;
			if (rec.key_len &&
			    (err = elog__keyset_put(&c->ks, rec.key, rec.key_len, rec.offset,
			                            rec.value_len == 0)) != 0) {
				/* Out of memory is the key table's, not the
				 * segment's: say how big it had grown. */
				elog__scan_free(&s);
				close(fd);
				return elog__errmsg_set(m->msg, err,
				                        "the key table, holding %zu keys "
				                        "in %zu bytes, cannot grow: %s",
				                        c->ks.n, elog__keyset_memory(&c->ks),
				                        elog_strerror(err));
			}
		}
		if (err == ELOG_END && t.why != TAIL_WHOLE)
			err = t.why == TAIL_ORDER ? ELOG_INVALID : ELOG_CORRUPT;
		if (err != 0 && err != ELOG_END)
			err = elog__maint_scan_error(m, base, &s, err, at);
		else
			err = 0;
		elog__scan_free(&s);
		close(fd);
		if (err)
			return err;
	}
	c->res->keys = c->ks.n;
	return 0;
}

/* Whether the closed record rec stays. */
static int keep_record(struct compactor *c, const struct elog_record *rec, int *keep)
{
	uint64_t newest;
	int tomb;
	*keep = 1;
	if (rec->key_len == 0)
		return 0;
	if (!elog__keyset_get(&c->ks, rec->key, rec->key_len, &newest, &tomb))
		return 0; /* cannot happen: pass 1 saw every record */
	if (newest > rec->offset) {
		/* Superseded: it goes, unless it is young. */
		*keep = rec->offset >= c->cut;
		return 0;
	}
	if (newest < rec->offset)
		return 0; /* cannot happen either; keeping is safe */
	if (!tomb)
		return 0;
	const struct tomb *t = tombs_find(&c->old, rec->offset);
	int64_t first = t ? t->first_ms : c->now;
	if (rec->offset < c->cut && c->now >= first && (uint64_t)(c->now - first) >= c->grace_ms) {
		*keep = 0;
		c->res->tombstones_removed++;
		return 0;
	}
	c->res->tombstones_kept++;
	int err = tombs_add(&c->keep, rec->offset, first);
	return err ? elog__errmsg_set(c->m->msg, err, "%s", elog_strerror(err)) : 0;
}

static void report(struct compactor *c, int action, uint64_t base, uint64_t end, uint64_t into,
                   uint64_t rb, uint64_t ra, uint64_t bb, uint64_t ba)
{
	if (!c->o->each)
		return;
	struct elog_segment_report r = { 0 };
	r.action = action;
	r.base = base;
	r.end = end;
	r.into = into;
	r.records_before = rb;
	r.records_after = ra;
	r.bytes_before = bb;
	r.bytes_after = ba;
	r.newest_ms = INT64_MIN;
	c->o->each(c->o->arg, &r);
}

/* Pass 2 for closed segment i: rewrite it without the records that go. */
static int compact_segment(struct compactor *c, size_t i)
{
	struct maint *m = c->m;
	uint64_t base = m->sl.base[i], size, at = SEG_HDR, records = 0;
	struct out w;
	struct scan s;
	struct elog_record rec;
	int fd, err, dropped = 0;

	if ((err = open_segment(m, base, &fd, &size, &c->flags[i])) != 0)
		return err;
	out_init(&w, base);
	w.flags = c->flags[i];
	if ((err = elog__scan_init(&s, fd, base, SEG_HDR, size)) != 0) {
		close(fd);
		return elog__errmsg_set(m->msg, err, "%s", elog_strerror(err));
	}
	while ((err = elog__scan_next(&s, &rec, &at)) == 0) {
		int keep;
		size_t rsize = elog__rec_size(rec.key_len, rec.value_len);
		records++;
		if ((err = keep_record(c, &rec, &keep)) != 0)
			goto fail;
		if (!keep) {
			/* The first record to go: everything before it is
			 * copied as it is. */
			if (!dropped && !c->o->dry_run &&
			    ((err = out_open(c, &w)) != 0 ||
			     (err = out_copy(c, &w, fd, SEG_HDR, at)) != 0))
				goto fail;
			dropped = 1;
			continue;
		}
		if ((err = out_note(c, &w, &rec, rsize)) != 0)
			goto fail;
		if (dropped && !c->o->dry_run &&
		    (err = out_write(c, &w, elog__rec_bytes(&rec), rsize)) != 0)
			goto fail;
	}
	if (err != ELOG_END) {
		err = elog__maint_scan_error(m, base, &s, err, at);
		goto fail;
	}
	uint64_t end = m->sl.base[i + 1]; /* a closed segment has a next */
	if ((err = elog__seg_chain_next(fd, base, &s, end, &w.seal, m->msg)) != 0)
		goto fail;
	elog__scan_free(&s);
	close(fd);
	c->res->records_before += records;
	c->res->bytes_before += size;
	c->res->records_after += w.records;
	c->size[i] = w.pos;
	if (!dropped) {
		c->res->bytes_after += size;
		c->size[i] = size;
		elog__idx_free(&w.ix);
		return 0;
	}
	/* A segment left with no record is rewritten empty, like any other:
	 * its seal keeps the chain of segments whole (removed, it would read
	 * as a missing segment), and the merges below fold it into the
	 * segment before it when they can. */
	c->res->bytes_after += w.pos + SEAL_SIZE;
	c->res->segments_rewritten++;
	if (!c->o->dry_run && (err = out_commit(c, &w)) != 0) {
		out_abort(c, &w);
		return err;
	}
	elog__idx_free(&w.ix);
	report(c, ELOG_SEG_REWRITTEN, base, end, 0, records, w.records, size, w.pos);
	return 0;
fail:
	elog__scan_free(&s);
	close(fd);
	out_abort(c, &w);
	return err;
}

/* Merge closed segments sl.base[i..j] into the first of them. */
static int merge_run(struct compactor *c, size_t i, size_t j)
{
	struct maint *m = c->m;
	struct out w;
	int err = 0;

	out_init(&w, m->sl.base[i]);
	w.flags = c->flags[i]; /* the run shares them (see compact()) */
	if (!c->o->dry_run) {
		if ((err = out_open(c, &w)) != 0)
			goto fail;
		for (size_t k = i; k <= j; k++) {
			uint64_t size, at;
			struct scan s;
			struct elog_record rec;
			int fd;
			if ((err = open_segment(m, m->sl.base[k], &fd, &size, NULL)) != 0)
				goto fail;
			if ((err = elog__scan_init(&s, fd, m->sl.base[k], SEG_HDR, size)) != 0) {
				close(fd);
				err = elog__errmsg_set(m->msg, err, "%s", elog_strerror(err));
				goto fail;
			}
			int werr = 0;
			while ((err = elog__scan_next(&s, &rec, &at)) == 0) {
				size_t rsize = elog__rec_size(rec.key_len, rec.value_len);
				if ((werr = out_note(c, &w, &rec, rsize)) != 0 ||
				    (werr = out_write(c, &w, elog__rec_bytes(&rec), rsize)) != 0)
					break;
			}
			if (werr)
				err = werr; /* its message is set */
			else if (err == ELOG_END)
				err = elog__seg_chain_next(fd, m->sl.base[k], &s, m->sl.base[k + 1],
				                           &w.seal, m->msg);
			else
				err = elog__maint_scan_error(m, m->sl.base[k], &s, err, at);
			elog__scan_free(&s);
			close(fd);
			if (err)
				goto fail;
		}
		if ((err = out_commit(c, &w)) != 0)
			goto fail;
	}
	elog__idx_free(&w.ix);
	c->res->segments_rewritten++;
	for (size_t k = i + 1; k <= j; k++) {
		if (!c->o->dry_run && (err = elog__seg_remove(m, m->sl.base[k])) != 0)
			return err;
		report(c, ELOG_SEG_MERGED, m->sl.base[k], m->sl.base[k + 1], m->sl.base[i], 0, 0,
		       c->size[k], 0);
	}
	return 0;
fail:
	out_abort(c, &w);
	return err;
}

/* Drop entries i .. i + n - 1 of the closed segments (they were removed). */
static void forget(struct compactor *c, size_t i, size_t n)
{
	struct maint *m = c->m;
	memmove(&m->sl.base[i], &m->sl.base[i + n], (m->sl.n - i - n) * sizeof m->sl.base[0]);
	memmove(&c->size[i], &c->size[i + n], (m->nclosed - i - n) * sizeof c->size[0]);
	memmove(&c->flags[i], &c->flags[i + n], (m->nclosed - i - n) * sizeof c->flags[0]);
	m->sl.n -= n;
	m->nclosed -= n;
}

static int compact(struct compactor *c)
{
	struct maint *m = c->m;
	int err;

	if (!c->o->dry_run && (err = elog__maint_cleanup(m, &c->res->leftovers)) != 0)
		return err;
	c->res->segments_before = m->nclosed;
	if ((err = state_load(m->dfd, m->msg, &c->old)) != 0)
		return err;
	if ((err = elog__keyset_init(&c->ks)) != 0)
		return elog__errmsg_set(m->msg, err, "making the key table: %s",
		                        elog_strerror(err));
	c->buf = malloc(OUT_BUF);
	c->size = malloc((m->nclosed + 1) * sizeof *c->size);
	c->flags = malloc((m->nclosed + 1) * sizeof *c->flags);
	if (!c->buf || !c->size || !c->flags)
		return elog__errmsg_set(m->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	if ((err = collect_keys(c)) != 0)
		return err;

	for (size_t i = 0; i < m->nclosed; i++)
		if ((err = compact_segment(c, i)) != 0)
			return err;

	/* Merge runs of small neighbours, each into its first segment.  Only
	 * segments with the same codec and dictionary merge: their values
	 * are copied as they are stored, never decoded. */
	for (size_t i = 0; i < m->nclosed;) {
		uint64_t total = c->size[i];
		size_t j = i;
		while (j + 1 < m->nclosed && c->flags[j + 1] == c->flags[i] &&
		       total + (c->size[j + 1] - SEG_HDR) <= m->set.segment_bytes)
			total += c->size[++j] - SEG_HDR;
		if (j > i) {
			if ((err = merge_run(c, i, j)) != 0)
				return err;
			c->size[i] = total;
			forget(c, i + 1, j - i);
		}
		i++;
	}
	c->res->segments_after = m->nclosed;
	c->res->memory = elog__keyset_memory(&c->ks) +
	                 (c->old.cap + c->keep.cap) * sizeof(struct tomb);
	if (!c->o->dry_run && !tombs_equal(&c->old, &c->keep))
		return state_store(m, &c->keep);
	return 0;
}

/* ELOG_NOCOMPACT unless the settings s allow compaction.  The message
 * says what delete means, not which program changes it: that is the
 * caller's to add. */
static int cleanup_allows(const struct elog_settings *s, char *msg)
{
	if (s->cleanup == ELOG_CLEANUP_COMPACT)
		return 0;
	return elog__errmsg_set(
	        msg, ELOG_NOCOMPACT,
	        "the log's cleanup is delete, so it "
	        "is not compacted (delete is the default, and the policy of every log "
	        "created before the setting existed)");
}

int elog_compact(const char *dir, const struct elog_compact_opts *o,
                 struct elog_compact_result *res, char *msg)
{
	static const struct elog_compact_opts defaults = { 0 };
	char local[ELOG_MSG_MAX];
	struct elog_compact_result dummy;
	struct compactor c;
	struct maint m;

	if (!msg)
		msg = local;
	if (!res)
		res = &dummy;
	if (!o)
		o = &defaults;
	memset(res, 0, sizeof *res);
	memset(&c, 0, sizeof c);
	msg[0] = '\0';
	c.m = &m;
	c.o = o;
	c.res = res;
	c.now = o->now_ms ? o->now_ms : elog__fs_now_ms();
	c.grace_ms = o->grace_ms == 0                         ? ELOG_COMPACT_GRACE_DEFAULT
	             : o->grace_ms == ELOG_COMPACT_GRACE_NONE ? 0
	                                                      : o->grace_ms;
	struct elog_settings set;
	int err = elog_settings_read(dir, &set, msg);
	if (!err)
		err = cleanup_allows(&set, msg);
	if (err)
		return err;
	err = elog__maint_open(&m, dir, o->wait_ms, msg);
	/* The settings as they are under maint.lock, which every change of
	 * them takes. */
	if (!err && (err = elog__settings_load(m.dfd, &m.set, msg)) == 0)
		err = cleanup_allows(&m.set, msg);
	if (!err)
		err = compact(&c);
	if (!err && !o->dry_run)
		elog__lastrun_mark(m.dfd, FN_COMPACT_LAST, c.now, NULL, 0);
	elog__maint_close(&m);
	elog__keyset_free(&c.ks);
	free(c.old.v);
	free(c.keep.v);
	free(c.size);
	free(c.flags);
	free(c.buf);
	return err;
}
