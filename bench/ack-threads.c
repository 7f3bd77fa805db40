/*
 * ack-threads.c: the C side of the Python bench's durable-acknowledgement
 * row (bench/python.py): N threads of one process share one writer handle,
 * each appending a record and waiting for elog_sync() in turn, for SECS
 * seconds; prints the acknowledgements per second.  The same workload as
 * the Python threads', record for record (KEY_LEN-byte keys, SIZE-byte
 * values), so that the ratio is the binding's cost.
 *
 *   bench-ack-threads DIR THREADS SECS SIZE
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "elog.h"

#define KEY_LEN 16

static elog *w;
static double deadline;
static size_t size;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *acker(void *arg)
{
	long n = 0;
	(void)arg;
	char key[KEY_LEN + 1], *val = malloc(size);
	if (val == NULL)
		return (void *)-1;
	memset(val, 'v', size);
	while (now() < deadline) {
		snprintf(key, sizeof key, "key-%012lu", (unsigned long)(n % 1000));
		struct elog_record rec = { .ts_ms = ELOG_TS_NOW,
			                   .key = key,
			                   .key_len = KEY_LEN,
			                   .value = val,
			                   .value_len = size };
		int rc = elog_append(w, &rec, NULL);
		if (rc == 0)
			rc = elog_sync(w);
		if (rc) {
			fprintf(stderr, "bench-ack-threads: %s\n", elog_errmsg(w));
			exit(2);
		}
		n++;
	}
	free(val);
	return (void *)(intptr_t)n;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: bench-ack-threads DIR THREADS SECS SIZE\n");
		return 2;
	}
	int threads = atoi(argv[2]);
	double secs = atof(argv[3]);
	size = (size_t)atol(argv[4]);
	struct elog_options opt = { .create = 1 };
	int rc = elog_open(&w, argv[1], &opt);
	if (rc) {
		fprintf(stderr, "bench-ack-threads: %s: %s\n", argv[1],
		        w ? elog_errmsg(w) : elog_strerror(rc));
		return 2;
	}
	pthread_t t[256];
	if (threads < 1 || threads > 256 || secs <= 0)
		return 2;
	double t0 = now();
	deadline = t0 + secs;
	for (long k = 0; k < threads; k++)
		pthread_create(&t[k], NULL, acker, NULL);
	long acks = 0;
	for (int k = 0; k < threads; k++) {
		void *n;
		pthread_join(t[k], &n);
		acks += (long)(intptr_t)n;
	}
	double rate = (double)acks / (now() - t0);
	if (elog_close(w) != 0)
		return 2;
	printf("%.1f %ld\n", rate, acks);
	return 0;
}
