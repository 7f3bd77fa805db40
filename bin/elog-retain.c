/*
 * elog-retain: delete whole closed segments, oldest first, by age or by the
 * log's total size, while the writer may be running.  See elog-retain(1).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char usage_text[] =
	"usage: elog-retain [-nv] [--max-age duration] [--max-bytes size] [--wait] dir\n"
	"       elog-retain -h | --help | --version\n"
	"\n"
	"  -n, --dry-run              print what would go, remove nothing\n"
	"  -v, --verbose              print each segment removed\n"
	"  --max-age duration         remove segments whose newest record is older\n"
	"  --max-bytes size           remove the oldest segments while larger\n"
	"  --wait                     wait for another maintenance run to finish\n"
	"  -h, --help                 print this help and exit\n"
	"  --version                  print the version and exit\n";

enum { OPT_MAX_AGE = 256, OPT_MAX_BYTES, OPT_WAIT, OPT_VERSION };

static const struct option long_options[] = {
	{ "max-age",   required_argument, NULL, OPT_MAX_AGE },
	{ "max-bytes", required_argument, NULL, OPT_MAX_BYTES },
	{ "dry-run",   no_argument,       NULL, 'n' },
	{ "verbose",   no_argument,       NULL, 'v' },
	{ "wait",      no_argument,       NULL, OPT_WAIT },
	{ "help",      no_argument,       NULL, 'h' },
	{ "version",   no_argument,       NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

static noreturn void usage(void)
{
	cli_puts(usage_text);
	cli_exit(EX_OK);
}

/* One line per segment: what happened, its file, its offset range, its
 * bytes and its newest timestamp. */
static void print_segment(const struct elog_segment_report *rep, void *arg)
{
	const char *verb = arg;
	char when[32], name[32];

	/* "-" for a segment with no record (newest_ms is INT64_MIN). */
	if (cli_format_time(rep->newest_ms, when) < 0)
		strcpy(when, "-");
	snprintf(name, sizeof name, "%020llu.log", (unsigned long long)rep->base);
	cli_puts(verb);
	cli_putc(' ');
	cli_puts(name);
	cli_puts(" offsets ");
	cli_put_u64(rep->base);
	cli_putc('-');
	cli_put_u64(rep->end - 1);
	cli_puts(" bytes ");
	cli_put_u64(rep->bytes_before);
	cli_puts(" newest ");
	cli_puts(when);
	cli_putc('\n');
}

int main(int argc, char *argv[])
{
	struct elog_retain_opts o = { 0 };
	struct elog_retain_result res;
	char msg[ELOG_MAINT_MSG_MAX];
	int verbose = 0, c;

	cli_init(argv[0]);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":nvh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_MAX_AGE:
			o.max_age_ms = cli_arg_limit_duration("--max-age", optarg);
			break;
		case OPT_MAX_BYTES:
			o.max_bytes = cli_arg_limit_size("--max-bytes", optarg);
			break;
		case 'n':
			o.dry_run = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case OPT_WAIT:
			o.wait = 1;
			break;
		case 'h':
			usage();
		case OPT_VERSION:
			cli_version();
		default:
			cli_bad_option(c, argv);
		}
	}
	argc -= optind;
	argv += optind;
	const char *dir = cli_dir_operand(argc, argv);

	if (o.dry_run || verbose) {
		o.each = print_segment;
		o.arg = o.dry_run ? "would remove" : "removed";
	}
	int rc = elog_retain(dir, &o, &res, msg);
	if (rc)
		cli_die_elog(dir, rc, msg);
	cli_exit(EX_OK);
}
