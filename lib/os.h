/*
 * os.h: the POSIX layer: durable writes and replacements, files opened
 * safely, directory walks, random bytes, the time, flock locks and LOCK's
 * batch lock and sync slots, and who holds a lock.  What it reads and
 * writes is bytes; their form is encoding.h's.
 */
#ifndef ELOG_OS_H
#define ELOG_OS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base.h"

struct lock_state; /* encoding.h */
struct sync_rec;   /* encoding.h */

/* ---- fsutil.c: durability helpers ---- */
int elog__fs_write_all(int fd, const void *buf, size_t len);
int elog__fs_pwrite_all(int fd, const void *buf, size_t len, off_t pos);
/* Read up to len bytes at pos; *got is what was there (short at EOF). */
int elog__fs_pread_full(int fd, void *buf, size_t len, off_t pos, size_t *got);
int elog__fs_fsync_dir(int dfd);
/* Write data to a fresh temporary file in dfd, fsync it, rename it over
 * name and fsync the directory.  The file gets mode 0666 less the umask. */
int elog__fs_replace_file(int dfd, const char *name, const void *data, size_t len);
/* Create "<name>.tmp.<pid>.<n>" in dfd (its name in tmp, of size bytes) for
 * writing, and hold an exclusive flock on it through the descriptor
 * returned, which is closed only once the name is renamed or unlinked:
 * that lock is what keeps elog__file_tmp_drop() away.  -1 and errno. */
int elog__fs_tmp_create(int dfd, const char *name, char *tmp, size_t size);
/* Read a whole small file (at most max bytes, else EFBIG) into a malloc'ed,
 * NUL-terminated buffer.  Refuses what elog__fs_openat() refuses. */
int elog__fs_read_small(int dfd, const char *name, size_t max, char **data, size_t *len);
/* Open a file in dfd as openat(2) does, refusing what a log directory
 * must never hold: a symbolic link (ELOOP), anything but a regular file
 * (ELOG_NOTREG: never opened at all, so a FIFO cannot block and a device
 * cannot act), and, when opening for writing, a file with more than one
 * hard link (ELOG_LINKED; O_TRUNC truncates only a file that passed).  A
 * file it creates while running as root gets the directory's owner and
 * group.  The descriptor keeps O_NONBLOCK, which changes nothing on a
 * regular file.  -1 and errno, which holds the ELOG_* code for those two
 * refusals, so that it travels as any errno value. */
int elog__fs_openat(int dfd, const char *name, int flags, mode_t mode);
/* The same, with the status of the file opened in *st (undefined on
 * failure), for a caller that would call fstat(2) next. */
int elog__fs_openat_stat(int dfd, const char *name, int flags, mode_t mode, struct stat *st);
int64_t elog__fs_now_ms(void);
/* Call fn(name, arg) for each entry of the directory dfd but "." and "..",
 * until it returns non-zero.  Returns 0, that value, or an errno value. */
int elog__fs_dir_each(int dfd, int (*fn)(const char *name, void *arg), void *arg);
/* len bytes from /dev/urandom. */
int elog__fs_random(void *buf, size_t len);
/* Returns 1 when fd is on a network filesystem (NFS, SMB/CIFS, ...). */
int elog__fs_is_netfs(int fd);

/* ---- lock.c ---- */
/* Take an exclusive flock on name in dfd, waiting up to wait_ms (0: not at
 * all, -1: for ever), writing our pid into it when record_pid.  When the
 * time runs out, ELOG_LOCKED and a message naming the file, the time
 * waited and the pid the holder wrote, if any. */
int elog__lock_take_ms(int dfd, const char *name, int64_t wait_ms, int record_pid, int *fdp,
                       char *msg);
/* maint.lock, for maintenance, repair and settings updates: taken as
 * elog__lock_take_ms() does, but waiting for checks (which hold it shared
 * and end by themselves) even when wait_ms is 0; ELOG_LOCKED says that
 * another maintenance run holds it, and its pid. */
int elog__maint_lock(int dfd, int64_t wait_ms, int *fdp, char *msg);
/* A wait of elog.h (ELOG_WAIT_*, or ms) as lock.c takes it into *ms:
 * -1 for ever, 0 not at all, else ms; 0 given means dflt.  ELOG_INVALID
 * for another negative value. */
int elog__wait_ms(int64_t given, int64_t dflt, int64_t *ms, char *msg);
/* Open (creating) the lock file name in dfd, refusing a symbolic link. */
int elog__lock_open(int dfd, const char *name, int *fdp, char *msg);
/* The writers' batch lock on LOCK (fd open read-write): take it, waiting
 * up to wait_ms (-1: for ever) and taking turns with other waiters;
 * ELOG_LOCKED when the time runs out. */
int elog__lock_acquire(int fd, int64_t wait_ms, char *msg);
/* The same with the doorbell bell (NULL: none), the page of shared
 * memory elog__bell_map() attaches for LOCK (fd), making it and naming it
 * in LOCK when none lives (NULL when it cannot be): a waiter sleeps until
 * a release instead of polling.  publish: to publish a sync, which goes
 * before the waiters that write batches. */
uint32_t *elog__bell_map(int fd);
void elog__bell_unmap(uint32_t *bell);
int elog__lock_acquire_bell(int fd, uint32_t *bell, int publish, int64_t wait_ms, char *msg);
void elog__lock_release_bell(int fd, uint32_t *bell);
/* Take the sync slot on LOCK (fd): 0, or -1 when another holds it;
 * release it after the sync. */
int elog__lock_slot_take(int fd);
void elog__lock_slot_release(int fd, int slot);
/* Join the log's open writers on LOCK (fd): shared, or exclusive; waits
 * up to wait_ms (-1: for ever).  0, EWOULDBLOCK when another handle's hold
 * stands in the way, or another errno value.  held: an exclusive writer
 * holds the log. */
int elog__lock_join(int fd, int exclusive, int64_t wait_ms);
int elog__lock_exclusive_held(int fd);
/* The sync records (SYNC_BY_LOCK, SYNC_BY_SLOT) of LOCK (fd): read (a
 * missing or damaged one reads as !valid) and write.  Their verdict for
 * this boot, with handled the state's hseq: SYNC_CLEAR (none, succeeded,
 * or already cut back), SYNC_RUNNING (pending, and a live process holds
 * its guard), SYNC_FAILED (failed, or pending with its guard free: its
 * writer died or gave up).  A record the caller's own guard covers is
 * never running. */
#define SYNC_CLEAR 0
#define SYNC_RUNNING 1
#define SYNC_FAILED 2
int elog__sync_rec_read(int fd, int which, struct sync_rec *r);
int elog__sync_rec_write(int fd, int which, const struct sync_rec *r);
int elog__sync_verdict(int fd, int which, const struct sync_rec *r, const unsigned char boot[16],
                       uint64_t handled);
/* For the holder of the batch lock (fd): read the state into *ls and the
 * slot's sync record into *slot; 1 when the state is sick or a sync record
 * says a sync of this boot failed that is not cut back yet: the holder
 * must cut back to the watermark. */
int elog__lock_sick(int fd, struct lock_state *ls, const unsigned char boot[16],
                    struct sync_rec *slot);
/* Empty the state (writers find the tail anew); the records stay. */
int elog__lock_state_clear(int fd);
/* 1 when, as far as the doorbell bell shows, no other writer of LOCK (fd)
 * waits for the batch lock or runs a sync (holds the slot): then a holder
 * may sync and publish before it releases, at no one's cost.  A hint: 0
 * without the doorbell. */
int elog__lock_quiet(int fd, uint32_t *bell);
/* Followers (lock.c): the end offset the slot's sync covers (0: none),
 * and the furthest end a running sync covers (0: none); the doorbell's
 * count of publications, a wait of at most us microseconds for it to move
 * from pubs, and a publication's ring.  Hints: all of them accept bell NULL
 * (no cover, nothing to wait on), but elog__bell_follow(). */
void elog__bell_cover(uint32_t *bell, uint64_t end);
uint64_t elog__bell_covering(uint32_t *bell);
uint32_t elog__bell_pubs(uint32_t *bell);
void elog__bell_follow(uint32_t *bell, uint32_t pubs, int64_t us);
void elog__bell_published(uint32_t *bell);
/* Leaders gathering (lock.c): a batch was written; wait at most us
 * microseconds for as many batches after the last publication as it woke
 * followers.  Hints: both accept bell NULL (no wait). */
void elog__bell_written(uint32_t *bell);
void elog__bell_gather(uint32_t *bell, int64_t us);
/* 0 when the directory's LOCK is still the file whose status (taken
 * once, when it was opened) is mine, else ELOG_FAILED with a message: the
 * log was deleted, or LOCK removed or replaced.  One fstatat(2). */
int elog__lock_is_current(int dfd, const struct stat *mine, char *msg);
/* A missing, short or damaged state reads as !valid. */
int elog__lock_state_read(int fd, struct lock_state *ls);
/* Write ls at the start of LOCK. */
int elog__lock_state_write(int fd, const struct lock_state *ls);
/* This boot's id (Linux); 0 when it cannot be known. */
int elog__lock_boot_id(unsigned char id[16]);

/* ---- holders.c ---- */
/* The pids holding a lock on name in dfd, from /proc/locks, in a malloc'ed
 * array (*n 0 and *pids NULL when none, or when the file does not exist).
 * An errno value when /proc/locks cannot be read (not Linux, no /proc). */
int elog__lock_holders(int dfd, const char *name, pid_t **pids, size_t *n);

#endif
