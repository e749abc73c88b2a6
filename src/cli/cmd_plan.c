#include "cli.h"
#include "record.h"

#include "engi/alloc.h"
#include "engi/results.h"
#include "matrix.h"
#include "store.h"
#include "sweep.h"
#include "task.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char plan_help[] =
    "usage: engisweep plan [options] SUITE\n"
    "\n"
    "Validates SUITE and every setting as run does, and prints the sweep it\n"
    "would run: cells, predicted episode-hours and API cost per model, and\n"
    "the makespan on R ranks.\n"
    "Predictions come from turn limits, per-turn estimates and prices, or from\n"
    "measured durations and costs when an earlier results file is given.\n"
    "\n"
    "options:\n"
    "  -a, --agents LIST      built-in agents (default: reference)\n"
    "  -m, --models FILE      models.json\n"
    "  -t, --trials N         trials (default 1)\n"
    "  -c, --condition SPEC   NAME or NAME:key=value,... (repeat)\n"
    "      --history FILE     results.h5 of an earlier sweep: measured durations\n"
    "      --grid AXIS=V1,V2  a condition axis (repeat: cartesian product)\n"
    "      --subset SPEC      stratified subset, or file:PATH of task ids, as for run\n"
    "      --source NAME      the suite's task source (default: detected)\n"
    "      --images FILE      a benchmark's snapshots -> engisweep images\n"
    "      --deliverables FILE  what a Harbor task's agent delivers: a JSON\n"
    "                         object of task name (or \"*\") -> paths\n"
    "                         (docs/parametric-cad-bench.md)\n"
    "  -n, --ranks R          ranks running episodes (default 1)\n"
    "  -h, --help             this text\n";

int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"agents", required_argument, NULL, 'a'},
	    {"models", required_argument, NULL, 'm'},
	    {"trials", required_argument, NULL, 't'},
	    {"condition", required_argument, NULL, 'c'},
	    {"history", required_argument, NULL, 'H'},
	    {"ranks", required_argument, NULL, 'n'},
	    {"grid", required_argument, NULL, 'G'},
	    {"subset", required_argument, NULL, 'S'},
	    {"source", required_argument, NULL, 'Q'},
	    {"images", required_argument, NULL, 'I'},
	    {"deliverables", required_argument, NULL, 'D'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *agents = NULL, *models = NULL, *history = NULL, *subset = NULL, *source = NULL,
		   *images = NULL, *deliverables = NULL;
	struct strlist grid = {0};
	long trials = 1, ranks = 1;
	struct strlist conds = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "a:m:t:c:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			agents = optarg;
			break;
		case 'm':
			models = optarg;
			break;
		case 't':
			if (cli_int("--trials", optarg, 1, 1000, &trials) < 0)
				return EXIT_USAGE;
			break;
		case 'c':
			strlist_push(&conds, optarg);
			break;
		case 'H':
			history = optarg;
			break;
		case 'G':
			strlist_push(&grid, optarg);
			break;
		case 'S':
			subset = optarg;
			break;
		case 'Q':
			source = optarg;
			break;
		case 'I':
			images = optarg;
			break;
		case 'D':
			deliverables = optarg;
			break;
		case 'n':
			if (cli_int("--ranks", optarg, 1, 1000000, &ranks) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			fputs(plan_help, stdout);
			return 0;
		default:
			fputs(plan_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		cli_errorf("plan: expected one SUITE");
		fputs(plan_help, stderr);
		return EXIT_USAGE;
	}
	struct engi_error err;
	engi_error_init(&err);
	struct sweep_opts o;
	sweep_opts_defaults(&o);
	o.suite = argv[optind];
	o.backend = NULL; /* plan runs nothing: any backend's sweep is planned */
	o.agents = agents;
	o.models_file = models;
	o.trials = (int)trials;
	o.conditions = conds.v;
	o.nconditions = conds.n;
	o.grid = grid.v;
	o.ngrid = grid.n;
	o.subset = subset;
	o.source = source;
	o.images = images;
	o.deliverables = deliverables;
	struct suite s;
	struct sweepdef d;
	struct matrix m;
	struct engi_results hist;
	memset(&s, 0, sizeof(s));
	arena_init(&s.arena);
	sweepdef_init(&d);
	engi_results_init(&hist);
	memset(&m, 0, sizeof(m));
	int code = EXIT_USAGE;
	struct history_row *rows = NULL;
	size_t nstrata = 0;
	if (sweep_define(&s, &d, &o, &nstrata, &err) < 0) {
		cli_error(&err);
		goto out;
	}
	size_t nrows = 0;
	if (history) {
		if (store_read(history, &hist, &err) < 0) {
			cli_error(&err);
			goto out;
		}
		rows = engi_calloc(hist.nepisodes ? hist.nepisodes : 1, sizeof(*rows));
		if (!rows)
			goto out;
		for (size_t i = 0; i < hist.nepisodes; i++) {
			if (outcome_is_infra(outcome_from_name(hist.episodes[i].outcome)))
				continue;
			rows[nrows].task_id = hist.episodes[i].task_id;
			rows[nrows].model = hist.episodes[i].model;
			rows[nrows].wall_s = hist.episodes[i].wall_s;
			rows[nrows].cost_usd = hist.episodes[i].cost_usd;
			nrows++;
		}
	}
	if (matrix_build(&m, &s, &d, rows, nrows, &err) < 0) {
		cli_error(&err);
		goto out;
	}
	printf("suite %s: %zu tasks x %zu models x %d trials x %zu conditions = %zu cells",
	       argv[optind], s.ntasks, d.nmodels, d.trials, d.nconds, m.ncells);
	if (m.skipped)
		printf(" (%zu pairs skipped: no such flawed variant)", m.skipped);
	if (subset && !strncmp(subset, "file:", 5))
		printf("\nsubset '%s': %zu tasks listed", subset, s.ntasks);
	else if (subset)
		printf("\nsubset '%s': %zu tasks from %zu strata", subset, s.ntasks, nstrata);
	printf("\nsweep id %.16s; predictions from %s\n\n", m.sweep_id,
	       history ? "measured durations where known, else turn limits"
		       : "turn limits and estimates");
	printf("| %-28s | %7s | %15s | %15s |\n", "model", "cells", "episode-hours",
	       "API cost (USD)");
	printf("|------------------------------|---------|-----------------|-----------------|\n");
	double tot_s = 0, tot_c = 0, longest = 0;
	for (size_t mi = 0; mi < d.nmodels; mi++) {
		size_t n = 0;
		double sec = 0, cost = 0;
		for (size_t i = 0; i < m.ncells; i++) {
			if (m.cells[i].model != mi)
				continue;
			n++;
			sec += m.cells[i].pred_s;
			cost += m.cells[i].pred_cost_usd;
			longest = fmax(longest, m.cells[i].pred_s);
		}
		printf("| %-28s | %7zu | %15.2f | %15.2f |\n", d.models[mi].name, n, sec / 3600,
		       cost);
		tot_s += sec;
		tot_c += cost;
	}
	printf("| %-28s | %7zu | %15.2f | %15.2f |\n", "total", m.ncells, tot_s / 3600, tot_c);
	double makespan = fmax(tot_s / (double)ranks, longest);
	printf("\non %ld rank%s running episodes: makespan at least %.2f h (longest cell %.2f h)\n",
	       ranks, ranks == 1 ? "" : "s", makespan / 3600, longest / 3600);
	code = 0;
out:
	suite_release(&s);
	engi_free(rows);
	matrix_release(&m);
	engi_results_release(&hist);
	sweepdef_release(&d);
	strlist_release(&conds);
	strlist_release(&grid);
	return code;
}
