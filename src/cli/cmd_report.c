#include "cli.h"

#include "engi/report.h"
#include "engi/results.h"
#include "store.h"

#include <getopt.h>
#include <stdio.h>

static const char report_help[] =
	"usage: engisweep report [options] RESULTS.h5\n"
	"\n"
	"Prints the leaderboard of a sweep as Markdown: per model (and condition)\n"
	"the score x100 with a task-clustered percentile bootstrap interval (trials\n"
	"averaged within each task, tasks resampled), success rate, stable success /\n"
	"mixed / stable failure counts, terminal outcomes, turns, tokens, cost; and\n"
	"the score by task type, domain and interface. Missing and infrastructure-\n"
	"failed episodes are counted, never dropped. Same input and seed, same bytes.\n"
	"\n"
	"options:\n"
	"      --out-prefix P   also write P.csv and P.json\n"
	"      --seed N         bootstrap seed (default 20261130)\n"
	"      --draws N        bootstrap resamples (default 10000)\n"
	"      --level L        interval level (default 0.95)\n"
	"      --min-tasks N    fewer tasks than this: no interval, flagged (default 5)\n"
	"  -h, --help           this text\n";

int cmd_report(int argc, char **argv)
{
	enum { O_PREFIX = 256, O_SEED, O_DRAWS, O_LEVEL, O_MIN };
	static const struct option opts[] = {
		{"out-prefix", required_argument, NULL, O_PREFIX},
		{"seed", required_argument, NULL, O_SEED},
		{"draws", required_argument, NULL, O_DRAWS},
		{"level", required_argument, NULL, O_LEVEL},
		{"min-tasks", required_argument, NULL, O_MIN},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct engi_report_opts ro;
	engi_report_opts_init(&ro);
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
		case 'h':
			fputs(report_help, stdout);
			return 0;
		default:
			fputs(report_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		cli_errorf("report: expected one RESULTS.h5");
		fputs(report_help, stderr);
		return EXIT_USAGE;
	}
	struct engi_error err;
	engi_error_init(&err);
	struct engi_results res;
	engi_results_init(&res);
	if (store_read(argv[optind], &res, &err) < 0) {
		cli_error(&err);
		engi_results_release(&res);
		return EXIT_USAGE;
	}
	int rc = engi_report(&res, &ro, stdout, &err);
	engi_results_release(&res);
	if (rc < 0) {
		cli_error(&err);
		return EXIT_FAILED;
	}
	return 0;
}
