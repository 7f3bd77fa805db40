/*
 * elog-compact: keep the newest record of every key in the closed segments
 * of a log, while the writer may be running.  See elog-compact(1).
 */
#include <getopt.h>
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

static const struct option long_options[] = { { "grace", required_argument, NULL, OPT_GRACE },
	                                      { "min-lag", required_argument, NULL, OPT_MIN_LAG },
	                                      { "dry-run", no_argument, NULL, 'n' },
	                                      { "verbose", no_argument, NULL, 'v' },
	                                      { "wait", no_argument, NULL, OPT_WAIT },
	                                      { "help", no_argument, NULL, 'h' },
	                                      { "version", no_argument, NULL, CLI_OPT_VERSION },
	                                      { NULL, 0, NULL, 0 } };

static void put_name(uint64_t base)
{
	char name[ELOG_SEGMENT_NAME_MAX];

	elog_segment_name(name, base);
	cli_puts(name);
}

static void put_change(const char *what, uint64_t before, uint64_t after)
{
	cli_putc(' ');
	cli_puts(what);
	cli_putc(' ');
	cli_put_u64(before);
	cli_puts(" -> ");
	cli_put_u64(after);
}

/* One line per segment changed. */
static void print_segment(void *arg, const struct elog_segment_report *rep)
{
	const int *dry = arg;

	switch (rep->action) {
	case ELOG_SEG_REWRITTEN:
		cli_puts(*dry ? "would rewrite " : "rewrote ");
		put_name(rep->base);
		put_change("records", rep->records_before, rep->records_after);
		put_change("bytes", rep->bytes_before, rep->bytes_after);
		break;
	case ELOG_SEG_EMPTIED:
		cli_puts(*dry ? "would remove " : "removed ");
		put_name(rep->base);
		put_change("records", rep->records_before, 0);
		put_change("bytes", rep->bytes_before, 0);
		break;
	default: /* ELOG_SEG_MERGED */
		cli_puts(*dry ? "would merge " : "merged ");
		put_name(rep->base);
		cli_puts(" into ");
		put_name(rep->into);
		break;
	}
	cli_putc('\n');
}

/* The command line, into o and *verbose; the log directory. */
static const char *parse_command_line(int argc, char *argv[], struct elog_compact_opts *o,
                                      int *verbose)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":nvh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_GRACE:
			o->grace_ms = cli_arg_duration("--grace", optarg);
			if (o->grace_ms == 0) /* the library's 0 is the default */
				o->grace_ms = ELOG_COMPACT_GRACE_NONE;
			break;
		case OPT_MIN_LAG:
			o->min_lag_ms = cli_arg_duration("--min-lag", optarg);
			break;
		case 'n':
			o->dry_run = 1;
			break;
		case 'v':
			*verbose = 1;
			break;
		case OPT_WAIT:
			o->wait_ms = ELOG_WAIT_FOREVER;
			break;
		default:
			cli_common_option(c, argv, usage_text);
		}
	}
	return cli_dir_operand(argc - optind, argv + optind);
}

/* With -v or -n: the totals of the run. */
static void print_result(const struct elog_compact_result *res, int dry)
{
	cli_puts(dry ? "would compact" : "compacted");
	put_change("segments", res->segments_before, res->segments_after);
	put_change("records", res->records_before, res->records_after);
	put_change("bytes", res->bytes_before, res->bytes_after);
	cli_puts(" keys ");
	cli_put_u64(res->keys);
	cli_puts(" tombstones ");
	cli_put_u64(res->tombstones_kept);
	cli_puts(" kept ");
	cli_put_u64(res->tombstones_removed);
	cli_puts(" removed memory ");
	cli_put_u64(res->memory);
	cli_puts(" bytes\n");
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
	struct elog_compact_opts o = { 0 };
	struct elog_compact_result res;
	char msg[ELOG_MSG_MAX];
	int verbose = 0;

	cli_init(argv[0]);
	const char *dir = parse_command_line(argc, argv, &o, &verbose);
	if (o.dry_run || verbose) {
		o.each = print_segment;
		o.arg = &o.dry_run;
	}
	int rc = elog_compact(dir, &o, &res, msg);
	if (rc == ELOG_NOCOMPACT)
		die_not_compacted(dir, msg);
	if (rc)
		cli_die_elog(dir, rc, msg);
	if (o.dry_run || verbose)
		print_result(&res, o.dry_run);
	cli_exit(CLI_EX_OK);
}
