/*
 * consumers.c: named consumers and their committed offsets (elog.h,
 * CONSUMERS).  The file format is in consumers_json.c.
 *
 * Every change is a read-modify-write of consumers.json under an exclusive
 * flock(2) of consumers.lock, waited for CONSUMERS_WAIT_MS at most, so that
 * commits from many processes never lose each other's updates; the new text replaces the old by write, fsync, rename
 * and fsync of the directory.  Readers take no lock: they see the old file or
 * the new one, never a mix.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "files.h"
#include "consumers_json.h"

static int bad_name(char *msg, const char *name)
{
	/* Quote at most the alphabet's length so a hostile name cannot flood
	 * the message; the rest of it is of no help anyway. */
	return elog__errmsg_set(msg, ELOG_BADNAME, "consumer name \"%.*s%s\": %s",
	                        ELOG_CONSUMER_NAME_MAX, name ? name : "",
	                        name && strlen(name) > ELOG_CONSUMER_NAME_MAX ? "..." : "",
	                        elog_strerror(ELOG_BADNAME));
}

/* The durable end as published by the writer; a log never written to has
 * no watermark yet and so no durable record.  With sync, the watermark is
 * made durable too (the writer never syncs it), so that an offset committed
 * below the end read here stays below the durable end after a power loss. */
static int durable_end(int dfd, uint64_t *end, int sync, char *msg)
{
	struct watermark wm = { 0 };
	int fd = elog__fs_openat(dfd, FN_WATERMARK, O_RDONLY | O_CLOEXEC, 0);
	int rc = fd < 0 ? (errno == ENOENT ? 0 : errno) : elog__wm_load(dfd, fd, &wm);
	if (!rc && fd >= 0 && sync && fdatasync(fd) < 0)
		rc = errno;
	if (fd >= 0)
		close(fd);
	if (rc)
		return elog__errmsg_set(msg, rc, FN_WATERMARK ": %s", elog_strerror(rc));
	*end = wm.durable_end;
	return 0;
}

int elog__consumers_load(int dfd, struct ctable *t, char *msg)
{
	char *text;
	size_t len;
	int rc;

	rc = elog__fs_read_small(dfd, FN_CONSUMERS, CONSUMERS_FILE_MAX, &text, &len);
	if (rc == ENOENT)
		return 0;
	if (rc == EFBIG)
		return elog__errmsg_set(msg, ELOG_CORRUPT,
		                        FN_CONSUMERS ": larger than "
		                                     "%u bytes",
		                        CONSUMERS_FILE_MAX);
	if (rc)
		return elog__errmsg_set(msg, rc, FN_CONSUMERS ": %s", elog_strerror(rc));
	rc = elog__ctable_parse(t, text, len, msg);
	free(text);
	return rc;
}

/* The lag counts what the consumer can still read: from its next offset,
 * or from the log's start when retention removed that, to the last
 * durable record.  The loss is what retention recorded for it and nobody
 * acknowledged yet (x, or NULL), and besides the offsets between its next
 * one and the log's start that the record does not cover: a consumer below
 * the start meets that gap when it reads on, acknowledged or not. */
static void set_lag(struct elog_consumer *c, uint64_t end, uint64_t start, const struct loss *x)
{
	uint64_t next = c->next;

	c->lost = c->lost_first = c->lost_last = 0;
	if (x) {
		c->lost = x->count;
		c->lost_first = x->first;
		c->lost_last = x->last;
	}
	if (start > next) {
		uint64_t first = next, last = start - 1, add = last - first + 1;
		if (x && !(last < x->first || first > x->last)) {
			/* What lies inside the recorded range is counted. */
			add = 0;
			if (first < x->first)
				add += x->first - first;
			if (last > x->last)
				add += last - x->last;
		}
		if (!x || first < c->lost_first)
			c->lost_first = first;
		if (!x || last > c->lost_last)
			c->lost_last = last;
		c->lost += add;
		next = start;
	}
	c->lag = end > next ? end - next : 0;
}

/* How long a change waits for consumers.lock, which another commit holds
 * for one fsync'ed rename: as long as a writer waits for LOCK by default. */
#define CONSUMERS_WAIT_MS 10000

int elog__consumers_lock(int dfd, int *lfd, char *msg)
{
	/* Bounded, and the holder writes its pid into the file for the
	 * message: a commit stopped with ^Z while it holds the lock must not
	 * hang every other consumer's without a word.  Only flock(2) is done
	 * with the file, which needs no write access: one made by another
	 * user (root, before elog gave the files it creates the directory's
	 * owner) still serves, and then names no holder. */
	return elog__lock_take_ms(dfd, FN_CONSUMERS_LOCK, CONSUMERS_WAIT_MS, 1, lfd, msg);
}

static int load_losses(int dfd, struct losses *l, char *msg)
{
	int rc = elog__losses_load(dfd, l);
	if (rc)
		return elog__errmsg_set(msg, rc, FN_LOSSES ": %s", elog_strerror(rc));
	return 0;
}

/* Run change on the table and the losses under the lock and store what it
 * changed. */
struct state {
	struct ctable t;
	struct losses l;
	int table_changed, losses_changed;
	int dfd; /* the log directory */
};
typedef int (*change_fn)(struct state *st, const void *arg, uint64_t end, char *msg);

static int modify(const char *dir, change_fn change, const void *arg, char *msg)
{
	struct state st = { { 0 }, { 0 }, 1, 0, -1 };
	struct elog_settings set;
	uint64_t end;
	char *text = NULL;
	size_t len;
	int dfd, lfd = -1, rc;

	if ((rc = elog__settings_open(dir, &dfd, &set, msg)))
		return rc;
	st.dfd = dfd;
	if ((rc = elog__consumers_lock(dfd, &lfd, msg)))
		goto out;
	/* The watermark is read under the lock only for simplicity; it moves
	 * up by itself, so any value read after the caller's check is safe. */
	if ((rc = durable_end(dfd, &end, 1, msg)) || (rc = elog__consumers_load(dfd, &st.t, msg)) ||
	    (rc = load_losses(dfd, &st.l, msg)) || (rc = change(&st, arg, end, msg)))
		goto out;
	if (st.table_changed) {
		if ((rc = elog__ctable_format(&st.t, &text, &len)))
			goto out;
		rc = elog__fs_replace_file(dfd, FN_CONSUMERS, text, len);
		if (rc) {
			rc = elog__errmsg_set(msg, rc, FN_CONSUMERS ": %s", elog_strerror(rc));
			goto out;
		}
	}
	/* After consumers.json: a crash between the two leaves a loss of a
	 * deleted consumer, which nothing shows and the next change drops. */
	if (st.losses_changed && (rc = elog__losses_store(dfd, &st.l)))
		rc = elog__errmsg_set(msg, rc, FN_LOSSES ": %s", elog_strerror(rc));
out:
	free(text);
	elog__ctable_free(&st.t);
	elog__losses_free(&st.l);
	if (lfd >= 0)
		close(lfd); /* releases the lock */
	close(dfd);
	return rc;
}

struct commit_arg {
	const char *name;
	uint64_t offset;
};

static int do_commit(struct state *st, const void *arg, uint64_t end, char *msg)
{
	const struct commit_arg *a = arg;
	struct ctable *t = &st->t;
	int64_t now = elog__fs_now_ms();

	if (a->offset >= end)
		return elog__errmsg_set(msg, ELOG_BEYOND,
		                        "offset %llu is at or above "
		                        "the durable end %llu of the log",
		                        (unsigned long long)a->offset, (unsigned long long)end);
	return elog__ctable_set(t, a->name, a->offset, now < 0 ? 0 : now);
}

/* The log's first offset: the first segment's base, after retention. */
static int log_start(int dfd, uint64_t *start, char *msg)
{
	struct seglist sl;
	int rc = elog__seglist_read(dfd, &sl);

	if (rc)
		return elog__errmsg_set(msg, rc, "listing segments: %s", elog_strerror(rc));
	*start = sl.n ? sl.base[0] : 0;
	elog__seglist_free(&sl);
	return 0;
}

/* Before the log's first record: its start, which only grows, read under
 * the lock that retention takes to read the consumers. */
static int do_create(struct state *st, const void *arg, uint64_t end, char *msg)
{
	const char *name = arg;
	int64_t now = elog__fs_now_ms();
	uint64_t start;
	int rc;

	(void)end;
	if ((rc = log_start(st->dfd, &start, msg)) != 0)
		return rc;
	rc = elog__ctable_create(&st->t, name, start, now < 0 ? 0 : now);
	if (rc == 1) /* there already: left as it is */
		st->table_changed = 0;
	return rc == 1 ? 0 : rc;
}

static int do_delete(struct state *st, const void *arg, uint64_t end, char *msg)
{
	const char *name = arg;
	ssize_t i = elog__ctable_find(&st->t, name);

	(void)end;
	if (i < 0)
		return elog__errmsg_set(msg, ELOG_NOCONSUMER, "no consumer \"%s\"", name);
	elog__ctable_remove(&st->t, (size_t)i);
	/* A consumer made again under the name starts with no loss. */
	st->losses_changed = elog__losses_remove(&st->l, name);
	return 0;
}

static int do_ack_loss(struct state *st, const void *arg, uint64_t end, char *msg)
{
	const char *name = arg;

	(void)end;
	st->table_changed = 0;
	st->losses_changed = elog__losses_remove(&st->l, name);
	if (!st->losses_changed && elog__ctable_find(&st->t, name) < 0)
		return elog__errmsg_set(msg, ELOG_NOCONSUMER, "no consumer \"%s\"", name);
	return 0;
}

/* A change to consumer name: its name checked, then change under the
 * lock; the message into msg, or nowhere when it is NULL. */
static int modify_named(const char *dir, const char *name, change_fn change, const void *arg,
                        char *msg)
{
	char local[ELOG_MSG_MAX];

	if (!msg)
		msg = local;
	msg[0] = 0;
	if (elog_consumer_name_check(name))
		return bad_name(msg, name);
	int rc = modify(dir, change, arg, msg);
	if (rc == ELOG_TOOMANY)
		return elog__errmsg_set(msg, rc,
		                        "consumer \"%s\": the log already has %d consumers", name,
		                        ELOG_CONSUMERS_MAX);
	return rc;
}

int elog_consumer_commit(const char *dir, const char *name, uint64_t offset, char *msg)
{
	struct commit_arg a = { name, offset };

	return modify_named(dir, name, do_commit, &a, msg);
}

int elog_consumer_create(const char *dir, const char *name, char *msg)
{
	return modify_named(dir, name, do_create, name, msg);
}

int elog_consumer_ack_loss(const char *dir, const char *name, char *msg)
{
	return modify_named(dir, name, do_ack_loss, name, msg);
}

int elog_consumer_delete(const char *dir, const char *name, char *msg)
{
	return modify_named(dir, name, do_delete, name, msg);
}

/* Load the table, the durable end and the log's start without taking the
 * lock; on failure t and l are left empty. */
static int snapshot(const char *dir, struct ctable *t, struct losses *l, uint64_t *end,
                    uint64_t *start, char *msg)
{
	struct elog_settings set;
	int dfd, rc;

	if ((rc = elog__settings_open(dir, &dfd, &set, msg)))
		return rc;
	/* The durable end is read first: it only grows, so every offset in
	 * the table read afterwards was below some durable end we could see,
	 * and the lag comes out as at least what it was. */
	rc = durable_end(dfd, end, 0, msg);
	if (!rc)
		rc = elog__consumers_load(dfd, t, msg);
	if (!rc)
		rc = load_losses(dfd, l, msg);
	/* The start, read last, only grows too: what it says was lost was
	 * lost. */
	if (!rc)
		rc = log_start(dfd, start, msg);
	close(dfd);
	if (rc) {
		elog__ctable_free(t);
		elog__losses_free(l);
	}
	return rc;
}

/* Consumer name's entry and the durable end it was measured against. */
static int get_entry(const char *dir, const char *name, struct elog_consumer *c, uint64_t *end,
                     char *msg)
{
	struct ctable t = { 0 };
	struct losses l = { 0 };
	uint64_t start;
	ssize_t i;
	int rc;

	if (elog_consumer_name_check(name))
		return bad_name(msg, name);
	if ((rc = snapshot(dir, &t, &l, end, &start, msg)))
		return rc;
	i = elog__ctable_find(&t, name);
	if (i < 0) {
		rc = elog__errmsg_set(msg, ELOG_NOCONSUMER, "no consumer \"%s\"", name);
	} else {
		*c = t.v[i];
		set_lag(c, *end, start, elog__losses_find(&l, name));
	}
	elog__ctable_free(&t);
	elog__losses_free(&l);
	return rc;
}

int elog_consumer_get(const char *dir, const char *name, struct elog_consumer *c, char *msg)
{
	char local[ELOG_MSG_MAX];
	uint64_t end;

	if (!msg)
		msg = local;
	msg[0] = 0;
	return get_entry(dir, name, c, &end, msg);
}

int elog_consumer_list(const char *dir, struct elog_consumer **list, size_t *n, char *msg)
{
	char local[ELOG_MSG_MAX];
	struct ctable t = { 0 };
	struct losses l = { 0 };
	uint64_t end, start;
	int rc;

	if (!msg)
		msg = local;
	msg[0] = 0;
	*list = NULL;
	*n = 0;
	if ((rc = snapshot(dir, &t, &l, &end, &start, msg)))
		return rc;
	for (size_t i = 0; i < t.n; i++)
		set_lag(&t.v[i], end, start, elog__losses_find(&l, t.v[i].name));
	elog__losses_free(&l);
	*list = t.v;
	*n = t.n;
	return 0;
}

int elog_consumer_seek(elog_reader *r, const char *dir, const char *name, char *msg)
{
	char local[ELOG_MSG_MAX];
	struct elog_consumer c;
	uint64_t end;
	int rc;

	if (!msg)
		msg = local;
	msg[0] = 0;
	rc = get_entry(dir, name, &c, &end, msg);
	if (rc == ELOG_NOCONSUMER) {
		msg[0] = 0;
		return elog_reader_seek_begin(r);
	}
	if (rc)
		return rc;
	/* A committed offset at or above the durable end means the log lost
	 * records the consumer had seen (a restored backup, a repair), and
	 * resuming there would silently skip whatever the writer puts at
	 * those offsets next. */
	if (!c.uncommitted && c.offset >= end)
		return elog__errmsg_set(msg, ELOG_BEYOND,
		                        "consumer \"%s\" committed "
		                        "offset %llu, at or above the durable end %llu "
		                        "of the log",
		                        name, (unsigned long long)c.offset,
		                        (unsigned long long)end);
	return elog_reader_seek(r, c.next);
}
