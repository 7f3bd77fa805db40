/*
 * holes.c: the file "salvaged", the ranges of offsets that elog-verify
 * --salvage could not save from a damaged closed segment.  Readers report
 * a gap (ELOG_GAP, cause ELOG_GAP_DAMAGE) when their next record lies past
 * a range they had not read, so that lost records are never skipped in
 * silence, as those removed by compaction are.
 *
 * The format (elog(5)): the line "elog-salvaged 1", then one line per
 * range, "FIRST LAST MS": the first and last offset lost, inclusive, and
 * when the salvage ran, decimal, separated by one space, each line ended
 * by a newline; ranges in increasing order, not overlapping.  The file is
 * replaced whole (temporary file, fsync, rename).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "format.h"
#include "os.h"
#include "files.h"

#define HOLES_MAGIC "elog-salvaged 1\n"
#define HOLES_MAX (1u << 20)

int elog__holes_load(int dfd, struct holes *h)
{
	char *text, *p, *end;
	size_t len;

	elog__holes_free(h);
	int err = elog__fs_read_small(dfd, FN_SALVAGED, HOLES_MAX, &text, &len);
	if (err == ENOENT)
		return 0;
	if (err)
		return err;
	err = ELOG_CORRUPT;
	if (len < sizeof HOLES_MAGIC - 1 || memcmp(text, HOLES_MAGIC, sizeof HOLES_MAGIC - 1))
		goto out;
	p = text + sizeof HOLES_MAGIC - 1;
	end = text + len;
	while (p < end) {
		unsigned long long a, b;
		long long ms;
		int used = 0;
		if (sscanf(p, "%llu %llu %lld\n%n", &a, &b, &ms, &used) != 3 || used == 0 ||
		    a > b || (h->n && a <= h->v[h->n - 1].last))
			goto out;
		if (elog__array_push(&h->v, &h->n, sizeof *h->v, &(struct hole){ a, b, ms }) != 0) {
			err = ENOMEM;
			goto out;
		}
		p += used;
	}
	err = 0;
out:
	free(text);
	if (err)
		elog__holes_free(h);
	return err;
}

static int cmp_hole(const void *a, const void *b)
{
	const struct hole *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

int elog__holes_add(int dfd, uint64_t first, uint64_t last, int64_t ms)
{
	struct holes h = { 0 };
	int err = elog__holes_load(dfd, &h);
	if (err == ELOG_CORRUPT)
		err = 0; /* replaced by what can be said now */
	if (!err)
		err = elog__array_push(&h.v, &h.n, sizeof *h.v, &(struct hole){ first, last, ms });
	if (err) {
		elog__holes_free(&h);
		return err;
	}
	qsort(h.v, h.n, sizeof *h.v, cmp_hole);
	size_t cap = sizeof HOLES_MAGIC + h.n * 64, len;
	char *buf = malloc(cap);
	if (!buf) {
		elog__holes_free(&h);
		return ENOMEM;
	}
	len = (size_t)snprintf(buf, cap, "%s", HOLES_MAGIC);
	for (size_t i = 0; i < h.n; i++) {
		/* Merge what overlaps (a segment salvaged twice). */
		uint64_t a = h.v[i].first, b = h.v[i].last;
		while (i + 1 < h.n && h.v[i + 1].first <= b + 1) {
			if (h.v[i + 1].last > b)
				b = h.v[i + 1].last;
			i++;
		}
		len += (size_t)snprintf(buf + len, cap - len, "%" PRIu64 " %" PRIu64 " %lld\n", a,
		                        b, (long long)h.v[i].ms);
	}
	err = elog__fs_replace_file(dfd, FN_SALVAGED, buf, len);
	free(buf);
	elog__holes_free(&h);
	return err;
}

int elog__holes_find(const struct holes *h, uint64_t from, uint64_t to, uint64_t *first,
                     uint64_t *last)
{
	for (size_t i = 0; i < h->n; i++) {
		if (h->v[i].last < from)
			continue;
		if (h->v[i].first > to)
			return 0;
		*first = h->v[i].first > from ? h->v[i].first : from;
		*last = h->v[i].last < to ? h->v[i].last : to;
		return 1;
	}
	return 0;
}

void elog__holes_free(struct holes *h)
{
	free(h->v);
	h->v = NULL;
	h->n = 0;
}
