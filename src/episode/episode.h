/*
 * episode.h - runs one cell: environment up, inputs in, agent loop under
 * turn and time limits, deliverables out, verification, record.
 *
 * The only module that sees backends, agents and verifiers together.
 * episode_run blocks for the whole episode (seconds to hours) and is
 * re-entrant: rank 0 runs several at once in threads. It always fills a
 * record, whatever the task, agent or environment do; infrastructure
 * failures (outcomes env_crash and infra_error: the environment lost, the
 * model's endpoint down or refusing its credentials, the verifier crashed)
 * are retried here up to max_retries times, retry_wait_s doubling between
 * attempts, and the last attempt is recorded with its attempt count and
 * reason (record.infra). It returns
 * ENGI_EINTERRUPTED without a record when should_abort turned true (the cell
 * stays unrun and resumable), and other negative codes only for our own
 * failures (out of memory), which the caller records as agent_error.
 */
#ifndef ENGI_EPISODE_H
#define ENGI_EPISODE_H

#include <stddef.h>

#include "engi/error.h"
#include "govern.h"
#include "matrix.h"
#include "record.h"
#include "task.h"

struct episode_policy;
struct llm_judge;

struct episode_spec {
	const struct task *task;
	const struct model *model;
	const struct condition *cond;
	const struct cell *cell;
	const char *backend;   /* registry name */
	const char *out_dir;   /* artifacts go to <out_dir>/artifacts/<cell>/ */
	const char *work_root; /* scratch for the backend */
	int max_retries;
	double verify_timeout_s; /* the verifier's wall limit (0: judge.h default) */
	long verify_mem_mb;	 /* its address-space limit (0: judge.h default) */
	int verify_in;		 /* enum episode_verify_in, for kinds that need an environment */
	double retry_wait_s;	 /* before the first retry, doubling, at most 300 s */
	double cmd_timeout_s;	 /* per command, inside the episode's wall limit */
	int pause_env;		 /* freeze the environment while the model thinks */
	size_t obs_cap;		 /* bytes of command output the agent sees */
	size_t trace_cap;
	int kernel_threads; /* OpenMP threads for the verifier (0: leave as is) */
	int (*should_abort)(void);
	int rank;
	const char *host;
	const char *run_id;
	/* where replay:RESULTS.h5 agents find their trace (agent.h); may be NULL */
	int (*replay_load)(const char *source, const char *task_id, int trial, char **jsonl,
			   size_t *len, struct engi_error *err);
	/* the sweep's request governor (agent.h), given "MODEL_INDEX msg";
	 * NULL: none */
	double (*govern)(const struct govern_msg *msg);
	/* leave the verdict to episode_verify, run as its own work item
	 * (episode_run returns 1 when it did) */
	int defer_verify;
	/* --command-policy (policy.h): every command and Python code of the
	 * agent is matched before it runs, and the first matching rule refuses
	 * it (event policy_reject); NULL: none */
	const struct episode_policy *policy;
	/* run --judge (llm_judge.h): the model that judges the tasks' judges;
	 * NULL: their assertions are recorded unavailable, not required */
	const struct llm_judge *judge;
};

/* Where a kind that runs in an environment (a benchmark's own evaluator)
 * judges: as the task says; in the episode's own environment after the
 * agent stopped (the benchmark's protocol); in a clean one of the same
 * image with only the deliverables put back; or both, the episode's
 * verdict scored and the clean one recorded beside it (assertions
 * "clean:NAME" and "clean_agrees", none required). */
enum episode_verify_in { VERIFY_IN_TASK, VERIFY_IN_SAME, VERIFY_IN_CLEAN, VERIFY_IN_BOTH };
/* "same", "clean" or "both" (-1 otherwise) */
int episode_verify_in_parse(const char *name);
/* The environment the task's verifier judges in under verify_in
 * (enum engi_verify_env). */
int episode_verify_env(const struct task *t, int verify_in);

/* The verifier's id in records: "kind@version", and "+same", "+clean" or
 * "+both" when --verify-in changed where it judges (a resume does not mix
 * verdicts judged elsewhere). */
void episode_verifier_id(const struct task *t, int verify_in, char *buf, size_t n);

void episode_spec_defaults(struct episode_spec *s);
/* Checks, before a sweep starts, that the backend (unless NULL) and every
 * model's agent exist and are built into this binary, and has each agent
 * parse its models.json entry, once, into model.provider (the model agent:
 * its provider settings), which the episodes hand to their agents. */
int episode_preflight(const char *backend, struct sweepdef *d, struct engi_error *err);
/* For a benchmark's suite (a source that runs what loads): moves the tasks
 * the backend cannot run (a guest's working folder, a command left running)
 * to the suite's refusals, category "backend cannot run it". */
int episode_refuse_unrunnable(const char *backend, struct suite *suite, struct engi_error *err);
/* Readies what the backend needs for every environment of the suite (the
 * qemu backend: images present, ready states saved), once. */
int episode_prepare(const char *backend, const struct suite *suite, struct engi_error *err);
/* Runs the cell's episode into out: 0 with the whole record, 1 (only with
 * defer_verify) with a record whose run is over and whose deliverables are
 * saved but not yet judged (its integrity and interaction assertions kept,
 * outcome the run's own): episode_verify finishes it, on any rank. */
int episode_run(const struct episode_spec *s, struct record *out, struct engi_error *err);
/* The verdict of a record that episode_run returned with 1: the task's
 * verifier on the saved deliverables (<out_dir>/artifacts/<cell>/), scored,
 * its events appended to the record's trace. A verifier that fails twice
 * makes the record an infrastructure failure (reason and message set). */
int episode_verify(const struct episode_spec *s, struct record *rec, struct engi_error *err);

#endif
