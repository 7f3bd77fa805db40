/*
 * follow.c: waiting for the durable end to move.
 *
 * On Linux an inotify instance watches the watermark file (the writer
 * rewrites it after every fdatasync) and the directory (segments created,
 * renamed or removed).  Writes to segment files themselves are not watched:
 * they would wake a follower for data it may not read yet.  Elsewhere the
 * reader polls at a short interval.  The watch is made on first use, so a
 * reader that never follows costs no inotify instance.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "files.h"
#include "os.h"
#include "reader.h"

#include <sys/inotify.h>

#define POLL_MS 50      /* when inotify is out of instances */
#define REWATCH_MS 1000 /* when the watermark file cannot be watched yet */

/* Set up the watches; 1 when they are new (the caller must look again
 * before sleeping: a change just before them would go unnoticed). */
static int follow_setup(elog_reader *r)
{
	int fresh = 0;
	if (r->ino_fd < 0 && !r->follow_ready) {
		r->follow_ready = 1;
		r->wd_wm = r->wd_dir = -1;
		r->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (r->ino_fd < 0)
			return 1; /* out of instances: poll instead */
		r->wd_dir = inotify_add_watch(r->ino_fd, r->dir,
		                              IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF |
		                                      IN_ONLYDIR);
		/* From now on new segments come as events; one made since
		 * the reader's list and before the watch would not. */
		elog__reader_segments_stale(r);
		fresh = 1;
	}
	if (r->ino_fd >= 0 && r->wd_wm < 0) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", r->dir, FN_WATERMARK);
		r->wd_wm = inotify_add_watch(r->ino_fd, path,
		                             IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE |
		                                     IN_DELETE_SELF | IN_MOVE_SELF |
		                                     IN_DONT_FOLLOW);
		fresh = fresh || r->wd_wm >= 0;
	}
	return fresh;
}

void elog__follow_drain(elog_reader *r)
{
	if (r->ino_fd < 0)
		return;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(r->ino_fd, buf, sizeof buf)) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			/* The watch on a replaced or removed watermark is gone;
			 * it is made again on the next wait. */
			if (ev->wd == r->wd_wm && (ev->mask & IN_IGNORED))
				r->wd_wm = -1;
			/* A segment the writer created: added to the list, so
			 * that a roll costs no listing of the directory. */
			uint64_t base;
			if (ev->wd == r->wd_dir && ev->len > 0 &&
			    (ev->mask & (IN_CREATE | IN_MOVED_TO)) &&
			    elog__seg_parse_name(ev->name, SEG_EXT, &base))
				elog__reader_segment_created(r, base);
			if (ev->mask & IN_Q_OVERFLOW)
				elog__reader_segments_stale(r);
			p += sizeof *ev + ev->len;
		}
	}
}

void elog__follow_close(elog_reader *r)
{
	if (r->ino_fd >= 0)
		close(r->ino_fd);
	r->ino_fd = -1;
}

int elog_reader_fd(elog_reader *r)
{
	follow_setup(r);
	return r->ino_fd;
}

int elog_reader_wait(elog_reader *r, int64_t timeout_ms)
{
	int64_t w;
	int err = elog__wait_ms(timeout_ms, ELOG_WAIT_NONE, &w, r->msg);
	if (err)
		return err;
	if (follow_setup(r))
		return 0;
	/* poll(2) takes an int: a longer wait wakes early, as it may. */
	int want = w > INT_MAX ? INT_MAX : (int)w;
	int ms = want;
	if (r->ino_fd < 0 || r->wd_wm < 0) {
		/* Polling: no inotify, or nothing to watch yet. */
		int step = r->ino_fd < 0 ? POLL_MS : REWATCH_MS;
		if (ms < 0 || ms > step)
			ms = step;
	}
	struct pollfd pfd = { .fd = r->ino_fd, .events = POLLIN };
	int n = r->ino_fd >= 0 ? poll(&pfd, 1, ms) : poll(NULL, 0, ms);
	if (n < 0)
		return errno;
	if (n == 0 && ms == want && w <= INT_MAX)
		return ELOG_TIMEOUT;
	return 0;
}
