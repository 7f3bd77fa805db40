/*
 * oneshot-raw.c: the raw one-shot writer that bench's oneshot_raw row times
 * beside `echo x | elog-append LOG`, spawned the same way: a process that
 * opens FILE with O_APPEND, writes 100 bytes, fdatasyncs and exits.  It is
 * the least a durable one-record append from a new process costs.
 *
 *   bench-oneshot-raw FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char rec[100];

	if (argc != 2) {
		fputs("usage: bench-oneshot-raw FILE\n", stderr);
		return 2;
	}
	memset(rec, 'x', sizeof rec - 1);
	rec[sizeof rec - 1] = '\n';
	int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, rec, sizeof rec) != (ssize_t)sizeof rec || fdatasync(fd) < 0) {
		perror(argv[1]);
		return 1;
	}
	return close(fd) < 0;
}
