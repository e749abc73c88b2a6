/*
 * csvin.h - results of other harnesses, read from CSV files into the same
 * struct engi_results the HDF5 store fills, and several results merged into
 * one, so that report and compare analyse any of them alike.
 *
 * The episodes CSV (RFC 4180: a header line, commas, fields in double quotes
 * where they hold commas, quotes or line breaks, "\n" or "\r\n" line ends)
 * has one row per episode. Columns are found by name in any order; other
 * columns are kept as task metadata (see engi_results_read_csvs).
 *   required: task_id, model, trial (integer), success (0/1/true/false),
 *             score (number, usually in [0, 1])
 *   optional: condition (default "base"), outcome (default "done"),
 *             feasible (0/1, default: success), turns, tokens_in,
 *             tokens_out (integers, default 0), cost_usd, wall_s (numbers,
 *             default 0), infra (why an infrastructure outcome did not run),
 *             version (engisweep or harness version), verifier
 *             ("kind@version"), and task metadata domain, type, interface,
 *             software, title, scoring.
 * Text columns have no length limit: a value longer than its field of
 * engi/results.h is kept whole in the results' pool (engi_res_str).
 * The outcome must be one of done, fail_declared, turn_limit, time_limit,
 * agent_error (scored), env_crash, infra_error (infrastructure: counted,
 * never scored), missing or unrun; any other is an error naming the file
 * and line. A row whose outcome is "missing" or "unrun" is a planned episode
 * that did not run: it is a planned cell and not an episode. planned_cells
 * is every (task, model, condition) of the rows (of all the files read as a
 * set) times the trial numbers from the smallest to the largest among them,
 * so a trial that one (task, model, condition) lacks is a missing episode.
 * A task's metadata must agree on every row of that task.
 *
 * Row order means nothing: tasks, models and conditions come out sorted by
 * name and episodes by (task, model, condition, trial), the rows of one
 * cell in file order, so the same rows in any order give the same results.
 *
 * The optional assertions CSV has columns task_id, model, trial, condition
 * (default "base"), assertion, stage, state (pass, fail, inapplicable,
 * unavailable) and optionally required (0/1, default 1); each row must name
 * an episode of the episodes CSV.
 *
 * Errors name the file, the line and the column:
 *   runs.csv: line 7, column 'score': expected a number, found 'abc'
 * All calls block on file I/O; files are capped at ENGI_CSV_FILE_CAP.
 */
#ifndef ENGI_CSVIN_H
#define ENGI_CSVIN_H

#include "engi/error.h"
#include "engi/results.h"

#define ENGI_CSV_FILE_CAP ((size_t)1 << 30)

/*
 * Reads episodes_csv (and assertions_csv when not NULL) into res, which it
 * initialises; res is left empty on failure.
 */
int engi_results_read_csv(const char *episodes_csv, const char *assertions_csv,
			  struct engi_results *res, struct engi_error *err);

/*
 * Reads n episodes CSV files as one set (assertions_csv, when not NULL, may
 * name episodes of any of them). Cell ids stay distinct across the files.
 * A cell (task, model, condition, trial) on rows of two different files is
 * an error naming both files and lines: two runs of one cell must not be
 * counted twice nor one of them dropped unseen. (Within one file a repeated
 * cell is kept and the report counts the repeats as duplicates.) Columns
 * that are not in the lists above are task metadata (struct
 * engi_res_task_meta), at most 64 of them (more is an error).
 */
int engi_results_read_csvs(const char *const *episodes_csv, size_t n, const char *assertions_csv,
			   struct engi_results *res, struct engi_error *err);

/*
 * Appends src to dst: episodes, assertions, metrics and artifacts are
 * appended (task_meta too); tasks, models and conditions already in dst (by
 * id or name, the whole text) are not repeated; planned_cells add up; texts
 * of src's pool move to dst's (the aliases are rebased). src is left
 * unchanged.
 */
int engi_results_merge(struct engi_results *dst, const struct engi_results *src,
		       struct engi_error *err);

#endif
