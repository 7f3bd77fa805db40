/*
 * encoding.h: the one encoder and the one decoder (and verdict) of each
 * structure of elog(5) that has a fixed form: a record, a segment header
 * and its seal, an index entry, the watermark, the start file and the state
 * LOCK holds.  Pure code over bytes in memory, beside format.h, which names
 * their fields; reading and writing the files is files.h's.
 */
#ifndef ELOG_ENCODING_H
#define ELOG_ENCODING_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "format.h"

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
/* The one verdict on a record's frame, all but its CRC: what is wrong
 * with the record at p, of which got bytes are at p and avail are in the
 * file from p on, or REC_FAULT_NONE. */
enum {
	REC_FAULT_NONE,
	REC_FAULT_SHORT,     /* fewer than 4 bytes: no length */
	REC_FAULT_LENGTH,    /* a length out of range */
	REC_FAULT_TRUNCATED, /* fewer bytes than the length says */
	REC_FAULT_KEY        /* a key length past the record's end */
};
static inline int elog__rec_fault(const unsigned char *p, size_t got, uint64_t avail)
{
	if (got < 4 || avail < 4)
		return REC_FAULT_SHORT;
	uint32_t len = get32(p);
	if (len < REC_FIXED || len > ELOG_MAX_RECORD)
		return REC_FAULT_LENGTH;
	if (avail < (uint64_t)len + 4)
		return REC_FAULT_TRUNCATED;
	if (got >= REC_HDR && (size_t)get16(p + REC_AT_KEY_LEN) > len - REC_FIXED)
		return REC_FAULT_KEY;
	return REC_FAULT_NONE;
}
/* The record's frame at p as elog__rec_decode() checks it: 0, ELOG_END
 * (fewer than its bytes in avail) or ELOG_CORRUPT.  Inline: the scan
 * checks every record's frame before it checks their CRCs together. */
static inline int elog__rec_frame(const unsigned char *p, size_t avail)
{
	int fault = elog__rec_fault(p, avail, avail);
	if (fault == REC_FAULT_NONE)
		return 0;
	return fault == REC_FAULT_SHORT || fault == REC_FAULT_TRUNCATED ? ELOG_END : ELOG_CORRUPT;
}
/* Fill rec from the record at p whose length, key length and CRC were
 * checked as elog__rec_decode() checks them; its size on disk.  Inline:
 * a reader runs it for every record. */
static inline size_t elog__rec_fields(const unsigned char *p, struct elog_record *rec)
{
	uint32_t len = get32(p);
	uint16_t key_len = get16(p + REC_AT_KEY_LEN);
	rec->offset = get64(p + REC_AT_OFFSET);
	rec->ts_ms = (int64_t)get64(p + REC_AT_TS);
	rec->schema = get16(p + REC_AT_SCHEMA);
	rec->key_len = key_len;
	rec->key = p + REC_HDR;
	rec->value_len = len - REC_FIXED - key_len;
	rec->value = p + REC_HDR + key_len;
	return (size_t)len + 4;
}

/* ---- segment.c: segment headers and seals ---- */
/* The header of a segment of version SEG_VERSION: its base, its flags
 * (SEG_FLAGS()) and its log, log_id being the settings' id (NULL: none). */
void elog__seg_header_encode(unsigned char *p, uint64_t base, uint32_t flags, const char *log_id);
/* The flags of a header that passed elog__seg_header_verify(). */
uint32_t elog__seg_header_flags(const unsigned char *p);
/* 1 when the header's version says the segment names its log and ends
 * with a seal once it is closed (SEG_VERSION), 0 for SEG_VERSION_1. */
int elog__seg_header_sealed(const unsigned char *p);
/* What is wrong with a header of which got bytes were read, for a report
 * that names the byte: the first of these that applies, or SEG_FAULT_NONE.
 * A wrong base or log in a header whose crc holds is no damage: the file
 * is a copy of another segment, or of another log's (move it out). */
enum {
	SEG_FAULT_NONE,
	SEG_FAULT_SHORT, /* fewer than SEG_HDR bytes */
	SEG_FAULT_MAGIC,
	SEG_FAULT_CRC,
	SEG_FAULT_VERSION, /* version or codec unknown (ELOG_BADVERSION) */
	SEG_FAULT_BASE,    /* the base is not the name's: a stray copy */
	SEG_FAULT_LOG,     /* version 2 naming another log than log_id */
	SEG_FAULT_RESERVED /* version 1's reserved bytes not zero: harmless */
};
/* log_id: the settings' id, or NULL to leave the log unjudged. */
int elog__seg_header_fault(const unsigned char *p, size_t got, uint64_t base, const char *log_id);
/* The verdict on the header of segment base, of which got bytes were read:
 * 0, or ELOG_CORRUPT or ELOG_BADVERSION with the message every caller gives
 * for it in msg (when not NULL): "<name>: truncated header", "<name>: bad
 * segment header", "<name>: unsupported segment version", and for a copy
 * of another segment or log, what it is and "move it out of the log
 * directory". */
int elog__seg_header_verify(const unsigned char *p, size_t got, uint64_t base, const char *log_id,
                            char *msg);

/* The seal at the end of a closed segment (elog(5), Segment files): the
 * segment's place in the chain of the log's segments. */
struct seal {
	uint64_t next;                 /* the base of the segment after it */
	uint64_t end;                  /* the offset after its last record */
	uint64_t pos;                  /* where the seal lies: the end of its records */
	unsigned char id[SEAL_ID_LEN]; /* the log's id */
};
/* The log id of settings (32 hex digits) as the seal holds it (and, its
 * first SEG_LOG_LEN bytes, a segment header and the start file).  Inline:
 * the start file, below segment.c, names its log too. */
static inline void elog__seal_id(const char *hex, unsigned char *id)
{
	for (unsigned i = 0; i < SEAL_ID_LEN; i++)
		id[i] = 0;
	for (unsigned i = 0; i < 2 * SEAL_ID_LEN && hex[i]; i++) {
		unsigned c = (unsigned char)hex[i];
		unsigned v = c >= '0' && c <= '9'   ? c - '0'
		             : c >= 'a' && c <= 'f' ? c - 'a' + 10
		                                    : 0;
		id[i / 2] |= (unsigned char)(v << (i % 2 ? 0 : 4));
	}
}
/* The one constructor of a seal: of the log whose settings' id is log_id. */
struct seal elog__seal_of(const char *log_id, uint64_t next, uint64_t end, uint64_t pos);
void elog__seal_encode(unsigned char *p, const struct seal *s);
/* The one decoder of a seal: SEAL_SIZE bytes at p, read at byte pos of
 * segment base.  0; ELOG_END when they are not a seal (no magic: the
 * segment ends with a record); ELOG_CORRUPT when they are a damaged one. */
int elog__seal_decode(const unsigned char *p, uint64_t base, uint64_t pos, struct seal *s);

/* What a segment says of the one after it. */
enum {
	CHAIN_NONE,    /* nothing: the active one, or of elog 0.2 */
	CHAIN_SEALED,  /* its seal names the next base */
	CHAIN_UNSEALED /* closed without a seal: truncated */
};

/* ---- index.c: entries, their one decoder and one verdict ---- */
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

/* ---- watermark.c: its 40 bytes ---- */
struct watermark {
	uint64_t durable_end;   /* records below it are durable */
	uint64_t segment_base;  /* the active segment when it was published */
	uint64_t segment_bytes; /* its durable length */
};
void elog__wm_encode(unsigned char *p, const struct watermark *wm);
/* 0, or ELOG_CORRUPT when magic or crc is wrong. */
int elog__wm_decode(const unsigned char *p, size_t len, struct watermark *wm);

/* ---- start.c: the start file's 32 bytes ---- */
/* log_id: the settings' id (NULL: a log field of 0). */
void elog__start_encode(unsigned char *p, uint64_t start, const char *log_id);
/* 0, ELOG_BADVERSION (a version this code does not know, checksum right), or
 * ELOG_CORRUPT with *why (when why != NULL) saying what is wrong: one that
 * names another log than log_id (NULL: not judged) among it. */
int elog__start_decode(const unsigned char *p, size_t len, const char *log_id, uint64_t *start,
                       const char **why);

/* ---- lockstate.c: the texts LOCK holds ---- */
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
	uint64_t hseq;      /* the slot's sync record last treated as failed */
};
void elog__lock_state_encode(char *p, const struct lock_state *ls);
int elog__lock_state_decode(const char *p, size_t len, struct lock_state *ls);

/* A sync record: a writer's fdatasync that others' acknowledgements may
 * rest on, written before the call and again with its outcome, so that a
 * writer that dies or stops between the two leaves the fact on disk
 * (elog(5), LOCK).  Text of LOCK_SYNC_LEN bytes. */
#define SYNC_ST_NONE '-'    /* never written */
#define SYNC_ST_PENDING 'P' /* the call is running, or its caller is gone */
#define SYNC_ST_OK 'K'      /* it succeeded */
#define SYNC_ST_FAILED 'F'  /* it failed: the kernel may have dropped pages */
#define SYNC_ST_HANDLED 'H' /* a failure the batch lock's holder has cut back */
struct sync_rec {
	int valid;
	char status;            /* one of SYNC_ST_* */
	uint64_t seq;           /* bumped by every write of the record */
	unsigned pid;           /* the writer that wrote it */
	unsigned char boot[16]; /* the boot it was written in */
	uint64_t t_ns;          /* CLOCK_MONOTONIC when the call was recorded */
	uint64_t cover;         /* the offset below which the sync makes
	                           * records durable */
};
void elog__sync_rec_encode(char *p, const struct sync_rec *r);
int elog__sync_rec_decode(const char *p, size_t len, struct sync_rec *r);
/* The doorbell's record: the id of the shared memory segment the writers'
 * wake-ups use and the nonce its header holds (lock.c). */
void elog__bell_rec_encode(char *p, uint32_t id, uint64_t nonce);
int elog__bell_rec_decode(const char *p, size_t len, uint32_t *id, uint64_t *nonce);

#endif
