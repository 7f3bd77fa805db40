/*
 * bench.c: elog side by side with SQLite, on the same machine in the same
 * run.  Every workload (the table workloads[] near the end, which one
 * runner walks) is measured against a SQLite table
 *
 *     log(offset INTEGER PRIMARY KEY, ts INTEGER, schema INTEGER,
 *         key BLOB, value BLOB)
 *
 * in WAL mode with synchronous=FULL (or against the raw disk, where that is
 * the reference its target names), RUNS times, and the medians are printed
 * as a table of elog figure, reference figure, their ratio and the row's
 * target with PASS or MISS.  --json FILE writes the same rows as JSON lines.
 *
 *   bench [--quick | --full] [--runs N] [--dir DIR] [--bin DIR]
 *         [--json FILE|-] [--only LIST] [--sqlite3 PATH] [--scale F]
 *
 * bench/README.md says what each row measures and how to read the table.
 * Every figure is a median of RUNS runs; ratios are elog / reference, and a
 * target is a bound on the ratio (or, for an absolute target, on the elog
 * figure).  Targets are reported, never asserted: the
 * exit status is 0 whenever the benchmark ran to the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elog.h"
#include "internal.h"	/* the format, for build_direct() */

#define KEY_LEN 16
#define NVALS   65536u		/* distinct values pregenerated per size */
#define MIB     (1024.0 * 1024.0)

/* ---- sizes ---------------------------------------------------------- */

struct sizes {
	const char *name;
	int runs;
	long batch_n[2];	/* batched append, 100 B and 1024 B */
	long lines;		/* elog-append input lines */
	long ack1_n;		/* durable acks per run, 1 thread */
	double ack8_secs;	/* seconds per run, 8 threads */
	long read_n[2];		/* records in the read logs */
	long seeks;		/* random seeks per run */
	int spawns;		/* process spawns per run, each program */
	long retain_n;		/* records in the retention log */
	long compact_n;		/* records in the keyed log */
	int follow_n;		/* records followed per run */
	uint64_t recovery_bytes; /* active segment left by a crash */
	long zstd_n;		/* records per compression variant */
};

static const struct sizes QUICK = {
	"quick", 3, { 200000, 50000 }, 1000000, 1000, 2.0, { 500000, 100000 },
	20000, 30, 1000000, 500000, 300, 256ull << 20, 200000,
};
static const struct sizes FULL = {
	"full", 5, { 1000000, 200000 }, 1000000, 5000, 5.0, { 2000000, 500000 },
	20000, 100, 1000000, 2000000, 2000, (1ull << 30) - (8ull << 20), 1000000,
};

static struct sizes S;

/* Sizes of the rows on logs of many segments (the same in quick and full
 * modes). */
static struct {
	long segread_n;		/* records read in 4 KiB vs 64 MiB segments */
	long follow_batches;	/* one-record batches followed per run */
	long rss_keys;		/* distinct keys for compaction's peak RSS */
} SS = { 1000000, 300, 3000000 };
static const char *workdir = ".";
static const char *bindir = "build";
static const char *sqlite3_cli = "sqlite3";
static const char *only;
static FILE *jsonf;

/* ---- small helpers -------------------------------------------------- */

static void die(const char *fmt, ...)
{
	va_list ap;
	fputs("bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void progress(const char *fmt, ...)
{
	va_list ap;
	fputs("bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

static char *path(const char *name)
{
	char *p = xmalloc(strlen(workdir) + strlen(name) + 2);
	sprintf(p, "%s/%s", workdir, name);
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of n values (which it sorts). */
static double median(double *v, int n)
{
	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The p-quantile (0 < p <= 1) of n sorted values, nearest rank. */
static double quantile(const double *v, long n, double p)
{
	if (n <= 0)
		return NAN;
	long i = (long)ceil(p * (double)n) - 1;
	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return v[i];
}

static void sort_doubles(double *v, long n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
}

/* The program running now, killed if the suite's alarm goes off. */
static volatile pid_t child_pid;

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "bench: time limit reached, giving up\n";
	if (child_pid > 0)
		kill(child_pid, SIGKILL);
	if (write(2, m, sizeof m - 1) < 0)
		_exit(3);
	_exit(3);
}

/* Run argv with stdin from in and stdout to out (NULL: /dev/null); wall
 * time in *secs.  posix_spawn, not fork: this process holds a large
 * corpus, and copying its page tables would be timed with the program.
 * Dies unless the program exits with 0. */
static void spawn(char *const argv[], const char *in, const char *out, double *secs)
{
	extern char **environ;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in ? in : "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null",
	                                 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pid_t pid;
	double t0 = now();
	int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		die("%s: %s", argv[0], strerror(err));
	child_pid = pid;
	int status;
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid: %s", strerror(errno));
	double t1 = now();
	child_pid = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench: command failed (status %d):", status);
		for (int i = 0; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		fputc('\n', stderr);
		exit(2);
	}
	if (secs)
		*secs = t1 - t0;
}

/* Peak RSS in KiB of argv run with stdout to /dev/null.  ru_maxrss of a
 * child counts the memory of the process it was forked from (the kernel
 * records the old image's high-water mark at execve), and this one holds
 * a large corpus; so a fresh copy of this program, small, forks the
 * command and reports its ru_maxrss (see rss_child()). */
static long peak_rss(char *const argv[])
{
	char out[4096], *av[64];
	snprintf(out, sizeof out, "%s/rss.out", workdir);
	int n = 0;
	av[n++] = "/proc/self/exe";
	av[n++] = "--rss-child";
	av[n++] = out;
	for (int i = 0; argv[i] && n < 63; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	spawn(av, NULL, NULL, NULL);
	FILE *f = fopen(out, "r");
	long kib = -1;
	if (!f || fscanf(f, "%ld", &kib) != 1)
		die("%s: no peak RSS reported", out);
	fclose(f);
	unlink(out);
	return kib;
}

/* bench --rss-child FILE PROG ARGS...: run PROG, write its peak RSS. */
static int rss_child(char **argv)
{
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
		return 2;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	FILE *f = fopen(argv[0], "w");
	if (!f)
		return 2;
	fprintf(f, "%ld\n", ru.ru_maxrss);
	return fclose(f) != 0 ? 2 : 0;
}

static void rm_rf(const char *p)
{
	char *argv[] = { "rm", "-rf", (char *)p, NULL };
	spawn(argv, NULL, NULL, NULL);
}

/* Bytes of the regular files in directory d (not recursive); with ext,
 * only the files whose names end with it. */
static uint64_t dir_bytes(const char *d, const char *ext)
{
	DIR *dp = opendir(d);
	if (!dp)
		die("%s: %s", d, strerror(errno));
	uint64_t sum = 0;
	struct dirent *e;
	char buf[4096];
	while ((e = readdir(dp)) != NULL) {
		size_t l = strlen(e->d_name), el = ext ? strlen(ext) : 0;
		if (ext && (l < el || strcmp(e->d_name + l - el, ext) != 0))
			continue;
		struct stat st;
		snprintf(buf, sizeof buf, "%s/%s", d, e->d_name);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(dp);
	return sum;
}

static uint64_t file_bytes(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int selected(const char *id)
{
	if (!only)
		return 1;
	size_t n = strlen(id);
	for (const char *p = only; (p = strstr(p, id)) != NULL; p += n)
		if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* ---- data ----------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* NVALS JSON values of exactly size bytes each, and their keys. */
struct corpus {
	size_t size;
	char *vals;
	char keys[NVALS][KEY_LEN + 1];
};
static struct corpus *corpora[2];

/* A realistic event: a handful of fields a web or sensor application
 * would log, then a free-text note of words to reach the size. */
static void make_value(char *buf, size_t size, uint64_t i)
{
	static const char *types[] = { "page_view", "click", "purchase", "login",
	    "logout", "search", "add_to_cart", "error" };
	static const char *words[] = { "checkout", "session", "renewed", "cart",
	    "user", "opened", "the", "settings", "page", "after", "timeout",
	    "retry", "mobile", "desktop", "north", "gateway", "sensor", "ok" };
	uint64_t r = mix(i);
	char tmp[4096];
	int n = snprintf(tmp, sizeof tmp,
	    "{\"type\":\"%s\",\"user\":\"u-%06u\",\"seq\":%llu,\"ms\":%u,"
	    "\"ok\":%s,\"note\":\"", types[r % 8], (unsigned)((r >> 8) % 1000000),
	    (unsigned long long)i, (unsigned)((r >> 32) % 5000),
	    (r >> 40) & 1 ? "true" : "false");
	size_t len = (size_t)n;
	uint64_t w = r;
	while (len < size - 2) {
		w = mix(w);
		const char *word = words[w % 18];
		if (len > (size_t)n)
			tmp[len++] = ' ';
		for (const char *c = word; *c && len < size - 2; c++)
			tmp[len++] = *c;
	}
	tmp[size - 2] = '"';
	tmp[size - 1] = '}';
	memcpy(buf, tmp, size);
}

static struct corpus *corpus(int big)
{
	if (corpora[big])
		return corpora[big];
	struct corpus *c = xmalloc(sizeof *c);
	c->size = big ? 1024 : 100;
	c->vals = xmalloc(NVALS * c->size);
	for (uint64_t i = 0; i < NVALS; i++) {
		make_value(c->vals + i * c->size, c->size, i);
		snprintf(c->keys[i], sizeof c->keys[i], "user-%011u",
		         (unsigned)(mix(i ^ 0x5eed) % 100000));
	}
	return corpora[big] = c;
}

static const char *cval(const struct corpus *c, long i)
{
	return c->vals + (size_t)((uint64_t)i % NVALS) * c->size;
}

static const char *ckey(const struct corpus *c, long i)
{
	return c->keys[(uint64_t)i % NVALS];
}

/* ---- elog and SQLite helpers ---------------------------------------- */

static elog *e_open(const char *dir, uint64_t seg_bytes, int compression,
                    int no_dict)
{
	struct elog_options o = { 0 };
	o.create = 1;
	o.segment_bytes = seg_bytes;
	o.compression = compression;
	o.no_dictionary = no_dict;
	o.batch_bytes = 8u << 20;	/* batches end at the explicit flushes */
	elog *w;
	int rc = elog_open(&w, dir, &o);
	if (rc)
		die("elog_open %s: %s: %s", dir, elog_strerror(rc), elog_errmsg(w));
	return w;
}

static void e_append(elog *w, const void *key, size_t klen, const void *val,
                     size_t vlen, uint64_t *off)
{
	struct elog_record r = { 0 };
	r.ts_ms = ELOG_TS_NOW;
	r.key = key;
	r.key_len = klen;
	r.value = val;
	r.value_len = vlen;
	int rc = elog_append(w, &r, off);
	if (rc)
		die("elog_append: %s: %s", elog_strerror(rc), elog_errmsg(w));
}

static void e_flush(elog *w)
{
	int rc = elog_sync(w);
	if (rc)
		die("elog_sync: %s: %s", elog_strerror(rc), elog_errmsg(w));
}

static void e_close(elog *w)
{
	int rc = elog_close(w);
	if (rc)
		die("elog_close: %s", elog_strerror(rc));
}

static void sq_check(int rc, sqlite3 *db, const char *what)
{
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
		die("sqlite: %s: %s", what, sqlite3_errmsg(db));
}

static void sq_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		die("sqlite: %s: %s", sql, err ? err : "?");
}

static void sq_unlink(const char *db)
{
	char buf[4096];
	unlink(db);
	snprintf(buf, sizeof buf, "%s-wal", db);
	unlink(buf);
	snprintf(buf, sizeof buf, "%s-shm", db);
	unlink(buf);
}

static uint64_t sq_bytes(const char *db)
{
	char buf[4096];
	uint64_t n = file_bytes(db);
	snprintf(buf, sizeof buf, "%s-wal", db);
	n += file_bytes(buf);
	snprintf(buf, sizeof buf, "%s-shm", db);
	return n + file_bytes(buf);
}

static sqlite3 *sq_open(const char *p)
{
	sqlite3 *db;
	if (sqlite3_open(p, &db) != SQLITE_OK)
		die("sqlite: %s: %s", p, sqlite3_errmsg(db));
	sqlite3_busy_timeout(db, 10000);
	sq_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
	    "CREATE TABLE IF NOT EXISTS log(offset INTEGER PRIMARY KEY, ts INTEGER,"
	    " schema INTEGER, key BLOB, value BLOB);");
	return db;
}

static sqlite3_stmt *sq_prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	sq_check(sqlite3_prepare_v2(db, sql, -1, &st, NULL), db, sql);
	return st;
}

static sqlite3_stmt *sq_insert_stmt(sqlite3 *db)
{
	return sq_prep(db, "INSERT INTO log(offset, ts, schema, key, value)"
	    " VALUES(?, ?, 0, ?, ?)");
}

/* Insert one row; off < 0 lets SQLite choose the offset. */
static int sq_insert(sqlite3_stmt *st, long off, const void *key, size_t klen,
                     const void *val, size_t vlen)
{
	if (off < 0)
		sqlite3_bind_null(st, 1);
	else
		sqlite3_bind_int64(st, 1, off);
	sqlite3_bind_int64(st, 2, wall_ms());
	if (key)
		sqlite3_bind_blob(st, 3, key, (int)klen, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_blob(st, 4, val, (int)vlen, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc;
}

/* Build an elog log of n records of corpus c (keys from the corpus, or
 * from nkeys distinct keys when nkeys > 0). */
static void build_elog(const char *dir, const struct corpus *c, long n,
                       uint64_t seg_bytes, long nkeys)
{
	rm_rf(dir);
	elog *w = e_open(dir, seg_bytes, ELOG_COMPRESS_NONE, 0);
	char key[KEY_LEN + 1];
	for (long i = 0; i < n; i++) {
		const char *k = ckey(c, i);
		if (nkeys > 0) {
			snprintf(key, sizeof key, "user-%011u",
			         (unsigned)(mix((uint64_t)i ^ 0xc0ffee) % (uint64_t)nkeys));
			k = key;
		}
		e_append(w, k, KEY_LEN, cval(c, i), c->size, NULL);
		if ((i + 1) % 10000 == 0)
			e_flush(w);
	}
	e_close(w);
}

static void build_sqlite(const char *db, const struct corpus *c, long n, long nkeys)
{
	sq_unlink(db);
	sqlite3 *d = sq_open(db);
	sqlite3_stmt *st = sq_insert_stmt(d);
	char key[KEY_LEN + 1];
	sq_exec(d, "BEGIN");
	for (long i = 0; i < n; i++) {
		const char *k = ckey(c, i);
		if (nkeys > 0) {
			snprintf(key, sizeof key, "user-%011u",
			         (unsigned)(mix((uint64_t)i ^ 0xc0ffee) % (uint64_t)nkeys));
			k = key;
		}
		sq_check(sq_insert(st, i, k, KEY_LEN, cval(c, i), c->size), d, "insert");
		if ((i + 1) % 100000 == 0)
			sq_exec(d, "COMMIT; BEGIN");
	}
	sq_exec(d, "COMMIT; PRAGMA wal_checkpoint(TRUNCATE);");
	sqlite3_finalize(st);
	sqlite3_close(d);
}

/* ---- the table ------------------------------------------------------ */

enum goal { G_NONE, G_RATIO_GE, G_RATIO_LE, G_ELOG_GE, G_ELOG_LE };

static int nmiss, npass;

static void fmt(char *buf, size_t n, double v)
{
	double a = fabs(v);
	if (isnan(v))
		snprintf(buf, n, "-");
	else if (a >= 1e7)
		snprintf(buf, n, "%.1fM", v / 1e6);
	else if (a >= 1e6)
		snprintf(buf, n, "%.2fM", v / 1e6);
	else if (a >= 1e5)
		snprintf(buf, n, "%.0fk", v / 1e3);
	else if (a >= 1e4)
		snprintf(buf, n, "%.1fk", v / 1e3);
	else if (a >= 100)
		snprintf(buf, n, "%.0f", v);
	else if (a >= 10)
		snprintf(buf, n, "%.1f", v);
	else if (a >= 0.1 || a == 0)
		snprintf(buf, n, "%.2f", v);
	else
		snprintf(buf, n, "%.2g", v);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

static void header(void)
{
	printf("%-44s %-6s %9s  %-20s %9s %8s  %-16s %s\n", "workload", "unit", "elog",
	       "reference", "ref", "ratio", "target", "");
}

/* One row: elog's figure against a reference, with the row's target as a
 * bound on the ratio elog/ref or on elog's figure itself. */
static void row(const char *id, const char *workload, const char *unit, double elog,
                const char *refname, double ref, enum goal g, double bound)
{
	double ratio = ref > 0 && !isnan(ref) && !isnan(elog) ? elog / ref : NAN;
	char e[32], r[32], q[32], t[48] = "";
	const char *verdict = "";
	fmt(e, sizeof e, elog);
	fmt(r, sizeof r, ref);
	if (isnan(ratio))
		snprintf(q, sizeof q, "-");
	else if (ratio >= 0.1)
		snprintf(q, sizeof q, "%.2fx", ratio);
	else
		snprintf(q, sizeof q, "%.2gx", ratio);
	int pass = -1;
	switch (g) {
	case G_NONE:
		break;
	case G_RATIO_GE:
		snprintf(t, sizeof t, "ratio >= %g", bound);
		pass = ratio >= bound;
		break;
	case G_RATIO_LE:
		snprintf(t, sizeof t, "ratio <= %g", bound);
		pass = ratio <= bound;
		break;
	case G_ELOG_GE:
		fmt(t, sizeof t, bound);
		snprintf(t, sizeof t, "elog >= %g", bound);
		pass = elog >= bound;
		break;
	case G_ELOG_LE:
		snprintf(t, sizeof t, "elog <= %g", bound);
		pass = elog <= bound;
		break;
	}
	if (pass >= 0) {
		verdict = pass ? "PASS" : "MISS";
		pass ? npass++ : nmiss++;
	}
	printf("%-44s %-6s %9s  %-20s %9s %8s  %-16s %s\n", workload, unit, e,
	       refname, r, q, t, verdict);
	fflush(stdout);
	if (jsonf) {
		fputs("{\"id\":", jsonf);
		json_str(jsonf, id);
		fputs(",\"workload\":", jsonf);
		json_str(jsonf, workload);
		fputs(",\"unit\":", jsonf);
		json_str(jsonf, unit);
		fputs(",\"elog\":", jsonf);
		json_num(jsonf, elog);
		fputs(",\"reference\":", jsonf);
		json_str(jsonf, refname);
		fputs(",\"ref\":", jsonf);
		json_num(jsonf, ref);
		fputs(",\"ratio\":", jsonf);
		json_num(jsonf, ratio);
		fputs(",\"target\":", jsonf);
		if (*t)
			json_str(jsonf, t);
		else
			fputs("null", jsonf);
		fputs(",\"verdict\":", jsonf);
		json_str(jsonf, pass < 0 ? "INFO" : pass ? "PASS" : "MISS");
		fprintf(jsonf, ",\"mode\":\"%s\",\"runs\":%d}\n", S.name, S.runs);
		fflush(jsonf);
	}
}

/* A row that could not be measured. */
static void row_na(const char *id, const char *workload, const char *why)
{
	printf("%-44s %s\n", workload, why);
	if (jsonf) {
		fputs("{\"id\":", jsonf);
		json_str(jsonf, id);
		fputs(",\"workload\":", jsonf);
		json_str(jsonf, workload);
		fputs(",\"verdict\":\"N/A\",\"why\":", jsonf);
		json_str(jsonf, why);
		fputs("}\n", jsonf);
	}
}

/* ---- shared logs ---------------------------------------------------- */

/* The read logs: read_n records of 100 B / 1024 B, in elog and in SQLite,
 * built once and used by the read, cat, seek, spawn, disk and memory rows. */
static char *read_log[2], *read_db[2];

static void ensure_read(int big)
{
	if (read_log[big])
		return;
	char name[64];
	snprintf(name, sizeof name, "read%d.elog", big ? 1024 : 100);
	read_log[big] = path(name);
	snprintf(name, sizeof name, "read%d.db", big ? 1024 : 100);
	read_db[big] = path(name);
	progress("building read logs: %ld x %zu B", S.read_n[big], corpus(big)->size);
	build_elog(read_log[big], corpus(big), S.read_n[big], 0, 0);
	build_sqlite(read_db[big], corpus(big), S.read_n[big], 0);
}

/* ---- workloads ------------------------------------------------------ */

/* Batched append: elog_append x1000 then elog_sync; SQLite: one
 * transaction per 1000 rows. */
static void w_append(int big)
{
	const struct corpus *c = corpus(big);
	long n = S.batch_n[big];
	double er[16], sr[16];
	char *dir = path("append.elog"), *db = path("append.db");
	progress("batched append %zu B: %ld records x %d runs", c->size, n, S.runs);
	for (int run = 0; run < S.runs; run++) {
		rm_rf(dir);
		elog *w = e_open(dir, 0, ELOG_COMPRESS_NONE, 0);
		double t0 = now();
		for (long i = 0; i < n; i++) {
			e_append(w, ckey(c, i), KEY_LEN, cval(c, i), c->size, NULL);
			if ((i + 1) % 1000 == 0)
				e_flush(w);
		}
		e_flush(w);
		er[run] = (double)n / (now() - t0);
		e_close(w);

		sq_unlink(db);
		sqlite3 *d = sq_open(db);
		sqlite3_stmt *st = sq_insert_stmt(d);
		t0 = now();
		sq_exec(d, "BEGIN");
		for (long i = 0; i < n; i++) {
			sq_check(sq_insert(st, i, ckey(c, i), KEY_LEN, cval(c, i), c->size), d, "insert");
			if ((i + 1) % 1000 == 0)
				sq_exec(d, "COMMIT; BEGIN");
		}
		sq_exec(d, "COMMIT");
		sr[run] = (double)n / (now() - t0);
		sqlite3_finalize(st);
		sqlite3_close(d);
	}
	rm_rf(dir);
	sq_unlink(db);
	char wl[64];
	snprintf(wl, sizeof wl, "batched append %zu B, fsync/1000", c->size);
	row(big ? "append_1024" : "append_100", wl, "rec/s", median(er, S.runs),
	    "SQLite txn/1000", median(sr, S.runs), G_RATIO_GE, 5);
	free(dir);
	free(db);
}

/* The disk's sequential write rate: 1 MiB writes, one fdatasync at the end
 * (what dd conv=fdatasync does), in bytes/s. */
static double disk_seq_rate(uint64_t bytes)
{
	char *p = path("seq.dat");
	size_t bs = 1u << 20;
	char *buf = xmalloc(bs);
	memset(buf, 0x5a, bs);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("%s: %s", p, strerror(errno));
	double t0 = now();
	for (uint64_t done = 0; done < bytes; done += bs)
		if (write(fd, buf, bs) != (ssize_t)bs)
			die("%s: write: %s", p, strerror(errno));
	if (fdatasync(fd) < 0)
		die("%s: fdatasync: %s", p, strerror(errno));
	double t = now() - t0;
	close(fd);
	unlink(p);
	free(p);
	free(buf);
	return (double)bytes / t;
}

/* elog-append of lines "key<TAB>value" from a file, against SQLite
 * inserting the same lines, 1000 rows per transaction, and the disk. */
static void w_append_prog(void)
{
	const struct corpus *c = corpus(0);
	char *input = path("lines.txt"), *dir = path("lines.elog"), *db = path("lines.db");
	char prog[4096];
	snprintf(prog, sizeof prog, "%s/elog-append", bindir);
	progress("elog-append: %ld lines x %d runs", S.lines, S.runs);
	FILE *f = fopen(input, "w");
	if (!f)
		die("%s: %s", input, strerror(errno));
	for (long i = 0; i < S.lines; i++) {
		fwrite(ckey(c, i), 1, KEY_LEN, f);
		fputc('\t', f);
		fwrite(cval(c, i), 1, c->size, f);
		fputc('\n', f);
	}
	if (fclose(f) != 0)
		die("%s: write failed", input);
	uint64_t bytes = file_bytes(input);

	double er[16], sr[16], dr[16];
	char *argv[] = { prog, "-K", "\t", dir, NULL };
	for (int run = 0; run < S.runs; run++) {
		rm_rf(dir);
		double t;
		spawn(argv, input, NULL, &t);
		er[run] = t;
		if (run == 0) {	/* every line became a record */
			elog_reader *r;
			if (elog_reader_open(&r, dir) != 0 || elog_reader_seek_end(r) != 0 ||
			    elog_reader_position(r) != (uint64_t)S.lines)
				die("elog-append wrote %llu records, not %ld",
				    (unsigned long long)elog_reader_position(r), S.lines);
			elog_reader_close(r);
		}

		sq_unlink(db);
		sqlite3 *d = sq_open(db);
		sqlite3_stmt *st = sq_insert_stmt(d);
		FILE *in = fopen(input, "r");
		char *line = NULL;
		size_t cap = 0;
		ssize_t len;
		long i = 0;
		double t0 = now();
		sq_exec(d, "BEGIN");
		while ((len = getline(&line, &cap, in)) > 0) {
			if (line[len - 1] == '\n')
				len--;
			char *tab = memchr(line, '\t', (size_t)len);
			size_t kl = tab ? (size_t)(tab - line) : 0;
			const char *v = tab ? tab + 1 : line;
			sq_check(sq_insert(st, i, tab ? line : NULL, kl, v,
			                   (size_t)(line + len - v)), d, "insert");
			if (++i % 1000 == 0)
				sq_exec(d, "COMMIT; BEGIN");
		}
		sq_exec(d, "COMMIT");
		sr[run] = now() - t0;
		fclose(in);
		free(line);
		sqlite3_finalize(st);
		sqlite3_close(d);
		sq_unlink(db);

		/* At least 256 MiB, for a steady figure. */
		dr[run] = disk_seq_rate(bytes > (256u << 20) ? bytes : (256u << 20));
	}
	rm_rf(dir);
	unlink(input);
	double et = median(er, S.runs), st = median(sr, S.runs), disk = median(dr, S.runs);
	char wl[64];
	snprintf(wl, sizeof wl, "elog-append %ldk lines (100 B values)", S.lines / 1000);
	row("append_prog", wl, "rec/s", (double)S.lines / et, "SQLite txn/1000",
	    (double)S.lines / st, G_RATIO_GE, 10);
	row("append_prog_mbs", "elog-append input rate", "MB/s", (double)bytes / et / 1e6,
	    "disk seq write", disk / 1e6, G_RATIO_GE, 0.6);
	free(input);
	free(dir);
	free(db);
}

/* Durable acknowledgement, one thread: append + elog_sync per record,
 * against write + fdatasync of the same bytes on a plain file. */
static double ack1_rate[2] = { NAN, NAN };

static void w_ack1(int big)
{
	const struct corpus *c = corpus(big);
	long n = S.ack1_n;
	double *lat = xmalloc((size_t)n * sizeof *lat);
	double er[16], e50[16], e99[16], rr[16], r50[16], r99[16], sr[16];
	char *dir = path("ack1.elog"), *raw = path("ack1.raw"), *db = path("ack1.db");
	progress("durable ack 1 thread %zu B: %ld acks x %d runs", c->size, n, S.runs);
	double *rlat = xmalloc((size_t)n * sizeof *rlat);
	for (int run = 0; run < S.runs; run++) {
		/* The three take turns in blocks of 50, so that they meet the
		 * same noise from other users of the disk. */
		rm_rf(dir);
		sq_unlink(db);
		elog *w = e_open(dir, 0, ELOG_COMPRESS_NONE, 0);
		int fd = open(raw, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
		if (fd < 0)
			die("%s: %s", raw, strerror(errno));
		sqlite3 *d = sq_open(db);
		sqlite3_stmt *st = sq_insert_stmt(d);
		double et = 0, rt = 0, sqt = 0;
		long m = 0;
		for (long b = 0; b < n; b += 50) {
			long e = b + 50 < n ? b + 50 : n;
			/* elog and the raw loop swap places every block, so
			 * that neither always follows SQLite's commits. */
			for (int turn = 0; turn < 2; turn++) {
				double t0 = now();
				if ((turn == 0) == ((b / 50) % 2 == 0)) {
					for (long i = b; i < e; i++) {
						double a = now();
						uint64_t off;
						e_append(w, ckey(c, i), KEY_LEN, cval(c, i), c->size, &off);
						int rc = elog_sync(w);
						if (rc)
							die("elog_sync: %s", elog_strerror(rc));
						lat[i] = now() - a;
					}
					et += now() - t0;
				} else {
					for (long i = b; i < e; i++) {
						double a = now();
						if (write(fd, cval(c, i), c->size) != (ssize_t)c->size ||
						    fdatasync(fd) < 0)
							die("%s: %s", raw, strerror(errno));
						rlat[i] = now() - a;
					}
					rt += now() - t0;
				}
			}
			double t2 = now();
			/* SQLite: one autocommit INSERT per record; slower, so
			 * half as many suffice. */
			for (long i = b; i < e; i += 2, m++)
				sq_check(sq_insert(st, i, ckey(c, i), KEY_LEN, cval(c, i), c->size),
				         d, "insert");
			sqt += now() - t2;
		}
		e_close(w);
		close(fd);
		unlink(raw);
		sqlite3_finalize(st);
		sqlite3_close(d);
		sq_unlink(db);
		er[run] = (double)n / et;
		rr[run] = (double)n / rt;
		sr[run] = (double)m / sqt;
		sort_doubles(lat, n);
		e50[run] = quantile(lat, n, 0.50) * 1e6;
		e99[run] = quantile(lat, n, 0.99) * 1e6;
		sort_doubles(rlat, n);
		r50[run] = quantile(rlat, n, 0.50) * 1e6;
		r99[run] = quantile(rlat, n, 0.99) * 1e6;
	}
	free(rlat);
	rm_rf(dir);
	char wl[64];
	const char *sz = big ? "1024" : "100";
	snprintf(wl, sizeof wl, "durable ack, 1 thread, %s B", sz);
	ack1_rate[big] = median(er, S.runs);
	char id[32];
	snprintf(id, sizeof id, "ack1_%s", sz);
	row(id, wl, "acks/s", ack1_rate[big], "write+fdatasync", median(rr, S.runs),
	    G_RATIO_GE, 0.9);
	snprintf(id, sizeof id, "ack1_%s_p50", sz);
	row(id, "  latency p50", "us", median(e50, S.runs), "write+fdatasync",
	    median(r50, S.runs), G_NONE, 0);
	snprintf(id, sizeof id, "ack1_%s_p99", sz);
	row(id, "  latency p99", "us", median(e99, S.runs), "write+fdatasync",
	    median(r99, S.runs), G_NONE, 0);
	snprintf(id, sizeof id, "ack1_%s_sqlite", sz);
	row(id, "  against SQLite, 1 thread", "acks/s", ack1_rate[big], "SQLite txn/row",
	    median(sr, S.runs), G_NONE, 0);
	free(lat);
	free(dir);
	free(raw);
	free(db);
}

/* Durable acknowledgement from 8 threads, served by group commit. */
#define THREADS 8
#define LATCAP  200000

struct acker {
	pthread_t t;
	int idx;
	elog *w;
	const char *db;
	const struct corpus *c;
	double deadline;
	long acks, busy;
	double *lat;
	long nlat;
};

static void *ack_elog(void *arg)
{
	struct acker *a = arg;
	long i = a->idx * 1000003L;
	while (now() < a->deadline) {
		double t = now();
		uint64_t off;
		e_append(a->w, ckey(a->c, i), KEY_LEN, cval(a->c, i), a->c->size, &off);
		int rc = elog_sync(a->w);
		if (rc)
			die("elog_sync: %s", elog_strerror(rc));
		if (a->nlat < LATCAP)
			a->lat[a->nlat++] = now() - t;
		a->acks++;
		i++;
	}
	return NULL;
}

static void *ack_sqlite(void *arg)
{
	struct acker *a = arg;
	sqlite3 *d = sq_open(a->db);
	sqlite3_stmt *st = sq_insert_stmt(d);
	long i = a->idx * 1000003L;
	while (now() < a->deadline) {
		int rc = sq_insert(st, -1, ckey(a->c, i), KEY_LEN, cval(a->c, i), a->c->size);
		if (rc == SQLITE_DONE)
			a->acks++;
		else if (rc == SQLITE_BUSY)
			a->busy++;
		else
			sq_check(rc, d, "insert");
		i++;
	}
	sqlite3_finalize(st);
	sqlite3_close(d);
	return NULL;
}

static void w_ack8(int big)
{
	const struct corpus *c = corpus(big);
	double er[16], sr[16], e99[16];
	char *dir = path("ack8.elog"), *db = path("ack8.db");
	struct acker a[THREADS];
	progress("durable ack %d threads %zu B: %.0f s x %d runs, elog and SQLite",
	         THREADS, c->size, S.ack8_secs, S.runs);
	double *all = xmalloc((size_t)THREADS * LATCAP * sizeof *all);
	for (int run = 0; run < S.runs; run++) {
		rm_rf(dir);
		elog *w = e_open(dir, 0, ELOG_COMPRESS_NONE, 0);
		double t0 = now();
		for (int k = 0; k < THREADS; k++) {
			a[k] = (struct acker){ .idx = k, .w = w, .c = c,
			    .deadline = t0 + S.ack8_secs, .lat = all + (size_t)k * LATCAP };
			pthread_create(&a[k].t, NULL, ack_elog, &a[k]);
		}
		long acks = 0, nl = 0;
		for (int k = 0; k < THREADS; k++) {
			pthread_join(a[k].t, NULL);
			acks += a[k].acks;
		}
		er[run] = (double)acks / (now() - t0);
		e_close(w);
		/* Gather the latencies in one array. */
		for (int k = 0; k < THREADS; k++) {
			memmove(all + nl, a[k].lat, (size_t)a[k].nlat * sizeof *all);
			nl += a[k].nlat;
		}
		sort_doubles(all, nl);
		e99[run] = quantile(all, nl, 0.99) * 1e6;

		sq_unlink(db);
		sqlite3_close(sq_open(db));	/* create the table once */
		t0 = now();
		for (int k = 0; k < THREADS; k++) {
			a[k] = (struct acker){ .idx = k, .db = db, .c = c,
			    .deadline = t0 + S.ack8_secs };
			pthread_create(&a[k].t, NULL, ack_sqlite, &a[k]);
		}
		acks = 0;
		for (int k = 0; k < THREADS; k++) {
			pthread_join(a[k].t, NULL);
			acks += a[k].acks;
		}
		sr[run] = (double)acks / (now() - t0);
		sq_unlink(db);
	}
	rm_rf(dir);
	double rate = median(er, S.runs);
	const char *sz = big ? "1024" : "100";
	char wl[64], id[32];
	snprintf(wl, sizeof wl, "durable ack, %d threads, %s B", THREADS, sz);
	snprintf(id, sizeof id, "ack8_%s_vs_1", sz);
	row(id, wl, "acks/s", rate, "elog 1 thread", ack1_rate[big], G_RATIO_GE, 4);
	snprintf(id, sizeof id, "ack8_%s", sz);
	row(id, "  against SQLite, 8 connections", "acks/s", rate, "SQLite 8 conns",
	    median(sr, S.runs), G_RATIO_GE, 10);
	snprintf(id, sizeof id, "ack8_%s_p99", sz);
	row(id, "  latency p99", "us", median(e99, S.runs), "", NAN, G_NONE, 0);
	free(all);
	free(dir);
	free(db);
}

/* Sequential reads of the whole read log through the library (every CRC
 * checked) and an ordered SELECT. */
static double sqlite_select_rate[2] = { NAN, NAN };

static double read_elog(const char *dir, long expect)
{
	elog_reader *r;
	struct elog_record rec;
	int rc = elog_reader_open(&r, dir);
	if (rc)
		die("elog_reader_open %s: %s", dir, elog_strerror(rc));
	double t0 = now();
	long n = 0;
	uint64_t sum = 0;
	while ((rc = elog_reader_next(r, &rec)) == 0) {
		n++;
		sum += rec.value_len + ((const unsigned char *)rec.value)[0];
	}
	double t = now() - t0;
	if (rc != ELOG_END)
		die("elog_reader_next: %s: %s", elog_strerror(rc), elog_reader_errmsg(r));
	elog_reader_close(r);
	if (n != expect || sum == 0)
		die("%s: read %ld records, expected %ld", dir, n, expect);
	return (double)n / t;
}

static double read_sqlite(const char *db, long expect)
{
	sqlite3 *d = sq_open(db);
	sqlite3_stmt *st = sq_prep(d, "SELECT offset, ts, schema, key, value FROM log"
	    " ORDER BY offset");
	double t0 = now();
	long n = 0;
	uint64_t sum = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_blob(st, 4);
		sum += (uint64_t)sqlite3_column_int64(st, 0) + (uint64_t)sqlite3_column_bytes(st, 3) +
		    (uint64_t)sqlite3_column_bytes(st, 4) + v[0];
		n++;
	}
	double t = now() - t0;
	sqlite3_finalize(st);
	sqlite3_close(d);
	if (n != expect || sum == 0)
		die("%s: read %ld rows, expected %ld", db, n, expect);
	return (double)n / t;
}

static void w_read(int big)
{
	long n = S.read_n[big];
	double er[16], sr[16];
	progress("sequential read %zu B: %ld records x %d runs", corpus(big)->size, n, S.runs);
	read_elog(read_log[big], n);	/* warm the page cache for both */
	read_sqlite(read_db[big], n);
	for (int run = 0; run < S.runs; run++) {
		er[run] = read_elog(read_log[big], n);
		sr[run] = read_sqlite(read_db[big], n);
	}
	sqlite_select_rate[big] = median(sr, S.runs);
	char wl[64];
	snprintf(wl, sizeof wl, "sequential read %s B, library, CRC", big ? "1024" : "100");
	row(big ? "read_1024" : "read_100", wl, "rec/s", median(er, S.runs),
	    "SQLite ORDER BY", sqlite_select_rate[big], G_RATIO_GE, 4);
}

/* elog-cat (JSON and -v) to /dev/null against the ordered SELECT. */
static void w_cat(int big)
{
	if (isnan(sqlite_select_rate[big])) {
		read_sqlite(read_db[big], S.read_n[big]);
		double sr[16];
		for (int run = 0; run < S.runs; run++)
			sr[run] = read_sqlite(read_db[big], S.read_n[big]);
		sqlite_select_rate[big] = median(sr, S.runs);
	}
	long n = S.read_n[big];
	char prog[4096];
	snprintf(prog, sizeof prog, "%s/elog-cat", bindir);
	char *aj[] = { prog, read_log[big], NULL };
	char *av[] = { prog, "-v", read_log[big], NULL };
	double jr[16], vr[16];
	progress("elog-cat %zu B: %ld records x %d runs", corpus(big)->size, n, S.runs);
	for (int run = 0; run < S.runs; run++) {
		double t;
		spawn(aj, NULL, NULL, &t);
		jr[run] = (double)n / t;
		spawn(av, NULL, NULL, &t);
		vr[run] = (double)n / t;
	}
	const char *sz = big ? "1024" : "100";
	char wl[64], id[32];
	snprintf(wl, sizeof wl, "elog-cat JSON > /dev/null, %s B", sz);
	snprintf(id, sizeof id, "cat_json_%s", sz);
	row(id, wl, "rec/s", median(jr, S.runs), "SQLite ORDER BY",
	    sqlite_select_rate[big], G_RATIO_GE, 1);
	snprintf(wl, sizeof wl, "elog-cat -v > /dev/null, %s B", sz);
	snprintf(id, sizeof id, "cat_v_%s", sz);
	row(id, wl, "rec/s", median(vr, S.runs), "SQLite ORDER BY",
	    sqlite_select_rate[big], G_RATIO_GE, 2);
}

/* Warm seeks: the first record at a random offset, in one reader / one
 * prepared statement. */
static void w_seek(int big)
{
	long n = S.read_n[big], q = S.seeks;
	double *lat = xmalloc((size_t)q * sizeof *lat);
	double e50[16], e99[16], s50[16], s99[16];
	progress("seek %zu B: %ld seeks x %d runs", corpus(big)->size, q, S.runs);
	for (int run = 0; run < S.runs; run++) {
		elog_reader *r;
		struct elog_record rec;
		if (elog_reader_open(&r, read_log[big]) != 0)
			die("elog_reader_open failed");
		for (int pass = 0; pass < 2; pass++) {	/* the first one warms */
			for (long i = 0; i < q; i++) {
				uint64_t off = mix((uint64_t)i * 7 + (uint64_t)run) % (uint64_t)n;
				double t = now();
				int rc = elog_reader_seek(r, off);
				if (rc == 0)
					rc = elog_reader_next(r, &rec);
				lat[i] = now() - t;
				if (rc != 0 || rec.offset != off)
					die("seek %llu: %s", (unsigned long long)off, elog_strerror(rc));
			}
		}
		elog_reader_close(r);
		sort_doubles(lat, q);
		e50[run] = quantile(lat, q, 0.5) * 1e6;
		e99[run] = quantile(lat, q, 0.99) * 1e6;

		sqlite3 *d = sq_open(read_db[big]);
		sqlite3_stmt *st = sq_prep(d, "SELECT offset, ts, schema, key, value FROM log"
		    " WHERE offset >= ? ORDER BY offset LIMIT 1");
		for (int pass = 0; pass < 2; pass++) {
			for (long i = 0; i < q; i++) {
				int64_t off = (int64_t)(mix((uint64_t)i * 7 + (uint64_t)run) % (uint64_t)n);
				double t = now();
				sqlite3_bind_int64(st, 1, off);
				int rc = sqlite3_step(st);
				int64_t got = sqlite3_column_int64(st, 0);
				const void *v = sqlite3_column_blob(st, 4);
				sqlite3_reset(st);
				lat[i] = now() - t;
				if (rc != SQLITE_ROW || got != off || !v)
					die("sqlite seek %lld failed", (long long)off);
			}
		}
		sqlite3_finalize(st);
		sqlite3_close(d);
		sort_doubles(lat, q);
		s50[run] = quantile(lat, q, 0.5) * 1e6;
		s99[run] = quantile(lat, q, 0.99) * 1e6;
	}
	const char *sz = big ? "1024" : "100";
	char wl[64], id[32];
	snprintf(wl, sizeof wl, "seek + next, warm, %s B: p50", sz);
	snprintf(id, sizeof id, "seek_%s_p50", sz);
	row(id, wl, "us", median(e50, S.runs), "SQLite >= ? LIMIT 1", median(s50, S.runs),
	    G_RATIO_LE, 1);
	snprintf(id, sizeof id, "seek_%s_p99", sz);
	row(id, "  p99", "us", median(e99, S.runs), "SQLite >= ? LIMIT 1",
	    median(s99, S.runs), G_NONE, 0);
	free(lat);
}

/* A new process for one record: elog-cat -o N -c 1 against the sqlite3
 * command-line shell running the same query. */
/* 1 when prog can be run: a path, or a name found in PATH. */
static int runnable(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	const char *p = getenv("PATH");
	char buf[4096];
	while (p && *p) {
		size_t n = strcspn(p, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
		if (access(buf, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

static void w_spawn(void)
{
	if (!runnable(sqlite3_cli)) {
		row_na("spawn", "new process: elog-cat -o N -c 1",
		       "n/a (no sqlite3 command-line shell: --sqlite3 PATH)");
		return;
	}
	ensure_read(0);
	long n = S.read_n[0];
	char prog[4096], off[32], sql[256];
	snprintf(prog, sizeof prog, "%s/elog-cat", bindir);
	double *et = xmalloc((size_t)S.spawns * sizeof *et);
	double *st = xmalloc((size_t)S.spawns * sizeof *st);
	double em[16], sm[16];
	progress("new process: %d spawns x %d runs", S.spawns, S.runs);
	for (int run = 0; run < S.runs; run++) {
		for (int i = 0; i < S.spawns; i++) {
			long o = (long)(mix((uint64_t)(run * 100000 + i)) % (uint64_t)n);
			snprintf(off, sizeof off, "%ld", o);
			snprintf(sql, sizeof sql, "SELECT offset, ts, schema, key, value FROM log"
			         " WHERE offset >= %ld ORDER BY offset LIMIT 1", o);
			char *ae[] = { prog, "-o", off, "-c", "1", read_log[0], NULL };
			char *as[] = { (char *)sqlite3_cli, read_db[0], sql, NULL };
			spawn(ae, NULL, NULL, &et[i]);
			spawn(as, NULL, NULL, &st[i]);
		}
		em[run] = median(et, S.spawns) * 1e3;
		sm[run] = median(st, S.spawns) * 1e3;
	}
	row("spawn", "new process: elog-cat -o N -c 1", "ms", median(em, S.runs),
	    "sqlite3 CLI", median(sm, S.runs), G_RATIO_LE, 0.5);
	free(et);
	free(st);
}

/* Retention: drop the oldest half of a log, against DELETE + VACUUM. */
static void w_retain(void)
{
	char prog[4096];
	snprintf(prog, sizeof prog, "%s/elog-retain", bindir);
	if (access(prog, X_OK) != 0) {
		row_na("retain", "retention: drop oldest half", "n/a (elog-retain not built)");
		return;
	}
	const struct corpus *c = corpus(0);
	long n = S.retain_n;
	char *dir = path("retain.elog"), *db = path("retain.db");
	double er[16], sr[16];
	/* About 32 segments, so that half the log is about half its segments. */
	uint64_t seg = ((uint64_t)n * (KEY_LEN + c->size + 32) / 32 + 4095) & ~4095ull;
	if (seg < (64u << 10))
		seg = 64u << 10;
	progress("retention: %ld x 100 B x %d runs", n, S.runs);
	for (int run = 0; run < S.runs; run++) {
		build_elog(dir, c, n, seg, 0);
		uint64_t total = dir_bytes(dir, ".log");
		char max[32];
		snprintf(max, sizeof max, "%llu", (unsigned long long)(total / 2));
		char *argv[] = { prog, "--max-bytes", max, dir, NULL };
		spawn(argv, NULL, NULL, &er[run]);
		uint64_t left = dir_bytes(dir, ".log");
		if (left > total / 2 || left + 2 * seg < total / 2)
			die("elog-retain left %llu of %llu bytes", (unsigned long long)left,
			    (unsigned long long)total);

		build_sqlite(db, c, n, 0);
		sqlite3 *d = sq_open(db);
		char sql[128];
		snprintf(sql, sizeof sql, "DELETE FROM log WHERE offset < %ld", n / 2);
		double t0 = now();
		sq_exec(d, sql);
		sq_exec(d, "VACUUM; PRAGMA wal_checkpoint(TRUNCATE);");
		sr[run] = now() - t0;
		sqlite3_close(d);
	}
	rm_rf(dir);
	sq_unlink(db);
	char wl[64];
	snprintf(wl, sizeof wl, "retention: drop oldest half of %ldk x 100 B", n / 1000);
	row("retain", wl, "s", median(er, S.runs), "DELETE+VACUUM", median(sr, S.runs),
	    G_RATIO_LE, 0.01);
	free(dir);
	free(db);
}

/* Compaction of a keyed log: compact_n records over compact_n/10 keys. */
static void w_compact(void)
{
	const struct corpus *c = corpus(0);
	long n = S.compact_n, keys = n / 10;
	char *dir = path("compact.elog"), *db = path("compact.db");
	double er[16], sr[16], bpk[16], prog_t[16];
	char prog[4096];
	snprintf(prog, sizeof prog, "%s/elog-compact", bindir);
	int have_prog = access(prog, X_OK) == 0;
	progress("compaction: %ld x 100 B over %ld keys x %d runs", n, keys, S.runs);
	uint64_t input = 0;
	/* About 16 segments: all but the newest are compacted. */
	uint64_t seg = ((uint64_t)n * (KEY_LEN + c->size + 32) / 16 + 4095) & ~4095ull;
	if (seg < (64u << 10))
		seg = 64u << 10;
	for (int run = 0; run < S.runs; run++) {
		build_elog(dir, c, n, seg, keys);
		struct elog_compact_opts o = ELOG_COMPACT_OPTS_INIT;
		struct elog_compact_result res;
		char msg[ELOG_MSG_MAX];
		double t0 = now();
		int rc = elog_compact(dir, &o, &res, msg);
		double t = now() - t0;
		if (rc)
			die("elog_compact: %s: %s", elog_strerror(rc), msg);
		if (res.records_after >= res.records_before)
			die("elog_compact removed nothing");
		input = res.bytes_before;
		er[run] = (double)res.bytes_before / t / 1e6;
		bpk[run] = (double)res.memory / (double)(res.keys ? res.keys : 1);

		if (have_prog) {	/* the program, for the record */
			build_elog(dir, c, n, seg, keys);
			char *argv[] = { prog, dir, NULL };
			spawn(argv, NULL, NULL, &prog_t[run]);
			prog_t[run] = (double)res.bytes_before / prog_t[run] / 1e6;
		}

		build_sqlite(db, c, n, keys);
		sqlite3 *d = sq_open(db);
		t0 = now();
		sq_exec(d, "DELETE FROM log WHERE offset NOT IN"
		    " (SELECT max(offset) FROM log GROUP BY key);"
		    "VACUUM; PRAGMA wal_checkpoint(TRUNCATE);");
		sr[run] = (double)res.bytes_before / (now() - t0) / 1e6;
		sqlite3_close(d);
	}
	rm_rf(dir);
	sq_unlink(db);
	char wl[64];
	snprintf(wl, sizeof wl, "compaction, %ld x 100 B, %ld keys", n, keys);
	row("compact", wl, "MB/s", median(er, S.runs), "SQLite DELETE+VAC",
	    median(sr, S.runs), G_ELOG_GE, 300);
	if (have_prog)
		row("compact_prog", "  elog-compact (program)", "MB/s", median(prog_t, S.runs),
		    "SQLite DELETE+VAC", median(sr, S.runs), G_NONE, 0);
	row("compact_mem", "  compaction memory per distinct key", "B/key",
	    median(bpk, S.runs), "", NAN, G_ELOG_LE, 40);
	(void)input;
	free(dir);
	free(db);
}

/* Follow latency: from the writer's flush returning to a follower thread
 * receiving the record (elog_reader_wait on inotify). */
struct follower {
	const char *dir, *db;
	int n;
	double *recv;		/* receipt time per offset */
	double *sent;		/* CLOCK_MONOTONIC read from the value */
	int got;
	volatile int stop;
};

static double value_time(const void *v, size_t len)
{
	char buf[64];
	if (len >= sizeof buf)
		len = sizeof buf - 1;
	memcpy(buf, v, len);
	buf[len] = '\0';
	const char *p = strstr(buf, "\"t\":");
	return p ? strtod(p + 4, NULL) : NAN;
}

static void *follow_elog(void *arg)
{
	struct follower *f = arg;
	elog_reader *r;
	struct elog_record rec;
	if (elog_reader_open(&r, f->dir) != 0)
		die("follower: cannot open %s", f->dir);
	while (f->got < f->n && !f->stop) {
		int rc = elog_reader_next(r, &rec);
		if (rc == 0) {
			double t = now();
			if (rec.offset < (uint64_t)f->n) {
				f->recv[rec.offset] = t;
				f->sent[rec.offset] = value_time(rec.value, rec.value_len);
			}
			f->got++;
		} else if (rc == ELOG_END) {
			rc = elog_reader_wait(r, 1000);
			if (rc != 0 && rc != ELOG_TIMEOUT && rc != EINTR)
				die("elog_reader_wait: %s", elog_strerror(rc));
		} else {
			die("follower: %s", elog_strerror(rc));
		}
	}
	elog_reader_close(r);
	return NULL;
}

static void *follow_sqlite(void *arg)
{
	struct follower *f = arg;
	sqlite3 *d = sq_open(f->db);
	sqlite3_stmt *st = sq_prep(d, "SELECT offset, value FROM log WHERE offset >= ?"
	    " ORDER BY offset");
	int64_t next = 0;
	while (f->got < f->n && !f->stop) {
		sqlite3_bind_int64(st, 1, next);
		int any = 0;
		while (sqlite3_step(st) == SQLITE_ROW) {
			double t = now();
			int64_t off = sqlite3_column_int64(st, 0);
			if (off >= 0 && off < f->n) {
				f->recv[off] = t;
				f->sent[off] = value_time(sqlite3_column_blob(st, 1),
				                          (size_t)sqlite3_column_bytes(st, 1));
			}
			next = off + 1;
			f->got++;
			any = 1;
		}
		sqlite3_reset(st);
		if (!any)
			usleep(1000);
	}
	sqlite3_finalize(st);
	sqlite3_close(d);
	return NULL;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { 0, (long)(ms * 1e6) };
	nanosleep(&ts, NULL);
}

/* One run of the follow workload; p50/p99 of flush-return-to-receipt and
 * of append-to-receipt, in microseconds. */
static void follow_run(int sqlite, double *p50, double *p99, double *a50)
{
	int n = S.follow_n;
	char *dir = path("follow.elog"), *db = path("follow.db");
	double *ret = xmalloc((size_t)n * sizeof *ret);
	struct follower f = { dir, db, n, xmalloc((size_t)n * sizeof(double)),
	    xmalloc((size_t)n * sizeof(double)), 0, 0 };
	for (int i = 0; i < n; i++)
		f.recv[i] = f.sent[i] = ret[i] = NAN;
	elog *w = NULL;
	sqlite3 *d = NULL;
	sqlite3_stmt *st = NULL;
	rm_rf(dir);
	sq_unlink(db);
	if (sqlite) {
		d = sq_open(db);
		st = sq_insert_stmt(d);
	} else {
		w = e_open(dir, 0, ELOG_COMPRESS_NONE, 0);
	}
	pthread_t t;
	pthread_create(&t, NULL, sqlite ? follow_sqlite : follow_elog, &f);
	sleep_ms(20);
	char val[128];
	for (int i = 0; i < n; i++) {
		int len = snprintf(val, sizeof val, "{\"t\":%.9f,\"seq\":%d,\"type\":\"tick\"}",
		                   now(), i);
		if (sqlite) {
			sq_check(sq_insert(st, i, "follow-key-00001", KEY_LEN, val, (size_t)len),
			         d, "insert");
		} else {
			e_append(w, "follow-key-00001", KEY_LEN, val, (size_t)len, NULL);
			e_flush(w);
		}
		ret[i] = now();
		sleep_ms(2);	/* let the follower go back to waiting */
	}
	double deadline = now() + 5;
	while (f.got < n && now() < deadline)
		sleep_ms(1);
	f.stop = 1;
	pthread_join(t, NULL);
	if (f.got < n)
		die("follower received %d of %d records", f.got, n);
	double *lat = xmalloc((size_t)n * sizeof *lat), *lat2 = xmalloc((size_t)n * sizeof *lat2);
	for (int i = 0; i < n; i++) {
		double l = f.recv[i] - ret[i];
		lat[i] = l > 0 ? l : 0;	/* received before the flush returned */
		lat2[i] = f.recv[i] - f.sent[i];
	}
	sort_doubles(lat, n);
	sort_doubles(lat2, n);
	*p50 = quantile(lat, n, 0.5) * 1e6;
	*p99 = quantile(lat, n, 0.99) * 1e6;
	*a50 = quantile(lat2, n, 0.5) * 1e6;
	if (sqlite) {
		sqlite3_finalize(st);
		sqlite3_close(d);
	} else {
		e_close(w);
	}
	rm_rf(dir);
	sq_unlink(db);
	free(ret);
	free(f.recv);
	free(f.sent);
	free(lat);
	free(lat2);
	free(dir);
	free(db);
}

static void w_follow(void)
{
	double e50[16], e99[16], ea[16], s50[16], s99[16], sa[16];
	progress("follow: %d records x %d runs, elog and SQLite polling every 1 ms",
	         S.follow_n, S.runs);
	for (int run = 0; run < S.runs; run++) {
		follow_run(0, &e50[run], &e99[run], &ea[run]);
		follow_run(1, &s50[run], &s99[run], &sa[run]);
	}
	row("follow_p50", "follow: flush returned -> follower, p50", "us",
	    median(e50, S.runs), "SQLite poll 1 ms", median(s50, S.runs), G_NONE, 0);
	row("follow_p99", "  p99", "us", median(e99, S.runs), "SQLite poll 1 ms",
	    median(s99, S.runs), G_ELOG_LE, 1000);
	row("follow_append_p50", "  append -> follower incl. fsync, p50", "us",
	    median(ea, S.runs), "SQLite poll 1 ms", median(sa, S.runs), G_NONE, 0);
}

/* Recovery: a child writes recovery_bytes to the active segment and exits
 * without closing; then elog_open is timed (every record's CRC checked).
 * SQLite: the same bytes left in a WAL, recovered by the first query
 * (with its -shm removed, so the WAL is scanned). */
static char *recovery_log;

static void w_recovery(void)
{
	const struct corpus *c = corpus(1);
	uint64_t target = S.recovery_bytes;
	recovery_log = path("recovery.elog");
	char *db = path("recovery.db");
	rm_rf(recovery_log);
	sq_unlink(db);
	progress("recovery: %.0f MiB active segment x %d runs", (double)target / MIB, S.runs);
	long elog__rec_bytes = KEY_LEN + (long)c->size + 32;
	long n = (long)(target / (uint64_t)elog__rec_bytes);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(600);
		elog *w = e_open(recovery_log, 1ull << 30, ELOG_COMPRESS_NONE, 0);
		for (long i = 0; i < n; i++) {
			e_append(w, ckey(c, i), KEY_LEN, cval(c, i), c->size, NULL);
			if ((i + 1) % 1000 == 0)
				e_flush(w);
		}
		e_flush(w);
		_exit(0);	/* a crash: no elog_close */
	}
	int status;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("recovery writer failed");
	pid = fork();
	if (pid == 0) {
		alarm(600);
		sqlite3 *d = sq_open(db);
		sq_exec(d, "PRAGMA wal_autocheckpoint=0");
		sqlite3_stmt *st = sq_insert_stmt(d);
		sq_exec(d, "BEGIN");
		for (long i = 0; i < n; i++) {
			sq_check(sq_insert(st, i, ckey(c, i), KEY_LEN, cval(c, i), c->size), d, "insert");
			if ((i + 1) % 1000 == 0)
				sq_exec(d, "COMMIT; BEGIN");
		}
		sq_exec(d, "COMMIT");
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("recovery SQLite writer failed");

	uint64_t seg = dir_bytes(recovery_log, ".log");
	char wal[4096], shm[4096];
	snprintf(wal, sizeof wal, "%s-wal", db);
	snprintf(shm, sizeof shm, "%s-shm", db);
	uint64_t walb = file_bytes(wal);
	double er[16], sr[16];
	for (int run = 0; run < S.runs; run++) {
		elog *w;
		double t0 = now();
		int rc = elog_open(&w, recovery_log, NULL);
		double t = now() - t0;
		if (rc)
			die("elog_open after crash: %s: %s", elog_strerror(rc), elog_errmsg(w));
		if (elog_durable_end(w) != (uint64_t)n)
			die("recovered %llu records, not %ld",
			    (unsigned long long)elog_durable_end(w), n);
		e_close(w);
		er[run] = (double)seg / t / 1e9;

		unlink(shm);
		sqlite3 *d;
		t0 = now();
		if (sqlite3_open(db, &d) != SQLITE_OK)
			die("sqlite: %s", sqlite3_errmsg(d));
		sqlite3_db_config(d, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
		sqlite3_stmt *st = sq_prep(d, "SELECT max(offset) FROM log");
		sq_check(sqlite3_step(st), d, "select");
		long got = (long)sqlite3_column_int64(st, 0);
		t = now() - t0;
		sqlite3_finalize(st);
		sqlite3_close(d);
		if (got != n - 1)
			die("SQLite recovered max offset %ld, not %ld", got, n - 1);
		sr[run] = (double)walb / t / 1e9;
	}
	sq_unlink(db);
	char wl[64];
	snprintf(wl, sizeof wl, "recovery: open after crash, %.0f MiB segment",
	         (double)seg / MIB);
	row("recovery", wl, "GB/s", median(er, S.runs), "SQLite WAL recovery",
	    median(sr, S.runs), G_ELOG_GE, 1);
	free(db);
}

/* Peak RSS of elog-cat over the large recovery log and the small read log. */
static void w_memory(void)
{
	if (!recovery_log || access(recovery_log, F_OK) != 0)
		w_recovery();
	char prog[4096];
	snprintf(prog, sizeof prog, "%s/elog-cat", bindir);
	double big[16], small[16], bigj[16];
	progress("memory: elog-cat over %.0f MiB and %.0f MiB logs x %d runs",
	         (double)dir_bytes(recovery_log, ".log") / MIB,
	         (double)dir_bytes(read_log[0], ".log") / MIB, S.runs);
	for (int run = 0; run < S.runs; run++) {
		char *a1[] = { prog, "-v", recovery_log, NULL };
		big[run] = (double)peak_rss(a1) / 1024;
		char *a2[] = { prog, recovery_log, NULL };
		bigj[run] = (double)peak_rss(a2) / 1024;
		char *a3[] = { prog, "-v", read_log[0], NULL };
		small[run] = (double)peak_rss(a3) / 1024;
	}
	char wl[64];
	snprintf(wl, sizeof wl, "memory: elog-cat -v peak RSS, %.0f MiB log",
	         (double)dir_bytes(recovery_log, ".log") / MIB);
	row("rss_cat_v", wl, "MiB", median(big, S.runs), "", NAN, G_ELOG_LE, 8);
	row("rss_cat_json", "  elog-cat JSON peak RSS, same log", "MiB", median(bigj, S.runs),
	    "", NAN, G_ELOG_LE, 8);
	snprintf(wl, sizeof wl, "  flat: against a %.0f MiB log",
	         (double)dir_bytes(read_log[0], ".log") / MIB);
	row("rss_flat", wl, "MiB", median(big, S.runs), "elog-cat, small log",
	    median(small, S.runs), G_RATIO_LE, 1.25);
}

/* Bytes on disk per record, against SQLite's file per row after a
 * checkpoint. */
static void w_disk(int big)
{
	double e = (double)dir_bytes(read_log[big], NULL) / (double)S.read_n[big];
	double s = (double)sq_bytes(read_db[big]) / (double)S.read_n[big];
	const char *sz = big ? "1024" : "100";
	char wl[64], id[32];
	snprintf(wl, sizeof wl, "disk: bytes per record, %s B values", sz);
	snprintf(id, sizeof id, "disk_%s", sz);
	row(id, wl, "B/rec", e, "SQLite B/row", s, big ? G_NONE : G_RATIO_LE, 1);
}

/* Uncompressed against zstd without and with a dictionary. */
static void w_zstd(void)
{
	if (!elog_have_zstd()) {
		row_na("zstd", "zstd compression", "n/a (built without zstd)");
		return;
	}
	const struct corpus *c = corpus(0);
	long n = S.zstd_n;
	char *dir = path("zstd.elog");
	static const char *names[3] = { "uncompressed", "zstd, no dictionary",
	    "zstd + dictionary" };
	double bpr[3], ar[3], rr[3];
	progress("zstd: %ld x 100 B, 3 variants x %d runs", n, S.runs);
	for (int v = 0; v < 3; v++) {
		double b[16], a[16], r[16];
		for (int run = 0; run < S.runs; run++) {
			rm_rf(dir);
			elog *w = e_open(dir, 0, v ? ELOG_COMPRESS_ZSTD : ELOG_COMPRESS_NONE, v == 1);
			double t0 = now();
			for (long i = 0; i < n; i++) {
				e_append(w, ckey(c, i), KEY_LEN, cval(c, i), c->size, NULL);
				if ((i + 1) % 1000 == 0)
					e_flush(w);
			}
			e_flush(w);
			a[run] = (double)n / (now() - t0);
			e_close(w);
			b[run] = (double)dir_bytes(dir, NULL) / (double)n;
			read_elog(dir, n);
			r[run] = read_elog(dir, n);
		}
		bpr[v] = median(b, S.runs);
		ar[v] = median(a, S.runs);
		rr[v] = median(r, S.runs);
	}
	rm_rf(dir);
	double sqb = NAN;
	if (read_db[0])
		sqb = (double)sq_bytes(read_db[0]) / (double)S.read_n[0];
	row("zstd_bytes_none", "zstd: bytes/record, uncompressed", "B/rec", bpr[0],
	    "SQLite B/row", sqb, G_NONE, 0);
	for (int v = 1; v < 3; v++) {
		char wl[64], id[32];
		snprintf(wl, sizeof wl, "zstd: bytes/record, %s", names[v]);
		snprintf(id, sizeof id, "zstd_bytes_%s", v == 1 ? "nodict" : "dict");
		row(id, wl, "B/rec", bpr[v], "uncompressed", bpr[0], G_RATIO_LE, 0.5);
	}
	for (int v = 0; v < 3; v++) {
		char wl[64], id[32];
		snprintf(wl, sizeof wl, "  append, fsync/1000, %s", names[v]);
		snprintf(id, sizeof id, "zstd_append_%d", v);
		row(id, wl, "rec/s", ar[v], "uncompressed", ar[0], G_NONE, 0);
	}
	for (int v = 0; v < 3; v++) {
		char wl[64], id[32];
		snprintf(wl, sizeof wl, "  read, library, %s", names[v]);
		snprintf(id, sizeof id, "zstd_read_%d", v);
		row(id, wl, "rec/s", rr[v], "uncompressed", rr[0], G_NONE, 0);
	}
	free(dir);
}

/* ---- many writers and one-shot writers ------------------------------- */

/* Sizes of these rows: seconds per phase of the many-writer rows, spawns
 * per run of the one-shot row, seconds per phase of 4 one-shot loops. */
struct many_sizes {
	double secs;
	int oneshots;
	double loop_secs;
	long log_n;
};

static struct many_sizes many_sizes(void)
{
	if (strcmp(S.name, "quick") == 0)
		return (struct many_sizes){ 1.0, 30, 1.0, 100000 };
	if (strcmp(S.name, "full") == 0)
		return (struct many_sizes){ 5.0, 100, 3.0, 1000000 };
	return (struct many_sizes){ 0.3, 5, 0.3, 2000 };	/* --scale */
}

/* What one process of a many-writer phase did, in memory shared with the
 * bench. */
struct proc_slot {
	long acks, busy;
	double end;
};

enum mw_kind { MW_ELOG, MW_RAW, MW_SQLITE };

struct mw_job {
	enum mw_kind kind;
	const char *target;	/* log directory, file or database */
	const struct corpus *c;
	long per;		/* records per sync / transaction */
	double start, deadline;
};

static void sleep_until(double t)
{
	double d;
	while ((d = t - now()) > 0) {
		struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
		nanosleep(&ts, NULL);
	}
}

/* One process of a many-writer phase: open its own handle, wait for the
 * common start, then append and sync (or write + fdatasync, or commit)
 * job->per records at a time until the deadline. */
static void mw_body(const struct mw_job *job, int k, struct proc_slot *slot)
{
	const struct corpus *c = job->c;
	long i = k * 1000003L, per = job->per;
	elog *w = NULL;
	int fd = -1;
	sqlite3 *d = NULL;
	sqlite3_stmt *st = NULL;
	if (job->kind == MW_ELOG) {
		w = e_open(job->target, 0, ELOG_COMPRESS_NONE, 0);
	} else if (job->kind == MW_RAW) {
		fd = open(job->target, O_WRONLY | O_APPEND);
		if (fd < 0)
			die("%s: %s", job->target, strerror(errno));
	} else {
		d = sq_open(job->target);
		st = sq_insert_stmt(d);
	}
	sleep_until(job->start);
	while (now() < job->deadline) {
		if (job->kind == MW_ELOG) {
			uint64_t off;
			for (long j = 0; j < per; j++, i++)
				e_append(w, ckey(c, i), KEY_LEN, cval(c, i), c->size,
				         per == 1 ? &off : NULL);
			int rc = elog_sync(w);
			if (rc)
				die("elog_sync: %s: %s", elog_strerror(rc), elog_errmsg(w));
			slot->acks += per;
		} else if (job->kind == MW_RAW) {
			if (write(fd, cval(c, i), c->size) != (ssize_t)c->size ||
			    fdatasync(fd) < 0)
				die("%s: %s", job->target, strerror(errno));
			i++;
			slot->acks++;
		} else if (per == 1) {
			int rc = sq_insert(st, -1, ckey(c, i), KEY_LEN, cval(c, i), c->size);
			i++;
			if (rc == SQLITE_DONE)
				slot->acks++;
			else if (rc == SQLITE_BUSY)
				slot->busy++;
			else
				sq_check(rc, d, "insert");
		} else {
			/* IMMEDIATE: wait for the write lock (busy_timeout)
			 * before the transaction, not fail at its first INSERT. */
			if (sqlite3_exec(d, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
				slot->busy++;
				continue;
			}
			for (long j = 0; j < per; j++, i++)
				sq_check(sq_insert(st, -1, ckey(c, i), KEY_LEN, cval(c, i),
				                   c->size), d, "insert");
			sq_exec(d, "COMMIT");
			slot->acks += per;
		}
	}
	slot->end = now();
	if (w)
		e_close(w);
	if (fd >= 0)
		close(fd);
	if (d) {
		sqlite3_finalize(st);
		sqlite3_close(d);
	}
}

/* Fork n processes running job->kind (each with its own handle) from a
 * common start for secs seconds; the aggregate rate (records acknowledged
 * per second from the start to the last one's end), and the fewest and the
 * most records one process had acknowledged.  No SQLite connection may be
 * open in this process. */
static double mw_phase(struct mw_job *job, int n, double secs, long *minp, long *maxp)
{
	long sum = 0, mn = LONG_MAX, mx = 0;
	struct proc_slot *slots = mmap(NULL, (size_t)n * sizeof *slots,
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(slots, 0, (size_t)n * sizeof *slots);
	pid_t pids[16];
	/* Room for the forks and for opening the handles. */
	job->start = now() + 0.1 + 0.02 * n;
	job->deadline = job->start + secs;
	fflush(NULL);
	for (int k = 0; k < n; k++) {
		pids[k] = fork();
		if (pids[k] < 0)
			die("fork: %s", strerror(errno));
		if (pids[k] == 0) {
			alarm((unsigned)secs + 60);	/* bound the child too */
			signal(SIGALRM, SIG_DFL);
			mw_body(job, k, &slots[k]);
			_exit(0);
		}
	}
	int failed = 0;
	for (int k = 0; k < n; k++) {
		int status;
		if (waitpid(pids[k], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed = 1;
	}
	if (failed)
		die("a writer process failed");
	double end = job->start;
	for (int k = 0; k < n; k++) {
		sum += slots[k].acks;
		if (slots[k].acks < mn)
			mn = slots[k].acks;
		if (slots[k].acks > mx)
			mx = slots[k].acks;
		if (slots[k].end > end)
			end = slots[k].end;
	}
	munmap(slots, (size_t)n * sizeof *slots);
	*minp = mn;
	*maxp = mx;
	if (job->kind == MW_ELOG) {	/* every acknowledged record is there */
		elog_reader *r;
		if (elog_reader_open(&r, job->target) != 0 || elog_reader_seek_end(r) != 0)
			die("%s: cannot read the log back", job->target);
		if (elog_reader_position(r) != (uint64_t)sum)
			die("%s: %d writers acknowledged %ld records, the log ends at %llu",
			    job->target, n, sum, (unsigned long long)elog_reader_position(r));
		elog_reader_close(r);
	}
	return end > job->start ? (double)sum / (end - job->start) : NAN;
}

/* Fresh targets for one phase: an empty log, an empty file, an empty
 * table (made here, so that the processes only open them). */
static void mw_fresh(const char *dir, const char *raw, const char *db)
{
	if (dir) {
		rm_rf(dir);
		e_close(e_open(dir, 0, ELOG_COMPRESS_NONE, 0));
	}
	if (raw) {
		int fd = open(raw, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || fsync(fd) < 0)
			die("%s: %s", raw, strerror(errno));
		close(fd);
	}
	if (db) {
		sq_unlink(db);
		sqlite3_close(sq_open(db));
	}
}

/* N processes, each with its own elog handle on one log, each
 * appending and syncing one 100 B record at a time; against N processes
 * doing write + fdatasync of the same bytes on one file opened O_APPEND,
 * against one process doing so alone, and against N SQLite connections in
 * N processes committing a row per transaction.  The phases take turns. */
static void w_multi(void)
{
	struct many_sizes ms = many_sizes();
	const struct corpus *c = corpus(0);
	char *dir = path("multi.elog"), *raw = path("multi.raw"), *db = path("multi.db");
	static const int ns[2] = { 4, 8 };
	double er[2][16], rr[2][16], sr[2][16], r1[2][16], ef[2][16], sf[2][16];
	long mn, mx;
	progress("many writers: 4 and 8 processes, %.1f s per phase x %d runs",
	         ms.secs, S.runs);
	for (int run = 0; run < S.runs; run++) {
		struct mw_job job = { .c = c, .per = 1 };
		for (int x = 0; x < 2; x++) {
			int n = ns[x];
			/* The four phases take turns, each run starting one
			 * further on, so that none always follows another. */
			for (int turn = 0; turn < 4; turn++) {
				int which = (turn + run + x) % 4;
				const char *what;
				double *rate;
				int procs = n;
				job.kind = which == 0 ? MW_ELOG : which == 3 ? MW_SQLITE : MW_RAW;
				if (which == 0) {
					mw_fresh(dir, NULL, NULL);
					job.target = dir;
					what = "elog";
					rate = &er[x][run];
				} else if (which == 1 || which == 2) {
					mw_fresh(NULL, raw, NULL);
					job.target = raw;
					what = which == 1 ? "raw O_APPEND" : "raw (alone)";
					rate = which == 1 ? &rr[x][run] : &r1[x][run];
					procs = which == 1 ? n : 1;
				} else {
					mw_fresh(NULL, NULL, db);
					job.target = db;
					what = "SQLite";
					rate = &sr[x][run];
				}
				*rate = mw_phase(&job, procs, ms.secs, &mn, &mx);
				if (which == 0)
					ef[x][run] = mx ? (double)mn / (double)mx : NAN;
				if (which == 3)
					sf[x][run] = mx ? (double)mn / (double)mx : NAN;
				progress("  run %d, %d %s writers: %.0f acks/s, per writer %ld..%ld",
				         run + 1, procs, what, *rate, mn, mx);
			}
			progress("  run %d, %d writers: elog / raw O_APPEND %.2fx, / raw 1 process"
			         " %.2fx, / SQLite %.2fx", run + 1, n, er[x][run] / rr[x][run],
			         er[x][run] / r1[x][run], er[x][run] / sr[x][run]);
		}
	}
	rm_rf(dir);
	unlink(raw);
	sq_unlink(db);
	for (int x = 0; x < 2; x++) {
		int n = ns[x];
		char wl[64], id[32], ref[32];
		double rate = median(er[x], S.runs);
		snprintf(wl, sizeof wl, "many writers: %d procs, ack/rec, 100 B", n);
		snprintf(id, sizeof id, "multi%d_100", n);
		snprintf(ref, sizeof ref, "raw %d procs O_APPEND", n);
		row(id, wl, "acks/s", rate, ref, median(rr[x], S.runs), G_RATIO_GE, 0.9);
		snprintf(id, sizeof id, "multi%d_100_raw1", n);
		row(id, "  against 1 raw write+fdatasync loop", "acks/s", rate,
		    "raw 1 process", median(r1[x], S.runs), G_NONE, 0);
		snprintf(id, sizeof id, "multi%d_100_sqlite", n);
		snprintf(ref, sizeof ref, "SQLite %d procs", n);
		snprintf(wl, sizeof wl, "  against SQLite, %d procs, txn/row", n);
		row(id, wl, "acks/s", rate, ref, median(sr[x], S.runs), G_RATIO_GE, 1);
		snprintf(id, sizeof id, "multi%d_100_fair", n);
		row(id, "  fairness: min/max acks per process", "min/max",
		    median(ef[x], S.runs), "SQLite min/max", median(sf[x], S.runs), G_NONE, 0);
	}
	free(dir);
	free(raw);
	free(db);
}

/* 4 processes each appending batches of 1000 x 100 B and syncing
 * each batch, against 4 SQLite processes committing 1000 rows per
 * transaction. */
static void w_multi_batch(void)
{
	struct many_sizes ms = many_sizes();
	const struct corpus *c = corpus(0);
	char *dir = path("multib.elog"), *db = path("multib.db");
	double er[16], sr[16], ef[16], sf[16];
	long mn, mx;
	progress("many writers, batches of 1000: 4 processes, %.1f s per phase x %d runs",
	         ms.secs, S.runs);
	for (int run = 0; run < S.runs; run++) {
		struct mw_job job = { .c = c, .per = 1000 };
		for (int turn = 0; turn < 2; turn++) {
			if ((turn == 0) == (run % 2 == 0)) {
				mw_fresh(dir, NULL, NULL);
				job.kind = MW_ELOG;
				job.target = dir;
				er[run] = mw_phase(&job, 4, ms.secs, &mn, &mx);
				ef[run] = mx ? (double)mn / (double)mx : NAN;
			} else {
				mw_fresh(NULL, NULL, db);
				job.kind = MW_SQLITE;
				job.target = db;
				sr[run] = mw_phase(&job, 4, ms.secs, &mn, &mx);
				sf[run] = mx ? (double)mn / (double)mx : NAN;
			}
		}
		progress("  run %d: elog %.0f rec/s, SQLite %.0f rec/s, %.2fx", run + 1,
		         er[run], sr[run], er[run] / sr[run]);
	}
	rm_rf(dir);
	sq_unlink(db);
	row("multib4_100", "many writers: 4 procs, fsync/1000, 100 B", "rec/s",
	    median(er, S.runs), "SQLite 4 procs", median(sr, S.runs), G_NONE, 0);
	row("multib4_100_fair", "  fairness: min/max records per process", "min/max",
	    median(ef, S.runs), "SQLite min/max", median(sf, S.runs), G_NONE, 0);
	free(dir);
	free(db);
}

/* One one-shot writer process: `echo x | elog-append LOG`, or the sqlite3
 * shell inserting one row into the WAL database. */
static void oneshot_spawn(int sqlite, const char *log, const char *db,
                          const char *xfile, double *secs)
{
	char prog[4096];
	snprintf(prog, sizeof prog, "%s/elog-append", bindir);
	char *ae[] = { prog, (char *)log, NULL };
	char *as[] = { (char *)sqlite3_cli, "-cmd", ".timeout 10000",
	    "-cmd", "pragma synchronous=full", (char *)db,
	    "INSERT INTO log(ts, schema, key, value)"
	    " VALUES(CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 0, NULL, 'x')",
	    NULL };
	spawn(sqlite ? as : ae, sqlite ? NULL : xfile, NULL, secs);
}

/* 4 processes each running one-shot writers one after the other for secs
 * seconds; the per-process times go to t[k * cap ...], their counts to
 * n[k]. */
static double oneshot_loops(int sqlite, const char *log, const char *db,
                            const char *xfile, double secs, double *t, long cap, long *n)
{
	long *shared = mmap(NULL, 4 * (size_t)cap * sizeof *t + 4 * sizeof *n,
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	long *cnt = shared;
	double *tim = (double *)(shared + 4);
	memset(cnt, 0, 4 * sizeof *cnt);
	double start = now() + 0.1, deadline = start + secs;
	pid_t pids[4];
	fflush(NULL);
	for (int k = 0; k < 4; k++) {
		pids[k] = fork();
		if (pids[k] < 0)
			die("fork: %s", strerror(errno));
		if (pids[k] == 0) {
			alarm((unsigned)secs + 60);
			sleep_until(start);
			while (now() < deadline && cnt[k] < cap) {
				oneshot_spawn(sqlite, log, db, xfile, &tim[k * cap + cnt[k]]);
				cnt[k]++;
			}
			_exit(0);
		}
	}
	int failed = 0;
	for (int k = 0; k < 4; k++) {
		int status;
		if (waitpid(pids[k], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed = 1;
	}
	if (failed)
		die("a one-shot loop failed");
	double elapsed = now() - start;
	memcpy(n, cnt, 4 * sizeof *n);
	memcpy(t, tim, 4 * (size_t)cap * sizeof *t);
	munmap(shared, 4 * (size_t)cap * sizeof *t + 4 * sizeof *n);
	return elapsed;
}

/* A new process appending one record to an existing healthy log,
 * against the sqlite3 shell inserting one row into an existing WAL
 * database with synchronous=full; one at a time, then 4 loops at once. */
static void w_oneshot(void)
{
	if (!runnable(sqlite3_cli)) {
		row_na("oneshot", "one-shot writer: echo x | elog-append",
		       "n/a (no sqlite3 command-line shell: --sqlite3 PATH)");
		return;
	}
	struct many_sizes ms = many_sizes();
	const struct corpus *c = corpus(0);
	char *dir = path("oneshot.elog"), *db = path("oneshot.db"), *xfile = path("x.txt");
	FILE *f = fopen(xfile, "w");
	if (!f || fputs("x\n", f) < 0 || fclose(f) != 0)
		die("%s: write failed", xfile);
	progress("one-shot writers: logs of %ld x 100 B, %d spawns x %d runs,"
	         " then 4 loops of %.1f s", ms.log_n, ms.oneshots, S.runs, ms.loop_secs);
	build_elog(dir, c, ms.log_n, 0, 0);
	build_sqlite(db, c, ms.log_n, 0);
	int k1 = ms.oneshots;
	double *et = xmalloc((size_t)k1 * sizeof *et), *st = xmalloc((size_t)k1 * sizeof *st);
	long cap = 100000;
	double *lt = xmalloc(4 * (size_t)cap * sizeof *lt), *all = xmalloc(4 * (size_t)cap * sizeof *all);
	double em[16], sm[16], e4[16], s4[16], ea[16], sa[16];
	for (int run = 0; run < S.runs; run++) {
		for (int i = 0; i < k1; i++) {
			if ((i + run) % 2 == 0) {
				oneshot_spawn(0, dir, db, xfile, &et[i]);
				oneshot_spawn(1, dir, db, xfile, &st[i]);
			} else {
				oneshot_spawn(1, dir, db, xfile, &st[i]);
				oneshot_spawn(0, dir, db, xfile, &et[i]);
			}
		}
		em[run] = median(et, k1) * 1e3;
		sm[run] = median(st, k1) * 1e3;
		for (int turn = 0; turn < 2; turn++) {
			int sqlite = (turn == 0) != (run % 2 == 0);
			long n[4], m = 0;
			double el = oneshot_loops(sqlite, dir, db, xfile, ms.loop_secs,
			                          lt, cap, n);
			for (int k = 0; k < 4; k++)
				for (long j = 0; j < n[k]; j++)
					all[m++] = lt[(size_t)k * cap + j];
			double p = median(all, (int)m) * 1e3;
			/* aggregate: one-shot writers completed per second */
			double agg = (double)m / el;
			*(sqlite ? &s4[run] : &e4[run]) = p;
			*(sqlite ? &sa[run] : &ea[run]) = agg;
		}
		progress("  run %d: one %.2f / %.2f ms (%.2fx); 4 loops %.2f / %.2f ms (%.2fx),"
		         " %.0f / %.0f per s (elog / sqlite3)", run + 1, em[run], sm[run],
		         em[run] / sm[run], e4[run], s4[run], e4[run] / s4[run], ea[run], sa[run]);
	}
	row("oneshot", "one-shot writer: echo x | elog-append", "ms", median(em, S.runs),
	    "sqlite3 CLI insert", median(sm, S.runs), G_RATIO_LE, 0.35);
	row("oneshot4", "  4 at once: time per process", "ms", median(e4, S.runs),
	    "4 sqlite3 CLI loops", median(s4, S.runs), G_NONE, 0);
	row("oneshot4_rate", "  4 at once: aggregate", "proc/s", median(ea, S.runs),
	    "4 sqlite3 CLI loops", median(sa, S.runs), G_NONE, 0);
	rm_rf(dir);
	sq_unlink(db);
	unlink(xfile);
	free(et);
	free(st);
	free(lt);
	free(all);
	free(dir);
	free(db);
	free(xfile);
}

/* ---- cost that does not grow with the number of segments ------------- */

/* The rows below need logs of tens of thousands of segments.  The writer
 * syncs every segment it closes (as it must), which makes such a log cost
 * minutes to build; these are written here directly in the documented
 * format (elog(5)), with their indexes, and no sync: what is timed is
 * reading and following them, not building them. */

/* A log at dir of n records of corpus c in segments of seg_bytes; keys
 * "user-%011ld" numbered i when distinct_keys, else the corpus's keys;
 * values of vlen bytes (at most the corpus's). */
static void build_direct(const char *dir, const struct corpus *c, long n,
                         uint64_t seg_bytes, int distinct_keys, size_t vlen)
{
	rm_rf(dir);
	e_close(e_open(dir, seg_bytes, ELOG_COMPRESS_NONE, 0));	/* settings */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		die("%s: %s", dir, strerror(errno));
	size_t cap = seg_bytes + (64u << 10);
	unsigned char *seg = xmalloc(cap), *ix = xmalloc(cap / 4 + IDX_HDR);
	size_t len = 0, ixlen = 0;
	uint64_t base = 0;
	struct idx_builder ib;
	char key[32], name[NAME_MAX_LOCAL];
	int64_t ts = wall_ms() - n;
	for (long i = 0; i <= n; i++) {
		size_t size = i < n ? elog__rec_size(KEY_LEN, vlen) : 0;
		if (i == n || len == 0 || len + size > seg_bytes) {
			if (len) {	/* write the segment just filled */
				elog__seg_name(name, base, SEG_EXT);
				int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
				if (fd < 0 || write(fd, seg, len) != (ssize_t)len)
					die("%s: %s", name, strerror(errno));
				close(fd);
				elog__seg_name(name, base, IDX_EXT);
				fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
				if (fd < 0 || write(fd, ix, ixlen) != (ssize_t)ixlen)
					die("%s: %s", name, strerror(errno));
				close(fd);
			}
			if (i == n)
				break;
			base = (uint64_t)i;
			elog__seg_header_encode(seg, base);
			len = SEG_HDR;
			elog__idx_header_encode(ix);
			ixlen = IDX_HDR;
			memset(&ib, 0, sizeof ib);
		}
		struct elog_record r = { 0 };
		if (distinct_keys) {
			snprintf(key, sizeof key, "user-%011ld", i);
			r.key = key;
		} else {
			r.key = ckey(c, i);
		}
		r.offset = (uint64_t)i;
		r.ts_ms = ts + i;
		r.key_len = KEY_LEN;
		r.value = cval(c, i);
		r.value_len = vlen;
		elog__rec_encode(seg + len, &r);
		struct idx_entry e;
		if (elog__idx_builder_add(&ib, r.offset, r.ts_ms, len, DEFAULT_INDEX_INTERVAL, &e)) {
			elog__idx_entry_encode(ix + ixlen, &e);
			ixlen += IDX_ENTRY;
		}
		len += size;
	}
	struct watermark wm = { (uint64_t)n, base, len };
	unsigned char wb[WM_SIZE];
	elog__wm_encode(wb, &wm);
	int fd = openat(dfd, FN_WATERMARK, O_WRONLY);
	if (fd < 0 || pwrite(fd, wb, WM_SIZE, 0) != WM_SIZE)
		die("%s/watermark: %s", dir, strerror(errno));
	close(fd);
	close(dfd);
	free(seg);
	free(ix);
}

/* Full read of the same records in 4 KiB segments and in 64 MiB ones. */
static void w_segments(void)
{
	const struct corpus *c = corpus(0);
	long n = SS.segread_n;
	char *small = path("segs-4k.elog"), *large = path("segs-64m.elog");
	progress("segments: %ld x 100 B in 4 KiB and in 64 MiB segments x %d runs", n, S.runs);
	build_direct(small, c, n, 4096, 0, c->size);
	build_direct(large, c, n, 64u << 20, 0, c->size);
	double es[16], el[16], cs[16], cl[16];
	char prog[4096];
	snprintf(prog, sizeof prog, "%s/elog-cat", bindir);
	int have_cat = access(prog, X_OK) == 0;
	read_elog(small, n);	/* warm both */
	read_elog(large, n);
	for (int run = 0; run < S.runs; run++) {
		es[run] = read_elog(small, n);
		el[run] = read_elog(large, n);
		if (have_cat) {		/* elog-cat to /dev/null, as a user reads */
			char *a[] = { prog, small, NULL }, *b[] = { prog, large, NULL };
			spawn(a, NULL, NULL, &cs[run]);
			spawn(b, NULL, NULL, &cl[run]);
			cs[run] = (double)n / cs[run];
			cl[run] = (double)n / cl[run];
		}
	}
	char wl[64];
	if (have_cat) {
		snprintf(wl, sizeof wl, "elog-cat %ldk x 100 B: 4 KiB vs 64 MiB segs", n / 1000);
		row("segments_cat", wl, "rec/s", median(cs, S.runs), "64 MiB segments",
		    median(cl, S.runs), G_RATIO_GE, 0.5);
	}
	snprintf(wl, sizeof wl, "  library read, same logs (%ld segments)",
	         (long)(n * (long)elog__rec_size(KEY_LEN, c->size) / 4064));
	row("segments_read", wl, "rec/s", median(es, S.runs), "64 MiB segments",
	    median(el, S.runs), G_NONE, 0);
	rm_rf(small);
	rm_rf(large);
	free(small);
	free(large);
}

/* A follower thread's CPU per batch: it waits in elog_reader_wait() and
 * reads each one-record batch as the writer (another thread) makes it
 * durable; the writer waits for it before the next batch. */
struct segfollow {
	const char *dir;
	long batches;
	volatile long seen;
	double cpu;
};

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *segfollow_run(void *arg)
{
	struct segfollow *f = arg;
	elog_reader *r;
	struct elog_record rec;
	int rc = elog_reader_open(&r, f->dir);
	if (rc)
		die("elog_reader_open: %s", elog_strerror(rc));
	if ((rc = elog_reader_seek_end(r)) != 0)
		die("elog_reader_seek_end: %s", elog_strerror(rc));
	/* Timed from the first batch on: opening the log and finding its
	 * end are done once, not per batch. */
	double t0 = 0;
	while (f->seen < f->batches) {
		while ((rc = elog_reader_next(r, &rec)) == 0)
			if (__atomic_add_fetch(&f->seen, 1, __ATOMIC_RELEASE) == 1)
				t0 = thread_cpu();
		if (rc != ELOG_END)
			die("elog_reader_next: %s", elog_reader_errmsg(r));
		if (f->seen >= f->batches)
			break;
		rc = elog_reader_wait(r, 1000);
		if (rc && rc != ELOG_TIMEOUT)
			die("elog_reader_wait: %s", elog_strerror(rc));
	}
	f->cpu = thread_cpu() - t0;
	elog_reader_close(r);
	return NULL;
}

static double follow_cpu_per_batch(const char *dir, long batches)
{
	const struct corpus *c = corpus(0);
	elog *w = e_open(dir, 0, ELOG_COMPRESS_NONE, 0);
	struct segfollow f = { dir, batches, 0, 0 };
	pthread_t t;
	pthread_create(&t, NULL, segfollow_run, &f);
	sleep_ms(50);	/* let it open and reach the end */
	for (long i = 0; i < batches; i++) {
		e_append(w, ckey(c, i), KEY_LEN, cval(c, i), c->size, NULL);
		e_flush(w);
		while (__atomic_load_n(&f.seen, __ATOMIC_ACQUIRE) <= i)
			sleep_ms(0.05);
	}
	pthread_join(t, NULL);
	e_close(w);
	return f.cpu / (double)(batches - 1) * 1e6;
}

static void w_follow_segments(void)
{
	const struct corpus *c = corpus(0);
	/* 4 KiB segments hold 28 records of 100 B. */
	long n = 20000L * 28;
	char *many = path("follow-20k.elog"), *few = path("follow-20.elog");
	progress("follower CPU: 20,000 segments vs 20, %ld batches x %d runs",
	         SS.follow_batches, S.runs);
	build_direct(many, c, n, 4096, 0, c->size);
	build_direct(few, c, n, ((uint64_t)n * elog__rec_size(KEY_LEN, c->size) / 20 + 4095) & ~4095ull,
	             0, c->size);
	double m[16], f[16];
	for (int run = 0; run < S.runs; run++) {
		m[run] = follow_cpu_per_batch(many, SS.follow_batches);
		f[run] = follow_cpu_per_batch(few, SS.follow_batches);
	}
	row("follow_segments", "follower CPU per batch: 20k segs vs 20", "us",
	    median(m, S.runs), "20 segments", median(f, S.runs), G_RATIO_LE, 1.5);
	rm_rf(many);
	rm_rf(few);
	free(many);
	free(few);
}

/* Compaction's peak RSS per distinct key: elog-compact over 3M records of
 * 3M distinct keys, less its peak over a log of a thousand keys. */
static void w_compact_rss(void)
{
	char prog[4096];
	snprintf(prog, sizeof prog, "%s/elog-compact", bindir);
	if (access(prog, X_OK) != 0) {
		row_na("compact_rss", "compaction peak RSS per key", "n/a (elog-compact not built)");
		return;
	}
	const struct corpus *c = corpus(0);
	long keys = SS.rss_keys;
	char *big = path("rss-keys.elog"), *tiny = path("rss-base.elog");
	progress("compaction RSS: %ld distinct keys x %d runs", keys, S.runs);
	build_direct(big, c, keys, 64u << 20, 1, 16);
	build_direct(tiny, c, 1000, 64u << 20, 1, 16);
	double bpk[16];
	for (int run = 0; run < S.runs; run++) {
		char *a[] = { prog, big, NULL }, *b[] = { prog, tiny, NULL };
		long peak = peak_rss(a), base = peak_rss(b);
		bpk[run] = (double)(peak - base) * 1024.0 / (double)keys;
	}
	char wl[64];
	snprintf(wl, sizeof wl, "compaction peak RSS per key, %.1fM keys", keys / 1e6);
	row("compact_rss", wl, "B/key", median(bpk, S.runs), "", NAN, G_ELOG_LE, 40);
	rm_rf(big);
	rm_rf(tiny);
	free(big);
	free(tiny);
}

/* --long: the size a user plans for.  long_n x 100 B appended through the
 * library (batches of 10,000), read in full, seeked, then half removed by
 * elog-retain and compacted by elog-compact; the programs' peak RSS. */
static long long_n = 100000000L;

static void w_long(void)
{
	const struct corpus *c = corpus(0);
	char *dir = path("long.elog");
	long n = long_n;
	char wl[80], prog[4096];
	progress("long: %ld x 100 B", n);
	rm_rf(dir);
	elog *w = e_open(dir, 0, ELOG_COMPRESS_NONE, 0);
	double t0 = now();
	for (long i = 0; i < n; i++) {
		e_append(w, ckey(c, i), KEY_LEN, cval(c, i), c->size, NULL);
		if ((i + 1) % 10000 == 0)
			e_flush(w);
	}
	e_close(w);
	double t = now() - t0;
	uint64_t bytes = dir_bytes(dir, ".log");
	snprintf(wl, sizeof wl, "long: append %.1fM x 100 B (%.1f GiB)", n / 1e6,
	         (double)bytes / MIB / 1024);
	row("long_append", wl, "rec/s", (double)n / t, "", NAN, G_NONE, 0);

	t0 = now();
	double rate = read_elog(dir, n);
	(void)t0;
	row("long_read", "  long: full read (library)", "rec/s", rate, "", NAN, G_NONE, 0);

	snprintf(prog, sizeof prog, "%s/elog-cat", bindir);
	char *cat[] = { prog, "-v", dir, NULL };
	row("long_cat_rss", "  long: elog-cat -v peak RSS", "MiB",
	    (double)peak_rss(cat) / 1024, "", NAN, G_NONE, 0);

	elog_reader *r;
	struct elog_record rec;
	if (elog_reader_open(&r, dir) != 0)
		die("elog_reader_open %s", dir);
	long seeks = 10000;
	double *lat = xmalloc((size_t)seeks * sizeof *lat);
	for (long i = 0; i < seeks; i++) {
		uint64_t off = mix((uint64_t)i) % (uint64_t)n;
		double s0 = now();
		if (elog_reader_seek(r, off) != 0 || elog_reader_next(r, &rec) != 0 ||
		    rec.offset != off)
			die("seek %llu failed", (unsigned long long)off);
		lat[i] = (now() - s0) * 1e6;
	}
	elog_reader_close(r);
	sort_doubles(lat, seeks);
	row("long_seek_p50", "  long: seek p50 (random, one reader)", "us",
	    quantile(lat, seeks, 0.5), "", NAN, G_NONE, 0);
	row("long_seek_p99", "  long: seek p99", "us", quantile(lat, seeks, 0.99), "", NAN,
	    G_NONE, 0);
	free(lat);

	snprintf(prog, sizeof prog, "%s/elog-retain", bindir);
	char max[32];
	snprintf(max, sizeof max, "%llu", (unsigned long long)(bytes / 2));
	char *ret[] = { prog, "--max-bytes", max, dir, NULL };
	t0 = now();
	long rss = peak_rss(ret);
	row("long_retain", "  long: elog-retain, oldest half", "s", now() - t0, "", NAN,
	    G_NONE, 0);
	row("long_retain_rss", "  long: elog-retain peak RSS", "MiB", (double)rss / 1024, "",
	    NAN, G_NONE, 0);

	snprintf(prog, sizeof prog, "%s/elog-compact", bindir);
	char *cmp[] = { prog, dir, NULL };
	t0 = now();
	rss = peak_rss(cmp);
	row("long_compact", "  long: elog-compact, 100k keys", "s", now() - t0, "", NAN,
	    G_NONE, 0);
	row("long_compact_rss", "  long: elog-compact peak RSS", "MiB", (double)rss / 1024,
	    "", NAN, G_NONE, 0);
	rm_rf(dir);
	free(dir);
}

/* ---- the workloads and the runner ----------------------------------- */

/* A workload measures one thing of elog against its reference and prints
 * its rows (each row names its unit).  Run once, or once per record size:
 * consecutive workloads of the latter kind take turns, all of them at 100 B,
 * then all at 1024 B.  setup(big) makes the data it reads before it runs
 * (the read logs of that size); data shared by several workloads stays
 * until teardown() at the end of the suite.  Some depend on those before:
 * ack8 compares with ack1's rate, and memory reuses the log recovery left
 * (making it again when recovery did not run). */
struct workload {
	const char *name;		/* its name in --only */
	void (*setup)(int big);
	void (*once)(void);		/* run once ... */
	void (*each_size)(int big);	/* ... or for each record size */
};

static const struct workload workloads[] = {
	{ "append",          NULL,        NULL,              w_append },
	{ "append_prog",     NULL,        w_append_prog,     NULL },
	{ "ack1",            NULL,        NULL,              w_ack1 },
	{ "ack8",            NULL,        NULL,              w_ack8 },
	{ "multi",           NULL,        w_multi,           NULL },
	{ "multi_batch",     NULL,        w_multi_batch,     NULL },
	{ "oneshot",         NULL,        w_oneshot,         NULL },
	{ "read",            ensure_read, NULL,              w_read },
	{ "cat",             ensure_read, NULL,              w_cat },
	{ "seek",            ensure_read, NULL,              w_seek },
	/* Its read logs only when the sqlite3 shell is there: it sees to
	 * them itself. */
	{ "spawn",           NULL,        w_spawn,           NULL },
	{ "retain",          NULL,        w_retain,          NULL },
	{ "compact",         NULL,        w_compact,         NULL },
	{ "follow",          NULL,        w_follow,          NULL },
	{ "recovery",        NULL,        w_recovery,        NULL },
	{ "memory",          ensure_read, w_memory,          NULL },
	{ "disk",            ensure_read, NULL,              w_disk },
	{ "zstd",            NULL,        w_zstd,            NULL },
	{ "segments",        NULL,        w_segments,        NULL },
	{ "follow_segments", NULL,        w_follow_segments, NULL },
	{ "compact_rss",     NULL,        w_compact_rss,     NULL },
};
#define NWORKLOADS (sizeof workloads / sizeof workloads[0])

/* Workload w at one size (0 for one run once), if --only selects it. */
static void run_workload(const struct workload *w, int big)
{
	if (!selected(w->name))
		return;
	if (w->setup)
		w->setup(big);
	if (w->once)
		w->once();
	else
		w->each_size(big);
}

/* Remove the data the workloads shared. */
static void teardown(void)
{
	for (int big = 0; big < 2; big++) {
		if (read_log[big]) {
			rm_rf(read_log[big]);
			sq_unlink(read_db[big]);
		}
	}
	if (recovery_log)
		rm_rf(recovery_log);
}

/* The suite: every selected workload in the order of the table. */
static void run_suite(void)
{
	for (size_t i = 0; i < NWORKLOADS;) {
		size_t end = i + 1;

		if (workloads[i].once) {
			run_workload(&workloads[i], 0);
			i = end;
			continue;
		}
		while (end < NWORKLOADS && workloads[end].each_size)
			end++;
		for (int big = 0; big < 2; big++)
			for (size_t k = i; k < end; k++)
				run_workload(&workloads[k], big);
		i = end;
	}
	teardown();
}

/* ---- main ----------------------------------------------------------- */

/* The usage, with the workloads --only takes in the order they run. */
static void usage(void)
{
	size_t col = 6;

	fputs("usage: bench [--quick | --full] [--runs N] [--dir DIR] [--bin DIR]\n"
	      "             [--json FILE|-] [--only LIST] [--sqlite3 PATH] [--scale F]\n"
	      "LIST: ", stderr);
	for (size_t i = 0; i < NWORKLOADS; i++) {
		size_t n = strlen(workloads[i].name) + 1;
		if (col + n > 64) {
			fputs("\n      ", stderr);
			col = 6;
		}
		fprintf(stderr, "%s%c", workloads[i].name, i + 1 < NWORKLOADS ? ',' : '\n');
		col += n;
	}
	fputs("       bench --long [--long-records N] [--dir DIR] [--bin DIR] [--json FILE|-]\n",
	      stderr);
	exit(2);
}

/* --scale F: every count of the sizes by F, for a smoke test of the suite
 * itself. */
static void scale_sizes(double scale)
{
	S.name = "scaled";
	for (int i = 0; i < 2; i++) {
		S.batch_n[i] = (long)(S.batch_n[i] * scale) + 1000;
		S.read_n[i] = (long)(S.read_n[i] * scale) + 1000;
	}
	S.lines = (long)(S.lines * scale) + 1000;
	S.ack1_n = (long)(S.ack1_n * scale) + 10;
	S.ack8_secs *= scale;
	S.seeks = (long)(S.seeks * scale) + 10;
	S.spawns = (int)(S.spawns * scale) + 3;
	S.retain_n = (long)(S.retain_n * scale) + 1000;
	S.compact_n = (long)(S.compact_n * scale) + 1000;
	S.follow_n = (int)(S.follow_n * scale) + 10;
	S.recovery_bytes = (uint64_t)((double)S.recovery_bytes * scale) + (1u << 20);
	S.zstd_n = (long)(S.zstd_n * scale) + 2000;
	SS.segread_n = (long)(SS.segread_n * scale) + 1000;
	SS.follow_batches = (long)(SS.follow_batches * scale) + 10;
	SS.rss_keys = (long)(SS.rss_keys * scale) + 1000;
}

/* The options, into the globals; 1 for --long. */
static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "full", no_argument, NULL, 'F' },
		{ "runs", required_argument, NULL, 'r' },
		{ "dir", required_argument, NULL, 'd' },
		{ "bin", required_argument, NULL, 'b' },
		{ "json", required_argument, NULL, 'j' },
		{ "only", required_argument, NULL, 'o' },
		{ "sqlite3", required_argument, NULL, 's' },
		{ "scale", required_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ "long", no_argument, NULL, 'L' },
		{ "long-records", required_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	int c, runs = 0, long_mode = 0;
	double scale = 1;
	const char *json = NULL;

	S = FULL;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'q': S = QUICK; break;
		case 'F': S = FULL; break;
		case 'r': runs = atoi(optarg); break;
		case 'd': workdir = optarg; break;
		case 'b': bindir = optarg; break;
		case 'j': json = optarg; break;
		case 'o': only = optarg; break;
		case 's': sqlite3_cli = optarg; break;
		case 'x': scale = atof(optarg); break;
		case 'L': long_mode = 1; break;
		case 'N': long_n = atol(optarg); break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (runs) {
		if (runs < 1 || runs > 15)
			die("--runs: 1 to 15");
		S.runs = runs;
	}
	if (scale <= 0 || scale > 1)
		die("--scale: a fraction in (0, 1]");
	if (scale < 1)
		scale_sizes(scale);
	if (long_n < 10000)
		die("--long-records: at least 10000");
	if (json)
		jsonf = strcmp(json, "-") == 0 ? stdout : fopen(json, "w");
	if (json && !jsonf)
		die("%s: %s", json, strerror(errno));
	return long_mode;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "--rss-child") == 0)
		return rss_child(argv + 2);
	int long_mode = parse_args(argc, argv);
	/* The whole suite is bounded: quick in minutes, full well under an hour. */
	signal(SIGALRM, on_alarm);
	alarm(strcmp(S.name, "quick") == 0 ? 1500 : 3600);
	signal(SIGPIPE, SIG_IGN);

	double t0;
	if (long_mode) {	/* one run of the long workload, nothing else */
		printf("elog %s: the long run, %ld records of 100 B, in %s\n\n", elog_version(),
		       long_n, workdir);
		header();
		t0 = now();
		alarm(0);
		w_long();
		printf("\n%.0f s\n", now() - t0);
	} else {
		printf("elog %s against SQLite %s: %s sizes, medians of %d runs, in %s\n",
		       elog_version(), sqlite3_libversion(), S.name, S.runs, workdir);
		printf("ratio = elog / reference; targets from issue 7 (and issue 8 for zstd)\n\n");
		header();
		t0 = now();
		run_suite();
		printf("\n%d PASS, %d MISS; %.0f s\n", npass, nmiss, now() - t0);
	}
	if (jsonf && jsonf != stdout)
		fclose(jsonf);
	return 0;
}
