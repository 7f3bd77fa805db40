/*
 * crash.h: what the crash simulator's parts share.
 *
 * A workload (workloads.c) drives the library while vfs.c records every
 * file operation; it notes in the expectations (expect.c) each record it
 * appended, when each was acknowledged (elog_sync() returned), and each
 * consumer commit.  power.c then builds the disk states a power loss could
 * leave at every point of the recording and checks each with expect.c;
 * faults.c reruns a workload with one call failing at a time.
 */
#ifndef CRASH_H
#define CRASH_H

#include <stddef.h>
#include <stdint.h>

#include "elog.h"
#include "vfs.h"

#define NEVER SIZE_MAX

/* Workload properties the checks must allow for. */
#define W_RETAIN 0x1  /* retention may remove a prefix of the log */
#define W_COMPACT 0x2 /* compaction may remove records with a newer key */
#define W_CREATE 0x4  /* the recording begins before the log exists */
#define W_ZSTD 0x8    /* needs a build with zstd */
#define W_DAMAGE \
	0x10 /* the starting log is damaged, and the recording
                          * repairs it: the checks after a crash run the
                          * repair again (check_damaged()) */
#define W_SALVAGE \
	0x20 /* with W_DAMAGE: the repair is elog-verify
                          * --repair --salvage (elog_salvage() first,
                          * then REPAIR_FLAGS(1)) */

struct workload {
	const char *name;
	unsigned flags;
	struct elog_options opt;
	/* Builds the starting log in dir (not recorded); may be NULL. */
	void (*setup)(const char *dir, unsigned seed);
	/* The recorded part. */
	void (*run)(const char *dir, unsigned seed);
	/* The classes of calls (1 << FC_...) the fault runs fail in turn;
	 * 0: none.  Only workloads whose calls come in the same order in
	 * every run. */
	unsigned faults;
	/* Those of crashsim --long, when more (0: the same). */
	unsigned faults_long;
};

extern const struct workload workloads[];
extern const size_t nworkloads;

/* The flags of elog_verify() for elog-verify --repair (--salvage): with
 * salvage, the active segment's too where the library has that. */
#ifdef ELOG_VERIFY_SALVAGE
#define REPAIR_FLAGS(salvage) (ELOG_VERIFY_REPAIR | ((salvage) ? ELOG_VERIFY_SALVAGE : 0u))
#else
#define REPAIR_FLAGS(salvage) ELOG_VERIFY_REPAIR
#endif

/* ---- expect.c ---- */
void expect_reset(void);
/* A record appended at offset (call while its append is not yet synced). */
void expect_written(uint64_t offset, const struct elog_record *r);
/* Another record written at an offset some record was written at
 * before: a writer's batch that was never acknowledged may be cut and its
 * offsets given again (both are kept as candidates). */
/* elog_sync() returned 0 for offset, holding r: everything up to it is
 * durable.  An offset acknowledged for two records is a violation. */
void expect_acked(uint64_t offset, const struct elog_record *r);
/* Operations from..to (vfs_now() values) were a repair's: the watermark
 * may go back there (check (a) of expect_oplog()). */
void expect_repair(size_t from, size_t to);
/* Violations noted while recording (an offset acknowledged twice). */
unsigned long expect_problems(void);
/* The checks over the recorded operations themselves, with the model of
 * power.c: (a) the watermark never goes back within the recording but in
 * a repair; (b) when a watermark is written, every record below its
 * durable end is durable; (c) every acknowledged record was durable when
 * it was acknowledged.  Returns the number of violations, printed. */
unsigned expect_oplog(const struct workload *w, const struct vfs_log *log, const char *where);
/* Records that exist before the recording starts (all durable). */
void expect_all_durable(void);
/* The same for those below end only: the others were written by a
 * writer that never published them. */
void expect_durable_below(uint64_t end);
/* A rule broken while recording (counted by expect_problems()). */
void expect_violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A consumer commit about to be made, and its successful return. */
size_t expect_commit_begin(const char *name, uint64_t offset);
void expect_commit_done(size_t id);
uint64_t expect_count(void);
/* The highest acknowledged offset + 1 by operation k (0: none). */
uint64_t expect_acked_end(size_t k);

/* Checks the log in dir as a power loss after k recorded operations left
 * it; visible is the highest durable end any reader could have seen by
 * then.  Returns the number of violations, each printed with where. */
unsigned check_state(const struct workload *w, const char *dir, size_t k, uint64_t visible,
                     const char *where, int reboot);

/* ---- power.c ---- */
/* The model of the disk along a recording: what is durable after each
 * operation (an fsync makes its file's pending writes durable, a failed
 * one loses them; a directory fsync makes its names durable). */
struct model;
struct model *model_new(const struct vfs_log *log);
void model_free(struct model *m);
void model_step(struct model *m, size_t i); /* past operation i */
typedef void (*model_file_fn)(const char *name, int ino, unsigned long ver, const unsigned char *d,
                              size_t len, void *arg);
/* fn for each name of the durable directory, with its file's durable
 * bytes; ver changes whenever they may have. */
void model_durable_each(struct model *m, model_file_fn fn, void *arg);
unsigned long model_version(const struct model *m);

/* Checks the states a power loss could leave at every point of log (or,
 * with final_only, only the durable state at its end). */
struct power_stats {
	unsigned long points, states, unique, failures;
};
int power_run(const struct workload *w, const char *dir, const struct vfs_log *log, unsigned seed,
              unsigned random_per_point, int final_only, struct power_stats *st);
/* After a run whose sync failed: the directory as it reads once the
 * pages the failure dropped are evicted, in the same boot (live: the
 * directory the run left).  Returns the number of violations. */
int power_evicted(const struct workload *w, const char *dir, const char *live,
                  const struct vfs_log *log, uint64_t visible, const char *where);
/* Check one point in power_sample (1: every point; the last point is
 * always checked).  crashsim --sample sets it.  Which one of each
 * power_sample points depends on power_sample_seed and the workload's
 * name (--sample-seed; by default a new seed each run, printed). */
extern unsigned power_sample;
/* Inject one fault run in fault_sample (1: every one); which one of each
 * fault_sample depends on power_sample_seed and the workload's name. */
extern unsigned fault_sample;
extern unsigned long power_sample_seed;

/* ---- faults.c ---- */
struct fault_stats {
	unsigned long runs, injected, reported, failures;
};
int faults_run(const struct workload *w, const char *base, unsigned seed, struct fault_stats *st);
/* The classes w's fault runs fail (crashsim --long sets faults_long). */
extern int faults_long;
unsigned faults_classes(const struct workload *w);
/* The same checks on one recording, as the power runs' too. */

/* ---- workloads.c ---- */
/* A fresh dir holding w's starting log (nothing recorded yet), and fresh
 * expectations. */
void workload_prepare(const struct workload *w, const char *dir, unsigned seed);
extern int wl_faults;
extern unsigned long wl_errors, wl_violations;

/* ---- util ---- */
void rm_rf(const char *path);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
uint64_t rng_next(uint64_t *s);

#endif
