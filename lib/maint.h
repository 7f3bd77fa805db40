/*
 * maint.h: maintenance: what retention and compaction share (maint.c),
 * the keys compaction keeps (keyset.c), and salvage (salvage.c), which
 * keeps every record that checks past damage.  Used by retain.c,
 * compact.c and the repairs of verify.h.
 */
#ifndef ELOG_MAINT_H
#define ELOG_MAINT_H

#include <stddef.h>
#include <stdint.h>

#include "files.h"

/*
 * Retention and compaction run beside the writer under FN_MAINT, never
 * LOCK, and change closed segments only: those below both the newest
 * segment on disk and the segment the watermark names.
 */

struct maint {
	char *msg; /* ELOG_MSG_MAX bytes, for every error */
	int dfd, lockfd, wmfd;
	struct elog_settings set;
	struct watermark wm;           /* as read when the list was made */
	struct seglist sl;             /* every segment of the log, ascending */
	struct elog__start_view start; /* the start file, as sl was listed */
	size_t nclosed;                /* sl.base[0 .. nclosed) may be changed */
};
/* Open DIR as a log, take the maintenance lock (waiting up to wait, a
 * wait of elog.h as the caller was given it) and list the segments.
 * ELOG_LOCKED names the pid of the other maintenance run. */
int elog__maint_open(struct maint *m, const char *dir, int64_t wait, char *msg);
void elog__maint_close(struct maint *m);
/* Called before each step of maintenance that changes a file; does nothing
 * (maintstep.c: tests replace it at link time to crash at a given step). */
void elog__maint_step(void);
/* Finish or undo what an interrupted run left: temporary files, segments
 * below the log's start, index files without a segment, and segments whose
 * records a merge already copied into their predecessor; rewrite a start
 * file that is ignored.  *fixed counts the files removed or rewritten. */
int elog__maint_cleanup(struct maint *m, uint64_t *fixed);
/* Each after elog__maint_step(): unlink name in the log directory (a file
 * already gone is fine); fsync the directory.  0, or the error in m->msg. */
int elog__maint_unlink(struct maint *m, const char *name);
int elog__maint_sync_dir(struct maint *m);

/* What a segment holds, from its index and a scan of its tail. */
struct seg_info {
	uint64_t base;
	uint64_t size;     /* bytes of the .log file */
	uint64_t last;     /* offset of its last record (if any) */
	int64_t newest_ms; /* greatest ts_ms (if any) */
	int empty;         /* no records */
};
int elog__seg_info_read(struct maint *m, uint64_t base, struct seg_info *si);
/* The message of scan s of segment base failing with err at byte at
 * (ELOG_INVALID: a record out of order, reported as ELOG_CORRUPT). */
int elog__maint_scan_error(struct maint *m, uint64_t base, const struct scan *s, int err,
                           uint64_t at);
/* Remove segment base: the .log, then the .idx, then fsync the directory. */
int elog__seg_remove(struct maint *m, uint64_t base);
/* Make start, a base of a listed segment, the log's first offset: write the
 * start file, unlink the closed segments below it (.log, then .idx) with no
 * sync between them, then fsync the directory once, and drop them from
 * m->sl. */
int elog__seg_remove_below(struct maint *m, uint64_t start);

/* keyset.c: the newest offset of every key, by a 128-bit SipHash-2-4 of the
 * key under a random key chosen per table (open addressing). */
#define KEYSET_SHARD_BITS 8
#define KEYSET_SHARDS (1u << KEYSET_SHARD_BITS)
struct keyset {
	struct keyshard { /* grown one at a time */
		struct keyslot *slot;
		size_t cap, n;
	} * shard;       /* KEYSET_SHARDS of them */
	size_t cap, n;   /* slots and keys in all shards */
	size_t peak;     /* most slot bytes held at once */
	uint64_t k0, k1; /* the SipHash key */
};
void elog__siphash128(const void *data, size_t len, uint64_t k0, uint64_t k1,
                      unsigned char out[16]);
int elog__keyset_init(struct keyset *ks);
void elog__keyset_free(struct keyset *ks);
/* Note that the key's newest record is at offset (a tombstone or not). */
int elog__keyset_put(struct keyset *ks, const void *key, size_t len, uint64_t offset,
                     int tombstone);
/* The newest offset noted for key: 1 and *offset, *tombstone; 0 if none. */
int elog__keyset_get(const struct keyset *ks, const void *key, size_t len, uint64_t *offset,
                     int *tombstone);
size_t elog__keyset_memory(const struct keyset *ks);

/* ---- salvage.c: keeping every record that checks past damage ---- */
/* One damaged stretch of a segment, and the offsets that lay in it. */
struct salvage_damage {
	uint64_t pos, bytes;  /* in the old file */
	uint64_t first, last; /* offsets lost; first > last: none */
};
/* What salvage makes of a segment's bytes. */
struct salvage_plan {
	int count_only;             /* set by the caller: fill no buffers */
	unsigned char *keep, *lost; /* the new file; the damaged bytes */
	size_t klen, kcap, llen, lcap;
	struct salvage_damage *d;
	size_t nd;
	uint64_t records; /* records kept */
	uint64_t next;    /* offset after the last record kept */
	int hdr_damaged;  /* the header went aside (from SEG_HDR) */
	struct seal seal; /* the segment's own, when it is whole */
};
void elog__salvage_plan_free(struct salvage_plan *p);
/* Plan the salvage of segment base from its first upto bytes
 * (UINT64_MAX: the whole file): its records from byte from (SEG_HDR: the
 * header is kept too) before byte scan_end (or its seal, then in
 * p->seal), each record kept that continues the valid part as
 * elog__seg_tail_next() judges it, from offset p->next (set by the
 * caller: the base, or the one after the last record before from), and
 * is below hi; the stretches between are damaged, and their offsets
 * lost.  Bytes from scan_end on are one damaged stretch that
 * holds no offset (the active segment's bytes past the durable end,
 * never acknowledged).  From SEG_HDR, a damaged header (of this version)
 * is a damaged stretch that holds no offset, and p->hdr_damaged says so. */
int elog__salvage_plan_segment(int dfd, uint64_t base, uint64_t from, uint64_t upto,
                               uint64_t scan_end, uint64_t hi, struct salvage_plan *p, char *msg);
/* Salvage segment k of bases[0..n) (closed when k + 1 < n) as the top of
 * salvage.c says: plan it (elog__salvage_plan_segment() from SEG_HDR,
 * upto, scan_end and hi as there), rebuild a damaged header from its
 * neighbours, seal a closed one again, and carry the plan out, each step
 * durable before the next (the damaged bytes' file is named in aside).
 * Nothing is done when p->nd is 0: no damage. */
int elog__salvage_segment(int dfd, const struct elog_settings *set, const uint64_t *bases, size_t n,
                          size_t k, uint64_t upto, uint64_t scan_end, uint64_t hi, int64_t now,
                          struct salvage_plan *p, char *aside, size_t aside_size, char *msg);

/* ---- compact.c: what verify checks of compaction's own file ---- */
/* 0 when FN_COMPACT_STATE is absent or reads as compaction reads it;
 * else the error compaction would stop on, its message in msg. */
int elog__compact_state_check(int dfd, char *msg);

#endif
