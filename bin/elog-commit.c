/*
 * elog-commit: commit a named consumer's offset, from an argument or from the
 * lines of a pipeline; list and delete consumers.  See elog-commit(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
        "usage: elog-commit [-T] [-e duration] dir name [offset]\n"
        "       elog-commit --create dir name [offset]\n"
        "       elog-commit -l [--json] dir\n"
        "       elog-commit -d dir name\n"
        "       elog-commit --ack-loss dir name\n"
        "       elog-commit --log-id dir\n"
        "       elog-commit -h | --help | --version\n"
        "\n"
        "  -T, --tee                  copy each input line to stdout once committed\n"
        "  -e, --every duration       commit from stdin at most this often\n"
        "  --create                   make consumer name, before the first record\n"
        "  -l, --list                 list the consumers\n"
        "  --json                     with -l: JSON lines\n"
        "  -d, --delete               forget consumer name\n"
        "  --ack-loss                 acknowledge name's loss to retention\n"
        "  --log-id                   print the log's id\n"
        "  -h, --help                 print this help and exit\n"
        "  --version                  print the version and exit\n";

/* Without --every, the latest offset is committed at most once a second:
 * a crash replays at most about a second of records, and a fast pipeline
 * pays for one fsync'ed rename a second, not one per record. */
#define DEFAULT_EVERY_MS 1000

/* With -T, lines wait for the commit that covers them.  Past this many bytes
 * waiting, commit at once rather than hold more: memory stays bounded and the
 * pipeline downstream keeps moving. */
#define HOLD_MAX (1u << 20)

/* The longest input line: elog-cat's line for the largest record with a
 * value written entirely as \u escapes stays below this. */
#define LINE_MAX_BYTES (256u << 20)

enum { OPT_JSON = 256, OPT_LOG_ID, OPT_ACK_LOSS, OPT_CREATE };

static const struct option long_options[] = {
	{ "tee", no_argument, NULL, 'T' },
	{ "every", required_argument, NULL, 'e' },
	{ "list", no_argument, NULL, 'l' },
	/* -d takes DIR NAME as operands, as a commit does; "-dNAME DIR"
	 * and "--delete=NAME DIR" of the older order still work. */
	{ "delete", optional_argument, NULL, 'd' },
	{ "ack-loss", no_argument, NULL, OPT_ACK_LOSS },
	{ "create", no_argument, NULL, OPT_CREATE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "log-id", no_argument, NULL, OPT_LOG_ID },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, CLI_OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

/*
 * Listing.
 */

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* The header of -l, one word over each column. */
static const char *const heads[] = { "NAME", "OFFSET", "LAG", "COMMITTED" };

static noreturn void list(const char *dir, int json)
{
	char msg[ELOG_MSG_MAX], when[32];
	struct elog_consumer *c;
	int wname = (int)strlen(heads[0]), woff = (int)strlen(heads[1]);
	int wlag = (int)strlen(heads[2]);
	size_t n;
	int rc;

	rc = elog_consumer_list(dir, &c, &n, msg);
	if (rc)
		cli_die_elog(dir, rc, msg);
	for (size_t i = 0; i < n; i++) {
		int w = (int)strlen(c[i].name);
		wname = w > wname ? w : wname;
		woff = digits(c[i].offset) > woff ? digits(c[i].offset) : woff;
		wlag = digits(c[i].lag) > wlag ? digits(c[i].lag) : wlag;
	}
	/* A header for people, over the columns; scripts read --json, whose
	 * lines have none. */
	if (n > 0 && !json)
		cli_printf("%-*s %*s %*s %s\n", wname, heads[0], woff, heads[1], wlag, heads[2],
		           heads[3]);
	for (size_t i = 0; i < n; i++) {
		if (json) {
			/* Names need no escaping: their alphabet has none. */
			cli_printf("{\"name\":\"%s\",\"offset\":", c[i].name);
			if (c[i].uncommitted)
				cli_puts("null");
			else
				cli_put_u64(c[i].offset);
			cli_printf(",\"lag\":%" PRIu64 ",\"lost\":%" PRIu64, c[i].lag, c[i].lost);
			if (c[i].lost)
				cli_printf(",\"lost_first\":%" PRIu64 ",\"lost_last\":%" PRIu64,
				           c[i].lost_first, c[i].lost_last);
			if (c[i].uncommitted)
				cli_printf(",\"committed_ms\":null,\"created_ms\":%" PRId64,
				           c[i].committed_ms);
			else
				cli_printf(",\"committed_ms\":%" PRId64, c[i].committed_ms);
			cli_printf(",\"next\":%" PRIu64 "}\n", c[i].next);
			continue;
		}
		if (cli_format_time(c[i].committed_ms, when) < 0)
			strcpy(when, "-");
		/* Names to the left, numbers to the right of their column; a
		 * consumer created and not yet committed has no offset. */
		if (c[i].uncommitted)
			cli_printf("%-*s %*s %*" PRIu64 " never (created %s)", wname, c[i].name, woff,
			           "-", wlag, c[i].lag, when);
		else
			cli_printf("%-*s %*" PRIu64 " %*" PRIu64 " %s", wname, c[i].name, woff,
			           c[i].offset, wlag, c[i].lag, when);
		if (c[i].lost)
			cli_printf(" LOST %" PRIu64 " to retention (offsets %" PRIu64 "-%" PRIu64
			           ")",
			           c[i].lost, c[i].lost_first, c[i].lost_last);
		cli_putc('\n');
	}
	free(c);
	cli_exit(CLI_EX_OK);
}

/*
 * Reading offsets from standard input.
 */

/* Parse the JSON number at p (end e) as an offset: digits only, no sign,
 * fraction or exponent, no leading zero. */
static int json_offset(const char *p, const char *e, uint64_t *v)
{
	uint64_t x = 0;
	const char *s = p;

	for (; p < e && *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	if (p == s || (*s == '0' && p - s > 1) || (p < e && *p != ',' && *p != '}'))
		return -1;
	*v = x;
	return 0;
}

/* Skip one JSON value of compact, well-formed text: a string, a container
 * (tracking depth and strings) or a scalar up to the next ',' or '}'. */
static const char *skip_value(const char *p, const char *e)
{
	int depth = 0, in_str = 0;

	for (; p < e; p++) {
		char c = *p;
		if (in_str) {
			if (c == '\\')
				p++;
			else if (c == '"')
				in_str = 0;
			if (!in_str && depth == 0)
				return p + 1;
			continue;
		}
		if (c == '"')
			in_str = 1;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']') {
			if (depth == 0)
				return p;
			if (--depth == 0)
				return p + 1;
		} else if (c == ',' && depth == 0)
			return p;
	}
	return p;
}

/* The top-level "offset" member of a JSON object line.  The line is checked
 * and compacted first, so the walk below only meets well-formed JSON. */
static int line_json(const char *line, size_t len, uint64_t *v)
{
	char *buf = cli_realloc(NULL, len ? len : 1);
	const char *p, *e, *compact;
	size_t n;
	int found = 0, rc = -1;

	if (cli_json_compact(line, len, buf, &compact, &n) < 0 || n < 2 || compact[0] != '{')
		goto out;
	p = compact + 1;
	e = compact + n;
	while (p < e && *p == '"') {
		const char *key = p + 1, *val;
		p = skip_value(p, e);
		if (p >= e || *p != ':')
			goto out;
		val = ++p;
		/* Compare the raw key: elog-cat never escapes "offset". */
		if (p - key == 8 && memcmp(key, "offset\":", 8) == 0) {
			if (found || json_offset(val, e, v) < 0)
				goto out;
			found = 1;
		}
		p = skip_value(p, e);
		if (p < e && *p == ',')
			p++;
	}
	rc = found ? 0 : -1;
out:
	free(buf);
	return rc;
}

/* 1: *v is the line's offset; 0: a blank line; -1: neither. */
static int line_offset(const char *line, size_t len, uint64_t *v)
{
	const char *p = line, *e = line + len;
	uint64_t x = 0;

	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (p == e)
		return 0;
	if (*p == '{')
		return line_json(p, (size_t)(e - p), v) < 0 ? -1 : 1;
	for (const char *s = p; s < e; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	return 1;
}

struct pipe_state {
	const char *dir, *name;
	int tee;
	uint64_t every_ms;
	int pending;         /* an offset is waiting to be committed */
	uint64_t offset;     /* the latest offset seen */
	int64_t last_commit; /* monotonic ms of the last commit */
	char *held;          /* -T: lines waiting for their commit */
	size_t held_len, held_cap;
	uintmax_t lineno;
};

/* Commit the latest offset, then release the lines it covers. */
static void flush_pending(struct pipe_state *st)
{
	char msg[ELOG_MSG_MAX];

	if (st->pending) {
		int rc = elog_consumer_commit(st->dir, st->name, st->offset, msg);
		if (rc)
			cli_die_elog(st->dir, rc, msg);
		st->pending = 0;
	}
	st->last_commit = cli_monotonic_ms();
	if (st->held_len) {
		cli_write(st->held, st->held_len);
		st->held_len = 0;
	}
	/* A line released downstream goes out now, not when a buffer fills:
	 * the next stage may be waiting for it. */
	cli_flush();
}

static void hold(struct pipe_state *st, const char *line, size_t len)
{
	if (st->held_len + len > st->held_cap) {
		size_t cap = st->held_cap ? st->held_cap : 4096;
		while (cap < st->held_len + len)
			cap *= 2;
		st->held = cli_realloc(st->held, cap);
		st->held_cap = cap;
	}
	memcpy(st->held + st->held_len, line, len);
	st->held_len += len;
}

/* One input line with its newline, if it had one. */
static void take_line(struct pipe_state *st, const char *line, size_t len)
{
	size_t body = len && line[len - 1] == '\n' ? len - 1 : len;
	uint64_t v;
	int r;

	st->lineno++;
	r = line_offset(line, body, &v);
	if (r < 0) {
		/* The lines before this one were processed: keep them. */
		flush_pending(st);
		cli_die(CLI_EX_USAGE, "stdin",
		        "line %ju: not an offset or a JSON "
		        "object with an \"offset\" member",
		        st->lineno);
	}
	if (r > 0) {
		st->offset = v;
		st->pending = 1;
	}
	if (st->tee)
		hold(st, line, len);
	if (!st->pending && st->held_len) {
		/* Blank lines with nothing to commit pass straight through. */
		cli_write(st->held, st->held_len);
		st->held_len = 0;
		cli_flush();
	}
	if (st->held_len > HOLD_MAX)
		flush_pending(st);
}

static volatile sig_atomic_t got_signal;
static sigset_t orig_mask;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* SIGINT, SIGTERM and SIGHUP are blocked except while waiting in ppoll(2),
 * so that one arriving at any moment ends the wait, and the offsets already
 * read get committed before the program dies of it. */
static void catch_signals(void)
{
	struct sigaction sa;
	sigset_t block;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &orig_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Wait for input on stdin, committing the latest offset when it is due and
 * dying of a stop signal once what was read is committed.  1 when stdin is
 * ready to read, 0 when the caller should look again. */
static int input_wait(struct pipe_state *st)
{
	struct pollfd pfd = { STDIN_FILENO, POLLIN, 0 };
	struct timespec ts, *timeout = NULL;

	if (got_signal) {
		flush_pending(st);
		cli_die_of_signal(got_signal);
	}
	if (st->pending) {
		int64_t due = st->last_commit + (int64_t)st->every_ms - cli_monotonic_ms();
		if (due <= 0) {
			flush_pending(st);
			return 0;
		}
		ts.tv_sec = due / 1000;
		ts.tv_nsec = (long)(due % 1000) * 1000000;
		timeout = &ts;
	}
	if (ppoll(&pfd, 1, timeout, &orig_mask) < 0) {
		if (errno == EINTR)
			return 0;
		cli_die(CLI_EX_IO, "stdin", "%s", cli_strerror(errno));
	}
	return pfd.revents != 0;
}

/* Before a commit: consumer name must exist, or with --create be made
 * (before the log's first record; an existing one is left as it is).  A
 * commit never makes a consumer by itself: a mistyped name would be a
 * second consumer, which retain-consumers=protect keeps every later record
 * for. */
static void consumer_ready(const char *dir, const char *name, int create)
{
	char msg[ELOG_MSG_MAX], qdir[PATH_MAX + 16];
	struct elog_consumer c;
	int rc = create ? elog_consumer_create(dir, name, msg) : elog_consumer_get(dir, name, &c, msg);

	if (rc == ELOG_NOCONSUMER) {
		cli_shell_word(qdir, sizeof qdir, dir);
		cli_die(cli_status(rc), dir,
		        "no consumer \"%s\" (elog-commit -l lists them); to make it: "
		        "elog-commit --create %s %s",
		        name, qdir, name);
	}
	if (rc != 0)
		cli_die_elog(dir, rc, msg);
}

static noreturn void commit_stdin(const char *dir, const char *name, int tee, uint64_t every_ms)
{
	struct pipe_state st = { .dir = dir, .name = name, .tee = tee, .every_ms = every_ms };
	char *buf = NULL;
	size_t len = 0, cap = 0, scanned = 0;

	/* Fail before reading anything when the consumer does not exist or
	 * the log or consumers.json is unusable, rather than at the first
	 * commit. */
	consumer_ready(dir, name, 0);
	catch_signals();
	st.last_commit = cli_monotonic_ms() - (int64_t)every_ms;
	for (;;) {
		ssize_t got;

		if (!input_wait(&st))
			continue;
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 131072;
			if (cap > LINE_MAX_BYTES + 131072)
				cap = LINE_MAX_BYTES + 131072;
			buf = cli_realloc(buf, cap);
		}
		got = read(STDIN_FILENO, buf + len, cap - len);
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			cli_die(CLI_EX_IO, "stdin", "%s", cli_strerror(errno));
		}
		if (got == 0)
			break;
		len += (size_t)got;
		/* Hand over every complete line; keep the partial one. */
		size_t start = 0;
		for (char *nl; (nl = memchr(buf + scanned, '\n', len - scanned));) {
			size_t end = (size_t)(nl - buf) + 1;
			take_line(&st, buf + start, end - start);
			start = scanned = end;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		scanned = len;
		if (len > LINE_MAX_BYTES) {
			flush_pending(&st);
			cli_die(CLI_EX_USAGE, "stdin", "line %ju: longer than %u bytes",
			        st.lineno + 1, LINE_MAX_BYTES);
		}
	}
	if (len)
		take_line(&st, buf, len);
	/* At EOF the latest offset is always committed. */
	flush_pending(&st);
	free(buf);
	free(st.held);
	cli_exit(CLI_EX_OK);
}

/* --log-id */
static noreturn void print_log_id(const char *dir)
{
	struct elog_settings s;
	int rc;

	if ((rc = elog_settings_read(dir, &s, NULL)) != 0)
		cli_die_elog(dir, rc, NULL);
	cli_puts(s.id);
	cli_putc('\n');
	cli_exit(CLI_EX_OK);
}

/* 1 when path is a log directory: its settings read. */
static int is_log(const char *path)
{
	struct elog_settings s;

	return elog_settings_read(path, &s, NULL) == 0;
}

/* -d dir name */
static noreturn void delete_consumer(const char *dir, const char *name)
{
	char msg[ELOG_MSG_MAX];
	int rc;

	if ((rc = elog_consumer_delete(dir, name, msg)) != 0)
		cli_die_elog(dir, rc, msg);
	cli_exit(CLI_EX_OK);
}

/* --ack-loss dir name */
static noreturn void ack_loss(const char *dir, const char *name)
{
	char msg[ELOG_MSG_MAX];
	int rc;

	if ((rc = elog_consumer_ack_loss(dir, name, msg)) != 0)
		cli_die_elog(dir, rc, msg);
	cli_exit(CLI_EX_OK);
}

/* dir name offset */
static noreturn void commit_offset(const char *dir, const char *name, const char *arg, int create)
{
	char msg[ELOG_MSG_MAX];
	uint64_t offset;
	int rc;

	if (cli_parse_u64(arg, &offset) < 0)
		cli_usage_error("invalid offset '%s'", arg);
	/* With --create, the commit makes the consumer: none is made when
	 * the offset is refused. */
	if (!create)
		consumer_ready(dir, name, 0);
	if ((rc = elog_consumer_commit(dir, name, offset, msg)) != 0)
		cli_die_elog(dir, rc, msg);
	cli_exit(CLI_EX_OK);
}

/* What the command line asks for. */
struct opts {
	const char *dir, *name; /* the operands */
	const char *offset;     /* ... and the offset to commit, or NULL: stdin */
	int tee;                /* -T */
	int create;             /* --create */
	uint64_t every_ms;      /* --every */
	int every_set;
	int list, json;       /* -l, --json */
	int del;              /* -d */
	const char *del_name; /* -dNAME, --delete=NAME (older order) */
	int ack;              /* --ack-loss */
	int log_id;           /* --log-id */
};

/* The operands of -d and --ack-loss: "dir name", as a commit takes them.
 * -d also takes "name dir", its older order, when the first operand is
 * not a log and the second is; the old "-dNAME dir" and
 * "--delete=NAME dir" give the name as the option's argument. */
static void dir_and_name(int argc, char *argv[], struct opts *o)
{
	if (o->del_name) {
		o->dir = cli_dir_operand(argc, argv);
		o->name = o->del_name;
		return;
	}
	if (argc < 1)
		cli_usage_error("missing log directory");
	if (argc < 2)
		cli_usage_error("missing consumer name");
	if (argc > 2)
		cli_usage_error("unexpected argument '%s'", argv[2]);
	o->dir = argv[0];
	o->name = argv[1];
	if (!is_log(argv[0]) && is_log(argv[1])) {
		o->dir = argv[1];
		o->name = argv[0];
	}
}

/* The operands of a commit: dir name [offset]. */
static void commit_operands(int argc, char *argv[], struct opts *o)
{
	if (argc < 1)
		cli_usage_error("missing log directory");
	if (argc < 2)
		cli_usage_error("missing consumer name");
	if (argc > 3)
		cli_usage_error("unexpected argument '%s'", argv[3]);
	if (elog_consumer_name_check(argv[1]) != 0)
		cli_die(CLI_EX_USAGE, argv[0], "consumer name \"%.*s\": %s", ELOG_CONSUMER_NAME_MAX,
		        argv[1], elog_strerror(ELOG_BADNAME));
	o->dir = argv[0];
	o->name = argv[1];
	o->offset = argc == 3 ? argv[2] : NULL;
	if (o->offset != NULL && (o->tee || o->every_set))
		cli_usage_error("-T and --every apply to standard input only");
	if (o->create && (o->tee || o->every_set))
		cli_usage_error("--create reads no standard input: not with -T or --every");
}

/* The command line, into o. */
static void parse_args(int argc, char *argv[], struct opts *o)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":Te:ld::h", long_options, NULL)) != -1) {
		switch (c) {
		case 'T':
			o->tee = 1;
			break;
		case 'e':
			o->every_ms = cli_arg_duration("--every", optarg);
			o->every_set = 1;
			break;
		case 'l':
			o->list = 1;
			break;
		case 'd':
			o->del = 1;
			o->del_name = optarg;
			break;
		case OPT_ACK_LOSS:
			o->ack = 1;
			break;
		case OPT_CREATE:
			o->create = 1;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_LOG_ID:
			o->log_id = 1;
			break;
		default:
			cli_common_option(c, argv, usage_text);
		}
	}
	if (o->list + o->del + o->ack + o->log_id > 1)
		cli_usage_error("-l, -d, --ack-loss and --log-id exclude each other");
	if (o->json && !o->list)
		cli_usage_error("--json goes with -l");
	if ((o->tee || o->every_set || o->create) && (o->list || o->del || o->ack || o->log_id))
		cli_usage_error("-T, --every and --create go with committing only");
	argc -= optind;
	argv += optind;
	if (o->list || o->log_id)
		o->dir = cli_dir_operand(argc, argv);
	else if (o->del || o->ack)
		dir_and_name(argc, argv, o);
	else
		commit_operands(argc, argv, o);
}

int main(int argc, char *argv[])
{
	struct opts o = { .every_ms = DEFAULT_EVERY_MS };

	cli_init(argv[0]);
	parse_args(argc, argv, &o);
	if (o.list)
		list(o.dir, o.json);
	if (o.log_id)
		print_log_id(o.dir);
	if (o.del)
		delete_consumer(o.dir, o.name);
	if (o.ack)
		ack_loss(o.dir, o.name);
	if (o.offset == NULL && o.create) {
		consumer_ready(o.dir, o.name, 1);
		cli_exit(CLI_EX_OK);
	}
	if (o.offset == NULL)
		commit_stdin(o.dir, o.name, o.tee, o.every_ms);
	commit_offset(o.dir, o.name, o.offset, o.create);
}
