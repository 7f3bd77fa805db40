/*
 * cli.h: what the elog programs share: exit statuses, error printing, the
 * options every program takes, parsers for the durations, sizes and times
 * of elog(7) ARGUMENTS, stdout, and JSON output.  cli.c holds messages,
 * options and stdout, parse.c the parsers and clocks, json.c JSON, and
 * summary.c elog-cat -L.  Only programs include it; the library never
 * prints.
 *
 * Every program has the same shape (bin/elog-compact.c is the shortest):
 * a usage_text that is its man page's SYNOPSIS and option list, one
 * long_options table, one struct opts holding what the command line asks
 * for (the log directory included), filled by
 *
 *     static void parse_args(int argc, char *argv[], struct opts *o);
 *
 * and a main of about twenty lines: cli_init(), parse_args(), the library
 * calls, the report on stdout (cli_printf() for a line of several fields),
 * and the exit status of elog(7).
 */
#ifndef ELOG_CLI_H
#define ELOG_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdnoreturn.h>

#include "elog.h"

/* Exit statuses, the same for every program: elog(7) EXIT STATUS, and the
 * EXIT STATUS of each program's page.  They are not <sysexits.h>'s. */
enum {
	CLI_EX_OK = 0,      /* success */
	CLI_EX_NO = 1,      /* a negative answer: damage found, nothing matched,
	                     * a gap under --strict */
	CLI_EX_USAGE = 2,   /* bad usage: unknown flag, bad argument */
	CLI_EX_LOCKED = 3,  /* the log is locked by another writer */
	CLI_EX_CORRUPT = 4, /* corrupt or unreadable data, unknown format version */
	CLI_EX_IO = 5       /* any other error: I/O, permissions, not a log */
};

/* Set the program name used in messages; ignore SIGPIPE so that a closed
 * stdout shows up as EPIPE, which cli_flush()/cli_write() turn into a quiet
 * exit with status 0. */
void cli_init(const char *prog);
extern const char *cli_prog;

/* "prog: dir: message" on stderr (dir may be NULL). */
void cli_warn(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
noreturn void cli_die(int status, const char *dir, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* strerror(3) in lowercase, as messages here are ("no such file..."). */
const char *cli_strerror(int err);
/* realloc(3), or exit with "out of memory". */
void *cli_realloc(void *p, size_t size);
/* Map a library code to an exit status. */
int cli_status(int code);
/* Print "prog: dir: msg" for a library error (msg is the handle's message,
 * or elog_strerror(code) when msg is NULL or empty) and exit. */
noreturn void cli_die_elog(const char *dir, int code, const char *msg);
/* s as one shell word, for a command a message names: as it is when it
 * needs no quoting, else in single quotes (truncated to fit size). */
void cli_shell_word(char *buf, size_t size, const char *s);
/* "prog: message" + "Try 'prog --help'." and exit CLI_EX_USAGE. */
noreturn void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Die of signal sig, as a program that did not catch it would (status
 * 128 + sig in a shell), after flushing stdout. */
noreturn void cli_die_of_signal(int sig);

/* Parsers: 0 on success, -1 on a malformed or out-of-range argument. */
int cli_parse_duration(const char *s, uint64_t *ms); /* 500ms 30s 15m 2h 7d 4w */
int cli_parse_size(const char *s, uint64_t *bytes);  /* 4096 512K 64M 10G 1T */
/* RFC 3339, a date alone or local time without zone, @EPOCH_MS, or -DUR
 * relative to now_ms. */
int cli_parse_time(const char *s, int64_t now_ms, int64_t *ms);
int cli_parse_u64(const char *s, uint64_t *v);
int64_t cli_now_ms(void);       /* wall clock */
int64_t cli_monotonic_ms(void); /* for intervals */
/* ms since the epoch as RFC 3339 in UTC with milliseconds
 * ("2026-11-29T03:00:00.000Z") into buf; -1, leaving nothing usable in buf,
 * when the year is outside 0..9999. */
#define CLI_TIME_MAX 32
int cli_format_time(int64_t ms, char buf[CLI_TIME_MAX]);
/* Write ms on stdout as cli_format_time() does, or as "@MS" for a year it
 * cannot write; both read back with cli_parse_time(). */
void cli_put_time(int64_t ms);
/* bytes for people: "512 B", "1.5 KiB", "95.4 MiB" (one decimal). */
#define CLI_SIZE_MAX 32
void cli_format_size(uint64_t bytes, char buf[CLI_SIZE_MAX]);
/* ms as a duration that cli_parse_duration() reads back: "7d", "90m",
 * "1500ms". */
#define CLI_DURATION_MAX 32
void cli_format_duration(uint64_t ms, char buf[CLI_DURATION_MAX]);

/* Option arguments: the parsers above, stopping with a usage error that
 * names the option (opt, e.g. "--since") and quotes the argument. */
uint64_t cli_arg_u64(const char *opt, const char *arg, uint64_t min, uint64_t max);
uint64_t cli_arg_size(const char *opt, const char *arg);
uint64_t cli_arg_duration(const char *opt, const char *arg);
/* A size within [min, max], the limits named in the units the user wrote
 * ("--segment-bytes: 1K is out of range (4K to 1G)"). */
uint64_t cli_arg_size_range(const char *opt, const char *arg, uint64_t min, uint64_t max);
/* A limit (of retention) that must be more than 0: leaving the option out
 * is how to say "no limit". */
uint64_t cli_arg_limit_duration(const char *opt, const char *arg);
uint64_t cli_arg_limit_size(const char *opt, const char *arg);
int64_t cli_arg_time(const char *opt, const char *arg);
/* "delete" or "compact": ELOG_CLEANUP_DELETE or ELOG_CLEANUP_COMPACT. */
int cli_arg_cleanup(const char *opt, const char *arg);
/* The options every program takes, in its struct option table with the
 * optstring holding 'h': { "help", no_argument, NULL, 'h' } and
 * { "version", no_argument, NULL, CLI_OPT_VERSION }.  CLI_OPT_VERSION is
 * above every program's own option codes. */
#define CLI_OPT_VERSION 0x7f00
/* The default case of a program's getopt_long() loop (its optstring must
 * start with ':'): -h and --help print usage_text and exit 0, --version
 * prints "prog (elog) VERSION" and exits 0; anything else ('?' or ':') is
 * reported as an unknown option or a missing argument. */
noreturn void cli_common_option(int c, char *const argv[], const char *usage_text);
/* Check that exactly one operand, the log directory, is left. */
const char *cli_dir_operand(int argc, char *const argv[]);

/* Flush stdout and exit. */
noreturn void cli_exit(int status);

/* stdout, through a buffer of the programs' own (cli.c): write, and on EPIPE
 * exit 0 quietly; on another error print it and exit CLI_EX_IO.  Everything a
 * program prints on stdout goes through these, so that the order holds. */
void cli_write(const void *buf, size_t len);
void cli_putc(char c);
void cli_puts(const char *s);
void cli_put_u64(uint64_t v);
void cli_put_i64(int64_t v);
void cli_flush(void);
/* printf(3) into the same buffer: for a line built of several fields.  The
 * number of bytes written. */
int cli_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Room for n bytes (n <= CLI_RESERVE_MAX) at the end of the stdout buffer,
 * flushing it first when needed; write there, then hand the end of what was
 * written to cli_commit().  Lets a writer fill the buffer without a call
 * per piece. */
#define CLI_RESERVE_MAX (32 * 1024)
char *cli_reserve(size_t n);
void cli_commit(char *end);
/* Write v in decimal at o (room for CLI_FMT_MAX bytes); the end. */
#define CLI_FMT_MAX 21
char *cli_fmt_u64(char *o, uint64_t v);
char *cli_fmt_i64(char *o, int64_t v);
/* For a program whose output is a report on work it must finish (the
 * offsets of elog-append -p): when the reader of stdout goes away, output
 * is dropped from then on, silently, instead of ending the program. */
void cli_stdout_optional(void);
int cli_stdout_gone(void);

/* JSON output (json.c). */
/* 1 when buf holds only well-formed UTF-8 (RFC 3629: no overlong forms,
 * no surrogates), else 0. */
int cli_utf8_valid(const void *buf, size_t len);
/* Write buf, which must be valid UTF-8, as a quoted JSON string. */
void cli_json_string(const void *buf, size_t len);
/* Write buf in standard base64 with padding (RFC 4648), unquoted. */
void cli_base64(const void *buf, size_t len);
/* The deepest nesting of objects and arrays cli_json_compact() accepts. */
#define CLI_JSON_MAX_DEPTH 128
/* Check that in holds exactly one JSON value (RFC 8259, UTF-8, with no
 * unpaired surrogate escapes), and give it without the white space between
 * tokens: *res is in itself when it has none, else out (room for len bytes)
 * holding the compact copy.  0 on success, -1 when it is not such a text. */
int cli_json_compact(const void *in, size_t len, char *out, const char **res, size_t *res_len);

/* Reading JSON lines (json.c), for elog-append --json. */
/* A member of an object: its name as it lies in the text (quotes
 * included) and its value, without the white space around it. */
struct cli_jmember {
	const char *name;
	size_t name_len;
	const char *value;
	size_t len;
};
/* Check that in holds exactly one JSON object (as cli_json_compact()
 * checks a value) and give its members in order in m (room for max).
 * 0; -1 when in is not a JSON object; -2 when it has more than max
 * members. */
int cli_json_object(const void *in, size_t len, struct cli_jmember *m, size_t max, size_t *n);
/* 1 when m's name is name (ASCII, written without escapes). */
int cli_json_name_is(const struct cli_jmember *m, const char *name);
/* The bytes of the JSON string of len bytes at in (quotes included, as
 * cli_json_object() checked it), into out (room for len bytes); returns
 * how many. */
size_t cli_json_string_decode(const char *in, size_t len, char *out);
/* Standard base64 with padding (RFC 4648) into out (room for len / 4 * 3
 * bytes): 0, or -1 when in is not such a text. */
int cli_base64_decode(const char *in, size_t len, unsigned char *out, size_t *out_len);

/* elog-cat -L (summary.c): print the summary of the log dir, for people
 * or (json) as one JSON object, and exit. */
noreturn void cli_summary(const char *dir, int json);
/* The sentence of s->pending, the records a writer that is gone left past
 * the durable end (elog-cat -L, elog-verify), into buf; "" when none. */
const char *cli_pending_text(const struct elog_summary *s, char *buf, size_t size);

#endif
