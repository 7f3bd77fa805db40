/*
 * cli.c: what every program does the same way: its name in messages, one
 * error line on stderr, the mapping from library codes to exit statuses,
 * dying of a signal, the options -h, --help and --version, and a buffered
 * stdout that turns a closed pipe into a quiet exit.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char *cli_prog = "elog";

/* Set when the program started with stdout closed. */
static int out_closed;

void cli_init(const char *prog)
{
	const char *slash = strrchr(prog, '/');

	cli_prog = slash != NULL ? slash + 1 : prog;
	/* A standard descriptor left closed by the caller would be reused by
	 * the next open(2), and output meant for stdout could land in a
	 * segment file.  Hold each such slot with /dev/null; a closed stdout
	 * is still reported at the first write. */
	struct pollfd std[3] = { { .fd = 0 }, { .fd = 1 }, { .fd = 2 } };
	/* One poll(2) asks for all three (POLLNVAL: not open); should it
	 * fail, fcntl(2) asks each. */
	int polled = poll(std, 3, 0) >= 0;
	for (int fd = 0; fd <= 2; fd++) {
		if (polled ? !(std[fd].revents & POLLNVAL)
		           : fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* Without /dev/null there is nowhere safe to even complain. */
		if (open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
			_exit(CLI_EX_IO);
		if (fd == STDOUT_FILENO)
			out_closed = 1;
	}
	/* A reader that goes away must show up as EPIPE from write(2), so that
	 * the program can exit on purpose instead of being killed mid-batch. */
	signal(SIGPIPE, SIG_IGN);
	/* A file grown past `ulimit -f` must be EFBIG from write(2), an error
	 * with a message and an exit status, not a silent death. */
	signal(SIGXFSZ, SIG_IGN);
}

/* strerror(3) and some library messages begin with a capital ("No such
 * file or directory"); messages here are lowercase.  Only a capital
 * followed by a lowercase letter is lowered, so "LOCK" or "ENOSPC" stay. */
static void put_reason(const char *msg)
{
	/* Each part of "file: reason" is lowered the same way, since the
	 * library puts strerror(3) text after a file name. */
	for (const char *p = msg; *p; p++) {
		int start = p == msg || (p - msg >= 2 && p[-2] == ':' && p[-1] == ' ');
		fputc(start && isupper((unsigned char)p[0]) && islower((unsigned char)p[1])
		              ? tolower((unsigned char)*p)
		              : *p,
		      stderr);
	}
}

const char *cli_strerror(int err)
{
	static char buf[128];

	snprintf(buf, sizeof buf, "%s", strerror(err));
	if (isupper((unsigned char)buf[0]) && islower((unsigned char)buf[1]))
		buf[0] = (char)tolower((unsigned char)buf[0]);
	return buf;
}

void *cli_realloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (p == NULL && size != 0)
		cli_die(CLI_EX_IO, NULL, "out of memory");
	return p;
}

static void vwarn_line(const char *dir, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof msg, fmt, ap);
	/* Whatever went to stdout before this message should appear first
	 * when both are the same terminal or file. */
	cli_flush();
	fprintf(stderr, "%s: ", cli_prog);
	if (dir != NULL)
		fprintf(stderr, "%s: ", dir);
	put_reason(msg);
	fputc('\n', stderr);
}

void cli_warn(const char *dir, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_line(dir, fmt, ap);
	va_end(ap);
}

noreturn void cli_die(int status, const char *dir, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_line(dir, fmt, ap);
	va_end(ap);
	exit(status);
}

int cli_status(int code)
{
	switch (code) {
	case 0:
		return CLI_EX_OK;
	case ELOG_LOCKED:
		return CLI_EX_LOCKED;
	case ELOG_CORRUPT:
	case ELOG_BADVERSION:
	case ELOG_UNSUPPORTED: /* compressed data this build cannot read */
		return CLI_EX_CORRUPT;
	case ELOG_INVALID:
	case ELOG_SETTING: /* a creation option the log has otherwise */
	case ELOG_BADNAME:
	case ELOG_BEYOND:    /* a commit past the durable end */
	case ELOG_TAKEN:     /* an append below it (elog-append --keep-offsets) */
	case ELOG_NOCOMPACT: /* compaction asked of a delete log */
		return CLI_EX_USAGE;
	case ELOG_GAP:
	case ELOG_NOCONSUMER:
		return CLI_EX_NO;
	default:
		/* ELOG_NOTLOG, ELOG_NETFS, ELOG_FAILED, ELOG_TOOBIG and every
		 * errno value: the log could not be used as asked. */
		return CLI_EX_IO;
	}
}

/* What to run next, by the library's code: the library says what is
 * wrong and never names a program; the programs name the command here,
 * in one place, for every message of that code.  Damage sends the user to
 * elog-verify, which says what is damaged and the repair, if any, that
 * gets past it; elog-verify itself words the hints of its problems
 * (ELOG_HINT_*). */
static const char *next_command(int code)
{
	switch (code) {
	case ELOG_SETTING:
		return "change the log's settings with elog-retain --set";
	default:
		return NULL;
	}
}

noreturn void cli_die_elog(const char *dir, int code, const char *msg)
{
	const char *next = next_command(code);

	if (msg == NULL || msg[0] == '\0')
		msg = elog_strerror(code);
	if (code == ELOG_CORRUPT && dir != NULL && strcmp(cli_prog, "elog-verify") != 0)
		cli_die(cli_status(code), dir, "%s; run elog-verify %s to see what is damaged", msg,
		        dir);
	if (next)
		cli_die(cli_status(code), dir, "%s; %s", msg, next);
	cli_die(cli_status(code), dir, "%s", msg);
}

void cli_shell_word(char *buf, size_t size, const char *s)
{
	size_t n = 0;

	if (s[0] != '\0' && s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                                "0123456789/._-+:@%,=")] == '\0') {
		snprintf(buf, size, "%s", s);
		return;
	}
	if (size < 8) {
		buf[0] = '\0';
		return;
	}
	buf[n++] = '\'';
	for (; *s != '\0' && n + 6 < size; s++) {
		if (*s == '\'') {
			memcpy(buf + n, "'\\''", 4);
			n += 4;
		} else {
			buf[n++] = *s;
		}
	}
	buf[n++] = '\'';
	buf[n] = '\0';
}

noreturn void cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_line(NULL, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", cli_prog);
	exit(CLI_EX_USAGE);
}

noreturn void cli_die_of_signal(int sig)
{
	sigset_t set;

	cli_flush();
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	/* Only a signal whose default action is not to end the program gets
	 * here. */
	_exit(128 + sig);
}

noreturn void cli_exit(int status)
{
	cli_flush();
	exit(status);
}

/*
 * stdout.  The programs print through this buffer rather than stdio: it
 * has no locking, numbers are formatted by hand, and a write error is seen
 * at the write that failed, where EPIPE can be told from a full disk.
 */

static char out_buf[64 * 1024];
static size_t out_len;
static int out_epipe_goes_on; /* see cli_stdout_optional() */
static int out_gone;

void cli_stdout_optional(void)
{
	out_epipe_goes_on = 1;
}

int cli_stdout_gone(void)
{
	return out_gone;
}

static void out_drain(const char *p, size_t n)
{
	if (out_gone)
		return;
	if (out_closed && n > 0) {
		out_closed = 0;
		cli_die(CLI_EX_IO, "stdout", "%s", cli_strerror(EBADF));
	}
	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE && out_epipe_goes_on) {
				out_gone = 1;
				return;
			}
			if (errno == EPIPE)
				_exit(CLI_EX_OK);
			out_len = 0;
			cli_die(CLI_EX_IO, "stdout", "%s", cli_strerror(errno));
		}
		p += w;
		n -= (size_t)w;
	}
}

void cli_flush(void)
{
	size_t n = out_len;

	out_len = 0;
	out_drain(out_buf, n);
}

void cli_write(const void *buf, size_t len)
{
	if (len <= sizeof out_buf - out_len) {
		memcpy(out_buf + out_len, buf, len);
		out_len += len;
		return;
	}
	cli_flush();
	if (len >= sizeof out_buf) {
		out_drain(buf, len);
		return;
	}
	memcpy(out_buf, buf, len);
	out_len = len;
}

char *cli_reserve(size_t n)
{
	if (n > sizeof out_buf - out_len)
		cli_flush();
	return out_buf + out_len;
}

void cli_commit(char *end)
{
	out_len = (size_t)(end - out_buf);
}

int cli_printf(const char *fmt, ...)
{
	size_t room = sizeof out_buf - out_len;
	va_list ap;
	int n;

	/* Straight into the buffer; vsnprintf(3) says how long the text is
	 * when it does not fit, and what it wrote past out_len is not
	 * counted. */
	va_start(ap, fmt);
	n = vsnprintf(out_buf + out_len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		cli_die(CLI_EX_IO, "stdout", "%s", cli_strerror(errno));
	if ((size_t)n < room) {
		out_len += (size_t)n;
		return n;
	}
	/* Written again after a flush, or, longer than the whole buffer,
	 * into memory of its own. */
	cli_flush();
	char *big = (size_t)n < sizeof out_buf ? out_buf : cli_realloc(NULL, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	if (big == out_buf) {
		out_len = (size_t)n;
	} else {
		out_drain(big, (size_t)n);
		free(big);
	}
	return n;
}

void cli_putc(char c)
{
	if (out_len == sizeof out_buf)
		cli_flush();
	out_buf[out_len++] = c;
}

void cli_puts(const char *s)
{
	cli_write(s, strlen(s));
}

char *cli_fmt_u64(char *o, uint64_t v)
{
	size_t n = 1;

	for (uint64_t t = v; t >= 10; t /= 10)
		n++;
	for (char *d = o + n; d > o; v /= 10)
		*--d = (char)('0' + v % 10);
	return o + n;
}

char *cli_fmt_i64(char *o, int64_t v)
{
	if (v >= 0)
		return cli_fmt_u64(o, (uint64_t)v);
	*o++ = '-';
	/* Negate in unsigned arithmetic: -INT64_MIN does not fit. */
	return cli_fmt_u64(o, -(uint64_t)v);
}

void cli_put_u64(uint64_t v)
{
	cli_commit(cli_fmt_u64(cli_reserve(CLI_FMT_MAX), v));
}

void cli_put_i64(int64_t v)
{
	cli_commit(cli_fmt_i64(cli_reserve(CLI_FMT_MAX), v));
}

/*
 * Command lines.  getopt's own messages are turned off (opterr = 0) in favour
 * of these, which name the program and not argv[0]'s whole path.
 */

static noreturn void bad_option(int c, char *const argv[])
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	char name[64];

	/* A long option is named as written (without any "=value"); a short
	 * one by its letter, since argv may hold several bundled together. */
	if (strncmp(arg, "--", 2) == 0)
		snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
	else
		snprintf(name, sizeof name, "-%c", optopt);
	if (c == ':')
		cli_usage_error("option %s needs an argument", name);
	cli_usage_error("unknown option %s", name);
}

noreturn void cli_common_option(int c, char *const argv[], const char *usage_text)
{
	switch (c) {
	case 'h':
		cli_puts(usage_text);
		cli_exit(CLI_EX_OK);
	case CLI_OPT_VERSION:
		cli_printf("%s (elog) %s\n", cli_prog, elog_version());
		cli_exit(CLI_EX_OK);
	default:
		bad_option(c, argv);
	}
}

const char *cli_dir_operand(int argc, char *const argv[])
{
	if (argc < 1)
		cli_usage_error("missing log directory");
	if (argc > 1)
		cli_usage_error("unexpected argument '%s'", argv[1]);
	return argv[0];
}
