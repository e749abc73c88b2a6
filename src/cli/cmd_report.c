#include "cli.h"

#include "engi/report.h"
#include "engi/results.h"

#include <errno.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char **environ;

#ifndef ENGI_PLOTS_PY
#define ENGI_PLOTS_PY "analysis/plots.py"
#endif

static const char report_help[] =
    "usage: engisweep report [options] RESULTS...\n"
    "\n"
    "Prints the leaderboard of a sweep as Markdown: per model (and condition)\n"
    "the EngiScore x100 (success, or optimization quality on optimization\n"
    "tasks) and the mean continuous reward x100, each with a task-clustered\n"
    "percentile bootstrap interval (trials averaged within each task, tasks\n"
    "resampled), success rate, stable success / mixed / stable failure counts,\n"
    "terminal outcomes, turns, tokens, cost; and the scores by task type,\n"
    "domain, interface, software and any --by key. Missing and infrastructure-\n"
    "failed episodes are counted, never dropped: env_crash and infra_error are\n"
    "listed per model by reason (\"12 episodes not run: endpoint unavailable\"),\n"
    "never scored; a model without a scored episode has no score, not 0. Mixed\n"
    "engisweep versions or verifiers are named in a warning. Same input and\n"
    "seed, same bytes, whatever the order of the rows.\n"
    "RESULTS are results.h5 files or episodes CSV files (columns in\n"
    "docs/analysis.md), merged in memory; a cell that two CSV files both hold\n"
    "is an error, and so is an unknown outcome. An output file that is an\n"
    "input is refused.\n"
    "\n"
    "Then the evidence ladder (pass rate of each assertion stage), the first\n"
    "failed stage, perfect-task rate and cost per task and per score point.\n"
    "\n"
    "options:\n"
    "      --out-prefix P   also write P.csv, P.json and P.evidence.csv\n"
    "      --by KEY         also score by this task metadata key (repeatable):\n"
    "                       title, scoring, turns, a key of the tasks' meta\n"
    "                       (/task_meta: StructureClaw-Bench's family, locale,\n"
    "                       structure_type, difficulty, ...; EngiWorld's\n"
    "                       category, os, snapshot) or an extra CSV column\n"
    "      --plots DIR      draw forest, outcomes and ladder as PNG and SVG in\n"
    "                       DIR with analysis/plots.py (python3-matplotlib);\n"
    "                       without --out-prefix the files go to DIR/report.*\n"
    "      --assertions F   assertions CSV of the episodes CSV inputs\n"
    "      --seed N         bootstrap seed (default 20261130)\n"
    "      --draws N        bootstrap resamples (default 10000)\n"
    "      --level L        interval level (default 0.95)\n"
    "      --interval M     percentile (default) or bca\n"
    "      --min-tasks N    fewer tasks than this: no interval, flagged (default 5)\n"
    "  -h, --help           this text\n"
    "\n"
    "environment: ENGI_PYTHON (default /usr/bin/python3) and ENGI_PLOTS (the\n"
    "plots script) for --plots.\n";

/* Runs the plots script on prefix.json; 0 or EXIT_FAILED (printed). */
static int draw_plots(const char *prefix, const char *dir)
{
	const char *py = getenv("ENGI_PYTHON");
	const char *script = getenv("ENGI_PLOTS");
	if (!py || !*py)
		py = "/usr/bin/python3";
	if (!script || !*script)
		script = ENGI_PLOTS_PY;
	size_t n = strlen(prefix) + sizeof(".json");
	char *json = malloc(n);
	if (!json) {
		cli_errorf("report --plots: out of memory");
		return EXIT_FAILED;
	}
	snprintf(json, n, "%s.json", prefix);
	char *argv[] = {(char *)py, (char *)script, "--report", json, "--out", (char *)dir, NULL};
	fflush(stdout);
	pid_t pid;
	int rc = posix_spawnp(&pid, py, NULL, NULL, argv, environ);
	int status = 0;
	if (rc == 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	free(json);
	if (rc) {
		cli_errorf("report --plots: cannot run '%s': %s", py, strerror(rc));
		return EXIT_FAILED;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		cli_errorf("report --plots: '%s %s' failed (%s %d); the report "
			   "files are written",
			   py, script, WIFEXITED(status) ? "exit status" : "signal",
			   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return EXIT_FAILED;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct engi_report_opts *ro, struct strlist *by,
		      const char **assertions, const char **plots)
{
	enum { O_PREFIX = 256, O_ASSERT, O_BY, O_PLOTS };
	static const struct option opts[] = {
	    {"out-prefix", required_argument, NULL, O_PREFIX},
	    CLI_BOOT_LONG_OPTIONS,
	    {"assertions", required_argument, NULL, O_ASSERT},
	    {"by", required_argument, NULL, O_BY},
	    {"plots", required_argument, NULL, O_PLOTS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct engi_boot_opts boot = {.seed = ro->seed,
				      .draws = ro->draws,
				      .level = ro->level,
				      .min_tasks = ro->min_tasks,
				      .interval = ro->interval};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int b = cli_boot_option(c, optarg, &boot);
		if (b < 0)
			return -1;
		if (b > 0)
			continue;
		switch (c) {
		case O_PREFIX:
			ro->prefix = optarg;
			break;
		case O_ASSERT:
			*assertions = optarg;
			break;
		case O_BY:
			if (strlist_push(by, optarg) < 0) {
				cli_errorf("report: out of memory");
				return -1;
			}
			break;
		case O_PLOTS:
			*plots = optarg;
			break;
		case 'h':
			fputs(report_help, stdout);
			return 1;
		default:
			fputs(report_help, stderr);
			return -1;
		}
	}
	ro->seed = boot.seed;
	ro->draws = boot.draws;
	ro->level = boot.level;
	ro->min_tasks = boot.min_tasks;
	ro->interval = boot.interval;
	ro->by = by->v;
	ro->nby = by->n;
	if (optind >= argc) {
		cli_errorf("report: expected at least one results file");
		fputs(report_help, stderr);
		return -1;
	}
	return 0;
}

/* Every file the report would write: none may be an input. */
static int check_outputs(const struct engi_report_opts *ro, const char *plots, char **paths,
			 size_t npaths, const char *assertions, struct engi_error *err)
{
	static const char *const prefixed[] = {".csv", ".json", ".evidence.csv"};
	static const char *const drawn[] = {"forest.png",   "forest.svg", "outcomes.png",
					    "outcomes.svg", "ladder.png", "ladder.svg"};
	char out[9][4096];
	const char *outs[9];
	size_t n = 0;
	for (size_t i = 0; ro->prefix && i < 3; i++, n++) {
		snprintf(out[n], sizeof out[n], "%s%s", ro->prefix, prefixed[i]);
		outs[n] = out[n];
	}
	for (size_t i = 0; plots && i < 6; i++, n++) {
		snprintf(out[n], sizeof out[n], "%s/%s", plots, drawn[i]);
		outs[n] = out[n];
	}
	return cli_check_outputs(outs, n, paths, npaths, assertions, err);
}

int cmd_report(int argc, char **argv)
{
	struct engi_report_opts ro;
	engi_report_opts_init(&ro);
	ro.evidence = 1;
	struct strlist by = {0};
	const char *assertions = NULL, *plots = NULL;
	int p = parse_args(argc, argv, &ro, &by, &assertions, &plots);
	if (p != 0) {
		strlist_release(&by);
		return p < 0 ? EXIT_USAGE : 0;
	}
	char prefix[4096];
	if (plots && !ro.prefix) {
		if ((size_t)snprintf(prefix, sizeof prefix, "%s/report", plots) >= sizeof prefix) {
			cli_errorf("report: --plots '%s' is too long", plots);
			strlist_release(&by);
			return EXIT_USAGE;
		}
		ro.prefix = prefix;
	}
	if (plots && mkdir(plots, 0777) < 0 && errno != EEXIST) {
		cli_errorf("report: cannot create '%s': %s", plots, strerror(errno));
		strlist_release(&by);
		return EXIT_FAILED;
	}
	struct engi_error err;
	engi_error_init(&err);
	if (check_outputs(&ro, plots, argv + optind, (size_t)(argc - optind), assertions, &err) <
	    0) {
		cli_error(&err);
		strlist_release(&by);
		return EXIT_USAGE;
	}
	struct engi_results res;
	if (cli_load_results(argv + optind, (size_t)(argc - optind), assertions, &res, &err) < 0) {
		cli_error(&err);
		strlist_release(&by);
		return EXIT_USAGE;
	}
	int rc = engi_report(&res, &ro, stdout, &err);
	engi_results_release(&res);
	strlist_release(&by);
	if (rc < 0) {
		cli_error(&err);
		return rc == ENGI_EINVALID ? EXIT_USAGE : EXIT_FAILED;
	}
	return plots ? draw_plots(ro.prefix, plots) : 0;
}
