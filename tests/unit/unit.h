/*
 * unit.h: what the unit tests share.  Minimal for now: the Check framework.
 */
#ifndef ELOG_UNIT_H
#define ELOG_UNIT_H

#include <check.h>

#endif
