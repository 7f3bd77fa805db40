/*
 * faults.c: one failing call at a time.  A workload runs once to count its
 * calls of each kind (writes, fsyncs, renames, opens, unlinks,
 * truncations); then once per call and error, with that call failing: EIO,
 * ENOSPC or EINTR, and for writes also a short write.  After each run:
 * - a writer whose elog_sync() failed acknowledged nothing afterwards
 *   (workloads.c counts violations);
 * - the recording keeps the rules of expect_oplog(): nothing acknowledged
 *   or published that the model says is not durable (a failed fsync's
 *   writes are lost in it, and its errors reach the other descriptions of
 *   the file as Linux reports them: vfs.c);
 * - an interrupted or short write was retried, not reported;
 * - what was synced (every pending write dropped, as after a power loss
 *   right then, a failed fsync's writes included), the directory as the
 *   process left it, and after a failed sync the directory once the
 *   pages it dropped are evicted (same boot, LOCK as left) all pass
 *   every check of expect.c: nothing acknowledged is lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash.h"

static const int errs[] = { EIO, ENOSPC, EINTR, 0 };

static const char *err_name(int e)
{
	return e == 0 ? "short write" : e == EIO ? "EIO" : e == ENOSPC ? "ENOSPC" : "EINTR";
}

/* Runs w with the nth call of cls failing with err (cls -1: none). */
static int one(const struct workload *w, const char *base, unsigned seed, int cls,
               unsigned long nth, int err, unsigned long calls[FC_N], struct fault_stats *st)
{
	char dir[1100], sdir[1100], where[256];
	struct vfs_log log;
	int bad = 0;

	snprintf(dir, sizeof dir, "%s/log", base);
	snprintf(sdir, sizeof sdir, "%s/state", base);
	workload_prepare(w, dir, seed);
	wl_errors = wl_violations = 0;
	vfs_record(dir, &log);
	if (cls >= 0)
		vfs_fault(cls, nth, err);
	wl_faults = 1;
	w->run(dir, seed);
	wl_faults = 0;
	int hit = cls >= 0 && vfs_fault_hit();
	if (calls)
		for (int c = 0; c < FC_N; c++)
			calls[c] = vfs_calls(c);
	vfs_stop();

	if (cls >= 0)
		snprintf(where, sizeof where, "%s %lu failing with %s", fault_class_name[cls], nth,
		         err_name(err));
	else
		snprintf(where, sizeof where, "no fault");
	st->runs++;
	st->injected += hit;
	st->reported += hit && wl_errors > 0;
	if (wl_violations) {
		fprintf(stderr, "crashsim: faults: %s: %s: a failed writer acknowledged records\n",
		        w->name, where);
		bad++;
	}
	if (wl_errors && (cls < 0 || (cls == FC_WRITE && (err == EINTR || err == 0)))) {
		fprintf(stderr, "crashsim: faults: %s: %s: %lu errors reported%s\n", w->name, where,
		        wl_errors, cls < 0 ? "" : " for a write that should have been retried");
		bad++;
	}
	struct power_stats pst = { 0 };
	char what[300];
	bad += (int)expect_oplog(w, &log, where);
	power_run(w, sdir, &log, seed, 0, 1, &pst);
	if (pst.failures)
		fprintf(stderr, "  (the run had %s, then the power was lost)\n", where);
	bad += (int)pst.failures;
	uint64_t visible = expect_acked_end(log.nops);
	for (size_t i = 0; i < log.nops; i++)
		if (log.ops[i].wm_end > visible)
			visible = log.ops[i].wm_end;
	if (hit && cls == FC_SYNC) {
		snprintf(what, sizeof what, "%s, the pages it dropped evicted later", where);
		bad += power_evicted(w, sdir, dir, &log, visible, what);
	}
	snprintf(what, sizeof what, "%s, the directory as the process left it", where);
	bad += (int)check_state(w, dir, log.nops, visible, what, 0);
	vfs_log_free(&log);
	st->failures += (unsigned long)bad;
	return bad;
}

int faults_long;
unsigned fault_sample = 1;

/* The phase of workload w's sample of fault runs: from the sample seed
 * and its name, so that --sample-seed repeats the same runs. */
static unsigned long sample_phase(const struct workload *w)
{
	unsigned long h = power_sample_seed ^ 2166136261ul;
	for (const char *p = w->name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619ul;
	return h % fault_sample;
}

unsigned faults_classes(const struct workload *w)
{
	return faults_long && w->faults_long ? w->faults_long : w->faults;
}

int faults_run(const struct workload *w, const char *base, unsigned seed, struct fault_stats *st)
{
	unsigned classes = faults_classes(w);
	unsigned long calls[FC_N];
	if (one(w, base, seed, -1, 0, 0, calls, st))
		return 1;
	/* CRASHSIM_FAULT=CLASS:N runs only that one (CLASS a number of
	 * enum fault_class), for a closer look. */
	const char *only = getenv("CRASHSIM_FAULT");
	int oc = -1;
	unsigned long on = 0;
	if (only && sscanf(only, "%d:%lu", &oc, &on) != 2)
		oc = -1;
	/* With --fault-sample N, one run in N, counted over every (call,
	 * error) in order from the phase. */
	unsigned long k = sample_phase(w);
	for (int c = 0; c < FC_N; c++)
		for (unsigned long n = 1; n <= calls[c] && (classes & 1u << c); n++)
			for (size_t e = 0; e < sizeof errs / sizeof errs[0]; e++) {
				if ((errs[e] == 0 && c != FC_WRITE) ||
				    (oc >= 0 && (c != oc || n != on)))
					continue;
				if (oc < 0 && k++ % fault_sample != 0)
					continue;
				one(w, base, seed, c, n, errs[e], NULL, st);
				if (st->failures > 20)
					return 1;
			}
	return st->failures ? 1 : 0;
}
