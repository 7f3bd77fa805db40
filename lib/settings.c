/*
 * settings.c: the per-log settings file, written once when the log is
 * created.  It is text, one "key value" pair per line, so that a person can
 * read it with cat(1):
 *
 *   format 1
 *   id 6f1c0e4e9a2b4d7f8e3a5b6c7d8e9f01
 *   created_ms 1764385200000
 *   segment_bytes 67108864
 *   index_interval 4096
 *   retain_ms 0
 *   retain_bytes 0
 *   compression zstd
 *   compression_level 3
 *   dictionary auto
 *
 * Unknown keys are ignored so that a later version can add some; a format
 * number other than 1 is refused.
 *
 * Creation options given again when an existing log is opened must agree
 * with what is stored (settings_check_options()); the settings change only
 * through elog_settings_update(), which replaces the file under the
 * maintenance lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "internal.h"

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

int settings_parse(const char *text, size_t len, struct elog_settings *s)
{
	uint64_t format = 0, v;
	int have_id = 0;
	memset(s, 0, sizeof *s);
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *sp = memchr(p, ' ', (size_t)(le - p));
		if (le == p || *p == '#') {
			p = le + 1;
			continue;
		}
		if (!sp)
			return ELOG_CORRUPT;
		size_t kn = (size_t)(sp - p), vn = (size_t)(le - sp - 1);
		const char *val = sp + 1;
#define KEY(k) (kn == sizeof(k) - 1 && memcmp(p, k, kn) == 0)
		if (KEY("id")) {
			if (!is_hex_id(val, vn))
				return ELOG_CORRUPT;
			memcpy(s->id, val, 32);
			s->id[32] = '\0';
			have_id = 1;
		} else if (KEY("compression")) {
			if (vn == 4 && memcmp(val, "none", 4) == 0)
				s->compression = ELOG_COMPRESS_NONE;
			else if (vn == 4 && memcmp(val, "zstd", 4) == 0)
				s->compression = ELOG_COMPRESS_ZSTD;
			else
				return ELOG_VERSION;	/* a codec we do not know */
		} else if (KEY("dictionary")) {
			if (vn == 4 && memcmp(val, "auto", 4) == 0)
				s->no_dictionary = 0;
			else if (vn == 4 && memcmp(val, "none", 4) == 0)
				s->no_dictionary = 1;
			else
				return ELOG_CORRUPT;
		} else if (KEY("format") || KEY("created_ms") || KEY("segment_bytes") ||
		           KEY("index_interval") || KEY("retain_ms") || KEY("retain_bytes") ||
		           KEY("compression_level")) {
			if (parse_u64(val, vn, &v) < 0)
				return ELOG_CORRUPT;
			if (KEY("format"))
				format = v;
			else if (KEY("created_ms"))
				s->created_ms = v > INT64_MAX ? INT64_MAX : (int64_t)v;
			else if (KEY("segment_bytes"))
				s->segment_bytes = v;
			else if (KEY("index_interval"))
				s->index_interval = v > UINT32_MAX ? 0 : (uint32_t)v;
			else if (KEY("retain_ms"))
				s->retain_ms = v;
			else if (KEY("compression_level"))
				s->compression_level = v > 19 ? -1 : (int)v;
			else
				s->retain_bytes = v;
		}
#undef KEY
		p = le + 1;
	}
	if (format != SETTINGS_FORMAT)
		return format ? ELOG_VERSION : ELOG_CORRUPT;
	if (!have_id || s->segment_bytes < MIN_SEGMENT_BYTES ||
	    s->segment_bytes > MAX_SEGMENT_BYTES ||
	    s->index_interval < MIN_INDEX_INTERVAL ||
	    s->index_interval > MAX_INDEX_INTERVAL || s->compression_level < 0)
		return ELOG_CORRUPT;
	return 0;
}

size_t settings_format(const struct elog_settings *s, char *buf)
{
	int n = snprintf(buf, SETTINGS_MAX,
	    "format %u\nid %s\ncreated_ms %lld\nsegment_bytes %llu\n"
	    "index_interval %u\nretain_ms %llu\nretain_bytes %llu\n"
	    "compression %s\ncompression_level %d\ndictionary %s\n",
	    SETTINGS_FORMAT, s->id, (long long)s->created_ms,
	    (unsigned long long)s->segment_bytes, s->index_interval,
	    (unsigned long long)s->retain_ms, (unsigned long long)s->retain_bytes,
	    s->compression == ELOG_COMPRESS_ZSTD ? "zstd" : "none", s->compression_level,
	    s->no_dictionary ? "none" : "auto");
	return (size_t)n;
}

int settings_load(int dfd, struct elog_settings *s, char *msg)
{
	char *text;
	size_t len;
	int err = fs_read_small(dfd, FN_SETTINGS, SETTINGS_MAX, &text, &len);
	if (err == ENOENT)
		return errmsg_set(msg, ELOG_NOTLOG, "not an elog directory (no %s file)",
		                  FN_SETTINGS);
	if (err == EFBIG)
		return errmsg_set(msg, ELOG_CORRUPT, "%s: larger than %u bytes",
		                  FN_SETTINGS, SETTINGS_MAX);
	if (err)
		return errmsg_set(msg, err, "%s: %s", FN_SETTINGS, strerror(err));
	err = settings_parse(text, len, s);
	free(text);
	if (err == ELOG_VERSION)
		return errmsg_set(msg, err, "%s: unsupported format version", FN_SETTINGS);
	if (err)
		return errmsg_set(msg, err, "%s: malformed settings", FN_SETTINGS);
	return 0;
}

int settings_store(int dfd, const struct elog_settings *s)
{
	char buf[SETTINGS_MAX];
	size_t n = settings_format(s, buf);
	return fs_replace_file(dfd, FN_SETTINGS, buf, n);
}

int settings_new_id(char id[33])
{
	unsigned char raw[16];
	int err = fs_random(raw, sizeof raw);
	if (err)
		return err;
	for (int i = 0; i < 16; i++)
		snprintf(id + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

int elog_settings_read(const char *dir, struct elog_settings *s)
{
	char msg[ERRMSG_MAX];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno;
	int err = settings_load(dfd, s, msg);
	close(dfd);
	return err;
}

/* The hint every refusal of a creation option ends with. */
#define SET_HINT "; change the log's settings with elog-retain --set"

int settings_check_options(const struct elog_settings *s,
                           const struct elog_options *opt, char *msg)
{
	if (!opt)
		return 0;
	/* Only what was given is compared: zero means "the log's". */
	if (opt->segment_bytes && opt->segment_bytes != s->segment_bytes)
		return errmsg_set(msg, ELOG_INVALID, "the log's segment size is %llu "
		    "bytes, not %llu" SET_HINT, (unsigned long long)s->segment_bytes,
		    (unsigned long long)opt->segment_bytes);
	if (opt->index_interval && opt->index_interval != s->index_interval)
		return errmsg_set(msg, ELOG_INVALID, "the log's index interval is %u "
		    "bytes, not %u" SET_HINT, s->index_interval, opt->index_interval);
	if (opt->retain_ms && opt->retain_ms != s->retain_ms)
		return errmsg_set(msg, ELOG_INVALID, "the log's retention age is %llu ms, "
		    "not %llu" SET_HINT, (unsigned long long)s->retain_ms,
		    (unsigned long long)opt->retain_ms);
	if (opt->retain_bytes && opt->retain_bytes != s->retain_bytes)
		return errmsg_set(msg, ELOG_INVALID, "the log's retention size is %llu "
		    "bytes, not %llu" SET_HINT, (unsigned long long)s->retain_bytes,
		    (unsigned long long)opt->retain_bytes);
	if (opt->compression != ELOG_COMPRESS_NONE && opt->compression != s->compression)
		return errmsg_set(msg, ELOG_INVALID, "the log is not compressed" SET_HINT);
	if (opt->compression != ELOG_COMPRESS_NONE && opt->compression_level &&
	    opt->compression_level != s->compression_level)
		return errmsg_set(msg, ELOG_INVALID, "the log's zstd level is %d, not %d"
		    SET_HINT, s->compression_level, opt->compression_level);
	if (opt->no_dictionary && !s->no_dictionary)
		return errmsg_set(msg, ELOG_INVALID, "the log trains a dictionary" SET_HINT);
	return 0;
}

int elog_settings_update(const char *dir, const struct elog_options *opt,
                         unsigned fields, char *msg)
{
	char local[ERRMSG_MAX];
	struct elog_settings s, chk;
	int lockfd = -1, err;

	if (!msg)
		msg = local;
	msg[0] = '\0';
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errmsg_set(msg, errno, "%s", strerror(errno));
	/* The maintenance lock keeps two updates from losing one another. */
	if ((err = settings_load(dfd, &s, msg)) != 0 ||
	    (err = lock_take(dfd, FN_MAINT, 1, 1, &lockfd, msg)) != 0 ||
	    (err = settings_load(dfd, &s, msg)) != 0)
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
	/* The rules of creation, defaults included (a zstd level of 0 is
	 * the default level). */
	struct elog_options o = {
		.segment_bytes = s.segment_bytes, .index_interval = s.index_interval,
		.retain_ms = s.retain_ms, .retain_bytes = s.retain_bytes,
		.compression = s.compression, .compression_level = s.compression_level,
		.no_dictionary = s.no_dictionary,
	};
	if ((err = opt_check(&o, &chk, msg)) != 0)
		goto out;
	s.compression_level = chk.compression_level;
	if ((err = settings_store(dfd, &s)) != 0)
		err = errmsg_set(msg, err, "%s: %s", FN_SETTINGS, strerror(err));
out:
	if (lockfd >= 0)
		close(lockfd);
	close(dfd);
	return err;
}
