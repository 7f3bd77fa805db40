/*
 * files.h: the files of a log directory (elog(5)) as the layers above see
 * them: segments (names, opening one, seals on disk, the chain, the list),
 * what a name says a file is, scanning a segment's records, index files,
 * the watermark and start files, settings, the offsets salvage lost, what
 * consumers lost to retention, the marks maintenance leaves, and a
 * dictionary trained from the log's first values.  consumers.json has its
 * own header, consumers_json.h.
 */
#ifndef ELOG_FILES_H
#define ELOG_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "encoding.h"

struct codec; /* compress.h */

/* ---- segment.c: names, opening, seals on disk, the list of segments ---- */
void elog__seg_name(char *buf, uint64_t base, const char *ext); /* NAME_MAX_LOCAL */
/* Parse "<20 digits><ext>"; 1 when name is such a file. */
int elog__seg_parse_name(const char *name, const char *ext, uint64_t *base);
/* The one way to open a segment: open segment base of dfd with elog__fs_openat()
 * (oflags O_RDONLY or O_RDWR), read its header and check it.  0 with *fd
 * open and, when not NULL, the header's flags in *flags and the file's
 * status in *st.  Otherwise *fd is -1, nothing is left open, and msg (when
 * not NULL) says "<name>: why": an errno value (ENOENT when the file is
 * gone), or elog__seg_header_verify()'s verdict. */
int elog__seg_open(int dfd, uint64_t base, int oflags, int *fd, uint32_t *flags, struct stat *st,
                   char *msg);
/* elog__seg_open() without the verdict, for those that go on past a bad header
 * (recovery rewrites it, verification reports it): 0 with *fd open, up to
 * SEG_HDR bytes of the header in hdr (*got of them) and, when st is not
 * NULL, the file's status in *st; or an errno value as elog__seg_open(). */
int elog__seg_open_raw(int dfd, uint64_t base, int oflags, int *fd, unsigned char *hdr, size_t *got,
                       struct stat *st, char *msg);
/* The one verdict on where the records of a closed segment end, and what
 * it says of the next: a segment whose header has seals (sealed) ends
 * with one in its last SEAL_SIZE bytes (tail, or read from fd when NULL).
 * Each caller decides what to do with it (elog(5), Segment files). */
struct seg_end {
	uint64_t end;     /* where its records end: the seal's pos, else size */
	int chain;        /* CHAIN_NONE: version 1; CHAIN_SEALED: seal below;
	                   * CHAIN_UNSEALED: no seal, or a damaged one */
	int bad_seal;     /* the last SEAL_SIZE bytes are a damaged seal (end
	                   * is then before them) */
	struct seal seal; /* when CHAIN_SEALED */
};
/* 0 with *e filled, or an errno value (reading fd). */
int elog__seg_end(int fd, int sealed, uint64_t base, uint64_t size, const unsigned char *tail,
                  struct seg_end *e);
/* Write a seal at byte pos of fd (not synced). */
int elog__seal_write(int fd, uint64_t pos, const struct seal *s);
struct scan;
/* What closed segment base (open as fd, scanned to its end by s) says of
 * the one after it: its seal; for a segment of elog 0.2, which has none, a
 * seal naming listed, the next segment listed.  ELOG_CORRUPT with msg
 * when a segment of this version lacks its seal. */
int elog__seg_chain_next(int fd, uint64_t base, const struct scan *s, uint64_t listed,
                         struct seal *seal, char *msg);

struct seglist {
	uint64_t *base; /* sorted ascending */
	size_t n;
};
/* List the segments of the log in the directory dfd, leaving out those
 * that lie wholly below its start (see start.c): retention removed them
 * from the log, and a crash kept it from unlinking them.  ELOG_BADVERSION
 * when the start file is of an unknown version. */
int elog__seglist_read(int dfd, struct seglist *sl);
/* The same, the start file judged against the log's id (log_id, NULL:
 * not judged), and what it says in *sv (NULL: not wanted). */
struct elog__start_view;
int elog__seglist_read_start(int dfd, struct seglist *sl, const char *log_id,
                             struct elog__start_view *sv);
void elog__seglist_free(struct seglist *sl);
/* Index of the segment holding offset: the greatest base <= offset, or -1. */
ssize_t elog__seglist_find(const struct seglist *sl, uint64_t offset);

/* ---- files.c: what a file name in a log directory says the file is ---- */
enum {
	FILE_UNKNOWN,     /* nothing elog makes */
	FILE_SEGMENT,     /* "<base>.log" */
	FILE_INDEX,       /* "<base>.idx" */
	FILE_SEGMENT_NEW, /* "<base>.log.new": a segment being created */
	FILE_COMPACT_TMP, /* "<base>.log.compact", "<base>.idx.compact" */
	FILE_CUT,         /* "<base>.log.cut-<ms>[-<n>]", kept by repair */
	FILE_DICT,        /* "dict.<digits>" */
	FILE_SETTINGS,    /* and each file of a fixed name, FN_... */
	FILE_WATERMARK,
	FILE_START,
	FILE_LOCK,
	FILE_WRITERS,
	FILE_MAINT,
	FILE_CONSUMERS,
	FILE_CONSUMERS_LOCK,
	FILE_COMPACT_STATE,
	FILE_RETAIN_LAST,
	FILE_COMPACT_LAST,
	FILE_SALVAGED,
	FILE_LOSSES,
	FILE_COPY_LAST
};
struct file_class {
	int kind;     /* FILE_*: of the name, or for a temporary file
	                       * of elog__fs_replace_file(), of the name it replaces */
	uint64_t num; /* the base of a segment's files (<base> is 20
	                       * digits), a dictionary's id (UINT64_MAX when it
	                       * does not fit), else 0 */
	int tmp;      /* "<name>.tmp.<pid>.<n>", elog__fs_replace_file()'s */
	long pid;     /* that process (tmp), or 0 */
};
/* Classify name; returns fc->kind. */
int elog__file_classify(const char *name, struct file_class *fc);
/* Unlink name from dfd when it is a temporary file left by a process that
 * is gone: one whose lock can be taken, and whose last change is minutes
 * old (for one made by an elog that did not lock them).  The unlink is done
 * under that lock.  *dropped says whether it was; an errno value when the
 * unlink failed. */
int elog__file_tmp_drop(int dfd, const char *name, int *dropped);

/* ---- scan.c: buffered sequential reading of one segment file ---- */
struct scan {
	int fd;
	uint64_t base;  /* the segment's base offset */
	uint64_t pos;   /* file position of the next record */
	uint64_t limit; /* do not read at or past this position */
	unsigned char *buf;
	size_t cap, off, len; /* buf[off..len) holds file bytes from pos on */
	uint64_t buf_pos;     /* file position of buf[0] */
	size_t ra;            /* bytes the next read asks for: small after a
	                        * seek, doubling as reading goes on (the
	                        * buffer grows with it, to 256 KiB) */
	int trunc;            /* last ELOG_CORRUPT was a short tail */
	int sealed;           /* the last ELOG_END was at a seal: */
	struct seal seal;     /* that one */
	uint64_t vpos, vend;  /* the records from vpos (the next one) up to
	                        * vend, in the buffer, have been checked */
};
int elog__scan_init(struct scan *s, int fd, uint64_t base, uint64_t pos, uint64_t limit);
void elog__scan_free(struct scan *s);
/* Read up to want bytes (at most the buffer) from the file's start into
 * the buffer, the header among them, in one pread; the scan goes on from
 * its position.  *got is what there was: fewer than asked when the file
 * ends there (local file systems only read short at the end). */
int elog__scan_read_head(struct scan *s, size_t want, size_t *got);
/* Move to pos, dropping buffered bytes unless pos is inside them. */
void elog__scan_seek(struct scan *s, uint64_t pos);
/* Next record: 0 (rec points into the scan buffer, *at its position),
 * ELOG_END at a clean end (pos == limit or the end of the file),
 * ELOG_CORRUPT with *at the position of a truncated or damaged record
 * (the caller decides whether a truncated tail is corruption),
 * or an errno value. */
int elog__scan_next(struct scan *s, struct elog_record *rec, uint64_t *at);
/* 1 when the last ELOG_CORRUPT was a record cut short by the end of data
 * (possibly still being written) rather than bad bytes. */
int elog__scan_truncated(const struct scan *s);
/* Move to the record an index entry names when it is there, whole and of
 * the entry's offset: 1; else 0, the position unchanged.  The one rule for
 * trusting an entry: a wrong index costs a longer scan, never a wrong
 * answer. */
int elog__scan_to_entry(struct scan *s, const struct idx_entry *e);
/* The one rule for where the valid part of a segment ends (elog(5),
 * Records): its records from where the scan starts, as long as each is
 * whole (elog__scan_next()) and its offset at least next, the base at
 * first and then one past the record before.  Recovery cuts there,
 * verify reports what is past it, readers stop there. */
enum {
	TAIL_WHOLE,   /* to the scan's limit, or its seal */
	TAIL_DAMAGED, /* a record that does not check (elog__scan_truncated()) */
	TAIL_ORDER    /* a whole record whose offset is below next, or at or
	               * past below */
};
struct seg_tail {
	uint64_t next;  /* the least offset the next record may have */
	uint64_t end;   /* where the valid records end, once they did */
	int why;        /* TAIL_*, once they did */
	uint64_t below; /* when not 0, its seal's end: every offset is below */
};
/* The next record of the valid part: 0, ELOG_END with t->end and t->why
 * when the part ended (*rec is the record out of order for TAIL_ORDER),
 * or an errno value. */
int elog__seg_tail_next(struct scan *s, struct seg_tail *t, struct elog_record *rec, uint64_t *at);
/* elog__scan_next() when the next record was already checked (elog__scan_next()
 * checks a few ahead): 1 with rec and *at set as it would set them, else 0
 * and nothing done.  Inline, for the loops that read every record. */
static inline int elog__scan_next_checked(struct scan *s, struct elog_record *rec, uint64_t *at)
{
	if (s->pos != s->vpos || s->pos >= s->vend || s->pos >= s->limit)
		return 0;
	*at = s->pos;
	size_t size = elog__rec_fields(s->buf + s->off, rec);
	s->off += size;
	s->pos += size;
	s->vpos = s->pos;
	s->trunc = 0;
	return 1;
}

/* ---- index.c: index files ---- */
struct index {
	struct idx_entry *e;
	size_t n, cap;
	unsigned version; /* of the file it was loaded from */
};
/* Load base's index from dfd, keeping the prefix of entries that
 * elog__idx_entry_check() passes, each after the one before.  Returns 0
 * (with possibly zero entries), ENOENT, or ELOG_CORRUPT when the header is
 * wrong or of an unknown version; *intact is 1 when every entry in the file
 * was valid. */
int elog__idx_load(int dfd, uint64_t base, uint64_t seg_len, struct index *ix, int *intact);
int elog__idx_push(struct index *ix, const struct idx_entry *e);
void elog__idx_free(struct index *ix);
/* The last entry with offset <= target, or -1. */
ssize_t elog__idx_find_offset(const struct index *ix, uint64_t target);
/* The last entry with offset <= target, found by a binary search of the
 * index file itself (a few reads, for a process that seeks once): 0,
 * ELOG_END when there is none, ELOG_CORRUPT when an entry read is bad (use
 * elog__idx_load() then), or an errno value. */
int elog__idx_lookup(int dfd, uint64_t base, uint64_t seg_len, uint64_t target,
                     struct idx_entry *out);
/* The last whole entry of base's index file, read alone and judged alone
 * (a few reads): 0, ELOG_END when there is none, ELOG_CORRUPT when it or
 * the header is bad, or an errno value. */
int elog__idx_last(int dfd, uint64_t base, uint64_t seg_len, struct idx_entry *out);
/* The first entry with ts_max >= ts, or -1. */
ssize_t elog__idx_find_time(const struct index *ix, int64_t ts);
/* The last entry k >= from such that no record of the segment up to and
 * including entry k's has a timestamp in [lo, hi], by the segment's
 * extremes (ts_min, ts_max); -1 when there is none. */
ssize_t elog__idx_skip_prefix(const struct index *ix, size_t from, int64_t lo, int64_t hi);
/* A cheap test of a closed segment's index: header, size, the last entry
 * pointing at a record with its offset, and no entry missing after it.
 * 1 when it looks right. */
int elog__idx_quick_check(int dfd, int segfd, uint64_t base, uint64_t seg_len, uint32_t interval);
/* Scan a segment from its header and write a fresh index for it (to a
 * temporary file renamed into place), returning it in *ix when ix != NULL. */
int elog__idx_rebuild(int dfd, int segfd, uint64_t base, uint64_t seg_len, uint32_t interval,
                      struct index *ix, char *msg);

/* ---- watermark.c: the file ---- */
/* Read the watermark through fd, retrying a read torn by a concurrent
 * update.  A missing or empty file reads as all zeros. */
int elog__wm_read(int fd, struct watermark *wm);
/* elog__wm_read() for those who act on the watermark: a damaged one (a power loss
 * may garble it: it is never synced) reads as durable up to the newest
 * segment's base, below which every segment is closed and was synced, and
 * nothing of the newest segment. */
int elog__wm_load(int dfd, int fd, struct watermark *wm);
int elog__wm_write(int fd, const struct watermark *wm);

/* ---- start.c: the file, and what it does to the list of segments ---- */
/* Record start durably: by elog__fs_replace_file(), or on a full disk (ENOSPC,
 * EDQUOT) in place with pwrite and fdatasync when the file is there. */
int elog__start_write(int dfd, uint64_t start, const char *log_id);
enum {
	START_NONE,    /* no file: the log starts at 0 */
	START_OK,      /* in force */
	START_DAMAGED, /* ignored; why says what is wrong */
	START_BEYOND   /* names an offset past the newest segment's base:
	                   * wrong, and ignored */
};
struct elog__start_view {
	int state;
	uint64_t start;  /* as recorded (START_OK, START_BEYOND) */
	size_t hidden;   /* START_OK: how many of the first segments lie
	                   * wholly below start, removed from the log */
	const char *why; /* START_DAMAGED */
};
/* Read the start file and apply it to the n ascending segment bases base[]
 * (the directory's, listed before the file is read); one naming another
 * log than log_id (NULL: not judged) is damaged.  Returns 0,
 * ELOG_BADVERSION or an errno value. */
int elog__start_view(int dfd, const uint64_t *base, size_t n, const char *log_id,
                     struct elog__start_view *sv);

/* ---- settings.c ---- */
int elog__settings_parse(const char *text, size_t len, struct elog_settings *s);
/* Render s as text into buf (SETTINGS_MAX); returns the length. */
size_t elog__settings_format(const struct elog_settings *s, char *buf);
int elog__settings_load(int dfd, struct elog_settings *s, char *msg);
int elog__settings_store(int dfd, const struct elog_settings *s);
/* Open the log directory dir as *dfd and load its settings into s: 0, or
 * the error with nothing left open (*dfd -1). */
int elog__settings_open(const char *dir, int *dfd, struct elog_settings *s, char *msg);
/* Make a log of format 1 (settings' "format 1") one of format 2 before a
 * program of this version writes into it; *done when this call did.  The
 * maintenance lock is taken (waiting wait_ms, as elog.h says) unless the
 * caller holds it (locked). */
int elog__settings_upgrade(int dfd, struct elog_settings *s, int locked, int64_t wait_ms, int *done,
                           char *msg);
int elog__settings_new_id(char id[33]);
/* Fill the creation settings of s from opt (defaults for zeros), checking
 * their ranges. */
int elog__opt_check(const struct elog_options *opt, struct elog_settings *s, char *msg);
/* 0 when every creation option given in opt (non-zero) agrees with the
 * stored settings s, else ELOG_INVALID with a message naming the first
 * that does not. */
int elog__settings_check_options(const struct elog_settings *s, const struct elog_options *opt,
                                 char *msg);

/* ---- holes.c: the ranges of offsets salvage lost ---- */
struct hole {
	uint64_t first, last; /* inclusive */
	int64_t ms;           /* when the salvage ran */
};
struct holes {
	struct hole *v; /* ascending, not overlapping */
	size_t n;
};
/* Read FN_SALVAGED (none: zero ranges).  ELOG_CORRUPT, errno values. */
int elog__holes_load(int dfd, struct holes *h);
void elog__holes_free(struct holes *h);
/* Add a range and replace the file. */
int elog__holes_add(int dfd, uint64_t first, uint64_t last, int64_t ms);
/* 1 and the part of the first range that meets [from, to], else 0. */
int elog__holes_find(const struct holes *h, uint64_t from, uint64_t to, uint64_t *first,
                     uint64_t *last);

/* ---- losses.c: what consumers lost to retention, until acknowledged ---- */
struct loss {
	char name[ELOG_CONSUMER_NAME_MAX + 1];
	uint64_t first, last; /* the offsets lost, inclusive */
	uint64_t count;       /* how many of them */
	int64_t ms;           /* when retention last added to it */
};
struct losses {
	struct loss *v; /* one per consumer, in no order */
	size_t n;
};
/* Read FN_LOSSES (none, or a file that is not ours: no loss); lines that
 * do not parse are skipped.  ENOMEM and errno values of reading. */
int elog__losses_load(int dfd, struct losses *l);
void elog__losses_free(struct losses *l);
struct loss *elog__losses_find(const struct losses *l, const char *name);
/* Add [first, last] to name's loss, counting only offsets not in it yet. */
int elog__losses_add(struct losses *l, const char *name, uint64_t first, uint64_t last, int64_t ms);
/* Drop name's loss: 1 when it had one. */
int elog__losses_remove(struct losses *l, const char *name);
/* Replace FN_LOSSES with l (remove it when l is empty), durably. */
int elog__losses_store(int dfd, const struct losses *l);

/* ---- lastrun.c: when maintenance last ran ---- */
/* Record ms in the file name, then the len bytes of more (lines, each
 * ending in a newline), ignoring failure (the mark is information). */
void elog__lastrun_mark(int dfd, const char *name, int64_t ms, const char *more, size_t len);
/* The time recorded in name, INT64_MIN when there is none. */
int64_t elog__lastrun_read(int dfd, const char *name);

/* ---- train.c: a dictionary from the log's first values ---- */
/* A training set: the log's first TRAIN_SAMPLES non-empty values, or fewer
 * that add up to TRAIN_BYTES / 2 (a value that would take the set past
 * TRAIN_BYTES is left out). */
#define TRAIN_SAMPLES 1000
#define TRAIN_BYTES (1u << 20)
/* Records laid end to end as in a segment whose header has these flags:
 * a batch about to be written after the log's tail. */
struct train_more {
	const unsigned char *data;
	size_t len;
	uint32_t flags;
};
struct train_result {
	size_t split;     /* the record of more (counted across them all)
	                    * that completed the set, SIZE_MAX when the
	                    * log's own values did */
	uint64_t missing; /* ELOG_END: records more that could complete it */
	unsigned samples; /* values gathered, */
	size_t bytes;     /* and their bytes */
};
/* Train a dictionary of at most cap bytes for codec c from the log's first
 * values, decoded as the application gave them: those of the segments of
 * dfd from the first up to segment tail_base, read up to byte tail_size
 * (the durable tail; the caller holds the batch lock), then those of
 * more[0 .. nmore).  Segments whose header names a dictionary are passed
 * over.  0 with the dictionary in dict (*len bytes); ELOG_END when there
 * are fewer values than a set; ELOG_INVALID when the codec refuses them
 * (too few, too alike); ENOMEM, errno values. */
int elog__train_first(int dfd, const struct codec *c, uint64_t tail_base, uint64_t tail_size,
                      const struct train_more *more, size_t nmore, unsigned char *dict, size_t cap,
                      size_t *len, struct train_result *res);

#endif
