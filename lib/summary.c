/*
 * summary.c: one look at a log (elog_summary_read()), for elog-cat -L.
 *
 * It must answer at once on a log of any size while writers append and
 * maintenance runs, so it takes no lock and never scans the log: it lists
 * the directory, reads the settings and the watermark, reads the first
 * record of the first segment, and in the newest segment holding durable
 * records loads the sparse index and scans at most SAMPLE_BYTES of records
 * before the durable end, and past the durable end the records a writer
 * that is gone left.  Everything else is derived (see elog_summary in
 * elog.h for what each figure means exactly).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "compress.h"
#include "files.h"

/* Bytes of records at the end of the log read for the newest timestamp and
 * the compression ratio. */
#define SAMPLE_BYTES (1u << 20)

struct sum {
	struct elog_summary *s;
	char *msg;
	int dfd;
	struct watermark wm;
	struct seglist sl;
	int truncated; /* a closed segment lost its seal */
};

/* Open segment base for reading its durable bytes: its fd (-1 when it is
 * gone or damaged), header flags and a scan from its first record. */
static int open_segment(struct sum *u, uint64_t base, int *fd, uint32_t *flags, struct scan *sc)
{
	char why[ELOG_MSG_MAX];
	struct stat st;
	int err = elog__seg_open(u->dfd, base, O_RDONLY, fd, flags, &st, why);
	if (err == ENOENT)
		return 0;
	if (err == ELOG_CORRUPT || err == ELOG_BADVERSION) {
		/* Damage is elog-verify's to report; a summary goes on. */
		u->s->damaged = 1;
		return 0;
	}
	if (err)
		return elog__errmsg_set(u->msg, err, "%s", why);
	/* Readers may read all of a closed segment, what the watermark
	 * vouches for of the one it names, nothing of a newer one. */
	uint64_t limit = (uint64_t)st.st_size;
	if (base > u->wm.segment_base)
		limit = 0;
	else if (base == u->wm.segment_base && u->wm.segment_bytes < limit)
		limit = u->wm.segment_bytes;
	if ((err = elog__scan_init(sc, *fd, base, SEG_HDR, limit)) != 0) {
		close(*fd);
		return elog__errmsg_set(u->msg, err, "%s", elog_strerror(err));
	}
	return 0;
}

/* The versions of segment base's header (got bytes at hdr) and of its
 * index, for -L; the header's verdict (elog__seg_header_verify()). */
static int note_versions(struct sum *u, uint64_t base, const unsigned char *hdr, size_t got)
{
	char name[NAME_MAX_LOCAL];
	unsigned char ih[IDX_HDR];
	const struct idx_layout *lay;
	size_t igot = 0;
	int err = elog__seg_header_verify(hdr, got, base, NULL, NULL);
	if (!err)
		u->s->segment_versions |= 1u << (get32(hdr + SEG_AT_VERSION) - 1);
	elog__seg_name(name, base, IDX_EXT);
	int fd = elog__fs_openat(u->dfd, name, O_RDONLY, 0);
	if (fd < 0)
		return err;
	if (elog__fs_pread_full(fd, ih, IDX_HDR, 0, &igot) == 0 &&
	    elog__idx_header_check(ih, igot, &lay) == 0)
		u->s->index_versions |= 1u << (lay->version - 1);
	close(fd);
	return err;
}

/* The offsets lost to damage: the ranges salvage recorded, and the gaps
 * the seals of closed segments show in the chain of segments (one pread
 * of each closed segment's end). */
static int count_lost(struct sum *u)
{
	struct holes h = { 0 };
	uint64_t a, b;
	if (elog__holes_load(u->dfd, &h) != 0)
		u->s->damaged = 1;
	for (size_t i = 0; i < h.n; i++)
		u->s->lost += h.v[i].last - h.v[i].first + 1;
	for (size_t i = 0; i < u->sl.n; i++) {
		unsigned char hdr[SEG_HDR];
		struct stat st;
		struct seg_end e;
		size_t got;
		int fd;
		uint64_t base = u->sl.base[i];
		uint64_t next = i + 1 < u->sl.n ? u->sl.base[i + 1] : u->wm.durable_end;
		if (next > u->wm.durable_end)
			next = u->wm.durable_end; /* nothing past it promised */
		if (elog__seg_open_raw(u->dfd, base, O_RDONLY, &fd, hdr, &got, &st, NULL) != 0)
			continue; /* gone since listed, or reported elsewhere */
		/* A header that does not read is elog-verify's to report. */
		int err = note_versions(u, base, hdr, got) != 0;
		if (base >= u->wm.segment_base) {
			close(fd);
			continue; /* the active segment: no seal yet */
		}
		err = err || elog__seg_end(fd, elog__seg_header_sealed(hdr), base,
		                           (uint64_t)st.st_size, NULL, &e) != 0;
		close(fd);
		if (!err && e.chain == CHAIN_UNSEALED) {
			u->s->damaged = 1; /* truncated, or its seal damaged */
			u->truncated = 1;
		} else if (!err && e.chain == CHAIN_SEALED && e.seal.next < next &&
		           !(h.n && elog__holes_find(&h, e.seal.next, next - 1, &a, &b))) {
			u->s->damaged = 1;
			u->s->lost += next - e.seal.next;
		}
	}
	elog__holes_free(&h);
	return 0;
}

/* The first durable record of the log. */
static int find_first(struct sum *u)
{
	for (size_t i = 0; i < u->sl.n; i++) {
		struct scan sc;
		struct elog_record rec;
		uint64_t at;
		uint32_t flags;
		int fd, err = open_segment(u, u->sl.base[i], &fd, &flags, &sc);
		if (err)
			return err;
		if (fd < 0)
			continue;
		err = elog__scan_next(&sc, &rec, &at);
		elog__scan_free(&sc);
		close(fd);
		if (err == 0) {
			/* Above the durable end: nothing durable at all. */
			if (rec.offset < u->wm.durable_end) {
				u->s->first = rec.offset;
				u->s->oldest_ms = rec.ts_ms;
				u->s->have_first = 1;
			}
			return 0;
		}
		if (err == ELOG_CORRUPT)
			u->s->damaged = 1;
		else if (err != ELOG_END)
			return elog__errmsg_set(u->msg, err, "%s", elog_strerror(err));
	}
	return 0;
}

/* Where to start scanning the tail of a segment: the index entry at least
 * SAMPLE_BYTES before limit whose record is really there, else the first
 * record.  *ts_max is the newest timestamp before that point. */
static uint64_t tail_start(struct sum *u, struct scan *sc, uint64_t base, int64_t *ts_max)
{
	struct index ix;
	uint64_t from = SEG_HDR, limit = sc->limit;
	int intact;

	*ts_max = INT64_MIN;
	if (elog__idx_load(u->dfd, base, limit, &ix, &intact) != 0)
		return from;
	size_t k = ix.n;
	while (k > 0 && ix.e[k - 1].pos + (uint64_t)SAMPLE_BYTES > limit)
		k--;
	/* k entries lie SAMPLE_BYTES or more before the end: start at the
	 * last of them, or at the first entry when none does. */
	size_t pick = k > 0 ? k - 1 : 0;
	if (ix.n > 0 && elog__scan_to_entry(sc, &ix.e[pick])) {
		from = ix.e[pick].pos;
		/* ts_max counts every record from the segment's start
		 * through the entry's own. */
		*ts_max = ix.e[pick].ts_max;
	}
	elog__idx_free(&ix);
	return from;
}

/* Account a sample record's stored and raw sizes. */
static void sample(struct sum *u, struct vdec **vd, uint32_t flags, const struct elog_record *rec)
{
	char why[ELOG_MSG_MAX];
	const void *out;
	size_t raw;

	if (!*vd)
		*vd = elog__vdec_new();
	if (!*vd || elog__vdec_value(*vd, u->dfd, flags, rec->value, rec->value_len, &out, &raw,
	                             why) != 0) {
		u->s->sample_unknown = 1;
		return;
	}
	u->s->sample_stored += elog__rec_size(rec->key_len, rec->value_len);
	u->s->sample_raw += elog__rec_size(rec->key_len, raw);
}

/* The last durable record, the newest timestamp of its segment, and the
 * compression sample, from the newest segment holding durable records. */
static int find_last(struct sum *u)
{
	struct vdec *vd = NULL;
	int err = 0;

	for (size_t i = u->sl.n; i-- > 0 && !u->s->have_last;) {
		struct scan sc;
		struct elog_record rec;
		uint64_t at, base = u->sl.base[i];
		uint32_t flags;
		int64_t newest;
		int fd;
		if ((err = open_segment(u, base, &fd, &flags, &sc)) != 0)
			break;
		if (fd < 0)
			continue;
		elog__scan_seek(&sc, tail_start(u, &sc, base, &newest));
		while ((err = elog__scan_next(&sc, &rec, &at)) == 0 &&
		       rec.offset < u->wm.durable_end) {
			u->s->have_last = 1;
			u->s->last = rec.offset;
			if (rec.ts_ms > newest)
				newest = rec.ts_ms;
			sample(u, &vd, flags, &rec);
		}
		if (err == ELOG_CORRUPT)
			u->s->damaged = 1;
		err = err > 0 ? elog__errmsg_set(u->msg, err, "%s", elog_strerror(err)) : 0;
		u->s->newest_ms = newest;
		elog__scan_free(&sc);
		close(fd);
		if (err)
			break;
	}
	elog__vdec_free(vd);
	return err;
}

/* Sizes of the directory's files: every regular file, and the segments of
 * the log (those at or above its start). */
static int add_size(const char *name, void *arg)
{
	struct sum *u = arg;
	struct stat st;
	uint64_t base;

	if (fstatat(u->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0; /* gone meanwhile, or not ours to count */
	u->s->dir_bytes += (uint64_t)st.st_size;
	u->s->disk_bytes += (uint64_t)st.st_blocks * 512;
	if (elog__seg_parse_name(name, SEG_EXT, &base) && u->sl.n && base >= u->sl.base[0])
		u->s->log_bytes += (uint64_t)st.st_size;
	return 0;
}

static void holders(struct sum *u)
{
	pid_t *p;
	size_t n;

	u->s->writers_known = elog__lock_holders(u->dfd, FN_WRITERS, &u->s->writers,
	                                         &u->s->nwriters) == 0;
	/* An exclusive writer's hold is on LOCK (lock.c): a test, no lock. */
	int fd = elog__fs_openat(u->dfd, FN_LOCK, O_RDONLY, 0);
	if (fd >= 0) {
		u->s->writers_exclusive = elog__lock_exclusive_held(fd);
		close(fd);
	}
	if (elog__lock_holders(u->dfd, FN_LOCK, &p, &n) == 0 && n > 0)
		u->s->batch_pid = p[0];
	free(p);
	if (elog__lock_holders(u->dfd, FN_MAINT, &p, &n) == 0 && n > 0)
		u->s->maint_pid = p[0];
	free(p);
}

/* The valid records past the durable end (elog__seg_tail_next()), from the
 * durable bytes of the watermark's segment through the newest segment: the
 * records the next writer's recovery publishes (elog__recover_active()),
 * or cuts when LOCK records a failed sync.  Counted only when no writer is open
 * and none holds LOCK: otherwise they may be a batch in flight, which its
 * writer publishes itself.  Read without a lock, as every figure here. */
static void count_pending(struct sum *u)
{
	struct elog_summary *s = u->s;
	struct seg_tail t = { .next = u->wm.durable_end, .why = TAIL_WHOLE };

	if (!s->writers_known || s->nwriters > 0 || s->batch_pid > 0)
		return;
	for (size_t i = 0; i < u->sl.n && t.why == TAIL_WHOLE; i++) {
		struct scan sc;
		struct elog_record rec;
		uint64_t at, base = u->sl.base[i];
		int fd;
		if (base < u->wm.segment_base)
			continue;
		if (elog__seg_open(u->dfd, base, O_RDONLY, &fd, NULL, NULL, NULL) != 0)
			break; /* gone, or damaged: nothing past it is whole */
		uint64_t from = base == u->wm.segment_base ? u->wm.segment_bytes : SEG_HDR;
		if (from < SEG_HDR) /* no watermark yet: nothing durable */
			from = SEG_HDR;
		t.why = TAIL_DAMAGED; /* unless read to its end */
		if (elog__scan_init(&sc, fd, base, from, UINT64_MAX) == 0) {
			while (elog__seg_tail_next(&sc, &t, &rec, &at) == 0)
				s->pending++;
			elog__scan_free(&sc);
		}
		close(fd);
	}
	/* No writer holds LOCK: what its holder would find there, a sick
	 * state or a failed sync record, is what the next one does. */
	int fd = s->pending > 0 ? elog__fs_openat(u->dfd, FN_LOCK, O_RDONLY, 0) : -1;
	if (fd >= 0) {
		struct lock_state ls;
		struct sync_rec slot;
		unsigned char boot[16];
		elog__lock_boot_id(boot);
		s->pending_cut = elog__lock_sick(fd, &ls, boot, &slot);
		close(fd);
	}
}

static int summarize(struct sum *u)
{
	struct elog_summary *s = u->s;
	struct stat st;
	int err;

	if ((err = elog__settings_load(u->dfd, &s->settings, u->msg)) != 0)
		return err;
	int wfd = elog__fs_openat(u->dfd, FN_WATERMARK, O_RDONLY, 0);
	if (wfd < 0 && errno != ENOENT)
		return elog__errmsg_set(u->msg, errno, "%s: %s", FN_WATERMARK,
		                        elog_strerror(errno));
	if (wfd >= 0) {
		err = elog__wm_load(u->dfd, wfd, &u->wm);
		close(wfd);
		if (err)
			return elog__errmsg_set(u->msg, err, "%s: %s", FN_WATERMARK,
			                        elog_strerror(err));
	}
	s->durable_end = u->wm.durable_end;
	if ((err = elog__seglist_read_start(u->dfd, &u->sl, u->s->settings.id, NULL)) != 0)
		return elog__errmsg_set(u->msg, err, "listing segments: %s", elog_strerror(err));
	s->segments = u->sl.n;
	s->start = u->sl.n ? u->sl.base[0] : 0;
	s->active_base = u->sl.n ? u->sl.base[u->sl.n - 1] : 0;
	if ((err = elog__fs_dir_each(u->dfd, add_size, u)) != 0)
		return elog__errmsg_set(u->msg, err, "reading the directory: %s",
		                        elog_strerror(err));
	if ((err = find_first(u)) != 0 || (err = find_last(u)) != 0)
		return err;
	if ((err = count_lost(u)) != 0)
		return err;
	if (s->have_first && s->have_last && s->last >= s->first)
		s->records = s->last - s->first + 1;
	s->records = s->records > s->lost ? s->records - s->lost : 0;
	s->retain_last_ms = elog__lastrun_read(u->dfd, FN_RETAIN_LAST);
	s->compact_last_ms = elog__lastrun_read(u->dfd, FN_COMPACT_LAST);
	s->copy_last_ms = elog__lastrun_read(u->dfd, FN_COPY_LAST);
	/* Offsets are dense until compaction removes records or a copy
	 * skips some; a log that was compacted by an older elog shows it by
	 * its compact.state. */
	s->records_exact = s->compact_last_ms == INT64_MIN && !u->truncated &&
	                   s->copy_last_ms == INT64_MIN &&
	                   fstatat(u->dfd, FN_COMPACT_STATE, &st, AT_SYMLINK_NOFOLLOW) < 0;
	holders(u);
	count_pending(u);
	return 0;
}

int elog_summary_read(const char *dir, struct elog_summary *s, char *msg)
{
	char local[ELOG_MSG_MAX];
	struct sum u;

	memset(s, 0, sizeof *s);
	memset(&u, 0, sizeof u);
	s->oldest_ms = s->newest_ms = INT64_MIN;
	s->retain_last_ms = s->compact_last_ms = s->copy_last_ms = INT64_MIN;
	u.s = s;
	u.msg = msg ? msg : local;
	u.msg[0] = '\0';
	u.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (u.dfd < 0)
		return elog__errmsg_set(u.msg, errno, "%s", elog_strerror(errno));
	int err = summarize(&u);
	elog__seglist_free(&u.sl);
	close(u.dfd);
	if (err)
		elog_summary_free(s);
	return err;
}

void elog_summary_free(struct elog_summary *s)
{
	free(s->writers);
	s->writers = NULL;
	s->nwriters = 0;
}
