/*
 * reader.h: the reader handle, shared by reader.c and follow.c only.
 */
#ifndef ELOG_READER_H
#define ELOG_READER_H

#include <sys/types.h>

#include "files.h"

/* A segment open for reading: the one read on, the one a seek parked, and
 * the one walked back in each keep one. */
struct rseg {
	int fd; /* -1: none */
	uint64_t base;
	uint64_t next;    /* the next segment's base when this one was
	                   * opened, UINT64_MAX when unknown or none */
	uint32_t flags;   /* codec and dictionary */
	int plain;        /* its values are stored as given */
	int v2;           /* its version ends it with a seal */
	int chain;        /* what it says of the next one: CHAIN_* */
	struct seal seal; /* its seal, when CHAIN_SEALED */
	ino_t ino;        /* its file, once seg_identify() asked */
	dev_t dev;
	int id_known;
	struct scan sc;
	struct index ix;      /* its index, once a second seek loaded it */
	uint64_t ix_size;     /* segment bytes it was loaded for, 0 = none */
	int jumps;            /* index jumps or lookups made in it */
	struct seg_tail tail; /* its valid part as read: next is one past
	                       * its last record, else its base */
};

struct elog_reader {
	char msg[ELOG_MSG_MAX];
	char *dir;
	char log_id[33]; /* the settings' id: segment headers must name it */
	int dfd, wmfd;
	struct watermark wm; /* as last read */
	uint64_t want;       /* the next record returned has offset >= want */

	struct rseg cur; /* the segment read on */
	struct vdec *vd; /* decodes values, made when first needed */
	/* Indexes of segments closed lately, by base and file, so that seeks
	 * hopping between segments do not load them again. */
	struct ixcache {
		uint64_t base, size; /* size 0: an empty slot */
		ino_t ino;
		dev_t dev;
		struct index ix;
	} ixc[4];
	unsigned ixc_next;
	/* elog_reader_window(): the records returned have lo <= ts <= hi.
	 * The index of the open segment is consulted again once the scan
	 * reaches win_check, the next entry's position. */
	int win;
	int64_t win_lo, win_hi;
	uint64_t win_check;
	/* The segment a seek moved away from, kept open with its scan and
	 * index (fd -1: none), so that seeks hopping between two segments
	 * open neither again.  Dropped once reading reaches the end of a
	 * segment, so that it keeps no removed file for long. */
	struct rseg pk;

	/* The segments as last listed: listed again only when stale (see
	 * reader.c). */
	struct seglist segs;
	int segs_valid;
	unsigned long lists; /* listings made, for tests */

	int gap_pending; /* 0, or the cause of the gap noted */
	uint64_t gap_first, gap_last;
	int gap_cause;      /* ELOG_GAP_RETENTION or ELOG_GAP_DAMAGE */
	struct holes holes; /* the file "salvaged", as last loaded */

	/* Walking back (elog_reader_prev(), see reader.c): a segment open on
	 * its own, and the records of one stretch of it. */
	struct back {
		struct rseg s; /* its ix once ix_state is set */
		uint64_t size; /* its file size when last looked at */
		int ix_state;  /* 1 loaded from .idx, 2 made by a scan */
		int valid;     /* recs holds every record of the
		                * segment with lo <= offset < hi */
		uint64_t lo, hi;
		struct index recs; /* their offsets and byte positions */
	} bk;
	int reseek; /* elog_reader_prev() moved want: the forward
	             * scan must look it up before reading on */

	int ino_fd;        /* inotify instance, or -1 */
	int wd_wm, wd_dir; /* its watches, or -1 */
	int follow_ready;
};

/* reader.c: the directory gained segment base (an inotify event). */
void elog__reader_segment_created(elog_reader *r, uint64_t base);
/* reader.c: the directory changed in ways the events do not say. */
void elog__reader_segments_stale(elog_reader *r);

/* follow.c */
void elog__follow_drain(elog_reader *r);
void elog__follow_close(elog_reader *r);

#endif
