/*
 * elog-verify: check every file of a log and report each problem with its
 * file and byte position; list the segments with -l; repair what can be
 * repaired without losing data with --repair.  See elog-verify(1).
 *
 * The problems are this program's output, so they go to standard output,
 * one line each (or one JSON object each with --json); standard error has
 * only errors, the one-line summary when damage was found, and progress.
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
        "usage: elog-verify [-q] [--json] [--repair [--salvage]] dir\n"
        "       elog-verify -l [--json] dir\n"
        "       elog-verify -h | --help | --version\n"
        "\n"
        "  -q, --quiet                print nothing; only the exit status tells\n"
        "  --json                     problems (or with -l, segments) as JSON lines\n"
        "  --repair                   repair what can be repaired without loss\n"
        "  --salvage                  with --repair: keep every record that checks\n"
        "  -l, --list                 list the segments\n"
        "  -h, --help                 print this help and exit\n"
        "  --version                  print the version and exit\n";

/* Progress is shown only for a log at least this large, on a terminal. */
#define PROGRESS_MIN_BYTES (256ull << 20)

enum { OPT_JSON = 256, OPT_REPAIR, OPT_SALVAGE };

static const struct option long_options[] = {
	{ "list", no_argument, NULL, 'l' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "repair", no_argument, NULL, OPT_REPAIR },
	{ "salvage", no_argument, NULL, OPT_SALVAGE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, CLI_OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* What the command line asks for; the hooks' argument. */
struct opts {
	const char *dir;
	int list, json, quiet; /* -l, --json, -q */
	unsigned flags;        /* ELOG_VERIFY_REPAIR with --repair, ELOG_VERIFY_SALVAGE */
	int salvage;           /* --salvage */
};

/* A progress line is on stderr, to be cleared before the next line. */
static int progress_shown;

static const char *kind_name(int kind)
{
	switch (kind) {
	case ELOG_PROBLEM_WARNING:
		return "warning";
	case ELOG_PROBLEM_REPAIRED:
		return "repaired";
	case ELOG_PROBLEM_LOSS:
		return "loss";
	case ELOG_PROBLEM_UNREADABLE:
		return "unreadable";
	default:
		return "damage";
	}
}

static void clear_progress(void)
{
	if (progress_shown) {
		fputs("\r\033[K", stderr);
		progress_shown = 0;
	}
}

/* The words for each ELOG_HINT_*, appended to the library's text (and
 * followed by the problem's detail, when it has one). */
static const char *const hint_words[] = {
	[ELOG_HINT_NONE] = "",
	[ELOG_HINT_CUT] = " by elog-verify --repair; delete it once inspected",
	[ELOG_HINT_RETAIN] = ", and the next elog-retain or elog-compact deletes it and its index",
	[ELOG_HINT_FOREIGN] = " (move it out and run elog-verify again)",
	[ELOG_HINT_COMPACT_COPY] = "; the next elog-compact removes the copy",
	[ELOG_HINT_COMPACT] = "; the next elog-compact removes it",
	[ELOG_HINT_LOSS] = "; restore the segments from a backup, or run elog-verify --repair to "
	                   "record the loss",
	[ELOG_HINT_RESEAL] = ": run elog-verify --repair to write it again",
	[ELOG_HINT_SALVAGE] = "; elog-verify --repair --salvage",
	[ELOG_HINT_NO_SALVAGE] = "; elog-verify --repair --salvage cannot get past it: the file "
	                         "is shorter than a segment header",
};

/* p's text with the words of its hint and its detail, into buf. */
static const char *problem_text(const struct elog_problem *p, char *buf, size_t size)
{
	const char *words = "";

	if (p->hint > 0 && (size_t)p->hint < sizeof hint_words / sizeof hint_words[0])
		words = hint_words[p->hint];
	if (words[0] == '\0' && p->detail[0] == '\0')
		return p->text;
	snprintf(buf, size, "%s%s%s%s", p->text, words, p->detail[0] ? " " : "", p->detail);
	return buf;
}

static void on_problem(void *arg, const struct elog_problem *p)
{
	const struct opts *o = arg;
	char pos[48] = "", buf[2 * ELOG_MSG_MAX + 256];
	const char *text;

	if (o->quiet)
		return;
	text = problem_text(p, buf, sizeof buf);
	clear_progress();
	if (p->pos != ELOG_NOPOS)
		snprintf(pos, sizeof pos, "byte %" PRIu64 ": ", p->pos);
	if (o->list) {
		/* With -l, standard output holds the list alone. */
		cli_warn(o->dir, "%s: %s%s%s%s", p->file, pos,
		         p->kind == ELOG_PROBLEM_DAMAGE ? "" : kind_name(p->kind),
		         p->kind == ELOG_PROBLEM_DAMAGE ? "" : ": ", text);
		return;
	}
	if (o->json) {
		cli_puts("{\"file\":");
		cli_json_string(p->file, strlen(p->file));
		if (p->pos == ELOG_NOPOS)
			cli_puts(",\"byte\":null");
		else
			cli_printf(",\"byte\":%" PRIu64, p->pos);
		cli_printf(",\"kind\":\"%s\",\"problem\":", kind_name(p->kind));
		cli_json_string(text, strlen(text));
		cli_puts("}\n");
		return;
	}
	cli_printf("%s: %s%s%s%s\n", p->file, pos,
	           p->kind == ELOG_PROBLEM_DAMAGE ? "" : kind_name(p->kind),
	           p->kind == ELOG_PROBLEM_DAMAGE ? "" : ": ", text);
}

static void on_segment(void *arg, const struct elog_segment_info *s)
{
	const struct opts *o = arg;
	char name[ELOG_SEGMENT_NAME_MAX];

	if (!o->list)
		return;
	clear_progress();
	elog_segment_name(name, s->base);
	if (o->json) {
		cli_printf("{\"segment\":\"%s\",\"base\":%" PRIu64, name, s->base);
		if (s->records == 0)
			cli_puts(
			        ",\"first\":null,\"last\":null,\"oldest_ts\":null,\"newest_ts\":null");
		else
			cli_printf(",\"first\":%" PRIu64 ",\"last\":%" PRIu64
			           ",\"oldest_ts\":%" PRId64 ",\"newest_ts\":%" PRId64,
			           s->first, s->last, s->ts_min, s->ts_max);
		cli_printf(",\"records\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"active\":%s"
		           ",\"damaged\":%s,\"version\":%u,\"index_version\":%u}\n",
		           s->records, s->bytes, s->active ? "true" : "false",
		           s->damaged ? "true" : "false", s->version, s->index_version);
		return;
	}
	if (s->records == 0) {
		cli_printf("%s - - 0 %" PRIu64 " - -", name, s->bytes);
	} else {
		cli_printf("%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " ", name, s->first,
		           s->last, s->records, s->bytes);
		/* A time as elog-cat --since reads it back, even past 9999. */
		cli_put_time(s->ts_min);
		cli_putc(' ');
		cli_put_time(s->ts_max);
	}
	cli_printf(" v%u/%u %s%s\n", s->version, s->index_version, s->active ? "active" : "closed",
	           s->damaged ? " damaged" : "");
}

static void on_progress(void *arg, const struct elog_progress *p)
{
	const struct opts *o = arg;
	uint64_t done = p->done, total = p->total;

	if (total < PROGRESS_MIN_BYTES)
		return;
	/* Whatever is on standard output goes first, as on a shared tty. */
	cli_flush();
	fprintf(stderr, "\r%s: %s: checked %" PRIu64 " of %" PRIu64 " MiB (%d%%)", cli_prog, o->dir,
	        done >> 20, total >> 20, (int)(total ? done * 100 / total : 100));
	progress_shown = 1;
}

/* Each damaged range salvage moved aside, reported as a repair. */
static void on_salvage(void *arg, const struct elog_salvage_report *rep)
{
	char text[512];
	struct elog_problem p = { .kind = ELOG_PROBLEM_REPAIRED,
		                  .file = rep->segment,
		                  .pos = rep->pos,
		                  .text = text,
		                  .detail = "" };

	if (rep->lost)
		snprintf(text, sizeof text,
		         "salvaged: %" PRIu64 " damaged bytes moved to %s; "
		         "offsets %" PRIu64 "-%" PRIu64 " may be lost, and readers report "
		         "them as a gap",
		         rep->bytes, rep->aside, rep->first, rep->last);
	else
		snprintf(text, sizeof text,
		         "salvaged: %" PRIu64 " damaged bytes moved to %s; "
		         "no record lost",
		         rep->bytes, rep->aside);
	on_problem(arg, &p);
}

/* Records past the durable end that a writer that is gone left: no
 * damage, and not yet in the log, but the next writer publishes them
 * (elog(7), Recovery).  A warning, from elog-cat -L's summary. */
static void warn_pending(struct opts *o)
{
	char msg[ELOG_MSG_MAX], name[ELOG_SEGMENT_NAME_MAX], text[200];
	struct elog_summary s;

	if (elog_summary_read(o->dir, &s, msg) != 0)
		return; /* what it could not read, the check has reported */
	if (s.pending > 0) {
		elog_segment_name(name, s.active_base);
		struct elog_problem p = { .kind = ELOG_PROBLEM_WARNING,
			                  .file = name,
			                  .pos = ELOG_NOPOS,
			                  .text = cli_pending_text(&s, text, sizeof text),
			                  .detail = "" };
		on_problem(o, &p);
	}
	elog_summary_free(&s);
}

/* The command line, into o. */
static void parse_args(int argc, char *argv[], struct opts *o)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":lqh", long_options, NULL)) != -1) {
		switch (c) {
		case 'l':
			o->list = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_REPAIR:
			o->flags |= ELOG_VERIFY_REPAIR;
			break;
		case OPT_SALVAGE:
			o->salvage = 1;
			o->flags |= ELOG_VERIFY_SALVAGE;
			break;
		default:
			cli_common_option(c, argv, usage_text);
		}
	}
	o->dir = cli_dir_operand(argc - optind, argv + optind);
	if (o->list && (o->flags & ELOG_VERIFY_REPAIR))
		cli_usage_error("-l and --repair cannot be used together");
	if (o->list && o->quiet)
		cli_usage_error("-l and -q cannot be used together");
	if (o->salvage && !(o->flags & ELOG_VERIFY_REPAIR))
		cli_usage_error("--salvage goes with --repair");
}

/* The one-line summary on standard error when problems remain or records
 * were lost, naming the next command when there is one. */
static void warn_summary(const struct opts *o, const struct elog_verify_result *res)
{
	char problems[256] = "", lost[160] = "", next[PATH_MAX + 96] = "";

	if (res->remaining)
		snprintf(problems, sizeof problems,
		         "%" PRIu64 " problem%s found in %" PRIu64 " segment%s (%" PRIu64
		         " records)%s",
		         res->damage, res->damage == 1 ? "" : "s", res->segments,
		         res->segments == 1 ? "" : "s", res->records,
		         (o->flags & ELOG_VERIFY_REPAIR)
		                 ? (res->repaired ? "; some could not be repaired"
		                                  : "; none could be repaired")
		                 : "");
	if (res->losses)
		snprintf(lost, sizeof lost,
		         "%s%" PRIu64 " range%s of offsets lost to damage, "
		         "which readers report as gaps",
		         res->remaining ? "; " : "", res->losses, res->losses == 1 ? "" : "s");
	if (res->salvageable && !o->salvage)
		snprintf(next, sizeof next,
		         "; run elog-verify --repair --salvage %s to get "
		         "past the damage",
		         o->dir);
	cli_warn(o->dir, "%s%s%s", problems, lost, next);
}

int main(int argc, char *argv[])
{
	struct opts o = { 0 };
	struct elog_verify_result res;
	char msg[ELOG_MSG_MAX];

	cli_init(argv[0]);
	parse_args(argc, argv, &o);
	struct elog_verify_opts vo = { .flags = o.flags,
		                       .problem = on_problem,
		                       .segment = on_segment,
		                       .progress = isatty(STDERR_FILENO) ? on_progress : NULL,
		                       .arg = &o };
	struct elog_salvage_opts so = { .each = on_salvage, .arg = &o };
	int err = o.salvage ? elog_salvage(o.dir, &so, NULL, msg) : 0;
	if (err)
		cli_die_elog(o.dir, err, msg);
	err = elog_verify(o.dir, &vo, &res, msg);
	clear_progress();
	if (err)
		cli_die_elog(o.dir, err, msg);
	warn_pending(&o);
	cli_flush();
	/* A log that lost records is not clean, even once repaired. */
	if (res.remaining == 0 && res.losses == 0)
		cli_exit(CLI_EX_OK);
	if (!o.quiet)
		warn_summary(&o, &res);
	cli_exit(CLI_EX_NO);
}
