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
 *         [--redis-server PATH | --no-redis]
 *
 * Where the issue names Redis Streams as a peer, the bench starts its own
 * redis-server (appendfsync always, on a unix socket in DIR) and the rows
 * gain a Redis figure; without hiredis or redis-server those rows say why.
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elog.h"
#include "internal.h" /* the format, for build_direct() */

#ifdef HAVE_HIREDIS
#include <hiredis.h>
#endif

#define KEY_LEN 16
#define NVALS 65536u /* distinct values pregenerated per size */
#define MIB (1024.0 * 1024.0)

/* ---- sizes ---------------------------------------------------------- */

struct sizes {
	const char *name;
	int runs;
	long batch_n[2];         /* batched append, 100 B and 1024 B */
	long lines;              /* elog-append input lines */
	long ack1_n;             /* durable acks per run, 1 thread */
	double ack8_secs;        /* seconds per run, 8 threads */
	long read_n[2];          /* records in the read logs */
	long seeks;              /* random seeks per run */
	int spawns;              /* process spawns per run, each program */
	long retain_n;           /* records in the retention log */
	long compact_n;          /* records in the keyed log */
	int follow_n;            /* records followed per run */
	uint64_t recovery_bytes; /* active segment left by a crash */
	long zstd_n;             /* records per compression variant */
};

static const struct sizes QUICK = {
	"quick", 3,  { 200000, 50000 }, 1000000, 1000, 2.0,          { 500000, 100000 },
	20000,   30, 1000000,           500000,  300,  256ull << 20, 200000,
};
static const struct sizes FULL = {
	"full",
	5,
	{ 1000000, 200000 },
	1000000,
	5000,
	5.0,
	{ 2000000, 500000 },
	20000,
	100,
	1000000,
	2000000,
	2000,
	(1ull << 30) - (64ull << 20),
	1000000,
};

static struct sizes S;

/* Sizes of the rows on logs of many segments (the same in quick and full
 * modes). */
static struct {
	long segread_n;      /* records read in 4 KiB vs 64 MiB segments */
	long follow_batches; /* one-record batches followed per run */
	long rss_keys;       /* distinct keys for compaction's peak RSS */
} SS = { 1000000, 300, 3000000 };
static const char *workdir = ".";
static const char *bindir = "build";
static const char *sqlite3_cli = "sqlite3";
static const char *only;
static FILE *jsonf;
static const char *redis_server = "redis-server";
static int no_redis;

/* ---- small helpers -------------------------------------------------- */

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

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

/* ---- counting syncs -------------------------------------------------- */

/* run.sh links the bench with --wrap=fdatasync --wrap=fsync, so that every
 * call of either, libelog.a's and the bench's own (not SQLite's, a shared
 * library), goes through these and is counted: one atomic increment, which
 * does not slow the timed loops.  Without BENCH_WRAP_SYNCS (built some other
 * way) the counts are unknown and the rows that show them say "-". */
#ifdef BENCH_WRAP_SYNCS
static long sync_calls;
int __real_fdatasync(int fd);
int __real_fsync(int fd);
int __wrap_fdatasync(int fd);
int __wrap_fsync(int fd);

int __wrap_fdatasync(int fd)
{
	__atomic_add_fetch(&sync_calls, 1, __ATOMIC_RELAXED);
	return __real_fdatasync(fd);
}

int __wrap_fsync(int fd)
{
	__atomic_add_fetch(&sync_calls, 1, __ATOMIC_RELAXED);
	return __real_fsync(fd);
}

static long syncs_now(void)
{
	return __atomic_load_n(&sync_calls, __ATOMIC_RELAXED);
}
#else
static long syncs_now(void)
{
	return -1;
}
#endif

/* Syncs per acknowledgement, or NAN when they were not counted. */
static double per_ack(long syncs, long acks)
{
	return syncs < 0 || acks <= 0 ? NAN : (double)syncs / (double)acks;
}

/* The program running now, killed if the suite's alarm goes off; and the
 * bench's redis-server, stopped on every way out (see redis_start()). */
static volatile pid_t child_pid, redis_pid;
static pid_t redis_owner;

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "bench: time limit reached, giving up\n";
	if (child_pid > 0)
		kill(child_pid, SIGKILL);
	if (redis_pid > 0 && getpid() == redis_owner)
		kill(redis_pid, SIGKILL);
	if (write(2, m, sizeof m - 1) < 0)
		_exit(3);
	_exit(3);
}

/* SIGINT, SIGTERM, SIGHUP (timeout(1) sends SIGTERM): stop the program
 * running and the redis-server, then die of the signal. */
static void on_fatal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, SIGKILL);
	if (redis_pid > 0 && getpid() == redis_owner)
		kill(redis_pid, SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
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
	static const char *types[] = { "page_view", "click",  "purchase",    "login",
		                       "logout",    "search", "add_to_cart", "error" };
	static const char *words[] = { "checkout", "session", "renewed",  "cart",    "user",
		                       "opened",   "the",     "settings", "page",    "after",
		                       "timeout",  "retry",   "mobile",   "desktop", "north",
		                       "gateway",  "sensor",  "ok" };
	uint64_t r = mix(i);
	char tmp[4096];
	int n = snprintf(tmp, sizeof tmp,
	                 "{\"type\":\"%s\",\"user\":\"u-%06u\",\"seq\":%llu,\"ms\":%u,"
	                 "\"ok\":%s,\"note\":\"",
	                 types[r % 8], (unsigned)((r >> 8) % 1000000), (unsigned long long)i,
	                 (unsigned)((r >> 32) % 5000), (r >> 40) & 1 ? "true" : "false");
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

static elog *e_open(const char *dir, uint64_t seg_bytes, int compression, int no_dict)
{
	struct elog_options o = { 0 };
	o.create = 1;
	o.segment_bytes = seg_bytes;
	o.compression = compression;
	o.no_dictionary = no_dict;
	o.batch_bytes = 8u << 20; /* batches end at the explicit flushes */
	elog *w;
	int rc = elog_open(&w, dir, &o);
	if (rc)
		die("elog_open %s: %s: %s", dir, elog_strerror(rc), elog_errmsg(w));
	return w;
}

/* Set the cleanup of the log dir to compact: compaction refuses the
 * default, delete. */
static void e_compactable(const char *dir)
{
	struct elog_settings o = { .cleanup = ELOG_CLEANUP_COMPACT };
	char msg[ELOG_MSG_MAX];
	int rc = elog_settings_update(dir, &o, ELOG_SET_CLEANUP, 0, msg);
	if (rc)
		die("cleanup compact %s: %s: %s", dir, elog_strerror(rc), msg);
}

static void e_append(elog *w, const void *key, size_t klen, const void *val, size_t vlen,
                     uint64_t *off)
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
static int sq_insert(sqlite3_stmt *st, long off, const void *key, size_t klen, const void *val,
                     size_t vlen)
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
static void build_elog(const char *dir, const struct corpus *c, long n, uint64_t seg_bytes,
                       long nkeys)
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

/* ---- Redis Streams ---------------------------------------------------- */

/* The peer the issue names beside SQLite: a private redis-server, its data
 * in DIR/redis (on the disk elog writes to), reached on a unix socket there,
 * with appendonly yes, appendfsync always (a write is answered after the
 * append-only file is fdatasync'ed: Redis's durable mode, one sync per turn
 * of its event loop for every client served in that turn), no RDB
 * snapshots (save "") and no automatic rewrite of the append-only file.
 * A record is a stream entry of two fields, k (the 16 B key) and v (the
 * value): XADD log * k KEY v VALUE.  Started by the first workload that
 * needs it and again, empty, by redis_fresh() at the start of each; stopped
 * at the end of the suite and on every other way out: an atexit handler,
 * the signal handlers (on_alarm, on_fatal), and PR_SET_PDEATHSIG should
 * the bench be killed; run.sh stops it once more from its pid file. */
static const char *redis_why; /* why the Redis figures are missing */
static char *redis_dir;

#define REDIS_KEY "log"

static void redis_stop(void)
{
	if (redis_pid <= 0 || getpid() != redis_owner)
		return;
	pid_t pid = redis_pid;
	kill(pid, SIGTERM);
	for (int i = 0; i < 500; i++) { /* 5 s to write and exit */
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			redis_pid = 0;
			return;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	redis_pid = 0;
}

#ifdef HAVE_HIREDIS
typedef redisContext rd;
static char *redis_sock;

static int redis_start(void)
{
	static int registered;
	char pidf[4096], logf[4096], errf[4096];
	if (!redis_dir) {
		redis_dir = path("redis");
		redis_sock = path("redis/redis.sock");
	}
	rm_rf(redis_dir);
	if (mkdir(redis_dir, 0700) < 0)
		die("%s: %s", redis_dir, strerror(errno));
	snprintf(pidf, sizeof pidf, "%s/redis.pid", redis_dir);
	snprintf(logf, sizeof logf, "%s/redis.log", redis_dir);
	snprintf(errf, sizeof errf, "%s/stderr", redis_dir);
	char *argv[] = { (char *)redis_server,
		         "--port",
		         "0",
		         "--unixsocket",
		         redis_sock,
		         "--unixsocketperm",
		         "700",
		         "--dir",
		         redis_dir,
		         "--appendonly",
		         "yes",
		         "--appendfsync",
		         "always",
		         "--save",
		         "",
		         "--auto-aof-rewrite-percentage",
		         "0",
		         "--daemonize",
		         "no",
		         "--pidfile",
		         pidf,
		         "--logfile",
		         logf,
		         "--loglevel",
		         "warning",
		         "--proc-title-template",
		         "{title} {unixsocket}",
		         NULL };
	if (!registered) {
		atexit(redis_stop);
		registered = 1;
	}
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* The server dies with the bench, however the bench ends. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		int in = open("/dev/null", O_RDONLY),
		    out = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		_exit(127);
	}
	redis_owner = getpid();
	redis_pid = pid;
	for (int i = 0; i < 500; i++) { /* 10 s to answer */
		redisContext *c = redisConnectUnix(redis_sock);
		if (c && !c->err) {
			redisReply *r = redisCommand(c, "PING");
			int ok = r && r->type == REDIS_REPLY_STATUS;
			if (r)
				freeReplyObject(r);
			redisFree(c);
			if (ok)
				return 1;
		} else if (c) {
			redisFree(c);
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			redis_pid = 0;
			redis_why = "n/a (redis-server exited at start: its stderr and log are"
			            " in DIR/redis)";
			return 0;
		}
		usleep(20000);
	}
	redis_stop();
	redis_why = "n/a (redis-server did not answer within 10 s)";
	return 0;
}

/* 1 when Redis can be measured (starting the server if need be); else 0,
 * with the reason in redis_why for the rows. */
static int redis_ok(void)
{
	if (redis_pid > 0)
		return 1;
	if (redis_why)
		return 0;
	if (no_redis)
		redis_why = "n/a (--no-redis)";
	else if (!runnable(redis_server))
		redis_why = "n/a (no redis-server: apt-get install redis-server)";
	return redis_why ? 0 : redis_start();
}

static rd *rd_connect(void)
{
	redisContext *c = redisConnectUnix(redis_sock);
	if (!c || c->err)
		die("redis: %s: %s", redis_sock, c ? c->errstr : "out of memory");
	c->reader->maxbuf = 0; /* keep the read buffer: XRANGE pages are large */
	return c;
}

static void rd_free(rd *x)
{
	redisFree(x);
}

/* A reply, which must not be an error. */
static redisReply *rd_reply(rd *x, const char *what)
{
	redisReply *r;
	if (redisGetReply(x, (void **)&r) != REDIS_OK || !r)
		die("redis: %s: %s", what, x->errstr);
	if (r->type == REDIS_REPLY_ERROR)
		die("redis: %s: %s", what, r->str);
	return r;
}

/* A command without arguments of binary data, waited for. */
static void rd_exec(rd *x, const char *cmd)
{
	if (redisAppendCommand(x, cmd) != REDIS_OK)
		die("redis: %s: %s", cmd, x->errstr);
	freeReplyObject(rd_reply(x, cmd));
}

static void rd_xadd_send(rd *x, const struct corpus *c, long i)
{
	const char *argv[7] = { "XADD", REDIS_KEY, "*", "k", ckey(c, i), "v", cval(c, i) };
	size_t len[7] = { 4, sizeof REDIS_KEY - 1, 1, 1, KEY_LEN, 1, c->size };
	if (redisAppendCommandArgv(x, 7, argv, len) != REDIS_OK)
		die("redis: XADD: %s", x->errstr);
}

/* The reply to an XADD: the entry's id, copied to id when it is not NULL. */
static void rd_xadd_reply(rd *x, char *id, size_t cap)
{
	redisReply *r = rd_reply(x, "XADD");
	if (r->type != REDIS_REPLY_STRING)
		die("redis: XADD: a reply of type %d", r->type);
	if (id)
		snprintf(id, cap, "%s", r->str);
	freeReplyObject(r);
}

/* One durable append: XADD, and its reply. */
static void rd_xadd(rd *x, const struct corpus *c, long i)
{
	rd_xadd_send(x, c, i);
	rd_xadd_reply(x, NULL, 0);
}

/* Records from .. from+n-1 of c, pipelined: per XADDs sent, then their
 * replies read; the id of record mid (if in range) to midid. */
static void rd_xadd_pipelined(rd *x, const struct corpus *c, long from, long n, long per, long mid,
                              char *midid, size_t cap)
{
	for (long b = from; b < from + n; b += per) {
		long e = b + per < from + n ? b + per : from + n;
		for (long i = b; i < e; i++)
			rd_xadd_send(x, c, i);
		for (long i = b; i < e; i++)
			rd_xadd_reply(x, i == mid ? midid : NULL, cap);
	}
}

static long rd_len(rd *x)
{
	redisReply *r = redisCommand(x, "XLEN " REDIS_KEY);
	if (!r || r->type != REDIS_REPLY_INTEGER)
		die("redis: XLEN failed");
	long n = (long)r->integer;
	freeReplyObject(r);
	return n;
}

/* An empty stream. */
static void rd_clear(rd *x)
{
	rd_exec(x, "DEL " REDIS_KEY);
}

/* A stream of records 0 .. n-1 of c, not timed: added with appendfsync
 * no, then made durable (appendfsync always again, and one write whose sync
 * covers the whole file) so that no timed command pays for them; the id of
 * record mid to midid. */
static void rd_load(rd *x, const struct corpus *c, long n, long mid, char *midid, size_t cap)
{
	rd_clear(x);
	rd_exec(x, "CONFIG SET appendfsync no");
	rd_xadd_pipelined(x, c, 0, n, 1000, mid, midid, cap);
	rd_exec(x, "CONFIG SET appendfsync always");
	rd_exec(x, "SET bench-sync 1");
	if (rd_len(x) != n)
		die("redis: the stream holds %ld entries, not %ld", rd_len(x), n);
}

/* Every entry of the stream, read with XRANGE in pages of page entries,
 * each entry's value touched; the number read. */
static long rd_read_paged(rd *x, long page, uint64_t *sum)
{
	char start[64] = "-", count[32];
	long n = 0;
	snprintf(count, sizeof count, "%ld", page);
	for (;;) {
		const char *argv[6] = { "XRANGE", REDIS_KEY, start, "+", "COUNT", count };
		redisReply *r = redisCommandArgv(x, 6, argv, NULL);
		if (!r || r->type != REDIS_REPLY_ARRAY)
			die("redis: XRANGE failed: %s",
			    r && r->type == REDIS_REPLY_ERROR ? r->str : x->errstr);
		size_t got = r->elements;
		for (size_t i = 0; i < got; i++) {
			redisReply *e = r->element[i];
			if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
			    e->element[1]->elements != 4)
				die("redis: XRANGE: an entry of an unexpected shape");
			redisReply *v = e->element[1]->element[3];
			*sum += v->len + (unsigned char)v->str[0];
		}
		n += (long)got;
		if (got > 0)
			snprintf(start, sizeof start, "(%s", r->element[got - 1]->element[0]->str);
		freeReplyObject(r);
		if (got < (size_t)page)
			return n;
	}
}

/* XTRIM MINID id: the entries before id removed (and the command synced). */
static long rd_trim_minid(rd *x, const char *id)
{
	const char *argv[4] = { "XTRIM", REDIS_KEY, "MINID", id };
	redisReply *r = redisCommandArgv(x, 4, argv, NULL);
	if (!r || r->type != REDIS_REPLY_INTEGER)
		die("redis: XTRIM failed: %s",
		    r && r->type == REDIS_REPLY_ERROR ? r->str : x->errstr);
	long n = (long)r->integer;
	freeReplyObject(r);
	return n;
}
#else /* without hiredis: redis_ok() says so, and nothing below is called */
typedef struct rd rd;

static int redis_ok(void)
{
	redis_why = "n/a (bench built without hiredis: apt-get install libhiredis-dev)";
	return 0;
}

static rd *rd_connect(void)
{
	die("built without hiredis");
}
static void rd_free(rd *x)
{
	(void)x;
}
static void rd_xadd(rd *x, const struct corpus *c, long i)
{
	(void)x;
	(void)c;
	(void)i;
}
static void rd_xadd_pipelined(rd *x, const struct corpus *c, long from, long n, long per, long mid,
                              char *midid, size_t cap)
{
	(void)x;
	(void)c;
	(void)from;
	(void)n;
	(void)per;
	(void)mid;
	(void)midid;
	(void)cap;
}
static long rd_len(rd *x)
{
	(void)x;
	return -1;
}
static void rd_clear(rd *x)
{
	(void)x;
}
static void rd_load(rd *x, const struct corpus *c, long n, long mid, char *midid, size_t cap)
{
	(void)x;
	(void)c;
	(void)n;
	(void)mid;
	(void)midid;
	(void)cap;
}
static long rd_read_paged(rd *x, long page, uint64_t *sum)
{
	(void)x;
	(void)page;
	(void)sum;
	return -1;
}
static long rd_trim_minid(rd *x, const char *id)
{
	(void)x;
	(void)id;
	return -1;
}
#endif

/* Redis as each workload that uses it starts: an empty server, its
 * append-only file new, so that one workload's data never weighs on the
 * next.  1 when Redis can be measured. */
static int redis_fresh(void)
{
#ifdef HAVE_HIREDIS
	if (redis_pid > 0) {
		redis_stop();
		return redis_start();
	}
#endif
	return redis_ok();
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
	printf("%-44s %-6s %9s  %-20s %9s %8s  %-16s %s\n", "workload", "unit", "elog", "reference",
	       "ref", "ratio", "target", "");
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
	printf("%-44s %-6s %9s  %-20s %9s %8s  %-16s %s\n", workload, unit, e, refname, r, q, t,
	       verdict);
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

/* A row against Redis, or the reason there is no Redis figure. */
static void row_redis(int have, const char *id, const char *workload, const char *unit, double elog,
                      const char *refname, double ref, enum goal g, double bound)
{
	if (have)
		row(id, workload, unit, elog, refname, ref, g, bound);
	else
		row_na(id, workload, redis_why);
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
 * transaction per 1000 rows; Redis: 1000 XADDs pipelined, then their
 * replies (each sent after the append-only file is synced). */
static void w_append(int big)
{
	const struct corpus *c = corpus(big);
	long n = S.batch_n[big];
	double er[16], sr[16], rr[16];
	char *dir = path("append.elog"), *db = path("append.db");
	int have_redis = redis_fresh();
	/* Redis syncs once per turn of its event loop, which reads 16 KiB of
	 * a client's pipeline per turn: far slower, so a quarter of the
	 * records, at most 50k / 12.5k, give its rate. */
	long rn = n / 4 < (big ? 12500 : 50000) ? n / 4 : (big ? 12500 : 50000);
	if (have_redis)
		progress("batched append %zu B: %ld records x %d runs, elog and SQLite;"
		         " %ld into Redis",
		         c->size, n, S.runs, rn);
	else
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
			sq_check(sq_insert(st, i, ckey(c, i), KEY_LEN, cval(c, i), c->size), d,
			         "insert");
			if ((i + 1) % 1000 == 0)
				sq_exec(d, "COMMIT; BEGIN");
		}
		sq_exec(d, "COMMIT");
		sr[run] = (double)n / (now() - t0);
		sqlite3_finalize(st);
		sqlite3_close(d);

		if (have_redis) {
			rd *x = rd_connect();
			rd_clear(x);
			t0 = now();
			rd_xadd_pipelined(x, c, 0, rn, 1000, -1, NULL, 0);
			rr[run] = (double)rn / (now() - t0);
			if (rd_len(x) != rn)
				die("redis: the stream holds %ld entries, not %ld", rd_len(x), rn);
			rd_clear(x);
			rd_free(x);
		}
	}
	rm_rf(dir);
	sq_unlink(db);
	char wl[64];
	snprintf(wl, sizeof wl, "batched append %zu B, fsync/1000", c->size);
	double rate = median(er, S.runs);
	row(big ? "append_1024" : "append_100", wl, "rec/s", rate, "SQLite txn/1000",
	    median(sr, S.runs), G_RATIO_GE, 5);
	row_redis(have_redis, big ? "append_1024_redis" : "append_100_redis",
	          "  against Redis, XADD pipelined x1000", "rec/s", rate, "Redis always",
	          have_redis ? median(rr, S.runs) : NAN, G_NONE, 0);
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
		if (run == 0) { /* every line became a record */
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
			                   (size_t)(line + len - v)),
			         d, "insert");
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
 * against write + fdatasync of the same bytes on a plain file, SQLite and
 * one Redis client (XADD, then its reply). */
static double ack1_rate[2] = { NAN, NAN };

static void w_ack1(int big)
{
	const struct corpus *c = corpus(big);
	long n = S.ack1_n;
	double *lat = xmalloc((size_t)n * sizeof *lat);
	double er[16], e50[16], e99[16], rr[16], r50[16], r99[16], sr[16], xr[16], x99[16];
	char *dir = path("ack1.elog"), *raw = path("ack1.raw"), *db = path("ack1.db");
	int have_redis = redis_fresh();
	progress("durable ack 1 thread %zu B: %ld acks x %d runs%s", c->size, n, S.runs,
	         have_redis ? ", with Redis" : "");
	double *rlat = xmalloc((size_t)n * sizeof *rlat);
	double *xlat = xmalloc((size_t)n * sizeof *xlat);
	for (int run = 0; run < S.runs; run++) {
		/* They take turns in blocks of 50, so that they meet the
		 * same noise from other users of the disk. */
		rm_rf(dir);
		sq_unlink(db);
		elog *w = e_open(dir, 0, ELOG_COMPRESS_NONE, 0);
		int fd = open(raw, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
		if (fd < 0)
			die("%s: %s", raw, strerror(errno));
		sqlite3 *d = sq_open(db);
		sqlite3_stmt *st = sq_insert_stmt(d);
		rd *x = NULL;
		if (have_redis) {
			x = rd_connect();
			rd_clear(x);
		}
		int turns = have_redis ? 3 : 2;
		double et = 0, rt = 0, sqt = 0, xt = 0;
		long m = 0;
		for (long b = 0; b < n; b += 50) {
			long e = b + 50 < n ? b + 50 : n;
			/* elog, the raw loop (and Redis) change places every
			 * block, so that none always follows SQLite's commits. */
			for (int turn = 0; turn < turns; turn++) {
				double t0 = now();
				int who = (int)((turn + b / 50) % turns);
				if (who == 2) {
					for (long i = b; i < e; i++) {
						double a = now();
						rd_xadd(x, c, i);
						xlat[i] = now() - a;
					}
					xt += now() - t0;
				} else if (who == 0) {
					for (long i = b; i < e; i++) {
						double a = now();
						uint64_t off;
						e_append(w, ckey(c, i), KEY_LEN, cval(c, i),
						         c->size, &off);
						int rc = elog_sync(w);
						if (rc)
							die("elog_sync: %s", elog_strerror(rc));
						lat[i] = now() - a;
					}
					et += now() - t0;
				} else {
					for (long i = b; i < e; i++) {
						double a = now();
						if (write(fd, cval(c, i), c->size) !=
						            (ssize_t)c->size ||
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
		if (x) {
			if (rd_len(x) != n)
				die("redis: the stream holds %ld entries, not %ld", rd_len(x), n);
			rd_clear(x);
			rd_free(x);
			xr[run] = (double)n / xt;
			sort_doubles(xlat, n);
			x99[run] = quantile(xlat, n, 0.99) * 1e6;
		}
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
	row(id, wl, "acks/s", ack1_rate[big], "write+fdatasync", median(rr, S.runs), G_RATIO_GE,
	    0.9);
	snprintf(id, sizeof id, "ack1_%s_p50", sz);
	row(id, "  latency p50", "us", median(e50, S.runs), "write+fdatasync", median(r50, S.runs),
	    G_NONE, 0);
	snprintf(id, sizeof id, "ack1_%s_p99", sz);
	row(id, "  latency p99", "us", median(e99, S.runs), "write+fdatasync", median(r99, S.runs),
	    G_NONE, 0);
	snprintf(id, sizeof id, "ack1_%s_sqlite", sz);
	row(id, "  against SQLite, 1 thread", "acks/s", ack1_rate[big], "SQLite txn/row",
	    median(sr, S.runs), G_NONE, 0);
	snprintf(id, sizeof id, "ack1_%s_redis", sz);
	row_redis(have_redis, id, "  against Redis, 1 client", "acks/s", ack1_rate[big],
	          "Redis always", have_redis ? median(xr, S.runs) : NAN, G_NONE, 0);
	snprintf(id, sizeof id, "ack1_%s_redis_p99", sz);
	row_redis(have_redis, id, "  latency p99 against Redis, 1 client", "us",
	          median(e99, S.runs), "Redis always", have_redis ? median(x99, S.runs) : NAN,
	          G_NONE, 0);
	free(xlat);
	free(lat);
	free(dir);
	free(raw);
	free(db);
}

/* Durable acknowledgement from 8 threads, served by group commit. */
#define THREADS 8
#define LATCAP 200000

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

#ifdef HAVE_HIREDIS
static void *ack_redis(void *arg)
{
	struct acker *a = arg;
	rd *x = rd_connect();
	long i = a->idx * 1000003L;
	while (now() < a->deadline) {
		rd_xadd(x, a->c, i++);
		a->acks++;
	}
	rd_free(x);
	return NULL;
}
#else
static void *ack_redis(void *arg)
{
	return arg;
}
#endif

/* One writer's raw rate: write + fdatasync of each record on a plain file
 * opened O_APPEND, one thread, until the deadline; syncs/ack in *spa. */
static double raw1_rate(const char *file, const struct corpus *c, double secs, double *spa)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0)
		die("%s: %s", file, strerror(errno));
	long acks = 0, s0 = syncs_now();
	double t0 = now(), deadline = t0 + secs;
	while (now() < deadline) {
		if (write(fd, cval(c, acks), c->size) != (ssize_t)c->size || fdatasync(fd) < 0)
			die("%s: %s", file, strerror(errno));
		acks++;
	}
	double rate = (double)acks / (now() - t0);
	*spa = per_ack(syncs_now() < 0 ? -1 : syncs_now() - s0, acks);
	close(fd);
	unlink(file);
	return rate;
}

/* Durable acknowledgement from 8 threads of one process: elog's group
 * commit against its ideal (8 x one writer's raw rate, measured here), 8
 * SQLite connections and 8 Redis connections; the phases take turns, each
 * run starting one further on. */
static void w_ack8(int big)
{
	const struct corpus *c = corpus(big);
	double er[16], sr[16], e99[16], r1[16], xr[16], es[16], rs[16];
	char *dir = path("ack8.elog"), *db = path("ack8.db"), *raw = path("ack8.raw");
	struct acker a[THREADS];
	int have_redis = redis_fresh();
	int phases = have_redis ? 4 : 3;
	progress("durable ack %d threads %zu B: %.0f s x %d runs, elog, SQLite, raw 1 writer%s",
	         THREADS, c->size, S.ack8_secs, S.runs, have_redis ? ", Redis" : "");
	double *all = xmalloc((size_t)THREADS * LATCAP * sizeof *all);
	for (int run = 0; run < S.runs; run++) {
		for (int turn = 0; turn < phases; turn++) {
			int which = (turn + run) % phases; /* elog, SQLite, raw, Redis */
			double t0;
			long acks = 0;
			if (which == 0) {
				rm_rf(dir);
				elog *w = e_open(dir, 0, ELOG_COMPRESS_NONE, 0);
				long s0 = syncs_now();
				t0 = now();
				for (int k = 0; k < THREADS; k++) {
					a[k] = (struct acker){ .idx = k,
						               .w = w,
						               .c = c,
						               .deadline = t0 + S.ack8_secs,
						               .lat = all + (size_t)k * LATCAP };
					pthread_create(&a[k].t, NULL, ack_elog, &a[k]);
				}
				long nl = 0;
				for (int k = 0; k < THREADS; k++) {
					pthread_join(a[k].t, NULL);
					acks += a[k].acks;
				}
				er[run] = (double)acks / (now() - t0);
				es[run] = per_ack(syncs_now() < 0 ? -1 : syncs_now() - s0, acks);
				e_close(w);
				/* Gather the latencies in one array. */
				for (int k = 0; k < THREADS; k++) {
					memmove(all + nl, a[k].lat,
					        (size_t)a[k].nlat * sizeof *all);
					nl += a[k].nlat;
				}
				sort_doubles(all, nl);
				e99[run] = quantile(all, nl, 0.99) * 1e6;
			} else if (which == 1) {
				sq_unlink(db);
				sqlite3_close(sq_open(db)); /* create the table once */
				t0 = now();
				for (int k = 0; k < THREADS; k++) {
					a[k] = (struct acker){ .idx = k,
						               .db = db,
						               .c = c,
						               .deadline = t0 + S.ack8_secs };
					pthread_create(&a[k].t, NULL, ack_sqlite, &a[k]);
				}
				for (int k = 0; k < THREADS; k++) {
					pthread_join(a[k].t, NULL);
					acks += a[k].acks;
				}
				sr[run] = (double)acks / (now() - t0);
				sq_unlink(db);
			} else if (which == 2) {
				r1[run] = raw1_rate(raw, c, S.ack8_secs, &rs[run]);
			} else {
				rd *x = rd_connect();
				rd_clear(x);
				t0 = now();
				for (int k = 0; k < THREADS; k++) {
					a[k] = (struct acker){ .idx = k,
						               .c = c,
						               .deadline = t0 + S.ack8_secs };
					pthread_create(&a[k].t, NULL, ack_redis, &a[k]);
				}
				for (int k = 0; k < THREADS; k++) {
					pthread_join(a[k].t, NULL);
					acks += a[k].acks;
				}
				xr[run] = (double)acks / (now() - t0);
				if (rd_len(x) != acks)
					die("redis: %ld acknowledged, the stream holds %ld", acks,
					    rd_len(x));
				rd_clear(x);
				rd_free(x);
			}
		}
		progress("  run %d: elog %.0f acks/s (%.2f syncs/ack), ideal 8 x %.0f = %.0f"
		         " (%.2fx), SQLite %.0f",
		         run + 1, er[run], es[run], r1[run], THREADS * r1[run],
		         er[run] / (THREADS * r1[run]), sr[run]);
		if (have_redis)
			progress("  run %d: Redis 8 connections %.0f acks/s (%.2fx)", run + 1,
			         xr[run], er[run] / xr[run]);
	}
	rm_rf(dir);
	double rate = median(er, S.runs);
	const char *sz = big ? "1024" : "100";
	char wl[64], id[32];
	snprintf(wl, sizeof wl, "durable ack, %d threads, %s B", THREADS, sz);
	snprintf(id, sizeof id, "ack8_%s_vs_1", sz);
	row(id, wl, "acks/s", rate, "elog 1 thread", ack1_rate[big], G_RATIO_GE, 4);
	snprintf(id, sizeof id, "ack8_%s_ideal", sz);
	row(id, "  against ideal: 8 x one raw writer", "acks/s", rate, "8 x write+fdatasync",
	    THREADS * median(r1, S.runs), G_RATIO_GE, 0.7);
	snprintf(id, sizeof id, "ack8_%s", sz);
	row(id, "  against SQLite, 8 connections", "acks/s", rate, "SQLite 8 conns",
	    median(sr, S.runs), G_RATIO_GE, 10);
	snprintf(id, sizeof id, "ack8_%s_redis", sz);
	row_redis(have_redis, id, "  against Redis, 8 connections", "acks/s", rate,
	          "Redis always 8 conns", have_redis ? median(xr, S.runs) : NAN, G_NONE, 0);
	snprintf(id, sizeof id, "ack8_%s_p99", sz);
	row(id, "  latency p99", "us", median(e99, S.runs), "", NAN, G_NONE, 0);
	snprintf(id, sizeof id, "ack8_%s_syncs", sz);
	row(id, "  syncs per ack", "syncs", median(es, S.runs), "raw 1 writer", median(rs, S.runs),
	    G_NONE, 0);
	free(all);
	free(dir);
	free(db);
	free(raw);
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
		sum += (uint64_t)sqlite3_column_int64(st, 0) +
		       (uint64_t)sqlite3_column_bytes(st, 3) +
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

/* The page cache's limit for reading the log at dir: its segment files
 * read whole with read(2) into a buffer of 128 KiB (what cat(1) uses), warm,
 * in bytes/s. */
static double pagecache_rate(const char *dir)
{
	DIR *dp = opendir(dir);
	if (!dp)
		die("%s: %s", dir, strerror(errno));
	size_t cap = 128u << 10;
	char *buf = xmalloc(cap), name[4096];
	uint64_t bytes = 0;
	struct dirent *e;
	double t0 = now();
	while ((e = readdir(dp)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l < 4 || strcmp(e->d_name + l - 4, ".log") != 0)
			continue;
		snprintf(name, sizeof name, "%s/%s", dir, e->d_name);
		int fd = open(name, O_RDONLY);
		if (fd < 0)
			die("%s: %s", name, strerror(errno));
		ssize_t got;
		while ((got = read(fd, buf, cap)) > 0)
			bytes += (uint64_t)got;
		if (got < 0)
			die("%s: %s", name, strerror(errno));
		close(fd);
	}
	double t = now() - t0;
	closedir(dp);
	free(buf);
	return (double)bytes / t;
}

/* Sequential read of the read log: the library (every CRC checked), against
 * an ordered SELECT, the page cache's limit and Redis's XRANGE in pages of
 * 1000 entries (over a stream of the same records). */
static void w_read(int big)
{
	const struct corpus *c = corpus(big);
	long n = S.read_n[big];
	double er[16], sr[16], pr[16], xr[16];
	/* Bytes of segment files per record: the page cache's limit in
	 * records/s is its rate in bytes/s over this. */
	double bpr = (double)dir_bytes(read_log[big], ".log") / (double)n;
	int have_redis = redis_fresh();
	rd *x = NULL;
	progress("sequential read %zu B: %ld records x %d runs%s", c->size, n, S.runs,
	         have_redis ? ", loading them into Redis first" : "");
	if (have_redis) {
		x = rd_connect();
		rd_load(x, c, n, -1, NULL, 0);
	}
	read_elog(read_log[big], n); /* warm the page cache for all */
	read_sqlite(read_db[big], n);
	pagecache_rate(read_log[big]);
	for (int run = 0; run < S.runs; run++) {
		er[run] = read_elog(read_log[big], n);
		sr[run] = read_sqlite(read_db[big], n);
		pr[run] = pagecache_rate(read_log[big]) / bpr;
		if (x) {
			uint64_t sum = 0;
			double t0 = now();
			long got = rd_read_paged(x, 1000, &sum);
			xr[run] = (double)got / (now() - t0);
			if (got != n || sum == 0)
				die("redis: XRANGE read %ld entries, not %ld", got, n);
		}
	}
	if (x) {
		rd_clear(x);
		rd_free(x);
	}
	sqlite_select_rate[big] = median(sr, S.runs);
	const char *sz = big ? "1024" : "100";
	char wl[64], id[32];
	double rate = median(er, S.runs);
	snprintf(wl, sizeof wl, "sequential read %s B, library, CRC", sz);
	row(big ? "read_1024" : "read_100", wl, "rec/s", rate, "SQLite ORDER BY",
	    sqlite_select_rate[big], G_RATIO_GE, 4);
	snprintf(wl, sizeof wl, "  against the page cache (%.0f B/rec)", bpr);
	snprintf(id, sizeof id, "read_%s_pagecache", sz);
	row(id, wl, "rec/s", rate, "read(2) 128 KiB", median(pr, S.runs), G_RATIO_GE, 0.5);
	snprintf(id, sizeof id, "read_%s_redis", sz);
	row_redis(have_redis, id, "  against Redis, XRANGE COUNT 1000", "rec/s", rate,
	          "Redis XRANGE", have_redis ? median(xr, S.runs) : NAN, G_NONE, 0);
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
	row(id, wl, "rec/s", median(jr, S.runs), "SQLite ORDER BY", sqlite_select_rate[big],
	    G_RATIO_GE, 1);
	snprintf(wl, sizeof wl, "elog-cat -v > /dev/null, %s B", sz);
	snprintf(id, sizeof id, "cat_v_%s", sz);
	row(id, wl, "rec/s", median(vr, S.runs), "SQLite ORDER BY", sqlite_select_rate[big],
	    G_RATIO_GE, 2);
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
		for (int pass = 0; pass < 2; pass++) { /* the first one warms */
			for (long i = 0; i < q; i++) {
				uint64_t off = mix((uint64_t)i * 7 + (uint64_t)run) % (uint64_t)n;
				double t = now();
				int rc = elog_reader_seek(r, off);
				if (rc == 0)
					rc = elog_reader_next(r, &rec);
				lat[i] = now() - t;
				if (rc != 0 || rec.offset != off)
					die("seek %llu: %s", (unsigned long long)off,
					    elog_strerror(rc));
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
				int64_t off = (int64_t)(mix((uint64_t)i * 7 + (uint64_t)run) %
				                        (uint64_t)n);
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
	row(id, "  p99", "us", median(e99, S.runs), "SQLite >= ? LIMIT 1", median(s99, S.runs),
	    G_RATIO_LE, 1);
	free(lat);
}

/* A new process for one record: elog-cat -o N -c 1 against the sqlite3
 * command-line shell running the same query. */
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
			snprintf(sql, sizeof sql,
			         "SELECT offset, ts, schema, key, value FROM log"
			         " WHERE offset >= %ld ORDER BY offset LIMIT 1",
			         o);
			char *ae[] = { prog, "-o", off, "-c", "1", read_log[0], NULL };
			char *as[] = { (char *)sqlite3_cli, read_db[0], sql, NULL };
			spawn(ae, NULL, NULL, &et[i]);
			spawn(as, NULL, NULL, &st[i]);
		}
		em[run] = median(et, S.spawns) * 1e3;
		sm[run] = median(st, S.spawns) * 1e3;
	}
	row("spawn", "new process: elog-cat -o N -c 1", "ms", median(em, S.runs), "sqlite3 CLI",
	    median(sm, S.runs), G_RATIO_LE, 0.5);
	free(et);
	free(st);
}

/* Retention: drop the oldest half of a log, against DELETE + VACUUM and
 * Redis's XTRIM MINID of a stream of the same records. */
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
	double er[16], sr[16], xr[16];
	/* About 32 segments, so that half the log is about half its segments. */
	uint64_t seg = ((uint64_t)n * (KEY_LEN + c->size + 32) / 32 + 4095) & ~4095ull;
	if (seg < (64u << 10))
		seg = 64u << 10;
	int have_redis = redis_fresh();
	progress("retention: %ld x 100 B x %d runs%s", n, S.runs, have_redis ? ", with Redis" : "");
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

		if (have_redis) {
			/* The entries before the middle one's id: the oldest half. */
			char mid[64];
			rd *x = rd_connect();
			rd_load(x, c, n, n / 2, mid, sizeof mid);
			t0 = now();
			long gone = rd_trim_minid(x, mid);
			xr[run] = now() - t0;
			if (gone != n / 2 || rd_len(x) != n - n / 2)
				die("redis: XTRIM MINID removed %ld entries of %ld", gone, n);
			rd_clear(x);
			rd_free(x);
		}
	}
	rm_rf(dir);
	sq_unlink(db);
	char wl[64];
	snprintf(wl, sizeof wl, "retention: drop oldest half of %ldk x 100 B", n / 1000);
	row("retain", wl, "s", median(er, S.runs), "DELETE+VACUUM", median(sr, S.runs), G_RATIO_LE,
	    0.01);
	row_redis(have_redis, "retain_redis", "  against Redis XTRIM MINID", "s",
	          median(er, S.runs), "Redis XTRIM", have_redis ? median(xr, S.runs) : NAN, G_NONE,
	          0);
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
		e_compactable(dir);
		struct elog_compact_opts o = { 0 };
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

		if (have_prog) { /* the program, for the record */
			build_elog(dir, c, n, seg, keys);
			e_compactable(dir);
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
	row("compact", wl, "MB/s", median(er, S.runs), "SQLite DELETE+VAC", median(sr, S.runs),
	    G_ELOG_GE, 300);
	if (have_prog)
		row("compact_prog", "  elog-compact (program)", "MB/s", median(prog_t, S.runs),
		    "SQLite DELETE+VAC", median(sr, S.runs), G_NONE, 0);
	row("compact_mem", "  compaction memory per distinct key", "B/key", median(bpk, S.runs), "",
	    NAN, G_ELOG_LE, 40);
	(void)input;
	free(dir);
	free(db);
}

/* Follow latency: from the writer's flush returning to a follower thread
 * receiving the record (elog_reader_wait on inotify). */
struct follower {
	const char *dir, *db;
	int n;
	double *recv; /* receipt time per offset */
	double *sent; /* CLOCK_MONOTONIC read from the value */
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
	struct follower f = { dir,
		              db,
		              n,
		              xmalloc((size_t)n * sizeof(double)),
		              xmalloc((size_t)n * sizeof(double)),
		              0,
		              0 };
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
			sq_check(sq_insert(st, i, "follow-key-00001", KEY_LEN, val, (size_t)len), d,
			         "insert");
		} else {
			e_append(w, "follow-key-00001", KEY_LEN, val, (size_t)len, NULL);
			e_flush(w);
		}
		ret[i] = now();
		sleep_ms(2); /* let the follower go back to waiting */
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
		lat[i] = l > 0 ? l : 0; /* received before the flush returned */
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
	progress("follow: %d records x %d runs, elog and SQLite polling every 1 ms", S.follow_n,
	         S.runs);
	for (int run = 0; run < S.runs; run++) {
		follow_run(0, &e50[run], &e99[run], &ea[run]);
		follow_run(1, &s50[run], &s99[run], &sa[run]);
	}
	row("follow_p50", "follow: flush returned -> follower, p50", "us", median(e50, S.runs),
	    "SQLite poll 1 ms", median(s50, S.runs), G_NONE, 0);
	row("follow_p99", "  p99", "us", median(e99, S.runs), "SQLite poll 1 ms",
	    median(s99, S.runs), G_ELOG_LE, 1000);
	row("follow_append_p50", "  append -> follower incl. fsync, p50", "us", median(ea, S.runs),
	    "SQLite poll 1 ms", median(sa, S.runs), G_NONE, 0);
}

/* Recovery: the writer's open after a crash, which must scan the whole
 * active segment (every record's CRC checked) and cut what a dead writer
 * left half written.  Two crashes, each run:
 *
 *   (a) a writer killed with SIGKILL in the middle of a batch: a child
 *       appends recovery_bytes of 1024 B records in one segment, synced in
 *       batches of 1000, then batches of 2048 records, and the bench kills
 *       it once LOCK's state says busy=1 (elog(5)) or the segment grows:
 *       the next writer must recover;
 *   (b) LOCK's state from another boot: its boot id changed and its CRC made
 *       right again, through what elog(5) documents of the state and
 *       nothing more; a state of a layout this code does not know is filled
 *       with garbage instead (unreadable: recovery all the same).
 *
 * Each timed elog_open counts the bytes it read (rchar of /proc/self/io):
 * a recovery reads the whole segment, a clean open almost nothing, so the
 * rows recovery_scan and recovery_boot_scan fail when no scan happened.
 * SQLite: the same records left in a WAL by a writer that never
 * checkpointed, with -shm removed, so that the first query replays it. */
static char *recovery_log;

/* Bytes this process has read with read(2), pread(2) and the like, from
 * the page cache or not, all its threads: rchar of /proc/self/io; -1 when
 * that is not known. */
static double bytes_read(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	double v = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "rchar: %lf", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* CRC-32C (Castagnoli, reflected), as elog(5) uses it. */
static uint32_t crc32c_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint32_t c = 0xffffffffu;
	while (n--) {
		c ^= *b++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
	}
	return ~c;
}

static int all_hex(const char *p, int n)
{
	for (int i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return 0;
	return 1;
}

/* Make LOCK's state one from another boot, through what elog(5) documents
 * of it and no more: 32 lowercase hex digits after "boot=", and after
 * "crc=" the 8 hex digits of a CRC-32C of the bytes before them.  Which
 * bytes the CRC covers is found by checking the CRC the file holds; then
 * every digit of the boot id is changed and the CRC made right again, so
 * the state is valid but not from this boot.  A file that does not look
 * like that (a state of another layout) is filled with '#' instead: a
 * state that cannot be read, which a writer must not trust either.
 * 1 for another boot, 0 for garbage. */
static int lock_other_boot(const char *lock)
{
	char buf[4096];
	int fd = open(lock, O_RDWR);
	if (fd < 0)
		die("%s: %s", lock, strerror(errno));
	ssize_t len = pread(fd, buf, sizeof buf - 1, 0);
	if (len < 0)
		die("%s: %s", lock, strerror(errno));
	buf[len] = '\0';
	char *b = strstr(buf, "boot="), *c = NULL;
	for (char *p = buf; (p = strstr(p, "crc=")) != NULL; p++)
		c = p;
	int ok = 0;
	if (b && c && b + 5 + 32 <= c && c + 4 + 8 <= buf + len && all_hex(b + 5, 32) &&
	    all_hex(c + 4, 8)) {
		char hex[9];
		memcpy(hex, c + 4, 8);
		hex[8] = '\0';
		uint32_t stored = (uint32_t)strtoul(hex, NULL, 16);
		/* Through "crc=", up to it, or up to the space before it. */
		size_t covers[3] = { (size_t)(c + 4 - buf), (size_t)(c - buf),
			             (size_t)(c - 1 - buf) };
		for (int k = 0; k < 3 && !ok; k++) {
			if (crc32c_bytes(buf, covers[k]) != stored)
				continue;
			for (int i = 5; i < 5 + 32; i++)
				b[i] = "123456789abcdef0"[b[i] <= '9' ? b[i] - '0'
				                                      : b[i] - 'a' + 10];
			snprintf(hex, sizeof hex, "%08x", crc32c_bytes(buf, covers[k]));
			memcpy(c + 4, hex, 8);
			ok = 1;
		}
	}
	if (!ok) {
		if (len < 107)
			len = 107;
		memset(buf, '#', (size_t)len);
	}
	if (pwrite(fd, buf, (size_t)len, 0) != len)
		die("%s: %s", lock, strerror(errno));
	close(fd);
	return ok;
}

#define KILL_BATCH 2048 /* records of the batch the writer dies in */

/* The recovery log's writer, in a child: n records of 1024 B from record
 * from on, in batches of 1000, each synced; then it writes the durable end
 * to fd and appends batches of KILL_BATCH records, one elog_sync each, for
 * the bench to kill it in the middle of one; after 3 it gives up. */
static void recovery_writer(const char *dir, long from, long n, int fd)
{
	const struct corpus *c = corpus(1);
	struct elog_options o = { 0 };
	o.create = 1;
	o.segment_bytes = 1ull << 30;
	o.batch_bytes = 64u << 20; /* a batch is written at elog_sync only */
	elog *w;
	int rc = elog_open(&w, dir, &o);
	if (rc)
		die("elog_open %s: %s: %s", dir, elog_strerror(rc), elog_errmsg(w));
	long i = from;
	for (; i < from + n; i++) {
		e_append(w, ckey(c, i), KEY_LEN, cval(c, i), c->size, NULL);
		if ((i + 1 - from) % 1000 == 0)
			e_flush(w);
	}
	e_flush(w);
	uint64_t end = elog_durable_end(w);
	if (write(fd, &end, sizeof end) != (ssize_t)sizeof end)
		_exit(2);
	for (int k = 0; k < 3; k++) {
		for (long j = 0; j < KILL_BATCH; j++, i++)
			e_append(w, ckey(c, i), KEY_LEN, cval(c, i), c->size, NULL);
		elog_sync(w); /* the bench kills this process in here */
	}
	_exit(3);
}

/* Start the recovery writer and SIGKILL it in the middle of a batch: once
 * it has said that its earlier records are durable (their end to *acked),
 * as soon as LOCK's state says busy=1 (elog(5)) or the segment grows.
 * 1 when LOCK's state said busy after the kill. */
static int recovery_crash(const char *dir, long from, long n, uint64_t *acked)
{
	char seg[4096], lock[4096], st[1024];
	snprintf(seg, sizeof seg, "%s/00000000000000000000.log", dir);
	snprintf(lock, sizeof lock, "%s/LOCK", dir);
	int pfd[2];
	if (pipe(pfd) < 0)
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(600);
		signal(SIGALRM, SIG_DFL);
		close(pfd[0]);
		recovery_writer(dir, from, n, pfd[1]);
	}
	close(pfd[1]);
	child_pid = pid;
	if (read(pfd[0], acked, sizeof *acked) != (ssize_t)sizeof *acked)
		die("the recovery writer failed before its last batches");
	close(pfd[0]);
	struct stat sb;
	if (stat(seg, &sb) < 0)
		die("%s: %s", seg, strerror(errno));
	off_t size0 = sb.st_size;
	int lfd = open(lock, O_RDONLY);
	if (lfd < 0)
		die("%s: %s", lock, strerror(errno));
	double deadline = now() + 60;
	for (;;) {
		ssize_t k = pread(lfd, st, sizeof st - 1, 0);
		if (k > 0) {
			st[k] = '\0';
			if (strstr(st, "busy=1"))
				break;
		}
		if (stat(seg, &sb) == 0 && sb.st_size > size0)
			break;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			die("the recovery writer ended before it was killed mid-batch");
		if (now() > deadline)
			die("the recovery writer's batch did not start within 60 s");
	}
	kill(pid, SIGKILL);
	int status;
	waitpid(pid, &status, 0);
	child_pid = 0;
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		die("the recovery writer was not killed (status %d)", status);
	ssize_t k = pread(lfd, st, sizeof st - 1, 0);
	close(lfd);
	st[k > 0 ? k : 0] = '\0';
	return strstr(st, "busy=1") != NULL;
}

/* elog_open of dir, timed; the bytes it read to *readb, the durable end it
 * found to *end. */
static double timed_open(const char *dir, double *readb, uint64_t *end)
{
	elog *w;
	double r0 = bytes_read(), t0 = now();
	int rc = elog_open(&w, dir, NULL);
	double t = now() - t0;
	*readb = r0 < 0 ? NAN : bytes_read() - r0;
	if (rc)
		die("elog_open after a crash: %s: %s", elog_strerror(rc), elog_errmsg(w));
	*end = elog_durable_end(w);
	e_close(w);
	return t;
}

static void w_recovery(void)
{
	const struct corpus *c = corpus(1);
	uint64_t target = S.recovery_bytes;
	recovery_log = path("recovery.elog");
	char *db = path("recovery.db"), lock[4096];
	snprintf(lock, sizeof lock, "%s/LOCK", recovery_log);
	rm_rf(recovery_log);
	sq_unlink(db);
	progress("recovery: %.0f MiB active segment x %d runs: killed mid-batch, LOCK from"
	         " another boot, clean",
	         (double)target / MIB, S.runs);
	long rec_bytes = KEY_LEN + (long)c->size + 32;
	long n = (long)(target / (uint64_t)rec_bytes);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(600);
		sqlite3 *d = sq_open(db);
		sq_exec(d, "PRAGMA wal_autocheckpoint=0");
		sqlite3_stmt *st = sq_insert_stmt(d);
		sq_exec(d, "BEGIN");
		for (long i = 0; i < n; i++) {
			sq_check(sq_insert(st, i, ckey(c, i), KEY_LEN, cval(c, i), c->size), d,
			         "insert");
			if ((i + 1) % 1000 == 0)
				sq_exec(d, "COMMIT; BEGIN");
		}
		sq_exec(d, "COMMIT");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("recovery SQLite writer failed");

	char wal[4096], shm[4096];
	snprintf(wal, sizeof wal, "%s-wal", db);
	snprintf(shm, sizeof shm, "%s-shm", db);
	uint64_t walb = file_bytes(wal);
	double er[16], eb[16], ec[16], ra[16], rb[16], rc[16], sr[16], ta[16];
	double seg_mib = 0;
	int other_boot = 1;
	uint64_t next = 0;
	for (int run = 0; run < S.runs; run++) {
		/* (a): the first run's writer makes the log, later ones add
		 * to it; each dies in a batch. */
		uint64_t acked, end;
		int busy = recovery_crash(recovery_log, (long)next, run ? 0 : n, &acked);
		double seg = (double)dir_bytes(recovery_log, ".log");
		double t = timed_open(recovery_log, &ra[run], &end);
		if (end < acked || end > acked + 3 * KILL_BATCH)
			die("recovered the durable end %llu after %llu acknowledged records",
			    (unsigned long long)end, (unsigned long long)acked);
		er[run] = seg / t / 1e9;
		ta[run] = t * 1e3;
		ra[run] /= seg;
		next = end;
		progress("  run %d: killed mid-batch (LOCK %s), %.1f MiB: open %.1f ms, %.2f GB/s,"
		         " read %.2fx the segment, cut %.0f KiB, kept %llu records past the"
		         " acknowledged",
		         run + 1, busy ? "busy" : "NOT busy", seg / MIB, t * 1e3, er[run], ra[run],
		         (seg - (double)dir_bytes(recovery_log, ".log")) / 1024,
		         (unsigned long long)(end - acked));

		/* (b): a state from another boot (or unreadable). */
		other_boot &= lock_other_boot(lock);
		seg = (double)dir_bytes(recovery_log, ".log");
		t = timed_open(recovery_log, &rb[run], &end);
		if (end != next)
			die("recovered %llu records after another boot, not %llu",
			    (unsigned long long)end, (unsigned long long)next);
		eb[run] = seg / t / 1e9;
		rb[run] /= seg;
		seg_mib = seg / MIB;

		/* For contrast: a clean open, which scans nothing. */
		t = timed_open(recovery_log, &rc[run], &end);
		ec[run] = t * 1e3;
		progress("  run %d: LOCK %s: open %.2f GB/s, read %.2fx the segment;"
		         " clean open %.2f ms, read %.0f B",
		         run + 1, other_boot ? "from another boot" : "unreadable", eb[run], rb[run],
		         ec[run], rc[run]);

		unlink(shm);
		sqlite3 *d;
		double t0 = now();
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
	double sq = median(sr, S.runs);
	char wl[80];
	snprintf(wl, sizeof wl, "recovery: kill -9 mid-batch, %.0f MiB segment", seg_mib);
	row("recovery", wl, "GB/s", median(er, S.runs), "SQLite WAL recovery", sq, G_ELOG_GE, 1);
	row("recovery_scan", "  that open read the segment (rchar)", "x seg", median(ra, S.runs),
	    "", NAN, G_ELOG_GE, 0.99);
	snprintf(wl, sizeof wl, "recovery: LOCK %s",
	         other_boot ? "from another boot" : "unreadable (garbage)");
	row("recovery_boot", wl, "GB/s", median(eb, S.runs), "SQLite WAL recovery", sq, G_ELOG_GE,
	    1);
	row("recovery_boot_scan", "  that open read the segment (rchar)", "x seg",
	    median(rb, S.runs), "", NAN, G_ELOG_GE, 0.99);
	row("recovery_clean", "  clean open, for contrast", "ms", median(ec, S.runs),
	    "kill -9 recovery", median(ta, S.runs), G_NONE, 0);
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
	row("rss_cat_json", "  elog-cat JSON peak RSS, same log", "MiB", median(bigj, S.runs), "",
	    NAN, G_ELOG_LE, 8);
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
			elog *w = e_open(dir, 0, v ? ELOG_COMPRESS_ZSTD : ELOG_COMPRESS_NONE,
			                 v == 1);
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
	row("zstd_bytes_none", "zstd: bytes/record, uncompressed", "B/rec", bpr[0], "SQLite B/row",
	    sqb, G_NONE, 0);
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
	return (struct many_sizes){ 0.3, 5, 0.3, 2000 }; /* --scale */
}

/* What one process of a many-writer phase did, in memory shared with the
 * bench. */
struct proc_slot {
	long acks, busy;
	long syncs; /* fdatasync and fsync calls in the loop, -1 unknown */
	double end;
};

enum mw_kind { MW_ELOG, MW_RAW, MW_SQLITE, MW_REDIS };

struct mw_job {
	enum mw_kind kind;
	const char *target; /* log directory, file or database */
	const struct corpus *c;
	long per; /* records per sync / transaction */
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
 * common start, then append and sync (or write + fdatasync, or commit, or
 * XADD and wait for the reply) job->per records at a time until the
 * deadline. */
static void mw_body(const struct mw_job *job, int k, struct proc_slot *slot)
{
	const struct corpus *c = job->c;
	long i = k * 1000003L, per = job->per;
	elog *w = NULL;
	int fd = -1;
	sqlite3 *d = NULL;
	sqlite3_stmt *st = NULL;
	rd *x = NULL;
	if (job->kind == MW_REDIS) {
		x = rd_connect();
	} else if (job->kind == MW_ELOG) {
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
	long s0 = syncs_now();
	while (now() < job->deadline) {
		if (job->kind == MW_REDIS) {
			rd_xadd(x, c, i++);
			slot->acks++;
		} else if (job->kind == MW_ELOG) {
			uint64_t off;
			for (long j = 0; j < per; j++, i++)
				e_append(w, ckey(c, i), KEY_LEN, cval(c, i), c->size,
				         per == 1 ? &off : NULL);
			int rc = elog_sync(w);
			if (rc)
				die("elog_sync: %s: %s", elog_strerror(rc), elog_errmsg(w));
			slot->acks += per;
		} else if (job->kind == MW_RAW) {
			if (write(fd, cval(c, i), c->size) != (ssize_t)c->size || fdatasync(fd) < 0)
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
				                   c->size),
				         d, "insert");
			sq_exec(d, "COMMIT");
			slot->acks += per;
		}
	}
	slot->end = now();
	slot->syncs = syncs_now() < 0 ? -1 : syncs_now() - s0;
	if (x)
		rd_free(x);
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
 * per second from the start to the last one's end), the fewest and the
 * most records one process had acknowledged, and the syncs per sync call
 * (elog_sync, fdatasync of the raw loop, or commit: per record when
 * job->per is 1) in *spa (NAN when not counted: SQLite, Redis).  No SQLite
 * connection or Redis connection may be open in this process. */
static double mw_phase(struct mw_job *job, int n, double secs, long *minp, long *maxp, double *spa)
{
	long sum = 0, mn = LONG_MAX, mx = 0, syncs = 0;
	struct proc_slot *slots = mmap(NULL, (size_t)n * sizeof *slots, PROT_READ | PROT_WRITE,
	                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
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
			alarm((unsigned)secs + 60); /* bound the child too */
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
		if (syncs >= 0)
			syncs = slots[k].syncs < 0 ? -1 : syncs + slots[k].syncs;
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
	*spa = job->kind == MW_ELOG || job->kind == MW_RAW ? per_ack(syncs, sum / job->per) : NAN;
	if (job->kind == MW_ELOG) { /* every acknowledged record is there */
		elog_reader *r;
		if (elog_reader_open(&r, job->target) != 0 || elog_reader_seek_end(r) != 0)
			die("%s: cannot read the log back", job->target);
		if (elog_reader_position(r) != (uint64_t)sum)
			die("%s: %d writers acknowledged %ld records, the log ends at %llu",
			    job->target, n, sum, (unsigned long long)elog_reader_position(r));
		elog_reader_close(r);
	}
	if (job->kind == MW_REDIS) { /* and every acknowledged entry */
		rd *x = rd_connect();
		if (rd_len(x) != sum)
			die("redis: %d clients acknowledged %ld entries, the stream holds %ld", n,
			    sum, rd_len(x));
		rd_free(x);
	}
	return end > job->start ? (double)sum / (end - job->start) : NAN;
}

/* Fresh targets for one phase: an empty log, an empty file, an empty
 * table (made here, so that the processes only open them), an empty
 * stream. */
static void mw_fresh(const char *dir, const char *raw, const char *db, int redis)
{
	if (redis) {
		rd *x = rd_connect();
		rd_clear(x);
		rd_free(x);
	}
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
 * against one process doing so alone, against N SQLite connections in
 * N processes committing a row per transaction, and against N Redis
 * clients in N processes, each sending one XADD and waiting for its
 * reply.  The phases take turns. */
static void w_multi(void)
{
	struct many_sizes ms = many_sizes();
	const struct corpus *c = corpus(0);
	char *dir = path("multi.elog"), *raw = path("multi.raw"), *db = path("multi.db");
	static const int ns[2] = { 4, 8 };
	double er[2][16], rr[2][16], sr[2][16], r1[2][16], ef[2][16], sf[2][16], xr[2][16];
	double es[2][16], rs[2][16], spa;
	long mn, mx;
	int have_redis = redis_fresh();
	int phases = have_redis ? 5 : 4;
	progress("many writers: 4 and 8 processes, %.1f s per phase x %d runs%s", ms.secs, S.runs,
	         have_redis ? ", with Redis" : "");
	for (int run = 0; run < S.runs; run++) {
		struct mw_job job = { .c = c, .per = 1 };
		for (int x = 0; x < 2; x++) {
			int n = ns[x];
			/* The phases take turns, each run starting one
			 * further on, so that none always follows another. */
			for (int turn = 0; turn < phases; turn++) {
				int which = (turn + run + x) % phases;
				const char *what;
				double *rate;
				int procs = n;
				job.kind = which == 0   ? MW_ELOG
				           : which == 3 ? MW_SQLITE
				           : which == 4 ? MW_REDIS
				                        : MW_RAW;
				if (which == 0) {
					mw_fresh(dir, NULL, NULL, 0);
					job.target = dir;
					what = "elog";
					rate = &er[x][run];
				} else if (which == 1 || which == 2) {
					mw_fresh(NULL, raw, NULL, 0);
					job.target = raw;
					what = which == 1 ? "raw O_APPEND" : "raw (alone)";
					rate = which == 1 ? &rr[x][run] : &r1[x][run];
					procs = which == 1 ? n : 1;
				} else if (which == 3) {
					mw_fresh(NULL, NULL, db, 0);
					job.target = db;
					what = "SQLite";
					rate = &sr[x][run];
				} else {
					mw_fresh(NULL, NULL, NULL, 1);
					job.target = "redis";
					what = "Redis";
					rate = &xr[x][run];
				}
				*rate = mw_phase(&job, procs, ms.secs, &mn, &mx, &spa);
				if (which == 0) {
					ef[x][run] = mx ? (double)mn / (double)mx : NAN;
					es[x][run] = spa;
				}
				if (which == 1)
					rs[x][run] = spa;
				if (which == 3)
					sf[x][run] = mx ? (double)mn / (double)mx : NAN;
				if (isnan(spa))
					progress("  run %d, %d %s writers: %.0f acks/s, per writer"
					         " %ld..%ld",
					         run + 1, procs, what, *rate, mn, mx);
				else
					progress("  run %d, %d %s writers: %.0f acks/s, per writer"
					         " %ld..%ld, %.3f syncs/ack",
					         run + 1, procs, what, *rate, mn, mx, spa);
			}
			progress("  run %d, %d writers: elog / raw O_APPEND %.2fx, / raw 1 process"
			         " %.2fx, / SQLite %.2fx",
			         run + 1, n, er[x][run] / rr[x][run], er[x][run] / r1[x][run],
			         er[x][run] / sr[x][run]);
			if (have_redis)
				progress("  run %d, %d writers: elog / Redis %.2fx", run + 1, n,
				         er[x][run] / xr[x][run]);
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
		row(id, "  against 1 raw write+fdatasync loop", "acks/s", rate, "raw 1 process",
		    median(r1[x], S.runs), G_NONE, 0);
		snprintf(id, sizeof id, "multi%d_100_sqlite", n);
		snprintf(ref, sizeof ref, "SQLite %d procs", n);
		snprintf(wl, sizeof wl, "  against SQLite, %d procs, txn/row", n);
		row(id, wl, "acks/s", rate, ref, median(sr[x], S.runs), G_RATIO_GE, 1);
		/* The issue's target: 8 writer processes at or above Redis
		 * with 8 clients; at 4, context. */
		snprintf(id, sizeof id, "multi%d_100_redis", n);
		snprintf(ref, sizeof ref, "Redis always %d cl", n);
		snprintf(wl, sizeof wl, "  against Redis, %d client procs, XADD", n);
		row_redis(have_redis, id, wl, "acks/s", rate, ref,
		          have_redis ? median(xr[x], S.runs) : NAN, n == 8 ? G_RATIO_GE : G_NONE,
		          1);
		snprintf(id, sizeof id, "multi%d_100_syncs", n);
		snprintf(ref, sizeof ref, "raw %d procs", n);
		row(id, "  syncs per ack", "syncs", median(es[x], S.runs), ref,
		    median(rs[x], S.runs), G_NONE, 0);
		snprintf(id, sizeof id, "multi%d_100_fair", n);
		row(id, "  fairness: min/max acks per process", "min/max", median(ef[x], S.runs),
		    "SQLite min/max", median(sf[x], S.runs), G_NONE, 0);
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
	double er[16], sr[16], ef[16], sf[16], es[16], spa;
	long mn, mx;
	progress("many writers, batches of 1000: 4 processes, %.1f s per phase x %d runs", ms.secs,
	         S.runs);
	for (int run = 0; run < S.runs; run++) {
		struct mw_job job = { .c = c, .per = 1000 };
		for (int turn = 0; turn < 2; turn++) {
			if ((turn == 0) == (run % 2 == 0)) {
				mw_fresh(dir, NULL, NULL, 0);
				job.kind = MW_ELOG;
				job.target = dir;
				er[run] = mw_phase(&job, 4, ms.secs, &mn, &mx, &es[run]);
				ef[run] = mx ? (double)mn / (double)mx : NAN;
			} else {
				mw_fresh(NULL, NULL, db, 0);
				job.kind = MW_SQLITE;
				job.target = db;
				sr[run] = mw_phase(&job, 4, ms.secs, &mn, &mx, &spa);
				sf[run] = mx ? (double)mn / (double)mx : NAN;
			}
		}
		progress("  run %d: elog %.0f rec/s, SQLite %.0f rec/s, %.2fx", run + 1, er[run],
		         sr[run], er[run] / sr[run]);
	}
	rm_rf(dir);
	sq_unlink(db);
	row("multib4_100", "many writers: 4 procs, fsync/1000, 100 B", "rec/s", median(er, S.runs),
	    "SQLite 4 procs", median(sr, S.runs), G_NONE, 0);
	row("multib4_100_fair", "  fairness: min/max records per process", "min/max",
	    median(ef, S.runs), "SQLite min/max", median(sf, S.runs), G_NONE, 0);
	row("multib4_100_syncs", "  syncs per batch of 1000", "syncs", median(es, S.runs), "", NAN,
	    G_NONE, 0);
	free(dir);
	free(db);
}

/* One one-shot writer process: `echo x | elog-append LOG`, or the sqlite3
 * shell inserting one row into the WAL database. */
static void oneshot_spawn(int sqlite, const char *log, const char *db, const char *xfile,
                          double *secs)
{
	char prog[4096];
	snprintf(prog, sizeof prog, "%s/elog-append", bindir);
	char *ae[] = { prog, (char *)log, NULL };
	char *as[] = {
		(char *)sqlite3_cli,
		"-cmd",
		".timeout 10000",
		"-cmd",
		"pragma synchronous=full",
		(char *)db,
		"INSERT INTO log(ts, schema, key, value)"
		" VALUES(CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 0, NULL, 'x')",
		NULL
	};
	spawn(sqlite ? as : ae, sqlite ? NULL : xfile, NULL, secs);
}

/* The raw one-shot writer (bench/oneshot-raw.c, built by run.sh): a
 * process that opens file O_APPEND, writes 100 B, fdatasyncs and exits;
 * spawned as elog-append is, stdin from xfile. */
static void raw_oneshot_spawn(const char *prog, const char *file, const char *xfile, double *secs)
{
	char *argv[] = { (char *)prog, (char *)file, NULL };
	spawn(argv, xfile, NULL, secs);
}

/* The system calls of one run of argv (stdin from in), counted by strace:
 * the lines `strace -f -o FILE` writes, less those that end a call begun on
 * another line ("resumed") and the exit and signal lines; the fdatasync and
 * fsync calls among them in *syncs.  -1 without strace. */
static long count_syscalls(char *const argv[], const char *in, long *syncs)
{
	if (!runnable("strace"))
		return -1;
	char out[4096], line[8192], *av[64];
	snprintf(out, sizeof out, "%s/strace.out", workdir);
	int n = 0;
	av[n++] = "strace";
	av[n++] = "-f";
	av[n++] = "-qq";
	av[n++] = "-o";
	av[n++] = out;
	for (int i = 0; argv[i] && n < 63; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	spawn(av, in, NULL, NULL);
	FILE *f = fopen(out, "r");
	if (!f)
		die("%s: %s", out, strerror(errno));
	long calls = 0;
	*syncs = 0;
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, " resumed>") || strstr(line, "+++ ") || strstr(line, "--- "))
			continue;
		calls++;
		if (strstr(line, "fdatasync(") || strstr(line, "fsync("))
			++*syncs;
	}
	fclose(f);
	unlink(out);
	return calls;
}

/* 4 processes each running one-shot writers one after the other for secs
 * seconds; the per-process times go to t[k * cap ...], their counts to
 * n[k]. */
static double oneshot_loops(int sqlite, const char *log, const char *db, const char *xfile,
                            double secs, double *t, long cap, long *n)
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
 * database with synchronous=full and against the raw one-shot writer; one
 * at a time, then 4 loops at once (elog and sqlite3). */
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
	char *rawfile = path("oneshot.raw"), rawprog[4096];
	snprintf(rawprog, sizeof rawprog, "%s/bench-oneshot-raw", bindir);
	int have_raw = access(rawprog, X_OK) == 0;
	FILE *f = fopen(xfile, "w");
	if (!f || fputs("x\n", f) < 0 || fclose(f) != 0)
		die("%s: write failed", xfile);
	progress("one-shot writers: logs of %ld x 100 B, %d spawns x %d runs,"
	         " then 4 loops of %.1f s",
	         ms.log_n, ms.oneshots, S.runs, ms.loop_secs);
	build_elog(dir, c, ms.log_n, 0, 0);
	build_sqlite(db, c, ms.log_n, 0);
	if (have_raw)
		mw_fresh(NULL, rawfile, NULL, 0);
	int k1 = ms.oneshots;
	double *et = xmalloc((size_t)k1 * sizeof *et), *st = xmalloc((size_t)k1 * sizeof *st);
	double *rt = xmalloc((size_t)k1 * sizeof *rt);
	long cap = 100000;
	double *lt = xmalloc(4 * (size_t)cap * sizeof *lt),
	       *all = xmalloc(4 * (size_t)cap * sizeof *all);
	double em[16], sm[16], rm[16], e4[16], s4[16], ea[16], sa[16];
	for (int run = 0; run < S.runs; run++) {
		/* elog-append, the sqlite3 shell (and the raw writer) take
		 * turns, each spawn starting one further on. */
		int np = have_raw ? 3 : 2;
		for (int i = 0; i < k1; i++) {
			for (int t = 0; t < np; t++) {
				int who = (t + i + run) % np;
				if (who == 2)
					raw_oneshot_spawn(rawprog, rawfile, xfile, &rt[i]);
				else
					oneshot_spawn(who, dir, db, xfile, who ? &st[i] : &et[i]);
			}
		}
		em[run] = median(et, k1) * 1e3;
		sm[run] = median(st, k1) * 1e3;
		rm[run] = have_raw ? median(rt, k1) * 1e3 : NAN;
		for (int turn = 0; turn < 2; turn++) {
			int sqlite = (turn == 0) != (run % 2 == 0);
			long n[4], m = 0;
			double el = oneshot_loops(sqlite, dir, db, xfile, ms.loop_secs, lt, cap, n);
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
		         " %.0f / %.0f per s (elog / sqlite3)",
		         run + 1, em[run], sm[run], em[run] / sm[run], e4[run], s4[run],
		         e4[run] / s4[run], ea[run], sa[run]);
		if (have_raw)
			progress("  run %d: one %.2f ms, raw one-shot %.2f ms (%.2fx)", run + 1,
			         em[run], rm[run], em[run] / rm[run]);
	}
	double one = median(em, S.runs);
	row("oneshot", "one-shot writer: echo x | elog-append", "ms", one, "sqlite3 CLI insert",
	    median(sm, S.runs), G_RATIO_LE, 0.35);
	if (have_raw) {
		row("oneshot_raw", "  against a raw one-shot process", "ms", one,
		    "O_APPEND+fdatasync", median(rm, S.runs), G_RATIO_LE, 1.3);
		/* Not timed: one more of each under strace. */
		char prog[4096];
		snprintf(prog, sizeof prog, "%s/elog-append", bindir);
		char *ae[] = { prog, dir, NULL }, *ar[] = { rawprog, rawfile, NULL };
		long esy = 0, rsy = 0;
		long ec = count_syscalls(ae, xfile, &esy), rc = count_syscalls(ar, xfile, &rsy);
		if (ec < 0) {
			row_na("oneshot_syscalls", "  system calls of one (strace -f)",
			       "n/a (no strace)");
		} else {
			row("oneshot_syscalls", "  system calls of one (strace -f)", "calls",
			    (double)ec, "raw one-shot", (double)rc, G_NONE, 0);
			row("oneshot_syncs", "  fdatasync + fsync calls of one", "syncs",
			    (double)esy, "raw one-shot", (double)rsy, G_NONE, 0);
		}
	} else {
		row_na("oneshot_raw", "  against a raw one-shot process",
		       "n/a (no bench-oneshot-raw in --bin: run.sh builds it)");
	}
	row("oneshot4", "  4 at once: time per process", "ms", median(e4, S.runs),
	    "4 sqlite3 CLI loops", median(s4, S.runs), G_NONE, 0);
	row("oneshot4_rate", "  4 at once: aggregate", "proc/s", median(ea, S.runs),
	    "4 sqlite3 CLI loops", median(sa, S.runs), G_NONE, 0);
	rm_rf(dir);
	sq_unlink(db);
	unlink(xfile);
	unlink(rawfile);
	free(et);
	free(st);
	free(rt);
	free(lt);
	free(all);
	free(dir);
	free(db);
	free(xfile);
	free(rawfile);
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
static void build_direct(const char *dir, const struct corpus *c, long n, uint64_t seg_bytes,
                         int distinct_keys, size_t vlen)
{
	rm_rf(dir);
	e_close(e_open(dir, seg_bytes, ELOG_COMPRESS_NONE, 0)); /* settings */
	struct elog_settings set;
	char msg[ELOG_MSG_MAX];
	if (elog_settings_read(dir, &set, msg) != 0)
		die("%s: %s", dir, msg);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		die("%s: %s", dir, strerror(errno));
	size_t cap = seg_bytes + SEAL_SIZE + (64u << 10);
	unsigned char *seg = xmalloc(cap), *ix = xmalloc(cap / 4 + IDX_HDR);
	size_t len = 0, ixlen = 0;
	uint64_t base = 0;
	struct idx_builder ib;
	char key[32], name[NAME_MAX_LOCAL];
	int64_t ts = wall_ms() - n;
	for (long i = 0; i <= n; i++) {
		size_t size = i < n ? elog__rec_size(KEY_LEN, vlen) : 0;
		if (i == n || len == 0 || len + size > seg_bytes) {
			if (len && i < n) { /* a closed segment ends with its seal */
				struct seal sl = elog__seal_of(set.id, (uint64_t)i, (uint64_t)i, len);
				elog__seal_encode(seg + len, &sl);
				len += SEAL_SIZE;
			}
			if (len) { /* write the segment just filled */
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
			elog__seg_header_encode(seg, base, 0, set.id);
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
		if (elog__idx_builder_add(&ib, r.offset, r.ts_ms, len, DEFAULT_INDEX_INTERVAL,
		                          &e)) {
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
	read_elog(small, n); /* warm both */
	read_elog(large, n);
	for (int run = 0; run < S.runs; run++) {
		es[run] = read_elog(small, n);
		el[run] = read_elog(large, n);
		if (have_cat) { /* elog-cat to /dev/null, as a user reads */
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
	row("segments_read", wl, "rec/s", median(es, S.runs), "64 MiB segments", median(el, S.runs),
	    G_NONE, 0);
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
	sleep_ms(50); /* let it open and reach the end */
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
	progress("follower CPU: 20,000 segments vs 20, %ld batches x %d runs", SS.follow_batches,
	         S.runs);
	build_direct(many, c, n, 4096, 0, c->size);
	build_direct(few, c, n,
	             ((uint64_t)n * elog__rec_size(KEY_LEN, c->size) / 20 + 4095) & ~4095ull, 0,
	             c->size);
	double m[16], f[16];
	for (int run = 0; run < S.runs; run++) {
		m[run] = follow_cpu_per_batch(many, SS.follow_batches);
		f[run] = follow_cpu_per_batch(few, SS.follow_batches);
	}
	row("follow_segments", "follower CPU per batch: 20k segs vs 20", "us", median(m, S.runs),
	    "20 segments", median(f, S.runs), G_RATIO_LE, 1.5);
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
		row_na("compact_rss", "compaction peak RSS per key",
		       "n/a (elog-compact not built)");
		return;
	}
	const struct corpus *c = corpus(0);
	long keys = SS.rss_keys;
	char *big = path("rss-keys.elog"), *tiny = path("rss-base.elog");
	progress("compaction RSS: %ld distinct keys x %d runs", keys, S.runs);
	build_direct(big, c, keys, 64u << 20, 1, 16);
	build_direct(tiny, c, 1000, 64u << 20, 1, 16);
	e_compactable(big);
	e_compactable(tiny);
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
	row("long_cat_rss", "  long: elog-cat -v peak RSS", "MiB", (double)peak_rss(cat) / 1024, "",
	    NAN, G_NONE, 0);

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
	row("long_seek_p99", "  long: seek p99", "us", quantile(lat, seeks, 0.99), "", NAN, G_NONE,
	    0);
	free(lat);

	snprintf(prog, sizeof prog, "%s/elog-retain", bindir);
	char max[32];
	snprintf(max, sizeof max, "%llu", (unsigned long long)(bytes / 2));
	char *ret[] = { prog, "--max-bytes", max, dir, NULL };
	t0 = now();
	long rss = peak_rss(ret);
	row("long_retain", "  long: elog-retain, oldest half", "s", now() - t0, "", NAN, G_NONE, 0);
	row("long_retain_rss", "  long: elog-retain peak RSS", "MiB", (double)rss / 1024, "", NAN,
	    G_NONE, 0);

	snprintf(prog, sizeof prog, "%s/elog-compact", bindir);
	char *cmp[] = { prog, dir, NULL };
	e_compactable(dir);
	t0 = now();
	rss = peak_rss(cmp);
	row("long_compact", "  long: elog-compact, 100k keys", "s", now() - t0, "", NAN, G_NONE, 0);
	row("long_compact_rss", "  long: elog-compact peak RSS", "MiB", (double)rss / 1024, "", NAN,
	    G_NONE, 0);
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
	const char *name; /* its name in --only */
	void (*setup)(int big);
	void (*once)(void);         /* run once ... */
	void (*each_size)(int big); /* ... or for each record size */
};

static const struct workload workloads[] = {
	{ "append", NULL, NULL, w_append },
	{ "append_prog", NULL, w_append_prog, NULL },
	{ "ack1", NULL, NULL, w_ack1 },
	{ "ack8", NULL, NULL, w_ack8 },
	{ "multi", NULL, w_multi, NULL },
	{ "multi_batch", NULL, w_multi_batch, NULL },
	{ "oneshot", NULL, w_oneshot, NULL },
	{ "read", ensure_read, NULL, w_read },
	{ "cat", ensure_read, NULL, w_cat },
	{ "seek", ensure_read, NULL, w_seek },
	/* Its read logs only when the sqlite3 shell is there: it sees to
	 * them itself. */
	{ "spawn", NULL, w_spawn, NULL },
	{ "retain", NULL, w_retain, NULL },
	{ "compact", NULL, w_compact, NULL },
	{ "follow", NULL, w_follow, NULL },
	{ "recovery", NULL, w_recovery, NULL },
	{ "memory", ensure_read, w_memory, NULL },
	{ "disk", ensure_read, NULL, w_disk },
	{ "zstd", NULL, w_zstd, NULL },
	{ "segments", NULL, w_segments, NULL },
	{ "follow_segments", NULL, w_follow_segments, NULL },
	{ "compact_rss", NULL, w_compact_rss, NULL },
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
	redis_stop();
	if (redis_dir)
		rm_rf(redis_dir);
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
	      "             [--redis-server PATH | --no-redis]\n"
	      "LIST: ",
	      stderr);
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
		{ "redis-server", required_argument, NULL, 'R' },
		{ "no-redis", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int c, runs = 0, long_mode = 0;
	double scale = 1;
	const char *json = NULL;

	S = FULL;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			S = QUICK;
			break;
		case 'F':
			S = FULL;
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		case 'd':
			workdir = optarg;
			break;
		case 'b':
			bindir = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 'o':
			only = optarg;
			break;
		case 's':
			sqlite3_cli = optarg;
			break;
		case 'x':
			scale = atof(optarg);
			break;
		case 'L':
			long_mode = 1;
			break;
		case 'N':
			long_n = atol(optarg);
			break;
		case 'R':
			redis_server = optarg;
			break;
		case 'n':
			no_redis = 1;
			break;
		default:
			usage();
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
	signal(SIGINT, on_fatal);
	signal(SIGTERM, on_fatal);
	signal(SIGHUP, on_fatal);

	double t0;
	if (long_mode) { /* one run of the long workload, nothing else */
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
		printf("ratio = elog / reference; targets from issue 7 (issue 8 for zstd; issue 25"
		       " for many writers, 8 threads, page cache, seek p99, one-shot)\n\n");
		header();
		t0 = now();
		run_suite();
		printf("\n%d PASS, %d MISS; %.0f s\n", npass, nmiss, now() - t0);
	}
	if (jsonf && jsonf != stdout)
		fclose(jsonf);
	return 0;
}
