/*
 * outbox-app: the application side of the transactional outbox.  Each order
 * is written with its outbox row in one SQLite transaction, so an event is
 * recorded for the log if and only if the order itself was committed.  The
 * app never talks to the log: outbox-relay drains the outbox into it.
 *
 * usage: outbox-app database count [pause_us]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sqlite3.h>

static void check(sqlite3 *db, int rc, int want)
{
	if (rc != want) {
		fprintf(stderr, "outbox-app: sqlite: %s\n", sqlite3_errmsg(db));
		exit(1);
	}
}

int main(int argc, char *argv[])
{
	sqlite3_stmt *order, *outbox;
	long count, pause_us;
	sqlite3 *db;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: outbox-app database count [pause_us]\n");
		return 2;
	}
	count = strtol(argv[2], NULL, 10);
	pause_us = argc == 4 ? strtol(argv[3], NULL, 10) : 0;
	check(NULL, sqlite3_open(argv[1], &db), SQLITE_OK);
	/* The relay reads and deletes while we insert: WAL lets both run, and
	 * the busy timeout makes each wait for the other's short write. */
	sqlite3_busy_timeout(db, 10000);
	check(db,
	      sqlite3_exec(db,
	                   "PRAGMA journal_mode=WAL;"
	                   "CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY AUTOINCREMENT,"
	                   " item TEXT NOT NULL, qty INTEGER NOT NULL);"
	                   "CREATE TABLE IF NOT EXISTS outbox(id INTEGER PRIMARY KEY AUTOINCREMENT,"
	                   " payload TEXT NOT NULL);",
	                   NULL, NULL, NULL),
	      SQLITE_OK);
	check(db,
	      sqlite3_prepare_v2(db, "INSERT INTO orders(item, qty) VALUES (?1, ?2)", -1, &order,
	                         NULL),
	      SQLITE_OK);
	check(db,
	      sqlite3_prepare_v2(
	              db,
	              "INSERT INTO outbox(payload) VALUES "
	              "(json_object('type', 'order_placed', 'order', ?1, 'item', ?2, 'qty', ?3))",
	              -1, &outbox, NULL),
	      SQLITE_OK);
	for (long i = 0; i < count; i++) {
		char item[32];
		snprintf(item, sizeof item, "widget-%ld", i % 17);
		check(db, sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_bind_text(order, 1, item, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(order, 2, i % 5 + 1);
		check(db, sqlite3_step(order), SQLITE_DONE);
		sqlite3_reset(order);
		sqlite3_bind_int64(outbox, 1, sqlite3_last_insert_rowid(db));
		sqlite3_bind_text(outbox, 2, item, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(outbox, 3, i % 5 + 1);
		check(db, sqlite3_step(outbox), SQLITE_DONE);
		sqlite3_reset(outbox);
		check(db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
		if (pause_us)
			usleep((useconds_t)pause_us);
	}
	sqlite3_finalize(order);
	sqlite3_finalize(outbox);
	sqlite3_close(db);
	return 0;
}
