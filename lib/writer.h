/*
 * writer.h: what writing needs below the writer handle (writer.c's own):
 * making a log and its segments (create.c) and recovering the active
 * segment after a crash (recover.c); repair uses them too.
 */
#ifndef ELOG_WRITER_H
#define ELOG_WRITER_H

#include <stdint.h>

#include "files.h"

#define DEFAULT_BATCH_BYTES (1u << 20)

/* ---- create.c ---- */
/* Create segment base and its index with their headers (not synced). */
int elog__seg_create(int dfd, uint64_t base, uint32_t flags, const char *log_id, int *segfd,
                     int *idxfd);
/* ELOG_NOTLOG unless dfd is empty but for what an interrupted creation
 * leaves behind. */
int elog__log_check_fresh(int dfd, char *msg);
/* Turn the directory dfd (held under LOCK) into a new, empty log. */
int elog__log_create(int dfd, const struct elog_options *opt, char *msg);

/* ---- recover.c ---- */
struct recovery {
	uint64_t base;      /* the active segment */
	int segfd, idxfd;   /* opened read-write; owned by the caller */
	uint64_t file_size; /* its size before recovery */
	uint64_t size;      /* its valid length, where it was cut */
	uint64_t idx_size;
	uint64_t next;         /* the next offset to append */
	int cut;               /* 1 when bytes were cut or a header rewritten */
	uint32_t flags;        /* its header's flags (codec, dictionary) */
	struct index ix;       /* its index entries (elog__idx_free()) */
	struct idx_builder ib; /* to go on adding entries */
	int sync_failed;       /* the error of its failed fdatasync, or 0 */
};
/* Recover the active segment base; see the comment in recover.c. */
int elog__recover_active(int dfd, const struct watermark *wm, uint64_t base,
                         const struct elog_settings *set, uint32_t new_flags, int to_watermark,
                         struct recovery *rc, char *msg);
/* Remove segments whose creation a crash interrupted ("<base>.log.new"). */
int elog__recover_leftovers(int dfd, char *msg);
/* Check the index of the closed segment base; rebuild it when wrong. */
int elog__recover_index(int dfd, uint64_t base, uint32_t interval, char *msg);

/* How long a sync of the slot's holder may stay pending before a writer
 * that cannot vouch for it counts it as failed (writer.c): a second; the
 * crash simulator, whose hooks hold a leader in its sync while others
 * act, sets a shorter one. */
extern int64_t elog__sync_stall_ns;

#endif
