/*
 * maint_fault.h: a crash of a maintenance run at a chosen step, injected
 * from outside the library (maint_fault.c, linked with -Wl,--wrap=elog__maint_step).
 *
 * With the environment variable ELOG_MAINT_CRASH_AT=N, the Nth step of the
 * process (the Nth call of elog__maint_step() by the library) calls
 * _exit(MAINT_CRASH_STATUS) instead of running.  Steps are counted only
 * while the variable is set, so a test can run maintenance itself and then
 * fork a child that crashes.  Any value that no step number equals ("-1")
 * counts the steps without crashing.
 */
#ifndef MAINT_FAULT_H
#define MAINT_FAULT_H

#define MAINT_CRASH_ENV "ELOG_MAINT_CRASH_AT"
#define MAINT_CRASH_STATUS 86

void __wrap_elog__maint_step(void);

/* How many steps this process has counted since the last call; counting
 * starts again from 0, as in a new process.  A run with MAINT_CRASH_ENV set
 * to "-1" crashes nowhere and counts its steps. */
long maint_fault_steps(void);

#endif
