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

static const struct option long_options[] = { { "list", no_argument, NULL, 'l' },
	                                      { "quiet", no_argument, NULL, 'q' },
	                                      { "json", no_argument, NULL, OPT_JSON },
	                                      { "repair", no_argument, NULL, OPT_REPAIR },
	                                      { "salvage", no_argument, NULL, OPT_SALVAGE },
	                                      { "help", no_argument, NULL, 'h' },
	                                      { "version", no_argument, NULL, CLI_OPT_VERSION },
	                                      { NULL, 0, NULL, 0 } };

struct run {
	const char *dir;
	int list, json, quiet;
	unsigned flags; /* ELOG_VERIFY_REPAIR with --repair */
	int salvage;
	int progress_shown;
};

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

static void clear_progress(struct run *r)
{
	if (r->progress_shown) {
		fputs("\r\033[K", stderr);
		r->progress_shown = 0;
	}
}

static void on_problem(void *arg, const struct elog_problem *p)
{
	struct run *r = arg;
	char pos[48] = "";

	if (r->quiet)
		return;
	clear_progress(r);
	if (p->pos != ELOG_NOPOS)
		snprintf(pos, sizeof pos, "byte %" PRIu64 ": ", p->pos);
	if (r->list) {
		/* With -l, standard output holds the list alone. */
		cli_warn(r->dir, "%s: %s%s%s%s", p->file, pos,
		         p->kind == ELOG_PROBLEM_DAMAGE ? "" : kind_name(p->kind),
		         p->kind == ELOG_PROBLEM_DAMAGE ? "" : ": ", p->text);
		return;
	}
	if (r->json) {
		cli_puts("{\"file\":");
		cli_json_string(p->file, strlen(p->file));
		cli_puts(",\"byte\":");
		if (p->pos == ELOG_NOPOS)
			cli_puts("null");
		else
			cli_put_u64(p->pos);
		cli_puts(",\"kind\":\"");
		cli_puts(kind_name(p->kind));
		cli_puts("\",\"problem\":");
		cli_json_string(p->text, strlen(p->text));
		cli_puts("}\n");
		return;
	}
	cli_puts(p->file);
	cli_puts(": ");
	cli_puts(pos);
	if (p->kind != ELOG_PROBLEM_DAMAGE) {
		cli_puts(kind_name(p->kind));
		cli_puts(": ");
	}
	cli_puts(p->text);
	cli_putc('\n');
}

static void on_segment(void *arg, const struct elog_segment_info *s)
{
	struct run *r = arg;
	char name[ELOG_SEGMENT_NAME_MAX];

	if (!r->list)
		return;
	clear_progress(r);
	elog_segment_name(name, s->base);
	if (r->json) {
		cli_puts("{\"segment\":\"");
		cli_puts(name);
		cli_puts("\",\"base\":");
		cli_put_u64(s->base);
		const char *keys[] = { ",\"first\":", ",\"last\":", ",\"oldest_ts\":",
			               ",\"newest_ts\":" };
		for (int i = 0; i < 4; i++) {
			cli_puts(keys[i]);
			if (s->records == 0)
				cli_puts("null");
			else if (i == 0)
				cli_put_u64(s->first);
			else if (i == 1)
				cli_put_u64(s->last);
			else
				cli_put_i64(i == 2 ? s->ts_min : s->ts_max);
		}
		cli_puts(",\"records\":");
		cli_put_u64(s->records);
		cli_puts(",\"bytes\":");
		cli_put_u64(s->bytes);
		cli_puts(s->active ? ",\"active\":true" : ",\"active\":false");
		cli_puts(s->damaged ? ",\"damaged\":true}\n" : ",\"damaged\":false}\n");
		return;
	}
	cli_puts(name);
	if (s->records == 0) {
		cli_puts(" - - 0 ");
		cli_put_u64(s->bytes);
		cli_puts(" - -");
	} else {
		cli_putc(' ');
		cli_put_u64(s->first);
		cli_putc(' ');
		cli_put_u64(s->last);
		cli_putc(' ');
		cli_put_u64(s->records);
		cli_putc(' ');
		cli_put_u64(s->bytes);
		cli_putc(' ');
		cli_put_time(s->ts_min);
		cli_putc(' ');
		cli_put_time(s->ts_max);
	}
	cli_puts(s->active ? " active" : " closed");
	cli_puts(s->damaged ? " damaged\n" : "\n");
}

static void on_progress(void *arg, const struct elog_progress *p)
{
	struct run *r = arg;
	uint64_t done = p->done, total = p->total;

	if (total < PROGRESS_MIN_BYTES)
		return;
	/* Whatever is on standard output goes first, as on a shared tty. */
	cli_flush();
	fprintf(stderr, "\r%s: %s: checked %" PRIu64 " of %" PRIu64 " MiB (%d%%)", cli_prog, r->dir,
	        done >> 20, total >> 20, (int)(total ? done * 100 / total : 100));
	r->progress_shown = 1;
}

/* Each damaged range salvage moved aside, reported as a repair. */
static void on_salvage(void *arg, const struct elog_salvage_report *rep)
{
	char text[512];
	struct elog_problem p = { ELOG_PROBLEM_REPAIRED, rep->segment, rep->pos, text };

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

/* The command line, into r (the log directory in r->dir). */
static void parse_command_line(int argc, char *argv[], struct run *r)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":lqh", long_options, NULL)) != -1) {
		switch (c) {
		case 'l':
			r->list = 1;
			break;
		case 'q':
			r->quiet = 1;
			break;
		case OPT_JSON:
			r->json = 1;
			break;
		case OPT_REPAIR:
			r->flags |= ELOG_VERIFY_REPAIR;
			break;
		case OPT_SALVAGE:
			r->salvage = 1;
			r->flags |= ELOG_VERIFY_SALVAGE;
			break;
		default:
			cli_common_option(c, argv, usage_text);
		}
	}
	r->dir = cli_dir_operand(argc - optind, argv + optind);
	if (r->list && (r->flags & ELOG_VERIFY_REPAIR))
		cli_usage_error("-l and --repair cannot be used together");
	if (r->list && r->quiet)
		cli_usage_error("-l and -q cannot be used together");
	if (r->salvage && !(r->flags & ELOG_VERIFY_REPAIR))
		cli_usage_error("--salvage goes with --repair");
}

/* The one-line summary on standard error when problems remain or records
 * were lost, naming the next command when there is one. */
static void warn_summary(const struct run *r, const struct elog_verify_result *res)
{
	char problems[256] = "", lost[160] = "", next[PATH_MAX + 96] = "";

	if (res->remaining)
		snprintf(problems, sizeof problems,
		         "%" PRIu64 " problem%s found in %" PRIu64 " segment%s (%" PRIu64
		         " records)%s",
		         res->damage, res->damage == 1 ? "" : "s", res->segments,
		         res->segments == 1 ? "" : "s", res->records,
		         (r->flags & ELOG_VERIFY_REPAIR)
		                 ? (res->repaired ? "; some could not be repaired"
		                                  : "; none could be repaired")
		                 : "");
	if (res->losses)
		snprintf(lost, sizeof lost,
		         "%s%" PRIu64 " range%s of offsets lost to damage, "
		         "which readers report as gaps",
		         res->remaining ? "; " : "", res->losses, res->losses == 1 ? "" : "s");
	if (res->salvageable && !r->salvage)
		snprintf(next, sizeof next,
		         "; run elog-verify --repair --salvage %s to get "
		         "past the damage",
		         r->dir);
	cli_warn(r->dir, "%s%s%s", problems, lost, next);
}

int main(int argc, char *argv[])
{
	struct run r = { 0 };
	struct elog_verify_result res;
	char msg[ELOG_MSG_MAX];

	cli_init(argv[0]);
	parse_command_line(argc, argv, &r);
	struct elog_verify_opts vo = { .flags = r.flags,
		                       .problem = on_problem,
		                       .segment = on_segment,
		                       .progress = isatty(STDERR_FILENO) ? on_progress : NULL,
		                       .arg = &r };
	struct elog_salvage_opts so = { .each = on_salvage, .arg = &r };
	int err = r.salvage ? elog_salvage(r.dir, &so, NULL, msg) : 0;
	if (err)
		cli_die_elog(r.dir, err, msg);
	err = elog_verify(r.dir, &vo, &res, msg);
	clear_progress(&r);
	if (err)
		cli_die_elog(r.dir, err, msg);
	cli_flush();
	/* A log that lost records is not clean, even once repaired. */
	if (res.remaining == 0 && res.losses == 0)
		cli_exit(CLI_EX_OK);
	if (!r.quiet)
		warn_summary(&r, &res);
	cli_exit(CLI_EX_NO);
}
