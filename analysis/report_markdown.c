/*
 * report_markdown.c - the report as Markdown for people: each table opens
 * with the denominator it counts over (report_render.h).
 */
#include "report_render.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The infrastructure outcomes' names: "env_crash<last>infra_error". */
static const char *infra_names(char *buf, size_t size, const char *last)
{
	return engi_outcome_list(buf, size, 0, ", ", last);
}

/* A Markdown table cell: pipes and backslashes escaped, line breaks and
 * other control characters as spaces, '<' as an entity so names never turn
 * into HTML. */
static void md_cell(struct engi_dynbuf *o, const char *s)
{
	if (!*s) {
		engi_textout_str(o, "(none)");
		return;
	}
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '|' || ch == '\\') {
			char esc[2] = {'\\', (char)ch};
			engi_textout_bytes(o, esc, 2);
		} else if (ch == '<') {
			engi_textout_str(o, "&lt;");
		} else if (ch < 0x20 || ch == 0x7f) {
			engi_textout_str(o, " ");
		} else {
			engi_textout_bytes(o, s, 1);
		}
	}
}

/* "95" for level 0.95, "97.5" for 0.975 */
static void level_percent(const struct engi_report_data *d, char *buf, size_t size)
{
	snprintf(buf, size, "%g", d->boot.level * 100.0);
}

static void md_num(struct engi_dynbuf *o, double v, const char *fmt)
{
	if (isfinite(v))
		engi_textout(o, fmt, v);
	else
		engi_textout_str(o, "n/a");
}

static void md_flag(struct engi_dynbuf *o, const struct engi_ci *ci, size_t min_tasks)
{
	switch (ci->flag) {
	case ENGI_CI_NO_TASKS:
		engi_textout_str(o, "no tasks");
		break;
	case ENGI_CI_FEW_TASKS:
		engi_textout(o, "too few tasks (%zu < %zu)", ci->ntasks, min_tasks);
		break;
	case ENGI_CI_ALL_ZERO:
		engi_textout_str(o, "every task at 0");
		break;
	case ENGI_CI_ALL_ONE:
		engi_textout_str(o, "every task at 100");
		break;
	case ENGI_CI_CONSTANT:
		engi_textout_str(o, "every task equal");
		break;
	default:
		engi_textout_str(o, "n/a");
		break;
	}
}

/* The reason without an interval, inside a table cell. */
static const char *short_flag(int flag)
{
	switch (flag) {
	case ENGI_CI_FEW_TASKS:
		return "few tasks";
	case ENGI_CI_ALL_ZERO:
		return "all 0";
	case ENGI_CI_ALL_ONE:
		return "all 100";
	case ENGI_CI_CONSTANT:
		return "all equal";
	default:
		return "no interval";
	}
}

static void md_interval(struct engi_dynbuf *o, const struct engi_ci *ci, size_t min_tasks)
{
	if (ci->flag == ENGI_CI_OK && isfinite(ci->lo) && isfinite(ci->hi))
		engi_textout(o, "[%.1f, %.1f]", ci->lo, ci->hi);
	else
		md_flag(o, ci, min_tasks);
}

static void md_arm(struct engi_dynbuf *o, const struct engi_report_data *d,
		   const struct engi_report_row *r)
{
	engi_textout_str(o, "| ");
	md_cell(o, r->model);
	if (d->nconditions > 1) {
		engi_textout_str(o, " | ");
		md_cell(o, r->condition);
	}
}

static void md_head(struct engi_dynbuf *o, const struct engi_report_data *d, const char *cols,
		    const char *align)
{
	engi_textout_str(o, d->nconditions > 1 ? "| model | condition | " : "| model | ");
	engi_textout(o, "%s |\n", cols);
	engi_textout_str(o, d->nconditions > 1 ? "|---|---|" : "|---|");
	engi_textout(o, "%s\n", align);
}

static void md_episodes(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	engi_textout_str(o, "## Episodes\n\n");
	if (d->planned)
		engi_textout(o,
			     "Denominator: the %" PRIu64
			     " cells (task x model x condition x trial) the sweep "
			     "planned.\n\n",
			     d->planned);
	else
		engi_textout_str(o, "Denominator: the episodes recorded; the number of "
				    "planned cells is not known, so missing episodes "
				    "cannot be counted.\n\n");
	engi_textout_str(o, "| episodes | count |\n|---|---:|\n");
	if (d->planned) {
		engi_textout(o, "| planned cells | %" PRIu64 " |\n", d->planned);
		engi_textout(o, "| recorded | %zu |\n", d->recorded);
		engi_textout(o, "| missing (planned - recorded) | %" PRIu64 " |\n", d->missing);
		if (d->extra)
			engi_textout(o, "| recorded beyond the plan | %zu |\n", d->extra);
	} else {
		engi_textout(o, "| recorded | %zu |\n", d->recorded);
		engi_textout_str(o, "| missing | unknown |\n");
	}
	engi_textout(o, "| scored | %zu |\n", d->scored);
	engi_textout(o, "| %s (infrastructure failure, not run, not scored) | %zu |\n",
		     engi_outcome_name(ENGI_OUTCOME_ENV_CRASH), d->env_crash);
	engi_textout(o, "| %s (infrastructure failure, not run, not scored) | %zu |\n",
		     engi_outcome_name(ENGI_OUTCOME_INFRA_ERROR), d->infra_error);
	engi_textout(o, "| unknown outcome (not scored) | %zu |\n", d->other_outcome);
	engi_textout(o, "| duplicate records ignored | %zu |\n", d->duplicates);
	engi_textout(o, "| on tasks missing from /tasks | %zu |\n", d->unknown_task);
	engi_textout(o,
		     "\nTasks listed in /tasks: %zu, of which %zu have no recorded "
		     "episode.\n\n",
		     d->tasks_listed, d->tasks_unrun);
	if (d->suite_refused)
		engi_textout(o,
			     "Not in /tasks: %" PRIu64
			     " more tasks of the suite (source %s) that engisweep refused "
			     "to run, never planned and in no denominator: %s.\n\n",
			     d->suite_refused, d->suite_source, d->suite_refused_reasons);
}

static void md_scores(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	char pct[32];
	level_percent(d, pct, sizeof(pct));
	engi_textout_str(o, "## Scores\n\n");
	engi_textout_str(o, "Denominator: per model, the tasks with at least one scored "
			    "episode (episodes not run and unknown outcomes excluded; a "
			    "model without a scored episode has no score). "
			    "EngiScore: mean over those tasks of the per-task mean "
			    "episode value, x100, the value being the optimization "
			    "quality on a task scored by optimization and the success "
			    "flag on any other. Reward: the same two-level mean of the "
			    "episodes' continuous score, whatever the scoring. Success "
			    "rate: the same two-level mean of the success flag.\n\n");
	char cols[160];
	snprintf(cols, sizeof(cols),
		 "tasks | scored episodes | EngiScore | %s %% CI | reward | "
		 "%s %% CI | success rate",
		 pct, pct);
	md_head(o, d, cols, "---:|---:|---:|---|---:|---|---:|");
	for (size_t a = 0; a < d->narms; a++) {
		const struct engi_report_row *r = overall(d, a);
		md_arm(o, d, r);
		engi_textout(o, " | %zu | %zu | ", r->tasks, r->scored);
		if (r->tasks == 0) {
			engi_textout_str(o, "no score | no scored episode | no score | "
					    "no scored episode | n/a |\n");
			continue;
		}
		md_num(o, r->score.mean, "%.1f");
		engi_textout_str(o, " | ");
		md_interval(o, &r->score, d->boot.min_tasks);
		engi_textout_str(o, " | ");
		md_num(o, r->reward.mean, "%.1f");
		engi_textout_str(o, " | ");
		md_interval(o, &r->reward, d->boot.min_tasks);
		engi_textout_str(o, " | ");
		md_num(o, r->success_rate * 100.0, "%.1f %%");
		engi_textout_str(o, " |\n");
	}
	engi_textout_str(o, "\n");
}

static void md_stability(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	engi_textout_str(o, "## Trial stability\n\n");
	engi_textout_str(o, "Denominator: per model, the tasks with at least 2 scored "
			    "trials. Stable success: every trial succeeds; stable "
			    "failure: none does; mixed: some do. Tasks with a single "
			    "scored trial are counted apart and not classified.\n\n");
	md_head(o, d,
		"tasks with >= 2 trials | stable success | mixed | "
		"stable failure | single trial (not classified)",
		"---:|---:|---:|---:|---:|");
	for (size_t a = 0; a < d->narms; a++) {
		const struct engi_report_row *r = overall(d, a);
		md_arm(o, d, r);
		engi_textout(o, " | %zu | %zu | %zu | %zu | %zu |\n",
			     r->stable_success + r->mixed + r->stable_failure, r->stable_success,
			     r->mixed, r->stable_failure, r->single_trial);
	}
	engi_textout_str(o, "\n");
}

static void md_outcomes(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	char infra[128];
	engi_textout_str(o, "## Terminal outcomes\n\n");
	engi_textout(o,
		     "Denominator: per model, the recorded episodes, every "
		     "outcome (%s included).\n\n",
		     infra_names(infra, sizeof(infra), " and "));
#define HEAD(id, name, scored, infra, why) " | " name
#define RULE(id, name, scored, infra, why) "---:|"
	md_head(o, d, "episodes" ENGI_OUTCOMES(HEAD) " | other",
		"---:|" ENGI_OUTCOMES(RULE) "---:|");
#undef HEAD
#undef RULE
	for (size_t a = 0; a < d->narms; a++) {
		const struct engi_report_row *r = overall(d, a);
		md_arm(o, d, r);
		engi_textout(o, " | %zu", r->episodes);
		for (int k = 0; k < ENGI_REPORT_NOUTCOMES; k++)
			engi_textout(o, " | %zu", r->outcomes[k]);
		engi_textout_str(o, " |\n");
	}
	engi_textout_str(o, "\n");
}

/* Per model the episodes not run, by reason. */
/* run --verify-in both: where the clean environment's verdict differed */
static void md_clean_disagree(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	if (d->clean_disagree)
		engi_textout(
		    o,
		    "**Evaluators disagree:** judged again in a clean environment with only "
		    "the deliverables, %zu of %zu episode%s got another verdict (assertion "
		    "`clean_agrees`): the episode's own environment may have fooled the "
		    "evaluator; the score is the episode's.\n\n",
		    d->clean_disagree, d->clean_checked, d->clean_checked == 1 ? "" : "s");
}

/* what the tasks' judges cost, apart from the agents' */
static void md_judge_cost(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	if (d->judge_tokens_in || d->judge_tokens_out || d->judge_cost_usd > 0)
		engi_textout(o,
			     "**Judges:** the judge model of the tasks' judges used %" PRId64
			     " tokens in and %" PRId64 " out, $%.4f, apart from the agents' "
			     "tokens and cost.\n\n",
			     d->judge_tokens_in, d->judge_tokens_out, d->judge_cost_usd);
}

static void md_not_run(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	if (!d->nnot_run)
		return;
	engi_textout_str(o, "## Episodes not run\n\n");
	char infra[128];
	engi_textout(o,
		     "Infrastructure outcomes (%s): counted "
		     "here, never scored, never in a denominator.\n\n",
		     infra_names(infra, sizeof(infra), ", "));
	for (size_t a = 0; a < d->narms; a++) {
		const struct engi_report_row *r = overall(d, a);
		if (!r->not_run)
			continue;
		engi_textout_str(o, "- ");
		md_cell(o, r->model);
		if (d->nconditions > 1) {
			engi_textout_str(o, " (");
			md_cell(o, r->condition);
			engi_textout_str(o, ")");
		}
		engi_textout(o, ": %zu episode%s not run: ", r->not_run,
			     r->not_run == 1 ? "" : "s");
		size_t k = 0;
		for (size_t i = 0; i < d->nnot_run; i++) {
			const struct engi_report_not_run *n = &d->not_run[i];
			if (n->arm != a)
				continue;
			if (k++)
				engi_textout_str(o, "; ");
			md_cell(o, n->reason);
			if (n->episodes != r->not_run)
				engi_textout(o, " (%zu)", n->episodes);
		}
		engi_textout_str(o, r->tasks ? "\n" : "; no scored episode, no score\n");
	}
	engi_textout_str(o, "\n");
	/* a verifier that failed on deliveries is ours to look at, not noise */
	size_t attention = 0;
	for (size_t i = 0; i < d->nnot_run; i++)
		if (!strncmp(d->not_run[i].reason, "verifier ", 9))
			attention += d->not_run[i].episodes;
	if (attention)
		engi_textout(o,
			     "**Needs attention:** the verifier failed on the deliverables of %zu "
			     "episode%s (crashed, reached a limit or was interrupted). Their runs "
			     "stand; `run --resume` "
			     "judges them again, and `engisweep judge TASK.json "
			     "RESULTS/artifacts/CELL` reproduces one by hand.\n\n",
			     attention, attention == 1 ? "" : "s");
}

/* A warning line for each provenance field that mixes values. */
static void md_provenance(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	for (int k = 0; k < 2; k++) {
		int mixed = k ? d->mixed_verifiers : d->mixed_versions;
		const struct engi_report_value *v = k ? d->verifiers : d->versions;
		size_t n = k ? d->nverifiers : d->nversions;
		if (!mixed)
			continue;
		engi_textout_str(o, k ? "**Warning: verdicts from different verifiers "
					"(kind@version):** "
				      : "**Warning: episodes from different engisweep "
					"versions:** ");
		for (size_t i = 0; i < n; i++) {
			engi_textout_str(o, i ? ", " : "");
			md_cell(o, v[i].value);
			engi_textout(o, " (%zu episode%s)", v[i].episodes,
				     v[i].episodes == 1 ? "" : "s");
		}
		engi_textout_str(o, ".\n\n");
	}
}

static void md_effort(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	engi_textout_str(o, "## Effort and cost\n\n");
	engi_textout_str(o, "Denominator: mean turns and mean wall_s over the scored "
			    "episodes; tokens and cost summed over every recorded "
			    "episode (a crashed episode still spent them).\n\n");
	md_head(o, d,
		"scored episodes | mean turns | mean wall_s | tokens in | "
		"tokens out | cost (USD)",
		"---:|---:|---:|---:|---:|---:|");
	for (size_t a = 0; a < d->narms; a++) {
		const struct engi_report_row *r = overall(d, a);
		md_arm(o, d, r);
		engi_textout(o, " | %zu | ", r->scored);
		md_num(o, r->mean_turns, "%.1f");
		engi_textout_str(o, " | ");
		md_num(o, r->mean_wall_s, "%.1f");
		engi_textout(o, " | %" PRId64 " | %" PRId64 " | ", r->tokens_in, r->tokens_out);
		md_num(o, r->cost_usd, "%.2f");
		engi_textout_str(o, " |\n");
	}
	engi_textout_str(o, "\n");
}

static void md_groups(struct engi_dynbuf *o, const struct engi_report_data *d, int table)
{
	char pct[32];
	level_percent(d, pct, sizeof(pct));
	const char *name = d->table_name[table];
	size_t first = d->table_first[table], ng = d->table_groups[table];
	engi_textout(o, "## Score by %s\n\n", name);
	engi_textout(o,
		     "Denominator: per cell, the n tasks of that %s with at least "
		     "one scored episode for the model. Cell: EngiScore x100 [%s "
		     "%% interval] (n = tasks), then the reward where it differs; "
		     "without an interval, the reason (fewer than %zu tasks, or "
		     "every task at the same score).%s\n\n",
		     name, pct, d->boot.min_tasks,
		     table == ENGI_REPORT_BY_SOFTWARE
			 ? " A task that uses several programs counts in the "
			   "group of each."
			 : "");
	if (ng == 0) {
		engi_textout_str(o, "No task has a recorded episode.\n\n");
		return;
	}
	engi_textout_str(o, d->nconditions > 1 ? "| model | condition" : "| model");
	for (size_t g = 0; g < ng; g++) {
		engi_textout_str(o, " | ");
		md_cell(o, d->rows[first + g * d->narms].group);
	}
	engi_textout_str(o, " |\n");
	engi_textout_str(o, d->nconditions > 1 ? "|---|---" : "|---");
	for (size_t g = 0; g < ng; g++)
		engi_textout_str(o, "|---:");
	engi_textout_str(o, "|\n");
	for (size_t a = 0; a < d->narms; a++) {
		md_arm(o, d, &d->rows[first + a]);
		for (size_t g = 0; g < ng; g++) {
			const struct engi_report_row *r = &d->rows[first + g * d->narms + a];
			engi_textout_str(o, " | ");
			if (r->tasks == 0) {
				engi_textout_str(o, "n/a (n=0)");
				continue;
			}
			engi_textout(o, "%.1f ", r->score.mean);
			if (r->score.flag == ENGI_CI_OK) {
				md_interval(o, &r->score, d->boot.min_tasks);
				engi_textout(o, " (n=%zu)", r->tasks);
			} else {
				engi_textout(o, "(n=%zu, %s)", r->tasks, short_flag(r->score.flag));
			}
			if (memcmp(&r->reward.mean, &r->score.mean, sizeof(double)))
				engi_textout(o, "; reward %.1f", r->reward.mean);
		}
		engi_textout_str(o, " |\n");
	}
	engi_textout_str(o, "\n");
}

void engi_report_render_markdown(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	char pct[32], infra[128];
	level_percent(d, pct, sizeof(pct));
	engi_textout_str(o, "# Sweep report\n\n");
	engi_textout(o,
		     "Scores are x100: the mean over tasks of the per-task mean "
		     "episode score, trials averaged within a task first. "
		     "Intervals: %s %% %s bootstrap over tasks "
		     "(task-clustered; %zu draws, seed %" PRIu64
		     "; all models resampled together), shown only for at least "
		     "%zu tasks whose scores are not all equal. %s "
		     "episodes are infrastructure failures, not run: "
		     "counted, never scored.\n\n",
		     pct, d->boot.interval == ENGI_INTERVAL_BCA ? "BCa" : "percentile",
		     d->boot.draws, d->boot.seed, d->boot.min_tasks,
		     infra_names(infra, sizeof(infra), " and "));
	md_provenance(o, d);
	md_episodes(o, d);
	md_not_run(o, d);
	md_clean_disagree(o, d);
	md_judge_cost(o, d);
	if (d->narms == 0) {
		engi_textout_str(o, "No model has a recorded episode.\n");
		return;
	}
	md_scores(o, d);
	md_stability(o, d);
	md_outcomes(o, d);
	md_effort(o, d);
	for (size_t t = ENGI_REPORT_BY_TYPE; t < d->ntables; t++)
		md_groups(o, d, (int)t);
}
