#include "cli.h"

#include "engi/evidence.h"
#include "engi/report.h"
#include "engi/results.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char report_help[] =
	"usage: engisweep report [options] RESULTS...\n"
	"\n"
	"Prints the leaderboard of a sweep as Markdown: per model (and condition)\n"
	"the score x100 with a task-clustered percentile bootstrap interval (trials\n"
	"averaged within each task, tasks resampled), success rate, stable success /\n"
	"mixed / stable failure counts, terminal outcomes, turns, tokens, cost; and\n"
	"the score by task type, domain and interface. Missing and infrastructure-\n"
	"failed episodes are counted, never dropped. Same input and seed, same bytes.\n"
	"RESULTS are results.h5 files or episodes CSV files (columns in README),\n"
	"merged in memory.\n"
	"\n"
	"Then the evidence ladder (pass rate of each assertion stage), the first\n"
	"failed stage, perfect-task rate and cost per task and per score point.\n"
	"\n"
	"options:\n"
	"      --out-prefix P   also write P.csv, P.json and P.evidence.csv\n"
	"      --assertions F   assertions CSV of the first (CSV) results file\n"
	"      --seed N         bootstrap seed (default 20261130)\n"
	"      --draws N        bootstrap resamples (default 10000)\n"
	"      --level L        interval level (default 0.95)\n"
	"      --interval M     percentile (default) or bca\n"
	"      --min-tasks N    fewer tasks than this: no interval, flagged (default 5)\n"
	"  -h, --help           this text\n";

int cmd_report(int argc, char **argv)
{
	enum { O_PREFIX = 256, O_ASSERT };
	static const struct option opts[] = {
		{"out-prefix", required_argument, NULL, O_PREFIX},
		CLI_BOOT_LONG_OPTIONS,
		{"assertions", required_argument, NULL, O_ASSERT},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct engi_report_opts ro;
	engi_report_opts_init(&ro);
	const char *assertions = NULL;
	int c;
	optind = 1;
	struct engi_boot_opts boot = {.seed = ro.seed, .draws = ro.draws, .level = ro.level,
				      .min_tasks = ro.min_tasks, .interval = ro.interval};
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int b = cli_boot_option(c, optarg, &boot);
		if (b < 0)
			return EXIT_USAGE;
		if (b > 0)
			continue;
		switch (c) {
		case O_PREFIX:
			ro.prefix = optarg;
			break;
		case O_ASSERT:
			assertions = optarg;
			break;
		case 'h':
			fputs(report_help, stdout);
			return 0;
		default:
			fputs(report_help, stderr);
			return EXIT_USAGE;
		}
	}
	ro.seed = boot.seed;
	ro.draws = boot.draws;
	ro.level = boot.level;
	ro.min_tasks = boot.min_tasks;
	ro.interval = boot.interval;
	if (optind >= argc) {
		cli_errorf("report: expected at least one results file");
		fputs(report_help, stderr);
		return EXIT_USAGE;
	}
	struct engi_error err;
	engi_error_init(&err);
	struct engi_results res;
	if (cli_load_results(argv + optind, (size_t)(argc - optind), assertions, &res,
			     &err) < 0) {
		cli_error(&err);
		return EXIT_USAGE;
	}
	int rc = engi_report(&res, &ro, stdout, &err);
	struct engi_evidence ev;
	engi_evidence_init(&ev);
	if (rc == 0)
		rc = engi_evidence_compute(&ev, &res, &err);
	if (rc == 0)
		rc = engi_evidence_write_markdown(&ev, stdout, &err);
	if (rc == 0 && ro.prefix) {
		char path[4096];
		if ((size_t)snprintf(path, sizeof path, "%s.evidence.csv", ro.prefix) >=
		    sizeof path)
			rc = engi_raise(&err, ENGI_EINVALID, "--out-prefix '%s' is too long",
					ro.prefix);
		else
			rc = engi_evidence_write_csv(&ev, path, &err);
	}
	engi_evidence_release(&ev);
	engi_results_release(&res);
	if (rc < 0) {
		cli_error(&err);
		return EXIT_FAILED;
	}
	return 0;
}
