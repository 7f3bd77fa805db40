/*
 * vfs.c: records the library's file operations on one directory, in order,
 * and injects faults into them.  See vfs.h.
 *
 * Every wrapped call on the watched directory runs under one mutex together
 * with its recording, so the list's order is the order the kernel saw.
 */
#include <dirent.h>
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "crash.h"
#include "vfs.h"

int __real_open(const char *path, int flags, ...);
int __real_openat(int dfd, const char *name, int flags, ...);
ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);
int __real_ftruncate(int fd, off_t len);
int __real_fsync(int fd);
int __real_fdatasync(int fd);
int __real_renameat(int d1, const char *a, int d2, const char *b);
int __real_unlinkat(int dfd, const char *name, int flags);
int __real_dup(int fd);
int __real_close(int fd);

int __wrap_open(const char *path, int flags, ...);
int __wrap_openat(int dfd, const char *name, int flags, ...);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off);
int __wrap_ftruncate(int fd, off_t len);
int __wrap_fsync(int fd);
int __wrap_fdatasync(int fd);
int __wrap_renameat(int d1, const char *a, int d2, const char *b);
int __wrap_unlinkat(int dfd, const char *name, int flags);
int __wrap_dup(int fd);
int __wrap_close(int fd);

const char *const fault_class_name[FC_N] = { "write", "fsync",  "rename",
	                                     "open",  "unlink", "ftruncate" };

enum { FD_NONE, FD_DIR, FD_FILE };
#define MAXFD 4096
#define MAXDESC 65536

struct name_ent {
	char *name;
	int ino;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int active; /* recording or a fault armed */
static struct vfs_log *rec;
static char *watched;
/* Each fd the wrappers gave out while active: what it is, its open file
 * description (an index into descs, shared by dup), and the thread that
 * opened it (vfs_kill_thread()). */
static struct {
	int kind, ino, used;
	unsigned desc;
	pthread_t owner;
} fds[MAXFD];
/* Open file descriptions of the directory's files, for the errseq
 * emulation: the error a later fdatasync of the description reports once
 * (Linux's per-file f_wb_err), and how many fds share it. */
static struct {
	int ino, err, refs;
} descs[MAXDESC];
static unsigned ndescs;
static unsigned long errseq_reported;
static unsigned sync_delay_max, sync_delay_seed;
static unsigned long sync_delay_n;
static vfs_sync_hook sync_hook;
static void *sync_hook_arg;
static __thread int in_hook;
static struct name_ent *names; /* the directory as it is now */
static size_t nnames, capnames;
static unsigned long calls[FC_N];
static int fault_cls = -1, fault_err, fault_done;
static unsigned long fault_nth;

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "crashsim: out of memory\n");
		abort();
	}
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

static struct name_ent *name_find(const char *name)
{
	for (size_t i = 0; i < nnames; i++)
		if (strcmp(names[i].name, name) == 0)
			return &names[i];
	return NULL;
}

static void name_set(const char *name, int ino)
{
	struct name_ent *e = name_find(name);
	if (e) {
		e->ino = ino;
		return;
	}
	if (nnames == capnames) {
		capnames = capnames ? capnames * 2 : 64;
		struct name_ent *n = realloc(names, capnames * sizeof *n);
		if (!n)
			abort();
		names = n;
	}
	names[nnames].name = xstrdup(name);
	names[nnames++].ino = ino;
}

static void name_drop(const char *name)
{
	struct name_ent *e = name_find(name);
	if (!e)
		return;
	free(e->name);
	*e = names[--nnames];
}

static struct op *op_add(int kind, int ino)
{
	if (rec->nops == rec->cap) {
		rec->cap = rec->cap ? rec->cap * 2 : 1024;
		struct op *n = realloc(rec->ops, rec->cap * sizeof *n);
		if (!n)
			abort();
		rec->ops = n;
	}
	struct op *o = &rec->ops[rec->nops++];
	memset(o, 0, sizeof *o);
	o->kind = kind;
	o->ino = ino;
	return o;
}

static int tracked(int fd)
{
	return fd >= 0 && fd < MAXFD ? fds[fd].kind : FD_NONE;
}

/* Decides whether this call (of class cls) is the one to fail.  Returns 0
 * to go on, or the errno to fail with; *shorten is set for a short write. */
static int fault_check(int cls, int *shorten)
{
	calls[cls]++;
	if (fault_cls != cls || fault_done || calls[cls] != fault_nth)
		return 0;
	fault_done = 1;
	if (fault_err == 0) {
		*shorten = 1;
		return 0;
	}
	return fault_err;
}

static void snapshot(const char *dir, struct vfs_log *log)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		int fd = __real_openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			__real_close(fd);
			continue;
		}
		struct vfile *v;
		log->start = realloc(log->start, (log->nstart + 1) * sizeof *log->start);
		if (!log->start)
			abort();
		v = &log->start[log->nstart++];
		v->name = xstrdup(de->d_name);
		v->ino = ++log->next_ino;
		v->len = (size_t)st.st_size;
		v->data = xmalloc(v->len);
		size_t got = 0;
		if (elog__fs_pread_full(fd, v->data, v->len, 0, &got) != 0 || got != v->len) {
			fprintf(stderr, "crashsim: cannot read %s/%s\n", dir, de->d_name);
			abort();
		}
		__real_close(fd);
		name_set(v->name, v->ino);
	}
	closedir(d);
}

void vfs_record(const char *dir, struct vfs_log *log)
{
	pthread_mutex_lock(&mu);
	memset(log, 0, sizeof *log);
	for (size_t i = 0; i < nnames; i++)
		free(names[i].name);
	nnames = 0;
	memset(fds, 0, sizeof fds);
	memset(descs, 0, sizeof descs);
	ndescs = 0;
	errseq_reported = 0;
	memset(calls, 0, sizeof calls);
	free(watched);
	watched = xstrdup(dir);
	snapshot(dir, log);
	rec = log;
	active = 1;
	pthread_mutex_unlock(&mu);
}

void vfs_stop(void)
{
	pthread_mutex_lock(&mu);
	active = 0;
	rec = NULL;
	fault_cls = -1;
	sync_hook = NULL;
	sync_delay_max = 0;
	pthread_mutex_unlock(&mu);
}

void vfs_log_free(struct vfs_log *log)
{
	for (size_t i = 0; i < log->nstart; i++) {
		free(log->start[i].name);
		free(log->start[i].data);
	}
	for (size_t i = 0; i < log->nops; i++) {
		free(log->ops[i].data);
		free(log->ops[i].name);
		free(log->ops[i].name2);
	}
	free(log->start);
	free(log->ops);
	memset(log, 0, sizeof *log);
}

size_t vfs_now(void)
{
	pthread_mutex_lock(&mu);
	size_t n = rec ? rec->nops : 0;
	pthread_mutex_unlock(&mu);
	return n;
}

void vfs_fault(int cls, unsigned long nth, int err)
{
	pthread_mutex_lock(&mu);
	fault_cls = cls;
	fault_nth = nth;
	fault_err = err;
	fault_done = 0;
	pthread_mutex_unlock(&mu);
}

unsigned long vfs_calls(int cls)
{
	pthread_mutex_lock(&mu);
	unsigned long n = calls[cls];
	pthread_mutex_unlock(&mu);
	return n;
}

int vfs_fault_hit(void)
{
	pthread_mutex_lock(&mu);
	int n = fault_done;
	pthread_mutex_unlock(&mu);
	return n;
}

static void desc_drop(unsigned d)
{
	if (d && descs[d].refs > 0 && --descs[d].refs == 0)
		descs[d].err = 0;
}

/* fd now names kind/ino through the open file description desc (0:
 * none), opened by the calling thread. */
static void track_desc(int fd, int kind, int ino, unsigned desc)
{
	if (fd < 0 || fd >= MAXFD)
		return;
	desc_drop(fds[fd].desc);
	fds[fd].kind = kind;
	fds[fd].ino = ino;
	fds[fd].desc = desc;
	fds[fd].used = 1;
	fds[fd].owner = pthread_self();
	if (desc)
		descs[desc].refs++;
}

static unsigned desc_new(int ino)
{
	if (ndescs + 1 >= MAXDESC)
		return 0; /* no room: such fds see no errseq errors */
	unsigned d = ++ndescs;
	descs[d].ino = ino;
	descs[d].err = 0;
	descs[d].refs = 0;
	return d;
}

static void track(int fd, int kind, int ino)
{
	track_desc(fd, kind, ino, kind == FD_FILE ? desc_new(ino) : 0);
}

static void untrack(int fd)
{
	if (fd < 0 || fd >= MAXFD)
		return;
	desc_drop(fds[fd].desc);
	memset(&fds[fd], 0, sizeof fds[fd]);
}

void vfs_sync_delay(unsigned max_us, unsigned seed)
{
	pthread_mutex_lock(&mu);
	sync_delay_max = max_us;
	sync_delay_seed = seed;
	sync_delay_n = 0;
	pthread_mutex_unlock(&mu);
}

void vfs_before_sync(vfs_sync_hook fn, void *arg)
{
	pthread_mutex_lock(&mu);
	sync_hook = fn;
	sync_hook_arg = arg;
	pthread_mutex_unlock(&mu);
}

unsigned long vfs_errseq_reported(void)
{
	pthread_mutex_lock(&mu);
	unsigned long n = errseq_reported;
	pthread_mutex_unlock(&mu);
	return n;
}

static __thread int die_on_sync_fault;

void vfs_die_on_sync_fault(void)
{
	die_on_sync_fault = 1;
}

void vfs_kill_thread(void)
{
	pthread_t me = pthread_self();
	pthread_mutex_lock(&mu);
	for (int fd = 0; fd < MAXFD; fd++)
		if (fds[fd].used && pthread_equal(fds[fd].owner, me)) {
			untrack(fd);
			__real_close(fd);
		}
	pthread_mutex_unlock(&mu);
	pthread_exit(NULL);
}

/* The boot id the library reads, so that a state checked after a power
 * loss is seen by a writer that booted since (see vfs_reboot()). */
static unsigned long boot_number;

void vfs_reboot(void)
{
	boot_number++;
}

static int open_boot_id(void)
{
	char text[64];
	int fd = memfd_create("boot_id", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	int n = snprintf(text, sizeof text, "c0ffee00-0000-4000-8000-%012lx\n", boot_number);
	if (write(fd, text, (size_t)n) != n || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int __wrap_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (strcmp(path, "/proc/sys/kernel/random/boot_id") == 0)
		return open_boot_id();
	if (!active)
		return __real_open(path, flags, mode);
	pthread_mutex_lock(&mu);
	int fd, err = 0, shorten = 0;
	int dir = watched && strcmp(path, watched) == 0;
	if (dir && (err = fault_check(FC_OPEN, &shorten)) != 0) {
		pthread_mutex_unlock(&mu);
		errno = err;
		return -1;
	}
	fd = __real_open(path, flags, mode);
	err = errno;
	if (fd >= 0)
		track(fd, dir ? FD_DIR : FD_NONE, 0);
	pthread_mutex_unlock(&mu);
	errno = err;
	return fd;
}

int __wrap_openat(int dfd, const char *name, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!active)
		return __real_openat(dfd, name, flags, mode);
	pthread_mutex_lock(&mu);
	int fd, err, shorten = 0;
	if (tracked(dfd) != FD_DIR || strchr(name, '/')) {
		fd = __real_openat(dfd, name, flags, mode);
		err = errno;
		if (fd >= 0)
			track(fd, FD_NONE, 0);
		pthread_mutex_unlock(&mu);
		errno = err;
		return fd;
	}
	if ((err = fault_check(FC_OPEN, &shorten)) != 0) {
		pthread_mutex_unlock(&mu);
		errno = err;
		return -1;
	}
	fd = __real_openat(dfd, name, flags, mode);
	err = errno;
	if (fd >= 0 && rec && strcmp(name, "LOCK") == 0) {
		/* LOCK's content is the writers' state of the tail, which a
		 * writer trusts only within the boot that wrote it: after a
		 * power loss it is never read as such, so its writes make no
		 * disk state of their own.  Carried out, not recorded. */
		track(fd, FD_NONE, 0);
	} else if (fd >= 0 && rec) {
		struct stat st;
		struct name_ent *e = name_find(name);
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			track(fd, FD_NONE, 0);
		} else if (e) {
			track(fd, FD_FILE, e->ino);
			if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY)
				op_add(OP_TRUNC, e->ino)->off = 0;
		} else {
			int ino = ++rec->next_ino;
			struct op *o = op_add(OP_LINK, ino);
			o->name = xstrdup(name);
			name_set(name, ino);
			track(fd, FD_FILE, ino);
		}
	}
	pthread_mutex_unlock(&mu);
	errno = err;
	return fd;
}

/* A write of n bytes at off to the file behind fd, recorded. */
static void note_write(int fd, const void *buf, size_t n, off_t off)
{
	if (!rec || n == 0)
		return;
	struct op *o = op_add(OP_WRITE, fds[fd].ino);
	o->off = (uint64_t)off;
	o->len = n;
	o->data = memcpy(xmalloc(n), buf, n);
	struct name_ent *e = name_find(FN_WATERMARK);
	struct watermark wm;
	if (e && e->ino == fds[fd].ino && off == 0 && elog__wm_decode(buf, n, &wm) == 0)
		o->wm_end = wm.durable_end;
}

static ssize_t do_write(int fd, const void *buf, size_t n, off_t off, int positional)
{
	pthread_mutex_lock(&mu);
	int err, shorten = 0;
	ssize_t r;
	if (tracked(fd) != FD_FILE) {
		r = positional ? __real_pwrite(fd, buf, n, off) : __real_write(fd, buf, n);
		err = errno;
		pthread_mutex_unlock(&mu);
		errno = err;
		return r;
	}
	if ((err = fault_check(FC_WRITE, &shorten)) != 0) {
		pthread_mutex_unlock(&mu);
		errno = err;
		return -1;
	}
	if (shorten && n > 1)
		n /= 2;
	if (!positional)
		off = lseek(fd, 0, SEEK_CUR);
	r = positional ? __real_pwrite(fd, buf, n, off) : __real_write(fd, buf, n);
	err = errno;
	if (r > 0)
		note_write(fd, buf, (size_t)r, off);
	pthread_mutex_unlock(&mu);
	errno = err;
	return r;
}

static void (*write_hook)(void);

void vfs_before_write(void (*fn)(void))
{
	__atomic_store_n(&write_hook, fn, __ATOMIC_SEQ_CST);
}

static void before_write(void)
{
	void (*fn)(void) = __atomic_load_n(&write_hook, __ATOMIC_SEQ_CST);
	if (fn)
		fn();
}

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	if (!active)
		return __real_write(fd, buf, n);
	before_write();
	return do_write(fd, buf, n, 0, 0);
}

ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	if (!active)
		return __real_pwrite(fd, buf, n, off);
	before_write();
	return do_write(fd, buf, n, off, 1);
}

int __wrap_ftruncate(int fd, off_t len)
{
	if (!active)
		return __real_ftruncate(fd, len);
	pthread_mutex_lock(&mu);
	int r, err, shorten = 0;
	if (tracked(fd) == FD_FILE && (err = fault_check(FC_TRUNC, &shorten)) != 0) {
		pthread_mutex_unlock(&mu);
		errno = err;
		return -1;
	}
	r = __real_ftruncate(fd, len);
	err = errno;
	if (r == 0 && rec && tracked(fd) == FD_FILE)
		op_add(OP_TRUNC, fds[fd].ino)->off = (uint64_t)len;
	pthread_mutex_unlock(&mu);
	errno = err;
	return r;
}

/* The live name of inode ino, or NULL. */
static const char *name_of(int ino)
{
	for (size_t i = 0; i < nnames; i++)
		if (names[i].ino == ino)
			return names[i].name;
	return NULL;
}

/* Before a sync: the seeded delay, which lets other handles' writes and
 * publications come between a writer's release of LOCK and its sync, and
 * the workload's hook.  Neither holds the recorder's lock. */
static void before_sync(int fd)
{
	char name[256] = "";
	pthread_mutex_lock(&mu);
	unsigned max = sync_delay_max;
	uint64_t s = ((uint64_t)sync_delay_seed << 32) ^ ++sync_delay_n;
	vfs_sync_hook hook = in_hook ? NULL : sync_hook;
	void *arg = sync_hook_arg;
	if (hook && tracked(fd) == FD_FILE && name_of(fds[fd].ino))
		snprintf(name, sizeof name, "%s", name_of(fds[fd].ino));
	pthread_mutex_unlock(&mu);
	if (max) {
		uint64_t us = rng_next(&s) % (max + 1);
		struct timespec ts = { 0, (long)us * 1000 };
		nanosleep(&ts, NULL);
	}
	if (hook && name[0]) {
		in_hook = 1;
		hook(name, arg);
		in_hook = 0;
	}
}

static int do_sync(int fd, int data_only)
{
	before_sync(fd);
	pthread_mutex_lock(&mu);
	int r, err, shorten = 0, kind = tracked(fd);
	unsigned d = kind == FD_FILE ? fds[fd].desc : 0;
	if (kind != FD_NONE && (err = fault_check(FC_SYNC, &shorten)) != 0) {
		/* A failed fsync may have dropped the dirty pages: the
		 * writes it covered are taken as lost for good (the file
		 * still reads them back: the real one keeps them).  Every
		 * other description of the inode open now reports the error
		 * once, at its next sync; those opened later never do. */
		if (rec && kind == FD_FILE) {
			op_add(OP_FSYNC, fds[fd].ino)->off = 1;
			for (unsigned i = 1; i <= ndescs; i++)
				if (i != d && descs[i].refs > 0 && descs[i].ino == fds[fd].ino)
					descs[i].err = err;
		}
		pthread_mutex_unlock(&mu);
		if (die_on_sync_fault)
			vfs_kill_thread();
		errno = err;
		return -1;
	}
	if (d && descs[d].err) {
		/* The error of another description's failed sync, reported
		 * once here.  Linux writes back the pages dirtied since, but
		 * the caller cannot know it: they stay pending, neither
		 * durable nor lost. */
		err = descs[d].err;
		descs[d].err = 0;
		errseq_reported++;
		(void)(data_only ? __real_fdatasync(fd) : __real_fsync(fd));
		pthread_mutex_unlock(&mu);
		errno = err;
		return -1;
	}
	r = data_only ? __real_fdatasync(fd) : __real_fsync(fd);
	err = errno;
	if (r == 0 && rec && kind == FD_FILE)
		op_add(OP_FSYNC, fds[fd].ino);
	else if (r == 0 && rec && kind == FD_DIR)
		op_add(OP_DIRSYNC, 0);
	pthread_mutex_unlock(&mu);
	errno = err;
	return r;
}

int __wrap_fsync(int fd)
{
	return active ? do_sync(fd, 0) : __real_fsync(fd);
}

int __wrap_fdatasync(int fd)
{
	return active ? do_sync(fd, 1) : __real_fdatasync(fd);
}

int __wrap_renameat(int d1, const char *a, int d2, const char *b)
{
	if (!active)
		return __real_renameat(d1, a, d2, b);
	pthread_mutex_lock(&mu);
	int r, err, shorten = 0;
	int mine = tracked(d1) == FD_DIR && tracked(d2) == FD_DIR;
	if (mine && (err = fault_check(FC_RENAME, &shorten)) != 0) {
		pthread_mutex_unlock(&mu);
		errno = err;
		return -1;
	}
	r = __real_renameat(d1, a, d2, b);
	err = errno;
	struct name_ent *e = mine ? name_find(a) : NULL;
	if (r == 0 && rec && e) {
		struct op *o = op_add(OP_RENAME, e->ino);
		o->name = xstrdup(a);
		o->name2 = xstrdup(b);
		name_set(b, e->ino);
		name_drop(a);
	}
	pthread_mutex_unlock(&mu);
	errno = err;
	return r;
}

int __wrap_unlinkat(int dfd, const char *name, int flags)
{
	if (!active)
		return __real_unlinkat(dfd, name, flags);
	pthread_mutex_lock(&mu);
	int r, err, shorten = 0, mine = tracked(dfd) == FD_DIR;
	if (mine && (err = fault_check(FC_UNLINK, &shorten)) != 0) {
		pthread_mutex_unlock(&mu);
		errno = err;
		return -1;
	}
	r = __real_unlinkat(dfd, name, flags);
	err = errno;
	struct name_ent *e = mine ? name_find(name) : NULL;
	if (r == 0 && rec && e) {
		struct op *o = op_add(OP_UNLINK, e->ino);
		o->name = xstrdup(name);
		name_drop(name);
	}
	pthread_mutex_unlock(&mu);
	errno = err;
	return r;
}

int __wrap_dup(int fd)
{
	if (!active)
		return __real_dup(fd);
	pthread_mutex_lock(&mu);
	int r = __real_dup(fd), err = errno;
	if (r >= 0 && fd >= 0 && fd < MAXFD && fds[fd].used)
		track_desc(r, fds[fd].kind, fds[fd].ino, fds[fd].desc);
	pthread_mutex_unlock(&mu);
	errno = err;
	return r;
}

int __wrap_close(int fd)
{
	if (!active)
		return __real_close(fd);
	pthread_mutex_lock(&mu);
	untrack(fd);
	int r = __real_close(fd), err = errno;
	pthread_mutex_unlock(&mu);
	errno = err;
	return r;
}
