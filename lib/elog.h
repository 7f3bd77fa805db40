/*
 * elog.h: the public interface of libelog, an append-only event log kept in a
 * directory of files.
 *
 * THE MODEL
 *
 * A log is a directory.  Records are appended to it and numbered by a 64-bit
 * offset that only ever grows; each record carries a timestamp (milliseconds
 * since the Unix epoch), a schema id chosen by the application, an optional
 * key and a value.  Records are stored in segment files named by the offset of
 * their first record; the newest segment is the only one written to.
 *
 * Any number of writer handles, in one process or many, may append to a log
 * at once (since 0.2).  A handle buffers what is appended to it; writing a
 * batch takes an exclusive flock(2) on the file LOCK for as long as that one
 * batch is written and synced, never longer, so a long-running writer that
 * waits for input never shuts the others out.  A writer that finds LOCK taken
 * waits for it (elog_options.wait_ms) and fails with ELOG_LOCKED when that
 * time runs out.  Any number of readers, in any process, read the log with no
 * lock at all.
 *
 * Offsets.  A record's offset is fixed when its batch is written, under the
 * lock: offsets are dense and increase in log order across all writers, and
 * one batch's records are contiguous.  elog_append() therefore cannot return
 * the offset; it stores it through the pointer it was given once the batch is
 * written, before the elog_sync() that covers the record returns.
 * Timestamps stamped at append (ELOG_TS_NOW) can be out of order across
 * writers, by about the time a batch waits.
 *
 * Durability.  elog_append() copies a record into the handle's buffer; the
 * record is *not* durable yet.  elog_sync() waits until every record
 * appended through the handle before the call is durable: the buffer is
 * written with one write(2) and made durable with one fdatasync(2), and every
 * thread waiting at that moment is served by that one call (group commit).
 * After each fdatasync the writer publishes the durable end of the log in the
 * file "watermark"; readers never return a record at or above it.  So a
 * record a reader has seen can never vanish or change after a crash or a
 * power loss.
 *
 * Recovery.  A writer that opens the log, or takes LOCK after another writer
 * died in the middle of a batch, or after a reboot, scans the newest segment,
 * checks every record's CRC and cuts the file at the first incomplete or
 * damaged record.  If that cut would fall below the published durable end,
 * acknowledged data has been damaged: the writer refuses with ELOG_CORRUPT
 * and a message naming the file and byte position instead of dropping it.
 * When the log is as the last writer left it, opening it reads a few small
 * files and writes nothing.
 *
 * Caveats.  Local filesystems only, as for SQLite: flock(2) and fdatasync(2)
 * are not to be trusted over NFS or SMB, and elog_open() refuses a log on a
 * network filesystem it recognises.  Readers use pread(2), never mmap(2).
 * The on-disk format is documented byte by byte in elog(5).
 *
 * ERRORS
 *
 * Every function that can fail returns an int: 0 on success, a positive errno
 * value for a failed system call, or one of the negative ELOG_* codes below.
 * elog_strerror() turns any of them into text; elog_errmsg() and
 * elog_reader_errmsg() give the handle's last error with its context (file,
 * byte position).  The library never prints and never exits.
 */
#ifndef ELOG_H
#define ELOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ELOG_VERSION_STRING "0.2.0"

/* Library codes: negative, so they never collide with errno values. */
#define ELOG_END      (-1)  /* no more durable records right now */
#define ELOG_GAP      (-2)  /* records the reader expected were removed by
                             * retention; see elog_reader_gap() */
#define ELOG_LOCKED   (-3)  /* a lock stayed taken past the time to wait */
#define ELOG_CORRUPT  (-4)  /* damaged data, named in the handle's message */
#define ELOG_NOTLOG   (-5)  /* the directory is not an elog log */
#define ELOG_VERSION  (-6)  /* a file of a newer or unknown format version */
#define ELOG_TOOBIG   (-7)  /* a record larger than ELOG_MAX_RECORD */
#define ELOG_FAILED   (-8)  /* the writer hit an I/O error earlier and
                             * refuses further work; reopen the log */
#define ELOG_NETFS    (-9)  /* the log is on a network filesystem */
#define ELOG_INVALID  (-10) /* an invalid argument or setting */
#define ELOG_TIMEOUT  (-11) /* elog_reader_wait() timed out */
#define ELOG_UNSUPPORTED (-12) /* the log needs a feature this build lacks
                             * (zstd) */

/* Value compression, chosen when a log is created. */
#define ELOG_COMPRESS_NONE 0
#define ELOG_COMPRESS_ZSTD 1

/* The largest record, counted as in the record's length field (24 bytes of
 * fixed fields, then key and value).  A larger length on disk is corruption. */
#define ELOG_MAX_RECORD (16u * 1024 * 1024)
#define ELOG_MAX_KEY    65535u

/* Give this as a record's ts_ms to have the writer stamp the time of append. */
#define ELOG_TS_NOW INT64_MIN
/* Timestamps elog believes (see elog_retain()): none before 2000-01-01,
 * none more than a skew (an hour by default) ahead of the clock. */
#define ELOG_TS_FLOOR_MS 946684800000LL
#define ELOG_TS_SKEW_DEFAULT_MS (3600ull * 1000)
/* 1 when ts_ms lies more than max_skew_ms after now_ms: elog-append refuses
 * such a timestamp given with its input. */
int elog_ts_future(int64_t ts_ms, int64_t now_ms, uint64_t max_skew_ms);

struct elog_record {
	uint64_t offset;     /* set by readers (elog_append() ignores it) */
	int64_t ts_ms;       /* milliseconds since the epoch, or ELOG_TS_NOW */
	uint16_t schema;     /* the application's payload format id; 0 = none */
	const void *key;     /* NULL or key_len bytes; key_len 0 = unkeyed */
	size_t key_len;
	const void *value;   /* value_len bytes; empty + keyed = tombstone */
	size_t value_len;
};

/* The limits of the creation settings below, in bytes. */
#define ELOG_SEGMENT_BYTES_MIN  (4ull << 10)
#define ELOG_SEGMENT_BYTES_MAX  (1ull << 30)
#define ELOG_INDEX_INTERVAL_MIN 64u
#define ELOG_INDEX_INTERVAL_MAX (1u << 24)

/* Settings of a log.  The ones marked "creation" are stored with the log when
 * it is created and are read back from it afterwards; a value given when
 * opening an existing log must agree with the stored one, else elog_open()
 * fails with ELOG_INVALID (elog_settings_update() changes them).  Zero means
 * the default (when creating) or the log's own (when opening). */
struct elog_options {
	int create;               /* create the directory and log if missing
	                           * (the parent directory must exist) */
	uint64_t segment_bytes;   /* creation: roll the active segment at this
	                           * size; default 64 MiB, at least 4 KiB */
	uint32_t index_interval;  /* creation: bytes of records between sparse
	                           * index entries; default 4096 */
	uint64_t retain_ms;       /* creation: retention policy by age, 0 none */
	uint64_t retain_bytes;    /* creation: retention policy by size, 0 none */
	int compression;          /* creation: ELOG_COMPRESS_NONE or _ZSTD */
	int compression_level;    /* creation: zstd level 1..19, default 3 */
	int no_dictionary;        /* creation: never train a zstd dictionary
	                           * (by default one is trained from the
	                           * log's first 1000 values) */
	size_t batch_bytes;       /* buffered bytes that make elog_append() flush
	                           * by itself; default 1 MiB */
	int64_t wait_ms;          /* how long to wait for another writer's batch
	                           * (LOCK) before failing with ELOG_LOCKED;
	                           * default (0) 10000; -1 waits for ever */
};

/* Settings of a log as stored in its directory. */
struct elog_settings {
	char id[33];              /* stable log id: 32 lowercase hex digits */
	int64_t created_ms;
	uint64_t segment_bytes;
	uint32_t index_interval;
	uint64_t retain_ms;
	uint64_t retain_bytes;
	int compression;          /* ELOG_COMPRESS_NONE or ELOG_COMPRESS_ZSTD */
	int compression_level;
	int no_dictionary;
};

typedef struct elog elog;
typedef struct elog_reader elog_reader;

const char *elog_strerror(int code);
const char *elog_version(void);
/* 1 when this build can read and write zstd-compressed logs. */
int elog_have_zstd(void);

/*
 * THE WRITER
 */

/* Open DIR for writing (and create it with opt->create).  opt may be NULL.
 * Takes LOCK for a moment to find the log's tail (recovering it when a
 * writer died mid-batch or the machine restarted), then releases it.
 * Errors: ELOG_LOCKED (waited opt->wait_ms; the message names the last
 * holder's pid), ELOG_NOTLOG,
 * ELOG_VERSION, ELOG_CORRUPT, ELOG_NETFS, ELOG_INVALID, errno values.  On
 * failure *w is still set when a handle could be made, so that elog_errmsg()
 * can tell why; pass it to elog_close() all the same. */
int elog_open(elog **w, const char *dir, const struct elog_options *opt);

/* Make every appended record durable, then release the log.  Returns the
 * result of that last flush, or ELOG_FAILED for a writer that had failed
 * (or never opened).  elog_close(NULL) is a no-op. */
int elog_close(elog *w);

/* Append one record (rec->offset is ignored; ts_ms ELOG_TS_NOW is stamped
 * now).  The record is buffered, not yet durable: call elog_sync() before
 * acknowledging it.  When offset is not NULL, the record's offset is stored
 * there when its batch is written, which is before the elog_sync() (or
 * elog_close()) that covers it returns; until then *offset must stay valid
 * and the caller must not read it.  Thread-safe.  Errors: ELOG_TOOBIG,
 * ELOG_INVALID, ELOG_FAILED, and errors of a flush the call had to make
 * because the buffer was full (then *offset of this record may be set). */
int elog_append(elog *w, const struct elog_record *rec, uint64_t *offset);

/* Wait until every record appended through w before the call is durable
 * (and its offset stored), writing and syncing the buffer if no other
 * thread is doing so already.  Thread-safe.  Errors: ELOG_LOCKED (LOCK
 * stayed taken by another writer for wait_ms: this batch was not written),
 * ELOG_CORRUPT (another writer left the log damaged), the errno value of the
 * write(2) or fdatasync(2) that failed, for the call that ran it; ELOG_FAILED
 * for every call after (or waiting on) a failed one: fsync errors are not
 * retryable, so the handle stops and the records it had not written are
 * not appended.  Open a new handle to go on. */
int elog_sync(elog *w);

/* The offset the next record would get if no other writer wrote first: the
 * log's end as this handle last saw it, plus the records it holds. */
uint64_t elog_next_offset(elog *w);

/* The durable end as this handle last saw it, when it opened or wrote its
 * last batch: every record below it is durable. */
uint64_t elog_durable_end(elog *w);

/* The settings stored with the log. */
const struct elog_settings *elog_settings_of(elog *w);

/* The last error's message with its context, e.g.
 * "00000000000000000000.log: corrupt record at byte 4096".  Never NULL. */
const char *elog_errmsg(elog *w);

/*
 * READERS
 *
 * A reader keeps a position (the offset of the next record it will return)
 * and never takes a lock.  It is not thread-safe: use one per thread.
 */

/* Open a reader on DIR, positioned at the beginning of the log.  *r is set
 * even on failure when a handle could be made (see elog_reader_errmsg()).
 * Errors: ELOG_NOTLOG, ELOG_VERSION, errno values. */
int elog_reader_open(elog_reader **r, const char *dir);
void elog_reader_close(elog_reader *r);

/* Position at the first record with offset >= offset.  An offset below the
 * start of the log (removed by retention) makes the next elog_reader_next()
 * report ELOG_GAP; an offset beyond the end waits there. */
int elog_reader_seek(elog_reader *r, uint64_t offset);

/* Position at the first record of the log / just after the last durable one. */
int elog_reader_seek_begin(elog_reader *r);
int elog_reader_seek_end(elog_reader *r);

/* Position at the first record, in offset order, whose ts_ms >= ts_ms. */
int elog_reader_seek_time(elog_reader *r, int64_t ts_ms);

/* Position so that the last n durable records are next. */
int elog_reader_seek_last(elog_reader *r, uint64_t n);

/* Read the next durable record.  On 0, *rec points into the reader's buffer,
 * valid until the next call on r.  Every record's CRC is checked.
 * ELOG_END: no more durable records now (call elog_reader_wait() to follow).
 * ELOG_GAP: the next offsets were removed by retention (elog_reader_gap()
 * tells which); the following call goes on from the oldest record left.
 * ELOG_CORRUPT (the message gives file and byte position), errno values. */
int elog_reader_next(elog_reader *r, struct elog_record *rec);

/* After ELOG_GAP: the removed range, first and last offset inclusive. */
void elog_reader_gap(const elog_reader *r, uint64_t *first, uint64_t *last);

/* After ELOG_GAP: why the records are gone.  ELOG_GAP_RETENTION: removed
 * by retention (below the log's start).  ELOG_GAP_DAMAGE: lost to damage
 * that elog_salvage() moved aside (listed in the file "salvaged"); some
 * of those offsets may have held no record. */
#define ELOG_GAP_RETENTION 1
#define ELOG_GAP_DAMAGE    2
int elog_reader_gap_cause(const elog_reader *r);

/* The offset the next record returned will have at least. */
uint64_t elog_reader_position(const elog_reader *r);

/* The durable end as last read from the watermark (re-read by next/wait). */
uint64_t elog_reader_durable_end(const elog_reader *r);

/* Wait until the durable end may have moved, for at most timeout_ms (-1 =
 * forever).  Uses inotify(7) where there is one, polling elsewhere; never
 * spins.  Returns 0 when woken, ELOG_TIMEOUT, or an errno value (EINTR when a
 * signal arrived). */
int elog_reader_wait(elog_reader *r, int timeout_ms);

/* A file descriptor that becomes readable when the durable end may have moved,
 * for a caller's own poll(2) loop; -1 where the reader has to poll.  After it
 * becomes readable call elog_reader_next() (which drains it). */
int elog_reader_fd(elog_reader *r);

const char *elog_reader_errmsg(const elog_reader *r);

/* Read the settings stored in DIR without opening a writer or reader. */
int elog_settings_read(const char *dir, struct elog_settings *s);

/* Change settings of the existing log DIR: each field named in fields
 * (ELOG_SET_*) takes its value from opt, zero included (retain_ms 0: no
 * age limit; compression ELOG_COMPRESS_NONE with compression_level 0: no
 * age limit; compression_level 0: the default zstd level).  A new codec
 * applies from the next segment a writer starts: every segment records its
 * own, and a writer continues that of the segment it appends to, so old
 * segments read as they are.  The settings file
 * is replaced atomically under the maintenance lock (waiting for it).
 * Writers read the settings when they open the log: one that is running
 * keeps the old ones until it is reopened.  Retention reads its policy at
 * each run.  Errors: ELOG_INVALID (a value out of range, with the message),
 * ELOG_UNSUPPORTED (zstd in a build without it), ELOG_NOTLOG, errno
 * values.  msg, when not NULL, needs ELOG_MAINT_MSG_MAX bytes. */
#define ELOG_SET_SEGMENT_BYTES  0x01u
#define ELOG_SET_INDEX_INTERVAL 0x02u
#define ELOG_SET_RETAIN_MS      0x04u
#define ELOG_SET_RETAIN_BYTES   0x08u
#define ELOG_SET_COMPRESSION    0x10u  /* compression and compression_level */
#define ELOG_SET_DICTIONARY     0x20u  /* no_dictionary */
int elog_settings_update(const char *dir, const struct elog_options *opt,
                         unsigned fields, char *msg);

/* ==== CONSUMERS (lib/consumers.c) ======================================= */
/*
 * A named consumer remembers the offset of the last record it processed, its
 * committed offset; reading as that consumer resumes at the first record with
 * a higher offset.  Committed offsets live in the file consumers.json of the
 * log directory (format in elog(5)).
 *
 * Names: 1 to ELOG_CONSUMER_NAME_MAX characters from [A-Za-z0-9._-], not
 * starting with '.' or '-' (so a name is never a hidden file, an option or
 * "." / ".." wherever it ends up).
 *
 * Commits from any number of threads and processes are serialised by an
 * exclusive flock(2) on the file consumers.lock in the log directory (never
 * the writer's LOCK or the maintenance lock), held while consumers.json is
 * read, changed, written to a temporary file, fsynced, renamed over the old
 * one and the directory fsynced.  So no commit loses another's update, and a
 * crash leaves the old file or the new one.  Reading needs no lock.
 *
 * A commit must name a durable record's offset: committing an offset at or
 * above the durable end is refused (ELOG_BEYOND), because a consumer that got
 * ahead of the durable end could skip records after a crash of the writer.
 * Moving a consumer backwards (to replay) is allowed.
 *
 * Delivery is at-least-once: a consumer that crashes between processing a
 * record and committing it sees the record again.  Effects become
 * exactly-once only when the consumer stores its cursor in the same
 * transaction as its effects, in its own database.  A consumer that calls an
 * external API should send the idempotency key "<log id>:<offset>", the log id
 * being elog_settings.id (elog_settings_read()): it is made when the log is
 * created and stays with the directory when it is moved or renamed.
 *
 * Functions taking `char *msg` write a message with context (file, byte
 * position, the offending name or offset) there on failure, when msg is not
 * NULL; it must have room for ELOG_CONSUMER_MSG_MAX bytes.
 */
#define ELOG_BADNAME     (-20)  /* not a valid consumer name */
#define ELOG_NOCONSUMER  (-21)  /* no consumer of that name */
#define ELOG_BEYOND      (-22)  /* an offset at or above the durable end */
#define ELOG_TOOMANY     (-23)  /* already ELOG_CONSUMERS_MAX consumers */

#define ELOG_CONSUMER_NAME_MAX 64
#define ELOG_CONSUMERS_MAX     4096
#define ELOG_CONSUMER_MSG_MAX  512

struct elog_consumer {
	char name[ELOG_CONSUMER_NAME_MAX + 1];
	uint64_t offset;       /* the last record processed */
	int64_t committed_ms;  /* when it was committed, ms since the epoch */
	uint64_t lag;          /* offsets it has still to read: from its next
	                        * one (offset + 1, or the log's start when
	                        * retention removed that) to the last durable
	                        * record (0 when caught up) */
	uint64_t lost;         /* offsets after offset that retention removed
	                        * before the consumer read them: start - offset
	                        * - 1 when the log starts above offset + 1,
	                        * else 0 */
};

/* 0 when name is a valid consumer name, else ELOG_BADNAME. */
int elog_consumer_name_check(const char *name);

/* Commit offset as consumer name's last processed record in the log DIR.
 * Errors: ELOG_BADNAME, ELOG_BEYOND, ELOG_TOOMANY, ELOG_NOTLOG,
 * ELOG_CORRUPT and ELOG_VERSION (consumers.json is damaged or newer; it is
 * left as it is), errno values. */
int elog_consumer_commit(const char *dir, const char *name, uint64_t offset,
                         char *msg);

/* Read consumer name's committed offset into *c (lag included).
 * Errors: ELOG_NOCONSUMER when it never committed (or was deleted),
 * ELOG_BADNAME, ELOG_NOTLOG, ELOG_CORRUPT, ELOG_VERSION, errno values. */
int elog_consumer_get(const char *dir, const char *name,
                      struct elog_consumer *c, char *msg);

/* Every consumer of DIR, sorted by name, in a malloc'ed array for the caller
 * to free() (NULL when there are none).  Errors as elog_consumer_get(). */
int elog_consumer_list(const char *dir, struct elog_consumer **list,
                       size_t *n, char *msg);

/* Forget consumer name.  Errors: ELOG_NOCONSUMER, and as for commit. */
int elog_consumer_delete(const char *dir, const char *name, char *msg);

/* Position reader r (opened on DIR) for consumer name: just after its
 * committed offset, or at the beginning of the log when it never committed.
 * When retention removed the records after the committed offset, the next
 * elog_reader_next() reports ELOG_GAP as usual.  Errors: ELOG_BEYOND when the
 * committed offset is at or above the durable end (the log lost records the
 * consumer had seen), and those of elog_consumer_get() except
 * ELOG_NOCONSUMER, and of elog_reader_seek(). */
int elog_consumer_seek(elog_reader *r, const char *dir, const char *name,
                       char *msg);

/* Text for the ELOG_* codes above, NULL for any other code. */
const char *elog_consumer_strerror(int code);
/* ==== end of CONSUMERS ================================================== */

/* ==== VERIFY (lib/verify.c) ============================================ */
/*
 * elog_verify() reads every file of a log and reports each problem once,
 * with the file and the byte position where it lies: every record's CRC,
 * offsets strictly increasing and inside their segment's range (at least
 * its base, below the next segment's base), segment headers and names,
 * index entries (checksum, order, pointing at the start of the record with
 * their offset, none missing), every value of a compressed segment decoded
 * and every dictionary loaded (so that a log that verifies clean reads to
 * its end), the watermark against the data, the settings and
 * consumers.json, and that the log's files are regular files, none of
 * those written with a second hard link.  Without ELOG_VERIFY_REPAIR it changes nothing and
 * takes no lock, so it may run while the writer appends: bytes past the
 * durable end of the active segment may be a write in progress and are
 * never called damage.
 *
 * With ELOG_VERIFY_REPAIR it takes the writer's LOCK and the maintenance
 * lock (ELOG_LOCKED when either is held) and repairs what it can without
 * losing anything it can re-read: it rebuilds bad or missing indexes of
 * segments whose records are intact, cuts a damaged tail of the active
 * segment after copying the cut bytes to "<segment>.log.cut-<ms>" beside
 * it, and rewrites a watermark that disagrees with the data (after syncing
 * the data it vouches for).  Damage in a closed segment or a segment header
 * is reported, never cut.  It then checks the log again, silently, and
 * counts what is left in remaining.
 */
#define ELOG_VERIFY_REPAIR  0x1u

#define ELOG_PROBLEM_DAMAGE   1   /* data readers or the writer will fail on,
                                   * or that disagrees with the format */
#define ELOG_PROBLEM_WARNING  2   /* harmless or self-healing: stray files,
                                   * a crash's unacknowledged tail, a missing
                                   * index */
#define ELOG_PROBLEM_REPAIRED 3   /* what --repair did about a problem */

#define ELOG_NOPOS UINT64_MAX     /* a problem of a whole file */

struct elog_problem {
	int kind;                 /* ELOG_PROBLEM_* */
	const char *file;         /* name inside the log directory, "." for the
	                           * directory itself */
	uint64_t pos;             /* byte position in file, or ELOG_NOPOS */
	const char *text;         /* lowercase, without file or position */
};

/* One segment as elog_verify() found it. */
struct elog_segment_info {
	uint64_t base;
	uint64_t bytes;           /* file size */
	uint64_t records;         /* valid records read */
	uint64_t first, last;     /* their offsets, when records > 0 */
	int64_t ts_min, ts_max;   /* their timestamps, when records > 0 */
	int active;               /* the newest segment, the one appended to */
	int damaged;              /* a damage problem was reported for it */
};

struct elog_verify_hooks {
	/* Each problem, as it is found (may be NULL). */
	void (*problem)(void *arg, const struct elog_problem *p);
	/* Each segment once checked, in offset order (may be NULL). */
	void (*segment)(void *arg, const struct elog_segment_info *s);
	/* Segment bytes checked so far out of total (may be NULL); called
	 * about every megabyte. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *arg;
};

struct elog_verify_result {
	uint64_t damage, warnings, repaired;
	uint64_t remaining;       /* damage left: after a repair, what the
	                           * second check found; otherwise damage */
	uint64_t segments, records, bytes;
};

#define ELOG_VERIFY_MSG_MAX 512
/* How long a repair waits for the writers' LOCK (held per batch). */
#define ELOG_VERIFY_WAIT_MS 10000

/* Check the log DIR, reporting through hooks (which may be NULL) and
 * summing up in *res.  Returns 0 when the check ran to the end, whatever
 * it found.  Errors when it could not: ELOG_NOTLOG (no settings file),
 * ELOG_VERSION (settings of a newer format), ELOG_LOCKED (with
 * ELOG_VERIFY_REPAIR: a maintenance program runs, or a writer held LOCK
 * for longer than ELOG_VERIFY_WAIT_MS), errno values
 * (a file that cannot be opened or read, e.g. EACCES).  msg, when not NULL,
 * receives a message with context (ELOG_VERIFY_MSG_MAX bytes). */
int elog_verify(const char *dir, unsigned flags,
                const struct elog_verify_hooks *hooks,
                struct elog_verify_result *res, char *msg);

/* Salvage (lib/salvage.c): the way past damage in a closed segment, which
 * elog_verify() reports but never cuts.  Every closed segment is read
 * whole; each one holding a record that does not check is rewritten with
 * every record that does (found again after the damage by trying each
 * byte position), the damaged bytes are copied to
 * "<segment>.log.cut-<ms>" beside it, and the offsets that lay in them
 * are recorded in the file "salvaged", so that readers report them as a
 * gap (ELOG_GAP, elog_reader_gap_cause() ELOG_GAP_DAMAGE) instead of
 * skipping them.  Takes the maintenance lock (ELOG_LOCKED when another
 * maintenance run holds it); the writer may run.  A segment whose header
 * is damaged is not salvaged (ELOG_CORRUPT): the header says how values
 * are stored. */
struct elog_salvage_report {
	const char *segment;      /* the segment's file name */
	const char *aside;        /* where the damaged bytes were copied */
	uint64_t pos, bytes;      /* the damaged bytes in the old file */
	int lost;                 /* 1 when offsets lay in them: */
	uint64_t first, last;     /* the offsets that may have been lost */
};
typedef void elog_salvage_fn(const struct elog_salvage_report *rep, void *arg);
struct elog_salvage_result {
	uint64_t segments;        /* segments rewritten */
	uint64_t ranges;          /* damaged ranges moved aside */
	uint64_t bytes;           /* their bytes */
};
int elog_salvage(const char *dir, elog_salvage_fn *each, void *arg,
                 struct elog_salvage_result *res, char *msg);
/* ==== end of VERIFY ===================================================== */

/* ==== MAINTENANCE (lib/retain.c, lib/compact.c, lib/maint.c) ========== */
/*
 * Retention removes whole closed segments, oldest first; compaction rewrites
 * closed segments keeping the newest record of every key.  Both run beside a
 * live writer and any number of readers: they take an exclusive flock(2) on
 * the file maint.lock (so that one maintenance run at a time changes the
 * log), never the writer's LOCK, and they change only closed segments, those
 * below both the newest segment on disk and the segment the watermark names.
 *
 * Readers holding a segment that is rewritten or removed keep reading their
 * open file and then look their position up again by offset, so they see
 * every remaining record once, in order.  Offsets removed by compaction are
 * holes readers skip silently; offsets removed by retention are reported as
 * ELOG_GAP (they lie below the log's first segment).  A crash at any moment
 * of either leaves a log that opens, reads and verifies with nothing lost and
 * nothing shown twice; the next run of either removes what the crash left
 * (temporary "*.compact" files, a segment already merged into the one before
 * it, an index without its segment).
 *
 * Functions taking `char *msg` write a message with context there on
 * failure, when msg is not NULL; it needs room for ELOG_MAINT_MSG_MAX bytes.
 * Errors: ELOG_LOCKED (another maintenance run holds maint.lock; the message
 * names its pid), ELOG_NOTLOG, ELOG_VERSION, ELOG_CORRUPT (a damaged closed
 * segment: the log is left as it was), ELOG_NETFS, ELOG_INVALID, errno
 * values.
 */
#define ELOG_MAINT_MSG_MAX 512

/* What happened to one segment, reported through elog_segment_fn. */
#define ELOG_SEG_REMOVED   1  /* retention: its file and index were unlinked */
#define ELOG_SEG_REWRITTEN 2  /* compaction: rewritten with fewer records */
#define ELOG_SEG_EMPTIED   3  /* compaction: nothing was left in it, so it
                               * was unlinked (never the first segment) */
#define ELOG_SEG_MERGED    4  /* compaction: its records were copied to the
                               * end of segment `into`, then it was unlinked */

struct elog_segment_report {
	int action;                /* ELOG_SEG_* */
	uint64_t base;             /* the segment (its name) */
	uint64_t end;              /* the offset after its range: the next
	                            * segment's base */
	uint64_t into;             /* ELOG_SEG_MERGED: the segment it went to */
	uint64_t records_before;   /* compaction: records in it before... */
	uint64_t records_after;    /* ...and after */
	uint64_t bytes_before;     /* bytes of its .log file before... */
	uint64_t bytes_after;      /* ...and after (0 when removed) */
	int64_t newest_ms;         /* retention: its newest record's ts_ms,
	                            * INT64_MIN when it held none */
};
/* Called once per segment, after the change is made (or, with dry_run,
 * instead of it).  Retention reports oldest first; compaction reports the
 * rewrites and removals oldest first, then the merges. */
typedef void elog_segment_fn(const struct elog_segment_report *rep, void *arg);

/* Retention.  A segment goes when its newest record is older than the age
 * limit, or while the log's segment files (.log, every segment, the active
 * one included) add up to more than the size limit; the oldest goes first
 * and the first segment that must stay stops the run, so retention never
 * makes a hole in the middle of the log.  Each limit is taken from the
 * options, or else from the policy stored with the log at creation
 * (elog_options.retain_ms and retain_bytes).
 *
 * The age of a segment is that of its newest record, when that timestamp is
 * plausible: from ELOG_TS_FLOOR_MS (2000) to ELOG_TS_SKEW_DEFAULT_MS ahead
 * of the clock.  A segment whose newest timestamp is not (a producer's
 * clock far ahead, a box whose clock said 1970) is judged by the next
 * closed segment whose is: written after it, that one is no older.  So one
 * record stamped in the future does not stop age retention for good, and
 * records stamped in 1970 live as long as those written after them.  When
 * there is no such later segment, it stays.  The result names the first
 * closed segment kept and why (kept_*). */
#define ELOG_RETAIN_OFF UINT64_MAX   /* a limit that is not applied */
struct elog_retain_opts {
	uint64_t max_age_ms;   /* 0: the log's stored policy; ELOG_RETAIN_OFF */
	uint64_t max_bytes;    /* 0: the log's stored policy; ELOG_RETAIN_OFF */
	int dry_run;           /* report what would go, change nothing */
	int wait;              /* wait for maint.lock instead of ELOG_LOCKED */
	int64_t now_ms;        /* the time ages are measured at; 0: the clock */
	elog_segment_fn *each; /* NULL, or called per segment removed */
	void *arg;
};
struct elog_retain_result {
	uint64_t segments;     /* segments removed */
	uint64_t bytes;        /* their .log bytes */
	uint64_t start_before; /* the log's first offset (first segment's
	                        * base) before the run... */
	uint64_t start_after;  /* ...and after it */
	uint64_t total_bytes;  /* the .log bytes left */
	uint64_t leftovers;    /* files of interrupted runs removed */
	/* With an age limit, the first closed segment kept, and why: */
	int kept_why;          /* ELOG_KEPT_* */
	uint64_t kept_base, kept_end;
	int64_t kept_newest_ms;  /* its newest record's ts_ms */
	int64_t kept_judged_ms;  /* the timestamp it was judged by: its own
	                          * newest, or a later segment's */
};
#define ELOG_KEPT_NONE      0  /* no age limit, or no closed segment kept */
#define ELOG_KEPT_YOUNG     1  /* its newest record is within the limit */
#define ELOG_KEPT_UNTRUSTED 2  /* its newest timestamp is not plausible, and
                                * the next plausible one is within the limit
                                * (kept_judged_ms) or there is none
                                * (kept_judged_ms INT64_MIN) */
/* Apply retention to the log DIR.  With neither a limit in o (or o NULL) nor
 * a stored policy: ELOG_INVALID ("no retention policy"). */
int elog_retain(const char *dir, const struct elog_retain_opts *o,
                struct elog_retain_result *res, char *msg);

/* Compaction.  In closed segments, a keyed record goes when a newer record
 * of its key exists anywhere in the log (the active segment included, up to
 * the durable end).  A key's newest record, when it is a tombstone (empty
 * value), stays until grace_ms after the first compaction run that saw it
 * (by the wall clock of the machine running compaction; the times are kept
 * in the file compact.state), and then goes.  Unkeyed records stay.  With
 * min_lag_ms, nothing at or after the first record younger than min_lag_ms
 * (by its ts_ms) is removed; such records still count as newer for their
 * key.  Afterwards, adjacent closed segments whose records fit together in
 * the log's segment size are merged into the first of them.
 *
 * Memory: 24 bytes per slot of a hash table of the distinct keys, in 256
 * shards each grown alone by a quarter when 4/5 full, so 30 to 38 bytes per
 * key, also at the peak while growing, plus 16 bytes per tombstone kept.
 * Keys are told apart by a 127-bit SipHash-2-4 under a key drawn at random
 * for each run: two different keys collide with probability below
 * n^2 / 2^128 for n distinct keys (2^-64 for four billion keys), and no
 * input can be crafted to make them collide. */
#define ELOG_COMPACT_GRACE_DEFAULT (24ull * 3600 * 1000)
struct elog_compact_opts {
	uint64_t grace_ms;     /* how long a tombstone stays after compaction
	                        * first sees it */
	uint64_t min_lag_ms;   /* leave records younger than this alone */
	int dry_run;           /* report what would change, change nothing */
	int wait;              /* wait for maint.lock instead of ELOG_LOCKED */
	int64_t now_ms;        /* the clock for ages and grace; 0: the clock */
	elog_segment_fn *each; /* NULL, or called per segment changed */
	void *arg;
};
/* The defaults: a 24-hour grace, no minimum lag. */
#define ELOG_COMPACT_OPTS_INIT { ELOG_COMPACT_GRACE_DEFAULT, 0, 0, 0, 0, NULL, NULL }
struct elog_compact_result {
	uint64_t segments_before;     /* closed segments before the run... */
	uint64_t segments_after;      /* ...and after */
	uint64_t segments_rewritten;  /* rewritten by compaction or merging */
	uint64_t records_before, records_after;  /* in closed segments */
	uint64_t bytes_before, bytes_after;      /* their .log bytes */
	uint64_t keys;                /* distinct keys in the whole log */
	uint64_t tombstones_kept;     /* still within their grace */
	uint64_t tombstones_removed;
	uint64_t leftovers;           /* files of interrupted runs removed */
	uint64_t memory;              /* bytes of the key table and state */
};
/* Compact the log DIR.  o NULL means ELOG_COMPACT_OPTS_INIT. */
int elog_compact(const char *dir, const struct elog_compact_opts *o,
                 struct elog_compact_result *res, char *msg);
/* ==== end of MAINTENANCE ================================================ */

/* ==== SUMMARY (lib/summary.c) =========================================== */
/*
 * elog_summary_read() gives one look at a log, as elog-cat -L prints it.
 * It takes no lock and never scans the log: it lists the directory, reads
 * the settings, the watermark and the first record, and scans at most the
 * last megabyte of records before the durable end; so it answers in about
 * the same time on a log of any size, while writers and maintenance run.
 */
struct elog_summary {
	struct elog_settings settings;
	uint64_t start;          /* the first segment's base (0 when none) */
	uint64_t durable_end;    /* every record below it is durable */
	int have_first, have_last;  /* a durable record was found */
	uint64_t first, last;    /* offsets of the first and last durable record */
	uint64_t records;        /* last - first + 1, the offsets in the log:
	                          * the number of records while offsets are
	                          * dense, and an upper bound once compaction
	                          * has removed records (records_exact 0) */
	int records_exact;       /* 1: no compaction ever ran on the log */
	int64_t oldest_ms;       /* ts_ms of the first record */
	int64_t newest_ms;       /* the greatest ts_ms in the newest segment
	                          * holding durable records (the last record's
	                          * when the writer stamps times) */
	uint64_t segments;
	uint64_t active_base;    /* the newest segment */
	uint64_t log_bytes;      /* the segment files' sizes */
	uint64_t dir_bytes;      /* every regular file's size... */
	uint64_t disk_bytes;     /* ...and the blocks they take, in bytes */
	/* Compression, from the records read at the end of the log: their
	 * size as stored and with their values uncompressed (both counted as
	 * whole records).  sample_unknown: some could not be decoded here. */
	uint64_t sample_stored, sample_raw;
	int sample_unknown;
	/* Processes, from /proc/locks (Linux): holders of the lock on the
	 * file "writers" (every open writer), of LOCK (the one writing a
	 * batch now, 0 for none) and of maint.lock (a retention or
	 * compaction run, 0 for none).  writers_known is 0 when /proc/locks
	 * could not be read; the pid lists are then empty. */
	int writers_known;
	pid_t *writers;          /* malloc'ed; see elog_summary_free() */
	size_t nwriters;
	pid_t batch_pid, maint_pid;
	/* When retention and compaction last finished a run (not a dry run),
	 * INT64_MIN for never (or before this version kept it). */
	int64_t retain_last_ms, compact_last_ms;
	int damaged;             /* a record or header it read was damaged
	                          * (elog-verify tells more) */
};

/* Fill *s for the log DIR; free it with elog_summary_free().  Errors:
 * ELOG_NOTLOG, ELOG_VERSION, ELOG_CORRUPT (settings), errno values.  msg,
 * when not NULL, receives a message with context (ELOG_MAINT_MSG_MAX
 * bytes). */
int elog_summary_read(const char *dir, struct elog_summary *s, char *msg);
void elog_summary_free(struct elog_summary *s);
/* ==== end of SUMMARY ==================================================== */

/* ==== FILES: sizes and names of the format (elog(5)) ==================== */
/* The bytes a record with a key and a value of these lengths takes in a
 * segment: 28 + key_len + value_len (its value as stored, compressed or
 * not). */
size_t elog_record_size(size_t key_len, size_t value_len);
/* The name of the segment file based at base, "<20 digits>.log", into buf
 * of ELOG_SEGMENT_NAME_MAX bytes (the NUL included). */
#define ELOG_SEGMENT_NAME_MAX 25
void elog_segment_name(char *buf, uint64_t base);
/* ==== end of FILES ====================================================== */

#ifdef __cplusplus
}
#endif
#endif
