/*
 * consumers_json.h: the table of committed offsets and its text form, the
 * file consumers.json.  Internal to the library (lib/consumers.c, which
 * reads and commits, and lib/verify.c, which checks the file) and its tests
 * and fuzzers; the format is documented in man/elog.5 and in elog-commit(1).
 */
#ifndef ELOG_CONSUMERS_JSON_H
#define ELOG_CONSUMERS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"

#define CONSUMERS_FORMAT 1u
/* Version 2: a consumer may be created and not yet committed ("next" and
 * "created_ms" instead of "offset" and "committed_ms").  A table without
 * one is written as version 1, which older builds read. */
#define CONSUMERS_FORMAT_UNCOMMITTED 2u
/* A file larger than this is corrupt: ELOG_CONSUMERS_MAX entries of the
 * longest name and largest numbers take about 600 KiB. */
#define CONSUMERS_FILE_MAX (1u << 20)

/* The consumers of one log, sorted by name, names unique. */
struct ctable {
	struct elog_consumer *v;
	size_t n, cap;
};

void elog__ctable_free(struct ctable *t);
/* The index of name in t, or -1. */
ssize_t elog__ctable_find(const struct ctable *t, const char *name);
/* Set name's offset and time, adding it in order when it is new.
 * 0, ELOG_TOOMANY, ENOMEM. */
int elog__ctable_set(struct ctable *t, const char *name, uint64_t offset, int64_t committed_ms);
/* Add name, uncommitted, with next as the first offset it has to read,
 * unless it is there: 0 added, 1 there already (unchanged), ELOG_TOOMANY,
 * ENOMEM. */
int elog__ctable_create(struct ctable *t, const char *name, uint64_t next, int64_t created_ms);
void elog__ctable_remove(struct ctable *t, size_t i);

/* Parse the text of consumers.json (len bytes, need not be NUL-terminated)
 * into an empty table.  Returns 0, ELOG_CORRUPT or ELOG_BADVERSION with msg
 * naming the byte position, or ENOMEM.  On failure t is left empty. */
int elog__ctable_parse(struct ctable *t, const char *text, size_t len, char *msg);

/* Render t as the text of consumers.json into a malloc'ed buffer. */
int elog__ctable_format(const struct ctable *t, char **text, size_t *len);

/* consumers.c, for retention: take the exclusive lock of consumers.lock
 * (*lfd; closing it releases the lock), and read consumers.json into an
 * empty table (a missing file: no consumer). */
int elog__consumers_lock(int dfd, int *lfd, char *msg);
int elog__consumers_load(int dfd, struct ctable *t, char *msg);

#endif
