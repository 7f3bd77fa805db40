/*
 * test_writer.c: opening, creating and locking a log, appending, rolling
 * segments and group commit from many threads (lib/writer.c, lib/create.c,
 * lib/lock.c).
 */
#include <pthread.h>
#include <sys/file.h>

#include "unit.h"

static elog *open_opt(const char *dir, const struct elog_options *o, int want)
{
	elog *w = NULL;
	int rc = elog_open(&w, dir, o);
	ck_assert_msg(rc == want, "elog_open: %d (%s), expected %d", rc, elog_errmsg(w), want);
	return w;
}

/* Every record of the log, in order: offsets and copies of the values. */
struct all {
	uint64_t *off;
	char **val;
	size_t n;
};

static struct all read_all(const char *dir)
{
	struct all a = { 0 };
	size_t cap = 0;
	struct elog_record rec;
	elog_reader *r = ut_open_reader(dir);
	int rc;
	while ((rc = elog_reader_next(r, &rec)) == 0) {
		if (a.n == cap) {
			cap = cap ? 2 * cap : 256;
			a.off = realloc(a.off, cap * sizeof *a.off);
			a.val = realloc(a.val, cap * sizeof *a.val);
		}
		a.off[a.n] = rec.offset;
		a.val[a.n] = strndup(rec.value, rec.value_len);
		a.n++;
	}
	ck_assert_msg(rc == ELOG_END, "%d %s", rc, elog_reader_errmsg(r));
	elog_reader_close(r);
	return a;
}

static void all_free(struct all *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->val[i]);
	free(a->val);
	free(a->off);
}

/* ---- opening and creating ---- */

UT_TEST(create_makes_a_log)
{
	struct elog_options o = { .create = 1, .segment_bytes = 8192, .index_interval = 128 };
	elog *w = open_opt(ut_dir, &o, 0);
	char p[1200];
	static const char *files[] = { "settings", "LOCK", "watermark", "00000000000000000000.log",
		                       "00000000000000000000.idx" };
	for (size_t i = 0; i < 5; i++)
		ck_assert_msg(ut_exists(ut_path(p, sizeof p, ut_dir, files[i])), "%s", files[i]);
	ck_assert_uint_eq(elog_next_offset(w), 0);
	ck_assert_uint_eq(elog_durable_end(w), 0);
	const struct elog_settings *s = elog_settings_of(w);
	ck_assert_uint_eq(s->segment_bytes, 8192);
	ck_assert_uint_eq(s->index_interval, 128);
	ck_assert_uint_eq(strlen(s->id), 32);
	/* LOCK holds the state of the tail, with the last holder's pid. */
	size_t len;
	unsigned char *lock = ut_read_file(ut_path(p, sizeof p, ut_dir, "LOCK"), &len);
	struct lock_state ls;
	ck_assert_int_eq(elog__lock_state_decode((char *)lock, len, &ls), 0);
	ck_assert_uint_eq(ls.pid, (unsigned)getpid());
	ck_assert_uint_eq(ls.busy, 0);
	free(lock);
	ck_assert_int_eq(elog_close(w), 0);
	/* The empty log has just its header. */
	ck_assert_uint_eq(ut_file_size(ut_seg_path(ut_dir, 0, SEG_EXT)), SEG_HDR);
}
END_TEST

UT_TEST(reopen_keeps_settings_and_offsets)
{
	elog *w = ut_open_writer(ut_dir, 8192, 128);
	char id[33];
	snprintf(id, sizeof id, "%s", elog_settings_of(w)->id);
	for (int i = 0; i < 10; i++)
		ck_assert_uint_eq(ut_append(w, NULL, "x"), (uint64_t)i);
	ck_assert_int_eq(elog_close(w), 0);

	/* Creation settings given again must be the log's own. */
	struct elog_options o = { .create = 1, .segment_bytes = 65536, .index_interval = 4096 };
	elog_close(open_opt(ut_dir, &o, ELOG_SETTING));
	o.segment_bytes = 8192;
	o.index_interval = 128;
	w = open_opt(ut_dir, &o, 0);
	ck_assert_uint_eq(elog_settings_of(w)->segment_bytes, 8192);
	ck_assert_uint_eq(elog_settings_of(w)->index_interval, 128);
	ck_assert_str_eq(elog_settings_of(w)->id, id);
	ck_assert_uint_eq(elog_next_offset(w), 10);
	ck_assert_uint_eq(elog_durable_end(w), 10);
	ck_assert_uint_eq(ut_append(w, NULL, "y"), 10);
	ck_assert_int_eq(elog_close(w), 0);

	struct elog_settings s;
	ck_assert_int_eq(elog_settings_read(ut_dir, &s, NULL), 0);
	ck_assert_str_eq(s.id, id);
}
END_TEST

UT_TEST(open_without_create_missing_dir)
{
	elog *w = open_opt(ut_dir, NULL, ENOENT);
	elog_close(w);
	ck_assert_int_eq(ut_exists(ut_dir), 0);
	/* With create, the parent must exist. */
	char p[1200];
	struct elog_options o = { .create = 1 };
	w = open_opt(ut_path(p, sizeof p, ut_dir, "sub"), &o, ENOENT);
	elog_close(w);
}
END_TEST

UT_TEST(open_without_create_non_log_dir)
{
	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	struct elog_options o = { 0 };
	elog *w = open_opt(ut_dir, &o, ELOG_NOTLOG);
	ck_assert_str_eq(elog_errmsg(w), "not an elog directory (no settings file)");
	elog_close(w);
	/* A reader says the same. */
	elog_reader *r;
	ck_assert_int_eq(elog_reader_open(&r, ut_dir), ELOG_NOTLOG);
	elog_reader_close(r);
}
END_TEST

UT_TEST(create_refuses_foreign_dir)
{
	char p[1200];
	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	ut_write_file(ut_path(p, sizeof p, ut_dir, "hello.txt"), "precious", 8);
	struct elog_options o = { .create = 1 };
	elog *w = open_opt(ut_dir, &o, ELOG_NOTLOG);
	ck_assert_str_eq(elog_errmsg(w),
	                 "not an elog directory and not empty (it holds hello.txt)");
	elog_close(w);
	ck_assert_int_eq(ut_exists(ut_path(p, sizeof p, ut_dir, "settings")), 0);
	ck_assert_int_eq(ut_exists(ut_seg_path(ut_dir, 0, SEG_EXT)), 0);
	unsigned char *c = ut_read_file(ut_path(p, sizeof p, ut_dir, "hello.txt"), NULL);
	ck_assert_str_eq((char *)c, "precious");
	free(c);
}
END_TEST

/* A creation interrupted after the first segment but before the settings
 * (which make the directory a log) is simply done again. */
UT_TEST(create_redoes_interrupted_creation)
{
	char p[1200];
	ck_assert_int_eq(mkdir(ut_dir, 0777), 0);
	ut_seg_create(ut_dir, 0);
	ut_write_file(ut_path(p, sizeof p, ut_dir, "LOCK"), "", 0);
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ck_assert_uint_eq(ut_append(w, NULL, "a"), 0);
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

UT_TEST(create_refuses_bad_options)
{
	struct elog_options o = { .create = 1, .segment_bytes = 4095 };
	elog *w = open_opt(ut_dir, &o, ELOG_INVALID);
	ck_assert_ptr_nonnull(strstr(elog_errmsg(w), "segment size"));
	elog_close(w);
	struct elog_options o2 = { .create = 1, .index_interval = 63 };
	w = open_opt(ut_dir, &o2, ELOG_INVALID);
	ck_assert_ptr_nonnull(strstr(elog_errmsg(w), "index interval"));
	elog_close(w);
	char p[1200];
	ck_assert_int_eq(ut_exists(ut_path(p, sizeof p, ut_dir, "settings")), 0);
}
END_TEST

UT_TEST(close_null)
{
	ck_assert_int_eq(elog_close(NULL), 0);
}
END_TEST

/* ---- many writers ---- */

#define HANDLES 4
#define EACH 300

struct handle_run {
	elog *w;
	int id;
	uint64_t off[EACH];
	int err;
};

/* One handle of several in one process (each its own open file
 * description of LOCK, so they contend as processes do), appending and
 * syncing in small batches. */
static void *handle_work(void *arg)
{
	struct handle_run *h = arg;
	char v[64];
	for (int i = 0; i < EACH && !h->err; i++) {
		snprintf(v, sizeof v, "h%d-%04d-%s", h->id, i, "some bytes to fill segments");
		struct elog_record r = ut_rec(0, ELOG_TS_NOW, 0, NULL, v);
		h->off[i] = UINT64_MAX;
		h->err = elog_append(h->w, &r, &h->off[i]);
		if (!h->err && (i % (h->id + 1) == 0 || i == EACH - 1))
			h->err = elog_sync(h->w);
	}
	return NULL;
}

UT_TEST(handles_take_turns_with_dense_offsets)
{
	elog *w0 = ut_open_writer(ut_dir, 4096, 256); /* small segments: rolls */
	ck_assert_int_eq(elog_close(w0), 0);
	struct handle_run h[HANDLES];
	pthread_t t[HANDLES];
	for (int i = 0; i < HANDLES; i++) {
		memset(&h[i], 0, sizeof h[i]);
		h[i].id = i;
		h[i].w = open_opt(ut_dir, NULL, 0);
	}
	for (int i = 0; i < HANDLES; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, handle_work, &h[i]), 0);
	for (int i = 0; i < HANDLES; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < HANDLES; i++) {
		ck_assert_msg(h[i].err == 0, "handle %d: %d %s", i, h[i].err, elog_errmsg(h[i].w));
		ck_assert_int_eq(elog_close(h[i].w), 0);
	}
	/* Every offset given out once, 0..N-1, each reading back its own
	 * value; each handle's offsets increase in its own order. */
	struct all a = read_all(ut_dir);
	ck_assert_uint_eq(a.n, HANDLES * EACH);
	for (size_t k = 0; k < a.n; k++)
		ck_assert_uint_eq(a.off[k], k);
	for (int i = 0; i < HANDLES; i++)
		for (int j = 0; j < EACH; j++) {
			char v[64];
			snprintf(v, sizeof v, "h%d-%04d-%s", i, j, "some bytes to fill segments");
			ck_assert_uint_lt(h[i].off[j], a.n);
			ck_assert_str_eq(a.val[h[i].off[j]], v);
			if (j > 0)
				ck_assert_uint_gt(h[i].off[j], h[i].off[j - 1]);
		}
	all_free(&a);
	struct elog_verify_result res;
	ck_assert_int_eq(elog_verify(ut_dir, NULL, &res, NULL), 0);
	ck_assert_uint_eq(res.damage, 0);
}
END_TEST

/* A handle that writes batch after batch, without a pause, does not shut
 * out another that waits for the lock: each release wakes a waiter (a
 * writer that polls instead lets the announced waiters go first). */
struct hammer {
	elog *w;
	volatile int stop;
	unsigned long batches;
	int err;
};

static void *hammer_work(void *arg)
{
	struct hammer *h = arg;
	while (!h->stop && !h->err) {
		struct elog_record r = ut_rec(0, ELOG_TS_NOW, 0, NULL, "hammer");
		h->err = elog_append(h->w, &r, NULL);
		if (!h->err)
			h->err = elog_sync(h->w);
		h->batches++;
	}
	return NULL;
}

UT_TEST(a_busy_writer_does_not_shut_out_a_waiting_one)
{
	struct elog_options o = { .create = 1, .wait_ms = 20000 };
	struct hammer h = { open_opt(ut_dir, &o, 0), 0, 0, 0 };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, hammer_work, &h), 0);
	elog *w = open_opt(ut_dir, &o, 0);
	for (int i = 0; i < 20; i++) {
		struct elog_record r = ut_rec(0, ELOG_TS_NOW, 0, NULL, "waiter");
		ck_assert_int_eq(elog_append(w, &r, NULL), 0);
		int rc = elog_sync(w);
		ck_assert_msg(rc == 0, "sync %d: %d %s", i, rc, elog_errmsg(w));
	}
	h.stop = 1;
	pthread_join(t, NULL);
	ck_assert_int_eq(h.err, 0);
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert_int_eq(elog_close(h.w), 0);
	struct all a = read_all(ut_dir);
	size_t waiter = 0;
	for (size_t k = 0; k < a.n; k++) {
		ck_assert_uint_eq(a.off[k], k);
		waiter += strcmp(a.val[k], "waiter") == 0;
	}
	ck_assert_uint_eq(waiter, 20);
	all_free(&a);
}
END_TEST

/* A handle that last wrote before another handle rolled segments finds
 * the new tail and appends there, with the next offset. */
UT_TEST(handle_follows_another_handles_rolls)
{
	elog *a = ut_open_writer(ut_dir, 4096, 256);
	ck_assert_uint_eq(ut_append(a, NULL, "a0"), 0);
	ck_assert_int_eq(elog_sync(a), 0);
	elog *b = open_opt(ut_dir, NULL, 0);
	char v[200];
	memset(v, 'b', sizeof v - 1);
	v[sizeof v - 1] = 0;
	for (int i = 0; i < 100; i++)
		ut_append(b, NULL, v);
	ck_assert_int_eq(elog_sync(b), 0);
	ck_assert_uint_eq(elog_durable_end(b), 101);
	uint64_t off = UINT64_MAX;
	struct elog_record r = ut_rec(0, ELOG_TS_NOW, 0, NULL, "a1");
	ck_assert_int_eq(elog_append(a, &r, &off), 0);
	ck_assert_int_eq(elog_sync(a), 0);
	ck_assert_uint_eq(off, 101);
	ck_assert_uint_eq(elog_durable_end(a), 102);
	ck_assert_int_eq(elog_close(a), 0);
	ck_assert_int_eq(elog_close(b), 0);
	struct all all = read_all(ut_dir);
	ck_assert_uint_eq(all.n, 102);
	ck_assert_str_eq(all.val[101], "a1");
	all_free(&all);
}
END_TEST

/* A writer that died in the middle of a batch leaves LOCK saying "busy"
 * and bytes past the durable end: the next handle to take the lock,
 * though it knew the log, recovers the tail before it writes. */
UT_TEST(writer_dead_mid_batch_is_recovered_by_the_next)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ck_assert_uint_eq(ut_append(w, NULL, "one"), 0);
	ck_assert_int_eq(elog_sync(w), 0);
	char p[1200];
	int fd = open(ut_path(p, sizeof p, ut_dir, "LOCK"), O_RDWR);
	struct lock_state ls;
	ck_assert_int_eq(elog__lock_state_read(fd, &ls), 0);
	ck_assert(ls.valid && !ls.busy);
	ls.gen++;
	ls.busy = 1;
	ck_assert_int_eq(elog__lock_state_write(fd, &ls), 0);
	close(fd);
	ut_append_file(ut_seg_path(ut_dir, 0, SEG_EXT), "half a record", 13);
	uint64_t off = UINT64_MAX;
	struct elog_record r = ut_rec(0, ELOG_TS_NOW, 0, NULL, "two");
	ck_assert_int_eq(elog_append(w, &r, &off), 0);
	ck_assert_int_eq(elog_sync(w), 0);
	ck_assert_uint_eq(off, 1);
	ck_assert_int_eq(elog_close(w), 0);
	struct all a = read_all(ut_dir);
	ck_assert_uint_eq(a.n, 2);
	ck_assert_str_eq(a.val[1], "two");
	all_free(&a);
	struct elog_verify_result res;
	ck_assert_int_eq(elog_verify(ut_dir, NULL, &res, NULL), 0);
	ck_assert_uint_eq(res.damage, 0);
	ck_assert_uint_eq(res.warnings, 0);
}
END_TEST

/* The same bytes past the durable end with LOCK's state clean and known
 * to the handle cannot come from a writer (it marks LOCK busy first);
 * with a state from another boot they are a crash's leftovers: cut. */
UT_TEST(state_of_another_boot_means_recovery)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ck_assert_uint_eq(ut_append(w, NULL, "one"), 0);
	ck_assert_int_eq(elog_close(w), 0);
	char p[1200];
	int fd = open(ut_path(p, sizeof p, ut_dir, "LOCK"), O_RDWR);
	struct lock_state ls;
	ck_assert_int_eq(elog__lock_state_read(fd, &ls), 0);
	ls.boot[0] ^= 1;
	ck_assert_int_eq(elog__lock_state_write(fd, &ls), 0);
	close(fd);
	ut_append_file(ut_seg_path(ut_dir, 0, SEG_EXT), "torn", 4);
	w = ut_open_writer(ut_dir, 0, 0);
	ck_assert_uint_eq(ut_append(w, NULL, "two"), 1);
	ck_assert_int_eq(elog_close(w), 0);
	struct all a = read_all(ut_dir);
	ck_assert_uint_eq(a.n, 2);
	all_free(&a);
}
END_TEST

/* LOCK's index builder carries the times the next entry needs (ixmin,
 * ixlo, ixhi); a state whose times disagree with the records after the
 * last entry is not trusted at open: the writer recovers, and the entries
 * it writes next are right (elog-verify holds them against the records). */
UT_TEST(state_with_wrong_index_times_means_recovery)
{
	elog *w = ut_open_writer(ut_dir, 0, 64);
	for (int i = 0; i < 20; i++) {
		struct elog_record r = ut_rec(0, 5000 - 100 * i, 0, NULL, "a value of some length");
		ck_assert_int_eq(elog_append(w, &r, NULL), 0);
	}
	ck_assert_int_eq(elog_close(w), 0);
	char p[1200];
	int fd = open(ut_path(p, sizeof p, ut_dir, "LOCK"), O_RDWR);
	struct lock_state ls;
	ck_assert_int_eq(elog__lock_state_read(fd, &ls), 0);
	ck_assert(ls.valid && ls.ixany);
	ck_assert_int_eq(ls.ixts, 5000);
	ck_assert_int_eq(ls.ixmin, 5000 - 100 * 19);
	ck_assert_int_le(ls.ixlo, ls.ixhi);
	ls.ixlo -= 1; /* a time no record after the last entry has */
	ck_assert_int_eq(elog__lock_state_write(fd, &ls), 0);
	close(fd);
	w = ut_open_writer(ut_dir, 0, 0);
	for (int i = 0; i < 20; i++) {
		struct elog_record r = ut_rec(0, 9000 + i, 0, NULL, "a value of some length");
		ck_assert_int_eq(elog_append(w, &r, NULL), 0);
	}
	ck_assert_int_eq(elog_close(w), 0);
	struct elog_verify_result res;
	ck_assert_int_eq(elog_verify(ut_dir, NULL, &res, NULL), 0);
	ck_assert_uint_eq(res.damage, 0);
	ck_assert_uint_eq(res.warnings, 0);
}
END_TEST

/* A clean state is held at open against the records after the index's
 * last entry by the one tail rule recovery and verify use
 * (elog__seg_tail_next()): a record there that does not check (run 0) or
 * whose offset does not follow the one before (run 1, written with a
 * right crc and its own time) is not appended after; recovery refuses it,
 * below the watermark. */
UT_LOOP_TEST(state_over_a_bad_tail_is_not_trusted, 0, 2)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ut_append(w, NULL, "one");
	ut_append(w, NULL, "two");
	ut_append(w, NULL, "three");
	ck_assert_int_eq(elog_close(w), 0);
	const char *seg = ut_seg_path(ut_dir, 0, SEG_EXT);
	size_t len, n = elog__rec_size(0, 5), got;
	unsigned char *file = ut_read_file(seg, &len);
	struct elog_record last;
	ck_assert_int_eq(elog__rec_decode(file + len - n, n, &last, &got), 0);
	ck_assert_uint_eq(last.offset, 2);
	last.offset = 1;
	if (_i == 0) {
		ut_flip_bit(seg, len - 1, 0);
	} else {
		unsigned char *again = ut_encode(&last, &got);
		ut_write_at(seg, len - n, again, got);
		free(again);
	}
	free(file);
	w = NULL;
	UT_RC(elog_open(&w, ut_dir, NULL), ELOG_CORRUPT, w);
	ck_assert_ptr_nonnull(strstr(elog_errmsg(w), "damaged record"));
	elog_close(w);
	ck_assert_uint_eq(ut_file_size(seg), len);
}
END_TEST

/* A compressed log written by two handles: one trains the dictionary, the
 * other adopts it; every value reads back. */
UT_TEST(compressed_log_with_two_handles)
{
	if (!elog_have_zstd())
		return;
	struct elog_options o = { .create = 1,
		                  .segment_bytes = 64 * 1024,
		                  .compression = ELOG_COMPRESS_ZSTD };
	elog *a = open_opt(ut_dir, &o, 0);
	elog *b = open_opt(ut_dir, NULL, 0);
	char v[128];
	for (int i = 0; i < 3000; i++) {
		snprintf(v, sizeof v, "{\"event\":\"click\",\"user\":%d,\"page\":\"/p/%d\"}",
		         i % 97, i);
		ut_append(i % 2 ? b : a, NULL, v);
		if (i % 50 == 49)
			ck_assert_int_eq(elog_sync(i % 100 == 49 ? a : b), 0);
	}
	ck_assert_int_eq(elog_close(a), 0);
	ck_assert_int_eq(elog_close(b), 0);
	char p[1200];
	ck_assert(ut_exists(ut_path(p, sizeof p, ut_dir, "dict.1")));
	ck_assert(!ut_exists(ut_path(p, sizeof p, ut_dir, "dict.2")));
	struct all all = read_all(ut_dir);
	ck_assert_uint_eq(all.n, 3000);
	all_free(&all);
	struct elog_verify_result res;
	ck_assert_int_eq(elog_verify(ut_dir, NULL, &res, NULL), 0);
	ck_assert_uint_eq(res.damage, 0);
}
END_TEST

/* ---- the lock ---- */

UT_TEST(second_writer_in_another_process_appends_too)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ck_assert_int_eq(elog_close(w), 0);
	int go[2], done[2];
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(done), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* The holder: open, say so, wait to be told to go. */
		elog *cw;
		char c = 0;
		if (elog_open(&cw, ut_dir, NULL) != 0)
			_exit(2);
		if (write(go[1], "x", 1) != 1 || read(done[0], &c, 1) != 1)
			_exit(3);
		_exit(elog_close(cw) == 0 ? 0 : 4);
	}
	char c;
	ck_assert_int_eq(read(go[0], &c, 1), 1);
	/* Both are open; each appends in turn. */
	w = open_opt(ut_dir, NULL, 0);
	ck_assert_uint_eq(ut_append(w, NULL, "second"), 0);
	ck_assert_int_eq(elog_sync(w), 0);
	elog_close(w);
	ck_assert_int_eq(write(done[1], "x", 1), 1);
	ck_assert_int_eq(ut_wait_child(pid), 0);
	/* The holder is gone, and so is its lock. */
	w = open_opt(ut_dir, NULL, 0);
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

/* A writer killed outright leaves no stale lock: flock dies with it. */
UT_TEST(killed_writer_leaves_no_lock)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ck_assert_int_eq(elog_close(w), 0);
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		elog *cw;
		if (elog_open(&cw, ut_dir, NULL) != 0)
			_exit(2);
		if (write(go[1], "x", 1) != 1)
			_exit(3);
		pause();
		_exit(0);
	}
	char c;
	ck_assert_int_eq(read(go[0], &c, 1), 1);
	kill(pid, SIGKILL);
	ck_assert_int_eq(ut_wait_child(pid), -1);
	w = open_opt(ut_dir, NULL, 0);
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

/* Someone else holding LOCK for longer than a writer waits, without a
 * state in it, then with one that names its pid. */
/* An exclusive handle keeps every other writer out for its life, and is
 * refused while another writer is open; readers are not kept out. */
UT_TEST(exclusive_writer_keeps_others_out)
{
	struct elog_options ex = { .create = 1, .exclusive = 1 };
	elog *a = open_opt(ut_dir, &ex, 0);
	ck_assert_uint_eq(ut_append(a, NULL, "a"), 0);
	char want[128];
	snprintf(want, sizeof want,
	         "an exclusive writer has the log open (pid %ld); wait for it to close "
	         "(--wait), or stop it",
	         (long)getpid());
	elog *b = open_opt(ut_dir, NULL, ELOG_LOCKED);
	ck_assert_str_eq(elog_errmsg(b), want);
	elog_close(b);
	b = open_opt(ut_dir, &ex, ELOG_LOCKED);
	elog_close(b);
	elog_reader *r = ut_open_reader(ut_dir);
	elog_reader_close(r);
	ck_assert_int_eq(elog_close(a), 0);
	/* Closed: others write again; and an exclusive open waits for none. */
	a = open_opt(ut_dir, NULL, 0);
	snprintf(want, sizeof want,
	         "another writer has the log open (pid %ld): an exclusive writer needs it to "
	         "itself; wait for it (--wait) or stop it",
	         (long)getpid());
	b = open_opt(ut_dir, &ex, ELOG_LOCKED);
	ck_assert_str_eq(elog_errmsg(b), want);
	elog_close(b);
	ck_assert_uint_eq(ut_append(a, NULL, "b"), 1);
	ck_assert_int_eq(elog_close(a), 0);
}
END_TEST

/* Exclusivity lives in LOCK: "writers" removed, replaced by another file
 * or emptied lets no second writer in beside an exclusive one; a writer
 * told to wait waits for the exclusive one to close. */
static void *close_later(void *arg)
{
	struct timespec ts = { 0, 200 * 1000000 };
	nanosleep(&ts, NULL);
	elog_close(arg);
	return NULL;
}

UT_TEST(exclusive_writer_lives_in_LOCK)
{
	char p[1200], q[1200];
	struct elog_options ex = { .create = 1, .exclusive = 1 };
	elog *a = open_opt(ut_dir, &ex, 0);
	ut_path(p, sizeof p, ut_dir, "writers");
	ck_assert_int_eq(unlink(p), 0);
	elog *b = open_opt(ut_dir, NULL, ELOG_LOCKED);
	elog_close(b);
	ut_write_file(ut_path(q, sizeof q, ut_dir, "writers.new"), "", 0);
	ck_assert_int_eq(rename(q, p), 0);
	b = open_opt(ut_dir, NULL, ELOG_LOCKED);
	elog_close(b);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, close_later, a), 0);
	struct elog_options wait = { .wait_ms = 60000 };
	b = open_opt(ut_dir, &wait, 0);
	pthread_join(t, NULL);
	ck_assert_uint_eq(ut_append(b, NULL, "after"), 0);
	ck_assert_int_eq(elog_close(b), 0);
}
END_TEST

UT_TEST(locked_past_the_wait)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ck_assert_int_eq(elog_close(w), 0);
	char p[1200];
	ut_write_file(ut_path(p, sizeof p, ut_dir, "LOCK"), "", 0);
	int fd = open(p, O_RDWR);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	struct elog_options o = { .wait_ms = 50 };
	w = open_opt(ut_dir, &o, ELOG_LOCKED);
	ck_assert_str_eq(elog_errmsg(w),
	                 "timed out after 50 ms waiting for LOCK, held by another process");
	elog_close(w);
	struct lock_state ls = { .valid = 1, .epoch = 9, .gen = 7, .pid = 4242 };
	ck_assert_int_eq(elog__lock_state_write(fd, &ls), 0);
	w = open_opt(ut_dir, &o, ELOG_LOCKED);
	ck_assert_str_eq(elog_errmsg(w), "timed out after 50 ms waiting for another writer "
	                                 "(pid 4242 holds or last held LOCK)");
	elog_close(w);
	close(fd);
}
END_TEST

/* A handle that timed out in elog_sync() wrote nothing of its batch, says
 * so, and takes no more; the records of another handle are untouched. */
UT_TEST(sync_timed_out_writes_nothing)
{
	struct elog_options o = { .create = 1, .wait_ms = 50 };
	elog *w = open_opt(ut_dir, &o, 0);
	ck_assert_uint_eq(ut_append(w, NULL, "kept"), 0);
	ck_assert_int_eq(elog_sync(w), 0);
	ut_append(w, NULL, "not written");
	char p[1200];
	int fd = open(ut_path(p, sizeof p, ut_dir, "LOCK"), O_RDWR);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(elog_sync(w), ELOG_LOCKED);
	close(fd);
	ck_assert_int_eq(elog_sync(w), ELOG_FAILED);
	ck_assert_int_eq(elog_close(w), ELOG_FAILED);
	struct all a = read_all(ut_dir);
	ck_assert_uint_eq(a.n, 1);
	ck_assert_str_eq(a.val[0], "kept");
	all_free(&a);
}
END_TEST

/* ---- appending and durability ---- */

UT_TEST(append_is_not_durable_until_sync)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	uint64_t a = ut_append(w, "k", "one"), b = ut_append(w, NULL, "two");
	ck_assert_uint_eq(a, 0);
	ck_assert_uint_eq(b, 1);
	ck_assert_uint_eq(elog_next_offset(w), 2);
	ck_assert_uint_eq(elog_durable_end(w), 0);
	ck_assert_uint_eq(ut_get_wm(ut_dir).durable_end, 0);
	struct all r = read_all(ut_dir);
	ck_assert_uint_eq(r.n, 0);
	all_free(&r);

	/* Syncing the first covers the whole batch. */
	ck_assert_int_eq(elog_sync(w), 0);
	ck_assert_uint_eq(elog_durable_end(w), 2);
	struct watermark wm = ut_get_wm(ut_dir);
	ck_assert_uint_eq(wm.durable_end, 2);
	ck_assert_uint_eq(wm.segment_base, 0);
	ck_assert_uint_eq(wm.segment_bytes, ut_file_size(ut_seg_path(ut_dir, 0, SEG_EXT)));
	ck_assert_uint_eq(wm.segment_bytes, SEG_HDR + elog__rec_size(1, 3) + elog__rec_size(0, 3));
	r = read_all(ut_dir);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.val[0], "one");
	ck_assert_str_eq(r.val[1], "two");
	all_free(&r);
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

UT_TEST(sync_beyond_next_and_on_empty_log)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	ck_assert_int_eq(elog_sync(w), 0); /* nothing appended */
	ck_assert_int_eq(elog_sync(w), 0);
	ck_assert_uint_eq(elog_durable_end(w), 0);
	ut_append(w, NULL, "a");
	ut_append(w, NULL, "b");
	ck_assert_int_eq(elog_sync(w), 0); /* past the end: all */
	ck_assert_uint_eq(elog_durable_end(w), 2);
	ck_assert_int_eq(elog_sync(w), 0); /* already durable */
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

UT_TEST(close_makes_durable)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	for (int i = 0; i < 5; i++)
		ut_append(w, NULL, "pending");
	ck_assert_int_eq(elog_close(w), 0);
	struct all r = read_all(ut_dir);
	ck_assert_uint_eq(r.n, 5);
	all_free(&r);
}
END_TEST

UT_TEST(full_buffer_flushes_itself)
{
	struct elog_options o = { .create = 1, .batch_bytes = 100 };
	elog *w = open_opt(ut_dir, &o, 0);
	char v[80];
	memset(v, 'z', sizeof v - 1);
	v[sizeof v - 1] = '\0';
	ut_append(w, NULL, v); /* 107 bytes: over the batch at once */
	ck_assert_uint_eq(elog_durable_end(w), 1);
	ck_assert_uint_eq(ut_get_wm(ut_dir).durable_end, 1);
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

UT_TEST(timestamps_stamped_or_kept)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t before = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	struct elog_record a = ut_rec(0, ELOG_TS_NOW, 3, NULL, "now");
	struct elog_record b = ut_rec(0, -12345, 4, "k", "given");
	uint64_t oa = UINT64_MAX, ob = UINT64_MAX;
	ck_assert_int_eq(elog_append(w, &a, &oa), 0);
	ck_assert_int_eq(elog_append(w, &b, &ob), 0);
	/* The record handed in is left as it is; offsets come with the sync. */
	ck_assert_int_eq(a.ts_ms, ELOG_TS_NOW);
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert_uint_eq(oa, 0);
	ck_assert_uint_eq(ob, 1);

	elog_reader *r = ut_open_reader(ut_dir);
	struct elog_record rec;
	ck_assert_int_eq(elog_reader_next(r, &rec), 0);
	ck_assert_int_ge(rec.ts_ms, before);
	ck_assert_int_le(rec.ts_ms, before + 60000);
	ck_assert_uint_eq(rec.schema, 3);
	ck_assert_uint_eq(rec.key_len, 0);
	ck_assert_int_eq(elog_reader_next(r, &rec), 0);
	ck_assert_int_eq(rec.ts_ms, -12345);
	ck_assert_uint_eq(rec.schema, 4);
	ck_assert_uint_eq(rec.key_len, 1);
	ck_assert_mem_eq(rec.key, "k", 1);
	elog_reader_close(r);
}
END_TEST

UT_TEST(too_big_is_refused)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	size_t max_value = ELOG_MAX_RECORD - REC_FIXED;
	char *big = calloc(1, ELOG_MAX_RECORD + 2);
	ck_assert_ptr_nonnull(big);
	struct elog_record r = { 0, ELOG_TS_NOW, 0, NULL, 0, big, max_value + 1 };
	ck_assert_int_eq(elog_append(w, &r, NULL), ELOG_TOOBIG);
	ck_assert_ptr_nonnull(strstr(elog_errmsg(w), "larger than the maximum"));
	/* Key and value count together. */
	struct elog_record kv = { 0, ELOG_TS_NOW, 0, big, 10, big, max_value - 9 };
	ck_assert_int_eq(elog_append(w, &kv, NULL), ELOG_TOOBIG);
	struct elog_record k = { 0, ELOG_TS_NOW, 0, big, ELOG_MAX_KEY + 1, big, 1 };
	ck_assert_int_eq(elog_append(w, &k, NULL), ELOG_TOOBIG);
	ck_assert_uint_eq(elog_next_offset(w), 0);

	/* The writer is not broken by a refusal; the maximum itself fits. */
	big[0] = 'A';
	big[max_value - 1] = 'Z';
	struct elog_record ok = { 0, ELOG_TS_NOW, 0, NULL, 0, big, max_value };
	uint64_t off = UINT64_MAX;
	ck_assert_int_eq(elog_append(w, &ok, &off), 0);
	ck_assert_int_eq(elog_sync(w), 0);
	ck_assert_uint_eq(off, 0);
	ck_assert_int_eq(elog_close(w), 0);

	elog_reader *rd = ut_open_reader(ut_dir);
	struct elog_record rec;
	ck_assert_int_eq(elog_reader_next(rd, &rec), 0);
	ck_assert_uint_eq(rec.value_len, max_value);
	ck_assert_mem_eq(rec.value, big, max_value);
	ck_assert_int_eq(elog_reader_next(rd, &rec), ELOG_END);
	elog_reader_close(rd);
	free(big);
}
END_TEST

UT_TEST(null_value_is_invalid)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	struct elog_record r = { 0, ELOG_TS_NOW, 0, NULL, 0, NULL, 5 };
	ck_assert_int_eq(elog_append(w, &r, NULL), ELOG_INVALID);
	struct elog_record k = { 0, ELOG_TS_NOW, 0, NULL, 3, "abc", 3 };
	ck_assert_int_eq(elog_append(w, &k, NULL), ELOG_INVALID);
	/* An empty value may be NULL: a tombstone. */
	struct elog_record t = { 0, ELOG_TS_NOW, 0, "key", 3, NULL, 0 };
	ck_assert_int_eq(elog_append(w, &t, NULL), 0);
	ck_assert_int_eq(elog_close(w), 0);
}
END_TEST

/* ---- segments ---- */

/* The segments of dir, checked against their records: each file's name is
 * its first record's offset (no compaction here), every record lies below
 * the next segment's base, and no segment but one holding a single record
 * exceeds seg_bytes. */
static size_t check_segments(const char *dir, uint64_t seg_bytes, uint64_t *bases, size_t max,
                             uint64_t *records)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	struct seglist sl;
	ck_assert_int_eq(elog__seglist_read(dfd, &sl), 0);
	close(dfd);
	ck_assert_uint_le(sl.n, max);
	uint64_t expect = 0;
	for (size_t i = 0; i < sl.n; i++) {
		size_t len, got;
		unsigned char *seg = ut_read_file(ut_seg_path(dir, sl.base[i], SEG_EXT), &len);
		ck_assert_int_eq(elog__seg_header_verify(seg, SEG_HDR, sl.base[i], NULL, NULL), 0);
		uint64_t pos = SEG_HDR, n = 0;
		/* Every closed segment ends with its seal, naming the next. */
		if (i + 1 < sl.n) {
			struct seal seal;
			ck_assert_uint_ge(len, SEG_HDR + SEAL_SIZE);
			ck_assert_int_eq(elog__seal_decode(seg + len - SEAL_SIZE, sl.base[i],
			                                   len - SEAL_SIZE, &seal),
			                 0);
			ck_assert_uint_eq(seal.next, sl.base[i + 1]);
			ck_assert_uint_eq(seal.end, sl.base[i + 1]);
			len -= SEAL_SIZE;
		}
		while (pos < len) {
			struct elog_record r;
			ck_assert_int_eq(elog__rec_decode(seg + pos, len - pos, &r, &got), 0);
			ck_assert_uint_eq(r.offset, expect);
			if (n == 0)
				ck_assert_uint_eq(r.offset, sl.base[i]);
			if (i + 1 < sl.n)
				ck_assert_uint_lt(r.offset, sl.base[i + 1]);
			expect++;
			n++;
			pos += got;
		}
		ck_assert_uint_eq(pos, len);
		ck_assert_msg(len <= seg_bytes || n == 1, "segment %llu: %zu bytes, %llu records",
		              (unsigned long long)sl.base[i], len, (unsigned long long)n);
		/* Closed segments are full: the next record would not fit. */
		if (i + 1 < sl.n)
			ck_assert_uint_gt(n, 0);
		bases[i] = sl.base[i];
		free(seg);
	}
	size_t n = sl.n;
	elog__seglist_free(&sl);
	*records = expect;
	return n;
}

UT_TEST(segments_roll_at_segment_bytes)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	char v[128];
	for (int i = 0; i < 300; i++) {
		snprintf(v, sizeof v, "%03d %s", i,
		         "a value of about seventy bytes, so forty fit in a segment");
		ut_append(w, NULL, v);
		if (i % 50 == 49)
			ck_assert_int_eq(elog_sync(w), 0);
	}
	ck_assert_int_eq(elog_close(w), 0);
	uint64_t bases[64], records;
	size_t n = check_segments(ut_dir, 4096, bases, 64, &records);
	ck_assert_uint_eq(records, 300);
	ck_assert_uint_ge(n, 300 * 88 / 4096);
	/* A roll happens only when the next record would not fit. */
	for (size_t i = 0; i + 1 < n; i++) {
		uint64_t size = ut_file_size(ut_seg_path(ut_dir, bases[i], SEG_EXT));
		ck_assert_uint_gt(size + elog__rec_size(0, 62), 4096);
	}
	struct all a = read_all(ut_dir);
	ck_assert_uint_eq(a.n, 300);
	for (size_t i = 0; i < a.n; i++) {
		ck_assert_uint_eq(a.off[i], i);
		snprintf(v, sizeof v, "%03zu ", i);
		ck_assert_mem_eq(a.val[i], v, 4);
	}
	all_free(&a);
}
END_TEST

UT_TEST(record_larger_than_segment_goes_alone)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	char *big = malloc(10001);
	memset(big, 'B', 10000);
	big[10000] = '\0';
	for (int i = 0; i < 5; i++)
		ut_append(w, NULL, "small");
	uint64_t bo = ut_append(w, NULL, big);
	uint64_t after = ut_append(w, NULL, "after");
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert_uint_eq(bo, 5);
	ck_assert_uint_eq(after, 6);
	uint64_t bases[8], records;
	size_t n = check_segments(ut_dir, 4096, bases, 8, &records);
	ck_assert_uint_eq(records, 7);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(bases[0], 0);
	ck_assert_uint_eq(bases[1], 5);
	ck_assert_uint_eq(bases[2], 6);
	ck_assert_uint_eq(ut_file_size(ut_seg_path(ut_dir, 5, SEG_EXT)),
	                  SEG_HDR + elog__rec_size(0, 10000) + SEAL_SIZE);
	free(big);
}
END_TEST

/* The first record of an empty log may be larger than a segment too. */
UT_TEST(first_record_larger_than_segment)
{
	elog *w = ut_open_writer(ut_dir, 4096, 64);
	char *big = malloc(5001);
	memset(big, 'B', 5000);
	big[5000] = '\0';
	ut_append(w, NULL, big);
	ut_append(w, NULL, "next");
	ck_assert_int_eq(elog_close(w), 0);
	uint64_t bases[8], records;
	size_t n = check_segments(ut_dir, 4096, bases, 8, &records);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(bases[1], 1);
	free(big);
}
END_TEST

/* Rolls happen across reopenings: the writer picks up the active segment's
 * size from the file. */
UT_TEST(roll_after_reopen)
{
	char v[100];
	memset(v, 'r', 99);
	v[99] = '\0';
	for (int round = 0; round < 4; round++) {
		elog *w = ut_open_writer(ut_dir, 4096, 64);
		for (int i = 0; i < 30; i++)
			ut_append(w, NULL, v);
		ck_assert_int_eq(elog_close(w), 0);
	}
	uint64_t bases[16], records;
	size_t n = check_segments(ut_dir, 4096, bases, 16, &records);
	ck_assert_uint_eq(records, 120);
	/* 127-byte records: 32 to a segment. */
	ck_assert_uint_eq(n, 4);
}
END_TEST

/* ---- many threads ---- */

#define THREADS 8
#define PER_THREAD 150

struct worker {
	elog *w;
	int id;
	uint64_t off[PER_THREAD];
	int err; /* first failure, reported by the main thread */
	uint64_t bad_durable;
};

static void *work(void *arg)
{
	struct worker *k = arg;
	char v[64];
	for (int i = 0; i < PER_THREAD; i++) {
		snprintf(v, sizeof v, "t%d-%d", k->id, i);
		struct elog_record r = ut_rec(0, ELOG_TS_NOW, 0, NULL, v);
		int rc = elog_append(k->w, &r, &k->off[i]);
		if (!rc)
			rc = elog_sync(k->w);
		if (rc) {
			k->err = rc;
			break;
		}
		/* Acknowledged: the durable end is past it. */
		uint64_t d = elog_durable_end(k->w);
		if (d <= k->off[i] && !k->bad_durable)
			k->bad_durable = k->off[i] + 1;
	}
	return NULL;
}

UT_TEST(threads_append_and_sync)
{
	elog *w = ut_open_writer(ut_dir, 16384, 256);
	static struct worker k[THREADS];
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++) {
		k[i] = (struct worker){ .w = w, .id = i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, work, &k[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	for (int i = 0; i < THREADS; i++) {
		ck_assert_msg(k[i].err == 0, "thread %d: %d %s", i, k[i].err, elog_errmsg(w));
		ck_assert_msg(k[i].bad_durable == 0,
		              "thread %d: offset %llu acknowledged "
		              "above the durable end",
		              i, (unsigned long long)k[i].bad_durable - 1);
	}
	const uint64_t total = THREADS * PER_THREAD;
	ck_assert_uint_eq(elog_next_offset(w), total);
	ck_assert_uint_eq(elog_durable_end(w), total);
	/* Durable: on disk before close, as the watermark says. */
	ck_assert_uint_eq(ut_get_wm(ut_dir).durable_end, total);

	/* Every acknowledged offset is distinct and holds its own value. */
	struct all a = read_all(ut_dir);
	ck_assert_uint_eq(a.n, total);
	char *seen = calloc(total, 1);
	for (int i = 0; i < THREADS; i++) {
		for (int j = 0; j < PER_THREAD; j++) {
			uint64_t o = k[i].off[j];
			ck_assert_uint_lt(o, total);
			ck_assert_msg(!seen[o], "offset %llu given twice", (unsigned long long)o);
			seen[o] = 1;
			if (j) /* each thread's own appends are in order */
				ck_assert_uint_gt(o, k[i].off[j - 1]);
			char v[64];
			snprintf(v, sizeof v, "t%d-%d", i, j);
			ck_assert_uint_eq(a.off[o], o);
			ck_assert_str_eq(a.val[o], v);
		}
	}
	free(seen);
	all_free(&a);
	ck_assert_int_eq(elog_close(w), 0);
	/* Rolled along the way, and the segments are sound. */
	uint64_t bases[256], records;
	ck_assert_uint_gt(check_segments(ut_dir, 16384, bases, 256, &records), 2);
	ck_assert_uint_eq(records, total);
}
END_TEST

/* ---- elog_append_at(): a copy that keeps its offsets ---- */

/* The verdict of elog_verify() on dir: damage and warnings, both 0. */
static void verify_clean(const char *dir)
{
	struct elog_verify_result vr;
	char msg[ELOG_MSG_MAX];
	ck_assert_msg(elog_verify(dir, NULL, &vr, msg) == 0, "%s", msg);
	ck_assert_uint_eq(vr.damage, 0);
	ck_assert_uint_eq(vr.warnings, 0);
}

UT_TEST(append_at_keeps_offsets_and_leaves_holes)
{
	elog *w = ut_open_writer(ut_dir, 4096, 128);
	struct elog_record r = ut_rec(5, -3, 7, "k", "five");
	ck_assert_int_eq(elog_append_at(w, &r), 0);
	r = ut_rec(6, 0, 0, NULL, "six");
	ck_assert_int_eq(elog_append_at(w, &r), 0);
	ck_assert_uint_eq(elog_next_offset(w), 7);
	/* Enough records to roll segments, each 40 offsets above the last. */
	char v[64];
	memset(v, 'x', sizeof v);
	for (uint64_t o = 100; o < 100 + 40 * 200; o += 40) {
		r = (struct elog_record){ .offset = o, .ts_ms = 1, .value = v, .value_len = 64 };
		ck_assert_int_eq(elog_append_at(w, &r), 0);
	}
	/* An append after them takes the next offset. */
	uint64_t next = UINT64_MAX;
	r = ut_rec(0, ELOG_TS_NOW, 0, NULL, "next");
	ck_assert_int_eq(elog_append(w, &r, &next), 0);
	ck_assert_int_eq(elog_close(w), 0);
	ck_assert_uint_eq(next, 100 + 40 * 199 + 1);

	struct all a = read_all(ut_dir);
	ck_assert_uint_eq(a.n, 203);
	ck_assert_uint_eq(a.off[0], 5);
	ck_assert_str_eq(a.val[0], "five");
	ck_assert_uint_eq(a.off[1], 6);
	for (size_t i = 2; i < 202; i++)
		ck_assert_uint_eq(a.off[i], 100 + 40 * (i - 2));
	ck_assert_uint_eq(a.off[202], next);
	all_free(&a);
	ck_assert_int_gt(ut_count_names(ut_dir, ".log"), 2);
	/* Readers pass the holes silently: a seek into one lands after it. */
	elog_reader *rd = ut_open_reader(ut_dir);
	struct elog_record rec;
	ck_assert_int_eq(elog_reader_seek(rd, 7), 0);
	ck_assert_int_eq(elog_reader_next(rd, &rec), 0);
	ck_assert_uint_eq(rec.offset, 100);
	ck_assert_int_eq(elog_reader_seek(rd, 101), 0);
	ck_assert_int_eq(elog_reader_next(rd, &rec), 0);
	ck_assert_uint_eq(rec.offset, 140);
	elog_reader_close(rd);
	verify_clean(ut_dir);
	/* The summary knows its count is an upper bound now. */
	struct elog_summary s;
	ck_assert_int_eq(elog_summary_read(ut_dir, &s, NULL), 0);
	ck_assert_int_eq(s.records_exact, 0);
	ck_assert_int_ge(s.copy_last_ms, ut_now_ms() - 60000);
	ck_assert_uint_eq(s.first, 5);
	ck_assert_uint_eq(s.last, next);
	elog_summary_free(&s);
}
END_TEST

UT_TEST(append_at_without_holes_keeps_the_count_exact)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	for (uint64_t o = 0; o < 3; o++) {
		struct elog_record r = ut_rec(o, 1, 0, NULL, "v");
		ck_assert_int_eq(elog_append_at(w, &r), 0);
	}
	ck_assert_int_eq(elog_close(w), 0);
	struct elog_summary s;
	ck_assert_int_eq(elog_summary_read(ut_dir, &s, NULL), 0);
	ck_assert_int_eq(s.records_exact, 1);
	ck_assert_int_eq(s.copy_last_ms, INT64_MIN);
	elog_summary_free(&s);
}
END_TEST

UT_TEST(append_at_refuses_taken_offsets)
{
	elog *w = ut_open_writer(ut_dir, 0, 0);
	for (int i = 0; i < 3; i++)
		ut_append(w, NULL, "v");
	ck_assert_int_eq(elog_sync(w), 0);
	struct elog_record r = ut_rec(2, 1, 0, NULL, "taken");
	ck_assert_int_eq(elog_append_at(w, &r), ELOG_TAKEN);
	ck_assert_str_eq(elog_errmsg(w), "offset 2 is taken: the log holds offsets up to 2");
	ck_assert_str_eq(elog_strerror(ELOG_TAKEN), "offset at or below the end of the log");
	r.offset = UINT64_MAX;
	ck_assert_int_eq(elog_append_at(w, &r), ELOG_INVALID);
	/* Below a record buffered but not yet written is taken too. */
	r.offset = 10;
	ck_assert_int_eq(elog_append_at(w, &r), 0);
	r.offset = 9;
	ck_assert_int_eq(elog_append_at(w, &r), ELOG_TAKEN);
	ck_assert_str_eq(elog_errmsg(w), "offset 9 is taken: the log holds offsets up to 10");
	/* Refusals leave the handle working. */
	r.offset = 11;
	ck_assert_int_eq(elog_append_at(w, &r), 0);
	ck_assert_int_eq(elog_close(w), 0);
	struct all a = read_all(ut_dir);
	ck_assert_uint_eq(a.n, 5);
	ck_assert_uint_eq(a.off[3], 10);
	ck_assert_uint_eq(a.off[4], 11);
	all_free(&a);
}
END_TEST

UT_TEST(append_at_loses_to_another_writer)
{
	elog *w1 = ut_open_writer(ut_dir, 0, 0);
	elog *w2 = ut_open_writer(ut_dir, 0, 0);
	/* w1 buffers offset 3 and offset 50; w2 writes 0..4 first. */
	struct elog_record r = ut_rec(3, 1, 0, NULL, "mine");
	ck_assert_int_eq(elog_append_at(w1, &r), 0);
	for (int i = 0; i < 5; i++)
		ut_append(w2, NULL, "theirs");
	ck_assert_int_eq(elog_sync(w2), 0);
	ck_assert_int_eq(elog_sync(w1), ELOG_TAKEN);
	ck_assert_str_eq(elog_errmsg(w1), "offset 3 is taken: the log holds offsets up to 4");
	ck_assert_int_eq(elog_append(w1, &r, NULL), ELOG_FAILED);
	elog_close(w1);
	/* A record above what the other wrote is laid out again and kept. */
	w1 = ut_open_writer(ut_dir, 0, 0);
	r.offset = 50;
	ck_assert_int_eq(elog_append_at(w1, &r), 0);
	ut_append(w2, NULL, "theirs");
	ck_assert_int_eq(elog_sync(w2), 0);
	ck_assert_int_eq(elog_close(w1), 0);
	ck_assert_int_eq(elog_close(w2), 0);
	struct all a = read_all(ut_dir);
	ck_assert_uint_eq(a.n, 7);
	ck_assert_uint_eq(a.off[5], 5);
	ck_assert_str_eq(a.val[5], "theirs");
	ck_assert_uint_eq(a.off[6], 50);
	ck_assert_str_eq(a.val[6], "mine");
	all_free(&a);
	verify_clean(ut_dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("writer");
	TCase *tc = ut_tcase("writer");
	ut_add_tests(tc);
	suite_add_tcase(s, tc);
	return ut_run(s);
}
