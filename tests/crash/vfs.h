/*
 * vfs.h: the file-operation recorder of the crash simulator.
 *
 * The simulator is linked with -Wl,--wrap for every system call the library
 * uses to change files (open, openat, write, pwrite, ftruncate, fsync,
 * fdatasync, renameat, unlinkat, dup, close).  While recording, each call on
 * the watched log directory is carried out and appended, in the order the
 * calls happened, to an operation list that names files by inode, not by
 * name.  From that list the simulator rebuilds what the disk may hold after
 * a power loss at any point.  The same layer injects errors (faults.c).
 */
#ifndef CRASH_VFS_H
#define CRASH_VFS_H

#include <stddef.h>
#include <stdint.h>

enum op_kind {
	OP_WRITE,   /* data written to inode at off (len bytes) */
	OP_TRUNC,   /* inode's size set to off */
	OP_FSYNC,   /* fsync or fdatasync of inode: its data is durable */
	OP_LINK,    /* name created for inode (a new file) */
	OP_RENAME,  /* name2 now names inode; name is gone */
	OP_UNLINK,  /* name (which named inode) is gone */
	OP_DIRSYNC, /* fsync of the directory: its names are durable */
};

struct op {
	int kind;
	int ino;
	uint64_t off;
	size_t len;
	unsigned char *data; /* OP_WRITE */
	char *name, *name2;
	uint64_t wm_end; /* durable end published by this op (a
	                          * watermark write), or 0 */
};

/* A file of the starting directory, taken as durable. */
struct vfile {
	char *name;
	int ino;
	unsigned char *data;
	size_t len;
};

struct vfs_log {
	struct vfile *start; /* the directory when recording began */
	size_t nstart;
	struct op *ops;
	size_t nops, cap;
	int next_ino;
};

/* Begin recording the calls on directory dir (the exact string the library
 * will be given), taking its present files as durable. */
void vfs_record(const char *dir, struct vfs_log *log);
/* Stop recording; the log stays the caller's. */
void vfs_stop(void);
void vfs_log_free(struct vfs_log *log);
/* The number of operations recorded so far, read under the recorder's lock:
 * an event noted with this number happened after every one of them. */
size_t vfs_now(void);

/* Faults: the nth call (1-based, counted from vfs_record) of a class fails
 * with err, or with err 0 (writes only) is cut short to half its length.
 * Each class is counted on its own; vfs_calls() tells how many were made. */
enum fault_class { FC_WRITE, FC_SYNC, FC_RENAME, FC_OPEN, FC_UNLINK, FC_TRUNC, FC_N };
void vfs_fault(int cls, unsigned long nth, int err);
/* A new boot: the library's writers read another boot id from now on, as
 * after the power came back. */
void vfs_reboot(void);
unsigned long vfs_calls(int cls);
/* 1 once the armed fault has been injected. */
int vfs_fault_hit(void);

extern const char *const fault_class_name[FC_N];

/* Linux's failed-sync semantics (errseq): after an injected fsync failure
 * of an inode, every other open file description of that inode fails its
 * next fsync once with the same error; descriptions opened later never
 * do.  The failed sync's pending writes are lost (the model drops them)
 * while the file still reads them back.  How many syncs failed so: */
unsigned long vfs_errseq_reported(void);
/* From now on, a failed sync of the calling thread (an injected fault) is
 * its last call: the thread dies as vfs_kill_thread() kills it, with the
 * error taken by its description and never told to anyone (a writer
 * killed, or frozen for good, between the failed call and anything it
 * could do next).  Descriptions opened later sync with success over the
 * dropped writes, as Linux's do. */
void vfs_die_on_sync_fault(void);

/* A seeded delay of 0 to max_us microseconds before each sync takes the
 * recorder's lock, so that other handles' writes and publications come
 * between a writer's release of LOCK and its sync (0: none).  Reset by
 * vfs_stop(). */
void vfs_sync_delay(unsigned max_us, unsigned seed);

/* fn(name, arg) runs in the syncing thread before each fsync or fdatasync
 * of a file of the directory (name: its name now), not within itself.
 * Reset by vfs_stop(). */
typedef void (*vfs_sync_hook)(const char *name, void *arg);
void vfs_before_sync(vfs_sync_hook fn, void *arg);
/* fn() runs in the writing thread before each write(2) or pwrite(2), with
 * no lock of the vfs held (NULL: none). */
void vfs_before_write(void (*fn)(void));

/* Process death for one thread: closes every fd the calling thread opened
 * through the wrappers (releasing its flock and OFD locks, as the kernel
 * does at exit), without any other call, and ends the thread. */
void vfs_kill_thread(void) __attribute__((noreturn));

#endif
