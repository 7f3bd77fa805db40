/*
 * outbox-relay: drain an application's outbox table into a log, in outbox
 * order, with no duplicates even when the relay is killed at any moment.
 *
 * usage: outbox-relay [-f] database logdir
 *
 * Why no duplicates: one relay runs at a time per outbox (it holds an
 * exclusive flock on "<database>.relay-lock", so a second relay exits at
 * once; other writers may append to the log beside it).  Each record carries the id of its outbox row, and rows are appended in id order,
 * so after opening the writer the last record of the log names the last row
 * that made it into the log.  The relay skips every row up to that one, and
 * only then goes on.  A crash between making records durable and deleting
 * their rows from the outbox therefore costs nothing: the next run finds the
 * rows already in the log and deletes them without appending them again.
 *
 * What this relies on, and where it stops holding:
 *  - Outbox ids become visible in increasing order.  SQLite has one writer
 *    at a time, so an AUTOINCREMENT id is never committed after a higher one.
 *    A database with concurrent writers (PostgreSQL sequences) does not
 *    promise that; there the relay must not skip by "id <= last", and
 *    consumers drop duplicates by outbox id instead.
 *  - The log's last record is still there.  Retention and compaction never
 *    touch the active segment, and the relay's records are its newest.  If
 *    something else also writes to this log, the relay looks back for its
 *    own last record (see find_last_relayed()).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/file.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "elog.h"

static const char *prog = "outbox-relay";

/* Records from this relay have this schema id; their value starts with
 * {"outbox_id":N, which is how the relay recognises its own last record. */
#define OUTBOX_SCHEMA 7
#define OUTBOX_PREFIX "{\"outbox_id\":"

/* How many records back the relay looks for its own last one. */
#define LOOK_BACK 1000

static void die(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, why);
	exit(1);
}

static int64_t outbox_id_of(const struct elog_record *rec)
{
	size_t plen = sizeof OUTBOX_PREFIX - 1;
	char num[24];
	size_t n = 0;

	if (rec->schema != OUTBOX_SCHEMA || rec->value_len <= plen ||
	    memcmp(rec->value, OUTBOX_PREFIX, plen) != 0)
		return -1;
	for (const char *p = (const char *)rec->value + plen;
	     n < sizeof num - 1 && p < (const char *)rec->value + rec->value_len && *p >= '0' &&
	     *p <= '9';
	     p++)
		num[n++] = *p;
	num[n] = 0;
	return n ? strtoll(num, NULL, 10) : -1;
}

/* The outbox id of the relay's newest record in the log, or 0 when there is
 * none.  Called with the writer open, so nothing is appended meanwhile. */
static int64_t find_last_relayed(const char *logdir)
{
	struct elog_record rec;
	elog_reader *r = NULL;
	int64_t last = 0;
	int rc;

	rc = elog_reader_open(&r, logdir);
	if (rc)
		die(logdir, r ? elog_reader_errmsg(r) : elog_strerror(rc));
	rc = elog_reader_seek_last(r, LOOK_BACK);
	while (rc == 0 && (rc = elog_reader_next(r, &rec)) == 0) {
		int64_t id = outbox_id_of(&rec);
		if (id > 0)
			last = id;
	}
	if (rc != ELOG_END && rc != ELOG_GAP)
		die(logdir, elog_reader_errmsg(r));
	elog_reader_close(r);
	return last;
}

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		die("sqlite", err ? err : sqlite3_errmsg(db));
}

int main(int argc, char *argv[])
{
	struct elog_options opt = { .create = 1 };
	sqlite3_stmt *pending, *drop;
	const char *logdir;
	int64_t last;
	int follow = 0, c, rc;
	sqlite3 *db;
	elog *w = NULL;

	while ((c = getopt(argc, argv, "f")) != -1) {
		if (c != 'f') {
			fprintf(stderr, "usage: %s [-f] database logdir\n", prog);
			return 2;
		}
		follow = 1;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: %s [-f] database logdir\n", prog);
		return 2;
	}
	logdir = argv[optind + 1];

	/* One relay per outbox: two would both append the rows neither has
	 * deleted yet.  The lock dies with the process. */
	char lockpath[4096];
	snprintf(lockpath, sizeof lockpath, "%s.relay-lock", argv[optind]);
	int lockfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (lockfd < 0)
		die(lockpath, strerror(errno));
	if (flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "%s: %s: another relay is running\n", prog, lockpath);
		return 3;
	}

	rc = elog_open(&w, logdir, &opt);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", prog, logdir,
		        w ? elog_errmsg(w) : elog_strerror(rc));
		elog_close(w);
		return rc == ELOG_LOCKED ? 3 : 1;
	}
	last = find_last_relayed(logdir);

	if (sqlite3_open(argv[optind], &db) != SQLITE_OK)
		die(argv[optind], sqlite3_errmsg(db));
	sqlite3_busy_timeout(db, 10000);
	exec_sql(db, "PRAGMA journal_mode=WAL;"
	             "CREATE TABLE IF NOT EXISTS outbox(id INTEGER PRIMARY KEY AUTOINCREMENT,"
	             " payload TEXT NOT NULL);");
	if (sqlite3_prepare_v2(db,
	                       "SELECT id, payload FROM outbox WHERE id > ?1 "
	                       "ORDER BY id LIMIT 100",
	                       -1, &pending, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "DELETE FROM outbox WHERE id <= ?1", -1, &drop, NULL) !=
	            SQLITE_OK)
		die("sqlite", sqlite3_errmsg(db));
	/* Rows up to last may still be in the outbox when an earlier run died
	 * before deleting them; they are in the log already, so they go now. */
	sqlite3_bind_int64(drop, 1, last);
	if (sqlite3_step(drop) != SQLITE_DONE)
		die("sqlite", sqlite3_errmsg(db));
	sqlite3_reset(drop);

	for (;;) {
		int64_t batch_last = last;

		sqlite3_bind_int64(pending, 1, last);
		while ((rc = sqlite3_step(pending)) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(pending, 0);
			const char *payload = (const char *)sqlite3_column_text(pending, 1);
			char key[32];
			char *value;
			int klen = snprintf(key, sizeof key, "outbox-%" PRId64, id);
			int vlen = asprintf(&value, OUTBOX_PREFIX "%" PRId64 ",\"event\":%s}", id,
			                    payload);
			struct elog_record rec = {
				.ts_ms = ELOG_TS_NOW,
				.schema = OUTBOX_SCHEMA,
				.key = key,
				.key_len = (size_t)klen,
				.value = value,
				.value_len = (size_t)vlen,
			};
			if (vlen < 0)
				die("asprintf", strerror(ENOMEM));
			rc = elog_append(w, &rec, NULL);
			free(value);
			if (rc)
				die(logdir, elog_errmsg(w));
			batch_last = id;
		}
		if (rc != SQLITE_DONE)
			die("sqlite", sqlite3_errmsg(db));
		sqlite3_reset(pending);
		if (batch_last == last) {
			if (!follow)
				break;
			usleep(20000);
			continue;
		}
		/* Durable in the log first; only then may the rows go. */
		rc = elog_sync(w);
		if (rc)
			die(logdir, elog_errmsg(w));
		sqlite3_bind_int64(drop, 1, batch_last);
		if (sqlite3_step(drop) != SQLITE_DONE)
			die("sqlite", sqlite3_errmsg(db));
		sqlite3_reset(drop);
		last = batch_last;
	}
	sqlite3_finalize(pending);
	sqlite3_finalize(drop);
	sqlite3_close(db);
	rc = elog_close(w);
	if (rc)
		die(logdir, elog_strerror(rc));
	return 0;
}
