/*
 * cli.h: what the elog programs share: exit statuses, error printing, and
 * parsers for durations, sizes and times (shared/CLI.md), JSON output.
 * Only programs include it; the library never prints.
 */
#ifndef ELOG_CLI_H
#define ELOG_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <stdnoreturn.h>

#include "elog.h"

/* Exit statuses, the same for every program (documented in each man page). */
#define EX_OK      0  /* success */
#define EX_NO      1  /* a negative answer: damage found, nothing matched,
                       * a gap under --strict */
#define EX_USAGE   2  /* bad usage: unknown flag, bad argument */
#define EX_LOCKED  3  /* the log is locked by another writer */
#define EX_CORRUPT 4  /* corrupt or unreadable data, unknown format version */
#define EX_IO      5  /* any other error: I/O, permissions, not a log */

/* Set the program name used in messages; ignore SIGPIPE so that a closed
 * stdout shows up as EPIPE, which cli_flush()/cli_write() turn into a quiet
 * exit with status 0. */
void cli_init(const char *prog);
extern const char *cli_prog;

/* "prog: dir: message" on stderr (dir may be NULL). */
void cli_warn(const char *dir, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
noreturn void cli_die(int status, const char *dir, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Map a library code to an exit status. */
int cli_status(int code);
/* Print "prog: dir: msg" for a library error (msg is the handle's message,
 * or elog_strerror(code) when msg is NULL or empty) and exit. */
noreturn void cli_die_elog(const char *dir, int code, const char *msg);
/* "prog: message" + "Try 'prog --help'." and exit EX_USAGE. */
noreturn void cli_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* Print "prog (elog) VERSION" on stdout and exit 0. */
noreturn void cli_version(void);

/* Parsers: 0 on success, -1 on a malformed or out-of-range argument. */
int cli_parse_duration(const char *s, uint64_t *ms);  /* 500ms 30s 15m 2h 7d 4w */
int cli_parse_size(const char *s, uint64_t *bytes);   /* 4096 512K 64M 10G 1T */
/* RFC 3339, a date alone or local time without zone, @EPOCH_MS, or -DUR
 * relative to now_ms. */
int cli_parse_time(const char *s, int64_t now_ms, int64_t *ms);
int cli_parse_u64(const char *s, uint64_t *v);

/* stdout helpers: write, and on EPIPE exit 0 quietly; on another error print
 * it and exit EX_IO. */
void cli_write(const void *buf, size_t len);
void cli_flush(void);

#endif
