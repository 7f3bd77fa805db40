/*
 * salvage.c: elog_salvage(), the way past a damaged closed segment
 * (elog-verify --repair --salvage).
 *
 * A closed segment is never cut by an ordinary repair: its records were
 * acknowledged, and cutting at the first bad byte would throw away every
 * good record after it.  Salvage reads the segment whole and keeps every
 * record that the one rule for a segment's valid part passes
 * (elog__seg_tail_next(): whole, its offset above the record before) with
 * an offset below the next segment's base; where one does not, it looks
 * for the next one byte by byte, the way a reader of a damaged tape
 * would, and moves the bytes in between aside.  Then, in this order, each
 * step durable before the next:
 *
 *   1. the damaged bytes go to "<segment>.log.cut-<ms>" beside it;
 *   2. the offsets between the last good record before them and the first
 *      good one after (or the next segment's base) are added to the file
 *      "salvaged" (holes.c), so that readers report them as a gap;
 *   3. the good records are written to a new file renamed over the
 *      segment, and its index is rebuilt.
 *
 * A damaged header (the first 32 bytes) is rebuilt when that can be done
 * with certainty: the magic, version and base come from the format and the
 * file name; the flags (how values are stored) are those of a neighbour
 * segment, of the settings or of the damaged header itself under which
 * every record's value decodes, a codec being preferred to none (a plain
 * value never starts with a codec's tag and frame).  The old header bytes
 * go aside with the other damaged bytes; no offset is lost by it.  When no
 * candidate reads every value (a dictionary is gone, or a codec is not in
 * this build), salvage refuses, as it did before it rebuilt headers.
 *
 * A crash between steps leaves the damaged segment as it was, so the
 * next salvage does it again; a range recorded twice is merged.  Some of
 * the offsets of a range may have held no record (compaction holes): the
 * gap says "may have been lost", never less than what was.
 *
 * It runs under the maintenance lock (as retention and compaction do) and
 * touches closed segments only, so the writer may be running.
 *
 * The plan and the steps are shared (maint.h): a repair with
 * ELOG_VERIFY_SALVAGE (repair.c) salvages the active segment by
 * elog__salvage_segment() under the writer's lock, up to the durable end,
 * and elog_verify() plans alone, copying nothing, to say what a salvage
 * would keep and lose (damage.c).
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
#include "compress.h"
#include "files.h"
#include "maint.h"

/* Append n bytes at p to *buf. */
static int append(unsigned char **buf, size_t *len, size_t *cap, const void *p, size_t n)
{
	int err = elog__buf_grow(buf, cap, *len + n, 4096);
	if (err)
		return err;
	memcpy(*buf + *len, p, n);
	*len += n;
	return 0;
}

void elog__salvage_plan_free(struct salvage_plan *p)
{
	free(p->keep);
	free(p->lost);
	free(p->d);
}

/* Note the damaged bytes [pos, pos + n) of the segment open as fd and the
 * offsets [first, last] that lay in them. */
static int damaged(struct salvage_plan *p, int fd, uint64_t pos, uint64_t n, uint64_t first,
                   uint64_t last)
{
	size_t got = 0;
	int err = elog__array_push(&p->d, &p->nd, sizeof *p->d,
	                           &(struct salvage_damage){ pos, n, first, last });
	if (err || p->count_only)
		return err;
	err = elog__buf_grow(&p->lost, &p->lcap, p->llen + (size_t)n, 4096);
	if (!err)
		err = elog__fs_pread_full(fd, p->lost + p->llen, (size_t)n, (off_t)pos, &got);
	p->llen += got;
	return err;
}

/* The scan of elog__salvage_plan_segment(), over bytes [from, size) of
 * segment base (open as fd): where elog__seg_tail_next() ends the valid
 * part, it goes on a byte further. */
static int salvage_scan(struct salvage_plan *p, int fd, uint64_t base, uint64_t from, uint64_t size,
                        uint64_t hi)
{
	struct scan s;
	struct seg_tail t = { .next = 0 }; /* below 0: no bound */
	struct elog_record rec;
	uint64_t at, bad = UINT64_MAX; /* where the stretch being passed began */
	int err = elog__scan_init(&s, fd, base, from, size);
	while (!err) {
		t.next = p->next;
		err = elog__seg_tail_next(&s, &t, &rec, &at);
		if (err == 0 && rec.offset < hi) {
			if (bad != UINT64_MAX)
				err = damaged(p, fd, bad, at - bad, p->next, rec.offset - 1);
			if (!err && !p->count_only)
				err = append(&p->keep, &p->klen, &p->kcap, elog__rec_bytes(&rec),
				             (size_t)(s.pos - at));
			bad = UINT64_MAX;
			p->next = rec.offset + 1;
			p->records++;
			continue;
		}
		if (err && err != ELOG_END)
			break;
		if (bad == UINT64_MAX)
			bad = at;
		if (err == ELOG_END && t.why == TAIL_WHOLE) {
			err = bad < size ? damaged(p, fd, bad, size - bad, p->next, hi - 1) : 0;
			break;
		}
		err = 0;
		elog__scan_seek(&s, at + 1);
	}
	elog__scan_free(&s);
	return err;
}

int elog__salvage_plan_segment(int dfd, uint64_t base, uint64_t from, uint64_t upto,
                               uint64_t scan_end, uint64_t hi, struct salvage_plan *p, char *msg)
{
	char name[NAME_MAX_LOCAL];
	unsigned char hdr[SEG_HDR];
	struct stat st;
	struct seg_end e;
	size_t got;
	int fd, err = elog__seg_open_raw(dfd, base, O_RDONLY, &fd, hdr, &got, &st, msg);
	if (err)
		return err;
	elog__seg_name(name, base, SEG_EXT);
	uint64_t size = (uint64_t)st.st_size < upto ? (uint64_t)st.st_size : upto;
	/* A closed segment's seal ends its records, whatever its header
	 * says: salvage rebuilds a damaged one. */
	if ((err = elog__seg_end(fd, 1, base, size, NULL, &e)) == 0 && e.chain == CHAIN_SEALED) {
		p->seal = e.seal;
		size = e.end;
	}
	int hdr_fault = elog__seg_header_verify(hdr, got, base, NULL, NULL);
	if (!err && (size < SEG_HDR || from < SEG_HDR)) {
		err = elog__errmsg_set(msg, ELOG_CORRUPT, "%s: shorter than a segment header",
		                       name);
		goto out;
	}
	if (!err && from == SEG_HDR && hdr_fault == ELOG_BADVERSION) {
		err = elog__errmsg_set(msg, hdr_fault, "%s: unsupported segment version", name);
		goto out;
	}
	if (!err && from == SEG_HDR && !p->count_only)
		err = append(&p->keep, &p->klen, &p->kcap, hdr, SEG_HDR);
	/* The header's bytes are the first damaged stretch when it is
	 * damaged: they go aside, and no offset lay in them. */
	if (!err && from == SEG_HDR && hdr_fault) {
		p->hdr_damaged = 1;
		err = damaged(p, fd, 0, SEG_HDR, p->next + 1, p->next);
	}
	uint64_t end = scan_end < size ? scan_end : size;
	if (!err && end > from)
		err = salvage_scan(p, fd, base, from, end, hi);
	if (!err && end < size)
		err = damaged(p, fd, end, size - end, hi, hi - 1);
	if (err)
		err = elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
out:
	close(fd);
	return err;
}

/* Carry out plan p on segment base, each step durable before the next
 * (see the top); the damaged bytes' file is named in aside. */
static int commit(int dfd, uint64_t base, const struct salvage_plan *p, int64_t now,
                  uint32_t index_interval, char *aside, size_t aside_size, char *msg)
{
	char name[NAME_MAX_LOCAL];
	int err;
	elog__seg_name(name, base, SEG_EXT);
	/* 1: the damaged bytes, aside. */
	snprintf(aside, aside_size, "%s" CUT_INFIX "%lld", name, (long long)now);
	elog__maint_step();
	if ((err = elog__fs_replace_file(dfd, aside, p->lost, p->llen)) != 0)
		return elog__errmsg_set(msg, err, "%s: %s", aside, elog_strerror(err));
	/* 2: the ranges, for readers.  An empty range (damage between two
	 * records with consecutive offsets, e.g. garbage appended after the
	 * last record of a full segment) loses no offset. */
	for (size_t i = 0; i < p->nd; i++) {
		if (p->d[i].first > p->d[i].last)
			continue;
		elog__maint_step();
		if ((err = elog__holes_add(dfd, p->d[i].first, p->d[i].last, now)) != 0)
			return elog__errmsg_set(msg, err, "%s: %s", FN_SALVAGED,
			                        elog_strerror(err));
	}
	/* 3: the good records, in place of the segment, and a new index. */
	elog__maint_step();
	if ((err = elog__fs_replace_file(dfd, name, p->keep, p->klen)) != 0)
		return elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
	int fd = elog__fs_openat(dfd, name, O_RDONLY, 0);
	if (fd < 0)
		return elog__errmsg_set(msg, errno, "%s: %s", name, elog_strerror(errno));
	elog__maint_step();
	err = elog__idx_rebuild(dfd, fd, base, p->klen, index_interval, NULL, msg);
	close(fd);
	return err;
}

/* 1 when every record after the header in keep (klen bytes, records
 * only) has a value that decodes under flags; 0 when one does not (it is
 * not how they were stored); an error when that cannot be told (a
 * dictionary the flags name is missing or unreadable, a codec not in this
 * build).  *tagged: a value is compressed under flags. */
static int values_decode(int dfd, struct vdec *dec, const unsigned char *keep, size_t klen,
                         uint32_t flags, int *tagged, char *msg)
{
	char why[ELOG_MSG_MAX];
	struct elog_record rec;
	uint32_t id = SEG_DICT(flags);
	*tagged = 0;
	if (id) {
		unsigned char *dict;
		size_t dlen;
		int err = elog__dict_load(dfd, id, &dict, &dlen, why);
		if (err)
			return elog__errmsg_set(msg, err == ELOG_CORRUPT ? ELOG_UNSUPPORTED : err,
			                        "%s", why);
		free(dict);
	}
	for (size_t pos = SEG_HDR; pos < klen;) {
		const void *out;
		size_t outlen;
		pos += elog__rec_fields(keep + pos, &rec); /* they all checked */
		int err = elog__vdec_value(dec, dfd, flags, rec.value, rec.value_len, &out, &outlen,
		                           why);
		if (err == ELOG_CORRUPT)
			return 0;
		if (err)
			return elog__errmsg_set(msg, err, "%s", why);
		if (rec.value_len && ((const unsigned char *)rec.value)[0] == TAG_ZSTD)
			*tagged = 1;
	}
	return 1;
}

/* 1 when a value in keep cannot be a codec's (its first byte is no tag):
 * the segment stores values as they are. */
static int untagged_value(const unsigned char *keep, size_t klen)
{
	struct elog_record rec;
	for (size_t pos = SEG_HDR; pos < klen;) {
		pos += elog__rec_fields(keep + pos, &rec);
		const unsigned char *v = rec.value;
		if (rec.value_len && v[0] != TAG_RAW && v[0] != TAG_ZSTD)
			return 1;
	}
	return 0;
}

/* Rebuild the damaged header of segment k of bases[0..n) at the start of
 * keep (klen bytes: that header, then the records kept), its flags found
 * as the top says from its neighbours, the settings and its own damaged
 * header; ELOG_CORRUPT when no candidate reads every value. */
static int rebuild_header(int dfd, const struct elog_settings *set, const uint64_t *bases, size_t n,
                          size_t k, unsigned char *keep, size_t klen, char *msg)
{
	uint64_t base = bases[k];
	uint32_t cand[6], flags = 0;
	size_t nc = 0;
	char name[NAME_MAX_LOCAL], why[ELOG_MSG_MAX];
	int err = 0, coded = 0;

	/* Its neighbours: the segments before and after it. */
	for (size_t j = k > 0 ? k - 1 : k + 1; j < n && j <= k + 1; j += 2) {
		int fd;
		uint32_t f;
		if (elog__seg_open(dfd, bases[j], O_RDONLY, &fd, &f, NULL, NULL) == 0) {
			close(fd);
			cand[nc++] = f;
		}
	}
	const struct codec *c = elog__codec_from_settings(set);
	uint32_t latest = 0;
	if (c) {
		cand[nc++] = SEG_FLAGS(c->id, 0);
		if (c->dictionaries && elog__dict_latest(dfd, &latest) == 0 && latest)
			cand[nc++] = SEG_FLAGS(c->id, latest);
	}
	uint32_t own = elog__seg_header_flags(keep);
	if (elog__codec_flags_valid(own))
		cand[nc++] = own;

	/* A codec whose every value decodes, one at least compressed, is how
	 * they were stored; else one whose values all decode as stored raw;
	 * none (values as they are) only when no codec is in sight, or a
	 * value is plainly not a codec's. */
	struct vdec *dec = elog__vdec_new();
	if (!dec)
		return elog__errmsg_set(msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	int found = 0, rawonly = -1;
	for (size_t i = 0; i < nc && !found; i++) {
		int tagged, ok;
		if (elog__codec_plain(cand[i]))
			continue;
		coded = 1;
		/* 1 or 0, else an error code (negative, or an errno). */
		if ((ok = values_decode(dfd, dec, keep, klen, cand[i], &tagged, msg)) < 0 ||
		    ok > 1) {
			err = ok;
			break;
		}
		if (ok && tagged) {
			flags = cand[i];
			found = 1;
		} else if (ok && rawonly < 0) {
			rawonly = (int)i;
		}
	}
	elog__vdec_free(dec);
	if (!found && !err && rawonly >= 0) {
		flags = cand[rawonly];
		found = 1;
	}
	if (!found && !err && (!coded || untagged_value(keep, klen))) {
		flags = SEG_FLAGS(CODEC_NONE, 0);
		found = 1;
	}
	if (found) {
		elog__seg_header_encode(keep, base, flags, set->id);
		return 0;
	}
	elog__seg_name(name, base, SEG_EXT);
	snprintf(why, sizeof why, "%s",
	         err ? msg
	             : "no codec the log uses "
	               "reads its values");
	return elog__errmsg_set(msg, ELOG_CORRUPT,
	                        "%s: the segment header is damaged "
	                        "and cannot be rebuilt: %s",
	                        name, why);
}

int elog__salvage_segment(int dfd, const struct elog_settings *set, const uint64_t *bases, size_t n,
                          size_t k, uint64_t upto, uint64_t scan_end, uint64_t hi, int64_t now,
                          struct salvage_plan *p, char *aside, size_t aside_size, char *msg)
{
	char name[NAME_MAX_LOCAL];
	uint64_t base = bases[k];
	int closed = k + 1 < n;
	/* A closed segment's seal, when it is whole, ends the records and is
	 * kept; one that is gone or damaged is written again, naming the
	 * next segment (what was lost before it is a damaged range). */
	p->next = base;
	if (closed)
		p->seal = elog__seal_of(set->id, hi, hi, 0);
	int err = elog__salvage_plan_segment(dfd, base, SEG_HDR, upto, scan_end, hi, p, msg);
	if (err || p->nd == 0)
		return err; /* nothing wrong here */
	if (p->hdr_damaged &&
	    (err = rebuild_header(dfd, set, bases, n, k, p->keep, p->klen, msg)) != 0)
		return err;
	if (closed && elog__seg_header_sealed(p->keep)) {
		unsigned char sb[SEAL_SIZE];
		struct seal seal = elog__seal_of(set->id, p->seal.next, p->seal.end, p->klen);
		elog__seal_encode(sb, &seal);
		elog__seg_name(name, base, SEG_EXT);
		if ((err = append(&p->keep, &p->klen, &p->kcap, sb, SEAL_SIZE)) != 0)
			return elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
	}
	return commit(dfd, base, p, now, set->index_interval, aside, aside_size, msg);
}

/* Salvage closed segment k, telling o's hook (o may be NULL) of it. */
static int salvage_one(struct maint *m, size_t k, int64_t now, const struct elog_salvage_opts *o,
                       struct elog_salvage_result *res)
{
	char name[NAME_MAX_LOCAL], aside[NAME_MAX_LOCAL + 32];
	struct salvage_plan p = { 0 };
	int err = elog__salvage_segment(m->dfd, &m->set, m->sl.base, m->sl.n, k, UINT64_MAX,
	                                UINT64_MAX, m->sl.base[k + 1], now, &p, aside, sizeof aside,
	                                m->msg);
	if (err || p.nd == 0)
		goto out;
	elog__seg_name(name, m->sl.base[k], SEG_EXT);
	res->segments++;
	for (size_t i = 0; i < p.nd; i++) {
		struct elog_salvage_report rep = {
			.segment = name,
			.aside = aside,
			.pos = p.d[i].pos,
			.bytes = p.d[i].bytes,
			.lost = p.d[i].first <= p.d[i].last,
			.first = p.d[i].first,
			.last = p.d[i].last,
		};
		res->ranges++;
		res->bytes += p.d[i].bytes;
		if (o && o->each)
			o->each(o->arg, &rep);
	}
out:
	elog__salvage_plan_free(&p);
	return err;
}

int elog_salvage(const char *dir, const struct elog_salvage_opts *o,
                 struct elog_salvage_result *res, char *msg)
{
	char local[ELOG_MSG_MAX];
	struct elog_salvage_result dummy;
	struct maint m;

	if (!msg)
		msg = local;
	if (!res)
		res = &dummy;
	memset(res, 0, sizeof *res);
	msg[0] = '\0';
	int err = elog__maint_open(&m, dir, o ? o->wait_ms : 0, msg);
	int64_t now = elog__fs_now_ms();
	for (size_t i = 0; !err && i < m.nclosed; i++)
		err = salvage_one(&m, i, now, o, res);
	elog__maint_close(&m);
	return err;
}
