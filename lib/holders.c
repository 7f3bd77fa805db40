/*
 * holders.c: which processes hold a lock on a file of the log directory,
 * read from /proc/locks (Linux).  Nothing here takes or tests a lock, so a
 * summary of the log disturbs no writer: the kernel's own table of locks is
 * the one place that knows who holds one without asking for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "os.h"

#define PROC_LOCKS "/proc/locks"

static int pid_add(pid_t **v, size_t *n, pid_t pid)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == pid)
			return 0;
	pid_t *nv = realloc(*v, (*n + 1) * sizeof *nv);
	if (!nv)
		return ENOMEM;
	*v = nv;
	nv[(*n)++] = pid;
	return 0;
}

/* One line of /proc/locks: "N: TYPE KIND MODE PID MAJ:MIN:INO START END",
 * or "N: -> TYPE ..." for a process still waiting, which holds nothing.
 * Major and minor are in hex, the inode number in decimal. */
static int line_holder(const char *line, dev_t dev, ino_t ino, pid_t *pid)
{
	char type[16], kind[16], mode[16];
	unsigned maj, mi;
	unsigned long long inode;
	long p;
	const char *s = strchr(line, ':');

	if (!s)
		return 0;
	s++;
	while (*s == ' ')
		s++;
	if (strncmp(s, "->", 2) == 0)
		return 0;
	if (sscanf(s, "%15s %15s %15s %ld %x:%x:%llu", type, kind, mode, &p, &maj, &mi, &inode) !=
	    7)
		return 0;
	if (maj != major(dev) || mi != minor(dev) || inode != (unsigned long long)ino)
		return 0;
	/* An open file description lock has no owner pid (-1); a holder in
	 * a pid namespace we cannot see shows as 0. */
	if (p <= 0)
		return 0;
	*pid = (pid_t)p;
	return 1;
}

int elog__lock_holders(int dfd, const char *name, pid_t **pids, size_t *n)
{
	struct stat st;
	char line[256];
	int err = 0;

	*pids = NULL;
	*n = 0;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : errno;
	FILE *f = fopen(PROC_LOCKS, "re");
	if (!f)
		return errno ? errno : ENOENT;
	while (!err && fgets(line, sizeof line, f)) {
		pid_t pid;
		if (line_holder(line, st.st_dev, st.st_ino, &pid))
			err = pid_add(pids, n, pid);
	}
	if (!err && ferror(f))
		err = EIO;
	fclose(f);
	if (err) {
		free(*pids);
		*pids = NULL;
		*n = 0;
	}
	return err;
}
