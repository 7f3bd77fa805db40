/*
 * timestamp.c: which record timestamps elog believes.
 *
 * A record's ts_ms is the producer's word (elog-append -t) or the writer's
 * clock at append.  Either may be wrong: a producer's clock ahead, a box
 * whose clock said 1970 until NTP set it.  Age retention judges segments
 * by their newest timestamp, so elog keeps a rule, in two halves:
 *   - elog-append refuses a given timestamp further in the future of its
 *     own clock than a skew (--max-skew, ELOG_TS_SKEW_DEFAULT_MS);
 *   - retention takes a timestamp as plausible only from 2000-01-01 to a
 *     skew past its own clock, and judges a segment whose newest timestamp
 *     is not plausible by the next segment whose is (it was written after,
 *     so it is no younger).  See retain.c.
 */
#include "base.h"

int elog_ts_future(int64_t ts_ms, int64_t now_ms, uint64_t max_skew_ms)
{
	if (ts_ms <= now_ms)
		return 0;
	return (uint64_t)ts_ms - (uint64_t)now_ms > max_skew_ms;
}

int elog__ts_plausible(int64_t ts_ms, int64_t now_ms)
{
	return ts_ms >= ELOG_TS_FLOOR_MS && !elog_ts_future(ts_ms, now_ms, ELOG_TS_SKEW_DEFAULT_MS);
}
