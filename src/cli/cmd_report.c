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
	enum { O_PREFIX = 256, O_SEED, O_DRAWS, O_LEVEL, O_MIN, O_ASSERT, O_INTERVAL };
	static const struct option opts[] = {
		{"out-prefix", required_argument, NULL, O_PREFIX},
		{"seed", required_argument, NULL, O_SEED},
		{"draws", required_argument, NULL, O_DRAWS},
		{"level", required_argument, NULL, O_LEVEL},
		{"interval", required_argument, NULL, O_INTERVAL},
		{"min-tasks", required_argument, NULL, O_MIN},
		{"assertions", required_argument, NULL, O_ASSERT},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct engi_report_opts ro;
	engi_report_opts_init(&ro);
	const char *assertions = NULL;
	long v;
	double d;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_PREFIX:
			ro.prefix = optarg;
			break;
		case O_SEED:
			if (cli_int("--seed", optarg, 0, 0x7fffffffffffffffL, &v) < 0)
				return EXIT_USAGE;
			ro.seed = (uint64_t)v;
			break;
		case O_DRAWS:
			if (cli_int("--draws", optarg, 100, ENGI_STATS_DRAWS_MAX, &v) < 0)
				return EXIT_USAGE;
			ro.draws = (size_t)v;
			break;
		case O_LEVEL:
			if (cli_num("--level", optarg, 0.5, 0.999, &d) < 0)
				return EXIT_USAGE;
			ro.level = d;
			break;
		case O_MIN:
			if (cli_int("--min-tasks", optarg, 1, 1000000, &v) < 0)
				return EXIT_USAGE;
			ro.min_tasks = (size_t)v;
			break;
		case O_ASSERT:
			assertions = optarg;
			break;
		case O_INTERVAL:
			if (!strcmp(optarg, "percentile")) {
				ro.interval = ENGI_INTERVAL_PERCENTILE;
			} else if (!strcmp(optarg, "bca")) {
				ro.interval = ENGI_INTERVAL_BCA;
			} else {
				cli_errorf("--interval: '%s' is not percentile or bca", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			fputs(report_help, stdout);
			return 0;
		default:
			fputs(report_help, stderr);
			return EXIT_USAGE;
		}
	}
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
