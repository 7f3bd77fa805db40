/*
 * maint.c: what retention and compaction share: opening a log under the
 * maintenance lock, deciding which segments are closed, summarising and
 * removing a segment, and cleaning up after an interrupted run.
 *
 * Closed segments.  The writer appends to the newest segment on disk, and
 * the watermark names the segment its last durable batch went to.  A
 * segment is closed, and may be changed here, only when its base is below
 * both: the writer syncs a segment before it creates the next one, so a
 * closed segment is complete and durable, and the writer never opens it
 * again.  A log whose watermark was never written has no closed segment.
 *
 * Cleanup.  An interrupted compaction can leave three things behind, each
 * of which readers already cope with, and which the next run removes:
 *   - temporary files "<base>.log.compact" and "<base>.idx.compact" (the
 *     segment they were meant to replace is intact; its index is checked);
 *   - after a merge renamed its output over segment A but before it removed
 *     the merged segment B: A's records run into B's range.  Every record
 *     of B that compaction kept is in A already, so B goes.  A reader never
 *     sees B's records twice: at the end of A it looks up its next offset,
 *     lands in B and skips every record below that offset;
 *   - an index whose segment is gone (a removal interrupted between the
 *     two unlinks, or a writer rebuilding an index as the segment went).
 * Retention can leave segments below the log's start (see start.c), which
 * every listing already leaves out; the next run unlinks them.  A start
 * file that listings ignore (damaged, or past the newest segment) is
 * written again to name the first segment, which hides nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "files.h"
#include "maint.h"

/* List the segments again and decide which are closed. */
static int maint_list(struct maint *m)
{
	int err;
	elog__seglist_free(&m->sl);
	m->nclosed = 0;
	if (m->wmfd >= 0 && (err = elog__wm_load(m->dfd, m->wmfd, &m->wm)) != 0)
		return elog__errmsg_set(m->msg, err, "%s: %s", FN_WATERMARK, elog_strerror(err));
	/* The watermark is read before the listing: the writer only moves it
	 * forward, so a segment below it stays closed whatever happens next. */
	if ((err = elog__seglist_read_start(m->dfd, &m->sl, m->set.id, &m->start)) != 0) {
		if (err == ELOG_BADVERSION)
			return elog__errmsg_set(m->msg, err, "%s: unsupported version", FN_START);
		return elog__errmsg_set(m->msg, err, "listing segments: %s", elog_strerror(err));
	}
	if (m->sl.n == 0)
		return 0;
	uint64_t limit = m->sl.base[m->sl.n - 1];
	if (m->wm.segment_base < limit)
		limit = m->wm.segment_base;
	while (m->nclosed < m->sl.n && m->sl.base[m->nclosed] < limit)
		m->nclosed++;
	return 0;
}

/* The chain of the closed segments, checked before anything changes them
 * (DESIGN.md, "Where each fact lives"): a segment whose header or seal
 * names another log, or whose header names another base, stops the run;
 * the offsets of a segment missing after one whose seal names it are
 * recorded as lost (FN_SALVAGED) first, so that the gap stays reported
 * once a merge or a removal has gone across it. */
static int chain_check(struct maint *m)
{
	struct holes h = { 0 };
	unsigned char hdr[SEG_HDR], id[SEAL_ID_LEN];
	char name[NAME_MAX_LOCAL];
	int err = elog__holes_load(m->dfd, &h);
	if (err)
		err = elog__errmsg_set(m->msg, err, "%s: %s", FN_SALVAGED, elog_strerror(err));
	elog__seal_id(m->set.id, id);
	for (size_t i = 0; !err && i < m->nclosed; i++) {
		uint64_t base = m->sl.base[i], next = m->sl.base[i + 1], a, b;
		struct stat st;
		struct seg_end e;
		size_t got;
		int fd;
		if ((err = elog__seg_open_raw(m->dfd, base, O_RDONLY, &fd, hdr, &got, &st, m->msg)))
			break;
		int fault = elog__seg_header_fault(hdr, got, base, m->set.id);
		int sealed = fault == SEG_FAULT_NONE &&
		             elog__seg_end(fd, elog__seg_header_sealed(hdr), base,
		                           (uint64_t)st.st_size, NULL, &e) == 0 &&
		             e.chain == CHAIN_SEALED;
		struct seal seal = e.seal;
		close(fd);
		elog__seg_name(name, base, SEG_EXT);
		if (fault == SEG_FAULT_BASE || fault == SEG_FAULT_LOG)
			err = elog__seg_header_verify(hdr, got, base, m->set.id, m->msg);
		else if (sealed && memcmp(seal.id, id, SEAL_ID_LEN) != 0)
			err = elog__errmsg_set(m->msg, ELOG_CORRUPT,
			                       "%s: its seal names another log: move it out of "
			                       "the log directory",
			                       name);
		else if (sealed && seal.next < next &&
		         !(elog__holes_find(&h, seal.next, next - 1, &a, &b) && a <= seal.next &&
		           b >= next - 1) &&
		         (err = elog__holes_add(m->dfd, seal.next, next - 1, elog__fs_now_ms())))
			err = elog__errmsg_set(m->msg, err, "%s: %s", FN_SALVAGED,
			                       elog_strerror(err));
	}
	elog__holes_free(&h);
	return err;
}

int elog__maint_open(struct maint *m, const char *dir, int64_t wait, char *msg)
{
	int64_t wait_ms;
	int err;
	memset(m, 0, sizeof *m);
	m->msg = msg;
	m->dfd = m->lockfd = m->wmfd = -1;
	if ((err = elog__wait_ms(wait, 0, &wait_ms, msg)) != 0)
		return err;
	if ((err = elog__settings_open(dir, &m->dfd, &m->set, msg)) != 0)
		return err;
	if (elog__fs_is_netfs(m->dfd))
		return elog__errmsg_set(
		        msg, ELOG_NETFS,
		        "on a network filesystem, where locks and fsync cannot be trusted");
	int upgraded;
	if ((err = elog__maint_lock(m->dfd, wait_ms, &m->lockfd, msg)) != 0 ||
	    (err = elog__settings_upgrade(m->dfd, &m->set, 1, 0, &upgraded, msg)) != 0)
		return err;
	m->wmfd = elog__fs_openat(m->dfd, FN_WATERMARK, O_RDONLY, 0);
	if (m->wmfd < 0 && errno != ENOENT)
		return elog__errmsg_set(msg, errno, "%s: %s", FN_WATERMARK, elog_strerror(errno));
	if ((err = maint_list(m)) != 0)
		return err;
	return chain_check(m);
}

void elog__maint_close(struct maint *m)
{
	elog__seglist_free(&m->sl);
	/* Closing the lock file releases the lock; the pid in it stays, and
	 * is rewritten by the next holder. */
	int fds[] = { m->wmfd, m->lockfd, m->dfd };
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	m->wmfd = m->lockfd = m->dfd = -1;
}

int elog__maint_scan_error(struct maint *m, uint64_t base, const struct scan *s, int err,
                           uint64_t at)
{
	char name[NAME_MAX_LOCAL];
	elog__seg_name(name, base, SEG_EXT);
	if (err == ELOG_CORRUPT)
		return elog__errmsg_set(m->msg, err, "%s: %s record at byte %llu", name,
		                        elog__scan_truncated(s) ? "truncated" : "corrupt",
		                        (unsigned long long)at);
	if (err == ELOG_INVALID)
		return elog__errmsg_set(m->msg, ELOG_CORRUPT,
		                        "%s: offset out of order at "
		                        "byte %llu",
		                        name, (unsigned long long)at);
	return elog__errmsg_set(m->msg, err, "%s: %s", name, elog_strerror(err));
}

int elog__seg_info_read(struct maint *m, uint64_t base, struct seg_info *si)
{
	struct stat st;
	struct index ix;
	struct scan s;
	struct elog_record rec;
	uint64_t at, from = SEG_HDR;
	int fd, intact, err;

	memset(si, 0, sizeof *si);
	si->base = base;
	si->empty = 1;
	si->newest_ms = INT64_MIN;
	if ((err = elog__seg_open(m->dfd, base, O_RDONLY, &fd, NULL, &st, m->msg)) != 0)
		return err;
	si->size = (uint64_t)st.st_size;
	if ((err = elog__scan_init(&s, fd, base, SEG_HDR, si->size)) != 0) {
		close(fd);
		return elog__errmsg_set(m->msg, err, "%s", elog_strerror(err));
	}
	/* The index's last entry carries the newest timestamp before it; it
	 * is used only when the record it names is really there.  An index
	 * that is stale can only overstate the newest timestamp (compaction
	 * removes records, never adds newer ones), which keeps data longer. */
	if (elog__idx_load(m->dfd, base, si->size, &ix, &intact) == 0) {
		if (ix.n > 0) {
			const struct idx_entry *e = &ix.e[ix.n - 1];
			elog__scan_seek(&s, e->pos);
			if (elog__scan_next(&s, &rec, &at) == 0 && rec.offset == e->offset) {
				from = e->pos;
				si->newest_ms = e->ts_max;
			}
		}
		elog__idx_free(&ix);
	}
	elog__scan_seek(&s, from);
	while ((err = elog__scan_next(&s, &rec, &at)) == 0) {
		si->empty = 0;
		si->last = rec.offset;
		if (rec.ts_ms > si->newest_ms)
			si->newest_ms = rec.ts_ms;
	}
	err = err == ELOG_END ? 0 : elog__maint_scan_error(m, base, &s, err, at);
	elog__scan_free(&s);
	close(fd);
	if (err)
		return err;
	if (si->empty)
		si->newest_ms = INT64_MIN;
	return 0;
}

int elog__maint_unlink(struct maint *m, const char *name)
{
	elog__maint_step();
	if (unlinkat(m->dfd, name, 0) < 0 && errno != ENOENT)
		return elog__errmsg_set(m->msg, errno, "%s: %s", name, elog_strerror(errno));
	return 0;
}

int elog__maint_sync_dir(struct maint *m)
{
	elog__maint_step();
	int err = elog__fs_fsync_dir(m->dfd);
	if (err)
		return elog__errmsg_set(m->msg, err, "fsync of the log directory: %s",
		                        elog_strerror(err));
	return 0;
}

int elog__seg_remove(struct maint *m, uint64_t base)
{
	char name[NAME_MAX_LOCAL];
	int err;
	/* The .log goes first: it is what makes a segment exist for readers
	 * and the writer, and an index left alone by a crash is removed by
	 * the next run. */
	elog__seg_name(name, base, SEG_EXT);
	if ((err = elog__maint_unlink(m, name)) != 0)
		return err;
	elog__seg_name(name, base, IDX_EXT);
	if ((err = elog__maint_unlink(m, name)) != 0)
		return err;
	/* The directory is synced before anything else happens, so removals
	 * are durable in the order they were made and a crash never leaves
	 * a hole in the middle of the log. */
	return elog__maint_sync_dir(m);
}

/* File names, each with the base offset of its segment. */
struct namelist {
	struct named {
		char name[NAME_MAX_LOCAL];
		uint64_t base;
	} * v;
	size_t n, cap;
};

static int namelist_add(struct namelist *l, const char *name, uint64_t base)
{
	struct named *v = elog__grow(l->v, &l->cap, l->n + 1, sizeof *v, 16);
	if (!v)
		return ENOMEM;
	l->v = v;
	snprintf(l->v[l->n].name, NAME_MAX_LOCAL, "%s", name);
	l->v[l->n++].base = base;
	return 0;
}

/* Unlinking files that no listing shows any more (below the log's start),
 * in any order, so several at a time: unlinking a file can wait on the
 * device (a filesystem mounted with discard trims the freed blocks before
 * unlink returns), and those waits overlap.  It pays: elog-retain dropping
 * 20,000 segments of 4 KiB (40,000 unlinks, ext4 mounted with discard, two
 * busy cores) took 11-17 s with these threads and 74-91 s with one. */
#define UNLINK_THREADS 8

struct unlinker {
	struct maint *m;
	const struct namelist *l;
	size_t next;   /* the next name to take, atomically */
	size_t failed; /* 1 + the first name that failed, or 0 */
	int err;
};

static void *unlink_worker(void *arg)
{
	struct unlinker *u = arg;
	for (;;) {
		size_t i = __atomic_fetch_add(&u->next, 1, __ATOMIC_RELAXED);
		if (i >= u->l->n)
			return NULL;
		elog__maint_step();
		if (unlinkat(u->m->dfd, u->l->v[i].name, 0) < 0 && errno != ENOENT) {
			size_t none = 0;
			int e = errno;
			if (__atomic_compare_exchange_n(&u->failed, &none, i + 1, 0,
			                                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				u->err = e;
			return NULL;
		}
	}
}

static int unlink_hidden(struct maint *m, const struct namelist *l)
{
	struct unlinker u = { m, l, 0, 0, 0 };
	pthread_t t[UNLINK_THREADS - 1];
	size_t nt = 0;
	while (nt < UNLINK_THREADS - 1 && nt + 1 < l->n &&
	       pthread_create(&t[nt], NULL, unlink_worker, &u) == 0)
		nt++;
	unlink_worker(&u);
	for (size_t i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	if (u.failed)
		return elog__errmsg_set(m->msg, u.err, "%s: %s", l->v[u.failed - 1].name,
		                        elog_strerror(u.err));
	return 0;
}

int elog__seg_remove_below(struct maint *m, uint64_t start)
{
	struct namelist l = { 0 };
	char name[NAME_MAX_LOCAL];
	size_t k = 0;
	int err = 0;
	while (k < m->nclosed && m->sl.base[k] < start)
		k++;
	if (k == 0)
		return 0;
	for (size_t i = 0; i < k && !err; i++) {
		elog__seg_name(name, m->sl.base[i], SEG_EXT);
		if ((err = namelist_add(&l, name, m->sl.base[i])) == 0) {
			elog__seg_name(name, m->sl.base[i], IDX_EXT);
			err = namelist_add(&l, name, m->sl.base[i]);
		}
	}
	if (err) {
		err = elog__errmsg_set(m->msg, err, "%s", elog_strerror(err));
		goto out;
	}
	/* The start first, durably: from then on every listing leaves these
	 * segments out, so the order in which their unlinks reach the disk
	 * no longer matters, and one sync at the end makes them all
	 * durable. */
	elog__maint_step();
	if ((err = elog__start_write(m->dfd, start, m->set.id)) == ENOSPC || err == EDQUOT) {
		/* A full disk, and no start file to rewrite in place (a log
		 * made by an older version): the segments go one at a time,
		 * oldest first, each unlink synced before the next, which
		 * never leaves a hole either.  This is how such a box gets
		 * its space back.  A start file that could not be rewritten
		 * goes first: it would claim the log began below its first
		 * segment.  (Everything below it is unlinked and synced, by
		 * elog__maint_cleanup().) */
		size_t i = 0;
		if ((err = elog__maint_unlink(m, FN_START)) == 0)
			err = elog__maint_sync_dir(m);
		if (!err)
			m->start.state = START_NONE;
		while (i < k && !err)
			err = elog__seg_remove(m, m->sl.base[i++]);
		memmove(m->sl.base, m->sl.base + i, (m->sl.n - i) * sizeof m->sl.base[0]);
		m->sl.n -= i;
		m->nclosed -= i;
		/* With room made, the log gets its start file after all, so
		 * that the next run rewrites it in place; failing that, the
		 * log is right without one. */
		if (!err && elog__start_write(m->dfd, start, m->set.id) == 0) {
			m->start.state = START_OK;
			m->start.start = start;
		}
		goto out;
	}
	if (err) {
		err = elog__errmsg_set(m->msg, err, "%s: %s", FN_START, elog_strerror(err));
		goto out;
	}
	m->start.state = START_OK;
	m->start.start = start;
	if ((err = unlink_hidden(m, &l)) != 0)
		goto out;
	memmove(m->sl.base, m->sl.base + k, (m->sl.n - k) * sizeof m->sl.base[0]);
	m->sl.n -= k;
	m->nclosed -= k;
	err = elog__maint_sync_dir(m);
out:
	free(l.v);
	return err;
}

struct strays {
	struct maint *m;
	uint64_t limit;
	struct namelist *tmp, *orphan, *below;
	uint64_t dropped; /* temporary files of processes that are gone */
	int said;         /* the message is set */
};

static int stray(const char *name, void *arg)
{
	struct strays *st = arg;
	struct maint *m = st->m;
	struct file_class fc;
	int kind = elog__file_classify(name, &fc);
	uint64_t base = fc.num;
	if (kind == FILE_COMPACT_TMP && !fc.tmp)
		return namelist_add(st->tmp, name, base);
	/* The temporary file of a process killed before it renamed it (a
	 * cut tail kept by elog-verify --repair, a commit, an index),
	 * removed under the lock that tells it from a living one's. */
	if (fc.tmp) {
		int dropped, err;
		elog__maint_step();
		if ((err = elog__file_tmp_drop(m->dfd, name, &dropped)) != 0) {
			st->said = 1;
			return elog__errmsg_set(m->msg, err, "%s: %s", name, elog_strerror(err));
		}
		st->dropped += (uint64_t)dropped;
		return 0;
	}
	/* A segment not listed, below the first that is, lies below the
	 * log's start (the writer only ever adds segments above). */
	if (kind == FILE_SEGMENT && m->start.state == START_OK && m->sl.n > 0 &&
	    base < m->sl.base[0] && base < m->start.start)
		return namelist_add(st->below, name, base);
	if (kind == FILE_INDEX && base < st->limit) {
		ssize_t k = elog__seglist_find(&m->sl, base);
		if (k < 0 || m->sl.base[k] != base)
			return namelist_add(st->orphan, name, base);
	}
	return 0;
}

/* Collect our temporary files, segments below the log's start, and index
 * files with no segment below the first segment that is not closed (where
 * the writer never creates one). */
static int find_stray(struct maint *m, struct namelist *tmp, struct namelist *orphan,
                      struct namelist *below, uint64_t *dropped)
{
	struct strays st = {
		m, m->nclosed < m->sl.n ? m->sl.base[m->nclosed] : 0, tmp, orphan, below, 0, 0
	};
	int err = elog__fs_dir_each(m->dfd, stray, &st);
	*dropped = st.dropped;
	if (err && !st.said)
		err = elog__errmsg_set(m->msg, err, "listing the log directory: %s",
		                       elog_strerror(err));
	return err;
}

/* Check the index of segment base, rebuilding it when it looks wrong. */
static int check_index(struct maint *m, uint64_t base)
{
	char name[NAME_MAX_LOCAL];
	struct stat st;
	int err = 0;
	elog__seg_name(name, base, SEG_EXT);
	int fd = elog__fs_openat_stat(m->dfd, name, O_RDONLY, 0, &st);
	if (fd < 0)
		return errno == ENOENT ? 0
		                       : elog__errmsg_set(m->msg, errno, "%s: %s", name,
		                                          elog_strerror(errno));
	if (!elog__idx_quick_check(m->dfd, fd, base, (uint64_t)st.st_size, m->set.index_interval)) {
		elog__maint_step();
		err = elog__idx_rebuild(m->dfd, fd, base, (uint64_t)st.st_size,
		                        m->set.index_interval, NULL, m->msg);
	}
	close(fd);
	return err;
}

/* A start file that is damaged, or names an offset past the newest
 * segment, is ignored by every listing: the log starts at its first
 * segment, which the file is made to say again. */
static int fix_start(struct maint *m, uint64_t *fixed)
{
	int err;
	if ((m->start.state != START_DAMAGED && m->start.state != START_BEYOND) || m->sl.n == 0)
		return 0;
	elog__maint_step();
	if ((err = elog__start_write(m->dfd, m->sl.base[0], m->set.id)) != 0)
		return elog__errmsg_set(m->msg, err, "%s: %s", FN_START, elog_strerror(err));
	m->start.state = START_OK;
	m->start.start = m->sl.base[0];
	(*fixed)++;
	return 0;
}

/* Remove what find_stray() collects, then check the index of each segment
 * whose replacement was interrupted. */
static int remove_strays(struct maint *m, uint64_t *fixed)
{
	struct namelist tmp = { 0 }, orphan = { 0 }, below = { 0 };
	uint64_t dropped = 0;
	int err;
	if ((err = find_stray(m, &tmp, &orphan, &below, &dropped)) != 0)
		goto out;
	*fixed += dropped;
	/* The index of a segment below the start is among the orphans. */
	if ((err = unlink_hidden(m, &below)) != 0)
		goto out;
	*fixed += below.n;
	for (size_t i = 0; i < tmp.n + orphan.n; i++) {
		const char *name = i < tmp.n ? tmp.v[i].name : orphan.v[i - tmp.n].name;
		if ((err = elog__maint_unlink(m, name)) != 0)
			goto out;
		(*fixed)++;
	}
	if (tmp.n + orphan.n + below.n + dropped > 0 && (err = elog__maint_sync_dir(m)) != 0)
		goto out;
	/* A temporary file may be all that is left of a swap that renamed the
	 * segment but not yet its index. */
	for (size_t i = 0; i < tmp.n; i++)
		if ((err = check_index(m, tmp.v[i].base)) != 0)
			goto out;
out:
	free(tmp.v);
	free(orphan.v);
	free(below.v);
	return err;
}

/* Remove the segments a merge already copied into their predecessor. */
static int remove_merged(struct maint *m, uint64_t *fixed)
{
	size_t removed = 0;
	int err;
	for (size_t i = 0; i < m->nclosed; i++) {
		struct seg_info si;
		/* A segment that cannot be read is no merge's output, as far
		 * as can be told: it is left to the run (retention judges it
		 * by its neighbours; elog-verify reports it). */
		if ((err = elog__seg_info_read(m, m->sl.base[i], &si)) != 0) {
			if (err != ELOG_CORRUPT && err != ELOG_BADVERSION)
				return err;
			m->msg[0] = '\0';
			continue;
		}
		while (!si.empty && i + 1 < m->nclosed && m->sl.base[i + 1] <= si.last) {
			/* Only a segment whose every record is also in its
			 * predecessor is a merge's leftover; other overlaps
			 * are damage, and damage is never deleted. */
			struct seg_info ni;
			if ((err = elog__seg_info_read(m, m->sl.base[i + 1], &ni)) != 0) {
				if (err != ELOG_CORRUPT && err != ELOG_BADVERSION)
					return err;
				m->msg[0] = '\0';
				break;
			}
			if (!ni.empty && ni.last > si.last) {
				char a[NAME_MAX_LOCAL], b[NAME_MAX_LOCAL];
				elog__seg_name(a, m->sl.base[i], SEG_EXT);
				elog__seg_name(b, m->sl.base[i + 1], SEG_EXT);
				return elog__errmsg_set(m->msg, ELOG_CORRUPT,
				                        "%s runs into %s, which "
				                        "holds later records too: the segments "
				                        "overlap",
				                        a, b);
			}
			if ((err = elog__seg_remove(m, m->sl.base[i + 1])) != 0)
				return err;
			memmove(&m->sl.base[i + 1], &m->sl.base[i + 2],
			        (m->sl.n - i - 2) * sizeof m->sl.base[0]);
			m->sl.n--;
			m->nclosed--;
			removed++;
		}
	}
	*fixed += removed;
	return removed ? maint_list(m) : 0;
}

int elog__maint_cleanup(struct maint *m, uint64_t *fixed)
{
	int err;
	*fixed = 0;
	if ((err = fix_start(m, fixed)) != 0 || (err = remove_strays(m, fixed)) != 0)
		return err;
	return remove_merged(m, fixed);
}
