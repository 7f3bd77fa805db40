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

#include "internal.h"

void elog__idx_header_encode(unsigned char *p)
{
	memcpy(p, IDX_MAGIC, 8);
	put32(p + 8, IDX_VERSION);
	put32(p + 12, 0);
}

void elog__idx_entry_encode(unsigned char *p, const struct idx_entry *e)
{
	put64(p, e->offset);
	put64(p + 8, (uint64_t)e->ts_max);
	put32(p + 16, e->pos);
	put32(p + 20, elog__crc32c(0, p, 20));
}

int elog__idx_builder_add(struct idx_builder *b, uint64_t offset, int64_t ts,
                    uint64_t pos, uint32_t interval, struct idx_entry *out)
{
	if (!b->any || ts > b->ts_max)
		b->ts_max = ts;
	if (b->any && pos < b->last_pos + interval)
		return 0;
	b->any = 1;
	b->last_pos = pos;
	out->offset = offset;
	out->ts_max = b->ts_max;
	out->pos = (uint32_t)pos;
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
	elog__seg_name(name, base, IDX_EXT);
	memset(ix, 0, sizeof *ix);
	*intact = 0;
	int fd = elog__fs_openat(dfd, name, O_RDONLY, 0);
	if (fd < 0)
		return errno;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	/* Entries point at distinct records, so a segment of seg_len bytes
	 * has at most seg_len / REC_HDR of them: read no more than that. */
	uint64_t max = IDX_HDR + (seg_len / REC_HDR + 1) * IDX_ENTRY;
	uint64_t size = (uint64_t)st.st_size;
	int whole = size <= max && (size - IDX_HDR) % IDX_ENTRY == 0;
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
	if (got < IDX_HDR || memcmp(buf, IDX_MAGIC, 8) != 0 ||
	    get32(buf + 8) != IDX_VERSION) {
		free(buf);
		return ELOG_CORRUPT;
	}
	size_t n = (got - IDX_HDR) / IDX_ENTRY;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p = buf + IDX_HDR + i * IDX_ENTRY;
		struct idx_entry e = { get64(p), (int64_t)get64(p + 8), get32(p + 16) };
		if (get32(p + 20) != elog__crc32c(0, p, 20) ||
		    e.pos < SEG_HDR || e.pos >= seg_len || e.offset < base)
			goto partial;
		if (ix->n > 0) {
			const struct idx_entry *l = &ix->e[ix->n - 1];
			if (e.offset <= l->offset || e.pos <= l->pos || e.ts_max < l->ts_max)
				goto partial;
		}
		if ((err = elog__idx_push(ix, &e)) != 0) {
			free(buf);
			elog__idx_free(ix);
			return err;
		}
	}
	*intact = whole && got == size;
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

int elog__idx_lookup(int dfd, uint64_t base, uint64_t seg_len, uint64_t target,
               struct idx_entry *out)
{
	char name[NAME_MAX_LOCAL];
	unsigned char p[IDX_HDR > IDX_ENTRY ? IDX_HDR : IDX_ENTRY];
	struct stat st;
	size_t got;
	int rc = ELOG_CORRUPT, found = 0;
	elog__seg_name(name, base, IDX_EXT);
	int fd = elog__fs_openat(dfd, name, O_RDONLY, 0);
	if (fd < 0)
		return errno;
	if (fstat(fd, &st) < 0 || elog__fs_pread_full(fd, p, IDX_HDR, 0, &got) != 0 ||
	    got < IDX_HDR || memcmp(p, IDX_MAGIC, 8) != 0 || get32(p + 8) != IDX_VERSION)
		goto out;
	/* Each entry read is checked as elog__idx_load() checks it; an entry out of
	 * order is not seen by a binary search, but the reader checks the
	 * record an entry points at before it trusts it. */
	uint64_t lo = 0, hi = ((uint64_t)st.st_size - IDX_HDR) / IDX_ENTRY;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (elog__fs_pread_full(fd, p, IDX_ENTRY, (off_t)(IDX_HDR + mid * IDX_ENTRY), &got) != 0 ||
		    got < IDX_ENTRY || get32(p + 20) != elog__crc32c(0, p, 20))
			goto out;
		struct idx_entry e = { get64(p), (int64_t)get64(p + 8), get32(p + 16) };
		if (e.pos < SEG_HDR || e.pos >= seg_len || e.offset < base)
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

ssize_t elog__idx_find_time(const struct index *ix, int64_t ts)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->e[mid].ts_max < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n ? (ssize_t)lo : -1;
}

int elog__idx_rebuild(int dfd, int segfd, uint64_t base, uint64_t seg_len,
                uint32_t interval, struct index *ix, char *msg)
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
		err = elog__errmsg_set(msg, ELOG_CORRUPT, "%s: corrupt record at byte %llu",
		                 name, (unsigned long long)at);
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

int elog__idx_quick_check(int dfd, int segfd, uint64_t base, uint64_t seg_len,
                    uint32_t interval)
{
	char name[NAME_MAX_LOCAL];
	unsigned char hdr[IDX_HDR], ent[IDX_ENTRY];
	struct stat st;
	size_t got;
	int ok = 0;

	elog__seg_name(name, base, IDX_EXT);
	int fd = elog__fs_openat(dfd, name, O_RDONLY, 0);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)IDX_HDR ||
	    (st.st_size - IDX_HDR) % IDX_ENTRY != 0)
		goto out;
	if (elog__fs_pread_full(fd, hdr, IDX_HDR, 0, &got) || got != IDX_HDR ||
	    memcmp(hdr, IDX_MAGIC, 8) != 0 || get32(hdr + 8) != IDX_VERSION)
		goto out;
	if (st.st_size == (off_t)IDX_HDR) {
		ok = seg_len <= SEG_HDR;	/* no entries: right only if no records */
		goto out;
	}
	if (elog__fs_pread_full(fd, ent, IDX_ENTRY, st.st_size - IDX_ENTRY, &got) ||
	    got != IDX_ENTRY || get32(ent + 20) != elog__crc32c(0, ent, 20))
		goto out;
	uint64_t off = get64(ent);
	uint32_t pos = get32(ent + 16);
	if (pos < SEG_HDR || pos >= seg_len)
		goto out;
	/* The last entry must point at a record with its offset, and the
	 * records after it must end before another entry would have been
	 * due; otherwise the index is stale or was cut short. */
	struct scan s;
	struct elog_record rec;
	uint64_t at;
	if (elog__scan_init(&s, segfd, base, pos, seg_len) != 0)
		goto out;
	if (elog__scan_next(&s, &rec, &at) == 0 && rec.offset == off) {
		int rc;
		while ((rc = elog__scan_next(&s, &rec, &at)) == 0 && at < (uint64_t)pos + interval)
			;
		ok = rc == ELOG_END;
	}
	elog__scan_free(&s);
out:
	close(fd);
	return ok;
}
