/*
 * report.h - the tables of a sweep's results: scores with task-clustered
 * bootstrap intervals, trial stability, terminal outcomes, effort and cost,
 * and scores by task type, domain, interface, software and any metadata
 * key, written as Markdown for people and as CSV and JSON for programs.
 *
 * Which episodes count. Episodes are keyed by (task, model, condition,
 * trial); when a key appears more than once, one record is kept (a scored one
 * before one that is not, else the first in file order) and the others are
 * counted as duplicates. Outcomes done, fail_declared, turn_limit,
 * time_limit and agent_error are scored (the agent's failures are the
 * agent's); env_crash and infra_error are infrastructure outcomes, episodes
 * not run: counted with their reason (the episode's infra field; "environment
 * lost" for an env_crash without one), never scored and never in a
 * denominator. An outcome string outside that list (possible only in an
 * HDF5 file; the CSV reader refuses it) is counted as "other" and not
 * scored. Missing episodes are planned_cells minus the distinct episodes
 * recorded. An arm without a scored episode has no score (NaN, flag
 * no_tasks; Markdown "no score"), never 0.
 *
 * How a score is made. For one arm (model x condition): the per-task mean of
 * the episode values over the task's scored trials, then the mean over the
 * tasks that have at least one scored episode, times 100. Tasks are
 * resampled in the order of their ids (sorted bytewise), so that the same
 * data in any row order gives the same bytes. EngiScore takes as
 * an episode's value its score (the optimization quality) on a task whose
 * /tasks scoring is "optimization" and its success flag on any other; the
 * mean continuous reward takes its score whatever the scoring. Intervals
 * come from engi_boot_shared over the tasks of the group (all arms resampled
 * together, an arm's absent tasks masked out; the reward sees the same
 * resample). Success rate is the same two-level mean of the success flag,
 * as a fraction.
 *
 * Lifecycle: engi_report_data_init, engi_report_compute, the writers,
 * engi_report_data_release; or engi_report, which does all of it. The data
 * owns its rows; it keeps no pointer into the results. Output is a pure
 * function of the results and the options: the same input and seed give the
 * same bytes (the data points at the evidence only inside engi_report).
 * Names of any length are kept whole (the data owns copies in its pool).
 * Writers block on file I/O.
 *
 * Provenance. The distinct engisweep versions of the recorded episodes and
 * the distinct verifiers ("kind@version") of the episodes that name one are
 * listed with their counts; they are "mixed" when there is more than one
 * version, or when one verifier kind comes in more than one version or one
 * task was judged by more than one verifier: the Markdown then opens with a
 * warning line, and the JSON's "provenance" says so.
 */
#ifndef ENGI_REPORT_H
#define ENGI_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engi/error.h"
#include "engi/evidence.h"
#include "engi/results.h"
#include "engi/stats.h"

/* most bytes one rendered output (Markdown, CSV or JSON) may take */
#define ENGI_REPORT_OUTPUT_CAP ((size_t)256 << 20)

struct engi_strpool;

struct engi_report_opts {
	uint64_t seed;	  /* bootstrap seed, ENGI_STATS_SEED_DEFAULT */
	size_t draws;	  /* ENGI_STATS_DRAWS_DEFAULT */
	double level;	  /* ENGI_STATS_LEVEL_DEFAULT */
	size_t min_tasks; /* ENGI_STATS_MIN_TASKS_DEFAULT */
	int interval;	  /* enum engi_interval, percentile by default */
	/* writes <prefix>.csv and <prefix>.json (and, with evidence,
	 * <prefix>.evidence.csv); NULL: no files */
	const char *prefix;
	/* more grouping keys after the built-in ones: a /tasks field (title,
	 * scoring, turns, or a built-in again, ignored) or a key of the
	 * tasks' metadata (struct engi_res_task_meta: a results file's
	 * /task_meta, an extra column of an episodes CSV); at most
	 * ENGI_REPORT_TABLES_MAX - ENGI_REPORT_BUILTIN_TABLES */
	const char *const *by;
	size_t nby;
	/* engi_report only: the evidence ladder too (engi/evidence.h), after
	 * the leaderboard in Markdown, in <prefix>.evidence.csv and under
	 * "evidence" in <prefix>.json */
	int evidence;
};

void engi_report_opts_init(struct engi_report_opts *o);

/* The outcomes of engi/schema.h, in its order, then one for any other. */
enum engi_report_outcome {
#define ENGI_REPORT_OUTCOME_(id, name, scored, infra, why) ENGI_REPORT_##id = ENGI_OUTCOME_##id,
	ENGI_OUTCOMES(ENGI_REPORT_OUTCOME_)
#undef ENGI_REPORT_OUTCOME_
	    ENGI_REPORT_OTHER = ENGI_OUTCOME_COUNT, /* an outcome string not in the list */
	ENGI_REPORT_NOUTCOMES
};

/* The reason of an env_crash that names none. */
#define ENGI_REPORT_ENV_LOST ENGI_INFRA_ENV_LOST
/* The reason of an infra_error that names none. */
#define ENGI_REPORT_NO_REASON ENGI_INFRA_NO_REASON

/* The outcome's name (engi/schema.h), "other" for ENGI_REPORT_OTHER */
const char *engi_report_outcome_name(int outcome);

/*
 * Tables: the overall one, then one per grouping key: the built-in ones in
 * this order, then the keys of opts.by. A task falls in the group of its
 * value of the key; software is a comma-separated list, and a task counts
 * in the group of each of its programs.
 */
enum engi_report_table {
	ENGI_REPORT_OVERALL, /* one group, "all" */
	ENGI_REPORT_BY_TYPE,
	ENGI_REPORT_BY_DOMAIN,
	ENGI_REPORT_BY_INTERFACE,
	ENGI_REPORT_BY_SOFTWARE,
	ENGI_REPORT_BUILTIN_TABLES
};
#define ENGI_REPORT_TABLES_MAX 24

/* "overall", "type", "domain", "interface", "software" */
const char *engi_report_table_name(int table);

/* Tasks whose metadata is missing or empty fall in this group. */
#define ENGI_REPORT_UNKNOWN_GROUP "(unknown)"

/* The numbers of one arm over the tasks of one group. */
struct engi_report_row {
	int table;			       /* enum engi_report_table */
	const char *group, *model, *condition; /* in the data's pool */
	size_t tasks;			       /* tasks with at least one scored episode */
	size_t episodes;		       /* recorded episodes, every outcome */
	size_t scored;			       /* episodes that count for the score */
	/* episodes not run (env_crash, infra_error) and why: "endpoint
	 * unavailable: 12; environment lost: 1" (reasons sorted), "" if none */
	size_t not_run;
	const char *not_run_reasons;
	/* EngiScore x100: per episode the optimization quality (score) on a
	 * task whose scoring is "optimization", else the success flag; its
	 * ntasks equals tasks */
	struct engi_ci score;
	/* mean continuous reward x100: the same two-level mean of the
	 * episodes' score, whatever the scoring; same tasks, same resample */
	struct engi_ci reward;
	double success_rate; /* fraction; NaN without tasks */
	/* over tasks with >= 2 scored trials; single_trial tasks are not
	 * classified */
	size_t stable_success, mixed, stable_failure, single_trial;
	size_t outcomes[ENGI_REPORT_NOUTCOMES]; /* over recorded episodes */
	double mean_turns;			/* over scored episodes; NaN without any */
	double mean_wall_s;			/* over scored episodes; NaN without any */
	int64_t tokens_in, tokens_out;		/* summed over recorded episodes */
	double cost_usd;			/* summed over recorded episodes */
};

/* Episodes of one arm not run for one reason (over every task). */
struct engi_report_not_run {
	size_t arm;
	const char *reason;
	size_t episodes;
};

/* One distinct value of a provenance field and its episodes. */
struct engi_report_value {
	const char *value; /* "" when the episodes do not say */
	size_t episodes;
};

struct engi_report_data {
	struct engi_boot_opts boot;
	uint64_t planned;     /* planned cells, 0 when unknown */
	size_t recorded;      /* distinct episodes */
	uint64_t missing;     /* planned - recorded, 0 when not positive */
	size_t extra;	      /* recorded - planned, when positive */
	size_t duplicates;    /* records dropped as repeats of a key */
	size_t scored;	      /* episodes that count for scores */
	size_t env_crash;     /* infrastructure failures, not scored */
	size_t infra_error;   /* infrastructure failures, not scored */
	size_t other_outcome; /* unknown outcome strings, not scored */
	size_t unknown_task;  /* recorded episodes of tasks not in /tasks */
	size_t tasks_listed;  /* distinct tasks in /tasks */
	size_t tasks_unrun;   /* tasks in /tasks without a recorded episode */
	/* arm a is model a / nconditions under condition a % nconditions */
	size_t nmodels, nconditions, narms;
	/*
	 * Rows, table by table (enum order), inside a table group by group
	 * (sorted by name, ENGI_REPORT_UNKNOWN_GROUP last), inside a group arm
	 * by arm: row (table T, group g, arm a) is
	 * rows[table_first[T] + g * narms + a]. Groups are the values found
	 * among tasks with at least one recorded episode; every arm has a row
	 * in every group, with zeros when it has no task there.
	 */
	struct engi_report_row *rows;
	size_t nrows;
	size_t ntables;
	const char *table_name[ENGI_REPORT_TABLES_MAX];
	size_t table_first[ENGI_REPORT_TABLES_MAX];
	size_t table_groups[ENGI_REPORT_TABLES_MAX];
	/* episodes not run, by arm then reason (sorted) */
	struct engi_report_not_run *not_run;
	size_t nnot_run;
	/* provenance: distinct versions (every recorded episode) and
	 * verifiers (episodes naming one), sorted, and whether they mix */
	struct engi_report_value *versions, *verifiers;
	size_t nversions, nverifiers;
	int mixed_versions, mixed_verifiers;
	/* episodes judged again in a clean environment (run --verify-in both):
	 * how many, and in how many its verdict differed (assertion
	 * clean_agrees failed) */
	size_t clean_checked, clean_disagree;
	/* the tasks' judges (run --judge): their model's usage over every
	 * recorded episode, apart from the agents' */
	int64_t judge_tokens_in, judge_tokens_out;
	double judge_cost_usd;
	/* the suite's tasks refused before the sweep (engi_results) */
	uint64_t suite_refused;
	const char *suite_source, *suite_refused_reasons; /* res's */
	/* the evidence ladder, when engi_report computed it (not owned) */
	const struct engi_evidence *evidence;
	struct engi_strpool *names; /* owns every name the data points at */
};

void engi_report_data_init(struct engi_report_data *d);
void engi_report_data_release(struct engi_report_data *d);

/* Fills d (initialised, empty) from res. A key of opts.by that no task
 * has, or whose value differs between the rows of a task used here, is
 * ENGI_EINVALID. */
int engi_report_compute(struct engi_report_data *d, const struct engi_results *res,
			const struct engi_report_opts *o, struct engi_error *err);

/* Markdown: every table opens with the denominator it counts over. */
int engi_report_write_markdown(const struct engi_report_data *d, FILE *out, struct engi_error *err);

/*
 * CSV (RFC 4180, "\r\n" line ends, a header line) and JSON renderings into
 * a file each. The CSV has one row per struct engi_report_row, columns:
 *   table, group, model, condition, tasks, episodes, scored,
 *   score_x100, ci_lo_x100, ci_hi_x100, ci_flag, ci_draws,
 *   reward_x100, reward_lo_x100, reward_hi_x100, reward_flag, success_rate,
 *   stable_success, mixed, stable_failure, single_trial,
 *   done, fail_declared, turn_limit, time_limit, env_crash, infra_error,
 *   agent_error, other_outcome, not_run, not_run_reasons, mean_turns,
 *   mean_wall_s, tokens_in, tokens_out, cost_usd
 * (a number that does not exist, such as an interval with a flag, is an
 * empty field). The JSON object holds "format" ("engisweep-report"),
 * "format_version" (3), "bootstrap" {seed, draws, level, min_tasks,
 * interval},
 * "episodes" {planned, missing, recorded, extra, duplicates, scored,
 * env_crash, infra_error, other_outcome, unknown_task, tasks_listed,
 * tasks_unrun}, "not_run" [{model, condition, reason, episodes}],
 * "provenance" {versions: [{value, episodes}], verifiers: [{value,
 * episodes}], mixed_versions, mixed_verifiers} and
 * "tables" (the table names in order), "rows": one object per CSV row with
 * the same keys in the same order (null where the CSV field is empty), and,
 * when d->evidence is set, "evidence" {stages, arms: [{model, condition,
 * episodes, tasks, perfect_tasks, perfect_rate, score_x100, cost_usd,
 * cost_per_task, cost_per_point, ladder: [{stage, denominator, passed,
 * pass_rate, first_failed}], passed_every_stage}]}. Keys are always in
 * this order.
 */
int engi_report_write_csv(const struct engi_report_data *d, const char *path,
			  struct engi_error *err);
int engi_report_write_json(const struct engi_report_data *d, const char *path,
			   struct engi_error *err);

/*
 * The whole report: compute, Markdown to md (NULL: none), and when
 * o->prefix is set, <prefix>.csv and <prefix>.json.
 */
int engi_report(const struct engi_results *res, const struct engi_report_opts *o, FILE *md,
		struct engi_error *err);

#endif
