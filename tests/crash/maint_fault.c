/*
 * maint_fault.c: the replacement of the library's elog__maint_step() in the unit
 * tests and in elog-compact-faulty (see maint_fault.h and the Makefile).
 */
#include <stdlib.h>
#include <unistd.h>

#include "maint_fault.h"

/* The steps counted so far in this process. */
static long steps;

long maint_fault_steps(void)
{
	return __atomic_exchange_n(&steps, 0, __ATOMIC_RELAXED);
}

void __wrap_elog__maint_step(void)
{
	/* Read each time (it is cheap next to the file operation a step is)
	 * and counted only when set.  Counted atomically: retention unlinks
	 * files in several threads. */
	const char *s = getenv(MAINT_CRASH_ENV);
	if (s && *s && __atomic_add_fetch(&steps, 1, __ATOMIC_RELAXED) == strtol(s, NULL, 10))
		_exit(MAINT_CRASH_STATUS);
}
