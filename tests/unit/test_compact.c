/*
 * test_compact.c: compaction (lib/compact.c, lib/keyset.c, lib/maint.c).
 *
 * Logs are written through the writer with small segments, compacted, and
 * read back through a reader: every key's newest record must be there,
 * every unkeyed record, nothing twice, offsets strictly increasing.  The
 * crash test interrupts compaction at every step in a child process
 * (ELOG_MAINT_CRASH_AT, tests/crash/maint_fault.h) and checks the log after
 * each.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "../crash/maint_fault.h"
#include "internal.h"

/* Each test's log is ut_dir, in the scratch directory of unit.h; a copy
 * of it, when a test needs one, is copy_path(). */
static char msg[ELOG_MSG_MAX];

#define NKEYS 40
#define T0 1700000000000ll

static const char *copy_path(void)
{
	static char copy[1200];
	return ut_path(copy, sizeof copy, ut_top, "copy");
}

/* The logs of these tests are compacted: they are created so. */
static elog *open_writer(const char *path)
{
	struct elog_options o = { .create = 1,
		                  .segment_bytes = 4096,
		                  .cleanup = ELOG_CLEANUP_COMPACT };
	elog *w;
	ck_assert_msg(elog_open(&w, path, &o) == 0, "open: %s", elog_errmsg(w));
	return w;
}

static void append(elog *w, const char *key, const char *value, int64_t ts)
{
	struct elog_record r = { 0 };
	r.ts_ms = ts;
	r.key = key;
	r.key_len = key ? strlen(key) : 0;
	r.value = value;
	r.value_len = strlen(value);
	UT_OK(elog_append(w, &r, NULL), w);
}

/* The expected state: per key the newest value ("" = deleted), and the
 * number of unkeyed records. */
struct expect {
	char value[NKEYS][32];
	int unkeyed;
};

/* rounds passes over NKEYS keys, an unkeyed record every 7th record, and a
 * tombstone for keys divisible by 10 in the last round. */
static void fill(const char *path, int rounds, int64_t ts, struct expect *ex)
{
	elog *w = open_writer(path);
	char key[16], val[32];
	int n = 0;
	memset(ex, 0, sizeof *ex);
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < NKEYS; k++) {
			snprintf(key, sizeof key, "key-%02d", k);
			if (r == rounds - 1 && k % 10 == 0)
				val[0] = '\0';
			else
				snprintf(val, sizeof val, "v%d-%d-%s", r, k, "padding-padding");
			append(w, key, val, ts);
			snprintf(ex->value[k], sizeof ex->value[k], "%s", val);
			if (++n % 7 == 0) {
				append(w, NULL, "unkeyed", ts);
				ex->unkeyed++;
			}
		}
	}
	/* Unkeyed filler, so that every keyed record is in a closed segment. */
	for (int i = 0; i < 200; i++) {
		append(w, NULL, "filler", ts);
		ex->unkeyed++;
	}
	UT_OK(elog_close(w), NULL);
}

/* Read the whole log; check order, no duplicates, and the expectations:
 * every key's newest value present (tombstones only when tombs_expected),
 * and all unkeyed records. */
static uint64_t check_log(const char *path, const struct expect *ex, int tombs_expected)
{
	elog_reader *r;
	struct elog_record rec;
	int found[NKEYS] = { 0 }, unkeyed = 0, rc;
	uint64_t n = 0, last = 0;
	ck_assert_msg(elog_reader_open(&r, path) == 0, "%s", elog_reader_errmsg(r));
	while ((rc = elog_reader_next(r, &rec)) == 0) {
		ck_assert_msg(n == 0 || rec.offset > last, "offset %llu after %llu",
		              (unsigned long long)rec.offset, (unsigned long long)last);
		last = rec.offset;
		n++;
		if (rec.key_len == 0) {
			unkeyed++;
			ck_assert(rec.value_len > 0);
			continue;
		}
		const char *kp = (const char *)rec.key;
		ck_assert_uint_eq(rec.key_len, 6);
		int k = (kp[4] - '0') * 10 + (kp[5] - '0');
		if (rec.value_len == strlen(ex->value[k]) &&
		    memcmp(rec.value, ex->value[k], rec.value_len) == 0)
			found[k]++;
	}
	ck_assert_msg(rc == ELOG_END, "%d %s", rc, elog_reader_errmsg(r));
	elog_reader_close(r);
	ck_assert_int_eq(unkeyed, ex->unkeyed);
	for (int k = 0; k < NKEYS; k++) {
		if (ex->value[k][0] || tombs_expected)
			ck_assert_msg(found[k] == 1, "key %d found %d times", k, found[k]);
		else
			ck_assert_int_eq(found[k], 0);
	}
	return n;
}

static int count_files(const char *path, const char *suffix)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name), s = strlen(suffix);
		if (l >= s && strcmp(de->d_name + l - s, suffix) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static void verify_clean(const char *path)
{
	struct elog_verify_result vr;
	char vmsg[ELOG_MSG_MAX];
	ck_assert_msg(elog_verify(path, NULL, &vr, vmsg) == 0, "%s", vmsg);
	ck_assert_msg(vr.damage == 0, "verify found %llu problems", (unsigned long long)vr.damage);
}

UT_TEST(siphash_reference_vectors)
{
	static const unsigned char want[3][16] = {
		{ 0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7,
		  0x55, 0x02, 0x93 },
		{ 0xda, 0x87, 0xc1, 0xd8, 0x6b, 0x99, 0xaf, 0x44, 0x34, 0x76, 0x59, 0x11, 0x9b,
		  0x22, 0xfc, 0x45 },
		{ 0x54, 0x93, 0xe9, 0x99, 0x33, 0xb0, 0xa8, 0x11, 0x7e, 0x08, 0xec, 0x0f, 0x97,
		  0xcf, 0xc3, 0xd9 },
	};
	static const size_t len[3] = { 0, 1, 15 };
	unsigned char in[15], out[16];
	for (int i = 0; i < 15; i++)
		in[i] = (unsigned char)i;
	for (int i = 0; i < 3; i++) {
		elog__siphash128(in, len[i], 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull, out);
		ck_assert_mem_eq(out, want[i], 16);
	}
}
END_TEST

UT_TEST(keyset_newest_wins_and_grows)
{
	struct keyset ks;
	char key[32];
	uint64_t off;
	int tomb;
	UT_OK(elog__keyset_init(&ks), NULL);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 100000; i++) {
			int n = snprintf(key, sizeof key, "k%d", i);
			UT_OK(elog__keyset_put(&ks, key, (size_t)n,
			                       (uint64_t)round * 100000 + (uint64_t)i, round),
			      NULL);
		}
	ck_assert_uint_eq(ks.n, 100000);
	/* At most four fifths full, and at least three fifths. */
	ck_assert_uint_le(ks.n * 5, ks.cap * 4);
	ck_assert_uint_ge(ks.n * 5, ks.cap * 3);
	for (int i = 0; i < 100000; i += 997) {
		int n = snprintf(key, sizeof key, "k%d", i);
		ck_assert_int_eq(elog__keyset_get(&ks, key, (size_t)n, &off, &tomb), 1);
		ck_assert_uint_eq(off, 100000 + (uint64_t)i);
		ck_assert_int_eq(tomb, 1);
	}
	ck_assert_int_eq(elog__keyset_get(&ks, "absent", 6, &off, &tomb), 0);
	ck_assert_int_eq(elog__keyset_get(&ks, "", 0, &off, &tomb), 0);
	ck_assert_uint_eq(elog__keyset_memory(&ks),
	                  ks.cap * 24 + KEYSET_SHARDS * sizeof(struct keyshard));
	elog__keyset_free(&ks);
}
END_TEST

/* Growing the table never holds two copies of all of it: the most it
 * held at once stays within 40 bytes a key (it was 2.25 times the table,
 * up to 67 bytes a key, when the whole table grew in one piece). */
UT_TEST(keyset_peak_stays_within_bound)
{
	struct keyset ks;
	char key[32];
	UT_OK(elog__keyset_init(&ks), NULL);
	for (int i = 0; i < 300000; i++) {
		int n = snprintf(key, sizeof key, "key-%d", i);
		UT_OK(elog__keyset_put(&ks, key, (size_t)n, (uint64_t)i, 0), NULL);
		if (i >= 50000 && i % 9973 == 0)
			ck_assert_msg(ks.peak <= (size_t)(i + 1) * 40, "%d keys: peak %zu bytes",
			              i + 1, ks.peak);
	}
	ck_assert_uint_le(ks.peak, 300000 * 40);
	ck_assert_uint_le(elog__keyset_memory(&ks), 300000 * 40);
	elog__keyset_free(&ks);
}
END_TEST

#if !defined(__SANITIZE_ADDRESS__)
/* The virtual memory of this process, in bytes. */
static size_t vm_size(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t kb = 0;
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmSize: %zu kB", &kb) == 1)
			break;
	fclose(f);
	ck_assert_uint_gt(kb, 0);
	return kb << 10;
}
#endif

/* When memory runs out, the error names the key table and how many keys
 * it held (it used to name whichever segment was being read). */
UT_TEST(key_table_out_of_memory_is_named)
{
#if defined(__SANITIZE_ADDRESS__)
	return; /* AddressSanitizer needs more address space */
#else
	struct elog_options o = { .create = 1,
		                  .segment_bytes = 1 << 20,
		                  .cleanup = ELOG_CLEANUP_COMPACT };
	elog *w;
	char key[32];
	UT_OK(elog_open(&w, ut_dir, &o), w);
	for (int i = 0; i < 400000; i++) {
		snprintf(key, sizeof key, "k%d", i);
		append(w, key, "v", T0);
	}
	UT_OK(elog_close(w), NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* The table needs 12 MB or more; everything else fits in 6. */
		struct rlimit rl;
		rl.rlim_cur = rl.rlim_max = vm_size() + (6u << 20);
		if (setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(2);
		int rc = elog_compact(ut_dir, NULL, NULL, msg);
		if (rc != ENOMEM)
			_exit(3);
		if (!strstr(msg, "the key table, holding ") || !strstr(msg, " keys in "))
			_exit(4);
		_exit(0);
	}
	ck_assert_int_eq(ut_wait_child(pid), 0);
#endif
}
END_TEST

UT_TEST(newest_per_key_survives)
{
	struct expect ex;
	struct elog_compact_result res;
	fill(ut_dir, 20, T0, &ex);
	uint64_t before = check_log(ut_dir, &ex, 1);
	UT_OK(elog_compact(ut_dir, NULL, &res, msg), msg);
	uint64_t after = check_log(ut_dir, &ex, 1);
	ck_assert_uint_lt(after, before);
	ck_assert_uint_lt(res.records_after, res.records_before);
	ck_assert_uint_lt(res.bytes_after, res.bytes_before);
	ck_assert_uint_lt(res.segments_after, res.segments_before);
	ck_assert_uint_eq(res.keys, NKEYS);
	ck_assert_uint_gt(res.memory, 0);
	ck_assert_int_eq(count_files(ut_dir, ".compact"), 0);
	verify_clean(ut_dir);
	/* A second run changes nothing. */
	struct elog_compact_result again;
	UT_OK(elog_compact(ut_dir, NULL, &again, msg), msg);
	ck_assert_uint_eq(again.records_after, again.records_before);
	ck_assert_uint_eq(again.segments_rewritten, 0);
	ck_assert_uint_eq(check_log(ut_dir, &ex, 1), after);
	/* The writer opens the compacted log and goes on. */
	elog *w = open_writer(ut_dir);
	append(w, "key-01", "after", T0);
	UT_OK(elog_close(w), NULL);
	snprintf(ex.value[1], sizeof ex.value[1], "after");
	check_log(ut_dir, &ex, 1);
}
END_TEST

/* Count records of key in the log. */
static int count_key(const char *path, const char *key)
{
	elog_reader *r;
	struct elog_record rec;
	int n = 0;
	UT_OK(elog_reader_open(&r, path), r);
	while (elog_reader_next(r, &rec) == 0)
		n += rec.key_len == strlen(key) && memcmp(rec.key, key, rec.key_len) == 0;
	elog_reader_close(r);
	return n;
}

UT_TEST(tombstone_grace_runs_from_first_sight)
{
	struct elog_compact_opts o = { 0 };
	struct elog_compact_result res;
	struct expect ex;
	fill(ut_dir, 20, T0, &ex);
	o.grace_ms = 3600 * 1000;
	o.now_ms = T0 + 1000ll * 86400 * 30; /* the records are a month old */
	UT_OK(elog_compact(ut_dir, &o, &res, msg), msg);
	ck_assert_uint_gt(res.tombstones_kept, 0);
	ck_assert_uint_eq(res.tombstones_removed, 0);
	check_log(ut_dir, &ex, 1);
	int before = count_key(ut_dir, "key-00");
	ck_assert_int_ge(before, 1);

	char *text;
	size_t len;
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	UT_OK(elog__fs_read_small(dfd, FN_COMPACT_STATE, 1 << 20, &text, &len), NULL);
	ck_assert_int_eq(strncmp(text, "elog-compact-state 1\n", 21), 0);
	char line[64];
	snprintf(line, sizeof line, " %lld\n", (long long)o.now_ms);
	ck_assert_ptr_nonnull(strstr(text, line));
	free(text);

	/* Within the grace: kept.  After it: gone with everything older. */
	o.now_ms += o.grace_ms - 1;
	UT_OK(elog_compact(ut_dir, &o, &res, msg), msg);
	ck_assert_uint_eq(res.tombstones_removed, 0);
	ck_assert_int_eq(count_key(ut_dir, "key-00"), before);
	o.now_ms += 1;
	UT_OK(elog_compact(ut_dir, &o, &res, msg), msg);
	ck_assert_uint_gt(res.tombstones_removed, 0);
	ck_assert_int_eq(res.tombstones_kept, 0);
	ck_assert_int_eq(count_key(ut_dir, "key-00"), before - 1);
	check_log(ut_dir, &ex, 0);
	UT_OK(elog__fs_read_small(dfd, FN_COMPACT_STATE, 1 << 20, &text, &len), NULL);
	ck_assert_str_eq(text, "elog-compact-state 1\n");
	free(text);
	close(dfd);
	verify_clean(ut_dir);
}
END_TEST

/* Options of zeros are the defaults (elog(3), Compaction): a tombstone
 * first seen now stays for the 24-hour grace; ELOG_COMPACT_GRACE_NONE
 * drops it, with everything older of its key, at once.  Until 0.2.0 a
 * grace_ms of 0 meant no grace. */
UT_TEST(zero_options_keep_the_default_grace_and_none_has_none)
{
	struct elog_compact_opts o = { 0 };
	struct elog_compact_result res;
	struct expect ex;
	fill(ut_dir, 20, T0, &ex);
	UT_OK(elog_compact(ut_dir, &o, &res, msg), msg);
	ck_assert_uint_gt(res.tombstones_kept, 0);
	ck_assert_uint_eq(res.tombstones_removed, 0);
	int before = count_key(ut_dir, "key-00");
	ck_assert_int_ge(before, 1);
	check_log(ut_dir, &ex, 1);
	o.grace_ms = ELOG_COMPACT_GRACE_NONE;
	UT_OK(elog_compact(ut_dir, &o, &res, msg), msg);
	ck_assert_uint_gt(res.tombstones_removed, 0);
	ck_assert_uint_eq(res.tombstones_kept, 0);
	ck_assert_int_eq(count_key(ut_dir, "key-00"), before - 1);
	check_log(ut_dir, &ex, 0);
	verify_clean(ut_dir);
}
END_TEST

UT_TEST(min_lag_leaves_young_records)
{
	struct elog_compact_opts o = { 0 };
	struct elog_compact_result res;
	elog *w = open_writer(ut_dir);
	/* Old records, then young ones for the same keys. */
	for (int i = 0; i < 400; i++)
		append(w, i % 2 ? "a" : "b", "old-value-old-value", T0);
	for (int i = 0; i < 400; i++)
		append(w, i % 2 ? "a" : "b", "young-value-young", T0 + 3600 * 1000);
	UT_OK(elog_close(w), NULL);
	o.now_ms = T0 + 3600 * 1000 + 60 * 1000;
	o.min_lag_ms = 10 * 60 * 1000;
	UT_OK(elog_compact(ut_dir, &o, &res, msg), msg);
	/* Every old one went (newer ones exist), young ones stay. */
	elog_reader *r;
	struct elog_record rec;
	int old = 0, young = 0;
	UT_OK(elog_reader_open(&r, ut_dir), r);
	while (elog_reader_next(r, &rec) == 0)
		*(rec.ts_ms == T0 ? &old : &young) += 1;
	elog_reader_close(r);
	ck_assert_int_eq(old, 0);
	ck_assert_int_eq(young, 400);
	/* Without the lag the young ones are compacted too. */
	o.min_lag_ms = 0;
	UT_OK(elog_compact(ut_dir, &o, &res, msg), msg);
	ck_assert_int_lt(count_key(ut_dir, "a") + count_key(ut_dir, "b"), 400);
}
END_TEST

UT_TEST(active_segment_counts_but_is_untouched)
{
	struct elog_compact_result res;
	elog *w = open_writer(ut_dir);
	for (int i = 0; i < 300; i++)
		append(w, "k", "closed-value-closed-value", T0);
	UT_OK(elog_sync(w), w);
	/* The writer stays open: its segment is the active one. */
	append(w, "k", "newest", T0);
	UT_OK(elog_sync(w), w);
	append(w, "k", "not-durable-yet", T0); /* buffered, never synced */
	int before = count_key(ut_dir, "k");
	ck_assert_int_eq(before, 301);
	UT_OK(elog_compact(ut_dir, NULL, &res, msg), msg);
	ck_assert_uint_gt(res.records_before, 0);
	ck_assert_uint_eq(res.records_after, 0);
	ck_assert_int_eq(count_key(ut_dir, "k"), before - (int)res.records_before);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	UT_OK(elog__seglist_read(dfd, &sl), NULL);
	ck_assert_uint_eq(sl.base[0], 0); /* the first segment stays */
	elog__seglist_free(&sl);
	close(dfd);
	UT_OK(elog_close(w), NULL);
	ck_assert_int_eq(count_key(ut_dir, "k"), before + 1 - (int)res.records_before);
}
END_TEST

UT_TEST(dry_run_changes_nothing)
{
	struct elog_compact_opts o = { 0 };
	struct elog_compact_result dry, real;
	struct expect ex;
	fill(ut_dir, 10, T0, &ex);
	o.dry_run = 1;
	UT_OK(elog_compact(ut_dir, &o, &dry, msg), msg);
	ut_copy_dir(ut_dir, copy_path());
	ck_assert_uint_lt(dry.records_after, dry.records_before);
	o.dry_run = 0;
	UT_OK(elog_compact(ut_dir, &o, &real, msg), msg);
	ck_assert_uint_eq(dry.records_after, real.records_after);
	ck_assert_uint_eq(dry.bytes_after, real.bytes_after);
	ck_assert_uint_eq(dry.segments_after, real.segments_after);
	/* The copy taken after the dry run is the log as it was. */
	ck_assert_int_eq(count_files(copy_path(), ".log"), (int)dry.segments_before + 1);
	ck_assert_int_eq(count_files(copy_path(), FN_COMPACT_STATE), 0);
}
END_TEST

UT_TEST(refuses_when_maintenance_is_running)
{
	struct expect ex;
	int lockfd;
	fill(ut_dir, 2, T0, &ex);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	UT_OK(elog__lock_take_ms(dfd, FN_MAINT, 0, 1, &lockfd, msg), msg);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char m[ELOG_MSG_MAX], want[128];
		int rc = elog_compact(ut_dir, NULL, NULL, m);
		snprintf(want, sizeof want,
		         "another maintenance run holds maint.lock "
		         "(pid %ld)",
		         (long)getppid());
		_exit(rc == ELOG_LOCKED && strcmp(m, want) == 0 ? 0 : 1);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	close(lockfd);
	close(dfd);
	UT_OK(elog_compact(ut_dir, NULL, NULL, msg), msg);
}
END_TEST

UT_TEST(not_a_log)
{
	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	UT_RC(elog_compact(ut_dir, NULL, NULL, msg), ELOG_NOTLOG, msg);
	ck_assert_str_eq(msg, "not an elog directory (no settings file)");
	UT_RC(elog_compact("/nonexistent/elog", NULL, NULL, msg), ENOENT, msg);
}
END_TEST

UT_TEST(corrupt_closed_segment_is_reported_and_left_alone)
{
	struct expect ex;
	char path[1300];
	fill(ut_dir, 10, T0, &ex);
	ut_path(path, sizeof path, ut_dir, "00000000000000000000.log");
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "X", 1, SEG_HDR + 40), 1);
	close(fd);
	struct stat before, after;
	ck_assert_int_eq(stat(path, &before), 0);
	UT_RC(elog_compact(ut_dir, NULL, NULL, msg), ELOG_CORRUPT, msg);
	ck_assert_str_eq(msg, "00000000000000000000.log: corrupt record at byte 32");
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_uint_eq(before.st_ino, after.st_ino);
	ck_assert_int_eq(count_files(ut_dir, ".compact"), 0);
}
END_TEST

UT_TEST(malformed_state_is_refused)
{
	struct expect ex;
	char path[1300];
	fill(ut_dir, 3, T0, &ex);
	ut_path(path, sizeof path, ut_dir, FN_COMPACT_STATE);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("elog-compact-state 1\n12 34\nbogus\n", f);
	fclose(f);
	UT_RC(elog_compact(ut_dir, NULL, NULL, msg), ELOG_CORRUPT, msg);
	ck_assert_str_eq(msg, "compact.state: malformed at line 3 (remove it to "
	                      "restart the grace periods of tombstones)");
}
END_TEST

UT_TEST(unreadable_segment_is_an_error)
{
	struct expect ex;
	char path[1300];
	if (geteuid() == 0)
		return; /* root reads anything */
	fill(ut_dir, 10, T0, &ex);
	ut_path(path, sizeof path, ut_dir, "00000000000000000000.log");
	ck_assert_int_eq(chmod(path, 0), 0);
	UT_RC(elog_compact(ut_dir, NULL, NULL, msg), EACCES, msg);
	ck_assert_str_eq(msg, "00000000000000000000.log: Permission denied");
	chmod(path, 0644);
}
END_TEST

/* The log of fill(), created with the options o instead of compact. */
static void fill_with(const char *path, const struct elog_options *o)
{
	elog *w;
	ck_assert_msg(elog_open(&w, path, o) == 0, "open: %s", elog_errmsg(w));
	for (int i = 0; i < 600; i++) {
		char key[16];
		snprintf(key, sizeof key, "run-%d", i % 3);
		append(w, key, i % 50 == 49 ? "" : "an action of the run", T0);
	}
	for (int i = 0; i < 200; i++)
		append(w, NULL, "filler", T0);
	UT_OK(elog_close(w), NULL);
}

/* Every file of dir a has the same bytes in dir b, and b has no other. */
static void same_files(const char *a, const char *b)
{
	DIR *d = opendir(a);
	struct dirent *de;
	char pa[1300], pb[1300];
	int n = 0;
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		size_t la, lb;
		unsigned char *x = ut_read_file(ut_path(pa, sizeof pa, a, de->d_name), &la);
		unsigned char *y = ut_read_file(ut_path(pb, sizeof pb, b, de->d_name), &lb);
		ck_assert_msg(la == lb && memcmp(x, y, la) == 0, "%s differs", de->d_name);
		free(x);
		free(y);
		n++;
	}
	closedir(d);
	ck_assert_int_eq(ut_count_names(b, ""), n);
}

#define REFUSAL \
	"the log's cleanup is delete, so it is not compacted (delete is " \
	"the default, and the policy of every log created before the setting existed)"

/* A new log's cleanup is delete: compaction, a dry run too, is refused
 * with ELOG_NOCOMPACT and touches no file, maint.lock included. */
UT_TEST(delete_log_is_refused_and_left_alone)
{
	struct elog_options o = { .create = 1, .segment_bytes = 4096 };
	struct elog_compact_opts co = { 0 };
	struct elog_compact_result res;
	fill_with(ut_dir, &o);
	struct elog_settings s;
	UT_OK(elog_settings_read(ut_dir, &s, msg), msg);
	ck_assert_int_eq(s.cleanup, ELOG_CLEANUP_DELETE);
	ut_copy_dir(ut_dir, copy_path());
	memset(&res, 0xff, sizeof res);
	UT_RC(elog_compact(ut_dir, NULL, &res, msg), ELOG_NOCOMPACT, msg);
	ck_assert_str_eq(msg, REFUSAL);
	ck_assert_uint_eq(res.records_before, 0); /* the result is cleared */
	co.dry_run = 1;
	co.wait_ms = ELOG_WAIT_FOREVER;
	UT_RC(elog_compact(ut_dir, &co, &res, msg), ELOG_NOCOMPACT, msg);
	ck_assert_str_eq(msg, REFUSAL);
	same_files(ut_dir, copy_path());
	same_files(copy_path(), ut_dir);
	ck_assert_str_eq(elog_strerror(ELOG_NOCOMPACT),
	                 "the log's cleanup policy is delete, not compact");
}
END_TEST

/* ELOG_CLEANUP_DELETE given at creation is the same as nothing given. */
UT_TEST(delete_given_at_creation_is_refused)
{
	struct elog_options o = { .create = 1,
		                  .segment_bytes = 4096,
		                  .cleanup = ELOG_CLEANUP_DELETE };
	fill_with(ut_dir, &o);
	UT_RC(elog_compact(ut_dir, NULL, NULL, msg), ELOG_NOCOMPACT, msg);
	ck_assert_str_eq(msg, REFUSAL);
}
END_TEST

/* A log made before the setting existed has no cleanup line: a delete
 * log, refused until its cleanup is set to compact. */
UT_TEST(log_without_the_key_is_delete_until_set)
{
	struct elog_options o = { .create = 1,
		                  .segment_bytes = 4096,
		                  .cleanup = ELOG_CLEANUP_COMPACT };
	char path[1300];
	fill_with(ut_dir, &o);
	ut_path(path, sizeof path, ut_dir, FN_SETTINGS);
	size_t len;
	char *text = (char *)ut_read_file(path, &len);
	char *line = strstr(text, "cleanup compact\n");
	ck_assert_ptr_nonnull(line);
	memmove(line, line + 16, strlen(line + 16) + 1);
	ut_write_file(path, text, strlen(text));
	free(text);
	UT_RC(elog_compact(ut_dir, NULL, NULL, msg), ELOG_NOCOMPACT, msg);
	ck_assert_str_eq(msg, REFUSAL);

	struct elog_settings set = { .cleanup = ELOG_CLEANUP_COMPACT };
	UT_OK(elog_settings_update(ut_dir, &set, ELOG_SET_CLEANUP, 0, msg), msg);
	struct elog_compact_result res;
	ck_assert_msg(elog_compact(ut_dir, NULL, &res, msg) == 0, "%s", msg);
	ck_assert_uint_lt(res.records_after, res.records_before);
	ck_assert_uint_eq(res.keys, 3);
	verify_clean(ut_dir);
	/* And set back to delete, refused again. */
	set.cleanup = ELOG_CLEANUP_DELETE;
	UT_OK(elog_settings_update(ut_dir, &set, ELOG_SET_CLEANUP, 0, msg), msg);
	UT_RC(elog_compact(ut_dir, NULL, NULL, msg), ELOG_NOCOMPACT, msg);
}
END_TEST

/* 1 when /proc/locks shows process pid blocked waiting for a lock, 0
 * when not, -1 when there is no /proc/locks. */
static int waits_for_a_lock(pid_t pid)
{
	FILE *f = fopen("/proc/locks", "r");
	char line[256];
	int waits = 0;
	long p;
	if (!f)
		return -1;
	/* "1: -> FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" */
	while (fgets(line, sizeof line, f))
		if (strstr(line, "->") && sscanf(line, "%*s -> %*s %*s %*s %ld", &p) == 1 &&
		    p == (long)pid)
			waits = 1;
	fclose(f);
	return waits;
}

/* The cleanup that counts is the one stored when compaction holds
 * maint.lock: a change made while it waited for the lock is obeyed. */
UT_TEST(cleanup_is_read_again_under_the_lock)
{
	struct elog_options o = { .create = 1,
		                  .segment_bytes = 4096,
		                  .cleanup = ELOG_CLEANUP_COMPACT };
	int lockfd;
	if (waits_for_a_lock(getpid()) < 0)
		return; /* no /proc/locks to see the child wait */
	fill_with(ut_dir, &o);
	int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	UT_OK(elog__lock_take_ms(dfd, FN_MAINT, 0, 1, &lockfd, msg), msg);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char m[ELOG_MSG_MAX];
		struct elog_compact_opts co = { 0 };
		/* The lock goes when the parent closes it, not with this
		 * copy of its descriptor. */
		close(lockfd);
		co.wait_ms = ELOG_WAIT_FOREVER;
		int rc = elog_compact(ut_dir, &co, NULL, m);
		_exit(rc == 0 ? 1 : rc != ELOG_NOCOMPACT || strcmp(m, REFUSAL) != 0 ? 2 : 0);
	}
	/* Once the child waits for the lock, it has read cleanup compact. */
	int waited = 0;
	for (int i = 0; i < 500 && !(waited = waits_for_a_lock(pid) == 1); i++)
		usleep(10000);
	ck_assert_msg(waited, "compaction never waited for maint.lock");
	struct elog_settings s;
	UT_OK(elog__settings_load(dfd, &s, msg), msg);
	s.cleanup = ELOG_CLEANUP_DELETE;
	UT_OK(elog__settings_store(dfd, &s), NULL);
	close(lockfd);
	int st = ut_wait_child(pid);
	ck_assert_msg(st != 1, "compaction ran on a log set to delete while it waited");
	ck_assert_msg(st == 0, "compaction failed otherwise than with the refusal");
	close(dfd);
}
END_TEST

/* Interrupt compaction at step n in a child; 1 when it crashed there. */
static int crash_at(const char *path, int n, int64_t now)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char v[16];
		struct elog_compact_opts o = { 0 };
		o.now_ms = now;
		snprintf(v, sizeof v, "%d", n);
		setenv(MAINT_CRASH_ENV, v, 1);
		_exit(elog_compact(path, &o, NULL, NULL) == 0 ? 0 : 1);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	if (WEXITSTATUS(st) == MAINT_CRASH_STATUS)
		return 1;
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	return 0;
}

/* The steps of the first compaction of crash_at_every_step on a copy of
 * copy in ut_dir, plus one: the first step at which it no longer crashes. */
static int compact_last_step(const char *copy)
{
	struct elog_compact_opts o = { 0 };
	o.now_ms = T0 + 1000;
	ut_restore_dir(ut_dir, copy);
	maint_fault_steps();
	setenv(MAINT_CRASH_ENV, "-1", 1);
	UT_OK(elog_compact(ut_dir, &o, NULL, msg), msg);
	unsetenv(MAINT_CRASH_ENV);
	/* Counted from 0 again, as in the children that crash. */
	return (int)maint_fault_steps() + 1;
}

/* Every step of a run that rewrites, empties and merges segments (and, on
 * a second pass, cleans up after the first): the log reads right after the
 * crash, the writer opens it, and the next run leaves it clean.  Under the
 * sanitizers, a sample of the steps (ut_sweep_step()). */
UT_TEST(crash_at_every_step)
{
	struct expect ex;
	char path[1300];
	const char *copy = copy_path();
	fill(copy, 20, T0, &ex);
	/* Leftovers of an earlier interrupted run, for cleanup's steps. */
	ut_touch(ut_path(path, sizeof path, copy, "00000000000000000000.log.compact"));
	ut_touch(ut_path(path, sizeof path, copy, "00000000000000000001.idx"));
	int n, crashed, last = compact_last_step(copy);
	for (n = 1;; n++) {
		if (!ut_sweep_step(n, last))
			continue;
		ut_restore_dir(ut_dir, copy);
		crashed = crash_at(ut_dir, n, T0 + 1000);
		check_log(ut_dir, &ex, 1);
		/* Right after the crash the log verifies: what a crash leaves
		 * is at most a warning (a leftover the next run removes). */
		verify_clean(ut_dir);
		elog *w = open_writer(ut_dir);
		UT_OK(elog_close(w), NULL);
		check_log(ut_dir, &ex, 1);
		/* The next run finishes the job, itself interrupted at
		 * each of its first steps too. */
		if (crash_at(ut_dir, n, T0 + 2000))
			check_log(ut_dir, &ex, 1);
		struct elog_compact_opts o = { 0 };
		o.now_ms = T0 + 3000;
		UT_OK(elog_compact(ut_dir, &o, NULL, msg), msg);
		check_log(ut_dir, &ex, 1);
		ck_assert_int_eq(count_files(ut_dir, ".compact"), 0);
		ck_assert_int_eq(count_files(ut_dir, ".idx"), count_files(ut_dir, ".log"));
		verify_clean(ut_dir);
		if (!crashed)
			break;
	}
	ck_assert_int_eq(n, last); /* it crashed at every step counted */
	ck_assert_int_gt(n, 20);   /* there were many steps to interrupt */
}
END_TEST

/* A merge interrupted between renaming the merged segment into place and
 * removing the segments it absorbed: readers see each record once. */
UT_TEST(reader_sees_merge_leftover_once)
{
	struct expect ex;
	fill(ut_dir, 20, T0, &ex);
	uint64_t before = check_log(ut_dir, &ex, 1);
	(void)before;
	/* Find the step right after the merge's rename: run with crashes
	 * until a state with overlapping segments appears. */
	const char *copy = copy_path();
	ut_copy_dir(ut_dir, copy);
	int seen = 0;
	for (int n = 1; !seen; n++) {
		ut_restore_dir(ut_dir, copy);
		int crashed = crash_at(ut_dir, n, T0 + 1000);
		ck_assert_msg(crashed, "no overlapping state was ever left");
		int dfd = open(ut_dir, O_RDONLY | O_DIRECTORY);
		struct seglist sl;
		UT_OK(elog__seglist_read(dfd, &sl), NULL);
		struct maint m = { .msg = msg, .dfd = dfd };
		UT_OK(elog__settings_load(dfd, &m.set, msg), msg);
		for (size_t i = 0; i + 1 < sl.n; i++) {
			struct seg_info si;
			UT_OK(elog__seg_info_read(&m, sl.base[i], &si), m.msg);
			if (!si.empty && si.last >= sl.base[i + 1])
				seen = 1;
		}
		elog__seglist_free(&sl);
		close(dfd);
		check_log(ut_dir, &ex, 1);
		verify_clean(ut_dir);
	}
}
END_TEST

/* Pass 1 reads the valid part of each segment only (elog(5), Records): a
 * record whose offset is not above the one before stops the run with an
 * error naming the segment and the byte, and nothing changes. */
UT_TEST(compact_stops_at_offsets_out_of_order)
{
	uint64_t a[] = { 0, 2, 1 }, b[] = { 3 }, cur[] = { 4 };
	char want[ELOG_MSG_MAX], p[1200];
	ut_make_settings(ut_dir, 4096, 64);
	ut_seg_create(ut_dir, 0);
	uint64_t size0 = ut_seg_fill(ut_dir, 0, a, 3, 0);
	ut_seg_create(ut_dir, 3);
	ut_seg_fill(ut_dir, 3, b, 1, 0);
	ut_seg_create(ut_dir, 4);
	ut_set_wm(ut_dir, 5, 4, ut_seg_fill(ut_dir, 4, cur, 1, 0));
	ut_cleanup_compact(ut_dir);
	UT_RC(elog_compact(ut_dir, NULL, NULL, msg), ELOG_CORRUPT, msg);
	snprintf(want, sizeof want, "00000000000000000000.log: offset out of order at byte %zu",
	         SEG_HDR + 2 * elog__rec_size(0, 2));
	ck_assert_str_eq(msg, want);
	snprintf(p, sizeof p, "%s", ut_seg_path(ut_dir, 0, SEG_EXT));
	ck_assert_uint_eq(ut_file_size(p), size0);
	ck_assert_int_eq(ut_count_names(ut_dir, MAINT_TMP_EXT), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("compact");
	TCase *tc = ut_tcase("compact");
	tcase_set_timeout(tc, 300);
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
