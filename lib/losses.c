/*
 * losses.c: what named consumers lost to retention before they read it,
 * kept until someone acknowledges it (elog_consumer_ack_loss()), in the
 * file "consumers.lost" (elog(5)):
 *
 *   elog-consumers-lost 1
 *   uplink retention 100 1333 1234 1764385200000
 *
 * one line per consumer: its name, the cause, the first and last offset
 * lost (inclusive), how many offsets of that range it lost, and when
 * retention last added to it.  It is a file of its own, not a member of
 * consumers.json, so that commits (which rewrite consumers.json) keep it
 * and so that older versions, whose parser of consumers.json refuses any
 * member it does not know, still read consumers.json.  Every change is
 * made under consumers.lock; the file is replaced by write, fsync, rename.
 *
 * The file is information, and never stops retention: a line that does
 * not parse is skipped (and dropped when the file is next written), and a
 * file that cannot be read reads as empty.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "os.h"
#include "files.h"

#define LOSSES_MAGIC "elog-consumers-lost 1"
/* A larger file is not ours: 4096 consumers of the longest lines take
 * about 750 KiB. */
#define LOSSES_MAX (1u << 20)

void elog__losses_free(struct losses *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

struct loss *elog__losses_find(const struct losses *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

/* The next word of [*p, end), up to one space or the end. */
static size_t word(const char **p, const char *end, const char **w)
{
	const char *q = *p;
	while (q < end && *q != ' ')
		q++;
	*w = *p;
	size_t n = (size_t)(q - *p);
	*p = q < end ? q + 1 : q;
	return n;
}

/* Decimal digits only, no sign, at most max. */
static int number(const char *w, size_t n, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	if (n == 0 || n > 20)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)w[i] - '0';
		if (d > 9 || x > (max - d) / 10)
			return 0;
		x = x * 10 + d;
	}
	*v = x;
	return 1;
}

/* One line, "name cause first last count ms"; 0 when it does not parse.
 * Causes other than retention are a later version's, and skipped too. */
static int parse_line(const char *p, size_t n, struct loss *x)
{
	const char *end = p + n, *w[6];
	size_t len[6];
	uint64_t ms;

	for (int i = 0; i < 6; i++)
		len[i] = word(&p, end, &w[i]);
	if (p != end || len[0] > ELOG_CONSUMER_NAME_MAX)
		return 0;
	memset(x, 0, sizeof *x);
	memcpy(x->name, w[0], len[0]);
	if (elog_consumer_name_check(x->name) != 0 || len[1] != 9 ||
	    memcmp(w[1], "retention", 9) != 0 || !number(w[2], len[2], UINT64_MAX, &x->first) ||
	    !number(w[3], len[3], UINT64_MAX, &x->last) ||
	    !number(w[4], len[4], UINT64_MAX, &x->count) || !number(w[5], len[5], INT64_MAX, &ms))
		return 0;
	if (x->first > x->last || x->count == 0 || x->count - 1 > x->last - x->first)
		return 0;
	x->ms = (int64_t)ms;
	return 1;
}

int elog__losses_load(int dfd, struct losses *l)
{
	char *text;
	size_t len;
	int err;

	l->v = NULL;
	l->n = 0;
	err = elog__fs_read_small(dfd, FN_LOSSES, LOSSES_MAX, &text, &len);
	if (err == ENOENT || err == EFBIG)
		return 0;
	if (err)
		return err;
	const char *p = text, *end = text + len;
	const char *nl = memchr(p, '\n', len);
	if (!nl || (size_t)(nl - p) != sizeof LOSSES_MAGIC - 1 ||
	    memcmp(p, LOSSES_MAGIC, sizeof LOSSES_MAGIC - 1) != 0)
		goto out; /* not ours, or a later format: nothing we know */
	for (p = nl + 1; p < end && !err; p = nl + 1) {
		struct loss x;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break; /* a line without its newline was never finished */
		if (parse_line(p, (size_t)(nl - p), &x) && !elog__losses_find(l, x.name))
			err = elog__array_push(&l->v, &l->n, sizeof x, &x);
	}
out:
	free(text);
	if (err)
		elog__losses_free(l);
	return err;
}

int elog__losses_add(struct losses *l, const char *name, uint64_t first, uint64_t last, int64_t ms)
{
	struct loss *x = elog__losses_find(l, name);
	if (!x) {
		struct loss n = { .first = first,
			          .last = last,
			          .count = last - first + 1,
			          .ms = ms };
		memcpy(n.name, name, strlen(name) + 1);
		return elog__array_push(&l->v, &l->n, sizeof n, &n);
	}
	/* Only what lies outside the range already recorded is new: a run
	 * that recorded its losses and then died before it removed anything
	 * records the same range again. */
	uint64_t add = 0;
	if (first < x->first)
		add += (last < x->first ? last : x->first - 1) - first + 1;
	if (last > x->last)
		add += last - (first > x->last ? first : x->last + 1) + 1;
	x->count += add;
	x->first = first < x->first ? first : x->first;
	x->last = last > x->last ? last : x->last;
	x->ms = ms;
	return 0;
}

int elog__losses_remove(struct losses *l, const char *name)
{
	struct loss *x = elog__losses_find(l, name);
	if (!x)
		return 0;
	size_t i = (size_t)(x - l->v);
	memmove(l->v + i, l->v + i + 1, (l->n - i - 1) * sizeof *l->v);
	l->n--;
	return 1;
}

int elog__losses_store(int dfd, const struct losses *l)
{
	if (l->n == 0) {
		if (unlinkat(dfd, FN_LOSSES, 0) < 0 && errno != ENOENT)
			return errno;
		return elog__fs_fsync_dir(dfd);
	}
	size_t cap = sizeof LOSSES_MAGIC + 1 + l->n * (ELOG_CONSUMER_NAME_MAX + 96), n = 0;
	char *buf = malloc(cap);
	if (!buf)
		return ENOMEM;
	n += (size_t)snprintf(buf, cap, "%s\n", LOSSES_MAGIC);
	for (size_t i = 0; i < l->n; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s retention %llu %llu %llu %lld\n",
		                      l->v[i].name, (unsigned long long)l->v[i].first,
		                      (unsigned long long)l->v[i].last,
		                      (unsigned long long)l->v[i].count, (long long)l->v[i].ms);
	int err = elog__fs_replace_file(dfd, FN_LOSSES, buf, n);
	free(buf);
	return err;
}
