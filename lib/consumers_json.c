/*
 * consumers_json.c: the table of committed offsets and the text of
 * consumers.json.
 *
 * The file is a small JSON document that a person can read and fix by hand
 * (elog(5), consumers.json and consumers.lock).  A consumer created and not
 * yet committed (elog_consumer_create()) is {"next": 0, "created_ms": ...},
 * the first offset it has to read; a file with one is version 2, so that an
 * older build refuses it by its version instead of misreading it, and a
 * file without one stays version 1.
 *
 * The parser accepts exactly that shape with any JSON whitespace, members of
 * a consumer in either order, and nothing else: "version" must come first so
 * that a later format may change everything after it; numbers are plain
 * non-negative integers; strings are names from the consumer alphabet, so no
 * escape is ever needed.  Input is bounded (CONSUMERS_FILE_MAX) and never
 * trusted: every byte is checked against the end of the buffer, and there is
 * no recursion, so a hostile file gives an error, not a crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "format.h"
#include "consumers_json.h"

/* The consumer alphabet (elog.h), here because the table's text is what
 * holds the names: consumers.c and losses.c, above this file, check names
 * they are given with it too. */
int elog_consumer_name_check(const char *name)
{
	size_t n;

	if (!name || !name[0] || name[0] == '.' || name[0] == '-')
		return ELOG_BADNAME;
	for (n = 0; name[n]; n++) {
		char c = name[n];
		if (n == ELOG_CONSUMER_NAME_MAX)
			return ELOG_BADNAME;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return ELOG_BADNAME;
	}
	return 0;
}

void elog__ctable_free(struct ctable *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

/* Binary search; *at receives the index where name is or would go. */
static int ctable_search(const struct ctable *t, const char *name, size_t *at)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->v[mid].name, name);
		if (c == 0) {
			*at = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return 0;
}

ssize_t elog__ctable_find(const struct ctable *t, const char *name)
{
	size_t at;

	return ctable_search(t, name, &at) ? (ssize_t)at : -1;
}

/* Name's entry, added in order (zeroed) when it is new: its index in *at.
 * 0, 1 when it was there, ELOG_TOOMANY, ENOMEM. */
static int ctable_entry(struct ctable *t, const char *name, size_t *at_out)
{
	size_t at;

	if (!ctable_search(t, name, &at)) {
		if (t->n >= ELOG_CONSUMERS_MAX)
			return ELOG_TOOMANY;
		struct elog_consumer *v = elog__grow(t->v, &t->cap, t->n + 1, sizeof *v, 8);
		if (!v)
			return ENOMEM;
		t->v = v;
		memmove(t->v + at + 1, t->v + at, (t->n - at) * sizeof *t->v);
		t->n++;
		memset(&t->v[at], 0, sizeof t->v[at]);
		/* The caller has checked the name, so it fits. */
		memcpy(t->v[at].name, name, strlen(name) + 1);
		*at_out = at;
		return 0;
	}
	*at_out = at;
	return 1;
}

int elog__ctable_set(struct ctable *t, const char *name, uint64_t offset, int64_t committed_ms)
{
	size_t at;
	int rc = ctable_entry(t, name, &at);

	if (rc != 0 && rc != 1)
		return rc;
	t->v[at].offset = offset;
	t->v[at].next = offset + 1;
	t->v[at].uncommitted = 0;
	t->v[at].committed_ms = committed_ms;
	return 0;
}

int elog__ctable_create(struct ctable *t, const char *name, uint64_t next, int64_t created_ms)
{
	size_t at;
	int rc = ctable_entry(t, name, &at);

	if (rc != 0)
		return rc;
	t->v[at].next = next;
	t->v[at].uncommitted = 1;
	t->v[at].committed_ms = created_ms;
	return 0;
}

void elog__ctable_remove(struct ctable *t, size_t i)
{
	memmove(t->v + i, t->v + i + 1, (t->n - i - 1) * sizeof *t->v);
	t->n--;
}

/* ---- parsing ---- */

struct pstate {
	const char *p, *start, *end;
	char *msg;
};

static int perr(struct pstate *s, const char *what)
{
	return elog__errmsg_set(s->msg, ELOG_CORRUPT, FN_CONSUMERS ": byte %zu: %s",
	                        (size_t)(s->p - s->start), what);
}

static void skip_ws(struct pstate *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* Skip whitespace, then consume c if it is next. */
static int eat(struct pstate *s, char c)
{
	skip_ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return 1;
	}
	return 0;
}

static int expect(struct pstate *s, char c)
{
	char what[32];

	if (eat(s, c))
		return 0;
	snprintf(what, sizeof what, "expected '%c'", c);
	return perr(s, what);
}

/* A string of at most ELOG_CONSUMER_NAME_MAX plain characters into buf,
 * *at where it begins.  Escapes and control characters are refused: no
 * name needs them. */
static int parse_string(struct pstate *s, char buf[ELOG_CONSUMER_NAME_MAX + 1], const char **at)
{
	size_t n = 0;

	skip_ws(s);
	*at = s->p;
	if (!eat(s, '"'))
		return perr(s, "expected a string");
	for (;;) {
		if (s->p == s->end)
			return perr(s, "unterminated string");
		unsigned char c = (unsigned char)*s->p;
		if (c == '"')
			break;
		if (c == '\\')
			return perr(s, "escape sequences are not allowed");
		if (c < 0x20 || c >= 0x7f)
			return perr(s, "a character outside printable ASCII in a string");
		if (n == ELOG_CONSUMER_NAME_MAX)
			return perr(s, "string too long");
		buf[n++] = (char)c;
		s->p++;
	}
	s->p++;
	buf[n] = 0;
	return 0;
}

/* A non-negative integer without sign, fraction, exponent or leading zero,
 * at most max. */
static int parse_uint(struct pstate *s, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	const char *at;

	skip_ws(s);
	at = s->p;
	if (s->p == s->end || *s->p < '0' || *s->p > '9')
		return perr(s, "expected a non-negative integer");
	if (*s->p == '0' && s->p + 1 < s->end && s->p[1] >= '0' && s->p[1] <= '9')
		return perr(s, "a number with a leading zero");
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		unsigned d = (unsigned)(*s->p - '0');
		if (x > (max - d) / 10) {
			s->p = at;
			return perr(s, "number out of range");
		}
		x = x * 10 + d;
		s->p++;
	}
	if (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E'))
		return perr(s, "expected an integer");
	*v = x;
	return 0;
}

/* {"offset": N, "committed_ms": T} in either order, both required; with
 * version 2 also {"next": N, "created_ms": T} (*uncommitted set). */
static int parse_entry(struct pstate *s, int v2, uint64_t *offset, int64_t *ms, int *uncommitted)
{
	char key[ELOG_CONSUMER_NAME_MAX + 1];
	int have_off = 0, have_ms = 0, rc;
	/* The members' names: committed, or created and not committed. */
	const char *off_name = "offset", *ms_name = "committed_ms";

	if ((rc = expect(s, '{')))
		return rc;
	do {
		const char *at;
		uint64_t v;
		if ((rc = parse_string(s, key, &at)) || (rc = expect(s, ':')))
			return rc;
		if (v2 && !have_off && !have_ms &&
		    (strcmp(key, "next") == 0 || strcmp(key, "created_ms") == 0)) {
			off_name = "next";
			ms_name = "created_ms";
			*uncommitted = 1;
		}
		if (strcmp(key, off_name) == 0 && !have_off) {
			/* UINT64_MAX is no record's offset, and resuming after
			 * it would wrap to 0. */
			if ((rc = parse_uint(s, UINT64_MAX - 1, offset)))
				return rc;
			have_off = 1;
		} else if (strcmp(key, ms_name) == 0 && !have_ms) {
			if ((rc = parse_uint(s, INT64_MAX, &v)))
				return rc;
			*ms = (int64_t)v;
			have_ms = 1;
		} else {
			s->p = at;
			return perr(s, strcmp(key, off_name) == 0 || strcmp(key, ms_name) == 0
			                       ? "duplicate member"
			                       : "unknown member");
		}
	} while (eat(s, ','));
	if (!have_off || !have_ms) {
		char what[40];
		snprintf(what, sizeof what, "missing \"%s\"", have_off ? ms_name : off_name);
		return perr(s, what);
	}
	return expect(s, '}');
}

static int parse_consumers(struct pstate *s, int v2, struct ctable *t)
{
	char name[ELOG_CONSUMER_NAME_MAX + 1];
	int rc;

	if ((rc = expect(s, '{')))
		return rc;
	if (eat(s, '}'))
		return 0;
	do {
		const char *at;
		uint64_t offset = 0;
		int64_t ms = 0;
		int uncommitted = 0;
		if ((rc = parse_string(s, name, &at)))
			return rc;
		int bad = elog_consumer_name_check(name) != 0;
		if (bad || elog__ctable_find(t, name) >= 0) {
			s->p = at;
			return perr(s, bad ? "invalid consumer name" : "duplicate consumer name");
		}
		if ((rc = expect(s, ':')) ||
		    (rc = parse_entry(s, v2, &offset, &ms, &uncommitted)))
			return rc;
		rc = uncommitted ? elog__ctable_create(t, name, offset, ms)
		                 : elog__ctable_set(t, name, offset, ms);
		if (rc == ELOG_TOOMANY)
			return perr(s, "more consumers than the limit");
		if (rc)
			return rc;
	} while (eat(s, ','));
	return expect(s, '}');
}

static int parse_doc(struct pstate *s, struct ctable *t)
{
	char key[ELOG_CONSUMER_NAME_MAX + 1];
	const char *first;
	uint64_t version;
	int rc, have_consumers = 0;

	if ((rc = expect(s, '{')) || (rc = parse_string(s, key, &first)))
		return rc;
	if (strcmp(key, "version") != 0) {
		s->p = first;
		return perr(s, "expected \"version\" as the first member");
	}
	if ((rc = expect(s, ':')) || (rc = parse_uint(s, UINT32_MAX, &version)))
		return rc;
	if (version != CONSUMERS_FORMAT && version != CONSUMERS_FORMAT_UNCOMMITTED)
		return elog__errmsg_set(s->msg, ELOG_BADVERSION,
		                        FN_CONSUMERS ": format version %llu, this build "
		                                     "reads versions %u and %u",
		                        (unsigned long long)version, CONSUMERS_FORMAT,
		                        CONSUMERS_FORMAT_UNCOMMITTED);
	while (eat(s, ',')) {
		const char *at;
		if ((rc = parse_string(s, key, &at)))
			return rc;
		if (strcmp(key, "consumers") != 0 || have_consumers) {
			s->p = at;
			return perr(s, strcmp(key, "consumers") != 0 ? "unknown member"
			                                             : "duplicate member");
		}
		if ((rc = expect(s, ':')) ||
		    (rc = parse_consumers(s, version == CONSUMERS_FORMAT_UNCOMMITTED, t)))
			return rc;
		have_consumers = 1;
	}
	if (!have_consumers)
		return perr(s, "missing \"consumers\"");
	if ((rc = expect(s, '}')))
		return rc;
	skip_ws(s);
	if (s->p != s->end)
		return perr(s, "data after the end of the document");
	return 0;
}

int elog__ctable_parse(struct ctable *t, const char *text, size_t len, char *msg)
{
	struct pstate s = { text, text, text + len, msg };
	int rc = parse_doc(&s, t);

	if (rc)
		elog__ctable_free(t);
	return rc;
}

/* ---- formatting ---- */

/* The longest line an entry takes: indentation, quotes, the name, the
 * members with 20-digit numbers, separators and the newline. */
#define ENTRY_MAX (ELOG_CONSUMER_NAME_MAX + 96)

int elog__ctable_format(const struct ctable *t, char **text, size_t *len)
{
	size_t cap = 64 + t->n * ENTRY_MAX, n = 0;
	char *buf = malloc(cap);
	unsigned version = CONSUMERS_FORMAT;

	if (!buf)
		return ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].uncommitted)
			version = CONSUMERS_FORMAT_UNCOMMITTED;
	n += (size_t)snprintf(buf + n, cap - n, "{\n  \"version\": %u,\n  \"consumers\": {",
	                      version);
	for (size_t i = 0; i < t->n; i++) {
		const struct elog_consumer *c = &t->v[i];
		n += (size_t)snprintf(buf + n, cap - n, "%s\n    \"%s\": {\"%s\": %llu, \"%s\": %lld}",
		                      i ? "," : "", c->name, c->uncommitted ? "next" : "offset",
		                      (unsigned long long)(c->uncommitted ? c->next : c->offset),
		                      c->uncommitted ? "created_ms" : "committed_ms",
		                      (long long)c->committed_ms);
	}
	n += (size_t)snprintf(buf + n, cap - n, "%s}\n}\n", t->n ? "\n  " : "");
	*text = buf;
	*len = n;
	return 0;
}
