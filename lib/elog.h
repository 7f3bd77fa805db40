/*
 * elog.h: the public interface of libelog, an append-only event log kept in
 * a directory of files.
 *
 * The reference is the manual: elog(3) for every function, its return
 * values and its errors; elog(7) for the model (offsets, durability, many
 * writers, recovery); elog(5) for the files, byte by byte.  The comments here
 * are reminders only.
 *
 * Errors, in one rule.  Every function that can fail returns an int: 0 on
 * success, a positive errno value for a failed system call, or a negative
 * ELOG_* code below; elog_strerror() names any of them.  The message with
 * the failure's context (file, byte position, name) goes to the handle the
 * function works on (elog_errmsg(), elog_reader_errmsg()), or, for a
 * function that takes a directory and a `char *msg`, into that buffer of
 * ELOG_MSG_MAX bytes when msg is not NULL.  The library never prints and
 * never exits; elog_retain() and elog_compact() may start threads for a
 * moment (elog(3), Threads).
 */
#ifndef ELOG_H
#define ELOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ELOG_VERSION_STRING "0.3.0"

/* Library codes: negative, so they never collide with errno values, and
 * never -1, so that none reads as "-1, see errno". */
#define ELOG_GAP (-2)          /* records the reader expected are gone */
#define ELOG_LOCKED (-3)       /* a lock stayed taken past the time to wait */
#define ELOG_CORRUPT (-4)      /* damaged data */
#define ELOG_NOTLOG (-5)       /* the directory is not an elog log */
#define ELOG_BADVERSION (-6)   /* a file of a newer or unknown format version */
#define ELOG_TOOBIG (-7)       /* a record larger than ELOG_MAX_RECORD */
#define ELOG_FAILED (-8)       /* the writer failed earlier; reopen the log */
#define ELOG_NETFS (-9)        /* the log is on a network filesystem */
#define ELOG_INVALID (-10)     /* an invalid argument or setting */
#define ELOG_TIMEOUT (-11)     /* elog_reader_wait() timed out */
#define ELOG_UNSUPPORTED (-12) /* the log needs zstd, which this build lacks */
#define ELOG_NOCOMPACT (-13)   /* compaction of a log whose cleanup is delete */
#define ELOG_END (-14)         /* no more durable records right now (prev: none before) */
#define ELOG_NOTREG (-15)      /* a file of the log is not a regular file */
#define ELOG_LINKED (-16)      /* a file to write has more than one hard link */
#define ELOG_SETTING (-17)     /* an option differs from the log's stored setting */
#define ELOG_BADNAME (-20)     /* not a valid consumer name */
#define ELOG_NOCONSUMER (-21)  /* no consumer of that name */
#define ELOG_BEYOND (-22)      /* an offset at or above the durable end */
#define ELOG_TOOMANY (-23)     /* already ELOG_CONSUMERS_MAX consumers */
#define ELOG_TAKEN (-24)       /* an offset at or below the log's end */

/* Room for a message with context, for functions given a caller's buffer. */
#define ELOG_MSG_MAX 512

/* How long a call waits, for a lock or for the log to move: an int64_t
 * number of milliseconds, or one of these.  0 is the call's default, which
 * the field or parameter names.  Any other negative value: ELOG_INVALID. */
#define ELOG_WAIT_DEFAULT ((int64_t)0)
#define ELOG_WAIT_FOREVER ((int64_t)-1) /* no limit */
#define ELOG_WAIT_NONE ((int64_t)-2)    /* not at all: ELOG_LOCKED or ELOG_TIMEOUT at once */

/* Any code above, 0 or an errno value, as text.  Never NULL. */
const char *elog_strerror(int code);
/* "0.3.0" (ELOG_VERSION_STRING of the library linked). */
const char *elog_version(void);
/* 1 when this build reads and writes zstd-compressed logs. */
int elog_have_zstd(void);

/* Value compression, chosen when a log is created. */
#define ELOG_COMPRESS_NONE 0
#define ELOG_COMPRESS_ZSTD 1

/* The cleanup policy of a log (Kafka's cleanup.policy): whether
 * elog_compact() may remove the records of a key that a newer one of the
 * same key supersedes.  Delete, the default, is for logs whose keys only
 * filter (a run, a sensor); compact is for logs whose keys name state.
 * elog_options.cleanup 0 means "not given". */
#define ELOG_CLEANUP_DELETE 1
#define ELOG_CLEANUP_COMPACT 2

/* The largest record (24 bytes of fixed fields, key and value) and key. */
#define ELOG_MAX_RECORD (16u * 1024 * 1024)
/* Every offset is below this (2^63): a writer refuses to place a record
 * at or above it (ELOG_INVALID), which leaves any writer's next batch room
 * below 2^64, and elog_verify() reports a log that holds one. */
#define ELOG_OFFSET_MAX (UINT64_C(1) << 63)
#define ELOG_MAX_KEY 65535u

/* A record's ts_ms that the writer replaces with the time of append. */
#define ELOG_TS_NOW INT64_MIN

struct elog_record {
	uint64_t offset; /* set by readers (elog_append() ignores it) */
	int64_t ts_ms;   /* milliseconds since the epoch, or ELOG_TS_NOW */
	uint16_t schema; /* the application's payload format id; 0 = none */
	const void *key; /* NULL or key_len bytes; key_len 0 = unkeyed */
	size_t key_len;
	const void *value; /* value_len bytes; empty + keyed = tombstone */
	size_t value_len;
};

/* The limits of the creation settings below, in bytes. */
#define ELOG_SEGMENT_BYTES_MIN (4ull << 10)
#define ELOG_SEGMENT_BYTES_MAX (1ull << 30)
#define ELOG_INDEX_INTERVAL_MIN 64u
#define ELOG_INDEX_INTERVAL_MAX (1u << 24)

/* Options of elog_open().  "creation": stored with the log when it is
 * created; 0 means the default, or for an existing log its own. */
struct elog_options {
	int create;              /* create the directory and log if missing */
	uint64_t segment_bytes;  /* creation: roll size, default 64 MiB */
	uint32_t index_interval; /* creation: index spacing, default 4096 */
	uint64_t retain_ms;      /* creation: retention by age, 0 none */
	uint64_t retain_bytes;   /* creation: retention by size, 0 none */
	int compression;         /* creation: ELOG_COMPRESS_NONE or _ZSTD */
	int compression_level;   /* creation: zstd level 1..19, default 3 */
	int no_dictionary;       /* creation: never train a zstd dictionary */
	int retain_consumers;    /* creation: ELOG_RETAIN_CONSUMERS_* */
	int cleanup;             /* creation: ELOG_CLEANUP_*, default delete */
	size_t batch_bytes;      /* buffer that flushes by itself, 1 MiB */
	int64_t wait_ms;         /* wait for LOCK (ELOG_WAIT_*); 0: 10 s */
	int exclusive;           /* the only writer while open: any other
	                           * writer's open fails, and this one fails
	                           * while another is open (ELOG_LOCKED) */
};

/* Settings of a log as stored in its directory. */
struct elog_settings {
	char id[33]; /* stable log id: 32 lowercase hex digits */
	int64_t created_ms;
	uint64_t segment_bytes;
	uint32_t index_interval;
	uint64_t retain_ms;
	uint64_t retain_bytes;
	int compression; /* ELOG_COMPRESS_NONE or ELOG_COMPRESS_ZSTD */
	int compression_level;
	int no_dictionary;
	int retain_consumers; /* ELOG_RETAIN_CONSUMERS_* */
	int cleanup;          /* ELOG_CLEANUP_DELETE or ELOG_CLEANUP_COMPACT */
	unsigned format;      /* the log's format: 1 (elog 0.2) or 2 (elog 0.3),
	                       * read only: a program of elog 0.3 that changes
	                       * a log of format 1 makes it 2 (elog(7)) */
};
/* What age retention does with records a named consumer has not read:
 * remove them and report the loss, or keep them (a size limit still
 * removes them, and reports it). */
#define ELOG_RETAIN_CONSUMERS_REPORT 0
#define ELOG_RETAIN_CONSUMERS_PROTECT 1

typedef struct elog elog;
typedef struct elog_reader elog_reader;

/*
 * Writing (elog(3), Writing).  A writer handle is thread-safe; its messages
 * go to elog_errmsg().
 */

/* Open DIR for writing; opt may be NULL.  On failure *w is set when a
 * handle could be made (for elog_errmsg()): close it all the same. */
int elog_open(elog **w, const char *dir, const struct elog_options *opt);
/* Make every appended record durable, then free w.  NULL: a no-op. */
int elog_close(elog *w);
/* Buffer one record (not yet durable); its offset is stored in *offset,
 * when not NULL, before the elog_sync() that covers it returns. */
int elog_append(elog *w, const struct elog_record *rec, uint64_t *offset);
/* Buffer one record at offset rec->offset, not the next one: the offsets
 * skipped are a hole, as compaction leaves (a copy that keeps the
 * original's offsets).  ELOG_TAKEN, nothing buffered, when rec->offset is
 * not above every offset the log holds and w has buffered; when another
 * writer takes it first, the elog_sync() that writes it fails so and w
 * refuses further work. */
int elog_append_at(elog *w, const struct elog_record *rec);
/* Wait until every record appended through w before the call is durable. */
int elog_sync(elog *w);
/* The offset the next record would get if no other writer wrote first. */
uint64_t elog_next_offset(elog *w);
/* The durable end as w last saw it. */
uint64_t elog_durable_end(elog *w);
/* The settings stored with the log, valid until elog_close(). */
const struct elog_settings *elog_settings_of(elog *w);
/* The message of w's last error, with its context.  Never NULL. */
const char *elog_errmsg(elog *w);
/* Something w did that its caller should tell the operator, though no
 * call failed (a recovery that cut records after another writer's failed
 * sync, a log of format 1 made format 2), or NULL.  Each notice is returned once; the text stays valid in
 * the calling thread until its next call. */
const char *elog_notice(elog *w);

/*
 * Reading (elog(3), Reading).  A reader takes no lock and is not
 * thread-safe; its messages go to elog_reader_errmsg().
 */

/* Open a reader on DIR at the beginning of the log.  On failure *r is set
 * when a handle could be made (for elog_reader_errmsg()). */
int elog_reader_open(elog_reader **r, const char *dir);
void elog_reader_close(elog_reader *r);
/* Position at the first record with offset >= offset. */
int elog_reader_seek(elog_reader *r, uint64_t offset);
/* Position at the first record / just after the last durable one. */
int elog_reader_seek_begin(elog_reader *r);
int elog_reader_seek_end(elog_reader *r);
/* Position at the first record, in offset order, whose ts_ms >= ts_ms. */
int elog_reader_seek_time(elog_reader *r, int64_t ts_ms);
/* Position so that the last n durable records are next; at the first
 * record when the log holds fewer (count them with elog_reader_prev()). */
int elog_reader_seek_last(elog_reader *r, uint64_t n);
/* The next durable record; *rec is valid until the next call on r. */
int elog_reader_next(elog_reader *r, struct elog_record *rec);
/* The durable record before the position, which then moves to it (so
 * elog_reader_next() returns it again); ELOG_END at the first record. */
int elog_reader_prev(elog_reader *r, struct elog_record *rec);
/* From now on elog_reader_next() and elog_reader_prev() return only the
 * records with since_ms <= ts_ms <= until_ms, in offset order, whatever
 * order the producers' clocks wrote them in; INT64_MIN and INT64_MAX leave
 * a side open (both: no window).  The position is not moved: seek with
 * elog_reader_seek_time(r, since_ms) to start at the window's first record.
 * Returns 0. */
int elog_reader_window(elog_reader *r, int64_t since_ms, int64_t until_ms);
/* After ELOG_GAP: the offsets that are gone, first and last inclusive. */
void elog_reader_gap(const elog_reader *r, uint64_t *first, uint64_t *last);
/* After ELOG_GAP: why they are gone. */
#define ELOG_GAP_RETENTION 1
#define ELOG_GAP_DAMAGE 2
int elog_reader_gap_cause(const elog_reader *r);
/* The offset the next record returned will have at least. */
uint64_t elog_reader_position(const elog_reader *r);
/* The durable end as last read from the watermark. */
uint64_t elog_reader_durable_end(const elog_reader *r);
/* Wait until the durable end may have moved, up to timeout_ms
 * (ELOG_WAIT_*); 0: not at all, look once. */
int elog_reader_wait(elog_reader *r, int64_t timeout_ms);
/* A descriptor for poll(2) that becomes readable when the durable end may
 * have moved, or -1. */
int elog_reader_fd(elog_reader *r);
/* The message of r's last error, with its context.  Never NULL. */
const char *elog_reader_errmsg(const elog_reader *r);

/*
 * Settings (elog(3), Settings).
 */

/* Read the settings stored in DIR without opening the log. */
int elog_settings_read(const char *dir, struct elog_settings *s, char *msg);

/* Set the fields named in fields (ELOG_SET_*) of the log DIR from s; the
 * others of s are not looked at.  It takes maint.lock, waiting for a
 * compaction or retention run up to wait_ms (ELOG_WAIT_*; 0: not at all,
 * ELOG_LOCKED). */
#define ELOG_SET_SEGMENT_BYTES 0x01u
#define ELOG_SET_INDEX_INTERVAL 0x02u
#define ELOG_SET_RETAIN_MS 0x04u
#define ELOG_SET_RETAIN_BYTES 0x08u
#define ELOG_SET_COMPRESSION 0x10u      /* compression and compression_level */
#define ELOG_SET_DICTIONARY 0x20u       /* no_dictionary */
#define ELOG_SET_CLEANUP 0x40u          /* cleanup */
#define ELOG_SET_RETAIN_CONSUMERS 0x80u /* retain_consumers */
int elog_settings_update(const char *dir, const struct elog_settings *s, unsigned fields,
                         int64_t wait_ms, char *msg);

/*
 * Consumers (elog(3), Consumers): committed offsets in consumers.json.
 */

#define ELOG_CONSUMER_NAME_MAX 64
#define ELOG_CONSUMERS_MAX 4096

struct elog_consumer {
	char name[ELOG_CONSUMER_NAME_MAX + 1];
	uint64_t offset;      /* the last record processed */
	int64_t committed_ms; /* when it was committed, ms since the epoch */
	uint64_t lag;         /* offsets still to read, to the durable end */
	uint64_t lost;        /* offsets retention removed before the
	                        * consumer read them, not acknowledged */
	uint64_t lost_first;  /* when lost: the first and last of them */
	uint64_t lost_last;
	uint64_t next;   /* the first offset it has yet to read: offset + 1,
	                  * or where it was created */
	int uncommitted; /* created (elog_consumer_create()), never committed:
	                  * offset is 0 and means nothing, committed_ms is
	                  * when it was created */
};

/* 0 when name is a valid consumer name, else ELOG_BADNAME. */
int elog_consumer_name_check(const char *name);
/* Commit offset as consumer name's last processed record (creating the
 * consumer when there is none of that name). */
int elog_consumer_commit(const char *dir, const char *name, uint64_t offset, char *msg);
/* Create consumer name before the log's first record, uncommitted, so
 * that retention's protect keeps every record for it; 0 and no change
 * when it exists. */
int elog_consumer_create(const char *dir, const char *name, char *msg);
/* Read consumer name's entry into *c. */
int elog_consumer_get(const char *dir, const char *name, struct elog_consumer *c, char *msg);
/* Every consumer, sorted by name, in a malloc'ed array (NULL for none). */
int elog_consumer_list(const char *dir, struct elog_consumer **list, size_t *n, char *msg);
/* Forget consumer name. */
int elog_consumer_delete(const char *dir, const char *name, char *msg);
/* Acknowledge consumer name's loss to retention: lost reads 0 again once
 * its committed offset is at or above the log's start - 1. */
int elog_consumer_ack_loss(const char *dir, const char *name, char *msg);
/* Position reader r (opened on DIR) just after name's committed offset. */
int elog_consumer_seek(elog_reader *r, const char *dir, const char *name, char *msg);

/*
 * Verification (elog(3), Verification).
 */

#define ELOG_VERIFY_REPAIR 0x1u
#define ELOG_VERIFY_SALVAGE 0x2u /* with REPAIR: salvage the active segment */

#define ELOG_PROBLEM_DAMAGE 1     /* data readers or the writer will fail on */
#define ELOG_PROBLEM_WARNING 2    /* harmless or self-healing */
#define ELOG_PROBLEM_REPAIRED 3   /* what a repair did */
#define ELOG_PROBLEM_LOSS 4       /* offsets a repair or salvage lost */
#define ELOG_PROBLEM_UNREADABLE 5 /* offsets damage keeps from readers */

#define ELOG_NOPOS UINT64_MAX /* a problem of a whole file */

/* The next step a problem calls for, which the library leaves to the
 * caller to word (elog-verify appends its own words to the text). */
#define ELOG_HINT_NONE 0
#define ELOG_HINT_CUT 1          /* bytes a repair cut: inspect, then delete */
#define ELOG_HINT_RETAIN 2       /* the next retention or compaction deletes it */
#define ELOG_HINT_FOREIGN 3      /* move it out of the log, check again */
#define ELOG_HINT_COMPACT_COPY 4 /* the next compaction removes the copy */
#define ELOG_HINT_COMPACT 5      /* the next compaction removes it */
#define ELOG_HINT_LOSS 6         /* restore a backup, or repair to record the loss */
#define ELOG_HINT_RESEAL 7       /* a repair writes the seal again */
#define ELOG_HINT_SALVAGE 8      /* salvage gets past it, as detail says */
#define ELOG_HINT_NO_SALVAGE 9   /* salvage cannot: shorter than a header */

struct elog_problem {
	int kind;           /* ELOG_PROBLEM_* */
	const char *file;   /* name in the log directory, "." for it */
	uint64_t pos;       /* byte position in file, or ELOG_NOPOS */
	const char *text;   /* lowercase, without file or position */
	int hint;           /* ELOG_HINT_*: the next step, not in text */
	const char *detail; /* what that step would do, or "" */
};

/* One segment as elog_verify() found it. */
struct elog_segment_info {
	uint64_t base;
	uint64_t bytes;         /* file size */
	uint64_t records;       /* valid records read */
	uint64_t first, last;   /* their offsets, when records > 0 */
	int64_t ts_min, ts_max; /* their timestamps, when records > 0 */
	int active;             /* the newest segment, the one appended to */
	int damaged;            /* a damage problem was reported for it */
	unsigned version;       /* of its header, 0 when it cannot be read */
	unsigned index_version; /* of its index, 0 when none can be read */
};

/* How far the check has read, bytes of segments. */
struct elog_progress {
	uint64_t done, total;
};

/* Callbacks, the one convention of the whole interface: a function type
 * elog_X_fn(void *arg, const struct elog_X *), given as a member of the
 * call's options structure beside the one `void *arg` that every callback
 * of the structure gets first.  NULL calls nothing.  They run in the
 * calling thread; what the pointer points to is valid during the call. */
typedef void elog_problem_fn(void *arg, const struct elog_problem *p);
typedef void elog_segment_info_fn(void *arg, const struct elog_segment_info *s);
typedef void elog_progress_fn(void *arg, const struct elog_progress *p);

/* Options of elog_verify(); NULL: check only. */
struct elog_verify_opts {
	unsigned flags;                /* ELOG_VERIFY_*; 0: check only */
	int64_t wait_ms;               /* repair: wait for maint.lock, then for LOCK,
	                                  each (ELOG_WAIT_*); 0: 10 s */
	elog_problem_fn *problem;      /* each problem as it is found */
	elog_segment_info_fn *segment; /* each segment once checked */
	elog_progress_fn *progress;    /* about every MiB read */
	void *arg;
};

struct elog_verify_result {
	uint64_t damage, warnings, repaired;
	uint64_t remaining; /* damage left after a repair, else damage */
	uint64_t segments, records, bytes;
	uint64_t losses;      /* ranges lost for good (ELOG_PROBLEM_LOSS) */
	uint64_t unreadable;  /* ranges readers cannot read, */
	uint64_t salvageable; /* of which salvage gets past */
};

/* Check (and with ELOG_VERIFY_REPAIR repair) the log DIR.  0 when the
 * check ran to the end, whatever it found. */
int elog_verify(const char *dir, const struct elog_verify_opts *o, struct elog_verify_result *res,
                char *msg);

/* Rewrite closed segments past their damage, moving the damaged bytes
 * aside and recording the offsets lost in the file "salvaged". */
struct elog_salvage_report {
	const char *segment;  /* the segment's file name */
	const char *aside;    /* where the damaged bytes were copied */
	uint64_t pos, bytes;  /* the damaged bytes in the old file */
	int lost;             /* 1 when offsets lay in them: */
	uint64_t first, last; /* the offsets that may have been lost */
};
typedef void elog_salvage_fn(void *arg, const struct elog_salvage_report *rep);
/* Options of elog_salvage(); NULL: the defaults. */
struct elog_salvage_opts {
	int64_t wait_ms;       /* wait for maint.lock (ELOG_WAIT_*); 0: not at all */
	elog_salvage_fn *each; /* each damaged range moved aside */
	void *arg;
};
struct elog_salvage_result {
	uint64_t segments; /* segments rewritten */
	uint64_t ranges;   /* damaged ranges moved aside */
	uint64_t bytes;    /* their bytes */
};
int elog_salvage(const char *dir, const struct elog_salvage_opts *o,
                 struct elog_salvage_result *res, char *msg);

/*
 * Maintenance (elog(3), Maintenance, Retention, Compaction): closed
 * segments only, under maint.lock, beside live writers and readers.
 */

/* What happened to one segment, reported through elog_segment_fn. */
#define ELOG_SEG_REMOVED 1   /* retention: its file and index were unlinked */
#define ELOG_SEG_REWRITTEN 2 /* compaction: rewritten with fewer records */
#define ELOG_SEG_EMPTIED 3   /* elog 0.2 only: nothing was left, unlinked */
#define ELOG_SEG_MERGED 4    /* compaction: copied to the end of `into` */

struct elog_segment_report {
	int action;              /* ELOG_SEG_* */
	uint64_t base;           /* the segment (its name) */
	uint64_t end;            /* the next segment's base */
	uint64_t into;           /* ELOG_SEG_MERGED: the segment it went to */
	uint64_t records_before; /* compaction: records in it before... */
	uint64_t records_after;  /* ...and after */
	uint64_t bytes_before;   /* bytes of its .log file before... */
	uint64_t bytes_after;    /* ...and after (0 when removed) */
	int64_t newest_ms;       /* retention: its newest record's ts_ms,
	                            * INT64_MIN when it held none */
	int damaged;             /* retention: it could not be read */
};
/* Called in the calling thread after each change (or instead, dry_run). */
typedef void elog_segment_fn(void *arg, const struct elog_segment_report *rep);

#define ELOG_RETAIN_OFF UINT64_MAX /* a limit that is not applied */
/* A named consumer that loses (dry_run: would lose) records it has not
 * read, reported through elog_loss_fn before the segments go. */
struct elog_consumer_loss {
	const char *name;     /* the consumer */
	uint64_t first, last; /* the offsets it loses, inclusive */
	uint64_t records;     /* last - first + 1: offsets, of which
	                        * compaction may have left some empty */
	int forced;           /* retain-consumers=protect kept them from age
	                        * retention; the size limit removes them */
	int recorded;         /* kept for elog_consumer_list() until
	                        * elog_consumer_ack_loss(); 0 in a dry run, or
	                        * when the file could not be written */
};
typedef void elog_loss_fn(void *arg, const struct elog_consumer_loss *l);
struct elog_retain_opts {
	uint64_t max_age_ms;   /* 0: the log's stored policy; ELOG_RETAIN_OFF */
	uint64_t max_bytes;    /* 0: the log's stored policy; ELOG_RETAIN_OFF */
	int dry_run;           /* report what would go, change nothing */
	int64_t wait_ms;       /* wait for maint.lock (ELOG_WAIT_*); 0: not at all */
	int64_t now_ms;        /* the time ages are measured at; 0: the clock */
	elog_segment_fn *each; /* NULL, or called per segment removed */
	elog_loss_fn *lost;    /* NULL, or called per consumer losing records */
	void *arg;             /* the first argument of each and lost */
};
struct elog_retain_result {
	uint64_t segments;     /* segments removed */
	uint64_t bytes;        /* their .log bytes */
	uint64_t start_before; /* the log's first offset before the run... */
	uint64_t start_after;  /* ...and after it */
	uint64_t total_bytes;  /* the .log bytes left */
	uint64_t leftovers;    /* files of interrupted runs removed */
	/* With an age limit, the first closed segment kept, and why: */
	int kept_why; /* ELOG_KEPT_* */
	uint64_t kept_base, kept_end;
	int64_t kept_newest_ms;                         /* its newest record's ts_ms */
	int64_t kept_judged_ms;                         /* the timestamp it was judged by */
	int kept_damaged;                               /* it cannot be read (elog-verify) */
	char kept_consumer[ELOG_CONSUMER_NAME_MAX + 1]; /* ELOG_KEPT_CONSUMER */
	uint64_t losers;       /* consumers that lost records they had not read */
	int losses_unrecorded; /* their losses could not be written down */
	int consumers_unknown; /* consumers.json could not be read: losses
	                        * are not known, protect keeps everything */
	uint64_t unjudged;     /* closed segments kept because they could not be
	                        * read (damage), with no size limit to remove
	                        * them; their first: */
	uint64_t unjudged_base;
	uint64_t damaged; /* damaged segments removed all the same */
};
#define ELOG_KEPT_NONE 0      /* no age limit, or no closed segment kept */
#define ELOG_KEPT_YOUNG 1     /* its newest record is within the limit */
#define ELOG_KEPT_UNTRUSTED 2 /* its newest timestamp is not plausible */
#define ELOG_KEPT_CONSUMER \
	3 /* retain-consumers=protect: kept_consumer
                                * has not read it */
#define ELOG_KEPT_DAMAGED \
	4 /* it cannot be read, and nothing later says
                                * how old it is */
/* Remove the oldest closed segments of DIR by age and size; o may be NULL. */
int elog_retain(const char *dir, const struct elog_retain_opts *o, struct elog_retain_result *res,
                char *msg);

/* Options of elog_compact(); NULL or every member 0: the defaults. */
#define ELOG_COMPACT_GRACE_DEFAULT (24ull * 3600 * 1000)
#define ELOG_COMPACT_GRACE_NONE UINT64_MAX /* tombstones go at once */
struct elog_compact_opts {
	uint64_t grace_ms;     /* how long a tombstone stays after compaction
	                        * first sees it; 0: the default, 24 h */
	uint64_t min_lag_ms;   /* leave records younger than this alone */
	int dry_run;           /* report what would change, change nothing */
	int64_t wait_ms;       /* wait for maint.lock (ELOG_WAIT_*); 0: not at all */
	int64_t now_ms;        /* the clock for ages and grace; 0: the clock */
	elog_segment_fn *each; /* NULL, or called per segment changed */
	void *arg;
};
struct elog_compact_result {
	uint64_t segments_before;               /* closed segments before the run... */
	uint64_t segments_after;                /* ...and after */
	uint64_t segments_rewritten;            /* rewritten by compaction or merging */
	uint64_t records_before, records_after; /* in closed segments */
	uint64_t bytes_before, bytes_after;     /* their .log bytes */
	uint64_t keys;                          /* distinct keys in the whole log */
	uint64_t tombstones_kept;               /* still within their grace */
	uint64_t tombstones_removed;
	uint64_t leftovers; /* files of interrupted runs removed */
	uint64_t memory;    /* bytes of the key table and state */
};
/* Keep the newest record of each key in the closed segments of DIR, then
 * merge small neighbours; o may be NULL.  A log
 * whose cleanup is delete is refused with ELOG_NOCOMPACT, untouched. */
int elog_compact(const char *dir, const struct elog_compact_opts *o,
                 struct elog_compact_result *res, char *msg);

/*
 * Summary (elog(3), Summary): one look at a log, as elog-cat -L prints it,
 * without a lock and without scanning the log.
 */
struct elog_summary {
	struct elog_settings settings;
	uint64_t start;            /* the first segment's base (0 when none) */
	uint64_t durable_end;      /* every record below it is durable */
	int have_first, have_last; /* a durable record was found */
	uint64_t first, last;      /* offsets of the first and last durable record */
	uint64_t records;          /* last - first + 1: exact while offsets are
	                          * dense, an upper bound after compaction or
	                          * a copy with holes */
	int records_exact;         /* 1: no compaction ever ran on the log, and
	                          * no copy left holes (elog_append_at()) */
	int64_t oldest_ms;         /* ts_ms of the first record */
	int64_t newest_ms;         /* the greatest ts_ms in the newest segment
	                          * holding durable records */
	uint64_t segments;
	uint64_t active_base; /* the newest segment */
	uint64_t log_bytes;   /* the segment files' sizes */
	uint64_t dir_bytes;   /* every regular file's size... */
	uint64_t disk_bytes;  /* ...and the blocks they take, in bytes */
	/* Records read at the end of the log, as stored and uncompressed;
	 * sample_unknown: some could not be decoded here. */
	uint64_t sample_stored, sample_raw;
	int sample_unknown;
	/* From /proc/locks (Linux); writers_known 0 when it cannot be read. */
	int writers_known;
	pid_t *writers; /* open writers; malloc'ed */
	size_t nwriters;
	int writers_exclusive; /* the one open writer is an exclusive one */
	pid_t batch_pid, maint_pid; /* writing a batch, maintaining; 0: none */
	/* When retention and compaction last finished a run; INT64_MIN: never. */
	int64_t retain_last_ms, compact_last_ms;
	/* When elog_append_at() last left a hole; INT64_MIN: never. */
	int64_t copy_last_ms;
	int damaged; /* a record or header it read was damaged */
	/* Bit v - 1 set: a segment (an index) of version v is in the log. */
	unsigned segment_versions, index_versions;
	uint64_t lost; /* offsets lost to damage: gaps in the chain
	                          * of segments, ranges salvage recorded;
	                          * records leaves them out */
	/* Whole records past the durable end, written by a writer that is
	 * gone: the next writer publishes them, or cuts them (pending_cut)
	 * after a failed sync.  0 while a writer is open or unknown. */
	uint64_t pending;
	int pending_cut;
};
/* Fill *s for the log DIR; free it with elog_summary_free(). */
int elog_summary_read(const char *dir, struct elog_summary *s, char *msg);
void elog_summary_free(struct elog_summary *s);

/*
 * Files (elog(3), Files): sizes and names of the format of elog(5).
 */
/* The bytes a record takes in a segment: 28 + key_len + value_len. */
size_t elog_record_size(size_t key_len, size_t value_len);
/* "<base as 20 digits>.log" into buf of ELOG_SEGMENT_NAME_MAX bytes. */
#define ELOG_SEGMENT_NAME_MAX 25
void elog_segment_name(char *buf, uint64_t base);

#ifdef __cplusplus
}
#endif
#endif
