/*
 * segment.c: segment files: their names (the base offset as 20 decimal
 * digits), their 32-byte header, and the sorted list of a log's segments
 * (those at or above its start: see start.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "compress.h"
#include "files.h"

/* "<base as SEG_NAME_LEN digits><ext>" into buf of size bytes, cut to
 * fit as snprintf would.  By hand: every segment a program opens is named
 * here, and printf's code is pages that a one-shot append would fault in
 * for nothing else.  SEG_NAME_LEN digits hold any 64-bit number. */
static void name_of(char *buf, size_t size, uint64_t base, const char *ext)
{
	char name[SEG_NAME_LEN + NAME_MAX_LOCAL];
	size_t n = strlen(ext);
	if (n >= NAME_MAX_LOCAL)
		n = NAME_MAX_LOCAL - 1;
	for (int i = SEG_NAME_LEN - 1; i >= 0; i--, base /= 10)
		name[i] = (char)('0' + base % 10);
	memcpy(name + SEG_NAME_LEN, ext, n);
	n += SEG_NAME_LEN;
	if (size == 0)
		return;
	if (n >= size)
		n = size - 1;
	memcpy(buf, name, n);
	buf[n] = '\0';
}

void elog__seg_name(char *buf, uint64_t base, const char *ext)
{
	name_of(buf, NAME_MAX_LOCAL, base, ext);
}

_Static_assert(ELOG_SEGMENT_NAME_MAX == SEG_NAME_LEN + sizeof SEG_EXT,
               "ELOG_SEGMENT_NAME_MAX is the length of a segment's name");

void elog_segment_name(char *buf, uint64_t base)
{
	name_of(buf, ELOG_SEGMENT_NAME_MAX, base, SEG_EXT);
}

int elog__seg_parse_name(const char *name, const char *ext, uint64_t *base)
{
	uint64_t v = 0;
	for (int i = 0; i < SEG_NAME_LEN; i++) {
		unsigned d = (unsigned char)name[i] - '0';
		if (d > 9)
			return 0;
		if (v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	if (strcmp(name + SEG_NAME_LEN, ext) != 0)
		return 0;
	*base = v;
	return 1;
}

/* The crc of a header: of its first 24 bytes and, from version 2 on, of
 * the log field after the crc unless it is zero (it names no log: so
 * wrote the builds before 0.3.0). */
static uint32_t header_crc(const unsigned char *p)
{
	uint32_t crc = elog__crc32c(0, p, SEG_AT_CRC);
	if (get32(p + SEG_AT_VERSION) >= SEG_VERSION && get32(p + SEG_AT_LOG) != 0)
		crc = elog__crc32c(crc, p + SEG_AT_LOG, SEG_LOG_LEN);
	return crc;
}

void elog__seg_header_encode(unsigned char *p, uint64_t base, uint32_t flags, const char *log_id)
{
	unsigned char id[SEAL_ID_LEN];
	elog__seal_id(log_id ? log_id : "", id);
	memcpy(p, SEG_MAGIC, 8);
	put32(p + SEG_AT_VERSION, SEG_VERSION);
	put32(p + SEG_AT_FLAGS, flags);
	put64(p + SEG_AT_BASE, base);
	memcpy(p + SEG_AT_LOG, id, SEG_LOG_LEN);
	put32(p + SEG_AT_CRC, header_crc(p));
}

/* The one verdict on a segment header: every other judgement of one is
 * made from it. */
int elog__seg_header_fault(const unsigned char *p, size_t got, uint64_t base, const char *log_id)
{
	unsigned char id[SEAL_ID_LEN];
	if (got < SEG_HDR)
		return SEG_FAULT_SHORT;
	if (memcmp(p, SEG_MAGIC, 8) != 0)
		return SEG_FAULT_MAGIC;
	if (get32(p + SEG_AT_CRC) != header_crc(p))
		return SEG_FAULT_CRC;
	uint32_t version = get32(p + SEG_AT_VERSION);
	if ((version != SEG_VERSION_1 && version != SEG_VERSION) ||
	    !elog__codec_flags_valid(get32(p + SEG_AT_FLAGS)))
		return SEG_FAULT_VERSION;
	if (get64(p + SEG_AT_BASE) != base)
		return SEG_FAULT_BASE;
	if (version == SEG_VERSION_1)
		return get32(p + SEG_AT_LOG) != 0 ? SEG_FAULT_RESERVED : SEG_FAULT_NONE;
	if (log_id)
		elog__seal_id(log_id, id);
	if (log_id && get32(p + SEG_AT_LOG) != 0 && memcmp(p + SEG_AT_LOG, id, SEG_LOG_LEN) != 0)
		return SEG_FAULT_LOG;
	return SEG_FAULT_NONE;
}

uint32_t elog__seg_header_flags(const unsigned char *p)
{
	return get32(p + SEG_AT_FLAGS);
}

int elog__seg_header_sealed(const unsigned char *p)
{
	return get32(p + SEG_AT_VERSION) >= SEG_VERSION;
}

int elog__seg_header_verify(const unsigned char *p, size_t got, uint64_t base, const char *log_id,
                            char *msg)
{
	char name[NAME_MAX_LOCAL], local[ELOG_MSG_MAX];
	int fault = elog__seg_header_fault(p, got, base, log_id);
	elog__seg_name(name, base, SEG_EXT);
	msg = msg ? msg : local;
	switch (fault) {
	case SEG_FAULT_NONE:
	case SEG_FAULT_RESERVED:
		return 0;
	case SEG_FAULT_BASE:
		return elog__errmsg_set(msg, ELOG_CORRUPT,
		                        "%s: a copy of segment %llu (its header names that "
		                        "base): move it out of the log directory",
		                        name, (unsigned long long)get64(p + SEG_AT_BASE));
	case SEG_FAULT_LOG:
		return elog__errmsg_set(msg, ELOG_CORRUPT,
		                        "%s: a segment of another log (its header does not "
		                        "name this log's id): move it out of the log directory",
		                        name);
	}
	return elog__errmsg_set(msg, fault == SEG_FAULT_VERSION ? ELOG_BADVERSION : ELOG_CORRUPT,
	                        "%s: %s", name,
	                        fault == SEG_FAULT_SHORT     ? "truncated header"
	                        : fault == SEG_FAULT_VERSION ? "unsupported segment version"
	                                                     : "bad segment header");
}

int elog__seg_open_raw(int dfd, uint64_t base, int oflags, int *fd, unsigned char *hdr, size_t *got,
                       struct stat *st, char *msg)
{
	char name[NAME_MAX_LOCAL], local[ELOG_MSG_MAX];
	int err = 0;
	elog__seg_name(name, base, SEG_EXT);
	struct stat local_st;
	*fd = elog__fs_openat_stat(dfd, name, oflags, 0, st ? st : &local_st);
	if (*fd < 0)
		err = errno;
	else
		err = elog__fs_pread_full(*fd, hdr, SEG_HDR, 0, got);
	if (!err)
		return 0;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return elog__errmsg_set(msg ? msg : local, err, "%s: %s", name, elog_strerror(err));
}

int elog__seg_open(int dfd, uint64_t base, int oflags, int *fd, uint32_t *flags, struct stat *st,
                   char *msg)
{
	unsigned char hdr[SEG_HDR];
	size_t got;
	int err = elog__seg_open_raw(dfd, base, oflags, fd, hdr, &got, st, msg);
	if (!err && (err = elog__seg_header_verify(hdr, got, base, NULL, msg)) != 0) {
		close(*fd);
		*fd = -1;
	}
	if (!err && flags)
		*flags = elog__seg_header_flags(hdr);
	return err;
}

/* ---- The seal ---- */

struct seal elog__seal_of(const char *log_id, uint64_t next, uint64_t end, uint64_t pos)
{
	struct seal s = { .next = next, .end = end, .pos = pos };
	elog__seal_id(log_id, s.id);
	return s;
}

void elog__seal_encode(unsigned char *p, const struct seal *s)
{
	memcpy(p, SEAL_MAGIC, 8);
	put64(p + SEAL_AT_NEXT, s->next);
	put64(p + SEAL_AT_END, s->end);
	put64(p + SEAL_AT_POS, s->pos);
	memcpy(p + SEAL_AT_ID, s->id, SEAL_ID_LEN);
	put32(p + SEAL_AT_CRC, elog__crc32c(0, p, SEAL_AT_CRC));
	put32(p + SEAL_AT_RESERVED, 0);
}

int elog__seal_decode(const unsigned char *p, uint64_t base, uint64_t pos, struct seal *s)
{
	if (memcmp(p, SEAL_MAGIC, 8) != 0)
		return ELOG_END;
	if (get32(p + SEAL_AT_CRC) != elog__crc32c(0, p, SEAL_AT_CRC) ||
	    get32(p + SEAL_AT_RESERVED) != 0)
		return ELOG_CORRUPT;
	s->next = get64(p + SEAL_AT_NEXT);
	s->end = get64(p + SEAL_AT_END);
	s->pos = get64(p + SEAL_AT_POS);
	memcpy(s->id, p + SEAL_AT_ID, SEAL_ID_LEN);
	if (s->pos != pos || s->end < base || s->next < s->end)
		return ELOG_CORRUPT;
	return 0;
}

int elog__seg_end(int fd, int sealed, uint64_t base, uint64_t size, const unsigned char *tail,
                  struct seg_end *e)
{
	unsigned char p[SEAL_SIZE];
	size_t got = SEAL_SIZE;
	int err;
	*e = (struct seg_end){ .end = size, .chain = sealed ? CHAIN_UNSEALED : CHAIN_NONE };
	if (!sealed || size < SEG_HDR + SEAL_SIZE)
		return 0;
	if (!tail && (err = elog__fs_pread_full(fd, p, SEAL_SIZE, (off_t)(size - SEAL_SIZE), &got)))
		return err;
	err = got < SEAL_SIZE
	              ? ELOG_END
	              : elog__seal_decode(tail ? tail : p, base, size - SEAL_SIZE, &e->seal);
	if (err == 0) {
		e->chain = CHAIN_SEALED;
		e->end = e->seal.pos;
	} else if (err == ELOG_CORRUPT) {
		e->bad_seal = 1;
		e->end = size - SEAL_SIZE;
	}
	return 0;
}

int elog__seal_write(int fd, uint64_t pos, const struct seal *s)
{
	unsigned char p[SEAL_SIZE];
	elog__seal_encode(p, s);
	return elog__fs_pwrite_all(fd, p, SEAL_SIZE, (off_t)pos);
}

int elog__seg_chain_next(int fd, uint64_t base, const struct scan *s, uint64_t listed,
                         struct seal *seal, char *msg)
{
	unsigned char hdr[SEG_HDR];
	char name[NAME_MAX_LOCAL];
	size_t got;
	if (s->sealed) {
		*seal = s->seal;
		return 0;
	}
	int err = elog__fs_pread_full(fd, hdr, SEG_HDR, 0, &got);
	elog__seg_name(name, base, SEG_EXT);
	if (err)
		return elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
	if (got == SEG_HDR && elog__seg_header_sealed(hdr))
		return elog__errmsg_set(msg, ELOG_CORRUPT,
		                        "%s: a closed segment without its "
		                        "seal: it was truncated",
		                        name);
	*seal = elog__seal_of("", listed, listed, s->pos); /* of no log: compaction names it */
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct collect {
	uint64_t *v;
	size_t n, cap;
};

static int collect_segment(const char *name, void *arg)
{
	struct collect *c = arg;
	uint64_t base;
	if (!elog__seg_parse_name(name, SEG_EXT, &base))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		uint64_t *nv = realloc(c->v, cap * sizeof *nv);
		if (!nv)
			return ENOMEM;
		c->v = nv;
		c->cap = cap;
	}
	c->v[c->n++] = base;
	return 0;
}

int elog__seglist_read_start(int dfd, struct seglist *sl, const char *log_id,
                             struct elog__start_view *sv)
{
	struct collect c = { 0 };
	struct elog__start_view local;
	if (!sv)
		sv = &local;
	/* The directory first, then the start: retention writes the start
	 * before it unlinks, so whatever listing we got, the start read
	 * after it hides every segment that is no longer in it. */
	int err = elog__fs_dir_each(dfd, collect_segment, &c);
	if (!err && c.n)
		qsort(c.v, c.n, sizeof *c.v, cmp_u64);
	if (!err)
		err = elog__start_view(dfd, c.v, c.n, log_id, sv);
	if (err) {
		free(c.v);
		return err;
	}
	if (sv->hidden)
		memmove(c.v, c.v + sv->hidden, (c.n - sv->hidden) * sizeof *c.v);
	sl->base = c.v;
	sl->n = c.n - sv->hidden;
	return 0;
}

int elog__seglist_read(int dfd, struct seglist *sl)
{
	return elog__seglist_read_start(dfd, sl, NULL, NULL);
}

void elog__seglist_free(struct seglist *sl)
{
	free(sl->base);
	sl->base = NULL;
	sl->n = 0;
}

ssize_t elog__seglist_find(const struct seglist *sl, uint64_t offset)
{
	size_t lo = 0, hi = sl->n; /* answer in [lo-1, hi) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sl->base[mid] <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t)lo - 1;
}
