/*
 * sweep.h - one sweep from suite to results folder, shared by `run` and
 * `validate`: loads and validates on every rank, agrees on the matrix, and
 * on rank 0 journals, stores and reports progress while the scheduler hands
 * out cells. Resume reads the journal, rebuilds results.h5 from it and runs
 * only missing and infrastructure-failed cells.
 *
 * Output folder: journal.jsonl (truth), results.h5, status.json,
 * artifacts/<cell>/, work/ (scratch, removed).
 */
#ifndef ENGI_SWEEP_H
#define ENGI_SWEEP_H

#include <stddef.h>

#include "engi/error.h"
#include "matrix.h"
#include "task.h"

struct episode_policy;
struct llm_judge;
struct provider_config;

struct sweep_opts {
	const char *suite;
	const char *source; /* task source (source.h); NULL: detected */
	const char *images; /* --images FILE: snapshot -> image map, or NULL */
	/* --deliverables FILE: a harbor suite's deliverables map, or NULL */
	const char *deliverables;
	const char *out;
	const char *backend;
	const char *agents;	 /* "reference,noop" */
	const char *models_file; /* models.json */
	const char **conditions;
	size_t nconditions;
	const char **resources; /* "name=count" */
	size_t nresources;
	const char **grid; /* condition axes "AXIS=V1,V2" */
	size_t ngrid;
	const char *subset; /* "strata=... per=... seed=..." */
	/* a static share of the matrix (a job array's): the cells whose place
	 * in cell-id order is shard_k modulo shard_n (shard_n 0: all) */
	unsigned shard_k, shard_n;
	int trials;
	int resume;
	int jobs; /* local slots on rank 0; -1 automatic */
	double grace_s;
	int max_retries;
	double retry_wait_s;	 /* before the first retry; doubles */
	int mix_verifiers;	 /* resume: keep records judged by other verifier versions */
	double verify_timeout_s; /* 0: judge.h default */
	long verify_mem_mb;	 /* 0: judge.h default */
	int verify_in;		 /* enum episode_verify_in */
	double cmd_timeout_s;
	int pause_env;
	/* the local backend without its sandbox: run untrusted agents anyway */
	int unsafe_local;
	int progress_every;
	int quiet;
	int validation; /* reference + noop + flawed per task */
	/* unix time the allocation ends (0: none); a cell is dispatched only
	 * when its predicted duration fits before it, less deadline_margin_s */
	double deadline;
	double deadline_margin_s;
	/* dollars the whole sweep may spend (0: no cap): once the recorded cost
	 * reaches it, no cell is dispatched; the rest stay unrun for --resume */
	double budget_usd;
	/* --command-policy FILE (episode/policy.h): loaded on every rank
	 * before anything runs; NULL: none */
	const char *command_policy;
	/* --judge NAME: the --models entry that judges the tasks' judges
	 * (llm_judge.h), taken out of the models swept; NULL: none, and a suite
	 * with judges is refused */
	const char *judge;
	int judge_attempts; /* --judge-attempts, 1 to 10 (default 3) */
	const char *command_line;
};

void sweep_opts_defaults(struct sweep_opts *o);

/* What rank 0 learned about each cell (validation uses it). */
struct cell_result {
	int have;
	int success;
	int outcome;
	double score;
	char *failed; /* ",name,name," of failed or unavailable required assertions */
};

struct sweep {
	struct suite suite;
	struct sweepdef def;
	struct matrix matrix;
	struct cell_result *results; /* rank 0: ncells */
	size_t unrun;		     /* cells not finished when the run ended */
	size_t infra_failed;
	struct episode_policy *policy;	   /* --command-policy, or NULL */
	struct provider_config *judge_cfg; /* --judge's entry, or NULL */
	struct llm_judge *judge;	   /* the judge the episodes get, or NULL */
};

/* The sweep's definition from the options, every setting checked before
 * anything runs (what plan and run share): the suite (and its subset;
 * *nstrata may be NULL), models, agents, conditions and grid; the agents
 * and their models.json entries, the backend unless NULL, --resource. */
int sweep_define(struct suite *s, struct sweepdef *d, const struct sweep_opts *o, size_t *nstrata,
		 struct engi_error *err);
/* "NAME=N" of --resource: NAME of [A-Za-z0-9._-] (first a letter or digit,
 * at most 63), N an integer from 1 to 100000; name (cap bytes) and count
 * may be NULL. */
int sweep_parse_resource(const char *spec, char *name, size_t cap, int *count,
			 struct engi_error *err);

/* Runs the sweep; on rank 0 fills sw->results. Collective. */
int sweep_run(struct sweep *sw, const struct sweep_opts *o, struct engi_error *err);
void sweep_release(struct sweep *sw);

#endif
