/*
 * timestamp.c: which record timestamps elog believes.
 *
 * A record's ts_ms is the producer's word (elog-append -t) or the writer's
 * clock at append.  Either may be wrong: a producer's clock ahead, a box
 * whose clock said 1970 until NTP set it.  Age retention judges segments
 * by their newest timestamp, so elog keeps a rule, in two halves:
 *   - elog-append refuses a given timestamp further in the future of its
 *     own clock than a skew (--max-skew, an hour by default);
 *   - retention takes a timestamp as plausible only from 2000-01-01 to a
 *     skew past its own clock, and judges a segment whose newest timestamp
 *     is not plausible by the next segment whose is (it was written after,
 *     so it is no younger).  See retain.c.
 */
#include "base.h"

/* 2000-01-01, and the skew elog-append's --max-skew defaults to. */
#define TS_FLOOR_MS 946684800000LL
#define TS_SKEW_MS (3600ull * 1000)

int elog__ts_plausible(int64_t ts_ms, int64_t now_ms)
{
	if (ts_ms < TS_FLOOR_MS)
		return 0;
	return ts_ms <= now_ms || (uint64_t)ts_ms - (uint64_t)now_ms <= TS_SKEW_MS;
}
