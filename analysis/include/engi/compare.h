/*
 * compare.h - paired comparisons of arms on the same tasks: two models under
 * one condition, or two conditions for one model (an ablation), each a mean
 * paired difference with a paired task-clustered bootstrap interval and a
 * sign-flip permutation test, the p-values Holm-adjusted over the declared
 * family.
 *
 * The family. Axis models: within every condition, every model against the
 * baseline model, or (no baseline) every pair of models. Axis conditions:
 * within every model, every condition against the baseline condition (an
 * ablation grid: condition arms x models), or every pair of conditions. Axis
 * grid: within every model, the declared pairs (a sweep's --grid: each
 * condition against the one with that axis at its first value and the other
 * axes the same). The Holm families are what these say: the tested rows
 * of one condition (axis models) or of one model (axes conditions and
 * grid) form one family, adjusted apart from the other conditions' or
 * models' rows; rows without a test (no task in common) are outside every
 * family and say so.
 *
 * Which numbers. An arm's value on a task is the mean EngiScore of its
 * scored episodes there (as the report's: the score on a task whose /tasks
 * scoring is "optimization", else the success flag) (outcomes done, fail_declared, turn_limit,
 * time_limit, agent_error; env_crash and unknown outcomes are counted, not scored; every record
 * counts, repeats included). A pair is compared over the tasks both arms have; tasks only one arm
 * has are counted in the row. Lift = a - b, x100. Intervals come from one shared resample of the
 * tasks per group (the condition or model held fixed; engi_boot_shared over the compared arms,
 * seeded with the seed): a pair's draw is the difference of its two arms'
 * draws, which is the paired bootstrap when both arms have the same tasks,
 * and every pair of the group sees the same task multisets. A pair whose
 * arms have different task sets is resampled on its own over the tasks both
 * have (engi_paired_boot, same seed). The sign-flip test of every row uses
 * the same seed. Tasks are taken in the order of their ids (sorted
 * bytewise) and the trials of a task in trial order, so the same data in
 * any row order gives the same bytes. Names of any length are kept whole
 * (copies in the data's pool).
 *
 * Lifecycle: engi_compare_data_init, engi_compare_compute, the writers,
 * engi_compare_data_release. Output is a pure function of the results and
 * the options: the same input and seed give the same bytes.
 */
#ifndef ENGI_COMPARE_H
#define ENGI_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engi/error.h"
#include "engi/results.h"
#include "engi/stats.h"

struct engi_strpool;

enum engi_compare_axis {
	ENGI_COMPARE_MODELS,
	ENGI_COMPARE_CONDITIONS,
	/* conditions, the family being the declared pairs (an ablation grid:
	 * each condition against the one with its axis at the first value) */
	ENGI_COMPARE_GRID,
};

/* One declared comparison of the grid family: condition a against b, which
 * differ in grid axis `axis` only. */
struct engi_compare_pair {
	const char *axis, *a, *b;
};

struct engi_compare_opts {
	struct engi_boot_opts boot;	       /* seed, draws, level, min_tasks */
	int axis;			       /* enum engi_compare_axis */
	const char *baseline;		       /* NULL: all pairs (not with the grid) */
	const struct engi_compare_pair *pairs; /* the grid family */
	size_t npairs;
};

void engi_compare_opts_init(struct engi_compare_opts *o);

struct engi_compare_row {
	/* the condition (axis models) or the model (axis conditions, grid) */
	const char *within;
	const char *grid_axis; /* the grid axis a and b differ in, or "" */
	const char *a, *b;
	size_t tasks;	       /* tasks both arms have: the denominator */
	size_t a_only, b_only; /* tasks one arm has, outside the pairing */
	double mean_a, mean_b; /* x100 over the paired tasks, NaN without */
	struct engi_ci lift;   /* mean(a - b) x100 and its interval */
	int tested;	       /* a sign-flip test ran (tasks >= 1) */
	struct engi_signflip test;
	double p_holm; /* NaN when not tested */
	size_t family; /* tested rows in its Holm family (its within); 0 */
};

struct engi_compare_data {
	struct engi_compare_opts opts; /* baseline copied below */
	const char *baseline;	       /* "" without one */
	size_t nmodels, nconditions, ntasks;
	size_t recorded, scored, unscored; /* episodes */
	uint64_t planned, missing;
	size_t family;	 /* tested rows, over every Holm family */
	size_t families; /* Holm families with at least one tested row */
	struct engi_compare_row *rows;
	size_t nrows;
	struct engi_strpool *names; /* owns every name the data points at */
};

void engi_compare_data_init(struct engi_compare_data *d);
void engi_compare_data_release(struct engi_compare_data *d);

/* Fills d (initialised, empty). An unknown baseline is ENGI_ENOTFOUND,
 * naming the valid names. */
int engi_compare_compute(struct engi_compare_data *d, const struct engi_results *res,
			 const struct engi_compare_opts *o, struct engi_error *err);

/*
 * Markdown: the family and its denominators, one row per comparison, and
 * with a baseline a grid (rows: the arms held fixed, columns: the arms
 * against the baseline; lift and Holm-adjusted p).
 */
int engi_compare_write_markdown(const struct engi_compare_data *d, FILE *out,
				struct engi_error *err);

/*
 * CSV (a header line, "\r\n" line ends) with columns (axis: models,
 * conditions, or grid:AXIS for a row of the grid family)
 *   axis, within, a, b, tasks, a_only, b_only, mean_a_x100, mean_b_x100,
 *   lift_x100, ci_lo_x100, ci_hi_x100, ci_flag, p, p_holm, draws, family
 * (family: the size of the row's Holm family, 0 untested)
 * and JSON {"format": "engisweep-compare", "format_version": 2, "bootstrap":
 * {seed, draws, level, min_tasks}, "family": {axis, baseline, size (tested
 * rows), families: [{within, size}]},
 * "episodes": {planned, recorded, scored, unscored, missing}, "rows": [...]}
 * with the CSV's keys (null for an empty field).
 */
int engi_compare_write_csv(const struct engi_compare_data *d, const char *path,
			   struct engi_error *err);
int engi_compare_write_json(const struct engi_compare_data *d, const char *path,
			    struct engi_error *err);

#endif
