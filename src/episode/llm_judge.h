/*
 * llm_judge.h - a task's judges (SCHEMA.md `judges`): a language model
 * applies each rubric to the agent's final message and the deliverables the
 * judge names, after the verifier.
 *
 * Each judge asks the model (the models.json entry `run --judge` names,
 * temperature 0, no tools) once per attempt, with the task's instruction,
 * the rubric, the final message and each input's contents (at most
 * LLM_JUDGE_INPUT_MAX bytes each, cut with a note; a file that is not UTF-8
 * text is named, not shown), for {"verdict": "pass"|"fail", "reason": ...}.
 * A reply that is not such an object is asked again, up to the attempts;
 * the verdict becomes the assertion "judge:NAME", stage "judge", the
 * reason (cleaned to UTF-8, control characters escaped, cut to the detail's
 * width) its detail. The deliverables and the rubric are hostile text: they
 * reach the model as data, never the key, which goes into an HTTP header
 * only (provider.h).
 *
 * Infrastructure, never a verdict for or against the agent: an endpoint that
 * cannot be reached or answers an error, a key unset or refused
 * (INFRA_JUDGE_UNAVAILABLE), no parseable verdict after the attempts
 * (INFRA_JUDGE_NO_VERDICT). Thread-safe.
 */
#ifndef ENGI_LLM_JUDGE_H
#define ENGI_LLM_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"
#include "engi/verify.h"
#include "task.h"

struct provider_config;
struct trace;

#define LLM_JUDGE_INPUT_MAX	   ((size_t)32 << 10)
#define LLM_JUDGE_MESSAGE_MAX	   ((size_t)32 << 10)
#define LLM_JUDGE_ATTEMPTS_DEFAULT 3
#define LLM_JUDGE_ATTEMPTS_MAX	   10

struct llm_judge {
	const struct provider_config *cfg; /* the judge model's settings */
	int attempts;			   /* 1 to LLM_JUDGE_ATTEMPTS_MAX */
};

/* What the judging cost, apart from the agent's. */
struct llm_judge_usage {
	int64_t tokens_in, tokens_out;
	double cost_usd;
};

/* The settings a judge runs with, from a models.json entry (as its text):
 * the entry's provider settings at temperature 0, without tools. Errors
 * read "/FIELD: what is wrong". */
int judge_llm_config(const char *entry_json, struct provider_config **out, struct engi_error *err);

/* The agent's final message: the text of the trace's last done or fail
 * action (trace JSONL, len bytes), else fallback; a new string, at most
 * LLM_JUDGE_MESSAGE_MAX bytes. NULL when out of memory. */
char *judge_llm_final_message(const char *trace, size_t len, const char *fallback);

/* Runs every judge of task on the deliverables saved in art_dir. 0: each
 * verdict appended to v; 1: the judging is an infrastructure failure,
 * infra (INFRA_JUDGE_*) and msg say why, and nothing of it is appended;
 * negative: our own failure (ENGI_ENOMEM). usage grows by every request's
 * tokens and cost either way; t (may be NULL) gets an event per attempt.
 * With j NULL (validate, audit: no model to call) each judge's assertion is
 * recorded unavailable and not required, saying so. */
int judge_llm_run(const struct llm_judge *j, const struct task *task, const char *art_dir,
		  const char *final_message, struct engi_verdict *v, struct trace *t,
		  struct llm_judge_usage *usage, char *infra, size_t infra_n, char *msg,
		  size_t msg_n, struct engi_error *err);

#endif
