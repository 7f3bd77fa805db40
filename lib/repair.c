/*
 * repair.c: what elog-verify --repair changes, the only part of
 * verification that writes.  verify.c checks the log first and records in
 * struct verify what is wrong; this file acts on it.
 *
 * Repair takes maint.lock and the writer's LOCK, so nothing else changes
 * the log while it works.  It only ever rebuilds derived data (indexes, the
 * watermark, a start file that listings ignore or that falls inside a
 * segment, rewritten to name the first segment they list, so nothing read
 * changes) and cuts the active segment's damaged tail after copying the
 * cut bytes aside; a closed segment or a header is never cut, because what
 * follows the damage there may hold acknowledged records that another tool
 * could still recover.  With ELOG_VERIFY_SALVAGE, damage below the durable
 * end of the active segment is salvaged instead of cut (salvage_active()).
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
#include "writer.h"
#include "maint.h"
#include "verify.h"

/* How long a repair waits by default for maint.lock and then for the
 * writers' LOCK: as a writer waits for LOCK, long enough for any batch to
 * be written; a maintenance run that holds maint.lock longer makes the
 * repair fail with ELOG_LOCKED, to be run again. */
#define REPAIR_WAIT_MS 10000

/* Report what was done. */
#define repaired(v, ...) \
	elog__verify_report(v, ELOG_PROBLEM_REPAIRED, ELOG_HINT_NONE, NULL, __VA_ARGS__)

int elog__repair_lock(struct verify *v, int *lockfd, int *maintfd)
{
	struct stat st;
	int err;
	/* Taking LOCK creates it: make sure this is a log first. */
	if (fstatat(v->dfd, FN_SETTINGS, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT
		               ? elog__errmsg_set(v->msg, ELOG_NOTLOG,
		                                  "not an elog directory (no %s file)", FN_SETTINGS)
		               : elog__errmsg_set(v->msg, errno, "%s: %s", FN_SETTINGS,
		                                  elog_strerror(errno));
	/* maint.lock first, as compaction and retention take it, then
	 * LOCK: waiting for a maintenance run while holding LOCK would
	 * stop every writer for as long.  Writers hold LOCK for one batch
	 * at a time: wait for it as a writer does.  Emptying their state
	 * makes every writer find the tail anew after the repair. */
	int64_t wait_ms;
	if ((err = elog__wait_ms(v->o ? v->o->wait_ms : 0, REPAIR_WAIT_MS, &wait_ms, v->msg)) !=
	            0 ||
	    (err = elog__maint_lock(v->dfd, wait_ms, maintfd, v->msg)) != 0 ||
	    (err = elog__lock_open(v->dfd, FN_LOCK, lockfd, v->msg)) != 0 ||
	    (err = elog__lock_acquire(*lockfd, wait_ms, v->msg)) != 0)
		return err;
	/* A sick state is kept: a writer's fdatasync failed, the bytes past
	 * the watermark may be dropped pages that still read back, and only
	 * the next writer, seeing sick, cuts them (under a new epoch).
	 * Emptied, the mark would be lost and they would be published.  So
	 * is a failed sync that its writer did not live to mark (LOCK's sync
	 * records), and only the state is emptied: the records stay. */
	struct lock_state ls;
	struct sync_rec slot;
	unsigned char boot[16];
	elog__lock_boot_id(boot);
	v->sick = elog__lock_sick(*lockfd, &ls, boot, &slot);
	if (!v->sick && (err = elog__lock_state_clear(*lockfd)) != 0)
		return elog__errmsg_set(v->msg, err, "%s: %s", FN_LOCK, elog_strerror(err));
	return 0;
}

/* Copy bytes [from, end) of segment fd to a new file beside it, synced,
 * so that cutting them loses nothing.  Holes are skipped (the copy has
 * them too), and the copy is written under a temporary name and renamed:
 * a repair killed half way leaves "<kept>.tmp.<pid>.<n>", which the next
 * repair or writer removes (elog__file_tmp_drop()). */
static int keep_tail(struct verify *v, int fd, const char *name, uint64_t from, uint64_t end,
                     char *kept, size_t kept_size)
{
	char tmp[NAME_MAX_LOCAL + 64];
	struct stat st;
	int out = -1, err = 0;
	int64_t now = elog__fs_now_ms();
	for (int attempt = 0;; attempt++) {
		if (attempt == 0)
			snprintf(kept, kept_size, "%s" CUT_INFIX "%lld", name, (long long)now);
		else
			snprintf(kept, kept_size, "%s" CUT_INFIX "%lld-%d", name, (long long)now,
			         attempt);
		if (fstatat(v->dfd, kept, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			break;
		if (attempt > 100)
			return elog__errmsg_set(v->msg, EEXIST, "%s: %s", kept,
			                        elog_strerror(EEXIST));
	}
	out = elog__fs_tmp_create(v->dfd, kept, tmp, sizeof tmp);
	if (out < 0)
		return elog__errmsg_set(v->msg, errno, "%s: %s", tmp, elog_strerror(errno));
	unsigned char *buf = malloc(1u << 16);
	if (!buf)
		err = ENOMEM;
	for (uint64_t at = from; !err && at < end;) {
		/* The next stretch of data and where it ends; a file system
		 * that cannot tell is copied as if it were all data. */
		off_t data = lseek(fd, (off_t)at, SEEK_DATA), hole;
		if (data < 0 && errno == ENXIO)
			break; /* nothing but a hole to the end */
		if (data < 0)
			data = (off_t)at;
		if ((uint64_t)data >= end)
			break;
		hole = lseek(fd, data, SEEK_HOLE);
		uint64_t stop = hole < 0 || (uint64_t)hole > end ? end : (uint64_t)hole;
		for (at = (uint64_t)data; !err && at < stop;) {
			size_t want = stop - at > (1u << 16) ? (1u << 16) : (size_t)(stop - at),
			       got;
			if ((err = elog__fs_pread_full(fd, buf, want, (off_t)at, &got)) != 0)
				break;
			if (got == 0) {
				at = end; /* the file ends here */
				break;
			}
			err = elog__fs_pwrite_all(out, buf, got, (off_t)(at - from));
			at += got;
		}
	}
	free(buf);
	if (!err && ftruncate(out, (off_t)(end - from)) < 0) /* a hole at its end */
		err = errno;
	if (!err && fsync(out) < 0)
		err = errno;
	if (!err && renameat(v->dfd, tmp, v->dfd, kept) < 0)
		err = errno;
	if (err)
		unlinkat(v->dfd, tmp, 0);
	close(out); /* drops the lock once the temporary name is gone */
	if (!err)
		err = elog__fs_fsync_dir(v->dfd);
	if (err)
		return elog__errmsg_set(v->msg, err, "%s: %s", kept, elog_strerror(err));
	return 0;
}

static int rebuild_index(struct verify *v, int fd, const struct segstate *ss)
{
	char name[NAME_MAX_LOCAL], msg[ELOG_MSG_MAX];
	int err = elog__idx_rebuild(v->dfd, fd, ss->base, ss->size, v->set.index_interval, NULL,
	                            msg);
	elog__seg_name(name, ss->base, IDX_EXT);
	if (err == ELOG_CORRUPT)
		return 0; /* its segment is damaged: reported already */
	if (err)
		return elog__errmsg_set(v->msg, err, "%s", msg);
	repaired(v, name, ELOG_NOPOS, "rebuilt from its segment");
	return 0;
}

/* Offsets are forever: the cut took records below the durable end, whose
 * offsets were acknowledged and may be known to consumers (committed
 * offsets, idempotency keys).  The log goes on at that end, in a new
 * segment, and the offsets lost are recorded as a damage gap (salvaged),
 * which readers report, so that no offset ever names a second record. */
static int resume_above(struct verify *v, int fd, const struct segstate *ss, uint64_t end,
                        struct watermark *wm)
{
	char name[NAME_MAX_LOCAL];
	unsigned char hdr[SEG_HDR];
	size_t got;
	int sfd, ifd, err;
	if ((err = elog__fs_pread_full(fd, hdr, SEG_HDR, 0, &got)) != 0 || got != SEG_HDR)
		return elog__errmsg_set(v->msg, err ? err : ELOG_CORRUPT, "reading a header: %s",
		                        elog_strerror(err ? err : ELOG_CORRUPT));
	/* The loss is recorded first: a power loss after the new segment
	 * exists must not leave the offsets below it lost without a word. */
	if ((err = elog__holes_add(v->dfd, ss->next, end - 1, elog__fs_now_ms())) != 0)
		return elog__errmsg_set(v->msg, err, "%s: %s", FN_SALVAGED, elog_strerror(err));
	/* The cut segment is closed from now on: it ends with its seal,
	 * naming the new one, durable before that one exists.  One sealed
	 * already (the segments after it are gone) keeps its seal: what it
	 * names up to end is the gap just recorded. */
	if (elog__seg_header_sealed(hdr) &&
	    !(ss->chain == CHAIN_SEALED && ss->seal.next <= end)) {
		struct seal seal = elog__seal_of(v->set.id, end, ss->next, ss->size);
		if ((err = elog__seal_write(fd, ss->size, &seal)) != 0 ||
		    (fdatasync(fd) < 0 && (err = errno) != 0))
			return elog__errmsg_set(v->msg, err, "%s: %s", ss->name,
			                        elog_strerror(err));
	}
	elog__seg_name(name, end, SEG_EXT);
	if ((err = elog__seg_create(v->dfd, end, elog__seg_header_flags(hdr), v->set.id, &sfd,
	                            &ifd)) != 0)
		return elog__errmsg_set(v->msg, err, "%s: %s", name, elog_strerror(err));
	if (fdatasync(sfd) < 0 || fdatasync(ifd) < 0)
		err = errno;
	close(sfd);
	close(ifd);
	if (!err)
		err = elog__fs_fsync_dir(v->dfd);
	if (err) {
		/* A failed sync may have dropped its header while it still
		 * reads back: no writer may take the new segment as it is. */
		char iname[NAME_MAX_LOCAL];
		elog__seg_name(iname, end, IDX_EXT);
		unlinkat(v->dfd, name, 0);
		unlinkat(v->dfd, iname, 0);
		elog__fs_fsync_dir(v->dfd);
		return elog__errmsg_set(v->msg, err, "%s: %s", name, elog_strerror(err));
	}
	repaired(v, name, ELOG_NOPOS,
	         "created: offsets %llu to %llu, acknowledged but lost to the damage, are "
	         "recorded as a damage gap, and the log goes on at %llu, so that no offset "
	         "names a second record",
	         (unsigned long long)ss->next, (unsigned long long)end - 1,
	         (unsigned long long)end);
	*wm = (struct watermark){ end, end, SEG_HDR };
	return 0;
}

/* With ELOG_VERIFY_SALVAGE, damage below the durable end of the active
 * segment is salvaged as in a closed segment (salvage.c) instead of cut:
 * every durable record that checks stays at its offset, only the offsets
 * of the damaged bytes become a damage gap, and the bytes past the
 * durable end, never acknowledged, go aside with the damaged ones.  The
 * segment is replaced by a new file: *fd is opened anew on it. */
static int salvage_active(struct verify *v, struct segstate *ss, const char *name, int *fd)
{
	struct salvage_plan p = { 0 };
	char aside[NAME_MAX_LOCAL + 32];
	uint64_t acked = v->wm.segment_bytes;
	/* No record of the log lies more than a segment's size past the
	 * durable end: what is further is dropped without a copy.  A damaged
	 * header is rebuilt from the segment before, the settings and its
	 * own flags. */
	int err = elog__salvage_segment(v->dfd, &v->set, v->base, v->n, v->n - 1,
	                                acked + v->set.segment_bytes, acked, v->wm.durable_end,
	                                elog__fs_now_ms(), &p, aside, sizeof aside, v->msg);
	for (size_t i = 0; !err && i < p.nd; i++) {
		const struct salvage_damage *d = &p.d[i];
		if (d->pos >= acked)
			repaired(v, name, d->pos,
			         "salvaged: %llu bytes past the durable end, "
			         "never acknowledged, moved to %s",
			         (unsigned long long)d->bytes, aside);
		else if (d->first <= d->last)
			repaired(v, name, d->pos,
			         "salvaged: %llu damaged bytes moved to %s; "
			         "offsets %llu-%llu may be lost, and readers report them as a gap",
			         (unsigned long long)d->bytes, aside, (unsigned long long)d->first,
			         (unsigned long long)d->last);
		else
			repaired(v, name, d->pos,
			         "salvaged: %llu damaged bytes moved to %s; "
			         "no record lost",
			         (unsigned long long)d->bytes, aside);
	}
	if (!err) {
		ss->size = ss->valid_end = p.klen;
		ss->next = p.next;
		ss->idx_bad = 0; /* rebuilt by the salvage */
		v->wm_fix = 1;
		close(*fd);
		if ((*fd = elog__fs_openat(v->dfd, name, O_RDWR, 0)) < 0)
			err = elog__errmsg_set(v->msg, errno, "%s: %s", name, elog_strerror(errno));
	}
	elog__salvage_plan_free(&p);
	return err;
}

static int repair_active(struct verify *v)
{
	struct segstate *ss = &v->seg[v->n - 1];
	char name[NAME_MAX_LOCAL], kept[NAME_MAX_LOCAL + 32];
	int err = 0;
	/* Salvage: damage below the durable end, or a damaged header in
	 * front of acknowledged records, which salvage rebuilds. */
	int salvage = (v->flags & ELOG_VERIFY_SALVAGE) && v->have_set &&
	              ((SEG_HDR_DAMAGED(ss->hdr_fault) && ss->acked > SEG_HDR) ||
	               (ss->scanned && ss->bad_at < ss->acked));
	if (!ss->scanned && !salvage)
		return 0; /* a bad header: reported; --salvage rebuilds it */
	elog__seg_name(name, ss->base, SEG_EXT);
	int fd = elog__fs_openat(v->dfd, name, O_RDWR, 0);
	if (fd < 0)
		return elog__errmsg_set(v->msg, errno, "%s: %s", name, elog_strerror(errno));
	if (salvage) {
		if ((err = salvage_active(v, ss, name, &fd)) != 0)
			goto out;
	} else if (ss->bad_at != UINT64_MAX) {
		/* No record of the log lies more than a segment's size past
		 * the damage: what is further is cut without a copy. */
		uint64_t cap = v->have_set ? v->set.segment_bytes : ELOG_SEGMENT_BYTES_MAX;
		uint64_t keep_end = ss->size - ss->bad_at > cap ? ss->bad_at + cap : ss->size;
		if ((err = keep_tail(v, fd, name, ss->bad_at, keep_end, kept, sizeof kept)) != 0)
			goto out;
		if (ftruncate(fd, (off_t)ss->bad_at) < 0 || fdatasync(fd) < 0) {
			err = elog__errmsg_set(v->msg, errno, "%s: %s", name, elog_strerror(errno));
			goto out;
		}
		if (keep_end < ss->size)
			repaired(v, name, ss->bad_at,
			         "cut %llu bytes from here on, kept the first %llu in %s "
			         "(no record lies further past the damage than a segment's size)",
			         (unsigned long long)(ss->size - ss->bad_at),
			         (unsigned long long)(keep_end - ss->bad_at), kept);
		else
			repaired(v, name, ss->bad_at, "cut %llu bytes from here on, kept in %s",
			         (unsigned long long)(ss->size - ss->bad_at), kept);
		if (ss->acked > ss->bad_at)
			v->wm_fix = 1;
		ss->size = ss->bad_at;
		ss->idx_bad = 1;
	}
	if (ss->idx_bad && v->have_set && (err = rebuild_index(v, fd, ss)) != 0)
		goto out;
	struct watermark wm = { ss->next, ss->base, ss->valid_end };
	if (v->wm_fix && v->wm.durable_end > ss->next &&
	    (err = resume_above(v, fd, ss, v->wm.durable_end, &wm)) != 0)
		goto out;
	if (v->wm_fix && v->sick && (v->wm_state != WM_OK || wm.durable_end > v->wm.durable_end)) {
		/* Its own sync proves nothing after a failed one (a fresh
		 * description syncs dropped pages "successfully"). */
		repaired(v, FN_WATERMARK, ELOG_NOPOS,
		         "left as it is: a writer's fdatasync failed, and the next "
		         "writer cuts the log back to the watermark");
	} else if (v->wm_fix) {
		/* What the watermark will vouch for must be durable first. */
		if (fdatasync(fd) < 0) {
			err = elog__errmsg_set(v->msg, errno, "%s: %s", name, elog_strerror(errno));
			goto out;
		}
		int wfd = elog__fs_openat(v->dfd, FN_WATERMARK, O_RDWR | O_CREAT, 0666);
		if (wfd < 0 && errno == ELOOP) {
			/* A link holds no data of ours: replace it by a file. */
			if (unlinkat(v->dfd, FN_WATERMARK, 0) == 0)
				wfd = elog__fs_openat(v->dfd, FN_WATERMARK,
				                      O_RDWR | O_CREAT | O_EXCL, 0666);
		}
		if (wfd < 0) {
			err = elog__errmsg_set(v->msg, errno, "%s: %s", FN_WATERMARK,
			                       elog_strerror(errno));
			goto out;
		}
		err = elog__wm_write(wfd, &wm);
		if (!err && (ftruncate(wfd, WM_SIZE) < 0 || fsync(wfd) < 0))
			err = errno;
		close(wfd);
		if (!err)
			err = elog__fs_fsync_dir(v->dfd);
		if (err) {
			err = elog__errmsg_set(v->msg, err, "%s: %s", FN_WATERMARK,
			                       elog_strerror(err));
			goto out;
		}
		elog__seg_name(name, wm.segment_base, SEG_EXT);
		repaired(v, FN_WATERMARK, ELOG_NOPOS,
		         "rewritten: durable end %llu, %llu bytes of %s",
		         (unsigned long long)wm.durable_end, (unsigned long long)wm.segment_bytes,
		         name);
	}
out:
	close(fd);
	return err;
}

/* Remove the temporary file of a process that died before renaming it
 * (a repair killed while it kept a cut tail, an index rebuild, a commit). */
static int drop_stale_tmp(const char *name, void *arg)
{
	struct verify *v = arg;
	int dropped;
	if (elog__file_tmp_drop(v->dfd, name, &dropped) == 0 && dropped)
		repaired(v, name, ELOG_NOPOS, "removed: the temporary file of a process that died");
	return 0;
}

/* What the chain of segments says was lost is recorded as damage gaps,
 * which readers report; then a closed segment whose seal is gone or
 * damaged, but whose records are whole, is sealed again, naming the
 * segment that follows it now. */
static int repair_chain(struct verify *v)
{
	int err;
	for (size_t k = 0; k < v->nlost; k++) {
		if ((err = elog__holes_add(v->dfd, v->lost[k].first, v->lost[k].last,
		                           elog__fs_now_ms())) != 0)
			return elog__errmsg_set(v->msg, err, "%s: %s", FN_SALVAGED,
			                        elog_strerror(err));
		repaired(v, FN_SALVAGED, ELOG_NOPOS,
		         "offsets %llu-%llu recorded as lost to damage: readers report "
		         "them as a gap",
		         (unsigned long long)v->lost[k].first, (unsigned long long)v->lost[k].last);
	}
	for (size_t k = 0; k < v->nreseal; k++) {
		size_t i = (size_t)v->reseal[k];
		const struct segstate *ss = &v->seg[i];
		struct seal seal = elog__seal_of(v->set.id, v->base[i + 1], ss->next,
		                                 ss->valid_end);
		int fd = elog__fs_openat(v->dfd, ss->name, O_RDWR, 0);
		err = fd < 0 ? errno : 0;
		if (!err && ftruncate(fd, (off_t)ss->valid_end) < 0)
			err = errno;
		if (!err)
			err = elog__seal_write(fd, ss->valid_end, &seal);
		if (!err && fdatasync(fd) < 0)
			err = errno;
		if (fd >= 0)
			close(fd);
		if (err)
			return elog__errmsg_set(v->msg, err, "%s: %s", ss->name,
			                        elog_strerror(err));
		repaired(v, ss->name, ss->valid_end,
		         "sealed again, naming segment %llu as the next",
		         (unsigned long long)seal.next);
	}
	return 0;
}

int elog__repair_run(struct verify *v)
{
	int done, err;
	/* What it writes may be of version 2: the log says so first. */
	if (v->have_set && (err = elog__settings_upgrade(v->dfd, &v->set, 1, 0, &done, v->msg)))
		return err;
	if ((err = elog__fs_dir_each(v->dfd, drop_stale_tmp, v)) != 0)
		return elog__errmsg_set(v->msg, err, "listing the log directory: %s",
		                        elog_strerror(err));
	for (size_t i = 0; i + 1 < v->n; i++) {
		struct segstate *ss = &v->seg[i];
		if (!ss->idx_bad || !ss->clean || !v->have_set)
			continue;
		int fd = elog__fs_openat(v->dfd, ss->name, O_RDONLY, 0);
		if (fd < 0)
			return elog__errmsg_set(v->msg, errno, "%s: %s", ss->name,
			                        elog_strerror(errno));
		err = rebuild_index(v, fd, ss);
		close(fd);
		if (err)
			return err;
	}
	if ((err = repair_chain(v)) != 0)
		return err;
	if (v->start_fix && v->n) {
		/* Listings ignore this start or keep the segment holding it:
		 * naming the first segment they list changes nothing read. */
		if ((err = elog__start_write(v->dfd, v->base[0], v->set.id)) != 0)
			return elog__errmsg_set(v->msg, err, "%s: %s", FN_START,
			                        elog_strerror(err));
		repaired(v, FN_START, ELOG_NOPOS, "rewritten: the log starts at offset %llu",
		         (unsigned long long)v->base[0]);
	}
	return v->n ? repair_active(v) : 0;
}
