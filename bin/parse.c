/*
 * parse.c: the argument grammars every program shares: unsigned integers,
 * durations, sizes and points in time, as elog(7) ARGUMENTS describes them,
 * with the clocks they are read against and their printed forms.  Each
 * parser takes the whole string or nothing, so "10x" or "5 " is an error,
 * never 10 or 5.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Read a run of decimal digits at *p into *v, refusing an empty run and
 * overflow; *p is left after the digits. */
static int digits_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;

	if (!is_digit(*s))
		return -1;
	for (; is_digit(*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (n > (UINT64_MAX - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	*p = s;
	*v = n;
	return 0;
}

int cli_parse_u64(const char *s, uint64_t *v)
{
	uint64_t n;

	if (digits_u64(&s, &n) < 0 || *s != '\0')
		return -1;
	*v = n;
	return 0;
}

/* Multiply with an overflow check. */
static int mul_u64(uint64_t a, uint64_t b, uint64_t *r)
{
	if (b != 0 && a > UINT64_MAX / b)
		return -1;
	*r = a * b;
	return 0;
}

/* A duration is one or more NUMBER UNIT pairs ("90s", "1h30m"), so that no
 * bare number is ever read in a unit the user did not mean; but a bare "0"
 * is the same in every unit.  The total must fit in an int64_t of
 * milliseconds, because times are signed. */
int cli_parse_duration(const char *s, uint64_t *ms)
{
	uint64_t total = 0;

	if (*s == '\0')
		return -1;
	if (strcmp(s, "0") == 0) {
		*ms = 0;
		return 0;
	}
	while (*s != '\0') {
		uint64_t n, unit, part;

		if (digits_u64(&s, &n) < 0)
			return -1;
		if (strncmp(s, "ms", 2) == 0) {
			unit = 1;
			s += 2;
		} else {
			switch (*s) {
			case 's':
				unit = 1000;
				break;
			case 'm':
				unit = 60 * 1000;
				break;
			case 'h':
				unit = 3600 * 1000;
				break;
			case 'd':
				unit = 86400 * 1000;
				break;
			case 'w':
				unit = 7 * 86400 * 1000;
				break;
			default:
				return -1;
			}
			s++;
		}
		if (mul_u64(n, unit, &part) < 0 || part > (uint64_t)INT64_MAX - total)
			return -1;
		total += part;
	}
	*ms = total;
	return 0;
}

/* Sizes are whole bytes with an optional binary unit (K M G T, either case),
 * which may be followed by "B" or "iB" (either case): 64M, 64MB, 64mb and
 * 64MiB are the same. */
int cli_parse_size(const char *s, uint64_t *bytes)
{
	uint64_t n, mult = 1;

	if (digits_u64(&s, &n) < 0)
		return -1;
	switch (*s) {
	case 'k':
	case 'K':
		mult = 1ull << 10;
		s++;
		break;
	case 'm':
	case 'M':
		mult = 1ull << 20;
		s++;
		break;
	case 'g':
	case 'G':
		mult = 1ull << 30;
		s++;
		break;
	case 't':
	case 'T':
		mult = 1ull << 40;
		s++;
		break;
	default:
		break;
	}
	if (mult > 1 && (s[0] == 'i' || s[0] == 'I') && (s[1] == 'B' || s[1] == 'b'))
		s += 2;
	else if (s[0] == 'B' || s[0] == 'b')
		s++;
	if (*s != '\0')
		return -1;
	return mul_u64(n, mult, bytes);
}

/* Read exactly n digits as a number. */
static int fixed_digits(const char **p, int n, int *v)
{
	const char *s = *p;
	int x = 0;

	for (int i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return -1;
		x = x * 10 + (s[i] - '0');
	}
	*p = s + n;
	*v = x;
	return 0;
}

static int leap_year(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return m == 2 && leap_year(y) ? 29 : days[m - 1];
}

/* Days from 1970-01-01 to the given civil date in the proleptic Gregorian
 * calendar (H. Hinnant's algorithm), so that UTC times need neither timegm()
 * nor the TZ variable. */
static int64_t days_from_civil(int y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Local civil time to milliseconds through mktime(3), which knows the zone's
 * rules; tm_isdst = -1 lets it pick standard or summer time. */
static int local_ms(int y, int mo, int d, int h, int mi, int sec, int64_t *ms)
{
	struct tm tm;
	time_t t;

	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	/* (time_t)-1 is also one second before the epoch, so only errno
	 * tells a failure apart. */
	errno = 0;
	t = mktime(&tm);
	if (t == (time_t)-1 && errno != 0)
		return -1;
	*ms = (int64_t)t * 1000;
	return 0;
}

/* YYYY-MM-DD, optionally followed by T (or t, or a space) and HH:MM, :SS,
 * a fraction of a second, and a zone: Z, z, +hh:mm or -hh:mm.  Without a
 * zone the time is local; a date alone is local midnight.  Seconds may be
 * left out for convenience; RFC 3339 itself always has them. */
static int parse_datetime(const char *s, int64_t *ms)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, frac = 0, zone = 0, zone_min = 0;

	if (fixed_digits(&s, 4, &y) < 0 || *s++ != '-' || fixed_digits(&s, 2, &mo) < 0 ||
	    *s++ != '-' || fixed_digits(&s, 2, &d) < 0)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		return -1;
	if (*s == 'T' || *s == 't' || *s == ' ') {
		s++;
		if (fixed_digits(&s, 2, &h) < 0 || *s++ != ':' || fixed_digits(&s, 2, &mi) < 0)
			return -1;
		if (*s == ':') {
			s++;
			if (fixed_digits(&s, 2, &sec) < 0)
				return -1;
			if (*s == '.') {
				/* Milliseconds are all we keep; finer digits are
				 * read and dropped (truncated, not rounded). */
				int scale = 100;

				s++;
				if (!is_digit(*s))
					return -1;
				for (; is_digit(*s); s++, scale /= 10)
					frac += (*s - '0') * scale;
			}
		}
		/* 60 is a leap second; it counts as the next second's start. */
		if (h > 23 || mi > 59 || sec > 60)
			return -1;
		if (*s == 'Z' || *s == 'z') {
			zone = 1;
			s++;
		} else if (*s == '+' || *s == '-') {
			int sign = *s++ == '-' ? -1 : 1, zh, zm;

			if (fixed_digits(&s, 2, &zh) < 0 || *s++ != ':' ||
			    fixed_digits(&s, 2, &zm) < 0 || zh > 23 || zm > 59)
				return -1;
			zone = 1;
			zone_min = sign * (zh * 60 + zm);
		}
	}
	if (*s != '\0')
		return -1;
	if (zone) {
		int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
		               zone_min * 60;
		*ms = secs * 1000 + frac;
		return 0;
	}
	if (local_ms(y, mo, d, h, mi, sec, ms) < 0)
		return -1;
	*ms += frac;
	return 0;
}

int cli_parse_time(const char *s, int64_t now_ms, int64_t *ms)
{
	uint64_t v;

	if (s[0] == '@') {
		int neg = s[1] == '-';

		if (cli_parse_u64(s + 1 + neg, &v) < 0 || v > (uint64_t)INT64_MAX)
			return -1;
		*ms = neg ? -(int64_t)v : (int64_t)v;
		return 0;
	}
	/* Digits alone are epoch milliseconds, as elog-cat prints them in
	 * "ts" and elog-append -t reads them.  With a minus sign they would
	 * be a time before 1970 to elog-append -t, but here they are far
	 * likelier a relative time without its unit: that stays an error,
	 * and @-N says the former. */
	if (cli_parse_u64(s, &v) == 0) {
		if (v > (uint64_t)INT64_MAX)
			return -1;
		*ms = (int64_t)v;
		return 0;
	}
	if (s[0] == '-') {
		if (cli_parse_duration(s + 1, &v) < 0 || now_ms < INT64_MIN + (int64_t)v)
			return -1;
		*ms = now_ms - (int64_t)v;
		return 0;
	}
	return parse_datetime(s, ms);
}

/*
 * Option arguments: parse, or stop with a usage error that names the option
 * and quotes the argument, e.g. "elog-cat: --since: invalid time 'soon'".
 */

uint64_t cli_arg_u64(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (cli_parse_u64(arg, &v) < 0)
		cli_usage_error("%s: invalid number '%s'", opt, arg);
	if (v < min || v > max)
		cli_usage_error("%s: %s is out of range (%llu to %llu)", opt, arg,
		                (unsigned long long)min, (unsigned long long)max);
	return v;
}

uint64_t cli_arg_size(const char *opt, const char *arg)
{
	uint64_t v;

	if (cli_parse_size(arg, &v) < 0)
		cli_usage_error("%s: invalid size '%s'", opt, arg);
	return v;
}

/* bytes with the largest binary unit that divides it: "4K", "1G", "100". */
static void size_exact(uint64_t v, char buf[32])
{
	static const char unit[] = "KMGTPE";
	int u = -1;

	while (v != 0 && v % 1024 == 0 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, 32, "%llu", (unsigned long long)v);
	else
		snprintf(buf, 32, "%llu%c", (unsigned long long)v, unit[u]);
}

uint64_t cli_arg_size_range(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	char lo[32], hi[32];
	uint64_t v = cli_arg_size(opt, arg);

	if (v < min || v > max) {
		size_exact(min, lo);
		size_exact(max, hi);
		cli_usage_error("%s: %s is out of range (%s to %s)", opt, arg, lo, hi);
	}
	return v;
}

uint64_t cli_arg_limit_size(const char *opt, const char *arg)
{
	uint64_t v = cli_arg_size(opt, arg);

	if (v == 0)
		cli_usage_error("%s: must be more than 0", opt);
	return v;
}

uint64_t cli_arg_limit_duration(const char *opt, const char *arg)
{
	uint64_t v = cli_arg_duration(opt, arg);

	if (v == 0)
		cli_usage_error("%s: must be more than 0", opt);
	return v;
}

uint64_t cli_arg_duration(const char *opt, const char *arg)
{
	uint64_t v;

	if (cli_parse_duration(arg, &v) < 0)
		cli_usage_error("%s: invalid duration '%s'", opt, arg);
	return v;
}

int64_t cli_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cli_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cli_arg_time(const char *opt, const char *arg)
{
	int64_t v;

	uint64_t d;

	if (cli_parse_time(arg, cli_now_ms(), &v) == 0)
		return v;
	/* "1h" for "an hour ago" is the likeliest slip of all. */
	if (cli_parse_duration(arg, &d) == 0)
		cli_usage_error("%s: invalid time '%s' (did you mean -%s?)", opt, arg, arg);
	if (arg[0] == '-' && cli_parse_u64(arg + 1, &d) == 0)
		cli_usage_error("%s: invalid time '%s' (a relative time needs a unit, "
		                "as in %sh; @%s is milliseconds before the epoch)",
		                opt, arg, arg, arg);
	cli_usage_error("%s: invalid time '%s'", opt, arg);
}

int cli_arg_cleanup(const char *opt, const char *arg)
{
	if (strcmp(arg, "delete") == 0)
		return ELOG_CLEANUP_DELETE;
	if (strcmp(arg, "compact") == 0)
		return ELOG_CLEANUP_COMPACT;
	cli_usage_error("%s: 'delete' or 'compact', not '%s'", opt, arg);
}

int cli_format_time(int64_t ms, char buf[CLI_TIME_MAX])
{
	/* Floor division, so that times before 1970 get a positive fraction. */
	int64_t sec = ms / 1000, frac = ms % 1000;
	struct tm tm;
	size_t n;

	if (frac < 0) {
		frac += 1000;
		sec--;
	}
	time_t t = (time_t)sec;
	if (gmtime_r(&t, &tm) == NULL || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0 ||
	    (n = strftime(buf, CLI_TIME_MAX - 5, "%Y-%m-%dT%H:%M:%S", &tm)) == 0)
		return -1;
	snprintf(buf + n, CLI_TIME_MAX - n, ".%03dZ", (int)frac);
	return 0;
}

void cli_put_time(int64_t ms)
{
	char buf[CLI_TIME_MAX];

	if (cli_format_time(ms, buf) == 0) {
		cli_puts(buf);
		return;
	}
	cli_putc('@');
	cli_put_i64(ms);
}

void cli_format_size(uint64_t bytes, char buf[CLI_SIZE_MAX])
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, CLI_SIZE_MAX, "%llu B", (unsigned long long)bytes);
		return;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, CLI_SIZE_MAX, "%.1f %s", v, unit[u]);
}

void cli_format_duration(uint64_t ms, char buf[CLI_DURATION_MAX])
{
	static const struct {
		const char *name;
		uint64_t ms;
	} unit[] = {
		{ "w", 7 * 86400000ull }, { "d", 86400000ull }, { "h", 3600000ull },
		{ "m", 60000ull },        { "s", 1000ull },
	};

	/* The largest unit that gives a whole number, so that what is printed
	 * parses back to the same duration. */
	for (size_t i = 0; i < sizeof unit / sizeof unit[0]; i++)
		if (ms != 0 && ms % unit[i].ms == 0) {
			snprintf(buf, CLI_DURATION_MAX, "%llu%s",
			         (unsigned long long)(ms / unit[i].ms), unit[i].name);
			return;
		}
	snprintf(buf, CLI_DURATION_MAX, "%llums", (unsigned long long)ms);
}
