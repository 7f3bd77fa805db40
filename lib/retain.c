/*
 * retain.c: retention, elog_retain().  Whole closed segments go, oldest
 * first.  The run decides first how many go, then records the log's new
 * first offset (the base of the first segment kept) in the start file,
 * durably, and only then unlinks the segments below it, each .log then its
 * .idx, with one sync of the directory at the end (elog__seg_remove_below() in
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
		elog__seg_name(name, m->sl.base[i], SEG_EXT);
		if (fstatat(m->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return elog__errmsg_set(m->msg, errno, "%s: %s", name, elog_strerror(errno));
		}
		*total += (uint64_t)st.st_size;
	}
	return 0;
}

/* The closed segments' seg_info, read once each as needed. */
struct infos {
	struct maint *m;
	struct seg_info *si;
	unsigned char *have;
};

static int info(struct infos *in, size_t k, const struct seg_info **out)
{
	int err;
	if (!in->have[k]) {
		if ((err = elog__seg_info_read(in->m, in->m->sl.base[k], &in->si[k])) != 0)
			return err;
		in->have[k] = 1;
	}
	*out = &in->si[k];
	return 0;
}

/* The timestamp closed segment k is judged by for age: its newest record's
 * when plausible, else that of the next closed segment with a plausible
 * newest timestamp (written later, it is no older), else INT64_MIN (none:
 * it stays).  *own is 1 when it is its own. */
static int judged_ms(struct infos *in, size_t k, int64_t now, int64_t *ms, int *own)
{
	const struct seg_info *si;
	int err;
	*own = 1;
	for (size_t j = k; j < in->m->nclosed; j++) {
		if ((err = info(in, j, &si)) != 0)
			return err;
		if (!si->empty && elog__ts_plausible(si->newest_ms, now)) {
			*ms = si->newest_ms;
			return 0;
		}
		*own = 0;
	}
	*ms = INT64_MIN;
	return 0;
}

static int retain(struct maint *m, const struct elog_retain_opts *o,
                  struct elog_retain_result *res)
{
	uint64_t max_age = limit_of(o->max_age_ms, m->set.retain_ms);
	uint64_t max_bytes = limit_of(o->max_bytes, m->set.retain_bytes);
	int64_t now = o->now_ms ? o->now_ms : elog__fs_now_ms();
	uint64_t total;
	int err;

	if (!max_age && !max_bytes)
		return elog__errmsg_set(m->msg, ELOG_INVALID, "no retention policy: the log "
		    "has none stored, and no age or size limit was given");
	if (!o->dry_run && (err = elog__maint_cleanup(m, &res->leftovers)) != 0)
		return err;
	res->start_before = res->start_after = m->sl.n ? m->sl.base[0] : 0;
	if ((err = log_bytes(m, &total)) != 0)
		return err;

	/* Decide first: nothing changes until the start is written. */
	struct elog_segment_report *rep = calloc(m->nclosed + 1, sizeof *rep);
	struct infos in = { m, calloc(m->nclosed + 1, sizeof *in.si),
	                    calloc(m->nclosed + 1, 1) };
	size_t k = 0;
	if (!rep || !in.si || !in.have) {
		err = elog__errmsg_set(m->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
		goto out;
	}
	for (; k < m->nclosed; k++) {
		const struct seg_info *si;
		int64_t judged = INT64_MIN;
		int own = 1;
		if ((err = info(&in, k, &si)) != 0)
			goto out;
		/* An empty segment holds nothing to keep; otherwise the age
		 * is that of the timestamp it is judged by (judged_ms()). */
		if (max_age && !si->empty &&
		    (err = judged_ms(&in, k, now, &judged, &own)) != 0)
			goto out;
		int too_old = max_age && (si->empty || (judged != INT64_MIN &&
		    judged < now && (uint64_t)(now - judged) > max_age));
		int too_big = max_bytes && total > max_bytes;
		if (!too_old && !too_big) {
			if (max_age) {
				res->kept_why = own ? ELOG_KEPT_YOUNG : ELOG_KEPT_UNTRUSTED;
				res->kept_base = si->base;
				res->kept_end = m->sl.base[k + 1];
				res->kept_newest_ms = si->newest_ms;
				res->kept_judged_ms = judged;
			}
			break;
		}
		total -= si->size < total ? si->size : total;
		res->bytes += si->size;
		rep[k].action = ELOG_SEG_REMOVED;
		rep[k].base = si->base;
		rep[k].end = m->sl.base[k + 1];	/* a closed segment has a next */
		rep[k].bytes_before = si->size;
		rep[k].newest_ms = si->newest_ms;
	}
	res->segments = k;
	res->total_bytes = total;
	if (k > 0) {
		res->start_after = m->sl.base[k];
		if (!o->dry_run)
			err = elog__seg_remove_below(m, res->start_after);
	}
	for (size_t i = 0; !err && o->each && i < k; i++)
		o->each(&rep[i], o->arg);
out:
	free(rep);
	free(in.si);
	free(in.have);
	return err;
}

int elog_retain(const char *dir, const struct elog_retain_opts *o,
                struct elog_retain_result *res, char *msg)
{
	static const struct elog_retain_opts none = { 0 };
	char local[ELOG_MSG_MAX];
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
	int err = elog__maint_open(&m, dir, o->wait, msg);
	if (!err)
		err = retain(&m, o, res);
	if (!err && !o->dry_run)
		elog__lastrun_mark(m.dfd, FN_RETAIN_LAST, elog__fs_now_ms());
	elog__maint_close(&m);
	return err;
}
