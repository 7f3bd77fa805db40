/*
 * verify.h: elog_verify(), one job in three files that share its state:
 * verify.c checks, repair.c repairs what the check found, damage.c tells
 * of the offsets readers cannot have.  Shared by those three only.
 */
#ifndef ELOG_VERIFY_H
#define ELOG_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "files.h"

/* ---- verify.c and repair.c: elog_verify() ---- */
/* A header readers refuse as damaged, which salvage rebuilds. */
#define SEG_HDR_DAMAGED(fault) ((fault) == SEG_FAULT_MAGIC || (fault) == SEG_FAULT_CRC)
enum { WM_MISSING, WM_OK, WM_BAD }; /* the watermark file, as checked */
/* What checking a segment learned that later checks and repairs need. */
struct segstate {
	uint64_t base;
	char name[NAME_MAX_LOCAL]; /* its file's */
	int scanned;               /* its records were read (header good enough) */
	int hdr_fault;             /* SEG_FAULT_* of its header; -1: not read */
	int clean;                 /* every record read, to the end of the file */
	int idx_bad;               /* index damaged or missing */
	uint64_t size;
	uint64_t acked;     /* bytes the watermark vouches for (0: none) */
	uint64_t bad_at;    /* first damaged record, or UINT64_MAX */
	uint64_t valid_end; /* end of the last valid record */
	uint64_t next;      /* offset after its last valid record, or base */
	/* Records at or above the next segment's base: a merge interrupted
	 * before it removed that segment, or damage (see check_overlap). */
	uint64_t overlap_pos, overlap_off;
	int overlap;
	int damaged;      /* any damage found in it */
	int chain;        /* CHAIN_*: what it says of the next segment */
	struct seal seal; /* when CHAIN_SEALED */
	/* For the segment the watermark names: */
	int wm_boundary;  /* segment_bytes is the end of a record */
	uint64_t wm_next; /* offset after the last record it covers */
};

struct verify {
	int dfd;
	int quiet; /* the check after a repair: count only */
	unsigned flags;
	const struct elog_verify_opts *o; /* NULL: no callbacks */
	struct elog_verify_result *res;
	char *msg;
	struct elog_settings set;
	int have_set;
	struct watermark wm;
	int wm_state;
	int wm_fix; /* the watermark disagrees with the data */
	/* Offsets the chain of segments says are lost (repair records them
	 * in FN_SALVAGED), and closed segments whose seal repair writes
	 * again (their index in seg). */
	struct hole *lost;
	size_t nlost;
	uint64_t *reseal;
	size_t nreseal;
	int sick;           /* LOCK says a writer's fdatasync failed */
	struct holes holes; /* the offsets salvage lost; holes_err: reading them */
	int holes_err;
	uint64_t *base;
	size_t n;
	int start_fix; /* --repair writes the start anew, naming base[0] */
	struct segstate *seg;
	uint64_t total, done, shown;
};

/* damage.c: count a problem into v->res and hand it to the caller's hook,
 * with hint (ELOG_HINT_*) and detail (NULL: none) as struct elog_problem
 * says. */
void elog__verify_report(struct verify *v, int kind, int hint, const char *detail, const char *file,
                         uint64_t pos, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Take maint.lock, then LOCK (emptying its state), for a repair. */
int elog__repair_lock(struct verify *v, int *lockfd, int *maintfd);
/* Repair what the check found: stale temporary files, indexes, the start
 * file, the active segment's tail and the watermark. */
int elog__repair_run(struct verify *v);

/* ---- damage.c: what elog_verify() tells of offsets readers cannot have ---- */
/* A line (ELOG_PROBLEM_LOSS) for each range of v->holes, the offsets
 * repairs and salvage lost, that the log's segments still span. */
void elog__verify_losses(struct verify *v);
/* A line (ELOG_PROBLEM_UNREADABLE) for each damaged segment: the offsets
 * readers cannot read past the damage, the named consumers behind them,
 * and what --salvage would keep and lose. */
int elog__verify_unreadable(struct verify *v);

#endif
