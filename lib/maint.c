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
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

void maint_step(void)
{
	/* Read each time (it is cheap next to the file operation a step is)
	 * and counted only when set, so a test can fork a child after
	 * running maintenance itself. */
	static long steps;
	const char *s = getenv("ELOG_MAINT_CRASH_AT");
	if (s && *s && ++steps == strtol(s, NULL, 10))
		_exit(ELOG_MAINT_CRASH_STATUS);
}

/* The pid recorded in maint.lock by the run holding it, or 0. */
static long maint_holder(int dfd)
{
	char *text;
	size_t len;
	long pid = 0;
	if (fs_read_small(dfd, FN_MAINT, 64, &text, &len) == 0) {
		pid = strtol(text, NULL, 10);
		free(text);
	}
	return pid > 0 ? pid : 0;
}

int maint_list(struct maint *m)
{
	int err;
	seglist_free(&m->sl);
	m->nclosed = 0;
	if (m->wmfd >= 0 && (err = wm_read(m->wmfd, &m->wm)) != 0) {
		if (err == ELOG_CORRUPT)
			return errmsg_set(m->msg, err, "%s: corrupt watermark", FN_WATERMARK);
		return errmsg_set(m->msg, err, "%s: %s", FN_WATERMARK, strerror(err));
	}
	/* The watermark is read before the listing: the writer only moves it
	 * forward, so a segment below it stays closed whatever happens next. */
	if ((err = seglist_read(m->dfd, &m->sl)) != 0)
		return errmsg_set(m->msg, err, "listing segments: %s", strerror(err));
	if (m->sl.n == 0)
		return 0;
	uint64_t limit = m->sl.base[m->sl.n - 1];
	if (m->wm.segment_base < limit)
		limit = m->wm.segment_base;
	while (m->nclosed < m->sl.n && m->sl.base[m->nclosed] < limit)
		m->nclosed++;
	return 0;
}

int maint_open(struct maint *m, const char *dir, int wait, char *msg)
{
	int err;
	memset(m, 0, sizeof *m);
	m->msg = msg;
	m->dfd = m->lockfd = m->wmfd = -1;
	m->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m->dfd < 0)
		return errmsg_set(msg, errno, "%s", strerror(errno));
	if ((err = settings_load(m->dfd, &m->set, msg)) != 0)
		return err;
	if (fs_is_netfs(m->dfd))
		return errmsg_set(msg, ELOG_NETFS,
		    "on a network filesystem, where locks and fsync cannot be trusted");
	err = lock_take(m->dfd, FN_MAINT, wait, 1, &m->lockfd, msg);
	if (err == ELOG_LOCKED) {
		long pid = maint_holder(m->dfd);
		if (pid)
			return errmsg_set(msg, err, "another maintenance run holds %s "
			                  "(pid %ld)", FN_MAINT, pid);
		return errmsg_set(msg, err, "another maintenance run holds %s", FN_MAINT);
	}
	if (err)
		return err;
	m->wmfd = fs_openat(m->dfd, FN_WATERMARK, O_RDONLY, 0);
	if (m->wmfd < 0 && errno != ENOENT)
		return errmsg_set(msg, errno, "%s: %s", FN_WATERMARK, strerror(errno));
	return maint_list(m);
}

void maint_close(struct maint *m)
{
	seglist_free(&m->sl);
	/* Closing the lock file releases the lock; the pid in it stays, and
	 * is rewritten by the next holder. */
	int fds[] = { m->wmfd, m->lockfd, m->dfd };
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	m->wmfd = m->lockfd = m->dfd = -1;
}

int seg_info_read(struct maint *m, uint64_t base, struct seg_info *si)
{
	char name[NAME_MAX_LOCAL];
	unsigned char hdr[SEG_HDR];
	struct stat st;
	struct index ix;
	struct scan s;
	struct elog_record rec;
	uint64_t at, from = SEG_HDR;
	size_t got;
	int intact, err;

	memset(si, 0, sizeof *si);
	si->base = base;
	si->empty = 1;
	si->newest_ms = INT64_MIN;
	seg_name(name, base, SEG_EXT);
	int fd = fs_openat(m->dfd, name, O_RDONLY, 0);
	if (fd < 0)
		return errmsg_set(m->msg, errno, "%s: %s", name, strerror(errno));
	err = fstat(fd, &st) < 0 ? errno : fs_pread_full(fd, hdr, SEG_HDR, 0, &got);
	if (err) {
		close(fd);
		return errmsg_set(m->msg, err, "%s: %s", name, strerror(err));
	}
	if (got < SEG_HDR || (err = seg_header_check(hdr, base)) != 0) {
		close(fd);
		return errmsg_set(m->msg, err == ELOG_VERSION ? err : ELOG_CORRUPT,
		    "%s: %s", name, err == ELOG_VERSION ? "unsupported segment version"
		                                          : "bad segment header");
	}
	si->size = (uint64_t)st.st_size;
	if ((err = scan_init(&s, fd, base, SEG_HDR, si->size)) != 0) {
		close(fd);
		return errmsg_set(m->msg, err, "%s", strerror(err));
	}
	/* The index's last entry carries the newest timestamp before it; it
	 * is used only when the record it names is really there.  An index
	 * that is stale can only overstate the newest timestamp (compaction
	 * removes records, never adds newer ones), which keeps data longer. */
	if (idx_load(m->dfd, base, si->size, &ix, &intact) == 0) {
		if (ix.n > 0) {
			const struct idx_entry *e = &ix.e[ix.n - 1];
			scan_seek(&s, e->pos);
			if (scan_next(&s, &rec, &at) == 0 && rec.offset == e->offset) {
				from = e->pos;
				si->newest_ms = e->ts_max;
			}
		}
		idx_free(&ix);
	}
	scan_seek(&s, from);
	while ((err = scan_next(&s, &rec, &at)) == 0) {
		si->empty = 0;
		si->last = rec.offset;
		if (rec.ts_ms > si->newest_ms)
			si->newest_ms = rec.ts_ms;
	}
	int truncated = scan_truncated(&s);
	scan_free(&s);
	close(fd);
	if (err == ELOG_CORRUPT)
		return errmsg_set(m->msg, err, "%s: %s record at byte %llu", name,
		    truncated ? "truncated" : "corrupt", (unsigned long long)at);
	if (err != ELOG_END)
		return errmsg_set(m->msg, err, "%s: %s", name, strerror(err));
	if (si->empty)
		si->newest_ms = INT64_MIN;
	return 0;
}

/* Unlink name in the log directory; a file already gone is fine. */
static int unlink_name(struct maint *m, const char *name)
{
	maint_step();
	if (unlinkat(m->dfd, name, 0) < 0 && errno != ENOENT)
		return errmsg_set(m->msg, errno, "%s: %s", name, strerror(errno));
	return 0;
}

int seg_remove(struct maint *m, uint64_t base)
{
	char name[NAME_MAX_LOCAL];
	int err;
	/* The .log goes first: it is what makes a segment exist for readers
	 * and the writer, and an index left alone by a crash is removed by
	 * the next run.  The directory is synced before anything else
	 * happens, so removals are durable in the order they were made and a
	 * crash never leaves a hole in the middle of the log. */
	seg_name(name, base, SEG_EXT);
	if ((err = unlink_name(m, name)) != 0)
		return err;
	seg_name(name, base, IDX_EXT);
	if ((err = unlink_name(m, name)) != 0)
		return err;
	maint_step();
	if ((err = fs_fsync_dir(m->dfd)) != 0)
		return errmsg_set(m->msg, err, "fsync of the log directory: %s", strerror(err));
	return 0;
}

/* 1 when name is "<20 digits><ext>" with ext one of ours, *base set. */
struct namelist {
	char (*v)[NAME_MAX_LOCAL];
	uint64_t *base;
	size_t n, cap;
};

static int namelist_add(struct namelist *l, const char *name, uint64_t base)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char (*nv)[NAME_MAX_LOCAL] = realloc(l->v, cap * sizeof *nv);
		if (!nv)
			return ENOMEM;
		l->v = nv;
		uint64_t *nb = realloc(l->base, cap * sizeof *nb);
		if (!nb)
			return ENOMEM;
		l->base = nb;
		l->cap = cap;
	}
	snprintf(l->v[l->n], NAME_MAX_LOCAL, "%s", name);
	l->base[l->n++] = base;
	return 0;
}

struct strays {
	struct maint *m;
	uint64_t limit;
	struct namelist *tmp, *orphan;
};

static int stray(const char *name, void *arg)
{
	struct strays *st = arg;
	struct maint *m = st->m;
	uint64_t base;
	if (seg_parse_name(name, SEG_EXT MAINT_TMP_EXT, &base) ||
	    seg_parse_name(name, IDX_EXT MAINT_TMP_EXT, &base))
		return namelist_add(st->tmp, name, base);
	if (seg_parse_name(name, IDX_EXT, &base) && base < st->limit) {
		size_t lo = 0, hi = m->sl.n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (m->sl.base[mid] < base)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == m->sl.n || m->sl.base[lo] != base)
			return namelist_add(st->orphan, name, base);
	}
	return 0;
}

/* Collect our temporary files, and index files with no segment below the
 * first segment that is not closed (where the writer never creates one). */
static int find_stray(struct maint *m, struct namelist *tmp, struct namelist *orphan)
{
	struct strays st = { m, m->nclosed < m->sl.n ? m->sl.base[m->nclosed] : 0,
	                     tmp, orphan };
	return fs_dir_each(m->dfd, stray, &st);
}

/* Check the index of segment base, rebuilding it when it looks wrong. */
static int check_index(struct maint *m, uint64_t base)
{
	char name[NAME_MAX_LOCAL];
	struct stat st;
	int err = 0;
	seg_name(name, base, SEG_EXT);
	int fd = fs_openat(m->dfd, name, O_RDONLY, 0);
	if (fd < 0)
		return errno == ENOENT ? 0 : errmsg_set(m->msg, errno, "%s: %s", name,
		                                        strerror(errno));
	if (fstat(fd, &st) < 0)
		err = errmsg_set(m->msg, errno, "%s: %s", name, strerror(errno));
	else if (!idx_quick_check(m->dfd, fd, base, (uint64_t)st.st_size,
	                          m->set.index_interval)) {
		maint_step();
		err = idx_rebuild(m->dfd, fd, base, (uint64_t)st.st_size,
		                  m->set.index_interval, NULL, m->msg);
	}
	close(fd);
	return err;
}

int maint_cleanup(struct maint *m, uint64_t *fixed)
{
	struct namelist tmp = { 0 }, orphan = { 0 };
	int err;
	*fixed = 0;
	if ((err = find_stray(m, &tmp, &orphan)) != 0) {
		err = errmsg_set(m->msg, err, "listing the log directory: %s", strerror(err));
		goto out;
	}
	for (size_t i = 0; i < tmp.n; i++) {
		if ((err = unlink_name(m, tmp.v[i])) != 0)
			goto out;
		(*fixed)++;
	}
	for (size_t i = 0; i < orphan.n; i++) {
		if ((err = unlink_name(m, orphan.v[i])) != 0)
			goto out;
		(*fixed)++;
	}
	if (tmp.n + orphan.n > 0) {
		maint_step();
		if ((err = fs_fsync_dir(m->dfd)) != 0) {
			err = errmsg_set(m->msg, err, "fsync of the log directory: %s",
			                 strerror(err));
			goto out;
		}
	}
	/* A temporary file may be all that is left of a swap that renamed the
	 * segment but not yet its index. */
	for (size_t i = 0; i < tmp.n; i++)
		if ((err = check_index(m, tmp.base[i])) != 0)
			goto out;

	/* Segments a merge already copied into their predecessor. */
	size_t removed = 0;
	for (size_t i = 0; i < m->nclosed; i++) {
		struct seg_info si;
		if ((err = seg_info_read(m, m->sl.base[i], &si)) != 0)
			goto out;
		while (!si.empty && i + 1 < m->nclosed && m->sl.base[i + 1] <= si.last) {
			/* Only a segment whose every record is also in its
			 * predecessor is a merge's leftover; other overlaps
			 * are damage, and damage is never deleted. */
			struct seg_info ni;
			if ((err = seg_info_read(m, m->sl.base[i + 1], &ni)) != 0)
				goto out;
			if (!ni.empty && ni.last > si.last) {
				char a[NAME_MAX_LOCAL], b[NAME_MAX_LOCAL];
				seg_name(a, m->sl.base[i], SEG_EXT);
				seg_name(b, m->sl.base[i + 1], SEG_EXT);
				err = errmsg_set(m->msg, ELOG_CORRUPT, "%s runs into %s, which holds "
				                 "later records too: the segments overlap (see "
				                 "elog-verify)", a, b);
				goto out;
			}
			if ((err = seg_remove(m, m->sl.base[i + 1])) != 0)
				goto out;
			memmove(&m->sl.base[i + 1], &m->sl.base[i + 2],
			        (m->sl.n - i - 2) * sizeof m->sl.base[0]);
			m->sl.n--;
			m->nclosed--;
			removed++;
		}
	}
	*fixed += removed;
	if (removed)
		err = maint_list(m);
out:
	free(tmp.v);
	free(tmp.base);
	free(orphan.v);
	free(orphan.base);
	return err;
}
