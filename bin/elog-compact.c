/*
 * elog-compact: keep the newest record of every key in the closed segments
 * of a log, while the writer may be running.  See elog-compact(1).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

static const char usage_text[] =
        "usage: elog-compact [-nv] [--grace duration] [--min-lag duration] [--wait] dir\n"
        "       elog-compact -h | --help | --version\n"
        "\n"
        "  -n, --dry-run              report what would change, change nothing\n"
        "  -v, --verbose              report each segment rewritten\n"
        "  --grace duration           keep tombstones this long (default 24h)\n"
        "  --min-lag duration         leave records younger than this alone\n"
        "  --wait                     wait for another maintenance run to finish\n"
        "  -h, --help                 print this help and exit\n"
        "  --version                  print the version and exit\n";

enum { OPT_GRACE = 256, OPT_MIN_LAG, OPT_WAIT };

static const struct option long_options[] = {
	{ "grace", required_argument, NULL, OPT_GRACE },
	{ "min-lag", required_argument, NULL, OPT_MIN_LAG },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "wait", no_argument, NULL, OPT_WAIT },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, CLI_OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* One line per segment changed. */
static void print_segment(void *arg, const struct elog_segment_report *rep)
{
	const int *dry = arg;
	char name[ELOG_SEGMENT_NAME_MAX], into[ELOG_SEGMENT_NAME_MAX];

	elog_segment_name(name, rep->base);
	switch (rep->action) {
	case ELOG_SEG_REWRITTEN:
		cli_printf("%s %s records %" PRIu64 " -> %" PRIu64 " bytes %" PRIu64 " -> %" PRIu64
		           "\n",
		           *dry ? "would rewrite" : "rewrote", name, rep->records_before,
		           rep->records_after, rep->bytes_before, rep->bytes_after);
		break;
	case ELOG_SEG_EMPTIED:
		cli_printf("%s %s records %" PRIu64 " -> 0 bytes %" PRIu64 " -> 0\n",
		           *dry ? "would remove" : "removed", name, rep->records_before,
		           rep->bytes_before);
		break;
	default: /* ELOG_SEG_MERGED */
		elog_segment_name(into, rep->into);
		cli_printf("%s %s into %s\n", *dry ? "would merge" : "merged", name, into);
		break;
	}
}

/* What the command line asks for. */
struct opts {
	const char *dir;
	struct elog_compact_opts compact;
	int verbose; /* -v */
};

/* The command line, into o. */
static void parse_args(int argc, char *argv[], struct opts *o)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":nvh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_GRACE:
			o->compact.grace_ms = cli_arg_duration("--grace", optarg);
			if (o->compact.grace_ms == 0) /* the library's 0 is the default */
				o->compact.grace_ms = ELOG_COMPACT_GRACE_NONE;
			break;
		case OPT_MIN_LAG:
			o->compact.min_lag_ms = cli_arg_duration("--min-lag", optarg);
			break;
		case 'n':
			o->compact.dry_run = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case OPT_WAIT:
			o->compact.wait_ms = ELOG_WAIT_FOREVER;
			break;
		default:
			cli_common_option(c, argv, usage_text);
		}
	}
	o->dir = cli_dir_operand(argc - optind, argv + optind);
}

/* With -v or -n: the totals of the run. */
static void print_result(const struct elog_compact_result *res, int dry)
{
	cli_printf("%s segments %" PRIu64 " -> %" PRIu64 " records %" PRIu64 " -> %" PRIu64
	           " bytes %" PRIu64 " -> %" PRIu64 " keys %" PRIu64 " tombstones %" PRIu64
	           " kept %" PRIu64 " removed memory %" PRIu64 " bytes\n",
	           dry ? "would compact" : "compacted", res->segments_before, res->segments_after,
	           res->records_before, res->records_after, res->bytes_before, res->bytes_after,
	           res->keys, res->tombstones_kept, res->tombstones_removed, res->memory);
}

/* A log whose cleanup is delete: the one command that makes it compactable,
 * and when to run it, since a log whose keys only filter (a run, a sensor)
 * must stay as it is. */
static noreturn void die_not_compacted(const char *dir, const char *msg)
{
	cli_die(cli_status(ELOG_NOCOMPACT), dir,
	        "%s; if only the newest record of "
	        "each key matters, run: elog-retain --set cleanup=compact %s",
	        msg, dir);
}

int main(int argc, char *argv[])
{
	struct opts o = { 0 };
	struct elog_compact_result res;
	char msg[ELOG_MSG_MAX];

	cli_init(argv[0]);
	parse_args(argc, argv, &o);
	if (o.compact.dry_run || o.verbose) {
		o.compact.each = print_segment;
		o.compact.arg = &o.compact.dry_run;
	}
	int rc = elog_compact(o.dir, &o.compact, &res, msg);
	if (rc == ELOG_NOCOMPACT)
		die_not_compacted(o.dir, msg);
	if (rc)
		cli_die_elog(o.dir, rc, msg);
	if (o.compact.dry_run || o.verbose)
		print_result(&res, o.compact.dry_run);
	cli_exit(CLI_EX_OK);
}
