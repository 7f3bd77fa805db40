/*
 * summary.c: elog-cat -L, one look at a log in the manner of kcat -L:
 * offsets, records, sizes, times, writers, maintenance (with the cleanup
 * policy), compression and consumers, for people or as one JSON object
 * (--json).  The figures come from elog_summary_read() and
 * elog_consumer_list(), which take no lock; elog-cat(1) says what each one
 * means.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cli.h"

/* ---- JSON: members separated by commas as they come ---- */

static int comma;

static void j_open(char c)
{
	cli_putc(c);
	comma = 0;
}

static void j_close(char c)
{
	cli_putc(c);
	comma = 1;
}

static void j_key(const char *k)
{
	if (comma)
		cli_putc(',');
	comma = 1;
	if (k != NULL) {
		cli_json_string(k, strlen(k));
		cli_putc(':');
	}
}

static void j_u64(const char *k, uint64_t v)
{
	j_key(k);
	cli_put_u64(v);
}

static void j_i64(const char *k, int64_t v)
{
	j_key(k);
	cli_put_i64(v);
}

/* The versions whose bit is set in bits (bit v - 1: version v), as a
 * JSON array. */
static void j_versions(const char *k, unsigned bits)
{
	j_key(k);
	j_open('[');
	for (unsigned v = 1; v <= 32; v++)
		if (bits >> (v - 1) & 1)
			j_u64(NULL, v);
	j_close(']');
}

/* The same as text: "1 and 2", or "none". */
static void put_versions(unsigned bits)
{
	const char *sep = "";
	if (!bits)
		cli_puts("none");
	for (unsigned v = 1; v <= 32; v++)
		if (bits >> (v - 1) & 1) {
			cli_printf("%s%u", sep, v);
			sep = " and ";
		}
}

static void j_str(const char *k, const char *v)
{
	j_key(k);
	if (v == NULL)
		cli_puts("null");
	else
		cli_json_string(v, strlen(v));
}

static void j_bool(const char *k, int v)
{
	j_key(k);
	cli_puts(v ? "true" : "false");
}

/* A time as two members: NAME_ms (epoch ms) and NAME (RFC 3339), both
 * null when unknown. */
static void j_time(const char *k, int64_t ms)
{
	char key[64], when[CLI_TIME_MAX];
	int known = ms != INT64_MIN && cli_format_time(ms, when) == 0;

	snprintf(key, sizeof key, "%s_ms", k);
	if (known)
		j_i64(key, ms);
	else
		j_str(key, NULL);
	j_str(k, known ? when : NULL);
}

static void j_pid(const char *k, pid_t pid)
{
	if (pid > 0)
		j_i64(k, pid);
	else
		j_str(k, NULL);
}

/* ---- figures shared by both forms ---- */

/* Stored size over raw size of the sample, or 0 when unknown. */
static double ratio(const struct elog_summary *s)
{
	if (s->settings.compression != ELOG_COMPRESS_ZSTD || s->sample_unknown ||
	    s->sample_stored == 0)
		return 0;
	return (double)s->sample_raw / (double)s->sample_stored;
}

static const char *codec(const struct elog_summary *s)
{
	return s->settings.compression == ELOG_COMPRESS_ZSTD ? "zstd" : "none";
}

/* The cleanup policy, as the settings file and elog-retain --set write it. */
static const char *cleanup(const struct elog_summary *s)
{
	return s->settings.cleanup == ELOG_CLEANUP_COMPACT ? "compact" : "delete";
}

/* Why records is an upper bound: what left holes between offsets. */
static const char *inexact_why(const struct elog_summary *s)
{
	if (s->copy_last_ms == INT64_MIN)
		return " (compacted)";
	return s->compact_last_ms == INT64_MIN ? " (a copy kept offsets with holes)"
	                                       : " (compacted; a copy kept offsets with holes)";
}

static void print_json(const char *dir, const struct elog_summary *s, const struct elog_consumer *c,
                       size_t n)
{
	j_open('{');
	j_str("dir", cli_utf8_valid(dir, strlen(dir)) ? dir : NULL);
	j_str("id", s->settings.id);
	j_time("created", s->settings.created_ms);
	if (s->records) {
		j_u64("first", s->first);
		j_u64("last", s->last);
	} else {
		j_str("first", NULL);
		j_str("last", NULL);
	}
	j_u64("records", s->records);
	j_bool("records_exact", s->records_exact);
	j_time("copy_holes", s->copy_last_ms);
	j_u64("durable_end", s->durable_end);
	j_u64("start", s->start);
	j_u64("format", s->settings.format);
	j_versions("segment_versions", s->segment_versions);
	j_versions("index_versions", s->index_versions);
	j_u64("segments", s->segments);
	j_u64("active_segment", s->active_base);
	j_u64("segment_bytes", s->settings.segment_bytes);
	j_u64("log_bytes", s->log_bytes);
	j_u64("dir_bytes", s->dir_bytes);
	j_u64("disk_bytes", s->disk_bytes);
	j_time("oldest", s->records ? s->oldest_ms : INT64_MIN);
	j_time("newest", s->records ? s->newest_ms : INT64_MIN);
	j_key("writers");
	if (!s->writers_known) {
		cli_puts("null");
	} else {
		j_open('[');
		for (size_t i = 0; i < s->nwriters; i++)
			j_i64(NULL, s->writers[i]);
		j_close(']');
	}
	j_bool("writers_exclusive", s->writers_exclusive);
	j_pid("writing_pid", s->batch_pid);
	j_pid("maintenance_pid", s->maint_pid);
	j_key("retention");
	j_open('{');
	if (s->settings.retain_ms)
		j_u64("max_age_ms", s->settings.retain_ms);
	else
		j_str("max_age_ms", NULL);
	if (s->settings.retain_bytes)
		j_u64("max_bytes", s->settings.retain_bytes);
	else
		j_str("max_bytes", NULL);
	j_time("last_run", s->retain_last_ms);
	j_close('}');
	j_key("compaction");
	j_open('{');
	j_str("cleanup", cleanup(s));
	j_time("last_run", s->compact_last_ms);
	j_close('}');
	j_key("compression");
	j_open('{');
	j_str("codec", codec(s));
	if (s->settings.compression == ELOG_COMPRESS_ZSTD)
		j_i64("level", s->settings.compression_level);
	else
		j_str("level", NULL);
	j_key("ratio");
	if (ratio(s) > 0)
		cli_printf("%.2f", ratio(s));
	else
		cli_puts("null");
	j_u64("sample_bytes", s->sample_stored);
	j_close('}');
	j_bool("damaged", s->damaged);
	j_u64("lost", s->lost);
	j_u64("pending", s->pending);
	j_bool("pending_cut", s->pending_cut);
	j_key("consumers");
	j_open('[');
	for (size_t i = 0; i < n; i++) {
		j_key(NULL);
		j_open('{');
		j_str("name", c[i].name);
		if (c[i].uncommitted)
			j_str("offset", NULL);
		else
			j_u64("offset", c[i].offset);
		j_u64("next", c[i].next);
		j_u64("lag", c[i].lag);
		j_u64("lost", c[i].lost);
		if (c[i].lost) {
			j_u64("lost_first", c[i].lost_first);
			j_u64("lost_last", c[i].lost_last);
		}
		j_time("committed", c[i].uncommitted ? INT64_MIN : c[i].committed_ms);
		if (c[i].uncommitted)
			j_time("created", c[i].committed_ms);
		j_close('}');
	}
	j_close(']');
	j_close('}');
	cli_putc('\n');
}

const char *cli_pending_text(const struct elog_summary *s, char *buf, size_t size)
{
	buf[0] = '\0';
	if (s->pending > 0)
		snprintf(buf, size,
		         "%" PRIu64 " whole record%s past the durable end, written by a writer "
		         "that is gone; the next writer %s %s%s",
		         s->pending, s->pending == 1 ? "" : "s",
		         s->pending_cut ? "cuts" : "publishes", s->pending == 1 ? "it" : "them",
		         s->pending_cut ? " (a sync failed)" : "");
	return buf;
}

/* ---- for people: a label in 13 columns, then its figures ---- */

static const char *when(int64_t ms, char buf[CLI_TIME_MAX + 24])
{
	char t[CLI_TIME_MAX];

	if (ms == INT64_MIN)
		return "never";
	if (cli_format_time(ms, t) < 0)
		snprintf(buf, CLI_TIME_MAX + 24, "@%" PRId64, ms);
	else
		snprintf(buf, CLI_TIME_MAX + 24, "%s (@%" PRId64 ")", t, ms);
	return buf;
}

/* The pids, on one line of at most about 250 columns. */
static void print_pids(const pid_t *p, size_t n, int exclusive)
{
	int len = 0;

	cli_puts("  writers      ");
	if (n == 0)
		cli_puts("none");
	for (size_t i = 0; i < n && len < 256 - 24; i++)
		len += cli_printf("%s%ld", i ? " " : "", (long)p[i]);
	if (exclusive)
		cli_puts(" (exclusive: other writers are refused)");
	cli_putc('\n');
}

static void print_retention(const struct elog_summary *s)
{
	char size[CLI_SIZE_MAX], age[CLI_DURATION_MAX];

	cli_format_duration(s->settings.retain_ms, age);
	cli_format_size(s->settings.retain_bytes, size);
	if (s->settings.retain_ms && s->settings.retain_bytes)
		cli_printf("  retention    max age %s, max size %s\n", age, size);
	else if (s->settings.retain_ms)
		cli_printf("  retention    max age %s\n", age);
	else if (s->settings.retain_bytes)
		cli_printf("  retention    max size %s\n", size);
	else
		cli_puts("  retention    no stored policy\n");
}

static void print_compression(const struct elog_summary *s)
{
	if (s->settings.compression == ELOG_COMPRESS_ZSTD && ratio(s) > 0)
		cli_printf("  compression  zstd level %d, ratio %.2f (newest records)\n",
		           s->settings.compression_level, ratio(s));
	else if (s->settings.compression == ELOG_COMPRESS_ZSTD)
		cli_printf("  compression  zstd level %d, ratio unknown\n",
		           s->settings.compression_level);
	else
		cli_puts("  compression  none\n");
}

static void print_consumer(const struct elog_consumer *c)
{
	char t[CLI_TIME_MAX + 24];

	if (c->uncommitted)
		cli_printf("    %s: not yet committed, from offset %" PRIu64 ", lag %" PRIu64, c->name,
		           c->next, c->lag);
	else
		cli_printf("    %s: offset %" PRIu64 ", lag %" PRIu64, c->name, c->offset, c->lag);
	if (c->lost)
		cli_printf(", LOST %" PRIu64 " to retention (offsets %" PRIu64 "-%" PRIu64 ")",
		           c->lost, c->lost_first, c->lost_last);
	cli_printf(", %s %s\n", c->uncommitted ? "created" : "committed", when(c->committed_ms, t));
}

static void print_text(const char *dir, const struct elog_summary *s, const struct elog_consumer *c,
                       size_t n)
{
	char a[CLI_SIZE_MAX], b[CLI_SIZE_MAX], d[CLI_SIZE_MAX];
	char t[CLI_TIME_MAX + 24], pending[200];

	cli_printf("log %s (id %s)\n", dir, s->settings.id);
	if (s->records)
		cli_printf("  offsets      %" PRIu64 "..%" PRIu64 ", %s%" PRIu64 " records%s\n",
		           s->first, s->last, s->records_exact ? "" : "at most ", s->records,
		           s->records_exact ? "" : inexact_why(s));
	else
		cli_puts("  offsets      none, 0 records\n");
	cli_printf("  durable end  %" PRIu64 "\n", s->durable_end);
	if (s->pending > 0)
		cli_printf("  pending      %s\n", cli_pending_text(s, pending, sizeof pending));
	cli_format_size(s->log_bytes, a);
	cli_format_size(s->dir_bytes, b);
	cli_format_size(s->disk_bytes, d);
	cli_printf("  size         %s in segments, %s in all files, %s on disk\n", a, b, d);
	cli_format_size(s->settings.segment_bytes, a);
	cli_printf("  segments     %" PRIu64 ", active %020" PRIu64 ", rolled at %s\n", s->segments,
	           s->active_base, a);
	cli_printf("  format       %u: segments of version ", s->settings.format);
	put_versions(s->segment_versions);
	cli_puts(", indexes of version ");
	put_versions(s->index_versions);
	cli_putc('\n');
	cli_printf("  oldest       %s\n", s->records ? when(s->oldest_ms, t) : "-");
	cli_printf("  newest       %s\n", s->records ? when(s->newest_ms, t) : "-");
	if (s->writers_known)
		print_pids(s->writers, s->nwriters, s->writers_exclusive);
	else
		cli_puts("  writers      unknown (no /proc/locks)\n");
	if (s->batch_pid > 0)
		cli_printf("  writing now  %ld\n", (long)s->batch_pid);
	if (s->maint_pid > 0)
		cli_printf("  maintenance  running, pid %ld\n", (long)s->maint_pid);
	print_retention(s);
	cli_printf("    last run   %s\n", when(s->retain_last_ms, t));
	cli_printf("  compaction   %s (cleanup %s), last run %s\n",
	           s->settings.cleanup == ELOG_CLEANUP_COMPACT ? "on" : "off", cleanup(s),
	           when(s->compact_last_ms, t));
	print_compression(s);
	if (s->lost)
		cli_printf("  lost         %" PRIu64 " offsets to damage: run elog-verify\n",
		           s->lost);
	if (s->damaged)
		cli_puts("  damage       found in what was read: run elog-verify\n");
	cli_printf("  consumers    %zu\n", n);
	for (size_t i = 0; i < n; i++)
		print_consumer(&c[i]);
}

noreturn void cli_summary(const char *dir, int json)
{
	char msg[ELOG_MSG_MAX];
	struct elog_summary s;
	struct elog_consumer *c;
	size_t n;
	int rc;

	if ((rc = elog_summary_read(dir, &s, msg)) != 0)
		cli_die_elog(dir, rc, msg);
	if ((rc = elog_consumer_list(dir, &c, &n, msg)) != 0)
		cli_die_elog(dir, rc, msg);
	if (json)
		print_json(dir, &s, c, n);
	else
		print_text(dir, &s, c, n);
	free(c);
	elog_summary_free(&s);
	cli_exit(CLI_EX_OK);
}
