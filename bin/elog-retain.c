/*
 * elog-retain: delete whole closed segments, oldest first, by age or by the
 * log's total size, while the writer may be running.  See elog-retain(1).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char usage_text[] =
        "usage: elog-retain [-nv] [--max-age duration] [--max-bytes size] [--wait] dir\n"
        "       elog-retain [--wait] --set key=value ... dir\n"
        "       elog-retain -h | --help | --version\n"
        "\n"
        "  -n, --dry-run              print what would go, remove nothing\n"
        "  -v, --verbose              print each segment removed and each loss\n"
        "  --max-age duration         remove segments whose newest record is older\n"
        "  --max-bytes size           remove the oldest segments while larger\n"
        "  --wait                     wait for another maintenance run to finish\n"
        "  --set key=value            change a setting of the log (see the man page)\n"
        "  -h, --help                 print this help and exit\n"
        "  --version                  print the version and exit\n";

enum { OPT_MAX_AGE = 256, OPT_MAX_BYTES, OPT_WAIT, OPT_SET };

static const struct option long_options[] = {
	{ "max-age", required_argument, NULL, OPT_MAX_AGE },
	{ "max-bytes", required_argument, NULL, OPT_MAX_BYTES },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "wait", no_argument, NULL, OPT_WAIT },
	{ "set", required_argument, NULL, OPT_SET },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, CLI_OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* One line per segment: what happened, its file, its offset range, its
 * bytes and its newest timestamp. */
static void print_segment(void *arg, const struct elog_segment_report *rep)
{
	const char *verb = arg;
	char when[32], name[ELOG_SEGMENT_NAME_MAX];

	/* "-" for a segment with no record (newest_ms is INT64_MIN). */
	if (cli_format_time(rep->newest_ms, when) < 0)
		strcpy(when, "-");
	elog_segment_name(name, rep->base);
	cli_printf("%s %s offsets %" PRIu64 "-%" PRIu64 " bytes %" PRIu64 " newest %s%s\n", verb,
	           name, rep->base, rep->end - 1, rep->bytes_before, when,
	           rep->damaged ? " damaged" : "");
}

/* --set KEY=VALUE: a setting of the log, named and written as the
 * elog-append option that gives it at creation; "none" turns a retention
 * limit or compression off.  Each key's parser reads v into o; opt is
 * "--set KEY", for its messages. */
typedef void set_fn(struct elog_settings *o, const char *opt, const char *v, int none);

static void set_retain_age(struct elog_settings *o, const char *opt, const char *v, int none)
{
	o->retain_ms = none ? 0 : cli_arg_duration(opt, v);
}

static void set_retain_bytes(struct elog_settings *o, const char *opt, const char *v, int none)
{
	o->retain_bytes = none ? 0 : cli_arg_size(opt, v);
}

static void set_segment_bytes(struct elog_settings *o, const char *opt, const char *v, int none)
{
	(void)none;
	o->segment_bytes = cli_arg_size(opt, v);
}

static void set_index_interval(struct elog_settings *o, const char *opt, const char *v, int none)
{
	(void)none;
	o->index_interval = (uint32_t)cli_arg_u64(opt, v, 1, UINT32_MAX);
}

static void set_compress(struct elog_settings *o, const char *opt, const char *v, int none)
{
	o->compression = ELOG_COMPRESS_NONE;
	o->compression_level = 0;
	if (strncmp(v, "zstd", 4) == 0 && (v[4] == '\0' || v[4] == ':')) {
		o->compression = ELOG_COMPRESS_ZSTD;
		if (v[4] == ':')
			o->compression_level = (int)cli_arg_u64(opt, v + 5, 1, 19);
	} else if (!none) {
		cli_usage_error("%s: 'none' or 'zstd[:level]', not '%s'", opt, v);
	}
}

static void set_dictionary(struct elog_settings *o, const char *opt, const char *v, int none)
{
	if (strcmp(v, "auto") != 0 && !none)
		cli_usage_error("%s: 'auto' or 'none', not '%s'", opt, v);
	o->no_dictionary = none;
}

static void set_retain_consumers(struct elog_settings *o, const char *opt, const char *v, int none)
{
	(void)none;
	if (strcmp(v, "report") == 0)
		o->retain_consumers = ELOG_RETAIN_CONSUMERS_REPORT;
	else if (strcmp(v, "protect") == 0)
		o->retain_consumers = ELOG_RETAIN_CONSUMERS_PROTECT;
	else
		cli_usage_error("%s: 'report' or 'protect', not '%s'", opt, v);
}

static void set_cleanup(struct elog_settings *o, const char *opt, const char *v, int none)
{
	(void)none;
	o->cleanup = cli_arg_cleanup(opt, v);
}

/* The keys --set knows, in the order of elog-retain(1); an unknown key's
 * message lists them from here. */
static const struct set_key {
	const char *name;
	unsigned field; /* ELOG_SET_* */
	set_fn *parse;
} set_keys[] = {
	{ "retain-age", ELOG_SET_RETAIN_MS, set_retain_age },
	{ "retain-bytes", ELOG_SET_RETAIN_BYTES, set_retain_bytes },
	{ "segment-bytes", ELOG_SET_SEGMENT_BYTES, set_segment_bytes },
	{ "index-interval", ELOG_SET_INDEX_INTERVAL, set_index_interval },
	{ "compress", ELOG_SET_COMPRESSION, set_compress },
	{ "dictionary", ELOG_SET_DICTIONARY, set_dictionary },
	{ "retain-consumers", ELOG_SET_RETAIN_CONSUMERS, set_retain_consumers },
	{ "cleanup", ELOG_SET_CLEANUP, set_cleanup },
};
#define NSET_KEYS (sizeof set_keys / sizeof set_keys[0])

static void parse_set(struct elog_settings *o, unsigned *fields, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		cli_usage_error("--set: expected key=value, not '%s'", arg);
	size_t kn = (size_t)(eq - arg);
	char opt[64], known[256] = "";

	for (size_t i = 0; i < NSET_KEYS; i++) {
		const struct set_key *k = &set_keys[i];
		if (strlen(k->name) == kn && strncmp(arg, k->name, kn) == 0) {
			snprintf(opt, sizeof opt, "--set %s", k->name);
			k->parse(o, opt, eq + 1, strcmp(eq + 1, "none") == 0);
			*fields |= k->field;
			return;
		}
	}
	for (size_t i = 0, n = 0; i < NSET_KEYS && n < sizeof known; i++)
		n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "",
		                      set_keys[i].name);
	cli_usage_error("--set: unknown setting '%.*s' (one of %s)", (int)kn, arg, known);
}

/* With -v or -n: the first closed segment kept under the age limit, and
 * why, so that one can tell what holds retention back. */
static void print_kept(const struct elog_retain_result *res)
{
	char newest[32], judged[32], name[ELOG_SEGMENT_NAME_MAX];

	if (res->kept_why == ELOG_KEPT_NONE)
		return;
	if (cli_format_time(res->kept_newest_ms, newest) < 0)
		strcpy(newest, "-");
	elog_segment_name(name, res->kept_base);
	cli_printf("kept %s offsets %" PRIu64 "-%" PRIu64 " newest %s", name, res->kept_base,
	           res->kept_end - 1, newest);
	if (res->kept_why == ELOG_KEPT_CONSUMER) {
		cli_printf(": consumer %s has not read it (retain-consumers=protect)\n",
		           res->kept_consumer);
		return;
	}
	if (res->kept_why == ELOG_KEPT_DAMAGED) {
		cli_puts(": damaged, and no later closed segment tells its age\n");
		return;
	}
	if (res->kept_why == ELOG_KEPT_YOUNG) {
		cli_puts(": younger than the age limit\n");
		return;
	}
	cli_puts(
	        res->kept_damaged
	                ? ": damaged, so its age is not known"
	                : ": its newest timestamp is not plausible (in the future or before 2000)");
	if (res->kept_judged_ms == INT64_MIN || cli_format_time(res->kept_judged_ms, judged) < 0) {
		cli_puts(" and no later closed segment has one that is\n");
		return;
	}
	cli_printf("; judged by a later segment's %s, younger than the age limit\n", judged);
}

/* What the command line asks for; the callbacks' argument. */
struct opts {
	const char *dir;
	struct elog_retain_opts retain;
	int verbose;              /* -v */
	struct elog_settings set; /* --set: the settings to change */
	unsigned fields;          /* ... and which (ELOG_SET_*); 0 without */
};

/* With -v or -n, one line per segment (print_segment()). */
static void each_segment(void *arg, const struct elog_segment_report *rep)
{
	const struct opts *o = arg;
	if (o->verbose || o->retain.dry_run)
		print_segment((void *)(o->retain.dry_run ? "would remove" : "removed"), rep);
}

/* A consumer that loses records it has not read: always a line on stderr
 * (a cron job mails it), which names the command that acknowledges the
 * loss; with -v or -n also a line on stdout, after the segments'. */
static void each_loss(void *arg, const struct elog_consumer_loss *l)
{
	const struct opts *o = arg;
	char how[160] = "";

	if (o->verbose || o->retain.dry_run) {
		cli_printf("%s %s offsets %" PRIu64 "-%" PRIu64 " records %" PRIu64 "%s\n",
		           o->retain.dry_run ? "would lose" : "lost", l->name, l->first, l->last,
		           l->records, l->forced ? " by the size limit" : "");
	}
	if (o->retain.dry_run)
		return;
	/* What is on stdout goes first, so the two read in order. */
	cli_flush();
	if (l->forced)
		snprintf(how, sizeof how,
		         " to the size limit, although "
		         "retain-consumers=protect");
	if (l->recorded)
		cli_warn(o->dir,
		         "consumer %s lost %llu unread records (offsets "
		         "%llu-%llu)%s; run: elog-commit --ack-loss %s %s",
		         l->name, (unsigned long long)l->records, (unsigned long long)l->first,
		         (unsigned long long)l->last, how, o->dir, l->name);
	else
		cli_warn(o->dir,
		         "consumer %s lost %llu unread records (offsets "
		         "%llu-%llu)%s; the loss could not be recorded for "
		         "elog-commit -l",
		         l->name, (unsigned long long)l->records, (unsigned long long)l->first,
		         (unsigned long long)l->last, how);
}

/* The command line, into o. */
static void parse_args(int argc, char *argv[], struct opts *o)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":nvh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_MAX_AGE:
			o->retain.max_age_ms = cli_arg_limit_duration("--max-age", optarg);
			break;
		case OPT_MAX_BYTES:
			o->retain.max_bytes = cli_arg_limit_size("--max-bytes", optarg);
			break;
		case 'n':
			o->retain.dry_run = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case OPT_WAIT:
			o->retain.wait_ms = ELOG_WAIT_FOREVER;
			break;
		case OPT_SET:
			parse_set(&o->set, &o->fields, optarg);
			break;
		default:
			cli_common_option(c, argv, usage_text);
		}
	}
	o->dir = cli_dir_operand(argc - optind, argv + optind);
	/* Changing the settings is all a --set run does. */
	if (o->fields && (o->retain.max_age_ms || o->retain.max_bytes || o->retain.dry_run))
		cli_usage_error("--set: cannot be combined with --max-age, "
		                "--max-bytes or --dry-run");
}

/* --set: change the settings, which is all such a run does. */
static noreturn void update_settings(const struct opts *o)
{
	char msg[ELOG_MSG_MAX];
	int rc;

	if ((rc = elog_settings_update(o->dir, &o->set, o->fields, o->retain.wait_ms, msg)) != 0)
		cli_die_elog(o->dir, rc, msg);
	cli_exit(CLI_EX_OK);
}

/* Damage kept retention from part of its work, or from knowing the
 * consumers: what could go went, and the status says what stopped it, as
 * the program that reads that file would.  The exit status of the run. */
static int report_damage(const char *dir, const struct elog_retain_result *res)
{
	char msg[ELOG_MSG_MAX];
	int status = CLI_EX_OK;
	int rc;

	cli_flush();
	if (res->consumers_unknown) {
		struct elog_consumer *c = NULL;
		size_t n;
		rc = elog_consumer_list(dir, &c, &n, msg);
		free(c);
		if (rc == 0)
			snprintf(msg, sizeof msg, "consumers.json could not be read");
		cli_warn(dir,
		         "the losses of named consumers are not known (see "
		         "elog-verify %s): %s",
		         dir, msg);
		status = rc ? cli_status(rc) : CLI_EX_IO;
	}
	if (res->unjudged) {
		char name[ELOG_SEGMENT_NAME_MAX];
		elog_segment_name(name, res->unjudged_base);
		cli_warn(dir,
		         "%s is damaged and no later closed segment tells its age: "
		         "kept, with every segment after it; run: elog-verify --repair "
		         "--salvage %s",
		         name, dir);
		status = CLI_EX_CORRUPT;
	}
	return status;
}

int main(int argc, char *argv[])
{
	struct opts o = { 0 };
	struct elog_retain_result res;
	char msg[ELOG_MSG_MAX];
	int rc;

	cli_init(argv[0]);
	parse_args(argc, argv, &o);
	if (o.fields)
		update_settings(&o);
	o.retain.each = each_segment;
	o.retain.lost = each_loss;
	o.retain.arg = &o;
	if ((rc = elog_retain(o.dir, &o.retain, &res, msg)) != 0)
		cli_die_elog(o.dir, rc, msg);
	/* A dry run answers even when the answer is no segment at all. */
	if (o.retain.dry_run && res.segments == 0)
		cli_puts("would remove nothing\n");
	if (o.retain.dry_run || o.verbose)
		print_kept(&res);
	cli_exit(report_damage(o.dir, &res));
}
