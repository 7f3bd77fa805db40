/*
 * index.c: the sparse index of a segment.  Derived data, never trusted: an
 * entry is used only after its CRC, its ordering and (by the reader) the
 * record it points at have been checked, and a missing or damaged index is
 * rebuilt by scanning its segment.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "files.h"

/* The layouts of the versions this build reads, by their format.h names;
 * it writes the last. */
static const struct idx_layout layouts[] = {
	{ IDX_VERSION_1, IDX1_ENTRY, IDX1_AT_TS_MAX, IDX1_AT_POS, IDX1_AT_CRC },
	{ IDX_VERSION, IDX_ENTRY, IDX_AT_TS_MAX, IDX_AT_POS, IDX_AT_CRC },
};

void elog__idx_header_encode(unsigned char *p)
{
	memcpy(p, IDX_MAGIC, 8);
	put32(p + IDX_AT_VERSION, IDX_VERSION);
	put32(p + IDX_AT_RESERVED, 0);
}

int elog__idx_header_check(const unsigned char *p, size_t len, const struct idx_layout **lay)
{
	if (len < IDX_HDR || memcmp(p, IDX_MAGIC, 8) != 0)
		return ELOG_CORRUPT;
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
		if (get32(p + IDX_AT_VERSION) == layouts[i].version &&
		    get32(p + IDX_AT_RESERVED) == 0) {
			*lay = &layouts[i];
			return 0;
		}
	return ELOG_BADVERSION;
}

void elog__idx_entry_encode(unsigned char *p, const struct idx_entry *e)
{
	put64(p + IDX_AT_OFFSET, e->offset);
	put64(p + IDX_AT_TS_MAX, (uint64_t)e->ts_max);
	put64(p + IDX_AT_TS_MIN, (uint64_t)e->ts_min);
	put64(p + IDX_AT_SPAN_MIN, (uint64_t)e->span_min);
	put64(p + IDX_AT_SPAN_MAX, (uint64_t)e->span_max);
	put32(p + IDX_AT_POS, e->pos);
	put32(p + IDX_AT_CRC, elog__crc32c(0, p, IDX_AT_CRC));
}

static void entry_decode(const unsigned char *p, const struct idx_layout *lay, struct idx_entry *e)
{
	e->offset = get64(p + IDX_AT_OFFSET); /* in both versions */
	e->ts_max = (int64_t)get64(p + lay->at_ts_max);
	e->pos = get32(p + lay->at_pos);
	if (lay->version == IDX_VERSION_1) {
		e->ts_min = INT64_MIN;
		e->span_min = INT64_MIN;
		e->span_max = INT64_MAX;
	} else {
		e->ts_min = (int64_t)get64(p + IDX_AT_TS_MIN);
		e->span_min = (int64_t)get64(p + IDX_AT_SPAN_MIN);
		e->span_max = (int64_t)get64(p + IDX_AT_SPAN_MAX);
	}
}

/* The span is empty (a first entry) or lies within the segment's extremes
 * through the entry, and those extremes only widen from entry to entry. */
static int times_agree(const struct idx_layout *lay, const struct idx_entry *e,
                       const struct idx_entry *prev)
{
	if (lay->version == IDX_VERSION_1) /* ts_max is all it has */
		return !prev || e->ts_max >= prev->ts_max;
	int empty = e->span_min == IDX_SPAN_EMPTY_MIN && e->span_max == IDX_SPAN_EMPTY_MAX;
	if (e->ts_min > e->ts_max)
		return 0;
	if (!empty &&
	    (e->span_min > e->span_max || e->span_min < e->ts_min || e->span_max > e->ts_max))
		return 0;
	if (prev && empty) /* the span after an entry holds its record */
		return 0;
	return !prev || (e->ts_max >= prev->ts_max && e->ts_min <= prev->ts_min);
}

int elog__idx_entry_check(const unsigned char *p, const struct idx_layout *lay, uint64_t base,
                          uint64_t seg_len, const struct idx_entry *prev, struct idx_entry *e)
{
	entry_decode(p, lay, e);
	if (get32(p + lay->at_crc) != elog__crc32c(0, p, lay->at_crc))
		return IDX_FAULT_CRC;
	if (e->pos < SEG_HDR || e->pos >= seg_len)
		return IDX_FAULT_POS;
	if (e->offset < base)
		return IDX_FAULT_OFFSET;
	if (prev && (e->offset <= prev->offset || e->pos <= prev->pos))
		return IDX_FAULT_ORDER;
	if (!times_agree(lay, e, prev))
		return IDX_FAULT_TIME;
	return IDX_FAULT_NONE;
}

size_t elog__idx_fault_at(const struct idx_layout *lay, int fault)
{
	switch (fault) {
	case IDX_FAULT_CRC:
		return lay->at_crc;
	case IDX_FAULT_POS:
		return lay->at_pos;
	case IDX_FAULT_TIME:
		return lay->at_ts_max;
	default:
		return 0; /* the offset, at the entry's start */
	}
}

int elog__idx_builder_add(struct idx_builder *b, uint64_t offset, int64_t ts, uint64_t pos,
                          uint32_t interval, struct idx_entry *out)
{
	if (!b->any || ts > b->ts_max)
		b->ts_max = ts;
	if (!b->any || ts < b->ts_min)
		b->ts_min = ts;
	if (b->any && pos < b->last_pos + interval) {
		if (ts < b->span_min)
			b->span_min = ts;
		if (ts > b->span_max)
			b->span_max = ts;
		return 0;
	}
	out->offset = offset;
	out->ts_max = b->ts_max;
	out->pos = (uint32_t)pos;
	out->ts_min = b->ts_min;
	out->span_min = b->any ? b->span_min : IDX_SPAN_EMPTY_MIN;
	out->span_max = b->any ? b->span_max : IDX_SPAN_EMPTY_MAX;
	b->any = 1;
	b->last_pos = pos;
	b->span_min = b->span_max = ts; /* the span from this entry on */
	return 1;
}

int elog__idx_push(struct index *ix, const struct idx_entry *e)
{
	if (ix->n == ix->cap) {
		size_t cap = ix->cap ? ix->cap * 2 : 64;
		struct idx_entry *ne = realloc(ix->e, cap * sizeof *ne);
		if (!ne)
			return ENOMEM;
		ix->e = ne;
		ix->cap = cap;
	}
	ix->e[ix->n++] = *e;
	return 0;
}

void elog__idx_free(struct index *ix)
{
	free(ix->e);
	memset(ix, 0, sizeof *ix);
}

int elog__idx_load(int dfd, uint64_t base, uint64_t seg_len, struct index *ix, int *intact)
{
	char name[NAME_MAX_LOCAL];
	struct stat st;
	const struct idx_layout *lay;
	elog__seg_name(name, base, IDX_EXT);
	memset(ix, 0, sizeof *ix);
	*intact = 0;
	int fd = elog__fs_openat_stat(dfd, name, O_RDONLY, 0, &st);
	if (fd < 0)
		return errno;
	/* Entries point at distinct records, so a segment of seg_len bytes
	 * has at most seg_len / REC_HDR of them: read no more than that. */
	uint64_t max = IDX_HDR + (seg_len / REC_HDR + 1) * IDX_ENTRY;
	uint64_t size = (uint64_t)st.st_size;
	if (size > max)
		size = max;
	unsigned char *buf = malloc(size ? size : 1);
	if (!buf) {
		close(fd);
		return ENOMEM;
	}
	size_t got;
	int err = elog__fs_pread_full(fd, buf, size, 0, &got);
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	if (elog__idx_header_check(buf, got, &lay) != 0) {
		free(buf);
		return ELOG_CORRUPT;
	}
	ix->version = lay->version;
	uint64_t whole_max = IDX_HDR + (seg_len / REC_HDR + 1) * lay->entry;
	int whole = (uint64_t)st.st_size <= whole_max &&
	            ((uint64_t)st.st_size - IDX_HDR) % lay->entry == 0;
	size_t n = (got - IDX_HDR) / lay->entry;
	for (size_t i = 0; i < n; i++) {
		struct idx_entry e;
		if (elog__idx_entry_check(buf + IDX_HDR + i * lay->entry, lay, base, seg_len,
		                          ix->n ? &ix->e[ix->n - 1] : NULL, &e) != IDX_FAULT_NONE)
			goto partial;
		if ((err = elog__idx_push(ix, &e)) != 0) {
			free(buf);
			elog__idx_free(ix);
			return err;
		}
	}
	*intact = whole && got == (uint64_t)st.st_size;
partial:
	free(buf);
	return 0;
}

ssize_t elog__idx_find_offset(const struct index *ix, uint64_t target)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->e[mid].offset <= target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}

/* Open the index of segment base and check its header: *fd, its layout,
 * its number of whole entries and (whole, when not NULL) whether nothing
 * follows them.  An errno value when it cannot be opened; ELOG_CORRUPT (fd
 * closed) when the header does not check. */
static int idx_open_checked(int dfd, uint64_t base, int *fd, const struct idx_layout **lay,
                            uint64_t *n, int *whole)
{
	char name[NAME_MAX_LOCAL];
	unsigned char p[IDX_HDR];
	struct stat st;
	size_t got;
	elog__seg_name(name, base, IDX_EXT);
	if ((*fd = elog__fs_openat_stat(dfd, name, O_RDONLY, 0, &st)) < 0)
		return errno;
	if (elog__fs_pread_full(*fd, p, IDX_HDR, 0, &got) != 0 ||
	    elog__idx_header_check(p, got, lay) != 0) {
		close(*fd);
		return ELOG_CORRUPT;
	}
	*n = ((uint64_t)st.st_size - IDX_HDR) / (*lay)->entry;
	if (whole)
		*whole = ((uint64_t)st.st_size - IDX_HDR) % (*lay)->entry == 0;
	return 0;
}

/* Entry k of an index opened by idx_open_checked(), judged as
 * elog__idx_load() judges an entry, though alone: 0 or ELOG_CORRUPT. */
static int idx_entry_at(int fd, const struct idx_layout *lay, uint64_t k, uint64_t base,
                        uint64_t seg_len, struct idx_entry *e)
{
	unsigned char p[IDX_ENTRY];
	size_t got;
	if (elog__fs_pread_full(fd, p, lay->entry, (off_t)(IDX_HDR + k * lay->entry), &got) != 0 ||
	    got < lay->entry ||
	    elog__idx_entry_check(p, lay, base, seg_len, NULL, e) != IDX_FAULT_NONE)
		return ELOG_CORRUPT;
	return 0;
}

int elog__idx_lookup(int dfd, uint64_t base, uint64_t seg_len, uint64_t target,
                     struct idx_entry *out)
{
	const struct idx_layout *lay;
	uint64_t lo = 0, hi;
	int fd, found = 0;
	int rc = idx_open_checked(dfd, base, &fd, &lay, &hi, NULL);
	if (rc)
		return rc;
	/* An entry out of order is not seen by a binary search, but the
	 * reader checks the record an entry points at before it trusts it. */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		struct idx_entry e;
		if ((rc = idx_entry_at(fd, lay, mid, base, seg_len, &e)) != 0)
			goto out;
		if (e.offset <= target) {
			*out = e;
			found = 1;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	rc = found ? 0 : ELOG_END;
out:
	close(fd);
	return rc;
}

int elog__idx_last(int dfd, uint64_t base, uint64_t seg_len, struct idx_entry *out)
{
	const struct idx_layout *lay;
	uint64_t n;
	int fd;
	int rc = idx_open_checked(dfd, base, &fd, &lay, &n, NULL);
	if (rc)
		return rc;
	rc = n == 0 ? ELOG_END : idx_entry_at(fd, lay, n - 1, base, seg_len, out);
	close(fd);
	return rc;
}

ssize_t elog__idx_find_time(const struct index *ix, int64_t ts)
{
	/* Past the entries before which every record is older than ts. */
	size_t k = (size_t)(elog__idx_skip_prefix(ix, 0, ts, INT64_MAX) + 1);
	return k < ix->n ? (ssize_t)k : -1;
}

ssize_t elog__idx_skip_prefix(const struct index *ix, size_t from, int64_t lo, int64_t hi)
{
	/* ts_min never rises and ts_max never falls from entry to entry, so
	 * each test holds for a prefix of the entries: find the end of each. */
	size_t below = from, above = from, end = ix->n;
	while (below < end) {
		size_t mid = below + (end - below) / 2;
		if (ix->e[mid].ts_max < lo)
			below = mid + 1;
		else
			end = mid;
	}
	end = ix->n;
	while (above < end) {
		size_t mid = above + (end - above) / 2;
		if (ix->e[mid].ts_min > hi)
			above = mid + 1;
		else
			end = mid;
	}
	size_t k = below > above ? below : above;
	return k > from ? (ssize_t)k - 1 : -1;
}

int elog__idx_rebuild(int dfd, int segfd, uint64_t base, uint64_t seg_len, uint32_t interval,
                      struct index *ix, char *msg)
{
	struct index local = { 0 };
	struct idx_builder b = { 0 };
	struct scan s;
	struct elog_record rec;
	uint64_t at;
	char name[NAME_MAX_LOCAL];
	int err = elog__scan_init(&s, segfd, base, SEG_HDR, seg_len);
	if (err)
		return err;
	while ((err = elog__scan_next(&s, &rec, &at)) == 0) {
		struct idx_entry e;
		if (elog__idx_builder_add(&b, rec.offset, rec.ts_ms, at, interval, &e) &&
		    (err = elog__idx_push(&local, &e)) != 0)
			break;
	}
	elog__scan_free(&s);
	elog__seg_name(name, base, SEG_EXT);
	if (err == ELOG_CORRUPT)
		err = elog__errmsg_set(msg, ELOG_CORRUPT, "%s: corrupt record at byte %llu", name,
		                       (unsigned long long)at);
	if (err != ELOG_END) {
		elog__idx_free(&local);
		return err;
	}
	size_t len = IDX_HDR + local.n * IDX_ENTRY;
	unsigned char *buf = malloc(len);
	if (!buf) {
		elog__idx_free(&local);
		return ENOMEM;
	}
	elog__idx_header_encode(buf);
	for (size_t i = 0; i < local.n; i++)
		elog__idx_entry_encode(buf + IDX_HDR + i * IDX_ENTRY, &local.e[i]);
	elog__seg_name(name, base, IDX_EXT);
	err = elog__fs_replace_file(dfd, name, buf, len);
	free(buf);
	if (err)
		elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
	if (err || !ix)
		elog__idx_free(&local);
	else
		*ix = local;
	return err;
}

int elog__idx_quick_check(int dfd, int segfd, uint64_t base, uint64_t seg_len, uint32_t interval)
{
	const struct idx_layout *lay;
	struct idx_entry e;
	uint64_t n;
	int fd, whole, ok = 0;

	/* An index of version 1 is not wrong: it stays, and readers scan
	 * where its entries cannot tell them the times. */
	if (idx_open_checked(dfd, base, &fd, &lay, &n, &whole) != 0)
		return 0;
	if (!whole)
		goto out;
	if (n == 0) {
		ok = seg_len <= SEG_HDR; /* no entries: right only if no records */
		goto out;
	}
	if (idx_entry_at(fd, lay, n - 1, base, seg_len, &e) != 0)
		goto out;
	/* The last entry must point at a record with its offset, and the
	 * records after it must end before another entry would have been
	 * due; otherwise the index is stale or was cut short. */
	struct scan s;
	struct elog_record rec;
	uint64_t at;
	if (elog__scan_init(&s, segfd, base, SEG_HDR, seg_len) != 0)
		goto out;
	if (elog__scan_to_entry(&s, &e)) {
		int rc;
		while ((rc = elog__scan_next(&s, &rec, &at)) == 0 &&
		       at < (uint64_t)e.pos + interval)
			;
		ok = rc == ELOG_END;
	}
	elog__scan_free(&s);
out:
	close(fd);
	return ok;
}
