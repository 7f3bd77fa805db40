/*
 * files.c: what a name in a log directory says the file is.  Every part of
 * the library that sorts the files of a directory (creation, recovery,
 * maintenance's cleanup, verification) asks elog__file_classify(), so that the
 * names of elog(5) are read in one place.  And the rule that tells a
 * temporary file some process is writing from one a crash left
 * (elog__file_tmp_drop()): it asks what the name is, so it lives here, above
 * fsutil.c, not in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "os.h"
#include "files.h"

/* The files of a fixed name. */
static const struct {
	const char *name;
	int kind;
} fixed[] = {
	{ FN_SETTINGS, FILE_SETTINGS },
	{ FN_WATERMARK, FILE_WATERMARK },
	{ FN_START, FILE_START },
	{ FN_LOCK, FILE_LOCK },
	{ FN_WRITERS, FILE_WRITERS },
	{ FN_MAINT, FILE_MAINT },
	{ FN_CONSUMERS, FILE_CONSUMERS },
	{ FN_CONSUMERS_LOCK, FILE_CONSUMERS_LOCK },
	{ FN_COMPACT_STATE, FILE_COMPACT_STATE },
	{ FN_RETAIN_LAST, FILE_RETAIN_LAST },
	{ FN_COMPACT_LAST, FILE_COMPACT_LAST },
	{ FN_SALVAGED, FILE_SALVAGED },
	{ FN_LOSSES, FILE_LOSSES },
	{ FN_COPY_LAST, FILE_COPY_LAST },
};

/* The files of a segment: "<20 digits>" and one of these. */
static const struct {
	const char *ext;
	int kind;
} segment_files[] = {
	{ SEG_EXT, FILE_SEGMENT },
	{ IDX_EXT, FILE_INDEX },
	{ SEG_EXT SEG_NEW_EXT, FILE_SEGMENT_NEW },
	{ SEG_EXT MAINT_TMP_EXT, FILE_COMPACT_TMP },
	{ IDX_EXT MAINT_TMP_EXT, FILE_COMPACT_TMP },
};

/* 1 when s is one or more decimal digits and nothing else. */
static int all_digits(const char *s)
{
	size_t n = strspn(s, "0123456789");
	return n > 0 && s[n] == '\0';
}

/* "<ms>" or "<ms>-<n>" after the cut infix. */
static int cut_suffix(const char *s)
{
	size_t n = strspn(s, "0123456789");
	return n > 0 && (s[n] == '\0' || (s[n] == '-' && all_digits(s + n + 1)));
}

/* The kind of a name that is not a temporary file. */
static int classify_plain(const char *name, uint64_t *num)
{
	uint64_t base;
	*num = 0;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (strcmp(name, fixed[i].name) == 0)
			return fixed[i].kind;
	if (strncmp(name, DICT_PREFIX, sizeof DICT_PREFIX - 1) == 0 &&
	    all_digits(name + sizeof DICT_PREFIX - 1)) {
		uint64_t id = 0;
		for (const char *p = name + sizeof DICT_PREFIX - 1; *p; p++) {
			unsigned d = (unsigned)(*p - '0');
			id = id > (UINT64_MAX - d) / 10 ? UINT64_MAX : id * 10 + d;
		}
		*num = id;
		return FILE_DICT;
	}
	if (strlen(name) <= SEG_NAME_LEN || !elog__seg_parse_name(name, name + SEG_NAME_LEN, &base))
		return FILE_UNKNOWN;
	const char *ext = name + SEG_NAME_LEN;
	for (size_t i = 0; i < sizeof segment_files / sizeof segment_files[0]; i++)
		if (strcmp(ext, segment_files[i].ext) == 0) {
			*num = base;
			return segment_files[i].kind;
		}
	if (strncmp(ext, SEG_EXT CUT_INFIX, sizeof SEG_EXT CUT_INFIX - 1) == 0 &&
	    cut_suffix(ext + sizeof SEG_EXT CUT_INFIX - 1)) {
		*num = base;
		return FILE_CUT;
	}
	return FILE_UNKNOWN;
}

int elog__file_classify(const char *name, struct file_class *fc)
{
	const size_t k = sizeof TMP_INFIX - 1;
	memset(fc, 0, sizeof *fc);
	/* "<name>.tmp.<pid>.<n>": the last TMP_INFIX, after a name. */
	const char *t = strstr(name, TMP_INFIX), *u, *plain = name;
	char target[256];
	while (t && (u = strstr(t + k, TMP_INFIX)) != NULL)
		t = u;
	if (t && t != name) {
		const char *p = t + k;
		size_t n = strspn(p, "0123456789");
		if (n > 0 && p[n] == '.' && all_digits(p + n + 1) &&
		    (size_t)(t - name) < sizeof target) {
			long pid = 0;
			for (size_t i = 0; i < n; i++)
				pid = pid > (LONG_MAX - 9) / 10 ? LONG_MAX
				                                : pid * 10 + (p[i] - '0');
			memcpy(target, name, (size_t)(t - name));
			target[t - name] = '\0';
			fc->tmp = 1;
			fc->pid = pid;
			plain = target;
		}
	}
	fc->kind = classify_plain(plain, &fc->num);
	return fc->kind;
}

/* Versions of elog before this one did not lock their temporary files, and
 * a writer started before an upgrade (a `journalctl -f | elog-append`
 * running for months) still does not.  Its file is written in one burst and
 * renamed after one fsync, so one whose last change is this far from now is
 * no longer being written: only then is an unlocked temporary file garbage.
 * Either way from now, so that a file stamped by a wrong clock does not
 * stay for ever.  A crash's leftover waits this long for the next cleaner. */
#define TMP_STALE_MS (10 * 60 * 1000)

/* 1 when the last change of st lies TMP_STALE_MS or more from now. */
static int stale(const struct stat *st)
{
	int64_t changed = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
	int64_t age = elog__fs_now_ms() - changed;
	return age >= TMP_STALE_MS || age <= -TMP_STALE_MS;
}

int elog__file_tmp_drop(int dfd, const char *name, int *dropped)
{
	struct file_class fc;
	struct stat st, now;
	int fd, err = 0;

	*dropped = 0;
	elog__file_classify(name, &fc);
	if (!fc.tmp)
		return 0;
	/* Refuses a link, a FIFO, a device: nothing elog made, so nothing to
	 * judge (elog-verify reports it). */
	fd = elog__fs_openat(dfd, name, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 &&
	    fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st.st_dev &&
	    now.st_ino == st.st_ino && stale(&st)) {
		if (unlinkat(dfd, name, 0) == 0)
			*dropped = 1;
		else if (errno != ENOENT)
			err = errno;
	}
	close(fd);
	return err;
}
