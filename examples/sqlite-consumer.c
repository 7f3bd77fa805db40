/*
 * sqlite-consumer: apply each record of a log to a SQLite database exactly
 * once, by keeping the consumer's cursor in the same database and updating
 * it in the same transaction as the effects.
 *
 * usage: sqlite-consumer [-f] [-b batch] logdir database
 *
 * Each record's value is a decimal number.  Applying it adds a row to the
 * table "applied" (or, were it ever applied twice, counts a second time in
 * applied.times) and adds the number to a running total: effects that are
 * visibly wrong if a record is skipped or applied twice.  The cursor is the
 * row of "cursor": the offset of the last record applied.
 *
 * A crash at any point either commits a batch of effects together with the
 * cursor that covers them, or neither; on restart the consumer reads the
 * cursor from the database and resumes after it.  consumers.json is not
 * needed for that.  After each transaction the cursor is also copied into
 * consumers.json as consumer "sqlite", so that `elog-commit -l` shows the
 * lag.  That copy is advisory: a crash between the database's commit and
 * the copy, or a copy that failed (consumers.json busy on a loaded
 * machine), leaves it behind, so the consumer copies the database's cursor
 * again when it starts and after any transaction while the copy is behind.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "elog.h"

#define CONSUMER "sqlite"

static const char *prog = "sqlite-consumer";

static void die(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, why);
	exit(1);
}

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		die("sqlite", err ? err : sqlite3_errmsg(db));
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die("sqlite", sqlite3_errmsg(db));
	return st;
}

static void step_done(sqlite3 *db, sqlite3_stmt *st)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		die("sqlite", sqlite3_errmsg(db));
	sqlite3_reset(st);
}

/* Copy the database's cursor into consumers.json unless the copy holds it
 * already (*mirrored, -1: not known to).  A failure is only reported: the
 * copy is tried again after the next transaction, or by the next run. */
static void mirror(const char *logdir, int64_t cursor, int64_t *mirrored)
{
	char msg[ELOG_MSG_MAX];

	if (cursor < 0 || cursor == *mirrored)
		return;
	if (elog_consumer_commit(logdir, CONSUMER, (uint64_t)cursor, msg) == 0)
		*mirrored = cursor;
	else
		fprintf(stderr, "%s: %s: consumers.json not updated: %s\n", prog, logdir, msg);
}

int main(int argc, char *argv[])
{
	sqlite3_stmt *get_cursor, *apply, *total, *set_cursor;
	long batch = 100;
	int follow = 0, c, rc;
	/* The cursor in the database, and the one last copied into
	 * consumers.json (-1: none). */
	int64_t cursor = -1, mirrored = -1;
	const char *logdir;
	elog_reader *r = NULL;
	sqlite3 *db;

	while ((c = getopt(argc, argv, "fb:")) != -1) {
		switch (c) {
		case 'f':
			follow = 1;
			break;
		case 'b':
			batch = strtol(optarg, NULL, 10);
			if (batch < 1)
				die("-b", "the batch must be at least 1");
			break;
		default:
			fprintf(stderr, "usage: %s [-f] [-b batch] logdir database\n", prog);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: %s [-f] [-b batch] logdir database\n", prog);
		return 2;
	}
	logdir = argv[optind];

	if (sqlite3_open(argv[optind + 1], &db) != SQLITE_OK)
		die(argv[optind + 1], sqlite3_errmsg(db));
	/* FULL makes each COMMIT durable; exactly-once needs only that the
	 * cursor and the effects commit together, which SQLite's atomic
	 * transactions give at any synchronous setting. */
	exec_sql(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
	             "CREATE TABLE IF NOT EXISTS applied(offset INTEGER PRIMARY KEY,"
	             " value INTEGER NOT NULL, times INTEGER NOT NULL);"
	             "CREATE TABLE IF NOT EXISTS total(id INTEGER PRIMARY KEY CHECK (id = 1),"
	             " records INTEGER NOT NULL, sum INTEGER NOT NULL);"
	             "INSERT OR IGNORE INTO total VALUES (1, 0, 0);"
	             "CREATE TABLE IF NOT EXISTS cursor(id INTEGER PRIMARY KEY CHECK (id = 1),"
	             " offset INTEGER NOT NULL);");
	get_cursor = prepare(db, "SELECT offset FROM cursor WHERE id = 1");
	apply = prepare(db, "INSERT INTO applied VALUES (?1, ?2, 1) "
	                    "ON CONFLICT(offset) DO UPDATE SET times = times + 1");
	total = prepare(db, "UPDATE total SET records = records + 1, sum = sum + ?1");
	set_cursor = prepare(db, "INSERT INTO cursor VALUES (1, ?1) "
	                         "ON CONFLICT(id) DO UPDATE SET offset = ?1");

	rc = elog_reader_open(&r, logdir);
	if (rc)
		die(logdir, r ? elog_reader_errmsg(r) : elog_strerror(rc));
	/* Resume just after the cursor stored with the effects. */
	if (sqlite3_step(get_cursor) == SQLITE_ROW)
		cursor = sqlite3_column_int64(get_cursor, 0);
	sqlite3_reset(get_cursor);
	if (cursor >= 0)
		rc = elog_reader_seek(r, (uint64_t)cursor + 1);
	else
		rc = elog_reader_seek_begin(r);
	if (rc)
		die(logdir, elog_reader_errmsg(r));
	/* The last run may have died between its commit and the copy. */
	mirror(logdir, cursor, &mirrored);

	for (;;) {
		struct elog_record rec;
		uint64_t last = 0;
		long n = 0;

		exec_sql(db, "BEGIN IMMEDIATE");
		while (n < batch && (rc = elog_reader_next(r, &rec)) == 0) {
			char num[32];
			size_t len = rec.value_len < sizeof num - 1 ? rec.value_len
			                                            : sizeof num - 1;
			memcpy(num, rec.value, len);
			num[len] = 0;
			sqlite3_bind_int64(apply, 1, (sqlite3_int64)rec.offset);
			sqlite3_bind_int64(apply, 2, strtoll(num, NULL, 10));
			step_done(db, apply);
			sqlite3_bind_int64(total, 1, strtoll(num, NULL, 10));
			step_done(db, total);
			last = rec.offset;
			n++;
		}
		if (n > 0) {
			sqlite3_bind_int64(set_cursor, 1, (sqlite3_int64)last);
			step_done(db, set_cursor);
		}
		exec_sql(db, "COMMIT");
		if (n > 0)
			cursor = (int64_t)last;
		mirror(logdir, cursor, &mirrored);
		if (rc == 0)
			continue;
		if (rc == ELOG_GAP) {
			/* Retention removed records this consumer never applied:
			 * its state is incomplete, which needs a person. */
			uint64_t first, lastgap;
			char why[128];
			elog_reader_gap(r, &first, &lastgap);
			snprintf(why, sizeof why,
			         "offsets %llu-%llu were removed by "
			         "retention before they were applied",
			         (unsigned long long)first, (unsigned long long)lastgap);
			die(logdir, why);
		}
		if (rc != ELOG_END)
			die(logdir, elog_reader_errmsg(r));
		if (!follow)
			break;
		rc = elog_reader_wait(r, 1000);
		if (rc && rc != ELOG_TIMEOUT && rc != EINTR)
			die(logdir, elog_strerror(rc));
	}
	sqlite3_finalize(get_cursor);
	sqlite3_finalize(apply);
	sqlite3_finalize(total);
	sqlite3_finalize(set_cursor);
	sqlite3_close(db);
	elog_reader_close(r);
	return 0;
}
