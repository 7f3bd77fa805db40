/*
 * maintstep.c: elog__maint_step(), the mark maintenance (maint.c, compact.c,
 * salvage.c) makes before each step that changes a file.  It does nothing.
 * It lives in an object of its own because a test replaces it at link time
 * with -Wl,--wrap=elog__maint_step, and --wrap redirects only the calls that
 * cross from one object to another: tests/crash/maint_fault.c stops a run
 * at a chosen step that way, as a crash would, and the library itself
 * never reads the environment for it nor exits.
 */
#include "maint.h"

void elog__maint_step(void)
{
}
