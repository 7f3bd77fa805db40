/*
 * retain.c: retention, elog_retain().  Whole closed segments go, oldest
 * first.  The run decides first how many go, then records the losses of
 * named consumers (losses.c) and the log's new first offset (the base of
 * the first segment kept) in the start file, durably, and only then
 * unlinks the segments below it, each .log then its .idx, with one sync of
 * the directory at the end (elog__seg_remove_below() in maint.c).  Unlinks
 * reach the disk in no set order, but every listing of segments leaves out
 * those below the start, so a crash can never leave a hole in the middle
 * of the log; the next run unlinks what a crash left.  Readers asking for
 * an offset below the start are told of a gap.
 *
 * Damage never blocks retention: a segment that cannot be read (a damaged
 * header or record) is judged by the next closed segment that can be, as
 * one whose timestamps are not plausible is (written later, that one's
 * records are no older), and goes under a size limit by its file size
 * alone.  Only a damaged segment that nothing later can judge stops age
 * retention, there, after every older segment went; the caller is told.
 *
 * Consumers.  The losses are computed and written under consumers.lock,
 * held until the start is written and the segments unlinked (commits wait
 * that long), so that no commit slips in between: what a consumer had not
 * committed when the start moved is what it lost.  A rerun after a crash
 * between the two records the same range again, which counts once.
 * With retain-consumers=protect, age retention stops at the first segment
 * holding a record some named consumer has not read; a size limit removes
 * it all the same, and the loss is reported as forced.
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
#include "os.h"
#include "files.h"
#include "consumers_json.h"
#include "maint.h"

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
			return elog__errmsg_set(m->msg, errno, "%s: %s", name,
			                        elog_strerror(errno));
		}
		*total += (uint64_t)st.st_size;
	}
	return 0;
}

/* What the run knows of a closed segment. */
struct closed {
	struct seg_info si;             /* read once, as needed (info()) */
	int have;                       /* si is read */
	int bysize;                     /* it goes by the size limit alone */
	struct elog_segment_report rep; /* rep.damaged: it cannot be read */
};

/* The seg_info of closed segment k; one that cannot be read is marked
 * damaged, with its size from stat(2). */
static int info(struct maint *m, struct closed *v, size_t k, const struct seg_info **out)
{
	int err;
	if (!v[k].have) {
		struct seg_info *si = &v[k].si;
		err = elog__seg_info_read(m, m->sl.base[k], si);
		if (err == ELOG_CORRUPT || err == ELOG_BADVERSION) {
			char name[NAME_MAX_LOCAL];
			struct stat st;
			memset(si, 0, sizeof *si);
			si->base = m->sl.base[k];
			si->newest_ms = INT64_MIN;
			elog__seg_name(name, si->base, SEG_EXT);
			if (fstatat(m->dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				si->size = (uint64_t)st.st_size;
			v[k].rep.damaged = 1;
			m->msg[0] = '\0';
			err = 0;
		}
		if (err)
			return err;
		v[k].have = 1;
	}
	*out = &v[k].si;
	return 0;
}

/* The timestamp closed segment k is judged by for age: its newest record's
 * when plausible, else that of the next closed segment with a plausible
 * newest timestamp (written later, it is no older), else INT64_MIN (none:
 * it stays).  A damaged segment has none of its own.  *own is 1 when it is
 * its own. */
static int judged_ms(struct maint *m, struct closed *v, size_t k, int64_t now, int64_t *ms,
                     int *own)
{
	const struct seg_info *si;
	int err;
	*own = 1;
	for (size_t j = k; j < m->nclosed; j++) {
		if ((err = info(m, v, j, &si)) != 0)
			return err;
		if (!v[j].rep.damaged && !si->empty && elog__ts_plausible(si->newest_ms, now)) {
			*ms = si->newest_ms;
			return 0;
		}
		*own = 0;
	}
	*ms = INT64_MIN;
	return 0;
}

/* The lines of retain.last after the time: one per consumer's loss. */
struct lines {
	unsigned char *p;
	size_t len, cap;
};

/* The named consumers, for their losses and for protect. */
struct interest {
	struct ctable t;
	int known;       /* consumers.json could be read */
	uint64_t next;   /* the lowest next offset of any consumer... */
	const char *who; /* ...and whose; NULL when none */
};

/* Read the consumers (again) into c; a consumers.json that cannot be read
 * does not stop retention, res says so. */
static void interest_of(struct maint *m, struct interest *c, struct elog_retain_result *res)
{
	elog__ctable_free(&c->t);
	c->known = elog__consumers_load(m->dfd, &c->t, m->msg) == 0;
	if (!c->known) {
		res->consumers_unknown = 1;
		m->msg[0] = '\0';
	}
	c->next = UINT64_MAX;
	c->who = NULL;
	if (!c->known) {
		c->next = 0; /* nothing is known to be read */
		return;
	}
	for (size_t i = 0; i < c->t.n; i++)
		if (c->t.v[i].next < c->next) {
			c->next = c->t.v[i].next;
			c->who = c->t.v[i].name;
		}
}

/* Report, and unless a dry run record, what each consumer loses when the
 * start moves from res->start_before to res->start_after. */
static int losses(struct maint *m, const struct elog_retain_opts *o, struct elog_retain_result *res,
                  const struct interest *c, int64_t now, struct losses *l, int *dirty)
{
	int err;
	for (size_t i = 0; i < c->t.n; i++) {
		const struct elog_consumer *e = &c->t.v[i];
		uint64_t lo = e->next, hi = res->start_after - 1;
		if (lo < res->start_before)
			lo = res->start_before;
		if (res->start_after == 0 || lo > hi)
			continue;
		res->losers++;
		if (!o->dry_run) {
			if ((err = elog__losses_add(l, e->name, lo, hi, now)) != 0)
				return elog__errmsg_set(m->msg, err, "%s", elog_strerror(err));
			*dirty = 1;
		}
	}
	return 0;
}

/* Tell the caller each loss, and list them for retain.last. */
static void report_losses(const struct elog_retain_opts *o, const struct elog_retain_result *res,
                          const struct interest *c, int protect, int recorded, struct lines *lines)
{
	for (size_t i = 0; i < c->t.n; i++) {
		const struct elog_consumer *e = &c->t.v[i];
		uint64_t lo = e->next, hi = res->start_after - 1;
		if (lo < res->start_before)
			lo = res->start_before;
		if (res->start_after == 0 || lo > hi)
			continue;
		struct elog_consumer_loss x = { e->name,     lo,      hi,
			                        hi - lo + 1, protect, recorded && !o->dry_run };
		if (o->lost)
			o->lost(o->arg, &x);
		char line[ELOG_CONSUMER_NAME_MAX + 80];
		int n = snprintf(line, sizeof line, "lost %s %llu %llu %llu\n", e->name,
		                 (unsigned long long)lo, (unsigned long long)hi,
		                 (unsigned long long)(hi - lo + 1));
		/* Out of memory, retain.last goes without the line. */
		if (elog__buf_grow(&lines->p, &lines->cap, lines->len + (size_t)n, 256) == 0) {
			memcpy(lines->p + lines->len, line, (size_t)n);
			lines->len += (size_t)n;
		}
	}
}

static int retain(struct maint *m, const struct elog_retain_opts *o, struct elog_retain_result *res,
                  struct lines *lines)
{
	uint64_t max_age = limit_of(o->max_age_ms, m->set.retain_ms);
	uint64_t max_bytes = limit_of(o->max_bytes, m->set.retain_bytes);
	int64_t now = o->now_ms ? o->now_ms : elog__fs_now_ms();
	int protect = m->set.retain_consumers == ELOG_RETAIN_CONSUMERS_PROTECT;
	struct interest c = { { 0 }, 0, 0, NULL };
	struct losses l = { 0 };
	uint64_t total;
	int err, lfd = -1, dirty = 0;

	if (!max_age && !max_bytes)
		return elog__errmsg_set(m->msg, ELOG_INVALID,
		                        "no retention policy: the log "
		                        "has none stored, and no age or size limit was given");
	if (!o->dry_run && (err = elog__maint_cleanup(m, &res->leftovers)) != 0)
		return err;
	res->start_before = res->start_after = m->sl.n ? m->sl.base[0] : 0;
	if ((err = log_bytes(m, &total)) != 0)
		return err;
	/* A first look at the consumers, without their lock, to decide. */
	interest_of(m, &c, res);

	/* Decide first: nothing changes until the start is written. */
	struct closed *v = calloc(m->nclosed + 1, sizeof *v);
	size_t k = 0;
	if (!v) {
		err = elog__errmsg_set(m->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
		goto out;
	}
	for (; k < m->nclosed; k++) {
		const struct seg_info *si;
		int64_t judged = INT64_MIN;
		int own = 1;
		uint64_t end = m->sl.base[k + 1]; /* a closed segment has a next */
		if ((err = info(m, v, k, &si)) != 0)
			goto out;
		int empty = si->empty && !v[k].rep.damaged;
		/* An empty segment holds nothing to keep; otherwise the age
		 * is that of the timestamp it is judged by (judged_ms()). */
		if (max_age && !empty && (err = judged_ms(m, v, k, now, &judged, &own)) != 0)
			goto out;
		int too_old = max_age && (empty || (judged != INT64_MIN && judged < now &&
		                                    (uint64_t)(now - judged) > max_age));
		int too_big = max_bytes && total > max_bytes;
		int unread = protect && !empty && c.next < end;
		if (too_old && !too_big && unread) {
			res->kept_why = ELOG_KEPT_CONSUMER;
			snprintf(res->kept_consumer, sizeof res->kept_consumer, "%s",
			         c.who ? c.who : "");
		}
		if ((!too_old || unread) && !too_big) {
			if (max_age && res->kept_why == ELOG_KEPT_NONE) {
				res->kept_why = v[k].rep.damaged && judged == INT64_MIN
				                        ? ELOG_KEPT_DAMAGED
				                : own ? ELOG_KEPT_YOUNG
				                      : ELOG_KEPT_UNTRUSTED;
			}
			if (res->kept_why != ELOG_KEPT_NONE) {
				res->kept_damaged = v[k].rep.damaged;
				res->kept_base = si->base;
				res->kept_end = end;
				res->kept_newest_ms = si->newest_ms;
				res->kept_judged_ms = judged;
			}
			if (v[k].rep.damaged) {
				res->unjudged = res->kept_why == ELOG_KEPT_DAMAGED;
				res->unjudged_base = si->base;
			}
			break;
		}
		v[k].bysize = !too_old || unread;
		res->damaged += v[k].rep.damaged;
		total -= si->size < total ? si->size : total;
		res->bytes += si->size;
		v[k].rep.action = ELOG_SEG_REMOVED;
		v[k].rep.base = si->base;
		v[k].rep.end = end;
		v[k].rep.bytes_before = si->size;
		v[k].rep.newest_ms = si->newest_ms;
	}
	res->segments = k;
	res->total_bytes = total;
	if (k > 0)
		res->start_after = m->sl.base[k];
	if (k > 0 && !o->dry_run) {
		/* Under the lock the consumers are read again: one that
		 * committed meanwhile loses less, and protect keeps what a
		 * consumer made or rewound meanwhile has not read. */
		if ((err = elog__consumers_lock(m->dfd, &lfd, m->msg)) != 0)
			goto out;
		interest_of(m, &c, res);
		for (size_t i = 0; protect && i < k; i++)
			if (!v[i].bysize && c.next < m->sl.base[i + 1]) {
				for (size_t j = i; j < k; j++) {
					res->bytes -= v[j].rep.bytes_before;
					res->total_bytes += v[j].rep.bytes_before;
					res->damaged -= v[j].rep.damaged;
				}
				k = i;
				res->segments = k;
				res->start_after = k ? m->sl.base[k] : res->start_before;
				res->kept_why = ELOG_KEPT_CONSUMER;
				snprintf(res->kept_consumer, sizeof res->kept_consumer, "%s",
				         c.who ? c.who : "");
				res->kept_base = m->sl.base[k];
				res->kept_end = m->sl.base[k + 1];
				break;
			}
		if (k > 0) {
			if ((err = elog__losses_load(m->dfd, &l)) != 0) {
				/* Unreadable: the losses are told, not kept. */
				res->losses_unrecorded = 1;
				err = 0;
			} else if ((err = losses(m, o, res, &c, now, &l, &dirty)) != 0) {
				goto out;
			}
			/* Written before the start moves, so that no loss is
			 * ever unrecorded after a crash; on a full disk, after
			 * the segments went and made room. */
			int deferred = 0;
			if (dirty)
				elog__maint_step();
			if (dirty && (err = elog__losses_store(m->dfd, &l)) != 0) {
				deferred = 1;
				err = 0;
			}
			err = elog__seg_remove_below(m, res->start_after);
			if (!err && deferred && elog__losses_store(m->dfd, &l) != 0)
				res->losses_unrecorded = 1;
		}
	} else if (k > 0) {
		if ((err = losses(m, o, res, &c, now, &l, &dirty)) != 0)
			goto out;
	}
	for (size_t i = 0; !err && o->each && i < k; i++)
		o->each(o->arg, &v[i].rep);
	if (!err)
		report_losses(o, res, &c, protect, !res->losses_unrecorded, lines);
out:
	if (lfd >= 0)
		close(lfd);
	elog__ctable_free(&c.t);
	elog__losses_free(&l);
	free(v);
	return err;
}

int elog_retain(const char *dir, const struct elog_retain_opts *o, struct elog_retain_result *res,
                char *msg)
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
	struct lines lines = { 0 };
	int err = elog__maint_open(&m, dir, o->wait_ms, msg);
	if (!err)
		err = retain(&m, o, res, &lines);
	if (!err && !o->dry_run)
		elog__lastrun_mark(m.dfd, FN_RETAIN_LAST, elog__fs_now_ms(), (const char *)lines.p,
		                   lines.len);
	free(lines.p);
	elog__maint_close(&m);
	return err;
}
