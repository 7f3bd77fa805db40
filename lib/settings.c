/*
 * settings.c: the per-log settings file (elog(5), The settings file),
 * written once when the log is created: text, one "key value" pair per
 * line, so that a person can read it with cat(1).
 *
 * Unknown keys are ignored so that a later version can add some; a format
 * number this version does not know is refused.  A key a log was made
 * without reads as its first word or 0: a log made before "cleanup"
 * existed is a delete log, never compacted until someone says otherwise.
 *
 * Creation options given again when an existing log is opened must agree
 * with what is stored (elog__settings_check_options()); the settings change only
 * through elog_settings_update(), which replaces the file under the
 * maintenance lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "os.h"
#include "compress.h"
#include "files.h"

static int parse_u64(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	if (n == 0 || n > 20)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

static int is_hex_id(const char *s, size_t n)
{
	if (n != 32)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* How a key's value is written, and the field of struct elog_settings it
 * fills. */
enum kind {
	K_FORMAT, /* a decimal number: the format, checked, not kept */
	K_ID,     /* 32 lowercase hex digits (char[33]) */
	K_WORD,   /* words[0] or words[1], kept as 0 or 1 (int) */
	K_CHOICE, /* words[0] or words[1], kept as 1 or 2 (int), the
			 * ELOG_* values of a setting whose 0 in
			 * elog_options means "not given"; absent: 1 */
	K_TIME,   /* a decimal number (int64_t, at most INT64_MAX) */
	K_U64,    /* a decimal number (uint64_t) */
	K_U32,    /* a decimal number (uint32_t) */
	K_INT,    /* a decimal number (int) */
};

/* The keys, in the order elog__settings_format() writes them.  A number must lie
 * in [min, max] once the whole file is read (a key left out counts as 0);
 * a word other than the two returns unknown at once. */
static const struct key {
	const char *name;
	enum kind kind;
	size_t at;            /* offsetof the field */
	uint64_t min, max;    /* numbers */
	const char *words[2]; /* K_WORD */
	int unknown;          /* K_WORD */
} keys[] = {
#define AT(field) offsetof(struct elog_settings, field)
	{ "format", K_FORMAT, 0, 0, UINT64_MAX, { NULL }, 0 },
	{ "id", K_ID, AT(id), 0, 0, { NULL }, 0 },
	{ "created_ms", K_TIME, AT(created_ms), 0, UINT64_MAX, { NULL }, 0 },
	{ "segment_bytes",
	  K_U64,
	  AT(segment_bytes),
	  ELOG_SEGMENT_BYTES_MIN,
	  ELOG_SEGMENT_BYTES_MAX,
	  { NULL },
	  0 },
	{ "index_interval",
	  K_U32,
	  AT(index_interval),
	  ELOG_INDEX_INTERVAL_MIN,
	  ELOG_INDEX_INTERVAL_MAX,
	  { NULL },
	  0 },
	{ "retain_ms", K_U64, AT(retain_ms), 0, UINT64_MAX, { NULL }, 0 },
	{ "retain_bytes", K_U64, AT(retain_bytes), 0, UINT64_MAX, { NULL }, 0 },
	/* A codec this version does not know is a newer format. */
	{ "compression", K_WORD, AT(compression), 0, 0, { "none", "zstd" }, ELOG_BADVERSION },
	{ "compression_level", K_INT, AT(compression_level), 0, 19, { NULL }, 0 },
	{ "dictionary", K_WORD, AT(no_dictionary), 0, 0, { "auto", "none" }, ELOG_CORRUPT },
	/* A policy this version does not know is a newer format: retention
	 * must not remove what it would keep. */
	{ "retain_consumers",
	  K_WORD,
	  AT(retain_consumers),
	  0,
	  0,
	  { "report", "protect" },
	  ELOG_BADVERSION },
	/* A policy this version does not know is a newer one, which it must
	 * not apply by guessing. */
	{ "cleanup", K_CHOICE, AT(cleanup), 0, 0, { "delete", "compact" }, ELOG_BADVERSION },
#undef AT
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* The words of "compression" and "retain_consumers" are their fields'
 * values, those of "cleanup" one more than its field's. */
_Static_assert(ELOG_COMPRESS_NONE == 0 && ELOG_COMPRESS_ZSTD == 1,
               "compression words out of step with ELOG_COMPRESS_*");
_Static_assert(ELOG_RETAIN_CONSUMERS_REPORT == 0 && ELOG_RETAIN_CONSUMERS_PROTECT == 1,
               "retain_consumers words out of step with ELOG_RETAIN_CONSUMERS_*");
_Static_assert(ELOG_CLEANUP_DELETE == 1 && ELOG_CLEANUP_COMPACT == 2,
               "cleanup words out of step with ELOG_CLEANUP_*");

/* The key named by the kn bytes at name, or NULL for one this version does
 * not know. */
static const struct key *key_find(const char *name, size_t kn)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strlen(keys[i].name) == kn && memcmp(keys[i].name, name, kn) == 0)
			return &keys[i];
	return NULL;
}

/* The value of key k, vn bytes at val: an id or a word into s, a number
 * into *num (kept once the whole file is checked). */
static int value_read(const struct key *k, const char *val, size_t vn, struct elog_settings *s,
                      uint64_t *num)
{
	switch (k->kind) {
	case K_ID:
		if (!is_hex_id(val, vn))
			return ELOG_CORRUPT;
		memcpy(s->id, val, 32);
		s->id[32] = '\0';
		return 0;
	case K_WORD:
	case K_CHOICE:
		for (int i = 0; i < 2; i++)
			if (strlen(k->words[i]) == vn && memcmp(val, k->words[i], vn) == 0) {
				*(int *)((char *)s + k->at) = k->kind == K_CHOICE ? i + 1 : i;
				return 0;
			}
		return k->unknown;
	default:
		return parse_u64(val, vn, num) < 0 ? ELOG_CORRUPT : 0;
	}
}

/* Keep the number v, within k's range, in its field of s. */
static void number_store(const struct key *k, uint64_t v, struct elog_settings *s)
{
	void *f = (char *)s + k->at;

	switch (k->kind) {
	case K_TIME:
		*(int64_t *)f = v > INT64_MAX ? INT64_MAX : (int64_t)v;
		break;
	case K_U64:
		*(uint64_t *)f = v;
		break;
	case K_U32:
		*(uint32_t *)f = (uint32_t)v;
		break;
	case K_INT:
		*(int *)f = (int)v;
		break;
	default:
		break;
	}
}

int elog__settings_parse(const char *text, size_t len, struct elog_settings *s)
{
	uint64_t num[NKEYS] = { 0 }; /* the numbers, by key */
	const char *p = text, *end = text + len, *le;
	int err;

	memset(s, 0, sizeof *s);
	for (; p < end; p = le + 1) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		le = nl ? nl : end;
		if (le == p || *p == '#')
			continue;
		const char *sp = memchr(p, ' ', (size_t)(le - p));
		if (!sp)
			return ELOG_CORRUPT;
		const struct key *k = key_find(p, (size_t)(sp - p));
		if (k &&
		    (err = value_read(k, sp + 1, (size_t)(le - sp - 1), s, &num[k - keys])) != 0)
			return err;
	}
	/* keys[0] is the format. */
	if (num[0] != SETTINGS_FORMAT && num[0] != SETTINGS_FORMAT_1)
		return num[0] ? ELOG_BADVERSION : ELOG_CORRUPT;
	s->format = (unsigned)num[0];
	if (s->id[0] == '\0')
		return ELOG_CORRUPT;
	for (size_t i = 0; i < NKEYS; i++) {
		if (keys[i].kind == K_CHOICE && *(int *)((char *)s + keys[i].at) == 0)
			*(int *)((char *)s + keys[i].at) = 1;
		if (keys[i].kind < K_TIME)
			continue;
		if (num[i] < keys[i].min || num[i] > keys[i].max)
			return ELOG_CORRUPT;
		number_store(&keys[i], num[i], s);
	}
	return 0;
}

size_t elog__settings_format(const struct elog_settings *s, char *buf)
{
	size_t n = 0;

	/* Every key and value together take far less than SETTINGS_MAX. */
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		const void *f = (const char *)s + k->at;
		char num[24];
		const char *v = num;

		switch (k->kind) {
		case K_FORMAT:
			snprintf(num, sizeof num, "%u", SETTINGS_FORMAT);
			break;
		case K_ID:
			v = s->id;
			break;
		case K_WORD:
			v = k->words[*(const int *)f == 1];
			break;
		case K_CHOICE:
			v = k->words[*(const int *)f == 2];
			break;
		case K_TIME:
			snprintf(num, sizeof num, "%lld", (long long)*(const int64_t *)f);
			break;
		case K_U64:
			snprintf(num, sizeof num, "%llu", (unsigned long long)*(const uint64_t *)f);
			break;
		case K_U32:
			snprintf(num, sizeof num, "%u", (unsigned)*(const uint32_t *)f);
			break;
		case K_INT:
			snprintf(num, sizeof num, "%d", *(const int *)f);
			break;
		}
		n += (size_t)snprintf(buf + n, SETTINGS_MAX - n, "%s %s\n", k->name, v);
	}
	return n;
}

int elog__settings_load(int dfd, struct elog_settings *s, char *msg)
{
	char *text;
	size_t len;
	int err = elog__fs_read_small(dfd, FN_SETTINGS, SETTINGS_MAX, &text, &len);
	if (err == ENOENT)
		return elog__errmsg_set(msg, ELOG_NOTLOG, "not an elog directory (no %s file)",
		                        FN_SETTINGS);
	if (err == EFBIG)
		return elog__errmsg_set(msg, ELOG_CORRUPT, "%s: larger than %u bytes", FN_SETTINGS,
		                        SETTINGS_MAX);
	if (err)
		return elog__errmsg_set(msg, err, "%s: %s", FN_SETTINGS, elog_strerror(err));
	err = elog__settings_parse(text, len, s);
	free(text);
	if (err == ELOG_BADVERSION)
		return elog__errmsg_set(msg, err, "%s: unsupported format version", FN_SETTINGS);
	if (err)
		return elog__errmsg_set(msg, err, "%s: malformed settings", FN_SETTINGS);
	return 0;
}

int elog__settings_store(int dfd, const struct elog_settings *s)
{
	char buf[SETTINGS_MAX];
	size_t n = elog__settings_format(s, buf);
	return elog__fs_replace_file(dfd, FN_SETTINGS, buf, n);
}

int elog__settings_upgrade(int dfd, struct elog_settings *s, int locked, int64_t wait_ms, int *done,
                           char *msg)
{
	int lockfd = -1, err = 0;
	*done = 0;
	if (s->format >= SETTINGS_FORMAT)
		return 0;
	/* Under the maintenance lock, as every change of the settings,
	 * read again under it. */
	if (!locked && (err = elog__maint_lock(dfd, wait_ms, &lockfd, msg)) != 0)
		return err;
	if ((err = elog__settings_load(dfd, s, msg)) == 0 && s->format < SETTINGS_FORMAT) {
		if ((err = elog__settings_store(dfd, s)) != 0)
			err = elog__errmsg_set(msg, err, "%s: %s", FN_SETTINGS, elog_strerror(err));
		else
			*done = 1;
	}
	if (!err)
		s->format = SETTINGS_FORMAT;
	if (lockfd >= 0)
		close(lockfd);
	return err;
}

int elog__settings_new_id(char id[33])
{
	unsigned char raw[16];
	int err = elog__fs_random(raw, sizeof raw);
	if (err)
		return err;
	for (int i = 0; i < 16; i++)
		snprintf(id + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

int elog__settings_open(const char *dir, int *dfd, struct elog_settings *s, char *msg)
{
	*dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dfd < 0)
		return elog__errmsg_set(msg, errno, "%s", elog_strerror(errno));
	int err = elog__settings_load(*dfd, s, msg);
	if (err) {
		close(*dfd);
		*dfd = -1;
	}
	return err;
}

int elog_settings_read(const char *dir, struct elog_settings *s, char *msg)
{
	char local[ELOG_MSG_MAX];
	int dfd, err;
	if (!msg)
		msg = local;
	msg[0] = '\0';
	if ((err = elog__settings_open(dir, &dfd, s, msg)) == 0)
		close(dfd);
	return err;
}

/* 0 when cleanup is ELOG_CLEANUP_DELETE or _COMPACT, else ELOG_INVALID. */
static int cleanup_check(int cleanup, char *msg)
{
	if (cleanup == ELOG_CLEANUP_DELETE || cleanup == ELOG_CLEANUP_COMPACT)
		return 0;
	return elog__errmsg_set(msg, ELOG_INVALID,
	                        "cleanup must be ELOG_CLEANUP_DELETE "
	                        "or ELOG_CLEANUP_COMPACT, not %d",
	                        cleanup);
}

static const char *cleanup_word(int cleanup)
{
	return cleanup == ELOG_CLEANUP_COMPACT ? "compact" : "delete";
}

/* The rules of creation for the settings s, completing its zstd level (0:
 * the codec's default). */
static int settings_check(struct elog_settings *s, char *msg)
{
	int err = elog__codec_settings_check(s, msg);
	if (err)
		return err;
	if ((err = cleanup_check(s->cleanup, msg)) != 0)
		return err;
	if (s->segment_bytes < ELOG_SEGMENT_BYTES_MIN || s->segment_bytes > ELOG_SEGMENT_BYTES_MAX)
		return elog__errmsg_set(msg, ELOG_INVALID,
		                        "segment size must be between %llu and %llu bytes",
		                        ELOG_SEGMENT_BYTES_MIN, ELOG_SEGMENT_BYTES_MAX);
	if (s->index_interval < ELOG_INDEX_INTERVAL_MIN ||
	    s->index_interval > ELOG_INDEX_INTERVAL_MAX)
		return elog__errmsg_set(msg, ELOG_INVALID,
		                        "index interval must be between %u and %u bytes",
		                        ELOG_INDEX_INTERVAL_MIN, ELOG_INDEX_INTERVAL_MAX);
	return 0;
}

int elog__opt_check(const struct elog_options *opt, struct elog_settings *s, char *msg)
{
	s->segment_bytes = opt && opt->segment_bytes ? opt->segment_bytes : DEFAULT_SEGMENT_BYTES;
	s->index_interval = opt && opt->index_interval ? opt->index_interval
	                                               : DEFAULT_INDEX_INTERVAL;
	s->retain_ms = opt ? opt->retain_ms : 0;
	s->retain_bytes = opt ? opt->retain_bytes : 0;
	s->compression = opt ? opt->compression : ELOG_COMPRESS_NONE;
	s->compression_level = opt ? opt->compression_level : 0;
	s->no_dictionary = opt ? opt->no_dictionary != 0 : 0;
	s->retain_consumers = opt && opt->retain_consumers == ELOG_RETAIN_CONSUMERS_PROTECT
	                              ? ELOG_RETAIN_CONSUMERS_PROTECT
	                              : ELOG_RETAIN_CONSUMERS_REPORT;
	/* Delete unless compaction is asked for: a log whose keys only
	 * filter must never lose records to a blanket compaction run. */
	s->cleanup = opt && opt->cleanup ? opt->cleanup : ELOG_CLEANUP_DELETE;
	return settings_check(s, msg);
}

/* ELOG_SETTING when a number given (non-zero) differs from the log's. */
static int number_differs(uint64_t given, uint64_t stored, const char *what, const char *unit,
                          char *msg)
{
	if (!given || given == stored)
		return 0;
	return elog__errmsg_set(msg, ELOG_SETTING, "the log's %s is %llu %s, not %llu", what,
	                        (unsigned long long)stored, unit, (unsigned long long)given);
}

int elog__settings_check_options(const struct elog_settings *s, const struct elog_options *opt,
                                 char *msg)
{
	int err;
	if (!opt)
		return 0;
	/* Only what was given is compared: zero means "the log's". */
	if ((err = number_differs(opt->segment_bytes, s->segment_bytes, "segment size", "bytes",
	                          msg)) != 0 ||
	    (err = number_differs(opt->index_interval, s->index_interval, "index interval", "bytes",
	                          msg)) != 0 ||
	    (err = number_differs(opt->retain_ms, s->retain_ms, "retention age", "ms", msg)) != 0 ||
	    (err = number_differs(opt->retain_bytes, s->retain_bytes, "retention size", "bytes",
	                          msg)) != 0)
		return err;
	if (opt->compression != ELOG_COMPRESS_NONE && opt->compression != s->compression)
		return elog__errmsg_set(msg, ELOG_SETTING, "the log is not compressed");
	if (opt->compression != ELOG_COMPRESS_NONE && opt->compression_level &&
	    opt->compression_level != s->compression_level)
		return elog__errmsg_set(msg, ELOG_SETTING, "the log's zstd level is %d, not %d",
		                        s->compression_level, opt->compression_level);
	if (opt->no_dictionary && !s->no_dictionary)
		return elog__errmsg_set(msg, ELOG_SETTING, "the log trains a dictionary");
	if (opt->cleanup && cleanup_check(opt->cleanup, msg) != 0)
		return ELOG_INVALID;
	if (opt->cleanup && opt->cleanup != s->cleanup)
		return elog__errmsg_set(msg, ELOG_SETTING, "the log's cleanup is %s, not %s",
		                        cleanup_word(s->cleanup), cleanup_word(opt->cleanup));
	return 0;
}

int elog_settings_update(const char *dir, const struct elog_settings *opt, unsigned fields,
                         int64_t wait_ms, char *msg)
{
	char local[ELOG_MSG_MAX];
	struct elog_settings s;
	int lockfd = -1, err;
	int64_t ms;

	if (!msg)
		msg = local;
	msg[0] = '\0';
	if ((err = elog__wait_ms(wait_ms, 0, &ms, msg)) != 0)
		return err;
	int dfd;
	if ((err = elog__settings_open(dir, &dfd, &s, msg)) != 0)
		return err;
	/* The maintenance lock keeps two updates from losing one another,
	 * and a compaction or retention run from reading half of one. */
	if ((err = elog__maint_lock(dfd, ms, &lockfd, msg)) != 0 ||
	    (err = elog__settings_load(dfd, &s, msg)) != 0)
		goto out;
	if (fields & ELOG_SET_SEGMENT_BYTES)
		s.segment_bytes = opt->segment_bytes;
	if (fields & ELOG_SET_INDEX_INTERVAL)
		s.index_interval = opt->index_interval;
	if (fields & ELOG_SET_RETAIN_MS)
		s.retain_ms = opt->retain_ms;
	if (fields & ELOG_SET_RETAIN_BYTES)
		s.retain_bytes = opt->retain_bytes;
	if (fields & ELOG_SET_COMPRESSION) {
		/* Each segment records its codec: a writer continues that of
		 * the segment it appends to, and starts new segments with the
		 * settings' codec, so a change applies from the next segment
		 * on and old segments read as they are. */
		s.compression = opt->compression;
		s.compression_level = opt->compression_level;
	}
	if (fields & ELOG_SET_DICTIONARY)
		s.no_dictionary = opt->no_dictionary != 0;
	if (fields & ELOG_SET_RETAIN_CONSUMERS)
		s.retain_consumers = opt->retain_consumers;
	/* The policy is read by each compaction run under this lock, so it
	 * holds from the next run.  0 ("not given") is no policy to set. */
	if (fields & ELOG_SET_CLEANUP)
		s.cleanup = opt->cleanup;
	/* The rules of creation: a size of 0 is none, a zstd level of 0 the
	 * default level. */
	if ((err = settings_check(&s, msg)) != 0)
		goto out;
	if ((err = elog__settings_store(dfd, &s)) != 0)
		err = elog__errmsg_set(msg, err, "%s: %s", FN_SETTINGS, elog_strerror(err));
out:
	if (lockfd >= 0)
		close(lockfd);
	close(dfd);
	return err;
}
