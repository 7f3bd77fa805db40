/*
 * sqlite_ref.c: the reference we measure elog against: a SQLite table with
 * an integer primary key, WAL, synchronous=FULL.
 *
 *   sqlite_ref insert FILE DB   one row per line of FILE, 1000 per transaction
 *   sqlite_ref select DB        read every row in offset order
 *
 * Prints "records seconds" on stdout.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check(int rc, sqlite3 *db, const char *what)
{
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		fprintf(stderr, "sqlite_ref: %s: %s\n", what, sqlite3_errmsg(db));
		exit(1);
	}
}

static sqlite3 *open_db(const char *path)
{
	sqlite3 *db;
	check(sqlite3_open(path, &db), db, "open");
	check(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
	    "CREATE TABLE IF NOT EXISTS log(offset INTEGER PRIMARY KEY, ts INTEGER,"
	    " schema INTEGER, key BLOB, value BLOB);", 0, 0, 0), db, "setup");
	return db;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "insert") == 0) {
		FILE *f = fopen(argv[2], "r");
		if (!f) {
			perror(argv[2]);
			return 1;
		}
		sqlite3 *db = open_db(argv[3]);
		sqlite3_stmt *st;
		check(sqlite3_prepare_v2(db, "INSERT INTO log(offset, ts, schema, key, value)"
		    " VALUES(?, ?, 0, NULL, ?)", -1, &st, 0), db, "prepare");
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;
		long long i = 0;
		double t0 = now();
		check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db, "begin");
		while ((n = getline(&line, &cap, f)) > 0) {
			if (line[n - 1] == '\n')
				n--;
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			sqlite3_bind_int64(st, 1, i);
			sqlite3_bind_int64(st, 2, ts.tv_sec * 1000LL + ts.tv_nsec / 1000000);
			sqlite3_bind_blob(st, 3, line, (int)n, SQLITE_STATIC);
			check(sqlite3_step(st), db, "insert");
			sqlite3_reset(st);
			if (++i % 1000 == 0) {
				check(sqlite3_exec(db, "COMMIT; BEGIN", 0, 0, 0), db, "commit");
			}
		}
		check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db, "commit");
		double t = now() - t0;
		sqlite3_finalize(st);
		sqlite3_close(db);
		printf("%lld %.6f\n", i, t);
		free(line);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "select") == 0) {
		sqlite3 *db = open_db(argv[2]);
		sqlite3_stmt *st;
		check(sqlite3_prepare_v2(db, "SELECT offset, ts, schema, key, value FROM log"
		    " ORDER BY offset", -1, &st, 0), db, "prepare");
		long long rows = 0, bytes = 0;
		double t0 = now();
		while (sqlite3_step(st) == SQLITE_ROW) {
			bytes += sqlite3_column_bytes(st, 4) + sqlite3_column_int64(st, 0) % 2;
			rows++;
		}
		double t = now() - t0;
		sqlite3_finalize(st);
		sqlite3_close(db);
		printf("%lld %.6f\n", rows, t);
		return bytes < 0;
	}
	fprintf(stderr, "usage: sqlite_ref insert FILE DB | select DB\n");
	return 2;
}
