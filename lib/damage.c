/*
 * damage.c: what elog_verify() tells of the offsets readers cannot have,
 * so that a damaged log says what was lost, who will notice and what to
 * run next, and a log that lost records is never called clean:
 *
 *   - for each damaged segment, the offsets readers cannot read past the
 *     damage (from the one after the last good record to the next
 *     segment's base, or to the durable end in the active segment; the
 *     whole range of a closed segment whose header readers refuse), the
 *     named consumers whose committed offset is below the last of them
 *     (they will read into the damage), and what elog-verify --repair
 *     --salvage would keep and lose there, from a dry run of salvage's own
 *     scan (salvage.c) over the bytes after the damage;
 *   - for each range of the file "salvaged" that the segments still span,
 *     the offsets a repair or salvage lost and when.  A range below the
 *     first segment was removed by retention since: it is history.
 *
 * Both are reported as problems of their own kinds (ELOG_PROBLEM_UNREADABLE
 * and ELOG_PROBLEM_LOSS), not as damage: the damage itself is reported
 * once, where it lies, and a loss is not something a repair can undo.
 *
 * Every problem of elog_verify(), of verify.c, repair.c and this file, is
 * counted and handed to the caller's hook by elog__verify_report(), here,
 * at the bottom of verification's layer: verify.c calls repair.c and this
 * file, repair.c calls this file, and none calls back up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "format.h"
#include "encoding.h"
#include "files.h"
#include "consumers_json.h"
#include "maint.h"
#include "verify.h"

void elog__verify_report(struct verify *v, int kind, int hint, const char *detail, const char *file,
                         uint64_t pos, const char *fmt, ...)
{
	char text[ELOG_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	if (kind == ELOG_PROBLEM_DAMAGE)
		v->res->damage++;
	else if (kind == ELOG_PROBLEM_WARNING)
		v->res->warnings++;
	else if (kind == ELOG_PROBLEM_LOSS)
		v->res->losses++;
	else if (kind == ELOG_PROBLEM_UNREADABLE)
		v->res->unreadable++;
	else
		v->res->repaired++;
	if (!v->quiet && v->o && v->o->problem) {
		struct elog_problem p = { kind, file, pos, text, hint, detail ? detail : "" };
		v->o->problem(v->o->arg, &p);
	}
}

/* ms since the epoch as RFC 3339 in UTC, with milliseconds. */
static void rfc3339(char *buf, size_t size, int64_t ms)
{
	time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	struct tm tm;
	if (gmtime_r(&t, &tm) == NULL || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0) {
		snprintf(buf, size, "@%lld", (long long)ms);
		return;
	}
	size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%03dZ", (int)(ms - (int64_t)t * 1000));
}

/* "offset N" or "offsets A-B". */
static void range_text(char *buf, size_t size, uint64_t first, uint64_t last)
{
	if (first == last)
		snprintf(buf, size, "offset %llu", (unsigned long long)first);
	else
		snprintf(buf, size, "offsets %llu-%llu", (unsigned long long)first,
		         (unsigned long long)last);
}

void elog__verify_losses(struct verify *v)
{
	const struct holes *h = &v->holes;
	uint64_t start = v->n ? v->base[0] : 0;
	/* A file that readers cannot read makes them report no gap: damage. */
	if (v->holes_err)
		elog__verify_report(v, ELOG_PROBLEM_DAMAGE, ELOG_HINT_NONE, NULL, FN_SALVAGED,
		                    ELOG_NOPOS, "%s",
		                    v->holes_err != ELOG_CORRUPT
		                            ? elog_strerror(v->holes_err)
		                            : "malformed: readers report no gap for the offsets "
		                              "that salvage lost (format in elog(5))");
	for (size_t i = 0; i < h->n; i++) {
		char what[64], when[40];
		if (h->v[i].last < start)
			continue;
		range_text(what, sizeof what, h->v[i].first, h->v[i].last);
		rfc3339(when, sizeof when, h->v[i].ms);
		int one = h->v[i].first == h->v[i].last;
		elog__verify_report(v, ELOG_PROBLEM_LOSS, ELOG_HINT_NONE, NULL, FN_SALVAGED,
		                    ELOG_NOPOS,
		                    "%s %s lost to damage (recorded by a repair or salvage at "
		                    "%s); readers report %s as a gap",
		                    what, one ? "was" : "were", when, one ? "it" : "them");
	}
}

/* Append to buf (at *len of size) what fmt says, as far as it fits. */
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	if (*len >= size)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	*len = n < 0 ? *len : *len + (size_t)n >= size ? size - 1 : *len + (size_t)n;
}

/* "; behind them: consumer a (at 5), b (at 9)", the named consumers that
 * have not read past last; nothing when none. */
static void consumers_behind(const struct ctable *t, uint64_t last, char *buf, size_t size,
                             size_t *len)
{
	size_t shown = 0, more = 0, behind = 0;
	for (size_t i = 0; i < t->n; i++)
		behind += t->v[i].next <= last;
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].next > last)
			continue;
		if (shown == 4) {
			more++;
			continue;
		}
		add(buf, size, len, t->v[i].uncommitted ? "%s%s (not yet committed)" : "%s%s (at %llu)",
		    shown        ? ", "
		    : behind > 1 ? "; consumers behind them: "
		                 : "; consumer behind them: ",
		    t->v[i].name, (unsigned long long)t->v[i].offset);
		shown++;
	}
	if (more)
		add(buf, size, len, " and %zu more", more);
}

/* What the salvage plan p (the bytes after the damage) keeps and loses,
 * the detail of ELOG_HINT_SALVAGE; hdr: the header must be rebuilt first,
 * which salvage does only when it can tell how the values were stored. */
static void salvage_text(const struct salvage_plan *p, int hdr, char *buf, size_t size, size_t *len)
{
	size_t shown = 0;
	add(buf, size, len, "gets past it%s, keeping %llu record%s",
	    hdr ? " if it can rebuild the header" : "", (unsigned long long)p->records,
	    p->records == 1 ? "" : "s");
	for (size_t i = 0; i < p->nd; i++) {
		char what[64];
		if (p->d[i].first > p->d[i].last)
			continue;
		if (shown == 4) {
			add(buf, size, len, ", ...");
			break;
		}
		range_text(what, sizeof what, p->d[i].first, p->d[i].last);
		add(buf, size, len, "%s%s", shown ? ", " : " and losing ", what);
		shown++;
	}
	if (!shown)
		add(buf, size, len, " and losing no offset");
}

/* Segment i's unreadable offsets, if it has damage that readers stop at:
 * [*first, *last], the byte salvage would scan from and up to, and the
 * bound of its offsets.  *hdr: its header is damaged (SEG_HDR) or short
 * (1). */
static int unreadable_range(const struct verify *v, size_t i, uint64_t *first, uint64_t *last,
                            uint64_t *from, uint64_t *scan_end, uint64_t *hi, int *hdr)
{
	const struct segstate *ss = &v->seg[i];
	int f = ss->hdr_fault;
	/* Readers refuse the whole segment when its header is damaged (its
	 * magic or CRC) or short, and else stop at its first bad record. */
	*hdr = !ss->damaged ? 0 : f == SEG_FAULT_SHORT ? 1 : SEG_HDR_DAMAGED(f) ? (int)SEG_HDR : 0;
	*from = *hdr ? SEG_HDR : ss->bad_at;
	if (!*hdr && (!ss->scanned || ss->bad_at == UINT64_MAX))
		return 0;
	if (i + 1 < v->n) {
		*hi = v->base[i + 1];
		*scan_end = UINT64_MAX;
	} else if (*from < ss->acked) {
		/* Damage past the durable end was never acknowledged. */
		*hi = v->wm.durable_end;
		*scan_end = v->wm.segment_bytes;
	} else {
		return 0;
	}
	*first = *hdr ? ss->base : ss->next;
	*last = *hi - 1;
	return *hi > *first;
}

int elog__verify_unreadable(struct verify *v)
{
	struct ctable t = { 0 };
	char m[ELOG_MSG_MAX];
	int loaded = 0, err = 0;
	for (size_t i = 0; !err && i < v->n; i++) {
		uint64_t first, last, from, scan_end, hi;
		int hdr;
		if (!unreadable_range(v, i, &first, &last, &from, &scan_end, &hi, &hdr))
			continue;
		if (!loaded) {
			/* Its problems are check_consumers()'s to report. */
			m[0] = '\0';
			if (elog__consumers_load(v->dfd, &t, m) != 0)
				elog__ctable_free(&t);
			loaded = 1;
		}
		char text[ELOG_MSG_MAX], detail[ELOG_MSG_MAX], what[64];
		size_t len = 0, dlen = 0;
		int hint = ELOG_HINT_NONE;
		range_text(what, sizeof what, first, last);
		add(text, sizeof text, &len, "%s cannot be read %s", what,
		    hdr ? "(the segment header is damaged)" : "past the damage");
		consumers_behind(&t, last, text, sizeof text, &len);
		struct salvage_plan p = { .count_only = 1, .next = first };
		detail[0] = '\0';
		if (hdr == 1) {
			hint = ELOG_HINT_NO_SALVAGE;
		} else if ((err = elog__salvage_plan_segment(v->dfd, v->seg[i].base, from, scan_end,
		                                             scan_end, hi, &p, m)) == 0) {
			hint = ELOG_HINT_SALVAGE;
			salvage_text(&p, hdr, detail, sizeof detail, &dlen);
			v->res->salvageable++;
		} else if (err != ENOMEM) {
			/* Changed or gone since it was read: said by the next check. */
			err = 0;
		}
		elog__salvage_plan_free(&p);
		elog__verify_report(v, ELOG_PROBLEM_UNREADABLE, hint, detail, v->seg[i].name,
		                    ELOG_NOPOS, "%s", text);
	}
	elog__ctable_free(&t);
	if (err)
		return elog__errmsg_set(v->msg, err, "%s", elog_strerror(err));
	return 0;
}
