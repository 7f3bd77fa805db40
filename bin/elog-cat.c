/*
 * elog-cat: print the records of a log, oldest first, as JSON lines, in a
 * format of the user's or as raw values; with -f, keep printing new records
 * as they become durable.  See elog-cat(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
        "usage: elog-cat [-f | --follow=name] [-F format | -v]\n"
        "                [-o position | -n count | --since time | -g name]\n"
        "                [-c count] [-k key] [--until time] [--reverse]\n"
        "                [--idle duration] [--existing] [--strict] dir\n"
        "       elog-cat -L [--json] dir\n"
        "       elog-cat -h | --help | --version\n"
        "\n"
        "  -f, --follow               after the end, wait for new records\n"
        "  --follow=name              follow the name: a new log of it, or one to come\n"
        "  -F, --format format        print records in this format (%o %k %s %T ...)\n"
        "  -v, --values               print values only, one per line\n"
        "  -o, --offset position      start at beginning, end, offset N, or -N\n"
        "  -n, --last count           the last count records (of the window)\n"
        "  --since time               only the records stamped at or after time\n"
        "  -g, --group name           start after consumer name's committed offset\n"
        "  -c, --count count          stop after count records\n"
        "  -k, --key key              print only the records with this key\n"
        "  --until time               only the records stamped at or before time\n"
        "  --reverse                  newest first, back to the first record\n"
        "  --idle duration            with -f: exit after duration without a record\n"
        "  --existing                 with -g: refuse a consumer that never committed\n"
        "  --strict                   a gap in the offsets is an error\n"
        "  -L, --list                 print a summary of the log instead\n"
        "  --json                     with -L: the summary as JSON\n"
        "  -h, --help                 print this help and exit\n"
        "  --version                  print the version and exit\n";

/* How long a follower sleeps at most before it looks again by itself, in
 * case a wake-up from the library were ever missed. */
#define FOLLOW_TIMEOUT_MS 1000

/* -f --until T ends once the clock has passed T by this much: a record
 * the writer stamped at T or before is durable by then, unless its writer
 * lingers or waits for the lock longer than elog-append does by default
 * (--wait 10s).  elog-cat(1) says so. */
#define UNTIL_GRACE_MS 10000

enum { OPT_SINCE = 256, OPT_UNTIL, OPT_STRICT, OPT_JSON, OPT_REVERSE, OPT_IDLE, OPT_EXISTING };

static const struct option long_options[] = {
	{ "format", required_argument, NULL, 'F' },
	{ "values", no_argument, NULL, 'v' },
	{ "offset", required_argument, NULL, 'o' },
	{ "last", required_argument, NULL, 'n' },
	{ "count", required_argument, NULL, 'c' },
	{ "key", required_argument, NULL, 'k' },
	{ "group", required_argument, NULL, 'g' },
	{ "follow", optional_argument, NULL, 'f' },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "idle", required_argument, NULL, OPT_IDLE },
	{ "existing", no_argument, NULL, OPT_EXISTING },
	{ "list", no_argument, NULL, 'L' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, CLI_OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* Where reading starts. */
enum start { START_BEGIN, START_END, START_OFFSET, START_LAST, START_TIME, START_GROUP };

/* One piece of a -F format: literal text or a field of the record. */
enum piece {
	P_TEXT,
	P_OFFSET,
	P_KEY,
	P_VALUE,
	P_TS,
	P_TS_RFC3339,
	P_VALUE_SIZE,
	P_KEY_SIZE,
	P_SCHEMA
};

struct format {
	struct fpiece {
		enum piece kind;
		size_t from, len; /* P_TEXT: a range of text */
	} * pieces;
	size_t n;
	char *text; /* the literal parts, escapes resolved */
};

/* What the command line asks for. */
struct opts {
	enum { OUT_JSON, OUT_FORMAT, OUT_VALUES } out;
	struct format fmt;
	const char *fmt_arg; /* -F's argument */
	enum start start;
	const char *start_opt; /* the option that chose start, for messages */
	uint64_t start_arg;    /* START_OFFSET: offset; START_LAST: count */
	int since_set;         /* --since, which may go with -n */
	int64_t since;
	const char *since_arg; /* as given, for messages */
	const char *group;     /* START_GROUP: the consumer's name */
	int until_set;
	int64_t until;
	const char *until_arg;
	int count_set;
	uint64_t count;
	const char *key;
	size_t key_len;
	int follow;
	int follow_name; /* --follow=name: a new log of the name */
	int strict;
	int reverse;  /* --reverse */
	int idle_set; /* --idle */
	uint64_t idle_ms;
	int existing;    /* --existing */
	int summary;     /* -L */
	int json;        /* --json, with -L */
	int reading;     /* an option about reading records was given */
	const char *dir; /* the operand: the log directory */
};

/* The log directory being read, as it was when opened, and a descriptor
 * of it: a follower notices when it is removed (its link count drops to
 * zero, even if a new directory of the name reuses its inode number) or
 * the name comes to mean another directory. */
static struct stat log_st;
static int log_fd = -1;

/* How often a follower by name looks for a log that is not there. */
#define REOPEN_MS 250

/* Set by SIGINT and SIGTERM while following. */
static volatile sig_atomic_t stop_requested;

/* Set when a record had the key of -k. */
static int key_matched;

static void add_piece(struct format *f, enum piece kind, size_t from, size_t len)
{
	/* Merge adjacent text, so "\t\t" costs one write per record. */
	if (kind == P_TEXT && f->n > 0 && f->pieces[f->n - 1].kind == P_TEXT) {
		f->pieces[f->n - 1].len += len;
		return;
	}
	f->pieces[f->n++] = (struct fpiece){ kind, from, len };
}

/* Compile a -F format once, so that printing a record is a walk over a
 * short array.  The text can only shrink, and there is at most one piece
 * per character. */
static void compile_format(struct format *f, const char *s)
{
	static const char fields[] = "okTRSKcs";
	static const enum piece kinds[] = { P_OFFSET,     P_KEY,      P_TS,     P_TS_RFC3339,
		                            P_VALUE_SIZE, P_KEY_SIZE, P_SCHEMA, P_VALUE };
	size_t tlen = 0, n = strlen(s);

	f->pieces = cli_realloc(NULL, (n + 1) * sizeof *f->pieces);
	f->text = cli_realloc(NULL, n + 1);
	f->n = 0;
	for (size_t i = 0; i < n; i++) {
		const char *hit;
		char c = s[i];

		if ((c == '%' || c == '\\') && s[i + 1] == '\0')
			cli_usage_error("-F: the format ends in a lone '%c'", c);
		if (c == '%') {
			/* "%%" falls through as a literal '%'. */
			c = s[++i];
			if (c != '%') {
				hit = strchr(fields, c);
				if (hit == NULL)
					cli_usage_error("-F: unknown directive '%%%c'", c);
				add_piece(f, kinds[hit - fields], 0, 0);
				continue;
			}
		} else if (c == '\\') {
			switch (s[++i]) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case '0':
				c = '\0';
				break;
			case '\\':
				c = '\\';
				break;
			default:
				cli_usage_error("-F: unknown escape '\\%c'", s[i]);
			}
		}
		f->text[tlen] = c;
		add_piece(f, P_TEXT, tlen++, 1);
	}
}

static void print_format(const struct format *f, const struct elog_record *rec)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct fpiece *p = &f->pieces[i];

		switch (p->kind) {
		case P_TEXT:
			cli_write(f->text + p->from, p->len);
			break;
		case P_OFFSET:
			cli_put_u64(rec->offset);
			break;
		case P_KEY:
			cli_write(rec->key, rec->key_len);
			break;
		case P_VALUE:
			cli_write(rec->value, rec->value_len);
			break;
		case P_TS:
			cli_put_i64(rec->ts_ms);
			break;
		case P_TS_RFC3339:
			cli_put_time(rec->ts_ms);
			break;
		case P_VALUE_SIZE:
			cli_put_u64(rec->value_len);
			break;
		case P_KEY_SIZE:
			cli_put_u64(rec->key_len);
			break;
		case P_SCHEMA:
			cli_put_u64(rec->schema);
			break;
		}
	}
}

/* A key or value as a JSON member: a string when it is UTF-8 text, else
 * base64 under the name with "_b64" added. */
static void print_member(const char *name, const void *buf, size_t len)
{
	cli_putc(',');
	cli_putc('"');
	cli_puts(name);
	if (cli_utf8_valid(buf, len)) {
		cli_write("\":", 2);
		cli_json_string(buf, len);
	} else {
		cli_write("_b64\":\"", 7);
		cli_base64(buf, len);
		cli_putc('"');
	}
}

/* A value that is a JSON object or array is embedded as JSON, compacted to
 * one line; anything else is printed by print_member().  When compacting
 * changed its bytes (white space between tokens or around the value), the
 * value as stored follows as "value_text", so that elog-append --json puts
 * back the same bytes. */
static void print_value(const struct elog_record *rec)
{
	static char *scratch;
	static size_t scratch_cap;
	const char *v = rec->value;
	size_t i = 0, n;

	while (i < rec->value_len && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r'))
		i++;
	if (i < rec->value_len && (v[i] == '{' || v[i] == '[')) {
		if (scratch_cap < rec->value_len) {
			free(scratch);
			scratch_cap = rec->value_len;
			scratch = cli_realloc(NULL, scratch_cap);
		}
		const char *compact;
		if (cli_json_compact(v, rec->value_len, scratch, &compact, &n) == 0) {
			cli_write(",\"value\":", 9);
			cli_write(compact, n);
			if (compact != v) {
				cli_write(",\"value_text\":", 14);
				cli_json_string(v, rec->value_len);
			}
			return;
		}
	}
	print_member("value", v, rec->value_len);
}

static void print_json(const struct elog_record *rec)
{
	/* The members before the key in one piece of the output buffer. */
	char *o = cli_reserve(10 + 6 + 10 + 11 + 3 * CLI_FMT_MAX);

	memcpy(o, "{\"offset\":", 10);
	o = cli_fmt_u64(o + 10, rec->offset);
	memcpy(o, ",\"ts\":", 6);
	o = cli_fmt_i64(o + 6, rec->ts_ms);
	memcpy(o, ",\"schema\":", 10);
	o = cli_fmt_u64(o + 10, rec->schema);
	if (rec->key_len == 0) {
		memcpy(o, ",\"key\":null", 11);
		o += 11;
	}
	cli_commit(o);
	if (rec->key_len != 0)
		print_member("key", rec->key, rec->key_len);
	print_value(rec);
	cli_write("}\n", 2);
}

static void print_record(const struct opts *o, const struct elog_record *rec)
{
	switch (o->out) {
	case OUT_JSON:
		print_json(rec);
		break;
	case OUT_FORMAT:
		print_format(&o->fmt, rec);
		break;
	case OUT_VALUES:
		cli_write(rec->value, rec->value_len);
		cli_putc('\n');
		break;
	}
}

static int key_matches(const struct opts *o, const struct elog_record *rec)
{
	return rec->key_len == o->key_len && memcmp(rec->key, o->key, o->key_len) == 0;
}

static int in_window(const struct opts *o, const struct elog_record *rec)
{
	return !(o->since_set && rec->ts_ms < o->since) && !(o->until_set && rec->ts_ms > o->until);
}

/* Walking back, a time window is applied here rather than by the reader,
 * so that the walk can stop at the first record, in offset order, stamped
 * at or after --since: no record before it is in the window, and the
 * reader, which does not know where that is, would walk on to the
 * beginning of the log looking for one.  Returns that offset (0 without
 * --since), the window taken off the reader. */
static uint64_t walk_back_floor(elog_reader *r, const char *dir, const struct opts *o)
{
	uint64_t lo = 0;
	int rc;

	elog_reader_window(r, INT64_MIN, INT64_MAX);
	if (o->since_set) {
		if ((rc = elog_reader_seek_time(r, o->since)) != 0)
			cli_die_elog(dir, rc, elog_reader_errmsg(r));
		lo = elog_reader_position(r);
	}
	return lo;
}

/* With --until, the offset just after the last record of the window (of
 * the key, with -k), found by reading the window forward, which the reader
 * does at about the cost of the window: a walk back starts there rather
 * than at the end of the log, past all the records later than the window.
 * UINT64_MAX without --until.  Gaps pass silently: the walk reports them. */
static uint64_t window_end(elog_reader *r, const char *dir, const struct opts *o)
{
	struct elog_record rec;
	uint64_t end = 0;
	int rc;

	if (!o->until_set)
		return UINT64_MAX;
	elog_reader_window(r, o->since_set ? o->since : INT64_MIN, o->until);
	rc = o->since_set ? elog_reader_seek_time(r, o->since) : elog_reader_seek_begin(r);
	while (rc == 0 && ((rc = elog_reader_next(r, &rec)) == 0 || rc == ELOG_GAP))
		if (rc == 0 && (o->key == NULL || key_matches(o, &rec)))
			end = rec.offset + 1;
	if (rc != ELOG_END && rc != ELOG_GAP)
		cli_die_elog(dir, rc, elog_reader_errmsg(r));
	elog_reader_window(r, INT64_MIN, INT64_MAX);
	return end;
}

/* -n N with -k KEY or a time window: the last N records with the key
 * and in the window, found by walking back from the end until N of them
 * went by (or the window's first record, or the log's, did), so that the
 * cost is that of the records between the Nth last one and the end.  Gaps
 * pass silently: the read forward reports them. */
static int seek_last_matching(elog_reader *r, const char *dir, const struct opts *o)
{
	struct elog_record rec;
	uint64_t found = 0, lo = walk_back_floor(r, dir, o), from = window_end(r, dir, o);
	int rc;

	if ((rc = from == UINT64_MAX ? elog_reader_seek_end(r) : elog_reader_seek(r, from)) != 0)
		return rc;
	while (found < o->start_arg && ((rc = elog_reader_prev(r, &rec)) == 0 || rc == ELOG_GAP)) {
		if (rc == 0 && rec.offset < lo)
			break;
		if (rc == 0 && (o->key == NULL || key_matches(o, &rec)) && in_window(o, &rec))
			found++;
	}
	/* The read forward from here keeps to the window. */
	if (o->since_set || o->until_set)
		elog_reader_window(r, o->since_set ? o->since : INT64_MIN,
		                   o->until_set ? o->until : INT64_MAX);
	return rc == 0 || rc == ELOG_END ? 0 : rc;
}

static void on_stop_signal(int sig)
{
	stop_requested = sig;
}

/* After a stop signal: flush what was printed, then end.  SIGINT, the
 * interrupt from a terminal, kills it as it kills tail -f, so that the
 * shell and a script's wait see an interrupted program (status 130), and
 * a script run from the terminal stops too.  SIGTERM, the request of a
 * supervisor or of kill(1) to stop following, ends it with status 0, the
 * work done. */
static noreturn void stop_now(void)
{
	int sig = (int)stop_requested;

	if (sig != SIGINT)
		cli_exit(CLI_EX_OK);
	cli_die_of_signal(sig);
}

/* While following, SIGINT and SIGTERM end the program with stdout flushed
 * (stop_now()).  SA_RESETHAND makes a second signal kill it at once,
 * should a write to a stalled reader keep it from noticing the first. */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sa.sa_flags = SA_RESETHAND | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Whether the reader of stdout has gone: a pipe whose other end is closed
 * reports POLLERR even when no event is asked for. */
static int stdout_gone(const struct pollfd *p)
{
	return (p->revents & (POLLERR | POLLHUP)) != 0;
}

/* At the end of the durable records, with -f: show what was printed, then
 * sleep until the log may have grown, stdout's reader has gone, a stop
 * signal came, or timeout_ms (at most the safety timeout) passed. */
static void wait_for_records(elog_reader *r, const char *dir, int64_t timeout_ms)
{
	int ms = timeout_ms < 0                   ? 0
	         : timeout_ms < FOLLOW_TIMEOUT_MS ? (int)timeout_ms
	                                          : FOLLOW_TIMEOUT_MS;
	struct pollfd p[2] = {
		{ .fd = elog_reader_fd(r), .events = POLLIN },
		{ .fd = STDOUT_FILENO, .events = 0 },
	};
	int rc;

	cli_flush();
	if (p[0].fd >= 0) {
		rc = poll(p, 2, ms);
		if (rc < 0 && errno != EINTR)
			cli_die(CLI_EX_IO, dir, "poll: %s", cli_strerror(errno));
	} else {
		rc = elog_reader_wait(r, ms);
		if (rc != 0 && rc != ELOG_TIMEOUT && rc != EINTR)
			cli_die_elog(dir, rc, elog_reader_errmsg(r));
		if (poll(&p[1], 1, 0) < 0 && errno != EINTR)
			cli_die(CLI_EX_IO, dir, "poll: %s", cli_strerror(errno));
	}
	if (stop_requested)
		stop_now();
	if (stdout_gone(&p[1]))
		cli_exit(CLI_EX_OK);
}

/* "the log was moved to PATH" for a log directory renamed away from its
 * name, where the system tells where it went (Linux), else without PATH. */
static const char *moved_to(void)
{
	static char why[PATH_MAX + 64];
	char link[64], path[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof link, "/proc/self/fd/%d", log_fd);
	n = readlink(link, path, sizeof path - 1);
	if (n <= 0 || path[0] != '/')
		return "the log was moved away from this name";
	path[n] = '\0';
	snprintf(why, sizeof why, "the log was moved to %s", path);
	return why;
}

/* NULL when dir still names the directory being read, else what became
 * of it.  Whether the directory was deleted is asked before what the name
 * means: asked after, an rm -rf that removed the directory in between
 * made a deleted log look replaced by the directory the name had meant a
 * moment before. */
static const char *log_moved(const char *dir)
{
	struct stat st, self;
	int deleted = fstat(log_fd, &self) == 0 && self.st_nlink == 0;

	if (stat(dir, &st) < 0) {
		if (errno != ENOENT)
			return NULL;
		if (deleted || fstat(log_fd, &self) < 0 || self.st_nlink == 0)
			return "the log was deleted";
		/* Renamed away, not deleted.  A mv(1) of another log into
		 * its place may follow at once: a moment's look for it
		 * tells a replacement from a move. */
		for (int i = 0; i < 10; i++) {
			poll(NULL, 0, 20);
			if (stat(dir, &st) == 0)
				return "the log was replaced by another directory";
		}
		return moved_to();
	}
	if (st.st_ino != log_st.st_ino || st.st_dev != log_st.st_dev || deleted)
		return "the log was replaced by another directory";
	/* Nothing but deleting the log removes its settings: an rm -rf
	 * that has not reached the directory itself yet. */
	if (faccessat(log_fd, "settings", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return "the log was deleted";
	return NULL;
}

/* log_moved() after a read failed while following: a deletion in progress
 * may have removed the file the reader needed before the ones that tell,
 * so look again for a moment before calling the failure what it is. */
static const char *log_moved_after_failure(const char *dir)
{
	const char *why = NULL;

	for (int i = 0; i < 50 && (why = log_moved(dir)) == NULL; i++)
		poll(NULL, 0, 20);
	return why;
}

/* Open the log dir, with --follow=name waiting for it to exist (it may be
 * made later, or be being made).  Sleeps until then, ending quietly as
 * wait_for_records() does. */
static elog_reader *open_log(const char *dir, const struct opts *o)
{
	struct pollfd out = { .fd = STDOUT_FILENO, .events = 0 };
	elog_reader *r = NULL;
	int rc;

	while ((rc = elog_reader_open(&r, dir)) != 0) {
		if (!o->follow_name || (rc != ENOENT && rc != ELOG_NOTLOG))
			cli_die_elog(dir, rc, r != NULL ? elog_reader_errmsg(r) : NULL);
		elog_reader_close(r);
		r = NULL;
		if (poll(&out, 1, REOPEN_MS) < 0 && errno != EINTR)
			cli_die(CLI_EX_IO, dir, "poll: %s", cli_strerror(errno));
		if (stdout_gone(&out) || stop_requested)
			cli_exit(CLI_EX_OK);
	}
	/* --since and --until: exactly the records of the window. */
	if (o->since_set || o->until_set)
		elog_reader_window(r, o->since_set ? o->since : INT64_MIN,
		                   o->until_set ? o->until : INT64_MAX);
	if (log_fd >= 0)
		close(log_fd);
	log_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (log_fd < 0 || fstat(log_fd, &log_st) < 0)
		cli_die(CLI_EX_IO, dir, "%s", cli_strerror(errno));
	return r;
}

/* The log being followed was deleted or replaced (why): an error, or with
 * --follow=name, on to the new log of the name, from its beginning. */
static void reopen(elog_reader **r, const char *dir, const struct opts *o, const char *why)
{
	int rc;

	cli_flush();
	if (!o->follow_name)
		cli_die(CLI_EX_IO, dir, "%s", why);
	cli_warn(dir, "%s; following the new log of that name", why);
	elog_reader_close(*r);
	*r = open_log(dir, o);
	if ((rc = elog_reader_seek_begin(*r)) != 0)
		cli_die_elog(dir, rc, elog_reader_errmsg(*r));
}

/* -g: just after the consumer's committed offset.  One that never
 * committed starts at the beginning, and says so (--existing refuses it);
 * one whose committed offset lies at or above the log's durable end read
 * records the log has lost since (a backup restored, a log made again):
 * data loss, with the command that takes the consumer on from the end. */
static void position_group(elog_reader *r, const char *dir, const struct opts *o)
{
	char msg[ELOG_MSG_MAX], qdir[PATH_MAX + 16];
	struct elog_consumer c;
	int rc;

	rc = elog_consumer_get(dir, o->group, &c, msg);
	if (rc == ELOG_NOCONSUMER) {
		if (o->existing)
			cli_die(CLI_EX_NO, dir,
			        "no consumer \"%s\" (without --existing, "
			        "it would start at the beginning of the log)",
			        o->group);
		cli_warn(dir,
		         "consumer \"%s\" has committed nothing: a new consumer, "
		         "reading from the beginning of the log",
		         o->group);
	} else if (rc != 0) {
		cli_die_elog(dir, rc, msg);
	}
	rc = elog_consumer_seek(r, dir, o->group, msg);
	if (rc == ELOG_BEYOND && (rc = elog_consumer_get(dir, o->group, &c, msg)) == 0 &&
	    (rc = elog_reader_seek_end(r)) == 0) {
		uint64_t end = elog_reader_durable_end(r);

		cli_shell_word(qdir, sizeof qdir, dir);
		if (end > 0)
			cli_die(CLI_EX_CORRUPT, dir,
			        "consumer \"%s\" committed offset %llu, "
			        "but the log ends at %llu: records it read were lost; to "
			        "go on with the records to come: elog-commit %s %s %llu",
			        o->group, (unsigned long long)c.offset, (unsigned long long)end,
			        qdir, o->group, (unsigned long long)(end - 1));
		cli_die(CLI_EX_CORRUPT, dir,
		        "consumer \"%s\" committed offset %llu, but "
		        "the log is empty: records it read were lost; to start it over: "
		        "elog-commit -d %s %s",
		        o->group, (unsigned long long)c.offset, o->group, qdir);
	}
	if (rc != 0)
		cli_die_elog(dir, rc, msg);
}

static void position(elog_reader *r, const char *dir, const struct opts *o)
{
	int rc = 0;

	if (o->start == START_LAST && (o->key != NULL || o->since_set || o->until_set)) {
		if ((rc = seek_last_matching(r, dir, o)) != 0)
			cli_die_elog(dir, rc, elog_reader_errmsg(r));
		return;
	}
	switch (o->start) {
	case START_BEGIN:
		rc = elog_reader_seek_begin(r);
		break;
	case START_END:
		rc = elog_reader_seek_end(r);
		break;
	case START_OFFSET:
		rc = elog_reader_seek(r, o->start_arg);
		break;
	case START_LAST:
		rc = elog_reader_seek_last(r, o->start_arg);
		break;
	case START_TIME:
		rc = elog_reader_seek_time(r, o->since);
		break;
	case START_GROUP:
		position_group(r, dir, o);
		break;
	}
	if (rc != 0)
		cli_die_elog(dir, rc, elog_reader_errmsg(r));
}

/* A gap the reader reported, on stderr; 1 when --strict makes it the end. */
static int report_gap(elog_reader *r, const char *dir, const struct opts *o)
{
	uint64_t first, last;

	elog_reader_gap(r, &first, &last);
	const char *why = elog_reader_gap_cause(r) == ELOG_GAP_DAMAGE
	                          ? "lost to damage (see elog-verify --salvage)"
	                          : "removed by retention";
	if (first == last)
		cli_warn(dir, "offset %llu was %s", (unsigned long long)first, why);
	else
		cli_warn(dir, "offsets %llu-%llu were %s", (unsigned long long)first,
		         (unsigned long long)last, why);
	return o->strict;
}

/* --reverse: newest first, from the end (or from -o N down), back to the
 * first record, or with --since to the first record, in offset order,
 * whose timestamp is since or later: no record before it is.  --since and
 * --until select exactly (since <= ts <= until); -n, like -c, is how many
 * to print. */
static int cat_reverse(elog_reader *r, const char *dir, const struct opts *o)
{
	struct elog_record rec;
	uint64_t printed = 0, limit = UINT64_MAX, lo, from;
	int rc;

	if (o->count_set)
		limit = o->count;
	if (o->start == START_LAST && o->start_arg < limit)
		limit = o->start_arg;
	if (limit == 0)
		return CLI_EX_OK;
	lo = walk_back_floor(r, dir, o);
	from = window_end(r, dir, o);
	if (o->start == START_OFFSET && o->start_arg < from)
		rc = elog_reader_seek(r, o->start_arg + 1);
	else if (from != UINT64_MAX)
		rc = elog_reader_seek(r, from);
	else
		rc = elog_reader_seek_end(r);
	if (rc != 0)
		cli_die_elog(dir, rc, elog_reader_errmsg(r));
	for (;;) {
		if (stop_requested)
			stop_now();
		rc = elog_reader_prev(r, &rec);
		if (rc == 0) {
			if (rec.offset < lo)
				return CLI_EX_OK;
			if ((o->key != NULL && !key_matches(o, &rec)) || !in_window(o, &rec))
				continue;
			key_matched = 1;
			print_record(o, &rec);
			if (++printed == limit)
				return CLI_EX_OK;
		} else if (rc == ELOG_GAP) {
			if (report_gap(r, dir, o))
				return CLI_EX_NO;
		} else if (rc == ELOG_END) {
			return CLI_EX_OK;
		} else {
			cli_die_elog(dir, rc, elog_reader_errmsg(r));
		}
	}
}

/* How long a follower may still wait, in ms, before --idle or --until
 * ends it; INT64_MAX when neither applies, 0 or less when it is time. */
static int64_t follow_left(const struct opts *o, int64_t last_record_ms)
{
	int64_t left = INT64_MAX;

	if (o->idle_set)
		left = last_record_ms + (int64_t)o->idle_ms - cli_monotonic_ms();
	if (o->until_set && o->until < INT64_MAX - UNTIL_GRACE_MS) {
		int64_t u = o->until + UNTIL_GRACE_MS - cli_now_ms();
		if (u < left)
			left = u;
	}
	return left;
}

static int cat(elog_reader **rp, const char *dir, const struct opts *o)
{
	elog_reader *r = *rp;
	struct elog_record rec;
	uint64_t printed = 0;
	int64_t last_record_ms = cli_monotonic_ms();
	const char *moved;
	int rc;

	if (o->count_set && o->count == 0)
		return CLI_EX_OK;
	for (;;) {
		if (stop_requested)
			stop_now();
		rc = elog_reader_next(r, &rec);
		if (rc == 0) {
			if (o->key != NULL && !key_matches(o, &rec)) {
				/* Records of other keys are not news to
				 * --idle, however many go by. */
				if (o->idle_set && follow_left(o, last_record_ms) <= 0)
					return CLI_EX_OK;
				continue;
			}
			key_matched = 1;
			print_record(o, &rec);
			/* Only --idle reads it: no clock per record else. */
			if (o->idle_set)
				last_record_ms = cli_monotonic_ms();
			if (o->count_set && ++printed == o->count)
				return CLI_EX_OK;
		} else if (rc == ELOG_GAP && o->follow && (moved = log_moved(dir)) != NULL) {
			/* Not retention: the log is going away under us. */
			reopen(rp, dir, o, moved);
			r = *rp;
		} else if (rc == ELOG_GAP) {
			if (report_gap(r, dir, o))
				return CLI_EX_NO;
		} else if (rc == ELOG_END) {
			if (!o->follow)
				return CLI_EX_OK;
			if ((moved = log_moved(dir)) != NULL) {
				reopen(rp, dir, o, moved);
				r = *rp;
				continue;
			}
			int64_t left = follow_left(o, last_record_ms);
			if (left <= 0)
				return CLI_EX_OK;
			wait_for_records(r, dir, left);
		} else if (o->follow && (moved = log_moved_after_failure(dir)) != NULL) {
			/* Reading a log as it is deleted may fail. */
			reopen(rp, dir, o, moved);
			r = *rp;
		} else {
			cli_die_elog(dir, rc, elog_reader_errmsg(r));
		}
	}
}

/* -o beginning|end|N|-N */
static void parse_position(struct opts *o, const char *arg)
{
	if (strcmp(arg, "beginning") == 0) {
		o->start = START_BEGIN;
	} else if (strcmp(arg, "end") == 0) {
		o->start = START_END;
	} else if (cli_parse_u64(arg + (arg[0] == '-'), &o->start_arg) == 0) {
		o->start = arg[0] == '-' ? START_LAST : START_OFFSET;
	} else {
		cli_usage_error("-o: invalid position '%s'", arg);
	}
}

/* -o, -n, --since and -g each say where to start: only one may be given,
 * but for -n with --since (the last records of the window). */
static void set_start(struct opts *o, const char *opt)
{
	int last_of_window = o->start_opt != NULL &&
	                     ((strcmp(o->start_opt, "-n") == 0 && strcmp(opt, "--since") == 0) ||
	                      (strcmp(o->start_opt, "--since") == 0 && strcmp(opt, "-n") == 0));
	if (o->start_opt != NULL && strcmp(o->start_opt, opt) != 0 && !last_of_window)
		cli_usage_error("%s and %s cannot be used together", o->start_opt, opt);
	if (!last_of_window)
		o->start_opt = opt;
}

/* What the options cannot mean together; operands: how many are left
 * after them. */
static void check_combinations(const struct opts *o, int operands)
{
	struct stat st;

	/* "elog-cat -F events": -f meant, the log taken for a format. */
	if (o->out == OUT_FORMAT && strchr(o->fmt_arg, '%') == NULL &&
	    (operands == 0 || (stat(o->fmt_arg, &st) == 0 && S_ISDIR(st.st_mode))))
		cli_usage_error("-F '%s' has no %% directive: did you mean -f?", o->fmt_arg);
	if (o->reverse && o->follow)
		cli_usage_error("--reverse and -f cannot be used together");
	if (o->reverse && o->start == START_GROUP)
		cli_usage_error("--reverse and -g cannot be used together");
	if (o->reverse && o->start == START_BEGIN && o->start_opt != NULL)
		cli_usage_error("--reverse reads back from the end: -o beginning has "
		                "nothing before it");
	if (o->idle_set && !o->follow)
		cli_usage_error("--idle goes with -f (without it, elog-cat ends at the "
		                "end of the log)");
	if (o->existing && o->start != START_GROUP)
		cli_usage_error("--existing goes with -g");
	/* A window that holds no time would print nothing and exit 0, as if
	 * the log had no record in it: the arguments were swapped. */
	if (o->since_set && o->until_set && o->since > o->until)
		cli_usage_error("--since %s is later than --until %s: nothing lies between",
		                o->since_arg, o->until_arg);
}

/* The command line, into o. */
static void parse_args(int argc, char *argv[], struct opts *o)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":F:vo:n:c:k:g:fLh", long_options, NULL)) != -1) {
		if (c != 'L' && c != OPT_JSON)
			o->reading = 1;
		switch (c) {
		case 'F':
			if (o->out == OUT_VALUES)
				cli_usage_error("-F and -v cannot be used together");
			o->out = OUT_FORMAT;
			o->fmt_arg = optarg;
			free(o->fmt.pieces);
			free(o->fmt.text);
			compile_format(&o->fmt, optarg);
			break;
		case 'v':
			if (o->out == OUT_FORMAT)
				cli_usage_error("-F and -v cannot be used together");
			o->out = OUT_VALUES;
			break;
		case 'o':
			set_start(o, "-o");
			parse_position(o, optarg);
			break;
		case 'n':
			set_start(o, "-n"); /* with --since: the window's last */
			o->start = START_LAST;
			o->start_arg = cli_arg_u64("-n", optarg, 0, UINT64_MAX);
			break;
		case OPT_SINCE:
			set_start(o, "--since");
			if (o->start != START_LAST)
				o->start = START_TIME;
			o->since_set = 1;
			o->since_arg = optarg;
			o->since = cli_arg_time("--since", optarg);
			break;
		case 'g':
			set_start(o, "-g");
			o->start = START_GROUP;
			o->group = optarg;
			if (elog_consumer_name_check(optarg) != 0)
				cli_usage_error("-g: invalid consumer name '%s'", optarg);
			break;
		case OPT_UNTIL:
			o->until_set = 1;
			o->until_arg = optarg;
			o->until = cli_arg_time("--until", optarg);
			break;
		case 'c':
			o->count_set = 1;
			o->count = cli_arg_u64("-c", optarg, 0, UINT64_MAX);
			break;
		case 'k':
			o->key = optarg;
			o->key_len = strlen(optarg);
			break;
		case 'f':
			o->follow = 1;
			if (optarg == NULL || strcmp(optarg, "descriptor") == 0)
				o->follow_name = 0;
			else if (strcmp(optarg, "name") == 0)
				o->follow_name = 1;
			else
				cli_usage_error("--follow: expected 'name' or 'descriptor', "
				                "not '%s'",
				                optarg);
			break;
		case OPT_STRICT:
			o->strict = 1;
			break;
		case OPT_REVERSE:
			o->reverse = 1;
			break;
		case OPT_IDLE:
			o->idle_set = 1;
			o->idle_ms = cli_arg_duration("--idle", optarg);
			break;
		case OPT_EXISTING:
			o->existing = 1;
			break;
		case 'L':
			o->summary = 1;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		default:
			cli_common_option(c, argv, usage_text);
		}
	}
	if (o->summary && o->reading)
		cli_usage_error("-L reads no records: it takes only --json");
	if (o->json && !o->summary)
		cli_usage_error("--json goes with -L (records are JSON by default)");
	check_combinations(o, argc - optind);
	o->dir = cli_dir_operand(argc - optind, argv + optind);
}

int main(int argc, char *argv[])
{
	struct opts o = { .out = OUT_JSON };
	elog_reader *r;
	int rc;

	cli_init(argv[0]);
	parse_args(argc, argv, &o);
	if (o.summary)
		cli_summary(o.dir, o.json);
	if (o.follow)
		catch_stop_signals();
	r = open_log(o.dir, &o);
	if (o.reverse) {
		rc = cat_reverse(r, o.dir, &o);
	} else {
		position(r, o.dir, &o);
		rc = cat(&r, o.dir, &o);
	}
	cli_flush();
	elog_reader_close(r);
	free(o.fmt.pieces);
	free(o.fmt.text);
	/* As grep: a key that no record had is a negative answer. */
	if (rc == CLI_EX_OK && o.key != NULL && !key_matched && !o.follow &&
	    !(o.count_set && o.count == 0))
		rc = CLI_EX_NO;
	return rc;
}
