/*
 * recover.c: what the writer does to a log's tail before it appends when
 * it cannot trust it (elog(5), Recovery).  The active segment is cut at the
 * first record that is incomplete or damaged, even when later bytes look
 * valid: the kernel writes dirty pages back in no particular order.  A cut
 * below the watermark would drop acknowledged data: the writer refuses to
 * open instead.  Closed segments were synced before the next one was made,
 * so only their derived indexes are checked.
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
#include "writer.h"

/* Open the active segment read-write into rc and check its header.  A
 * header that never became durable belongs to a segment created just
 * before a crash, in which nothing was promised: it is written anew with
 * new_flags. */
static int open_active(int dfd, uint64_t base, uint64_t acked, const struct elog_settings *set,
                       uint32_t new_flags, struct recovery *rc, char *msg)
{
	char name[NAME_MAX_LOCAL];
	unsigned char hdr[SEG_HDR];
	struct stat st;
	size_t got;
	int err;

	if ((err = elog__seg_open_raw(dfd, base, O_RDWR, &rc->segfd, hdr, &got, &st, msg)) != 0)
		return err;
	rc->file_size = (uint64_t)st.st_size;
	/* Another segment's copy, or another log's, is refused, never
	 * adopted: its header is whole, so nothing was lost in a crash. */
	int fault = elog__seg_header_fault(hdr, got, base, set->id);
	if (fault == SEG_FAULT_VERSION || fault == SEG_FAULT_BASE || fault == SEG_FAULT_LOG)
		return elog__seg_header_verify(hdr, got, base, set->id, msg);
	if (fault != SEG_FAULT_NONE && fault != SEG_FAULT_RESERVED) {
		elog__seg_name(name, base, SEG_EXT);
		if (acked > 0)
			return elog__errmsg_set(
			        msg, ELOG_CORRUPT,
			        "%s: damaged header, but %llu bytes were acknowledged", name,
			        (unsigned long long)acked);
		elog__seg_header_encode(hdr, base, new_flags, set->id);
		if (ftruncate(rc->segfd, 0) < 0 ||
		    (err = elog__fs_pwrite_all(rc->segfd, hdr, SEG_HDR, 0)) != 0) {
			err = err ? err : errno;
			return elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
		}
		rc->file_size = SEG_HDR;
		rc->cut = 1;
	}
	rc->flags = elog__seg_header_flags(hdr);
	return 0;
}

/* Scan the active segment's records into rc's index entries, up to the
 * first that is incomplete or damaged (or whose offset does not increase):
 * *at is where the valid records end, *next the offset after them.
 * ELOG_END or ELOG_CORRUPT, else an error with its message. */
static int scan_active(struct recovery *rc, uint32_t interval, uint64_t limit, uint64_t *at,
                       uint64_t *next, char *msg)
{
	char name[NAME_MAX_LOCAL];
	struct scan s;
	struct seg_tail t = { .next = rc->base, .end = SEG_HDR };
	struct elog_record rec;
	int err;
	*at = SEG_HDR;
	*next = rc->base;
	if ((err = elog__scan_init(&s, rc->segfd, rc->base, SEG_HDR, limit)) != 0)
		return elog__errmsg_set(msg, err, "%s", elog_strerror(err));
	while ((err = elog__seg_tail_next(&s, &t, &rec, at)) == 0) {
		struct idx_entry e;
		if (elog__idx_builder_add(&rc->ib, rec.offset, rec.ts_ms, *at, interval, &e) &&
		    (err = elog__idx_push(&rc->ix, &e)) != 0)
			break;
	}
	elog__scan_free(&s);
	*at = t.end;
	*next = t.next;
	if (err != ELOG_END) {
		elog__seg_name(name, rc->base, SEG_EXT);
		return elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
	}
	return t.why == TAIL_WHOLE ? ELOG_END : ELOG_CORRUPT;
}

/* Write the active segment's index from rc's entries, unless the file on
 * disk already says exactly that (a valid index is never rewritten), and
 * open it.  After a failed sync (always) it is rewritten: a failed
 * fdatasync of the index may have dropped its pages, which still read
 * back from the cache, and the segment is closed with it later. */
static int index_active(int dfd, struct recovery *rc, int always, char *msg)
{
	char name[NAME_MAX_LOCAL], *disk = NULL;
	size_t len = IDX_HDR + rc->ix.n * IDX_ENTRY, got = 0;
	int err = 0;
	unsigned char *buf = malloc(len);
	if (!buf)
		return elog__errmsg_set(msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	elog__idx_header_encode(buf);
	for (size_t i = 0; i < rc->ix.n; i++)
		elog__idx_entry_encode(buf + IDX_HDR + i * IDX_ENTRY, &rc->ix.e[i]);
	elog__seg_name(name, rc->base, IDX_EXT);
	/* The file on disk holds exactly these bytes: it stays. */
	if (always || elog__fs_read_small(dfd, name, len + 1, &disk, &got) != 0 || got != len ||
	    memcmp(disk, buf, len) != 0)
		err = elog__fs_replace_file(dfd, name, buf, len);
	free(disk);
	free(buf);
	if (!err && (rc->idxfd = elog__fs_openat(dfd, name, O_RDWR, 0)) < 0)
		err = errno;
	if (err)
		return elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
	rc->idx_size = len;
	return 0;
}

int elog__recover_active(int dfd, const struct watermark *wm, uint64_t base,
                         const struct elog_settings *set, uint32_t new_flags, int to_watermark,
                         struct recovery *rc, char *msg)
{
	char name[NAME_MAX_LOCAL];
	uint64_t at, next;
	int err;

	memset(rc, 0, sizeof *rc);
	rc->segfd = rc->idxfd = -1;
	rc->base = base;
	elog__seg_name(name, base, SEG_EXT);
	/* The bytes of the active segment the watermark vouches for. */
	uint64_t acked = wm->segment_base == base ? wm->segment_bytes : 0;

	if (wm->segment_base > base)
		return elog__errmsg_set(msg, ELOG_CORRUPT,
		                        "%s: watermark names segment %020llu, which is missing",
		                        FN_WATERMARK, (unsigned long long)wm->segment_base);
	if ((err = open_active(dfd, base, acked, set, new_flags, rc, msg)) != 0)
		return err;

	/* After a failed sync, only what the watermark vouches for stays. */
	err = scan_active(rc, set->index_interval,
	                  to_watermark ? (acked > SEG_HDR ? acked : SEG_HDR) : UINT64_MAX, &at,
	                  &next, msg);
	if (err != ELOG_END && err != ELOG_CORRUPT)
		return err;
	if (err == ELOG_CORRUPT && at < acked)
		return elog__errmsg_set(
		        msg, ELOG_CORRUPT,
		        "%s: damaged record at byte %llu, below the %llu durable bytes "
		        "(acknowledged data is damaged)",
		        name, (unsigned long long)at, (unsigned long long)acked);
	if (at < acked || next < wm->durable_end)
		return elog__errmsg_set(
		        msg, ELOG_CORRUPT,
		        "%s: ends at byte %llu (offset %llu), but the watermark says "
		        "%llu bytes (offset %llu) are durable",
		        name, (unsigned long long)at, (unsigned long long)next,
		        (unsigned long long)acked, (unsigned long long)wm->durable_end);
	if (at < rc->file_size) {
		if (ftruncate(rc->segfd, (off_t)at) < 0)
			return elog__errmsg_set(msg, errno, "%s: %s", name, elog_strerror(errno));
		rc->cut = 1;
	}
	rc->size = at;
	rc->next = next;

	/* After a failed sync the header is written again: when the failed
	 * sync was the first of a new segment, the header's page was in it,
	 * may have been dropped, and reads back only from the cache; written
	 * again, the sync below makes it durable.  Not when the watermark
	 * vouches for records of the segment: its header was synced before
	 * them, and a header written again and torn by a power loss before
	 * the sync would take them with it. */
	if (to_watermark && acked <= SEG_HDR) {
		unsigned char hdr[SEG_HDR];
		elog__seg_header_encode(hdr, base, rc->flags, set->id);
		if ((err = elog__fs_pwrite_all(rc->segfd, hdr, SEG_HDR, 0)) != 0)
			return elog__errmsg_set(msg, err, "%s: %s", name, elog_strerror(err));
	}
	/* Whatever survived is made durable now, before it is published.
	 * Bytes up to the watermark's were synced before it was written;
	 * only a cut or bytes past them need it. */
	if ((rc->cut || at > acked || to_watermark) && fdatasync(rc->segfd) < 0) {
		rc->sync_failed = errno;
		return elog__errmsg_set(msg, errno, "%s: fdatasync: %s", name,
		                        elog_strerror(errno));
	}
	return index_active(dfd, rc, to_watermark, msg);
}

int elog__recover_index(int dfd, uint64_t base, uint32_t interval, char *msg)
{
	char name[NAME_MAX_LOCAL];
	struct stat st;
	elog__seg_name(name, base, SEG_EXT);
	int fd = elog__fs_openat(dfd, name, O_RDONLY, 0);
	if (fd < 0 && errno == ENOENT) /* removed by retention meanwhile */
		return 0;
	if (fd < 0)
		return elog__errmsg_set(msg, errno, "%s: %s", name, elog_strerror(errno));
	int err = 0;
	if (fstat(fd, &st) < 0)
		err = elog__errmsg_set(msg, errno, "%s: %s", name, elog_strerror(errno));
	else if (!elog__idx_quick_check(dfd, fd, base, (uint64_t)st.st_size, interval))
		err = elog__idx_rebuild(dfd, fd, base, (uint64_t)st.st_size, interval, NULL, msg);
	close(fd);
	/* A closed segment too damaged to index is elog-verify's business;
	 * the writer only appends to the active one. */
	return err == ELOG_CORRUPT ? 0 : err;
}

struct leftovers {
	int dfd;
	int removed;
	int said; /* the message is set */
	char *msg;
};

static int remove_half_created(const char *name, void *arg)
{
	struct leftovers *l = arg;
	struct file_class fc;
	int half_created = elog__file_classify(name, &fc) == FILE_SEGMENT_NEW && !fc.tmp;
	int err = 0, dropped = 0;
	if (fc.tmp)
		err = elog__file_tmp_drop(l->dfd, name, &dropped);
	else if (half_created && unlinkat(l->dfd, name, 0) < 0 && errno != ENOENT)
		err = errno;
	else
		dropped = half_created;
	if (err) {
		l->said = 1;
		return elog__errmsg_set(l->msg, err, "%s: %s", name, elog_strerror(err));
	}
	l->removed += dropped;
	return 0;
}

int elog__recover_leftovers(int dfd, char *msg)
{
	/* "<base>.log.new" is a segment the writer was creating (header
	 * written, not yet renamed) when it stopped.  Under LOCK no one else
	 * creates one, so any left now is garbage.  So is the temporary file
	 * of a replacement (an index rebuilt, consumers.json committed) whose
	 * process was killed before renaming it, as elog__file_tmp_drop() judges:
	 * not by its pid, which names no process here when it was made in
	 * another pid namespace. */
	struct leftovers l = { dfd, 0, 0, msg };
	int err = elog__fs_dir_each(dfd, remove_half_created, &l);
	if (err && !l.said)
		err = elog__errmsg_set(msg, err, "listing the log directory: %s",
		                       elog_strerror(err));
	if (!err && l.removed && (err = elog__fs_fsync_dir(dfd)) != 0)
		err = elog__errmsg_set(msg, err, "fsync of the log directory: %s",
		                       elog_strerror(err));
	return err;
}
