/*
 * elog-retain: delete whole closed segments, oldest first, by age or by the
 * log's total size, while the writer may be running.  See elog-retain(1).
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char usage_text[] =
	"usage: elog-retain [-nv] [--max-age duration] [--max-bytes size] [--wait] dir\n"
	"       elog-retain -h | --help | --version\n";

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

/* With -v or -n: the first closed segment kept under the age limit, and
 * why, so that one can tell what holds retention back. */
static void print_kept(const struct elog_retain_result *res)
{
	char newest[32], judged[32], name[32];

	if (res->kept_why == ELOG_KEPT_NONE)
		return;
	if (cli_format_time(res->kept_newest_ms, newest) < 0)
		strcpy(newest, "-");
	snprintf(name, sizeof name, "%020llu.log", (unsigned long long)res->kept_base);
	cli_puts("kept ");
	cli_puts(name);
	cli_puts(" offsets ");
	cli_put_u64(res->kept_base);
	cli_putc('-');
	cli_put_u64(res->kept_end - 1);
	cli_puts(" newest ");
	cli_puts(newest);
	if (res->kept_why == ELOG_KEPT_YOUNG) {
		cli_puts(": younger than the age limit\n");
		return;
	}
	cli_puts(": its newest timestamp is not plausible (in the future or before 2000)");
	if (res->kept_judged_ms == INT64_MIN ||
	    cli_format_time(res->kept_judged_ms, judged) < 0) {
		cli_puts(" and no later closed segment has one that is\n");
		return;
	}
	cli_puts("; judged by a later segment's ");
	cli_puts(judged);
	cli_puts(", younger than the age limit\n");
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
			o.max_age_ms = cli_arg_duration("--max-age", optarg);
			if (o.max_age_ms == 0)
				cli_usage_error("--max-age: must be more than 0");
			break;
		case OPT_MAX_BYTES:
			o.max_bytes = cli_arg_size("--max-bytes", optarg);
			if (o.max_bytes == 0)
				cli_usage_error("--max-bytes: must be more than 0");
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
	if (o.dry_run || verbose)
		print_kept(&res);
	cli_exit(EX_OK);
}
