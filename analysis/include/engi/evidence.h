/*
 * evidence.h - what the verdicts say beyond the score: the evidence ladder
 * (the pass rate of each assertion stage), the first failed stage of each
 * episode, the perfect-task rate, cost per task and cost per score point,
 * per arm (model x condition).
 *
 * Which numbers. Only scored episodes count (outcomes done, fail_declared,
 * turn_limit, time_limit, agent_error) and only required assertions. Stages
 * are ordered as they first appear in the assertions table (verifiers write
 * them in the order they check). A stage applies to a task when some scored
 * episode of the task, of any arm, has a required assertion of that stage
 * that is not inapplicable. The denominator of a stage is every scored
 * episode of the arm on a task where the stage applies: an episode passes a
 * stage when it has at least one verdict there and every one is pass; an
 * episode without a verdict there, or with fail or unavailable, counts as a
 * failure. The first failed stage of an episode is the first applicable
 * stage it does not pass ("none" when it passes them all).
 * A perfect task: every scored trial of the arm there has score >= 1.
 * Cost: summed over every recorded episode of the arm (crashed ones spent it
 * too), per task with a scored episode, and per score point (cost / score
 * x100; NaN at score 0).
 *
 * Lifecycle: engi_evidence_init, engi_evidence_compute, the writers,
 * engi_evidence_release. Output is a pure function of the results. Names
 * of any length are kept whole.
 */
#ifndef ENGI_EVIDENCE_H
#define ENGI_EVIDENCE_H

#include <stddef.h>
#include <stdio.h>

#include "engi/error.h"
#include "engi/results.h"

#define ENGI_EVIDENCE_STAGES_MAX 64

struct engi_strpool;

struct engi_evidence_arm {
	const char *model, *condition; /* in the evidence's pool */
	size_t episodes;	       /* scored */
	size_t tasks;		       /* with a scored episode */
	size_t perfect;		       /* perfect tasks */
	double score_x100;	       /* two-level mean, as the report's */
	double cost_usd;	       /* every recorded episode */
	size_t *denominator;	       /* per stage */
	size_t *passed;		       /* per stage */
	size_t *first_failed;	       /* per stage, then one more: "none" */
};

struct engi_evidence {
	const char **stages; /* in the evidence's pool */
	size_t nstages;
	struct engi_evidence_arm *arms;
	size_t narms;
	size_t assertions_used;	    /* required, applicable, of scored episodes */
	size_t assertions_orphan;   /* naming no recorded episode */
	size_t assertions_ignored;  /* optional, inapplicable or of an unscored episode */
	size_t *counts;		    /* storage behind the arms' arrays */
	struct engi_strpool *names; /* owns every name it points at */
};

void engi_evidence_init(struct engi_evidence *ev);
void engi_evidence_release(struct engi_evidence *ev);

/* More than ENGI_EVIDENCE_STAGES_MAX distinct stages is ENGI_EINVALID. */
int engi_evidence_compute(struct engi_evidence *ev, const struct engi_results *res,
			  struct engi_error *err);

/* Markdown: evidence ladder, first failed stage, perfect tasks and cost;
 * the ladder tables only when there are assertions. */
int engi_evidence_write_markdown(const struct engi_evidence *ev, FILE *out, struct engi_error *err);

/*
 * CSV, one row per arm and stage:
 *   model, condition, episodes, tasks, perfect_tasks, perfect_rate,
 *   score_x100, cost_usd, cost_per_task, cost_per_point, stage,
 *   denominator, passed, pass_rate, first_failed
 * and for each arm one more row with stage "none" whose first_failed counts
 * the episodes that passed every stage (denominator, passed, pass_rate
 * empty).
 */
int engi_evidence_write_csv(const struct engi_evidence *ev, const char *path,
			    struct engi_error *err);

#endif
