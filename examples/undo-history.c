/*
 * undo-history: a text document whose every edit is a record in a log, so
 * that the document and its undo history survive a crash.
 *
 * usage: undo-history dir [command ...]
 *
 * The document is a list of lines.  Commands come from the arguments or,
 * when there are none, from standard input, one per line:
 *
 *   a TEXT       append a line
 *   i N TEXT     insert a line before line N (1 to lines + 1)
 *   r N TEXT     replace line N
 *   d N          delete line N
 *   u [N]        undo the last N edits still in effect (default 1)
 *   p            print the document
 *
 * Each edit is appended to the log in dir and made durable (elog_sync)
 * before "ok OFFSET" is printed: a printed "ok" is a promise that the edit
 * survives a crash.  On start the document is rebuilt by reading the log
 * from the beginning.
 *
 * The design a desktop editor would use: an undo is an edit too.  "u 2"
 * appends a record saying "undo 2"; nothing is ever cut from the log.  So an
 * undo is as durable as the edit it undoes, the log stays the full history
 * of the session (what was typed, and what was taken back), and a crash
 * during an undo leaves either the undo or nothing, never half of it.
 * Cutting the log back to an earlier offset instead would need a writer
 * that rewrites its own tail, which an append-only log refuses on purpose.
 *
 * Every record carries what is needed to reverse it (a delete keeps the
 * deleted line, a replace the old text), so replaying never needs an
 * earlier copy of the document: rebuilding keeps a stack of the edits in
 * effect, applies each edit and pushes it, and for "undo N" pops N edits
 * and reverses each.  An edit made after an undo is pushed as usual; the
 * undone edits are gone from the stack (there is no redo).
 *
 * The log is a history, not a store of state: every record counts, and
 * none has a key, so compaction has nothing to do with it.  It is created
 * with the cleanup policy delete (the default, said here on purpose), so
 * that elog-compact refuses it; an existing log whose policy is compact is
 * refused at open, as a document this program did not make.
 *
 * Records have schema id 1 and a value of tab-separated fields:
 *
 *   a<TAB>text   i<TAB>n<TAB>text   r<TAB>n<TAB>text<TAB>old
 *   d<TAB>n<TAB>old                 u<TAB>n
 *
 * so `elog-cat -v dir` shows the history.  Text may hold any byte but tab
 * and newline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elog.h"

#define SCHEMA 1

static const char *prog = "undo-history";

struct edit {
	char op;    /* 'a', 'i', 'r', 'd' or 'u' */
	size_t n;   /* line number (1-based), or the count of an undo */
	char *text; /* new text: a, i, r */
	char *old;  /* text it replaced or deleted: r, d */
};

struct lines {
	char **v;
	size_t n, cap;
};

struct stack {
	struct edit *v;
	size_t n, cap;
};

static struct lines doc;
static struct stack done; /* the edits in effect, oldest first */

static void die(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, why);
	exit(1);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = *cap ? *cap * 2 : 16;
	if (*cap < need)
		*cap = need;
	if ((p = realloc(p, *cap * size)) == NULL)
		die("memory", strerror(errno));
	return p;
}

static char *dup(const char *s, size_t len)
{
	char *d = malloc(len + 1);

	if (d == NULL)
		die("memory", strerror(errno));
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

/*
 * The document.
 */

static void insert_line(size_t at, const char *text)
{
	doc.v = grow(doc.v, &doc.cap, doc.n + 1, sizeof *doc.v);
	memmove(doc.v + at + 1, doc.v + at, (doc.n - at) * sizeof *doc.v);
	doc.v[at] = dup(text, strlen(text));
	doc.n++;
}

static void remove_line(size_t at)
{
	free(doc.v[at]);
	memmove(doc.v + at, doc.v + at + 1, (doc.n - at - 1) * sizeof *doc.v);
	doc.n--;
}

static void set_line(size_t at, const char *text)
{
	free(doc.v[at]);
	doc.v[at] = dup(text, strlen(text));
}

/* Apply an edit that has been checked against the document. */
static void apply(const struct edit *e)
{
	switch (e->op) {
	case 'a':
		insert_line(doc.n, e->text);
		break;
	case 'i':
		insert_line(e->n - 1, e->text);
		break;
	case 'r':
		set_line(e->n - 1, e->text);
		break;
	case 'd':
		remove_line(e->n - 1);
		break;
	}
}

static void reverse(const struct edit *e)
{
	switch (e->op) {
	case 'a':
		remove_line(doc.n - 1);
		break;
	case 'i':
		remove_line(e->n - 1);
		break;
	case 'r':
		set_line(e->n - 1, e->old);
		break;
	case 'd':
		insert_line(e->n - 1, e->old);
		break;
	}
}

/* Whether edit e fits the document as it is now: its line exists. */
static int fits(const struct edit *e)
{
	switch (e->op) {
	case 'i':
		return e->n >= 1 && e->n <= doc.n + 1;
	case 'r':
	case 'd':
		return e->n >= 1 && e->n <= doc.n;
	default:
		return 1;
	}
}

/* Whether c is one of the characters of set (and not the NUL byte). */
static int is(char c, const char *set)
{
	return c != '\0' && strchr(set, c) != NULL;
}

/* Do edit e (which takes ownership of its strings), or the undo it is;
 * returns how many edits an undo reversed. */
static size_t perform(struct edit *e)
{
	size_t k = 0;

	if (e->op == 'u') {
		for (; k < e->n && done.n > 0; k++) {
			struct edit *last = &done.v[--done.n];

			reverse(last);
			free(last->text);
			free(last->old);
		}
		return k;
	}
	apply(e);
	done.v = grow(done.v, &done.cap, done.n + 1, sizeof *done.v);
	done.v[done.n++] = *e;
	return 0;
}

/*
 * Records: the tab-separated value described at the top.
 */

/* The next field of value (len bytes from *p), as a new string. */
static char *field(const char **p, const char *end)
{
	const char *tab = memchr(*p, '\t', (size_t)(end - *p));
	const char *stop = tab ? tab : end;
	char *f = dup(*p, (size_t)(stop - *p));

	*p = tab ? tab + 1 : end;
	return f;
}

static int parse_count(const char *s, size_t *n)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v > 1000000000)
		return -1;
	*n = (size_t)v;
	return 0;
}

/* Read a record's value into *e; -1 when it is not one of ours. */
static int decode(const struct elog_record *rec, struct edit *e)
{
	const char *p = rec->value, *end = p + rec->value_len;
	char *op, *num = NULL;
	int bad = 0;

	memset(e, 0, sizeof *e);
	if (rec->schema != SCHEMA)
		return -1;
	op = field(&p, end);
	e->op = strlen(op) == 1 ? op[0] : '?';
	free(op);
	if (is(e->op, "irdu")) {
		num = field(&p, end);
		bad = parse_count(num, &e->n) != 0;
		free(num);
	}
	if (is(e->op, "air"))
		e->text = field(&p, end);
	if (is(e->op, "rd"))
		e->old = field(&p, end);
	if (bad || p != end || !is(e->op, "airdu")) {
		free(e->text);
		free(e->old);
		return -1;
	}
	return 0;
}

static char *encode(const struct edit *e, size_t *len)
{
	const char *t = e->text ? e->text : "", *o = e->old ? e->old : "";
	size_t cap = strlen(t) + strlen(o) + 48;
	char *v = malloc(cap);
	int n;

	if (v == NULL)
		die("memory", strerror(errno));
	switch (e->op) {
	case 'a':
		n = snprintf(v, cap, "a\t%s", t);
		break;
	case 'i':
		n = snprintf(v, cap, "i\t%zu\t%s", e->n, t);
		break;
	case 'r':
		n = snprintf(v, cap, "r\t%zu\t%s\t%s", e->n, t, o);
		break;
	case 'd':
		n = snprintf(v, cap, "d\t%zu\t%s", e->n, o);
		break;
	default:
		n = snprintf(v, cap, "u\t%zu", e->n);
		break;
	}
	*len = (size_t)n;
	return v;
}

/* Rebuild the document from every durable record of the log. */
static void rebuild(const char *dir)
{
	elog_reader *r = NULL;
	struct elog_record rec;
	struct edit e;
	char where[64];
	int rc;

	if ((rc = elog_reader_open(&r, dir)) != 0)
		die(dir, r ? elog_reader_errmsg(r) : elog_strerror(rc));
	while ((rc = elog_reader_next(r, &rec)) == 0) {
		snprintf(where, sizeof where, "%s: offset %llu", dir,
		         (unsigned long long)rec.offset);
		if (decode(&rec, &e) != 0)
			die(where, "not an edit of undo-history");
		if (!fits(&e) || (e.old && strcmp(e.old, doc.v[e.n - 1]) != 0))
			die(where, "the edit does not fit the document");
		perform(&e);
	}
	if (rc != ELOG_END)
		die(dir, elog_reader_errmsg(r));
	elog_reader_close(r);
}

/*
 * Commands.
 */

/* Parse a command line into *e; returns 0, 'p' for print, or -1 with a
 * message in *why. */
static int parse_command(char *line, struct edit *e, const char **why)
{
	char op = line[0], *rest, *text = NULL, *num;
	size_t n = 1;

	memset(e, 0, sizeof *e);
	*why = "unknown command (a, i, r, d, u, p)";
	if (op == '\0' || (line[1] != '\0' && line[1] != ' '))
		return -1;
	rest = line[1] ? line + 2 : line + 1;
	if (op == 'p' && *rest == '\0')
		return 'p';
	if (!is(op, "airdu"))
		return -1;
	if (op != 'a' && !(op == 'u' && *rest == '\0')) {
		num = rest;
		rest += strcspn(rest, " ");
		if (*rest == ' ')
			*rest++ = '\0';
		*why = "a line number or count is needed";
		if (parse_count(num, &n) != 0)
			return -1;
	}
	if (op == 'a' || op == 'i' || op == 'r')
		text = rest;
	else if (*rest != '\0')
		return *why = "unexpected text after the command", -1;
	if (text && strchr(text, '\t'))
		return *why = "text may not contain a tab", -1;
	e->op = op;
	e->n = n;
	if (!fits(e))
		return *why = "no such line", -1;
	if (text)
		e->text = dup(text, strlen(text));
	if (op == 'r' || op == 'd')
		e->old = dup(doc.v[n - 1], strlen(doc.v[n - 1]));
	return 0;
}

/* Run one command line.  An edit is appended and made durable, then done
 * to the document in memory, then acknowledged. */
static void command(elog *w, char *line)
{
	struct elog_record rec = { .ts_ms = ELOG_TS_NOW, .schema = SCHEMA };
	struct edit e;
	const char *why;
	uint64_t off;
	size_t k, i;
	int rc;
	char *v;

	rc = parse_command(line, &e, &why);
	if (rc == 'p') {
		for (i = 0; i < doc.n; i++)
			printf("%s\n", doc.v[i]);
		fflush(stdout);
		return;
	}
	if (rc != 0) {
		fprintf(stderr, "%s: '%s': %s\n", prog, line, why);
		return;
	}
	v = encode(&e, &rec.value_len);
	rec.value = v;
	if ((rc = elog_append(w, &rec, &off)) != 0 || (rc = elog_sync(w)) != 0)
		die("append", elog_errmsg(w));
	free(v);
	k = perform(&e);
	if (e.op == 'u')
		printf("ok %llu undid %zu\n", (unsigned long long)off, k);
	else
		printf("ok %llu\n", (unsigned long long)off);
	fflush(stdout);
}

int main(int argc, char *argv[])
{
	struct elog_options opt = { .create = 1, .exclusive = 1, .cleanup = ELOG_CLEANUP_DELETE };
	elog *w = NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc, i;

	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: %s dir [command ...]\n", prog);
		return 2;
	}
	/* The writer first: it recovers the log after a crash, and, opened
	 * exclusive, it keeps a second editor of the same document out (its
	 * open fails with ELOG_LOCKED, naming this process). */
	if ((rc = elog_open(&w, argv[1], &opt)) != 0)
		die(argv[1], w ? elog_errmsg(w) : elog_strerror(rc));
	rebuild(argv[1]);

	if (argc > 2) {
		for (i = 2; i < argc; i++)
			command(w, argv[i]);
	} else {
		while ((len = getline(&line, &cap, stdin)) != -1) {
			if (len > 0 && line[len - 1] == '\n')
				line[len - 1] = '\0';
			command(w, line);
		}
		free(line);
	}
	if ((rc = elog_close(w)) != 0)
		die(argv[1], elog_strerror(rc));
	return 0;
}
