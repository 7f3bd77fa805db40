/*
 * elog-append: append the records read from stdin to a log, in batches made
 * durable by one flush each (group commit), and optionally print each
 * record's offset once it is durable.  Other writers may append to the same
 * log at the same time; a batch holds the log's lock only while it is
 * written.  See elog-append(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
        "usage: elog-append [-0ptv] [-K delim | -k key] [-s schema] [--batch n]\n"
        "                   [--batch-bytes size] [--linger duration] [--sync]\n"
        "                   [--exclusive] [--wait duration] [--max-skew duration]\n"
        "                   [--segment-bytes size] [--index-interval size]\n"
        "                   [--retain-age duration] [--retain-bytes size]\n"
        "                   [--compress zstd[:level]] [--no-dictionary]\n"
        "                   [--cleanup delete | compact] [--json [--keep-offsets]]\n"
        "                   dir\n"
        "       elog-append -h | --help | --version\n"
        "\n"
        "  -0, --null                 records end with NUL, not newline\n"
        "  -K, --key-delimiter delim  split each record into key and value at delim\n"
        "  -k, --key key              give every record this key\n"
        "  -s, --schema schema        give every record this schema id (0-65535)\n"
        "  -t, --timestamp            each record starts with its time and a tab\n"
        "  --max-skew duration        refuse -t times further ahead than this (1h)\n"
        "  -p, --print-offsets        print each record's offset once it is durable\n"
        "  -v, --verbose              report batches on standard error\n"
        "  --json                     read elog-cat's JSON lines: key, value, ts, schema\n"
        "  --keep-offsets             with --json: keep each line's offset\n"
        "  --batch n                  write a batch at n records\n"
        "  --batch-bytes size         write a batch at this many bytes\n"
        "  --linger duration          write a batch this long after its first record\n"
        "  --sync                     make every record durable on its own\n"
        "  --exclusive                be the log's only writer while this runs\n"
        "  --wait duration            wait at most this for another writer (10s)\n"
        "  --segment-bytes size       new log: roll segments at this size\n"
        "  --index-interval size      new log: bytes between index entries\n"
        "  --retain-age duration      new log: retention policy by age\n"
        "  --retain-bytes size        new log: retention policy by size\n"
        "  --compress zstd[:level]    new log: compress values with zstd\n"
        "  --no-dictionary            new log: never train a zstd dictionary\n"
        "  --cleanup delete|compact   new log: whether elog-compact may run (delete)\n"
        "  -h, --help                 print this help and exit\n"
        "  --version                  print the version and exit\n";

/* The longest timestamp -t reads before the tab. */
#define TS_FIELD_MAX 64

enum {
	OPT_BATCH = 256,
	OPT_BATCH_BYTES,
	OPT_LINGER,
	OPT_SYNC,
	OPT_SEGMENT_BYTES,
	OPT_INDEX_INTERVAL,
	OPT_RETAIN_AGE,
	OPT_RETAIN_BYTES,
	OPT_COMPRESS,
	OPT_NO_DICTIONARY,
	OPT_WAIT,
	OPT_MAX_SKEW,
	OPT_EXCLUSIVE,
	OPT_CLEANUP,
	OPT_JSON,
	OPT_KEEP_OFFSETS
};

static const struct option long_options[] = {
	{ "null", no_argument, NULL, '0' },
	{ "key-delimiter", required_argument, NULL, 'K' },
	{ "key", required_argument, NULL, 'k' },
	{ "schema", required_argument, NULL, 's' },
	{ "timestamp", no_argument, NULL, 't' },
	{ "max-skew", required_argument, NULL, OPT_MAX_SKEW },
	{ "print-offsets", no_argument, NULL, 'p' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "batch-bytes", required_argument, NULL, OPT_BATCH_BYTES },
	{ "linger", required_argument, NULL, OPT_LINGER },
	{ "sync", no_argument, NULL, OPT_SYNC },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "exclusive", no_argument, NULL, OPT_EXCLUSIVE },
	{ "segment-bytes", required_argument, NULL, OPT_SEGMENT_BYTES },
	{ "index-interval", required_argument, NULL, OPT_INDEX_INTERVAL },
	{ "retain-age", required_argument, NULL, OPT_RETAIN_AGE },
	{ "retain-bytes", required_argument, NULL, OPT_RETAIN_BYTES },
	{ "compress", required_argument, NULL, OPT_COMPRESS },
	{ "no-dictionary", no_argument, NULL, OPT_NO_DICTIONARY },
	{ "cleanup", required_argument, NULL, OPT_CLEANUP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "keep-offsets", no_argument, NULL, OPT_KEEP_OFFSETS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, CLI_OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

/* What the command line asks for. */
struct opts {
	const char *dir;       /* the operand: the log directory */
	char delim;            /* '\n', or '\0' with -0 */
	const char *key_delim; /* -K */
	size_t key_delim_len;
	const char *key; /* -k */
	size_t key_len;
	uint16_t schema;      /* -s */
	int ts_input;         /* -t */
	uint64_t max_skew_ms; /* --max-skew */
	int max_skew_given;
	int json;                   /* --json */
	int keep_offsets;           /* --keep-offsets */
	int print_offsets;          /* -p */
	int verbose;                /* -v */
	int sync;                   /* --sync */
	uint64_t batch_records;     /* --batch; 0 = no limit */
	uint64_t batch_bytes;       /* --batch-bytes */
	uint64_t linger_ms;         /* --linger */
	struct elog_options create; /* settings for a new log */
};

/* The offsets of a batch's records, in input order, stored by the library
 * when it lays the batch out to write it (NOT_WRITTEN until then): blocks
 * that never move once handed out.  Beside each, a sum of the record, so
 * that after a failure the records the log holds at those offsets can be
 * told to be these (die_write_failed()). */
#define OFFS_BLOCK 4096
#define NOT_WRITTEN UINT64_MAX
struct slot {
	uint64_t offset;
	uint64_t sum;
};
struct offsets {
	struct slot **blk;
	size_t nblk;
	size_t n; /* slots handed out */
};

/* A record's sum: FNV-1a over its time, its key and its value, eight
 * bytes at a time.  Not a checksum against damage (the log has CRCs),
 * only a way to tell one record from another writer's. */
static uint64_t sum_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t w;

	for (; len >= 8; b += 8, len -= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	for (; len > 0; b++, len--)
		h = (h ^ *b) * 0x100000001b3ull;
	return h;
}

static uint64_t record_sum(const struct elog_record *r)
{
	uint64_t h = 0xcbf29ce484222325ull, head[2] = { (uint64_t)r->ts_ms, r->key_len };

	h = sum_bytes(h, head, sizeof head);
	h = sum_bytes(h, r->key, r->key_len);
	return sum_bytes(h, r->value, r->value_len);
}

/* The next slot, for the record being appended: where the library puts
 * its offset. */
static uint64_t *offsets_slot(struct offsets *o, const struct elog_record *r)
{
	size_t b = o->n / OFFS_BLOCK;

	if (b == o->nblk) {
		o->blk = cli_realloc(o->blk, (b + 1) * sizeof *o->blk);
		o->blk[b] = cli_realloc(NULL, OFFS_BLOCK * sizeof **o->blk);
		o->nblk++;
	}
	struct slot *s = &o->blk[b][o->n++ % OFFS_BLOCK];
	s->offset = NOT_WRITTEN;
	s->sum = record_sum(r);
	return &s->offset;
}

static const struct slot *offsets_get(const struct offsets *o, size_t i)
{
	return &o->blk[i / OFFS_BLOCK][i % OFFS_BLOCK];
}

static uint64_t offsets_at(const struct offsets *o, size_t i)
{
	return offsets_get(o, i)->offset;
}

static void offsets_free(struct offsets *o)
{
	for (size_t i = 0; i < o->nblk; i++)
		free(o->blk[i]);
	free(o->blk);
}

/* SIGTERM, SIGINT and SIGHUP end the input: what was read is appended,
 * made durable and acknowledged, then the program dies of the signal.  The
 * handler writes the signal's number to a pipe that the input loop polls
 * beside stdin, so none is missed between a check and a read(2). */
static volatile sig_atomic_t stop_signal;
static int stop_pipe[2] = { -1, -1 };

static void on_stop_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;

	if (stop_signal == 0)
		stop_signal = sig;
	if (write(stop_pipe[1], &c, 1) < 0) {
		/* the pipe is full: a signal is already noted */
	}
	errno = saved;
}

static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP };

static void stop_signals_catch(void)
{
	struct sigaction sa;

	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		cli_die(CLI_EX_IO, "pipe", "%s", cli_strerror(errno));
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
		sigaction(stop_signals[i], &sa, NULL);
}

/* --json: the records of the batch's lines, held here until the batch
 * ends, so that a line that cannot be appended leaves none of its batch
 * appended.  Keys and values are in bytes (as offsets: it grows). */
struct held {
	uint64_t recno;  /* its line, for messages */
	uint64_t offset; /* --keep-offsets: the line's */
	int64_t ts_ms;
	uint16_t schema;
	size_t key, key_len, value, value_len;
};
struct holding {
	struct held *v;
	size_t n, cap;
	char *bytes;
	size_t len, bytes_cap;
	uint64_t last; /* --keep-offsets: the last line's offset, */
	int have_last; /* once there is one */
	char *scratch; /* for comparing value_text with value */
	size_t scratch_cap;
};

/* The state of one run: the open log, the batch not yet durable, counts. */
struct appender {
	const struct opts *o;
	/* When the input now in the buffer arrived: the time of append of
	 * the records in it.  Taken once per read(2), not once per record,
	 * since they all arrived together (and the clock is not free). */
	int64_t arrived_ms;
	elog *w;
	uint64_t recno; /* input records read, for messages */
	/* The batch: records appended since the last flush. */
	size_t batch_n;
	uint64_t batch_size;
	int64_t batch_start;    /* monotonic ms of its first record */
	struct offsets offsets; /* with -p or -v: where their offsets go */
	/* For -v; the offsets under mu. */
	uint64_t total, batches, batches_done, first_offset, last_offset;
	/* The flusher thread makes a batch durable and acknowledges it while
	 * this thread reads and appends the next one, so that parsing input
	 * overlaps fdatasync.  One batch at a time is in its hands.  It is
	 * started only for a batch after the first (commit()), so that a
	 * one-shot append (`echo x | elog-append LOG`) never pays for a
	 * thread it cannot use. */
	pthread_t flusher;
	int flusher_on; /* the thread runs */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int busy; /* a batch is handed over, not yet done */
	int quit;
	int failed; /* the flush failed: its code and message */
	char failed_msg[512];
	struct offsets f_offsets; /* the batch handed over: its offsets */
	size_t f_n;
	int f_acked;          /* it is durable and acknowledged */
	uint64_t acked_lines; /* input records acknowledged, all batches */
	struct holding held; /* --json */
};

/* What the library did that the operator should know (a recovery that cut
 * another writer's unacknowledged records): one line on stderr. */
static void tell_notice(struct appender *a)
{
	const char *n = elog_notice(a->w);
	if (n)
		cli_warn(a->o->dir, "%s", n);
}

/* Make the batch handed over durable, then acknowledge it: in the flusher
 * thread, or in this one while there is none. */
static void flush_handed(struct appender *a)
{
	/* An offset is printed only after the flush that covers it has
	 * succeeded: a printed offset is an acknowledgement. */
	int rc = elog_sync(a->w);
	tell_notice(a);
	if (rc == 0 && a->o->print_offsets) {
		for (size_t i = 0; i < a->f_n; i++) {
			cli_put_u64(offsets_at(&a->f_offsets, i));
			cli_putc('\n');
		}
		cli_flush();
	}
	pthread_mutex_lock(&a->mu);
	if (rc == 0) {
		a->f_acked = 1;
		a->acked_lines += a->f_n;
	}
	if (rc == 0 && a->f_n > 0 && a->f_offsets.n > 0) {
		if (a->batches_done++ == 0)
			a->first_offset = offsets_at(&a->f_offsets, 0);
		a->last_offset = offsets_at(&a->f_offsets, a->f_n - 1);
	}
	if (rc != 0 && !a->failed) {
		a->failed = rc;
		snprintf(a->failed_msg, sizeof a->failed_msg, "%s", elog_errmsg(a->w));
	}
	a->busy = 0;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

static void *flusher_main(void *arg)
{
	struct appender *a = arg;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->busy && !a->quit)
			pthread_cond_wait(&a->cv, &a->mu);
		if (!a->busy)
			break;
		pthread_mutex_unlock(&a->mu);
		flush_handed(a);
		pthread_mutex_lock(&a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

static void flusher_start(struct appender *a)
{
	sigset_t set, old;

	/* The stop signals go to the reading thread, whose poll they wake. */
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
		sigaddset(&set, stop_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	int err = pthread_create(&a->flusher, NULL, flusher_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err != 0)
		cli_die(CLI_EX_IO, a->o->dir, "cannot start a thread: %s", cli_strerror(err));
	a->flusher_on = 1;
}

static noreturn void die_write_failed(struct appender *a, int rc, const char *msg);

/* Wait until the batch handed over is durable and acknowledged.  After
 * this, this thread alone writes to stdout and stderr, so every way out
 * of the program goes through here first. */
static void flusher_idle(struct appender *a)
{
	pthread_mutex_lock(&a->mu);
	while (a->busy)
		pthread_cond_wait(&a->cv, &a->mu);
	int failed = a->failed;
	pthread_mutex_unlock(&a->mu);
	if (failed)
		die_write_failed(a, failed, a->failed_msg);
}

static void flusher_stop(struct appender *a)
{
	flusher_idle(a);
	if (!a->flusher_on)
		return;
	pthread_mutex_lock(&a->mu);
	a->quit = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->flusher, NULL);
}

/* End the batch: hand it over (once the one before is done) and start the
 * next.  The flusher takes it, started for the first batch that could
 * overlap the reading of input; the first batch, and every one waited for
 * while no flusher runs (--sync, the end of the input), is made durable by
 * this thread instead: no thread would gain anything there. */
static void release_held(struct appender *a);

static void commit(struct appender *a, int wait)
{
	release_held(a);
	if (a->batch_n > 0) {
		flusher_idle(a);
		struct offsets t = a->f_offsets;
		a->f_offsets = a->offsets;
		a->offsets = t;
		a->offsets.n = 0;
		a->f_n = a->batch_n;
		pthread_mutex_lock(&a->mu);
		a->f_acked = 0;
		a->busy = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		a->batch_n = 0;
		a->batch_size = 0;
		if (!a->flusher_on && (wait || a->batches == 0))
			flush_handed(a);
		else if (!a->flusher_on)
			flusher_start(a);
		a->batches++;
	}
	if (wait)
		flusher_idle(a);
}

/* End the batch and wait until it is durable and acknowledged. */
static void commit_wait(struct appender *a)
{
	commit(a, 1);
}

/* After a failure, the records not yet acknowledged, in input order: the
 * batch handed over (when its flush failed), then the one being read. */
struct unacked {
	const struct offsets *part[2];
	size_t n[2];
};

static const struct slot *unacked_at(const struct unacked *u, size_t i)
{
	return i < u->n[0] ? offsets_get(u->part[0], i) : offsets_get(u->part[1], i - u->n[0]);
}

/* How many of the first n of u the log holds: each below the durable end
 * read now, at its offset, with its sum, so that none is taken for
 * another writer's record that replaced a batch of this one cut after a
 * failed sync.  With -p each offset is printed, since each is an
 * acknowledgement like any other. */
static size_t durable_after_failure(struct appender *a, const struct unacked *u, size_t n)
{
	elog_reader *r = NULL;
	struct elog_record rec;
	uint64_t next = NOT_WRITTEN;
	size_t k = 0;

	if (elog_reader_open(&r, a->o->dir) == 0) {
		uint64_t durable = elog_reader_durable_end(r);
		for (; k < n; k++) {
			const struct slot *s = unacked_at(u, k);
			if (s->offset >= durable)
				break;
			if (s->offset != next && elog_reader_seek(r, s->offset) != 0)
				break;
			if (elog_reader_next(r, &rec) != 0 || rec.offset != s->offset ||
			    record_sum(&rec) != s->sum)
				break;
			next = s->offset + 1;
			if (a->o->print_offsets) {
				cli_put_u64(s->offset);
				cli_putc('\n');
			}
		}
	}
	elog_reader_close(r);
	cli_flush();
	return k;
}

/* Stop after a failed write or sync, saying where the input stands: which
 * records are durable (acknowledged, and printed with -p), which were
 * written and may still appear (the next writer publishes the whole
 * records of a writer that failed or died: elog(7), Recovery), and from
 * which on nothing was written.  elog-append(1), Resuming after a
 * failure, is the producer's rule for each. */
static noreturn void die_write_failed(struct appender *a, int rc, const char *msg)
{
	const char *unit = a->o->delim == '\n' ? "line" : "record";
	struct unacked u = { { &a->f_offsets, &a->offsets }, { 0, a->offsets.n } };
	char why[ELOG_MSG_MAX + 64], state[400];
	size_t n, k, pend = 0;
	int len;

	snprintf(why, sizeof why, "%s", msg != NULL && msg[0] ? msg : elog_strerror(rc));
	if (!a->f_acked)
		u.n[0] = a->f_offsets.n;
	n = u.n[0] + u.n[1];
	k = durable_after_failure(a, &u, n);
	while (k + pend < n && unacked_at(&u, k + pend)->offset != NOT_WRITTEN)
		pend++;
	uint64_t acked = a->acked_lines + k;
	cli_warn(a->o->dir, "%s", why);
	if (acked == 0)
		len = snprintf(state, sizeof state, "no %s is durable", unit);
	else
		len = snprintf(state, sizeof state, "%ss 1-%llu are durable", unit,
		               (unsigned long long)acked);
	if (pend > 0)
		len += snprintf(state + len, sizeof state - (size_t)len,
		                "; %ss %llu-%llu were written at offsets %llu-%llu but not "
		                "synced: the next writer publishes those written whole, or "
		                "cuts them all after a failed sync",
		                unit, (unsigned long long)acked + 1,
		                (unsigned long long)(acked + pend),
		                (unsigned long long)unacked_at(&u, k)->offset,
		                (unsigned long long)unacked_at(&u, k + pend - 1)->offset);
	snprintf(state + len, sizeof state - (size_t)len, "; %ss from %llu on were not written", unit,
	         (unsigned long long)(acked + pend + 1));
	cli_die(cli_status(rc), a->o->dir, "%s", state);
}

/* Stop with an error: what was appended before is still made durable
 * and acknowledged as usual, and nothing races the message out. */
static noreturn void fail(struct appender *a, int status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static noreturn void fail(struct appender *a, int status, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	commit_wait(a);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cli_die(status, a->o->dir, "%s", msg);
}

/* A record of input that cannot be appended: keep every record before it
 * (flushed and acknowledged as usual), then stop with status.  With --json,
 * the records of its batch are dropped instead: none of them was handed to
 * the library yet. */
static noreturn void input_fail(struct appender *a, int status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static noreturn void input_fail(struct appender *a, int status, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (a->held.n > 0) {
		a->batch_n -= a->held.n;
		a->total -= a->held.n;
		a->held.n = 0;
	}
	fail(a, status, "%s %llu: %s", a->o->delim == '\n' ? "line" : "record",
	     (unsigned long long)a->recno, msg);
}

#define input_error(a, ...) input_fail((a), CLI_EX_IO, __VA_ARGS__)

/* The -t prefix: a time and a tab.  The time is epoch milliseconds as a
 * decimal number or any TIME that --since of elog-cat(1) takes. */
/* --max-skew's default: the skew past its clock that retention believes
 * (elog(3), Retention), so that what is written is judged by its time. */
#define MAX_SKEW_DEFAULT_MS (3600ull * 1000)

/* 1 when ts_ms lies more than max_skew_ms after now_ms. */
static int ts_future(int64_t ts_ms, int64_t now_ms, uint64_t max_skew_ms)
{
	return ts_ms > now_ms && (uint64_t)ts_ms - (uint64_t)now_ms > max_skew_ms;
}

static const char *take_timestamp(struct appender *a, const char *p, size_t *len, int64_t *ts)
{
	const char *tab = memchr(p, '\t', *len);
	char field[TS_FIELD_MAX + 1];
	size_t n;
	uint64_t v;

	if (tab == NULL)
		input_error(a, "no tab after the timestamp (-t)");
	n = (size_t)(tab - p);
	if (n > TS_FIELD_MAX)
		n = TS_FIELD_MAX;
	memcpy(field, p, n);
	field[n] = '\0';
	if ((size_t)(tab - p) > TS_FIELD_MAX)
		input_error(a, "invalid timestamp '%s...'", field);
	if (cli_parse_u64(field, &v) == 0 && v <= (uint64_t)INT64_MAX)
		*ts = (int64_t)v;
	else if (field[0] == '-' && cli_parse_u64(field + 1, &v) == 0 && v < (uint64_t)INT64_MAX)
		*ts = -(int64_t)v;
	else if (cli_parse_time(field, cli_now_ms(), ts) < 0)
		input_error(a, "invalid timestamp '%s'", field);
	*len -= (size_t)(tab + 1 - p);
	return tab + 1;
}

/* The members of elog-cat's JSON lines that --json reads. */
enum { M_OFFSET, M_TS, M_SCHEMA, M_KEY, M_KEY_B64, M_VALUE, M_VALUE_B64, M_VALUE_TEXT, M_COUNT };
static const char *const member_names[M_COUNT] = { "offset",  "ts",    "schema",    "key",
	                                           "key_b64", "value", "value_b64", "value_text" };
/* The most members a line may have: elog-cat's, and room for others,
 * which are ignored. */
#define MEMBERS_MAX 64

/* An integer member (no fraction, no exponent) into *v, within [min, max]. */
static void json_int(struct appender *a, const struct cli_jmember *m, const char *name, int64_t min,
                     uint64_t max, int64_t *sv, uint64_t *uv)
{
	char field[32];
	uint64_t v;
	int neg = m->len > 0 && m->value[0] == '-';

	if (m->len == 0 || m->len >= sizeof field || m->value[0] == '"')
		input_error(a, "%s is not an integer", name);
	memcpy(field, m->value, m->len);
	field[m->len] = '\0';
	if (cli_parse_u64(field + neg, &v) < 0 || (neg && min >= 0) ||
	    (neg && v > (uint64_t)INT64_MAX + 1) || (!neg && v > max))
		input_error(a, "%s %s is not an integer in range", name, field);
	if (sv)
		*sv = neg ? (int64_t)(0 - v) : (int64_t)v;
	if (uv)
		*uv = v;
}

/* Room for n more bytes in the holding's bytes. */
static void held_reserve(struct holding *h, size_t n)
{
	if (h->bytes_cap - h->len < n) {
		while (h->bytes_cap - h->len < n)
			h->bytes_cap = h->bytes_cap ? 2 * h->bytes_cap : 1 << 16;
		h->bytes = cli_realloc(h->bytes, h->bytes_cap);
	}
}

/* A string member's bytes, or its base64's, at the end of the holding's
 * bytes: where they start, and their length in *len. */
static size_t json_bytes(struct appender *a, const struct cli_jmember *m, const char *name, int b64,
                         size_t *len)
{
	struct holding *h = &a->held;
	size_t at = h->len;

	if (m->len == 0 || m->value[0] != '"')
		input_error(a, "%s is not a string", name);
	held_reserve(h, 2 * m->len);
	*len = cli_json_string_decode(m->value, m->len, h->bytes + at);
	if (b64) {
		/* Decoded in place, after the text: base64 is never
		 * shorter than its bytes. */
		char *text = h->bytes + at;
		size_t n;
		if (cli_base64_decode(text, *len, (unsigned char *)text + *len, &n) < 0)
			input_error(a, "%s is not base64", name);
		memmove(text, text + *len, n);
		*len = n;
	}
	h->len += *len;
	return at;
}

/* A value member that is JSON: a string's bytes; the compact text of an
 * object or array (as elog-cat embeds it) or of a number or literal. */
static size_t json_value(struct appender *a, const struct cli_jmember *m, size_t *len)
{
	struct holding *h = &a->held;
	size_t at = h->len;
	const char *res;

	if (m->value[0] == '"')
		return json_bytes(a, m, "value", 0, len);
	if (m->len == 4 && memcmp(m->value, "null", 4) == 0)
		input_error(a, "value is null (an empty value is \"\")");
	held_reserve(h, m->len);
	if (cli_json_compact(m->value, m->len, h->bytes + at, &res, len) < 0)
		input_error(a, "value is not JSON");
	if (res != h->bytes + at)
		memcpy(h->bytes + at, res, *len);
	h->len += *len;
	return at;
}

/* value_text, the stored bytes of a value elog-cat embedded compacted: it
 * must compact to that value. */
static void json_value_text_check(struct appender *a, const char *text, size_t len,
                                  const char *value, size_t value_len)
{
	struct holding *h = &a->held;
	const char *res;
	size_t n;

	if (h->scratch_cap < len) {
		h->scratch_cap = len;
		h->scratch = cli_realloc(h->scratch, len);
	}
	if (cli_json_compact(text, len, h->scratch, &res, &n) < 0 || n != value_len ||
	    memcmp(res, value, n) != 0)
		input_error(a, "value_text is not the text of value");
}

/* The members of a JSON line that --json reads, into mem (pointing into
 * m, room for MEMBERS_MAX), checked for the combinations it refuses. */
static void json_members(struct appender *a, const char *p, size_t len, struct cli_jmember *m,
                         const struct cli_jmember *mem[M_COUNT])
{
	size_t n;
	int rc = cli_json_object(p, len, m, MEMBERS_MAX, &n);

	if (rc == -2)
		input_error(a, "more than %d members", MEMBERS_MAX);
	if (rc < 0)
		input_error(a, "not a JSON object");
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < M_COUNT; k++)
			if (cli_json_name_is(&m[i], member_names[k])) {
				if (mem[k])
					input_error(a, "%s is given twice", member_names[k]);
				mem[k] = &m[i];
			}
	if (mem[M_KEY] && mem[M_KEY_B64])
		input_error(a, "both key and key_b64");
	if (mem[M_VALUE_B64] && (mem[M_VALUE] || mem[M_VALUE_TEXT]))
		input_error(a, "both value_b64 and value%s", mem[M_VALUE] ? "" : "_text");
	if (!mem[M_VALUE] && !mem[M_VALUE_B64] && !mem[M_VALUE_TEXT])
		input_error(a, "no value (value, value_b64 or value_text)");
}

/* ts, schema and offset, into r. */
static void json_meta(struct appender *a, const struct cli_jmember *mem[M_COUNT], struct held *r)
{
	const struct opts *o = a->o;
	uint64_t u;

	if (mem[M_TS]) {
		json_int(a, mem[M_TS], "ts", INT64_MIN, INT64_MAX, &r->ts_ms, NULL);
		/* The library reads INT64_MIN as "the time of append". */
		if (r->ts_ms == ELOG_TS_NOW)
			input_error(a, "ts %lld is out of range", (long long)r->ts_ms);
		if (o->max_skew_given && ts_future(r->ts_ms, cli_now_ms(), o->max_skew_ms))
			input_error(a, "ts %lld lies more than --max-skew ahead of the clock",
			            (long long)r->ts_ms);
	}
	if (mem[M_SCHEMA]) {
		json_int(a, mem[M_SCHEMA], "schema", 0, UINT16_MAX, NULL, &u);
		r->schema = (uint16_t)u;
	}
	if (mem[M_OFFSET])
		json_int(a, mem[M_OFFSET], "offset", 0, UINT64_MAX - 1, NULL, &r->offset);
	else if (o->keep_offsets)
		input_error(a, "no offset (--keep-offsets)");
}

/* The key and the value, into the holding's bytes and r. */
static void json_key_value(struct appender *a, const struct cli_jmember *mem[M_COUNT],
                           struct held *r)
{
	struct holding *h = &a->held;
	size_t start = h->len;

	if (mem[M_KEY_B64]) {
		r->key = json_bytes(a, mem[M_KEY_B64], "key_b64", 1, &r->key_len);
	} else if (mem[M_KEY] &&
	           !(mem[M_KEY]->len == 4 && memcmp(mem[M_KEY]->value, "null", 4) == 0)) {
		r->key = json_bytes(a, mem[M_KEY], "key", 0, &r->key_len);
	}
	if (r->key_len > ELOG_MAX_KEY)
		input_error(a, "the key is longer than 65535 bytes");
	if (mem[M_VALUE_B64]) {
		r->value = json_bytes(a, mem[M_VALUE_B64], "value_b64", 1, &r->value_len);
	} else if (mem[M_VALUE_TEXT]) {
		r->value = json_bytes(a, mem[M_VALUE_TEXT], "value_text", 0, &r->value_len);
		if (mem[M_VALUE]) {
			size_t vlen, v = json_value(a, mem[M_VALUE], &vlen);
			json_value_text_check(a, h->bytes + r->value, r->value_len, h->bytes + v,
			                      vlen);
			h->len = v;
		}
	} else {
		r->value = json_value(a, mem[M_VALUE], &r->value_len);
	}
	if (r->key_len + r->value_len > ELOG_MAX_RECORD - 24) {
		h->len = start;
		input_error(a, "the record is larger than the limit of 16 MiB");
	}
}

/* --keep-offsets: r's offset must follow the line before's, and the log's
 * end. */
static void keep_offset_check(struct appender *a, const struct held *r)
{
	struct holding *h = &a->held;
	uint64_t end = elog_next_offset(a->w);

	if (h->have_last && r->offset <= h->last)
		input_error(a,
		            "offset %llu does not follow offset %llu of the line "
		            "before: offsets must increase",
		            (unsigned long long)r->offset, (unsigned long long)h->last);
	if (r->offset < end)
		input_fail(a, CLI_EX_USAGE,
		           "offset %llu is taken: the log holds "
		           "offsets up to %llu (to copy what it lacks: elog-cat -o %llu)",
		           (unsigned long long)r->offset, (unsigned long long)end - 1,
		           (unsigned long long)end);
	h->last = r->offset;
	h->have_last = 1;
}

/* A record more in the batch, of size bytes: end the batch when it is full. */
static void batch_add(struct appender *a, uint64_t size)
{
	const struct opts *o = a->o;

	a->total++;
	if (a->batch_n == 0)
		a->batch_start = cli_monotonic_ms();
	a->batch_n++;
	a->batch_size += size;
	if (o->sync)
		commit_wait(a);
	else if ((o->batch_records != 0 && a->batch_n >= o->batch_records) ||
	         a->batch_size >= o->batch_bytes)
		commit(a, 0);
}

/* A line of elog-cat's JSON output, held as a record until its batch ends:
 * members key or key_b64, value, value_b64 or value_text, ts, schema, and
 * with --keep-offsets offset; others are ignored. */
static void add_json(struct appender *a, const char *p, size_t len)
{
	struct holding *h = &a->held;
	struct cli_jmember m[MEMBERS_MAX];
	const struct cli_jmember *mem[M_COUNT] = { 0 };
	struct held r = { .recno = a->recno, .ts_ms = a->arrived_ms };

	json_members(a, p, len, m, mem);
	json_meta(a, mem, &r);
	json_key_value(a, mem, &r);
	if (a->o->keep_offsets)
		keep_offset_check(a, &r);
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 256;
		h->v = cli_realloc(h->v, h->cap * sizeof *h->v);
	}
	h->v[h->n++] = r;
	batch_add(a, elog_record_size(r.key_len, r.value_len));
}

/* Hand the records held for the batch to the library, which lays them
 * out; the batch is then written as any other. */
static void release_held(struct appender *a)
{
	struct holding *h = &a->held;
	const struct opts *o = a->o;

	for (size_t i = 0; i < h->n; i++) {
		const struct held *r = &h->v[i];
		struct elog_record rec = {
			.offset = r->offset,
			.ts_ms = r->ts_ms,
			.schema = r->schema,
			.key = h->bytes + r->key,
			.key_len = r->key_len,
			.value = h->bytes + r->value,
			.value_len = r->value_len,
		};
		uint64_t *slot = offsets_slot(&a->offsets, &rec);
		int rc;

		/* With --keep-offsets the library is told the offset, and
		 * tells nothing back: each is taken as written once handed
		 * over, which a failure's report words as "may still
		 * appear". */
		if (o->keep_offsets) {
			rc = elog_append_at(a->w, &rec);
			*slot = rec.offset;
		} else {
			rc = elog_append(a->w, &rec, slot);
		}
		if (rc == ELOG_TAKEN || rc == ELOG_INVALID || rc == ELOG_TOOBIG) {
			/* None of the batch is acknowledged: the program ends
			 * without writing what the library holds of it. */
			flusher_idle(a);
			cli_die(cli_status(rc), a->o->dir, "line %llu: %s",
			        (unsigned long long)r->recno, elog_errmsg(a->w));
		}
		if (rc != 0) {
			flusher_idle(a);
			die_write_failed(a, rc, elog_errmsg(a->w));
		}
	}
	h->n = 0;
	h->len = 0;
}

/* One record of input, without its delimiter. */
static void add_record(struct appender *a, const char *p, size_t len)
{
	const struct opts *o = a->o;
	struct elog_record rec = { .ts_ms = a->arrived_ms, .schema = o->schema };
	int rc;

	a->recno++;
	if (o->json) {
		add_json(a, p, len);
		return;
	}
	if (o->ts_input)
		p = take_timestamp(a, p, &len, &rec.ts_ms);
	if (o->ts_input && ts_future(rec.ts_ms, cli_now_ms(), o->max_skew_ms))
		input_error(a, "timestamp %lld lies more than --max-skew ahead of the clock",
		            (long long)rec.ts_ms);
	if (o->key != NULL) {
		rec.key = o->key;
		rec.key_len = o->key_len;
	} else if (o->key_delim != NULL) {
		const char *d = memmem(p, len, o->key_delim, o->key_delim_len);

		/* As with kcat, a line without the delimiter is a value with
		 * no key. */
		if (d != NULL) {
			rec.key = p;
			rec.key_len = (size_t)(d - p);
			len -= rec.key_len + o->key_delim_len;
			p = d + o->key_delim_len;
			if (rec.key_len > ELOG_MAX_KEY)
				input_error(a, "the key is longer than 65535 bytes");
		}
	}
	rec.value = p;
	rec.value_len = len;
	rc = elog_append(a->w, &rec, offsets_slot(&a->offsets, &rec));
	if (rc == ELOG_TOOBIG)
		input_error(a, "the record is larger than the limit of 16 MiB");
	if (rc == ELOG_INVALID)
		input_error(a, "%s", elog_errmsg(a->w));
	if (rc != 0) {
		/* The writer failed (in a flush it made by itself, or in the
		 * flusher's, whose message then says why). */
		flusher_idle(a);
		die_write_failed(a, rc, elog_errmsg(a->w));
	}

	batch_add(a, elog_record_size(rec.key_len, rec.value_len));
}

/* Whether stdin has data (or its end) to read within timeout_ms (-1: wait
 * for it); a stop signal counts as the end of the input. */
static int input_ready(int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = STDIN_FILENO, .events = POLLIN },
		{ .fd = stop_pipe[0], .events = POLLIN },
	};
	int n;

	do
		n = poll(pfd, 2, timeout_ms);
	while (n < 0 && errno == EINTR && !stop_signal);
	return n != 0 || stop_signal;
}

/* Before blocking in read(2), decide whether the batch waits for company:
 * it does while more input is ready and, with --linger, for what is left
 * of the linger time since its first record.  1 when it found input (or
 * its end, or a stop signal) ready, so that read(2) will not block. */
static int maybe_commit(struct appender *a)
{
	int64_t left;

	if (a->batch_n == 0)
		return 0;
	left = a->batch_start + (int64_t)a->o->linger_ms - cli_monotonic_ms();
	if (left <= 0) {
		if (a->o->linger_ms > 0)
			commit(a, 0);
		else if (input_ready(0))
			return 1;
		else
			commit(a, 0);
		return 0;
	}
	if (input_ready(left > INT_MAX ? INT_MAX : (int)left))
		return 1;
	commit(a, 0);
	return 0;
}

/* The input buffer starts small, so that a one-shot append takes it from
 * pages the heap already has instead of mapping a megabyte, and doubles
 * while reads fill it (input arrives faster than it is taken) up to
 * READ_MAX, beyond only for a record that needs it. */
#define READ_FIRST (8u << 10)
#define READ_MAX (1u << 20)

static void run(struct appender *a)
{
	const struct opts *o = a->o;
	/* A record of input longer than this cannot fit in a record even
	 * after its timestamp and key delimiter are taken off, so it is
	 * refused without reading the rest of it. */
	size_t limit = ELOG_MAX_RECORD + TS_FIELD_MAX + 1 + o->key_delim_len;
	/* A JSON line writes a byte in up to six ("\u0001"). */
	if (o->json)
		limit = 6 * (size_t)ELOG_MAX_RECORD + 4096;
	size_t cap = READ_FIRST, len = 0, start = 0, scanned = 0;
	char *buf = cli_realloc(NULL, cap);
	int eof = 0, filled = 0;

	for (;;) {
		char *end;
		ssize_t n;

		/* Every complete record in the buffer; scanned remembers how
		 * far the search got, so a long record is searched once. */
		while ((end = memchr(buf + scanned, o->delim, len - scanned)) != NULL) {
			add_record(a, buf + start, (size_t)(end - (buf + start)));
			start = scanned = (size_t)(end - buf) + 1;
		}
		scanned = len;
		if (eof) {
			if (start < len)
				add_record(a, buf + start, len - start);
			commit_wait(a);
			break;
		}
		if (start > 0) {
			memmove(buf, buf + start, len - start);
			len -= start;
			scanned -= start;
			start = 0;
		}
		if (len > limit) {
			a->recno++;
			input_error(a, "the record is larger than the limit of 16 MiB");
		}
		if (len == cap || (filled && cap < READ_MAX)) {
			cap *= 2;
			buf = cli_realloc(buf, cap);
		}
		if (!maybe_commit(a) && !stop_signal)
			input_ready(-1);
		if (stop_signal) {
			eof = 1;
			continue;
		}
		n = read(STDIN_FILENO, buf + len, cap - len);
		filled = n > 0 && (size_t)n == cap - len;
		a->arrived_ms = cli_now_ms();
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail(a, CLI_EX_IO, "stdin: %s", cli_strerror(errno));
		}
		if (n == 0)
			eof = 1;
		len += (size_t)n;
	}
	free(buf);
}

/* --compress zstd[:LEVEL] */
static void parse_compress(struct elog_options *o, const char *arg)
{
	if (strncmp(arg, "zstd", 4) != 0 || (arg[4] != '\0' && arg[4] != ':'))
		cli_usage_error("--compress: unknown method '%s' (only zstd)", arg);
	if (!elog_have_zstd())
		cli_usage_error("--compress: this build has no zstd support");
	o->compression = ELOG_COMPRESS_ZSTD;
	if (arg[4] == ':')
		o->compression_level = (int)cli_arg_u64("--compress", arg + 5, 1, 19);
}

/* The command line, into o. */
static void parse_args(int argc, char *argv[], struct opts *o)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":0K:k:s:tpvh", long_options, NULL)) != -1) {
		switch (c) {
		case '0':
			o->delim = '\0';
			break;
		case 'K':
			o->key_delim = optarg;
			o->key_delim_len = strlen(optarg);
			if (o->key_delim_len == 0)
				cli_usage_error("-K: the delimiter is empty");
			break;
		case 'k':
			o->key = optarg;
			o->key_len = strlen(optarg);
			if (o->key_len > ELOG_MAX_KEY)
				cli_usage_error("-k: the key is longer than 65535 bytes");
			break;
		case 's':
			o->schema = (uint16_t)cli_arg_u64("-s", optarg, 0, UINT16_MAX);
			break;
		case 't':
			o->ts_input = 1;
			break;
		case OPT_MAX_SKEW:
			o->max_skew_ms = cli_arg_duration("--max-skew", optarg);
			o->max_skew_given = 1;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_KEEP_OFFSETS:
			o->keep_offsets = 1;
			break;
		case 'p':
			o->print_offsets = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case OPT_BATCH:
			o->batch_records = cli_arg_u64("--batch", optarg, 1, UINT64_MAX);
			break;
		case OPT_BATCH_BYTES:
			o->batch_bytes = cli_arg_size("--batch-bytes", optarg);
			if (o->batch_bytes == 0)
				cli_usage_error("--batch-bytes: the size is zero");
			break;
		case OPT_LINGER:
			o->linger_ms = cli_arg_duration("--linger", optarg);
			break;
		case OPT_SYNC:
			o->batch_records = 1;
			o->sync = 1;
			break;
		case OPT_EXCLUSIVE:
			o->create.exclusive = 1;
			break;
		case OPT_WAIT:
			o->create.wait_ms = (int64_t)cli_arg_duration("--wait", optarg);
			/* 0 asks the library for its default; --wait 0 means
			 * "do not wait", as near as it gets. */
			if (o->create.wait_ms == 0)
				o->create.wait_ms = 1;
			break;
		case OPT_SEGMENT_BYTES:
			o->create.segment_bytes = cli_arg_size_range("--segment-bytes", optarg,
			                                             ELOG_SEGMENT_BYTES_MIN,
			                                             ELOG_SEGMENT_BYTES_MAX);
			break;
		case OPT_INDEX_INTERVAL: {
			o->create.index_interval = (uint32_t)
			        cli_arg_size_range("--index-interval", optarg,
			                           ELOG_INDEX_INTERVAL_MIN,
			                           ELOG_INDEX_INTERVAL_MAX);
			break;
		}
		case OPT_RETAIN_AGE:
			o->create.retain_ms = cli_arg_limit_duration("--retain-age", optarg);
			break;
		case OPT_RETAIN_BYTES:
			o->create.retain_bytes = cli_arg_limit_size("--retain-bytes", optarg);
			break;
		case OPT_COMPRESS:
			parse_compress(&o->create, optarg);
			break;
		case OPT_NO_DICTIONARY:
			o->create.no_dictionary = 1;
			break;
		case OPT_CLEANUP:
			o->create.cleanup = cli_arg_cleanup("--cleanup", optarg);
			break;
		default:
			cli_common_option(c, argv, usage_text);
		}
	}
	if (o->key != NULL && o->key_delim != NULL)
		cli_usage_error("-k and -K cannot be used together");
	if (o->keep_offsets && !o->json)
		cli_usage_error("--keep-offsets goes with --json (the offsets are read from it)");
	/* A JSON line says all a record is: nothing to add to it. */
	if (o->json && (o->delim != '\n' || o->key_delim || o->key || o->schema || o->ts_input))
		cli_usage_error("--json takes the key, value, time and schema from each line: "
		                "not with -0, -K, -k, -s or -t");
	o->create.create = 1;
	/* The library flushes by itself when its buffer passes batch_bytes;
	 * leave that to the batching here unless a record is huge. */
	o->create.batch_bytes = o->batch_bytes > SIZE_MAX / 2 ? SIZE_MAX : 2 * o->batch_bytes;
	o->dir = cli_dir_operand(argc - optind, argv + optind);
}

/* -v: what the run appended, on standard error. */
static void report(const struct appender *a)
{
	if (a->total == 0) {
		cli_warn(a->o->dir, "appended 0 records");
		return;
	}
	cli_warn(a->o->dir, "appended %llu record%s (offsets %llu-%llu) in %llu batch%s",
	         (unsigned long long)a->total, a->total == 1 ? "" : "s",
	         (unsigned long long)a->first_offset, (unsigned long long)a->last_offset,
	         (unsigned long long)a->batches, a->batches == 1 ? "" : "es");
}

/* Open the log (creating it, with the settings of o->create, if need
 * be) for a run. */
static void appender_open(struct appender *a)
{
	int rc = elog_open(&a->w, a->o->dir, &a->o->create);
	if (rc != 0)
		cli_die_elog(a->o->dir, rc, a->w != NULL ? elog_errmsg(a->w) : NULL);
	tell_notice(a);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
}

/* After the input: the last batch durable, the log closed. */
static void appender_close(struct appender *a)
{
	flusher_stop(a);
	int rc = elog_close(a->w);
	if (rc != 0)
		cli_die_elog(a->o->dir, rc, NULL);
	offsets_free(&a->offsets);
	offsets_free(&a->f_offsets);
	free(a->held.v);
	free(a->held.bytes);
	free(a->held.scratch);
}

int main(int argc, char *argv[])
{
	struct opts o = { .delim = '\n',
		          .batch_bytes = 1 << 20,
		          .max_skew_ms = MAX_SKEW_DEFAULT_MS };
	struct appender a = { .o = &o };

	cli_init(argv[0]);
	parse_args(argc, argv, &o);
	/* The offsets are a report; the input is the work.  A reader of
	 * them that goes away (elog-append -p | head -1) does not stop the
	 * appending of the rest. */
	cli_stdout_optional();
	stop_signals_catch();
	appender_open(&a);
	run(&a);
	appender_close(&a);
	if (o.verbose)
		report(&a);
	/* A stop signal ended the input: die of it, now that it is all
	 * appended, as a program that did not catch it would. */
	if (stop_signal != 0)
		cli_die_of_signal(stop_signal);
	return CLI_EX_OK;
}
