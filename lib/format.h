/*
 * format.h: the on-disk format of a log directory, as constants: the names
 * of its files and the sizes, magics and versions of what they hold.  Its
 * sections follow man/elog.5, which describes every byte; a fact of the
 * format is written here once and used by name everywhere else.
 * Included by encoding.h; never installed.
 */
#ifndef ELOG_FORMAT_H
#define ELOG_FORMAT_H

#include "elog.h"

/* ---- The directory: the files of a log ---- */
#define FN_SETTINGS "settings"
#define FN_WATERMARK "watermark"
#define FN_START "start"
#define FN_LOCK "LOCK"
#define FN_WRITERS "writers" /* LOCK_SH by every open writer */
#define FN_MAINT "maint.lock"
#define FN_CONSUMERS "consumers.json"
#define FN_CONSUMERS_LOCK "consumers.lock"
#define FN_COMPACT_STATE "compact.state" /* tombstones compaction keeps */
#define FN_RETAIN_LAST "retain.last"     /* when retention last ran */
#define FN_COMPACT_LAST "compact.last"   /* when compaction last ran */
#define FN_SALVAGED "salvaged"           /* offsets lost to damage */
#define FN_LOSSES "consumers.lost"       /* consumers' unacknowledged losses */
#define FN_COPY_LAST "copy.last"         /* when a copy last left holes */
#define DICT_PREFIX "dict."              /* "dict.<id>", id in decimal */

/* Segments and their indexes: "<20 digits><ext>", the digits being the
 * base offset, zero-padded (ELOG_SEGMENT_NAME_FMT in elog.h). */
#define SEG_EXT ".log"
#define IDX_EXT ".idx"
#define SEG_NAME_LEN 20   /* decimal digits of a base offset */
#define NAME_MAX_LOCAL 64 /* room for any file name we build */

/* Temporary files, and what repair keeps aside. */
#define SEG_NEW_EXT ".new" /* "<base>.log.new": a segment being created */
#define TMP_INFIX ".tmp."  /* "<name>.tmp.<pid>.<n>": elog__fs_replace_file() */
#define MAINT_TMP_EXT \
	".compact" /* "<base>.log.compact", "<base>.idx.compact":
                                  * compaction's replacements being written */
#define CUT_INFIX \
	".cut-" /* "<base>.log.cut-<ms>[-<n>]": bytes that
                                  * repair cut from the active segment */

/* ---- Segment files: a 32-byte header, then records ---- */
#define SEG_MAGIC "ELOGSEG\n"
#define SEG_VERSION_1 1u /* no seal: written by elog 0.2 and before */
#define SEG_VERSION 2u   /* names its log; a closed one ends with a seal */
#define SEG_HDR 32u
/* Where the header's fields lie: magic[8] | version u32 | flags u32 |
 * base u64 | crc32c u32 | log u32.  Version 1: log is reserved (zero);
 * version 2: log is the first 4 bytes of the log's id (as the seal holds
 * it), zero naming no log.  The crc covers bytes 0-23, then bytes 28-31
 * when log is not zero. */
#define SEG_AT_VERSION 8u
#define SEG_AT_FLAGS 12u
#define SEG_AT_BASE 16u
#define SEG_AT_CRC 24u
#define SEG_AT_LOG 28u
#define SEG_LOG_LEN 4u
/* The flags: bits 0-7 the codec, bits 8-31 the dictionary id. */
#define SEG_FLAGS(codec, dict) ((uint32_t)(codec) | (uint32_t)(dict) << 8)
#define SEG_CODEC(flags) ((flags)&0xffu)
#define SEG_DICT(flags) ((flags) >> 8)

/* ---- The seal: the last 56 bytes of a closed segment of version 2 ----
 * magic[8] | next u64 (the base of the segment after it) | end u64 (the
 * offset after its last record; its base when it holds none) | pos u64
 * (where the seal starts: the end of its records) | id[16] (the log's id)
 * | crc32c u32 (of the first 48 bytes) | reserved u32. */
#define SEAL_MAGIC "ELOGSEAL"
#define SEAL_SIZE 56u
#define SEAL_AT_NEXT 8u
#define SEAL_AT_END 16u
#define SEAL_AT_POS 24u
#define SEAL_AT_ID 32u
#define SEAL_ID_LEN 16u
#define SEAL_AT_CRC 48u
#define SEAL_AT_RESERVED 52u

/* ---- Records ----
 * length u32 | crc32c u32 | offset u64 | ts_ms i64 | schema u16 |
 * key_len u16 | key | value.  length counts the bytes after the length field
 * (crc, fixed fields, key, value) = REC_FIXED + key_len + value_len; the crc
 * covers the bytes after the crc field. */
#define REC_PREFIX 8u /* length and crc */
#define REC_FIXED 24u /* what length adds to key_len + value_len */
#define REC_HDR 28u   /* bytes before the key */
#define REC_MIN_LEN REC_FIXED
#define REC_AT_CRC 4u
#define REC_AT_OFFSET 8u
#define REC_AT_TS 16u
#define REC_AT_SCHEMA 24u
#define REC_AT_KEY_LEN 26u

/* ---- Compression: the codec of a segment's header, the tag of a stored
 * value, and dictionary files ---- */
#define CODEC_NONE 0u
#define CODEC_ZSTD 1u
#define TAG_RAW 0u  /* value bytes follow as given */
#define TAG_ZSTD 1u /* one zstd frame follows */
#define DICT_MAGIC "ELOGDICT"
#define DICT_VERSION 1u
#define DICT_HDR 24u
#define DICT_MAX (1u << 20) /* a larger dictionary file is corrupt */
#define DICT_ID_MAX 0xffffffu

/* ---- Index files: a 16-byte header, magic[8] | version u32 | reserved u32,
 * then entries.  Version 2, written: 48-byte entries
 * offset u64 | ts_max i64 | ts_min i64 | span_min i64 | span_max i64 |
 * pos u32 | crc32c u32 (of the first 44 bytes).
 * Version 1, still read: 24-byte entries
 * offset u64 | ts_max i64 | pos u32 | crc32c u32 (of the first 20 bytes).
 * ts_max and ts_min cover the segment's records through the entry's own;
 * span_min and span_max the records from the previous entry's up to, not
 * including, its own (the span of the first entry is empty). ---- */
#define IDX_MAGIC "ELOGIDX\n"
#define IDX_VERSION 2u
#define IDX_VERSION_1 1u
#define IDX_HDR 16u
#define IDX_AT_VERSION 8u
#define IDX_AT_RESERVED 12u
#define IDX_ENTRY 48u
#define IDX_AT_OFFSET 0u
#define IDX_AT_TS_MAX 8u
#define IDX_AT_TS_MIN 16u
#define IDX_AT_SPAN_MIN 24u
#define IDX_AT_SPAN_MAX 32u
#define IDX_AT_POS 40u
#define IDX_AT_CRC 44u
#define IDX1_ENTRY 24u
#define IDX1_AT_TS_MAX 8u
#define IDX1_AT_POS 16u
#define IDX1_AT_CRC 20u
/* The span of a first entry, and of nothing: no timestamp at all. */
#define IDX_SPAN_EMPTY_MIN INT64_MAX
#define IDX_SPAN_EMPTY_MAX INT64_MIN

/* ---- The watermark: 40 bytes, rewritten in place after every fdatasync.
 * magic[8] | durable_end u64 | segment_base u64 | segment_bytes u64 |
 * crc32c u32 (of the first 32 bytes) | reserved u32 ---- */
#define WM_MAGIC "ELOGWMK\n"
#define WM_SIZE 40u
#define WM_AT_END 8u    /* durable_end */
#define WM_AT_BASE 16u  /* segment_base */
#define WM_AT_BYTES 24u /* segment_bytes */
#define WM_AT_CRC 32u
#define WM_AT_RESERVED 36u

/* ---- The start file: 32 bytes, made with the log, replaced whole (in
 * place on a full disk).  magic[8] | version u32 | log u32 | start u64 |
 * crc32c u32 (of the first 24 bytes) | reserved u32.  log: the first 4
 * bytes of the log's id, as in a segment header; 0 names none (elog 0.2)
 * ---- */
#define START_MAGIC "ELOGSTA\n"
#define START_VERSION 1u
#define START_SIZE 32u
#define START_AT_VERSION 8u
#define START_AT_LOG 12u
#define START_AT_START 16u
#define START_AT_CRC 24u
#define START_AT_RESERVED2 28u

/* ---- The settings file: text ---- */
/* The log's format: 2 once any program of elog 0.3 changed it (segments
 * and indexes of version 2 may be in it), 1 for a log only elog 0.2 wrote.
 * elog 0.2 refuses a format other than 1 before it reads anything else. */
#define SETTINGS_FORMAT 2u
#define SETTINGS_FORMAT_1 1u
#define SETTINGS_MAX 4096u /* a larger settings file is corrupt */
#define DEFAULT_SEGMENT_BYTES (64ull << 20)
#define DEFAULT_INDEX_INTERVAL 4096u
#define DEFAULT_ZSTD_LEVEL 3

/* ---- LOCK: where each fact of the writers' protocol lies (elog(5)) ----
 * Bytes of the file: the state of the log's tail (text, written under the
 * batch lock), the two sync records (text: the batch lock holder's and the
 * sync slot holder's), and the doorbell's record (which shared memory
 * segment the writers' wake-ups use).  Byte-range locks (open file
 * description locks, F_OFD_SETLK): a waiter's announcement, every open
 * writer's hold (shared; an exclusive writer's: exclusive), and the sync
 * slot.  The batch lock itself is flock(2) on the whole file. */
#define LOCK_STATE_LEN 421
#define LOCK_AT_SYNC 512    /* sync record 0 (batch lock), then 1 (slot) */
#define LOCK_SYNC_STEP 256  /* from one sync record to the next */
#define LOCK_SYNC_LEN 155
#define LOCK_AT_BELL 1024
#define LOCK_BELL_LEN 59
#define LOCK_BYTE_WAIT 0    /* read-locked by a writer waiting its turn */
#define LOCK_BYTE_OPEN 2    /* read-locked by every open writer handle,
                             * write-locked by an exclusive one */
#define LOCK_BYTE_SLOT 16   /* write-locked by the writer syncing for others */
#define SYNC_BY_LOCK 0      /* sync record 0: guarded by the batch lock */
#define SYNC_BY_SLOT 1      /* sync record 1: guarded by the sync slot */

#endif
