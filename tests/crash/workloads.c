/*
 * workloads.c: what the crash simulator records.  Each appends records it
 * can recognise, notes them and their acknowledgements in the expectations,
 * and in fault runs (wl_faults set) keeps going past errors, checking that
 * a writer which failed refuses everything afterwards.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crash.h"
#include "internal.h"

int wl_faults;               /* errors are expected: note, do not die */
unsigned long wl_errors;     /* errors the library reported */
unsigned long wl_violations; /* a failed writer accepted work */
static pthread_mutex_t wmu = PTHREAD_MUTEX_INITIALIZER;

/* Without injected faults, a library error is a failure of the test, but
 * one: a batch cut back after a sync whose holder stopped past the bound
 * (a handle held in a hook of the workload) and not written again,
 * because other records now follow its offsets (elog(5), LOCK). */
static void note_error(const char *what, int rc, elog *w)
{
	int cut = rc == ELOG_FAILED && w &&
	          strstr(elog_errmsg(w), "were removed before they were durable");
	if (!wl_faults && !cut)
		die("%s: %s", what, w ? elog_errmsg(w) : elog_strerror(rc));
	if (getenv("CRASHSIM_DEBUG"))
		fprintf(stderr, "crashsim: after %zu operations: %s: %s\n", vfs_now(), what,
		        w ? elog_errmsg(w) : elog_strerror(rc));
	if (cut) /* not an error the run's fault caused */
		return;
	pthread_mutex_lock(&wmu);
	wl_errors++;
	pthread_mutex_unlock(&wmu);
}

/* One writer shared by a workload's threads, and whether it has failed. */
/* A record appended but not yet synced: its offset is stored by the
 * library when its batch is written (elog_append(3)). */
struct pend {
	struct pend *next;
	uint64_t off;   /* UINT64_MAX until written */
	uint64_t noted; /* the last offset told to the checker */
	int owned;    /* its putter still reads off: keep it */
	struct elog_record r;
	char *key, *val;
};

struct wr {
	elog *w;
	int failed;
	uint64_t acked; /* highest acknowledged offset + 1 */
	pthread_mutex_t mu;
	struct pend *pend; /* appended, offsets not yet known to us */
};

static struct pend *pend_new(struct wr *w, const struct elog_record *r)
{
	struct pend *p = calloc(1, sizeof *p);
	if (!p || !(p->key = malloc(r->key_len + 1)) || !(p->val = malloc(r->value_len + 1))) {
		fprintf(stderr, "crashsim: out of memory\n");
		exit(2);
	}
	if (r->key_len)
		memcpy(p->key, r->key, r->key_len);
	if (r->value_len)
		memcpy(p->val, r->value, r->value_len);
	p->r = *r;
	p->r.key = r->key ? p->key : NULL;
	p->r.value = p->val;
	p->off = p->noted = UINT64_MAX;
	p->owned = 1;
	pthread_mutex_lock(&w->mu);
	p->next = w->pend;
	w->pend = p;
	pthread_mutex_unlock(&w->mu);
	return p;
}

/* Tell the checker what each written record holds: after a sync, and at
 * the end, every record whose batch was written has its offset. */
static void pend_settle(struct wr *w, int all)
{
	pthread_mutex_lock(&w->mu);
	struct pend **pp = &w->pend;
	while (*pp) {
		struct pend *p = *pp;
		if ((p->off == UINT64_MAX || p->owned) && !all) {
			pp = &p->next;
			continue;
		}
		if (p->off != UINT64_MAX && p->off != p->noted)
			expect_written(p->off, &p->r);
		*pp = p->next;
		free(p->key);
		free(p->val);
		free(p);
	}
	pthread_mutex_unlock(&w->mu);
}

struct gen {
	unsigned thread;
	uint64_t rs;
	unsigned keyed_pct, tomb_pct, keys;
	char key[32];
	char val[4096];
};

static void gen_record(struct gen *g, unsigned i, struct elog_record *r)
{
	unsigned x = (unsigned)(rng_next(&g->rs) % 100);
	unsigned pad = (unsigned)(rng_next(&g->rs) % 300);
	if (x < 4)
		pad = 1000 + (unsigned)(rng_next(&g->rs) % 2500);
	memset(r, 0, sizeof *r);
	r->ts_ms = 1700000000000ll + g->thread * 100000ll + i;
	r->schema = (uint16_t)(1 + g->thread % 3);
	if ((unsigned)(rng_next(&g->rs) % 100) < g->keyed_pct) {
		r->key_len = (size_t)snprintf(g->key, sizeof g->key, "key-%03u",
		                              (unsigned)(rng_next(&g->rs) % g->keys));
		r->key = g->key;
		if ((unsigned)(rng_next(&g->rs) % 100) < g->tomb_pct)
			return;
	}
	int n = snprintf(g->val, sizeof g->val, "{\"t\":%u,\"i\":%u,\"pad\":\"", g->thread, i);
	memset(g->val + n, 'a' + (char)(i % 26), pad);
	n += (int)pad;
	n += snprintf(g->val + n, sizeof g->val - (size_t)n, "\"}");
	r->value = g->val;
	r->value_len = (size_t)n;
}

/* Appends r and, with sync, waits until it is durable.  Returns 0 when
 * acknowledged. */
static int put(struct wr *w, struct elog_record *r, int sync)
{
	uint64_t off = UINT64_MAX;
	pthread_mutex_lock(&w->mu);
	int was_failed = w->failed;
	pthread_mutex_unlock(&w->mu);
	struct pend *p = pend_new(w, r);
	int rc = elog_append(w->w, r, &p->off);
	if (rc == 0 && sync)
		rc = elog_sync(w->w);
	pthread_mutex_lock(&w->mu);
	if (rc == 0 && sync)
		off = p->off;
	p->owned = 0;
	pthread_mutex_unlock(&w->mu);
	if (rc == 0 && sync)
		pend_settle(w, 0);
	pthread_mutex_lock(&w->mu);
	if (rc != 0)
		w->failed = 1;
	else if (sync && off + 1 > w->acked)
		w->acked = off + 1;
	pthread_mutex_unlock(&w->mu);
	if (rc == 0 && sync && was_failed) {
		/* Only a writer that failed in elog_sync must refuse: an
		 * append refused for its size leaves it working. */
		pthread_mutex_lock(&wmu);
		wl_violations++;
		pthread_mutex_unlock(&wmu);
		fprintf(stderr, "crashsim: a writer that failed acknowledged offset %llu\n",
		        (unsigned long long)off);
	}
	if (getenv("CRASHSIM_DEBUG"))
		fprintf(stderr, "crashsim: after %zu operations: handle %p put offset %llu%s: %d\n",
		        vfs_now(), (void *)w, (unsigned long long)p->off, sync ? " and sync" : "",
		        rc);
	if (rc == 0 && sync)
		expect_acked(off, r);
	if (rc != 0)
		note_error("append", rc, w->w);
	return rc;
}

/* The open handles, so that the offsets the library gives a record are
 * all told to the checker, before its bytes are written: a batch cut back
 * after another writer's failed sync is written again at new offsets, and
 * a crash in between leaves it at the old ones. */
#define LIVE_MAX 64
static struct wr *live[LIVE_MAX];
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;

static void note_offsets(void)
{
	pthread_mutex_lock(&live_mu);
	for (int i = 0; i < LIVE_MAX; i++) {
		if (!live[i])
			continue;
		pthread_mutex_lock(&live[i]->mu);
		for (struct pend *p = live[i]->pend; p; p = p->next) {
			uint64_t off = __atomic_load_n(&p->off, __ATOMIC_SEQ_CST);
			if (off != UINT64_MAX && off != p->noted) {
				expect_written(off, &p->r);
				p->noted = off;
			}
		}
		pthread_mutex_unlock(&live[i]->mu);
	}
	pthread_mutex_unlock(&live_mu);
}

static void live_set(struct wr *w, int on)
{
	pthread_mutex_lock(&live_mu);
	for (int i = 0; i < LIVE_MAX; i++)
		if (on ? !live[i] : live[i] == w) {
			live[i] = on ? w : NULL;
			break;
		}
	pthread_mutex_unlock(&live_mu);
	vfs_before_write(note_offsets);
}

static int wr_open(struct wr *w, const char *dir, const struct elog_options *opt)
{
	memset(w, 0, sizeof *w);
	pthread_mutex_init(&w->mu, NULL);
	live_set(w, 1);
	int rc = elog_open(&w->w, dir, opt);
	if (rc != 0) {
		note_error("elog_open", rc, w->w);
		elog_close(w->w);
		w->w = NULL;
		pend_settle(w, 1);
		live_set(w, 0);
	}
	return rc;
}

static void wr_close(struct wr *w)
{
	if (!w->w)
		return;
	int rc = elog_close(w->w);
	/* A handle that failed says so again at close. */
	if (rc != 0 && !(rc == ELOG_FAILED && w->failed))
		note_error("elog_close", rc, NULL);
	pend_settle(w, 1);
	live_set(w, 0);
	pthread_mutex_destroy(&w->mu);
	w->w = NULL;
}

/* Appends n records, each synced, from several threads. */
struct appender {
	struct wr *w;
	struct gen g;
	unsigned n;
	pthread_t t;
};

static void *append_thread(void *arg)
{
	struct appender *a = arg;
	struct elog_record r;
	for (unsigned i = 0; i < a->n; i++) {
		gen_record(&a->g, i, &r);
		if (put(a->w, &r, 1) != 0 && wl_faults && a->w->failed) {
			/* Once more, to see it refused. */
			gen_record(&a->g, i, &r);
			put(a->w, &r, 1);
			break;
		}
	}
	return NULL;
}

static void appenders(struct wr *w, unsigned threads, unsigned n, unsigned seed, unsigned keyed_pct,
                      unsigned tomb_pct, unsigned keys)
{
	struct appender a[8];
	for (unsigned i = 0; i < threads; i++) {
		a[i] = (struct appender){ w,
			                  { i, seed * 7919ull + i + 1, keyed_pct, tomb_pct, keys,
			                    "", "" },
			                  n,
			                  0 };
		if (threads == 1)
			append_thread(&a[i]);
		else if (pthread_create(&a[i].t, NULL, append_thread, &a[i]) != 0)
			die("pthread_create");
	}
	for (unsigned i = 0; threads > 1 && i < threads; i++)
		pthread_join(a[i].t, NULL);
}

/* ---- the workloads ---- */

#define SEG 4096

/* Creating the log, then appends with group commit from four threads
 * rolling many small segments. */
static void run_append(const char *dir, unsigned seed)
{
	struct elog_options o = { .create = 1, .segment_bytes = SEG };
	struct wr w;
	if (wr_open(&w, dir, &o) != 0)
		return;
	appenders(&w, 4, 40, seed, 30, 10, 8);
	wr_close(&w);
}

/* A log that exists, for the workloads that start from one; its cleanup
 * is compact, for the maintenance workload's compaction. */
static void setup_log(const char *dir, unsigned seed, unsigned n)
{
	struct elog_options o = { .create = 1,
		                  .segment_bytes = SEG,
		                  .cleanup = ELOG_CLEANUP_COMPACT };
	struct wr w;
	int faults = wl_faults;
	wl_faults = 0;
	wr_open(&w, dir, &o);
	struct gen g = { 9, seed + 1000u, 80, 10, 12, "", "" };
	struct elog_record r;
	for (unsigned i = 0; i < n; i++) {
		gen_record(&g, i, &r);
		put(&w, &r, i + 1 == n);
	}
	wr_close(&w);
	wl_faults = faults;
	expect_all_durable();
}

static void setup_small(const char *dir, unsigned seed)
{
	setup_log(dir, seed, 30);
}

static void setup_big(const char *dir, unsigned seed)
{
	setup_log(dir, seed, 180);
}

/* Appends in one thread while another commits two consumers' progress. */
struct committer {
	const char *dir;
	struct wr *w;
	unsigned n;
};

static void *commit_thread(void *arg)
{
	struct committer *c = arg;
	static const char *const names[] = { "alpha", "beta" };
	uint64_t last[2] = { 0, 0 };
	for (unsigned i = 0; i < c->n; i++) {
		pthread_mutex_lock(&c->w->mu);
		uint64_t acked = c->w->acked;
		pthread_mutex_unlock(&c->w->mu);
		unsigned who = i % 2;
		if (acked == 0 || acked - 1 < last[who])
			continue;
		char msg[ELOG_MSG_MAX];
		size_t id = expect_commit_begin(names[who], acked - 1);
		int rc = elog_consumer_commit(c->dir, names[who], acked - 1, msg);
		if (rc == 0) {
			expect_commit_done(id);
			last[who] = acked - 1;
		} else {
			note_error("consumer commit", rc, NULL);
		}
	}
	return NULL;
}

static void run_consumers(const char *dir, unsigned seed)
{
	struct elog_options o = { .segment_bytes = SEG };
	struct wr w;
	if (wr_open(&w, dir, &o) != 0)
		return;
	w.acked = expect_count();
	struct committer c = { dir, &w, 24 };
	pthread_t t;
	if (pthread_create(&t, NULL, commit_thread, &c) != 0)
		die("pthread_create");
	appenders(&w, 1, 50, seed, 20, 0, 8);
	pthread_join(t, NULL);
	wr_close(&w);
}

/* Compaction and retention while the writer appends keyed records. */
static void *maint_thread(void *arg)
{
	const char *dir = arg;
	char msg[ELOG_MSG_MAX];
	struct elog_compact_opts co = { 0 };
	struct elog_compact_result cr;
	struct elog_retain_opts ro = { 0 };
	struct elog_retain_result rr;
	int rc;
	co.grace_ms = ELOG_COMPACT_GRACE_NONE;
	co.wait_ms = ELOG_WAIT_FOREVER;
	ro.max_age_ms = ELOG_RETAIN_OFF;
	ro.max_bytes = 6 * 1024;
	ro.wait_ms = ELOG_WAIT_FOREVER;
	if ((rc = elog_compact(dir, &co, &cr, msg)) != 0)
		note_error("compaction", rc, NULL);
	if ((rc = elog_retain(dir, &ro, &rr, msg)) != 0)
		note_error("retention", rc, NULL);
	else if (getenv("CRASHSIM_DEBUG"))
		fprintf(stderr, "retention removed %llu segments, %llu bytes left\n",
		        (unsigned long long)rr.segments, (unsigned long long)rr.total_bytes);
	if ((rc = elog_compact(dir, &co, &cr, msg)) != 0)
		note_error("compaction", rc, NULL);
	return NULL;
}

static void run_maint(const char *dir, unsigned seed)
{
	struct elog_options o = { .segment_bytes = SEG };
	struct wr w;
	pthread_t t;
	if (wr_open(&w, dir, &o) != 0)
		return;
	if (pthread_create(&t, NULL, maint_thread, (void *)dir) != 0)
		die("pthread_create");
	appenders(&w, 1, 30, seed, 80, 10, 12);
	pthread_join(t, NULL);
	wr_close(&w);
}

/* Everything in one thread, in a fixed order: what the fault runs use, so
 * that the nth call of a kind is the same call in every run. */
static void run_serial(const char *dir, unsigned seed)
{
	struct elog_options o = { .create = 1,
		                  .segment_bytes = SEG,
		                  .cleanup = ELOG_CLEANUP_COMPACT };
	struct wr w;
	struct gen g = { 0, seed + 1u, 50, 10, 6, "", "" };
	struct elog_record r;
	char msg[ELOG_MSG_MAX];
	if (wr_open(&w, dir, &o) != 0)
		return;
	for (unsigned i = 0; i < 36; i++) {
		gen_record(&g, i, &r);
		if (put(&w, &r, i % 3 == 2) != 0 && w.failed) {
			gen_record(&g, i, &r);
			put(&w, &r, 1);
			break;
		}
		if (i % 12 == 11 && w.acked) {
			size_t id = expect_commit_begin("alpha", w.acked - 1);
			int rc = elog_consumer_commit(dir, "alpha", w.acked - 1, msg);
			if (rc == 0)
				expect_commit_done(id);
			else
				note_error("consumer commit", rc, NULL);
		}
	}
	maint_thread((void *)dir);
	wr_close(&w);
}

/* A compressed log: after its first 1000 values the writer trains a
 * dictionary, stores it, and starts a segment that uses it. */
static void run_zstd(const char *dir, unsigned seed)
{
	struct elog_options o = { .create = 1,
		                  .segment_bytes = 16 * 1024,
		                  .compression = ELOG_COMPRESS_ZSTD };
	struct wr w;
	struct gen g = { 1, seed + 7u, 30, 5, 20, "", "" };
	struct elog_record r;
	if (wr_open(&w, dir, &o) != 0)
		return;
	for (unsigned i = 0; i < 1100; i++) {
		gen_record(&g, i, &r);
		if (r.value_len > 200)
			r.value_len = 200;
		if (put(&w, &r, i % 100 == 99 || (i >= 990 && i % 5 == 4)) != 0 && w.failed)
			break;
	}
	wr_close(&w);
}

/* Several writer handles on one log (each its own open file description of
 * LOCK, so they contend for the batch lock as processes do), two threads
 * each, appending and syncing across many segment rolls: every handle finds
 * the tail the others left, and lays its batches out again. */
#define HANDLES 3
static void run_writers(const char *dir, unsigned seed)
{
	struct elog_options o = { .create = 1, .segment_bytes = SEG };
	struct wr w[HANDLES];
	struct appender a[HANDLES][2];
	int open[HANDLES];
	/* Syncs wait a little before they start, so that the other
	 * handles' batches and publications come between a handle's write
	 * and its sync. */
	vfs_sync_delay(300, seed);
	for (unsigned h = 0; h < HANDLES; h++)
		open[h] = wr_open(&w[h], dir, &o) == 0;
	for (unsigned h = 0; h < HANDLES; h++)
		for (unsigned t = 0; t < 2 && open[h]; t++) {
			unsigned id = h * 2 + t;
			a[h][t] = (struct appender){ &w[h],
				                     { id, seed * 7919ull + id + 1, 30, 10, 8, "",
				                       "" },
				                     25,
				                     0 };
			if (pthread_create(&a[h][t].t, NULL, append_thread, &a[h][t]) != 0)
				die("pthread_create");
		}
	for (unsigned h = 0; h < HANDLES; h++)
		for (unsigned t = 0; t < 2 && open[h]; t++)
			pthread_join(a[h][t].t, NULL);
	for (unsigned h = 0; h < HANDLES; h++)
		if (open[h])
			wr_close(&w[h]);
}

/* ---- several handles, one thread at a time ----
 *
 * In these the calls happen in the same order in every run, so that the
 * fault runs can fail each in turn.  A hook before each sync of a segment
 * (vfs_before_sync()) makes the other handles act between a handle's
 * release of LOCK and its fdatasync: another handle appends and syncs, a
 * fresh handle opens, appends and syncs, elog-verify --repair runs, or the
 * handle dies there. */

/* 1 when nobody holds LOCK now (a handle in a roll or at open does). */
static int lock_free(const char *dir)
{
	char path[1100];
	snprintf(path, sizeof path, "%s/LOCK", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC), free_ = 0;
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		free_ = 1;
		flock(fd, LOCK_UN);
	}
	close(fd);
	return free_;
}

static int seg_sync(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && strcmp(name + n - 4, ".log") == 0;
}

/* One record from g, appended (and with sync, synced) through a handle
 * opened just for it and closed again. */
static void fresh_put(const char *dir, struct gen *g, unsigned i, unsigned n)
{
	struct elog_options o = { .segment_bytes = SEG };
	struct elog_record r;
	struct wr c;
	if (wr_open(&c, dir, &o) != 0)
		return;
	for (unsigned k = 0; k < n; k++) {
		gen_record(g, i * 8 + k, &r);
		if (put(&c, &r, k + 1 == n) != 0)
			break;
	}
	wr_close(&c);
}

struct handoff {
	const char *dir;
	struct wr a, b;
	int aopen, bopen;
	struct gen ga, gb, gc;
	unsigned round;
	int in_a, acted;
};

/* Between A's write and A's sync (LOCK released): what round says. */
static void handoff_hook(const char *name, void *arg)
{
	struct handoff *h = arg;
	struct elog_record r;
	if (!h->in_a || h->acted || !seg_sync(name) || !lock_free(h->dir))
		return;
	h->acted = 1;
	switch (h->round % 4) {
	case 0: /* B appends and syncs: its sync may cover A's batch */
		if (h->bopen) {
			gen_record(&h->gb, h->round, &r);
			put(&h->b, &r, 1);
		}
		break;
	case 1: /* a handle opened now (after any failed sync) appends */
		fresh_put(h->dir, &h->gc, h->round, 2);
		break;
	case 2: { /* a repair, then B */
		char msg[ELOG_MSG_MAX];
		struct elog_verify_result vr;
		size_t from = vfs_now();
		int rc = elog_verify(h->dir,
		                     &(struct elog_verify_opts){ .flags = ELOG_VERIFY_REPAIR }, &vr,
		                     msg);
		expect_repair(from, vfs_now());
		if (rc != 0)
			note_error("repair", rc, NULL);
		if (h->bopen) {
			gen_record(&h->gb, h->round, &r);
			put(&h->b, &r, 1);
		}
		break;
	}
	default: /* B appends without syncing; its next sync comes later */
		if (h->bopen) {
			gen_record(&h->gb, h->round, &r);
			put(&h->b, &r, 0);
		}
	}
}

static void handoff_reopen(const char *dir, struct wr *w, int *open)
{
	struct elog_options o = { .create = 1, .segment_bytes = SEG };
	if (*open && !w->failed)
		return;
	if (*open)
		wr_close(w);
	*open = wr_open(w, dir, &o) == 0;
}

/* Handles A and B take turns; between A's write and its sync the others
 * act (handoff_hook).  A handle that failed is closed and opened again,
 * so that it meets the LOCK state its failure left. */
static void run_handoff(const char *dir, unsigned seed)
{
	struct handoff h = { .dir = dir };
	struct elog_record r;
	h.ga = (struct gen){ 0, seed * 31ull + 1, 30, 10, 6, "", "" };
	h.gb = (struct gen){ 1, seed * 31ull + 2, 30, 10, 6, "", "" };
	h.gc = (struct gen){ 2, seed * 31ull + 3, 30, 10, 6, "", "" };
	vfs_before_sync(handoff_hook, &h);
	for (h.round = 0; h.round < 12; h.round++) {
		handoff_reopen(dir, &h.a, &h.aopen);
		handoff_reopen(dir, &h.b, &h.bopen);
		if (h.aopen) {
			for (unsigned k = 0; k <= h.round % 2; k++) {
				gen_record(&h.ga, h.round * 2 + k, &r);
				h.in_a = k == h.round % 2;
				h.acted = 0;
				put(&h.a, &r, h.in_a);
				h.in_a = 0;
				if (h.a.failed)
					break;
			}
		}
		if (h.bopen && !h.b.failed) {
			gen_record(&h.gb, 100 + h.round, &r);
			put(&h.b, &r, 1);
		}
	}
	vfs_before_sync(NULL, NULL);
	if (h.aopen)
		wr_close(&h.a);
	if (h.bopen)
		wr_close(&h.b);
}

/* A handle that dies: its thread's fds are closed with no other call (as
 * the kernel does at a process's exit) at its nth sync of a segment: in a
 * roll (holding LOCK, its batch partly written), or between its write and
 * its sync.  Its records were never acknowledged; the other handles go
 * on, and a fresh one opens after it. */
struct victim {
	const char *dir;
	struct wr w;
	struct gen g;
	unsigned n, die_at, syncs;
	pthread_t t;
	int killed, done;
};

static struct victim *victim_now;
/* A dead handle's memory is never freed (nothing may touch it without
 * its fds, and some of it was known only to the dead thread's stack):
 * under LeakSanitizer, what a victim's thread allocates is not a leak. */
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

static void victim_hook(const char *name, void *arg)
{
	(void)arg;
	struct victim *v = victim_now;
	if (!v || !pthread_equal(pthread_self(), v->t) || !seg_sync(name))
		return;
	if (++v->syncs == v->die_at) {
		v->killed = 1;
		vfs_kill_thread();
	}
}

static void *victim_thread(void *arg)
{
	struct victim *v = arg;
	struct elog_options o = { .segment_bytes = SEG };
	struct elog_record r;
	if (__lsan_disable)
		__lsan_disable();
	/* With faults: a victim whose sync fails dies with the error (the
	 * case "taken by another description": the handles after it must
	 * not publish the dropped writes on the strength of their own
	 * syncs). */
	vfs_die_on_sync_fault();
	if (wr_open(&v->w, v->dir, &o) == 0) {
		for (unsigned i = 0; i < v->n; i++) {
			gen_record(&v->g, i, &r);
			if (put(&v->w, &r, i % 3 == 2 || i + 1 == v->n) != 0)
				break;
		}
		wr_close(&v->w);
	}
	if (__lsan_enable)
		__lsan_enable();
	v->done = 1;
	return NULL;
}

static void killed_run(const char *dir, unsigned seed, int with_b);

static void run_killed(const char *dir, unsigned seed)
{
	killed_run(dir, seed, 1);
}

/* The victims alone, each followed by a fresh handle: no description
 * that was open when a victim's sync failed is left to report the error,
 * so only the victim's record tells the fresh one that its own successful
 * sync covers dropped writes. */
static void run_taken(const char *dir, unsigned seed)
{
	killed_run(dir, seed, 0);
}

static void killed_run(const char *dir, unsigned seed, int with_b)
{
	struct elog_options o = { .create = 1, .segment_bytes = SEG };
	struct wr b;
	struct gen gb = { 1, seed * 37ull + 2, 30, 10, 6, "", "" };
	struct gen gc = { 2, seed * 37ull + 3, 30, 10, 6, "", "" };
	struct elog_record r;
	int bopen = with_b && wr_open(&b, dir, &o) == 0;
	if (!with_b) {
		struct wr c;
		if (wr_open(&c, dir, &o) == 0)
			wr_close(&c);
	}
	vfs_before_sync(victim_hook, NULL);
	for (unsigned i = 0; i < 6; i++) {
		static struct victim vs[6];
		struct victim *v = &vs[i];
		*v = (struct victim){ dir,
			              { 0 },
			              { 3 + i, seed * 37ull + 10 + i, 30, 10, 6, "", "" },
			              7,
			              1 + (i + seed) % 3,
			              0,
			              0,
			              0,
			              0 };
		victim_now = v;
		if (pthread_create(&v->t, NULL, victim_thread, v) != 0)
			die("pthread_create");
		pthread_join(v->t, NULL);
		victim_now = NULL;
		/* What the dead handle had laid out and written, it did not
		 * acknowledge: it may be in the log or not. */
		if (!v->done) /* killed at a sync, or at a failed one */
			pend_settle(&v->w, 1);
		if (bopen && !b.failed) {
			gen_record(&gb, i, &r);
			put(&b, &r, 1);
		}
		fresh_put(dir, &gc, i, 1);
	}
	vfs_before_sync(NULL, NULL);
	if (bopen)
		wr_close(&b);
}

/* LOCK's bytes, and the generation they name (" gen=" followed by its
 * digits, in every version of the state), or 0. */
static size_t lock_read(const char *dir, char *buf, size_t cap, unsigned long long *gen)
{
	char path[1100];
	snprintf(path, sizeof path, "%s/LOCK", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? pread(fd, buf, cap - 1, 0) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	const char *g = strstr(buf, " gen=");
	*gen = g ? strtoull(g + 5, NULL, 10) : 0;
	return (size_t)n;
}

/* An operator's mistake: LOCK's content written back in place from a
 * copy, without the lock.  Not recorded (vfs.c never records LOCK). */
static void lock_write_back(const char *dir, const char *buf, size_t n)
{
	char path[1100];
	snprintf(path, sizeof path, "%s/LOCK", dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || pwrite(fd, buf, n, 0) != (ssize_t)n || ftruncate(fd, (off_t)n) < 0)
		die("%s: cannot write back", path);
	close(fd);
}

/* A handle A that stays open while the state it knew comes back: after
 * elog-verify --repair empties LOCK, B's batches raise the generation
 * to the one A last saw; then LOCK's content is written back from a copy
 * taken after A's batch, once B wrote more.  A's next batch must go after
 * B's, never over them (issue 26's first two cases). */
static void run_samegen(const char *dir, unsigned seed)
{
	struct elog_options o = { .create = 1, .segment_bytes = SEG };
	struct gen ga = { 0, seed * 41ull + 1, 30, 10, 6, "", "" };
	struct gen gb = { 1, seed * 41ull + 2, 30, 10, 6, "", "" };
	struct elog_record r;
	struct wr a, b;
	char copy[1024], now[1024], msg[ELOG_MSG_MAX];
	unsigned long long gen_a, gen;
	unsigned i = 0;
	if (wr_open(&a, dir, &o) != 0)
		return;
	int bopen = wr_open(&b, dir, &o) == 0;
	for (unsigned k = 0; k < 2; k++) {
		gen_record(&ga, i++, &r);
		put(&a, &r, 1);
	}
	lock_read(dir, copy, sizeof copy, &gen_a);

	struct elog_verify_result vr;
	size_t from = vfs_now();
	int rc = elog_verify(dir, &(struct elog_verify_opts){ .flags = ELOG_VERIFY_REPAIR }, &vr,
	                     msg);
	expect_repair(from, vfs_now());
	if (rc != 0)
		note_error("repair", rc, NULL);
	for (unsigned k = 0; bopen && !b.failed && k < 2 * gen_a + 4; k++) {
		gen_record(&gb, k, &r);
		put(&b, &r, 1);
		lock_read(dir, now, sizeof now, &gen);
		if (gen >= gen_a)
			break;
	}
	if (!a.failed) {
		gen_record(&ga, i++, &r);
		put(&a, &r, 1);
	}

	/* LOCK written back from a copy taken after A's batch. */
	size_t n = lock_read(dir, copy, sizeof copy, &gen_a);
	for (unsigned k = 0; bopen && !b.failed && k < 3; k++) {
		gen_record(&gb, 100 + k, &r);
		put(&b, &r, 1);
	}
	/* Not after an injected fault: a copy taken before a failed sync
	 * and written back after it erases the state's sick mark, and the
	 * next writer then publishes the dropped pages.  Two faults at once
	 * (elog(5) forbids the write-back); the crash simulator does not
	 * hold the library to it. */
	if (n && !vfs_fault_hit())
		lock_write_back(dir, copy, n);
	if (!a.failed) {
		gen_record(&ga, i++, &r);
		put(&a, &r, 1);
	}
	if (bopen && !b.failed) {
		gen_record(&gb, 200, &r);
		put(&b, &r, 1);
	}
	wr_close(&a);
	if (bopen)
		wr_close(&b);
}

/* ---- repair and salvage of a damaged log (issue 22) ----
 *
 * The starting log is built by a writer, then damaged by hand: the
 * watermark written back from a copy taken a few records before the end
 * (those records were written, never published), then a byte flipped in
 * records of the active segment below and above that durable end, or its
 * last record torn, or a closed segment's record and header damaged.  The
 * recording is the repair as elog-verify --repair (--salvage) runs it,
 * then a writer that appends: power loss anywhere in it, then recovery
 * and the repair again, must keep offsets forever (check_damaged()). */

#define DSEG 4096
enum { D_ACTIVE = 1, D_ABOVE = 2, D_TORN = 4, D_CLOSED = 8 };
static uint64_t dmg_old_end; /* the durable end of the starting log */

static unsigned char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[1100];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	struct stat st;
	unsigned char *d;
	if (!f || fstat(fileno(f), &st) < 0 || !(d = malloc((size_t)st.st_size + 1)) ||
	    fread(d, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		die("%s: cannot read", path);
	fclose(f);
	*len = (size_t)st.st_size;
	return d;
}

static void spill(const char *dir, const char *name, const unsigned char *d, size_t len)
{
	char path[1100];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || (len && fwrite(d, 1, len, f) != len) || fclose(f) != 0)
		die("%s: cannot write", path);
}

/* The bases of the log's segments, in order (at most max). */
static size_t seg_bases(const char *dir, uint64_t *base, size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;
	if (!d)
		die("%s: cannot list", dir);
	while ((de = readdir(d)) != NULL)
		if (n < max && elog__seg_parse_name(de->d_name, SEG_EXT, &base[n]))
			n++;
	closedir(d);
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && base[j - 1] > base[j]; j--) {
			uint64_t t = base[j];
			base[j] = base[j - 1];
			base[j - 1] = t;
		}
	return n;
}

/* Where the record of offset off starts in segment d, and its size. */
static size_t rec_at(const unsigned char *d, size_t len, uint64_t off, size_t *size)
{
	for (size_t pos = SEG_HDR; pos < len;) {
		struct elog_record r;
		if (elog__rec_decode(d + pos, len - pos, &r, size) != 0)
			break;
		if (r.offset == off)
			return pos;
		pos += *size;
	}
	die("offset %llu not found in its segment", (unsigned long long)off);
}

/* Flips a byte in the middle of offset off's record (its CRC no longer
 * holds) in segment base. */
static void flip_record(const char *dir, uint64_t base, uint64_t off)
{
	char name[64];
	size_t len, size;
	elog__seg_name(name, base, SEG_EXT);
	unsigned char *d = slurp(dir, name, &len);
	d[rec_at(d, len, off, &size) + size / 2] ^= 0x5a;
	spill(dir, name, d, len);
	free(d);
}

static void setup_damaged(const char *dir, unsigned seed, unsigned how)
{
	struct elog_options o = { .create = 1, .segment_bytes = DSEG };
	struct gen g = { 5, seed * 53ull + 11, 30, 0, 8, "", "" };
	struct elog_record r;
	struct wr w;
	uint64_t base[64];
	unsigned char wm[WM_SIZE];
	size_t n, len;
	unsigned i = 0;
	int faults = wl_faults;
	wl_faults = 0;
	wr_open(&w, dir, &o);
	/* Records synced one by one until two segments are closed and the
	 * active one holds eight records and room for four more small ones
	 * (it must not roll). */
	for (;; i++) {
		gen_record(&g, i, &r);
		put(&w, &r, 1);
		n = seg_bases(dir, base, 64);
		char name[64];
		struct stat st;
		elog__seg_name(name, base[n - 1], SEG_EXT);
		char path[1100];
		snprintf(path, sizeof path, "%s/%s", dir, name);
		if (stat(path, &st) < 0)
			die("%s: cannot stat", path);
		if (n >= 3 && i + 1 >= base[n - 1] + 8 && (uint64_t)st.st_size + 600 <= DSEG)
			break;
		if (i > 1000)
			die("setup: the log did not take its shape");
	}
	uint64_t end = (uint64_t)i + 1, active = base[n - 1];
	unsigned char *p = slurp(dir, FN_WATERMARK, &len);
	if (len < WM_SIZE)
		die("%s: a short watermark", dir);
	memcpy(wm, p, WM_SIZE);
	free(p);
	/* Four more, written and never published. */
	for (unsigned k = 0; k < 4; k++) {
		gen_record(&g, ++i, &r);
		if (r.value_len > 40)
			r.value_len = 40;
		put(&w, &r, 0);
	}
	wr_close(&w);
	wl_faults = faults;
	if (seg_bases(dir, base, 64) != n)
		die("setup: the log rolled in its unpublished tail");
	spill(dir, FN_WATERMARK, wm, WM_SIZE);
	/* The writers' state of this boot, which named the later end, is
	 * gone (as after a reboot). */
	spill(dir, FN_LOCK, NULL, 0);
	expect_durable_below(end);
	dmg_old_end = end;

	uint64_t rs = seed * 0x9e3779b97f4a7c15ull + how;
	if (how & D_ABOVE) /* above it, a record after it */
		flip_record(dir, active, end + 1);
	if (how & D_ACTIVE) /* below the durable end, records after it */
		flip_record(dir, active, active + 1 + rng_next(&rs) % (end - active - 3));
	if (how & D_TORN) { /* the last record cut in its middle */
		char name[64];
		size_t size;
		elog__seg_name(name, active, SEG_EXT);
		unsigned char *d = slurp(dir, name, &len);
		size_t at = rec_at(d, len, end + 3, &size);
		spill(dir, name, d, at + size / 2);
		free(d);
	}
	if (how & D_CLOSED) { /* a record of the second segment, and the
				 * first one's header */
		char name[64];
		flip_record(dir, base[1], base[1] + (base[2] - base[1]) / 2);
		elog__seg_name(name, base[0], SEG_EXT);
		unsigned char *d = slurp(dir, name, &len);
		d[SEG_HDR - 5] ^= 0x5a;
		spill(dir, name, d, len);
		free(d);
	}
}

static void setup_repair(const char *dir, unsigned seed)
{
	setup_damaged(dir, seed, D_ACTIVE | D_ABOVE);
}

static void setup_torn(const char *dir, unsigned seed)
{
	setup_damaged(dir, seed, D_TORN);
}

static void setup_salvage(const char *dir, unsigned seed)
{
	setup_damaged(dir, seed, D_CLOSED | D_ACTIVE);
}

/* The repair (after salvage), then a writer that appends, its first
 * offset at or above the old durable end. */
static void repair_then_append(const char *dir, unsigned seed, int salvage)
{
	struct elog_options o = { .segment_bytes = DSEG };
	struct gen g = { 6, seed * 59ull + 13, 30, 0, 8, "", "" };
	struct elog_verify_result vr;
	struct elog_record r;
	char msg[ELOG_MSG_MAX];
	struct wr w;
	int rc;
	if (salvage && (rc = elog_salvage(dir, NULL, NULL, msg)) != 0)
		note_error("salvage", rc, NULL);
	if ((rc = elog_verify(dir, &(struct elog_verify_opts){ .flags = REPAIR_FLAGS(salvage) },
	                      &vr, msg)) != 0)
		note_error("repair", rc, NULL);
	else if (vr.remaining && !wl_faults)
		expect_violation("%s: damage left after the repair", dir);
	if (wr_open(&w, dir, &o) != 0)
		return;
	if (elog_next_offset(w.w) < dmg_old_end)
		expect_violation("the writer after the repair resumes at %llu, below the old "
		                 "durable end %llu",
		                 (unsigned long long)elog_next_offset(w.w),
		                 (unsigned long long)dmg_old_end);
	for (unsigned i = 0; i < 6; i++) {
		gen_record(&g, i, &r);
		if (put(&w, &r, i % 2 == 1) != 0 && w.failed)
			break;
	}
	wr_close(&w);
}

static void run_repair(const char *dir, unsigned seed)
{
	repair_then_append(dir, seed, 0);
}

static void run_salvage(const char *dir, unsigned seed)
{
	repair_then_append(dir, seed, 1);
}

void workload_prepare(const struct workload *w, const char *dir, unsigned seed)
{
	rm_rf(dir);
	expect_reset();
	if (w->setup)
		w->setup(dir, seed);
	else if (mkdir(dir, 0777) < 0)
		die("%s: cannot create", dir);
}

#define FAULTS_ALL ((1u << FC_N) - 1)
#define FAULTS_SYNC (1u << FC_SYNC)
const struct workload workloads[] = {
	{ "append", W_CREATE, { .segment_bytes = SEG }, NULL, run_append, FAULTS_ALL, 0 },
	{ "writers", W_CREATE, { .segment_bytes = SEG }, NULL, run_writers, 0, 0 },
	{ "consumers", 0, { .segment_bytes = SEG }, setup_small, run_consumers, 0, 0 },
	/* Compaction runs on logs created compact, as it must. */
	{ "maintenance",
	  W_COMPACT | W_RETAIN,
	  { .segment_bytes = SEG, .cleanup = ELOG_CLEANUP_COMPACT },
	  setup_big,
	  run_maint,
	  0,
	  0 },
	{ "serial",
	  W_CREATE | W_COMPACT | W_RETAIN,
	  { .segment_bytes = SEG, .cleanup = ELOG_CLEANUP_COMPACT },
	  NULL,
	  run_serial,
	  FAULTS_ALL,
	  0 },
	{ "zstd",
	  W_CREATE | W_ZSTD,
	  { .segment_bytes = 16 * 1024, .compression = ELOG_COMPRESS_ZSTD },
	  NULL,
	  run_zstd,
	  0,
	  0 },
	{ "handoff", W_CREATE, { .segment_bytes = SEG }, NULL, run_handoff, FAULTS_SYNC, 0 },
	{ "killed", W_CREATE, { .segment_bytes = SEG }, NULL, run_killed, FAULTS_SYNC, 0 },
	{ "taken", W_CREATE, { .segment_bytes = SEG }, NULL, run_taken, FAULTS_SYNC, 0 },
	{ "samegen", W_CREATE, { .segment_bytes = SEG }, NULL, run_samegen, FAULTS_SYNC, 0 },
	/* Repair and salvage of a damaged log: a failing fsync in the quick
	 * run, every call in the long one. */
	{ "repair",
	  W_DAMAGE,
	  { .segment_bytes = DSEG },
	  setup_repair,
	  run_repair,
	  FAULTS_SYNC,
	  FAULTS_ALL },
	{ "repair-torn",
	  W_DAMAGE,
	  { .segment_bytes = DSEG },
	  setup_torn,
	  run_repair,
	  FAULTS_SYNC,
	  FAULTS_ALL },
	{ "salvage",
	  W_DAMAGE | W_SALVAGE,
	  { .segment_bytes = DSEG },
	  setup_salvage,
	  run_salvage,
	  FAULTS_SYNC,
	  FAULTS_ALL },
};
const size_t nworkloads = sizeof workloads / sizeof workloads[0];
