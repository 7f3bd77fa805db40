/*
 * crashsim: power-loss and fault simulation of the whole log, each state
 * checked against the rules of expect.c.
 *
 *   crashsim [--long] [--sample N] [--fault-sample N] [--sample-seed N] [--seed N]
 *            [--workload NAME] [--power|--faults]
 *
 * Records each workload's file operations (vfs.c), then checks every disk
 * state a power loss could leave at every point of the recording
 * (power.c), and reruns the workloads with each call failing in turn
 * (faults.c).  --sample N checks power loss at one point in N only (and
 * at the last), to keep `make check` short: which one of each N is drawn
 * from a seed, a new one each run unless --sample-seed gives it, printed
 * first so that a failure can be checked again at the same points.
 * --fault-sample N likewise runs one fault run in N (the sanitizer build's
 * `make check`, where each run costs several times more).
 * Prints the number of states and runs checked; exits 0 when
 * every check passed, 1 otherwise.  Scratch files go to $ELOG_CRASH_DIR,
 * else /dev/shm, else $TMPDIR or /tmp.
 *
 * For a closer look at a failure: CRASHSIM_FAULT=CLASS:N runs only the
 * fault run with call N of class CLASS (a number of enum fault_class:
 * 0 write, 1 fsync, ...) failing; CRASHSIM_OPS=1 prints each recording's
 * operations; CRASHSIM_DEBUG=1 prints the errors the library returned.
 */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"
#include "internal.h"

void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "crashsim: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s%s\n", errno ? ": " : "", errno ? strerror(errno) : "");
	exit(2);
}

uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *scratch_parent(void)
{
	const char *e = getenv("ELOG_CRASH_DIR");
	if (e && *e)
		return e;
	if (access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	e = getenv("TMPDIR");
	return e && *e ? e : "/tmp";
}

static int power(const struct workload *w, const char *base, unsigned seed, unsigned nrandom)
{
	char dir[1100], sdir[1100];
	struct vfs_log log;
	struct power_stats st = { 0 };
	double t0 = now();

	snprintf(dir, sizeof dir, "%s/log", base);
	snprintf(sdir, sizeof sdir, "%s/state", base);
	workload_prepare(w, dir, seed);
	vfs_record(dir, &log);
	w->run(dir, seed);
	vfs_stop();
	unsigned bad = expect_oplog(w, &log, "the recording");
	int rc = power_run(w, sdir, &log, seed, nrandom, 0, &st) || bad;
	printf("crashsim: power loss, %-11s seed %u: %zu operations, %llu records (%llu acknowledged), "
	       "%lu points, %lu states built, %lu distinct checked, %lu failures (%.1f s)\n",
	       w->name, seed, log.nops, (unsigned long long)expect_count(),
	       (unsigned long long)expect_acked_end(log.nops), st.points, st.states, st.unique,
	       st.failures, now() - t0);
	fflush(stdout);
	vfs_log_free(&log);
	return rc;
}

static int faults(const struct workload *w, const char *base, unsigned seed)
{
	struct fault_stats st = { 0 };
	double t0 = now();
	int rc = faults_run(w, base, seed, &st);
	printf("crashsim: faults,     %-11s seed %u: %lu runs, %lu faults injected, %lu reported to "
	       "the caller, %lu failures (%.1f s)\n",
	       w->name, seed, st.runs, st.injected, st.reported, st.failures, now() - t0);
	fflush(stdout);
	return rc;
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: crashsim [--long] [--sample N] [--fault-sample N] [--sample-seed N] "
	        "[--seed N] [--workload NAME] [--power|--faults]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned seed = 1, seeds = 1, nrandom = 2;
	int do_power = 1, do_faults = 1, fails = 0, sample_seeded = 0;
	const char *only = NULL;

	/* A handoff's hook holds a leader in its sync while other handles
	 * act: those that cannot vouch for its sync wait out the stall bound
	 * (writer.h) each time, a second a wait in a run of thousands. */
	elog__sync_stall_ns = 20 * 1000000LL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--long") == 0) {
			seeds = 4;
			nrandom = 8;
			faults_long = 1;
		} else if (strcmp(argv[i], "--sample") == 0 && i + 1 < argc) {
			power_sample = (unsigned)strtoul(argv[++i], NULL, 10);
			if (power_sample == 0)
				usage();
		} else if (strcmp(argv[i], "--fault-sample") == 0 && i + 1 < argc) {
			fault_sample = (unsigned)strtoul(argv[++i], NULL, 10);
			if (fault_sample == 0)
				usage();
		} else if (strcmp(argv[i], "--sample-seed") == 0 && i + 1 < argc) {
			power_sample_seed = strtoul(argv[++i], NULL, 10);
			sample_seeded = 1;
		} else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			seed = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--workload") == 0 && i + 1 < argc) {
			only = argv[++i];
		} else if (strcmp(argv[i], "--power") == 0) {
			do_faults = 0;
		} else if (strcmp(argv[i], "--faults") == 0) {
			do_power = 0;
		} else {
			usage();
		}
	}

	char base[1024];
	snprintf(base, sizeof base, "%s/elog-crash.XXXXXX", scratch_parent());
	if (!mkdtemp(base))
		die("%s: cannot create", base);
	setvbuf(stdout, NULL, _IOLBF, 0);
	int psample = power_sample > 1 && do_power, fsample = fault_sample > 1 && do_faults;
	if (psample || fsample) {
		if (!sample_seeded) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			power_sample_seed = ((unsigned long)ts.tv_sec * 1000003ul ^
			                     (unsigned long)ts.tv_nsec ^ (unsigned long)getpid()) %
			                    1000000000ul;
		}
		printf("crashsim: power loss at one point in %u, one fault run in %u, sample seed "
		       "%lu (--sample %u --fault-sample %u --sample-seed %lu checks the same)\n",
		       psample ? power_sample : 1, fsample ? fault_sample : 1, power_sample_seed,
		       psample ? power_sample : 1, fsample ? fault_sample : 1, power_sample_seed);
	}

	for (unsigned s = seed; s < seed + seeds; s++)
		for (size_t i = 0; i < nworkloads; i++) {
			const struct workload *w = &workloads[i];
			if (only && strcmp(only, w->name) != 0)
				continue;
			if ((w->flags & W_ZSTD) && !elog_have_zstd()) {
				printf("crashsim: %s: skipped, this build has no zstd\n", w->name);
				continue;
			}
			/* The fault runs take the workloads whose nth call
			 * is the same call every time (and the group commit
			 * one). */
			if (do_power && strcmp(w->name, "serial") != 0)
				fails += power(w, base, s, nrandom);
			if (do_faults && faults_classes(w))
				fails += faults(w, base, s);
		}
	if (fails) {
		fprintf(stderr, "crashsim: FAILED; the last state checked is in %s\n", base);
		if (psample || fsample)
			fprintf(stderr,
			        "crashsim: the points checked were those of --sample %u "
			        "--fault-sample %u --sample-seed %lu\n",
			        psample ? power_sample : 1, fsample ? fault_sample : 1,
			        power_sample_seed);
		return 1;
	}
	rm_rf(base);
	printf("crashsim: every check passed\n");
	return 0;
}
