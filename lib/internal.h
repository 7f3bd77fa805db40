/*
 * internal.h: declarations shared by the files of libelog, never installed.
 * The constants of the on-disk format are in format.h.
 *
 * The layers of lib/, lowest first.  A file calls only files of its own
 * line or the lines above; `make check-layers` holds every object to
 * tests/layers/order, the same list one file a line.
 *
 *   pure code       crc32c buf errors timestamp record
 *   POSIX           fsutil holders keyset lastrun holes lock
 *   codecs          compress (its dictionaries are files)
 *   elog(5) files   start segment files watermark scan index settings
 *                   consumers_json losses train
 *   write and read  recover create writer reader+follow consumers
 *   maintenance     maintstep maint salvage compact retain
 *   verification    damage repair verify
 *   summary         summary
 *
 * reader.c and follow.c are one object in two files (reader.h): the reader
 * calls follow.c to wait and drain, follow.c calls back for the segment
 * list; they are the one pair allowed to call each other.
 */
#ifndef ELOG_INTERNAL_H
#define ELOG_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/stat.h>

#include "elog.h"
#include "format.h"

#define DEFAULT_BATCH_BYTES (1u << 20)

/* ---- little-endian encoding (le.h would be a junk drawer of one line) ---- */
static inline void put16(unsigned char *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}
static inline void put32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}
static inline void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}
static inline uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ---- buf.c ---- */
/* Make *p hold at least need bytes, doubling from first (0 or ENOMEM). */
int elog__buf_grow(unsigned char **p, size_t *cap, size_t need, size_t first);

/* ---- timestamp.c ---- */
/* 1 when retention may believe ts_ms: from 2000-01-01 to an hour past
 * now_ms. */
int elog__ts_plausible(int64_t ts_ms, int64_t now_ms);

/* ---- crc32c.c ---- */
uint32_t elog__crc32c(uint32_t crc, const void *buf, size_t len);
const char *elog__crc32c_impl(void); /* "sse4.2", "armv8-crc" or "table" */
/* crc[i] = elog__crc32c(0, p[i], len[i]) for i < n, several buffers side by
 * side: short ones (records) leave the CRC instruction idle one at a time. */
void elog__crc32c_each(const unsigned char *const *p, const size_t *len, uint32_t *crc, size_t n);
/* The portable code alone, whatever the CPU has: for tests to compare. */
uint32_t elog__crc32c_table(uint32_t crc, const void *buf, size_t len);

/* ---- errors.c: messages ---- */
/* Format a message into buf (ELOG_MSG_MAX bytes: a handle's or a caller's)
 * and return code, so error paths read "return elog__errmsg_set(...)". */
int elog__errmsg_set(char *buf, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* ---- fsutil.c: durability helpers ---- */
int elog__fs_write_all(int fd, const void *buf, size_t len);
int elog__fs_pwrite_all(int fd, const void *buf, size_t len, off_t pos);
/* Read up to len bytes at pos; *got is what was there (short at EOF). */
int elog__fs_pread_full(int fd, void *buf, size_t len, off_t pos, size_t *got);
int elog__fs_fsync_dir(int dfd);
/* Write data to a fresh temporary file in dfd, fsync it, rename it over
 * name and fsync the directory.  The file gets mode 0666 less the umask. */
int elog__fs_replace_file(int dfd, const char *name, const void *data, size_t len);
/* Create "<name>.tmp.<pid>.<n>" in dfd (its name in tmp, of size bytes) for
 * writing, and hold an exclusive flock on it through the descriptor
 * returned, which is closed only once the name is renamed or unlinked:
 * that lock is what keeps elog__file_tmp_drop() away.  -1 and errno. */
int elog__fs_tmp_create(int dfd, const char *name, char *tmp, size_t size);
/* Read a whole small file (at most max bytes, else EFBIG) into a malloc'ed,
 * NUL-terminated buffer.  Refuses what elog__fs_openat() refuses. */
int elog__fs_read_small(int dfd, const char *name, size_t max, char **data, size_t *len);
/* Open a file in dfd as openat(2) does, refusing what a log directory
 * must never hold: a symbolic link (ELOOP), anything but a regular file
 * (ELOG_NOTREG: never opened at all, so a FIFO cannot block and a device
 * cannot act), and, when opening for writing, a file with more than one
 * hard link (ELOG_LINKED).  A file it creates while running as root gets
 * the directory's owner and group.  -1 and errno, which holds the ELOG_*
 * code for those two refusals, so that it travels as any errno value. */
int elog__fs_openat(int dfd, const char *name, int flags, mode_t mode);
int64_t elog__fs_now_ms(void);
/* Call fn(name, arg) for each entry of the directory dfd but "." and "..",
 * until it returns non-zero.  Returns 0, that value, or an errno value. */
int elog__fs_dir_each(int dfd, int (*fn)(const char *name, void *arg), void *arg);
/* len bytes from /dev/urandom. */
int elog__fs_random(void *buf, size_t len);
/* Returns 1 when fd is on a network filesystem (NFS, SMB/CIFS, ...). */
int elog__fs_is_netfs(int fd);

/* ---- lock.c ---- */
/* Take an exclusive flock on name in dfd (blocking when wait), writing our
 * pid into it when record_pid.  ELOG_LOCKED names the holder's pid. */
int elog__lock_take(int dfd, const char *name, int wait, int record_pid, int *fdp, char *msg);
/* The same, waiting up to wait_ms (0: not at all, -1: for ever); when the
 * time runs out, ELOG_LOCKED and a message naming the file, the time waited
 * and the pid the holder wrote, if any. */
int elog__lock_take_ms(int dfd, const char *name, int64_t wait_ms, int record_pid, int *fdp,
                       char *msg);
/* A wait of elog.h (ELOG_WAIT_*, or ms) as lock.c takes it into *ms:
 * -1 for ever, 0 not at all, else ms; 0 given means dflt.  ELOG_INVALID
 * for another negative value. */
int elog__wait_ms(int64_t given, int64_t dflt, int64_t *ms, char *msg);
/* Open (creating) the lock file name in dfd, refusing a symbolic link. */
int elog__lock_open(int dfd, const char *name, int *fdp, char *msg);
/* The writers' batch lock on LOCK (fd open read-write): take it, waiting
 * up to wait_ms (-1: for ever) and taking turns with other waiters;
 * ELOG_LOCKED when the time runs out. */
int elog__lock_acquire(int fd, int64_t wait_ms, char *msg);
void elog__lock_release(int fd);
/* A failed fdatasync, announced on LOCK (fd) until the state says sick
 * (on: 1 announce, 0 withdraw); pending: another handle announced one. */
void elog__lock_sick_announce(int fd, int on);
int elog__lock_sick_pending(int fd);
/* Take a free sync slot on LOCK (fd): its number, or -1 when every one is
 * taken; release it after the sync. */
int elog__lock_slot_take(int fd);
void elog__lock_slot_release(int fd, int slot);
/* 0 when the directory's LOCK is still the file whose status (taken
 * once, when it was opened) is mine, else ELOG_FAILED with a message: the
 * log was deleted, or LOCK removed or replaced.  One fstatat(2). */
int elog__lock_is_current(int dfd, const struct stat *mine, char *msg);
/* What LOCK says about the log's tail, written by the holder of the batch
 * lock: text of LOCK_STATE_LEN bytes (format in elog(5)). */
struct lock_state {
	int valid;              /* the file held a state with a right crc */
	uint64_t epoch;         /* random, never 0; chosen anew whenever the
	                           * state is rebuilt or anything at or below
	                           * the recorded tail may have been removed */
	uint64_t gen;           /* bumped by every change to the log's tail */
	unsigned busy;          /* 1 while a holder writes past the tail: a
	                           * holder that died left it so */
	unsigned sick;          /* 1: a writer's fdatasync failed; the next
	                           * holder cuts back to the watermark */
	unsigned pid;           /* the last holder */
	unsigned char boot[16]; /* the boot it was written in */
	/* The tail: complete records end here (even while busy). */
	uint64_t next, base, size;
	uint32_t flags;     /* the active segment's header flags */
	uint64_t idx;       /* its index's length */
	uint64_t ixpos;     /* the index builder: last entry's position, */
	int64_t ixts;       /* greatest time in the segment, */
	int64_t ixmin;      /* least time in the segment, */
	int64_t ixlo, ixhi; /* least and greatest time since its entry, */
	unsigned ixany;     /* whether there is an entry */
};
void elog__lock_state_encode(char *p, const struct lock_state *ls);
int elog__lock_state_decode(const char *p, size_t len, struct lock_state *ls);
/* A missing, short or damaged state reads as !valid. */
int elog__lock_state_read(int fd, struct lock_state *ls);
/* Write ls; with trunc, also cut the file to its length (when it held
 * something else before). */
int elog__lock_state_write(int fd, const struct lock_state *ls, int trunc);
/* This boot's id (Linux); 0 when it cannot be known. */
int elog__lock_boot_id(unsigned char id[16]);

/* ---- holders.c ---- */
/* The pids holding a lock on name in dfd, from /proc/locks, in a malloc'ed
 * array (*n 0 and *pids NULL when none, or when the file does not exist).
 * An errno value when /proc/locks cannot be read (not Linux, no /proc). */
int elog__lock_holders(int dfd, const char *name, pid_t **pids, size_t *n);

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
};
void elog__salvage_plan_free(struct salvage_plan *p);
/* Sort data[from, size), the records of a segment, into the records that
 * check (a length and CRC that hold, an offset in [p->next, hi) above the
 * record before) and the damaged stretches between them, whose offsets
 * run from the one after the last good record to the one before the next
 * good record, or to hi - 1 at the end.  p->next is the lowest offset a
 * record may have (the base) on the first call. */
int elog__salvage_scan(struct salvage_plan *p, const unsigned char *data, size_t from, size_t size,
                       uint64_t hi);
/* Plan the salvage of segment base from its first upto bytes
 * (UINT64_MAX: the whole file): its records from byte from (SEG_HDR: the
 * header is kept too) before byte scan_end, with offsets from p->next
 * (set by the caller: the base, or the one after the last record before
 * from) and below hi; bytes from scan_end on are one damaged stretch that
 * holds no offset (the active segment's bytes past the durable end,
 * never acknowledged). */
int elog__salvage_plan_segment(int dfd, uint64_t base, uint64_t from, uint64_t upto,
                               uint64_t scan_end, uint64_t hi, struct salvage_plan *p, char *msg);
/* Carry out plan p on segment base, each step durable before the next:
 * the damaged bytes to "<segment>.cut-<now>" (its name in aside), the
 * offsets lost to FN_SALVAGED, the kept bytes renamed over the segment,
 * its index rebuilt. */
int elog__salvage_commit(int dfd, uint64_t base, const struct salvage_plan *p, int64_t now,
                         uint32_t index_interval, char *aside, size_t aside_size, char *msg);

/* ---- damage.c: what elog_verify() tells of offsets readers cannot have ---- */
struct verify;
struct holes;
/* A line (ELOG_PROBLEM_LOSS) for each range of h, the offsets repairs and
 * salvage lost, that the log's segments still span. */
void elog__verify_losses(struct verify *v, const struct holes *h);
/* A line (ELOG_PROBLEM_UNREADABLE) for each damaged segment: the offsets
 * readers cannot read past the damage, the named consumers behind them,
 * and what --salvage would keep and lose. */
int elog__verify_unreadable(struct verify *v);

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

/* ---- record.c: encode, decode and check one record ---- */
size_t elog__rec_size(size_t key_len, size_t value_len); /* bytes on disk */
/* The elog__rec_size() bytes of a record that elog__rec_decode() or elog__scan_next() gave,
 * as they lie in the buffer it was decoded from. */
const unsigned char *elog__rec_bytes(const struct elog_record *rec);
/* Encode rec at p (elog__rec_size() bytes). */
void elog__rec_encode(unsigned char *p, const struct elog_record *rec);
/* Check the record at p, of which avail bytes are present.
 * Returns 0 and fills *rec (pointing into p) and *size, or:
 *   ELOG_END     fewer bytes present than the record needs (incomplete),
 *   ELOG_CORRUPT a length out of range or a CRC mismatch. */
int elog__rec_decode(const unsigned char *p, size_t avail, struct elog_record *rec, size_t *size);
/* Fill rec from the record at p whose length, key length and CRC were
 * checked as elog__rec_decode() checks them; its size on disk.  Inline:
 * a reader runs it for every record. */
static inline size_t elog__rec_fields(const unsigned char *p, struct elog_record *rec)
{
	uint32_t len = get32(p);
	uint16_t key_len = get16(p + 26);
	rec->offset = get64(p + 8);
	rec->ts_ms = (int64_t)get64(p + 16);
	rec->schema = get16(p + 24);
	rec->key_len = key_len;
	rec->key = p + REC_HDR;
	rec->value_len = len - REC_FIXED - key_len;
	rec->value = p + REC_HDR + key_len;
	return (size_t)len + 4;
}

/* ---- segment.c: names, headers and the list of segments ---- */
void elog__seg_name(char *buf, uint64_t base, const char *ext); /* NAME_MAX_LOCAL */
/* Parse "<20 digits><ext>"; 1 when name is such a file. */
int elog__seg_parse_name(const char *name, const char *ext, uint64_t *base);
void elog__seg_header_encode(unsigned char *p, uint64_t base); /* flags 0 */
void elog__seg_header_encode_flags(unsigned char *p, uint64_t base, uint32_t flags);
/* 0, ELOG_CORRUPT (bad magic, crc or base), ELOG_BADVERSION (a version or
 * codec this code does not know). */
int elog__seg_header_check(const unsigned char *p, uint64_t base);
/* The flags of a header that passed elog__seg_header_check(). */
uint32_t elog__seg_header_flags(const unsigned char *p);
/* 1 when the header's version says the segment ends with a seal once it is
 * closed (SEG_VERSION), 0 for SEG_VERSION_1. */
int elog__seg_header_sealed(const unsigned char *p);
/* What is wrong with a header of which got bytes were read, for a report
 * that names the byte: the first of these that applies, or SEG_FAULT_NONE.
 * A wrong base is found after a wrong version; the reserved field, which
 * readers ignore, last. */
enum {
	SEG_FAULT_NONE,
	SEG_FAULT_SHORT, /* fewer than SEG_HDR bytes */
	SEG_FAULT_MAGIC,
	SEG_FAULT_CRC,
	SEG_FAULT_VERSION, /* version or codec unknown (ELOG_BADVERSION) */
	SEG_FAULT_BASE,    /* the base is not the name's */
	SEG_FAULT_RESERVED /* reserved bytes not zero: harmless to readers */
};
int elog__seg_header_fault(const unsigned char *p, size_t got, uint64_t base);
/* The verdict on the header of segment base, of which got bytes were read:
 * 0, or ELOG_CORRUPT or ELOG_BADVERSION with the message every caller gives
 * for it in msg (when not NULL): "<name>: truncated header", "<name>: bad
 * segment header", "<name>: unsupported segment version". */
int elog__seg_header_verify(const unsigned char *p, size_t got, uint64_t base, char *msg);
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

/* The seal at the end of a closed segment (elog(5), Segment files): the
 * segment's place in the chain of the log's segments. */
struct seal {
	uint64_t next;                 /* the base of the segment after it */
	uint64_t end;                  /* the offset after its last record */
	uint64_t pos;                  /* where the seal lies: the end of its records */
	unsigned char id[SEAL_ID_LEN]; /* the log's id */
};
/* The log id of settings (32 hex digits) as the seal holds it. */
void elog__seal_id(const char *hex, unsigned char *id);
void elog__seal_encode(unsigned char *p, const struct seal *s);
/* The one decoder of a seal: SEAL_SIZE bytes at p, read at byte pos of
 * segment base.  0; ELOG_END when they are not a seal (no magic: the
 * segment ends with a record); ELOG_CORRUPT when they are a damaged one. */
int elog__seal_decode(const unsigned char *p, uint64_t base, uint64_t pos, struct seal *s);
/* The seal at the end of segment base, open as fd, of size bytes: as
 * elog__seal_decode(), or an errno value. */
int elog__seal_read(int fd, uint64_t base, uint64_t size, struct seal *s);
/* Write a seal at byte pos of fd (not synced). */
int elog__seal_write(int fd, uint64_t pos, const struct seal *s);
struct scan;
/* What closed segment base (open as fd, scanned to its end by s) says of
 * the one after it: its seal; for a segment of elog 0.2, which has none, a
 * seal naming listed, the next segment listed.  ELOG_CORRUPT with msg
 * when a segment of this version lacks its seal. */
int elog__seg_chain_next(int fd, uint64_t base, const struct scan *s, uint64_t listed,
                         struct seal *seal, char *msg);

/* What a segment says of the one after it. */
enum {
	CHAIN_NONE,    /* nothing: the active one, or of elog 0.2 */
	CHAIN_SEALED,  /* its seal names the next base */
	CHAIN_UNSEALED /* closed without a seal: truncated */
};

struct seglist {
	uint64_t *base; /* sorted ascending */
	size_t n;
};
/* List the segments of the log in the directory dfd, leaving out those
 * that lie wholly below its start (see start.c): retention removed them
 * from the log, and a crash kept it from unlinking them.  ELOG_BADVERSION
 * when the start file is of an unknown version. */
int elog__seglist_read(int dfd, struct seglist *sl);
/* The same, and what the start file says in *sv. */
struct elog__start_view;
int elog__seglist_read_start(int dfd, struct seglist *sl, struct elog__start_view *sv);
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
	                        * buffer grows with it, to 128 KiB) */
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

/* ---- index.c: the sparse index, its one decoder and one verdict ---- */
struct idx_entry {
	uint64_t offset;
	int64_t ts_max; /* max ts_ms of records from the segment's start
	                        * through this one */
	uint32_t pos;
	int64_t ts_min;   /* min ts_ms of the same records */
	int64_t span_min; /* min and max ts_ms of the records from the */
	int64_t span_max; /* previous entry's up to this one, excluded;
	                        * IDX_SPAN_EMPTY_* for the first entry */
};
/* Where the entries of an index version keep their fields (format.h).
 * Version 1 entries have no ts_min or span: they decode as the widest
 * (INT64_MIN, and INT64_MIN..INT64_MAX), which never lets a reader skip. */
struct idx_layout {
	unsigned version;
	size_t entry; /* bytes of an entry */
	size_t at_ts_max, at_pos, at_crc;
};
struct index {
	struct idx_entry *e;
	size_t n, cap;
	unsigned version; /* of the file it was loaded from */
};
/* Decides where entries go, for the writer, a rebuild and compaction alike:
 * one for the first record, then one for the first record at least interval
 * bytes after the previous entry.  It carries the times the next entry
 * needs: the segment's extremes, and those of the span since the last. */
struct idx_builder {
	uint64_t last_pos;
	int64_t ts_max, ts_min;
	int64_t span_min, span_max;
	int any;
};
/* Account for the record at pos; 1 when it gets an entry (in *out). */
int elog__idx_builder_add(struct idx_builder *b, uint64_t offset, int64_t ts, uint64_t pos,
                          uint32_t interval, struct idx_entry *out);
void elog__idx_header_encode(unsigned char *p);
void elog__idx_entry_encode(unsigned char *p, const struct idx_entry *e);
/* The verdict on the first len bytes of an index file: 0 with *lay set to
 * its version's layout, ELOG_CORRUPT when they are too short or not an
 * index's magic, ELOG_BADVERSION for a version (or a reserved field) this
 * build does not know. */
int elog__idx_header_check(const unsigned char *p, size_t len, const struct idx_layout **lay);
/* What makes an entry unusable, from elog__idx_entry_check(). */
enum idx_fault {
	IDX_FAULT_NONE,
	IDX_FAULT_CRC,    /* its checksum */
	IDX_FAULT_POS,    /* pos inside the header or past seg_len */
	IDX_FAULT_OFFSET, /* offset below the segment's base */
	IDX_FAULT_ORDER,  /* offset or pos not above the previous entry's */
	IDX_FAULT_TIME    /* times that contradict each other or it */
};
/* The one decoder and verdict of an entry: decode the entry at p (of
 * layout lay) into *e and judge it alone and after prev (NULL when it is
 * taken on its own) in the index of segment base, whose file has seg_len
 * bytes (UINT64_MAX: not judged).  Returns an enum idx_fault. */
int elog__idx_entry_check(const unsigned char *p, const struct idx_layout *lay, uint64_t base,
                          uint64_t seg_len, const struct idx_entry *prev, struct idx_entry *e);
/* Where in an entry the field a fault is about lies, for messages. */
size_t elog__idx_fault_at(const struct idx_layout *lay, int fault);
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

/* ---- watermark.c ---- */
struct watermark {
	uint64_t durable_end;   /* records below it are durable */
	uint64_t segment_base;  /* the active segment when it was published */
	uint64_t segment_bytes; /* its durable length */
};
void elog__wm_encode(unsigned char *p, const struct watermark *wm);
/* 0, or ELOG_CORRUPT when magic or crc is wrong. */
int elog__wm_decode(const unsigned char *p, size_t len, struct watermark *wm);
/* Read the watermark through fd, retrying a read torn by a concurrent
 * update.  A missing or empty file reads as all zeros. */
int elog__wm_read(int fd, struct watermark *wm);
/* elog__wm_read() for those who act on the watermark: a damaged one (a power loss
 * may garble it: it is never synced) reads as durable up to the newest
 * segment's base, below which every segment is closed and was synced, and
 * nothing of the newest segment. */
int elog__wm_load(int dfd, int fd, struct watermark *wm);
int elog__wm_write(int fd, const struct watermark *wm);

/* ---- start.c: the log's first offset, recorded by retention ---- */
void elog__start_encode(unsigned char *p, uint64_t start);
/* 0, ELOG_BADVERSION (a version this code does not know, checksum right), or
 * ELOG_CORRUPT with *why (when why != NULL) saying what is wrong. */
int elog__start_decode(const unsigned char *p, size_t len, uint64_t *start, const char **why);
/* Record start durably: by elog__fs_replace_file(), or on a full disk (ENOSPC,
 * EDQUOT) in place with pwrite and fdatasync when the file is there. */
int elog__start_write(int dfd, uint64_t start);
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
 * (the directory's, listed before the file is read).  Returns 0, ELOG_BADVERSION
 * or an errno value. */
int elog__start_view(int dfd, const uint64_t *base, size_t n, struct elog__start_view *sv);

/* ---- compress.c: value codecs and dictionaries ---- */
/* Codecs, tags and dictionary files: see format.h. */
void elog__dict_name(char *buf, uint32_t id);
int elog__dict_store(int dfd, uint32_t id, const void *dict, size_t len);
int elog__dict_load(int dfd, uint32_t id, unsigned char **dict, size_t *len, char *msg);
/* The highest dictionary id in dfd, 0 when there is none. */
int elog__dict_latest(int dfd, uint32_t *id);
/* A codec of record values: what the rest of the library may know of it.
 * Its functions are compress.c's own. */
struct codec_ops;
struct codec {
	const char *name;            /* in settings and messages: "zstd" */
	unsigned id;                 /* the codec byte of segment headers */
	int compression;             /* its elog_settings.compression value */
	int level_default;           /* levels run from 1 to level_max; */
	int level_max;               /* 0 = the codec has no levels */
	int dictionaries;            /* it trains them, and its segments name them */
	const struct codec_ops *ops; /* NULL: none, or not in this build */
};
/* The codec a segment header's flags name; NULL when unknown. */
const struct codec *elog__codec_for_flags(uint32_t flags);
/* The codec of the segments a writer starts under s; NULL when unknown. */
const struct codec *elog__codec_from_settings(const struct elog_settings *s);
/* 1 when flags name a known codec, and a dictionary only if it has them. */
int elog__codec_flags_valid(uint32_t flags);
/* 1 when the values of a segment with these flags are stored as given
 * (no codec): a reader need not decode them. */
int elog__codec_plain(uint32_t flags);
/* 0 when this build can encode and decode c's values, else
 * ELOG_UNSUPPORTED with "compressed with <c>, but this build has no <c>
 * support". */
int elog__codec_usable(const struct codec *c, char *msg);
/* Check s's compression and its level, and complete the level (0 = the
 * codec's default).  ELOG_INVALID, ELOG_UNSUPPORTED. */
int elog__codec_settings_check(struct elog_settings *s, char *msg);
/* Train a dictionary of at most cap bytes for c from n samples laid end to
 * end (sizes[i] bytes each); ELOG_UNSUPPORTED when c has none. */
int elog__codec_train(const struct codec *c, const void *samples, const size_t *sizes, unsigned n,
                      unsigned char *dict, size_t cap, size_t *len);
/* The most bytes a value of n bytes takes in a segment with these flags. */
size_t elog__codec_value_max(uint32_t flags, size_t n);
struct venc;
struct vdec;
/* A value encoder for segments of any codec, which keeps per codec its
 * state and dictionary; level is for codec c (the settings'), the others
 * get their default level.  NULL when out of memory. */
struct venc *elog__venc_new(const struct codec *c, int level);
void elog__venc_free(struct venc *e);
/* Make e hold the dictionary flags name, loaded from dfd. */
int elog__venc_use_dict(struct venc *e, int dfd, uint32_t flags, char *msg);
/* Make e hold dict as the dictionary flags name. */
int elog__venc_set_dict(struct venc *e, uint32_t flags, const void *dict, size_t len, char *msg);
/* The value of n bytes at v as stored in a segment with these flags: v
 * itself in an uncompressed segment, else tag byte and payload in e's
 * buffer, valid until the next call.  ELOG_UNSUPPORTED (the codec is not
 * in this build), a dictionary's errors, ENOMEM. */
int elog__venc_value(struct venc *e, int dfd, uint32_t flags, const void *v, size_t n,
                     const void **out, size_t *outlen, char *msg);
/* A value decoder for segments of any codec.  NULL when out of memory. */
struct vdec *elog__vdec_new(void);
void elog__vdec_free(struct vdec *d);
/* The value stored as the n bytes at in, in a segment with these flags:
 * in itself, the bytes after a raw tag, or the payload decoded into d's
 * buffer, valid until the next call.  ELOG_CORRUPT, ELOG_UNSUPPORTED (the
 * codec is not in this build), ENOMEM. */
int elog__vdec_value(struct vdec *d, int dfd, uint32_t flags, const void *in, size_t n,
                     const void **out, size_t *outlen, char *msg);

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

/* ---- create.c ---- */
/* Create segment base and its index with their headers (not synced). */
int elog__seg_create(int dfd, uint64_t base, uint32_t flags, int *segfd, int *idxfd);
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
	struct index ix;       /* index entries of the active segment */
	struct idx_builder ib; /* to go on adding entries */
	int sync_failed;       /* the error of its failed fdatasync, or 0 */
};
/* Recover the active segment base; see the comment in recover.c. */
int elog__recover_active(int dfd, const struct watermark *wm, uint64_t base, uint32_t interval,
                         uint32_t new_flags, int to_watermark, struct recovery *rc, char *msg);
void elog__recovery_free(struct recovery *rc);
/* Remove segments whose creation a crash interrupted ("<base>.log.new"). */
int elog__recover_leftovers(int dfd, char *msg);
/* Check the index of every closed segment; rebuild those that are wrong. */
int elog__recover_indexes(int dfd, const struct seglist *sl, uint32_t interval, char *msg);

/* ---- settings.c ---- */
int elog__settings_parse(const char *text, size_t len, struct elog_settings *s);
/* Render s as text into buf (SETTINGS_MAX); returns the length. */
size_t elog__settings_format(const struct elog_settings *s, char *buf);
int elog__settings_load(int dfd, struct elog_settings *s, char *msg);
int elog__settings_store(int dfd, const struct elog_settings *s);
int elog__settings_new_id(char id[33]);
/* Fill the creation settings of s from opt (defaults for zeros), checking
 * their ranges. */
int elog__opt_check(const struct elog_options *opt, struct elog_settings *s, char *msg);
/* 0 when every creation option given in opt (non-zero) agrees with the
 * stored settings s, else ELOG_INVALID with a message naming the first
 * that does not. */
int elog__settings_check_options(const struct elog_settings *s, const struct elog_options *opt,
                                 char *msg);
/* 0 when cleanup is ELOG_CLEANUP_DELETE or _COMPACT, else ELOG_INVALID. */
int elog__cleanup_check(int cleanup, char *msg);

/* ---- verify.c and repair.c: elog_verify() ---- */
enum { WM_MISSING, WM_OK, WM_BAD }; /* the watermark file, as checked */
/* What checking a segment learned that later checks and repairs need. */
struct segstate {
	uint64_t base;
	int scanned; /* its records were read (header good enough) */
	int clean;   /* every record read, to the end of the file */
	int idx_bad; /* index damaged or missing */
	uint64_t size;
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
	/* Offsets the chain of segments says are lost, [first, last] pairs
	 * (repair records them in FN_SALVAGED), and closed segments whose
	 * seal repair writes again (their index in seg). */
	uint64_t *lost;
	size_t nlost;
	uint64_t *reseal;
	size_t nreseal;
	int sick; /* LOCK says a writer's fdatasync failed */
	uint64_t *base, *ibase;
	size_t n, ni;
	struct elog__start_view start;
	int start_fix; /* --repair writes the start anew, naming base[0] */
	struct segstate *seg;
	uint64_t total, done, shown;
};

/* damage.c: count a problem into v->res and hand it to the caller's hook. */
void elog__verify_vreport(struct verify *v, int kind, const char *file, uint64_t pos,
                          const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
/* Take LOCK (emptying its state) and maint.lock for a repair. */
int elog__repair_lock(struct verify *v, int *lockfd, int *maintfd);
/* Repair what the check found: stale temporary files, indexes, the start
 * file, the active segment's tail and the watermark. */
int elog__repair_run(struct verify *v);

/* ==== MAINTENANCE (maint.c, keyset.c, retain.c, compact.c) ============== */
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
/* Open DIR as a log, take the maintenance lock (waiting up to wait_ms, a
 * wait of elog.h) and list the segments.  ELOG_LOCKED names the pid of the
 * other maintenance run. */
int elog__maint_open(struct maint *m, const char *dir, int64_t wait_ms, char *msg);
void elog__maint_close(struct maint *m);
/* List the segments again and decide which are closed. */
int elog__maint_list(struct maint *m);
/* Called before each step of maintenance that changes a file; does nothing
 * (maintstep.c: tests replace it at link time to crash at a given step). */
void elog__maint_step(void);
/* Finish or undo what an interrupted run left: temporary files, segments
 * below the log's start, index files without a segment, and segments whose
 * records a merge already copied into their predecessor; rewrite a start
 * file that is ignored.  *fixed counts the files removed or rewritten. */
int elog__maint_cleanup(struct maint *m, uint64_t *fixed);

/* What a segment holds, from its index and a scan of its tail. */
struct seg_info {
	uint64_t base;
	uint64_t size;     /* bytes of the .log file */
	uint64_t last;     /* offset of its last record (if any) */
	int64_t newest_ms; /* greatest ts_ms (if any) */
	int empty;         /* no records */
};
int elog__seg_info_read(struct maint *m, uint64_t base, struct seg_info *si);
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
/* ==== end of MAINTENANCE ================================================ */

#endif
