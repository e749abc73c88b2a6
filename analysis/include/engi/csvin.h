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
 *             default 0), and task metadata domain, type, interface,
 *             software, title, scoring.
 * A row whose outcome is "missing" or "unrun" is a planned episode that did
 * not run: it counts in planned_cells and is not an episode. When no row
 * says so, planned_cells is the number of distinct cells (task, model,
 * condition, trial) among the rows. A task's metadata
 * must agree on every row of that task.
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
 * engi_res_task_meta), at most 64 of them.
 */
int engi_results_read_csvs(const char *const *episodes_csv, size_t n,
			   const char *assertions_csv,
			   struct engi_results *res, struct engi_error *err);

/*
 * Appends src to dst: episodes, assertions, metrics and artifacts are
 * appended (task_meta too); tasks, models and conditions already in dst (by id or name) are
 * not repeated; planned_cells add up. src is left unchanged.
 */
int engi_results_merge(struct engi_results *dst,
		       const struct engi_results *src, struct engi_error *err);

#endif
