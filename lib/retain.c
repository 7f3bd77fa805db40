/*
 * retain.c: retention, elog_retain().  Whole closed segments go, oldest
 * first.  The run decides first how many go, then records the log's new
 * first offset (the base of the first segment kept) in the start file,
 * durably, and only then unlinks the segments below it, each .log then its
 * .idx, with one sync of the directory at the end (seg_remove_below() in
 * maint.c).  Unlinks reach the disk in no set order, but every listing of
 * segments leaves out those below the start, so a crash can never leave a
 * hole in the middle of the log; the next run unlinks what a crash left.
 * Readers asking for an offset below the start are told of a gap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* The limit in effect: the option's, else the stored policy's; 0 = none. */
static uint64_t limit_of(uint64_t opt, uint64_t stored)
{
	if (opt == ELOG_RETAIN_OFF)
		return 0;
	return opt ? opt : stored;
}

static int log_bytes(struct maint *m, uint64_t *total)
{
	char name[NAME_MAX_LOCAL];
	struct stat st;
	*total = 0;
	for (size_t i = 0; i < m->sl.n; i++) {
		seg_name(name, m->sl.base[i], SEG_EXT);
		if (fstatat(m->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return errmsg_set(m->msg, errno, "%s: %s", name, strerror(errno));
		}
		*total += (uint64_t)st.st_size;
	}
	return 0;
}

static int retain(struct maint *m, const struct elog_retain_opts *o,
                  struct elog_retain_result *res)
{
	uint64_t max_age = limit_of(o->max_age_ms, m->set.retain_ms);
	uint64_t max_bytes = limit_of(o->max_bytes, m->set.retain_bytes);
	int64_t now = o->now_ms ? o->now_ms : fs_now_ms();
	uint64_t total;
	int err;

	if (!max_age && !max_bytes)
		return errmsg_set(m->msg, ELOG_INVALID, "no retention policy: the log "
		    "has none stored, and no age or size limit was given");
	if (!o->dry_run && (err = maint_cleanup(m, &res->leftovers)) != 0)
		return err;
	res->start_before = res->start_after = m->sl.n ? m->sl.base[0] : 0;
	if ((err = log_bytes(m, &total)) != 0)
		return err;

	/* Decide first: nothing changes until the start is written. */
	struct elog_segment_report *rep = calloc(m->nclosed + 1, sizeof *rep);
	size_t k = 0;
	if (!rep)
		return errmsg_set(m->msg, ENOMEM, "%s", strerror(ENOMEM));
	for (; k < m->nclosed; k++) {
		struct seg_info si;
		if ((err = seg_info_read(m, m->sl.base[k], &si)) != 0)
			goto out;
		/* An empty segment holds nothing to keep; otherwise the age
		 * is that of its newest record (ts_ms may lie in the future,
		 * when the producer's clock was ahead: it stays). */
		int too_old = max_age && (si.empty ||
		    (si.newest_ms < now && (uint64_t)(now - si.newest_ms) > max_age));
		int too_big = max_bytes && total > max_bytes;
		if (!too_old && !too_big)
			break;
		total -= si.size < total ? si.size : total;
		res->bytes += si.size;
		rep[k].action = ELOG_SEG_REMOVED;
		rep[k].base = si.base;
		rep[k].end = m->sl.base[k + 1];	/* a closed segment has a next */
		rep[k].bytes_before = si.size;
		rep[k].newest_ms = si.newest_ms;
	}
	res->segments = k;
	res->total_bytes = total;
	if (k > 0) {
		res->start_after = m->sl.base[k];
		if (!o->dry_run)
			err = seg_remove_below(m, res->start_after);
	}
	for (size_t i = 0; !err && o->each && i < k; i++)
		o->each(&rep[i], o->arg);
out:
	free(rep);
	return err;
}

int elog_retain(const char *dir, const struct elog_retain_opts *o,
                struct elog_retain_result *res, char *msg)
{
	static const struct elog_retain_opts none = { 0 };
	char local[ERRMSG_MAX];
	struct elog_retain_result dummy;
	struct maint m;

	if (!msg)
		msg = local;
	if (!res)
		res = &dummy;
	if (!o)
		o = &none;
	memset(res, 0, sizeof *res);
	msg[0] = '\0';
	int err = maint_open(&m, dir, o->wait, msg);
	if (!err)
		err = retain(&m, o, res);
	if (!err && !o->dry_run)
		lastrun_mark(m.dfd, FN_RETAIN_LAST, fs_now_ms());
	maint_close(&m);
	return err;
}
