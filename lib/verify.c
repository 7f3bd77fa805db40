/*
 * verify.c: checking a whole log; repair.c repairs what can be repaired
 * without losing anything that can still be read.
 *
 * One pass reads the directory listing and the start file (segments below
 * the start are leftovers of retention, not part of the log), the
 * settings, the watermark, every segment record by record with its index
 * beside it (both in file order, so memory stays bounded whatever the
 * sizes), then checks the watermark
 * against what the segments hold and consumers.json against the watermark.
 * Each problem is reported once, at the first byte where it shows; the
 * records after a damaged one are not guessed at.
 *
 * A check shares maint.lock, so compaction and retention are never seen
 * half way.  The writer may write meanwhile, so nothing past the
 * durable end of the active segment is called damage: it may be a write in
 * progress, and after a crash it is what the writer's recovery cuts anyway.
 * The active segment's index is rebuilt by every writer that opens the log,
 * so its problems are warnings too.  Closed segments never change except by
 * compaction or retention, which replace or remove whole files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "os.h"
#include "compress.h"
#include "files.h"
#include "consumers_json.h"
#include "maint.h"
#include "verify.h"

#define PROGRESS_STEP (1u << 20)
#define IDX_BUF_ENTRIES 512u

#define WM_BAD_WHY \
	" (readers take the closed segments as durable until a writer " \
	"opens the log and writes it again)"

/* A problem, with no next step to hint at or with hint (ELOG_HINT_*):
 * the text then stops where the caller's words for that step begin. */
#define report(v, kind, ...) elog__verify_report(v, kind, ELOG_HINT_NONE, NULL, __VA_ARGS__)
#define report_hint(v, kind, hint, ...) elog__verify_report(v, kind, hint, NULL, __VA_ARGS__)

static void progress(struct verify *v, uint64_t bytes)
{
	v->done += bytes;
	if (v->quiet || !v->o || !v->o->progress || v->done - v->shown < PROGRESS_STEP)
		return;
	v->shown = v->done;
	struct elog_progress p = { v->done, v->total };
	v->o->progress(v->o->arg, &p);
}

/* A file that elog__fs_openat() refuses to open (err ELOOP or
 * ELOG_NOTREG), as a problem of kind; 1 when err was one. */
static int refused(struct verify *v, int kind, const char *name, int err)
{
	if (err != ELOOP && err != ELOG_NOTREG)
		return 0;
	report(v, kind, name, ELOG_NOPOS,
	       err == ELOOP ? "a symbolic link, which elog refuses to follow"
	                    : "not a regular file");
	return 1;
}

/* Report msg, a library message "<file>: [byte N: ]what", as damage of
 * file (at byte N). */
static void report_msg(struct verify *v, const char *file, const char *msg)
{
	size_t n = strlen(file);
	unsigned long long pos;
	int used = 0;
	if (strncmp(msg, file, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
		msg += n + 2;
	if (sscanf(msg, "byte %llu: %n", &pos, &used) == 1 && used > 0)
		report(v, ELOG_PROBLEM_DAMAGE, file, pos, "%s", msg + used);
	else
		report(v, ELOG_PROBLEM_DAMAGE, file, ELOG_NOPOS, "%s", msg);
}

/* Whether dictionary id loads: 0, or why not in why (ELOG_MSG_MAX). */
static int dict_check(struct verify *v, uint64_t id, char *why)
{
	unsigned char *d;
	size_t len;
	int err = id > DICT_ID_MAX ? ELOG_CORRUPT
	                           : elog__dict_load(v->dfd, (uint32_t)id, &d, &len, why);
	if (err == 0)
		free(d);
	else if (id > DICT_ID_MAX)
		snprintf(why, ELOG_MSG_MAX, "dictionary id out of range");
	else if (err != ELOG_CORRUPT)
		snprintf(why, ELOG_MSG_MAX, "%s", elog_strerror(err));
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sort one name of the directory into segments, indexes, known files and
 * strays. */
static int sort_name(const char *name, void *arg)
{
	struct verify *v = arg;
	struct file_class fc;
	int kind = elog__file_classify(name, &fc);
	if (!fc.tmp && kind >= FILE_DICT) {
		char why[ELOG_MSG_MAX];
		/* Every dictionary is checked, used or not: the writer of a
		 * compressed log loads the newest when it opens the log. */
		if (kind == FILE_DICT && dict_check(v, fc.num, why) != 0)
			report_msg(v, name, why);
		return 0;
	}
	if (!fc.tmp && kind == FILE_SEGMENT)
		return elog__array_push(&v->base, &v->n, sizeof fc.num, &fc.num);
	if (!fc.tmp && kind == FILE_INDEX) {
		char seg[NAME_MAX_LOCAL];
		struct stat st;
		elog__seg_name(seg, fc.num, SEG_EXT);
		if (fstatat(v->dfd, seg, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			report(v, ELOG_PROBLEM_WARNING, name, ELOG_NOPOS,
			       "index of a segment that does not exist");
	} else if (fc.tmp || kind == FILE_COMPACT_TMP)
		report(v, ELOG_PROBLEM_WARNING, name, ELOG_NOPOS,
		       "temporary file of a replacement in progress or "
		       "interrupted by a crash");
	else if (kind == FILE_SEGMENT_NEW)
		report(v, ELOG_PROBLEM_WARNING, name, ELOG_NOPOS,
		       "a segment the writer was creating when it stopped; "
		       "the writer removes it when it next opens the log");
	else if (kind == FILE_CUT)
		report_hint(v, ELOG_PROBLEM_WARNING, ELOG_HINT_CUT, name, ELOG_NOPOS,
		            "bytes cut from a segment");
	else
		report(v, ELOG_PROBLEM_WARNING, name, ELOG_NOPOS, "unknown file, ignored by elog");
	return 0;
}

/* The start file against the segments: segments below the start are what
 * an interrupted retention run left (warnings), and are taken out of the
 * list; a start that readers ignore, or that is not the first segment's
 * base, is damage. */
static int check_start(struct verify *v)
{
	struct elog__start_view view, *sv = &view;
	int err = elog__start_view(v->dfd, v->base, v->n, v->have_set ? v->set.id : NULL, sv);
	if (err == ELOG_BADVERSION)
		return elog__errmsg_set(v->msg, err, "%s: unsupported format version", FN_START);
	if (err)
		return elog__errmsg_set(v->msg, err, "%s: %s", FN_START, elog_strerror(err));
	if (sv->state == START_DAMAGED) {
		v->start_fix = 1;
		report(v, ELOG_PROBLEM_DAMAGE, FN_START, ELOG_NOPOS,
		       "%s; ignored: the "
		       "log is read from its first segment",
		       sv->why);
	} else if (sv->state == START_BEYOND) {
		v->start_fix = 1;
		report(v, ELOG_PROBLEM_DAMAGE, FN_START, START_AT_START,
		       "says the log starts at offset %llu, past the base of its "
		       "newest segment %llu; ignored",
		       (unsigned long long)sv->start, (unsigned long long)v->base[v->n - 1]);
	}
	if (sv->state != START_OK || v->n == 0)
		return 0;
	for (size_t i = 0; i < sv->hidden; i++) {
		char name[NAME_MAX_LOCAL];
		elog__seg_name(name, v->base[i], SEG_EXT);
		report_hint(v, ELOG_PROBLEM_WARNING, ELOG_HINT_RETAIN, name, ELOG_NOPOS,
		            "below the log's start %llu: retention removed it and was "
		            "stopped before unlinking it; readers skip it",
		            (unsigned long long)sv->start);
	}
	v->n -= sv->hidden;
	memmove(v->base, v->base + sv->hidden, v->n * sizeof *v->base);
	if (sv->start < v->base[0])
		report(v, ELOG_PROBLEM_DAMAGE, FN_START, START_AT_START,
		       "says the log starts at offset %llu, but its first segment's "
		       "base is %llu: the segments in between are missing",
		       (unsigned long long)sv->start, (unsigned long long)v->base[0]);
	else if (sv->start > v->base[0]) {
		/* Listings keep the segment that holds the start, whole. */
		v->start_fix = 1;
		report(v, ELOG_PROBLEM_DAMAGE, FN_START, START_AT_START,
		       "says the log starts at offset %llu, which is not a segment's "
		       "base: segment %llu holds it and is read whole",
		       (unsigned long long)sv->start, (unsigned long long)v->base[0]);
	}
	return 0;
}

/* A segment whose header is whole but names another base (a copy of
 * another segment under a name not its own) or another log is no part of
 * this log's chain: every program refuses it, and it is taken out of the
 * list, so that nothing here (a repair, a salvage) takes it for damage of
 * the log.  Moved out, it leaves the log whole again. */
static void drop_strays(struct verify *v)
{
	size_t n = 0;
	for (size_t i = 0; i < v->n; i++) {
		unsigned char hdr[SEG_HDR];
		char name[NAME_MAX_LOCAL];
		size_t got = 0;
		int fd, fault = SEG_FAULT_NONE;
		if (elog__seg_open_raw(v->dfd, v->base[i], O_RDONLY, &fd, hdr, &got, NULL, NULL) ==
		    0) {
			fault = elog__seg_header_fault(hdr, got, v->base[i],
			                               v->have_set ? v->set.id : NULL);
			close(fd);
		}
		elog__seg_name(name, v->base[i], SEG_EXT);
		if (fault == SEG_FAULT_BASE)
			report_hint(v, ELOG_PROBLEM_DAMAGE, ELOG_HINT_FOREIGN, name, SEG_AT_BASE,
			            "a copy of segment %llu, whose base its header names, "
			            "under another name: not in the log's chain",
			            (unsigned long long)get64(hdr + SEG_AT_BASE));
		else if (fault == SEG_FAULT_LOG)
			report_hint(v, ELOG_PROBLEM_DAMAGE, ELOG_HINT_FOREIGN, name, SEG_AT_LOG,
			            "a segment of another log: its header does not name this "
			            "log's id");
		else
			v->base[n++] = v->base[i];
	}
	v->n = n;
}

/* Sort the directory into segments, indexes, known files and strays. */
static int list_dir(struct verify *v)
{
	int err = elog__fs_dir_each(v->dfd, sort_name, v);
	if (err)
		return elog__errmsg_set(v->msg, err, "listing the directory: %s",
		                        elog_strerror(err));
	/* qsort() must not be handed the NULL of an empty list. */
	if (v->n)
		qsort(v->base, v->n, sizeof *v->base, cmp_u64);
	if ((err = check_start(v)) != 0)
		return err;
	drop_strays(v);
	v->seg = calloc(v->n ? v->n : 1, sizeof *v->seg);
	if (!v->seg)
		return elog__errmsg_set(v->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	for (size_t i = 0; i < v->n; i++) {
		struct stat st;
		elog__seg_name(v->seg[i].name, v->base[i], SEG_EXT);
		if (fstatat(v->dfd, v->seg[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			v->total += (uint64_t)st.st_size;
	}
	return 0;
}

/* LOCK and the other small files must be plain files: elog opens them with
 * O_NOFOLLOW, so a symbolic link makes the programs fail, and refuses to
 * write a file with a second hard link (it may lie outside the log). */
static void check_plain_files(struct verify *v)
{
	static const char *const names[] = {
		FN_LOCK,           FN_WRITERS,   FN_MAINT, FN_CONSUMERS,
		FN_CONSUMERS_LOCK, FN_WATERMARK, FN_START, FN_COMPACT_STATE,
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct stat st;
		if (fstatat(v->dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode))
			report(v, ELOG_PROBLEM_DAMAGE, names[i], ELOG_NOPOS,
			       "a symbolic link, which elog refuses to follow");
		else if (!S_ISREG(st.st_mode) && strcmp(names[i], FN_WATERMARK) != 0 &&
		         strcmp(names[i], FN_START) != 0)
			report(v, ELOG_PROBLEM_DAMAGE, names[i], ELOG_NOPOS, "not a regular file");
		else if (S_ISREG(st.st_mode) && st.st_nlink > 1)
			report(v, ELOG_PROBLEM_DAMAGE, names[i], ELOG_NOPOS,
			       "has %lu hard links: elog refuses to write it",
			       (unsigned long)st.st_nlink);
	}
}

static int check_settings(struct verify *v)
{
	char *text;
	size_t len;
	int err = elog__fs_read_small(v->dfd, FN_SETTINGS, SETTINGS_MAX, &text, &len);
	if (err == ENOENT)
		return elog__errmsg_set(v->msg, ELOG_NOTLOG, "not an elog directory (no %s file)",
		                        FN_SETTINGS);
	if (refused(v, ELOG_PROBLEM_DAMAGE, FN_SETTINGS, err))
		return 0;
	if (err == EFBIG) {
		report(v, ELOG_PROBLEM_DAMAGE, FN_SETTINGS, ELOG_NOPOS, "larger than %u bytes",
		       SETTINGS_MAX);
		return 0;
	}
	if (err)
		return elog__errmsg_set(v->msg, err, "%s: %s", FN_SETTINGS, elog_strerror(err));
	err = elog__settings_parse(text, len, &v->set);
	free(text);
	if (err == ELOG_BADVERSION)
		return elog__errmsg_set(v->msg, err, "%s: unsupported format version", FN_SETTINGS);
	if (err)
		report(v, ELOG_PROBLEM_DAMAGE, FN_SETTINGS, ELOG_NOPOS,
		       "malformed: a line without a value, a bad number or id, a "
		       "missing format or id, or a size out of range");
	else
		v->have_set = 1;
	return 0;
}

static int read_watermark(struct verify *v)
{
	struct stat st;
	int fd = elog__fs_openat_stat(v->dfd, FN_WATERMARK, O_RDONLY, 0, &st);
	v->wm_state = WM_MISSING;
	memset(&v->wm, 0, sizeof v->wm);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return 0;
		if (!refused(v, ELOG_PROBLEM_DAMAGE, FN_WATERMARK, e))
			return elog__errmsg_set(v->msg, e, "%s: %s", FN_WATERMARK,
			                        elog_strerror(e));
		v->wm_state = WM_BAD;
		v->wm_fix = e == ELOOP; /* a link holds no data: repair replaces it */
		return 0;
	}
	int err = elog__wm_read(fd, &v->wm);
	close(fd);
	if (err == ELOG_CORRUPT) {
		/* It is never synced, so a power loss may garble it; readers
		 * then take the closed segments as durable, and the next
		 * writer writes it again. */
		v->wm_state = WM_BAD;
		v->wm_fix = 1;
		if (st.st_size < (off_t)WM_SIZE)
			report(v, ELOG_PROBLEM_WARNING, FN_WATERMARK, (uint64_t)st.st_size,
			       "truncated: %lld bytes of %u%s", (long long)st.st_size, WM_SIZE,
			       WM_BAD_WHY);
		else
			report(v, ELOG_PROBLEM_WARNING, FN_WATERMARK, 0, "bad magic or checksum%s",
			       WM_BAD_WHY);
		return 0;
	}
	if (err)
		return elog__errmsg_set(v->msg, err, "%s: %s", FN_WATERMARK, elog_strerror(err));
	v->wm_state = WM_OK;
	if (st.st_size > (off_t)WM_SIZE)
		report(v, ELOG_PROBLEM_WARNING, FN_WATERMARK, WM_SIZE,
		       "%lld bytes where %u are expected", (long long)st.st_size, WM_SIZE);
	return 0;
}

/* ---- the index, read alongside its segment ---- */

struct idxcheck {
	int fd;
	int kind; /* severity of its problems */
	int stop; /* a problem was reported: the rest is unchecked */
	char name[NAME_MAX_LOCAL];
	const struct idx_layout *lay; /* its version's */
	uint64_t base;                /* its segment's */
	uint64_t nent, k;             /* whole entries in the file; the next to read */
	int have;                     /* cur holds entry k - 1 */
	struct idx_entry cur;
	uint64_t buf_first, buf_n;                      /* the entries buf holds */
	unsigned char buf[IDX_BUF_ENTRIES * IDX_ENTRY]; /* last: not cleared */
};

static void idx_problem(struct verify *v, struct idxcheck *ic, uint64_t pos, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Report the index's first problem; what follows it is not checked, since
 * one bad entry makes --repair rebuild the whole file anyway. */
static void idx_problem(struct verify *v, struct idxcheck *ic, uint64_t pos, const char *fmt, ...)
{
	char text[ELOG_MSG_MAX];
	va_list ap;
	if (ic->stop)
		return;
	ic->stop = 1;
	ic->have = 0;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	report(v, ic->kind, ic->name, pos, "%s", text);
}

/* Entry k's byte position in the index file. */
static uint64_t entry_pos(const struct idxcheck *ic, uint64_t k)
{
	return IDX_HDR + k * ic->lay->entry;
}

/* Read the next entry into cur and check it on its own and against the one
 * before; ic->have is 0 at the end or after a problem. */
static int idx_advance(struct verify *v, struct idxcheck *ic)
{
	ic->have = 0;
	if (ic->stop || ic->k >= ic->nent)
		return 0;
	if (ic->k < ic->buf_first || ic->k >= ic->buf_first + ic->buf_n) {
		uint64_t want = ic->nent - ic->k;
		if (want > IDX_BUF_ENTRIES)
			want = IDX_BUF_ENTRIES;
		size_t got;
		int err = elog__fs_pread_full(ic->fd, ic->buf, (size_t)want * ic->lay->entry,
		                              (off_t)entry_pos(ic, ic->k), &got);
		if (err)
			return elog__errmsg_set(v->msg, err, "%s: %s", ic->name,
			                        elog_strerror(err));
		ic->buf_first = ic->k;
		ic->buf_n = got / ic->lay->entry;
		if (ic->buf_n == 0) { /* shrunk since we looked */
			ic->nent = ic->k;
			return 0;
		}
	}
	const unsigned char *p = ic->buf + (ic->k - ic->buf_first) * ic->lay->entry;
	uint64_t at = entry_pos(ic, ic->k);
	struct idx_entry e;
	/* The segment's length is not judged here: the entries are held
	 * against its records as they are read. */
	int fault = elog__idx_entry_check(p, ic->lay, ic->base, UINT64_MAX,
	                                  ic->k > 0 ? &ic->cur : NULL, &e);
	at += elog__idx_fault_at(ic->lay, fault);
	if (fault == IDX_FAULT_NONE) {
		ic->cur = e;
		ic->k++;
		ic->have = 1;
	} else if (fault == IDX_FAULT_CRC) {
		idx_problem(v, ic, at, "entry checksum mismatch");
	} else if (fault == IDX_FAULT_POS) {
		idx_problem(v, ic, at, "entry points at byte %lu, inside the segment header",
		            (unsigned long)e.pos);
	} else if (fault == IDX_FAULT_OFFSET) {
		idx_problem(v, ic, at, "entry says offset %llu, below the segment's base",
		            (unsigned long long)e.offset);
	} else if (fault == IDX_FAULT_ORDER) {
		idx_problem(v, ic, at, "entry out of order (offset %llu after %llu)",
		            (unsigned long long)e.offset, (unsigned long long)ic->cur.offset);
	} else {
		idx_problem(v, ic, at,
		            "entry's timestamps contradict each other or the "
		            "entry before (newest %lld, oldest %lld)",
		            (long long)e.ts_max, (long long)e.ts_min);
	}
	return 0;
}

/* Open base's index and check its header.  Returns 0 with ic->fd >= 0 when
 * there are entries to check, 0 with ic->fd < 0 otherwise. */
static int idx_open(struct verify *v, struct idxcheck *ic, uint64_t base, int active,
                    struct segstate *ss)
{
	struct stat st;
	unsigned char hdr[IDX_HDR];
	size_t got;
	memset(ic, 0, offsetof(struct idxcheck, buf));
	ic->kind = active ? ELOG_PROBLEM_WARNING : ELOG_PROBLEM_DAMAGE;
	elog__seg_name(ic->name, base, IDX_EXT);
	ic->base = base;
	ic->fd = elog__fs_openat_stat(v->dfd, ic->name, O_RDONLY, 0, &st);
	if (ic->fd < 0) {
		int e = errno;
		ss->idx_bad = 1;
		ic->stop = 1;
		if (e == ENOENT)
			report(v, ELOG_PROBLEM_WARNING, ic->name, ELOG_NOPOS,
			       "missing: readers scan the segment instead");
		else if (!refused(v, ic->kind, ic->name, e))
			return elog__errmsg_set(v->msg, e, "%s: %s", ic->name, elog_strerror(e));
		return 0;
	}
	int err = elog__fs_pread_full(ic->fd, hdr, IDX_HDR, 0, &got);
	if (err) {
		close(ic->fd);
		ic->fd = -1;
		return elog__errmsg_set(v->msg, err, "%s: %s", ic->name, elog_strerror(err));
	}
	if (got < IDX_HDR) {
		report(v, ic->kind, ic->name, got, "truncated header: %zu bytes", got);
		goto bad;
	}
	if ((err = elog__idx_header_check(hdr, got, &ic->lay)) == ELOG_CORRUPT) {
		report(v, ic->kind, ic->name, 0, "bad magic: not an elog index");
		goto bad;
	}
	if (err) {
		report(v, ic->kind, ic->name, IDX_AT_VERSION, "unsupported index version %u",
		       get32(hdr + IDX_AT_VERSION));
		goto bad;
	}
	uint64_t size = (uint64_t)st.st_size;
	ic->nent = (size - IDX_HDR) / ic->lay->entry;
	if ((size - IDX_HDR) % ic->lay->entry != 0) {
		/* Checked first, as it is: whole entries before it may be
		 * fine, but the file as a whole is not. */
		report(v, ic->kind, ic->name, entry_pos(ic, ic->nent),
		       "truncated entry: %llu bytes at the end",
		       (unsigned long long)((size - IDX_HDR) % ic->lay->entry));
		goto bad;
	}
	return idx_advance(v, ic);
bad:
	ss->idx_bad = 1;
	ic->stop = 1;
	close(ic->fd);
	ic->fd = -1;
	return 0;
}

/* ---- segments ---- */

/* What checking one segment carries from one record to the next. */
struct segcheck {
	struct segstate *ss;
	const char *name; /* ss->name */
	uint64_t base;
	uint64_t next_base; /* of the segment after it; UINT64_MAX */
	int active;         /* the newest segment */
	int sealed;         /* its version ends it with a seal */
	uint64_t end;       /* where its records end */
	int wm_seg;         /* the one the watermark names */
	int fresh;          /* nothing in it was ever promised */
	int fd;
	uint32_t flags;                /* its header's: codec and dictionary */
	struct vdec *vd;               /* to decode the segment's values */
	int bad_values;                /* one value reported: the rest unchecked */
	struct idxcheck *ic;           /* its index, read in step */
	int beyond;                    /* offsets past the next segment's base */
	struct idx_builder ib;         /* where entries are due; the extremes */
	int64_t span_min, span_max;    /* ts_ms since the last entry's record */
	struct elog_segment_info info; /* what -l lists: the records readers may read */
};

/* Report what is wrong with the header of a segment (its fault in
 * ss->hdr_fault); 1 when its records can be read all the same. */
static int check_header(struct verify *v, const struct segcheck *c, const unsigned char *hdr,
                        size_t got)
{
	int kind = c->fresh ? ELOG_PROBLEM_WARNING : ELOG_PROBLEM_DAMAGE, f = c->ss->hdr_fault;
	const char *name = c->name;
	const char *why = c->fresh ? " in a segment with nothing acknowledged (the "
	                             "writer rewrites it)"
	                           : "";
	if (f == SEG_FAULT_SHORT)
		report(v, kind, name, got, "truncated header: the file has %llu bytes%s",
		       (unsigned long long)c->ss->size, why);
	else if (f == SEG_FAULT_MAGIC)
		report(v, kind, name, 0, "bad magic: not an elog segment%s", why);
	else if (f == SEG_FAULT_CRC) /* the records may still be sound */
		report(v, kind, name, 0, "header checksum mismatch%s", why);
	else if (f == SEG_FAULT_VERSION)
		report(v, kind, name, SEG_AT_VERSION,
		       "unsupported segment version %lu "
		       "or codec %lu",
		       (unsigned long)get32(hdr + SEG_AT_VERSION),
		       (unsigned long)get32(hdr + SEG_AT_FLAGS));
	else if (f == SEG_FAULT_RESERVED)
		/* Readers ignore the reserved field, but a writer only ever
		 * writes zeros there, so anything else is a changed byte. */
		report(v, kind, name, SEG_AT_LOG, "reserved header bytes are not zero");
	return f != SEG_FAULT_SHORT && f != SEG_FAULT_MAGIC && f != SEG_FAULT_VERSION;
}

/* Open the segment and check what lies before its records.  0 with c->fd
 * open when the records are to be read, 0 with c->fd < 0 when not (the
 * problem was reported), ELOG_END when the file is gone since it was
 * listed, or an error. */
static int open_checked(struct verify *v, struct segcheck *c)
{
	unsigned char hdr[SEG_HDR];
	struct stat st;
	size_t got;
	int err = elog__seg_open_raw(v->dfd, c->base, O_RDONLY, &c->fd, hdr, &got, &st, NULL);
	if (err == ENOENT) /* removed by retention since listed */
		return ELOG_END;
	if (err)
		return refused(v, ELOG_PROBLEM_DAMAGE, c->name, err)
		               ? 0
		               : elog__errmsg_set(v->msg, err, "%s: %s", c->name,
		                                  elog_strerror(err));
	/* The writer refuses to write through a second link; readers and
	 * maintenance, which never write into a closed segment, do not mind. */
	if (c->active && st.st_nlink > 1)
		report(v, ELOG_PROBLEM_DAMAGE, c->name, ELOG_NOPOS,
		       "has %lu hard links: "
		       "the writer refuses to write it",
		       (unsigned long)st.st_nlink);
	c->ss->size = c->info.bytes = (uint64_t)st.st_size;
	c->ss->hdr_fault = elog__seg_header_fault(hdr, got, c->base, NULL);
	if (!check_header(v, c, hdr, got)) {
		close(c->fd);
		c->fd = -1;
		return 0;
	}
	c->flags = elog__seg_header_flags(hdr);
	c->sealed = elog__seg_header_sealed(hdr);
	c->info.version = get32(hdr + SEG_AT_VERSION);
	return 0;
}

/* A compressed segment's values are decoded, every one, so that a log that
 * verifies clean reads to its end: the dictionary its header names must
 * load, and every value must be stored raw or decode with the segment's
 * codec. */
static int check_codec(struct verify *v, struct segcheck *c)
{
	uint32_t flags = c->flags;
	const struct codec *codec = elog__codec_flags_valid(flags) ? elog__codec_for_flags(flags)
	                                                           : NULL;
	char zmsg[ELOG_MSG_MAX];
	if (codec && SEG_DICT(flags) && dict_check(v, SEG_DICT(flags), zmsg) != 0) {
		report(v, ELOG_PROBLEM_DAMAGE, c->name, 12, "its values need dictionary %lu: %s",
		       (unsigned long)SEG_DICT(flags), zmsg);
		c->bad_values = 1; /* one report for the segment */
	}
	if (codec && elog__codec_usable(codec, zmsg) != 0) {
		report(v, ELOG_PROBLEM_WARNING, c->name, ELOG_NOPOS,
		       "compressed with "
		       "%s: this build has no %s support and cannot check its values",
		       codec->name, codec->name);
	} else if (codec && !(c->vd = elog__vdec_new())) {
		return elog__errmsg_set(v->msg, ENOMEM, "%s", elog_strerror(ENOMEM));
	}
	return 0;
}

/* The record's offset against the segment's range and the record before,
 * and what it adds to the segment's figures and to the watermark's. */
static void check_offset(struct verify *v, struct segcheck *c, const struct elog_record *rec,
                         uint64_t at, uint64_t end)
{
	struct segstate *ss = c->ss;
	if (rec->offset >= c->next_base && !c->beyond++) {
		ss->overlap = 1;
		ss->overlap_pos = at + REC_AT_OFFSET;
		ss->overlap_off = rec->offset;
	}
	ss->next = rec->offset + 1;
	if (!c->active || end <= c->ss->acked) { /* what -l lists: what readers may read */
		struct elog_segment_info *si = &c->info;
		if (si->records == 0 || rec->ts_ms < si->ts_min)
			si->ts_min = rec->ts_ms;
		if (si->records == 0 || rec->ts_ms > si->ts_max)
			si->ts_max = rec->ts_ms;
		if (si->records == 0)
			si->first = rec->offset;
		si->last = rec->offset;
		si->records++;
	}
	if (c->wm_seg && end <= v->wm.segment_bytes) {
		ss->wm_next = rec->offset + 1;
		ss->wm_boundary = end == v->wm.segment_bytes;
	}
}

/* Decode the record's value. */
static int check_value(struct verify *v, struct segcheck *c, const struct elog_record *rec,
                       uint64_t at)
{
	char zmsg[ELOG_MSG_MAX];
	const void *out;
	size_t outlen;
	if (!c->vd || c->bad_values)
		return 0;
	int zerr = elog__vdec_value(c->vd, v->dfd, c->flags, rec->value, rec->value_len, &out,
	                            &outlen, zmsg);
	if (zerr == ELOG_CORRUPT) {
		c->bad_values = 1;
		report(v, ELOG_PROBLEM_DAMAGE, c->name, at + REC_HDR + rec->key_len,
		       "value of offset %llu cannot be decoded: %s",
		       (unsigned long long)rec->offset, zmsg);
	} else if (zerr) {
		return elog__errmsg_set(v->msg, zerr, "%s: %s", c->name,
		                        zerr > 0 ? elog_strerror(zerr) : zmsg);
	}
	return 0;
}

/* The index, in step: its entries must sit at record starts with their
 * record's offset, and none may be missing. */
static int check_entry(struct verify *v, struct segcheck *c, const struct elog_record *rec,
                       uint64_t at, uint64_t end)
{
	struct idxcheck *ic = c->ic;
	struct idx_entry due;
	int err = 0;
	/* The builder keeps the segment's extremes in any case; where entries
	 * are due needs the settings' interval.  Past the durable end of the
	 * active segment the writer may not have written the entry yet. */
	int is_due = elog__idx_builder_add(&c->ib, rec->offset, rec->ts_ms, at,
	                                   v->have_set ? v->set.index_interval : UINT32_MAX,
	                                   &due) &&
	             v->have_set && !(c->active && end > c->ss->acked);
	const struct idx_layout *lay = ic->lay;
	int v2 = lay && lay->version == IDX_VERSION;
	if (ic->have && ic->cur.pos < end && ic->cur.pos != at)
		idx_problem(v, ic, entry_pos(ic, ic->k - 1) + lay->at_pos,
		            "entry points at byte %lu, which is not the start "
		            "of a record",
		            (unsigned long)ic->cur.pos);
	if (ic->have && !ic->stop && ic->cur.pos == at) {
		if (ic->cur.offset != rec->offset)
			idx_problem(v, ic, entry_pos(ic, ic->k - 1),
			            "entry says offset %llu, the record it points at "
			            "has %llu",
			            (unsigned long long)ic->cur.offset,
			            (unsigned long long)rec->offset);
		else if (ic->cur.ts_max != c->ib.ts_max)
			idx_problem(v, ic, entry_pos(ic, ic->k - 1) + lay->at_ts_max,
			            "entry says newest timestamp %lld, the records say %lld",
			            (long long)ic->cur.ts_max, (long long)c->ib.ts_max);
		else if (v2 && ic->cur.ts_min != c->ib.ts_min)
			idx_problem(v, ic, entry_pos(ic, ic->k - 1) + IDX_AT_TS_MIN,
			            "entry says oldest timestamp %lld, the records say %lld",
			            (long long)ic->cur.ts_min, (long long)c->ib.ts_min);
		else if (v2 && (ic->cur.span_min != c->span_min || ic->cur.span_max != c->span_max))
			idx_problem(v, ic, entry_pos(ic, ic->k - 1) + IDX_AT_SPAN_MIN,
			            "entry says the records since the entry before are "
			            "stamped %lld to %lld, they are %lld to %lld",
			            (long long)ic->cur.span_min, (long long)ic->cur.span_max,
			            (long long)c->span_min, (long long)c->span_max);
		else
			err = idx_advance(v, ic);
		c->span_min = c->span_max = rec->ts_ms; /* the next span starts here */
	} else {
		if (is_due && !ic->stop)
			idx_problem(v, ic, entry_pos(ic, ic->have ? ic->k - 1 : ic->k),
			            "no entry for the record at byte %llu (offset %llu): "
			            "the index is short or stale",
			            (unsigned long long)at, (unsigned long long)rec->offset);
		if (rec->ts_ms < c->span_min)
			c->span_min = rec->ts_ms;
		if (rec->ts_ms > c->span_max)
			c->span_max = rec->ts_ms;
	}
	if (ic->stop)
		c->ss->idx_bad = 1;
	return err;
}

/* Say what is wrong with the record at byte at, where the valid part of
 * the segment ended (t, and rec the record out of order). */
static void record_problem(struct verify *v, int kind, struct segcheck *c, uint64_t at,
                           const struct seg_tail *t, const struct elog_record *rec,
                           const char *where)
{
	uint64_t size = c->end;
	unsigned char h[REC_HDR];
	size_t got = 0;
	char what[128];
	elog__fs_pread_full(c->fd, h, sizeof h, (off_t)at, &got);
	size_t magic = got < sizeof SEAL_MAGIC - 1 ? got : sizeof SEAL_MAGIC - 1;
	int fault = elog__rec_fault(h, got, size - at);
	if (t->why == TAIL_ORDER && (rec->offset < c->base || t->next == c->base))
		snprintf(what, sizeof what, "offset %llu is below the segment's base %llu",
		         (unsigned long long)rec->offset, (unsigned long long)c->base);
	else if (t->why == TAIL_ORDER)
		snprintf(what, sizeof what, "offset %llu after %llu: offsets must increase",
		         (unsigned long long)rec->offset, (unsigned long long)(t->next - 1));
	else if (got > 0 && memcmp(h, SEAL_MAGIC, magic) == 0 && size - at < SEAL_SIZE)
		snprintf(what, sizeof what, "truncated seal: %llu of its %u bytes",
		         (unsigned long long)(size - at), SEAL_SIZE);
	else if (got > 0 && memcmp(h, SEAL_MAGIC, magic) == 0)
		snprintf(what, sizeof what, "damaged seal");
	else if (fault == REC_FAULT_SHORT)
		snprintf(what, sizeof what, "truncated record: %zu bytes at the end of the file",
		         got);
	else if (fault == REC_FAULT_LENGTH)
		snprintf(what, sizeof what, "corrupt record: length %u out of range", get32(h));
	else if (fault == REC_FAULT_TRUNCATED)
		snprintf(what, sizeof what, "truncated record: %u bytes long, %llu in the file",
		         get32(h) + 4, (unsigned long long)(size - at));
	else
		snprintf(what, sizeof what, "corrupt record: %s",
		         fault == REC_FAULT_KEY ? "key length past its end" : "checksum mismatch");
	report(v, kind, c->name, at, "%s%s (%llu bytes from here to the end are not read)", what,
	       where, (unsigned long long)(size - at));
}

/* How the records of the segment ended: err from elog__seg_tail_next(). */
static int check_end(struct verify *v, struct segcheck *c, int err, const struct seg_tail *t,
                     const struct elog_record *rec)
{
	uint64_t at = t->end;
	struct segstate *ss = c->ss;
	struct idxcheck *ic = c->ic;
	ss->valid_end = at;
	if (err == ELOG_END && t->why == TAIL_WHOLE) {
		err = 0;
		ss->clean = 1;
		/* Entries left point past the last record.  In the active
		 * segment they may be a write that began after we looked. */
		if (ic->have && !c->active)
			idx_problem(v, ic, entry_pos(ic, ic->k - 1) + ic->lay->at_pos,
			            "entry points at byte %lu, past the last record "
			            "(the segment has %llu bytes)",
			            (unsigned long)ic->cur.pos, (unsigned long long)ss->size);
	} else if (err == ELOG_END) {
		err = 0;
		ss->bad_at = at;
		if (c->active && at >= ss->acked)
			record_problem(v, ELOG_PROBLEM_WARNING, c, at, t, rec,
			               ", after the durable end, never acknowledged: the "
			               "writer's recovery cuts it");
		else
			record_problem(v, ELOG_PROBLEM_DAMAGE, c, at, t, rec,
			               c->active ? ", below the durable end" : "");
	} else if (err) {
		err = elog__errmsg_set(v->msg, err, "%s: %s", c->name, elog_strerror(err));
	}
	if (ic->stop)
		ss->idx_bad = 1;
	progress(v, ss->size > ss->valid_end ? ss->size - ss->valid_end : 0);
	return err;
}

/* Where the records of the open segment end: before its seal, when it
 * has one.  A closed segment of version 2 must: its seal is checked here,
 * and its place in the chain by check_chain() once all are read. */
static int check_seal(struct verify *v, struct segcheck *c)
{
	struct segstate *ss = c->ss;
	struct seg_end e;
	c->end = ss->size;
	ss->chain = CHAIN_NONE;
	int err = elog__seg_end(c->fd, c->sealed, c->base, ss->size, NULL, &e);
	if (err)
		return elog__errmsg_set(v->msg, err, "%s: %s", c->name, elog_strerror(err));
	if (e.chain == CHAIN_SEALED) {
		unsigned char id[SEAL_ID_LEN];
		ss->seal = e.seal;
		c->end = e.end;
		ss->chain = CHAIN_SEALED;
		elog__seal_id(v->set.id, id);
		if (v->have_set && memcmp(id, ss->seal.id, SEAL_ID_LEN) != 0)
			report_hint(v, ELOG_PROBLEM_DAMAGE, ELOG_HINT_FOREIGN, c->name,
			            ss->seal.pos + SEAL_AT_ID,
			            "its seal names another log: a segment copied in from "
			            "elsewhere?");
		return 0;
	}
	/* A damaged seal in the active segment is one the writer was
	 * writing when it crashed, past the durable end: the records'
	 * check reports it as the torn tail it is. */
	if (e.bad_seal && !c->active) {
		c->end = e.end;
		ss->chain = CHAIN_UNSEALED;
		report(v, ELOG_PROBLEM_DAMAGE, c->name, c->end,
		       "damaged seal "
		       "(the last %u bytes); its records are checked without it",
		       SEAL_SIZE);
	}
	/* No seal: the segment the watermark names has none until the
	 * writer rolls (a segment after it holds nothing promised); one
	 * below it lost its end (check_chain() says what). */
	if (e.chain == CHAIN_UNSEALED && !e.bad_seal && !c->active &&
	    (v->wm_state != WM_OK || c->base < v->wm.segment_base))
		ss->chain = CHAIN_UNSEALED;
	return 0;
}

/* Read the records of the open segment, its index beside them. */
static int check_records(struct verify *v, struct segcheck *c)
{
	struct segstate *ss = c->ss;
	struct elog_record rec;
	struct scan s;
	struct seg_tail t = { .next = c->base, .end = SEG_HDR };
	struct idxcheck ic; /* 24 KiB: its buffer */
	uint64_t at;
	int err;
	if ((err = idx_open(v, c->ic = &ic, c->base, c->active, ss)) != 0)
		return err;
	if ((err = check_seal(v, c)) != 0)
		goto out;
	if ((err = elog__scan_init(&s, c->fd, c->base, SEG_HDR, c->end)) != 0) {
		err = elog__errmsg_set(v->msg, err, "%s", elog_strerror(err));
		goto out;
	}
	ss->scanned = 1;
	ss->wm_boundary = v->wm.segment_bytes == SEG_HDR;
	while ((err = elog__seg_tail_next(&s, &t, &rec, &at)) == 0) {
		progress(v, s.pos - at);
		check_offset(v, c, &rec, at, s.pos);
		if ((err = check_value(v, c, &rec, at)) != 0 ||
		    (err = check_entry(v, c, &rec, at, s.pos)) != 0)
			break;
	}
	if (err && err != ELOG_END)
		t.end = at;
	err = check_end(v, c, err, &t, &rec);
	elog__scan_free(&s);
	c->info.index_version = ic.lay ? ic.lay->version : 0;
out:
	if (ic.fd >= 0)
		close(ic.fd);
	return err;
}

/* Count the segment, and hand it to the caller's hook. */
static void segment_done(struct verify *v, struct segcheck *c, uint64_t damage0)
{
	/* What is listed and counted is what readers may read: nothing past
	 * the durable end, which may be a write in progress. */
	c->info.damaged = c->ss->damaged = v->res->damage > damage0;
	v->res->segments++;
	v->res->records += c->info.records;
	v->res->bytes += c->info.bytes;
	if (!v->quiet && v->o && v->o->segment)
		v->o->segment(v->o->arg, &c->info);
}

static int check_segment(struct verify *v, size_t i)
{
	struct segcheck c = { .ss = &v->seg[i],
		              .base = v->base[i],
		              .fd = -1,
		              .span_min = IDX_SPAN_EMPTY_MIN,
		              .span_max = IDX_SPAN_EMPTY_MAX };
	struct segstate *ss = c.ss;
	uint64_t damage0 = v->res->damage;
	int err;

	c.active = i + 1 == v->n;
	c.next_base = c.active ? UINT64_MAX : v->base[i + 1];
	c.wm_seg = v->wm_state == WM_OK && v->wm.segment_base == c.base;
	ss->acked = c.wm_seg ? v->wm.segment_bytes : 0;
	/* A segment newer than the one the watermark names was created just
	 * before a crash or is being created: nothing in it was promised.
	 * Nor was anything of the newest segment when the watermark is
	 * missing or unreadable. */
	c.fresh = c.active && ss->acked == 0 &&
	          (v->wm_state != WM_OK || c.base > v->wm.segment_base);
	c.info.base = c.base;
	c.info.active = c.active;
	c.name = ss->name;
	ss->base = c.base;
	ss->hdr_fault = -1;
	ss->bad_at = UINT64_MAX;
	ss->valid_end = SEG_HDR;
	ss->next = ss->wm_next = c.base;
	if ((err = open_checked(v, &c)) != 0)
		return err == ELOG_END ? 0 : err;
	if (c.fd >= 0) {
		if ((err = check_codec(v, &c)) == 0)
			err = check_records(v, &c);
		elog__vdec_free(c.vd);
		close(c.fd);
		if (err)
			return err;
	}
	segment_done(v, &c, damage0);
	return 0;
}

/* Segment i's records run into segment i + 1's range.  After a merge
 * renamed its output over segment i but was stopped before it removed the
 * segment after, every record of that segment is also in segment i: the
 * log reads correctly (a reader skips offsets it has passed) and the next
 * elog-compact removes the copy.  Anything else is damage. */
static void check_overlap(struct verify *v, size_t i)
{
	const struct segstate *a = &v->seg[i], *b = &v->seg[i + 1];
	if (!a->overlap)
		return;
	if (i + 1 < v->n - 1 && a->clean && b->clean && b->scanned && !b->damaged &&
	    b->next <= a->next)
		report_hint(v, ELOG_PROBLEM_WARNING, ELOG_HINT_COMPACT_COPY, a->name,
		            a->overlap_pos,
		            "holds copies of every record of %s: a merge was interrupted", b->name);
	else
		report(v, ELOG_PROBLEM_DAMAGE, a->name, a->overlap_pos,
		       "offset %llu is not below the next segment's base %llu "
		       "(the segments overlap)",
		       (unsigned long long)a->overlap_off, (unsigned long long)b->base);
}

/* Offsets [from, to) lost between two segments, unless salvage recorded
 * them (check_salvaged() speaks of those). */
static void chain_loss(struct verify *v, const struct holes *h, const char *name, uint64_t pos,
                       uint64_t from, uint64_t to, const char *why)
{
	uint64_t a, b;
	/* Nothing past the durable end was promised. */
	if (v->wm_state == WM_OK && to > v->wm.durable_end)
		to = v->wm.durable_end;
	if (from >= to || elog__holes_find(h, from, to - 1, &a, &b))
		return;
	elog__array_push(&v->lost, &v->nlost, sizeof *v->lost, &(struct hole){ from, to - 1, 0 });
	report_hint(v, ELOG_PROBLEM_DAMAGE, ELOG_HINT_LOSS, name, pos,
	            "offsets %llu-%llu are lost: %s", (unsigned long long)from,
	            (unsigned long long)(to - 1), why);
}

/* The chain of segments: each closed segment's seal names the base of the
 * next one, so a segment missing, one truncated at a record boundary or
 * one that does not belong shows here even though every file reads. */
static void check_chain(struct verify *v)
{
	const struct holes *h = &v->holes;
	char why[160];
	for (size_t i = 0; i < v->n; i++) {
		const struct segstate *a = &v->seg[i];
		const char *name = a->name;
		uint64_t next = i + 1 < v->n ? v->base[i + 1] : UINT64_MAX;
		if (a->chain == CHAIN_UNSEALED) {
			snprintf(why, sizeof why,
			         "the closed segment ends at byte %llu "
			         "without its seal: it was truncated",
			         (unsigned long long)a->valid_end);
			if (a->next < next)
				chain_loss(v, h, name, a->valid_end, a->next, next, why);
			else
				report_hint(v, ELOG_PROBLEM_DAMAGE, ELOG_HINT_RESEAL, name,
				            a->valid_end,
				            "the closed segment lost its seal (byte %llu on)",
				            (unsigned long long)a->valid_end);
			if (a->clean)
				elog__array_push(&v->reseal, &v->nreseal, sizeof *v->reseal,
				                 &(uint64_t){ i });
			continue;
		}
		if (a->chain != CHAIN_SEALED)
			continue;
		uint64_t at = a->seal.pos + SEAL_AT_NEXT;
		if (a->clean && a->next > a->seal.end)
			report(v, ELOG_PROBLEM_DAMAGE, name, a->seal.pos + SEAL_AT_END,
			       "its seal says its records end before offset %llu, but "
			       "offset %llu is in it",
			       (unsigned long long)a->seal.end, (unsigned long long)(a->next - 1));
		if (next == UINT64_MAX) {
			/* Sealed and newest: a writer between its seal and the
			 * next segment, unless records past it were durable. */
			if (v->wm_state == WM_OK && v->wm.durable_end > a->seal.next) {
				snprintf(why, sizeof why,
				         "the seal names segment %llu as the "
				         "next, which is missing, and the watermark says they "
				         "were durable",
				         (unsigned long long)a->seal.next);
				chain_loss(v, h, name, at, a->seal.next, v->wm.durable_end, why);
			}
		} else if (a->seal.next < next) {
			snprintf(why, sizeof why,
			         "the seal names segment %llu as the next, "
			         "but the next one is %llu: segments are missing",
			         (unsigned long long)a->seal.next, (unsigned long long)next);
			chain_loss(v, h, name, at, a->seal.next, next, why);
		} else if (a->seal.next > next && !a->overlap) {
			const struct segstate *b = &v->seg[i + 1];
			if (b->clean && b->next <= a->seal.next && i + 2 < v->n)
				report_hint(v, ELOG_PROBLEM_WARNING, ELOG_HINT_COMPACT, b->name,
				            ELOG_NOPOS,
				            "lies inside the range of %s, whose seal names %llu as "
				            "the next: a merge was interrupted",
				            name, (unsigned long long)a->seal.next);
			else
				report(v, ELOG_PROBLEM_DAMAGE, b->name, ELOG_NOPOS,
				       "is not in the log's chain: %s's seal names %llu as the "
				       "next segment (a segment copied in from elsewhere?)",
				       name, (unsigned long long)a->seal.next);
		}
	}
}

/* ---- the watermark against the data ---- */

static void check_watermark(struct verify *v)
{
	const struct watermark *wm = &v->wm;
	if (v->n == 0)
		return;
	/* Offsets stay below ELOG_OFFSET_MAX: a log past it has room for no
	 * writer's next batch, and one at 2^64 - 1 wrapped. */
	uint64_t newest = v->base[v->n - 1];
	if (newest >= ELOG_OFFSET_MAX || (v->wm_state == WM_OK &&
	                                  (wm->durable_end > ELOG_OFFSET_MAX ||
	                                   (wm->durable_end == 0 && wm->segment_base > 0)))) {
		report(v, ELOG_PROBLEM_DAMAGE, FN_WATERMARK, WM_AT_END,
		       "offsets reach %llu, out of range: offsets stay below %llu "
		       "(ELOG_OFFSET_MAX); copy the records to a new log",
		       (unsigned long long)(newest > wm->durable_end ? newest : wm->durable_end),
		       (unsigned long long)ELOG_OFFSET_MAX);
		return;
	}
	if (v->wm_state == WM_MISSING) {
		if (v->res->records > 0)
			report(v, ELOG_PROBLEM_WARNING, FN_WATERMARK, ELOG_NOPOS,
			       "missing: readers see no record until a writer opens the log");
		return;
	}
	if (v->wm_state != WM_OK)
		return;
	char name[NAME_MAX_LOCAL];
	elog__seg_name(name, wm->segment_base, SEG_EXT);
	if (wm->segment_base > newest) {
		/* Read before the listing, it names a segment listed unless
		 * that segment is missing. */
		v->wm_fix = 1;
		report(v, ELOG_PROBLEM_DAMAGE, FN_WATERMARK, WM_AT_BASE,
		       "names segment %s, which does not exist", name);
		return;
	}
	struct seglist sl = { v->base, v->n };
	ssize_t i = elog__seglist_find(&sl, wm->segment_base);
	if (i < 0 || v->base[i] != wm->segment_base) {
		if (wm->durable_end || wm->segment_base || wm->segment_bytes)
			report(v, ELOG_PROBLEM_WARNING, FN_WATERMARK, WM_AT_BASE,
			       "names segment %s, which no longer exists", name);
		return;
	}
	const struct segstate *ss = &v->seg[i];
	/* A watermark a power loss left behind may name a segment that was
	 * closed since (and perhaps compacted): its length no longer applies,
	 * only that nothing durable lay past the next segment's base. */
	if ((size_t)i + 1 < v->n) {
		if (wm->durable_end > v->base[i + 1]) {
			v->wm_fix = 1;
			report(v, ELOG_PROBLEM_DAMAGE, FN_WATERMARK, WM_AT_END,
			       "durable end %llu is past segment %s, which the next "
			       "segment follows at %llu",
			       (unsigned long long)wm->durable_end, name,
			       (unsigned long long)v->base[i + 1]);
		}
		return;
	}
	/* A damaged record below the durable length was reported already;
	 * what the watermark says beyond it cannot be checked. */
	if (!ss->scanned || ss->bad_at < wm->segment_bytes)
		return;
	if (wm->segment_bytes > ss->size) {
		v->wm_fix = 1;
		report(v, ELOG_PROBLEM_DAMAGE, FN_WATERMARK, WM_AT_BYTES,
		       "says %llu bytes of %s are durable, but it has %llu",
		       (unsigned long long)wm->segment_bytes, name, (unsigned long long)ss->size);
	} else if (wm->segment_bytes != 0 && !ss->wm_boundary) {
		v->wm_fix = 1;
		report(v, ELOG_PROBLEM_DAMAGE, FN_WATERMARK, WM_AT_BYTES,
		       "durable length %llu of %s is not the end of a record",
		       (unsigned long long)wm->segment_bytes, name);
	}
	if (wm->durable_end > ss->wm_next) {
		v->wm_fix = 1;
		report(v, ELOG_PROBLEM_DAMAGE, FN_WATERMARK, WM_AT_END,
		       "durable end %llu is past the durable records of %s, which "
		       "end before offset %llu",
		       (unsigned long long)wm->durable_end, name, (unsigned long long)ss->wm_next);
	}
}

static void check_consumers(struct verify *v)
{
	char *text, msg[ELOG_MSG_MAX];
	size_t len;
	struct ctable t = { 0 };
	int err = elog__fs_read_small(v->dfd, FN_CONSUMERS, CONSUMERS_FILE_MAX, &text, &len);
	if (err == ENOENT || err == ELOOP || err == ELOG_NOTREG)
		return; /* absent, or reported by check_plain_files() */
	if (err == EFBIG) {
		report(v, ELOG_PROBLEM_DAMAGE, FN_CONSUMERS, ELOG_NOPOS, "larger than %u bytes",
		       CONSUMERS_FILE_MAX);
		return;
	}
	if (err) {
		report(v, ELOG_PROBLEM_DAMAGE, FN_CONSUMERS, ELOG_NOPOS, "cannot be read: %s",
		       elog_strerror(err));
		return;
	}
	msg[0] = '\0';
	err = elog__ctable_parse(&t, text, len, msg);
	free(text);
	if (err) {
		report_msg(v, FN_CONSUMERS, msg[0] ? msg : elog_strerror(err));
		return;
	}
	if (v->wm_state == WM_OK) {
		for (size_t i = 0; i < t.n; i++)
			if (!t.v[i].uncommitted && t.v[i].offset >= v->wm.durable_end)
				report(v, ELOG_PROBLEM_DAMAGE, FN_CONSUMERS, ELOG_NOPOS,
				       "consumer %s committed offset %llu, at or above the "
				       "durable end %llu: the log lost records it had read",
				       t.v[i].name, (unsigned long long)t.v[i].offset,
				       (unsigned long long)v->wm.durable_end);
	}
	elog__ctable_free(&t);
}

/* Compaction stops on a tombstone state it cannot read, every run, until
 * the file is removed; say so here, in compaction's own words, so that a
 * check does not pass a log whose compaction cannot run. */
static void check_compact_state(struct verify *v)
{
	char msg[ELOG_MSG_MAX];
	if (elog__compact_state_check(v->dfd, msg) == ELOG_CORRUPT)
		report_msg(v, FN_COMPACT_STATE, msg);
}

/* One whole check.  v->dfd, flags, o, res and msg are set by the caller. */
static int check_all(struct verify *v)
{
	int err;
	if ((err = check_settings(v)) != 0)
		return err;
	/* The watermark before the listing: a writer that rolls in between
	 * then adds a segment past what the watermark vouches for, where
	 * the other order would see durable records past the newest
	 * segment listed, as if the segments holding them were lost. */
	if ((err = read_watermark(v)) != 0)
		return err;
	if ((err = list_dir(v)) != 0)
		return err;
	check_plain_files(v);
	check_compact_state(v);
	if (v->n == 0)
		report(v, ELOG_PROBLEM_DAMAGE, ".", ELOG_NOPOS,
		       "no segment files: the writer refuses to open the log");
	for (size_t i = 0; i < v->n; i++) {
		if ((err = check_segment(v, i)) != 0)
			return err;
		if (i > 0)
			check_overlap(v, i - 1);
	}
	v->holes_err = elog__holes_load(v->dfd, &v->holes);
	check_chain(v);
	check_watermark(v);
	check_consumers(v);
	elog__verify_losses(v);
	return elog__verify_unreadable(v);
}

static void verify_free(struct verify *v)
{
	free(v->base);
	free(v->seg);
	free(v->lost);
	free(v->reseal);
	elog__holes_free(&v->holes);
}

/* Checking shares maint.lock with other checks, so that compaction and
 * retention (which hold it exclusive) are never caught half way and taken
 * for damage: a check waits for a running maintenance, and maintenance
 * waits for running checks.  A log where maintenance never ran gets its
 * empty maint.lock here, owned like the directory (not a directory that is
 * not yet a whole log: it has no settings); a lock file that cannot
 * be opened or made (it is reported as such, or the directory is not
 * ours to write) leaves the check unlocked. */
static int share_maint_lock(int dfd)
{
	struct stat st;
	int fd = elog__fs_openat(dfd, FN_MAINT, O_RDONLY | O_NONBLOCK, 0);
	/* Only in a whole log: a directory being made a log must hold
	 * nothing but what its creation makes. */
	if (fd < 0 && errno == ENOENT && fstatat(dfd, FN_SETTINGS, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		fd = elog__fs_openat(dfd, FN_MAINT, O_RDONLY | O_CREAT | O_EXCL, 0666);
		if (fd >= 0 && geteuid() == 0 && fstat(dfd, &st) == 0 &&
		    fchown(fd, st.st_uid, st.st_gid) < 0) {
			close(fd);
			unlinkat(dfd, FN_MAINT, 0);
			return -1;
		}
		if (fd < 0 && errno == EEXIST)
			fd = elog__fs_openat(dfd, FN_MAINT, O_RDONLY | O_NONBLOCK, 0);
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	while (flock(fd, LOCK_SH) < 0)
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	return fd;
}

int elog_verify(const char *dir, const struct elog_verify_opts *o, struct elog_verify_result *res,
                char *msg)
{
	char local[ELOG_MSG_MAX];
	struct elog_verify_result dummy;
	int lockfd = -1, maintfd = -1, err;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof *res);
	struct verify v = { .msg = msg ? msg : local,
		            .flags = o ? o->flags : 0,
		            .o = o,
		            .res = res };
	v.msg[0] = '\0';
	v.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v.dfd < 0)
		return elog__errmsg_set(v.msg, errno, "%s", elog_strerror(errno));
	if (v.flags & ELOG_VERIFY_REPAIR) {
		if ((err = elog__repair_lock(&v, &lockfd, &maintfd)) != 0)
			goto out;
	} else {
		maintfd = share_maint_lock(v.dfd);
	}
	if ((err = check_all(&v)) != 0)
		goto out;
	res->remaining = res->damage;
	if (!(v.flags & ELOG_VERIFY_REPAIR))
		goto out;
	uint64_t repaired = res->repaired;
	if ((err = elog__repair_run(&v)) != 0 || res->repaired == repaired)
		goto out;

	/* Check again, silently, to count what the repair left. */
	struct elog_verify_result again = { 0 };
	struct verify v2 = { .dfd = v.dfd, .quiet = 1, .res = &again, .msg = v.msg };
	err = check_all(&v2);
	verify_free(&v2);
	res->remaining = again.damage;
	res->losses = again.losses;
	res->unreadable = again.unreadable;
	res->salvageable = again.salvageable;
out:
	verify_free(&v);
	if (maintfd >= 0)
		close(maintfd);
	if (lockfd >= 0)
		close(lockfd);
	close(v.dfd);
	return err;
}
