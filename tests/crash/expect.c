/*
 * expect.c: what the workload did, and the checks of a log left by a crash
 * against it.
 *
 * The rules a log left by a crash must keep:
 * - every acknowledged record is there with the same bytes, unless
 *   retention (below the log's first record) or compaction (a newer record
 *   of its key was durable, or it is a tombstone) accounts for it;
 * - every record read is the one appended at its offset, offsets strictly
 *   increase, no gap is reported;
 * - the writer opens the log, and its next offset is at or above every
 *   durable end a reader could have seen (no offset is reused);
 * - a reader opened before recovery stops only at the durable end it reads
 *   (the watermark never points past the data);
 * - consumers.json parses, and each consumer's offset is one that was
 *   committed, at least the last acknowledged commit;
 * - elog_verify() finds no damage, before recovery and after, and after a
 *   maintenance run the log still reads the same.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash.h"
#include "internal.h"

/* A record written at an offset that an earlier, never acknowledged one
 * had: either may be in the log. */
struct cand {
	unsigned char *key, *val;
	size_t klen, vlen;
	int64_t ts;
	uint16_t schema;
};

struct expected {
	unsigned char *key, *val;
	size_t klen, vlen;
	int64_t ts;
	uint16_t schema;
	int written;
	size_t acked;       /* vfs_now() when acknowledged, or NEVER */
	uint64_t next_same; /* next offset with the same key, or UINT64_MAX */
	struct cand *alt;   /* other records written at this offset */
	size_t nalt;
};

struct span {
	size_t from, to;
};

struct commit {
	char name[16];
	uint64_t offset;
	size_t issued, done;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct expected *ex;
static size_t nex, capex;
static struct commit *cm;
static size_t ncm, capcm;
static int finalized;
static struct span *repairs;
static size_t nrepairs, caprepairs;
static unsigned long problems;

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 256;
	while (c < need)
		c *= 2;
	unsigned char *n = realloc(p, c * size);
	if (!n)
		die("out of memory");
	memset(n + *cap * size, 0, (c - *cap) * size);
	*cap = c;
	return n;
}

void expect_reset(void)
{
	for (size_t i = 0; i < nex; i++) {
		free(ex[i].key);
		free(ex[i].val);
		for (size_t j = 0; j < ex[i].nalt; j++) {
			free(ex[i].alt[j].key);
			free(ex[i].alt[j].val);
		}
		free(ex[i].alt);
	}
	if (ex)
		memset(ex, 0, capex * sizeof *ex);
	nex = 0;
	ncm = 0;
	nrepairs = 0;
	problems = 0;
	finalized = 0;
}

static unsigned char *dup_bytes(const void *p, size_t n)
{
	unsigned char *d = malloc(n ? n : 1);
	if (!d)
		die("out of memory");
	if (n)
		memcpy(d, p, n);
	return d;
}

static struct cand cand_of(const struct elog_record *r)
{
	return (struct cand){ dup_bytes(r->key, r->key_len),
		              dup_bytes(r->value, r->value_len),
		              r->key_len,
		              r->value_len,
		              r->ts_ms,
		              r->schema };
}

static int cand_is(const struct cand *c, const struct elog_record *r)
{
	return r->key_len == c->klen && r->value_len == c->vlen && r->ts_ms == c->ts &&
	       r->schema == c->schema && (!c->klen || memcmp(r->key, c->key, c->klen) == 0) &&
	       (!c->vlen || memcmp(r->value, c->val, c->vlen) == 0);
}

static struct cand main_cand(const struct expected *e)
{
	return (struct cand){ e->key, e->val, e->klen, e->vlen, e->ts, e->schema };
}

void expect_written(uint64_t offset, const struct elog_record *r)
{
	pthread_mutex_lock(&mu);
	ex = grow(ex, &capex, offset + 1, sizeof *ex);
	struct expected *e = &ex[offset];
	if (e->written) {
		/* Several handles: a batch that was never acknowledged was cut
		 * (after a failed sync) and its offsets given again. */
		struct cand *n = realloc(e->alt, (e->nalt + 1) * sizeof *n);
		if (!n)
			die("out of memory");
		e->alt = n;
		e->alt[e->nalt++] = cand_of(r);
		pthread_mutex_unlock(&mu);
		return;
	}
	struct cand c = cand_of(r);
	e->written = 1;
	e->key = c.key;
	e->klen = c.klen;
	e->val = c.val;
	e->vlen = c.vlen;
	e->ts = c.ts;
	e->schema = c.schema;
	e->acked = NEVER;
	if (offset + 1 > nex)
		nex = offset + 1;
	pthread_mutex_unlock(&mu);
}

void expect_acked(uint64_t offset, const struct elog_record *r)
{
	size_t now = vfs_now();
	pthread_mutex_lock(&mu);
	if (offset >= nex || !ex[offset].written)
		die("acknowledged offset %llu was never appended", (unsigned long long)offset);
	struct expected *e = &ex[offset];
	struct cand m = main_cand(e);
	if (!cand_is(&m, r)) {
		size_t j = 0;
		while (j < e->nalt && !cand_is(&e->alt[j], r))
			j++;
		if (j == e->nalt)
			die("acknowledged offset %llu holds a record never written there",
			    (unsigned long long)offset);
		if (e->acked != NEVER) {
			problems++;
			fprintf(stderr, "crashsim: offset %llu acknowledged for two records\n",
			        (unsigned long long)offset);
			pthread_mutex_unlock(&mu);
			return;
		}
		/* The acknowledged one becomes the record of the offset. */
		struct cand c = e->alt[j];
		e->alt[j] = m;
		e->key = c.key;
		e->klen = c.klen;
		e->val = c.val;
		e->vlen = c.vlen;
		e->ts = c.ts;
		e->schema = c.schema;
	}
	if (e->acked == NEVER)
		e->acked = now;
	pthread_mutex_unlock(&mu);
}

void expect_repair(size_t from, size_t to)
{
	pthread_mutex_lock(&mu);
	repairs = grow(repairs, &caprepairs, nrepairs + 1, sizeof *repairs);
	repairs[nrepairs++] = (struct span){ from, to };
	pthread_mutex_unlock(&mu);
}

unsigned long expect_problems(void)
{
	return problems;
}

void expect_all_durable(void)
{
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nex; i++)
		if (ex[i].written && ex[i].acked == NEVER)
			ex[i].acked = 0;
	pthread_mutex_unlock(&mu);
}

void expect_durable_below(uint64_t end)
{
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nex && i < end; i++)
		if (ex[i].written && ex[i].acked == NEVER)
			ex[i].acked = 0;
	pthread_mutex_unlock(&mu);
}

void expect_violation(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&mu);
	problems++;
	fprintf(stderr, "crashsim: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&mu);
}

size_t expect_commit_begin(const char *name, uint64_t offset)
{
	size_t now = vfs_now();
	pthread_mutex_lock(&mu);
	cm = grow(cm, &capcm, ncm + 1, sizeof *cm);
	struct commit *c = &cm[ncm];
	snprintf(c->name, sizeof c->name, "%s", name);
	c->offset = offset;
	c->issued = now;
	c->done = NEVER;
	size_t id = ncm++;
	pthread_mutex_unlock(&mu);
	return id;
}

void expect_commit_done(size_t id)
{
	size_t now = vfs_now();
	pthread_mutex_lock(&mu);
	cm[id].done = now;
	pthread_mutex_unlock(&mu);
}

uint64_t expect_count(void)
{
	return nex;
}

uint64_t expect_acked_end(size_t k)
{
	uint64_t end = 0;
	for (size_t i = 0; i < nex; i++)
		if (ex[i].written && ex[i].acked <= k)
			end = i + 1;
	return end;
}

/* For compaction's excuse: each keyed record's next record of its key. */
static void finalize(void)
{
	if (finalized)
		return;
	for (size_t i = 0; i < nex; i++) {
		ex[i].next_same = UINT64_MAX;
		if (!ex[i].written || ex[i].klen == 0)
			continue;
		for (size_t j = i + 1; j < nex; j++)
			if (ex[j].written && ex[j].klen == ex[i].klen &&
			    memcmp(ex[j].key, ex[i].key, ex[i].klen) == 0) {
				ex[i].next_same = j;
				break;
			}
	}
	finalized = 1;
}

/* ---- the checks ---- */

struct ctx {
	const struct workload *w;
	const char *dir, *where;
	size_t k;
	unsigned fails;
	uint64_t after_crash; /* offset of the record appended after
	                           * recovery, or UINT64_MAX */
	uint64_t visible;     /* the highest durable end published */
};

static void fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	c->fails++;
	fprintf(stderr, "crashsim: %s: %s: ", c->w->name, c->where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char AFTER[] = "written after the crash";

static int same(const struct elog_record *r, const struct expected *e)
{
	return r->key_len == e->klen && r->value_len == e->vlen && r->ts_ms == e->ts &&
	       r->schema == e->schema && (!e->klen || memcmp(r->key, e->key, e->klen) == 0) &&
	       (!e->vlen || memcmp(r->value, e->val, e->vlen) == 0);
}

/* Whether compaction, having seen the log durable up to durable, may have
 * removed offset o: a keyed record with a newer one of its key below that,
 * or a tombstone. */
static int compacted(const struct ctx *c, uint64_t o, uint64_t durable)
{
	const struct expected *e = &ex[o];
	return (c->w->flags & W_COMPACT) && e->written && e->klen &&
	       (e->vlen == 0 || e->next_same < durable);
}

/* Reads the whole log; marks what it finds in seen (nex + 1 entries).
 * Returns the first offset read (UINT64_MAX when none), or stops early. */
static uint64_t read_all(struct ctx *c, const char *stage, unsigned char *seen, int before_recovery)
{
	elog_reader *r = NULL;
	struct elog_record rec;
	uint64_t first = UINT64_MAX, prev = 0;
	int any = 0, rc = elog_reader_open(&r, c->dir);
	if (rc != 0) {
		if (!(rc == ELOG_NOTLOG && before_recovery && (c->w->flags & W_CREATE) &&
		      expect_acked_end(c->k) == 0))
			fail(c, "%s: reader_open: %s", stage, elog_strerror(rc));
		if (r)
			elog_reader_close(r);
		return first;
	}
	if ((rc = elog_reader_seek_begin(r)) != 0 && rc != ELOG_END) {
		fail(c, "%s: seek_begin: %s (%s)", stage, elog_strerror(rc), elog_reader_errmsg(r));
		elog_reader_close(r);
		return first;
	}
	for (;;) {
		rc = elog_reader_next(r, &rec);
		if (rc == ELOG_END)
			break;
		if (rc != 0) {
			fail(c, "%s: reader_next after offset %llu: %s (%s)", stage,
			     (unsigned long long)prev, elog_strerror(rc), elog_reader_errmsg(r));
			break;
		}
		if (any && rec.offset <= prev) {
			fail(c, "%s: offset %llu read after %llu", stage,
			     (unsigned long long)rec.offset, (unsigned long long)prev);
			break;
		}
		if (!any)
			first = rec.offset;
		any = 1;
		prev = rec.offset;
		if (rec.offset == c->after_crash) {
			if (rec.value_len != sizeof AFTER - 1 ||
			    memcmp(rec.value, AFTER, rec.value_len))
				fail(c, "%s: offset %llu is not the record written after the crash",
				     stage, (unsigned long long)rec.offset);
			continue;
		}
		if (rec.offset >= nex || !ex[rec.offset].written) {
			fail(c, "%s: offset %llu was never appended", stage,
			     (unsigned long long)rec.offset);
			continue;
		}
		if (!same(&rec, &ex[rec.offset])) {
			const struct expected *e = &ex[rec.offset];
			size_t j = 0;
			while (j < e->nalt && !cand_is(&e->alt[j], &rec))
				j++;
			if (j == e->nalt)
				fail(c, "%s: offset %llu reads different bytes than were appended",
				     stage, (unsigned long long)rec.offset);
			continue; /* one never acknowledged: not the offset's own */
		}
		if (seen)
			seen[rec.offset] = 1;
	}
	uint64_t pos = elog_reader_position(r), end = elog_reader_durable_end(r);
	for (uint64_t o = pos; before_recovery && o < end; o++)
		if (o >= nex || !compacted(c, o, c->visible)) {
			fail(c, "%s: reading stopped at %llu below the durable end %llu", stage,
			     (unsigned long long)pos, (unsigned long long)end);
			break;
		}
	elog_reader_close(r);
	return first;
}

/* Every acknowledged record must be among those read, unless retention or
 * compaction accounts for its absence. */
static void check_present(struct ctx *c, const char *stage, const unsigned char *seen,
                          uint64_t first, uint64_t durable)
{
	unsigned lost = 0;
	for (size_t o = 0; o < nex; o++) {
		const struct expected *e = &ex[o];
		if (!e->written || e->acked > c->k || seen[o])
			continue;
		if ((c->w->flags & W_RETAIN) && o < first)
			continue;
		if (compacted(c, o, durable))
			continue;
		if (lost++ < 3)
			fail(c, "%s: acknowledged offset %zu is lost", stage, o);
	}
	if (lost > 3)
		fail(c, "%s: %u acknowledged records lost in all", stage, lost);
}

static void check_consumers(struct ctx *c, uint64_t end)
{
	struct elog_consumer *list = NULL;
	size_t n = 0;
	char msg[ELOG_MSG_MAX];
	int rc = elog_consumer_list(c->dir, &list, &n, msg);
	if (rc != 0) {
		fail(c, "consumers: %s", msg);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		int known = 0;
		uint64_t least = 0;
		for (size_t j = 0; j < ncm; j++) {
			if (strcmp(cm[j].name, list[i].name) != 0)
				continue;
			if (cm[j].offset == list[i].offset && cm[j].issued <= c->k)
				known = 1;
			if (cm[j].done <= c->k && cm[j].offset > least)
				least = cm[j].offset;
		}
		if (!known)
			fail(c, "consumer %s at %llu: never committed", list[i].name,
			     (unsigned long long)list[i].offset);
		if (list[i].offset < least)
			fail(c, "consumer %s at %llu: below its acknowledged commit %llu",
			     list[i].name, (unsigned long long)list[i].offset,
			     (unsigned long long)least);
		if (list[i].offset >= end)
			fail(c, "consumer %s at %llu: at or beyond the durable end %llu",
			     list[i].name, (unsigned long long)list[i].offset,
			     (unsigned long long)end);
	}
	for (size_t j = 0; j < ncm; j++) {
		int found = 0;
		if (cm[j].done > c->k)
			continue;
		for (size_t i = 0; i < n; i++)
			found |= strcmp(cm[j].name, list[i].name) == 0;
		if (!found) {
			fail(c, "consumer %s: its acknowledged commit is lost", cm[j].name);
			break;
		}
	}
	free(list);
}

/* Whether dir holds files an interrupted maintenance run left: temporary
 * copies, or segments below the recorded start. */
static int has_leftovers(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;
	if (!d)
		return 0;
	while (!found && (de = readdir(d)) != NULL)
		found = strstr(de->d_name, ".compact") || strstr(de->d_name, ".tmp") ||
		        strcmp(de->d_name, "start") == 0;
	closedir(d);
	return found;
}

static void on_problem(void *arg, const struct elog_problem *p)
{
	struct ctx *c = arg;
	if (p->kind == ELOG_PROBLEM_DAMAGE)
		fail(c, "verify: %s: %s", p->file, p->text);
}

/* ---- a damaged log, after a power loss during its repair ----
 *
 * The workloads of W_DAMAGE start from a log whose active segment has
 * damage below its durable end and above it, or a torn tail, or whose
 * closed segments are damaged (W_SALVAGE); they record its repair and
 * appends after it.  A power loss may leave the repair half done: a reader
 * may stop at the damage and the writer may refuse to open, until the
 * repair runs again.  Then offsets are forever (issue 22):
 * - the writer opens, and the offsets it hands out are at or above every
 *   durable end a reader could have seen, the old one included;
 * - every record read is the one appended at its offset: no offset names
 *   two records, and offsets strictly increase;
 * - every acknowledged record is read, or lies in a gap readers report
 *   with cause damage (a range recorded in "salvaged"): nothing is lost
 *   without a word;
 * - elog_verify() then finds no damage, but for what salvaged records. */

struct gaps {
	uint64_t (*v)[2];
	size_t n, cap;
};

static int in_gap(const struct gaps *g, uint64_t o)
{
	for (size_t i = 0; i < g->n; i++)
		if (o >= g->v[i][0] && o <= g->v[i][1])
			return 1;
	return 0;
}

/* Reads the log from its first record, going on past the gaps of damage
 * it reports (kept in g), marking in seen what it finds.  strict: an
 * error, or a gap of any other cause, is a failure; else reading stops
 * there quietly (a log not yet repaired). */
static void read_damaged(struct ctx *c, const char *stage, unsigned char *seen, struct gaps *g,
                         int strict)
{
	elog_reader *r = NULL;
	struct elog_record rec;
	uint64_t prev = 0;
	int any = 0, rc = elog_reader_open(&r, c->dir);
	if (rc != 0) {
		if (strict)
			fail(c, "%s: reader_open: %s", stage,
			     r ? elog_reader_errmsg(r) : elog_strerror(rc));
		if (r)
			elog_reader_close(r);
		return;
	}
	rc = elog_reader_seek_begin(r);
	if (rc != 0 && rc != ELOG_END) {
		if (strict)
			fail(c, "%s: seek_begin: %s", stage, elog_reader_errmsg(r));
		elog_reader_close(r);
		return;
	}
	for (unsigned ngaps = 0;;) {
		rc = elog_reader_next(r, &rec);
		if (rc == ELOG_END)
			break;
		if (rc == ELOG_GAP) {
			uint64_t first, last;
			int cause = elog_reader_gap_cause(r);
			elog_reader_gap(r, &first, &last);
			if (cause != ELOG_GAP_DAMAGE) {
				if (strict)
					fail(c, "%s: a gap of cause %d, offsets %llu to %llu",
					     stage, cause, (unsigned long long)first,
					     (unsigned long long)last);
				break;
			}
			if (first > last || (any && first <= prev) || ++ngaps > 1000) {
				fail(c, "%s: a gap of offsets %llu to %llu after offset %llu",
				     stage, (unsigned long long)first, (unsigned long long)last,
				     (unsigned long long)prev);
				break;
			}
			if (g) {
				if (g->n == g->cap) {
					g->cap = g->cap ? g->cap * 2 : 8;
					void *v = realloc(g->v, g->cap * sizeof *g->v);
					if (!v)
						die("out of memory");
					g->v = v;
				}
				g->v[g->n][0] = first;
				g->v[g->n++][1] = last;
			}
			continue;
		}
		if (rc != 0) {
			if (strict)
				fail(c, "%s: reader_next after offset %llu: %s (%s)", stage,
				     (unsigned long long)prev, elog_strerror(rc),
				     elog_reader_errmsg(r));
			break;
		}
		if (any && rec.offset <= prev) {
			fail(c, "%s: offset %llu read after %llu", stage,
			     (unsigned long long)rec.offset, (unsigned long long)prev);
			break;
		}
		if (g && in_gap(g, rec.offset))
			fail(c, "%s: offset %llu read, though a gap of damage named it", stage,
			     (unsigned long long)rec.offset);
		any = 1;
		prev = rec.offset;
		if (rec.offset == c->after_crash) {
			if (rec.value_len != sizeof AFTER - 1 ||
			    memcmp(rec.value, AFTER, rec.value_len))
				fail(c,
				     "%s: offset %llu names a record other than the one written "
				     "there after the crash",
				     stage, (unsigned long long)rec.offset);
			else if (seen)
				seen[nex] = 1;
			continue;
		}
		if (rec.offset >= nex || !ex[rec.offset].written) {
			fail(c, "%s: offset %llu was never appended", stage,
			     (unsigned long long)rec.offset);
			continue;
		}
		if (!same(&rec, &ex[rec.offset])) {
			const struct expected *e = &ex[rec.offset];
			size_t j = 0;
			while (j < e->nalt && !cand_is(&e->alt[j], &rec))
				j++;
			if (j == e->nalt)
				fail(c,
				     "%s: offset %llu names a record other than the one appended "
				     "at it",
				     stage, (unsigned long long)rec.offset);
			continue; /* one never acknowledged: not the offset's own */
		}
		if (seen)
			seen[rec.offset] = 1;
	}
	elog_reader_close(r);
}

/* A repair as the workload ran it: elog-verify --repair, after
 * elog_salvage() for --salvage. */
static int repair_again(struct ctx *c, const char *stage)
{
	char msg[ELOG_MSG_MAX];
	struct elog_verify_result vr;
	int rc;
	if ((c->w->flags & W_SALVAGE) && (rc = elog_salvage(c->dir, NULL, NULL, msg)) != 0) {
		fail(c, "%s: salvage: %s", stage, msg);
		return rc;
	}
	if ((rc = elog_verify(c->dir,
	                      &(struct elog_verify_opts){
	                              .flags = REPAIR_FLAGS(c->w->flags & W_SALVAGE) },
	                      &vr, msg)) != 0)
		fail(c, "%s: repair: %s", stage, msg);
	return rc;
}

/* Damage verify reports after the repair: none but the losses it
 * recorded. */
static void on_damage_left(void *arg, const struct elog_problem *p)
{
	struct ctx *c = arg;
	if (p->kind == ELOG_PROBLEM_DAMAGE && strcmp(p->file, FN_SALVAGED) != 0)
		fail(c, "verify after the repair: %s: %s", p->file, p->text);
}

static unsigned check_damaged(const struct workload *w, const char *dir, size_t k, uint64_t visible,
                              const char *where)
{
	struct ctx c = { w, dir, where, k, 0, UINT64_MAX, visible };
	struct gaps g = { NULL, 0, 0 };
	unsigned char *seen = calloc(nex + 1, 1);
	uint64_t acked_end = expect_acked_end(k), next, off = 0;
	struct elog_options opt = w->opt;
	struct elog_verify_result vr;
	char msg[ELOG_MSG_MAX];
	elog *wr = NULL;
	int rc;
	if (!seen)
		die("out of memory");

	/* Before any recovery: what a reader returns is right, wherever it
	 * stops. */
	read_damaged(&c, "reader before recovery", NULL, NULL, 0);

	/* The writer's recovery on open, which may refuse (damage below the
	 * durable end) but never goes below it. */
	if ((rc = elog_open(&wr, dir, &opt)) == 0) {
		if ((next = elog_next_offset(wr)) < visible)
			fail(&c,
			     "writer open before the repair: next offset %llu below the durable "
			     "end %llu a reader saw",
			     (unsigned long long)next, (unsigned long long)visible);
		if ((rc = elog_close(wr)) != 0)
			fail(&c, "elog_close before the repair: %s", elog_strerror(rc));
	} else {
		if (rc != ELOG_CORRUPT)
			fail(&c, "writer open before the repair: %s",
			     wr ? elog_errmsg(wr) : elog_strerror(rc));
		elog_close(wr);
	}
	wr = NULL;
	/* What that writer published, readers may have seen. */
	elog_reader *rd = NULL;
	if (elog_reader_open(&rd, dir) == 0 && elog_reader_durable_end(rd) > visible)
		c.visible = visible = elog_reader_durable_end(rd);
	elog_reader_close(rd);

	/* The repair again, then the writer. */
	if (repair_again(&c, "after the crash") != 0)
		goto out;
	if ((rc = elog_open(&wr, dir, &opt)) != 0) {
		fail(&c, "elog_open after the repair: %s",
		     wr ? elog_errmsg(wr) : elog_strerror(rc));
		elog_close(wr);
		goto out;
	}
	next = elog_next_offset(wr);
	if (next < acked_end)
		fail(&c, "next offset %llu below the acknowledged end %llu",
		     (unsigned long long)next, (unsigned long long)acked_end);
	if (next < visible)
		fail(&c,
		     "next offset %llu below the durable end %llu a reader saw (reused offsets)",
		     (unsigned long long)next, (unsigned long long)visible);
	struct elog_record rec = { 0, 1, 0, NULL, 0, AFTER, sizeof AFTER - 1 };
	if ((rc = elog_append(wr, &rec, &off)) != 0 || (rc = elog_sync(wr)) != 0)
		fail(&c, "append after the repair: %s", elog_errmsg(wr));
	else if (off != next)
		fail(&c, "the record after the repair got offset %llu, not %llu",
		     (unsigned long long)off, (unsigned long long)next);
	else
		c.after_crash = off;
	if ((rc = elog_close(wr)) != 0)
		fail(&c, "elog_close: %s", elog_strerror(rc));

	read_damaged(&c, "after the repair", seen, &g, 1);
	unsigned lost = 0;
	for (size_t o = 0; o < nex; o++) {
		if (!ex[o].written || ex[o].acked > k || seen[o] || in_gap(&g, o))
			continue;
		if (lost++ < 3)
			fail(&c,
			     "after the repair: acknowledged offset %zu is lost, and no gap of "
			     "damage names it",
			     o);
	}
	if (lost > 3)
		fail(&c, "after the repair: %u acknowledged records lost in all", lost);
	if (c.after_crash != UINT64_MAX && !seen[nex])
		fail(&c, "after the repair: the record appended at %llu is not read",
		     (unsigned long long)c.after_crash);

	struct elog_verify_opts hooks = { .problem = on_damage_left, .arg = &c };
	if ((rc = elog_verify(dir, &hooks, &vr, msg)) != 0)
		fail(&c, "verify after the repair: %s", msg);
out:
	free(g.v);
	free(seen);
	return c.fails;
}

unsigned check_state(const struct workload *w, const char *dir, size_t k, uint64_t visible,
                     const char *where, int reboot)
{
	if (w->flags & W_DAMAGE) {
		if (reboot)
			vfs_reboot();
		finalize();
		return check_damaged(w, dir, k, visible, where);
	}
	struct ctx c = { w, dir, where, k, 0, UINT64_MAX, visible };
	unsigned char *seen;
	uint64_t first, acked_end;
	elog *wr = NULL;
	int rc;

	if (reboot)
		vfs_reboot();
	finalize();
	acked_end = expect_acked_end(k);
	seen = calloc(nex + 1, 1);
	if (!seen)
		die("out of memory");

	/* A reader before the writer recovers anything. */
	read_all(&c, "reader before recovery", NULL, 1);

	/* elog-verify run before any writer reopens the log (a cron job after
	 * the power came back) finds nothing to call damage. */
	struct elog_verify_opts hooks = { .problem = on_problem, .arg = &c };
	struct elog_verify_result vr;
	char msg[ELOG_MSG_MAX];
	if ((rc = elog_verify(dir, &hooks, &vr, msg)) != 0 &&
	    !(rc == ELOG_NOTLOG && (w->flags & W_CREATE) && acked_end == 0))
		fail(&c, "verify before recovery: %s", msg);

	/* The writer recovers. */
	struct elog_options opt = w->opt;
	opt.create = 1;
	if ((rc = elog_open(&wr, dir, &opt)) != 0) {
		fail(&c, "elog_open: %s", wr ? elog_errmsg(wr) : elog_strerror(rc));
		elog_close(wr);
		free(seen);
		return c.fails;
	}
	uint64_t next = elog_next_offset(wr);
	if (next < acked_end)
		fail(&c, "next offset %llu below the acknowledged end %llu",
		     (unsigned long long)next, (unsigned long long)acked_end);
	if (next < visible)
		fail(&c,
		     "next offset %llu below the durable end %llu a reader saw (reused offsets)",
		     (unsigned long long)next, (unsigned long long)visible);

	first = read_all(&c, "after recovery", seen, 0);
	check_present(&c, "after recovery", seen, first, visible);

	/* New records continue the log. */
	struct elog_record rec = { 0, 1, 0, NULL, 0, AFTER, sizeof AFTER - 1 };
	uint64_t off = 0;
	if ((rc = elog_append(wr, &rec, &off)) != 0 || (rc = elog_sync(wr)) != 0)
		fail(&c, "append after recovery: %s", elog_errmsg(wr));
	else if (off != next)
		fail(&c, "the record after recovery got offset %llu, not %llu",
		     (unsigned long long)off, (unsigned long long)next);
	c.after_crash = off;
	if ((rc = elog_close(wr)) != 0)
		fail(&c, "elog_close: %s", elog_strerror(rc));

	check_consumers(&c, next + 1);

	if ((rc = elog_verify(dir, &hooks, &vr, msg)) != 0)
		fail(&c, "verify: %s", msg);

	/* The next maintenance run cleans up what an interrupted one left,
	 * and the log reads the same afterwards. */
	if ((w->flags & (W_COMPACT | W_RETAIN)) && has_leftovers(dir)) {
		struct elog_compact_opts co = { 0 };
		struct elog_compact_result cr;
		char mmsg[ELOG_MSG_MAX];
		co.grace_ms = ELOG_COMPACT_GRACE_NONE;
		if ((rc = elog_compact(dir, &co, &cr, mmsg)) != 0)
			fail(&c, "compaction after the crash: %s", mmsg);
		/* It saw every record recovery kept, up to next. */
		memset(seen, 0, nex + 1);
		first = read_all(&c, "after compaction", seen, 0);
		check_present(&c, "after compaction", seen, first, next);
		if ((rc = elog_verify(dir, &hooks, &vr, msg)) != 0)
			fail(&c, "verify after compaction: %s", msg);
	}
	free(seen);
	return c.fails;
}

/* ---- the checks over the recorded operations ----
 *
 * Beside the states a power loss leaves, the recording itself must keep
 * the rules the protocol promises, at the moment of each operation, with
 * the model of power.c saying what is durable then:
 * (a) a watermark write never lowers the durable end (but in a repair);
 * (b) every record below the durable end a watermark write publishes is
 *     durable: whole and intact in the durable copy of its segment, which
 *     the durable directory names, before the first bad record;
 * (c) every record is durable when it is acknowledged.
 * A record that retention (below the first durable segment) or
 * compaction (a newer one of its key below the end, or a tombstone) may
 * have removed is excused. */

struct segscan {
	int ino;
	unsigned long ver;
	unsigned mark;
	uint64_t *offs;
	size_t n;
};

struct olog {
	const struct workload *w;
	const char *where;
	unsigned fails;
	unsigned *dur;    /* per offset: durable copies of its record */
	unsigned *durany; /* of any record written at it */
	struct segscan *sc;
	size_t nsc, capsc;
	unsigned epoch;
	uint64_t min_base;
	struct gaps holes;   /* the durable "salvaged" file's ranges */
	unsigned char *bad0; /* W_DAMAGE: offsets below the durable end
	                         * whose record the starting log did not hold
	                         * intact (check_damaged() judges them) */
};

static void ofail(struct olog *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ofail(struct olog *o, const char *fmt, ...)
{
	va_list ap;
	if (o->fails++ >= 5)
		return;
	fprintf(stderr, "crashsim: %s: %s: ", o->w->name, o->where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Whether the record read is the one expected at its offset (for a
 * compressed segment, its key, time and schema). */
static int record_is(const struct elog_record *r, const struct cand *e, int plain)
{
	if (plain)
		return cand_is(e, r);
	return r->key_len == e->klen && r->ts_ms == e->ts && r->schema == e->schema &&
	       (!e->klen || memcmp(r->key, e->key, e->klen) == 0);
}

static void scan_marks(struct olog *o, struct segscan *s, int add)
{
	for (size_t i = 0; i < s->n; i++) {
		uint64_t off = s->offs[i] >> 1;
		o->durany[off] += add ? 1u : (unsigned)-1;
		if (s->offs[i] & 1)
			o->dur[off] += add ? 1u : (unsigned)-1;
	}
	if (!add)
		s->n = 0;
}

static void scan_segment(const char *name, int ino, unsigned long ver, const unsigned char *d,
                         size_t len, void *arg)
{
	struct olog *o = arg;
	uint64_t base;
	if (!elog__seg_parse_name(name, SEG_EXT, &base))
		return;
	if (base < o->min_base)
		o->min_base = base;
	struct segscan *s = NULL;
	for (size_t i = 0; i < o->nsc && !s; i++)
		if (o->sc[i].ino == ino)
			s = &o->sc[i];
	if (!s) {
		o->sc = grow(o->sc, &o->capsc, o->nsc + 1, sizeof *o->sc);
		s = &o->sc[o->nsc++];
		*s = (struct segscan){ ino, ver + 1, 0, NULL, 0 };
	}
	s->mark = o->epoch;
	if (s->ver == ver)
		return;
	scan_marks(o, s, 0);
	s->ver = ver;
	if (len < SEG_HDR)
		return;
	int plain = SEG_CODEC(get32(d + SEG_AT_FLAGS)) == CODEC_NONE;
	size_t cap = 0;
	for (size_t pos = SEG_HDR; pos < len;) {
		struct elog_record r;
		size_t size;
		if (elog__rec_decode(d + pos, len - pos, &r, &size) != 0)
			break; /* recovery cuts here: nothing after it counts */
		pos += size;
		if (r.offset >= nex || !ex[r.offset].written)
			continue;
		const struct expected *e = &ex[r.offset];
		struct cand m = main_cand(e);
		int is_main = record_is(&r, &m, plain), any = is_main;
		for (size_t j = 0; j < e->nalt && !any; j++)
			any = record_is(&r, &e->alt[j], plain);
		if (!any)
			continue;
		s->offs = grow(s->offs, &cap, s->n + 1, sizeof *s->offs);
		s->offs[s->n++] = r.offset << 1 | (unsigned)is_main;
	}
	scan_marks(o, s, 1);
}

/* The ranges of the durable "salvaged" file (elog(5)): its first line,
 * then "FIRST LAST MS" lines; a torn last line is not read. */
static void scan_holes(const char *name, int ino, unsigned long ver, const unsigned char *d,
                       size_t len, void *arg)
{
	struct olog *o = arg;
	static const char magic[] = "elog-salvaged 1\n";
	(void)ino;
	(void)ver;
	if (strcmp(name, FN_SALVAGED) != 0 || len < sizeof magic - 1 ||
	    memcmp(d, magic, sizeof magic - 1) != 0)
		return;
	for (size_t pos = sizeof magic - 1; pos < len;) {
		const unsigned char *nl = memchr(d + pos, '\n', len - pos);
		char line[128];
		unsigned long long a, b;
		if (!nl || (size_t)(nl - d) - pos >= sizeof line)
			break;
		memcpy(line, d + pos, (size_t)(nl - d) - pos);
		line[(size_t)(nl - d) - pos] = '\0';
		pos = (size_t)(nl - d) + 1;
		if (sscanf(line, "%llu %llu", &a, &b) != 2)
			break;
		if (o->holes.n == o->holes.cap) {
			o->holes.cap = o->holes.cap ? o->holes.cap * 2 : 8;
			void *v = realloc(o->holes.v, o->holes.cap * sizeof *o->holes.v);
			if (!v)
				die("out of memory");
			o->holes.v = v;
		}
		o->holes.v[o->holes.n][0] = a;
		o->holes.v[o->holes.n++][1] = b;
	}
}

/* Bring o->dur up to the model's durable state. */
static void durable_now(struct olog *o, struct model *m)
{
	o->epoch++;
	o->min_base = UINT64_MAX;
	model_durable_each(m, scan_segment, o);
	o->holes.n = 0;
	if (o->w->flags & W_DAMAGE)
		model_durable_each(m, scan_holes, o);
	for (size_t i = 0; i < o->nsc;) {
		if (o->sc[i].mark == o->epoch) {
			i++;
			continue;
		}
		scan_marks(o, &o->sc[i], 0);
		free(o->sc[i].offs);
		o->sc[i] = o->sc[--o->nsc];
	}
}

static int excused(const struct olog *o, uint64_t off, uint64_t end)
{
	const struct expected *e = &ex[off];
	if ((o->w->flags & W_RETAIN) && off < o->min_base)
		return 1;
	/* A loss the repair recorded, durably, as a gap of damage, or
	 * damage the log started with. */
	if (in_gap(&o->holes, off) || (o->bad0 && o->bad0[off]))
		return 1;
	return (o->w->flags & W_COMPACT) && e->written && e->klen &&
	       (e->vlen == 0 || e->next_same < end);
}

static int in_repair(size_t k)
{
	for (size_t i = 0; i < nrepairs; i++)
		if (k >= repairs[i].from && k < repairs[i].to)
			return 1;
	return 0;
}

static int by_ack(const void *a, const void *b)
{
	size_t x = ex[*(const uint64_t *)a].acked, y = ex[*(const uint64_t *)b].acked;
	return x < y ? -1 : x > y;
}

unsigned expect_oplog(const struct workload *w, const struct vfs_log *log, const char *where)
{
	struct olog o = {
		w, where, 0, NULL, NULL, NULL, 0, 0, 0, UINT64_MAX, { NULL, 0, 0 }, NULL
	};
	struct model *m = model_new(log);
	uint64_t *acks = malloc((nex + 1) * sizeof *acks);
	size_t nacks = 0, a = 0;
	unsigned long ver = (unsigned long)-1;
	uint64_t last_end = 0;
	size_t last_at = 0;
	int any_wm = 0;

	finalize();
	o.dur = calloc(nex + 1, sizeof *o.dur);
	o.durany = calloc(nex + 1, sizeof *o.durany);
	if (!acks || !o.dur || !o.durany)
		die("out of memory");
	for (uint64_t i = 0; i < nex; i++)
		if (ex[i].written && ex[i].acked != NEVER && ex[i].acked > 0)
			acks[nacks++] = i;
	qsort(acks, nacks, sizeof *acks, by_ack);
	if (w->flags & W_DAMAGE) {
		uint64_t end = expect_acked_end(0);
		if (!(o.bad0 = calloc(nex + 1, 1)))
			die("out of memory");
		durable_now(&o, m);
		for (uint64_t i = 0; i < end; i++)
			o.bad0[i] = !o.durany[i];
	}
	if (getenv("CRASHSIM_OPS"))
		for (size_t k = 0; k < log->nops; k++) {
			const struct op *op = &log->ops[k];
			static const char *const kn[] = { "write",  "trunc",  "fsync",  "link",
				                          "rename", "unlink", "dirsync" };
			fprintf(stderr, "op %zu: %s ino %d off %llu len %zu %s%s%s wm %llu\n", k,
			        kn[op->kind], op->ino, (unsigned long long)op->off, op->len,
			        op->name ? op->name : "", op->name2 ? " -> " : "",
			        op->name2 ? op->name2 : "", (unsigned long long)op->wm_end);
		}
	for (size_t k = 0; k <= log->nops; k++) {
		const struct op *op = k < log->nops ? &log->ops[k] : NULL;
		int is_wm = op && op->kind == OP_WRITE && op->wm_end;
		if ((a < nacks && ex[acks[a]].acked <= k) || is_wm) {
			if (model_version(m) != ver) {
				durable_now(&o, m);
				ver = model_version(m);
			}
		}
		/* (c) Acknowledged after k operations: durable then. */
		for (; a < nacks && ex[acks[a]].acked <= k; a++) {
			uint64_t off = acks[a];
			if (!o.dur[off] && !excused(&o, off, off + 1))
				ofail(&o,
				      "offset %llu was acknowledged after operation %zu, when it "
				      "was not durable",
				      (unsigned long long)off, k);
		}
		if (op && !is_wm)
			model_step(m, k);
		if (!is_wm)
			continue;
		model_step(m, k);
		/* (a) The durable end never goes back. */
		if (any_wm && op->wm_end < last_end && !in_repair(k))
			ofail(&o,
			      "operation %zu: the watermark went back from %llu (operation %zu) "
			      "to %llu",
			      k, (unsigned long long)last_end, last_at,
			      (unsigned long long)op->wm_end);
		any_wm = 1;
		last_end = op->wm_end;
		last_at = k;
		/* (b) What it publishes is durable. */
		for (uint64_t off = 0; off < op->wm_end; off++)
			if (off >= nex || !ex[off].written) {
				ofail(&o,
				      "operation %zu: the watermark publishes %llu, but offset %llu "
				      "was never appended",
				      k, (unsigned long long)op->wm_end, (unsigned long long)off);
				break;
			} else if (!o.durany[off] && !excused(&o, off, op->wm_end)) {
				ofail(&o,
				      "operation %zu: the watermark publishes %llu, but offset %llu "
				      "is not durable",
				      k, (unsigned long long)op->wm_end, (unsigned long long)off);
				break;
			}
	}
	if (o.fails > 5)
		fprintf(stderr, "crashsim: %s: %s: %u violations of the operations' rules in all\n",
		        w->name, where, o.fails);
	for (size_t i = 0; i < o.nsc; i++)
		free(o.sc[i].offs);
	free(o.sc);
	free(o.holes.v);
	free(o.bad0);
	free(o.dur);
	free(o.durany);
	free(acks);
	model_free(m);
	return o.fails + (unsigned)problems;
}
